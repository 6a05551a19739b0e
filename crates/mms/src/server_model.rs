//! A general IEC 61850 server model: any set of logical devices, logical nodes, data sets and
//! report control blocks, served through [`ServerHandler`] with the directory services
//! (Identify, GetNameList with continuation, GetVariableAccessAttributes at any depth,
//! GetNamedVariableListAttributes), Read and Write of any variable or component, and the
//! reports of its RCBs (GI, integrity period, data change, OptFlds as configured).
//!
//! The shape is IEC 61850-8-1 §8.1.3's mapping: one MMS domain per logical device (IED name +
//! LD inst), one named variable per logical node whose components are the functional
//! constraints (`ST`, `MX`, ... in [`FC_ORDER`]), each holding the data objects with that FC
//! (`LLN0$ST$Mod$stVal`); report control blocks sit under `RP` (unbuffered) or `BR`
//! (buffered) of their LN; data sets are named variable lists `LN$name`. Setting groups
//! (`LLN0$SP$SGCB` and the SG/SE values, [`SettingGroups`]), GOOSE control blocks (`GO`,
//! [`GocbInstance`]), sampled-value control blocks (`MS`/`US`, [`SvcbInstance`]) and log
//! control blocks (`LG`, [`LcbInstance`], with the LN's logs as MMS journals) are served with
//! their IEC 61850-7-2 services as MMS reads and writes. An unbuffered RCB may give each
//! association its own instance (IEC TISSUE 1771, [`ServerModel::add_rcb_per_association`]).
//!
//! This crate knows no SCL (layering: the codecs depend on nothing but `gander-wire`);
//! `gander-peers` builds a model from a `gander-scl` description. gander's fixed measurement
//! model ([`crate::model::ImpModel`]) keeps its own hand-made tree for its exact 125-octet
//! report, and shares the RCB rules with this model through [`RcbInstance`].

use std::borrow::Cow;

use gander_wire::data::Data;

use crate::association::{ConnId, ServerHandler};
use crate::report::trg_ops;
use crate::service::{
    AccessResult, DataAccessError, DefineNamedVariableListRequest, DeleteNamedVariableListRequest,
    DeleteNamedVariableListResponse, GetNamedVariableListAttributesResponse,
    GetVariableAccessAttributesResponse, IdentifyResponse, InformationReport, ObjectClass,
    ObjectName, ObjectScope, ServiceError, TypeSpec, VariableRef,
};

mod blocks;
mod control;
mod drift;
mod dynamic_lists;
mod gocb;
mod lcb;
mod node;
mod rcb_instance;
mod rcb_per_association;
mod setting_group;
mod svcb;
#[cfg(test)]
mod tests;

pub use drift::{Drift, DriftConfig, MAX_CHANGES_PER_CALL};
pub use dynamic_lists::{
    data_set_reference, member_reference, parse_data_set_reference, NamedList, MAX_AA_LISTS,
    MAX_DYNAMIC_LISTS_PER_DOMAIN,
};
pub use gocb::{DstAddress, GocbConfig, GocbInstance, GOCB_ELEMENTS};
pub use lcb::{LcbConfig, LcbInstance, LCB_ELEMENTS};
pub use node::{kind_matches, ModelNode, SetError};
pub use rcb_instance::{RcbConfig, RcbInstance, BRCB_ELEMENTS};
pub use setting_group::{SettingGroups, SgcbConfig, DEFAULT_RESV_TMS, SGCB_ELEMENTS};
pub use svcb::{sv_opt_flds, SvcbConfig, SvcbInstance};

/// The order of functional-constraint components inside a logical node's variable (the order
/// IEC 61850-7-2 §6.4 lists the FCs; libiec61850 sorts nothing, so clients must not rely on
/// it either, but a fixed order keeps answers reproducible).
pub const FC_ORDER: [&str; 19] = [
    "ST", "MX", "SP", "SV", "CF", "DC", "SG", "SE", "SR", "OR", "BL", "EX", "CO", "US", "MS", "RP",
    "BR", "LG", "GO",
];

/// FCs whose data attributes a client may write (IEC 61850-7-2 §6.4: configuration,
/// description, setting and substitution values); ST and MX are the device's own.
pub const WRITABLE_FCS: [&str; 5] = ["CF", "DC", "SP", "SV", "SE"];

