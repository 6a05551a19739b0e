//! Sign/verify round trips for every [`SignatureAlgorithm`] and RSA size, key (de)serialisation,
//! PSS salt handling, and cross-verification of our signatures with the `openssl` command-line
//! tool (an independent reader of the same encodings).

use std::path::PathBuf;
use std::process::Command;

use gander_sec::signature::{
    ecdsa_der_to_raw, ecdsa_raw_to_der, SignatureAlgorithm, SigningKey, VerifyingKey,
    ECDSA_P256_RAW_LEN,
};
use gander_sec::CryptoError;

const MSG: &[u8] = b"GOOSE APDU: gocbRef=IMPLD0/LLN0$GO$gcb01 stNum=1 sqNum=0";

/// Round trip plus the checks every key gets.
fn exercise(sk: &SigningKey) {
    let alg = sk.algorithm();
    let vk = sk.verifying_key().unwrap();
    let sig = sk.sign(MSG).unwrap();
    match alg {
        SignatureAlgorithm::EcdsaP256Sha256 => assert!(sig.len() <= sk.signature_len(), "{alg}"),
        _ => assert_eq!(sig.len(), sk.signature_len(), "{alg}"),
    }
    vk.verify(MSG, &sig).unwrap();
    let mut bad = sig.clone();
    bad[sig.len() / 2] ^= 0x01;
    assert_eq!(
        vk.verify(MSG, &bad),
        Err(CryptoError::VerifyFailed),
        "{alg}: flipped signature"
    );
    let mut msg = MSG.to_vec();
    msg[0] ^= 0x80;
    assert_eq!(
        vk.verify(&msg, &sig),
        Err(CryptoError::VerifyFailed),
        "{alg}: flipped message"
    );
    assert_eq!(
        vk.verify(MSG, &sig[..sig.len() - 1]),
        Err(CryptoError::VerifyFailed),
        "{alg}: short"
    );

    // PKCS#8 PEM and SPKI round trips.
    let pem = sk.to_pkcs8_pem().unwrap();
    assert!(
        pem.starts_with("-----BEGIN PRIVATE KEY-----"),
        "{alg}: PKCS#8 PEM"
    );
    let sk2 = SigningKey::from_pkcs8_pem(alg, pem.as_bytes()).unwrap();
    vk.verify(MSG, &sk2.sign(MSG).unwrap()).unwrap();
    let vk_pem = VerifyingKey::from_spki_pem(alg, vk.to_spki_pem().unwrap().as_bytes()).unwrap();
    vk_pem.verify(MSG, &sig).unwrap();
    assert_eq!(vk_pem.to_spki_der().unwrap(), vk.to_spki_der().unwrap());
}

#[test]
fn ecdsa_and_ed25519_round_trips() {
    for alg in [
        SignatureAlgorithm::EcdsaP256Sha256,
        SignatureAlgorithm::Ed25519,
    ] {
        let sk = SigningKey::generate(alg, 0).unwrap();
        if alg == SignatureAlgorithm::EcdsaP256Sha256 {
            assert_eq!(sk.bits(), 256);
        }
        exercise(&sk);
        let vk = sk.verifying_key().unwrap();
        let raw = VerifyingKey::from_raw(alg, &vk.to_raw().unwrap()).unwrap();
        raw.verify(MSG, &sk.sign(MSG).unwrap()).unwrap();
    }
    // ECDSA raw r||s: fixed length, converts back to a DER signature that verifies.
    let sk = SigningKey::generate(SignatureAlgorithm::EcdsaP256Sha256, 0).unwrap();
    let vk = sk.verifying_key().unwrap();
    for _ in 0..20 {
        let raw = ecdsa_der_to_raw(&sk.sign(MSG).unwrap()).unwrap();
        assert_eq!(raw.len(), ECDSA_P256_RAW_LEN);
        vk.verify(MSG, &ecdsa_raw_to_der(&raw).unwrap()).unwrap();
    }
}

#[test]
fn rsa_round_trips_every_size() {
    for bits in [1024u32, 2048, 3072, 4096] {
        let pkcs1 = SigningKey::generate(SignatureAlgorithm::RsaPkcs1v15Sha256, bits).unwrap();
        assert_eq!(pkcs1.bits(), bits);
        assert_eq!(pkcs1.signature_len(), bits as usize / 8);
        exercise(&pkcs1);
        // The same key pair used for PSS.
        let pem = pkcs1.to_pkcs8_pem().unwrap();
        let pss =
            SigningKey::from_pkcs8_pem(SignatureAlgorithm::RsaPssSha256, pem.as_bytes()).unwrap();
        exercise(&pss);
        // A PKCS#1 v1.5 signature is not a PSS signature and the reverse.
        let pss_vk = pss.verifying_key().unwrap();
        let pkcs1_vk = pkcs1.verifying_key().unwrap();
        assert_eq!(
            pss_vk.verify(MSG, &pkcs1.sign(MSG).unwrap()),
            Err(CryptoError::VerifyFailed)
        );
        assert_eq!(
            pkcs1_vk.verify(MSG, &pss.sign(MSG).unwrap()),
            Err(CryptoError::VerifyFailed)
        );
    }
}

