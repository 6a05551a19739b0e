//! Post-quantum signature keys for [`crate::signature`]: ML-DSA-44/65 (NIST FIPS 204) and
//! SLH-DSA-SHA2-128s/128f (NIST FIPS 205), through RustCrypto's `ml-dsa` and `slh-dsa` crates
//! (OpenSSL 3.0, which the classical algorithms use, has neither).
//!
//! * Signing is the "pure" form with an empty context string (FIPS 204 §5.2 Algorithm 2,
//!   FIPS 205 §10.2.1 Algorithm 22). ML-DSA signs in the deterministic variant (FIPS 204
//!   §3.4: `rnd = {0}^32`), SLH-DSA without `opt_rand` (FIPS 205 §10.2.1: `PK.seed` is used),
//!   so a signature depends only on key and message.
//! * Key generation draws the seeds from the operating system's CSPRNG and runs the internal
//!   key generation (FIPS 204 Algorithm 1 = Algorithm 6 on a fresh `ξ`; FIPS 205 Algorithm 21
//!   = Algorithm 18 on fresh `SK.seed`, `SK.prf`, `PK.seed`).
//! * Key files: PKCS#8 (`BEGIN PRIVATE KEY`) and SPKI (`BEGIN PUBLIC KEY`) PEM with the NIST
//!   algorithm OIDs (2.16.840.1.101.3.4.3.17/.18 for ML-DSA-44/65, .3.20/.3.21 for
//!   SLH-DSA-SHA2-128s/128f); the ML-DSA private key is the 32-byte seed form of RFC 9881.

use ml_dsa::{MlDsa44, MlDsa65};
use pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use slh_dsa::signature::{Keypair, Signer, Verifier};
use slh_dsa::{Sha2_128f, Sha2_128s};
use zeroize::Zeroizing;

use crate::provider::CryptoError;
use crate::signature::SignatureAlgorithm;

/// ML-DSA-44 signature length (FIPS 204 Table 2).
pub const ML_DSA_44_SIG_LEN: usize = 2420;
/// ML-DSA-65 signature length (FIPS 204 Table 2).
pub const ML_DSA_65_SIG_LEN: usize = 3309;
/// SLH-DSA-SHA2-128s signature length (FIPS 205 Table 2).
pub const SLH_DSA_128S_SIG_LEN: usize = 7856;
/// SLH-DSA-SHA2-128f signature length (FIPS 205 Table 2).
pub const SLH_DSA_128F_SIG_LEN: usize = 17088;

/// Longest context string (FIPS 204 §5.2, FIPS 205 §10.2: its length is one byte).
pub const MAX_CONTEXT_LEN: usize = 255;

fn backend(what: &str, e: impl core::fmt::Display) -> CryptoError {
    CryptoError::Backend(format!("{what}: {e}"))
}

/// The DER inside a PEM document whose RFC 7468 label must be `label`; the DER readers then
/// decode it, so PEM and DER keys go through one parser. Wiped on drop (it may be a private key).
fn pem_der(
    alg: SignatureAlgorithm,
    pem: &[u8],
    label: &str,
) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    let s =
        core::str::from_utf8(pem).map_err(|_| CryptoError::Backend("PEM is not UTF-8".into()))?;
    let (found, doc) = pkcs8::SecretDocument::from_pem(s).map_err(|e| backend(alg.name(), e))?;
    if found != label {
        return Err(backend(
            alg.name(),
            format!("PEM label {found:?}, expected {label:?}"),
        ));
    }
    Ok(Zeroizing::new(doc.as_bytes().to_vec()))
}

/// A post-quantum private key.
#[derive(Clone)]
pub(crate) enum PqSigningKey {
    MlDsa44(Box<ml_dsa::SigningKey<MlDsa44>>),
    MlDsa65(Box<ml_dsa::SigningKey<MlDsa65>>),
    Slh128s(Box<slh_dsa::SigningKey<Sha2_128s>>),
    Slh128f(Box<slh_dsa::SigningKey<Sha2_128f>>),
}