/// Why a model could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// Two logical devices map to the same MMS domain.
    #[error("duplicate MMS domain {0:?}")]
    DuplicateDomain(String),
    /// A name refers to a domain the model does not have.
    #[error("no MMS domain {0:?}")]
    UnknownDomain(String),
    /// Two logical nodes, data sets or RCBs of one domain have the same name.
    #[error("{domain}: duplicate {what} {name:?}")]
    Duplicate {
        /// The domain.
        domain: String,
        /// logical node, data set or report control block.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A logical node's variable is not a structure of FC components.
    #[error("{domain}/{ln}: a logical node must be a structure of functional constraints")]
    NotAStructure {
        /// The domain.
        domain: String,
        /// The logical node.
        ln: String,
    },
    /// A data set member names nothing in the model.
    #[error("data set {data_set}: member {member} is not in the model")]
    UnknownMember {
        /// The data set (`domain/item`).
        data_set: String,
        /// The member (`domain/item`).
        member: String,
    },
    /// An RCB names a data set the domain does not have, or sits in a missing LN.
    #[error("report control block {rcb}: {what}")]
    BadRcb {
        /// The RCB (`domain/item`).
        rcb: String,
        /// What is wrong.
        what: String,
    },
    /// A setting group, GOOSE or sampled-value control block that cannot be served.
    #[error("control block {block}: {what}")]
    BadControlBlock {
        /// The block (`domain/item`).
        block: String,
        /// What is wrong.
        what: String,
    },
}

#[derive(Debug, Clone)]
struct Domain {
    name: String,
    lns: Vec<(String, ModelNode)>,
    lists: Vec<NamedList>,
}

/// The data-change stimulus of a measurement run: one leaf that the server changes every
/// report period, and the time stamp next to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stimulus {
    /// The leaf changed (toggled or incremented).
    pub value: ObjectName,
    /// The `t` (UtcTime) of the same data object, set to the change time, if there is one.
    pub time: Option<ObjectName>,
}

/// A served IEC 61850 model.
#[derive(Debug, Clone)]
pub struct ServerModel {
    identity: IdentifyResponse,
    domains: Vec<Domain>,
    rcbs: Vec<RcbInstance>,
    stimuli: Vec<Stimulus>,
    blocks: blocks::ControlBlocks,
    /// Association-specific data sets, with the association that owns each.
    aa_lists: Vec<(ConnId, NamedList)>,
    /// The value drift (values that change like a real IED's), when switched on.
    drift: Option<Drift>,
    controls: control::Controls,
}

fn fc_rank(name: &str) -> usize {
    FC_ORDER
        .iter()
        .position(|f| *f == name)
        .unwrap_or(FC_ORDER.len())
}

/// ISO 9506-2 ServiceError `access` / `object-non-existent` (class 7, code 2).
fn non_existent() -> ServiceError {
    ServiceError::new(ServiceError::CLASS_ACCESS, 2)
}

fn split(name: &ObjectName) -> Option<(&str, &str)> {
    match name {
        ObjectName::DomainSpecific { domain, item } => Some((domain, item)),
        _ => None,
    }
}

/// Whether two items of one domain overlap (one is the other or lies under it).
fn overlaps(a: &str, b: &str) -> bool {
    a == b
        || a.strip_prefix(b).is_some_and(|r| r.starts_with('$'))
        || b.strip_prefix(a).is_some_and(|r| r.starts_with('$'))
}

impl ServerModel {
    /// An empty model answering Identify with `vendor`, `model` and `revision`.
    pub fn new(vendor: &str, model: &str, revision: &str) -> Self {
        ServerModel {
            identity: IdentifyResponse {
                vendor: vendor.into(),
                model: model.into(),
                revision: revision.into(),
                abstract_syntaxes: None,
            },
            domains: Vec::new(),
            rcbs: Vec::new(),
            stimuli: Vec::new(),
            blocks: blocks::ControlBlocks::default(),
            aa_lists: Vec::new(),
            drift: None,
            controls: control::Controls::default(),
        }
    }

