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
    /// A client-initiated renegotiation completed: the second handshake on the connection
    /// finished at the TLS layer, whatever the application round said afterwards.
    pub client_initiated: Check,
    /// The client-initiated probe ran without RFC 5746 (the server does not signal it), so
    /// an accepted renegotiation is the insecure kind RFC 5746 §1 describes.
    pub insecure: bool,
}

const NO12: &str = "the server does not accept TLS 1.2";
const NO13: &str = "the server does not accept TLS 1.3";

fn first_failed(a: &Attempt) -> Option<Check> {
    // `reason`: a handshake_failure after the ServerHello is the server refusing this client
    // (no certificate), not a missing cipher suite.
    if let Some(e) = a.reason() {
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
    let c = match (b2.reason(), b2.resumed) {
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

/// Runs the resumption, renegotiation and KeyUpdate checks for the accepted versions. `ri` is
/// the RFC 5746 signal of the TLS 1.2 version probe, if it saw one; `client_refused` says that
/// the client-authentication baseline (the profile's own credentials) was refused, so that a
/// connection ended by the server after the handshake is that refusal, not the mechanism's.
pub(crate) fn probe(
    r: &mut Runner<'_>,
    client: &TlsProfile,
    accepted: &[TlsVersion],
    ri: Option<bool>,
    client_refused: bool,
) -> Result<(Resumption, Renegotiation, Check), SurveyError> {
    let mut res = Resumption::default();
    let mut reneg = Renegotiation {
        secure_renegotiation: ri,
        ..Renegotiation::default()
    };
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
                if reneg.secure_renegotiation.is_none() {
                    reneg.secure_renegotiation = ri;
                }
            }
            Err(e) => res.tls12_session_id = Check::skipped(&e.to_string()),
        }
        res.tls12_ticket = match backend(r, &with(TlsVersion::Tls12, true)) {
            Ok(b) => resumes(r, b.as_ref(), true)?.0,
            Err(e) => Check::skipped(&e.to_string()),
        };
        // Without RFC 5746 OpenSSL will not renegotiate unless told to: tell it, for this probe
        // only, to learn whether the server accepts the insecure renegotiation.
        let mut quirks = r.quirks;
        if reneg.secure_renegotiation == Some(false) {
            quirks.unsafe_legacy_renegotiation = true;
            reneg.insecure = true;
        }
        reneg.client_initiated = match r.backend_with(
            &derive(client, BackendKind::Openssl, &[TlsVersion::Tls12], &[]),
            quirks,
        ) {
            Ok(b) => rekey(r, b.as_ref(), Rekey::Renegotiation, client_refused)?,
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
            Ok(b) => rekey(r, b.as_ref(), Rekey::KeyUpdate, client_refused)?,
            Err(e) => Check::skipped(&e.to_string()),
        }
    } else {
        res.tls13_psk = Check::skipped(NO13);
        Check::skipped(NO13)
    };
    Ok((res, reneg, key_update))
}

/// Which rekey a probe makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rekey {
    /// TLS 1.2 client-initiated renegotiation (RFC 5246 §7.4.1.1, RFC 5746).
    Renegotiation,
    /// TLS 1.3 KeyUpdate with update_requested (RFC 8446 §4.6.3).
    KeyUpdate,
}

impl Rekey {
    fn word(self) -> &'static str {
        match self {
            Rekey::Renegotiation => "renegotiation",
            Rekey::KeyUpdate => "KeyUpdate",
        }
    }
}

/// Handshake, rekey at once, then the round: did the server go along?
fn rekey(
    r: &mut Runner<'_>,
    b: &dyn TlsBackend,
    kind: Rekey,
    client_refused: bool,
) -> Result<Check, SurveyError> {
    let a = r.run(b, After::RekeyThenRound)?;
    Ok(judge_rekey(&a, kind, client_refused))
}

