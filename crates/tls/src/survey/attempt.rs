//! One bounded connection of a survey: TCP connect, handshake (timed), optionally a rekey and the
//! COTP round, then close_notify. Handshake failures are data ([`Attempt::error`]); only the TCP
//! connect can fail the survey (nothing listening, no answer).
use super::cotp::{self, Round};
use super::{SurveyError, SurveyOptions};
use crate::backend::openssl_tls::{OpensslBackend, SurveyQuirks};
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
    /// Listen first, for as long as an alert takes ([`Runner::alert_wait`]), then the round:
    /// a TLS 1.3 server that refuses the client's certificate after the handshake (RFC 8446
    /// §4.4.2.4) and closes at once would otherwise reset the connection under the request and
    /// lose its alert.
    ListenThenRound,
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
    /// The key-exchange group by its IANA name, whatever it is.
    pub(crate) group_name: Option<String>,
    /// Whether the server sent a CertificateRequest (where the backend reports it).
    pub(crate) cert_requested: Option<bool>,
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
    /// The failure as a short text. A server that chose a suite in its ServerHello and then
    /// ended the handshake with handshake_failure (alert 40) did not lack a shared suite: it
    /// refused the client (OpenSSL servers answer a missing certificate so, RFC 5246 §7.4.6),
    /// and the text says that instead of the alert's generic meaning.
    pub(crate) fn reason(&self) -> Option<String> {
        let e = self.error.as_ref()?;
        if let (TlsError::NoSharedCipher { by: Side::Peer, .. }, Some((v, code))) =
            (e, self.server_hello)
        {
            let asked = match self.cert_requested {
                Some(true) => " after asking for a client certificate (CertificateRequest)",
                _ => "",
            };
            return Some(format!(
                "the server chose TLS {} and 0x{code:04X} in its ServerHello, then ended the \
                 handshake{asked} with handshake_failure (alert 40): a refusal of the client, \
                 not of the suite",
                v.short()
            ));
        }
        Some(e.to_string())
    }
    /// The X.509 verification error (OpenSSL's `X509_V_ERR_*` number) of our own check of the
    /// server's chain, as the OpenSSL backend states it in its detail (`... (X509_V_ERR 62)`).
    pub(crate) fn x509_error(&self) -> Option<i32> {
        let detail = match self.error.as_ref()? {
            TlsError::UnknownCa {
                by: Side::Local,
                detail,
            }
            | TlsError::Expired {
                by: Side::Local,
                detail,
            }
            | TlsError::Revoked {
                by: Side::Local,
                detail,
            }
            | TlsError::BadCertificate {
                by: Side::Local,
                detail,
            } => detail,
            _ => return None,
        };
        let code = detail.rsplit_once("(X509_V_ERR ")?.1.strip_suffix(')')?;
        code.parse().ok()
    }
    /// The server sent nothing back within the timeout: no ServerHello, no certificate, no alert,
    /// no close (a handshake that timed out before any of the server's handshake was seen).
    pub(crate) fn unanswered(&self) -> bool {
        matches!(self.error, Some(TlsError::Timeout))
            && self.server_hello.is_none()
            && self.chain.is_empty()
    }
    /// Our own check of the server's chain failed (unknown CA, expired, revoked, a bad
    /// certificate, a pin or name mismatch): the server got past its ServerHello, and the
    /// survey can go on with verification off for the later probes.
    pub(crate) fn local_certificate_failure(&self) -> bool {
        matches!(
            &self.error,
            Some(
                TlsError::UnknownCa {
                    by: Side::Local,
                    ..
                } | TlsError::Expired {
                    by: Side::Local,
                    ..
                } | TlsError::Revoked {
                    by: Side::Local,
                    ..
                } | TlsError::BadCertificate {
                    by: Side::Local,
                    ..
                } | TlsError::PinMismatch
            )
        )
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

/// Whether the port answers the application round (for MMS: a COTP CC), learned once per
/// survey from the first round that let the connection through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AppAnswers {
    /// Not learned yet: a round waits the full timeout.
    Unknown,
    /// It answered: later rounds wait the full timeout (an answer comes; only a slow one waits).
    Yes,
    /// A round got through without answer or alert within the full timeout: later rounds wait
    /// only as long as an alert takes ([`Runner::alert_wait`]), not the timeout again.
    No,
}

