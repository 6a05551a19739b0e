//! What the captured start of a frame that the capture cut shows (a snap length: `tcpdump -s`,
//! `editcap -s`; the pcap record's `incl_len` below its `orig_len`).
//!
//! [`classify`](super::classify) must not read such a frame: its IP, UDP or APDU lengths run
//! past the captured octets, so it would be `malformed`, and a GOOSE frame cut by the capture
//! is not a malformed frame on the wire. But whoever handles it must still know whether it is
//! IEC 61850 traffic: `frame protect` copies other traffic unchanged and refuses to pass an
//! unprotected GOOSE frame off as protected; `audit` says how many publisher frames it could
//! not judge. [`classify_cut`] answers from the headers alone, by the rules of
//! [`classify`](super::classify): the EtherType behind the tag stack (GOOSE 0x88B8, SV 0x88BA,
//! GSE management 0x88B9: IEC 61850-8-1 Annex C, IEC 61850-9-2 §5.3), and for IPv4/IPv6 UDP
//! the ports (102) or the first payload octets (`01 40`, IEC 61850-90-5 §11.3).

use super::{is_session_datagram, Kind};
use gander_wire::ethernet::{self, is_tpid};
use gander_wire::ip::PROTOCOL_UDP;
use gander_wire::ipv6::next_header;

/// What the captured octets of a cut frame say it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutFrame {
    /// IEC 61850 traffic of this kind ([`Kind::Session`] for a UDP datagram to or from port
    /// 102 or starting `01 40`: which SPDU it holds may be past the cut).
    Iec61850(Kind),
    /// Traffic that is not IEC 61850 (another EtherType, IP protocol or UDP port).
    Other,
    /// The capture cut the frame before the octets that would tell (inside the tag stack, the
    /// IP header, or a non-first fragment's missing UDP header).
    Unknown,
}

/// Extension headers walked before giving up (an IPv6 packet with more is [`CutFrame::Unknown`]).
const MAX_EXTENSIONS: usize = 8;

/// Classifies the captured start `frame` (an Ethernet II frame) of a frame the capture cut.
/// Never reads past `frame`; every arbitrary input has an answer.
pub fn classify_cut(frame: &[u8]) -> CutFrame {
    let u16_at = |at: usize| -> Option<u16> {
        Some(u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]))
    };
    let mut at = 12;
    let mut ethertype = None;
    for _ in 0..=ethernet::MAX_TAGS {
        let Some(t) = u16_at(at) else {
            return CutFrame::Unknown;
        };
        if is_tpid(t) {
            at += ethernet::VLAN_TAG_LEN;
        } else {
            ethertype = Some(t);
            break;
        }
    }
    let Some(ethertype) = ethertype else {
        return CutFrame::Unknown;
    };
    let ip = at + 2;
    match ethertype {
        ethernet::ETHERTYPE_GOOSE => CutFrame::Iec61850(Kind::Goose),
        ethernet::ETHERTYPE_SV => CutFrame::Iec61850(Kind::Sv),
        ethernet::ETHERTYPE_GSE_MANAGEMENT => CutFrame::Iec61850(Kind::GseManagement),
        ethernet::ETHERTYPE_IPV4 => ipv4(frame, ip),
        ethernet::ETHERTYPE_IPV6 => ipv6(frame, ip),
        _ => CutFrame::Other,
    }
}

/// IPv4 (RFC 791 §3.1): protocol, then the UDP header of a first fragment.
fn ipv4(frame: &[u8], ip: usize) -> CutFrame {
    let Some(h) = frame.get(ip..ip + 10) else {
        return CutFrame::Unknown;
    };
    let ihl = usize::from(h[0] & 0x0f) * 4;
    if h[0] >> 4 != 4 || ihl < 20 {
        // Not an IPv4 header: classify would refuse it whole; nothing says it is ours.
        return CutFrame::Other;
    }
    if h[9] != PROTOCOL_UDP {
        return CutFrame::Other;
    }
    let offset = u16::from_be_bytes([h[6], h[7]]) & 0x1fff;
    if offset != 0 {
        return CutFrame::Unknown;
    }
    udp(frame, ip + ihl)
}