/// A post-quantum public key.
#[derive(Clone)]
pub(crate) enum PqVerifyingKey {
    MlDsa44(Box<ml_dsa::VerifyingKey<MlDsa44>>),
    MlDsa65(Box<ml_dsa::VerifyingKey<MlDsa65>>),
    Slh128s(Box<slh_dsa::VerifyingKey<Sha2_128s>>),
    Slh128f(Box<slh_dsa::VerifyingKey<Sha2_128f>>),
}

fn os_random<const N: usize>() -> Zeroizing<[u8; N]> {
    use rand::RngCore;
    let mut b = Zeroizing::new([0u8; N]);
    rand::rngs::OsRng.fill_bytes(b.as_mut());
    b
}

fn ml_dsa_from_seed<P: ml_dsa::MlDsaParams>(seed: &[u8; 32]) -> ml_dsa::SigningKey<P> {
    ml_dsa::SigningKey::<P>::from_seed(&ml_dsa::B32::from(*seed))
}

impl PqSigningKey {
    /// A fresh key of `alg`; `None` for classical algorithms.
    pub(crate) fn generate(alg: SignatureAlgorithm) -> Option<Self> {
        Some(match alg {
            SignatureAlgorithm::MlDsa44 => {
                PqSigningKey::MlDsa44(Box::new(ml_dsa_from_seed(&os_random::<32>())))
            }
            SignatureAlgorithm::MlDsa65 => {
                PqSigningKey::MlDsa65(Box::new(ml_dsa_from_seed(&os_random::<32>())))
            }
            SignatureAlgorithm::SlhDsaSha2_128s => {
                let (a, b, c) = (os_random::<16>(), os_random::<16>(), os_random::<16>());
                PqSigningKey::Slh128s(Box::new(slh_dsa::SigningKey::slh_keygen_internal(
                    a.as_ref(),
                    b.as_ref(),
                    c.as_ref(),
                )))
            }
            SignatureAlgorithm::SlhDsaSha2_128f => {
                let (a, b, c) = (os_random::<16>(), os_random::<16>(), os_random::<16>());
                PqSigningKey::Slh128f(Box::new(slh_dsa::SigningKey::slh_keygen_internal(
                    a.as_ref(),
                    b.as_ref(),
                    c.as_ref(),
                )))
            }
            _ => return None,
        })
    }

    /// Reads a PKCS#8 PEM private key of `alg` (RFC 7468 label `PRIVATE KEY`).
    pub(crate) fn from_pkcs8_pem(alg: SignatureAlgorithm, pem: &[u8]) -> Result<Self, CryptoError> {
        let der = pem_der(alg, pem, "PRIVATE KEY")?;
        Self::from_pkcs8_der(alg, &der)
    }

    /// Reads a PKCS#8 DER private key of `alg`.
    pub(crate) fn from_pkcs8_der(alg: SignatureAlgorithm, der: &[u8]) -> Result<Self, CryptoError> {
        let e = |e| backend(alg.name(), e);
        Ok(match alg {
            SignatureAlgorithm::MlDsa44 => {
                PqSigningKey::MlDsa44(Box::new(DecodePrivateKey::from_pkcs8_der(der).map_err(e)?))
            }
            SignatureAlgorithm::MlDsa65 => {
                PqSigningKey::MlDsa65(Box::new(DecodePrivateKey::from_pkcs8_der(der).map_err(e)?))
            }
            SignatureAlgorithm::SlhDsaSha2_128s => {
                PqSigningKey::Slh128s(Box::new(DecodePrivateKey::from_pkcs8_der(der).map_err(e)?))
            }
            SignatureAlgorithm::SlhDsaSha2_128f => {
                PqSigningKey::Slh128f(Box::new(DecodePrivateKey::from_pkcs8_der(der).map_err(e)?))
            }
            _ => return Err(CryptoError::Unsupported(alg.name())),
        })
    }

