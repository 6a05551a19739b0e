//! Verdicts of a survey against the IEC 62351-3 requirements that public sources establish.
//!
//! The standard is not public; each verdict names where its requirement comes from (the tags of
//! `docs/tls.md`: [P] public primary source, [C] open-source code, [X] third-party reading of the
//! paid text). Where gander is stricter than what the extracts say, the verdict says so.
use super::TlsSurvey;
use crate::suites::IecStatus;
use crate::TlsVersion;
use serde::Serialize;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The requirement is met.
    Pass,
    /// For information; no requirement at stake, or it could not be tested.
    Info,
    /// Allowed but discouraged, or a requirement whose public source is weak.
    Warn,
    /// The requirement is not met.
    Fail,
}

impl Level {
    /// Upper-case word for text reports.
    pub fn word(self) -> &'static str {
        match self {
            Level::Pass => "PASS",
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Fail => "FAIL",
        }
    }
}

/// One verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Stable identifier, e.g. `tls12-accepted`.
    pub id: &'static str,
    /// The level.
    pub level: Level,
    /// The requirement, in one line.
    pub requirement: &'static str,
    /// Where the requirement comes from.
    pub source: &'static str,
    /// What the survey found.
    pub detail: String,
}

const SRC_VERSIONS: &str =
    "IEC 62351-3 Ed.1+A1/A2 and Ed.2: TLS 1.2 mandatory [X]; NIST SP 800-52r2 [P]";
const SRC_OLD: &str = "RFC 8996 deprecates TLS 1.0/1.1 [P]; IEC 62351-3 Ed.1+A2 allows them with a warning, Ed.2 only conditionally [X]: gander is stricter";
const SRC_MUTUAL: &str = "IEC 62351-3: mutual authentication mandatory, a peer without a certificate is refused [X]; libiec61850 default VERIFY_REQUIRED [C]";
const SRC_SUITES: &str = "gander catalogue (IEC 62351-4:2018 native mode, IEC 62351-3 Ed.2 TLS 1.3 list, SHA-1 deprecated by Ed.1 Amd1) [X][C]";
const SRC_RI: &str = "IEC 62351-3: RFC 5746 secure renegotiation mandatory [X]; RFC 5746 [P]";
const SRC_RENEG: &str =
    "IEC 62351-3: renegotiation at least every 24 h, the client may initiate it [X]";
const SRC_KU: &str =
    "IEC 62351-3 Ed.2: KeyUpdate in TLS 1.3 (event TLS_NO_SK_UPDATE) [X]; RFC 8446 §4.6.3 [P]";
const SRC_RESUME: &str = "IEC 62351-3: resumption by session id or RFC 5077 ticket, interval < renegotiation interval [X]";
const SRC_KEY: &str = "IEC 62351-3 Ed.1 Amd1: RSA >= 2048 bits mandatory, 1024 deprecated; IEC 62351-4 Annex G: EC >= 256 bits [X]; NIST SP 800-131A Rev.2 [P]";
const SRC_SIG: &str = "IEC 62351-3 Ed.1 Amd1: SHA-256 mandatory, SHA-1 deprecated, MD5 excluded [X]; NIST SP 800-131A Rev.2 [P]";
const SRC_VALID: &str = "IEC 62351-3: an expired certificate is refused [X]; RFC 5280 §4.1.2.5 [P]";
const SRC_SIZE: &str = "IEC 62351-3: certificates of at most 8192 octets [X]";
const SRC_V3: &str = "IEC 62351-4 Annex G: X.509 v3 certificates [X]";
const SRC_EKU: &str =
    "RFC 5280 §4.2.1.12: a certificate with extendedKeyUsage is for the listed purposes only [P]";
const SRC_NAME: &str = "RFC 6125 §6: the client checks the reference identity (the name it connects to) against the certificate's subjectAltName [P]";
const SRC_TRUST: &str =
    "IEC 62351-3: the peer certificate chains to a configured trust anchor [X]; RFC 5280 §6 [P]";

fn v(
    id: &'static str,
    level: Level,
    requirement: &'static str,
    source: &'static str,
    detail: String,
) -> Verdict {
    Verdict {
        id,
        level,
        requirement,
        source,
        detail,
    }
}

fn yes(s: &TlsSurvey, ver: TlsVersion) -> bool {
    s.versions.get(ver.short()).copied().unwrap_or(false)
}

