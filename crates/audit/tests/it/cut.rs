//! Frames the capture's snap length cut, put into their streams (`tcpdump -s 96`-style
//! captures; the pcap record's captured length below the length on the wire). Before, such a
//! frame was only tallied: a GOOSE frame cut between two whole ones left a `goose-sq-gap` no
//! subscriber saw, and its arrival was missing from the timeAllowedtoLive check.

use gander_audit::{Audit, AuditOptions, Auditor};
use gander_sec::frame::protect_frame;
use gander_sec::spdu::RandomIv;
use gander_sec::{default_provider, KeyStore, Profile};
use gander_testkit::frames::{goose_frame, rgoose_spdu, sv_frame, udp_frame, UdpAddrs};
use std::path::Path;

const T0: u64 = 1_700_000_000_000_000_000;
const MS: u64 = 1_000_000;
const SRC: [u8; 6] = [0x00, 0x30, 0xa7, 0, 0, 0x0a];
const GOOSE_DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];
const SV_DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01];

/// Where a snap length cuts a frame of `goose_frame`: after its counters (inside allData), after
/// gocbRef but before stNum, inside gocbRef.
#[derive(Clone, Copy)]
enum Cut {
    None,
    AfterCounters,
    BeforeCounters,
    InsideReference,
}

struct Cap(Vec<(u64, Vec<u8>, Cut)>);

impl Cap {
    fn audit(&self, keys: Option<&KeyStore>) -> Audit {
        let mut a = Auditor::new(AuditOptions::default(), keys);
        for (i, (ts, f, cut)) in self.0.iter().enumerate() {
            let no = i as u64 + 1;
            let n = match cut {
                Cut::None => {
                    a.feed(no, *ts, f);
                    continue;
                }
                Cut::AfterCounters => f.len() - 5,
                // 14 Ethernet + 8 header + 2 APDU header + 25 gocbRef + 4 TAL: the datSet.
                Cut::BeforeCounters => 60,
                Cut::InsideReference => 40,
            };
            a.cut_by_capture(no, *ts, &f[..n], n as u32, f.len() as u32);
        }
        a.finish()
    }
}

fn codes(a: &Audit) -> Vec<(String, Vec<u64>)> {
    let mut v: Vec<_> = a
        .findings
        .iter()
        .map(|f| (f.code.clone(), f.frames.clone()))
        .collect();
    v.sort();
    v
}

fn g(st: u32, sq: u32) -> Vec<u8> {
    goose_frame(SRC, GOOSE_DST, None, 0x3001, st, sq)
}

fn keys() -> KeyStore {
    KeyStore::from_toml(
        "[[key]]\nid = 1\nmac = \"hmac-sha256-128\"\nkey_ascii = \"0123456789ABCDEF\"\n",
        Path::new("."),
        default_provider(),
    )
    .unwrap()
}

/// `g(st, sq)` protected with key 1.
fn protected(keys: &KeyStore, st: u32, sq: u32) -> Vec<u8> {
    protect_frame(
        Profile::Standard,
        keys.get(1).unwrap(),
        &g(st, sq),
        &mut RandomIv,
        T0 / 1_000_000_000,
    )
    .unwrap()
    .unwrap()
}

#[test]
fn a_goose_frame_cut_between_two_whole_ones_is_no_gap() {
    let cap = Cap(vec![
        (T0, g(1, 0), Cut::None),
        (T0 + 500 * MS, g(1, 1), Cut::AfterCounters),
        (T0 + 1000 * MS, g(1, 2), Cut::None),
        (T0 + 1500 * MS, g(1, 3), Cut::BeforeCounters),
        (T0 + 2000 * MS, g(1, 4), Cut::None),
        (T0 + 2500 * MS, g(1, 5), Cut::InsideReference),
        (T0 + 3000 * MS, g(1, 6), Cut::None),
    ]);
    let a = cap.audit(None);
    assert_eq!(
        codes(&a),
        vec![
            ("capture-truncated".to_string(), vec![2, 4, 6]),
            ("unsecured".to_string(), vec![1, 2, 3, 4, 5, 6, 7]),
        ],
        "{:#?}",
        a.findings
    );
    let s = &a.streams[0];
    assert_eq!((a.streams.len(), s.frames, s.cut_by_capture), (1, 7, 3));
    // Unsecured is told from the cut frames' headers too (Length, Reserved1, the APDU's length).
    assert_eq!((s.unsecured, s.secured, s.security), (7, 0, "unsecured"));
    assert!(gander_audit::html::render(&a, "cut").contains("<td>7 (3 cut by the capture)</td>"));
    let t = a
        .findings
        .iter()
        .find(|f| f.code == "capture-truncated")
        .unwrap();
    assert!(
        t.detail.contains("3 went into their GOOSE/SV streams")
            && t.detail.contains("(1 with stNum/sqNum or smpCnt read"),
        "{}",
        t.detail
    );
}

