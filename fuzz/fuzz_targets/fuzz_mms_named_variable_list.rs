//! ISO 9506-2 GetNamedVariableListAttributes request and response contents: no panic;
//! round trips stable.
#![no_main]
use gander_mms::service::{
    GetNamedVariableListAttributesRequest, GetNamedVariableListAttributesResponse,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(r) = GetNamedVariableListAttributesRequest::decode_contents(bytes) {
        let mut v = Vec::new();
        r.encode_contents(&mut v);
        assert_eq!(
            GetNamedVariableListAttributesRequest::decode_contents(&v).expect("re-decode"),
            r
        );
    }
    if let Ok(r) = GetNamedVariableListAttributesResponse::decode_contents(bytes) {
        let mut v = Vec::new();
        r.encode_contents(&mut v);
        assert_eq!(
            GetNamedVariableListAttributesResponse::decode_contents(&v).expect("re-decode"),
            r
        );
    }
});
