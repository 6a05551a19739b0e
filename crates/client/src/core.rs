//! The sans-I/O part of the client: building the confirmed requests an IEC 61850 client makes
//! (IEC 61850-8-1 maps GetDataValues onto the MMS Read, SetDataValues onto Write, the directory
//! services onto GetNameList), telling which event of `gander_mms::association` answers which
//! request (the invokeID, ISO 9506-2 7.4), and decoding the answer into what the caller wanted
//! or a [`ClientError`] that says what came instead. No sockets and no clocks: the blocking
//! [`crate::session::Session`] drives it, and tests feed it events directly.
use crate::error::ClientError;
use gander_mms::association::{CloseReason, Event};
use gander_mms::pdu::{ConfirmedRequest, ConfirmedResponse};
use gander_mms::service::{
    AccessResult, DataAccessError, GetNameListResponse, InformationReport, ObjectName, ReadRequest,
    VariableAccessSpecification,
};

/// A Read of named variables (ISO 9506-2 14.6, `variableAccessSpecification` listOfVariable),
/// without `specificationWithResult`: what IEC 61850-8-1 GetDataValues sends.
pub fn read_request(names: impl IntoIterator<Item = ObjectName>) -> ConfirmedRequest {
    ConfirmedRequest::Read(ReadRequest {
        specification_with_result: false,
        spec: VariableAccessSpecification::names(names),
    })
}

/// A Read of a named variable list (a data set, IEC 61850-8-1 GetDataSetValues): every member
/// in one round trip.
pub fn read_list_request(list: ObjectName) -> ConfirmedRequest {
    ConfirmedRequest::Read(ReadRequest {
        specification_with_result: false,
        spec: VariableAccessSpecification::VariableListName(list),
    })
}

/// The service name of a response, for messages.
pub fn service_of(r: &ConfirmedResponse) -> &'static str {
    match r {
        ConfirmedResponse::Identify(_) => "Identify",
        ConfirmedResponse::GetNameList(_) => "GetNameList",
        ConfirmedResponse::GetVariableAccessAttributes(_) => "GetVariableAccessAttributes",
        ConfirmedResponse::GetNamedVariableListAttributes(_) => "GetNamedVariableListAttributes",
        ConfirmedResponse::Read(_) => "Read",
        ConfirmedResponse::Write(_) => "Write",
        ConfirmedResponse::DefineNamedVariableList => "DefineNamedVariableList",
        ConfirmedResponse::DeleteNamedVariableList(_) => "DeleteNamedVariableList",
        _ => "another service's",
    }
}

/// The error for a response of the wrong service.
pub fn unexpected(what: &str, got: &ConfirmedResponse) -> ClientError {
    ClientError::UnexpectedResponse {
        request: what.into(),
        got: format!("a {} response", service_of(got)),
    }
}

/// The one access result of a Read of one variable.
pub fn one_result(what: &str, r: ConfirmedResponse) -> Result<AccessResult, ClientError> {
    match r {
        ConfirmedResponse::Read(r) => {
            let n = r.results.len();
            let mut it = r.results.into_iter();
            match (it.next(), n) {
                (Some(a), 1) => Ok(a),
                _ => Err(ClientError::UnexpectedResponse {
                    request: what.into(),
                    got: format!("a Read response with {n} results for one variable"),
                }),
            }
        }
        other => Err(unexpected(what, &other)),
    }
}

/// The verdict of a Write response (ISO 9506-2 14.7): `Ok(Err(e))` when the server refused a
/// variable with a DataAccessError (the association lives on).
pub fn write_result(
    what: &str,
    r: ConfirmedResponse,
) -> Result<Result<(), DataAccessError>, ClientError> {
    match r {
        ConfirmedResponse::Write(w) => Ok(w.check()),
        other => Err(unexpected(what, &other)),
    }
}

/// The GetNameList answer of a GetNameList request.
pub fn name_list(what: &str, r: ConfirmedResponse) -> Result<GetNameListResponse, ClientError> {
    match r {
        ConfirmedResponse::GetNameList(a) => Ok(a),
        other => Err(unexpected(what, &other)),
    }
}

/// What an association event means to a caller waiting for the answer to invokeID `id`.
#[derive(Debug)]
pub enum Matched {
    /// The answer: the response and when its bytes were read (CLOCK_MONOTONIC ns).
    Answer {
        /// The response.
        response: ConfirmedResponse,
        /// When the bytes that completed it were read.
        at: u64,
    },
    /// The request failed: a confirmed-Error for it, a Reject, or the association closed.
    Failed(ClientError),
    /// An unsolicited InformationReport (IEC 61850-8-1 17.2, 20.2): queue it in order.
    Report {
        /// When the bytes that completed it were read.
        at: u64,
        /// The report.
        report: InformationReport,
    },
    /// Nothing to do with this request (a step of the association, another request's answer).
    Other,
}

