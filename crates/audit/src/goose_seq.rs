//! GOOSE stNum/sqNum behaviour of one publisher (IEC 61850-8-1 §18.1.2.5 and Table 60 of Ed.2).
//!
//! A publisher increments stNum on every change of its data set and restarts sqNum at 0 for the
//! first transmission of the new state; each retransmission of the same state increments sqNum.
//! Both counters roll over from 4294967295 to 1 (0 is used only for the first sqNum of a
//! state), and a publisher that restarts begins again at stNum 1, sqNum 0 (some at sqNum 1: a
//! GE F650 in a public capture, ITI/ICS-Security-Tools `pcaps/IEC61850/GOOSE/GOOSE.pcap`). A
//! pair older than the last one whose `t` (the time of its state) is later than every `t` seen
//! is that restart too, whatever its numbers: a delayed or replayed frame carries the time of a
//! state already sent. Everything else a subscriber sees (the same pair twice, a pair older
//! than the last one, numbers skipped) is a duplicate, an out-of-order or replayed frame, or a
//! loss, which is what this tracker names.
//! Counters are compared in serial-number arithmetic (RFC 1982): forward means less than 2^31
//! ahead.

/// What one frame did to the stream's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GooseEvent {
    /// The first frame of the stream.
    First,
    /// The next retransmission of the current state.
    Retransmission,
    /// The next state (stNum + 1); `lost` frames of it were not seen (sqNum did not start at 0).
    StateChange {
        /// sqNum values of the new state that were not seen.
        lost: u32,
    },
    /// The same stNum/sqNum as the frame before.
    Duplicate,
    /// A pair older than the last one, not a restart (a delayed or replayed frame).
    OutOfOrder,
    /// The same state with sqNum values skipped.
    SqGap {
        /// sqNum values not seen.
        missing: u32,
    },
    /// stNum values skipped: state changes not seen.
    StGap {
        /// stNum values not seen.
        missing: u32,
    },
    /// stNum 1, sqNum 0 after another state, or counters that went back with a later `t`: the
    /// publisher restarted.
    Restart,
}

use gander_sec::replay::RestartFence;

/// The successor of a counter that rolls over to 1.
fn next(n: u32) -> u32 {
    if n == u32::MAX {
        1
    } else {
        n + 1
    }
}

/// How far `b` is ahead of `a` (forward only, serial-number arithmetic), `None` if behind.
/// The roll-over skips 0, so crossing it counts one less.
fn ahead(a: u32, b: u32) -> Option<u32> {
    let d = b.wrapping_sub(a);
    if d == 0 || d >= 1 << 31 {
        return None;
    }
    Some(if b < a { d - 1 } else { d })
}

/// The last accepted stNum/sqNum of a stream, and the latest `t` seen in order.
#[derive(Clone, Copy, Debug, Default)]
pub struct GooseSeq {
    last: Option<(u32, u32)>,
    /// The latest `t` and the last restart's (the security library's rule, shared).
    fence: RestartFence,
}

impl GooseSeq {
    /// Judges one frame (its counters and, when readable, its `t`) and, unless it is a
    /// duplicate or out of order, makes it the last.
    pub fn observe(&mut self, st: u32, sq: u32, t: Option<u64>) -> GooseEvent {
        let Some((lst, lsq)) = self.last else {
            self.last = Some((st, sq));
            self.fence.record(t, false);
            return GooseEvent::First;
        };
        if self.fence.before_floor(t) {
            return GooseEvent::OutOfOrder;
        }
        let later_t = self.fence.is_restart(t);
        let ev = if st == lst {
            if sq == lsq && !later_t {
                return GooseEvent::Duplicate;
            }
            match ahead(lsq, sq) {
                Some(1) => GooseEvent::Retransmission,
                Some(d) => GooseEvent::SqGap { missing: d - 1 },
                None if (st == 1 && sq == 0) || later_t => GooseEvent::Restart,
                None => return GooseEvent::OutOfOrder,
            }
        } else if st == next(lst) {
            GooseEvent::StateChange { lost: sq }
        } else if st == 1 && sq == 0 {
            GooseEvent::Restart
        } else {
            match ahead(lst, st) {
                Some(d) => GooseEvent::StGap { missing: d - 1 },
                None if later_t => GooseEvent::Restart,
                None => return GooseEvent::OutOfOrder,
            }
        };
        self.last = Some((st, sq));
        self.fence.record(t, ev == GooseEvent::Restart);
        ev
    }

