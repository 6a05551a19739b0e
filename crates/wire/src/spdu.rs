//! The IEC 61850-90-5 session protocol: the CLTP-framed SPDU that carries R-GOOSE and R-SV over UDP,
//! with the IEC 62351-6 security information in its header and the signature after its payload.
//!
//! Layout (big-endian; offsets from the first UDP payload byte):
//!
//! ```text
//!  0  LI = 0x01            CLTP length indicator (ISO/IEC 8602 UD TPDU)
//!  1  TI = 0x40            CLTP UD TPDU
//!  2  SI                   0xA0 tunnelled, 0xA1 GOOSE, 0xA2 SV, 0xA3 management
//!  3  session header length
//!  4  0x80                 common session header
//!  5  common header length
//!  6  SPDU length (4)
//! 10  SPDU number (4)
//! 14  version (2)          1 or 2
//! 16  TimeOfCurrentKey (4)
//! 20  TimeToNextKey (2, signed)
//! v1: 22 encryption algorithm (1), 23 MAC algorithm (1), 24 KeyID (4)            -> 28 PayloadLength
//! v2: 22 KeyID (4), 26 IV length n (1), 27 IV (n)                                  -> 27+n PayloadLength
//!     PayloadLength (4), then payload elements:
//!         type (1) simulation (1) APPID (2) APDU length (2) APDU (N)
//!     optional padding 0xAF len bytes
//!     signature: 0x85 len value (zero or more such elements)
//! ```
//!
//! Implementations disagree on every length field (see `docs/framing.md` and the reference
//! notes, pitfalls P3/P4). [`Dialect`] says how lengths are written and which are checked on
//! read; the security layer picks the dialect from its profile. Parsing never sizes anything from a
//! length field without checking it against the bytes present.

use crate::{Error, Result};

/// CLTP length indicator of a UD TPDU header (one byte follows).
pub const CLTP_LI: u8 = 0x01;
/// CLTP UD TPDU code.
pub const CLTP_UD: u8 = 0x40;
/// Common session header parameter identifier.
pub const COMMON_HEADER_TAG: u8 = 0x80;
/// Signature element tag (the MAC, or the GCM tag, after the payload).
pub const SIGNATURE_TAG: u8 = 0x85;
/// Padding element tag (ahead of the signature).
pub const PADDING_TAG: u8 = 0xAF;
/// Size of a payload element header: type, simulation, APPID, APDU length.
pub const ELEMENT_HEADER_LEN: usize = 6;
/// Offset of the SPDU number.
pub const SPDU_NUMBER_OFFSET: usize = field::SPDU_NUMBER.start;
/// Offset of the version field.
pub const VERSION_OFFSET: usize = field::VERSION.start;

/// Field positions of the fixed part of the SPDU (the table in the module docs), from the first
/// UDP payload octet. CLTP fields are ISO/IEC 8602 (UD TPDU); the rest is the IEC 61850-90-5
/// session header with the IEC 62351-6 security information, all big-endian.
pub(crate) mod field {
    use core::ops::Range;
    /// CLTP length indicator (ISO/IEC 8602 UD TPDU header), [`super::CLTP_LI`].
    pub(crate) const LI: usize = 0;
    /// CLTP TPDU code, [`super::CLTP_UD`].
    pub(crate) const TI: usize = 1;
    /// Session identifier SI (IEC 61850-90-5), [`super::SpduId`].
    pub(crate) const SI: usize = 2;
    /// Session header length (IEC 61850-90-5): octets after this field up to PayloadLength.
    pub(crate) const SESSION_HEADER_LEN: usize = 3;
    /// Common session header parameter identifier (IEC 61850-90-5), [`super::COMMON_HEADER_TAG`].
    pub(crate) const COMMON_HEADER_TAG: usize = 4;
    /// Common session header length (IEC 61850-90-5).
    pub(crate) const COMMON_HEADER_LEN: usize = 5;
    /// SPDU length (IEC 61850-90-5): octets after this field.
    pub(crate) const SPDU_LENGTH: Range<usize> = 6..10;
    /// SPDU number (IEC 61850-90-5): the per-session sequence counter.
    pub(crate) const SPDU_NUMBER: Range<usize> = 10..14;
    /// Version (IEC 61850-90-5): 1 or 2, fixes the security information layout.
    pub(crate) const VERSION: Range<usize> = 14..16;
    /// TimeOfCurrentKey (IEC 62351-6 security information in the 90-5 header).
    pub(crate) const TIME_OF_CURRENT_KEY: Range<usize> = 16..20;
    /// TimeToNextKey, signed (IEC 62351-6 security information in the 90-5 header).
    pub(crate) const TIME_TO_NEXT_KEY: Range<usize> = 20..22;
    /// Start of the version-dependent security information; the fixed part ends here.
    pub(crate) const SECURITY_INFO: usize = 22;
    /// Version 1: encryption algorithm code (IEC 62351-6, seclib's layout).
    pub(crate) const V1_ENC_ALGORITHM: usize = 22;
    /// Version 1: MAC algorithm code (IEC 62351-6, seclib's layout).
    pub(crate) const V1_MAC_ALGORITHM: usize = 23;
    /// Version 1: Key ID (IEC 62351-6).
    pub(crate) const V1_KEY_ID: Range<usize> = 24..28;
    /// Version 2: Key ID (IEC 62351-6).
    pub(crate) const V2_KEY_ID: Range<usize> = 22..26;
    /// Version 2: IV length n (IEC 62351-6).
    pub(crate) const V2_IV_LEN: usize = 26;
    /// Version 2: first octet of the IV (n octets).
    pub(crate) const V2_IV: usize = 27;
    /// Size of the PayloadLength field that follows the security information.
    pub(crate) const PAYLOAD_LENGTH_LEN: usize = 4;

    /// Payload element header (IEC 61850-90-5): payload type.
    pub(crate) const ELEMENT_TYPE: usize = 0;
    /// Payload element header: simulation flag.
    pub(crate) const ELEMENT_SIMULATION: usize = 1;
    /// Payload element header: APPID.
    pub(crate) const ELEMENT_APPID: Range<usize> = 2..4;
    /// Payload element header: APDU length.
    pub(crate) const ELEMENT_APDU_LEN: Range<usize> = 4..6;

