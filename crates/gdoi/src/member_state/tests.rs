//! The member's rules with chosen times: renewal before the lifetime ends, failover to the
//! second key server, the two policies when no key server answers, pushes that rekey and
//! pushes that are refused without a change.

use super::*;
use crate::net::kdc::GroupPolicy;
use crate::push::{build, Kek};
use gander_sec::default_provider;
use gander_wire::isakmp::gdoi::tek_protocol;
use gander_wire::isakmp::iec61850::oid;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::sa::doi;
use gander_wire::isakmp::{DeletePayload, Traffic};
use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private, Public};
use zeroize::Zeroizing;

fn group_id() -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: b"goose-1".to_vec(),
    }
}

fn policy(key_id: u32, lifetime: u64, atd: u64, kda: u64) -> GroupPolicy {
    GroupPolicy {
        id: b"goose-1".to_vec(),
        oid: oid::GOOSE.into(),
        traffic: Traffic::L2 {
            mac: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
            appid: 1,
        },
        mac_code: 2,
        enc_code: 0,
        lifetime_secs: lifetime,
        activation_delay_secs: atd,
        overlap_secs: kda,
        key_id,
        key: Zeroizing::new(vec![key_id as u8; 32]),
    }
}

fn keys(key_id: u32, lifetime: u64, atd: u64, kda: u64) -> GroupKeys {
    let g = policy(key_id, lifetime, atd, kda).grant().unwrap();
    group_keys(group_id(), &g.sa, &g.kd, None).unwrap()
}

fn member(servers: usize, p: FailPolicy) -> MemberState {
    MemberState::new(
        group_id(),
        servers,
        p,
        MemberTiming {
            renew_before: 10,
            retry_after: 3,
        },
    )
}

