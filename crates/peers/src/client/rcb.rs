//! Reports from any server's control block (`rcb` in the client config): the RCB named, or with
//! `rcb = "discover"` the first free one the server has, enabled with the planner of
//! `gander_mms::rcb_plan` (read the block, write only what must change, GI if asked) and put
//! back exactly as found after the reports (IEC 61850-7-2 clause 17; the writes and their order
//! are the planner's). Used by `gander run` against external targets, where the model is not
//! gander's.

use super::RunError;
use crate::clock::now_ns;
use crate::config::ClientConfig;
use crate::events::{name, Event, Sink};
use gander_client::core::{self, read_list_request};
use gander_client::reference::{data_set_name, parse_rcb};
use gander_client::session::{Received, Session};
use gander_client::writes::{self, Stopped, WriteFailure};
use gander_mms::bit_string::BitString;
use gander_mms::rcb_plan::{find_rcbs, RcbPlan, RcbRef, RcbSnapshot, ReportSettings, Step};
use gander_mms::report::Report;
use gander_mms::service::{AccessResult, GetNameListRequest};
use gander_wire::data::Data;
use std::time::Duration;

/// The value of `rcb` that asks for the first free control block.
pub const DISCOVER: &str = "discover";

fn read(c: &mut Session, rcb: &RcbRef) -> Result<Data, RunError> {
    let what = format!("read of {}", rcb.reference());
    match c.read(&rcb.object_name(), &what)?.0 {
        AccessResult::Success(d) => Ok(d),
        AccessResult::Failure(e) => Err(RunError::Unreadable { what, code: e.0 }),
    }
}

fn snapshot(c: &mut Session, rcb: RcbRef) -> Result<RcbSnapshot, RunError> {
    let v = read(c, &rcb)?;
    RcbSnapshot::from_value(rcb, &v).map_err(RunError::Layout)
}

/// The first control block no client holds, over every logical device (domain order, then the
/// server's name order).
fn discover(c: &mut Session) -> Result<RcbSnapshot, RunError> {
    let mut seen = Vec::new();
    for domain in c.names(GetNameListRequest::domains(), "GetNameList")? {
        let vars = c.names(GetNameListRequest::variables(&domain), "GetNameList")?;
        for rcb in find_rcbs(&domain, &vars) {
            let snap = snapshot(c, rcb)?;
            match snap.check_free() {
                Ok(()) => return Ok(snap),
                Err(e) => seen.push(e.to_string()),
            }
        }
    }
    Err(RunError::NoneFree(if seen.is_empty() {
        "the server has no report control block".to_string()
    } else {
        format!("every report control block is in use: {}", seen.join("; "))
    }))
}

/// The plan's writes in order (`gander_client::writes`); reports arriving meanwhile go to
/// `on_report` at once (they can, while a block is being enabled or restored). The index of the
/// first write not accepted, with the error.
fn write_steps(
    c: &mut Session,
    steps: &[Step],
    on_report: &mut dyn FnMut(Received),
) -> Result<(), (usize, RunError)> {
    let what = |st: &Step| format!("write of {}", st.attr);
    writes::apply(c, steps, &what, Some(on_report)).map_err(|Stopped { index, why }| {
        let e = match why {
            WriteFailure::Refused(bad) => RunError::WriteRefused {
                attr: steps[index].attr.clone(),
                code: bad.0,
            },
            WriteFailure::Failed(e) => RunError::Client(e),
        };
        (index, e)
    })
}

/// `n` reads of the control block's data set (one Read by variableListName: every member in
/// one round trip), each emitted as READ_RTT with its round trip; the client-side stand-in for
/// RT when the server's clock is not available. Returns how many succeeded.
fn read_rtts(
    c: &mut Session,
    sink: &Sink,
    id: u64,
    snap: &RcbSnapshot,
    n: u64,
) -> Result<u64, RunError> {
    let Some(ds) = (match snap.get("DatSet") {
        Some(Data::VisibleString(s)) => data_set_name(s),
        _ => None,
    }) else {
        return Ok(0);
    };
    let what = format!("read of data set {}", snap.rcb.reference());
    let mut ok = 0;
    for k in 0..n {
        let req = read_list_request(ds.clone());
        let t0 = now_ns();
        let r = c.call(req, &what)?;
        let t1 = now_ns();
        let gander_mms::pdu::ConfirmedResponse::Read(r) = r else {
            return Err(core::unexpected(&what, &r).into());
        };
        if r.results
            .iter()
            .all(|x| matches!(x, AccessResult::Success(_)))
        {
            sink.emit(
                Event::new(name::READ_RTT, t1, id)
                    .with("n", k)
                    .with("rtt_ns", t1.saturating_sub(t0)),
            );
            ok += 1;
        }
    }
    Ok(ok)
}

/// TrgOps bit of the integrity period (bit 0 reserved, 1 dchg, 2 qchg, 3 dupd, 4 period, 5 GI).
const TRG_OPS_INTEGRITY: usize = 4;

