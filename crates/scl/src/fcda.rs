//! Data set members (`FCDA`, IEC 61850-6 §9.3.7) resolved against the IED's model: the member
//! must exist with its FC, and it may name one element of an array (`daName="phsAHar(7)"`,
//! `daName="phsAHar(3).cVal.mag"`), which IEC 61850-8-1 §8.1.3.5 / ISO 9506 maps onto an
//! alternate access of the array variable: the MMS item up to the array, the index, and the
//! component path under the element. libiec61850's model generator and server accept exactly
//! one index per member and keep it the same way (`DataSetEntry`: variable name, index,
//! component name).
//!
//! The member is found by walking the LN's resolved tree once per FCDA (not by listing the
//! LN's variables), and the LNs are found through an index built once per IED, so a data set
//! costs time in proportion to its members' depths.

use crate::error::{SclError, SclErrorKind};
use crate::model::{DataNode, Fcda, Ied, LogicalNode, NodeKind};
use crate::parse::Ctx;
use crate::types::Fc;
use crate::warning::Repair;
use crate::xml::SclAttr;
use roxmltree::Node;
use std::collections::HashMap;

/// The logical nodes of an IED by (LD inst, LN name), with each LD's MMS domain.
pub(crate) struct LnIndex<'m> {
    lns: HashMap<(&'m str, &'m str), (&'m str, &'m LogicalNode)>,
    lds: std::collections::HashSet<&'m str>,
    /// LD inst by MMS domain, for an `ldInst` that names the domain instead.
    by_domain: HashMap<&'m str, &'m str>,
}

impl<'m> LnIndex<'m> {
    pub(crate) fn new(ied: &'m Ied) -> Self {
        let mut lns = HashMap::new();
        for ld in &ied.logical_devices {
            for ln in &ld.logical_nodes {
                lns.entry((ld.inst.as_str(), ln.name.as_str()))
                    .or_insert((ld.domain.as_str(), ln));
            }
        }
        let lds = ied
            .logical_devices
            .iter()
            .map(|l| l.inst.as_str())
            .collect();
        let by_domain = ied
            .logical_devices
            .iter()
            .map(|l| (l.domain.as_str(), l.inst.as_str()))
            .collect();
        LnIndex {
            lns,
            lds,
            by_domain,
        }
    }

    fn has_ld(&self, inst: &str) -> bool {
        self.lds.contains(inst)
    }
}

/// One component of a member path: a name and, for an array element, its index.
struct Step<'s> {
    name: &'s str,
    index: Option<u32>,
}

/// Splits `HA.phsAHar(7).cVal` into its steps; None when a step is not `name` or `name(n)`.
fn steps(path: &str) -> Option<Vec<Step<'_>>> {
    path.split('.')
        .map(|s| match s.split_once('(') {
            None => (!s.is_empty()).then_some(Step {
                name: s,
                index: None,
            }),
            Some((name, rest)) => {
                let digits = rest.strip_suffix(')')?;
                if name.is_empty()
                    || digits.is_empty()
                    || !digits.bytes().all(|b| b.is_ascii_digit())
                {
                    return None;
                }
                Some(Step {
                    name,
                    index: Some(digits.parse().ok()?),
                })
            }
        })
        .collect()
}

/// Whether any basic attribute at or under `n` has FC `fc`.
fn has_fc(n: &DataNode, fc: Fc) -> bool {
    match &n.kind {
        NodeKind::Attribute { fc: f, .. } => *f == fc,
        NodeKind::Object { .. } => n.children.iter().any(|c| has_fc(c, fc)),
    }
}

/// The child named `name` that can hold FC `fc`: a DO may have two DAs of one name with
/// different FCs (an ASG's `setMag` as SG and as SE).
fn child<'n>(nodes: &'n [DataNode], name: &str, fc: Fc) -> Option<&'n DataNode> {
    nodes.iter().find(|c| c.name == name && has_fc(c, fc))
}

