//! IPv6 (RFC 8200) and UDP over it (RFC 768 with the RFC 8200 §8.1 pseudo-header), as far as
//! an R-GOOSE or R-SV datagram needs them.
//!
//! IEC 61850-90-5 runs over UDP whatever the IP version, and an IED's stack delivers a UDP
//! datagram to port 102 whether it came over IPv4 or IPv6, so a gateway that only understands
//! IPv4 would see IPv6 R-GOOSE as "other" traffic. The extension headers a host walks before
//! it reaches UDP (hop-by-hop, routing, destination options, authentication header) are walked
//! here too; a fragment header ends the walk, because only the reassembled datagram could be
//! judged.

use crate::{Codec, Error, Result};
use core::ops::Range;

/// Length of the fixed IPv6 header.
pub const HEADER_LEN: usize = 40;
/// An IPv6 address.
pub type Ipv6Address = [u8; 16];

/// Next-header values (IANA "Assigned Internet Protocol Numbers").
pub mod next_header {
    /// Hop-by-hop options (RFC 8200 §4.3).
    pub const HOP_BY_HOP: u8 = 0;
    /// UDP.
    pub const UDP: u8 = 17;
    /// Routing header (RFC 8200 §4.4).
    pub const ROUTING: u8 = 43;
    /// Fragment header (RFC 8200 §4.5).
    pub const FRAGMENT: u8 = 44;
    /// Authentication header (RFC 4302 §2.2; its length counts 4-octet units, minus 2).
    pub const AUTH: u8 = 51;
    /// Destination options (RFC 8200 §4.6).
    pub const DEST_OPTS: u8 = 60;
}

/// Field positions of the fixed IPv6 header (RFC 8200 §3), from its first octet, and of the
/// UDP header (RFC 768), from the first UDP octet.
mod field {
    use core::ops::Range;
    /// Version (high nibble) and the traffic class's high nibble (RFC 8200 §3).
    pub(super) const VERSION: usize = 0;
    /// Traffic class's low nibble (high nibble of this octet) and flow label's first bits
    /// (RFC 8200 §3).
    pub(super) const TC_FLOW: usize = 1;
    /// Payload Length: octets after the fixed header, extension headers included (RFC 8200 §3).
    pub(super) const PAYLOAD_LEN: Range<usize> = 4..6;
    /// Next Header (RFC 8200 §3; IANA protocol numbers).
    pub(super) const NEXT_HEADER: usize = 6;
    /// Hop Limit (RFC 8200 §3).
    pub(super) const HOP_LIMIT: usize = 7;
    /// Source Address (RFC 8200 §3).
    pub(super) const SRC: Range<usize> = 8..24;
    /// Destination Address (RFC 8200 §3).
    pub(super) const DST: Range<usize> = 24..40;
    /// UDP Source Port (RFC 768).
    pub(super) const UDP_SRC_PORT: Range<usize> = 0..2;
    /// UDP Destination Port (RFC 768).
    pub(super) const UDP_DST_PORT: Range<usize> = 2..4;
    /// UDP Length (RFC 768).
    pub(super) const UDP_LEN: Range<usize> = 4..6;
    /// UDP Checksum, over the RFC 8200 §8.1 pseudo-header (RFC 768).
    pub(super) const UDP_CHECKSUM: Range<usize> = 6..8;
}

fn be16(b: &[u8], r: Range<usize>) -> u16 {
    u16::from_be_bytes([b[r.start], b[r.start + 1]])
}

/// Where the UDP datagram of an IPv6 packet is (offsets absolute in the frame).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Udp6Location {
    /// Offset of the IPv6 header.
    pub ip_offset: usize,
    /// Offset of the UDP header.
    pub udp_offset: usize,
    /// The UDP payload.
    pub payload: Range<usize>,
    /// Source address.
    pub src_addr: Ipv6Address,
    /// Destination address.
    pub dst_addr: Ipv6Address,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// Whether the UDP checksum verified (a zero checksum is invalid over IPv6, RFC 8200 §8.1).
    pub udp_checksum_ok: bool,
    /// End of the IPv6 packet in the frame (Ethernet padding may follow).
    pub end: usize,
}

