//! A client's control operation, sans-I/O (IEC 61850-7-2 clause 20 from the client's side,
//! IEC 61850-8-1 clause 20 services): given the object's ctlModel, the operation says which
//! request to send next, consumes the answers and the reports, and records when each phase
//! ended, so a blocking driver (or a measurement) only moves PDUs and passes timestamps in.
//!
//! | ctlModel | requests | ends with |
//! |---|---|---|
//! | 1 direct-normal | Write `Oper` | the Write response |
//! | 2 sbo-normal | Read `SBO`, Write `Oper` | the Write response |
//! | 3 direct-enhanced | Write `Oper` | CommandTermination |
//! | 4 sbo-enhanced | Write `SBOw`, Write `Oper` | CommandTermination |
//!
//! A refused service ends the operation with the LastApplError the server sent before the
//! response, if it sent one; a negative CommandTermination ends it with its LastApplError.

use gander_wire::data::Data;

use crate::last_appl_error::LastApplError;
use crate::service::{AccessResult, DataAccessError, InformationReport, ObjectName};

use super::params::{sbo_selected, ControlParams, ControlService};
use super::server::CtlModel;
use super::termination::CommandTermination;

/// The request the driver must send next.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlRequest {
    /// Read this variable (`SBO`).
    Read(ObjectName),
    /// Write this value to this variable (`SBOw`, `Oper`, `Cancel`).
    Write(ObjectName, Data),
}

/// How an operation ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlOutcome {
    /// Operated (and, with enhanced security, terminated positively).
    Done,
    /// The select (SBO read) returned an empty string.
    SelectFailed,
    /// A service was refused: which, the DataAccessError, and the LastApplError if one came.
    Refused {
        /// The refused service.
        service: ControlService,
        /// The Write's DataAccessError.
        error: DataAccessError,
        /// The LastApplError the server sent before the response.
        last_appl_error: Option<LastApplError>,
    },
    /// A negative CommandTermination.
    TerminatedNegative(LastApplError),
    /// The server answered something the protocol does not allow here.
    Protocol(&'static str),
}

/// Timestamps (the driver's clock) of an operation's phases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ControlTimes {
    /// The first request handed to the driver.
    pub started: Option<u64>,
    /// The select's answer (SBO read or SBOw response).
    pub selected: Option<u64>,
    /// The Oper response.
    pub operated: Option<u64>,
    /// The CommandTermination.
    pub terminated: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Select,
    AwaitSelect,
    Operate,
    AwaitOperate,
    AwaitTermination,
    Over,
}

/// One control operation of one object.
#[derive(Debug, Clone)]
pub struct ControlOperation {
    domain: String,
    /// `LN$CO$DO`.
    co: String,
    model: CtlModel,
    params: ControlParams,
    phase: Phase,
    pending_lae: Option<LastApplError>,
    /// A CommandTermination seen before the Oper response was handed in (a driver that
    /// drains its report queue before the response it read in the same chunk): kept and
    /// applied after the response.
    early_termination: Option<(u64, CommandTermination)>,
    times: ControlTimes,
    outcome: Option<ControlOutcome>,
}

/// Why an operation cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlClientError {
    /// The object reference is not `LD/LN.DO` (or `LD/LN$CO$DO`).
    #[error("control object reference {0:?} is not LD/LN.DO")]
    Reference(String),
    /// status-only objects cannot be operated.
    #[error("the object's ctlModel is status-only")]
    StatusOnly,
}

impl ControlOperation {
    /// An operation of `object` (`LD/LN.DO` as IEC 61850-7-2 writes it, or the MMS form
    /// `LD/LN$CO$DO`) under `model`, carrying `params` (its `service` is ignored: the
    /// operation sets it per request; `ctlNum`, `T`, `Test` and `Check` go unchanged into
    /// SBOw and Oper, as 7-2 20.5.2 requires for enhanced security).
    pub fn new(
        object: &str,
        model: CtlModel,
        params: ControlParams,
    ) -> Result<Self, ControlClientError> {
        let bad = || ControlClientError::Reference(object.to_string());
        let (domain, rest) = object.split_once('/').ok_or_else(bad)?;
        let co = if let Some((ln, dob)) = rest.split_once("$CO$") {
            format!("{ln}$CO${dob}")
        } else {
            let (ln, dob) = rest.split_once('.').ok_or_else(bad)?;
            format!("{ln}$CO${}", dob.replace('.', "$"))
        };
        if domain.is_empty() || co.starts_with('$') || co.ends_with('$') {
            return Err(bad());
        }
        if model == CtlModel::StatusOnly {
            return Err(ControlClientError::StatusOnly);
        }
        Ok(ControlOperation {
            domain: domain.to_string(),
            co,
            model,
            params,
            phase: if model.is_sbo() {
                Phase::Select
            } else {
                Phase::Operate
            },
            pending_lae: None,
            early_termination: None,
            times: ControlTimes::default(),
            outcome: None,
        })
    }

    fn name(&self, component: &str) -> ObjectName {
        ObjectName::domain(self.domain.clone(), format!("{}${component}", self.co))
    }

