//! The TLS survey: what an arbitrary TLS server (an IEC 61850 MMS server on port 3782, or 102)
//! accepts, probed one handshake at a time, and verdicts against the IEC 62351-3 requirements
//! that public sources establish (`docs/tls-survey.md`).
//!
//! - versions ([`versions`]): one handshake per version, restricted to it (OpenSSL, whose security
//!   level the backend lowers to 0 for TLS 1.0/1.1: the client must be permissive to *detect* what
//!   the server accepts);
//! - suites ([`suites`]): one handshake per catalogue suite, offering that suite alone, timed;
//! - the default handshake's group, signature scheme and the server's certificate chain ([`chain`]);
//! - client authentication ([`client_auth`]): no certificate, and a fresh untrusted one;
//! - sessions ([`session`]): resumption (TLS 1.2 id and ticket, TLS 1.3 PSK), TLS 1.2 secure
//!   renegotiation (RFC 5746), TLS 1.3 KeyUpdate (RFC 8446 §4.6.3);
//! - [`verdicts`] and a text rendering ([`render`]).
//!
//! Bounded: every connection has the survey's timeout, handshakes are separated by a pause, and
//! each connection that completed its handshake is closed with close_notify.
pub mod chain;
pub mod client_auth;
mod cotp;
pub use cotp::AppRound;
pub mod render;
pub mod session;
pub mod suites;
pub mod verdicts;
pub mod versions;

mod attempt;
mod with_scan;
pub use with_scan::attach_scan;

pub use chain::CertInfo;
pub use client_auth::{AuthProbe, ClientAuth};
pub use render::render;
pub use session::{Check, Renegotiation, Resumption};
pub use suites::SuiteProbe;
pub use verdicts::{Level, Verdict};
pub use versions::VersionProbe;

use crate::backend::{self, BackendKind};
use crate::{TlsError, TlsProfile, TlsVersion};
use attempt::{After, Attempt, Runner};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How the survey runs.
#[derive(Clone, Debug)]
pub struct SurveyOptions {
    /// Per connection: TCP connect, each handshake read/write, and the wait for the answer to
    /// the COTP round.
    pub timeout: Duration,
    /// Pause between two connections, so that a device is not flooded.
    pub pause: Duration,
    /// Only the suites whose IEC 62351 status is mandatory or recommended.
    pub quick: bool,
    /// The application round made after each handshake (for MMS, the COTP CR of
    /// `gander_client::detect::MmsRound`); `None`: no round, and the checks that need one
    /// (a TLS 1.3 client-certificate refusal, the answer after a rekey) say so.
    pub round: Option<std::sync::Arc<dyn AppRound>>,
    /// Connections at once during the suite probes (1: sequential, the gentle default; an IED
    /// has few connection slots). Each worker keeps the pause between its own connections.
    pub parallel: usize,
}

impl Default for SurveyOptions {
    fn default() -> Self {
        SurveyOptions {
            timeout: Duration::from_secs(5),
            pause: Duration::from_millis(100),
            quick: false,
            round: None,
            parallel: 1,
        }
    }
}

/// Why a survey could not run. Handshake failures of single versions or suites are not errors:
/// they are results (`accepted = false` with the reason).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SurveyError {
    /// Nothing listens: the TCP connection is refused (or the host unreachable).
    #[error("nothing listens on {addr}: {reason}")]
    Refused {
        /// The target.
        addr: SocketAddr,
        /// The system's message.
        reason: String,
    },
    /// The server does not answer within the timeout (TCP connect or every handshake).
    #[error("{addr} does not answer within {timeout_ms} ms")]
    Timeout {
        /// The target.
        addr: SocketAddr,
        /// The timeout used.
        timeout_ms: u64,
    },
    /// The server speaks something else than TLS (e.g. plain MMS: a COTP CC to a clear CR).
    #[error("{addr} does not speak TLS: {detail}")]
    NotTls {
        /// The target.
        addr: SocketAddr,
        /// What it does instead.
        detail: String,
    },
    /// The server speaks TLS but no handshake at any version got past its ServerHello.
    #[error("no TLS handshake with {addr} succeeded: {detail}")]
    NoHandshake {
        /// The target.
        addr: SocketAddr,
        /// The reason of the default handshake's failure.
        detail: String,
    },
    /// The client profile cannot be used (a file, a field).
    #[error("client TLS settings: {0}")]
    Profile(#[from] crate::ProfileError),
    /// A local failure preparing the survey (the untrusted test certificate, temporary files).
    #[error("survey set-up: {0}")]
    Setup(String),
}

