//! The MMS `Data` CHOICE, as GOOSE `allData` (IEC 61850-8-1 Annex A) and MMS reports carry it.
//!
//! The type is defined in ISO 9506-2 (MMS protocol, `Data ::= CHOICE`) with context-specific
//! tags; IEC 61850-8-1 clause 8.1.3 maps the IEC 61850 basic types onto it. Every alternative
//! of ISO 9506-2:2003 is read and written, and tag \[8\], ISO 9506-2:1990's `real` (reserved
//! since 2003, yet sent by devices in the field: a GE F650's GOOSE carries it, and Wireshark
//! decodes it), is kept as its X.690 §8.5 REAL contents octets, with [`real_value`] to read the
//! number. Any other tag is rejected with [`Error::UnknownTag`] so that nothing is silently
//! dropped.
//!
//! | tag  | alternative              | IEC 61850 use                          |
//! |------|--------------------------|----------------------------------------|
//! | 0xA1 | array \[1\]              | arrays of data attributes              |
//! | 0xA2 | structure \[2\]          | data objects and constructed attrs     |
//! | 0x83 | boolean \[3\]            | BOOLEAN                                |
//! | 0x84 | bit-string \[4\]         | Quality, Dbpos, Tcmd, coded enums      |
//! | 0x85 | integer \[5\]            | INT8..INT64                            |
//! | 0x86 | unsigned \[6\]           | INT8U..INT32U                          |
//! | 0x87 | floating-point \[7\]     | FLOAT32, FLOAT64                       |
//! | 0x88 | real \[8\]               | not mapped; ISO 9506-2:1990, legacy    |
//! | 0x89 | octet-string \[9\]       | OCTET STRING (Octet64, EntryID, ...)   |
//! | 0x8A | visible-string \[10\]    | VisString32..255, ObjRef, Currency     |
//! | 0x8B | generalized-time \[11\]  | not mapped; some MMS servers send it   |
//! | 0x8C | binary-time \[12\]       | TimeOfDay / EntryTime (4 or 6 octets)  |
//! | 0x8D | bcd \[13\]               | not mapped; legacy devices             |
//! | 0x8E | booleanArray \[14\]      | not mapped; legacy devices             |
//! | 0x8F | objId \[15\]             | not mapped                             |
//! | 0x90 | mMSString \[16\]         | Unicode255 (`dU` of every Ed.2 CDC)    |
//! | 0x91 | utc-time \[17\]          | TimeStamp (8 octets)                   |

use crate::ber::{self, Reader};
use crate::ber_sink::{Sink, SliceSink};
use crate::{Codec, Error, Result};

/// How deeply arrays and structures may nest. IEC 61850 data models rarely exceed four or
/// five levels; the limit bounds the decoder's recursion against hostile input.
pub const MAX_DEPTH: usize = 16;

/// Tags of the `Data` alternatives (ISO 9506-2, context-specific, X.690 8.1.2).
pub mod tag {
    /// array `[1]` (constructed): SEQUENCE OF Data.
    pub const ARRAY: u8 = 0xa1;
    /// structure `[2]` (constructed): SEQUENCE OF Data.
    pub const STRUCTURE: u8 = 0xa2;
    /// boolean `[3]`.
    pub const BOOLEAN: u8 = 0x83;
    /// bit-string `[4]`: unused-bits octet, then the bits.
    pub const BIT_STRING: u8 = 0x84;
    /// integer `[5]`: two's complement, minimal octets.
    pub const INTEGER: u8 = 0x85;
    /// unsigned `[6]`: non-negative integer, minimal octets.
    pub const UNSIGNED: u8 = 0x86;
    /// floating-point `[7]`: exponent-width octet, then IEEE 754 big-endian.
    pub const FLOATING_POINT: u8 = 0x87;
    /// real `[8]` (ISO 9506-2:1990; reserved since ISO 9506-2:2003): ASN.1 REAL (X.690 8.5).
    pub const REAL: u8 = 0x88;
    /// octet-string `[9]`.
    pub const OCTET_STRING: u8 = 0x89;
    /// visible-string `[10]`.
    pub const VISIBLE_STRING: u8 = 0x8a;
    /// generalized-time `[11]`: ASN.1 GeneralizedTime (X.680 46), VisibleString characters.
    pub const GENERALIZED_TIME: u8 = 0x8b;
    /// binary-time `[12]`: TimeOfDay, 4 or 6 octets.
    pub const BINARY_TIME: u8 = 0x8c;
    /// bcd `[13]`: the non-negative integer the binary-coded decimal digits stand for.
    pub const BCD: u8 = 0x8d;
    /// booleanArray `[14]`: a BIT STRING, one bit per boolean.
    pub const BOOLEAN_ARRAY: u8 = 0x8e;
    /// objId `[15]`: OBJECT IDENTIFIER contents (X.690 8.19).
    pub const OBJ_ID: u8 = 0x8f;
    /// mMSString `[16]`: `MMSString ::= UTF8String` (IEC 61850-8-1 Unicode255).
    pub const MMS_STRING: u8 = 0x90;
    /// utc-time `[17]`: IEC 61850-8-1 UtcTime, 8 octets.
    pub const UTC_TIME: u8 = 0x91;
}

/// ISO 9506-2 FloatingPoint: the first octet is the exponent width, 8 for IEEE 754 single
/// precision and 11 for double (IEC 61850-8-1 clause 8.1.3.x, FLOAT32/FLOAT64).
const FLOAT32_EXPONENT_WIDTH: u8 = 8;
const FLOAT64_EXPONENT_WIDTH: u8 = 11;

