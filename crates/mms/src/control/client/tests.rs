use super::*;
use crate::association::ServerHandler;
use crate::bit_string::BitString;
use crate::control::params::ControlTime;
use crate::last_appl_error::{AddCause, Origin};
use crate::model::utc_time;
use crate::server_model::{ModelNode, ServerModel};
use crate::service::TypeSpec;

fn params() -> ControlParams {
    ControlParams {
        service: ControlService::Operate,
        ctl_val: Data::Boolean(true),
        oper_tm: None,
        origin: Origin {
            or_cat: 3,
            or_ident: b"gander".to_vec(),
        },
        ctl_num: Some(9),
        t: ControlTime::Utc(utc_time(5)),
        test: false,
        check: None,
    }
}

fn s(c: Vec<(&str, ModelNode)>) -> ModelNode {
    ModelNode::Struct(c.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
}

/// A server model with one SPC `GGIO1.SPCSO1` of ctlModel `model`.
fn server(model: i64) -> ServerModel {
    let l = ModelNode::leaf;
    let oper = |check: bool| {
        let mut c = vec![
            ("ctlVal", l(TypeSpec::Boolean, Data::Boolean(false))),
            (
                "origin",
                s(vec![
                    ("orCat", l(TypeSpec::Integer(8), Data::Integer(0))),
                    (
                        "orIdent",
                        l(TypeSpec::OctetString(-64), Data::OctetString(vec![])),
                    ),
                ]),
            ),
            ("ctlNum", l(TypeSpec::Unsigned(8), Data::Unsigned(0))),
            ("T", l(TypeSpec::UtcTime, Data::UtcTime([0; 8]))),
            ("Test", l(TypeSpec::Boolean, Data::Boolean(false))),
        ];
        if check {
            c.push((
                "Check",
                l(TypeSpec::BitString(2), BitString::new(2).to_data()),
            ));
        }
        s(c)
    };
    let mut m = ServerModel::new("gander", "t", "1");
    m.add_domain("LD").unwrap();
    m.add_logical_node(
        "LD",
        "GGIO1",
        s(vec![
            (
                "ST",
                s(vec![(
                    "SPCSO1",
                    s(vec![("stVal", l(TypeSpec::Boolean, Data::Boolean(false)))]),
                )]),
            ),
            (
                "CO",
                s(vec![(
                    "SPCSO1",
                    s(vec![
                        (
                            "SBO",
                            l(
                                TypeSpec::VisibleString(-129),
                                Data::VisibleString(String::new()),
                            ),
                        ),
                        ("SBOw", oper(true)),
                        ("Oper", oper(true)),
                        ("Cancel", oper(false)),
                    ]),
                )]),
            ),
            (
                "CF",
                s(vec![(
                    "SPCSO1",
                    s(vec![(
                        "ctlModel",
                        l(TypeSpec::Integer(8), Data::Integer(model)),
                    )]),
                )]),
            ),
        ]),
    )
    .unwrap();
    m
}

/// Run `op` against `m` as a driver would: requests through the handler, LastApplError
/// before the response, CommandTerminations after.
fn run(op: &mut ControlOperation, m: &mut ServerModel, conn: u64) {
    let mut now = 100;
    while op.outcome().is_none() {
        now += 1;
        m.set_clock(now);
        let Some(req) = op.poll_request(now) else {
            for ir in m.due_reports(conn, now) {
                op.on_report(now, &ir);
            }
            assert!(op.outcome().is_some() || now < 200, "stalled");
            continue;
        };
        match req {
            ControlRequest::Read(n) => {
                let r = m.read(conn, &n);
                for ir in m.take_reports_before_response(conn) {
                    op.on_report(now, &ir);
                }
                op.on_read(now, &r);
            }
            ControlRequest::Write(n, d) => {
                let r = ServerHandler::write(m, conn, &n, &d);
                for ir in m.take_reports_before_response(conn) {
                    op.on_report(now, &ir);
                }
                op.on_write(now, r);
            }
        }
    }
}

#[test]
fn every_model_operates_gander_server() {
    for model in 1..=4 {
        let mut m = server(model);
        let mut op = ControlOperation::new(
            "LD/GGIO1.SPCSO1",
            CtlModel::from_code(model).unwrap(),
            params(),
        )
        .unwrap();
        run(&mut op, &mut m, 1);
        assert_eq!(op.outcome(), Some(&ControlOutcome::Done), "model {model}");
        assert_eq!(
            m.value(&ObjectName::domain("LD", "GGIO1$ST$SPCSO1$stVal")),
            Some(Data::Boolean(true))
        );
        let t = op.times();
        assert!(t.started.is_some() && t.operated.is_some());
        assert_eq!(
            t.selected.is_some(),
            model == 2 || model == 4,
            "model {model}"
        );
        assert_eq!(t.terminated.is_some(), model >= 3, "model {model}");
    }
}

#[test]
fn refusals_carry_the_last_appl_error() {
    // The server says direct-normal, the client believes sbo-normal: the select fails.
    let mut m = server(1);
    let mut op = ControlOperation::new("LD/GGIO1.SPCSO1", CtlModel::SboNormal, params()).unwrap();
    run(&mut op, &mut m, 1);
    assert_eq!(op.outcome(), Some(&ControlOutcome::SelectFailed));
    // The server says sbo-normal, the client operates directly: Object-not-selected.
    let mut m = server(2);
    let mut op =
        ControlOperation::new("LD/GGIO1$CO$SPCSO1", CtlModel::DirectNormal, params()).unwrap();
    run(&mut op, &mut m, 1);
    let Some(ControlOutcome::Refused {
        service: ControlService::Operate,
        error,
        last_appl_error: Some(l),
    }) = op.outcome()
    else {
        panic!("{:?}", op.outcome())
    };
    assert_eq!(*error, DataAccessError::OBJECT_ACCESS_DENIED);
    assert_eq!(l.add_cause, AddCause::OBJECT_NOT_SELECTED);
    assert_eq!(l.ctl_num, 9);
}

#[test]
fn scripted_negative_termination_and_cancel() {
    let mut op = ControlOperation::new("LD/CSWI1.Pos", CtlModel::DirectEnhanced, params()).unwrap();
    let Some(ControlRequest::Write(n, d)) = op.poll_request(1) else {
        panic!()
    };
    assert_eq!(n, ObjectName::domain("LD", "CSWI1$CO$Pos$Oper"));
    assert_eq!(op.poll_request(2), None);
    op.on_write(3, Ok(()));
    assert!(op.awaits_termination());
    let lae = LastApplError {
        cntrl_obj: "LD/CSWI1$CO$Pos$Oper".into(),
        error: crate::last_appl_error::ControlError::UNKNOWN,
        origin: params().origin,
        ctl_num: 9,
        add_cause: AddCause::TIME_LIMIT_OVER,
    };
    // Another object's termination is ignored.
    let other = CommandTermination {
        domain: "LD".into(),
        item: "CSWI2$CO$Pos$Oper".into(),
        oper: d.clone(),
        error: None,
    };
    op.on_report(4, &other.to_information_report());
    assert!(op.awaits_termination());
    let t = CommandTermination {
        domain: "LD".into(),
        item: "CSWI1$CO$Pos$Oper".into(),
        oper: d,
        error: Some(lae.clone()),
    };
    op.on_report(5, &t.to_information_report());
    assert_eq!(op.outcome(), Some(&ControlOutcome::TerminatedNegative(lae)));
    assert_eq!(op.times().terminated, Some(5));
    // Cancel is a Write of Cancel without Check.
    let mut op = ControlOperation::new("LD/CSWI1.Pos", CtlModel::SboEnhanced, params()).unwrap();
    let ControlRequest::Write(n, d) = op.cancel() else {
        panic!()
    };
    assert_eq!(n, ObjectName::domain("LD", "CSWI1$CO$Pos$Cancel"));
    assert!(ControlParams::from_data(ControlService::Cancel, &d).is_ok());
    assert_eq!(op.poll_request(1), None);
    // Bad references and status-only.
    assert!(ControlOperation::new("nope", CtlModel::DirectNormal, params()).is_err());
    assert!(ControlOperation::new("LD/LN", CtlModel::DirectNormal, params()).is_err());
    assert_eq!(
        ControlOperation::new("LD/LN.DO", CtlModel::StatusOnly, params()).err(),
        Some(ControlClientError::StatusOnly)
    );
}

#[test]
fn a_termination_read_with_the_response_is_kept() {
    // libiec61850's server sends the Oper response and the CommandTermination back to back; a
    // driver that hands in queued reports before the response must not lose it.
    let mut op =
        ControlOperation::new("LD/GGIO1.SPCSO1", CtlModel::DirectEnhanced, params()).unwrap();
    let Some(ControlRequest::Write(_, d)) = op.poll_request(1) else {
        panic!()
    };
    let t = CommandTermination {
        domain: "LD".into(),
        item: "GGIO1$CO$SPCSO1$Oper".into(),
        oper: d,
        error: None,
    };
    op.on_report(2, &t.to_information_report());
    assert_eq!(op.outcome(), None);
    op.on_write(2, Ok(()));
    assert_eq!(op.outcome(), Some(&ControlOutcome::Done));
    assert_eq!(op.times().terminated, Some(2));
}
