//! The routable GOOSE and SV addresses of an SCD's Communication section: where an R-GOOSE or
//! R-SV publisher (IEC 61850-90-5 session protocol over UDP, IEC 61850-8-1 Ed.2.1 Annex,
//! IEC 61850-9-2 Ed.2.1) sends its datagrams, for the audit against the SCD (`gander audit
//! --scd`).
//!
//! IEC 61850-6 Ed.2.1 (`SCL_Communication.xsd`, schema 2007B4): a `GSE` or `SMV` element of a
//! `ConnectedAP` names a control block (`ldInst`, `cbName`) and its `Address` holds `P`
//! elements. A layer-2 block has `MAC-Address`, `APPID`, `VLAN-ID`, `VLAN-PRIORITY` (read by
//! `controls`); a routable one has `IP` (tP_IP, the destination: a multicast group or a
//! unicast address) or `IPv6`, optionally `IP-SUBNET`, `IP-IGMPv3Src` / `IPv6-IGMPv3Src` (the
//! source address subscribers join with source-specific multicast, IGMPv3 RFC 3376 / MLDv2 RFC
//! 3810: the publisher's address), `IP-UDP-PORT` (tP_UDPPort; the IEC 61850-90-5 default is
//! 102 when absent), `IP-ClassOfTraffic` / `IPv6ClassOfTraffic` (DSCP), and `APPID`. Tools
//! also write `VLAN-ID`/`VLAN-PRIORITY` there (the CRAS IID of
//! sureenapatnaik92/sampleProject `TestData/Controller1_Outbound_SCL_NoProdIP.IID` does).
//!
//! The `ConnectedAP`'s own `Address/P type="IP"` is the publishing access point's address;
//! it is returned with each block so a reader can compare a stream's source with it.

use crate::comm_ip::{bad, p, position};
use crate::error::{SclError, SclErrorKind};
use crate::parse::{kids, SCL_NS};
use crate::xml::SclAttr;
use roxmltree::Node;
use std::net::IpAddr;

/// GOOSE (`GSE`) or sampled values (`SMV`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum RoutableKind {
    /// A `GSE` element: an R-GOOSE control block.
    Gse,
    /// An `SMV` element: an R-SV control block.
    Smv,
}

/// One `GSE`/`SMV` whose address has an `IP` or `IPv6` destination.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RoutableAddress {
    /// `GSE` or `SMV`.
    pub kind: RoutableKind,
    /// The `ConnectedAP`'s `iedName`.
    pub ied: String,
    /// Its `apName`.
    pub access_point: String,
    /// `ldInst` of the control block.
    pub ld_inst: String,
    /// `cbName` of the control block.
    pub cb_name: String,
    /// `P type="IP"` (or `IPv6` when there is no `IP`): where the datagrams go.
    pub destination: IpAddr,
    /// `IP-IGMPv3Src` (or `IPv6-IGMPv3Src`): the source address subscribers accept.
    pub igmpv3_source: Option<IpAddr>,
    /// `IP-UDP-PORT`, when the file gives one.
    pub udp_port: Option<u16>,
    /// `APPID` (up to four hexadecimal digits).
    pub app_id: Option<u16>,
    /// The `ConnectedAP`'s own `IP` (or `IPv6`): the publishing access point's address.
    pub access_point_ip: Option<IpAddr>,
}

fn ip_of<'a>(
    addr: Node<'a, '_>,
    v4: &'static str,
    v6: &'static str,
    text: &str,
) -> Result<Option<IpAddr>, SclError> {
    let (ty, s) = match (p(addr, v4), p(addr, v6)) {
        (Some(s), _) => (v4, s),
        (None, Some(s)) => (v6, s),
        (None, None) => return Ok(None),
    };
    s.parse()
        .map(Some)
        .map_err(|_| bad(addr, ty, s, "not an IP address", text))
}

