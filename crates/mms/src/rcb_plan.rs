//! Client-side planning for report control blocks of any server (IEC 61850-7-2 clause 17,
//! mapped by IEC 61850-8-1 clause 17.2): given an RCB's attributes as read from the device,
//! the writes that enable it with the user's settings, and the writes that put back every
//! attribute exactly as found. Sans-I/O: the caller sends each [`Step`] as one Write, in order,
//! and on a failure calls [`RcbPlan::rollback`] with the number of steps that succeeded.
//!
//! Layouts (component order of the MMS structure `LN$RP$name` / `LN$BR$name`), as IEC 61850-8-1
//! lists them and libiec61850 1.6.1 serves them (captured, `docs/mms-services.md`):
//!
//! - URCB: RptID, RptEna, Resv, DatSet, ConfRev, OptFlds, BufTm, SqNum, TrgOps, IntgPd, GI,
//!   \[Owner\];
//! - BRCB: RptID, RptEna, DatSet, ConfRev, OptFlds, BufTm, SqNum, TrgOps, IntgPd, GI, PurgeBuf,
//!   EntryID, TimeOfEntry, \[ResvTms\], \[Owner\].
//!
//! When the type description is available ([`RcbSnapshot::from_type_and_value`]) the names come
//! from it instead, so a server with another layout is still read correctly.
//!
//! The enable order: reserve (URCB `Resv`, BRCB `ResvTms`), the configuration attributes
//! that differ from the wish (RptID, DatSet, OptFlds, BufTm, TrgOps, IntgPd), the buffer start
//! of a BRCB (EntryID to resume after a known entry, or PurgeBuf), `RptEna`, then `GI`. The
//! restore is the inverse of every applied step, last first: `RptEna=false`, the configuration
//! back to its old values, the reservation released. `GI` is a trigger, `PurgeBuf` discards
//! entries, and EntryID is the buffer position: none can be undone, and the plan says so
//! ([`RcbPlan::irreversible`]). Status values the server itself advances while reporting
//! (SqNum, and for a BRCB EntryID and TimeOfEntry) are not configuration and are not written
//! back.

use gander_wire::data::Data;

use crate::bit_string::BitString;
use crate::service::{ObjectName, TypeSpec, VariableAccessSpecification, WriteRequest};

/// Buffered or unbuffered (the MMS functional constraint `BR` or `RP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RcbKind {
    /// URCB (`RP`).
    Unbuffered,
    /// BRCB (`BR`).
    Buffered,
}

/// Where a control block lives: domain (LD) and item `LN$RP|BR$name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RcbRef {
    /// The logical device (MMS domain).
    pub domain: String,
    /// The logical node, e.g. `LLN0`.
    pub ln: String,
    /// Buffered or not.
    pub kind: RcbKind,
    /// The instance name, e.g. `brcbA01`.
    pub name: String,
}

impl RcbRef {
    /// From an MMS item of exactly three parts `LN$RP$name` or `LN$BR$name`.
    pub fn parse(domain: &str, item: &str) -> Option<RcbRef> {
        let mut it = item.split('$');
        let (ln, fc, name) = (it.next()?, it.next()?, it.next()?);
        if it.next().is_some() || ln.is_empty() || name.is_empty() {
            return None;
        }
        let kind = match fc {
            "RP" => RcbKind::Unbuffered,
            "BR" => RcbKind::Buffered,
            _ => return None,
        };
        Some(RcbRef {
            domain: domain.to_string(),
            ln: ln.to_string(),
            kind,
            name: name.to_string(),
        })
    }

    /// The MMS item, `LN$BR$name`.
    pub fn item(&self) -> String {
        let fc = match self.kind {
            RcbKind::Unbuffered => "RP",
            RcbKind::Buffered => "BR",
        };
        format!("{}${fc}${}", self.ln, self.name)
    }

    /// The RCB as an MMS name (read it whole with this).
    pub fn object_name(&self) -> ObjectName {
        ObjectName::domain(self.domain.clone(), self.item())
    }

    /// One attribute as an MMS name.
    pub fn attribute(&self, attr: &str) -> ObjectName {
        ObjectName::domain(self.domain.clone(), format!("{}${attr}", self.item()))
    }

    /// The IEC 61850 reference, `LD/LN.BR.name`.
    pub fn reference(&self) -> String {
        format!("{}/{}", self.domain, self.item().replace('$', "."))
    }

    /// An indexed instance's base name and index: IEC 61850-6 instantiates a control block
    /// configured for several clients as `name01`, `name02`, ... (`brcbA01` -> `("brcbA",
    /// Some(1))`); a name without a two-digit suffix has no index.
    pub fn base_and_index(&self) -> (&str, Option<u8>) {
        let n = &self.name;
        if n.len() > 2 && n.is_char_boundary(n.len() - 2) {
            let (base, idx) = n.split_at(n.len() - 2);
            if idx.bytes().all(|b| b.is_ascii_digit()) {
                return (base, idx.parse().ok());
            }
        }
        (n, None)
    }
}

