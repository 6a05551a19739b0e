//! `gander scl show FILE [--ied NAME] [--json]`: what an SCL file says an IED is (docs/scl.md).
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Show the IED's logical devices and nodes, data sets and report control blocks, with MMS
    /// names; refuse a broken file with the line that is wrong.
    Show(ShowArgs),
}

#[derive(Args)]
pub(crate) struct ShowArgs {
    /// ICD, CID, IID or SCD file.
    file: PathBuf,
    /// The IED (needed when the file has several).
    #[arg(long)]
    ied: Option<String>,
    /// Print the resolved model as JSON.
    #[arg(long)]
    json: bool,
    /// Also list every data attribute as an MMS variable.
    #[arg(long)]
    variables: bool,
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Show(a) => {
            let scl = gander_scl::load(&a.file)
                .map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
            let ied = scl.ied(a.ied.as_deref())?;
            if a.json {
                crate::out(serde_json::to_string_pretty(ied)?);
                return Ok(ExitCode::SUCCESS);
            }
            crate::out(format!(
                "IED {} ({}, {})",
                ied.name,
                ied.manufacturer.as_deref().unwrap_or("-"),
                ied.ied_type.as_deref().unwrap_or("-")
            ));
            for ld in &ied.logical_devices {
                crate::out(format!("  LD {} (MMS domain {})", ld.inst, ld.domain));
                for ln in &ld.logical_nodes {
                    let fcs: Vec<&str> = ln.fcs().iter().map(|f| f.name()).collect();
                    crate::out(format!(
                        "    LN {:<12} {} data objects, FCs {}",
                        ln.name,
                        ln.data_objects.len(),
                        fcs.join(" ")
                    ));
                    if a.variables {
                        for v in ln.variables() {
                            crate::out(format!("      {:<40} {}", v.item, v.btype.mms_type()));
                        }
                    }
                    for ds in &ln.data_sets {
                        crate::out(format!(
                            "      data set {}${} ({} members)",
                            ln.name,
                            ds.name,
                            ds.members.len()
                        ));
                        for m in &ds.members {
                            crate::out(format!(
                                "        {}/{} [{}]",
                                m.domain,
                                m.item,
                                m.fc.name()
                            ));
                        }
                    }
                    for rc in &ln.report_controls {
                        crate::out(format!(
                            "      {} {} -> {} (RptID {}, confRev {}, instances {})",
                            if rc.buffered { "BRCB" } else { "URCB" },
                            rc.name,
                            rc.data_set.as_deref().unwrap_or("no data set"),
                            rc.rpt_id.as_deref().unwrap_or("(reference)"),
                            rc.conf_rev,
                            rc.instances().join(" ")
                        ));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
