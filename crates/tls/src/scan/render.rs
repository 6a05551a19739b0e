//! The scan as text, for `gander tls survey` (the JSON is the serialised [`ScanReport`]).
use super::enumerate::extension_name;
use super::{ProtocolVersion, ScanReport, WeaknessState};
use std::fmt::Write;

/// Renders the scan's sections: versions with every accepted suite, groups, preference
/// order, weaknesses. The verdicts are printed with the survey's.
pub fn render(r: &ScanReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nscan: every IANA suite and group per version ({} connections, {:.1} s{})",
        r.connections,
        r.duration_s,
        if r.capped {
            ", stopped early: connection cap or the server stopped accepting"
        } else {
            ""
        }
    );
    let _ = writeln!(
        o,
        "  SSLv2: {}",
        if r.sslv2.accepted {
            format!("ACCEPTED ({})", r.sslv2.ciphers.join(", "))
        } else {
            format!(
                "refused ({})",
                r.sslv2.refusal.as_deref().unwrap_or("no answer")
            )
        }
    );
    for v in &r.versions {
        if !v.accepted {
            let _ = writeln!(
                o,
                "  {}: refused ({})",
                v.version.name(),
                v.refusal.as_deref().unwrap_or("no answer")
            );
            continue;
        }
        let order = match v.server_order {
            Some(true) => "server's order",
            Some(false) => "client's order",
            None => "order not determined",
        };
        let _ = writeln!(
            o,
            "  {}: {} suites, {order}{}",
            v.version.name(),
            v.suites.len(),
            if v.incomplete { " (incomplete)" } else { "" }
        );
        for s in &v.suites {
            let mut flags = Vec::new();
            for (on, f) in [
                (s.anonymous, "ANONYMOUS"),
                (s.null, "NULL"),
                (s.export, "EXPORT"),
                (s.rc4, "RC4"),
                (s.des, "DES"),
                (s.triple_des, "3DES"),
            ] {
                if on {
                    flags.push(f);
                }
            }
            let line = format!("    0x{:04X} {:<48} {}", s.code, s.name, flags.join(" "));
            let _ = writeln!(o, "{}", line.trim_end());
        }
        if !v.groups.is_empty() {
            let g: Vec<&str> = v.groups.iter().map(|g| g.name.as_str()).collect();
            let _ = writeln!(o, "    groups: {}", g.join(", "));
        }
        if let Some(p) = &v.dh_prime {
            let _ = writeln!(
                o,
                "    DHE prime: {} bits{}",
                p.bits,
                p.family
                    .as_ref()
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default()
            );
        }
        if !v.signature_classes.is_empty() {
            let k: Vec<String> = v
                .signature_classes
                .iter()
                .map(|c| format!("{} {}", c.auth, if c.accepted { "yes" } else { "no" }))
                .collect();
            let _ = writeln!(
                o,
                "    signature classes (one handshake each): {}",
                k.join(", ")
            );
        }
        let what = if v.version == ProtocolVersion::Tls13 {
            "signatures"
        } else {
            "suites"
        };
        for c in &v.certificates {
            let _ =
                writeln!(
                o,
                "    certificate for {} {what}: {}, key {} {} bits, signed {}, valid until {}{}",
                c.auth,
                c.cert.subject,
                c.cert.key_type,
                c.cert.key_bits,
                c.cert.signature_algorithm,
                c.cert.not_after,
                if c.cert.valid_now { "" } else { " (NOT valid now)" }
            );
        }
        if !v.server_hello_extensions.is_empty() {
            let e: Vec<String> = v
                .server_hello_extensions
                .iter()
                .map(|t| match extension_name(*t) {
                    "other" => format!("{t}"),
                    n => n.to_string(),
                })
                .collect();
            let _ = writeln!(o, "    ServerHello extensions: {}", e.join(", "));
        }
    }
    let _ = writeln!(o, "  weaknesses:");
    for w in &r.weaknesses {
        let state = match w.state {
            WeaknessState::Vulnerable => "WEAK",
            WeaknessState::NotVulnerable => "ok",
            WeaknessState::NotTested => "not tested",
            WeaknessState::Undetermined => "undetermined",
        };
        let _ = writeln!(o, "    {:<28} {:<12} {}", w.id, state, w.detail);
    }
    o
}
