//! RFC 8052's IEC 61850 additions to GDOI: the SA TEK that names the protected GOOSE, SV,
//! R-GOOSE or R-SV traffic and its policy, and the object identifiers that name groups.
//!
//! Layout of the IEC 61850 SA TEK body after the Protocol-ID octet (RFC 8052 2.2, Figure 4;
//! go-iec61850's `gdoi` and a C research prototype write the same; docs/gdoi.md):
//!
//! ```text
//! OID Length (1) | OID (the whole DER TLV, 06 L V)
//! OID-Specific Payload Length (2) | OID-Specific Payload (gander: the traffic, [`Traffic`])
//! SPI (4, the IEC 62351-6 Key ID; no SPI Size field)
//! Authentication Algorithm (2) | Confidentiality Algorithm (2)   ([`super::iec61850_alg`])
//! Remaining Lifetime (4, seconds)
//! SA Data Attributes (RFC 2408 3.3 TV/TLV: SA_ATD = 1, SA_KDA = 2, [`tek_attr`])
//! ```
//!
//! The OID field: gander writes the whole DER TLV, as the independent implementations do, and
//! reads both that and the bare contents octets (the OID Length already delimits them). A value
//! whose contents would themselves read as a TLV (only under arc 0.6, never an IEC 61850 OID)
//! is refused as ambiguous.

use super::attribute::Attribute;
use super::error::{IsakmpError, Result};
use super::reader::{len16, len8, Reader, Writer};

/// SA Data Attributes of the IEC 61850 SA TEK (RFC 8052 2.2.4 and its "GDOI SA TEK
/// Attributes" registry, section 4).
pub mod tek_attr {
    /// SA_ATD (RFC 8052 2.2.4.1, a variable (V) attribute): activation time delay in seconds,
    /// how long after receipt a member waits before installing the TEK for sending (gander's
    /// receivers accept it at once), so TimeOfCurrentKey follows from it.
    pub const SA_ATD: u16 = 1;
    /// SA_KDA (RFC 8052 2.2.4.2, a basic (B) attribute): Key Delivery Assurance, the
    /// percentage (0 to 100) of subscribers a publisher's policy wants to hold the TEK before
    /// it activates it. gander neither sends nor uses it; it once sent its overlap here, which
    /// is not what the registry defines ([`GANDER_OVERLAP`]).
    pub const SA_KDA: u16 = 2;
    /// gander's overlap in seconds, in the registry's private-use range (28672-32767, a
    /// variable attribute): how long receivers keep accepting a key after its lifetime ends,
    /// the overlap with its successor, so TimeToNextKey follows. Another implementation
    /// ignores an attribute it does not know (RFC 8052 defines none beyond SA_ATD and
    /// SA_KDA); gander's member without it keeps no overlap.
    pub const GANDER_OVERLAP: u16 = 28672;
}

/// The traffic one IEC 61850 TEK protects, by destination. gander carries it in the SA TEK's
/// OID-Specific Payload ([`Traffic::parse`]); RFC 8052 leaves that payload's content to the
/// protocol named by the OID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Traffic {
    /// Layer-2 GOOSE or SV: destination MAC and APPID (IEC 61850-8-1 / -9-2).
    L2 {
        /// Destination multicast MAC.
        mac: [u8; 6],
        /// APPID.
        appid: u16,
    },
    /// R-GOOSE or R-SV over UDP/IPv4 (IEC 61850-90-5): destination address and port.
    Ipv4 {
        /// Destination address.
        addr: [u8; 4],
        /// UDP port (102 by default).
        port: u16,
    },
    /// R-GOOSE or R-SV over UDP/IPv6.
    Ipv6 {
        /// Destination address.
        addr: [u8; 16],
        /// UDP port.
        port: u16,
    },
}

/// Traffic types: the first octet of gander's OID-Specific Payload.
pub mod traffic_type {
    /// Layer 2: MAC (6) + APPID (2).
    pub const L2: u8 = 1;
    /// UDP/IPv4: address (4) + port (2).
    pub const IPV4: u8 = 2;
    /// UDP/IPv6: address (16) + port (2).
    pub const IPV6: u8 = 3;
}

