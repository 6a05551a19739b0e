//! Link types (the tcpdump.org LINKTYPE_ registry) and how a packet of each is presented as an
//! Ethernet II frame, so one classification (`gander_sec::view::classify`) reads every capture.
//!
//! * Ethernet (1): as captured.
//! * Linux cooked SLL (113): a 16-octet header (packet type, ARPHRD type, address length, 8
//!   octets of link-layer source address, protocol). The Ethernet header is written *in place*
//!   over its last 14 octets: the source address moves two octets on, the protocol field is
//!   already where the EtherType goes. The destination address is not captured: it is
//!   presented as ff:ff:ff:ff:ff:ff for a broadcast packet and 00:00:00:00:00:00 otherwise
//!   (a GOOSE multicast destination is lost in SLL captures; [`Presented::dst_known`] says so).
//! * Linux cooked SLL2 (276): a 20-octet header (protocol, reserved, interface index, ARPHRD
//!   type, packet type, address length, 8 octets of address); the source address is already
//!   where an Ethernet header over its last 14 octets would have it, so only the protocol is
//!   copied, in place.
//! * Raw IP (101; 12 and 14 on some BSDs), IPv4 (228), IPv6 (229): an Ethernet header (zero
//!   addresses, EtherType from the IP version) is put in front, in a scratch buffer the reader
//!   reuses: the only copy.
//!
//! * BSD loopback, LINKTYPE_NULL (0) and LINKTYPE_LOOP (108): a 4-octet address family (in
//!   the capturing host's byte order for NULL, in network order for LOOP), then the IP packet.
//!   This is what a capture on the loopback interface of macOS or a BSD holds, the usual
//!   place for an MMS client and server run on one machine. AF_INET is 2 everywhere; AF_INET6
//!   is 10 (Linux), 24 (NetBSD, OpenBSD), 28 (FreeBSD) or 30 (macOS), so the IP version
//!   nibble decides between the two and the family only rules out what is not IP (the
//!   tcpdump.org LINKTYPE_NULL description; Wireshark's `null` dissector reads it the same
//!   way). Presented like raw IP, in the scratch buffer.
//!
//! Linux's SLL/SLL2 protocol field holds values below 0x0600 for frames that are not Ethernet
//! II (802.2 LLC = 4, Novell 802.3 = 1): they stay as they are, so the "EtherType" reads as an
//! 802.3 length and the frame classifies as other traffic.

use gander_wire::ethernet::{ETHERTYPE_IPV4, ETHERTYPE_IPV6, HEADER_LEN};

/// A capture's link type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// LINKTYPE_ETHERNET (1).
    Ethernet,
    /// LINKTYPE_LINUX_SLL (113).
    LinuxSll,
    /// LINKTYPE_LINUX_SLL2 (276).
    LinuxSll2,
    /// LINKTYPE_RAW (101; DLT 12 and 14 as written on some systems): IPv4 or IPv6 by version.
    RawIp,
    /// LINKTYPE_IPV4 (228).
    Ipv4,
    /// LINKTYPE_IPV6 (229).
    Ipv6,
    /// LINKTYPE_NULL (0): BSD loopback, address family in the capturing host's byte order.
    Null,
    /// LINKTYPE_LOOP (108): OpenBSD loopback, address family in network byte order.
    Loop,
    /// Any other link type (its code): packets are numbered and passed on, not presented as
    /// Ethernet.
    Other(u32),
}

impl LinkType {
    /// The link type of a LINKTYPE_ code.
    pub fn from_code(code: u32) -> LinkType {
        match code {
            0 => LinkType::Null,
            1 => LinkType::Ethernet,
            108 => LinkType::Loop,
            113 => LinkType::LinuxSll,
            276 => LinkType::LinuxSll2,
            12 | 14 | 101 => LinkType::RawIp,
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            c => LinkType::Other(c),
        }
    }

