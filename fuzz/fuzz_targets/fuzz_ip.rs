//! Ethernet/IPv4/UDP: locate, rebuild and rewrite must produce frames that parse back with
//! the same addresses, ports and payload, and valid checksums; completing an offloaded
//! checksum leaves a UDP frame whose checksum verifies. The IPv4 packet located on its own
//! (`locate_udp4`, as the nfqueue path hands it over) is the packet inside the frame. The
//! frame encoders (`Udp4Frame`, `Udp6Frame`, `LocatedUdp`) write what their parsers read back.
#![no_main]
use gander_wire::ip::{
    locate_udp, locate_udp4, rewrite_udp4_payload, rewrite_udp_payload, Udp4Frame, UdpFrameRepr,
};
use gander_wire::ipv6::Udp6Frame;
use gander_wire::udp_rewrite::LocatedUdp;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(framed) = locate_udp(data) {
        let bare = locate_udp4(&data[framed.ip_offset..], 0).expect("the packet inside a frame");
        assert_eq!(bare.udp_offset + framed.ip_offset, framed.udp_offset);
        let out = rewrite_udp4_payload(&data[framed.ip_offset..], 0, bare.udp_offset, b"x")
            .expect("rewrite");
        let again = locate_udp4(&out, 0).expect("locate rewritten packet");
        assert!(again.ip_checksum_ok && again.udp_checksum_ok && again.end == out.len());
    }
    let _ = locate_udp4(data, 0);
    let mut completed = data.to_vec();
    if gander_wire::offload::complete_transport_checksum(&mut completed) {
        if let Ok(loc) = locate_udp(&completed) {
            assert!(loc.udp_checksum_ok);
        }
    }
    // IPv6: extension-header walk and UDP rewrite round trip.
    if let Ok(gander_wire::ipv6::Ipv6Payload::Udp(loc)) = gander_wire::ipv6::locate(data, 14) {
        let out = gander_wire::ipv6::rewrite_udp_payload(data, &loc, &data[loc.payload.clone()]).expect("rewrite");
        assert!(matches!(gander_wire::ipv6::locate(&out, 14), Ok(gander_wire::ipv6::Ipv6Payload::Udp(l)) if l.udp_checksum_ok));
        // Into a buffer of exactly `buffer_len`: the same frame; one octet short: an error.
        let h = LocatedUdp::v6(data, &loc).expect("located");
        let r = h.with_payload(b"shorter");
        let mut buf = vec![0; r.buffer_len()];
        assert_eq!(r.emit(&mut buf).expect("emit"), buf.len());
        assert_eq!(buf, r.to_vec().expect("to_vec"));
        assert!(r.emit(&mut buf[1..]).is_err());
    }
    if let Ok(f) = Udp6Frame::parse(data) {
        let out = f.to_vec().expect("emit");
        assert_eq!(Udp6Frame::parse(&out).expect("re-parse"), f);
    }
    if let Ok(f) = Udp4Frame::parse(data) {
        let mut buf = vec![0; f.buffer_len()];
        f.emit(&mut buf).expect("emit");
        assert_eq!(Udp4Frame::parse(&buf).expect("re-parse"), f);
        assert!(f.emit(&mut buf[1..]).is_err());
    }
    if let Ok((repr, payload)) = UdpFrameRepr::parse(data) {
        let payload = &data[payload];
        let out = repr.to_vec(payload).expect("emit");
        let (again, range) = UdpFrameRepr::parse(&out).expect("re-parse");
        assert_eq!(again, repr);
        assert_eq!(&out[range], payload);

        let shorter = &payload[..payload.len() / 2];
        let rewritten = rewrite_udp_payload(data, shorter).expect("rewrite");
        let loc = locate_udp(&rewritten).expect("locate rewritten");
        assert_eq!(&rewritten[loc.payload.clone()], shorter);
        assert!(loc.ip_checksum_ok && loc.udp_checksum_ok);
        assert_eq!((loc.src_port, loc.dst_port), (repr.src_port, repr.dst_port));
    }
});