    /// Trailer element (padding or signature, IEC 61850-90-5 / IEC 62351-6): tag.
    pub(crate) const TRAILER_TAG: usize = 0;
    /// Trailer element: one-octet value length.
    pub(crate) const TRAILER_LEN: usize = 1;
    /// Trailer element: first octet of the value.
    pub(crate) const TRAILER_VALUE: usize = 2;
}

/// Session identifier (SI), an open enum: unknown values are rejected by the parser but
/// printable in hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpduId {
    /// 0xA0: tunnelled (layer-2 frames carried whole).
    Tunnelled,
    /// 0xA1: GOOSE (R-GOOSE).
    Goose,
    /// 0xA2: sampled values (R-SV).
    SampledValues,
    /// 0xA3: management (key delivery and the like).
    Management,
}

impl SpduId {
    /// Decodes SI.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0xA0 => SpduId::Tunnelled,
            0xA1 => SpduId::Goose,
            0xA2 => SpduId::SampledValues,
            0xA3 => SpduId::Management,
            other => return Err(Error::BadSpduId(other)),
        })
    }
    /// Encodes SI.
    pub const fn to_u8(self) -> u8 {
        match self {
            SpduId::Tunnelled => 0xA0,
            SpduId::Goose => 0xA1,
            SpduId::SampledValues => 0xA2,
            SpduId::Management => 0xA3,
        }
    }
    /// The payload type an element of this SPDU normally carries ((SI & 0x0F) + 0x80).
    pub const fn payload_type(self) -> u8 {
        (self.to_u8() & 0x0F) + 0x80
    }
}

/// How session header and common header lengths are written and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderLengths {
    /// The true lengths: session header length = bytes from the common header tag up to the
    /// PayloadLength field; common header length = that minus 2. On read both must match
    /// (the common header length may also be 10, the reading in which it covers only SPDU
    /// length, number and version).
    Exact,
    /// Constant values regardless of layout (libiec61850 writes 24/18, the gateway paper's
    /// samples 17/17); not checked on read.
    Fixed {
        /// Value written at offset 3.
        session: u8,
        /// Value written at offset 5.
        common: u8,
    },
}

/// How the SPDU length (offset 6) is written and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpduLengthRule {
    /// Bytes following the SPDU length field up to the end of the SPDU, signature included.
    Exact,
    /// 20 + PayloadLength, as libiec61850 1.6 writes it (ignores IV and signature); not checked on read.
    PayloadPlus20,
}

/// The length conventions of one family of implementations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dialect {
    /// Name for messages.
    pub name: &'static str,
    /// Header length bytes.
    pub header_lengths: HeaderLengths,
    /// SPDU length field.
    pub spdu_length: SpduLengthRule,
    /// Whether PayloadLength counts its own 4 bytes (the gateway paper's library does).
    pub payload_length_counts_itself: bool,
    /// What is added to the true APDU size in an element's APDU length (2 in libiec61850 and
    /// the gateway paper's library, pitfall P4; 0 as specified).
    pub apdu_length_bias: u16,
}

impl Dialect {
    /// What IEC 61850-90-5 describes: every length is the true length.
    pub const STANDARD: Dialect = Dialect {
        name: "standard",
        header_lengths: HeaderLengths::Exact,
        spdu_length: SpduLengthRule::Exact,
        payload_length_counts_itself: false,
        apdu_length_bias: 0,
    };
    /// libiec61850 1.6 (v1.6_develop_rgoose_sntp and the 1.6.1 release).
    pub const LIBIEC61850: Dialect = Dialect {
        name: "libiec61850",
        header_lengths: HeaderLengths::Fixed {
            session: 24,
            common: 18,
        },
        spdu_length: SpduLengthRule::PayloadPlus20,
        payload_length_counts_itself: false,
        apdu_length_bias: 2,
    };
    /// The gateway paper's R-GOOSE_SecLib and its 2020-era libiec61850 samples.
    pub const SECLIB: Dialect = Dialect {
        name: "seclib",
        header_lengths: HeaderLengths::Fixed {
            session: 0x11,
            common: 0x11,
        },
        spdu_length: SpduLengthRule::Exact,
        payload_length_counts_itself: true,
        apdu_length_bias: 2,
    };
}

/// Longest IV accepted: AES-GCM and GMAC use 12 bytes (SP 800-38D §8.2); the field allows 255,
/// but nothing in IEC 62351-6 needs more than a block, so longer IVs are refused rather than
/// allocated.
pub const MAX_IV_LEN: usize = 32;

/// An IV held inline (no allocation per frame).
///
/// Laid out bytes first and 8-aligned: the value is built, returned and moved into the
/// session header on every protected frame, and a 33-octet value at an odd offset was copied
/// with 16-octet moves that overlap the stores just made at another alignment, which the CPU
/// cannot forward (a store-forwarding stall per move: about 50 ns per R-GOOSE protect on an
/// Intel Xeon, `perf annotate` of `SecuredSpduRepr::new`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Iv {
    bytes: [u8; MAX_IV_LEN],
    // A whole word, so that the value has no padding and moves as two 16-octet and one
    // 8-octet copy (a one-octet field left seven of padding, copied as overlapping 4-octet
    // moves that stalled the same way).
    len: u64,
}

impl Iv {
    /// No IV.
    pub const EMPTY: Iv = Iv {
        bytes: [0; MAX_IV_LEN],
        len: 0,
    };

    /// An IV of up to [`MAX_IV_LEN`] bytes.
    pub fn new(b: &[u8]) -> Result<Self> {
        if b.len() > MAX_IV_LEN {
            return Err(Error::BadLength {
                what: "IV length",
                value: b.len(),
            });
        }
        let mut bytes = [0; MAX_IV_LEN];
        bytes[..b.len()].copy_from_slice(b);
        Ok(Iv {
            bytes,
            len: b.len() as u64,
        })
    }

    /// The IV bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there is no IV.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Default for Iv {
    fn default() -> Self {
        Iv::EMPTY
    }
}

impl From<[u8; 12]> for Iv {
    fn from(b: [u8; 12]) -> Self {
        let mut bytes = [0; MAX_IV_LEN];
        bytes[..12].copy_from_slice(&b);
        Iv { len: 12, bytes }
    }
}

