//! `gander run`, `gander scenarios`, `gander report` (argument parsing only).
use clap::Subcommand;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum Command {}

pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {}
}
