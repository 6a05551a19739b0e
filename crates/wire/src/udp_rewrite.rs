//! A received UDP datagram sent on with a new payload, in the one encoder shape of issue 23
//! item 3 (smoltcp's `Repr`: borrow what is written, `buffer_len`, `emit` into the caller's
//! buffer, `to_vec` only as a helper).
//!
//! When a gateway protects or strips an R-GOOSE/R-SV session PDU, the SPDU changes size but
//! everything in front of it stays: the link header as received (addresses, the whole tag
//! stack), the IP header with its options or extension headers, the UDP ports. Only the IPv4
//! Total Length and header checksum (RFC 791 3.1), or the IPv6 Payload Length (RFC 8200 §3),
//! and the UDP length and checksum (RFC 768, over the pseudo-header of RFC 768 or RFC 8200
//! §8.1) are recomputed. [`LocatedUdp`] borrows those headers from the frame at the offsets its
//! one classification found (nothing is located again) and writes them into the caller's
//! buffer around a payload that is either copied ([`LocatedUdp::with_payload`]) or written in
//! place by the caller ([`LocatedUdp::emit_with`]: the session layer protects straight into
//! the output frame, so the SPDU is never built in a buffer of its own).
//!
//! Ethernet padding after the old datagram is not copied (the sending NIC pads again).

use crate::ip::{self, IPV4_MIN_HEADER_LEN, UDP_HEADER_LEN};
use crate::ipv6::{self, Udp6Location};
use crate::{Error, Result};

/// What carries the datagram in the buffer it was located in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// An IPv4 header (options included) at `ip_offset`.
    V4,
    /// An IPv6 header and its extension headers at `ip_offset`.
    V6,
    /// Nothing: the buffer was the UDP payload as a socket delivers it; so is the output.
    Bare,
}

/// The headers of a located UDP datagram, borrowed from the buffer it was found in, ready to
/// carry a new payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocatedUdp<'a> {
    /// Everything in front of the UDP payload, as received.
    head: &'a [u8],
    ip_offset: usize,
    udp_offset: usize,
    framing: Framing,
}

impl<'a> LocatedUdp<'a> {
    /// The IPv4 datagram whose header starts at `buf[ip_offset..]` and whose UDP header
    /// starts at `buf[udp_offset..]` (offsets from [`ip::locate_udp4`] or a classification:
    /// the caller vouches that they came from a parse of `buf`).
    ///
    /// # Errors
    /// [`Error::Truncated`] for offsets outside `buf` or out of order (a header shorter than
    /// IPv4's 20 octets between them).
    pub fn v4(buf: &'a [u8], ip_offset: usize, udp_offset: usize) -> Result<Self> {
        Self::checked(buf, ip_offset, udp_offset, IPV4_MIN_HEADER_LEN, Framing::V4)
    }

    /// The IPv6 datagram of `loc`, located in `buf` by [`ipv6::locate`] (its extension
    /// headers are kept as found).
    ///
    /// # Errors
    /// [`Error::Truncated`] for a location that does not fit `buf`.
    pub fn v6(buf: &'a [u8], loc: &Udp6Location) -> Result<Self> {
        Self::checked(
            buf,
            loc.ip_offset,
            loc.udp_offset,
            ipv6::HEADER_LEN,
            Framing::V6,
        )
    }

    /// A UDP payload with no headers around it (what a socket receives and sends): the
    /// output is the new payload alone.
    pub fn bare() -> Self {
        LocatedUdp {
            head: &[],
            ip_offset: 0,
            udp_offset: 0,
            framing: Framing::Bare,
        }
    }

    fn checked(
        buf: &'a [u8],
        ip_offset: usize,
        udp_offset: usize,
        min_ip_header: usize,
        framing: Framing,
    ) -> Result<Self> {
        let head_end = udp_offset.saturating_add(UDP_HEADER_LEN);
        if ip_offset.saturating_add(min_ip_header) > udp_offset || head_end > buf.len() {
            return Err(Error::Truncated {
                what: "located IP/UDP header",
                need: head_end,
                have: buf.len(),
            });
        }
        Ok(LocatedUdp {
            head: &buf[..head_end],
            ip_offset,
            udp_offset,
            framing,
        })
    }

