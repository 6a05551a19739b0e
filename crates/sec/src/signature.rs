//! Digital signatures for IEC 62351-6 (GOOSE/R-GOOSE signature option) and for the PKI parts
//! of the measurement platform: RSASSA-PKCS1-v1_5 and RSASSA-PSS with SHA-256 (RFC 8017 §8.2,
//! §8.1), ECDSA over P-256 with SHA-256 (FIPS 186-5 §6, SEC 1) and Ed25519 (RFC 8032 §5.1).
//!
//! The classical algorithms go through the system OpenSSL (3.x) with the `openssl` crate.
//!
//! Encodings:
//! * RSA signatures are the big-endian integer of the modulus' length (RFC 8017 §5.2.1 I2OSP).
//! * ECDSA signatures are **DER** (`ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }`,
//!   RFC 5480 §2.2 / X9.62), as X.509 and TLS carry them; [`SigningKey::sign`] produces and
//!   [`VerifyingKey::verify`] accepts only that (strict DER: BER variants are rejected). For
//!   a fixed-length field, as suits a GOOSE frame, convert with [`ecdsa_der_to_raw`] and
//!   [`ecdsa_raw_to_der`]: `r || s`, 32 bytes each, big-endian (IEEE P1363 / RFC 7518 §3.4).
//! * Ed25519 signatures are the 64 bytes `R || S` of RFC 8032 §5.1.6.
//! * ML-DSA-44/65 (NIST FIPS 204) and SLH-DSA-SHA2-128s/128f (NIST FIPS 205) signatures are the
//!   standards' byte strings (2420, 3309, 7856 and 17088 bytes), made and checked by
//!   [`crate::postquantum`] with RustCrypto's crates, since OpenSSL 3.0 has neither.
//!
//! RSASSA-PSS uses SHA-256 for both the message hash and MGF1 (RFC 8017 §B.2.1) and a salt of
//! 32 bytes (the hash length, RFC 8017 §9.1 note 4) unless set otherwise with
//! [`SigningKey::with_pss_salt_len`] / [`VerifyingKey::with_pss_salt_len`]; the verifier
//! insists on the configured salt length.

use core::fmt;
use core::str::FromStr;

use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::ecdsa::EcdsaSig;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{HasPublic, Id, PKey, PKeyRef, Private, Public};
use openssl::rsa::{Padding, Rsa};
use openssl::sign::{RsaPssSaltlen, Signer, Verifier};
use zeroize::Zeroizing;

use crate::algorithm::UnknownAlgorithm;
use crate::postquantum::{PqSigningKey, PqVerifyingKey};
use crate::provider::CryptoError;

/// A signature algorithm, named as in key and scenario files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SignatureAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 §8.2).
    RsaPkcs1v15Sha256,
    /// RSASSA-PSS with SHA-256, MGF1-SHA-256 (RFC 8017 §8.1), salt length 32 by default.
    RsaPssSha256,
    /// ECDSA over NIST P-256 with SHA-256 (FIPS 186-5 §6.4), DER-encoded signatures.
    EcdsaP256Sha256,
    /// Ed25519 (RFC 8032 §5.1), pure (no pre-hash).
    Ed25519,
    /// ML-DSA-44 (NIST FIPS 204, security category 2), pure, empty context.
    MlDsa44,
    /// ML-DSA-65 (NIST FIPS 204, security category 3), pure, empty context.
    MlDsa65,
    /// SLH-DSA-SHA2-128s (NIST FIPS 205, category 1, "small": short signatures, slow signing).
    SlhDsaSha2_128s,
    /// SLH-DSA-SHA2-128f (NIST FIPS 205, category 1, "fast": faster signing, long signatures).
    SlhDsaSha2_128f,
}

impl SignatureAlgorithm {
    /// Every algorithm.
    pub const ALL: [SignatureAlgorithm; 8] = [
        SignatureAlgorithm::RsaPkcs1v15Sha256,
        SignatureAlgorithm::RsaPssSha256,
        SignatureAlgorithm::EcdsaP256Sha256,
        SignatureAlgorithm::Ed25519,
        SignatureAlgorithm::MlDsa44,
        SignatureAlgorithm::MlDsa65,
        SignatureAlgorithm::SlhDsaSha2_128s,
        SignatureAlgorithm::SlhDsaSha2_128f,
    ];

