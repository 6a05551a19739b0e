//! SV smpCnt continuity of one stream (IEC 61850-9-2 §8.2, IEC 61850-9-2LE).
//!
//! smpCnt counts samples and wraps to 0: at the number of samples per second when the merging
//! unit is synchronised (9-2LE: 4000 at 50 Hz, 4800 at 60 Hz; smpMod says otherwise), or at any
//! value the unit chose. The wrap is not announced, so it is learnt from the first wrap seen;
//! later wraps at another value, steps back and skipped counts are what this tracker names.
//!
//! A wrap is a return to **0** from the highest count of the stream (a counter reaches its wrap
//! from its top), at least [`BACK_STEP`] counts back; once the wrap is known, also a step from
//! near it to a small count (the samples around the wrap lost). Any other step back is out of
//! order, and the last count stays where it was: an attacker injecting smpCnt 1, 2, 3 into a
//! stream at 309, 310, 311 (the public QUT SV capture the field test used) is out of order at
//! every injected frame, and the real stream goes on undisturbed. (Taking a step back to 1 as
//! "a wrap at an unknown value" once made the whole injection a run of `sv-gap`s.) Should the
//! counts really continue from below, [`RESYNC`] consecutive counts with no in-order count
//! between them are taken as the stream's new position ([`SvEvent::Resync`]): a restart, or
//! the first wrap with its 0 not captured.

/// What one ASDU's smpCnt did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SvEvent {
    /// The first sample of the stream.
    First,
    /// The next count.
    Next,
    /// Back to 0 after the count the stream wraps at.
    Wrap,
    /// The same count as before.
    Duplicate,
    /// Counts skipped (possibly across a wrap).
    Gap {
        /// Samples not seen.
        missing: u32,
    },
    /// A count behind the last one that is not a wrap (delayed, replayed or injected).
    OutOfOrder,
    /// [`RESYNC`] counts in a row, each one more than the one before, behind the last in-order
    /// count and with none in order between them: the stream continues from here (a restart,
    /// or a wrap whose 0 was not captured before the wrap value was known). The counts before
    /// this one were [`SvEvent::OutOfOrder`].
    Resync,
}

/// Consecutive counts behind the last that are taken as the stream's new position.
pub const RESYNC: u32 = 3;

/// A return to 0 from fewer counts than this is out of order, not a wrap (no merging unit
/// wraps below 64 samples).
pub const BACK_STEP: u32 = 64;

/// The smpCnt state of a stream.
#[derive(Clone, Copy, Debug, Default)]
pub struct SvSeq {
    last: Option<u16>,
    wrap: Option<u32>,
    /// The last count that was out of order, and how many in a row continued each other.
    behind: Option<(u16, u32)>,
}

impl SvSeq {
    /// Judges one smpCnt and, unless it is a duplicate or out of order, makes it the last.
    pub fn observe(&mut self, smp: u16) -> SvEvent {
        let Some(last) = self.last else {
            self.last = Some(smp);
            return SvEvent::First;
        };
        let (l, s) = (u32::from(last), u32::from(smp));
        let ev = if s == l {
            return SvEvent::Duplicate;
        } else if s == l + 1 {
            SvEvent::Next
        } else if s > l {
            SvEvent::Gap { missing: s - l - 1 }
        } else {
            // s < l: a wrap (with losses around it, once the wrap is known) or a step back.
            match self.wrap {
                Some(w) if l < w && (w - l - 1) + s < w / 2 => {
                    let missing = (w - l - 1) + s;
                    if missing == 0 {
                        SvEvent::Wrap
                    } else {
                        SvEvent::Gap { missing }
                    }
                }
                // `l` is the highest count since the last wrap: out-of-order counts never
                // become the last one.
                None if s == 0 && l >= BACK_STEP => {
                    self.wrap = Some(l + 1);
                    SvEvent::Wrap
                }
                _ => return self.behind(smp),
            }
        };
        self.behind = None;
        self.last = Some(smp);
        ev
    }

    /// A count behind the last that is not a wrap: out of order, unless it is the
    /// [`RESYNC`]th of a run of counts that continue each other with nothing in order between.
    fn behind(&mut self, smp: u16) -> SvEvent {
        let run = match self.behind {
            Some((b, n)) if u32::from(smp) == u32::from(b) + 1 => n + 1,
            _ => 1,
        };
        if run >= RESYNC {
            self.behind = None;
            self.last = Some(smp);
            return SvEvent::Resync;
        }
        self.behind = Some((smp, run));
        SvEvent::OutOfOrder
    }