/// The survey's connection runner: counts handshakes, paces them, and keeps what the survey
/// learned about the port (whether it answers the round; how the OpenSSL client must be bent
/// to talk to it).
#[derive(Clone)]
pub(crate) struct Runner<'a> {
    pub(crate) addr: SocketAddr,
    pub(crate) opts: &'a SurveyOptions,
    pub(crate) handshakes: u32,
    /// How the survey's OpenSSL client departs from gander's own ([`SurveyQuirks`]).
    pub(crate) quirks: SurveyQuirks,
    pub(crate) answers: AppAnswers,
    /// The longest completed handshake so far, ms (an alert after the handshake takes about as
    /// long as a flight of it).
    pub(crate) max_ht_ms: f64,
}

impl<'a> Runner<'a> {
    pub(crate) fn new(addr: SocketAddr, opts: &'a SurveyOptions) -> Self {
        Runner {
            addr,
            opts,
            handshakes: 0,
            quirks: SurveyQuirks {
                // RFC 5746 §4.1: a client may connect to a server without renegotiation_info;
                // OpenSSL 3 refuses unless told, which would end the survey of such a server.
                legacy_server_connect: true,
                ..SurveyQuirks::default()
            },
            answers: AppAnswers::Unknown,
            max_ht_ms: 0.0,
        }
    }

    /// A client backend for `profile` with the survey's timeout. A profile a backend cannot build
    /// (e.g. a suite this library lacks) is an error of the caller's choice of backend, reported
    /// as data by the callers.
    pub(crate) fn backend(&self, profile: &TlsProfile) -> Result<Box<dyn TlsBackend>, TlsError> {
        self.backend_with(profile, self.quirks)
    }

    /// As [`Runner::backend`] with other quirks for this probe's OpenSSL client.
    pub(crate) fn backend_with(
        &self,
        profile: &TlsProfile,
        quirks: SurveyQuirks,
    ) -> Result<Box<dyn TlsBackend>, TlsError> {
        let mut p = profile.clone();
        p.io_timeout_ms = (self.opts.timeout.as_millis() as u64).max(1);
        if quirks.no_sni && p.backend != BackendKind::Openssl {
            // Only the OpenSSL client can leave SNI out and still check the name; the other
            // backends' probes (suites OpenSSL lacks) only ask what the server chooses.
            p.server_name = None;
            p.verify_hostname = false;
        }
        if p.backend == BackendKind::Openssl && quirks != SurveyQuirks::default() {
            p.validate(false)?;
            return Ok(Box::new(OpensslBackend::with_quirks(&p, quirks)?));
        }
        backend::open(&p)
    }

    /// How long a round waits once the port is known not to answer: long enough for the alert
    /// a TLS 1.3 server sends after judging the client's certificate (RFC 8446 §4.4.2.4), that
    /// is a few handshake flights, at least 200 ms, at most the timeout.
    pub(crate) fn alert_wait(&self) -> Duration {
        let d = Duration::from_secs_f64((4.0 * self.max_ht_ms / 1e3).max(0.2));
        d.min(self.opts.timeout)
    }

