use super::*;
use crate::golden;
use crate::pdu::{ConfirmedResponse, MmsPdu};
use crate::service::{AccessResult, GetNameListRequest, NameListQuery};
use proptest::prelude::*;
use std::collections::HashMap;

fn brcb() -> RcbRef {
    RcbRef::parse("IMPLD0", "LLN0$BR$brcb01").unwrap()
}

/// The captured read of IMPLD0/LLN0$BR$brcb01 (libiec61850 with ResvTms and Owner enabled).
fn captured_brcb_value() -> Data {
    let b = golden::find(1, false, "a157");
    let MmsPdu::ConfirmedResponse {
        response: ConfirmedResponse::Read(r),
        ..
    } = MmsPdu::parse(&b).unwrap()
    else {
        panic!()
    };
    match &r.results[..] {
        [AccessResult::Success(d)] => d.clone(),
        other => panic!("{other:?}"),
    }
}

/// A device that stores what is written; GI and PurgeBuf are triggers that read back false;
/// EntryID is a status value the device moves (kept out of the comparison).
fn apply(dev: &mut HashMap<String, Data>, steps: &[Step]) {
    for s in steps {
        let v = match s.attr.as_str() {
            "GI" | "PurgeBuf" => Data::Boolean(false),
            "EntryID" => continue,
            _ => s.value.clone(),
        };
        dev.insert(s.attr.clone(), v);
    }
}

fn device(snap: &RcbSnapshot) -> HashMap<String, Data> {
    snap.attrs.iter().cloned().collect()
}

#[test]
fn golden_libiec61850_brcb_layout_and_plan() {
    let snap = RcbSnapshot::from_value(brcb(), &captured_brcb_value()).unwrap();
    let names: Vec<&str> = snap.attrs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "RptID",
            "RptEna",
            "DatSet",
            "ConfRev",
            "OptFlds",
            "BufTm",
            "SqNum",
            "TrgOps",
            "IntgPd",
            "GI",
            "PurgeBuf",
            "EntryID",
            "TimeOfEntry",
            "ResvTms",
            "Owner"
        ]
    );
    assert_eq!(
        snap.get("RptID"),
        Some(&Data::VisibleString("brpt01".into()))
    );
    assert_eq!(snap.get("BufTm"), Some(&Data::Unsigned(50)));
    snap.check_free().unwrap();
    let s = ReportSettings {
        trg_ops: Some(BitString::with_bits(6, &[1, 4, 5])),
        intg_pd: Some(1000),
        buf_tm: Some(50), // as found: not written
        resv_tms: Some(30),
        buffer: BufferStart::ResumeAfter(vec![0, 0, 0, 0, 0, 0, 0, 9]),
        gi: true,
        ..Default::default()
    };
    let plan = RcbPlan::new(&snap, &s).unwrap();
    let order: Vec<String> = plan.enable().into_iter().map(|s| s.attr).collect();
    assert_eq!(
        order,
        ["ResvTms", "TrgOps", "IntgPd", "EntryID", "RptEna", "GI"]
    );
    let restore: Vec<(String, Data)> = plan
        .restore()
        .into_iter()
        .map(|s| (s.attr, s.value))
        .collect();
    assert_eq!(
        restore,
        [
            ("RptEna".to_string(), Data::Boolean(false)),
            ("IntgPd".into(), Data::Unsigned(0)),
            ("TrgOps".into(), BitString::with_bits(6, &[1, 5]).to_data()),
            ("ResvTms".into(), Data::Integer(0)),
        ]
    );
    assert_eq!(plan.irreversible(), ["EntryID", "GI"]);
    assert_eq!(
        plan.enable()[0].name,
        ObjectName::domain("IMPLD0", "LLN0$BR$brcb01$ResvTms")
    );
    let w = plan.enable()[0].write_request();
    assert_eq!(w.data, [Data::Integer(30)]);
}

