use super::*;
use crate::bit_string::BitString;
use crate::rcb::enable_reporting;
use crate::rcb_plan::{find_rcbs, RcbRef, RcbSnapshot};
use crate::report::{opt_flds, Report};
use crate::service::VariableAccessSpecification;

const D: &str = "FDRPROT";

fn leaf(ty: TypeSpec, v: Data) -> ModelNode {
    ModelNode::leaf(ty, v)
}

fn s(c: Vec<(&str, ModelNode)>) -> ModelNode {
    ModelNode::Struct(c.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
}

fn q() -> ModelNode {
    leaf(TypeSpec::BitString(-13), BitString::new(13).to_data())
}

fn t() -> ModelNode {
    leaf(TypeSpec::UtcTime, Data::UtcTime([0; 8]))
}

fn sample() -> ServerModel {
    let mut m = ServerModel::new("gander", "test", "1");
    m.add_domain(D).unwrap();
    let f32t = TypeSpec::FloatingPoint {
        format_width: 32,
        exponent_width: 8,
    };
    m.add_logical_node(
        D,
        "LLN0",
        s(vec![(
            "ST",
            s(vec![(
                "Mod",
                s(vec![
                    ("stVal", leaf(TypeSpec::Integer(8), Data::Integer(1))),
                    ("q", q()),
                    ("t", t()),
                ]),
            )]),
        )]),
    )
    .unwrap();
    // MX given before ST: the model puts ST first.
    m.add_logical_node(
        D,
        "GGIO1",
        s(vec![
            (
                "MX",
                s(vec![(
                    "AnIn1",
                    s(vec![
                        (
                            "mag",
                            s(vec![("f", leaf(f32t, Data::FloatingPoint32(0.5)))]),
                        ),
                        ("q", q()),
                        ("t", t()),
                    ]),
                )]),
            ),
            (
                "ST",
                s(vec![(
                    "Ind1",
                    s(vec![
                        ("stVal", leaf(TypeSpec::Boolean, Data::Boolean(false))),
                        ("q", q()),
                        ("t", t()),
                    ]),
                )]),
            ),
            (
                "CF",
                s(vec![(
                    "AnIn1",
                    s(vec![(
                        "units",
                        s(vec![(
                            "SIUnit",
                            leaf(TypeSpec::Integer(8), Data::Integer(5)),
                        )]),
                    )]),
                )]),
            ),
        ]),
    )
    .unwrap();
    m.add_data_set(
        D,
        "LLN0$DS1",
        vec![
            ObjectName::domain(D, "GGIO1$ST$Ind1"),
            ObjectName::domain(D, "GGIO1$MX$AnIn1"),
        ],
    )
    .unwrap();
    let base = RcbConfig {
        domain: D.into(),
        item: "LLN0$RP$urcb01".into(),
        buffered: false,
        rpt_id: "urcb".into(),
        data_set: "LLN0$DS1".into(),
        conf_rev: 7,
        opt_flds: BitString::with_bits(
            10,
            &[
                opt_flds::SEQ_NUM,
                opt_flds::DATA_SET,
                opt_flds::REASON,
                opt_flds::CONF_REV,
            ],
        ),
        trg_ops: BitString::with_bits(6, &[trg_ops::DCHG, trg_ops::GI]),
        buf_tm: 0,
        intg_pd: 0,
        resv_tms: false,
    };
    m.add_rcb(base.clone()).unwrap();
    m.add_rcb(RcbConfig {
        item: "LLN0$BR$brcb01".into(),
        buffered: true,
        rpt_id: "brcb".into(),
        opt_flds: BitString::with_bits(10, &[opt_flds::SEQ_NUM, opt_flds::ENTRY_ID]),
        trg_ops: BitString::with_bits(6, &[trg_ops::DCHG, trg_ops::INTEGRITY, trg_ops::GI]),
        intg_pd: 1000,
        resv_tms: true,
        ..base
    })
    .unwrap();
    m.choose_stimuli();
    m
}

fn enable(m: &mut ServerModel, conn: ConnId, item: &str, gi: bool) {
    let w = enable_reporting(&ObjectName::domain(D, item), gi);
    let VariableAccessSpecification::ListOfVariable(names) = &w.spec else {
        panic!()
    };
    for (n, d) in names.iter().zip(&w.data) {
        assert_eq!(m.write(conn, &n.name, d), Ok(()), "{}", n.name);
    }
}

#[test]
fn directory_answers() {
    let mut m = sample();
    assert_eq!(
        ServerModel::name_list(&m, ObjectClass::DOMAIN, &ObjectScope::Vmd).unwrap(),
        [D]
    );
    let vars = ServerModel::name_list(
        &m,
        ObjectClass::NAMED_VARIABLE,
        &ObjectScope::Domain(D.into()),
    )
    .unwrap();
    for v in [
        "LLN0",
        "LLN0$ST$Mod$stVal",
        "LLN0$RP$urcb01$RptID",
        "LLN0$BR$brcb01$EntryID",
        "LLN0$BR$brcb01$ResvTms",
        "GGIO1$MX$AnIn1$mag$f",
    ] {
        assert!(vars.contains(&v.to_string()), "{v} missing");
    }
    let mut sorted = vars.clone();
    sorted.sort();
    assert_eq!(vars, sorted);
    assert_eq!(
        ServerModel::name_list(
            &m,
            ObjectClass::NAMED_VARIABLE_LIST,
            &ObjectScope::Domain(D.into())
        )
        .unwrap(),
        ["LLN0$DS1"]
    );
    assert!(ServerModel::name_list(
        &m,
        ObjectClass::NAMED_VARIABLE,
        &ObjectScope::Domain("X".into())
    )
    .is_err());
    // FC-first and in FC order, RCBs spliced in after ST.
    let ty = |m: &mut ServerModel, item: &str| {
        m.variable_access_attributes(1, &ObjectName::domain(D, item))
            .unwrap()
            .map(|r| r.type_spec)
    };
    let TypeSpec::Structure { components, .. } = ty(&mut m, "GGIO1").unwrap() else {
        panic!()
    };
    let names: Vec<_> = components
        .iter()
        .filter_map(|c| c.name.as_deref())
        .collect();
    assert_eq!(names, ["ST", "MX", "CF"]);
    let TypeSpec::Structure { components, .. } = ty(&mut m, "LLN0").unwrap() else {
        panic!()
    };
    let names: Vec<_> = components
        .iter()
        .filter_map(|c| c.name.as_deref())
        .collect();
    assert_eq!(names, ["ST", "RP", "BR"]);
    assert_eq!(
        ty(&mut m, "GGIO1$MX$AnIn1$mag$f").unwrap(),
        TypeSpec::FloatingPoint {
            format_width: 32,
            exponent_width: 8
        }
    );
    assert!(ty(&mut m, "GGIO1$MX$Nope").is_err());
    let ds = m
        .named_variable_list_attributes(1, &ObjectName::domain(D, "LLN0$DS1"))
        .unwrap()
        .unwrap();
    assert_eq!(ds.members.len(), 2);
    // gander's own client discovery finds and plans both control blocks.
    let rcbs = find_rcbs(D, &vars);
    assert_eq!(rcbs.len(), 2);
    for r in rcbs {
        let t = ty(&mut m, &r.item()).unwrap();
        let v = m.value(&r.object_name()).unwrap();
        let snap = RcbSnapshot::from_type_and_value(r.clone(), &t, &v).unwrap();
        snap.check_free().unwrap();
    }
    let b = ty(&mut m, "LLN0$BR$brcb01").unwrap();
    assert_eq!(b.component("SqNum"), Some(&TypeSpec::Unsigned(16)));
    let u = ty(&mut m, "LLN0$RP$urcb01").unwrap();
    assert_eq!(u.component("SqNum"), Some(&TypeSpec::Unsigned(8)));
    assert!(RcbRef::parse(D, "LLN0$BR$brcb01").is_some());
}

#[test]
fn reads_and_writes() {
    let mut m = sample();
    assert_eq!(
        m.read(1, &ObjectName::domain(D, "GGIO1$ST$Ind1")),
        AccessResult::Success(Data::Structure(vec![
            Data::Boolean(false),
            BitString::new(13).to_data(),
            Data::UtcTime([0; 8])
        ]))
    );
    assert_eq!(
        m.read(1, &ObjectName::domain(D, "LLN0$RP$urcb01$ConfRev")),
        AccessResult::Success(Data::Unsigned(7))
    );
    assert_eq!(
        m.read_list(1, &ObjectName::domain(D, "LLN0$DS1"))
            .unwrap()
            .len(),
        2
    );
    assert!(m.read_list(1, &ObjectName::domain(D, "LLN0$DS9")).is_none());
    let cf = ObjectName::domain(D, "GGIO1$CF$AnIn1$units$SIUnit");
    assert_eq!(m.write(1, &cf, &Data::Integer(9)), Ok(()));
    assert_eq!(m.value(&cf), Some(Data::Integer(9)));
    assert_eq!(
        m.write(1, &cf, &Data::Boolean(true)),
        Err(DataAccessError::TYPE_INCONSISTENT)
    );
    assert_eq!(
        m.write(
            1,
            &ObjectName::domain(D, "GGIO1$ST$Ind1$stVal"),
            &Data::Boolean(true)
        ),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
    assert_eq!(
        m.write(
            1,
            &ObjectName::domain(D, "GGIO1$ST$Nope"),
            &Data::Boolean(true)
        ),
        Err(DataAccessError::OBJECT_NON_EXISTENT)
    );
    // BRCB: no Resv; ResvTms and EntryID rules; ConfRev denied.
    let br = |e: &str| ObjectName::domain(D, format!("LLN0$BR$brcb01${e}"));
    assert_eq!(
        m.write(1, &br("Resv"), &Data::Boolean(true)),
        Err(DataAccessError::OBJECT_NON_EXISTENT)
    );
    assert_eq!(m.write(1, &br("ResvTms"), &Data::Integer(30)), Ok(()));
    assert_eq!(
        m.write(2, &br("ResvTms"), &Data::Integer(30)),
        Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
    );
    assert_eq!(
        m.write(1, &br("EntryID"), &Data::OctetString(vec![0; 8])),
        Ok(())
    );
    assert_eq!(
        m.write(1, &br("EntryID"), &Data::OctetString(vec![9; 8])),
        Err(DataAccessError::OBJECT_VALUE_INVALID)
    );
    assert_eq!(m.write(1, &br("PurgeBuf"), &Data::Boolean(true)), Ok(()));
    assert_eq!(
        m.write(1, &br("ConfRev"), &Data::Unsigned(1)),
        Err(DataAccessError::OBJECT_ACCESS_DENIED)
    );
    m.connection_closed(1);
    assert_eq!(m.write(2, &br("ResvTms"), &Data::Integer(5)), Ok(()));
}

#[test]
fn build_errors_name_the_problem() {
    let mut m = sample();
    assert_eq!(m.add_domain(D), Err(ModelError::DuplicateDomain(D.into())));
    assert!(matches!(
        m.add_data_set(D, "LLN0$DS2", vec![ObjectName::domain(D, "GGIO1$ST$Ind9")]),
        Err(ModelError::UnknownMember { .. })
    ));
    assert!(matches!(
        m.add_data_set(D, "LLN0$DS1", vec![]),
        Err(ModelError::Duplicate { .. })
    ));
    let cfg = m.rcbs()[0].config.clone();
    assert!(matches!(
        m.add_rcb(cfg.clone()),
        Err(ModelError::Duplicate { .. })
    ));
    let e = m
        .add_rcb(RcbConfig {
            item: "LLN0$RP$x01".into(),
            data_set: "LLN0$DS7".into(),
            ..cfg.clone()
        })
        .unwrap_err();
    assert!(e.to_string().contains("DS7"), "{e}");
    assert!(m
        .add_rcb(RcbConfig {
            item: "LLN0$BR$x01".into(),
            ..cfg
        })
        .is_err());
    assert!(matches!(
        m.add_logical_node(D, "X", leaf(TypeSpec::Boolean, Data::Boolean(true))),
        Err(ModelError::NotAStructure { .. })
    ));
}

#[test]
fn reports_gi_dchg_integrity_and_entry_ids() {
    let mut m = sample();
    assert_eq!(m.stimuli().len(), 1);
    assert_eq!(
        m.stimuli()[0].value,
        ObjectName::domain(D, "GGIO1$ST$Ind1$stVal")
    );
    assert!(m.due_reports(1, 0).is_empty());
    enable(&mut m, 1, "LLN0$RP$urcb01", true);
    assert!(m.reports_enabled(1) && !m.reports_enabled(2));
    let r = m.due_reports(1, 1_000);
    assert_eq!(r.len(), 1);
    let gi = Report::from_information_report(&r[0]).unwrap();
    assert_eq!(gi.rpt_id, "urcb");
    assert_eq!(gi.values.len(), 2);
    // OptFlds as the client wrote them (no conf-revision), not as configured.
    assert_eq!(gi.conf_rev, None);
    assert!(gi.time_of_entry.is_some());
    assert_eq!(gi.data_set.as_deref(), Some("FDRPROT/LLN0$DS1"));
    assert_eq!(gi.reasons[0], BitString::with_bits(6, &[trg_ops::GI]));
    // Nothing new until the stimulus changes Ind1.
    assert!(m.due_reports(1, 1_001).is_empty());
    m.step_stimuli(1_700_000_000_000);
    let r = m.due_reports(1, 1_002);
    let d = Report::from_information_report(&r[0]).unwrap();
    assert_eq!(d.seq_num, Some(1));
    assert_eq!(d.inclusion.ones().collect::<Vec<_>>(), [0]);
    let Data::Structure(v) = &d.values[0] else {
        panic!()
    };
    assert_eq!(v[0], Data::Boolean(true));
    assert_eq!(
        v[2],
        Data::UtcTime(crate::model::utc_time(1_700_000_000_000))
    );
    // The buffered RCB: integrity after IntgPd, EntryID moving.
    enable(&mut m, 2, "LLN0$BR$brcb01", false);
    let br = ObjectName::domain(D, "LLN0$BR$brcb01$TrgOps");
    assert_eq!(
        m.write(2, &br, &Data::Boolean(true)),
        Err(DataAccessError::TYPE_INCONSISTENT)
    );
    assert!(m.due_reports(2, 10_000).is_empty());
    // enable_reporting wrote TrgOps dchg+GI: no integrity, so check data change.
    m.step_stimuli(1_700_000_000_100);
    let r = m.due_reports(2, 10_001);
    assert_eq!(r.len(), 1);
    let b = Report::from_information_report(&r[0]).unwrap();
    assert_eq!(b.entry_id, None, "the client's OptFlds have no entryID");
    assert_eq!(
        m.value(&ObjectName::domain(D, "LLN0$BR$brcb01$EntryID")),
        Some(Data::OctetString(1u64.to_be_bytes().to_vec()))
    );
    // Connection 1 also got the change.
    assert_eq!(m.due_reports(1, 10_002).len(), 1);
}

#[test]
fn integrity_period() {
    let mut m = sample();
    let n = |e: &str| ObjectName::domain(D, format!("LLN0$BR$brcb01${e}"));
    assert_eq!(m.write(3, &n("RptEna"), &Data::Boolean(true)), Ok(()));
    assert!(m.due_reports(3, 5_000).is_empty());
    assert!(m.due_reports(3, 5_999).is_empty());
    let r = m.due_reports(3, 6_000);
    assert_eq!(r.len(), 1);
    let i = Report::from_information_report(&r[0]).unwrap();
    assert_eq!(i.inclusion.ones().count(), 2);
    // The configured OptFlds (seq-num, entryID) are honoured: EntryID present, no DatSet.
    assert_eq!(i.entry_id, Some(1u64.to_be_bytes().to_vec()));
    assert_eq!(i.data_set, None);
    assert_eq!(i.reasons.len(), 0);
    assert!(m.due_reports(3, 6_500).is_empty());
    assert_eq!(m.due_reports(3, 7_000).len(), 1);
}
