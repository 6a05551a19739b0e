//! `gander bench gdoi` (argument parsing only; the benchmark is `gander_bench::gdoi`).

use gander_bench::gdoi::{self, GdoiBenchOptions};
use std::process::ExitCode;

/// The IEC 62351-9 key server's registrations and push rekeys.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Registrations timed per phase-1 suite and with ECDSA P-256 certificates (a tenth for
    /// MODP-2048).
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
    /// Instead: the gateway under the process-bus load of `gander bench gateway --profile
    /// process-bus` with its keys rolled by the key server once a second, against the same run
    /// with a static group key (namespace lab, root).
    #[arg(long)]
    pub gateway: bool,
    /// With --gateway: seconds of traffic per run.
    #[arg(long, default_value_t = 60.0, requires = "gateway")]
    pub seconds: f64,
    /// With --gateway: segments per run, interleaved rollover / static (R S S R R S ...), so that
    /// the host's drift falls on both runs alike.
    #[arg(long, default_value_t = 3, requires = "gateway")]
    pub segments: usize,
    /// With --gateway: 5 s per run in one segment each (tests, a first look).
    #[arg(long, requires = "gateway")]
    pub quick: bool,
}

/// `--gateway`: `gander_bench::gdoi_gateway`.
fn gateway(a: &Args) -> anyhow::Result<ExitCode> {
    let opts = gander_bench::gdoi_gateway::RolloverOptions {
        seconds: if a.quick { 5.0 } else { a.seconds },
        segments: if a.quick { 1 } else { a.segments },
        ..Default::default()
    };
    let report = gander_bench::gdoi_gateway::run(&opts, &mut |line| {
        if !a.json {
            crate::out(line)
        }
    })?;
    if a.json {
        crate::out(serde_json::to_string_pretty(&report.json)?);
    }
    Ok(if report.targets_met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(crate) fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.gateway {
        return gateway(&a);
    }
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
            "targets (>= 500 registrations/s PSK P-256, own share <= 10% with PSK and with ECDSA P-256 certificates, push p99 < 100 ms): {}",
            if report.targets_met { "met" } else { "NOT met" }
        ));
    }
    Ok(if report.targets_met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
