//! The crate's one error type: one variant per kind of peer misbehaviour, tagged with the
//! layer that detected it, so an event log (and a test) can say *why* an association closed.

use core::fmt;

/// The protocol layer that rejected the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// RFC 1006 TPKT framing.
    Tpkt,
    /// ISO 8073 transport class 0 (COTP).
    Cotp,
    /// ISO 8327-1 session kernel.
    Session,
    /// ISO 8823-1 presentation kernel.
    Presentation,
    /// ISO 8650-1 ACSE.
    Acse,
    /// ISO 9506-2 MMS.
    Mms,
    /// IEC 61850-8-1 report and control-block mapping on top of MMS.
    Iec61850,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Tpkt => "TPKT",
            Layer::Cotp => "COTP",
            Layer::Session => "session",
            Layer::Presentation => "presentation",
            Layer::Acse => "ACSE",
            Layer::Mms => "MMS",
            Layer::Iec61850 => "IEC 61850",
        })
    }
}

/// Why bytes were rejected or an operation could not be carried out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// RFC 1006 section 6: the TPKT version octet must be 3.
    #[error("TPKT version {0}, expected 3")]
    TpktVersion(u8),
    /// A TPKT length of 4 or less cannot carry a TPDU (RFC 1006 section 6; libiec61850 rejects it too).
    #[error("TPKT length {0} is too short")]
    TpktTooShort(usize),
    /// A length above the configured cap (protects memory against a hostile peer).
    #[error("{layer}: {what} of {size} bytes exceeds the limit of {max}")]
    TooLarge {
        /// Protocol layer that found the problem.
        layer: Layer,
        /// What was being read or checked.
        what: &'static str,
        /// The size found.
        size: usize,
        /// The configured limit.
        max: usize,
    },
    /// Input ended in the middle of a structure.
    #[error("{layer}: truncated {what}")]
    Truncated {
        /// Protocol layer that found the problem.
        layer: Layer,
        /// What was being read or checked.
        what: &'static str,
    },
    /// A structure that violates its encoding rules.
    #[error("{layer}: malformed {what}: {detail}")]
    Malformed {
        /// Protocol layer that found the problem.
        layer: Layer,
        /// What was being read or checked.
        what: &'static str,
        /// Which rule was broken.
        detail: &'static str,
    },
    /// A PDU type code this implementation does not know.
    #[error("{layer}: unknown {what} code 0x{code:02x}")]
    UnknownCode {
        /// Protocol layer that found the problem.
        layer: Layer,
        /// What was being read or checked.
        what: &'static str,
        /// The code received.
        code: u8,
    },
    /// A BER error from `gander_wire::ber`, with the layer whose PDU it was in.
    #[error("{layer}: {source}")]
    Ber {
        /// Protocol layer that found the problem.
        layer: Layer,
        /// The underlying BER error.
        #[source]
        source: gander_wire::Error,
    },
    /// A well-formed PDU that is not allowed in the current state (e.g. DATA before CC).
    #[error("{layer}: unexpected {what} in state {state}")]
    UnexpectedPdu {
        /// Protocol layer that found the problem.
        layer: Layer,
        /// The PDU received.
        what: &'static str,
        /// The machine's state at the time.
        state: &'static str,
    },
    /// The peer refused or rejected the association (result, reason as received).
    #[error("{layer}: association refused: {detail}")]
    Refused {
        /// Protocol layer that found the problem.
        layer: Layer,
        /// Result and reason as received, for the log.
        detail: String,
    },
    /// A negotiated parameter or configured limit that the peer exceeded.
    #[error("{layer}: limit exceeded: {what}")]
    Limit {
        /// Protocol layer that found the problem.
        layer: Layer,
        /// The parameter or limit exceeded.
        what: &'static str,
    },
    /// The caller asked for something the current state does not allow (a local error,
    /// never caused by the peer).
    #[error("not allowed in state {state}: {what}")]
    InvalidState {
        /// The call that was refused.
        what: &'static str,
        /// The machine's state at the time.
        state: &'static str,
    },
}

impl Error {
    /// Wrap a BER error from `gander_wire` with the layer it was found in.
    pub fn ber(layer: Layer) -> impl Fn(gander_wire::Error) -> Error {
        move |source| Error::Ber { layer, source }
    }

    /// Shorthand for [`Error::Malformed`].
    pub fn malformed(layer: Layer, what: &'static str, detail: &'static str) -> Error {
        Error::Malformed {
            layer,
            what,
            detail,
        }
    }

    /// The layer that produced this error, if it was caused by received bytes.
    pub fn layer(&self) -> Option<Layer> {
        match self {
            Error::TpktVersion(_) | Error::TpktTooShort(_) => Some(Layer::Tpkt),
            Error::TooLarge { layer, .. }
            | Error::Truncated { layer, .. }
            | Error::Malformed { layer, .. }
            | Error::UnknownCode { layer, .. }
            | Error::Ber { layer, .. }
            | Error::UnexpectedPdu { layer, .. }
            | Error::Refused { layer, .. }
            | Error::Limit { layer, .. } => Some(*layer),
            Error::InvalidState { .. } => None,
        }
    }
}

/// Result alias for this crate.
pub type Result<T> = core::result::Result<T, Error>;
