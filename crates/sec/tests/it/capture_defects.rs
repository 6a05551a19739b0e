//! The defects real captures showed in `frame verify` (issue #21), on frames built here:
//! KeyID 0 with a trailer is unsecured; non-IEC frames with checksums left to the NIC are not
//! IEC 61850 failures; an IEC frame with a bad checksum still is.

use gander_sec::frame::{CaptureVerifier, Kind, Outcome};
use gander_sec::spdu::unsecured_header;
use gander_sec::view::{self, Content};
use gander_sec::{KeyStore, Profile, SecError};
use gander_wire::ethernet::{EthernetRepr, ETHERTYPE_IPV4};
use gander_wire::goose::GoosePdu;
use gander_wire::ip::UdpFrameRepr;
use gander_wire::spdu::{PayloadElement, SpduId, SpduPayload, SpduRepr};
use gander_wire::Codec;

fn goose_apdu() -> Vec<u8> {
    GoosePdu {
        gocb_ref: "PIGO/LLN0$GO$gocb0".into(),
        time_allowed_to_live: 10000,
        dat_set: "PIGO/LLN0$dsGOOSE0".into(),
        go_id: Some("PIGO/LLN0$GO$gocb0".into()),
        t: [0; 8],
        st_num: 1,
        sq_num: 192,
        simulation: false,
        conf_rev: 1,
        nds_com: false,
        num_dat_set_entries: 1,
        all_data: vec![gander_wire::data::Data::Boolean(false)],
    }
    .to_vec()
}

/// An unsecured R-GOOSE SPDU (standard profile) followed by `trailer`.
fn rgoose_spdu(trailer: &[u8]) -> Vec<u8> {
    let apdu = goose_apdu();
    let el = PayloadElement {
        payload_type: SpduId::Goose.payload_type(),
        simulation: 0,
        appid: 0x3001,
        apdu: &apdu,
    };
    let h = unsecured_header(Profile::Standard, SpduId::Goose, 191);
    SpduRepr::new(
        h,
        SpduPayload::Elements(&[el]),
        trailer.len(),
        &Profile::Standard.dialect(),
    )
    .unwrap()
    .to_vec_with_trailer(trailer)
    .unwrap()
}

fn udp_frame(src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
    UdpFrameRepr {
        eth: EthernetRepr {
            dst: [0x01, 0x00, 0x5e, 0x00, 0x00, 0xfc],
            src: [0x00, 0x15, 0x5d, 0x01, 0x02, 0x03],
            ethertype: ETHERTYPE_IPV4,
            vlan: None,
        },
        src_addr: [192, 168, 10, 66],
        dst_addr: [224, 0, 0, 252],
        src_port,
        dst_port,
        ttl: 1,
        tos: 0,
        identification: 7,
    }
    .to_vec(payload)
    .unwrap()
}

/// robidev/iec61850-dissector test/RGOOSE2.pcap: 146 R-GOOSE SPDUs with KeyID 0 end with one
/// `00` octet after the payload; `frame verify` said "unknown key id 0" though KeyID 0 means
/// unsecured (docs/keys.md).
#[test]
fn key_id_0_with_padding_or_an_empty_signature_is_unsecured() {
    let store = KeyStore::new();
    for trailer in [&[][..], &[0], &[0, 0, 0], &[0x85, 0], &[0, 0x85, 0]] {
        let f = udp_frame(39162, 102, &rgoose_spdu(trailer));
        let v = view::classify(Profile::Standard, &f).unwrap();
        assert!(!v.secured(), "{trailer:02x?}");
        let mut cv = CaptureVerifier::new(Profile::Standard, &store);
        let verdict = cv.verify_at(&f, 0, 0);
        assert_eq!(verdict.outcome, Outcome::Unsecured, "{trailer:02x?}");
        assert_eq!(verdict.kind, Kind::RGoose);
    }
    // A signature with KeyID 0 is not "unsecured": it claims security no key can give.
    let f = udp_frame(39162, 102, &rgoose_spdu(&[0x85, 2, 0xaa, 0xbb]));
    assert!(view::classify(Profile::Standard, &f).unwrap().secured());
    let mut cv = CaptureVerifier::new(Profile::Standard, &store);
    assert!(matches!(cv.verify_at(&f, 0, 0).outcome, Outcome::Failed(_)));
}

fn break_udp_checksum(f: &mut [u8]) {
    // UDP checksum field: Ethernet 14 + IPv4 20 + 6.
    f[40] ^= 0x5a;
}

/// robidev/iec61850-dissector test/RGOOSE2.pcap: 554 LLMNR (UDP 5355), NBNS (UDP 137) and IGMP
/// frames captured on the sending host carry checksums the NIC had not yet filled in; they
/// were R-GOOSE "bad-checksum" failures and made `verify` exit 1.
#[test]
fn non_iec_frames_with_offloaded_checksums_are_other_traffic() {
    let store = KeyStore::new();
    let mut llmnr = udp_frame(
        55123,
        5355,
        b"\x12\x34\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00",
    );
    break_udp_checksum(&mut llmnr);
    let mut nbns = udp_frame(137, 137, &[0x80; 50]);
    break_udp_checksum(&mut nbns);
    // IGMPv2 membership report with a zero IPv4 header checksum (offloaded).
    let mut igmp = udp_frame(1, 1, &[]);
    igmp[14 + 9] = 2;
    igmp[14 + 10..14 + 12].fill(0);
    for f in [&llmnr, &nbns, &igmp] {
        let v = view::classify(Profile::Standard, f).unwrap();
        assert!(matches!(v.content, Content::Other));
        let mut cv = CaptureVerifier::new(Profile::Standard, &store);
        assert_eq!(cv.verify_at(f, 0, 0).outcome, Outcome::Skipped);
    }
}

#[test]
fn an_iec_frame_with_a_bad_checksum_still_fails() {
    let mut f = udp_frame(39162, 102, &rgoose_spdu(&[]));
    break_udp_checksum(&mut f);
    assert_eq!(
        view::classify(Profile::Standard, &f).unwrap_err(),
        SecError::BadChecksum("UDP")
    );
    let store = KeyStore::new();
    let mut cv = CaptureVerifier::new(Profile::Standard, &store);
    let v = cv.verify_at(&f, 0, 0);
    assert_eq!(v.kind, Kind::RGoose);
    assert!(matches!(
        v.outcome,
        Outcome::Failed(SecError::BadChecksum(_))
    ));
}

/// A non-IEC IP frame that does not even parse (a truncated TCP segment) is other traffic, not
/// an R-GOOSE failure; a truncated datagram to port 102 is still an IEC failure.
#[test]
fn unparseable_ip_frames_fail_only_when_they_are_sessions() {
    let store = KeyStore::new();
    let mut f = udp_frame(40000, 80, &[0; 40]);
    f.truncate(f.len() - 20);
    let mut cv = CaptureVerifier::new(Profile::Standard, &store);
    let v = cv.verify_at(&f, 0, 0);
    assert_eq!((v.kind, v.outcome), (Kind::Other, Outcome::Skipped));
    let mut g = udp_frame(39162, 102, &rgoose_spdu(&[]));
    g.truncate(g.len() - 20);
    let v = cv.verify_at(&g, 0, 0);
    assert_eq!(v.kind, Kind::RGoose);
    assert!(matches!(v.outcome, Outcome::Failed(_)));
}
