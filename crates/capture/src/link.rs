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
    /// Any other link type (its code): packets are numbered and passed on, not presented as
    /// Ethernet.
    Other(u32),
}

impl LinkType {
    /// The link type of a LINKTYPE_ code.
    pub fn from_code(code: u32) -> LinkType {
        match code {
            1 => LinkType::Ethernet,
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
            LinkType::Ethernet => 1,
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
            scratch.clear();
            scratch.extend_from_slice(&[0; 12]);
            scratch.extend_from_slice(&ethertype.to_be_bytes());
            scratch.extend_from_slice(data);
            Presented::Scratch
        }
        _ => Presented::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
