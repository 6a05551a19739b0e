//! LastApplError (IEC 61850-8-1 clause 20 on control, IEC 61850-7-2 20.5.2.x AddCause): when a
//! control service (a Write to `...$CO$x$Oper`, `SBOw` or `Cancel`) fails, the server sends an
//! unconfirmed InformationReport on the vmd-specific variable `LastApplError` before the
//! Write's negative response, so the client learns *why*:
//!
//! ```text
//! LastApplError STRUCTURE { CntrlObj VisibleString, Error INTEGER,
//!     Origin STRUCTURE { orCat INTEGER, orIdent OCTET STRING }, ctlNum INT8U, AddCause INTEGER }
//! ```
//!
//! The layout and the codes below are those libiec61850 1.6.1 sends (`control.c`,
//! `iec61850_common.h`, captured in `docs/mms-services.md`); the standard's tables are not
//! public, so only the codes libiec61850 names are given names here.

use gander_wire::data::Data;

use crate::error::{Error, Layer, Result};
use crate::service::{
    AccessResult, InformationReport, ObjectName, VariableAccessSpecification, VariableRef,
};

const L: Layer = Layer::Iec61850;

/// The variable name of the report.
pub const LAST_APPL_ERROR: &str = "LastApplError";

/// The originator of a control (IEC 61850-7-2 `Originator`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// orCat (0 not-supported, 1 bay-control, 2 station-control, 3 remote-control, ...).
    pub or_cat: i64,
    /// orIdent.
    pub or_ident: Vec<u8>,
}

/// Error of LastApplError (libiec61850 `ControlLastApplError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlError(pub i64);

impl ControlError {
    /// No error.
    pub const NO_ERROR: Self = Self(0);
    /// Unknown.
    pub const UNKNOWN: Self = Self(1);
    /// Timeout test not ok.
    pub const TIMEOUT_TEST_NOT_OK: Self = Self(2);
    /// Operator test not ok.
    pub const OPERATOR_TEST_NOT_OK: Self = Self(3);
}

/// AddCause (IEC 61850-7-2 Ed.2 `AddCause`, 0..=27 in the standard's order; libiec61850 1.6
/// `ControlAddCause` numbers them the same, calling 24 `ABORTION_BY_COMMAND`), kept open: a
/// device may send a code this list does not name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddCause(pub i64);

const ADD_CAUSE_NAMES: [&str; 28] = [
    "unknown",
    "not-supported",
    "blocked-by-switching-hierarchy",
    "select-failed",
    "invalid-position",
    "position-reached",
    "parameter-change-in-execution",
    "step-limit",
    "blocked-by-mode",
    "blocked-by-process",
    "blocked-by-interlocking",
    "blocked-by-synchrocheck",
    "command-already-in-execution",
    "blocked-by-health",
    "1-of-n-control",
    "abortion-by-cancel",
    "time-limit-over",
    "abortion-by-trip",
    "object-not-selected",
    "object-already-selected",
    "no-access-authority",
    "ended-with-overshoot",
    "abortion-due-to-deviation",
    "abortion-by-communication-loss",
    "blocked-by-command",
    "none",
    "inconsistent-parameters",
    "locked-by-other-client",
];

