//! Per-setting-group values (`<Val sGroup="n">`, IEC 61850-6 §9.3.8): every group's value is
//! kept, typed and checked at the `Val`'s own line, beside the value without `sGroup`.
//! Shown by the Efacec TPU 220 IID (sureenapatnaik92/sampleProject TestData/Efacec_TPU220.iid:
//! four groups per setting, no plain `Val`) and sp_multiple_access_points
//! (sureenapatnaik92/sampleProject TestData/multiple_access_points.icd: a plain `Val` and
//! groups 1, 3, 2 out of order, `SettingControl numOfSGs="3" actSG="2"`).

use gander_scl::{parse, DataNode, GroupValue, Repair, SclErrorKind, SclWarning};
use proptest::prelude::*;

fn scl(dai: &str, template_vals: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL">
  <IED name="G">
    <AccessPoint name="AP1">
      <Server>
        <Authentication/>
        <LDevice inst="PROT">
          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T">
            <SettingControl numOfSGs="4" actSG="1"/>
          </LN0>
          <LN lnClass="PTOC" inst="1" lnType="PTOC_T">
            <DOI name="OpDlTmms">
              <DAI name="setVal">
{dai}
              </DAI>
            </DOI>
          </LN>
        </LDevice>
      </Server>
    </AccessPoint>
  </IED>
  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0"><DO name="Beh" type="INS_T"/></LNodeType>
    <LNodeType id="PTOC_T" lnClass="PTOC">
      <DO name="OpDlTmms" type="ING_T"/>
      <DO name="Dir" type="ENG_T"/>
    </LNodeType>
    <DOType id="INS_T" cdc="INS"><DA name="stVal" fc="ST" bType="INT32"/></DOType>
    <DOType id="ING_T" cdc="ING"><DA name="setVal" fc="SE" bType="INT32">{template_vals}</DA></DOType>
    <DOType id="ENG_T" cdc="ENG">
      <DA name="setVal" fc="SG" bType="Enum" type="Dir_E"><Val sGroup="1">forward</Val><Val sGroup="2">backward</Val></DA>
    </DOType>
    <EnumType id="Dir_E"><EnumVal ord="1">forward</EnumVal><EnumVal ord="2">backward</EnumVal></EnumType>
  </DataTypeTemplates>
</SCL>
"#
    )
}

fn attr<'a>(nodes: &'a [DataNode], path: &[&str]) -> &'a DataNode {
    let n = nodes.iter().find(|n| n.name == path[0]).unwrap();
    if path.len() == 1 {
        n
    } else {
        attr(&n.children, &path[1..])
    }
}

fn ptoc(text: &str) -> Vec<DataNode> {
    let scl = parse(text).unwrap();
    let ied = scl.ied(None).unwrap();
    ied.logical_devices[0].logical_nodes[1].data_objects.clone()
}

fn groups(n: &DataNode) -> Vec<(u8, &str)> {
    n.group_values
        .iter()
        .map(|g| (g.group, g.value.as_str()))
        .collect()
}

#[test]
fn every_groups_value_is_kept_beside_the_plain_one() {
    let text = scl(
        r#"<Val>101</Val><Val sGroup="1">10</Val><Val sGroup="3">512</Val><Val sGroup="2">619</Val>"#,
        "",
    );
    let dos = ptoc(&text);
    let set_val = attr(&dos, &["OpDlTmms", "setVal"]);
    // The plain Val is the node's value; the groups keep file order.
    assert_eq!(set_val.value.as_deref(), Some("101"));
    assert_eq!(groups(set_val), [(1, "10"), (3, "512"), (2, "619")]);
}

