//! What the captured start of a GOOSE or SV APDU shows when the capture cut the frame (a snap
//! length: `tcpdump -s 96`; the pcap record's `incl_len` below its `orig_len`).
//!
//! Such an APDU cannot be parsed: its outer length runs past the captured octets. But its first
//! fields are often there, in the order IEC 61850-8-1 Table 60 (GOOSE: gocbRef,
//! timeAllowedtoLive, datSet, goID, t, stNum, sqNum, ...) and IEC 61850-9-2 §8.5 (SV: noASDU,
//! security, then the first ASDU's svID, datSet, smpCnt, ...) fix, and they are what a reader
//! of the capture needs to put the frame into its publisher's stream and its counters into the
//! sequence: without them, a frame the snap length cut between two whole ones reads as a lost
//! one (an sqNum or smpCnt gap that never happened on the wire).
//!
//! The readers take the fields in that order as long as each one is whole within the captured
//! octets and well formed (X.690 definite lengths, the value rules of the full parsers), and
//! stop at the first that is not: they report what they could read, never an error, and never
//! read past the slice.

use crate::goose::{tag, TAG_GOOSE_PDU};
use crate::sv::{TAG_ASDU, TAG_NO_ASDU, TAG_SAV_PDU, TAG_SECURITY, TAG_SEQ_ASDU};
use crate::tlv_scan;

/// The GOOSE fields readable from the captured start of an APDU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GoosePrefix<'a> {
    /// gocbRef.
    pub gocb_ref: Option<&'a str>,
    /// timeAllowedtoLive, milliseconds.
    pub tal_ms: Option<u32>,
    /// datSet.
    pub dat_set: Option<&'a str>,
    /// goID (absent also when the publisher left it out).
    pub go_id: Option<&'a str>,
    /// t, the UtcTime of the state.
    pub t: Option<[u8; 8]>,
    /// stNum.
    pub st_num: Option<u32>,
    /// sqNum.
    pub sq_num: Option<u32>,
    /// simulation (test in Ed.1): `Some(false)` also when the field is left out (its DEFAULT)
    /// and confRev, which follows, was captured to show it.
    pub simulation: Option<bool>,
}

/// The SV fields readable from the captured start of a savPdu (its first ASDU's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SvPrefix<'a> {
    /// svID of the first ASDU.
    pub sv_id: Option<&'a str>,
    /// smpCnt of the first ASDU.
    pub smp_cnt: Option<u16>,
}

/// The identifier octet, the announced contents length and the header length of the element at
/// the start of `b` (X.690 8.1.2-8.1.3: a one-octet tag, a definite length in the short form or
/// in up to four long-form octets). The contents may run past `b`; `None` when the header
/// itself is cut or not one a parser here accepts.
fn header(b: &[u8]) -> Option<(u8, usize, usize)> {
    let (&t, rest) = b.split_first()?;
    if t & 0x1f == 0x1f {
        return None;
    }
    let (&l, rest) = rest.split_first()?;
    if l < 0x80 {
        return Some((t, usize::from(l), 2));
    }
    let n = usize::from(l & 0x7f);
    if n == 0 || n > 4 {
        return None;
    }
    let octets = rest.get(..n)?;
    let len = octets
        .iter()
        .fold(0usize, |a, &o| (a << 8) | usize::from(o));
    Some((t, len, 2 + n))
}

/// The whole length (header and contents) that the element starting `b` announces, read from
/// its header alone: the contents may be cut. `None` when the header itself is cut.
pub fn announced_len(b: &[u8]) -> Option<usize> {
    let (_, len, h) = header(b)?;
    len.checked_add(h)
}

/// The contents of a constructed element whose header starts `b`, as far as captured.
fn open(b: &[u8], want: u8) -> Option<&[u8]> {
    let (t, len, h) = header(b)?;
    if t != want {
        return None;
    }
    let rest = &b[h..];
    Some(&rest[..len.min(rest.len())])
}

