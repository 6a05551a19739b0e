//! GSEControl, SampledValueControl and SettingControl of an LN0 with their Communication
//! addresses (IEC 61850-6 §9.3.9-9.3.11, §9.2.3), read from `data/merging_unit.cid` (written
//! for these tests after what libiec61850's sv.icd / simpleIO_direct_control_goose.scd and the
//! IEC 61869-9 merging unit ICD of sureenapatnaik92/sampleProject configure), and broken
//! variants left out (or, for a duplicate name, refused) with their line.

use gander_scl::{
    parse, CommAddress, Fc, GseType, Repair, SclErrorKind, SecurityEnable, SettingControl, SmpMod,
    SmvOpts,
};

const CID: &str = include_str!("../data/merging_unit.cid");

fn line_of(needle: &str) -> u32 {
    CID.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

#[test]
fn gse_sv_and_setting_controls_with_addresses() {
    let scl = parse(CID).expect("the test CID parses");
    let ied = scl.ied(None).unwrap();
    let lln0 = &ied.logical_devices[0].logical_nodes[0];

    let g = &lln0.gse_controls;
    assert_eq!(g.len(), 2);
    assert_eq!(g[0].name, "gcbTrip");
    assert_eq!(g[0].data_set.as_deref(), Some("Trips"));
    assert_eq!(g[0].conf_rev, 3);
    assert_eq!(g[0].app_id, "MU1_TRIP");
    assert_eq!(g[0].gse_type, GseType::Goose);
    assert!(g[0].fixed_offs);
    assert_eq!(g[0].security_enable, SecurityEnable::None);
    assert_eq!(
        g[0].address,
        Some(CommAddress {
            mac: Some([0x01, 0x0C, 0xCD, 0x01, 0x00, 0x01]),
            app_id: Some(0x3001),
            vlan_id: Some(0x00A),
            vlan_priority: Some(4),
        })
    );
    assert_eq!((g[0].min_time_ms, g[0].max_time_ms), (Some(4), Some(1000)));
    // Defaults, and a block the Communication section has no address for.
    assert_eq!(g[1].gse_type, GseType::Gsse);
    assert_eq!(g[1].security_enable, SecurityEnable::Signature);
    assert_eq!((g[1].conf_rev, g[1].fixed_offs), (0, false));
    assert_eq!((g[1].data_set.as_deref(), g[1].address), (None, None));

    let s = &lln0.sv_controls;
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].name, "MSVCB01");
    assert_eq!(s[0].smv_id, "MU1_SV01");
    assert_eq!((s[0].smp_rate, s[0].nof_asdu), (4800, 2));
    assert_eq!(s[0].smp_mod, SmpMod::SmpPerSec);
    assert_eq!(s[0].smp_mod.ord(), 1);
    assert!(s[0].multicast);
    assert_eq!(
        s[0].opts,
        SmvOpts {
            refresh_time: true,
            sample_synchronized: true,
            sample_rate: true,
            ..SmvOpts::default()
        }
    );
    // Lower-case MAC as libiec61850's own examples write it.
    assert_eq!(
        s[0].address.and_then(|a| a.mac),
        Some([0x01, 0x0C, 0xCD, 0x04, 0x00, 0x01])
    );
    assert!(!s[1].multicast, "multicast=false is a USVCB");
    assert_eq!(s[1].smp_mod, SmpMod::SmpPerPeriod);
    assert_eq!(s[1].opts, SmvOpts::default());

    assert_eq!(
        lln0.setting_control,
        Some(SettingControl {
            num_of_sgs: 4,
            act_sg: 2,
            resv_tms: Some(60),
        })
    );
    // Other LNs carry none.
    let ggio = &ied.logical_devices[0].logical_nodes[1];
    assert!(ggio.gse_controls.is_empty() && ggio.sv_controls.is_empty());
    assert_eq!(ggio.setting_control, None);
    // SE and SG attributes keep their FC as written.
    let fcs = ggio.fcs();
    assert!(fcs.contains(&Fc::SE) && fcs.contains(&Fc::SG), "{fcs:?}");
}

/// The refusal of an edit (of the file or of its IED).
fn refused(from: &str, to: &str) -> gander_scl::SclError {
    assert!(CID.contains(from), "{from}");
    let text = CID.replacen(from, to, 1);
    match parse(&text) {
        Err(e) => e,
        Ok(scl) => match scl.ied(None) {
            Err(e) => e,
            Ok(_) => panic!("{to} was accepted"),
        },
    }
}

