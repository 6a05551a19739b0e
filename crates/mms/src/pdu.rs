//! The MMS PDU (ISO 9506-2 7.1, `MMSpdu ::= CHOICE`), with the services IEC 61850-8-1 needs
//! for association, reporting and control-block access.
//!
//! | tag | PDU                 | tag | PDU               |
//! |-----|---------------------|-----|-------------------|
//! | A0  | confirmed-Request   | A8  | initiate-Request  |
//! | A1  | confirmed-Response  | A9  | initiate-Response |
//! | A2  | confirmed-Error     | AA  | initiate-Error    |
//! | A3  | unconfirmed         | 8B  | conclude-Request  |
//! | A4  | reject              | 8C  | conclude-Response |
//! | 85  | cancel-Request      | AD  | conclude-Error    |
//! | 86  | cancel-Response     | A7  | cancel-Error      |
//!
//! Confirmed services other than Identify, GetNameList, Read, Write,
//! GetVariableAccessAttributes, GetNamedVariableListAttributes, DefineNamedVariableList and
//! DeleteNamedVariableList decode to `Other` with their
//! tag (of any length: the file services \[72\]..\[77\] need two identifier octets,
//! [`ServiceTag`]) and raw body, so a server can answer them with a Reject
//! (unrecognized-service, as libiec61850 does) while keeping the invoke ID; a PDU that does
//! not parse gets the Reject [`reject_for`] chooses.

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};
use gander_wire::Codec;

use crate::asn1;
use crate::error::{Error, Layer, Result};
use crate::service::{
    DefineNamedVariableListRequest, DeleteNamedVariableListRequest,
    DeleteNamedVariableListResponse, GetNameListRequest, GetNameListResponse,
    GetNamedVariableListAttributesRequest, GetNamedVariableListAttributesResponse,
    GetVariableAccessAttributesRequest, GetVariableAccessAttributesResponse, IdentifyResponse,
    InformationReport, Initiate, ReadRequest, ReadResponse, Reject, ServiceError, StatusResponse,
    WriteRequest, WriteResponse,
};

const L: Layer = Layer::Mms;

mod reject;
mod service_element;
pub use reject::{reason as reject_reason, reject_for};
pub use service_element::{ServiceTag, CONFIRMED_SERVICES, CS_REQUEST_DETAIL};

fn berr(e: gander_wire::Error) -> Error {
    Error::Ber {
        layer: L,
        source: e,
    }
}

/// Confirmed service tags (ISO 9506-2 `ConfirmedServiceRequest`).
pub mod service_tag {
    /// status \[0\] in a request (`Status-Request ::= BOOLEAN`, primitive).
    pub const STATUS_REQUEST: u8 = 0x80;
    /// status \[0\] in a response (a SEQUENCE, constructed).
    pub const STATUS_RESPONSE: u8 = 0xa0;
    /// identify \[2\] in a request (`Identify-Request ::= NULL`, primitive).
    pub const IDENTIFY_REQUEST: u8 = 0x82;
    /// identify \[2\] in a response (a SEQUENCE, constructed).
    pub const IDENTIFY_RESPONSE: u8 = 0xa2;
    /// getNameList \[1\].
    pub const GET_NAME_LIST: u8 = 0xa1;
    /// read \[4\].
    pub const READ: u8 = 0xa4;
    /// write \[5\].
    pub const WRITE: u8 = 0xa5;
    /// getVariableAccessAttributes \[6\].
    pub const GET_VARIABLE_ACCESS_ATTRIBUTES: u8 = 0xa6;
    /// getNamedVariableListAttributes \[12\].
    pub const GET_NAMED_VARIABLE_LIST_ATTRIBUTES: u8 = 0xac;
    /// defineNamedVariableList \[11\] in a request (a SEQUENCE, constructed).
    pub const DEFINE_NAMED_VARIABLE_LIST_REQUEST: u8 = 0xab;
    /// defineNamedVariableList \[11\] in a response (`NULL`, primitive).
    pub const DEFINE_NAMED_VARIABLE_LIST_RESPONSE: u8 = 0x8b;
    /// deleteNamedVariableList \[13\].
    pub const DELETE_NAMED_VARIABLE_LIST: u8 = 0xad;
    /// informationReport \[0\] (unconfirmed).
    pub const INFORMATION_REPORT: u8 = 0xa0;
}

/// A confirmed service request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmedRequest {
    /// Status (ISO 9506-2 10.2, `80 01 xx`).
    Status {
        /// extendedDerivation: the server should derive the status anew, not report it.
        extended_derivation: bool,
    },
    /// Identify (`82 00`).
    Identify,
    /// GetNameList.
    GetNameList(GetNameListRequest),
    /// GetVariableAccessAttributes.
    GetVariableAccessAttributes(GetVariableAccessAttributesRequest),
    /// GetNamedVariableListAttributes.
    GetNamedVariableListAttributes(GetNamedVariableListAttributesRequest),
    /// Read.
    Read(ReadRequest),
    /// Write.
    Write(WriteRequest),
    /// DefineNamedVariableList (ISO 9506-2 14.12).
    DefineNamedVariableList(DefineNamedVariableListRequest),
    /// DeleteNamedVariableList (ISO 9506-2 14.14).
    DeleteNamedVariableList(DeleteNamedVariableListRequest),
    /// Any other service, kept raw.
    Other {
        /// Context tag of the service element.
        tag: ServiceTag,
        /// Its contents octets, undecoded.
        body: Vec<u8>,
    },
}

