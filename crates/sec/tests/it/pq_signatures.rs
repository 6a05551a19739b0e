//! Post-quantum signatures: ML-DSA-44/65 (FIPS 204) and SLH-DSA-SHA2-128s/128f (FIPS 205).
//!
//! * `ml_dsa_*_known_answers`: the deterministic, pure-mode ML-DSA known answers
//!   `asymmetric/MLDSA/kat_MLDSA_{44,65}_det_pure.rsp` of the PyPI package `cryptography_vectors`
//!   (the package the CAVP GCM tests read; 100 records each: seed `xi`, public key `pk`,
//!   message, 16-byte context `ctx`, signed message `sm` = signature || message). From the seed
//!   the key must give `pk` byte for byte and sign to the published signature; the signature
//!   must verify, and one flipped bit in signature, message or context must not.
//! * Round trips for every parameter set: sign/verify, PKCS#8/SPKI PEM and raw forms, flipped
//!   bits, truncated and junk signatures, wrong-algorithm keys, and a key file naming them.
//!
//! No published SLH-DSA answers are in the pinned vector package; SLH-DSA is covered by round
//! trips and negatives here and by the `slh-dsa` crate's own ACVP tests upstream.

use crate::{cavp, records};

use gander_sec::signature::{SignatureAlgorithm, SigningKey, VerifyingKey};
use gander_sec::{CryptoError, KeyStore};

const MSG: &[u8] = b"GOOSE APDU: gocbRef=IMPLD0/LLN0$GO$gcb01 stNum=1 sqNum=0";

fn flip(v: &[u8], bit: usize) -> Vec<u8> {
    let mut w = v.to_vec();
    w[bit / 8] ^= 1 << (bit % 8);
    w
}

fn ml_dsa_kat(alg: SignatureAlgorithm, file: &str, sig_len: usize) {
    let path = cavp::vectors_dir().join("asymmetric/MLDSA").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // Records follow each other without blank lines, each starting at `count = n`: put the
    // blank line in for the shared reader.
    let text = text.replace("\ncount = ", "\n\ncount = ");
    let recs: Vec<_> = records::parse_records(file, &text)
        .into_iter()
        .filter(|r| r.has("xi"))
        .collect();
    assert_eq!(recs.len(), 100, "{file}");
    for r in &recs {
        let (xi, pk, msg, ctx, sm) = (
            r.hex("xi"),
            r.hex("pk"),
            r.hex("msg"),
            r.hex("ctx"),
            r.hex("sm"),
        );
        assert_eq!(sm.len(), sig_len + msg.len(), "{}", r.origin);
        let sig = &sm[..sig_len];
        let sk = SigningKey::from_raw(alg, &xi).unwrap();
        let vk = sk.verifying_key().unwrap();
        assert_eq!(
            hex::encode(vk.to_raw().unwrap()),
            hex::encode(&pk),
            "{}: pk",
            r.origin
        );
        let ours = sk.sign_with_context(&msg, &ctx).unwrap();
        assert_eq!(
            hex::encode(&ours),
            hex::encode(sig),
            "{}: signature",
            r.origin
        );
        let vk = VerifyingKey::from_raw(alg, &pk).unwrap();
        vk.verify_with_context(&msg, &ctx, sig).unwrap();
        for bit in [0, sig_len * 4 + 1, sig_len * 8 - 1] {
            assert_eq!(
                vk.verify_with_context(&msg, &ctx, &flip(sig, bit)),
                Err(CryptoError::VerifyFailed),
                "{}: signature bit {bit}",
                r.origin
            );
        }
        if !msg.is_empty() {
            assert_eq!(
                vk.verify_with_context(&flip(&msg, 0), &ctx, sig),
                Err(CryptoError::VerifyFailed),
                "{}: message bit",
                r.origin
            );
        }
        assert_eq!(
            vk.verify_with_context(&msg, &flip(&ctx, 7), sig),
            Err(CryptoError::VerifyFailed),
            "{}: context bit",
            r.origin
        );
        // The context is part of what is signed: the empty-context check must fail too.
        assert_eq!(
            vk.verify(&msg, sig),
            Err(CryptoError::VerifyFailed),
            "{}",
            r.origin
        );
    }
}

#[test]
fn ml_dsa_44_known_answers() {
    ml_dsa_kat(
        SignatureAlgorithm::MlDsa44,
        "kat_MLDSA_44_det_pure.rsp",
        2420,
    );
}

#[test]
fn ml_dsa_65_known_answers() {
    ml_dsa_kat(
        SignatureAlgorithm::MlDsa65,
        "kat_MLDSA_65_det_pure.rsp",
        3309,
    );
}

