//! An unbuffered report control block with `indexed="false"` and `RptEnabled max` > 1 is
//! valid: one name, one instance per client association (IEC TISSUE 1771). Only a buffered one
//! is refused. Shown by the IOP 2019 multi-vendor SED (sureenapatnaik92/sampleProject
//! TestData/IOP_2019-09-26_LV_ED2_1_V12_XF.sed), whose HELINKS-configured IEDs use unindexed
//! control blocks; the fixture here is the test bay controller with such a URCB.

use gander_scl::{parse, Fc};

const ICD: &str = include_str!("data/bay_controller.icd");

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

#[test]
fn a_buffered_unindexed_block_still_has_one_instance() {
    let text = ICD.replacen(
        r#"confRev="1" indexed="false">"#,
        r#"confRev="1" indexed="false" buffered="true"><RptEnabled max="2"/>"#,
        1,
    );
    let scl = parse(&text).unwrap();
    let e = scl.ied(None).unwrap_err();
    assert!(e.to_string().contains("TISSUE 1771"), "{e}");
}