    fn with_service(&self, s: ControlService) -> Data {
        let mut p = self.params.clone();
        p.service = s;
        if s == ControlService::Cancel {
            p.check = None;
        } else if p.check.is_none() {
            p.check = Some(Default::default());
        }
        p.to_data()
    }

    /// The next request to send at `now`, if one is due (each is handed out once).
    pub fn poll_request(&mut self, now: u64) -> Option<ControlRequest> {
        let r = match self.phase {
            Phase::Select if self.model == CtlModel::SboNormal => {
                ControlRequest::Read(self.name("SBO"))
            }
            Phase::Select => ControlRequest::Write(
                self.name("SBOw"),
                self.with_service(ControlService::SelectWithValue),
            ),
            Phase::Operate => ControlRequest::Write(
                self.name("Oper"),
                self.with_service(ControlService::Operate),
            ),
            _ => return None,
        };
        self.times.started.get_or_insert(now);
        self.phase = match self.phase {
            Phase::Select => Phase::AwaitSelect,
            _ => Phase::AwaitOperate,
        };
        Some(r)
    }

    /// A Cancel of this object (7-2 20.7), to abort a selection or a waiting time-activated
    /// operate; the operation itself ends.
    pub fn cancel(&mut self) -> ControlRequest {
        self.phase = Phase::Over;
        ControlRequest::Write(
            self.name("Cancel"),
            self.with_service(ControlService::Cancel),
        )
    }

    fn end(&mut self, o: ControlOutcome) {
        self.phase = Phase::Over;
        self.outcome = Some(o);
    }

    /// The answer to the SBO read.
    pub fn on_read(&mut self, now: u64, result: &AccessResult) {
        if self.phase != Phase::AwaitSelect || self.model != CtlModel::SboNormal {
            return self.end(ControlOutcome::Protocol("unexpected read answer"));
        }
        match result {
            AccessResult::Success(v) if sbo_selected(v).is_some() => {
                self.times.selected = Some(now);
                self.phase = Phase::Operate;
            }
            AccessResult::Success(Data::VisibleString(_)) => self.end(ControlOutcome::SelectFailed),
            AccessResult::Success(_) => self.end(ControlOutcome::Protocol("SBO is not a string")),
            AccessResult::Failure(error) => {
                let last_appl_error = self.pending_lae.take();
                self.end(ControlOutcome::Refused {
                    service: ControlService::SelectWithValue,
                    error: *error,
                    last_appl_error,
                })
            }
        }
    }

    /// The answer to the last Write.
    pub fn on_write(&mut self, now: u64, result: Result<(), DataAccessError>) {
        let service = match self.phase {
            Phase::AwaitSelect => ControlService::SelectWithValue,
            Phase::AwaitOperate => ControlService::Operate,
            _ => return self.end(ControlOutcome::Protocol("unexpected write answer")),
        };
        if let Err(error) = result {
            let last_appl_error = self.pending_lae.take();
            return self.end(ControlOutcome::Refused {
                service,
                error,
                last_appl_error,
            });
        }
        self.pending_lae = None;
        match service {
            ControlService::SelectWithValue => {
                self.times.selected = Some(now);
                self.phase = Phase::Operate;
            }
            _ => {
                self.times.operated = Some(now);
                if self.model.is_enhanced() {
                    self.phase = Phase::AwaitTermination;
                    if let Some((at, t)) = self.early_termination.take() {
                        self.terminate(at.max(now), t);
                    }
                } else {
                    self.end(ControlOutcome::Done);
                }
            }
        }
    }

    /// An InformationReport: a LastApplError of this object is kept for the response that
    /// follows; a CommandTermination of this object ends the operation. Others are ignored.
    pub fn on_report(&mut self, now: u64, ir: &InformationReport) {
        if let Ok(Some(l)) = LastApplError::from_information_report(ir) {
            let mine = l
                .cntrl_obj
                .strip_prefix(&format!("{}/{}$", self.domain, self.co))
                .is_some();
            if mine {
                self.pending_lae = Some(l);
            }
            return;
        }
        let Ok(Some(t)) = CommandTermination::from_information_report(ir) else {
            return;
        };
        if t.domain != self.domain || t.item != format!("{}$Oper", self.co) {
            return;
        }
        match self.phase {
            Phase::AwaitTermination => self.terminate(now, t),
            Phase::AwaitOperate if self.model.is_enhanced() => {
                self.early_termination = Some((now, t))
            }
            _ => {}
        }
    }

    fn terminate(&mut self, now: u64, t: CommandTermination) {
        self.times.terminated = Some(now);
        match t.error {
            None => self.end(ControlOutcome::Done),
            Some(l) => self.end(ControlOutcome::TerminatedNegative(l)),
        }
    }

    /// Whether the operation waits for a CommandTermination (the driver's timeout applies).
    pub fn awaits_termination(&self) -> bool {
        self.phase == Phase::AwaitTermination
    }

    /// How it ended, once it has.
    pub fn outcome(&self) -> Option<&ControlOutcome> {
        self.outcome.as_ref()
    }

    /// The phases' timestamps.
    pub fn times(&self) -> ControlTimes {
        self.times
    }
}

#[cfg(test)]
mod tests;
