//! ISO 9506-2 DefineNamedVariableList and DeleteNamedVariableList contents (IEC 61850-8-1
//! dynamic data sets): no panic; round trips stable.
#![no_main]
use gander_mms::service::{
    DefineNamedVariableListRequest, DeleteNamedVariableListRequest,
    DeleteNamedVariableListResponse,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(r) = DefineNamedVariableListRequest::decode_contents(bytes) {
        let mut v = Vec::new();
        r.encode_contents(&mut v);
        assert_eq!(
            DefineNamedVariableListRequest::decode_contents(&v).expect("re-decode"),
            r
        );
    }
    if let Ok(r) = DeleteNamedVariableListRequest::decode_contents(bytes) {
        let mut v = Vec::new();
        r.encode_contents(&mut v);
        assert_eq!(
            DeleteNamedVariableListRequest::decode_contents(&v).expect("re-decode"),
            r
        );
    }
    if let Ok(r) = DeleteNamedVariableListResponse::decode_contents(bytes) {
        let mut v = Vec::new();
        r.encode_contents(&mut v);
        assert_eq!(
            DeleteNamedVariableListResponse::decode_contents(&v).expect("re-decode"),
            r
        );
    }
});