    /// The classical algorithms (through OpenSSL).
    pub const CLASSICAL: [SignatureAlgorithm; 4] = [
        SignatureAlgorithm::RsaPkcs1v15Sha256,
        SignatureAlgorithm::RsaPssSha256,
        SignatureAlgorithm::EcdsaP256Sha256,
        SignatureAlgorithm::Ed25519,
    ];

    /// The post-quantum algorithms (FIPS 204, FIPS 205).
    pub const POST_QUANTUM: [SignatureAlgorithm; 4] = [
        SignatureAlgorithm::MlDsa44,
        SignatureAlgorithm::MlDsa65,
        SignatureAlgorithm::SlhDsaSha2_128s,
        SignatureAlgorithm::SlhDsaSha2_128f,
    ];

    /// The name used in files and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            SignatureAlgorithm::RsaPkcs1v15Sha256 => "rsassa-pkcs1-v1_5-sha256",
            SignatureAlgorithm::RsaPssSha256 => "rsassa-pss-sha256",
            SignatureAlgorithm::EcdsaP256Sha256 => "ecdsa-p256-sha256",
            SignatureAlgorithm::Ed25519 => "ed25519",
            SignatureAlgorithm::MlDsa44 => "ml-dsa-44",
            SignatureAlgorithm::MlDsa65 => "ml-dsa-65",
            SignatureAlgorithm::SlhDsaSha2_128s => "slh-dsa-sha2-128s",
            SignatureAlgorithm::SlhDsaSha2_128f => "slh-dsa-sha2-128f",
        }
    }

    /// Whether the algorithm is post-quantum (FIPS 204/205).
    pub const fn is_post_quantum(self) -> bool {
        matches!(
            self,
            SignatureAlgorithm::MlDsa44
                | SignatureAlgorithm::MlDsa65
                | SignatureAlgorithm::SlhDsaSha2_128s
                | SignatureAlgorithm::SlhDsaSha2_128f
        )
    }

    /// Fixed signature length on the wire, where the algorithm has one: 64 for Ed25519 and
    /// raw ECDSA P-256, the FIPS 204/205 lengths for ML-DSA/SLH-DSA; `None` for RSA (the
    /// modulus length).
    pub const fn fixed_signature_len(self) -> Option<usize> {
        match self {
            SignatureAlgorithm::EcdsaP256Sha256 => Some(ECDSA_P256_RAW_LEN),
            SignatureAlgorithm::Ed25519 => Some(ED25519_SIG_LEN),
            SignatureAlgorithm::MlDsa44 => Some(crate::postquantum::ML_DSA_44_SIG_LEN),
            SignatureAlgorithm::MlDsa65 => Some(crate::postquantum::ML_DSA_65_SIG_LEN),
            SignatureAlgorithm::SlhDsaSha2_128s => Some(crate::postquantum::SLH_DSA_128S_SIG_LEN),
            SignatureAlgorithm::SlhDsaSha2_128f => Some(crate::postquantum::SLH_DSA_128F_SIG_LEN),
            _ => None,
        }
    }

    /// Classical security strength in bits the parameter set targets (NIST categories 1/2 =
    /// 128, 3 = 192), for reports of post-quantum keys, which have no modulus or curve size.
    const fn pq_bits(self) -> u32 {
        match self {
            SignatureAlgorithm::MlDsa65 => 192,
            _ => 128,
        }
    }

    /// Whether the key is an RSA key (and `rsa_bits` matters in [`SigningKey::generate`]).
    pub const fn is_rsa(self) -> bool {
        matches!(
            self,
            SignatureAlgorithm::RsaPkcs1v15Sha256 | SignatureAlgorithm::RsaPssSha256
        )
    }
}

impl fmt::Display for SignatureAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SignatureAlgorithm {
    type Err = UnknownAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::algorithm::from_name(s, &Self::ALL, Self::name)
    }
}

/// Smallest RSA modulus accepted, for signing and verifying keys (bits).
pub const RSA_MIN_BITS: u32 = 1024;
/// Largest RSA modulus [`SigningKey::generate`] makes (OpenSSL's own limit).
pub const RSA_MAX_BITS: u32 = 16384;
/// Default RSASSA-PSS salt length: the SHA-256 output length (RFC 8017 §9.1, note 4).
pub const PSS_DEFAULT_SALT_LEN: usize = 32;
/// Length of a raw `r || s` ECDSA P-256 signature.
pub const ECDSA_P256_RAW_LEN: usize = 64;
/// Longest DER encoding of an ECDSA P-256 signature (two 33-byte INTEGERs in a SEQUENCE).
pub const ECDSA_P256_DER_MAX_LEN: usize = 72;
/// Length of an Ed25519 signature (RFC 8032 §5.1.6).
pub const ED25519_SIG_LEN: usize = 64;