/// A cut frame explains one missing number, no more: two numbers missing around one cut frame
/// whose counters were not captured is still a gap; counters read in the cut frame are checked
/// like a whole frame's (a repeat is a duplicate).
#[test]
fn a_cut_frame_explains_one_number_and_its_counters_are_checked() {
    let cap = Cap(vec![
        (T0, g(1, 0), Cut::None),
        (T0 + 100 * MS, g(1, 1), Cut::BeforeCounters),
        (T0 + 200 * MS, g(1, 3), Cut::None),
        (T0 + 300 * MS, g(1, 3), Cut::AfterCounters),
    ]);
    let a = cap.audit(None);
    assert_eq!(
        codes(&a),
        vec![
            ("capture-truncated".to_string(), vec![2, 4]),
            ("goose-duplicate".to_string(), vec![4]),
            ("goose-sq-gap".to_string(), vec![3]),
            ("unsecured".to_string(), vec![1, 2, 3, 4]),
        ],
        "{:#?}",
        a.findings
    );
}

/// timeAllowedtoLive (2000 ms in these frames) is measured from the cut frame's arrival: 1.5 s
/// and 1.5 s is no finding; 3 s after it still is.
#[test]
fn a_cut_frame_is_an_arrival_for_time_allowed_to_live() {
    let cap = Cap(vec![
        (T0, g(1, 0), Cut::None),
        (T0 + 1500 * MS, g(1, 1), Cut::BeforeCounters),
        (T0 + 3000 * MS, g(1, 2), Cut::None),
        (T0 + 6000 * MS, g(1, 3), Cut::None),
    ]);
    let a = cap.audit(None);
    assert_eq!(
        codes(&a),
        vec![
            ("capture-truncated".to_string(), vec![2]),
            ("goose-tal-exceeded".to_string(), vec![4]),
            ("unsecured".to_string(), vec![1, 2, 3, 4]),
        ],
        "{:#?}",
        a.findings
    );
}

#[test]
fn an_sv_frame_cut_after_its_smp_cnt_is_in_sequence() {
    let sv = |n| sv_frame(SRC, SV_DST, None, 0x4001, "MU01", n);
    let mut a = Auditor::new(AuditOptions::default(), None);
    for n in 0..6u16 {
        let f = sv(n);
        let ts = T0 + u64::from(n) * 250_000;
        if n % 2 == 1 {
            // 14 + 8 + savPdu, noASDU, seqASDU, ASDU headers, svID "MU01", smpCnt: 43 octets.
            a.cut_by_capture(u64::from(n) + 1, ts, &f[..43], 43, f.len() as u32);
        } else {
            a.feed(u64::from(n) + 1, ts, &f);
        }
    }
    let a = a.finish();
    assert_eq!(
        codes(&a),
        vec![
            ("capture-truncated".to_string(), vec![2, 4, 6]),
            ("unsecured".to_string(), vec![1, 2, 3, 4, 5, 6]),
        ],
        "{:#?}",
        a.findings
    );
    assert_eq!(a.streams[0].cut_by_capture, 3);
}

