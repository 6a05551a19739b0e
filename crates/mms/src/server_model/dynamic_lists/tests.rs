//! Dynamic data sets on a small model with an array data object (the shape of an MHAI's
//! `HA.phsAHar`, as libiec61850's `lib_mhai_array` sample model has it).

use super::*;
use crate::association::ServerHandler;
use crate::bit_string::BitString;
use crate::report::{opt_flds, trg_ops, Report};
use crate::server_model::RcbConfig;
use crate::service::{DataAccessError, TypeSpec};
use crate::service::{ObjectClass, ObjectScope};

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

fn qt() -> Vec<(&'static str, ModelNode)> {
    vec![
        (
            "q",
            ModelNode::leaf(TypeSpec::BitString(-13), BitString::new(13).to_data()),
        ),
        (
            "t",
            ModelNode::leaf(TypeSpec::UtcTime, Data::UtcTime([0; 8])),
        ),
    ]
}

pub(crate) fn model() -> ServerModel {
    let mut m = ServerModel::new("gander", "test", "1");
    m.add_domain(D).unwrap();
    m.add_logical_node(
        D,
        "LLN0",
        s(vec![(
            "ST",
            s(vec![(
                "Mod",
                s(vec![(
                    "stVal",
                    ModelNode::leaf(TypeSpec::Integer(8), Data::Integer(1)),
                )]),
            )]),
        )]),
    )
    .unwrap();
    let mut totw = vec![("mag", s(vec![("f", f32leaf(100.0))]))];
    totw.extend(qt());
    m.add_logical_node(D, "MMXU1", s(vec![("MX", s(vec![("TotW", s(totw))]))]))
        .unwrap();
    let element = |i: usize| {
        s(vec![(
            "cVal",
            s(vec![("mag", s(vec![("f", f32leaf(i as f32))]))]),
        )])
    };
    let mut ha = vec![("phsAHar", ModelNode::Array((0..4).map(element).collect()))];
    ha.extend(qt());
    m.add_logical_node(D, "MHAI1", s(vec![("MX", s(vec![("HA", s(ha))]))]))
        .unwrap();
    m.add_data_set(D, "LLN0$DS1", vec![ObjectName::domain(D, "MMXU1$MX$TotW")])
        .unwrap();
    let base = RcbConfig {
        domain: D.into(),
        item: "LLN0$RP$urcb01".into(),
        buffered: false,
        rpt_id: "urcb".into(),
        data_set: "LLN0$DS1".into(),
        conf_rev: 1,
        opt_flds: BitString::with_bits(
            10,
            &[opt_flds::DATA_SET, opt_flds::DATA_REF, opt_flds::REASON],
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
        ..base
    })
    .unwrap();
    m
}

fn element(i: u32, component: Option<&str>) -> VariableRef {
    let access = match component {
        None => AlternateAccess(vec![Selection::Select(AccessSelection::Index(i))]),
        Some(c) => AlternateAccess(vec![Selection::SelectAlternate(
            AccessSelection::Index(i),
            AlternateAccess::component_path(c).unwrap(),
        )]),
    };
    VariableRef {
        name: ObjectName::domain(D, "MHAI1$MX$HA$phsAHar"),
        access: Some(access),
    }
}

fn define(name: ObjectName, members: Vec<VariableRef>) -> DefineNamedVariableListRequest {
    DefineNamedVariableListRequest { name, members }
}

fn totw() -> VariableRef {
    ObjectName::domain(D, "MMXU1$MX$TotW").into()
}

fn code_of(e: ServiceError) -> (u8, i64) {
    (e.class, e.code)
}

#[test]
fn association_specific_lives_and_dies_with_its_association() {
    let mut m = model();
    let aa = ObjectName::AaSpecific("dyn".into());
    m.define_list(
        1,
        &define(aa.clone(), vec![totw(), element(2, Some("cVal"))]),
        65000,
    )
    .unwrap();
    // Only association 1 sees it, in the aa-specific scope.
    let names = |m: &mut ServerModel, conn| {
        ServerHandler::name_list(
            m,
            conn,
            ObjectClass::NAMED_VARIABLE_LIST,
            &ObjectScope::Association,
        )
        .unwrap()
        .unwrap()
    };
    assert_eq!(names(&mut m, 1), ["dyn"]);
    assert!(names(&mut m, 2).is_empty());
    let a = m.named_variable_list_attributes(1, &aa).unwrap().unwrap();
    assert!(a.deletable);
    assert_eq!(a.members[1], element(2, Some("cVal")));
    assert!(m.named_variable_list_attributes(2, &aa).unwrap().is_err());
    let read = m.read_list(1, &aa).unwrap();
    assert_eq!(
        read[1],
        AccessResult::Success(Data::Structure(vec![Data::Structure(vec![
            Data::FloatingPoint32(2.0)
        ])]))
    );
    assert!(m.read_list(2, &aa).is_none());
    // Another association may use the same name for its own list.
    m.define_list(2, &define(aa.clone(), vec![totw()]), 65000)
        .unwrap();
    m.connection_closed(1);
    assert!(names(&mut m, 1).is_empty());
    assert_eq!(names(&mut m, 2), ["dyn"]);
}