    /// The last accepted pair.
    pub fn last(&self) -> Option<(u32, u32)> {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(pairs: &[(u32, u32)]) -> Vec<GooseEvent> {
        let mut s = GooseSeq::default();
        pairs.iter().map(|&(a, b)| s.observe(a, b, None)).collect()
    }

    /// The GE F650 of ITI/ICS-Security-Tools pcaps/IEC61850/GOOSE/GOOSE.pcap: stNum 1, sqNum
    /// 10-12 at one `t`, then stNum 1, sqNum 1-5 at a `t` 78 s later. Before, frames 4-8 were
    /// five `goose-out-of-order` findings ("delayed or replayed") and, since out-of-order frames
    /// do not count as arrivals, four `goose-tal-exceeded`; now one restart. The same numbers
    /// at the old `t` are still out of order.
    #[test]
    fn a_restart_at_sqnum_1_is_told_by_its_later_t() {
        use GooseEvent::*;
        let (before, after) = (Some(100u64), Some(178u64));
        let mut s = GooseSeq::default();
        let mut evs: Vec<GooseEvent> = (10..=12).map(|q| s.observe(1, q, before)).collect();
        evs.extend((1..=5).map(|q| s.observe(1, q, after)));
        assert_eq!(
            evs,
            vec![
                First,
                Retransmission,
                Retransmission,
                Restart,
                Retransmission,
                Retransmission,
                Retransmission,
                Retransmission
            ]
        );
        // From before the restart: out of order even where the numbers run ahead.
        assert_eq!(s.observe(1, 11, before), OutOfOrder);
        assert_eq!(s.observe(1, 9, before), OutOfOrder);
        assert_eq!(s.observe(1, 5, after), Duplicate);
        // A higher stNum going back to a low one with a later t (a restart that skipped
        // stNum 1's first transmissions) is a restart as well.
        assert_eq!(s.observe(40, 0, Some(200)), StGap { missing: 38 });
        assert_eq!(s.observe(2, 3, Some(300)), Restart);
    }

    #[test]
    fn a_clean_publisher_is_first_retransmissions_and_state_changes() {
        use GooseEvent::*;
        assert_eq!(
            run(&[(5, 0), (5, 1), (5, 2), (6, 0), (6, 1)]),
            vec![
                First,
                Retransmission,
                Retransmission,
                StateChange { lost: 0 },
                Retransmission
            ]
        );
    }

    #[test]
    fn duplicates_gaps_out_of_order_and_restarts_are_named() {
        use GooseEvent::*;
        assert_eq!(
            run(&[
                (5, 3),
                (5, 3),
                (5, 6),
                (5, 4),
                (8, 0),
                (7, 9),
                (9, 2),
                (1, 0)
            ]),
            vec![
                First,
                Duplicate,
                SqGap { missing: 2 },
                OutOfOrder,
                StGap { missing: 2 },
                OutOfOrder,
                StateChange { lost: 2 },
                Restart
            ]
        );
    }

    #[test]
    fn counters_roll_over_to_one() {
        use GooseEvent::*;
        assert_eq!(
            run(&[(7, u32::MAX), (7, 1), (8, 0)]),
            vec![First, Retransmission, StateChange { lost: 0 }]
        );
        assert_eq!(
            run(&[(u32::MAX - 1, 5), (u32::MAX, 0), (1, 0), (1, 1), (3, 0)]),
            vec![
                First,
                StateChange { lost: 0 },
                StateChange { lost: 0 },
                Retransmission,
                StGap { missing: 1 }
            ]
        );
    }

    proptest! {
        /// A publisher that only retransmits and changes state, from any start, is never
        /// judged anything but first, retransmission or state change.
        #[test]
        fn lawful_sequences_raise_nothing(st in 1u32.., sq in 0u32.., steps in proptest::collection::vec(any::<bool>(), 0..64)) {
            let mut s = GooseSeq::default();
            let (mut st, mut sq) = (st, sq);
            prop_assert_eq!(s.observe(st, sq, None), GooseEvent::First);
            for change in steps {
                if change { st = next(st); sq = 0; } else { sq = next(sq); }
                let ev = s.observe(st, sq, None);
                prop_assert!(matches!(ev, GooseEvent::Retransmission | GooseEvent::StateChange { lost: 0 }), "{:?}", ev);
            }
        }

        /// Whatever arrives, the tracker never panics and a repeated pair is a duplicate.
        #[test]
        fn any_input_is_judged_and_repeats_are_duplicates(pairs in proptest::collection::vec((any::<u32>(), any::<u32>()), 1..64)) {
            let mut s = GooseSeq::default();
            for (a, b) in pairs {
                let _ = s.observe(a, b, None);
                if let Some((x, y)) = s.last() {
                    prop_assert_eq!(s.observe(x, y, None), GooseEvent::Duplicate);
                }
            }
        }
    }
}