/// With keys, a secured stream's counters count only once verified: a cut frame's are not
/// believed, but the frame still explains one missing number.
#[test]
fn with_keys_a_secured_stream_takes_no_counters_from_a_cut_frame() {
    let keys = keys();
    let p = |st, sq| protected(&keys, st, sq);
    let cap = Cap(vec![
        (T0, p(1, 0), Cut::None),
        (T0 + 100 * MS, p(1, 1), Cut::AfterCounters),
        (T0 + 200 * MS, p(1, 2), Cut::None),
    ]);
    let a = cap.audit(Some(&keys));
    assert!(
        !a.findings.iter().any(|f| f.code.starts_with("goose-")),
        "{:#?}",
        a.findings
    );
    let s = &a.streams[0];
    assert_eq!((s.frames, s.verified, s.cut_by_capture), (3, 2, 1));
}

/// A capture whose every frame the snap length cut (`tcpdump -s 96`): before, no stream at all
/// and one `capture-truncated` finding. Each publisher now has its stream from the captured
/// reference, addresses and APPID, with what the cut left of its inventory and its sequence
/// checked wherever the counters were captured.
#[test]
fn a_capture_cut_everywhere_still_has_its_streams() {
    let other = |st, sq| goose_frame(SRC, GOOSE_DST, None, 0x3002, st, sq);
    let mut frames = Vec::new();
    for sq in 0..4u32 {
        let t = T0 + u64::from(sq) * 100 * MS;
        frames.push((t, g(1, sq), Cut::AfterCounters));
        frames.push((
            t + MS,
            other(5, if sq == 3 { 5 } else { sq }),
            Cut::AfterCounters,
        ));
    }
    let a = Cap(frames).audit(None);
    assert_eq!(a.streams.len(), 2, "{:#?}", a.streams);
    for s in &a.streams {
        assert_eq!((s.frames, s.cut_by_capture, s.unsecured), (4, 4, 4));
        assert_eq!(s.id.as_deref(), Some("GANDERIED/LLN0$GO$gcb01"));
        assert_eq!(s.dat_set.as_deref(), Some("GANDERIED/LLN0$DS1"));
        assert_eq!(s.tal_ms, Some(2000));
    }
    let gaps: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.code == "goose-sq-gap")
        .collect();
    assert_eq!(gaps.len(), 1, "{:#?}", a.findings);
    assert_eq!(gaps[0].frames, vec![8]);
}

/// A cut frame whose headers say unsecured, in a stream that was secured: the downgrade is
/// seen from the headers alone, and its counters (unsecured: believed, as a whole unsecured
/// frame's are) are checked.
#[test]
fn a_cut_unsecured_frame_in_a_secured_stream_is_a_downgrade() {
    let keys = keys();
    let p = |st, sq| protected(&keys, st, sq);
    let cap = Cap(vec![
        (T0, p(1, 0), Cut::None),
        (T0 + 100 * MS, g(1, 1), Cut::AfterCounters),
        (T0 + 200 * MS, p(1, 2), Cut::None),
    ]);
    let a = cap.audit(Some(&keys));
    let down: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.code == "security-downgrade")
        .collect();
    assert_eq!(down.len(), 1, "{:#?}", a.findings);
    assert_eq!(down[0].frames, vec![2]);
    assert!(!a.findings.iter().any(|f| f.code == "goose-sq-gap"));
    let s = &a.streams[0];
    assert_eq!((s.secured, s.unsecured, s.security), (2, 1, "mixed"));
}

/// R-GOOSE datagram `sq` of the lab's IED (unsecured, APPID 0x3001, SPDU number = sq).
fn rg(sq: u32) -> Vec<u8> {
    udp_frame(
        &UdpAddrs::IED_TO_SUB,
        &rgoose_spdu(Profile::Standard, 0x3001, sq, 1, sq),
    )
}

/// An audit of `frames`, each fed whole or cut to its given length.
fn audit_cut(frames: &[(Vec<u8>, Option<usize>)], keys: Option<&KeyStore>) -> Audit {
    let mut a = Auditor::new(AuditOptions::default(), keys);
    for (i, (f, cut)) in frames.iter().enumerate() {
        let (no, ts) = (i as u64 + 1, T0 + i as u64 * 100 * MS);
        match cut {
            None => a.feed(no, ts, f),
            Some(n) => a.cut_by_capture(no, ts, &f[..*n], *n as u32, f.len() as u32),
        }
    }
    a.finish()
}