#[test]
fn every_post_quantum_algorithm_round_trips() {
    for alg in SignatureAlgorithm::POST_QUANTUM {
        let sk = SigningKey::generate(alg, 0).unwrap();
        let vk = sk.verifying_key().unwrap();
        let sig = sk.sign(MSG).unwrap();
        assert_eq!(sig.len(), sk.signature_len(), "{alg}");
        assert_eq!(Some(sig.len()), alg.fixed_signature_len(), "{alg}");
        assert_eq!(vk.signature_len(), sig.len(), "{alg}");
        vk.verify(MSG, &sig).unwrap();
        for bit in [0, sig.len() * 4, sig.len() * 8 - 1] {
            assert_eq!(
                vk.verify(MSG, &flip(&sig, bit)),
                Err(CryptoError::VerifyFailed),
                "{alg}"
            );
        }
        assert_eq!(
            vk.verify(&flip(MSG, 3), &sig),
            Err(CryptoError::VerifyFailed),
            "{alg}"
        );
        for junk in [&[][..], &sig[..sig.len() - 1], &[0u8; 64]] {
            assert_eq!(
                vk.verify(MSG, junk),
                Err(CryptoError::VerifyFailed),
                "{alg}"
            );
        }
        let mut long = sig.clone();
        long.push(0);
        assert_eq!(
            vk.verify(MSG, &long),
            Err(CryptoError::VerifyFailed),
            "{alg}"
        );
        // Context strings separate domains.
        let with_ctx = sk.sign_with_context(MSG, b"gander").unwrap();
        vk.verify_with_context(MSG, b"gander", &with_ctx).unwrap();
        assert_eq!(
            vk.verify(MSG, &with_ctx),
            Err(CryptoError::VerifyFailed),
            "{alg}"
        );
        assert!(sk.sign_with_context(MSG, &[0; 256]).is_err(), "{alg}");

        // Key forms.
        let pem = sk.to_pkcs8_pem().unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "{alg}");
        let sk2 = SigningKey::from_pkcs8_pem(alg, pem.as_bytes()).unwrap();
        vk.verify(MSG, &sk2.sign(MSG).unwrap()).unwrap();
        let spki = vk.to_spki_pem().unwrap();
        assert!(spki.starts_with("-----BEGIN PUBLIC KEY-----"), "{alg}");
        let vk2 = VerifyingKey::from_spki_pem(alg, spki.as_bytes()).unwrap();
        vk2.verify(MSG, &sig).unwrap();
        assert_eq!(vk2.to_spki_der().unwrap(), vk.to_spki_der().unwrap());
        VerifyingKey::from_raw(alg, &vk.to_raw().unwrap())
            .unwrap()
            .verify(MSG, &sig)
            .unwrap();
        // A key of another parameter set is refused, not misread.
        for other in SignatureAlgorithm::POST_QUANTUM
            .into_iter()
            .filter(|o| *o != alg)
        {
            assert!(
                SigningKey::from_pkcs8_pem(other, pem.as_bytes()).is_err(),
                "{alg} as {other}"
            );
            assert!(
                VerifyingKey::from_spki_pem(other, spki.as_bytes()).is_err(),
                "{alg} as {other}"
            );
        }
        assert!(SigningKey::from_pkcs8_pem(SignatureAlgorithm::Ed25519, pem.as_bytes()).is_err());
        assert!(SigningKey::from_pkcs8_pem(alg, b"garbage").is_err());
        assert!(VerifyingKey::from_raw(alg, &[0; 7]).is_err());
    }
}

#[test]
fn key_files_name_post_quantum_keys() {
    let dir = std::env::temp_dir().join(format!("gander-pq-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut toml = String::new();
    for (i, alg) in SignatureAlgorithm::POST_QUANTUM.into_iter().enumerate() {
        let sk = SigningKey::generate(alg, 0).unwrap();
        std::fs::write(
            dir.join(format!("{i}.key")),
            sk.to_pkcs8_pem().unwrap().as_bytes(),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("{i}.pem")),
            sk.verifying_key().unwrap().to_spki_pem().unwrap(),
        )
        .unwrap();
        toml += &format!(
            "[[key]]\nid = {}\nsig = \"{alg}\"\nprivate_key_file = \"{i}.key\"\n[[key]]\nid = {}\nsig = \"{alg}\"\npublic_key_file = \"{i}.pem\"\n",
            10 + i,
            20 + i
        );
    }
    let path = dir.join("keys.toml");
    std::fs::write(&path, &toml).unwrap();
    let store = KeyStore::load(&path, gander_sec::default_provider()).unwrap();
    for (i, alg) in SignatureAlgorithm::POST_QUANTUM.into_iter().enumerate() {
        let publisher = store
            .require(10 + i as u32)
            .unwrap()
            .signature
            .as_ref()
            .unwrap();
        let subscriber = store
            .require(20 + i as u32)
            .unwrap()
            .signature
            .as_ref()
            .unwrap();
        assert_eq!(publisher.algorithm, alg);
        assert_eq!(publisher.wire_len(), alg.fixed_signature_len().unwrap());
        let sig = publisher.signing.as_ref().unwrap().sign(MSG).unwrap();
        subscriber.verifying.verify(MSG, &sig).unwrap();
    }
    // A private key file of the wrong parameter set is a key error naming the key id.
    let bad = "[[key]]\nid = 1\nsig = \"ml-dsa-65\"\nprivate_key_file = \"0.key\"\n";
    std::fs::write(&path, bad).unwrap();
    let err = KeyStore::load(&path, gander_sec::default_provider())
        .unwrap_err()
        .to_string();
    assert!(err.contains("key 1"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
