//! `gander gateway --config FILE`: the bump-in-the-wire (see `docs/gateway.md`).
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run the security gateway (drivers l2, nfqueue, udp) until SIGTERM/SIGINT.
    Gateway(GatewayArgs),
}

#[derive(Args)]
pub(crate) struct GatewayArgs {
    /// Gateway configuration (TOML, docs/gateway.md).
    #[arg(long)]
    pub config: PathBuf,
    /// Only read and check the configuration and keys, then exit.
    #[arg(long)]
    pub check: bool,
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Gateway(a) => {
            if a.check {
                for w in gander_gateway::service::check(&a.config)? {
                    eprintln!("gander gateway: warning: {w}");
                }
                crate::out(format!("{}: ok", a.config.display()));
                return Ok(ExitCode::SUCCESS);
            }
            gander_gateway::service::run(&a.config)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
