//! SV smpCnt continuity of one stream (IEC 61850-9-2 §8.2, IEC 61850-9-2LE).
//!
//! smpCnt counts samples and wraps to 0: at the number of samples per second when the merging
//! unit is synchronised (9-2LE: 4000 at 50 Hz, 4800 at 60 Hz; smpMod says otherwise), or at any
//! value the unit chose. The wrap is not announced, so it is learnt from the first wrap seen;
//! later wraps at another value, steps back and skipped counts are what this tracker names.

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
    /// A count behind the last one that is not a wrap (delayed or replayed).
    OutOfOrder,
}

/// A step back of fewer counts than this is out of order; a larger one is a wrap with losses.
const BACK_STEP: u32 = 64;

/// The smpCnt state of a stream.
#[derive(Clone, Copy, Debug, Default)]
pub struct SvSeq {
    last: Option<u16>,
    wrap: Option<u32>,
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
            // s < l: a wrap (with losses) or a step back.
            match self.wrap {
                Some(w) if l < w && (w - l - 1) + s < w / 2 => {
                    let missing = (w - l - 1) + s;
                    if missing == 0 {
                        SvEvent::Wrap
                    } else {
                        SvEvent::Gap { missing }
                    }
                }
                Some(_) => return SvEvent::OutOfOrder,
                None if l - s < BACK_STEP => return SvEvent::OutOfOrder,
                None if s == 0 => {
                    self.wrap = Some(l + 1);
                    SvEvent::Wrap
                }
                // A wrap at an unknown value with counts lost after it.
                None => SvEvent::Gap { missing: s },
            }
        };
        self.last = Some(smp);
        ev
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

    proptest! {
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