impl core::fmt::Debug for Iv {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Iv(")?;
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

/// The security information of the session header.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SecurityInfo {
    /// Version 1: algorithm codes on the wire, no IV field.
    V1 {
        /// Encryption algorithm code.
        enc_code: u8,
        /// MAC algorithm code.
        mac_code: u8,
        /// Key identifier.
        key_id: u32,
    },
    /// Version 2: algorithms implied by the key id; an IV field of 0..=255 bytes.
    V2 {
        /// Key identifier.
        key_id: u32,
        /// Initialisation vector (12 bytes for AES-GCM/GMAC, empty otherwise).
        iv: Iv,
    },
}

impl SecurityInfo {
    /// The key identifier.
    pub fn key_id(&self) -> u32 {
        match self {
            SecurityInfo::V1 { key_id, .. } | SecurityInfo::V2 { key_id, .. } => *key_id,
        }
    }
    /// The protocol version this layout belongs to.
    pub fn version(&self) -> u16 {
        match self {
            SecurityInfo::V1 { .. } => 1,
            SecurityInfo::V2 { .. } => 2,
        }
    }
    /// The IV carried (empty in version 1).
    pub fn iv(&self) -> &[u8] {
        match self {
            SecurityInfo::V1 { .. } => &[],
            SecurityInfo::V2 { iv, .. } => iv.as_slice(),
        }
    }
    /// Bytes from the start of the security information (offset 22) to PayloadLength.
    fn wire_len(&self) -> usize {
        match self {
            SecurityInfo::V1 { .. } => field::V1_KEY_ID.end - field::SECURITY_INFO,
            SecurityInfo::V2 { iv, .. } => field::V2_IV - field::SECURITY_INFO + iv.len(),
        }
    }
}

/// The session header fields other than lengths (which the dialect derives).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionHeader {
    /// SI.
    pub spdu_id: SpduId,
    /// SPDU number: a per-session counter, the replay-protection sequence.
    pub spdu_number: u32,
    /// TimeOfCurrentKey: seconds (UTC, since the epoch) when the current key became valid.
    pub time_of_current_key: u32,
    /// TimeToNextKey: minutes until the next key; negative if none is known.
    pub time_to_next_key: i16,
    /// Security information (also fixes the version).
    pub security: SecurityInfo,
}

impl SessionHeader {
    /// Offset of the PayloadLength field (= length of the AES-GCM associated data minus 4).
    pub fn payload_length_offset(&self) -> usize {
        field::SECURITY_INFO + self.security.wire_len()
    }
    /// Offset of the first payload element.
    pub fn payload_start(&self) -> usize {
        self.payload_length_offset() + field::PAYLOAD_LENGTH_LEN
    }
}

/// One payload element, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PayloadElement<'a> {
    /// Payload type: 0x81 GOOSE, 0x82 SV, 0x83 tunnelled, 0x84 management.
    pub payload_type: u8,
    /// Simulation flag byte (0 or 1 in every known sender; kept raw).
    pub simulation: u8,
    /// APPID.
    pub appid: u16,
    /// The APDU (GOOSE 0x61 or SV 0x60), exactly as many bytes as its own BER length says
    /// where the dialect's APDU length is biased.
    pub apdu: &'a [u8],
}

impl PayloadElement<'_> {
    /// Bytes this element occupies.
    pub fn wire_len(&self) -> usize {
        ELEMENT_HEADER_LEN + self.apdu.len()
    }
}

/// A session PDU parsed in place: header fields plus the offsets the security layer needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionPdu<'a> {
    buf: &'a [u8],
    /// Decoded header.
    pub header: SessionHeader,
    /// Raw session header length byte (offset 3).
    pub session_header_len_field: u8,
    /// Raw common header length byte (offset 5).
    pub common_header_len_field: u8,
    /// Raw SPDU length.
    pub spdu_length_field: u32,
    /// Raw PayloadLength.
    pub payload_length_field: u32,
    /// Offset of the first payload element.
    pub payload_start: usize,
    /// Offset just past the payload (start of padding/signature).
    pub payload_end: usize,
}

fn be16(b: &[u8], r: core::ops::Range<usize>) -> u16 {
    u16::from_be_bytes([b[r.start], b[r.start + 1]])
}
fn be32(b: &[u8], r: core::ops::Range<usize>) -> u32 {
    u32::from_be_bytes([b[r.start], b[r.start + 1], b[r.start + 2], b[r.start + 3]])
}

fn need(buf: &[u8], what: &'static str, n: usize) -> Result<()> {
    if buf.len() < n {
        Err(Error::Truncated {
            what,
            need: n,
            have: buf.len(),
        })
    } else {
        Ok(())
    }
}