#[test]
fn golden_libiec61850_type_names_the_components() {
    let t = golden::association(2)
        .into_iter()
        .find_map(|(c, b)| match (c, MmsPdu::parse(&b).unwrap()) {
            (
                false,
                MmsPdu::ConfirmedResponse {
                    invoke_id: 1,
                    response: ConfirmedResponse::GetVariableAccessAttributes(r),
                },
            ) => Some(r.type_spec),
            _ => None,
        })
        .unwrap();
    let ty = t.at_path("BR$brcb01").unwrap();
    let a = RcbSnapshot::from_type_and_value(brcb(), ty, &captured_brcb_value()).unwrap();
    let b = RcbSnapshot::from_value(brcb(), &captured_brcb_value()).unwrap();
    assert_eq!(a, b);
    assert!(
        RcbSnapshot::from_type_and_value(brcb(), &TypeSpec::Boolean, &captured_brcb_value())
            .is_err()
    );
}

#[test]
fn golden_libiec61850_discovery_finds_indexed_rcbs() {
    // Run the captured variable listing through the continuation query; libiec61850's
    // client must have asked exactly what the query asks.
    let mut q = NameListQuery::new(GetNameListRequest::variables("IMPLD0"));
    let mut ids = Vec::new();
    for (_, b) in golden::association(1) {
        match MmsPdu::parse(&b).unwrap() {
            MmsPdu::ConfirmedRequest {
                invoke_id,
                request: crate::pdu::ConfirmedRequest::GetNameList(r),
            } if r.object_class == crate::service::ObjectClass::NAMED_VARIABLE => {
                assert_eq!(q.next_request(), Some(r));
                ids.push(invoke_id);
            }
            MmsPdu::ConfirmedResponse {
                invoke_id,
                response: ConfirmedResponse::GetNameList(r),
            } if ids.contains(&invoke_id) => q.on_response(r).unwrap(),
            _ => {}
        }
    }
    assert!(ids.len() > 1, "the capture has continuation pages");
    assert!(q.is_done());
    let rcbs = find_rcbs("IMPLD0", q.names());
    let refs: Vec<String> = rcbs.iter().map(RcbRef::reference).collect();
    assert_eq!(refs, ["IMPLD0/LLN0.BR.brcb01", "IMPLD0/LLN0.RP.urcb01"]);
    assert_eq!(rcbs[0].base_and_index(), ("brcb", Some(1)));
    let r = RcbRef::parse("LD", "LLN0$RP$urcbMeas").unwrap();
    assert_eq!(r.base_and_index(), ("urcbMeas", None));
    assert!(RcbRef::parse("LD", "LLN0$ST$x").is_none());
    assert!(RcbRef::parse("LD", "LLN0$BR$brcb01$RptEna").is_none());
}

fn urcb_value(rpt_ena: bool, resv: bool) -> Data {
    Data::Structure(vec![
        Data::VisibleString("r".into()),
        Data::Boolean(rpt_ena),
        Data::Boolean(resv),
        Data::VisibleString("LD/LLN0$DS1".into()),
        Data::Unsigned(1),
        BitString::with_bits(10, &[1]).to_data(),
        Data::Unsigned(0),
        Data::Unsigned(0),
        BitString::with_bits(6, &[1]).to_data(),
        Data::Unsigned(0),
        Data::Boolean(false),
    ])
}

#[test]
fn first_free_indexed_instance() {
    let snap = |name: &str, ena: bool| {
        RcbSnapshot::from_value(
            RcbRef::parse("LD", &format!("LLN0$RP${name}")).unwrap(),
            &urcb_value(ena, false),
        )
        .unwrap()
    };
    let snaps = [
        snap("urcbA03", false),
        snap("urcbA01", true),
        snap("urcbB01", false),
        snap("urcbA02", false),
    ];
    assert_eq!(first_free(&snaps, "urcbA").unwrap().rcb.name, "urcbA02");
    assert_eq!(first_free(&snaps, "urcbB").unwrap().rcb.name, "urcbB01");
    assert!(first_free(&snaps[1..2], "urcbA").is_none());
    assert!(first_free(&snaps, "brcb").is_none());
}

