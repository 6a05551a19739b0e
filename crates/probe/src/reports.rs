//! `--reports`: the only part of a probe that writes to the device. It enables one report
//! control block (IEC 61850-7-2 clause 17) with `gander_mms::rcb_plan`, receives reports for a
//! bounded time, and puts back every attribute it wrote, last first; then it reads the block
//! again and checks that it reads as found.
//!
//! What is written (each only when it differs from the device's value):
//! - the reservation: `Resv = true` (URCB) or `ResvTms` (BRCB, when the server has it), so no
//!   other client takes the block while the probe holds it;
//! - `OptFlds` plus sequence-number, report-time-stamp and reason-for-inclusion (the probe needs
//!   them to count gaps and measure latency) and data-set-name;
//! - `TrgOps` plus general-interrogation, so the enable brings at least one report;
//! - `RptEna = true`, then `GI = true`.
//!
//! `GI` is a trigger and cannot be undone (it only makes the server send one report). A BRCB's
//! buffer position (EntryID, TimeOfEntry) and the sequence number (SqNum) are status values the
//! server advances while reporting: they are not configuration and are not written back.
use crate::discover::{read_rcb, RcbRead};
use crate::error::ProbeError;
use crate::stats::MsSummary;
use gander_client::clock::now_ns;
use gander_client::writes::{self, Stopped, WriteFailure};
use gander_client::{ClientError, Received, Session};
use gander_mms::bit_string::BitString;
use gander_mms::rcb_plan::{first_free, RcbKind, RcbPlan, RcbSnapshot, ReportSettings, Step};
use gander_mms::report::{opt_flds, trg_ops, Report};
use gander_wire::data::Data;
use serde::Serialize;
use std::time::Duration;

/// What `--reports` measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportsResult {
    /// The control block used.
    pub rcb: String,
    /// Buffered or not.
    pub buffered: bool,
    /// RptID the reports carry.
    pub rpt_id: String,
    /// The writes that enabled it, `attr=value`, in order.
    pub written: Vec<String>,
    /// Enable steps that cannot be undone (GI).
    pub irreversible: Vec<&'static str>,
    /// How long the probe listened, ms.
    pub listened_ms: u64,
    /// Reports received for this control block.
    pub count: usize,
    /// Whether one of them was the general interrogation.
    pub gi_received: bool,
    /// Reports missing by their sequence numbers.
    pub seq_gaps: u64,
    /// Reports of other control blocks seen meanwhile (not counted).
    pub other_reports: usize,
    /// Time between consecutive reports, ms (client clock).
    pub inter_arrival_ms: Option<MsSummary>,
    /// Latencies against the device's timestamps, only with `--clocks-synchronised`.
    pub latency_ms: Option<Latency>,
    /// Whether every attribute read back as found after the restore.
    pub restored: bool,
}

/// Latencies from the device's timestamps to the report's arrival (wall clocks).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    /// From the data's own timestamp (IEC 61850-7-2 `t`, the newest UtcTime among the included
    /// values of members included for a data change, quality change or update): the
    /// transfer time IEC 61850-5 clause 13.7 budgets.
    pub data: Option<MsSummary>,
    /// From TimeOfEntry (OptFlds report-time-stamp): when the server built the report.
    pub entry: Option<MsSummary>,
}

/// How long and how to listen.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The control block (`None`: the first free one with a data set).
    pub rcb: Option<gander_mms::rcb_plan::RcbRef>,
    /// How long to receive reports after the enable.
    pub listen: Duration,
    /// Compute latencies against the device's timestamps.
    pub clocks_synchronised: bool,
}

fn show_attr(attr: &str, d: &Data) -> String {
    match (attr, BitString::from_data(d)) {
        ("OptFlds", Some(b)) => format!("[{}]", crate::model::opt_flds_names(&b).join(",")),
        ("TrgOps", Some(b)) => format!("[{}]", crate::model::trg_ops_names(&b).join(",")),
        _ => show(d),
    }
}

fn show(d: &Data) -> String {
    match d {
        Data::Boolean(b) => b.to_string(),
        Data::Integer(i) => i.to_string(),
        Data::Unsigned(u) => u.to_string(),
        Data::VisibleString(s) | Data::MmsString(s) => format!("{s:?}"),
        other => match BitString::from_data(other) {
            Some(b) => format!("{:?}", b.ones().collect::<Vec<_>>()),
            None => format!("{other:?}"),
        },
    }
}

