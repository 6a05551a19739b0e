//! Small BER helpers shared by the presentation, ACSE and MMS codecs: OBJECT IDENTIFIER
//! values (X.690 8.19) and writers for nested TLVs. Reading uses `gander_wire::ber::Reader`.
//!
//! Encoders write to a [`Sink`]: a growing `Vec<u8>`, a [`Counter`] (for `buffer_len`) or a
//! [`SliceSink`] over the caller's buffer (for in-place `emit`). [`nested`] sizes a
//! constructed element's contents with a [`Counter`] before writing its header, so the same
//! encoder serves all three and nothing is copied.

use core::fmt;
use gander_wire::{ber, Codec};

use crate::error::{Error, Layer, Result};

/// An OBJECT IDENTIFIER kept as its BER contents octets (X.690 8.19), which is how the
/// upper layers compare them; [`fmt::Display`] shows the dotted form.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Oid(Vec<u8>);

impl Oid {
    /// From BER contents octets; checks that every arc is complete (X.690 8.19.2: the last
    /// octet of each subidentifier has bit 8 clear).
    pub fn from_contents(bytes: &[u8], layer: Layer) -> Result<Oid> {
        if bytes.is_empty() || bytes.last().is_some_and(|b| b & 0x80 != 0) {
            return Err(Error::malformed(
                layer,
                "object identifier",
                "empty or unterminated",
            ));
        }
        if bytes.len() > 64 {
            return Err(Error::TooLarge {
                layer,
                what: "object identifier",
                size: bytes.len(),
                max: 64,
            });
        }
        Ok(Oid(bytes.to_vec()))
    }

    /// From arcs (at least two; the first two are combined as X.690 8.19.4 says).
    pub fn from_arcs(arcs: &[u64]) -> Oid {
        let mut out = Vec::new();
        let mut push = |mut v: u64| {
            let mut tmp = [0u8; 10];
            let mut n = 0;
            loop {
                tmp[n] = (v & 0x7f) as u8;
                n += 1;
                v >>= 7;
                if v == 0 {
                    break;
                }
            }
            for i in (0..n).rev() {
                out.push(tmp[i] | if i > 0 { 0x80 } else { 0 });
            }
        };
        let first = arcs.first().copied().unwrap_or(0) * 40 + arcs.get(1).copied().unwrap_or(0);
        push(first);
        for &a in arcs.iter().skip(2) {
            push(a);
        }
        Oid(out)
    }

    /// The BER contents octets.
    pub fn contents(&self) -> &[u8] {
        &self.0
    }

    /// The arcs.
    pub fn arcs(&self) -> Vec<u64> {
        let mut arcs = Vec::new();
        let mut v: u64 = 0;
        for &b in &self.0 {
            v = (v << 7) | (b & 0x7f) as u64;
            if b & 0x80 == 0 {
                if arcs.is_empty() {
                    let first = (v / 40).min(2);
                    arcs.push(first);
                    arcs.push(v - first * 40);
                } else {
                    arcs.push(v);
                }
                v = 0;
            }
        }
        arcs
    }

    /// Write the whole element (`06 len contents`).
    pub fn emit(&self, out: &mut dyn Sink) {
        tlv(out, 0x06, &self.0);
    }
}

impl fmt::Display for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let arcs = self.arcs();
        for (i, a) in arcs.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{a}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Oid({self})")
    }
}

/// Where an encoder writes its octets, front to back.
pub trait Sink {
    /// Write raw octets.
    fn bytes(&mut self, b: &[u8]);

    /// Write a gander-wire value (e.g. MMS `Data`).
    fn put(&mut self, value: &dyn Codec);
}

impl Sink for Vec<u8> {
    fn bytes(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }

    fn put(&mut self, value: &dyn Codec) {
        value.emit_vec(self);
    }
}

/// A sink that only counts octets: an encoder's `buffer_len`.
#[derive(Debug, Default)]
pub struct Counter(pub usize);

impl Sink for Counter {
    fn bytes(&mut self, b: &[u8]) {
        self.0 += b.len();
    }

    fn put(&mut self, value: &dyn Codec) {
        self.0 += value.buffer_len();
    }
}

/// A sink over the caller's buffer: an encoder's in-place `emit`.
///
/// Writing past the end of the buffer panics (a caller bug: size it with `buffer_len`).
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u8],
    /// Octets written so far.
    pub pos: usize,
}

impl<'a> SliceSink<'a> {
    /// Start writing at offset 0 of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        SliceSink { buf, pos: 0 }
    }
}

impl Sink for SliceSink<'_> {
    fn bytes(&mut self, b: &[u8]) {
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }

    fn put(&mut self, value: &dyn Codec) {
        self.pos += value.emit(&mut self.buf[self.pos..]);
    }
}

/// Write identifier and definite length octets.
fn header(out: &mut dyn Sink, tag: u8, content_len: usize) {
    let mut h = [0u8; 6];
    let n = ber::write_header_at(&mut h, 0, tag, content_len);
    out.bytes(&h[..n]);
}

/// Write `tag len content`.
pub fn tlv(out: &mut dyn Sink, tag: u8, content: &[u8]) {
    header(out, tag, content.len());
    out.bytes(content);
}

/// Write `tag len (contents written by f)`; `f` runs twice, once to count the contents.
pub fn nested(out: &mut dyn Sink, tag: u8, f: impl Fn(&mut dyn Sink)) {
    let mut count = Counter::default();
    f(&mut count);
    header(out, tag, count.0);
    f(out);
}

/// Write an INTEGER-like element with minimal contents.
pub fn int(out: &mut dyn Sink, tag: u8, v: i64) {
    tlv(out, tag, ber::encode_i64(v).as_ref());
}

/// Write a non-negative integer element with minimal contents.
pub fn uint(out: &mut dyn Sink, tag: u8, v: u64) {
    tlv(out, tag, ber::encode_u64(v).as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_oids() {
        // `docs/mms-bytes.md` §1: ACSE 2.2.1.0.1 = 52 01 00 01, MMS 1.0.9506.2.1 = 28 CA 22 02 01,
        // BER 2.1.1 = 51 01, MMS context 1.0.9506.2.3 = 28 CA 22 02 03, AP title 1.1.1.999.1.
        for (arcs, enc) in [
            (&[2u64, 2, 1, 0, 1][..], "52010001"),
            (&[1, 0, 9506, 2, 1], "28ca220201"),
            (&[2, 1, 1], "5101"),
            (&[1, 0, 9506, 2, 3], "28ca220203"),
            (&[1, 1, 1, 999, 1], "2901876701"),
            (&[2, 2, 3, 1], "520301"),
        ] {
            let o = Oid::from_arcs(arcs);
            assert_eq!(hex::encode(o.contents()), enc);
            assert_eq!(o.arcs(), arcs);
        }
        assert_eq!(
            Oid::from_arcs(&[1, 0, 9506, 2, 1]).to_string(),
            "1.0.9506.2.1"
        );
        assert!(Oid::from_contents(&[0x81], Layer::Acse).is_err());
        assert!(Oid::from_contents(&[], Layer::Acse).is_err());
    }
}
