//! IEC 61850-7-2 clause 20 controls as IEC 61850-8-1 clause 20 maps them to MMS, sans-I/O:
//!
//! | module | holds |
//! |---|---|
//! | [`params`] | the `Oper` / `SBOw` / `Cancel` structures and the `SBO` select value |
//! | [`termination`] | CommandTermination, positive and negative |
//! | [`server`] | a server's state machine per controllable object (ctlModel 0..4, sboTimeout, sboClass) |
//! | [`client`] | a client's operation of one object: requests, answers, reports, phase times |
//!
//! LastApplError and the AddCause values are in [`crate::last_appl_error`].

pub mod client;
pub mod params;
pub mod server;
pub mod termination;

pub use client::{
    ControlClientError, ControlOperation, ControlOutcome, ControlRequest, ControlTimes,
};
pub use params::{
    sbo_selected, sbo_value, Check, ControlParams, ControlService, ControlTime, ParamsError,
};
pub use server::{ControlConfig, ControlObject, ControlState, CtlModel, Decision, SboClass};
pub use termination::{CommandTermination, TerminationError};
