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

/// Fill in the Payload Length of the IPv6 packet that fills `ip` exactly, and the UDP length
/// and checksum (RFC 8200 §8.1 pseudo-header) of the datagram at `ip[udp_at..]`. The caller
/// has checked that the sizes fit in 16 bits and that `udp_at` lies behind the fixed header
/// with room for a UDP header.
pub(crate) fn finish_ipv6_udp(ip: &mut [u8], udp_at: usize) {
    let payload_len = (ip.len() - HEADER_LEN) as u16;
    ip[field::PAYLOAD_LEN].copy_from_slice(&payload_len.to_be_bytes());
    let mut src = [0; 16];
    src.copy_from_slice(&ip[field::SRC]);
    let mut dst = [0; 16];
    dst.copy_from_slice(&ip[field::DST]);
    let udp = &mut ip[udp_at..];
    let udp_len = udp.len() as u16;
    udp[field::UDP_LEN].copy_from_slice(&udp_len.to_be_bytes());
    udp[field::UDP_CHECKSUM].fill(0);
    let c = udp6_checksum(&src, &dst, udp);
    udp[field::UDP_CHECKSUM].copy_from_slice(&c.to_be_bytes());
}

/// Whether an IPv6 packet whose headers after the fixed one (extension headers and UDP's)
/// take `headers_len` octets fits the 16-bit Payload Length with `udp_payload_len` more
/// (RFC 8200 §3; jumbograms, RFC 2675, are not used by IEC 61850-90-5).
pub(crate) fn check_ipv6_size(headers_len: usize, udp_payload_len: usize) -> Result<()> {
    match headers_len.checked_add(udp_payload_len) {
        Some(n) if n <= u16::MAX as usize => Ok(()),
        _ => Err(Error::TooLarge {
            what: "IPv6 payload",
        }),
    }
}

/// Rebuilds the frame of `loc` with its UDP payload replaced, as a new vector: every header
/// byte before the UDP payload is kept; the IPv6 payload length, UDP length and UDP checksum
/// are recomputed. A thin helper for tests and tools: the packet path writes into its own
/// buffer through [`crate::udp_rewrite::LocatedUdp::v6`].
pub fn rewrite_udp_payload(
    frame: &[u8],
    loc: &Udp6Location,
    new_payload: &[u8],
) -> Result<Vec<u8>> {
    crate::udp_rewrite::LocatedUdp::v6(frame, loc)?
        .with_payload(new_payload)
        .to_vec()
}

/// The header values of an Ethernet/IPv6/UDP frame gander writes (the `udp` relay's pcap tap,
/// tests): no extension headers, flow label 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Udp6FrameRepr {
    /// Ethernet header; its `ethertype` is ignored and written as IPv6.
    pub eth: crate::ethernet::EthernetRepr,
    /// Source address.
    pub src_addr: Ipv6Address,
    /// Destination address.
    pub dst_addr: Ipv6Address,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// Traffic class (DSCP and ECN, RFC 8200 §7).
    pub traffic_class: u8,
    /// Hop limit (RFC 8200 §3).
    pub hop_limit: u8,
}

impl Udp6FrameRepr {
    /// Reads the header values of an Ethernet/IPv6/UDP frame and the payload's range.
    /// Extension headers and the flow label are not represented, so a frame with them does
    /// not re-emit byte for byte.
    ///
    /// # Errors
    /// As [`locate`]; [`Error::NotUdp`] for a frame that is not IPv6 or whose packet carries
    /// no (unfragmented) UDP datagram.
    pub fn parse(frame: &[u8]) -> Result<(Self, Range<usize>)> {
        let (eth, ip_offset) = crate::ethernet::EthernetRepr::parse_bytes(frame)?;
        if eth.ethertype != crate::ethernet::ETHERTYPE_IPV6 {
            return Err(Error::NotUdp("not an IPv6 frame"));
        }
        let loc = match locate(frame, ip_offset)? {
            Ipv6Payload::Udp(loc) => loc,
            Ipv6Payload::Fragment => return Err(Error::NotUdp("fragmented IPv6 datagram")),
            Ipv6Payload::Other(_) => return Err(Error::NotUdp("IPv6 next header is not UDP")),
        };
        let ip = &frame[ip_offset..];
        let repr = Udp6FrameRepr {
            eth,
            src_addr: loc.src_addr,
            dst_addr: loc.dst_addr,
            src_port: loc.src_port,
            dst_port: loc.dst_port,
            traffic_class: ((ip[field::VERSION] & 0x0f) << 4) | (ip[field::TC_FLOW] >> 4),
            hop_limit: ip[field::HOP_LIMIT],
        };
        Ok((repr, loc.payload))
    }

