//! Ethernet/IPv4/UDP: locate, rebuild and rewrite must produce frames that parse back with
//! the same addresses, ports and payload, and valid checksums; completing an offloaded
//! checksum leaves a UDP frame whose checksum verifies. The IPv4 packet located on its own
//! (`locate_udp4`, as the nfqueue path hands it over) is the packet inside the frame.
#![no_main]
use gander_wire::ip::{
    locate_udp, locate_udp4, rewrite_udp4_payload, rewrite_udp_payload, UdpFrameRepr,
};
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
    }
    if let Ok((repr, payload)) = UdpFrameRepr::parse(data) {
        let payload = &data[payload];
        let out = repr.emit(payload).expect("emit");
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