/// A confirmed service response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmedResponse {
    /// Status.
    Status(StatusResponse),
    /// Identify.
    Identify(IdentifyResponse),
    /// GetNameList.
    GetNameList(GetNameListResponse),
    /// GetVariableAccessAttributes.
    GetVariableAccessAttributes(GetVariableAccessAttributesResponse),
    /// GetNamedVariableListAttributes.
    GetNamedVariableListAttributes(GetNamedVariableListAttributesResponse),
    /// Read.
    Read(ReadResponse),
    /// Write.
    Write(WriteResponse),
    /// DefineNamedVariableList (`NULL`).
    DefineNamedVariableList,
    /// DeleteNamedVariableList.
    DeleteNamedVariableList(DeleteNamedVariableListResponse),
    /// Any other service, kept raw.
    Other {
        /// Context tag of the service element.
        tag: ServiceTag,
        /// Its contents octets, undecoded.
        body: Vec<u8>,
    },
}

/// An unconfirmed service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unconfirmed {
    /// InformationReport.
    InformationReport(InformationReport),
    /// Any other service, kept raw.
    Other {
        /// Context tag of the service element.
        tag: ServiceTag,
        /// Its contents octets, undecoded.
        body: Vec<u8>,
    },
}

/// One MMS PDU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MmsPdu {
    /// confirmed-RequestPDU: `{ invokeID Unsigned32, service }`.
    ConfirmedRequest {
        /// invokeID: matches the response to the request.
        invoke_id: u32,
        /// The service request.
        request: ConfirmedRequest,
    },
    /// confirmed-ResponsePDU.
    ConfirmedResponse {
        /// invokeID of the request answered.
        invoke_id: u32,
        /// The service response.
        response: ConfirmedResponse,
    },
    /// confirmed-ErrorPDU: `{ invokeID [0], modifierPosition [1] OPT, serviceError [2] }`.
    ConfirmedError {
        /// invokeID `[0]` of the request answered.
        invoke_id: u32,
        /// serviceError `[2]`.
        error: ServiceError,
    },
    /// unconfirmed-PDU.
    Unconfirmed(Unconfirmed),
    /// rejectPDU.
    Reject(Reject),
    /// initiate-RequestPDU.
    InitiateRequest(Initiate),
    /// initiate-ResponsePDU.
    InitiateResponse(Initiate),
    /// initiate-ErrorPDU.
    InitiateError(ServiceError),
    /// conclude-RequestPDU (`8B 00`).
    ConcludeRequest,
    /// conclude-ResponsePDU (`8C 00`).
    ConcludeResponse,
    /// conclude-ErrorPDU.
    ConcludeError(ServiceError),
    /// cancel-RequestPDU (`85 <originalInvokeID>`): cancel an outstanding request.
    CancelRequest(u32),
    /// cancel-ResponsePDU (`86 <originalInvokeID>`).
    CancelResponse(u32),
    /// cancel-ErrorPDU: `{ originalInvokeID [0], serviceError [1] }`.
    CancelError {
        /// originalInvokeID of the request the cancel named.
        invoke_id: u32,
        /// Why it could not be cancelled (class cancel: 1 invoke-id-unknown, 2
        /// cancel-not-possible).
        error: ServiceError,
    },
}

/// Largest raw body kept for services this crate does not decode.
const MAX_OTHER_BODY: usize = 64 * 1024;

fn other(e: &service_element::Element<'_>) -> Result<(ServiceTag, Vec<u8>)> {
    if e.value.len() > MAX_OTHER_BODY {
        return Err(Error::TooLarge {
            layer: L,
            what: "service body",
            size: e.value.len(),
            max: MAX_OTHER_BODY,
        });
    }
    Ok((e.service, e.value.to_vec()))
}

/// The end of a confirmed or unconfirmed PDU after its service: nothing, or the
/// `cs-request-detail [79]` of a companion standard (IEC 61850 defines none), which is
/// skipped.
fn expect_end_or_detail(r: &mut Reader<'_>, what: &'static str) -> Result<()> {
    if !r.is_empty() {
        let d = service_element::read(r, what)?;
        if d.service.number != CS_REQUEST_DETAIL {
            return Err(Error::malformed(
                L,
                what,
                "trailing element after the service",
            ));
        }
    }
    r.expect_end(what).map_err(berr)
}