/// Every control block among a domain's named variables (GetNameList class 0).
pub fn find_rcbs(domain: &str, names: &[String]) -> Vec<RcbRef> {
    names
        .iter()
        .filter_map(|n| RcbRef::parse(domain, n))
        .collect()
}

/// Why a plan could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RcbPlanError {
    /// The read value is not a structure with the components of a known layout.
    #[error("{rcb}: unknown control block layout: {detail}")]
    Layout {
        /// The RCB reference.
        rcb: String,
        /// What did not match.
        detail: &'static str,
    },
    /// An attribute the plan needs is missing.
    #[error("{rcb}: no attribute {attr}")]
    Missing {
        /// The RCB reference.
        rcb: String,
        /// The attribute.
        attr: &'static str,
    },
    /// An attribute has the wrong MMS type.
    #[error("{rcb}: attribute {attr} has the wrong MMS type")]
    WrongType {
        /// The RCB reference.
        rcb: String,
        /// The attribute.
        attr: &'static str,
    },
    /// Enabled or reserved by someone else: the client must not take it.
    #[error("{rcb}: in use ({why})")]
    InUse {
        /// The RCB reference.
        rcb: String,
        /// RptEna, Resv or ResvTms.
        why: &'static str,
    },
    /// A buffered-only setting (EntryID, PurgeBuf, ResvTms) on an unbuffered RCB.
    #[error("{rcb}: {what} applies to buffered control blocks only")]
    NotBuffered {
        /// The RCB reference.
        rcb: String,
        /// The setting.
        what: &'static str,
    },
}

/// The attribute values of one control block, by name, in the device's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RcbSnapshot {
    /// Which RCB.
    pub rcb: RcbRef,
    /// `(name, value)` per component.
    pub attrs: Vec<(String, Data)>,
}

/// The fixed part of a BRCB's layout. Not `server_model::BRCB_ELEMENTS`: that one ends with
/// the optional ResvTms (told apart by type here) and spells `TimeofEntry` as libiec61850 serves
/// it, where snapshots name the component as IEC 61850-7-2 does.
const BRCB: [&str; 13] = [
    "RptID",
    "RptEna",
    "DatSet",
    "ConfRev",
    "OptFlds",
    "BufTm",
    "SqNum",
    "TrgOps",
    "IntgPd",
    "GI",
    "PurgeBuf",
    "EntryID",
    "TimeOfEntry",
];

impl RcbSnapshot {
    /// From a read of the whole RCB, naming components by the standard layout of its kind;
    /// the optional trailing ResvTms (INTEGER) and Owner (OCTET STRING) are told apart by type.
    pub fn from_value(rcb: RcbRef, value: &Data) -> Result<Self, RcbPlanError> {
        let layout_err = |detail| RcbPlanError::Layout {
            rcb: rcb.reference(),
            detail,
        };
        let Data::Structure(v) = value else {
            return Err(layout_err("not a structure"));
        };
        let base: &[&str] = match rcb.kind {
            RcbKind::Unbuffered => &crate::rcb::URCB_ELEMENTS,
            RcbKind::Buffered => &BRCB,
        };
        if v.len() < base.len() || v.len() > base.len() + 2 {
            return Err(layout_err("unexpected number of components"));
        }
        let mut names: Vec<&str> = base.to_vec();
        for d in &v[base.len()..] {
            names.push(match (rcb.kind, d) {
                (RcbKind::Buffered, Data::Integer(_)) if !names.contains(&"ResvTms") => "ResvTms",
                (_, Data::OctetString(_)) if !names.contains(&"Owner") => "Owner",
                _ => return Err(layout_err("unknown trailing component")),
            });
        }
        Ok(RcbSnapshot {
            attrs: names
                .iter()
                .zip(v)
                .map(|(n, d)| (n.to_string(), d.clone()))
                .collect(),
            rcb,
        })
    }

    /// From the RCB's type description (GetVariableAccessAttributes) and a read of it: the
    /// component names come from the device.
    pub fn from_type_and_value(
        rcb: RcbRef,
        ty: &TypeSpec,
        value: &Data,
    ) -> Result<Self, RcbPlanError> {
        let layout_err = |detail| RcbPlanError::Layout {
            rcb: rcb.reference(),
            detail,
        };
        let (TypeSpec::Structure { components, .. }, Data::Structure(v)) = (ty, value) else {
            return Err(layout_err("type or value is not a structure"));
        };
        if components.len() != v.len() {
            return Err(layout_err("type and value differ in length"));
        }
        let mut attrs = Vec::with_capacity(v.len());
        for (c, d) in components.iter().zip(v) {
            let Some(n) = &c.name else {
                return Err(layout_err("unnamed component"));
            };
            // libiec61850 spells it TimeofEntry; the standard TimeOfEntry.
            let n = if n == "TimeofEntry" { "TimeOfEntry" } else { n };
            attrs.push((n.to_string(), d.clone()));
        }
        Ok(RcbSnapshot { rcb, attrs })
    }

