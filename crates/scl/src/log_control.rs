//! `LogControl` and `Log` of a logical node (IEC 61850-6 §9.3.7 / the schema's tLogControl
//! and tLog): the configured log control blocks and the logs they write to, with the schema's
//! defaults (intgPd 0, logEna true, reasonCode true, lnClass LLN0, prefix and lnInst empty,
//! ldInst the LCB's own LD; TrgOps flags false except gi).
//!
//! A server serves an LCB as IEC 61850-8-1's `LN$LG$name` structure, whose LogRef names the
//! log `LD/LN$logName` (IEC 61850-7-2 §17.3.2.2: the log the LCB's entries go to); the LD
//! named by `ldInst` is resolved once every LD of the IED is known ([`resolve_log_refs`]). An
//! unnamed `Log` is the LN's [`GENERAL_LOG`], which an LCB without `logName` names.

use crate::error::{SclError, SclErrorKind};
use crate::model::{DataSet, LogicalDevice, TrgOps};
use crate::parse::{kids, Ctx};
use crate::warning::Repair;
use crate::xml::SclAttr;
use roxmltree::Node;
use serde::Serialize;

/// The name of an LN's unnamed `Log`, which an LCB without `logName` writes to (libiec61850's
/// model generator and server use this name).
pub(crate) const GENERAL_LOG: &str = "GeneralLog";

/// A log control block (`LogControl`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LogControl {
    /// `name` (the LCB's name, `LN$LG$name` in MMS).
    pub name: String,
    /// `datSet`: a data set of the same LN, if given.
    pub data_set: Option<String>,
    /// `ldInst` of the log, if given (else the LCB's own LD).
    pub log_ld_inst: Option<String>,
    /// The LN holding the log: `prefix` + `lnClass` + `lnInst` (default `LLN0`).
    pub log_ln: String,
    /// `logName` (empty: the file names no log).
    pub log_name: String,
    /// The log's object reference as 8-1 serves LogRef, `LD/LN$logName` with the LD's MMS
    /// domain; without a `logName`, the unnamed log (`GeneralLog`) of the LCB's own LN.
    /// Set once every LD of the IED is read.
    pub log_ref: String,
    /// `TrgOps`.
    pub trg_ops: TrgOps,
    /// `intgPd`, ms.
    pub intg_pd: u32,
    /// `logEna`: logging enabled at start.
    pub log_ena: bool,
    /// `reasonCode`: entries carry the reason for inclusion.
    pub reason_code: bool,
    /// The line of the element (for errors found later).
    #[serde(skip)]
    pub line: u32,
}

/// The log control blocks and logs of one LN.
#[derive(Default)]
pub(crate) struct LnLogs {
    pub(crate) controls: Vec<LogControl>,
    pub(crate) logs: Vec<String>,
}

/// Reads the `LogControl` and named `Log` elements of `ln`; `data_sets` are its data sets.
pub(crate) fn read(cx: &Ctx, ln: Node, data_sets: &[DataSet]) -> Result<LnLogs, SclError> {
    const E: &str = "LogControl";
    let mut out = LnLogs::default();
    for lc in kids(ln, E) {
        // An LCB that cannot be read is left out with a warning (docs/scl.md, "Repairs");
        // two of one name refuse the IED (one MMS name).
        let c = match one(cx, lc, data_sets) {
            Ok(c) => c,
            Err(e) => {
                cx.repaired(
                    e,
                    Repair::ControlBlockLeftOut {
                        name: lc.scl_attr("name").unwrap_or("(unnamed)").into(),
                    },
                );
                continue;
            }
        };
        if out.controls.iter().any(|x| x.name == c.name) {
            return Err(cx.err(
                lc,
                SclErrorKind::Duplicate {
                    what: E,
                    name: c.name,
                },
            ));
        }
        out.controls.push(c);
    }
    for l in kids(ln, "Log") {
        // The schema lets a Log go without a name (the LN's default log); libiec61850's model
        // generator calls it GeneralLog, and an LCB without logName writes to it.
        let name = l
            .scl_attr("name")
            .filter(|s| !s.is_empty())
            .unwrap_or(GENERAL_LOG);
        if out.logs.iter().any(|x| x == name) {
            return Err(cx.err(
                l,
                SclErrorKind::Duplicate {
                    what: "Log",
                    name: name.into(),
                },
            ));
        }
        out.logs.push(name.into());
    }
    Ok(out)
}

