//! ServiceError (ISO 9506-2 7.4, used by confirmed-Error, initiate-Error and conclude-Error)
//! and RejectPDU (ISO 9506-2 7.5).

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};

use super::{ber as berr, L};
use crate::asn1;
use crate::error::{Error, Result};

/// ServiceError: `errorClass [0] CHOICE { class [n] IMPLICIT INTEGER }`, optional
/// `additionalCode [1]`; additionalDescription and serviceSpecificInfo are not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceError {
    /// The errorClass alternative: 0 vmd-state, 1 application-reference, 2 definition,
    /// 3 resource, 4 service, 5 service-preempt, 6 time-resolution, 7 access, 8 initiate,
    /// 9 conclude, 10 cancel, 11 file, 12 others.
    pub class: u8,
    /// The code within the class.
    pub code: i64,
    /// additionalCode.
    pub additional_code: Option<i64>,
}

impl ServiceError {
    /// errorClass `access` (7).
    pub const CLASS_ACCESS: u8 = 7;
    /// errorClass `definition` (2).
    pub const CLASS_DEFINITION: u8 = 2;
    /// errorClass `service` (4).
    pub const CLASS_SERVICE: u8 = 4;
    /// errorClass `initiate` (8).
    pub const CLASS_INITIATE: u8 = 8;
    /// errorClass `conclude` (9).
    pub const CLASS_CONCLUDE: u8 = 9;
    /// errorClass `cancel` (10): 0 other, 1 invoke-id-unknown, 2 cancel-not-possible.
    pub const CLASS_CANCEL: u8 = 10;
    /// errorClass `resource` (3): 0 other, 1 memory-unavailable, ...
    pub const CLASS_RESOURCE: u8 = 3;

    /// A service error without additional code.
    pub fn new(class: u8, code: i64) -> Self {
        ServiceError {
            class,
            code,
            additional_code: None,
        }
    }

    /// Decode the contents of a ServiceError SEQUENCE.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let ec = r.read_expected(0xa0, "errorClass").map_err(berr)?;
        let mut er = ec.reader();
        let c = er.read_tlv("errorClass").map_err(berr)?;
        if c.tag & 0xe0 != 0x80 || c.tag & 0x1f > 12 {
            return Err(Error::UnknownCode {
                layer: L,
                what: "errorClass",
                code: c.tag,
            });
        }
        let mut e = ServiceError::new(
            c.tag & 0x1f,
            ber::decode_i64(c.value, "error code").map_err(berr)?,
        );
        while !r.is_empty() {
            let t = r.read_tlv("ServiceError").map_err(berr)?;
            if t.tag == 0x81 {
                e.additional_code = Some(ber::decode_i64(t.value, "additionalCode").map_err(berr)?);
            }
        }
        Ok(e)
    }

    /// Append the contents (no outer tag).
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        asn1::nested(out, 0xa0, |o| {
            asn1::int(o, 0x80 | (self.class & 0x1f), self.code)
        });
        if let Some(a) = self.additional_code {
            asn1::int(out, 0x81, a);
        }
    }
}

/// RejectPDU: `originalInvokeID [0] OPTIONAL`, then `rejectReason` whose alternative tag
/// (\[1\] confirmed-requestPDU ... \[5\] pdu-error ...) says which kind of PDU was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reject {
    /// The invoke ID of the rejected PDU, if known.
    pub invoke_id: Option<u32>,
    /// The rejectReason alternative number (1 confirmed-requestPDU, 2 confirmed-responsePDU,
    /// 3 confirmed-errorPDU, 4 unconfirmedPDU, 5 pdu-error, 6..10 cancel/conclude).
    pub kind: u8,
    /// The reason code within that alternative.
    pub code: i64,
}

impl Reject {
    /// rejectReason confirmed-requestPDU.
    pub const CONFIRMED_REQUEST: u8 = 1;
    /// rejectReason pdu-error.
    pub const PDU_ERROR: u8 = 5;
    /// confirmed-requestPDU: unrecognized-service (what libiec61850 answers to services it lacks).
    pub const UNRECOGNIZED_SERVICE: i64 = 1;
    /// confirmed-requestPDU: invalid-argument.
    pub const INVALID_ARGUMENT: i64 = 4;
    /// confirmed-requestPDU: max-serv-outstanding-exceeded.
    pub const MAX_SERV_OUTSTANDING_EXCEEDED: i64 = 6;
    /// pdu-error: unknown-pdu-type (0) / invalid-pdu (1).
    pub const INVALID_PDU: i64 = 1;

    /// Decode the contents of a RejectPDU.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let invoke_id = match r.read_optional(0x80, "originalInvokeID").map_err(berr)? {
            Some(t) => Some(ber::decode_u32(t.value, "originalInvokeID").map_err(berr)?),
            None => None,
        };
        let t = r.read_tlv("rejectReason").map_err(berr)?;
        r.expect_end("RejectPDU").map_err(berr)?;
        let kind = t.tag & 0x1f;
        if t.tag & 0xe0 != 0x80 || !(1..=10).contains(&kind) {
            return Err(Error::UnknownCode {
                layer: L,
                what: "rejectReason",
                code: t.tag,
            });
        }
        Ok(Reject {
            invoke_id,
            kind,
            code: ber::decode_i64(t.value, "reject code").map_err(berr)?,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        if let Some(i) = self.invoke_id {
            asn1::uint(out, 0x80, i as u64);
        }
        asn1::int(out, 0x80 | (self.kind & 0x1f), self.code);
    }
}
