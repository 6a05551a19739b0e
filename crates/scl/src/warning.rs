//! What was wrong in an IED that was loaded anyway: a defect local to one element (a data set
//! member naming nothing, an `SDI` the type lacks, a missing `EnumType`, `<Val>False</Val>`...)
//! is repaired in a stated way and reported, so real vendors' files load and nothing is
//! silently accepted. Defects that make the model meaningless (no LDevice in a Server, a
//! duplicate name that makes MMS names ambiguous, a root that is not SCL) stay refusals
//! ([`crate::SclError`]). The table of which is which is in `docs/scl.md` ("Repairs").
//!
//! Collected per IED in [`Diag`] while the IED is read, deduplicated (a broken template is met
//! once per logical node that uses it), and kept in [`crate::Ied::warnings`].

use crate::error::{Position, SclError, SclErrorKind};
use std::cell::RefCell;
use std::collections::HashSet;

/// The repair made for a defect, so a reader knows what the loaded model holds instead of
/// what the file says.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Repair {
    /// The data set member is left out of its data set (the others stay, in order).
    #[error("the member is left out of data set {data_set:?}")]
    MemberDropped {
        /// The data set.
        data_set: String,
    },
    /// `ldInst` is an LD's MMS domain (IED name + inst, or its `ldName`), not its `inst`:
    /// read as that LD (the domain names exactly one LD of the IED, so this is not a guess).
    #[error("read as LD {inst:?}, whose MMS domain ldInst names")]
    LdInstReadAsDomain {
        /// The LD's `inst`.
        inst: String,
    },
    /// An FCDA's `lnInst` on `lnClass="LLN0"` is ignored: LLN0 has no instance number
    /// (IEC 61850-6 tLN0's `inst` is empty), so `LLN0` plus an instance names no other LN.
    #[error("read as the LD's LLN0 (LLN0 has no instance number)")]
    LnInstIgnoredOnLln0,
    /// A `DOI`/`SDI`/`DAI` naming nothing in the type is ignored with what it holds: the
    /// type's values stay.
    #[error("the element and its values are ignored")]
    InstanceIgnored,
    /// The logical node cannot be built and is left out of its LD (its data sets and control
    /// blocks with it; members of other data sets naming it are dropped, each with a warning).
    #[error("LN {ln} is left out of LD {ld}")]
    LogicalNodeLeftOut {
        /// The LD's inst.
        ld: String,
        /// The LN's name as far as it is known.
        ln: String,
    },
    /// A DO, SDO, DA or BDA that cannot be built is left out of its parent.
    #[error("{element} {name:?} is left out of its {parent}")]
    ComponentLeftOut {
        /// DO, SDO, DA or BDA.
        element: &'static str,
        /// Its name (`(unnamed)` when it has none).
        name: String,
        /// What holds it: the logical node or its type.
        parent: &'static str,
    },
    /// An Enum whose `EnumType` is missing is kept as an Enum (MMS integer) without literals:
    /// integer values are kept, literals cannot be mapped to an `ord` and are dropped.
    #[error("the attribute is kept as an Enum without literals (integer values kept)")]
    EnumWithoutType,
    /// The `Val` is ignored: the template's value, else the type's default, stays.
    #[error("the Val is ignored (the template's value, else the type's default, stays)")]
    ValueIgnored,
    /// An xs:boolean written in another case (`False`, `TRUE`) is read ignoring case.
    #[error("read ignoring case as {0}")]
    BooleanCaseFolded(bool),
    /// A buffered, unindexed report control block with `RptEnabled max` > 1 is served as one
    /// instance (max taken as 1).
    #[error("served as one instance (max taken as 1)")]
    SingleInstance,
    /// The control block is left out of the model.
    #[error("control block {name:?} is left out")]
    ControlBlockLeftOut {
        /// Its name (`(unnamed)` when it has none).
        name: String,
    },
    /// Setting-group values beyond the LD's `numOfSGs` are left out.
    #[error("the value of setting group {group} is left out")]
    GroupValueDropped {
        /// The group.
        group: u8,
    },
    /// An `LDevice` none of whose logical nodes could be built (its LLN0's type missing,
    /// say) is left out: IEC 61850-7-2 has every LD contain LLN0, and an MMS domain without
    /// a variable serves nothing.
    #[error("LD {ld} is left out (no logical node of it could be built)")]
    LogicalDeviceLeftOut {
        /// The LD's MMS domain.
        ld: String,
    },
    /// A namespace prefix the file uses without declaring it is declared on the root
    /// (`crate::xml`): the file is read, the prefixed names stay outside SCL's namespace.
    #[error("the prefix {prefix:?} is read as declared for {namespace:?}")]
    PrefixDeclared {
        /// The prefix.
        prefix: String,
        /// The namespace it is taken to mean.
        namespace: String,
    },
    /// A `Server` without an `LDevice` beside one that has some serves nothing: ignored.
    #[error("access point {access_point:?} serves nothing (its Server is ignored)")]
    EmptyServerIgnored {
        /// The access point.
        access_point: String,
    },
    /// An `LDevice` placed directly in an `AccessPoint`, outside any `Server` (the schema's
    /// tAccessPoint holds a Server, or LNs of a client; LDevices belong to tServer): it is not
    /// served, and said so, rather than the IED read as a client without a word.
    #[error("LDevice {ld:?} of access point {access_point:?} sits outside a Server: ignored (LDevices belong in the access point's Server)")]
    LDeviceOutsideServer {
        /// The access point.
        access_point: String,
        /// The LDevice's inst.
        ld: String,
    },
    /// An `LN` (not LLN0) with `inst=""`: IEC 61850-6's tLNInst is one to twelve digits. It is
    /// served under the name prefix and class make alone, as libiec61850 serves it.
    #[error("served as {ln:?} (an LN's inst is 1 to 12 digits, IEC 61850-6 tLNInst)")]
    EmptyLnInst {
        /// The name it is served under.
        ln: String,
    },
    /// The root's namespace is a known foreign one, read as SCL under the named quirk.
    #[error("read as SCL under quirk {quirk:?} ({tools})")]
    NamespaceQuirk {
        /// The quirk's name.
        quirk: &'static str,
        /// Which tools wrote such files.
        tools: &'static str,
    },
}

