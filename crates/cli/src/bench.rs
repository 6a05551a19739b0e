//! `gander bench ...`: argument parsing only; the benchmarks live in `gander-imp`.

use clap::{Args, Subcommand};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Per-operation cost of the security library (gateway paper Table 8, Figures 4-5;
    /// Farooq et al. Table 1).
    Crypto(CryptoArgs),
    /// The security gateway in the lab (gateway paper Tables 9-10): latency, bandwidth, ping,
    /// frame rate and junk flood, as ratios against the direct path.
    Gateway(crate::bench_gateway::Args),
}

#[derive(Args)]
pub struct CryptoArgs {
    /// Repetitions per row (the paper used 500,000).
    #[arg(long, default_value_t = 500_000)]
    pub reps: usize,
    /// A short run (a few thousand repetitions per row).
    #[arg(long)]
    pub quick: bool,
    /// Print the rows as a JSON array.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Gateway(a) => crate::bench_gateway::run(a),
        BenchCommand::Crypto(a) => {
            let _ = (a.reps, a.quick, a.json);
            anyhow::bail!("gander bench crypto is being written (crates/imp)")
        }
    }
}