    /// A key from its raw private form: the 32-byte ML-DSA seed `ξ` (FIPS 204 §6.1), or the
    /// SLH-DSA private key `SK.seed || SK.prf || PK.seed || PK.root` (FIPS 205 §9.1, 64 bytes).
    pub(crate) fn from_raw(alg: SignatureAlgorithm, raw: &[u8]) -> Result<Self, CryptoError> {
        let bad = |expected| CryptoError::BadKeyLength {
            alg: alg.name(),
            expected,
            got: raw.len(),
        };
        Ok(match alg {
            SignatureAlgorithm::MlDsa44 => {
                let seed: [u8; 32] = raw.try_into().map_err(|_| bad("32"))?;
                PqSigningKey::MlDsa44(Box::new(ml_dsa_from_seed(&seed)))
            }
            SignatureAlgorithm::MlDsa65 => {
                let seed: [u8; 32] = raw.try_into().map_err(|_| bad("32"))?;
                PqSigningKey::MlDsa65(Box::new(ml_dsa_from_seed(&seed)))
            }
            SignatureAlgorithm::SlhDsaSha2_128s => PqSigningKey::Slh128s(Box::new(
                slh_dsa::SigningKey::try_from(raw).map_err(|_| bad("64"))?,
            )),
            SignatureAlgorithm::SlhDsaSha2_128f => PqSigningKey::Slh128f(Box::new(
                slh_dsa::SigningKey::try_from(raw).map_err(|_| bad("64"))?,
            )),
            _ => return Err(CryptoError::Unsupported(alg.name())),
        })
    }

    /// Unencrypted PKCS#8 PEM; the buffer is wiped on drop.
    pub(crate) fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>, CryptoError> {
        let e = |e| backend("PKCS#8", e);
        let pem = match self {
            PqSigningKey::MlDsa44(k) => k.to_pkcs8_pem(LineEnding::LF).map_err(e)?,
            PqSigningKey::MlDsa65(k) => k.to_pkcs8_pem(LineEnding::LF).map_err(e)?,
            PqSigningKey::Slh128s(k) => k.to_pkcs8_pem(LineEnding::LF).map_err(e)?,
            PqSigningKey::Slh128f(k) => k.to_pkcs8_pem(LineEnding::LF).map_err(e)?,
        };
        Ok(Zeroizing::new(pem.to_string()))
    }

    /// Signs `msg` with the context string `ctx` (FIPS 204 §5.2 / FIPS 205 §10.2.1: at most
    /// 255 bytes; longer is a typed error). With an empty context this is [`Self::sign`].
    pub(crate) fn sign_with_context(&self, msg: &[u8], ctx: &[u8]) -> Result<Vec<u8>, CryptoError> {
        if ctx.is_empty() {
            return self.sign(msg);
        }
        if ctx.len() > MAX_CONTEXT_LEN {
            return Err(CryptoError::Unsupported(
                "context string longer than 255 bytes",
            ));
        }
        let e = |e| backend("sign", e);
        Ok(match self {
            // The public deterministic signer with a context is on the expanded key, rebuilt
            // from the seed (FIPS 204 Algorithm 6), so this path is slower than `sign`.
            PqSigningKey::MlDsa44(k) => {
                ml_dsa::ExpandedSigningKey::<MlDsa44>::from_seed(&k.to_seed())
                    .sign_deterministic(msg, ctx)
                    .map_err(e)?
                    .encode()
                    .to_vec()
            }
            PqSigningKey::MlDsa65(k) => {
                ml_dsa::ExpandedSigningKey::<MlDsa65>::from_seed(&k.to_seed())
                    .sign_deterministic(msg, ctx)
                    .map_err(e)?
                    .encode()
                    .to_vec()
            }
            PqSigningKey::Slh128s(k) => {
                k.try_sign_with_context(msg, ctx, None).map_err(e)?.to_vec()
            }
            PqSigningKey::Slh128f(k) => {
                k.try_sign_with_context(msg, ctx, None).map_err(e)?.to_vec()
            }
        })
    }

