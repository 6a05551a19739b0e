//! The member's reading of a key server's notification (`gander_gdoi::notify::read`) on
//! arbitrary bytes, with the datagram's own initiator cookie so the cookie check passes and the
//! parser is reached: it may not panic, never calls a clear notification authenticated, and a
//! notification it builds reads back with its type.
#![no_main]
use gander_gdoi::notify;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut cky = [0u8; 8];
    if let Some(c) = data.get(..8) {
        cky.copy_from_slice(c);
    }
    if let Some(n) = notify::read(data, cky, None) {
        assert!(!n.authenticated);
    }
    let t = data.get(8..10).map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
    let m = notify::unprotected(cky, [0; 8], t);
    assert_eq!(notify::read(&m, cky, None).map(|n| n.notify), Some(t));
});
