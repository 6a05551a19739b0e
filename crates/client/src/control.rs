//! One control operation of an external IEC 61850 server's object (IEC 61850-7-2 clause 20),
//! driven through the client's blocking [`Session`] (used by `gander mms control`, the probe's
//! `--control` and `gander run`'s control rows through [`crate::control_rt`]): the sans-I/O
//! [`gander_mms::control::ControlOperation`] says what to send, this module sends it, feeds the
//! answers and reports back and waits for the CommandTermination of enhanced security.
//!
//! It first reads the object's `CF$ctlModel` and its `Oper` structure: the Oper value the
//! server holds is the template of the one written (so `operTm`, `ctlNum` and the Ed.1/Ed.2
//! `T` follow the device's type), and the ctlVal's MMS kind says how to read the value given.
//! Operating changes the device: callers must name the object explicitly, and `Test` is set
//! unless told otherwise.

use crate::clock::{now_ns, unix_ms};
use gander_mms::bit_string::BitString;
use gander_mms::control::{
    Check, ControlOperation, ControlOutcome, ControlParams, ControlRequest, ControlService,
    ControlTime, ControlTimes, CtlModel,
};
use gander_mms::last_appl_error::Origin;
use gander_mms::service::{ObjectName, VariableAccessSpecification, WriteRequest};
use gander_wire::data::Data;
use std::time::Duration;

use crate::session::Session;
use crate::ClientError;

/// What to operate.
#[derive(Debug, Clone)]
pub struct ControlOptions {
    /// The object, `LD/LN.DO` (IEC 61850-7-2 notation).
    pub object: String,
    /// The value: `true`/`false` (SPC, DPC), an integer (INC, ENC, ISC), a number (APC),
    /// `higher`/`lower`/`stop` (BSC).
    pub value: String,
    /// Set Test (the device must not change its process).
    pub test: bool,
    /// Ask for the interlock check.
    pub interlock_check: bool,
    /// Ask for the synchrocheck.
    pub synchro_check: bool,
    /// Originator category (3: remote-control).
    pub or_cat: i64,
    /// Originator identification.
    pub or_ident: Vec<u8>,
    /// Longest wait for the CommandTermination.
    pub termination_timeout: Duration,
}

/// Why a control could not be run (the server's refusal is an outcome, not an error).
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The session failed.
    #[error(transparent)]
    Session(#[from] ClientError),
    /// The object reference is not `LD/LN.DO`.
    #[error("control object {0:?} is not LD/LN.DO")]
    Reference(String),
    /// The object has no readable ctlModel or Oper.
    #[error("{object} is not a controllable object ({why})")]
    NotControllable {
        /// The object.
        object: String,
        /// What was missing.
        why: String,
    },
    /// Without Test, the object would be operated although the state found cannot be
    /// commanded back (a Dbpos in between or bad, a step position, no readable state).
    #[error("{object}: the state before ({state}) cannot be restored by a command of this object; operate it with Test set, or by hand")]
    Unrestorable {
        /// The object.
        object: String,
        /// The state read before, or why there is none.
        state: String,
    },
    /// No first value was given and the state read before names none (no readable state, or
    /// one no command yields).
    #[error("{object}: no value given to operate it with, and the state before ({state}) names none to start from: give the first value (--control-value)")]
    NoStartValue {
        /// The object.
        object: String,
        /// The state read before, or why there is none.
        state: String,
    },
    /// The value does not fit the object's ctlVal.
    #[error("value {value:?} does not fit ctlVal ({expected})")]
    Value {
        /// What was given.
        value: String,
        /// What the ctlVal takes.
        expected: &'static str,
    },
}

/// How the operation went.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlReport {
    /// The object's ctlModel as the server declares it.
    pub model: CtlModel,
    /// How the operation ended.
    pub outcome: ControlOutcome,
    /// Phase timestamps, CLOCK_MONOTONIC ns.
    pub times: ControlTimes,
}

