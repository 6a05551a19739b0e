//! From the peers' event logs to samples, statistics and the result store of a run.
//!
//! The peers write one JSON object per line (`docs/mms-peers.md`): `{"event", "t_ns", "conn",
//! "seq", ...}` with CLOCK_MONOTONIC nanoseconds that both processes share. Indicators, where the
//! RSE paper defines them:
//!
//! * HT = `HT_END - HT_START` per connection (client), with the sub-steps TCP connect
//!   (`TCP_UP - HT_START`), TLS handshake (`TLS_UP - TCP_UP`, 0 in cleartext) and MMS association
//!   (`HT_END - TLS_UP`).
//! * RT = `RT_END - RT_START` per report or request (matched by `seq`), with the sub-steps
//!   server-side encryption, transmission and client-side decryption when the peers stamp the TLS
//!   write and read ([`RT_STEP_EVENTS`]).
//!
//! The first `warmup` samples of each loop are discarded and counted. Raw samples are kept in
//! `DIR/scenarios/<name>.json` and `DIR/samples.csv`; every statistic comes from them.

use crate::control_rows::{ControlSamples, ControlStats};
use gander_measure::stats::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One line of an event log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Event name (`HT_START`, `TCP_UP`, `TLS_UP`, `HT_END`, `RT_START`, `RT_END`, `ERROR`, ...).
    pub event: String,
    /// When it happened: CLOCK_MONOTONIC, ns (the peers' clocks agree on one machine).
    pub t_ns: u64,
    /// Connection number (0-based, per client run).
    #[serde(default)]
    pub conn: Option<u64>,
    /// The report's SqNum, for report events.
    #[serde(default)]
    pub seq: Option<u64>,
    /// Report index on its connection (the peers' `n`): `seq` is the report's SqNum, which
    /// wraps (INT8U in libiec61850's unbuffered reports), so reports are matched by `n` when present.
    #[serde(default)]
    pub n: Option<u64>,
    /// For `ERROR` events: the kind of failure (`connect`, `timeout`, a TLS error kind, ...).
    #[serde(default)]
    pub kind: Option<String>,
    /// For `TLS_UP`: whether the handshake resumed a session.
    #[serde(default)]
    pub resumed: Option<bool>,
    /// For `TLS_UP`: the key-exchange group the handshake used.
    #[serde(default)]
    pub group: Option<String>,
    /// For the client's `TLS_UP`: TLS octets it had sent when its handshake completed.
    #[serde(default)]
    pub tx_bytes: Option<u64>,
    /// For the client's `TLS_UP`: TLS octets it had received (the server's flights).
    #[serde(default)]
    pub rx_bytes: Option<u64>,
    /// For `READ_RTT`: the round trip of one Read, ns.
    #[serde(default)]
    pub rtt_ns: Option<u64>,
    /// For a client's `RT_END` with clocks declared synchronised: arrival (CLOCK_REALTIME) minus
    /// the report's own time (changed data's `t`, else TimeOfEntry), ns.
    #[serde(default)]
    pub one_way_ns: Option<i64>,
    /// For `CONTROL`: the phase (`select`, `operate`, `termination`, `cancel`).
    #[serde(default)]
    pub phase: Option<String>,
    /// For `CONTROL`: the phase's duration, ns.
    #[serde(default)]
    pub ns: Option<u64>,
    /// For the server's `WRITE_END`: the report's octets as written (the TPKT packet, before
    /// TLS): the record size the RT accounting times ([`crate::rt_accounting`]).
    #[serde(default)]
    pub bytes: Option<u64>,
    /// For the server's `WRITE_END`: the writes the report took (1: one TLS record per report).
    #[serde(default)]
    pub writes: Option<u64>,
}

impl Event {
    /// The key that pairs a report's server and client events.
    fn report_key(&self) -> Option<u64> {
        self.n.or(self.seq)
    }
}

/// Names of the stamps around the server's TLS write and the client's TLS read (RT sub-steps):
/// (server write start, server write end, client read start, client read end).
pub const RT_STEP_EVENTS: [&str; 4] = ["WRITE_START", "WRITE_END", "READ_START", "READ_END"];

