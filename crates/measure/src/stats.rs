//! Summary statistics over kept raw samples.
//!
//! Every number a gander report prints comes from raw samples that are kept (`docs/measurement.md`,
//! "How results are measured"): n, mean, sample standard deviation, min, max, median, p95, p99
//! and the 95% confidence interval of the mean, the quantities the gateway paper reports in its
//! Table 8 (average, max, min, C.I. 95%) plus the percentiles a latency budget needs.
//!
//! Conventions, so that two reports can be compared:
//!
//! * **Percentiles use the nearest-rank method**: the p-th percentile of n sorted samples is the
//!   sample of 1-based rank `ceil(p/100 * n)` (rank 1 for p = 0). It is always a value that was
//!   actually observed, which suits latencies (no interpolated time that never happened).
//! * **The standard deviation is the sample one** (Bessel's correction, divisor n - 1); 0 for a
//!   single sample.
//! * **The 95% confidence interval of the mean** is `t * sd / sqrt(n)`, where `t` is Student's
//!   two-sided 97.5% quantile with n - 1 degrees of freedom for small n and 1.96 (the normal
//!   quantile) from 120 degrees of freedom on. Between tabulated degrees of freedom the value of
//!   the next *smaller* tabulated one is used, which is slightly conservative (a wider interval).
//! * **Warm-up** samples are measured, then discarded and counted ([`split_warmup`]).

use serde::Serialize;

/// Summary of one set of samples, in the samples' unit (nanoseconds in gander) scaled by
/// [`Summary::scaled`] when samples are batch totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor n - 1).
    pub sd: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 95th percentile (nearest rank).
    pub p95: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Half-width of the 95% confidence interval of the mean.
    pub ci95: f64,
}