fn split(object: &str) -> Option<(String, String, String)> {
    let (ld, rest) = object.split_once('/')?;
    let (ln, dob) = rest.split_once('.')?;
    Some((ld.to_string(), ln.to_string(), dob.replace('.', "$")))
}

/// The ctlVal for `value`, shaped like the `template` ctlVal the server holds.
fn ctl_val(template: &Data, value: &str) -> Result<Data, ControlError> {
    let bad = |expected| ControlError::Value {
        value: value.to_string(),
        expected,
    };
    Ok(match template {
        Data::Boolean(_) => Data::Boolean(match value {
            "true" | "1" | "on" => true,
            "false" | "0" | "off" => false,
            _ => return Err(bad("true or false")),
        }),
        Data::Integer(_) => Data::Integer(value.parse().map_err(|_| bad("an integer"))?),
        Data::Unsigned(_) => Data::Unsigned(value.parse().map_err(|_| bad("an unsigned integer"))?),
        Data::BitString { .. } => {
            let (a, b) = match value {
                "stop" => (false, false),
                "lower" => (false, true),
                "higher" => (true, false),
                _ => return Err(bad("higher, lower or stop")),
            };
            let mut t = BitString::new(2);
            t.set(0, a);
            t.set(1, b);
            t.to_data()
        }
        Data::Structure(c) => match c.first() {
            Some(Data::FloatingPoint32(_)) => Data::Structure(vec![Data::FloatingPoint32(
                value.parse().map_err(|_| bad("a number"))?,
            )]),
            Some(Data::Integer(_)) => Data::Structure(vec![Data::Integer(
                value.parse().map_err(|_| bad("an integer"))?,
            )]),
            _ => return Err(bad("an AnalogueValue")),
        },
        _ => return Err(bad("a supported ctlVal type")),
    })
}

/// A control object as the server declares it: read once, operated many times.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The object as given, `LD/LN.DO`.
    pub object: String,
    /// The logical device (MMS domain).
    pub ld: String,
    /// The logical node.
    pub ln: String,
    /// The data object, `$`-separated below the LN (`Pos`, `SPCSO1`, `Sub$DO`).
    pub dob: String,
    /// The object's ctlModel as the server declares it (`CF$ctlModel`).
    pub model: CtlModel,
    /// The Oper structure the server holds: the template of the one written.
    pub template: ControlParams,
}

impl Prepared {
    /// The MMS name of `LN$FC$DO$suffix` in the object's domain.
    pub fn name(&self, fc: &str, suffix: &str) -> ObjectName {
        let item = if suffix.is_empty() {
            format!("{}${fc}${}", self.ln, self.dob)
        } else {
            format!("{}${fc}${}${suffix}", self.ln, self.dob)
        };
        ObjectName::domain(self.ld.clone(), item)
    }

    /// The ctlVal for `value` (text as users write it), shaped like the server's ctlVal.
    pub fn ctl_val(&self, value: &str) -> Result<Data, ControlError> {
        ctl_val(&self.template.ctl_val, value)
    }
}

/// Reads `o.object`'s ctlModel and Oper: what [`run`] needs to operate it.
pub fn prepare(session: &mut Session, object: &str) -> Result<Prepared, ControlError> {
    let (ld, ln, dob) = split(object).ok_or_else(|| ControlError::Reference(object.to_string()))?;
    let not = |why: String| ControlError::NotControllable {
        object: object.to_string(),
        why,
    };
    let mut read = |item: String| -> Result<Data, ControlError> {
        let n = ObjectName::domain(ld.clone(), item.clone());
        Ok(session.read_value(&n, &format!("reading {item}"))?)
    };
    let model = match read(format!("{ln}$CF${dob}$ctlModel"))? {
        Data::Integer(c) => CtlModel::from_code(c),
        Data::Unsigned(c) => i64::try_from(c).ok().and_then(CtlModel::from_code),
        _ => None,
    }
    .ok_or_else(|| not("ctlModel is not a CtlModelKind".into()))?;
    let oper = read(format!("{ln}$CO${dob}$Oper"))?;
    let template = ControlParams::from_data(ControlService::Operate, &oper)
        .map_err(|e| not(format!("its Oper: {e}")))?;
    Ok(Prepared {
        object: object.to_string(),
        ld,
        ln,
        dob,
        model,
        template,
    })
}

