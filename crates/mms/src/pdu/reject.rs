//! Which RejectPDU answers an MMS PDU that does not parse.
//!
//! ISO 9506-2 7.5 (`RejectPDU`): a protocol error in a received PDU is answered with a
//! reject whose `rejectReason` alternative names the kind of PDU that was wrong and the
//! reason, and the association goes on. libiec61850's server does the same
//! (`mms_server_connection.c`: unknown PDU type → pdu-error unknown-pdu-type, unknown
//! service → confirmed-request unrecognized-service, undecodable → pdu-error invalid-pdu), so a
//! client that tries a service or an encoding gander does not know keeps its association.

use gander_wire::ber::{self, Reader};

use super::service_element;
use super::service_tag;
use crate::service::Reject;

/// rejectReason alternatives (ISO 9506-2 `RejectPDU`) and the codes this module uses.
pub mod reason {
    /// confirmed-requestPDU \[1\].
    pub const CONFIRMED_REQUEST: u8 = 1;
    /// confirmed-responsePDU \[2\].
    pub const CONFIRMED_RESPONSE: u8 = 2;
    /// confirmed-errorPDU \[3\].
    pub const CONFIRMED_ERROR: u8 = 3;
    /// unconfirmedPDU \[4\].
    pub const UNCONFIRMED: u8 = 4;
    /// pdu-error \[5\].
    pub const PDU_ERROR: u8 = 5;
    /// cancel-requestPDU \[6\].
    pub const CANCEL_REQUEST: u8 = 6;
    /// conclude-requestPDU \[9\].
    pub const CONCLUDE_REQUEST: u8 = 9;

    /// confirmed-requestPDU: other (0).
    pub const REQUEST_OTHER: i64 = 0;
    /// confirmed-requestPDU: unrecognized-service (1).
    pub const UNRECOGNIZED_SERVICE: i64 = 1;
    /// confirmed-requestPDU: unrecognized-modifier (2).
    pub const UNRECOGNIZED_MODIFIER: i64 = 2;
    /// confirmed-requestPDU: invalid-argument (4).
    pub const INVALID_ARGUMENT: i64 = 4;
    /// confirmed-responsePDU / confirmed-errorPDU: invalid-invokeID (2).
    pub const INVALID_INVOKE_ID: i64 = 2;
    /// unconfirmedPDU: invalid-argument (2).
    pub const UNCONFIRMED_INVALID_ARGUMENT: i64 = 2;
    /// pdu-error: unknown-pdu-type (0).
    pub const UNKNOWN_PDU_TYPE: i64 = 0;
    /// pdu-error: invalid-pdu (1).
    pub const INVALID_PDU: i64 = 1;
    /// cancel-requestPDU / conclude-requestPDU: invalid-invokeID (1) / invalid-argument (1).
    pub const CANCEL_OR_CONCLUDE_INVALID: i64 = 1;
}

/// The MMSpdu alternatives ISO 9506-2 defines (`[0]`..`[13]`, constructed or primitive as
/// their types are); any other outer tag is an unknown PDU type.
fn known_pdu_type(tag: u8) -> bool {
    matches!(
        tag,
        0xa0 | 0xa1
            | 0xa2
            | 0xa3
            | 0xa4
            | 0x85
            | 0x86
            | 0xa7
            | 0xa8
            | 0xa9
            | 0xaa
            | 0x8b
            | 0x8c
            | 0xad
    )
}

/// The service tags whose bodies gander decodes: a body that failed to parse is an invalid
/// argument, any other service is unrecognized.
fn decoded_service(tag: u8) -> bool {
    matches!(
        tag,
        service_tag::STATUS_REQUEST
            | service_tag::IDENTIFY_REQUEST
            | service_tag::GET_NAME_LIST
            | service_tag::READ
            | service_tag::WRITE
            | service_tag::GET_VARIABLE_ACCESS_ATTRIBUTES
            | service_tag::GET_NAMED_VARIABLE_LIST_ATTRIBUTES
    )
}

