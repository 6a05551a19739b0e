//! Mirrored traffic: the Ethernet frame inside a GRE tunnel (sans-I/O).
//!
//! A remote SPAN sends copies of a switch port's frames to the monitor inside GRE: Cisco's
//! ERSPAN (draft-foschiano-erspan-03) and transparent Ethernet bridging (GRE protocol 0x6558,
//! RFC 1701 / RFC 2784 with RFC 2890's key and sequence number). A capture taken at the
//! collector holds IPv4 (or IPv6) GRE packets; the GOOSE, SV and MMS traffic is inside them.
//! Without decapsulation every such frame is "other" and an audit of a remote-SPAN capture
//! looks clean. [`decapsulate`] finds the inner Ethernet frame:
//!
//! * the GRE header (RFC 2784 §2.1, RFC 2890 §2): C (checksum and reserved word present), K
//!   (key present), S (sequence number present), version 0; a header with the RFC 1701
//!   routing bit or another version is not read;
//! * protocol 0x6558 (transparent Ethernet bridging): the Ethernet frame follows the GRE header;
//! * protocol 0x88BE: ERSPAN type II (S set; an 8-octet header of version 1) or type I (S
//!   clear: no ERSPAN header, as Wireshark reads it);
//! * protocol 0x22EB: ERSPAN type III, a 12-octet header of version 2 and, when its O bit (the
//!   last bit of the header) is set, an 8-octet platform-specific sub-header.
//!
//! The outer IPv4 header may carry options; an outer IPv6 header is read when GRE follows it
//! directly (next header 47). Fragmented outer packets are not decapsulated.

use gander_wire::ethernet::{self, is_tpid, HEADER_LEN};
use std::ops::Range;

/// IP protocol number of GRE.
pub const PROTOCOL_GRE: u8 = 47;
/// GRE protocol type of transparent Ethernet bridging.
pub const GRE_TEB: u16 = 0x6558;
/// GRE protocol type of ERSPAN types I and II.
pub const GRE_ERSPAN_II: u16 = 0x88be;
/// GRE protocol type of ERSPAN type III.
pub const GRE_ERSPAN_III: u16 = 0x22eb;

const GRE_C: u16 = 0x8000;
const GRE_R: u16 = 0x4000;
const GRE_K: u16 = 0x2000;
const GRE_S: u16 = 0x1000;
const GRE_VERSION: u16 = 0x0007;
const ERSPAN_II_LEN: usize = 8;
const ERSPAN_III_LEN: usize = 12;
const ERSPAN_III_PLATFORM_LEN: usize = 8;

/// How a frame was carried to the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tunnel {
    /// GRE transparent Ethernet bridging (0x6558).
    GreEthernet,
    /// ERSPAN type I (0x88BE, no sequence number, no ERSPAN header).
    ErspanI,
    /// ERSPAN type II (0x88BE with an 8-octet header).
    ErspanII,
    /// ERSPAN type III (0x22EB with a 12-octet header, possibly a platform sub-header).
    ErspanIII,
}

impl Tunnel {
    /// Name in `frame show` output and the audit.
    pub fn name(self) -> &'static str {
        match self {
            Tunnel::GreEthernet => "gre-eth",
            Tunnel::ErspanI => "erspan-i",
            Tunnel::ErspanII => "erspan-ii",
            Tunnel::ErspanIII => "erspan-iii",
        }
    }
}

/// Whether `frame` (an Ethernet II frame) is an unfragmented IPv4 packet, or an IPv6 packet
/// with GRE as its first next header, that carries GRE: what [`decapsulate`] may still not
/// read (another GRE protocol, a header it does not read), so whoever judges the capture can
/// say that tunnelled traffic was not judged.
pub fn is_gre(frame: &[u8]) -> bool {
    outer_gre(frame).is_some()
}

