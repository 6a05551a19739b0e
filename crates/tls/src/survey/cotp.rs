//! The one application round a survey makes after a handshake: the first thing the
//! application protocol's client sends (for MMS, an ISO transport connection request, COTP CR,
//! ISO 8073 §13.3 in a TPKT, RFC 1006 §6) and whether the answer confirms it.
//!
//! Why a round at all: in TLS 1.3 the client finishes before the server has checked the client
//! certificate (RFC 8446 §4.4.2.4), so a refusal only shows at the client's first read. The
//! request is what the server expects first, so a server that accepted the connection answers
//! (a COTP connection confirm, CC) instead of waiting for more; any other answer also counts.
//!
//! gander-tls knows no MMS: the round is given by the caller ([`AppRound`]; gander's MMS client
//! crate has the one COTP CR of the workspace, `gander_client::detect::MmsRound`).
use crate::{TlsError, TlsStream};
use std::time::Duration;

/// The application's first request and how to recognise its confirmation.
pub trait AppRound: Send + Sync + std::fmt::Debug {
    /// The octets sent after the handshake (for MMS: TPKT + COTP CR).
    fn request(&self) -> Vec<u8>;
    /// Whether `answer` (the first octets read back) confirms the request (for MMS: a CC).
    fn is_confirm(&self, answer: &[u8]) -> bool;
}

/// What came back after the CR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    /// The server sent data; `cotp_cc` when it confirms the request ([`AppRound::is_confirm`];
    /// for MMS a TPKT with a COTP CC).
    Answered {
        /// The answer is a COTP connection confirm.
        cotp_cc: bool,
    },
    /// Nothing within the wait, and no alert either.
    Silent,
    /// The server closed the connection (TCP FIN or close_notify) without an alert.
    Closed,
    /// The server's certificate alert (bad_certificate 42 .. certificate_unknown 46,
    /// unknown_ca 48, access_denied 49, certificate_required 116; RFC 8446 §6.2): it refused
    /// the client's certificate, or its absence, after the client's Finished (RFC 8446
    /// §4.4.2.4). Evidence of a refusal whatever else the survey saw.
    CertRefused(String),
    /// A TLS error: the server's alert or a failure of our side (the text says which).
    Refused(String),
}

impl Round {
    /// Short word for reports.
    pub(crate) fn word(&self) -> String {
        match self {
            Round::Answered { cotp_cc: true } => "answered (COTP CC)".into(),
            Round::Answered { cotp_cc: false } => "answered".into(),
            Round::Silent => "no answer within the wait, no alert".into(),
            Round::Closed => "closed without alert".into(),
            Round::CertRefused(e) => format!("certificate refused: {e}"),
            Round::Refused(e) => format!("refused: {e}"),
        }
    }
    /// Whether the server let the connection through (answered, or stayed silent without alert).
    pub(crate) fn let_through(&self) -> bool {
        matches!(self, Round::Answered { .. } | Round::Silent)
    }
}

/// Whether `e` is the peer's alert about the client's certificate (or its absence).
pub(crate) fn is_peer_certificate_alert(e: &TlsError) -> bool {
    use crate::Side::Peer;
    matches!(
        e,
        TlsError::BadCertificate { by: Peer, .. }
            | TlsError::UnknownCa { by: Peer, .. }
            | TlsError::Expired { by: Peer, .. }
            | TlsError::Revoked { by: Peer, .. }
    )
}

pub(crate) fn classify_error(e: TlsError) -> Round {
    match e {
        TlsError::Timeout => Round::Silent,
        TlsError::Closed => Round::Closed,
        e if is_peer_certificate_alert(&e) => Round::CertRefused(e.to_string()),
        other => Round::Refused(other.to_string()),
    }
}

fn classify(e: std::io::Error) -> Round {
    classify_error(TlsError::from(e))
}

/// Sends the round's request and waits up to `wait` for the first answer.
pub(crate) fn round(s: &mut dyn TlsStream, app: &dyn AppRound, wait: Duration) -> Round {
    let _ = s
        .tcp()
        .set_read_timeout(Some(wait.max(Duration::from_millis(1))));
    if let Err(e) = s.write_all(&app.request()).and_then(|_| s.flush()) {
        return classify(e);
    }
    let mut buf = [0u8; 512];
    match s.read(&mut buf) {
        Ok(0) => Round::Closed,
        Ok(n) => Round::Answered {
            cotp_cc: app.is_confirm(&buf[..n]),
        },
        Err(e) => classify(e),
    }
}

/// Reads, without sending anything, for up to `wait`: what the server has already sent after
/// the handshake (an alert, a close), or [`Round::Silent`].
pub(crate) fn pending_alert(s: &mut dyn TlsStream, wait: Duration) -> Round {
    let _ = s
        .tcp()
        .set_read_timeout(Some(wait.max(Duration::from_millis(1))));
    let mut buf = [0u8; 512];
    match s.read(&mut buf) {
        Ok(0) => Round::Closed,
        Ok(_) => Round::Answered { cotp_cc: false },
        Err(e) => classify(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_say_what_came_back() {
        assert_eq!(
            Round::Answered { cotp_cc: true }.word(),
            "answered (COTP CC)"
        );
        assert!(Round::Silent.let_through());
        assert!(!Round::Closed.let_through());
        assert!(!Round::Refused("x".into()).let_through());
        assert!(!Round::CertRefused("x".into()).let_through());
        let alert116 = crate::error::from_alert(116, crate::Side::Peer, "certificate required");
        assert!(matches!(classify_error(alert116), Round::CertRefused(_)));
        let ours = TlsError::UnknownCa {
            by: crate::Side::Local,
            detail: String::new(),
        };
        assert!(matches!(classify_error(ours), Round::Refused(_)));
        assert_eq!(classify_error(TlsError::Timeout), Round::Silent);
    }
}
