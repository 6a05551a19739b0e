//! The model an SCD declares for one access point, in the names the probe reports (IEC
//! 61850-8-1 §8.1.3: an LD is the MMS domain `ldName` or IED name + `inst`; a data set
//! `LD/LN.name`; a report control block `LD/LN.BR|RP.instance`, indexed instances
//! `name01..nameNN` per IEC 61850-6 §9.3.8), and the comparison with what the server listed.
use crate::model::Model;
use gander_scl::LogicalDevice;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The names an access point's server should list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    /// Logical devices (MMS domains).
    pub lds: BTreeSet<String>,
    /// Logical nodes, `LD/LN`.
    pub lns: BTreeSet<String>,
    /// Data sets, `LD/LN.name`.
    pub data_sets: BTreeSet<String>,
    /// Report control block instances, `LD/LN.BR.name01`.
    pub rcbs: BTreeSet<String>,
}

impl Declared {
    /// From the logical devices of one access point (`gander_scl::Ied::logical_devices_of`).
    pub fn from_lds<'a>(lds: impl Iterator<Item = &'a LogicalDevice>) -> Declared {
        let mut d = Declared::default();
        for ld in lds {
            d.lds.insert(ld.domain.clone());
            for ln in &ld.logical_nodes {
                d.lns.insert(format!("{}/{}", ld.domain, ln.name));
                for ds in &ln.data_sets {
                    d.data_sets
                        .insert(format!("{}/{}.{}", ld.domain, ln.name, ds.name));
                }
                for rc in &ln.report_controls {
                    let fc = if rc.buffered { "BR" } else { "RP" };
                    for i in rc.instances() {
                        d.rcbs.insert(format!("{}/{}.{fc}.{i}", ld.domain, ln.name));
                    }
                }
            }
        }
        d
    }

    /// The same names of a model the probe found.
    pub fn from_found(m: &Model) -> Declared {
        let mut d = Declared::default();
        for ld in &m.logical_devices {
            d.lds.insert(ld.name.clone());
            for ln in &ld.logical_nodes {
                d.lns.insert(format!("{}/{ln}", ld.name));
            }
        }
        d.data_sets = m.data_sets.iter().map(|x| x.reference.clone()).collect();
        d.rcbs = m.rcbs.iter().map(|x| x.reference.clone()).collect();
        d
    }
}

/// Declared against found: what the SCD has that the server did not list (missing), and what
/// the server listed that the SCD does not have (extra). A data set created at run time by a
/// client (IEC 61850-7-2 §13.2.5, deletable) is an honest "extra".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCheck {
    /// Whether found and declared name the same objects.
    pub matches: bool,
    /// Declared counts: LDs, LNs, data sets, RCBs.
    pub declared: [usize; 4],
    /// Found counts, in the same order.
    pub found: [usize; 4],
    /// Logical devices declared, not found.
    pub missing_lds: Vec<String>,
    /// Logical devices found, not declared.
    pub extra_lds: Vec<String>,
    /// Logical nodes declared, not found.
    pub missing_lns: Vec<String>,
    /// Logical nodes found, not declared.
    pub extra_lns: Vec<String>,
    /// Data sets declared, not found.
    pub missing_data_sets: Vec<String>,
    /// Data sets found, not declared.
    pub extra_data_sets: Vec<String>,
    /// RCB instances declared, not found.
    pub missing_rcbs: Vec<String>,
    /// RCB instances found, not declared.
    pub extra_rcbs: Vec<String>,
}

fn minus(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Vec<String> {
    a.difference(b).cloned().collect()
}

/// Compares the declared names with the found ones.
pub fn compare(declared: &Declared, found: &Declared) -> ModelCheck {
    let count = |d: &Declared| [d.lds.len(), d.lns.len(), d.data_sets.len(), d.rcbs.len()];
    let mut c = ModelCheck {
        matches: false,
        declared: count(declared),
        found: count(found),
        missing_lds: minus(&declared.lds, &found.lds),
        extra_lds: minus(&found.lds, &declared.lds),
        missing_lns: minus(&declared.lns, &found.lns),
        extra_lns: minus(&found.lns, &declared.lns),
        missing_data_sets: minus(&declared.data_sets, &found.data_sets),
        extra_data_sets: minus(&found.data_sets, &declared.data_sets),
        missing_rcbs: minus(&declared.rcbs, &found.rcbs),
        extra_rcbs: minus(&found.rcbs, &declared.rcbs),
    };
    c.matches = c.missing().is_empty() && c.extra().is_empty();
    c
}

impl ModelCheck {
    /// Every missing name, LDs first.
    pub fn missing(&self) -> Vec<&str> {
        [
            &self.missing_lds,
            &self.missing_lns,
            &self.missing_data_sets,
            &self.missing_rcbs,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect()
    }

    /// Every extra name, LDs first.
    pub fn extra(&self) -> Vec<&str> {
        [
            &self.extra_lds,
            &self.extra_lns,
            &self.extra_data_sets,
            &self.extra_rcbs,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCD: &str = r#"<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL">
<IED name="P1"><AccessPoint name="S1"><Server><Authentication/>
<LDevice inst="PROT"><LN0 lnClass="LLN0" lnType="LLN0T" inst="">
<DataSet name="Ev"><FCDA ldInst="PROT" prefix="" lnClass="GGIO" lnInst="1" doName="Ind1" fc="ST"/></DataSet>
<ReportControl name="brcbEv" datSet="Ev" confRev="1" buffered="true"><RptEnabled max="2"/></ReportControl>
</LN0><LN lnClass="GGIO" inst="1" lnType="GGIOT"/></LDevice>
</Server></AccessPoint></IED>
<DataTypeTemplates>
<LNodeType id="LLN0T" lnClass="LLN0"><DO name="Mod" type="INC"/></LNodeType>
<LNodeType id="GGIOT" lnClass="GGIO"><DO name="Ind1" type="SPS"/></LNodeType>
<DOType id="INC" cdc="INC"><DA name="stVal" bType="INT32" fc="ST"/></DOType>
<DOType id="SPS" cdc="SPS"><DA name="stVal" bType="BOOLEAN" fc="ST"/></DOType>
</DataTypeTemplates></SCL>"#;

    #[test]
    fn declared_names_are_the_probe_s_names() {
        let scl = gander_scl::parse(SCD).unwrap();
        let ied = scl.ied(Some("P1")).unwrap();
        let d = Declared::from_lds(ied.logical_devices_of(Some("S1")).unwrap().into_iter());
        assert_eq!(d.lds.iter().collect::<Vec<_>>(), ["P1PROT"]);
        assert!(d.lns.contains("P1PROT/LLN0") && d.lns.contains("P1PROT/GGIO1"));
        assert!(d.data_sets.contains("P1PROT/LLN0.Ev"));
        assert!(d.rcbs.contains("P1PROT/LLN0.BR.brcbEv01"));
        assert!(d.rcbs.contains("P1PROT/LLN0.BR.brcbEv02"));
        let mut found = d.clone();
        assert!(compare(&d, &found).matches);
        found.rcbs.remove("P1PROT/LLN0.BR.brcbEv02");
        found.data_sets.insert("P1PROT/LLN0.Dyn".into());
        let c = compare(&d, &found);
        assert!(!c.matches);
        assert_eq!(c.missing(), ["P1PROT/LLN0.BR.brcbEv02"]);
        assert_eq!(c.extra(), ["P1PROT/LLN0.Dyn"]);
        assert_eq!(c.declared, [1, 2, 1, 2]);
        assert_eq!(c.found, [1, 2, 2, 1]);
    }
}
