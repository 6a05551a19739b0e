//! IKEv1 main mode with signatures (RFC 2409 5.1; RFC 4754 for ECDSA), initiator against
//! responder in memory, with certificates made here: RSA-2048, P-256 and P-384 agree on the
//! keys and each side learns the other's verified certificate; an untrusted CA, an expired,
//! revoked or non-signing certificate, an identity the certificate does not name, a
//! certificate the policy does not authorise and a signature by another key are each refused
//! with their notification; replayed and corrupted messages change no state.

use crate::pki;

use gander_gdoi::cert_auth::{verify_peer, CertError, CertMatch, Credentials};
use gander_gdoi::cookie::CookieJar;
use gander_gdoi::main_mode::{CertPolicy, ResponderConfig};
use gander_gdoi::{Auth, AuthMethod, Initiator, Phase1Error, Responder, Suite};
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::payload::{id_type, CERT_X509_SIG};
use gander_wire::isakmp::{CertPayload, IdPayload};
use pki::{Kind, Leaf, Pki};
use proptest::prelude::*;
use std::sync::Arc;
use zeroize::Zeroizing;

const PEER: &[u8] = &[127, 0, 0, 1, 0x03, 0x50];

fn kdc_cfg(
    creds: Arc<Credentials>,
    allowed: Vec<CertMatch>,
    suites: Vec<Suite>,
) -> ResponderConfig {
    ResponderConfig {
        psk: Zeroizing::new(Vec::new()),
        suites,
        id: IdPayload {
            id_type: id_type::KEY_ID,
            protocol: 0,
            port: 0,
            data: b"kdc".to_vec(),
        },
        expect_peer: None,
        cert: Some(CertPolicy {
            creds: vec![creds],
            allowed,
            profiles: vec![],
        }),
    }
}

fn member_match() -> Vec<CertMatch> {
    vec![CertMatch::Subject("O=gander test, CN=member-1".into())]
}

/// Runs the six messages; the result of the responder's message 5 and the initiator's 6.
fn run(
    member: Arc<Credentials>,
    member_id: IdPayload,
    cfg: ResponderConfig,
    suite: Suite,
) -> (Initiator, Responder, Result<(), Phase1Error>) {
    let jar = CookieJar::new();
    let (mut i, m1) = Initiator::start_with(Auth::Cert(member), member_id, vec![suite]).unwrap();
    let (mut r, m2) = Responder::start(&jar, PEER, &m1, cfg).unwrap();
    let m3 = i.handle(&m2).unwrap().unwrap();
    let m4 = r.handle(&jar, &m3).unwrap();
    let m5 = i.handle(&m4).unwrap().unwrap();
    let res = r
        .handle(&jar, &m5)
        .and_then(|m6| i.handle(&m6).map(|none| assert!(none.is_none())));
    (i, r, res)
}

struct Setup {
    pki: Pki,
    member: Arc<Credentials>,
    kdc: Arc<Credentials>,
}

fn setup(kind: Kind) -> Setup {
    let pki = Pki::new("gander test CA", kind);
    let trust = pki.trust(None);
    let member = pki.creds(&Leaf::new("member-1", kind), trust.clone());
    let kdc = pki.creds(&Leaf::new("kdc", kind), trust);
    Setup { pki, member, kdc }
}

fn refused_at_5(member: Arc<Credentials>, id: IdPayload, cfg: ResponderConfig) -> Phase1Error {
    let (_, r, res) = run(member, id, cfg, Suite::all(3600)[1]);
    assert!(r.established().is_none());
    res.unwrap_err()
}

#[test]
fn rsa_p256_p384_agree_and_learn_the_peer_certificate() {
    for kind in pki::ALL {
        let s = setup(kind);
        for suite in [Suite::all(3600)[0], Suite::all(3600)[3]] {
            let id = s.member.id_payload().unwrap();
            let cfg = kdc_cfg(s.kdc.clone(), member_match(), vec![suite]);
            let (i, r, res) = run(s.member.clone(), id, cfg, suite);
            res.unwrap();
            let (a, b) = (i.established().unwrap(), r.established().unwrap());
            let want = match kind {
                Kind::Rsa2048 => AuthMethod::RsaSig,
                Kind::P256 => AuthMethod::EcdsaP256,
                Kind::P384 => AuthMethod::EcdsaP384,
            };
            assert_eq!((a.method, b.method), (want, want));
            assert_eq!(*a.keys.skeyid_a, *b.keys.skeyid_a, "{kind:?} {suite:?}");
            assert_eq!(*a.keys.enc_key, *b.keys.enc_key);
            assert_eq!(a.last_iv, b.last_iv);
            assert_eq!(
                b.peer_cert.as_ref().unwrap().subject,
                "O=gander test,CN=member-1"
            );
            assert_eq!(
                a.peer_cert.as_ref().unwrap().subject,
                "O=gander test,CN=kdc"
            );
            assert_eq!(a.peer_id.id_type, id_type::DER_ASN1_DN);
        }
    }
}