    /// Add a logical device (MMS domain).
    pub fn add_domain(&mut self, name: &str) -> Result<(), ModelError> {
        if self.domains.iter().any(|d| d.name == name) {
            return Err(ModelError::DuplicateDomain(name.into()));
        }
        self.domains.push(Domain {
            name: name.into(),
            lns: Vec::new(),
            lists: Vec::new(),
        });
        Ok(())
    }

    fn domain(&self, name: &str) -> Option<&Domain> {
        self.domains.iter().find(|d| d.name == name)
    }

    fn domain_mut(&mut self, name: &str) -> Result<&mut Domain, ModelError> {
        self.domains
            .iter_mut()
            .find(|d| d.name == name)
            .ok_or_else(|| ModelError::UnknownDomain(name.into()))
    }

    /// Add a logical node: a structure whose components are FCs (put in [`FC_ORDER`]).
    pub fn add_logical_node(
        &mut self,
        domain: &str,
        ln: &str,
        node: ModelNode,
    ) -> Result<(), ModelError> {
        let d = self.domain_mut(domain)?;
        let ModelNode::Struct(mut fcs) = node else {
            return Err(ModelError::NotAStructure {
                domain: domain.into(),
                ln: ln.into(),
            });
        };
        if d.lns.iter().any(|(n, _)| n == ln) {
            return Err(ModelError::Duplicate {
                domain: domain.into(),
                what: "logical node",
                name: ln.into(),
            });
        }
        fcs.sort_by_key(|(f, _)| fc_rank(f));
        d.lns.push((ln.into(), ModelNode::Struct(fcs)));
        Ok(())
    }

    /// Add a data set (named variable list `item`, e.g. `LLN0$DS1`); every member must exist.
    /// Members that are array elements go through [`ServerModel::add_data_set_members`].
    pub fn add_data_set(
        &mut self,
        domain: &str,
        item: &str,
        members: Vec<ObjectName>,
    ) -> Result<(), ModelError> {
        self.add_data_set_members(domain, item, members.into_iter().map(Into::into).collect())
    }

    /// Add a report control block instance; its LN and data set must exist.
    pub fn add_rcb(&mut self, config: RcbConfig) -> Result<(), ModelError> {
        let rcb = format!("{}/{}", config.domain, config.item);
        let bad = |what: String| ModelError::BadRcb {
            rcb: rcb.clone(),
            what,
        };
        let d = self
            .domain(&config.domain)
            .ok_or_else(|| ModelError::UnknownDomain(config.domain.clone()))?;
        let mut parts = config.item.split('$');
        let (ln, fc, name) = (parts.next(), parts.next(), parts.next());
        let want_fc = if config.buffered { "BR" } else { "RP" };
        if fc != Some(want_fc) || name.is_none_or(str::is_empty) || parts.next().is_some() {
            return Err(bad(format!("the item must be LN${want_fc}$name")));
        }
        let ln = ln.unwrap_or_default();
        if !d.lns.iter().any(|(n, _)| n == ln) {
            return Err(bad(format!("no logical node {ln:?}")));
        }
        let members = if config.data_set.is_empty() {
            Vec::new()
        } else {
            d.lists
                .iter()
                .find(|l| l.name == config.data_set)
                .map(|l| l.members.clone())
                .ok_or_else(|| bad(format!("no data set {:?}", config.data_set)))?
        };
        if self
            .rcbs
            .iter()
            .any(|r| r.config.domain == config.domain && r.config.item == config.item)
        {
            return Err(ModelError::Duplicate {
                domain: config.domain,
                what: "report control block",
                name: config.item,
            });
        }
        self.rcbs.push(RcbInstance::new(config, members));
        Ok(())
    }

