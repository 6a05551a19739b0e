//! The generic payload header (RFC 2408 section 3.2) and the chains it builds: every payload
//! names the type of the one after it, the last names 0 (NONE).
//!
//! ```text
//!  0  Next Payload (1) | RESERVED (1) | Payload Length (2, header included)
//! ```

use super::error::{IsakmpError, Result};
use super::reader::{len16, Reader, Writer};

/// Octets of the generic payload header.
pub(crate) const GENERIC_HEADER_LEN: usize = 4;

/// Most payloads one chain may hold (a GROUPKEY-PULL with many TEKs stays far below).
pub(crate) const MAX_CHAIN: usize = 64;

/// Splits a chain that starts with type `first`; returns each payload's type and body.
/// With `allow_trailing` the bytes after the last payload are ignored: decrypted IKEv1
/// messages end in cipher padding (RFC 2409 Appendix B).
pub(crate) fn split<'a>(
    first: u8,
    buf: &'a [u8],
    what: &'static str,
    allow_trailing: bool,
) -> Result<Vec<(u8, &'a [u8])>> {
    let mut out = Vec::new();
    let mut next = first;
    let mut r = Reader::new(buf, what);
    while next != 0 {
        if out.len() == MAX_CHAIN {
            return Err(IsakmpError::TooMany {
                what,
                limit: MAX_CHAIN,
            });
        }
        let kind = next;
        next = r.u8()?;
        let _reserved = r.u8()?;
        let len = r.u16()? as usize;
        if len < GENERIC_HEADER_LEN {
            return Err(IsakmpError::BadLength { what, value: len });
        }
        let body = r
            .take(len - GENERIC_HEADER_LEN)
            .map_err(|_| IsakmpError::BadLength { what, value: len })?;
        out.push((kind, body));
    }
    if !allow_trailing {
        r.finish()?;
    }
    Ok(out)
}

/// One element of a chain as its emitter sees it.
pub(crate) trait ChainItem {
    /// Its payload type.
    fn kind(&self) -> u8;
    /// Octets of its body (after the generic header).
    fn body_len(&self) -> usize;
    /// Writes its body; returns `body_len()`.
    fn emit_body(&self, buf: &mut [u8]) -> usize;
}

/// Octets of a chain.
pub(crate) fn chain_len<T: ChainItem>(items: &[T]) -> usize {
    items
        .iter()
        .map(|p| GENERIC_HEADER_LEN + p.body_len())
        .sum()
}

/// Writes a chain, each header naming the next element's type (0 after the last).
pub(crate) fn emit_chain<T: ChainItem>(items: &[T], buf: &mut [u8]) -> usize {
    let mut w = Writer::new(buf);
    for (i, p) in items.iter().enumerate() {
        let next = items.get(i + 1).map_or(0, ChainItem::kind);
        w.u8(next);
        w.u8(0);
        w.u16(len16(GENERIC_HEADER_LEN + p.body_len()));
        let n = p.emit_body(w.tail());
        w.advance(n);
    }
    w.written()
}

/// Whether every element's length fits the 16-bit Payload Length.
pub(crate) fn chain_fits<T: ChainItem>(items: &[T]) -> bool {
    items
        .iter()
        .all(|p| GENERIC_HEADER_LEN + p.body_len() <= usize::from(u16::MAX))
}
