//! HT accounting: where one handshake time goes, from measurements of the same run
//! (`docs/measurement.md`, "HT accounting").
//!
//! HT (TCP connect to MMS initiate response) of a gander/gander row is split into
//! * the **crypto floor**: the handshake's public-key operations ([`crate::floor`]);
//! * the **library**: a bare handshake of the same library, suite, keys and profile
//!   ([`gander_tls::bare`]: both ends in one thread, no process boundary, no MMS) minus the floor;
//! * the **transport**: round trips measured on the same path in the same run: the TCP connect
//!   (the kernel's SYN/SYN-ACK) plus the application round trip between the two peer processes
//!   (the client's COTP CR/CC, [`crate::results::app_round_trips`]) times the round trips TLS
//!   and MMS wait for ([`flights`]);
//! * **gander's own** work: the MMS association both peers run, the event lines they write
//!   inside the HT window and the server's per-connection thread ([`gander_peers::own_cost`]);
//! * the **rest**: HT minus all of the above — two processes instead of one thread (scheduler
//!   wake-ups per flight), the TLS record layer around the MMS association, system calls.
//!
//! The targets (`gander run` prints them from one run): gander's own share <= 5% of HT on every
//! accounted row, and HT <= 1.15 x (bare handshake + transport) for the headline suite on every
//! library. HT / floor stays as information.

use crate::scenario::{Case, Resumption, Stack};
use gander_tls::{backend, TlsProfile, TlsVersion};
use serde::{Deserialize, Serialize};

/// Bare handshakes timed per row (after [`BARE_WARMUP`]).
pub const BARE_N: usize = 40;
/// Fewest bare handshakes timed per row, whatever they cost.
pub const BARE_MIN: usize = 10;
/// Time after which a row stops at [`BARE_MIN`] (RSA-8192 handshakes take ~0.1 s each).
pub const BARE_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);
/// Untimed bare handshakes first (caches, and a session to resume).
pub const BARE_WARMUP: usize = 3;
/// In-memory associations / harness writes timed per run.
pub const OWN_N: usize = 200;

/// gander's own share of HT that meets the target.
pub const GANDER_SHARE_LIMIT: f64 = 0.05;
/// HT / (bare + transport) that meets the target.
pub const BARE_TRANSPORT_LIMIT: f64 = 1.15;

/// One row's accounting, ms (medians).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HtAccounting {
    /// Median HT of the row.
    pub ht_ms: f64,
    /// The public-key floor (when measured).
    pub floor_ms: Option<f64>,
    /// Median bare handshake of the same library, suite and keys: CPU time of the one thread
    /// that drives both ends (its wall time on an idle machine).
    pub bare_ms: f64,
    /// Bare handshakes timed.
    pub bare_n: usize,
    /// Handshakes of the bare loop that resumed (with session resumption on).
    pub bare_resumed: usize,
    /// The library's non-cryptographic work: bare minus floor.
    pub library_ms: Option<f64>,
    /// Median TCP connect sub-step of HT: the kernel's SYN/SYN-ACK round trip.
    pub tcp_rtt_ms: f64,
    /// Median COTP CR/CC round trip of the same connections: one round trip between the two
    /// peer processes, as each handshake flight makes ([`crate::results::app_round_trips`]).
    pub app_rtt_ms: f64,
    /// Application round trips HT waits for after TCP ([`flights`]).
    pub flights: u32,
    /// Median over connections of each one's `TCP connect + COTP round trip * flights`.
    pub transport_ms: f64,
    /// gander's MMS association, both peers, in memory.
    pub gander_mms_ms: f64,
    /// The event lines both peers write inside the HT window and the server's connection thread.
    pub gander_harness_ms: f64,
    /// `gander_mms_ms + gander_harness_ms`.
    pub gander_ms: f64,
    /// HT minus bare, transport and gander: processes, scheduler, record layer.
    pub rest_ms: f64,
    /// `gander_ms / ht_ms`.
    pub gander_share: f64,
    /// Median over connections of each one's `HT / (bare_ms + its transport)`.
    pub ht_over_bare_transport: f64,
}

/// gander's own cost, measured once per run.
#[derive(Clone, Copy, Debug)]
pub struct OwnCost {
    /// Median in-memory MMS association, ms.
    pub mms_ms: f64,
    /// Median of writing the HT window's event lines plus median start of the server's
    /// connection thread, ms.
    pub harness_ms: f64,
}