    /// One attribute's value.
    pub fn get(&self, name: &str) -> Option<&Data> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }

    fn bool_attr(&self, name: &'static str) -> Result<Option<bool>, RcbPlanError> {
        match self.get(name) {
            None => Ok(None),
            Some(Data::Boolean(b)) => Ok(Some(*b)),
            Some(_) => Err(self.wrong(name)),
        }
    }

    fn wrong(&self, attr: &'static str) -> RcbPlanError {
        RcbPlanError::WrongType {
            rcb: self.rcb.reference(),
            attr,
        }
    }

    /// `Ok(())` when no client holds it: RptEna false, Resv false (URCB), ResvTms 0 or absent
    /// (BRCB; a positive value is a client's reservation, -1 one made by configuration).
    pub fn check_free(&self) -> Result<(), RcbPlanError> {
        let in_use = |why| RcbPlanError::InUse {
            rcb: self.rcb.reference(),
            why,
        };
        if self.bool_attr("RptEna")?.ok_or(RcbPlanError::Missing {
            rcb: self.rcb.reference(),
            attr: "RptEna",
        })? {
            return Err(in_use("RptEna"));
        }
        if self.bool_attr("Resv")? == Some(true) {
            return Err(in_use("Resv"));
        }
        match self.get("ResvTms") {
            None | Some(Data::Integer(0)) => Ok(()),
            Some(Data::Integer(_)) => Err(in_use("ResvTms")),
            Some(_) => Err(self.wrong("ResvTms")),
        }
    }
}

/// The first free instance among indexed control blocks of one base name (`brcbA01`,
/// `brcbA02`, ...), by index: a client configured for "brcbA" takes the first instance no
/// other client holds (IEC 61850-6 instantiates one per client). Blocks of other base names
/// are ignored.
pub fn first_free<'a>(snaps: &'a [RcbSnapshot], base: &str) -> Option<&'a RcbSnapshot> {
    let mut candidates: Vec<(u8, &RcbSnapshot)> = snaps
        .iter()
        .filter_map(|s| match s.rcb.base_and_index() {
            (b, Some(i)) if b == base => Some((i, s)),
            (b, None) if b == base => Some((0, s)),
            _ => None,
        })
        .collect();
    candidates.sort_by_key(|(i, _)| *i);
    candidates
        .into_iter()
        .map(|(_, s)| s)
        .find(|s| s.check_free().is_ok())
}

/// Where a buffered report stream starts (IEC 61850-7-2 17.2.2: EntryID and PurgeBuf).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BufferStart {
    /// Leave the buffer as it is: the server sends what it holds.
    #[default]
    Keep,
    /// Resynchronise: write EntryID so the server resumes after this entry.
    ResumeAfter(Vec<u8>),
    /// Discard the buffer (PurgeBuf = true) before enabling. Cannot be undone.
    Purge,
}

/// What the user wants of the control block; `None` keeps the device's value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReportSettings {
    /// RptID.
    pub rpt_id: Option<String>,
    /// DatSet (MMS form, `LD/LN$name`).
    pub dat_set: Option<String>,
    /// OptFlds (resized to the device's bit length).
    pub opt_flds: Option<BitString>,
    /// TrgOps (resized to the device's bit length).
    pub trg_ops: Option<BitString>,
    /// BufTm in ms.
    pub buf_tm: Option<u32>,
    /// IntgPd in ms.
    pub intg_pd: Option<u32>,
    /// BRCB reservation time in seconds (written only if the BRCB has ResvTms).
    pub resv_tms: Option<i16>,
    /// BRCB buffer start.
    pub buffer: BufferStart,
    /// Ask for a general interrogation once enabled.
    pub gi: bool,
}

/// One write of one attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The attribute's name within the RCB.
    pub attr: String,
    /// Its MMS name.
    pub name: ObjectName,
    /// The value written.
    pub value: Data,
}

impl Step {
    /// The Write that carries this step.
    pub fn write_request(&self) -> WriteRequest {
        WriteRequest {
            spec: VariableAccessSpecification::names([self.name.clone()]),
            data: vec![self.value.clone()],
        }
    }
}

/// The enable writes, and for each one its inverse (`None`: nothing to undo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RcbPlan {
    enable: Vec<(Step, Option<Step>)>,
    irreversible: Vec<&'static str>,
}

fn resize(b: &BitString, len: usize) -> BitString {
    let ones: Vec<usize> = b.ones().collect();
    BitString::with_bits(len, &ones)
}

