//! `gander audit`: the IEC 62351 security posture of IEC 61850 traffic, judged from a capture.
//!
//! Sans-I/O: the caller feeds frames one by one ([`Auditor::feed`]: frame number, capture
//! time, Ethernet bytes) from a file or an interface, and [`Auditor::finish`] gives the
//! [`Audit`]: the inventory of publishers, the findings with the frame numbers that show them,
//! and the renderings ([`zeek`] logs, the [`html`] report). Memory is bounded by the number of
//! streams, never by the capture (each stream keeps a fixed reservoir and a bounded list of
//! frame numbers per finding).
//!
//! Every frame is classified once by `gander_sec::view::classify`; with keys, every secured
//! frame is verified and its freshness judged by `gander_sec::frame::CaptureVerifier`, the same
//! code and verdicts as `gander frame verify` and the gateway. The behaviour checks (GOOSE
//! stNum/sqNum per IEC 61850-8-1 §18.1, SV smpCnt per IEC 61850-9-2, timeAllowedtoLive,
//! simulation and ndsCom) read only frames that verified or carry no security, so a forged
//! frame is reported once, as what it is.

#![forbid(unsafe_code)]

pub mod arrival;
pub mod assoc;
mod cut_stream;
pub mod finding;
pub mod fnv;
pub mod gdoi;
pub mod gdoi_decrypt;
pub mod goose_seq;
pub mod html;
pub mod ike_keylog;
pub mod live_input;
pub mod metrics;
pub mod mms_tcp;
pub mod scd;
pub mod scd_routable;
pub mod seen;
pub mod stream;
pub mod sv_seq;
pub mod tls_judge;
pub mod tls_wire;
pub mod zeek;

use finding::{Finding, Findings, Severity};
use gander_sec::frame::{CaptureVerifier, Outcome};
use gander_sec::view::{self, Content, FrameView, Kind};
use gander_sec::{KeyStore, Profile, SecError};
use goose_seq::GooseEvent;
use seen::Seen;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use stream::{Endpoint, Stream, StreamKey, StreamReport};
use sv_seq::SvEvent;

/// How the audit reads frames.
#[derive(Clone, Copy, Debug)]
pub struct AuditOptions {
    /// The framing profile of the senders' session headers.
    pub profile: Profile,
    /// smpCnt wrap for SV freshness of streams that do not state it (as `frame verify`).
    pub sv_wrap: u16,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            profile: Profile::Standard,
            sv_wrap: gander_sec::replay::DEFAULT_SV_WRAP,
        }
    }
}

/// Where the capture recorded a frame: the pcapng interface and the Linux cooked packet type
/// (`gander_capture::link::packet_type`). A Linux "any" capture or a capture on several
/// interfaces records one frame once per interface it crosses; the copies are byte for byte
/// the same and differ here, which a frame its publisher sent twice does not (docs/audit.md,
/// `capture-copy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Interface (pcapng) or 0.
    pub interface: u32,
    /// Linux cooked packet type, `None` for other link types.
    pub packet_type: Option<u16>,
}

/// Publisher streams followed at once (GOOSE, SV, R-GOOSE, R-SV). Frames of streams beyond it
/// are counted in one `streams-overflow` finding: 200,000 spoofed source MACs made 200,000
/// streams (527 MB for a file audit), and a live audit could be pushed to running out of
/// memory by anyone who can send frames. A substation has hundreds; MMS connections have the
/// same cap (`mms_tcp::MAX_FLOWS`).
pub const MAX_STREAMS: usize = 65_536;

/// The audit of a capture, frame by frame.
#[derive(Debug)]
pub struct Auditor<'k> {
    opts: AuditOptions,
    verifier: Option<CaptureVerifier<'k>>,
    index: HashMap<StreamKey, usize, fnv::FnvBuild>,
    streams: Vec<Stream>,
    findings: Findings,
    frames: u64,
    kinds: BTreeMap<&'static str, u64>,
    first_ts: Option<u64>,
    last_ts: u64,
    mms: mms_tcp::MmsTracker,
    kernel: Option<metrics::KernelTotals>,
    /// The last frame read when the kernel's counters were last read (live audits).
    stats_read_at: Option<u64>,
    gdoi: gdoi::GdoiTracker,
    cut: live_input::CutTally,
    /// The frame being judged: a hash of its octets after the destination address (which a
    /// Linux cooked capture does not record) and where it was recorded.
    recorded: (u64, Recorded),
}