/// The command's parameters: `ctlVal`, this client's origin, a fresh `ctlNum` and `T` where
/// the server's Oper has them, `Test` and `Check` as asked (7-2 20.5.2 carries them unchanged
/// from SBOw to Oper).
fn params(p: &Prepared, o: &ControlOptions, ctl_val: Data) -> ControlParams {
    ControlParams {
        service: ControlService::Operate,
        ctl_val,
        oper_tm: p.template.oper_tm.map(|_| [0; 8]),
        origin: Origin {
            or_cat: o.or_cat,
            or_ident: o.or_ident.clone(),
        },
        ctl_num: p.template.ctl_num.map(|_| (unix_ms() % 256) as u8),
        t: match &p.template.t {
            ControlTime::Utc(_) => ControlTime::Utc(gander_mms::model::utc_time(unix_ms())),
            ControlTime::Binary(b) => ControlTime::Binary(b.clone()),
        },
        test: o.test,
        check: Some(Check {
            synchrocheck: o.synchro_check,
            interlock: o.interlock_check,
        }),
    }
}

/// Run one control operation of `o.object` on `session` (reads its ctlModel and Oper first).
pub fn operate(session: &mut Session, o: &ControlOptions) -> Result<ControlReport, ControlError> {
    let p = prepare(session, &o.object)?;
    let v = p.ctl_val(&o.value)?;
    run(session, &p, o, v)
}

/// Operate the prepared object once with `ctl_val` (the options' `object` and `value` are not
/// used: `p` and `ctl_val` say what): select if the model asks for it, operate, and with
/// enhanced security wait for the CommandTermination. A refusal is an outcome, not an error.
pub fn run(
    session: &mut Session,
    p: &Prepared,
    o: &ControlOptions,
    ctl_val: Data,
) -> Result<ControlReport, ControlError> {
    let not = |why: String| ControlError::NotControllable {
        object: p.object.clone(),
        why,
    };
    let params = params(p, o, ctl_val);
    let model = p.model;
    let mut op = ControlOperation::new(&p.object, model, params).map_err(|e| not(e.to_string()))?;
    let drain = |s: &mut Session, op: &mut ControlOperation| -> Result<(), ControlError> {
        while let Some(r) = s.next_report(0)? {
            op.on_report(r.at_ns, &r.report);
        }
        Ok(())
    };
    while op.outcome().is_none() {
        match op.poll_request(now_ns()) {
            Some(ControlRequest::Read(n)) => {
                let (r, _) = session.read(&n, "reading SBO (select)")?;
                let at = now_ns();
                drain(session, &mut op)?;
                op.on_read(at, &r);
            }
            Some(ControlRequest::Write(n, d)) => {
                let what = match &n {
                    ObjectName::DomainSpecific { item, .. } => format!("writing {item}"),
                    _ => "writing".to_string(),
                };
                let r = session.write(write_request(n, d), &what)?;
                let at = now_ns();
                drain(session, &mut op)?;
                op.on_write(at, r);
            }
            None if op.awaits_termination() => {
                let deadline = now_ns().saturating_add(o.termination_timeout.as_nanos() as u64);
                match session.next_report(deadline)? {
                    Some(r) => op.on_report(r.at_ns, &r.report),
                    None => {
                        return Ok(ControlReport {
                            model,
                            outcome: ControlOutcome::Protocol("no CommandTermination in time"),
                            times: op.times(),
                        })
                    }
                }
            }
            None => break,
        }
    }
    Ok(ControlReport {
        model,
        outcome: op
            .outcome()
            .cloned()
            .unwrap_or(ControlOutcome::Protocol("the operation stalled")),
        times: op.times(),
    })
}