#[test]
fn untrusted_ca_is_invalid_certificate() {
    let s = setup(Kind::P256);
    let other = Pki::new("another CA", Kind::P256);
    let intruder = other.creds(&Leaf::new("member-1", Kind::P256), s.pki.trust(None));
    let id = intruder.id_payload().unwrap();
    let e = refused_at_5(
        intruder,
        id,
        kdc_cfg(s.kdc, member_match(), Suite::all(3600)),
    );
    assert!(
        matches!(e, Phase1Error::Cert(CertError::Invalid(_))),
        "{e:?}"
    );
    assert_eq!(e.notify(), notify_type::INVALID_CERTIFICATE);
    assert!(e.is_authentication_failure());
}

#[test]
fn expired_certificate_is_invalid_certificate() {
    let s = setup(Kind::P384);
    let mut l = Leaf::new("member-1", Kind::P384);
    l.expired = true;
    let m = s.pki.creds(&l, s.pki.trust(None));
    let id = m.id_payload().unwrap();
    let e = refused_at_5(m, id, kdc_cfg(s.kdc, member_match(), Suite::all(3600)));
    assert_eq!(e.notify(), notify_type::INVALID_CERTIFICATE, "{e:?}");
    assert!(e.to_string().contains("expired"), "{e}");
}

#[test]
fn revoked_certificate_is_refused_and_an_unrevoked_one_passes_the_crl() {
    let s = setup(Kind::P256);
    let (cert, key) = s.pki.leaf(&Leaf::new("member-1", Kind::P256));
    let crl = s.pki.crl(&[&cert], "revoked.crl");
    let kdc_trust = s.pki.trust(Some(&crl));
    let (kc, kk) = s.pki.leaf(&Leaf::new("kdc", Kind::P256));
    let kdc = Arc::new(Credentials::new(kc, vec![], kk, kdc_trust).unwrap());
    let member = Arc::new(Credentials::new(cert, vec![], key, s.pki.trust(None)).unwrap());
    let id = member.id_payload().unwrap();
    let e = refused_at_5(
        member,
        id,
        kdc_cfg(kdc.clone(), member_match(), Suite::all(3600)),
    );
    assert_eq!(e.notify(), notify_type::INVALID_CERTIFICATE, "{e:?}");
    assert!(e.to_string().contains("revoked"), "{e}");
    // Another member certificate of the same CA, not on the CRL, gets through.
    let good = s
        .pki
        .creds(&Leaf::new("member-1", Kind::P256), s.pki.trust(None));
    let id = good.id_payload().unwrap();
    let (_, r, res) = run(
        good,
        id,
        kdc_cfg(kdc, member_match(), Suite::all(3600)),
        Suite::all(3600)[1],
    );
    res.unwrap();
    assert!(r.established().is_some());
}

#[test]
fn identity_the_certificate_does_not_name_is_authentication_failed() {
    let s = setup(Kind::P256);
    let mut l = Leaf::new("member-1", Kind::P256);
    l.san = Some("member-1.example");
    let m = s.pki.creds(&l, s.pki.trust(None));
    let fqdn = |d: &str| IdPayload {
        id_type: id_type::FQDN,
        protocol: 0,
        port: 0,
        data: d.as_bytes().to_vec(),
    };
    for bad in [
        fqdn("member-2.example"),
        IdPayload {
            id_type: id_type::KEY_ID,
            protocol: 0,
            port: 0,
            data: b"member-1".to_vec(),
        },
    ] {
        let e = refused_at_5(
            m.clone(),
            bad,
            kdc_cfg(s.kdc.clone(), member_match(), Suite::all(3600)),
        );
        assert_eq!(e, Phase1Error::Cert(CertError::IdMismatch));
        assert_eq!(e.notify(), notify_type::AUTHENTICATION_FAILED);
    }
    // The subjectAltName as an FQDN identity is accepted, and authorised by SAN.
    let (_, r, res) = run(
        m,
        fqdn("MEMBER-1.example"),
        kdc_cfg(
            s.kdc,
            vec![CertMatch::San("member-1.example".into())],
            Suite::all(3600),
        ),
        Suite::all(3600)[1],
    );
    res.unwrap();
    assert_eq!(
        r.established().unwrap().peer_cert.as_ref().unwrap().sans,
        ["member-1.example"]
    );
}

