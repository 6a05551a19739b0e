//! `report.html`: one self-contained page (no scripts, fonts or styles from elsewhere; charts are
//! inline SVG drawn here). Sections: what ran where (machine, libraries, parameters, emulator),
//! the targets, one table per scenario table laid out like the RSE paper's Tables 1-6 or Sandia's
//! Table 2, HT histograms like the RSE Figures 1-3, HT sub-step bars (TCP, TLS, MMS), RT CDFs,
//! floors with their operation counts, and every case's full statistics.

use super::{ms, pct, ratio, row_label, table_rows, table_var, verdict};
use crate::results::{RunResults, ScenarioResult};
use std::fmt::Write;

pub use gander_measure::html::esc;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px}th,td{border:1px solid #bbb;padding:3px 7px;text-align:right}
th{background:#eee}td.l,th.l{text-align:left}tr.failed td{background:#fdd}.ok{color:#070}.over,.missed{color:#b00;font-weight:bold}
.met{color:#070;font-weight:bold}figure{display:inline-block;margin:.4em 1em .8em 0;vertical-align:top}
figcaption{font-size:12px;color:#444;max-width:460px}svg text{font-size:10px;fill:#333}code{background:#f4f4f4}
.note{color:#555;font-size:13px}";

const COLORS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Kept samples in ms (warm-up removed).
fn kept_ms(r: &ScenarioResult, which: &str) -> Vec<f64> {
    let Some(s) = &r.samples else { return vec![] };
    let v = match which {
        "ht" => &s.ht,
        "rt" => &s.rt,
        _ => &s.rt_clear,
    };
    let w = (r.warmup as usize).min(v.len());
    v[w..].iter().map(|x| *x as f64 / 1e6).collect()
}

/// A histogram of `v` (ms) with `bins` bins, as an SVG element.
pub fn histogram_svg(v: &[f64], title: &str, bins: usize) -> String {
    let (w, h, ml, mb) = (440.0, 200.0, 40.0, 30.0);
    let mut o = format!(
        r#"<svg class="chart hist" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{}">"#,
        esc(title)
    );
    if v.is_empty() {
        o.push_str(r#"<text x="20" y="100">no samples</text></svg>"#);
        return o;
    }
    let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
    // Clip the axis at p99 so one outlier does not flatten the shape; the tail is counted in the last bin.
    let mut sorted = v.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let hi = sorted[((sorted.len() as f64 * 0.99).ceil() as usize).clamp(1, sorted.len()) - 1]
        .max(lo + 1e-6);
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0usize; bins];
    for x in v {
        let i = (((x - lo) / width) as usize).min(bins - 1);
        counts[i] += 1;
    }
    let max = *counts.iter().max().unwrap_or(&1) as f64;
    let (pw, ph) = (w - ml - 10.0, h - mb - 10.0);
    let bw = pw / bins as f64;
    for (i, c) in counts.iter().enumerate() {
        let bh = *c as f64 / max * ph;
        let _ = write!(
            o,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#4477aa"><title>{:.3}-{:.3} ms: {c}</title></rect>"##,
            ml + i as f64 * bw,
            10.0 + ph - bh,
            (bw - 1.0).max(0.5),
            bh,
            lo + i as f64 * width,
            lo + (i + 1) as f64 * width
        );
    }
    axes(&mut o, ml, 10.0, pw, ph, lo, hi, &format!("{max:.0}"), "ms");
    o.push_str("</svg>");
    o
}

#[allow(clippy::too_many_arguments)] // plot geometry: origin, size, value range, labels
fn axes(
    o: &mut String,
    x: f64,
    y: f64,
    pw: f64,
    ph: f64,
    lo: f64,
    hi: f64,
    ytop: &str,
    unit: &str,
) {
    let _ = write!(
        o,
        r##"<line x1="{x}" y1="{}" x2="{}" y2="{}" stroke="#333"/><line x1="{x}" y1="{y}" x2="{x}" y2="{}" stroke="#333"/>"##,
        y + ph,
        x + pw,
        y + ph,
        y + ph
    );
    for k in 0..=4 {
        let t = lo + (hi - lo) * k as f64 / 4.0;
        let _ = write!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x + pw * k as f64 / 4.0,
            y + ph + 13.0,
            fmt_axis(t)
        );
    }
    let _ = write!(
        o,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{unit}</text><text x="{:.1}" y="{:.1}" text-anchor="end">{ytop}</text>"#,
        x + pw,
        y + ph + 26.0,
        x - 3.0,
        y + 8.0
    );
}

fn fmt_axis(t: f64) -> String {
    if t.abs() >= 100.0 {
        format!("{t:.0}")
    } else if t.abs() >= 1.0 {
        format!("{t:.2}")
    } else {
        format!("{t:.3}")
    }
}

/// Cumulative distribution lines, one per series (name, samples in ms).
pub fn cdf_svg(series: &[(String, Vec<f64>)], title: &str) -> String {
    let (w, h, ml, mb) = (560.0, 260.0, 40.0, 30.0);
    let mut o = format!(
        r#"<svg class="chart cdf" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{}">"#,
        esc(title)
    );
    let all: Vec<f64> = series.iter().flat_map(|s| s.1.iter().cloned()).collect();
    if all.is_empty() {
        o.push_str(r#"<text x="20" y="100">no samples</text></svg>"#);
        return o;
    }
    let mut sorted_all = all.clone();
    sorted_all.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let lo = sorted_all[0];
    let hi = sorted_all
        [((sorted_all.len() as f64 * 0.995).ceil() as usize).clamp(1, sorted_all.len()) - 1]
        .max(lo + 1e-6);
    let (pw, ph) = (w - ml - 150.0, h - mb - 10.0);
    for (i, (name, v)) in series.iter().enumerate() {
        if v.is_empty() {
            continue;
        }
        let mut s = v.clone();
        s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        let n = s.len();
        let step = (n / 200).max(1);
        let mut pts = String::new();
        for (k, x) in s
            .iter()
            .enumerate()
            .step_by(step)
            .chain(std::iter::once((n - 1, &s[n - 1])))
        {
            let px = ml + ((x.min(hi) - lo) / (hi - lo)) * pw;
            let py = 10.0 + ph - (k + 1) as f64 / n as f64 * ph;
            let _ = write!(pts, "{px:.1},{py:.1} ");
        }
        let c = COLORS[i % COLORS.len()];
        let _ = write!(
            o,
            r#"<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{}"><title>{}</title></polyline>"#,
            pts.trim(),
            esc(name)
        );
        let _ = write!(
            o,
            r#"<rect x="{:.1}" y="{:.1}" width="10" height="3" fill="{c}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            ml + pw + 10.0,
            12.0 + i as f64 * 13.0,
            ml + pw + 24.0,
            16.0 + i as f64 * 13.0,
            esc(name)
        );
    }
    axes(&mut o, ml, 10.0, pw, ph, lo, hi, "1.0", "ms");
    o.push_str("</svg>");
    o
}

/// Horizontal stacked bars of HT sub-steps (medians), one bar per case.
pub fn steps_svg(rows: &[&ScenarioResult], title: &str) -> String {
    let items: Vec<(String, [f64; 3])> = rows
        .iter()
        .filter_map(|r| {
            r.ht_steps.as_ref().map(|s| {
                (
                    r.name.clone(),
                    [s.tcp.median_ms, s.tls.median_ms, s.mms.median_ms],
                )
            })
        })
        .collect();
    let bh = 16.0;
    let (w, ml) = (640.0, 170.0);
    let h = 40.0 + items.len() as f64 * (bh + 6.0);
    let mut o = format!(
        r#"<svg class="chart steps" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{}">"#,
        esc(title)
    );
    let max = items
        .iter()
        .map(|(_, v)| v.iter().sum::<f64>())
        .fold(0.0, f64::max)
        .max(1e-6);
    let pw = w - ml - 60.0;
    let names = ["TCP", "TLS", "MMS"];
    let cols = ["#999999", "#d62728", "#1f77b4"];
    for (i, (name, v)) in items.iter().enumerate() {
        let y = 10.0 + i as f64 * (bh + 6.0);
        let _ = write!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            ml - 4.0,
            y + 12.0,
            esc(name)
        );
        let mut x = ml;
        for k in 0..3 {
            let bw = v[k] / max * pw;
            let _ = write!(
                o,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{bh}" fill="{}"><title>{}: {} {:.3} ms</title></rect>"#,
                bw.max(0.0),
                cols[k],
                esc(name),
                names[k],
                v[k]
            );
            x += bw;
        }
        let _ = write!(
            o,
            r#"<text x="{:.1}" y="{:.1}">{:.2}</text>"#,
            x + 3.0,
            y + 12.0,
            v.iter().sum::<f64>()
        );
    }
    let y = h - 18.0;
    for k in 0..3 {
        let _ = write!(
            o,
            r#"<rect x="{:.1}" y="{y:.1}" width="10" height="10" fill="{}"/><text x="{:.1}" y="{:.1}">{} (median ms)</text>"#,
            ml + k as f64 * 120.0,
            cols[k],
            ml + k as f64 * 120.0 + 14.0,
            y + 9.0,
            names[k]
        );
    }
    o.push_str("</svg>");
    o
}

fn status_cell(r: &ScenarioResult) -> String {
    if r.status == "ok" {
        r#"<td class="l ok">ok</td>"#.into()
    } else {
        format!(
            r#"<td class="l over">failed: {}</td>"#,
            esc(r.error.as_deref().unwrap_or("?"))
        )
    }
}

fn verdict_cell(run: &RunResults, r: &ScenarioResult) -> String {
    let v = verdict(run, r);
    let class = if v.starts_with("ok") {
        "ok"
    } else if v.starts_with("over") {
        "over"
    } else {
        ""
    };
    format!(r#"<td class="l {class}">{}</td>"#, esc(&v))
}

/// Renders `report.html` (one self-contained page).
pub fn report_html(run: &RunResults) -> String {
    let mut o = String::new();
    let title = format!(
        "gander run: {}{}",
        run.scenario,
        if run.quick { " (--quick)" } else { "" }
    );
    let _ = write!(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n", esc(&title));
    let _ = writeln!(
        o,
        "<h1>{}</h1><p>{}</p><p class=\"note\">Source: {}</p>",
        esc(&title),
        esc(&run.description),
        esc(&run.source)
    );

    // What ran where.
    let m = &run.machine;
    let g = |k: &str| {
        m[k].as_str()
            .map(str::to_string)
            .unwrap_or_else(|| m[k].to_string())
    };
    let _ = write!(
        o,
        "<h2 id=\"machine\">Machine and software</h2><table id=\"machine-table\"><tbody>"
    );
    for (k, v) in [
        (
            "machine",
            format!(
                "{} ({}, {} logical CPUs)",
                g("hostname"),
                g("cpu_model"),
                g("cores")
            ),
        ),
        (
            "CPU flags",
            format!("{} (missing: {})", g("cpu_flags"), g("cpu_flags_missing")),
        ),
        ("kernel", format!("Linux {}", g("kernel"))),
        (
            "build",
            format!("{}, {} build", g("rustc"), g("build_profile")),
        ),
        ("load average at start", g("loadavg")),
        (
            "clock",
            format!(
                "{} (overhead {} ns, granularity {} ns)",
                g("clock"),
                g("clock_overhead_ns"),
                g("clock_granularity_ns")
            ),
        ),
        ("floors timed with", run.floor_library.clone()),
        (
            "verdict class",
            format!(
                "{} = {} ms ({}); verdicts compare RT p99",
                run.class.class, run.class.limit_ms, run.class.applies_to
            ),
        ),
        ("duration", format!("{:.1} s", run.duration_s)),
    ] {
        let _ = write!(
            o,
            "<tr><th class=\"l\">{}</th><td class=\"l\">{}</td></tr>",
            esc(k),
            esc(&v)
        );
    }
    for (k, v) in &run.libraries {
        let _ = write!(
            o,
            "<tr><th class=\"l\">TLS library: {}</th><td class=\"l\">{}</td></tr>",
            esc(k),
            esc(v)
        );
    }
    o.push_str("</tbody></table>\n");

    // Targets.
    let _ = write!(o, "<h2 id=\"targets\">Targets (ratios from this run)</h2><table id=\"targets-table\"><thead><tr><th class=\"l\">target</th><th class=\"l\">case</th><th>ratio</th><th>limit</th><th class=\"l\">verdict</th><th class=\"l\">how judged, spread</th></tr></thead><tbody>");
    for t in &run.targets {
        let _ = write!(o, "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}x</td><td class=\"l {}\">{}</td><td class=\"l note\">{}</td></tr>",
            esc(&t.what), esc(t.case.as_deref().unwrap_or("-")), ratio(t.ratio), t.limit, t.verdict.replace(' ', "-"), esc(&t.verdict), esc(&t.detail));
    }
    o.push_str("</tbody></table>\n");
    super::rt_table::html(&mut o, &run.scenarios);

    // Paper-style tables.
    for t in &run.tables {
        let rows = table_rows(run, &t.id);
        if rows.is_empty() {
            continue;
        }
        let _ = write!(o, "<h2 id=\"table-{}\">{}</h2>", esc(&t.id), esc(&t.title));
        if t.layout == "sandia" {
            sandia_table(&mut o, run, &rows, &t.id);
            continue;
        }
        if t.layout == "pq" {
            let _ = write!(
                o,
                "<table class=\"paper\" id=\"tbl-{}\"><thead><tr>",
                esc(&t.id)
            );
            for h in super::PQ_HEADINGS {
                let _ = write!(o, "<th>{}</th>", esc(h));
            }
            o.push_str("</tr></thead><tbody>");
            for r in &rows {
                let _ = write!(
                    o,
                    "<tr class=\"{}\">",
                    if r.status == "failed" { "failed" } else { "ok" }
                );
                for c in super::pq_cells(run, r, &t.row_label) {
                    let _ = write!(o, "<td class=\"l\">{}</td>", esc(&c));
                }
                o.push_str("</tr>");
            }
            o.push_str("</tbody></table>\n");
            continue;
        }
        let reference = t.reference.as_deref();
        let _ = write!(o, "<table class=\"paper\" id=\"tbl-{}\"><thead><tr><th class=\"l\" rowspan=\"2\">CYPHER S.</th><th class=\"l\" rowspan=\"2\">backend</th><th colspan=\"5\">HT (ms)</th><th colspan=\"6\">RT (ms)</th><th class=\"l\" rowspan=\"2\">status</th></tr>\
<tr><th>MEAN</th><th>ST. DEV.</th><th>VAR. (%)</th><th>floor</th><th>HT/floor</th><th>MEAN</th><th>ST. DEV.</th><th>VAR. (%)</th><th>cleartext median</th><th>RT/clear</th><th class=\"l\">verdict</th></tr></thead><tbody>", esc(&t.id));
        for r in &rows {
            let _ = write!(o, "<tr class=\"{}\"><td class=\"l\" title=\"{}\">{}</td><td class=\"l\" title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}{}</tr>",
                if r.status == "ok" { "ok" } else { "failed" },
                esc(&r.cipher_suite), esc(&row_label(r, &t.row_label)),
                esc(&r.backend_reason), esc(&r.backend),
                ms(r.ht.as_ref().map(|s| s.mean_ms)), ms(r.ht.as_ref().map(|s| s.sd_ms)), pct(table_var(run, reference, r, true)),
                ms(r.ht_floor_ms), ratio(r.ht_floor_ratio),
                ms(r.rt.as_ref().map(|s| s.mean_ms)), ms(r.rt.as_ref().map(|s| s.sd_ms)), pct(table_var(run, reference, r, false)),
                ms(r.rt_cleartext_median_ms), ratio(r.rt_cleartext_ratio),
                verdict_cell(run, r), status_cell(r));
        }
        o.push_str("</tbody></table>\n");
        // Figures for this table: HT histograms of the fastest and slowest, sub-step bars, RT CDFs.
        let ok: Vec<&ScenarioResult> = rows.iter().copied().filter(|r| r.ht.is_some()).collect();
        if !ok.is_empty() {
            o.push_str("<div class=\"figures\">");
            let fastest = ok.iter().min_by(|a, b| {
                a.ht.as_ref()
                    .map(|s| s.mean_ms)
                    .partial_cmp(&b.ht.as_ref().map(|s| s.mean_ms))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            let slowest = ok.iter().max_by(|a, b| {
                a.ht.as_ref()
                    .map(|s| s.mean_ms)
                    .partial_cmp(&b.ht.as_ref().map(|s| s.mean_ms))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            for (what, r) in [("fastest", fastest), ("slowest", slowest)] {
                if let Some(r) = r {
                    let cap = format!(
                        "HT distribution, {what} case {} ({}), like RSE Figures 1-2",
                        r.name, r.cipher_suite
                    );
                    let _ = write!(
                        o,
                        "<figure>{}<figcaption>{}</figcaption></figure>",
                        histogram_svg(&kept_ms(r, "ht"), &cap, 30),
                        esc(&cap)
                    );
                }
            }
            if let Some(r) = rows.iter().find(|r| r.rt.is_some()) {
                let cap = format!(
                    "RT distribution, case {} ({}), like RSE Figure 3",
                    r.name, r.cipher_suite
                );
                let _ = write!(
                    o,
                    "<figure>{}<figcaption>{}</figcaption></figure>",
                    histogram_svg(&kept_ms(r, "rt"), &cap, 30),
                    esc(&cap)
                );
            }
            let cap = "HT sub-steps (median): TCP connect, TLS handshake, MMS association";
            let _ = write!(
                o,
                "<figure>{}<figcaption>{cap}</figcaption></figure>",
                steps_svg(&ok, cap)
            );
            let mut series: Vec<(String, Vec<f64>)> = rows
                .iter()
                .map(|r| (r.name.clone(), kept_ms(r, "rt")))
                .collect();
            if let Some(r) = rows
                .iter()
                .find(|r| r.samples.as_ref().is_some_and(|s| !s.rt_clear.is_empty()))
            {
                series.push(("cleartext".into(), kept_ms(r, "rt_clear")));
            }
            let cap = "RT cumulative distribution per case, with the cleartext baseline";
            let _ = write!(
                o,
                "<figure>{}<figcaption>{cap}</figcaption></figure>",
                cdf_svg(&series, cap)
            );
            o.push_str("</div>\n");
        }
    }

    // Floors.
    let _ = write!(o, "<h2 id=\"floors\">Handshake floors</h2><p class=\"note\">Public-key operations per full handshake with mutual authentication (counts in <code>crates/platform/src/floor/</code>), each timed as the median of repeated runs in this run on the case's own key.</p><table id=\"floors-table\"><thead><tr><th class=\"l\">case</th><th class=\"l\">operations (count x median ms)</th><th>floor (ms)</th><th>HT median (ms)</th><th>HT/floor</th><th class=\"l\">timed with</th></tr></thead><tbody>");
    for r in &run.scenarios {
        let Some(f) = &r.floor else { continue };
        let mixed = f.libraries().len() > 1;
        let ops: Vec<String> = f
            .ops
            .iter()
            .map(|op| {
                // Mixed floors name the library of each operation.
                if mixed && !op.library.is_empty() {
                    format!(
                        "{} x {} ({:.4}, {})",
                        op.count, op.op, op.each_ms, op.library
                    )
                } else {
                    format!("{} x {} ({:.4})", op.count, op.op, op.each_ms)
                }
            })
            .collect();
        let mut note = f.note.clone();
        for op in &f.not_counted {
            note.push_str(&format!(
                "; not counted (not cryptography): {} x {} ({:.4})",
                op.count, op.op, op.each_ms
            ));
        }
        let lib = if f.same_library {
            format!("{} (same library)", f.library)
        } else if r.server_stack == "libiec61850" || r.client_stack == "libiec61850" {
            format!("{} (a libiec61850 peer runs on mbedTLS)", f.library)
        } else {
            format!("{} (the handshake ran on {})", f.library, r.backend)
        };
        let _ = write!(o, "<tr><td class=\"l\">{}</td><td class=\"l\">{}<br><span class=\"note\">{}</span></td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(&r.name), esc(&ops.join("; ")), esc(&note), ms(Some(f.total_ms)), ms(r.ht.as_ref().map(|s| s.median_ms)), ratio(r.ht_floor_ratio), esc(&lib));
    }
    o.push_str("</tbody></table>\n");

    // Link emulation: what was asked and what the emulator achieved.
    let linked: Vec<&ScenarioResult> = run
        .scenarios
        .iter()
        .filter(|r| r.link_achieved.is_some())
        .collect();
    if !linked.is_empty() {
        let _ = write!(o, "<h2 id=\"links\">Link emulation</h2><p class=\"note\">Server and client in separate network namespaces; the emulator between them is named per case. Achieved one-way delay = median TCP connect time / 2; rate = one bulk TCP transfer.</p><table id=\"links-table\"><thead><tr><th class=\"l\">case</th><th class=\"l\">profile</th><th class=\"l\">emulator</th><th>delay asked (ms)</th><th>delay achieved (ms)</th><th>rate asked (Mbit/s)</th><th>rate achieved (Mbit/s)</th><th>loss asked (%)</th><th>jitter asked (ms)</th></tr></thead><tbody>");
        for r in linked {
            let a = r.link_achieved.as_ref().cloned().unwrap_or_default();
            let f = |v: &serde_json::Value| {
                v.as_f64()
                    .map(|x| format!("{x:.3}"))
                    .unwrap_or_else(|| "-".into())
            };
            let _ = write!(o, "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.name), esc(&r.link), esc(&r.emulator),
                f(&a["requested"]["delay_ms"]), f(&a["achieved"]["one_way_delay_ms"]), f(&a["requested"]["rate_mbit"]), f(&a["achieved"]["rate_mbit"]),
                f(&a["requested"]["loss_pct"]), f(&a["requested"]["jitter_ms"]));
        }
        o.push_str("</tbody></table>\n");
    }

    // Every case, every statistic.
    let _ = write!(o, "<h2 id=\"cases\">All cases</h2><table id=\"cases-table\"><thead><tr><th class=\"l\">case</th><th class=\"l\">stack</th><th class=\"l\">TLS</th><th class=\"l\">suite</th><th class=\"l\">key</th><th class=\"l\">exchange</th><th class=\"l\">link / emulator</th><th class=\"l\">ind.</th><th>n</th><th>warm-up</th><th>mean</th><th>sd</th><th>median</th><th>p95</th><th>p99</th><th>min</th><th>max</th><th>CI95 ±</th><th>VAR%</th></tr></thead><tbody>");
    for r in &run.scenarios {
        for (ind, st, disc) in [
            ("HT", &r.ht, r.discarded.ht),
            ("RT", &r.rt, r.discarded.rt),
            ("RT clear", &r.rt_cleartext, r.discarded.rt_clear),
        ] {
            let Some(s) = st else { continue };
            let _ = write!(o, "<tr class=\"{}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{} {} B / {} ms, resumption {}</td><td class=\"l\">{} / {}</td><td class=\"l\">{ind}</td><td>{}</td><td>{disc}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                if r.status == "ok" { "ok" } else { "failed" }, esc(&r.name), esc(&r.stack), esc(&format!("{} {}", r.backend, r.tls_version)), esc(&r.cipher_suite), esc(&r.key),
                esc(&r.interaction), r.payload, r.period_ms, esc(&if r.session_resumption == "off" { "off".to_string() } else { format!("{} ({} resumed)", r.session_resumption, r.resumed_handshakes) }), esc(&r.link), esc(&r.emulator),
                s.n, ms(Some(s.mean_ms)), ms(Some(s.sd_ms)), ms(Some(s.median_ms)), ms(Some(s.p95_ms)), ms(Some(s.p99_ms)), ms(Some(s.min_ms)), ms(Some(s.max_ms)), ms(Some(s.ci95_ms)), pct(s.var_pct));
        }
        if r.status != "ok" {
            let _ = write!(o, "<tr class=\"failed\"><td class=\"l\">{}</td><td class=\"l\" colspan=\"18\">failed: {}</td></tr>", esc(&r.name), esc(r.error.as_deref().unwrap_or("?")));
        }
    }
    o.push_str("</tbody></table>\n");
    if !run.notes.is_empty() {
        o.push_str("<h2 id=\"notes\">Notes</h2><ul>");
        for n in &run.notes {
            let _ = write!(o, "<li>{}</li>", esc(n));
        }
        o.push_str("</ul>");
    }
    let _ = writeln!(o, "<p class=\"note\">Raw samples: <code>samples.csv</code>; statistics: <code>results.json</code>. Percentiles are nearest-rank, sd is the sample sd, CI95 uses Student's t. gander {}.</p></body></html>", esc(&run.gander_version));
    o
}

/// Sandia Table 2: payload rows, suite columns, mean and sd of (TLS - cleartext) per cell.
fn sandia_table(o: &mut String, run: &RunResults, rows: &[&ScenarioResult], id: &str) {
    let mut suites: Vec<String> = Vec::new();
    let mut payloads: Vec<u32> = Vec::new();
    for r in rows {
        let l = row_label(r, "sandia");
        if !suites.contains(&l) {
            suites.push(l);
        }
        if !payloads.contains(&r.payload) {
            payloads.push(r.payload);
        }
    }
    let _ = write!(o, "<table class=\"paper sandia\" id=\"tbl-{}\"><thead><tr><th class=\"l\" rowspan=\"2\">Payload</th>", esc(id));
    for s in &suites {
        let _ = write!(o, "<th colspan=\"2\">{}</th>", esc(s));
    }
    o.push_str("</tr><tr>");
    for _ in &suites {
        o.push_str("<th>&mu;</th><th>&sigma;</th>");
    }
    o.push_str("</tr></thead><tbody>");
    for p in &payloads {
        let _ = write!(
            o,
            "<tr><td class=\"l\">{}</td>",
            if *p == 0 {
                "No payload".to_string()
            } else {
                format!("{p} Byte")
            }
        );
        for s in &suites {
            let cell = rows
                .iter()
                .find(|r| r.payload == *p && &row_label(r, "sandia") == s);
            match cell.and_then(|r| r.rt_diff.as_ref()) {
                Some(d) => {
                    let _ = write!(o, "<td>{:.3}</td><td>{:.3}</td>", d.mean_ms, d.sd_ms);
                }
                None => o.push_str("<td>-</td><td>-</td>"),
            }
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table>\n");
    let failed: Vec<&&ScenarioResult> = rows.iter().filter(|r| r.status != "ok").collect();
    for r in failed {
        let _ = write!(
            o,
            "<p class=\"note over\">{} failed: {}</p>",
            esc(&r.name),
            esc(r.error.as_deref().unwrap_or("?"))
        );
    }
    let series: Vec<(String, Vec<f64>)> = rows
        .iter()
        .filter(|r| r.payload == payloads[0])
        .map(|r| (r.name.clone(), kept_ms(r, "rt")))
        .collect();
    let cap = format!(
        "Request/response time CDF over TLS 1.2, payload {} B",
        payloads[0]
    );
    let _ = write!(
        o,
        "<figure>{}<figcaption>{}</figcaption></figure>",
        cdf_svg(&series, &cap),
        esc(&cap)
    );
    let _ = run;
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn escapes() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }
    #[test]
    fn charts_handle_empty_and_constant_samples() {
        assert!(histogram_svg(&[], "t", 10).contains("no samples"));
        let h = histogram_svg(&[1.0, 1.0, 1.0], "t", 10);
        assert!(h.contains("<rect") && !h.contains("NaN"));
        let c = cdf_svg(&[("a".into(), vec![2.0; 5]), ("b".into(), vec![])], "t");
        assert!(c.contains("<polyline") && !c.contains("NaN"));
        assert!(steps_svg(&[], "t").ends_with("</svg>"));
    }
}