#[test]
fn without_a_plain_val_the_first_groups_is_the_value() {
    let text = scl(r#"<Val sGroup="2">250</Val><Val sGroup="1">100</Val>"#, "");
    let set_val = ptoc(&text);
    let set_val = attr(&set_val, &["OpDlTmms", "setVal"]);
    assert_eq!(set_val.value.as_deref(), Some("250"));
    assert_eq!(groups(set_val), [(2, "250"), (1, "100")]);
}

#[test]
fn template_groups_are_kept_and_an_instance_replaces_them() {
    // Only the template's: kept (an Enum's as its ord).
    let text = scl("", r#"<Val sGroup="1">5</Val><Val sGroup="2">6</Val>"#);
    let dos = ptoc(&text);
    assert_eq!(
        groups(attr(&dos, &["OpDlTmms", "setVal"])),
        [(1, "5"), (2, "6")]
    );
    assert_eq!(groups(attr(&dos, &["Dir", "setVal"])), [(1, "1"), (2, "2")]);
    // The instance's DAI replaces the template's values, groups included.
    let text = scl(
        r#"<Val sGroup="3">7</Val>"#,
        r#"<Val sGroup="1">5</Val><Val sGroup="2">6</Val>"#,
    );
    let dos = ptoc(&text);
    assert_eq!(groups(attr(&dos, &["OpDlTmms", "setVal"])), [(3, "7")]);
}

/// The one warning of a file whose IED loads, with PTOC1's data objects.
fn one_warning(text: &str) -> (Vec<DataNode>, SclWarning) {
    let scl = parse(text).unwrap();
    let ied = scl.ied(None).unwrap();
    assert_eq!(ied.warnings.len(), 1, "{:?}", ied.warnings);
    (
        ied.logical_devices[0].logical_nodes[1].data_objects.clone(),
        ied.warnings[0].clone(),
    )
}

#[test]
fn a_group_value_that_does_not_fit_is_ignored_at_its_line() {
    let text = scl(
        "<Val sGroup=\"1\">10</Val>\n                <Val sGroup=\"2\">1.5</Val>",
        "",
    );
    let (dos, w) = one_warning(&text);
    assert!(
        matches!(&w.problem, SclErrorKind::BadValue { element: "Val", value, .. } if value == "1.5"),
        "{w}"
    );
    assert_eq!(w.repair, Repair::ValueIgnored);
    let line = text.lines().position(|l| l.contains(">1.5<")).unwrap() as u32 + 1;
    assert_eq!(w.at.map(|p| p.line), Some(line));
    assert_eq!(groups(attr(&dos, &["OpDlTmms", "setVal"])), [(1, "10")]);
}

#[test]
fn a_bad_or_repeated_group_number_is_ignored() {
    for (dai, why, kept) in [
        (r#"<Val sGroup="0">1</Val>"#, "1..=255", &[][..]),
        (r#"<Val sGroup="256">1</Val>"#, "1..=255", &[]),
        (r#"<Val sGroup="x">1</Val>"#, "1..=255", &[]),
        (
            r#"<Val sGroup="2">1</Val><Val sGroup="2">3</Val>"#,
            "same setting group",
            &[(2u8, "1")],
        ),
    ] {
        let (dos, w) = one_warning(&scl(dai, ""));
        assert!(
            matches!(
                &w.problem,
                SclErrorKind::BadValue {
                    attribute: "sGroup",
                    ..
                }
            ),
            "{dai}: {w}"
        );
        assert!(w.to_string().contains(why), "{dai}: {w}");
        assert_eq!(w.repair, Repair::ValueIgnored);
        assert_eq!(groups(attr(&dos, &["OpDlTmms", "setVal"])), kept, "{dai}");
    }
}

#[test]
fn a_group_beyond_num_of_sgs_is_left_out_at_its_val() {
    // The fixture's SettingControl has numOfSGs="4".
    let text = scl(
        "<Val sGroup=\"4\">1</Val>\n                <Val sGroup=\"5\">2</Val>",
        "",
    );
    let (dos, w) = one_warning(&text);
    assert!(
        matches!(&w.problem, SclErrorKind::BadValue { attribute: "sGroup", value, .. } if value == "5"),
        "{w}"
    );
    let line = text.lines().position(|l| l.contains(">2<")).unwrap() as u32 + 1;
    assert_eq!(w.at.map(|p| p.line), Some(line));
    assert!(w.to_string().contains("numOfSGs"), "{w}");
    assert_eq!(w.repair, Repair::GroupValueDropped { group: 5 });
    assert_eq!(groups(attr(&dos, &["OpDlTmms", "setVal"])), [(4, "1")]);
}

proptest! {
    /// Whatever groups (distinct, 1..=numOfSGs, any order) and INT32 values a DAI gives, reading
    /// keeps each group's value, in file order.
    #[test]
    fn any_groups_values_read_back(
        vals in proptest::collection::btree_map(1u8..=4, any::<i32>(), 0..4)
            .prop_shuffle_entries()
    ) {
        let dai: String = vals
            .iter()
            .map(|(g, v)| format!(r#"<Val sGroup="{g}">{v}</Val>"#))
            .collect();
        let dos = ptoc(&scl(&dai, ""));
        let got: Vec<(u8, String)> = attr(&dos, &["OpDlTmms", "setVal"])
            .group_values
            .iter()
            .map(|GroupValue { group, value, .. }| (*group, value.clone()))
            .collect();
        let want: Vec<(u8, String)> = vals.iter().map(|(g, v)| (*g, v.to_string())).collect();
        prop_assert_eq!(got, want);
    }
}

/// A tiny extension so the strategy above yields the entries in a shuffled order.
trait ShuffleEntries {
    fn prop_shuffle_entries(self) -> BoxedStrategy<Vec<(u8, i32)>>;
}

impl<S> ShuffleEntries for S
where
    S: Strategy<Value = std::collections::BTreeMap<u8, i32>> + 'static,
{
    fn prop_shuffle_entries(self) -> BoxedStrategy<Vec<(u8, i32)>> {
        self.prop_map(|m| m.into_iter().collect::<Vec<_>>())
            .prop_shuffle()
            .boxed()
    }
}
