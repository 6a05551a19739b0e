use super::*;
use gander_mms::control::ControlService;
use gander_mms::service::DataAccessError;
use proptest::prelude::*;

fn dbpos(on: bool, off: bool) -> Data {
    let mut b = BitString::new(2);
    b.set(0, on);
    b.set(1, off);
    b.to_data()
}

#[test]
fn states_map_to_the_commands_that_yield_them() {
    // SPC: stVal BOOLEAN.
    assert_eq!(
        status_to_ctl(&Data::Boolean(false), &Data::Boolean(true)),
        Some(Data::Boolean(true))
    );
    // DPC: Dbpos 10 on, 01 off; 00 intermediate and 11 bad have no command.
    let b = Data::Boolean(false);
    assert_eq!(
        status_to_ctl(&b, &dbpos(true, false)),
        Some(Data::Boolean(true))
    );
    assert_eq!(
        status_to_ctl(&b, &dbpos(false, true)),
        Some(Data::Boolean(false))
    );
    assert_eq!(status_to_ctl(&b, &dbpos(false, false)), None);
    assert_eq!(status_to_ctl(&b, &dbpos(true, true)), None);
    // INC, and ISC's ValWithTrans (posVal first).
    assert_eq!(
        status_to_ctl(&Data::Integer(0), &Data::Integer(7)),
        Some(Data::Integer(7))
    );
    assert_eq!(
        status_to_ctl(
            &Data::Integer(0),
            &Data::Structure(vec![Data::Integer(-2), Data::Boolean(false)])
        ),
        Some(Data::Integer(-2))
    );
    // APC: AnalogueValue f.
    let av = |f| Data::Structure(vec![Data::FloatingPoint32(f)]);
    assert_eq!(status_to_ctl(&av(0.0), &av(2.5)), Some(av(2.5)));
    // BSC (Tcmd) has no command for a position.
    assert_eq!(
        status_to_ctl(
            &dbpos(false, false),
            &Data::Structure(vec![Data::Integer(3), Data::Boolean(false)])
        ),
        None
    );
    // A state of another kind.
    assert_eq!(
        status_to_ctl(&Data::Boolean(false), &Data::Integer(1)),
        None
    );
}

#[test]
fn other_values_differ_and_steps_reverse() {
    assert_eq!(
        other_value(&Data::Boolean(true)),
        Some(Data::Boolean(false))
    );
    assert_eq!(
        other_value(&Data::Integer(i64::MAX)),
        Some(Data::Integer(i64::MAX - 1))
    );
    assert_eq!(other_value(&Data::Unsigned(0)), Some(Data::Unsigned(1)));
    // Tcmd: higher (10) -> lower (01) -> higher.
    let higher = dbpos(true, false);
    let lower = dbpos(false, true);
    assert_eq!(other_value(&higher), Some(lower.clone()));
    assert_eq!(other_value(&lower), Some(higher));
    assert_eq!(other_value(&Data::VisibleString("x".into())), None);
}

#[test]
fn an_even_plan_ends_on_the_value_before() {
    let (a, b) = (Data::Boolean(true), Data::Boolean(false));
    let p = plan(&a, &b, 4);
    assert_eq!(p, vec![a.clone(), b.clone(), a.clone(), b.clone()]);
    assert_eq!(plan(&a, &b, 3).last(), Some(&a));
    assert!(plan(&a, &b, 0).is_empty());
}

#[test]
fn values_are_shown_as_users_read_them() {
    assert_eq!(show(&Data::Boolean(true)), "true");
    assert_eq!(show(&dbpos(false, true)), "01");
    assert_eq!(
        show(&Data::Structure(vec![Data::FloatingPoint32(2.5)])),
        "{2.5}"
    );
}

