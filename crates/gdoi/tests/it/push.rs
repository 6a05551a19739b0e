//! GROUPKEY-PUSH (RFC 6407 4): a push signed by the key server (ECDSA P-256, P-384, RSA-2048)
//! and encrypted under the KEK is accepted once, with its new IEC 61850 TEK and the Delete of
//! the old one; a replayed or older SEQ, another signer, another KEK and any changed octet are
//! refused, and a refused push changes nothing.

use gander_gdoi::pull::group_keys;
use gander_gdoi::push::{build, Kek, PushError, PushReceiver};
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::gdoi::{kd_attr, kd_type, tek_protocol};
use gander_wire::isakmp::iec61850::{encode_oid, oid, tek_attr};
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::sa::doi;
use gander_wire::isakmp::{
    Attribute, DeletePayload, IdPayload, Iec61850Tek, KeyDownload, KeyPacket, Payload,
    SaAttrPayload, SaBody, SaPayload, SaTek, Traffic,
};
use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private, Public};
use openssl::rsa::Rsa;
use proptest::prelude::*;
use zeroize::Zeroizing;

fn ec(nid: Nid) -> PKey<Private> {
    PKey::from_ec_key(EcKey::generate(&EcGroup::from_curve_name(nid).unwrap()).unwrap()).unwrap()
}

fn public(k: &PKey<Private>) -> PKey<Public> {
    PKey::public_key_from_der(&k.public_key_to_der().unwrap()).unwrap()
}

fn kek() -> Kek {
    Kek {
        spi: [0x4b; 16],
        key: Zeroizing::new(vec![0x33; 32]),
    }
}

/// The rekey of the GOOSE group: Key ID 7 withdrawn, Key ID 8 with a new HMAC key.
fn rekey_body() -> Vec<Payload> {
    let tek = Iec61850Tek {
        oid: encode_oid(oid::GOOSE).unwrap(),
        traffic: Some(Traffic::L2 {
            mac: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
            appid: 1,
        }),
        spi: 8,
        auth_alg: gander_wire::isakmp::iec61850_alg::auth::HMAC_SHA256_128,
        conf_alg: gander_wire::isakmp::iec61850_alg::conf::NONE,
        lifetime_secs: 3600,
        attributes: vec![Attribute::basic(tek_attr::SA_ATD, 2)],
    };
    vec![
        Payload::Delete(DeletePayload {
            doi: doi::GDOI,
            protocol: tek_protocol::IEC61850,
            spi_size: 4,
            spis: vec![7u32.to_be_bytes().to_vec()],
        }),
        Payload::Sa(SaPayload {
            doi: doi::GDOI,
            situation: 0,
            body: SaBody::Gdoi(vec![SaAttrPayload::Tek(SaTek::Iec61850(tek))]),
        }),
        Payload::Kd(KeyDownload {
            packets: vec![KeyPacket {
                kd_type: kd_type::TEK,
                spi: 8u32.to_be_bytes().to_vec(),
                attributes: vec![Attribute::variable(
                    kd_attr::TEK_INTEGRITY_KEY,
                    vec![0x99; 32],
                )],
            }],
        }),
    ]
}

#[test]
fn signed_push_accepted_once_for_each_key_type() {
    for key in [
        ec(Nid::X9_62_PRIME256V1),
        ec(Nid::SECP384R1),
        PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap(),
    ] {
        let mut rx = PushReceiver::new(kek(), public(&key), 41);
        let msg = build(&kek(), &key, 42, rekey_body()).unwrap();
        let r = rx.receive(&msg).unwrap();
        assert_eq!((r.seq, rx.last_seq()), (42, 42));
        assert_eq!(r.payloads, rekey_body());
        let (Payload::Sa(sa), Payload::Kd(kd)) = (&r.payloads[1], &r.payloads[2]) else {
            panic!()
        };
        let g = group_keys(
            IdPayload {
                id_type: id_type::KEY_ID,
                protocol: 0,
                port: 0,
                data: b"goose-1".to_vec(),
            },
            sa,
            kd,
            Some(r.seq),
        )
        .unwrap();
        assert_eq!(g.teks[0].key_id, 8);
        assert_eq!(g.teks[0].activation_delay_secs, Some(2));
        // Replay, and an older SEQ signed by the genuine key.
        let e = rx.receive(&msg).unwrap_err();
        assert_eq!(e, PushError::Replay { got: 42, last: 42 });
        assert_eq!(e.notify(), notify_type::INVALID_MESSAGE_ID);
        assert!(matches!(
            rx.receive(&build(&kek(), &key, 40, rekey_body()).unwrap()),
            Err(PushError::Replay { .. })
        ));
    }
}

#[test]
fn other_signer_and_other_kek_refused() {
    let key = ec(Nid::X9_62_PRIME256V1);
    let mut rx = PushReceiver::new(kek(), public(&key), 0);
    let forged = build(&kek(), &ec(Nid::X9_62_PRIME256V1), 5, rekey_body()).unwrap();
    assert_eq!(rx.receive(&forged).unwrap_err(), PushError::BadSignature);
    let other = Kek {
        spi: [0x4c; 16],
        key: Zeroizing::new(vec![0x33; 32]),
    };
    assert_eq!(
        rx.receive(&build(&other, &key, 5, rekey_body()).unwrap())
            .unwrap_err(),
        PushError::NotOurs
    );
    assert_eq!(rx.last_seq(), 0);
    assert_eq!(
        rx.receive(&build(&kek(), &key, 5, rekey_body()).unwrap())
            .unwrap()
            .seq,
        5
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_changed_octet_refused_without_state_change(at: prop::sample::Index, x in 1u8..=255) {
        let key = ec(Nid::X9_62_PRIME256V1);
        let mut rx = PushReceiver::new(kek(), public(&key), 10);
        let msg = build(&kek(), &key, 11, rekey_body()).unwrap();
        let mut bad = msg.clone();
        let j = at.index(bad.len());
        bad[j] ^= x;
        prop_assert!(rx.receive(&bad).is_err());
        prop_assert_eq!(rx.last_seq(), 10);
        prop_assert_eq!(rx.receive(&msg).unwrap().seq, 11);
    }
}
