//! The one BER writer in gander: every encoder (GOOSE and SV APDUs, MMS `Data`, the
//! IEC 62351-6 security extension, and gander-mms' ISO upper layers and MMS PDUs) writes its
//! octets front to back into a [`Sink`], so that one encoder per type serves three uses:
//!
//! * a growing `Vec<u8>` (`Codec::emit_vec`, `Codec::to_vec`),
//! * a [`Counter`], which only adds up lengths (`Codec::buffer_len` where a type has no
//!   cheaper closed form),
//! * a [`SliceSink`] over the caller's buffer (`Codec::emit` in place, smoltcp-style).
//!
//! Because the same code path produces all three, a length computed by counting is by
//! construction the length written, and the in-place and appending encodings cannot drift
//! apart (the property tests beside each encoder check it anyway).
//!
//! What the writer emits is restricted exactly as [`crate::ber`]'s reader accepts: one
//! identifier octet (tag numbers below 31, X.690 8.1.2.2; gander-mms writes its few
//! high-tag-number identifiers itself with [`Sink::bytes`]) and definite lengths in the
//! minimal form (short form below 128, X.690 8.1.3.4; otherwise the long form with the fewest
//! octets, 8.1.3.5), which is also what DER (X.690 10.1) and libiec61850 write.
//!
//! Encoders are generic over `S: Sink + ?Sized`: the codecs in this crate are monomorphised
//! for each sink (no dynamic dispatch on the GOOSE/SV hot paths), and gander-mms passes
//! `&mut dyn Sink` to the same functions. [`nested`] sizes a constructed element whose
//! contents length has no closed form by running its contents encoder once more against a
//! [`Counter`]; codecs that know their contents length (every one in this crate) write
//! [`Sink::header`] with it directly instead.

use crate::ber::{encode_i64, encode_u64, encoded_len_len};
use crate::Codec;

/// Where an encoder writes its octets, front to back.
pub trait Sink {
    /// Write raw octets.
    fn bytes(&mut self, b: &[u8]);

    /// Write a value that has its own [`Codec`] (an MMS `Data` inside an MMS PDU, say).
    fn put(&mut self, value: &dyn Codec);

    /// Write identifier octet `tag` and the minimal definite length octets for
    /// `content_len` (X.690 8.1.2, 8.1.3); the contents follow.
    #[inline]
    fn header(&mut self, tag: u8, content_len: usize) {
        let h = Header::new(tag, content_len);
        self.bytes(h.as_ref());
    }
}

impl Sink for Vec<u8> {
    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }

    fn put(&mut self, value: &dyn Codec) {
        value.emit_vec(self);
    }
}

/// A sink that only counts octets: an encoder's `buffer_len`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counter(pub usize);

impl Sink for Counter {
    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        self.0 += b.len();
    }

    fn put(&mut self, value: &dyn Codec) {
        self.0 += value.buffer_len();
    }

    #[inline]
    fn header(&mut self, _tag: u8, content_len: usize) {
        self.0 += 1 + encoded_len_len(content_len);
    }
}

/// A sink over the caller's buffer: an encoder's in-place `emit`.
///
/// # Panics
/// Writing past the end of the buffer panics. That is a caller bug, never peer-controlled:
/// callers size the buffer with `buffer_len` first (the [`Codec`] contract).
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u8],
    /// Octets written so far.
    pub pos: usize,
}

impl<'a> SliceSink<'a> {
    /// Start writing at offset 0 of `buf`.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> Self {
        SliceSink { buf, pos: 0 }
    }

    /// Octets written so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Give the buffer back (to patch a field after the encoder ran, say).
    pub fn into_inner(self) -> &'a mut [u8] {
        self.buf
    }
}

impl Sink for SliceSink<'_> {
    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }

    fn put(&mut self, value: &dyn Codec) {
        self.pos += value.emit(&mut self.buf[self.pos..]);
    }

    #[inline]
    fn header(&mut self, tag: u8, content_len: usize) {
        self.buf[self.pos] = tag;
        self.pos += 1;
        self.pos += write_len(&mut self.buf[self.pos..], content_len);
    }
}

/// The identifier and length octets of one element, built on the stack (at most six: one
/// identifier octet, 0x84 and four length octets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    buf: [u8; 6],
    len: u8,
}

impl Header {
    /// The header of an element with identifier `tag` and `content_len` contents octets.
    #[inline]
    pub fn new(tag: u8, content_len: usize) -> Header {
        let mut buf = [0u8; 6];
        buf[0] = tag;
        let n = 1 + write_len(&mut buf[1..], content_len);
        Header { buf, len: n as u8 }
    }

    /// Number of octets.
    #[allow(clippy::len_without_is_empty)] // never empty: the identifier octet
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
}

