//! Data sets of a served model as MMS named variable lists (IEC 61850-8-1 clause 14, IEC
//! 61850-7-2 clause 13): the ones configured in SCL and the dynamic ones clients create with
//! DefineNamedVariableList and remove with DeleteNamedVariableList.
//!
//! - **Persistent** (domain-specific name `LN$name` in a logical device): outlive the
//!   association that made them, visible to every client.
//! - **Association-specific** (aa-specific name, `@name` in an IEC 61850 reference): seen only
//!   by the association that made them and gone when it ends.
//!
//! The rules (IEC 61850-7-2 13.2.5/13.2.6 CreateDataSet/DeleteDataSet as 8-1 maps them):
//! every member must exist in the model with its functional constraint (an FCD `LN$FC$DO` or
//! an FCDA below it, optionally an array element by alternate access); a name may not be
//! taken twice; data sets from SCL are not deletable (mmsDeletable false); a data set that a
//! report control block's DatSet references cannot be deleted; the list, as its
//! GetNamedVariableListAttributes answer and as the Read of all its members, must fit in the
//! negotiated PDU size (ISO 9506-2 localDetailCalled), which is what bounds the member count.
//!
//! The MMS error classes and codes (ISO 9506-2 7.4, as libiec61850 1.6 answers them):
//! name taken: definition/object-exists; member missing: definition/object-undefined; an
//! alternate access other than an array index with an optional component path:
//! definition/invalid-address; no members: definition/other; too big for the PDU or too many
//! lists: resource/capability-unavailable; unknown domain or LN: access/object-non-existent;
//! deletion while referenced: service/object-constraint-conflict.

use gander_wire::data::Data;
use gander_wire::Codec;

use super::{non_existent, overlaps, split, ModelNode, ServerModel};
use crate::association::ConnId;
use crate::pdu::{ConfirmedResponse, MmsPdu};
use crate::service::{
    AccessResult, AccessSelection, AlternateAccess, DefineNamedVariableListRequest,
    DeleteNamedVariableListRequest, DeleteNamedVariableListResponse, DeleteScope,
    GetNamedVariableListAttributesResponse, ObjectName, ReadResponse, Selection, ServiceError,
    VariableRef,
};

/// Most association-specific data sets one association may hold at a time.
pub const MAX_AA_LISTS: usize = 64;
/// Most dynamic persistent data sets one logical device may hold.
pub const MAX_DYNAMIC_LISTS_PER_DOMAIN: usize = 64;

/// ISO 9506-2 ServiceError classes and codes used here.
mod code {
    /// resource (3) / capability-unavailable (4).
    pub(super) const RESOURCE: (u8, i64) = (3, 4);
    /// definition (2) / other (0).
    pub(super) const DEF_OTHER: (u8, i64) = (2, 0);
    /// definition (2) / object-undefined (1).
    pub(super) const DEF_UNDEFINED: (u8, i64) = (2, 1);
    /// definition (2) / invalid-address (2).
    pub(super) const DEF_INVALID_ADDRESS: (u8, i64) = (2, 2);
    /// definition (2) / type-unsupported (3): a vmd-specific list, which IEC 61850 has not.
    pub(super) const DEF_TYPE_UNSUPPORTED: (u8, i64) = (2, 3);
    /// definition (2) / object-exists (5).
    pub(super) const DEF_EXISTS: (u8, i64) = (2, 5);
    /// service (4) / object-constraint-conflict (5): deleting a data set an RCB references.
    pub(super) const CONSTRAINT_CONFLICT: (u8, i64) = (4, 5);
}

fn err((class, c): (u8, i64)) -> ServiceError {
    ServiceError::new(class, c)
}

/// One named variable list (data set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedList {
    /// Its item (`LN$name`) or aa-specific name (without `@`).
    pub name: String,
    /// The members, in order.
    pub members: Vec<VariableRef>,
    /// mmsDeletable: true for lists clients defined, false for those configured in SCL.
    pub deletable: bool,
}

