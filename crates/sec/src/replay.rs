//! Replay protection.
//!
//! What identifies a stream is taken only from bytes the IEC 62351-6 MAC (or GCM tag) covers,
//! plus the key that verified them: never from Ethernet addresses, VLAN tags, IP addresses or
//! UDP ports, which an attacker can rewrite on a captured frame without touching its MAC. A
//! stream is (see `docs/gateway.md`, "Replay"):
//!
//! * R-GOOSE/R-SV: (key id, SPDU identifier, APPID of the payload) with the SPDU number;
//! * layer-2 GOOSE: (key id, APPID, gocbRef) with stNum/sqNum: IEC 61850-8-1 numbers states per
//!   GOOSE control block, so two control blocks behind one APPID keep separate sequences.
//! * layer-2 SV: (key id, APPID, svID of the first ASDU) with smpCnt and the receiver's clock
//!   (see [`SvCounter`]).
//!
//! [`ReplayState`] holds both kinds; `gander frame verify` and every gateway driver use it, so
//! both give the same verdict on the same frames.
//!
//! * Sessions (R-GOOSE, R-SV): a sliding window over the 32-bit SPDU number per stream, the
//!   anti-replay window of RFC 4303 §3.4.3 (IEC 61850-90-5 makes the SPDU number a
//!   per-session counter but leaves the receiver's rule to the implementation; libiec61850 has
//!   none, pitfall P9). Frames may arrive reordered within the window; a number seen before, or
//!   older than the window, is refused. The window only moves after the frame has verified, so a
//!   forged frame cannot advance it. An R-GOOSE publisher's restart (numbers from the start
//!   again, the first APDU's `t` later than any accepted) restarts the window (`SpduStream`).
//! * Layer-2 GOOSE: IEC 61850-8-1's state and sequence numbers. A new state has a larger stNum
//!   (sqNum restarts at 0); a retransmission keeps stNum and increments sqNum. Both wrap (stNum to
//!   1, sqNum to 1), which serial-number arithmetic (RFC 1982) handles. A publisher that
//!   restarts begins again at stNum 1 with the time of its new state in `t` (IEC 61850-8-1: `t`
//!   is the time stNum last changed; it is inside the authenticated APDU): counters that go back
//!   with a `t` strictly later than every accepted frame's are that restart, accepted, and
//!   the later `t` becomes a floor no counter-newer frame may fall below (a frame from before
//!   the restart, replayed, carries an earlier `t`). See [`GooseSequence`].
//!
//! * Layer-2 SV (IEC 61850-9-2): smpCnt counts samples and wraps at the number of samples per
//!   second (IEC 61850-9-2LE: 4000 at 50 Hz, 4800 at 60 Hz, reset by the 1 PPS), so within
//!   seconds every value comes round again and the counter alone cannot tell a fresh frame from
//!   one captured a second earlier. [`SvCounter`] therefore also checks the receiver's clock: the
//!   counter may advance by at most the samples the elapsed time allows (plus [`SV_SLACK_NS`] of
//!   jitter), never by more than half a turn, and never stand still or go back.
//!
//! Sequence numbers do not wrap silently in the window: after 2^32 SPDUs a sender must change
//! key, which starts a new window (windows are kept per key id too). An SPDU number that
//! "wrapped" under the same key is older than the window and refused, whatever address it
//! comes from.

use crate::error::{ReplayKind, SecError};
use std::collections::HashMap;

/// Width of the session window in sequence numbers.
pub const WINDOW: u32 = 128;

/// The sliding window of one sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlidingWindow {
    highest: Option<u32>,
    /// Bit i set = `highest - i` was accepted.
    seen: u128,
}

impl SlidingWindow {
    /// Whether `seq` would be accepted (does not change the window).
    pub fn check(&self, seq: u32) -> Result<(), ReplayKind> {
        let Some(h) = self.highest else { return Ok(()) };
        if seq > h {
            return Ok(());
        }
        let age = h - seq;
        if age >= WINDOW {
            return Err(ReplayKind::TooOld);
        }
        if self.seen & (1u128 << age) != 0 {
            return Err(ReplayKind::Duplicate);
        }
        Ok(())
    }

    /// Records `seq` as accepted. Call only after `check` passed and the frame verified.
    pub fn accept(&mut self, seq: u32) {
        match self.highest {
            None => {
                self.highest = Some(seq);
                self.seen = 1;
            }
            Some(h) if seq > h => {
                let shift = seq - h;
                self.seen = if shift >= WINDOW {
                    0
                } else {
                    self.seen << shift
                };
                self.seen |= 1;
                self.highest = Some(seq);
            }
            Some(h) => {
                let age = h - seq;
                if age < WINDOW {
                    self.seen |= 1u128 << age;
                }
            }
        }
    }
}

