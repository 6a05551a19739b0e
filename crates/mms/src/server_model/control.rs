//! Controls served by a [`ServerModel`] (IEC 61850-7-2 clause 20, IEC 61850-8-1 clause 20):
//! every data object with `CO$<DO>$Oper` is a control object, driven by its own
//! [`ControlObject`] state machine and configured by its CF attributes, read at every access
//! so that a client's write of `ctlModel`, `sboTimeout` or `sboClass` takes effect at once:
//!
//! - `CF$<DO>$ctlModel` (absent: status-only, so nothing operates unless the model says so),
//! - `CF$<DO>$sboTimeout` in ms (absent or 0: 30 s), `CF$<DO>$sboClass`.
//!
//! The simulated process tests a command as an IED would (IEC 61850-7-4 Annex A, -7-2 20.2):
//! the LN's `Beh`/`Mod` (LLN0's `Mod` when the LN has none) `off` blocks every command, a test
//! mode every command without `Test` (Blocked-by-mode); `Loc` true refuses station and remote
//! originators (Blocked-by-switching-hierarchy); a DPC already in the commanded position is
//! Position-reached; with the interlock-check bit, a `CILO` of the LD whose `EnaOpn`/`EnaCls`
//! is false blocks (Blocked-by-interlocking); with the synchrocheck bit, an `RSYN` whose `Rel`
//! is false blocks a close (Blocked-by-synchrocheck); a BSC step beyond `maxVal`/`minVal` is
//! Step-limit. An accepted command without `Test` changes the status as the device would:
//! `stVal` (SPC, DPC as Dbpos, INC, ENC), `valWTr$posVal` (BSC, ISC) or `mxVal` (APC), with
//! `q` good and `t` now, and `origin`/`ctlNum` where the DO has them, so data-change reports
//! fire. A `Test` command is tested and terminated but changes nothing.

use gander_wire::data::Data;

use super::ServerModel;
use crate::association::ConnId;
use crate::bit_string::BitString;
use crate::control::{
    sbo_value, ControlConfig, ControlObject, ControlParams, ControlService, CtlModel, Decision,
    SboClass,
};
use crate::last_appl_error::AddCause;
use crate::service::{DataAccessError, InformationReport, ObjectName};

/// The control objects of a model and the reports they owe their clients.
#[derive(Debug, Clone, Default)]
pub(super) struct Controls {
    /// Unix ms of the server's clock, set by the driver before it feeds input.
    clock_ms: u64,
    /// Control objects by (domain, `LN$DO`), created at first use.
    objects: Vec<((String, String), ControlObject)>,
    /// LastApplError reports to send before the response being built.
    before: Vec<(ConnId, InformationReport)>,
    /// CommandTerminations to send after it.
    after: Vec<(ConnId, InformationReport)>,
}

/// A control object's parts of an item `LN$CO$<DO path>$<last>`.
struct CoItem<'a> {
    ln: &'a str,
    dob: &'a str,
    last: &'a str,
}

fn co_item(item: &str) -> Option<CoItem<'_>> {
    let (ln, rest) = item.split_once('$')?;
    let rest = rest.strip_prefix("CO$")?;
    let (dob, last) = rest.rsplit_once('$')?;
    Some(CoItem { ln, dob, last })
}

impl Controls {
    pub(super) fn connection_closed(&mut self, conn: ConnId) {
        self.objects
            .iter_mut()
            .for_each(|(_, o)| o.connection_closed(conn));
        self.before.retain(|(c, _)| *c != conn);
        self.after.retain(|(c, _)| *c != conn);
    }
}

impl ServerModel {
    /// Set the server's clock (Unix ms): the time controls run on (sboTimeout, operTm) and
    /// the `t` they stamp. The driver calls it before every input it feeds.
    pub fn set_clock(&mut self, unix_ms: u64) {
        self.controls.clock_ms = unix_ms;
    }

    fn leaf_value(&self, dom: &str, item: String) -> Option<Data> {
        self.node(&ObjectName::domain(dom, item))
            .map(super::ModelNode::to_data)
    }

