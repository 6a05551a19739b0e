//! The probe's one error type: one variant per way a server (or the user's settings) can stop a
//! probe, each with the words a utility engineer needs to act on it, and a stable
//! [`ProbeError::kind`] for the JSON output and for tests.
use gander_mms::rcb_plan::RcbPlanError;
use gander_mms::service::{Reject, ServiceError};
use gander_tls::TlsError;
use std::net::SocketAddr;

/// Why a probe stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// `HOST:PORT` does not resolve to an address.
    #[error("cannot resolve {target:?} to an address (expected HOST:PORT, e.g. 192.0.2.10:102)")]
    Resolve {
        /// What the user gave.
        target: String,
    },
    /// The TCP connection was refused: nothing listens on the port.
    #[error("nothing listens on {addr} (connection refused)")]
    ConnectionRefused {
        /// The address tried.
        addr: SocketAddr,
    },
    /// No TCP connection within the step timeout (host down, port filtered, wrong address).
    #[error(
        "no TCP connection to {addr} within {ms} ms (host down, port filtered or wrong address)"
    )]
    ConnectTimeout {
        /// The address tried.
        addr: SocketAddr,
        /// The step timeout.
        ms: u64,
    },
    /// Another connect failure (no route, network down, ...).
    #[error("cannot connect to {addr}")]
    Connect {
        /// The address tried.
        addr: SocketAddr,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The `--tls` settings cannot be used (file, profile, credentials).
    #[error("TLS settings")]
    TlsSetup(#[source] TlsError),
    /// The probe connected without TLS but the server speaks TLS on this port.
    #[error("{addr} speaks TLS but the probe connected without TLS ({evidence}); give the client TLS settings with --tls FILE")]
    ServerSpeaksTls {
        /// The server.
        addr: SocketAddr,
        /// What showed it.
        evidence: String,
    },
    /// The probe connected with TLS but the server speaks plain MMS on this port.
    #[error("{addr} does not speak TLS on this port ({evidence}); run without --tls")]
    ServerNotTls {
        /// The server.
        addr: SocketAddr,
        /// What showed it.
        evidence: String,
    },
    /// The TLS handshake failed for another reason (certificates, versions, suites).
    #[error("TLS handshake with {addr} failed")]
    TlsHandshake {
        /// The server.
        addr: SocketAddr,
        /// The TLS library's verdict.
        #[source]
        source: TlsError,
    },
    /// The server refused the association (COTP, session REFUSE, ACSE AARE reject or MMS
    /// initiate-Error).
    #[error("the server refused the association: {detail}")]
    AssociationRefused {
        /// What the refusal carried (AARE result and diagnostic, initiate error).
        detail: String,
    },
    /// The server closed the connection (TCP FIN/RST, COTP DR) while the probe waited.
    #[error("the server closed the connection during {during}{hint}")]
    Closed {
        /// What the probe was doing.
        during: String,
        /// A hint on the likely cause (empty when there is none).
        hint: &'static str,
    },
    /// The server aborted the association (session ABORT, ACSE ABRT).
    #[error("the server aborted the association during {during}")]
    Aborted {
        /// What the probe was doing.
        during: String,
    },
    /// The server sent bytes that are not the PDU the protocol allows at this point.
    #[error("malformed or unexpected PDU from the server during {during}")]
    Protocol {
        /// What the probe was doing.
        during: String,
        /// What the MMS stack found wrong, with the layer.
        #[source]
        source: gander_mms::Error,
    },
    /// The server did not answer within the step timeout.
    #[error("no answer from the server within {ms} ms during {during}")]
    Timeout {
        /// What the probe was doing.
        during: String,
        /// The step timeout.
        ms: u64,
    },
    /// A socket error other than a close or a timeout.
    #[error("I/O error during {during}")]
    Io {
        /// What the probe was doing.
        during: String,
        /// What the system or the TLS library said.
        #[source]
        source: std::io::Error,
    },
    /// A request the probe cannot do without was answered with a confirmed-Error.
    #[error("{request}: the server answered with a service error (class {}, code {})", error.class, error.code)]
    Service {
        /// The request.
        request: String,
        /// The serviceError.
        error: ServiceError,
    },
    /// A request was rejected (MMS RejectPDU).
    #[error("{request}: the server rejected the request (reject {reject:?})")]
    Rejected {
        /// The request.
        request: String,
        /// The RejectPDU.
        reject: Reject,
    },
    /// The response does not belong to the request (another service's response).
    #[error("{request}: the server answered with a {got} response")]
    UnexpectedResponse {
        /// The request.
        request: String,
        /// The service of the response.
        got: &'static str,
    },
    /// `--reports RCB` names a control block the server does not have.
    #[error("no report control block {0} on the server (see the model's rcbs)")]
    RcbNotFound(String),
    /// `--reports` without a name, and every control block is taken or unreadable.
    #[error("no free report control block: every one is enabled or reserved by another client, or has no data set")]
    NoFreeRcb,
    /// The control block cannot be planned (in use, unknown layout).
    #[error("report control block")]
    RcbPlan(#[from] RcbPlanError),
    /// A write of the enable sequence was refused; what was written before was undone.
    #[error(
        "{rcb}: writing {attr} was refused ({error}); the attributes written before were restored"
    )]
    RcbWrite {
        /// The control block.
        rcb: String,
        /// The attribute.
        attr: String,
        /// The DataAccessError or service error.
        error: String,
    },
    /// The control block does not read back as found after the probe.
    #[error("{rcb} was NOT left as found: {detail}")]
    NotRestored {
        /// The control block.
        rcb: String,
        /// Which attributes differ, or which restore write failed.
        detail: String,
    },
    /// An option is out of range.
    #[error("{what}: {detail}")]
    InvalidOption {
        /// The option.
        what: &'static str,
        /// Why.
        detail: String,
    },
}