/// What a verified frame claims about its place in its stream: the input of the replay check.
/// Built from authenticated fields only (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness<'a> {
    /// An R-GOOSE/R-SV SPDU.
    Spdu {
        /// Key id that verified it.
        key_id: u32,
        /// SI byte (0xA1 GOOSE, 0xA2 SV, ...).
        spdu_id: u8,
        /// APPID of the (first) payload element.
        appid: u16,
        /// SPDU number.
        number: u32,
        /// R-GOOSE: the first APDU's `t` ([`goose_time`]); R-SV: none.
        t: Option<u64>,
    },
    /// A layer-2 SV frame (IEC 61850-9-2).
    Sv {
        /// Key id that verified it.
        key_id: u32,
        /// APPID.
        appid: u16,
        /// svID of the first ASDU.
        sv_id: &'a str,
        /// smpCnt of the first ASDU.
        smp_cnt: u16,
        /// Samples per second as the frame states them (smpRate with smpMod = 1), if it does.
        rate: Option<u16>,
        /// The receiver's monotonic clock at arrival, in nanoseconds (capture time for a pcap).
        at_ns: u64,
    },
    /// A layer-2 GOOSE frame.
    Goose {
        /// Key id that verified it.
        key_id: u32,
        /// APPID.
        appid: u16,
        /// The GOOSE control block reference from the APDU, as its octets (a VisibleString,
        /// compared octet for octet: the verifier does not turn it into text).
        gocb_ref: &'a [u8],
        /// stNum.
        st: u32,
        /// sqNum.
        sq: u32,
        /// `t` (UtcTime) without its quality octet: seconds and fraction, as one number that
        /// orders like the time ([`goose_time`]).
        t: u64,
    },
}

/// A GOOSE `t` (UtcTime, IEC 61850-8-1 8.1.3.7: seconds since 1970 in 4 octets, the fraction
/// of a second in 3, quality in 1) as a number in time order: the quality octet (leap second
/// known, clock failure, accuracy) is not part of the time.
pub fn goose_time(t: &[u8; 8]) -> u64 {
    u64::from_be_bytes(*t) >> 8
}

/// The time-of-state side of a stream's replay rule, shared by layer-2 GOOSE
/// ([`GooseSequence`]), R-GOOSE (the SPDU window) and the passive audit's GOOSE tracker: the
/// latest `t` accepted and the `t` of the last publisher restart.
///
/// A restarted publisher's counters go back while its `t` (authenticated, the time of its new
/// state) is strictly later than every `t` accepted: that is the restart's witness, and its `t`
/// becomes a floor below which no frame is fresh (a frame from before the restart, replayed).
/// The latest `t` is the maximum, not the last frame's: a frame whose counters advance may
/// carry an earlier `t` when the publisher's clock stepped back, and a replay of a frame from
/// before that step must not then pass for a restart. Streams without a `t` (R-SV) pass `None`
/// and the fence never fires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RestartFence {
    latest: Option<u64>,
    floor: Option<u64>,
}

impl RestartFence {
    /// Whether `t` lies before the last restart's `t`.
    pub fn before_floor(&self, t: Option<u64>) -> bool {
        matches!((t, self.floor), (Some(t), Some(f)) if t < f)
    }

    /// Whether `t` is strictly later than every `t` recorded: a restart's witness.
    pub fn is_restart(&self, t: Option<u64>) -> bool {
        matches!((t, self.latest), (Some(t), Some(l)) if t > l)
    }

    /// Records an accepted frame's `t`; `restart`: it was accepted as a restart, and its `t`
    /// is the new floor.
    pub fn record(&mut self, t: Option<u64>, restart: bool) {
        if let Some(t) = t {
            self.latest = Some(self.latest.map_or(t, |l| l.max(t)));
            if restart {
                self.floor = Some(t);
            }
        }
    }
}

/// One R-GOOSE/R-SV stream: the SPDU-number window and, for R-GOOSE, its [`RestartFence`].
///
/// A restarted publisher numbers its SPDUs from the start again under the same key, which the
/// window alone refuses as `TooOld` (or `Duplicate`) until the numbers pass the old ones. As on
/// layer 2 ([`GooseSequence`]), a number the window refuses is a restart when the first GOOSE
/// APDU's authenticated `t` is strictly later than every `t` accepted on the stream: the window
/// starts again at it and that `t` becomes a floor below which no frame is fresh. R-SV carries
/// no time of state (smpCnt only), so an R-SV stream keeps the window alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SpduStream {
    window: SlidingWindow,
    fence: RestartFence,
}

impl SpduStream {
    fn check(&self, number: u32, t: Option<u64>) -> Result<(), ReplayKind> {
        if self.fence.before_floor(t) {
            return Err(ReplayKind::NotNewer);
        }
        match self.window.check(number) {
            Ok(()) => Ok(()),
            Err(_) if self.fence.is_restart(t) => Ok(()),
            Err(kind) => Err(kind),
        }
    }

    fn accept(&mut self, number: u32, t: Option<u64>) {
        let restart = self.window.check(number).is_err() && self.fence.is_restart(t);
        if restart {
            self.window = SlidingWindow::default();
        }
        self.window.accept(number);
        self.fence.record(t, restart);
    }
}

