//! BER tag-length-value reading, integer and string contents, restricted to what IEC 61850
//! needs. Writing is [`crate::ber_sink`] (one writer for every encoder in gander); this module
//! only says how long what it writes is ([`tlv_len`], [`encoded_len_len`]).
//!
//! GOOSE (IEC 61850-8-1 Annex A), SV (IEC 61850-9-2 clause 8.5) and MMS (ISO 9506-2) are all
//! encoded with the Basic Encoding Rules of ITU-T X.690. Their grammars only use tag numbers
//! below 31, so every tag fits in one identifier octet (X.690 8.1.2.2); the high-tag-number
//! form (low five bits all ones, X.690 8.1.2.4) is rejected rather than half-supported.
//! Lengths are always definite (X.690 8.1.3.3/8.1.3.5); the indefinite form (8.1.3.6) and
//! lengths of more than four octets are rejected because no IEC 61850 PDU needs them and a
//! peer could otherwise make us reason about lengths beyond the address space.
//!
//! [`Reader`] borrows its input, never copies, and tracks the absolute offset of every value
//! so that callers can patch fields (sequence numbers, MACs) in place. A bounded sub-reader
//! ([`Reader::sub`], [`Tlv::reader`]) can never read past its parent's limit.

use crate::{Error, Result};
use core::ops::Range;

/// Bit 6 of the identifier octet: the encoding is constructed (X.690 8.1.2.5).
pub const CONSTRUCTED: u8 = 0x20;
/// Class bits of a context-specific tag (X.690 8.1.2.2, Table 1).
pub const CONTEXT: u8 = 0x80;
/// Low five bits all ones: the high-tag-number form follows (X.690 8.1.2.4).
const HIGH_TAG_FORM: u8 = 0x1f;
/// The most length octets we accept after the 0x8n initial octet (X.690 8.1.3.5).
pub const MAX_LENGTH_OCTETS: usize = 4;

/// One tag-length-value element, borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    /// The single identifier octet.
    pub tag: u8,
    /// The contents octets.
    pub value: &'a [u8],
    /// Absolute offset of the identifier octet in the outermost buffer.
    pub offset: usize,
    /// Number of identifier plus length octets.
    pub header_len: usize,
}

impl<'a> Tlv<'a> {
    /// Absolute byte range of the contents octets.
    #[inline]
    pub fn value_range(&self) -> Range<usize> {
        let start = self.offset + self.header_len;
        start..start + self.value.len()
    }

    /// Absolute byte range of the whole element, identifier to last contents octet.
    #[inline]
    pub fn range(&self) -> Range<usize> {
        self.offset..self.offset + self.header_len + self.value.len()
    }

    /// Whether the constructed bit is set (X.690 8.1.2.5).
    pub fn is_constructed(&self) -> bool {
        self.tag & CONSTRUCTED != 0
    }

    /// A reader over the contents, keeping absolute offsets.
    #[inline]
    pub fn reader(&self) -> Reader<'a> {
        Reader {
            buf: self.value,
            pos: 0,
            base: self.offset + self.header_len,
        }
    }
}