#[test]
fn persistent_is_seen_by_all_and_deletable_unlike_scl_ones() {
    let mut m = model();
    let p = ObjectName::domain(D, "LLN0$dyn1");
    m.define_list(1, &define(p.clone(), vec![element(3, None)]), 65000)
        .unwrap();
    m.connection_closed(1);
    let dom = ObjectScope::Domain(D.into());
    assert_eq!(
        ServerHandler::name_list(&mut m, 2, ObjectClass::NAMED_VARIABLE_LIST, &dom)
            .unwrap()
            .unwrap(),
        ["LLN0$DS1", "LLN0$dyn1"]
    );
    assert!(
        m.named_variable_list_attributes(2, &p)
            .unwrap()
            .unwrap()
            .deletable
    );
    let scl = ObjectName::domain(D, "LLN0$DS1");
    assert!(
        !m.named_variable_list_attributes(2, &scl)
            .unwrap()
            .unwrap()
            .deletable
    );
    // The configured one matches but stays; the dynamic one goes.
    let r = m
        .delete_lists(
            2,
            &DeleteNamedVariableListRequest::specific(vec![scl.clone(), p.clone()]),
        )
        .unwrap();
    assert_eq!(
        r,
        DeleteNamedVariableListResponse {
            matched: 2,
            deleted: 1
        }
    );
    assert!(m.list_for(2, &p).is_none());
    assert!(m.list_for(2, &scl).is_some());
    // Unknown names do not match.
    let r = m
        .delete_lists(
            2,
            &DeleteNamedVariableListRequest::specific(vec![ObjectName::AaSpecific("x".into())]),
        )
        .unwrap();
    assert_eq!((r.matched, r.deleted), (0, 0));
}

#[test]
fn define_refusals_carry_iso_9506_codes() {
    let mut m = model();
    let aa = |n: &str| ObjectName::AaSpecific(n.into());
    m.define_list(1, &define(aa("a"), vec![totw()]), 65000)
        .unwrap();
    let cases: Vec<(DefineNamedVariableListRequest, usize, (u8, i64))> = vec![
        (define(aa("a"), vec![totw()]), 65000, code::DEF_EXISTS),
        (
            define(ObjectName::domain(D, "LLN0$DS1"), vec![totw()]),
            65000,
            code::DEF_EXISTS,
        ),
        (
            define(aa("b"), vec![ObjectName::domain(D, "MMXU1$MX$Nope").into()]),
            65000,
            code::DEF_UNDEFINED,
        ),
        // A functional constraint alone is not an FCD.
        (
            define(aa("b"), vec![ObjectName::domain(D, "MMXU1$MX").into()]),
            65000,
            code::DEF_UNDEFINED,
        ),
        // Control blocks are not data.
        (
            define(
                aa("b"),
                vec![ObjectName::domain(D, "LLN0$RP$urcb01").into()],
            ),
            65000,
            code::DEF_UNDEFINED,
        ),
        (
            define(aa("b"), vec![element(4, None)]),
            65000,
            code::DEF_UNDEFINED,
        ),
        (
            define(aa("b"), vec![element(1, Some("nope"))]),
            65000,
            code::DEF_UNDEFINED,
        ),
        (
            define(
                aa("b"),
                vec![VariableRef {
                    name: ObjectName::domain(D, "MHAI1$MX$HA$phsAHar"),
                    access: Some(AlternateAccess(vec![Selection::Select(
                        AccessSelection::IndexRange { low: 0, count: 2 },
                    )])),
                }],
            ),
            65000,
            code::DEF_INVALID_ADDRESS,
        ),
        (define(aa("b"), vec![]), 65000, code::DEF_OTHER),
        (
            define(ObjectName::VmdSpecific("v".into()), vec![totw()]),
            65000,
            code::DEF_TYPE_UNSUPPORTED,
        ),
        (
            define(ObjectName::domain("NOPE", "LLN0$x"), vec![totw()]),
            65000,
            (ServiceError::CLASS_ACCESS, 2),
        ),
        (
            define(ObjectName::domain(D, "GGIO9$x"), vec![totw()]),
            65000,
            (ServiceError::CLASS_ACCESS, 2),
        ),
        (
            define(ObjectName::domain(D, "nodollar"), vec![totw()]),
            65000,
            code::DEF_OTHER,
        ),
        // The negotiated PDU size bounds the list.
        (define(aa("b"), vec![totw(); 8]), 200, code::RESOURCE),
    ];
    for (req, pdu, want) in cases {
        let got = m.define_list(1, &req, pdu).map_err(code_of);
        assert_eq!(got, Err(want), "{:?}", req.name);
    }
    // The same eight members fit a normal PDU.
    m.define_list(1, &define(aa("b"), vec![totw(); 8]), 65000)
        .unwrap();
    for i in 0..MAX_AA_LISTS {
        let r = m.define_list(1, &define(aa(&format!("n{i}")), vec![totw()]), 65000);
        if i + 2 < MAX_AA_LISTS {
            r.unwrap();
        } else {
            assert_eq!(r.map_err(code_of), Err(code::RESOURCE));
        }
    }
}