/// The one warning of an edit whose IED loads: the block is left out.
fn left_out(from: &str, to: &str) -> (gander_scl::Ied, gander_scl::SclWarning) {
    assert!(CID.contains(from), "{from}");
    let scl = parse(&CID.replacen(from, to, 1)).unwrap();
    let ied = scl
        .ied(None)
        .unwrap_or_else(|e| panic!("{to}: {e}"))
        .clone();
    assert_eq!(ied.warnings.len(), 1, "{to}: {:?}", ied.warnings);
    let w = ied.warnings[0].clone();
    assert!(
        matches!(&w.repair, Repair::ControlBlockLeftOut { .. }),
        "{to}: {w}"
    );
    (ied, w)
}

/// A control block that cannot be served as written is left out with a warning at its line
/// (or at the line of its address's `P`); two of one name in LLN0 refuse the IED.
#[test]
fn broken_controls_are_left_out_with_the_line() {
    let cases: [(&str, &str, &str); 11] = [
        (
            r#"datSet="Trips" confRev="3""#,
            r#"datSet="Nope" confRev="3""#,
            "<GSEControl name=\"gcbTrip\"",
        ),
        (
            r#"datSet="PhsMeas" confRev="1""#,
            r#"datSet="Gone" confRev="1""#,
            "<SampledValueControl name=\"MSVCB01\"",
        ),
        (r#"appID="MU1_TRIP" "#, " ", "<GSEControl name=\"gcbTrip\""),
        (
            r#"type="GSSE""#,
            r#"type="SV""#,
            "<GSEControl name=\"gcbNoAddr\"",
        ),
        (
            r#"smvID="MU1_SV02" "#,
            " ",
            "<SampledValueControl name=\"USVCB01\"",
        ),
        (
            r#"smpMod="SmpPerSec""#,
            r#"smpMod="PerHour""#,
            "<SampledValueControl name=\"MSVCB01\"",
        ),
        (r#"actSG="2""#, r#"actSG="5""#, "<SettingControl"),
        (r#"numOfSGs="4""#, r#"numOfSGs="0""#, "<SettingControl"),
        (
            "01-0C-CD-01-00-01<",
            "01-0C-CD-01-00<",
            "01-0C-CD-01-00-01<",
        ),
        (">3001<", ">30010<", ">3001<"),
        (
            "<P type=\"VLAN-PRIORITY\">4</P>\n          </Address>\n          <MinTime",
            "<P type=\"VLAN-PRIORITY\">9</P>\n          </Address>\n          <MinTime",
            "<MinTime",
        ),
    ];
    for (from, to, at) in cases {
        let (_, w) = left_out(from, to);
        let want = if at == "<MinTime" {
            // The VLAN-PRIORITY line just above MinTime.
            line_of(at) - 2
        } else {
            line_of(at)
        };
        assert_eq!(w.at.map(|p| p.line), Some(want), "{to}: {w}");
    }
    let (ied, w) = left_out(
        r#"datSet="Trips" confRev="3""#,
        r#"datSet="Nope" confRev="3""#,
    );
    assert!(
        matches!(&w.problem, SclErrorKind::UnknownDataSet { control, data_set } if control == "gcbTrip" && data_set == "Nope"),
        "{w}"
    );
    assert!(matches!(&w.repair, Repair::ControlBlockLeftOut { name } if name == "gcbTrip"));
    let lln0 = &ied.logical_devices[0].logical_nodes[0];
    assert!(lln0.gse_controls.iter().all(|g| g.name != "gcbTrip"));
    assert!(!lln0.gse_controls.is_empty(), "the other GoCBs stay");

    // A GSE or SV block without its name (smartgridadsc/CyberRange `S1IED1.icd` writes
    // `Name=`) is "(unnamed)" in the warning, not "SGCB" (which only a SettingControl is).
    for (from, to) in [
        (
            r#"<GSEControl name="gcbTrip""#,
            r#"<GSEControl Name="gcbTrip""#,
        ),
        (
            r#"<SampledValueControl name="USVCB01""#,
            r#"<SampledValueControl Name="USVCB01""#,
        ),
    ] {
        let (_, w) = left_out(from, to);
        assert!(
            matches!(&w.repair, Repair::ControlBlockLeftOut { name } if name == "(unnamed)"),
            "{to}: {w}"
        );
    }

    let e = refused(r#"name="gcbNoAddr""#, r#"name="gcbTrip""#);
    assert!(matches!(&e.kind, SclErrorKind::Duplicate { .. }), "{e}");
    assert_eq!(
        e.at.map(|p| p.line),
        Some(line_of("<GSEControl name=\"gcbNoAddr\""))
    );
}