    /// Choose the data-change stimulus (see [`ServerModel::stimuli`]); call after the last RCB.
    pub fn choose_stimuli(&mut self) {
        let mut out: Vec<Stimulus> = Vec::new();
        for r in &self.rcbs {
            if !r.config.trg_ops.get(trg_ops::DCHG) {
                continue;
            }
            let pick = r.members.iter().find_map(|m| {
                if m.access.is_some() {
                    return None;
                }
                let m = &m.name;
                let (dom, item) = split(m)?;
                let node = self.node(m)?;
                let (path, _) = node.leaves().into_iter().find(|(p, n)| {
                    let last = p.rsplit('$').next().unwrap_or(p);
                    matches!(
                        n,
                        ModelNode::Leaf {
                            value: Data::Boolean(_)
                                | Data::Integer(_)
                                | Data::Unsigned(_)
                                | Data::FloatingPoint32(_)
                                | Data::FloatingPoint64(_),
                            ..
                        }
                    ) && last != "q"
                })?;
                let value = if path.is_empty() {
                    item.to_string()
                } else {
                    format!("{item}${path}")
                };
                // The data object: LN$FC$DO; its `t` if it has one.
                let dobj: Vec<&str> = value.splitn(4, '$').take(3).collect();
                let t = format!("{}$t", dobj.join("$"));
                let time = matches!(
                    self.node(&ObjectName::domain(dom, t.clone())),
                    Some(ModelNode::Leaf {
                        value: Data::UtcTime(_),
                        ..
                    })
                )
                .then(|| ObjectName::domain(dom, t));
                Some(Stimulus {
                    value: ObjectName::domain(dom, value),
                    time,
                })
            });
            if let Some(s) = pick {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        self.stimuli = out;
    }

    /// No stimulus: the values change only by writes or by the drift.
    pub fn clear_stimuli(&mut self) {
        self.stimuli.clear();
    }

    /// The leaves the server changes each report period to drive data-change reports: for
    /// every RCB whose TrgOps has dchg, the first changeable leaf (BOOLEAN toggled; integer or
    /// float incremented; quality skipped) of the first member of its data set that has one.
    pub fn stimuli(&self) -> &[Stimulus] {
        &self.stimuli
    }

    /// The MMS domains, in model order.
    pub fn domains(&self) -> Vec<&str> {
        self.domains.iter().map(|d| d.name.as_str()).collect()
    }

    /// The RCB instances.
    pub fn rcbs(&self) -> &[RcbInstance] {
        &self.rcbs
    }

    /// The stored node of a data attribute (not an RCB).
    fn node(&self, name: &ObjectName) -> Option<&ModelNode> {
        let (dom, item) = split(name)?;
        let (ln, rest) = item.split_once('$').unwrap_or((item, ""));
        let (_, node) = self.domain(dom)?.lns.iter().find(|(n, _)| n == ln)?;
        node.find(rest)
    }

    fn node_mut(&mut self, dom: &str, item: &str) -> Option<&mut ModelNode> {
        let (ln, rest) = item.split_once('$').unwrap_or((item, ""));
        let d = self.domains.iter_mut().find(|d| d.name == dom)?;
        let (_, node) = d.lns.iter_mut().find(|(n, _)| n == ln)?;
        node.find_mut(rest)
    }

    /// A logical node as clients see it: the stored tree with its RCBs spliced in under
    /// RP/BR, its SGCB under SP, GoCBs under GO and SVCBs under MS/US (built on demand, so a
    /// control block's state is never stored twice).
    /// `conn`: the association reading (its own copy of a per-association RCB), or None.
    fn ln_view<'a>(
        &'a self,
        conn: Option<ConnId>,
        dom: &str,
        ln: &'a str,
        stored: &'a ModelNode,
    ) -> Cow<'a, ModelNode> {
        let mine: Vec<&RcbInstance> = self
            .rcbs
            .iter()
            .filter(|r| r.config.domain == dom && r.config.item.split('$').next() == Some(ln))
            .filter(|r| self.rcb_visible_to(r, conn))
            .collect();
        if mine.is_empty() && !self.blocks.any_in(dom, ln) {
            return Cow::Borrowed(stored);
        }
        let mut view = stored.clone();
        if let ModelNode::Struct(fcs) = &mut view {
            for r in mine {
                let mut parts = r.config.item.splitn(3, '$').skip(1);
                let (Some(fc), Some(name)) = (parts.next(), parts.next()) else {
                    continue;
                };
                let node = ModelNode::Struct(
                    r.elements()
                        .into_iter()
                        .map(|(n, d, t)| (n.to_string(), ModelNode::leaf(t, d)))
                        .collect(),
                );
                blocks::splice(fcs, fc, name, node, false);
            }
            self.blocks.splice_into(dom, ln, fcs);
        }
        Cow::Owned(view)
    }

    /// What a Read of `name` returns, or `None` when it does not exist.
    pub fn value(&self, name: &ObjectName) -> Option<Data> {
        self.value_for(None, name)
    }

