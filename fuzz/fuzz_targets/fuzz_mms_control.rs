//! IEC 61850-8-1 clause 20 control codecs: every Data value of a Write request decoded as
//! Oper, SBOw and Cancel, every InformationReport as a CommandTermination. No panic; what
//! decodes re-encodes to the same value.
#![no_main]
use gander_mms::control::{CommandTermination, ControlParams, ControlService};
use gander_mms::pdu::{ConfirmedRequest, MmsPdu, Unconfirmed};
use gander_wire::data::Data;
use libfuzzer_sys::fuzz_target;

fn params(d: &Data) {
    for s in [
        ControlService::Operate,
        ControlService::SelectWithValue,
        ControlService::Cancel,
    ] {
        if let Ok(p) = ControlParams::from_data(s, d) {
            assert_eq!(ControlParams::from_data(s, &p.to_data()), Ok(p));
        }
    }
}

fuzz_target!(|bytes: &[u8]| {
    if let Ok(d) = Data::parse(bytes) {
        params(&d);
    }
    let Ok(p) = MmsPdu::parse(bytes) else {
        return;
    };
    match p {
        MmsPdu::ConfirmedRequest {
            request: ConfirmedRequest::Write(w),
            ..
        } => w.data.iter().for_each(params),
        MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir)) => {
            if let Ok(Some(t)) = CommandTermination::from_information_report(&ir) {
                assert_eq!(
                    CommandTermination::from_information_report(&t.to_information_report()),
                    Ok(Some(t))
                );
            }
        }
        _ => {}
    }
});