/// The routable `GSE`/`SMV` addresses of `text`, in file order. A `GSE`/`SMV` without an `IP`
/// or `IPv6` is a layer-2 block and is not returned. A value that does not parse (an address,
/// a UDP port that is not 1-65535, an APPID that is not four hexadecimal digits) is an error
/// with its line: an audit would otherwise call the block's stream a mismatch or unknown.
pub fn routable_addresses(text: &str) -> Result<Vec<RoutableAddress>, SclError> {
    // The same XML repairs as the model's reader (crate::xml); their warnings are the model's.
    let prepared = crate::xml::prepare(text)?;
    let doc = prepared.document()?;
    let text: &str = &prepared.text;
    let root = doc.root_element();
    let at = Some(position(text, root.range().start));
    if root.tag_name().name() != "SCL" {
        return Err(SclError::new(
            SclErrorKind::NotScl(root.tag_name().name().into()),
            at,
        ));
    }
    if let Some(ns) = root.tag_name().namespace().filter(|ns| *ns != SCL_NS) {
        return Err(SclError::new(
            SclErrorKind::WrongNamespace { found: ns.into() },
            at,
        ));
    }
    let mut out = Vec::new();
    for sn in kids(root, "Communication").flat_map(|c| kids(c, "SubNetwork")) {
        for cap in kids(sn, "ConnectedAP") {
            let (Some(ied), Some(ap)) = (cap.scl_attr("iedName"), cap.scl_attr("apName")) else {
                continue;
            };
            let mut access_point_ip = None;
            for a in kids(cap, "Address") {
                access_point_ip = access_point_ip.or(ip_of(a, "IP", "IPv6", text)?);
            }
            let blocks = kids(cap, "GSE")
                .map(|n| (RoutableKind::Gse, n))
                .chain(kids(cap, "SMV").map(|n| (RoutableKind::Smv, n)));
            for (kind, block) in blocks {
                let (Some(ld_inst), Some(cb_name)) =
                    (block.scl_attr("ldInst"), block.scl_attr("cbName"))
                else {
                    continue;
                };
                for a in kids(block, "Address") {
                    let Some(destination) = ip_of(a, "IP", "IPv6", text)? else {
                        continue;
                    };
                    let igmpv3_source = ip_of(a, "IP-IGMPv3Src", "IPv6-IGMPv3Src", text)?;
                    let udp_port =
                        match p(a, "IP-UDP-PORT") {
                            None => None,
                            Some(s) => Some(s.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(
                                || bad(a, "IP-UDP-PORT", s, "not a port 1-65535", text),
                            )?),
                        };
                    let app_id = match p(a, "APPID") {
                        None => None,
                        Some(s) => Some(
                            Some(s)
                                .filter(|s| {
                                    s.len() <= 4 && s.bytes().all(|b| b.is_ascii_hexdigit())
                                })
                                .and_then(|s| u16::from_str_radix(s, 16).ok())
                                .ok_or_else(|| {
                                    bad(
                                        a,
                                        "APPID",
                                        s,
                                        "an APPID is up to four hexadecimal digits (tP_APPID)",
                                        text,
                                    )
                                })?,
                        ),
                    };
                    out.push(RoutableAddress {
                        kind,
                        ied: ied.to_string(),
                        access_point: ap.to_string(),
                        ld_inst: ld_inst.to_string(),
                        cb_name: cb_name.to_string(),
                        destination,
                        igmpv3_source,
                        udp_port,
                        app_id,
                        access_point_ip,
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

    fn scd(aps: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><SCL xmlns="http://www.iec.ch/61850/2003/SCL">
<Communication><SubNetwork name="WAN" type="8-MMS">{aps}</SubNetwork></Communication>
</SCL>"#
        )
    }

    /// Written as the CRAS IID of sureenapatnaik92/sampleProject
    /// (`TestData/Controller1_Outbound_SCL_NoProdIP.IID`) writes its R-GOOSE blocks: VLAN P
    /// elements beside `IP`, `IP-IGMPv3Src` and `IPv6ClassOfTraffic`.
    #[test]
    fn routable_blocks_are_read_and_layer2_ones_left_out() {
        let t = scd(r#"
<ConnectedAP iedName="C1" apName="AP"><Address><P type="IP">10.0.0.5</P></Address>
  <GSE ldInst="OUT" cbName="RGOOSE"><Address><P type="VLAN-ID">0</P><P type="IP">239.0.0.1</P>
    <P type="IP-IGMPv3Src">10.0.0.5</P><P type="IPv6ClassOfTraffic">00</P><P type="APPID">1234</P></Address></GSE>
  <GSE ldInst="OUT" cbName="L2"><Address><P type="MAC-Address">01-0C-CD-01-00-01</P></Address></GSE>
  <SMV ldInst="MU" cbName="RSV"><Address><P type="IPv6">ff3e::8000:1</P><P type="IP-UDP-PORT">102</P></Address></SMV>
</ConnectedAP>
<ConnectedAP iedName="C2" apName="AP">
  <GSE ldInst="OUT" cbName="RG"><Address><P type="IP">239.0.0.2</P></Address></GSE>
</ConnectedAP>"#);
        let v = routable_addresses(&t).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].kind, RoutableKind::Gse);
        assert_eq!(
            (v[0].ld_inst.as_str(), v[0].cb_name.as_str()),
            ("OUT", "RGOOSE")
        );
        assert_eq!(v[0].destination.to_string(), "239.0.0.1");
        assert_eq!(
            v[0].igmpv3_source.map(|a| a.to_string()).as_deref(),
            Some("10.0.0.5")
        );
        assert_eq!(v[0].app_id, Some(0x1234));
        assert_eq!(v[0].udp_port, None);
        assert_eq!(
            v[0].access_point_ip.map(|a| a.to_string()).as_deref(),
            Some("10.0.0.5")
        );
        assert_eq!(v[1].kind, RoutableKind::Smv);
        assert_eq!(v[1].destination.to_string(), "ff3e::8000:1");
        assert_eq!(v[1].udp_port, Some(102));
        assert_eq!((v[2].ied.as_str(), v[2].access_point_ip), ("C2", None));
    }

    #[test]
    fn broken_values_are_errors_with_their_line() {
        for bad in [
            r#"<P type="IP">239.0.0.300</P>"#,
            r#"<P type="IP">239.0.0.1</P><P type="IP-UDP-PORT">0</P>"#,
            r#"<P type="IP">239.0.0.1</P><P type="APPID">12345</P>"#,
            r#"<P type="IP">239.0.0.1</P><P type="IP-IGMPv3Src">x</P>"#,
        ] {
            let t = scd(&format!(
                "\n<ConnectedAP iedName=\"C\" apName=\"A\"><GSE ldInst=\"L\" cbName=\"G\"><Address>{bad}</Address></GSE></ConnectedAP>"
            ));
            let e = routable_addresses(&t).unwrap_err();
            assert_eq!(e.at.map(|p| p.line), Some(3), "{bad}: {e}");
        }
        assert!(routable_addresses("<ICD/>").is_err());
        assert_eq!(routable_addresses("<SCL/>").unwrap(), vec![]);
    }

    proptest::proptest! {
        /// Whatever destinations, sources, ports and APPIDs a file writes, each block reads
        /// back as written, in file order.
        #[test]
        fn written_blocks_read_back(
            blocks in proptest::collection::vec(
                (
                    proptest::prelude::any::<std::net::IpAddr>(),
                    proptest::option::of(proptest::prelude::any::<std::net::Ipv4Addr>()),
                    proptest::option::of(1u16..),
                    proptest::option::of(proptest::prelude::any::<u16>()),
                    proptest::prelude::any::<bool>(),
                ),
                0..8,
            )
        ) {
            let body: String = blocks
                .iter()
                .enumerate()
                .map(|(i, (dst, src, port, appid, smv))| {
                    let ty = if dst.is_ipv4() { "IP" } else { "IPv6" };
                    let mut a = format!("<P type=\"{ty}\">{dst}</P>");
                    if let Some(s) = src {
                        a += &format!("<P type=\"IP-IGMPv3Src\">{s}</P>");
                    }
                    if let Some(p) = port {
                        a += &format!("<P type=\"IP-UDP-PORT\">{p}</P>");
                    }
                    if let Some(x) = appid {
                        a += &format!("<P type=\"APPID\">{x:04X}</P>");
                    }
                    let el = if *smv { "SMV" } else { "GSE" };
                    format!("<ConnectedAP iedName=\"I{i}\" apName=\"A\"><{el} ldInst=\"L\" cbName=\"C{i}\"><Address>{a}</Address></{el}></ConnectedAP>")
                })
                .collect();
            let v = routable_addresses(&scd(&body)).unwrap();
            proptest::prop_assert_eq!(v.len(), blocks.len());
            for (r, (dst, src, port, appid, smv)) in v.iter().zip(&blocks) {
                proptest::prop_assert_eq!(r.destination, *dst);
                proptest::prop_assert_eq!(r.igmpv3_source, src.map(IpAddr::V4));
                proptest::prop_assert_eq!(r.udp_port, *port);
                proptest::prop_assert_eq!(r.app_id, *appid);
                proptest::prop_assert_eq!(r.kind == RoutableKind::Smv, *smv);
            }
        }
    }
}