impl<'k> Auditor<'k> {
    /// An audit; with `keys`, every secured frame is verified.
    pub fn new(opts: AuditOptions, keys: Option<&'k KeyStore>) -> Self {
        let verifier = keys.map(|k| {
            let mut v = CaptureVerifier::new(opts.profile, k);
            v.set_sv_wrap(opts.sv_wrap);
            v
        });
        Auditor {
            opts,
            verifier,
            index: HashMap::default(),
            streams: Vec::new(),
            findings: Findings::default(),
            frames: 0,
            kinds: BTreeMap::new(),
            first_ts: None,
            last_ts: 0,
            mms: mms_tcp::MmsTracker::default(),
            kernel: None,
            stats_read_at: None,
            gdoi: gdoi::GdoiTracker::default(),
            cut: live_input::CutTally::default(),
            recorded: (0, Recorded::default()),
        }
    }

    /// Reads the encrypted GDOI messages (UDP 848) of the phase-1 SAs in `log`, the lab's
    /// IKEv1 key log (`gander audit --ike-keylog`, [`gdoi_decrypt`]).
    pub fn set_ike_keylog(&mut self, log: ike_keylog::IkeKeyLog) {
        self.gdoi.set_keylog(log);
    }

    /// Records a finding of the input layer (the capture reader, IP fragment reassembly) on
    /// frame `no`, so the report holds it with the rest.
    pub fn input_finding(
        &mut self,
        code: &'static str,
        severity: Severity,
        no: u64,
        ts_ns: u64,
        detail: impl FnOnce() -> String,
    ) {
        self.findings.add(code, severity, None, no, ts_ns, detail);
    }

    /// Counts a frame the input layer held back (an IP fragment waiting for the rest of its
    /// datagram): it is judged within the reassembled datagram.
    pub fn held(&mut self, ts_ns: u64) {
        self.frames += 1;
        self.first_ts.get_or_insert(ts_ns);
        self.last_ts = self.last_ts.max(ts_ns);
        *self.kinds.entry("ip-fragment").or_insert(0) += 1;
    }

    /// The findings so far (live mode).
    pub fn findings(&self) -> &[Finding] {
        self.findings.as_slice()
    }

    /// Judges frame number `no` (1-based) captured at `ts_ns` (nanoseconds since the Unix
    /// epoch); `data` is the Ethernet frame.
    pub fn feed(&mut self, no: u64, ts_ns: u64, data: &[u8]) {
        self.feed_recorded(no, ts_ns, data, Recorded::default());
    }

    /// [`Self::feed`] with where the capture recorded the frame, so that copies the capture
    /// made of one frame are told from a frame sent twice.
    pub fn feed_recorded(&mut self, no: u64, ts_ns: u64, data: &[u8], rec: Recorded) {
        self.frames += 1;
        self.first_ts.get_or_insert(ts_ns);
        self.last_ts = self.last_ts.max(ts_ns);
        let v = match view::classify(self.opts.profile, data) {
            Ok(v) => v,
            Err(e) => return self.unclassified(no, ts_ns, data, e),
        };
        let kind = v.kind();
        if kind == Kind::Other {
            let k = self.other(no, ts_ns, data);
            *self.kinds.entry(k).or_insert(0) += 1;
            return;
        }
        *self.kinds.entry(kind.name()).or_insert(0) += 1;
        self.recorded = (recorded_octets_hash(data), rec);
        let seen = Seen::read(self.opts.profile, &v);
        let verdict = self
            .verifier
            .as_mut()
            .map(|ver| ver.verify_at(data, ts_ns / 1_000_000_000, ts_ns));
        let Some(i) = self.stream_of(kind, &v, &seen, no, ts_ns) else {
            return self.stream_overflow(no, ts_ns);
        };
        self.judge(i, no, ts_ns, &v, seen, verdict);
    }

    /// A frame of a stream beyond [`MAX_STREAMS`]: counted in one finding, not followed.
    fn stream_overflow(&mut self, no: u64, ts: u64) {
        self.findings
            .add("streams-overflow", Severity::High, None, no, ts, || {
                format!("more than {MAX_STREAMS} publisher streams: frames of further streams are counted here, not followed (a flood of spoofed sources, or a capture of more than one substation); the audit is incomplete for them")
            });
    }