impl AddCause {
    /// 0: unknown.
    pub const UNKNOWN: Self = Self(0);
    /// 1: not-supported.
    pub const NOT_SUPPORTED: Self = Self(1);
    /// 2: blocked-by-switching-hierarchy.
    pub const BLOCKED_BY_SWITCHING_HIERARCHY: Self = Self(2);
    /// 3: select-failed.
    pub const SELECT_FAILED: Self = Self(3);
    /// 4: invalid-position.
    pub const INVALID_POSITION: Self = Self(4);
    /// 5: position-reached.
    pub const POSITION_REACHED: Self = Self(5);
    /// 6: parameter-change-in-execution.
    pub const PARAMETER_CHANGE_IN_EXECUTION: Self = Self(6);
    /// 7: step-limit.
    pub const STEP_LIMIT: Self = Self(7);
    /// 8: blocked-by-mode.
    pub const BLOCKED_BY_MODE: Self = Self(8);
    /// 9: blocked-by-process.
    pub const BLOCKED_BY_PROCESS: Self = Self(9);
    /// 10: blocked-by-interlocking.
    pub const BLOCKED_BY_INTERLOCKING: Self = Self(10);
    /// 11: blocked-by-synchrocheck.
    pub const BLOCKED_BY_SYNCHROCHECK: Self = Self(11);
    /// 12: command-already-in-execution.
    pub const COMMAND_ALREADY_IN_EXECUTION: Self = Self(12);
    /// 13: blocked-by-health.
    pub const BLOCKED_BY_HEALTH: Self = Self(13);
    /// 14: 1-of-n-control.
    pub const ONE_OF_N_CONTROL: Self = Self(14);
    /// 15: abortion-by-cancel.
    pub const ABORTION_BY_CANCEL: Self = Self(15);
    /// 16: time-limit-over.
    pub const TIME_LIMIT_OVER: Self = Self(16);
    /// 17: abortion-by-trip.
    pub const ABORTION_BY_TRIP: Self = Self(17);
    /// 18: object-not-selected.
    pub const OBJECT_NOT_SELECTED: Self = Self(18);
    /// 19: object-already-selected.
    pub const OBJECT_ALREADY_SELECTED: Self = Self(19);
    /// 20: no-access-authority.
    pub const NO_ACCESS_AUTHORITY: Self = Self(20);
    /// 21: ended-with-overshoot.
    pub const ENDED_WITH_OVERSHOOT: Self = Self(21);
    /// 22: abortion-due-to-deviation.
    pub const ABORTION_DUE_TO_DEVIATION: Self = Self(22);
    /// 23: abortion-by-communication-loss.
    pub const ABORTION_BY_COMMUNICATION_LOSS: Self = Self(23);
    /// 24: blocked-by-command.
    pub const BLOCKED_BY_COMMAND: Self = Self(24);
    /// 25: none.
    pub const NONE: Self = Self(25);
    /// 26: inconsistent-parameters.
    pub const INCONSISTENT_PARAMETERS: Self = Self(26);
    /// 27: locked-by-other-client.
    pub const LOCKED_BY_OTHER_CLIENT: Self = Self(27);

    /// The cause's name as libiec61850 lists it, `None` for codes it does not name.
    pub fn name(self) -> Option<&'static str> {
        usize::try_from(self.0)
            .ok()
            .and_then(|i| ADD_CAUSE_NAMES.get(i).copied())
    }
}

/// One decoded LastApplError.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastApplError {
    /// CntrlObj: the control object's MMS reference, e.g. `IMPLD0/GGIO1$CO$SPCSO1$Oper`.
    pub cntrl_obj: String,
    /// Error.
    pub error: ControlError,
    /// Origin of the refused command.
    pub origin: Origin,
    /// ctlNum of the refused command.
    pub ctl_num: u8,
    /// AddCause.
    pub add_cause: AddCause,
}

fn bad(what: &'static str) -> Error {
    Error::malformed(L, what, "wrong MMS type")
}

fn int(d: &Data, what: &'static str) -> Result<i64> {
    match d {
        Data::Integer(v) => Ok(*v),
        _ => Err(bad(what)),
    }
}

impl LastApplError {
    /// `Ok(None)` when `ir` is not a LastApplError report; the decoded value when it is;
    /// an error when it is one with the wrong layout.
    pub fn from_information_report(ir: &InformationReport) -> Result<Option<Self>> {
        let VariableAccessSpecification::ListOfVariable(vars) = &ir.spec else {
            return Ok(None);
        };
        let [VariableRef {
            name: ObjectName::VmdSpecific(n),
            access: None,
        }] = vars.as_slice()
        else {
            return Ok(None);
        };
        if n != LAST_APPL_ERROR {
            return Ok(None);
        }
        let [AccessResult::Success(Data::Structure(v))] = ir.results.as_slice() else {
            return Err(Error::malformed(L, "LastApplError", "not one structure"));
        };
        let [obj, err, origin, ctl_num, cause] = v.as_slice() else {
            return Err(Error::malformed(L, "LastApplError", "not 5 components"));
        };
        let Data::VisibleString(cntrl_obj) = obj else {
            return Err(bad("CntrlObj"));
        };
        let origin = match origin {
            Data::Structure(o) => match o.as_slice() {
                [c, Data::OctetString(id)] => Origin {
                    or_cat: int(c, "orCat")?,
                    or_ident: id.clone(),
                },
                _ => return Err(bad("Origin")),
            },
            _ => return Err(bad("Origin")),
        };
        let ctl_num = match ctl_num {
            Data::Unsigned(n) => u8::try_from(*n).map_err(|_| bad("ctlNum"))?,
            _ => return Err(bad("ctlNum")),
        };
        Ok(Some(LastApplError {
            cntrl_obj: cntrl_obj.clone(),
            error: ControlError(int(err, "Error")?),
            origin,
            ctl_num,
            add_cause: AddCause(int(cause, "AddCause")?),
        }))
    }