impl AsRef<[u8]> for Header {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

/// Write the minimal definite length octets for `n` at the start of `buf` (at least
/// [`encoded_len_len`]`(n)` octets, at most five); returns how many.
///
/// Lengths above `u32::MAX` cannot be written in the four length octets the reader accepts
/// ([`crate::ber::MAX_LENGTH_OCTETS`]); they cannot occur for a buffer anything in gander
/// encodes (IEC 61850 frames and MMS PDUs are far below 4 GiB), and saturating keeps this
/// function total.
#[inline]
fn write_len(buf: &mut [u8], n: usize) -> usize {
    if n < 0x80 {
        buf[0] = n as u8;
        1
    } else {
        let count = encoded_len_len(n) - 1;
        let v = u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes();
        buf[0] = 0x80 | count as u8;
        buf[1..1 + count].copy_from_slice(&v[4 - count..]);
        1 + count
    }
}

/// Write only the length octets for `n` (after an identifier the caller wrote itself, such
/// as an MMS service tag in the high-tag-number form).
#[inline]
pub fn length<S: Sink + ?Sized>(out: &mut S, n: usize) {
    let mut buf = [0u8; 5];
    let k = write_len(&mut buf, n);
    out.bytes(&buf[..k]);
}

/// Write a whole primitive element, `tag len content`.
#[inline]
pub fn tlv<S: Sink + ?Sized>(out: &mut S, tag: u8, content: &[u8]) {
    out.header(tag, content.len());
    out.bytes(content);
}

/// Write `tag len (contents written by f)`; `f` runs twice, once against a [`Counter`] to
/// size the contents. Each level of nesting doubles the work below it, so deep or long
/// encoders compute their contents length instead and call [`Sink::header`].
pub fn nested(out: &mut dyn Sink, tag: u8, f: impl Fn(&mut dyn Sink)) {
    let mut count = Counter::default();
    f(&mut count);
    out.header(tag, count.0);
    f(out);
}

/// Write an INTEGER-like element with minimal two's-complement contents (X.690 8.3).
#[inline]
pub fn int<S: Sink + ?Sized>(out: &mut S, tag: u8, v: i64) {
    tlv(out, tag, encode_i64(v).as_ref());
}

/// Write a non-negative integer element with minimal contents (X.690 8.3.3).
#[inline]
pub fn uint<S: Sink + ?Sized>(out: &mut S, tag: u8, v: u64) {
    tlv(out, tag, encode_u64(v).as_ref());
}

/// How the three sinks disagreed on one encoder (see [`check_sinks_agree`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SinkDisagreement {
    /// The [`Counter`] counted a different length than the `Vec` received.
    #[error("Counter counted {counted} octets, the Vec sink received {written}")]
    Count {
        /// What the counter said.
        counted: usize,
        /// What the vector received.
        written: usize,
    },
    /// The [`SliceSink`] wrote a different length than the `Vec` received.
    #[error("SliceSink wrote {written} octets, the Vec sink received {expected}")]
    SliceLength {
        /// What the vector received.
        expected: usize,
        /// What the slice sink wrote.
        written: usize,
    },
    /// Same length, different octets.
    #[error("SliceSink and Vec sink octets differ")]
    SliceOctets,
    /// `Codec::emit_vec` appended something else than the encoder wrote.
    #[error("emit_vec appended other octets than the encoder writes")]
    EmitVec,
    /// The [`SliceSink`] changed an octet after the counted length.
    #[error("SliceSink wrote past the counted length")]
    Overrun,
}

/// Check that one encoder agrees with itself across the three sinks: the octets it appends
/// to a `Vec`, the count it makes, and the octets it writes in place into a buffer of that
/// size are the same. Returns the encoding. For the property tests beside every encoder
/// (here and in gander-mms); an encoder that writes more than one octet past its count
/// panics in the [`SliceSink`], as the [`Codec`] contract says.
pub fn check_sinks_agree(encode: impl Fn(&mut dyn Sink)) -> Result<Vec<u8>, SinkDisagreement> {
    let mut v = Vec::new();
    encode(&mut v);
    let mut c = Counter::default();
    encode(&mut c);
    if c.0 != v.len() {
        return Err(SinkDisagreement::Count {
            counted: c.0,
            written: v.len(),
        });
    }
    // A canary after the end: writing past the count shows as a changed octet.
    let mut buf = vec![0xa5; v.len() + 1];
    let mut s = SliceSink::new(&mut buf);
    encode(&mut s);
    let written = s.pos;
    if written != v.len() {
        return Err(SinkDisagreement::SliceLength {
            expected: v.len(),
            written,
        });
    }
    if buf[..written] != v[..] {
        return Err(SinkDisagreement::SliceOctets);
    }
    if buf[written] != 0xa5 {
        return Err(SinkDisagreement::Overrun);
    }
    Ok(v)
}