/// The default handshake: what the client profile's versions and suites negotiate (with the
/// OpenSSL backend, which reports the signature scheme).
#[derive(Clone, Debug, Serialize)]
pub struct Negotiated {
    /// Protocol version.
    pub version: TlsVersion,
    /// IANA suite name (or `0xXXXX` when not in the catalogue).
    pub suite: String,
    /// Key-exchange group by its IANA name (`x25519`, `secp384r1`, `ffdhe2048`, `x448`,
    /// `brainpoolP256r1`, `X25519MLKEM768`, ...); for TLS 1.2 DHE the server's parameters by
    /// name or size; `None` for RSA key transport.
    pub group: Option<String>,
    /// Signature scheme of the server's handshake signature (IANA name).
    pub signature_scheme: Option<String>,
    /// Handshake time, ms.
    pub ht_ms: f64,
}

/// The server certificate's name against the name the client expects (RFC 6125 §6).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NameCheck {
    /// The name checked: the profile's `server_name` when it sets `verify_hostname`; `None`:
    /// the profile asks for no name check, and none was made.
    pub name: Option<String>,
    /// `Some(true)` the certificate matches the name, `Some(false)` it does not, `None` not
    /// checked or not determined (the chain failed first).
    pub matched: Option<bool>,
    /// Our check's words when the name did not match.
    pub detail: Option<String>,
}

/// Everything a survey found. `versions` and `suites` are what `gander probe` puts in its JSON
/// `tls` section; see `docs/tls-survey.md` for the shape.
#[derive(Clone, Debug, Serialize)]
pub struct TlsSurvey {
    /// The target, `HOST:PORT`.
    pub target: String,
    /// The client library of the probes, e.g. `OpenSSL 3.0.19 ...`.
    pub client_library: String,
    /// `"1.0"`..`"1.3"` -> accepted.
    pub versions: BTreeMap<&'static str, bool>,
    /// One probe per version, with the failure reason.
    pub version_probes: Vec<VersionProbe>,
    /// One probe per catalogue suite tested.
    pub suites: Vec<SuiteProbe>,
    /// Catalogue suites no in-process backend can offer (not tested).
    pub suites_not_tested: Vec<&'static str>,
    /// The default handshake, if it succeeded.
    pub negotiated: Option<Negotiated>,
    /// Why the default handshake failed, if it did.
    pub negotiated_error: Option<String>,
    /// The certificates the server sent, leaf first.
    pub chain: Vec<CertInfo>,
    /// Why the chain could not be described, if it could not.
    pub chain_error: Option<String>,
    /// Whether the chain verified against the client profile's CAs (`None`: no chain seen, or
    /// no CA given).
    pub chain_trusted: Option<bool>,
    /// Whether the survey had trust anchors (the profile's `ca`). Without them the chain is read
    /// and judged by itself (keys, signatures, validity) but not verified, and every probe ran
    /// with verification off, as sslscan and testssl.sh do.
    pub trust_anchors: bool,
    /// Why our check of the server's chain failed, when it did (expired, unknown CA, name):
    /// the later probes then ran with verification off, so that they still say something.
    pub server_verification_error: Option<String>,
    /// The check of the server certificate's name against the profile's `server_name`
    /// (RFC 6125 §6), apart from the chain's.
    pub name_check: NameCheck,
    /// The chain failed only because the server sent its leaf alone, without the intermediate
    /// certificates between it and the profile's CA (RFC 5246 §7.4.2, RFC 8446 §4.4.2).
    pub chain_incomplete: bool,
    /// The server name (the profile's `server_name`) the server refused with unrecognized_name
    /// (alert 112, RFC 6066 §3); the survey then ran without SNI.
    pub server_name_refused: Option<String>,
    /// Whether the server refuses a client without certificate (`None`: not determined).
    pub client_cert_required: Option<bool>,
    /// Whether the server refuses a certificate from a CA it does not know.
    pub untrusted_client_cert_refused: Option<bool>,
    /// The client-authentication probes in detail.
    pub client_auth: ClientAuth,
    /// Session resumption.
    pub resumption: Resumption,
    /// TLS 1.2 renegotiation.
    pub renegotiation: Renegotiation,
    /// TLS 1.3 KeyUpdate answered.
    pub key_update: Check,
    /// Verdicts against IEC 62351-3 as public sources state it.
    pub verdicts: Vec<Verdict>,
    /// Whether the port answered the application round (for MMS: the COTP CR), learned once from
    /// the first round that got through: `false` when it stayed silent for the whole timeout
    /// (later rounds then waited only for alerts); `None` when no round got through.
    pub round_answered: Option<bool>,
    /// Connections made.
    pub handshakes: u32,
    /// Wall time of the survey, s.
    pub duration_s: f64,
    /// The scan of every IANA suite, group and known weakness, when one was attached
    /// ([`attach_scan`], `crate::scan`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<crate::scan::ScanReport>,
}