impl<'a> SessionPdu<'a> {
    /// Parses the header of a session PDU and locates its payload, checking every length the
    /// dialect says is reliable. The payload itself is not parsed (it may be ciphertext); see
    /// [`parse_elements`].
    pub fn parse(buf: &'a [u8], dialect: &Dialect) -> Result<Self> {
        need(buf, "session header", field::SECURITY_INFO)?;
        if buf[field::LI] != CLTP_LI {
            return Err(Error::BadLi(buf[field::LI]));
        }
        if buf[field::TI] != CLTP_UD {
            return Err(Error::BadTi(buf[field::TI]));
        }
        let spdu_id = SpduId::from_u8(buf[field::SI])?;
        if buf[field::COMMON_HEADER_TAG] != COMMON_HEADER_TAG {
            return Err(Error::UnexpectedTag {
                what: "common session header",
                expected: COMMON_HEADER_TAG,
                found: buf[field::COMMON_HEADER_TAG],
            });
        }
        let version = be16(buf, field::VERSION);
        let security = match version {
            1 => {
                need(
                    buf,
                    "version-1 security information",
                    field::V1_KEY_ID.end + field::PAYLOAD_LENGTH_LEN,
                )?;
                SecurityInfo::V1 {
                    enc_code: buf[field::V1_ENC_ALGORITHM],
                    mac_code: buf[field::V1_MAC_ALGORITHM],
                    key_id: be32(buf, field::V1_KEY_ID),
                }
            }
            2 => {
                need(buf, "version-2 security information", field::V2_IV)?;
                let n = buf[field::V2_IV_LEN] as usize;
                need(
                    buf,
                    "initialisation vector",
                    field::V2_IV + n + field::PAYLOAD_LENGTH_LEN,
                )?;
                SecurityInfo::V2 {
                    key_id: be32(buf, field::V2_KEY_ID),
                    iv: Iv::new(&buf[field::V2_IV..field::V2_IV + n])?,
                }
            }
            v => return Err(Error::UnsupportedVersion(v)),
        };
        let header = SessionHeader {
            spdu_id,
            spdu_number: be32(buf, field::SPDU_NUMBER),
            time_of_current_key: be32(buf, field::TIME_OF_CURRENT_KEY),
            time_to_next_key: be16(buf, field::TIME_TO_NEXT_KEY) as i16,
            security,
        };
        let pl_off = header.payload_length_offset();
        let payload_start = pl_off + field::PAYLOAD_LENGTH_LEN;
        let session_header_len_field = buf[field::SESSION_HEADER_LEN];
        let common_header_len_field = buf[field::COMMON_HEADER_LEN];
        let spdu_length_field = be32(buf, field::SPDU_LENGTH);
        let payload_length_field = be32(buf, pl_off..pl_off + field::PAYLOAD_LENGTH_LEN);

        if dialect.header_lengths == HeaderLengths::Exact {
            // Session header length counts from the common header tag up to PayloadLength,
            // common header length from the SPDU length field.
            let true_len = pl_off - field::COMMON_HEADER_TAG;
            if session_header_len_field as usize != true_len {
                return Err(Error::BadLength {
                    what: "session header length",
                    value: session_header_len_field as usize,
                });
            }
            let c = common_header_len_field as usize;
            if c != pl_off - field::SPDU_LENGTH.start && c != 10 {
                return Err(Error::BadLength {
                    what: "common session header length",
                    value: c,
                });
            }
        }
        if dialect.spdu_length == SpduLengthRule::Exact
            && spdu_length_field as usize != buf.len() - field::SPDU_LENGTH.end
        {
            return Err(Error::BadLength {
                what: "SPDU length",
                value: spdu_length_field as usize,
            });
        }
        let own = if dialect.payload_length_counts_itself {
            field::PAYLOAD_LENGTH_LEN
        } else {
            0
        };
        let payload_len =
            (payload_length_field as usize)
                .checked_sub(own)
                .ok_or(Error::BadLength {
                    what: "payload length",
                    value: payload_length_field as usize,
                })?;
        let payload_end = payload_start
            .checked_add(payload_len)
            .filter(|&e| e <= buf.len())
            .ok_or(Error::BadLength {
                what: "payload length",
                value: payload_length_field as usize,
            })?;
        Ok(SessionPdu {
            buf,
            header,
            session_header_len_field,
            common_header_len_field,
            spdu_length_field,
            payload_length_field,
            payload_start,
            payload_end,
        })
    }

    /// The whole SPDU (from LI).
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }
    /// The payload elements' bytes (possibly ciphertext).
    pub fn payload(&self) -> &'a [u8] {
        &self.buf[self.payload_start..self.payload_end]
    }
    /// Everything after the payload: padding and signature element(s).
    pub fn trailer(&self) -> &'a [u8] {
        &self.buf[self.payload_end..]
    }
}

/// Parses the payload elements of a cleartext payload.
///
/// Under a biased dialect the APDU length overstates the APDU; the APDU is then delimited by its
/// own BER length (which must be exactly the stated length minus the bias).
pub fn parse_elements<'a>(payload: &'a [u8], dialect: &Dialect) -> Result<Vec<PayloadElement<'a>>> {
    elements(payload, dialect).collect()
}

/// The payload elements one by one, without allocating; stops after the first error.
pub fn elements<'a>(payload: &'a [u8], dialect: &Dialect) -> Elements<'a> {
    Elements {
        rest: payload,
        bias: dialect.apdu_length_bias,
        failed: false,
    }
}

/// Checks that a cleartext payload is a well-formed sequence of elements; returns how many.
pub fn validate_elements(payload: &[u8], dialect: &Dialect) -> Result<usize> {
    elements(payload, dialect).try_fold(0, |n, e| e.map(|_| n + 1))
}

/// Iterator over payload elements (see [`elements`]).
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    rest: &'a [u8],
    bias: u16,
    failed: bool,
}

impl<'a> Elements<'a> {
    fn step(&mut self) -> Result<PayloadElement<'a>> {
        let rest = self.rest;
        need(rest, "payload element header", ELEMENT_HEADER_LEN)?;
        let stated = be16(rest, field::ELEMENT_APDU_LEN) as usize;
        let body = &rest[ELEMENT_HEADER_LEN..];
        let apdu_len = if self.bias == 0 {
            if stated > body.len() {
                return Err(Error::BadLength {
                    what: "APDU length",
                    value: stated,
                });
            }
            stated
        } else {
            // The quirk is exactly "true size + bias"; anything else is a malformed element.
            let ber = ber_tlv_len(body)?;
            if stated != ber + self.bias as usize {
                return Err(Error::BadLength {
                    what: "APDU length",
                    value: stated,
                });
            }
            ber
        };
        // A biased element occupies its true size only: the next element (if any) follows the APDU.
        self.rest = &body[apdu_len..];
        Ok(PayloadElement {
            payload_type: rest[field::ELEMENT_TYPE],
            simulation: rest[field::ELEMENT_SIMULATION],
            appid: be16(rest, field::ELEMENT_APPID),
            apdu: &body[..apdu_len],
        })
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<PayloadElement<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.rest.is_empty() {
            return None;
        }
        let r = self.step();
        self.failed = r.is_err();
        Some(r)
    }
}

/// Total length (tag + length octets + contents) of the BER TLV at the start of `b`.
fn ber_tlv_len(b: &[u8]) -> Result<usize> {
    need(b, "APDU", 2)?;
    let first = b[1];
    let (hdr, len) = if first < 0x80 {
        (2usize, first as usize)
    } else {
        let n = (first & 0x7F) as usize;
        if n == 0 {
            return Err(Error::IndefiniteLength { what: "APDU" });
        }
        if n > 4 {
            return Err(Error::LengthTooLong {
                what: "APDU",
                octets: n,
            });
        }
        need(b, "APDU length", 2 + n)?;
        let mut l = 0usize;
        for &x in &b[2..2 + n] {
            l = (l << 8) | x as usize;
        }
        (2 + n, l)
    };
    let total = hdr.checked_add(len).ok_or(Error::BadLength {
        what: "APDU",
        value: len,
    })?;
    if total > b.len() {
        return Err(Error::Truncated {
            what: "APDU",
            need: total,
            have: b.len(),
        });
    }
    Ok(total)
}