/// The next element of `b` if it is whole and carries `want`: its contents and what follows.
/// `Some(None, b)` when the next element is another tag (an optional field left out).
type Next<'a> = Option<(Option<&'a [u8]>, &'a [u8])>;

fn next(b: &[u8], want: u8) -> Next<'_> {
    let (t, len, h) = header(b)?;
    if t != want {
        return Some((None, b));
    }
    let v = b.get(h..h.checked_add(len)?)?;
    Some((Some(v), &b[h + len..]))
}

/// A VisibleString's octets (every one 0x20..=0x7E, as the parsers require) as `&str`.
fn visible(v: &[u8]) -> Option<&str> {
    if tlv_scan::visible(v) {
        std::str::from_utf8(v).ok()
    } else {
        None
    }
}

/// Reads the GOOSE fields whole within `apdu`, the captured start of an `IECGoosePdu`
/// (`61 L ...`): in order, stopping at the first that is cut, malformed or out of order.
pub fn goose_prefix(apdu: &[u8]) -> GoosePrefix<'_> {
    let mut p = GoosePrefix::default();
    let Some(mut b) = open(apdu, TAG_GOOSE_PDU) else {
        return p;
    };
    // One required field: its value when whole and valid, else stop.
    macro_rules! field {
        ($tag:expr, $read:expr) => {
            match next(b, $tag) {
                Some((Some(v), rest)) => match $read(v) {
                    Some(x) => {
                        b = rest;
                        x
                    }
                    None => return p,
                },
                _ => return p,
            }
        };
    }
    p.gocb_ref = Some(field!(tag::GOCB_REF, visible));
    p.tal_ms = Some(field!(tag::TIME_ALLOWED_TO_LIVE, tlv_scan::u32_of));
    p.dat_set = Some(field!(tag::DAT_SET, visible));
    match next(b, tag::GO_ID) {
        Some((Some(v), rest)) => match visible(v) {
            Some(s) => {
                p.go_id = Some(s);
                b = rest;
            }
            None => return p,
        },
        Some((None, _)) => {}
        None => return p,
    }
    p.t = Some(field!(tag::T, |v: &[u8]| <[u8; 8]>::try_from(v).ok()));
    p.st_num = Some(field!(tag::ST_NUM, tlv_scan::u32_of));
    p.sq_num = Some(field!(tag::SQ_NUM, tlv_scan::u32_of));
    p.simulation = match next(b, tag::SIMULATION) {
        Some((Some(v), _)) => tlv_scan::bool_of(v),
        // Left out: FALSE, if what follows is the confRev that must come next.
        Some((None, rest)) => {
            matches!(next(rest, tag::CONF_REV), Some((Some(_), _))).then_some(false)
        }
        None => None,
    };
    p
}