#[test]
fn dat_set_to_a_dynamic_list_reports_its_members_and_blocks_deletion() {
    let mut m = model();
    let p = ObjectName::domain(D, "LLN0$dyn1");
    m.define_list(
        1,
        &define(p.clone(), vec![totw(), element(2, Some("cVal"))]),
        65000,
    )
    .unwrap();
    let rcb = |e: &str| ObjectName::domain(D, format!("LLN0$RP$urcb01${e}"));
    let vs = |s: &str| Data::VisibleString(s.into());
    assert_eq!(
        m.write(1, &rcb("DatSet"), &vs("IED1LD0/LLN0$nope")),
        Err(DataAccessError::OBJECT_VALUE_INVALID)
    );
    assert_eq!(
        m.write(1, &rcb("DatSet"), &Data::Boolean(true)),
        Err(DataAccessError::TYPE_INCONSISTENT)
    );
    m.write(1, &rcb("DatSet"), &vs("IED1LD0/LLN0$dyn1"))
        .unwrap();
    // ConfRev counts the change (IEC 61850-7-2 17.2.2.6).
    assert_eq!(m.value(&rcb("ConfRev")), Some(Data::Unsigned(2)));
    assert_eq!(m.value(&rcb("DatSet")), Some(vs("IED1LD0/LLN0$dyn1")));
    // Referenced: deletion is refused with service/object-constraint-conflict.
    let del = DeleteNamedVariableListRequest::specific(vec![p.clone()]);
    assert_eq!(
        m.delete_lists(1, &del).map_err(code_of),
        Err(code::CONSTRAINT_CONFLICT)
    );
    // Enabled: a data change of the array element is reported under the element's name.
    m.write(1, &rcb("RptEna"), &Data::Boolean(true)).unwrap();
    assert_eq!(
        m.write(1, &rcb("DatSet"), &vs("IED1LD0/LLN0$DS1")),
        Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
    );
    m.mark_changed(D, "MHAI1$MX$HA$phsAHar$[2]$cVal$mag$f");
    // Another element is not a member.
    m.mark_changed(D, "MHAI1$MX$HA$phsAHar$[1]$cVal$mag$f");
    let irs = m.due_reports(1, 1_700_000_000_000);
    assert_eq!(irs.len(), 1);
    let r = Report::from_information_report(&irs[0]).unwrap();
    assert_eq!(r.data_set.as_deref(), Some("IED1LD0/LLN0$dyn1"));
    assert_eq!(r.data_refs, ["IED1LD0/MHAI1$MX$HA$phsAHar(2)$cVal"]);
    assert_eq!(
        r.values,
        [Data::Structure(vec![Data::Structure(vec![
            Data::FloatingPoint32(2.0)
        ])])]
    );
    // Disabled and pointed elsewhere, the list can go.
    m.write(1, &rcb("RptEna"), &Data::Boolean(false)).unwrap();
    m.write(1, &rcb("DatSet"), &vs("IED1LD0/LLN0$DS1")).unwrap();
    assert_eq!(m.delete_lists(1, &del).unwrap().deleted, 1);
}