/// The SV streams behind one (key id, APPID), one counter per svID.
type SvStreams = Vec<(Box<str>, SvCounter)>;

/// The GOOSE control blocks behind one (key id, APPID), each with its sequence.
type ControlBlocks = Vec<(Box<[u8]>, GooseSequence)>;

/// Replay state of one receiver (one direction of a gateway, one capture): SPDU-number windows
/// and GOOSE sequences per stream.
#[derive(Debug)]
pub struct ReplayState {
    spdus: HashMap<(u32, u8, u16), SpduStream>,
    /// (key id, APPID) -> one entry per control block; almost always exactly one, so a linear
    /// search on gocbRef needs no allocation per frame.
    goose: HashMap<(u32, u16), ControlBlocks>,
    /// (key id, APPID) -> one counter per svID.
    sv: HashMap<(u32, u16), SvStreams>,
    /// smpCnt wrap of SV streams that do not state their rate in samples per second.
    sv_wrap: u16,
}

impl Default for ReplayState {
    fn default() -> Self {
        ReplayState {
            spdus: HashMap::new(),
            goose: HashMap::new(),
            sv: HashMap::new(),
            sv_wrap: DEFAULT_SV_WRAP,
        }
    }
}

impl ReplayState {
    /// Empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the smpCnt wrap (samples per second) of SV streams that do not state it; a value
    /// of 0 is taken as [`DEFAULT_SV_WRAP`].
    pub fn set_sv_wrap(&mut self, wrap: u16) {
        self.sv_wrap = if wrap == 0 { DEFAULT_SV_WRAP } else { wrap };
    }

    /// The smpCnt wrap used for SV streams that do not state their rate.
    pub fn sv_wrap(&self) -> u16 {
        self.sv_wrap
    }

    /// Whether the frame is fresh (does not change the state).
    pub fn check(&self, f: &Freshness<'_>) -> Result<(), SecError> {
        match *f {
            Freshness::Sv {
                key_id,
                appid,
                sv_id,
                smp_cnt,
                rate,
                at_ns,
            } => {
                let wrap = rate.filter(|r| *r > 0).unwrap_or(self.sv_wrap);
                match self
                    .sv
                    .get(&(key_id, appid))
                    .and_then(|v| v.iter().find(|(s, _)| &**s == sv_id))
                {
                    Some((_, c)) => c.check(smp_cnt, wrap, at_ns),
                    None => SvCounter::default().check(smp_cnt, wrap, at_ns),
                }
            }
            Freshness::Spdu {
                key_id,
                spdu_id,
                appid,
                number,
                t,
            } => match self.spdus.get(&(key_id, spdu_id, appid)) {
                None => Ok(()),
                Some(w) => w.check(number, t).map_err(|kind| SecError::Replay {
                    kind,
                    seq: number as u64,
                }),
            },
            Freshness::Goose {
                key_id,
                appid,
                gocb_ref,
                st,
                sq,
                t,
            } => self
                .goose
                .get(&(key_id, appid))
                .and_then(|v| v.iter().find(|(g, _)| &**g == gocb_ref))
                .map_or(Ok(()), |(_, seq)| seq.check(st, sq, t)),
        }
    }

    /// Records the frame as accepted. Call only after [`ReplayState::check`] passed and every
    /// other check on the frame did.
    pub fn accept(&mut self, f: &Freshness<'_>) {
        match *f {
            Freshness::Sv {
                key_id,
                appid,
                sv_id,
                smp_cnt,
                rate,
                at_ns,
            } => {
                let v = self.sv.entry((key_id, appid)).or_default();
                let wrap = rate.filter(|r| *r > 0).unwrap_or(self.sv_wrap);
                match v.iter_mut().find(|(s, _)| &**s == sv_id) {
                    Some((_, c)) => c.accept(smp_cnt, wrap, at_ns),
                    None => {
                        let mut c = SvCounter::default();
                        c.accept(smp_cnt, wrap, at_ns);
                        v.push((sv_id.into(), c));
                    }
                }
            }
            Freshness::Spdu {
                key_id,
                spdu_id,
                appid,
                number,
                t,
            } => self
                .spdus
                .entry((key_id, spdu_id, appid))
                .or_default()
                .accept(number, t),
            Freshness::Goose {
                key_id,
                appid,
                gocb_ref,
                st,
                sq,
                t,
            } => {
                let v = self.goose.entry((key_id, appid)).or_default();
                match v.iter_mut().find(|(g, _)| &**g == gocb_ref) {
                    Some((_, seq)) => seq.accept(st, sq, t),
                    None => {
                        let mut seq = GooseSequence::default();
                        seq.accept(st, sq, t);
                        v.push((gocb_ref.into(), seq));
                    }
                }
            }
        }
    }