#[test]
fn rsa_rejects_small_and_huge_moduli() {
    for bits in [0u32, 512, 1023, 16385] {
        assert!(
            matches!(
                SigningKey::generate(SignatureAlgorithm::RsaPkcs1v15Sha256, bits),
                Err(CryptoError::BadKeyLength { .. })
            ),
            "{bits}"
        );
    }
}

#[test]
fn pss_salt_length_is_enforced() {
    let sk = SigningKey::generate(SignatureAlgorithm::RsaPssSha256, 2048).unwrap();
    let vk = sk.verifying_key().unwrap();
    assert_eq!(vk.pss_salt_len(), 32);
    let sig32 = sk.sign(MSG).unwrap();
    // PSS is randomised: two signatures differ, both verify.
    assert_ne!(sig32, sk.sign(MSG).unwrap());
    vk.verify(MSG, &sig32).unwrap();
    assert_eq!(
        vk.clone().with_pss_salt_len(0).verify(MSG, &sig32),
        Err(CryptoError::VerifyFailed)
    );

    let sk0 = SigningKey::from_pkcs8_pem(
        SignatureAlgorithm::RsaPssSha256,
        sk.to_pkcs8_pem().unwrap().as_bytes(),
    )
    .unwrap()
    .with_pss_salt_len(0);
    let sig0 = sk0.sign(MSG).unwrap();
    // Salt 0 makes PSS deterministic.
    assert_eq!(sig0, sk0.sign(MSG).unwrap());
    assert_eq!(sk0.verifying_key().unwrap().pss_salt_len(), 0);
    sk0.verifying_key().unwrap().verify(MSG, &sig0).unwrap();
    assert_eq!(vk.verify(MSG, &sig0), Err(CryptoError::VerifyFailed));
}

// ---------------------------------------------------------------------------------------------
// Cross-verification with the openssl CLI.

fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gander-sec-sig-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Verifies `sig` over `MSG` with the `openssl` tool; `None` if the tool is not installed.
fn cli_verify(alg: SignatureAlgorithm, vk: &VerifyingKey, sig: &[u8]) -> Option<bool> {
    let dir = scratch_dir(alg.name());
    let (pubf, sigf, msgf) = (
        dir.join("pub.pem"),
        dir.join("sig.bin"),
        dir.join("msg.bin"),
    );
    std::fs::write(&pubf, vk.to_spki_pem().unwrap()).unwrap();
    std::fs::write(&sigf, sig).unwrap();
    std::fs::write(&msgf, MSG).unwrap();
    let mut cmd = Command::new("openssl");
    match alg {
        SignatureAlgorithm::Ed25519 => {
            cmd.args(["pkeyutl", "-verify", "-pubin", "-inkey"])
                .arg(&pubf)
                .arg("-rawin")
                .arg("-in")
                .arg(&msgf);
            cmd.arg("-sigfile").arg(&sigf);
        }
        _ => {
            cmd.args(["dgst", "-sha256", "-verify"])
                .arg(&pubf)
                .arg("-signature")
                .arg(&sigf);
            if alg == SignatureAlgorithm::RsaPssSha256 {
                cmd.args([
                    "-sigopt",
                    "rsa_padding_mode:pss",
                    "-sigopt",
                    "rsa_pss_saltlen:32",
                ]);
                cmd.args(["-sigopt", "rsa_mgf1_md:sha256"]);
            }
            cmd.arg(&msgf);
        }
    }
    let out = cmd.output();
    let _ = std::fs::remove_dir_all(&dir);
    match out {
        Ok(o) => Some(o.status.success()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("running openssl: {e}"),
    }
}

#[test]
fn signatures_verify_with_openssl_cli() {
    let mut ran = 0;
    // OpenSSL 3.0's command-line tool knows no ML-DSA or SLH-DSA.
    for alg in SignatureAlgorithm::CLASSICAL {
        let sk = SigningKey::generate(alg, 2048).unwrap();
        let vk = sk.verifying_key().unwrap();
        let sig = sk.sign(MSG).unwrap();
        let Some(ok) = cli_verify(alg, &vk, &sig) else {
            eprintln!("NOTE: `openssl` command not found; CLI cross-verification not run");
            return;
        };
        assert!(ok, "{alg}: openssl CLI rejected our signature");
        let mut bad = sig.clone();
        bad[5] ^= 0x10;
        assert_eq!(
            cli_verify(alg, &vk, &bad),
            Some(false),
            "{alg}: openssl CLI accepted a flipped bit"
        );
        ran += 1;
    }
    assert_eq!(ran, SignatureAlgorithm::CLASSICAL.len());
}