#[test]
fn refuses_what_someone_else_holds() {
    let u = RcbRef::parse("LD", "LLN0$RP$urcb01").unwrap();
    for (ena, resv, why) in [(true, false, "RptEna"), (false, true, "Resv")] {
        let snap = RcbSnapshot::from_value(u.clone(), &urcb_value(ena, resv)).unwrap();
        assert!(matches!(
            RcbPlan::new(&snap, &ReportSettings::default()),
            Err(RcbPlanError::InUse { why: w, .. }) if w == why
        ));
    }
    let mut snap = RcbSnapshot::from_value(brcb(), &captured_brcb_value()).unwrap();
    for (n, d) in snap.attrs.iter_mut() {
        if n == "ResvTms" {
            *d = Data::Integer(-1);
        }
    }
    assert!(matches!(
        RcbPlan::new(&snap, &ReportSettings::default()),
        Err(RcbPlanError::InUse { .. })
    ));
    // Buffered-only settings on a URCB.
    let snap = RcbSnapshot::from_value(u, &urcb_value(false, false)).unwrap();
    for s in [
        ReportSettings {
            buffer: BufferStart::Purge,
            ..Default::default()
        },
        ReportSettings {
            resv_tms: Some(5),
            ..Default::default()
        },
    ] {
        assert!(matches!(
            RcbPlan::new(&snap, &s),
            Err(RcbPlanError::NotBuffered { .. })
        ));
    }
    // URCB: reserve first, release last.
    let p = RcbPlan::new(&snap, &ReportSettings::default()).unwrap();
    let e: Vec<String> = p.enable().into_iter().map(|s| s.attr).collect();
    assert_eq!(e, ["Resv", "RptEna"]);
    let r: Vec<String> = p.restore().into_iter().map(|s| s.attr).collect();
    assert_eq!(r, ["RptEna", "Resv"]);
    // Bad layouts.
    let bad = RcbRef::parse("LD", "LLN0$RP$x").unwrap();
    assert!(RcbSnapshot::from_value(bad.clone(), &Data::Boolean(true)).is_err());
    let Data::Structure(mut v) = urcb_value(false, false) else {
        panic!()
    };
    v.push(Data::Integer(3));
    assert!(RcbSnapshot::from_value(bad, &Data::Structure(v)).is_err());
}

fn arb_settings() -> impl Strategy<Value = ReportSettings> {
    (
        proptest::option::of("[a-z]{1,6}"),
        proptest::option::of(proptest::collection::vec(0usize..10, 0..4)),
        proptest::option::of(proptest::collection::vec(0usize..6, 0..4)),
        proptest::option::of(0u32..3),
        proptest::option::of(0u32..3),
        proptest::option::of(-1i16..3),
        0u8..3,
        any::<bool>(),
    )
        .prop_map(
            |(rpt_id, o, t, buf_tm, intg_pd, resv_tms, b, gi)| ReportSettings {
                rpt_id,
                dat_set: None,
                opt_flds: o.map(|o| BitString::with_bits(10, &o)),
                trg_ops: t.map(|t| BitString::with_bits(6, &t)),
                buf_tm,
                intg_pd,
                resv_tms,
                buffer: match b {
                    0 => BufferStart::Keep,
                    1 => BufferStart::ResumeAfter(vec![b; 8]),
                    _ => BufferStart::Purge,
                },
                gi,
            },
        )
}

proptest! {
    /// Enable then restore, or enable k steps then roll back: every attribute reads as found
    /// (PurgeBuf and GI are triggers that read false before and after).
    #[test]
    fn restore_leaves_the_rcb_as_found(s in arb_settings(), k in 0usize..10) {
        let snap = RcbSnapshot::from_value(brcb(), &captured_brcb_value()).unwrap();
        let plan = RcbPlan::new(&snap, &s).unwrap();
        let found = device(&snap);
        let mut dev = found.clone();
        apply(&mut dev, &plan.enable());
        prop_assert_eq!(dev.get("RptEna"), Some(&Data::Boolean(true)));
        apply(&mut dev, &plan.restore());
        prop_assert_eq!(&dev, &found);
        let k = k.min(plan.enable().len());
        let mut dev = found.clone();
        apply(&mut dev, &plan.enable()[..k]);
        apply(&mut dev, &plan.rollback(k));
        prop_assert_eq!(&dev, &found);
    }
}