fn union(cur: Option<&Data>, add: &[usize]) -> Option<BitString> {
    let mut b = BitString::from_data(cur?)?;
    for &i in add {
        if i < b.len() {
            b.set(i, true);
        }
    }
    Some(b)
}

/// Picks the control block: the named one; for the base name of indexed instances
/// (IEC 61850-6 instantiates a block configured for several clients as `name01`, `name02`, ...),
/// the first instance no client holds; without a name, the first free block whose data set
/// was read.
pub fn choose<'a>(
    snaps: &'a [RcbSnapshot],
    want: Option<&gander_mms::rcb_plan::RcbRef>,
    names: &[String],
) -> Result<&'a RcbSnapshot, ProbeError> {
    match want {
        Some(r) => {
            if let Some(s) = snaps.iter().find(|s| s.rcb == *r) {
                return Ok(s);
            }
            let same_ln: Vec<RcbSnapshot> = snaps
                .iter()
                .filter(|s| s.rcb.domain == r.domain && s.rcb.ln == r.ln && s.rcb.kind == r.kind)
                .cloned()
                .collect();
            let instances = same_ln
                .iter()
                .filter(|s| s.rcb.base_and_index().0 == r.name)
                .count();
            match first_free(&same_ln, &r.name) {
                Some(f) => snaps
                    .iter()
                    .find(|s| s.rcb == f.rcb)
                    .ok_or_else(|| ProbeError::RcbNotFound(r.reference())),
                None if instances > 0 => Err(no_free(
                    same_ln
                        .iter()
                        .filter(|s| s.rcb.base_and_index().0 == r.name),
                    None,
                )),
                None => Err(ProbeError::RcbNotFound(r.reference())),
            }
        }
        None if snaps.is_empty() => Err(ProbeError::NoRcb),
        None => snaps
            .iter()
            .find(|s| s.check_free().is_ok() && names_known_data_set(s, names))
            .ok_or_else(|| no_free(snaps.iter(), Some(names))),
    }
}

/// Whether the block's DatSet names a data set of the model (`LD/LN$DS` as `LD/LN.DS`).
fn names_known_data_set(s: &RcbSnapshot, names: &[String]) -> bool {
    matches!(s.get("DatSet"), Some(Data::VisibleString(v)) if !v.is_empty()
        && names.iter().any(|n| *n == v.replace('$', ".")))
}

/// [`ProbeError::NoFreeRcb`] for these candidates: each one is either taken or (when the data
/// sets are checked) free without a known data set.
fn no_free<'a>(
    candidates: impl Iterator<Item = &'a RcbSnapshot>,
    names: Option<&[String]>,
) -> ProbeError {
    let (mut blocks, mut taken, mut no_data_set) = (0, 0, 0);
    for s in candidates {
        blocks += 1;
        if s.check_free().is_err() {
            taken += 1;
        } else if names.is_some_and(|n| !names_known_data_set(s, n)) {
            no_data_set += 1;
        }
    }
    ProbeError::NoFreeRcb {
        blocks,
        taken,
        no_data_set,
    }
}

/// The settings the probe asks for (see the module documentation).
pub fn settings(found: &RcbSnapshot) -> ReportSettings {
    ReportSettings {
        opt_flds: union(
            found.get("OptFlds"),
            &[
                opt_flds::SEQ_NUM,
                opt_flds::TIME_STAMP,
                opt_flds::REASON,
                opt_flds::DATA_SET,
            ],
        ),
        trg_ops: union(found.get("TrgOps"), &[trg_ops::GI]),
        resv_tms: (found.rcb.kind == RcbKind::Buffered && found.get("ResvTms").is_some())
            .then_some(60),
        gi: found.get("GI").is_some(),
        ..Default::default()
    }
}

/// The writes in order (`gander_client::writes`); the index of the first not accepted, with
/// the probe's error for it.
fn write_steps(s: &mut Session, rcb: &str, steps: &[Step]) -> Result<usize, (usize, ProbeError)> {
    let what = |st: &Step| format!("writing {} of {rcb}", st.attr);
    match writes::apply(s, steps, &what, None) {
        Ok(()) => Ok(steps.len()),
        Err(Stopped { index, why }) => {
            let refused = |error| ProbeError::RcbWrite {
                rcb: rcb.into(),
                attr: steps[index].attr.clone(),
                error,
            };
            Err((
                index,
                match why {
                    WriteFailure::Refused(e) => refused(format!("DataAccessError {e}")),
                    WriteFailure::Failed(e) if e.answered() => refused(e.chain()),
                    WriteFailure::Failed(e) => e.into(),
                },
            ))
        }
    }
}

