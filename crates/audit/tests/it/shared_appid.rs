//! One APPID, one control block (IEC 61850-8-1 Annex C, IEC 61850-9-2 §5.3.3): two blocks of
//! one source under one APPID are `appid-shared`; one block seen on two paths (untagged and on
//! a VLAN, as a capture on both sides of a tagging switch port shows it) is not.
//!
//! kelecho/IEC-61850-Studio's fixtures/pcap/goose.pcap (and sv.pcap) holds one publisher's
//! frame untagged and the same control block on VLAN 100: it read "APPID 0x0001 of
//! \"IED1LD0/LLN0.GO$gcb01\" also carries \"IED1LD0/LLN0.GO$gcb01\"", a block sharing its APPID
//! with itself.

use gander_audit::{Audit, AuditOptions, Auditor};
use gander_testkit::frames::goose_frame;
use gander_wire::ethernet::VlanTag;

const SRC: [u8; 6] = [0x00, 0x30, 0xa7, 0, 0, 0x0a];
const DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];

/// `frame` with its control block renamed gcb01 -> gcb02 (same length).
fn second_block(mut frame: Vec<u8>) -> Vec<u8> {
    let at = frame
        .windows(5)
        .position(|w| w == b"gcb01")
        .expect("the testkit's gocbRef");
    frame[at + 4] = b'2';
    frame
}

fn audit(frames: &[Vec<u8>]) -> Audit {
    let mut a = Auditor::new(AuditOptions::default(), None);
    for (i, f) in frames.iter().enumerate() {
        a.feed(
            i as u64 + 1,
            1_700_000_000_000_000_000 + i as u64 * 1_000_000,
            f,
        );
    }
    a.finish()
}

fn codes(a: &Audit, code: &str) -> Vec<Vec<u64>> {
    a.findings
        .iter()
        .filter(|f| f.code == code)
        .map(|f| f.frames.clone())
        .collect()
}

#[test]
fn two_blocks_under_one_appid_are_shared_one_block_on_two_paths_is_not() {
    let vlan = Some(VlanTag {
        pcp: 4,
        dei: false,
        vid: 100,
    });
    let untagged = goose_frame(SRC, DST, None, 0x0001, 1, 0);
    let tagged = goose_frame(SRC, DST, vlan, 0x0001, 1, 1);
    let a = audit(&[untagged.clone(), tagged.clone()]);
    assert_eq!(a.streams.len(), 2);
    assert!(codes(&a, "appid-shared").is_empty(), "{:#?}", a.findings);
    assert_eq!(codes(&a, "block-on-several-paths"), vec![vec![2]]);
    let d = &a
        .findings
        .iter()
        .find(|f| f.code == "block-on-several-paths")
        .unwrap()
        .detail;
    assert!(d.contains("untagged") && d.contains("VLAN 100"), "{d}");
    // A second block under the APPID is still shared, whatever the first block's paths.
    let a = audit(&[
        untagged,
        tagged,
        second_block(goose_frame(SRC, DST, None, 0x0001, 1, 0)),
    ]);
    assert_eq!(
        codes(&a, "appid-shared"),
        vec![vec![3]],
        "{:#?}",
        a.findings
    );
    assert_eq!(codes(&a, "block-on-several-paths"), vec![vec![2]]);
}

/// Streams beyond `MAX_STREAMS` are one `streams-overflow` finding, not more streams (a flood
/// of spoofed source MACs grew memory without bound).
#[test]
fn streams_beyond_the_cap_are_counted_not_followed() {
    let mut a = Auditor::new(AuditOptions::default(), None);
    let extra = 3;
    let n = gander_audit::MAX_STREAMS + extra;
    let base = goose_frame(SRC, DST, None, 0x0001, 1, 0);
    for i in 0..n {
        let mut f = base.clone();
        f[6..12].copy_from_slice(&[
            2,
            0,
            (i >> 24) as u8,
            (i >> 16) as u8,
            (i >> 8) as u8,
            i as u8,
        ]);
        a.feed(
            i as u64 + 1,
            1_700_000_000_000_000_000 + i as u64 * 1000,
            &f,
        );
    }
    let audit = a.finish();
    assert_eq!(audit.streams.len(), gander_audit::MAX_STREAMS);
    let f = audit
        .findings
        .iter()
        .find(|f| f.code == "streams-overflow")
        .expect("streams-overflow");
    assert_eq!(f.count, extra as u64);
    assert_eq!(f.frames[0], gander_audit::MAX_STREAMS as u64 + 1);
}
