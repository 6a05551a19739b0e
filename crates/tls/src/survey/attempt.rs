//! One bounded connection of a survey: TCP connect, handshake (timed), optionally a rekey and the
//! COTP round, then close_notify. Handshake failures are data ([`Attempt::error`]); only the TCP
//! connect can fail the survey (nothing listening, no answer).
use super::cotp::{self, Round};
use super::{SurveyError, SurveyOptions};
use crate::backend::{self, BackendKind, TlsBackend};
use crate::{KxGroup, Side, TlsError, TlsProfile, TlsVersion};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// What to do after a successful handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum After {
    /// Close at once (version and suite probes).
    Close,
    /// One COTP round, then close.
    Round,
    /// Renegotiate (TLS 1.2) or send a KeyUpdate (TLS 1.3), then the round.
    RekeyThenRound,
}

/// The outcome of one connection.
#[derive(Debug, Default)]
pub(crate) struct Attempt {
    /// The handshake's error, if it failed.
    pub(crate) error: Option<TlsError>,
    /// Handshake time in ms (TCP up to TLS up), for successful handshakes.
    pub(crate) ht_ms: Option<f64>,
    pub(crate) version: Option<TlsVersion>,
    pub(crate) suite_code: Option<u16>,
    pub(crate) group: Option<KxGroup>,
    pub(crate) signature_scheme: Option<String>,
    /// The server's certificates, leaf first (also after a failed certificate check, where the
    /// backend keeps them).
    pub(crate) chain: Vec<Vec<u8>>,
    pub(crate) resumed: bool,
    pub(crate) ticket: Option<bool>,
    pub(crate) secure_renegotiation: Option<bool>,
    /// The version and suite of the server's ServerHello, where the backend reports them even
    /// for a failed handshake (OpenSSL).
    pub(crate) server_hello: Option<(TlsVersion, u16)>,
    /// The rekey's error, when one was asked for and failed.
    pub(crate) rekey_error: Option<TlsError>,
    /// The round's result, when one was made.
    pub(crate) round: Option<Round>,
}

impl Attempt {
    /// The handshake completed.
    pub(crate) fn ok(&self) -> bool {
        self.error.is_none()
    }
    /// The server went past its ServerHello: the handshake completed, or failed only on a
    /// certificate check (ours of the server's chain, or the server's of our certificate), which
    /// happens after the server chose a version and suite. sslyze counts suites the same way.
    pub(crate) fn server_hello_reached(&self) -> bool {
        match &self.error {
            None => true,
            Some(e) => is_certificate_error(e) || self.server_hello.is_some(),
        }
    }
    /// Whether the server chose version `v` (when given) and suite `code` (when given): the
    /// handshake completed or [`Attempt::server_hello_reached`], and where the ServerHello is
    /// known it names them.
    pub(crate) fn chose(&self, v: Option<TlsVersion>, code: Option<u16>) -> bool {
        if !self.server_hello_reached() {
            return false;
        }
        match self.server_hello.or(self.version.zip(self.suite_code)) {
            Some((hv, hc)) => v.is_none_or(|v| v == hv) && code.is_none_or(|c| c == hc),
            None => true,
        }
    }
    /// The server chose a version and suite, then ended the handshake itself (an alert, a close):
    /// with our certificate (or its absence) the only thing left for it to judge, a refusal of
    /// the client. Our own refusals (of the server's chain) and timeouts do not count.
    pub(crate) fn peer_refused_after_hello(&self) -> bool {
        let Some(e) = &self.error else { return false };
        let ours = matches!(
            e,
            TlsError::UnknownCa {
                by: Side::Local,
                ..
            } | TlsError::Revoked {
                by: Side::Local,
                ..
            } | TlsError::Expired {
                by: Side::Local,
                ..
            } | TlsError::BadCertificate {
                by: Side::Local,
                ..
            } | TlsError::ProtocolVersion {
                by: Side::Local,
                ..
            } | TlsError::NoSharedCipher {
                by: Side::Local,
                ..
            } | TlsError::PinMismatch
                | TlsError::Timeout
        );
        !ours && self.server_hello.is_some()
    }
    /// The failure as a short text.
    pub(crate) fn reason(&self) -> Option<String> {
        self.error.as_ref().map(|e| e.to_string())
    }
}

/// Whether `e` is a certificate rejection (either side), not a negotiation failure.
pub(crate) fn is_certificate_error(e: &TlsError) -> bool {
    matches!(
        e,
        TlsError::UnknownCa { .. }
            | TlsError::Revoked { .. }
            | TlsError::Expired { .. }
            | TlsError::BadCertificate { .. }
            | TlsError::PinMismatch
    )
}

/// Connects with the survey's timeout, mapping failures to the survey's errors.
pub(crate) fn connect(addr: SocketAddr, timeout: Duration) -> Result<TcpStream, SurveyError> {
    TcpStream::connect_timeout(&addr, timeout).map_err(|e| match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => SurveyError::Timeout {
            addr,
            timeout_ms: timeout.as_millis() as u64,
        },
        _ => SurveyError::Refused {
            addr,
            reason: e.to_string(),
        },
    })
}

