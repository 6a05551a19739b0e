//! The server's control state machine of one controllable data object (IEC 61850-7-2 clause
//! 20: the state diagrams of direct and select-before-operate control with normal and enhanced
//! security). Sans-I/O: time (Unix milliseconds, the clock operTm and T use) is an argument;
//! the caller (the server model) tests the process (mode, position, interlocking) and changes
//! it when told to execute.
//!
//! States (7-2 20.3/20.4 names): `Unselected`; `Ready` (selected by one association, until
//! sboTimeout); `WaitForActivationTime` (a time-activated operate waits for operTm). The
//! process here acts at once, so 7-2's `PerformTest`, `WaitForExecution` and `Operate` are
//! passed through inside one call: the command is tested, executed and (enhanced security)
//! terminated before the machine returns.

use crate::association::ConnId;
use crate::last_appl_error::{AddCause, ControlError, LastApplError, Origin};
use crate::service::DataAccessError;

use super::params::{ControlParams, ControlService};
use super::termination::CommandTermination;

/// ctlModel (IEC 61850-7-3 `CtlModelKind`, the value of the DO's `CF$ctlModel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CtlModel {
    /// 0 status-only: no control service is accepted.
    StatusOnly,
    /// 1 direct-with-normal-security.
    DirectNormal,
    /// 2 sbo-with-normal-security: select by reading `SBO`.
    SboNormal,
    /// 3 direct-with-enhanced-security: CommandTermination after the operate.
    DirectEnhanced,
    /// 4 sbo-with-enhanced-security: select by writing `SBOw`, then CommandTermination.
    SboEnhanced,
}

impl CtlModel {
    /// The model of a `ctlModel` ordinal; `None` for a value 7-3 does not define.
    pub fn from_code(code: i64) -> Option<Self> {
        Some(match code {
            0 => CtlModel::StatusOnly,
            1 => CtlModel::DirectNormal,
            2 => CtlModel::SboNormal,
            3 => CtlModel::DirectEnhanced,
            4 => CtlModel::SboEnhanced,
            _ => return None,
        })
    }

    /// The ordinal.
    pub fn code(self) -> i64 {
        match self {
            CtlModel::StatusOnly => 0,
            CtlModel::DirectNormal => 1,
            CtlModel::SboNormal => 2,
            CtlModel::DirectEnhanced => 3,
            CtlModel::SboEnhanced => 4,
        }
    }

    /// Select before operate (2 and 4).
    pub fn is_sbo(self) -> bool {
        matches!(self, CtlModel::SboNormal | CtlModel::SboEnhanced)
    }

    /// Enhanced security: CommandTermination (3 and 4).
    pub fn is_enhanced(self) -> bool {
        matches!(self, CtlModel::DirectEnhanced | CtlModel::SboEnhanced)
    }
}

/// sboClass (IEC 61850-7-3: `operate-once` 0, `operate-many` 1): whether the object stays
/// selected after an operate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SboClass {
    /// The selection ends with the operate.
    #[default]
    OperateOnce,
    /// The selection stays until sboTimeout or Cancel.
    OperateMany,
}

/// The default sboTimeout when the DO has none: 30 s, libiec61850 1.6's default
/// (`CONFIG_CONTROL_DEFAULT_SBO_TIMEOUT`).
pub const DEFAULT_SBO_TIMEOUT_MS: u64 = 30_000;

/// A control object's configuration (the DO's CF attributes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlConfig {
    /// ctlModel.
    pub model: CtlModel,
    /// sboTimeout in ms (0: [`DEFAULT_SBO_TIMEOUT_MS`]).
    pub sbo_timeout_ms: u64,
    /// sboClass.
    pub sbo_class: SboClass,
}

/// The state (IEC 61850-7-2 20.3 / 20.4).
#[derive(Debug, Clone, PartialEq)]
pub enum ControlState {
    /// Not selected, nothing pending.
    Unselected,
    /// Selected by `owner` until `until_ms`; for SBOw, the select's parameters.
    Ready {
        /// The selecting association.
        owner: ConnId,
        /// When the selection times out.
        until_ms: u64,
        /// The SelectWithValue parameters (enhanced security), `None` after an SBO read.
        selected: Option<ControlParams>,
    },
    /// A time-activated operate of `owner` waits for `at_ms`.
    WaitForActivationTime {
        /// The operating association.
        owner: ConnId,
        /// operTm in Unix ms.
        at_ms: u64,
        /// The Oper parameters.
        params: ControlParams,
        /// Whether the object was selected (stays selected with operate-many).
        was_selected: bool,
    },
}