#[test]
fn aa_specific_dat_set_is_the_associations_own_and_unbuffered_only() {
    let mut m = model();
    let aa = ObjectName::AaSpecific("mine".into());
    m.define_list(1, &define(aa.clone(), vec![totw()]), 65000)
        .unwrap();
    let urcb = ObjectName::domain(D, "LLN0$RP$urcb01$DatSet");
    let brcb = ObjectName::domain(D, "LLN0$BR$brcb01$DatSet");
    let vs = |s: &str| Data::VisibleString(s.into());
    // Association 2 does not see @mine.
    assert_eq!(
        m.write(2, &urcb, &vs("@mine")),
        Err(DataAccessError::OBJECT_VALUE_INVALID)
    );
    assert_eq!(
        m.write(1, &brcb, &vs("@mine")),
        Err(DataAccessError::OBJECT_VALUE_INVALID)
    );
    m.write(1, &urcb, &vs("@mine")).unwrap();
    let del = DeleteNamedVariableListRequest {
        scope: DeleteScope::AaSpecific,
        names: None,
        domain: None,
    };
    assert_eq!(
        m.delete_lists(1, &del).map_err(code_of),
        Err(code::CONSTRAINT_CONFLICT)
    );
    // The association ends: its list goes and the RCB is back on its configured data set.
    m.connection_closed(1);
    assert_eq!(m.value(&urcb), Some(vs("IED1LD0/LLN0$DS1")));
    assert_eq!(m.rcbs()[0].members, vec![totw()]);
}

#[test]
fn scl_data_set_with_array_members() {
    let mut m = model();
    m.add_data_set_members(
        D,
        "LLN0$Har",
        vec![element(0, None), element(3, Some("cVal$mag"))],
    )
    .unwrap();
    let err = m
        .add_data_set_members(D, "LLN0$Bad", vec![element(9, None)])
        .unwrap_err();
    assert!(err.to_string().contains("phsAHar(9)"), "{err}");
    let l = ObjectName::domain(D, "LLN0$Har");
    let a = m.named_variable_list_attributes(1, &l).unwrap().unwrap();
    assert!(!a.deletable);
    assert_eq!(a.members, [element(0, None), element(3, Some("cVal$mag"))]);
    assert_eq!(
        m.read_list(1, &l).unwrap()[1],
        AccessResult::Success(Data::Structure(vec![Data::FloatingPoint32(3.0)]))
    );
}

#[test]
fn references_parse() {
    assert_eq!(
        parse_data_set_reference("@x"),
        Some(ObjectName::AaSpecific("x".into()))
    );
    assert_eq!(
        parse_data_set_reference("LD/LLN0$DS1"),
        Some(ObjectName::domain("LD", "LLN0$DS1"))
    );
    for bad in ["", "@", "LD/", "/x", "nothing", "@a/b"] {
        assert_eq!(parse_data_set_reference(bad), None, "{bad}");
    }
}

#[test]
fn array_elements_read_by_alternate_access() {
    let mut m = model();
    assert_eq!(
        m.read_selected(1, &element(3, Some("cVal$mag$f"))),
        Some(AccessResult::Success(Data::FloatingPoint32(3.0)))
    );
    assert_eq!(
        m.read_selected(1, &element(16, None)),
        Some(AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT))
    );
    let range = VariableRef {
        name: ObjectName::domain(D, "MHAI1$MX$HA$phsAHar"),
        access: Some(AlternateAccess(vec![Selection::Select(
            AccessSelection::AllElements,
        )])),
    };
    // allElements and indexRange (libiec61850's readArrayElements): an array of them.
    let AccessResult::Success(Data::Array(all)) = m.read_selected(1, &range).unwrap() else {
        panic!("all elements")
    };
    assert_eq!(all.len(), 4);
    let two = VariableRef {
        name: ObjectName::domain(D, "MHAI1$MX$HA$phsAHar"),
        access: Some(AlternateAccess(vec![Selection::Select(
            AccessSelection::IndexRange { low: 2, count: 2 },
        )])),
    };
    let AccessResult::Success(Data::Array(got)) = m.read_selected(1, &two).unwrap() else {
        panic!("two elements")
    };
    assert_eq!(got, all[2..]);
    let past = VariableRef {
        access: Some(AlternateAccess(vec![Selection::Select(
            AccessSelection::IndexRange { low: 3, count: 2 },
        )])),
        ..two
    };
    assert_eq!(
        m.read_selected(1, &past),
        Some(AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT))
    );
    // Several selections at one level stay unsupported: the association says so.
    let two_at_once = VariableRef {
        name: ObjectName::domain(D, "MHAI1$MX$HA$phsAHar"),
        access: Some(AlternateAccess(vec![
            Selection::Select(AccessSelection::Index(0)),
            Selection::Select(AccessSelection::Index(1)),
        ])),
    };
    assert_eq!(m.read_selected(1, &two_at_once), None);
}

