//! The one application round a survey makes after a handshake: an ISO transport connection
//! request (COTP CR, ISO 8073 §13.3) in a TPKT (RFC 1006 §6), the first thing an MMS client sends.
//!
//! Why a round at all: in TLS 1.3 the client finishes before the server has checked the client
//! certificate (RFC 8446 §4.4.2.4), so a refusal only shows at the client's first read. A CR is
//! what an IEC 61850 server expects first, so a server that accepted the connection answers with
//! a connection confirm (CC) instead of waiting for more; any other answer also counts.
use crate::{TlsError, TlsStream};
use std::time::Duration;

/// TPKT header (version 3, length 22) and a COTP class-0 CR: destination reference 0, source
/// reference 1, TPDU size 8192 (0x0D), calling and called TSAP 0x0001 (the libiec61850 defaults).
pub(crate) const CR: [u8; 22] = [
    0x03, 0x00, 0x00, 0x16, // TPKT
    0x11, 0xE0, 0x00, 0x00, 0x00, 0x01, 0x00, // LI, CR, DST-REF, SRC-REF, class 0
    0xC0, 0x01, 0x0D, // TPDU size
    0xC1, 0x02, 0x00, 0x01, // calling TSAP
    0xC2, 0x02, 0x00, 0x01, // called TSAP
];

/// What came back after the CR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    /// The server sent data; `cotp_cc` when it is a TPKT with a COTP CC.
    Answered {
        /// The answer is a COTP connection confirm.
        cotp_cc: bool,
    },
    /// Nothing within the wait, and no alert either.
    Silent,
    /// The server closed the connection (TCP FIN or close_notify) without an alert.
    Closed,
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
            Round::Refused(e) => format!("refused: {e}"),
        }
    }
    /// Whether the server let the connection through (answered, or stayed silent without alert).
    pub(crate) fn let_through(&self) -> bool {
        matches!(self, Round::Answered { .. } | Round::Silent)
    }
}

/// Whether `b` starts with a TPKT carrying a COTP CC (ISO 8073 §13.4, code 0xD0).
pub(crate) fn is_cc(b: &[u8]) -> bool {
    b.len() >= 6 && b[0] == 3 && b[1] == 0 && b[5] & 0xF0 == 0xD0
}

fn classify(e: std::io::Error) -> Round {
    match TlsError::from(e) {
        TlsError::Timeout => Round::Silent,
        TlsError::Closed => Round::Closed,
        other => Round::Refused(other.to_string()),
    }
}

/// Sends the CR and waits up to `wait` for the first answer.
pub(crate) fn round(s: &mut dyn TlsStream, wait: Duration) -> Round {
    let _ = s
        .tcp()
        .set_read_timeout(Some(wait.max(Duration::from_millis(1))));
    if let Err(e) = s.write_all(&CR).and_then(|_| s.flush()) {
        return classify(e);
    }
    let mut buf = [0u8; 512];
    match s.read(&mut buf) {
        Ok(0) => Round::Closed,
        Ok(n) => Round::Answered {
            cotp_cc: is_cc(&buf[..n]),
        },
        Err(e) => classify(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cr_lengths_agree() {
        assert_eq!(usize::from(u16::from_be_bytes([CR[2], CR[3]])), CR.len());
        assert_eq!(usize::from(CR[4]) + 5, CR.len());
    }

    #[test]
    fn cc_recognised() {
        let cc = [3, 0, 0, 11, 6, 0xD0, 0, 1, 0, 1, 0];
        assert!(is_cc(&cc));
        assert!(!is_cc(&CR));
        assert!(!is_cc(&[0x15, 3, 3, 0, 2]));
        assert!(!is_cc(&[3, 0]));
    }
}
