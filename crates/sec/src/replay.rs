//! Replay protection.
//!
//! * Sessions (R-GOOSE, R-SV): a sliding window over the 32-bit SPDU number per sender and
//!   APPID, the anti-replay window of RFC 4303 §3.4.3 (IEC 61850-90-5 makes the SPDU number a
//!   per-session counter but leaves the receiver's rule to the implementation; libiec61850 has
//!   none, pitfall P9). Frames may arrive reordered within the window; a number seen before, or
//!   older than the window, is refused. The window only moves after the frame has verified, so a
//!   forged frame cannot advance it.
//! * Layer-2 GOOSE: IEC 61850-8-1's state and sequence numbers. A new state has a larger stNum
//!   (sqNum restarts at 0); a retransmission keeps stNum and increments sqNum. Both wrap (stNum to
//!   1, sqNum to 1), which serial-number arithmetic (RFC 1982) handles.
//!
//! Sequence numbers do not wrap silently in the window: after 2^32 SPDUs a sender must change
//! key, which starts a new window (windows are kept per key id too).

use crate::error::{ReplayKind, SecError};
use std::collections::HashMap;
use std::hash::Hash;

/// Width of the session window in sequence numbers.
pub const WINDOW: u32 = 128;

/// The sliding window of one sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlidingWindow {
    highest: Option<u32>,
    /// Bit i set = `highest - i` was accepted.
    seen: u128,
}

impl SlidingWindow {
    /// Whether `seq` would be accepted (does not change the window).
    pub fn check(&self, seq: u32) -> Result<(), ReplayKind> {
        let Some(h) = self.highest else { return Ok(()) };
        if seq > h {
            return Ok(());
        }
        let age = h - seq;
        if age >= WINDOW {
            return Err(ReplayKind::TooOld);
        }
        if self.seen & (1u128 << age) != 0 {
            return Err(ReplayKind::Duplicate);
        }
        Ok(())
    }

    /// Records `seq` as accepted. Call only after `check` passed and the frame verified.
    pub fn accept(&mut self, seq: u32) {
        match self.highest {
            None => {
                self.highest = Some(seq);
                self.seen = 1;
            }
            Some(h) if seq > h => {
                let shift = seq - h;
                self.seen = if shift >= WINDOW {
                    0
                } else {
                    self.seen << shift
                };
                self.seen |= 1;
                self.highest = Some(seq);
            }
            Some(h) => {
                let age = h - seq;
                if age < WINDOW {
                    self.seen |= 1u128 << age;
                }
            }
        }
    }
}

/// Windows for many senders.
#[derive(Debug)]
pub struct ReplayGuard<K: Eq + Hash> {
    windows: HashMap<K, SlidingWindow>,
}

impl<K: Eq + Hash> Default for ReplayGuard<K> {
    fn default() -> Self {
        ReplayGuard {
            windows: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash + Clone> ReplayGuard<K> {
    /// An empty guard.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks `seq` for `sender` without recording it.
    pub fn check(&self, sender: &K, seq: u32) -> Result<(), SecError> {
        match self.windows.get(sender) {
            None => Ok(()),
            Some(w) => w.check(seq).map_err(|kind| SecError::Replay {
                kind,
                seq: seq as u64,
            }),
        }
    }

    /// Records `seq` for `sender` (after verification).
    pub fn accept(&mut self, sender: K, seq: u32) {
        self.windows.entry(sender).or_default().accept(seq);
    }

    /// Checks and records in one step.
    pub fn check_and_accept(&mut self, sender: K, seq: u32) -> Result<(), SecError> {
        self.check(&sender, seq)?;
        self.accept(sender, seq);
        Ok(())
    }

    /// Number of senders tracked.
    pub fn len(&self) -> usize {
        self.windows.len()
    }

    /// Whether no sender is tracked.
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }
}

/// RFC 1982 serial-number comparison: is `a` after `b`?
fn serial_gt(a: u32, b: u32) -> bool {
    a != b && a.wrapping_sub(b) < 0x8000_0000
}

/// The last accepted (stNum, sqNum) of a GOOSE control block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GooseSequence {
    last: Option<(u32, u32)>,
}

impl GooseSequence {
    /// Whether (st, sq) is newer than what was accepted: a later state, or the same state with
    /// a later sequence number.
    pub fn check(&self, st: u32, sq: u32) -> Result<(), SecError> {
        let Some((ls, lq)) = self.last else {
            return Ok(());
        };
        let newer = serial_gt(st, ls) || (st == ls && serial_gt(sq, lq));
        if newer {
            Ok(())
        } else {
            Err(SecError::Replay {
                kind: if st == ls && sq == lq {
                    ReplayKind::Duplicate
                } else {
                    ReplayKind::NotNewer
                },
                seq: ((st as u64) << 32) | sq as u64,
            })
        }
    }

    /// Records (st, sq) as accepted.
    pub fn accept(&mut self, st: u32, sq: u32) {
        self.last = Some((st, sq));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn window_rules() {
        let mut w = SlidingWindow::default();
        for s in [10u32, 12, 11, 200] {
            assert_eq!(w.check(s), Ok(()));
            w.accept(s);
        }
        assert_eq!(w.check(12), Err(ReplayKind::TooOld));
        assert_eq!(w.check(200), Err(ReplayKind::Duplicate));
        assert_eq!(w.check(199), Ok(()));
        assert_eq!(w.check(200 - WINDOW), Err(ReplayKind::TooOld));
        assert_eq!(w.check(201 - WINDOW), Ok(()));
    }

    #[test]
    fn goose_rules() {
        let mut g = GooseSequence::default();
        g.accept(5, 3);
        assert!(g.check(5, 4).is_ok());
        assert!(g.check(6, 0).is_ok());
        assert!(matches!(
            g.check(5, 3),
            Err(SecError::Replay {
                kind: ReplayKind::Duplicate,
                ..
            })
        ));
        assert!(matches!(
            g.check(5, 2),
            Err(SecError::Replay {
                kind: ReplayKind::NotNewer,
                ..
            })
        ));
        assert!(g.check(4, 100).is_err());
        g.accept(u32::MAX, 0);
        assert!(g.check(1, 0).is_ok(), "stNum wraps to 1");
    }

    proptest! {
        /// No sequence number is ever accepted twice, whatever the arrival order.
        #[test]
        fn never_accepts_twice(seqs in proptest::collection::vec(0u32..400, 1..300)) {
            let mut w = SlidingWindow::default();
            let mut accepted = std::collections::HashSet::new();
            for s in seqs {
                if w.check(s).is_ok() {
                    prop_assert!(accepted.insert(s), "accepted {} twice", s);
                    w.accept(s);
                }
            }
        }

        /// In-order delivery is always accepted.
        #[test]
        fn in_order_is_accepted(start in any::<u32>(), n in 1u32..200) {
            let mut w = SlidingWindow::default();
            for i in 0..n {
                let Some(s) = start.checked_add(i) else { break };
                prop_assert!(w.check(s).is_ok());
                w.accept(s);
            }
        }
    }
}
