//! The 128-bit nonce gander writes for Ascon-AEAD128 (SP 800-232 §4: a nonce must never repeat
//! under one key; a repeat leaks the XOR of two plaintexts and enables forgeries).
//!
//! Layout, every field a fixed-width big-endian integer (`docs/ascon.md` §3):
//!
//! | bytes  | field | R-GOOSE / R-SV | layer-2 GOOSE |
//! |--------|-------|----------------|---------------|
//! | 0..4   | sender prefix | 32 random bits per [`NonceSequence`] | same |
//! | 4..8   | field a | KeyID | stNum |
//! | 8..12  | field b | SPDU number | sqNum |
//! | 12..16 | counter | messages this sequence has numbered | same |
//!
//! Uniqueness does not rest on the message fields (a publisher may repeat an SPDU number or
//! restart stNum at 1): within one sequence the counter never repeats, and the sequence refuses
//! to number a 2^32-th message ([`NonceError::Exhausted`]: rekey). Across sequences, i.e. across
//! restarts, the random prefixes differ except with probability 2^-32 per pair of runs, or a
//! deployment that keeps a boot counter passes it as the prefix ([`NonceSequence::resume`]) and
//! gets uniqueness without any probability at all.
//!
//! Fixed width matters: a nonce made by concatenating the BER contents octets of stNum and sqNum
//! (as a naive implementation might, the octets being at hand in the APDU) collides, e.g.
//! (stNum 1, sqNum 256) and (stNum 257, sqNum 0) both give `01 01 00`; the tests show it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Length of the nonce, bytes.
pub const NONCE_LEN: usize = 16;

/// Most messages one sequence numbers (the 32-bit counter's range).
pub const MAX_MESSAGES: u64 = 1 << 32;

/// The message fields a nonce carries: (KeyID, SPDU number) for IEC 61850-90-5 SPDUs,
/// (stNum, sqNum) for layer-2 GOOSE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NonceFields {
    /// KeyID, or stNum.
    pub a: u32,
    /// SPDU number, or sqNum.
    pub b: u32,
}

/// Why no nonce could be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NonceError {
    /// The sequence has numbered [`MAX_MESSAGES`] messages; another would repeat a nonce.
    #[error("nonce counter exhausted after 2^32 messages: rotate the key")]
    Exhausted,
}

/// A sender's nonce sequence: a prefix and a strictly increasing counter.
#[derive(Debug)]
pub struct NonceSequence {
    prefix: [u8; 4],
    next: AtomicU64,
}

impl NonceSequence {
    /// A sequence with a fresh random prefix from the operating system's CSPRNG.
    pub fn random() -> Self {
        use rand::RngCore;
        let mut prefix = [0u8; 4];
        rand::rngs::OsRng.fill_bytes(&mut prefix);
        Self::resume(prefix, 0)
    }

    /// A sequence with a chosen prefix (e.g. a persisted boot counter) whose counter starts at
    /// `next`: a sender that persists `(prefix, next)` resumes without ever repeating a nonce.
    pub fn resume(prefix: [u8; 4], next: u64) -> Self {
        NonceSequence {
            prefix,
            next: AtomicU64::new(next),
        }
    }

    /// The prefix.
    pub fn prefix(&self) -> [u8; 4] {
        self.prefix
    }

    /// The counter value the next nonce will carry (what a sender persists).
    pub fn position(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }

    /// The next nonce for a message with `fields`.
    pub fn next(&self, fields: NonceFields) -> Result<[u8; NONCE_LEN], NonceError> {
        // fetch_add on a u64 cannot wrap in practice (2^64 calls); values past the 32-bit
        // counter's range are refused, so every value handed out is distinct.
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        if n >= MAX_MESSAGES {
            self.next.store(MAX_MESSAGES, Ordering::Relaxed);
            return Err(NonceError::Exhausted);
        }
        Ok(pack(self.prefix, fields, n as u32))
    }
}

/// The fixed-width layout: prefix || a || b || counter, big-endian.
pub fn pack(prefix: [u8; 4], fields: NonceFields, counter: u32) -> [u8; NONCE_LEN] {
    let mut n = [0u8; NONCE_LEN];
    n[..4].copy_from_slice(&prefix);
    n[4..8].copy_from_slice(&fields.a.to_be_bytes());
    n[8..12].copy_from_slice(&fields.b.to_be_bytes());
    n[12..].copy_from_slice(&counter.to_be_bytes());
    n
}

