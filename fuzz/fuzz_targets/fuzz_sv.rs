//! IEC 61850-9-2 savPdu: parse, emit, re-parse must give the same representation.
#![no_main]
use gander_wire::sv::SavPdu;
use gander_wire::Codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = SavPdu::parse(data) {
        let out = p.to_vec();
        assert_eq!(out.len(), p.buffer_len());
        assert_eq!(SavPdu::parse(&out).expect("re-parse savPdu"), p);
    }
});