    fn control_config(&self, dom: &str, ln: &str, dob: &str) -> ControlConfig {
        let cf = |a: &str| self.leaf_value(dom, format!("{ln}$CF${dob}${a}"));
        let int = |d: Option<Data>| match d {
            Some(Data::Integer(i)) => Some(i),
            Some(Data::Unsigned(u)) => i64::try_from(u).ok(),
            _ => None,
        };
        ControlConfig {
            model: int(cf("ctlModel"))
                .and_then(CtlModel::from_code)
                .unwrap_or(CtlModel::StatusOnly),
            sbo_timeout_ms: int(cf("sboTimeout"))
                .and_then(|t| u64::try_from(t).ok())
                .unwrap_or(0),
            sbo_class: match int(cf("sboClass")) {
                Some(1) => SboClass::OperateMany,
                _ => SboClass::OperateOnce,
            },
        }
    }

    /// The control object of `LN$DO` in `dom`, created or reconfigured from the CF values.
    fn control_object(&mut self, dom: &str, ln: &str, dob: &str) -> usize {
        let config = self.control_config(dom, ln, dob);
        let key = (dom.to_string(), format!("{ln}${dob}"));
        let c = &mut self.controls;
        match c.objects.iter().position(|(k, _)| *k == key) {
            Some(i) => {
                c.objects[i].1.reconfigure(config);
                i
            }
            None => {
                let reference = format!("{dom}/{ln}$CO${dob}");
                c.objects.push((key, ControlObject::new(reference, config)));
                c.objects.len() - 1
            }
        }
    }

    /// The read of a control object's `SBO` (select, sbo-with-normal-security); `None` when
    /// `name` is not one, so the ordinary read answers.
    pub(super) fn control_read(&mut self, conn: ConnId, name: &ObjectName) -> Option<Data> {
        let ObjectName::DomainSpecific { domain, item } = name else {
            return None;
        };
        let co = co_item(item).filter(|c| c.last == "SBO")?;
        self.node(name)?;
        let (dom, ln, dob) = (domain.clone(), co.ln.to_string(), co.dob.to_string());
        let i = self.control_object(&dom, &ln, &dob);
        let now = self.controls.clock_ms;
        let process = self.process_mode(&dom, &ln, None);
        let sel = self.controls.objects[i].1.select(now, conn, process);
        Some(sbo_value(sel.as_deref()))
    }

    /// The write of a control object's `Oper`, `SBOw` or `Cancel`; `None` when `item` is not
    /// one (any other write under CO is refused by the caller).
    pub(super) fn control_write(
        &mut self,
        conn: ConnId,
        dom: &str,
        item: &str,
        value: &Data,
    ) -> Option<Result<(), DataAccessError>> {
        let co = co_item(item)?;
        let service = ControlService::from_component(co.last)?;
        self.node(&ObjectName::domain(dom, item))?;
        let (ln, dob) = (co.ln.to_string(), co.dob.to_string());
        let Ok(p) = ControlParams::from_data(service, value) else {
            return Some(Err(DataAccessError::TYPE_INCONSISTENT));
        };
        let i = self.control_object(dom, &ln, &dob);
        let now = self.controls.clock_ms;
        let process = match service {
            ControlService::Cancel => Ok(()),
            _ => self.process_test(dom, &ln, &dob, &p),
        };
        let decision = self.controls.objects[i].1.write(now, conn, p, process);
        Some(match decision {
            Decision::Refuse {
                error,
                last_appl_error,
            } => {
                if let Some(l) = last_appl_error {
                    self.controls.before.push((conn, l.to_information_report()));
                }
                Err(error)
            }
            Decision::Accept {
                execute,
                terminated,
            } => {
                if let Some(t) = terminated {
                    self.controls.after.push((conn, t.to_information_report()));
                }
                if let Some(p) = execute {
                    self.execute(conn, i, dom, &ln, &dob, &p);
                }
                Ok(())
            }
        })
    }

    /// Test (again, at execution) and apply a command, and queue its CommandTermination.
    fn execute(
        &mut self,
        conn: ConnId,
        i: usize,
        dom: &str,
        ln: &str,
        dob: &str,
        p: &ControlParams,
    ) {
        let result = self.process_test(dom, ln, dob, p).and_then(|()| {
            if p.test {
                Ok(())
            } else {
                self.apply(dom, ln, dob, p)
            }
        });
        if let Some(t) = self.controls.objects[i].1.executed(p, result) {
            self.controls.after.push((conn, t.to_information_report()));
        }
    }