    /// Checks and records in one step.
    pub fn check_and_accept(&mut self, f: &Freshness<'_>) -> Result<(), SecError> {
        self.check(f)?;
        self.accept(f);
        Ok(())
    }

    /// Number of streams tracked.
    pub fn streams(&self) -> usize {
        self.spdus.len()
            + self.goose.values().map(Vec::len).sum::<usize>()
            + self.sv.values().map(Vec::len).sum::<usize>()
    }
}

/// smpCnt wrap assumed for SV streams that do not state their rate in samples per second:
/// 4800, IEC 61850-9-2LE's 80 samples per cycle at 60 Hz (a 50 Hz site sets 4000).
pub const DEFAULT_SV_WRAP: u16 = 4800;

/// Network jitter the SV clock check tolerates: a frame may carry up to this much more time's
/// worth of samples than has passed since the last accepted one (a delayed frame followed by
/// one on time).
pub const SV_SLACK_NS: u64 = 10_000_000;

/// A silence after which an SV stream resynchronises: half a turn of a counter that wraps
/// once a second, so the counter can no longer be compared with the clock.
pub const SV_RESYNC_NS: u64 = 500_000_000;

/// The lateness an SV stream's phase remembers, in tenths of a turn (100 ms at one turn a
/// second): a stream whose frames arrive later than this behind its phase takes the later
/// phase, so a late stretch cannot be spent later as a burst ahead of the clock.
const SV_MAX_LAG_DIV: u64 = 10;

/// How fast an SV stream's phase may follow early frames: 1/500 of the elapsed time
/// (2000 ppm, far above the drift of any two clocks).
const SV_DRIFT_DIV: u64 = 500;

/// The replay state of one SV stream: its last accepted smpCnt and when it arrived, and the
/// stream's phase against the receiver's clock.
///
/// smpCnt wraps at `wrap` samples per second. With `d = (s - s_last) mod wrap`, a frame is
/// fresh when `1 <= d <= wrap / 2` (`d = 0`: duplicate; above half a turn: behind) and the
/// samples counted since the phase's anchor, `d` included, are at most the time since the
/// anchor plus [`SV_SLACK_NS`] times the rate: a frame from an earlier turn of the counter sent
/// ahead of the publisher is refused ([`ReplayKind::AheadOfClock`]). The phase follows early
/// frames at most 2000 ppm of the elapsed time (clock drift) and forgets lateness beyond a
/// tenth of a turn, so slack cannot be summed over frames. After [`SV_RESYNC_NS`] without an
/// accepted frame the next fresh-looking frame resynchronises the stream: a key holder's replay
/// of a frame captured earlier can pass then, once, which the SV header cannot prevent (it
/// carries no authenticated time unless refrTm is sent; `docs/gateway.md`, "Replay").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SvCounter {
    /// (smpCnt, arrival ns) of the last accepted frame.
    last: Option<(u16, u64)>,
    /// Samples accepted since the anchor (less whole turns).
    total: u64,
    /// When the phase says sample `total = 0` arrived.
    anchor_ns: u64,
}

impl SvCounter {
    fn distance(smp: u16, last: u16, wrap: u64) -> u64 {
        (u64::from(smp) + wrap - u64::from(last) % wrap) % wrap
    }

    /// Whether smpCnt `smp` arriving at `at_ns` is fresh for a counter wrapping at `wrap`.
    pub fn check(&self, smp: u16, wrap: u16, at_ns: u64) -> Result<(), SecError> {
        let wrap = u64::from(wrap.max(1));
        if u64::from(smp) >= wrap {
            return Err(SecError::Malformed(gander_wire::Error::BadValue {
                what: "smpCnt",
                detail: "not below the stream's wrap (smpRate, or the configured sv_wrap)",
            }));
        }
        let Some((s0, t0)) = self.last else {
            return Ok(());
        };
        let d = Self::distance(smp, s0, wrap);
        let replay = |kind| {
            Err(SecError::Replay {
                kind,
                seq: u64::from(smp),
            })
        };
        if d == 0 {
            return replay(ReplayKind::Duplicate);
        }
        if d > wrap / 2 {
            return replay(ReplayKind::NotNewer);
        }
        if at_ns.saturating_sub(t0) >= SV_RESYNC_NS {
            return Ok(());
        }
        let since = u128::from(at_ns.saturating_sub(self.anchor_ns)) + u128::from(SV_SLACK_NS);
        let allowed = since * u128::from(wrap) / 1_000_000_000;
        if u128::from(self.total + d) > allowed {
            if smp == 0 && u64::from(s0) + 1 < wrap {
                return replay(ReplayKind::WrappedEarly { last: s0 });
            }
            return replay(ReplayKind::AheadOfClock);
        }
        Ok(())
    }