impl Repair {
    /// A stable token for JSON consumers (`member-dropped`, ...).
    pub fn token(&self) -> &'static str {
        match self {
            Repair::MemberDropped { .. } => "member-dropped",
            Repair::LdInstReadAsDomain { .. } => "ldinst-read-as-domain",
            Repair::InstanceIgnored => "instance-ignored",
            Repair::LogicalNodeLeftOut { .. } => "ln-left-out",
            Repair::ComponentLeftOut { .. } => "component-left-out",
            Repair::EnumWithoutType => "enum-without-type",
            Repair::ValueIgnored => "value-ignored",
            Repair::BooleanCaseFolded(_) => "boolean-case-folded",
            Repair::SingleInstance => "single-instance",
            Repair::ControlBlockLeftOut { .. } => "control-block-left-out",
            Repair::GroupValueDropped { .. } => "group-value-dropped",
            Repair::EmptyServerIgnored { .. } => "empty-server-ignored",
            Repair::LDeviceOutsideServer { .. } => "ldevice-outside-server",
            Repair::EmptyLnInst { .. } => "empty-ln-inst",
            Repair::LogicalDeviceLeftOut { .. } => "logical-device-left-out",
            Repair::LnInstIgnoredOnLln0 => "ln-inst-ignored-on-lln0",
            Repair::PrefixDeclared { .. } => "prefix-declared",
            Repair::NamespaceQuirk { .. } => "namespace-quirk",
        }
    }
}

/// A defect found in an IED that was loaded with a repair: what is wrong, where, and what the
/// loaded model holds instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}{problem}; repaired: {repair}",
    at.map(|p| format!("{p}: ")).unwrap_or_default()
)]
pub struct SclWarning {
    /// What is wrong (the same wording a refusal would have).
    pub problem: SclErrorKind,
    /// What was done about it.
    pub repair: Repair,
    /// Where in the file.
    pub at: Option<Position>,
}

impl serde::Serialize for SclWarning {
    /// `{ "line", "column", "message", "repair", "repair_kind" }`: for `gander scl show --json`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("SclWarning", 5)?;
        st.serialize_field("line", &self.at.map(|p| p.line))?;
        st.serialize_field("column", &self.at.map(|p| p.column))?;
        st.serialize_field("message", &self.problem.to_string())?;
        st.serialize_field("repair", &self.repair.to_string())?;
        st.serialize_field("repair_kind", self.repair.token())?;
        st.end()
    }
}

/// The warnings of the IED being read. Interior mutability because the reader passes its
/// context by shared reference everywhere; one IED is read at a time.
/// A warning's position (line, column) and text.
type SeenKey = (Option<(u32, u32)>, String);

#[derive(Default)]
pub(crate) struct Diag {
    list: RefCell<Vec<SclWarning>>,
    /// What is in `list`, by position and text, so that recording stays linear in the number
    /// of warnings (a file with thousands of broken members).
    seen: RefCell<HashSet<SeenKey>>,
}

impl Diag {
    /// Records a repair of `error` (its kind and position), once per position and message.
    pub(crate) fn repaired(&self, error: SclError, repair: Repair) {
        let w = SclWarning {
            problem: error.kind,
            repair,
            at: error.at,
        };
        let key = (w.at.map(|p| (p.line, p.column)), w.to_string());
        if self.seen.borrow_mut().insert(key) {
            self.list.borrow_mut().push(w);
        }
    }

    /// The warnings gathered since the last call, in the order found.
    pub(crate) fn take(&self) -> Vec<SclWarning> {
        self.seen.borrow_mut().clear();
        std::mem::take(&mut *self.list.borrow_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_says_where_what_and_the_repair_once() {
        let d = Diag::default();
        let e = SclError::new(
            SclErrorKind::UnknownType {
                kind: "EnumType",
                id: "Beh".into(),
            },
            Some(Position { line: 3, column: 5 }),
        );
        d.repaired(e.clone(), Repair::EnumWithoutType);
        d.repaired(e, Repair::EnumWithoutType);
        let w = d.take();
        assert_eq!(w.len(), 1, "the same defect met twice is one warning");
        assert_eq!(
            w[0].to_string(),
            "line 3, column 5: EnumType \"Beh\" is not in DataTypeTemplates; repaired: the attribute is kept as an Enum without literals (integer values kept)"
        );
        assert!(d.take().is_empty());
        let j = serde_json::to_value(&w[0]).unwrap();
        assert_eq!(j["repair_kind"], "enum-without-type");
        assert_eq!(j["line"], 3);
    }
}
