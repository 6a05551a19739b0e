//! Applying a planned sequence of writes (the enable, rollback and restore steps of
//! `gander_mms::rcb_plan`, IEC 61850-7-2 clause 17 SetBRCBValues/SetURCBValues as MMS Writes,
//! IEC 61850-8-1 17.2) one at a time, in order, stopping at the first that is not accepted: one
//! place for the probe's `--reports` and `gander run`'s control-block path.
use crate::core;
use crate::error::ClientError;
use crate::session::{Received, Session};
use gander_mms::pdu::ConfirmedRequest;
use gander_mms::rcb_plan::Step;
use gander_mms::service::DataAccessError;

/// Why a write was not accepted.
#[derive(Debug)]
pub enum WriteFailure {
    /// The server answered with a DataAccessError: the association lives on.
    Refused(DataAccessError),
    /// The request failed (no answer, a confirmed-Error, a Reject, the association closed).
    Failed(ClientError),
}

/// The write that stopped a sequence.
#[derive(Debug)]
pub struct Stopped {
    /// Its index in the sequence: the writes before it were accepted.
    pub index: usize,
    /// Why.
    pub why: WriteFailure,
}

/// Writes `steps` in order (each one Write request, answered before the next is sent);
/// `what` names a step in errors. Reports that arrive meanwhile go to `on_report` at once when
/// given, else to the session's queue.
pub fn apply(
    s: &mut Session,
    steps: &[Step],
    what: &dyn Fn(&Step) -> String,
    mut on_report: Option<&mut dyn FnMut(Received)>,
) -> Result<(), Stopped> {
    for (index, st) in steps.iter().enumerate() {
        let what = what(st);
        let stop = |why| Stopped { index, why };
        let req = ConfirmedRequest::Write(st.write_request());
        let answer = match on_report.as_deref_mut() {
            Some(f) => s.call_with(req, &what, f),
            None => s.call(req, &what),
        };
        let r = answer.map_err(|e| stop(WriteFailure::Failed(e)))?;
        match core::write_result(&what, r) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(stop(WriteFailure::Refused(e))),
            Err(e) => return Err(stop(WriteFailure::Failed(e))),
        }
    }
    Ok(())
}
