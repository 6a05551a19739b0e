//! TPKT stream reassembly and COTP TPDU parsing: no panic; whatever parses re-emits and
//! parses to the same TPDU.
#![no_main]
use gander_mms::{cotp::Tpdu, tpkt};
use gander_mms::Codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let mut r = tpkt::Reassembler::new(8192 + 4);
    for chunk in bytes.chunks(7) {
        r.push(chunk);
        while let Some(Ok(p)) = r.next_packet() {
            if let Ok(t) = Tpdu::parse(&p) {
                let again = t.to_vec();
                assert_eq!(Tpdu::parse(&again).expect("re-parse"), t);
            }
        }
    }
    if let Ok(t) = Tpdu::parse(bytes) {
        let _ = t.to_vec();
    }
});