/// The verdict on one rekey attempt.
///
/// A TLS 1.2 renegotiation is judged at the TLS layer: the client's `rekey` returns only once the
/// second handshake has finished (OpenSSL drives it to the end on a blocking socket), or fails
/// on the server's refusal (a no_renegotiation alert, RFC 5246 §7.2.2) or silence. What the
/// application round says afterwards is reported, not judged. A TLS 1.3 KeyUpdate completes only
/// when the server sends its own KeyUpdate before its next data (RFC 8446 §4.6.3), which a
/// client sees only in an answer: without one it is not determined.
fn judge_rekey(a: &Attempt, kind: Rekey, client_refused: bool) -> Check {
    let what = kind.word();
    if let Some(e) = a.reason() {
        return Check::skipped(&format!("handshake failed: {e}"));
    }
    let cert_refusal = matches!(a.round, Some(Round::CertRefused(_)));
    let refused_client = |how: &str| Check {
        ok: None,
        detail: Some(format!(
            "not determined: the server refused this client's certificate (or its absence) \
             before the {what} could be judged ({how})"
        )),
    };
    if let Some(e) = &a.rekey_error {
        if cert_refusal || client_refused {
            return refused_client(&e.to_string());
        }
        return Check {
            ok: Some(false),
            detail: Some(format!("{what} refused: {e}")),
        };
    }
    let after = a.round.as_ref().map(Round::word);
    match (kind, &a.round) {
        (Rekey::Renegotiation, r) if !matches!(r, Some(Round::CertRefused(_))) => Check {
            ok: Some(true),
            detail: Some(format!(
                "renegotiation completed at the TLS layer{}",
                after
                    .map(|w| format!("; the application round afterwards: {w}"))
                    .unwrap_or_default()
            )),
        },
        (_, Some(Round::Answered { .. })) => Check {
            ok: Some(true),
            detail: Some(format!("{what} done; the server answered afterwards")),
        },
        (_, Some(Round::Silent)) => Check {
            ok: None,
            detail: Some(format!(
                "{what} sent; the server neither answered nor refused within the wait"
            )),
        },
        (_, Some(Round::CertRefused(e))) => refused_client(e),
        (_, Some(other)) if client_refused => refused_client(&other.word()),
        (_, Some(other)) => Check {
            ok: Some(false),
            detail: Some(format!("after the {what}: {}", other.word())),
        },
        (_, None) => Check::skipped("no round made"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Side, TlsError};

    fn done(rekey_error: Option<TlsError>, round: Option<Round>) -> Attempt {
        Attempt {
            rekey_error,
            round,
            ..Attempt::default()
        }
    }

    #[test]
    fn a_completed_renegotiation_passes_whatever_the_round() {
        for round in [Some(Round::Silent), Some(Round::Closed), None] {
            let c = judge_rekey(&done(None, round), Rekey::Renegotiation, false);
            assert_eq!(c.ok, Some(true), "{c:?}");
        }
        let c = judge_rekey(
            &done(Some(TlsError::Timeout), None),
            Rekey::Renegotiation,
            false,
        );
        assert_eq!(c.ok, Some(false));
    }

    #[test]
    fn key_update_is_not_blamed_for_a_refused_certificate() {
        let alert = Round::CertRefused("alert 116".into());
        let c = judge_rekey(&done(None, Some(alert.clone())), Rekey::KeyUpdate, false);
        assert_eq!(c.ok, None, "{c:?}");
        let c = judge_rekey(
            &done(Some(TlsError::Closed), Some(alert)),
            Rekey::KeyUpdate,
            false,
        );
        assert_eq!(c.ok, None, "{c:?}");
        // The baseline was refused: a close after the KeyUpdate is that refusal.
        let c = judge_rekey(&done(None, Some(Round::Closed)), Rekey::KeyUpdate, true);
        assert_eq!(c.ok, None, "{c:?}");
        // A client the server accepts, and a close after the KeyUpdate: the KeyUpdate failed.
        let c = judge_rekey(&done(None, Some(Round::Closed)), Rekey::KeyUpdate, false);
        assert_eq!(c.ok, Some(false), "{c:?}");
        let c = judge_rekey(
            &done(None, Some(Round::Answered { cotp_cc: true })),
            Rekey::KeyUpdate,
            false,
        );
        assert_eq!(c.ok, Some(true));
        let c = judge_rekey(
            &Attempt {
                error: Some(TlsError::BadCertificate {
                    by: Side::Peer,
                    detail: String::new(),
                }),
                ..Attempt::default()
            },
            Rekey::KeyUpdate,
            false,
        );
        assert_eq!(c.ok, None);
    }
}