/// IPv6 (RFC 8200 §4): the extension headers a sender may put before UDP, walked.
fn ipv6(frame: &[u8], ip: usize) -> CutFrame {
    let Some(h) = frame.get(ip..ip + 40) else {
        return CutFrame::Unknown;
    };
    if h[0] >> 4 != 6 {
        return CutFrame::Other;
    }
    let (mut next, mut at) = (h[6], ip + 40);
    for _ in 0..MAX_EXTENSIONS {
        match next {
            next_header::UDP => return udp(frame, at),
            next_header::HOP_BY_HOP | next_header::ROUTING | next_header::DEST_OPTS => {
                let Some(e) = frame.get(at..at + 2) else {
                    return CutFrame::Unknown;
                };
                next = e[0];
                at += (usize::from(e[1]) + 1) * 8;
            }
            next_header::FRAGMENT => {
                let Some(e) = frame.get(at..at + 8) else {
                    return CutFrame::Unknown;
                };
                if u16::from_be_bytes([e[2], e[3]]) >> 3 != 0 {
                    return CutFrame::Unknown;
                }
                next = e[0];
                at += 8;
            }
            next_header::AUTH => {
                let Some(e) = frame.get(at..at + 2) else {
                    return CutFrame::Unknown;
                };
                next = e[0];
                at += (usize::from(e[1]) + 2) * 4;
            }
            _ => return CutFrame::Other,
        }
    }
    CutFrame::Unknown
}

