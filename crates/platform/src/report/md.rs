//! `summary.md`: the run's tables in Markdown, for a terminal or a pull request.
use super::{
    ms, pct, pq_cells, ratio, row_label, status_text, table_rows, table_var, verdict, PQ_HEADINGS,
};
use crate::results::RunResults;
use std::fmt::Write;

/// Renders `summary.md`.
pub fn summary_md(run: &RunResults) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# gander run: {}{}\n",
        run.scenario,
        if run.quick { " (--quick)" } else { "" }
    );
    let _ = writeln!(o, "{}\n", run.description);
    let m = &run.machine;
    let _ = writeln!(
        o,
        "Machine: {} ({}, {} CPUs), Linux {}, load {}; {} build. Duration {:.1} s.\n",
        m["hostname"].as_str().unwrap_or("?"),
        m["cpu_model"].as_str().unwrap_or("?"),
        m["cores"],
        m["kernel"].as_str().unwrap_or("?"),
        m["loadavg"],
        m["build_profile"].as_str().unwrap_or("?"),
        run.duration_s
    );
    for (k, v) in &run.libraries {
        let _ = writeln!(o, "- TLS library `{k}`: {v}");
    }
    let _ = writeln!(o, "- Floors timed with: {}", run.floor_library);
    let _ = writeln!(
        o,
        "- Verdicts: RT p99 against {} ({} ms: {})\n",
        run.class.class, run.class.limit_ms, run.class.applies_to
    );
    let _ = writeln!(
        o,
        "## Targets\n\n| target | case | ratio | limit | verdict | how judged, spread |\n|---|---|---|---|---|---|"
    );
    for t in &run.targets {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {}x | {} | {} |",
            t.what,
            t.case.as_deref().unwrap_or("-"),
            ratio(t.ratio),
            t.limit,
            t.verdict,
            t.detail
        );
    }
    accounting_table(&mut o, run);
    super::rt_table::md(&mut o, &run.scenarios);
    interarrival_table(&mut o, run);
    let controls: Vec<_> = run
        .scenarios
        .iter()
        .filter_map(|r| {
            let c = r.control.as_ref()?;
            let transport = match r.tls_version.as_str() {
                "none" => "cleartext".to_string(),
                v => format!("TLS {v} {}", r.backend),
            };
            Some((r.name.clone(), transport, c))
        })
        .collect();
    o.push_str(&crate::control_rows::markdown(&controls));
    for t in &run.tables {
        let rows = table_rows(run, &t.id);
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n## {}\n", t.title);
        if t.layout == "pq" {
            let _ = writeln!(o, "| {} |", PQ_HEADINGS.join(" | "));
            let _ = writeln!(o, "|{}", "---|".repeat(PQ_HEADINGS.len()));
            for r in rows {
                let _ = writeln!(o, "| {} |", pq_cells(run, r, &t.row_label).join(" | "));
            }
            continue;
        }
        if t.layout == "sandia" {
            let _ = writeln!(o, "| case | payload | n | mean diff (ms) | sd diff (ms) | TLS median (ms) | clear median (ms) |\n|---|---|---|---|---|---|---|");
            for r in rows {
                let d = r.rt_diff.as_ref();
                let _ = writeln!(
                    o,
                    "| {} | {} B | {} | {} | {} | {} | {} |",
                    row_label(r, "sandia"),
                    r.payload,
                    d.map(|d| d.n).unwrap_or(0),
                    ms(d.map(|d| d.mean_ms)),
                    ms(d.map(|d| d.sd_ms)),
                    ms(r.rt.as_ref().map(|s| s.median_ms)),
                    ms(r.rt_cleartext_median_ms)
                );
            }
            continue;
        }
        let _ = writeln!(o, "| CYPHER S. | backend | HT mean | HT sd | HT VAR | HT floor | HT/floor | RT mean | RT sd | RT VAR | RT/clear | verdict | status |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for r in rows {
            let reference = t.reference.as_deref();
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                row_label(r, &t.row_label),
                r.backend,
                ms(r.ht.as_ref().map(|s| s.mean_ms)),
                ms(r.ht.as_ref().map(|s| s.sd_ms)),
                pct(table_var(run, reference, r, true)),
                ms(r.ht_floor_ms),
                ratio(r.ht_floor_ratio),
                ms(r.rt.as_ref().map(|s| s.mean_ms)),
                ms(r.rt.as_ref().map(|s| s.sd_ms)),
                pct(table_var(run, reference, r, false)),
                ratio(r.rt_cleartext_ratio),
                verdict(run, r),
                status_text(r)
            );
        }
    }
    if !run.notes.is_empty() {
        let _ = writeln!(o, "\n## Notes\n");
        for n in &run.notes {
            let _ = writeln!(o, "- {n}");
        }
    }
    o
}

/// Where HT goes, per accounted row (`crate::accounting`), ms.
fn accounting_table(o: &mut String, run: &RunResults) {
    let rows: Vec<_> = run
        .scenarios
        .iter()
        .filter_map(|r| r.ht_accounting.as_ref().map(|a| (r, a)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\n## HT accounting (ms, medians)\n\nbare = one handshake of the same library, suite and keys in one thread; library = bare - floor; transport = TCP connect + application round trips x the measured COTP CR/CC round trip; gander = MMS association + event log + connection thread; rest = HT - bare - transport - gander (two processes, scheduler, record layer); HT/(bare+transport) = the median over connections of each one's HT over bare + its own transport.\n\n| case | backend | HT | floor | library | bare | transport (TCP + RTT x n) | gander | rest | gander/HT | HT/(bare+transport) |\n|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (r, a) in rows {
        let _ = writeln!(
            o,
            "| {} | {} | {:.3} | {} | {} | {:.3} | {:.3} ({:.3} + {:.3} x {}) | {:.3} | {:.3} | {:.1}% | {:.2}x |",
            r.name,
            r.backend,
            a.ht_ms,
            a.floor_ms.map_or("-".into(), |x| format!("{x:.3}")),
            a.library_ms.map_or("-".into(), |x| format!("{x:.3}")),
            a.bare_ms,
            a.transport_ms,
            a.tcp_rtt_ms,
            a.app_rtt_ms,
            a.flights,
            a.gander_ms,
            a.rest_ms,
            a.gander_share * 100.0,
            a.ht_over_bare_transport
        );
    }
}

/// Client-side report timing of rows run against an external target (no server clock).
fn interarrival_table(o: &mut String, run: &RunResults) {
    let rows: Vec<_> = run
        .scenarios
        .iter()
        .filter_map(|r| r.report_interarrival.as_ref().map(|g| (r, g)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\n## Reports seen by the client (ms)\n\nRT needs the server's clock; against an external target the client measures the time between reports instead (jitter = its standard deviation), and the round trip of a Read of the control block's data set; with clocks declared synchronised, the one-way time against each report's own timestamp.\n\n| case | HT median | read RTT median (n) | reports | inter-arrival median | mean | jitter (sd) | min | max | one-way median |\n|---|---|---|---|---|---|---|---|---|---|"
    );
    for (r, g) in rows {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} |",
            r.name,
            r.ht.as_ref()
                .map_or("-".into(), |h| format!("{:.3}", h.median_ms)),
            r.read_rtt
                .as_ref()
                .map_or("-".into(), |h| format!("{:.3} ({})", h.median_ms, h.n)),
            g.n + 1,
            g.median_ms,
            g.mean_ms,
            g.sd_ms,
            g.min_ms,
            g.max_ms,
            r.report_one_way
                .as_ref()
                .map_or("-".into(), |w| format!("{:.3}", w.median_ms))
        );
    }
}