fn signer() -> PKey<Private> {
    PKey::from_ec_key(
        EcKey::generate(&EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap()).unwrap(),
    )
    .unwrap()
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

fn rekey(new_id: u32, delete: Option<u32>) -> Vec<Payload> {
    let g = policy(new_id, 100, 2, 5).grant().unwrap();
    let mut body = Vec::new();
    if let Some(d) = delete {
        body.push(Payload::Delete(DeletePayload {
            doi: doi::GDOI,
            protocol: tek_protocol::IEC61850,
            spi_size: 4,
            spis: vec![d.to_be_bytes().to_vec()],
        }));
    }
    body.push(Payload::Sa(g.sa));
    body.push(Payload::Kd(g.kd));
    body
}

#[test]
fn first_registration_is_due_at_once_then_before_the_lifetime_ends() {
    let mut m = member(1, FailPolicy::KeepUntilExpiry);
    assert!(m.registration_due(0));
    m.on_registered(&keys(7, 100, 2, 5), 1000);
    // Valid from 1002, lifetime ends 1102, renew 10 s before.
    assert_eq!(m.next_registration(), 1092);
    assert!(!m.registration_due(1091));
    assert!(m.registration_due(1092));
    assert_eq!(m.key_ids(), vec![7]);
    let e = m.key_entries(default_provider()).unwrap();
    // Accepted from receipt, protected with from activation.
    assert_eq!(e[0].not_before, Some(1000));
    assert_eq!(e[0].not_after, Some(1107));
    assert_eq!(m.activations(), vec![(7, 1002)]);
    assert_eq!(m.key_age(1010), Some(10));
    assert_eq!(m.counters().registrations, 1);
    assert_eq!(m.counters().rekeys, 0);
}

#[test]
fn the_same_key_again_keeps_its_window_and_is_not_asked_for_in_a_loop() {
    let mut m = member(1, FailPolicy::KeepUntilExpiry);
    m.on_registered(&keys(7, 100, 2, 5), 1000);
    m.on_registered(&keys(7, 100, 2, 5), 1095);
    assert_eq!(m.keys()[0].received, 1000);
    assert_eq!(m.counters().rekeys, 0);
    // Renewal time passed, but not sooner than retry_after after the last registration.
    assert_eq!(m.next_registration(), 1098);
}

#[test]
fn a_new_key_by_registration_counts_as_a_rekey_and_both_are_held() {
    let mut m = member(1, FailPolicy::KeepUntilExpiry);
    m.on_registered(&keys(7, 100, 2, 5), 1000);
    m.on_registered(&keys(8, 100, 2, 5), 1092);
    assert_eq!(m.counters().rekeys, 1);
    assert_eq!(m.key_ids(), vec![7, 8]);
    // Key 7 ends at 1107 (lifetime + overlap), key 8 starts at 1094: the overlap covers it.
    assert!(!m.expire(1106));
    assert!(m.expire(1107));
    assert_eq!(m.key_ids(), vec![8]);
}

#[test]
fn failover_goes_to_the_second_server_with_an_event() {
    let mut m = member(2, FailPolicy::KeepUntilExpiry);
    assert_eq!(m.server(), 0);
    m.on_server_failed("no answer", 10);
    assert_eq!(m.server(), 1);
    // Still due: the second server is asked at once.
    assert!(m.registration_due(10));
    let ev = m.take_events();
    assert!(
        ev.contains(&MemberEvent::Failover { from: 0, to: 1 }),
        "{ev:?}"
    );
    m.on_registered(&keys(7, 100, 0, 0), 11);
    assert_eq!(m.counters().failovers, 1);
    assert_eq!(m.counters().registration_failures, 1);
    assert!(matches!(
        m.take_events()[0],
        MemberEvent::Registered { server: 1, .. }
    ));
}

#[test]
fn keep_until_expiry_holds_the_key_through_its_overlap_with_an_event_per_round() {
    let mut m = member(2, FailPolicy::KeepUntilExpiry);
    m.on_registered(&keys(7, 100, 0, 20), 1000);
    m.take_events();
    // Both servers gone at renewal time.
    m.on_server_failed("no answer", 1090);
    m.on_server_failed("no answer", 1090);
    let ev = m.take_events();
    assert!(
        ev.iter()
            .any(|e| matches!(e, MemberEvent::NoServer { holding, .. } if holding == &vec![7])),
        "{ev:?}"
    );
    assert_eq!(m.next_registration(), 1093);
    // Past the lifetime, inside the overlap: still held.
    assert!(!m.expire(1110));
    assert_eq!(m.key_ids(), vec![7]);
    assert!(m.expire(1120));
    assert!(m.key_ids().is_empty());
    assert!(m.take_events().contains(&MemberEvent::Expired {
        key_id: 7,
        fail_closed: false
    }));
}

#[test]
fn fail_closed_withdraws_a_key_without_successor_at_its_lifetime_end() {
    let mut m = member(2, FailPolicy::FailClosed);
    m.on_registered(&keys(7, 100, 0, 20), 1000);
    let e = m.key_entries(default_provider()).unwrap();
    // Without a successor the entry itself ends at the lifetime: never used in the overlap.
    assert_eq!(e[0].not_after, Some(1100));
    m.on_server_failed("no answer", 1090);
    m.on_server_failed("no answer", 1090);
    assert!(!m.expire(1099));
    assert!(m.expire(1100));
    assert!(m.key_ids().is_empty());
    assert!(m.take_events().contains(&MemberEvent::Expired {
        key_id: 7,
        fail_closed: true
    }));
}

#[test]
fn fail_closed_keeps_the_overlap_when_a_successor_exists() {
    let mut m = member(1, FailPolicy::FailClosed);
    m.on_registered(&keys(7, 100, 0, 20), 1000);
    m.on_registered(&keys(8, 100, 0, 20), 1090);
    let e = m.key_entries(default_provider()).unwrap();
    let k7 = e.iter().find(|k| k.id == 7).unwrap();
    assert_eq!(k7.not_after, Some(1120));
}

#[test]
fn a_push_rekeys_and_deletes_and_a_replay_or_forgery_changes_nothing() {
    let mut m = member(1, FailPolicy::KeepUntilExpiry);
    m.on_registered(&keys(7, 100, 0, 5), 1000);
    let s = signer();
    let push = build(&kek(), &s, 2, rekey(8, None)).unwrap();
    // No KEK yet: refused, counted.
    assert!(matches!(
        m.on_push(&push, 1001),
        Err(MemberStateError::NoKek)
    ));
    m.set_push_receiver(PushReceiver::new(kek(), public(&s), 1));
    assert_eq!(m.on_push(&push, 1001).unwrap(), vec![8]);
    assert_eq!(m.key_ids(), vec![7, 8]);
    assert_eq!(m.counters().rekeys, 1);
    assert_eq!(m.counters().pushes, 1);
    // Replay.
    assert!(m.on_push(&push, 1002).is_err());
    // Another signer.
    let forged = build(&kek(), &signer(), 3, rekey(9, Some(8))).unwrap();
    assert!(m.on_push(&forged, 1002).is_err());
    assert_eq!(m.key_ids(), vec![7, 8]);
    assert_eq!(m.counters().pushes_refused, 3);
    // A genuine Delete of key 7 with key 9.
    let del = build(&kek(), &s, 3, rekey(9, Some(7))).unwrap();
    assert_eq!(m.on_push(&del, 1003).unwrap(), vec![9]);
    assert_eq!(m.key_ids(), vec![8, 9]);
}

#[test]
fn a_push_with_a_broken_policy_changes_nothing() {
    let mut m = member(1, FailPolicy::KeepUntilExpiry);
    m.on_registered(&keys(7, 100, 0, 5), 1000);
    let s = signer();
    m.set_push_receiver(PushReceiver::new(kek(), public(&s), 0));
    let mut body = rekey(8, Some(7));
    // The KD without the TEK's key packet.
    if let Some(Payload::Kd(kd)) = body.last_mut() {
        kd.packets.clear();
    }
    let p = build(&kek(), &s, 1, body).unwrap();
    assert!(m.on_push(&p, 1001).is_err());
    assert_eq!(m.key_ids(), vec![7]);
}

mod prop {
    use super::*;
    use gander_wire::isakmp::header::{exchange, flags};
    use gander_wire::isakmp::{Header, HEADER_LEN};
    use gander_wire::Codec;
    use proptest::prelude::*;

    /// Arbitrary payload chains under the member's KEK behind a valid push header.
    fn wrapped(first: u8, body: &[u8]) -> Vec<u8> {
        let k = kek();
        let iv = [7u8; 16];
        let ct = crate::keys::encrypt(&k.key, &iv, body).unwrap();
        let mut ci = [0u8; 8];
        let mut cr = [0u8; 8];
        ci.copy_from_slice(&k.spi[..8]);
        cr.copy_from_slice(&k.spi[8..]);
        let h = Header {
            initiator_cookie: ci,
            responder_cookie: cr,
            next_payload: first,
            major_version: 1,
            minor_version: 0,
            exchange: exchange::GROUPKEY_PUSH,
            flags: flags::ENCRYPTION,
            message_id: 0,
            length: (HEADER_LEN + 16 + ct.len()) as u32,
        };
        let mut out = h.to_vec();
        out.extend_from_slice(&iv);
        out.extend(ct);
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn a_refused_push_changes_nothing(
            first in prop_oneof![Just(6u8), Just(13), Just(12), Just(1), any::<u8>()],
            body in proptest::collection::vec(any::<u8>(), 0..200),
            raw in any::<bool>(),
        ) {
            let mut m = member(2, FailPolicy::FailClosed);
            m.on_registered(&keys(7, 100, 0, 5), 1000);
            m.set_push_receiver(PushReceiver::new(kek(), public(&signer()), 0));
            let d = if raw { body.clone() } else { wrapped(first, &body) };
            let before = (m.key_ids(), m.counters().pushes);
            prop_assert!(m.on_push(&d, 1001).is_err());
            prop_assert_eq!((m.key_ids(), m.counters().pushes), before);
        }
    }
}
