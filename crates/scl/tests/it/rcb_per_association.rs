//! An unbuffered report control block with `indexed="false"` and `RptEnabled max` > 1 is
//! valid: one name, one instance per client association (IEC TISSUE 1771). A buffered one is
//! served as one instance, with a warning. Shown by the IOP 2019 multi-vendor SED (sureenapatnaik92/sampleProject
//! TestData/IOP_2019-09-26_LV_ED2_1_V12_XF.sed), whose HELINKS-configured IEDs use unindexed
//! control blocks; the fixture here is the test bay controller with such a URCB.

use gander_scl::{parse, Fc, Repair};

const ICD: &str = include_str!("../data/bay_controller.icd");

#[test]
fn an_unindexed_urcb_with_max_3_is_one_name_per_association() {
    let text = ICD.replacen(
        r#"confRev="1" indexed="false">"#,
        r#"confRev="1" indexed="false"><RptEnabled max="3"/>"#,
        1,
    );
    let scl = parse(&text).unwrap();
    let ied = scl.ied(None).expect("valid");
    let rc = ied.logical_devices[0].logical_nodes[0]
        .report_controls
        .iter()
        .find(|r| r.name == "urcbStatus")
        .unwrap();
    assert_eq!((rc.max, rc.indexed, rc.buffered), (3, false, false));
    assert_eq!(rc.instances(), ["urcbStatus"], "one name in the directory");
    assert!(
        rc.per_association(),
        "each association has its own instance"
    );
    assert_eq!(rc.fc(), Fc::RP);
    // The indexed and single-instance ones are not per association.
    for other in &ied.logical_devices[0].logical_nodes[0].report_controls {
        if other.name != "urcbStatus" {
            assert!(!other.per_association(), "{}", other.name);
        }
    }
}

/// A buffered one keeps its buffer across associations, so it cannot be per association:
/// with max > 1 it is served as one instance, with a warning (the IOP 2019 SED's
/// `<RptEnabled max="7">` on a BRCB with indexed="false").
#[test]
fn a_buffered_unindexed_block_still_has_one_instance() {
    let text = ICD.replacen(
        r#"confRev="1" indexed="false">"#,
        r#"confRev="1" indexed="false" buffered="true"><RptEnabled max="2"/>"#,
        1,
    );
    let scl = parse(&text).unwrap();
    let ied = scl.ied(None).unwrap();
    assert_eq!(ied.warnings.len(), 1);
    let w = &ied.warnings[0];
    assert!(w.to_string().contains("TISSUE 1771"), "{w}");
    assert_eq!(w.repair, Repair::SingleInstance);
    // At the edited RptEnabled (brcbTrips has one of its own above it).
    let edited = text
        .lines()
        .position(|l| l.contains(r#"buffered="true"><RptEnabled max="2"/>"#))
        .unwrap() as u32
        + 1;
    assert_eq!(w.at.map(|p| p.line), Some(edited));
    let rc = ied.logical_devices[0].logical_nodes[0]
        .report_controls
        .iter()
        .find(|r| r.name == "urcbStatus")
        .unwrap();
    assert_eq!(
        (rc.max, rc.buffered, rc.per_association()),
        (1, true, false)
    );
    assert_eq!(rc.instances(), ["urcbStatus"]);
}