impl Summary {
    /// Summarises `samples`; `None` if there are none. The input order does not matter.
    pub fn from_samples(samples: &[u64]) -> Option<Summary> {
        let n = samples.len();
        if n == 0 {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        // Exact sum first (u128 cannot overflow for any realistic n), then one division.
        let sum: u128 = sorted.iter().map(|&s| s as u128).sum();
        let mean = sum as f64 / n as f64;
        let sd = if n > 1 {
            let ss: f64 = sorted.iter().map(|&s| (s as f64 - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci95 = if n > 1 {
            t975(n - 1) * sd / (n as f64).sqrt()
        } else {
            0.0
        };
        Some(Summary {
            n,
            mean,
            sd,
            min: sorted[0] as f64,
            max: sorted[n - 1] as f64,
            p50: nearest_rank(&sorted, 50.0) as f64,
            p95: nearest_rank(&sorted, 95.0) as f64,
            p99: nearest_rank(&sorted, 99.0) as f64,
            ci95,
        })
    }

    /// Summarises signed samples, e.g. differences of timestamps taken in two threads, which can be
    /// negative on loopback. They are shifted by their minimum, summarised exactly as
    /// [`Summary::from_samples`] (same conventions) and shifted back; `None` if there are none.
    pub fn from_signed_samples(samples: &[i64]) -> Option<Summary> {
        let low = *samples.iter().min()?;
        // i128: the span of two i64 always fits in a u64.
        let shifted: Vec<u64> = samples
            .iter()
            .map(|&s| (s as i128 - low as i128) as u64)
            .collect();
        let s = Summary::from_samples(&shifted)?;
        let m = low as f64;
        Some(Summary {
            mean: s.mean + m,
            min: s.min + m,
            max: s.max + m,
            p50: s.p50 + m,
            p95: s.p95 + m,
            p99: s.p99 + m,
            ..s
        })
    }

    /// Every statistic multiplied by `factor` (all of them are linear in the samples). Used to
    /// turn batch totals into per-operation times: `scaled(1.0 / batch as f64)`.
    pub fn scaled(self, factor: f64) -> Summary {
        Summary {
            n: self.n,
            mean: self.mean * factor,
            sd: self.sd * factor,
            min: self.min * factor,
            max: self.max * factor,
            p50: self.p50 * factor,
            p95: self.p95 * factor,
            p99: self.p99 * factor,
            ci95: self.ci95 * factor,
        }
    }

    /// Coefficient of variation (sd / mean), 0 when the mean is 0.
    pub fn cv(&self) -> f64 {
        if self.mean > 0.0 {
            self.sd / self.mean
        } else {
            0.0
        }
    }
}

/// The nearest-rank percentile of an ascending, non-empty slice: the sample of 1-based rank
/// `ceil(p/100 * n)`, at least rank 1.
///
/// # Panics
/// If `sorted` is empty or `p` is outside 0..=100 (caller bugs).
pub fn nearest_rank(sorted: &[u64], p: f64) -> u64 {
    assert!(!sorted.is_empty(), "percentile of no samples");
    assert!((0.0..=100.0).contains(&p), "percentile {p} out of range");
    let n = sorted.len();
    // Integer arithmetic for the usual whole percentiles avoids 0.95 * 100 = 94.999... cases.
    let rank = if p.fract() == 0.0 {
        (p as usize * n).div_ceil(100)
    } else {
        (p / 100.0 * n as f64).ceil() as usize
    };
    sorted[rank.clamp(1, n) - 1]
}

/// Student's t, two-sided 95% (the 0.975 quantile), for `df` degrees of freedom; 1.96 from
/// 120 on. Values from the standard table (e.g. NIST/SEMATECH e-Handbook §1.3.6.7.2).
pub fn t975(df: usize) -> f64 {
    const SMALL: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, // 1..=10
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, // 11..=20
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042, // 21..=30
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => SMALL[df - 1],
        31..=39 => 2.042,
        40..=59 => 2.021,
        60..=119 => 2.000,
        _ => 1.960,
    }
}

/// Splits measured samples into the discarded warm-up (the first `warmup`) and the kept rest.
/// If fewer than `warmup` samples were taken, all of them are warm-up.
pub fn split_warmup(samples: &[u64], warmup: usize) -> (&[u64], &[u64]) {
    samples.split_at(warmup.min(samples.len()))
}

/// How many warm-up samples to take before `reps` kept ones: 2% of `reps`, at least 5 and at
/// most 5,000. Caches, branch predictors, lazily initialised CPU-feature detection and the
/// allocator all settle within the first few hundred operations; 5,000 samples also spans many
/// scheduler ticks at the default 500,000 repetitions.
pub fn warmup_for(reps: usize) -> usize {
    (reps / 50).clamp(5, 5_000)
}

/// The ranks (1-based, among `n` ascending samples) of a distribution-free 95% confidence
/// interval of the quantile `q` (0 < q < 1). For any continuous distribution the number of
/// samples at or below the true quantile is Binomial(n, q), so the sample of rank `r` lies
/// above it with probability P(B < r) and below it with probability P(B >= r) (order
/// statistics; Hahn & Meeker, "Statistical Intervals", §5.2). `lower` is the largest rank
/// whose tail is at most 2.5 %, `upper` the smallest; together they cover the quantile with
/// probability at least 95 %.
///
/// A bound is `None` when no rank gives its tail 2.5 % or less: a p99's upper bound needs
/// `0.99^n <= 0.025`, n >= 368. With fewer samples a p99 is only known to be at least its
/// lower bound: the p99 of `gander bench gateway --quick`'s 190 samples is its second-largest
/// sample, and one slow wake-up more or less moves it by the whole tail.
pub fn quantile_ci_ranks(n: usize, q: f64) -> (Option<usize>, Option<usize>) {
    if n == 0 || !(q > 0.0 && q < 1.0) {
        return (None, None);
    }
    const TAIL: f64 = 0.025;
    // P(B = i) in log space from i = 0 (q^n and (1-q)^n underflow for n in the thousands).
    let (lq, lp) = (q.ln(), (1.0 - q).ln());
    let mut pmf = Vec::with_capacity(n + 1);
    let mut l = n as f64 * lp;
    for i in 0..=n {
        pmf.push(l.exp());
        if i < n {
            l += ((n - i) as f64).ln() - ((i + 1) as f64).ln() + lq - lp;
        }
    }
    // lower: the largest r >= 1 with P(B <= r - 1) <= TAIL.
    let mut below = 0.0;
    let mut lower = None;
    for r in 1..=n {
        below += pmf[r - 1];
        if below > TAIL {
            break;
        }
        lower = Some(r);
    }
    // upper: the smallest r <= n with P(B >= r) <= TAIL (summed from the top, no cancellation).
    let mut above = 0.0;
    let mut upper = None;
    for r in (1..=n).rev() {
        above += pmf[r];
        if above > TAIL {
            break;
        }
        upper = Some(r);
    }
    (lower, upper)
}

/// The sample values at [`quantile_ci_ranks`] of an ascending slice.
pub fn quantile_ci(sorted: &[u64], q: f64) -> (Option<u64>, Option<u64>) {
    let (l, u) = quantile_ci_ranks(sorted.len(), q);
    let at = |r: Option<usize>| r.and_then(|r| sorted.get(r - 1).copied());
    (at(l), at(u))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    /// 2, 4, 4, 4, 5, 5, 7, 9: the textbook set. Mean 5, sum of squared deviations 32,
    /// sample variance 32/7, sd = sqrt(32/7) = 2.138089935...
    #[test]
    fn textbook_set() {
        let s = Summary::from_samples(&[9, 4, 5, 4, 2, 7, 4, 5]).unwrap();
        assert_eq!(s.n, 8);
        assert!(close(s.mean, 5.0));
        assert!(close(s.sd, (32.0f64 / 7.0).sqrt()));
        assert_eq!((s.min, s.max), (2.0, 9.0));
        // Nearest rank: p50 -> rank ceil(4) = 4 -> 4; p95 -> ceil(7.6) = 8 -> 9; p99 -> 8 -> 9.
        assert_eq!((s.p50, s.p95, s.p99), (4.0, 9.0, 9.0));
        // df = 7: t = 2.365; 2.365 * 2.1380899 / sqrt(8) = 1.7877720
        assert!(close(s.ci95, 2.365 * (32.0f64 / 7.0).sqrt() / 8f64.sqrt()));
        assert!((s.ci95 - 1.787772).abs() < 1e-6);
    }

    /// 1..=100: mean 50.5, sd = sqrt(n(n+1)/12) = sqrt(841.6667) = 29.011491...,
    /// nearest-rank p50 = 50, p95 = 95, p99 = 99; df = 99 -> t = 2.000 (next smaller
    /// tabulated df, 60).
    #[test]
    fn one_to_hundred() {
        let v: Vec<u64> = (1..=100).rev().collect();
        let s = Summary::from_samples(&v).unwrap();
        assert!(close(s.mean, 50.5));
        assert!(close(s.sd, (100.0f64 * 101.0 / 12.0).sqrt()));
        assert!((s.sd - 29.011491975882016).abs() < 1e-9);
        assert_eq!((s.p50, s.p95, s.p99), (50.0, 95.0, 99.0));
        assert!(close(s.ci95, 2.0 * s.sd / 10.0));
    }

    /// Large n uses 1.96: 1000 samples alternating 0 and 2 -> mean 1, sd = sqrt(1000/999).
    #[test]
    fn large_n_uses_normal_quantile() {
        let v: Vec<u64> = (0..1000).map(|i| if i % 2 == 0 { 0 } else { 2 }).collect();
        let s = Summary::from_samples(&v).unwrap();
        assert!(close(s.mean, 1.0));
        assert!(close(s.sd, (1000.0f64 / 999.0).sqrt()));
        assert!(close(s.ci95, 1.96 * s.sd / 1000f64.sqrt()));
        // p50: rank 500 of [0 x500, 2 x500] -> 0; p95 -> 2.
        assert_eq!((s.p50, s.p95), (0.0, 2.0));
    }

    #[test]
    fn single_and_empty() {
        assert!(Summary::from_samples(&[]).is_none());
        let s = Summary::from_samples(&[42]).unwrap();
        assert_eq!((s.n, s.mean, s.sd, s.ci95), (1, 42.0, 0.0, 0.0));
        assert_eq!((s.min, s.p50, s.p99, s.max), (42.0, 42.0, 42.0, 42.0));
    }

    #[test]
    fn nearest_rank_edges() {
        let v = [10u64, 20, 30, 40, 50];
        assert_eq!(nearest_rank(&v, 0.0), 10);
        assert_eq!(nearest_rank(&v, 20.0), 10); // rank ceil(1.0) = 1
        assert_eq!(nearest_rank(&v, 20.5), 20); // rank ceil(1.025) = 2
        assert_eq!(nearest_rank(&v, 50.0), 30); // rank ceil(2.5) = 3
        assert_eq!(nearest_rank(&v, 100.0), 50);
    }

    #[test]
    fn huge_values_do_not_overflow_the_mean() {
        let s = Summary::from_samples(&[u64::MAX, u64::MAX]).unwrap();
        assert!(close(s.mean, u64::MAX as f64));
        assert_eq!(s.sd, 0.0);
    }

    #[test]
    fn signed_samples_match_unsigned_and_allow_negatives() {
        let u = Summary::from_samples(&[9, 4, 5, 4, 2, 7, 4, 5]).unwrap();
        let s = Summary::from_signed_samples(&[9, 4, 5, 4, 2, 7, 4, 5]).unwrap();
        assert_eq!(
            (s.n, s.min, s.max, s.p50, s.p95, s.p99),
            (u.n, u.min, u.max, u.p50, u.p95, u.p99)
        );
        assert!(close(s.mean, u.mean) && close(s.sd, u.sd) && close(s.ci95, u.ci95));
        // The same set moved down by 6: -4 -2 -2 -2 -1 -1 1 3.
        let n = Summary::from_signed_samples(&[3, -2, -1, -2, -4, 1, -2, -1]).unwrap();
        assert!(close(n.mean, -1.0) && close(n.sd, u.sd));
        assert_eq!((n.min, n.p50, n.p99, n.max), (-4.0, -2.0, 3.0, 3.0));
        let e = Summary::from_signed_samples(&[i64::MIN, i64::MAX]).unwrap();
        assert_eq!((e.min, e.max), (i64::MIN as f64, i64::MAX as f64));
        assert!(Summary::from_signed_samples(&[]).is_none());
    }

    #[test]
    fn scaling_divides_everything() {
        let s = Summary::from_samples(&[100, 200, 300]).unwrap().scaled(0.1);
        assert!(close(s.mean, 20.0));
        assert!(close(s.sd, 10.0));
        assert_eq!((s.min, s.p50, s.max), (10.0, 20.0, 30.0));
        assert_eq!(s.n, 3);
    }

    #[test]
    fn t_table() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(30), 2.042);
        assert_eq!(t975(49), 2.021);
        assert_eq!(t975(119), 2.000);
        assert_eq!(t975(120), 1.960);
        assert!(t975(0).is_infinite());
    }

    #[test]
    fn warmup_split_and_count() {
        let v = [1u64, 2, 3, 4, 5];
        assert_eq!(split_warmup(&v, 2), (&v[..2], &v[2..]));
        assert_eq!(split_warmup(&v, 9), (&v[..], &[][..]));
        assert_eq!(warmup_for(50), 5);
        assert_eq!(warmup_for(3_000), 60);
        assert_eq!(warmup_for(500_000), 5_000);
    }

    /// The textbook case: the 95% interval of the median of 10 samples is ranks 2 to 9
    /// (coverage 1 - 2 x 11/1024 = 0.9785; ranks 3 to 8 would cover only 0.891).
    #[test]
    fn median_of_ten_is_ranks_two_to_nine() {
        assert_eq!(quantile_ci_ranks(10, 0.5), (Some(2), Some(9)));
        let v: Vec<u64> = (1..=10).map(|x| x * 10).collect();
        assert_eq!(quantile_ci(&v, 0.5), (Some(20), Some(90)));
    }

    /// A p99 has an upper bound only from 368 samples on (0.99^367 = 0.02501 > 0.025 >=
    /// 0.99^368), and with 1000 samples both bounds sit inside the sample.
    #[test]
    fn p99_needs_368_samples_for_an_upper_bound() {
        assert_eq!(quantile_ci_ranks(190, 0.99).1, None);
        assert_eq!(quantile_ci_ranks(367, 0.99).1, None);
        assert_eq!(quantile_ci_ranks(368, 0.99).1, Some(368));
        let (l, u) = quantile_ci_ranks(1000, 0.99);
        let (l, u) = (l.unwrap(), u.unwrap());
        assert!(
            (980..990).contains(&l) && (991..1000).contains(&u),
            "{l} {u}"
        );
        assert_eq!(quantile_ci_ranks(0, 0.99), (None, None));
        assert_eq!(quantile_ci_ranks(10, 1.0), (None, None));
    }

    proptest::proptest! {
        /// The ranks agree with a direct binomial sum (exact coefficients for small n): each
        /// tail is at most 2.5 %, and one rank further would make it exceed 2.5 %.
        #[test]
        fn ci_ranks_agree_with_a_direct_sum(n in 1usize..60, q in 0.01f64..0.99) {
            let choose = |k: usize| -> f64 {
                (0..k).fold(1.0f64, |c, i| c * (n - i) as f64 / (i + 1) as f64)
            };
            let pmf = |k: usize| choose(k) * q.powi(k as i32) * (1.0 - q).powi((n - k) as i32);
            let below = |r: usize| (0..r).map(pmf).sum::<f64>(); // P(B < r)
            let above = |r: usize| (r..=n).map(pmf).sum::<f64>(); // P(B >= r)
            let (l, u) = quantile_ci_ranks(n, q);
            match l {
                Some(l) => {
                    proptest::prop_assert!(below(l) <= 0.025 + 1e-12);
                    proptest::prop_assert!(l == n || below(l + 1) > 0.025 - 1e-12);
                }
                None => proptest::prop_assert!(below(1) > 0.025 - 1e-12),
            }
            match u {
                Some(u) => {
                    proptest::prop_assert!(above(u) <= 0.025 + 1e-12);
                    proptest::prop_assert!(u == 1 || above(u - 1) > 0.025 - 1e-12);
                }
                None => proptest::prop_assert!(above(n) > 0.025 - 1e-12),
            }
        }
    }
}
