//! `LogControl` and `Log` (IEC 61850-6 §9.3.7): the LCBs with the schema's defaults, their
//! LogRef resolved to the log's MMS domain, and the refusals (unknown data set, a repeated
//! name). Shown by libiec61850's examples/server_example_logging simpleIO_ltrk_tests.icd (an
//! LCB with `logName=""` and an unnamed `<Log/>`), sureenapatnaik92/sampleProject
//! TestData/multiple_access_points.icd (LCBs in LLN0 with `intgPd`, `reasonCode`, all TrgOps)
//! and the SISCO sample CID (an LCB without `logEna`).

use gander_scl::{parse, Repair, SclErrorKind, SclWarning};

fn scl(lln0: &str, ggio: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL">
  <IED name="LG">
    <AccessPoint name="AP1">
      <Server>
        <Authentication/>
        <LDevice inst="CTRL">
          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T">
            <DataSet name="Events"><FCDA ldInst="CTRL" lnClass="GGIO" lnInst="1" doName="Ind1" fc="ST"/></DataSet>
{lln0}
          </LN0>
          <LN lnClass="GGIO" inst="1" lnType="GGIO_T">{ggio}</LN>
        </LDevice>
        <LDevice inst="REC" ldName="RECORDS">
          <LN0 lnClass="LLN0" inst="" lnType="LLN0_T"><Log name="Main"/></LN0>
        </LDevice>
      </Server>
    </AccessPoint>
  </IED>
  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0"><DO name="Beh" type="INS_T"/></LNodeType>
    <LNodeType id="GGIO_T" lnClass="GGIO"><DO name="Ind1" type="SPS_T"/></LNodeType>
    <DOType id="INS_T" cdc="INS"><DA name="stVal" fc="ST" bType="INT32"/></DOType>
    <DOType id="SPS_T" cdc="SPS"><DA name="stVal" fc="ST" bType="BOOLEAN"/></DOType>
  </DataTypeTemplates>
</SCL>
"#
    )
}

#[test]
fn log_controls_with_defaults_and_resolved_log_refs() {
    let text = scl(
        r#"<LogControl name="EventLog" datSet="Events" logName="EventLog"><TrgOps dchg="true" qchg="true"/></LogControl>
           <LogControl name="Period" logName="Main" ldInst="REC" intgPd="5000" logEna="false" reasonCode="false"/>
           <LogControl name="NoLog" datSet="" logName=""/>
           <Log name="EventLog"/><Log/>"#,
        r#"<LogControl name="Local" datSet="" logName="GLog" lnClass="GGIO" lnInst="1"/><Log name="GLog"/>"#,
    );
    let scl = parse(&text).unwrap();
    let ied = scl.ied(None).unwrap();
    let lln0 = &ied.logical_devices[0].logical_nodes[0];
    assert_eq!(lln0.logs, ["EventLog", "GeneralLog"]);
    let [ev, period, nolog] = &lln0.log_controls[..] else {
        panic!("{:?}", lln0.log_controls)
    };
    assert_eq!(ev.data_set.as_deref(), Some("Events"));
    assert_eq!(ev.log_ref, "LGCTRL/LLN0$EventLog");
    assert!(ev.log_ena && ev.reason_code);
    assert!(ev.trg_ops.dchg && ev.trg_ops.qchg && !ev.trg_ops.period && ev.trg_ops.gi);
    assert_eq!(ev.intg_pd, 0);
    // ldInst names another LD: its ldName is the domain.
    assert_eq!(period.log_ref, "RECORDS/LLN0$Main");
    assert_eq!(period.intg_pd, 5000);
    assert!(!period.log_ena && !period.reason_code && period.data_set.is_none());
    // No logName: the LN's unnamed log, GeneralLog (libiec61850's name for it).
    assert_eq!(nolog.log_ref, "LGCTRL/LLN0$GeneralLog");
    let ggio = &ied.logical_devices[0].logical_nodes[1];
    assert_eq!(ggio.log_controls[0].log_ref, "LGCTRL/GGIO1$GLog");
    assert_eq!(ied.logical_devices[1].logical_nodes[0].logs, ["Main"]);
}

/// The one warning of a file whose IED loads: the LCB is left out.
fn left_out(text: &str) -> SclWarning {
    let scl = parse(text).unwrap();
    let ied = scl.ied(None).unwrap();
    assert_eq!(ied.warnings.len(), 1, "{:?}", ied.warnings);
    let w = ied.warnings[0].clone();
    assert!(
        matches!(&w.repair, Repair::ControlBlockLeftOut { name } if name == "L"),
        "{w}"
    );
    assert!(ied
        .logical_devices
        .iter()
        .flat_map(|l| &l.logical_nodes)
        .all(|n| n.log_controls.iter().all(|c| c.name != "L")));
    w
}

#[test]
fn an_unknown_data_set_is_left_out_and_a_repeated_name_refused() {
    let w = left_out(&scl(
        r#"<LogControl name="L" datSet="Nope" logName="x"/>"#,
        "",
    ));
    assert!(
        matches!(&w.problem, SclErrorKind::UnknownDataSet { data_set, .. } if data_set == "Nope"),
        "{w}"
    );
    let text = scl(
        "<LogControl name=\"L\" logName=\"x\"/>\n            <LogControl name=\"L\" logName=\"y\"/>",
        "",
    );
    let e = parse(&text).unwrap().ied(None).unwrap_err().clone();
    assert!(
        matches!(
            &e.kind,
            SclErrorKind::Duplicate {
                what: "LogControl",
                ..
            }
        ),
        "{e}"
    );
    let line = text
        .lines()
        .position(|l| l.contains("logName=\"y\""))
        .unwrap() as u32
        + 1;
    assert_eq!(e.at.map(|p| p.line), Some(line));
    // A bad intgPd or logEna names the attribute.
    let w = left_out(&scl(
        r#"<LogControl name="L" logName="x" logEna="yes"/>"#,
        "",
    ));
    assert!(
        matches!(
            &w.problem,
            SclErrorKind::BadValue {
                attribute: "logEna",
                ..
            }
        ),
        "{w}"
    );
    // `True` is read ignoring case, with a warning, and the LCB stays.
    let scl = parse(&scl(
        r#"<LogControl name="L" logName="x" logEna="True"/>"#,
        "",
    ))
    .unwrap();
    let ied = scl.ied(None).unwrap();
    assert_eq!(ied.warnings.len(), 1);
    assert_eq!(ied.warnings[0].repair, Repair::BooleanCaseFolded(true));
}
