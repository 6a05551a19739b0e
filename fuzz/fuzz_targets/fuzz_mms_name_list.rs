//! ISO 9506-2 GetNameList request and response contents, and the continuation query fed
//! with every decoded answer: no panic, no endless query; round trips are stable.
#![no_main]
use gander_mms::service::{GetNameListRequest, GetNameListResponse, NameListQuery};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(r) = GetNameListRequest::decode_contents(bytes) {
        let mut v = Vec::new();
        r.encode_contents(&mut v);
        assert_eq!(GetNameListRequest::decode_contents(&v).expect("re-decode"), r);
    }
    // Split the input into pages at 0xff bytes, each a response body.
    let mut q = NameListQuery::new(GetNameListRequest::domains());
    for page in bytes.split(|&b| b == 0xff) {
        let Ok(r) = GetNameListResponse::decode_contents(page) else {
            continue;
        };
        let mut v = Vec::new();
        r.encode_contents(&mut v);
        assert_eq!(GetNameListResponse::decode_contents(&v).expect("re-decode"), r);
        if q.next_request().is_none() {
            break;
        }
        if q.on_response(r).is_err() {
            break;
        }
    }
});
