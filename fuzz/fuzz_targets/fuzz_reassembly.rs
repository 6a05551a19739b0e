//! gander-capture's reassembler on arbitrary frames: the input is split into frames (a length
//! octet pair, then the frame; a capture-time step octet), with tight limits. No panic, the
//! limits hold after every frame, and everything is released at the end. Each frame is also
//! read by `fragment_of` (what `frame protect` plans with) and split by
//! `gander_wire::ip_fragment::fragment` at a size from the input: every part within it, and a
//! whole datagram split in several parts reassembles to itself.
#![no_main]
use gander_capture::reassembly::{fragment_of, Outcome};
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
        let frame = &data[at..end];
        r.push(n, ts, frame, &mut out, &mut findings);
        let _ = fragment_of(frame);
        let mtu = 68 + usize::from(data[at - 1]) * 8;
        if let Ok(parts) = gander_wire::ip_fragment::fragment(frame, mtu, 7) {
            let mut again = Reassembler::new(Limits::default());
            let (mut whole, mut f) = (Vec::new(), Vec::new());
            let mut last = Outcome::NotFragment;
            for (i, p) in parts.iter().enumerate() {
                if parts.len() > 1 {
                    let ip = gander_wire::ethernet::Frame::new_checked(&p[..])
                        .expect("a fragment is a frame")
                        .payload_offset();
                    assert!(p.len() - ip <= mtu, "{} > {mtu}", p.len() - ip);
                }
                last = again.push(i as u64, 0, p, &mut whole, &mut f);
            }
            if parts.len() > 1 {
                assert!(matches!(last, Outcome::Complete { .. }), "{last:?} {f:?}");
            }
        }
        assert!(r.in_flight() <= 3);
        assert!(r.held_bytes() <= 70 << 10);
        at = end;
    }
    r.finish(&mut findings);
    assert_eq!((r.in_flight(), r.held_bytes()), (0, 0));
});