impl ProbeError {
    /// A short stable name for the JSON output and tests: `connection-refused`,
    /// `server-speaks-tls`, `server-not-tls`, `tls-handshake`, `association-refused`, `closed`,
    /// `aborted`, `protocol`, `timeout`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Resolve { .. } => "resolve",
            Self::ConnectionRefused { .. } => "connection-refused",
            Self::ConnectTimeout { .. } => "connect-timeout",
            Self::Connect { .. } => "connect",
            Self::TlsSetup(_) => "tls-setup",
            Self::ServerSpeaksTls { .. } => "server-speaks-tls",
            Self::ServerNotTls { .. } => "server-not-tls",
            Self::TlsHandshake { .. } => "tls-handshake",
            Self::AssociationRefused { .. } => "association-refused",
            Self::Closed { .. } => "closed",
            Self::Aborted { .. } => "aborted",
            Self::Protocol { .. } => "protocol",
            Self::Timeout { .. } => "timeout",
            Self::Io { .. } => "io",
            Self::Service { .. } => "service-error",
            Self::Rejected { .. } => "rejected",
            Self::UnexpectedResponse { .. } => "unexpected-response",
            Self::RcbNotFound(_) => "rcb-not-found",
            Self::NoFreeRcb => "no-free-rcb",
            Self::RcbPlan(_) => "rcb-plan",
            Self::RcbWrite { .. } => "rcb-write",
            Self::NotRestored { .. } => "not-restored",
            Self::InvalidOption { .. } => "invalid-option",
        }
    }

    /// Whether the user's invocation is at fault (bad option or TLS file) rather than the
    /// server: the CLI exits 2 for these, 1 for everything the server did.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::Resolve { .. } | Self::TlsSetup(_) | Self::InvalidOption { .. }
        )
    }

    /// The message with every source, `a: b: c`, for one line on stderr.
    pub fn chain(&self) -> String {
        let mut s = self.to_string();
        let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(self);
        while let Some(e) = cur {
            s.push_str(": ");
            s.push_str(&e.to_string());
            cur = e.source();
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_names_every_cause() {
        let e = ProbeError::Protocol {
            during: "the MMS association".into(),
            source: gander_mms::Error::TpktVersion(0x47),
        };
        assert_eq!(e.kind(), "protocol");
        assert_eq!(
            e.chain(),
            "malformed or unexpected PDU from the server during the MMS association: TPKT version 71, expected 3"
        );
        assert!(!e.is_usage());
        assert!(ProbeError::InvalidOption {
            what: "--associations",
            detail: "at least 1".into()
        }
        .is_usage());
    }
}
