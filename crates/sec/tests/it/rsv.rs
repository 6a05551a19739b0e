//! R-SV: sampled values (IEC 61850-9-2 savPdu) in an IEC 61850-90-5 session with SI 0xA2, secured
//! and verified like R-GOOSE; the decrypted element decodes back to the same savPdu.

use gander_sec::frame::{CaptureVerifier, Kind, Outcome};
use gander_sec::spdu::{protect, verify, Checked, RandomIv, SendParams};
use gander_sec::{default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile};
use gander_wire::ethernet::{EthernetRepr, ETHERTYPE_IPV4};
use gander_wire::ip::UdpFrameRepr;
use gander_wire::spdu::{PayloadElement, SpduId};
use gander_wire::sv::{Asdu, SavPdu};
use gander_wire::Codec;

fn sav() -> SavPdu {
    SavPdu {
        security: None,
        asdus: vec![Asdu {
            sv_id: "MU01".into(),
            dat_set: None,
            smp_cnt: 3999,
            conf_rev: 1,
            refr_tm: None,
            smp_synch: 2,
            smp_rate: None,
            sample: (0..64).collect(),
            smp_mod: None,
            gm_identity: None,
        }],
    }
}

#[test]
fn rsv_round_trips_under_every_v2_profile() {
    let apdu = sav().to_vec();
    let el = PayloadElement {
        payload_type: SpduId::SampledValues.payload_type(),
        simulation: 0,
        appid: 0x4000,
        apdu: &apdu,
    };
    for profile in [Profile::Standard, Profile::Libiec61850] {
        let mut s = KeyStore::new();
        s.insert(
            KeyEntry::new(
                2,
                MacAlgorithm::HmacSha256_128,
                EncAlgorithm::Aes256Gcm,
                &[9; 32],
                default_provider(),
            )
            .unwrap(),
        )
        .unwrap();
        let mut spdu = Vec::new();
        let params = SendParams {
            spdu_id: SpduId::SampledValues,
            spdu_number: 5,
            now: 0,
        };
        protect(
            profile,
            s.require(2).unwrap(),
            params,
            &[el],
            &mut RandomIv,
            &mut spdu,
        )
        .unwrap();
        let Checked::Verified(v) = verify(profile, &s, &spdu, 0).unwrap() else {
            panic!()
        };
        let els = v.elements().unwrap();
        assert_eq!(SavPdu::parse(els[0].apdu).unwrap(), sav());

        // The same SPDU inside an Ethernet/IPv4/UDP frame is recognised as R-SV.
        let frame = UdpFrameRepr {
            eth: EthernetRepr {
                dst: [1, 0x0c, 0xcd, 4, 0, 1],
                src: [2, 0, 0, 0, 0, 1],
                vlan: None,
                ethertype: ETHERTYPE_IPV4,
            },
            src_addr: [127, 0, 0, 1],
            dst_addr: [127, 0, 0, 2],
            src_port: 40000,
            dst_port: 102,
            ttl: 64,
            tos: 0,
            identification: 1,
        }
        .to_vec(&spdu)
        .unwrap();
        let mut cv = CaptureVerifier::new(profile, &s);
        let verdict = cv.verify(&frame, 0);
        assert_eq!(
            (verdict.kind, verdict.outcome.clone()),
            (Kind::RSv, Outcome::Verified)
        );
        assert_eq!(verdict.appid, Some(0x4000));
        // Replaying it is caught.
        assert!(matches!(
            cv.verify(&frame, 0).outcome,
            Outcome::Failed(gander_sec::SecError::Replay { .. })
        ));
    }
}
