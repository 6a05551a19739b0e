//! `gander lab up|down|status`: the network-namespace topology (see `docs/lab.md`).
use clap::{Args, Subcommand};
use gander_lab::{Lab, Mode, Role};
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Create the namespaces, veth pairs and bridges (idempotent).
    Up(UpArgs),
    /// Remove every namespace of the lab (idempotent).
    Down(PrefixArgs),
    /// Show whether the lab is up, its mode and its namespaces.
    Status(PrefixArgs),
}

#[derive(Args)]
pub(crate) struct PrefixArgs {
    /// Namespace name prefix: namespaces are PREFIX-ied, -gw, -net, -sub, -atk.
    #[arg(long, default_value = "gander")]
    pub prefix: String,
}

#[derive(Args)]
pub(crate) struct UpArgs {
    #[command(flatten)]
    pub p: PrefixArgs,
    /// Gateway namespace: l2 (AF_PACKET driver), bridge (NFQUEUE driver), routed (UDP relay).
    #[arg(long, default_value = "l2")]
    pub mode: Mode,
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Up(a) => {
            let lab = Lab::new(&a.p.prefix, a.mode);
            lab.up()?;
            crate::out(format!(
                "lab {} up ({} mode): namespaces {}",
                a.p.prefix,
                a.mode,
                Role::ALL.map(|r| lab.ns(r)).join(", ")
            ));
        }
        Command::Down(a) => {
            Lab::down_prefix(&a.prefix)?;
            crate::out(format!("lab {} down", a.prefix));
        }
        Command::Status(a) => match Lab::existing_mode(&a.prefix) {
            Some(m) if Lab::new(&a.prefix, m).is_up() => {
                crate::out(format!("lab {} is up ({m} mode)", a.prefix))
            }
            _ => {
                crate::out(format!("lab {} is down", a.prefix));
                return Ok(ExitCode::from(1));
            }
        },
    }
    Ok(ExitCode::SUCCESS)
}
