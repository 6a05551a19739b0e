//! Ethernet -> layer-2 GOOSE/SV header -> GOOSE APDU -> IEC 62351-6 extension; every layer
//! that parses must emit bytes that parse back to the same representation.
#![no_main]
use gander_wire::ethernet::{Frame, ETHERTYPE_VLAN};
use gander_wire::goose::GoosePdu;
use gander_wire::l2_frame::L2Frame;
use gander_wire::l2_frame_repr::L2FrameRepr;
use gander_wire::l2_extension::SecurityExtension;
use gander_wire::Codec;
use libfuzzer_sys::fuzz_target;

fn check_apdu(apdu: &[u8]) {
    if let Ok((pdu, ranges)) = GoosePdu::parse_with_ranges(apdu) {
        assert!(ranges.st_num.end <= apdu.len() && ranges.sq_num.end <= apdu.len());
        let out = pdu.to_vec();
        assert_eq!(out.len(), pdu.buffer_len());
        assert_eq!(GoosePdu::parse(&out).expect("re-parse GOOSE APDU"), pdu);
    }
}

fn check_extension(ext: &[u8]) {
    if let Ok((e, layout)) = SecurityExtension::parse_with_layout(ext) {
        assert!(layout.auth_value.end <= layout.mac.start && layout.mac.end <= ext.len());
        let out = e.to_vec();
        assert_eq!(out.len(), e.buffer_len());
        let (again, l2) = SecurityExtension::parse_with_layout(&out).expect("re-parse extension");
        assert_eq!(again, e);
        assert_eq!(l2, e.layout());
    }
}

fuzz_target!(|data: &[u8]| {
    // Also try the raw bytes as an APDU and as an extension, so those parsers are reached
    // without a valid frame around them.
    check_apdu(data);
    check_extension(data);
    // The borrowed parse accepts exactly what the owned one accepts.
    assert_eq!(L2FrameRepr::parse(data).is_ok(), L2Frame::parse(data).is_ok());
    if let Ok((frame, layout)) = L2Frame::parse(data) {
        assert!(layout.end <= data.len());
        let out = frame.to_vec().expect("emit");
        // The body always round-trips; the header too when `EthernetRepr` can hold it
        // (untagged or one 802.1Q tag: a deeper stack is re-emitted as its outer tag only).
        let out_ethertype = out.len() - (layout.end - layout.ethertype_offset);
        assert_eq!(&out[out_ethertype..], &data[layout.ethertype_offset..layout.end]);
        let eth = Frame::new_unchecked(data);
        if eth.tag_count() == 0 || (eth.tag_count() == 1 && eth.tag(0).map(|t| t.tpid) == Some(ETHERTYPE_VLAN)) {
            assert_eq!(&out[..], &data[..layout.end]);
        }
        let (again, _) = L2Frame::parse(&out).expect("re-parse frame");
        assert_eq!(again, frame);
        // The borrowed parse reads the same frame, and writes the same octets.
        let (borrowed, at) = L2FrameRepr::parse(data).expect("borrowed parse of what parsed");
        assert_eq!(at, layout);
        assert_eq!(borrowed, frame.as_repr());
        assert_eq!(borrowed.to_vec().expect("emit"), out);
        check_apdu(&frame.body.apdu);
        if let Some(ext) = &frame.body.extension {
            check_extension(ext);
        }
    }
});