/// What an IPv6 packet carries once its extension headers are walked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ipv6Payload {
    /// A UDP datagram.
    Udp(Udp6Location),
    /// A fragment: what it carries is known only after reassembly.
    Fragment,
    /// Another upper-layer protocol (or ESP, whose contents are opaque).
    Other(u8),
}

/// Walks the IPv6 packet that starts at `frame[ip_offset..]`.
pub fn locate(frame: &[u8], ip_offset: usize) -> Result<Ipv6Payload> {
    let ip = frame.get(ip_offset..).unwrap_or(&[]);
    if ip.len() < HEADER_LEN {
        return Err(Error::Truncated {
            what: "IPv6 header",
            need: HEADER_LEN,
            have: ip.len(),
        });
    }
    if ip[field::VERSION] >> 4 != 6 {
        return Err(Error::BadValue {
            what: "IPv6 version",
            detail: "not 6",
        });
    }
    let end = HEADER_LEN + be16(ip, field::PAYLOAD_LEN) as usize;
    if end > ip.len() {
        return Err(Error::Truncated {
            what: "IPv6 packet",
            need: end,
            have: ip.len(),
        });
    }
    let mut next = ip[field::NEXT_HEADER];
    let mut at = HEADER_LEN;
    loop {
        let ext_len = match next {
            next_header::HOP_BY_HOP | next_header::ROUTING | next_header::DEST_OPTS => {
                ip.get(at + 1).map(|&l| (l as usize + 1) * 8)
            }
            next_header::AUTH => ip.get(at + 1).map(|&l| (l as usize + 2) * 4),
            next_header::FRAGMENT => return Ok(Ipv6Payload::Fragment),
            next_header::UDP => break,
            other => return Ok(Ipv6Payload::Other(other)),
        };
        let Some(n) = ext_len.filter(|n| at + n <= end) else {
            return Err(Error::Truncated {
                what: "IPv6 extension header",
                need: at + 8,
                have: end,
            });
        };
        next = ip[at];
        at += n;
    }
    let udp = &ip[at..end];
    if udp.len() < crate::ip::UDP_HEADER_LEN {
        return Err(Error::Truncated {
            what: "UDP header",
            need: crate::ip::UDP_HEADER_LEN,
            have: udp.len(),
        });
    }
    if be16(udp, field::UDP_LEN) as usize != udp.len() {
        return Err(Error::BadLength {
            what: "UDP length",
            value: be16(udp, field::UDP_LEN) as usize,
        });
    }
    let mut src_addr = [0; 16];
    src_addr.copy_from_slice(&ip[field::SRC]);
    let mut dst_addr = [0; 16];
    dst_addr.copy_from_slice(&ip[field::DST]);
    let stated = be16(udp, field::UDP_CHECKSUM);
    let udp_checksum_ok = stated != 0 && udp6_checksum_verifies(&src_addr, &dst_addr, udp);
    let udp_offset = ip_offset + at;
    Ok(Ipv6Payload::Udp(Udp6Location {
        ip_offset,
        udp_offset,
        payload: udp_offset + crate::ip::UDP_HEADER_LEN..ip_offset + end,
        src_addr,
        dst_addr,
        src_port: be16(udp, field::UDP_SRC_PORT),
        dst_port: be16(udp, field::UDP_DST_PORT),
        udp_checksum_ok,
        end: ip_offset + end,
    }))
}

/// The UDP checksum over the IPv6 pseudo-header (RFC 8200 §8.1) and `udp` (checksum field
/// zero); a computed zero is sent as 0xFFFF.
pub fn udp6_checksum(src: &Ipv6Address, dst: &Ipv6Address, udp: &[u8]) -> u16 {
    match !(udp6_sum(src, dst, udp) as u16) {
        0 => 0xffff,
        c => c,
    }
}

