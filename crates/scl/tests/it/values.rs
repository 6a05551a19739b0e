//! `Val` checked against the attribute's bType when the file is read, a `Val` that does not fit
//! ignored (or, for an xs:boolean in another case, read ignoring case) with a warning citing
//! the `Val`'s own line (not the type template's). Shown by the IOP 2019 multi-vendor SED
//! (sureenapatnaik92/sampleProject TestData/IOP_2019-09-26_LV_ED2_1_V12_XF.sed), whose
//! `<Val>False</Val>` for a BOOLEAN `scl show` accepted and the server refused. Also: a
//! template repeated with the same content names one type (libiec61850's
//! examples/server_example_setting_groups/sg_demo.cid repeats DOType "SPS").

use gander_scl::{parse, Repair, SclErrorKind, SclWarning};

fn scl(dai: &str, template_val: &str, extra_template: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL">
  <IED name="V">
    <AccessPoint name="AP1">
      <Server>
        <Authentication/>
        <LDevice inst="LD0">
          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T"/>
          <LN lnClass="GGIO" inst="1" lnType="GGIO_T">
            <DOI name="SPCSO1">
              <DAI name="stVal">
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
    <LNodeType id="GGIO_T" lnClass="GGIO"><DO name="SPCSO1" type="SPC_T"/></LNodeType>
    <DOType id="INS_T" cdc="INS"><DA name="stVal" fc="ST" bType="INT32"/></DOType>
    <DOType id="SPC_T" cdc="SPC">
      <DA name="stVal" fc="ST" bType="BOOLEAN"/>
      <DA name="d" fc="DC" bType="VisString255"/>
      <DA name="sboTimeout" fc="CF" bType="INT32U">
        <Val>{template_val}</Val>
      </DA>
    </DOType>
{extra_template}
  </DataTypeTemplates>
</SCL>
"#
    )
}

fn line(text: &str, needle: &str) -> u32 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

/// The value of V/LD0/GGIO1.SPCSO1.stVal [ST] and the IED's warnings.
fn loaded(text: &str) -> (Option<String>, Vec<SclWarning>) {
    let scl = parse(text).unwrap();
    assert!(scl.refused.is_empty(), "{:?}", scl.refused);
    let ied = scl.ied(None).unwrap();
    let ggio = &ied.logical_devices[0].logical_nodes[1];
    let st = ggio.data_objects[0]
        .children
        .iter()
        .find(|c| c.name == "stVal")
        .unwrap();
    (st.value.clone(), ied.warnings.clone())
}

#[test]
fn a_val_that_does_not_fit_its_type_is_ignored_with_a_warning_at_its_line() {
    // The schema's xs:boolean: `false` and `0` are valid as written.
    for ok in ["false", "0", "true", "1"] {
        let (v, w) = loaded(&scl(&format!("<Val>{ok}</Val>"), "30000", ""));
        assert_eq!((v.as_deref(), w.len()), (Some(ok), 0));
    }
    // `False` is no xs:boolean, but its meaning is plain: read ignoring case, with a warning
    // at the Val's own line (IOP 2019 SED).
    let text = scl("                <Val>False</Val>", "30000", "");
    let (v, w) = loaded(&text);
    assert_eq!(v.as_deref(), Some("false"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        matches!(&w[0].problem, SclErrorKind::BadValue { element: "Val", value, .. } if value == "False"),
        "{}",
        w[0]
    );
    assert_eq!(w[0].repair, Repair::BooleanCaseFolded(false));
    assert_eq!(w[0].at.map(|p| p.line), Some(line(&text, "<Val>False")));
    assert!(w[0].to_string().contains("xs:boolean"), "{}", w[0]);

    // Anything else that does not fit is ignored: the type's default (none) stays.
    let text = scl("<Val>yes</Val>", "30000", "");
    let (v, w) = loaded(&text);
    assert_eq!(v, None);
    assert_eq!(w[0].repair, Repair::ValueIgnored);
    assert_eq!(w[0].at.map(|p| p.line), Some(line(&text, "<Val>yes")));

    // In a template, the Val's line too (not the DA's).
    let text = scl("<Val>true</Val>", "-1", "");
    let (_, w) = loaded(&text);
    assert_eq!(w[0].at.map(|p| p.line), Some(line(&text, "<Val>-1</Val>")));
    assert!(w[0].to_string().contains("INT32U"), "{}", w[0]);

    // Every Val of a DAI is checked (one per setting group with sGroup); the good ones stay.
    let text = scl(
        "<Val sGroup=\"1\">true</Val>\n<Val sGroup=\"2\">yes</Val>",
        "30000",
        "",
    );
    let (v, w) = loaded(&text);
    assert_eq!(v.as_deref(), Some("true"));
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].at.map(|p| p.line), Some(line(&text, ">yes<")));
}

#[test]
fn a_template_repeated_with_the_same_content_is_one_type() {
    let same = r#"    <DOType id="INS_T" cdc="INS">
      <DA name="stVal" fc="ST" bType="INT32"/>
    </DOType>"#;
    let text = scl("<Val>true</Val>", "30000", same);
    assert!(parse(&text).is_ok());
    // A different one of the same id is ambiguous: refused at the second.
    let other = same.replace("INT32", "INT16");
    let text = scl("<Val>true</Val>", "30000", &other);
    let e = parse(&text).unwrap_err();
    assert!(matches!(e.kind, SclErrorKind::Duplicate { .. }), "{e}");
    assert_eq!(e.at.map(|p| p.line), Some(line(&text, "INT16") - 1));
}