/// The survey's connection runner: counts handshakes and paces them.
pub(crate) struct Runner<'a> {
    pub(crate) addr: SocketAddr,
    pub(crate) opts: &'a SurveyOptions,
    pub(crate) handshakes: u32,
}

impl Runner<'_> {
    /// A client backend for `profile` with the survey's timeout. A profile a backend cannot build
    /// (e.g. a suite this library lacks) is an error of the caller's choice of backend, reported
    /// as data by the callers.
    pub(crate) fn backend(&self, profile: &TlsProfile) -> Result<Box<dyn TlsBackend>, TlsError> {
        let mut p = profile.clone();
        p.io_timeout_ms = (self.opts.timeout.as_millis() as u64).max(1);
        backend::open(&p)
    }

    /// Runs one connection through `b`.
    pub(crate) fn run(&mut self, b: &dyn TlsBackend, after: After) -> Result<Attempt, SurveyError> {
        if self.handshakes > 0 {
            std::thread::sleep(self.opts.pause);
        }
        self.handshakes += 1;
        let tcp = connect(self.addr, self.opts.timeout)?;
        let _ = tcp.set_nodelay(true);
        let mut a = Attempt::default();
        let mut s = match b.client(tcp) {
            Ok(s) => s,
            Err(e) => {
                a.error = Some(e);
                return Ok(a);
            }
        };
        let t0 = Instant::now();
        let hs = s.handshake();
        let ht = t0.elapsed();
        a.chain = s.peer_chain();
        a.server_hello = s.server_hello();
        if let Err(e) = hs {
            a.error = Some(e);
            return Ok(a);
        }
        a.ht_ms = Some(ht.as_secs_f64() * 1e3);
        a.version = s.negotiated_version();
        a.suite_code = s.negotiated_suite_code();
        a.group = s.negotiated_group();
        a.signature_scheme = s.peer_signature_scheme();
        a.resumed = s.session_resumed();
        a.secure_renegotiation = s.secure_renegotiation();
        if after == After::RekeyThenRound {
            if let Err(e) = s.rekey() {
                a.rekey_error = Some(e);
            }
        }
        if let (true, None, Some(app)) = (
            after != After::Close,
            &a.rekey_error,
            self.opts.round.as_deref(),
        ) {
            a.round = Some(cotp::round(s.as_mut(), app, self.opts.timeout));
        }
        // Read after the round: TLS 1.3 tickets arrive after the handshake.
        a.ticket = s.session_ticket_received();
        if !matches!(a.round, Some(Round::Refused(_)) | Some(Round::Closed)) {
            let _ = s.tcp().set_read_timeout(Some(Duration::from_millis(200)));
            let _ = s.shutdown();
        }
        Ok(a)
    }
}

/// The survey's client profile for one probe: the user's credentials and trust anchors, with the
/// backend, versions and suites the probe needs, library-default groups and no rekey timers.
pub(crate) fn derive(
    client: &TlsProfile,
    backend: BackendKind,
    versions: &[TlsVersion],
    suites: &[&str],
) -> TlsProfile {
    TlsProfile {
        backend,
        versions: versions.to_vec(),
        cipher_suites: suites.iter().map(|s| s.to_string()).collect(),
        groups: Vec::new(),
        renegotiation_interval_s: None,
        key_update_interval_s: None,
        session_resumption: false,
        session_tickets: false,
        num_tickets: None,
        ..client.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(error: TlsError, hello: Option<(TlsVersion, u16)>) -> Attempt {
        Attempt {
            error: Some(error),
            server_hello: hello,
            ..Attempt::default()
        }
    }

    #[test]
    fn acceptance_and_refusal_after_server_hello() {
        let alert40 = || TlsError::NoSharedCipher {
            by: Side::Peer,
            detail: "alert 40".into(),
        };
        // No suite in common: no ServerHello.
        let a = failed(alert40(), None);
        assert!(!a.chose(Some(TlsVersion::Tls12), Some(0xC02F)));
        assert!(!a.peer_refused_after_hello());
        // The server chose 0xC02F at 1.2, then refused the client (no certificate).
        let a = failed(alert40(), Some((TlsVersion::Tls12, 0xC02F)));
        assert!(a.chose(Some(TlsVersion::Tls12), Some(0xC02F)));
        assert!(!a.chose(Some(TlsVersion::Tls12), Some(0x009E)));
        assert!(!a.chose(Some(TlsVersion::Tls13), None));
        assert!(a.peer_refused_after_hello());
        // Our own refusal of the server's chain is not the server refusing us.
        let ours = TlsError::UnknownCa {
            by: Side::Local,
            detail: String::new(),
        };
        let a = failed(ours, Some((TlsVersion::Tls12, 0xC02F)));
        assert!(a.chose(None, Some(0xC02F)));
        assert!(!a.peer_refused_after_hello());
        // A certificate failure without a known ServerHello still counts as chosen.
        let a = failed(
            TlsError::BadCertificate {
                by: Side::Peer,
                detail: String::new(),
            },
            None,
        );
        assert!(a.chose(Some(TlsVersion::Tls12), Some(0xC02F)));
    }
}
