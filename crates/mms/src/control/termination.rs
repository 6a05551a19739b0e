//! CommandTermination (IEC 61850-7-2 20.6.x, mapped by IEC 61850-8-1 clause 20): with enhanced
//! security the server tells the client that an operate ended, by an unconfirmed
//! InformationReport after the Write response:
//!
//! - positive: listOfVariable `{ LD/LN$CO$DO$Oper }`, the Oper value as written;
//! - negative: listOfVariable `{ LastApplError (vmd-specific), LD/LN$CO$DO$Oper }`, the
//!   LastApplError structure (why it failed), then the Oper value.
//!
//! The layout is the one libiec61850 1.6 sends (`ControlObject_sendCommandTermination*`).

use gander_wire::data::Data;

use crate::last_appl_error::{LastApplError, LAST_APPL_ERROR};
use crate::service::{
    AccessResult, InformationReport, ObjectName, VariableAccessSpecification, VariableRef,
};

/// One CommandTermination.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandTermination {
    /// The logical device's domain.
    pub domain: String,
    /// The Oper item, `LN$CO$DO$Oper`.
    pub item: String,
    /// The Oper value the operate carried.
    pub oper: Data,
    /// `None`: the command succeeded; `Some`: why it did not.
    pub error: Option<LastApplError>,
}

/// Why an InformationReport that looks like a CommandTermination is not a valid one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TerminationError {
    /// Values and variables do not pair, or a value is a failure.
    #[error("CommandTermination: values do not match the variables")]
    Values,
    /// The LastApplError of a negative termination is malformed.
    #[error("CommandTermination: malformed LastApplError")]
    LastApplError,
}

fn is_oper(name: &ObjectName) -> Option<(&str, &str)> {
    match name {
        ObjectName::DomainSpecific { domain, item }
            if item.ends_with("$Oper") && item.contains("$CO$") =>
        {
            Some((domain, item))
        }
        _ => None,
    }
}

impl CommandTermination {
    /// `Ok(None)` when `ir` is not a CommandTermination; the decoded value when it is.
    pub fn from_information_report(
        ir: &InformationReport,
    ) -> Result<Option<Self>, TerminationError> {
        let VariableAccessSpecification::ListOfVariable(vars) = &ir.spec else {
            return Ok(None);
        };
        let plain = |v: &VariableRef| v.access.is_none();
        let (oper_at, negative) = match vars.as_slice() {
            [o] if plain(o) && is_oper(&o.name).is_some() => (0, false),
            [l, o]
                if plain(l)
                    && plain(o)
                    && l.name == ObjectName::VmdSpecific(LAST_APPL_ERROR.into())
                    && is_oper(&o.name).is_some() =>
            {
                (1, true)
            }
            _ => return Ok(None),
        };
        if ir.results.len() != vars.len() {
            return Err(TerminationError::Values);
        }
        let Some((domain, item)) = is_oper(&vars[oper_at].name) else {
            return Ok(None);
        };
        let AccessResult::Success(oper) = &ir.results[oper_at] else {
            return Err(TerminationError::Values);
        };
        let error = if negative {
            let lae = InformationReport {
                spec: VariableAccessSpecification::ListOfVariable(vec![vars[0].clone()]),
                results: vec![ir.results[0].clone()],
            };
            match LastApplError::from_information_report(&lae) {
                Ok(Some(e)) => Some(e),
                _ => return Err(TerminationError::LastApplError),
            }
        } else {
            None
        };
        Ok(Some(CommandTermination {
            domain: domain.to_string(),
            item: item.to_string(),
            oper: oper.clone(),
            error,
        }))
    }

    /// As the InformationReport a server sends.
    pub fn to_information_report(&self) -> InformationReport {
        let oper = ObjectName::domain(self.domain.clone(), self.item.clone());
        match &self.error {
            None => InformationReport {
                spec: VariableAccessSpecification::names([oper]),
                results: vec![AccessResult::Success(self.oper.clone())],
            },
            Some(e) => {
                let mut lae = e.to_information_report();
                InformationReport {
                    spec: VariableAccessSpecification::names([
                        ObjectName::VmdSpecific(LAST_APPL_ERROR.into()),
                        oper,
                    ]),
                    results: vec![
                        lae.results
                            .pop()
                            .unwrap_or(AccessResult::Success(Data::Structure(Vec::new()))),
                        AccessResult::Success(self.oper.clone()),
                    ],
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::last_appl_error::{AddCause, ControlError, Origin};
    use crate::pdu::{MmsPdu, Unconfirmed};
    use gander_wire::Codec;
    use proptest::prelude::*;

    fn lae(n: u8, cause: i64) -> LastApplError {
        LastApplError {
            cntrl_obj: "LD0/CSWI1$CO$Pos$Oper".into(),
            error: ControlError::UNKNOWN,
            origin: Origin {
                or_cat: 2,
                or_ident: b"x".to_vec(),
            },
            ctl_num: n,
            add_cause: AddCause(cause),
        }
    }

    #[test]
    fn shapes() {
        let pos = CommandTermination {
            domain: "IEDLD0".into(),
            item: "CSWI1$CO$Pos$Oper".into(),
            oper: Data::Structure(vec![Data::Boolean(true)]),
            error: None,
        };
        let ir = pos.to_information_report();
        assert_eq!(
            CommandTermination::from_information_report(&ir),
            Ok(Some(pos.clone()))
        );
        let neg = CommandTermination {
            error: Some(lae(4, AddCause::ABORTION_BY_CANCEL.0)),
            ..pos.clone()
        };
        let ir = neg.to_information_report();
        assert_eq!(ir.results.len(), 2);
        assert_eq!(
            CommandTermination::from_information_report(&ir),
            Ok(Some(neg))
        );
        // A plain LastApplError or an RPT is not a termination.
        assert_eq!(
            CommandTermination::from_information_report(&lae(1, 0).to_information_report()),
            Ok(None)
        );
        assert_eq!(
            CommandTermination::from_information_report(&InformationReport::rpt(vec![])),
            Ok(None)
        );
        // Values missing.
        let mut short = pos.to_information_report();
        short.results.clear();
        assert_eq!(
            CommandTermination::from_information_report(&short),
            Err(TerminationError::Values)
        );
        let mut bad = ir_with_bad_lae();
        bad.results[0] = AccessResult::Success(Data::Boolean(true));
        assert_eq!(
            CommandTermination::from_information_report(&bad),
            Err(TerminationError::LastApplError)
        );
    }

    fn ir_with_bad_lae() -> InformationReport {
        CommandTermination {
            domain: "D".into(),
            item: "L$CO$X$Oper".into(),
            oper: Data::Boolean(false),
            error: Some(lae(0, 0)),
        }
        .to_information_report()
    }

    proptest! {
        #[test]
        fn round_trip(domain in "[A-Za-z0-9]{1,20}", ln in "[A-Za-z0-9]{1,12}", d in "[A-Za-z0-9]{1,12}",
                      v in any::<bool>(), neg in proptest::option::of((any::<u8>(), 0i64..40))) {
            let t = CommandTermination {
                domain, item: format!("{ln}$CO${d}$Oper"),
                oper: Data::Structure(vec![Data::Boolean(v), Data::Unsigned(3)]),
                error: neg.map(|(n, c)| lae(n, c)),
            };
            let pdu = MmsPdu::Unconfirmed(Unconfirmed::InformationReport(t.to_information_report()));
            let MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir)) =
                MmsPdu::parse(&pdu.to_vec()).unwrap() else { panic!() };
            prop_assert_eq!(CommandTermination::from_information_report(&ir), Ok(Some(t)));
        }
    }
}