/// The IEC 61850 reference of a data set as DatSet and reports carry it: `LD/LN$name` for
/// a persistent one, `@name` for an association-specific one (IEC 61850-8-1 clause 14.2.1).
pub fn data_set_reference(name: &ObjectName) -> String {
    name.to_string()
}

/// A member's reference in reports and logs: the variable's `domain/item`, then an array
/// index as `(n)` and components as `$c` (the SCL FCDA form `phsAHar(3).cVal` in MMS spelling).
pub fn member_reference(m: &VariableRef) -> String {
    let mut s = m.name.to_string();
    if let Some(a) = &m.access {
        if let Some(path) = selection_path(a) {
            for p in path {
                match p {
                    Step::Component(c) => {
                        s.push('$');
                        s.push_str(c);
                    }
                    Step::Index(i) => s.push_str(&format!("({i})")),
                }
            }
        }
    }
    s
}

/// One step of a member's alternate access: into a structure component or an array element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step<'a> {
    /// A structure component.
    Component(&'a str),
    /// An array element.
    Index(u32),
}

/// The chain of single selections an alternate access makes (component names and array
/// indices), or `None` for the forms a data set member cannot take (ranges, all elements,
/// named alternatives, several selections at one level).
pub(crate) fn selection_path(a: &AlternateAccess) -> Option<Vec<Step<'_>>> {
    match chain(a)? {
        (steps, None) => Some(steps),
        (_, Some(_)) => None,
    }
}

/// A chain of single selections that ends in several elements of an array: `lowIndex` and
/// `numberOfElements` (`None`: all of them, ISO 9506-2 14.1 allElements). What
/// libiec61850's `MmsConnection_writeArrayElements` and `readArrayElements` send.
pub(crate) fn range_path(a: &AlternateAccess) -> Option<(Vec<Step<'_>>, u32, Option<u32>)> {
    let (steps, (low, count)) = match chain(a)? {
        (steps, Some(range)) => (steps, range),
        (_, None) => return None,
    };
    Some((steps, low, count))
}

/// Elements `low` and on of an array (`Some(n)`: n of them, `None`: all).
type Range = (u32, Option<u32>);

/// The single selections of `a`, one per level, and the range its last one selects, if it
/// selects one; `None` for several selections at one level, named alternatives and a range
/// anywhere but at the end.
fn chain(a: &AlternateAccess) -> Option<(Vec<Step<'_>>, Option<Range>)> {
    let mut out = Vec::new();
    let mut cur = a;
    loop {
        let [only] = cur.0.as_slice() else {
            return None;
        };
        let (sel, next) = match only {
            Selection::Select(s) => (s, None),
            Selection::SelectAlternate(s, inner) => (s, Some(inner)),
            Selection::Named(..) => return None,
        };
        let range = match sel {
            AccessSelection::IndexRange { low, count } => Some((*low, Some(*count))),
            AccessSelection::AllElements => Some((0, None)),
            _ => None,
        };
        match (range, next) {
            (Some(r), None) => return Some((out, Some(r))),
            (Some(_), Some(_)) => return None,
            (None, _) => {}
        }
        out.push(match sel {
            AccessSelection::Component(c) if !c.is_empty() && !c.contains('$') => {
                Step::Component(c)
            }
            AccessSelection::Index(i) => Step::Index(*i),
            _ => return None,
        });
        match next {
            Some(n) => cur = n,
            None => return Some((out, None)),
        }
    }
}

