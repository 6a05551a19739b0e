//! The IP access points of an SCD's Communication section: where a client reaches each IED's
//! MMS server, for a sweep of a whole substation (`gander probe --scd`).
//!
//! IEC 61850-6 §9.2 (`SCL_Communication.xsd`): `Communication/SubNetwork/ConnectedAP` joins an
//! IED's access point (`iedName`, `apName`) to a subnetwork; its `Address` holds `P` elements,
//! among them `IP` (tP_IP, dotted IPv4), `IPv6` (Ed.2.1 tP_IPv6), and, in files from some
//! tools, the TCP port as `MMS-Port` or `IP-TCP-PORT` (the schema has no port type of its own
//! for MMS; RFC 1006 port 102 and IEC 62351-3 port 3782 are the defaults). The OSI selectors
//! and the GSE/SMV addresses are not read here (GSE/SMV: `controls`).
//!
//! Every access point with an `IP` or `IPv6` is returned, including client-only ones; which
//! of them hold a server is the IED model's business ([`crate::Ied::logical_devices_of`]).

use crate::error::{Position, SclError, SclErrorKind};
use crate::parse::kids;
use crate::xml::SclAttr;
use roxmltree::Node;
use std::net::IpAddr;

/// One `ConnectedAP` with an IP address.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct IpAccessPoint {
    /// `iedName`.
    pub ied: String,
    /// `apName`.
    pub access_point: String,
    /// The `SubNetwork`'s `name` (empty when it has none).
    pub subnetwork: String,
    /// `P type="IP"` (or `IPv6` when there is no IPv4 address).
    pub address: IpAddr,
    /// `P type="MMS-Port"` or `IP-TCP-PORT`, when the file gives one.
    pub port: Option<u16>,
}