    /// Records smpCnt `smp` as accepted at `at_ns` (after [`SvCounter::check`] passed).
    pub fn accept(&mut self, smp: u16, wrap: u16, at_ns: u64) {
        let wrap = u64::from(wrap.max(1));
        let Some((s0, t0)) = self.last else {
            *self = SvCounter {
                last: Some((smp, at_ns)),
                total: 0,
                anchor_ns: at_ns,
            };
            return;
        };
        let gap = at_ns.saturating_sub(t0);
        if gap >= SV_RESYNC_NS {
            *self = SvCounter {
                last: Some((smp, at_ns)),
                total: 0,
                anchor_ns: at_ns,
            };
            return;
        }
        self.total += Self::distance(smp, s0, wrap);
        // Where the phase expects this frame, in ns after the anchor.
        let due_ns = u128::from(self.total) * 1_000_000_000 / u128::from(wrap);
        let since = u128::from(at_ns.saturating_sub(self.anchor_ns));
        if due_ns > since {
            let early = (due_ns - since) as u64;
            self.anchor_ns = self.anchor_ns.saturating_sub(early.min(gap / SV_DRIFT_DIV));
        } else {
            let max_lag = 1_000_000_000 / SV_MAX_LAG_DIV;
            let late = (since - due_ns) as u64;
            if late > max_lag {
                self.anchor_ns += late - max_lag;
            }
        }
        while self.total >= wrap {
            self.total -= wrap;
            self.anchor_ns += 1_000_000_000;
        }
        self.last = Some((smp, at_ns));
    }
}

/// RFC 1982 serial-number comparison: is `a` after `b`?
fn serial_gt(a: u32, b: u32) -> bool {
    a != b && a.wrapping_sub(b) < 0x8000_0000
}

/// The last accepted (stNum, sqNum) of a GOOSE control block, the latest `t` accepted, and the
/// `t` of the last publisher restart accepted.
///
/// A frame is fresh when its counters are later (a later stNum, or the same stNum and a later
/// sqNum) and its `t` is not before the last restart's; or, when its counters are not later,
/// when its `t` is strictly later than every accepted frame's: the publisher restarted (IEC
/// 61850-8-1 starts stNum at 1 again after a restart) and its new state is newer than anything
/// accepted. Without the second rule a relay that reboots behind a verifying gateway or
/// subscriber was dropped as `replay` until its counters passed the old ones: for a relay that
/// had run for months, for months (a GE F650 in a public capture restarts at stNum 1, sqNum 1
/// with `t` 78 s later than before; docs/gateway.md, "Replay").
///
/// What it cannot accept: a publisher whose clock went back across the restart (no clock kept
/// through a power cycle and no time synchronisation yet) sends a `t` earlier than before; it
/// is dropped as before, until its counters pass the old ones or the key changes (a new key id
/// starts a new sequence). What it does not open: every replayed frame carries a `t` no later
/// than a frame already accepted (the publisher's time of a state it has already sent), so it
/// is still `replay`; and after a restart, a frame from before it, whose counters are later
/// than the restarted publisher's, carries a `t` before the restart's and is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GooseSequence {
    /// The last accepted (stNum, sqNum).
    last: Option<(u32, u32)>,
    /// The latest `t` and the last restart's.
    fence: RestartFence,
}

impl GooseSequence {
    /// Whether (st, sq) comes after the last accepted pair: a later stNum, or the same stNum
    /// and a later sqNum. None before the first frame.
    fn counters_later(&self, st: u32, sq: u32) -> Option<bool> {
        let (ls, lq) = self.last?;
        Some(serial_gt(st, ls) || (st == ls && serial_gt(sq, lq)))
    }

    /// Whether a frame with (st, sq) and `t` (see [`goose_time`]) is fresh.
    pub fn check(&self, st: u32, sq: u32, t: u64) -> Result<(), SecError> {
        let fresh = match self.counters_later(st, sq) {
            None => return Ok(()),
            Some(true) => !self.fence.before_floor(Some(t)),
            Some(false) => self.fence.is_restart(Some(t)),
        };
        if fresh {
            return Ok(());
        }
        Err(SecError::Replay {
            kind: if self.last == Some((st, sq)) {
                ReplayKind::Duplicate
            } else {
                ReplayKind::NotNewer
            },
            seq: ((st as u64) << 32) | sq as u64,
        })
    }

