//! The one shape every owned codec in gander shares (after rustls' `Codec` and smoltcp's
//! `Repr`): know your encoded size, write yourself into a caller's buffer.
//!
//! # Contract
//! * [`Codec::buffer_len`] is the exact number of octets [`Codec::emit`] writes, computed
//!   without writing any.
//! * [`Codec::emit`] writes the encoding at the start of `buf` and returns `buffer_len()`.
//!   It never allocates for the output and never fails: every value a type can hold has an
//!   encoding (types whose encoding can overflow a length field, such as
//!   [`crate::l2_frame::GooseFrameRepr`], keep a fallible inherent `emit` instead).
//!   It panics if `buf` is shorter than `buffer_len()`: a caller bug, never peer-controlled.
//! * [`Codec::emit_vec`] and [`Codec::to_vec`] are provided on top of the two, allocating once.
//!
//! Every BER type (here and in gander-mms) implements the trait with one encoder per type that
//! writes to a [`crate::ber_sink::Sink`]: the caller's buffer for `emit`, a vector for
//! `emit_vec`, and a counter for `buffer_len` where the type has no cheaper closed form.
//!
//! Parsing is not part of the trait: parsers differ in what they borrow and what they report
//! besides the value (field ranges, layouts, dialects), so each type keeps its own `parse`.

/// A value with a fixed wire encoding.
pub trait Codec {
    /// Octets [`Codec::emit`] writes.
    fn buffer_len(&self) -> usize;

    /// Write the encoding at the start of `buf`; returns `buffer_len()`.
    ///
    /// # Panics
    /// If `buf` is shorter than `buffer_len()` (a caller bug).
    fn emit(&self, buf: &mut [u8]) -> usize;

    /// Append the encoding to `out`.
    fn emit_vec(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.buffer_len(), 0);
        self.emit(&mut out[start..]);
    }

    /// The encoding as a new vector.
    fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.emit_vec(&mut v);
        v
    }
}
