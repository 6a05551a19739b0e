//! IEC 61850-8-1 decoders above MMS PDUs: LastApplError reports, report segments, and the
//! RCB planner fed any read value as a URCB and as a BRCB. No panic; a plan's restore is the
//! reverse of its reversible enable steps.
#![no_main]
use gander_mms::last_appl_error::LastApplError;
use gander_mms::pdu::{ConfirmedResponse, MmsPdu, Unconfirmed};
use gander_mms::rcb_plan::{RcbPlan, RcbRef, RcbSnapshot, ReportSettings};
use gander_mms::report::{Report, SegmentAssembler};
use gander_mms::service::AccessResult;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(p) = MmsPdu::parse(bytes) else {
        return;
    };
    match p {
        MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir)) => {
            if let Ok(Some(e)) = LastApplError::from_information_report(&ir) {
                assert_eq!(
                    LastApplError::from_information_report(&e.to_information_report()),
                    Ok(Some(e))
                );
            }
            if let Ok(r) = Report::from_information_report(&ir) {
                let _ = r.entries();
                let mut a = SegmentAssembler::new();
                let _ = a.push(r.clone());
                let _ = a.push(r);
            }
        }
        MmsPdu::ConfirmedResponse {
            response: ConfirmedResponse::Read(r),
            ..
        } => {
            for d in r.results.iter().filter_map(AccessResult::data) {
                for item in ["LLN0$RP$urcb01", "LLN0$BR$brcb01"] {
                    let rcb = RcbRef::parse("LD", item).expect("valid item");
                    if let Ok(s) = RcbSnapshot::from_value(rcb, d) {
                        if let Ok(plan) = RcbPlan::new(&s, &ReportSettings::default()) {
                            assert_eq!(plan.restore().len(), plan.rollback(usize::MAX).len());
                        }
                    }
                }
            }
        }
        _ => {}
    }
});