impl MmsPdu {
    /// Parse exactly one PDU.
    pub fn parse(bytes: &[u8]) -> Result<MmsPdu> {
        let mut outer = Reader::new(bytes);
        let t = outer.read_tlv("MMS PDU").map_err(berr)?;
        outer.expect_end("MMS PDU").map_err(berr)?;
        let v = t.value;
        Ok(match t.tag {
            0xa0 | 0xa1 => {
                let mut r = t.reader();
                let id = r.read_expected(0x02, "invokeID").map_err(berr)?;
                let invoke_id = ber::decode_u32(id.value, "invokeID").map_err(berr)?;
                if t.tag == 0xa0 && r.peek_tag() == Some(0x30) {
                    // listOfModifier (ISO 9506-2 7.1): attach to an event or semaphore,
                    // which gander does not support; `reject_for` answers
                    // unrecognized-modifier.
                    return Err(Error::malformed(
                        L,
                        "confirmed-Request",
                        "listOfModifier is not supported",
                    ));
                }
                let s = service_element::read(&mut r, "confirmed service")?;
                expect_end_or_detail(&mut r, "confirmed PDU")?;
                if t.tag == 0xa0 {
                    let request = match s.tag {
                        service_tag::STATUS_REQUEST => ConfirmedRequest::Status {
                            extended_derivation: ber::decode_bool(s.value, "Status-Request")
                                .map_err(berr)?,
                        },
                        service_tag::IDENTIFY_REQUEST => {
                            if !s.value.is_empty() {
                                return Err(Error::malformed(
                                    L,
                                    "Identify-Request",
                                    "NULL with contents",
                                ));
                            }
                            ConfirmedRequest::Identify
                        }
                        service_tag::GET_NAME_LIST => ConfirmedRequest::GetNameList(
                            GetNameListRequest::decode_contents(s.value)?,
                        ),
                        service_tag::GET_VARIABLE_ACCESS_ATTRIBUTES => {
                            ConfirmedRequest::GetVariableAccessAttributes(
                                GetVariableAccessAttributesRequest::decode_contents(s.value)?,
                            )
                        }
                        service_tag::GET_NAMED_VARIABLE_LIST_ATTRIBUTES => {
                            ConfirmedRequest::GetNamedVariableListAttributes(
                                GetNamedVariableListAttributesRequest::decode_contents(s.value)?,
                            )
                        }
                        service_tag::READ => {
                            ConfirmedRequest::Read(ReadRequest::decode_contents(s.value)?)
                        }
                        service_tag::WRITE => {
                            ConfirmedRequest::Write(WriteRequest::decode_contents(s.value)?)
                        }
                        service_tag::DEFINE_NAMED_VARIABLE_LIST_REQUEST => {
                            ConfirmedRequest::DefineNamedVariableList(
                                DefineNamedVariableListRequest::decode_contents(s.value)?,
                            )
                        }
                        service_tag::DELETE_NAMED_VARIABLE_LIST => {
                            ConfirmedRequest::DeleteNamedVariableList(
                                DeleteNamedVariableListRequest::decode_contents(s.value)?,
                            )
                        }
                        _ => {
                            let (tag, body) = other(&s)?;
                            ConfirmedRequest::Other { tag, body }
                        }
                    };
                    MmsPdu::ConfirmedRequest { invoke_id, request }
                } else {
                    let response = match s.tag {
                        service_tag::STATUS_RESPONSE => {
                            ConfirmedResponse::Status(StatusResponse::decode_contents(s.value)?)
                        }
                        service_tag::IDENTIFY_RESPONSE => {
                            ConfirmedResponse::Identify(IdentifyResponse::decode_contents(s.value)?)
                        }
                        service_tag::GET_NAME_LIST => ConfirmedResponse::GetNameList(
                            GetNameListResponse::decode_contents(s.value)?,
                        ),
                        service_tag::GET_VARIABLE_ACCESS_ATTRIBUTES => {
                            ConfirmedResponse::GetVariableAccessAttributes(
                                GetVariableAccessAttributesResponse::decode_contents(s.value)?,
                            )
                        }
                        service_tag::GET_NAMED_VARIABLE_LIST_ATTRIBUTES => {
                            ConfirmedResponse::GetNamedVariableListAttributes(
                                GetNamedVariableListAttributesResponse::decode_contents(s.value)?,
                            )
                        }
                        service_tag::READ => {
                            ConfirmedResponse::Read(ReadResponse::decode_contents(s.value)?)
                        }
                        service_tag::WRITE => {
                            ConfirmedResponse::Write(WriteResponse::decode_contents(s.value)?)
                        }
                        service_tag::DEFINE_NAMED_VARIABLE_LIST_RESPONSE => {
                            if !s.value.is_empty() {
                                return Err(Error::malformed(
                                    L,
                                    "DefineNamedVariableList-Response",
                                    "NULL with contents",
                                ));
                            }
                            ConfirmedResponse::DefineNamedVariableList
                        }
                        service_tag::DELETE_NAMED_VARIABLE_LIST => {
                            ConfirmedResponse::DeleteNamedVariableList(
                                DeleteNamedVariableListResponse::decode_contents(s.value)?,
                            )
                        }
                        _ => {
                            let (tag, body) = other(&s)?;
                            ConfirmedResponse::Other { tag, body }
                        }
                    };
                    MmsPdu::ConfirmedResponse {
                        invoke_id,
                        response,
                    }
                }
            }
            0xa2 => {
                let mut r = t.reader();
                let id = r.read_expected(0x80, "invokeID").map_err(berr)?;
                let invoke_id = ber::decode_u32(id.value, "invokeID").map_err(berr)?;
                let _ = r.read_optional(0x81, "modifierPosition").map_err(berr)?;
                let e = r.read_expected(0xa2, "serviceError").map_err(berr)?;
                r.expect_end("confirmed-ErrorPDU").map_err(berr)?;
                MmsPdu::ConfirmedError {
                    invoke_id,
                    error: ServiceError::decode_contents(e.value)?,
                }
            }
            0xa3 => {
                let mut r = t.reader();
                let s = service_element::read(&mut r, "unconfirmed service")?;
                expect_end_or_detail(&mut r, "unconfirmed-PDU")?;
                MmsPdu::Unconfirmed(match s.tag {
                    service_tag::INFORMATION_REPORT => {
                        Unconfirmed::InformationReport(InformationReport::decode_contents(s.value)?)
                    }
                    _ => {
                        let (tag, body) = other(&s)?;
                        Unconfirmed::Other { tag, body }
                    }
                })
            }
            0xa4 => MmsPdu::Reject(Reject::decode_contents(v)?),
            0xa8 => MmsPdu::InitiateRequest(Initiate::decode_contents(v)?),
            0xa9 => MmsPdu::InitiateResponse(Initiate::decode_contents(v)?),
            0xaa => MmsPdu::InitiateError(ServiceError::decode_contents(v)?),
            0x8b | 0x8c => {
                // ConcludeRequestPDU ::= NULL (X.690 8.8: no contents octets).
                if !v.is_empty() {
                    return Err(Error::malformed(L, "conclude PDU", "NULL with contents"));
                }
                if t.tag == 0x8b {
                    MmsPdu::ConcludeRequest
                } else {
                    MmsPdu::ConcludeResponse
                }
            }
            0xad => MmsPdu::ConcludeError(ServiceError::decode_contents(v)?),
            0x85 => MmsPdu::CancelRequest(ber::decode_u32(v, "originalInvokeID").map_err(berr)?),
            0x86 => MmsPdu::CancelResponse(ber::decode_u32(v, "originalInvokeID").map_err(berr)?),
            0xa7 => {
                let mut r = t.reader();
                let id = r.read_expected(0x80, "originalInvokeID").map_err(berr)?;
                let e = r.read_expected(0xa1, "serviceError").map_err(berr)?;
                r.expect_end("cancel-ErrorPDU").map_err(berr)?;
                MmsPdu::CancelError {
                    invoke_id: ber::decode_u32(id.value, "originalInvokeID").map_err(berr)?,
                    error: ServiceError::decode_contents(e.value)?,
                }
            }
            tag => {
                return Err(Error::UnknownCode {
                    layer: L,
                    what: "MMS PDU",
                    code: tag,
                })
            }
        })
    }
}