/// Why the results or an event log could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResultsError {
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// `results.json` is not what `gander run` writes.
    #[error("{}: not a gander results file", path.display())]
    NotResults {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// An event log has a line that is not an event.
    #[error("{}", path.display())]
    EventLog {
        /// The event log.
        path: PathBuf,
        /// The line at fault.
        #[source]
        source: EventLineError,
    },
    /// The results could not be serialised (not expected: they are plain data).
    #[error("cannot serialise the results")]
    Serialise(#[from] serde_json::Error),
}

/// A line of an event log that is not an event.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: not an event")]
pub struct EventLineError {
    /// 1-based line number.
    pub line: usize,
    /// What the JSON parser said.
    #[source]
    pub source: serde_json::Error,
}

/// Reads a JSON-lines event log. Blank lines are skipped; anything else that is not an event is
/// an error naming the line.
pub fn read_events(path: &Path) -> Result<Vec<Event>, ResultsError> {
    let text = std::fs::read_to_string(path).map_err(|source| ResultsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_events(&text).map_err(|source| ResultsError::EventLog {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses a JSON-lines event log (see [`read_events`]).
pub fn parse_events(text: &str) -> Result<Vec<Event>, EventLineError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let ev: Event = serde_json::from_str(line).map_err(|source| EventLineError {
            line: i + 1,
            source,
        })?;
        out.push(ev);
    }
    Ok(out)
}

/// Raw samples of one case (ns), in measurement order, warm-up included.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    /// Handshake times (HT): TCP connect to first MMS exchange done, one per connection.
    pub ht: Vec<u64>,
    /// The TCP part of each HT (connect).
    pub ht_tcp: Vec<u64>,
    /// The TLS part of each HT (the handshake).
    pub ht_tls: Vec<u64>,
    /// The MMS part of each HT (COTP and association after the handshake).
    pub ht_mms: Vec<u64>,
    /// Report times (RT): server `RT_START` to client `RT_END` of the same report.
    pub rt: Vec<u64>,
    /// The encryption part of each RT (server `WRITE_START` to `WRITE_END`).
    pub rt_enc: Vec<u64>,
    /// The rest of each RT (encoding, transmission, decoding): RT minus `rt_enc` and `rt_dec`.
    pub rt_net: Vec<u64>,
    /// The decryption part of each RT (client `READ_START` to `READ_END`).
    pub rt_dec: Vec<u64>,
    /// RT of the same exchange in cleartext (the RT floor), warm-up included.
    pub rt_clear: Vec<u64>,
    /// With interleaved blocks (`rt_blocks`): the block of each `rt` (and `rt_enc`, `rt_net`,
    /// `rt_dec`) sample and of each `rt_clear` sample. Empty: one loop, warm-up at its start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rt_block: Vec<u32>,
    /// The block of each `rt_clear` sample (see `rt_block`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rt_clear_block: Vec<u32>,
    /// Per report over TLS whose server stamped it: `[octets written, writes]` (`WRITE_END`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rt_writes: Vec<[u64; 2]>,
    /// Handshakes that the peers reported as resumed.
    pub resumed: usize,
    /// Per handshake (client `TLS_UP`): octets client → server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hs_client_bytes: Vec<u64>,
    /// Per handshake: octets server → client.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hs_server_bytes: Vec<u64>,
    /// Negotiated key-exchange groups, by handshake count.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, usize>,
    /// ERROR events by kind.
    pub errors: BTreeMap<String, usize>,
    /// Client stamps of every RT_END, in time order: the report inter-arrival times when the
    /// server's clock is not available (external targets).
    #[serde(default)]
    pub report_arrivals: Vec<u64>,
    /// Round trips of the client's timed Reads (READ_RTT; external targets).
    #[serde(default)]
    pub read_rtt: Vec<u64>,
    /// One-way report times against the server's timestamps (clocks declared synchronised).
    #[serde(default)]
    pub one_way: Vec<i64>,
    /// Per connection, from the client's events: `[HT, TCP connect, COTP CR/CC round trip]`, ns
    /// ([`app_round_trips`]): each HT beside the round trips measured on its own connection.
    #[serde(default)]
    pub app_rtt: Vec<[u64; 3]>,
    /// Control rows: each phase's samples (the operate samples are also `rt`).
    #[serde(default, skip_serializing_if = "ControlSamples::is_empty")]
    pub control: ControlSamples,
    /// Control rows: each phase's samples over cleartext (the operate samples are `rt_clear`).
    #[serde(default, skip_serializing_if = "ControlSamples::is_empty")]
    pub control_clear: ControlSamples,
}

/// The client's first application round trip of each connection, from the client's own events:
/// COTP_UP minus TLS_UP (TCP_UP without TLS). The CR and the CC are a few octets each (in one TLS
/// record each way) and need a wake-up of both peer processes, as every handshake flight does, so
/// this is the round trip HT's flights pay on this path (`crate::accounting`).
///
/// Returned per connection that completed, in connection order: `[HT, TCP connect, COTP CR/CC]`.
/// Both round trips vary with where the scheduler puts the two processes (the same CPU or two:
/// on this kind of VM 0.04 or 0.07 ms), and so does that connection's HT: pairing each HT with
/// its own round trips keeps the comparison on the same placement.
pub fn app_round_trips(client_events: &[Event]) -> Vec<[u64; 3]> {
    #[derive(Default)]
    struct C {
        start: Option<u64>,
        tcp: Option<u64>,
        tls: Option<u64>,
        cotp: Option<u64>,
        end: Option<u64>,
    }
    let mut conns: BTreeMap<u64, C> = BTreeMap::new();
    for e in client_events {
        let Some(c) = e.conn else { continue };
        let c = conns.entry(c).or_default();
        let slot = match e.event.as_str() {
            "HT_START" => &mut c.start,
            "TCP_UP" => &mut c.tcp,
            "TLS_UP" => &mut c.tls,
            "COTP_UP" => &mut c.cotp,
            "HT_END" => &mut c.end,
            _ => continue,
        };
        slot.get_or_insert(e.t_ns);
    }
    conns
        .values()
        .filter_map(|c| {
            let (start, tcp, cotp, end) = (c.start?, c.tcp?, c.cotp?, c.end?);
            let up = c.tls.unwrap_or(tcp);
            Some([
                end.saturating_sub(start),
                tcp.saturating_sub(start),
                cotp.saturating_sub(up),
            ])
        })
        .collect()
}

/// Which samples of a loop are warm-up: the first `warmup` of the loop, or with interleaved
/// blocks (`block[i]` = block of sample i, same length as the samples) the first `warmup` of
/// every block, but never more than half a block.
pub fn warmup_mask(n: usize, block: &[u32], warmup: usize) -> Vec<bool> {
    if block.len() != n {
        return (0..n).map(|i| i < warmup).collect();
    }
    let mut size: BTreeMap<u32, usize> = BTreeMap::new();
    for b in block {
        *size.entry(*b).or_default() += 1;
    }
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    block
        .iter()
        .map(|b| {
            let k = seen.entry(*b).or_default();
            *k += 1;
            *k <= warmup.min(size[b] / 2)
        })
        .collect()
}

/// The samples of `v` that `mask` does not mark as warm-up.
pub fn kept(v: &[u64], mask: &[bool]) -> Vec<u64> {
    v.iter()
        .zip(mask.iter().chain(std::iter::repeat(&false)))
        .filter(|(_, w)| !**w)
        .map(|(x, _)| *x)
        .collect()
}

/// Per interleaved block pair: median RT over TLS of block b over the median cleartext RT of
/// block b (warm-up left out), in block order. Empty without blocks.
pub fn block_ratios(s: &Samples, warmup: usize) -> Vec<f64> {
    if s.rt_block.len() != s.rt.len() || s.rt_clear_block.len() != s.rt_clear.len() {
        return Vec::new();
    }
    let med = |v: &[u64], blocks: &[u32], b: u32| {
        let mask = warmup_mask(v.len(), blocks, warmup);
        let x: Vec<u64> = v
            .iter()
            .zip(blocks)
            .zip(&mask)
            .filter(|((_, bb), w)| **bb == b && !**w)
            .map(|((x, _), _)| *x)
            .collect();
        Summary::from_samples(&x).map(|s| s.p50)
    };
    let mut ids: Vec<u32> = s.rt_block.clone();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .filter_map(|b| {
            match (
                med(&s.rt, &s.rt_block, b),
                med(&s.rt_clear, &s.rt_clear_block, b),
            ) {
                (Some(t), Some(c)) if c > 0.0 => Some(t / c),
                _ => None,
            }
        })
        .collect()
}

/// Extracts HT, RT and their sub-steps from the merged events of both peers.
pub fn extract(events: &[Event]) -> Samples {
    #[derive(Default)]
    struct Conn {
        start: Option<u64>,
        tcp: Option<u64>,
        tls: Option<u64>,
        end: Option<u64>,
    }
    #[derive(Default)]
    struct Rep {
        start: Option<u64>,
        end: Option<u64>,
        stamps: [Option<u64>; 4],
    }
    let mut conns: BTreeMap<u64, Conn> = BTreeMap::new();
    let mut reps: BTreeMap<u64, Rep> = BTreeMap::new();
    let mut s = Samples::default();
    for e in events {
        match e.event.as_str() {
            "HT_START" | "TCP_UP" | "TLS_UP" | "HT_END" => {
                let Some(c) = e.conn else { continue };
                let c = conns.entry(c).or_default();
                let slot = match e.event.as_str() {
                    "HT_START" => &mut c.start,
                    "TCP_UP" => &mut c.tcp,
                    "TLS_UP" => &mut c.tls,
                    _ => &mut c.end,
                };
                slot.get_or_insert(e.t_ns);
                // The peers put `resumed` on TLS_UP; accept it on HT_END too.
                if matches!(e.event.as_str(), "TLS_UP" | "HT_END") && e.resumed == Some(true) {
                    s.resumed += 1;
                }
                if e.event == "TLS_UP" {
                    if let (Some(tx), Some(rx)) = (e.tx_bytes, e.rx_bytes) {
                        s.hs_client_bytes.push(tx);
                        s.hs_server_bytes.push(rx);
                    }
                    if let Some(g) = &e.group {
                        *s.groups.entry(g.clone()).or_default() += 1;
                    }
                }
            }
            "RT_START" | "RT_END" => {
                let Some(q) = e.report_key() else { continue };
                let r = reps.entry(q).or_default();
                let slot = if e.event == "RT_START" {
                    &mut r.start
                } else {
                    &mut r.end
                };
                slot.get_or_insert(e.t_ns);
            }
            "CONTROL" => {
                s.control.add(e);
                if e.phase.as_deref() == Some("operate") {
                    s.rt.extend(e.ns);
                }
            }
            "ERROR" => {
                *s.errors
                    .entry(e.kind.clone().unwrap_or_else(|| "unknown".into()))
                    .or_default() += 1;
            }
            other => {
                if other == "WRITE_END" {
                    if let (Some(b), Some(w)) = (e.bytes, e.writes) {
                        s.rt_writes.push([b, w]);
                    }
                }
                if let (Some(i), Some(q)) = (
                    RT_STEP_EVENTS.iter().position(|n| *n == other),
                    e.report_key(),
                ) {
                    reps.entry(q).or_default().stamps[i].get_or_insert(e.t_ns);
                }
            }
        }
    }
    // Connections in the order they started (conn ids are per client run).
    let mut cs: Vec<&Conn> = conns
        .values()
        .filter(|c| c.start.is_some() && c.end.is_some())
        .collect();
    cs.sort_by_key(|c| c.start);
    for c in cs {
        let (start, end) = (c.start.unwrap_or(0), c.end.unwrap_or(0));
        s.ht.push(end.saturating_sub(start));
        let tcp = c.tcp.unwrap_or(start);
        s.ht_tcp.push(tcp.saturating_sub(start));
        let tls = c.tls.unwrap_or(tcp);
        s.ht_tls.push(tls.saturating_sub(tcp));
        s.ht_mms.push(end.saturating_sub(tls));
    }
    s.one_way = events
        .iter()
        .filter(|e| e.event == "RT_END")
        .filter_map(|e| e.one_way_ns)
        .collect();
    s.read_rtt = events
        .iter()
        .filter(|e| e.event == "READ_RTT")
        .filter_map(|e| e.rtt_ns)
        .collect();
    s.report_arrivals = events
        .iter()
        .filter(|e| e.event == "RT_END")
        .map(|e| e.t_ns)
        .collect();
    s.report_arrivals.sort_unstable();
    let ends = events.iter().filter(|e| e.event == "RT_END").count();
    let keyed = reps
        .values()
        .filter(|r| r.start.is_some() && r.end.is_some())
        .count();
    if ends > 0 && keyed * 2 < ends {
        // No index shared by both sides (libiec61850 peers): pair every RT_END with the latest
        // RT_START before it, which is right while the report period is much longer than RT.
        let mut starts: Vec<u64> = events
            .iter()
            .filter(|e| e.event == "RT_START")
            .map(|e| e.t_ns)
            .collect();
        starts.sort_unstable();
        let mut ends: Vec<u64> = events
            .iter()
            .filter(|e| e.event == "RT_END")
            .map(|e| e.t_ns)
            .collect();
        ends.sort_unstable();
        for t in ends {
            let i = starts.partition_point(|s| *s <= t);
            if i > 0 {
                s.rt.push(t - starts[i - 1]);
            }
        }
        return s;
    }
    for r in reps.values() {
        let (Some(a), Some(b)) = (r.start, r.end) else {
            continue;
        };
        s.rt.push(b.saturating_sub(a));
        if let [Some(ws), Some(we), Some(rs), Some(re)] = r.stamps {
            s.rt_enc.push(we.saturating_sub(ws));
            s.rt_dec.push(re.saturating_sub(rs));
            s.rt_net.push(
                b.saturating_sub(a)
                    .saturating_sub(we.saturating_sub(ws))
                    .saturating_sub(re.saturating_sub(rs)),
            );
        }
    }
    s
}

/// The statistics of one indicator, in milliseconds (`results.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Samples kept (warm-up excluded).
    pub n: usize,
    /// Mean, ms.
    pub mean_ms: f64,
    /// Sample standard deviation, ms.
    pub sd_ms: f64,
    /// Median, ms.
    pub median_ms: f64,
    /// 95th percentile, ms.
    pub p95_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Smallest sample, ms.
    pub min_ms: f64,
    /// Largest sample, ms.
    pub max_ms: f64,
    /// Half-width of the 95% confidence interval of the mean.
    pub ci95_ms: f64,
    /// Mean relative to the reference case's mean, percent (the papers' VAR.).
    pub var_pct: Option<f64>,
}

impl Stat {
    /// Statistics of kept samples (ns); `None` if there are none.
    pub fn of(kept_ns: &[u64]) -> Option<Stat> {
        Some(Self::from_summary(Summary::from_samples(kept_ns)?))
    }

    /// Statistics of signed samples (ns), e.g. one-way times between two clocks, which are
    /// negative when the clocks disagree by more than the delay.
    pub fn of_signed(ns: &[i64]) -> Option<Stat> {
        Some(Self::from_summary(Summary::from_signed_samples(ns)?))
    }

    fn from_summary(s: Summary) -> Stat {
        let s = s.scaled(1e-6);
        Stat {
            n: s.n,
            mean_ms: s.mean,
            sd_ms: s.sd,
            median_ms: s.p50,
            p95_ms: s.p95,
            p99_ms: s.p99,
            min_ms: s.min,
            max_ms: s.max,
            ci95_ms: s.ci95,
            var_pct: None,
        }
    }
}

/// Mean and standard deviation of signed differences (the Sandia layout), ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffStat {
    /// Pairs of samples.
    pub n: usize,
    /// Mean difference (TLS - cleartext), ms.
    pub mean_ms: f64,
    /// Standard deviation of the differences, ms.
    pub sd_ms: f64,
}

