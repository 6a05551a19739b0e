//! Data set members naming an array element (`daName="phsAHar(7)"`, `phsAHar(9).cVal.mag`):
//! kept as the MMS item up to the array, the index and the component under the element, and
//! checked against the array's `count` and the element's type. Shown by libiec61850's
//! complex-array example (mz-automation/libiec61850
//! examples/server_example_complex_array/mhai_array.cid), which gander refused; the fixture
//! here is written after its shape (an MHAI whose HA has a 16-element `phsAHar` SDO array).

use gander_scl::{parse, Fc, Repair, SclErrorKind};

fn scl(members: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL">
  <IED name="H">
    <AccessPoint name="AP1">
      <Server>
        <Authentication/>
        <LDevice inst="Harm">
          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T">
            <DataSet name="Harmonics">
{members}
            </DataSet>
          </LN0>
          <LN lnClass="MHAI" inst="1" lnType="MHAI_T"/>
        </LDevice>
      </Server>
    </AccessPoint>
  </IED>
  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0"><DO name="Beh" type="INS_T"/></LNodeType>
    <LNodeType id="MHAI_T" lnClass="MHAI"><DO name="HA" type="HWYE_T"/></LNodeType>
    <DOType id="INS_T" cdc="INS"><DA name="stVal" fc="ST" bType="INT32"/></DOType>
    <DOType id="HWYE_T" cdc="HWYE">
      <SDO name="phsAHar" type="CMV_T" count="16"/>
      <DA name="numHar" fc="CF" bType="INT16U"/>
    </DOType>
    <DOType id="CMV_T" cdc="CMV">
      <DA name="cVal" fc="MX" bType="Struct" type="Vector_T"/>
      <DA name="q" fc="MX" bType="Quality"/>
    </DOType>
    <DAType id="Vector_T">
      <BDA name="mag" bType="Struct" type="AV_T"/>
      <BDA name="ang" bType="Struct" type="AV_T"/>
    </DAType>
    <DAType id="AV_T"><BDA name="f" bType="FLOAT32"/></DAType>
  </DataTypeTemplates>
</SCL>
"#
    )
}

fn fcda(do_name: &str, da_name: &str, fc: &str) -> String {
    format!(
        r#"              <FCDA ldInst="Harm" lnClass="MHAI" lnInst="1" doName="{do_name}" daName="{da_name}" fc="{fc}"/>"#
    )
}

#[test]
fn array_elements_and_components() {
    let members = [
        fcda("HA", "phsAHar(7)", "MX"),
        fcda("HA", "phsAHar(9).cVal", "MX"),
        fcda("HA", "phsAHar(11).cVal.mag.f", "MX"),
        // The index in doName (an SDO path there) means the same.
        fcda("HA.phsAHar(0)", "q", "MX"),
        // The whole array, and a plain member.
        fcda("HA", "phsAHar", "MX"),
        fcda("HA", "numHar", "CF"),
    ]
    .join("\n");
    let scl = parse(&scl(&members)).unwrap();
    let ied = scl.ied(None).unwrap();
    let got: Vec<(String, Fc, Option<u32>, Option<String>)> =
        ied.logical_devices[0].logical_nodes[0].data_sets[0]
            .members
            .iter()
            .map(|m| (m.item.clone(), m.fc, m.array_index, m.component.clone()))
            .collect();
    let a = "MHAI1$MX$HA$phsAHar".to_string();
    assert_eq!(
        got,
        [
            (a.clone(), Fc::MX, Some(7), None),
            (a.clone(), Fc::MX, Some(9), Some("cVal".into())),
            (a.clone(), Fc::MX, Some(11), Some("cVal$mag$f".into())),
            (a.clone(), Fc::MX, Some(0), Some("q".into())),
            (a.clone(), Fc::MX, None, None),
            ("MHAI1$CF$HA$numHar".into(), Fc::CF, None, None),
        ]
    );
    let m = &ied.logical_devices[0].logical_nodes[0].data_sets[0].members[2];
    assert_eq!(m.domain, "HHarm");
    assert_eq!(m.to_string(), "HHarm/MHAI1$MX$HA$phsAHar(11)$cVal$mag$f");
}

/// A member naming an index outside the array, or a component that is not there, is left
/// out of its data set with a warning at its line; the data set stays.
#[test]
fn wrong_indices_and_components_are_dropped_with_the_line() {
    for (member, want) in [
        (fcda("HA", "phsAHar(16)", "MX"), "index 16 is outside"),
        (fcda("HA", "phsAHar(99).cVal", "MX"), "index 99 is outside"),
        (fcda("HA", "numHar(1)", "CF"), "not an array"),
        (fcda("HA", "phsAHar(1).cVal.nope", "MX"), "not in the model"),
        (fcda("HA", "phsAHar(1).cVal", "ST"), "not in the model"),
        (fcda("HA", "phsAHar(x)", "MX"), "not in the model"),
        (fcda("HA", "phsAHar(1", "MX"), "not in the model"),
    ] {
        let text = scl(&member);
        let scl = parse(&text).unwrap();
        let ied = scl.ied(None).unwrap();
        assert_eq!(ied.warnings.len(), 1, "{member}: {:?}", ied.warnings);
        let w = &ied.warnings[0];
        assert!(w.to_string().contains(want), "{member}: {w}");
        assert!(
            matches!(
                w.problem,
                SclErrorKind::ArrayMember { .. } | SclErrorKind::UnknownMember { .. }
            ),
            "{w}"
        );
        assert!(matches!(w.repair, Repair::MemberDropped { .. }), "{w}");
        let line = text.lines().position(|l| l.contains("<FCDA")).unwrap() as u32 + 1;
        assert_eq!(w.at.map(|p| p.line), Some(line), "{w}");
        assert!(ied.logical_devices[0].logical_nodes[0].data_sets[0]
            .members
            .is_empty());
    }
}
