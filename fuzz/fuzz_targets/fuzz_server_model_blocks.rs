//! The setting group, GOOSE and sampled-value control blocks of a server model driven by
//! arbitrary sequences of writes (any association, any component, values of every MMS kind
//! and edge values), clock ticks and closed associations. Must never panic; afterwards every
//! name the model lists must still read, (SE only while a group is being edited),
//! and ActSG/EditSG stay within 0..=NumOfSG.
#![no_main]
use gander_mms::association::ServerHandler;
use gander_mms::bit_string::BitString;
use gander_mms::server_model::{
    DstAddress, GocbConfig, ModelNode, ServerModel, SgcbConfig, SvcbConfig,
};
use gander_mms::service::{
    AccessResult, DataAccessError, ObjectClass, ObjectName, ObjectScope, TypeSpec,
};
use gander_wire::data::Data;
use libfuzzer_sys::fuzz_target;

const D: &str = "FZLD0";

fn s(c: Vec<(&str, ModelNode)>) -> ModelNode {
    ModelNode::Struct(c.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
}

fn model() -> ServerModel {
    let mut m = ServerModel::new("gander", "fuzz", "1");
    m.add_domain(D).expect("domain");
    let b = || ModelNode::leaf(TypeSpec::Boolean, Data::Boolean(false));
    let set = || {
        s(vec![(
            "setVal",
            ModelNode::leaf(TypeSpec::Integer(32), Data::Integer(5)),
        )])
    };
    m.add_logical_node(
        D,
        "LLN0",
        s(vec![("ST", s(vec![("Beh", s(vec![("stVal", b())]))]))]),
    )
    .expect("LLN0");
    m.add_logical_node(
        D,
        "PTOC1",
        s(vec![
            ("SG", s(vec![("OpDl", set())])),
            ("SE", s(vec![("OpDl", set())])),
        ]),
    )
    .expect("PTOC1");
    m.add_data_set(D, "LLN0$ds", vec![ObjectName::domain(D, "PTOC1$SG$OpDl")])
        .expect("ds");
    m.add_setting_groups(SgcbConfig {
        domain: D.into(),
        ln: "LLN0".into(),
        num_of_sg: 3,
        act_sg: 1,
        resv_tms: 2,
    })
    .expect("sgcb");
    for (name, ds) in [("gcb1", "LLN0$ds"), ("gcb2", "")] {
        m.add_gocb(GocbConfig {
            domain: D.into(),
            ln: "LLN0".into(),
            name: name.into(),
            go_id: "g".into(),
            data_set: ds.into(),
            conf_rev: u32::MAX,
            dst: DstAddress::LIBIEC61850_DEFAULT,
            min_time: 1,
            max_time: 2,
            fixed_offs: false,
        })
        .expect("gocb");
    }
    for unicast in [false, true] {
        m.add_svcb(SvcbConfig {
            domain: D.into(),
            ln: "LLN0".into(),
            name: "sv".into(),
            unicast,
            sv_id: "s".into(),
            data_set: "LLN0$ds".into(),
            conf_rev: 1,
            smp_rate: 80,
            opt_flds: BitString::new(5),
            smp_mod: 0,
            dst: DstAddress::LIBIEC61850_DEFAULT,
            no_asdu: 1,
        })
        .expect("svcb");
    }
    m
}

fn value(k: u8) -> Data {
    match k % 12 {
        0 => Data::Boolean(true),
        1 => Data::Boolean(false),
        2 => Data::Unsigned(u64::from(k / 12)),
        3 => Data::Unsigned(u64::MAX),
        4 => Data::Integer(i64::from(k) - 128),
        5 => Data::VisibleString("FZLD0/LLN0$ds".into()),
        6 => Data::VisibleString("x".repeat(usize::from(k))),
        7 => Data::VisibleString(String::new()),
        8 => Data::Structure(vec![Data::Boolean(true); usize::from(k % 7)]),
        9 => Data::OctetString(vec![k; 6]),
        10 => Data::UtcTime([k; 8]),
        _ => Data::Integer(i64::MIN),
    }
}

fuzz_target!(|bytes: &[u8]| {
    let mut m = model();
    let names = m
        .name_list(
            1,
            ObjectClass::NAMED_VARIABLE,
            &ObjectScope::Domain(D.into()),
        )
        .expect("handled")
        .expect("names");
    let mut now = 0u64;
    m.tick(now);
    for op in bytes.chunks(3) {
        let (a, b, c) = (op[0], *op.get(1).unwrap_or(&0), *op.get(2).unwrap_or(&0));
        let conn = u64::from(a % 3);
        match a / 3 % 8 {
            0 => m.connection_closed(conn),
            1 => {
                now += u64::from(b) * 100;
                m.tick(now);
            }
            _ => {
                let name = &names[usize::from(b) % names.len()];
                let _ = m.write(conn, &ObjectName::domain(D, name.clone()), &value(c));
            }
        }
    }
    let editing = m.setting_groups()[0].editing().0 != 0;
    for n in &names {
        let r = m.read(1, &ObjectName::domain(D, n.clone()));
        let se_refused = !editing
            && n.starts_with("PTOC1$SE")
            && r == AccessResult::Failure(DataAccessError::TEMPORARILY_UNAVAILABLE);
        assert!(matches!(r, AccessResult::Success(_)) || se_refused, "{n}");
    }
    let sg = &m.setting_groups()[0];
    assert!((1..=3).contains(&sg.active()) && sg.editing().0 <= 3);
});
