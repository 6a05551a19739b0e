//! ISO 8327-1 SPDU parsing: no panic; parse(emit(parse(x))) == parse(x).
#![no_main]
use gander_mms::iso_session::Spdu;
use gander_mms::Codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(s) = Spdu::parse(bytes) {
        let again = s.to_vec();
        assert_eq!(Spdu::parse(&again).expect("re-parse"), s);
    }
});
