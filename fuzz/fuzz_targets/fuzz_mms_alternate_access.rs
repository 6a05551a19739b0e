//! ISO 9506-2 AlternateAccess contents: no panic, bounded nesting; round trip stable; the
//! component-path view agrees with the encoding.
#![no_main]
use gander_mms::service::AlternateAccess;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(a) = AlternateAccess::decode_contents(bytes) {
        assert_eq!(AlternateAccess::decode_contents(&a.contents()).expect("re-decode"), a);
        if let Some(p) = a.as_component_path() {
            assert_eq!(AlternateAccess::component_path(&p).expect("path"), a);
        }
    }
});