/// The reject a server sends for `bytes`, an MMS PDU that [`super::MmsPdu::parse`] refused.
///
/// - a confirmed-Request whose invokeID reads: confirmed-requestPDU with that invokeID,
///   unrecognized-modifier when it carries a listOfModifier, invalid-argument when the
///   service is one gander decodes, unrecognized-service otherwise;
/// - a conclude-Request with contents: conclude-requestPDU invalid-argument;
/// - an unconfirmed PDU: unconfirmedPDU invalid-argument;
/// - a cancel-Request: cancel-requestPDU invalid-invokeID;
/// - a confirmed-Response or -Error (a server never asked): invalid-invokeID;
/// - an outer tag that is no MMSpdu alternative: pdu-error unknown-pdu-type;
/// - anything else: pdu-error invalid-pdu (with the invokeID when it could be read).
pub fn reject_for(bytes: &[u8]) -> Reject {
    let pdu_error = |invoke_id, code| Reject {
        invoke_id,
        kind: reason::PDU_ERROR,
        code,
    };
    let Some(&outer) = bytes.first() else {
        return pdu_error(None, reason::INVALID_PDU);
    };
    if !known_pdu_type(outer) {
        return pdu_error(None, reason::UNKNOWN_PDU_TYPE);
    }
    let mut r = Reader::new(bytes);
    let Ok(t) = r.read_tlv("MMS PDU") else {
        return pdu_error(None, reason::INVALID_PDU);
    };
    let with = |kind, code| Reject {
        invoke_id: None,
        kind,
        code,
    };
    match outer {
        0xa0 => {
            let mut cr = t.reader();
            let Some(invoke_id) = cr
                .read_expected(0x02, "invokeID")
                .ok()
                .and_then(|id| ber::decode_u32(id.value, "invokeID").ok())
            else {
                return pdu_error(None, reason::INVALID_PDU);
            };
            let request = |code| Reject {
                invoke_id: Some(invoke_id),
                kind: reason::CONFIRMED_REQUEST,
                code,
            };
            if cr.peek_tag() == Some(0x30) {
                return request(reason::UNRECOGNIZED_MODIFIER);
            }
            match service_element::read(&mut cr, "confirmed service") {
                Ok(s) if decoded_service(s.tag) => request(reason::INVALID_ARGUMENT),
                Ok(_) => request(reason::UNRECOGNIZED_SERVICE),
                Err(_) => pdu_error(Some(invoke_id), reason::INVALID_PDU),
            }
        }
        0xa1 => with(reason::CONFIRMED_RESPONSE, reason::INVALID_INVOKE_ID),
        0xa2 => with(reason::CONFIRMED_ERROR, reason::INVALID_INVOKE_ID),
        0xa3 => with(reason::UNCONFIRMED, reason::UNCONFIRMED_INVALID_ARGUMENT),
        0x85 => with(reason::CANCEL_REQUEST, reason::CANCEL_OR_CONCLUDE_INVALID),
        0x8b => with(reason::CONCLUDE_REQUEST, reason::CANCEL_OR_CONCLUDE_INVALID),
        _ => pdu_error(None, reason::INVALID_PDU),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::MmsPdu;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    fn rj(invoke_id: Option<u32>, kind: u8, code: i64) -> Reject {
        Reject {
            invoke_id,
            kind,
            code,
        }
    }

    #[test]
    fn every_kind_of_unparsable_pdu() {
        use reason::*;
        for (bytes, want) in [
            ("", rj(None, PDU_ERROR, INVALID_PDU)),
            ("BF 20 00", rj(None, PDU_ERROR, UNKNOWN_PDU_TYPE)),
            ("AE 00", rj(None, PDU_ERROR, UNKNOWN_PDU_TYPE)),
            ("A0 05 02 01", rj(None, PDU_ERROR, INVALID_PDU)),
            ("A0 03 04 01 01", rj(None, PDU_ERROR, INVALID_PDU)),
            // A Read whose body is not a Read-Request.
            (
                "A0 06 02 01 07 A4 01 00",
                rj(Some(7), CONFIRMED_REQUEST, INVALID_ARGUMENT),
            ),
            // A listOfModifier before the service.
            (
                "A0 09 02 01 08 30 00 A4 02 A1 00",
                rj(Some(8), CONFIRMED_REQUEST, UNRECOGNIZED_MODIFIER),
            ),
            // fileDirectory [77] whose length runs past the PDU.
            (
                "A0 07 02 01 09 BF 4D 05 00",
                rj(Some(9), PDU_ERROR, INVALID_PDU),
            ),
            // A known service followed by junk that is no cs-request-detail.
            (
                "A0 07 02 01 0A 82 00 83 00",
                rj(Some(10), CONFIRMED_REQUEST, INVALID_ARGUMENT),
            ),
            (
                "8B 01 00",
                rj(None, CONCLUDE_REQUEST, CANCEL_OR_CONCLUDE_INVALID),
            ),
            (
                "85 00",
                rj(None, CANCEL_REQUEST, CANCEL_OR_CONCLUDE_INVALID),
            ),
            (
                "A3 02 A0 00",
                rj(None, UNCONFIRMED, UNCONFIRMED_INVALID_ARGUMENT),
            ),
            ("A1 00", rj(None, CONFIRMED_RESPONSE, INVALID_INVOKE_ID)),
            ("A2 00", rj(None, CONFIRMED_ERROR, INVALID_INVOKE_ID)),
            ("A8 03 80 01", rj(None, PDU_ERROR, INVALID_PDU)),
        ] {
            let b = h(bytes);
            assert!(MmsPdu::parse(&b).is_err(), "{bytes} parses");
            assert_eq!(reject_for(&b), want, "{bytes}");
        }
    }

    proptest! {
        /// Any bytes get a reject that encodes and parses back (no panic, a valid PDU).
        #[test]
        fn always_a_valid_reject(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let r = MmsPdu::Reject(reject_for(&bytes));
            let again = MmsPdu::parse(&gander_wire::Codec::to_vec(&r)).unwrap();
            prop_assert_eq!(again, r);
        }
    }
}
