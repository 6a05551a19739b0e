//! The fleet report: one document with a row per device (`fleet.json`), rendered as a
//! self-contained HTML page (`fleet.html`, no script, no external request) and as OpenMetrics
//! text (`fleet.prom`) for a monitoring system to scrape or import.
use super::row::{Row, RowOutcome};
use super::scan::RowScan;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of `fleet.json`; raised when a field changes meaning or disappears. 2: the
/// certificate's `digest` (over decoded facts) gave way to `sha256` of the DER and
/// `chain_sha256`; `tls.scan`, `tls.scan_error` and `settings.scan_cap` are new. A schema-1
/// report still loads (for a diff), its certificates without fingerprints.
pub const FLEET_SCHEMA: u32 = 2;

/// The settings of the sweep, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetSettings {
    /// Devices probed at the same time, at most.
    pub concurrency: usize,
    /// Time cap per device, ms.
    pub device_cap_ms: u64,
    /// Step timeout of each probe, ms.
    pub timeout_ms: u64,
    /// Whether a TLS profile was given.
    pub tls: bool,
    /// The TLS scan's connection cap per device; `None`: no scan.
    #[serde(default)]
    pub scan_cap: Option<u32>,
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    /// [`FLEET_SCHEMA`].
    pub fleet_schema: u32,
    /// The SCD or targets file.
    pub source: String,
    /// Seconds since the Unix epoch when this sweep (or its first interrupted part) started.
    pub started_unix: u64,
    /// Wall time of this invocation, ms.
    pub duration_ms: u64,
    /// Whether the sweep was interrupted before every device was probed.
    pub interrupted: bool,
    /// Rows taken from the state file of an earlier, interrupted run.
    pub resumed: usize,
    /// Devices not probed (interrupted before them).
    pub pending: Vec<String>,
    /// The settings.
    pub settings: FleetSettings,
    /// SCD IEDs that gander-scl refused (their models cannot be checked).
    pub refused_ieds: Vec<String>,
    /// One row per probed device, in the order of the SCD or targets file.
    pub rows: Vec<Row>,
}

impl FleetReport {
    /// (reachable, complete, model mismatches, TLS verdict failures) over the rows.
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let reach = self.rows.iter().filter(|r| r.reachable).count();
        let complete = self
            .rows
            .iter()
            .filter(|r| r.outcome == RowOutcome::Complete)
            .count();
        let mism = self
            .rows
            .iter()
            .filter(|r| r.model_check.as_ref().is_some_and(|c| !c.matches))
            .count();
        let fails = self
            .rows
            .iter()
            .filter_map(|r| r.tls.as_ref())
            .map(|t| t.count("fail"))
            .sum();
        (reach, complete, mism, fails)
    }
}

pub use gander_measure::html::esc;

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}"))
}

fn list(v: &[String], max: usize) -> String {
    let mut s: Vec<String> = v.iter().take(max).map(|x| esc(x)).collect();
    if v.len() > max {
        s.push(format!("... ({} more)", v.len() - max));
    }
    s.join("<br>")
}