/// Enables the block `spec` names (or the first free one), with an integrity period of
/// `intg_pd_ms` when given, receives `want` reports of it (stamped as the fixed-model path
/// stamps them), then restores the block. Before enabling, `reads` timed reads of its data set;
/// with `clocks_synchronised`, each report's one-way time against its own timestamp.
pub(super) fn receive(
    c: &mut Session,
    sink: &Sink,
    id: u64,
    spec: &str,
    config: &ClientConfig,
    report_timeout: Duration,
) -> Result<u64, RunError> {
    let (gi, intg_pd_ms, reads, want) =
        (config.gi, config.intg_pd_ms, config.reads, config.reports);
    let snap = if spec == DISCOVER {
        discover(c)?
    } else {
        let rcb = parse_rcb(spec).ok_or_else(|| RunError::Config(spec.into()))?;
        snapshot(c, rcb)?
    };
    // A steady stream needs a period: the integrity trigger (TrgOps bit 4, IEC 61850-8-1
    // 17.2.2 / libiec61850 TRG_OPT_INTEGRITY) with IntgPd, beside the triggers the block has.
    let trg_ops = intg_pd_ms.and_then(|_| {
        let old = snap.get("TrgOps").and_then(BitString::from_data)?;
        let mut new = old.clone();
        if new.len() > TRG_OPS_INTEGRITY {
            new.set(TRG_OPS_INTEGRITY, true);
        }
        Some(new)
    });
    let plan = RcbPlan::new(
        &snap,
        &ReportSettings {
            gi,
            intg_pd: intg_pd_ms,
            trg_ops,
            ..ReportSettings::default()
        },
    )
    .map_err(RunError::InUse)?;
    read_rtts(c, sink, id, &snap, reads)?;
    let rpt_id = match snap.get("RptID") {
        Some(Data::VisibleString(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let n = std::cell::Cell::new(0u64);
    let bad_report = std::cell::Cell::new(None);
    // Stamps one report of this block; true when it counted.
    let on_report = |rx: Received| -> bool {
        let r = match Report::from_information_report(&rx.report) {
            Ok(r) => r,
            Err(e) => {
                let first = bad_report.take().unwrap_or(RunError::Report(e));
                bad_report.set(Some(first));
                return false;
            }
        };
        let k = n.get();
        if rpt_id.as_ref().is_some_and(|want_id| *want_id != r.rpt_id) || k >= want {
            return false;
        }
        let seq = r.seq_num.map(u64::from).unwrap_or(k);
        sink.emit(
            Event::new(name::READ_END, rx.at_ns, id)
                .seq(seq)
                .with("n", k),
        );
        let mut end = Event::new(name::RT_END, now_ns(), id).seq(seq).with("n", k);
        if config.clocks_synchronised {
            let server_time = r.changed_data_time_unix_ns().or_else(|| {
                r.time_of_entry_unix_ms()
                    .map(|ms| i128::from(ms) * 1_000_000)
            });
            if let (Some(t), Ok(now)) = (
                server_time,
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH),
            ) {
                end = end.with("one_way_ns", (now.as_nanos() as i128 - t) as i64);
            }
        }
        sink.emit(end);
        n.set(k + 1);
        true
    };
    if let Err((i, e)) = write_steps(c, &plan.enable(), &mut |rx| {
        on_report(rx);
    }) {
        // Undo what was applied, each undo tried even when one is refused; the enable's
        // failure is the error.
        for undo in plan.rollback(i) {
            let _ = write_steps(c, std::slice::from_ref(&undo), &mut |_| {});
        }
        return Err(e);
    }
    sink.emit(Event::new(name::RCB_ENABLED, now_ns(), id).with("rcb", snap.rcb.reference()));
    let report_deadline = || now_ns().saturating_add(report_timeout.as_nanos() as u64);
    let mut deadline = report_deadline();
    let mut failure = None;
    while n.get() < want && failure.is_none() {
        match c.next_report(deadline) {
            Ok(Some(rx)) => {
                if on_report(rx) {
                    deadline = report_deadline();
                }
            }
            Ok(None) => {
                failure = Some(RunError::Client(gander_client::ClientError::Timeout {
                    during: "report".into(),
                    ms: report_timeout.as_millis() as u64,
                }))
            }
            Err(e) => failure = Some(e.into()),
        }
        if failure.is_none() {
            failure = bad_report.take();
        }
    }
    // Put the block back as found, also after a failure (as far as the association allows).
    // A server that reserves a BRCB on enable (libiec61850 with ResvTms) keeps the reservation
    // ResvTms seconds after the association ends (IEC 61850-7-2 17.2.2.7): a block found
    // unreserved is released explicitly, last.
    let mut restore = plan.restore();
    if let Some(Data::Integer(0)) = snap.get("ResvTms") {
        restore.push(Step {
            attr: "ResvTms".into(),
            name: snap.rcb.attribute("ResvTms"),
            value: Data::Integer(0),
        });
    }
    let mut restore_err = None;
    // Every restore write is tried, also after one is refused (each puts back one attribute).
    let mut rest = &restore[..];
    while c.is_open() && !rest.is_empty() {
        match write_steps(c, rest, &mut |_| {}) {
            Ok(()) => break,
            Err((i, e)) => {
                restore_err.get_or_insert(RunError::RestoreFailed {
                    rcb: snap.rcb.reference(),
                    detail: e.detail(),
                });
                rest = &rest[i + 1..];
            }
        }
    }
    match (failure, restore_err) {
        (Some(e), _) | (None, Some(e)) => Err(e),
        (None, None) => Ok(n.get()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn references_parse_as_iec_61850_writes_them() {
        // The parsing itself is gander_client::reference's (tested there); the run client
        // takes the same spelling.
        let r = super::super::parse_reference("IMPLD0/LLN0.RP.urcb01").unwrap();
        assert_eq!(r.item(), "LLN0$RP$urcb01");
        assert!(super::super::parse_reference("LLN0.RP.x").is_none());
    }
}