#[test]
fn unauthorised_certificate_is_invalid_id_information() {
    let s = setup(Kind::P256);
    let id = s.member.id_payload().unwrap();
    let e = refused_at_5(
        s.member.clone(),
        id,
        kdc_cfg(
            s.kdc,
            vec![CertMatch::Subject("O=gander test,CN=member-2".into())],
            Suite::all(3600),
        ),
    );
    assert_eq!(e, Phase1Error::Cert(CertError::NotAuthorised));
    assert_eq!(e.notify(), notify_type::INVALID_ID_INFORMATION);
}

#[test]
fn certificate_without_digital_signature_usage_is_refused() {
    let s = setup(Kind::Rsa2048);
    let mut l = Leaf::new("member-1", Kind::Rsa2048);
    l.signing_usage = false;
    let m = s.pki.creds(&l, s.pki.trust(None));
    let id = m.id_payload().unwrap();
    let e = refused_at_5(m, id, kdc_cfg(s.kdc, member_match(), Suite::all(3600)));
    assert_eq!(e.notify(), notify_type::INVALID_CERTIFICATE);
    assert!(e.to_string().contains("key usage"), "{e}");
}

#[test]
fn wrong_key_for_the_certificate() {
    let s = setup(Kind::P256);
    let (cert, _) = s.pki.leaf(&Leaf::new("member-1", Kind::P256));
    let other = pki::key(Kind::P256);
    // Credentials refuse a key that is not the certificate's.
    assert!(matches!(
        Credentials::new(cert.clone(), vec![], other.clone(), s.pki.trust(None)),
        Err(CertError::Credentials(_))
    ));
    // On the wire: the certificate with a signature by another key is INVALID-SIGNATURE.
    let id = IdPayload {
        id_type: id_type::DER_ASN1_DN,
        protocol: 0,
        port: 0,
        data: cert.subject_name().to_der().unwrap(),
    };
    let hash = [7u8; 32];
    let sig = gander_gdoi::cert_auth::sign_hash(AuthMethod::EcdsaP256, &other, &hash).unwrap();
    let cp = CertPayload {
        encoding: CERT_X509_SIG,
        data: cert.to_der().unwrap(),
    };
    let trust = s.pki.trust(None);
    let e = verify_peer(&trust, AuthMethod::EcdsaP256, &[&cp], &id, &hash, &sig).unwrap_err();
    assert_eq!(e, CertError::BadSignature);
    assert_eq!(e.notify(), notify_type::INVALID_SIGNATURE);
    // A certificate of another key type than the negotiated method is refused.
    let e = verify_peer(&trust, AuthMethod::EcdsaP384, &[&cp], &id, &hash, &sig).unwrap_err();
    assert_eq!(e.notify(), notify_type::INVALID_CERTIFICATE);
    // No CERT payload, or one of another encoding.
    assert_eq!(
        verify_peer(&trust, AuthMethod::EcdsaP256, &[], &id, &hash, &sig)
            .unwrap_err()
            .notify(),
        notify_type::CERTIFICATE_UNAVAILABLE
    );
    let pgp = CertPayload {
        encoding: 2,
        data: cp.data.clone(),
    };
    assert_eq!(
        verify_peer(&trust, AuthMethod::EcdsaP256, &[&pgp], &id, &hash, &sig).unwrap_err(),
        CertError::TypeUnsupported(2)
    );
    assert_eq!(CertError::TypeUnsupported(2).notify(), 21);
    // Garbage instead of a certificate.
    let junk = CertPayload {
        encoding: CERT_X509_SIG,
        data: vec![0x30, 0x03, 1, 2, 3],
    };
    assert_eq!(
        verify_peer(&trust, AuthMethod::EcdsaP256, &[&junk], &id, &hash, &sig)
            .unwrap_err()
            .notify(),
        notify_type::INVALID_CERTIFICATE
    );
}

#[test]
fn method_mismatch_is_no_proposal_chosen() {
    let rsa = setup(Kind::Rsa2048);
    let ec = setup(Kind::P256);
    let jar = CookieJar::new();
    let id = ec.member.id_payload().unwrap();
    let (_, m1) = Initiator::start_with(Auth::Cert(ec.member), id, Suite::all(3600)).unwrap();
    let e = Responder::start(
        &jar,
        PEER,
        &m1,
        kdc_cfg(rsa.kdc, member_match(), Suite::all(3600)),
    )
    .err()
    .unwrap();
    assert_eq!(e.notify(), notify_type::NO_PROPOSAL_CHOSEN);
}

