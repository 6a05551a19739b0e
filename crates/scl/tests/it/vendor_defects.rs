//! Real vendors' and tools' SCL files that gander refused whole now load, each defect reported
//! as a warning with its line and the repair made (docs/scl.md, "Repairs"). One small fixture
//! of gander's own per defect, each naming the public file that showed it:
//!
//! - libiec61850 `tools/model_generator/complexModel.icd`: FCDA `ldInst` = the LD's MMS domain;
//! - OpenSCD `packages/plugins/test/testfiles/Services.scd`: FCDA `ldInst` naming no LD;
//! - OpenSCD `packages/plugins/test/testfiles/valid2003.scd`: `EnumType "Beh"` missing;
//! - OpenSCD `packages/plugins/test/testfiles/valid2007B4.scd`: `<SDI name="pulseConfig">`
//!   naming nothing in its type, and `LNodeType "Dummy.THARDE"` missing;
//! - stevenblair/rapid61850 `emf/src/rapid61850/LEx2GOOSE.scd`: the 2006 draft namespace;
//! - sureenapatnaik92/sampleProject `TestData/IOP_2019-09-26_LV_ED2_1_V12_XF.sed` (the IEC
//!   61850 IOP 2019 multi-vendor SED): `<Val>False</Val>` for a BOOLEAN, and `<RptEnabled
//!   max="7">` on a buffered control block with `indexed="false"`.

use gander_scl::{parse, Ied, NodeKind, Repair, SclErrorKind, SclWarning};

const INVERTER: &str = include_str!("../data/inverter_domain_ldinst.icd");

/// The 1-based line of the first line of `text` holding `needle`.
fn line(text: &str, needle: &str) -> u32 {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle}")) as u32
        + 1
}

/// The only IED of `text`, which must load.
fn only(text: &str) -> Ied {
    let scl = parse(text).expect("the file as a whole is fine");
    assert!(scl.refused.is_empty(), "{:?}", scl.refused);
    scl.ied(None).unwrap().clone()
}

/// An IED of one LD `LD0` with `lns` (LN0 first) over `templates`, in `ns`.
fn one_ied(ns: &str, lns: &str, templates: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<SCL xmlns="{ns}">
  <Header id="t"/>
  <IED name="IED1">
    <AccessPoint name="AP1">
      <Server>
        <Authentication/>
        <LDevice inst="LD0">
{lns}
        </LDevice>
      </Server>
    </AccessPoint>
  </IED>
  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0"><DO name="Beh" type="ENS_T"/></LNodeType>
    <DOType id="ENS_T" cdc="ENS"><DA name="stVal" fc="ST" bType="Enum" type="Beh_E"/></DOType>
    <EnumType id="Beh_E"><EnumVal ord="1">on</EnumVal></EnumType>
{templates}
  </DataTypeTemplates>
</SCL>
"#
    )
}

const NS: &str = gander_scl::SCL_NS;

/// The members of a data set as `domain/item`.
fn members(ied: &Ied, ld: usize, ln: usize, ds: usize) -> Vec<String> {
    ied.logical_devices[ld].logical_nodes[ln].data_sets[ds]
        .members
        .iter()
        .map(|m| format!("{}/{}", m.domain, m.item))
        .collect()
}