impl DiffStat {
    /// Pairs the i-th kept TLS sample with the i-th kept cleartext sample (Sandia ran them
    /// consecutively and subtracted); extra samples on either side are left out.
    pub fn of(tls_ns: &[u64], clear_ns: &[u64]) -> Option<DiffStat> {
        let d: Vec<f64> = tls_ns
            .iter()
            .zip(clear_ns)
            .map(|(a, b)| (*a as f64 - *b as f64) / 1e6)
            .collect();
        if d.is_empty() {
            return None;
        }
        let n = d.len();
        let mean = d.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(DiffStat {
            n,
            mean_ms: mean,
            sd_ms: sd,
        })
    }
}

/// HT sub-steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HtSteps {
    /// TCP connect.
    pub tcp: Stat,
    /// TLS handshake.
    pub tls: Stat,
    /// MMS association.
    pub mms: Stat,
}

/// RT sub-steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RtSteps {
    /// Sender: encryption and send.
    pub encrypt: Stat,
    /// Everything else: RT minus encryption and decryption.
    pub transmit: Stat,
    /// Receiver: decryption.
    pub decrypt: Stat,
}

/// Warm-up samples discarded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Discarded {
    /// HT samples discarded.
    pub ht: usize,
    /// RT samples discarded.
    pub rt: usize,
    /// Cleartext RT samples discarded.
    pub rt_clear: usize,
}

/// Bytes on the wire of one full handshake (TLS records, both directions), the median over the
/// case's handshakes after warm-up, with the smallest and largest seen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HandshakeBytes {
    /// Client → server, median.
    pub client_to_server: u64,
    /// Server → client, median.
    pub server_to_client: u64,
    /// Client → server, smallest and largest.
    pub client_range: [u64; 2],
    /// Server → client, smallest and largest.
    pub server_range: [u64; 2],
}

impl HandshakeBytes {
    /// From per-handshake counts (warm-up already left out); `None` when there are none.
    pub fn of(client: &[u64], server: &[u64]) -> Option<HandshakeBytes> {
        let med = |v: &[u64]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v.get(v.len() / 2).copied()
        };
        let range = |v: &[u64]| {
            [
                v.iter().copied().min().unwrap_or(0),
                v.iter().copied().max().unwrap_or(0),
            ]
        };
        Some(HandshakeBytes {
            client_to_server: med(client)?,
            server_to_client: med(server)?,
            client_range: range(client),
            server_range: range(server),
        })
    }
    /// Both directions together.
    pub fn total(&self) -> u64 {
        self.client_to_server + self.server_to_client
    }
}

