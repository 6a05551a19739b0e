//! ISO 9506-2 GetVariableAccessAttributes-Response contents (TypeSpecification trees): no
//! panic, bounded depth and size; round trip stable; the data-attribute walk terminates.
#![no_main]
use gander_mms::service::GetVariableAccessAttributesResponse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(r) = GetVariableAccessAttributesResponse::decode_contents(bytes) {
        let mut v = Vec::new();
        r.encode_contents(&mut v);
        assert_eq!(
            GetVariableAccessAttributesResponse::decode_contents(&v).expect("re-decode"),
            r
        );
        for a in r.type_spec.data_attributes() {
            let _ = r.type_spec.at_path(&a.mms_suffix());
        }
    }
});