/// A schedule's absolute times (`DSCH.SchdAbsTm.val`, FC SP, an array of FLOAT32) written one
/// element at a time, as iec61850bean's client and libiec61850's `MmsConnection_writeArrayElements`
/// do: it was object-access-unsupported though the same element read.
#[test]
fn array_elements_written_by_alternate_access() {
    let mut m = model();
    let vals = ModelNode::Array((0..3).map(|i| f32leaf(i as f32)).collect());
    m.add_logical_node(
        D,
        "DSCH1",
        s(vec![("SP", s(vec![("SchdAbsTm", s(vec![("val", vals)]))]))]),
    )
    .unwrap();
    m.add_data_set(
        D,
        "LLN0$DS2",
        vec![ObjectName::domain(D, "DSCH1$SP$SchdAbsTm")],
    )
    .unwrap();
    let at = |item: &str, i: u32| VariableRef {
        name: ObjectName::domain(D, item),
        access: Some(AlternateAccess(vec![Selection::Select(
            AccessSelection::Index(i),
        )])),
    };
    let val = at("DSCH1$SP$SchdAbsTm$val", 1);
    assert_eq!(
        m.write_selected(1, &val, &Data::FloatingPoint32(1.5)),
        Some(Ok(()))
    );
    assert_eq!(
        m.read_selected(1, &val),
        Some(AccessResult::Success(Data::FloatingPoint32(1.5)))
    );
    // The other elements are as they were.
    assert_eq!(
        m.read_selected(1, &at("DSCH1$SP$SchdAbsTm$val", 2)),
        Some(AccessResult::Success(Data::FloatingPoint32(2.0)))
    );
    // The element's type, its existence and the FC are checked as for a whole write.
    assert_eq!(
        m.write_selected(1, &val, &Data::Boolean(true)),
        Some(Err(DataAccessError::TYPE_INCONSISTENT))
    );
    assert_eq!(
        m.write_selected(
            1,
            &at("DSCH1$SP$SchdAbsTm$val", 3),
            &Data::FloatingPoint32(0.0)
        ),
        Some(Err(DataAccessError::OBJECT_NON_EXISTENT))
    );
    assert_eq!(
        m.write_selected(
            1,
            &element(0, Some("cVal$mag$f")),
            &Data::FloatingPoint32(9.0)
        ),
        Some(Err(DataAccessError::OBJECT_ACCESS_DENIED)),
        "MX is not written by clients"
    );
    assert_eq!(
        m.write_selected(1, &at("DSCH1$SP$Nothing", 0), &Data::FloatingPoint32(0.0)),
        Some(Err(DataAccessError::OBJECT_NON_EXISTENT))
    );
    // Several elements (libiec61850's writeArrayElements: an indexRange and an array of
    // values), all or none.
    let range = |low, count| VariableRef {
        name: ObjectName::domain(D, "DSCH1$SP$SchdAbsTm$val"),
        access: Some(AlternateAccess(vec![Selection::Select(
            AccessSelection::IndexRange { low, count },
        )])),
    };
    let floats = |v: &[f32]| Data::Array(v.iter().map(|f| Data::FloatingPoint32(*f)).collect());
    assert_eq!(
        m.write_selected(1, &range(1, 2), &floats(&[7.0, 8.0])),
        Some(Ok(()))
    );
    assert_eq!(
        m.read_selected(1, &range(0, 3)),
        Some(AccessResult::Success(floats(&[0.0, 7.0, 8.0])))
    );
    let mixed = Data::Array(vec![Data::FloatingPoint32(5.0), Data::Boolean(true)]);
    assert_eq!(
        m.write_selected(1, &range(0, 2), &mixed),
        Some(Err(DataAccessError::TYPE_INCONSISTENT))
    );
    assert_eq!(
        m.write_selected(1, &range(0, 2), &floats(&[5.0])),
        Some(Err(DataAccessError::TYPE_INCONSISTENT)),
        "as many values as elements"
    );
    assert_eq!(
        m.write_selected(1, &range(2, 2), &floats(&[5.0, 6.0])),
        Some(Err(DataAccessError::OBJECT_NON_EXISTENT))
    );
    assert_eq!(
        m.read_selected(1, &range(0, 3)),
        Some(AccessResult::Success(floats(&[0.0, 7.0, 8.0]))),
        "nothing of a refused write stored"
    );
}