    /// [`ServerModel::value`] as association `conn` reads it (its own per-association RCBs).
    fn value_for(&self, conn: Option<ConnId>, name: &ObjectName) -> Option<Data> {
        let (dom, item) = split(name)?;
        let (ln, rest) = item.split_once('$').unwrap_or((item, ""));
        let (lname, stored) = self.domain(dom)?.lns.iter().find(|(n, _)| n == ln)?;
        let view = self.ln_view(conn, dom, lname, stored);
        view.find(rest).map(ModelNode::to_data)
    }

    fn type_of(&self, dom: &str, item: &str) -> Option<TypeSpec> {
        let (ln, rest) = item.split_once('$').unwrap_or((item, ""));
        let (lname, stored) = self.domain(dom)?.lns.iter().find(|(n, _)| n == ln)?;
        let view = self.ln_view(None, dom, lname, stored);
        view.find(rest).map(ModelNode::type_spec)
    }

    /// Set a data attribute's value as the device would (no access check), noting a data
    /// change for every RCB whose data set includes it.
    pub fn set_value(&mut self, name: &ObjectName, value: Data) -> Result<(), DataAccessError> {
        let (dom, item) = split(name).ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        let (dom, item) = (dom.to_string(), item.to_string());
        let node = self
            .node_mut(&dom, &item)
            .ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        node.set_value(value)
            .map_err(node::SetError::data_access_error)?;
        self.mark_changed(&dom, &item);
        Ok(())
    }

