//! The survey as text for a terminal.
use super::session::Check;
use super::TlsSurvey;
use std::fmt::Write;

fn yn(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not determined",
    }
}

fn check(c: &Check) -> String {
    match &c.detail {
        Some(d) => format!("{} ({d})", yn(c.ok)),
        None => yn(c.ok).to_string(),
    }
}

/// Human-readable report of `s`.
pub fn render(s: &TlsSurvey) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "TLS survey of {} ({} handshakes, {:.1} s; client {})",
        s.target, s.handshakes, s.duration_s, s.client_library
    );
    let _ = writeln!(
        o,
        "application round after the handshake: {}",
        match s.round_answered {
            Some(true) => "answered",
            Some(false) => "no answer within the timeout (later rounds waited only for alerts)",
            None => "no round got through",
        }
    );
    let _ = writeln!(o, "\nversions");
    for p in &s.version_probes {
        let why = match (&p.reason, p.accepted) {
            (Some(r), false) => format!("  ({r})"),
            _ => String::new(),
        };
        let _ = writeln!(
            o,
            "  {:<8} {}{why}",
            p.version.to_string(),
            if p.accepted { "accepted" } else { "refused" }
        );
    }
    match (&s.negotiated, &s.negotiated_error) {
        (Some(n), _) => {
            let _ = writeln!(
                o,
                "\ndefault handshake: {} {}, group {}, signature {}, {:.2} ms",
                n.version,
                n.suite,
                n.group.as_deref().unwrap_or("-"),
                n.signature_scheme.as_deref().unwrap_or("-"),
                n.ht_ms
            );
        }
        (None, Some(e)) => {
            let _ = writeln!(o, "\ndefault handshake failed: {e}");
        }
        (None, None) => {}
    }
    let _ = writeln!(o, "\nsuites (offered one at a time)");
    let _ = writeln!(
        o,
        "  {:<46} {:<5} {:<9} {:>8}  {:<12} backend",
        "suite", "ver", "result", "HT ms", "IEC 62351"
    );
    for p in &s.suites {
        let _ = writeln!(
            o,
            "  {:<46} {:<5} {:<9} {:>8}  {:<12} {}",
            p.name,
            p.version.map(|v| v.short()).unwrap_or("-"),
            if p.accepted { "accepted" } else { "refused" },
            p.ht_ms
                .map(|h| format!("{h:.2}"))
                .unwrap_or_else(|| "-".into()),
            p.iec_status.name(),
            p.backend
        );
    }
    if !s.suites_not_tested.is_empty() {
        let _ = writeln!(
            o,
            "  not tested (no backend here offers them): {}",
            s.suites_not_tested.join(", ")
        );
    }
    let _ = writeln!(
        o,
        "\ncertificate chain (as sent{})",
        match s.chain_trusted {
            Some(true) => ", verifies against the profile's CA",
            Some(false) => ", does NOT verify against the profile's CA",
            None if !s.trust_anchors =>
                ", not verified: no CA given, every probe ran with verification off",
            None => "",
        }
    );
    if s.chain_incomplete {
        let _ = writeln!(
            o,
            "  incomplete: the server sends no intermediate certificate (RFC 5246 §7.4.2 / RFC 8446 §4.4.2)"
        );
    }
    if let Some(e) = &s.server_verification_error {
        let _ = writeln!(
            o,
            "  our check of it failed ({e}); the later probes ran with verification off"
        );
    }
    match (&s.name_check.name, s.name_check.matched) {
        (Some(n), Some(true)) => {
            let _ = writeln!(o, "  name: matches \"{n}\"");
        }
        (Some(n), Some(false)) => {
            let _ = writeln!(
                o,
                "  name: does NOT match \"{n}\" (RFC 6125 §6); the later probes ran without the name check"
            );
        }
        (Some(n), None) => {
            let _ = writeln!(o, "  name: \"{n}\" not determined (the chain failed first)");
        }
        (None, _) => {
            let _ = writeln!(
                o,
                "  name: not checked (the profile sets no verify_hostname)"
            );
        }
    }
    if let Some(n) = &s.server_name_refused {
        let _ = writeln!(
            o,
            "  server name \"{n}\" refused by the server (alert unrecognized_name, RFC 6066 §3); surveyed without SNI"
        );
    }
    for (i, c) in s.chain.iter().enumerate() {
        let _ = writeln!(o, "  [{i}] subject {}", c.subject);
        let _ = writeln!(o, "      issuer  {}", c.issuer);
        let _ = writeln!(
            o,
            "      key {} {} bits{}, signed {}, X.509 v{}, {} octets",
            c.key_type,
            c.key_bits,
            c.curve
                .as_ref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default(),
            c.signature_algorithm,
            c.x509_version,
            c.der_len
        );
        let _ = writeln!(
            o,
            "      valid {} .. {} ({})",
            c.not_before,
            c.not_after,
            if c.valid_now {
                "valid now"
            } else {
                "NOT valid now"
            }
        );
        if let Some(k) = &c.key_usage {
            let _ = writeln!(o, "      keyUsage {}", k.join(", "));
        }
        if let Some(k) = &c.extended_key_usage {
            let _ = writeln!(o, "      extendedKeyUsage {}", k.join(", "));
        }
        if !c.san.is_empty() {
            let _ = writeln!(o, "      subjectAltName {}", c.san.join(", "));
        }
    }
    let a = &s.client_auth;
    let _ = writeln!(
        o,
        "\nclient authentication (at {})",
        a.version
            .map(|v| v.to_string())
            .unwrap_or_else(|| "-".into())
    );
    let _ = writeln!(
        o,
        "  certificate required:          {}",
        yn(s.client_cert_required)
    );
    let _ = writeln!(
        o,
        "  untrusted certificate refused: {}",
        yn(s.untrusted_client_cert_refused)
    );
    let baseline = if a.profile_certificate {
        "with the profile's certificate"
    } else {
        "baseline (the profile has no certificate)"
    };
    for (what, p) in [
        (baseline, &a.baseline),
        ("without certificate", &a.without_cert),
        ("untrusted certificate", &a.untrusted_cert),
    ] {
        let _ = writeln!(
            o,
            "    {what}: handshake {}{}{}{}",
            if p.handshake { "done" } else { "failed" },
            match p.certificate_requested {
                Some(true) => ", certificate requested",
                Some(false) => ", no certificate requested",
                None => "",
            },
            p.round
                .as_ref()
                .map(|r| format!(", then {r}"))
                .unwrap_or_default(),
            p.detail
                .as_ref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(o, "\nsessions");
    let _ = writeln!(
        o,
        "  TLS 1.2 resumption by session id: {}",
        check(&s.resumption.tls12_session_id)
    );
    let _ = writeln!(
        o,
        "  TLS 1.2 resumption by ticket:     {}",
        check(&s.resumption.tls12_ticket)
    );
    let _ = writeln!(
        o,
        "  TLS 1.3 resumption by PSK:        {}",
        check(&s.resumption.tls13_psk)
    );
    let _ = writeln!(
        o,
        "  TLS 1.2 secure renegotiation (RFC 5746): {}",
        yn(s.renegotiation.secure_renegotiation)
    );
    let _ = writeln!(
        o,
        "  TLS 1.2 client-initiated renegotiation:  {}{}",
        check(&s.renegotiation.client_initiated),
        if s.renegotiation.insecure {
            " [without RFC 5746: insecure]"
        } else {
            ""
        }
    );
    let _ = writeln!(
        o,
        "  TLS 1.3 KeyUpdate:                       {}",
        check(&s.key_update)
    );
    let _ = writeln!(
        o,
        "\nverdicts (IEC 62351-3 as public sources state it; docs/tls-survey.md)"
    );
    for v in &s.verdicts {
        let _ = writeln!(
            o,
            "  {:<4} {:<24} {}: {}",
            v.level.word(),
            v.id,
            v.requirement,
            v.detail
        );
    }
    o
}
