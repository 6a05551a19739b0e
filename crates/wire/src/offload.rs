//! Completing a transport checksum that the sender left to the device.
//!
//! With checksum offload, the sending stack writes only the pseudo-header sum into a TCP or
//! UDP checksum field and leaves the rest to the NIC (`CHECKSUM_PARTIAL`, include/linux/skbuff.h).
//! A frame that reaches a packet socket before any device has done that (on a veth pair or a
//! virtio interface whose peer sends with offload on) is marked `TP_STATUS_CSUMNOTREADY`
//! (packet(7)): its checksum field is not yet a checksum. A bridge that copies such a frame
//! must do the device's work, as the kernel's own forwarding does (`skb_checksum_help`,
//! net/core/dev.c): compute the checksum over the pseudo-header and the segment and write it.
//!
//! Only IPv4 and IPv6 (without extension headers) carrying TCP or UDP are completed; anything
//! else is left as it is and reported as not completed.

use crate::ethernet::{Frame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use crate::ip::{ones_complement_sum, PROTOCOL_UDP};

/// IP protocol number of TCP (RFC 9293).
const PROTOCOL_TCP: u8 = 6;

/// Where a transport segment lies in a frame, and what its pseudo-header sums to.
struct Segment {
    start: usize,
    end: usize,
    protocol: u8,
    pseudo: u32,
}

fn segment(frame: &[u8]) -> Option<Segment> {
    let eth = Frame::new_checked(frame).ok()?;
    let ip = eth.payload_offset();
    let ip_bytes = frame.get(ip..)?;
    match eth.ethertype() {
        ETHERTYPE_IPV4 => {
            let ihl = usize::from(*ip_bytes.first()? & 0x0f) * 4;
            let total = usize::from(u16::from_be_bytes([*ip_bytes.get(2)?, *ip_bytes.get(3)?]));
            let flags_frag = u16::from_be_bytes([*ip_bytes.get(6)?, *ip_bytes.get(7)?]);
            if ip_bytes[0] >> 4 != 4 || ihl < 20 || total < ihl || total > ip_bytes.len() {
                return None;
            }
            // A fragment's checksum covers the whole datagram: not ours to complete.
            if flags_frag & 0x3fff != 0 {
                return None;
            }
            let protocol = ip_bytes[9];
            let len = total - ihl;
            let mut pseudo = ones_complement_sum(0, &ip_bytes[12..20]);
            pseudo += u32::from(protocol) + len as u32;
            Some(Segment {
                start: ip + ihl,
                end: ip + total,
                protocol,
                pseudo,
            })
        }
        ETHERTYPE_IPV6 => {
            if ip_bytes.len() < 40 || ip_bytes[0] >> 4 != 6 {
                return None;
            }
            let len = usize::from(u16::from_be_bytes([ip_bytes[4], ip_bytes[5]]));
            if 40 + len > ip_bytes.len() {
                return None;
            }
            let protocol = ip_bytes[6];
            let mut pseudo = ones_complement_sum(0, &ip_bytes[8..40]);
            pseudo += u32::from(protocol) + len as u32;
            Some(Segment {
                start: ip + 40,
                end: ip + 40 + len,
                protocol,
                pseudo,
            })
        }
        _ => None,
    }
}

/// Writes the right TCP or UDP checksum into `frame` (whatever its checksum field held);
/// `false`, with the frame untouched, when it is not IPv4/IPv6 TCP or UDP as described above,
/// or too short for its own lengths.
pub fn complete_transport_checksum(frame: &mut [u8]) -> bool {
    let Some(s) = segment(frame) else {
        return false;
    };
    let field = match s.protocol {
        PROTOCOL_UDP => 6,
        PROTOCOL_TCP => 16,
        _ => return false,
    };
    if s.end - s.start < field + 2 {
        return false;
    }
    let at = s.start + field;
    frame[at..at + 2].fill(0);
    let sum = ones_complement_sum(s.pseudo, &frame[s.start..s.end]);
    let c = match !(sum as u16) {
        // A computed zero is sent as all ones in UDP (RFC 768; over IPv6 zero means none).
        0 if s.protocol == PROTOCOL_UDP => 0xffff,
        c => c,
    };
    frame[at..at + 2].copy_from_slice(&c.to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ethernet::EthernetRepr;
    use crate::ip::{locate_udp, UdpFrameRepr};
    use proptest::prelude::*;

    proptest! {
        /// A UDP frame whose checksum field holds anything (a pseudo-header sum, as offload
        /// leaves it, or noise) comes out with the checksum the frame builder computes.
        #[test]
        fn completes_udp_over_ipv4(sa: [u8; 4], da: [u8; 4], junk: u16,
                                   payload in proptest::collection::vec(any::<u8>(), 0..200)) {
            let repr = UdpFrameRepr {
                eth: EthernetRepr { dst: [2; 6], src: [4; 6], vlan: None, ethertype: ETHERTYPE_IPV4 },
                src_addr: sa, dst_addr: da, src_port: 102, dst_port: 102, ttl: 64, tos: 0,
                identification: 1,
            };
            let good = repr.to_vec(&payload).unwrap();
            let mut f = good.clone();
            f[40..42].copy_from_slice(&junk.to_be_bytes());
            prop_assert!(complete_transport_checksum(&mut f));
            prop_assert_eq!(&f, &good);
            prop_assert!(locate_udp(&f).unwrap().udp_checksum_ok);
        }

        /// Never panics, and never touches what it does not complete.
        #[test]
        fn arbitrary_frames(mut f in proptest::collection::vec(any::<u8>(), 0..120), v6: bool) {
            if f.len() > 15 {
                f[12] = if v6 { 0x86 } else { 0x08 };
                f[13] = if v6 { 0xdd } else { 0x00 };
            }
            let before = f.clone();
            if !complete_transport_checksum(&mut f) {
                prop_assert_eq!(f, before);
            }
        }
    }

    #[test]
    fn tcp_over_ipv6_sums_to_all_ones() {
        let mut f = vec![0u8; 14 + 40 + 24];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        f[14] = 0x60;
        f[18..20].copy_from_slice(&24u16.to_be_bytes());
        f[20] = PROTOCOL_TCP;
        f[22..38].copy_from_slice(&[0xfd; 16]);
        f[38..54].copy_from_slice(&[0xfe; 16]);
        f[54 + 12] = 0x60; // data offset
        f[54 + 16] = 0x12; // a pseudo-header sum left by offload
        assert!(complete_transport_checksum(&mut f));
        // Checking: the sum over pseudo-header and segment, checksum included, is all ones.
        let mut acc = ones_complement_sum(0, &f[22..54]);
        acc += u32::from(PROTOCOL_TCP) + 24;
        assert_eq!(ones_complement_sum(acc, &f[54..]), 0xffff);
        // ICMP is not completed.
        f[20] = 58;
        let before = f.clone();
        assert!(!complete_transport_checksum(&mut f));
        assert_eq!(f, before);
    }
}
