//! ISO 9506-2 MMS PDU parsing and the IEC 61850 report and RCB decoders on top: no panic;
//! parse(emit(parse(x))) == parse(x); a PDU that does not parse gets a Reject that does, and
//! the identifiers of a GetNameList answer never outnumber what its octets can carry.
#![no_main]
use gander_mms::pdu::{reject_for, ConfirmedResponse, MmsPdu, Unconfirmed};
use gander_mms::service::bounds;
use gander_mms::rcb::UrcbValues;
use gander_mms::report::Report;
use gander_mms::Codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(p) = MmsPdu::parse(bytes) else {
        let r = MmsPdu::Reject(reject_for(bytes));
        assert_eq!(MmsPdu::parse(&r.to_vec()).expect("reject parses"), r);
        return;
    };
    if let MmsPdu::ConfirmedResponse {
        response: ConfirmedResponse::GetNameList(g),
        ..
    } = &p
    {
        assert!(
            g.identifiers.len() <= bounds::max_elements(bytes.len(), bounds::MIN_IDENTIFIER_OCTETS)
        );
    }
    {
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
