//! `gander mms server|client --config F` (argument parsing only; the peers live in
//! `gander_peers`).
use anyhow::Context;
use clap::Subcommand;
use gander_peers::{client, config, events::Sink, server};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// The measurement server (RSE 61850SER): prints `READY <addr>` once listening, serves
    /// IMPLD0/LLN0.RP.urcb01 reports, runs until SIGINT/SIGTERM.
    Server {
        /// TOML configuration (listen, events, [tls], [reports]); see docs/mms-peers.md.
        #[arg(long)]
        config: PathBuf,
    },
    /// The measurement client (RSE 61850CLI): HT loop over `connections`, RT loop over
    /// `reports`; prints a one-line JSON summary; exit 0 on success, 1 on a failed run.
    Client {
        /// TOML configuration (connect, events, [tls], connections, reports); see docs/mms-peers.md.
        #[arg(long)]
        config: PathBuf,
    },
}

fn sink(path: &Option<PathBuf>) -> anyhow::Result<Sink> {
    Ok(match path {
        Some(p) => {
            Sink::file(p).with_context(|| format!("cannot create event log {}", p.display()))?
        }
        None => Sink::null(),
    })
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Server { config } => run_server(&config),
        Command::Client { config } => run_client(&config),
    }
}

fn run_server(path: &Path) -> anyhow::Result<ExitCode> {
    let cfg = config::ServerConfig::from_file(path)?;
    let sink = sink(&cfg.events)?;
    let srv = server::Server::bind(cfg, sink)?;
    server::stop_on_signals(srv.stop_handle());
    crate::out(format_args!("READY {}", srv.local_addr()));
    let summary = srv.run()?;
    crate::out(serde_json::to_string(&summary)?);
    Ok(ExitCode::SUCCESS)
}

fn run_client(path: &Path) -> anyhow::Result<ExitCode> {
    let cfg = config::ClientConfig::from_file(path)?;
    let sink = sink(&cfg.events)?;
    let tls = match &cfg.tls {
        Some(p) => Some(gander_tls::backend::open(p).context("TLS set-up")?),
        None => None,
    };
    let s = client::run(&cfg, tls.as_deref(), &sink);
    crate::out(serde_json::to_string(&s)?);
    Ok(if s.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
