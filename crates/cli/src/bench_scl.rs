//! `gander bench scl [FILE...]` (argument parsing only; the benchmark is `gander_bench::scl`).

use gander_bench::scl::{self, SclBenchOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// Time to read SCL files: generated SCDs of 1, 10 and 100 relay-sized IEDs, then FILEs.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// SCL files to read as well (ICD, CID, IID, SCD, SED).
    pub files: Vec<PathBuf>,
    /// Timed reads per input (after one warm-up read).
    #[arg(long, default_value_t = 7)]
    pub runs: usize,
    /// Only the files given, not the generated SCDs.
    #[arg(long)]
    pub files_only: bool,
    /// Print the result as JSON (machine included).
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn run(a: Args) -> anyhow::Result<ExitCode> {
    let machine = gander_measure::machine::Machine::describe();
    if !a.json {
        crate::out(format!(
            "gander bench scl: {} ({} CPUs, {} build), {} timed reads per input",
            machine.cpu_model,
            machine.cores,
            machine.build_profile,
            a.runs.max(1)
        ));
    }
    let opts = SclBenchOptions {
        runs: a.runs,
        files_only: a.files_only,
    };
    let report = scl::run(&opts, &a.files, &mut |line| {
        if !a.json {
            crate::out(line)
        }
    })?;
    if a.json {
        crate::out(serde_json::to_string_pretty(&serde_json::json!({
            "machine": machine,
            "report": report,
        }))?);
    } else if let Some(r) = report.per_ied_ratio_100_10 {
        crate::out(format!(
            "per-IED median, 100 IEDs / 10 IEDs: {r:.2} (1.00 is linear in the file size)"
        ));
    }
    Ok(ExitCode::SUCCESS)
}