    /// Octets in front of the payload in the output (0 for a bare payload).
    pub fn header_len(&self) -> usize {
        self.head.len()
    }

    /// Size of the output for a payload of `payload_len` octets.
    pub fn buffer_len(&self, payload_len: usize) -> usize {
        self.head.len() + payload_len
    }

    /// Checks that a payload of `payload_len` octets fits the IP length fields.
    fn check_size(&self, payload_len: usize) -> Result<()> {
        match self.framing {
            Framing::V4 => ip::check_ipv4_size(self.udp_offset - self.ip_offset, payload_len),
            Framing::V6 => ipv6::check_ipv6_size(
                self.udp_offset - self.ip_offset - ipv6::HEADER_LEN + UDP_HEADER_LEN,
                payload_len,
            ),
            Framing::Bare => Ok(()),
        }
    }

    /// Writes the headers and a payload of `payload_len` octets at the start of `buf`:
    /// the headers as received, `write_payload` filling the payload in place (it is given
    /// exactly `payload_len` octets), then the lengths and checksums; returns the output's
    /// length ([`Self::buffer_len`]).
    ///
    /// # Errors
    /// [`Error::TooLarge`] when the datagram would not fit the IP length field;
    /// [`Error::Truncated`] when `buf` is too short; whatever `write_payload` returns (the
    /// output is then incomplete and must not be sent). Nothing is written before the sizes
    /// are checked.
    pub fn emit_with<E: From<Error>>(
        &self,
        buf: &mut [u8],
        payload_len: usize,
        write_payload: impl FnOnce(&mut [u8]) -> core::result::Result<(), E>,
    ) -> core::result::Result<usize, E> {
        self.check_size(payload_len)?;
        let len = self.buffer_len(payload_len);
        ip::check_room(buf, len)?;
        let at = self.head.len();
        buf[..at].copy_from_slice(self.head);
        write_payload(&mut buf[at..len])?;
        let ip_packet = &mut buf[self.ip_offset..len];
        let udp_at = self.udp_offset - self.ip_offset;
        match self.framing {
            Framing::V4 => ip::finish_ipv4_udp(ip_packet, udp_at),
            Framing::V6 => ipv6::finish_ipv6_udp(ip_packet, udp_at),
            Framing::Bare => {}
        }
        Ok(len)
    }

    /// These headers around `payload`: the output as a value to emit.
    pub fn with_payload(self, payload: &'a [u8]) -> RewrittenUdp<'a> {
        RewrittenUdp {
            headers: self,
            payload,
        }
    }
}

/// A located datagram with a new, borrowed payload: [`RewrittenUdp::buffer_len`],
/// [`RewrittenUdp::emit`] into the caller's buffer, [`RewrittenUdp::to_vec`] as a helper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RewrittenUdp<'a> {
    /// The headers as received.
    pub headers: LocatedUdp<'a>,
    /// The new UDP payload.
    pub payload: &'a [u8],
}

