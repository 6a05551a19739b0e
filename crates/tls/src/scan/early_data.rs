//! TLS 1.3 0-RTT (early data, RFC 8446 §2.3, §4.2.10): a client resuming with a ticket may send
//! application data in its first flight, before the handshake authenticates anything new. That
//! data has no protection against replay across connections (RFC 8446 §8): an attacker who
//! recorded it can send it again. For an IED the data would be MMS requests, writes and
//! controls among them; nothing in IEC 62351-3 calls for 0-RTT, so a server that accepts it is
//! judged a warning.
//!
//! Two questions, two connections, through OpenSSL (a completed handshake is needed: the
//! ticket comes encrypted after it):
//! 1. does the server *advertise* early data? A full TLS 1.3 handshake, then the tickets are
//!    read: a NewSessionTicket's early_data extension carries `max_early_data_size`
//!    (RFC 8446 §4.6.1); absent (0) means no 0-RTT with that ticket.
//! 2. does it *accept* early data? Only if advertised: a resumption with that ticket and one
//!    octet of early data, `0x03` (the first octet of a TPKT header, RFC 1006 §6, and nothing
//!    more: an MMS server waiting for the rest of the header acts on nothing), then the
//!    handshake to its end; the server's EncryptedExtensions say whether it took the data
//!    (RFC 8446 §4.2.10), read with `SSL_get_early_data_status`.
//!
//! The server's certificate is not verified here (the survey judges it); the client presents
//! the profile's certificate when one is given ([`super::ScanOptions::client_identity`]): a
//! server that requires client authentication issues no ticket to a client without one.
use super::conn::Conn;
use super::tls13_client::{self, ClientSetup};
use super::weakness::WeaknessState;
use super::{ProtocolVersion, ScanError, ScanOptions};
use foreign_types::ForeignTypeRef;
use openssl::ssl::{ErrorCode, SslContext, SslSession, SslSessionCacheMode, SslStream};
use serde::Serialize;
use std::net::TcpStream;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

extern "C" {
    // Not wrapped by the `openssl` crate (OpenSSL >= 1.1.1, ssl.h).
    fn SSL_get_early_data_status(s: *const openssl_sys::SSL) -> c_int;
}

/// `SSL_EARLY_DATA_ACCEPTED` (ssl.h).
const EARLY_DATA_ACCEPTED: c_int = 2;
/// `SSL_EARLY_DATA_REJECTED` (ssl.h).
const EARLY_DATA_REJECTED: c_int = 1;

/// The octet sent as early data: the first of a TPKT header (RFC 1006 §6), incomplete alone.
pub const EARLY_OCTETS: &[u8] = &[0x03];

/// The public source of the verdict.
pub const SOURCE: &str = "RFC 8446 §2.3 and §8: 0-RTT data is not protected against replay across connections [P]; RFC 8446 §4.2.10 max_early_data_size [P]; IEC 62351-3 does not call for 0-RTT and MMS writes and controls must not be replayable (gander's judgement)";

/// What the check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Early data advertised and accepted on resumption: replayable.
    Accepted,
    /// Advertised in the ticket, but the resumption's early data was rejected.
    AdvertisedRejected,
    /// Tickets without early_data: no 0-RTT.
    NotAdvertised,
    /// No ticket after a full handshake: no resumption, so no 0-RTT.
    NoTicket,
    /// The server does not accept TLS 1.3.
    NotApplicable,
    /// The handshakes did not tell (the server refused the client, a failure).
    Undetermined,
}

/// The 0-RTT result.
#[derive(Clone, Debug, Serialize)]
pub struct EarlyDataResult {
    /// The verdict.
    pub verdict: Verdict,
    /// The ticket's `max_early_data_size` (0: not advertised); `None` without a ticket.
    pub max_early_data_size: Option<u32>,
    /// Early data sent on resumption and the server's answer: `Some(true)` accepted.
    pub accepted: Option<bool>,
    /// In words.
    pub detail: String,
    /// The public source.
    pub source: &'static str,
}

impl EarlyDataResult {
    fn new(verdict: Verdict, detail: impl Into<String>) -> EarlyDataResult {
        EarlyDataResult {
            verdict,
            max_early_data_size: None,
            accepted: None,
            detail: detail.into(),
            source: SOURCE,
        }
    }

