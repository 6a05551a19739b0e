//! What a sweep visits: the IP access points of an SCD (IEC 61850-6 Communication section,
//! `gander_scl::ip_access_points`) with the model each IED declares, or a targets file.
//!
//! A targets file is TOML, one `[[target]]` table per device:
//!
//! ```toml
//! [[target]]
//! name = "BAY1-P1"      # required, unique: keys the resume state and the diff
//! address = "10.0.0.11" # host name, IPv4 or IPv6
//! port = 3782           # optional: else 3782 with --tls (then 102), 102 without
//! tls = true            # optional: else told from the server's first answer
//! ```
use super::declared::Declared;
use super::error::FleetError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One device to probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The row's name: the IED name (with `/AP` when the IED has several IP access points),
    /// or the targets file's `name`.
    pub name: String,
    /// The IED (SCD only): one session at a time per IED, whatever its access points.
    pub ied: Option<String>,
    /// The access point (SCD only).
    pub access_point: Option<String>,
    /// Host name or IP address.
    pub address: String,
    /// The TCP port, when the file gives one.
    pub port: Option<u16>,
    /// TLS or not, when the file says.
    pub tls: Option<bool>,
}

impl Target {
    /// The key of one-session-per-device: the IED, or the address for a targets file.
    pub fn device(&self) -> &str {
        self.ied.as_deref().unwrap_or(&self.address)
    }
}

/// The targets of an SCD and, per target name, the model its IED declares for that access
/// point (`None` for an access point with no server, e.g. a client-only one, which is still
/// probed: something answers there or not).
pub struct Plan {
    /// In file order.
    pub targets: Vec<Target>,
    /// Declared model per target name.
    pub declared: BTreeMap<String, Declared>,
    /// IEDs of the SCD refused by gander-scl, with why (they are still probed when they have an
    /// address; their model cannot be checked).
    pub refused: Vec<String>,
    /// The repairs gander-scl made to load the declared models (`IED X: line L, column C:
    /// ...; repaired: ...`, docs/scl.md "Repairs"): the model compared against is the repaired
    /// one, so the sweep says so at start-up.
    pub repaired: Vec<String>,
    /// What the sweep says at start-up besides: access points left out (an unspecified
    /// address), and targets whose model will not be checked against the SCD, with why.
    pub notes: Vec<String>,
}

/// The sweep plan of the SCD text `text` (`path` only names it in errors).
pub fn from_scd(path: &str, text: &str) -> Result<Plan, FleetError> {
    let scd_err = |source| FleetError::Scd {
        path: path.into(),
        source: Box::new(source),
    };
    let aps = gander_scl::ip_access_points(text).map_err(scd_err)?;
    // A model that cannot be read still leaves the addresses usable.
    let scl = gander_scl::parse(text).ok();
    let mut per_ied: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &aps {
        *per_ied.entry(a.ied.as_str()).or_default() += 1;
    }
    let mut plan = Plan {
        targets: Vec::new(),
        declared: BTreeMap::new(),
        refused: scl
            .as_ref()
            .map(|s| s.refused.iter().map(|r| r.error.to_string()).collect())
            .unwrap_or_default(),
        repaired: scl
            .as_ref()
            .map(|s| {
                s.ieds
                    .iter()
                    .flat_map(|i| i.warnings.iter().map(|w| format!("IED {}: {w}", i.name)))
                    .collect()
            })
            .unwrap_or_default(),
        notes: Vec::new(),
    };
    // An access point connected to two subnetworks (or with two addresses) is two targets:
    // named apart by the subnetwork (and, within one, by their order).
    let mut per_ap: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut per_sn: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for a in &aps {
        *per_ap.entry((&a.ied, &a.access_point)).or_default() += 1;
        *per_sn
            .entry((&a.ied, &a.access_point, &a.subnetwork))
            .or_default() += 1;
    }
    let mut seen_sn: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for a in &aps {
        // 0.0.0.0 and :: name no device (RFC 1122 3.2.1.3: a source address only); tools
        // write them for "not configured" (smartgridadsc/CyberRange's combined SCD gives its
        // nine switches 0.0.0.0). Probing them reaches the prober's own host.
        if a.address.is_unspecified() {
            plan.notes.push(format!(
                "{}/{}: address {} is unspecified (not configured): not swept",
                a.ied, a.access_point, a.address
            ));
            continue;
        }
        let mut name = if per_ied.get(a.ied.as_str()).copied().unwrap_or(0) > 1 {
            format!("{}/{}", a.ied, a.access_point)
        } else {
            a.ied.clone()
        };
        if per_ap[&(a.ied.as_str(), a.access_point.as_str())] > 1 {
            name = format!("{}/{}@{}", a.ied, a.access_point, a.subnetwork);
            let key = (
                a.ied.as_str(),
                a.access_point.as_str(),
                a.subnetwork.as_str(),
            );
            if per_sn[&key] > 1 {
                let n = seen_sn.entry(key).or_default();
                *n += 1;
                name = format!("{name}#{n}");
            }
        }
        match scl
            .as_ref()
            .map(|s| s.ieds.iter().find(|i| i.name == a.ied))
        {
            Some(Some(ied)) => match ied.logical_devices_of(Some(&a.access_point)) {
                Ok(lds) => {
                    plan.declared
                        .insert(name.clone(), Declared::from_lds(lds.into_iter()));
                }
                Err(_) => plan.notes.push(format!(
                    "{name}: the SCD declares no server on access point {} of IED {}: whatever answers there is not checked against it",
                    a.access_point, a.ied
                )),
            },
            Some(None)
                if scl
                    .as_ref()
                    .is_some_and(|s| s.refused.iter().any(|r| r.name == a.ied)) =>
            {
                plan.notes.push(format!(
                    "{name}: IED {} was refused by the SCL reader (see fleet.json refused_ieds): its model is not checked",
                    a.ied
                ))
            }
            Some(None) => plan.notes.push(format!(
                "{name}: no IED {} in the SCD: its model is not checked",
                a.ied
            )),
            None => plan.notes.push(format!(
                "{name}: the SCD's model could not be read: not checked"
            )),
        }
        plan.targets.push(Target {
            name,
            ied: Some(a.ied.clone()),
            access_point: Some(a.access_point.clone()),
            address: a.address.to_string(),
            port: a.port,
            tls: None,
        });
    }
    check(&plan.targets)?;
    if plan.targets.is_empty() {
        return Err(FleetError::NoTargets(format!(
            "{path} has no ConnectedAP with a P type=\"IP\" (or IPv6) address"
        )));
    }
    Ok(plan)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    target: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    address: String,
    port: Option<u16>,
    tls: Option<bool>,
}

