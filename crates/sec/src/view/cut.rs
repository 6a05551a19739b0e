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
use gander_wire::cut_spdu::{spdu_prefix, SpduPrefix};
use gander_wire::ethernet::{self, is_tpid};
use gander_wire::ip::PROTOCOL_UDP;
use gander_wire::ipv6::next_header;
use gander_wire::l2_frame;
use std::net::IpAddr;

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

/// The captured headers of a layer-2 GOOSE or SV frame that the capture cut: what puts it into
/// its publisher's stream (addresses, outer VLAN, APPID) and the captured start of its APDU,
/// for `gander_wire::cut_apdu` to read the leading fields from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutL2<'a> {
    /// Destination MAC.
    pub dst: [u8; 6],
    /// Source MAC.
    pub src: [u8; 6],
    /// The outer VLAN id, if tagged (what `FrameView::outer_vid` gives of a whole frame).
    pub outer_vid: Option<u16>,
    /// The outer tag's priority (PCP), if tagged.
    pub outer_pcp: Option<u8>,
    /// Reserved1, if captured (the simulation bit, and IEC 62351-6's extension length).
    pub reserved1: Option<u16>,
    /// Whether the frame carries an IEC 62351-6 extension, from its headers alone: Length
    /// counts more than the header and the APDU element announce, and Reserved1 announces
    /// exactly that many octets (what `l2_frame::check_extension_len` holds a whole frame to).
    /// `None` when the APDU's header was not captured or the headers disagree.
    pub secured: Option<bool>,
    /// [`Kind::Goose`] or [`Kind::Sv`].
    pub kind: Kind,
    /// APPID.
    pub appid: u16,
    /// The captured octets after Reserved2: the start of the APDU (may be empty).
    pub apdu: &'a [u8],
}

/// Reads [`CutL2`] from the captured start of a frame the capture cut, by the rules of
/// [`classify_cut`]; `None` unless it is GOOSE or SV with its header captured up to APPID.
pub fn cut_l2(frame: &[u8]) -> Option<CutL2<'_>> {
    let (at, ethertype, outer_tci) = ethertype_behind_tags(frame)?;
    let kind = match ethertype {
        ethernet::ETHERTYPE_GOOSE => Kind::Goose,
        ethernet::ETHERTYPE_SV => Kind::Sv,
        _ => return None,
    };
    let header = at + 2;
    let word = |at: usize| -> Option<u16> {
        Some(u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]))
    };
    let appid = word(header)?;
    let (length, reserved1) = (word(header + 2), word(header + 4));
    let apdu = frame.get(header + 8..).unwrap_or(&[]);
    let secured = match (
        length,
        reserved1,
        gander_wire::cut_apdu::announced_len(apdu),
    ) {
        (Some(len), Some(r1), Some(a)) => usize::from(len)
            .checked_sub(l2_frame::HEADER_LEN + a)
            .filter(|&ext| ext == usize::from(r1 & l2_frame::RESERVED1_EXTENSION_LEN))
            .map(|ext| ext > 0),
        _ => None,
    };
    Some(CutL2 {
        dst: frame.get(..6)?.try_into().ok()?,
        src: frame.get(6..12)?.try_into().ok()?,
        outer_vid: outer_tci.map(|t| t & 0x0fff),
        outer_pcp: outer_tci.map(|t| (t >> 13) as u8),
        kind,
        appid,
        reserved1,
        secured,
        apdu,
    })
}

/// Walks the tag stack (at most [`ethernet::MAX_TAGS`] tags, as `classify` does): the offset and
/// value of the EtherType behind it, and the outer tag's TCI if tagged. `None` when the capture
/// cut the frame inside the stack.
fn ethertype_behind_tags(frame: &[u8]) -> Option<(usize, u16, Option<u16>)> {
    let u16_at = |at: usize| -> Option<u16> {
        Some(u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]))
    };
    let mut at = 12;
    let mut outer_tci = None;
    for _ in 0..=ethernet::MAX_TAGS {
        let t = u16_at(at)?;
        if !is_tpid(t) {
            return Some((at, t, outer_tci));
        }
        if outer_tci.is_none() {
            outer_tci = Some(u16_at(at + 2)?);
        }
        at += ethernet::VLAN_TAG_LEN;
    }
    None
}

