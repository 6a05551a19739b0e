//! Inter-arrival times of one stream, in bounded memory, summarised with gander-measure's
//! statistics and set against the IEC 61850-5 transfer-time classes.
//!
//! Every gap is counted and the maximum is exact; the percentiles come from a uniform reservoir
//! of at most [`KEEP`] gaps (Vitter's algorithm R with a fixed-seed generator, so a report is
//! reproducible), which is what keeps a week of 4800 frames/s in a few kilobytes per stream.
//! The same reservoir holds the points of the report's plot.

use gander_measure::stats::nearest_rank;
use gander_measure::transfer_time::{ClassLimit, CLASSES};
use serde::Serialize;

/// Gaps kept per stream for percentiles and the plot.
pub const KEEP: usize = 4096;

/// The inter-arrival state of one stream.
#[derive(Clone, Debug)]
pub struct Arrivals {
    last_ns: Option<u64>,
    seen: u64,
    max_ns: u64,
    /// (capture time, gap before it) pairs, nanoseconds.
    kept: Vec<(u64, u64)>,
    rng: u64,
}

impl Default for Arrivals {
    fn default() -> Self {
        Arrivals {
            last_ns: None,
            seen: 0,
            max_ns: 0,
            kept: Vec::new(),
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }
}

/// The summary of a stream's inter-arrival times.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArrivalSummary {
    /// Gaps measured (frames - 1).
    pub gaps: u64,
    /// Median gap, milliseconds.
    pub p50_ms: f64,
    /// 99th percentile, milliseconds.
    pub p99_ms: f64,
    /// Largest gap, milliseconds.
    pub max_ms: f64,
    /// The fastest IEC 61850-5 transfer-time class (§13.7) whose limit the p99 gap stays
    /// within: a subscriber waiting for this stream's next message waits no longer than that
    /// class allows in 99 % of cases. `None` if even TT1 (1 s) is exceeded.
    pub class: Option<&'static str>,
}

impl Arrivals {
    /// Records a frame captured at `ts_ns`; a frame earlier than the one before (a capture
    /// merged from two interfaces) counts as a zero gap.
    pub fn add(&mut self, ts_ns: u64) {
        if let Some(last) = self.last_ns {
            let gap = ts_ns.saturating_sub(last);
            self.seen += 1;
            self.max_ns = self.max_ns.max(gap);
            if self.kept.len() < KEEP {
                self.kept.push((ts_ns, gap));
            } else {
                // xorshift64*: the reservoir's replacement slot.
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) % self.seen;
                if (r as usize) < KEEP {
                    self.kept[r as usize] = (ts_ns, gap);
                }
            }
        }
        self.last_ns = Some(self.last_ns.map_or(ts_ns, |l| l.max(ts_ns)));
    }

    /// The capture time of the last frame.
    pub fn last_ns(&self) -> Option<u64> {
        self.last_ns
    }

    /// The kept (time, gap) points in time order, for a plot.
    pub fn points(&self) -> Vec<(u64, u64)> {
        let mut p = self.kept.clone();
        p.sort_unstable();
        p
    }

    /// The summary, `None` before two frames.
    pub fn summary(&self) -> Option<ArrivalSummary> {
        if self.kept.is_empty() {
            return None;
        }
        let mut gaps: Vec<u64> = self.kept.iter().map(|p| p.1).collect();
        gaps.sort_unstable();
        let ms = |ns: u64| ns as f64 / 1e6;
        let p99 = nearest_rank(&gaps, 99.0);
        Some(ArrivalSummary {
            gaps: self.seen,
            p50_ms: ms(nearest_rank(&gaps, 50.0)),
            p99_ms: ms(p99),
            max_ms: ms(self.max_ns),
            class: class_within(p99),
        })
    }
}

/// The fastest class whose limit `ns` stays within.
pub fn class_within(ns: u64) -> Option<&'static str> {
    CLASSES
        .iter()
        .find(|c: &&ClassLimit| ns as u128 <= c.limit.as_nanos())
        .map(|c| c.class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_4800_per_second_stream_is_summarised_and_within_tt6() {
        let mut a = Arrivals::default();
        for i in 0..10_000u64 {
            a.add(1_000_000_000 + i * 208_333);
        }
        let s = a.summary().unwrap();
        assert_eq!(s.gaps, 9_999);
        assert!((s.p50_ms - 0.208).abs() < 0.001, "{s:?}");
        assert!((s.max_ms - 0.208).abs() < 0.001);
        assert_eq!(s.class, Some("TT6"));
        assert_eq!(a.points().len(), KEEP);
    }

    #[test]
    fn the_maximum_is_exact_beyond_the_reservoir_and_classes_follow_the_table() {
        let mut a = Arrivals::default();
        let mut t = 0;
        for i in 0..50_000u64 {
            t += if i == 40_000 {
                2_000_000_000
            } else {
                1_000_000
            };
            a.add(t);
        }
        assert!((a.summary().unwrap().max_ms - 2000.0).abs() < 1e-9);
        assert_eq!(class_within(3_000_000), Some("TT6"));
        assert_eq!(class_within(3_000_001), Some("TT5"));
        assert_eq!(class_within(1_000_000_000), Some("TT1"));
        assert_eq!(class_within(1_000_000_001), None);
        assert!(Arrivals::default().summary().is_none());
    }
}
