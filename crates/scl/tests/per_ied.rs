//! Each IED of an SCD is judged on its own (an error in one leaves the others usable, and the
//! error names the IED and the line), and a file in another namespace says which.
//!
//! The fixtures are written here. What showed the defects: BHEL's BCU SCD and the IOP 2019
//! multi-vendor SED (sureenapatnaik92/sampleProject TestData/BCU_402T.scd and
//! IOP_2019-09-26_LV_ED2_1_V12_XF.sed), where one IED's problem refused the whole file, and
//! rapid61850's LEx2GOOSE.scd (stevenblair/rapid61850 emf/src/rapid61850/LEx2GOOSE.scd), in the
//! draft namespace `http://www.iec.ch/61850/2006/SCL`, reported as "describes no IED".

use gander_scl::{parse, SclErrorKind};

/// One IED of the SCD: `ln_type` of its GGIO decides whether it is valid.
fn ied(name: &str, ln_type: &str) -> String {
    format!(
        r#"  <IED name="{name}">
    <AccessPoint name="AP1">
      <Server>
        <Authentication/>
        <LDevice inst="LD0">
          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T"/>
          <LN lnClass="GGIO" inst="1" lnType="{ln_type}"/>
        </LDevice>
      </Server>
    </AccessPoint>
  </IED>
"#
    )
}

fn scd(ieds: &[(&str, &str)], ns: &str) -> String {
    let mut s = format!("<?xml version=\"1.0\"?>\n<SCL xmlns=\"{ns}\">\n  <Header id=\"t\"/>\n");
    for (n, t) in ieds {
        s.push_str(&ied(n, t));
    }
    s.push_str(
        r#"  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0"><DO name="Beh" type="INS_T"/></LNodeType>
    <LNodeType id="GGIO_T" lnClass="GGIO"><DO name="Beh" type="INS_T"/></LNodeType>
    <DOType id="INS_T" cdc="INS"><DA name="stVal" fc="ST" bType="INT32"/></DOType>
  </DataTypeTemplates>
</SCL>
"#,
    );
    s
}

const NS: &str = "http://www.iec.ch/61850/2003/SCL";

#[test]
fn one_broken_ied_leaves_the_others_usable() {
    let text = scd(&[("A", "GGIO_T"), ("B", "MISSING_T"), ("C", "GGIO_T")], NS);
    let scl = parse(&text).expect("the file as a whole is fine");
    let names: Vec<&str> = scl.ieds.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["A", "C"]);
    assert_eq!(scl.refused.len(), 1);
    let r = &scl.refused[0];
    assert_eq!(r.name, "B");
    assert_eq!(r.error.ied.as_deref(), Some("B"));
    assert!(
        matches!(&r.error.kind, SclErrorKind::UnknownType { kind: "LNodeType", id } if id == "MISSING_T"),
        "{}",
        r.error
    );
    let line = text.lines().position(|l| l.contains("MISSING_T")).unwrap() as u32 + 1;
    assert_eq!(r.error.at.map(|p| p.line), Some(line));
    assert!(
        r.error
            .to_string()
            .starts_with(&format!("IED B: line {line}, column")),
        "{}",
        r.error
    );
    // Asking for the refused IED gives its error; the valid ones are there.
    assert_eq!(scl.ied(Some("B")).unwrap_err(), r.error);
    assert_eq!(scl.ied(Some("C")).unwrap().name, "C");
    // Without a name the file is ambiguous, and the message lists every IED.
    let e = scl.ied(None).unwrap_err();
    assert!(e.to_string().contains("A, C, B"), "{e}");
}

#[test]
fn every_ied_broken_is_still_a_per_ied_answer() {
    let scl = parse(&scd(&[("A", "NOPE"), ("B", "NOPE2")], NS)).unwrap();
    assert!(scl.ieds.is_empty());
    assert_eq!(scl.refused.len(), 2);
    // A file with one IED, refused: asking without a name gives that IED's error.
    let scl = parse(&scd(&[("ONLY", "NOPE")], NS)).unwrap();
    let e = scl.ied(None).unwrap_err();
    assert_eq!(e.ied.as_deref(), Some("ONLY"));
}

#[test]
fn a_second_ied_of_the_same_name_is_refused() {
    let text = scd(&[("A", "GGIO_T"), ("A", "GGIO_T")], NS);
    let scl = parse(&text).unwrap();
    assert_eq!(scl.ieds.len(), 1);
    assert!(
        matches!(&scl.refused[0].error.kind, SclErrorKind::Duplicate { what: "IED", name } if name == "A")
    );
    let second = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("<IED name=\"A\">"))
        .nth(1)
        .unwrap()
        .0 as u32
        + 1;
    assert_eq!(scl.refused[0].error.at.map(|p| p.line), Some(second));
}

#[test]
fn another_namespace_is_named() {
    let e = parse(&scd(&[("A", "GGIO_T")], "http://www.iec.ch/61850/2006/SCL")).unwrap_err();
    assert_eq!(
        e.kind,
        SclErrorKind::WrongNamespace {
            found: "http://www.iec.ch/61850/2006/SCL".into()
        }
    );
    assert!(e.to_string().contains("2006/SCL"), "{e}");
    assert_eq!(e.at.map(|p| p.line), Some(2));
    // No namespace at all is read (some tools write SCL without one).
    let text = scd(&[("A", "GGIO_T")], NS).replace(&format!(" xmlns=\"{NS}\""), "");
    assert_eq!(parse(&text).unwrap().ieds.len(), 1);
}

proptest::proptest! {
    /// Whatever IEDs of an SCD are broken, exactly those are refused, each naming itself and
    /// the line of its own fault, and the others come back in file order.
    #[test]
    fn exactly_the_broken_ieds_are_refused(broken in proptest::collection::vec(proptest::bool::ANY, 1..12)) {
        let names: Vec<String> = (0..broken.len()).map(|i| format!("IED{i}")).collect();
        let spec: Vec<(&str, &str)> = names
            .iter()
            .zip(&broken)
            .map(|(n, b)| (n.as_str(), if *b { "MISSING_T" } else { "GGIO_T" }))
            .collect();
        let text = scd(&spec, NS);
        let scl = parse(&text).unwrap();
        let good: Vec<&str> = spec.iter().filter(|(_, t)| *t == "GGIO_T").map(|(n, _)| *n).collect();
        let bad: Vec<&str> = spec.iter().filter(|(_, t)| *t != "GGIO_T").map(|(n, _)| *n).collect();
        proptest::prop_assert_eq!(scl.ieds.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), good);
        proptest::prop_assert_eq!(scl.refused.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), bad.clone());
        for r in &scl.refused {
            proptest::prop_assert_eq!(r.error.ied.as_deref(), Some(r.name.as_str()));
            let ied_line = text.lines().position(|l| l.contains(&format!("<IED name=\"{}\">", r.name))).unwrap() as u32 + 1;
            // The LN with the dangling type is 6 lines below its IED's start.
            proptest::prop_assert_eq!(r.error.at.map(|p| p.line), Some(ied_line + 6));
        }
    }
}