#[test]
fn ldinst_written_as_the_mms_domain_is_read_as_that_ld() {
    let ied = only(INVERTER);
    let w: Vec<&SclWarning> = ied
        .warnings
        .iter()
        .filter(|w| matches!(w.repair, Repair::LdInstReadAsDomain { .. }))
        .collect();
    assert_eq!(w.len(), 4, "{:?}", ied.warnings);
    assert!(
        matches!(&w[0].repair, Repair::LdInstReadAsDomain { inst } if inst == "Inverter"),
        "{}",
        w[0]
    );
    assert!(matches!(&w[1].repair, Repair::LdInstReadAsDomain { inst } if inst == "Battery"));
    assert_eq!(
        w[0].at.map(|p| p.line),
        Some(line(INVERTER, r#"ldInst="ied1Inverter" lnClass="LLN0""#))
    );
    assert!(
        w[0].to_string()
            .contains("it is the MMS domain of LD Inverter"),
        "{}",
        w[0]
    );
    // The data set keeps every member that names something, in order, in the right domains.
    assert_eq!(
        members(&ied, 0, 1, 0),
        [
            "ied1Inverter/LLN0$ST$Mod$q",
            "ied1Battery/LLN0$ST$Mod$stVal",
            "ied1Inverter/MMXU1$MX$TotW$mag$f",
            "ied1Inverter/MMXU1$CF$Mod$ctlModel",
        ]
    );
}

#[test]
fn ldinst_naming_no_ld_drops_the_member() {
    let ied = only(INVERTER);
    let dropped: Vec<&SclWarning> = ied
        .warnings
        .iter()
        .filter(|w| matches!(w.repair, Repair::MemberDropped { .. }))
        .collect();
    assert_eq!(dropped.len(), 1, "{:?}", ied.warnings);
    let w = dropped[0];
    assert!(
        matches!(&w.problem, SclErrorKind::UnknownMember { data_set, member, .. }
            if data_set == "dataset1" && member == "CircuitBreaker/CBXCBR1.Pos.stVal [ST]"),
        "{w}"
    );
    assert_eq!(
        w.at.map(|p| p.line),
        Some(line(INVERTER, r#"ldInst="CircuitBreaker""#))
    );
    assert_eq!(
        w.to_string(),
        format!(
            "line {}, column 15: data set \"dataset1\": member CircuitBreaker/CBXCBR1.Pos.stVal [ST] is not in the model: the IED has no LD of inst CircuitBreaker (ldInst is the LD's inst, not its MMS domain); repaired: the member is left out of data set \"dataset1\"",
            line(INVERTER, r#"ldInst="CircuitBreaker""#)
        )
    );
}

#[test]
fn a_boolean_in_another_case_is_read_with_a_warning() {
    let ied = only(INVERTER);
    let w: Vec<&SclWarning> = ied
        .warnings
        .iter()
        .filter(|w| matches!(w.repair, Repair::BooleanCaseFolded(_)))
        .collect();
    assert_eq!(w.len(), 1);
    assert_eq!(
        w[0].at.map(|p| p.line),
        Some(line(INVERTER, "<Val>False</Val>"))
    );
    let ind1 = &ied.logical_devices[1].logical_nodes[1].data_objects[1];
    assert_eq!(ind1.children[0].value.as_deref(), Some("false"));
    assert_eq!(ied.warnings.len(), 6, "{:?}", ied.warnings);
}

#[test]
fn a_missing_enum_type_keeps_the_attribute_without_literals() {
    // valid2003.scd: DA stVal bType="Enum" type="Beh", no EnumType "Beh".
    let text = one_ied(
        NS,
        r#"          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T"/>
          <LN lnClass="XCBR" inst="1" lnType="XCBR_T">
            <DOI name="Mod"><DAI name="stVal"><Val>3</Val></DAI></DOI>
            <DOI name="Loc"><DAI name="stVal"><Val>on</Val></DAI></DOI>
          </LN>"#,
        r#"    <LNodeType id="XCBR_T" lnClass="XCBR"><DO name="Mod" type="ENC_T"/><DO name="Loc" type="ENC_T"/></LNodeType>
    <DOType id="ENC_T" cdc="ENC"><DA name="stVal" fc="ST" bType="Enum" type="Beh"/><DA name="q" fc="ST" bType="Quality"/></DOType>"#,
    );
    let ied = only(&text);
    let ws = &ied.warnings;
    assert_eq!(ws.len(), 2, "{ws:?}");
    // Met through two DOs of one type: one warning, at the template's DA.
    assert!(
        matches!(&ws[0].problem, SclErrorKind::UnknownType { kind: "EnumType", id } if id == "Beh")
    );
    assert_eq!(ws[0].repair, Repair::EnumWithoutType);
    assert_eq!(
        ws[0].at.map(|p| p.line),
        Some(line(&text, r#"type="Beh"/>"#))
    );
    // A literal cannot be mapped to an ord: the Val is ignored at its line.
    assert_eq!(ws[1].repair, Repair::ValueIgnored);
    assert_eq!(ws[1].at.map(|p| p.line), Some(line(&text, "<Val>on</Val>")));
    let xcbr = &ied.logical_devices[0].logical_nodes[1];
    let st = |i: usize| &xcbr.data_objects[i].children[0];
    assert_eq!(st(0).value.as_deref(), Some("3"), "a number is kept");
    assert_eq!(st(1).value, None);
    assert!(matches!(
        &st(0).kind,
        NodeKind::Attribute { type_id: Some(t), .. } if t == "Beh"
    ));
    assert_eq!(xcbr.variables().len(), 4, "the attributes stay");
}

#[test]
fn an_sdi_naming_nothing_is_ignored_and_an_ln_of_a_missing_type_left_out() {
    // valid2007B4.scd: <SDI name="pulseConfig"> in a DOI of a type without it, and
    // <LN lnClass="THARDE" lnType="Dummy.THARDE"> with no such LNodeType.
    let text = one_ied(
        NS,
        r#"          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T">
            <DataSet name="ds">
              <FCDA ldInst="LD0" lnClass="LLN0" doName="Beh" daName="stVal" fc="ST"/>
              <FCDA ldInst="LD0" lnClass="THARDE" lnInst="1" doName="Beh" daName="stVal" fc="ST"/>
            </DataSet>
          </LN0>
          <LN lnClass="THARDE" inst="1" lnType="Dummy.THARDE"/>
          <LN prefix="CB" lnClass="CSWI" inst="2" lnType="CSWI_T">
            <DOI name="Pos">
              <SDI name="pulseConfig">
                <DAI name="numPls"><Val>1</Val></DAI>
              </SDI>
              <DAI name="ctlModel"><Val>4</Val></DAI>
            </DOI>
          </LN>"#,
        r#"    <LNodeType id="CSWI_T" lnClass="CSWI"><DO name="Pos" type="DPC_T"/></LNodeType>
    <DOType id="DPC_T" cdc="DPC"><DA name="stVal" fc="ST" bType="Dbpos"/><DA name="ctlModel" fc="CF" bType="INT8"/></DOType>"#,
    );
    let ied = only(&text);
    let ws = &ied.warnings;
    assert_eq!(ws.len(), 3, "{ws:?}");
    assert!(matches!(
        &ws[0].problem,
        SclErrorKind::UnknownType { kind: "LNodeType", id } if id == "Dummy.THARDE"
    ));
    assert!(
        matches!(&ws[0].repair, Repair::LogicalNodeLeftOut { ld, ln } if ld == "LD0" && ln == "THARDE1")
    );
    assert_eq!(ws[0].at.map(|p| p.line), Some(line(&text, "Dummy.THARDE")));
    assert!(
        matches!(&ws[1].problem, SclErrorKind::UnknownInstance { element: "SDI", name } if name == "pulseConfig")
    );
    assert_eq!(ws[1].repair, Repair::InstanceIgnored);
    assert_eq!(ws[1].at.map(|p| p.line), Some(line(&text, "pulseConfig")));
    // The member naming the left-out LN is dropped; the other stays.
    assert!(matches!(&ws[2].repair, Repair::MemberDropped { data_set } if data_set == "ds"));
    assert_eq!(members(&ied, 0, 0, 0), ["IED1LD0/LLN0$ST$Beh$stVal"]);
    let lns: Vec<&str> = ied.logical_devices[0]
        .logical_nodes
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert_eq!(lns, ["LLN0", "CBCSWI2"]);
    // The rest of the DOI is applied.
    let pos = &ied.logical_devices[0].logical_nodes[1].data_objects[0];
    assert_eq!(pos.children[1].value.as_deref(), Some("4"));
}

#[test]
fn the_2006_draft_namespace_is_read_under_its_quirk() {
    // LEx2GOOSE.scd: <SCL xmlns="http://www.iec.ch/61850/2006/SCL">.
    let text = one_ied(
        gander_scl::SCL_NS_DRAFT_2006,
        r#"          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T"/>"#,
        "",
    );
    let ied = only(&text);
    assert_eq!(ied.warnings.len(), 1);
    let w = &ied.warnings[0];
    assert!(matches!(&w.problem, SclErrorKind::WrongNamespace { found } if found.contains("2006")));
    assert!(w.to_string().contains(gander_scl::DRAFT_2006_QUIRK), "{w}");
    assert_eq!(w.at.map(|p| p.line), Some(2));
    assert_eq!(
        ied.logical_devices[0].logical_nodes[0].data_objects.len(),
        1
    );
}

#[test]
fn a_buffered_unindexed_rcb_with_max_7_is_one_instance() {
    // The IOP 2019 SED's INCA_BCU: buffered="true" indexed="false", <RptEnabled max="7">.
    let text = one_ied(
        NS,
        r#"          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T">
            <DataSet name="ds_rcb1"><FCDA ldInst="LD0" lnClass="LLN0" doName="Beh" fc="ST"/></DataSet>
            <ReportControl datSet="ds_rcb1" name="rcb2" buffered="true" bufTime="100" confRev="10000" indexed="false" rptID="IED1/LLN0.rcb2">
              <TrgOps dchg="true" gi="true"/>
              <RptEnabled max="7"/>
            </ReportControl>
          </LN0>"#,
        "",
    );
    let ied = only(&text);
    assert_eq!(ied.warnings.len(), 1);
    let w = &ied.warnings[0];
    assert_eq!(w.repair, Repair::SingleInstance);
    assert_eq!(
        w.at.map(|p| p.line),
        Some(line(&text, r#"<RptEnabled max="7"/>"#))
    );
    let rc = &ied.logical_devices[0].logical_nodes[0].report_controls[0];
    assert_eq!((rc.max, rc.instances()), (1, vec!["rcb2".to_string()]));
}

#[test]
fn a_server_without_ldevice_still_refuses_the_ied() {
    let text = one_ied(NS, "", "").replace("<LDevice inst=\"LD0\">\n\n        </LDevice>", "");
    let scl = parse(&text).unwrap();
    assert!(scl.ieds.is_empty());
    let e = &scl.refused[0].error;
    assert!(
        matches!(&e.kind, SclErrorKind::MissingElement { .. }),
        "{e}"
    );
    assert_eq!(e.at.map(|p| p.line), Some(line(&text, "<Server>")));
}

proptest::proptest! {
    /// Whichever members of a data set write their `ldInst` as the LD's MMS domain (as
    /// complexModel.icd does) rather than its inst, the data set resolves to the same members,
    /// with one warning per member written so, at its line.
    #[test]
    fn ldinst_by_domain_or_by_inst_gives_the_same_data_set(by_domain in proptest::collection::vec(proptest::bool::ANY, 4)) {
        let written = [
            ("LD0", "LLN0", "", "Beh", "ST"),
            ("LD1", "LLN0", "", "Beh", "ST"),
            ("LD1", "GGIO", "1", "Beh", "ST"),
            ("LD0", "GGIO", "1", "Beh", "ST"),
        ];
        let fcdas: String = written
            .iter()
            .zip(&by_domain)
            .map(|((ld, class, inst, d, fc), dom)| {
                let ld = if *dom { format!("IED1{ld}") } else { ld.to_string() };
                format!("<FCDA ldInst=\"{ld}\" lnClass=\"{class}\" lnInst=\"{inst}\" doName=\"{d}\" fc=\"{fc}\"/>\n")
            })
            .collect();
        let lns = |inst: &str, ds: &str| format!(
            r#"        <LDevice inst="{inst}">
          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T">{ds}</LN0>
          <LN lnClass="GGIO" inst="1" lnType="LLN0_T"/>
        </LDevice>
"#
        );
        let text = one_ied(NS, "", "").replace(
            "        <LDevice inst=\"LD0\">\n\n        </LDevice>\n",
            &(lns("LD0", &format!("<DataSet name=\"ds\">\n{fcdas}</DataSet>")) + &lns("LD1", "")),
        );
        let ied = only(&text);
        proptest::prop_assert_eq!(
            members(&ied, 0, 0, 0),
            [
                "IED1LD0/LLN0$ST$Beh",
                "IED1LD1/LLN0$ST$Beh",
                "IED1LD1/GGIO1$ST$Beh",
                "IED1LD0/GGIO1$ST$Beh",
            ]
        );
        let warned: Vec<u32> = ied.warnings.iter().filter_map(|w| w.at.map(|p| p.line)).collect();
        let want: Vec<u32> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("ldInst=\"IED1"))
            .map(|(i, _)| i as u32 + 1)
            .collect();
        proptest::prop_assert_eq!(warned, want);
        let all_by_domain = ied
            .warnings
            .iter()
            .all(|w| matches!(w.repair, Repair::LdInstReadAsDomain { .. }));
        proptest::prop_assert!(all_by_domain);
    }
}
