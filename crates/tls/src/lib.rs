//! TLS for IEC 62351-3/-4 over interchangeable backends (OpenSSL, GnuTLS, rustls).
//!
//! - [`TlsProfile`]: versions, IANA cipher suites, CA, own credentials, pinning, CRLs, resumption,
//!   tickets, renegotiation/KeyUpdate intervals; validated against what the backend can do here.
//! - [`suites`]: the cipher-suite catalogue with IEC 62351 status and run-time backend support.
//! - [`backend`]: the [`backend::TlsBackend`] / [`backend::TlsStream`] traits and the three backends.
//! - [`pki`]: test and lab PKI generation (CA, RSA 1024-8192, ECDSA P-256/P-384, CRLs, negatives).
//! - [`TlsError`]: one error type, one variant per kind of failure, whichever library reports it.
pub mod backend;
pub mod error;
pub mod pki;
pub mod profile;
pub mod suites;
mod version;

pub use backend::{BackendKind, TlsBackend, TlsStream};
pub use error::{Side, TlsError};
pub use profile::{ProfileError, TlsProfile};
pub use suites::CipherSuite;
pub use version::{TlsVersion, UnknownVersion};