fn backend(e: openssl::error::ErrorStack) -> CryptoError {
    CryptoError::Backend(format!("openssl: {e}"))
}

fn p256() -> Result<EcGroup, CryptoError> {
    EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(backend)
}

/// Checks that `pkey` is the kind of key `alg` needs: RSA of at least [`RSA_MIN_BITS`], EC on
/// P-256, or Ed25519.
fn check_key_type<T: HasPublic>(
    alg: SignatureAlgorithm,
    pkey: &PKeyRef<T>,
) -> Result<(), CryptoError> {
    let ok = match alg {
        SignatureAlgorithm::RsaPkcs1v15Sha256 | SignatureAlgorithm::RsaPssSha256 => {
            if pkey.id() == Id::RSA && pkey.bits() < RSA_MIN_BITS {
                return Err(CryptoError::BadKeyLength {
                    alg: alg.name(),
                    expected: "an RSA modulus of at least 1024 bits (128 bytes)",
                    got: pkey.size(),
                });
            }
            pkey.id() == Id::RSA
        }
        SignatureAlgorithm::EcdsaP256Sha256 => {
            pkey.id() == Id::EC
                && pkey.ec_key().map_err(backend)?.group().curve_name()
                    == Some(Nid::X9_62_PRIME256V1)
        }
        SignatureAlgorithm::Ed25519 => pkey.id() == Id::ED25519,
        // Post-quantum keys never reach OpenSSL.
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(CryptoError::Backend(format!(
            "key is not a {} key (OpenSSL key type {:?})",
            alg.name(),
            pkey.id()
        )))
    }
}

fn pss_saltlen(len: usize) -> Result<RsaPssSaltlen, CryptoError> {
    i32::try_from(len)
        .map(RsaPssSaltlen::custom)
        .map_err(|_| CryptoError::Backend(format!("PSS salt length {len} too large")))
}

/// The library holding a private key.
enum PrivateInner {
    /// OpenSSL: RSA, ECDSA, Ed25519.
    Openssl(PKey<Private>),
    /// RustCrypto: ML-DSA, SLH-DSA.
    Pq(PqSigningKey),
}

/// The library holding a public key.
#[derive(Clone)]
enum PublicInner {
    /// OpenSSL: RSA, ECDSA, Ed25519.
    Openssl(PKey<Public>),
    /// RustCrypto: ML-DSA, SLH-DSA.
    Pq(PqVerifyingKey),
}

