//! `gander bench audit` (argument parsing only; the benchmark is `gander_bench::audit`).

use std::path::PathBuf;
use std::process::ExitCode;

/// Frames per second of `gander audit` on a generated mixed capture, with and without keys,
/// against tshark on the same capture; peak resident memory.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Seconds of traffic to generate (8 SV streams at 4800 frames/s, GOOSE, R-GOOSE, MMS/TLS).
    #[arg(long, default_value_t = 5)]
    pub seconds: u32,
    /// Timed passes each way (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Directory for the temporary pcap tshark reads (and the FIFO of --size).
    #[arg(long, default_value = "/tmp")]
    pub dir: PathBuf,
    /// Print the result as JSON (machine included).
    #[arg(long)]
    pub json: bool,
    /// Exit with status 1 if a target is not met.
    #[arg(long)]
    pub check: bool,
    /// Live instead: `gander audit --interface` in the namespace lab under the process-bus load
    /// (8 SV streams at 4800 frames/s plus GOOSE), `--runs` consecutive runs of `--seconds`.
    #[arg(long)]
    pub live: bool,
    /// Lab prefix of the live benchmark.
    #[arg(long, default_value = "gbal")]
    pub prefix: String,
    /// Instead: stream SIZE GB (10^9 octets) of generated capture through a FIFO in --dir into
    /// `gander audit` and print its peak resident memory against the size read (target: a
    /// 10 GB capture in < 200 MiB).
    #[arg(long, value_name = "GB")]
    pub size: Option<f64>,
}

/// `--size`: the peak resident set of `gander audit` against the capture's size.
fn run_size(a: &Args, gb: f64) -> anyhow::Result<ExitCode> {
    let machine = gander_measure::machine::Machine::describe();
    let exe = std::env::current_exe()?;
    let r = gander_bench::audit_memory::run(gb, &exe, &a.dir)?;
    let mib = |k: u64| k as f64 / 1024.0;
    let met = mib(r.peak_rss_kib) < 200.0;
    if a.json {
        crate::out(serde_json::to_string_pretty(&serde_json::json!({
            "machine": machine,
            "report": r,
        }))?);
    } else {
        crate::out(format!("gander bench audit --size {gb}: {machine}"));
        crate::out(format!(
            "{:.2} GB, {} frames streamed into `gander audit` in {:.0} s (exit code {})",
            r.bytes as f64 / 1e9,
            r.frames,
            r.wall_s,
            r.exit_code.map_or_else(|| "none".into(), |c| c.to_string())
        ));
        for s in &r.samples {
            crate::out(format!(
                "  after {:>7.2} GB ({:>11} frames): peak RSS {:>7.1} MiB",
                s.bytes as f64 / 1e9,
                s.frames,
                mib(s.peak_rss_kib)
            ));
        }
        crate::out(format!(
            "peak RSS of gander audit: {:.1} MiB (target < 200 MiB); of the generator: {}",
            mib(r.peak_rss_kib),
            r.generator_peak_rss_kib
                .map_or_else(|| "unknown".into(), |k| format!("{:.1} MiB", mib(k)))
        ));
    }
    Ok(if a.check && !met {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub(crate) fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.live {
        return crate::bench_audit_live::run(&a);
    }
    if let Some(gb) = a.size {
        return run_size(&a, gb);
    }
    let machine = gander_measure::machine::Machine::describe();
    let r = gander_bench::audit::run(a.seconds, a.runs, &a.dir)?;
    if a.json {
        crate::out(serde_json::to_string_pretty(&serde_json::json!({
            "machine": machine,
            "report": r,
        }))?);
    } else {
        crate::out(format!("gander bench audit: {machine}"));
        crate::out(format!(
            "{} frames ({} s of mixed traffic), median of {} passes",
            r.frames,
            a.seconds,
            a.runs.max(1)
        ));
        crate::out(format!(
            "without keys: {:>12.0} frames per CPU second (target >= 1 000 000), {:.0} per wall second",
            r.fps_without_keys, r.fps_wall.0
        ));
        crate::out(format!(
            "HMAC-SHA256-128 verified: {:>12.0} frames per CPU second (target >= 500 000), {:.0} per wall second",
            r.fps_with_keys, r.fps_wall.1
        ));
        match (r.fps_tshark, &r.tshark_error) {
            (Some(t), _) => crate::out(format!(
                "tshark: {t:>12.0} frames per CPU second; audit without keys / tshark = {:.1} (target >= 10)",
                r.fps_without_keys / t
            )),
            (None, Some(e)) => crate::out(format!("tshark: not measured ({e})")),
            _ => {}
        }
        if let Some(m) = r.peak_rss_mib {
            crate::out(format!(
                "peak RSS {m:.1} MiB (the benchmark holds the capture in memory)"
            ));
        }
        crate::out(format!(
            "findings on the clean capture with keys: {}",
            r.findings_with_keys
        ));
    }
    Ok(if a.check && !r.targets_met {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