    /// Signs `msg` (pure, empty context).
    pub(crate) fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let e = |e| backend("sign", e);
        Ok(match self {
            PqSigningKey::MlDsa44(k) => k.try_sign(msg).map_err(e)?.encode().to_vec(),
            PqSigningKey::MlDsa65(k) => k.try_sign(msg).map_err(e)?.encode().to_vec(),
            PqSigningKey::Slh128s(k) => k.try_sign(msg).map_err(e)?.to_vec(),
            PqSigningKey::Slh128f(k) => k.try_sign(msg).map_err(e)?.to_vec(),
        })
    }

    /// The public half.
    pub(crate) fn verifying_key(&self) -> PqVerifyingKey {
        match self {
            PqSigningKey::MlDsa44(k) => PqVerifyingKey::MlDsa44(Box::new(k.verifying_key())),
            PqSigningKey::MlDsa65(k) => PqVerifyingKey::MlDsa65(Box::new(k.verifying_key())),
            PqSigningKey::Slh128s(k) => PqVerifyingKey::Slh128s(Box::new(k.verifying_key())),
            PqSigningKey::Slh128f(k) => PqVerifyingKey::Slh128f(Box::new(k.verifying_key())),
        }
    }
}

impl PqVerifyingKey {
    /// Reads an SPKI PEM public key of `alg` (RFC 7468 label `PUBLIC KEY`).
    pub(crate) fn from_spki_pem(alg: SignatureAlgorithm, pem: &[u8]) -> Result<Self, CryptoError> {
        let der = pem_der(alg, pem, "PUBLIC KEY")?;
        Self::from_spki_der(alg, &der)
    }

    /// Reads an SPKI DER public key of `alg`.
    pub(crate) fn from_spki_der(alg: SignatureAlgorithm, der: &[u8]) -> Result<Self, CryptoError> {
        let e = |e| backend(alg.name(), e);
        Ok(match alg {
            SignatureAlgorithm::MlDsa44 => PqVerifyingKey::MlDsa44(Box::new(
                DecodePublicKey::from_public_key_der(der).map_err(e)?,
            )),
            SignatureAlgorithm::MlDsa65 => PqVerifyingKey::MlDsa65(Box::new(
                DecodePublicKey::from_public_key_der(der).map_err(e)?,
            )),
            SignatureAlgorithm::SlhDsaSha2_128s => PqVerifyingKey::Slh128s(Box::new(
                DecodePublicKey::from_public_key_der(der).map_err(e)?,
            )),
            SignatureAlgorithm::SlhDsaSha2_128f => PqVerifyingKey::Slh128f(Box::new(
                DecodePublicKey::from_public_key_der(der).map_err(e)?,
            )),
            _ => return Err(CryptoError::Unsupported(alg.name())),
        })
    }

    /// A key from its raw encoding (FIPS 204 `pkEncode`: 1312/1952 bytes; FIPS 205
    /// `PK.seed || PK.root`: 32 bytes).
    pub(crate) fn from_raw(alg: SignatureAlgorithm, raw: &[u8]) -> Result<Self, CryptoError> {
        use ml_dsa::KeyInit;
        let bad = |expected| CryptoError::BadKeyLength {
            alg: alg.name(),
            expected,
            got: raw.len(),
        };
        Ok(match alg {
            SignatureAlgorithm::MlDsa44 => PqVerifyingKey::MlDsa44(Box::new(
                ml_dsa::VerifyingKey::new_from_slice(raw).map_err(|_| bad("1312"))?,
            )),
            SignatureAlgorithm::MlDsa65 => PqVerifyingKey::MlDsa65(Box::new(
                ml_dsa::VerifyingKey::new_from_slice(raw).map_err(|_| bad("1952"))?,
            )),
            SignatureAlgorithm::SlhDsaSha2_128s => PqVerifyingKey::Slh128s(Box::new(
                slh_dsa::VerifyingKey::try_from(raw).map_err(|_| bad("32"))?,
            )),
            SignatureAlgorithm::SlhDsaSha2_128f => PqVerifyingKey::Slh128f(Box::new(
                slh_dsa::VerifyingKey::try_from(raw).map_err(|_| bad("32"))?,
            )),
            _ => return Err(CryptoError::Unsupported(alg.name())),
        })
    }