/// A private key for one signature algorithm.
pub struct SigningKey {
    alg: SignatureAlgorithm,
    inner: PrivateInner,
    pss_salt_len: usize,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.alg)
            .field("bits", &self.bits())
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Generates a fresh key. `rsa_bits` is the RSA modulus size (1024, 2048, 3072, 4096, ...;
    /// below [`RSA_MIN_BITS`] or above [`RSA_MAX_BITS`] is refused) and is ignored for ECDSA
    /// and Ed25519. RSA keys use the public exponent 65537.
    pub fn generate(alg: SignatureAlgorithm, rsa_bits: u32) -> Result<Self, CryptoError> {
        if let Some(pq) = PqSigningKey::generate(alg) {
            return Ok(Self::pq(alg, pq));
        }
        let pkey = match alg {
            SignatureAlgorithm::RsaPkcs1v15Sha256 | SignatureAlgorithm::RsaPssSha256 => {
                if !(RSA_MIN_BITS..=RSA_MAX_BITS).contains(&rsa_bits) {
                    return Err(CryptoError::BadKeyLength {
                        alg: alg.name(),
                        expected: "an RSA modulus of 1024..=16384 bits",
                        got: (rsa_bits / 8) as usize,
                    });
                }
                PKey::from_rsa(Rsa::generate(rsa_bits).map_err(backend)?).map_err(backend)?
            }
            SignatureAlgorithm::EcdsaP256Sha256 => {
                let group = p256()?;
                PKey::from_ec_key(EcKey::generate(&group).map_err(backend)?).map_err(backend)?
            }
            SignatureAlgorithm::Ed25519 => PKey::generate_ed25519().map_err(backend)?,
            _ => return Err(CryptoError::Unsupported(alg.name())),
        };
        Ok(Self::openssl(alg, pkey))
    }

    fn openssl(alg: SignatureAlgorithm, pkey: PKey<Private>) -> Self {
        SigningKey {
            alg,
            inner: PrivateInner::Openssl(pkey),
            pss_salt_len: PSS_DEFAULT_SALT_LEN,
        }
    }

    fn pq(alg: SignatureAlgorithm, key: PqSigningKey) -> Self {
        SigningKey {
            alg,
            inner: PrivateInner::Pq(key),
            pss_salt_len: PSS_DEFAULT_SALT_LEN,
        }
    }

    /// Reads a private key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`, RFC 5958), which
    /// [`Self::to_pkcs8_pem`] writes; OpenSSL's traditional `BEGIN RSA/EC PRIVATE KEY` forms are
    /// accepted too. Encrypted PEM is refused. The key must fit `alg`.
    pub fn from_pkcs8_pem(alg: SignatureAlgorithm, pem: &[u8]) -> Result<Self, CryptoError> {
        if alg.is_post_quantum() {
            return Ok(Self::pq(alg, PqSigningKey::from_pkcs8_pem(alg, pem)?));
        }
        let pkey = PKey::private_key_from_pem_callback(pem, |_| Ok(0)).map_err(backend)?;
        check_key_type(alg, &pkey)?;
        Ok(Self::openssl(alg, pkey))
    }

    /// Reads a PKCS#8 DER private key (RFC 5958 `OneAsymmetricKey`).
    pub fn from_pkcs8_der(alg: SignatureAlgorithm, der: &[u8]) -> Result<Self, CryptoError> {
        if alg.is_post_quantum() {
            return Ok(Self::pq(alg, PqSigningKey::from_pkcs8_der(alg, der)?));
        }
        let pkey = PKey::private_key_from_pkcs8(der).map_err(backend)?;
        check_key_type(alg, &pkey)?;
        Ok(Self::openssl(alg, pkey))
    }

    /// A key from its raw private form: the 32-byte Ed25519 seed (RFC 8032 §5.1.5), the
    /// 32-byte ML-DSA seed `ξ` (FIPS 204 §6.1) or the 64-byte SLH-DSA private key
    /// (FIPS 205 §9.1). RSA and ECDSA have no raw private form here.
    pub fn from_raw(alg: SignatureAlgorithm, seed: &[u8]) -> Result<Self, CryptoError> {
        if alg.is_post_quantum() {
            return Ok(Self::pq(alg, PqSigningKey::from_raw(alg, seed)?));
        }
        if alg != SignatureAlgorithm::Ed25519 {
            return Err(CryptoError::Unsupported(alg.name()));
        }
        if seed.len() != 32 {
            return Err(CryptoError::BadKeyLength {
                alg: alg.name(),
                expected: "32",
                got: seed.len(),
            });
        }
        let pkey = PKey::private_key_from_raw_bytes(seed, Id::ED25519).map_err(backend)?;
        Ok(Self::openssl(alg, pkey))
    }

    /// Writes the key as unencrypted PKCS#8 PEM; the buffer is wiped when dropped.
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>, CryptoError> {
        let pkey = match &self.inner {
            PrivateInner::Openssl(p) => p,
            PrivateInner::Pq(k) => return k.to_pkcs8_pem(),
        };
        let pem = Zeroizing::new(pkey.private_key_to_pem_pkcs8().map_err(backend)?);
        String::from_utf8(pem.to_vec())
            .map(Zeroizing::new)
            .map_err(|_| CryptoError::Backend("PEM is not UTF-8".into()))
    }

    /// Sets the RSASSA-PSS salt length used by [`Self::sign`] (default 32; ignored by the other
    /// algorithms). The matching [`VerifyingKey`] from [`Self::verifying_key`] inherits it.
    pub fn with_pss_salt_len(mut self, salt_len: usize) -> Self {
        self.pss_salt_len = salt_len;
        self
    }

    /// The algorithm this key signs with.
    pub fn algorithm(&self) -> SignatureAlgorithm {
        self.alg
    }

    /// RSA modulus size or curve size in bits; for ML-DSA/SLH-DSA the classical strength the
    /// parameter set targets (128 or 192).
    pub fn bits(&self) -> u32 {
        match &self.inner {
            PrivateInner::Openssl(p) => p.bits(),
            PrivateInner::Pq(_) => self.alg.pq_bits(),
        }
    }

    /// Signature length in bytes: the modulus length for RSA, 64 for Ed25519, for ECDSA the
    /// *maximum* DER length (72; an actual DER signature may be a few bytes shorter, its raw
    /// form is always [`ECDSA_P256_RAW_LEN`]), the FIPS 204/205 length for ML-DSA/SLH-DSA.
    pub fn signature_len(&self) -> usize {
        match (&self.inner, self.alg) {
            (_, SignatureAlgorithm::EcdsaP256Sha256) => ECDSA_P256_DER_MAX_LEN,
            (PrivateInner::Openssl(p), SignatureAlgorithm::RsaPkcs1v15Sha256)
            | (PrivateInner::Openssl(p), SignatureAlgorithm::RsaPssSha256) => p.size(),
            (_, alg) => alg.fixed_signature_len().unwrap_or(0),
        }
    }

    /// Signs `msg` (hashing it with SHA-256 first, except Ed25519, ML-DSA and SLH-DSA, which
    /// sign the message itself). ECDSA signatures are DER; see the module documentation.
    pub fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let pkey = match &self.inner {
            PrivateInner::Openssl(p) => p,
            PrivateInner::Pq(k) => return k.sign(msg),
        };
        let mut signer = match self.alg {
            SignatureAlgorithm::Ed25519 => Signer::new_without_digest(pkey),
            _ => Signer::new(MessageDigest::sha256(), pkey),
        }
        .map_err(backend)?;
        match self.alg {
            SignatureAlgorithm::RsaPkcs1v15Sha256 => {
                signer.set_rsa_padding(Padding::PKCS1).map_err(backend)?
            }
            SignatureAlgorithm::RsaPssSha256 => {
                signer
                    .set_rsa_padding(Padding::PKCS1_PSS)
                    .map_err(backend)?;
                signer
                    .set_rsa_pss_saltlen(pss_saltlen(self.pss_salt_len)?)
                    .map_err(backend)?;
                signer
                    .set_rsa_mgf1_md(MessageDigest::sha256())
                    .map_err(backend)?;
            }
            _ => {}
        }
        signer.sign_oneshot_to_vec(msg).map_err(backend)
    }

    /// Signs `msg` under the context string `ctx` (ML-DSA and SLH-DSA only: FIPS 204 §5.2,
    /// FIPS 205 §10.2.1, at most 255 bytes; domain separation between uses of one key). An
    /// empty context is [`Self::sign`]; classical algorithms refuse a non-empty one.
    pub fn sign_with_context(&self, msg: &[u8], ctx: &[u8]) -> Result<Vec<u8>, CryptoError> {
        match &self.inner {
            PrivateInner::Pq(k) => k.sign_with_context(msg, ctx),
            PrivateInner::Openssl(_) if ctx.is_empty() => self.sign(msg),
            PrivateInner::Openssl(_) => Err(CryptoError::Unsupported(self.alg.name())),
        }
    }

    /// The public half, with this key's algorithm and PSS salt length.
    pub fn verifying_key(&self) -> Result<VerifyingKey, CryptoError> {
        let pkey = match &self.inner {
            PrivateInner::Openssl(p) => p,
            PrivateInner::Pq(k) => {
                return Ok(VerifyingKey {
                    alg: self.alg,
                    inner: PublicInner::Pq(k.verifying_key()),
                    pss_salt_len: self.pss_salt_len,
                })
            }
        };
        let der = pkey.public_key_to_der().map_err(backend)?;
        Ok(VerifyingKey::from_spki_der(self.alg, &der)?.with_pss_salt_len(self.pss_salt_len))
    }
}

