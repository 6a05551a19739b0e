//! Milliseconds summaries of kept nanosecond samples, with the conventions of
//! `gander_measure::stats` (nearest-rank percentiles, sample standard deviation), so a probe's
//! figures compare with every other gander table (`docs/measurement.md`).
use gander_measure::stats::{nearest_rank, Summary};
use serde::Serialize;

/// n, median, p90, min, max and mean of one set of samples, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MsSummary {
    /// Number of samples.
    pub n: usize,
    /// Median (nearest rank).
    pub median: f64,
    /// 90th percentile (nearest rank).
    pub p90: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub sd: f64,
}

fn ms(ns: f64) -> f64 {
    // Three decimals (microseconds): more digits than the clock's meaning would be noise.
    (ns / 1e3).round() / 1e3
}

impl MsSummary {
    /// Summarises nanosecond samples; `None` if there are none.
    pub fn from_ns(samples: &[u64]) -> Option<MsSummary> {
        let s = Summary::from_samples(samples)?;
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        Some(MsSummary {
            n: s.n,
            median: ms(s.p50),
            p90: ms(nearest_rank(&sorted, 90.0) as f64),
            min: ms(s.min),
            max: ms(s.max),
            mean: ms(s.mean),
            sd: ms(s.sd),
        })
    }

    /// Summarises signed nanosecond samples (latencies against another clock can be negative
    /// when the clocks are not as synchronised as declared); `None` if there are none.
    pub fn from_signed_ns(samples: &[i64]) -> Option<MsSummary> {
        let s = Summary::from_signed_samples(samples)?;
        let low = *samples.iter().min()?;
        let shifted: Vec<u64> = samples
            .iter()
            .map(|&x| (x as i128 - low as i128) as u64)
            .collect();
        let mut sorted = shifted;
        sorted.sort_unstable();
        Some(MsSummary {
            n: s.n,
            median: ms(s.p50),
            p90: ms(nearest_rank(&sorted, 90.0) as f64 + low as f64),
            min: ms(s.min),
            max: ms(s.max),
            mean: ms(s.mean),
            sd: ms(s.sd),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_in_milliseconds() {
        // 1..=10 ms: median rank 5, p90 rank 9.
        let v: Vec<u64> = (1..=10).map(|i| i * 1_000_000).collect();
        let s = MsSummary::from_ns(&v).unwrap();
        assert_eq!(
            (s.n, s.median, s.p90, s.min, s.max),
            (10, 5.0, 9.0, 1.0, 10.0)
        );
        assert_eq!(s.mean, 5.5);
        assert!(MsSummary::from_ns(&[]).is_none());
        let one = MsSummary::from_ns(&[1_234_567]).unwrap();
        assert_eq!((one.median, one.sd), (1.235, 0.0));
    }

    #[test]
    fn signed_samples_keep_their_sign() {
        let v: Vec<i64> = (-5..5).map(|i| i * 1_000_000).collect();
        let s = MsSummary::from_signed_ns(&v).unwrap();
        assert_eq!((s.min, s.max, s.median, s.p90), (-5.0, 4.0, -1.0, 3.0));
    }
}