    /// Size of the frame for a payload of `payload_len` octets.
    pub fn buffer_len(&self, payload_len: usize) -> usize {
        self.eth.buffer_len() + HEADER_LEN + crate::ip::UDP_HEADER_LEN + payload_len
    }

    /// This header around `payload`: the frame as a value to emit.
    pub fn with_payload(self, payload: &[u8]) -> Udp6Frame<'_> {
        Udp6Frame {
            headers: self,
            payload,
        }
    }

    /// Writes the frame for a payload of `payload_len` octets at the start of `buf`,
    /// `write_payload` filling the payload in place, then Payload Length, UDP length and the
    /// UDP checksum (mandatory over IPv6, RFC 8200 §8.1); returns the frame's length.
    ///
    /// # Errors
    /// [`Error::TooLarge`] when the datagram would not fit the 16-bit Payload Length;
    /// [`Error::Truncated`] when `buf` is shorter than [`Self::buffer_len`]; whatever
    /// `write_payload` returns.
    pub fn emit_with<E: From<Error>>(
        &self,
        buf: &mut [u8],
        payload_len: usize,
        write_payload: impl FnOnce(&mut [u8]) -> core::result::Result<(), E>,
    ) -> core::result::Result<usize, E> {
        check_ipv6_size(crate::ip::UDP_HEADER_LEN, payload_len)?;
        let len = self.buffer_len(payload_len);
        crate::ip::check_room(buf, len)?;
        let eth = crate::ethernet::EthernetRepr {
            ethertype: crate::ethernet::ETHERTYPE_IPV6,
            ..self.eth
        };
        let ip_offset = eth.emit(buf);
        let ip = &mut buf[ip_offset..len];
        let tc = self.traffic_class;
        ip[field::VERSION] = 0x60 | (tc >> 4);
        ip[field::TC_FLOW] = tc << 4;
        ip[2..4].fill(0);
        ip[field::NEXT_HEADER] = next_header::UDP;
        ip[field::HOP_LIMIT] = self.hop_limit;
        ip[field::SRC].copy_from_slice(&self.src_addr);
        ip[field::DST].copy_from_slice(&self.dst_addr);
        let udp = &mut ip[HEADER_LEN..];
        udp[field::UDP_SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        udp[field::UDP_DST_PORT].copy_from_slice(&self.dst_port.to_be_bytes());
        write_payload(&mut udp[crate::ip::UDP_HEADER_LEN..])?;
        finish_ipv6_udp(ip, HEADER_LEN);
        Ok(len)
    }

    /// The frame around `payload` as a new vector: a thin helper for callers that want an
    /// owned frame; see [`Udp6Frame::emit`].
    pub fn to_vec(&self, payload: &[u8]) -> Result<Vec<u8>> {
        self.with_payload(payload).to_vec()
    }
}

/// An Ethernet/IPv6/UDP frame to emit: header values and a borrowed payload (smoltcp's `Repr`
/// shape, as [`crate::ip::Udp4Frame`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Udp6Frame<'p> {
    /// Ethernet, IPv6 and UDP header values.
    pub headers: Udp6FrameRepr,
    /// The UDP payload.
    pub payload: &'p [u8],
}