    /// Records the frame as accepted (after [`GooseSequence::check`] passed): a frame whose
    /// counters are not later is a restart, and its `t` the new floor.
    pub fn accept(&mut self, st: u32, sq: u32, t: u64) {
        let restart = self.counters_later(st, sq) == Some(false);
        self.fence.record(Some(t), restart);
        self.last = Some((st, sq));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn window_rules() {
        let mut w = SlidingWindow::default();
        for s in [10u32, 12, 11, 200] {
            assert_eq!(w.check(s), Ok(()));
            w.accept(s);
        }
        assert_eq!(w.check(12), Err(ReplayKind::TooOld));
        assert_eq!(w.check(200), Err(ReplayKind::Duplicate));
        assert_eq!(w.check(199), Ok(()));
        assert_eq!(w.check(200 - WINDOW), Err(ReplayKind::TooOld));
        assert_eq!(w.check(201 - WINDOW), Ok(()));
    }

    #[test]
    fn goose_rules() {
        const T: u64 = 1_000;
        let mut g = GooseSequence::default();
        g.accept(5, 3, T);
        assert!(g.check(5, 4, T).is_ok());
        assert!(g.check(6, 0, T + 1).is_ok());
        assert!(matches!(
            g.check(5, 3, T),
            Err(SecError::Replay {
                kind: ReplayKind::Duplicate,
                ..
            })
        ));
        assert!(matches!(
            g.check(5, 2, T),
            Err(SecError::Replay {
                kind: ReplayKind::NotNewer,
                ..
            })
        ));
        assert!(g.check(4, 100, T).is_err());
        // Later counters with an earlier t are still fresh until a restart sets a floor
        // (a publisher whose clock stepped back keeps being accepted).
        assert!(g.check(6, 0, T - 500).is_ok());
        g.accept(u32::MAX, 0, T);
        assert!(g.check(1, 0, T).is_ok(), "stNum wraps to 1");
    }

    /// The GE F650 of a public capture (ITI/ICS-Security-Tools pcaps/IEC61850/GOOSE/GOOSE.pcap,
    /// gocbRef GEDeviceF650/LLN0$GO$gcb01): stNum 1, sqNum 10, 11, 12 with t = 02:46:11, then
    /// the relay restarts and sends stNum 1, sqNum 1, 2, ... with t = 02:47:29. Every frame is
    /// fresh; a replay of the frames before the restart is not.
    #[test]
    fn a_publisher_restart_is_accepted_and_fences_off_what_came_before() {
        let (before, after) = (10_000u64 << 24, 10_078u64 << 24);
        let mut g = GooseSequence::default();
        for sq in 10..=12 {
            g.check(1, sq, before).unwrap();
            g.accept(1, sq, before);
        }
        for sq in 1..=5 {
            g.check(1, sq, after).unwrap();
            g.accept(1, sq, after);
        }
        // The frames before the restart, replayed: same stNum, lower sqNum than last accepted
        // at the earlier t, and (after a state change to 2) a later stNum with the old t.
        assert!(g.check(1, 12, before).is_err());
        assert!(g.check(1, 6, after).is_ok());
        g.accept(2, 0, after + 5);
        assert!(g.check(1, 12, before).is_err());
        let pre_restart_with_later_counters = g.check(7, 0, before);
        assert!(
            matches!(
                pre_restart_with_later_counters,
                Err(SecError::Replay {
                    kind: ReplayKind::NotNewer,
                    ..
                })
            ),
            "{pre_restart_with_later_counters:?}"
        );
        // A duplicate of the last frame stays a duplicate; a second restart later is accepted.
        assert!(matches!(
            g.check(2, 0, after + 5),
            Err(SecError::Replay {
                kind: ReplayKind::Duplicate,
                ..
            })
        ));
        assert!(g.check(1, 0, after + 100).is_ok());
        // A restart whose clock went back (no time kept through a power cycle) is refused.
        assert!(g.check(1, 0, before).is_err());
    }

    /// R-GOOSE: a publisher that restarts under the same key numbers its SPDUs from 1 again;
    /// its first APDU's later `t` makes that a restart, and SPDUs from before it stay replays.
    /// R-SV (no `t`) keeps the window alone.
    #[test]
    fn an_r_goose_publisher_restart_is_accepted_r_sv_keeps_the_window() {
        let spdu = |number, t| Freshness::Spdu {
            key_id: 1,
            spdu_id: 0xa1,
            appid: 0x10,
            number,
            t,
        };
        let (before, after) = (Some(1_000u64 << 24), Some(1_078u64 << 24));
        let mut st = ReplayState::new();
        for n in 5000..5010 {
            st.check_and_accept(&spdu(n, before)).unwrap();
        }
        // Restart: numbers from 1 again, t later.
        for n in 1..=5 {
            st.check_and_accept(&spdu(n, after)).unwrap();
        }
        // Before the restart, replayed: an old number at the old t, and a number the new
        // window has not seen (higher than the restarted publisher's) at the old t.
        assert!(st.check(&spdu(5009, before)).is_err());
        assert!(st.check(&spdu(6000, before)).is_err());
        // After it: a duplicate is a duplicate; the next number is fresh.
        assert!(matches!(
            st.check(&spdu(5, after)),
            Err(SecError::Replay {
                kind: ReplayKind::Duplicate,
                ..
            })
        ));
        st.check_and_accept(&spdu(6, after)).unwrap();
        // R-SV: no t, no restart.
        let sv = |number| Freshness::Spdu {
            key_id: 1,
            spdu_id: 0xa2,
            appid: 0x4000,
            number,
            t: None,
        };
        st.check_and_accept(&sv(900)).unwrap();
        assert!(st.check(&sv(1)).is_err());
    }

    #[test]
    fn goose_time_orders_like_the_utc_time() {
        // Seconds first, then the fraction; the quality octet does not count.
        let t = |s: u32, f: u32, q: u8| {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&s.to_be_bytes());
            b[4..7].copy_from_slice(&f.to_be_bytes()[1..]);
            b[7] = q;
            goose_time(&b)
        };
        assert!(t(10, 0, 0) < t(10, 1, 0));
        assert!(t(10, 0xff_ffff, 0) < t(11, 0, 0));
        assert_eq!(t(10, 5, 0x0a), t(10, 5, 0x80));
    }

