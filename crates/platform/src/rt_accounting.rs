//! RT accounting: where one report's RT over TLS goes, from measurements of the same run
//! (`docs/measurement.md`, "RT accounting"), as [`crate::accounting`] does for HT.
//!
//! The median RT over TLS of a gander/gander report row is split into
//! * the **transport**: the median RT of the same exchange in cleartext, measured in the same
//!   run in blocks interleaved with the TLS blocks: MMS encoding and decoding, the event log,
//!   both processes' wake-ups and the kernel's loopback, everything but TLS;
//! * the **record crypto**: AEAD seal + open of one record of the report's size with the row's
//!   provider ([`crate::record_crypto`]);
//! * the **library**: the in-memory record round trip ([`gander_tls::record_rt`]: the same
//!   backend objects, server write and client read of one record in one thread) minus the same
//!   octets over a plain loopback pair, minus the record crypto: record framing, buffers, the
//!   library's extra system calls;
//! * **gander's own**: the rest, `RT - transport - (record crypto + library)`: whatever the run
//!   adds around the TLS record that the cleartext exchange does not have (how gander drives
//!   the library: its writes per report, flushes, polls, read sizes, copies), plus what the
//!   in-memory pair cannot show (a wake-up the record layer adds).
//!
//! Targets (`gander run` prints them from one run): gander's own share <= 5% of RT and RT over
//! TLS <= 1.2x cleartext for the headline suite on every library.

use crate::record_crypto::{self, Aead};
use crate::scenario::{Case, Stack};
use serde::{Deserialize, Serialize};

/// In-memory record round trips timed back to back per row (after [`RECORD_WARMUP`]),
/// alternating with as many over the plain pair.
pub const RECORD_N: usize = 2000;
/// Untimed record round trips first.
pub const RECORD_WARMUP: usize = 200;
/// In-memory record round trips timed at the row's report period (after 10 untimed).
pub const PACED_N: usize = 200;
/// The longest pause between paced records: a run with reports every 500 ms would take minutes
/// to pace; after a few milliseconds asleep the caches are as cold as they get on a busy host.
pub const PACE_MAX: std::time::Duration = std::time::Duration::from_millis(5);
/// Seal + open pairs timed per row.
pub const CRYPTO_N: usize = 5000;
/// gander's own share of RT that meets the target.
pub const GANDER_SHARE_LIMIT: f64 = 0.05;
/// The verdict of a share below `-GANDER_SHARE_LIMIT`: the rest is negative by more than the
/// limit, so the run's noise (cleartext blocks slower than TLS blocks) is larger than what is
/// judged, and "met" would claim what was not shown.
pub const INCONCLUSIVE: &str = "inconclusive";

/// One row's RT accounting, ms (medians).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RtAccounting {
    /// Median RT over TLS.
    pub rt_ms: f64,
    /// Median RT of the same exchange in cleartext, same run: the transport.
    pub transport_ms: f64,
    /// Median octets the server wrote per report (the TPKT packet, before TLS).
    pub record_bytes: u64,
    /// The most writes any report over TLS took (1: one TLS record per report).
    pub writes_max: u64,
    /// AEAD seal + open of one record of `record_bytes` (none for suites without an AEAD).
    pub crypto_ms: Option<f64>,
    /// The provider the record crypto was timed with.
    pub crypto_library: Option<String>,
    /// Median in-memory record round trip over TLS (server write + client read, one thread),
    /// one record per report period (at most [`PACE_MAX`]) as in the run.
    pub record_tls_ms: f64,
    /// Median of the same octets over a plain loopback pair in the same thread, same pace.
    pub record_plain_ms: f64,
    /// Paced record round trips timed on each pair.
    pub record_n: usize,
    /// The pause before each paced record, ms.
    pub record_pace_ms: f64,
    /// The same two medians with the records back to back (warm caches), ms: information.
    pub record_hot_tls_ms: f64,
    /// See `record_hot_tls_ms`.
    pub record_hot_plain_ms: f64,
    /// `record_tls - record_plain - crypto`: the library's own work per record.
    pub library_ms: f64,
    /// `rt - transport - (record_tls - record_plain)`: gander's own (the rest).
    pub gander_ms: f64,
    /// `gander_ms / rt_ms`.
    pub gander_share: f64,
    /// `rt - transport - (record_hot_tls - record_hot_plain)`: the rest if the library's work
    /// per report were its back-to-back (warm) cost. The paced reference can overstate what the
    /// library costs in a run (one thread runs both ends' cold code on one core, where each peer
    /// process has its own), the warm one understates it: gander's own lies between
    /// `gander_ms` and this.
    #[serde(default)]
    pub gander_warm_ms: f64,
    /// `rt / transport`: the RT target's ratio.
    pub rt_over_cleartext: f64,
    /// `(transport + record_tls - record_plain) / transport`: the ratio if gander added nothing.
    pub tls_only_ratio: f64,
}