    /// Traffic that is not IEC 61850 multicast: MMS on TCP, GDOI on UDP 848, or other.
    fn other(&mut self, no: u64, ts: u64, data: &[u8]) -> &'static str {
        if self.mms.feed(no, ts, data) {
            "mms"
        } else if self.gdoi.feed(no, ts, data, &mut self.findings) {
            "gdoi"
        } else {
            "other"
        }
    }

    /// A frame `classify` refused: a checksum a NIC left undone on traffic that is not IEC
    /// 61850 is nobody's business here; fragments wait for reassembly; anything else that
    /// claims to be IEC 61850 is malformed.
    fn unclassified(&mut self, no: u64, ts: u64, data: &[u8], e: SecError) {
        match e {
            SecError::BadChecksum(_) if !udp_to_session(data) => {
                let k = self.other(no, ts, data);
                *self.kinds.entry(k).or_insert(0) += 1;
            }
            SecError::Fragment => {
                *self.kinds.entry("ip-fragment").or_insert(0) += 1;
                self.findings.add("ip-fragment", Severity::Info, None, no, ts, || {
                    "an IP fragment of a UDP datagram: not reassembled by this reader, its datagram is not judged".into()
                });
            }
            e => {
                *self.kinds.entry("malformed").or_insert(0) += 1;
                self.findings
                    .add("malformed", Severity::Medium, None, no, ts, || {
                        format!("a frame that claims to be IEC 61850 traffic does not parse: {e}")
                    });
            }
        }
    }

    fn stream_of(
        &mut self,
        kind: Kind,
        v: &FrameView<'_>,
        seen: &Seen<'_>,
        no: u64,
        ts: u64,
    ) -> Option<usize> {
        let (src, dst) = match &v.content {
            Content::Session(s) => {
                let (sa, da) = match s.udp.ip {
                    view::IpAddrs::V4 { src, dst } => (IpAddr::from(src), IpAddr::from(dst)),
                    view::IpAddrs::V6 { src, dst } => (IpAddr::from(src), IpAddr::from(dst)),
                };
                (
                    Endpoint::Ip(sa, s.udp.src_port),
                    Endpoint::Ip(da, s.udp.dst_port),
                )
            }
            _ => (Endpoint::Mac(v.src), Endpoint::Mac(v.dst)),
        };
        let key = StreamKey {
            kind,
            src,
            dst,
            appid: seen.appid,
            id_hash: seen.id.map(stream::id_hash),
            vid: v.outer_vid(),
        };
        if let Some(&i) = self.index.get(&key) {
            return Some(i);
        }
        let i = self.streams.len();
        if i >= MAX_STREAMS {
            return None;
        }
        let mut s = Stream::new(key, i, v.src, v.dst, no, ts);
        s.priority = v.tag(0).map(|t| t.tag.pcp);
        self.streams.push(s);
        self.index.insert(key, i);
        Some(i)
    }

    fn judge(
        &mut self,
        i: usize,
        no: u64,
        ts: u64,
        v: &FrameView<'_>,
        seen: Seen<'_>,
        verdict: Option<gander_sec::frame::Verdict>,
    ) {
        let recorded = self.recorded;
        let s = &mut self.streams[i];
        let f = &mut self.findings;
        let at = Some((i, s.uid.as_str()));
        s.frames += 1;
        s.last = (no, ts);
        let secured = v.secured();
        // What the checks may believe: with keys, only verified or unsecured frames.
        let (trusted, key_id, st_sq, smp_cnt) = match &verdict {
            None => (true, seen.key_id, seen.st_sq, seen.smp_cnt),
            Some(vd) => match &vd.outcome {
                Outcome::Verified => {
                    s.verified += 1;
                    s.algorithms = vd.algorithms;
                    (
                        true,
                        vd.key_id,
                        vd.st_sq.or(seen.st_sq),
                        vd.smp_cnt.or(seen.smp_cnt),
                    )
                }
                Outcome::Unsecured | Outcome::Skipped => (true, None, seen.st_sq, seen.smp_cnt),
                Outcome::Failed(e) => {
                    s.failed += 1;
                    s.refused_since_trusted = s.refused_since_trusted.saturating_add(1);
                    let code = sec_code(e);
                    let sev = if matches!(e, SecError::Malformed(_) | SecError::WrongProfile { .. })
                    {
                        Severity::Medium
                    } else {
                        Severity::High
                    };
                    f.add(code, sev, at, no, ts, || {
                        format!(
                            "{} frame failed IEC 62351-6 verification: {e}",
                            s.key.kind.name()
                        )
                    });
                    (false, None, None, None)
                }
            },
        };
        if secured {
            s.secured += 1;
            if s.mac_len.is_none() {
                s.mac_len = seen.mac_len;
            }
            if verdict.is_none() {
                f.add("not-verified", Severity::Info, at, no, ts, || {
                    "secured frames, not verified: no --keys given".into()
                });
            }
        } else {
            unsecured_seen(&mut s.unsecured, s.secured, s.key.kind, at, f, no, ts);
        }
        if !trusted {
            return;
        }
        if let Some(e) = &seen.apdu_error {
            f.add("apdu-malformed", Severity::Medium, at, no, ts, || {
                format!("the APDU does not parse: {e}")
            });
            return;
        }
        // Inventory fields from what can be believed.
        if let Some(id) = seen.id {
            match &s.id {
                None => s.id = Some(id.to_string()),
                Some(old) if old != id => f.add("id-changed", Severity::Medium, at, no, ts, || {
                    format!(
                        "{old:?} -> {id:?}: another control block on the same address and APPID"
                    )
                }),
                Some(_) => {}
            }
        }
        if s.dat_set.is_none() {
            s.dat_set = seen.dat_set.map(str::to_string);
        }
        if s.go_id.is_none() {
            s.go_id = seen.go_id.map(str::to_string);
        }
        if let Some(c) = seen.conf_rev {
            match s.conf_rev {
                Some(old) if old != c => f.add("confrev-changed", Severity::Low, at, no, ts, || {
                    format!("confRev {old} -> {c}: the data set's configuration changed mid-capture")
                }),
                _ => {}
            }
            s.conf_rev = Some(c);
        }
        if seen.smp_rate.is_some() {
            s.smp_rate = seen.smp_rate;
        }
        let is_goose = matches!(s.key.kind, Kind::Goose | Kind::RGoose);
        let is_sv = matches!(s.key.kind, Kind::Sv | Kind::RSv);
        if seen.simulation {
            simulation_seen(&mut s.simulation, s.key.kind, at, f, no, ts);
        }
        if seen.nds_com {
            f.add("goose-ndscom", Severity::Medium, at, no, ts, || {
                "ndsCom TRUE: the publisher's control block needs commissioning (IEC 61850-7-2 §18.2.2)".into()
            });
        }
        if is_goose {
            tal_check(s, f, i, no, ts);
        }
        if seen.tal_ms.is_some() {
            s.tal_ms = seen.tal_ms;
        }
        let mut in_order = true;
        if let (true, Some((st, sq))) = (is_goose, st_sq) {
            in_order = goose_event(s, f, i, no, (ts, recorded), (st, sq, seen.t));
        }
        if is_sv {
            let at = Some((i, s.uid.as_str()));
            if let Some(sy) = seen.smp_synch {
                s.synch[usize::from(sy.min(2))] += 1;
                if sy == 0 {
                    f.add("sv-not-synchronised", Severity::Low, at, no, ts, || {
                        "smpSynch 0: the merging unit is not synchronised to a time source (IEC 61850-9-2 §8.2)".into()
                    });
                }
            }
            if let Some(c) = smp_cnt {
                in_order = sv_event(s, f, i, no, (ts, recorded), c);
            }
        }
        if in_order {
            s.arrived(no, ts);
            s.last_recorded = recorded;
        }
        s.refused_since_trusted = 0;
        // Key ids of frames in order only: a replayed old frame does not roll the key back.
        let s = &mut self.streams[i];
        let at = Some((i, s.uid.as_str()));
        if let (true, true, Some(k)) = (in_order, secured, key_id) {
            match s.current_key {
                Some(c) if c != k => {
                    if s.key_ids.contains(&k) {
                        self.findings.add("key-reverted", Severity::Medium, at, no, ts, || {
                            format!("key id {c} -> {k}: back to a key this stream had rolled over from")
                        });
                    } else {
                        self.findings
                            .add("key-rollover", Severity::Info, at, no, ts, || {
                                format!("key id {c} -> {k}")
                            });
                    }
                }
                _ => {}
            }
            s.current_key = Some(k);
            if !s.key_ids.contains(&k) && s.key_ids.len() < stream::MAX_KEY_IDS {
                s.key_ids.push(k);
            }
        }
    }

    /// The audit.
    pub fn finish(mut self) -> Audit {
        self.shared_appids();
        let mut associations = Vec::new();
        let base = self.streams.len();
        for (j, a) in self.mms.associations.iter().enumerate() {
            let r = assoc::report(a, j);
            assoc::judge(a, &r, base + j, &mut self.findings);
            associations.push(r);
        }
        let (registrations, rekeys) = self.gdoi.finish(&mut self.findings, self.last_ts);
        let streams: Vec<StreamReport> = self.streams.iter().map(Stream::report).collect();
        let plots = self
            .streams
            .iter()
            .map(|s| Plot {
                uid: s.uid.clone(),
                points: s.arrivals.points(),
                state_changes: s.state_change_ns.clone(),
            })
            .collect();
        let mut findings = self.findings.into_vec();
        if self.cut.frames > 0 {
            let detail = self.cut.detail();
            for f in &mut findings {
                if f.code == "capture-truncated" && f.stream.is_none() && f.detail.is_empty() {
                    f.detail = detail.clone();
                }
            }
        }
        findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(a.first_ts_ns.cmp(&b.first_ts_ns))
        });
        Audit {
            summary: Summary {
                frames: self.frames,
                first_ts_ns: self.first_ts.unwrap_or(0),
                last_ts_ns: self.last_ts,
                kinds: self.kinds,
                verified_with_keys: self.verifier.is_some(),
                profile: self.opts.profile.name(),
                kernel_drops: self.kernel.map(|k| k.drops),
            },
            streams,
            associations,
            registrations,
            rekeys,
            findings,
            plots,
        }
    }
}