impl RcbPlan {
    /// Plan enabling `snap` with `s`. Refuses an RCB someone else holds.
    pub fn new(snap: &RcbSnapshot, s: &ReportSettings) -> Result<RcbPlan, RcbPlanError> {
        snap.check_free()?;
        let rcb = &snap.rcb;
        let buffered = rcb.kind == RcbKind::Buffered;
        let not_buffered = |what| RcbPlanError::NotBuffered {
            rcb: rcb.reference(),
            what,
        };
        let mut plan = RcbPlan {
            enable: Vec::new(),
            irreversible: Vec::new(),
        };
        let step = |attr: &str, value: Data| Step {
            attr: attr.to_string(),
            name: rcb.attribute(attr),
            value,
        };
        // Write `new` when it differs from the device's value; undo with the old one.
        let change = |plan: &mut RcbPlan, attr: &'static str, new: Data| {
            if let Some(old) = snap.get(attr) {
                if *old != new {
                    plan.enable
                        .push((step(attr, new), Some(step(attr, old.clone()))));
                }
            }
        };
        // 1. Reserve.
        if !buffered {
            if snap.get("Resv").is_some() {
                change(&mut plan, "Resv", Data::Boolean(true));
            }
            if s.resv_tms.is_some() {
                return Err(not_buffered("ResvTms"));
            }
        } else if let Some(t) = s.resv_tms {
            if snap.get("ResvTms").is_some() {
                change(&mut plan, "ResvTms", Data::Integer(t as i64));
            }
        }
        // 2. Configuration, each written with the device's own MMS type.
        let need = |attr: &'static str| {
            snap.get(attr).ok_or(RcbPlanError::Missing {
                rcb: rcb.reference(),
                attr,
            })
        };
        if let Some(v) = &s.rpt_id {
            need("RptID")?;
            change(&mut plan, "RptID", Data::VisibleString(v.clone()));
        }
        if let Some(v) = &s.dat_set {
            need("DatSet")?;
            change(&mut plan, "DatSet", Data::VisibleString(v.clone()));
        }
        for (attr, want) in [("OptFlds", &s.opt_flds), ("TrgOps", &s.trg_ops)] {
            if let Some(want) = want {
                let cur = BitString::from_data(need(attr)?).ok_or(snap.wrong(attr))?;
                change(&mut plan, attr, resize(want, cur.len()).to_data());
            }
        }
        for (attr, want) in [("BufTm", s.buf_tm), ("IntgPd", s.intg_pd)] {
            if let Some(want) = want {
                match need(attr)? {
                    Data::Unsigned(_) => change(&mut plan, attr, Data::Unsigned(want as u64)),
                    _ => return Err(snap.wrong(attr)),
                }
            }
        }
        // 3. Buffer start.
        match (&s.buffer, buffered) {
            (BufferStart::Keep, _) => {}
            (_, false) => return Err(not_buffered("EntryID/PurgeBuf")),
            (BufferStart::ResumeAfter(id), true) => {
                // EntryID is the buffer position, a status value reporting advances; writing
                // the old one back is refused by libiec61850 once that entry has left the
                // buffer (object-value-invalid, seen live), so it is not restored.
                need("EntryID")?;
                plan.enable
                    .push((step("EntryID", Data::OctetString(id.clone())), None));
                plan.irreversible.push("EntryID");
            }
            (BufferStart::Purge, true) => {
                need("PurgeBuf")?;
                plan.enable
                    .push((step("PurgeBuf", Data::Boolean(true)), None));
                plan.irreversible.push("PurgeBuf");
            }
        }
        // 4. Enable (RptEna was false: check_free), 5. GI.
        plan.enable.push((
            step("RptEna", Data::Boolean(true)),
            Some(step("RptEna", Data::Boolean(false))),
        ));
        if s.gi {
            need("GI")?;
            plan.enable.push((step("GI", Data::Boolean(true)), None));
            plan.irreversible.push("GI");
        }
        Ok(plan)
    }

    /// The enable writes, in order.
    pub fn enable(&self) -> Vec<Step> {
        self.enable.iter().map(|(s, _)| s.clone()).collect()
    }

    /// The writes that undo the first `applied` enable steps, last first.
    pub fn rollback(&self, applied: usize) -> Vec<Step> {
        self.enable
            .iter()
            .take(applied)
            .rev()
            .filter_map(|(_, undo)| undo.clone())
            .collect()
    }

    /// The writes that leave the RCB as it was found, after a complete enable.
    pub fn restore(&self) -> Vec<Step> {
        self.rollback(self.enable.len())
    }

    /// The enable steps that cannot be undone (GI, PurgeBuf, EntryID).
    pub fn irreversible(&self) -> &[&'static str] {
        &self.irreversible
    }
}

#[cfg(test)]
mod tests;