/// The HTML page: a summary and one table row per device (`id="fleet"`, one `tr` per device
/// with `data-ied`), then per device the model differences and TLS verdicts that did not pass.
pub fn html(r: &FleetReport) -> String {
    let (reach, complete, mism, fails) = r.counts();
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<title>gander fleet sweep</title><style>");
    h.push_str(
        "body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}\
td,th{border:1px solid #999;padding:2px 6px;font-size:90%;vertical-align:top}\
.bad{background:#fdd}.warn{background:#ffd}.ok{background:#dfd}",
    );
    h.push_str("</style></head><body>\n");
    h.push_str(&format!(
        "<h1>Fleet sweep of {}</h1>\n<p id=\"summary\">{} devices: {reach} reachable, {complete} \
complete, {mism} with a model that differs from the SCD, {fails} TLS verdict failures.{}{}</p>\n",
        esc(&r.source),
        r.rows.len() + r.pending.len(),
        if r.interrupted {
            format!(" Interrupted: {} not probed yet.", r.pending.len())
        } else {
            String::new()
        },
        if r.resumed > 0 {
            format!(" {} rows resumed from an earlier run.", r.resumed)
        } else {
            String::new()
        },
    ));
    h.push_str(
        "<table id=\"fleet\"><thead><tr><th>device</th><th>endpoint</th><th>outcome</th>\
<th>TLS</th><th>certificate</th><th>verdicts (fail/warn/pass)</th><th>identity</th>\
<th>model (LD/LN/DS/RCB found of declared)</th><th>HT ms</th><th>read RTT ms</th></tr></thead><tbody>\n",
    );
    for row in &r.rows {
        let cls = match row.outcome {
            RowOutcome::Complete => "ok",
            RowOutcome::Partial => "warn",
            _ => "bad",
        };
        let tls = row.tls.as_ref().map_or("plain".to_string(), |t| {
            let mut c = format!(
                "{} {}<br>{}",
                esc(t.version.as_deref().unwrap_or("?")),
                esc(t.suite.as_deref().unwrap_or("?")),
                esc(&t.versions.join(" "))
            );
            if let Some(sc) = &t.scan {
                c.push_str(&format!("<br>{}", scan_cell(sc)));
            }
            c
        });
        let cert = row
            .tls
            .as_ref()
            .and_then(|t| t.certificate.as_ref())
            .map_or("-".into(), |c| {
                format!(
                    "{}<br>until {}<br>{}",
                    esc(&c.subject),
                    esc(&c.not_after),
                    esc(&c.key)
                )
            });
        let verdicts = row.tls.as_ref().map_or("-".into(), |t| {
            format!(
                "{}/{}/{}",
                t.count("fail"),
                t.count("warn"),
                t.count("pass")
            )
        });
        let id = row.identity.as_ref().map_or("-".into(), |i| {
            format!("{} {} {}", esc(&i.vendor), esc(&i.model), esc(&i.revision))
        });
        let model = match (&row.model_check, &row.found) {
            (Some(c), _) => format!(
                "<span class=\"{}\">{}</span> {}/{}/{}/{} of {}/{}/{}/{}",
                if c.matches { "ok" } else { "bad" },
                if c.matches { "as declared" } else { "differs" },
                c.found[0],
                c.found[1],
                c.found[2],
                c.found[3],
                c.declared[0],
                c.declared[1],
                c.declared[2],
                c.declared[3]
            ),
            (None, Some(f)) => format!(
                "{}/{}/{}/{} (no declared model)",
                f.lds.len(),
                f.lns.len(),
                f.data_sets.len(),
                f.rcbs.len()
            ),
            (None, None) => "-".into(),
        };
        h.push_str(&format!(
            "<tr class=\"{cls}\" data-ied=\"{}\"><td>{}</td><td>{}</td><td>{}{}</td><td>{tls}</td>\
<td>{cert}</td><td>{verdicts}</td><td>{id}</td><td>{model}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&row.name),
            esc(&row.name),
            esc(&row.endpoint),
            row.outcome.word(),
            row.error
                .as_ref()
                .map_or(String::new(), |e| format!("<br><small>{}</small>", esc(e))),
            ms(row.ht_ms),
            ms(row.read_rtt_ms),
        ));
    }
    for p in &r.pending {
        h.push_str(&format!(
            "<tr class=\"bad\" data-ied=\"{}\"><td>{}</td><td></td><td>pending (interrupted)</td>\
<td></td><td></td><td></td><td></td><td></td><td></td><td></td></tr>\n",
            esc(p),
            esc(p)
        ));
    }
    h.push_str("</tbody></table>\n<h2>Details</h2>\n");
    for row in &r.rows {
        let mut d = String::new();
        if let Some(c) = row.model_check.as_ref().filter(|c| !c.matches) {
            let miss: Vec<String> = c.missing().into_iter().map(String::from).collect();
            let extra: Vec<String> = c.extra().into_iter().map(String::from).collect();
            d.push_str(&format!(
                "<p>Declared, not found: {}</p><p>Found, not declared: {}</p>",
                if miss.is_empty() {
                    "none".into()
                } else {
                    list(&miss, 40)
                },
                if extra.is_empty() {
                    "none".into()
                } else {
                    list(&extra, 40)
                },
            ));
        }
        if let Some(t) = &row.tls {
            let bad: Vec<String> = t
                .verdicts
                .iter()
                .filter(|v| v.level == "fail" || v.level == "warn")
                .map(|v| format!("{} {}: {}", v.level.to_uppercase(), v.id, v.detail))
                .collect();
            if !bad.is_empty() {
                d.push_str(&format!("<p>TLS verdicts:<br>{}</p>", list(&bad, 40)));
            }
            if let Some(e) = &t.survey_error {
                d.push_str(&format!("<p>TLS survey: {}</p>", esc(e)));
            }
            if let Some(sc) = &t.scan {
                d.push_str(&scan_details(sc));
            }
            if let Some(e) = &t.scan_error {
                d.push_str(&format!("<p>TLS scan: {}</p>", esc(e)));
            }
        }
        if !d.is_empty() {
            h.push_str(&format!(
                "<section class=\"device\" data-ied=\"{}\"><h3>{}</h3>{d}</section>\n",
                esc(&row.name),
                esc(&row.name)
            ));
        }
    }
    h.push_str("</body></html>\n");
    h
}