    /// The reports controls owe `conn` after its last response: CommandTerminations, with
    /// the time-activated operates that came due at `unix_ms` executed first.
    pub(super) fn control_reports(&mut self, conn: ConnId, unix_ms: u64) -> Vec<InformationReport> {
        self.controls.clock_ms = self.controls.clock_ms.max(unix_ms);
        for i in 0..self.controls.objects.len() {
            if let Some((owner, p)) = self.controls.objects[i].1.due(unix_ms) {
                let ((dom, ln_do), _) = &self.controls.objects[i];
                let (dom, ln_do) = (dom.clone(), ln_do.clone());
                if let Some((ln, dob)) = ln_do.split_once('$') {
                    self.execute(owner, i, &dom, ln, dob, &p);
                }
            }
        }
        take_for(&mut self.controls.after, conn)
    }

    /// LastApplError reports for `conn` to send before the response being built.
    pub(super) fn control_reports_before(&mut self, conn: ConnId) -> Vec<InformationReport> {
        take_for(&mut self.controls.before, conn)
    }

    fn st(&self, dom: &str, ln: &str, path: &str) -> Option<Data> {
        self.leaf_value(dom, format!("{ln}$ST${path}"))
    }

    /// Behaviour/mode and switching hierarchy (7-4 Annex A; 7-2 20.2.2).
    fn process_mode(&self, dom: &str, ln: &str, p: Option<&ControlParams>) -> Result<(), AddCause> {
        let mode = self
            .st(dom, ln, "Beh$stVal")
            .or_else(|| self.st(dom, ln, "Mod$stVal"))
            .or_else(|| self.st(dom, "LLN0", "Mod$stVal"));
        let test = p.is_some_and(|p| p.test);
        match mode {
            Some(Data::Integer(5)) => return Err(AddCause::BLOCKED_BY_MODE),
            Some(Data::Integer(3 | 4)) if !test => return Err(AddCause::BLOCKED_BY_MODE),
            _ => {}
        }
        let local = [ln, "LLN0"]
            .iter()
            .find_map(|l| self.st(dom, l, "Loc$stVal"))
            .is_some_and(|d| d == Data::Boolean(true));
        // orCat station-control 2, remote-control 3, automatic-station 5, automatic-remote 6.
        if local && p.is_some_and(|p| matches!(p.origin.or_cat, 2 | 3 | 5 | 6)) {
            return Err(AddCause::BLOCKED_BY_SWITCHING_HIERARCHY);
        }
        Ok(())
    }

    /// The process tests of a command (mode, hierarchy, position, interlocking, synchrocheck).
    fn process_test(
        &self,
        dom: &str,
        ln: &str,
        dob: &str,
        p: &ControlParams,
    ) -> Result<(), AddCause> {
        if p.service == ControlService::Cancel {
            return Ok(());
        }
        self.process_mode(dom, ln, Some(p))?;
        let close = match (&p.ctl_val, self.st(dom, ln, &format!("{dob}$stVal"))) {
            (Data::Boolean(v), Some(st @ Data::BitString { .. })) => {
                let now = BitString::from_data(&st).map(|b| (b.get(0), b.get(1)));
                if now == Some((*v, !*v)) {
                    return Err(AddCause::POSITION_REACHED);
                }
                Some(*v)
            }
            _ => None,
        };
        let check = p.check.unwrap_or_default();
        let lns: Vec<String> = self
            .domain(dom)
            .map(|d| d.lns.iter().map(|(n, _)| n.clone()).collect())
            .unwrap_or_default();
        if let (true, Some(close)) = (check.interlock, close) {
            let ena = if close {
                "EnaCls$stVal"
            } else {
                "EnaOpn$stVal"
            };
            if lns
                .iter()
                .filter(|l| ln_class(l) == "CILO")
                .any(|l| self.st(dom, l, ena) == Some(Data::Boolean(false)))
            {
                return Err(AddCause::BLOCKED_BY_INTERLOCKING);
            }
        }
        if check.synchrocheck
            && close == Some(true)
            && lns
                .iter()
                .filter(|l| ln_class(l) == "RSYN")
                .any(|l| self.st(dom, l, "Rel$stVal") == Some(Data::Boolean(false)))
        {
            return Err(AddCause::BLOCKED_BY_SYNCHROCHECK);
        }
        Ok(())
    }