#[test]
fn psk_and_certificates_side_by_side() {
    // A responder configured with both takes a PSK offer with the PSK.
    let s = setup(Kind::P256);
    let mut cfg = kdc_cfg(s.kdc, member_match(), Suite::all(3600));
    cfg.psk = Zeroizing::new(b"correct horse".to_vec());
    let jar = CookieJar::new();
    let id = IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: b"m".to_vec(),
    };
    let (mut i, m1) = Initiator::start(b"correct horse", id, Suite::all(3600)).unwrap();
    let (mut r, m2) = Responder::start(&jar, PEER, &m1, cfg).unwrap();
    let m3 = i.handle(&m2).unwrap().unwrap();
    let m4 = r.handle(&jar, &m3).unwrap();
    let m5 = i.handle(&m4).unwrap().unwrap();
    let m6 = r.handle(&jar, &m5).unwrap();
    assert!(i.handle(&m6).unwrap().is_none());
    assert_eq!(r.established().unwrap().method, AuthMethod::Psk);
    assert!(r.established().unwrap().peer_cert.is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// With certificates, a replayed message 3 or 5 (or message 2, 4, 6 at the initiator) and
    /// a corrupted copy of message `k` are refused and leave the machine as it was: the
    /// genuine messages then complete the exchange with equal keys.
    #[test]
    fn replays_and_corruption_change_no_state(k in 2usize..=6, at: prop::sample::Index, x in 1u8..=255) {
        let s = setup(Kind::P256);
        let suite = Suite::all(60)[1];
        let jar = CookieJar::new();
        let id = s.member.id_payload().unwrap();
        let (mut i, m1) = Initiator::start_with(Auth::Cert(s.member.clone()), id, vec![suite]).unwrap();
        let (mut r, m2) = Responder::start(&jar, PEER, &m1, kdc_cfg(s.kdc.clone(), member_match(), vec![suite])).unwrap();
        let corrupt = |m: &[u8]| { let mut c = m.to_vec(); let j = at.index(c.len()); c[j] ^= x; c };
        let mut refused = false;
        if k == 2 { refused |= i.handle(&corrupt(&m2)).is_err(); }
        prop_assume!(k != 2 || refused);
        let m3 = i.handle(&m2).unwrap().unwrap();
        if k == 3 { refused |= r.handle(&jar, &corrupt(&m3)).is_err(); }
        prop_assume!(k != 3 || refused);
        let m4 = r.handle(&jar, &m3).unwrap();
        prop_assert!(r.handle(&jar, &m3).is_err(), "replayed message 3");
        prop_assert!(i.handle(&m2).is_err(), "replayed message 2");
        if k == 4 { refused |= i.handle(&corrupt(&m4)).is_err(); }
        prop_assume!(k != 4 || refused);
        let m5 = i.handle(&m4).unwrap().unwrap();
        prop_assert!(i.handle(&m4).is_err(), "replayed message 4");
        if k == 5 { refused |= r.handle(&jar, &corrupt(&m5)).is_err(); }
        prop_assume!(k != 5 || refused);
        let m6 = r.handle(&jar, &m5).unwrap();
        let keys = r.established().unwrap().keys.enc_key.to_vec();
        prop_assert!(r.handle(&jar, &m5).is_err(), "replayed message 5");
        prop_assert!(r.handle(&jar, &m3).is_err(), "message 3 after the exchange");
        prop_assert_eq!(&*r.established().unwrap().keys.enc_key, &keys[..]);
        if k == 6 { refused |= i.handle(&corrupt(&m6)).is_err(); }
        prop_assume!(k != 6 || refused);
        prop_assert!(i.handle(&m6).unwrap().is_none());
        prop_assert!(i.handle(&m6).is_err(), "replayed message 6");
        prop_assert_eq!(&*i.established().unwrap().keys.enc_key, &keys[..]);
    }
}

#[test]
fn member_refuses_a_key_server_certificate_it_was_not_told_to_expect() {
    // The CA issues the members' certificates too: without a name check another member could
    // pose as the key server. The member names the key server's certificate.
    let s = setup(Kind::P256);
    let suite = Suite::all(3600)[1];
    for (want, ok) in [
        ("O=gander test,CN=kdc", true),
        ("O=gander test,CN=member-2", false),
    ] {
        let jar = CookieJar::new();
        let id = s.member.id_payload().unwrap();
        let (i, m1) = Initiator::start_with(Auth::Cert(s.member.clone()), id, vec![suite]).unwrap();
        let mut i = i.expect_peer_cert(CertMatch::Subject(want.into()));
        let (mut r, m2) = Responder::start(
            &jar,
            PEER,
            &m1,
            kdc_cfg(s.kdc.clone(), member_match(), vec![suite]),
        )
        .unwrap();
        let m3 = i.handle(&m2).unwrap().unwrap();
        let m4 = r.handle(&jar, &m3).unwrap();
        let m5 = i.handle(&m4).unwrap().unwrap();
        let m6 = r.handle(&jar, &m5).unwrap();
        let res = i.handle(&m6);
        assert_eq!(res.is_ok(), ok, "{want}: {res:?}");
        if !ok {
            assert_eq!(
                res.unwrap_err(),
                Phase1Error::Cert(CertError::NotAuthorised)
            );
            assert!(i.established().is_none());
        }
    }
}