/// Judges a survey.
pub fn judge(s: &TlsSurvey) -> Vec<Verdict> {
    let mut out = Vec::new();
    use Level::*;
    // Versions.
    out.push(if yes(s, TlsVersion::Tls12) {
        v(
            "tls12-accepted",
            Pass,
            "TLS 1.2 is supported",
            SRC_VERSIONS,
            "TLS 1.2 accepted".into(),
        )
    } else {
        v(
            "tls12-accepted",
            Fail,
            "TLS 1.2 is supported",
            SRC_VERSIONS,
            "TLS 1.2 refused".into(),
        )
    });
    let old: Vec<&str> = [TlsVersion::Tls10, TlsVersion::Tls11]
        .into_iter()
        .filter(|x| yes(s, *x))
        .map(|x| x.short())
        .collect();
    out.push(if old.is_empty() {
        v(
            "no-legacy-tls",
            Pass,
            "no TLS version below 1.2",
            SRC_OLD,
            "TLS 1.0 and 1.1 refused".into(),
        )
    } else {
        v(
            "no-legacy-tls",
            Fail,
            "no TLS version below 1.2",
            SRC_OLD,
            format!("TLS {} accepted", old.join(", ")),
        )
    });
    out.push(v(
        "tls13",
        Info,
        "TLS 1.3 is optional",
        "IEC 62351-3 Ed.2 [X]",
        format!(
            "TLS 1.3 {}",
            if yes(s, TlsVersion::Tls13) {
                "accepted"
            } else {
                "refused"
            }
        ),
    ));

    // Client authentication.
    let req = "a client without a certificate is refused";
    out.push(match s.client_cert_required {
        Some(true) => v(
            "client-cert-required",
            Pass,
            req,
            SRC_MUTUAL,
            "refused without a certificate".into(),
        ),
        Some(false) => v(
            "client-cert-required",
            Fail,
            req,
            SRC_MUTUAL,
            "accepted a client without a certificate".into(),
        ),
        None => v(
            "client-cert-required",
            Info,
            req,
            SRC_MUTUAL,
            "not determined".into(),
        ),
    });
    let req = "a client certificate from an unknown CA is refused";
    out.push(match s.untrusted_client_cert_refused {
        Some(true) => v(
            "untrusted-client-cert",
            Pass,
            req,
            SRC_MUTUAL,
            "refused a fresh self-signed certificate".into(),
        ),
        Some(false) => v(
            "untrusted-client-cert",
            Fail,
            req,
            SRC_MUTUAL,
            "accepted a fresh self-signed certificate".into(),
        ),
        None => v(
            "untrusted-client-cert",
            Info,
            req,
            SRC_MUTUAL,
            "not determined".into(),
        ),
    });

    // Suites.
    let acc: Vec<_> = s.suites.iter().filter(|p| p.accepted).collect();
    let outside: Vec<&str> = acc
        .iter()
        .filter(|p| matches!(p.iec_status, IecStatus::NotListed))
        .map(|p| p.name)
        .collect();
    let weak: Vec<&str> = acc
        .iter()
        .filter(|p| matches!(p.iec_status, IecStatus::Deprecated | IecStatus::Legacy))
        .map(|p| p.name)
        .collect();
    let req = "only suites of the IEC 62351 profile";
    out.push(if outside.is_empty() {
        v(
            "suites-in-profile",
            Pass,
            req,
            SRC_SUITES,
            "no accepted suite outside the profile".into(),
        )
    } else {
        v(
            "suites-in-profile",
            Warn,
            req,
            SRC_SUITES,
            format!("accepted outside the profile: {}", outside.join(", ")),
        )
    });
    let req = "no SHA-1 (deprecated) suites";
    out.push(if weak.is_empty() {
        v(
            "no-sha1-suites",
            Pass,
            req,
            SRC_SUITES,
            "no deprecated or legacy suite accepted".into(),
        )
    } else {
        v(
            "no-sha1-suites",
            Warn,
            req,
            SRC_SUITES,
            format!("accepted: {}", weak.join(", ")),
        )
    });
    if yes(s, TlsVersion::Tls12) {
        let tested: Vec<_> = s
            .suites
            .iter()
            .filter(|p| {
                p.iec_status == IecStatus::Mandatory && p.version == Some(TlsVersion::Tls12)
            })
            .collect();
        // IEC 62351-4 names one "ECDHE AES128_GCM_SHA256" suite, ECDHE_RSA in one source and
        // ECDHE_ECDSA in the other: either satisfies it (a server has one key type).
        let ecdhe = [
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        ];
        let ecdhe_ok = tested.iter().any(|p| p.accepted && ecdhe.contains(&p.name));
        let tested: Vec<_> = tested
            .into_iter()
            .filter(|p| !(ecdhe_ok && !p.accepted && ecdhe.contains(&p.name)))
            .collect();
        let ok: Vec<&str> = tested
            .iter()
            .filter(|p| p.accepted)
            .map(|p| p.name)
            .collect();
        let req = "the mandatory TLS 1.2 suites of IEC 62351-4 are supported";
        out.push(if tested.is_empty() {
            v(
                "mandatory-tls12-suites",
                Info,
                req,
                SRC_SUITES,
                "not tested".into(),
            )
        } else if ok.len() == tested.len() {
            v(
                "mandatory-tls12-suites",
                Pass,
                req,
                SRC_SUITES,
                format!("all {} testable ones accepted", ok.len()),
            )
        } else {
            let missing: Vec<&str> = tested
                .iter()
                .filter(|p| !p.accepted)
                .map(|p| p.name)
                .collect();
            // The ECDHE suite is RSA in one source and ECDSA in the other: a server has one key type.
            v(
                "mandatory-tls12-suites",
                Warn,
                req,
                SRC_SUITES,
                format!("refused: {}", missing.join(", ")),
            )
        });
    }

    // Sessions.
    if yes(s, TlsVersion::Tls12) {
        let req = "RFC 5746 secure renegotiation in TLS 1.2";
        out.push(match s.renegotiation.secure_renegotiation {
            Some(true) => v(
                "secure-renegotiation",
                Pass,
                req,
                SRC_RI,
                "renegotiation_info sent".into(),
            ),
            // The server also renegotiates without it: the attack RFC 5746 §1 describes.
            Some(false)
                if s.renegotiation.insecure
                    && s.renegotiation.client_initiated.ok == Some(true) =>
            {
                v(
                    "secure-renegotiation",
                    Fail,
                    req,
                    SRC_RI,
                    "no renegotiation_info in the ServerHello, and an insecure client-initiated \
                     renegotiation is accepted (CVE-2009-3555)"
                        .into(),
                )
            }
            Some(false) => v(
                "secure-renegotiation",
                Warn,
                req,
                SRC_RI,
                "no renegotiation_info in the ServerHello".into(),
            ),
            None => v(
                "secure-renegotiation",
                Info,
                req,
                SRC_RI,
                "not determined".into(),
            ),
        });
        let req = "a client-initiated TLS 1.2 renegotiation is accepted";
        let d = s
            .renegotiation
            .client_initiated
            .detail
            .clone()
            .unwrap_or_default();
        out.push(match s.renegotiation.client_initiated.ok {
            // Accepted, but only the insecure kind: the secure-renegotiation verdict fails.
            Some(true) if s.renegotiation.insecure => v(
                "client-renegotiation",
                Warn,
                req,
                SRC_RENEG,
                format!("{d} (without RFC 5746: insecure)"),
            ),
            Some(true) => v("client-renegotiation", Pass, req, SRC_RENEG, d),
            Some(false) => v("client-renegotiation", Warn, req, SRC_RENEG, d),
            None => v("client-renegotiation", Info, req, SRC_RENEG, d),
        });
    }
    if yes(s, TlsVersion::Tls13) {
        let req = "TLS 1.3 KeyUpdate is answered";
        let d = s.key_update.detail.clone().unwrap_or_default();
        out.push(match s.key_update.ok {
            Some(true) => v("key-update", Pass, req, SRC_KU, d),
            Some(false) => v("key-update", Warn, req, SRC_KU, d),
            None => v("key-update", Info, req, SRC_KU, d),
        });
    }
    let r = &s.resumption;
    let any = [&r.tls12_session_id, &r.tls12_ticket, &r.tls13_psk]
        .iter()
        .any(|c| c.ok == Some(true));
    let req = "session resumption is supported";
    out.push(v(
        "resumption",
        if any { Pass } else { Info },
        req,
        SRC_RESUME,
        format!(
            "TLS 1.2 session id {}, TLS 1.2 ticket {}, TLS 1.3 PSK {}",
            word(r.tls12_session_id.ok),
            word(r.tls12_ticket.ok),
            word(r.tls13_psk.ok)
        ),
    ));

    if let Some(name) = &s.server_name_refused {
        out.push(crate::scan::findings::server_name_refused(
            "sni",
            name,
            "the survey",
        ));
    }
    // Certificates.
    match s.chain_trusted {
        Some(true) => out.push(v(
            "server-chain-trusted",
            Pass,
            "the server's chain verifies against the client's CAs",
            SRC_TRUST,
            "it verifies against the profile's ca".into(),
        )),
        Some(false) => out.push(v(
            "server-chain-trusted",
            Warn,
            "the server's chain verifies against the client's CAs",
            SRC_TRUST,
            if s.chain_incomplete {
                format!(
                    "chain incomplete: the server sends no intermediate certificate (RFC 5246 \
                     §7.4.2 / RFC 8446 §4.4.2); its leaf's issuer {} is not one of the \
                     profile's CAs",
                    s.chain
                        .first()
                        .map(|c| format!("\"{}\"", c.issuer))
                        .unwrap_or_default()
                )
            } else {
                match &s.server_verification_error {
                    Some(e) => format!("it does not verify against the profile's ca: {e}"),
                    None => "it does not verify against the profile's ca".into(),
                }
            },
        )),
        None if !s.trust_anchors && !s.chain.is_empty() => out.push(v(
            "server-chain-trusted",
            Info,
            "the server's chain verifies against the client's CAs",
            SRC_TRUST,
            "not checked: no CA was given (a survey's --tls FILE with `ca`); the chain is read \
             as sent and judged by itself, not verified"
                .into(),
        )),
        None => {}
    }
    out.push(name_verdict(s));
    for (i, c) in s.chain.iter().enumerate() {
        let who = if i == 0 {
            "leaf".to_string()
        } else {
            format!("chain[{i}]")
        };
        let small = match c.key_type.as_str() {
            "RSA" | "RSA-PSS" | "DSA" => c.key_bits < 2048,
            "EC" => c.key_bits < 256,
            _ => false,
        };
        if small {
            out.push(v(
                "key-size",
                Fail,
                "RSA keys >= 2048 bits, EC keys >= 256 bits",
                SRC_KEY,
                format!("{who}: {} {} bits", c.key_type, c.key_bits),
            ));
        }
        let sig = c.signature_algorithm.to_ascii_lowercase();
        // A root's self-signature is not checked by anyone (RFC 5280 §6.1): not judged.
        if !(c.self_issued && i > 0) && (sig.contains("sha1") || sig.contains("md5")) {
            out.push(v(
                "signature-hash",
                Fail,
                "certificate signatures with SHA-256 or better",
                SRC_SIG,
                format!("{who}: {}", c.signature_algorithm),
            ));
        }
        if !c.valid_now {
            out.push(v(
                "validity",
                Fail,
                "certificates within their validity period",
                SRC_VALID,
                format!("{who}: {} .. {}", c.not_before, c.not_after),
            ));
        }
        if c.der_len > 8192 {
            out.push(v(
                "cert-size",
                Warn,
                "certificates of at most 8192 octets",
                SRC_SIZE,
                format!("{who}: {} octets", c.der_len),
            ));
        }
        if c.x509_version != 3 {
            out.push(v(
                "x509-v3",
                Warn,
                "X.509 v3 certificates",
                SRC_V3,
                format!("{who}: X.509 v{}", c.x509_version),
            ));
        }
        if i == 0 {
            if let Some(e) = &c.extended_key_usage {
                if !e.contains(&"serverAuth") && !e.contains(&"anyExtendedKeyUsage") {
                    out.push(v(
                        "server-eku",
                        Warn,
                        "a server certificate's extendedKeyUsage allows serverAuth",
                        SRC_EKU,
                        format!("leaf: {}", e.join(", ")),
                    ));
                }
            }
        }
    }
    if !s.chain.is_empty()
        && !out
            .iter()
            .any(|x| matches!(x.id, "key-size" | "signature-hash" | "validity"))
    {
        out.push(v(
            "certificates",
            Pass,
            "key size, signature hash and validity of the chain",
            SRC_KEY,
            format!("{} certificate(s) checked", s.chain.len()),
        ));
    }
    out
}

