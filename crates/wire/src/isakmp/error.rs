//! Why an ISAKMP message was refused, and the RFC 2408 notification that says so to the peer.

/// The Notify Message Types of RFC 2408 section 3.14.1 that a codec error maps to.
///
/// A receiver that refuses a message answers (where it answers at all) with the notification
/// naming the reason; the numbers are the IANA "ISAKMP Notify Message Types" (RFC 2408 3.14.1).
pub mod notify_type {
    /// The Next Payload value names no payload this exchange may carry.
    pub const INVALID_PAYLOAD_TYPE: u16 = 1;
    /// The SA's Domain of Interpretation is not one gander implements.
    pub const DOI_NOT_SUPPORTED: u16 = 2;
    /// A cookie does not belong to any exchange under way (RFC 2408 2.5.3).
    pub const INVALID_COOKIE: u16 = 4;
    /// MjVer is not 1.
    pub const INVALID_MAJOR_VERSION: u16 = 5;
    /// MnVer is not 0 (RFC 2408 3.1: implementations of the RFC set 0, and SHOULD never accept
    /// a larger minor version).
    pub const INVALID_MINOR_VERSION: u16 = 6;
    /// The exchange type is not one gander implements.
    pub const INVALID_EXCHANGE_TYPE: u16 = 7;
    /// The Flags field has a bit set that is not defined or not allowed here.
    pub const INVALID_FLAGS: u16 = 8;
    /// The Message ID is not the one expected (replay, or an unknown exchange).
    pub const INVALID_MESSAGE_ID: u16 = 9;
    /// The Protocol-ID names no protocol gander implements.
    pub const INVALID_PROTOCOL_ID: u16 = 10;
    /// No proposal could be accepted.
    pub const NO_PROPOSAL_CHOSEN: u16 = 14;
    /// A length field or the structure of a payload is wrong.
    pub const PAYLOAD_MALFORMED: u16 = 16;
    /// The Key Exchange data is not a valid public value for the group.
    pub const INVALID_KEY_INFORMATION: u16 = 17;
    /// The identity is not one the policy knows (RFC 2408 3.14.1).
    pub const INVALID_ID_INFORMATION: u16 = 18;
    /// The certificate could not be parsed.
    pub const INVALID_CERTIFICATE: u16 = 19;
    /// The certificate is not trusted (unknown CA, expired, revoked).
    pub const CERTIFICATE_UNAVAILABLE: u16 = 28;
    /// The HASH payload does not verify (a wrong pre-shared key shows as this).
    pub const INVALID_HASH_INFORMATION: u16 = 23;
    /// Authentication failed (a signature that does not verify).
    pub const AUTHENTICATION_FAILED: u16 = 24;
    /// The signature could not be checked.
    pub const INVALID_SIGNATURE: u16 = 25;
    /// The member is known but the policy does not authorise it for the group.
    pub const ATTRIBUTES_NOT_SUPPORTED: u16 = 13;
}

/// One variant per kind of malformed ISAKMP input; [`IsakmpError::notify`] names the RFC 2408
/// notification a peer gets for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IsakmpError {
    /// The input ends before a field that must be present.
    #[error("truncated {what}: need {need} bytes, have {have}")]
    Truncated {
        /// What was being parsed.
        what: &'static str,
        /// Octets the field needs.
        need: usize,
        /// Octets present.
        have: usize,
    },
    /// A length field disagrees with the bytes present or with the structure's fixed size.
    #[error("bad length in {what}: {value}")]
    BadLength {
        /// What was being parsed.
        what: &'static str,
        /// The length found.
        value: usize,
    },
    /// MjVer other than 1 (RFC 2408 3.1: a receiver refuses a higher major version).
    #[error("unsupported ISAKMP version {major}.{minor}")]
    UnsupportedVersion {
        /// Major version found.
        major: u8,
        /// Minor version found.
        minor: u8,
    },
    /// A Next Payload value that names no payload allowed at this place.
    #[error("payload type {kind} not allowed in {what}")]
    InvalidPayloadType {
        /// Where it appeared.
        what: &'static str,
        /// The value found.
        kind: u8,
    },
    /// A field's value is outside what the RFC allows.
    #[error("bad value in {what}: {detail}")]
    BadValue {
        /// The field.
        what: &'static str,
        /// What is wrong with it.
        detail: &'static str,
    },
    /// More elements (payloads, proposals, attributes) than any honest message needs.
    #[error("more than {limit} {what}")]
    TooMany {
        /// What was counted.
        what: &'static str,
        /// The limit.
        limit: usize,
    },
    /// Bytes left over after a complete structure.
    #[error("{count} trailing bytes after {what}")]
    TrailingBytes {
        /// What was complete.
        what: &'static str,
        /// Octets left over.
        count: usize,
    },
    /// A value too large for the length field it must be emitted under.
    #[error("{what} too large to encode")]
    TooLarge {
        /// The field or structure that overflowed.
        what: &'static str,
    },
}

impl IsakmpError {
    /// The RFC 2408 3.14.1 Notify Message Type that tells a peer why its message was refused.
    pub fn notify(&self) -> u16 {
        match self {
            IsakmpError::UnsupportedVersion {
                major: super::header::MAJOR_VERSION,
                ..
            } => notify_type::INVALID_MINOR_VERSION,
            IsakmpError::UnsupportedVersion { .. } => notify_type::INVALID_MAJOR_VERSION,
            IsakmpError::InvalidPayloadType { .. } => notify_type::INVALID_PAYLOAD_TYPE,
            _ => notify_type::PAYLOAD_MALFORMED,
        }
    }
}

/// Result alias of the ISAKMP codecs.
pub type Result<T> = core::result::Result<T, IsakmpError>;