impl Codec for MmsPdu {
    sink_codec!();
}

impl MmsPdu {
    /// Write the encoding to `out`.
    fn encode(&self, out: &mut dyn Sink) {
        match self {
            MmsPdu::ConfirmedRequest { invoke_id, request } => asn1::nested(out, 0xa0, |o| {
                asn1::uint(o, 0x02, *invoke_id as u64);
                match request {
                    ConfirmedRequest::Status {
                        extended_derivation,
                    } => asn1::tlv(
                        o,
                        service_tag::STATUS_REQUEST,
                        &[ber::encode_bool(*extended_derivation)],
                    ),
                    ConfirmedRequest::Identify => asn1::tlv(o, service_tag::IDENTIFY_REQUEST, &[]),
                    ConfirmedRequest::GetNameList(r) => {
                        asn1::nested(o, service_tag::GET_NAME_LIST, |o| r.encode_contents(o))
                    }
                    ConfirmedRequest::GetVariableAccessAttributes(r) => {
                        asn1::nested(o, service_tag::GET_VARIABLE_ACCESS_ATTRIBUTES, |o| {
                            r.encode_contents(o)
                        })
                    }
                    ConfirmedRequest::GetNamedVariableListAttributes(r) => {
                        asn1::nested(o, service_tag::GET_NAMED_VARIABLE_LIST_ATTRIBUTES, |o| {
                            r.encode_contents(o)
                        })
                    }
                    ConfirmedRequest::Read(r) => {
                        asn1::nested(o, service_tag::READ, |o| r.encode_contents(o))
                    }
                    ConfirmedRequest::Write(w) => {
                        asn1::nested(o, service_tag::WRITE, |o| w.encode_contents(o))
                    }
                    ConfirmedRequest::DefineNamedVariableList(r) => {
                        asn1::nested(o, service_tag::DEFINE_NAMED_VARIABLE_LIST_REQUEST, |o| {
                            r.encode_contents(o)
                        })
                    }
                    ConfirmedRequest::DeleteNamedVariableList(r) => {
                        asn1::nested(o, service_tag::DELETE_NAMED_VARIABLE_LIST, |o| {
                            r.encode_contents(o)
                        })
                    }
                    ConfirmedRequest::Other { tag, body } => service_element::write(o, *tag, body),
                }
            }),
            MmsPdu::ConfirmedResponse {
                invoke_id,
                response,
            } => asn1::nested(out, 0xa1, |o| {
                asn1::uint(o, 0x02, *invoke_id as u64);
                match response {
                    ConfirmedResponse::Status(r) => {
                        asn1::nested(o, service_tag::STATUS_RESPONSE, |o| r.encode_contents(o))
                    }
                    ConfirmedResponse::Identify(r) => {
                        asn1::nested(o, service_tag::IDENTIFY_RESPONSE, |o| r.encode_contents(o))
                    }
                    ConfirmedResponse::GetNameList(r) => {
                        asn1::nested(o, service_tag::GET_NAME_LIST, |o| r.encode_contents(o))
                    }
                    ConfirmedResponse::GetVariableAccessAttributes(r) => {
                        asn1::nested(o, service_tag::GET_VARIABLE_ACCESS_ATTRIBUTES, |o| {
                            r.encode_contents(o)
                        })
                    }
                    ConfirmedResponse::GetNamedVariableListAttributes(r) => {
                        asn1::nested(o, service_tag::GET_NAMED_VARIABLE_LIST_ATTRIBUTES, |o| {
                            r.encode_contents(o)
                        })
                    }
                    ConfirmedResponse::Read(r) => {
                        asn1::nested(o, service_tag::READ, |o| r.encode_contents(o))
                    }
                    ConfirmedResponse::Write(w) => {
                        asn1::nested(o, service_tag::WRITE, |o| w.encode_contents(o))
                    }
                    ConfirmedResponse::DefineNamedVariableList => {
                        asn1::tlv(o, service_tag::DEFINE_NAMED_VARIABLE_LIST_RESPONSE, &[])
                    }
                    ConfirmedResponse::DeleteNamedVariableList(r) => {
                        asn1::nested(o, service_tag::DELETE_NAMED_VARIABLE_LIST, |o| {
                            r.encode_contents(o)
                        })
                    }
                    ConfirmedResponse::Other { tag, body } => service_element::write(o, *tag, body),
                }
            }),
            MmsPdu::ConfirmedError { invoke_id, error } => asn1::nested(out, 0xa2, |o| {
                asn1::uint(o, 0x80, *invoke_id as u64);
                asn1::nested(o, 0xa2, |o| error.encode_contents(o));
            }),
            MmsPdu::Unconfirmed(u) => asn1::nested(out, 0xa3, |o| match u {
                Unconfirmed::InformationReport(r) => {
                    asn1::nested(o, service_tag::INFORMATION_REPORT, |o| r.encode_contents(o))
                }
                Unconfirmed::Other { tag, body } => service_element::write(o, *tag, body),
            }),
            MmsPdu::Reject(r) => asn1::nested(out, 0xa4, |o| r.encode_contents(o)),
            MmsPdu::InitiateRequest(i) => asn1::nested(out, 0xa8, |o| i.encode_contents(o)),
            MmsPdu::InitiateResponse(i) => asn1::nested(out, 0xa9, |o| i.encode_contents(o)),
            MmsPdu::InitiateError(e) => asn1::nested(out, 0xaa, |o| e.encode_contents(o)),
            MmsPdu::ConcludeRequest => out.bytes(&[0x8b, 0]),
            MmsPdu::ConcludeResponse => out.bytes(&[0x8c, 0]),
            MmsPdu::ConcludeError(e) => asn1::nested(out, 0xad, |o| e.encode_contents(o)),
            MmsPdu::CancelRequest(id) => asn1::uint(out, 0x85, *id as u64),
            MmsPdu::CancelResponse(id) => asn1::uint(out, 0x86, *id as u64),
            MmsPdu::CancelError { invoke_id, error } => asn1::nested(out, 0xa7, |o| {
                asn1::uint(o, 0x80, *invoke_id as u64);
                asn1::nested(o, 0xa1, |o| error.encode_contents(o));
            }),
        }
    }
}

