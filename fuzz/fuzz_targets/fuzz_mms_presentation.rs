//! ISO 8823-1 PPDU parsing (CP, CPA, CPR, abort, P-DATA): no panic; round trips hold.
#![no_main]
use gander_mms::presentation::{self, AbortPpdu, AcceptPpdu, ConnectPpdu, RefusePpdu};
use gander_mms::Codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(p) = ConnectPpdu::parse(bytes) {
        assert_eq!(ConnectPpdu::parse(&p.to_vec()).expect("re-parse CP"), p);
    }
    if let Ok(p) = AcceptPpdu::parse(bytes) {
        assert_eq!(AcceptPpdu::parse(&p.to_vec()).expect("re-parse CPA"), p);
    }
    if let Ok(p) = RefusePpdu::parse(bytes) {
        let _ = p.to_vec();
    }
    if let Ok(p) = AbortPpdu::parse(bytes) {
        let _ = p.to_vec();
    }
    if let Ok(pdvs) = presentation::parse_user_data(bytes) {
        let mut out = Vec::new();
        presentation::emit_user_data(&pdvs, &mut out);
        assert_eq!(presentation::parse_user_data(&out).expect("re-parse"), pdvs);
    }
});
