use super::*;
use crate::control::params::{Check, ControlTime};
use crate::model::utc_time;

const REF: &str = "IEDLD0/CSWI1$CO$Pos";

fn obj(model: CtlModel) -> ControlObject {
    ControlObject::new(
        REF,
        ControlConfig {
            model,
            sbo_timeout_ms: 1000,
            sbo_class: SboClass::OperateOnce,
        },
    )
}

fn params(service: ControlService, v: bool, n: u8) -> ControlParams {
    ControlParams {
        service,
        ctl_val: gander_wire::data::Data::Boolean(v),
        oper_tm: None,
        origin: Origin {
            or_cat: 3,
            or_ident: b"op".to_vec(),
        },
        ctl_num: Some(n),
        t: ControlTime::Utc(utc_time(1_000)),
        test: false,
        check: (service != ControlService::Cancel).then_some(Check::default()),
    }
}

fn oper(v: bool, n: u8) -> ControlParams {
    params(ControlService::Operate, v, n)
}

fn cause(d: &Decision) -> Option<(DataAccessError, AddCause)> {
    match d {
        Decision::Refuse {
            error,
            last_appl_error,
        } => Some((
            *error,
            last_appl_error
                .as_ref()
                .map_or(AddCause(-1), |l| l.add_cause),
        )),
        Decision::Accept { .. } => None,
    }
}

fn executes(d: &Decision) -> bool {
    matches!(
        d,
        Decision::Accept {
            execute: Some(_),
            ..
        }
    )
}

#[test]
fn status_only_refuses_everything() {
    let mut o = obj(CtlModel::StatusOnly);
    let d = o.write(0, 1, oper(true, 1), Ok(()));
    assert_eq!(
        d,
        Decision::Refuse {
            error: DataAccessError::OBJECT_ACCESS_DENIED,
            last_appl_error: None
        }
    );
    assert_eq!(o.select(0, 1, Ok(())), None);
}

#[test]
fn direct_normal_operates_and_refuses_with_process_cause() {
    let mut o = obj(CtlModel::DirectNormal);
    assert!(executes(&o.write(0, 1, oper(true, 1), Ok(()))));
    assert_eq!(o.state(), &ControlState::Unselected);
    let d = o.write(0, 1, oper(true, 2), Err(AddCause::BLOCKED_BY_INTERLOCKING));
    assert_eq!(
        cause(&d),
        Some((
            DataAccessError::OBJECT_ACCESS_DENIED,
            AddCause::BLOCKED_BY_INTERLOCKING
        ))
    );
    let Decision::Refuse {
        last_appl_error: Some(l),
        ..
    } = d
    else {
        panic!()
    };
    assert_eq!(l.cntrl_obj, "IEDLD0/CSWI1$CO$Pos$Oper");
    assert_eq!(l.ctl_num, 2);
    // No termination with normal security; no SBO.
    assert_eq!(o.executed(&oper(true, 1), Ok(())), None);
    assert_eq!(o.select(0, 1, Ok(())), None);
    let d = o.write(
        0,
        1,
        params(ControlService::SelectWithValue, true, 1),
        Ok(()),
    );
    assert_eq!(
        cause(&d),
        Some((DataAccessError::OBJECT_ACCESS_DENIED, AddCause(-1)))
    );
}

#[test]
fn sbo_normal_select_timeout_and_owner() {
    let mut o = obj(CtlModel::SboNormal);
    // Operate without select.
    assert_eq!(
        cause(&o.write(0, 1, oper(true, 1), Ok(()))),
        Some((
            DataAccessError::OBJECT_ACCESS_DENIED,
            AddCause::OBJECT_NOT_SELECTED
        ))
    );
    assert_eq!(o.select(10, 1, Ok(())), Some(REF.to_string()));
    // Selected: a second select fails, another client is locked out.
    assert_eq!(o.select(20, 2, Ok(())), None);
    assert_eq!(
        cause(&o.write(30, 2, oper(true, 1), Ok(()))),
        Some((
            DataAccessError::TEMPORARILY_UNAVAILABLE,
            AddCause::LOCKED_BY_OTHER_CLIENT
        ))
    );
    assert_eq!(
        cause(&o.write(30, 2, params(ControlService::Cancel, true, 1), Ok(()))),
        Some((
            DataAccessError::TEMPORARILY_UNAVAILABLE,
            AddCause::LOCKED_BY_OTHER_CLIENT
        ))
    );
    // The select times out after sboTimeout (1000 ms).
    o.tick(1009);
    assert!(matches!(o.state(), ControlState::Ready { .. }));
    o.tick(1010);
    assert_eq!(o.state(), &ControlState::Unselected);
    // Select, operate: operate-once unselects.
    assert!(o.select(2000, 1, Ok(())).is_some());
    assert!(executes(&o.write(2001, 1, oper(true, 1), Ok(()))));
    assert_eq!(o.state(), &ControlState::Unselected);
    // Select, cancel.
    assert!(o.select(3000, 1, Ok(())).is_some());
    assert!(!executes(&o.write(
        3001,
        1,
        params(ControlService::Cancel, true, 1),
        Ok(())
    )));
    assert_eq!(o.state(), &ControlState::Unselected);
    // A blocked object cannot be selected.
    assert_eq!(o.select(4000, 1, Err(AddCause::BLOCKED_BY_MODE)), None);
    // Connection loss ends the selection.
    assert!(o.select(5000, 7, Ok(())).is_some());
    o.connection_closed(7);
    assert_eq!(o.state(), &ControlState::Unselected);
}

