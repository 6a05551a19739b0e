//! A branch-light BER scanner for the fast paths of hot parsers (the layer-2 GOOSE verify and
//! protect paths, `docs/bench-crypto.md`, "Layer 2 on the frame bytes").
//!
//! [`ber::Reader`](crate::ber::Reader) builds a precise [`Error`](crate::Error) for every way
//! an element can be wrong, and the `Result` it returns for every element is what a GOOSE
//! verify spends most of its time on once the frame is authentic. [`Scan`] reads the same
//! encoding (X.690 8.1: one identifier octet, low-tag-number form only; definite lengths in
//! the short form or the long form with one to four octets, as `Reader::read_tlv` accepts)
//! but only answers *whether* the next element is there: `None` on anything else. A fast path
//! built on it therefore accepts a subset of what the general parser accepts, and must hand
//! every `None` to the general parser, which then gives the exact verdict and error.
//!
//! The readers are `#[inline(always)]`: a GOOSE APDU is a dozen elements, and a call per
//! element cost about a sixth of `GooseView::parse` in a profile (`perf`, the 259-byte
//! layer-2 frame of `bench crypto`).

/// The identifier octets whose tag number is in the high-tag-number form (X.690 8.1.2.4),
/// which `ber::Reader` refuses.
const HIGH_TAG_FORM: u8 = 0x1f;

/// A cursor over BER elements that reports failure as `None` (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct Scan<'a> {
    buf: &'a [u8],
}

impl<'a> Scan<'a> {
    /// A scanner over `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Scan { buf }
    }

    /// Whether every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The bytes not read yet (a suffix of the scanned buffer: its offset there is the
    /// buffer's length minus this one's).
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.buf
    }

    /// The identifier octet of the next element, if any.
    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.buf.first().copied()
    }

    /// The next element's identifier octet and contents, or `None` if the buffer does not
    /// start with a whole element that `ber::Reader::read_tlv` would read.
    #[inline(always)]
    pub fn element(&mut self) -> Option<(u8, &'a [u8])> {
        let (&tag, rest) = self.buf.split_first()?;
        if tag & HIGH_TAG_FORM == HIGH_TAG_FORM {
            return None;
        }
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (first as usize, rest)
        } else {
            let octets = (first & 0x7f) as usize;
            if octets == 0 || octets > crate::ber::MAX_LENGTH_OCTETS || rest.len() < octets {
                return None;
            }
            let (l, rest) = rest.split_at(octets);
            (
                l.iter().fold(0usize, |acc, &b| (acc << 8) | b as usize),
                rest,
            )
        };
        if len > rest.len() {
            return None;
        }
        let (value, rest) = rest.split_at(len);
        self.buf = rest;
        Some((tag, value))
    }

    /// The contents of the next element if its identifier octet is `tag`.
    #[inline(always)]
    pub fn field(&mut self, tag: u8) -> Option<&'a [u8]> {
        if self.peek()? != tag {
            return None;
        }
        self.element().map(|(_, v)| v)
    }

    /// `Some(None)` when the next element is not `tag` (an absent OPTIONAL field), its
    /// contents when it is, `None` when it is `tag` but not a whole element.
    #[inline(always)]
    pub fn optional(&mut self, tag: u8) -> Option<Option<&'a [u8]>> {
        if self.peek() != Some(tag) {
            return Some(None);
        }
        self.element().map(|(_, v)| Some(v))
    }
}

/// A non-negative INTEGER that fits 32 bits, in the forms publishers write (one to four
/// octets with bit 8 of the first clear, or five with a leading zero octet). `None` for
/// anything else, which `ber::decode_u32` then judges (it also accepts longer zero-led forms).
#[inline(always)]
pub fn u32_of(v: &[u8]) -> Option<u32> {
    let digits = match v {
        [] => return None,
        [0, rest @ ..] if rest.len() == 4 => rest,
        [first, ..] if *first & 0x80 == 0 && v.len() <= 4 => v,
        _ => return None,
    };
    Some(digits.iter().fold(0u32, |acc, &b| (acc << 8) | b as u32))
}

/// A two's-complement INTEGER of one to eight octets (X.690 8.3), as `ber::decode_i64`
/// reads it, else `None`.
#[inline(always)]
pub fn i64_of(v: &[u8]) -> Option<i64> {
    let first = *v.first()?;
    if v.len() > 8 {
        return None;
    }
    let init: i64 = if first & 0x80 != 0 { -1 } else { 0 };
    Some(v.iter().fold(init, |acc, &b| (acc << 8) | b as i64))
}