/// The targets of a targets file's text.
pub fn from_toml(path: &str, text: &str) -> Result<Vec<Target>, FleetError> {
    let f: File = toml::from_str(text).map_err(|e| FleetError::Targets {
        path: path.into(),
        detail: e.to_string(),
    })?;
    let mut out = Vec::with_capacity(f.target.len());
    for e in f.target {
        if e.name.trim().is_empty() || e.address.trim().is_empty() {
            return Err(FleetError::Targets {
                path: path.into(),
                detail: "every [[target]] needs a non-empty name and address".into(),
            });
        }
        if e.port == Some(0) {
            return Err(FleetError::Targets {
                path: path.into(),
                detail: format!("target {:?}: port 0", e.name),
            });
        }
        out.push(Target {
            name: e.name,
            ied: None,
            access_point: None,
            address: e.address.trim().to_string(),
            port: e.port,
            tls: e.tls,
        });
    }
    check(&out)?;
    if out.is_empty() {
        return Err(FleetError::NoTargets(format!("{path} has no [[target]]")));
    }
    Ok(out)
}

fn check(t: &[Target]) -> Result<(), FleetError> {
    let mut seen = std::collections::BTreeSet::new();
    for x in t {
        if !seen.insert(x.name.as_str()) {
            return Err(FleetError::DuplicateName(x.name.clone()));
        }
    }
    Ok(())
}

/// Reads an SCD for [`from_scd`], in the encoding it declares (`gander_scl::read`).
pub fn read_scd(path: &Path) -> Result<String, FleetError> {
    gander_scl::read(path).map_err(|source| FleetError::Scd {
        path: path.display().to_string(),
        source: Box::new(source),
    })
}

