//! Why `gander run`'s client stopped: the session's [`ClientError`] or a failure of what the
//! client asked (resolving the address, the control block), each with the `kind` its `ERROR`
//! event carries (`docs/mms-peers.md`).
use gander_client::stream::mms_kind;
use gander_client::ClientError;
use gander_mms::rcb_plan::RcbPlanError;

/// A failure of the run client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The session failed (connect, TLS, association, a request, the release).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// `connect` does not resolve.
    #[error("cannot resolve {0:?}")]
    Address(String),
    /// `rcb` is no control-block reference.
    #[error("rcb {0:?} is not LD/LN.RP.name or LD/LN.BR.name")]
    Config(String),
    /// A report that does not decode as IEC 61850-8-1 17.2 lays it out.
    #[error("a report does not decode")]
    Report(#[source] gander_mms::Error),
    /// The fixed model's enable write was refused.
    #[error("Write of {rcb} refused: {detail}")]
    EnableRefused {
        /// The control block.
        rcb: String,
        /// The DataAccessError or the other answer.
        detail: String,
    },
    /// A write of the control-block plan was refused.
    #[error("write of {attr} refused: DataAccessError {code}")]
    WriteRefused {
        /// The attribute.
        attr: String,
        /// The DataAccessError.
        code: u8,
    },
    /// The control block cannot be read.
    #[error("{what}: DataAccessError {code}")]
    Unreadable {
        /// The read.
        what: String,
        /// The DataAccessError.
        code: u8,
    },
    /// The control block does not have the layout IEC 61850-8-1 17.2 gives it.
    #[error("control block layout")]
    Layout(#[source] RcbPlanError),
    /// No control block is free.
    #[error("{0}")]
    NoneFree(String),
    /// The control block is in use by another client.
    #[error("control block in use")]
    InUse(#[source] RcbPlanError),
    /// `[control]`: the object cannot be operated as configured (not controllable, a value
    /// that does not fit, a state that cannot be restored without Test).
    #[error("control")]
    Control(#[source] gander_client::control::ControlError),
    /// `[control]`: the object was not left as found.
    #[error("{object} was NOT left as found: {detail}")]
    ControlNotRestored {
        /// The object.
        object: String,
        /// Its state before and after.
        detail: String,
    },
    /// Putting the control block back failed: the device was not left as found.
    #[error("{rcb}: restore failed: {detail}")]
    RestoreFailed {
        /// The control block.
        rcb: String,
        /// What failed.
        detail: String,
    },
}

impl RunError {
    /// The `kind` of the ERROR event.
    pub fn kind(&self) -> String {
        match self {
            Self::Client(e) => e.event_kind(),
            Self::Address(_) => "address".into(),
            Self::Config(_) => "config".into(),
            Self::Report(e) => mms_kind(e),
            Self::EnableRefused { .. } => "rcb-enable-refused".into(),
            Self::WriteRefused { .. } => "rcb-write-refused".into(),
            Self::Unreadable { .. } => "rcb-unreadable".into(),
            Self::Layout(_) => "rcb-layout".into(),
            Self::NoneFree(_) => "rcb-none-free".into(),
            Self::InUse(_) => "rcb-in-use".into(),
            Self::RestoreFailed { .. } => "rcb-restore-failed".into(),
            Self::Control(gander_client::control::ControlError::Session(e)) => e.event_kind(),
            Self::Control(_) => "control".into(),
            Self::ControlNotRestored { .. } => "control-not-restored".into(),
        }
    }

    /// The message with every source, for the ERROR event's `detail`.
    pub fn detail(&self) -> String {
        match self {
            // Transparent: its own message is the client error's.
            Self::Client(e) => e.chain(),
            e => gander_client::error::chain(e),
        }
    }
}