/// Whether every octet is a VisibleString character (ISO/IEC 646 graphic characters and
/// space, 0x20..=0x7E; X.680 41.1 Table 8), eight octets per step: a word holds a bad octet if
/// one is below 0x20 (`(x - 0x20..) & !x & 0x80..`, the borrow test of "Bit Twiddling
/// Hacks", exact for "any") or above 0x7E (`((x + 0x01..) | x) & 0x80..`: 0x7F becomes 0x80,
/// 0x80 and above already have the top bit; a carry only leaves an octet that is itself
/// bad). The last word overlaps the one before it instead of a loop over the tail: GOOSE
/// references are tens of octets and are checked on every frame protected or verified
/// (`docs/bench-crypto.md`, "Layer 2: one pass").
#[inline]
pub fn visible(v: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let bad = |x: u64| (x.wrapping_sub(LO * 0x20) & !x) | x.wrapping_add(LO) | x;
    let word = |c: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        u64::from_le_bytes(w)
    };
    if v.len() < 8 {
        return v.iter().all(|&b| b.wrapping_sub(0x20) <= 0x5e);
    }
    let mut acc = bad(word(&v[v.len() - 8..]));
    for c in v.chunks_exact(8) {
        acc |= bad(word(c));
    }
    acc & HI == 0
}

/// A BOOLEAN (one octet, X.690 8.2.2), else `None`.
#[inline(always)]
pub fn bool_of(v: &[u8]) -> Option<bool> {
    match v {
        [b] => Some(*b != 0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ber::{self, Reader};
    use proptest::prelude::*;

    #[test]
    fn reads_short_and_long_forms() {
        let mut s = Scan::new(&[0x80, 0x01, 0xaa, 0x81, 0x81, 0x02, 0x01, 0x02]);
        assert_eq!(s.element(), Some((0x80, &[0xaa][..])));
        assert_eq!(s.element(), Some((0x81, &[0x01, 0x02][..])));
        assert!(s.is_empty());
        assert_eq!(s.element(), None);
    }

    #[test]
    fn refuses_what_the_reader_refuses() {
        for bad in [
            &[0x1f, 0x01, 0x00][..], // high tag number
            &[0x80, 0x80],           // indefinite length
            &[0x80, 0x85, 0, 0, 0, 0, 1],
            &[0x80, 0x02, 0x00], // truncated
            &[0x80],
        ] {
            assert_eq!(Scan::new(bad).element(), None, "{bad:02x?}");
            assert!(Reader::new(bad).read_tlv("t").is_err(), "{bad:02x?}");
        }
    }

    proptest! {
        /// Whatever the scanner reads, the general reader reads the same way.
        #[test]
        fn agrees_with_the_reader(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut s = Scan::new(&bytes);
            let mut r = Reader::new(&bytes);
            while let Some((tag, value)) = s.element() {
                let t = r.read_tlv("t").expect("the reader reads what the scanner reads");
                prop_assert_eq!((t.tag, t.value), (tag, value));
            }
        }

        /// `u32_of` accepts a subset of what `decode_u32` does, with the same value.
        #[test]
        fn u32_agrees(bytes in proptest::collection::vec(any::<u8>(), 0..10)) {
            if let Some(v) = u32_of(&bytes) {
                prop_assert_eq!(ber::decode_u32(&bytes, "x").ok(), Some(v));
            }
        }

        /// Every u32 in its minimal form takes the fast path.
        #[test]
        fn u32_minimal_forms_are_fast(v in any::<u32>()) {
            let b = v.to_be_bytes();
            let skip = b.iter().take_while(|&&x| x == 0).count().min(3);
            let mut enc = b[skip..].to_vec();
            if enc[0] & 0x80 != 0 {
                enc.insert(0, 0);
            }
            prop_assert_eq!(u32_of(&enc), Some(v));
        }

        /// Up to eight octets the fast path reads what `decode_i64` reads. Longer integers
        /// are `None`: `decode_i64` also reads those whose leading octets only repeat the
        /// sign (a real capture carries them, docs/field-tests.md), and the callers of `i64_of`
        /// hand every `None` to the general parser, so the verdict is the same.
        #[test]
        fn i64_agrees(bytes in proptest::collection::vec(any::<u8>(), 0..10)) {
            if bytes.len() <= 8 {
                prop_assert_eq!(i64_of(&bytes), ber::decode_i64(&bytes, "x").ok());
            } else {
                prop_assert_eq!(i64_of(&bytes), None);
            }
        }

        /// The word-at-a-time VisibleString test agrees with the octet-by-octet rule.
        #[test]
        fn visible_agrees(bytes in proptest::collection::vec(any::<u8>(), 0..40),
                          printable in proptest::collection::vec(0x20u8..=0x7e, 0..70),
                          at: usize, bad in proptest::sample::select(vec![0u8, 0x1f, 0x7f, 0x80, 0xff])) {
            prop_assert_eq!(visible(&bytes), ber::visible_str(&bytes, "x").is_ok());
            prop_assert!(visible(&printable));
            if !printable.is_empty() {
                let mut p = printable.clone();
                let i = at % p.len();
                p[i] = bad;
                prop_assert!(!visible(&p));
            }
        }

        #[test]
        fn bool_agrees(bytes in proptest::collection::vec(any::<u8>(), 0..3)) {
            prop_assert_eq!(bool_of(&bytes), ber::decode_bool(&bytes, "x").ok());
        }
    }
}
