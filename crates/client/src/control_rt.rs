//! Control round trips, measured (IEC 61850-7-2 clause 20 over IEC 61850-8-1 clause 20): one
//! named object operated `count` times through [`crate::control`], with the time of each phase
//! of each operation kept and summarised, and the device left as it was found.
//!
//! Phases, each from the client's CLOCK_MONOTONIC:
//!
//! | phase | from | to | ctlModel |
//! |---|---|---|---|
//! | select | the SBO Read (sbo-normal) or SBOw Write (sbo-enhanced) handed to the session | its response decoded | 2, 4 |
//! | operate | the Oper Write handed to the session | its Write response decoded | 1..4 |
//! | termination | the Oper Write response | the CommandTermination report received | 3, 4 |
//! | cancel | a Cancel Write after a select (optional) | its Write response | 2, 4 |
//!
//! Operating a control changes a device. The rules here, which `docs/probe.md` states for users:
//! the object is always named by the caller (nothing is chosen for it); `Test` is set unless
//! the caller clears it (7-2 20.2.2: the device must not change its process for a test
//! command); the operations alternate between the value asked for and the state read before
//! (the `stVal`, or `mxVal` of an APC), so an even count ends where it began; the state is read
//! after, and when it differs the object is operated back to the state before once more
//! (not counted) and read again. Without Test, an object whose state cannot be commanded back
//! (a Dbpos intermediate or bad, a BSC's step position, no readable state) is not operated at
//! all ([`ControlError::Unrestorable`]). [`DeviceLeft`] says how the device was left.

use gander_measure::stats::Summary;
use gander_mms::bit_string::BitString;
use gander_mms::control::{ControlOutcome, CtlModel};
use gander_mms::service::{AccessResult, ObjectName};
use gander_wire::data::Data;
use serde::Serialize;
use std::time::Duration;

use crate::control::{prepare, run, select_cancel, ControlError, ControlOptions, Prepared};
use crate::session::Session;
use crate::ClientError;

/// What to measure.
#[derive(Debug, Clone)]
pub struct RtOptions {
    /// The object, the value asked for (empty: the opposite of the state read before), Test,
    /// checks, origin, the CommandTermination timeout.
    pub control: ControlOptions,
    /// Operations (alternating values).
    pub count: usize,
    /// Pause between two operations.
    pub pause: Duration,
    /// Also measure `count` select-then-Cancel pairs (SBO models only).
    pub cancel: bool,
}

/// Nearest-rank statistics of one phase (`gander_measure::stats`), in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PhaseStats {
    /// Samples.
    pub n: usize,
    /// Median (nearest rank).
    pub p50_ms: f64,
    /// 99th percentile (nearest rank).
    pub p99_ms: f64,
    /// Largest sample.
    pub max_ms: f64,
    /// Arithmetic mean.
    pub mean_ms: f64,
}

fn ms(ns: f64) -> f64 {
    // Microsecond resolution: more digits than the clock's meaning would be noise.
    (ns / 1e3).round() / 1e3
}

impl PhaseStats {
    /// The statistics of nanosecond samples; `None` without samples.
    pub fn from_ns(samples: &[u64]) -> Option<PhaseStats> {
        let s = Summary::from_samples(samples)?;
        Some(PhaseStats {
            n: s.n,
            p50_ms: ms(s.p50),
            p99_ms: ms(s.p99),
            max_ms: ms(s.max),
            mean_ms: ms(s.mean),
        })
    }
}

/// The kept samples of every phase, ns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Samples {
    /// Select round trips.
    pub select: Vec<u64>,
    /// Operate round trips.
    pub operate: Vec<u64>,
    /// Operate response to CommandTermination.
    pub termination: Vec<u64>,
    /// Cancel round trips.
    pub cancel: Vec<u64>,
}

/// How the device was left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum DeviceLeft {
    /// Nothing was operated (the object or the value was refused before any command, or an
    /// earlier step failed).
    Untouched,
    /// The state read after equals the one read before.
    AsFound,
    /// The state differed after the operations; one more operation brought it back.
    Restored,
    /// The state differs from the one before and could not be brought back.
    NotRestored {
        /// Why, and what it reads now.
        detail: String,
    },
    /// The state cannot be compared (not readable, or the session failed).
    Unknown {
        /// Why.
        detail: String,
    },
}

