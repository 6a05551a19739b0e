//! gander's server answers every ISO 9506-2 confirmed service it does not implement with a
//! Reject (confirmed-requestPDU, unrecognized-service) and keeps the association: the next
//! request is served. Found by an independent IEC 61850 client's feature test, whose
//! FileDirectory request (`BF 4D`, a two-octet tag) made gander's server abort the
//! association. Also the PDUs around the services: cancel, conclude, unconfirmed, modifiers,
//! an unknown PDU type and an answer larger than the client's PDU size.

use gander_mms::association::{
    ClientAssociation, ClientConfig, Event, ServerAssociation, ServerConfig,
};
use gander_mms::model::{ImpModel, ModelConfig};
use gander_mms::pdu::{
    reject_reason, ConfirmedRequest, ConfirmedResponse, MmsPdu, ServiceTag, CONFIRMED_SERVICES,
};
use gander_mms::presentation;
use gander_mms::service::{
    ObjectName, ReadRequest, Reject, ServiceError, VariableAccessSpecification,
};
use gander_mms::{cotp, iso_session::Spdu, tpkt, Codec};

fn h(s: &str) -> Vec<u8> {
    hex::decode(s.replace(' ', "")).unwrap()
}

/// A client and the fixed-model server, associated (libiec61850's defaults on both sides,
/// `local_detail` the client's proposed PDU size).
fn associated(local_detail: u32) -> (ClientAssociation, ServerAssociation, ImpModel) {
    let mut m = ImpModel::new(ModelConfig::for_report_size(20_000).unwrap());
    let mut cc = ClientConfig::default();
    cc.initiate.local_detail = Some(local_detail);
    let mut c = ClientAssociation::new(cc);
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, 0);
    c.connect(0).unwrap();
    pump(&mut c, &mut s, &mut m);
    assert!(s.is_associated());
    while c.poll_event().is_some() {}
    while s.poll_event().is_some() {}
    (c, s, m)
}

fn pump(c: &mut ClientAssociation, s: &mut ServerAssociation, m: &mut ImpModel) {
    loop {
        let mut moved = false;
        while let Some(p) = c.poll_transmit() {
            s.handle_input(1, &p, m);
            moved = true;
        }
        while let Some(p) = s.poll_transmit() {
            c.handle_input(1, &p);
            moved = true;
        }
        if !moved {
            break;
        }
    }
}

/// Send one raw MMS PDU to the server (session DATA, presentation context 3) and return the
/// MMS PDUs it answers with.
fn raw(s: &mut ServerAssociation, m: &mut ImpModel, mms: &[u8]) -> Vec<MmsPdu> {
    let ud = presentation::user_data(3, mms.to_vec());
    for dt in cotp::data_tpdus(&Spdu::Data(&ud).to_vec(), 8192) {
        s.handle_input(2, &tpkt::frame(&dt).unwrap(), m);
    }
    std::iter::from_fn(|| s.poll_transmit())
        .map(|p| {
            // TPKT (4), DT (3), session DATA prefix (4), then P-DATA.
            let pdvs = presentation::parse_user_data(&p[11..]).unwrap();
            MmsPdu::parse(&pdvs[0].data).unwrap()
        })
        .collect()
}

/// The server still serves: an Identify gets its answer.
fn still_serves(c: &mut ClientAssociation, s: &mut ServerAssociation, m: &mut ImpModel) {
    let id = c.request(3, ConfirmedRequest::Identify).unwrap();
    pump(c, s, m);
    let ev: Vec<Event> = std::iter::from_fn(|| c.poll_event()).collect();
    assert!(
        ev.iter().any(|e| matches!(e,
            Event::Response { invoke_id, response: ConfirmedResponse::Identify(_), .. }
            if *invoke_id == id)),
        "{ev:?}"
    );
    assert!(s.is_associated() && !c.is_closed());
}

/// A plausible body for each service: primitive services get a value of their type, the
/// others an empty SEQUENCE (gander refuses them before looking inside).
fn request_of(number: u32) -> (ServiceTag, Vec<u8>) {
    match number {
        // Status-Request BOOLEAN.
        0 => (ServiceTag::new(0, false), vec![0x00]),
        // Identifiers: downloadSegment, initiateUploadSequence, deleteDomain,
        // getDomainAttributes, deleteProgramInvocation.
        27 | 29 | 36 | 37 | 39 => (ServiceTag::new(number, false), b"LD0".to_vec()),
        // Integer32: uploadSegment, terminateUploadSequence, fileRead, fileClose.
        30 | 31 | 73 | 74 => (ServiceTag::new(number, false), vec![0x01]),
        _ => (ServiceTag::new(number, true), Vec::new()),
    }
}