impl Traffic {
    /// Parses gander's OID-Specific Payload: Traffic Type (1) then the destination, its
    /// length fixed by the type (L2 8, IPv4 6, IPv6 18 octets). Other lengths are refused.
    pub fn parse(v: &[u8]) -> Result<Traffic> {
        let (&tt, t) = v.split_first().ok_or(IsakmpError::Truncated {
            what: "IEC 61850 traffic",
            need: 1,
            have: 0,
        })?;
        let bad = IsakmpError::BadLength {
            what: "IEC 61850 traffic",
            value: t.len(),
        };
        Ok(match tt {
            traffic_type::L2 => {
                let b: &[u8; 8] = t.try_into().map_err(|_| bad)?;
                let mut mac = [0u8; 6];
                mac.copy_from_slice(&b[..6]);
                Traffic::L2 {
                    mac,
                    appid: u16::from_be_bytes([b[6], b[7]]),
                }
            }
            traffic_type::IPV4 => {
                let b: &[u8; 6] = t.try_into().map_err(|_| bad)?;
                Traffic::Ipv4 {
                    addr: [b[0], b[1], b[2], b[3]],
                    port: u16::from_be_bytes([b[4], b[5]]),
                }
            }
            traffic_type::IPV6 => {
                let b: &[u8; 18] = t.try_into().map_err(|_| bad)?;
                let mut addr = [0u8; 16];
                addr.copy_from_slice(&b[..16]);
                Traffic::Ipv6 {
                    addr,
                    port: u16::from_be_bytes([b[16], b[17]]),
                }
            }
            _ => {
                return Err(IsakmpError::BadValue {
                    what: "IEC 61850 traffic",
                    detail: "unknown traffic type",
                })
            }
        })
    }

    /// Octets of the encoding, type octet included.
    pub fn len(&self) -> usize {
        1 + match self {
            Traffic::L2 { .. } => 8,
            Traffic::Ipv4 { .. } => 6,
            Traffic::Ipv6 { .. } => 18,
        }
    }

    /// Always false: an encoding has at least its type octet.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The encoding as gander puts it in an OID-Specific Payload.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.len()];
        self.emit(&mut Writer::new(&mut v));
        v
    }

    fn emit(&self, w: &mut Writer<'_>) {
        match *self {
            Traffic::L2 { mac, appid } => {
                w.u8(traffic_type::L2);
                w.bytes(&mac);
                w.u16(appid);
            }
            Traffic::Ipv4 { addr, port } => {
                w.u8(traffic_type::IPV4);
                w.bytes(&addr);
                w.u16(port);
            }
            Traffic::Ipv6 { addr, port } => {
                w.u8(traffic_type::IPV6);
                w.bytes(&addr);
                w.u16(port);
            }
        }
    }
}

/// Object identifiers naming the protected protocol (IEC 62351-9 / RFC 8052, as gander
/// assigns them under the IEC 61850 arc 1.2.840.10070.61850; docs/gdoi.md).
pub mod oid {
    /// 1.2.840.10070.61850.8.1.1: layer-2 GOOSE.
    pub const GOOSE: &str = "1.2.840.10070.61850.8.1.1";
    /// 1.2.840.10070.61850.8.1.2: R-GOOSE.
    pub const R_GOOSE: &str = "1.2.840.10070.61850.8.1.2";
    /// 1.2.840.10070.61850.9.2.1: layer-2 SV.
    pub const SV: &str = "1.2.840.10070.61850.9.2.1";
    /// 1.2.840.10070.61850.9.2.2: R-SV.
    pub const R_SV: &str = "1.2.840.10070.61850.9.2.2";
}

/// The IEC 61850 SA TEK (RFC 8052 2.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Iec61850Tek {
    /// DER contents octets of the OID naming the protocol ([`oid`], [`encode_oid`]).
    pub oid: Vec<u8>,
    /// The traffic protected, from the OID-Specific Payload; `None` when that payload is
    /// empty, and then the group's configured traffic applies.
    pub traffic: Option<Traffic>,
    /// SPI: the IEC 62351-6 Key ID.
    pub spi: u32,
    /// Authentication algorithm, RFC 8052 registry number ([`super::iec61850_alg::auth`]).
    pub auth_alg: u16,
    /// Confidentiality algorithm, RFC 8052 registry number ([`super::iec61850_alg::conf`]).
    pub conf_alg: u16,
    /// Remaining lifetime of the key in seconds.
    pub lifetime_secs: u32,
    /// SA Data Attributes ([`tek_attr`]).
    pub attributes: Vec<Attribute>,
}