/// Why a row has no RT accounting.
#[derive(Debug, thiserror::Error)]
pub enum RtAccountingError {
    /// Not a gander/gander TLS report row with cleartext in the same run.
    #[error("not accounted: {0}")]
    NotApplicable(&'static str),
    /// The peer profile could not be rebuilt.
    #[error("RT accounting: peer TLS profile")]
    Profile(#[source] crate::accounting::AccountingError),
    /// The TLS backend could not be built.
    #[error("RT accounting: TLS backend")]
    Backend(#[source] gander_tls::TlsError),
    /// The in-memory record round trip failed.
    #[error("RT accounting: in-memory record round trip")]
    Record(#[source] gander_tls::record_rt::RecordRtError),
    /// The record crypto could not be timed.
    #[error("RT accounting: record crypto")]
    Crypto(#[source] record_crypto::RecordCryptoError),
}

/// What the run measured for one row, the inputs of [`account`].
#[derive(Clone, Copy, Debug)]
pub struct RowRt<'a> {
    /// Median RT over TLS, ms.
    pub rt_ms: f64,
    /// Median cleartext RT of the same run, ms.
    pub clear_ms: f64,
    /// Per report over TLS: `[octets, writes]` from the server's `WRITE_END`.
    pub writes: &'a [[u64; 2]],
}

/// Accounts one row: measures the in-memory record round trip and the record crypto with the
/// row's own peer configs, then composes.
pub fn account(
    case: &Case,
    server_cfg: &str,
    client_cfg: &str,
    row: RowRt<'_>,
) -> Result<RtAccounting, RtAccountingError> {
    let Some(tls) = &case.tls else {
        return Err(RtAccountingError::NotApplicable("cleartext"));
    };
    if case.params.server_stack != Stack::Gander || case.params.client_stack != Stack::Gander {
        return Err(RtAccountingError::NotApplicable(
            "the record round trip needs gander on both ends",
        ));
    }
    if !tls.backend.in_process() {
        return Err(RtAccountingError::NotApplicable(
            "the library runs in the OpenSSL 3.5 binary",
        ));
    }
    if row.writes.is_empty() || !row.clear_ms.is_finite() || row.clear_ms <= 0.0 {
        return Err(RtAccountingError::NotApplicable(
            "no report sizes or no cleartext RT in this run",
        ));
    }
    let mut sizes: Vec<u64> = row.writes.iter().map(|w| w[0]).collect();
    sizes.sort_unstable();
    let bytes = sizes[(sizes.len() - 1) / 2].max(1);
    let writes_max = row.writes.iter().map(|w| w[1]).max().unwrap_or(0);
    let missing = || RtAccountingError::NotApplicable("peer config without [tls]");
    let sp = crate::accounting::profile_of(server_cfg)
        .map_err(RtAccountingError::Profile)?
        .ok_or_else(missing)?;
    let cp = crate::accounting::profile_of(client_cfg)
        .map_err(RtAccountingError::Profile)?
        .ok_or_else(missing)?;
    let s = gander_tls::backend::open(&sp).map_err(RtAccountingError::Backend)?;
    let c = gander_tls::backend::open(&cp).map_err(RtAccountingError::Backend)?;
    let hot = gander_tls::record_rt::measure(
        c.as_ref(),
        s.as_ref(),
        bytes as usize,
        RECORD_WARMUP,
        RECORD_N,
        std::time::Duration::ZERO,
    )
    .map_err(RtAccountingError::Record)?;
    let pace = std::time::Duration::from_millis(case.params.period_ms).min(PACE_MAX);
    let paced =
        gander_tls::record_rt::measure(c.as_ref(), s.as_ref(), bytes as usize, 10, PACED_N, pace)
            .map_err(RtAccountingError::Record)?;
    let crypto = match Aead::of_suite(tls.suite.name) {
        Some(a) => Some(
            record_crypto::measure(tls.backend, a, bytes as usize, 100, CRYPTO_N)
                .map_err(RtAccountingError::Crypto)?,
        ),
        None => None,
    };
    let mut a = compose(
        row,
        bytes,
        writes_max,
        crypto.as_ref().map(|c| (c.ns, c.library)),
        paced.tls_ns,
        paced.plain_ns,
        paced.n,
    );
    a.record_pace_ms = pace.as_secs_f64() * 1e3;
    a.record_hot_tls_ms = hot.tls_ns as f64 / 1e6;
    a.record_hot_plain_ms = hot.plain_ns as f64 / 1e6;
    a.gander_warm_ms = a.rt_ms - a.transport_ms - (a.record_hot_tls_ms - a.record_hot_plain_ms);
    Ok(a)
}

/// The arithmetic of [`RtAccounting`] from its measured parts (ns for the in-memory parts).
pub fn compose(
    row: RowRt<'_>,
    bytes: u64,
    writes_max: u64,
    crypto: Option<(u64, &str)>,
    record_tls_ns: u64,
    record_plain_ns: u64,
    record_n: usize,
) -> RtAccounting {
    let ms = |ns: u64| ns as f64 / 1e6;
    let added_ms = ms(record_tls_ns) - ms(record_plain_ns);
    let crypto_ms = crypto.map(|c| ms(c.0));
    let gander_ms = row.rt_ms - row.clear_ms - added_ms;
    RtAccounting {
        rt_ms: row.rt_ms,
        transport_ms: row.clear_ms,
        record_bytes: bytes,
        writes_max,
        crypto_ms,
        crypto_library: crypto.map(|c| c.1.to_string()),
        record_tls_ms: ms(record_tls_ns),
        record_plain_ms: ms(record_plain_ns),
        record_n,
        record_pace_ms: 0.0,
        record_hot_tls_ms: 0.0,
        record_hot_plain_ms: 0.0,
        library_ms: added_ms - crypto_ms.unwrap_or(0.0),
        gander_ms,
        gander_share: gander_ms / row.rt_ms,
        // Without a warm reference (set by `account`), the same rest.
        gander_warm_ms: gander_ms,
        rt_over_cleartext: row.rt_ms / row.clear_ms,
        tls_only_ratio: (row.clear_ms + added_ms) / row.clear_ms,
    }
}

/// gander's own share of RT <= 5% ([`GANDER_SHARE_LIMIT`]) on one headline row.
pub fn gander_share_target(r: &crate::results::ScenarioResult) -> crate::results::Target {
    let a = r.rt_accounting.as_ref();
    let ratio = a.map(|a| a.gander_share);
    crate::results::Target {
        what: format!(
            "gander's own share of the report RT over TLS (RT - cleartext RT - in-memory record round trip) / RT (medians), {}",
            r.backend
        ),
        case: Some(r.name.clone()),
        ratio,
        limit: GANDER_SHARE_LIMIT,
        verdict: match ratio {
            Some(x) if x < -GANDER_SHARE_LIMIT => INCONCLUSIVE,
            x => crate::results::judge(x, GANDER_SHARE_LIMIT),
        }
        .into(),
        detail: match a {
            Some(a) if a.gander_share < -GANDER_SHARE_LIMIT => format!(
                "{}; the rest is negative beyond the limit: the TLS blocks ran faster than the \
                 cleartext ones by more than gander's part can be resolved (a loaded host)",
                detail(a)
            ),
            Some(a) => detail(a),
            None => "no RT accounting for this row (see the run's notes)".into(),
        },
    }
}

/// One line with every part, us.
pub fn detail(a: &RtAccounting) -> String {
    format!(
        "RT {:.1} us = transport (cleartext RT) {:.1} + record crypto {} + library {:.1} + gander {:.1} \
         ({:.1} with the library's warm cost); \
         in-memory record of {} octets every {:.1} ms: TLS {:.1} us, plain {:.1} us (n = {}; back to back {:.1} and {:.1} us); {} write(s) per report at most; \
         RT/cleartext {:.3}, {:.3} with the library's part alone",
        a.rt_ms * 1e3,
        a.transport_ms * 1e3,
        match (&a.crypto_ms, &a.crypto_library) {
            (Some(c), Some(l)) => format!("{:.2} ({l})", c * 1e3),
            _ => "- (no AEAD: in the library's part)".into(),
        },
        a.library_ms * 1e3,
        a.gander_ms * 1e3,
        a.gander_warm_ms * 1e3,
        a.record_bytes,
        a.record_pace_ms,
        a.record_tls_ms * 1e3,
        a.record_plain_ms * 1e3,
        a.record_n,
        a.record_hot_tls_ms * 1e3,
        a.record_hot_plain_ms * 1e3,
        a.writes_max,
        a.rt_over_cleartext,
        a.tls_only_ratio
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rest_negative_beyond_the_limit_is_inconclusive_not_met() {
        let mut r = crate::results::tests::result("libraries/iv-openssl");
        let t = gander_share_target(&r);
        assert_eq!(t.verdict, "not measured");
        let writes = [[148, 1]];
        let row = |rt_ms| RowRt {
            rt_ms,
            clear_ms: 0.050,
            writes: &writes,
        };
        // 2 us of rest in 56 us: met.
        r.rt_accounting = Some(compose(row(0.056), 148, 1, None, 14_000, 10_000, 200));
        assert_eq!(gander_share_target(&r).verdict, "met");
        // 6 us of rest: missed.
        r.rt_accounting = Some(compose(row(0.060), 148, 1, None, 14_000, 10_000, 200));
        assert_eq!(gander_share_target(&r).verdict, "missed");
        // TLS faster than cleartext + record: -10 us of 44 us.
        r.rt_accounting = Some(compose(row(0.044), 148, 1, None, 14_000, 10_000, 200));
        let t = gander_share_target(&r);
        assert_eq!(t.verdict, INCONCLUSIVE);
        assert!(t.detail.contains("negative"), "{}", t.detail);
    }

    #[test]
    fn the_parts_add_up_to_rt() {
        // RT 0.060 ms over TLS, 0.050 ms in cleartext; the record round trip adds 6 us of
        // which 1 us is crypto: gander's own is the remaining 4 us.
        let row = RowRt {
            rt_ms: 0.060,
            clear_ms: 0.050,
            writes: &[[200, 1]],
        };
        let a = compose(row, 200, 1, Some((1_000, "ring")), 16_000, 10_000, 100);
        let sum = a.transport_ms + a.crypto_ms.unwrap() + a.library_ms + a.gander_ms;
        assert!((sum - a.rt_ms).abs() < 1e-12, "{sum}");
        assert!((a.library_ms - 0.005).abs() < 1e-12);
        assert!((a.gander_ms - 0.004).abs() < 1e-12);
        assert!((a.gander_share - 0.004 / 0.060).abs() < 1e-12);
        assert!((a.rt_over_cleartext - 1.2).abs() < 1e-12);
        assert!((a.tls_only_ratio - 1.12).abs() < 1e-12);
        assert_eq!(a.crypto_library.as_deref(), Some("ring"));
    }

    #[test]
    fn without_an_aead_the_crypto_stays_in_the_library() {
        let row = RowRt {
            rt_ms: 0.060,
            clear_ms: 0.050,
            writes: &[[200, 1]],
        };
        let a = compose(row, 200, 1, None, 16_000, 10_000, 100);
        assert_eq!(a.crypto_ms, None);
        assert!((a.library_ms - 0.006).abs() < 1e-12);
        let sum = a.transport_ms + a.library_ms + a.gander_ms;
        assert!((sum - a.rt_ms).abs() < 1e-12);
    }
}