/// Extension headers walked before giving up (an IPv6 packet with more is [`CutFrame::Unknown`]).
const MAX_EXTENSIONS: usize = 8;

/// Classifies the captured start `frame` (an Ethernet II frame) of a frame the capture cut.
/// Never reads past `frame`; every arbitrary input has an answer.
pub fn classify_cut(frame: &[u8]) -> CutFrame {
    let Some((at, ethertype, _)) = ethertype_behind_tags(frame) else {
        return CutFrame::Unknown;
    };
    match ethertype {
        ethernet::ETHERTYPE_GOOSE => CutFrame::Iec61850(Kind::Goose),
        ethernet::ETHERTYPE_SV => CutFrame::Iec61850(Kind::Sv),
        ethernet::ETHERTYPE_GSE_MANAGEMENT => CutFrame::Iec61850(Kind::GseManagement),
        ethernet::ETHERTYPE_IPV4 | ethernet::ETHERTYPE_IPV6 => {
            match udp_behind_ip(frame, at + 2, ethertype) {
                Ok(u) if is_session_datagram(u.src_port, u.dst_port, u.payload) => {
                    CutFrame::Iec61850(Kind::Session)
                }
                // The payload's first octets could still say `01 40`.
                Ok(u) if u.payload.len() < 2 => CutFrame::Unknown,
                Ok(_) => CutFrame::Other,
                Err(k) => k,
            }
        }
        _ => CutFrame::Other,
    }
}

/// The UDP datagram of a cut frame, as far as captured.
struct CutUdp<'a> {
    src: IpAddr,
    dst: IpAddr,
    src_port: u16,
    dst_port: u16,
    /// The captured octets after the UDP header (may be empty).
    payload: &'a [u8],
}

/// The UDP header behind the IP header at `ip`; `Err` says what the frame is when there is
/// none to read ([`CutFrame::Other`]: not UDP, or not IP; [`CutFrame::Unknown`]: cut before
/// it, or a non-first fragment).
fn udp_behind_ip(frame: &[u8], ip: usize, ethertype: u16) -> Result<CutUdp<'_>, CutFrame> {
    let (src, dst, at) = if ethertype == ethernet::ETHERTYPE_IPV4 {
        ipv4(frame, ip)?
    } else {
        ipv6(frame, ip)?
    };
    let u = frame.get(at..at + 4).ok_or(CutFrame::Unknown)?;
    Ok(CutUdp {
        src,
        dst,
        src_port: u16::from_be_bytes([u[0], u[1]]),
        dst_port: u16::from_be_bytes([u[2], u[3]]),
        payload: frame.get(at + 8..).unwrap_or(&[]),
    })
}

/// IPv4 (RFC 791 §3.1): the addresses and where the UDP header of a first fragment starts.
fn ipv4(frame: &[u8], ip: usize) -> Result<(IpAddr, IpAddr, usize), CutFrame> {
    let h = frame.get(ip..ip + 10).ok_or(CutFrame::Unknown)?;
    let ihl = usize::from(h[0] & 0x0f) * 4;
    if h[0] >> 4 != 4 || ihl < 20 {
        // Not an IPv4 header: classify would refuse it whole; nothing says it is ours.
        return Err(CutFrame::Other);
    }
    if h[9] != PROTOCOL_UDP {
        return Err(CutFrame::Other);
    }
    if u16::from_be_bytes([h[6], h[7]]) & 0x1fff != 0 {
        return Err(CutFrame::Unknown);
    }
    let a = frame.get(ip + 12..ip + 20).ok_or(CutFrame::Unknown)?;
    let v4 = |b: &[u8]| IpAddr::from([b[0], b[1], b[2], b[3]]);
    Ok((v4(&a[..4]), v4(&a[4..]), ip + ihl))
}