    /// The last count in order (what a count out of order is behind).
    pub fn last(&self) -> Option<u16> {
        self.last
    }

    /// The count the stream wraps at, once a wrap was seen.
    pub fn wrap(&self) -> Option<u32> {
        self.wrap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(counts: &[u16]) -> Vec<SvEvent> {
        let mut s = SvSeq::default();
        counts.iter().map(|&c| s.observe(c)).collect()
    }

    #[test]
    fn a_wrap_is_learnt_and_later_losses_across_it_are_counted() {
        use SvEvent::*;
        assert_eq!(
            run(&[3998, 3999, 0, 1, 3999, 2, 2, 1]),
            vec![
                First,
                Next,
                Wrap,
                Next,
                Gap { missing: 3997 },
                Gap { missing: 2 },
                Duplicate,
                OutOfOrder
            ]
        );
    }

    #[test]
    fn small_steps_back_are_out_of_order_before_any_wrap() {
        use SvEvent::*;
        assert_eq!(
            run(&[100, 101, 99, 105]),
            vec![First, Next, OutOfOrder, Gap { missing: 3 }]
        );
    }

    /// The field test's QUT SV capture (QUTSV_9311a, tshark frames 650-654: smpCnt 309, 1,
    /// 310, 2): an attacker injects smpCnt 1, 2, 3, ... on the APPID of a real stream. Every
    /// injected count is out of order and the real stream counts on; no wrap is learnt from
    /// a step back to a count other than 0.
    #[test]
    fn injected_low_counts_are_out_of_order_not_a_wrap() {
        use SvEvent::*;
        let mut s = SvSeq::default();
        assert_eq!(s.observe(308), First);
        for k in 0..300u16 {
            assert_eq!(s.observe(309 + k), Next, "real {}", 309 + k);
            assert_eq!(s.observe(1 + k), OutOfOrder, "injected {}", 1 + k);
        }
        assert_eq!(s.wrap(), None);
        assert_eq!(s.last(), Some(608));
        // A return to 0 from the top is still a wrap.
        assert_eq!(s.observe(0), Wrap);
        assert_eq!(s.wrap(), Some(609));
    }

    /// A step back to 0 from a small count is no wrap; counts that continue from below for
    /// RESYNC samples with nothing in order between are the stream's new position (the first
    /// wrap with its 0 lost).
    #[test]
    fn a_run_from_below_resyncs_and_a_small_return_to_0_does_not_wrap() {
        use SvEvent::*;
        assert_eq!(run(&[40, 41, 0, 42]), vec![First, Next, OutOfOrder, Next]);
        assert_eq!(
            run(&[3998, 3999, 1, 2, 3, 4]),
            vec![First, Next, OutOfOrder, OutOfOrder, Resync, Next]
        );
    }

    proptest! {
        /// Whatever low counts are injected between the frames of a lawful stream (counting
        /// from `start`, below its first wrap), each injected one is out of order and each
        /// real one is the next count.
        #[test]
        fn injection_between_real_counts_is_always_out_of_order(start in 200u16..3000, injected in proptest::collection::vec(1u16..150, 1..200)) {
            let mut s = SvSeq::default();
            prop_assert_eq!(s.observe(start), SvEvent::First);
            for (k, c) in injected.iter().enumerate() {
                prop_assert_eq!(s.observe(*c), SvEvent::OutOfOrder);
                prop_assert_eq!(s.observe(start + 1 + k as u16), SvEvent::Next);
            }
        }

        /// A unit that counts 0..wrap over and over raises nothing but the wraps.
        #[test]
        fn lawful_counting_raises_nothing(wrap in 100u16..=u16::MAX, start in 0u16..100, n in 1usize..3000) {
            let mut s = SvSeq::default();
            let mut c = start;
            prop_assert_eq!(s.observe(c), SvEvent::First);
            for _ in 0..n {
                c = if u32::from(c) + 1 >= u32::from(wrap) { 0 } else { c + 1 };
                let ev = s.observe(c);
                prop_assert!(matches!(ev, SvEvent::Next | SvEvent::Wrap), "{:?} at {}", ev, c);
            }
        }

        /// Any sequence is judged without panicking.
        #[test]
        fn any_counts_are_judged(counts in proptest::collection::vec(any::<u16>(), 1..200)) {
            let mut s = SvSeq::default();
            for c in counts { let _ = s.observe(c); }
        }
    }
}