impl Iec61850Tek {
    /// Parses the body after the Protocol-ID octet.
    pub fn parse(body: &[u8]) -> Result<Iec61850Tek> {
        let mut r = Reader::new(body, "IEC 61850 SA TEK");
        let n = r.u8()? as usize;
        let oid = strip_oid_tlv(r.take(n)?).to_vec();
        if strip_oid_tlv(&oid).len() != oid.len() {
            // Contents that would themselves read as a TLV (arc 0.6) are ambiguous.
            return Err(IsakmpError::BadValue {
                what: "OID",
                detail: "ambiguous TLV-shaped contents",
            });
        }
        if oid.len() >= 0x80 {
            // gander writes the OID as a TLV with a short-form DER length (X.690 8.1.3.4);
            // no IEC 61850 OID comes near 128 octets.
            return Err(IsakmpError::BadLength {
                what: "OID",
                value: oid.len(),
            });
        }
        decode_oid(&oid)?;
        let pl = r.u16()? as usize;
        let payload = r.take(pl)?;
        let traffic = if payload.is_empty() {
            None
        } else {
            Some(Traffic::parse(payload)?)
        };
        let spi = r.u32()?;
        let auth_alg = r.u16()?;
        let conf_alg = r.u16()?;
        let lifetime_secs = r.u32()?;
        Ok(Iec61850Tek {
            oid,
            traffic,
            spi,
            auth_alg,
            conf_alg,
            lifetime_secs,
            attributes: Attribute::parse_list(r.rest())?,
        })
    }

    /// Octets of the OID field as written: the whole DER TLV.
    fn oid_field_len(&self) -> usize {
        2 + self.oid.len()
    }

    /// Octets of the body after the Protocol-ID.
    pub fn body_len(&self) -> usize {
        1 + self.oid_field_len()
            + 2
            + self.traffic.as_ref().map_or(0, Traffic::len)
            + 4
            + 2
            + 2
            + 4
            + Attribute::list_len(&self.attributes)
    }

    /// Writes the body after the Protocol-ID; `buf` holds [`Self::body_len`] octets.
    pub fn emit_body(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u8(len8(self.oid_field_len()));
        w.u8(0x06);
        w.u8(len8(self.oid.len()));
        w.bytes(&self.oid);
        w.u16(len16(self.traffic.as_ref().map_or(0, Traffic::len)));
        if let Some(t) = &self.traffic {
            t.emit(&mut w);
        }
        w.u32(self.spi);
        w.u16(self.auth_alg);
        w.u16(self.conf_alg);
        w.u32(self.lifetime_secs);
        let n = Attribute::emit_list(&self.attributes, w.tail());
        w.advance(n);
        w.written()
    }

    /// Whether every length fits (the OID in a short-form DER length, the field in one octet).
    pub fn fits(&self) -> bool {
        self.oid.len() < 0x80 && self.attributes.iter().all(Attribute::fits)
    }

    /// The Key ID (the SPI).
    pub fn key_id(&self) -> u32 {
        self.spi
    }

    /// The SA Data Attribute `kind` as a number ([`tek_attr`]).
    pub fn attr_u64(&self, kind: u16) -> Option<u64> {
        Attribute::find(&self.attributes, kind).and_then(Attribute::as_u64)
    }
}

/// The contents octets of an OID given either as contents or as a whole DER TLV (06 L V).
pub fn strip_oid_tlv(v: &[u8]) -> &[u8] {
    if v.len() >= 2 && v[0] == 0x06 && usize::from(v[1]) == v.len() - 2 && v[1] < 0x80 {
        &v[2..]
    } else {
        v
    }
}

/// Most arcs an OID may have here.
const MAX_ARCS: usize = 32;