/// Reads a targets file for [`from_toml`].
pub fn read(path: &Path) -> Result<String, FleetError> {
    std::fs::read_to_string(path).map_err(|source| FleetError::Io {
        path: path.display().to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_targets_file_is_read_and_checked() {
        let t = from_toml(
            "t.toml",
            r#"
[[target]]
name = "A"
address = "10.0.0.1"
[[target]]
name = "B"
address = "ied-b.example"
port = 3782
tls = true
"#,
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!((t[1].port, t[1].tls), (Some(3782), Some(true)));
        assert_eq!(t[0].device(), "10.0.0.1");
        let dup = "[[target]]\nname='A'\naddress='x'\n[[target]]\nname='A'\naddress='y'\n";
        assert!(matches!(
            from_toml("t", dup),
            Err(FleetError::DuplicateName(_))
        ));
        assert!(from_toml("t", "[[target]]\nname='A'\n").is_err());
        assert!(from_toml("t", "[[target]]\nname='A'\naddress='x'\nbogus=1\n").is_err());
        assert!(matches!(from_toml("t", ""), Err(FleetError::NoTargets(_))));
    }

    /// An IED of the SCD loaded with a repair (docs/scl.md, "Repairs") is planned with its
    /// declared model as repaired, and the repair is in the plan for the sweep to print.
    #[test]
    fn the_repairs_of_the_declared_models_are_in_the_plan() {
        let scd = r#"<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL">
  <Communication><SubNetwork name="S"><ConnectedAP iedName="A" apName="AP1">
    <Address><P type="IP">10.0.0.1</P></Address></ConnectedAP></SubNetwork></Communication>
  <IED name="A"><AccessPoint name="AP1"><Server><Authentication/><LDevice inst="LD0">
    <LN0 lnClass="LLN0" inst="" lnType="LLN0_T"/>
    <LN lnClass="GGIO" inst="1" lnType="MISSING_T"/>
  </LDevice></Server></AccessPoint></IED>
  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0"><DO name="Beh" type="INS_T"/></LNodeType>
    <DOType id="INS_T" cdc="INS"><DA name="stVal" fc="ST" bType="INT32"/></DOType>
  </DataTypeTemplates>
</SCL>"#;
        let plan = from_scd("s.scd", scd).unwrap();
        assert!(plan.refused.is_empty());
        assert_eq!(plan.repaired.len(), 1, "{:?}", plan.repaired);
        assert!(
            plan.repaired[0].starts_with("IED A: line 7, column 5: LNodeType \"MISSING_T\""),
            "{}",
            plan.repaired[0]
        );
        assert!(plan.declared.contains_key("A"));
    }

    /// The sweep-plan rules a field test of public and adapted SCDs asked for: an unspecified
    /// address is left out and said (CyberRange's switches at 0.0.0.0), an access point on two
    /// subnetworks is two targets named apart (it refused the whole sweep as "two targets are
    /// named"), a zero-padded octet is read (tP_IP allows it), and a target whose model cannot
    /// be checked says why.
    #[test]
    fn unspecified_addresses_two_subnetworks_and_unchecked_models_are_said() {
        let scd = r#"<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL">
  <Communication>
    <SubNetwork name="Station">
      <ConnectedAP iedName="A" apName="AP1"><Address><P type="IP">10.0.0.001</P></Address></ConnectedAP>
      <ConnectedAP iedName="SW1" apName="AP1"><Address><P type="IP">0.0.0.0</P></Address></ConnectedAP>
      <ConnectedAP iedName="A" apName="AP9"><Address><P type="IP">10.0.0.9</P></Address></ConnectedAP>
    </SubNetwork>
    <SubNetwork name="Process">
      <ConnectedAP iedName="A" apName="AP1"><Address><P type="IP">10.20.0.1</P></Address></ConnectedAP>
    </SubNetwork>
  </Communication>
  <IED name="A"><AccessPoint name="AP1"><Server><Authentication/><LDevice inst="LD0">
    <LN0 lnClass="LLN0" inst="" lnType="LLN0_T"/>
  </LDevice></Server></AccessPoint><AccessPoint name="AP9"/></IED>
  <IED name="SW1"/>
  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0"><DO name="Beh" type="INS_T"/></LNodeType>
    <DOType id="INS_T" cdc="INS"><DA name="stVal" fc="ST" bType="INT32"/></DOType>
  </DataTypeTemplates>
</SCL>"#;
        let plan = from_scd("s.scd", scd).unwrap();
        let names: Vec<(&str, &str)> = plan
            .targets
            .iter()
            .map(|t| (t.name.as_str(), t.address.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("A/AP1@Station", "10.0.0.1"),
                ("A/AP9", "10.0.0.9"),
                ("A/AP1@Process", "10.20.0.1")
            ]
        );
        assert!(plan.declared.contains_key("A/AP1@Station"));
        assert!(plan.declared.contains_key("A/AP1@Process"));
        assert!(!plan.declared.contains_key("A/AP9"));
        assert_eq!(plan.notes.len(), 2, "{:?}", plan.notes);
        assert!(plan.notes[0].contains("SW1/AP1: address 0.0.0.0 is unspecified"));
        assert!(plan.notes[1].starts_with("A/AP9: the SCD declares no server"));
    }
}