/// A signature (or GCM tag) element in the trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignatureElement<'a> {
    /// Offset of the 0x85 tag within the trailer.
    pub offset: usize,
    /// The length byte as written (libiec61850 writes 16 for a 32-byte HMAC, pitfall P1).
    pub stated_len: u8,
    /// The value.
    pub value: &'a [u8],
}

/// Splits a trailer into optional padding and signature elements whose value lengths are given
/// by the caller (`value_lens`, in order), checking each tag. The length byte must equal the
/// value length unless `tolerate_len` returns true for (stated, actual).
pub fn parse_trailer<'a>(
    trailer: &'a [u8],
    value_lens: &[usize],
    tolerate_len: impl Fn(u8, usize) -> bool,
) -> Result<(Option<&'a [u8]>, Vec<SignatureElement<'a>>)> {
    let (padding, mut at) = parse_padding(trailer)?;
    let mut sigs = Vec::with_capacity(value_lens.len());
    for &len in value_lens {
        let (stated_len, value) = parse_signature_element(&trailer[at..], len, &tolerate_len)?;
        sigs.push(SignatureElement {
            offset: at,
            stated_len,
            value,
        });
        at += field::TRAILER_VALUE + len;
    }
    if at != trailer.len() {
        return Err(Error::TrailingBytes {
            what: "signature",
            count: trailer.len() - at,
        });
    }
    Ok((padding, sigs))
}

/// Parses a trailer holding optional padding and exactly one signature element whose value is
/// `value_len` bytes (see [`parse_trailer`]), without allocating.
pub fn parse_signature(
    trailer: &[u8],
    value_len: usize,
    tolerate_len: impl Fn(u8, usize) -> bool,
) -> Result<SignatureElement<'_>> {
    let (_, at) = parse_padding(trailer)?;
    let rest = &trailer[at..];
    let (stated_len, value) = parse_signature_element(rest, value_len, &tolerate_len)?;
    let end = field::TRAILER_VALUE + value_len;
    if rest.len() != end {
        return Err(Error::TrailingBytes {
            what: "signature",
            count: rest.len() - end,
        });
    }
    Ok(SignatureElement {
        offset: at,
        stated_len,
        value,
    })
}

/// The padding element at the start of `trailer`, if any: its value and the offset after it.
fn parse_padding(trailer: &[u8]) -> Result<(Option<&[u8]>, usize)> {
    if trailer.first() != Some(&PADDING_TAG) {
        return Ok((None, 0));
    }
    need(trailer, "padding", field::TRAILER_VALUE)?;
    let end = field::TRAILER_VALUE + trailer[field::TRAILER_LEN] as usize;
    need(trailer, "padding", end)?;
    Ok((Some(&trailer[field::TRAILER_VALUE..end]), end))
}

/// The signature element at the start of `rest`, with a value of `len` octets: its stated
/// length octet and its value.
fn parse_signature_element<'a>(
    rest: &'a [u8],
    len: usize,
    tolerate_len: &impl Fn(u8, usize) -> bool,
) -> Result<(u8, &'a [u8])> {
    need(rest, "signature", field::TRAILER_VALUE)?;
    if rest[field::TRAILER_TAG] != SIGNATURE_TAG {
        return Err(Error::UnexpectedTag {
            what: "signature",
            expected: SIGNATURE_TAG,
            found: rest[field::TRAILER_TAG],
        });
    }
    let stated = rest[field::TRAILER_LEN];
    if stated as usize != len && !tolerate_len(stated, len) {
        return Err(Error::BadLength {
            what: "signature length",
            value: stated as usize,
        });
    }
    let end = field::TRAILER_VALUE + len;
    need(rest, "signature value", end)?;
    Ok((stated, &rest[field::TRAILER_VALUE..end]))
}

/// Where [`SpduRepr::emit`] puts things.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Offset of the IV within the SPDU (version 2).
    pub iv_offset: usize,
    /// Offset of the first payload element (end of the GCM associated data).
    pub payload_start: usize,
    /// Offset just past the payload: where the trailer begins.
    pub payload_end: usize,
}

/// The payload of an SPDU to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpduPayload<'a> {
    /// Payload elements, each written as type, simulation, APPID, APDU length (with the
    /// dialect's bias) and APDU.
    Elements(&'a [PayloadElement<'a>]),
    /// Payload elements already in wire form, exactly as [`SessionPdu::payload`] gives them for
    /// an SPDU parsed (and its elements checked, [`validate_elements`]) with the same dialect:
    /// a received payload sent on under a new header (security added or removed). Re-encoding
    /// its elements would write the same octets (each element occupies its header and its
    /// APDU, whose stated length the dialect fixes), so they are copied as they are.
    Encoded(&'a [u8]),
}

impl SpduPayload<'_> {
    /// Octets of the payload on the wire.
    pub fn wire_len(&self) -> usize {
        match self {
            SpduPayload::Elements(els) => els.iter().map(|e| e.wire_len()).sum(),
            SpduPayload::Encoded(b) => b.len(),
        }
    }
}

/// A session PDU to emit, in smoltcp's `Repr` shape: its header, its payload borrowed, and the
/// size of the trailer (padding and signature elements) the caller writes after the payload,
/// which exact SPDU lengths count. [`SpduRepr::buffer_len`] is the whole SPDU, trailer
/// included; [`SpduRepr::emit`] writes all of it but the trailer into the caller's buffer and
/// says where things are ([`Layout`]). The length fields are computed (and checked against
/// their widths) once, in [`SpduRepr::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpduRepr<'a> {
    header: SessionHeader,
    payload: SpduPayload<'a>,
    dialect: Dialect,
    session_header_len: u8,
    common_header_len: u8,
    spdu_length: u32,
    payload_length: u32,
    payload_end: usize,
    total: usize,
}

