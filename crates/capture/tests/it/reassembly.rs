//! Fragment reassembly: fixtures in and out of order, overlapping, inconsistent; property tests.

use crate::common;
use common::*;
use gander_capture::reassembly::{EvictionCause, Outcome};
use gander_capture::{Capture, FindingKind, Limits, Reassembler, Reassembly};
use proptest::prelude::*;

/// An R-GOOSE-sized UDP datagram: robidev/iec61850-dissector test/iec90-5-samples.pcap carries
/// SPDUs of 1562 octets as two IPv4 fragments each (1425 fragments judged malformed before).
fn spdu_datagram(len: usize) -> Vec<u8> {
    let payload: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
    udp(49152, 102, &payload)
}

fn whole_v4(id: u16, d: &[u8]) -> Vec<u8> {
    ethernet([0x01, 0, 0x5e, 0, 0, 1], 0x0800, &ipv4(id, false, 0, 17, d))
}

fn whole_v6(d: &[u8]) -> Vec<u8> {
    let f = ipv6_fragment(0, false, 0, d);
    // Remove the fragment header: Next Header 17, payload length - 8.
    let mut w = f[..14 + 40].to_vec();
    w[14 + 6] = 17;
    w[14 + 4..14 + 6].copy_from_slice(&(d.len() as u16).to_be_bytes());
    w.extend(d);
    w
}

struct Run {
    outcomes: Vec<Outcome>,
    out: Vec<Vec<u8>>,
    findings: Vec<gander_capture::Finding>,
}

fn run(r: &mut Reassembler, frames: &[(u64, Vec<u8>)]) -> Run {
    let mut res = Run {
        outcomes: Vec::new(),
        out: Vec::new(),
        findings: Vec::new(),
    };
    let mut buf = Vec::new();
    for (i, (ts, f)) in frames.iter().enumerate() {
        let o = r.push(i as u64 + 1, *ts, f, &mut buf, &mut res.findings);
        if matches!(o, Outcome::Complete { .. }) {
            res.out.push(buf.clone());
        }
        res.outcomes.push(o);
    }
    res
}

fn at0(frames: Vec<Vec<u8>>) -> Vec<(u64, Vec<u8>)> {
    frames.into_iter().map(|f| (0, f)).collect()
}

#[test]
fn ipv4_in_order_completes_at_the_last_fragment() {
    let d = spdu_datagram(1562);
    let frags = ipv4_fragments(7, &d, 1480);
    assert_eq!(frags.len(), 2);
    let r = run(&mut Reassembler::default(), &at0(frags));
    assert_eq!(r.outcomes[0], Outcome::Held);
    assert_eq!(
        r.outcomes[1],
        Outcome::Complete {
            first_frame: 1,
            fragments: 2
        }
    );
    assert_eq!(r.out, vec![whole_v4(7, &d)]);
    assert!(r.findings.is_empty());
}

#[test]
fn ipv4_out_of_order_and_interleaved() {
    let (a, b) = (spdu_datagram(4000), spdu_datagram(3000));
    let mut fa = ipv4_fragments(1, &a, 1000);
    let fb = ipv4_fragments(2, &b, 1000);
    fa.reverse();
    let mut frames = Vec::new();
    for i in 0..fa.len().max(fb.len()) {
        frames.extend(fa.get(i).cloned());
        frames.extend(fb.get(i).cloned());
    }
    let mut r = Reassembler::default();
    let res = run(&mut r, &at0(frames));
    assert_eq!(res.out.len(), 2);
    assert!(res.out.contains(&whole_v4(1, &a)));
    assert!(res.out.contains(&whole_v4(2, &b)));
    assert_eq!((r.in_flight(), r.held_bytes()), (0, 0));
}

#[test]
fn ipv6_fragments_in_and_out_of_order() {
    let d = spdu_datagram(3000);
    let mut frags = ipv6_fragments(0xdead, &d, 1232);
    let r = run(&mut Reassembler::default(), &at0(frags.clone()));
    assert_eq!(r.out, vec![whole_v6(&d)]);
    frags.swap(0, 2);
    let r = run(&mut Reassembler::default(), &at0(frags));
    assert_eq!(r.out, vec![whole_v6(&d)]);
}

#[test]
fn ipv6_atomic_fragment_is_a_packet_alone() {
    let d = spdu_datagram(40);
    let r = run(
        &mut Reassembler::default(),
        &at0(vec![ipv6_fragment(5, false, 0, &d)]),
    );
    assert_eq!(r.out, vec![whole_v6(&d)]);
}