/// Why a row has no accounting.
#[derive(Debug, thiserror::Error)]
pub enum AccountingError {
    /// Not a gander/gander TLS row run in this process (libiec61850, cleartext, openssl35).
    #[error("not accounted: {0}")]
    NotApplicable(&'static str),
    /// The row has no HT or no TCP sub-step.
    #[error("not accounted: the row has no HT sub-steps")]
    NoHt,
    /// The peer profile could not be rebuilt.
    #[error("peer TLS profile")]
    Profile(#[source] toml::de::Error),
    /// The TLS backend could not be built.
    #[error("TLS backend for the bare handshake")]
    Backend(#[source] gander_tls::TlsError),
    /// The bare handshake failed.
    #[error("bare handshake")]
    Bare(#[source] gander_tls::bare::BareError),
    /// gander's own cost could not be measured.
    #[error("gander's own cost")]
    Own(#[source] gander_peers::own_cost::OwnCostError),
}

/// Application round trips between TCP up and HT_END: TLS 1.0-1.2 full 2 (RFC 5246 §7.3: the
/// client's first data follows the server's Finished), abbreviated 1 (§7.3, resumed session:
/// the server's Finished comes first); TLS 1.3 1, full or PSK (RFC 8446 §2: the client's data
/// follows its Finished); MMS 2 (COTP CR/CC, then the CONNECT carrying the AARQ and initiate
/// request, answered by the ACCEPT). The TCP handshake before them is counted apart.
pub fn flights(version: TlsVersion, resumed: bool) -> u32 {
    let tls = match version {
        TlsVersion::Tls13 => 1,
        _ if resumed => 1,
        _ => 2,
    };
    tls + 2
}

fn median_ms(v: &[u64]) -> f64 {
    gander_measure::stats::Summary::from_samples(v).map_or(f64::NAN, |s| s.p50 / 1e6)
}

/// Measures gander's own cost (in memory, this process).
pub fn own_cost(dir: &std::path::Path) -> Result<OwnCost, AccountingError> {
    use gander_peers::own_cost as oc;
    let mms = oc::association(20, OWN_N).map_err(AccountingError::Own)?;
    let events = oc::harness(dir, 20, OWN_N).map_err(AccountingError::Own)?;
    let thread = oc::connection_thread(5, OWN_N / 4).map_err(AccountingError::Own)?;
    Ok(OwnCost {
        mms_ms: median_ms(&mms),
        harness_ms: median_ms(&events) + median_ms(&thread),
    })
}

/// The `[tls]` table of a peer config, as the peer reads it.
pub fn profile_of(peer_config: &str) -> Result<Option<TlsProfile>, AccountingError> {
    #[derive(Deserialize)]
    struct Only {
        tls: Option<TlsProfile>,
    }
    let table: toml::Table = toml::from_str(peer_config).map_err(AccountingError::Profile)?;
    let tls = table.get("tls").cloned();
    match tls {
        None => Ok(None),
        Some(v) => {
            let only: Only = toml::Value::Table(toml::Table::from_iter([("tls".into(), v)]))
                .try_into()
                .map_err(AccountingError::Profile)?;
            Ok(only.tls)
        }
    }
}

/// Accounts one row. `server_cfg` / `client_cfg` are the peer configs the row ran with;
/// `ht_ms` its median HT, `paths` its kept connections' `[HT, TCP connect, COTP round trip]`.
#[allow(clippy::too_many_arguments)]
pub fn account(
    case: &Case,
    server_cfg: &str,
    client_cfg: &str,
    ht_ms: f64,
    paths: &[[u64; 3]],
    floor_ms: Option<f64>,
    own: &OwnCost,
) -> Result<HtAccounting, AccountingError> {
    if paths.is_empty() {
        return Err(AccountingError::NoHt);
    }
    let Some(tls) = &case.tls else {
        return Err(AccountingError::NotApplicable("cleartext"));
    };
    if case.params.server_stack != Stack::Gander || case.params.client_stack != Stack::Gander {
        return Err(AccountingError::NotApplicable(
            "the bare handshake needs gander on both ends",
        ));
    }
    if !tls.backend.in_process() {
        return Err(AccountingError::NotApplicable(
            "the library runs in the OpenSSL 3.5 binary",
        ));
    }
    let missing = || AccountingError::NotApplicable("peer config without [tls]");
    let sp = profile_of(server_cfg)?.ok_or_else(missing)?;
    let cp = profile_of(client_cfg)?.ok_or_else(missing)?;
    if tls.backend == gander_tls::BackendKind::Gnutls
        && tls.version == TlsVersion::Tls13
        && cp.session_resumption
    {
        // Measured: 63 ms per bare handshake with resumption on, 1-4 ms without: GnuTLS's
        // TLS 1.3 client waits inside its handshake for the server's ticket, which the one
        // thread that drives both ends cannot send while it waits.
        return Err(AccountingError::NotApplicable(
            "GnuTLS's TLS 1.3 client with resumption waits for a ticket inside its handshake",
        ));
    }
    let s = backend::open(&sp).map_err(AccountingError::Backend)?;
    let c = backend::open(&cp).map_err(AccountingError::Backend)?;
    for _ in 0..BARE_WARMUP {
        gander_tls::bare::handshake(c.as_ref(), s.as_ref()).map_err(AccountingError::Bare)?;
    }
    let mut times = Vec::with_capacity(BARE_N);
    let mut resumed = 0;
    let started = std::time::Instant::now();
    while times.len() < BARE_N && (times.len() < BARE_MIN || started.elapsed() < BARE_BUDGET) {
        let h =
            gander_tls::bare::handshake(c.as_ref(), s.as_ref()).map_err(AccountingError::Bare)?;
        resumed += usize::from(h.resumed);
        times.push(h.cpu.as_nanos() as u64);
    }
    let bare_ms = median_ms(&times);
    let resuming = case.params.session_resumption != Resumption::Off && resumed * 2 > times.len();
    Ok(compose(
        ht_ms,
        floor_ms,
        bare_ms,
        times.len(),
        resumed,
        paths,
        flights(tls.version, resuming),
        own,
    ))
}

/// The arithmetic of [`HtAccounting`] from its measured parts.
#[allow(clippy::too_many_arguments)]
pub fn compose(
    ht_ms: f64,
    floor_ms: Option<f64>,
    bare_ms: f64,
    bare_n: usize,
    bare_resumed: usize,
    paths: &[[u64; 3]],
    flights: u32,
    own: &OwnCost,
) -> HtAccounting {
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let ms = |ns: u64| ns as f64 / 1e6;
    let transport_of = |p: &[u64; 3]| ms(p[1]) + ms(p[2]) * f64::from(flights);
    let transport_ms = med(paths.iter().map(transport_of).collect());
    let tcp_rtt_ms = med(paths.iter().map(|p| ms(p[1])).collect());
    let app_rtt_ms = med(paths.iter().map(|p| ms(p[2])).collect());
    // Each connection's HT against its own round trips, then the median over connections.
    let ratio = med(paths
        .iter()
        .map(|p| ms(p[0]) / (bare_ms + transport_of(p)))
        .collect());
    let gander_ms = own.mms_ms + own.harness_ms;
    HtAccounting {
        ht_ms,
        floor_ms,
        bare_ms,
        bare_n,
        bare_resumed,
        library_ms: floor_ms.map(|f| bare_ms - f),
        tcp_rtt_ms,
        app_rtt_ms,
        flights,
        transport_ms,
        gander_mms_ms: own.mms_ms,
        gander_harness_ms: own.harness_ms,
        gander_ms,
        rest_ms: ht_ms - bare_ms - transport_ms - gander_ms,
        gander_share: gander_ms / ht_ms,
        ht_over_bare_transport: ratio,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flights_follow_the_handshake_shapes() {
        assert_eq!(flights(TlsVersion::Tls12, false), 4);
        assert_eq!(flights(TlsVersion::Tls12, true), 3);
        assert_eq!(flights(TlsVersion::Tls13, false), 3);
        assert_eq!(flights(TlsVersion::Tls13, true), 3);
        assert_eq!(flights(TlsVersion::Tls10, false), 4);
    }

    #[test]
    fn the_parts_add_up_to_ht() {
        let own = OwnCost {
            mms_ms: 0.02,
            harness_ms: 0.01,
        };
        // Two connections: one on a slow placement (0.1 ms round trips), one on a fast one
        // (0.05 ms); each HT is judged against its own transport.
        let paths = [[2_300_000, 100_000, 100_000], [2_000_000, 50_000, 50_000]];
        let a = compose(2.0, Some(1.0), 1.5, 40, 0, &paths, 4, &own);
        assert!((a.transport_ms - 0.25).abs() < 1e-12, "{}", a.transport_ms);
        assert!((a.ht_over_bare_transport - 2.0 / 1.75).abs() < 1e-12);
        assert!((a.library_ms.unwrap() - 0.5).abs() < 1e-12);
        let sum = a.bare_ms + a.transport_ms + a.gander_ms + a.rest_ms;
        assert!((sum - a.ht_ms).abs() < 1e-12);
        assert!((a.gander_share - 0.015).abs() < 1e-12);
    }

    #[test]
    fn the_tls_table_is_read_as_the_peer_reads_it() {
        let cfg = "listen = \"127.0.0.1:0\"\n[tls]\nbackend = \"rustls\"\nversions = [\"1.3\"]\n";
        let p = profile_of(cfg).unwrap().unwrap();
        assert_eq!(p.versions, vec![TlsVersion::Tls13]);
        assert!(profile_of("listen = \"x\"\n").unwrap().is_none());
        assert!(profile_of("[tls]\nbogus = 1\n").is_err());
    }
}
