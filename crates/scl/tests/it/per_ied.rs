//! Each IED of an SCD is judged on its own (an error in one leaves the others usable, and the
//! error names the IED and the line; a defect local to one element only repairs that IED, with
//! a warning), and a file in another namespace says which (the 2006 draft's is read under its
//! quirk, with a warning on every IED).
//!
//! The fixtures are written here. What showed the defects: BHEL's BCU SCD and the IOP 2019
//! multi-vendor SED (sureenapatnaik92/sampleProject TestData/BCU_402T.scd and
//! IOP_2019-09-26_LV_ED2_1_V12_XF.sed), where one IED's problem refused the whole file, and
//! rapid61850's LEx2GOOSE.scd (stevenblair/rapid61850 emf/src/rapid61850/LEx2GOOSE.scd), in the
//! draft namespace `http://www.iec.ch/61850/2006/SCL`, reported as "describes no IED".

use gander_scl::{parse, Repair, SclErrorKind};

/// A `lnType` that makes the IED's GGIO1 twice (one MMS name for two LNs): refused.
const BROKEN: &str = r#"GGIO_T"/><LN lnClass="GGIO" inst="1" lnType="GGIO_T"#;
/// A `lnType` with no template: GGIO1 is left out with a warning, the IED loads.
const REPAIRED: &str = "MISSING_T";

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
    let text = scd(&[("A", "GGIO_T"), ("B", BROKEN), ("C", REPAIRED)], NS);
    let scl = parse(&text).expect("the file as a whole is fine");
    let names: Vec<&str> = scl.ieds.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["A", "C"]);
    assert_eq!(scl.refused.len(), 1);
    let r = &scl.refused[0];
    assert_eq!(r.name, "B");
    assert_eq!(r.error.ied.as_deref(), Some("B"));
    assert!(
        matches!(&r.error.kind, SclErrorKind::Duplicate { what: "logical node", name } if name == "GGIO1"),
        "{}",
        r.error
    );
    let line = text
        .lines()
        .position(|l| l.contains(r#"lnType="GGIO_T"/><LN"#))
        .unwrap() as u32
        + 1;
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
    let c = scl.ied(Some("C")).unwrap();
    assert_eq!(
        c.logical_devices[0].logical_nodes.len(),
        1,
        "GGIO1 left out"
    );
    assert_eq!(c.warnings.len(), 1);
    let missing = text.lines().position(|l| l.contains("MISSING_T")).unwrap() as u32 + 1;
    assert_eq!(c.warnings[0].at.map(|p| p.line), Some(missing));
    assert!(scl.ied(Some("A")).unwrap().warnings.is_empty());
    // Without a name the file is ambiguous, and the message lists every IED.
    let e = scl.ied(None).unwrap_err();
    assert!(e.to_string().contains("A, C, B"), "{e}");
}

#[test]
fn every_ied_broken_is_still_a_per_ied_answer() {
    let scl = parse(&scd(&[("A", BROKEN), ("B", BROKEN)], NS)).unwrap();
    assert!(scl.ieds.is_empty());
    assert_eq!(scl.refused.len(), 2);
    // A file with one IED, refused: asking without a name gives that IED's error.
    let scl = parse(&scd(&[("ONLY", BROKEN)], NS)).unwrap();
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
    let e = parse(&scd(&[("A", "GGIO_T")], "http://www.iec.ch/61850/2007/SCL")).unwrap_err();
    assert_eq!(
        e.kind,
        SclErrorKind::WrongNamespace {
            found: "http://www.iec.ch/61850/2007/SCL".into()
        }
    );
    assert!(e.to_string().contains("2007/SCL"), "{e}");
    assert_eq!(e.at.map(|p| p.line), Some(2));
    // The draft namespace rapid61850 writes is read under its quirk, said on every IED at the
    // root's line; what the file holds is read as in the SCL namespace.
    let draft = scd(
        &[("A", "GGIO_T"), ("B", REPAIRED)],
        gander_scl::SCL_NS_DRAFT_2006,
    );
    let scl = parse(&draft).unwrap();
    assert_eq!(scl.ieds.len(), 2);
    for i in &scl.ieds {
        let w = &i.warnings[0];
        assert!(
            matches!(&w.repair, Repair::NamespaceQuirk { quirk, .. } if *quirk == gander_scl::DRAFT_2006_QUIRK),
            "{w}"
        );
        assert_eq!(w.at.map(|p| p.line), Some(2));
        assert!(w.to_string().contains("rapid61850"), "{w}");
    }
    assert_eq!(scl.ieds[0].logical_devices[0].logical_nodes.len(), 2);
    assert_eq!(
        scl.ieds[1].warnings.len(),
        2,
        "the quirk, then its own repair"
    );
    // Elements of the draft namespace in a file whose root is in the SCL namespace are a
    // vendor's, not SCL: skipped.
    let mixed = scd(&[("A", "GGIO_T")], NS).replace(
        "<IED name=\"A\">",
        &format!(
            "<IED xmlns=\"{}\" name=\"A\">",
            gander_scl::SCL_NS_DRAFT_2006
        ),
    );
    assert_eq!(parse(&mixed).unwrap_err().kind, SclErrorKind::NoIed);
    // No namespace at all is read (some tools write SCL without one).
    let text = scd(&[("A", "GGIO_T")], NS).replace(&format!(" xmlns=\"{NS}\""), "");
    assert_eq!(parse(&text).unwrap().ieds.len(), 1);
}

/// What each IED of a generated SCD is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fate {
    Good,
    Repaired,
    Broken,
}