/// The measured round trips of one object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControlRt {
    /// The object, `LD/LN.DO`.
    pub object: String,
    /// ctlModel ordinal (IEC 61850-7-3 CtlModelKind).
    pub ctl_model: i64,
    /// Its name (`direct-with-normal-security`, ...).
    pub ctl_model_name: &'static str,
    /// Whether the commands carried Test = true.
    pub test: bool,
    /// The values operated, alternately (as MMS values, shown).
    pub values: Vec<String>,
    /// Operations asked for.
    pub asked: usize,
    /// Operations that ended positively.
    pub operated: usize,
    /// Select round trip (SBO models).
    pub select_ms: Option<PhaseStats>,
    /// Operate round trip.
    pub operate_ms: Option<PhaseStats>,
    /// Operate response to CommandTermination (enhanced security).
    pub termination_ms: Option<PhaseStats>,
    /// Cancel round trip after a select (when asked, SBO models).
    pub cancel_ms: Option<PhaseStats>,
    /// Why the operations stopped before `asked`, when they did (the server's refusal, a
    /// missing CommandTermination, or the session's failure).
    pub stopped: Option<String>,
    /// What was not measured and why (an SBO object without `Cancel`).
    pub notes: Vec<String>,
    /// The state attribute compared (`LD/LN$ST$DO$stVal`).
    pub state_ref: Option<String>,
    /// The state before.
    pub before: Option<String>,
    /// The state after (after the restoring operation, if one was needed).
    pub after: Option<String>,
    /// How the device was left.
    pub left: DeviceLeft,
    /// The samples (ns) behind the statistics.
    #[serde(skip)]
    pub samples: Samples,
}

/// A measurement and, when the session failed on the way, its error (the samples up to then
/// are kept in `rt`).
#[derive(Debug)]
pub struct Measured {
    /// What was measured.
    pub rt: ControlRt,
    /// The session's failure, if one ended the run.
    pub failed: Option<ClientError>,
}

/// IEC 61850-7-3 CtlModelKind's names.
pub fn model_name(m: CtlModel) -> &'static str {
    match m {
        CtlModel::StatusOnly => "status-only",
        CtlModel::DirectNormal => "direct-with-normal-security",
        CtlModel::SboNormal => "sbo-with-normal-security",
        CtlModel::DirectEnhanced => "direct-with-enhanced-security",
        CtlModel::SboEnhanced => "sbo-with-enhanced-security",
    }
}