/// Services gander's server implements (ISO 9506-2 tag numbers), and the two a parallel
/// change adds (DefineNamedVariableList [11], DeleteNamedVariableList [13]), which may be
/// answered instead of refused.
const SERVED: [u32; 7] = [0, 1, 2, 4, 5, 6, 12];
const MAYBE_SERVED: [u32; 2] = [11, 13];

#[test]
fn every_unimplemented_confirmed_service_is_rejected_and_the_association_lives() {
    let (mut c, mut s, mut m) = associated(65000);
    let mut refused = Vec::new();
    for number in 0..CONFIRMED_SERVICES.len() as u32 {
        if SERVED.contains(&number) {
            continue;
        }
        let (tag, body) = request_of(number);
        let invoke_id = 1000 + number;
        let pdu = MmsPdu::ConfirmedRequest {
            invoke_id,
            request: ConfirmedRequest::Other { tag, body },
        };
        let answers = raw(&mut s, &mut m, &pdu.to_vec());
        let name = CONFIRMED_SERVICES[number as usize];
        assert!(
            s.is_associated(),
            "{name} [{number}] closed the association"
        );
        match answers.as_slice() {
            [MmsPdu::Reject(r)] => {
                assert_eq!(
                    *r,
                    Reject {
                        invoke_id: Some(invoke_id),
                        kind: reject_reason::CONFIRMED_REQUEST,
                        code: reject_reason::UNRECOGNIZED_SERVICE,
                    },
                    "{name} [{number}]"
                );
                refused.push(name);
            }
            [MmsPdu::ConfirmedResponse { invoke_id: i, .. }]
            | [MmsPdu::ConfirmedError { invoke_id: i, .. }]
                if MAYBE_SERVED.contains(&number) && *i == invoke_id => {}
            other => panic!("{name} [{number}]: {other:?}"),
        }
        still_serves(&mut c, &mut s, &mut m);
    }
    // Every file, journal, domain, program-invocation, semaphore and event service.
    for n in [
        "fileOpen",
        "fileRead",
        "fileClose",
        "fileRename",
        "fileDelete",
        "fileDirectory",
        "obtainFile",
        "readJournal",
        "initializeJournal",
        "reportJournalStatus",
        "deleteDomain",
        "start",
        "takeControl",
        "defineEventCondition",
        "getCapabilityList",
    ] {
        assert!(refused.contains(&n), "{n}");
    }
}

#[test]
fn file_directory_as_an_independent_client_sends_it() {
    // FileDirectory-Request with fileSpecification [0] { GraphicString "" } (an empty
    // name: the whole directory): `A0 0A 02 01 05 BF 4D 04 A0 02 19 00`.
    let (mut c, mut s, mut m) = associated(65000);
    let answers = raw(&mut s, &mut m, &h("A0 0A 02 01 05 BF 4D 04 A0 02 19 00"));
    assert_eq!(answers.len(), 1);
    assert_eq!(
        answers[0].to_vec(),
        h("A4 06 80 01 05 81 01 01"),
        "reject, unrecognized-service, as libiec61850 without a file store"
    );
    still_serves(&mut c, &mut s, &mut m);
}

