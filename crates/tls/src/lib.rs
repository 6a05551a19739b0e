//! TLS for IEC 62351-3/-4 over interchangeable backends (OpenSSL 3.0 and 3.5, GnuTLS, rustls
//! with the ring and aws-lc-rs providers).
//!
//! - [`TlsProfile`]: versions, IANA cipher suites, CA, own credentials, pinning, CRLs, resumption,
//!   tickets, renegotiation/KeyUpdate intervals; validated against what the backend can do here.
//! - [`suites`]: the cipher-suite catalogue with IEC 62351 status and run-time backend support.
//! - [`bare`]: one handshake of a library with nothing around it (the HT accounting's reference).
//! - [`record_rt`]: one report-sized record from server to client with nothing around it (the RT
//!   accounting's reference).
//! - [`backend`]: the [`backend::TlsBackend`] / [`backend::TlsStream`] traits and the three backends.
//! - [`group`]: key-exchange groups, classical, hybrid and post-quantum (ML-KEM).
//! - [`keylog`]: the NSS key log that lets tshark decrypt captured sessions (lab monitoring).
//! - [`pki`]: test and lab PKI generation (CA, RSA 1024-8192, ECDSA P-256/P-384, CRLs, negatives).
//! - [`survey`]: what an arbitrary TLS server accepts (versions, suites, chain, client
//!   authentication, resumption, renegotiation), with IEC 62351-3 verdicts.
//! - [`TlsError`]: one error type, one variant per kind of failure, whichever library reports it.
pub mod backend;
pub mod bare;
pub mod error;
pub mod group;
pub mod keylog;
pub mod named_group;
pub mod pki;
pub mod profile;
pub mod record_rt;
pub mod scan;
pub mod sigscheme;
pub mod suites;
pub mod survey;
mod version;

pub use backend::{BackendKind, TlsBackend, TlsStream};
pub use error::{Side, TlsError};
pub use group::{KxGroup, UnknownGroup};
pub use profile::{ProfileError, TlsProfile};
pub use suites::CipherSuite;
pub use version::{TlsVersion, UnknownVersion};
