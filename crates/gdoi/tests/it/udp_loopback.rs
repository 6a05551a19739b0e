//! The key server and two members over UDP on loopback: each member runs main mode and
//! GROUPKEY-PULL against `Kdc`, installs the TEK it receives into a `gander_sec` key store;
//! member 1 protects a layer-2 GOOSE frame with it and member 2 verifies that frame. A member
//! outside the group's policy, and one with the wrong pre-shared key, get no key.

use crate::kdc_thread::{self, Server};
use gander_gdoi::install::key_entry;
use gander_gdoi::net::kdc::{GroupPolicy, Kdc, KdcEvent, KdcPolicy, MemberPolicy};
use gander_gdoi::net::member::{register, MemberConfig, MemberError};
use gander_sec::l2::{self, CheckedGoose};
use gander_sec::spdu::RandomIv;
use gander_sec::{default_provider, KeyStore, Profile};
use gander_wire::isakmp::iec61850::oid;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdPayload, Traffic};
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;
use zeroize::Zeroizing;

const MAC: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];

fn id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

fn member(identity: &str, addr: [u8; 4], psk: &[u8], groups: &[&str]) -> MemberPolicy {
    MemberPolicy {
        identity: identity.as_bytes().to_vec(),
        psk: Zeroizing::new(psk.to_vec()),
        address: addr.into(),
        groups: groups.iter().map(|g| g.as_bytes().to_vec()).collect(),
        cert: None,
        push: None,
    }
}

fn policy() -> KdcPolicy {
    KdcPolicy {
        identity: id("kdc"),
        members: vec![
            member("ied-1", [127, 0, 0, 1], b"psk-one", &["goose-1"]),
            member("ied-2", [127, 0, 0, 2], b"psk-two", &["goose-1"]),
            member("ied-3", [127, 0, 0, 3], b"psk-three", &[]),
        ],
        groups: vec![GroupPolicy {
            id: b"goose-1".to_vec(),
            oid: oid::GOOSE.to_string(),
            traffic: Traffic::L2 {
                mac: MAC,
                appid: 0x0001,
            },
            mac_code: 2, // HMAC-SHA256-128
            enc_code: 0,
            lifetime_secs: 3600,
            activation_delay_secs: 0,
            overlap_secs: 60,
            key_id: 0x1001,
            key: Zeroizing::new(vec![0x5c; 32]),
        }],
    }
}

fn serve() -> Server {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let kdc = Kdc::new(sock, policy());
    kdc_thread::spawn(kdc, Duration::from_millis(50))
}

fn cfg(server: SocketAddr, me: [u8; 4], identity: &str, psk: &[u8]) -> MemberConfig {
    MemberConfig {
        server,
        bind: Some(SocketAddr::from((me, 0))),
        psk: psk.to_vec(),
        identity: id(identity),
        group: id("goose-1"),
        timeout: Duration::from_millis(300),
        tries: 3,
    }
}

#[test]
fn two_members_share_a_goose_key_over_udp() {
    let s = serve();
    let now = 1_700_000_000;
    let k1 = register(&cfg(s.addr, [127, 0, 0, 1], "ied-1", b"psk-one")).unwrap();
    let k2 = register(&cfg(s.addr, [127, 0, 0, 2], "ied-2", b"psk-two")).unwrap();
    assert_eq!(k1.teks[0].key_id, 0x1001);
    assert_eq!(k1.teks[0].traffic, Some(Traffic::L2 { mac: MAC, appid: 1 }));
    let e1 = key_entry(&k1.teks[0], default_provider(), now).unwrap();
    let mut store = KeyStore::new();
    store
        .insert(key_entry(&k2.teks[0], default_provider(), now).unwrap())
        .unwrap();
    let frame = gander_testkit::frames::goose_frame([2, 0, 0, 0, 0, 1], MAC, None, 0x0001, 1, 1);
    let secured = l2::protect(Profile::Standard, &e1, &frame, &mut RandomIv, now).unwrap();
    let checked = l2::verify(Profile::Standard, &store, &secured, now).unwrap();
    assert!(matches!(checked, CheckedGoose::Verified(_)));
    let mut bad = secured.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert!(l2::verify(Profile::Standard, &store, &bad, now).is_err());
    // The key server records the event after it sent the last message: under load the member
    // can get there first, so wait for it (bounded).
    let registered = |ev: &[KdcEvent]| {
        ev.iter()
            .filter(|e| matches!(e, KdcEvent::Registered { .. }))
            .count()
    };
    let t = std::time::Instant::now();
    while registered(&s.events.lock().unwrap()) < 2 && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let ev = s.events.lock().unwrap().clone();
    assert_eq!(
        ev.iter()
            .filter(|e| matches!(e, KdcEvent::Registered { .. }))
            .count(),
        2,
        "{ev:?}"
    );
}

#[test]
fn unauthorised_member_and_wrong_psk_get_no_key() {
    let s = serve();
    // Each is told why (gander_gdoi::notify): the group refusal under the phase-1 SA, the
    // wrong key in the clear.
    let e = register(&cfg(s.addr, [127, 0, 0, 3], "ied-3", b"psk-three")).unwrap_err();
    assert!(
        matches!(e, MemberError::Refused(n) if n.authenticated
            && n.notify == gander_wire::isakmp::error::notify_type::INVALID_ID_INFORMATION),
        "{e:?}"
    );
    let e = register(&cfg(s.addr, [127, 0, 0, 1], "ied-1", b"wrong")).unwrap_err();
    assert!(
        matches!(e, MemberError::Refused(n) if !n.authenticated
            && n.notify == gander_wire::isakmp::error::notify_type::AUTHENTICATION_FAILED),
        "{e:?}"
    );
    let ev = s.events.lock().unwrap().clone();
    assert!(
        ev.iter().any(
            |e| matches!(e, KdcEvent::Refused { reason, .. } if reason.contains("not authorised"))
        ),
        "{ev:?}"
    );
    assert!(
        ev.iter().any(|e| matches!(
            e,
            KdcEvent::Refused {
                notify: 24 | 23,
                ..
            }
        )),
        "{ev:?}"
    );
}