impl MmsPdu {
    /// A short name for logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            MmsPdu::ConfirmedRequest { .. } => "confirmed-Request",
            MmsPdu::ConfirmedResponse { .. } => "confirmed-Response",
            MmsPdu::ConfirmedError { .. } => "confirmed-Error",
            MmsPdu::Unconfirmed(_) => "unconfirmed",
            MmsPdu::Reject(_) => "reject",
            MmsPdu::InitiateRequest(_) => "initiate-Request",
            MmsPdu::InitiateResponse(_) => "initiate-Response",
            MmsPdu::InitiateError(_) => "initiate-Error",
            MmsPdu::ConcludeRequest => "conclude-Request",
            MmsPdu::ConcludeResponse => "conclude-Response",
            MmsPdu::ConcludeError(_) => "conclude-Error",
            MmsPdu::CancelRequest(_) => "cancel-Request",
            MmsPdu::CancelResponse(_) => "cancel-Response",
            MmsPdu::CancelError { .. } => "cancel-Error",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::variable::tests::{arb_name, arb_spec, arb_var};
    use crate::service::{AccessResult, DataAccessError, ObjectName, VariableAccessSpecification};
    use gander_wire::data::Data;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    #[test]
    fn golden_initiate_request() {
        // `docs/mms-bytes.md` §1 [V].
        let bytes = h("A8 26 80 03 00FDE8 81 01 05 82 01 05 83 01 0A \
                       A4 16 80 01 01 81 03 05F100 82 0C 03EE1C00000408000079EF18");
        let pdu = MmsPdu::InitiateRequest(Initiate::libiec61850_request());
        assert_eq!(pdu.to_vec(), bytes);
        assert_eq!(MmsPdu::parse(&bytes).unwrap(), pdu);
    }