/// Reads the first ASDU's svID and smpCnt within `apdu`, the captured start of a savPdu
/// (`60 L 80 noASDU [81 security] A2 L 30 L 80 svID [81 datSet] 82 smpCnt ...`).
pub fn sv_prefix(apdu: &[u8]) -> SvPrefix<'_> {
    let mut p = SvPrefix::default();
    let Some(b) = open(apdu, TAG_SAV_PDU) else {
        return p;
    };
    let Some((Some(n), b)) = next(b, TAG_NO_ASDU) else {
        return p;
    };
    if tlv_scan::u32_of(n).is_none_or(|n| n == 0) {
        return p;
    }
    let b = match next(b, TAG_SECURITY) {
        Some((_, rest)) => rest,
        None => return p,
    };
    let Some(b) = open(b, TAG_SEQ_ASDU).and_then(|s| open(s, TAG_ASDU)) else {
        return p;
    };
    let Some((Some(id), b)) = next(b, 0x80) else {
        return p;
    };
    let Some(id) = visible(id) else {
        return p;
    };
    p.sv_id = Some(id);
    let b = match next(b, 0x81) {
        Some((Some(d), rest)) if visible(d).is_some() => rest,
        Some((None, rest)) => rest,
        _ => return p,
    };
    if let Some((Some(&[hi, lo]), _)) = next(b, 0x82) {
        p.smp_cnt = Some(u16::from_be_bytes([hi, lo]));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Data;
    use crate::goose::GoosePdu;
    use crate::sv::{Asdu, SavPdu};
    use crate::Codec;
    use proptest::prelude::*;

    fn goose(go_id: Option<&str>, st: u32, sq: u32) -> Vec<u8> {
        GoosePdu {
            gocb_ref: "IED1LD0/LLN0$GO$gcb1".into(),
            time_allowed_to_live: 2000,
            dat_set: "IED1LD0/LLN0$ds1".into(),
            go_id: go_id.map(str::to_string),
            t: [0x5f, 1, 2, 3, 0, 0, 0, 0x0a],
            st_num: st,
            sq_num: sq,
            simulation: false,
            conf_rev: 1,
            nds_com: false,
            num_dat_set_entries: 2,
            all_data: vec![Data::Boolean(true), Data::Integer(-7)],
        }
        .to_vec()
    }

    fn sv(sv_id: &str, dat_set: Option<&str>, smp_cnt: u16) -> Vec<u8> {
        SavPdu {
            security: None,
            asdus: vec![Asdu {
                sv_id: sv_id.into(),
                dat_set: dat_set.map(str::to_string),
                smp_cnt,
                conf_rev: 1,
                refr_tm: None,
                smp_synch: 2,
                smp_rate: Some(4000),
                sample: vec![0; 64],
                smp_mod: None,
                gm_identity: None,
            }],
        }
        .to_vec()
    }

    #[test]
    fn a_whole_goose_apdu_gives_every_leading_field() {
        let a = goose(Some("go1"), 7, 300);
        let p = goose_prefix(&a);
        assert_eq!(p.gocb_ref, Some("IED1LD0/LLN0$GO$gcb1"));
        assert_eq!(p.tal_ms, Some(2000));
        assert_eq!(p.dat_set, Some("IED1LD0/LLN0$ds1"));
        assert_eq!(p.go_id, Some("go1"));
        assert_eq!(p.t, Some([0x5f, 1, 2, 3, 0, 0, 0, 0x0a]));
        assert_eq!((p.st_num, p.sq_num), (Some(7), Some(300)));
        assert_eq!(p.simulation, Some(false));
        let b = goose(None, 1, 0);
        let p = goose_prefix(&b);
        assert_eq!((p.go_id, p.st_num, p.sq_num), (None, Some(1), Some(0)));
    }

    /// Cut anywhere, the reader gives the fields wholly before the cut and nothing after.
    #[test]
    fn every_cut_gives_exactly_the_whole_fields_before_it() {
        let a = goose(Some("go1"), 7, 300);
        let whole = goose_prefix(&a);
        // Where each field ends in the APDU (outer header 2 octets: the APDU is under 128).
        let mut ends = Vec::new();
        let mut at = 2;
        // gocbRef .. sqNum, then simulation (or, left out, the confRev that shows it).
        for _ in 0..8 {
            at += 2 + usize::from(a[at + 1]);
            ends.push(at);
        }
        for cut in 0..=a.len() {
            let p = goose_prefix(&a[..cut]);
            let n = ends.iter().filter(|&&e| e <= cut).count();
            let expect = [
                p.gocb_ref.is_some(),
                p.tal_ms.is_some(),
                p.dat_set.is_some(),
                p.go_id.is_some(),
                p.t.is_some(),
                p.st_num.is_some(),
                p.sq_num.is_some(),
                p.simulation.is_some(),
            ];
            for (i, got) in expect.iter().enumerate() {
                assert_eq!(*got, i < n, "cut {cut}: field {i}");
            }
            if n == 8 {
                assert_eq!(p, whole);
            }
        }
    }

    /// simulation TRUE is read; left out (DEFAULT FALSE) it is FALSE once the confRev that
    /// follows shows it, and unknown when the cut falls where it would be.
    #[test]
    fn simulation_read_or_defaulted() {
        let mut a = goose(None, 1, 0);
        let at = a.windows(3).position(|w| w == [0x87, 1, 0]).unwrap();
        a[at + 2] = 0xff;
        assert_eq!(goose_prefix(&a).simulation, Some(true));
        a.drain(at..at + 3);
        a[1] -= 3;
        assert_eq!(goose_prefix(&a).simulation, Some(false));
        assert_eq!(goose_prefix(&a[..at]).simulation, None);
        assert_eq!(goose_prefix(&a[..at + 2]).simulation, None);
    }

    #[test]
    fn sv_prefix_reads_sv_id_and_smp_cnt_with_or_without_dat_set() {
        for ds in [None, Some("MU01/LLN0$PhsMeas1")] {
            let a = sv("MU01SV01", ds, 3999);
            let p = sv_prefix(&a);
            assert_eq!((p.sv_id, p.smp_cnt), (Some("MU01SV01"), Some(3999)));
            // Cut right after smpCnt: still read; one octet earlier: not.
            let at = a
                .windows(4)
                .position(|w| w == [0x82, 2, 0x0f, 0x9f])
                .unwrap();
            assert_eq!(sv_prefix(&a[..at + 4]).smp_cnt, Some(3999));
            let p = sv_prefix(&a[..at + 3]);
            assert_eq!((p.sv_id, p.smp_cnt), (Some("MU01SV01"), None));
        }
    }

    #[test]
    fn the_announced_length_is_read_from_the_header_alone() {
        let a = goose(None, 1, 0);
        for cut in 2..=a.len() {
            assert_eq!(announced_len(&a[..cut]), Some(a.len()), "cut {cut}");
        }
        assert_eq!(announced_len(&a[..1]), None);
        assert_eq!(announced_len(&[0x61, 0x82, 0x01, 0x00]), Some(260));
        assert_eq!(announced_len(&[0x61, 0x82, 0x01]), None);
    }

    #[test]
    fn wrong_tags_and_bad_values_stop_the_reading() {
        let mut a = goose(None, 1, 0);
        a[0] = 0x60;
        assert_eq!(goose_prefix(&a), GoosePrefix::default());
        let mut a = goose(None, 1, 0);
        a[4] = 0x01; // a control octet inside gocbRef
        assert_eq!(goose_prefix(&a), GoosePrefix::default());
        assert_eq!(sv_prefix(&goose(None, 1, 0)), SvPrefix::default());
        assert_eq!(goose_prefix(&[]), GoosePrefix::default());
        assert_eq!(sv_prefix(&[0x60]), SvPrefix::default());
    }

    proptest! {
        /// Any octets: an answer, no panic; and a real APDU's prefix agrees with its parse.
        #[test]
        fn any_input_is_answered(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = goose_prefix(&b);
            let _ = sv_prefix(&b);
        }

        #[test]
        fn prefixes_agree_with_the_full_parsers(st in any::<u32>(), sq in any::<u32>(),
                                               go in proptest::option::of("[a-z0-9]{1,20}"),
                                               smp in any::<u16>(), cut in 0usize..400) {
            let a = goose(go.as_deref(), st, sq);
            let g = GoosePdu::parse(&a).unwrap();
            let p = goose_prefix(&a[..cut.min(a.len())]);
            if let Some(x) = p.st_num { prop_assert_eq!(x, g.st_num); }
            if let Some(x) = p.sq_num { prop_assert_eq!(x, g.sq_num); }
            if cut >= a.len() {
                prop_assert_eq!((p.st_num, p.sq_num), (Some(st), Some(sq)));
                prop_assert_eq!(p.go_id, g.go_id.as_deref());
            }
            let s = sv("MU01", None, smp);
            let q = sv_prefix(&s[..cut.min(s.len())]);
            if let Some(c) = q.smp_cnt { prop_assert_eq!(c, smp); }
            if cut >= s.len() { prop_assert_eq!(q.smp_cnt, Some(smp)); }
        }
    }
}