/// One MMS `Data` value.
///
/// Equality compares floating-point values by their bits, so that a NaN equals itself and
/// `parse(emit(d)) == d` holds for every value: two `Data` are equal when they encode alike.
#[derive(Debug, Clone)]
pub enum Data {
    /// `array [1] SEQUENCE OF Data`.
    Array(Vec<Data>),
    /// `structure [2] SEQUENCE OF Data`.
    Structure(Vec<Data>),
    /// `boolean [3] BOOLEAN`.
    Boolean(bool),
    /// `bit-string [4] BIT STRING`: number of unused bits in the last octet, then the octets
    /// (X.690 8.6.2). Padding bits are kept as received.
    BitString {
        /// Unused bits in the last octet (0..=7; 0 when `bytes` is empty).
        unused_bits: u8,
        /// The bits, first bit in the most significant position.
        bytes: Vec<u8>,
    },
    /// `integer [5] INTEGER`.
    Integer(i64),
    /// `unsigned [6] INTEGER` (non-negative).
    Unsigned(u64),
    /// `floating-point [7]` with exponent width 8.
    FloatingPoint32(f32),
    /// `floating-point [7]` with exponent width 11.
    FloatingPoint64(f64),
    /// `real [8] REAL` (ISO 9506-2:1990, reserved since 2003): the X.690 §8.5 contents octets
    /// as received, so that the element always re-encodes alike; [`real_value`] reads the
    /// number (binary, decimal or special encodings).
    Real(Vec<u8>),
    /// `octet-string [9] OCTET STRING`.
    OctetString(Vec<u8>),
    /// `visible-string [10] VisibleString`.
    VisibleString(String),
    /// `generalized-time [11] GeneralizedTime`: the string as sent (`YYYYMMDDHHMMSS[.f][Z]`,
    /// X.680 46); only its character set (VisibleString) is checked.
    GeneralizedTime(String),
    /// `binary-time [12] TimeOfDay`: 4 octets (ms since midnight) or 6 (plus days since 1984).
    BinaryTime(Vec<u8>),
    /// `bcd [13] INTEGER`: the value of the decimal digits, never negative (ISO 9506-1 gives
    /// its range as 0 to 10^digits - 1).
    Bcd(u64),
    /// `booleanArray [14] BIT STRING`: one bit per boolean, first in the most significant bit.
    BooleanArray {
        /// Unused bits in the last octet (0..=7; 0 when `bytes` is empty).
        unused_bits: u8,
        /// The bits.
        bytes: Vec<u8>,
    },
    /// `objId [15] OBJECT IDENTIFIER`: the contents octets (X.690 8.19), complete
    /// subidentifiers in minimal form.
    ObjId(Vec<u8>),
    /// `mMSString [16] MMSString` (`UTF8String`): IEC 61850's Unicode255 (8-1 clause 8.1.3.3).
    MmsString(String),
    /// `utc-time [17] UtcTime`: seconds (4), fraction (3), quality (1), IEC 61850-8-1 8.1.3.7.
    UtcTime([u8; 8]),
}