/// Decodes DER OID contents octets (X.690 8.19) into arcs; refuses an empty value, a
/// non-minimal subidentifier (leading 0x80) and a subidentifier wider than 64 bits.
pub fn decode_oid(v: &[u8]) -> Result<Vec<u64>> {
    let bad = |detail| IsakmpError::BadValue {
        what: "OID",
        detail,
    };
    if v.is_empty() {
        return Err(bad("empty"));
    }
    let mut arcs = Vec::new();
    let mut acc: u64 = 0;
    let mut start = true;
    for (i, &b) in v.iter().enumerate() {
        if start && b == 0x80 {
            return Err(bad("non-minimal subidentifier"));
        }
        start = false;
        if acc > (u64::MAX >> 7) {
            return Err(bad("subidentifier too wide"));
        }
        acc = (acc << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (acc / 40).min(2);
                arcs.push(first);
                arcs.push(acc - first * 40);
            } else {
                arcs.push(acc);
            }
            if arcs.len() > MAX_ARCS {
                return Err(bad("too many arcs"));
            }
            acc = 0;
            start = true;
        } else if i == v.len() - 1 {
            return Err(bad("last subidentifier unterminated"));
        }
    }
    Ok(arcs)
}

/// Encodes a dotted OID ("1.2.840...") as DER contents octets.
pub fn encode_oid(dotted: &str) -> Result<Vec<u8>> {
    let bad = |detail| IsakmpError::BadValue {
        what: "OID",
        detail,
    };
    let arcs: Vec<u64> = dotted
        .split('.')
        .map(|a| a.parse::<u64>().map_err(|_| bad("not a dotted number")))
        .collect::<Result<_>>()?;
    if arcs.len() < 2 || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] >= 40) || arcs.len() > MAX_ARCS {
        return Err(bad("not a valid OID"));
    }
    let first = arcs[0]
        .checked_mul(40)
        .and_then(|x| x.checked_add(arcs[1]))
        .ok_or(bad("first arcs too large"))?;
    let mut out = Vec::new();
    for a in core::iter::once(first).chain(arcs[2..].iter().copied()) {
        let mut tmp = [0u8; 10];
        let mut n = 0;
        let mut x = a;
        loop {
            tmp[n] = (x & 0x7f) as u8;
            n += 1;
            x >>= 7;
            if x == 0 {
                break;
            }
        }
        for i in (0..n).rev() {
            out.push(tmp[i] | if i > 0 { 0x80 } else { 0 });
        }
    }
    Ok(out)
}