/// The scan in the table: accepted versions, suites, weak suites and weaknesses found.
fn scan_cell(sc: &RowScan) -> String {
    let weak: usize = sc.versions.iter().map(|v| v.weak_suites.len()).sum();
    let vulnerable = sc.vulnerable().len();
    format!(
        "scan: {}; {} suites, <span class=\"{}\">{weak} weak</span>, \
<span class=\"{}\">{vulnerable} weaknesses</span>{}",
        esc(&sc.accepted_versions().join(" ")),
        sc.suites_by_version().len(),
        if weak > 0 { "bad" } else { "ok" },
        if vulnerable > 0 { "bad" } else { "ok" },
        if sc.capped { " (capped)" } else { "" }
    )
}

/// The scan of one device: a table per version (`class="scan"`) and the weaknesses found.
fn scan_details(sc: &RowScan) -> String {
    let mut d = format!(
        "<table class=\"scan\"><tr><th>version</th><th>suites accepted</th>\
<th>anonymous, NULL, EXPORT, RC4, DES, 3DES</th><th>groups</th></tr>\
<tr><td>SSLv2</td><td colspan=\"3\" class=\"{}\">{}</td></tr>",
        if sc.sslv2 { "bad" } else { "ok" },
        if sc.sslv2 { "accepted" } else { "refused" }
    );
    for v in &sc.versions {
        let groups: Vec<String> = v
            .groups
            .iter()
            .cloned()
            .chain(v.dh_prime.iter().map(|p| format!("DH {p}")))
            .collect();
        d.push_str(&format!(
            "<tr><td>{}{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>",
            esc(&v.version),
            if v.incomplete { " (capped)" } else { "" },
            if v.accepted {
                list(&v.suites, 60)
            } else {
                "refused".into()
            },
            if v.weak_suites.is_empty() {
                "ok"
            } else {
                "bad"
            },
            if v.weak_suites.is_empty() {
                "none".into()
            } else {
                list(&v.weak_suites, 60)
            },
            list(&groups, 30)
        ));
    }
    d.push_str("</table>");
    let vul: Vec<String> = sc
        .vulnerable()
        .iter()
        .map(|w| format!("{}: {}", w.id, w.detail))
        .collect();
    if !vul.is_empty() {
        d.push_str(&format!("<p>Weaknesses found:<br>{}</p>", list(&vul, 30)));
    }
    d.push_str(&format!(
        "<p><small>scan: {} connections in {} ms{}</small></p>",
        sc.connections,
        sc.duration_ms,
        if sc.capped {
            ", stopped at the cap: the rest was not tested"
        } else {
            ""
        }
    ));
    d
}

/// A label value for OpenMetrics (backslash, quote and newline escaped).
fn lv(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn scan_of(row: &Row) -> Option<&RowScan> {
    row.tls.as_ref().and_then(|t| t.scan.as_ref())
}

/// A verdict level as a fixed label value (anything unknown is `other`).
fn level_word(l: &str) -> &'static str {
    match l {
        "fail" => "fail",
        "warn" => "warn",
        "info" => "info",
        "pass" => "pass",
        _ => "other",
    }
}

fn rank(l: &str) -> u8 {
    match l {
        "fail" => 4,
        "warn" => 3,
        "info" => 2,
        "pass" => 1,
        _ => 0,
    }
}