    /// How long the first round that gets through waits to learn whether the port answers.
    /// The answer to the round's request (for MMS a COTP CC, ISO 8073 §13.4: a transport
    /// connection, no data model touched) costs the server one round trip and almost no work,
    /// where a handshake costs two round trips and public-key operations: ten handshake times,
    /// at least 1 s and at most the timeout, is generous for a slow device on a slow link. A
    /// server misjudged as silent corrects it at its next answer.
    pub(crate) fn learn_wait(&self) -> Duration {
        let d = Duration::from_secs_f64((10.0 * self.max_ht_ms / 1e3).max(1.0));
        d.min(self.opts.timeout)
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
        a.cert_requested = s.client_cert_requested();
        a.secure_renegotiation = s.secure_renegotiation();
        if let Err(e) = hs {
            a.error = Some(e);
            return Ok(a);
        }
        a.ht_ms = Some(ht.as_secs_f64() * 1e3);
        self.max_ht_ms = self.max_ht_ms.max(ht.as_secs_f64() * 1e3);
        a.version = s.negotiated_version();
        a.suite_code = s.negotiated_suite_code();
        a.group = s.negotiated_group();
        a.group_name = s.negotiated_group_name();
        a.signature_scheme = s.peer_signature_scheme();
        a.resumed = s.session_resumed();
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
            let wait = match (self.answers, after, a.version) {
                // A TLS 1.2 server has judged the client inside the handshake (RFC 5246
                // §7.4.6): on a port that answers nothing, the session probes' rounds only
                // need to see an immediate close.
                (AppAnswers::No, After::Round, Some(v)) if v < TlsVersion::Tls13 => {
                    Duration::from_millis(50).min(self.opts.timeout)
                }
                (AppAnswers::No, ..) => self.alert_wait(),
                (AppAnswers::Unknown, ..) => self.learn_wait(),
                (AppAnswers::Yes, ..) => self.opts.timeout,
            };
            let early = match after {
                After::ListenThenRound if a.version == Some(TlsVersion::Tls13) => {
                    Some(cotp::pending_alert(s.as_mut(), self.alert_wait()))
                }
                _ => None,
            };
            let r = match early {
                Some(r) if r != Round::Silent => r,
                _ => cotp::round(s.as_mut(), app, wait),
            };
            match r {
                // Also corrects a port misjudged as silent.
                Round::Answered { .. } => self.answers = AppAnswers::Yes,
                Round::Silent if self.answers == AppAnswers::Unknown => {
                    self.answers = AppAnswers::No
                }
                _ => {}
            }
            a.round = Some(r);
        } else if a.rekey_error.is_some() {
            // A rekey that failed may have failed on the server's alert, already on its way
            // (e.g. certificate_required after a TLS 1.3 handshake): read it, briefly.
            a.round = Some(cotp::pending_alert(s.as_mut(), self.alert_wait()));
        }
        // Read after the round: TLS 1.3 tickets arrive after the handshake.
        a.ticket = s.session_ticket_received();
        if !matches!(
            a.round,
            Some(Round::Refused(_)) | Some(Round::CertRefused(_)) | Some(Round::Closed)
        ) {
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

    #[test]
    fn x509_error_is_read_from_our_own_checks_only() {
        let with = |e| Attempt {
            error: Some(e),
            ..Attempt::default()
        };
        let name = with(TlsError::BadCertificate {
            by: Side::Local,
            detail: "hostname mismatch (X509_V_ERR 62)".into(),
        });
        assert_eq!(name.x509_error(), Some(62));
        let ca = with(TlsError::UnknownCa {
            by: Side::Local,
            detail: "unable to get local issuer certificate (X509_V_ERR 20)".into(),
        });
        assert_eq!(ca.x509_error(), Some(20));
        // The peer's alert carries no X.509 code of ours; nor does a malformed detail.
        let peer = with(TlsError::UnknownCa {
            by: Side::Peer,
            detail: "alert 48 (X509_V_ERR 20)".into(),
        });
        assert_eq!(peer.x509_error(), None);
        let odd = with(TlsError::BadCertificate {
            by: Side::Local,
            detail: "(X509_V_ERR sixty-two)".into(),
        });
        assert_eq!(odd.x509_error(), None);
    }

    #[test]
    fn unanswered_means_nothing_at_all_came_back() {
        let silent = Attempt {
            error: Some(TlsError::Timeout),
            ..Attempt::default()
        };
        assert!(silent.unanswered());
        // A ServerHello, then silence: the server answered.
        let slow = Attempt {
            error: Some(TlsError::Timeout),
            server_hello: Some((TlsVersion::Tls12, 0xC02F)),
            ..Attempt::default()
        };
        assert!(!slow.unanswered());
        let closed = Attempt {
            error: Some(TlsError::Closed),
            ..Attempt::default()
        };
        assert!(!closed.unanswered());
    }

    #[test]
    fn waits_scale_with_the_handshake_and_stay_within_the_timeout() {
        let opts = SurveyOptions::default(); // 5 s timeout
        let mut r = Runner::new(SocketAddr::from(([127, 0, 0, 1], 1)), &opts);
        // Loopback-fast: the floors.
        r.max_ht_ms = 2.0;
        assert_eq!(r.learn_wait(), Duration::from_secs(1));
        assert_eq!(r.alert_wait(), Duration::from_millis(200));
        // A slow device (300 ms handshakes): 3 s to learn, 1.2 s for an alert.
        r.max_ht_ms = 300.0;
        assert_eq!(r.learn_wait(), Duration::from_secs(3));
        assert_eq!(r.alert_wait(), Duration::from_millis(1200));
        // Never beyond the timeout.
        r.max_ht_ms = 5000.0;
        assert_eq!(r.learn_wait(), opts.timeout);
        assert_eq!(r.alert_wait(), opts.timeout);
    }

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
