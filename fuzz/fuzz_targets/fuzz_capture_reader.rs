//! gander-capture's reader and reassembler on arbitrary bytes taken as a capture file: no
//! panic, frame numbers count up from 1, every frame presented as Ethernet parses as far as
//! its Ethernet header, and a reassembled frame is a single unfragmented IP packet. A frame the
//! capture cut is never reassembled, and what its captured headers show is classified
//! (`gander_sec::view::classify_cut`) without panicking. A frame taken out of a GRE/ERSPAN
//! tunnel (`gander_capture::tunnel`) holds at least an Ethernet header.
#![no_main]
use gander_capture::{Capture, Limits, Reassembly};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_datagrams: 4,
        max_bytes: 0,
        max_fragments: 8,
        timeout_ns: 1_000,
    };
    let mut c = Capture::with_limits(data, limits);
    let mut expect = 1;
    while let Ok(Some(f)) = c.next_frame() {
        assert_eq!(f.number, expect);
        expect += 1;
        if f.tunnel.is_some() {
            assert!(f.ethernet && f.data.len() >= 14);
        }
        if f.cut_by_capture() {
            assert_eq!(f.reassembly, Reassembly::None);
            if f.ethernet {
                let _ = gander_sec::view::classify_cut(f.data);
            }
        }
        if let Reassembly::Complete { .. } = f.reassembly {
            assert!(f.ethernet);
            let mut r = gander_capture::Reassembler::default();
            let mut out = Vec::new();
            let mut findings = Vec::new();
            // The reassembled frame is no fragment any more.
            assert_eq!(
                r.push(1, 0, f.data, &mut out, &mut findings),
                gander_capture::reassembly::Outcome::NotFragment
            );
        }
    }
    let _ = c.finish();
});