    /// The LINKTYPE_ code (101 for every raw-IP variant).
    pub fn code(self) -> u32 {
        match self {
            LinkType::Null => 0,
            LinkType::Ethernet => 1,
            LinkType::Loop => 108,
            LinkType::LinuxSll => 113,
            LinkType::LinuxSll2 => 276,
            LinkType::RawIp => 101,
            LinkType::Ipv4 => 228,
            LinkType::Ipv6 => 229,
            LinkType::Other(c) => c,
        }
    }

    /// Name as tshark's `frame.encap_type`-like short names.
    pub fn name(self) -> &'static str {
        match self {
            LinkType::Ethernet => "ethernet",
            LinkType::LinuxSll => "linux-sll",
            LinkType::LinuxSll2 => "linux-sll2",
            LinkType::RawIp => "raw-ip",
            LinkType::Ipv4 => "ipv4",
            LinkType::Ipv6 => "ipv6",
            LinkType::Null => "null",
            LinkType::Loop => "loop",
            LinkType::Other(_) => "other",
        }
    }
}

/// Where the Ethernet presentation of a packet is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presented {
    /// In the packet's own bytes, from this offset (the header was rewritten in place).
    InPlace {
        /// Offset of the Ethernet header in the captured bytes.
        start: usize,
        /// Whether the destination address was captured.
        dst_known: bool,
    },
    /// In the scratch buffer.
    Scratch,
    /// Not presentable (unknown link type, or too short for its link header).
    No,
}

const SLL_LEN: usize = 16;
const SLL2_LEN: usize = 20;
/// SLL packet type "sent to everybody" (broadcast).
const PACKET_BROADCAST: u16 = 1;
const BROADCAST: [u8; 6] = [0xff; 6];

/// The Linux cooked packet type of a packet (SLL octets 0-1, SLL2 octet 10; packet(7):
/// 0 to us, 1 broadcast, 2 multicast, 3 to another host, 4 outgoing), read before
/// [`present`] writes over the header; `None` for other link types. A Linux "any" capture
/// records one frame once per interface it crosses, and the copies differ in it (a GOOSE
/// frame through a bridge: multicast in, outgoing twice, multicast in): what tells a copy made
/// by the capture from a frame sent twice.
pub fn packet_type(link: LinkType, data: &[u8]) -> Option<u16> {
    match link {
        LinkType::LinuxSll if data.len() >= SLL_LEN => Some(u16::from_be_bytes([data[0], data[1]])),
        LinkType::LinuxSll2 if data.len() >= SLL2_LEN => Some(u16::from(data[10])),
        _ => None,
    }
}

