//! `--control LD/LN.DO`: the round trips of one named control object's select, operate and
//! CommandTermination (and Cancel of an SBO object), measured over repeated operations on the
//! discovery association (IEC 61850-7-2 clause 20, 8-1 clause 20). It writes to the device,
//! so it runs only when the object is named, with Test set unless `--no-test`, and the
//! object's state is read before and after and commanded back when it differs
//! ([`gander_client::control_rt`], which `gander run`'s control rows use too).
//!
//! The driver (`gander_client::control`) is re-exported here for the probe's callers
//! (`gander mms control`).
pub use gander_client::control::*;

use gander_client::control_rt::{measure, ControlRt, DeviceLeft, RtOptions};

use crate::session::Session;
use crate::ProbeError;

/// The control step's result: what was measured, how the object was left, and the error
/// that ended the step early, if one did.
pub(crate) struct StepResult {
    pub rt: Option<ControlRt>,
    pub left: DeviceLeft,
    pub error: Option<ProbeError>,
}

/// Whether `object` reads as `LD/LN.DO` (checked before anything is sent).
pub(crate) fn valid_object(object: &str) -> bool {
    object
        .split_once('/')
        .and_then(|(ld, rest)| Some((ld, rest.split_once('.')?)))
        .is_some_and(|(ld, (ln, dob))| !ld.is_empty() && !ln.is_empty() && !dob.is_empty())
}

/// Runs the control step on `s`.
pub(crate) fn step(s: &mut Session, o: &RtOptions) -> StepResult {
    match measure(s, o) {
        Ok(m) => StepResult {
            left: m.rt.left.clone(),
            rt: Some(m.rt),
            error: m
                .failed
                .map(|e| ProbeError::Control(ControlError::Session(e))),
        },
        Err(e) => StepResult {
            rt: None,
            left: DeviceLeft::Untouched,
            error: Some(ProbeError::Control(e)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_ld_ln_do() {
        assert!(valid_object("LD0/CSWI1.Pos"));
        assert!(valid_object("IED1LD0/GGIO1.SPCSO1"));
        for bad in [
            "LD0/CSWI1",
            "CSWI1.Pos",
            "/CSWI1.Pos",
            "LD0/.Pos",
            "LD0/CSWI1.",
        ] {
            assert!(!valid_object(bad), "{bad}");
        }
    }
}