/// The node `steps` select below `node`.
pub(crate) fn select<'a>(node: &'a ModelNode, steps: &[Step<'_>]) -> Option<&'a ModelNode> {
    let mut n = node;
    for s in steps {
        n = match (s, n) {
            (Step::Component(c), ModelNode::Struct(children)) => {
                &children.iter().find(|(name, _)| name == c)?.1
            }
            (Step::Index(i), ModelNode::Array(e)) => e.get(usize::try_from(*i).ok()?)?,
            _ => return None,
        };
    }
    Some(n)
}

/// [`select`] for a change: the node `steps` select below `node`.
pub(crate) fn select_mut<'a>(
    node: &'a mut ModelNode,
    steps: &[Step<'_>],
) -> Option<&'a mut ModelNode> {
    let mut n = node;
    for s in steps {
        n = match (s, n) {
            (Step::Component(c), ModelNode::Struct(children)) => {
                &mut children.iter_mut().find(|(name, _)| name == c)?.1
            }
            (Step::Index(i), ModelNode::Array(e)) => e.get_mut(usize::try_from(*i).ok()?)?,
            _ => return None,
        };
    }
    Some(n)
}

/// The key under which a change of a member is matched: `item` and its selection steps
/// joined with `$` (array elements as `[n]`), so that [`overlaps`] tells whether a changed
/// leaf lies inside the member. `None` for a member that is not domain-specific.
pub(crate) fn member_key(m: &VariableRef) -> Option<(&str, String)> {
    let (dom, item) = split(&m.name)?;
    let steps = match &m.access {
        Some(a) => selection_path(a)?,
        None => Vec::new(),
    };
    Some((dom, path_key(item, &steps)))
}

