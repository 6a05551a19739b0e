use super::*;
use crate::association::ServerHandler;
use crate::control::{Check, CommandTermination, ControlTime};
use crate::last_appl_error::{LastApplError, Origin};
use crate::model::utc_time;
use crate::server_model::ModelNode;
use crate::service::{AccessResult, TypeSpec};

const D: &str = "IEDCTRL";

fn leaf(ty: TypeSpec, v: Data) -> ModelNode {
    ModelNode::leaf(ty, v)
}

fn s(c: Vec<(&str, ModelNode)>) -> ModelNode {
    ModelNode::Struct(c.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
}

fn int(v: i64) -> ModelNode {
    leaf(TypeSpec::Integer(8), Data::Integer(v))
}

fn oper_type(ctl_val: ModelNode, sbow: bool) -> Vec<(&'static str, ModelNode)> {
    let p = |check: bool| {
        let mut c = vec![
            ("ctlVal", ctl_val.clone()),
            (
                "origin",
                s(vec![
                    ("orCat", int(0)),
                    (
                        "orIdent",
                        leaf(TypeSpec::OctetString(-64), Data::OctetString(vec![])),
                    ),
                ]),
            ),
            ("ctlNum", leaf(TypeSpec::Unsigned(8), Data::Unsigned(0))),
            ("T", leaf(TypeSpec::UtcTime, Data::UtcTime([0; 8]))),
            ("Test", leaf(TypeSpec::Boolean, Data::Boolean(false))),
        ];
        if check {
            c.push((
                "Check",
                leaf(TypeSpec::BitString(2), BitString::new(2).to_data()),
            ));
        }
        s(c)
    };
    let mut v = vec![("Oper", p(true)), ("Cancel", p(false))];
    if sbow {
        v.push(("SBOw", p(true)));
    }
    v.push((
        "SBO",
        leaf(
            TypeSpec::VisibleString(-129),
            Data::VisibleString(String::new()),
        ),
    ));
    v
}

fn status(st_val: ModelNode) -> ModelNode {
    s(vec![
        ("stVal", st_val),
        (
            "q",
            leaf(
                TypeSpec::BitString(-13),
                BitString::with_bits(13, &[0, 1]).to_data(),
            ),
        ),
        ("t", leaf(TypeSpec::UtcTime, Data::UtcTime([0; 8]))),
        ("ctlNum", leaf(TypeSpec::Unsigned(8), Data::Unsigned(0))),
    ])
}

fn cf(model: i64) -> ModelNode {
    s(vec![
        ("ctlModel", int(model)),
        (
            "sboTimeout",
            leaf(TypeSpec::Unsigned(32), Data::Unsigned(500)),
        ),
    ])
}

/// LLN0 (Mod on), GGIO1 with SPCSO1..4 (ctlModel 1..4), CSWI1 Pos (DPC, sbo-enhanced),
/// CILO1 (close not enabled), INC and APC direct-normal.
fn model() -> ServerModel {
    let mut m = ServerModel::new("gander", "ctl", "1");
    m.add_domain(D).unwrap();
    m.add_logical_node(
        D,
        "LLN0",
        s(vec![("ST", s(vec![("Mod", s(vec![("stVal", int(1))]))]))]),
    )
    .unwrap();
    let b = || leaf(TypeSpec::Boolean, Data::Boolean(false));
    let spcs = ["SPCSO1", "SPCSO2", "SPCSO3", "SPCSO4", "SPCSO0"];
    let models = [1, 2, 3, 4, 0];
    m.add_logical_node(
        D,
        "GGIO1",
        s(vec![
            (
                "ST",
                ModelNode::Struct(
                    spcs.iter()
                        .map(|n| (n.to_string(), status(b())))
                        .chain([("IntCtl".to_string(), status(int(0)))])
                        .collect(),
                ),
            ),
            (
                "MX",
                s(vec![(
                    "AnOut",
                    s(vec![(
                        "mxVal",
                        s(vec![(
                            "f",
                            leaf(
                                TypeSpec::FloatingPoint {
                                    format_width: 32,
                                    exponent_width: 8,
                                },
                                Data::FloatingPoint32(0.0),
                            ),
                        )]),
                    )]),
                )]),
            ),
            (
                "CO",
                ModelNode::Struct(
                    spcs.iter()
                        .zip(models)
                        .map(|(n, md)| (n.to_string(), s(oper_type(b(), md == 4))))
                        .chain([
                            ("IntCtl".to_string(), s(oper_type(int(0), false))),
                            (
                                "AnOut".to_string(),
                                s(oper_type(
                                    s(vec![(
                                        "f",
                                        leaf(
                                            TypeSpec::FloatingPoint {
                                                format_width: 32,
                                                exponent_width: 8,
                                            },
                                            Data::FloatingPoint32(0.0),
                                        ),
                                    )]),
                                    false,
                                )),
                            ),
                        ])
                        .collect(),
                ),
            ),
            (
                "CF",
                ModelNode::Struct(
                    spcs.iter()
                        .zip(models)
                        .map(|(n, md)| (n.to_string(), cf(md)))
                        .chain([("IntCtl".to_string(), cf(1)), ("AnOut".to_string(), cf(1))])
                        .collect(),
                ),
            ),
        ]),
    )
    .unwrap();
    m.add_logical_node(
        D,
        "CSWI1",
        s(vec![
            (
                "ST",
                s(vec![(
                    "Pos",
                    status(leaf(
                        TypeSpec::BitString(2),
                        BitString::with_bits(2, &[1]).to_data(),
                    )),
                )]),
            ),
            ("CO", s(vec![("Pos", s(oper_type(b(), true)))])),
            ("CF", s(vec![("Pos", cf(4))])),
        ]),
    )
    .unwrap();
    m.add_logical_node(
        D,
        "CILO1",
        s(vec![(
            "ST",
            s(vec![
                (
                    "EnaOpn",
                    s(vec![(
                        "stVal",
                        leaf(TypeSpec::Boolean, Data::Boolean(true)),
                    )]),
                ),
                (
                    "EnaCls",
                    s(vec![(
                        "stVal",
                        leaf(TypeSpec::Boolean, Data::Boolean(false)),
                    )]),
                ),
            ]),
        )]),
    )
    .unwrap();
    m
}

fn params(service: ControlService, ctl_val: Data, n: u8) -> ControlParams {
    ControlParams {
        service,
        ctl_val,
        oper_tm: None,
        origin: Origin {
            or_cat: 3,
            or_ident: b"test".to_vec(),
        },
        ctl_num: Some(n),
        t: ControlTime::Utc(utc_time(1)),
        test: false,
        check: (service != ControlService::Cancel).then_some(Check::default()),
    }
}

fn write(
    m: &mut ServerModel,
    conn: u64,
    item: &str,
    p: &ControlParams,
) -> Result<(), DataAccessError> {
    ServerHandler::write(m, conn, &ObjectName::domain(D, item), &p.to_data())
}

fn get(m: &ServerModel, item: &str) -> Option<Data> {
    m.value(&ObjectName::domain(D, item))
}

fn lae(m: &mut ServerModel, conn: u64) -> Vec<LastApplError> {
    m.take_reports_before_response(conn)
        .iter()
        .map(|ir| LastApplError::from_information_report(ir).unwrap().unwrap())
        .collect()
}

fn terminations(m: &mut ServerModel, conn: u64, now: u64) -> Vec<CommandTermination> {
    m.control_reports(conn, now)
        .iter()
        .map(|ir| {
            CommandTermination::from_information_report(ir)
                .unwrap()
                .unwrap()
        })
        .collect()
}

const OPER: ControlService = ControlService::Operate;

#[test]
fn direct_normal_spc_operates_stval_q_t() {
    let mut m = model();
    m.set_clock(1_700_000_000_000);
    let p = params(OPER, Data::Boolean(true), 7);
    assert_eq!(write(&mut m, 1, "GGIO1$CO$SPCSO1$Oper", &p), Ok(()));
    assert_eq!(get(&m, "GGIO1$ST$SPCSO1$stVal"), Some(Data::Boolean(true)));
    assert_eq!(
        get(&m, "GGIO1$ST$SPCSO1$q"),
        Some(BitString::new(13).to_data())
    );
    assert_eq!(
        get(&m, "GGIO1$ST$SPCSO1$t"),
        Some(Data::UtcTime(utc_time(1_700_000_000_000)))
    );
    assert_eq!(get(&m, "GGIO1$ST$SPCSO1$ctlNum"), Some(Data::Unsigned(7)));
    assert!(lae(&mut m, 1).is_empty());
    assert!(terminations(&mut m, 1, 1_700_000_000_000).is_empty());
    // Test: accepted, nothing changes.
    let mut t = params(OPER, Data::Boolean(false), 8);
    t.test = true;
    assert_eq!(write(&mut m, 1, "GGIO1$CO$SPCSO1$Oper", &t), Ok(()));
    assert_eq!(get(&m, "GGIO1$ST$SPCSO1$stVal"), Some(Data::Boolean(true)));
    // Malformed value: type-inconsistent; a component of Oper: access denied.
    assert_eq!(
        ServerHandler::write(
            &mut m,
            1,
            &ObjectName::domain(D, "GGIO1$CO$SPCSO1$Oper"),
            &Data::Boolean(true)
        ),
        Err(DataAccessError::TYPE_INCONSISTENT)
    );
    assert_eq!(
        ServerHandler::write(
            &mut m,
            1,
            &ObjectName::domain(D, "GGIO1$CO$SPCSO1$Oper$ctlVal"),
            &Data::Boolean(true)
        ),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
    // INC and APC.
    assert_eq!(
        write(
            &mut m,
            1,
            "GGIO1$CO$IntCtl$Oper",
            &params(OPER, Data::Integer(42), 1)
        ),
        Ok(())
    );
    assert_eq!(get(&m, "GGIO1$ST$IntCtl$stVal"), Some(Data::Integer(42)));
    let mag = Data::Structure(vec![Data::FloatingPoint32(12.5)]);
    assert_eq!(
        write(
            &mut m,
            1,
            "GGIO1$CO$AnOut$Oper",
            &params(OPER, mag.clone(), 1)
        ),
        Ok(())
    );
    assert_eq!(get(&m, "GGIO1$MX$AnOut$mxVal"), Some(mag));
}

#[test]
fn status_only_is_refused() {
    let mut m = model();
    assert_eq!(
        write(
            &mut m,
            1,
            "GGIO1$CO$SPCSO0$Oper",
            &params(OPER, Data::Boolean(true), 1)
        ),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
}

#[test]
fn sbo_normal_select_by_read_and_timeout() {
    let mut m = model();
    m.set_clock(10_000);
    let p = params(OPER, Data::Boolean(true), 1);
    assert_eq!(
        write(&mut m, 1, "GGIO1$CO$SPCSO2$Oper", &p),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
    assert_eq!(lae(&mut m, 1)[0].add_cause, AddCause::OBJECT_NOT_SELECTED);
    let sbo = ObjectName::domain(D, "GGIO1$CO$SPCSO2$SBO");
    assert_eq!(
        m.read(1, &sbo),
        AccessResult::Success(Data::VisibleString("IEDCTRL/GGIO1$CO$SPCSO2".into()))
    );
    assert_eq!(
        m.read(2, &sbo),
        AccessResult::Success(Data::VisibleString(String::new()))
    );
    // Past sboTimeout (500 ms).
    m.set_clock(10_600);
    assert_eq!(
        write(&mut m, 1, "GGIO1$CO$SPCSO2$Oper", &p),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
    assert_eq!(lae(&mut m, 1)[0].add_cause, AddCause::OBJECT_NOT_SELECTED);
    assert!(
        matches!(m.read(1, &sbo), AccessResult::Success(Data::VisibleString(s)) if !s.is_empty())
    );
    assert_eq!(write(&mut m, 1, "GGIO1$CO$SPCSO2$Oper", &p), Ok(()));
    assert_eq!(get(&m, "GGIO1$ST$SPCSO2$stVal"), Some(Data::Boolean(true)));
    // The association's end frees a selection.
    assert!(
        matches!(m.read(3, &sbo), AccessResult::Success(Data::VisibleString(s)) if !s.is_empty())
    );
    m.connection_closed(3);
    assert!(
        matches!(m.read(1, &sbo), AccessResult::Success(Data::VisibleString(s)) if !s.is_empty())
    );
}

#[test]
fn direct_enhanced_terminates_after_response() {
    let mut m = model();
    m.set_clock(5);
    let p = params(OPER, Data::Boolean(true), 3);
    assert_eq!(write(&mut m, 1, "GGIO1$CO$SPCSO3$Oper", &p), Ok(()));
    assert!(lae(&mut m, 1).is_empty());
    // Another connection is not told.
    assert!(terminations(&mut m, 2, 5).is_empty());
    let t = terminations(&mut m, 1, 5);
    assert_eq!(t.len(), 1);
    assert_eq!(
        (t[0].domain.as_str(), t[0].item.as_str()),
        (D, "GGIO1$CO$SPCSO3$Oper")
    );
    assert_eq!(t[0].error, None);
    assert_eq!(t[0].oper, p.to_data());
    // due_reports carries them too, once.
    write(&mut m, 1, "GGIO1$CO$SPCSO3$Oper", &p).unwrap();
    assert_eq!(m.due_reports(1, 6).len(), 1);
    assert!(m.due_reports(1, 7).is_empty());
}

#[test]
fn time_activated_operate_executes_at_oper_tm() {
    let mut m = model();
    m.set_clock(1_000);
    let mut p = params(OPER, Data::Boolean(true), 3);
    p.oper_tm = Some(utc_time(2_000));
    assert_eq!(write(&mut m, 1, "GGIO1$CO$SPCSO3$Oper", &p), Ok(()));
    assert!(terminations(&mut m, 1, 1_500).is_empty());
    assert_eq!(get(&m, "GGIO1$ST$SPCSO3$stVal"), Some(Data::Boolean(false)));
    let t = terminations(&mut m, 1, 2_000);
    assert_eq!(t.len(), 1);
    assert_eq!(get(&m, "GGIO1$ST$SPCSO3$stVal"), Some(Data::Boolean(true)));
}

#[test]
fn sbo_enhanced_dpc_position_interlock_and_cancel() {
    let mut m = model();
    m.set_clock(100);
    let sbow = |v, n| params(ControlService::SelectWithValue, Data::Boolean(v), n);
    // CSWI1.Pos is off: opening again is Position-reached.
    assert_eq!(
        write(&mut m, 1, "CSWI1$CO$Pos$SBOw", &sbow(false, 1)),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
    let l = lae(&mut m, 1);
    assert_eq!(l[0].add_cause, AddCause::POSITION_REACHED);
    assert_eq!(l[0].cntrl_obj, "IEDCTRL/CSWI1$CO$Pos$SBOw");
    // Close with interlock check: CILO1 EnaCls false.
    let mut close = sbow(true, 2);
    close.check = Some(Check {
        synchrocheck: false,
        interlock: true,
    });
    assert_eq!(
        write(&mut m, 1, "CSWI1$CO$Pos$SBOw", &close),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
    assert_eq!(
        lae(&mut m, 1)[0].add_cause,
        AddCause::BLOCKED_BY_INTERLOCKING
    );
    // Without the check the select succeeds; another client cannot operate or cancel.
    assert_eq!(
        write(&mut m, 1, "CSWI1$CO$Pos$SBOw", &sbow(true, 3)),
        Ok(())
    );
    let op = params(OPER, Data::Boolean(true), 3);
    assert_eq!(
        write(&mut m, 2, "CSWI1$CO$Pos$Oper", &op),
        Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
    );
    assert_eq!(
        lae(&mut m, 2)[0].add_cause,
        AddCause::LOCKED_BY_OTHER_CLIENT
    );
    // Cancel by the owner, then select and operate.
    assert_eq!(
        write(
            &mut m,
            1,
            "CSWI1$CO$Pos$Cancel",
            &params(ControlService::Cancel, Data::Boolean(true), 3)
        ),
        Ok(())
    );
    assert_eq!(
        write(&mut m, 1, "CSWI1$CO$Pos$Oper", &op),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
    assert_eq!(lae(&mut m, 1)[0].add_cause, AddCause::OBJECT_NOT_SELECTED);
    assert_eq!(
        write(&mut m, 1, "CSWI1$CO$Pos$SBOw", &sbow(true, 4)),
        Ok(())
    );
    let op = params(OPER, Data::Boolean(true), 4);
    assert_eq!(write(&mut m, 1, "CSWI1$CO$Pos$Oper", &op), Ok(()));
    assert_eq!(
        get(&m, "CSWI1$ST$Pos$stVal"),
        Some(BitString::with_bits(2, &[0]).to_data())
    );
    assert_eq!(terminations(&mut m, 1, 100)[0].error, None);
}

#[test]
fn mode_and_hierarchy_block() {
    let mut m = model();
    let p = params(OPER, Data::Boolean(true), 1);
    m.set_value(
        &ObjectName::domain(D, "LLN0$ST$Mod$stVal"),
        Data::Integer(5),
    )
    .unwrap();
    assert_eq!(
        write(&mut m, 1, "GGIO1$CO$SPCSO1$Oper", &p),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
    assert_eq!(lae(&mut m, 1)[0].add_cause, AddCause::BLOCKED_BY_MODE);
    // Test mode: only Test commands.
    m.set_value(
        &ObjectName::domain(D, "LLN0$ST$Mod$stVal"),
        Data::Integer(3),
    )
    .unwrap();
    assert!(write(&mut m, 1, "GGIO1$CO$SPCSO1$Oper", &p).is_err());
    assert_eq!(lae(&mut m, 1)[0].add_cause, AddCause::BLOCKED_BY_MODE);
    let mut t = p.clone();
    t.test = true;
    assert_eq!(write(&mut m, 1, "GGIO1$CO$SPCSO1$Oper", &t), Ok(()));
    assert_eq!(ln_class("Q0XCBR12"), "XCBR");
    assert_eq!(ln_class("CILO1"), "CILO");
    assert_eq!(ln_class("LN"), "LN");
}

#[test]
fn last_appl_error_precedes_the_write_response_on_the_wire() {
    use crate::association::{
        ClientAssociation, ClientConfig, ClientState, Event, ServerAssociation, ServerConfig,
    };
    use crate::pdu::ConfirmedResponse;
    use crate::service::{VariableAccessSpecification, WriteRequest};
    let mut m = model();
    let mut server = ServerAssociation::new(ServerConfig::default(), 1, 0);
    let mut client = ClientAssociation::new(ClientConfig::default());
    let pump = |c: &mut ClientAssociation, s: &mut ServerAssociation, m: &mut ServerModel| loop {
        let mut moved = false;
        while let Some(p) = c.poll_transmit() {
            s.handle_input(0, &p, m);
            moved = true;
        }
        while let Some(p) = s.poll_transmit() {
            c.handle_input(0, &p);
            moved = true;
        }
        if !moved {
            break;
        }
    };
    client.connect(0).unwrap();
    pump(&mut client, &mut server, &mut m);
    assert_eq!(client.state(), ClientState::Associated);
    while client.poll_event().is_some() {}
    // sbo-normal SPCSO2 operated without a select.
    let p = params(OPER, Data::Boolean(true), 4);
    client
        .write(
            0,
            WriteRequest {
                spec: VariableAccessSpecification::names([ObjectName::domain(
                    D,
                    "GGIO1$CO$SPCSO2$Oper",
                )]),
                data: vec![p.to_data()],
            },
        )
        .unwrap();
    pump(&mut client, &mut server, &mut m);
    let mut seen = Vec::new();
    while let Some(ev) = client.poll_event() {
        match ev {
            Event::InformationReport { report, .. } => {
                let l = LastApplError::from_information_report(&report)
                    .unwrap()
                    .unwrap();
                assert_eq!(l.add_cause, AddCause::OBJECT_NOT_SELECTED);
                assert_eq!(l.ctl_num, 4);
                seen.push("LastApplError");
            }
            Event::Response {
                response: ConfirmedResponse::Write(w),
                ..
            } => {
                assert_eq!(
                    w.first_failure(),
                    Some((0, DataAccessError::OBJECT_ACCESS_DENIED))
                );
                seen.push("Write");
            }
            _ => {}
        }
    }
    assert_eq!(seen, ["LastApplError", "Write"]);
}
