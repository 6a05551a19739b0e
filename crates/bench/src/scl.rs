//! `gander bench scl`: how long reading an SCL file takes (`gander_scl::parse`: XML, type
//! resolution, data set and control block checks), on generated SCDs of 1, 10 and 100
//! relay-sized IEDs and on files given, so that reading is seen to stay linear in the file
//! size: the time per IED of the 100-IED file over that of the 10-IED file should be about 1.
//!
//! The generated IED ([`ied_xml`]) is shaped like a protection and control relay: a few logical
//! devices, each with tens of logical nodes (protection, measurement, switchgear, generic I/O)
//! whose types are shared through one DataTypeTemplates section (as an SCD shares them), data
//! sets of tens of members across LDs, buffered and unbuffered report control blocks, a GOOSE
//! control block with its address in the Communication section, and instance values.
//!
//! Each file is read `runs` times after one warm-up read; the statistics are
//! `gander_measure::stats::Summary` over the wall-clock times.

use gander_measure::stats::Summary;
use std::fmt::Write as _;
use std::time::Instant;

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum SclBenchError {
    /// A file given could not be read.
    #[error("cannot read {path}: {reason}")]
    Io {
        /// The path.
        path: String,
        /// What the system said.
        reason: String,
    },
    /// A generated file did not parse, or a whole file was refused (the benchmark measures
    /// reading, so every input must at least be an SCL file).
    #[error("{name}: {error}")]
    Scl {
        /// The file or generated case.
        name: String,
        /// What the reader said.
        error: Box<gander_scl::SclError>,
    },
}

/// One measured input.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SclRow {
    /// `generated 10 IEDs` or the file's path.
    pub name: String,
    /// Size in bytes.
    pub bytes: usize,
    /// IEDs in the file (valid and refused).
    pub ieds: usize,
    /// IEDs refused.
    pub refused: usize,
    /// Time per read of the whole file, ns.
    pub per_file: Summary,
    /// Time per read divided by the IEDs, ns.
    pub per_ied: Summary,
}

/// The result of `gander bench scl`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SclReport {
    /// Rows in order: generated 1, 10, 100 IEDs, then the files.
    pub rows: Vec<SclRow>,
    /// Median time per IED with 100 IEDs over that with 10 (1.0: linear).
    pub per_ied_ratio_100_10: Option<f64>,
}

/// The IED counts of the generated SCDs.
pub const GENERATED: [usize; 3] = [1, 10, 100];

/// Options.
#[derive(Clone, Debug)]
pub struct SclBenchOptions {
    /// Timed reads per input (after one warm-up read).
    pub runs: usize,
    /// Skip the generated SCDs.
    pub files_only: bool,
}

/// Runs the benchmark on the generated SCDs (unless `files_only`) and on `files`, calling
/// `progress` with one line per input as it is done.
pub fn run(
    opts: &SclBenchOptions,
    files: &[std::path::PathBuf],
    progress: &mut dyn FnMut(String),
) -> Result<SclReport, SclBenchError> {
    let mut rows = Vec::new();
    if !opts.files_only {
        for n in GENERATED {
            let text = scd(n);
            let row = measure(&format!("generated {n} IEDs"), &text, opts.runs)?;
            progress(line(&row));
            rows.push(row);
        }
    }
    for f in files {
        let text = gander_scl::read(f).map_err(|e| SclBenchError::Io {
            path: f.display().to_string(),
            reason: e.to_string(),
        })?;
        let row = measure(&f.display().to_string(), &text, opts.runs)?;
        progress(line(&row));
        rows.push(row);
    }
    let median = |n: usize| {
        rows.iter()
            .find(|r| r.name == format!("generated {n} IEDs"))
            .map(|r| r.per_ied.p50)
    };
    let per_ied_ratio_100_10 = match (median(100), median(10)) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    Ok(SclReport {
        rows,
        per_ied_ratio_100_10,
    })
}

/// One line of text for a row: sizes, then min / median / max per file and per IED.
pub fn line(r: &SclRow) -> String {
    let ms = |ns: f64| ns / 1e6;
    format!(
        "{:<28} {:>9} B {:>4} IEDs ({} refused)  file {:>8.2} / {:>8.2} / {:>8.2} ms  per IED {:>7.3} / {:>7.3} / {:>7.3} ms  (min / median / max, n={})",
        r.name,
        r.bytes,
        r.ieds,
        r.refused,
        ms(r.per_file.min),
        ms(r.per_file.p50),
        ms(r.per_file.max),
        ms(r.per_ied.min),
        ms(r.per_ied.p50),
        ms(r.per_ied.max),
        r.per_file.n
    )
}

