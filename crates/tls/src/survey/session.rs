//! Session checks: resumption (TLS 1.2 session id, RFC 5246 §7.4.1.2; TLS 1.2 ticket, RFC 5077;
//! TLS 1.3 PSK from a NewSessionTicket, RFC 8446 §4.6.1), TLS 1.2 secure renegotiation (the
//! RFC 5746 `renegotiation_info` signal, and a client-initiated renegotiation), and a TLS 1.3
//! KeyUpdate (RFC 8446 §4.6.3) followed by a successful round.
//!
//! IEC 62351-3 asks for resumption and renegotiation at bounded intervals and, in Ed.2, for
//! KeyUpdate in TLS 1.3 (public extracts; `docs/tls-survey.md`). The intervals themselves are the
//! server's configuration and cannot be observed in a survey: only whether the mechanisms work.
use super::attempt::{derive, After, Attempt, Runner};
use super::cotp::Round;
use super::SurveyError;
use crate::backend::{BackendKind, TlsBackend};
use crate::{TlsProfile, TlsVersion};
use serde::Serialize;

/// The result of one mechanism check.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Check {
    /// Whether it worked (`None`: not tested, see `detail`).
    pub ok: Option<bool>,
    /// What happened, or why it was not tested.
    pub detail: Option<String>,
}

impl Check {
    fn skipped(why: &str) -> Check {
        Check {
            ok: None,
            detail: Some(why.into()),
        }
    }
}

/// Session resumption.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Resumption {
    /// TLS 1.2 resumption by session id (tickets not offered).
    pub tls12_session_id: Check,
    /// TLS 1.2 resumption by an RFC 5077 ticket the server issued.
    pub tls12_ticket: Check,
    /// TLS 1.3 resumption by PSK from a NewSessionTicket.
    pub tls13_psk: Check,
}

/// TLS 1.2 renegotiation.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Renegotiation {
    /// The server sent `renegotiation_info` (RFC 5746 §3.6) in a full TLS 1.2 handshake.
    pub secure_renegotiation: Option<bool>,
    /// A client-initiated renegotiation completed and the next round went through.
    pub client_initiated: Check,
}

const NO12: &str = "the server does not accept TLS 1.2";
const NO13: &str = "the server does not accept TLS 1.3";

fn first_failed(a: &Attempt) -> Option<Check> {
    if let Some(e) = &a.error {
        return Some(Check::skipped(&format!("first handshake failed: {e}")));
    }
    match &a.round {
        Some(r) if !r.let_through() => Some(Check::skipped(&format!(
            "first connection refused after the handshake: {}",
            r.word()
        ))),
        _ => None,
    }
}

/// Two connections through one backend (which keeps the session): resumed on the second?
fn resumes(
    r: &mut Runner<'_>,
    b: &dyn TlsBackend,
    need_ticket: bool,
) -> Result<(Check, Option<bool>), SurveyError> {
    let a = r.run(b, After::Round)?;
    if let Some(c) = first_failed(&a) {
        return Ok((c, None));
    }
    let ri = a.secure_renegotiation;
    if need_ticket && a.ticket != Some(true) {
        return Ok((
            Check {
                ok: Some(false),
                detail: Some("the server issued no ticket".into()),
            },
            ri,
        ));
    }
    let b2 = r.run(b, After::Round)?;
    let c = match (&b2.error, b2.resumed) {
        (Some(e), _) => Check {
            ok: Some(false),
            detail: Some(format!("second handshake failed: {e}")),
        },
        (None, true) => Check {
            ok: Some(true),
            detail: Some("abbreviated handshake on the second connection".into()),
        },
        (None, false) => Check {
            ok: Some(false),
            detail: Some("full handshake on the second connection".into()),
        },
    };
    Ok((c, ri))
}

fn backend(r: &Runner<'_>, p: &TlsProfile) -> Result<Box<dyn TlsBackend>, crate::TlsError> {
    r.backend(p)
}

/// Runs the resumption, renegotiation and KeyUpdate checks for the accepted versions.
pub(crate) fn probe(
    r: &mut Runner<'_>,
    client: &TlsProfile,
    accepted: &[TlsVersion],
) -> Result<(Resumption, Renegotiation, Check), SurveyError> {
    let mut res = Resumption::default();
    let mut reneg = Renegotiation::default();
    let has12 = accepted.contains(&TlsVersion::Tls12);
    let has13 = accepted.contains(&TlsVersion::Tls13);
    let with = |v: TlsVersion, tickets: bool| TlsProfile {
        session_resumption: true,
        session_tickets: tickets,
        ..derive(client, BackendKind::Openssl, &[v], &[])
    };
    if has12 {
        match backend(r, &with(TlsVersion::Tls12, false)) {
            Ok(b) => {
                let (c, ri) = resumes(r, b.as_ref(), false)?;
                res.tls12_session_id = c;
                reneg.secure_renegotiation = ri;
            }
            Err(e) => res.tls12_session_id = Check::skipped(&e.to_string()),
        }
        res.tls12_ticket = match backend(r, &with(TlsVersion::Tls12, true)) {
            Ok(b) => resumes(r, b.as_ref(), true)?.0,
            Err(e) => Check::skipped(&e.to_string()),
        };
        reneg.client_initiated = match backend(
            r,
            &derive(client, BackendKind::Openssl, &[TlsVersion::Tls12], &[]),
        ) {
            Ok(b) => rekey(r, b.as_ref(), "renegotiation")?,
            Err(e) => Check::skipped(&e.to_string()),
        };
    } else {
        res.tls12_session_id = Check::skipped(NO12);
        res.tls12_ticket = Check::skipped(NO12);
        reneg.client_initiated = Check::skipped(NO12);
    }
    let key_update = if has13 {
        // TLS 1.3 resumes only from a NewSessionTicket (RFC 8446 §4.6.1).
        res.tls13_psk = match backend(r, &with(TlsVersion::Tls13, true)) {
            Ok(b) => resumes(r, b.as_ref(), true)?.0,
            Err(e) => Check::skipped(&e.to_string()),
        };
        match backend(
            r,
            &derive(client, BackendKind::Openssl, &[TlsVersion::Tls13], &[]),
        ) {
            Ok(b) => rekey(r, b.as_ref(), "KeyUpdate")?,
            Err(e) => Check::skipped(&e.to_string()),
        }
    } else {
        res.tls13_psk = Check::skipped(NO13);
        Check::skipped(NO13)
    };
    Ok((res, reneg, key_update))
}

/// Handshake, rekey at once, then the round: did the server go along?
fn rekey(r: &mut Runner<'_>, b: &dyn TlsBackend, what: &str) -> Result<Check, SurveyError> {
    let a = r.run(b, After::RekeyThenRound)?;
    if let Some(e) = &a.error {
        return Ok(Check::skipped(&format!("handshake failed: {e}")));
    }
    Ok(match (&a.rekey_error, &a.round) {
        (Some(e), _) => Check {
            ok: Some(false),
            detail: Some(format!("{what} refused: {e}")),
        },
        (None, Some(Round::Answered { .. })) => Check {
            ok: Some(true),
            detail: Some(format!("{what} done; the server answered afterwards")),
        },
        (None, Some(Round::Silent)) => Check {
            ok: None,
            detail: Some(format!(
                "{what} sent; the server neither answered nor refused within the wait"
            )),
        },
        (None, Some(other)) => Check {
            ok: Some(false),
            detail: Some(format!("after the {what}: {}", other.word())),
        },
        (None, None) => Check::skipped("no round made"),
    })
}