/// OpenMetrics text: per device, reachability, model match, verdict counts, HT and read RTT
/// (seconds, the OpenMetrics base unit), the scan's suites per version, weak suites and cap;
/// across the fleet, the devices per verdict and level; ending with `# EOF`.
pub fn openmetrics(r: &FleetReport) -> String {
    let mut o = String::new();
    let fams: [(&str, &str, &str); 9] = [
        (
            "gander_fleet_reachable",
            "gauge",
            "1 if an MMS association came up",
        ),
        (
            "gander_fleet_model_matches",
            "gauge",
            "1 if the server lists the SCD's model",
        ),
        (
            "gander_fleet_tls_verdicts",
            "gauge",
            "TLS survey verdicts by level",
        ),
        (
            "gander_fleet_ht_seconds",
            "gauge",
            "median association time HT",
        ),
        (
            "gander_fleet_read_rtt_seconds",
            "gauge",
            "median read round-trip time",
        ),
        (
            "gander_fleet_probe_seconds",
            "gauge",
            "wall time of the device's probe",
        ),
        (
            "gander_fleet_tls_scan_suites",
            "gauge",
            "cipher suites the TLS scan found accepted, by version",
        ),
        (
            "gander_fleet_tls_weak_suites",
            "gauge",
            "accepted suites that are anonymous, NULL, EXPORT, RC4, DES or 3DES",
        ),
        (
            "gander_fleet_tls_scan_capped",
            "gauge",
            "1 if the TLS scan stopped at its connection cap",
        ),
    ];
    for (name, ty, help) in fams {
        o.push_str(&format!("# TYPE {name} {ty}\n# HELP {name} {help}.\n"));
        for row in &r.rows {
            let l = format!("device=\"{}\"", lv(&row.name));
            match name {
                "gander_fleet_reachable" => {
                    o.push_str(&format!("{name}{{{l}}} {}\n", u8::from(row.reachable)))
                }
                "gander_fleet_model_matches" => {
                    if let Some(c) = &row.model_check {
                        o.push_str(&format!("{name}{{{l}}} {}\n", u8::from(c.matches)));
                    }
                }
                "gander_fleet_tls_verdicts" => {
                    if let Some(t) = &row.tls {
                        for lvl in ["fail", "warn", "pass", "info"] {
                            o.push_str(&format!(
                                "{name}{{{l},level=\"{lvl}\"}} {}\n",
                                t.count(lvl)
                            ));
                        }
                    }
                }
                "gander_fleet_ht_seconds" => {
                    if let Some(v) = row.ht_ms {
                        o.push_str(&format!("{name}{{{l}}} {}\n", v / 1e3));
                    }
                }
                "gander_fleet_read_rtt_seconds" => {
                    if let Some(v) = row.read_rtt_ms {
                        o.push_str(&format!("{name}{{{l}}} {}\n", v / 1e3));
                    }
                }
                "gander_fleet_tls_scan_suites" => {
                    for v in scan_of(row).map_or(&[][..], |s| &s.versions[..]) {
                        o.push_str(&format!(
                            "{name}{{{l},version=\"{}\"}} {}\n",
                            lv(&v.version),
                            v.suites.len()
                        ));
                    }
                }
                "gander_fleet_tls_weak_suites" => {
                    if let Some(s) = scan_of(row) {
                        let n: usize = s.versions.iter().map(|v| v.weak_suites.len()).sum();
                        o.push_str(&format!("{name}{{{l}}} {n}\n"));
                    }
                }
                "gander_fleet_tls_scan_capped" => {
                    if let Some(s) = scan_of(row) {
                        o.push_str(&format!("{name}{{{l}}} {}\n", u8::from(s.capped)));
                    }
                }
                _ => o.push_str(&format!("{name}{{{l}}} {}\n", row.duration_ms as f64 / 1e3)),
            }
        }
    }
    // Across the fleet: how many devices have each verdict at each level (a verdict given once
    // per version counts the device once, at its worst level).
    let mut by: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
    for t in r.rows.iter().filter_map(|r| r.tls.as_ref()) {
        let mut worst: BTreeMap<&str, &'static str> = BTreeMap::new();
        for v in &t.verdicts {
            let lvl = level_word(&v.level);
            let e = worst.entry(v.id.as_str()).or_insert(lvl);
            if rank(lvl) > rank(e) {
                *e = lvl;
            }
        }
        for (id, lvl) in worst {
            *by.entry((id.to_string(), lvl)).or_default() += 1;
        }
    }
    let name = "gander_fleet_tls_verdict_devices";
    o.push_str(&format!(
        "# TYPE {name} gauge\n# HELP {name} devices with each TLS verdict, by level.\n"
    ));
    for ((id, lvl), n) in by {
        o.push_str(&format!(
            "{name}{{verdict=\"{}\",level=\"{lvl}\"}} {n}\n",
            lv(&id)
        ));
    }
    o.push_str("# EOF\n");
    o
}

#[cfg(test)]
mod tests {
    use super::super::row::Row;
    use super::super::targets::Target;
    use super::*;