fn measure(name: &str, text: &str, runs: usize) -> Result<SclRow, SclBenchError> {
    let err = |error| SclBenchError::Scl {
        name: name.into(),
        error: Box::new(error),
    };
    // Warm-up (page cache, allocator), and the counts.
    let scl = gander_scl::parse(text).map_err(err)?;
    let ieds = scl.ieds.len() + scl.refused.len();
    let refused = scl.refused.len();
    drop(scl);
    let mut samples = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let scl = gander_scl::parse(text).map_err(err)?;
        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        std::hint::black_box(&scl);
        samples.push(ns);
    }
    let per_ied: Vec<u64> = samples.iter().map(|s| s / ieds.max(1) as u64).collect();
    let summary = |s: &[u64]| Summary::from_samples(s).unwrap_or_default();
    Ok(SclRow {
        name: name.into(),
        bytes: text.len(),
        ieds,
        refused,
        per_file: summary(&samples),
        per_ied: summary(&per_ied),
    })
}

/// Logical devices of a generated IED, and LNs of each kind per LD.
const LDS: [&str; 4] = ["PROT", "MEAS", "CTRL", "SYS"];
const PTOC_PER_LD: usize = 6;
const MMXU_PER_LD: usize = 3;
const XCBR_PER_LD: usize = 2;
const GGIO_PER_LD: usize = 8;

/// An SCD of `n` generated IEDs sharing one DataTypeTemplates section.
pub fn scd(n: usize) -> String {
    let mut s = String::with_capacity(n * 40_000 + 8_000);
    s.push_str(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<SCL xmlns=\"http://www.iec.ch/61850/2003/SCL\" version=\"2007\" revision=\"B\">\n  <Header id=\"gander-bench\"/>\n  <Communication>\n    <SubNetwork name=\"StationBus\" type=\"8-MMS\">\n",
    );
    for i in 0..n {
        let _ = write!(
            s,
            "      <ConnectedAP iedName=\"IED{i:03}\" apName=\"AP1\">\n        <Address><P type=\"IP\">10.0.{}.{}</P></Address>\n        <GSE ldInst=\"PROT\" cbName=\"gcbTrip\">\n          <Address>\n            <P type=\"MAC-Address\">01-0C-CD-01-{:02X}-{:02X}</P>\n            <P type=\"APPID\">{:04X}</P>\n            <P type=\"VLAN-ID\">00A</P>\n            <P type=\"VLAN-PRIORITY\">4</P>\n          </Address>\n          <MinTime unit=\"s\" multiplier=\"m\">4</MinTime>\n          <MaxTime unit=\"s\" multiplier=\"m\">1000</MaxTime>\n        </GSE>\n      </ConnectedAP>\n",
            i / 250,
            i % 250 + 1,
            i / 256,
            i % 256,
            0x3000 + i
        );
    }
    s.push_str("    </SubNetwork>\n  </Communication>\n");
    for i in 0..n {
        s.push_str(&ied_xml(&format!("IED{i:03}")));
    }
    s.push_str(TEMPLATES);
    s.push_str("</SCL>\n");
    s
}