impl<'a> SpduRepr<'a> {
    /// An SPDU with `header` and `payload`, written with `dialect`'s length rules, to be
    /// followed by `trailer_len` octets of trailer.
    ///
    /// # Errors
    /// [`Error::TooLarge`] when a length does not fit its field (the session header length's
    /// octet, PayloadLength's and SPDU length's four octets, an APDU length's two).
    pub fn new(
        header: SessionHeader,
        payload: SpduPayload<'a>,
        trailer_len: usize,
        dialect: &Dialect,
    ) -> Result<Self> {
        let pl_off = header.payload_length_offset();
        let payload_start = pl_off + field::PAYLOAD_LENGTH_LEN;
        let payload_len = payload.wire_len();
        let too_large = |what| Error::TooLarge { what };
        let payload_end = payload_start
            .checked_add(payload_len)
            .ok_or(too_large("payload"))?;
        let total = payload_end
            .checked_add(trailer_len)
            .ok_or(too_large("SPDU"))?;
        let (session_header_len, common_header_len) = match dialect.header_lengths {
            HeaderLengths::Exact => (
                u8::try_from(pl_off - field::COMMON_HEADER_TAG)
                    .map_err(|_| too_large("session header"))?,
                u8::try_from(pl_off - field::SPDU_LENGTH.start)
                    .map_err(|_| too_large("session header"))?,
            ),
            HeaderLengths::Fixed { session, common } => (session, common),
        };
        let own = if dialect.payload_length_counts_itself {
            field::PAYLOAD_LENGTH_LEN
        } else {
            0
        };
        let payload_length = payload_len
            .checked_add(own)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or(too_large("payload"))?;
        let spdu_length = match dialect.spdu_length {
            SpduLengthRule::Exact => total - field::SPDU_LENGTH.end,
            SpduLengthRule::PayloadPlus20 => (payload_length as usize)
                .checked_add(20)
                .ok_or(too_large("SPDU"))?,
        };
        let spdu_length = u32::try_from(spdu_length).map_err(|_| too_large("SPDU"))?;
        if let SpduPayload::Elements(els) = payload {
            for e in els {
                let stated = e.apdu.len() + dialect.apdu_length_bias as usize;
                u16::try_from(stated).map_err(|_| too_large("APDU"))?;
            }
        }
        Ok(SpduRepr {
            header,
            payload,
            dialect: *dialect,
            session_header_len,
            common_header_len,
            spdu_length,
            payload_length,
            payload_end,
            total,
        })
    }

    /// The header written.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// Octets of the whole SPDU, the trailer included: what the caller's buffer must hold.
    pub fn buffer_len(&self) -> usize {
        self.total
    }

    /// Where [`SpduRepr::emit`] puts things (known before anything is written).
    pub fn layout(&self) -> Layout {
        Layout {
            iv_offset: match self.header.security {
                SecurityInfo::V1 { .. } => field::V1_KEY_ID.end,
                SecurityInfo::V2 { .. } => field::V2_IV,
            },
            payload_start: self.header.payload_start(),
            payload_end: self.payload_end,
        }
    }

    /// Writes the SPDU up to the end of its payload at the start of `buf`, the trailer's
    /// octets (`buf[layout.payload_end..buffer_len()]`) left to the caller; returns the layout.
    ///
    /// # Errors
    /// [`Error::Truncated`] when `buf` is shorter than [`Self::buffer_len`]; nothing is
    /// written then.
    pub fn emit(&self, buf: &mut [u8]) -> Result<Layout> {
        if buf.len() < self.total {
            return Err(Error::Truncated {
                what: "SPDU output buffer",
                need: self.total,
                have: buf.len(),
            });
        }
        let h = &self.header;
        buf[field::LI] = CLTP_LI;
        buf[field::TI] = CLTP_UD;
        buf[field::SI] = h.spdu_id.to_u8();
        buf[field::SESSION_HEADER_LEN] = self.session_header_len;
        buf[field::COMMON_HEADER_TAG] = COMMON_HEADER_TAG;
        buf[field::COMMON_HEADER_LEN] = self.common_header_len;
        buf[field::SPDU_LENGTH].copy_from_slice(&self.spdu_length.to_be_bytes());
        buf[field::SPDU_NUMBER].copy_from_slice(&h.spdu_number.to_be_bytes());
        buf[field::VERSION].copy_from_slice(&h.security.version().to_be_bytes());
        buf[field::TIME_OF_CURRENT_KEY].copy_from_slice(&h.time_of_current_key.to_be_bytes());
        buf[field::TIME_TO_NEXT_KEY].copy_from_slice(&h.time_to_next_key.to_be_bytes());
        match &h.security {
            SecurityInfo::V1 {
                enc_code,
                mac_code,
                key_id,
            } => {
                buf[field::V1_ENC_ALGORITHM] = *enc_code;
                buf[field::V1_MAC_ALGORITHM] = *mac_code;
                buf[field::V1_KEY_ID].copy_from_slice(&key_id.to_be_bytes());
            }
            SecurityInfo::V2 { key_id, iv } => {
                buf[field::V2_KEY_ID].copy_from_slice(&key_id.to_be_bytes());
                buf[field::V2_IV_LEN] = iv.len() as u8;
                buf[field::V2_IV..field::V2_IV + iv.len()].copy_from_slice(iv.as_slice());
            }
        }
        let pl_off = h.payload_length_offset();
        let mut at = pl_off + field::PAYLOAD_LENGTH_LEN;
        buf[pl_off..at].copy_from_slice(&self.payload_length.to_be_bytes());
        match self.payload {
            SpduPayload::Encoded(b) => buf[at..at + b.len()].copy_from_slice(b),
            SpduPayload::Elements(els) => {
                let bias = self.dialect.apdu_length_bias as usize;
                for e in els {
                    let el = &mut buf[at..at + e.wire_len()];
                    el[field::ELEMENT_TYPE] = e.payload_type;
                    el[field::ELEMENT_SIMULATION] = e.simulation;
                    el[field::ELEMENT_APPID].copy_from_slice(&e.appid.to_be_bytes());
                    // Checked to fit in `new`.
                    let stated = (e.apdu.len() + bias) as u16;
                    el[field::ELEMENT_APDU_LEN].copy_from_slice(&stated.to_be_bytes());
                    el[ELEMENT_HEADER_LEN..].copy_from_slice(e.apdu);
                    at += e.wire_len();
                }
            }
        }
        Ok(self.layout())
    }