#[test]
fn phase_statistics_are_nearest_rank_in_ms() {
    // 1..=100 ms: p50 rank 50, p99 rank 99.
    let v: Vec<u64> = (1..=100).map(|i| i * 1_000_000).collect();
    let s = PhaseStats::from_ns(&v).unwrap();
    assert_eq!(
        (s.n, s.p50_ms, s.p99_ms, s.max_ms),
        (100, 50.0, 99.0, 100.0)
    );
    assert_eq!(s.mean_ms, 50.5);
    assert!(PhaseStats::from_ns(&[]).is_none());
}

#[test]
fn refusals_are_described_with_their_cause() {
    let d = describe(&ControlOutcome::Refused {
        service: ControlService::Operate,
        error: DataAccessError::OBJECT_ACCESS_DENIED,
        last_appl_error: None,
    });
    assert!(
        d.contains("Operate refused") && d.contains("object-access-denied"),
        "{d}"
    );
    assert_eq!(describe(&ControlOutcome::Done), "done");
}

#[test]
fn the_device_state_serialises_with_its_tag() {
    let j = serde_json::to_value(DeviceLeft::NotRestored { detail: "x".into() }).unwrap();
    assert_eq!(j["state"], "not-restored");
    assert_eq!(
        serde_json::to_value(DeviceLeft::AsFound).unwrap()["state"],
        "as-found"
    );
}

proptest! {
    /// Every commandable state maps back to itself: operating the value read from a state
    /// restores that state (what the restore relies on), and the other value differs.
    #[test]
    fn restoring_commands_round_trip(b in any::<bool>(), i in any::<i64>(), f in -1e6f32..1e6) {
        for (template, state) in [
            (Data::Boolean(false), Data::Boolean(b)),
            (Data::Integer(0), Data::Integer(i)),
            (Data::Structure(vec![Data::FloatingPoint32(0.0)]), Data::Structure(vec![Data::FloatingPoint32(f)])),
        ] {
            let c = status_to_ctl(&template, &state).unwrap();
            prop_assert_eq!(&c, &state);
            let o = other_value(&c).unwrap();
            prop_assert_ne!(&o, &c);
        }
        let p = plan(&Data::Boolean(b), &Data::Boolean(!b), 2 * (i.unsigned_abs() % 8) as usize);
        prop_assert!(p.last().is_none_or(|v| *v == Data::Boolean(!b)));
    }
}

/// The state is read only where the object's CDC keeps it: a DPC (BOOLEAN ctlVal) has no MX
/// (iec61850bean's server dropped the connection on the read of `CSWI1$MX$Pos$mxVal`), an
/// APC (AnalogueValue ctlVal) no stVal.
#[test]
fn the_state_is_read_where_the_cdc_keeps_it() {
    use gander_mms::control::{Check, ControlParams, ControlTime};
    use gander_mms::last_appl_error::Origin;
    let prepared = |ctl_val: Data| Prepared {
        object: "LD0/CSWI1.Pos".into(),
        ld: "LD0".into(),
        ln: "CSWI1".into(),
        dob: "Pos".into(),
        model: CtlModel::DirectNormal,
        template: ControlParams {
            service: ControlService::Operate,
            ctl_val,
            oper_tm: None,
            origin: Origin {
                or_cat: 3,
                or_ident: b"t".to_vec(),
            },
            ctl_num: Some(0),
            t: ControlTime::Utc([0; 8]),
            test: false,
            check: Some(Check::default()),
        },
    };
    let items = |d: Data| -> Vec<String> { state_names(&prepared(d)).iter().map(item).collect() };
    assert_eq!(items(Data::Boolean(true)), ["LD0/CSWI1$ST$Pos$stVal"]);
    assert_eq!(
        items(Data::Integer(1)),
        ["LD0/CSWI1$ST$Pos$stVal", "LD0/CSWI1$ST$Pos$valWTr"]
    );
    assert_eq!(
        items(Data::Structure(vec![Data::FloatingPoint32(1.0)])),
        ["LD0/CSWI1$MX$Pos$mxVal"]
    );
}