/// The result of one case (`DIR/scenarios/<name>.json`, and an entry of `results.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// Case name (unique in its scenario).
    pub name: String,
    /// Report tables the case appears in.
    pub tables: Vec<String>,
    /// Peer implementations, `server/client` (e.g. `gander/gander`).
    pub stack: String,
    /// Server implementation (`gander` or `libiec61850`).
    pub server_stack: String,
    /// Client implementation (`gander` or `libiec61850`).
    pub client_stack: String,
    /// `none` in cleartext.
    pub backend: String,
    /// Why this backend was chosen (scenario or `auto`).
    pub backend_reason: String,
    /// TLS library and version.
    pub library: String,
    /// `1.2`, ... or `none`.
    pub tls_version: String,
    /// IANA name, or `none`.
    pub cipher_suite: String,
    /// The key-exchange group the scenario asked for (`None`: the library's default).
    #[serde(default)]
    pub group: Option<String>,
    /// The group the handshakes negotiated (the most frequent, as the client reported it).
    #[serde(default)]
    pub negotiated_group: Option<String>,
    /// Bytes each side sent during a full handshake.
    #[serde(default)]
    pub handshake_bytes: Option<HandshakeBytes>,
    /// Why the case was not run (`status = "skipped"`): e.g. a group the backend cannot do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// The RSE (i-v) and Sandia (CS1-CS7) labels of the suite.
    pub rse_label: Option<String>,
    /// The Sandia (CS1-CS7) label of the suite.
    pub sandia_label: Option<String>,
    /// Certificate key type, e.g. `rsa2048`.
    pub key: String,
    /// What the peers exchange after the handshake (`report`, `read` or `write`).
    pub interaction: String,
    /// Report or request payload, bytes.
    pub payload: u32,
    /// Report period, ms.
    pub period_ms: u64,
    /// Connections opened in the HT loop.
    pub connections: u32,
    /// Reports (or requests) in the RT loop.
    pub reports: u32,
    /// Samples of each loop discarded as warm-up.
    pub warmup: u32,
    /// Session resumption asked for (`off`, `id`, `ticket` or `psk`).
    pub session_resumption: String,
    /// Link profile name (`loopback` when none).
    pub link: String,
    /// Which emulator applied the link profile (`none (loopback)`, `netem`, `userspace relay`).
    pub emulator: String,
    /// What the emulator achieved (measured delay and rate), when one ran.
    pub link_achieved: Option<serde_json::Value>,
    /// The case whose means `var_pct` is relative to.
    pub reference: Option<String>,
    /// `ok`, `failed` or `skipped`.
    pub status: String,
    /// Why it failed.
    pub error: Option<String>,
    /// Warm-up samples discarded.
    pub discarded: Discarded,
    /// Handshakes the peers reported as resumed (all connections, warm-up included).
    #[serde(default)]
    pub resumed_handshakes: usize,
    /// Handshake time statistics.
    pub ht: Option<Stat>,
    /// Handshake time split into TCP, TLS and MMS.
    pub ht_steps: Option<HtSteps>,
    /// Report time statistics.
    pub rt: Option<Stat>,
    /// Report time split into encryption, the rest, and decryption.
    pub rt_steps: Option<RtSteps>,
    /// The handshake's public-key floor, ms.
    pub ht_floor_ms: Option<f64>,
    /// The floor's operations and their times.
    pub floor: Option<crate::floor::Floor>,
    /// Median HT over the floor.
    pub ht_floor_ratio: Option<f64>,
    /// Client side only (external targets, whose clock gander does not have): the time between
    /// consecutive reports, warm-up discarded; its standard deviation is the jitter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_interarrival: Option<Stat>,
    /// Client side only (external targets): round trip of a Read of the control block's data
    /// set, warm-up discarded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rtt: Option<Stat>,
    /// External targets with clocks declared synchronised: report arrival minus the report's
    /// own timestamp (signed: negative means the clocks are further apart than the delay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_one_way: Option<Stat>,
    /// The client's first application round trip per connection (COTP CR/CC), warm-up
    /// discarded: what one HT flight costs on this path ([`app_round_trips`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_rtt: Option<Stat>,
    /// Per kept connection `[HT, TCP connect, COTP CR/CC]`, ns: the HT accounting pairs each HT
    /// with its own round trips. Left out of `results.json` with the other raw samples.
    #[serde(default, skip_serializing)]
    pub ht_paths: Vec<[u64; 3]>,
    /// Where HT goes (gander/gander TLS rows whose library runs in this process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ht_accounting: Option<crate::accounting::HtAccounting>,
    /// Where RT over TLS goes (gander/gander TLS report rows with cleartext in the same run,
    /// library in this process; [`crate::rt_accounting`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rt_accounting: Option<crate::rt_accounting::RtAccounting>,
    /// Report time of the same exchange in cleartext.
    pub rt_cleartext: Option<Stat>,
    /// Median cleartext report time, ms.
    pub rt_cleartext_median_ms: Option<f64>,
    /// Median RT over the cleartext median RT.
    pub rt_cleartext_ratio: Option<f64>,
    /// Interleaved TLS/cleartext block pairs the RT loop ran in (0: one loop, shared cleartext run).
    #[serde(default)]
    pub rt_blocks: u32,
    /// Per block pair: median TLS RT / median cleartext RT (the spread within this run).
    #[serde(default)]
    pub rt_cleartext_block_ratios: Vec<f64>,
    /// Paired differences TLS - cleartext (Sandia Table 2).
    pub rt_diff: Option<DiffStat>,
    /// Control rows: each phase over the case's transport and over cleartext
    /// ([`crate::control_rows`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlStats>,
    /// The client's one-line JSON summary.
    pub client_summary: Option<serde_json::Value>,
    /// Wall time the case took, s.
    pub duration_s: f64,
    /// Raw samples; left out of `results.json` (they are in `samples.csv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<Samples>,
}

impl ScenarioResult {
    /// Fills every statistic from `samples` with `warmup` discarded per loop.
    pub fn compute(&mut self, samples: Samples, warmup: usize) {
        let keep = |v: &[u64]| v[warmup.min(v.len())..].to_vec();
        let rt_mask = warmup_mask(samples.rt.len(), &samples.rt_block, warmup);
        let clear_mask = warmup_mask(samples.rt_clear.len(), &samples.rt_clear_block, warmup);
        // The sub-steps follow RT sample for sample when every report has all four stamps.
        let keep_rt = |v: &[u64]| {
            if v.len() == samples.rt.len() {
                kept(v, &rt_mask)
            } else {
                keep(v)
            }
        };
        self.discarded = Discarded {
            ht: warmup.min(samples.ht.len()),
            rt: rt_mask.iter().filter(|w| **w).count(),
            rt_clear: clear_mask.iter().filter(|w| **w).count(),
        };
        self.rt_blocks = if samples.rt_block.is_empty() {
            0
        } else {
            let mut b = samples.rt_block.clone();
            b.sort_unstable();
            b.dedup();
            b.len() as u32
        };
        self.rt_cleartext_block_ratios = block_ratios(&samples, warmup);
        self.ht = Stat::of(&keep(&samples.ht));
        if samples.rt.is_empty() && samples.report_arrivals.len() > 2 {
            let gaps: Vec<u64> = samples
                .report_arrivals
                .windows(2)
                .map(|w| w[1].saturating_sub(w[0]))
                .collect();
            // The first gap follows the GI report the enable asked for: warm-up as for RT.
            self.report_interarrival = Stat::of(&keep(&gaps));
        }
        self.read_rtt = Stat::of(&keep(&samples.read_rtt));
        self.ht_paths = samples.app_rtt[warmup.min(samples.app_rtt.len())..].to_vec();
        let app: Vec<u64> = self.ht_paths.iter().map(|p| p[2]).collect();
        self.app_rtt = Stat::of(&app);
        self.report_one_way =
            Stat::of_signed(&samples.one_way[warmup.min(samples.one_way.len())..]);
        self.ht_steps = match (
            Stat::of(&keep(&samples.ht_tcp)),
            Stat::of(&keep(&samples.ht_tls)),
            Stat::of(&keep(&samples.ht_mms)),
        ) {
            (Some(tcp), Some(tls), Some(mms)) => Some(HtSteps { tcp, tls, mms }),
            _ => None,
        };
        self.rt = Stat::of(&kept(&samples.rt, &rt_mask));
        self.rt_steps = match (
            Stat::of(&keep_rt(&samples.rt_enc)),
            Stat::of(&keep_rt(&samples.rt_net)),
            Stat::of(&keep_rt(&samples.rt_dec)),
        ) {
            (Some(encrypt), Some(transmit), Some(decrypt)) => Some(RtSteps {
                encrypt,
                transmit,
                decrypt,
            }),
            _ => None,
        };
        self.rt_cleartext = Stat::of(&kept(&samples.rt_clear, &clear_mask));
        self.rt_cleartext_median_ms = self.rt_cleartext.as_ref().map(|s| s.median_ms);
        self.rt_cleartext_ratio = match (&self.rt, &self.rt_cleartext) {
            (Some(r), Some(c)) if c.median_ms > 0.0 => Some(r.median_ms / c.median_ms),
            _ => None,
        };
        self.rt_diff = if self.interaction != "report" {
            DiffStat::of(&keep(&samples.rt), &keep(&samples.rt_clear))
        } else {
            None
        };
        self.set_floor(self.floor.clone());
        self.resumed_handshakes = samples.resumed;
        let hs_keep = |v: &[u64]| v[warmup.min(v.len().saturating_sub(1))..].to_vec();
        self.handshake_bytes = HandshakeBytes::of(
            &hs_keep(&samples.hs_client_bytes),
            &hs_keep(&samples.hs_server_bytes),
        );
        self.negotiated_group = samples
            .groups
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(g, _)| g.clone());
        self.samples = Some(samples);
    }

    /// Sets the floor and the HT/floor ratio that depends on it.
    pub fn set_floor(&mut self, floor: Option<crate::floor::Floor>) {
        self.ht_floor_ms = floor.as_ref().map(|f| f.total_ms);
        self.ht_floor_ratio = match (&self.ht, &floor) {
            (Some(h), Some(f)) if f.total_ms > 0.0 => Some(h.median_ms / f.total_ms),
            _ => None,
        };
        self.floor = floor;
    }
}