/// An unsecured frame of the stream whose counters, kind and place (`at`) these are: a
/// downgrade in a stream secured before, else an unsecured publisher.
fn unsecured_seen(
    unsecured: &mut u64,
    secured: u64,
    kind: Kind,
    at: Option<(usize, &str)>,
    f: &mut Findings,
    no: u64,
    ts: u64,
) {
    *unsecured += 1;
    if secured > 0 {
        f.add("security-downgrade", Severity::High, at, no, ts, || {
            "an unsecured frame in a stream that was secured before (IEC 62351-6 protection stripped)".into()
        });
    } else {
        f.add("unsecured", Severity::Medium, at, no, ts, || {
            format!("{} without IEC 62351-6 security", kind.name())
        });
    }
}

/// A frame with the simulation/test bit set, of the stream whose `simulation` flag, kind and
/// place (`at`) these are.
fn simulation_seen(
    flag: &mut bool,
    kind: Kind,
    at: Option<(usize, &str)>,
    f: &mut Findings,
    no: u64,
    ts: u64,
) {
    *flag = true;
    let (code, what) = if matches!(kind, Kind::Sv | Kind::RSv) {
        ("sv-simulation", "SV")
    } else {
        ("goose-simulation", "GOOSE")
    };
    f.add(code, Severity::Medium, at, no, ts, || {
        format!("{what} with the simulation/test bit set (IEC 61850-8-1 Ed.2 §A.3, IEC 61850-7-2 LPHD.Sim): a subscriber in simulation mode acts on it")
    });
}

