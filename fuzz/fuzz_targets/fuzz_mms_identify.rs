//! ISO 9506-2 Identify-Response contents: no panic; decode(encode(decode(x))) == decode(x).
#![no_main]
use gander_mms::service::IdentifyResponse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(r) = IdentifyResponse::decode_contents(bytes) {
        let mut v = Vec::new();
        r.encode_contents(&mut v);
        assert_eq!(IdentifyResponse::decode_contents(&v).expect("re-decode"), r);
    }
});