fn word(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not tested",
    }
}

/// The certificate's name against the profile's `server_name` (RFC 6125 §6), a verdict of its
/// own: a name mismatch is not an untrusted chain.
fn name_verdict(s: &TlsSurvey) -> Verdict {
    use Level::*;
    const REQ: &str = "the server certificate matches the name the client expects";
    let san = s
        .chain
        .first()
        .map(|c| {
            if c.san.is_empty() {
                format!("no subjectAltName, subject {}", c.subject)
            } else {
                format!("subjectAltName {}", c.san.join(", "))
            }
        })
        .unwrap_or_else(|| "no certificate seen".into());
    match (&s.name_check.name, s.name_check.matched) {
        (Some(n), Some(true)) => v(
            "server-name-match",
            Pass,
            REQ,
            SRC_NAME,
            format!("matches \"{n}\""),
        ),
        (Some(n), Some(false)) => v(
            "server-name-match",
            Fail,
            REQ,
            SRC_NAME,
            format!(
                "the certificate is not for \"{n}\" ({san}); the chain is judged apart \
                 (server-chain-trusted)"
            ),
        ),
        (Some(n), None) => v(
            "server-name-match",
            Info,
            REQ,
            SRC_NAME,
            format!("\"{n}\" not determined: the check of the chain failed first"),
        ),
        (None, _) => v(
            "server-name-match",
            Info,
            REQ,
            SRC_NAME,
            format!(
                "not checked: the profile sets no verify_hostname (with server_name); the \
                 certificate has {san}"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    fn empty() -> TlsSurvey {
        TlsSurvey {
            target: "127.0.0.1:3782".into(),
            client_library: String::new(),
            versions: TlsVersion::ALL.iter().map(|v| (v.short(), false)).collect(),
            version_probes: Vec::new(),
            suites: Vec::new(),
            suites_not_tested: Vec::new(),
            negotiated: None,
            negotiated_error: None,
            chain: Vec::new(),
            chain_error: None,
            chain_trusted: None,
            trust_anchors: true,
            server_verification_error: None,
            server_name_refused: None,
            name_check: NameCheck::default(),
            chain_incomplete: false,
            client_cert_required: None,
            untrusted_client_cert_refused: None,
            client_auth: ClientAuth::default(),
            resumption: Resumption::default(),
            renegotiation: Renegotiation::default(),
            key_update: Check::default(),
            verdicts: Vec::new(),
            round_answered: None,
            handshakes: 0,
            duration_s: 0.0,
            scan: None,
        }
    }

    fn level(vs: &[Verdict], id: &str) -> Option<Level> {
        vs.iter().find(|x| x.id == id).map(|x| x.level)
    }

    #[test]
    fn name_and_chain_are_judged_apart() {
        // Default profile: no name check, said so.
        let mut s = empty();
        s.chain_trusted = Some(true);
        let vs = judge(&s);
        assert_eq!(level(&vs, "server-chain-trusted"), Some(Level::Pass));
        assert_eq!(level(&vs, "server-name-match"), Some(Level::Info));
        // A name mismatch with a good chain: the chain passes, the name fails.
        s.name_check = NameCheck {
            name: Some("ied7".into()),
            matched: Some(false),
            detail: None,
        };
        let vs = judge(&s);
        assert_eq!(level(&vs, "server-chain-trusted"), Some(Level::Pass));
        assert_eq!(level(&vs, "server-name-match"), Some(Level::Fail));
        s.name_check.matched = Some(true);
        assert_eq!(level(&judge(&s), "server-name-match"), Some(Level::Pass));
        // The chain failed first: the name is not determined.
        s.name_check.matched = None;
        s.chain_trusted = Some(false);
        let vs = judge(&s);
        assert_eq!(level(&vs, "server-name-match"), Some(Level::Info));
        assert_eq!(level(&vs, "server-chain-trusted"), Some(Level::Warn));
    }

    #[test]
    fn incomplete_chain_and_refused_sni_are_named() {
        let mut s = empty();
        s.chain_trusted = Some(false);
        s.chain_incomplete = true;
        s.server_name_refused = Some("localhost".into());
        let vs = judge(&s);
        let chain = vs.iter().find(|x| x.id == "server-chain-trusted").unwrap();
        assert!(chain.detail.starts_with("chain incomplete"), "{chain:?}");
        let sni = vs.iter().find(|x| x.id == "sni").unwrap();
        assert_eq!(sni.level, Level::Warn);
        assert!(sni.detail.contains("\"localhost\""), "{sni:?}");
        s.chain_incomplete = false;
        s.server_verification_error = Some("certificate from an unknown CA".into());
        let vs = judge(&s);
        let chain = vs.iter().find(|x| x.id == "server-chain-trusted").unwrap();
        assert!(chain.detail.contains("unknown CA"), "{chain:?}");
        assert_eq!(level(&judge(&empty()), "sni"), None);
    }

    fn suite(name: &'static str, iec: IecStatus, accepted: bool) -> SuiteProbe {
        SuiteProbe {
            name,
            code: String::new(),
            version: Some(TlsVersion::Tls12),
            accepted,
            ht_ms: None,
            iec_status: iec,
            backend: "openssl",
            reason: None,
        }
    }

    #[test]
    fn versions_and_client_auth() {
        let mut s = empty();
        s.versions.insert("1.0", true);
        s.versions.insert("1.2", true);
        s.client_cert_required = Some(false);
        s.untrusted_client_cert_refused = Some(true);
        let vs = judge(&s);
        assert_eq!(level(&vs, "tls12-accepted"), Some(Level::Pass));
        assert_eq!(level(&vs, "no-legacy-tls"), Some(Level::Fail));
        assert_eq!(level(&vs, "client-cert-required"), Some(Level::Fail));
        assert_eq!(level(&vs, "untrusted-client-cert"), Some(Level::Pass));
        // TLS 1.2 accepted but RFC 5746 not signalled.
        s.renegotiation.secure_renegotiation = Some(false);
        assert_eq!(level(&judge(&s), "secure-renegotiation"), Some(Level::Warn));
        // ... and it renegotiates without it.
        s.renegotiation.insecure = true;
        s.renegotiation.client_initiated.ok = Some(true);
        assert_eq!(level(&judge(&s), "secure-renegotiation"), Some(Level::Fail));
        assert_eq!(level(&judge(&s), "client-renegotiation"), Some(Level::Warn));
        let mut s = empty();
        s.versions.insert("1.3", true);
        let vs = judge(&s);
        assert_eq!(level(&vs, "tls12-accepted"), Some(Level::Fail));
        assert_eq!(level(&vs, "no-legacy-tls"), Some(Level::Pass));
        assert_eq!(level(&vs, "client-cert-required"), Some(Level::Info));
        assert_eq!(level(&vs, "secure-renegotiation"), None);
    }

    #[test]
    fn suites_outside_the_profile() {
        let mut s = empty();
        s.versions.insert("1.2", true);
        s.suites = vec![
            suite(
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                IecStatus::Mandatory,
                true,
            ),
            suite(
                "TLS_RSA_WITH_AES_128_CBC_SHA256",
                IecStatus::Mandatory,
                false,
            ),
            suite(
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                IecStatus::NotListed,
                false,
            ),
        ];
        let vs = judge(&s);
        assert_eq!(level(&vs, "suites-in-profile"), Some(Level::Pass));
        assert_eq!(level(&vs, "mandatory-tls12-suites"), Some(Level::Warn));
        s.suites[2].accepted = true;
        s.suites.push(suite(
            "TLS_RSA_WITH_AES_128_CBC_SHA",
            IecStatus::Deprecated,
            true,
        ));
        let vs = judge(&s);
        assert_eq!(level(&vs, "suites-in-profile"), Some(Level::Warn));
        assert_eq!(level(&vs, "no-sha1-suites"), Some(Level::Warn));
    }

    fn cert(key: &str, bits: u32, sig: &str, valid: bool) -> CertInfo {
        CertInfo {
            subject: "CN=ied".into(),
            issuer: "CN=ca".into(),
            self_issued: false,
            x509_version: 3,
            key_type: key.into(),
            key_bits: bits,
            curve: None,
            signature_algorithm: sig.into(),
            not_before: String::new(),
            not_after: String::new(),
            valid_now: valid,
            key_usage: None,
            extended_key_usage: Some(vec!["clientAuth"]),
            san: Vec::new(),
            der_len: 900,
            sha256: String::new(),
        }
    }

    #[test]
    fn certificates() {
        let mut s = empty();
        s.chain = vec![cert("RSA", 2048, "sha256WithRSAEncryption", true)];
        let vs = judge(&s);
        assert_eq!(level(&vs, "certificates"), Some(Level::Pass));
        assert_eq!(level(&vs, "server-eku"), Some(Level::Warn));
        s.chain = vec![cert("RSA", 1024, "sha1WithRSAEncryption", false)];
        let vs = judge(&s);
        assert_eq!(level(&vs, "key-size"), Some(Level::Fail));
        assert_eq!(level(&vs, "signature-hash"), Some(Level::Fail));
        assert_eq!(level(&vs, "validity"), Some(Level::Fail));
        assert_eq!(level(&vs, "certificates"), None);
        // A self-signed root's SHA-1 self-signature is not judged; its key is.
        let mut root = cert("EC", 256, "ecdsa-with-SHA1", true);
        root.self_issued = true;
        s.chain = vec![cert("EC", 256, "ecdsa-with-SHA256", true), root];
        assert_eq!(level(&judge(&s), "signature-hash"), None);
    }
}
