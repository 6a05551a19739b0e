//! Outputs of a run: `samples.csv` ([`csv`]), `summary.md` ([`md`]) and `report.html` ([`html`]).
//! All three are rendered from [`crate::results::RunResults`], so `gander report DIR` can
//! re-render them from `results.json` and the per-case files.
pub mod csv;
pub mod html;
pub mod md;
pub mod rt_table;

use crate::results::{write_atomic, ResultsError, RunResults, ScenarioResult};
use std::path::{Path, PathBuf};

/// Writes `results.json`, `samples.csv`, `summary.md` and `report.html` under `dir`; returns
/// the report's path.
pub fn write_all(run: &RunResults, dir: &Path) -> Result<PathBuf, ResultsError> {
    run.save(dir)?;
    write_atomic(&dir.join("samples.csv"), csv::samples_csv(run).as_bytes())?;
    write_atomic(&dir.join("summary.md"), md::summary_md(run).as_bytes())?;
    let report = dir.join("report.html");
    write_atomic(&report, html::report_html(run).as_bytes())?;
    Ok(report)
}

/// The row label of a case in a table with `row_label` style.
pub fn row_label(r: &ScenarioResult, style: &str) -> String {
    let suite = || {
        r.rse_label
            .as_ref()
            .map(|l| format!("{l}.)"))
            .or_else(|| r.sandia_label.clone())
            .unwrap_or_else(|| r.cipher_suite.clone())
    };
    match style {
        "suite" => suite(),
        // Sandia Table 2 names suites CS1..CS7 first.
        "sandia" => r.sandia_label.clone().unwrap_or_else(suite),
        "version" => format!("{} (TLS v{})", suite(), r.tls_version),
        "key" => format!("{} ({}b keys)", suite(), r.key.trim_start_matches("rsa")),
        "library" => format!("{} on {}", suite(), r.library),
        _ => r.name.clone(),
    }
}

/// Rows of a table, ordered by TLS version, then key size (stable: file order otherwise).
pub fn table_rows<'a>(run: &'a RunResults, id: &str) -> Vec<&'a ScenarioResult> {
    let mut rows: Vec<&ScenarioResult> = run
        .scenarios
        .iter()
        .filter(|s| s.tables.iter().any(|t| t == id))
        .collect();
    let key_bits = |k: &str| k.trim_start_matches("rsa").parse::<u32>().unwrap_or(0);
    let spec = run.tables.iter().find(|t| t.id == id);
    match spec.map(|s| s.row_label.as_str()) {
        Some("version") => rows.sort_by(|a, b| a.tls_version.cmp(&b.tls_version)),
        Some("key") => rows.sort_by_key(|r| key_bits(&r.key)),
        _ => {}
    }
    rows
}

/// VAR% of `x` against the table's reference case (or the case's own reference).
pub fn table_var(
    run: &RunResults,
    table_ref: Option<&str>,
    r: &ScenarioResult,
    ht: bool,
) -> Option<f64> {
    let pick = |s: &ScenarioResult| {
        if ht {
            s.ht.as_ref().map(|x| x.mean_ms)
        } else {
            s.rt.as_ref().map(|x| x.mean_ms)
        }
    };
    match table_ref {
        Some(name) => {
            let reference = run.scenarios.iter().find(|s| s.name == name)?;
            crate::results::var_pct(pick(r)?, pick(reference)?)
        }
        None => {
            if ht {
                r.ht.as_ref()?.var_pct
            } else {
                r.rt.as_ref()?.var_pct
            }
        }
    }
}

/// `12.345` with three decimals, `-` for none.
pub fn ms(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into())
}

/// `+12.34%`, `-` for none.
pub fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{v:+.2}%")).unwrap_or_else(|| "-".into())
}

/// `1.23x`, `-` for none.
pub fn ratio(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}x")).unwrap_or_else(|| "-".into())
}

/// Verdict of a case's RT p99 against the run's class.
pub fn verdict(run: &RunResults, r: &ScenarioResult) -> String {
    match &r.rt {
        Some(rt) if rt.p99_ms <= run.class.limit_ms => {
            format!("ok ({} {} ms)", run.class.class, run.class.limit_ms)
        }
        Some(_) => format!("over ({} {} ms)", run.class.class, run.class.limit_ms),
        None => "-".into(),
    }
}

/// HT p99 against the run's transfer-time class: whether a connection set up (or re-established
/// after a failover) completes within the time the class allows a message. IEC 61850-5 gives
/// no separate budget for association set-up; this is the strictest reading (docs/pq.md).
pub fn verdict_ht(run: &RunResults, r: &ScenarioResult) -> String {
    match &r.ht {
        Some(ht) if ht.p99_ms <= run.class.limit_ms => {
            format!("ok ({} {} ms)", run.class.class, run.class.limit_ms)
        }
        Some(_) => format!("over ({} {} ms)", run.class.class, run.class.limit_ms),
        None => "-".into(),
    }
}

/// `ok`, `skipped: why` or `FAILED: why`.
pub fn status_text(r: &ScenarioResult) -> String {
    match r.status.as_str() {
        "ok" => "ok".into(),
        "skipped" => format!("skipped: {}", r.skip_reason.as_deref().unwrap_or("?")),
        _ => format!("FAILED: {}", r.error.as_deref().unwrap_or("?")),
    }
}

/// Column headings of the `pq` layout.
pub const PQ_HEADINGS: [&str; 13] = [
    "case",
    "backend",
    "certificate",
    "group (negotiated)",
    "HT median (ms)",
    "HT p99 (ms)",
    "HT floor (ms)",
    "HT/floor",
    "client→server (B)",
    "server→client (B)",
    "RT median (ms)",
    "HT verdict",
    "status",
];

/// One row of the `pq` layout (see [`PQ_HEADINGS`]).
pub fn pq_cells(run: &RunResults, r: &ScenarioResult, style: &str) -> [String; 13] {
    let b = r.handshake_bytes.as_ref();
    let group = match (&r.group, &r.negotiated_group) {
        (_, Some(n)) => n.clone(),
        (Some(g), None) => format!("{g} (asked)"),
        (None, None) => "-".into(),
    };
    [
        row_label(r, style),
        r.backend.clone(),
        r.key.clone(),
        group,
        ms(r.ht.as_ref().map(|s| s.median_ms)),
        ms(r.ht.as_ref().map(|s| s.p99_ms)),
        ms(r.ht_floor_ms),
        ratio(r.ht_floor_ratio),
        b.map(|b| b.client_to_server.to_string())
            .unwrap_or_else(|| "-".into()),
        b.map(|b| b.server_to_client.to_string())
            .unwrap_or_else(|| "-".into()),
        ms(r.rt.as_ref().map(|s| s.median_ms)),
        verdict_ht(run, r),
        status_text(r),
    ]
}
