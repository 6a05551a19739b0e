//! One error type for every backend. Each kind of failure has its own variant, so a caller (and a
//! test) can tell an unknown CA from a revoked or expired certificate, a pin mismatch, a version or
//! suite mismatch, whichever library produced it.
//!
//! A failure is either found by this side (`Side::Local`) or learnt from the peer's fatal alert
//! (`Side::Peer`, RFC 5246 §7.2.2, RFC 8446 §6.2). The alert-to-variant mapping is in [`from_alert`].
use crate::TlsVersion;
use std::fmt;
use std::io;

/// Who detected the failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// This endpoint's own checks.
    Local,
    /// The peer, which told us with a fatal alert.
    Peer,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Local => "local check",
            Side::Peer => "peer alert",
        })
    }
}

/// Errors from profiles, backends and handshakes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The peer certificate does not chain to a configured CA (alert `unknown_ca`, 48).
    #[error("certificate from an unknown CA ({by}): {detail}")]
    UnknownCa {
        /// The side that detected the failure and sent the alert.
        by: Side,
        /// The library's own description of the failure.
        detail: String,
    },
    /// The peer certificate chains to the CA but is not the pinned certificate. Only the verifying
    /// side can know this; its peer sees [`TlsError::BadCertificate`].
    #[error("peer certificate does not match the pinned certificate")]
    PinMismatch,
    /// The certificate is on a CRL (RFC 5280 §6.3; alert `certificate_revoked`, 44).
    #[error("certificate revoked ({by}): {detail}")]
    Revoked {
        /// The side that detected the failure and sent the alert.
        by: Side,
        /// The library's own description of the failure.
        detail: String,
    },
    /// The certificate is expired or not yet valid (RFC 5280 §4.1.2.5; alert `certificate_expired`, 45).
    #[error("certificate expired or not yet valid ({by}): {detail}")]
    Expired {
        /// The side that detected the failure and sent the alert.
        by: Side,
        /// The library's own description of the failure.
        detail: String,
    },
    /// Any other certificate rejection: no certificate where IEC 62351-3 requires one, bad signature,
    /// wrong key usage, or the peer's `bad_certificate`/`certificate_unknown`/`access_denied` alert
    /// (what a peer sends after its pin check fails).
    #[error("certificate rejected ({by}): {detail}")]
    BadCertificate {
        /// The side that detected the failure and sent the alert.
        by: Side,
        /// The library's own description of the failure.
        detail: String,
    },
    /// No protocol version in common (alert `protocol_version`, 70).
    #[error("no common TLS version ({by}): {detail}")]
    ProtocolVersion {
        /// The side that detected the failure and sent the alert.
        by: Side,
        /// The library's own description of the failure.
        detail: String,
    },
    /// No cipher suite in common (`handshake_failure`, 40, or `insufficient_security`, 71).
    #[error("no shared cipher suite ({by}): {detail}")]
    NoSharedCipher {
        /// The side that detected the failure and sent the alert.
        by: Side,
        /// The library's own description of the failure.
        detail: String,
    },
    /// The server does not recognize the name the client sent in server_name (alert
    /// `unrecognized_name`, 112, RFC 6066 §3): a refusal of the name, not of the version or
    /// suite.
    #[error("server name not recognized ({by}): {detail}")]
    UnrecognizedName {
        /// The side that detected the failure and sent the alert.
        by: Side,
        /// The library's own description of the failure.
        detail: String,
    },
    /// The handshake failed for another reason.
    #[error("TLS handshake failed: {0}")]
    HandshakeFailed(String),
    /// The peer closed the connection (TCP FIN or close_notify) during the handshake.
    #[error("connection closed by peer during the handshake")]
    Closed,
    /// A socket timeout expired.
    #[error("timed out")]
    Timeout,
    /// The backend cannot do what the profile asks (a suite, a version, rekeying, ...).
    #[error("{backend} backend does not support {what}")]
    Unsupported {
        /// The backend's name (`openssl`, `gnutls`, `rustls`).
        backend: &'static str,
        /// What it cannot do.
        what: String,
    },
    /// The profile is invalid.
    #[error(transparent)]
    Profile(#[from] crate::profile::ProfileError),
    /// PKI generation or loading failed.
    #[error("PKI: {0}")]
    Pki(String),
    /// The negotiated version is not one the profile allows (defence in depth; should not happen).
    #[error("negotiated {0}, which the profile does not allow")]
    VersionNotAllowed(TlsVersion),
    /// A socket operation failed outside the TLS library.
    #[error("I/O: {0}")]
    Io(io::Error),
}

impl From<io::Error> for TlsError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => TlsError::Timeout,
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => TlsError::Closed,
            _ => match e.downcast::<TlsError>() {
                Ok(t) => t,
                Err(e) => TlsError::Io(e),
            },
        }
    }
}

impl From<TlsError> for io::Error {
    fn from(e: TlsError) -> Self {
        match e {
            TlsError::Io(e) => e,
            TlsError::Timeout => io::Error::new(io::ErrorKind::TimedOut, e),
            TlsError::Closed => io::Error::new(io::ErrorKind::UnexpectedEof, e),
            e => io::Error::other(e),
        }
    }
}