/// One relay-sized IED.
pub fn ied_xml(name: &str) -> String {
    let mut s = String::with_capacity(40_000);
    let _ = write!(
        s,
        "  <IED name=\"{name}\" manufacturer=\"gander-bench\" type=\"relay\">\n    <AccessPoint name=\"AP1\">\n      <Server>\n        <Authentication/>\n"
    );
    for ld in LDS {
        let _ = writeln!(s, "        <LDevice inst=\"{ld}\">");
        let _ = writeln!(
            s,
            "          <LN0 lnClass=\"LLN0\" inst=\"\" lnType=\"LLN0_T\">"
        );
        // Data sets: the LD's trips and positions, measurements, and (in PROT) one that
        // spans every LD.
        s.push_str("            <DataSet name=\"Status\">\n");
        for p in 1..=PTOC_PER_LD {
            let _ = writeln!(
                s,
                "              <FCDA ldInst=\"{ld}\" lnClass=\"PTOC\" lnInst=\"{p}\" doName=\"Op\" daName=\"general\" fc=\"ST\"/>\n              <FCDA ldInst=\"{ld}\" lnClass=\"PTOC\" lnInst=\"{p}\" doName=\"Str\" fc=\"ST\"/>"
            );
        }
        for x in 1..=XCBR_PER_LD {
            let _ = writeln!(
                s,
                "              <FCDA ldInst=\"{ld}\" prefix=\"Q{x}\" lnClass=\"XCBR\" lnInst=\"1\" doName=\"Pos\" fc=\"ST\"/>"
            );
        }
        for g in 1..=GGIO_PER_LD {
            let _ = writeln!(
                s,
                "              <FCDA ldInst=\"{ld}\" lnClass=\"GGIO\" lnInst=\"{g}\" doName=\"Ind1\" fc=\"ST\"/>"
            );
        }
        s.push_str("            </DataSet>\n            <DataSet name=\"Meas\">\n");
        for m in 1..=MMXU_PER_LD {
            for ph in ["phsA", "phsB", "phsC"] {
                let _ = writeln!(
                    s,
                    "              <FCDA ldInst=\"{ld}\" lnClass=\"MMXU\" lnInst=\"{m}\" doName=\"A.{ph}\" daName=\"cVal.mag.f\" fc=\"MX\"/>"
                );
            }
            let _ = writeln!(
                s,
                "              <FCDA ldInst=\"{ld}\" lnClass=\"MMXU\" lnInst=\"{m}\" doName=\"TotW\" fc=\"MX\"/>"
            );
        }
        s.push_str("            </DataSet>\n");
        if ld == "PROT" {
            s.push_str("            <DataSet name=\"Trips\">\n");
            for other in LDS {
                let _ = writeln!(
                    s,
                    "              <FCDA ldInst=\"{other}\" lnClass=\"PTOC\" lnInst=\"1\" doName=\"Op\" fc=\"ST\"/>"
                );
            }
            s.push_str("            </DataSet>\n");
            s.push_str("            <GSEControl name=\"gcbTrip\" datSet=\"Trips\" confRev=\"1\" appID=\"TRIP\"/>\n");
        }
        s.push_str(
            "            <ReportControl name=\"brcbStatus\" datSet=\"Status\" rptID=\"\" confRev=\"1\" buffered=\"true\" bufTime=\"50\" intgPd=\"60000\">\n              <TrgOps dchg=\"true\" qchg=\"true\" period=\"true\"/>\n              <OptFields seqNum=\"true\" timeStamp=\"true\" dataSet=\"true\" reasonCode=\"true\" entryID=\"true\" configRef=\"true\"/>\n              <RptEnabled max=\"4\"/>\n            </ReportControl>\n            <ReportControl name=\"urcbMeas\" datSet=\"Meas\" confRev=\"1\" intgPd=\"1000\">\n              <TrgOps dchg=\"true\" period=\"true\"/>\n              <OptFields seqNum=\"true\" dataSet=\"true\" reasonCode=\"true\"/>\n              <RptEnabled max=\"5\"/>\n            </ReportControl>\n            <DOI name=\"Mod\"><DAI name=\"ctlModel\"><Val>status-only</Val></DAI></DOI>\n          </LN0>\n",
        );
        s.push_str("          <LN lnClass=\"LPHD\" inst=\"1\" lnType=\"LPHD_T\"/>\n");
        for p in 1..=PTOC_PER_LD {
            let _ = writeln!(
                s,
                "          <LN lnClass=\"PTOC\" inst=\"{p}\" lnType=\"PTOC_T\">\n            <DOI name=\"StrVal\"><SDI name=\"setMag\"><DAI name=\"f\"><Val>{}.5</Val></DAI></SDI></DOI>\n          </LN>",
                100 * p
            );
        }
        for m in 1..=MMXU_PER_LD {
            let _ = writeln!(
                s,
                "          <LN lnClass=\"MMXU\" inst=\"{m}\" lnType=\"MMXU_T\"/>"
            );
        }
        for x in 1..=XCBR_PER_LD {
            let _ = writeln!(
                s,
                "          <LN prefix=\"Q{x}\" lnClass=\"XCBR\" inst=\"1\" lnType=\"XCBR_T\">\n            <DOI name=\"Pos\"><DAI name=\"ctlModel\"><Val>direct-with-normal-security</Val></DAI></DOI>\n          </LN>\n          <LN prefix=\"Q{x}\" lnClass=\"CSWI\" inst=\"1\" lnType=\"CSWI_T\"/>"
            );
        }
        for g in 1..=GGIO_PER_LD {
            let _ = writeln!(
                s,
                "          <LN lnClass=\"GGIO\" inst=\"{g}\" lnType=\"GGIO_T\"/>"
            );
        }
        s.push_str("        </LDevice>\n");
    }
    s.push_str("      </Server>\n    </AccessPoint>\n  </IED>\n");
    s
}