/// Restore writes; an error names what could not be put back.
fn restore(s: &mut Session, rcb: &str, steps: &[Step]) -> Result<(), ProbeError> {
    match write_steps(s, rcb, steps) {
        Ok(_) => Ok(()),
        Err((i, e)) => Err(ProbeError::NotRestored {
            rcb: rcb.into(),
            detail: format!(
                "restoring {} failed ({}); still to restore: {}",
                steps[i].attr,
                e.chain(),
                steps[i..]
                    .iter()
                    .map(|s| format!("{}={}", s.attr, show_attr(&s.attr, &s.value)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// Attributes that differ between two snapshots, except the status values reporting advances
/// and, on an unbuffered block, the OptFlds bits that do not apply to it.
///
/// IEC 61850-7-2 gives an unbuffered block no buffer-overflow and no entryID option (they
/// describe a buffer it does not have), and servers differ in what they keep there: a CID may
/// configure `entryID="true"` on a URCB, and libiec61850 1.6 clears bits 6 and 7 of a URCB's
/// OptFlds when the block is reserved or enabled, though the probe never writes OptFlds. Counted
/// as a difference, that made the probe call the block "NOT left as found" (and abort the
/// association) over a change it did not cause, could not undo and that means nothing.
pub fn differences(before: &RcbSnapshot, after: &RcbSnapshot) -> Vec<String> {
    let unbuffered = before.rcb.kind == RcbKind::Unbuffered;
    let mut out = Vec::new();
    for (n, a) in &before.attrs {
        if matches!(n.as_str(), "SqNum" | "EntryID" | "TimeOfEntry") {
            continue;
        }
        match after.get(n) {
            Some(b) if b == a => {}
            Some(b) if unbuffered && n == "OptFlds" && same_urcb_opt_flds(a, b) => {}
            Some(b) => out.push(format!(
                "{n}: {} before, {} after",
                show_attr(n, a),
                show_attr(n, b)
            )),
            None => out.push(format!("{n}: missing after")),
        }
    }
    out
}

/// Whether two OptFlds values differ at most in buffer-overflow and entryID, the bits that do
/// not apply to an unbuffered block (trailing bits beyond either string count as clear).
fn same_urcb_opt_flds(a: &Data, b: &Data) -> bool {
    let (Some(a), Some(b)) = (BitString::from_data(a), BitString::from_data(b)) else {
        return false;
    };
    let bit = |s: &BitString, i: usize| i < s.len() && s.get(i);
    (0..a.len().max(b.len()))
        .filter(|&i| i != opt_flds::BUF_OVFL && i != opt_flds::ENTRY_ID)
        .all(|i| bit(&a, i) == bit(&b, i))
}

/// Counts, gaps, inter-arrival and latencies of the received reports (pure).
pub fn analyse(
    reports: &[(Received, Report)],
    clocks_synchronised: bool,
) -> (u64, bool, Option<MsSummary>, Option<Latency>) {
    let mut gaps = 0u64;
    let mut gi = false;
    let mut prev_seq: Option<u16> = None;
    for (_, r) in reports {
        if let (Some(p), Some(s)) = (prev_seq, r.seq_num) {
            // SqNum wraps (INT16U for a BRCB, INT8U for a URCB): count forward distance only
            // when small, so a wrap or a restart does not count as thousands of gaps.
            let d = s.wrapping_sub(p);
            if d > 1 && d < 256 {
                gaps += (d - 1) as u64;
            }
        }
        prev_seq = r.seq_num.or(prev_seq);
        gi |= r
            .reasons
            .iter()
            .any(|b| b.len() > trg_ops::GI && b.get(trg_ops::GI));
    }
    let arrivals: Vec<u64> = reports
        .windows(2)
        .map(|w| w[1].0.at_ns.saturating_sub(w[0].0.at_ns))
        .collect();
    let latency = clocks_synchronised.then(|| {
        let mut data = Vec::new();
        let mut entry = Vec::new();
        for (rx, r) in reports {
            let rx_ns = rx.unix_ns as i128;
            if let Some(ms) = r.time_of_entry_unix_ms() {
                entry.push((rx_ns - ms as i128 * 1_000_000) as i64);
            }
            if let Some(t) = r.changed_data_time_unix_ns() {
                data.push((rx_ns - t) as i64);
            }
        }
        Latency {
            data: MsSummary::from_signed_ns(&data),
            entry: MsSummary::from_signed_ns(&entry),
        }
    });
    (gaps, gi, MsSummary::from_ns(&arrivals), latency)
}

/// Why `--reports` failed, with what it had gathered when the failure came after the
/// listening (the block not read back as found): the reports received still count.
#[derive(Debug)]
pub struct ReportsFailure {
    /// The failure.
    pub error: ProbeError,
    /// The result so far (`restored` false), when the reports were listened to.
    pub gathered: Option<Box<ReportsResult>>,
}

impl From<ProbeError> for ReportsFailure {
    fn from(error: ProbeError) -> Self {
        ReportsFailure {
            error,
            gathered: None,
        }
    }
}

/// Enables the block, listens, restores, checks. Any failure after the first write undoes what
/// was written before the error is returned.
pub fn run(
    s: &mut Session,
    found: &RcbSnapshot,
    opts: &ReportOptions,
) -> Result<ReportsResult, ReportsFailure> {
    let rcb = found.rcb.reference();
    let plan = RcbPlan::new(found, &settings(found)).map_err(ProbeError::from)?;
    let enable = plan.enable();
    if let Err((applied, e)) = write_steps(s, &rcb, &enable) {
        // Undo what was applied; if that fails too, say so first: the device is not as found.
        if let Err(r) = restore(s, &rcb, &plan.rollback(applied)) {
            return Err(ProbeError::NotRestored {
                rcb: rcb.clone(),
                detail: format!("after the enable failed ({}): {}", e.chain(), r.chain()),
            }
            .into());
        }
        return Err(e.into());
    }
    let rpt_id = match found.get("RptID") {
        Some(Data::VisibleString(v)) if !v.is_empty() => v.clone(),
        // IEC 61850-7-2 17.2.2.2: an empty RptID means the reports carry the block's reference.
        _ => found.rcb.reference().replace('.', "$"),
    };
    let t0 = now_ns();
    let end = t0.saturating_add(opts.listen.as_nanos() as u64);
    let mut mine = Vec::new();
    let mut other = 0usize;
    let listened = loop {
        match s.next_report(end) {
            Ok(Some(rx)) => {
                if !rx.report.is_rpt() {
                    continue;
                }
                match Report::from_information_report(&rx.report) {
                    Ok(r) if r.rpt_id == rpt_id || r.rpt_id == rcb => mine.push((rx, r)),
                    Ok(_) => other += 1,
                    Err(e) => {
                        let err = ProbeError::Client(ClientError::Protocol {
                            during: format!("a report of {rcb}"),
                            source: e,
                        });
                        return Err(restore_then(s, &rcb, &plan, err).into());
                    }
                }
            }
            Ok(None) => break now_ns().saturating_sub(t0),
            Err(e) => return Err(restore_then(s, &rcb, &plan, e.into()).into()),
        }
    };
    let (seq_gaps, gi_received, inter_arrival_ms, latency_ms) =
        analyse(&mine, opts.clocks_synchronised);
    let mut result = ReportsResult {
        rcb: rcb.clone(),
        buffered: found.rcb.kind == RcbKind::Buffered,
        rpt_id,
        written: enable
            .iter()
            .map(|st| format!("{}={}", st.attr, show_attr(&st.attr, &st.value)))
            .collect(),
        irreversible: plan.irreversible().to_vec(),
        listened_ms: listened / 1_000_000,
        count: mine.len(),
        gi_received,
        seq_gaps,
        other_reports: other,
        inter_arrival_ms,
        latency_ms,
        restored: false,
    };
    match restored_as_found(s, &rcb, &plan, found) {
        Ok(()) => {
            result.restored = true;
            Ok(result)
        }
        Err(error) => Err(ReportsFailure {
            error,
            gathered: Some(Box::new(result)),
        }),
    }
}

/// Undoes the enable and reads the block back: every attribute as `found`, else
/// [`ProbeError::NotRestored`] naming what differs.
fn restored_as_found(
    s: &mut Session,
    rcb: &str,
    plan: &RcbPlan,
    found: &RcbSnapshot,
) -> Result<(), ProbeError> {
    restore(s, rcb, &plan.restore())?;
    let after = match read_rcb(s, &found.rcb)? {
        RcbRead::Read(a) => a,
        RcbRead::Unreadable(e) => {
            return Err(ProbeError::NotRestored {
                rcb: rcb.into(),
                detail: format!("cannot read it back: {e}"),
            })
        }
    };
    let diff = differences(found, &after);
    if !diff.is_empty() {
        return Err(ProbeError::NotRestored {
            rcb: rcb.into(),
            detail: diff.join("; "),
        });
    }
    Ok(())
}

/// After a failure while enabled: restore (best effort on a live session), then report the
/// failure, or the failed restore if that failed too.
fn restore_then(s: &mut Session, rcb: &str, plan: &RcbPlan, e: ProbeError) -> ProbeError {
    match restore(s, rcb, &plan.restore()) {
        Ok(()) => e,
        Err(r) => ProbeError::NotRestored {
            rcb: rcb.into(),
            detail: format!("after {}: {}", e.chain(), r.chain()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_mms::rcb_plan::RcbRef;
    use gander_mms::service::InformationReport;

    fn urcb(ena: bool, dat_set: &str) -> RcbSnapshot {
        urcb_named("urcbA01", ena, dat_set)
    }

    fn urcb_named(name: &str, ena: bool, dat_set: &str) -> RcbSnapshot {
        RcbSnapshot::from_value(
            RcbRef::parse("LD", &format!("LLN0$RP${name}")).unwrap(),
            &Data::Structure(vec![
                Data::VisibleString("r".into()),
                Data::Boolean(ena),
                Data::Boolean(false),
                Data::VisibleString(dat_set.into()),
                Data::Unsigned(1),
                BitString::with_bits(10, &[1]).to_data(),
                Data::Unsigned(0),
                Data::Unsigned(0),
                BitString::with_bits(6, &[1]).to_data(),
                Data::Unsigned(0),
                Data::Boolean(false),
            ]),
        )
        .unwrap()
    }

    #[test]
    fn settings_add_what_the_probe_needs_and_keep_the_rest() {
        let s = settings(&urcb(false, "LD/LLN0$DS"));
        let o = s.opt_flds.unwrap();
        assert_eq!(o.len(), 10);
        assert_eq!(o.ones().collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!(s.trg_ops.unwrap().ones().collect::<Vec<_>>(), [1, 5]);
        assert!(s.gi);
        assert_eq!(s.resv_tms, None);
        let plan = RcbPlan::new(&urcb(false, "LD/LLN0$DS"), &settings(&urcb(false, "x"))).unwrap();
        let attrs: Vec<_> = plan.enable().iter().map(|s| s.attr.clone()).collect();
        assert_eq!(attrs, ["Resv", "OptFlds", "TrgOps", "RptEna", "GI"]);
        let undo: Vec<_> = plan.restore().iter().map(|s| s.attr.clone()).collect();
        assert_eq!(undo, ["RptEna", "TrgOps", "OptFlds", "Resv"]);
    }

    #[test]
    fn choose_takes_the_first_free_block_with_a_known_data_set() {
        let snaps = vec![
            urcb_named("urcbA01", true, "LD/LLN0$DS"),
            urcb_named("urcbA02", false, "LD/LLN0$Gone"),
            urcb_named("urcbA03", false, "LD/LLN0$DS"),
        ];
        let names = vec!["LD/LLN0.DS".to_string()];
        let c = choose(&snaps, None, &names).unwrap();
        assert!(std::ptr::eq(c, &snaps[2]));
        let e = choose(&snaps[..2], None, &names).unwrap_err();
        assert!(
            matches!(
                e,
                ProbeError::NoFreeRcb {
                    blocks: 2,
                    taken: 1,
                    no_data_set: 1
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("among 2: 1 enabled"), "{e}");
        // A model without any control block says so, not "none free" (lib_sv.icd and
        // oscd_valid2003.scd, served by `gander mms server --scl`, declare no ReportControl).
        let e = choose(&[], None, &names).unwrap_err();
        assert!(matches!(e, ProbeError::NoRcb), "{e:?}");
        assert_eq!(e.kind(), "no-rcb");
        // The base name of indexed instances: the first free one (urcbA01 is enabled).
        let base = RcbRef::parse("LD", "LLN0$RP$urcbA").unwrap();
        let c = choose(&snaps, Some(&base), &names).unwrap();
        assert!(std::ptr::eq(c, &snaps[1]));
        assert!(matches!(
            choose(&snaps[..1], Some(&base), &names),
            Err(ProbeError::NoFreeRcb {
                blocks: 1,
                taken: 1,
                no_data_set: 0
            })
        ));
        let missing = RcbRef::parse("LD", "LLN0$BR$nope").unwrap();
        assert!(matches!(
            choose(&snaps, Some(&missing), &names),
            Err(ProbeError::RcbNotFound(r)) if r == "LD/LLN0.BR.nope"
        ));
    }

    #[test]
    fn differences_ignore_status_values_only() {
        let a = urcb(false, "LD/LLN0$DS");
        let mut b = a.clone();
        assert!(differences(&a, &b).is_empty());
        b.attrs[7].1 = Data::Unsigned(9); // SqNum
        assert!(differences(&a, &b).is_empty());
        b.attrs[2].1 = Data::Boolean(true); // Resv
        assert_eq!(differences(&a, &b), ["Resv: false before, true after"]);
    }

    #[test]
    fn urcb_opt_flds_bits_that_do_not_apply_are_not_differences() {
        // libiec61850 1.6 serving a CID with entryID="true" on a URCB (its simpleIO sample's
        // AnalogValuesRCB, bean_sample01's urcb101) clears entryID when the block is enabled.
        let opt = |bits: &[usize]| BitString::with_bits(opt_flds::LEN, bits).to_data();
        let i = |a: &RcbSnapshot| a.attrs.iter().position(|(n, _)| n == "OptFlds").unwrap();
        let mut a = urcb(false, "LD/LLN0$DS");
        let k = i(&a);
        a.attrs[k].1 = opt(&[1, 2, 3, 4, opt_flds::ENTRY_ID, 8]);
        let mut b = a.clone();
        b.attrs[k].1 = opt(&[1, 2, 3, 4, 8]);
        assert!(differences(&a, &b).is_empty());
        b.attrs[k].1 = opt(&[1, 2, 3, 4, opt_flds::BUF_OVFL, 8]);
        assert!(differences(&a, &b).is_empty());
        // Any other bit still counts.
        b.attrs[k].1 = opt(&[1, 2, 3, 8]);
        assert_eq!(differences(&a, &b).len(), 1);
        // On a buffered block entryID is a real option: a change counts.
        let mut a = urcb(false, "LD/LLN0$DS");
        a.rcb.kind = RcbKind::Buffered;
        a.attrs[k].1 = opt(&[1, opt_flds::ENTRY_ID]);
        let mut b = a.clone();
        b.attrs[k].1 = opt(&[1]);
        assert_eq!(differences(&a, &b).len(), 1);
    }

    fn rx(at_ms: u64, unix_ms: u64, seq: u16, reason: usize, t_unix_s: u32) -> (Received, Report) {
        let mut utc = [0u8; 8];
        utc[..4].copy_from_slice(&t_unix_s.to_be_bytes());
        let r = Report {
            rpt_id: "r".into(),
            opt_flds: BitString::with_bits(10, &[1, 2, 3]),
            seq_num: Some(seq),
            time_of_entry: Some(gander_mms::report::binary_time_from_unix_ms(unix_ms - 3)),
            data_set: None,
            buf_ovfl: None,
            entry_id: None,
            conf_rev: None,
            segment: None,
            inclusion: BitString::with_bits(1, &[0]),
            data_refs: vec![],
            values: vec![Data::Structure(vec![
                Data::Boolean(true),
                Data::UtcTime(utc),
            ])],
            reasons: vec![BitString::with_bits(6, &[reason])],
        };
        let ir: InformationReport = r.to_information_report();
        (
            Received {
                ready_ns: at_ms * 1_000_000,
                at_ns: at_ms * 1_000_000,
                unix_ns: unix_ms as u128 * 1_000_000,
                report: ir,
            },
            r,
        )
    }

    #[test]
    fn analysis_counts_gaps_gi_intervals_and_latencies() {
        let base = 1_700_000_000_000u64;
        let v = vec![
            rx(0, base, 0, trg_ops::GI, 1_700_000_000),
            rx(100, base + 100, 1, trg_ops::DCHG, 1_700_000_000),
            rx(300, base + 300, 4, trg_ops::DCHG, 1_700_000_000),
        ];
        let (gaps, gi, ia, lat) = analyse(&v, true);
        assert_eq!(gaps, 2);
        assert!(gi);
        let ia = ia.unwrap();
        assert_eq!((ia.n, ia.min, ia.max), (2, 100.0, 200.0));
        let lat = lat.unwrap();
        let e = lat.entry.unwrap();
        assert_eq!((e.n, e.min, e.max), (3, 3.0, 3.0));
        // Data latency only for the two data-change entries: 100 and 300 ms after t.
        let d = lat.data.unwrap();
        assert_eq!((d.n, d.min, d.max), (2, 100.0, 300.0));
        assert!(analyse(&v, false).3.is_none());
    }
}
