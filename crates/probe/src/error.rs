//! The probe's one error type: one variant per way a server (or the user's settings) can stop a
//! probe, each with the words a utility engineer needs to act on it, and a stable
//! [`ProbeError::kind`] for the JSON output and for tests.
use gander_client::control::ControlError;
use gander_client::ClientError;
use gander_mms::rcb_plan::RcbPlanError;
use gander_tls::TlsError;

/// Why a probe stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// `HOST:PORT` does not resolve to an address.
    #[error("cannot resolve {target:?} to an address (expected HOST:PORT, e.g. 192.0.2.10:102)")]
    Resolve {
        /// What the user gave.
        target: String,
    },
    /// The TLS settings cannot be used (file, profile, credentials).
    #[error("TLS settings")]
    TlsSetup(#[source] TlsError),
    /// The MMS session failed: connect, TLS, association, a request or the release
    /// (`gander_client::ClientError`, with its own kind).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// `--reports RCB` names a control block the server does not have.
    #[error("no report control block {0} on the server (see the model's rcbs)")]
    RcbNotFound(String),
    /// `--reports` without a name, and the server's model has no report control block at
    /// all (many SCL files declare none: GOOSE-only or template IEDs). Told apart from
    /// [`ProbeError::NoFreeRcb`] because the remedy differs: another device or a model with
    /// `ReportControl`, not waiting for a client to let go.
    #[error("the server has no report control block (its model declares no ReportControl): no reports to receive")]
    NoRcb,
    /// `--reports` with a base name or none, and every candidate control block is taken or
    /// unusable: how many there were and why each was passed over.
    #[error("no free report control block among {blocks}: {taken} enabled or reserved by another client, {no_data_set} with no data set the model names")]
    NoFreeRcb {
        /// Candidate control blocks (all of the server's, or the instances of the base name).
        blocks: usize,
        /// Enabled, reserved or with a reservation time set (`check_free`).
        taken: usize,
        /// Free, but their DatSet is empty or names no data set of the model.
        no_data_set: usize,
    },
    /// The control block cannot be planned (in use, unknown layout).
    #[error("report control block")]
    RcbPlan(#[from] RcbPlanError),
    /// A write of the enable sequence was refused; what was written before was undone.
    #[error(
        "{rcb}: writing {attr} was refused ({error}); the attributes written before were restored"
    )]
    RcbWrite {
        /// The control block.
        rcb: String,
        /// The attribute.
        attr: String,
        /// The DataAccessError or service error.
        error: String,
    },
    /// The control block does not read back as found after the probe.
    #[error("{rcb} was NOT left as found: {detail}")]
    NotRestored {
        /// The control block.
        rcb: String,
        /// Which attributes differ, or which restore write failed.
        detail: String,
    },
    /// `--control`: the object cannot be operated as asked (not controllable, a value that
    /// does not fit, a state that could not be restored without Test), or the session failed
    /// during the control step.
    #[error("--control")]
    Control(#[source] ControlError),
    /// An option is out of range.
    #[error("{what}: {detail}")]
    InvalidOption {
        /// The option.
        what: &'static str,
        /// Why.
        detail: String,
    },
}

impl ProbeError {
    /// A short stable name for the JSON output and tests: `connection-refused`,
    /// `server-speaks-tls`, `server-not-tls`, `tls-handshake`, `association-refused`, `closed`,
    /// `aborted`, `protocol`, `timeout`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Resolve { .. } => "resolve",
            Self::TlsSetup(_) => "tls-setup",
            Self::Client(e) => e.kind(),
            Self::RcbNotFound(_) => "rcb-not-found",
            Self::NoRcb => "no-rcb",
            Self::NoFreeRcb { .. } => "no-free-rcb",
            Self::RcbPlan(_) => "rcb-plan",
            Self::RcbWrite { .. } => "rcb-write",
            Self::NotRestored { .. } => "not-restored",
            Self::InvalidOption { .. } => "invalid-option",
            Self::Control(ControlError::Session(e)) => e.kind(),
            Self::Control(ControlError::Reference(_)) => "control-reference",
            Self::Control(ControlError::NotControllable { .. }) => "not-controllable",
            Self::Control(ControlError::Value { .. } | ControlError::NoStartValue { .. }) => {
                "control-value"
            }
            Self::Control(ControlError::Unrestorable { .. }) => "control-unrestorable",
        }
    }

    /// Whether the user's invocation is at fault (bad option or TLS file) rather than the
    /// server: the CLI exits 2 for these, 1 for everything the server did.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::Resolve { .. }
                | Self::TlsSetup(_)
                | Self::Client(ClientError::TlsSetup(_))
                | Self::InvalidOption { .. }
        )
    }

    /// Whether the association is still usable after this failure (the server answered, just
    /// not with what was asked).
    pub fn answered(&self) -> bool {
        match self {
            Self::Client(e) | Self::Control(ControlError::Session(e)) => e.answered(),
            // The server answered every read and write of the control step.
            Self::Control(_) => true,
            _ => false,
        }
    }

    /// The message with every source, `a: b: c`, for one line on stderr.
    pub fn chain(&self) -> String {
        match self {
            // Transparent: its own message is the client error's.
            Self::Client(e) | Self::Control(ControlError::Session(e)) => e.chain(),
            e => gander_client::error::chain(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_names_every_cause() {
        let e = ProbeError::Client(ClientError::Protocol {
            during: "the MMS association".into(),
            source: gander_mms::Error::TpktVersion(0x47),
        });
        assert_eq!(e.kind(), "protocol");
        assert_eq!(
            e.chain(),
            "malformed or unexpected PDU from the server during the MMS association: TPKT version 71, expected 3"
        );
        assert!(!e.is_usage());
        assert!(ProbeError::InvalidOption {
            what: "--associations",
            detail: "at least 1".into()
        }
        .is_usage());
    }
}