/// Sets every case's VAR% against its `reference` case's means.
pub fn apply_var_pct(results: &mut [ScenarioResult]) {
    let means: BTreeMap<String, (Option<f64>, Option<f64>)> = results
        .iter()
        .map(|r| {
            (
                r.name.clone(),
                (
                    r.ht.as_ref().map(|s| s.mean_ms),
                    r.rt.as_ref().map(|s| s.mean_ms),
                ),
            )
        })
        .collect();
    for r in results.iter_mut() {
        let Some(reference) = &r.reference else {
            continue;
        };
        let Some((ht_ref, rt_ref)) = means.get(reference) else {
            continue;
        };
        if let (Some(h), Some(m)) = (r.ht.as_mut(), ht_ref) {
            h.var_pct = var_pct(h.mean_ms, *m);
        }
        if let (Some(h), Some(m)) = (r.rt.as_mut(), rt_ref) {
            h.var_pct = var_pct(h.mean_ms, *m);
        }
    }
}

/// `(x - reference) / reference` in percent; `None` for a zero reference.
pub fn var_pct(x: f64, reference: f64) -> Option<f64> {
    (reference > 0.0).then(|| (x - reference) / reference * 100.0)
}

pub use gander_measure::transfer_time::TransferClass;

/// One headline target of the measurement platform, measured as a ratio in one run: HT within
/// 1.3x its floor, RT over TLS within 1.2x cleartext, gander no slower than libiec61850
/// (`docs/scenarios.md`, "Floors and targets").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// What is judged, e.g. `HT within 1.3x floor`.
    pub what: String,
    /// The case judged, if one was.
    pub case: Option<String>,
    /// The measured ratio, if measured.
    pub ratio: Option<f64>,
    /// The largest ratio that meets the target.
    pub limit: f64,
    /// `met`, `missed` or `not measured`.
    pub verdict: String,
    /// How it was judged and the spread around it (other rows, blocks within the row).
    #[serde(default)]
    pub detail: String,
}

/// The targets: HT of ECDHE-RSA-AES128-GCM with RSA-2048 within 1.15x (bare handshake +
/// transport) per library and gander's own share of HT within 5% on every accounted row
/// ([`crate::accounting`]); RT over TLS within 1.2x cleartext (median); gander no slower than
/// libiec61850 on the same suite. HT / floor is kept as [`INFORMATION`].
pub fn targets(results: &[ScenarioResult]) -> Vec<Target> {
    let ok = |r: &&ScenarioResult| r.status == "ok";
    let verdict = judge;
    // The headline case, once per TLS library that ran it: the ratio depends as much on the
    // library's own handshake as on the machine, so every library's is shown, none picked.
    let headline = |r: &&ScenarioResult| {
        r.cipher_suite == "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
            && r.key == "rsa2048"
            && r.session_resumption == "off"
            && r.stack == "gander"
            && r.link == "loopback"
            && r.ht_floor_ratio.is_some()
    };
    let mut ivs: Vec<&ScenarioResult> = Vec::new();
    for r in results.iter().filter(ok).filter(headline) {
        if !ivs.iter().any(|x| x.backend == r.backend) {
            ivs.push(r);
        }
    }
    let mut out = Vec::new();
    if ivs.is_empty() {
        out.push(Target {
            what: "HT of TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (RSA-2048) / its public-key floor (median)".into(),
            case: None,
            ratio: None,
            limit: 1.3,
            verdict: INFORMATION.into(),
            detail: "no gander case of that suite with RSA-2048 on loopback".into(),
        });
        out.push(rt_target(results, None));
    }
    for r in ivs {
        let ht = r.ht.as_ref().map(|s| s.median_ms);
        let mut d = format!(
            "median HT {} ms over a floor of {} ms",
            fmt3(ht),
            fmt3(r.ht_floor_ms)
        );
        if let Some(f) = &r.floor {
            d.push_str(&format!(" timed with {}", f.library));
            let dec: f64 = f
                .not_counted
                .iter()
                .map(|o| o.each_ms * o.count as f64)
                .sum();
            if dec > 0.0 {
                d.push_str(&format!(
                    "; with certificate decoding (not counted: not cryptography) {:.3} ms, HT is {}x that",
                    f.total_ms + dec,
                    ht.map(|h| format!("{:.2}", h / (f.total_ms + dec))).unwrap_or_else(|| "-".into())
                ));
            }
        }
        out.push(Target {
            what: format!(
                "HT of TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (RSA-2048) / its public-key floor (median), {}",
                r.backend
            ),
            case: Some(r.name.clone()),
            ratio: r.ht_floor_ratio,
            limit: 1.3,
            verdict: INFORMATION.into(),
            detail: d,
        });
        out.push(bare_transport_target(r));
        let mut rt = rt_target(results, Some(&r.name));
        rt.what = format!("{}, {}", rt.what, r.backend);
        out.push(rt);
        out.push(crate::rt_accounting::gander_share_target(r));
    }
    out.push(gander_share_target(results));
    for (what, pick) in [("HT", 0usize), ("RT", 1usize)] {
        let mut best: Option<(String, f64)> = None;
        for g in results.iter().filter(ok).filter(|r| r.stack == "gander") {
            let Some(l) = results.iter().filter(ok).find(|r| {
                r.stack == "libiec61850"
                    && r.cipher_suite == g.cipher_suite
                    && r.tls_version == g.tls_version
                    && r.link == g.link
            }) else {
                continue;
            };
            let m = |r: &ScenarioResult| {
                if pick == 0 {
                    r.ht.as_ref().map(|s| s.median_ms)
                } else {
                    r.rt.as_ref().map(|s| s.median_ms)
                }
            };
            if let (Some(a), Some(b)) = (m(g), m(l)) {
                if b > 0.0 && best.as_ref().is_none_or(|(_, x)| a / b > *x) {
                    best = Some((format!("{} vs {}", g.name, l.name), a / b));
                }
            }
        }
        out.push(Target {
            what: format!(
                "gander {what} / libiec61850 {what} on the same suite (median; worst pair)"
            ),
            case: best.as_ref().map(|b| b.0.clone()),
            ratio: best.as_ref().map(|b| b.1),
            limit: 1.0,
            verdict: verdict(best.map(|b| b.1), 1.0).into(),
            detail: String::new(),
        });
    }
    out
}

/// The verdict of a ratio kept as information: HT / floor was a target until it was shown
/// unreachable with any of the libraries (HT also holds the library's own non-cryptographic
/// work and the flights between two processes); the HT accounting targets replace it.
pub const INFORMATION: &str = "information";

/// `met`, `missed` or `not measured`.
pub(crate) fn judge(ratio: Option<f64>, limit: f64) -> &'static str {
    match ratio {
        Some(x) if x <= limit => "met",
        Some(_) => "missed",
        None => "not measured",
    }
}

/// HT <= 1.15 x (bare handshake + transport) of one headline row (`crate::accounting`).
fn bare_transport_target(r: &ScenarioResult) -> Target {
    let limit = crate::accounting::BARE_TRANSPORT_LIMIT;
    let a = r.ht_accounting.as_ref();
    let ratio = a.map(|a| a.ht_over_bare_transport);
    Target {
        what: format!(
            "HT of TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (RSA-2048) / (bare handshake + transport) (median), {}",
            r.backend
        ),
        case: Some(r.name.clone()),
        ratio,
        limit,
        verdict: judge(ratio, limit).into(),
        detail: match a {
            Some(a) => format!(
                "median HT {:.3} ms; bare handshake {:.3} ms (n = {}; floor {}, library {}); transport {:.3} ms = TCP {:.3} + {} application round trips x {:.3} ms; gander {:.3} ms; rest {:.3} ms",
                a.ht_ms,
                a.bare_ms,
                a.bare_n,
                fmt3(a.floor_ms),
                fmt3(a.library_ms),
                a.transport_ms,
                a.tcp_rtt_ms,
                a.flights,
                a.app_rtt_ms,
                a.gander_ms,
                a.rest_ms
            ),
            None => "no accounting for this row (see the run's notes)".into(),
        },
    }
}

