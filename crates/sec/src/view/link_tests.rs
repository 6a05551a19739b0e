//! The three ways into the one classification agree: a whole Ethernet frame ([`classify`]),
//! the IP packet inside it ([`classify_ip`]) and the UDP payload with its addresses
//! ([`classify_datagram`]) give the same kind, security and session, and a payload rewritten
//! through any of them is the same datagram.

use super::*;
use gander_wire::ethernet::EthernetRepr;
use gander_wire::ip::UdpFrameRepr;
use gander_wire::spdu::{SpduPayload, SpduRepr};
use std::net::SocketAddr;

/// An unsecured R-GOOSE SPDU with one GOOSE element (IEC 61850-90-5 §11.3).
fn spdu(appid: u16) -> Vec<u8> {
    let profile = Profile::Standard;
    let header = spdu::unsecured_header(profile, SpduId::Goose, 7);
    let trailer = spdu::unsigned_trailer(profile);
    let apdu = [0x61u8, 0x03, 0x80, 0x01, 0x41];
    let el = PayloadElement {
        payload_type: SpduId::Goose.payload_type(),
        simulation: 0,
        appid,
        apdu: &apdu,
    };
    SpduRepr::new(
        header,
        SpduPayload::Elements(&[el]),
        trailer.len(),
        &profile.dialect(),
    )
    .unwrap()
    .to_vec_with_trailer(trailer)
    .unwrap()
}

fn v4_frame(payload: &[u8], src_port: u16, dst_port: u16) -> Vec<u8> {
    UdpFrameRepr {
        eth: EthernetRepr {
            dst: [1, 0, 0x5e, 0, 0, 1],
            src: [2, 0, 0, 0, 0, 1],
            vlan: None,
            ethertype: ethernet::ETHERTYPE_IPV4,
        },
        src_addr: [10, 0, 0, 1],
        dst_addr: [239, 0, 0, 1],
        src_port,
        dst_port,
        ttl: 64,
        tos: 0,
        identification: 9,
    }
    .to_vec(payload)
    .unwrap()
}

fn v6_frame(payload: &[u8]) -> Vec<u8> {
    let eth = EthernetRepr {
        dst: [0x33, 0x33, 0, 0, 1, 2],
        src: [2, 0, 0, 0, 0, 1],
        vlan: None,
        ethertype: ethernet::ETHERTYPE_IPV6,
    };
    let mut src = [0u8; 16];
    src[0] = 0xfd;
    src[15] = 1;
    let mut dst = [0u8; 16];
    dst[0] = 0xff;
    dst[1] = 0x05;
    dst[15] = 2;
    ipv6::Udp6FrameRepr {
        eth,
        src_addr: src,
        dst_addr: dst,
        src_port: 102,
        dst_port: 102,
        traffic_class: 0,
        hop_limit: 64,
    }
    .to_vec(payload)
    .unwrap()
}

/// Ports and payload of a session's datagram.
type Datagram = (u16, u16, Vec<u8>);

fn summary(v: &FrameView<'_>) -> (Kind, bool, Option<Datagram>) {
    let udp = match &v.content {
        Content::Session(s) => Some((
            s.udp.src_port,
            s.udp.dst_port,
            v.frame[s.udp.payload.clone()].to_vec(),
        )),
        _ => None,
    };
    (v.kind(), v.secured(), udp)
}

#[test]
fn an_ip_packet_classifies_as_the_frame_around_it() {
    for f in [
        v4_frame(&spdu(0x1000), 102, 102),
        v6_frame(&spdu(0x1000)),
        v4_frame(b"not a session", 5353, 5353),
    ] {
        let framed = classify(Profile::Standard, &f).unwrap();
        let bare = classify_ip(Profile::Standard, &f[14..]).unwrap();
        assert_eq!(summary(&framed), summary(&bare));
        assert_eq!(bare.link, Link::Ip);
        assert_eq!(framed.src_mac(), Some([2, 0, 0, 0, 0, 1]));
        assert_eq!(bare.src_mac(), None);
        assert_eq!(bare.tag(0), None);
        assert!(bare.header().is_empty());
    }
}