/// What the machine decided about one control service.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// The Write (or the SBO read) succeeds. If `execute` is set, the caller changes the
    /// process now (unless `Test`), then calls [`ControlObject::executed`].
    Accept {
        /// The command to execute now.
        execute: Option<ControlParams>,
        /// A CommandTermination to send after the response (a Cancel that ended a waiting
        /// time-activated operate with enhanced security: Abortion-by-cancel).
        terminated: Option<CommandTermination>,
    },
    /// The service fails with `error`; the server sends `last_appl_error` first.
    Refuse {
        /// The Write's DataAccessError.
        error: DataAccessError,
        /// The LastApplError report (IEC 61850-8-1 20.x), sent before the Write response.
        last_appl_error: Option<LastApplError>,
    },
}

/// One controllable data object's control state machine.
#[derive(Debug, Clone)]
pub struct ControlObject {
    reference: String,
    config: ControlConfig,
    state: ControlState,
}

/// The Unix time in ms of a UtcTime (IEC 61850-8-1 8.1.3.7: seconds, 24-bit fraction).
pub fn utc_ms(t: &[u8; 8]) -> u64 {
    let secs = u32::from_be_bytes([t[0], t[1], t[2], t[3]]) as u64;
    let frac = u32::from_be_bytes([0, t[4], t[5], t[6]]) as u64;
    // Rounded to the nearest ms, so that it inverts `crate::model::utc_time`.
    secs * 1000 + ((frac * 1000 + (1 << 23)) >> 24)
}

impl ControlObject {
    /// The object `reference` (`LD/LN$CO$DO`, used in LastApplError's CntrlObj).
    pub fn new(reference: impl Into<String>, config: ControlConfig) -> Self {
        ControlObject {
            reference: reference.into(),
            config,
            state: ControlState::Unselected,
        }
    }

    /// The current state (after [`ControlObject::tick`]).
    pub fn state(&self) -> &ControlState {
        &self.state
    }

    /// The configuration.
    pub fn config(&self) -> ControlConfig {
        self.config
    }

    /// Take a changed configuration (a client wrote ctlModel, sboTimeout or sboClass); a
    /// change of model ends any selection.
    pub fn reconfigure(&mut self, config: ControlConfig) {
        if config.model != self.config.model {
            self.state = ControlState::Unselected;
        }
        self.config = config;
    }

    fn timeout(&self) -> u64 {
        match self.config.sbo_timeout_ms {
            0 => DEFAULT_SBO_TIMEOUT_MS,
            t => t,
        }
    }

    /// Apply the select timeout: a selection older than sboTimeout ends (7-2 20.5.2.x).
    pub fn tick(&mut self, now_ms: u64) {
        if let ControlState::Ready { until_ms, .. } = self.state {
            if now_ms >= until_ms {
                self.state = ControlState::Unselected;
            }
        }
    }

    fn lae(&self, service: ControlService, p: &ControlParams, cause: AddCause) -> LastApplError {
        self.lae_with(service, &p.origin, p.ctl_num, cause, ControlError::NO_ERROR)
    }

    fn lae_with(
        &self,
        service: ControlService,
        origin: &Origin,
        ctl_num: Option<u8>,
        cause: AddCause,
        error: ControlError,
    ) -> LastApplError {
        LastApplError {
            cntrl_obj: format!("{}${}", self.reference, service.component()),
            error,
            origin: origin.clone(),
            ctl_num: ctl_num.unwrap_or(0),
            add_cause: cause,
        }
    }

    /// The process refused the command (mode, hierarchy, interlocking, ...): the Write is
    /// object-access-denied and the LastApplError says operator-test-not-ok with the cause
    /// (IEC 61850-8-1 20.8, 7-2 20.5.2.x).
    fn refuse_by_process(
        &self,
        service: ControlService,
        p: &ControlParams,
        cause: AddCause,
    ) -> Decision {
        Decision::Refuse {
            error: DataAccessError::OBJECT_ACCESS_DENIED,
            last_appl_error: Some(self.lae_with(
                service,
                &p.origin,
                p.ctl_num,
                cause,
                ControlError::OPERATOR_TEST_NOT_OK,
            )),
        }
    }