    fn report() -> FleetReport {
        let t = Target {
            name: "IED<1>\"".into(),
            ied: None,
            access_point: None,
            address: "10.0.0.1".into(),
            port: None,
            tls: None,
        };
        let mut r = Row::empty(
            &t,
            "10.0.0.1:102".into(),
            RowOutcome::Unreachable,
            "x".into(),
        );
        r.ht_ms = Some(2.5);
        FleetReport {
            fleet_schema: FLEET_SCHEMA,
            source: "a.scd".into(),
            started_unix: 0,
            duration_ms: 1,
            interrupted: true,
            resumed: 0,
            pending: vec!["B".into()],
            settings: FleetSettings {
                concurrency: 1,
                device_cap_ms: 1,
                timeout_ms: 1,
                tls: false,
                scan_cap: Some(300),
            },
            refused_ieds: vec![],
            rows: vec![r],
        }
    }

    #[test]
    fn html_escapes_and_has_a_row_per_device() {
        let h = html(&report());
        assert!(h.contains("IED&lt;1&gt;&quot;") && !h.contains("IED<1>"));
        assert_eq!(h.matches("<tr class=").count(), 2);
        assert!(h.contains("pending (interrupted)"));
    }

    #[test]
    fn openmetrics_is_labelled_escaped_and_ends_with_eof() {
        let m = openmetrics(&report());
        assert!(m.ends_with("# EOF\n"));
        assert!(m.contains("gander_fleet_reachable{device=\"IED<1>\\\"\"} 0\n"));
        assert!(m.contains("gander_fleet_ht_seconds{device=\"IED<1>\\\"\"} 0.0025\n"));
        let json = serde_json::to_string(&report()).unwrap();
        let back: FleetReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, report());
    }

    fn scanned() -> FleetReport {
        use super::super::row::{RowTls, RowVerdict};
        use super::super::scan::RowScanVersion;
        let mut r = report();
        let mut row = r.rows[0].clone();
        row.name = "P1".into();
        row.reachable = true;
        let verdict = |id: &str, level: &str| RowVerdict {
            id: id.into(),
            level: level.into(),
            detail: String::new(),
        };
        row.tls = Some(RowTls {
            scan: Some(RowScan {
                versions: vec![RowScanVersion {
                    version: "1.2".into(),
                    accepted: true,
                    suites: vec!["TLS_RSA_WITH_RC4_128_SHA".into(), "S2".into()],
                    weak_suites: vec!["TLS_RSA_WITH_RC4_128_SHA (RC4)".into()],
                    groups: vec!["secp256r1".into()],
                    ..RowScanVersion::default()
                }],
                capped: true,
                ..RowScan::default()
            }),
            verdicts: vec![
                verdict("scan-rc4-suites", "fail"),
                verdict("scan-cipher-order", "info"),
                verdict("scan-cipher-order", "info"),
            ],
            ..RowTls::default()
        });
        let mut other = row.clone();
        other.name = "P2".into();
        other.tls.as_mut().unwrap().verdicts = vec![verdict("scan-rc4-suites", "pass")];
        r.rows = vec![row, other];
        r
    }

    #[test]
    fn the_scan_is_in_the_html_and_the_metrics() {
        let r = scanned();
        let h = html(&r);
        assert!(h.contains("scan: TLS 1.2; 2 suites"), "{h}");
        assert!(h.contains("<table class=\"scan\">"));
        assert!(h.contains("TLS_RSA_WITH_RC4_128_SHA (RC4)"));
        assert!(h.contains("stopped at the cap"));
        let m = openmetrics(&r);
        assert!(m.contains("gander_fleet_tls_scan_suites{device=\"P1\",version=\"1.2\"} 2\n"));
        assert!(m.contains("gander_fleet_tls_weak_suites{device=\"P1\"} 1\n"));
        assert!(m.contains("gander_fleet_tls_scan_capped{device=\"P2\"} 1\n"));
        // Devices per verdict: the id given twice counts its device once.
        assert!(m.contains(
            "gander_fleet_tls_verdict_devices{verdict=\"scan-rc4-suites\",level=\"fail\"} 1\n"
        ));
        assert!(m.contains(
            "gander_fleet_tls_verdict_devices{verdict=\"scan-rc4-suites\",level=\"pass\"} 1\n"
        ));
        assert!(m.contains(
            "gander_fleet_tls_verdict_devices{verdict=\"scan-cipher-order\",level=\"info\"} 1\n"
        ));
        assert!(m.ends_with("# EOF\n"));
        let back: FleetReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