/// A public key for one signature algorithm.
#[derive(Clone)]
pub struct VerifyingKey {
    alg: SignatureAlgorithm,
    inner: PublicInner,
    pss_salt_len: usize,
}

impl fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("alg", &self.alg)
            .field("bits", &self.bits())
            .field("pss_salt_len", &self.pss_salt_len)
            .finish()
    }
}

impl VerifyingKey {
    fn new(alg: SignatureAlgorithm, pkey: PKey<Public>) -> Result<Self, CryptoError> {
        check_key_type(alg, &pkey)?;
        Ok(VerifyingKey {
            alg,
            inner: PublicInner::Openssl(pkey),
            pss_salt_len: PSS_DEFAULT_SALT_LEN,
        })
    }

    fn pq(alg: SignatureAlgorithm, key: PqVerifyingKey) -> Self {
        VerifyingKey {
            alg,
            inner: PublicInner::Pq(key),
            pss_salt_len: PSS_DEFAULT_SALT_LEN,
        }
    }

    /// Reads an X.509 `SubjectPublicKeyInfo` in PEM (`BEGIN PUBLIC KEY`, RFC 5280 §4.1.2.7).
    pub fn from_spki_pem(alg: SignatureAlgorithm, pem: &[u8]) -> Result<Self, CryptoError> {
        if alg.is_post_quantum() {
            return Ok(Self::pq(alg, PqVerifyingKey::from_spki_pem(alg, pem)?));
        }
        Self::new(alg, PKey::public_key_from_pem(pem).map_err(backend)?)
    }