impl PartialEq for Data {
    fn eq(&self, other: &Self) -> bool {
        use Data::*;
        match (self, other) {
            (Array(a), Array(b)) | (Structure(a), Structure(b)) => a == b,
            (Boolean(a), Boolean(b)) => a == b,
            (
                BitString {
                    unused_bits: ua,
                    bytes: ba,
                },
                BitString {
                    unused_bits: ub,
                    bytes: bb,
                },
            ) => ua == ub && ba == bb,
            (
                BooleanArray {
                    unused_bits: ua,
                    bytes: ba,
                },
                BooleanArray {
                    unused_bits: ub,
                    bytes: bb,
                },
            ) => ua == ub && ba == bb,
            (Integer(a), Integer(b)) => a == b,
            (Bcd(a), Bcd(b)) => a == b,
            (Unsigned(a), Unsigned(b)) => a == b,
            (FloatingPoint32(a), FloatingPoint32(b)) => a.to_bits() == b.to_bits(),
            (FloatingPoint64(a), FloatingPoint64(b)) => a.to_bits() == b.to_bits(),
            (OctetString(a), OctetString(b))
            | (Real(a), Real(b))
            | (BinaryTime(a), BinaryTime(b))
            | (ObjId(a), ObjId(b)) => a == b,
            (VisibleString(a), VisibleString(b))
            | (GeneralizedTime(a), GeneralizedTime(b))
            | (MmsString(a), MmsString(b)) => a == b,
            (UtcTime(a), UtcTime(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Data {}

impl Data {
    /// Parse exactly one `Data` element; bytes after it are an error.
    pub fn parse(bytes: &[u8]) -> Result<Data> {
        let mut r = Reader::new(bytes);
        let d = Data::decode(&mut r, 0)?;
        r.expect_end("Data")?;
        Ok(d)
    }

    /// Parse a `SEQUENCE OF Data` body (the contents of GOOSE allData or of an array).
    pub fn parse_seq(bytes: &[u8]) -> Result<Vec<Data>> {
        Data::decode_seq(&mut Reader::new(bytes), 0)
    }

    /// Decode elements until `r` is exhausted; `depth` is the nesting level of the container.
    pub fn decode_seq(r: &mut Reader<'_>, depth: usize) -> Result<Vec<Data>> {
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Data::decode(r, depth)?);
        }
        Ok(out)
    }

    /// Decode one element from `r` at nesting level `depth`.
    pub fn decode(r: &mut Reader<'_>, depth: usize) -> Result<Data> {
        let t = r.read_tlv("Data")?;
        Ok(match t.tag {
            tag::ARRAY | tag::STRUCTURE => {
                if depth >= MAX_DEPTH {
                    return Err(Error::NestingTooDeep(MAX_DEPTH));
                }
                let items = Data::decode_seq(&mut t.reader(), depth + 1)?;
                if t.tag == tag::ARRAY {
                    Data::Array(items)
                } else {
                    Data::Structure(items)
                }
            }
            other => match Leaf::decode(other, t.value)? {
                Leaf::Boolean(b) => Data::Boolean(b),
                Leaf::BitString { unused_bits, bytes } => Data::BitString {
                    unused_bits,
                    bytes: bytes.to_vec(),
                },
                Leaf::Integer(v) => Data::Integer(v),
                Leaf::Unsigned(v) => Data::Unsigned(v),
                Leaf::FloatingPoint32(v) => Data::FloatingPoint32(v),
                Leaf::FloatingPoint64(v) => Data::FloatingPoint64(v),
                Leaf::OctetString(b) => Data::OctetString(b.to_vec()),
                Leaf::Real(b) => Data::Real(b.to_vec()),
                Leaf::VisibleString(s) => Data::VisibleString(s.to_owned()),
                Leaf::GeneralizedTime(s) => Data::GeneralizedTime(s.to_owned()),
                Leaf::BinaryTime(b) => Data::BinaryTime(b.to_vec()),
                Leaf::Bcd(v) => Data::Bcd(v),
                Leaf::BooleanArray { unused_bits, bytes } => Data::BooleanArray {
                    unused_bits,
                    bytes: bytes.to_vec(),
                },
                Leaf::ObjId(b) => Data::ObjId(b.to_vec()),
                Leaf::MmsString(s) => Data::MmsString(s.to_owned()),
                Leaf::UtcTime(b) => Data::UtcTime(b),
            },
        })
    }

    /// The identifier octet this value is encoded with.
    pub fn tag(&self) -> u8 {
        match self {
            Data::Array(_) => tag::ARRAY,
            Data::Structure(_) => tag::STRUCTURE,
            Data::Boolean(_) => tag::BOOLEAN,
            Data::BitString { .. } => tag::BIT_STRING,
            Data::Integer(_) => tag::INTEGER,
            Data::Unsigned(_) => tag::UNSIGNED,
            Data::FloatingPoint32(_) | Data::FloatingPoint64(_) => tag::FLOATING_POINT,
            Data::OctetString(_) => tag::OCTET_STRING,
            Data::Real(_) => tag::REAL,
            Data::VisibleString(_) => tag::VISIBLE_STRING,
            Data::GeneralizedTime(_) => tag::GENERALIZED_TIME,
            Data::BinaryTime(_) => tag::BINARY_TIME,
            Data::Bcd(_) => tag::BCD,
            Data::BooleanArray { .. } => tag::BOOLEAN_ARRAY,
            Data::ObjId(_) => tag::OBJ_ID,
            Data::MmsString(_) => tag::MMS_STRING,
            Data::UtcTime(_) => tag::UTC_TIME,
        }
    }

    /// Length of the contents octets.
    pub fn content_len(&self) -> usize {
        match self {
            Data::Array(items) | Data::Structure(items) => seq_len(items),
            Data::Boolean(_) => 1,
            Data::BitString { bytes, .. } | Data::BooleanArray { bytes, .. } => 1 + bytes.len(),
            Data::Integer(v) => ber::encode_i64(*v).len(),
            Data::Unsigned(v) | Data::Bcd(v) => ber::encode_u64(*v).len(),
            Data::FloatingPoint32(_) => 5,
            Data::FloatingPoint64(_) => 9,
            Data::OctetString(b) | Data::Real(b) | Data::BinaryTime(b) | Data::ObjId(b) => b.len(),
            Data::VisibleString(s) | Data::GeneralizedTime(s) | Data::MmsString(s) => s.len(),
            Data::UtcTime(_) => 8,
        }
    }

    /// Check that this value can be emitted such that it parses back to itself: strings are
    /// visible, bit-string unused bits are valid, binary times have 4 or 6 octets, object
    /// identifiers are well formed, nesting is within [`MAX_DEPTH`].
    pub fn validate(&self) -> Result<()> {
        self.validate_at(0)
    }

    fn validate_at(&self, depth: usize) -> Result<()> {
        match self {
            Data::Array(items) | Data::Structure(items) => {
                if depth >= MAX_DEPTH {
                    return Err(Error::NestingTooDeep(MAX_DEPTH));
                }
                items.iter().try_for_each(|d| d.validate_at(depth + 1))
            }
            Data::BitString { unused_bits, bytes } => {
                check_unused_bits(*unused_bits, bytes, "Data bit-string")
            }
            Data::BooleanArray { unused_bits, bytes } => {
                check_unused_bits(*unused_bits, bytes, "Data booleanArray")
            }
            Data::VisibleString(s) if !ber::is_visible(s) => Err(Error::BadValue {
                what: "Data visible-string",
                detail: "character outside VisibleString",
            }),
            Data::GeneralizedTime(s) if !ber::is_visible(s) => Err(Error::BadValue {
                what: "Data generalized-time",
                detail: "character outside VisibleString",
            }),
            Data::ObjId(b) => check_obj_id(b),
            Data::BinaryTime(b) if b.len() != 4 && b.len() != 6 => Err(Error::BadLength {
                what: "Data binary-time",
                value: b.len(),
            }),
            _ => Ok(()),
        }
    }
}

impl Data {
    /// The one encoder of a `Data` element (ISO 9506-2 `Data`, IEC 61850-8-1 8.1.3), for
    /// every [`Sink`]: [`Codec::emit`] runs it on a [`SliceSink`], [`Codec::emit_vec`] on
    /// the vector. The header's length is [`Data::content_len`], the same closed form
    /// [`Codec::buffer_len`] adds up, so that sizing does not encode.
    pub fn encode<S: Sink + ?Sized>(&self, out: &mut S) {
        out.header(self.tag(), self.content_len());
        match self {
            Data::Array(items) | Data::Structure(items) => encode_seq(items, out),
            Data::Boolean(b) => out.bytes(&[ber::encode_bool(*b)]),
            Data::BitString { unused_bits, bytes } | Data::BooleanArray { unused_bits, bytes } => {
                out.bytes(&[*unused_bits]);
                out.bytes(bytes);
            }
            Data::Integer(v) => out.bytes(ber::encode_i64(*v).as_ref()),
            Data::Unsigned(v) | Data::Bcd(v) => out.bytes(ber::encode_u64(*v).as_ref()),
            Data::FloatingPoint32(f) => {
                out.bytes(&[FLOAT32_EXPONENT_WIDTH]);
                out.bytes(&f.to_be_bytes());
            }
            Data::FloatingPoint64(f) => {
                out.bytes(&[FLOAT64_EXPONENT_WIDTH]);
                out.bytes(&f.to_be_bytes());
            }
            Data::OctetString(b) | Data::Real(b) | Data::BinaryTime(b) | Data::ObjId(b) => {
                out.bytes(b)
            }
            Data::VisibleString(s) | Data::GeneralizedTime(s) | Data::MmsString(s) => {
                out.bytes(s.as_bytes())
            }
            Data::UtcTime(b) => out.bytes(b),
        }
    }
}

impl Codec for Data {
    /// Size of the whole encoded element.
    fn buffer_len(&self) -> usize {
        ber::tlv_len(self.content_len())
    }

    fn emit(&self, buf: &mut [u8]) -> usize {
        let mut w = SliceSink::new(buf);
        self.encode(&mut w);
        w.pos
    }

    fn emit_vec(&self, out: &mut Vec<u8>) {
        self.encode(out);
    }
}

/// A `Data` value that is not a container, borrowing its octets: what [`Data::decode`] and
/// [`check_seq`] both read, so that the checker without allocation accepts exactly what the
/// decoder accepts.
enum Leaf<'a> {
    Boolean(bool),
    BitString { unused_bits: u8, bytes: &'a [u8] },
    Integer(i64),
    Unsigned(u64),
    FloatingPoint32(f32),
    FloatingPoint64(f64),
    OctetString(&'a [u8]),
    Real(&'a [u8]),
    VisibleString(&'a str),
    GeneralizedTime(&'a str),
    BinaryTime(&'a [u8]),
    Bcd(u64),
    BooleanArray { unused_bits: u8, bytes: &'a [u8] },
    ObjId(&'a [u8]),
    MmsString(&'a str),
    UtcTime([u8; 8]),
}

impl<'a> Leaf<'a> {
    /// Decode the contents `v` of a non-container element with identifier `tag`.
    fn decode(tag: u8, v: &'a [u8]) -> Result<Leaf<'a>> {
        Ok(match tag {
            tag::BOOLEAN => Leaf::Boolean(ber::decode_bool(v, "Data boolean")?),
            tag::BIT_STRING => {
                let (unused_bits, bytes) = bit_string(v, "Data bit-string")?;
                Leaf::BitString { unused_bits, bytes }
            }
            tag::BOOLEAN_ARRAY => {
                let (unused_bits, bytes) = bit_string(v, "Data booleanArray")?;
                Leaf::BooleanArray { unused_bits, bytes }
            }
            tag::INTEGER => Leaf::Integer(ber::decode_i64(v, "Data integer")?),
            tag::UNSIGNED => Leaf::Unsigned(ber::decode_u64(v, "Data unsigned")?),
            tag::FLOATING_POINT => match v {
                [FLOAT32_EXPONENT_WIDTH, a, b, c, d] => {
                    Leaf::FloatingPoint32(f32::from_be_bytes([*a, *b, *c, *d]))
                }
                [FLOAT64_EXPONENT_WIDTH, rest @ ..] if rest.len() == 8 => {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(rest);
                    Leaf::FloatingPoint64(f64::from_be_bytes(b))
                }
                _ => {
                    return Err(Error::BadValue {
                        what: "Data floating-point",
                        detail: "not IEEE 754 single (8, 4 octets) or double (11, 8 octets)",
                    })
                }
            },
            tag::OCTET_STRING => Leaf::OctetString(v),
            tag::REAL => Leaf::Real(v),
            tag::VISIBLE_STRING => Leaf::VisibleString(ber::visible_str(v, "Data visible-string")?),
            tag::GENERALIZED_TIME => {
                Leaf::GeneralizedTime(ber::visible_str(v, "Data generalized-time")?)
            }
            tag::BCD => Leaf::Bcd(ber::decode_u64(v, "Data bcd")?),
            tag::OBJ_ID => {
                check_obj_id(v)?;
                Leaf::ObjId(v)
            }
            tag::MMS_STRING => {
                Leaf::MmsString(core::str::from_utf8(v).map_err(|_| Error::BadValue {
                    what: "Data mMSString",
                    detail: "not UTF-8",
                })?)
            }
            tag::BINARY_TIME => match v.len() {
                4 | 6 => Leaf::BinaryTime(v),
                n => {
                    return Err(Error::BadLength {
                        what: "Data binary-time",
                        value: n,
                    })
                }
            },
            tag::UTC_TIME => {
                let b: [u8; 8] = v.try_into().map_err(|_| Error::BadLength {
                    what: "Data utc-time",
                    value: v.len(),
                })?;
                Leaf::UtcTime(b)
            }
            // [1] array and [2] structure are SEQUENCE OF / SEQUENCE: constructed (X.690
            // 8.10.1, 8.12.1). In primitive form (kit-dsn/zeek-goose-analyzer's
            // `all_arrays.pcap` sends 0x81) they are no Data; tshark, which ignores the form
            // bit, reads them as arrays, libiec61850's subscriber refuses them as gander does.
            0x81 | 0x82 => {
                return Err(Error::BadValue {
                    what: "Data",
                    detail: "array [1] or structure [2] in primitive form (0x81/0x82): they are constructed (0xa1/0xa2, X.690 8.10.1)",
                })
            }
            other => {
                return Err(Error::UnknownTag {
                    what: "Data",
                    tag: other,
                })
            }
        })
    }
}

/// The number a `real [8]` element's contents octets encode (X.690 §8.5): empty is zero;
/// first octet 1xxxxxxx binary (sign, base 2/8/16, scale factor F, exponent length, two's
/// complement exponent, unsigned mantissa N: ±N·2^F·base^E); 01xxxxxx special (0x40 +∞, 0x41
/// −∞, 0x42 NaN, 0x43 −0); 00xxxxxx decimal, ISO 6093 NR1/NR2/NR3 characters.
///
/// # Errors
/// [`Error::BadValue`] for a reserved base or special value, a decimal form that is not NR1-3
/// or does not read as a number, or a missing exponent or mantissa.
pub fn real_value(v: &[u8]) -> Result<f64> {
    let bad = |detail| Error::BadValue {
        what: "Data real",
        detail,
    };
    let Some((&first, rest)) = v.split_first() else {
        return Ok(0.0);
    };
    if first & 0x80 != 0 {
        let sign = if first & 0x40 != 0 { -1.0 } else { 1.0 };
        let log2_base = match (first >> 4) & 3 {
            0 => 1,
            1 => 3,
            2 => 4,
            _ => return Err(bad("reserved base")),
        };
        let scale = i64::from((first >> 2) & 3);
        let (elen, rest) = match first & 3 {
            3 => {
                let (&n, r) = rest.split_first().ok_or(bad("missing exponent length"))?;
                (n as usize, r)
            }
            n => (n as usize + 1, rest),
        };
        if elen == 0 || elen > 8 || rest.len() <= elen {
            return Err(bad("exponent or mantissa missing or too long"));
        }
        let (e, n) = rest.split_at(elen);
        let mut exp: i64 = if e[0] & 0x80 != 0 { -1 } else { 0 };
        for &b in e {
            exp = (exp << 8) | i64::from(b);
        }
        let mantissa = n.iter().fold(0.0f64, |m, &b| m * 256.0 + f64::from(b));
        let bits = exp.saturating_mul(log2_base).saturating_add(scale);
        let bits = bits.clamp(-4000, 4000) as i32;
        // Two steps, so that a large mantissa with a very negative exponent is not lost to an
        // intermediate underflow.
        let half = bits / 2;
        return Ok(sign * mantissa * 2f64.powi(half) * 2f64.powi(bits - half));
    }
    if first & 0x40 != 0 {
        return match first {
            0x40 => Ok(f64::INFINITY),
            0x41 => Ok(f64::NEG_INFINITY),
            0x42 => Ok(f64::NAN),
            0x43 => Ok(-0.0),
            _ => Err(bad("reserved special value")),
        };
    }
    if !(1..=3).contains(&(first & 0x3f)) {
        return Err(bad("decimal encoding other than NR1, NR2, NR3"));
    }
    let text = core::str::from_utf8(rest).map_err(|_| bad("decimal form is not text"))?;
    text.trim_matches(' ')
        .replace(',', ".")
        .parse::<f64>()
        .map_err(|_| bad("decimal form is not a number"))
}

/// Splits a BIT STRING's contents into the unused-bits octet and the bits, checking X.690
/// 8.6.2.2/8.6.2.3: 0..=7 unused bits, and none if there are no octets.
fn bit_string<'a>(v: &'a [u8], what: &'static str) -> Result<(u8, &'a [u8])> {
    let (&unused_bits, bytes) = v.split_first().ok_or(Error::BadLength { what, value: 0 })?;
    check_unused_bits(unused_bits, bytes, what)?;
    Ok((unused_bits, bytes))
}

fn check_unused_bits(unused_bits: u8, bytes: &[u8], what: &'static str) -> Result<()> {
    if unused_bits > 7 || (bytes.is_empty() && unused_bits != 0) {
        return Err(Error::BadValue {
            what,
            detail: "bad number of unused bits",
        });
    }
    Ok(())
}

/// OBJECT IDENTIFIER contents (X.690 8.19.2): at least one subidentifier, each in the fewest
/// octets (no leading 0x80) and ending in an octet with bit 8 clear.
fn check_obj_id(v: &[u8]) -> Result<()> {
    let bad = |detail| {
        Err(Error::BadValue {
            what: "Data objId",
            detail,
        })
    };
    if !matches!(v.last(), Some(b) if b & 0x80 == 0) {
        return bad("empty or last subidentifier unterminated");
    }
    let mut start = true;
    for &b in v {
        if start && b == 0x80 {
            return bad("subidentifier not in its fewest octets");
        }
        start = b & 0x80 == 0;
    }
    Ok(())
}

/// Checks a `SEQUENCE OF Data` body (GOOSE allData, an array's contents) exactly as
/// [`Data::parse_seq`] would, with the same error for the same input, but without building
/// the values: the layer-2 verify path needs the APDU well formed, not decoded.
///
/// The common values are checked first by `data_scan::accepts`, which allocates no error per
/// element; anything it does not vouch for is judged here.
pub fn check_seq(bytes: &[u8]) -> Result<()> {
    if crate::data_scan::accepts(bytes) {
        return Ok(());
    }
    check_in(&mut Reader::new(bytes), 0)
}

fn check_in(r: &mut Reader<'_>, depth: usize) -> Result<()> {
    while !r.is_empty() {
        let t = r.read_tlv("Data")?;
        match t.tag {
            tag::ARRAY | tag::STRUCTURE => {
                if depth >= MAX_DEPTH {
                    return Err(Error::NestingTooDeep(MAX_DEPTH));
                }
                check_in(&mut t.reader(), depth + 1)?;
            }
            other => {
                Leaf::decode(other, t.value)?;
            }
        }
    }
    Ok(())
}

/// Total encoded size of a `SEQUENCE OF Data` body.
pub fn seq_len(items: &[Data]) -> usize {
    items.iter().map(Data::buffer_len).sum()
}

/// Write the encodings of `items` (a `SEQUENCE OF Data` body, [`seq_len`] octets).
pub fn encode_seq<S: Sink + ?Sized>(items: &[Data], out: &mut S) {
    items.iter().for_each(|d| d.encode(out));
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Arbitrary `Data` values that are valid to emit, nested at most four levels.
    pub(crate) fn arb_data() -> impl Strategy<Value = Data> {
        let leaf = prop_oneof![
            any::<bool>().prop_map(Data::Boolean),
            (0u8..8, proptest::collection::vec(any::<u8>(), 1..6))
                .prop_map(|(unused_bits, bytes)| Data::BitString { unused_bits, bytes }),
            Just(Data::BitString {
                unused_bits: 0,
                bytes: vec![]
            }),
            any::<i64>().prop_map(Data::Integer),
            any::<u64>().prop_map(Data::Unsigned),
            any::<u32>().prop_map(|b| Data::FloatingPoint32(f32::from_bits(b))),
            any::<u64>().prop_map(|b| Data::FloatingPoint64(f64::from_bits(b))),
            proptest::collection::vec(any::<u8>(), 0..20).prop_map(Data::OctetString),
            proptest::collection::vec(any::<u8>(), 0..12).prop_map(Data::Real),
            "[ -~]{0,40}".prop_map(Data::VisibleString),
            proptest::collection::vec(any::<u8>(), 4..=4).prop_map(Data::BinaryTime),
            proptest::collection::vec(any::<u8>(), 6..=6).prop_map(Data::BinaryTime),
            any::<[u8; 8]>().prop_map(Data::UtcTime),
            "[0-9]{14}(\\.[0-9]{1,3})?Z?".prop_map(Data::GeneralizedTime),
            any::<u64>().prop_map(Data::Bcd),
            (0u8..8, proptest::collection::vec(any::<u8>(), 1..6))
                .prop_map(|(unused_bits, bytes)| Data::BooleanArray { unused_bits, bytes }),
            proptest::collection::vec(any::<u32>(), 1..6).prop_map(|arcs| Data::ObjId(oid(&arcs))),
            any::<String>().prop_map(Data::MmsString),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Data::Array),
                proptest::collection::vec(inner, 0..6).prop_map(Data::Structure),
            ]
        })
    }

    /// OBJECT IDENTIFIER contents of `arcs` taken as subidentifiers (X.690 8.19.2).
    pub(crate) fn oid(arcs: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        for &a in arcs {
            let mut groups = vec![(a & 0x7f) as u8];
            let mut v = a >> 7;
            while v != 0 {
                groups.push((v & 0x7f) as u8 | 0x80);
                v >>= 7;
            }
            out.extend(groups.iter().rev());
        }
        out
    }

    /// kit-dsn/zeek-goose-analyzer's test traces: an integer in nine octets whose first only
    /// repeats the sign is 42, as tshark reads it; an array in primitive form is refused with
    /// the reason, as libiec61850's subscriber refuses it (unknown tag).
    #[test]
    fn long_integers_that_fit_and_primitive_arrays() {
        let nine = [0x85, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0x2a];
        assert_eq!(Data::parse(&nine), Ok(Data::Integer(42)));
        assert_eq!(check_seq(&nine), Ok(()));
        for primitive in [[0x81, 0x00], [0x82, 0x00]] {
            let e = Data::parse(&primitive).unwrap_err().to_string();
            assert!(e.contains("primitive form"), "{e}");
            assert!(check_seq(&primitive).is_err());
        }
    }

    #[test]
    fn known_encodings_of_the_other_alternatives() {
        // ISO 9506-2 Data [11], [13], [14], [15], [16]; hand-assembled from X.690.
        let cases: Vec<(&str, Data)> = vec![
            (
                // dU "Ω" in UTF-8 (CE A9), as IEC 61850-8-1 sends a Unicode255.
                "9002cea9",
                Data::MmsString("\u{3a9}".into()),
            ),
            ("9000", Data::MmsString(String::new())),
            (
                "8b0f32303236313132363132303030305a",
                Data::GeneralizedTime("20261126120000Z".into()),
            ),
            ("8d020400", Data::Bcd(1024)),
            (
                "8e0205a0",
                Data::BooleanArray {
                    unused_bits: 5,
                    bytes: vec![0xa0],
                },
            ),
            // 1.0.9506.2.1, the MMS abstract syntax (first two arcs combined: 40).
            (
                "8f0528ca220201",
                Data::ObjId(vec![0x28, 0xca, 0x22, 0x02, 0x01]),
            ),
        ];
        for (h, d) in cases {
            let b = hex::decode(h).unwrap();
            assert_eq!(Data::parse(&b).unwrap(), d, "{h}");
            assert_eq!(d.to_vec(), b, "{h}");
            assert_eq!(check_seq(&b), Ok(()));
            assert!(d.validate().is_ok());
        }
        let bad: &[(&str, Error)] = &[
            (
                "9002c328",
                Error::BadValue {
                    what: "Data mMSString",
                    detail: "not UTF-8",
                },
            ),
            (
                "8f0228ca",
                Error::BadValue {
                    what: "Data objId",
                    detail: "empty or last subidentifier unterminated",
                },
            ),
            (
                "8f00",
                Error::BadValue {
                    what: "Data objId",
                    detail: "empty or last subidentifier unterminated",
                },
            ),
            (
                "8f028001",
                Error::BadValue {
                    what: "Data objId",
                    detail: "subidentifier not in its fewest octets",
                },
            ),
            (
                "8e0108",
                Error::BadValue {
                    what: "Data booleanArray",
                    detail: "bad number of unused bits",
                },
            ),
            (
                "8b01ff",
                Error::BadValue {
                    what: "Data generalized-time",
                    detail: "character outside VisibleString",
                },
            ),
            (
                "8d01ff",
                Error::BadValue {
                    what: "Data bcd",
                    detail: "negative value for an unsigned integer",
                },
            ),
            // [18] is no alternative of Data: a typed error.
            (
                "920100",
                Error::UnknownTag {
                    what: "Data",
                    tag: 0x92,
                },
            ),
        ];
        for (h, e) in bad {
            let b = hex::decode(h).unwrap();
            assert_eq!(Data::parse(&b).as_ref(), Err(e), "{h}");
            assert_eq!(check_seq(&b).as_ref(), Err(e), "{h}");
        }
        assert!(Data::ObjId(vec![0x80, 0x01]).validate().is_err());
        assert!(Data::GeneralizedTime("\u{e9}".into()).validate().is_err());
    }

    /// The allData of a GE F650 GOOSE (haolipeng/icsnpp-iec61850-goose,
    /// testing/Traces/GOOSE_all_data_primitives_fallbacks.pcap, 12 elements) holds `real [8]`
    /// twice, `88 01 00`, which refused the whole APDU before. Wireshark shows the 12 elements.
    #[test]
    fn real_and_the_other_1990_alternatives_of_a_field_goose() {
        let all = hex::decode(
            "830101840207808501ff860201f48705083f800000\
             8903deadbe8a024f4b8801008d01128e0207808f022b0190014d",
        )
        .unwrap();
        let d = Data::parse_seq(&all).unwrap();
        assert_eq!(d.len(), 12);
        assert_eq!(d[7], Data::Real(vec![0]));
        assert_eq!(d[8], Data::Bcd(0x12));
        assert_eq!(d[11], Data::MmsString("M".into()));
        assert!(check_seq(&all).is_ok());
    }

    #[test]
    fn real_values_x690() {
        assert_eq!(real_value(&[]).unwrap(), 0.0);
        // Binary, base 2: 0x80, exponent 0, mantissa 1 → 1.0; exponent -1, mantissa 3 → 1.5.
        assert_eq!(real_value(&[0x80, 0x00, 0x01]).unwrap(), 1.0);
        assert_eq!(real_value(&[0x80, 0xff, 0x03]).unwrap(), 1.5);
        // Negative, base 16, scale factor 1: -(5 * 2 * 16^1) = -160.
        assert_eq!(real_value(&[0xe4, 0x01, 0x05]).unwrap(), -160.0);
        // Long exponent form (length octet).
        assert_eq!(real_value(&[0x83, 0x01, 0x02, 0x01]).unwrap(), 4.0);
        assert_eq!(real_value(&[0x40]).unwrap(), f64::INFINITY);
        assert!(real_value(&[0x42]).unwrap().is_nan());
        assert!(real_value(&[0x43]).unwrap().is_sign_negative());
        // Decimal NR3 with a comma.
        assert_eq!(real_value(b"\x03-12,5E1").unwrap(), -125.0);
        for bad in [
            &[0x00][..],
            &[0x44],
            &[0xb0, 0, 1],
            &[0x80, 0x00],
            &[0x83],
            &[0x02, b'x'],
        ] {
            assert!(real_value(bad).is_err(), "{bad:02x?}");
        }
        // Extreme exponents saturate instead of overflowing.
        assert_eq!(
            real_value(&[0x81, 0x7f, 0xff, 0x01]).unwrap(),
            f64::INFINITY
        );
        assert_eq!(real_value(&[0x81, 0x80, 0x00, 0x01]).unwrap(), 0.0);
    }

    #[test]
    fn known_encodings() {
        // allData of libiec61850's R-GOOSE sample `lib-mode0-none` (gander-sec golden_frames.txt).
        let all = hex::decode("850204d2830101").unwrap();
        let v = Data::parse_seq(&all).unwrap();
        assert_eq!(v, vec![Data::Integer(1234), Data::Boolean(true)]);
        let mut out = vec![0; seq_len(&v)];
        let mut w = SliceSink::new(&mut out);
        encode_seq(&v, &mut w);
        assert_eq!(w.pos, all.len());
        assert_eq!(out, all);

        // Quality bit-string (13 bits, 3 unused), FLOAT32 1.5, FLOAT64 -2.0, time, structure.
        let s = hex::decode(
            "a2 27 8403030000 870508 3fc00000 87090bc000000000000000 8c0400000001 9108 0102030405060708"
                .replace(' ', ""),
        )
        .unwrap();
        let d = Data::parse(&s).unwrap();
        assert_eq!(
            d,
            Data::Structure(vec![
                Data::BitString {
                    unused_bits: 3,
                    bytes: vec![0, 0]
                },
                Data::FloatingPoint32(1.5),
                Data::FloatingPoint64(-2.0),
                Data::BinaryTime(vec![0, 0, 0, 1]),
                Data::UtcTime([1, 2, 3, 4, 5, 6, 7, 8]),
            ])
        );
        assert_eq!(d.to_vec(), s);
        assert_eq!(d.buffer_len(), s.len());
    }

    #[test]
    fn rejects_malformed() {
        let cases: &[(&str, Error)] = &[
            (
                "8500",
                Error::BadLength {
                    what: "Data integer",
                    value: 0,
                },
            ),
            (
                "830200ff",
                Error::BadLength {
                    what: "Data boolean",
                    value: 2,
                },
            ),
            (
                "840108",
                Error::BadValue {
                    what: "Data bit-string",
                    detail: "bad number of unused bits",
                },
            ),
            (
                "840101",
                Error::BadValue {
                    what: "Data bit-string",
                    detail: "bad number of unused bits",
                },
            ),
            (
                "8c03000000",
                Error::BadLength {
                    what: "Data binary-time",
                    value: 3,
                },
            ),
            (
                "910100",
                Error::BadLength {
                    what: "Data utc-time",
                    value: 1,
                },
            ),
            (
                "8a0141ff",
                Error::TrailingBytes {
                    what: "Data",
                    count: 1,
                },
            ),
            (
                "8a02417f",
                Error::BadValue {
                    what: "Data visible-string",
                    detail: "character outside VisibleString",
                },
            ),
            (
                "9201ff",
                Error::UnknownTag {
                    what: "Data",
                    tag: 0x92,
                },
            ),
            (
                "860180",
                Error::BadValue {
                    what: "Data unsigned",
                    detail: "negative value for an unsigned integer",
                },
            ),
        ];
        for (h, e) in cases {
            assert_eq!(
                Data::parse(&hex::decode(h).unwrap()).as_ref(),
                Err(e),
                "{h}"
            );
        }
        assert!(matches!(
            Data::parse(&hex::decode("870409000000").unwrap()),
            Err(Error::BadValue { .. })
        ));
    }

    #[test]
    fn nesting_limit() {
        let mut d = Data::Boolean(true);
        for _ in 0..MAX_DEPTH {
            d = Data::Array(vec![d]);
        }
        assert_eq!(Data::parse(&d.to_vec()).unwrap(), d);
        assert_eq!(check_seq(&d.to_vec()), Ok(()));
        let deeper = Data::Structure(vec![d]);
        assert_eq!(deeper.validate(), Err(Error::NestingTooDeep(MAX_DEPTH)));
        assert_eq!(
            Data::parse(&deeper.to_vec()),
            Err(Error::NestingTooDeep(MAX_DEPTH))
        );
        assert_eq!(
            check_seq(&deeper.to_vec()),
            Err(Error::NestingTooDeep(MAX_DEPTH))
        );
    }

    #[test]
    fn emit_fills_exactly() {
        let d = Data::Structure(vec![Data::Integer(-1), Data::VisibleString("x".into())]);
        let mut buf = vec![0xa5; d.buffer_len() + 2];
        assert_eq!(d.emit(&mut buf), d.buffer_len());
        assert_eq!(&buf[d.buffer_len()..], &[0xa5, 0xa5]);
        assert_eq!(Data::parse(&buf[..d.buffer_len()]).unwrap(), d);
    }

    #[test]
    fn nan_equals_itself() {
        let n = Data::FloatingPoint64(f64::NAN);
        assert_eq!(Data::parse(&n.to_vec()).unwrap(), n);
        assert_ne!(Data::FloatingPoint32(0.0), Data::FloatingPoint32(-0.0));
    }

    proptest! {
        /// The one encoder gives the same octets on the Vec, Counter and Slice sinks, and
        /// `buffer_len`'s closed form is what it counts.
        #[test]
        fn sinks_agree(d in arb_data(), items in proptest::collection::vec(arb_data(), 0..4)) {
            prop_assert!(crate::ber_sink::check_codec_agrees(&d, |o| d.encode(o)).is_ok());
            let seq = crate::ber_sink::check_sinks_agree(|o| encode_seq(&items, o));
            prop_assert_eq!(seq.map(|v| v.len()), Ok(seq_len(&items)));
        }

        #[test]
        fn parse_emit_round_trip(d in arb_data()) {
            prop_assert!(d.validate().is_ok());
            let bytes = d.to_vec();
            prop_assert_eq!(bytes.len(), d.buffer_len());
            prop_assert_eq!(Data::parse(&bytes).unwrap(), d);
        }

        #[test]
        fn emit_parse_canonical(data in proptest::collection::vec(any::<u8>(), 0..48)) {
            // Whatever parses and is canonical re-emits identically; anything else is an error.
            if let Ok(d) = Data::parse(&data) {
                let again = d.to_vec();
                prop_assert_eq!(Data::parse(&again).unwrap(), d);
            }
        }

        #[test]
        /// The checker without allocation agrees with the decoder, error for error, on valid
        /// sequences, on sequences with one octet changed and on arbitrary bytes.
        fn check_seq_agrees_with_parse_seq(
            items in proptest::collection::vec(arb_data(), 0..4),
            flip in any::<prop::sample::Index>(), x: u8,
            noise in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut b = Vec::new();
            for d in &items {
                b.extend_from_slice(&d.to_vec());
            }
            prop_assert_eq!(check_seq(&b), Data::parse_seq(&b).map(|_| ()));
            if !b.is_empty() {
                let i = flip.index(b.len());
                b[i] ^= x;
                prop_assert_eq!(check_seq(&b), Data::parse_seq(&b).map(|_| ()));
            }
            prop_assert_eq!(check_seq(&noise), Data::parse_seq(&noise).map(|_| ()));
        }

        #[test]
        /// The fast path (`data_scan::accepts`) vouches only for what the general checker
        /// accepts, on valid sequences, one octet changed and arbitrary bytes; and it takes
        /// every valid sequence of the values it knows.
        fn check_seq_fast_path_agrees(
            items in proptest::collection::vec(arb_data(), 0..4),
            flip in any::<prop::sample::Index>(), x: u8,
            noise in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let general = |b: &[u8]| check_in(&mut Reader::new(b), 0);
            let mut b = Vec::new();
            for d in &items {
                b.extend_from_slice(&d.to_vec());
            }
            fn common(d: &Data) -> bool {
                match d {
                    Data::Array(v) | Data::Structure(v) => v.iter().all(common),
                    Data::Real(_) | Data::GeneralizedTime(_) | Data::Bcd(_) | Data::ObjId(_)
                    | Data::MmsString(_) => false,
                    _ => true,
                }
            }
            let common = items.iter().all(common);
            prop_assert!(general(&b).is_ok());
            if common {
                prop_assert!(crate::data_scan::accepts(&b));
            }
            if !b.is_empty() {
                let i = flip.index(b.len());
                b[i] ^= x;
                if crate::data_scan::accepts(&b) {
                    prop_assert!(general(&b).is_ok());
                }
            }
            if crate::data_scan::accepts(&noise) {
                prop_assert!(general(&noise).is_ok());
            }
        }

        #[test]
        fn no_panic_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = Data::parse(&data);
            let _ = Data::parse_seq(&data);
        }
    }
}