/// The timeAllowedtoLive of a GOOSE stream's last frame in order bounds the wait for the next
/// (IEC 61850-8-1 §18.1.2.5): a frame arriving at `ts` after it ran out shows that a subscriber
/// following the stream took the publisher as lost. Reported once per expiry, against the last
/// frame in order: after an injection moved the counters on (a public attack trace, JiweiTian/
/// bro-goose `AttackTrace3.pcapng`, stNum 2 injected over a publisher at stNum 1), the
/// publisher's own frames are out of order and the wait that runs out is the injected frame's.
fn tal_check(s: &mut Stream, f: &mut Findings, i: usize, no: u64, ts: u64) {
    let Some(e) = s.tal_expired(ts) else {
        return;
    };
    f.add("goose-tal-exceeded", Severity::Medium, Some((i, s.uid.as_str())), no, ts, || {
        format!("no frame in order for {:.1} ms after frame {}{}, whose timeAllowedtoLive was {} ms: a subscriber takes the publisher as lost (IEC 61850-8-1 §18.1.2.5)", e.gap_ns as f64 / 1e6, e.frame, e.counters, e.tal)
    });
}

impl Auditor<'_> {
    /// Control blocks of one source that share an APPID: IEC 61850-8-1 §C.2.3 and
    /// IEC 61850-9-2 §5.3.3 want the APPID unique (a subscriber filters on it); reported on the
    /// first frame of every further control block.
    fn shared_appids(&mut self) {
        let mut first: HashMap<(Kind, Endpoint, u16), usize> = HashMap::new();
        for (i, s) in self.streams.iter().enumerate() {
            let (Some(appid), Some(id)) = (s.key.appid, &s.id) else {
                continue;
            };
            match first.get(&(s.key.kind, s.key.src, appid)) {
                None => {
                    first.insert((s.key.kind, s.key.src, appid), i);
                }
                Some(&j) if self.streams[j].id.as_ref() == Some(id) => {
                    // The same control block again, to another destination or on another
                    // VLAN: no second block under the APPID, but a path worth naming (a
                    // capture on both sides of a tagging switch port sees the untagged and
                    // the tagged copy; a publisher configured twice sends both).
                    let o = &self.streams[j];
                    let path = |k: &StreamKey| match k.vid {
                        Some(v) => format!("to {} on VLAN {v}", k.dst),
                        None => format!("to {} untagged", k.dst),
                    };
                    let (was, now) = (path(&o.key), path(&s.key));
                    self.findings.add("block-on-several-paths", Severity::Info, Some((i, &s.uid)), s.first.0, s.first.1, || {
                        format!("{id:?} (APPID 0x{appid:04x}) seen {was} ({}) and {now}: a capture on both sides of a tagging switch port, or a publisher that sends the block twice", o.uid)
                    });
                }
                Some(&j) => {
                    let other = self.streams[j].id.clone().unwrap_or_default();
                    self.findings.add("appid-shared", Severity::Low, Some((i, &s.uid)), s.first.0, s.first.1, || {
                        format!("APPID 0x{appid:04x} of {other:?} also carries {id:?} from the same source: a subscriber filtering on the APPID cannot tell them apart")
                    });
                }
            }
        }
    }
}

