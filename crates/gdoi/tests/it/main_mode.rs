//! IKEv1 main mode with pre-shared keys, initiator against responder in memory (RFC 2409 5):
//! every suite agrees on the same keys; a wrong key, an unauthorised identity, a forged
//! cookie and a replay are refused with their notifications; and a corrupted message is
//! refused without changing state, so the genuine one still completes the exchange.

use gander_gdoi::cookie::CookieJar;
use gander_gdoi::main_mode::ResponderConfig;
use gander_gdoi::{Group, HashAlg, Initiator, Phase1Error, Responder, Suite};
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::IdPayload;
use proptest::prelude::*;
use zeroize::Zeroizing;

const PEER: &[u8] = &[127, 0, 0, 1, 0x03, 0x50];

fn id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

fn rcfg(psk: &[u8], suites: Vec<Suite>) -> ResponderConfig {
    ResponderConfig {
        psk: Zeroizing::new(psk.to_vec()),
        suites,
        id: id("kdc"),
        expect_peer: Some((id_type::KEY_ID, b"member-1".to_vec()).into()),
        cert: None,
    }
}

/// The six messages; returns both machines and the messages exchanged.
fn run(suite: Suite, ipsk: &[u8], rpsk: &[u8]) -> (Initiator, Responder, Result<(), Phase1Error>) {
    let jar = CookieJar::new();
    let (mut i, m1) = Initiator::start(ipsk, id("member-1"), vec![suite]).unwrap();
    let (mut r, m2) = Responder::start(&jar, PEER, &m1, rcfg(rpsk, vec![suite])).unwrap();
    let m3 = i.handle(&m2).unwrap().unwrap();
    let m4 = r.handle(&jar, &m3).unwrap();
    let m5 = i.handle(&m4).unwrap().unwrap();
    let res = r
        .handle(&jar, &m5)
        .and_then(|m6| i.handle(&m6).map(|none| assert!(none.is_none())));
    (i, r, res)
}

#[test]
fn every_suite_agrees() {
    for suite in Suite::all(3600) {
        let (i, r, res) = run(suite, b"correct horse", b"correct horse");
        res.unwrap();
        let (a, b) = (i.established().unwrap(), r.established().unwrap());
        assert_eq!(a.suite, suite);
        assert_eq!(*a.keys.skeyid_d, *b.keys.skeyid_d, "{suite:?}");
        assert_eq!(*a.keys.skeyid_a, *b.keys.skeyid_a);
        assert_eq!(*a.keys.enc_key, *b.keys.enc_key);
        assert_eq!(a.keys.enc_key.len(), usize::from(suite.aes_bits / 8));
        assert_eq!(a.last_iv, b.last_iv);
        assert_eq!(a.peer_id, id("kdc"));
        assert_eq!(b.peer_id, id("member-1"));
    }
}

#[test]
fn wrong_psk_is_an_authentication_failure() {
    for suite in Suite::all(3600) {
        let (_, r, res) = run(suite, b"guess", b"correct horse");
        let e = res.unwrap_err();
        // Message 5 decrypts to garbage under the responder's SKEYID_e (AUTHENTICATION-FAILED),
        // or, if the garbage happens to parse, HASH_I does not verify.
        assert!(e.is_authentication_failure(), "{e:?}");
        assert!([
            notify_type::AUTHENTICATION_FAILED,
            notify_type::INVALID_HASH_INFORMATION
        ]
        .contains(&e.notify()));
        assert!(r.established().is_none());
    }
}

#[test]
fn unauthorised_identity_is_invalid_id_information() {
    let suite = Suite::all(3600)[1];
    let jar = CookieJar::new();
    let (mut i, m1) = Initiator::start(b"k", id("intruder"), vec![suite]).unwrap();
    let (mut r, m2) = Responder::start(&jar, PEER, &m1, rcfg(b"k", vec![suite])).unwrap();
    let m3 = i.handle(&m2).unwrap().unwrap();
    let m4 = r.handle(&jar, &m3).unwrap();
    let m5 = i.handle(&m4).unwrap().unwrap();
    let e = r.handle(&jar, &m5).unwrap_err();
    assert_eq!(e.notify(), notify_type::INVALID_ID_INFORMATION);
}

#[test]
fn no_common_suite_is_no_proposal_chosen() {
    let jar = CookieJar::new();
    let s = Suite::all(3600);
    let (_, m1) = Initiator::start(b"k", id("member-1"), vec![s[0]]).unwrap();
    let e = Responder::start(&jar, PEER, &m1, rcfg(b"k", vec![s[4]]))
        .err()
        .unwrap();
    assert_eq!(e.notify(), notify_type::NO_PROPOSAL_CHOSEN);
}

