//! The crypto provider boundary: everything `sec` needs from a cryptographic library, as
//! prepared keys so per-message work is only the primitive itself (key schedules, HMAC
//! inner/outer pads and GHASH keys are computed once per key, not per frame).
//!
//! Implementations: [`crate::rustcrypto::RustCryptoProvider`] (the fast default) and
//! [`crate::openssl_evp::OpensslProvider`] (system OpenSSL, used to cross-check and by the
//! benchmark's `evp-per-message` baseline).

use crate::algorithm::{EncAlgorithm, MacAlgorithm};

/// Why a cryptographic operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
    /// The key's length does not fit the algorithm.
    #[error("{alg}: key of {got} bytes not accepted (expected {expected})")]
    BadKeyLength {
        /// The algorithm.
        alg: &'static str,
        /// The lengths it accepts, in bytes.
        expected: &'static str,
        /// The key's length, bytes.
        got: usize,
    },
    /// IV or nonce of the wrong length (GCM/GMAC take exactly 12 bytes here, Ascon-AEAD128 16).
    #[error("{alg}: IV of {got} bytes, expected {expected}")]
    BadIvLength {
        /// The algorithm.
        alg: &'static str,
        /// The length it takes, bytes.
        expected: usize,
        /// The IV's length, bytes.
        got: usize,
    },
    /// Tag of the wrong length for the algorithm.
    #[error("{alg}: tag of {got} bytes, expected {expected}")]
    BadTagLength {
        /// The algorithm.
        alg: &'static str,
        /// The tag length it takes, bytes.
        expected: usize,
        /// The tag's length, bytes.
        got: usize,
    },
    /// The MAC, AEAD tag or signature did not verify.
    #[error("authentication failed")]
    VerifyFailed,
    /// The algorithm is `None` or otherwise not usable for this operation.
    #[error("algorithm {0} cannot be used for this operation")]
    Unsupported(&'static str),
    /// The underlying library reported an error.
    #[error("crypto backend: {0}")]
    Backend(String),
}

/// A MAC key with its per-key state precomputed.
pub trait MacKey: Send + Sync {
    /// The algorithm this key was prepared for.
    fn algorithm(&self) -> MacAlgorithm;
    /// Writes the (truncated) tag of `data` into `tag_out`, whose length must be
    /// `algorithm().tag_len()`. `iv` must be `algorithm().iv_len()` bytes (12 for GMAC, 16 for
    /// the Ascon MAC) and is ignored by HMACs.
    fn sign(&self, iv: &[u8], data: &[u8], tag_out: &mut [u8]) -> Result<(), CryptoError>;
    /// Checks `tag` against `data` in constant time (never `==`).
    fn verify(&self, iv: &[u8], data: &[u8], tag: &[u8]) -> Result<(), CryptoError>;
}

/// An AEAD key (AES-GCM with its key schedule and GHASH key precomputed, or Ascon-AEAD128).
pub trait AeadKey: Send + Sync {
    /// The algorithm this key was prepared for.
    fn algorithm(&self) -> EncAlgorithm;
    /// Encrypts `buf` in place and returns the 16-byte tag over `aad` and the ciphertext.
    /// `iv` must be `algorithm().iv_len()` bytes (12 for GCM, 16 for Ascon-AEAD128).
    fn seal_in_place(&self, iv: &[u8], aad: &[u8], buf: &mut [u8])
        -> Result<[u8; 16], CryptoError>;
    /// Checks the tag (constant time) and, only if it verifies, decrypts `buf` in place.
    /// For GCM `tag` may be shorter than 16 bytes (SP 800-38D §5.2.1.2 truncated tags, 4..=16);
    /// Ascon-AEAD128 takes the full 16. On failure `buf` is left as ciphertext.
    fn open_in_place(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError>;
}

/// A source of prepared keys.
pub trait CryptoProvider: Send + Sync {
    /// Short name for reports (`rustcrypto`, `openssl`).
    fn name(&self) -> &'static str;
    /// Prepares a MAC key. Fails for `MacAlgorithm::None` and for key lengths the algorithm rejects.
    fn mac_key(&self, alg: MacAlgorithm, key: &[u8]) -> Result<Box<dyn MacKey>, CryptoError>;
    /// Prepares an AEAD key. Fails for `EncAlgorithm::None` and for a key of the wrong length.
    fn aead_key(&self, alg: EncAlgorithm, key: &[u8]) -> Result<Box<dyn AeadKey>, CryptoError>;
}

/// The default provider: RustCrypto (AES-NI, PCLMULQDQ and SHA-NI where the CPU has them).
pub fn default_provider() -> &'static dyn CryptoProvider {
    &crate::rustcrypto::RustCryptoProvider
}