impl<'p> Udp6Frame<'p> {
    /// Reads a frame: its header values and its payload, borrowed.
    pub fn parse(frame: &'p [u8]) -> Result<Self> {
        let (headers, range) = Udp6FrameRepr::parse(frame)?;
        Ok(Udp6Frame {
            headers,
            payload: &frame[range],
        })
    }

    /// Octets [`Udp6Frame::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        self.headers.buffer_len(self.payload.len())
    }

    /// Writes the frame at the start of `buf`; returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// [`Error::TooLarge`] for a payload beyond the 16-bit Payload Length;
    /// [`Error::Truncated`] when `buf` is too short.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        self.headers
            .emit_with(buf, self.payload.len(), |p: &mut [u8]| {
                p.copy_from_slice(self.payload);
                Ok::<(), Error>(())
            })
    }

    /// The frame as a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        check_ipv6_size(crate::ip::UDP_HEADER_LEN, self.payload.len())?;
        let mut out = vec![0u8; self.buffer_len()];
        self.emit(&mut out)?;
        Ok(out)
    }
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

    fn emit_udp_frame(
        eth: &EthernetRepr,
        src_addr: Ipv6Address,
        dst_addr: Ipv6Address,
        (src_port, dst_port): (u16, u16),
        traffic_class: u8,
        payload: &[u8],
    ) -> Result<Vec<u8>> {
        Udp6FrameRepr {
            eth: *eth,
            src_addr,
            dst_addr,
            src_port,
            dst_port,
            traffic_class,
            hop_limit: 64,
        }
        .to_vec(payload)
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

    #[test]
    fn oversized_payload_is_refused() {
        let big = vec![0u8; u16::MAX as usize - 7];
        assert_eq!(
            emit_udp_frame(&eth(), [1; 16], [2; 16], (1, 2), 0, &big),
            Err(Error::TooLarge {
                what: "IPv6 payload"
            })
        );
        let f = emit_udp_frame(&eth(), [1; 16], [2; 16], (1, 2), 0, &big[1..]).unwrap();
        assert!(matches!(locate(&f, 14), Ok(Ipv6Payload::Udp(l)) if l.udp_checksum_ok));
    }

    proptest! {
        #[test]
        fn no_panic_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = locate(&data, 0);
            let _ = locate(&data, 14);
            let _ = Udp6Frame::parse(&data);
        }

        /// parse(emit(x)) == x for the borrowed-payload frame, the checksum right, and every
        /// buffer shorter than `buffer_len` an error.
        #[test]
        fn frame_repr_round_trip_and_short_buffers(vlan in crate::ethernet::tests::arb_vlan(),
                                                   src_addr: [u8; 16], dst_addr: [u8; 16],
                                                   src_port: u16, dst_port: u16, traffic_class: u8,
                                                   hop_limit: u8,
                                                   payload in proptest::collection::vec(any::<u8>(), 0..200),
                                                   cut in 1usize..100) {
            let headers = Udp6FrameRepr {
                eth: EthernetRepr { dst: [1; 6], src: [2; 6], vlan, ethertype: crate::ethernet::ETHERTYPE_IPV6 },
                src_addr, dst_addr, src_port, dst_port, traffic_class, hop_limit,
            };
            let x = headers.with_payload(&payload);
            let mut buf = vec![0xa5; x.buffer_len() + 3];
            prop_assert_eq!(x.emit(&mut buf).unwrap(), x.buffer_len());
            let f = &buf[..x.buffer_len()];
            prop_assert_eq!(Udp6Frame::parse(f).unwrap(), x);
            prop_assert_eq!(&x.to_vec().unwrap()[..], f);
            let ip_offset = f.len() - payload.len() - HEADER_LEN - 8;
            let is_ok = matches!(locate(f, ip_offset), Ok(Ipv6Payload::Udp(l)) if l.udp_checksum_ok);
            prop_assert!(is_ok);
            let short = x.buffer_len().saturating_sub(cut);
            let is_truncated = matches!(x.emit(&mut vec![0; short]), Err(Error::Truncated { .. }));
            prop_assert!(is_truncated);
        }
    }
}