/// Check a [`Codec`] against the encoder behind it: `buffer_len` (however the type computes
/// it) equals what `encode` counts, and `emit` into a buffer of exactly that size and
/// `emit_vec` both write what `encode` appends to a `Vec`.
pub fn check_codec_agrees<C: Codec + ?Sized>(
    value: &C,
    encode: impl Fn(&mut dyn Sink),
) -> Result<Vec<u8>, SinkDisagreement> {
    let v = check_sinks_agree(encode)?;
    if value.buffer_len() != v.len() {
        return Err(SinkDisagreement::Count {
            counted: value.buffer_len(),
            written: v.len(),
        });
    }
    let mut buf = vec![0xa5; v.len() + 1];
    let written = value.emit(&mut buf[..v.len()]);
    if written != v.len() {
        return Err(SinkDisagreement::SliceLength {
            expected: v.len(),
            written,
        });
    }
    if buf[..written] != v[..] {
        return Err(SinkDisagreement::SliceOctets);
    }
    let mut appended = vec![0x5a];
    value.emit_vec(&mut appended);
    if appended[1..] != v[..] {
        return Err(SinkDisagreement::EmitVec);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ber::{tlv_len, Reader};
    use proptest::prelude::*;

    #[test]
    fn length_forms() {
        // X.690 8.1.3.4 (short form) and 8.1.3.5 (long form, fewest octets).
        for (n, enc) in [
            (0usize, &[0x00][..]),
            (0x7f, &[0x7f]),
            (0x80, &[0x81, 0x80]),
            (0xff, &[0x81, 0xff]),
            (0x100, &[0x82, 0x01, 0x00]),
            (0xffff, &[0x82, 0xff, 0xff]),
            (0x1_0000, &[0x83, 0x01, 0x00, 0x00]),
            (0x100_0000, &[0x84, 0x01, 0x00, 0x00, 0x00]),
        ] {
            let mut v = Vec::new();
            length(&mut v, n);
            assert_eq!(v, enc, "{n:#x}");
            assert_eq!(Header::new(0x04, n).as_ref()[1..], *enc);
        }
    }

    #[test]
    fn nested_counts_its_contents() {
        let enc = check_sinks_agree(|o| {
            nested(o, 0x30, |o| {
                int(o, 0x02, -129);
                nested(o, 0xa0, |o| uint(o, 0x80, 0x80));
            })
        })
        .unwrap();
        assert_eq!(
            enc,
            [0x30, 0x0a, 0x02, 0x02, 0xff, 0x7f, 0xa0, 0x04, 0x80, 0x02, 0x00, 0x80]
        );
    }

    #[test]
    #[should_panic]
    fn slice_sink_panics_past_the_end() {
        let mut buf = [0u8; 2];
        tlv(&mut SliceSink::new(&mut buf), 0x04, &[1]);
    }

    proptest! {
        #[test]
        fn tlv_sinks_agree_and_parse_back(
            tag in (0u8..=0xff).prop_filter("single-octet tag", |t| t & 0x1f != 0x1f),
            value in proptest::collection::vec(any::<u8>(), 0..600),
        ) {
            let v = check_sinks_agree(|o| tlv(o, tag, &value)).unwrap();
            prop_assert_eq!(v.len(), tlv_len(value.len()));
            let mut r = Reader::new(&v);
            let t = r.read_tlv("t").unwrap();
            prop_assert_eq!(t.tag, tag);
            prop_assert_eq!(t.value, &value[..]);
            prop_assert!(r.expect_end("t").is_ok());
        }

        #[test]
        fn header_round_trip(n in 0usize..0x0100_0000) {
            let h = Header::new(0x04, n);
            prop_assert_eq!(h.len(), 1 + encoded_len_len(n));
            let mut c = Counter::default();
            c.header(0x04, n);
            prop_assert_eq!(c.0, h.len());
            let mut body = h.as_ref().to_vec();
            body.resize(h.len() + n.min(4096), 0);
            let r = Reader::new(&body).read_tlv("t");
            if n <= 4096 { prop_assert_eq!(r.unwrap().value.len(), n); } else { prop_assert!(r.is_err()); }
        }

        #[test]
        fn integers_sinks_agree(i: i64, u: u64) {
            let v = check_sinks_agree(|o| { int(o, 0x85, i); uint(o, 0x86, u) }).unwrap();
            let mut r = Reader::new(&v);
            prop_assert_eq!(crate::ber::decode_i64(r.read_expected(0x85, "i").unwrap().value, "i"), Ok(i));
            prop_assert_eq!(crate::ber::decode_u64(r.read_expected(0x86, "u").unwrap().value, "u"), Ok(u));
        }
    }
}