/// The offset of the GRE header in `frame`, behind Ethernet, tags and IPv4 or IPv6.
fn outer_gre(frame: &[u8]) -> Option<usize> {
    let u16_at = |at: usize| -> Option<u16> {
        Some(u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]))
    };
    let mut at = 12;
    let mut ethertype = u16_at(at)?;
    let mut tags = 0;
    while is_tpid(ethertype) {
        tags += 1;
        if tags > ethernet::MAX_TAGS {
            return None;
        }
        at += ethernet::VLAN_TAG_LEN;
        ethertype = u16_at(at)?;
    }
    let ip = at + 2;
    match ethertype {
        ethernet::ETHERTYPE_IPV4 => {
            let h = frame.get(ip..ip + 20)?;
            let ihl = usize::from(h[0] & 0x0f) * 4;
            let fragment = u16::from_be_bytes([h[6], h[7]]) & 0x3fff;
            if h[0] >> 4 != 4 || ihl < 20 || h[9] != PROTOCOL_GRE || fragment != 0 {
                return None;
            }
            Some(ip + ihl)
        }
        ethernet::ETHERTYPE_IPV6 => {
            let h = frame.get(ip..ip + 40)?;
            if h[0] >> 4 != 6 || h[6] != PROTOCOL_GRE {
                return None;
            }
            Some(ip + 40)
        }
        _ => None,
    }
}