/// A value as users read it: `true`, `12`, `2.5`, Dbpos and Tcmd bits as `01`.
pub fn show(d: &Data) -> String {
    match d {
        Data::Boolean(b) => b.to_string(),
        Data::Integer(i) => i.to_string(),
        Data::Unsigned(u) => u.to_string(),
        Data::FloatingPoint32(f) => f.to_string(),
        Data::FloatingPoint64(f) => f.to_string(),
        Data::BitString { .. } => match BitString::from_data(d) {
            Some(b) => (0..b.len())
                .map(|i| if b.get(i) { '1' } else { '0' })
                .collect(),
            None => format!("{d:?}"),
        },
        Data::Structure(c) | Data::Array(c) => {
            let parts: Vec<String> = c.iter().map(show).collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => format!("{other:?}"),
    }
}

/// The ctlVal that commands the state `status` (an `stVal` or `mxVal` read from the object),
/// shaped like the server's ctlVal `template`: SPC BOOLEAN from BOOLEAN, DPC BOOLEAN from the
/// Dbpos (7-3: `10` on = true, `01` off = false; intermediate and bad have no command), INC/ENC
/// INTEGER from INTEGER (and ISC's ValWithTrans posVal), APC AnalogueValue from AnalogueValue.
/// `None` when no command yields it (a BSC's step, a Dbpos in between).
pub fn status_to_ctl(template: &Data, status: &Data) -> Option<Data> {
    match (template, status) {
        (Data::Boolean(_), Data::Boolean(b)) => Some(Data::Boolean(*b)),
        (Data::Boolean(_), Data::BitString { .. }) => {
            let b = BitString::from_data(status)?;
            match (b.len() >= 2, b.get(0), b.get(1)) {
                (true, true, false) => Some(Data::Boolean(true)),
                (true, false, true) => Some(Data::Boolean(false)),
                _ => None,
            }
        }
        (Data::Integer(_), Data::Integer(i)) => Some(Data::Integer(*i)),
        (Data::Integer(_), Data::Unsigned(u)) => i64::try_from(*u).ok().map(Data::Integer),
        (Data::Unsigned(_), Data::Unsigned(u)) => Some(Data::Unsigned(*u)),
        (Data::Unsigned(_), Data::Integer(i)) => u64::try_from(*i).ok().map(Data::Unsigned),
        (Data::Integer(_) | Data::Unsigned(_), Data::Structure(c)) => {
            status_to_ctl(template, c.first()?)
        }
        (Data::Structure(t), Data::Structure(s)) => match (t.first(), s.first()) {
            (Some(Data::FloatingPoint32(_)), Some(Data::FloatingPoint32(f))) => {
                Some(Data::Structure(vec![Data::FloatingPoint32(*f)]))
            }
            (Some(Data::Integer(_)), Some(Data::Integer(i))) => {
                Some(Data::Structure(vec![Data::Integer(*i)]))
            }
            _ => None,
        },
        _ => None,
    }
}

/// A ctlVal different from `v` that can be commanded after it: the other BOOLEAN, the next
/// integer or number, the other step direction of a BSC (`higher` after `lower`).
pub fn other_value(v: &Data) -> Option<Data> {
    Some(match v {
        Data::Boolean(b) => Data::Boolean(!b),
        Data::Integer(i) => Data::Integer(if *i < i64::MAX { i + 1 } else { i - 1 }),
        Data::Unsigned(u) => Data::Unsigned(if *u < u64::MAX { u + 1 } else { u - 1 }),
        Data::Structure(c) => match c.first() {
            Some(Data::FloatingPoint32(f)) => {
                Data::Structure(vec![Data::FloatingPoint32(if *f < 0.0 {
                    f + 1.0
                } else {
                    f - 1.0
                })])
            }
            Some(Data::Integer(i)) => Data::Structure(vec![Data::Integer(if *i < i64::MAX {
                i + 1
            } else {
                i - 1
            })]),
            _ => return None,
        },
        Data::BitString { .. } => {
            let b = BitString::from_data(v)?;
            // Tcmd (7-3): 01 lower, 10 higher.
            let higher = b.len() >= 2 && b.get(0) && !b.get(1);
            let mut t = BitString::new(2);
            t.set(if higher { 1 } else { 0 }, true);
            t.to_data()
        }
        _ => return None,
    })
}

/// The values of `count` operations: `first`, then `back`, alternately.
pub fn plan(first: &Data, back: &Data, count: usize) -> Vec<Data> {
    (0..count)
        .map(|i| if i % 2 == 0 { first } else { back }.clone())
        .collect()
}

/// Where the object's state is read, by the type of its ctlVal (IEC 61850-7-3 controllable
/// CDCs): a BOOLEAN (SPC, DPC) in `stVal`; an INTEGER (INC, ENC, ISC) in `stVal` or `valWTr`;
/// an AnalogueValue (APC) in `mxVal` (FC MX); a Tcmd BIT STRING (BSC, BAC) in `valWTr` or
/// `mxVal`. Only those: a name the object cannot have is not read (iec61850bean 1.9's server
/// drops the connection on a read of a functional constraint the node lacks, and a DPC has
/// no MX).
fn state_names(p: &Prepared) -> Vec<ObjectName> {
    let (st, mx, wtr) = (
        p.name("ST", "stVal"),
        p.name("MX", "mxVal"),
        p.name("ST", "valWTr"),
    );
    match p.template.ctl_val {
        Data::Boolean(_) => vec![st],
        Data::Integer(_) | Data::Unsigned(_) => vec![st, wtr],
        Data::Structure(_) | Data::FloatingPoint32(_) | Data::FloatingPoint64(_) => vec![mx],
        Data::BitString { .. } => vec![wtr, mx],
        _ => vec![st, mx, wtr],
    }
}

fn item(n: &ObjectName) -> String {
    match n {
        ObjectName::DomainSpecific { domain, item } => format!("{domain}/{item}"),
        other => format!("{other:?}"),
    }
}

/// The first state attribute the server reads successfully; `None` when it has none.
fn read_state(s: &mut Session, p: &Prepared) -> Result<Option<(ObjectName, Data)>, ClientError> {
    for n in state_names(p) {
        match s.read(&n, &format!("reading {}", item(&n))) {
            Ok((AccessResult::Success(d), _)) => return Ok(Some((n, d))),
            Ok((AccessResult::Failure(_), _)) => {}
            Err(e) if e.answered() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

fn read_again(s: &mut Session, n: &ObjectName) -> Result<Option<Data>, ClientError> {
    match s.read(n, &format!("reading {}", item(n)))? {
        (AccessResult::Success(d), _) => Ok(Some(d)),
        (AccessResult::Failure(_), _) => Ok(None),
    }
}

/// How an operation that did not end positively ended, in words.
pub fn describe(o: &ControlOutcome) -> String {
    match o {
        ControlOutcome::Done => "done".into(),
        ControlOutcome::SelectFailed => "the select failed (SBO read empty)".into(),
        ControlOutcome::Refused {
            service,
            error,
            last_appl_error,
        } => {
            let cause = last_appl_error
                .as_ref()
                .map(|l| match l.add_cause.name() {
                    Some(n) => format!(", AddCause {n}"),
                    None => format!(", AddCause {}", l.add_cause.0),
                })
                .unwrap_or_default();
            let e = error
                .name()
                .map(str::to_string)
                .unwrap_or(error.0.to_string());
            format!("{service:?} refused (DataAccessError {e}{cause})")
        }
        ControlOutcome::TerminatedNegative(l) => match l.add_cause.name() {
            Some(n) => format!("negative CommandTermination, AddCause {n}"),
            None => format!("negative CommandTermination, AddCause {}", l.add_cause.0),
        },
        ControlOutcome::Protocol(w) => format!("protocol: {w}"),
    }
}

/// Operate `o.control.object` `o.count` times and measure each phase; restore its state.
///
/// `Err` before any operation (the reference, an object that is not controllable, a value
/// that does not fit, a session failure while reading the object). Once operations have run,
/// a session failure is returned in [`Measured::failed`] beside what was measured, with the
/// device state [`DeviceLeft::Unknown`].
pub fn measure(s: &mut Session, o: &RtOptions) -> Result<Measured, ControlError> {
    let p = prepare(s, &o.control.object)?;
    if p.model == CtlModel::StatusOnly {
        return Err(ControlError::NotControllable {
            object: p.object.clone(),
            why: "its ctlModel is status-only".into(),
        });
    }
    let state = read_state(s, &p)?;
    let current = state
        .as_ref()
        .and_then(|(_, d)| status_to_ctl(&p.template.ctl_val, d));
    let state_shown = || match &state {
        Some((_, d)) => show(d),
        None => "no readable stVal, mxVal or valWTr".into(),
    };
    // Without Test the device really moves: only when its state can be commanded back.
    if !o.control.test && current.is_none() {
        return Err(ControlError::Unrestorable {
            object: p.object.clone(),
            state: state_shown(),
        });
    }
    let first = if o.control.value.is_empty() {
        current
            .as_ref()
            .and_then(other_value)
            .ok_or_else(|| ControlError::NoStartValue {
                object: p.object.clone(),
                state: state_shown(),
            })?
    } else {
        p.ctl_val(&o.control.value)?
    };
    let back = match &current {
        Some(c) if *c != first => Some(c.clone()),
        _ => other_value(&first),
    }
    .unwrap_or_else(|| first.clone());
    let values = plan(&first, &back, o.count);
    let mut rt = ControlRt {
        object: p.object.clone(),
        ctl_model: p.model.code(),
        ctl_model_name: model_name(p.model),
        test: o.control.test,
        values: if back == first {
            vec![show(&first)]
        } else {
            vec![show(&first), show(&back)]
        },
        asked: o.count,
        operated: 0,
        select_ms: None,
        operate_ms: None,
        termination_ms: None,
        cancel_ms: None,
        stopped: None,
        notes: Vec::new(),
        state_ref: state.as_ref().map(|(n, _)| item(n)),
        before: state.as_ref().map(|(_, d)| show(d)),
        after: None,
        left: DeviceLeft::Unknown {
            detail: "not read".into(),
        },
        samples: Samples::default(),
    };
    let failed = operate_all(s, &p, o, &values, &first, &mut rt).err();
    if let Some(e) = &failed {
        rt.stopped.get_or_insert_with(|| e.chain());
        rt.left = DeviceLeft::Unknown {
            detail: format!("the session failed: {}", e.chain()),
        };
    } else {
        match leave(s, &p, o, state.as_ref(), &mut rt) {
            Ok(left) => rt.left = left,
            Err(e) => {
                rt.left = DeviceLeft::Unknown {
                    detail: format!("the session failed while restoring: {}", e.chain()),
                };
                summarise(&mut rt);
                return Ok(Measured {
                    rt,
                    failed: Some(e),
                });
            }
        }
    }
    summarise(&mut rt);
    Ok(Measured { rt, failed })
}

fn summarise(rt: &mut ControlRt) {
    rt.select_ms = PhaseStats::from_ns(&rt.samples.select);
    rt.operate_ms = PhaseStats::from_ns(&rt.samples.operate);
    rt.termination_ms = PhaseStats::from_ns(&rt.samples.termination);
    rt.cancel_ms = PhaseStats::from_ns(&rt.samples.cancel);
}

fn session_error(e: ControlError) -> Result<(), ClientError> {
    match e {
        ControlError::Session(c) => Err(c),
        // prepare() has read the object; the rest cannot fail otherwise.
        _ => Ok(()),
    }
}

fn operate_all(
    s: &mut Session,
    p: &Prepared,
    o: &RtOptions,
    values: &[Data],
    first: &Data,
    rt: &mut ControlRt,
) -> Result<(), ClientError> {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(o.pause);
        }
        let r = match run(s, p, &o.control, v.clone()) {
            Ok(r) => r,
            Err(e) => {
                rt.stopped = Some(e.to_string());
                return session_error(e);
            }
        };
        if r.outcome != ControlOutcome::Done {
            rt.stopped = Some(format!("operation {}: {}", i + 1, describe(&r.outcome)));
            break;
        }
        rt.operated += 1;
        let t = r.times;
        if let (Some(a), Some(b)) = (t.started, t.selected) {
            rt.samples.select.push(b.saturating_sub(a));
        }
        if let (Some(a), Some(b)) = (t.selected.or(t.started), t.operated) {
            rt.samples.operate.push(b.saturating_sub(a));
        }
        if let (Some(a), Some(b)) = (t.operated, t.terminated) {
            rt.samples.termination.push(b.saturating_sub(a));
        }
    }
    if o.cancel && p.model.is_sbo() && rt.stopped.is_none() && !has_cancel(s, p)? {
        // 7-3 makes Cancel optional in a controllable CDC's CO (libiec61850's SBO objects
        // without CDC_CTL_MODEL_HAS_CANCEL have none): selecting without it would leave
        // the object selected until sboTimeout.
        rt.notes
            .push("the object has no Cancel (CO$...$Cancel): cancel not measured".into());
    } else if o.cancel && p.model.is_sbo() && rt.stopped.is_none() {
        for _ in 0..o.count {
            std::thread::sleep(o.pause);
            match select_cancel(s, p, &o.control, first.clone()) {
                Ok(Ok((_, cancel))) => rt.samples.cancel.push(cancel),
                Ok(Err(out)) => {
                    rt.stopped = Some(format!("select and cancel: {}", describe(&out)));
                    break;
                }
                Err(e) => {
                    rt.stopped = Some(e.to_string());
                    return session_error(e);
                }
            }
        }
    }
    Ok(())
}

/// Whether the object has a readable `Cancel` structure.
fn has_cancel(s: &mut Session, p: &Prepared) -> Result<bool, ClientError> {
    let n = p.name("CO", "Cancel");
    match s.read(&n, &format!("reading {}", item(&n))) {
        Ok((AccessResult::Success(_), _)) => Ok(true),
        Ok((AccessResult::Failure(_), _)) => Ok(false),
        Err(e) if e.answered() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Reads the state after; operates back to the state before when it differs.
fn leave(
    s: &mut Session,
    p: &Prepared,
    o: &RtOptions,
    before: Option<&(ObjectName, Data)>,
    rt: &mut ControlRt,
) -> Result<DeviceLeft, ClientError> {
    let Some((name, was)) = before else {
        return Ok(DeviceLeft::Unknown {
            detail: "the object has no readable stVal or mxVal".into(),
        });
    };
    let Some(now) = read_again(s, name)? else {
        return Ok(DeviceLeft::Unknown {
            detail: format!("{} is no longer readable", item(name)),
        });
    };
    rt.after = Some(show(&now));
    if now == *was {
        return Ok(DeviceLeft::AsFound);
    }
    let Some(back) = status_to_ctl(&p.template.ctl_val, was) else {
        return Ok(DeviceLeft::NotRestored {
            detail: format!(
                "{} was {} and is {}; no command of this object yields the state before",
                item(name),
                show(was),
                show(&now)
            ),
        });
    };
    let outcome = match run(s, p, &o.control, back) {
        Ok(r) => r.outcome,
        Err(e) => {
            session_error(e)?;
            ControlOutcome::Protocol("the restoring operation could not be built")
        }
    };
    let again = read_again(s, name)?;
    rt.after = again.as_ref().map(show);
    Ok(match (outcome, again) {
        (_, Some(d)) if d == *was => DeviceLeft::Restored,
        (out, d) => DeviceLeft::NotRestored {
            detail: format!(
                "{} was {} and is {} after the restoring operation ({})",
                item(name),
                show(was),
                d.as_ref().map(show).unwrap_or_else(|| "unreadable".into()),
                describe(&out)
            ),
        },
    })
}

#[cfg(test)]
mod tests;
