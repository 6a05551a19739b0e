//! Reports from any server's control block (`rcb` in the client config): the RCB named, or with
//! `rcb = "discover"` the first free one the server has, enabled with the planner of
//! `gander_mms::rcb_plan` (read the block, write only what must change, GI if asked) and put
//! back exactly as found after the reports (IEC 61850-7-2 clause 17; the writes and their order
//! are the planner's). Used by `gander run` against external targets, where the model is not
//! gander's.

use super::{closed_fail, fail, Conn, Fail};
use crate::clock::now_ns;
use crate::config::ClientConfig;
use crate::events::{name, Event};
use gander_mms::association::Event as AEvent;
use gander_mms::bit_string::BitString;
use gander_mms::pdu::{ConfirmedRequest, ConfirmedResponse};
use gander_mms::rcb_plan::{find_rcbs, RcbPlan, RcbRef, RcbSnapshot, ReportSettings, Step};
use gander_mms::report::Report;
use gander_mms::service::{
    AccessResult, GetNameListRequest, NameListQuery, ObjectName, ReadRequest,
    VariableAccessSpecification,
};
use gander_wire::data::Data;

/// The value of `rcb` that asks for the first free control block.
pub const DISCOVER: &str = "discover";

/// Parses an IEC 61850 control-block reference `LD/LN.RP.name` or `LD/LN.BR.name`.
pub fn parse_reference(r: &str) -> Option<RcbRef> {
    let (domain, rest) = r.split_once('/')?;
    if domain.is_empty() {
        return None;
    }
    RcbRef::parse(domain, &rest.replace('.', "$"))
}

/// One confirmed request, waiting for its answer; reports arriving meanwhile are passed to
/// `on_report` (they can, while a block is being restored).
fn call(
    c: &mut Conn<'_>,
    req: ConfirmedRequest,
    what: &str,
    mut on_report: impl FnMut(u64, &Report),
) -> Result<ConfirmedResponse, Fail> {
    let id = c
        .assoc
        .request(now_ns(), req)
        .map_err(|e| (super::mms_kind(&e), e.to_string()))?;
    let deadline = c.deadline();
    loop {
        let b = c.pump(deadline, what)?;
        for ev in b.events {
            match ev {
                AEvent::Response {
                    invoke_id,
                    response,
                    ..
                } if invoke_id == id => return Ok(response),
                AEvent::ServiceError {
                    invoke_id, error, ..
                } if invoke_id == id => {
                    return Err(fail("service-error", format!("{what}: {error:?}")))
                }
                AEvent::Rejected { reject, .. } => {
                    return Err(fail("mms-rejected", format!("{what}: {reject:?}")))
                }
                AEvent::InformationReport { report, .. } => {
                    if let Ok(r) = Report::from_information_report(&report) {
                        on_report(b.t_read, &r);
                    }
                }
                AEvent::Closed { reason, .. } => return Err(closed_fail(reason)),
                _ => {}
            }
        }
    }
}

fn names(c: &mut Conn<'_>, req: GetNameListRequest) -> Result<Vec<String>, Fail> {
    let mut q = NameListQuery::new(req);
    while let Some(r) = q.next_request() {
        let ConfirmedResponse::GetNameList(a) = call(
            c,
            ConfirmedRequest::GetNameList(r),
            "GetNameList",
            |_, _| {},
        )?
        else {
            return Err(fail(
                "mms-unexpected",
                "GetNameList answered with another service",
            ));
        };
        q.on_response(a)
            .map_err(|e| fail("mms-unexpected", e.to_string()))?;
    }
    Ok(q.into_names())
}

