//! ISO 8650-1 APDU parsing: no panic; parse(emit(parse(x))) == parse(x).
#![no_main]
use gander_mms::acse::Apdu;
use gander_mms::Codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(a) = Apdu::parse(bytes) {
        assert_eq!(Apdu::parse(&a.to_vec()).expect("re-parse"), a);
    }
});
