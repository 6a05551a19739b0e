//! The "RT accounting" table of `summary.md` and `report.html`: where each accounted row's RT
//! over TLS goes ([`crate::rt_accounting`]), in microseconds.
use crate::results::ScenarioResult;
use crate::rt_accounting::RtAccounting;
use std::fmt::Write;

const HEAD: [&str; 13] = [
    "case",
    "backend",
    "RT",
    "transport (cleartext RT)",
    "record crypto",
    "library",
    "gander",
    "gander/RT",
    "gander with the library's warm cost",
    "record octets",
    "writes/report",
    "RT/cleartext",
    "RT/cleartext, library only",
];

const HOW: &str = "transport = median RT of the same exchange in cleartext, interleaved with the TLS blocks; \
record crypto = AEAD seal + open of one record of the report's size with the row's provider; \
library = in-memory record round trip (server write + client read of the same backend objects in one thread) \
- the same octets over a plain loopback pair - record crypto; gander = RT - transport - in-memory record round trip \
(what the run adds around the record that cleartext does not have); the in-memory records are paced one per report period \
as in the run; with them back to back (the library's warm cost) the rest is the next column: gander's own lies between the two.";

fn rows(scenarios: &[ScenarioResult]) -> Vec<(&str, &str, &RtAccounting)> {
    scenarios
        .iter()
        .filter_map(|r| {
            r.rt_accounting
                .as_ref()
                .map(|a| (r.name.as_str(), r.backend.as_str(), a))
        })
        .collect()
}

fn cells(a: &RtAccounting) -> [String; 11] {
    let us = |ms: f64| format!("{:.1}", ms * 1e3);
    [
        us(a.rt_ms),
        us(a.transport_ms),
        a.crypto_ms
            .map_or_else(|| "-".into(), |c| format!("{:.2}", c * 1e3)),
        us(a.library_ms),
        us(a.gander_ms),
        format!("{:.1}%", a.gander_share * 100.0),
        us(a.gander_warm_ms),
        a.record_bytes.to_string(),
        a.writes_max.to_string(),
        format!("{:.3}x", a.rt_over_cleartext),
        format!("{:.3}x", a.tls_only_ratio),
    ]
}

/// The Markdown table (nothing without an accounted row).
pub fn md(o: &mut String, scenarios: &[ScenarioResult]) {
    let rows = rows(scenarios);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\n## RT accounting (us, medians)\n\n{HOW}\n\n| {} |\n|{}",
        HEAD.join(" | "),
        "---|".repeat(HEAD.len())
    );
    for (name, backend, a) in rows {
        let _ = writeln!(o, "| {name} | {backend} | {} |", cells(a).join(" | "));
    }
}

/// The HTML section (nothing without an accounted row).
pub fn html(o: &mut String, scenarios: &[ScenarioResult]) {
    use super::html::esc;
    let rows = rows(scenarios);
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<h2 id=\"rt-accounting\">RT accounting (us, medians)</h2><p class=\"note\">{}</p><table id=\"rt-accounting-table\"><thead><tr>",
        esc(HOW)
    );
    for (i, h) in HEAD.iter().enumerate() {
        let class = if i < 2 { " class=\"l\"" } else { "" };
        let _ = write!(o, "<th{class}>{}</th>", esc(h));
    }
    o.push_str("</tr></thead><tbody>");
    for (name, backend, a) in rows {
        let _ = write!(
            o,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td>",
            esc(name),
            esc(backend)
        );
        for c in cells(a) {
            let _ = write!(o, "<td>{}</td>", esc(&c));
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rt_accounting::{compose, RowRt};

    #[test]
    fn rows_without_accounting_render_nothing_and_accounted_rows_every_part() {
        let mut r = crate::results::tests::result("libraries/iv-rustls");
        let (mut md_out, mut html_out) = (String::new(), String::new());
        md(&mut md_out, std::slice::from_ref(&r));
        html(&mut html_out, std::slice::from_ref(&r));
        assert!(md_out.is_empty() && html_out.is_empty());
        let row = RowRt {
            rt_ms: 0.060,
            clear_ms: 0.050,
            writes: &[[148, 1]],
        };
        r.rt_accounting = Some(compose(
            row,
            148,
            1,
            Some((1_000, "ring")),
            16_000,
            10_000,
            200,
        ));
        md(&mut md_out, std::slice::from_ref(&r));
        html(&mut html_out, std::slice::from_ref(&r));
        // RT 60.0 = transport 50.0 + crypto 1.00 + library 5.0 + gander 4.0 (us).
        assert!(
            md_out.contains("| libraries/iv-rustls | ")
                && md_out.contains(
                    "| 60.0 | 50.0 | 1.00 | 5.0 | 4.0 | 6.7% | 4.0 | 148 | 1 | 1.200x | 1.120x |"
                ),
            "{md_out}"
        );
        assert!(html_out.contains("<td>4.0</td>") && html_out.contains("rt-accounting-table"));
    }
}