/// gander's own share of HT <= 5% on every accounted row: the worst row is judged.
fn gander_share_target(results: &[ScenarioResult]) -> Target {
    let limit = crate::accounting::GANDER_SHARE_LIMIT;
    let rows: Vec<&ScenarioResult> = results
        .iter()
        .filter(|r| r.status == "ok" && r.ht_accounting.is_some())
        .collect();
    let share = |r: &ScenarioResult| r.ht_accounting.as_ref().map_or(0.0, |a| a.gander_share);
    let worst = rows.iter().copied().max_by(|a, b| {
        share(a)
            .partial_cmp(&share(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let ratio = worst.map(share);
    Target {
        what: "gander's own work (MMS association + event log) / HT (median; worst accounted row)"
            .into(),
        case: worst.map(|r| r.name.clone()),
        ratio,
        limit,
        verdict: judge(ratio, limit).into(),
        detail: match (worst, rows.iter().map(|r| share(r)).reduce(f64::min)) {
            (Some(w), Some(lo)) => {
                let a = w.ht_accounting.as_ref();
                format!(
                    "{} accounted rows, share {:.1}%-{:.1}%; gander {:.3} ms (MMS association {:.3} ms, event log {:.3} ms) of HT {:.3} ms",
                    rows.len(),
                    lo * 100.0,
                    share(w) * 100.0,
                    a.map_or(0.0, |a| a.gander_ms),
                    a.map_or(0.0, |a| a.gander_mms_ms),
                    a.map_or(0.0, |a| a.gander_harness_ms),
                    a.map_or(0.0, |a| a.ht_ms)
                )
            }
            _ => "no accounted row (gander on both ends with an in-process TLS library)".into(),
        },
    }
}

fn fmt3(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into())
}

/// The RT target as `docs/scenarios.md` states it: RT over TLS of the headline case (`headline`: the HT
/// target's case) within 1.2x the median RT of the same exchange in cleartext. Judged on that
/// row's ratio of medians; the detail gives how the cleartext was measured, the spread of the
/// per-block ratios within the row and the range over every gander report row on loopback.
/// Without a headline case with a ratio, the worst row is judged (and named).
pub fn rt_target(results: &[ScenarioResult], headline: Option<&str>) -> Target {
    let rows: Vec<&ScenarioResult> = results
        .iter()
        .filter(|r| {
            r.status == "ok"
                && r.stack == "gander"
                && r.link == "loopback"
                && r.interaction == "report"
                && r.rt_cleartext_ratio.is_some()
        })
        .collect();
    let ratio = |r: &&ScenarioResult| r.rt_cleartext_ratio.unwrap_or(f64::NAN);
    let head = headline.and_then(|h| rows.iter().find(|r| r.name == h));
    let worst = rows.iter().max_by(|a, b| {
        ratio(a)
            .partial_cmp(&ratio(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let (judged, how) = match (head, worst) {
        (Some(h), _) => (Some(*h), "headline case"),
        (None, Some(w)) => (Some(*w), "worst row (no headline case)"),
        (None, None) => (None, ""),
    };
    let mut detail = String::new();
    if let Some(r) = judged {
        detail = format!(
            "{how}: median RT {} ms over TLS vs {} ms in cleartext",
            fmt3(r.rt.as_ref().map(|s| s.median_ms)),
            fmt3(r.rt_cleartext_median_ms)
        );
        if r.rt_blocks > 0 {
            detail.push_str(&format!(
                ", measured in {} interleaved block pairs (n = {} and {})",
                r.rt_blocks,
                r.rt.as_ref().map_or(0, |s| s.n),
                r.rt_cleartext.as_ref().map_or(0, |s| s.n)
            ));
            if let Some((lo, hi)) = min_max(&r.rt_cleartext_block_ratios) {
                detail.push_str(&format!("; per block pair {lo:.2}-{hi:.2}x"));
            }
        } else {
            detail.push_str(", cleartext from a separate run");
        }
        let all: Vec<f64> = rows.iter().map(ratio).collect();
        if rows.len() > 1 {
            if let Some((lo, hi)) = min_max(&all) {
                let w = worst.map(|w| w.name.as_str()).unwrap_or("-");
                detail.push_str(&format!(
                    "; all {} rows {lo:.2}-{hi:.2}x (worst: {w})",
                    rows.len()
                ));
            }
        }
    }
    let x = judged.and_then(|r| r.rt_cleartext_ratio);
    Target {
        what: "MMS report RT over TLS / RT of the same exchange in cleartext (medians, same run)"
            .into(),
        case: judged.map(|r| r.name.clone()),
        ratio: x,
        limit: 1.2,
        verdict: match x {
            Some(v) if v <= 1.2 => "met",
            Some(_) => "missed",
            None => "not measured",
        }
        .into(),
        detail,
    }
}

fn min_max(v: &[f64]) -> Option<(f64, f64)> {
    let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    let lo = v.iter().copied().reduce(f64::min)?;
    let hi = v.iter().copied().reduce(f64::max)?;
    Some((lo, hi))
}

/// A whole run (`DIR/results.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResults {
    /// Version of the gander that ran.
    pub gander_version: String,
    /// Scenario name.
    pub scenario: String,
    /// Scenario description.
    pub description: String,
    /// The publication or purpose the scenario follows.
    pub source: String,
    /// Whether the quick variant (fewer connections and reports) ran.
    pub quick: bool,
    /// Start time, Unix seconds.
    pub started_unix: u64,
    /// Wall time of the whole run, s.
    pub duration_s: f64,
    /// `gander_measure::machine::Machine`, as JSON.
    pub machine: serde_json::Value,
    /// Every TLS library this machine offers, with its version.
    pub libraries: BTreeMap<String, String>,
    /// The library the floors were timed with.
    pub floor_library: String,
    /// The transfer-time class the verdicts use.
    pub class: TransferClass,
    /// The report tables and their layouts.
    pub tables: Vec<crate::scenario::TableSpec>,
    /// Every case's result, in run order.
    pub scenarios: Vec<ScenarioResult>,
    /// The headline targets and their verdicts.
    pub targets: Vec<Target>,
    /// Cases that failed, with their reasons, and other things a reader must know.
    pub notes: Vec<String>,
}

impl RunResults {
    /// Loads `DIR/results.json`.
    pub fn load(dir: &Path) -> Result<RunResults, ResultsError> {
        let p = dir.join("results.json");
        let text = std::fs::read_to_string(&p).map_err(|source| ResultsError::Read {
            path: p.clone(),
            source,
        })?;
        let mut r: RunResults = serde_json::from_str(&text)
            .map_err(|source| ResultsError::NotResults { path: p, source })?;
        // Raw samples live per case; attach them for the report's charts.
        for s in &mut r.scenarios {
            if s.samples.is_none() {
                let f = dir
                    .join("scenarios")
                    .join(format!("{}.json", crate::scenario::file_stem(&s.name)));
                if let Ok(t) = std::fs::read_to_string(&f) {
                    if let Ok(full) = serde_json::from_str::<ScenarioResult>(&t) {
                        s.samples = full.samples;
                    }
                }
            }
        }
        Ok(r)
    }

    /// Writes `results.json` (without raw samples).
    pub fn save(&self, dir: &Path) -> Result<(), ResultsError> {
        let mut slim = self.clone();
        for s in &mut slim.scenarios {
            s.samples = None;
        }
        let text = serde_json::to_string_pretty(&slim)?;
        write_atomic(&dir.join("results.json"), text.as_bytes())
    }
}

/// Writes via a temporary file and a rename, so an interrupted run never leaves half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|source| ResultsError::Write {
        path: tmp.clone(),
        source,
    })?;
    std::fs::rename(&tmp, path).map_err(|source| ResultsError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A hand-written log following the peers' contract: two connections, three reports, one
    /// error; server and client lines interleaved as the manager merges them.
    pub(super) const LOG: &str = r#"
{"event":"HT_START","t_ns":1000,"conn":0}
{"event":"TCP_UP","t_ns":1100,"conn":0}
{"event":"TLS_UP","t_ns":5100,"conn":0}
{"event":"HT_END","t_ns":6100,"conn":0}
{"event":"HT_START","t_ns":10000,"conn":1}
{"event":"TCP_UP","t_ns":10200,"conn":1}
{"event":"TLS_UP","t_ns":13200,"conn":1}
{"event":"HT_END","t_ns":14000,"conn":1,"resumed":true}
{"event":"RT_START","t_ns":20000,"conn":1,"seq":0}
{"event":"WRITE_START","t_ns":20010,"conn":1,"seq":0}
{"event":"WRITE_END","t_ns":20110,"conn":1,"seq":0}
{"event":"READ_START","t_ns":20500,"conn":1,"seq":0}
{"event":"READ_END","t_ns":20700,"conn":1,"seq":0}
{"event":"RT_END","t_ns":21000,"conn":1,"seq":0}
{"event":"RT_START","t_ns":30000,"conn":1,"seq":1}
{"event":"RT_END","t_ns":32000,"conn":1,"seq":1}

{"event":"RT_START","t_ns":40000,"conn":1,"seq":255,"n":2}
{"event":"RT_END","t_ns":43000,"conn":1,"seq":255,"n":2}
{"event":"RT_START","t_ns":50000,"conn":1,"seq":255,"n":258}
{"event":"ERROR","t_ns":50000,"kind":"Timeout"}
"#;

    #[test]
    fn extracts_ht_rt_and_steps() {
        let ev = parse_events(LOG).unwrap();
        let s = extract(&ev);
        assert_eq!(s.ht, [5100, 4000]);
        assert_eq!(s.ht_tcp, [100, 200]);
        assert_eq!(s.ht_tls, [4000, 3000]);
        assert_eq!(s.ht_mms, [1000, 800]);
        assert_eq!(s.rt, [1000, 2000, 3000]);
        assert_eq!(
            (
                s.rt_enc.as_slice(),
                s.rt_dec.as_slice(),
                s.rt_net.as_slice()
            ),
            (&[100u64][..], &[200u64][..], &[700u64][..])
        );
        assert_eq!(s.resumed, 1);
        assert_eq!(s.errors.get("Timeout"), Some(&1));
    }

    #[test]
    fn write_end_gives_each_reports_size_and_writes() {
        // The server's WRITE_END carries the TPKT octets and the writes the report took; a
        // WRITE_END without them (an older peer) adds nothing.
        let log = r#"{"event":"WRITE_END","t_ns":1,"conn":1,"seq":0,"n":0,"bytes":148,"writes":1}
{"event":"WRITE_END","t_ns":2,"conn":1,"seq":1,"n":1,"bytes":150,"writes":2}
{"event":"WRITE_END","t_ns":3,"conn":1,"seq":2,"n":2}"#;
        let s = extract(&parse_events(log).unwrap());
        assert_eq!(s.rt_writes, [[148, 1], [150, 2]]);
    }

    #[test]
    fn unkeyed_reports_pair_by_time() {
        let log = r#"{"event":"RT_START","t_ns":100}
{"event":"RT_START","t_ns":200}
{"event":"RT_END","t_ns":230,"n":0}
{"event":"RT_START","t_ns":300}
{"event":"RT_END","t_ns":350,"n":1}
{"event":"RT_END","t_ns":360,"n":2}"#;
        assert_eq!(extract(&parse_events(log).unwrap()).rt, [30, 50, 60]);
    }

    #[test]
    fn bad_lines_are_errors_with_line_numbers() {
        let e = parse_events("{\"event\":\"HT_START\",\"t_ns\":1}\nnot json").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.to_string().starts_with("line 2"), "{e}");
        let e = parse_events("{\"event\":\"HT_START\"}").unwrap_err();
        assert!(e.source.to_string().contains("t_ns"), "{e}");
    }

    #[test]
    fn handshake_bytes_and_groups_come_from_the_clients_tls_up() {
        let log = r#"
{"event":"HT_START","t_ns":1,"conn":0}
{"event":"TCP_UP","t_ns":2,"conn":0}
{"event":"TLS_UP","t_ns":3,"conn":0,"group":"X25519MLKEM768","tx_bytes":2000,"rx_bytes":3000}
{"event":"HT_END","t_ns":4,"conn":0}
{"event":"HT_START","t_ns":5,"conn":1}
{"event":"TLS_UP","t_ns":7,"conn":1,"group":"X25519MLKEM768","tx_bytes":2010,"rx_bytes":3001}
{"event":"HT_END","t_ns":8,"conn":1}
{"event":"TLS_UP","t_ns":9,"conn":2}
"#;
        let s = extract(&parse_events(log).unwrap());
        assert_eq!(s.hs_client_bytes, [2000, 2010]);
        assert_eq!(s.hs_server_bytes, [3000, 3001]);
        assert_eq!(s.groups.get("X25519MLKEM768"), Some(&2));
        let mut r = result("pq");
        r.compute(s, 1);
        let b = r.handshake_bytes.clone().unwrap();
        assert_eq!((b.client_to_server, b.server_to_client), (2010, 3001));
        assert_eq!(b.client_range, [2010, 2010]);
        assert_eq!(b.total(), 5011);
        assert_eq!(r.negotiated_group.as_deref(), Some("X25519MLKEM768"));
        assert_eq!(HandshakeBytes::of(&[], &[]), None);
    }

    pub(crate) fn result(name: &str) -> ScenarioResult {
        ScenarioResult {
            name: name.into(),
            tables: vec![],
            stack: "gander".into(),
            server_stack: "gander".into(),
            client_stack: "gander".into(),
            backend: "openssl".into(),
            backend_reason: "test".into(),
            library: "OpenSSL".into(),
            tls_version: "1.2".into(),
            cipher_suite: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into(),
            group: None,
            negotiated_group: None,
            handshake_bytes: None,
            skip_reason: None,
            rse_label: Some("iv".into()),
            sandia_label: Some("CS6".into()),
            key: "rsa2048".into(),
            interaction: "report".into(),
            payload: 125,
            period_ms: 5,
            connections: 2,
            reports: 3,
            warmup: 0,
            session_resumption: "off".into(),
            link: "loopback".into(),
            emulator: "none (loopback)".into(),
            link_achieved: None,
            reference: None,
            status: "ok".into(),
            error: None,
            discarded: Discarded::default(),
            resumed_handshakes: 0,
            ht: None,
            ht_steps: None,
            rt: None,
            rt_steps: None,
            ht_floor_ms: None,
            floor: None,
            ht_floor_ratio: None,
            ht_accounting: None,
            rt_accounting: None,
            ht_paths: Vec::new(),
            report_interarrival: None,
            read_rtt: None,
            report_one_way: None,
            app_rtt: None,
            rt_cleartext: None,
            rt_cleartext_median_ms: None,
            rt_cleartext_ratio: None,
            rt_blocks: 0,
            rt_cleartext_block_ratios: vec![],
            rt_diff: None,
            control: None,
            client_summary: None,
            duration_s: 0.0,
            samples: None,
        }
    }

    #[test]
    fn compute_warmup_ratios_var_and_targets() {
        let mut s = extract(&parse_events(LOG).unwrap());
        s.rt_clear = vec![9_000_000, 500, 1000];
        let mut a = result("a");
        a.floor = Some(crate::floor::Floor {
            total_ms: 0.002,
            ops: vec![],
            library: "x".into(),
            same_library: true,
            note: String::new(),
            not_counted: vec![],
        });
        a.compute(s, 1);
        assert_eq!(
            a.discarded,
            Discarded {
                ht: 1,
                rt: 1,
                rt_clear: 1
            }
        );
        let ht = a.ht.as_ref().unwrap();
        assert_eq!((ht.n, ht.median_ms), (1, 0.004));
        // median RT of the kept (2000, 3000) is 2000 ns (nearest rank); cleartext (500, 1000) -> 500.
        assert_eq!(a.rt.as_ref().unwrap().median_ms, 0.002);
        assert_eq!(a.rt_cleartext_median_ms, Some(0.0005));
        assert_eq!(a.rt_cleartext_ratio, Some(4.0));
        assert_eq!(a.ht_floor_ratio, Some(2.0));
        let mut b = a.clone();
        b.name = "b".into();
        b.reference = Some("a".into());
        b.ht.as_mut().unwrap().mean_ms = 0.006;
        let mut v = vec![a, b];
        apply_var_pct(&mut v);
        assert!((v[1].ht.as_ref().unwrap().var_pct.unwrap() - 50.0).abs() < 1e-9);
        // HT 0.004 ms = 1.6x (bare 0.002 + transport 0.0005), gander 0.0001 = 2.5%.
        let own = crate::accounting::OwnCost {
            mms_ms: 0.00006,
            harness_ms: 0.00004,
        };
        v[0].ht_accounting = Some(crate::accounting::compose(
            0.004,
            Some(0.002),
            0.002,
            40,
            0,
            &[[4_000, 100, 100]],
            4,
            &own,
        ));
        let t = targets(&v);
        assert_eq!(t[0].verdict, INFORMATION);
        assert!(t[0].what.ends_with(", openssl"), "{}", t[0].what);
        assert_eq!(t[1].verdict, "missed");
        assert!((t[1].ratio.unwrap() - 1.6).abs() < 1e-9);
        assert_eq!(t[2].ratio, Some(4.0));
        // No RT accounting on this row: gander's share of RT is not measured, not met.
        assert_eq!(t[3].verdict, "not measured");
        assert!(t[3].what.starts_with("gander's own share of the report RT"));
        assert_eq!(t[4].verdict, "met");
        assert!((t[4].ratio.unwrap() - 0.025).abs() < 1e-9);
        assert_eq!(t[5].verdict, "not measured");
        // The same headline suite on another library: its own pair of targets, none dropped.
        let mut c = v[0].clone();
        c.name = "c".into();
        c.backend = "rustls".into();
        c.ht_floor_ratio = Some(1.2);
        c.rt_cleartext_ratio = Some(1.1);
        c.ht_accounting = None;
        v.push(c);
        let t = targets(&v);
        assert_eq!(t.len(), 11);
        assert_eq!(
            (t[0].case.as_deref(), t[0].verdict.as_str()),
            (Some("a"), INFORMATION)
        );
        assert_eq!(
            (t[4].case.as_deref(), t[4].verdict.as_str()),
            (Some("c"), INFORMATION)
        );
        assert!(t[4].what.ends_with(", rustls"), "{}", t[4].what);
        // c was not accounted: its own bare-handshake target says so instead of borrowing a's.
        assert_eq!(
            (t[5].case.as_deref(), t[5].verdict.as_str()),
            (Some("c"), "not measured")
        );
        assert_eq!((t[6].case.as_deref(), t[6].ratio), (Some("c"), Some(1.1)));
        assert_eq!(
            (t[7].case.as_deref(), t[7].verdict.as_str()),
            (Some("c"), "not measured")
        );
    }

    #[test]
    fn the_application_round_trip_is_tls_up_to_cotp_up_per_connection() {
        let ev = |event: &str, t_ns: u64, conn: u64| Event {
            event: event.into(),
            t_ns,
            conn: Some(conn),
            seq: None,
            n: None,
            kind: None,
            resumed: None,
            group: None,
            tx_bytes: None,
            rx_bytes: None,
            rtt_ns: None,
            one_way_ns: None,
            phase: None,
            ns: None,
            bytes: None,
            writes: None,
        };
        let events = [
            ev("HT_START", 0, 1),
            ev("TCP_UP", 100, 1),
            ev("TLS_UP", 1_000, 1),
            ev("COTP_UP", 1_070, 1),
            // cleartext: from TCP_UP
            ev("TCP_UP", 2_000, 2),
            ev("COTP_UP", 2_050, 2),
            // no COTP_UP (failed): nothing
            ev("TLS_UP", 3_000, 3),
        ];
        assert_eq!(app_round_trips(&events), [[0; 3]; 0]);
        let mut with_end = events.to_vec();
        with_end.push(ev("HT_START", 1_900, 2));
        with_end.push(ev("HT_END", 1_200, 1));
        with_end.push(ev("HT_END", 2_300, 2));
        assert_eq!(
            app_round_trips(&with_end),
            [[1_200, 100, 70], [400, 100, 50]]
        );
    }

    #[test]
    fn warmup_is_per_block_when_interleaved() {
        assert_eq!(warmup_mask(4, &[], 1), [true, false, false, false]);
        let m = warmup_mask(8, &[0, 0, 0, 0, 1, 1, 1, 1], 2);
        assert_eq!(m, [true, true, false, false, true, true, false, false]);
        assert_eq!(kept(&[1, 2, 3, 4, 5, 6, 7, 8], &m), [3, 4, 7, 8]);
        // A block list that does not match the samples falls back to the loop's start.
        assert_eq!(warmup_mask(3, &[0], 1), [true, false, false]);
        // At most half of each block.
        assert_eq!(warmup_mask(3, &[0, 0, 1], 5), [true, false, false]);
    }

    #[test]
    fn interleaved_blocks_ratios_and_discards() {
        let mut a = result("a");
        let s = Samples {
            // block 0: warm-up 900, then 100, 110; block 1: warm-up 900, then 200, 220
            rt: vec![900, 100, 110, 900, 200, 220],
            rt_block: vec![0, 0, 0, 1, 1, 1],
            rt_enc: vec![9, 1, 1, 9, 2, 2],
            rt_net: vec![9, 1, 1, 9, 2, 2],
            rt_dec: vec![9, 1, 1, 9, 2, 2],
            rt_clear: vec![800, 50, 55, 800, 200, 200],
            rt_clear_block: vec![0, 0, 0, 1, 1, 1],
            ..Samples::default()
        };
        assert_eq!(block_ratios(&s, 1), [2.0, 1.0]);
        a.compute(s, 1);
        assert_eq!(a.discarded.rt, 2);
        assert_eq!(a.discarded.rt_clear, 2);
        assert_eq!(a.rt_blocks, 2);
        assert_eq!(a.rt_cleartext_block_ratios, [2.0, 1.0]);
        let rt = a.rt.as_ref().unwrap();
        assert_eq!(rt.n, 4);
        assert!((rt.max_ms - 0.00022).abs() < 1e-12);
        assert!((a.rt_steps.as_ref().unwrap().encrypt.max_ms - 0.000002).abs() < 1e-12);
        // kept TLS 100, 110, 200, 220 -> median (nearest rank) 110; clear 50, 55, 200, 200 -> 55
        assert_eq!(a.rt_cleartext_ratio, Some(2.0));
    }

    #[test]
    fn rt_target_judges_the_headline_row_and_gives_the_spread() {
        let mk = |name: &str, ratio: f64| {
            let mut r = result(name);
            r.rt_cleartext_ratio = Some(ratio);
            r.rt_cleartext_median_ms = Some(0.05);
            r.rt_blocks = 4;
            r.rt_cleartext_block_ratios = vec![0.9, 1.1, 1.3];
            r
        };
        let rows = vec![mk("iv", 1.1), mk("v", 1.6), mk("i", 0.95)];
        let t = rt_target(&rows, Some("iv"));
        assert_eq!(
            (t.case.as_deref(), t.ratio, t.verdict.as_str()),
            (Some("iv"), Some(1.1), "met")
        );
        assert!(t.detail.contains("headline case"), "{}", t.detail);
        assert!(
            t.detail.contains("4 interleaved block pairs"),
            "{}",
            t.detail
        );
        assert!(
            t.detail.contains("per block pair 0.90-1.30x"),
            "{}",
            t.detail
        );
        assert!(
            t.detail.contains("all 3 rows 0.95-1.60x (worst: v)"),
            "{}",
            t.detail
        );
        // No headline: the worst row is judged, and says so.
        let t = rt_target(&rows, None);
        assert_eq!(
            (t.case.as_deref(), t.verdict.as_str()),
            (Some("v"), "missed")
        );
        assert!(t.detail.starts_with("worst row"), "{}", t.detail);
        // Rows on other stacks or links, or failed, are not judged.
        let mut other = mk("x", 9.0);
        other.link = "wan".into();
        let mut failed = mk("y", 9.0);
        failed.status = "failed".into();
        assert_eq!(rt_target(&[other, failed], None).verdict, "not measured");
    }

    #[test]
    fn sandia_differences_pair_samples() {
        let d = DiffStat::of(&[3_000_000, 5_000_000], &[1_000_000, 2_000_000, 7]).unwrap();
        assert_eq!(d.n, 2);
        assert!((d.mean_ms - 2.5).abs() < 1e-12);
        assert!((d.sd_ms - 0.5f64.sqrt()).abs() < 1e-12);
    }
}
