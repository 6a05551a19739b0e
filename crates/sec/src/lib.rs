//! IEC 62351-6 security for GOOSE (IEC 61850-8-1), R-GOOSE and R-SV (IEC 61850-90-5 sessions).
//!
//! Layers, bottom up: the algorithm catalogue ([`algorithm`]) and the crypto provider boundary
//! ([`provider`]) with its implementations; signatures ([`signature`]); the key store
//! ([`keystore`]); replay protection ([`replay`]); and protect/verify for sessions ([`session`])
//! and layer-2 GOOSE ([`l2`]), each parameterised by a [`profile::Profile`].

pub mod algorithm;
pub mod openssl_evp;
pub mod provider;
pub mod rustcrypto;
pub mod signature;

pub use algorithm::{EncAlgorithm, MacAlgorithm};
pub use provider::{default_provider, AeadKey, CryptoError, CryptoProvider, MacKey};
pub use signature::{SignatureAlgorithm, SigningKey, VerifyingKey};