/// One `LogControl`.
fn one(cx: &Ctx, lc: Node, data_sets: &[DataSet]) -> Result<LogControl, SclError> {
    const E: &str = "LogControl";
    let name = cx.name(lc, E, "name")?.to_string();
    let data_set = match lc.scl_attr("datSet").filter(|s| !s.is_empty()) {
        None => None,
        Some(ds) if data_sets.iter().any(|d| d.name == ds) => Some(ds.to_string()),
        Some(ds) => {
            return Err(cx.err(
                lc,
                SclErrorKind::UnknownDataSet {
                    control: name,
                    data_set: ds.into(),
                },
            ))
        }
    };
    let trg_ops = match kids(lc, "TrgOps").next() {
        None => TrgOps {
            gi: true,
            ..Default::default()
        },
        Some(t) => TrgOps {
            dchg: cx.flag(t, "TrgOps", "dchg", false)?,
            qchg: cx.flag(t, "TrgOps", "qchg", false)?,
            dupd: cx.flag(t, "TrgOps", "dupd", false)?,
            period: cx.flag(t, "TrgOps", "period", false)?,
            gi: cx.flag(t, "TrgOps", "gi", true)?,
        },
    };
    let log_ln = format!(
        "{}{}{}",
        lc.scl_attr("prefix").unwrap_or(""),
        lc.scl_attr("lnClass")
            .filter(|s| !s.is_empty())
            .unwrap_or("LLN0"),
        lc.scl_attr("lnInst").unwrap_or("")
    );
    Ok(LogControl {
        name,
        data_set,
        log_ld_inst: lc
            .scl_attr("ldInst")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        log_ln,
        log_name: lc.scl_attr("logName").unwrap_or("").trim().to_string(),
        log_ref: String::new(),
        trg_ops,
        intg_pd: cx.num(lc, E, "intgPd", 0u32)?,
        log_ena: cx.flag(lc, E, "logEna", true)?,
        reason_code: cx.flag(lc, E, "reasonCode", true)?,
        line: cx.pos(lc).line,
    })
}

/// Fill every LCB's `log_ref` with the MMS domain of its log's LD (`ldInst`, else its own):
/// an `ldInst` naming no LD of the IED keeps the IED name + inst that IEC 61850-8-1 §8.1.3.1
/// gives an LD without `ldName`.
pub(crate) fn resolve_log_refs(ied: &str, lds: &mut [LogicalDevice]) {
    let domains: Vec<(String, String)> = lds
        .iter()
        .map(|l| (l.inst.clone(), l.domain.clone()))
        .collect();
    for ld in lds.iter_mut() {
        let own = ld.domain.clone();
        for ln in &mut ld.logical_nodes {
            let own_ln = ln.name.clone();
            for c in &mut ln.log_controls {
                if c.log_name.is_empty() {
                    c.log_ref = format!("{own}/{own_ln}${GENERAL_LOG}");
                    continue;
                }
                let domain = match &c.log_ld_inst {
                    None => own.clone(),
                    Some(i) => domains
                        .iter()
                        .find(|(inst, _)| inst == i)
                        .map(|(_, d)| d.clone())
                        .unwrap_or_else(|| format!("{ied}{i}")),
                };
                c.log_ref = format!("{domain}/{}${}", c.log_ln, c.log_name);
            }
        }
    }
}
