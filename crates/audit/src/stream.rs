//! One publisher's stream: how it is identified, what the inventory shows of it, and the
//! state its behaviour checks keep.

use crate::arrival::{ArrivalSummary, Arrivals};
use crate::goose_seq::GooseSeq;
use crate::sv_seq::SvSeq;
use gander_sec::view::Kind;
use serde::Serialize;
use std::fmt;
use std::net::IpAddr;

/// Key ids remembered per stream (rollovers beyond are still reported).
pub const MAX_KEY_IDS: usize = 16;
/// State-change times kept per stream for the plot.
pub const MAX_STATE_CHANGES: usize = 256;

/// Where a stream comes from or goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// A layer-2 address.
    Mac([u8; 6]),
    /// An IP address and UDP port.
    Ip(IpAddr, u16),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Mac(m) => write!(f, "{}", mac(m)),
            Endpoint::Ip(a, p) => write!(f, "{}", std::net::SocketAddr::new(*a, *p)),
        }
    }
}

/// A MAC address as `01:0c:cd:01:00:01`.
pub fn mac(m: &[u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// What makes two frames one stream: kind, source, destination, APPID and control-block
/// reference (gocbRef or svID, by a hash) where readable, and outer VLAN. Devices publish
/// several control blocks from one address under one APPID (0 when left unconfigured), so the
/// reference tells them apart; an encrypted R-GOOSE hides both and is one stream per flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamKey {
    /// Kind of traffic.
    pub kind: Kind,
    /// Source.
    pub src: Endpoint,
    /// Destination.
    pub dst: Endpoint,
    /// APPID, where readable.
    pub appid: Option<u16>,
    /// FNV-1a hash of gocbRef or svID, where readable.
    pub id_hash: Option<u64>,
    /// Outer VLAN id.
    pub vid: Option<u16>,
}

/// 64-bit FNV-1a of a control-block reference, for [`StreamKey::id_hash`].
pub fn id_hash(id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// One stream with its inventory fields and its checks' state.
#[derive(Debug)]
pub struct Stream {
    /// Identity.
    pub key: StreamKey,
    /// Zeek-style unique id (`G`, `S`, `R`, `V` or `X` for GOOSE, SV, R-GOOSE, R-SV, other).
    pub uid: String,
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// 802.1Q priority of the outer tag.
    pub priority: Option<u8>,
    /// gocbRef or svID.
    pub id: Option<String>,
    /// datSet.
    pub dat_set: Option<String>,
    /// goID.
    pub go_id: Option<String>,
    /// confRev (the last seen).
    pub conf_rev: Option<u32>,
    /// timeAllowedtoLive of the last frame, ms.
    pub tal_ms: Option<u32>,
    /// smpRate.
    pub smp_rate: Option<u16>,
    /// Frame numbers and capture times of the first and last frame.
    pub first: (u64, u64),
    /// See `first`.
    pub last: (u64, u64),
    /// Frames.
    pub frames: u64,
    /// Frames with IEC 62351-6 security.
    pub secured: u64,
    /// Frames without.
    pub unsecured: u64,
    /// Frames verified (with keys).
    pub verified: u64,
    /// Frames that failed verification or freshness (with keys).
    pub failed: u64,
    /// Key ids in order of first use.
    pub key_ids: Vec<u32>,
    /// The key id of the last secured frame.
    pub current_key: Option<u32>,
    /// MAC and encryption algorithms that verified.
    pub algorithms: Option<(&'static str, &'static str)>,
    /// Length of the layer-2 mAC field (without keys).
    pub mac_len: Option<usize>,
    /// State changes seen (GOOSE).
    pub state_changes: u64,
    /// Frames with smpSynch 0 / 1 (local) / 2 (global) (SV).
    pub synch: [u64; 3],
    /// Whether any frame had the simulation bit.
    pub simulation: bool,
    /// Inter-arrival times.
    pub arrivals: Arrivals,
    /// The last frame taken as an arrival (in order): its number and the timeAllowedtoLive
    /// it carried, which bounds the wait for the next one (IEC 61850-8-1 §18.1.2.5).
    pub last_arrival: Option<(u64, Option<u32>)>,
    /// Whether the wait after `last_arrival` was already reported as exceeded: later frames out
    /// of order (an injection that moved the counters on) do not expire it again.
    pub tal_reported: bool,
    /// GOOSE counters.
    pub goose: GooseSeq,
    /// SV counters.
    pub sv: SvSeq,
    /// Capture times of state changes (GOOSE), for the plot.
    pub state_change_ns: Vec<u64>,
    /// Frames refused by verification, or cut by the capture before their counters could be
    /// believed, since the last trusted one: a sequence gap of at most this many numbers is
    /// those frames, already accounted for, not a loss.
    pub refused_since_trusted: u32,
    /// Frames of this stream the capture's snap length cut (`crate::cut_stream`): counted in
    /// `frames`, and in `secured` or `unsecured` when their headers told.
    pub cut: u64,
    /// Hash and recording place of the last in-order frame (what a capture copy repeats).
    pub last_recorded: (u64, crate::Recorded),
}

impl Stream {
    /// A new stream first seen in frame `no` at `ts_ns`; `index` makes its uid unique.
    pub fn new(
        key: StreamKey,
        index: usize,
        src_mac: [u8; 6],
        dst_mac: [u8; 6],
        no: u64,
        ts_ns: u64,
    ) -> Stream {
        Stream {
            uid: uid(&key, index),
            key,
            src_mac,
            dst_mac,
            priority: None,
            id: None,
            dat_set: None,
            go_id: None,
            conf_rev: None,
            tal_ms: None,
            smp_rate: None,
            first: (no, ts_ns),
            last: (no, ts_ns),
            frames: 0,
            secured: 0,
            unsecured: 0,
            verified: 0,
            failed: 0,
            key_ids: Vec::new(),
            current_key: None,
            algorithms: None,
            mac_len: None,
            state_changes: 0,
            synch: [0; 3],
            simulation: false,
            arrivals: Arrivals::default(),
            last_arrival: None,
            tal_reported: false,
            goose: GooseSeq::default(),
            sv: SvSeq::default(),
            state_change_ns: Vec::new(),
            refused_since_trusted: 0,
            cut: 0,
            last_recorded: (0, crate::Recorded::default()),
        }
    }

    /// Frame `no`, captured at `ts_ns`, taken as an arrival: the inter-arrival statistics and
    /// the wait its timeAllowedtoLive (`tal_ms`, the stream's latest) opens.
    pub fn arrived(&mut self, no: u64, ts_ns: u64) {
        self.arrivals.add(ts_ns);
        self.last_arrival = Some((no, self.tal_ms));
        self.tal_reported = false;
    }

    /// Whether the wait the last frame in order opened (its timeAllowedtoLive, IEC 61850-8-1
    /// §18.1.2.5) had run out at `at_ns`, not yet said: then marked said, and what the
    /// finding names.
    pub fn tal_expired(&mut self, at_ns: u64) -> Option<TalExpiry> {
        let (Some((frame, Some(tal))), Some(prev)) = (self.last_arrival, self.arrivals.last_ns())
        else {
            return None;
        };
        let gap_ns = at_ns.saturating_sub(prev);
        if self.tal_reported || tal == 0 || gap_ns <= u64::from(tal) * 1_000_000 {
            return None;
        }
        self.tal_reported = true;
        Some(TalExpiry {
            frame,
            frame_ns: prev,
            gap_ns,
            tal,
            counters: match self.goose.last() {
                Some((st, sq)) => format!(" (stNum {st} sqNum {sq})"),
                None => String::new(),
            },
        })
    }

    /// The inventory row.
    pub fn report(&self) -> StreamReport {
        let (src_ip, src_port) = match self.key.src {
            Endpoint::Ip(a, p) => (Some(a.to_string()), Some(p)),
            Endpoint::Mac(_) => (None, None),
        };
        let (dst_ip, dst_port) = match self.key.dst {
            Endpoint::Ip(a, p) => (Some(a.to_string()), Some(p)),
            Endpoint::Mac(_) => (None, None),
        };
        let span = self.last.1.saturating_sub(self.first.1);
        StreamReport {
            uid: self.uid.clone(),
            kind: self.key.kind.name(),
            src_mac: mac(&self.src_mac),
            dst_mac: mac(&self.dst_mac),
            src_ip,
            src_port,
            dst_ip,
            dst_port,
            appid: self.key.appid,
            vlan: self.key.vid,
            priority: self.priority,
            id: self.id.clone(),
            dat_set: self.dat_set.clone(),
            go_id: self.go_id.clone(),
            conf_rev: self.conf_rev,
            tal_ms: self.tal_ms,
            smp_rate: self.smp_rate,
            first_frame: self.first.0,
            last_frame: self.last.0,
            first_ts_ns: self.first.1,
            last_ts_ns: self.last.1,
            frames: self.frames,
            rate_per_s: if span > 0 {
                (self.frames.saturating_sub(1)) as f64 / (span as f64 / 1e9)
            } else {
                0.0
            },
            security: if self.secured == 0 && self.unsecured == 0 {
                // Only frames the capture cut before their security could be told.
                "unknown"
            } else if self.secured == 0 {
                "unsecured"
            } else if self.unsecured == 0 {
                "secured"
            } else {
                "mixed"
            },
            secured: self.secured,
            unsecured: self.unsecured,
            cut_by_capture: self.cut,
            verified: self.verified,
            failed: self.failed,
            key_ids: self.key_ids.clone(),
            mac: self.algorithms.map(|a| a.0),
            enc: self.algorithms.map(|a| a.1),
            mac_len: self.mac_len,
            state_changes: self.state_changes,
            smp_synch: self.synch,
            simulation: self.simulation,
            arrival: self.arrivals.summary(),
        }
    }
}

/// A Zeek-style uid: a letter for the kind and 17 base-62 digits of a hash of the key and the
/// stream's index, so the same capture always gives the same uids.
fn uid(key: &StreamKey, index: usize) -> String {
    let letter = match key.kind {
        Kind::Goose => 'G',
        Kind::Sv => 'S',
        Kind::RGoose => 'R',
        Kind::RSv => 'V',
        _ => 'X',
    };
    prefixed_uid(letter, &format!("{key:?}/{index}"))
}

/// `letter` and 17 base-62 digits of a 128-bit FNV-1a hash of `seed`.
pub fn prefixed_uid(letter: char, seed: &str) -> String {
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for b in seed.bytes() {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000000001000000000000000000013B);
    }
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut s = String::with_capacity(18);
    s.push(letter);
    for _ in 0..17 {
        s.push(DIGITS[(h % 62) as usize] as char);
        h /= 62;
    }
    s
}

/// A stream in the inventory (the JSON of the report and the per-kind logs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamReport {
    /// uid.
    pub uid: String,
    /// goose, sv, r-goose, r-sv, session, gse-management.
    pub kind: &'static str,
    /// Source MAC.
    pub src_mac: String,
    /// Destination MAC.
    pub dst_mac: String,
    /// Source IP (R-GOOSE/R-SV).
    pub src_ip: Option<String>,
    /// Source UDP port.
    pub src_port: Option<u16>,
    /// Destination IP.
    pub dst_ip: Option<String>,
    /// Destination UDP port.
    pub dst_port: Option<u16>,
    /// APPID.
    pub appid: Option<u16>,
    /// Outer VLAN id.
    pub vlan: Option<u16>,
    /// Outer 802.1Q priority.
    pub priority: Option<u8>,
    /// gocbRef or svID.
    pub id: Option<String>,
    /// datSet.
    pub dat_set: Option<String>,
    /// goID.
    pub go_id: Option<String>,
    /// confRev.
    pub conf_rev: Option<u32>,
    /// timeAllowedtoLive, ms.
    pub tal_ms: Option<u32>,
    /// smpRate.
    pub smp_rate: Option<u16>,
    /// First frame number.
    pub first_frame: u64,
    /// Last frame number.
    pub last_frame: u64,
    /// First capture time, ns since the epoch.
    pub first_ts_ns: u64,
    /// Last capture time.
    pub last_ts_ns: u64,
    /// Frames.
    pub frames: u64,
    /// Frames per second over the stream's span.
    pub rate_per_s: f64,
    /// unsecured, secured or mixed; unknown when every frame was cut before its security
    /// could be told.
    pub security: &'static str,
    /// Secured frames.
    pub secured: u64,
    /// Unsecured frames.
    pub unsecured: u64,
    /// Frames the capture's snap length cut: in `frames` (and in `secured` or `unsecured` when
    /// their headers told).
    pub cut_by_capture: u64,
    /// Verified frames.
    pub verified: u64,
    /// Failed frames.
    pub failed: u64,
    /// Key ids in order of first use.
    pub key_ids: Vec<u32>,
    /// MAC algorithm that verified.
    pub mac: Option<&'static str>,
    /// Encryption algorithm that verified.
    pub enc: Option<&'static str>,
    /// Layer-2 mAC length.
    pub mac_len: Option<usize>,
    /// GOOSE state changes.
    pub state_changes: u64,
    /// SV frames by smpSynch 0/1/2.
    pub smp_synch: [u64; 3],
    /// Any simulation bit.
    pub simulation: bool,
    /// Inter-arrival summary.
    pub arrival: Option<ArrivalSummary>,
}

/// A timeAllowedtoLive that ran out ([`Stream::tal_expired`]).
#[derive(Debug)]
pub struct TalExpiry {
    /// The last frame in order, whose wait ran out.
    pub frame: u64,
    /// Its capture time.
    pub frame_ns: u64,
    /// The wait, ns.
    pub gap_ns: u64,
    /// Its timeAllowedtoLive, ms.
    pub tal: u32,
    /// " (stNum S sqNum Q)" of it, or empty.
    pub counters: String,
}