fn read(c: &mut Conn<'_>, n: &ObjectName, what: &str) -> Result<Data, Fail> {
    let req = ConfirmedRequest::Read(ReadRequest {
        specification_with_result: false,
        spec: VariableAccessSpecification::names([n.clone()]),
    });
    let ConfirmedResponse::Read(r) = call(c, req, what, |_, _| {})? else {
        return Err(fail(
            "mms-unexpected",
            format!("{what}: not a Read response"),
        ));
    };
    match r.results.as_slice() {
        [AccessResult::Success(d)] => Ok(d.clone()),
        [AccessResult::Failure(e)] => Err(fail(
            "rcb-unreadable",
            format!("{what}: DataAccessError {}", e.0),
        )),
        _ => Err(fail(
            "mms-unexpected",
            format!("{what}: {} results", r.results.len()),
        )),
    }
}

fn snapshot(c: &mut Conn<'_>, rcb: RcbRef) -> Result<RcbSnapshot, Fail> {
    let what = format!("read of {}", rcb.reference());
    let v = read(c, &rcb.object_name(), &what)?;
    RcbSnapshot::from_value(rcb, &v).map_err(|e| fail("rcb-layout", e.to_string()))
}

/// The first control block no client holds, over every logical device (domain order, then the
/// server's name order).
fn discover(c: &mut Conn<'_>) -> Result<RcbSnapshot, Fail> {
    let mut seen = Vec::new();
    for domain in names(c, GetNameListRequest::domains())? {
        let vars = names(c, GetNameListRequest::variables(&domain))?;
        for rcb in find_rcbs(&domain, &vars) {
            let snap = snapshot(c, rcb)?;
            match snap.check_free() {
                Ok(()) => return Ok(snap),
                Err(e) => seen.push(e.to_string()),
            }
        }
    }
    Err(fail(
        "rcb-none-free",
        if seen.is_empty() {
            "the server has no report control block".to_string()
        } else {
            format!("every report control block is in use: {}", seen.join("; "))
        },
    ))
}

fn write_step(
    c: &mut Conn<'_>,
    st: &Step,
    on_report: impl FnMut(u64, &Report),
) -> Result<(), Fail> {
    let what = format!("write of {}", st.attr);
    let r = call(
        c,
        ConfirmedRequest::Write(st.write_request()),
        &what,
        on_report,
    )?;
    let ConfirmedResponse::Write(w) = r else {
        return Err(fail(
            "mms-unexpected",
            format!("{what}: not a Write response"),
        ));
    };
    match w.0.iter().find_map(|r| r.err()) {
        Some(bad) => Err(fail(
            "rcb-write-refused",
            format!("{what} refused: DataAccessError {}", bad.0),
        )),
        None => Ok(()),
    }
}

/// The RCB's data set as an MMS name: DatSet `LD/LN$name` (IEC 61850-8-1 form).
fn data_set_name(snap: &RcbSnapshot) -> Option<ObjectName> {
    match snap.get("DatSet") {
        Some(Data::VisibleString(s)) => {
            let (domain, item) = s.split_once('/')?;
            (!domain.is_empty() && !item.is_empty()).then(|| ObjectName::domain(domain, item))
        }
        _ => None,
    }
}

