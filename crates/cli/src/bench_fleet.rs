//! `gander bench fleet` (argument parsing only; the benchmark is `gander_bench::fleet`).

use gander_bench::fleet::{self, FleetBenchOptions};
use std::process::ExitCode;

/// One sweep of a substation in namespaces against issue #22's 2-minute target.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// IEDs of the full size (a sweep of half of them gives the memory slope).
    #[arg(long, default_value_t = 100)]
    pub ieds: usize,
    /// Share of the IEDs served over TLS (port 3782), 0 to 1.
    #[arg(long, default_value_t = 0.5)]
    pub tls_share: f64,
    /// Sweeps per size.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
    /// Namespace prefix (created and removed by the benchmark; at most 6 characters).
    #[arg(long, default_value = "gbf")]
    pub prefix: String,
    /// Print the result as JSON (machine included).
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn run(a: Args) -> anyhow::Result<ExitCode> {
    let machine = gander_measure::machine::Machine::describe();
    if !a.json {
        crate::out(format!(
            "gander bench fleet: {} ({} CPUs, {} build), load average {:.2} {:.2} {:.2}",
            machine.cpu_model,
            machine.cores,
            machine.build_profile,
            machine.loadavg[0],
            machine.loadavg[1],
            machine.loadavg[2]
        ));
    }
    let opts = FleetBenchOptions {
        ieds: a.ieds,
        tls_share: a.tls_share,
        runs: a.runs,
        gander: std::env::current_exe()?,
        prefix: a.prefix,
    };
    let report = fleet::run(&opts, &mut |line| {
        if !a.json {
            crate::out(line)
        }
    })?;
    if a.json {
        let after = gander_measure::machine::Machine::describe().loadavg;
        crate::out(serde_json::to_string_pretty(&serde_json::json!({
            "machine": machine,
            "loadavg_after": after,
            "report": report,
        }))?);
    } else {
        if let (Some(s), Some(i)) = (report.rss_slope_kib_per_ied, report.rss_intercept_kib) {
            crate::out(format!(
                "prober RSS: {:.0} KiB per IED over {} -> {} IEDs (medians), {:.1} MiB at none",
                s,
                a.ieds / 2,
                a.ieds,
                i / 1024.0
            ));
        }
        crate::out(format!(
            "servers' RSS: {:.1} MiB for {} IEDs; slowest full sweep {:.1} s: {} (< {:.0} s, every row complete); load average after {:.2}",
            report.servers_rss_kib as f64 / 1024.0,
            a.ieds,
            report.worst_full_sweep_s,
            if report.met { "met" } else { "NOT met" },
            report.target_s,
            gander_measure::machine::Machine::describe().loadavg[0]
        ));
    }
    Ok(if report.met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}