/// Surveys `addr` with the credentials and trust anchors of `client` (its `ca`, `cert`, `key`,
/// `server_name`; its `versions` and `cipher_suites` only shape the default handshake).
pub fn survey(
    addr: SocketAddr,
    client: &TlsProfile,
    opts: &SurveyOptions,
) -> Result<TlsSurvey, SurveyError> {
    survey_after_scan(addr, client, opts, None)
}

/// The survey's client settings from a profile: one without `cert` and `key` is a client
/// without a certificate (whatever `require_client_auth` says, which for a client means "I have
/// one"), and `ca` may be missing (see [`TlsProfile::validate_survey_client`]). Callers check a
/// profile with this before anything is sent to the device.
pub fn client_for_survey(client: &TlsProfile) -> Result<TlsProfile, SurveyError> {
    let mut p = client.clone();
    if p.cert.is_none() && p.key.is_none() {
        p.require_client_auth = false;
    }
    p.validate_survey_client()?;
    Ok(p)
}

/// [`survey`] after a scan of the same target (`crate::scan::scan`): the catalogue suites the
/// scan found refused at a version it finished are not asked again through a library (what the
/// server chooses from a crafted ClientHello it chooses from a library's), which saves one
/// paced handshake each. The scan is not attached here ([`attach_scan`] does that).
pub fn survey_after_scan(
    addr: SocketAddr,
    client: &TlsProfile,
    opts: &SurveyOptions,
    scan: Option<&crate::scan::ScanReport>,
) -> Result<TlsSurvey, SurveyError> {
    let as_given = client_for_survey(client)?;
    let client = &as_given;
    // Without a CA: a stand-in anchor no server chains to, so that each backend has the trust
    // anchor it requires; every chain then fails "unknown CA", which the survey already follows
    // with verification off (below), and what that failure would claim is taken back at the end.
    let trust_anchors = !client.ca.is_empty();
    let anchor_dir;
    let with_anchor;
    let client = if trust_anchors {
        client
    } else {
        anchor_dir = client_auth::temp_dir()?;
        with_anchor = TlsProfile {
            ca: vec![client_auth::stand_in_anchor(anchor_dir.path())?],
            ..client.clone()
        };
        &with_anchor
    };
    let start = Instant::now();
    // Nothing listening is found before any TLS.
    drop(attempt::connect(addr, opts.timeout)?);
    let mut r = Runner::new(addr, opts);

    // The probes' own copy of the profile: a name the certificate fails (below) is checked once,
    // then left out of the later probes so that they judge the rest.
    let mut client_owned = client.clone();
    // The default handshake: the profile's versions and suites, over OpenSSL.
    let mut dflt = attempt::derive(
        client,
        BackendKind::Openssl,
        &client.versions,
        &client
            .cipher_suites
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let mut dflt_attempt = match r.backend(&dflt) {
        Ok(b) => Some(r.run(b.as_ref(), After::Close)?),
        Err(TlsError::Profile(p)) => return Err(p.into()),
        Err(e) => return Err(SurveyError::Setup(e.to_string())),
    };
    // Alert 112 refuses the server name we sent, not the version or suite (RFC 6066 §3): report
    // it, and survey the server without SNI (the OpenSSL client still checks the certificate
    // against the name when the profile asks it to).
    let mut server_name_refused = None;
    if client.server_name.is_some()
        && dflt_attempt.as_ref().is_some_and(|a| {
            matches!(
                a.error,
                Some(TlsError::UnrecognizedName {
                    by: crate::Side::Peer,
                    ..
                })
            )
        })
    {
        server_name_refused = client.server_name.clone();
        r.quirks.no_sni = true;
        if let Ok(b) = r.backend(&dflt) {
            dflt_attempt = Some(r.run(b.as_ref(), After::Close)?);
        }
    }
    // No answer at all to the ClientHello within the timeout (not an octet, not a close): every
    // further probe would wait the timeout out again (the field test's silent port took 19
    // connections and 93 s). Stop here: only ask once in the clear whether it is a plain port.
    // A scan that found a version accepted has heard TLS from the port: then the silence is this
    // handshake's, and the probes go on.
    let scan_heard_tls = scan.is_some_and(|r| r.versions.iter().any(|v| v.accepted));
    if !scan_heard_tls && dflt_attempt.as_ref().is_some_and(Attempt::unanswered) {
        return Err(silent_port(addr, opts));
    }
    // The certificate's name (RFC 6125 §6), checked when the profile asks for it. OpenSSL checks
    // the name before the chain's signatures and validity and stops at the first failure, so a
    // name mismatch (X509_V_ERR 62, an IP 64) says nothing of the chain: the default handshake
    // is made once more without the name check, and the later probes go without it.
    let mut name_check = NameCheck {
        name: client_owned
            .server_name
            .clone()
            .filter(|_| client_owned.verify_hostname),
        matched: None,
        detail: None,
    };
    if name_check.name.is_some() {
        match &dflt_attempt {
            Some(a) if a.ok() => name_check.matched = Some(true),
            Some(a) if a.x509_error().is_some_and(|c| c == 62 || c == 64) => {
                name_check.matched = Some(false);
                name_check.detail = a.reason();
                client_owned.verify_hostname = false;
                dflt.verify_hostname = false;
                if let Ok(b) = r.backend(&dflt) {
                    dflt_attempt = Some(r.run(b.as_ref(), After::Close)?);
                }
            }
            _ => {}
        }
    }
    let client = &client_owned;
    // Our check of the server's chain failed (expired, unknown CA): record why, then go on with
    // verification off so that every later probe still runs, as testssl.sh and sslyze do; the
    // chain's facts are judged from the chain itself (`validity`, `server-chain-trusted`).
    let mut server_verification_error = None;
    let mut chain_incomplete = false;
    if let Some(a) = dflt_attempt
        .as_ref()
        .filter(|a| a.local_certificate_failure())
    {
        server_verification_error = a.reason();
        // X509_V_ERR 20 (no issuer of the leaf among the trust anchors) with the leaf alone, not
        // self-issued: the server sends no intermediate, which RFC 5246 §7.4.2 and RFC 8446
        // §4.4.2 ask of it (every certificate up to, not necessarily including, the root).
        chain_incomplete = a.x509_error() == Some(20)
            && a.chain.len() == 1
            && chain::describe(&a.chain[0], chain::now_unix()).is_ok_and(|c| !c.self_issued);
        r.quirks.no_server_verification = true;
        if let Ok(b) = r.backend(&dflt) {
            let again = r.run(b.as_ref(), After::Close)?;
            dflt_attempt = Some(again);
        }
    }

    // A plain (non-TLS) port makes every handshake fail or hang: find out once, before the
    // version probes would each wait for the timeout.
    if let Some(a) = &dflt_attempt {
        if a.error.as_ref().is_some_and(|e| {
            !a.server_hello_reached() && !matches!(e, TlsError::NoSharedCipher { .. })
        }) {
            r.handshakes += 1;
            if let Some(detail) = opts
                .round
                .as_deref()
                .and_then(|r| plain_check(addr, opts.timeout, r))
            {
                return Err(SurveyError::NotTls { addr, detail });
            }
        }
    }
    let (version_probes, versions) = versions::probe(&mut r, client)?;
    if let Some(p) = version_probes
        .iter()
        .find(|p| p.local_cert_failure && !r.quirks.no_server_verification)
    {
        server_verification_error = p.reason.clone();
        r.quirks.no_server_verification = true;
    }
    if !versions.values().any(|v| *v) {
        return Err(classify_failure(
            addr,
            opts,
            dflt_attempt.as_ref(),
            &version_probes,
            scan,
        ));
    }
    let accepted: Vec<TlsVersion> = TlsVersion::ALL
        .into_iter()
        .filter(|v| versions.get(v.short()).copied().unwrap_or(false))
        .collect();

    let (negotiated, negotiated_error, mut chain_der, chain_trusted) = match &dflt_attempt {
        Some(a) if a.ok() => (
            Some(Negotiated {
                version: a.version.unwrap_or(TlsVersion::Tls12),
                suite: a
                    .suite_code
                    .map(|c| {
                        crate::suites::by_code(c)
                            .map(|s| s.name.to_string())
                            .unwrap_or_else(|| format!("0x{c:04X}"))
                    })
                    .unwrap_or_default(),
                group: a.group_name.clone(),
                signature_scheme: a.signature_scheme.clone(),
                ht_ms: a.ht_ms.unwrap_or(0.0),
            }),
            None,
            a.chain.clone(),
            Some(server_verification_error.is_none()),
        ),
        Some(a) => (
            None,
            a.reason(),
            a.chain.clone(),
            if a.local_certificate_failure() || server_verification_error.is_some() {
                Some(false)
            } else {
                None
            },
        ),
        None => (None, None, Vec::new(), None),
    };
    if chain_der.is_empty() {
        chain_der = version_probes
            .iter()
            .find(|p| !p.chain.is_empty())
            .map(|p| p.chain.clone())
            .unwrap_or_default();
    }
    // A certificate OpenSSL accepted in the handshake but cannot describe is reported, not fatal.
    let (chain, chain_error) = match chain::describe_chain(&chain_der, chain::now_unix()) {
        Ok(c) => (c, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };

    let (suites, suites_not_tested) = suites::probe(&mut r, client, &accepted, scan)?;
    let client_auth = client_auth::probe(&mut r, client, &accepted)?;
    let ri = version_probes
        .iter()
        .find(|p| p.version == TlsVersion::Tls12)
        .and_then(|p| p.secure_renegotiation);
    let client_refused = client_auth.baseline.refused == Some(true);
    let (resumption, renegotiation, key_update) =
        session::probe(&mut r, client, &accepted, ri, client_refused)?;

    // The stand-in anchor's "unknown CA" says nothing of the server.
    let (chain_trusted, server_verification_error, chain_incomplete) = if trust_anchors {
        (chain_trusted, server_verification_error, chain_incomplete)
    } else {
        (None, None, false)
    };
    let mut s = TlsSurvey {
        target: addr.to_string(),
        client_library: backend::capabilities(BackendKind::Openssl).library.clone(),
        versions,
        version_probes,
        suites,
        suites_not_tested,
        negotiated,
        negotiated_error,
        chain,
        chain_error,
        chain_trusted,
        trust_anchors,
        server_verification_error,
        server_name_refused,
        name_check,
        chain_incomplete,
        client_cert_required: client_auth.without_cert.refused,
        untrusted_client_cert_refused: client_auth.untrusted_cert.refused,
        client_auth,
        resumption,
        renegotiation,
        key_update,
        verdicts: Vec::new(),
        round_answered: match r.answers {
            attempt::AppAnswers::Yes => Some(true),
            attempt::AppAnswers::No => Some(false),
            attempt::AppAnswers::Unknown => None,
        },
        handshakes: r.handshakes,
        duration_s: 0.0,
        scan: None,
    };
    s.verdicts = verdicts::judge(&s);
    s.duration_s = start.elapsed().as_secs_f64();
    Ok(s)
}

/// A port that took the connection and answered a ClientHello with nothing within the timeout
/// (`crate::scan::ScanError::Silent`, or the survey's own first handshake): a plain port that
/// waits for more than a ClientHello gives itself away by answering a clear request
/// ([`SurveyError::NotTls`]); anything else is [`SurveyError::Timeout`]. One connection.
pub fn silent_port(addr: SocketAddr, opts: &SurveyOptions) -> SurveyError {
    if let Some(detail) = opts
        .round
        .as_deref()
        .and_then(|r| plain_check(addr, opts.timeout, r))
    {
        return SurveyError::NotTls { addr, detail };
    }
    SurveyError::Timeout {
        addr,
        timeout_ms: opts.timeout.as_millis() as u64,
    }
}

/// No version was accepted: tell a silent server, a plain (non-TLS) server and a TLS server
/// that refuses this client apart.
fn classify_failure(
    addr: SocketAddr,
    opts: &SurveyOptions,
    dflt: Option<&attempt::Attempt>,
    probes: &[VersionProbe],
    scan: Option<&crate::scan::ScanReport>,
) -> SurveyError {
    // A plain server may ignore the ClientHello (it waits for the rest of a "TPKT" that starts
    // with 0x16) and so look silent: ask it in the clear first.
    if let Some(detail) = opts
        .round
        .as_deref()
        .and_then(|r| plain_check(addr, opts.timeout, r))
    {
        return SurveyError::NotTls { addr, detail };
    }
    let timed_out = |e: &Option<TlsError>| matches!(e, Some(TlsError::Timeout));
    if dflt.is_none_or(|a| timed_out(&a.error)) && probes.iter().all(|p| p.timed_out) {
        return SurveyError::Timeout {
            addr,
            timeout_ms: opts.timeout.as_millis() as u64,
        };
    }
    let mut detail = dflt
        .and_then(|a| a.reason())
        .or_else(|| probes.iter().find_map(|p| p.reason.clone()))
        .unwrap_or_else(|| "no reason given".into());
    if let Some(why) = scan.and_then(scan_explains) {
        detail = format!("{detail}; {why}");
    }
    SurveyError::NoHandshake { addr, detail }
}

/// Why no library handshake got through although the scan found the server speaking TLS: the
/// kinds of suite it accepts that the survey's library clients do not offer (DSA certificates,
/// anonymous, PSK, SRP, NULL, export, RC4, DES, 3DES), or groups they do not offer (brainpool,
/// RFC 7027 / RFC 8734). `None` when the scan accepted nothing.
fn scan_explains(scan: &crate::scan::ScanReport) -> Option<String> {
    let accepted: Vec<_> = scan
        .versions
        .iter()
        .filter(|v| v.accepted)
        .flat_map(|v| v.suites.iter())
        .collect();
    if accepted.is_empty() {
        return None;
    }
    let mut kinds: Vec<&str> = Vec::new();
    for s in &accepted {
        let k = if s.anonymous {
            "anonymous (no server certificate)"
        } else if s.auth == "DSS" {
            "DSA (DSS) certificates"
        } else if s.kx == "PSK" || s.auth == "PSK" {
            "pre-shared keys (PSK)"
        } else if s.kx == "SRP" {
            "SRP"
        } else if s.null {
            "NULL encryption"
        } else if s.export || s.rc4 || s.des || s.triple_des {
            "export, RC4, DES or 3DES ciphers"
        } else {
            continue;
        };
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let mut groups: Vec<&str> = Vec::new();
    for g in scan.versions.iter().flat_map(|v| v.groups.iter()) {
        if !groups.contains(&g.name.as_str()) {
            groups.push(&g.name);
        }
    }
    let brainpool_only = !groups.is_empty() && groups.iter().all(|g| g.starts_with("brainpool"));
    let mut why = Vec::new();
    if !kinds.is_empty() {
        why.push(format!("suites of {}", kinds.join(", ")));
    }
    if brainpool_only {
        why.push(format!(
            "only the groups {} (RFC 7027 / RFC 8734)",
            groups.join(", ")
        ));
    }
    let examples: Vec<&str> = accepted.iter().take(3).map(|s| s.name).collect();
    Some(if why.is_empty() {
        format!(
            "the scan found {} accepted suite(s) (e.g. {}) that the library probes did not get through with",
            accepted.len(),
            examples.join(", ")
        )
    } else {
        format!(
            "the scan found {} accepted suite(s) (e.g. {}): {}, which the survey's library \
             clients do not offer",
            accepted.len(),
            examples.join(", "),
            why.join(" and ")
        )
    })
}

/// Sends a COTP CR in the clear; `Some` with a description when the server answers with
/// something that is not a TLS record (a TPKT, as a plain MMS server does; RFC 1006 §6).
fn plain_check(addr: SocketAddr, timeout: Duration, round: &dyn AppRound) -> Option<String> {
    use std::io::{Read, Write};
    let mut tcp = attempt::connect(addr, timeout).ok()?;
    tcp.set_read_timeout(Some(timeout)).ok()?;
    tcp.write_all(&round.request()).ok()?;
    let mut buf = [0u8; 64];
    let n = tcp.read(&mut buf).ok()?;
    let b = &buf[..n];
    let _ = tcp.shutdown(std::net::Shutdown::Both);
    match b.first() {
        None => None,
        // TLS record content types 20..=24 (RFC 8446 §5.1) with major version 3.
        Some(20..=24) if b.get(1) == Some(&3) => None,
        Some(_) if round.is_confirm(b) => {
            Some("it answers a clear COTP connection request with a CC (plain MMS, port 102 style)".into())
        }
        Some(3) if b.get(1) == Some(&0) => Some("it answers in TPKT (RFC 1006) without TLS".into()),
        Some(_) => Some(format!(
            "it answers a clear request with {} octets that are not a TLS record (first octet 0x{:02X})",
            n, b[0]
        )),
    }
}