#[test]
fn a_datagram_classifies_as_the_frame_around_it() {
    let p = spdu(0x1000);
    let framed_v4 = v4_frame(&p, 102, 102);
    let src: SocketAddr = "10.0.0.1:102".parse().unwrap();
    let dst: SocketAddr = "239.0.0.1:102".parse().unwrap();
    let bare = classify_datagram(Profile::Standard, src, dst, &p).unwrap();
    let framed = classify(Profile::Standard, &framed_v4).unwrap();
    assert_eq!(summary(&framed), summary(&bare));
    let (Content::Session(a), Content::Session(b)) = (&framed.content, &bare.content) else {
        panic!("not sessions");
    };
    assert_eq!(a.udp.ip, b.udp.ip);
    // A new payload goes back in each view's own framing, and is the same datagram.
    let new = spdu(0x2000);
    let f2 = a.udp.rewrite_payload(framed.frame, &new).unwrap();
    let b2 = b.udp.rewrite_payload(bare.frame, &new).unwrap();
    assert_eq!(b2, new);
    assert_eq!(f2, v4_frame(&new, 102, 102));
    // Sized as the IP packet it would be on the wire.
    assert_eq!(bare.link_payload_len(&b2), f2.len() - 14);
    assert_eq!(framed.link_payload_len(&f2), f2.len() - 14);
    // Another port and no `01 40`: not a session, as in a frame.
    let other: SocketAddr = "239.0.0.1:5353".parse().unwrap();
    let from: SocketAddr = "10.0.0.1:5353".parse().unwrap();
    let v = classify_datagram(Profile::Standard, from, other, b"mdns").unwrap();
    assert_eq!(v.kind(), Kind::Other);
    // Mixed families are refused, not guessed.
    let v6: SocketAddr = "[fd00::1]:102".parse().unwrap();
    assert!(classify_datagram(Profile::Standard, v6, dst, &p).is_err());
}

#[test]
fn an_ip_packet_has_no_padding_and_a_known_version() {
    let f = v4_frame(&spdu(0x1000), 102, 102);
    let mut padded = f[14..].to_vec();
    padded.extend_from_slice(&[0, 0]);
    assert!(matches!(
        classify_ip(Profile::Standard, &padded),
        Err(SecError::Malformed(
            gander_wire::Error::TrailingBytes { .. }
        ))
    ));
    let mut v5 = f[14..].to_vec();
    v5[0] = 0x55;
    assert!(classify_ip(Profile::Standard, &v5).is_err());
    assert!(classify_ip(Profile::Standard, &[]).is_err());
    // The IPv4 header is checked as in a frame.
    let mut bad = f[14..].to_vec();
    bad[10] ^= 1;
    assert_eq!(
        classify_ip(Profile::Standard, &bad),
        Err(SecError::BadChecksum("IPv4 header"))
    );
}

/// The EtherType an IP packet's version nibble names (what a netfilter queue's packet would
/// have had on the wire).
fn in_ethernet(packet: &[u8]) -> Vec<u8> {
    let ethertype = match packet.first().map(|b| b >> 4) {
        Some(6) => [0x86, 0xdd],
        _ => [0x08, 0x00],
    };
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&ethertype);
    f.extend_from_slice(packet);
    f
}

proptest::proptest! {
    /// On any bytes (valid packets damaged anywhere, or noise), `classify_ip` accepts only
    /// what `classify` accepts in an Ethernet frame, with the same kind, security and
    /// datagram; when `classify` refuses, so does `classify_ip`.
    #[test]
    fn classify_ip_agrees_with_classify(which in 0usize..3, at: usize, byte: u8, cut in 0usize..4,
                                        noise: Vec<u8>) {
        let base = match which {
            0 => v4_frame(&spdu(0x1000), 102, 102)[14..].to_vec(),
            1 => v6_frame(&spdu(0x1000))[14..].to_vec(),
            _ => noise,
        };
        let mut p = base;
        if !p.is_empty() {
            let i = at % p.len();
            p[i] = byte;
            p.truncate(p.len() - cut.min(p.len()));
        }
        let framed = in_ethernet(&p);
        match (classify_ip(Profile::Standard, &p), classify(Profile::Standard, &framed)) {
            (Ok(b), Ok(f)) => proptest::prop_assert_eq!(summary(&b), summary(&f)),
            (Ok(_), Err(e)) => proptest::prop_assert!(false, "only classify_ip accepted: {e}"),
            // Ethernet padding is allowed in a frame, not after an IP packet on its own.
            (Err(_), Ok(_)) | (Err(_), Err(_)) => {}
        }
    }
}
