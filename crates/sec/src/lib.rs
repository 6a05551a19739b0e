//! IEC 62351-6 security for GOOSE (IEC 61850-8-1), R-GOOSE and R-SV (IEC 61850-90-5 sessions).
//!
//! Layers, bottom up: the algorithm catalogue ([`algorithm`]) and the crypto provider boundary
//! ([`provider`]) with its implementations ([`rustcrypto`], [`openssl_evp`]); signatures
//! ([`signature`]); the key store ([`keystore`]); replay protection ([`replay`]); one
//! classification of a whole frame ([`view`]); and protect/verify for 90-5 SPDUs ([`spdu`])
//! and layer-2 GOOSE ([`l2`]), each parameterised by a [`profile::Profile`]. [`frame`] applies
//! them to captures.

#![forbid(unsafe_code)]

pub mod algorithm;
pub mod ascon;
pub mod error;
pub mod fit;
pub mod frame;
pub mod keystore;
pub mod l2;
pub mod nonce;
pub mod openssl_evp;
pub mod postquantum;
pub mod profile;
pub mod provider;
pub mod replay;
pub mod rustcrypto;
pub mod signature;
pub mod spdu;
pub mod spdu_emit;
pub mod syslog;
pub mod view;

pub use algorithm::{EncAlgorithm, MacAlgorithm};
pub use error::{ReplayKind, SecError};
pub use keystore::{KeyEntry, KeyFileError, KeyStore};
pub use profile::Profile;
pub use provider::{default_provider, AeadKey, CryptoError, CryptoProvider, MacKey};
pub use signature::{SignatureAlgorithm, SigningKey, VerifyingKey};
