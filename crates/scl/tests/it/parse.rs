//! The SCL reader against a hand-written bay-controller ICD (`data/bay_controller.icd`, written
//! for these tests) and against broken variants of it: each refused with the reason and the
//! line, or, for a defect local to one element, loaded with a warning at its line.

use gander_scl::{parse, BasicType, Fc, Ied, NodeKind, Repair, SclErrorKind, SclWarning};

const ICD: &str = include_str!("../data/bay_controller.icd");

#[test]
fn model_data_sets_and_report_controls() {
    let scl = parse(ICD).expect("the test ICD parses");
    let ied = scl.ied(None).unwrap();
    assert_eq!(ied.name, "BAY1");
    assert_eq!(ied.manufacturer.as_deref(), Some("gander-tests"));
    let domains: Vec<&str> = ied
        .logical_devices
        .iter()
        .map(|l| l.domain.as_str())
        .collect();
    // Domain = IED name + inst, or ldName when the LD has one (IEC 61850-8-1 §8.1.3.1).
    assert_eq!(domains, ["BAY1PROT", "BAY1_Measurements"]);
    let prot = &ied.logical_devices[0];
    let lns: Vec<&str> = prot.logical_nodes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(lns, ["LLN0", "Q0XCBR1", "PTOC1"]);

    // Leaves of XCBR1 as MMS variables, FC-grouped.
    let xcbr = &prot.logical_nodes[1];
    let items: Vec<String> = xcbr.variables().iter().map(|v| v.item.clone()).collect();
    assert!(
        items.contains(&"Q0XCBR1$ST$Pos$stVal".to_string()),
        "{items:?}"
    );
    assert!(items.contains(&"Q0XCBR1$CF$Pos$ctlModel".to_string()));
    let st = xcbr
        .variables()
        .into_iter()
        .find(|v| v.item == "Q0XCBR1$ST$Pos$stVal")
        .unwrap();
    assert_eq!((st.fc, st.btype), (Fc::ST, BasicType::Dbpos));
    assert_eq!(st.reference, "Q0XCBR1.Pos.stVal [ST]");
    assert_eq!(xcbr.fcs(), [Fc::CF, Fc::ST]);

    // SDOs and nested structures resolve to leaves with the DA's FC.
    let mmxu = &ied.logical_devices[1].logical_nodes[1];
    let v = mmxu.variables();
    let mag = v
        .iter()
        .find(|v| v.item == "MMXU1$MX$PhV$phsB$cVal$mag$f")
        .expect("nested leaf");
    assert_eq!(mag.btype, BasicType::Float32);
    assert_eq!(
        v.iter()
            .filter(|v| v.item.starts_with("MMXU1$MX$PhV$"))
            .count(),
        3 * (2 + 2)
    );
    match &mmxu.data_objects[1].children[0].kind {
        NodeKind::Object { cdc } => assert_eq!(cdc, "CMV"),
        k => panic!("{k:?}"),
    }

    // Data sets: members resolved to their domains (across LDs) and MMS items.
    let lln0 = &prot.logical_nodes[0];
    let trips = &lln0.data_sets[0];
    let m: Vec<(String, String, Fc)> = trips
        .members
        .iter()
        .map(|f| (f.domain.clone(), f.item.clone(), f.fc))
        .collect();
    assert_eq!(
        m,
        [
            ("BAY1PROT".into(), "Q0XCBR1$ST$Pos".into(), Fc::ST),
            ("BAY1PROT".into(), "PTOC1$ST$Op$general".into(), Fc::ST),
            (
                "BAY1_Measurements".into(),
                "MMXU1$MX$PhV$phsA$cVal$mag$f".into(),
                Fc::MX
            ),
        ]
    );

    // Report control blocks with the schema's defaults and their instance names.
    let b = &lln0.report_controls[0];
    assert!(b.buffered && b.indexed);
    assert_eq!(
        (b.conf_rev, b.buf_time, b.intg_pd, b.max),
        (3, 50, 10000, 2)
    );
    assert_eq!(b.rpt_id.as_deref(), Some("BAY1/Trips"));
    assert!(
        b.trg_ops.dchg && b.trg_ops.qchg && b.trg_ops.period && b.trg_ops.gi && !b.trg_ops.dupd
    );
    assert!(b.opt_fields.entry_id && b.opt_fields.buf_ovfl && !b.opt_fields.data_ref);
    assert_eq!(b.instances(), ["brcbTrips01", "brcbTrips02"]);
    assert_eq!(b.fc(), Fc::BR);
    let u = &lln0.report_controls[1];
    assert_eq!(u.instances(), ["urcbStatus"]);
    assert!(!u.trg_ops.gi, "gi=\"false\" is kept");
    assert_eq!(u.fc(), Fc::RP);
    let n = &lln0.report_controls[2];
    assert_eq!((n.rpt_id.as_deref(), n.data_set.as_deref()), (None, None));
    assert_eq!(n.instances(), ["urcbNone01"], "indexed by default, max 1");
}