/// Resolves one FCDA of data set `ds` defined in LD `here_inst` (`here_domain`).
pub(crate) fn resolve(
    cx: &Ctx,
    index: &LnIndex,
    here_inst: &str,
    ds: &str,
    f: Node,
) -> Result<Fcda, SclError> {
    let a = |k| f.scl_attr(k).unwrap_or("");
    let fc_s = cx.req(f, "FCDA", "fc")?;
    let fc = Fc::from_scl(fc_s).ok_or_else(|| {
        cx.err(
            f,
            SclErrorKind::BadValue {
                element: "FCDA",
                attribute: "fc",
                value: fc_s.into(),
                why: "not a functional constraint of IEC 61850-7-2",
            },
        )
    })?;
    let ln_name = format!(
        "{}{}{}",
        a("prefix"),
        cx.req(f, "FCDA", "lnClass")?,
        a("lnInst")
    );
    let do_name = cx.req(f, "FCDA", "doName")?;
    let path = if a("daName").is_empty() {
        do_name.to_string()
    } else {
        format!("{do_name}.{}", a("daName"))
    };
    let written = f.scl_attr("ldInst").unwrap_or(here_inst);
    let member = format!("{written}/{ln_name}.{path} [{fc_s}]");
    let err = |kind| cx.err(f, kind);
    let unknown = |why: String| {
        err(SclErrorKind::UnknownMember {
            data_set: ds.into(),
            member: member.clone(),
            why,
        })
    };
    // `ldInst` is the LD's inst (IEC 61850-6 tFCDA); libiec61850's own complexModel.icd
    // writes the MMS domain instead (`ied1Inverter` for IED ied1's LD Inverter). A domain
    // names exactly one LD of the IED, so it is read as that LD, with a warning.
    let ld_inst = match index.by_domain.get(written) {
        Some(inst) if !index.has_ld(written) => {
            cx.repaired(
                unknown(format!(
                    "the IED has no LD of inst {written}; it is the MMS domain of LD {inst}"
                )),
                Repair::LdInstReadAsDomain {
                    inst: (*inst).into(),
                },
            );
            *inst
        }
        _ => written,
    };
    // libiec61850's dotnet test SCD writes `lnClass="LLN0" lnInst="1"`; LLN0 has no
    // instance number, so this can only mean the LD's LLN0: read so, with a warning.
    let ln_name = match (a("prefix"), a("lnClass"), a("lnInst")) {
        ("", "LLN0", inst)
            if !inst.is_empty()
                && !index.lns.contains_key(&(ld_inst, ln_name.as_str()))
                && index.lns.contains_key(&(ld_inst, "LLN0")) =>
        {
            cx.repaired(
                unknown(format!("LD {ld_inst} has no LN {ln_name}")),
                Repair::LnInstIgnoredOnLln0,
            );
            "LLN0".to_string()
        }
        _ => ln_name,
    };
    let (domain, ln) = match index.lns.get(&(ld_inst, ln_name.as_str())) {
        Some(x) => *x,
        None if index.has_ld(ld_inst) => {
            return Err(unknown(format!("LD {ld_inst} has no LN {ln_name}")))
        }
        None => {
            return Err(unknown(format!(
                "the IED has no LD of inst {ld_inst} (ldInst is the LD's inst, not its MMS domain)"
            )))
        }
    };
    let steps = steps(&path)
        .ok_or_else(|| unknown("the path is not names with at most an (index) each".into()))?;
    // Walk the tree: the item's components up to the indexed array, then the component.
    let mut nodes: &[DataNode] = &ln.data_objects;
    let mut item = format!("{ln_name}${fc_s}");
    let mut component: Vec<&str> = Vec::new();
    let mut array_index = None;
    let mut last: Option<&DataNode> = None;
    for s in &steps {
        let n = child(nodes, s.name, fc)
            .ok_or_else(|| unknown(format!("no {} with FC {fc_s} there", s.name)))?;
        if array_index.is_some() {
            component.push(s.name);
        } else {
            item.push('$');
            item.push_str(s.name);
        }
        if let Some(i) = s.index {
            if array_index.is_some() {
                // One index per member: an MMS alternate access of one array (what
                // libiec61850 serves); an array inside an array element is not addressed so.
                return Err(err(SclErrorKind::ArrayMember {
                    data_set: ds.into(),
                    member: member.clone(),
                    why: "more than one array index in one member".into(),
                }));
            }
            if n.count == 0 {
                return Err(err(SclErrorKind::ArrayMember {
                    data_set: ds.into(),
                    member: member.clone(),
                    why: format!("{} is not an array", s.name),
                }));
            }
            if i >= n.count {
                return Err(err(SclErrorKind::ArrayMember {
                    data_set: ds.into(),
                    member: member.clone(),
                    why: format!(
                        "index {i} is outside {}'s {} elements (0..{})",
                        s.name,
                        n.count,
                        n.count - 1
                    ),
                }));
            }
            array_index = Some(i);
        }
        nodes = &n.children;
        last = Some(n);
    }
    if !last.is_some_and(|n| has_fc(n, fc)) {
        return Err(unknown(format!("nothing with FC {fc_s}")));
    }
    Ok(Fcda {
        domain: domain.to_string(),
        item,
        fc,
        array_index,
        component: (!component.is_empty()).then(|| component.join("$")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn member_paths() {
        let s = steps("HA.phsAHar(7).cVal").unwrap();
        assert_eq!(
            s.iter().map(|s| (s.name, s.index)).collect::<Vec<_>>(),
            [("HA", None), ("phsAHar", Some(7)), ("cVal", None)]
        );
        for bad in [
            "", "a..b", "a(", "a()", "a(x)", "(1)", "a(1", "a(-1)", "a(1)b",
        ] {
            assert!(steps(bad).is_none(), "{bad}");
        }
    }

    proptest! {
        /// Any `name(index)` path written out reads back as its steps.
        #[test]
        fn steps_round_trip(
            parts in proptest::collection::vec(("[a-zA-Z][a-zA-Z0-9_]{0,8}", proptest::option::of(0u32..1000)), 1..6)
        ) {
            let text = parts
                .iter()
                .map(|(n, i)| match i { Some(i) => format!("{n}({i})"), None => n.clone() })
                .collect::<Vec<_>>()
                .join(".");
            let s = steps(&text).unwrap();
            let back: Vec<(String, Option<u32>)> = s.iter().map(|s| (s.name.to_string(), s.index)).collect();
            prop_assert_eq!(back, parts);
        }

        /// Any text: steps or None, never a panic.
        #[test]
        fn steps_any_text(t in ".{0,40}") {
            let _ = steps(&t);
        }
    }
}
