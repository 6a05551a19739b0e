//! ISO 9506-2 MMS PDU parsing and the IEC 61850 report and RCB decoders on top: no panic;
//! parse(emit(parse(x))) == parse(x).
#![no_main]
use gander_mms::pdu::{ConfirmedResponse, MmsPdu, Unconfirmed};
use gander_mms::rcb::UrcbValues;
use gander_mms::report::Report;
use gander_mms::Codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(p) = MmsPdu::parse(bytes) {
        assert_eq!(MmsPdu::parse(&p.to_vec()).expect("re-parse"), p);
        match &p {
            MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir)) => {
                if let Ok(r) = Report::from_information_report(ir) {
                    let _ = r.to_information_report();
                }
            }
            MmsPdu::ConfirmedResponse {
                response: ConfirmedResponse::Read(r),
                ..
            } => {
                for d in r.results.iter().filter_map(|a| a.data()) {
                    let _ = UrcbValues::from_data(d);
                }
            }
            _ => {}
        }
    }
});