/// Judges a GOOSE frame's stNum/sqNum; false for a duplicate or out-of-order frame.
fn goose_event(
    s: &mut Stream,
    f: &mut Findings,
    i: usize,
    no: u64,
    (ts, recorded): (u64, (u64, Recorded)),
    (st, sq, t): (u32, u32, Option<u64>),
) -> bool {
    let ev = s.goose.observe(st, sq, t);
    let copy = is_capture_copy(s, ts, recorded);
    // Frames refused since the last trusted one explain as many missing numbers.
    let refused = s.refused_since_trusted;
    if matches!(
        ev,
        GooseEvent::StateChange { .. } | GooseEvent::StGap { .. } | GooseEvent::Restart
    ) {
        s.state_changes += 1;
        if s.state_change_ns.len() < stream::MAX_STATE_CHANGES {
            s.state_change_ns.push(ts);
        }
    }
    let at = Some((i, s.uid.as_str()));
    let in_order = !matches!(ev, GooseEvent::Duplicate | GooseEvent::OutOfOrder);
    match ev {
        GooseEvent::First | GooseEvent::Retransmission => {}
        GooseEvent::StateChange { lost: 0 } => {}
        GooseEvent::StateChange { lost } => f.add("goose-sq-gap", Severity::Low, at, no, ts, || {
            format!("stNum {st} first seen at sqNum {sq}: {lost} transmissions of the new state lost")
        }),
        GooseEvent::Duplicate if copy => capture_copy(f, at, no, ts),
        GooseEvent::Duplicate => f.add("goose-duplicate", Severity::Low, at, no, ts, || {
            format!("stNum {st} sqNum {sq} twice in a row")
        }),
        GooseEvent::OutOfOrder => f.add("goose-out-of-order", Severity::Medium, at, no, ts, || {
            format!("stNum {st} sqNum {sq} after a later one: delayed or replayed")
        }),
        GooseEvent::SqGap { missing } if missing <= refused => {}
        GooseEvent::SqGap { missing } => f.add("goose-sq-gap", Severity::Low, at, no, ts, || {
            format!("stNum {st}: sqNum {sq} after {missing} missing retransmissions")
        }),
        GooseEvent::StGap { missing } => f.add("goose-st-gap", Severity::Medium, at, no, ts, || {
            format!("stNum {st}: {missing} state changes not seen")
        }),
        GooseEvent::Restart => f.add("goose-restart", Severity::Info, at, no, ts, || {
            format!("stNum {st} sqNum {sq} after a later pair, as a new state (stNum 1 sqNum 0, or a later t): the publisher restarted")
        }),
    }
    in_order
}

