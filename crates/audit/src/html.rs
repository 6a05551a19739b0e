//! The one-page HTML report: summary, findings by severity with their frame numbers, the
//! inventory, and per-stream inter-arrival plots as inline SVG (no script, no external file, so
//! the page can be archived as evidence and opened offline).

use crate::finding::Severity;
use crate::{Audit, Plot};
use std::fmt::Write;

pub use gander_measure::html::esc;

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map(|x| esc(&x.to_string())).unwrap_or_default()
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;max-width:1200px}\
table{border-collapse:collapse;margin-bottom:1em;font-size:90%}\
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}\
th{background:#eee}.high{background:#f8d0d0}.medium{background:#fbe3c0}\
.low{background:#fbf6c8}.info{background:#e6eef8}svg{border:1px solid #ccc;background:#fff}\
code{font-size:90%}";

/// The report.
pub fn render(audit: &Audit, title: &str) -> String {
    let mut h = String::new();
    let s = &audit.summary;
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gander audit: {}</title><style>{STYLE}</style></head><body>\n",
        esc(title)
    );
    let _ = writeln!(h, "<h1>gander audit: {}</h1>", esc(title));
    let worst = audit.worst().map(Severity::word).unwrap_or("none");
    let _ = writeln!(
        h,
        "<p id=\"summary\">{} frames, {:.3} s of capture; {} streams; {} findings, worst <b>{}</b> (exit code {}); tags {}; profile {}.</p>",
        s.frames,
        s.last_ts_ns.saturating_sub(s.first_ts_ns) as f64 / 1e9,
        audit.streams.len(),
        audit.findings.len(),
        worst,
        audit.exit_code(),
        if s.verified_with_keys { "verified with the given keys" } else { "not verified (no keys)" },
        esc(s.profile)
    );
    if let Some(d) = s.kernel_drops {
        let _ = writeln!(
            h,
            "<p id=\"drops\">Live capture: {d} frames dropped by the kernel before the audit read them{}.</p>",
            if d > 0 { " <b>(the audit is incomplete)</b>" } else { "" }
        );
    }
    h.push_str("<table id=\"kinds\"><tr>");
    for k in s.kinds.keys() {
        let _ = write!(h, "<th>{}</th>", esc(k));
    }
    h.push_str("</tr><tr>");
    for n in s.kinds.values() {
        let _ = write!(h, "<td>{n}</td>");
    }
    h.push_str("</tr></table>\n<h2>Findings</h2>\n");
    if audit.findings.is_empty() {
        h.push_str("<p>None.</p>\n");
    } else {
        h.push_str("<table id=\"findings\"><tr><th>severity</th><th>code</th><th>stream</th><th>count</th><th>frames</th><th>detail</th></tr>\n");
        for f in &audit.findings {
            let frames: Vec<String> = f.frames.iter().map(u64::to_string).collect();
            let more = if f.count > f.frames.len() as u64 {
                " ..."
            } else {
                ""
            };
            let _ = writeln!(
                h,
                "<tr class=\"{sev}\"><td>{sev}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}{more}</td><td>{}</td></tr>",
                esc(&f.code),
                opt(&f.stream),
                f.count,
                frames.join(" "),
                esc(&f.detail),
                sev = f.severity.word()
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("<h2>Inventory</h2>\n<table id=\"inventory\"><tr><th>uid</th><th>kind</th><th>source</th><th>destination</th><th>VLAN/prio</th><th>APPID</th><th>gocbRef / svID</th><th>datSet</th><th>confRev</th><th>frames</th><th>rate/s</th><th>security</th><th>keys</th><th>algorithm</th><th>inter-arrival p50/p99/max ms</th><th>class</th></tr>\n");
    for st in &audit.streams {
        let src = match (&st.src_ip, st.src_port) {
            (Some(ip), Some(p)) => format!("{} {ip}:{p}", st.src_mac),
            _ => st.src_mac.clone(),
        };
        let dst = match (&st.dst_ip, st.dst_port) {
            (Some(ip), Some(p)) => format!("{} {ip}:{p}", st.dst_mac),
            _ => st.dst_mac.clone(),
        };
        let vlan = match (st.vlan, st.priority) {
            (Some(v), Some(p)) => format!("{v}/{p}"),
            _ => String::new(),
        };
        let alg = match (st.mac, st.enc) {
            (Some(m), Some(e)) => format!("{m} / {e}"),
            _ => st
                .mac_len
                .map(|l| format!("{l}-octet mAC"))
                .unwrap_or_default(),
        };
        let keys: Vec<String> = st.key_ids.iter().map(u32::to_string).collect();
        let (arr, class) = match &st.arrival {
            Some(a) => (
                format!("{:.3} / {:.3} / {:.3}", a.p50_ms, a.p99_ms, a.max_ms),
                a.class.unwrap_or("beyond TT1").to_string(),
            ),
            None => (String::new(), String::new()),
        };
        let _ = writeln!(
            h,
            "<tr><td><a href=\"#plot-{uid}\">{uid}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{vlan}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{arr}</td><td>{class}</td></tr>",
            st.kind,
            esc(&src),
            esc(&dst),
            st.appid.map(|a| format!("0x{a:04x}")).unwrap_or_default(),
            opt(&st.id),
            opt(&st.dat_set),
            opt(&st.conf_rev),
            if st.cut_by_capture > 0 {
                format!("{} ({} cut by the capture)", st.frames, st.cut_by_capture)
            } else {
                st.frames.to_string()
            },
            st.rate_per_s,
            st.security,
            keys.join(" "),
            esc(&alg),
            uid = esc(&st.uid),
        );
    }
    h.push_str("</table>\n<h2>MMS associations</h2>\n");
    if audit.associations.is_empty() {
        h.push_str("<p>None.</p>\n");
    } else {
        h.push_str("<table id=\"associations\"><tr><th>uid</th><th>client</th><th>server</th><th>transport</th><th>frames</th><th>first</th><th>TLS version</th><th>suite</th><th>group</th><th>client cert</th><th>resumed</th><th>server chain</th><th>IEC 62351-3 verdicts</th></tr>\n");
        for a in &audit.associations {
            let t = a.tls.as_ref();
            let verdicts: Vec<String> = t
                .map(|t| {
                    t.verdicts
                        .iter()
                        .map(|(id, l, d)| format!("{l} {id}: {d}"))
                        .collect()
                })
                .unwrap_or_default();
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&a.uid),
                esc(&a.client),
                esc(&a.server),
                a.transport,
                a.frames,
                a.first_frame,
                t.map(|t| t.version).unwrap_or(""),
                t.map(|t| esc(&t.suite)).unwrap_or_default(),
                t.and_then(|t| t.group.clone()).map(|g| esc(&g)).unwrap_or_default(),
                t.and_then(|t| t.client_cert_sent).map(|b| if b { "sent" } else { "none" }).unwrap_or(""),
                t.and_then(|t| t.resumed).map(|b| if b { "yes" } else { "no" }).unwrap_or(""),
                t.map(|t| esc(&t.chain.join(" | "))).unwrap_or_default(),
                esc(&verdicts.join("; ")),
            );
        }
        h.push_str("</table>\n");
    }
    gdoi_section(&mut h, audit);
    h.push_str("<h2>Inter-arrival per stream</h2>\n<p>Gap before each frame (log scale, ms) over capture time; red lines: GOOSE state changes.</p>\n");
    for p in &audit.plots {
        h.push_str(&plot(
            p,
            audit.summary.first_ts_ns,
            audit.summary.last_ts_ns,
        ));
    }
    h.push_str("</body></html>\n");
    h
}

/// TEKs as `key id:MAC/encryption`, comma-separated.
fn teks(t: &[crate::gdoi_decrypt::TekInfo]) -> String {
    t.iter()
        .map(|k| k.algorithms())
        .collect::<Vec<_>>()
        .join(", ")
}

/// GDOI on UDP 848 (IEC 62351-9): registrations and rekey SAs, only when the capture has any.
fn gdoi_section(h: &mut String, audit: &Audit) {
    if audit.registrations.is_empty() && audit.rekeys.is_empty() {
        return;
    }
    h.push_str("<h2>GDOI key management (UDP 848)</h2>\n<table id=\"gdoi\"><tr><th>uid</th><th>exchange</th><th>from</th><th>to</th><th>SPI</th><th>messages</th><th>outcome</th><th>group</th><th>SEQ</th><th>TEKs (key id:MAC/encryption)</th><th>frames</th></tr>\n");
    for r in &audit.registrations {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>GROUPKEY-PULL</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}-{}</td></tr>",
            esc(&r.uid), esc(&r.member), esc(&r.key_server), esc(&r.cookies), r.messages, r.outcome,
            esc(r.group.as_deref().unwrap_or("")), r.seq.map(|s| s.to_string()).unwrap_or_default(), esc(&teks(&r.teks)), r.first_frame, r.last_frame
        );
    }
    for g in &audit.rekeys {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>GROUPKEY-PUSH</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} replayed</td><td>{}</td><td>{}</td><td>{}</td><td>{}-{}</td></tr>",
            esc(&g.uid), esc(&g.key_server), esc(&g.destination), esc(&g.kek_spi), g.pushes, g.replayed,
            esc(g.group.as_deref().unwrap_or("")), g.seqs.iter().map(u32::to_string).collect::<Vec<_>>().join(", "), esc(&teks(&g.teks)), g.first_frame, g.last_frame
        );
    }
    h.push_str("</table>\n");
}

