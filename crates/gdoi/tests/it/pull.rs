//! GROUPKEY-PULL (RFC 6407 3) with RFC 8052's IEC 61850 SA TEK, member against key server in
//! memory over a phase-1 SA from main mode: the member receives exactly the keys granted, for
//! layer-2 GOOSE and for R-SV; an unauthorised member or unknown group is refused with
//! INVALID-ID-INFORMATION; a replayed message 1 is refused by its Message ID; a corrupted
//! message is refused without changing either side's state.

use gander_gdoi::cookie::CookieJar;
use gander_gdoi::main_mode::ResponderConfig;
use gander_gdoi::pull::{
    Grant, GroupKeys, GroupSource, MessageIds, PullError, PullMember, PullServer,
};
use gander_gdoi::{Initiator, Phase1Sa, Responder, Suite};
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::gdoi::{kd_attr, kd_type};
use gander_wire::isakmp::iec61850::{encode_oid, oid, tek_attr};
use gander_wire::isakmp::iec61850_alg::{auth, conf};
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::sa::doi;
use gander_wire::isakmp::{
    Attribute, IdPayload, Iec61850Tek, KeyDownload, KeyPacket, SaAttrPayload, SaBody, SaPayload,
    SaTek, Traffic,
};
use proptest::prelude::*;
use zeroize::Zeroizing;

fn id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

fn phase1(member: &str) -> (Phase1Sa, Phase1Sa) {
    let suite = Suite::all(3600)[1];
    let jar = CookieJar::new();
    let (mut i, m1) = Initiator::start(b"psk", id(member), vec![suite]).unwrap();
    let cfg = ResponderConfig {
        psk: Zeroizing::new(b"psk".to_vec()),
        suites: vec![suite],
        id: id("kdc"),
        expect_peer: None,
        cert: None,
    };
    let (mut r, m2) = Responder::start(&jar, &[1, 2, 3, 4], &m1, cfg).unwrap();
    let m3 = i.handle(&m2).unwrap().unwrap();
    let m4 = r.handle(&jar, &m3).unwrap();
    let m5 = i.handle(&m4).unwrap().unwrap();
    let m6 = r.handle(&jar, &m5).unwrap();
    i.handle(&m6).unwrap();
    (i.into_sa().unwrap(), r.into_sa().unwrap())
}

/// Two groups: layer-2 GOOSE with HMAC-SHA256-128, R-SV over IPv4 with AES-128-GCM.
struct Policy;

fn grant(group: &[u8]) -> Option<Grant> {
    let (o, traffic, key_id, attrs, key) = match group {
        b"goose-1" => (
            oid::GOOSE,
            Traffic::L2 {
                mac: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
                appid: 0x0001,
            },
            7u32,
            (auth::HMAC_SHA256_128, conf::NONE, vec![]),
            Attribute::variable(kd_attr::TEK_INTEGRITY_KEY, vec![0x11; 32]),
        ),
        b"rsv-1" => (
            oid::R_SV,
            Traffic::Ipv4 {
                addr: [239, 0, 0, 9],
                port: 102,
            },
            8u32,
            (
                auth::NONE,
                conf::AES_GCM_128,
                vec![Attribute::basic(tek_attr::SA_ATD, 5)],
            ),
            Attribute::variable(kd_attr::TEK_ALGORITHM_KEY, vec![0x22; 16]),
        ),
        _ => return None,
    };
    let (auth_alg, conf_alg, attributes) = attrs;
    let tek = Iec61850Tek {
        oid: encode_oid(o).unwrap(),
        traffic: Some(traffic),
        spi: key_id,
        auth_alg,
        conf_alg,
        lifetime_secs: 86_400,
        attributes,
    };
    Some(Grant {
        sa: SaPayload {
            doi: doi::GDOI,
            situation: 0,
            body: SaBody::Gdoi(vec![SaAttrPayload::Tek(SaTek::Iec61850(tek))]),
        },
        kd: KeyDownload {
            packets: vec![KeyPacket {
                kd_type: kd_type::TEK,
                spi: key_id.to_be_bytes().to_vec(),
                attributes: vec![key],
            }],
        },
        seq: Some(41),
    })
}

impl GroupSource for Policy {
    fn grant(&self, member: &IdPayload, group: &IdPayload) -> Result<Grant, PullError> {
        let g = grant(&group.data).ok_or(PullError::UnknownGroup)?;
        if member.data == b"member-1" || (member.data == b"member-2" && group.data == b"goose-1") {
            Ok(g)
        } else {
            Err(PullError::NotAuthorized)
        }
    }
}

fn register(
    m: &Phase1Sa,
    k: &Phase1Sa,
    group: &str,
) -> Result<gander_gdoi::pull::GroupKeys, PullError> {
    let mut ids = MessageIds::default();
    let (mut member, m1) = PullMember::start(m, id(group)).unwrap();
    let (mut server, m2) = PullServer::start(k, &mut ids, &Policy, &m1)?;
    let m3 = member.handle(m, &m2)?.unwrap();
    let m4 = server.handle(k, &m3)?;
    assert!(member.handle(m, &m4)?.is_none());
    Ok(member.keys().unwrap().clone())
}