/// The R-GOOSE counterpart of `a_goose_frame_cut_between_two_whole_ones_is_no_gap`: an
/// Ethernet/IPv4/UDP datagram cut inside its APDU (after stNum/sqNum) or inside its session
/// header (before the first payload element: no APPID, no reference) goes into the publisher's
/// stream, keyed by addresses, ports and APPID as a whole one; before, every cut datagram was
/// only tallied and each left a `goose-sq-gap`.
#[test]
fn an_rgoose_datagram_cut_between_two_whole_ones_is_no_gap() {
    // 14 Ethernet + 20 IPv4 + 8 UDP + 27 session header (version 2, no IV) + 4 PayloadLength.
    let before_element = 14 + 20 + 8 + 27 + 4 + 3;
    let frames = [
        (rg(0), None),
        (rg(1), Some(rg(1).len() - 5)),
        (rg(2), None),
        (rg(3), Some(before_element)),
        (rg(4), None),
    ];
    let a = audit_cut(&frames, None);
    assert_eq!(
        codes(&a),
        vec![
            ("capture-truncated".to_string(), vec![2, 4]),
            ("unsecured".to_string(), vec![1, 2, 3, 4, 5]),
        ],
        "{:#?}",
        a.findings
    );
    assert_eq!(a.streams.len(), 1, "{:#?}", a.streams);
    let s = &a.streams[0];
    assert_eq!((s.kind, s.frames, s.cut_by_capture), ("r-goose", 5, 2));
    assert_eq!((s.unsecured, s.appid), (5, Some(0x3001)));
    // Every frame cut: the stream is still there, its counters checked where captured.
    let cut: Vec<_> = [0, 1, 3]
        .iter()
        .map(|&sq| (rg(sq), Some(rg(sq).len() - 5)))
        .collect();
    let a = audit_cut(&cut, None);
    assert_eq!(a.streams.len(), 1, "{:#?}", a.streams);
    assert_eq!(a.streams[0].id.as_deref(), Some("GANDERIED/LLN0$GO$gcb01"));
    let gaps: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.code == "goose-sq-gap")
        .collect();
    assert_eq!(gaps.len(), 1, "{:#?}", a.findings);
    assert_eq!(gaps[0].frames, vec![3]);
}

/// A MAC-only secured R-GOOSE stream: a cut datagram's header says secured (Key ID); without
/// keys its cleartext element is read as a whole one's is (same stream, counters checked),
/// with keys its counters wait for a verification it cannot have. An encrypted stream's cut
/// datagram, whose payload cannot be told from ciphertext, joins the stream keyed without
/// APPID, as its whole datagrams are.
#[test]
fn a_cut_secured_rgoose_datagram_joins_its_stream() {
    let keys = KeyStore::from_toml(
        "[[key]]\nid = 1\nmac = \"hmac-sha256-128\"\nkey_ascii = \"0123456789ABCDEF\"\n\
         [[key]]\nid = 4\nenc = \"aes-256-gcm\"\n\
         key = \"1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100\"\n",
        Path::new("."),
        default_provider(),
    )
    .unwrap();
    for (id, encrypted) in [(1, false), (4, true)] {
        let p = |sq| {
            protect_frame(
                Profile::Standard,
                keys.get(id).unwrap(),
                &rg(sq),
                &mut RandomIv,
                T0 / 1_000_000_000,
            )
            .unwrap()
            .unwrap()
        };
        let frames = [(p(0), None), (p(1), Some(p(1).len() - 40)), (p(2), None)];
        for with_keys in [false, true] {
            let a = audit_cut(&frames, with_keys.then_some(&keys));
            let what = format!("key {id}, with keys {with_keys}: {:#?}", a.streams);
            assert_eq!(a.streams.len(), 1, "{what}");
            let s = &a.streams[0];
            assert_eq!((s.frames, s.secured, s.cut_by_capture), (3, 3, 1), "{what}");
            assert_eq!(s.appid.is_none(), encrypted, "{what}");
            assert!(
                !a.findings.iter().any(|f| f.code.starts_with("goose-")),
                "{what} {:#?}",
                a.findings
            );
        }
    }
}
