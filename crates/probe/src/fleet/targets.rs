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
    /// The IED, or the address for a targets file. One of the two keys a sweep groups
    /// targets by; [`devices`] joins targets that share either (one session per host).
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
    plan.notes.extend(shared_addresses(&plan.targets));
    Ok(plan)
}

/// Notes for targets of different IEDs that the SCD gives one address and port: one host then
/// answers for several names. A proxy (one server holding several IEDs' models, told apart by
/// their AP titles, IEC 61850-8-1 "OSI-AP-Title") does this on purpose; otherwise an address
/// was copied and not changed, and one IED of the two is not reached at all. Either way the
/// sweep visits that host one name after the other ([`devices`]) and each row's model check
/// says which model answered.
fn shared_addresses(targets: &[Target]) -> Vec<String> {
    let mut at: BTreeMap<(&str, Option<u16>), Vec<&Target>> = BTreeMap::new();
    for t in targets {
        at.entry((t.address.as_str(), t.port)).or_default().push(t);
    }
    let mut notes = Vec::new();
    for ((address, port), ts) in at {
        let mut ieds: Vec<&str> = ts.iter().filter_map(|t| t.ied.as_deref()).collect();
        ieds.sort_unstable();
        ieds.dedup();
        if ieds.len() < 2 {
            continue;
        }
        let names: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
        let port = port.map(|p| format!(" port {p}")).unwrap_or_default();
        notes.push(format!(
            "{}: IEDs {} share one address ({address}{port}): one host answers for all of them, which is right for a proxy or one machine running several tools; otherwise an address in the SCD was copied and the others are not reached. Probed one after the other",
            names.join(", "),
            ieds.join(", ")
        ));
    }
    notes
}

/// The targets grouped by device, each group in the targets' order and the groups in the order
/// of their first target: targets that share an IED, or an address, are one device, so that
/// no device is given two sessions at once, whatever names the file gives it (two IEDs of an
/// SCD at one address, or a targets file naming one host twice).
pub fn devices(targets: &[&Target]) -> Vec<Vec<usize>> {
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut parent: Vec<usize> = (0..targets.len()).collect();
    let mut by_ied: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_address: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, t) in targets.iter().enumerate() {
        let mut firsts = vec![*by_address.entry(t.address.as_str()).or_insert(i)];
        if let Some(ied) = t.ied.as_deref() {
            firsts.push(*by_ied.entry(ied).or_insert(i));
        }
        for f in firsts {
            // The root of a group is its first target: groups keep the targets' order.
            let (a, b) = (root(&mut parent, f), root(&mut parent, i));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut group_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..targets.len() {
        let r = root(&mut parent, i);
        let g = *group_of.entry(r).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups
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

    fn target(name: &str, ied: Option<&str>, address: &str) -> Target {
        Target {
            name: name.into(),
            ied: ied.map(Into::into),
            access_point: None,
            address: address.into(),
            port: None,
            tls: None,
        }
    }

    /// Targets sharing an IED or an address are one device (one session at a time), also
    /// through a chain (F shares IED Z with D and address 10.0.0.3 with C), and the groups keep
    /// the targets' order.
    #[test]
    fn targets_sharing_an_ied_or_an_address_are_one_device() {
        let t = [
            target("A", Some("X"), "10.0.0.1"),
            target("B", Some("Y"), "10.0.0.2"),
            target("C", Some("X"), "10.0.0.3"),
            target("D", Some("Z"), "10.0.0.2"),
            target("E", None, "10.0.0.4"),
            target("G", None, "10.0.0.4"),
        ];
        let refs: Vec<&Target> = t.iter().collect();
        assert_eq!(devices(&refs), [vec![0, 2], vec![1, 3], vec![4, 5]]);
        let mut chained = t.to_vec();
        chained.push(target("F", Some("Z"), "10.0.0.3"));
        let refs: Vec<&Target> = chained.iter().collect();
        assert_eq!(devices(&refs), [vec![0, 1, 2, 3, 6], vec![4, 5]]);
        // An IED named like another target's address is not that address.
        let odd = [
            target("A", Some("10.0.0.9"), "10.0.0.1"),
            target("B", None, "10.0.0.9"),
        ];
        let refs: Vec<&Target> = odd.iter().collect();
        assert_eq!(devices(&refs), [vec![0], vec![1]]);
        assert!(devices(&[]).is_empty());
    }

    /// Two IEDs of an SCD at one address and port (a copied address, or a proxy) are said at
    /// start-up and planned as one device; at one address on two ports they are one device
    /// (one session at a time) but not a finding. A public SED does this: the 2019 IEC 61850
    /// interoperability test's `IOP_2019-09-26_LV_ED2_1_V12_XF.sed` (repository
    /// sureenapatnaik92/sampleProject) gives four IEDs of three vendors 10.11.19.31 and three
    /// client tools 10.10.20.1; the sweep used to open sessions to all four at once and said
    /// nothing.
    #[test]
    fn two_ieds_at_one_address_are_said_and_probed_one_after_the_other() {
        let ied = |name: &str| {
            format!(
                r#"<IED name="{name}"><AccessPoint name="AP1"><Server><Authentication/><LDevice inst="LD0">
    <LN0 lnClass="LLN0" inst="" lnType="LLN0_T"/></LDevice></Server></AccessPoint></IED>"#
            )
        };
        let scd = |p3: &str| {
            format!(
                r#"<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL">
  <Communication><SubNetwork name="S">
    <ConnectedAP iedName="F1" apName="AP1"><Address><P type="IP">10.0.0.11</P></Address></ConnectedAP>
    <ConnectedAP iedName="F2" apName="AP1"><Address><P type="IP">10.0.0.12</P></Address></ConnectedAP>
    <ConnectedAP iedName="F3" apName="AP1"><Address><P type="IP">10.0.0.11</P>{p3}</Address></ConnectedAP>
  </SubNetwork></Communication>
  {}{}{}
  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0"><DO name="Beh" type="INS_T"/></LNodeType>
    <DOType id="INS_T" cdc="INS"><DA name="stVal" fc="ST" bType="INT32"/></DOType>
  </DataTypeTemplates>
</SCL>"#,
                ied("F1"),
                ied("F2"),
                ied("F3")
            )
        };
        let plan = from_scd("s.scd", &scd("")).unwrap();
        assert_eq!(plan.notes.len(), 1, "{:?}", plan.notes);
        assert!(
            plan.notes[0].starts_with("F1, F3: IEDs F1, F3 share one address (10.0.0.11)"),
            "{}",
            plan.notes[0]
        );
        let refs: Vec<&Target> = plan.targets.iter().collect();
        assert_eq!(devices(&refs), [vec![0, 2], vec![1]]);
        assert!(plan.declared.contains_key("F1") && plan.declared.contains_key("F3"));

        let plan = from_scd("s.scd", &scd(r#"<P type="MMS-Port">10102</P>"#)).unwrap();
        assert!(plan.notes.is_empty(), "{:?}", plan.notes);
        let refs: Vec<&Target> = plan.targets.iter().collect();
        assert_eq!(devices(&refs), [vec![0, 2], vec![1]]);
    }
}