/// A borrowing cursor over BER-encoded bytes.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Absolute offset of `buf[0]` in the outermost buffer.
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first byte has absolute offset 0.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            base: 0,
        }
    }

    /// A reader over `buf`, whose first byte has absolute offset `base`.
    pub fn with_base(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    /// Bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Absolute offset of the next byte to be read.
    pub fn position(&self) -> usize {
        self.base + self.pos
    }

    /// The unread bytes, without consuming them.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// The identifier octet of the next element, if any.
    #[inline]
    pub fn peek_tag(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// Consume exactly `len` raw bytes.
    #[inline]
    pub fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8]> {
        if len > self.remaining() {
            return Err(Error::Truncated {
                what,
                need: len,
                have: self.remaining(),
            });
        }
        let out = &self.buf[self.pos..self.pos + len];
        self.pos += len;
        Ok(out)
    }

    /// A bounded reader over the next `len` bytes, which are consumed from `self`.
    pub fn sub(&mut self, len: usize, what: &'static str) -> Result<Reader<'a>> {
        let base = self.position();
        let buf = self.take(len, what)?;
        Ok(Reader { buf, pos: 0, base })
    }

    /// Fail with [`Error::TrailingBytes`] unless everything has been read.
    pub fn expect_end(&self, what: &'static str) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(Error::TrailingBytes { what, count }),
        }
    }

    /// Read one element: identifier octet, definite length, contents.
    #[inline]
    pub fn read_tlv(&mut self, what: &'static str) -> Result<Tlv<'a>> {
        let offset = self.position();
        let start = self.pos;
        let tag = *self.buf.get(self.pos).ok_or(Error::Truncated {
            what,
            need: 1,
            have: 0,
        })?;
        if tag & HIGH_TAG_FORM == HIGH_TAG_FORM {
            // X.690 8.1.2.4: tag numbers >= 31. No IEC 61850 grammar uses them.
            return Err(Error::UnknownTag { what, tag });
        }
        self.pos += 1;
        let len = match self.read_length(what) {
            Ok(len) => len,
            Err(e) => {
                self.pos = start;
                return Err(e);
            }
        };
        let header_len = self.pos - start;
        if len > self.remaining() {
            let have = self.remaining();
            self.pos = start;
            return Err(Error::Truncated {
                what,
                need: len,
                have,
            });
        }
        let value = &self.buf[self.pos..self.pos + len];
        self.pos += len;
        Ok(Tlv {
            tag,
            value,
            offset,
            header_len,
        })
    }

    /// Read one element and require its identifier octet to be `tag`.
    pub fn read_expected(&mut self, tag: u8, what: &'static str) -> Result<Tlv<'a>> {
        match self.peek_tag() {
            Some(found) if found != tag => Err(Error::UnexpectedTag {
                what,
                expected: tag,
                found,
            }),
            _ => self.read_tlv(what),
        }
    }

    /// Read the next element only if its identifier octet is `tag`.
    pub fn read_optional(&mut self, tag: u8, what: &'static str) -> Result<Option<Tlv<'a>>> {
        if self.peek_tag() == Some(tag) {
            self.read_tlv(what).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The length octets (X.690 8.1.3): short form below 128, long form with 1..=4 octets.
    #[inline]
    fn read_length(&mut self, what: &'static str) -> Result<usize> {
        let first = *self.buf.get(self.pos).ok_or(Error::Truncated {
            what,
            need: 1,
            have: 0,
        })?;
        self.pos += 1;
        if first < 0x80 {
            return Ok(first as usize);
        }
        let octets = (first & 0x7f) as usize;
        if octets == 0 {
            // X.690 8.1.3.6: indefinite form.
            return Err(Error::IndefiniteLength { what });
        }
        if octets > MAX_LENGTH_OCTETS {
            // Includes 0xFF, reserved by X.690 8.1.3.5 c).
            return Err(Error::LengthTooLong { what, octets });
        }
        let bytes = self.take(octets, what)?;
        // At most four octets, so this fits in u32 and therefore in usize on every
        // platform this crate supports (16-bit targets are not among them).
        let len = bytes.iter().fold(0u32, |acc, &b| (acc << 8) | b as u32);
        usize::try_from(len).map_err(|_| Error::BadLength {
            what,
            value: usize::MAX,
        })
    }
}

/// Tracks the position of fields in an ASN.1 SEQUENCE so that a decoder can report a field
/// that repeats ([`Error::DuplicateField`]) or comes before one it must follow
/// ([`Error::OutOfOrder`]) (X.680 25: SEQUENCE components appear in definition order).
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldOrder {
    next: usize,
}

impl FieldOrder {
    /// A tracker that has seen no field yet.
    pub fn new() -> Self {
        FieldOrder { next: 0 }
    }

    /// Record that field number `index` (its position in the SEQUENCE) was just read.
    pub fn see(&mut self, index: usize, name: &'static str) -> Result<()> {
        if index + 1 == self.next {
            return Err(Error::DuplicateField(name));
        }
        if index < self.next {
            return Err(Error::OutOfOrder(name));
        }
        self.next = index + 1;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Sizes of what the writer emits (the writer itself is `crate::ber_sink`)
// ---------------------------------------------------------------------------------------

/// Number of length octets the writer ([`crate::ber_sink`]) uses for `n` (X.690
/// 8.1.3.4/8.1.3.5, minimal).
#[inline]
pub fn encoded_len_len(n: usize) -> usize {
    match n {
        0..=0x7f => 1,
        0x80..=0xff => 2,
        0x100..=0xffff => 3,
        0x1_0000..=0xff_ffff => 4,
        _ => 5,
    }
}

/// Total size of an element with `content_len` contents octets and a one-octet tag.
#[inline]
pub fn tlv_len(content_len: usize) -> usize {
    1 + encoded_len_len(content_len) + content_len
}

// ---------------------------------------------------------------------------------------
// Integers (X.690 8.3) and booleans (X.690 8.2)
// ---------------------------------------------------------------------------------------

/// The contents octets of an encoded integer: at most nine (a u64 with its high bit set
/// needs a leading zero octet to stay positive, X.690 8.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntBytes {
    buf: [u8; 9],
    len: u8,
}

impl IntBytes {
    /// Number of contents octets.
    #[allow(clippy::len_without_is_empty)] // never empty: X.690 8.3.1
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
}

impl AsRef<[u8]> for IntBytes {
    fn as_ref(&self) -> &[u8] {
        &self.buf[9 - self.len as usize..]
    }
}

/// Minimal two's-complement contents octets of `v` (X.690 8.3.2: the first nine bits are
/// never all equal).
#[inline]
pub fn encode_i64(v: i64) -> IntBytes {
    let mut buf = [0u8; 9];
    let be = v.to_be_bytes();
    buf[1..].copy_from_slice(&be);
    buf[0] = if v < 0 { 0xff } else { 0 };
    let mut start = 1;
    while start < 8 {
        let redundant = (buf[start] == 0x00 && buf[start + 1] & 0x80 == 0)
            || (buf[start] == 0xff && buf[start + 1] & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    IntBytes {
        buf,
        len: (9 - start) as u8,
    }
}

/// Minimal contents octets of the non-negative integer `v`, with a leading zero octet when
/// the high bit would otherwise read as a sign (X.690 8.3.3).
#[inline]
pub fn encode_u64(v: u64) -> IntBytes {
    let mut buf = [0u8; 9];
    buf[1..].copy_from_slice(&v.to_be_bytes());
    let mut start = 0;
    while start < 8 && buf[start] == 0 && buf[start + 1] & 0x80 == 0 {
        start += 1;
    }
    IntBytes {
        buf,
        len: (9 - start) as u8,
    }
}

/// Decode a two's-complement INTEGER whose value fits in 64 bits. Non-minimal encodings are
/// accepted (BER allows them in practice; X.690 8.3.2 is a DER-style rule many IEDs break),
/// longer than eight octets too when the extra leading octets only repeat the sign: tshark
/// reads kit-dsn/zeek-goose-analyzer's `integer.pcap` value `85 09 00 .. 00 2a` as 42, and so
/// does this.
#[inline]
pub fn decode_i64(bytes: &[u8], what: &'static str) -> Result<i64> {
    if bytes.is_empty() {
        // X.690 8.3.1: one or more octets.
        return Err(Error::BadLength { what, value: 0 });
    }
    let bytes = without_sign_octets(bytes, 8);
    if bytes.len() > 8 {
        return Err(Error::BadValue {
            what,
            detail: "integer wider than 64 bits",
        });
    }
    let init: i64 = if bytes[0] & 0x80 != 0 { -1 } else { 0 };
    Ok(bytes.iter().fold(init, |acc, &b| (acc << 8) | b as i64))
}

/// `bytes` (two's complement) without leading octets that only repeat the sign (0x00 before
/// an octet whose top bit is clear, 0xFF before one whose top bit is set), while it is longer
/// than `keep` octets.
fn without_sign_octets(mut bytes: &[u8], keep: usize) -> &[u8] {
    while bytes.len() > keep {
        match bytes {
            [0x00, next, ..] if next & 0x80 == 0 => bytes = &bytes[1..],
            [0xff, next, ..] if next & 0x80 != 0 => bytes = &bytes[1..],
            _ => break,
        }
    }
    bytes
}

/// Decode a non-negative INTEGER whose value fits in 64 bits: up to eight value octets after
/// any number of leading zero octets (nine octets are needed for values from 2^63).
#[inline]
pub fn decode_u64(bytes: &[u8], what: &'static str) -> Result<u64> {
    if bytes.is_empty() {
        return Err(Error::BadLength { what, value: 0 });
    }
    if bytes[0] & 0x80 != 0 {
        return Err(Error::BadValue {
            what,
            detail: "negative value for an unsigned integer",
        });
    }
    let mut digits = bytes;
    while digits.len() > 8 && digits[0] == 0 {
        digits = &digits[1..];
    }
    if digits.len() > 8 {
        return Err(Error::BadValue {
            what,
            detail: "integer wider than 64 bits",
        });
    }
    Ok(digits.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64))
}

/// Decode a non-negative INTEGER that must fit in 32 bits (stNum, sqNum, confRev, ...).
#[inline]
pub fn decode_u32(bytes: &[u8], what: &'static str) -> Result<u32> {
    u32::try_from(decode_u64(bytes, what)?).map_err(|_| Error::BadValue {
        what,
        detail: "integer wider than 32 bits",
    })
}

/// Decode a BOOLEAN: exactly one octet, zero is FALSE and anything else TRUE (X.690 8.2.2).
#[inline]
pub fn decode_bool(bytes: &[u8], what: &'static str) -> Result<bool> {
    match bytes {
        [b] => Ok(*b != 0),
        _ => Err(Error::BadLength {
            what,
            value: bytes.len(),
        }),
    }
}

/// The contents octet for a BOOLEAN. We write 0x01 for TRUE, as libiec61850 does on the wire;
/// X.690 8.2.2 allows any non-zero value in BER (DER's 0xFF, X.690 11.1, is not required by
/// IEC 61850-8-1).
pub fn encode_bool(v: bool) -> u8 {
    v as u8
}

/// Check that every octet is a VisibleString character, 0x20..=0x7E (X.680 41, ISO 646).
pub fn visible_string(bytes: &[u8], what: &'static str) -> Result<String> {
    visible_str(bytes, what).map(str::to_owned)
}

/// [`visible_string`] without the copy: the same check, borrowing the octets as `&str` (every
/// VisibleString character is ASCII, hence UTF-8), for parsers on a hot path that must not
/// allocate.
#[inline]
pub fn visible_str<'a>(bytes: &'a [u8], what: &'static str) -> Result<&'a str> {
    let bad = || Error::BadValue {
        what,
        detail: "character outside VisibleString",
    };
    if !all_visible(bytes) {
        return Err(bad());
    }
    core::str::from_utf8(bytes).map_err(|_| bad())
}

/// Whether `s` consists of VisibleString characters only (checked before emitting).
pub fn is_visible(s: &str) -> bool {
    all_visible(s.as_bytes())
}

/// Whether every octet is in 0x20..=0x7E. Checked 32 octets at a time without a branch per
/// octet, so that the compiler can use vector instructions: GOOSE references are long and
/// this check runs on every verified frame.
#[inline]
fn all_visible(bytes: &[u8]) -> bool {
    let outside = |b: u8| b.wrapping_sub(0x20) > 0x5e;
    let mut chunks = bytes.chunks_exact(32);
    for c in &mut chunks {
        if c.iter().fold(false, |bad, &b| bad | outside(b)) {
            return false;
        }
    }
    // The tail too without a branch per octet: GOOSE references are mostly shorter than 32.
    !chunks
        .remainder()
        .iter()
        .fold(false, |bad, &b| bad | outside(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Leading octets that repeat the sign do not make an INTEGER wider (kit-dsn/
    /// zeek-goose-analyzer `integer.pcap`: 42 in nine octets); a value that needs more than
    /// 64 bits is still refused.
    #[test]
    fn integers_longer_than_eight_octets_that_fit() {
        let nine_42 = [0, 0, 0, 0, 0, 0, 0, 0, 0x2a];
        assert_eq!(decode_i64(&nine_42, "i"), Ok(42));
        assert_eq!(decode_u64(&nine_42, "u"), Ok(42));
        let ten_minus_2: Vec<u8> = [0xff; 10].into_iter().chain([0xfe]).collect();
        assert_eq!(decode_i64(&ten_minus_2, "i"), Ok(-2));
        let i64_min = [0xff, 0x80, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(decode_i64(&i64_min, "i"), Ok(i64::MIN));
        // 2^63 as a signed value needs 65 bits; as an unsigned one it fits.
        let two_63 = [0, 0x80, 0, 0, 0, 0, 0, 0, 0];
        assert!(decode_i64(&two_63, "i").is_err());
        assert_eq!(decode_u64(&two_63, "u"), Ok(1 << 63));
        assert_eq!(
            decode_u64(&[0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0], "u"),
            Ok(1 << 63)
        );
        assert!(decode_u64(&[1, 0, 0, 0, 0, 0, 0, 0, 0], "u").is_err());
        assert!(decode_i64(&[0x01, 0, 0, 0, 0, 0, 0, 0, 0], "i").is_err());
        assert!(decode_i64(&[0xfe, 0xff, 0, 0, 0, 0, 0, 0, 0], "i").is_err());
        assert!(decode_i64(&[], "i").is_err());
    }

    #[test]
    fn short_and_long_lengths() {
        let mut r = Reader::new(&[0x80, 0x01, 0xaa, 0x81, 0x81, 0x02, 0x01, 0x02]);
        let t = r.read_tlv("t").unwrap();
        assert_eq!(
            (t.tag, t.value, t.header_len, t.offset),
            (0x80, &[0xaa][..], 2, 0)
        );
        let t = r.read_tlv("t").unwrap();
        assert_eq!((t.tag, t.value, t.header_len), (0x81, &[0x01, 0x02][..], 3));
        assert_eq!(t.value_range(), 6..8);
        r.expect_end("t").unwrap();
    }

    #[test]
    fn rejects_indefinite_high_tag_and_long_lengths() {
        assert_eq!(
            Reader::new(&[0x30, 0x80, 0, 0]).read_tlv("x"),
            Err(Error::IndefiniteLength { what: "x" })
        );
        assert_eq!(
            Reader::new(&[0x1f, 0x81, 0x01, 0x00]).read_tlv("x"),
            Err(Error::UnknownTag {
                what: "x",
                tag: 0x1f
            })
        );
        assert_eq!(
            Reader::new(&[0x04, 0x85, 0, 0, 0, 0, 1, 0]).read_tlv("x"),
            Err(Error::LengthTooLong {
                what: "x",
                octets: 5
            })
        );
        assert!(matches!(
            Reader::new(&[0x04, 0x84, 0xff, 0xff, 0xff, 0xff]).read_tlv("x"),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            Reader::new(&[0x04, 0x03, 1]).read_tlv("x"),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            Reader::new(&[0x04]).read_tlv("x"),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn sub_reader_is_bounded_and_keeps_offsets() {
        let data = [0xa0, 0x03, 0x80, 0x01, 0x07, 0x81, 0x00];
        let mut r = Reader::new(&data);
        let outer = r.read_expected(0xa0, "outer").unwrap();
        let mut inner = outer.reader();
        let f = inner.read_expected(0x80, "f").unwrap();
        assert_eq!(f.value_range(), 4..5);
        inner.expect_end("outer").unwrap();
        assert_eq!(
            r.read_expected(0x80, "g"),
            Err(Error::UnexpectedTag {
                what: "g",
                expected: 0x80,
                found: 0x81
            })
        );
        let mut s = Reader::new(&data).sub(2, "s").unwrap();
        assert_eq!(
            s.take(3, "s"),
            Err(Error::Truncated {
                what: "s",
                need: 3,
                have: 2
            })
        );
        assert_eq!(s.position(), 0);
    }

    #[test]
    fn integer_vectors() {
        // X.690 8.3 examples and boundaries.
        for (v, enc) in [
            (0i64, &[0x00][..]),
            (127, &[0x7f]),
            (128, &[0x00, 0x80]),
            (-128, &[0x80]),
            (-129, &[0xff, 0x7f]),
            (256, &[0x01, 0x00]),
            (i64::MIN, &[0x80, 0, 0, 0, 0, 0, 0, 0]),
            (i64::MAX, &[0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        ] {
            assert_eq!(encode_i64(v).as_ref(), enc, "{v}");
            assert_eq!(decode_i64(enc, "i").unwrap(), v);
        }
        assert_eq!(
            encode_u64(u64::MAX).as_ref(),
            &[0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(encode_u64(0x80).as_ref(), &[0x00, 0x80]);
        assert_eq!(decode_u64(&[0, 0, 5], "u").unwrap(), 5);
        assert!(decode_u64(&[0x80], "u").is_err());
        assert!(decode_u64(&[1, 0, 0, 0, 0, 0, 0, 0, 0], "u").is_err());
        // Leading octets that repeat the sign are accepted at any length (see below).
        assert_eq!(decode_i64(&[0; 9], "i"), Ok(0));
        assert!(decode_i64(&[], "i").is_err());
        assert_eq!(decode_i64(&[0xff, 0xff], "i").unwrap(), -1);
        assert!(decode_u32(&[1, 0, 0, 0, 0], "u").is_err());
    }

    #[test]
    fn field_order() {
        let mut f = FieldOrder::new();
        f.see(0, "a").unwrap();
        f.see(2, "c").unwrap();
        assert_eq!(f.see(2, "c"), Err(Error::DuplicateField("c")));
        assert_eq!(f.see(1, "b"), Err(Error::OutOfOrder("b")));
    }

    proptest! {
        #[test]
        fn i64_round_trip(v: i64) {
            let e = encode_i64(v);
            prop_assert_eq!(decode_i64(e.as_ref(), "i").unwrap(), v);
            // Minimal: no shorter encoding decodes to v.
            if e.len() > 1 {
                prop_assert!(!decode_i64(&e.as_ref()[1..], "i").is_ok_and(|w| w == v));
            }
        }

        #[test]
        fn u64_round_trip(v: u64) {
            let e = encode_u64(v);
            prop_assert_eq!(decode_u64(e.as_ref(), "u").unwrap(), v);
            prop_assert_eq!(decode_i64(e.as_ref(), "i").ok().map(|x| x as u64).unwrap_or(v), v);
        }

        #[test]
        fn no_panic_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = Reader::new(&data);
            while let Ok(t) = r.read_tlv("x") {
                let _ = t.reader().read_tlv("y");
                if r.is_empty() { break; }
            }
            let _ = decode_i64(&data, "i");
            let _ = decode_u64(&data, "u");
        }
    }
}
