//! `gander probe --scd FILE | --targets FILE` (a sweep of every IED) and `gander probe diff OLD
//! NEW` (docs/probe.md, "Fleet"). Parsing and printing only; the sweep is
//! `gander_probe::fleet`.
use anyhow::Context;
use clap::Args;
use gander_probe::fleet::{self, diff, report, targets, FleetOptions, Progress};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The fleet options of `gander probe`.
#[derive(Args, Default)]
pub(crate) struct FleetArgs {
    /// Sweep every IED access point with an IP address in this SCD's Communication section,
    /// checking each server's model against the one the SCD declares.
    #[arg(long, value_name = "FILE", conflicts_with = "targets")]
    scd: Option<PathBuf>,
    /// Sweep the devices of this TOML file ([[target]] name, address, port, tls).
    #[arg(long, value_name = "FILE")]
    targets: Option<PathBuf>,
    /// Fleet: devices probed at once (one session per IED at a time).
    #[arg(long, value_name = "N", default_value_t = 8)]
    concurrency: usize,
    /// Fleet: time cap per device, seconds.
    #[arg(long, value_name = "S", default_value_t = 120)]
    device_cap_s: u64,
    /// Fleet: no TLS scan of the devices on a TLS port (the scan offers every IANA suite per
    /// version, SSL 2.0/3.0, the groups and the known-weakness checks, one connection at a
    /// time).
    #[arg(long)]
    no_tls_scan: bool,
    /// Fleet: the TLS scan's connection cap per device (what is left is reported as capped).
    #[arg(long, value_name = "N", default_value_t = 300)]
    scan_cap: u32,
    /// Fleet: compare the sweep with an earlier fleet.json.
    #[arg(long, value_name = "OLD.json")]
    diff: Option<PathBuf>,
}

impl FleetArgs {
    /// Whether a fleet sweep was asked for.
    pub(crate) fn wanted(&self) -> bool {
        self.scd.is_some() || self.targets.is_some()
    }
}

fn write(dir: &Path, name: &str, text: &str) -> anyhow::Result<()> {
    let p = dir.join(name);
    std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
}

/// `gander probe diff OLD NEW`: exit 0 no change, 3 changes.
pub(crate) fn run_diff(old: &Path, new: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let a = diff::load(old)?;
    let b = diff::load(new)?;
    let d = diff::diff(&a, &b);
    if json {
        crate::out(serde_json::to_string_pretty(&d)?);
    } else {
        crate::out(d.text().trim_end());
    }
    Ok(ExitCode::from(if d.is_empty() { 0 } else { 3 }))
}

/// The sweep. `tls` and the step timeout come from `gander probe`'s own options.
pub(crate) fn run(
    a: &FleetArgs,
    tls: Option<gander_tls::TlsProfile>,
    timeout: Duration,
    out: Option<&Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let out = out
        .map(Path::to_path_buf)
        .context("a sweep needs --out DIR (its state file makes it resumable)")?;
    let (source, plan) = match (&a.scd, &a.targets) {
        (Some(p), _) => {
            let text = targets::read_scd(p)?;
            let plan = targets::from_scd(&p.display().to_string(), &text)?;
            (p.display().to_string(), plan)
        }
        (None, Some(p)) => {
            let text = targets::read(p)?;
            let t = targets::from_toml(&p.display().to_string(), &text)?;
            (
                p.display().to_string(),
                targets::Plan {
                    targets: t,
                    declared: BTreeMap::new(),
                    refused: vec![],
                    repaired: vec![],
                    notes: vec![],
                },
            )
        }
        (None, None) => anyhow::bail!("--scd FILE or --targets FILE"),
    };
    // The declared models were loaded with these repairs (docs/scl.md, "Repairs").
    for w in &plan.repaired {
        eprintln!("gander: {source}: WARNING: {w}");
    }
    for r in &plan.refused {
        eprintln!("gander: {source}: refused IED (still swept, its model not checked): {r}");
    }
    for n in &plan.notes {
        eprintln!("gander: {source}: NOTE: {n}");
    }
    let mut o = FleetOptions::new(out.clone(), source);
    o.concurrency = a.concurrency;
    o.device_cap = Duration::from_secs(a.device_cap_s);
    o.probe.timeout = timeout;
    o.tls = tls;
    o.scan = (!a.no_tls_scan).then(|| {
        let mut so = fleet::scan::gentle(timeout);
        so.max_connections = a.scan_cap.max(1);
        so
    });
    fleet::interrupt::install();
    // On a terminal a bar under the per-device lines; otherwise (a log, a pipe) the lines alone.
    let total = plan.targets.len() as u64;
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(total);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} devices, {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let say = |line: String| match &bar {
        Some(b) => b.println(line),
        None => eprintln!("{line}"),
    };
    let mut progress = |p: Progress| match p {
        Progress::Resumed(r) => {
            say(format!(
                "  {}: done in an earlier run ({})",
                r.name,
                r.outcome.word()
            ));
            if let Some(b) = &bar {
                b.inc(1);
            }
        }
        Progress::Retried(r) => say(format!(
            "  {}: unreachable in an earlier run ({}): probed again",
            r.name,
            r.error.as_deref().unwrap_or("no answer")
        )),
        Progress::Done { row, done, total } => {
            say(format!(
                "[{done}/{total}] {} {}: {}{} in {:.1} s",
                row.name,
                row.endpoint,
                row.outcome.word(),
                row.tls.as_ref().map_or("", |_| ", TLS"),
                row.duration_ms as f64 / 1e3
            ));
            if let Some(b) = &bar {
                b.set_position(done as u64);
            }
        }
    };
    let r = fleet::sweep(
        &plan.targets,
        &plan.declared,
        plan.refused,
        &o,
        &mut progress,
    )?;
    let js = serde_json::to_string_pretty(&r)?;
    write(&out, "fleet.json", &format!("{js}\n"))?;
    write(&out, "fleet.html", &report::html(&r))?;
    write(&out, "fleet.prom", &report::openmetrics(&r))?;
    let (reach, complete, mism, fails) = r.counts();
    // With an SCD, a device reached whose model was not checked (no server declared there,
    // IED refused) is said, so that "0 differ" is not read as "all checked".
    let unchecked = match r
        .rows
        .iter()
        .filter(|row| row.found.is_some() && row.model_check.is_none())
        .count()
    {
        n if n > 0 && a.scd.is_some() => format!(" ({n} reached not checked: see the NOTE lines)"),
        _ => String::new(),
    };
    let summary = format!(
        "{} devices: {reach} reachable, {complete} complete, {mism} model(s) differ from the SCD{unchecked}, \
{fails} TLS verdict failure(s); {} resumed, {} pending; {:.1} s; reports in {}",
        r.rows.len() + r.pending.len(),
        r.resumed,
        r.pending.len(),
        r.duration_ms as f64 / 1e3,
        out.display()
    );
    if let Some(old) = &a.diff {
        let d = diff::diff(&diff::load(old)?, &r);
        write(&out, "fleet-diff.json", &serde_json::to_string_pretty(&d)?)?;
        eprintln!(
            "changes against {}:\n{}",
            old.display(),
            d.text().trim_end()
        );
    }
    if json {
        crate::out(js);
    } else {
        crate::out(summary);
    }
    Ok(ExitCode::from(if r.interrupted {
        130
    } else if reach == 0 {
        1
    } else if complete < r.rows.len() {
        3
    } else {
        0
    }))
}
