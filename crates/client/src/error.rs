//! The client's one error type: one variant per way a server (or the network) can stop an MMS
//! exchange, each with the words a utility engineer needs to act on it, a stable
//! [`ClientError::kind`] for JSON output and tests, and [`ClientError::event_kind`], the `kind`
//! of an `ERROR` event in `gander run`'s event logs (`docs/mms-peers.md`).
use crate::stream::{mms_kind, tls_kind};
use gander_mms::service::{Reject, ServiceError};
use gander_tls::TlsError;
use std::net::SocketAddr;

/// Why an MMS exchange stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
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
    /// The TLS backend cannot make a client for this connection (credentials, profile).
    #[error("TLS settings")]
    TlsSetup(#[source] TlsError),
    /// The client connected without TLS but the server speaks TLS on this port.
    #[error("{addr} speaks TLS but the client connected without TLS ({evidence}); give the client TLS settings with --tls FILE")]
    ServerSpeaksTls {
        /// The server.
        addr: SocketAddr,
        /// What showed it.
        evidence: String,
    },
    /// The client connected with TLS but the server speaks plain MMS on this port.
    #[error("{addr} does not speak TLS on this port ({evidence}); run without --tls")]
    ServerNotTls {
        /// The server.
        addr: SocketAddr,
        /// What showed it.
        evidence: String,
    },
    /// The TLS handshake failed (certificates, versions, suites).
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
    /// The server closed the connection (TCP FIN/RST) while the client waited.
    #[error("the server closed the connection during {during}{hint}")]
    Closed {
        /// What the client was doing.
        during: String,
        /// A hint on the likely cause (empty when there is none).
        hint: &'static str,
    },
    /// The server disconnected the transport connection (COTP DR or ER, ISO 8073 13.5).
    #[error("the server closed the connection during {during} (COTP disconnect)")]
    Disconnected {
        /// What the client was doing.
        during: String,
    },
    /// The server aborted the association (session ABORT, ACSE ABRT).
    #[error("the server aborted the association during {during}")]
    Aborted {
        /// What the client was doing.
        during: String,
    },
    /// The server sent bytes that are not the PDU the protocol allows at this point.
    #[error("malformed or unexpected PDU from the server during {during}")]
    Protocol {
        /// What the client was doing.
        during: String,
        /// What the MMS stack found wrong, with the layer.
        #[source]
        source: gander_mms::Error,
    },
    /// The server did not answer within the step timeout.
    #[error("no answer from the server within {ms} ms during {during}")]
    Timeout {
        /// What the client was doing.
        during: String,
        /// The step timeout.
        ms: u64,
    },
    /// A socket error other than a close or a timeout.
    #[error("I/O error during {during}")]
    Io {
        /// What the client was doing.
        during: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A TLS record-layer failure after the handshake (an alert, a bad record).
    #[error("TLS error during {during}")]
    Tls {
        /// What the client was doing.
        during: String,
        /// What the TLS library said.
        #[source]
        source: TlsError,
    },
    /// A request was answered with a confirmed-Error (ISO 9506-2 7.4.3).
    #[error("{request}: the server answered with a service error (class {}, code {})", error.class, error.code)]
    Service {
        /// The request.
        request: String,
        /// The serviceError.
        error: ServiceError,
    },
    /// A request was rejected (MMS RejectPDU, ISO 9506-2 7.4.4).
    #[error("{request}: the server rejected the request (reject {reject:?})")]
    Rejected {
        /// The request.
        request: String,
        /// The RejectPDU.
        reject: Reject,
    },
    /// The response does not belong to the request (another service's response), or a Read
    /// response carries a number of results other than the request's.
    #[error("{request}: the server answered with {got}")]
    UnexpectedResponse {
        /// The request.
        request: String,
        /// What came instead.
        got: String,
    },
    /// The association is already over (released or aborted) when a request was made.
    #[error("{during}: the association is already over")]
    NotOpen {
        /// What the client wanted to do.
        during: String,
    },
}

impl ClientError {
    /// A short stable name for JSON output and tests: `connection-refused`,
    /// `server-speaks-tls`, `server-not-tls`, `tls-handshake`, `association-refused`, `closed`,
    /// `aborted`, `protocol`, `timeout`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ConnectionRefused { .. } => "connection-refused",
            Self::ConnectTimeout { .. } => "connect-timeout",
            Self::Connect { .. } => "connect",
            Self::TlsSetup(_) => "tls-setup",
            Self::ServerSpeaksTls { .. } => "server-speaks-tls",
            Self::ServerNotTls { .. } => "server-not-tls",
            Self::TlsHandshake { .. } => "tls-handshake",
            Self::AssociationRefused { .. } => "association-refused",
            Self::Closed { .. } | Self::Disconnected { .. } => "closed",
            Self::Aborted { .. } => "aborted",
            Self::Protocol { .. } => "protocol",
            Self::Timeout { .. } => "timeout",
            Self::Io { .. } => "io",
            Self::Tls { .. } => "tls",
            Self::Service { .. } => "service-error",
            Self::Rejected { .. } => "rejected",
            Self::UnexpectedResponse { .. } => "unexpected-response",
            Self::NotOpen { .. } => "not-open",
        }
    }

    /// The `kind` of the `ERROR` event `gander run`'s client logs for this failure
    /// (`docs/mms-peers.md`): `tcp-refused`, `timeout`, `tls-<alert>`, `closed`,
    /// `peer-aborted`, `peer-disconnected`, `refused`, `<layer>-<what>` for the MMS stack.
    pub fn event_kind(&self) -> String {
        match self {
            Self::ConnectionRefused { .. } => "tcp-refused".into(),
            Self::ConnectTimeout { .. } | Self::Timeout { .. } => "timeout".into(),
            Self::Connect { .. } | Self::Io { .. } => "io".into(),
            Self::TlsSetup(e)
            | Self::TlsHandshake { source: e, .. }
            | Self::Tls { source: e, .. } => tls_kind(e),
            Self::ServerSpeaksTls { .. } | Self::ServerNotTls { .. } => "tls-mismatch".into(),
            Self::AssociationRefused { .. } => "refused".into(),
            Self::Closed { .. } | Self::NotOpen { .. } => "closed".into(),
            Self::Disconnected { .. } => "peer-disconnected".into(),
            Self::Aborted { .. } => "peer-aborted".into(),
            Self::Protocol { source, .. } => mms_kind(source),
            Self::Service { .. } => "service-error".into(),
            Self::Rejected { .. } => "mms-rejected".into(),
            Self::UnexpectedResponse { .. } => "mms-unexpected".into(),
        }
    }

    /// Whether the association is still usable after this failure: the server answered, just
    /// not with what was asked (a confirmed-Error, a Reject, another service's response).
    pub fn answered(&self) -> bool {
        matches!(
            self,
            Self::Service { .. } | Self::Rejected { .. } | Self::UnexpectedResponse { .. }
        )
    }

    /// The message with every source, `a: b: c`, for one line on stderr.
    pub fn chain(&self) -> String {
        chain(self)
    }
}