    #[test]
    fn initiate_response_negotiation() {
        let mut limits = Initiate::libiec61850_request();
        limits.services_supported = crate::service::initiate::libiec61850_server_services();
        let mut req = Initiate::libiec61850_request();
        req.max_serv_outstanding_calling = 20;
        req.parameter_cbb = crate::bit_string::BitString::from_contents(&[5, 0xff, 0xe0]).unwrap();
        let resp = Initiate::respond(&req, &limits);
        assert_eq!(resp.max_serv_outstanding_calling, 5);
        assert_eq!(resp.parameter_cbb.contents(), vec![5, 0xf1, 0]);
        let bytes = MmsPdu::InitiateResponse(resp.clone()).to_vec();
        assert_eq!(
            bytes,
            h("A9 26 80 03 00FDE8 81 01 05 82 01 05 83 01 0A \
               A4 16 80 01 01 81 03 05F100 82 0C 03EE1C00000002000040ED18")
        );
        // Missing fields get defaults.
        assert_eq!(
            MmsPdu::parse(&h("A9 00")).unwrap(),
            MmsPdu::InitiateResponse(Initiate::decode_contents(&[]).unwrap())
        );
    }

    #[test]
    fn golden_read() {
        // `docs/mms-bytes.md` §2 [V].
        let req = h("A0 2D 02 01 01 A4 28 A1 26 A0 24 30 22 A0 20 A1 1E \
                     1A 07 544553544C4430 1A 13 4747494F3124535424496E643124737456616C");
        let pdu = MmsPdu::ConfirmedRequest {
            invoke_id: 1,
            request: ConfirmedRequest::Read(ReadRequest {
                specification_with_result: false,
                spec: VariableAccessSpecification::names([ObjectName::domain(
                    "TESTLD0",
                    "GGIO1$ST$Ind1$stVal",
                )]),
            }),
        };
        assert_eq!(MmsPdu::parse(&req).unwrap(), pdu);
        assert_eq!(pdu.to_vec(), req);
        let resp = h("A1 0A 02 01 01 A4 05 A1 03 83 01 00");
        let pdu = MmsPdu::ConfirmedResponse {
            invoke_id: 1,
            response: ConfirmedResponse::Read(ReadResponse {
                spec: None,
                results: vec![AccessResult::Success(Data::Boolean(false))],
            }),
        };
        assert_eq!(MmsPdu::parse(&resp).unwrap(), pdu);
        assert_eq!(pdu.to_vec(), resp);
        // Failure: 80 01 <DataAccessError>.
        let fail = h("A1 0A 02 01 02 A4 05 A1 03 80 01 0A");
        let MmsPdu::ConfirmedResponse {
            response: ConfirmedResponse::Read(r),
            ..
        } = MmsPdu::parse(&fail).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            r.results,
            vec![AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT)]
        );
    }

    #[test]
    fn golden_write_reply_conclude_reject() {
        assert_eq!(
            MmsPdu::parse(&h("A1 0D 02 01 07 A5 08 81 00 81 00 81 00 81 00")).unwrap(),
            MmsPdu::ConfirmedResponse {
                invoke_id: 7,
                response: ConfirmedResponse::Write(WriteResponse(vec![Ok(()); 4]))
            }
        );
        assert_eq!(MmsPdu::parse(&h("8B00")).unwrap(), MmsPdu::ConcludeRequest);
        assert_eq!(MmsPdu::ConcludeResponse.to_vec(), h("8C00"));
        let rj = MmsPdu::Reject(Reject {
            invoke_id: Some(9),
            kind: Reject::CONFIRMED_REQUEST,
            code: Reject::UNRECOGNIZED_SERVICE,
        });
        assert_eq!(rj.to_vec(), h("A4 06 80 01 09 81 01 01"));
        assert_eq!(MmsPdu::parse(&rj.to_vec()).unwrap(), rj);
        let ce = MmsPdu::ConfirmedError {
            invoke_id: 3,
            error: ServiceError::new(ServiceError::CLASS_ACCESS, 2),
        };
        assert_eq!(ce.to_vec(), h("A2 0A 80 01 03 A2 05 A0 03 87 01 02"));
        assert_eq!(MmsPdu::parse(&ce.to_vec()).unwrap(), ce);
        // Unknown services survive (getDomainAttributes [37], `Identifier`, primitive, in
        // the high-tag-number form).
        let other = h("A0 09 02 01 05 9F 25 03 4C 44 30");
        let p = MmsPdu::parse(&other).unwrap();
        assert!(matches!(
            p,
            MmsPdu::ConfirmedRequest {
                invoke_id: 5,
                request: ConfirmedRequest::Other {
                    tag: ServiceTag {
                        number: 37,
                        constructed: false
                    },
                    ..
                }
            }
        ));
        assert_eq!(p.to_vec(), other);
    }

    #[test]
    fn errors() {
        for (b, why) in [
            ("", "empty"),
            ("8B 01 00", "conclude with contents"),
            ("BF 00", "high tag"),
            ("A5 00", "unknown PDU"),
            ("A0 03 02 01 01", "no service"),
            ("A0 06 02 01 01 A4 01 00", "bad read"),
            ("A0 05 02 00 A4 00 00", "empty invoke id"),
            ("A1 0A 02 01 01 A4 05 A1 03 92 01 00", "bad data tag"),
            ("A1 07 02 01 01 A5 02 82 00", "bad write result"),
            ("A4 03 80 01 01", "reject without reason"),
            ("A3 02 A0 00", "report without spec"),
            ("8B 00 00", "trailing"),
        ] {
            assert!(MmsPdu::parse(&h(b)).is_err(), "{why}");
        }
    }

    fn arb_result() -> impl Strategy<Value = AccessResult> {
        prop_oneof![
            any::<i64>().prop_map(|v| AccessResult::Success(Data::Integer(v))),
            any::<bool>().prop_map(|v| AccessResult::Success(Data::Boolean(v))),
            "[ -~]{0,20}".prop_map(|s| AccessResult::Success(Data::VisibleString(s))),
            any::<u8>().prop_map(|e| AccessResult::Failure(DataAccessError(e))),
        ]
    }

    fn arb_pdu() -> impl Strategy<Value = MmsPdu> {
        let id = any::<u32>();
        prop_oneof![
            (id, any::<bool>(), arb_spec()).prop_map(|(invoke_id, swr, spec)| {
                MmsPdu::ConfirmedRequest {
                    invoke_id,
                    request: ConfirmedRequest::Read(ReadRequest {
                        specification_with_result: swr,
                        spec,
                    }),
                }
            }),
            (
                id,
                proptest::option::of(arb_spec()),
                proptest::collection::vec(arb_result(), 0..5)
            )
                .prop_map(|(invoke_id, spec, results)| MmsPdu::ConfirmedResponse {
                    invoke_id,
                    response: ConfirmedResponse::Read(ReadResponse { spec, results }),
                }),
            (
                id,
                proptest::collection::vec(arb_name(), 0..4),
                any::<i64>()
            )
                .prop_map(|(invoke_id, names, v)| MmsPdu::ConfirmedRequest {
                    invoke_id,
                    request: ConfirmedRequest::Write(WriteRequest {
                        data: vec![Data::Integer(v); names.len()],
                        spec: VariableAccessSpecification::names(names),
                    }),
                }),
            (
                id,
                proptest::collection::vec(proptest::option::of(any::<u8>()), 0..6)
            )
                .prop_map(|(invoke_id, rs)| MmsPdu::ConfirmedResponse {
                    invoke_id,
                    response: ConfirmedResponse::Write(WriteResponse(
                        rs.into_iter()
                            .map(|r| r.map_or(Ok(()), |e| Err(DataAccessError(e))))
                            .collect()
                    )),
                }),
            proptest::collection::vec(arb_result(), 0..6).prop_map(|r| MmsPdu::Unconfirmed(
                Unconfirmed::InformationReport(InformationReport::rpt(r))
            )),
            (
                id,
                0u8..13,
                any::<i64>(),
                proptest::option::of(any::<i64>())
            )
                .prop_map(|(invoke_id, class, code, additional_code)| {
                    MmsPdu::ConfirmedError {
                        invoke_id,
                        error: ServiceError {
                            class,
                            code,
                            additional_code,
                        },
                    }
                }),
            (proptest::option::of(id), 1u8..=10, any::<i64>()).prop_map(
                |(invoke_id, kind, code)| MmsPdu::Reject(Reject {
                    invoke_id,
                    kind,
                    code
                })
            ),
            id.prop_map(|invoke_id| MmsPdu::ConfirmedRequest {
                invoke_id,
                request: ConfirmedRequest::Identify,
            }),
            (id, "[A-Z0-9]{1,8}").prop_map(|(invoke_id, d)| MmsPdu::ConfirmedRequest {
                invoke_id,
                request: ConfirmedRequest::GetNameList(GetNameListRequest::variables(d)),
            }),
            (id, arb_name()).prop_map(|(invoke_id, n)| MmsPdu::ConfirmedRequest {
                invoke_id,
                request: ConfirmedRequest::GetVariableAccessAttributes(
                    GetVariableAccessAttributesRequest(n)
                ),
            }),
            (id, arb_name()).prop_map(|(invoke_id, n)| MmsPdu::ConfirmedRequest {
                invoke_id,
                request: ConfirmedRequest::GetNamedVariableListAttributes(
                    GetNamedVariableListAttributesRequest(n)
                ),
            }),
            (id, crate::service::type_description::tests::arb_type()).prop_map(
                |(invoke_id, type_spec)| MmsPdu::ConfirmedResponse {
                    invoke_id,
                    response: ConfirmedResponse::GetVariableAccessAttributes(
                        GetVariableAccessAttributesResponse {
                            deletable: false,
                            type_spec
                        }
                    ),
                }
            ),
            Just(MmsPdu::ConcludeRequest),
            Just(MmsPdu::ConcludeResponse),
            id.prop_map(MmsPdu::CancelRequest),
            id.prop_map(MmsPdu::CancelResponse),
            (id, 0u8..13, any::<i64>()).prop_map(|(invoke_id, class, code)| {
                MmsPdu::CancelError {
                    invoke_id,
                    error: ServiceError::new(class, code),
                }
            }),
            // Services gander does not decode, with tags of one or more identifier octets
            // (the file services [72]..[77] need two).
            (
                id,
                prop_oneof![0u32..31, 31u32..80, 80u32..100_000],
                any::<bool>(),
                proptest::collection::vec(any::<u8>(), 0..40)
            )
                .prop_filter_map(
                    "a decoded service",
                    |(invoke_id, n, constructed, body)| {
                        let tag = ServiceTag::new(n, constructed);
                        // 0: Status (service::status); 11 and 13: DefineNamedVariableList,
                        // DeleteNamedVariableList (decoded by the dynamic data set services).
                        let decoded = [0, 1, 2, 4, 5, 6, 11, 12, 13];
                        (!decoded.contains(&n) && n != CS_REQUEST_DETAIL).then_some(
                            MmsPdu::ConfirmedRequest {
                                invoke_id,
                                request: ConfirmedRequest::Other { tag, body },
                            },
                        )
                    }
                ),
            Just(MmsPdu::InitiateRequest(Initiate::libiec61850_request())),
            // The dynamic data set services.
            (id, arb_name(), proptest::collection::vec(arb_var(), 0..4)).prop_map(
                |(invoke_id, name, members)| MmsPdu::ConfirmedRequest {
                    invoke_id,
                    request: ConfirmedRequest::DefineNamedVariableList(
                        DefineNamedVariableListRequest { name, members }
                    ),
                }
            ),
            id.prop_map(|invoke_id| MmsPdu::ConfirmedResponse {
                invoke_id,
                response: ConfirmedResponse::DefineNamedVariableList,
            }),
            (id, proptest::collection::vec(arb_name(), 0..4)).prop_map(|(invoke_id, names)| {
                MmsPdu::ConfirmedRequest {
                    invoke_id,
                    request: ConfirmedRequest::DeleteNamedVariableList(
                        DeleteNamedVariableListRequest::specific(names),
                    ),
                }
            }),
            (id, any::<u32>(), any::<u32>()).prop_map(|(invoke_id, matched, deleted)| {
                MmsPdu::ConfirmedResponse {
                    invoke_id,
                    response: ConfirmedResponse::DeleteNamedVariableList(
                        DeleteNamedVariableListResponse { matched, deleted },
                    ),
                }
            }),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(p in arb_pdu()) {
            let bytes = p.to_vec();
            prop_assert_eq!(MmsPdu::parse(&bytes).unwrap(), p);
        }

        /// The three sinks agree: counted length, in-place emit, appended vector.
        #[test]
        fn emit_in_place_matches_to_vec(p in arb_pdu()) {
            let bytes = p.to_vec();
            prop_assert_eq!(p.buffer_len(), bytes.len());
            let mut buf = vec![0xee; bytes.len()];
            prop_assert_eq!(p.emit(&mut buf), bytes.len());
            prop_assert_eq!(buf, bytes);
        }

        #[test]
        fn no_panic(data in proptest::collection::vec(any::<u8>(), 0..128)) {
            if let Ok(p) = MmsPdu::parse(&data) { let _ = p.to_vec(); }
        }
    }
}