    /// [`ServerHandler::write_selected`] of the element `path` selects in `name`.
    fn write_element(
        &mut self,
        conn: ConnId,
        name: &ObjectName,
        path: &[dynamic_lists::Step<'_>],
        value: &Data,
    ) -> Result<(), DataAccessError> {
        self.check_element_write(conn, name)?;
        let (dom, item) = split(name).ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        let (dom, item) = (dom.to_string(), item.to_string());
        let node = self
            .node_mut(&dom, &item)
            .and_then(|n| dynamic_lists::select_mut(n, path))
            .ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        node.set_value(value.clone())
            .map_err(node::SetError::data_access_error)?;
        self.mark_changed(&dom, &dynamic_lists::path_key(&item, path));
        Ok(())
    }

    /// [`ServerHandler::write_selected`] of `count` elements from `low` (all with `None`) of
    /// the array `path` selects in `name`: `value` is an array of as many values, written
    /// all or none.
    fn write_elements(
        &mut self,
        conn: ConnId,
        name: &ObjectName,
        path: &[dynamic_lists::Step<'_>],
        (low, count): (u32, Option<u32>),
        value: &Data,
    ) -> Result<(), DataAccessError> {
        self.check_element_write(conn, name)?;
        let (dom, item) = split(name).ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        let (dom, item) = (dom.to_string(), item.to_string());
        let Data::Array(values) = value else {
            return Err(DataAccessError::TYPE_INCONSISTENT);
        };
        let node = self
            .node_mut(&dom, &item)
            .and_then(|n| dynamic_lists::select_mut(n, path))
            .ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        let ModelNode::Array(elements) = node else {
            return Err(DataAccessError::TYPE_INCONSISTENT);
        };
        let range = element_range(elements.len(), low, count)
            .ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        if range.len() != values.len() {
            return Err(DataAccessError::TYPE_INCONSISTENT);
        }
        // Every value checked on a copy before any is stored.
        let mut fresh = elements[range.clone()].to_vec();
        for (e, v) in fresh.iter_mut().zip(values) {
            e.set_value(v.clone())
                .map_err(node::SetError::data_access_error)?;
        }
        let start = range.start;
        elements.splice(range, fresh);
        let base = dynamic_lists::path_key(&item, path);
        for i in start..start + values.len() {
            self.mark_changed(&dom, &format!("{base}$[{i}]"));
        }
        Ok(())
    }

    /// The rules a write of part of `name` follows, as [`ServerHandler::write`]'s: a stored
    /// data attribute of the FCs in [`WRITABLE_FCS`], SE only in an editing session.
    fn check_element_write(&self, conn: ConnId, name: &ObjectName) -> Result<(), DataAccessError> {
        let (dom, item) = split(name).ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        if self.node(name).is_none() {
            // A control block's attribute (spliced into the views, never stored) holds no
            // array; anything else is not there.
            return Err(match self.value_for(Some(conn), name) {
                Some(_) => DataAccessError::OBJECT_ACCESS_UNSUPPORTED,
                None => DataAccessError::OBJECT_NON_EXISTENT,
            });
        }
        let fc = item.split('$').nth(1).unwrap_or("");
        if !WRITABLE_FCS.contains(&fc) {
            return Err(DataAccessError::OBJECT_ACCESS_DENIED);
        }
        if fc == "SE" {
            self.check_se_write(conn, dom)?;
        }
        Ok(())
    }

    /// Note a change at `dom`/`key` (a `$`-joined path, array elements as `[n]`) for every
    /// RCB whose data set has a member that contains it or lies inside it.
    fn mark_changed(&mut self, dom: &str, key: &str) {
        for r in &mut self.rcbs {
            let hit: Vec<usize> = r
                .members
                .iter()
                .enumerate()
                .filter(|(_, m)| dynamic_lists::member_touched(m, dom, key))
                .map(|(k, _)| k)
                .collect();
            if !hit.is_empty() {
                r.mark_changed(&hit);
            }
        }
    }

    /// Change every stimulus leaf (see [`ServerModel::stimuli`]) at `unix_ms`.
    pub fn step_stimuli(&mut self, unix_ms: u64) {
        for s in self.stimuli.clone() {
            if let Some(t) = &s.time {
                let _ = self
                    .node_mut_by(t)
                    .map(|n| n.set_value(Data::UtcTime(crate::model::utc_time(unix_ms))));
            }
            let next = match self.node(&s.value).map(ModelNode::to_data) {
                Some(Data::Boolean(b)) => Data::Boolean(!b),
                Some(Data::Integer(i)) => Data::Integer(i.wrapping_add(1) & 0x7f),
                Some(Data::Unsigned(u)) => Data::Unsigned(u.wrapping_add(1) & 0xff),
                Some(Data::FloatingPoint32(f)) => Data::FloatingPoint32(f + 1.0),
                Some(Data::FloatingPoint64(f)) => Data::FloatingPoint64(f + 1.0),
                _ => continue,
            };
            let _ = self.set_value(&s.value, next);
        }
    }

    fn node_mut_by(&mut self, name: &ObjectName) -> Option<&mut ModelNode> {
        let (d, i) = split(name)?;
        let (d, i) = (d.to_string(), i.to_string());
        self.node_mut(&d, &i)
    }

    /// Whether any RCB is enabled for `conn`.
    pub fn reports_enabled(&self, conn: ConnId) -> bool {
        self.rcbs.iter().any(|r| r.is_enabled_for(conn))
    }

    /// The reports due for `conn` at `unix_ms`, per RCB in model order: a pending GI, a due
    /// integrity report, then a data-change report of the members changed since the last.
    pub fn due_reports(&mut self, conn: ConnId, unix_ms: u64) -> Vec<InformationReport> {
        // Controls' CommandTerminations first (IEC 61850-8-1 20: after the Write response).
        let mut out = self.control_reports(conn, unix_ms);
        for i in 0..self.rcbs.len() {
            if !self.rcbs[i].is_enabled_for(conn) {
                continue;
            }
            let all: Vec<usize> = (0..self.rcbs[i].members.len()).collect();
            let gi = self.rcbs[i].take_gi(conn);
            let intg = self.rcbs[i].integrity_due(unix_ms);
            let changed = self.rcbs[i].take_changed();
            for (reason, which) in [
                (trg_ops::GI, if gi { all.clone() } else { Vec::new() }),
                (
                    trg_ops::INTEGRITY,
                    if intg { all.clone() } else { Vec::new() },
                ),
                (trg_ops::DCHG, changed),
            ] {
                if which.is_empty() {
                    continue;
                }
                let rows: Vec<(usize, Data)> = which
                    .iter()
                    .filter_map(|&k| Some((k, self.member_value(&self.rcbs[i].members[k])?)))
                    .collect();
                if let Some(ir) = self.rcbs[i].build_report(conn, reason, &rows, unix_ms) {
                    out.push(ir);
                }
            }
        }
        out
    }

    #[cfg(test)]
    fn name_list(
        &self,
        class: ObjectClass,
        scope: &ObjectScope,
    ) -> Result<Vec<String>, ServiceError> {
        self.names_for(0, class, scope)
    }

    /// GetNameList as association `conn` sees the model (its own aa-specific data sets).
    fn names_for(
        &self,
        conn: ConnId,
        class: ObjectClass,
        scope: &ObjectScope,
    ) -> Result<Vec<String>, ServiceError> {
        let mut out = match (class, scope) {
            (ObjectClass::DOMAIN, ObjectScope::Vmd) => {
                self.domains.iter().map(|d| d.name.clone()).collect()
            }
            (_, ObjectScope::Domain(d)) => {
                let dom = self.domain(d).ok_or_else(non_existent)?;
                match class {
                    ObjectClass::NAMED_VARIABLE => {
                        let mut v = Vec::new();
                        for (ln, stored) in &dom.lns {
                            v.push(ln.clone());
                            self.ln_view(None, d, ln, stored).names(ln, &mut v);
                        }
                        v
                    }
                    ObjectClass::NAMED_VARIABLE_LIST => {
                        dom.lists.iter().map(|l| l.name.clone()).collect()
                    }
                    ObjectClass::JOURNAL => self.journal_names(d),
                    _ => Vec::new(),
                }
            }
            // IEC 61850-8-1 14.2.1: the association's own data sets.
            (ObjectClass::NAMED_VARIABLE_LIST, ObjectScope::Association) => {
                self.aa_list_names(conn)
            }
            _ => Vec::new(),
        };
        out.sort();
        Ok(out)
    }
}

/// The elements `low..low + count` (`None`: all) of an array of `len`, when all exist.
fn element_range(len: usize, low: u32, count: Option<u32>) -> Option<core::ops::Range<usize>> {
    let low = usize::try_from(low).ok()?;
    let end = match count {
        Some(c) => low.checked_add(usize::try_from(c).ok()?)?,
        None => len,
    };
    (low <= end && end <= len).then_some(low..end)
}

impl ServerHandler for ServerModel {
    fn read(&mut self, conn: ConnId, name: &ObjectName) -> AccessResult {
        if let Some(sbo) = self.control_read(conn, name) {
            return AccessResult::Success(sbo);
        }
        if let Err(e) = self.check_se_read(name) {
            return AccessResult::Failure(e);
        }
        match self.value_for(Some(conn), name) {
            Some(d) => AccessResult::Success(d),
            None => AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT),
        }
    }

    /// An array element, or a component of one, of a data attribute (as data set members
    /// name them); anything else the alternate access selects is object-access-unsupported.
    fn read_selected(&mut self, _conn: ConnId, var: &VariableRef) -> Option<AccessResult> {
        let Some(node) = self.node(&var.name) else {
            return Some(AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT));
        };
        let access = var.access.as_ref()?;
        if let Some((path, low, count)) = dynamic_lists::range_path(access) {
            // Several elements: an array of them (ISO 9506-2 14.1 indexRange, allElements).
            return Some(match dynamic_lists::select(node, &path) {
                Some(ModelNode::Array(e)) => match element_range(e.len(), low, count) {
                    Some(r) => AccessResult::Success(Data::Array(
                        e[r].iter().map(ModelNode::to_data).collect(),
                    )),
                    None => AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT),
                },
                Some(_) => AccessResult::Failure(DataAccessError::TYPE_INCONSISTENT),
                None => AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT),
            });
        }
        let path = dynamic_lists::selection_path(access)?;
        Some(match dynamic_lists::select(node, &path) {
            Some(n) => AccessResult::Success(n.to_data()),
            None => AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT),
        })
    }

    fn read_list(&mut self, conn: ConnId, list: &ObjectName) -> Option<Vec<AccessResult>> {
        self.read_list_for(conn, list)
    }

    /// An array element, or a component of one, of a data attribute of the FCs in
    /// [`WRITABLE_FCS`], under the rules of [`Self::write`] (its type, the SE editing
    /// session; a data change for the data sets that contain it). libiec61850 1.6 and
    /// iec61850bean accept such a write (a schedule's `DSCH.SchdAbsTm.val[0]`, FC SP), and
    /// gander already read it.
    fn write_selected(
        &mut self,
        conn: ConnId,
        var: &VariableRef,
        value: &Data,
    ) -> Option<Result<(), DataAccessError>> {
        let access = var.access.as_ref()?;
        if let Some((path, low, count)) = dynamic_lists::range_path(access) {
            return Some(self.write_elements(conn, &var.name, &path, (low, count), value));
        }
        let path = dynamic_lists::selection_path(access)?;
        Some(self.write_element(conn, &var.name, &path, value))
    }

    /// RCB attributes follow [`RcbInstance::write`]; data attributes of the FCs in
    /// [`WRITABLE_FCS`] take a value of their type (and count as a data change); the rest is
    /// object-access-denied; unknown names are object-non-existent.
    fn write(
        &mut self,
        conn: ConnId,
        name: &ObjectName,
        value: &Data,
    ) -> Result<(), DataAccessError> {
        let (dom, item) = split(name).ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        if let Some(answer) = self.write_block(conn, dom, item, value) {
            return answer;
        }
        if let Some(i) = self.rcbs.iter().position(|r| {
            r.config.domain == dom
                && item
                    .strip_prefix(r.config.item.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('$'))
        }) {
            let rest = &item[self.rcbs[i].config.item.len()..];
            // A per-association block: the writer's own instance (TISSUE 1771).
            let i = self.rcb_for_write(i, conn)?;
            return match rest.strip_prefix('$') {
                // DatSet may name any data set the writer sees, dynamic ones included.
                Some("DatSet") => self.write_dat_set(conn, i, value),
                Some(element) => self.rcbs[i].write(conn, element, value),
                None => Err(DataAccessError::OBJECT_ACCESS_DENIED),
            };
        }
        if let Some(r) = self.control_write(conn, dom, item, value) {
            return r;
        }
        if self.node(name).is_none() {
            return Err(DataAccessError::OBJECT_NON_EXISTENT);
        }
        let fc = item.split('$').nth(1).unwrap_or("");
        if !WRITABLE_FCS.contains(&fc) {
            return Err(DataAccessError::OBJECT_ACCESS_DENIED);
        }
        if fc == "SE" {
            self.check_se_write(conn, dom)?;
        }
        self.set_value(name, value.clone())
    }

    fn connection_closed(&mut self, conn: ConnId) {
        self.drop_aa_lists(conn);
        self.rcbs.iter_mut().for_each(|r| r.connection_closed(conn));
        self.drop_rcb_copies(conn);
        self.blocks_closed(conn);
        self.controls.connection_closed(conn);
    }

    fn take_reports_before_response(&mut self, conn: ConnId) -> Vec<InformationReport> {
        self.control_reports_before(conn)
    }

    fn identify(&mut self, _conn: ConnId) -> Option<IdentifyResponse> {
        Some(self.identity.clone())
    }

    fn name_list(
        &mut self,
        conn: ConnId,
        class: ObjectClass,
        scope: &ObjectScope,
    ) -> Option<Result<Vec<String>, ServiceError>> {
        Some(self.names_for(conn, class, scope))
    }

    fn variable_access_attributes(
        &mut self,
        _conn: ConnId,
        name: &ObjectName,
    ) -> Option<Result<GetVariableAccessAttributesResponse, ServiceError>> {
        Some(
            split(name)
                .and_then(|(d, i)| self.type_of(d, i))
                .map(|type_spec| GetVariableAccessAttributesResponse {
                    deletable: false,
                    type_spec,
                })
                .ok_or_else(non_existent),
        )
    }

    fn named_variable_list_attributes(
        &mut self,
        conn: ConnId,
        name: &ObjectName,
    ) -> Option<Result<GetNamedVariableListAttributesResponse, ServiceError>> {
        Some(self.list_attributes(conn, name))
    }

    fn define_named_variable_list(
        &mut self,
        conn: ConnId,
        request: &DefineNamedVariableListRequest,
        max_pdu: usize,
    ) -> Option<Result<(), ServiceError>> {
        Some(self.define_list(conn, request, max_pdu))
    }

    fn delete_named_variable_list(
        &mut self,
        conn: ConnId,
        request: &DeleteNamedVariableListRequest,
    ) -> Option<Result<DeleteNamedVariableListResponse, ServiceError>> {
        Some(self.delete_lists(conn, request))
    }
}