/// An error's message with every source, `a: b: c`: one line for stderr, an event's `detail` or
/// a JSON `message` (used by every error type above the client too).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_names_every_cause() {
        let e = ClientError::Protocol {
            during: "the MMS association".into(),
            source: gander_mms::Error::TpktVersion(0x47),
        };
        assert_eq!(e.kind(), "protocol");
        assert_eq!(e.event_kind(), "tpkt-version");
        assert_eq!(
            e.chain(),
            "malformed or unexpected PDU from the server during the MMS association: TPKT version 71, expected 3"
        );
        assert!(!e.answered());
    }

    #[test]
    fn event_kinds_keep_the_run_clients_names() {
        let addr: SocketAddr = "127.0.0.1:102".parse().unwrap();
        assert_eq!(
            ClientError::ConnectionRefused { addr }.event_kind(),
            "tcp-refused"
        );
        let d = || "x".to_string();
        assert_eq!(
            ClientError::Aborted { during: d() }.event_kind(),
            "peer-aborted"
        );
        assert_eq!(
            ClientError::Disconnected { during: d() }.event_kind(),
            "peer-disconnected"
        );
        assert_eq!(ClientError::Disconnected { during: d() }.kind(), "closed");
        assert_eq!(
            ClientError::Timeout { during: d(), ms: 1 }.event_kind(),
            "timeout"
        );
        assert!(ClientError::Service {
            request: d(),
            error: ServiceError::new(ServiceError::CLASS_ACCESS, 2)
        }
        .answered());
    }
}
