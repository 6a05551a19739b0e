//! `gander`: IEC 62351 security on IEC 61850 traffic. This binary only parses arguments and calls
//! the library crates; see `docs/` for what each command does.

#![forbid(unsafe_code)]

mod bench;
mod bench_audit;
mod bench_audit_live;
mod bench_fleet;
mod bench_gdoi;
mod bench_mms;
mod bench_scl;
mod cmd_audit;
mod cmd_audit_live;
mod cmd_control;
mod cmd_fleet;
mod cmd_gateway;
mod cmd_gdoi;
mod cmd_lab;
mod cmd_mms;
mod cmd_probe;
mod cmd_run;
mod cmd_scl;
mod cmd_tls;
mod error_text;
mod frame;
mod gdoi_member;
mod pcap_io;
mod protect_fragments;
mod show_goose;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gander",
    version,
    about = "IEC 62351 security for IEC 61850 GOOSE, R-GOOSE, R-SV and MMS"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show, verify or protect the GOOSE / R-GOOSE / R-SV frames of a capture.
    Frame {
        #[command(subcommand)]
        command: frame::FrameCommand,
    },
    /// Benchmarks that print ratios against a baseline measured in the same run.
    Bench {
        #[command(subcommand)]
        command: bench::BenchCommand,
    },
    /// MMS over TLS peers (IEC 62351-3/-4).
    Mms {
        #[command(subcommand)]
        command: cmd_mms::Command,
    },
    /// Probe any IEC 61850 server: model, TLS connection, HT, read RTT, and (--reports) reports.
    Probe(Box<cmd_probe::ProbeArgs>),
    /// Scenario runs and reports (the impact measurement platform).
    #[command(flatten)]
    Run(cmd_run::Command),
    /// TLS: cipher-suite catalogue and PKI.
    #[command(flatten)]
    Tls(cmd_tls::Command),
    /// The network-namespace lab.
    Lab {
        #[command(subcommand)]
        command: cmd_lab::Command,
    },
    /// The security gateway.
    #[command(flatten)]
    Gateway(cmd_gateway::Command),
    /// The IEC 62351 security posture of the IEC 61850 traffic in captures (docs/audit.md).
    Audit(cmd_audit::AuditArgs),
    /// IEC 62351-9 key management: `gander kdc`, `gander gdoi register` (docs/gdoi.md).
    #[command(flatten)]
    Gdoi(cmd_gdoi::Command),
    /// IEC 61850-6 SCL files (ICD/CID): the data model of an IED.
    Scl {
        #[command(subcommand)]
        command: cmd_scl::Command,
    },
}

/// Prints one line to stdout. A closed pipe (`gander ... | head`) ends the program quietly
/// instead of panicking inside `println!`.
pub fn out(line: impl std::fmt::Display) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    if let Err(e) = writeln!(o, "{line}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("gander: cannot write to stdout: {e}");
        std::process::exit(2);
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Frame { command } => frame::run(command),
        Command::Bench { command } => bench::run(command),
        Command::Mms { command } => cmd_mms::run(command),
        Command::Tls(command) => cmd_tls::run(command),
        Command::Probe(args) => cmd_probe::run(*args),
        Command::Run(command) => cmd_run::run(command),
        Command::Lab { command } => cmd_lab::run(command),
        Command::Gateway(command) => cmd_gateway::run(command),
        Command::Scl { command } => cmd_scl::run(command),
        Command::Audit(args) => cmd_audit::run(args),
        Command::Gdoi(command) => cmd_gdoi::run(command),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gander: {}", error_text::error_text(&e));
            ExitCode::from(2)
        }
    }
}
