//! Floor operations timed with aws-lc-rs, the crypto provider of the `rustls-awslc` backend,
//! called the way rustls 0.23's aws-lc-rs provider and rustls-webpki call it (the same shapes
//! as [`super::ring`], whose notes apply):
//!
//! * handshake signatures: RSA-PSS-SHA512, ECDSA, and ML-DSA (`PqdsaKeyPair::sign`, FIPS 204
//!   pure mode as draft-ietf-tls-mldsa uses it);
//! * verifications: `UnparsedPublicKey::verify`, which parses and sets up the key on every call
//!   (webpki keeps no decoded keys);
//! * key agreement: `EphemeralPrivateKey::generate` + `compute_public_key`, `agree_ephemeral`;
//! * ML-KEM-768 (FIPS 203), as rustls's `X25519MLKEM768` and `MLKEM768` groups do it: the client
//!   generates a decapsulation key and sends its encapsulation key; the server imports that key
//!   (new in every handshake) and encapsulates; the client decapsulates.
//!
//! RSA key transport and finite-field DHE do not exist in rustls ([`PrepError::Unsupported`]).

use super::{FloorLib, Group, OpError, OpInput, OpKind, PrepError, Rep};
use aws_lc_rs::agreement::{self, EphemeralPrivateKey, UnparsedPublicKey as AgreePublic};
use aws_lc_rs::kem::{Ciphertext, DecapsulationKey, EncapsulationKey, ML_KEM_768};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    self, EcdsaKeyPair, KeyPair, PqdsaKeyPair, RsaKeyPair, UnparsedPublicKey,
};
use gander_tls::pki::KeySpec;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::PrivatePkcs8KeyDer;

/// aws-lc-rs, the provider the `rustls-awslc` backend is built with.
pub struct AwsLc;

use super::prep_fail as fail;

fn lib(what: &'static str) -> impl Fn(aws_lc_rs::error::Unspecified) -> OpError {
    move |e| OpError::library(what, e)
}