#[test]
fn forged_cookie_and_replays_refused() {
    let suite = Suite {
        aes_bits: 128,
        hash: HashAlg::Sha256,
        group: Group::Ecp256,
        life_secs: 60,
    };
    let jar = CookieJar::new();
    let (mut i, m1) = Initiator::start(b"k", id("member-1"), vec![suite]).unwrap();
    let (mut r, m2) = Responder::start(&jar, PEER, &m1, rcfg(b"k", vec![suite])).unwrap();
    let m3 = i.handle(&m2).unwrap().unwrap();
    // Message 3 with another responder cookie: refused before any DH work.
    let mut forged = m3.clone();
    forged[8] ^= 0xff;
    assert_eq!(r.handle(&jar, &forged).unwrap_err(), Phase1Error::BadCookie);
    // A jar with another secret (a restarted responder, or a cookie minted for another
    // address) does not accept the cookie either.
    assert_eq!(
        r.handle(&CookieJar::new(), &m3).unwrap_err(),
        Phase1Error::BadCookie
    );
    let m4 = r.handle(&jar, &m3).unwrap();
    // Replay of message 3 once answered.
    assert!(matches!(
        r.handle(&jar, &m3).unwrap_err(),
        Phase1Error::Decrypt(_) | Phase1Error::Unexpected { .. }
    ));
    // Replay of message 2 to the initiator.
    assert!(i.handle(&m2).is_err());
    let m5 = i.handle(&m4).unwrap().unwrap();
    let m6 = r.handle(&jar, &m5).unwrap();
    i.handle(&m6).unwrap();
    assert!(i.established().is_some());
    assert!(matches!(
        r.handle(&jar, &m5).unwrap_err(),
        Phase1Error::Unexpected { .. }
    ));
    assert!(matches!(
        i.handle(&m6).unwrap_err(),
        Phase1Error::Unexpected { .. }
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// A corrupted copy of message `k` (one octet changed) that the receiver refuses leaves it
    /// as it was: the genuine message then completes the exchange with equal keys.
    #[test]
    fn refused_corruption_changes_no_state(k in 2usize..=6, at: prop::sample::Index, x in 1u8..=255) {
        let suite = Suite { aes_bits: 256, hash: HashAlg::Sha256, group: Group::Ecp256, life_secs: 60 };
        let jar = CookieJar::new();
        let (mut i, m1) = Initiator::start(b"k", id("member-1"), vec![suite]).unwrap();
        let (mut r, m2) = Responder::start(&jar, PEER, &m1, rcfg(b"k", vec![suite])).unwrap();
        let corrupt = |m: &[u8]| { let mut c = m.to_vec(); let j = at.index(c.len()); c[j] ^= x; c };
        let mut refused = false;
        if k == 2 { refused |= i.handle(&corrupt(&m2)).is_err(); }
        prop_assume!(k != 2 || refused);
        let m3 = i.handle(&m2).unwrap().unwrap();
        if k == 3 { refused |= r.handle(&jar, &corrupt(&m3)).is_err(); }
        prop_assume!(k != 3 || refused);
        let m4 = r.handle(&jar, &m3).unwrap();
        if k == 4 { refused |= i.handle(&corrupt(&m4)).is_err(); }
        prop_assume!(k != 4 || refused);
        let m5 = i.handle(&m4).unwrap().unwrap();
        if k == 5 { refused |= r.handle(&jar, &corrupt(&m5)).is_err(); }
        prop_assume!(k != 5 || refused);
        let m6 = r.handle(&jar, &m5).unwrap();
        if k == 6 { refused |= i.handle(&corrupt(&m6)).is_err(); }
        prop_assume!(k != 6 || refused);
        prop_assert!(i.handle(&m6).unwrap().is_none());
        prop_assert_eq!(&*i.established().unwrap().keys.enc_key, &*r.established().unwrap().keys.enc_key);
    }
}

/// RFC 2408 4.8: a responder that does not accept message 5 may answer with an encrypted
/// Informational exchange instead of message 6 (strongSwan 5.9.8 does when message 5 does
/// not decrypt under its key). The initiator names that refusal, changes nothing (the
/// datagram is not authenticated), and still completes with the genuine message 6.
#[test]
fn encrypted_informational_instead_of_message_6_is_named_and_changes_nothing() {
    use gander_wire::isakmp::header::{exchange, flags};
    use gander_wire::isakmp::Header;
    use gander_wire::Codec;
    let suite = Suite::all(3600)[1];
    let jar = CookieJar::new();
    let (mut i, m1) = Initiator::start(b"k", id("member-1"), vec![suite]).unwrap();
    let (mut r, m2) = Responder::start(&jar, PEER, &m1, rcfg(b"k", vec![suite])).unwrap();
    let m3 = i.handle(&m2).unwrap().unwrap();
    let m4 = r.handle(&jar, &m3).unwrap();
    let m5 = i.handle(&m4).unwrap().unwrap();
    let m6 = r.handle(&jar, &m5).unwrap();
    let h6 = Header::parse(&m6).unwrap();
    let mut info = Header {
        exchange: exchange::INFORMATIONAL,
        flags: flags::ENCRYPTION,
        message_id: 0x1c0f_fee5,
        next_payload: 8,
        length: 28 + 48,
        ..h6
    }
    .to_vec();
    info.extend([0xa5; 48]);
    assert_eq!(i.handle(&info), Err(Phase1Error::PeerRefusedIdentity));
    assert_eq!(
        i.handle(&info).unwrap_err().to_string(),
        "the key server answered our identity (message 5) with an encrypted notification, \
         not message 6: it refused our authentication (another pre-shared key, or a \
         certificate or identity it does not accept)"
    );
    assert!(i.established().is_none());
    assert_eq!(i.handle(&m6), Ok(None));
    assert!(i.established().is_some());
}