/// A UDP header at `at`: ports, and the payload's first two octets when they were captured.
fn udp(frame: &[u8], at: usize) -> CutFrame {
    let Some(u) = frame.get(at..at + 4) else {
        return CutFrame::Unknown;
    };
    let (sp, dp) = (
        u16::from_be_bytes([u[0], u[1]]),
        u16::from_be_bytes([u[2], u[3]]),
    );
    let payload = frame.get(at + 8..).unwrap_or(&[]);
    if is_session_datagram(sp, dp, payload) {
        CutFrame::Iec61850(Kind::Session)
    } else if payload.len() >= 2 {
        CutFrame::Other
    } else {
        CutFrame::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn eth(ethertype: u16, tags: usize, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0x01, 0x0c, 0xcd, 1, 0, 1, 2, 2, 2, 2, 2, 2];
        for _ in 0..tags {
            f.extend([0x81, 0x00, 0x80, 0x05]);
        }
        f.extend(ethertype.to_be_bytes());
        f.extend(payload);
        f
    }

    fn ipv4_udp(sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
        let mut ip = vec![
            0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let total = (20 + 8 + payload.len()) as u16;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip.extend(sp.to_be_bytes());
        ip.extend(dp.to_be_bytes());
        ip.extend(((8 + payload.len()) as u16).to_be_bytes());
        ip.extend([0, 0]);
        ip.extend(payload);
        eth(0x0800, 0, &ip)
    }

    fn ipv6_udp(ext: bool, sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
        let mut ip = vec![0x60, 0, 0, 0, 0, 0, if ext { 0 } else { 17 }, 64];
        ip.extend([0; 32]);
        if ext {
            ip.extend([17, 0, 1, 4, 0, 0, 0, 0]);
        }
        ip.extend(sp.to_be_bytes());
        ip.extend(dp.to_be_bytes());
        ip.extend([0, 0, 0, 0]);
        ip.extend(payload);
        eth(0x86dd, 1, &ip)
    }

    /// The field test's snap-length copies: an NTP frame cut at 64 octets is other traffic; a
    /// GOOSE or SV frame cut right after its EtherType is still IEC 61850; an R-GOOSE datagram
    /// to port 102, or from another port starting `01 40`, is a session.
    #[test]
    fn what_the_captured_headers_say() {
        let ntp = ipv4_udp(123, 123, &[0x23; 48]);
        assert_eq!(classify_cut(&ntp[..64]), CutFrame::Other);
        assert_eq!(
            classify_cut(&eth(0x88b8, 2, &[])),
            CutFrame::Iec61850(Kind::Goose)
        );
        assert_eq!(
            classify_cut(&eth(0x88ba, 0, &[0x40])),
            CutFrame::Iec61850(Kind::Sv)
        );
        assert_eq!(
            classify_cut(&eth(0x88b9, 0, &[])),
            CutFrame::Iec61850(Kind::GseManagement)
        );
        let rgoose = ipv4_udp(50000, 102, &[0x01, 0x40, 0xa1]);
        assert_eq!(
            classify_cut(&rgoose[..42]),
            CutFrame::Iec61850(Kind::Session)
        );
        let cltp = ipv4_udp(50000, 50001, &[0x01, 0x40, 0xa1]);
        assert_eq!(classify_cut(&cltp), CutFrame::Iec61850(Kind::Session));
        // Ports not 102 and the payload's first octets not captured: cannot tell.
        assert_eq!(classify_cut(&cltp[..43]), CutFrame::Unknown);
        // Cut inside the IP header, or inside the tag stack.
        assert_eq!(classify_cut(&ntp[..20]), CutFrame::Unknown);
        assert_eq!(classify_cut(&eth(0x88b8, 1, &[])[..15]), CutFrame::Unknown);
        // TCP (MMS) is not what classify calls IEC 61850 multicast either.
        let mut tcp = ntp.clone();
        tcp[14 + 9] = 6;
        assert_eq!(classify_cut(&tcp), CutFrame::Other);
        // A non-first IPv4 fragment carries no UDP header.
        let mut frag = rgoose.clone();
        frag[14 + 7] = 0x10;
        assert_eq!(classify_cut(&frag), CutFrame::Unknown);
        // IPv6, behind a VLAN tag, directly and behind a hop-by-hop header.
        for ext in [false, true] {
            let r = ipv6_udp(ext, 50000, 102, &[]);
            assert_eq!(classify_cut(&r), CutFrame::Iec61850(Kind::Session), "{ext}");
            let d = ipv6_udp(ext, 53, 53, &[0, 0]);
            assert_eq!(classify_cut(&d), CutFrame::Other, "{ext}");
            assert_eq!(classify_cut(&d[..d.len() - 8]), CutFrame::Unknown, "{ext}");
        }
    }

    proptest! {
        /// Any prefix of a GOOSE frame long enough to hold its EtherType is GOOSE, however many
        /// tags it has; any prefix of an NTP datagram that holds its UDP header and two payload
        /// octets is other traffic.
        #[test]
        fn prefixes_keep_their_kind(tags in 0usize..4, body in proptest::collection::vec(any::<u8>(), 0..64), cut in 0usize..200) {
            let g = eth(0x88b8, tags, &body);
            let at = 14 + 4 * tags;
            let n = cut.min(g.len());
            let k = classify_cut(&g[..n]);
            if n >= at {
                prop_assert_eq!(k, CutFrame::Iec61850(Kind::Goose));
            } else {
                prop_assert_eq!(k, CutFrame::Unknown);
            }
            let ntp = ipv4_udp(123, 123, &[0x23; 48]);
            let n = cut.min(ntp.len());
            let k = classify_cut(&ntp[..n]);
            prop_assert_eq!(k == CutFrame::Other, n >= 44, "{:?} at {}", k, n);
        }

        /// Any bytes have an answer (no panic, no read past the slice).
        #[test]
        fn any_bytes_are_classified(data in proptest::collection::vec(any::<u8>(), 0..128)) {
            let _ = classify_cut(&data);
        }
    }
}