/// One stream's plot: log-scale gap (ms) over capture time.
fn plot(p: &Plot, t0: u64, t1: u64) -> String {
    const W: f64 = 600.0;
    const H: f64 = 160.0;
    const L: f64 = 50.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<figure id=\"plot-{uid}\"><figcaption>{uid}</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"inter-arrival of {uid}\">",
        W + L + 10.0,
        H + 20.0,
        W + L + 10.0,
        H + 20.0,
        uid = esc(&p.uid)
    );
    let span = t1.saturating_sub(t0).max(1) as f64;
    let x = |t: u64| L + W * (t.saturating_sub(t0) as f64 / span);
    // y: log10(ms) from 1 µs (-3) to 10 s (4).
    let y = |ns: u64| {
        let ms = (ns as f64 / 1e6).max(1e-3);
        H - H * ((ms.log10() + 3.0) / 7.0).clamp(0.0, 1.0)
    };
    for (label, ns) in [
        ("1 µs", 1_000u64),
        ("1 ms", 1_000_000),
        ("1 s", 1_000_000_000),
    ] {
        let _ = write!(
            s,
            "<line x1=\"{L}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"2\" y=\"{:.1}\" font-size=\"10\">{label}</text>",
            L + W,
            y(ns) + 3.0,
            y = y(ns)
        );
    }
    for &t in &p.state_changes {
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"0\" y2=\"{H}\" stroke=\"#d33\" stroke-width=\"0.5\"/>",
            x = x(t)
        );
    }
    for &(t, g) in &p.points {
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"1.2\" fill=\"#236\"/>",
            x(t),
            y(g)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{L}\" y=\"{}\" font-size=\"10\">{} points</text></svg></figure>",
        H + 15.0,
        p.points.len()
    );
    s
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn markup_in_peer_strings_is_escaped() {
        assert_eq!(
            esc("<script>\"a\"&'b'</script>"),
            "&lt;script&gt;&quot;a&quot;&amp;&#39;b&#39;&lt;/script&gt;"
        );
    }
}