    /// The row in the scan's weakness list (`early-data`).
    pub fn weakness_state(&self) -> WeaknessState {
        match self.verdict {
            Verdict::Accepted => WeaknessState::Vulnerable,
            Verdict::AdvertisedRejected | Verdict::NotAdvertised | Verdict::NoTicket => {
                WeaknessState::NotVulnerable
            }
            Verdict::NotApplicable => WeaknessState::NotTested,
            Verdict::Undetermined => WeaknessState::Undetermined,
        }
    }
}

/// The verdict from what the two connections saw (sans-I/O, unit-tested): the ticket's
/// `max_early_data_size` (`None`: no ticket) and the early-data status of the resumption
/// (`None`: not tried).
pub fn judge(max_early: Option<u32>, status: Option<c_int>) -> EarlyDataResult {
    let mut r = match (max_early, status) {
        (None, _) => EarlyDataResult::new(
            Verdict::NoTicket,
            "no NewSessionTicket after a full TLS 1.3 handshake: no resumption, no 0-RTT",
        ),
        (Some(0), _) => EarlyDataResult::new(
            Verdict::NotAdvertised,
            "the ticket carries no early_data extension (max_early_data_size 0): no 0-RTT",
        ),
        (Some(n), Some(EARLY_DATA_ACCEPTED)) => EarlyDataResult::new(
            Verdict::Accepted,
            format!("the ticket allows {n} octets of early data and the server accepted early data on resumption: replayable (RFC 8446 §8)"),
        ),
        (Some(n), Some(EARLY_DATA_REJECTED)) => EarlyDataResult::new(
            Verdict::AdvertisedRejected,
            format!("the ticket allows {n} octets of early data, but the server rejected the early data on resumption"),
        ),
        (Some(n), _) => EarlyDataResult::new(
            Verdict::Undetermined,
            format!("the ticket allows {n} octets of early data; whether the server accepts it was not seen (no resumption)"),
        ),
    };
    r.max_early_data_size = max_early;
    r.accepted = match status {
        Some(EARLY_DATA_ACCEPTED) => Some(true),
        Some(EARLY_DATA_REJECTED) => Some(false),
        _ => None,
    };
    r
}

/// Runs the check when the scan found TLS 1.3 accepted.
pub fn check(
    c: &mut Conn,
    versions: &[super::VersionScan],
    opts: &ScanOptions,
) -> Result<EarlyDataResult, ScanError> {
    let tls13 = versions
        .iter()
        .any(|v| v.version == ProtocolVersion::Tls13 && v.accepted);
    if !tls13 {
        return Ok(EarlyDataResult::new(
            Verdict::NotApplicable,
            "TLS 1.3 not accepted: no 0-RTT",
        ));
    }
    let sessions: Arc<Mutex<Vec<SslSession>>> = Arc::default();
    let ctx = match context(opts, sessions.clone()) {
        Ok(x) => x,
        Err(why) => return Ok(EarlyDataResult::new(Verdict::Undetermined, why.to_string())),
    };
    let wait = opts.timeout.min(Duration::from_secs(1));

    // 1. A full handshake; the tickets.
    let tcp = c.connect()?;
    let first = match full_handshake(&ctx, tcp, opts, &sessions, wait) {
        Ok(s) => s,
        Err(why) => return Ok(EarlyDataResult::new(Verdict::Undetermined, why.to_string())),
    };
    let Some(session) = first else {
        return Ok(judge(None, None));
    };
    let max = session.max_early_data();
    if max == 0 {
        return Ok(judge(Some(0), None));
    }

    // 2. Resumption with early data.
    let tcp = c.connect()?;
    Ok(match resume_with_early_data(&ctx, tcp, opts, &session) {
        Ok(status) => judge(Some(max), Some(status)),
        Err(why) => {
            let mut r = judge(Some(max), None);
            r.detail = format!("{}: {why}", r.detail);
            r
        }
    })
}