/// IPv6 (RFC 8200 §4): the addresses, and the extension headers a sender may put before UDP
/// walked to where the UDP header starts.
fn ipv6(frame: &[u8], ip: usize) -> Result<(IpAddr, IpAddr, usize), CutFrame> {
    let h = frame.get(ip..ip + 40).ok_or(CutFrame::Unknown)?;
    if h[0] >> 4 != 6 {
        return Err(CutFrame::Other);
    }
    let addr = |b: &[u8]| -> IpAddr {
        let mut a = [0u8; 16];
        a.copy_from_slice(b);
        IpAddr::from(a)
    };
    let (src, dst) = (addr(&h[8..24]), addr(&h[24..40]));
    let (mut next, mut at) = (h[6], ip + 40);
    for _ in 0..MAX_EXTENSIONS {
        match next {
            next_header::UDP => return Ok((src, dst, at)),
            next_header::HOP_BY_HOP | next_header::ROUTING | next_header::DEST_OPTS => {
                let e = frame.get(at..at + 2).ok_or(CutFrame::Unknown)?;
                next = e[0];
                at += (usize::from(e[1]) + 1) * 8;
            }
            next_header::FRAGMENT => {
                let e = frame.get(at..at + 8).ok_or(CutFrame::Unknown)?;
                if u16::from_be_bytes([e[2], e[3]]) >> 3 != 0 {
                    return Err(CutFrame::Unknown);
                }
                next = e[0];
                at += 8;
            }
            next_header::AUTH => {
                let e = frame.get(at..at + 2).ok_or(CutFrame::Unknown)?;
                next = e[0];
                at += (usize::from(e[1]) + 2) * 4;
            }
            _ => return Err(CutFrame::Other),
        }
    }
    Err(CutFrame::Unknown)
}

/// The captured headers of an R-GOOSE or R-SV datagram (IEC 61850-90-5 over UDP) that the
/// capture cut: where it travels (what keys its stream, as for a whole one) and what the
/// captured start of its SPDU shows (`gander_wire::cut_spdu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutSession<'a> {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// The outer VLAN id, if tagged.
    pub outer_vid: Option<u16>,
    /// The outer tag's priority (PCP), if tagged.
    pub outer_pcp: Option<u8>,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// [`Kind::RGoose`] or [`Kind::RSv`] (by SI; a tunnelled SPDU is R-GOOSE, as for a whole
    /// one).
    pub kind: Kind,
    /// The session header and first payload element as captured.
    pub spdu: SpduPrefix<'a>,
}