    /// The raw public key encoding.
    pub(crate) fn to_raw(&self) -> Vec<u8> {
        match self {
            PqVerifyingKey::MlDsa44(k) => k.encode().to_vec(),
            PqVerifyingKey::MlDsa65(k) => k.encode().to_vec(),
            PqVerifyingKey::Slh128s(k) => k.to_vec(),
            PqVerifyingKey::Slh128f(k) => k.to_vec(),
        }
    }

    /// DER SPKI.
    pub(crate) fn to_spki_der(&self) -> Result<Vec<u8>, CryptoError> {
        let e = |e| backend("SPKI", e);
        Ok(match self {
            PqVerifyingKey::MlDsa44(k) => k.to_public_key_der().map_err(e)?,
            PqVerifyingKey::MlDsa65(k) => k.to_public_key_der().map_err(e)?,
            PqVerifyingKey::Slh128s(k) => k.to_public_key_der().map_err(e)?,
            PqVerifyingKey::Slh128f(k) => k.to_public_key_der().map_err(e)?,
        }
        .into_vec())
    }

    /// PEM SPKI.
    pub(crate) fn to_spki_pem(&self) -> Result<String, CryptoError> {
        let e = |e| backend("SPKI", e);
        Ok(match self {
            PqVerifyingKey::MlDsa44(k) => k.to_public_key_pem(LineEnding::LF).map_err(e)?,
            PqVerifyingKey::MlDsa65(k) => k.to_public_key_pem(LineEnding::LF).map_err(e)?,
            PqVerifyingKey::Slh128s(k) => k.to_public_key_pem(LineEnding::LF).map_err(e)?,
            PqVerifyingKey::Slh128f(k) => k.to_public_key_pem(LineEnding::LF).map_err(e)?,
        })
    }

    /// Verifies `sig` over `msg` with the context string `ctx`; any failure, a context longer
    /// than 255 bytes included, is `VerifyFailed`.
    pub(crate) fn verify_with_context(
        &self,
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), CryptoError> {
        if ctx.is_empty() {
            return self.verify(msg, sig);
        }
        let ok = ctx.len() <= MAX_CONTEXT_LEN
            && match self {
                PqVerifyingKey::MlDsa44(k) => ml_dsa::Signature::try_from(sig)
                    .is_ok_and(|s| k.verify_with_context(msg, ctx, &s)),
                PqVerifyingKey::MlDsa65(k) => ml_dsa::Signature::try_from(sig)
                    .is_ok_and(|s| k.verify_with_context(msg, ctx, &s)),
                PqVerifyingKey::Slh128s(k) => slh_dsa::Signature::try_from(sig)
                    .is_ok_and(|s| k.try_verify_with_context(msg, ctx, &s).is_ok()),
                PqVerifyingKey::Slh128f(k) => slh_dsa::Signature::try_from(sig)
                    .is_ok_and(|s| k.try_verify_with_context(msg, ctx, &s).is_ok()),
            };
        if ok {
            Ok(())
        } else {
            Err(CryptoError::VerifyFailed)
        }
    }

    /// Verifies `sig` over `msg` (pure, empty context); any failure is `VerifyFailed`.
    pub(crate) fn verify(&self, msg: &[u8], sig: &[u8]) -> Result<(), CryptoError> {
        let ok = match self {
            PqVerifyingKey::MlDsa44(k) => {
                ml_dsa::Signature::try_from(sig).is_ok_and(|s| k.verify(msg, &s).is_ok())
            }
            PqVerifyingKey::MlDsa65(k) => {
                ml_dsa::Signature::try_from(sig).is_ok_and(|s| k.verify(msg, &s).is_ok())
            }
            PqVerifyingKey::Slh128s(k) => {
                slh_dsa::Signature::try_from(sig).is_ok_and(|s| k.verify(msg, &s).is_ok())
            }
            PqVerifyingKey::Slh128f(k) => {
                slh_dsa::Signature::try_from(sig).is_ok_and(|s| k.verify(msg, &s).is_ok())
            }
        };
        if ok {
            Ok(())
        } else {
            Err(CryptoError::VerifyFailed)
        }
    }
}