    fn refuse(
        &self,
        service: ControlService,
        p: &ControlParams,
        error: DataAccessError,
        cause: AddCause,
    ) -> Decision {
        Decision::Refuse {
            error,
            last_appl_error: Some(self.lae(service, p, cause)),
        }
    }

    /// A Read of `SBO` (sbo-with-normal-security select, 7-2 20.5.1): the reference when
    /// selected, `None` when not (the read then returns an empty string). `process` is the
    /// caller's test of whether the object may be operated at all (mode, health).
    pub fn select(
        &mut self,
        now_ms: u64,
        conn: ConnId,
        process: Result<(), AddCause>,
    ) -> Option<String> {
        self.tick(now_ms);
        if self.config.model != CtlModel::SboNormal
            || self.state != ControlState::Unselected
            || process.is_err()
        {
            return None;
        }
        self.state = ControlState::Ready {
            owner: conn,
            until_ms: now_ms.saturating_add(self.timeout()),
            selected: None,
        };
        Some(self.reference.clone())
    }

    /// A Write of `SBOw`, `Oper` or `Cancel` carrying `p`. `process` is the caller's test of
    /// the command against the process (mode, position, interlocking, synchrocheck), done
    /// before; it is consulted where 7-2 performs its tests (select, operate).
    pub fn write(
        &mut self,
        now_ms: u64,
        conn: ConnId,
        p: ControlParams,
        process: Result<(), AddCause>,
    ) -> Decision {
        self.tick(now_ms);
        let service = p.service;
        if self.config.model == CtlModel::StatusOnly {
            return Decision::Refuse {
                error: DataAccessError::OBJECT_ACCESS_DENIED,
                last_appl_error: None,
            };
        }
        match service {
            ControlService::SelectWithValue => self.select_with_value(now_ms, conn, p, process),
            ControlService::Operate => self.operate(now_ms, conn, p, process),
            ControlService::Cancel => self.cancel(conn, p),
        }
    }

    fn select_with_value(
        &mut self,
        now_ms: u64,
        conn: ConnId,
        p: ControlParams,
        process: Result<(), AddCause>,
    ) -> Decision {
        let s = ControlService::SelectWithValue;
        if self.config.model != CtlModel::SboEnhanced {
            return Decision::Refuse {
                error: DataAccessError::OBJECT_ACCESS_DENIED,
                last_appl_error: None,
            };
        }
        match &self.state {
            ControlState::Unselected => {}
            ControlState::Ready { .. } => {
                return self.refuse(
                    s,
                    &p,
                    DataAccessError::TEMPORARILY_UNAVAILABLE,
                    AddCause::OBJECT_ALREADY_SELECTED,
                )
            }
            ControlState::WaitForActivationTime { .. } => {
                return self.refuse(
                    s,
                    &p,
                    DataAccessError::TEMPORARILY_UNAVAILABLE,
                    AddCause::COMMAND_ALREADY_IN_EXECUTION,
                )
            }
        }
        if let Err(cause) = process {
            return self.refuse_by_process(s, &p, cause);
        }
        self.state = ControlState::Ready {
            owner: conn,
            until_ms: now_ms.saturating_add(self.timeout()),
            selected: Some(p),
        };
        Decision::Accept {
            execute: None,
            terminated: None,
        }
    }

