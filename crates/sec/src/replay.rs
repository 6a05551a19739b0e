//! Replay protection.
//!
//! What identifies a stream is taken only from bytes the IEC 62351-6 MAC (or GCM tag) covers,
//! plus the key that verified them: never from Ethernet addresses, VLAN tags, IP addresses or
//! UDP ports, which an attacker can rewrite on a captured frame without touching its MAC. A
//! stream is (see `docs/gateway.md`, "Replay"):
//!
//! * R-GOOSE/R-SV: (key id, SPDU identifier, APPID of the payload) with the SPDU number;
//! * layer-2 GOOSE: (key id, APPID, gocbRef) with stNum/sqNum: IEC 61850-8-1 numbers states per
//!   GOOSE control block, so two control blocks behind one APPID keep separate sequences.
//!
//! [`ReplayState`] holds both kinds; `gander frame verify` and every gateway driver use it, so
//! both give the same verdict on the same frames.
//!
//! * Sessions (R-GOOSE, R-SV): a sliding window over the 32-bit SPDU number per stream, the
//!   anti-replay window of RFC 4303 §3.4.3 (IEC 61850-90-5 makes the SPDU number a
//!   per-session counter but leaves the receiver's rule to the implementation; libiec61850 has
//!   none, pitfall P9). Frames may arrive reordered within the window; a number seen before, or
//!   older than the window, is refused. The window only moves after the frame has verified, so a
//!   forged frame cannot advance it.
//! * Layer-2 GOOSE: IEC 61850-8-1's state and sequence numbers. A new state has a larger stNum
//!   (sqNum restarts at 0); a retransmission keeps stNum and increments sqNum. Both wrap (stNum to
//!   1, sqNum to 1), which serial-number arithmetic (RFC 1982) handles.
//!
//! Sequence numbers do not wrap silently in the window: after 2^32 SPDUs a sender must change
//! key, which starts a new window (windows are kept per key id too). An SPDU number that
//! "wrapped" under the same key is older than the window and refused, whatever address it
//! comes from.

use crate::error::{ReplayKind, SecError};
use std::collections::HashMap;

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

/// What a verified frame claims about its place in its stream: the input of the replay check.
/// Built from authenticated fields only (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness<'a> {
    /// An R-GOOSE/R-SV SPDU.
    Spdu {
        /// Key id that verified it.
        key_id: u32,
        /// SI byte (0xA1 GOOSE, 0xA2 SV, ...).
        spdu_id: u8,
        /// APPID of the (first) payload element.
        appid: u16,
        /// SPDU number.
        number: u32,
    },
    /// A layer-2 GOOSE frame.
    Goose {
        /// Key id that verified it.
        key_id: u32,
        /// APPID.
        appid: u16,
        /// The GOOSE control block reference from the APDU.
        gocb_ref: &'a str,
        /// stNum.
        st: u32,
        /// sqNum.
        sq: u32,
    },
}

/// The GOOSE control blocks behind one (key id, APPID), each with its sequence.
type ControlBlocks = Vec<(Box<str>, GooseSequence)>;

/// Replay state of one receiver (one direction of a gateway, one capture): SPDU-number windows
/// and GOOSE sequences per stream.
#[derive(Debug, Default)]
pub struct ReplayState {
    spdus: HashMap<(u32, u8, u16), SlidingWindow>,
    /// (key id, APPID) -> one entry per control block; almost always exactly one, so a linear
    /// search on gocbRef needs no allocation per frame.
    goose: HashMap<(u32, u16), ControlBlocks>,
}

impl ReplayState {
    /// Empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the frame is fresh (does not change the state).
    pub fn check(&self, f: &Freshness<'_>) -> Result<(), SecError> {
        match *f {
            Freshness::Spdu {
                key_id,
                spdu_id,
                appid,
                number,
            } => match self.spdus.get(&(key_id, spdu_id, appid)) {
                None => Ok(()),
                Some(w) => w.check(number).map_err(|kind| SecError::Replay {
                    kind,
                    seq: number as u64,
                }),
            },
            Freshness::Goose {
                key_id,
                appid,
                gocb_ref,
                st,
                sq,
            } => self
                .goose
                .get(&(key_id, appid))
                .and_then(|v| v.iter().find(|(g, _)| &**g == gocb_ref))
                .map_or(Ok(()), |(_, seq)| seq.check(st, sq)),
        }
    }

    /// Records the frame as accepted. Call only after [`ReplayState::check`] passed and every
    /// other check on the frame did.
    pub fn accept(&mut self, f: &Freshness<'_>) {
        match *f {
            Freshness::Spdu {
                key_id,
                spdu_id,
                appid,
                number,
            } => self
                .spdus
                .entry((key_id, spdu_id, appid))
                .or_default()
                .accept(number),
            Freshness::Goose {
                key_id,
                appid,
                gocb_ref,
                st,
                sq,
            } => {
                let v = self.goose.entry((key_id, appid)).or_default();
                match v.iter_mut().find(|(g, _)| &**g == gocb_ref) {
                    Some((_, seq)) => seq.accept(st, sq),
                    None => {
                        let mut seq = GooseSequence::default();
                        seq.accept(st, sq);
                        v.push((gocb_ref.into(), seq));
                    }
                }
            }
        }
    }

    /// Checks and records in one step.
    pub fn check_and_accept(&mut self, f: &Freshness<'_>) -> Result<(), SecError> {
        self.check(f)?;
        self.accept(f);
        Ok(())
    }

    /// Number of streams tracked.
    pub fn streams(&self) -> usize {
        self.spdus.len() + self.goose.values().map(Vec::len).sum::<usize>()
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

    #[test]
    fn state_keys_on_authenticated_fields_only() {
        let mut st = ReplayState::new();
        let f = Freshness::Spdu {
            key_id: 1,
            spdu_id: 0xa1,
            appid: 0x10,
            number: 7,
        };
        st.check_and_accept(&f).unwrap();
        assert!(st.check(&f).is_err(), "same stream, same number");
        // Another key or APPID is another stream.
        let other = |key_id, appid| Freshness::Spdu {
            key_id,
            spdu_id: 0xa1,
            appid,
            number: 7,
        };
        assert!(st.check(&other(2, 0x10)).is_ok());
        assert!(st.check(&other(1, 0x11)).is_ok());
        let g = |gocb_ref, st_num, sq| Freshness::Goose {
            key_id: 1,
            appid: 0x10,
            gocb_ref,
            st: st_num,
            sq,
        };
        st.check_and_accept(&g("IED1/LLN0$GO$a", 5, 0)).unwrap();
        st.check_and_accept(&g("IED1/LLN0$GO$b", 1, 0)).unwrap();
        assert!(st.check(&g("IED1/LLN0$GO$a", 5, 0)).is_err());
        assert!(st.check(&g("IED1/LLN0$GO$b", 1, 0)).is_err());
        assert!(st.check(&g("IED1/LLN0$GO$b", 1, 1)).is_ok());
        assert_eq!(st.streams(), 3);
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
