//! gander-capture's reassembler on arbitrary frames: the input is split into frames (a length
//! octet pair, then the frame; a capture-time step octet), with tight limits. No panic, the
//! limits hold after every frame, and everything is released at the end.
#![no_main]
use gander_capture::{Limits, Reassembler};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_datagrams: 3,
        max_bytes: 0,
        max_fragments: 6,
        timeout_ns: 50,
    };
    let mut r = Reassembler::new(limits);
    let (mut out, mut findings) = (Vec::new(), Vec::new());
    let (mut at, mut ts, mut n) = (0usize, 0u64, 0u64);
    while at + 3 <= data.len() {
        let len = u16::from_be_bytes([data[at], data[at + 1]]) as usize;
        ts += data[at + 2] as u64;
        at += 3;
        let end = (at + len).min(data.len());
        n += 1;
        r.push(n, ts, &data[at..end], &mut out, &mut findings);
        assert!(r.in_flight() <= 3);
        assert!(r.held_bytes() <= 70 << 10);
        at = end;
    }
    r.finish(&mut findings);
    assert_eq!((r.in_flight(), r.held_bytes()), (0, 0));
});
