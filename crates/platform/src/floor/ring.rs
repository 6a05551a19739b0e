//! Floor operations timed with *ring* 0.17, the crypto provider of gander's rustls backend,
//! called the way rustls 0.23 and rustls-webpki 0.103 call it:
//!
//! * handshake signatures: `RsaKeyPair::sign` with `RSA_PSS_SHA512` (rustls's RSA signer
//!   offers PSS-SHA512 first and a rustls peer accepts it; the digest over 64 bytes costs the
//!   same as SHA-256), `RSA_PKCS1_SHA256` below TLS 1.2 (never reached: rustls speaks 1.2 and
//!   1.3 only); `EcdsaKeyPair::sign` for ECDSA keys;
//! * every verification, handshake (RSA-PSS-SHA512) or certificate (PKCS#1 v1.5 SHA-256):
//!   `UnparsedPublicKey::verify`, which parses
//!   the public key and sets it up on every call. webpki keeps no decoded keys, so a
//!   certificate signature costs rustls as much as a handshake signature with a new key;
//! * key agreement: `EphemeralPrivateKey::generate` + `compute_public_key` (generation) and a
//!   fresh private key + `agree_ephemeral` (derivation; *ring* consumes the private key, and
//!   making one is drawing random bytes, the scalar multiplication is in the two timed calls);
//! * certificate decoding (not counted): `webpki::EndEntityCert::try_from`.
//!
//! RSA key transport and finite-field DHE do not exist in rustls; keys below 2048 bits are
//! refused by webpki. Those operations are [`PrepError::Unsupported`] (OpenSSL times them, and
//! the floor says so).

use super::{FloorLib, Group, OpError, OpInput, OpKind, PrepError, Rep};
use gander_tls::pki::KeySpec;
use ring::agreement::{self, EphemeralPrivateKey, UnparsedPublicKey as AgreePublic};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair, UnparsedPublicKey};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::PrivatePkcs8KeyDer;

/// *ring*, the provider the `rustls` backend is built with.
pub struct Ring;

use super::prep_fail as fail;

/// A signer over the scenario's key and the matching verification algorithm.
enum Signer {
    Rsa(RsaKeyPair, &'static signature::RsaParameters),
    Ecdsa(EcdsaKeyPair, &'static signature::EcdsaVerificationAlgorithm),
}

impl Signer {
    fn load(input: &OpInput) -> Result<Self, PrepError> {
        let key = PrivatePkcs8KeyDer::from_pem_file(input.key)
            .map_err(|e| fail(&input.key.display().to_string(), e))?;
        let rng = SystemRandom::new();
        match input.spec {
            KeySpec::Rsa(bits) if bits < 2048 => Err(PrepError::Unsupported(format!(
                "rustls/webpki refuse RSA keys below 2048 bits (this one: {bits})"
            ))),
            KeySpec::Rsa(_) => {
                let kp = RsaKeyPair::from_pkcs8(key.secret_pkcs8_der())
                    .map_err(|e| fail("ring: RSA key", e))?;
                Ok(Signer::Rsa(kp, &signature::RSA_PSS_2048_8192_SHA512))
            }
            KeySpec::MlDsa44 | KeySpec::MlDsa65 => Err(PrepError::Unsupported(
                "ring has no ML-DSA (rustls verifies it with aws-lc-rs only)".into(),
            )),
            KeySpec::P256 | KeySpec::P384 => {
                let (sign_alg, verify_alg) = if input.spec == KeySpec::P256 {
                    (
                        &signature::ECDSA_P256_SHA256_ASN1_SIGNING,
                        &signature::ECDSA_P256_SHA256_ASN1,
                    )
                } else {
                    (
                        &signature::ECDSA_P384_SHA384_ASN1_SIGNING,
                        &signature::ECDSA_P384_SHA384_ASN1,
                    )
                };
                let kp = EcdsaKeyPair::from_pkcs8(sign_alg, key.secret_pkcs8_der(), &rng)
                    .map_err(|e| fail("ring: ECDSA key", e))?;
                Ok(Signer::Ecdsa(kp, verify_alg))
            }
        }
    }

    fn sign(&self, rng: &SystemRandom, msg: &[u8]) -> Result<Vec<u8>, OpError> {
        match self {
            Signer::Rsa(kp, _) => {
                let mut sig = vec![0u8; kp.public().modulus_len()];
                kp.sign(&signature::RSA_PSS_SHA512, rng, msg, &mut sig)
                    .map_err(|e| OpError::library("ring: RSA sign", e))?;
                Ok(sig)
            }
            Signer::Ecdsa(kp, _) => kp
                .sign(rng, msg)
                .map(|s| s.as_ref().to_vec())
                .map_err(|e| OpError::library("ring: ECDSA sign", e)),
        }
    }

    /// The public key in the form *ring* verifies with (RSA: PKCS#1 RSAPublicKey DER; ECDSA:
    /// the uncompressed point), i.e. what webpki hands it from a certificate's SPKI.
    fn public(&self) -> Vec<u8> {
        match self {
            Signer::Rsa(kp, _) => kp.public().as_ref().to_vec(),
            Signer::Ecdsa(kp, _) => kp.public_key().as_ref().to_vec(),
        }
    }

    fn verify_alg(&self) -> &'static dyn signature::VerificationAlgorithm {
        match self {
            Signer::Rsa(_, a) => *a,
            Signer::Ecdsa(_, a) => *a,
        }
    }
}

fn agreement_alg(g: Group) -> Result<&'static agreement::Algorithm, PrepError> {
    match g {
        Group::X25519 => Ok(&agreement::X25519),
        Group::P256 => Ok(&agreement::ECDH_P256),
        Group::Dh2048 => Err(PrepError::Unsupported(
            "rustls has no finite-field DHE with ring".into(),
        )),
    }
}

