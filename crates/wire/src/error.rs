//! The one error type of the codecs: one variant per kind of malformed input, so a
//! caller (and a counter in the gateway) can tell *why* a frame was rejected.

/// Why a byte sequence could not be parsed (or a `Repr` could not be emitted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ends before a field that must be present.
    #[error("truncated {what}: need {need} bytes, have {have}")]
    Truncated {
        /// What was being parsed or emitted.
        what: &'static str,
        /// Octets the field needs.
        need: usize,
        /// Octets present.
        have: usize,
    },
    /// A length field disagrees with the bytes actually present or with a fixed size.
    #[error("bad length in {what}: {value}")]
    BadLength {
        /// What was being parsed or emitted.
        what: &'static str,
        /// The length found.
        value: usize,
    },
    /// A BER length uses the indefinite form (0x80), which IEC 61850 encodings never use.
    #[error("indefinite BER length in {what}")]
    IndefiniteLength {
        /// What was being parsed or emitted.
        what: &'static str,
    },
    /// A BER length has more length octets than any IEC 61850 PDU can need (more than 4).
    #[error("BER length of {what} has {octets} length octets")]
    LengthTooLong {
        /// What was being parsed or emitted.
        what: &'static str,
        /// Number of length octets announced.
        octets: usize,
    },
    /// A tag other than the one the grammar requires at this position.
    #[error("unexpected tag in {what}: expected 0x{expected:02x}, found 0x{found:02x}")]
    UnexpectedTag {
        /// What was being parsed or emitted.
        what: &'static str,
        /// The tag the grammar requires.
        expected: u8,
        /// The tag present.
        found: u8,
    },
    /// A tag the grammar does not define at this position.
    #[error("unknown tag 0x{tag:02x} in {what}")]
    UnknownTag {
        /// What was being parsed or emitted.
        what: &'static str,
        /// The tag present.
        tag: u8,
    },
    /// A mandatory field is absent.
    #[error("missing field {0}")]
    MissingField(&'static str),
    /// A field that may appear once appears twice.
    #[error("duplicate field {0}")]
    DuplicateField(&'static str),
    /// Fields out of the order the ASN.1 SEQUENCE prescribes.
    #[error("field {0} out of order")]
    OutOfOrder(&'static str),
    /// Bytes left over after a complete structure.
    #[error("{count} trailing bytes after {what}")]
    TrailingBytes {
        /// What was being parsed or emitted.
        what: &'static str,
        /// Number of octets left over.
        count: usize,
    },
    /// A field's value is outside what its type allows (integer too wide, non-visible character, ...).
    #[error("bad value in {what}: {detail}")]
    BadValue {
        /// What was being parsed or emitted.
        what: &'static str,
        /// What is wrong with the value.
        detail: &'static str,
    },
    /// Structures nested deeper than the decoder allows (protects the stack).
    #[error("nesting deeper than {0} levels")]
    NestingTooDeep(usize),
    /// More VLAN tags in front of the EtherType than a frame may carry.
    #[error("more than {0} VLAN tags")]
    TooManyTags(usize),
    /// The Ethernet frame does not carry the protocol asked for.
    #[error("EtherType 0x{0:04x} is not the expected protocol")]
    WrongEtherType(u16),
    /// Not an IPv4/UDP datagram (or not the UDP port / protocol asked for).
    #[error("not a UDP datagram: {0}")]
    NotUdp(&'static str),
    /// CLTP length indicator other than 0x01 (IEC 61850-90-5 session, first byte).
    #[error("bad CLTP length indicator 0x{0:02x}")]
    BadLi(u8),
    /// CLTP TPDU type other than UD (0x40).
    #[error("bad CLTP TPDU type 0x{0:02x}")]
    BadTi(u8),
    /// Session identifier outside 0xA0..=0xA3.
    #[error("unknown SPDU identifier 0x{0:02x}")]
    BadSpduId(u8),
    /// Session protocol version this codec does not implement.
    #[error("unsupported session protocol version {0}")]
    UnsupportedVersion(u16),
    /// A checksum or CRC does not match.
    #[error("bad {what} checksum: computed 0x{computed:04x}, found 0x{found:04x}")]
    BadChecksum {
        /// Which checksum or CRC.
        what: &'static str,
        /// The value computed over the bytes.
        computed: u16,
        /// The value carried in the frame.
        found: u16,
    },
    /// A value too large for the field it must be emitted into.
    #[error("{what} too large to encode")]
    TooLarge {
        /// The field or structure that overflowed.
        what: &'static str,
    },
}

/// Result alias for the codecs.
pub type Result<T> = core::result::Result<T, Error>;
