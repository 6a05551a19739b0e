use clap::Subcommand;
use std::process::ExitCode;
#[derive(Subcommand)]
pub enum FrameCommand {}
pub fn run(cmd: FrameCommand) -> anyhow::Result<ExitCode> { match cmd {} }
