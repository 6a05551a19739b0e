//! A layer-2 GOOSE or SV frame the capture's snap length cut, put into its publisher's stream.
//!
//! Its contents past the cut were never recorded, so it is not verified, not checked as a
//! whole and not counted as secured or unsecured. But it was on the wire: left out of its
//! stream, it reads as a lost frame (a `goose-sq-gap` or `sv-gap` at the next whole frame that
//! no subscriber saw) and its arrival is missing from the timeAllowedtoLive check. The captured
//! headers give the stream (`gander_sec::view::cut_l2`: addresses, outer VLAN, APPID) and the
//! APDU's captured start often holds the control block's reference and the counters
//! (`gander_wire::cut_apdu`: gocbRef .. sqNum, svID and smpCnt):
//!
//! - whether it is secured is told from its headers (`CutL2::secured`: Length, Reserved1 and
//!   the APDU's own length), and counted as for a whole frame, an unsecured one with the same
//!   `unsecured` or `security-downgrade` finding;
//! - counters read, in a frame whose counters the audit believes (no keys given, or an
//!   unsecured frame): they go through the same sequence checks as a whole frame's, and the
//!   frame is an arrival;
//! - otherwise (cut before the counters, or a secured frame audited with keys, whose counters
//!   count only once verified): the frame explains one missing number at the next whole frame,
//!   as a frame refused by verification does.
//!
//! A frame whose reference was read starts its stream if none has it yet (a capture whose every
//! frame was cut still gets an inventory and its sequence checks); one whose reference was cut
//! goes to the one stream of its kind, addresses, VLAN and APPID if there is exactly one, and
//! is otherwise only tallied.

use crate::stream::{self, Endpoint, Stream, StreamKey};
use crate::{goose_event, simulation_seen, sv_event, tal_check, unsecured_seen, Auditor, Recorded};
use gander_sec::view::{cut_l2, CutL2, Kind};
use gander_wire::cut_apdu::{goose_prefix, sv_prefix};

/// The counters a cut frame's captured APDU showed.
enum Counters {
    Goose(u32, u32, Option<u64>),
    Sv(u16),
}

impl Auditor<'_> {
    /// Puts frame `no` (`data`, cut by the capture) into its stream. `None`: not layer-2
    /// GOOSE/SV, or no stream to put it in; `Some(read)`: counted in a stream, `read` when its
    /// counters went through the sequence checks.
    pub(crate) fn cut_into_stream(&mut self, no: u64, ts: u64, data: &[u8]) -> Option<bool> {
        let c = cut_l2(data)?;
        // The simulation bit of Reserved1 (IEC 61850-8-1 Ed.2), or GOOSE's own field.
        let mut simulation = c
            .reserved1
            .is_some_and(|r| r & gander_wire::l2_frame::RESERVED1_SIMULATION != 0);
        let (id, fields, counters) = match c.kind {
            Kind::Goose => {
                let p = goose_prefix(c.apdu);
                simulation |= p.simulation == Some(true);
                let t = p.t.map(|t| gander_sec::replay::goose_time(&t));
                let n = p
                    .st_num
                    .zip(p.sq_num)
                    .map(|(a, b)| Counters::Goose(a, b, t));
                (p.gocb_ref, (p.dat_set, p.go_id, p.tal_ms), n)
            }
            _ => {
                let p = sv_prefix(c.apdu);
                (p.sv_id, (None, None, None), p.smp_cnt.map(Counters::Sv))
            }
        };
        let i = self.cut_stream_of(&c, id, no, ts)?;
        let recorded = (
            crate::fnv::hash64(data.get(6..).unwrap_or(&[])),
            Recorded::default(),
        );
        // The counters of a secured stream audited with keys count only once verified, which
        // a cut frame cannot be; an unsecured frame's count as a whole one's do.
        let believed = self.verifier.is_none() || c.secured == Some(false);
        let s = &mut self.streams[i];
        let f = &mut self.findings;
        let at = Some((i, s.uid.as_str()));
        s.frames += 1;
        s.cut += 1;
        s.last = (no, ts);
        match c.secured {
            Some(true) => s.secured += 1,
            Some(false) => unsecured_seen(&mut s.unsecured, s.secured, s.key.kind, at, f, no, ts),
            None => {}
        }
        if believed {
            if simulation {
                simulation_seen(&mut s.simulation, s.key.kind, at, f, no, ts);
            }
            let (dat_set, go_id, tal) = fields;
            if s.id.is_none() {
                s.id = id.map(str::to_string);
            }
            if s.dat_set.is_none() {
                s.dat_set = dat_set.map(str::to_string);
            }
            if s.go_id.is_none() {
                s.go_id = go_id.map(str::to_string);
            }
            if c.kind == Kind::Goose {
                tal_check(s, f, i, no, ts);
            }
            if tal.is_some() {
                s.tal_ms = tal;
            }
        }
        let Some(counters) = counters.filter(|_| believed) else {
            s.refused_since_trusted = s.refused_since_trusted.saturating_add(1);
            if believed {
                s.arrivals.add(ts);
            }
            return Some(false);
        };
        let in_order = match counters {
            Counters::Goose(st, sq, t) => goose_event(s, f, i, no, (ts, recorded), (st, sq, t)),
            Counters::Sv(n) => sv_event(s, f, i, no, (ts, recorded), n),
        };
        if in_order {
            s.arrivals.add(ts);
            s.last_recorded = recorded;
        }
        s.refused_since_trusted = 0;
        Some(true)
    }

    /// The stream of a cut frame: by its whole key when the reference was read (a new stream
    /// if none has it yet: a capture whose every frame the snap length cut still has an
    /// inventory), else the one stream of its kind, addresses, VLAN and APPID if there is
    /// exactly one.
    fn cut_stream_of(
        &mut self,
        c: &CutL2<'_>,
        id: Option<&str>,
        no: u64,
        ts: u64,
    ) -> Option<usize> {
        let key = StreamKey {
            kind: c.kind,
            src: Endpoint::Mac(c.src),
            dst: Endpoint::Mac(c.dst),
            appid: Some(c.appid),
            id_hash: id.map(stream::id_hash),
            vid: c.outer_vid,
        };
        if let Some(&i) = self.index.get(&key) {
            return Some(i);
        }
        if id.is_none() {
            let same = |k: &StreamKey| {
                StreamKey {
                    id_hash: None,
                    ..*k
                } == key
            };
            let mut it = self
                .streams
                .iter()
                .enumerate()
                .filter(|(_, s)| same(&s.key));
            return match (it.next(), it.next()) {
                (Some((i, _)), None) => Some(i),
                _ => None,
            };
        }
        let i = self.streams.len();
        let mut s = Stream::new(key, i, c.src, c.dst, no, ts);
        s.priority = c.outer_pcp;
        self.streams.push(s);
        self.index.insert(key, i);
        Some(i)
    }
}
