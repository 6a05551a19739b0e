use super::*;
use crate::association::ServerHandler;
use crate::report::{opt_flds, trg_ops, Report};
use crate::server_model::RcbConfig;
use crate::service::{ObjectName, TypeSpec};

const D: &str = "IED1LD0";

fn s(c: Vec<(&str, ModelNode)>) -> ModelNode {
    ModelNode::Struct(c.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
}

fn f32leaf(v: f32) -> ModelNode {
    ModelNode::leaf(
        TypeSpec::FloatingPoint {
            format_width: 32,
            exponent_width: 8,
        },
        Data::FloatingPoint32(v),
    )
}

fn with_qt(mut c: Vec<(&'static str, ModelNode)>) -> ModelNode {
    let mut q = BitString::new(13);
    q.set(0, true); // validity invalid until the first change
    c.push(("q", ModelNode::leaf(TypeSpec::BitString(-13), q.to_data())));
    c.push((
        "t",
        ModelNode::leaf(TypeSpec::UtcTime, Data::UtcTime([0; 8])),
    ));
    s(c)
}

fn model() -> ServerModel {
    let mut m = ServerModel::new("gander", "test", "1");
    m.add_domain(D).unwrap();
    let int = |v| ModelNode::leaf(TypeSpec::Integer(8), Data::Integer(v));
    m.add_logical_node(
        D,
        "LLN0",
        s(vec![(
            "ST",
            s(vec![("Mod", with_qt(vec![("stVal", int(1))]))]),
        )]),
    )
    .unwrap();
    m.add_logical_node(
        D,
        "GGIO1",
        s(vec![(
            "ST",
            s(vec![
                (
                    "Ind1",
                    with_qt(vec![(
                        "stVal",
                        ModelNode::leaf(TypeSpec::Boolean, Data::Boolean(false)),
                    )]),
                ),
                ("Health", with_qt(vec![("stVal", int(1))])),
            ]),
        )]),
    )
    .unwrap();
    m.add_logical_node(
        D,
        "XCBR1",
        s(vec![(
            "ST",
            s(vec![
                (
                    "Pos",
                    with_qt(vec![(
                        "stVal",
                        ModelNode::leaf(
                            TypeSpec::BitString(2),
                            BitString::with_bits(2, &[1]).to_data(),
                        ),
                    )]),
                ),
                // The local/remote switch a control is checked against: still.
                (
                    "Loc",
                    with_qt(vec![(
                        "stVal",
                        ModelNode::leaf(TypeSpec::Boolean, Data::Boolean(false)),
                    )]),
                ),
            ]),
        )]),
    )
    .unwrap();
    m.add_logical_node(
        D,
        "MMXU1",
        s(vec![(
            "MX",
            s(vec![(
                "TotW",
                with_qt(vec![("mag", s(vec![("f", f32leaf(1000.0))]))]),
            )]),
        )]),
    )
    .unwrap();
    let element = |i: usize| {
        s(vec![(
            "cVal",
            s(vec![("mag", s(vec![("f", f32leaf(i as f32))]))]),
        )])
    };
    m.add_logical_node(
        D,
        "MHAI1",
        s(vec![(
            "MX",
            s(vec![(
                "HA",
                with_qt(vec![(
                    "phsAHar",
                    ModelNode::Array((0..4).map(element).collect()),
                )]),
            )]),
        )]),
    )
    .unwrap();
    m.add_data_set(
        D,
        "LLN0$DS1",
        vec![
            ObjectName::domain(D, "GGIO1$ST$Ind1"),
            ObjectName::domain(D, "MMXU1$MX$TotW"),
            ObjectName::domain(D, "XCBR1$ST$Pos"),
        ],
    )
    .unwrap();
    m.add_rcb(RcbConfig {
        domain: D.into(),
        item: "LLN0$RP$urcb01".into(),
        buffered: false,
        rpt_id: "urcb".into(),
        data_set: "LLN0$DS1".into(),
        conf_rev: 1,
        opt_flds: BitString::with_bits(10, &[opt_flds::DATA_REF, opt_flds::REASON]),
        trg_ops: BitString::with_bits(6, &[trg_ops::DCHG]),
        buf_tm: 0,
        intg_pd: 0,
        resv_tms: false,
    })
    .unwrap();
    m
}

fn snapshot(m: &ServerModel) -> Vec<Data> {
    ["GGIO1", "XCBR1", "MMXU1", "MHAI1", "LLN0"]
        .iter()
        .map(|ln| m.value(&ObjectName::domain(D, *ln)).unwrap())
        .collect()
}

const T0: u64 = 1_700_000_000_000;

#[test]
fn points_are_measurands_and_status_but_not_the_device_state() {
    let mut m = model();
    m.enable_drift(DriftConfig::default());
    let d = m.drift_state().unwrap();
    // TotW.mag.f and the four harmonics; Ind1 and Pos (not Mod, Health or Loc).
    assert_eq!(d.points(), (5, 2));
    let keys: Vec<&str> = d.status.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, ["GGIO1$ST$Ind1$stVal", "XCBR1$ST$Pos$stVal"]);
    assert_eq!(d.analog[0].q.as_deref(), Some("MMXU1$MX$TotW$q"));
    assert_eq!(d.analog[1].key, "MHAI1$MX$HA$phsAHar$[0]$cVal$mag$f");
    assert_eq!(d.analog[1].t.as_deref(), Some("MHAI1$MX$HA$t"));
}

#[test]
fn static_model_stays_still() {
    let mut m = model();
    let before = snapshot(&m);
    for k in 0..10 {
        assert_eq!(m.drift(T0 + k * 1000), 0);
    }
    assert_eq!(snapshot(&m), before);
}

#[test]
fn rate_limited_and_deterministic() {
    let run = |seed| {
        let mut m = model();
        m.enable_drift(DriftConfig {
            seed,
            ..DriftConfig::default()
        });
        let made = [
            m.drift(T0),
            m.drift(T0 + 1000),
            m.drift(T0 + 1050),
            m.drift(T0 + 1100),
            m.drift(T0 + 1_000_000),
        ];
        (made, snapshot(&m))
    };
    let (made, a) = run(7);
    // None on the first call; 10/s; half a change owed each 50 ms; a stall is capped.
    assert_eq!(made, [0, 10, 0, 1, MAX_CHANGES_PER_CALL]);
    assert_eq!(run(7).1, a);
    assert_ne!(run(8).1, a);
}

#[test]
fn changes_set_quality_time_and_drive_data_change_reports() {
    let mut m = model();
    m.enable_drift(DriftConfig {
        changes_per_second: 1000,
        ..DriftConfig::default()
    });
    let rcb = |e: &str| ObjectName::domain(D, format!("LLN0$RP$urcb01${e}"));
    m.write(1, &rcb("RptEna"), &Data::Boolean(true)).unwrap();
    m.drift(T0);
    assert!(m.drift(T0 + 50) > 0);
    let irs = m.due_reports(1, T0 + 50);
    assert_eq!(irs.len(), 1, "one data-change report");
    let r = Report::from_information_report(&irs[0]).unwrap();
    assert!(!r.data_refs.is_empty());
    // Every member that changed carries good quality and the change time.
    for (name, v) in r.data_refs.iter().zip(&r.values) {
        let Data::Structure(parts) = v else {
            panic!("{name}")
        };
        // q and t close every data object here.
        let [.., q, t] = parts.as_slice() else {
            panic!("{name}")
        };
        assert_eq!(q, &BitString::new(13).to_data(), "{name}");
        assert_eq!(t, &Data::UtcTime(crate::model::utc_time(T0 + 50)), "{name}");
    }
    // Measurands stay near their configured value.
    let Some(Data::FloatingPoint32(w)) = m.value(&ObjectName::domain(D, "MMXU1$MX$TotW$mag$f"))
    else {
        panic!()
    };
    assert!((800.0..1200.0).contains(&w), "{w}");
    // The device's own state never moves.
    assert_eq!(
        m.value(&ObjectName::domain(D, "LLN0$ST$Mod$stVal")),
        Some(Data::Integer(1))
    );
}

#[test]
fn cheap_on_a_relay_sized_model() {
    // 20 000 measurands in 2 000 logical nodes (the SEL 451 corpus model has ~20k leaves):
    // a call makes at most MAX_CHANGES_PER_CALL changes whatever the size.
    let mut m = ServerModel::new("gander", "big", "1");
    m.add_domain(D).unwrap();
    for i in 0..2000 {
        let dos = (0..10)
            .map(|k| {
                (
                    format!("A{k}"),
                    with_qt(vec![("mag", s(vec![("f", f32leaf(k as f32))]))]),
                )
            })
            .collect();
        m.add_logical_node(
            D,
            &format!("MMXU{i}"),
            s(vec![("MX", ModelNode::Struct(dos))]),
        )
        .unwrap();
    }
    m.enable_drift(DriftConfig::default());
    assert_eq!(m.drift_state().unwrap().points(), (20_000, 0));
    m.drift(T0);
    let t = std::time::Instant::now();
    let made: usize = (1..=100).map(|k| m.drift(T0 + k * 1000)).sum();
    assert_eq!(made, 1000);
    // Generous: each change is a tree lookup, not a walk of the model.
    assert!(
        t.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn controllable_status_moves_only_by_control() {
    // An SPC (ST$SPCSO1$stVal with a CO$SPCSO1$Oper) next to an SPS: only the SPS toggles.
    let mut m = ServerModel::new("gander", "test", "1");
    m.add_domain(D).unwrap();
    let b = |v| ModelNode::leaf(TypeSpec::Boolean, Data::Boolean(v));
    m.add_logical_node(
        D,
        "GGIO1",
        s(vec![
            (
                "ST",
                s(vec![
                    ("SPCSO1", with_qt(vec![("stVal", b(false))])),
                    ("Ind1", with_qt(vec![("stVal", b(false))])),
                ]),
            ),
            (
                "CO",
                s(vec![(
                    "SPCSO1",
                    s(vec![("Oper", s(vec![("ctlVal", b(false))]))]),
                )]),
            ),
        ]),
    )
    .unwrap();
    m.enable_drift(DriftConfig::default());
    assert_eq!(m.drift_state().unwrap().points(), (0, 1));
}