/// Classifies one event for the caller waiting on `id`; `ms` is the step timeout for the
/// messages. A Reject ends the wait whatever its invokeID: a server rejects the PDU it could not
/// parse, which may be this request without a readable invokeID (ISO 9506-2 7.4.4).
pub fn match_event(id: u32, ev: Event, what: &str, ms: u64) -> Matched {
    match ev {
        Event::Response {
            invoke_id,
            response,
            at,
        } if invoke_id == id => Matched::Answer { response, at },
        Event::ServiceError {
            invoke_id, error, ..
        } if invoke_id == id => Matched::Failed(ClientError::Service {
            request: what.into(),
            error,
        }),
        Event::Rejected { reject, .. } => Matched::Failed(ClientError::Rejected {
            request: what.into(),
            reject,
        }),
        Event::InformationReport { at, report } => Matched::Report { at, report },
        Event::Closed { reason, .. } => Matched::Failed(closed(reason, what, ms)),
        _ => Matched::Other,
    }
}

/// The error for an association that closed while the client waited for `during`.
pub fn closed(reason: CloseReason, during: &str, ms: u64) -> ClientError {
    let during = during.to_string();
    match reason {
        CloseReason::Refused(detail) => ClientError::AssociationRefused { detail },
        CloseReason::PeerAborted => ClientError::Aborted { during },
        CloseReason::PeerDisconnected => ClientError::Disconnected { during },
        CloseReason::Timeout(_) => ClientError::Timeout { during, ms },
        CloseReason::Error(e) => ClientError::Protocol { during, source: e },
        CloseReason::Released | CloseReason::LocalAbort => ClientError::Closed {
            during,
            hint: " (association already over)",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_mms::service::{ReadResponse, ServiceError, WriteResponse};
    use gander_wire::data::Data;

    #[test]
    fn the_answer_is_told_by_its_invoke_id() {
        let resp = || {
            ConfirmedResponse::Read(ReadResponse {
                spec: None,
                results: vec![],
            })
        };
        let ev = Event::Response {
            at: 7,
            invoke_id: 3,
            response: resp(),
        };
        assert!(matches!(
            match_event(3, ev, "r", 1),
            Matched::Answer { at: 7, .. }
        ));
        let other = Event::Response {
            at: 7,
            invoke_id: 4,
            response: resp(),
        };
        assert!(matches!(match_event(3, other, "r", 1), Matched::Other));
        let err = Event::ServiceError {
            at: 1,
            invoke_id: 3,
            error: ServiceError::new(ServiceError::CLASS_ACCESS, 2),
        };
        assert!(matches!(
            match_event(3, err, "r", 1),
            Matched::Failed(ClientError::Service { .. })
        ));
        let gone = Event::Closed {
            at: 1,
            reason: CloseReason::PeerAborted,
        };
        assert!(matches!(
            match_event(3, gone, "r", 1),
            Matched::Failed(ClientError::Aborted { .. })
        ));
    }

    #[test]
    fn one_result_wants_exactly_one() {
        let ok = ConfirmedResponse::Read(ReadResponse {
            spec: None,
            results: vec![AccessResult::Success(Data::Boolean(true))],
        });
        assert!(matches!(
            one_result("r", ok),
            Ok(AccessResult::Success(Data::Boolean(true)))
        ));
        let none = ConfirmedResponse::Read(ReadResponse {
            spec: None,
            results: vec![],
        });
        assert!(matches!(
            one_result("r", none),
            Err(ClientError::UnexpectedResponse { .. })
        ));
        let w = ConfirmedResponse::Write(WriteResponse(vec![]));
        let e = one_result("r", w).unwrap_err();
        assert_eq!(
            e.to_string(),
            "r: the server answered with a Write response"
        );
    }

    #[test]
    fn requests_name_what_they_read() {
        let n = ObjectName::domain("LD", "LLN0$ST$Mod$stVal");
        match read_request([n.clone()]) {
            ConfirmedRequest::Read(r) => {
                assert!(!r.specification_with_result);
                assert_eq!(r.spec, VariableAccessSpecification::names([n]));
            }
            _ => panic!("not a Read"),
        }
    }
}
