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
use gander_sec::view::{cut_l2, cut_session, CutL2, CutSession, Kind};
use gander_wire::cut_apdu::{goose_prefix, sv_prefix};

/// The counters a cut frame's captured APDU showed.
enum Counters {
    Goose(u32, u32, Option<u64>),
    Sv(u16),
}

/// What a cut frame shows, layer-2 or session alike: the parts of its stream key, whether it
/// is secured, and the captured start of the APDU whose fields can be believed (empty when
/// none can: cut before it, or an SPDU payload that may be ciphertext).
struct Cut<'a> {
    kind: Kind,
    src: Endpoint,
    dst: Endpoint,
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    outer_vid: Option<u16>,
    outer_pcp: Option<u8>,
    appid: Option<u16>,
    secured: Option<bool>,
    simulation: bool,
    apdu: &'a [u8],
}

impl<'a> Cut<'a> {
    fn of_l2(c: CutL2<'a>) -> Self {
        Cut {
            kind: c.kind,
            src: Endpoint::Mac(c.src),
            dst: Endpoint::Mac(c.dst),
            src_mac: c.src,
            dst_mac: c.dst,
            outer_vid: c.outer_vid,
            outer_pcp: c.outer_pcp,
            appid: Some(c.appid),
            secured: c.secured,
            // The simulation bit of Reserved1 (IEC 61850-8-1 Ed.2).
            simulation: c
                .reserved1
                .is_some_and(|r| r & gander_wire::l2_frame::RESERVED1_SIMULATION != 0),
            apdu: c.apdu,
        }
    }

    /// The first payload element is believed as a whole frame's is (`crate::seen`): in a
    /// cleartext SPDU (version 1 with encryption code 0, or no security announced), or, where
    /// a version-2 header leaves encryption to the key, when the element has the payload type
    /// its SI announces, a simulation octet of 0 or 1 and an APDU whose reference reads whole
    /// (ciphertext that looks like all of that is not to be expected). The APPID, and so the
    /// stream key, then match the whole frames' of the same publisher; otherwise both are
    /// left unread, as for a whole encrypted SPDU.
    fn of_session(c: CutSession<'a>) -> Self {
        let (payload_type, goose) = match c.kind {
            Kind::RGoose => (0x81, true),
            _ => (0x82, false),
        };
        let cleartext = c.spdu.encrypted == Some(false) || c.spdu.secured == Some(false);
        let element = c.spdu.element.filter(|e| {
            e.payload_type == payload_type
                && e.simulation <= 1
                && (cleartext
                    || if goose {
                        goose_prefix(e.apdu).gocb_ref.is_some()
                    } else {
                        sv_prefix(e.apdu).sv_id.is_some()
                    })
        });
        Cut {
            kind: c.kind,
            src: Endpoint::Ip(c.src, c.src_port),
            dst: Endpoint::Ip(c.dst, c.dst_port),
            src_mac: c.src_mac,
            dst_mac: c.dst_mac,
            outer_vid: c.outer_vid,
            outer_pcp: c.outer_pcp,
            appid: element.map(|e| e.appid),
            secured: c.spdu.secured,
            simulation: element.is_some_and(|e| e.simulation != 0),
            apdu: element.map_or(&[], |e| e.apdu),
        }
    }
}

impl Auditor<'_> {
    /// Puts frame `no` (`data`, cut by the capture) into its stream. `None`: not GOOSE, SV,
    /// R-GOOSE or R-SV, or no stream to put it in; `Some(read)`: counted in a stream, `read`
    /// when its counters went through the sequence checks.
    pub(crate) fn cut_into_stream(&mut self, no: u64, ts: u64, data: &[u8]) -> Option<bool> {
        let c = match cut_l2(data) {
            Some(c) => Cut::of_l2(c),
            None => Cut::of_session(cut_session(data)?),
        };
        let is_goose = matches!(c.kind, Kind::Goose | Kind::RGoose);
        // GOOSE's own simulation field adds to the header's bit.
        let mut simulation = c.simulation;
        let (id, fields, counters) = if is_goose {
            let p = goose_prefix(c.apdu);
            simulation |= p.simulation == Some(true);
            let t = p.t.map(|t| gander_sec::replay::goose_time(&t));
            let n = p
                .st_num
                .zip(p.sq_num)
                .map(|(a, b)| Counters::Goose(a, b, t));
            (p.gocb_ref, (p.dat_set, p.go_id, p.tal_ms), n)
        } else {
            let p = sv_prefix(c.apdu);
            (p.sv_id, (None, None, None), p.smp_cnt.map(Counters::Sv))
        };
        let i = self.cut_stream_of(&c, id, no, ts)?;
        let recorded = (crate::recorded_octets_hash(data), Recorded::default());
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
            if is_goose {
                tal_check(s, f, i, no, ts);
            }
            if tal.is_some() {
                s.tal_ms = tal;
            }
        }
        let Some(counters) = counters.filter(|_| believed) else {
            s.refused_since_trusted = s.refused_since_trusted.saturating_add(1);
            if believed {
                s.arrived(no, ts);
            }
            return Some(false);
        };
        let in_order = match counters {
            Counters::Goose(st, sq, t) => goose_event(s, f, i, no, (ts, recorded), (st, sq, t)),
            Counters::Sv(n) => sv_event(s, f, i, no, (ts, recorded), n),
        };
        if in_order {
            s.arrived(no, ts);
            s.last_recorded = recorded;
        }
        s.refused_since_trusted = 0;
        Some(true)
    }

    /// The stream of a cut frame: by its whole key when the reference was read (a new stream
    /// if none has it yet: a capture whose every frame the snap length cut still has an
    /// inventory), else the one stream of its kind, addresses, VLAN and APPID if there is
    /// exactly one.
    fn cut_stream_of(&mut self, c: &Cut<'_>, id: Option<&str>, no: u64, ts: u64) -> Option<usize> {
        let key = StreamKey {
            kind: c.kind,
            src: c.src,
            dst: c.dst,
            appid: c.appid,
            id_hash: id.map(stream::id_hash),
            vid: c.outer_vid,
        };
        if let Some(&i) = self.index.get(&key) {
            return Some(i);
        }
        if id.is_none() {
            // An APPID not read (an SPDU cut before its first element) matches any.
            let same = |k: &StreamKey| {
                StreamKey {
                    id_hash: None,
                    appid: if c.appid.is_some() { k.appid } else { None },
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
        if i >= crate::MAX_STREAMS {
            return None;
        }
        let mut s = Stream::new(key, i, c.src_mac, c.dst_mac, no, ts);
        s.priority = c.outer_pcp;
        self.streams.push(s);
        self.index.insert(key, i);
        Some(i)
    }
}