#[test]
fn cancel_conclude_unconfirmed_and_malformed_pdus_do_not_abort() {
    let (mut c, mut s, mut m) = associated(65000);
    let cases: Vec<(&str, &str, MmsPdu)> = vec![
        (
            "cancel of a request already answered",
            "85 01 07",
            MmsPdu::CancelError {
                invoke_id: 7,
                error: ServiceError::new(ServiceError::CLASS_CANCEL, 1),
            },
        ),
        (
            "conclude with contents",
            "8B 01 00",
            MmsPdu::Reject(Reject {
                invoke_id: None,
                kind: reject_reason::CONCLUDE_REQUEST,
                code: 1,
            }),
        ),
        (
            "a listOfModifier",
            "A0 09 02 01 08 30 00 A4 02 A1 00",
            MmsPdu::Reject(Reject {
                invoke_id: Some(8),
                kind: reject_reason::CONFIRMED_REQUEST,
                code: reject_reason::UNRECOGNIZED_MODIFIER,
            }),
        ),
        (
            "a Read whose body is no Read-Request",
            "A0 06 02 01 09 A4 01 00",
            MmsPdu::Reject(Reject {
                invoke_id: Some(9),
                kind: reject_reason::CONFIRMED_REQUEST,
                code: reject_reason::INVALID_ARGUMENT,
            }),
        ),
        (
            "an unknown PDU type",
            "AE 00",
            MmsPdu::Reject(Reject {
                invoke_id: None,
                kind: reject_reason::PDU_ERROR,
                code: reject_reason::UNKNOWN_PDU_TYPE,
            }),
        ),
        (
            "a malformed unconfirmed PDU",
            "A3 02 A0 00",
            MmsPdu::Reject(Reject {
                invoke_id: None,
                kind: reject_reason::UNCONFIRMED,
                code: reject_reason::UNCONFIRMED_INVALID_ARGUMENT,
            }),
        ),
        (
            "a confirmed-Response to a request the server never sent",
            "A1 05 02 01 0B 82 00",
            MmsPdu::Reject(Reject {
                invoke_id: Some(11),
                kind: reject_reason::CONFIRMED_RESPONSE,
                code: reject_reason::INVALID_INVOKE_ID,
            }),
        ),
    ];
    for (what, bytes, want) in cases {
        let answers = raw(&mut s, &mut m, &h(bytes));
        assert_eq!(answers, [want], "{what}");
        assert!(s.is_associated(), "{what}");
        still_serves(&mut c, &mut s, &mut m);
    }
    // Unconfirmed PDUs from a client (an InformationReport, unsolicitedStatus [1]) are
    // taken silently.
    for bytes in [
        "A3 0C A0 0A A1 05 80 03 525054 A0 01 83",
        "A3 08 A0 06 A1 05 80 03 525054 A0 00",
        "A3 08 A1 06 80 01 00 81 01 00",
    ] {
        let answers = raw(&mut s, &mut m, &h(bytes));
        assert!(
            answers.is_empty() || matches!(answers[..], [MmsPdu::Reject(_)]),
            "{bytes}: {answers:?}"
        );
        assert!(s.is_associated());
    }
    still_serves(&mut c, &mut s, &mut m);
    // A confirmed-Request carrying a cs-request-detail [79] after Identify is served.
    let answers = raw(&mut s, &mut m, &h("A0 0A 02 01 0C 82 00 BF 4F 02 02 00"));
    assert!(
        matches!(
            answers[..],
            [MmsPdu::ConfirmedResponse {
                invoke_id: 12,
                response: ConfirmedResponse::Identify(_)
            }]
        ),
        "{answers:?}"
    );
}

#[test]
fn conclude_twice_then_release() {
    let (mut c, mut s, mut m) = associated(65000);
    assert_eq!(raw(&mut s, &mut m, &h("8B 00")), [MmsPdu::ConcludeResponse]);
    // A second conclude after the first: out of sequence, rejected, not aborted.
    let again = raw(&mut s, &mut m, &h("8B 00"));
    assert!(matches!(again[..], [MmsPdu::Reject(_)]), "{again:?}");
    assert!(!s.is_closed());
    // The release still completes: FINISH { RLRQ } gets DISCONNECT { RLRE }.
    let _ = &mut c;
    let rlrq = presentation::user_data(1, h("62 03 80 01 00"));
    s.handle_input(
        4,
        &tpkt::frame(&[&h("02F080")[..], &Spdu::Finish(&rlrq).to_vec()].concat()).unwrap(),
        &mut m,
    );
    let out: Vec<Vec<u8>> = std::iter::from_fn(|| s.poll_transmit()).collect();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0][7], 0x0a, "DISCONNECT");
    assert!(s.is_closed());
}

#[test]
fn an_answer_larger_than_the_clients_pdu_size_is_a_service_error() {
    // The client accepts 1000-octet PDUs; the model's blob makes the data set 20 000 octets.
    let (mut c, mut s, mut m) = associated(1000);
    let read = |item: &str| {
        ConfirmedRequest::Read(ReadRequest {
            specification_with_result: false,
            spec: VariableAccessSpecification::names([ObjectName::domain(
                gander_mms::model::DOMAIN,
                item,
            )]),
        })
    };
    let id = c.request(1, read("GGIO1$ST$Blob1$stVal")).unwrap();
    pump(&mut c, &mut s, &mut m);
    let ev: Vec<Event> = std::iter::from_fn(|| c.poll_event()).collect();
    assert!(
        ev.iter().any(|e| matches!(e,
            Event::ServiceError { invoke_id, error, .. }
            if *invoke_id == id && *error == ServiceError::new(ServiceError::CLASS_SERVICE, 3))),
        "{ev:?}"
    );
    // A small variable is still read.
    let id = c.request(2, read("GGIO1$ST$Ind1$stVal")).unwrap();
    pump(&mut c, &mut s, &mut m);
    let ev: Vec<Event> = std::iter::from_fn(|| c.poll_event()).collect();
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::Response { invoke_id, .. } if *invoke_id == id)),
        "{ev:?}"
    );
}