/// The process's own sequence, with a random prefix drawn on first use: what
/// [`crate::spdu::IvSource::next_nonce128`] uses unless a source overrides it.
pub fn process_sequence() -> &'static NonceSequence {
    static SEQ: OnceLock<NonceSequence> = OnceLock::new();
    SEQ.get_or_init(NonceSequence::random)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// What a naive implementation would do: concatenate the BER contents octets of stNum and
    /// sqNum (X.690 §8.3, minimal two's complement) and zero-pad to the nonce length.
    fn ber_concat(st: u32, sq: u32) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(gander_wire::ber::encode_u64(st.into()).as_ref());
        v.extend_from_slice(gander_wire::ber::encode_u64(sq.into()).as_ref());
        v.resize(NONCE_LEN, 0);
        v
    }

    #[test]
    fn ber_concatenation_collides_fixed_width_does_not() {
        // Two different (stNum, sqNum) pairs with the same BER concatenation.
        let (x, y) = ((1u32, 256u32), (257u32, 0u32));
        assert_ne!(x, y);
        assert_eq!(ber_concat(x.0, x.1), ber_concat(y.0, y.1));
        let f = |(a, b)| NonceFields { a, b };
        assert_ne!(pack([0; 4], f(x), 0), pack([0; 4], f(y), 0));
        // Exhaustively over a grid: BER collides often, the fixed-width packing never.
        let mut ber = HashSet::new();
        let mut fixed = HashSet::new();
        let mut ber_collisions = 0;
        for st in 0..300u32 {
            for sq in 0..300u32 {
                if !ber.insert(ber_concat(st, sq)) {
                    ber_collisions += 1;
                }
                assert!(
                    fixed.insert(pack([0; 4], NonceFields { a: st, b: sq }, 0)),
                    "fixed-width collision at ({st}, {sq})"
                );
            }
        }
        assert!(ber_collisions > 100, "{ber_collisions}");
    }

    #[test]
    fn a_million_nonces_with_repeated_fields_are_distinct() {
        // The worst case: a publisher that never changes its fields.
        let seq = NonceSequence::random();
        let fields = NonceFields { a: 1, b: 1 };
        let mut seen = HashSet::with_capacity(1 << 20);
        for _ in 0..(1 << 20) {
            assert!(seen.insert(seq.next(fields).unwrap()));
        }
    }

    #[test]
    fn a_resumed_sequence_does_not_repeat_the_previous_run() {
        let fields = NonceFields { a: 9, b: 0 };
        let first = NonceSequence::resume([0, 0, 0, 7], 0);
        let before: HashSet<_> = (0..1000).map(|_| first.next(fields).unwrap()).collect();
        // "Restart": the persisted position resumes the counter, the fields restart.
        let second = NonceSequence::resume(first.prefix(), first.position());
        for _ in 0..1000 {
            assert!(!before.contains(&second.next(fields).unwrap()));
        }
        // A restart with a new boot counter as prefix cannot collide either.
        let third = NonceSequence::resume([0, 0, 0, 8], 0);
        for _ in 0..1000 {
            assert!(!before.contains(&third.next(fields).unwrap()));
        }
    }

    #[test]
    fn exhaustion_is_an_error_not_a_wrap() {
        let seq = NonceSequence::resume([1; 4], MAX_MESSAGES - 2);
        let f = NonceFields { a: 0, b: 0 };
        let last_but_one = seq.next(f).unwrap();
        let last = seq.next(f).unwrap();
        assert_ne!(last_but_one, last);
        assert_eq!(&last[12..], &[0xff; 4]);
        assert_eq!(seq.next(f), Err(NonceError::Exhausted));
        assert_eq!(seq.next(f), Err(NonceError::Exhausted));
    }

    #[test]
    fn layout_is_big_endian_fixed_width() {
        let n = pack(
            [0xaa, 0xbb, 0xcc, 0xdd],
            NonceFields {
                a: 0x0102_0304,
                b: 5,
            },
            0x0607_0809,
        );
        assert_eq!(hex::encode(n), "aabbccdd010203040000000506070809");
    }
}