/// Reads [`CutSession`] from the captured start of a frame the capture cut: IPv4 or IPv6 UDP
/// that [`classify_cut`] calls a session, whose SPDU header was captured up to its SI and
/// common header tag and announces R-GOOSE, R-SV or a tunnelled frame. `None` otherwise.
pub fn cut_session(frame: &[u8]) -> Option<CutSession<'_>> {
    let (at, ethertype, outer_tci) = ethertype_behind_tags(frame)?;
    if ethertype != ethernet::ETHERTYPE_IPV4 && ethertype != ethernet::ETHERTYPE_IPV6 {
        return None;
    }
    let u = udp_behind_ip(frame, at + 2, ethertype).ok()?;
    if !is_session_datagram(u.src_port, u.dst_port, u.payload) {
        return None;
    }
    let spdu = spdu_prefix(u.payload)?;
    let kind = Kind::of_spdu(spdu.spdu_id);
    if kind == Kind::Session {
        return None;
    }
    Some(CutSession {
        dst_mac: frame.get(..6)?.try_into().ok()?,
        src_mac: frame.get(6..12)?.try_into().ok()?,
        outer_vid: outer_tci.map(|t| t & 0x0fff),
        outer_pcp: outer_tci.map(|t| (t >> 13) as u8),
        src: u.src,
        dst: u.dst,
        src_port: u.src_port,
        dst_port: u.dst_port,
        kind,
        spdu,
    })
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

    /// A GOOSE frame behind two tags, cut after its APPID and inside its APDU: the addresses,
    /// the outer VLAN (the first tag's, as `FrameView::outer_vid`), APPID and the APDU's
    /// captured start; cut inside APPID, or not GOOSE/SV: nothing.
    #[test]
    fn a_cut_layer2_frame_shows_its_stream_headers() {
        let mut g = eth(0x88b8, 2, &[0x30, 0x01, 0, 20, 0, 0, 0, 0, 0x61, 0x81]);
        g[14] = 0x80; // outer TCI: PCP 4, VID 0x005
        let c = cut_l2(&g).expect("GOOSE");
        assert_eq!(
            (c.kind, c.appid, c.outer_vid),
            (Kind::Goose, 0x3001, Some(5))
        );
        assert_eq!(c.src, [2; 6]);
        assert_eq!(c.dst, [0x01, 0x0c, 0xcd, 1, 0, 1]);
        assert_eq!(c.apdu, &[0x61, 0x81]);
        assert_eq!(cut_l2(&g[..24]).map(|c| c.apdu.len()), Some(0));
        assert_eq!(cut_l2(&g[..23]), None);
        let sv = eth(0x88ba, 0, &[0x40, 0x00]);
        assert_eq!(
            cut_l2(&sv).map(|c| (c.kind, c.appid, c.outer_vid)),
            Some((Kind::Sv, 0x4000, None))
        );
        assert_eq!(cut_l2(&eth(0x88b9, 0, &[0, 1, 0, 8])), None);
        assert_eq!(cut_l2(&ipv4_udp(50000, 102, &[0x01, 0x40])), None);
    }

    /// Secured or not, told from Length, Reserved1 and the APDU's header once those are
    /// captured: a frame protected by `l2::protect` and the same frame unprotected, cut at
    /// every length.
    #[test]
    fn a_cut_frame_shows_whether_it_is_secured() {
        use crate::keystore::{KeyEntry, KeyStore};
        use crate::{default_provider, EncAlgorithm, MacAlgorithm, Profile};
        use gander_wire::ethernet::EthernetRepr;
        use gander_wire::l2_frame::{GooseFrameRepr, L2Frame};
        use gander_wire::Codec;
        let plain = L2Frame {
            eth: EthernetRepr {
                dst: [0x01, 0x0c, 0xcd, 1, 0, 1],
                src: [2; 6],
                vlan: None,
                ethertype: ethernet::ETHERTYPE_GOOSE,
            },
            body: GooseFrameRepr {
                appid: 0x3001,
                reserved1: 0,
                reserved2: 0,
                apdu: gander_wire::goose::GoosePdu {
                    gocb_ref: "IED1LD0/LLN0$GO$gcb1".into(),
                    time_allowed_to_live: 2000,
                    dat_set: "IED1LD0/LLN0$ds1".into(),
                    go_id: None,
                    t: [0; 8],
                    st_num: 1,
                    sq_num: 0,
                    simulation: false,
                    conf_rev: 1,
                    nds_com: false,
                    num_dat_set_entries: 1,
                    all_data: vec![gander_wire::data::Data::Boolean(true)],
                }
                .to_vec(),
                extension: None,
            },
        }
        .to_vec()
        .unwrap();
        let mut store = KeyStore::new();
        store
            .insert(
                KeyEntry::new(
                    1,
                    MacAlgorithm::HmacSha256_128,
                    EncAlgorithm::None,
                    &[7; 32],
                    default_provider(),
                )
                .unwrap(),
            )
            .unwrap();
        let secured = crate::l2::protect(
            Profile::Standard,
            store.require(1).unwrap(),
            &plain,
            &mut crate::spdu::RandomIv,
            1_767_225_600,
        )
        .unwrap();
        // 14 Ethernet + 8 header + the APDU's two header octets.
        for (frame, want) in [(&plain, false), (&secured, true)] {
            for n in 14..frame.len() {
                let got = cut_l2(&frame[..n]).and_then(|c| c.secured);
                assert_eq!(got, (n >= 24).then_some(want), "cut at {n}");
            }
        }
        // Reserved1 announcing another length than Length leaves: not told.
        let mut odd = secured.clone();
        odd[18] ^= 0x01;
        assert_eq!(cut_l2(&odd[..40]).and_then(|c| c.secured), None);
    }

    /// An R-GOOSE datagram cut inside its APDU: addresses, ports, the outer VLAN, the kind by
    /// SI and the SPDU's captured fields; an R-SV one is R-SV; a session-management SPDU, a
    /// datagram cut before its common header tag, or another UDP datagram: nothing.
    #[test]
    fn a_cut_session_shows_its_stream_headers() {
        use gander_wire::spdu::{
            Dialect, PayloadElement, SecurityInfo, SessionHeader, SpduId, SpduPayload, SpduRepr,
        };
        let spdu = |si: SpduId| {
            let header = SessionHeader {
                spdu_id: si,
                spdu_number: 77,
                time_of_current_key: 0,
                time_to_next_key: 0,
                security: SecurityInfo::V1 {
                    enc_code: 0,
                    mac_code: 0,
                    key_id: 0,
                },
            };
            let el = [PayloadElement {
                payload_type: 0x81,
                simulation: 0,
                appid: 0x3001,
                apdu: &[0x61, 0x03, 0x80, 0x01, b'x'],
            }];
            SpduRepr::new(header, SpduPayload::Elements(&el), 0, &Dialect::STANDARD)
                .unwrap()
                .to_vec_with_trailer(&[])
                .unwrap()
        };
        let f = ipv4_udp(50000, 102, &spdu(SpduId::Goose));
        let c = cut_session(&f[..f.len() - 2]).expect("R-GOOSE");
        assert_eq!(c.kind, Kind::RGoose);
        assert_eq!(
            (c.src, c.dst, c.src_port, c.dst_port),
            (
                IpAddr::from([10, 0, 0, 1]),
                IpAddr::from([10, 0, 0, 2]),
                50000,
                102
            )
        );
        assert_eq!((c.src_mac, c.outer_vid), ([2; 6], None));
        assert_eq!(
            (c.spdu.spdu_number, c.spdu.secured),
            (Some(77), Some(false))
        );
        assert_eq!(c.spdu.element.map(|e| e.appid), Some(0x3001));
        let sv = ipv4_udp(50000, 102, &spdu(SpduId::SampledValues));
        assert_eq!(cut_session(&sv).map(|c| c.kind), Some(Kind::RSv));
        let mgmt = ipv4_udp(50000, 102, &spdu(SpduId::Management));
        assert_eq!(cut_session(&mgmt), None);
        assert_eq!(cut_session(&f[..14 + 20 + 8 + 4]), None);
        assert_eq!(cut_session(&ipv4_udp(123, 123, &[0x23; 48])), None);
        let v6 = ipv6_udp(true, 50000, 102, &spdu(SpduId::Goose));
        let c = cut_session(&v6).expect("over IPv6");
        assert_eq!(
            (c.kind, c.dst_port, c.outer_vid),
            (Kind::RGoose, 102, Some(5))
        );
    }

    proptest! {
        /// Any bytes: an answer, never a read past the slice.
        #[test]
        fn any_bytes_have_a_cut_l2_answer(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = cut_l2(&data);
            let _ = cut_session(&data);
        }

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