    #[test]
    fn state_keys_on_authenticated_fields_only() {
        let mut st = ReplayState::new();
        let f = Freshness::Spdu {
            key_id: 1,
            spdu_id: 0xa1,
            appid: 0x10,
            number: 7,
            t: Some(5),
        };
        st.check_and_accept(&f).unwrap();
        assert!(st.check(&f).is_err(), "same stream, same number");
        // Another key or APPID is another stream.
        let other = |key_id, appid| Freshness::Spdu {
            key_id,
            spdu_id: 0xa1,
            appid,
            number: 7,
            t: Some(5),
        };
        assert!(st.check(&other(2, 0x10)).is_ok());
        assert!(st.check(&other(1, 0x11)).is_ok());
        let g = |gocb_ref: &'static str, st_num, sq| Freshness::Goose {
            key_id: 1,
            appid: 0x10,
            gocb_ref: gocb_ref.as_bytes(),
            st: st_num,
            sq,
            t: 0,
        };
        st.check_and_accept(&g("IED1/LLN0$GO$a", 5, 0)).unwrap();
        st.check_and_accept(&g("IED1/LLN0$GO$b", 1, 0)).unwrap();
        assert!(st.check(&g("IED1/LLN0$GO$a", 5, 0)).is_err());
        assert!(st.check(&g("IED1/LLN0$GO$b", 1, 0)).is_err());
        assert!(st.check(&g("IED1/LLN0$GO$b", 1, 1)).is_ok());
        assert_eq!(st.streams(), 3);
    }

    #[test]
    fn sv_counter_rules() {
        let ms = 1_000_000u64;
        let mut c = SvCounter::default();
        c.accept(4790, 4800, 1000 * ms);
        // In order, and across the wrap at 4800 a few samples later.
        assert!(c.check(4791, 4800, 1000 * ms + 208_333).is_ok());
        assert!(c.check(2, 4800, 1002 * ms).is_ok(), "wraps at 4800");
        // Duplicate, behind, and too far ahead for the time that passed.
        assert!(matches!(
            c.check(4790, 4800, 1001 * ms),
            Err(SecError::Replay {
                kind: ReplayKind::Duplicate,
                ..
            })
        ));
        assert!(matches!(
            c.check(4700, 4800, 1001 * ms),
            Err(SecError::Replay {
                kind: ReplayKind::NotNewer,
                ..
            })
        ));
        // 10 ms of slack at 4800/s is 48 samples; 1 ms later at most 52 samples ahead.
        assert!(c.check(42, 4800, 1001 * ms).is_ok());
        assert!(matches!(
            c.check(43, 4800, 1001 * ms),
            Err(SecError::Replay {
                kind: ReplayKind::AheadOfClock,
                ..
            })
        ));
        // A 50 Hz stream (wrapping at 4000) read with the wrap at 4800: its 0 after 3999 is
        // 801 samples ahead, and said to be a wrap below the one assumed.
        let mut c50 = SvCounter::default();
        c50.accept(3999, 4800, 1000 * ms);
        assert!(matches!(
            c50.check(0, 4800, 1000 * ms + 250_000),
            Err(SecError::Replay {
                kind: ReplayKind::WrappedEarly { last: 3999 },
                ..
            })
        ));
        // Beyond the wrap: malformed for this stream.
        assert!(matches!(
            c.check(4800, 4800, 1001 * ms),
            Err(SecError::Malformed(_))
        ));
        let fresh = SvCounter::default();
        assert!(fresh.check(3999, 4000, 0).is_ok());
        assert!(fresh.check(4000, 4000, 0).is_err());
        // A silence of half a second resynchronises the stream.
        assert!(c.check(1000, 4800, 1000 * ms + SV_RESYNC_NS).is_ok());
        // Slack is not summed over frames: a burst of frames each 40 samples ahead stops once
        // the whole burst is more than 10 ms ahead of the clock.
        let mut c = SvCounter::default();
        c.accept(0, 4800, 0);
        let mut smp = 0u16;
        let mut accepted = 0;
        for i in 1..20u64 {
            smp += 40;
            if c.check(smp, 4800, i * 1000).is_ok() {
                c.accept(smp, 4800, i * 1000);
                accepted += 1;
            }
        }
        assert_eq!(
            accepted, 1,
            "only the first 40 samples fit in 10 ms of slack"
        );
    }

    #[test]
    fn sv_streams_are_keyed_by_svid_and_use_the_stated_rate() {
        let mut st = ReplayState::new();
        let f = |sv_id, smp_cnt, rate, at_ns| Freshness::Sv {
            key_id: 1,
            appid: 0x4000,
            sv_id,
            smp_cnt,
            rate,
            at_ns,
        };
        st.check_and_accept(&f("MU01", 3999, None, 0)).unwrap();
        st.check_and_accept(&f("MU02", 3999, None, 0)).unwrap();
        // The default wrap is 4800, so 4000 follows 3999 ...
        assert!(st.check(&f("MU01", 4000, None, 208_333)).is_ok());
        // ... unless the frame states 4000 samples per second, or the receiver is told so.
        assert!(st.check(&f("MU01", 0, Some(4000), 250_000)).is_ok());
        assert!(st.check(&f("MU01", 0, None, 250_000)).is_err());
        st.set_sv_wrap(4000);
        assert!(st.check(&f("MU01", 0, None, 250_000)).is_ok());
        assert_eq!(st.streams(), 2);
    }

    proptest! {
        /// Whatever frames arrive, within one turn of the counter no smpCnt is accepted twice,
        /// and the counter never gets ahead of the clock by more than the slack.
        #[test]
        fn sv_never_accepts_twice_in_a_turn(
            frames in proptest::collection::vec((0u16..4800, 0u64..2_000_000), 1..300)
        ) {
            let mut c = SvCounter::default();
            let mut t = 0u64;
            let mut accepted: Vec<(u16, u64)> = Vec::new();
            for (smp, dt) in frames {
                t += dt;
                if c.check(smp, 4800, t).is_ok() {
                    for (s, at) in &accepted {
                        prop_assert!(!(*s == smp && t - at < 500_000_000), "smpCnt {} twice", smp);
                    }
                    c.accept(smp, 4800, t);
                    accepted.push((smp, t));
                }
            }
        }

        /// A stream sent at its rate, in order, is always accepted, also across wraps.
        #[test]
        fn sv_in_order_is_accepted(start in 0u16..4800, n in 1u32..10_000) {
            let mut c = SvCounter::default();
            for i in 0..n {
                let smp = ((u32::from(start) + i) % 4800) as u16;
                let t = u64::from(i) * 1_000_000_000 / 4800;
                prop_assert!(c.check(smp, 4800, t).is_ok());
                c.accept(smp, 4800, t);
            }
        }

        /// No sequence number is ever accepted twice, whatever the arrival order.
        #[test]
        fn never_accepts_twice(seqs in proptest::collection::vec(0u32..400, 1..300)) {
            let mut w = SlidingWindow::default();
            let mut accepted = std::collections::HashSet::new();
            for s in seqs {
                if w.check(s).is_ok() {
                    prop_assert!(accepted.insert(s), "accepted {} twice", s);
                    w.accept(s);
                }
            }
        }

        /// With restarts told by `t`: no GOOSE frame (stNum, sqNum, t) is ever accepted twice,
        /// and once a restart is accepted no frame with an earlier `t` is, whatever arrives.
        #[test]
        fn goose_never_accepts_a_frame_twice_nor_one_from_before_a_restart(
            frames in proptest::collection::vec((1u32..6, 0u32..6, 0u64..8), 1..200)
        ) {
            let mut g = GooseSequence::default();
            let mut accepted = std::collections::HashSet::new();
            let mut floor: Option<u64> = None;
            for (st, sq, t) in frames {
                if g.check(st, sq, t).is_ok() {
                    prop_assert!(accepted.insert((st, sq, t)), "({}, {}, {}) twice", st, sq, t);
                    prop_assert!(floor.is_none_or(|f| t >= f), "t {} below the floor {:?}", t, floor);
                    let restart = g.last.is_some_and(|(ls, lq)| {
                        !(serial_gt(st, ls) || (st == ls && serial_gt(sq, lq)))
                    });
                    g.accept(st, sq, t);
                    if restart {
                        floor = Some(t);
                    }
                }
            }
        }

        /// The same for R-GOOSE SPDU numbers with the first APDU's `t`.
        #[test]
        fn spdu_never_accepts_a_number_twice_within_one_run(
            frames in proptest::collection::vec((0u32..300, 0u64..6), 1..300)
        ) {
            let mut st = ReplayState::new();
            let mut accepted = std::collections::HashSet::new();
            for (number, t) in frames {
                let f = Freshness::Spdu { key_id: 1, spdu_id: 0xa1, appid: 1, number, t: Some(t) };
                if st.check_and_accept(&f).is_ok() {
                    prop_assert!(accepted.insert((number, t)), "({}, {}) twice", number, t);
                }
            }
        }

        /// In-order delivery is always accepted.
        #[test]
        fn in_order_is_accepted(start in any::<u32>(), n in 1u32..200) {
            let mut w = SlidingWindow::default();
            for i in 0..n {
                let Some(s) = start.checked_add(i) else { break };
                prop_assert!(w.check(s).is_ok());
                w.accept(s);
            }
        }
    }
}
