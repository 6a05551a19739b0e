//! How a probe ended: complete, or partial with the step that failed and how; and how the device
//! was left (the discovery association released, aborted or closed by the server; the control
//! block of `--reports` untouched, restored or not). A failure after the association is up never
//! throws away what earlier steps gathered: the report carries it, and the exit code tells
//! complete (0), partial (3) and nothing (1) apart (`docs/probe.md`).
use crate::error::ProbeError;
use serde::Serialize;

/// Exit code: every step ran.
pub const EXIT_COMPLETE: u8 = 0;
/// Exit code: nothing was gathered (no association: the server refused, closed, is not there).
pub const EXIT_NOTHING: u8 = 1;
/// Exit code: the invocation is wrong (an option, the TLS file); nothing was sent.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: some steps' results were gathered and a later step failed (`failed` says which).
pub const EXIT_PARTIAL: u8 = 3;

/// The steps of a probe, in order (`docs/probe.md`, "What it does").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// TCP, TLS, COTP connect and MMS initiate of the discovery association.
    Connect,
    /// Identify and the directory services.
    Discovery,
    /// The read round-trip time.
    Read,
    /// `--reports`.
    Reports,
    /// `--control`: the control round trips.
    Control,
    /// The release (conclude, ACSE release) of the discovery association.
    Release,
    /// The HT loop's associations.
    Ht,
}

impl Step {
    /// The word used in the text summary.
    pub fn word(self) -> &'static str {
        match self {
            Step::Connect => "connect",
            Step::Discovery => "discovery",
            Step::Read => "read round-trip time",
            Step::Reports => "reports",
            Step::Control => "control",
            Step::Release => "release",
            Step::Ht => "HT associations",
        }
    }
}

/// Whether every step ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every step ran.
    Complete,
    /// A step failed; what came before (and the HT loop, when it could run) is reported.
    Partial,
}

/// The step that failed, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The step.
    pub step: Step,
    /// [`ProbeError::kind`].
    pub kind: &'static str,
    /// The message with every cause.
    pub message: String,
}

impl Failure {
    /// The failure of `step` with `e`.
    pub fn new(step: Step, e: &ProbeError) -> Failure {
        Failure {
            step,
            kind: e.kind(),
            message: e.chain(),
        }
    }
}

/// How the discovery association ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AssociationEnd {
    /// Conclude and ACSE release answered (ISO 9506-2 8.3, ISO 8650-1).
    Released,
    /// The probe aborted it (ACSE ABRT, then close_notify and FIN): the server did not answer
    /// the release, or an earlier failure left the association unusable.
    Aborted,
    /// The server closed or aborted it first.
    ClosedByServer,
}

/// The `--reports` control block after the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RcbState {
    /// Nothing was written to it (the failure came before the first write).
    Untouched,
    /// Everything written was put back (and, after a complete run, read back as found).
    Restored,
    /// It was NOT left as found: the error names what differs.
    NotRestored,
}

impl RcbState {
    /// What a failure of `--reports` left behind: `NotRestored` says so itself; a block that was
    /// not found, not free or not plannable was never written; any other failure came after
    /// writes that were undone (the probe restores before it reports an error).
    pub fn after(e: &ProbeError) -> RcbState {
        match e {
            ProbeError::NotRestored { .. } => RcbState::NotRestored,
            ProbeError::RcbNotFound(_)
            | ProbeError::NoRcb
            | ProbeError::NoFreeRcb { .. }
            | ProbeError::RcbPlan(_) => RcbState::Untouched,
            _ => RcbState::Restored,
        }
    }
}

/// How the device was left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceState {
    /// The discovery association.
    pub association: AssociationEnd,
    /// HT associations the probe had to abort instead of releasing.
    pub ht_aborted: usize,
    /// With `--reports`: the control block.
    pub rcb: Option<RcbState>,
    /// With `--control`: the controlled object (its state compared before and after, and
    /// restored when it differed). Absent without `--control`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<gander_client::control_rt::DeviceLeft>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_client::ClientError;

    #[test]
    fn names_in_the_json_are_kebab_case() {
        assert_eq!(serde_json::to_value(Step::Ht).unwrap(), "ht");
        assert_eq!(
            serde_json::to_value(AssociationEnd::ClosedByServer).unwrap(),
            "closed-by-server"
        );
        assert_eq!(
            serde_json::to_value(RcbState::NotRestored).unwrap(),
            "not-restored"
        );
        assert_eq!(serde_json::to_value(Outcome::Partial).unwrap(), "partial");
    }

    #[test]
    fn the_rcb_state_follows_the_error() {
        assert_eq!(RcbState::after(&ProbeError::NoRcb), RcbState::Untouched);
        assert_eq!(
            RcbState::after(&ProbeError::NoFreeRcb {
                blocks: 1,
                taken: 1,
                no_data_set: 0
            }),
            RcbState::Untouched
        );
        let nr = ProbeError::NotRestored {
            rcb: "LD/LLN0.RP.x".into(),
            detail: "Resv".into(),
        };
        assert_eq!(RcbState::after(&nr), RcbState::NotRestored);
        let t = ProbeError::Client(ClientError::Timeout {
            during: "waiting for reports".into(),
            ms: 5,
        });
        assert_eq!(RcbState::after(&t), RcbState::Restored);
        let f = Failure::new(Step::Reports, &t);
        assert_eq!((f.step, f.kind), (Step::Reports, "timeout"));
    }
}