#[test]
fn sbo_enhanced_parameters_must_repeat() {
    let mut o = obj(CtlModel::SboEnhanced);
    let sel = params(ControlService::SelectWithValue, true, 5);
    assert_eq!(
        o.write(0, 1, sel.clone(), Ok(())),
        Decision::Accept {
            execute: None,
            terminated: None
        }
    );
    assert_eq!(
        cause(&o.write(1, 1, sel.clone(), Ok(()))),
        Some((
            DataAccessError::TEMPORARILY_UNAVAILABLE,
            AddCause::OBJECT_ALREADY_SELECTED
        ))
    );
    // A different ctlVal: inconsistent, and the selection ends.
    assert_eq!(
        cause(&o.write(2, 1, oper(false, 5), Ok(()))),
        Some((
            DataAccessError::OBJECT_ACCESS_DENIED,
            AddCause::INCONSISTENT_PARAMETERS
        ))
    );
    assert_eq!(o.state(), &ControlState::Unselected);
    // The same command operates; a positive termination follows.
    o.write(3, 1, sel, Ok(()));
    let mut op = oper(true, 5);
    op.t = ControlTime::Utc(utc_time(9_000));
    let d = o.write(4, 1, op.clone(), Ok(()));
    assert!(executes(&d));
    let t = o.executed(&op, Ok(())).unwrap();
    assert_eq!(
        (t.domain.as_str(), t.item.as_str()),
        ("IEDLD0", "CSWI1$CO$Pos$Oper")
    );
    assert_eq!(t.error, None);
    let t = o.executed(&op, Err(AddCause::TIME_LIMIT_OVER)).unwrap();
    assert_eq!(t.error.unwrap().add_cause, AddCause::TIME_LIMIT_OVER);
    // A refused select names SBOw.
    let d = o.write(
        10,
        1,
        params(ControlService::SelectWithValue, true, 6),
        Err(AddCause::BLOCKED_BY_MODE),
    );
    let Decision::Refuse {
        last_appl_error: Some(l),
        ..
    } = d
    else {
        panic!()
    };
    assert_eq!(l.cntrl_obj, "IEDLD0/CSWI1$CO$Pos$SBOw");
    assert_eq!(l.add_cause, AddCause::BLOCKED_BY_MODE);
    // SBO read is not enhanced security's select.
    assert_eq!(o.select(20, 1, Ok(())), None);
}

#[test]
fn operate_many_stays_selected() {
    let mut o = ControlObject::new(
        REF,
        ControlConfig {
            model: CtlModel::SboNormal,
            sbo_timeout_ms: 0,
            sbo_class: SboClass::OperateMany,
        },
    );
    assert!(o.select(0, 1, Ok(())).is_some());
    assert!(executes(&o.write(1, 1, oper(true, 1), Ok(()))));
    assert!(executes(&o.write(2, 1, oper(false, 2), Ok(()))));
    // Default timeout 30 s from the last operate.
    o.tick(30_001);
    assert!(matches!(o.state(), ControlState::Ready { .. }));
    o.tick(30_002);
    assert_eq!(o.state(), &ControlState::Unselected);
}

#[test]
fn time_activated_operate_waits_and_cancels() {
    let mut o = obj(CtlModel::DirectEnhanced);
    let mut op = oper(true, 1);
    op.oper_tm = Some(utc_time(5_000));
    assert_eq!(
        o.write(1_000, 1, op.clone(), Ok(())),
        Decision::Accept {
            execute: None,
            terminated: None
        }
    );
    assert!(matches!(
        o.state(),
        ControlState::WaitForActivationTime { at_ms: 5_000, .. }
    ));
    assert_eq!(
        cause(&o.write(1_001, 1, oper(true, 2), Ok(()))),
        Some((
            DataAccessError::TEMPORARILY_UNAVAILABLE,
            AddCause::COMMAND_ALREADY_IN_EXECUTION
        ))
    );
    assert_eq!(o.due(4_999), None);
    assert_eq!(o.due(5_000), Some((1, op.clone())));
    assert_eq!(o.state(), &ControlState::Unselected);
    // Cancelled before operTm: negative termination, Abortion-by-cancel.
    o.write(
        6_000,
        1,
        {
            let mut p = op.clone();
            p.oper_tm = Some(utc_time(9_000));
            p
        },
        Ok(()),
    );
    let d = o.write(6_001, 1, params(ControlService::Cancel, true, 1), Ok(()));
    let Decision::Accept {
        execute: None,
        terminated: Some(t),
    } = d
    else {
        panic!("{d:?}")
    };
    assert_eq!(t.error.unwrap().add_cause, AddCause::ABORTION_BY_CANCEL);
    assert_eq!(o.due(10_000), None);
    // An operTm in the past executes at once.
    let mut past = oper(true, 3);
    past.oper_tm = Some(utc_time(100));
    assert!(executes(&o.write(11_000, 1, past, Ok(()))));
}

#[test]
fn utc_ms_inverts_utc_time() {
    for ms in [0u64, 1, 999, 1_700_000_000_123, 4_000_000_000_999] {
        assert_eq!(utc_ms(&utc_time(ms)), ms, "{ms}");
    }
}

#[test]
fn model_codes() {
    for c in 0..5 {
        assert_eq!(CtlModel::from_code(c).unwrap().code(), c);
    }
    assert_eq!(CtlModel::from_code(5), None);
    assert!(CtlModel::SboEnhanced.is_sbo() && CtlModel::SboEnhanced.is_enhanced());
    assert!(!CtlModel::DirectNormal.is_sbo() && !CtlModel::DirectNormal.is_enhanced());
}
