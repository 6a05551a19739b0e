//! [`GnutlsError`] and the GnuTLS error codes gander tells apart.

use std::os::raw::c_int;

/// A failed GnuTLS, nettle or GMP operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GnutlsError {
    /// A GnuTLS function returned the negative error `code` (one of [`code`]'s or another).
    #[error("{function}: {message} ({code})")]
    Call {
        /// The GnuTLS function that failed, e.g. `gnutls_handshake`.
        function: &'static str,
        /// The GnuTLS error code (negative).
        code: i32,
        /// `gnutls_strerror(code)`.
        message: String,
    },
    /// GnuTLS did not accept a priority string.
    #[error("GnuTLS priority {priority:?} at {at:?}: {message} ({code})")]
    Priority {
        /// The priority string.
        priority: String,
        /// Where in it GnuTLS stopped.
        at: String,
        /// The GnuTLS error code (negative).
        code: i32,
        /// `gnutls_strerror(code)`.
        message: String,
    },
    /// A string handed to GnuTLS contains a NUL byte.
    #[error("{what} contains a NUL byte")]
    Nul {
        /// What the string is, e.g. `path "a\0b"`.
        what: String,
    },
    /// A buffer longer than GnuTLS's 32-bit lengths allow.
    #[error("a buffer of {0} bytes is longer than GnuTLS can take (4 GiB)")]
    TooLong(usize),
    /// A number does not fit the fixed length it is written out in.
    #[error("integer longer than {0} bytes")]
    IntegerTooLong(usize),
    /// The random generator (`gnutls_rnd`) failed inside a nettle call.
    #[error("gnutls_rnd failed")]
    Random,
    /// Key agreement refused its input or produced a degenerate result (nettle and GMP report
    /// no codes), e.g. a peer point that is not on the curve.
    #[error("{0}")]
    KeyAgreement(&'static str),
}

impl GnutlsError {
    /// The error GnuTLS `function` reported with `code`.
    pub(crate) fn call(function: &'static str, code: c_int) -> Self {
        GnutlsError::Call {
            function,
            code,
            message: error_text(code),
        }
    }

    /// The GnuTLS error code, for the errors that have one.
    pub fn code(&self) -> Option<i32> {
        match self {
            GnutlsError::Call { code, .. } | GnutlsError::Priority { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// `gnutls_strerror(code)`: GnuTLS's description of an error code.
pub fn error_text(code: i32) -> String {
    crate::init();
    // SAFETY: gnutls_strerror returns a static string (or NULL) for every code, which `cstr`
    // copies at once.
    unsafe { crate::cstr(crate::sys::gnutls_strerror(code)) }
        .unwrap_or_else(|| "GnuTLS error".into())
}

/// The GnuTLS error codes (`GNUTLS_E_*`, `<gnutls/gnutls.h>`) gander handles one by one.
pub mod code {
    use crate::sys;
    /// The call would block, or the socket timeout passed.
    pub const AGAIN: i32 = sys::GNUTLS_E_AGAIN;
    /// A certificate check failed (also what a refusing verify callback returns).
    pub const CERTIFICATE_ERROR: i32 = sys::GNUTLS_E_CERTIFICATE_ERROR;
    /// The peer sent no certificate where one is required.
    pub const CERTIFICATE_REQUIRED: i32 = sys::GNUTLS_E_CERTIFICATE_REQUIRED;
    /// The peer certificate did not verify.
    pub const CERTIFICATE_VERIFICATION_ERROR: i32 = sys::GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR;
    /// The peer sent a fatal alert (read it with `Session::alert`).
    pub const FATAL_ALERT_RECEIVED: i32 = sys::GNUTLS_E_FATAL_ALERT_RECEIVED;
    /// Application data arrived during a handshake.
    pub const GOT_APPLICATION_DATA: i32 = sys::GNUTLS_E_GOT_APPLICATION_DATA;
    /// No credentials fit the negotiated key exchange.
    pub const INSUFFICIENT_CREDENTIALS: i32 = sys::GNUTLS_E_INSUFFICIENT_CREDENTIALS;
    /// A system call was interrupted; the call may be repeated.
    pub const INTERRUPTED: i32 = sys::GNUTLS_E_INTERRUPTED;
    /// The session was invalidated by an earlier fatal error.
    pub const INVALID_SESSION: i32 = sys::GNUTLS_E_INVALID_SESSION;
    /// The peer sent no certificate.
    pub const NO_CERTIFICATE_FOUND: i32 = sys::GNUTLS_E_NO_CERTIFICATE_FOUND;
    /// No cipher suite in common.
    pub const NO_CIPHER_SUITES: i32 = sys::GNUTLS_E_NO_CIPHER_SUITES;
    /// No key-share group in common (TLS 1.3).
    pub const NO_COMMON_KEY_SHARE: i32 = sys::GNUTLS_E_NO_COMMON_KEY_SHARE;
    /// A public-key signature did not verify.
    pub const PK_SIG_VERIFY_FAILED: i32 = sys::GNUTLS_E_PK_SIG_VERIFY_FAILED;
    /// The TCP connection closed without a close_notify.
    pub const PREMATURE_TERMINATION: i32 = sys::GNUTLS_E_PREMATURE_TERMINATION;
    /// Reading from the transport failed.
    pub const PULL_ERROR: i32 = sys::GNUTLS_E_PULL_ERROR;
    /// Writing to the transport failed.
    pub const PUSH_ERROR: i32 = sys::GNUTLS_E_PUSH_ERROR;
    /// The peer asked for a renegotiation (HelloRequest or ClientHello).
    pub const REHANDSHAKE: i32 = sys::GNUTLS_E_REHANDSHAKE;
    /// The session ended.
    pub const SESSION_EOF: i32 = sys::GNUTLS_E_SESSION_EOF;
    /// The peer changed its certificate during a renegotiation.
    pub const SESSION_USER_ID_CHANGED: i32 = sys::GNUTLS_E_SESSION_USER_ID_CHANGED;
    /// The handshake timeout passed.
    pub const TIMEDOUT: i32 = sys::GNUTLS_E_TIMEDOUT;
    /// The peer chose a cipher suite this side did not offer.
    pub const UNKNOWN_CIPHER_SUITE: i32 = sys::GNUTLS_E_UNKNOWN_CIPHER_SUITE;
    /// A renegotiation without RFC 5746 secure renegotiation was refused.
    pub const UNSAFE_RENEGOTIATION_DENIED: i32 = sys::GNUTLS_E_UNSAFE_RENEGOTIATION_DENIED;
    /// The peer offered no protocol version this side accepts.
    pub const UNSUPPORTED_VERSION_PACKET: i32 = sys::GNUTLS_E_UNSUPPORTED_VERSION_PACKET;
    /// The peer sent a warning alert (read it with `Session::alert`).
    pub const WARNING_ALERT_RECEIVED: i32 = sys::GNUTLS_E_WARNING_ALERT_RECEIVED;
}