impl RewrittenUdp<'_> {
    /// Octets [`RewrittenUdp::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        self.headers.buffer_len(self.payload.len())
    }

    /// Writes the output at the start of `buf`; returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// As [`LocatedUdp::emit_with`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        self.headers
            .emit_with(buf, self.payload.len(), |p: &mut [u8]| {
                p.copy_from_slice(self.payload);
                Ok::<(), Error>(())
            })
    }

    /// The output as a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        self.headers.check_size(self.payload.len())?;
        let mut out = vec![0u8; self.buffer_len()];
        self.emit(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ethernet::{tests::arb_vlan, EthernetRepr, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
    use crate::ip::{locate_udp, UdpFrameRepr};
    use crate::ipv6::{Ipv6Payload, Udp6FrameRepr};
    use proptest::prelude::*;

    fn v4_frame(vlan: Option<crate::ethernet::VlanTag>, payload: &[u8], options: bool) -> Vec<u8> {
        let f = UdpFrameRepr {
            eth: EthernetRepr {
                dst: [1; 6],
                src: [2; 6],
                vlan,
                ethertype: ETHERTYPE_IPV4,
            },
            src_addr: [10, 0, 0, 1],
            dst_addr: [239, 0, 0, 2],
            src_port: 102,
            dst_port: 102,
            ttl: 64,
            tos: 0xb8,
            identification: 9,
        }
        .to_vec(payload)
        .unwrap();
        if !options {
            return f;
        }
        // The same packet with a 4-octet NOP option block (IHL 6), lengths fixed up.
        let at = if vlan.is_some() { 18 } else { 14 };
        let mut g = f[..at + 20].to_vec();
        g[at] = 0x46;
        g.extend_from_slice(&[1, 1, 1, 0]);
        g.extend_from_slice(&f[at + 20..]);
        let len = g.len();
        ip::finish_ipv4_udp(&mut g[at..len], 24);
        g
    }

    fn v6_frame(payload: &[u8], dest_opts: bool) -> Vec<u8> {
        let f = Udp6FrameRepr {
            eth: EthernetRepr {
                dst: [0x33, 0x33, 0, 0, 0, 1],
                src: [2; 6],
                vlan: None,
                ethertype: ETHERTYPE_IPV6,
            },
            src_addr: [0xfd; 16],
            dst_addr: [0xff; 16],
            src_port: 102,
            dst_port: 102,
            traffic_class: 0,
            hop_limit: 64,
        }
        .to_vec(payload)
        .unwrap();
        if !dest_opts {
            return f;
        }
        let mut g = f[..14 + 40].to_vec();
        g[14 + 6] = ipv6::next_header::DEST_OPTS;
        g.extend_from_slice(&[ipv6::next_header::UDP, 0, 1, 4, 0, 0, 0, 0]);
        g.extend_from_slice(&f[14 + 40..]);
        let len = g.len();
        ipv6::finish_ipv6_udp(&mut g[14..len], 48);
        g
    }

    fn v6_loc(f: &[u8]) -> Udp6Location {
        match ipv6::locate(f, 14).unwrap() {
            Ipv6Payload::Udp(l) => l,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn same_payload_gives_the_same_frame() {
        for options in [false, true] {
            let f = v4_frame(None, b"\x01\x40hello", options);
            let loc = locate_udp(&f).unwrap();
            let out = LocatedUdp::v4(&f, loc.ip_offset, loc.udp_offset)
                .unwrap()
                .with_payload(&f[loc.payload.clone()])
                .to_vec()
                .unwrap();
            assert_eq!(out, f);
        }
        for opts in [false, true] {
            let f = v6_frame(b"\x01\x40hello", opts);
            let loc = v6_loc(&f);
            let out = LocatedUdp::v6(&f, &loc)
                .unwrap()
                .with_payload(&f[loc.payload.clone()])
                .to_vec()
                .unwrap();
            assert_eq!(out, f);
        }
    }

    #[test]
    fn offsets_out_of_order_or_outside_are_refused() {
        let f = v4_frame(None, b"abc", false);
        assert!(LocatedUdp::v4(&f, 14, 30).is_err());
        assert!(LocatedUdp::v4(&f, 14, f.len() - 7).is_err());
        assert!(LocatedUdp::v4(&f, usize::MAX - 3, usize::MAX).is_err());
        let g = v6_frame(b"abc", false);
        let mut loc = v6_loc(&g);
        loc.udp_offset = loc.ip_offset + 39;
        assert!(LocatedUdp::v6(&g, &loc).is_err());
    }

    #[test]
    fn bare_is_the_payload_alone() {
        let out = LocatedUdp::bare().with_payload(b"xyz").to_vec().unwrap();
        assert_eq!(out, b"xyz");
        let mut buf = [0u8; 2];
        assert!(matches!(
            LocatedUdp::bare().with_payload(b"xyz").emit(&mut buf),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn sizes_beyond_the_length_fields_are_refused() {
        let f = v4_frame(None, b"abc", true);
        let loc = locate_udp(&f).unwrap();
        let h = LocatedUdp::v4(&f, loc.ip_offset, loc.udp_offset).unwrap();
        let big = vec![0u8; u16::MAX as usize - 24 - 8 + 1];
        assert!(matches!(
            h.with_payload(&big).to_vec(),
            Err(Error::TooLarge { .. })
        ));
        assert!(h.with_payload(&big[1..]).to_vec().is_ok());
        let g = v6_frame(b"abc", true);
        let h = LocatedUdp::v6(&g, &v6_loc(&g)).unwrap();
        let big = vec![0u8; u16::MAX as usize - 16 + 1];
        assert!(matches!(
            h.with_payload(&big).to_vec(),
            Err(Error::TooLarge { .. })
        ));
        assert!(h.with_payload(&big[1..]).to_vec().is_ok());
    }

    proptest! {
        /// A new payload behind the received headers: the output locates to exactly that
        /// payload with good checksums, every header byte outside the length and checksum
        /// fields is the input's, `emit_with` writing in place gives the same bytes as
        /// copying, and a buffer shorter than `buffer_len` is an error.
        #[test]
        fn rewrite_round_trip_v4(vlan in arb_vlan(), options: bool,
                                 old in proptest::collection::vec(any::<u8>(), 0..100),
                                 new in proptest::collection::vec(any::<u8>(), 0..300),
                                 cut in 1usize..60) {
            let f = v4_frame(vlan, &old, options);
            let loc = locate_udp(&f).unwrap();
            let h = LocatedUdp::v4(&f, loc.ip_offset, loc.udp_offset).unwrap();
            let r = h.with_payload(&new);
            let out = r.to_vec().unwrap();
            prop_assert_eq!(out.len(), r.buffer_len());
            let l2 = locate_udp(&out).unwrap();
            prop_assert_eq!(&out[l2.payload.clone()], &new[..]);
            prop_assert!(l2.ip_checksum_ok && l2.udp_checksum_ok);
            let ip = loc.ip_offset;
            prop_assert_eq!(&out[..ip + 2], &f[..ip + 2]);
            prop_assert_eq!(&out[ip + 4..ip + 10], &f[ip + 4..ip + 10]);
            prop_assert_eq!(&out[ip + 12..loc.udp_offset + 4], &f[ip + 12..loc.udp_offset + 4]);
            let mut buf = vec![0x5a; r.buffer_len()];
            let n = h.emit_with(&mut buf, new.len(), |p: &mut [u8]| {
                p.copy_from_slice(&new);
                Ok::<(), Error>(())
            }).unwrap();
            prop_assert_eq!(n, out.len());
            prop_assert_eq!(&buf, &out);
            let short = r.buffer_len().saturating_sub(cut);
            let is_truncated = matches!(r.emit(&mut vec![0; short]), Err(Error::Truncated { .. }));
            prop_assert!(is_truncated);
        }

        /// The same over IPv6, with and without an extension header in front of UDP.
        #[test]
        fn rewrite_round_trip_v6(opts: bool,
                                 old in proptest::collection::vec(any::<u8>(), 0..100),
                                 new in proptest::collection::vec(any::<u8>(), 0..300),
                                 cut in 1usize..80) {
            let f = v6_frame(&old, opts);
            let loc = v6_loc(&f);
            let r = LocatedUdp::v6(&f, &loc).unwrap().with_payload(&new);
            let out = r.to_vec().unwrap();
            let l2 = v6_loc(&out);
            prop_assert!(l2.udp_checksum_ok);
            prop_assert_eq!(&out[l2.payload.clone()], &new[..]);
            prop_assert_eq!(l2.udp_offset, loc.udp_offset);
            prop_assert_eq!(&out[..18], &f[..18]);
            prop_assert_eq!(&out[20..loc.udp_offset + 4], &f[20..loc.udp_offset + 4]);
            let short = r.buffer_len().saturating_sub(cut);
            let is_truncated = matches!(r.emit(&mut vec![0; short]), Err(Error::Truncated { .. }));
            prop_assert!(is_truncated);
        }

        /// Arbitrary offsets into arbitrary bytes never panic.
        #[test]
        fn arbitrary_offsets_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..80),
                                         ip_offset in 0usize..90, udp_offset in 0usize..90,
                                         new in proptest::collection::vec(any::<u8>(), 0..20)) {
            if let Ok(h) = LocatedUdp::v4(&buf, ip_offset, udp_offset) {
                let _ = h.with_payload(&new).to_vec();
            }
        }
    }
}