    /// The SPDU followed by `trailer` as a new vector: a thin helper for callers that want an
    /// owned SPDU (tests, fixtures).
    ///
    /// # Errors
    /// [`Error::BadLength`] when `trailer` is not as long as the SPDU was sized for.
    pub fn to_vec_with_trailer(&self, trailer: &[u8]) -> Result<Vec<u8>> {
        if trailer.len() != self.total - self.payload_end {
            return Err(Error::BadLength {
                what: "SPDU trailer",
                value: trailer.len(),
            });
        }
        let mut out = vec![0u8; self.total];
        let lay = self.emit(&mut out)?;
        out[lay.payload_end..].copy_from_slice(trailer);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// libiec61850 1.6 mode 0 (no security): `lib-mode0-none` in `crates/sec/tests/vectors/golden_frames.txt`.
    const LIB_PLAIN: &str = "0140a1188012000000c10000000000020000000000000000000000000000ad8100400100a96181a4802973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c65494f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c75657384086b022a6fcb020c0a8501018601008701008801018901008a0102ab07850204d2830101";

    #[test]
    fn parses_libiec61850_plain_and_rejects_it_as_standard() {
        let b = unhex(LIB_PLAIN);
        let pdu = SessionPdu::parse(&b, &Dialect::LIBIEC61850).unwrap();
        assert_eq!(pdu.header.spdu_id, SpduId::Goose);
        assert_eq!(
            pdu.header.security,
            SecurityInfo::V2 {
                key_id: 0,
                iv: Iv::EMPTY
            }
        );
        assert_eq!(pdu.payload_start, 31);
        assert_eq!(pdu.payload_end, b.len());
        let els = parse_elements(pdu.payload(), &Dialect::LIBIEC61850).unwrap();
        assert_eq!(els.len(), 1);
        assert_eq!(els[0].appid, 0x4001);
        assert_eq!(els[0].apdu[0], 0x61);
        assert_eq!(els[0].apdu.len(), 0xa4 + 3);
        // The same bytes break the standard's length rules.
        assert!(matches!(
            SessionPdu::parse(&b, &Dialect::STANDARD),
            Err(Error::BadLength { .. })
        ));
    }

    #[test]
    fn re_emits_libiec61850_byte_for_byte() {
        let b = unhex(LIB_PLAIN);
        let pdu = SessionPdu::parse(&b, &Dialect::LIBIEC61850).unwrap();
        let els = parse_elements(pdu.payload(), &Dialect::LIBIEC61850).unwrap();
        let out = SpduRepr::new(
            pdu.header.clone(),
            SpduPayload::Elements(&els),
            0,
            &Dialect::LIBIEC61850,
        )
        .unwrap()
        .to_vec_with_trailer(&[])
        .unwrap();
        assert_eq!(out, b);
        // The payload copied as received writes the same octets.
        let copied = SpduRepr::new(
            pdu.header.clone(),
            SpduPayload::Encoded(pdu.payload()),
            0,
            &Dialect::LIBIEC61850,
        )
        .unwrap()
        .to_vec_with_trailer(&[])
        .unwrap();
        assert_eq!(copied, b);
    }

    #[test]
    fn standard_round_trip_with_iv_and_trailer() {
        let apdu = [0x61, 0x03, 0x80, 0x01, 0x41];
        let h = SessionHeader {
            spdu_id: SpduId::Goose,
            spdu_number: 7,
            time_of_current_key: 1_700_000_000,
            time_to_next_key: -1,
            security: SecurityInfo::V2 {
                key_id: 5,
                iv: Iv::new(&[9; 12]).unwrap(),
            },
        };
        let el = PayloadElement {
            payload_type: 0x81,
            simulation: 0,
            appid: 0x3001,
            apdu: &apdu,
        };
        let els = [el];
        let repr = SpduRepr::new(
            h.clone(),
            SpduPayload::Elements(&els),
            18,
            &Dialect::STANDARD,
        )
        .unwrap();
        let mut buf = vec![0xa5; repr.buffer_len() + 3];
        let lay = repr.emit(&mut buf[3..]).unwrap();
        assert_eq!(lay, repr.layout());
        let mut spdu = buf[3..3 + lay.payload_end].to_vec();
        assert_eq!(lay.payload_end + 18, repr.buffer_len());
        spdu.extend_from_slice(&[0x85, 16]);
        spdu.extend_from_slice(&[0xee; 16]);
        let p = SessionPdu::parse(&spdu, &Dialect::STANDARD).unwrap();
        assert_eq!(p.header, h);
        assert_eq!(p.session_header_len_field as usize, 23 + 12);
        let els = parse_elements(p.payload(), &Dialect::STANDARD).unwrap();
        assert_eq!(els, vec![el]);
        let (pad, sigs) = parse_trailer(p.trailer(), &[16], |_, _| false).unwrap();
        assert!(pad.is_none());
        assert_eq!(sigs[0].value, &[0xee; 16]);
        // A trailer shorter than promised is an exact-length violation.
        spdu.pop();
        assert!(SessionPdu::parse(&spdu, &Dialect::STANDARD).is_err());
    }

    #[test]
    fn seclib_sample_lengths() {
        // Header of the gateway paper's packet_hmacSHA256_80.bin (UDP payload), version 1.
        let hex = "0140a0118011000001403ba4c73e000100000000000000010000000000000122830003e8011a";
        let mut b = unhex(hex);
        // Pad out a fake 280-byte APDU and 12-byte signature so lengths are self-consistent.
        b.extend_from_slice(&[0x61, 0x82, 0x01, 0x14]);
        b.extend_from_slice(&[0u8; 276]);
        b.extend_from_slice(&[0x85, 10]);
        b.extend_from_slice(&[0u8; 10]);
        let p = SessionPdu::parse(&b, &Dialect::SECLIB).unwrap();
        assert_eq!(
            p.header.security,
            SecurityInfo::V1 {
                enc_code: 0,
                mac_code: 1,
                key_id: 0
            }
        );
        assert_eq!(p.payload_start, 32);
        let els = parse_elements(p.payload(), &Dialect::SECLIB).unwrap();
        assert_eq!(els[0].apdu.len(), 280);
        assert_eq!(els[0].payload_type, 0x83);
    }

    #[test]
    fn rejects_bad_leading_bytes() {
        let mut b = unhex(LIB_PLAIN);
        b[0] = 2;
        assert_eq!(
            SessionPdu::parse(&b, &Dialect::LIBIEC61850),
            Err(Error::BadLi(2))
        );
        b[0] = 1;
        b[2] = 0xA7;
        assert_eq!(
            SessionPdu::parse(&b, &Dialect::LIBIEC61850),
            Err(Error::BadSpduId(0xA7))
        );
        b[2] = 0xA1;
        b[15] = 3;
        assert_eq!(
            SessionPdu::parse(&b, &Dialect::LIBIEC61850),
            Err(Error::UnsupportedVersion(3))
        );
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        /// An APDU whose length (with the dialect's bias) overflows its two octets is refused
        /// when the SPDU is sized, before anything is written.
        #[test]
        fn oversized_apdu_is_refused() {
            for d in [Dialect::STANDARD, Dialect::LIBIEC61850, Dialect::SECLIB] {
                let apdu = vec![0u8; 65_536 - d.apdu_length_bias as usize];
                let h = SessionHeader {
                    spdu_id: SpduId::Goose,
                    spdu_number: 1,
                    time_of_current_key: 0,
                    time_to_next_key: 0,
                    security: SecurityInfo::V2 {
                        key_id: 0,
                        iv: Iv::EMPTY,
                    },
                };
                let els = [PayloadElement {
                    payload_type: 0x81,
                    simulation: 0,
                    appid: 1,
                    apdu: &apdu,
                }];
                assert_eq!(
                    SpduRepr::new(h.clone(), SpduPayload::Elements(&els), 0, &d),
                    Err(Error::TooLarge { what: "APDU" })
                );
                let fits = [PayloadElement {
                    apdu: &apdu[1..],
                    ..els[0]
                }];
                assert!(SpduRepr::new(h.clone(), SpduPayload::Elements(&fits), 0, &d).is_ok());
            }
        }

        fn dialects() -> impl Strategy<Value = Dialect> {
            prop_oneof![
                Just(Dialect::STANDARD),
                Just(Dialect::LIBIEC61850),
                Just(Dialect::SECLIB)
            ]
        }

        proptest! {
            #[test]
            fn signature_parsers_agree(trailer in proptest::collection::vec(any::<u8>(), 0..40), len in 0usize..20) {
                let one = parse_signature(&trailer, len, |_, _| false).map(|s| (s.offset, s.value.to_vec()));
                let many = parse_trailer(&trailer, &[len], |_, _| false).map(|(_, v)| (v[0].offset, v[0].value.to_vec()));
                prop_assert_eq!(one.ok(), many.ok());
            }

            #[test]
            fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), d in dialects()) {
                if let Ok(p) = SessionPdu::parse(&bytes, &d) {
                    let _ = parse_elements(p.payload(), &d);
                    let _ = parse_trailer(p.trailer(), &[16, 16], |_, _| true);
                }
            }

            #[test]
            fn emit_then_parse(
                d in dialects(),
                num in any::<u32>(), tock in any::<u32>(), ttnk in any::<i16>(), key in any::<u32>(),
                v2 in any::<bool>(), iv in proptest::collection::vec(any::<u8>(), 0..=MAX_IV_LEN),
                content in proptest::collection::vec(any::<u8>(), 0..300), appid in any::<u16>(),
                trailer in proptest::collection::vec(any::<u8>(), 0..40),
            ) {
                let mut apdu = vec![0x61];
                if content.len() < 128 { apdu.push(content.len() as u8); } else { apdu.extend_from_slice(&[0x82, 0, content.len() as u8]); apdu[2] = (content.len() >> 8) as u8; apdu[3] = content.len() as u8; }
                apdu.extend_from_slice(&content);
                let security = if v2 { SecurityInfo::V2 { key_id: key, iv: Iv::new(&iv).unwrap() } } else { SecurityInfo::V1 { enc_code: 1, mac_code: 2, key_id: key } };
                let h = SessionHeader { spdu_id: SpduId::Goose, spdu_number: num, time_of_current_key: tock, time_to_next_key: ttnk, security };
                let el = PayloadElement { payload_type: 0x81, simulation: 0, appid, apdu: &apdu };
                let els = [el];
                let repr = SpduRepr::new(h.clone(), SpduPayload::Elements(&els), trailer.len(), &d).unwrap();
                let out = repr.to_vec_with_trailer(&trailer).unwrap();
                let lay = repr.layout();
                prop_assert_eq!(out.len(), repr.buffer_len());
                let p = SessionPdu::parse(&out, &d).unwrap();
                prop_assert_eq!(&p.header, &h);
                prop_assert_eq!(p.payload_start, lay.payload_start);
                prop_assert_eq!(p.payload_end, lay.payload_end);
                prop_assert_eq!(p.trailer(), &trailer[..]);
                let els = parse_elements(p.payload(), &d).unwrap();
                prop_assert_eq!(els, vec![el]);
                // The received payload copied under the same header and dialect: the same SPDU.
                let again = SpduRepr::new(h.clone(), SpduPayload::Encoded(p.payload()), trailer.len(), &d)
                    .unwrap()
                    .to_vec_with_trailer(&trailer)
                    .unwrap();
                prop_assert_eq!(&again, &out);
            }

            /// Every buffer shorter than `buffer_len` is an error and leaves the buffer as it was;
            /// a trailer of the wrong size is refused.
            #[test]
            fn short_buffers_are_errors(
                d in dialects(), v2 in any::<bool>(),
                iv in proptest::collection::vec(any::<u8>(), 0..=MAX_IV_LEN),
                apdus in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..4),
                trailer_len in 0usize..40, cut in 1usize..200,
            ) {
                let security = if v2 { SecurityInfo::V2 { key_id: 3, iv: Iv::new(&iv).unwrap() } } else { SecurityInfo::V1 { enc_code: 0, mac_code: 1, key_id: 3 } };
                let h = SessionHeader { spdu_id: SpduId::SampledValues, spdu_number: 1, time_of_current_key: 0, time_to_next_key: -1, security };
                let els: Vec<_> = apdus.iter().map(|a| PayloadElement { payload_type: 0x82, simulation: 1, appid: 7, apdu: a }).collect();
                let repr = SpduRepr::new(h, SpduPayload::Elements(&els), trailer_len, &d).unwrap();
                let short = repr.buffer_len().saturating_sub(cut);
                let mut buf = vec![0x3c; short];
                let is_truncated = matches!(repr.emit(&mut buf), Err(Error::Truncated { .. }));
                prop_assert!(is_truncated);
                prop_assert!(buf.iter().all(|&b| b == 0x3c));
                let wrong = vec![0; trailer_len + 1];
                prop_assert!(repr.to_vec_with_trailer(&wrong).is_err());
            }

        }
    }
}
