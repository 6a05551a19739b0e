//! IEC 62351-3 verdicts on a TLS handshake seen passively, from the one rule table of
//! `gander tls survey` (`gander_tls::survey::verdicts::judge`): what was observed is written
//! into a `TlsSurvey` (the version and suite chosen, the server's chain, whether a client
//! certificate was sent, renegotiation_info) and judged there, and only the verdicts a
//! passive observer can support are kept ([`PASSIVE`]): a capture shows what one handshake
//! chose, not what the server would refuse.

use crate::mms_tcp::Association;
use gander_tls::survey::session::{Check, Renegotiation, Resumption};
use gander_tls::survey::verdicts::{judge, Verdict};
use gander_tls::survey::{ClientAuth, Negotiated, SuiteProbe, TlsSurvey};
use gander_tls::TlsVersion;
use std::collections::BTreeMap;

/// The survey verdicts that one observed handshake can support. The others need an active
/// probe (a refused version or suite, a client without a certificate turned away).
pub const PASSIVE: [&str; 11] = [
    "no-legacy-tls",
    "suites-in-profile",
    "no-sha1-suites",
    "client-cert-required",
    "secure-renegotiation",
    "key-size",
    "signature-hash",
    "validity",
    "cert-size",
    "x509-v3",
    "server-eku",
];

/// The finding code of a verdict (`tls-` and its id).
pub fn code(id: &str) -> &'static str {
    match id {
        "no-legacy-tls" => "tls-no-legacy-tls",
        "suites-in-profile" => "tls-suites-in-profile",
        "no-sha1-suites" => "tls-no-sha1-suites",
        "client-cert-required" => "tls-client-cert-required",
        "secure-renegotiation" => "tls-secure-renegotiation",
        "key-size" => "tls-key-size",
        "signature-hash" => "tls-signature-hash",
        "validity" => "tls-validity",
        "cert-size" => "tls-cert-size",
        "x509-v3" => "tls-x509-v3",
        "server-eku" => "tls-server-eku",
        _ => "tls-verdict",
    }
}

/// What the handshake of `a` showed, as the survey writes it.
pub fn observed(a: &Association, at_s: i64) -> Option<TlsSurvey> {
    let (sh, _) = a.server_hello.as_ref()?;
    let version = TlsVersion::from_wire(sh.version);
    let mut versions = BTreeMap::new();
    if let Some(v) = version {
        versions.insert(v.short(), true);
    }
    let suite = gander_tls::suites::by_code(sh.suite);
    let suites = suite
        .map(|c| SuiteProbe {
            name: c.name,
            code: format!("0x{:04X}", c.code),
            version,
            accepted: true,
            ht_ms: None,
            iec_status: c.iec,
            backend: "observed",
            reason: None,
        })
        .into_iter()
        .collect();
    let (chain, chain_error) =
        match gander_tls::survey::chain::describe_chain(&a.server_chain, at_s) {
            Ok(c) => (c, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
    let tls12 = version == Some(TlsVersion::Tls12);
    // Any registered group by its IANA name (gander_tls::named_group), not only gander's four.
    let group = sh.group.or(a.ske_group).map(|c| {
        gander_tls::named_group::name(c)
            .map(str::to_string)
            .unwrap_or_else(|| format!("0x{c:04X}"))
    });
    let resumed = a.resumed() == Some(true);
    Some(TlsSurvey {
        target: a.server.to_string(),
        client_library: "passive observation".into(),
        versions,
        version_probes: Vec::new(),
        suites,
        suites_not_tested: Vec::new(),
        negotiated: version.map(|v| Negotiated {
            version: v,
            suite: suite
                .map(|c| c.name.to_string())
                .unwrap_or_else(|| format!("0x{:04X}", sh.suite)),
            group,
            signature_scheme: None,
            ht_ms: 0.0,
        }),
        negotiated_error: None,
        chain,
        chain_error,
        chain_trusted: None,
        // A capture gives the chain as sent; nothing here verifies it against a CA.
        trust_anchors: false,
        server_verification_error: None,
        server_name_refused: None,
        name_check: Default::default(),
        chain_incomplete: false,
        // TLS 1.2 shows the client's Certificate: an association that carried data without one
        // was accepted without client authentication. TLS 1.3 hides it.
        client_cert_required: match (tls12, a.client_cert_sent, a.application_data, resumed) {
            (true, Some(true), _, _) | (_, _, _, true) | (false, ..) => None,
            (true, _, true, false) => Some(false),
            _ => None,
        },
        untrusted_client_cert_refused: None,
        client_auth: ClientAuth::default(),
        resumption: Resumption {
            tls12_session_id: Check {
                ok: resumed.then_some(true),
                detail: None,
            },
            ..Resumption::default()
        },
        renegotiation: Renegotiation {
            // A resumed handshake is abbreviated but still answers renegotiation_info.
            secure_renegotiation: tls12.then_some(sh.renegotiation_info),
            client_initiated: Check::default(),
            insecure: false,
        },
        key_update: Check::default(),
        verdicts: Vec::new(),
        round_answered: None,
        handshakes: 1,
        duration_s: 0.0,
        // A passive observer offers nothing: no scan.
        scan: None,
    })
}

/// The passive verdicts on `a`'s handshake judged at `at_s` (Unix seconds, the capture time).
pub fn verdicts(a: &Association, at_s: i64) -> Vec<Verdict> {
    let Some(s) = observed(a, at_s) else {
        return Vec::new();
    };
    judge(&s)
        .into_iter()
        .filter(|v| PASSIVE.contains(&v.id))
        .collect()
}