/// Judges an SV frame's smpCnt; false for a duplicate or out-of-order frame.
fn sv_event(
    s: &mut Stream,
    f: &mut Findings,
    i: usize,
    no: u64,
    (ts, recorded): (u64, (u64, Recorded)),
    c: u16,
) -> bool {
    let before = s.sv.last();
    let ev = s.sv.observe(c);
    let copy = is_capture_copy(s, ts, recorded);
    let refused = s.refused_since_trusted;
    let at = Some((i, s.uid.as_str()));
    let in_order = !matches!(ev, SvEvent::Duplicate | SvEvent::OutOfOrder);
    match ev {
        SvEvent::First | SvEvent::Next | SvEvent::Wrap => {}
        SvEvent::Duplicate if copy => capture_copy(f, at, no, ts),
        SvEvent::Duplicate => f.add("sv-duplicate", Severity::Low, at, no, ts, || {
            format!("smpCnt {c} twice in a row")
        }),
        SvEvent::OutOfOrder => f.add("sv-out-of-order", Severity::Medium, at, no, ts, || {
            let last = before.map(|b| b.to_string()).unwrap_or_default();
            format!("smpCnt {c} after {last}: a step back that is not a wrap (IEC 61850-9-2: smpCnt wraps to 0): delayed, replayed or injected")
        }),
        SvEvent::Resync => f.add("sv-resync", Severity::Low, at, no, ts, || {
            let last = before.map(|b| b.to_string()).unwrap_or_default();
            format!("smpCnt {c}: {} counts in a row continued from below {last}, none in order between them: taken as where the stream is now (a restart, or a wrap whose 0 was not captured); the counts before it were reported out of order", sv_seq::RESYNC)
        }),
        SvEvent::Gap { missing } if missing <= refused => {}
        SvEvent::Gap { missing } => f.add("sv-gap", Severity::Low, at, no, ts, || {
            format!("smpCnt {c} after {missing} missing samples")
        }),
    }
    in_order
}

/// A repeat within [`COPY_WINDOW_NS`] of the frame before (or stamped earlier): a Linux "any"
/// capture records a frame once per interface it crosses (bridge and veth), a few tens of
/// microseconds apart (up to 35 µs in the public docker-lab capture that showed it); the
/// fastest SV streams (256 samples per 60 Hz cycle) are 65 µs apart.
const COPY_WINDOW_NS: u64 = 50_000;

/// A repeat byte for byte the same as the frame it repeats but recorded elsewhere (another
/// Linux cooked packet type or pcapng interface) within this long is a copy too: the public
/// pg-ot/virtual-substation-beta `goose.pcapng` (Linux "any") has the third copy of one GOOSE
/// frame 72.1 µs after the first, packet types 2, 4, 4, 2. A publisher that sends a frame twice
/// sends both through the same interface, so they are recorded alike and stay
/// `goose-duplicate`/`sv-duplicate` however close.
const RECORDED_COPY_WINDOW_NS: u64 = 1_000_000;

/// Whether a repeat of the last in-order frame's numbers is a copy the capture made: within
/// [`COPY_WINDOW_NS`] (or stamped earlier), or the same octets recorded elsewhere within
/// [`RECORDED_COPY_WINDOW_NS`].
fn is_capture_copy(s: &Stream, ts: u64, (hash, rec): (u64, Recorded)) -> bool {
    let Some(l) = s.arrivals.last_ns() else {
        return false;
    };
    let (last_hash, last_rec) = s.last_recorded;
    is_capture_copy_at(ts.saturating_sub(l), hash == last_hash, rec == last_rec)
}

/// Whether a frame that repeats another's numbers `dt_ns` after it is a copy the capture made
/// rather than one sent twice: within [`COPY_WINDOW_NS`], or the same octets
/// ([`recorded_octets_hash`] equal) recorded elsewhere (another interface or Linux packet type)
/// within [`RECORDED_COPY_WINDOW_NS`]. `frame verify` asks it of a frame it would call a
/// replay, so that the audit and the verifier tell capture copies alike.
pub fn is_capture_copy_at(dt_ns: u64, same_octets: bool, same_recording: bool) -> bool {
    dt_ns < COPY_WINDOW_NS || (same_octets && !same_recording && dt_ns < RECORDED_COPY_WINDOW_NS)
}

/// The hash two recordings of one frame share: its octets after the destination address
/// (which a Linux cooked capture does not record, and which reads differently per packet
/// type).
pub fn recorded_octets_hash(data: &[u8]) -> u64 {
    fnv::hash64(data.get(6..).unwrap_or(&[]))
}

fn capture_copy(f: &mut Findings, at: Option<(usize, &str)>, no: u64, ts: u64) {
    f.add("capture-copy", Severity::Info, at, no, ts, || {
        "the same frame again within 50 µs, or recorded on another interface or with another Linux packet type within 1 ms: the capture recorded one frame several times (Linux \"any\", several interfaces), not judged twice".into()
    });
}