/// A signer over the scenario's key and the matching verification algorithm.
enum Signer {
    Rsa(RsaKeyPair),
    Ecdsa(EcdsaKeyPair, &'static signature::EcdsaVerificationAlgorithm),
    MlDsa(PqdsaKeyPair, &'static signature::PqdsaVerificationAlgorithm),
}

impl Signer {
    fn load(input: &OpInput) -> Result<Self, PrepError> {
        let key = PrivatePkcs8KeyDer::from_pem_file(input.key)
            .map_err(|e| fail(&input.key.display().to_string(), e))?;
        let der = key.secret_pkcs8_der();
        match input.spec {
            KeySpec::Rsa(bits) if bits < 2048 => Err(PrepError::Unsupported(format!(
                "rustls/webpki refuse RSA keys below 2048 bits (this one: {bits})"
            ))),
            KeySpec::Rsa(_) => Ok(Signer::Rsa(
                RsaKeyPair::from_pkcs8(der).map_err(|e| fail("aws-lc-rs: RSA key", e))?,
            )),
            KeySpec::P256 | KeySpec::P384 => {
                let (s, v) = if input.spec == KeySpec::P256 {
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
                Ok(Signer::Ecdsa(
                    EcdsaKeyPair::from_pkcs8(s, der)
                        .map_err(|e| fail("aws-lc-rs: ECDSA key", e))?,
                    v,
                ))
            }
            KeySpec::MlDsa44 | KeySpec::MlDsa65 => {
                let (s, v) = if input.spec == KeySpec::MlDsa44 {
                    (&signature::ML_DSA_44_SIGNING, &signature::ML_DSA_44)
                } else {
                    (&signature::ML_DSA_65_SIGNING, &signature::ML_DSA_65)
                };
                Ok(Signer::MlDsa(
                    PqdsaKeyPair::from_pkcs8(s, der)
                        .map_err(|e| fail("aws-lc-rs: ML-DSA key", e))?,
                    v,
                ))
            }
        }
    }

    fn sign(&self, rng: &SystemRandom, msg: &[u8]) -> Result<Vec<u8>, OpError> {
        match self {
            Signer::Rsa(kp) => {
                let mut sig = vec![0u8; kp.public_modulus_len()];
                kp.sign(&signature::RSA_PSS_SHA512, rng, msg, &mut sig)
                    .map_err(lib("aws-lc-rs: RSA sign"))?;
                Ok(sig)
            }
            Signer::Ecdsa(kp, _) => kp
                .sign(rng, msg)
                .map(|s| s.as_ref().to_vec())
                .map_err(lib("aws-lc-rs: ECDSA sign")),
            Signer::MlDsa(kp, _) => {
                let mut sig = vec![0u8; kp.algorithm().signature_len()];
                let n = kp
                    .sign(msg, &mut sig)
                    .map_err(lib("aws-lc-rs: ML-DSA sign"))?;
                sig.truncate(n);
                Ok(sig)
            }
        }
    }

    /// The public key as webpki hands it to the verifier.
    fn public(&self) -> Vec<u8> {
        match self {
            Signer::Rsa(kp) => kp.public_key().as_ref().to_vec(),
            Signer::Ecdsa(kp, _) => kp.public_key().as_ref().to_vec(),
            Signer::MlDsa(kp, _) => kp.public_key().as_ref().to_vec(),
        }
    }

    fn verify_alg(&self) -> &'static dyn signature::VerificationAlgorithm {
        match self {
            Signer::Rsa(_) => &signature::RSA_PSS_2048_8192_SHA512,
            Signer::Ecdsa(_, a) => *a,
            Signer::MlDsa(_, a) => *a,
        }
    }
}

fn agreement_alg(g: Group) -> Result<&'static agreement::Algorithm, PrepError> {
    match g {
        Group::X25519 => Ok(&agreement::X25519),
        Group::P256 => Ok(&agreement::ECDH_P256),
        Group::Dh2048 => Err(PrepError::Unsupported(
            "rustls has no finite-field DHE".into(),
        )),
    }
}

impl FloorLib for AwsLc {
    fn id(&self) -> &'static str {
        "aws-lc-rs"
    }
    fn name(&self) -> String {
        "aws-lc-rs 1.19 (rustls 0.23)".into()
    }
    fn ecdh_group(&self) -> Group {
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
                    (Signer::Rsa(kp), OpKind::VerifyCert) => {
                        let mut sig = vec![0u8; kp.public_modulus_len()];
                        kp.sign(&signature::RSA_PKCS1_SHA256, &rng, &msg, &mut sig)
                            .map_err(|e| fail("aws-lc-rs: RSA sign", e))?;
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
                        .map_err(|_| {
                            OpError::Check("aws-lc-rs: verification of own signature failed")
                        })
                }))
            }
            OpKind::PremasterDecrypt | OpKind::PremasterEncrypt => Err(PrepError::Unsupported(
                "rustls has no RSA key transport".into(),
            )),
            OpKind::Keygen(g) => {
                let alg = agreement_alg(g)?;
                Ok(Box::new(move || {
                    let k = EphemeralPrivateKey::generate(alg, &rng).map_err(lib("aws-lc-rs"))?;
                    k.compute_public_key().map(|_| ()).map_err(lib("aws-lc-rs"))
                }))
            }
            OpKind::Derive(g) => {
                let alg = agreement_alg(g)?;
                let peer = EphemeralPrivateKey::generate(alg, &rng)
                    .and_then(|k| k.compute_public_key())
                    .map_err(|e| fail("aws-lc-rs", e))?;
                let peer = peer.as_ref().to_vec();
                Ok(Box::new(move || {
                    let mine =
                        EphemeralPrivateKey::generate(alg, &rng).map_err(lib("aws-lc-rs"))?;
                    agreement::agree_ephemeral(
                        mine,
                        AgreePublic::new(alg, &peer),
                        aws_lc_rs::error::Unspecified,
                        |k| Ok(k.len()),
                    )
                    .map(|_| ())
                    .map_err(lib("aws-lc-rs"))
                }))
            }
            OpKind::KemKeygen => Ok(Box::new(|| {
                let dk = DecapsulationKey::generate(&ML_KEM_768).map_err(lib("aws-lc-rs"))?;
                let ek = dk.encapsulation_key().map_err(lib("aws-lc-rs"))?;
                ek.key_bytes().map(|_| ()).map_err(lib("aws-lc-rs"))
            })),
            OpKind::KemEncap => {
                let dk =
                    DecapsulationKey::generate(&ML_KEM_768).map_err(|e| fail("aws-lc-rs", e))?;
                let ek = dk
                    .encapsulation_key()
                    .and_then(|k| k.key_bytes().map(|b| b.as_ref().to_vec()))
                    .map_err(|e| fail("aws-lc-rs", e))?;
                Ok(Box::new(move || {
                    let k = EncapsulationKey::new(&ML_KEM_768, &ek)
                        .map_err(|e| OpError::library("aws-lc-rs", e))?;
                    k.encapsulate().map(|_| ()).map_err(lib("aws-lc-rs"))
                }))
            }
            OpKind::KemDecap => {
                let dk =
                    DecapsulationKey::generate(&ML_KEM_768).map_err(|e| fail("aws-lc-rs", e))?;
                let (ct, _) = dk
                    .encapsulation_key()
                    .and_then(|k| k.encapsulate())
                    .map_err(|e| fail("aws-lc-rs", e))?;
                let ct = ct.as_ref().to_vec();
                Ok(Box::new(move || {
                    dk.decapsulate(Ciphertext::from(ct.as_slice()))
                        .map(|_| ())
                        .map_err(lib("aws-lc-rs"))
                }))
            }
        }
    }
}