    /// Reads a DER `SubjectPublicKeyInfo`.
    pub fn from_spki_der(alg: SignatureAlgorithm, der: &[u8]) -> Result<Self, CryptoError> {
        if alg.is_post_quantum() {
            return Ok(Self::pq(alg, PqVerifyingKey::from_spki_der(alg, der)?));
        }
        Self::new(alg, PKey::public_key_from_der(der).map_err(backend)?)
    }

    /// A key from its raw form: the 32-byte Ed25519 public key (RFC 8032 §5.1.5), for ECDSA
    /// a SEC 1 §2.3.3 P-256 point (65 bytes uncompressed or 33 compressed), the FIPS 204
    /// `pkEncode` (1312/1952 bytes) or FIPS 205 `PK.seed || PK.root` (32 bytes). RSA has none.
    pub fn from_raw(alg: SignatureAlgorithm, raw: &[u8]) -> Result<Self, CryptoError> {
        if alg.is_post_quantum() {
            return Ok(Self::pq(alg, PqVerifyingKey::from_raw(alg, raw)?));
        }
        match alg {
            SignatureAlgorithm::Ed25519 => {
                if raw.len() != 32 {
                    return Err(CryptoError::BadKeyLength {
                        alg: alg.name(),
                        expected: "32",
                        got: raw.len(),
                    });
                }
                Self::new(
                    alg,
                    PKey::public_key_from_raw_bytes(raw, Id::ED25519).map_err(backend)?,
                )
            }
            SignatureAlgorithm::EcdsaP256Sha256 => {
                if raw.len() != 65 && raw.len() != 33 {
                    return Err(CryptoError::BadKeyLength {
                        alg: alg.name(),
                        expected: "65 or 33",
                        got: raw.len(),
                    });
                }
                let group = p256()?;
                let mut ctx = openssl::bn::BigNumContext::new().map_err(backend)?;
                let point = EcPoint::from_bytes(&group, raw, &mut ctx).map_err(backend)?;
                let ec = EcKey::from_public_key(&group, &point).map_err(backend)?;
                ec.check_key().map_err(backend)?;
                Self::new(alg, PKey::from_ec_key(ec).map_err(backend)?)
            }
            _ => Err(CryptoError::Unsupported(alg.name())),
        }
    }

    /// The raw public key: 32 bytes for Ed25519, the 65-byte uncompressed point for ECDSA,
    /// the standards' encodings for ML-DSA and SLH-DSA.
    pub fn to_raw(&self) -> Result<Vec<u8>, CryptoError> {
        let pkey = match &self.inner {
            PublicInner::Openssl(p) => p,
            PublicInner::Pq(k) => return Ok(k.to_raw()),
        };
        match self.alg {
            SignatureAlgorithm::Ed25519 => pkey.raw_public_key().map_err(backend),
            SignatureAlgorithm::EcdsaP256Sha256 => {
                let ec = pkey.ec_key().map_err(backend)?;
                let mut ctx = openssl::bn::BigNumContext::new().map_err(backend)?;
                ec.public_key()
                    .to_bytes(ec.group(), PointConversionForm::UNCOMPRESSED, &mut ctx)
                    .map_err(backend)
            }
            _ => Err(CryptoError::Unsupported(self.alg.name())),
        }
    }

    /// The DER `SubjectPublicKeyInfo`.
    pub fn to_spki_der(&self) -> Result<Vec<u8>, CryptoError> {
        match &self.inner {
            PublicInner::Openssl(p) => p.public_key_to_der().map_err(backend),
            PublicInner::Pq(k) => k.to_spki_der(),
        }
    }