/// The finding code of a verification failure: `sec-` and the verdict word `frame verify`
/// and the gateway print.
fn sec_code(e: &SecError) -> &'static str {
    match e.code() {
        "malformed" => "sec-malformed",
        "unknown-key" => "sec-unknown-key",
        "key-not-yet-valid" => "sec-key-not-yet-valid",
        "key-expired" => "sec-key-expired",
        "algorithm-mismatch" => "sec-algorithm-mismatch",
        "unknown-algorithm" => "sec-unknown-algorithm",
        "missing-authenticator" => "sec-missing-authenticator",
        "bad-iv" => "sec-bad-iv",
        "bad-mac" => "sec-bad-mac",
        "bad-tag" => "sec-bad-tag",
        "replay" => "sec-replay",
        "key-not-allowed" => "sec-key-not-allowed",
        "bad-checksum" => "sec-bad-checksum",
        "unsupported" => "sec-unsupported",
        _ => "sec-failed",
    }
}

/// Whether an IPv4/IPv6 UDP datagram that failed its checksum is addressed as an IEC 61850-90-5
/// session (port 102 either way, or a `01 40` CLTP payload); anything else is not ours to judge
/// (LLMNR, NBNS and the like captured before the NIC filled the checksum in).
fn udp_to_session(frame: &[u8]) -> bool {
    use gander_wire::ethernet::{Frame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
    let Ok(eth) = Frame::new_checked(frame) else {
        return true;
    };
    let off = eth.payload_offset();
    let (sp, dp, payload): (u16, u16, &[u8]) = match eth.ethertype() {
        ETHERTYPE_IPV4 => {
            let Ok(p) = gander_wire::ip::Ipv4Packet::new_checked(&frame[off..]) else {
                return true;
            };
            if p.protocol() != gander_wire::ip::PROTOCOL_UDP {
                return false;
            }
            let ihl = p.header_len();
            let Some(udp) = frame.get(off + ihl..) else {
                return true;
            };
            let Ok(u) = gander_wire::ip::UdpPacket::new_checked(udp) else {
                return true;
            };
            (u.src_port(), u.dst_port(), udp.get(8..).unwrap_or(&[]))
        }
        ETHERTYPE_IPV6 => match gander_wire::ipv6::locate(frame, off) {
            Ok(gander_wire::ipv6::Ipv6Payload::Udp(l)) => {
                (l.src_port, l.dst_port, frame.get(l.payload).unwrap_or(&[]))
            }
            Ok(_) => return false,
            Err(_) => return true,
        },
        _ => return true,
    };
    sp == view::SESSION_PORT
        || dp == view::SESSION_PORT
        || (payload.len() >= 2
            && payload[0] == gander_wire::spdu::CLTP_LI
            && payload[1] == gander_wire::spdu::CLTP_UD)
}

/// Totals of an audit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Frames read.
    pub frames: u64,
    /// First capture time, ns since the epoch.
    pub first_ts_ns: u64,
    /// Last capture time.
    pub last_ts_ns: u64,
    /// Frames per kind (`other` for traffic that is not IEC 61850, `malformed`, `ip-fragment`).
    pub kinds: BTreeMap<&'static str, u64>,
    /// Whether secured frames were verified (`--keys`).
    pub verified_with_keys: bool,
    /// Framing profile.
    pub profile: &'static str,
    /// Live audit: frames the kernel dropped before the audit read them (`None`: a file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_drops: Option<u64>,
}

/// The points of one stream's plot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plot {
    /// Stream uid.
    pub uid: String,
    /// (capture time, gap before it), ns, time order, at most [`arrival::KEEP`].
    pub points: Vec<(u64, u64)>,
    /// Capture times of GOOSE state changes.
    pub state_changes: Vec<u64>,
}

/// The result of an audit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Audit {
    /// Totals.
    pub summary: Summary,
    /// Inventory: one row per publisher stream, in order of first frame.
    pub streams: Vec<StreamReport>,
    /// MMS associations (plain and TLS), in order of first frame.
    pub associations: Vec<assoc::AssociationReport>,
    /// GDOI registrations (GROUPKEY-PULL), in order of first message.
    pub registrations: Vec<gdoi::Registration>,
    /// GDOI rekey SAs (GROUPKEY-PUSH), in order of first push.
    pub rekeys: Vec<gdoi::Rekeys>,
    /// Findings, worst first, then by first occurrence.
    pub findings: Vec<Finding>,
    /// Per-stream plot points.
    #[serde(skip)]
    pub plots: Vec<Plot>,
}

impl Audit {
    /// The worst severity found.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// The exit code of `gander audit` ([`Severity::exit_code`]).
    pub fn exit_code(&self) -> u8 {
        Severity::exit_code(self.worst())
    }
}