/// `item` and `steps` joined as [`member_key`] spells a path.
pub(crate) fn path_key(item: &str, steps: &[Step<'_>]) -> String {
    let mut key = item.to_string();
    for s in steps {
        match s {
            Step::Component(c) => {
                key.push('$');
                key.push_str(c);
            }
            Step::Index(i) => key.push_str(&format!("$[{i}]")),
        }
    }
    key
}

/// Whether a change at `domain`/`key` (a path as [`member_key`] spells it) touches `m`.
pub(crate) fn member_touched(m: &VariableRef, domain: &str, key: &str) -> bool {
    member_key(m).is_some_and(|(d, k)| d == domain && overlaps(&k, key))
}

impl ServerModel {
    /// The node a data set member names (stored data attributes only, never an RCB), or
    /// `None` when it does not exist or its alternate access is not an element/component chain.
    pub(crate) fn member_node(&self, m: &VariableRef) -> Option<&ModelNode> {
        let node = self.node(&m.name)?;
        match &m.access {
            None => Some(node),
            Some(a) => select(node, &selection_path(a)?),
        }
    }

    /// What a Read of member `m` returns.
    pub fn member_value(&self, m: &VariableRef) -> Option<Data> {
        self.member_node(m).map(ModelNode::to_data)
    }

    /// Add a configured data set whose members may carry an alternate access (SCL FCDA with
    /// an array element, `phsAHar(7)` or `phsAHar(3).cVal`); every member must exist.
    pub fn add_data_set_members(
        &mut self,
        domain: &str,
        item: &str,
        members: Vec<VariableRef>,
    ) -> Result<(), super::ModelError> {
        for m in &members {
            if self.member_node(m).is_none() {
                return Err(super::ModelError::UnknownMember {
                    data_set: format!("{domain}/{item}"),
                    member: member_reference(m),
                });
            }
        }
        let d = self.domain_mut(domain)?;
        if d.lists.iter().any(|l| l.name == item) {
            return Err(super::ModelError::Duplicate {
                domain: domain.into(),
                what: "data set",
                name: item.into(),
            });
        }
        d.lists.push(NamedList {
            name: item.into(),
            members,
            deletable: false,
        });
        Ok(())
    }

    /// The list `name` as association `conn` sees it: its own aa-specific lists and every
    /// domain's lists.
    pub(crate) fn list_for(&self, conn: ConnId, name: &ObjectName) -> Option<&NamedList> {
        match name {
            ObjectName::AaSpecific(n) => self
                .aa_lists
                .iter()
                .find(|(c, l)| *c == conn && l.name == *n)
                .map(|(_, l)| l),
            ObjectName::DomainSpecific { domain, item } => {
                self.domain(domain)?.lists.iter().find(|l| l.name == *item)
            }
            ObjectName::VmdSpecific(_) => None,
        }
    }

    /// The aa-specific list names of `conn`, sorted (GetNameList, aa-specific scope).
    pub(crate) fn aa_list_names(&self, conn: ConnId) -> Vec<String> {
        let mut v: Vec<String> = self
            .aa_lists
            .iter()
            .filter(|(c, _)| *c == conn)
            .map(|(_, l)| l.name.clone())
            .collect();
        v.sort();
        v
    }

    /// Read of a whole list (`None`: no such list for `conn`).
    pub(crate) fn read_list_for(
        &self,
        conn: ConnId,
        name: &ObjectName,
    ) -> Option<Vec<AccessResult>> {
        let l = self.list_for(conn, name)?;
        Some(
            l.members
                .iter()
                .map(|m| match self.member_value(m) {
                    Some(d) => AccessResult::Success(d),
                    None => {
                        AccessResult::Failure(crate::service::DataAccessError::OBJECT_NON_EXISTENT)
                    }
                })
                .collect(),
        )
    }

    /// GetNamedVariableListAttributes of `name` for `conn`.
    pub(crate) fn list_attributes(
        &self,
        conn: ConnId,
        name: &ObjectName,
    ) -> Result<GetNamedVariableListAttributesResponse, ServiceError> {
        let l = self.list_for(conn, name).ok_or_else(non_existent)?;
        Ok(GetNamedVariableListAttributesResponse {
            deletable: l.deletable,
            members: l.members.clone(),
            access_control_list: None,
        })
    }

    /// Whether a report control block's DatSet currently names `name` (as `conn` sees it:
    /// an aa-specific list can only be referenced by an RCB its own association set), or a
    /// GoCB's or SVCB's does.
    fn referenced(&self, conn: ConnId, name: &ObjectName) -> bool {
        let r = data_set_reference(name);
        self.rcbs.iter().any(|rcb| {
            rcb.values().dat_set == r
                && (!matches!(name, ObjectName::AaSpecific(_)) || rcb.dat_set_owner() == Some(conn))
        }) || matches!(name, ObjectName::DomainSpecific { domain, item }
            if self.block_references(domain, item))
    }

    /// DefineNamedVariableList for association `conn` whose negotiated PDU size is `max_pdu`
    /// (rules and error codes in the module documentation).
    pub fn define_list(
        &mut self,
        conn: ConnId,
        req: &DefineNamedVariableListRequest,
        max_pdu: usize,
    ) -> Result<(), ServiceError> {
        // Where it goes, and whether the name is free there.
        match &req.name {
            ObjectName::VmdSpecific(_) => return Err(err(code::DEF_TYPE_UNSUPPORTED)),
            ObjectName::AaSpecific(n) => {
                if n.is_empty() {
                    return Err(err(code::DEF_OTHER));
                }
                if self.list_for(conn, &req.name).is_some() {
                    return Err(err(code::DEF_EXISTS));
                }
                if self.aa_lists.iter().filter(|(c, _)| *c == conn).count() >= MAX_AA_LISTS {
                    return Err(err(code::RESOURCE));
                }
            }
            ObjectName::DomainSpecific { domain, item } => {
                let d = self.domain(domain).ok_or_else(non_existent)?;
                // IEC 61850-8-1 14.2.1: a persistent data set lives in a logical node, `LN$name`.
                let Some((ln, ds)) = item.split_once('$') else {
                    return Err(err(code::DEF_OTHER));
                };
                if ds.is_empty() || ds.contains('$') {
                    return Err(err(code::DEF_OTHER));
                }
                if !d.lns.iter().any(|(n, _)| n == ln) {
                    return Err(non_existent());
                }
                if d.lists.iter().any(|l| l.name == *item) {
                    return Err(err(code::DEF_EXISTS));
                }
                if d.lists.iter().filter(|l| l.deletable).count() >= MAX_DYNAMIC_LISTS_PER_DOMAIN {
                    return Err(err(code::RESOURCE));
                }
            }
        }
        if req.members.is_empty() {
            return Err(err(code::DEF_OTHER));
        }
        let mut values = Vec::with_capacity(req.members.len());
        for m in &req.members {
            if let Some(a) = &m.access {
                if selection_path(a).is_none() {
                    return Err(err(code::DEF_INVALID_ADDRESS));
                }
            }
            // FCD or FCDA: at least LN$FC$DO, in a domain of the model.
            let fcd = split(&m.name).is_some_and(|(_, i)| i.split('$').count() >= 3);
            match self.member_value(m) {
                Some(v) if fcd => values.push(AccessResult::Success(v)),
                _ => return Err(err(code::DEF_UNDEFINED)),
            }
        }
        // Both answers about the list must fit in one PDU of the negotiated size.
        let attrs = MmsPdu::ConfirmedResponse {
            invoke_id: u32::MAX,
            response: ConfirmedResponse::GetNamedVariableListAttributes(
                GetNamedVariableListAttributesResponse {
                    deletable: true,
                    members: req.members.clone(),
                    access_control_list: None,
                },
            ),
        };
        let read = MmsPdu::ConfirmedResponse {
            invoke_id: u32::MAX,
            response: ConfirmedResponse::Read(ReadResponse {
                spec: None,
                results: values,
            }),
        };
        if attrs.buffer_len() > max_pdu || read.buffer_len() > max_pdu {
            return Err(err(code::RESOURCE));
        }
        let list = NamedList {
            name: String::new(),
            members: req.members.clone(),
            deletable: true,
        };
        match &req.name {
            ObjectName::AaSpecific(n) => self.aa_lists.push((
                conn,
                NamedList {
                    name: n.clone(),
                    ..list
                },
            )),
            ObjectName::DomainSpecific { domain, item } => self
                .domain_mut(domain)
                .map_err(|_| non_existent())?
                .lists
                .push(NamedList {
                    name: item.clone(),
                    ..list
                }),
            ObjectName::VmdSpecific(_) => return Err(err(code::DEF_TYPE_UNSUPPORTED)),
        }
        Ok(())
    }

    /// Delete one list if it may be: `Ok(true)` deleted, `Ok(false)` matched but not
    /// deletable (configured), `Err` referenced by an RCB.
    fn delete_one(&mut self, conn: ConnId, name: &ObjectName) -> Option<Result<bool, ()>> {
        let l = self.list_for(conn, name)?;
        if !l.deletable {
            return Some(Ok(false));
        }
        if self.referenced(conn, name) {
            return Some(Err(()));
        }
        match name {
            ObjectName::AaSpecific(n) => {
                self.aa_lists.retain(|(c, l)| !(*c == conn && l.name == *n))
            }
            ObjectName::DomainSpecific { domain, item } => {
                if let Ok(d) = self.domain_mut(domain) {
                    d.lists.retain(|l| l.name != *item);
                }
            }
            ObjectName::VmdSpecific(_) => {}
        }
        Some(Ok(true))
    }

    /// DeleteNamedVariableList for association `conn` (ISO 9506-2 14.14): the lists the scope
    /// selects are matched; the deletable, unreferenced ones are deleted. When one was
    /// referenced by an RCB the answer is service/object-constraint-conflict (the others are
    /// deleted all the same, as libiec61850 does).
    pub fn delete_lists(
        &mut self,
        conn: ConnId,
        req: &DeleteNamedVariableListRequest,
    ) -> Result<DeleteNamedVariableListResponse, ServiceError> {
        let targets: Vec<ObjectName> = match req.scope {
            DeleteScope::Specific => req.names.clone().unwrap_or_default(),
            DeleteScope::AaSpecific => self
                .aa_list_names(conn)
                .into_iter()
                .map(ObjectName::AaSpecific)
                .collect(),
            DeleteScope::Domain => {
                let dom = req.domain.as_deref().ok_or_else(non_existent)?;
                let d = self.domain(dom).ok_or_else(non_existent)?;
                d.lists
                    .iter()
                    .map(|l| ObjectName::domain(dom, l.name.clone()))
                    .collect()
            }
            // IEC 61850 defines no vmd-specific data sets, so none match.
            DeleteScope::Vmd => Vec::new(),
        };
        let (mut matched, mut deleted, mut conflict) = (0u32, 0u32, false);
        for t in &targets {
            match self.delete_one(conn, t) {
                None => {}
                Some(r) => {
                    matched = matched.saturating_add(1);
                    match r {
                        Ok(true) => deleted = deleted.saturating_add(1),
                        Ok(false) => {}
                        Err(()) => conflict = true,
                    }
                }
            }
        }
        if conflict {
            return Err(err(code::CONSTRAINT_CONFLICT));
        }
        Ok(DeleteNamedVariableListResponse { matched, deleted })
    }

    /// The association ended: its aa-specific lists go, and RCBs whose DatSet named one of
    /// them fall back to their configured data set.
    pub(crate) fn drop_aa_lists(&mut self, conn: ConnId) {
        let gone: Vec<String> = self.aa_list_names(conn);
        self.aa_lists.retain(|(c, _)| *c != conn);
        for g in gone {
            let r = data_set_reference(&ObjectName::AaSpecific(g));
            for i in 0..self.rcbs.len() {
                if self.rcbs[i].values().dat_set == r && self.rcbs[i].dat_set_owner() == Some(conn)
                {
                    let members = self.configured_members(i);
                    self.rcbs[i].restore_data_set(members);
                }
            }
        }
    }

    /// The members of RCB `i`'s configured data set.
    pub(crate) fn configured_members(&self, i: usize) -> Vec<VariableRef> {
        let c = &self.rcbs[i].config;
        if c.data_set.is_empty() {
            return Vec::new();
        }
        self.list_for(0, &ObjectName::domain(c.domain.clone(), c.data_set.clone()))
            .map(|l| l.members.clone())
            .unwrap_or_default()
    }

    /// A write of an RCB's DatSet (IEC 61850-7-2 17.2.2.3 / 8-1 17.2.1): the new value names a
    /// data set `conn` can see (`LD/LN$name` or `@name`; empty: none). An aa-specific data
    /// set cannot feed a buffered RCB, whose entries must survive the association (7-2
    /// 13.2.1: non-persistent data sets are for unbuffered reporting).
    pub(crate) fn write_dat_set(
        &mut self,
        conn: ConnId,
        rcb: usize,
        value: &Data,
    ) -> Result<(), crate::service::DataAccessError> {
        use crate::service::DataAccessError as E;
        let Data::VisibleString(s) = value else {
            return Err(E::TYPE_INCONSISTENT);
        };
        if self.rcbs[rcb].locked_for(conn) {
            return Err(E::TEMPORARILY_UNAVAILABLE);
        }
        let members = if s.is_empty() {
            Vec::new()
        } else {
            let name = parse_data_set_reference(s).ok_or(E::OBJECT_VALUE_INVALID)?;
            if matches!(name, ObjectName::AaSpecific(_)) && self.rcbs[rcb].config.buffered {
                return Err(E::OBJECT_VALUE_INVALID);
            }
            self.list_for(conn, &name)
                .ok_or(E::OBJECT_VALUE_INVALID)?
                .members
                .clone()
        };
        self.rcbs[rcb].write_data_set(conn, s, members)
    }
}

/// `LD/LN$name` → domain-specific, `@name` → aa-specific.
pub fn parse_data_set_reference(s: &str) -> Option<ObjectName> {
    if let Some(n) = s.strip_prefix('@') {
        return (!n.is_empty() && !n.contains('/')).then(|| ObjectName::AaSpecific(n.into()));
    }
    let (d, i) = s.split_once('/')?;
    (!d.is_empty() && !i.is_empty()).then(|| ObjectName::domain(d, i))
}

#[cfg(test)]
mod tests;
