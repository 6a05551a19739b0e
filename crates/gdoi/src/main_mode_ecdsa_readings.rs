//! The two readings of RFC 4754 with RFC 2409 5.1 that the responder and initiator accept on
//! input (`Exchange::hash` and `Exchange::hash_hashed_again`).

use super::*;
use crate::suite::{Group, HashAlg};
use openssl::hash::{hash, MessageDigest};
use openssl::pkey::PKey;
use openssl::sign::Signer;

fn exchange(method: AuthMethod, negotiated: HashAlg) -> Exchange {
    Exchange {
        suite: Suite {
            aes_bits: 256,
            hash: negotiated,
            group: Group::Ecp384,
            life_secs: 3600,
        },
        method,
        cky_i: [1; 8],
        cky_r: [2; 8],
        sai_b: vec![3; 40],
        gxi: vec![4; 96],
        gxr: vec![5; 96],
        keys: Phase1Keys {
            skeyid: Zeroizing::new(vec![6; 48]),
            skeyid_d: Zeroizing::new(vec![7; 48]),
            skeyid_a: Zeroizing::new(vec![8; 48]),
            enc_key: Zeroizing::new(vec![9; 32]),
        },
    }
}

fn hmac(md: MessageDigest, key: &[u8], data: &[u8]) -> Vec<u8> {
    let k = PKey::hmac(key).unwrap();
    let mut s = Signer::new(md, &k).unwrap();
    s.update(data).unwrap();
    s.sign_to_vec().unwrap()
}

/// The Go implementation (github.com/dscsystems/go-iec61850 `gdoi`) with ECDSA P-256 under
/// the suite AES-CBC-256/SHA2-384/ECP-384 that gander offers first: HASH_I is HMAC-SHA-384
/// over g^xi | g^xr | CKY-I | CKY-R | SAi_b | IDii_b, and its signature is ECDSA over the
/// SHA-256 of those 48 octets. gander's key server refused it (INVALID-SIGNATURE, "signature
/// does not verify") while it accepted only the digest HMAC-SHA-256(...) of RFC 4754 as
/// strongSwan reads it.
#[test]
fn the_hashed_again_digest_is_the_go_reading() {
    let x = exchange(AuthMethod::EcdsaP256, HashAlg::Sha384);
    let id_b = [1u8, 0, 0, 0, 10, 77, 0, 2];
    let mut transcript = Vec::new();
    for part in [&x.gxi[..], &x.gxr, &x.cky_i, &x.cky_r, &x.sai_b, &id_b] {
        transcript.extend_from_slice(part);
    }
    let neg = hmac(MessageDigest::sha384(), &x.keys.skeyid, &transcript);
    let go = hash(MessageDigest::sha256(), &neg).unwrap().to_vec();
    assert_eq!(x.hash_hashed_again(true, &id_b).unwrap(), Some(go.clone()));
    // gander's own digest stays the RFC 4754 one, HMAC of the curve's hash.
    let own = hmac(MessageDigest::sha256(), &x.keys.skeyid, &transcript);
    assert_eq!(x.hash(true, &id_b).unwrap().to_vec(), own);
    assert_ne!(own, go);
    // HASH_R swaps the exchange values and cookies (RFC 2409 5).
    assert_ne!(x.hash_hashed_again(false, &id_b).unwrap(), Some(go));
}

#[test]
fn only_ecdsa_has_a_second_reading() {
    for m in [AuthMethod::Psk, AuthMethod::RsaSig] {
        assert_eq!(
            exchange(m, HashAlg::Sha256)
                .hash_hashed_again(true, b"id")
                .unwrap(),
            None
        );
    }
    let x = exchange(AuthMethod::EcdsaP384, HashAlg::Sha256);
    assert_eq!(
        x.hash_hashed_again(true, b"id").unwrap().map(|d| d.len()),
        Some(48)
    );
}