    fn operate(
        &mut self,
        now_ms: u64,
        conn: ConnId,
        p: ControlParams,
        process: Result<(), AddCause>,
    ) -> Decision {
        let s = ControlService::Operate;
        let was_selected = match &self.state {
            ControlState::WaitForActivationTime { .. } => {
                return self.refuse(
                    s,
                    &p,
                    DataAccessError::TEMPORARILY_UNAVAILABLE,
                    AddCause::COMMAND_ALREADY_IN_EXECUTION,
                )
            }
            ControlState::Unselected if self.config.model.is_sbo() => {
                return self.refuse(
                    s,
                    &p,
                    DataAccessError::OBJECT_ACCESS_DENIED,
                    AddCause::OBJECT_NOT_SELECTED,
                )
            }
            ControlState::Unselected => false,
            ControlState::Ready { owner, .. } if *owner != conn => {
                return self.refuse(
                    s,
                    &p,
                    DataAccessError::TEMPORARILY_UNAVAILABLE,
                    AddCause::LOCKED_BY_OTHER_CLIENT,
                )
            }
            ControlState::Ready {
                selected: Some(sel),
                ..
            } if !sel.same_command(&p) => {
                // 7-2 20.5.2: the Operate of an SBOw must repeat its parameters.
                self.state = ControlState::Unselected;
                return self.refuse(
                    s,
                    &p,
                    DataAccessError::OBJECT_ACCESS_DENIED,
                    AddCause::INCONSISTENT_PARAMETERS,
                );
            }
            ControlState::Ready { .. } => true,
        };
        if let Err(cause) = process {
            if was_selected {
                self.state = ControlState::Unselected;
            }
            return self.refuse_by_process(s, &p, cause);
        }
        if let Some(at) = p.oper_tm.as_ref().map(utc_ms).filter(|&t| t > now_ms) {
            self.state = ControlState::WaitForActivationTime {
                owner: conn,
                at_ms: at,
                params: p,
                was_selected,
            };
            return Decision::Accept {
                execute: None,
                terminated: None,
            };
        }
        self.after_operate(conn, now_ms, was_selected);
        Decision::Accept {
            execute: Some(p),
            terminated: None,
        }
    }

    fn after_operate(&mut self, conn: ConnId, now_ms: u64, was_selected: bool) {
        self.state = match (was_selected, self.config.sbo_class) {
            (true, SboClass::OperateMany) => ControlState::Ready {
                owner: conn,
                until_ms: now_ms.saturating_add(self.timeout()),
                selected: None,
            },
            _ => ControlState::Unselected,
        };
    }

    fn cancel(&mut self, conn: ConnId, p: ControlParams) -> Decision {
        let s = ControlService::Cancel;
        match &self.state {
            ControlState::Unselected => Decision::Accept {
                execute: None,
                terminated: None,
            },
            ControlState::Ready { owner, .. }
            | ControlState::WaitForActivationTime { owner, .. }
                if *owner != conn =>
            {
                self.refuse(
                    s,
                    &p,
                    DataAccessError::TEMPORARILY_UNAVAILABLE,
                    AddCause::LOCKED_BY_OTHER_CLIENT,
                )
            }
            ControlState::WaitForActivationTime { params, .. } => {
                let terminated = self.executed(params, Err(AddCause::ABORTION_BY_CANCEL));
                self.state = ControlState::Unselected;
                Decision::Accept {
                    execute: None,
                    terminated,
                }
            }
            ControlState::Ready { .. } => {
                self.state = ControlState::Unselected;
                Decision::Accept {
                    execute: None,
                    terminated: None,
                }
            }
        }
    }

    /// A time-activated operate whose operTm has come: `(owner, params)`; the caller tests
    /// the process and executes, then calls [`ControlObject::executed`].
    pub fn due(&mut self, now_ms: u64) -> Option<(ConnId, ControlParams)> {
        self.tick(now_ms);
        match &self.state {
            ControlState::WaitForActivationTime {
                owner,
                at_ms,
                params,
                was_selected,
            } if now_ms >= *at_ms => {
                let (o, p, w) = (*owner, params.clone(), *was_selected);
                self.after_operate(o, now_ms, w);
                Some((o, p))
            }
            _ => None,
        }
    }

    /// The end of an execution: the CommandTermination to send for enhanced security
    /// (positive, or negative with `result`'s AddCause), `None` for normal security.
    pub fn executed(
        &self,
        p: &ControlParams,
        result: Result<(), AddCause>,
    ) -> Option<CommandTermination> {
        if !self.config.model.is_enhanced() {
            return None;
        }
        let (domain, item) = self
            .reference
            .split_once('/')
            .unwrap_or(("", &self.reference));
        Some(CommandTermination {
            domain: domain.to_string(),
            item: format!("{item}$Oper"),
            oper: p.to_data(),
            error: result.err().map(|cause| {
                self.lae_with(
                    ControlService::Operate,
                    &p.origin,
                    p.ctl_num,
                    cause,
                    ControlError::UNKNOWN,
                )
            }),
        })
    }

    /// The association `conn` ended: its selection and its pending operate end with it
    /// (7-2 20.5.2: a selection belongs to the association).
    pub fn connection_closed(&mut self, conn: ConnId) {
        match &self.state {
            ControlState::Ready { owner, .. }
            | ControlState::WaitForActivationTime { owner, .. }
                if *owner == conn =>
            {
                self.state = ControlState::Unselected
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