proptest::proptest! {
    /// Whatever IEDs of an SCD are broken or repaired, exactly the broken ones are refused and
    /// the repaired ones load with one warning, each naming the line of its own fault; the
    /// loaded ones come back in file order.
    #[test]
    fn exactly_the_broken_ieds_are_refused(
        fates in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(Fate::Good),
                proptest::strategy::Just(Fate::Repaired),
                proptest::strategy::Just(Fate::Broken),
            ],
            1..12,
        )
    ) {
        let names: Vec<String> = (0..fates.len()).map(|i| format!("IED{i}")).collect();
        let spec: Vec<(&str, &str)> = names
            .iter()
            .zip(&fates)
            .map(|(n, f)| (n.as_str(), match f {
                Fate::Good => "GGIO_T",
                Fate::Repaired => REPAIRED,
                Fate::Broken => BROKEN,
            }))
            .collect();
        let text = scd(&spec, NS);
        let scl = parse(&text).unwrap();
        let of = |want: &[Fate]| -> Vec<&str> {
            names.iter().zip(&fates).filter(|(_, f)| want.contains(f)).map(|(n, _)| n.as_str()).collect()
        };
        proptest::prop_assert_eq!(
            scl.ieds.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(),
            of(&[Fate::Good, Fate::Repaired])
        );
        proptest::prop_assert_eq!(scl.refused.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), of(&[Fate::Broken]));
        let ied_line = |name: &str| {
            text.lines().position(|l| l.contains(&format!("<IED name=\"{name}\">"))).unwrap() as u32 + 1
        };
        // The fault is on the GGIO's line, 6 lines below its IED's start.
        for r in &scl.refused {
            proptest::prop_assert_eq!(r.error.ied.as_deref(), Some(r.name.as_str()));
            proptest::prop_assert_eq!(r.error.at.map(|p| p.line), Some(ied_line(&r.name) + 6));
        }
        for i in &scl.ieds {
            let repaired = of(&[Fate::Repaired]).contains(&i.name.as_str());
            proptest::prop_assert_eq!(i.warnings.len(), usize::from(repaired));
            if let Some(w) = i.warnings.first() {
                proptest::prop_assert_eq!(w.at.map(|p| p.line), Some(ied_line(&i.name) + 6));
            }
        }
    }
}

/// Asking an SCD for "the" IED without a name: it says the file has several and names them
/// (BHEL's BCU SCD used to answer `no IED named "(none given; the file has several)"`).
#[test]
fn no_name_for_a_file_of_several_ieds_lists_them() {
    let text = scd(&[("A", "GGIO_T"), ("C", REPAIRED)], NS);
    let scl = parse(&text).unwrap();
    let e = scl.ied(None).unwrap_err();
    assert!(
        matches!(&e.kind, SclErrorKind::IedNotChosen { have } if have.contains('A') && have.contains('C')),
        "{e}"
    );
    assert!(e.to_string().contains("several IEDs"), "{e}");
    let e = scl.ied(Some("Z")).unwrap_err();
    assert!(
        matches!(&e.kind, SclErrorKind::IedNotFound { wanted, .. } if wanted == "Z"),
        "{e}"
    );
    assert_eq!(scl.ied(Some("C")).unwrap().name, "C");
}