impl FloorLib for Ring {
    fn id(&self) -> &'static str {
        "ring"
    }
    fn name(&self) -> String {
        "ring 0.17 (rustls 0.23)".into()
    }
    fn ecdh_group(&self) -> Group {
        // rustls's default key-exchange groups start with X25519.
        Group::X25519
    }
    fn dh_name(&self) -> String {
        "DH-2048 (not in rustls)".into()
    }

    fn prepare<'a>(&'a self, op: OpKind, input: &OpInput<'a>) -> Result<Rep<'a>, PrepError> {
        let rng = SystemRandom::new();
        let msg = [0x5au8; 64];
        match op {
            OpKind::DecodeCert => super::webpki_decode_cert(input),
            OpKind::Sign => {
                let s = Signer::load(input)?;
                Ok(Box::new(move || s.sign(&rng, &msg).map(|_| ())))
            }
            OpKind::VerifyFresh | OpKind::VerifyCert => {
                let s = Signer::load(input)?;
                let (sig, alg) = match (&s, op) {
                    // Certificates are signed sha256WithRSAEncryption (PKCS#1 v1.5).
                    (Signer::Rsa(kp, _), OpKind::VerifyCert) => {
                        let mut sig = vec![0u8; kp.public().modulus_len()];
                        kp.sign(&signature::RSA_PKCS1_SHA256, &rng, &msg, &mut sig)
                            .map_err(|e| fail("ring: RSA sign", e))?;
                        let alg: &'static dyn signature::VerificationAlgorithm =
                            &signature::RSA_PKCS1_2048_8192_SHA256;
                        (sig, alg)
                    }
                    _ => (s.sign(&rng, &msg)?, s.verify_alg()),
                };
                let public = s.public();
                Ok(Box::new(move || {
                    UnparsedPublicKey::new(alg, &public)
                        .verify(&msg, &sig)
                        .map_err(|_| OpError::Check("ring: verification of own signature failed"))
                }))
            }
            OpKind::PremasterDecrypt | OpKind::PremasterEncrypt => Err(PrepError::Unsupported(
                "rustls has no RSA key transport".into(),
            )),
            OpKind::KemKeygen | OpKind::KemEncap | OpKind::KemDecap => {
                Err(PrepError::Unsupported("ring has no ML-KEM".into()))
            }
            OpKind::Keygen(g) => {
                let alg = agreement_alg(g)?;
                Ok(Box::new(move || {
                    let k = EphemeralPrivateKey::generate(alg, &rng)
                        .map_err(|e| OpError::library("ring", e))?;
                    k.compute_public_key()
                        .map(|_| ())
                        .map_err(|e| OpError::library("ring", e))
                }))
            }
            OpKind::Derive(g) => {
                let alg = agreement_alg(g)?;
                let peer = EphemeralPrivateKey::generate(alg, &rng)
                    .and_then(|k| k.compute_public_key())
                    .map_err(|e| fail("ring", e))?;
                let peer = peer.as_ref().to_vec();
                Ok(Box::new(move || {
                    let mine = EphemeralPrivateKey::generate(alg, &rng)
                        .map_err(|e| OpError::library("ring", e))?;
                    agreement::agree_ephemeral(mine, &AgreePublic::new(alg, &peer), |k| k.len())
                        .map(|_| ())
                        .map_err(|e| OpError::library("ring", e))
                }))
            }
        }
    }
}