    /// Change the status as the device would (see the module documentation).
    fn apply(&mut self, dom: &str, ln: &str, dob: &str, p: &ControlParams) -> Result<(), AddCause> {
        let name = |fc: &str, a: &str| ObjectName::domain(dom, format!("{ln}${fc}${dob}${a}"));
        let now = crate::model::utc_time(self.controls.clock_ms);
        let st = self.value(&name("ST", "stVal"));
        let wtr = self.value(&name("ST", "valWTr$posVal"));
        let (target, value) = match (&p.ctl_val, st, wtr) {
            (Data::Boolean(v), Some(Data::Boolean(_)), _) => ("ST", ("stVal", Data::Boolean(*v))),
            (Data::Boolean(v), Some(Data::BitString { .. }), _) => ("ST", ("stVal", dbpos(*v))),
            (Data::Integer(v), Some(Data::Integer(_)), _) => ("ST", ("stVal", Data::Integer(*v))),
            (Data::Integer(v), _, Some(Data::Integer(_))) => {
                ("ST", ("valWTr$posVal", Data::Integer(*v)))
            }
            (tcmd @ Data::BitString { .. }, _, Some(Data::Integer(pos))) => {
                let step = match BitString::from_data(tcmd).map(|b| (b.get(0), b.get(1))) {
                    Some((true, false)) => 1,
                    Some((false, true)) => -1,
                    _ => 0,
                };
                let next = pos.saturating_add(step);
                let bound = |a| match self.value(&name("CF", a)) {
                    Some(Data::Integer(b)) => Some(b),
                    _ => None,
                };
                if bound("maxVal").is_some_and(|m| next > m)
                    || bound("minVal").is_some_and(|m| next < m)
                {
                    return Err(AddCause::STEP_LIMIT);
                }
                ("ST", ("valWTr$posVal", Data::Integer(next)))
            }
            (v @ Data::Structure(_), _, _) if self.value(&name("MX", "mxVal")).is_some() => {
                ("MX", ("mxVal", v.clone()))
            }
            _ => return Ok(()),
        };
        self.set_value(&name(target, value.0), value.1)
            .map_err(|_| AddCause::INCONSISTENT_PARAMETERS)?;
        if let Some(Data::BitString { bytes, unused_bits }) = self.value(&name(target, "q")) {
            let good = Data::BitString {
                unused_bits,
                bytes: vec![0; bytes.len()],
            };
            let _ = self.set_value(&name(target, "q"), good);
        }
        if self.value(&name(target, "t")).is_some() {
            let _ = self.set_value(&name(target, "t"), Data::UtcTime(now));
        }
        let origin = Data::Structure(vec![
            Data::Integer(p.origin.or_cat),
            Data::OctetString(p.origin.or_ident.clone()),
        ]);
        if self.value(&name("ST", "origin")).is_some() {
            let _ = self.set_value(&name("ST", "origin"), origin);
        }
        if let (Some(n), Some(_)) = (p.ctl_num, self.value(&name("ST", "ctlNum"))) {
            let _ = self.set_value(&name("ST", "ctlNum"), Data::Unsigned(n.into()));
        }
        Ok(())
    }
}

/// Dbpos (IEC 61850-8-1 8.1.3.x: BIT STRING(2), off `01`, on `10`) of a commanded position.
fn dbpos(on: bool) -> Data {
    BitString::with_bits(2, &[if on { 0 } else { 1 }]).to_data()
}

/// The LN class of an LN name (prefix letters before the class are not separated in MMS
/// names, so the class is taken as the four letters before the trailing instance digits).
fn ln_class(ln: &str) -> &str {
    let body = ln.trim_end_matches(|c: char| c.is_ascii_digit());
    body.get(body.len().saturating_sub(4)..).unwrap_or(body)
}

fn take_for(q: &mut Vec<(ConnId, InformationReport)>, conn: ConnId) -> Vec<InformationReport> {
    let mut out = Vec::new();
    q.retain(|(c, ir)| {
        if *c == conn {
            out.push(ir.clone());
            false
        } else {
            true
        }
    });
    out
}

#[cfg(test)]
mod tests;