    /// The PEM `SubjectPublicKeyInfo`.
    pub fn to_spki_pem(&self) -> Result<String, CryptoError> {
        let pkey = match &self.inner {
            PublicInner::Openssl(p) => p,
            PublicInner::Pq(k) => return k.to_spki_pem(),
        };
        let pem = pkey.public_key_to_pem().map_err(backend)?;
        String::from_utf8(pem).map_err(|_| CryptoError::Backend("PEM is not UTF-8".into()))
    }

    /// Sets the RSASSA-PSS salt length the verifier requires (default 32, the SHA-256 length;
    /// RFC 8017 §9.1.2 step 10 needs the verifier to know it). Ignored by other algorithms.
    pub fn with_pss_salt_len(mut self, salt_len: usize) -> Self {
        self.pss_salt_len = salt_len;
        self
    }

    /// The RSASSA-PSS salt length in force.
    pub fn pss_salt_len(&self) -> usize {
        self.pss_salt_len
    }

    /// The algorithm this key verifies.
    pub fn algorithm(&self) -> SignatureAlgorithm {
        self.alg
    }

    /// RSA modulus size or curve size in bits; for ML-DSA/SLH-DSA the classical strength the
    /// parameter set targets (128 or 192).
    pub fn bits(&self) -> u32 {
        match &self.inner {
            PublicInner::Openssl(p) => p.bits(),
            PublicInner::Pq(_) => self.alg.pq_bits(),
        }
    }

    /// Length of this key's signatures on a layer-2 GOOSE wire: the modulus length for RSA,
    /// 64 for Ed25519 and raw ECDSA, the FIPS 204/205 lengths for ML-DSA/SLH-DSA.
    pub fn signature_len(&self) -> usize {
        match &self.inner {
            PublicInner::Openssl(p) if self.alg.is_rsa() => p.size(),
            _ => self.alg.fixed_signature_len().unwrap_or(0),
        }
    }

    /// Verifies `sig` over `msg` under the context string `ctx` (see
    /// [`SigningKey::sign_with_context`]). Any failure is [`CryptoError::VerifyFailed`];
    /// classical algorithms refuse a non-empty context with `Unsupported`.
    pub fn verify_with_context(
        &self,
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), CryptoError> {
        match &self.inner {
            PublicInner::Pq(k) => k.verify_with_context(msg, ctx, sig),
            PublicInner::Openssl(_) if ctx.is_empty() => self.verify(msg, sig),
            PublicInner::Openssl(_) => Err(CryptoError::Unsupported(self.alg.name())),
        }
    }

    /// Verifies `sig` over `msg`. Any failure, malformed signatures included, is
    /// [`CryptoError::VerifyFailed`]; only a failure to set up the check is `Backend`.
    pub fn verify(&self, msg: &[u8], sig: &[u8]) -> Result<(), CryptoError> {
        let pkey = match &self.inner {
            PublicInner::Openssl(p) => p,
            PublicInner::Pq(k) => return k.verify(msg, sig),
        };
        let mut verifier = match self.alg {
            SignatureAlgorithm::Ed25519 => Verifier::new_without_digest(pkey),
            _ => Verifier::new(MessageDigest::sha256(), pkey),
        }
        .map_err(backend)?;
        match self.alg {
            SignatureAlgorithm::RsaPkcs1v15Sha256 => {
                verifier.set_rsa_padding(Padding::PKCS1).map_err(backend)?
            }
            SignatureAlgorithm::RsaPssSha256 => {
                verifier
                    .set_rsa_padding(Padding::PKCS1_PSS)
                    .map_err(backend)?;
                verifier
                    .set_rsa_pss_saltlen(pss_saltlen(self.pss_salt_len)?)
                    .map_err(backend)?;
                verifier
                    .set_rsa_mgf1_md(MessageDigest::sha256())
                    .map_err(backend)?;
            }
            _ => {}
        }
        match verifier.verify_oneshot(sig, msg) {
            Ok(true) => Ok(()),
            // A malformed signature shows up as an OpenSSL error; the error queue is drained by
            // `ErrorStack::get`, so nothing leaks into later calls.
            Ok(false) | Err(_) => Err(CryptoError::VerifyFailed),
        }
    }
}