/// The `P` value of `type` in `addr`, trimmed.
pub(crate) fn p<'a>(addr: Node<'a, '_>, ty: &str) -> Option<&'a str> {
    kids(addr, "P")
        .find(|n| n.scl_attr("type") == Some(ty))
        .and_then(|n| n.text())
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Line and column (1-based, in characters) of byte `offset`; only errors need it, so the
/// plain count is fine.
pub(crate) fn position(text: &str, offset: usize) -> Position {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Position {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    }
}

/// `P type` values are element text, so the error names the `P` and its type.
pub(crate) fn bad(
    node: Node,
    ty: &'static str,
    value: &str,
    why: &'static str,
    text: &str,
) -> SclError {
    SclError::new(
        SclErrorKind::BadValue {
            element: "P",
            attribute: ty,
            value: value.into(),
            why,
        },
        Some(position(text, node.range().start)),
    )
}

/// An address as tP_IP / tP_IPv6 write it. The SCL schema's tP_IP pattern takes each
/// dotted-quad octet as one to three decimal digits, so `10.10.0.022` is a valid tP_IP whose
/// last octet is 22 (decimal, as the schema reads it; not inet_aton's octal), which Rust's
/// parser refuses for its leading zero.
fn parse_ip(text: &str) -> Option<IpAddr> {
    if let Ok(a) = text.parse() {
        return Some(a);
    }
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(IpAddr::from(octets))
}

/// The IP access points of `text`, in file order. An SCD without a Communication section has
/// none (`Ok(vec![])`). A `ConnectedAP` without `iedName`/`apName` is skipped (it names no
/// access point); an `IP` that is not an address or a port that is not 1-65535 is an error with
/// its line, since a sweep would otherwise silently miss that IED.
pub fn ip_access_points(text: &str) -> Result<Vec<IpAccessPoint>, SclError> {
    // The same XML repairs as the model's reader (crate::xml); their warnings are the model's.
    let prepared = crate::xml::prepare(text)?;
    let doc = prepared.document()?;
    let text: &str = &prepared.text;
    // The same checks of the root as the model's reader (crate::namespace), so that a file
    // in another namespace is refused with the reason rather than read as "no address"; the
    // one draft namespace read under a quirk is read here too (its warning is the model's).
    let root = doc.root_element();
    let at = Some(position(text, root.range().start));
    crate::namespace::check_root(root).map_err(|k| SclError::new(k, at))?;
    let mut out = Vec::new();
    for comm in kids(root, "Communication") {
        for sn in kids(comm, "SubNetwork") {
            let subnetwork = sn.scl_attr("name").unwrap_or("").to_string();
            for cap in kids(sn, "ConnectedAP") {
                let (Some(ied), Some(ap)) = (cap.scl_attr("iedName"), cap.scl_attr("apName"))
                else {
                    continue;
                };
                for addr in kids(cap, "Address") {
                    let (ty, ip) = match (p(addr, "IP"), p(addr, "IPv6")) {
                        (Some(ip), _) => ("IP", ip),
                        (None, Some(ip)) => ("IPv6", ip),
                        (None, None) => continue,
                    };
                    let address =
                        parse_ip(ip).ok_or_else(|| bad(addr, ty, ip, "not an IP address", text))?;
                    let port =
                        match p(addr, "MMS-Port").or_else(|| p(addr, "IP-TCP-PORT")) {
                            None => None,
                            Some(s) => Some(s.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(
                                || bad(addr, "MMS-Port", s, "not a port 1-65535", text),
                            )?),
                        };
                    out.push(IpAccessPoint {
                        ied: ied.to_string(),
                        access_point: ap.to_string(),
                        subnetwork: subnetwork.clone(),
                        address,
                        port,
                    });
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tP_IP octets of one to three decimal digits, leading zeros included.
    #[test]
    fn zero_padded_octets_are_decimal() {
        assert_eq!(parse_ip("10.10.0.022"), Some(IpAddr::from([10, 10, 0, 22])));
        assert_eq!(
            parse_ip("010.001.000.010"),
            Some(IpAddr::from([10, 1, 0, 10]))
        );
        for bad in [
            "10.10.0.256",
            "10.10.0",
            "10.10.0.0022",
            "10.10.0.+2",
            "10..0.1",
            "x",
        ] {
            assert_eq!(parse_ip(bad), None, "{bad}");
        }
        assert_eq!(parse_ip("fd00::12"), "fd00::12".parse().ok());
    }

    fn scd(addresses: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><SCL xmlns="http://www.iec.ch/61850/2003/SCL">
<Communication><SubNetwork name="StationBus" type="8-MMS">{addresses}</SubNetwork></Communication>
</SCL>"#
        )
    }

    #[test]
    fn ip_and_port_are_read_per_connected_ap() {
        let t = scd(r#"
<ConnectedAP iedName="P1" apName="S1"><Address><P type="IP">10.0.0.1</P>
  <P type="IP-SUBNET">255.255.255.0</P><P type="MMS-Port">3782</P></Address></ConnectedAP>
<ConnectedAP iedName="P2" apName="S1"><Address><P type="IP"> 10.0.0.2 </P></Address>
  <GSE ldInst="LD0" cbName="gcb"><Address><P type="MAC-Address">01-0C-CD-01-00-01</P></Address></GSE>
</ConnectedAP>
<ConnectedAP iedName="P3" apName="S1"><Address><P type="IP-TCP-PORT">102</P><P type="IPv6">fd00::3</P></Address></ConnectedAP>
<ConnectedAP iedName="MU" apName="PB"><Address><P type="MAC-Address">01-0C-CD-04-00-01</P></Address></ConnectedAP>
<ConnectedAP apName="S1"><Address><P type="IP">10.0.0.9</P></Address></ConnectedAP>"#);
        let v = ip_access_points(&t).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            (v[0].ied.as_str(), v[0].port, v[0].subnetwork.as_str()),
            ("P1", Some(3782), "StationBus")
        );
        assert_eq!(v[1].address.to_string(), "10.0.0.2");
        assert_eq!(v[1].port, None);
        assert_eq!(v[2].address.to_string(), "fd00::3");
        assert_eq!(v[2].port, Some(102));
    }

    /// The IOP 2019 multi-vendor SED (sureenapatnaik92/sampleProject's
    /// `IOP_2019-09-26_LV_ED2_1_V12_XF.sed`) writes `<P xsi:type="tP_IP" type="IP">` for two of
    /// its 38 access points: roxmltree's `attribute("type")` returned the first attribute of
    /// that local name, `xsi:type`'s `tP_IP`, and `gander probe --scd` swept 36. SCL's own
    /// attributes are the unqualified ones (`crate::xml::SclAttr`), in either order.
    #[test]
    fn an_xsi_type_beside_type_is_not_the_type() {
        let t = scd(r#"
<ConnectedAP iedName="MU1" apName="S1"><Address><P xsi:type="tP_IP" type="IP">10.11.1.15</P>
  <P xsi:type="tP_MMS-Port" type="MMS-Port">3782</P></Address></ConnectedAP>
<ConnectedAP iedName="C1" apName="S1"><Address><P type="IP" xsi:type="tP_IP">10.10.13.2</P></Address></ConnectedAP>"#)
        .replace(
            "<SCL xmlns=",
            "<SCL xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xmlns=",
        );
        let v = ip_access_points(&t).unwrap();
        let got: Vec<_> = v
            .iter()
            .map(|a| (a.ied.as_str(), a.address.to_string(), a.port))
            .collect();
        assert_eq!(
            got,
            [
                ("MU1", "10.11.1.15".to_string(), Some(3782)),
                ("C1", "10.10.13.2".to_string(), None)
            ]
        );
    }

    #[test]
    fn a_broken_address_is_an_error_with_its_line() {
        let t = scd(r#"
<ConnectedAP iedName="P1" apName="S1"><Address><P type="IP">10.0.0.300</P></Address></ConnectedAP>"#);
        let e = ip_access_points(&t).unwrap_err();
        assert!(e.to_string().contains("10.0.0.300"), "{e}");
        assert_eq!(e.at.map(|p| p.line), Some(3));
        let t = scd(r#"
<ConnectedAP iedName="P1" apName="S1"><Address><P type="IP">10.0.0.1</P><P type="MMS-Port">0</P></Address></ConnectedAP>"#);
        assert!(ip_access_points(&t).is_err());
        assert!(ip_access_points("<SCL").is_err());
        assert_eq!(ip_access_points("<SCL/>").unwrap(), vec![]);
        assert!(ip_access_points("<ICD/>").is_err());
        // The 2006 draft namespace of rapid_LEx2GOOSE.scd (the RAPID project's example SCD)
        // is read under its quirk, as the model reader does; any other namespace is refused
        // with the reason, not read as "no address".
        let good = scd(
            r#"<ConnectedAP iedName="P1" apName="S1"><Address><P type="IP">10.0.0.1</P></Address></ConnectedAP>"#,
        );
        let draft = good.replace("2003/SCL", "2006/SCL");
        assert_eq!(ip_access_points(&draft).unwrap().len(), 1);
        let other = t.replace("2003/SCL", "2007/SCL");
        assert!(matches!(
            ip_access_points(&other).map_err(|e| e.kind),
            Err(SclErrorKind::WrongNamespace { .. })
        ));
    }

    proptest::proptest! {
        /// Whatever addresses and ports an SCD writes (IPv4 or IPv6, a port or none), each
        /// ConnectedAP reads back as written, in file order.
        #[test]
        fn written_access_points_read_back(
            aps in proptest::collection::vec(
                (proptest::prelude::any::<std::net::IpAddr>(), proptest::option::of(1u16..)),
                0..8,
            )
        ) {
            let body: String = aps
                .iter()
                .enumerate()
                .map(|(i, (ip, port))| {
                    let ty = if ip.is_ipv4() { "IP" } else { "IPv6" };
                    let port = port.map_or(String::new(), |p| format!("<P type=\"MMS-Port\">{p}</P>"));
                    format!(
                        "<ConnectedAP iedName=\"I{i}\" apName=\"S1\"><Address><P type=\"{ty}\">{ip}</P>{port}</Address></ConnectedAP>"
                    )
                })
                .collect();
            let got = ip_access_points(&scd(&body)).unwrap();
            let want: Vec<(IpAddr, Option<u16>)> = aps.clone();
            proptest::prop_assert_eq!(
                got.iter().map(|a| (a.address, a.port)).collect::<Vec<_>>(),
                want
            );
        }
    }
}
