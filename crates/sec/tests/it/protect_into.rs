//! `frame::protect_view_into` writes the secured frame into a buffer the caller reuses (the
//! gateway's packet threads keep one across frames): whatever the buffer held before, longer or
//! shorter, the output is byte for byte what `protect_view` writes into a fresh one, for
//! layer-2 GOOSE (IEC 62351-6 extension) and R-GOOSE (IEC 61850-90-5 SPDU), MAC and AEAD keys;
//! and a frame that is not IEC 61850 traffic leaves the buffer untouched.

use gander_sec::frame::{protect_view, protect_view_into};
use gander_sec::spdu::{unsecured_header, IvSource};
use gander_sec::view;
use gander_sec::{default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile};
use gander_wire::ethernet::{EthernetRepr, ETHERTYPE_GOOSE, ETHERTYPE_IPV4};
use gander_wire::goose::GoosePdu;
use gander_wire::ip::UdpFrameRepr;
use gander_wire::l2_frame::{GooseFrameRepr, L2Frame};
use gander_wire::spdu::{PayloadElement, SpduId, SpduPayload, SpduRepr};
use gander_wire::Codec;
use proptest::prelude::*;

/// IVs counted from a seed, so two calls given the same seed write the same bytes.
struct CountingIv(u64);
impl IvSource for CountingIv {
    fn next_iv(&mut self) -> [u8; 12] {
        self.0 += 1;
        let mut iv = [0u8; 12];
        iv[4..].copy_from_slice(&self.0.to_be_bytes());
        iv
    }
}

fn goose_apdu(sq_num: u32, entries: usize) -> Vec<u8> {
    GoosePdu {
        gocb_ref: "IED1LD0/LLN0$GO$gcb1".into(),
        time_allowed_to_live: 2000,
        dat_set: "IED1LD0/LLN0$ds1".into(),
        go_id: Some("gcb1".into()),
        t: [0; 8],
        st_num: 1,
        sq_num,
        simulation: false,
        conf_rev: 1,
        nds_com: false,
        num_dat_set_entries: entries as u32,
        all_data: vec![gander_wire::data::Data::Boolean(true); entries],
    }
    .to_vec()
}

fn eth(ethertype: u16) -> EthernetRepr {
    EthernetRepr {
        dst: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
        src: [0x02, 0, 0, 0, 0, 0x01],
        vlan: None,
        ethertype,
    }
}

fn l2_goose(sq_num: u32, entries: usize) -> Vec<u8> {
    L2Frame {
        eth: eth(ETHERTYPE_GOOSE),
        body: GooseFrameRepr {
            appid: 0x10,
            reserved1: 0,
            reserved2: 0,
            apdu: goose_apdu(sq_num, entries),
            extension: None,
        },
    }
    .to_vec()
    .unwrap()
}

fn rgoose(sq_num: u32, entries: usize) -> Vec<u8> {
    let apdu = goose_apdu(sq_num, entries);
    let el = PayloadElement {
        payload_type: SpduId::Goose.payload_type(),
        simulation: 0,
        appid: 0x10,
        apdu: &apdu,
    };
    let spdu = SpduRepr::new(
        unsecured_header(Profile::Standard, SpduId::Goose, sq_num),
        SpduPayload::Elements(&[el]),
        0,
        &Profile::Standard.dialect(),
    )
    .unwrap()
    .to_vec_with_trailer(&[])
    .unwrap();
    UdpFrameRepr {
        eth: eth(ETHERTYPE_IPV4),
        src_addr: [10, 85, 0, 1],
        dst_addr: [10, 85, 0, 2],
        src_port: 102,
        dst_port: 102,
        ttl: 64,
        tos: 0,
        identification: 1,
    }
    .to_vec(&spdu)
    .unwrap()
}

fn store() -> KeyStore {
    let mut s = KeyStore::new();
    let keys = [
        (1, MacAlgorithm::HmacSha256_128, EncAlgorithm::None),
        (2, MacAlgorithm::AesGmac128, EncAlgorithm::None),
        (3, MacAlgorithm::None, EncAlgorithm::Aes128Gcm),
    ];
    for (id, mac, enc) in keys {
        s.insert(KeyEntry::new(id, mac, enc, &[7u8; 16], default_provider()).unwrap())
            .unwrap();
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_reused_buffer_gets_what_a_fresh_one_gets(
        layer2 in any::<bool>(),
        key_id in 1u32..=3,
        sq_num in any::<u32>(),
        entries in 1usize..40,
        before in proptest::collection::vec(any::<u8>(), 0..1200),
        seed in any::<u64>(),
    ) {
        // Layer 2 carries a MAC or signature, not encryption (IEC 62351-6).
        let key_id = if layer2 && key_id == 3 { 1 } else { key_id };
        let s = store();
        let key = s.get(key_id).unwrap();
        let frame = if layer2 { l2_goose(sq_num, entries) } else { rgoose(sq_num, entries) };
        let v = view::classify(Profile::Standard, &frame).unwrap();
        let fresh = protect_view(Profile::Standard, key, &v, &mut CountingIv(seed), 0)
            .unwrap()
            .unwrap();
        let mut out = before;
        let wrote =
            protect_view_into(Profile::Standard, key, &v, &mut CountingIv(seed), 0, &mut out);
        prop_assert_eq!(wrote, Ok(true));
        prop_assert_eq!(out, fresh);
    }
}

#[test]
fn traffic_that_is_not_iec_61850_leaves_the_buffer_alone() {
    let mut frame = rgoose(1, 1);
    // Port 102 on neither side and no `01 40` session start: ordinary UDP.
    frame[34..38].copy_from_slice(&[0x30, 0x39, 0x30, 0x39]);
    frame[42] = 0;
    let v = view::classify(Profile::Standard, &frame).unwrap();
    let s = store();
    let mut out = vec![0xaa; 17];
    let wrote = protect_view_into(
        Profile::Standard,
        s.get(1).unwrap(),
        &v,
        &mut CountingIv(0),
        0,
        &mut out,
    );
    assert_eq!(wrote, Ok(false));
    assert_eq!(out, vec![0xaa; 17]);
}