#[test]
fn goose_and_rsv_keys_arrive() {
    let (m, k) = phase1("member-1");
    let g = register(&m, &k, "goose-1").unwrap();
    assert_eq!(g.seq, Some(41));
    let t = &g.teks[0];
    assert_eq!(t.key_id, 7);
    assert_eq!(
        t.traffic,
        Some(Traffic::L2 {
            mac: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
            appid: 1
        })
    );
    assert_eq!(t.mac_algorithm, Some(2));
    assert_eq!(t.lifetime_secs, Some(86_400));
    assert_eq!(
        t.integrity_key.as_deref().map(Vec::as_slice),
        Some(&[0x11u8; 32][..])
    );
    let r = register(&m, &k, "rsv-1").unwrap();
    let t = &r.teks[0];
    assert_eq!(
        t.traffic,
        Some(Traffic::Ipv4 {
            addr: [239, 0, 0, 9],
            port: 102
        })
    );
    assert_eq!(
        (t.encryption_algorithm, t.activation_delay_secs),
        (Some(1), Some(5))
    );
    assert_eq!(
        t.algorithm_key.as_deref().map(Vec::as_slice),
        Some(&[0x22u8; 16][..])
    );
}

#[test]
fn unauthorised_member_and_unknown_group_refused() {
    let (m, k) = phase1("member-2");
    assert!(register(&m, &k, "goose-1").is_ok());
    let e = register(&m, &k, "rsv-1").unwrap_err();
    assert_eq!(e, PullError::NotAuthorized);
    assert_eq!(e.notify(), notify_type::INVALID_ID_INFORMATION);
    assert_eq!(
        register(&m, &k, "nope").unwrap_err(),
        PullError::UnknownGroup
    );
}

#[test]
fn replayed_message_one_refused() {
    let (m, k) = phase1("member-1");
    let mut ids = MessageIds::default();
    let (_, m1) = PullMember::start(&m, id("goose-1")).unwrap();
    PullServer::start(&k, &mut ids, &Policy, &m1).unwrap();
    let e = PullServer::start(&k, &mut ids, &Policy, &m1).err().unwrap();
    assert_eq!(e.notify(), notify_type::INVALID_MESSAGE_ID);
}

/// The keys a clean registration to "goose-1" gives.
fn clean_keys(ms: &Phase1Sa, ks: &Phase1Sa) -> GroupKeys {
    let mut ids = MessageIds::default();
    let (mut member, m1) = PullMember::start(ms, id("goose-1")).unwrap();
    let (mut server, m2) = PullServer::start(ks, &mut ids, &Policy, &m1).unwrap();
    let m3 = member.handle(ms, &m2).unwrap().unwrap();
    let m4 = server.handle(ks, &m3).unwrap();
    assert!(member.handle(ms, &m4).unwrap().is_none());
    member.keys().unwrap().clone()
}

/// Octets whose change a pull message may survive: IKEv1 pads the encrypted body to whole
/// cipher blocks, and the padding after the last payload is outside every HASH (RFC 2409 5.5
/// and Appendix B; peers pad differently, so it is not checked). A change to the last
/// ciphertext block garbles that whole plaintext block under CBC; when the payload octets in
/// it decrypt unchanged by chance (1 in 256 for each such octet), only padding changed.
fn in_last_cipher_block(msg: &[u8], j: usize) -> bool {
    j + 16 >= msg.len()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// One changed octet in message 1..4 is refused and leaves the receiver as it was; the one
    /// exception is a change that leaves every authenticated octet as it was (padding only, see
    /// [`in_last_cipher_block`]): then the member ends with exactly the keys of a clean
    /// registration (message 4), or the exchange fails closed at the next message (message 2,
    /// whose last block is message 3's IV).
    #[test]
    fn corrupted_pull_message_changes_no_state(k in 1usize..=4, at: prop::sample::Index, x in 1u8..=255) {
        let (ms, ks) = phase1("member-1");
        let mut ids = MessageIds::default();
        let j = |b: &[u8]| at.index(b.len());
        let corrupt = |b: &[u8]| { let mut c = b.to_vec(); c[j(b)] ^= x; c };
        let (mut member, m1) = PullMember::start(&ms, id("goose-1")).unwrap();
        if k == 1 {
            prop_assert!(PullServer::start(&ks, &mut ids, &Policy, &corrupt(&m1)).is_err());
        }
        let (mut server, m2) = PullServer::start(&ks, &mut ids, &Policy, &m1).unwrap();
        if k == 2 {
            if let Ok(m3) = member.handle(&ms, &corrupt(&m2)) {
                prop_assert!(in_last_cipher_block(&m2, j(&m2)), "octet {} accepted", j(&m2));
                prop_assert!(server.handle(&ks, &m3.unwrap()).is_err());
                return Ok(());
            }
        }
        let m3 = member.handle(&ms, &m2).unwrap().unwrap();
        if k == 3 { prop_assert!(server.handle(&ks, &corrupt(&m3)).is_err()); }
        let m4 = server.handle(&ks, &m3).unwrap();
        if k == 4 && member.handle(&ms, &corrupt(&m4)).is_ok() {
            prop_assert!(in_last_cipher_block(&m4, j(&m4)), "octet {} accepted", j(&m4));
            prop_assert_eq!(member.keys().unwrap(), &clean_keys(&ms, &ks));
            return Ok(());
        }
        prop_assert!(member.handle(&ms, &m4).unwrap().is_none());
        prop_assert_eq!(member.keys().unwrap().teks[0].key_id, 7);
    }
}