impl TlsError {
    /// Whether the error is the peer's fatal alert (the variants that say which side, said by
    /// the peer): the peer ended the handshake, so this end has no alert of its own to deliver.
    pub fn from_peer_alert(&self) -> bool {
        matches!(
            self,
            Self::UnknownCa { by: Side::Peer, .. }
                | Self::Revoked { by: Side::Peer, .. }
                | Self::Expired { by: Side::Peer, .. }
                | Self::BadCertificate { by: Side::Peer, .. }
                | Self::ProtocolVersion { by: Side::Peer, .. }
                | Self::NoSharedCipher { by: Side::Peer, .. }
                | Self::UnrecognizedName { by: Side::Peer, .. }
        )
    }

    /// A short stable name of the variant, for event logs and test tables.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownCa { .. } => "unknown-ca",
            Self::PinMismatch => "pin-mismatch",
            Self::Revoked { .. } => "revoked",
            Self::Expired { .. } => "expired",
            Self::BadCertificate { .. } => "bad-certificate",
            Self::ProtocolVersion { .. } => "protocol-version",
            Self::NoSharedCipher { .. } => "no-shared-cipher",
            Self::UnrecognizedName { .. } => "unrecognized-name",
            Self::HandshakeFailed(_) => "handshake-failed",
            Self::Closed => "closed",
            Self::Timeout => "timeout",
            Self::Unsupported { .. } => "unsupported",
            Self::Profile(_) => "profile",
            Self::Pki(_) => "pki",
            Self::VersionNotAllowed(_) => "version-not-allowed",
            Self::Io(_) => "io",
        }
    }
}

/// TLS alert descriptions used here (RFC 5246 §7.2, RFC 8446 §6).
pub mod alert {
    /// `handshake_failure`: no acceptable set of security parameters.
    pub const HANDSHAKE_FAILURE: u8 = 40;
    /// `bad_certificate`: a certificate was corrupt or failed a check.
    pub const BAD_CERTIFICATE: u8 = 42;
    /// `unsupported_certificate`: a certificate of an unsupported type.
    pub const UNSUPPORTED_CERTIFICATE: u8 = 43;
    /// `certificate_revoked`: a certificate was revoked by its signer.
    pub const CERTIFICATE_REVOKED: u8 = 44;
    /// `certificate_expired`: a certificate has expired or is not yet valid.
    pub const CERTIFICATE_EXPIRED: u8 = 45;
    /// `certificate_unknown`: another problem with a certificate.
    pub const CERTIFICATE_UNKNOWN: u8 = 46;
    /// `unknown_ca`: the chain does not lead to a trusted CA.
    pub const UNKNOWN_CA: u8 = 48;
    /// `access_denied`: a valid certificate, but access is refused.
    pub const ACCESS_DENIED: u8 = 49;
    /// `decrypt_error`: a signature or Finished check failed.
    pub const DECRYPT_ERROR: u8 = 51;
    /// `protocol_version`: the peer's version is not supported.
    pub const PROTOCOL_VERSION: u8 = 70;
    /// `insufficient_security`: the peer's suites are all too weak.
    pub const INSUFFICIENT_SECURITY: u8 = 71;
    /// `unrecognized_name`: the server does not know the name in server_name (RFC 6066 §3).
    pub const UNRECOGNIZED_NAME: u8 = 112;
    /// `certificate_required` (TLS 1.3): the client sent no certificate.
    pub const CERTIFICATE_REQUIRED: u8 = 116;
}

/// Maps a fatal alert received from the peer (or sent by us, with `by = Local`) to an error.
///
/// `handshake_failure` (40) is what OpenSSL, GnuTLS and rustls send when no suite is shared
/// (RFC 5246 §7.4.1.3: "If no acceptable choices are presented, return a handshake failure alert"),
/// so it maps to [`TlsError::NoSharedCipher`].
pub fn from_alert(desc: u8, by: Side, library_text: &str) -> TlsError {
    let detail = format!("alert {desc} ({library_text})");
    match desc {
        alert::UNKNOWN_CA => TlsError::UnknownCa { by, detail },
        alert::CERTIFICATE_REVOKED => TlsError::Revoked { by, detail },
        alert::CERTIFICATE_EXPIRED => TlsError::Expired { by, detail },
        alert::BAD_CERTIFICATE
        | alert::UNSUPPORTED_CERTIFICATE
        | alert::CERTIFICATE_UNKNOWN
        | alert::ACCESS_DENIED
        | alert::DECRYPT_ERROR
        | alert::CERTIFICATE_REQUIRED => TlsError::BadCertificate { by, detail },
        alert::PROTOCOL_VERSION => TlsError::ProtocolVersion { by, detail },
        alert::HANDSHAKE_FAILURE | alert::INSUFFICIENT_SECURITY => {
            TlsError::NoSharedCipher { by, detail }
        }
        alert::UNRECOGNIZED_NAME => TlsError::UnrecognizedName { by, detail },
        _ => TlsError::HandshakeFailed(detail),
    }
}
