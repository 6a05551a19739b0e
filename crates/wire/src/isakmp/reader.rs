//! A bounds-checked big-endian reader over one payload's bytes: every read checks the bytes
//! present, so no length field can make a parser index past its input.

use super::error::{IsakmpError, Result};

/// Reads big-endian fields from the front of a slice.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`; `what` names the structure in errors.
    pub(crate) fn new(buf: &'a [u8], what: &'static str) -> Self {
        Reader { buf, what }
    }

    /// Octets not yet read.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// The next `n` octets.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.buf.len() < n {
            return Err(IsakmpError::Truncated {
                what: self.what,
                need: n,
                have: self.buf.len(),
            });
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    /// Everything not yet read.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        core::mem::take(&mut self.buf)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Fails with `TrailingBytes` if anything is left.
    pub(crate) fn finish(&self) -> Result<()> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(IsakmpError::TrailingBytes {
                what: self.what,
                count: self.buf.len(),
            })
        }
    }
}

/// Writes big-endian fields into a caller's buffer, front to back.
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, at: 0 }
    }
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf[self.at..self.at + b.len()].copy_from_slice(b);
        self.at += b.len();
    }
    pub(crate) fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }
    pub(crate) fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }
    /// The unwritten tail, for a nested emitter; call [`Writer::advance`] with what it wrote.
    pub(crate) fn tail(&mut self) -> &mut [u8] {
        &mut self.buf[self.at..]
    }
    pub(crate) fn advance(&mut self, n: usize) {
        self.at += n;
    }
    pub(crate) fn written(&self) -> usize {
        self.at
    }
}

/// A length that the caller has checked fits 16 bits ([`super::Message::check`]); saturates
/// instead of wrapping if it does not, so a caller bug never emits a short length.
pub(crate) fn len16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// As [`len16`] for one-octet lengths.
pub(crate) fn len8(n: usize) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}