/// Presents `data` (a packet of link type `link`) as an Ethernet II frame: in place (SLL,
/// SLL2), as is (Ethernet) or into `scratch` (raw IP).
pub fn present(link: LinkType, data: &mut [u8], scratch: &mut Vec<u8>) -> Presented {
    match link {
        LinkType::Ethernet => Presented::InPlace {
            start: 0,
            dst_known: true,
        },
        LinkType::LinuxSll if data.len() >= SLL_LEN => {
            let pkttype = u16::from_be_bytes([data[0], data[1]]);
            let halen = (u16::from_be_bytes([data[4], data[5]]) as usize).min(6);
            // Source address: SLL octets 6.. → Ethernet source at 2 + 6 = 8.
            let mut src = [0u8; 6];
            src[..halen].copy_from_slice(&data[6..6 + halen]);
            data[8..14].copy_from_slice(&src);
            let broadcast = pkttype == PACKET_BROADCAST;
            data[2..8].copy_from_slice(if broadcast { &BROADCAST } else { &[0; 6] });
            // The protocol field (SLL 14..16) is already the EtherType position.
            Presented::InPlace {
                start: SLL_LEN - HEADER_LEN,
                dst_known: broadcast,
            }
        }
        LinkType::LinuxSll2 if data.len() >= SLL2_LEN => {
            let proto = [data[0], data[1]];
            let pkttype = data[10] as u16;
            let halen = (data[11] as usize).min(6);
            // Source address at 12..18 is the source of an Ethernet header at 6.
            data[12 + halen..18].fill(0);
            let broadcast = pkttype == PACKET_BROADCAST;
            data[6..12].copy_from_slice(if broadcast { &BROADCAST } else { &[0; 6] });
            data[18..20].copy_from_slice(&proto);
            Presented::InPlace {
                start: SLL2_LEN - HEADER_LEN,
                dst_known: broadcast,
            }
        }
        LinkType::RawIp | LinkType::Ipv4 | LinkType::Ipv6 if !data.is_empty() => {
            let ethertype = match (link, data[0] >> 4) {
                (LinkType::Ipv6, _) | (LinkType::RawIp, 6) => ETHERTYPE_IPV6,
                _ => ETHERTYPE_IPV4,
            };
            behind_ethernet(ethertype, data, scratch)
        }
        LinkType::Null | LinkType::Loop if data.len() > LOOPBACK_LEN => {
            let ip = &data[LOOPBACK_LEN..];
            match (loopback_family(link, &data[..LOOPBACK_LEN]), ip[0] >> 4) {
                (Some(AF_INET), 4) => behind_ethernet(ETHERTYPE_IPV4, ip, scratch),
                (Some(f), 6) if AF_INET6.contains(&f) => {
                    behind_ethernet(ETHERTYPE_IPV6, ip, scratch)
                }
                _ => Presented::No,
            }
        }
        _ => Presented::No,
    }
}

/// Octets of the BSD loopback header (the address family).
const LOOPBACK_LEN: usize = 4;
const AF_INET: u32 = 2;
/// AF_INET6 on Linux, NetBSD/OpenBSD, FreeBSD and macOS.
const AF_INET6: [u32; 4] = [10, 24, 28, 30];

/// The address family of a NULL or LOOP header. LOOP is big-endian; NULL is in the writer's
/// byte order, which a reader does not know: every family is below 65,536, so a value whose
/// two low-address octets are zero was written big-endian (libpcap's `pcap-common.c` swaps
/// on the same test).
fn loopback_family(link: LinkType, h: &[u8]) -> Option<u32> {
    let b: [u8; 4] = h.try_into().ok()?;
    let be = u32::from_be_bytes(b);
    Some(if link == LinkType::Loop || b[0..2] == [0, 0] {
        be
    } else {
        u32::from_le_bytes(b)
    })
}