    /// As the InformationReport a server sends.
    pub fn to_information_report(&self) -> InformationReport {
        InformationReport {
            spec: VariableAccessSpecification::names([ObjectName::VmdSpecific(
                LAST_APPL_ERROR.into(),
            )]),
            results: vec![AccessResult::Success(Data::Structure(vec![
                Data::VisibleString(self.cntrl_obj.clone()),
                Data::Integer(self.error.0),
                Data::Structure(vec![
                    Data::Integer(self.origin.or_cat),
                    Data::OctetString(self.origin.or_ident.clone()),
                ]),
                Data::Unsigned(self.ctl_num as u64),
                Data::Integer(self.add_cause.0),
            ]))],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden;
    use crate::pdu::{ConfirmedResponse, MmsPdu, Unconfirmed};
    use crate::service::DataAccessError;
    use gander_wire::Codec;
    use proptest::prelude::*;

    #[test]
    fn golden_libiec61850_refused_operate() {
        // The captured refused Operate: LastApplError report, then the Write's failure.
        let b = golden::find(1, false, "a34e");
        let p = MmsPdu::parse(&b).unwrap();
        assert_eq!(p.to_vec(), b);
        let MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir)) = p else {
            panic!()
        };
        let e = LastApplError::from_information_report(&ir)
            .unwrap()
            .unwrap();
        assert_eq!(e.cntrl_obj, "IMPLD0/GGIO1$CO$SPCSO1$Oper");
        assert_eq!(e.error, ControlError::NO_ERROR);
        assert_eq!(
            e.origin,
            Origin {
                or_cat: 3,
                or_ident: b"gander".to_vec()
            }
        );
        assert_eq!(e.ctl_num, 1);
        assert_eq!(e.add_cause.name(), Some("unknown"));
        assert_eq!(e.to_information_report(), ir);
        // The Write response is the server's next PDU.
        let a = golden::association(1);
        let at = a.iter().position(|(_, p)| *p == b).unwrap();
        let (from_client, w) = a[at + 1].clone();
        assert!(!from_client);
        let MmsPdu::ConfirmedResponse {
            response: ConfirmedResponse::Write(w),
            ..
        } = MmsPdu::parse(&w).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            w.first_failure(),
            Some((0, DataAccessError::OBJECT_ACCESS_DENIED))
        );
        // A report that is not LastApplError is not one.
        let rpt = InformationReport::rpt(vec![]);
        assert_eq!(LastApplError::from_information_report(&rpt), Ok(None));
    }

    #[test]
    fn layout_errors() {
        let good = LastApplError {
            cntrl_obj: "LD/LN$CO$X$Oper".into(),
            error: ControlError::UNKNOWN,
            origin: Origin {
                or_cat: 2,
                or_ident: vec![],
            },
            ctl_num: 7,
            add_cause: AddCause(10),
        }
        .to_information_report();
        let AccessResult::Success(Data::Structure(v)) = &good.results[0] else {
            panic!()
        };
        for i in 0..v.len() {
            let mut bad = good.clone();
            let mut w = v.clone();
            w[i] = Data::Boolean(true);
            bad.results = vec![AccessResult::Success(Data::Structure(w))];
            assert!(LastApplError::from_information_report(&bad).is_err(), "{i}");
        }
        let mut short = good.clone();
        short.results = vec![AccessResult::Success(Data::Structure(v[..4].to_vec()))];
        assert!(LastApplError::from_information_report(&short).is_err());
        assert_eq!(AddCause(10).name(), Some("blocked-by-interlocking"));
        assert_eq!(AddCause(99).name(), None);
    }

    proptest! {
        #[test]
        fn round_trip(obj in "[A-Za-z0-9$/]{1,40}", e in any::<i64>(), c in any::<i64>(),
                      id in proptest::collection::vec(any::<u8>(), 0..16), n in any::<u8>(),
                      cause in any::<i64>()) {
            let x = LastApplError {
                cntrl_obj: obj, error: ControlError(e),
                origin: Origin { or_cat: c, or_ident: id }, ctl_num: n, add_cause: AddCause(cause),
            };
            let pdu = MmsPdu::Unconfirmed(Unconfirmed::InformationReport(x.to_information_report()));
            let MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir)) =
                MmsPdu::parse(&pdu.to_vec()).unwrap() else { panic!() };
            prop_assert_eq!(LastApplError::from_information_report(&ir).unwrap(), Some(x));
        }
    }
}