/// The shared DataTypeTemplates of the generated IEDs (IEC 61850-7-4 LNs with the 7-3 CDCs
/// they use, trimmed to the common attributes).
const TEMPLATES: &str = r#"  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0">
      <DO name="Mod" type="ENC_Mod"/><DO name="Beh" type="ENS_Beh"/><DO name="Health" type="ENS_Health"/><DO name="NamPlt" type="LPL_T"/>
    </LNodeType>
    <LNodeType id="LPHD_T" lnClass="LPHD">
      <DO name="PhyNam" type="DPL_T"/><DO name="PhyHealth" type="ENS_Health"/><DO name="Proxy" type="SPS_T"/>
    </LNodeType>
    <LNodeType id="PTOC_T" lnClass="PTOC">
      <DO name="Beh" type="ENS_Beh"/><DO name="Str" type="ACD_T"/><DO name="Op" type="ACT_T"/>
      <DO name="StrVal" type="ASG_T"/><DO name="OpDlTmms" type="ING_T"/>
    </LNodeType>
    <LNodeType id="MMXU_T" lnClass="MMXU">
      <DO name="Beh" type="ENS_Beh"/><DO name="TotW" type="MV_T"/><DO name="TotVAr" type="MV_T"/><DO name="Hz" type="MV_T"/>
      <DO name="PhV" type="WYE_T"/><DO name="A" type="WYE_T"/>
    </LNodeType>
    <LNodeType id="XCBR_T" lnClass="XCBR">
      <DO name="Beh" type="ENS_Beh"/><DO name="Pos" type="DPC_T"/><DO name="BlkOpn" type="SPC_T"/><DO name="BlkCls" type="SPC_T"/><DO name="OpCnt" type="INS_T"/>
    </LNodeType>
    <LNodeType id="CSWI_T" lnClass="CSWI">
      <DO name="Beh" type="ENS_Beh"/><DO name="Pos" type="DPC_T"/>
    </LNodeType>
    <LNodeType id="GGIO_T" lnClass="GGIO">
      <DO name="Beh" type="ENS_Beh"/><DO name="Ind1" type="SPS_T"/><DO name="Ind2" type="SPS_T"/><DO name="Ind3" type="SPS_T"/><DO name="Ind4" type="SPS_T"/>
      <DO name="SPCSO1" type="SPC_T"/><DO name="AnIn1" type="MV_T"/>
    </LNodeType>
    <DOType id="ENC_Mod" cdc="ENC">
      <DA name="stVal" fc="ST" bType="Enum" type="Beh" dchg="true"/><DA name="q" fc="ST" bType="Quality" qchg="true"/><DA name="t" fc="ST" bType="Timestamp"/>
      <DA name="ctlModel" fc="CF" bType="Enum" type="ctlModel"/>
    </DOType>
    <DOType id="ENS_Beh" cdc="ENS">
      <DA name="stVal" fc="ST" bType="Enum" type="Beh" dchg="true"/><DA name="q" fc="ST" bType="Quality" qchg="true"/><DA name="t" fc="ST" bType="Timestamp"/>
    </DOType>
    <DOType id="ENS_Health" cdc="ENS">
      <DA name="stVal" fc="ST" bType="Enum" type="Health" dchg="true"/><DA name="q" fc="ST" bType="Quality" qchg="true"/><DA name="t" fc="ST" bType="Timestamp"/>
    </DOType>
    <DOType id="LPL_T" cdc="LPL">
      <DA name="vendor" fc="DC" bType="VisString255"/><DA name="swRev" fc="DC" bType="VisString255"/><DA name="d" fc="DC" bType="VisString255"/><DA name="configRev" fc="DC" bType="VisString255"/>
    </DOType>
    <DOType id="DPL_T" cdc="DPL">
      <DA name="vendor" fc="DC" bType="VisString255"/><DA name="hwRev" fc="DC" bType="VisString255"/><DA name="serNum" fc="DC" bType="VisString255"/>
    </DOType>
    <DOType id="SPS_T" cdc="SPS">
      <DA name="stVal" fc="ST" bType="BOOLEAN" dchg="true"/><DA name="q" fc="ST" bType="Quality" qchg="true"/><DA name="t" fc="ST" bType="Timestamp"/>
    </DOType>
    <DOType id="INS_T" cdc="INS">
      <DA name="stVal" fc="ST" bType="INT32" dchg="true"/><DA name="q" fc="ST" bType="Quality" qchg="true"/><DA name="t" fc="ST" bType="Timestamp"/>
    </DOType>
    <DOType id="ACD_T" cdc="ACD">
      <DA name="general" fc="ST" bType="BOOLEAN" dchg="true"/><DA name="dirGeneral" fc="ST" bType="Enum" type="dir" dchg="true"/>
      <DA name="phsA" fc="ST" bType="BOOLEAN" dchg="true"/><DA name="phsB" fc="ST" bType="BOOLEAN" dchg="true"/><DA name="phsC" fc="ST" bType="BOOLEAN" dchg="true"/>
      <DA name="q" fc="ST" bType="Quality" qchg="true"/><DA name="t" fc="ST" bType="Timestamp"/>
    </DOType>
    <DOType id="ACT_T" cdc="ACT">
      <DA name="general" fc="ST" bType="BOOLEAN" dchg="true"/><DA name="phsA" fc="ST" bType="BOOLEAN" dchg="true"/><DA name="phsB" fc="ST" bType="BOOLEAN" dchg="true"/><DA name="phsC" fc="ST" bType="BOOLEAN" dchg="true"/>
      <DA name="q" fc="ST" bType="Quality" qchg="true"/><DA name="t" fc="ST" bType="Timestamp"/>
    </DOType>
    <DOType id="ASG_T" cdc="ASG">
      <DA name="setMag" fc="SP" bType="Struct" type="AnalogueValue"/><DA name="units" fc="CF" bType="Struct" type="Unit"/>
    </DOType>
    <DOType id="ING_T" cdc="ING">
      <DA name="setVal" fc="SP" bType="INT32"><Val>40</Val></DA>
    </DOType>
    <DOType id="MV_T" cdc="MV">
      <DA name="mag" fc="MX" bType="Struct" type="AnalogueValue" dchg="true"/><DA name="q" fc="MX" bType="Quality" qchg="true"/><DA name="t" fc="MX" bType="Timestamp"/>
      <DA name="units" fc="CF" bType="Struct" type="Unit"/><DA name="db" fc="CF" bType="INT32U"><Val>500</Val></DA>
    </DOType>
    <DOType id="CMV_T" cdc="CMV">
      <DA name="cVal" fc="MX" bType="Struct" type="Vector" dchg="true"/><DA name="q" fc="MX" bType="Quality" qchg="true"/><DA name="t" fc="MX" bType="Timestamp"/>
      <DA name="units" fc="CF" bType="Struct" type="Unit"/>
    </DOType>
    <DOType id="WYE_T" cdc="WYE">
      <SDO name="phsA" type="CMV_T"/><SDO name="phsB" type="CMV_T"/><SDO name="phsC" type="CMV_T"/><SDO name="neut" type="CMV_T"/>
    </DOType>
    <DOType id="SPC_T" cdc="SPC">
      <DA name="stVal" fc="ST" bType="BOOLEAN" dchg="true"/><DA name="q" fc="ST" bType="Quality" qchg="true"/><DA name="t" fc="ST" bType="Timestamp"/>
      <DA name="ctlModel" fc="CF" bType="Enum" type="ctlModel"><Val>direct-with-normal-security</Val></DA>
    </DOType>
    <DOType id="DPC_T" cdc="DPC">
      <DA name="stVal" fc="ST" bType="Dbpos" dchg="true"/><DA name="q" fc="ST" bType="Quality" qchg="true"/><DA name="t" fc="ST" bType="Timestamp"/>
      <DA name="ctlModel" fc="CF" bType="Enum" type="ctlModel"/><DA name="sboTimeout" fc="CF" bType="INT32U"><Val>30000</Val></DA>
    </DOType>
    <DAType id="AnalogueValue"><BDA name="f" bType="FLOAT32"/></DAType>
    <DAType id="Vector"><BDA name="mag" bType="Struct" type="AnalogueValue"/><BDA name="ang" bType="Struct" type="AnalogueValue"/></DAType>
    <DAType id="Unit"><BDA name="SIUnit" bType="Enum" type="SIUnit"/><BDA name="multiplier" bType="Enum" type="multiplier"/></DAType>
    <EnumType id="Beh"><EnumVal ord="1">on</EnumVal><EnumVal ord="2">blocked</EnumVal><EnumVal ord="3">test</EnumVal><EnumVal ord="4">test/blocked</EnumVal><EnumVal ord="5">off</EnumVal></EnumType>
    <EnumType id="Health"><EnumVal ord="1">Ok</EnumVal><EnumVal ord="2">Warning</EnumVal><EnumVal ord="3">Alarm</EnumVal></EnumType>
    <EnumType id="dir"><EnumVal ord="0">unknown</EnumVal><EnumVal ord="1">forward</EnumVal><EnumVal ord="2">backward</EnumVal><EnumVal ord="3">both</EnumVal></EnumType>
    <EnumType id="ctlModel"><EnumVal ord="0">status-only</EnumVal><EnumVal ord="1">direct-with-normal-security</EnumVal><EnumVal ord="2">sbo-with-normal-security</EnumVal><EnumVal ord="3">direct-with-enhanced-security</EnumVal><EnumVal ord="4">sbo-with-enhanced-security</EnumVal></EnumType>
    <EnumType id="SIUnit"><EnumVal ord="1">none</EnumVal><EnumVal ord="5">A</EnumVal><EnumVal ord="29">V</EnumVal><EnumVal ord="33">Hz</EnumVal><EnumVal ord="38">W</EnumVal></EnumType>
    <EnumType id="multiplier"><EnumVal ord="-3">m</EnumVal><EnumVal ord="0"></EnumVal><EnumVal ord="3">k</EnumVal><EnumVal ord="6">M</EnumVal></EnumType>
  </DataTypeTemplates>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated SCDs are valid SCL whose every IED is accepted, with the relay-sized
    /// shape the benchmark claims.
    #[test]
    fn generated_files_are_valid_and_relay_sized() {
        let scl = gander_scl::parse(&scd(3)).expect("generated SCD parses");
        assert!(scl.refused.is_empty(), "{:?}", scl.refused);
        assert_eq!(scl.ieds.len(), 3);
        let ied = &scl.ieds[2];
        assert_eq!(ied.name, "IED002");
        assert_eq!(ied.logical_devices.len(), LDS.len());
        let lns: usize = ied
            .logical_devices
            .iter()
            .map(|l| l.logical_nodes.len())
            .sum();
        assert_eq!(
            lns,
            LDS.len() * (2 + PTOC_PER_LD + MMXU_PER_LD + 2 * XCBR_PER_LD + GGIO_PER_LD)
        );
        let prot = &ied.logical_devices[0].logical_nodes[0];
        assert_eq!(prot.data_sets.len(), 3);
        assert_eq!(prot.report_controls[0].instances().len(), 4);
        let g = &prot.gse_controls[0];
        assert_eq!(g.address.and_then(|a| a.app_id), Some(0x3002));
        let vars: usize = ied
            .logical_devices
            .iter()
            .flat_map(|l| &l.logical_nodes)
            .map(|ln| ln.variables().len())
            .sum();
        assert!(vars > 2000, "{vars} variables");
    }

    #[test]
    fn a_short_run_reports_every_generated_size() {
        let mut lines = Vec::new();
        let r = run(
            &SclBenchOptions {
                runs: 2,
                files_only: false,
            },
            &[],
            &mut |l| lines.push(l),
        )
        .unwrap();
        assert_eq!(r.rows.len(), 3);
        assert_eq!(lines.len(), 3);
        assert_eq!(r.rows[2].ieds, 100);
        assert!(r.per_ied_ratio_100_10.is_some_and(|x| x > 0.0));
        assert!(lines[0].contains("generated 1 IEDs"), "{}", lines[0]);
    }
}