/// `data` (an IP packet) behind an Ethernet header with zero addresses, in `scratch`.
fn behind_ethernet(ethertype: u16, data: &[u8], scratch: &mut Vec<u8>) -> Presented {
    scratch.clear();
    scratch.extend_from_slice(&[0; 12]);
    scratch.extend_from_slice(&ethertype.to_be_bytes());
    scratch.extend_from_slice(data);
    Presented::Scratch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_types_of_linux_cooked_captures() {
        let sll = [0, 4, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x88, 0xb8];
        assert_eq!(packet_type(LinkType::LinuxSll, &sll), Some(4));
        let mut sll2 = vec![0x88, 0xb8, 0, 0, 0, 0, 0, 2, 0, 1, 2, 6];
        sll2.extend([1, 2, 3, 4, 5, 6, 0, 0]);
        assert_eq!(packet_type(LinkType::LinuxSll2, &sll2), Some(2));
        assert_eq!(packet_type(LinkType::LinuxSll, &sll[..15]), None);
        assert_eq!(packet_type(LinkType::Ethernet, &sll), None);
    }

    #[test]
    fn sll_becomes_ethernet_in_place() {
        // SLL: outgoing(4), ARPHRD_ETHER(1), halen 6, address, 2 pad, protocol 0x88b8.
        let mut d = vec![0, 4, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x88, 0xb8, 0xaa];
        let p = present(LinkType::LinuxSll, &mut d, &mut Vec::new());
        assert_eq!(
            p,
            Presented::InPlace {
                start: 2,
                dst_known: false
            }
        );
        assert_eq!(
            &d[2..],
            &[0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0x88, 0xb8, 0xaa]
        );
    }

    #[test]
    fn sll2_becomes_ethernet_in_place() {
        let mut d = vec![0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 1, 6];
        d.extend([1, 2, 3, 4, 5, 6, 0, 0, 0x45]);
        let p = present(LinkType::LinuxSll2, &mut d, &mut Vec::new());
        assert_eq!(
            p,
            Presented::InPlace {
                start: 6,
                dst_known: true
            }
        );
        assert_eq!(
            &d[6..],
            &[0xff; 6]
                .iter()
                .copied()
                .chain([1, 2, 3, 4, 5, 6, 8, 0, 0x45])
                .collect::<Vec<_>>()[..]
        );
    }

    #[test]
    fn raw_ip_gets_a_header_by_version() {
        let mut s = Vec::new();
        assert_eq!(
            present(LinkType::RawIp, &mut [0x60, 0], &mut s),
            Presented::Scratch
        );
        assert_eq!(&s[12..], &[0x86, 0xdd, 0x60, 0]);
        assert_eq!(
            present(LinkType::RawIp, &mut [0x45], &mut s),
            Presented::Scratch
        );
        assert_eq!(&s[12..], &[0x08, 0x00, 0x45]);
    }

    #[test]
    fn bsd_loopback_in_either_byte_order() {
        let mut s = Vec::new();
        // macOS writes NULL little-endian: AF_INET 2, AF_INET6 30.
        for (link, hdr, ip, ethertype) in [
            (LinkType::Null, [2, 0, 0, 0], 0x45, [0x08, 0x00]),
            (LinkType::Null, [0, 0, 0, 2], 0x45, [0x08, 0x00]),
            (LinkType::Null, [30, 0, 0, 0], 0x60, [0x86, 0xdd]),
            (LinkType::Null, [0, 0, 0, 28], 0x60, [0x86, 0xdd]),
            (LinkType::Loop, [0, 0, 0, 24], 0x60, [0x86, 0xdd]),
            (LinkType::Loop, [0, 0, 0, 2], 0x45, [0x08, 0x00]),
        ] {
            let mut d = hdr.to_vec();
            d.extend([ip, 1, 2]);
            assert_eq!(present(link, &mut d, &mut s), Presented::Scratch, "{hdr:?}");
            assert_eq!(&s[..12], &[0; 12]);
            assert_eq!(&s[12..], &[ethertype[0], ethertype[1], ip, 1, 2], "{hdr:?}");
        }
        // Not IP (AF_APPLETALK 16), a family that contradicts the version, LOOP read as
        // little-endian, and a header alone: not presented.
        for (link, d) in [
            (LinkType::Null, vec![16, 0, 0, 0, 0x45]),
            (LinkType::Null, vec![2, 0, 0, 0, 0x60]),
            (LinkType::Loop, vec![2, 0, 0, 0, 0x45]),
            (LinkType::Null, vec![2, 0, 0, 0]),
        ] {
            assert_eq!(
                present(link, &mut d.clone(), &mut s),
                Presented::No,
                "{d:?}"
            );
        }
        assert_eq!(LinkType::from_code(0), LinkType::Null);
        assert_eq!(LinkType::from_code(108).code(), 108);
    }

    #[test]
    fn short_or_unknown_is_not_presented() {
        assert_eq!(
            present(LinkType::LinuxSll, &mut [0; 15], &mut Vec::new()),
            Presented::No
        );
        assert_eq!(
            present(LinkType::Other(147), &mut [0; 64], &mut Vec::new()),
            Presented::No
        );
        assert_eq!(LinkType::from_code(276).code(), 276);
    }
}