/// Dotted form of DER OID contents octets.
pub fn oid_to_string(v: &[u8]) -> Result<String> {
    Ok(decode_oid(v)?
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("."))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn oid_known_encoding_and_both_forms() {
        // 1.2.840.10070 is the IEC 61850 arc used by IEC 62351 (X.690 8.19 example shape).
        let c = encode_oid("1.2.840.10070.61850.8.1.2").unwrap();
        assert_eq!(&c[..6], &[0x2a, 0x86, 0x48, 0xce, 0x56, 0x83]);
        assert_eq!(oid_to_string(&c).unwrap(), "1.2.840.10070.61850.8.1.2");
        let mut tlv = vec![0x06, c.len() as u8];
        tlv.extend_from_slice(&c);
        assert_eq!(strip_oid_tlv(&tlv), &c[..]);
        assert_eq!(strip_oid_tlv(&c), &c[..]);
        assert!(decode_oid(&[0x2a, 0x86]).is_err());
        assert!(decode_oid(&[0x2a, 0x80, 0x01]).is_err());
    }

    fn arb_traffic() -> impl Strategy<Value = Traffic> {
        prop_oneof![
            (any::<[u8; 6]>(), any::<u16>()).prop_map(|(mac, appid)| Traffic::L2 { mac, appid }),
            (any::<[u8; 4]>(), any::<u16>()).prop_map(|(addr, port)| Traffic::Ipv4 { addr, port }),
            (any::<[u8; 16]>(), any::<u16>()).prop_map(|(addr, port)| Traffic::Ipv6 { addr, port }),
        ]
    }

    pub(crate) fn arb_tek() -> impl Strategy<Value = Iec61850Tek> {
        (
            proptest::sample::select(vec![oid::GOOSE, oid::R_GOOSE, oid::SV, oid::R_SV]),
            any::<u32>(),
            proptest::option::of(arb_traffic()),
            (any::<u16>(), any::<u16>(), any::<u32>()),
            crate::isakmp::attribute::tests::arb_attrs(),
        )
            .prop_map(
                |(o, spi, traffic, (auth_alg, conf_alg, lifetime_secs), attributes)| Iec61850Tek {
                    oid: encode_oid(o).unwrap(),
                    traffic,
                    spi,
                    auth_alg,
                    conf_alg,
                    lifetime_secs,
                    attributes,
                },
            )
    }

    /// go-iec61850's `gdoi` key server's SA TEK for an HMAC-SHA256-128 TEK of 3600 s, with an
    /// empty OID-Specific Payload (decrypted by tshark from a GROUPKEY-PULL in the interop run
    /// recorded in docs/gdoi.md).
    const GO_SA_TEK: &[u8] = &[
        0x03, 0x0d, 0x06, 0x0b, 0x2a, 0x86, 0x48, 0xce, 0x56, 0x83, 0xe3, 0x1a, 0x08, 0x01, 0x02,
        0x00, 0x00, 0xbd, 0x61, 0xaa, 0x83, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0x0e, 0x10,
    ];

    #[test]
    fn parses_go_iec61850_bytes() {
        assert_eq!(GO_SA_TEK[0], crate::isakmp::gdoi::tek_protocol::IEC61850);
        let t = Iec61850Tek::parse(&GO_SA_TEK[1..]).unwrap();
        assert_eq!(oid_to_string(&t.oid).unwrap(), oid::R_GOOSE);
        assert_eq!(t.traffic, None);
        assert_eq!(t.spi, 0xbd61_aa83);
        assert_eq!(
            t.auth_alg,
            crate::isakmp::iec61850_alg::auth::HMAC_SHA256_128
        );
        assert_eq!(t.conf_alg, crate::isakmp::iec61850_alg::conf::NONE);
        assert_eq!(t.lifetime_secs, 3600);
        assert!(t.attributes.is_empty());
        // gander writes the same bytes back.
        let mut buf = vec![0u8; t.body_len()];
        t.emit_body(&mut buf);
        assert_eq!(&buf[..], &GO_SA_TEK[1..]);
    }

    #[test]
    fn reads_the_oid_as_bare_contents_too() {
        let mut b = vec![0x0b];
        b.extend_from_slice(&GO_SA_TEK[4..]);
        let t = Iec61850Tek::parse(&b).unwrap();
        assert_eq!(oid_to_string(&t.oid).unwrap(), oid::R_GOOSE);
    }

    #[test]
    fn refuses_bad_traffic_and_truncation() {
        let t = Iec61850Tek {
            oid: encode_oid(oid::GOOSE).unwrap(),
            traffic: Some(Traffic::L2 {
                mac: [1, 0x0c, 0xcd, 1, 0, 1],
                appid: 1,
            }),
            spi: 7,
            auth_alg: 2,
            conf_alg: 1,
            lifetime_secs: 60,
            attributes: vec![Attribute::basic(tek_attr::SA_ATD, 5)],
        };
        let mut buf = vec![0u8; t.body_len()];
        t.emit_body(&mut buf);
        for n in 0..buf.len() {
            if n < buf.len() - 4 {
                assert!(Iec61850Tek::parse(&buf[..n]).is_err(), "{n}");
            }
        }
        // Unknown traffic type.
        let mut bad = buf.clone();
        bad[1 + 13 + 2] = 9;
        assert!(Iec61850Tek::parse(&bad).is_err());
        // Traffic of the wrong length for its type.
        assert!(Traffic::parse(&[traffic_type::L2, 1, 2, 3]).is_err());
        assert!(Traffic::parse(&[]).is_err());
    }

    proptest! {
        #[test]
        fn tek_round_trip(t in arb_tek()) {
            let mut buf = vec![0u8; t.body_len()];
            prop_assert_eq!(t.emit_body(&mut buf), buf.len());
            prop_assert_eq!(Iec61850Tek::parse(&buf), Ok(t));
        }

        #[test]
        fn tek_parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = Iec61850Tek::parse(&b);
        }

        #[test]
        fn oid_round_trip(arcs in proptest::collection::vec(any::<u32>(), 1..10), a0 in 0u64..3, a1 in 0u64..40) {
            let dotted = core::iter::once(a0).chain(core::iter::once(a1))
                .chain(arcs.iter().map(|x| u64::from(*x)))
                .map(|x| x.to_string()).collect::<Vec<_>>().join(".");
            let c = encode_oid(&dotted).unwrap();
            prop_assert_eq!(oid_to_string(&c).unwrap(), dotted);
        }
    }
}
