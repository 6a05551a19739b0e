//! `gander-gateway --config FILE [--check]`: the security gateway alone, the same service as
//! `gander gateway`, for a box that runs nothing else (docs/gateway.md, "Deployment"). It links
//! the codecs, the security library and the gateway only, so it cross-builds for aarch64 and
//! armv7 (`make cross`) with OpenSSL as its one C dependency.

#![forbid(unsafe_code)]

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// Command line.
#[derive(Parser)]
#[command(
    name = "gander-gateway",
    version,
    about = "IEC 62351-6 bump-in-the-wire gateway for GOOSE, SV, R-GOOSE and R-SV"
)]
struct Args {
    /// Gateway configuration (TOML, docs/gateway.md).
    #[arg(long)]
    config: PathBuf,
    /// Only read and check the configuration and keys, then exit.
    #[arg(long)]
    check: bool,
}

fn main() -> ExitCode {
    let a = Args::parse();
    let r = if a.check {
        gander_gateway::service::check(&a.config).map(|warnings| {
            for w in &warnings {
                eprintln!("gander-gateway: warning: {w}");
            }
            println!("{}: ok", a.config.display())
        })
    } else {
        gander_gateway::service::run(&a.config).map(drop)
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gander-gateway: {}", gander_gateway::service::chain(&e));
            ExitCode::FAILURE
        }
    }
}
