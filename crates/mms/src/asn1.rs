//! Small BER helpers shared by the presentation, ACSE and MMS codecs: OBJECT IDENTIFIER
//! values (X.690 8.19), and the BER writer re-exported from gander-wire. Reading uses
//! `gander_wire::ber::Reader`.
//!
//! Encoders write to a [`Sink`]: a growing `Vec<u8>`, a [`Counter`] (for `buffer_len`) or a
//! [`SliceSink`] over the caller's buffer (for in-place `emit`). [`nested`] sizes a
//! constructed element's contents with a [`Counter`] before writing its header, so the same
//! encoder serves all three and nothing is copied. The writer is `gander_wire::ber_sink`, the
//! one every BER encoder in gander uses (GOOSE, SV, `Data`, the IEC 62351-6 extension); it is
//! re-exported here so that this crate's users keep their imports.

use core::fmt;

pub use gander_wire::ber_sink::{int, nested, tlv, uint, Counter, Sink, SliceSink};

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