/// Applies `edit` to the test ICD and returns the refusal.
fn refused(from: &str, to: &str) -> gander_scl::SclError {
    assert!(ICD.contains(from), "edit target missing: {from}");
    one_ied_error(&ICD.replacen(from, to, 1))
}

/// The refusal of a one-IED file: of the file, or of its IED (which then names the IED).
fn one_ied_error(text: &str) -> gander_scl::SclError {
    match parse(text) {
        Err(e) => e,
        Ok(scl) => {
            let e = scl.ied(None).expect_err("refused").clone();
            assert_eq!(scl.refused.len(), 1);
            assert_eq!(e.ied.as_deref(), Some(scl.refused[0].name.as_str()));
            e
        }
    }
}

fn line_of(needle: &str) -> u32 {
    ICD.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

/// Applies `edit` to the test ICD: the IED still loads; returns it and its warnings.
fn repaired(from: &str, to: &str) -> (Ied, Vec<SclWarning>) {
    assert!(ICD.contains(from), "edit target missing: {from}");
    let scl = parse(&ICD.replacen(from, to, 1)).expect("the file as a whole is fine");
    assert!(scl.refused.is_empty(), "{:?}", scl.refused);
    let ied = scl.ied(None).unwrap().clone();
    let w = ied.warnings.clone();
    assert!(!w.is_empty(), "{to}: no warning");
    (ied, w)
}

/// The one warning of an edit, checked for its repair and line.
fn one_warning(from: &str, to: &str, line_needle: &str) -> (Ied, SclWarning) {
    let (ied, w) = repaired(from, to);
    assert_eq!(w.len(), 1, "{to}: {w:?}");
    let w = w[0].clone();
    let text = ICD.replacen(from, to, 1);
    let line = text.lines().position(|l| l.contains(line_needle)).unwrap() as u32 + 1;
    assert_eq!(w.at.map(|p| p.line), Some(line), "{w}");
    (ied, w)
}

/// What still refuses the IED or the file: defects that make the model meaningless or its
/// MMS names ambiguous (docs/scl.md, "Repairs").
#[test]
fn broken_files_are_refused_with_the_line() {
    let e = refused(
        r#"<DOType id="INS_T" cdc="INS">"#,
        r#"<DOType id="ACT_T" cdc="INS">"#,
    );
    assert!(
        matches!(&e.kind, SclErrorKind::Duplicate { what: "DOType", .. }),
        "{e}"
    );
    let e = refused(r#"<DataSet name="Status">"#, r#"<DataSet name="Trips">"#);
    assert!(
        matches!(
            &e.kind,
            SclErrorKind::Duplicate {
                what: "data set",
                ..
            }
        ),
        "{e}"
    );
    let e = refused(
        r#"<ReportControl name="urcbStatus""#,
        r#"<ReportControl name="brcbTrips""#,
    );
    assert!(
        matches!(
            &e.kind,
            SclErrorKind::Duplicate {
                what: "ReportControl",
                ..
            }
        ),
        "{e}"
    );
    let e = refused(
        r#"<LDevice inst="MEAS" ldName="BAY1_Measurements">"#,
        r#"<LDevice inst="MEAS" ldName="BAY1PROT">"#,
    );
    assert!(
        matches!(
            &e.kind,
            SclErrorKind::Duplicate {
                what: "logical device",
                ..
            }
        ),
        "{e}"
    );
    // Two LNs of one name would be one MMS variable.
    let e = refused(
        r#"<LN lnClass="PTOC" inst="1" lnType="PTOC_T"/>"#,
        r#"<LN lnClass="PTOC" inst="1" lnType="PTOC_T"/><LN lnClass="PTOC" inst="1" lnType="PTOC_T"/>"#,
    );
    assert!(
        matches!(&e.kind, SclErrorKind::Duplicate { what: "logical node", name } if name == "PTOC1"),
        "{e}"
    );
    assert_eq!(e.at.unwrap().line, line_of(r#"lnClass="PTOC" inst="1""#));
    // Servers without an LDevice (the schema's tServer needs one) and none with one: the IED
    // has no model.
    let no_ld = ICD.replacen("<Server>", "<Server/><Server>", 1);
    let start = no_ld.find("<Server/><Server>").unwrap() + "<Server/>".len();
    let end = no_ld.find("</Server>").unwrap() + "</Server>".len();
    let e = one_ied_error(&format!("{}{}", &no_ld[..start], &no_ld[end..]));
    assert!(
        matches!(
            &e.kind,
            SclErrorKind::MissingElement {
                element: "Server",
                child: "LDevice"
            }
        ),
        "{e}"
    );
    assert!(e.to_string().starts_with("IED BAY1: line "), "{e}");

    let e = refused("<IED name=\"BAY1\"", "<IEDX name=\"BAY1\"");
    assert!(
        matches!(&e.kind, SclErrorKind::Xml(_)),
        "mismatched tags: {e}"
    );
}

/// A defect local to one element loads the IED with a warning at the element's line that says
/// what was done (docs/scl.md, "Repairs").
#[test]
fn local_defects_are_repaired_with_the_line() {
    // A missing LNodeType: the LN is left out (OpenSCD valid2007B4.scd's "Dummy.THARDE").
    let (ied, w) = repaired(
        r#"<LN lnClass="PTOC" inst="1" lnType="PTOC_T"/>"#,
        r#"<LN lnClass="PTOC" inst="1" lnType="NOPE"/>"#,
    );
    assert!(
        matches!(&w[0].problem, SclErrorKind::UnknownType { kind: "LNodeType", id } if id == "NOPE"),
        "{}",
        w[0]
    );
    assert_eq!(w[0].at.unwrap().line, line_of(r#"lnClass="PTOC" inst="1""#));
    assert!(
        matches!(&w[0].repair, Repair::LogicalNodeLeftOut { ld, ln } if ld == "PROT" && ln == "PTOC1")
    );
    let lns: Vec<&str> = ied.logical_devices[0]
        .logical_nodes
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert_eq!(lns, ["LLN0", "Q0XCBR1"]);
    // ...and the data set member naming it is dropped, with its own warning.
    assert!(
        matches!(&w[1].repair, Repair::MemberDropped { data_set } if data_set == "Trips"),
        "{}",
        w[1]
    );
    assert_eq!(
        w[1].at.unwrap().line,
        line_of(r#"doName="Op" daName="general""#)
    );
    assert_eq!(
        ied.logical_devices[0].logical_nodes[0].data_sets[0]
            .members
            .len(),
        2
    );

    // An unknown bType or FC: the DA is left out of its DOType.
    for (from, to) in [
        (
            r#"<DA name="stVal" fc="ST" bType="INT32" dchg="true"/>"#,
            r#"<DA name="stVal" fc="ST" bType="INT33"/>"#,
        ),
        (
            r#"<DA name="general" fc="ST""#,
            r#"<DA name="general" fc="ZZ""#,
        ),
    ] {
        let (_, w) = repaired(from, to);
        assert!(
            matches!(&w[0].problem, SclErrorKind::BadValue { .. }),
            "{}",
            w[0]
        );
        assert!(
            matches!(
                &w[0].repair,
                Repair::ComponentLeftOut {
                    element: "DA",
                    parent: "DOType",
                    ..
                }
            ),
            "{}",
            w[0]
        );
    }

    // A member that names nothing, or the right name with the wrong FC: dropped.
    for (from, to) in [
        (
            r#"doName="Op" daName="general""#,
            r#"doName="Op" daName="missing""#,
        ),
        (r#"daName="stVal" fc="ST"/>"#, r#"daName="stVal" fc="MX"/>"#),
    ] {
        let (_, w) = one_warning(from, to, &to[..to.len().min(20)]);
        assert!(
            matches!(&w.problem, SclErrorKind::UnknownMember { .. }),
            "{w}"
        );
        assert!(matches!(&w.repair, Repair::MemberDropped { .. }), "{w}");
    }

    // Report control blocks that cannot be served as written are left out.
    for (from, to) in [
        (r#"datSet="Status""#, r#"datSet="Nope""#),
        (r#"confRev="1" indexed="false""#, r#"indexed="false""#),
        (r#"<RptEnabled max="2"/>"#, r#"<RptEnabled max="100"/>"#),
        (r#"bufTime="50""#, r#"bufTime="soon""#),
        (r#"buffered="true""#, r#"buffered="yes""#),
    ] {
        let (ied, w) = repaired(from, to);
        assert!(
            matches!(&w[0].repair, Repair::ControlBlockLeftOut { .. }),
            "{to}: {}",
            w[0]
        );
        assert_eq!(
            ied.logical_devices[0].logical_nodes[0]
                .report_controls
                .len(),
            2
        );
    }

    // A buffered, unindexed block with max > 1 (the IOP 2019 SED's max="7"): one instance.
    let (ied, w) = one_warning(
        r#"confRev="1" indexed="false">"#,
        r#"confRev="1" indexed="false" buffered="true"><RptEnabled max="3"/>"#,
        r#"<RptEnabled max="3"/>"#,
    );
    assert!(
        matches!(&w.problem, SclErrorKind::BadValue { why, .. } if why.contains("single")),
        "{w}"
    );
    assert_eq!(w.repair, Repair::SingleInstance);
    let rc = &ied.logical_devices[0].logical_nodes[0].report_controls[1];
    assert_eq!(
        (rc.max, rc.instances()),
        (1, vec!["urcbStatus".to_string()])
    );

    // A structure that contains itself: the BDA that recurses is left out.
    let (_, w) = repaired(
        r#"<BDA name="f" bType="FLOAT32"/>"#,
        r#"<BDA name="f" bType="Struct" type="Vector_T"/>"#,
    );
    assert!(
        matches!(&w[0].problem, SclErrorKind::RecursiveType { .. }),
        "{}",
        w[0]
    );
    assert!(matches!(
        &w[0].repair,
        Repair::ComponentLeftOut { element: "BDA", .. }
    ));

    // An empty Server beside one with LDs (sp_multiple_access_points.icd's second access
    // point, sureenapatnaik92/sampleProject TestData/multipleacesspoints.xml): it serves
    // nothing, said with a warning.
    let (ied, w) = one_warning(
        "</AccessPoint>",
        "</AccessPoint>\n    <AccessPoint name=\"S2\"><Server><Authentication/></Server></AccessPoint>",
        "<AccessPoint name=\"S2\">",
    );
    assert!(
        matches!(&w.repair, Repair::EmptyServerIgnored { access_point } if access_point == "S2"),
        "{w}"
    );
    assert_eq!(ied.logical_devices.len(), 2);
}

/// Names become components of MMS object names joined with `$` (IEC 61850-8-1): a `$` or
/// another character outside letters, digits and `_` in one would name another object
/// (found by the `fuzz_scl` target with a DO named `Mo$d`). The element is left out, so no
/// such name is served.
#[test]
fn names_that_would_break_mms_names_are_left_out() {
    for (from, to, element) in [
        (
            r#"<DO name="Mod" type="ENC_Mod"/>"#,
            r#"<DO name="Mo$d" type="ENC_Mod"/>"#,
            "DO",
        ),
        (
            r#"<DA name="stVal" fc="ST" bType="INT32" dchg="true"/>"#,
            r#"<DA name="st Val" fc="ST" bType="INT32" dchg="true"/>"#,
            "DA",
        ),
        (
            r#"<LN lnClass="PTOC" inst="1" lnType="PTOC_T"/>"#,
            r#"<LN lnClass="PTOC" inst="$1" lnType="PTOC_T"/>"#,
            "LN",
        ),
    ] {
        let (ied, w) = repaired(from, to);
        assert!(
            matches!(&w[0].problem, SclErrorKind::BadValue { element: el, .. } if *el == element),
            "{to}: {}",
            w[0]
        );
        assert!(w[0].to_string().contains("MMS name"), "{}", w[0]);
        for ld in &ied.logical_devices {
            for ln in &ld.logical_nodes {
                assert!(!ln.name.contains('$'));
                for v in ln.variables() {
                    assert!(
                        !v.item.contains("Mo$d") && !v.item.contains(' '),
                        "{}",
                        v.item
                    );
                }
            }
        }
    }
}

#[test]
fn still_valid_edits_parse_and_wrong_files_say_what_they_are() {
    assert!(parse(&ICD.replacen("</IED>", "</IED><!-- comment -->", 1)).is_ok());
    let e = parse("<html><body/></html>").unwrap_err();
    assert_eq!(e.kind, SclErrorKind::NotScl("html".into()));
    let e = parse(r#"<SCL xmlns="http://www.iec.ch/61850/2003/SCL"/>"#).unwrap_err();
    assert_eq!(e.kind, SclErrorKind::NoIed);
    let e = parse("<SCL><IED").unwrap_err();
    assert!(matches!(e.kind, SclErrorKind::Xml(_)));
    // No DTD, so no entity expansion (billion laughs).
    let e = parse(r#"<!DOCTYPE SCL [<!ENTITY a "aaaa">]><SCL>&a;</SCL>"#).unwrap_err();
    assert!(matches!(e.kind, SclErrorKind::Xml(_)), "{e}");
    let scl = parse(ICD).unwrap();
    let e = scl.ied(Some("BAY9")).unwrap_err();
    assert!(e.to_string().contains("BAY1"), "{e}");
    let e = gander_scl::load(std::path::Path::new("/nonexistent/x.icd")).unwrap_err();
    assert!(matches!(e.kind, SclErrorKind::Io { .. }));
}

#[test]
fn a_file_with_several_ieds_needs_a_name() {
    let two = ICD.replacen("</IED>", "</IED><IED name=\"BAY2\"/>", 1);
    let scl = parse(&two).unwrap();
    assert_eq!(scl.ieds.len(), 2);
    assert!(scl.ied(None).is_err());
    assert_eq!(scl.ied(Some("BAY2")).unwrap().logical_devices.len(), 0);
}

const CID: &str = include_str!("../data/feeder_protection.cid");

fn cid_value(ied: &gander_scl::Ied, ld: &str, ln: &str, path: &[&str]) -> Option<String> {
    let ln = ied
        .logical_devices
        .iter()
        .find(|l| l.inst == ld)?
        .logical_nodes
        .iter()
        .find(|l| l.name == ln)?;
    let mut nodes = &ln.data_objects;
    let mut found = None;
    for p in path {
        let n = nodes.iter().find(|d| d.name == *p)?;
        nodes = &n.children;
        found = Some(n);
    }
    found?.value.clone()
}

#[test]
fn initial_values_and_access_points() {
    let scl = parse(CID).unwrap();
    let ied = scl.ied(None).unwrap();
    // DAI over template, Enum literal -> ord, template Val, Enum default = first ord.
    assert_eq!(
        cid_value(ied, "PROT", "LLN0", &["Mod", "stVal"]).as_deref(),
        Some("1")
    );
    assert_eq!(
        cid_value(ied, "PROT", "LLN0", &["Mod", "ctlModel"]).as_deref(),
        Some("0")
    );
    assert_eq!(
        cid_value(ied, "PROT", "LLN0", &["NamPlt", "ldNs"]).as_deref(),
        Some("IEC 61850-7-4:2007B4")
    );
    assert_eq!(
        cid_value(ied, "PROT", "LLN0", &["Health", "stVal"]).as_deref(),
        Some("1")
    );
    assert_eq!(
        cid_value(ied, "PROT", "PTOC1", &["StrVal", "setMag", "f"]).as_deref(),
        Some("600")
    );
    assert_eq!(cid_value(ied, "PROT", "PTOC1", &["Str", "general"]), None);
    assert_eq!(ied.logical_devices_of(Some("S1")).unwrap().len(), 2);
    let e = ied.logical_devices_of(Some("S2")).unwrap_err();
    assert!(
        matches!(e.kind, SclErrorKind::AccessPointNotFound { .. }),
        "{e}"
    );
    // Broken instance values are ignored with a warning naming the element and line.
    let line = |needle: &str| CID.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1;
    let first_warning = |text: &str| {
        let scl = parse(text).unwrap();
        let ied = scl.ied(None).unwrap();
        assert_eq!(ied.warnings.len(), 1, "{:?}", ied.warnings);
        ied.warnings[0].clone()
    };
    let bad = CID.replacen("<DOI name=\"StrVal\">", "<DOI name=\"StrValX\">", 1);
    let w = first_warning(&bad);
    assert!(
        matches!(w.problem, SclErrorKind::UnknownInstance { .. }),
        "{w}"
    );
    assert_eq!(w.repair, Repair::InstanceIgnored);
    assert_eq!(w.at.unwrap().line, line("<DOI name=\"StrVal\">"));
    let bad = CID.replacen("<Val>status-only</Val>", "<Val>remote</Val>", 1);
    let w = first_warning(&bad);
    assert!(
        w.to_string()
            .contains("not a literal of the attribute's EnumType"),
        "{w}"
    );
    assert_eq!(w.repair, Repair::ValueIgnored);
    assert_eq!(w.at.unwrap().line, line("<Val>status-only</Val>"));
}

/// An LDevice none of whose LNs could be built is left out with a warning, and an IED left
/// with no LD is refused as an empty Server is: an MMS server without a domain serves nothing
/// (open-scd's `updatedescSEL.scd`, `updatedescABB.scd` and `importieds/template.icd` name
/// LNodeTypes their files do not hold, and were served as LDs without LLN0 or any LN).
#[test]
fn an_ld_with_no_buildable_ln_is_left_out_and_an_ied_with_none_is_refused() {
    let (ied, w) = repaired(
        r#"<LN0 lnClass="LLN0" inst="" lnType="LLN0_T"/>
          <LN lnClass="MMXU" inst="1" lnType="MMXU_T"/>"#,
        r#"<LN0 lnClass="LLN0" inst="" lnType="Dummy.LLN0"/>
          <LN lnClass="MMXU" inst="1" lnType="Dummy.MMXU"/>"#,
    );
    assert!(
        w.iter().any(|w| matches!(&w.repair,
            Repair::LogicalDeviceLeftOut { ld } if ld == "BAY1_Measurements")),
        "{w:?}"
    );
    // Another LD is left: the warning does not say none is (open-scd's
    // iedEditorWithIEDs.scd, IED1, read "and no other LD is left" while serving two).
    assert!(
        w.iter().all(|w| !w.to_string().contains("no other LD")),
        "{w:?}"
    );
    let domains: Vec<_> = ied
        .logical_devices
        .iter()
        .map(|l| l.domain.as_str())
        .collect();
    assert_eq!(domains, ["BAY1PROT"]);

    let all = ICD.replace(r#"lnType=""#, r#"lnType="Dummy."#);
    let e = one_ied_error(&all);
    assert!(
        matches!(&e.kind, SclErrorKind::NoBuildableLn { ld, last: true } if ld == "BAY1PROT"),
        "{e}"
    );
}

/// `lnClass="LLN0" lnInst="1"` in an FCDA (libiec61850's `dotnet/tests/simpleIO_control_tests.scd`)
/// can only mean the LD's LLN0, which has no instance number: read so, with a warning, instead
/// of dropping the member.
#[test]
fn an_lln0_member_with_an_instance_is_read_as_lln0() {
    let (ied, w) = one_warning(
        r#"<FCDA ldInst="PROT" prefix="Q0" lnClass="XCBR" lnInst="1" doName="Pos" daName="stVal" fc="ST"/>"#,
        r#"<FCDA ldInst="PROT" lnClass="LLN0" lnInst="1" doName="Mod" daName="stVal" fc="ST"/>"#,
        r#"lnClass="LLN0" lnInst="1""#,
    );
    assert_eq!(w.repair, Repair::LnInstIgnoredOnLln0, "{w}");
    let lln0 = &ied.logical_devices[0].logical_nodes[0];
    let status = lln0.data_sets.iter().find(|d| d.name == "Status").unwrap();
    assert_eq!(status.members.len(), 1);
    assert_eq!(status.members[0].item, "LLN0$ST$Mod$stVal");
    // Another class with an instance that does not exist is still dropped.
    let (_, w) = repaired(
        r#"<FCDA ldInst="PROT" prefix="Q0" lnClass="XCBR" lnInst="1" doName="Pos" daName="stVal" fc="ST"/>"#,
        r#"<FCDA ldInst="PROT" prefix="Q0" lnClass="XCBR" lnInst="7" doName="Pos" daName="stVal" fc="ST"/>"#,
    );
    assert!(
        matches!(&w[0].repair, Repair::MemberDropped { .. }),
        "{}",
        w[0]
    );
}

/// A prefix used without a declaration (smartgridadsc/CyberRange `standalone.sed` writes
/// `<P type="IP" xsi:type="tP_IP">` with no `xmlns:xsi`): the whole file was refused as "not
/// well-formed XML"; now it loads with a warning on every IED naming the prefix and its line.
#[test]
fn an_undeclared_prefix_is_declared_with_a_warning() {
    let (ied, w) = one_warning(
        r#"<Header id="gander-bay" version="1" revision="1"/>"#,
        r#"<Header id="gander-bay" version="1" revision="1" xsi:type="tHeader"/>"#,
        "xsi:type",
    );
    assert!(
        matches!(&w.problem, SclErrorKind::UndeclaredPrefix { prefix } if prefix == "xsi"),
        "{w}"
    );
    assert_eq!(w.repair.token(), "prefix-declared");
    assert_eq!(ied.logical_devices.len(), 2, "the model is read whole");
}

/// Two schema defects libiec61850 and gander both read past, now said (exit 4, not "valid as
/// written"): an `LN` with `inst=""` (smartgridadsc/IEC61850SecurityDataset's `LIED10.iid`,
/// `<LN lnClass="PTRC" inst="">`), served as prefix and class alone; and an `LDevice` placed
/// directly in an `AccessPoint` without a `Server` (faisalanwer/Sec_R-GOOSE-R-SV's
/// `sample.sed`), which is not served, with a warning instead of the IED passing as a client.
#[test]
fn an_empty_ln_inst_and_an_ldevice_outside_a_server_are_said() {
    // (The data set member that names PTOC1 is dropped too: a second warning.)
    let (ied, w) = repaired(
        r#"<LN lnClass="PTOC" inst="1" lnType="PTOC_T"/>"#,
        r#"<LN lnClass="PTOC" inst="" lnType="PTOC_T"/>"#,
    );
    assert_eq!(
        w[0].repair,
        Repair::EmptyLnInst { ln: "PTOC".into() },
        "{w:?}"
    );
    assert!(ied.logical_devices[0]
        .logical_nodes
        .iter()
        .any(|l| l.name == "PTOC"));
    let (ied, w) = one_warning(
        "</AccessPoint>",
        "</AccessPoint>\n    <AccessPoint name=\"S9\"><LDevice inst=\"LOOSE\"/></AccessPoint>",
        "<LDevice inst=\"LOOSE\"",
    );
    assert_eq!(
        w.repair,
        Repair::LDeviceOutsideServer {
            access_point: "S9".into(),
            ld: "LOOSE".into()
        },
        "{w}"
    );
    assert!(ied.logical_devices.iter().all(|l| l.inst != "LOOSE"));
}
