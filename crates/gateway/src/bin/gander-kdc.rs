//! `gander-kdc --config FILE [--check] [--keylog FILE]`: the IEC 62351-9 key server (GDOI,
//! RFC 6407 / RFC 8052) alone, the same service as `gander kdc` (docs/gdoi.md, "Deployment"),
//! for the box that serves a substation's keys. It lives in the gateway's package because the
//! gateway's `[gdoi]` member already links `gander-gdoi`: one cross build (`make cross`)
//! compiles the key server's code once for both binaries, and this one adds only its link.

#![forbid(unsafe_code)]

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Command line.
#[derive(Parser)]
#[command(
    name = "gander-kdc",
    version,
    about = "IEC 62351-9 GDOI key server for GOOSE, SV, R-GOOSE and R-SV group keys"
)]
struct Args {
    /// Key server configuration (TOML, docs/gdoi.md).
    #[arg(long)]
    config: PathBuf,
    /// Only check the configuration and the state file's permissions, then exit.
    #[arg(long)]
    check: bool,
    /// LAB ONLY: append each phase-1 SA's key to FILE in Wireshark's ikev1_decryption_table
    /// form, so tshark can decrypt the key server's exchanges (and the group keys in them).
    #[arg(long, value_name = "FILE")]
    keylog: Option<PathBuf>,
}

fn run(a: &Args) -> Result<(), String> {
    if a.check {
        let cfg = gander_gdoi::net::kdc_service::check(&a.config).map_err(|e| e.to_string())?;
        println!(
            "{}: ok: {} groups, {} members",
            a.config.display(),
            cfg.policy.groups.len(),
            cfg.policy.members.len()
        );
        return Ok(());
    }
    let keylog = match &a.keylog {
        None => None,
        Some(p) => {
            eprintln!(
                "gander-kdc: WARNING: --keylog {}: phase-1 keys are written in the clear; anyone \
                 with this file and a capture reads the group keys. Lab use only, never in production.",
                p.display()
            );
            let k = gander_gdoi::keylog::KeyLog::open(p)
                .map_err(|e| format!("--keylog {}: {e}", p.display()))?;
            Some(Arc::new(k))
        }
    };
    gander_gdoi::net::kdc_service::run(&a.config, keylog).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let a = Args::parse();
    match run(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gander-kdc: {e}");
            ExitCode::FAILURE
        }
    }
}