/// One select followed by a Cancel of an SBO object (IEC 61850-7-2 20.7; 8-1 20.2: a Write of
/// `Cancel`), the object left unselected and unchanged: the select's and the Cancel's round
/// trips in ns, or the outcome when the select or the Cancel was refused.
pub fn select_cancel(
    session: &mut Session,
    p: &Prepared,
    o: &ControlOptions,
    ctl_val: Data,
) -> Result<Result<(u64, u64), ControlOutcome>, ControlError> {
    let not = |why: String| ControlError::NotControllable {
        object: p.object.clone(),
        why,
    };
    if !p.model.is_sbo() {
        return Err(not(
            "only select-before-operate objects are cancelled".into()
        ));
    }
    let params = params(p, o, ctl_val);
    let mut op =
        ControlOperation::new(&p.object, p.model, params).map_err(|e| not(e.to_string()))?;
    let t0 = now_ns();
    match op.poll_request(t0) {
        Some(ControlRequest::Read(n)) => {
            let (r, _) = session.read(&n, "reading SBO (select)")?;
            let at = now_ns();
            session
                .take_reports()
                .for_each(|r| op.on_report(r.at_ns, &r.report));
            op.on_read(at, &r);
        }
        Some(ControlRequest::Write(n, d)) => {
            let r = session.write(write_request(n, d), "writing SBOw (select)")?;
            let at = now_ns();
            session
                .take_reports()
                .for_each(|r| op.on_report(r.at_ns, &r.report));
            op.on_write(at, r);
        }
        None => return Ok(Err(ControlOutcome::Protocol("nothing to select"))),
    }
    if let Some(out) = op.outcome() {
        return Ok(Err(out.clone()));
    }
    let selected = op.times().selected.unwrap_or(t0);
    let ControlRequest::Write(n, d) = op.cancel() else {
        return Ok(Err(ControlOutcome::Protocol("a Cancel is a write")));
    };
    let c0 = now_ns();
    let r = session.write(write_request(n, d), "writing Cancel")?;
    let c1 = now_ns();
    // A LastApplError sent before a refused Cancel is not needed here: the refusal is shown.
    session.take_reports().for_each(drop);
    Ok(match r {
        Ok(()) => Ok((selected.saturating_sub(t0), c1.saturating_sub(c0))),
        Err(error) => Err(ControlOutcome::Refused {
            service: ControlService::Cancel,
            error,
            last_appl_error: None,
        }),
    })
}

fn write_request(n: ObjectName, d: Data) -> WriteRequest {
    WriteRequest {
        spec: VariableAccessSpecification::names([n]),
        data: vec![d],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_ctl_val_type() {
        assert_eq!(
            ctl_val(&Data::Boolean(false), "true").unwrap(),
            Data::Boolean(true)
        );
        assert_eq!(ctl_val(&Data::Integer(0), "-3").unwrap(), Data::Integer(-3));
        assert_eq!(
            ctl_val(&Data::Structure(vec![Data::FloatingPoint32(0.0)]), "2.5").unwrap(),
            Data::Structure(vec![Data::FloatingPoint32(2.5)])
        );
        assert_eq!(
            ctl_val(&BitString::new(2).to_data(), "higher").unwrap(),
            BitString::with_bits(2, &[0]).to_data()
        );
        assert!(matches!(
            ctl_val(&Data::Boolean(false), "2"),
            Err(ControlError::Value { .. })
        ));
        assert!(ctl_val(&Data::VisibleString(String::new()), "x").is_err());
        assert_eq!(
            split("LD0/CSWI1.Pos"),
            Some(("LD0".into(), "CSWI1".into(), "Pos".into()))
        );
        assert_eq!(split("LD0/CSWI1"), None);
    }
}