/// The inner Ethernet frame of `frame` (an Ethernet II frame) when it is a GRE packet carrying
/// one, as its range in `frame`; `None` for anything else, including a GRE packet cut before
/// its inner Ethernet header or with a header this module does not read.
pub fn decapsulate(frame: &[u8]) -> Option<(Tunnel, Range<usize>)> {
    let u16_at = |at: usize| -> Option<u16> {
        Some(u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]))
    };
    let gre = outer_gre(frame)?;
    let flags = u16_at(gre)?;
    let protocol = u16_at(gre + 2)?;
    if flags & (GRE_R | GRE_VERSION) != 0 {
        return None;
    }
    let mut inner = gre + 4;
    for bit in [GRE_C, GRE_K, GRE_S] {
        if flags & bit != 0 {
            inner += 4;
        }
    }
    let tunnel = match protocol {
        GRE_TEB => Tunnel::GreEthernet,
        GRE_ERSPAN_II if flags & GRE_S == 0 => Tunnel::ErspanI,
        GRE_ERSPAN_II => {
            let h = frame.get(inner..inner + ERSPAN_II_LEN)?;
            if h[0] >> 4 != 1 {
                return None;
            }
            inner += ERSPAN_II_LEN;
            Tunnel::ErspanII
        }
        GRE_ERSPAN_III => {
            let h = frame.get(inner..inner + ERSPAN_III_LEN)?;
            if h[0] >> 4 != 2 {
                return None;
            }
            inner += ERSPAN_III_LEN;
            if h[ERSPAN_III_LEN - 1] & 1 != 0 {
                inner += ERSPAN_III_PLATFORM_LEN;
            }
            Tunnel::ErspanIII
        }
        _ => return None,
    };
    if frame.len() < inner + HEADER_LEN {
        return None;
    }
    Some((tunnel, inner..frame.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a collector receives: Ethernet, IPv4 (or IPv6), GRE with the given flags, the
    /// tunnel's header, then `inner`.
    fn wrap(tunnel: Tunnel, ipv6: bool, c: bool, k: bool, o: bool, inner: &[u8]) -> Vec<u8> {
        let s = match tunnel {
            Tunnel::ErspanII | Tunnel::ErspanIII => true,
            Tunnel::ErspanI => false,
            Tunnel::GreEthernet => k && c,
        };
        let mut gre = Vec::new();
        let flags =
            if c { GRE_C } else { 0 } | if k { GRE_K } else { 0 } | if s { GRE_S } else { 0 };
        gre.extend(flags.to_be_bytes());
        gre.extend(
            match tunnel {
                Tunnel::GreEthernet => GRE_TEB,
                Tunnel::ErspanI | Tunnel::ErspanII => GRE_ERSPAN_II,
                Tunnel::ErspanIII => GRE_ERSPAN_III,
            }
            .to_be_bytes(),
        );
        if c {
            gre.extend([0xaa, 0xbb, 0, 0]);
        }
        if k {
            gre.extend([0, 0, 0, 9]);
        }
        if s {
            gre.extend([0, 0, 0, 42]);
        }
        match tunnel {
            Tunnel::ErspanII => gre.extend([0x10, 0x05, 0x00, 0x64, 0, 0, 0, 0]),
            Tunnel::ErspanIII => {
                gre.extend([0x20, 0x05, 0x00, 0x64, 1, 2, 3, 4, 0, 0, 0, u8::from(o)]);
                if o {
                    gre.extend([0x08, 0, 0, 0, 0, 0, 0, 0]);
                }
            }
            _ => {}
        }
        gre.extend(inner);
        let mut f = vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
        if ipv6 {
            f.extend([0x86, 0xdd, 0x60, 0, 0, 0]);
            f.extend((gre.len() as u16).to_be_bytes());
            f.extend([PROTOCOL_GRE, 64]);
            f.extend([0; 32]);
        } else {
            f.extend([0x08, 0x00, 0x45, 0]);
            f.extend(((20 + gre.len()) as u16).to_be_bytes());
            f.extend([
                0,
                1,
                0x40,
                0,
                64,
                PROTOCOL_GRE,
                0,
                0,
                10,
                0,
                0,
                1,
                10,
                0,
                0,
                2,
            ]);
        }
        f.extend(gre);
        f
    }

    fn goose() -> Vec<u8> {
        let mut g = vec![1, 0x0c, 0xcd, 1, 0, 1, 0, 0x30, 0xa7, 1, 2, 3, 0x88, 0xb8];
        g.extend([0, 1, 0, 12, 0, 0, 0, 0, 0x61, 2, 0x80, 0]);
        g
    }

    /// The field test's D_erspan.pcap (ITI Sample_File_MMS_and_GOOSE inside ERSPAN type II,
    /// GRE sequence number present): the GOOSE frame inside is found; the other tunnels too.
    #[test]
    fn the_inner_frame_of_each_tunnel() {
        let g = goose();
        for t in [
            Tunnel::GreEthernet,
            Tunnel::ErspanI,
            Tunnel::ErspanII,
            Tunnel::ErspanIII,
        ] {
            let f = wrap(t, false, false, false, false, &g);
            let (got, r) = decapsulate(&f).expect("decapsulated");
            assert_eq!((got, &f[r]), (t, &g[..]), "{t:?}");
        }
        let f = wrap(Tunnel::ErspanIII, true, true, true, true, &g);
        let (t, r) = decapsulate(&f).unwrap();
        assert_eq!((t, &f[r]), (Tunnel::ErspanIII, &g[..]));
    }

    #[test]
    fn what_is_not_read() {
        let g = goose();
        // Not GRE (UDP), the routing bit, version 1 (PPTP), another protocol, an ERSPAN II
        // header of the wrong version, a frame cut inside the inner Ethernet header.
        let mut udp = wrap(Tunnel::ErspanII, false, false, false, false, &g);
        assert!(is_gre(&udp));
        udp[23] = 17;
        assert_eq!(decapsulate(&udp), None);
        assert!(!is_gre(&udp));
        for (at, v) in [(34usize, 0x50u8), (35, 0x01)] {
            let mut f = wrap(Tunnel::ErspanII, false, false, false, false, &g);
            f[at] = v;
            assert_eq!(decapsulate(&f), None, "{at}");
        }
        let mut f = wrap(Tunnel::GreEthernet, false, false, false, false, &g);
        f[36..38].copy_from_slice(&0x0800u16.to_be_bytes());
        assert_eq!(decapsulate(&f), None);
        assert!(is_gre(&f));
        let mut f = wrap(Tunnel::ErspanII, false, false, false, false, &g);
        f[42] = 0x20;
        assert_eq!(decapsulate(&f), None);
        let f = wrap(Tunnel::ErspanII, false, false, false, false, &g);
        assert_eq!(decapsulate(&f[..f.len() - g.len() + 13]), None);
        assert_eq!(decapsulate(&g), None);
    }

    proptest! {
        /// Wrapping any inner frame in any tunnel and header options, then decapsulating,
        /// gives the inner frame back.
        #[test]
        fn wrap_then_decapsulate(inner in proptest::collection::vec(any::<u8>(), 14..200), which in 0usize..4, ipv6: bool, c: bool, k: bool, o: bool) {
            let t = [Tunnel::GreEthernet, Tunnel::ErspanI, Tunnel::ErspanII, Tunnel::ErspanIII][which];
            let (c, k) = if t == Tunnel::ErspanI { (false, false) } else { (c, k) };
            let f = wrap(t, ipv6, c, k, o, &inner);
            let (got, r) = decapsulate(&f).expect("decapsulated");
            prop_assert_eq!(got, t);
            prop_assert_eq!(&f[r], &inner[..]);
        }

        /// Any bytes: an answer, and a range inside the frame holding an Ethernet header.
        #[test]
        fn any_bytes(data in proptest::collection::vec(any::<u8>(), 0..160)) {
            if let Some((_, r)) = decapsulate(&data) {
                prop_assert!(r.end <= data.len() && r.len() >= HEADER_LEN);
            }
        }
    }
}
