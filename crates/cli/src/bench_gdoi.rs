//! `gander bench gdoi` (argument parsing only; the benchmark is `gander_bench::gdoi`).

use gander_bench::gdoi::{self, GdoiBenchOptions};
use std::process::ExitCode;

/// The IEC 62351-9 key server's registrations and push rekeys.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Registrations timed per phase-1 suite (a tenth for MODP-2048).
    #[arg(long, default_value_t = 2000)]
    pub registrations: usize,
    /// Members of the push rekey.
    #[arg(long, default_value_t = 100)]
    pub members: usize,
    /// Rollovers pushed.
    #[arg(long, default_value_t = 100)]
    pub rekeys: usize,
    /// Print the result as JSON (machine included).
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn run(a: Args) -> anyhow::Result<ExitCode> {
    let machine = gander_measure::machine::Machine::describe();
    if !a.json {
        crate::out(format!(
            "gander bench gdoi: {} ({} CPUs, {} build), load {:.2} {:.2} {:.2}",
            machine.cpu_model,
            machine.cores,
            machine.build_profile,
            machine.loadavg[0],
            machine.loadavg[1],
            machine.loadavg[2]
        ));
    }
    let opts = GdoiBenchOptions {
        registrations: a.registrations.max(1),
        members: a.members.max(1),
        rekeys: a.rekeys.max(1),
    };
    let report = gdoi::run(&opts, &mut |line| {
        if !a.json {
            crate::out(line)
        }
    })?;
    if a.json {
        crate::out(serde_json::to_string_pretty(&serde_json::json!({
            "machine": machine,
            "report": report,
        }))?);
    } else {
        crate::out(format!(
            "targets (>= 500 registrations/s PSK P-256, own share <= 10%, push p99 < 100 ms): {}",
            if report.targets_met { "met" } else { "NOT met" }
        ));
    }
    Ok(if report.targets_met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
