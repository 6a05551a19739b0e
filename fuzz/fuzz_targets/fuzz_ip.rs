//! Ethernet/IPv4/UDP: locate, rebuild and rewrite must produce frames that parse back with
//! the same addresses, ports and payload, and valid checksums; completing an offloaded
//! checksum leaves a UDP frame whose checksum verifies.
#![no_main]
use gander_wire::ip::{locate_udp, rewrite_udp_payload, UdpFrameRepr};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = locate_udp(data);
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