/// The folded one's-complement sum over the IPv6 pseudo-header and `udp` as it is.
fn udp6_sum(src: &Ipv6Address, dst: &Ipv6Address, udp: &[u8]) -> u32 {
    let mut acc = crate::ip::ones_complement_sum(0, src);
    acc = crate::ip::ones_complement_sum(acc, dst);
    let len = udp.len() as u32;
    acc = crate::ip::ones_complement_sum(acc, &len.to_be_bytes());
    acc = crate::ip::ones_complement_sum(acc, &[0, 0, 0, next_header::UDP]);
    crate::ip::ones_complement_sum(acc, udp)
}

/// Whether `udp` (checksum field as received) carries a right UDP checksum over the IPv6
/// pseudo-header: the whole sum is all ones (RFC 1071 §1(2)), computed without a copy. A zero
/// checksum field is never right (RFC 8200 §8.1).
pub fn udp6_checksum_verifies(src: &Ipv6Address, dst: &Ipv6Address, udp: &[u8]) -> bool {
    udp.get(6..8).is_some_and(|c| c != [0, 0]) && udp6_sum(src, dst, udp) == 0xffff
}

/// Rebuilds the frame of `loc` with its UDP payload replaced: every header byte before the
/// UDP payload is kept; the IPv6 payload length, UDP length and UDP checksum are recomputed.
pub fn rewrite_udp_payload(
    frame: &[u8],
    loc: &Udp6Location,
    new_payload: &[u8],
) -> Result<Vec<u8>> {
    let ip_payload =
        loc.udp_offset - loc.ip_offset - HEADER_LEN + crate::ip::UDP_HEADER_LEN + new_payload.len();
    let udp_len = crate::ip::UDP_HEADER_LEN + new_payload.len();
    if ip_payload > u16::MAX as usize {
        return Err(Error::TooLarge {
            what: "IPv6 payload",
        });
    }
    let mut out = Vec::with_capacity(loc.payload.start + new_payload.len());
    out.extend_from_slice(&frame[..loc.payload.start]);
    out.extend_from_slice(new_payload);
    let ip = &mut out[loc.ip_offset..];
    ip[field::PAYLOAD_LEN].copy_from_slice(&(ip_payload as u16).to_be_bytes());
    let mut src = [0; 16];
    src.copy_from_slice(&ip[field::SRC]);
    let mut dst = [0; 16];
    dst.copy_from_slice(&ip[field::DST]);
    let udp = &mut out[loc.udp_offset..];
    udp[field::UDP_LEN].copy_from_slice(&(udp_len as u16).to_be_bytes());
    udp[field::UDP_CHECKSUM].fill(0);
    let c = udp6_checksum(&src, &dst, udp);
    udp[field::UDP_CHECKSUM].copy_from_slice(&c.to_be_bytes());
    Ok(out)
}