/// `n` reads of the control block's data set (one Read by variableListName: every member in
/// one round trip), each emitted as READ_RTT with its round trip; the client-side stand-in for
/// RT when the server's clock is not available. Returns how many succeeded.
fn read_rtts(c: &mut Conn<'_>, snap: &RcbSnapshot, n: u64) -> Result<u64, Fail> {
    let Some(ds) = data_set_name(snap) else {
        return Ok(0);
    };
    let what = format!("read of data set {}", snap.rcb.reference());
    let mut ok = 0;
    for k in 0..n {
        let req = ConfirmedRequest::Read(ReadRequest {
            specification_with_result: false,
            spec: VariableAccessSpecification::VariableListName(ds.clone()),
        });
        let t0 = now_ns();
        let r = call(c, req, &what, |_, _| {})?;
        let t1 = now_ns();
        let ConfirmedResponse::Read(r) = r else {
            return Err(fail(
                "mms-unexpected",
                format!("{what}: not a Read response"),
            ));
        };
        if r.results
            .iter()
            .all(|x| matches!(x, AccessResult::Success(_)))
        {
            c.sink.emit(
                Event::new(name::READ_RTT, t1, c.id)
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
pub(super) fn receive(c: &mut Conn<'_>, spec: &str, config: &ClientConfig) -> Result<u64, Fail> {
    let (gi, intg_pd_ms, reads, want) =
        (config.gi, config.intg_pd_ms, config.reads, config.reports);
    let snap = if spec == DISCOVER {
        discover(c)?
    } else {
        let rcb = parse_reference(spec).ok_or_else(|| {
            fail(
                "config",
                format!("rcb {spec:?} is not LD/LN.RP.name or LD/LN.BR.name"),
            )
        })?;
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
    .map_err(|e| fail("rcb-in-use", e.to_string()))?;
    read_rtts(c, &snap, reads)?;
    let rpt_id = match snap.get("RptID") {
        Some(Data::VisibleString(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let (id, sink) = (c.id, c.sink);
    let n = std::cell::Cell::new(0u64);
    let on_report = |t_read: u64, r: &Report| {
        let k = n.get();
        if rpt_id.as_ref().is_some_and(|want_id| *want_id != r.rpt_id) || k >= want {
            return;
        }
        let seq = r.seq_num.map(u64::from).unwrap_or(k);
        sink.emit(Event::new(name::READ_END, t_read, id).seq(seq).with("n", k));
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
    };
    let steps = plan.enable();
    for (i, st) in steps.iter().enumerate() {
        if let Err(e) = write_step(c, st, on_report) {
            for undo in plan.rollback(i) {
                let _ = write_step(c, &undo, |_, _| {});
            }
            return Err(e);
        }
    }
    sink.emit(Event::new(name::RCB_ENABLED, now_ns(), id).with("rcb", snap.rcb.reference()));
    let report_deadline = |c: &Conn<'_>| now_ns().saturating_add(c.report_timeout);
    let mut deadline = report_deadline(c);
    let mut failure = None;
    while n.get() < want {
        let b = match c.pump(deadline, "report") {
            Ok(b) => b,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        for ev in b.events {
            match ev {
                AEvent::InformationReport { report, .. } => {
                    match Report::from_information_report(&report) {
                        Ok(r) => {
                            let before = n.get();
                            on_report(b.t_read, &r);
                            if n.get() > before {
                                deadline = report_deadline(c);
                            }
                        }
                        Err(e) => failure = Some((super::mms_kind(&e), e.to_string())),
                    }
                }
                AEvent::Closed { reason, .. } => failure = Some(closed_fail(reason)),
                _ => {}
            }
        }
        if failure.is_some() {
            break;
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
    if !c.assoc.is_closed() {
        for st in restore {
            if let Err(e) = write_step(c, &st, |_, _| {}) {
                restore_err.get_or_insert(fail(
                    "rcb-restore-failed",
                    format!("{}: {}", snap.rcb.reference(), e.1),
                ));
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
    use super::*;
    use gander_mms::rcb_plan::RcbKind;

    #[test]
    fn references_parse_as_iec_61850_writes_them() {
        let r = parse_reference("PROTLD0/LLN0.BR.brcbA01").unwrap();
        assert_eq!((r.domain.as_str(), r.ln.as_str()), ("PROTLD0", "LLN0"));
        assert_eq!((r.kind, r.name.as_str()), (RcbKind::Buffered, "brcbA01"));
        assert_eq!(
            parse_reference("IMPLD0/LLN0.RP.urcb01").unwrap().item(),
            "LLN0$RP$urcb01"
        );
        for bad in [
            "LLN0.RP.x",
            "/LLN0.RP.x",
            "LD/LLN0.ST.x",
            "LD/LLN0.RP",
            "LD/LLN0.RP.x.y",
        ] {
            assert!(parse_reference(bad).is_none(), "{bad}");
        }
    }
}