/// A self-signed P-256 certificate and its credentials (the trust store is the certificate
/// itself; only signing is exercised here).
fn p256_credentials() -> (Arc<Credentials>, PKey<openssl::pkey::Public>) {
    use openssl::asn1::Asn1Time;
    use openssl::bn::BigNum;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::nid::Nid;
    use openssl::x509::{X509Builder, X509NameBuilder};
    let key = PKey::from_ec_key(
        EcKey::generate(&EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap()).unwrap(),
    )
    .unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", "member-ec").unwrap();
    let name = name.build();
    let mut b = X509Builder::new().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(&BigNum::from_u32(1).unwrap().to_asn1_integer().unwrap())
        .unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::days_from_now(1).unwrap())
        .unwrap();
    b.sign(&key, MessageDigest::sha256()).unwrap();
    let cert = b.build();
    let trust = crate::trust::TrustStore::from_pem(&cert.to_pem().unwrap(), None).unwrap();
    let public = PKey::public_key_from_der(&key.public_key_to_der().unwrap()).unwrap();
    (
        Arc::new(Credentials::new(cert, vec![], key, Arc::new(trust)).unwrap()),
        public,
    )
}

fn signed_digest_of(payloads: &[Payload]) -> Vec<u8> {
    payloads
        .iter()
        .find_map(|p| match p {
            Payload::Sig(s) => Some(s.clone()),
            _ => None,
        })
        .unwrap()
}

/// With the `go-iec61850` profile gander signs, for that peer only, the digest the Go
/// implementation verifies (the SHA-256 of HASH_I computed with the negotiated PRF, here
/// HMAC-SHA-384); by default it signs HASH_I computed with HMAC-SHA-256 (RFC 2409 5.1 with
/// RFC 4754). Go refused the default with "key server signature: signature does not verify".
#[test]
fn the_go_profile_signs_the_hashed_again_digest_and_the_default_does_not() {
    let (creds, public) = p256_credentials();
    let x = exchange(AuthMethod::EcdsaP256, HashAlg::Sha384);
    let id = creds.id_payload().unwrap();
    let id_b = id_body(&id);
    let auth = Auth::Cert(creds);
    let rfc = x.hash(true, &id_b).unwrap();
    let go = x.hash_hashed_again(true, &id_b).unwrap().unwrap();
    let verifies = |sig: &[u8], digest: &[u8]| {
        crate::cert_auth::verify_hash(AuthMethod::EcdsaP256, &public, digest, sig).is_ok()
    };
    let s = signed_digest_of(&x.own_auth(true, &id, &auth, PeerProfile::Rfc).unwrap());
    assert!(verifies(&s, &rfc) && !verifies(&s, &go));
    let s = signed_digest_of(
        &x.own_auth(true, &id, &auth, PeerProfile::GoIec61850)
            .unwrap(),
    );
    assert!(verifies(&s, &go) && !verifies(&s, &rfc));
    // The profile changes nothing with a pre-shared key: HASH_I as RFC 2409 5 has it.
    let psk = Auth::Psk(Zeroizing::new(vec![1; 16]));
    assert_eq!(
        x.own_auth(true, &id, &psk, PeerProfile::GoIec61850)
            .unwrap(),
        x.own_auth(true, &id, &psk, PeerProfile::Rfc).unwrap()
    );
}

/// The responder accepts message 5 signed either way (the other reading's digest is computed
/// only when the first does not verify, `cert_auth::verify_peer_then`) and refuses a signature
/// over anything else.
#[test]
fn peer_auth_accepts_both_readings_and_nothing_else() {
    let (creds, _) = p256_credentials();
    let x = exchange(AuthMethod::EcdsaP256, HashAlg::Sha384);
    let id = creds.id_payload().unwrap();
    let auth = Auth::Cert(creds.clone());
    for profile in [PeerProfile::Rfc, PeerProfile::GoIec61850] {
        let p = x.own_auth(true, &id, &auth, profile).unwrap();
        let (got_id, cert) = x.peer_auth(true, &p, &auth).unwrap();
        assert_eq!(got_id, id, "{profile:?}");
        assert_eq!(cert.unwrap().subject, "CN=member-ec");
    }
    let mut p = x.own_auth(true, &id, &auth, PeerProfile::Rfc).unwrap();
    for q in &mut p {
        if let Payload::Sig(s) = q {
            *s = creds.sign(&[0x42; 32]).unwrap();
        }
    }
    assert!(matches!(
        x.peer_auth(true, &p, &auth),
        Err(Phase1Error::Cert(CertError::BadSignature))
    ));
}
