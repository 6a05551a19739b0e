//! A member naming its group by ID_OID (RFC 8052 2.1) over UDP on loopback, and the key
//! material of RFC 8052 2.3 end to end: the key server finds the group by its OID, sends an
//! AES-GMAC key as a 20-octet TEK_INTEGRITY_KEY and an AES-GCM key as a 20-octet
//! TEK_ALGORITHM_KEY (AES key then salt), and the member installs the AES key and protects and
//! verifies a GOOSE frame with it. go-iec61850's `gdoi` member names groups this way; before,
//! gander's key server took the ID_OID data for a group name and refused it ("unknown group").

use crate::kdc_thread::{self, Server};
use gander_gdoi::install::key_entry;
use gander_gdoi::net::kdc::{GroupPolicy, Kdc, KdcEvent, KdcPolicy, MemberPolicy};
use gander_gdoi::net::member::{register, MemberConfig, MemberError};
use gander_sec::l2::{self, CheckedGoose};
use gander_sec::spdu::RandomIv;
use gander_sec::{default_provider, KeyStore, Profile};
use gander_wire::isakmp::iec61850::oid;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdOid, IdPayload, Traffic};
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;
use zeroize::Zeroizing;

const MAC: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];

fn key_id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

fn id_oid(o: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::OID,
        protocol: 0,
        port: 0,
        data: IdOid::new(o, vec![]).unwrap().to_vec(),
    }
}

fn group(name: &str, o: &str, traffic: Traffic, mac: u16, enc: u16) -> GroupPolicy {
    GroupPolicy {
        id: name.as_bytes().to_vec(),
        oid: o.to_string(),
        traffic,
        mac_code: mac,
        enc_code: enc,
        lifetime_secs: 3600,
        activation_delay_secs: 0,
        overlap_secs: 60,
        key_id: 0,
        key: Zeroizing::new(Vec::new()),
    }
}

fn serve() -> Server {
    let policy = KdcPolicy {
        identity: key_id("kdc"),
        members: vec![MemberPolicy {
            identity: b"ied-1".to_vec(),
            psk: Zeroizing::new(b"psk-one-psk-one!".to_vec()),
            address: [127, 0, 0, 1].into(),
            groups: vec![b"gmac-1".to_vec(), b"gcm-1".to_vec()],
            cert: None,
            push: None,
        }],
        groups: vec![
            // AES-GMAC-128 tag (IEC 62351-6 MAC 5) with AES-128: RFC 8052 AES-GMAC-128.
            group(
                "gmac-1",
                oid::GOOSE,
                Traffic::L2 { mac: MAC, appid: 1 },
                5,
                0,
            ),
            // AES-128-GCM (IEC 62351-6 encryption 1): RFC 8052 AES-GCM-128.
            group(
                "gcm-1",
                oid::R_SV,
                Traffic::Ipv4 {
                    addr: [239, 0, 0, 9],
                    port: 102,
                },
                0,
                1,
            ),
        ],
    };
    let kdc = Kdc::new(UdpSocket::bind("127.0.0.1:0").unwrap(), policy);
    kdc_thread::spawn(kdc, Duration::from_millis(50))
}

fn cfg(server: SocketAddr, group: IdPayload) -> MemberConfig {
    MemberConfig {
        server,
        bind: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        psk: b"psk-one-psk-one!".to_vec(),
        identity: key_id("ied-1"),
        group,
        timeout: Duration::from_millis(300),
        tries: 3,
    }
}

#[test]
fn a_group_named_by_id_oid_gets_rfc_8052_salted_keys_that_protect_goose() {
    let s = serve();
    let now = 1_700_000_000;
    let gmac = register(&cfg(s.addr, id_oid(oid::GOOSE))).unwrap();
    let t = &gmac.teks[0];
    assert_eq!(t.mac_algorithm, Some(5));
    assert_eq!(t.integrity_key.as_ref().map(|k| k.len()), Some(20));
    assert!(t.algorithm_key.is_none());
    assert_eq!(t.overlap_secs, Some(60));
    let e = key_entry(t, default_provider(), now).unwrap();
    let mut store = KeyStore::new();
    store
        .insert(key_entry(t, default_provider(), now).unwrap())
        .unwrap();
    let frame = gander_testkit::frames::goose_frame([2, 0, 0, 0, 0, 1], MAC, None, 0x0001, 1, 1);
    let secured = l2::protect(Profile::Standard, &e, &frame, &mut RandomIv, now).unwrap();
    assert!(matches!(
        l2::verify(Profile::Standard, &store, &secured, now).unwrap(),
        CheckedGoose::Verified(_)
    ));

    let gcm = register(&cfg(s.addr, id_oid(oid::R_SV))).unwrap();
    let t = &gcm.teks[0];
    assert_eq!(t.encryption_algorithm, Some(1));
    assert_eq!(t.algorithm_key.as_ref().map(|k| k.len()), Some(20));
    key_entry(t, default_provider(), now).unwrap();

    // An OID no group has: refused with the key server's protected notification.
    let e = register(&cfg(s.addr, id_oid(oid::SV))).unwrap_err();
    assert!(matches!(e, MemberError::Refused(_)), "{e}");

    // The key server's events name the configured groups the OIDs found.
    let t0 = std::time::Instant::now();
    let names = || {
        s.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                KdcEvent::Registered { group, .. } => Some(group.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    while names().len() < 2 && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(names(), vec![b"gmac-1".to_vec(), b"gcm-1".to_vec()]);
}
