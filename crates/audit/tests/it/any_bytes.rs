//! The audit on arbitrary frames (what the `fuzz_audit` target runs, here as a property test):
//! no input panics, and the renderings of whatever was found still fit their schema.

use gander_audit::{AuditOptions, Auditor};
use proptest::prelude::*;

/// An Ethernet header towards the parsers the audit reaches: GOOSE, SV, IPv4 (UDP 102 and TCP
/// 102/3782 among others) or IPv6.
fn frame() -> impl Strategy<Value = Vec<u8>> {
    let ethertype = prop_oneof![
        Just([0x88u8, 0xb8]),
        Just([0x88, 0xba]),
        Just([0x08, 0x00]),
        Just([0x86, 0xdd]),
        any::<[u8; 2]>()
    ];
    (ethertype, proptest::collection::vec(any::<u8>(), 0..300)).prop_map(|(et, body)| {
        let mut f = vec![0x01, 0x0c, 0xcd, 1, 0, 1, 0, 0x30, 0xa7, 0, 0, 1];
        f.extend(et);
        f.extend(body);
        f
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn any_frames_are_audited_without_panic(frames in proptest::collection::vec(frame(), 1..40)) {
        let mut a = Auditor::new(AuditOptions::default(), None);
        for (i, f) in frames.iter().enumerate() {
            a.feed(i as u64 + 1, 1_000_000 * i as u64, f);
        }
        let audit = a.finish();
        for (log, lines) in gander_audit::zeek::logs(&audit) {
            for l in lines {
                prop_assert!(gander_audit::zeek::check_line(log, &l).is_ok(), "{}: {}", log, l);
            }
        }
        let _ = gander_audit::html::render(&audit, "proptest");
    }
}