/// Why the 0-RTT probe could not tell; its text becomes the verdict's detail ("not determined").
#[derive(Debug, thiserror::Error)]
enum ProbeFailure {
    /// OpenSSL could not set the client up.
    #[error("OpenSSL: {0}")]
    Setup(#[from] openssl::error::ErrorStack),
    /// The client could not be set up (its settings or the profile's identity).
    #[error("{0}")]
    Client(#[from] ClientSetup),
    /// The server did not complete what the probe needs (its handshake or a ticket).
    #[error("{0}")]
    Server(String),
}

/// The scan's TLS 1.3 client (`super::tls13_client`) collecting tickets through the
/// new-session callback.
fn context(
    opts: &ScanOptions,
    sessions: Arc<Mutex<Vec<SslSession>>>,
) -> Result<SslContext, ProbeFailure> {
    let mut b = tls13_client::builder(opts)?;
    b.set_session_cache_mode(SslSessionCacheMode::CLIENT);
    b.set_new_session_callback(move |_, s| {
        sessions.lock().unwrap_or_else(|e| e.into_inner()).push(s);
    });
    Ok(b.build())
}

/// Handshake, then read until a ticket arrives or `wait` passes (RFC 8446 §4.6.1: tickets
/// come after the client's Finished, at any time). `Ok(None)`: no ticket.
fn full_handshake(
    ctx: &SslContext,
    tcp: TcpStream,
    opts: &ScanOptions,
    sessions: &Mutex<Vec<SslSession>>,
    wait: Duration,
) -> Result<Option<SslSession>, ProbeFailure> {
    let _ = tcp.set_read_timeout(Some(opts.timeout));
    let ssl = tls13_client::ssl(ctx, opts)?;
    let mut s = ssl
        .connect(tcp)
        .map_err(|e| ProbeFailure::Server(format!("TLS 1.3 handshake failed: {e}")))?;
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; 4096];
    let got =
        |s: &Mutex<Vec<SslSession>>| s.lock().unwrap_or_else(|e| e.into_inner()).first().cloned();
    let mut refusal = None;
    while got(sessions).is_none() && Instant::now() < deadline {
        let step = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(50))
            .max(Duration::from_millis(1));
        let _ = s.get_ref().set_read_timeout(Some(step));
        match s.ssl_read(&mut buf) {
            Ok(_) => {}
            Err(e) if e.code() == ErrorCode::WANT_READ => {}
            Err(e)
                if e.io_error().is_some_and(|io| {
                    matches!(
                        io.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    )
                }) => {}
            Err(e) => {
                refusal = Some(e.to_string());
                break;
            }
        }
    }
    let _ = s.shutdown();
    match (got(sessions), refusal) {
        (Some(t), _) => Ok(Some(t)),
        (None, Some(why)) => Err(ProbeFailure::Server(format!(
            "the server ended the connection after the handshake without a ticket ({why}); a server requiring a client certificate needs the profile's"
        ))),
        (None, None) => Ok(None),
    }
}

/// Resumes with `session`, writes [`EARLY_OCTETS`] as early data, completes the handshake and
/// returns `SSL_get_early_data_status`.
fn resume_with_early_data(
    ctx: &SslContext,
    tcp: TcpStream,
    opts: &ScanOptions,
    session: &SslSession,
) -> Result<c_int, ProbeFailure> {
    let _ = tcp.set_read_timeout(Some(opts.timeout));
    let mut ssl = tls13_client::ssl(ctx, opts)?;
    // SAFETY: `session` was issued on a connection of this same context (`ctx`), which is what
    // SSL_set_session requires of it.
    unsafe { ssl.set_session(session) }?;
    ssl.set_connect_state();
    let mut s = SslStream::new(ssl, tcp)?;
    s.write_early_data(EARLY_OCTETS)
        .map_err(|e| ProbeFailure::Server(format!("early data not sent: {e}")))?;
    s.do_handshake()
        .map_err(|e| ProbeFailure::Server(format!("resumption handshake failed: {e}")))?;
    // SAFETY: the pointer is the live SSL of `s`, borrowed for the call only; the function only
    // reads its early-data state.
    let status = unsafe { SSL_get_early_data_status(s.ssl().as_ptr()) };
    let _ = s.shutdown();
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(judge(None, None).verdict, Verdict::NoTicket);
        assert_eq!(judge(Some(0), None).verdict, Verdict::NotAdvertised);
        let a = judge(Some(16384), Some(EARLY_DATA_ACCEPTED));
        assert_eq!(a.verdict, Verdict::Accepted);
        assert_eq!(
            (a.max_early_data_size, a.accepted),
            (Some(16384), Some(true))
        );
        assert_eq!(a.weakness_state(), WeaknessState::Vulnerable);
        let r = judge(Some(16384), Some(EARLY_DATA_REJECTED));
        assert_eq!(r.verdict, Verdict::AdvertisedRejected);
        assert_eq!(r.weakness_state(), WeaknessState::NotVulnerable);
        assert_eq!(judge(Some(1), Some(0)).verdict, Verdict::Undetermined);
        assert_eq!(judge(Some(1), None).verdict, Verdict::Undetermined);
    }
}
