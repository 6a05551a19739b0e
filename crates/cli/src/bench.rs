//! `gander bench ...`: argument parsing only; the benchmarks live in `gander-bench`.

use anyhow::Context;
use clap::{Args, Subcommand};
use gander_bench::crypto::{self, CryptoConfig, Event};
use gander_bench::{crypto_report, gateway};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum BenchCommand {
    /// Per-operation cost of the security library (gateway paper Table 8, Figures 4-5;
    /// Farooq et al. Table 1).
    Crypto(CryptoArgs),
    /// The security gateway in the lab (gateway paper Tables 9-10): latency, bandwidth, ping,
    /// frame rate and junk flood, as ratios against the direct path.
    Gateway(GatewayArgs),
    /// MMS over TLS: full HT against a bare TLS handshake, and the report rate one server
    /// sustains to one client, as ratios from one run.
    Mms(crate::bench_mms::Args),
    /// Reading SCL files: generated SCDs of 1, 10 and 100 relay-sized IEDs and the files
    /// given; time per file and per IED (min / median / max) and the per-IED ratio 100/10.
    Scl(crate::bench_scl::Args),
    /// `gander audit` on a generated mixed capture (8 SV streams, GOOSE, R-GOOSE, MMS over
    /// TLS): frames/s without keys and with every tag verified, tshark on the same capture.
    Audit(crate::bench_audit::Args),
    /// The IEC 62351-9 key server: registrations per second with PSK and with ECDSA P-256
    /// certificates against the bare crypto of one registration, and a push rekey to 100
    /// members (docs/gdoi.md).
    Gdoi(crate::bench_gdoi::Args),
    /// One sweep of a substation (`gander probe --scd`): N IEDs in namespaces, plain and TLS,
    /// timed against the 2-minute target, per-IED p50/p99, the prober's peak RSS and its slope.
    Fleet(crate::bench_fleet::Args),
}

#[derive(Args)]
pub(crate) struct CryptoArgs {
    /// Samples per row [default: 500000, as the paper; 3000 with --quick].
    #[arg(long)]
    pub reps: Option<usize>,
    /// A short run (3,000 samples per row, RSA signing capped at 200).
    #[arg(long)]
    pub quick: bool,
    /// Print only the rows, as a JSON array, on stdout (machine and targets go to stderr).
    #[arg(long)]
    pub json: bool,
    /// Also write every kept raw sample to this CSV file (one line per sample: the row, the
    /// batch size and the batch's total in ns).
    #[arg(long, value_name = "PATH")]
    pub samples: Option<PathBuf>,
    /// Exit with status 1 if a target is not met.
    #[arg(long)]
    pub check: bool,
}

/// `gander bench gateway` options (the benchmark is `gander_bench::gateway`).
#[derive(Args, Debug, Clone)]
pub(crate) struct GatewayArgs {
    /// R-GOOSE messages per algorithm and path at the 4 ms rate.
    #[arg(long, default_value_t = 1000)]
    pub samples: usize,
    /// A short run (200 samples, 2 s iperf3, 1 s flood).
    #[arg(long)]
    pub quick: bool,
    /// Lab namespace prefix (created and removed by the benchmark).
    #[arg(long, default_value = "gbench")]
    pub prefix: String,
    /// Skip the iperf3 bandwidth test.
    #[arg(long)]
    pub no_iperf: bool,
    /// Junk frames per second from the attacker position during the flood test.
    #[arg(long, default_value_t = 100_000)]
    pub flood_rate: u64,
    /// Also print the results as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Traffic: `station` (the gateway paper's tests) or `process-bus` (8 SV streams at
    /// 4800 frames/s plus GOOSE, IEC 61850-9-2LE).
    #[arg(long, value_enum, default_value = "station")]
    pub profile: ProfileArg,
}

/// `--profile` of `gander bench gateway`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProfileArg {
    /// R-GOOSE latency, iperf3, ping, core rate and flood (gateway paper Tables 9-10).
    Station,
    /// 8 SV streams x 4800 frames/s + GOOSE every 4 ms; SV one-way latency and loss table.
    ProcessBus,
}

fn gateway(a: GatewayArgs) -> anyhow::Result<ExitCode> {
    let opts = gateway::GatewayOptions {
        samples: a.samples,
        quick: a.quick,
        prefix: a.prefix,
        no_iperf: a.no_iperf,
        flood_rate: a.flood_rate,
        profile: match a.profile {
            ProfileArg::Station => gateway::BenchProfile::Station,
            ProfileArg::ProcessBus => gateway::BenchProfile::ProcessBus,
        },
    };
    let report = gateway::run(&opts, &mut |line| crate::out(line))?;
    if a.json {
        crate::out(report.json);
    }
    Ok(if report.targets_met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(crate) fn run(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Gateway(a) => gateway(a),
        BenchCommand::Mms(a) => crate::bench_mms::run(a),
        BenchCommand::Scl(a) => crate::bench_scl::run(a),
        BenchCommand::Audit(a) => crate::bench_audit::run(a),
        BenchCommand::Gdoi(a) => crate::bench_gdoi::run(a),
        BenchCommand::Fleet(a) => crate::bench_fleet::run(a),
        BenchCommand::Crypto(a) => crypto(a),
    }
}

fn crypto(a: CryptoArgs) -> anyhow::Result<ExitCode> {
    let cfg = if a.quick {
        CryptoConfig::quick(a.reps)
    } else {
        CryptoConfig::new(a.reps.unwrap_or(CryptoConfig::DEFAULT_REPS))
    };
    let mut csv = match &a.samples {
        Some(p) => {
            let f = std::fs::File::create(p)
                .with_context(|| format!("cannot create {}", p.display()))?;
            let mut w = std::io::BufWriter::new(f);
            writeln!(
                w,
                "group,algorithm,key_bits,bytes,impl,op,batch,sample,batch_ns"
            )?;
            Some(w)
        }
        None => None,
    };
    let show_progress = std::io::stderr().is_terminal();
    let mut io_error: Option<std::io::Error> = None;
    let report = crypto::run(&cfg, &mut |ev| match ev {
        Event::Algorithm(name) if show_progress => eprint!("\r\x1b[Kmeasuring {name} ..."),
        Event::Algorithm(_) => {}
        Event::Row(row, timing) => {
            if let (Some(w), None) = (csv.as_mut(), io_error.as_ref()) {
                let kb = row.key_bits.map(|b| b.to_string()).unwrap_or_default();
                let group = serde_json::to_value(row.group)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                for (i, ns) in timing.samples.iter().enumerate() {
                    if let Err(e) = writeln!(
                        w,
                        "{group},{},{kb},{},{},{},{},{i},{ns}",
                        row.algorithm,
                        row.bytes,
                        row.imp.name(),
                        row.op.name(),
                        timing.batch
                    ) {
                        io_error = Some(e);
                        break;
                    }
                }
            }
        }
    })?;
    if show_progress {
        eprint!("\r\x1b[K");
    }
    if let Some(e) = io_error {
        return Err(e).context("writing the samples file");
    }
    if let Some(mut w) = csv {
        w.flush().context("writing the samples file")?;
    }
    let targets = crypto_report::targets(&report);
    if a.json {
        crate::out(crypto_report::render_json(&report));
        eprint!("{}", crypto_report::render_header(&report));
        eprint!("{}", crypto_report::render_targets(&targets));
    } else {
        crate::out(crypto_report::render_text(&report).trim_end());
    }
    Ok(if a.check && targets.iter().any(|t| !t.pass) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
