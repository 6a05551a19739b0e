//! The control fixture `tests/data/controls.cid` (one controllable object per ctlModel) read
//! through `scl_model` and operated by gander's sans-I/O client operation through the server
//! model's handler: the SCL's ctlModel/sboTimeout reach the control state machines, operates
//! change the status, refusals carry the right AddCause.

use gander_mms::association::ServerHandler;
use gander_mms::bit_string::BitString;
use gander_mms::control::{
    Check, ControlOperation, ControlOutcome, ControlParams, ControlRequest, ControlService,
    ControlTime, CtlModel,
};
use gander_mms::last_appl_error::{AddCause, Origin};
use gander_mms::model::utc_time;
use gander_mms::server_model::ServerModel;
use gander_mms::service::ObjectName;
use gander_peers::scl_model::load;
use gander_wire::data::Data;
use std::path::Path;

const D: &str = "CTRLLD0";

fn model() -> ServerModel {
    load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/controls.cid"),
        None,
        None,
    )
    .unwrap()
}

fn params(v: Data) -> ControlParams {
    ControlParams {
        service: ControlService::Operate,
        ctl_val: v,
        oper_tm: None,
        origin: Origin {
            or_cat: 3,
            or_ident: b"scl-test".to_vec(),
        },
        ctl_num: Some(1),
        t: ControlTime::Utc(utc_time(1_000)),
        test: false,
        check: Some(Check::default()),
    }
}

fn run(m: &mut ServerModel, object: &str, model: CtlModel, p: ControlParams) -> ControlOutcome {
    let mut op = ControlOperation::new(object, model, p).unwrap();
    let mut now = 1_000;
    while op.outcome().is_none() && now < 1_100 {
        now += 1;
        m.set_clock(now);
        match op.poll_request(now) {
            Some(ControlRequest::Read(n)) => {
                let r = m.read(1, &n);
                m.take_reports_before_response(1)
                    .iter()
                    .for_each(|ir| op.on_report(now, ir));
                op.on_read(now, &r);
            }
            Some(ControlRequest::Write(n, d)) => {
                let r = m.write(1, &n, &d);
                m.take_reports_before_response(1)
                    .iter()
                    .for_each(|ir| op.on_report(now, ir));
                op.on_write(now, r);
            }
            None => m
                .due_reports(1, now)
                .iter()
                .for_each(|ir| op.on_report(now, ir)),
        }
    }
    op.outcome().cloned().expect("the operation ended")
}

fn value(m: &ServerModel, item: &str) -> Option<Data> {
    m.value(&ObjectName::domain(D, item))
}

#[test]
fn every_ctl_model_of_the_fixture_operates() {
    let mut m = model();
    for (object, model) in [
        ("GGIO1.SPCSO1", CtlModel::DirectNormal),
        ("GGIO1.SPCSO2", CtlModel::SboNormal),
        ("GGIO1.SPCSO3", CtlModel::DirectEnhanced),
        ("GGIO1.SPCSO4", CtlModel::SboEnhanced),
    ] {
        let out = run(
            &mut m,
            &format!("{D}/{object}"),
            model,
            params(Data::Boolean(true)),
        );
        assert_eq!(out, ControlOutcome::Done, "{object}");
        let item = format!("{}$ST${}$stVal", &object[..5], &object[6..]);
        assert_eq!(value(&m, &item), Some(Data::Boolean(true)), "{object}");
    }
    // INC with operTm (0: now), APC to mxVal, DPC close.
    let mut p = params(Data::Integer(17));
    p.oper_tm = Some([0; 8]);
    assert_eq!(
        run(&mut m, "CTRLLD0/GGIO1.ISCSO1", CtlModel::DirectEnhanced, p),
        ControlOutcome::Done
    );
    assert_eq!(value(&m, "GGIO1$ST$ISCSO1$stVal"), Some(Data::Integer(17)));
    let mag = Data::Structure(vec![Data::FloatingPoint32(2.5)]);
    assert_eq!(
        run(
            &mut m,
            "CTRLLD0/GGIO1.APCSO1",
            CtlModel::DirectNormal,
            params(mag.clone())
        ),
        ControlOutcome::Done
    );
    assert_eq!(value(&m, "GGIO1$MX$APCSO1$mxVal"), Some(mag));
    assert_eq!(
        run(
            &mut m,
            "CTRLLD0/CSWI1.Pos",
            CtlModel::SboEnhanced,
            params(Data::Boolean(true))
        ),
        ControlOutcome::Done
    );
    assert_eq!(
        value(&m, "CSWI1$ST$Pos$stVal"),
        Some(BitString::with_bits(2, &[0]).to_data())
    );
}

