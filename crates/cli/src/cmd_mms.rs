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
    /// gander's fixed model (IMPLD0/LLN0.RP.urcb01 reports) or, with `--scl`, the model of an
    /// IED's SCL file; runs until SIGINT/SIGTERM.
    Server {
        /// TOML configuration (listen, events, [tls], [reports], scl); see docs/mms-peers.md.
        /// Optional with `--scl`: then plain TCP on `--listen`, defaults elsewhere.
        #[arg(long, required_unless_present = "scl")]
        config: Option<PathBuf>,
        /// Serve this SCL file's IED (ICD/CID) instead of the fixed model (overrides `scl`).
        #[arg(long)]
        scl: Option<PathBuf>,
        /// The IED of the SCL file (needed when it has several; overrides `ied`).
        #[arg(long)]
        ied: Option<String>,
        /// Serve only this access point's logical devices (overrides `access_point`).
        #[arg(long)]
        access_point: Option<String>,
        /// Listen address (overrides `listen`; without a config file: 127.0.0.1:102).
        #[arg(long)]
        listen: Option<String>,
        /// Keep the SCL model's values still (by default measurands drift and status points
        /// toggle like a real IED's, with quality and time stamps; sets `values = "static"`).
        #[arg(long = "static", conflicts_with = "stimulus")]
        static_values: bool,
        /// Move only the measurement stimulus of an SCL model: one data change per RCB with
        /// dchg per report period (sets `values = "stimulus"`).
        #[arg(long)]
        stimulus: bool,
    },
    /// The measurement client (RSE 61850CLI): HT loop over `connections`, RT loop over
    /// `reports`; prints a one-line JSON summary; exit 0 on success, 1 on a failed run.
    Client {
        /// TOML configuration (connect, events, [tls], connections, reports); see docs/mms-peers.md.
        #[arg(long)]
        config: PathBuf,
    },
    /// One control operation (IEC 61850-7-2 clause 20) of a named object: select as its
    /// ctlModel requires, operate, wait for the CommandTermination; prints one JSON line.
    /// WRITES to the device; Test is set unless --no-test.
    Control(crate::cmd_control::ControlArgs),
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
        Command::Server {
            config,
            scl,
            ied,
            access_point,
            listen,
            static_values,
            stimulus,
        } => {
            let mut cfg = match &config {
                Some(p) => config::ServerConfig::from_file(p)?,
                None => config::ServerConfig::with_listen(DEFAULT_LISTEN),
            };
            if let Some(l) = listen {
                cfg.listen = l;
            }
            if scl.is_some() {
                cfg.scl = scl;
            }
            if ied.is_some() {
                cfg.ied = ied;
            }
            if access_point.is_some() {
                cfg.access_point = access_point;
            }
            if static_values {
                cfg.values = config::ValueMode::Static;
            }
            if stimulus {
                cfg.values = config::ValueMode::Stimulus;
            }
            run_server(cfg)
        }
        Command::Client { config } => run_client(&config),
        Command::Control(args) => crate::cmd_control::run(args),
    }
}

/// Where `gander mms server --scl F` listens without a config file: the ISO transport port of
/// MMS (RFC 1006), on loopback so that nothing is exposed unless asked (`--listen`).
const DEFAULT_LISTEN: &str = "127.0.0.1:102";

fn run_server(cfg: config::ServerConfig) -> anyhow::Result<ExitCode> {
    let sink = sink(&cfg.events)?;
    let scl = cfg.scl.clone();
    let srv = server::Server::bind(cfg, sink)?;
    // The repairs made to load the SCL model, before READY, on stderr (stdout's first line
    // stays READY for the drivers): docs/scl.md, "Repairs".
    if let Some(path) = &scl {
        for w in srv.scl_warnings() {
            eprintln!("gander: {}: WARNING: {w}", path.display());
        }
    }
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
