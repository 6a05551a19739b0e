//! `gander scl show FILE [--ied NAME] [--json]`: what an SCL file says an IED is (docs/scl.md).
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Show each valid IED's logical devices and nodes, data sets and control blocks, with MMS
    /// names, every defect repaired in it (WARNING, with its line and the repair), and each
    /// refused IED with its line and problem. Exit 0: all valid as written; 4: all valid, some
    /// only with repairs; 3: some refused; 1: none valid; 2: bad invocation.
    Show(ShowArgs),
}

#[derive(Args)]
pub(crate) struct ShowArgs {
    /// ICD, CID, IID or SCD file.
    file: PathBuf,
    /// Only this IED (default: every IED of the file).
    #[arg(long)]
    ied: Option<String>,
    /// Print the resolved model as JSON.
    #[arg(long)]
    json: bool,
    /// Also list every data attribute as an MMS variable.
    #[arg(long)]
    variables: bool,
}

/// Exit codes of `scl show` (docs/scl.md): every IED shown is valid; some IEDs of the file
/// were refused (the valid ones are shown); none is valid (the file, or the IED asked for, is
/// refused); every IED shown loaded, but some only with repairs (its own code, so a check in a
/// script sees a file that is not clean without reading the output, while 0/3/1 keep their
/// meaning; refusals take precedence). 2, bad invocation, is main's.
const EXIT_SOME_REFUSED: u8 = 3;
const EXIT_NONE_VALID: u8 = 1;
const EXIT_REPAIRED: u8 = 4;

/// 0, or [`EXIT_REPAIRED`] when an IED shown carries warnings.
fn clean_or_repaired<'a>(ieds: impl IntoIterator<Item = &'a gander_scl::Ied>) -> ExitCode {
    if ieds.into_iter().any(|i| !i.warnings.is_empty()) {
        ExitCode::from(EXIT_REPAIRED)
    } else {
        ExitCode::SUCCESS
    }
}

/// One line per repair made in `ied`: `IED X WARNING: FILE: line L, column C: ...; repaired: ...`
/// (the REFUSED lines' shape, so one grep finds both).
fn print_warnings(ied: &gander_scl::Ied, file: &impl std::fmt::Display) {
    for w in &ied.warnings {
        crate::out(format!("IED {} WARNING: {file}: {w}", ied.name));
    }
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Show(a) => show(&a),
    }
}

fn show(a: &ShowArgs) -> anyhow::Result<ExitCode> {
    let file = a.file.display();
    let scl = match gander_scl::load(&a.file) {
        Ok(s) => s,
        Err(
            e @ gander_scl::SclError {
                kind: gander_scl::SclErrorKind::Io { .. },
                ..
            },
        ) => return Err(anyhow::anyhow!("{e}")),
        Err(e) => {
            eprintln!("gander: {file}: {e}");
            return Ok(ExitCode::from(EXIT_NONE_VALID));
        }
    };
    if let Some(name) = a.ied.as_deref() {
        return Ok(match scl.ied(Some(name)) {
            Ok(ied) => {
                if a.json {
                    crate::out(serde_json::to_string_pretty(ied)?);
                } else {
                    print_ied(ied, a.variables);
                    print_warnings(ied, &file);
                }
                clean_or_repaired([ied])
            }
            Err(e) if e.ied.is_some() => {
                eprintln!("gander: {file}: {e}");
                ExitCode::from(EXIT_NONE_VALID)
            }
            Err(e) => return Err(anyhow::anyhow!("{file}: {e}")),
        });
    }
    if a.json {
        crate::out(serde_json::to_string_pretty(&scl)?);
    } else {
        for ied in &scl.ieds {
            print_ied(ied, a.variables);
        }
        for ied in &scl.ieds {
            print_warnings(ied, &file);
        }
        for r in &scl.refused {
            crate::out(format!("IED {} REFUSED: {file}: {}", r.name, r.error));
        }
    }
    Ok(if scl.refused.is_empty() {
        clean_or_repaired(&scl.ieds)
    } else if scl.ieds.is_empty() {
        ExitCode::from(EXIT_NONE_VALID)
    } else {
        ExitCode::from(EXIT_SOME_REFUSED)
    })
}

fn print_ied(ied: &gander_scl::Ied, variables: bool) {
    crate::out(format!(
        "IED {} ({}, {})",
        ied.name,
        ied.manufacturer.as_deref().unwrap_or("-"),
        ied.ied_type.as_deref().unwrap_or("-")
    ));
    if ied.logical_devices.is_empty() {
        // A valid IED with no Server (a client-only IED, a switch an SCD lists for its
        // addresses): said, so an empty listing is not taken for a model that failed to load.
        let outside = ied
            .warnings
            .iter()
            .any(|w| matches!(w.repair, gander_scl::Repair::LDeviceOutsideServer { .. }));
        crate::out(if outside {
            "  no Server: no logical device served (its LDevices sit outside a Server: see the warnings); nothing to serve"
        } else {
            "  no Server: no logical device (a client-only IED); nothing to serve"
        });
    }
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
            if variables {
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
                    crate::out(format!("        {} [{}]", m, m.fc.name()));
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
            for g in &ln.gse_controls {
                crate::out(format!(
                    "      GoCB {} -> {} (GoID {}, confRev {}{})",
                    g.name,
                    g.data_set.as_deref().unwrap_or("no data set"),
                    g.app_id,
                    g.conf_rev,
                    address(g.address.as_ref())
                ));
            }
            for s in &ln.sv_controls {
                crate::out(format!(
                    "      {} {} -> {} (SvID {}, smpRate {}, nofASDU {}, confRev {}{})",
                    if s.multicast { "MSVCB" } else { "USVCB" },
                    s.name,
                    s.data_set.as_deref().unwrap_or("no data set"),
                    s.smv_id,
                    s.smp_rate,
                    s.nof_asdu,
                    s.conf_rev,
                    address(s.address.as_ref())
                ));
            }
            if let Some(sg) = &ln.setting_control {
                crate::out(format!(
                    "      SGCB: {} setting groups, active {}",
                    sg.num_of_sgs, sg.act_sg
                ));
            }
        }
    }
}

/// `, MAC 01-0C-CD-01-00-01 APPID 3001 VLAN 00A/4` for what the Communication section gives.
fn address(a: Option<&gander_scl::CommAddress>) -> String {
    let Some(a) = a else {
        return String::new();
    };
    let mut s = String::new();
    if let Some(m) = a.mac {
        let m: Vec<String> = m.iter().map(|o| format!("{o:02X}")).collect();
        s.push_str(&format!(", MAC {}", m.join("-")));
    }
    if let Some(id) = a.app_id {
        s.push_str(&format!(", APPID {id:04X}"));
    }
    if let Some(v) = a.vlan_id {
        s.push_str(&format!(", VLAN {v:03X}/{}", a.vlan_priority.unwrap_or(0)));
    }
    s
}