#[test]
fn refusals_from_the_fixture() {
    let mut m = model();
    let cause = |o: ControlOutcome| match o {
        ControlOutcome::Refused {
            last_appl_error, ..
        } => last_appl_error.map(|l| l.add_cause),
        other => panic!("{other:?}"),
    };
    // status-only.
    assert_eq!(
        cause(run(
            &mut m,
            "CTRLLD0/GGIO1.SPCSO5",
            CtlModel::DirectNormal,
            params(Data::Boolean(true))
        )),
        None
    );
    // sbo-normal operated directly.
    assert_eq!(
        cause(run(
            &mut m,
            "CTRLLD0/GGIO1.SPCSO2",
            CtlModel::DirectNormal,
            params(Data::Boolean(true))
        )),
        Some(AddCause::OBJECT_NOT_SELECTED)
    );
    // Close with interlock check: CILO1.EnaCls is false.
    let mut p = params(Data::Boolean(true));
    p.check = Some(Check {
        synchrocheck: false,
        interlock: true,
    });
    assert_eq!(
        cause(run(&mut m, "CTRLLD0/CSWI1.Pos", CtlModel::SboEnhanced, p)),
        Some(AddCause::BLOCKED_BY_INTERLOCKING)
    );
    // Closed once, closing again is Position-reached.
    run(
        &mut m,
        "CTRLLD0/CSWI1.Pos",
        CtlModel::SboEnhanced,
        params(Data::Boolean(true)),
    );
    assert_eq!(
        cause(run(
            &mut m,
            "CTRLLD0/CSWI1.Pos",
            CtlModel::SboEnhanced,
            params(Data::Boolean(true))
        )),
        Some(AddCause::POSITION_REACHED)
    );
    // The SCL's sboTimeout (2000 ms) is the select's lifetime.
    let sbo = ObjectName::domain(D, "GGIO1$CO$SPCSO2$SBO");
    m.set_clock(10_000);
    assert!(
        matches!(m.read(1, &sbo), gander_mms::service::AccessResult::Success(Data::VisibleString(s)) if !s.is_empty())
    );
    m.set_clock(11_999);
    assert!(
        matches!(m.read(2, &sbo), gander_mms::service::AccessResult::Success(Data::VisibleString(s)) if s.is_empty())
    );
    m.set_clock(12_000);
    assert!(
        matches!(m.read(2, &sbo), gander_mms::service::AccessResult::Success(Data::VisibleString(s)) if !s.is_empty())
    );
}

#[test]
fn an_operate_fires_a_data_change_report() {
    use gander_mms::report::Report;
    let mut m = model();
    m.set_clock(1_000);
    let rpt_ena = ObjectName::domain(D, "LLN0$RP$rcbStatus01$RptEna");
    assert_eq!(m.write(1, &rpt_ena, &Data::Boolean(true)), Ok(()));
    // Nothing changed yet.
    assert!(m.due_reports(1, 1_001).is_empty());
    let mut p = params(Data::Boolean(true));
    p.test = true;
    // A Test command changes nothing, so no report.
    assert_eq!(
        run(&mut m, "CTRLLD0/GGIO1.SPCSO1", CtlModel::DirectNormal, p),
        ControlOutcome::Done
    );
    assert!(m.due_reports(1, 1_200).is_empty());
    assert_eq!(
        run(
            &mut m,
            "CTRLLD0/GGIO1.SPCSO1",
            CtlModel::DirectNormal,
            params(Data::Boolean(true))
        ),
        ControlOutcome::Done
    );
    let irs = m.due_reports(1, 1_300);
    assert_eq!(irs.len(), 1);
    let r = Report::from_information_report(&irs[0]).unwrap();
    let e = r.entries();
    // Member 0 is GGIO1.SPCSO1 [ST]: origin, ctlNum, stVal true, q good, t of the operate.
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].member, 0);
    let Data::Structure(st) = e[0].value else {
        panic!("{:?}", e[0].value)
    };
    assert_eq!(st[2], Data::Boolean(true));
    assert_eq!(st[3], BitString::new(13).to_data());
    assert!(matches!(st[4], Data::UtcTime(t) if t != [0; 8]));
}