/// Every octet of messages 1 to 4, each changed by several masks, is refused or (padding
/// only, [`in_last_cipher_block`]) harmless. The proptest above once drew the header's flag
/// octet changed by Commit | Authentication-Only (0x06) in a CI run and the member took it:
/// the ISAKMP header is outside every pull HASH (RFC 6407 3.2), so flags GDOI does not use are
/// refused. This walks every octet so that a gap cannot hide behind sampling.
#[test]
fn every_octet_of_a_pull_is_covered() {
    let (ms, ks) = phase1("member-1");
    let keys = clean_keys(&ms, &ks);
    let fresh = || {
        let mut ids = MessageIds::default();
        let (member, m1) = PullMember::start(&ms, id("goose-1")).unwrap();
        let (server, m2) = PullServer::start(&ks, &mut ids, &Policy, &m1).unwrap();
        (member, server, m2)
    };
    let (_, m1) = PullMember::start(&ms, id("goose-1")).unwrap();
    for j in 0..m1.len() {
        for x in [0x02u8, 0x04, 0x80, 0xff] {
            let mut c = m1.clone();
            c[j] ^= x;
            let mut ids = MessageIds::default();
            assert!(
                PullServer::start(&ks, &mut ids, &Policy, &c).is_err(),
                "message 1 octet {j} ^ {x:#04x} accepted"
            );
        }
    }
    let (_, _, m2) = fresh();
    for j in 0..m2.len() {
        for x in [0x01u8, 0x02, 0x04, 0x06, 0x80, 0xff] {
            let (mut member, mut server, m2) = fresh();
            let mut c = m2.clone();
            c[j] ^= x;
            match member.handle(&ms, &c) {
                Err(_) => assert!(
                    member.handle(&ms, &m2).unwrap().is_some(),
                    "state changed by octet {j}"
                ),
                Ok(m3) => {
                    assert!(
                        in_last_cipher_block(&m2, j),
                        "message 2 octet {j} ^ {x:#04x} accepted"
                    );
                    assert!(server.handle(&ks, &m3.unwrap()).is_err());
                }
            }
        }
    }
    let fresh3 = || {
        let (mut member, server, m2) = fresh();
        let m3 = member.handle(&ms, &m2).unwrap().unwrap();
        (member, server, m3)
    };
    let (mut member, mut server, mut m3) = fresh3();
    for j in 0..m3.len() {
        for x in [0x02u8, 0x04, 0x80, 0xff] {
            let mut c = m3.clone();
            c[j] ^= x;
            if let Ok(m4) = server.handle(&ks, &c) {
                // Padding only; the key server took the changed last block as message 4's
                // IV, so the member cannot open message 4: it fails closed.
                assert!(
                    in_last_cipher_block(&m3, j),
                    "message 3 octet {j} ^ {x:#04x} accepted"
                );
                assert!(member.handle(&ms, &m4).is_err());
                (member, server, m3) = fresh3();
            }
        }
    }
    let m4 = server.handle(&ks, &m3).unwrap();
    let mut accepted = false;
    for j in 0..m4.len() {
        for x in [0x02u8, 0x04, 0x80, 0xff] {
            let mut c = m4.clone();
            c[j] ^= x;
            if member.handle(&ms, &c).is_ok() {
                assert!(
                    in_last_cipher_block(&m4, j),
                    "message 4 octet {j} ^ {x:#04x} accepted"
                );
                assert_eq!(member.keys().unwrap(), &keys);
                accepted = true;
            }
        }
    }
    if !accepted {
        assert!(member.handle(&ms, &m4).unwrap().is_none());
        assert_eq!(member.keys().unwrap(), &keys);
    }
}

#[test]
fn commit_or_auth_only_flag_is_invalid_flags() {
    let (ms, ks) = phase1("member-1");
    let mut ids = MessageIds::default();
    let (mut member, m1) = PullMember::start(&ms, id("goose-1")).unwrap();
    let mut c = m1.clone();
    c[19] |= 0x02;
    let e = PullServer::start(&ks, &mut ids, &Policy, &c).err().unwrap();
    assert_eq!(e, PullError::Flags(0x03));
    assert_eq!(e.notify(), notify_type::INVALID_FLAGS);
    let (_, m2) = PullServer::start(&ks, &mut ids, &Policy, &m1).unwrap();
    let mut c = m2.clone();
    c[19] |= 0x04;
    assert_eq!(member.handle(&ms, &c).unwrap_err(), PullError::Flags(0x05));
}
