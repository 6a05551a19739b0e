//! RFC 8052's IEC 61850 additions to GDOI: the SA TEK that names the protected GOOSE, SV,
//! R-GOOSE or R-SV traffic, its policy attributes, and the object identifiers that name groups.
//!
//! Layout of the IEC 61850 SA TEK (after the Protocol-ID octet of RFC 6407 5.4):
//!
//! ```text
//! OID Length (1) | OID (the OBJECT IDENTIFIER naming the protocol: GOOSE, SV, R-GOOSE, R-SV)
//! SPI Size (1)   | SPI (the IEC 62351-6 Key ID, 4 octets)
//! Traffic Type (1) | Traffic Length (1) | Traffic (the destination, see [`Traffic`])
//! TEK Attributes (RFC 2408 3.3 data attributes, [`tek_attr`])
//! ```
//!
//! RFC 8052 leaves open whether the OID field holds the DER contents octets only or the
//! whole DER TLV (tag 06, length, contents). gander writes the contents octets (the OID
//! Length already delimits them) and reads both: a value that starts with 06 and whose
//! second octet is the length of the rest is taken as the TLV form (docs/gdoi.md). Contents
//! octets of a valid OID can never have that shape when their first arc pair encodes as 0x06
//! (0.6) only, which no IEC 61850 OID uses.

use super::attribute::Attribute;
use super::error::{IsakmpError, Result};
use super::reader::{len8, Reader, Writer};

/// SA TEK attributes of the IEC 61850 TEK (RFC 8052, as gander numbers them; docs/gdoi.md).
pub mod tek_attr {
    /// The IEC 62351-6 MAC algorithm of the traffic (the value is the algorithm's number in
    /// the IEC 62351-6 header: 1 HMAC-SHA256-80, 2 HMAC-SHA256-128, 3 HMAC-SHA256-256,
    /// 4 AES-GMAC-64, 5 AES-GMAC-128).
    pub const MAC_ALGORITHM: u16 = 1;
    /// The IEC 62351-6 encryption algorithm (0 none, 1 AES-128-GCM, 2 AES-256-GCM).
    pub const ENCRYPTION_ALGORITHM: u16 = 2;
    /// Key lifetime in seconds.
    pub const KEY_LIFETIME: u16 = 3;
    /// SA_ATD: activation time delay in seconds, how long after receipt a sender may start
    /// to use the key (receivers accept it at once), so TimeOfCurrentKey follows from it.
    pub const SA_ATD: u16 = 4;
    /// SA_KDA: key deactivation delay in seconds, how long receivers keep accepting the
    /// previous key after the new one activates (the overlap), so TimeToNextKey follows.
    pub const SA_KDA: u16 = 5;
    /// The IEC 62351-6 profile of the traffic (0 standard; others as named in docs/gdoi.md).
    pub const PROFILE: u16 = 6;
}

/// The traffic one IEC 61850 TEK protects, by destination.
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

/// Traffic types of the IEC 61850 TEK.
pub mod traffic_type {
    /// Layer 2: MAC (6) + APPID (2).
    pub const L2: u8 = 1;
    /// UDP/IPv4: address (4) + port (2).
    pub const IPV4: u8 = 2;
    /// UDP/IPv6: address (16) + port (2).
    pub const IPV6: u8 = 3;
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

/// The IEC 61850 SA TEK.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Iec61850Tek {
    /// DER contents octets of the OID naming the protocol ([`oid`], [`encode_oid`]).
    pub oid: Vec<u8>,
    /// SPI: the IEC 62351-6 Key ID (4 octets).
    pub spi: Vec<u8>,
    /// The traffic protected.
    pub traffic: Traffic,
    /// Policy ([`tek_attr`]).
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
        decode_oid(&oid)?;
        let s = r.u8()? as usize;
        let spi = r.take(s)?.to_vec();
        let tt = r.u8()?;
        let tl = r.u8()? as usize;
        let t = r.take(tl)?;
        let bad = IsakmpError::BadLength {
            what: "IEC 61850 traffic",
            value: tl,
        };
        let traffic = match tt {
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
        };
        Ok(Iec61850Tek {
            oid,
            spi,
            traffic,
            attributes: Attribute::parse_list(r.rest())?,
        })
    }

    fn traffic_len(&self) -> usize {
        match self.traffic {
            Traffic::L2 { .. } => 8,
            Traffic::Ipv4 { .. } => 6,
            Traffic::Ipv6 { .. } => 18,
        }
    }

    /// Octets of the body after the Protocol-ID.
    pub fn body_len(&self) -> usize {
        1 + self.oid.len()
            + 1
            + self.spi.len()
            + 2
            + self.traffic_len()
            + Attribute::list_len(&self.attributes)
    }

    /// Writes the body after the Protocol-ID.
    pub fn emit_body(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u8(len8(self.oid.len()));
        w.bytes(&self.oid);
        w.u8(len8(self.spi.len()));
        w.bytes(&self.spi);
        match self.traffic {
            Traffic::L2 { mac, appid } => {
                w.u8(traffic_type::L2);
                w.u8(8);
                w.bytes(&mac);
                w.u16(appid);
            }
            Traffic::Ipv4 { addr, port } => {
                w.u8(traffic_type::IPV4);
                w.u8(6);
                w.bytes(&addr);
                w.u16(port);
            }
            Traffic::Ipv6 { addr, port } => {
                w.u8(traffic_type::IPV6);
                w.u8(18);
                w.bytes(&addr);
                w.u16(port);
            }
        }
        let n = Attribute::emit_list(&self.attributes, w.tail());
        w.advance(n);
        w.written()
    }

    /// Whether every length fits.
    pub fn fits(&self) -> bool {
        self.oid.len() <= 255
            && self.spi.len() <= 255
            && self.attributes.iter().all(Attribute::fits)
    }

    /// The Key ID as a number, when the SPI has the IEC 62351-6 width of four octets.
    pub fn key_id(&self) -> Option<u32> {
        <[u8; 4]>::try_from(self.spi.as_slice())
            .ok()
            .map(u32::from_be_bytes)
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
            arb_traffic(),
            crate::isakmp::attribute::tests::arb_attrs(),
        )
            .prop_map(|(o, k, traffic, attributes)| Iec61850Tek {
                oid: encode_oid(o).unwrap(),
                spi: k.to_be_bytes().to_vec(),
                traffic,
                attributes,
            })
    }

    proptest! {
        #[test]
        fn tek_round_trip(t in arb_tek()) {
            let mut buf = vec![0u8; t.body_len()];
            prop_assert_eq!(t.emit_body(&mut buf), buf.len());
            prop_assert_eq!(Iec61850Tek::parse(&buf), Ok(t));
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
