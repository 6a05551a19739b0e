//! `gander bench audit --live` (argument handling only; the benchmark is
//! `gander_bench::audit_live`).

use std::process::ExitCode;

pub(crate) fn run(a: &crate::bench_audit::Args) -> anyhow::Result<ExitCode> {
    let json = a.json;
    // With --json the lines as measured go to stderr, the JSON alone to stdout.
    let r = gander_bench::audit_live::run(f64::from(a.seconds), a.runs, &a.prefix, &mut |l| {
        if json {
            eprintln!("{l}");
        } else {
            crate::out(l);
        }
    })?;
    if json {
        crate::out(serde_json::to_string_pretty(&serde_json::json!({
            "machine": gander_measure::machine::Machine::describe(),
            "report": r,
        }))?);
    }
    Ok(if a.check && !r.targets_met {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