/// Builds an Ethernet/IPv6/UDP frame (for tests and captures): no extension headers, hop limit
/// 64, traffic class `tc`.
pub fn emit_udp_frame(
    eth: &crate::ethernet::EthernetRepr,
    src: Ipv6Address,
    dst: Ipv6Address,
    ports: (u16, u16),
    tc: u8,
    payload: &[u8],
) -> Result<Vec<u8>> {
    let udp_len = crate::ip::UDP_HEADER_LEN + payload.len();
    if udp_len > u16::MAX as usize {
        return Err(Error::TooLarge {
            what: "IPv6 payload",
        });
    }
    let eth = crate::ethernet::EthernetRepr {
        ethertype: crate::ethernet::ETHERTYPE_IPV6,
        ..*eth
    };
    let mut out = vec![0u8; eth.buffer_len() + HEADER_LEN + udp_len];
    let ip_offset = eth.emit(&mut out);
    let ip = &mut out[ip_offset..];
    ip[field::VERSION] = 0x60 | (tc >> 4);
    ip[field::TC_FLOW] = tc << 4;
    ip[field::PAYLOAD_LEN].copy_from_slice(&(udp_len as u16).to_be_bytes());
    ip[field::NEXT_HEADER] = next_header::UDP;
    ip[field::HOP_LIMIT] = 64;
    ip[field::SRC].copy_from_slice(&src);
    ip[field::DST].copy_from_slice(&dst);
    let udp = &mut ip[HEADER_LEN..];
    udp[field::UDP_SRC_PORT].copy_from_slice(&ports.0.to_be_bytes());
    udp[field::UDP_DST_PORT].copy_from_slice(&ports.1.to_be_bytes());
    udp[field::UDP_LEN].copy_from_slice(&(udp_len as u16).to_be_bytes());
    udp[crate::ip::UDP_HEADER_LEN..].copy_from_slice(payload);
    let c = udp6_checksum(&src, &dst, udp);
    udp[field::UDP_CHECKSUM].copy_from_slice(&c.to_be_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ethernet::EthernetRepr;
    use proptest::prelude::*;

    fn eth() -> EthernetRepr {
        EthernetRepr {
            dst: [0x33, 0x33, 0, 0, 0, 1],
            src: [2, 0, 0, 0, 0, 1],
            vlan: None,
            ethertype: 0,
        }
    }

    #[test]
    fn udp_round_trip_and_rewrite() {
        let src = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        let dst = [0xff, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x61];
        let f = emit_udp_frame(&eth(), src, dst, (102, 102), 0xb8, b"\x01\x40\xa1hello").unwrap();
        let Ipv6Payload::Udp(loc) = locate(&f, 14).unwrap() else {
            panic!("not udp")
        };
        assert!(loc.udp_checksum_ok);
        assert_eq!(
            (loc.src_port, loc.dst_port, loc.src_addr, loc.dst_addr),
            (102, 102, src, dst)
        );
        assert_eq!(&f[loc.payload.clone()], b"\x01\x40\xa1hello");
        let g = rewrite_udp_payload(&f, &loc, b"longer payload").unwrap();
        let Ipv6Payload::Udp(l2) = locate(&g, 14).unwrap() else {
            panic!("not udp")
        };
        assert!(l2.udp_checksum_ok);
        assert_eq!(&g[l2.payload], b"longer payload");
        // A flipped payload bit breaks the checksum; a zero checksum is invalid over IPv6.
        let mut bad = f.clone();
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert!(matches!(locate(&bad, 14), Ok(Ipv6Payload::Udp(l)) if !l.udp_checksum_ok));
        let mut zero = f.clone();
        zero[14 + 40 + 6..14 + 40 + 8].fill(0);
        assert!(matches!(locate(&zero, 14), Ok(Ipv6Payload::Udp(l)) if !l.udp_checksum_ok));
    }

    #[test]
    fn extension_headers_are_walked_and_fragments_stop() {
        let src = [0xfd; 16];
        let dst = [0xfd; 16];
        let f = emit_udp_frame(&eth(), src, dst, (5000, 102), 0, b"\x01\x40\xa1").unwrap();
        // Insert a destination-options header (8 bytes, PadN) in front of UDP.
        let mut g = f[..14 + 40].to_vec();
        g[14 + 6] = next_header::DEST_OPTS;
        g.extend_from_slice(&[next_header::UDP, 0, 1, 4, 0, 0, 0, 0]);
        g.extend_from_slice(&f[14 + 40..]);
        let pl = (g.len() - 14 - 40) as u16;
        g[14 + 4..14 + 6].copy_from_slice(&pl.to_be_bytes());
        match locate(&g, 14).unwrap() {
            Ipv6Payload::Udp(l) => {
                assert_eq!(l.dst_port, 102);
                assert!(l.udp_checksum_ok);
            }
            other => panic!("{other:?}"),
        }
        g[14 + 6] = next_header::FRAGMENT;
        assert_eq!(locate(&g, 14).unwrap(), Ipv6Payload::Fragment);
        g[14 + 6] = 6;
        assert_eq!(locate(&g, 14).unwrap(), Ipv6Payload::Other(6));
    }

    proptest! {
        #[test]
        fn no_panic_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = locate(&data, 0);
            let _ = locate(&data, 14);
        }
    }
}