/// Converts a DER ECDSA P-256 signature to raw `r || s` (32 bytes each, big-endian).
pub fn ecdsa_der_to_raw(der: &[u8]) -> Result<[u8; ECDSA_P256_RAW_LEN], CryptoError> {
    let sig = EcdsaSig::from_der(der).map_err(|_| CryptoError::VerifyFailed)?;
    let mut out = [0u8; ECDSA_P256_RAW_LEN];
    let r = sig
        .r()
        .to_vec_padded(32)
        .map_err(|_| CryptoError::VerifyFailed)?;
    let s = sig
        .s()
        .to_vec_padded(32)
        .map_err(|_| CryptoError::VerifyFailed)?;
    out[..32].copy_from_slice(&r);
    out[32..].copy_from_slice(&s);
    Ok(out)
}

/// Converts a raw `r || s` ECDSA P-256 signature (exactly 64 bytes) to DER.
pub fn ecdsa_raw_to_der(raw: &[u8]) -> Result<Vec<u8>, CryptoError> {
    if raw.len() != ECDSA_P256_RAW_LEN {
        return Err(CryptoError::BadTagLength {
            alg: "ecdsa-p256-sha256",
            expected: ECDSA_P256_RAW_LEN,
            got: raw.len(),
        });
    }
    let r = BigNum::from_slice(&raw[..32]).map_err(backend)?;
    let s = BigNum::from_slice(&raw[32..]).map_err(backend)?;
    EcdsaSig::from_private_components(r, s)
        .map_err(backend)?
        .to_der()
        .map_err(backend)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for a in SignatureAlgorithm::ALL {
            assert_eq!(a.to_string().parse::<SignatureAlgorithm>().unwrap(), a);
        }
        assert!("rsa-md5".parse::<SignatureAlgorithm>().is_err());
    }

    #[test]
    fn rejects_small_rsa_and_wrong_key_types() {
        assert!(matches!(
            SigningKey::generate(SignatureAlgorithm::RsaPssSha256, 512),
            Err(CryptoError::BadKeyLength { .. })
        ));
        let ed = SigningKey::generate(SignatureAlgorithm::Ed25519, 0).unwrap();
        let pem = ed.to_pkcs8_pem().unwrap();
        assert!(
            SigningKey::from_pkcs8_pem(SignatureAlgorithm::EcdsaP256Sha256, pem.as_bytes())
                .is_err()
        );
        let spki = ed.verifying_key().unwrap().to_spki_der().unwrap();
        assert!(VerifyingKey::from_spki_der(SignatureAlgorithm::RsaPkcs1v15Sha256, &spki).is_err());
        assert!(VerifyingKey::from_spki_der(SignatureAlgorithm::Ed25519, b"garbage").is_err());
        assert!(VerifyingKey::from_raw(SignatureAlgorithm::Ed25519, &[0; 31]).is_err());
    }

    #[test]
    fn ecdsa_raw_der_round_trip() {
        let k = SigningKey::generate(SignatureAlgorithm::EcdsaP256Sha256, 0).unwrap();
        let vk = k.verifying_key().unwrap();
        let der = k.sign(b"goose").unwrap();
        assert!(der.len() <= k.signature_len());
        let raw = ecdsa_der_to_raw(&der).unwrap();
        assert_eq!(ecdsa_raw_to_der(&raw).unwrap(), der);
        vk.verify(b"goose", &ecdsa_raw_to_der(&raw).unwrap())
            .unwrap();
        assert!(ecdsa_raw_to_der(&raw[..63]).is_err());
        assert!(ecdsa_der_to_raw(&raw).is_err());
        let vk2 =
            VerifyingKey::from_raw(SignatureAlgorithm::EcdsaP256Sha256, &vk.to_raw().unwrap())
                .unwrap();
        vk2.verify(b"goose", &der).unwrap();
    }

    #[test]
    fn verify_never_panics_on_junk() {
        for alg in [
            SignatureAlgorithm::EcdsaP256Sha256,
            SignatureAlgorithm::Ed25519,
        ] {
            let vk = SigningKey::generate(alg, 0)
                .unwrap()
                .verifying_key()
                .unwrap();
            for junk in [&[][..], &[0u8; 1], &[0x30, 0x80], &[0xff; 64], &[0; 200]] {
                assert_eq!(vk.verify(b"m", junk), Err(CryptoError::VerifyFailed));
            }
        }
    }
}