#[test]
fn identical_ipv4_overlap_is_accepted_and_exact_duplicates_dropped() {
    let d = spdu_datagram(2000);
    let mut frames = ipv4_fragments(3, &d, 800);
    // A fragment covering 400..1200 with the same octets, and an exact duplicate.
    frames.insert(
        1,
        ethernet(
            [0x01, 0, 0x5e, 0, 0, 1],
            0x0800,
            &ipv4(3, true, 400, 17, &d[400..1200]),
        ),
    );
    frames.insert(1, frames[0].clone());
    let r = run(&mut Reassembler::default(), &at0(frames));
    assert_eq!(r.outcomes[1], Outcome::Dropped);
    assert_eq!(r.out, vec![whole_v4(3, &d)]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

#[test]
fn conflicting_ipv4_overlap_discards_the_datagram_once() {
    let d = spdu_datagram(2000);
    let mut frames = ipv4_fragments(4, &d, 800);
    let mut evil = d[400..1200].to_vec();
    evil[500] ^= 0xff;
    frames.insert(
        1,
        ethernet(
            [0x01, 0, 0x5e, 0, 0, 1],
            0x0800,
            &ipv4(4, true, 400, 17, &evil),
        ),
    );
    let r = run(&mut Reassembler::default(), &at0(frames));
    assert!(r.out.is_empty());
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert_eq!(
        r.findings[0].kind,
        FindingKind::OverlapConflict { offset: 900 }
    );
    // Frame 3 (800..1600) is the first to overlap the changed octet.
    assert_eq!((r.findings[0].frame, r.findings[0].first_frame), (3, 1));
    assert_eq!(r.outcomes[2..], [Outcome::Dropped, Outcome::Dropped]);
}

#[test]
fn any_ipv6_overlap_discards_the_datagram() {
    let d = spdu_datagram(2000);
    let mut frames = ipv6_fragments(9, &d, 800);
    frames.insert(1, ipv6_fragment(9, true, 400, &d[400..1200]));
    let r = run(&mut Reassembler::default(), &at0(frames));
    assert!(r.out.is_empty());
    assert_eq!(r.findings[0].kind, FindingKind::Ipv6Overlap { offset: 400 });
}

#[test]
fn fragments_that_disagree_about_the_length() {
    let d = spdu_datagram(2000);
    let f = ipv4_fragments(5, &d, 800);
    // After the real last fragment, a second last fragment that ends earlier.
    let bogus = ethernet(
        [0x01, 0, 0x5e, 0, 0, 1],
        0x0800,
        &ipv4(5, false, 800, 17, &d[800..1000]),
    );
    let frames = vec![f[0].clone(), f[2].clone(), bogus, f[1].clone()];
    let r = run(&mut Reassembler::default(), &at0(frames));
    assert!(r.out.is_empty());
    assert_eq!(
        r.findings[0].kind,
        FindingKind::LengthMismatch {
            declared: 2008,
            seen: 1000
        }
    );
}

#[test]
fn unaligned_too_large_and_too_many() {
    let e = |id, more, off, d: &[u8]| {
        ethernet(
            [0x01, 0, 0x5e, 0, 0, 1],
            0x0800,
            &ipv4(id, more, off, 17, d),
        )
    };
    let r = run(
        &mut Reassembler::default(),
        &at0(vec![e(1, true, 0, &[0; 13])]),
    );
    assert_eq!(
        r.findings[0].kind,
        FindingKind::UnalignedFragment { len: 13 }
    );
    let r = run(
        &mut Reassembler::default(),
        &at0(vec![e(2, false, 65512, &[0; 64])]),
    );
    assert!(matches!(r.findings[0].kind, FindingKind::TooLarge { .. }));
    let mut small = Reassembler::new(Limits {
        max_fragments: 4,
        ..Limits::default()
    });
    let d = spdu_datagram(100);
    let r = run(&mut small, &at0(ipv4_fragments(3, &d, 16)));
    assert_eq!(
        r.findings[0].kind,
        FindingKind::TooManyFragments { limit: 4 }
    );
    assert!(r.out.is_empty());
}

#[test]
fn incomplete_datagrams_time_out_in_capture_time_and_at_the_end() {
    let d = spdu_datagram(2000);
    let frags = ipv4_fragments(6, &d, 800);
    let other = whole_v4(99, &spdu_datagram(10));
    let mut r = Reassembler::default();
    let res = run(
        &mut r,
        &[
            (0, frags[0].clone()),
            (29_000_000_000, other.clone()),
            (30_000_000_001, other.clone()),
            (30_000_000_002, frags[1].clone()),
        ],
    );
    assert_eq!(res.findings.len(), 1);
    assert_eq!(res.findings[0].frame, 3);
    assert_eq!(
        res.findings[0].kind,
        FindingKind::Incomplete {
            fragments: 1,
            bytes: 800
        }
    );
    let mut end = Vec::new();
    r.finish(&mut end);
    assert_eq!(
        end.len(),
        1,
        "the late fragment started a datagram of its own"
    );
    assert_eq!(r.in_flight(), 0);
}

#[test]
fn the_oldest_datagram_is_evicted_at_the_limits() {
    let mut r = Reassembler::new(Limits {
        max_datagrams: 2,
        ..Limits::default()
    });
    let d = spdu_datagram(2000);
    let firsts: Vec<_> = (0..3u16)
        .map(|id| (id as u64, ipv4_fragments(id, &d, 800)[0].clone()))
        .collect();
    let res = run(&mut r, &firsts);
    assert_eq!(res.findings.len(), 1);
    assert_eq!(res.findings[0].first_frame, 1);
    assert_eq!(
        res.findings[0].kind,
        FindingKind::Evicted {
            cause: EvictionCause::Datagrams
        }
    );
    assert_eq!(r.in_flight(), 2);
}

#[test]
fn capture_presents_the_reassembled_frame_at_the_last_fragment() {
    let d = spdu_datagram(1562);
    let frags = ipv4_fragments(8, &d, 1480);
    let mut packets = vec![(0, ethernet(GOOSE_DST, 0x88b8, &goose_body()))];
    packets.extend(frags.into_iter().map(|f| (1000, f)));
    let file = pcap(1, false, &packets);
    let mut c = Capture::new(&file[..]);
    let f1 = c.next_frame().unwrap().unwrap();
    assert_eq!((f1.number, f1.reassembly), (1, Reassembly::None));
    let f2 = c.next_frame().unwrap().unwrap();
    assert_eq!(f2.reassembly, Reassembly::Held);
    let f3 = c.next_frame().unwrap().unwrap();
    assert_eq!(f3.number, 3);
    assert_eq!(
        f3.reassembly,
        Reassembly::Complete {
            first_frame: 2,
            fragments: 2
        }
    );
    assert_eq!(f3.data, &whole_v4(8, &d)[..]);
    assert!(c.next_frame().unwrap().is_none());
    assert!(c.finish().is_empty());
}

fn frames_strategy(v6: bool) -> impl Strategy<Value = (Vec<u8>, Vec<Vec<u8>>)> {
    (1usize..6000, 1usize..200, any::<u32>(), any::<u64>()).prop_map(
        move |(len, units, id, seed)| {
            let d = spdu_datagram(len);
            let mut frags = if v6 {
                ipv6_fragments(id, &d, units * 8)
            } else {
                ipv4_fragments(id as u16, &d, units * 8)
            };
            // Deterministic shuffle and one duplicate from the seed.
            let mut s = seed;
            for i in (1..frags.len()).rev() {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                frags.swap(i, (s >> 33) as usize % (i + 1));
            }
            if frags.len() > 2 {
                let dup = frags[(s as usize) % (frags.len() - 1)].clone();
                frags.insert(0, dup);
            }
            (d, frags)
        },
    )
}

proptest! {
    /// Fragmenting, shuffling and duplicating, then reassembling, gives the datagram back.
    #[test]
    fn reassembly_inverts_fragmentation_v4((d, frags) in frames_strategy(false)) {
        let mut r = Reassembler::new(Limits { max_fragments: 1024, ..Limits::default() });
        let res = run(&mut r, &at0(frags.clone()));
        if frags.len() == 1 {
            // One fragment holding everything is no fragment (offset 0, MF clear).
            prop_assert!(res.out.is_empty());
            return Ok(());
        }
        prop_assert_eq!(res.out.len(), 1);
        let want = whole_v4(0, &d);
        let got = res.out[0].clone();
        // The identification field is the only difference from `whole_v4(0, ..)`.
        prop_assert_eq!(got.len(), want.len());
        prop_assert_eq!(&got[14 + 20..], &want[14 + 20..]);
        prop_assert!(res.findings.is_empty());
        prop_assert_eq!(r.held_bytes(), 0);
    }

    #[test]
    fn reassembly_inverts_fragmentation_v6((d, frags) in frames_strategy(true)) {
        let mut r = Reassembler::new(Limits { max_fragments: 1024, ..Limits::default() });
        let res = run(&mut r, &at0(frags));
        prop_assert_eq!(res.out, vec![whole_v6(&d)]);
        prop_assert!(res.findings.is_empty());
    }

    /// Arbitrary fragments (any offsets, flags, contents, ids from a small set so they
    /// collide) never panic and never hold more than the limits allow.
    #[test]
    fn arbitrary_fragments_stay_within_the_limits(
        frags in proptest::collection::vec((0u16..4, any::<bool>(), 0usize..8200, proptest::collection::vec(any::<u8>(), 0..1600), any::<bool>(), 0u64..40), 0..60)
    ) {
        let limits = Limits { max_datagrams: 3, max_bytes: 0, max_fragments: 8, timeout_ns: 10 };
        let mut r = Reassembler::new(limits);
        let mut out = Vec::new();
        let mut findings = Vec::new();
        for (i, (id, more, off, data, v6, ts)) in frags.into_iter().enumerate() {
            let f = if v6 {
                ipv6_fragment(id as u32, more, off & !7, &data)
            } else {
                ethernet([1, 0, 0x5e, 0, 0, 1], 0x0800, &ipv4(id, more, off & !7, 17, &data))
            };
            r.push(i as u64 + 1, ts, &f, &mut out, &mut findings);
            prop_assert!(r.in_flight() <= 3);
            prop_assert!(r.held_bytes() <= 70 << 10);
        }
        r.finish(&mut findings);
        prop_assert_eq!((r.in_flight(), r.held_bytes()), (0, 0));
    }
}
