//! What an SCL file says an IED is, resolved through its DataTypeTemplates: logical devices,
//! logical nodes with their data objects down to every basic attribute, data sets and report
//! control blocks, each with the MMS names IEC 61850-8-1 §8.1.3 gives it.

use crate::controls::{GseControl, SettingControl, SvControl};
use crate::log_control::LogControl;
use crate::types::{BasicType, Fc};
use serde::Serialize;

/// One IED of the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ied {
    /// `name`.
    pub name: String,
    /// `manufacturer`, if given.
    pub manufacturer: Option<String>,
    /// `type`, if given.
    pub ied_type: Option<String>,
    /// Logical devices of every access point's server, in file order.
    pub logical_devices: Vec<LogicalDevice>,
    /// The defects found in the IED and the repair made for each, in the order found
    /// (docs/scl.md, "Repairs"): the IED was loaded, but not exactly as written. Every
    /// consumer prints them (`gander scl show`, `gander mms server --scl` at start-up, the
    /// probe's model comparison).
    pub warnings: Vec<crate::SclWarning>,
}

/// A logical device: one MMS domain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LogicalDevice {
    /// `inst`.
    pub inst: String,
    /// The `AccessPoint` whose server holds it.
    pub access_point: String,
    /// The MMS domain: `ldName` when given, else IED name + `inst` (IEC 61850-8-1 §8.1.3.1).
    pub domain: String,
    /// LLN0 first, then the LNs in file order.
    pub logical_nodes: Vec<LogicalNode>,
}

/// A logical node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LogicalNode {
    /// prefix + lnClass + inst (`LLN0`, `GGIO1`, `MMXU1`, `Q0XCBR1`).
    pub name: String,
    /// `lnClass`.
    pub ln_class: String,
    /// The `lnType` it was built from.
    pub ln_type: String,
    /// Data objects, in template order.
    pub data_objects: Vec<DataNode>,
    /// Data sets defined in this LN.
    pub data_sets: Vec<DataSet>,
    /// Report control blocks defined in this LN.
    pub report_controls: Vec<ReportControl>,
    /// GOOSE control blocks (`GSEControl`, LLN0 only), with their Communication addresses.
    pub gse_controls: Vec<GseControl>,
    /// Sampled value control blocks (`SampledValueControl`, LLN0 only), with their addresses.
    pub sv_controls: Vec<SvControl>,
    /// The setting group control block (`SettingControl`, LLN0 only), if configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setting_control: Option<SettingControl>,
    /// Log control blocks (`LogControl`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log_controls: Vec<LogControl>,
    /// The names of the LN's logs (`Log name`), which a LogRef may name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
}

/// A data object, sub-data object, data attribute or basic data attribute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DataNode {
    /// Name.
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
    /// `count` of an array (0: not an array).
    pub count: u32,
    /// Components, in template order.
    pub children: Vec<DataNode>,
    /// The initial value of a basic attribute as the file gives it (`Val` in the DA/BDA
    /// template, overridden by the instance's `DOI`/`SDI`/`DAI`): the text, except for an
    /// `Enum`, whose literal is replaced by its `ord` (IEC 61850-6 §9.5.6 EnumVal); an `Enum`
    /// without a value gets its type's first `ord`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The values of individual setting groups (`<Val sGroup="n">`, IEC 61850-6 §9.3.8 and
    /// the schema's `tVal`), in file order, each checked against the bType like `value` (an
    /// `Enum`'s as its `ord`). Only settings (FC SG/SE) are grouped on a server; `value` is
    /// the `Val` without `sGroup` when there is one, else the first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub group_values: Vec<GroupValue>,
    /// The line of the template element it was built from (for errors found later, such as
    /// a basic type a server cannot serve).
    #[serde(skip)]
    pub line: u32,
}

/// One setting group's value of a basic attribute (`<Val sGroup="n">`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupValue {
    /// The setting group, 1-based (`sGroup`).
    pub group: u8,
    /// The value, as [`DataNode::value`] holds one.
    pub value: String,
    /// Where the `Val` element is (for errors found later: a group beyond `numOfSGs`, a
    /// value a server cannot serve).
    #[serde(skip)]
    pub at: crate::Position,
}

/// The kind of a [`DataNode`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum NodeKind {
    /// A DO or SDO with its common data class.
    Object {
        /// `cdc` of its DOType.
        cdc: String,
    },
    /// A DA or BDA.
    Attribute {
        /// Its functional constraint (a BDA has its DA's).
        fc: Fc,
        /// Its basic type.
        btype: BasicType,
        /// The EnumType of an `Enum`, or the DAType of a `Struct`.
        type_id: Option<String>,
    },
}

/// One MMS variable of a logical node: a leaf attribute, named as IEC 61850-8-1 names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Variable {
    /// The MMS item name within the domain: `GGIO1$ST$Ind1$stVal`.
    pub item: String,
    /// The IEC 61850 reference: `GGIO1.Ind1.stVal [ST]` without the LD.
    pub reference: String,
    /// Functional constraint.
    pub fc: Fc,
    /// Basic type.
    pub btype: BasicType,
}

impl LogicalNode {
    /// Every leaf attribute of the LN as an MMS variable (IEC 61850-8-1 §8.1.3.2: the LN's
    /// MMS variable has one component per functional constraint, then the data objects),
    /// sorted by FC name and in template order within an FC (a stable sort).
    pub fn variables(&self) -> Vec<Variable> {
        let mut out = Vec::new();
        for d in &self.data_objects {
            leaves(d, &self.name, &d.name, None, &mut out);
        }
        out.sort_by(|a, b| a.fc.name().cmp(b.fc.name()));
        out
    }

    /// The functional constraints the LN's data carry, sorted.
    pub fn fcs(&self) -> Vec<Fc> {
        let mut f: Vec<Fc> = self.variables().iter().map(|v| v.fc).collect();
        f.sort_by_key(|x| x.name());
        f.dedup();
        f
    }
}

fn leaves(n: &DataNode, ln: &str, path: &str, fc: Option<Fc>, out: &mut Vec<Variable>) {
    match &n.kind {
        NodeKind::Attribute { fc: f, btype, .. } if n.children.is_empty() => {
            let f = fc.unwrap_or(*f);
            let dotted = format!("{ln}.{path}");
            let dollar: Vec<&str> = path.split('.').collect();
            out.push(Variable {
                item: format!("{ln}${}${}", f.name(), dollar.join("$")),
                reference: format!("{dotted} [{}]", f.name()),
                fc: f,
                btype: *btype,
            });
        }
        _ => {
            for c in &n.children {
                leaves(c, ln, &format!("{path}.{}", c.name), fc, out);
            }
        }
    }
}

/// A data set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DataSet {
    /// `name`.
    pub name: String,
    /// Members, in order.
    pub members: Vec<Fcda>,
}

/// A data set member (FCDA): functionally constrained data or data attribute, or one element
/// of an array (or a component under it: IEC 61850-8-1 §8.1.3.5, an MMS alternate access).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fcda {
    /// The member's MMS domain.
    pub domain: String,
    /// The member's MMS item: `GGIO1$ST$Ind1` or `GGIO1$ST$Ind1$stVal`; for an array element,
    /// the item up to and including the array (`MHAI1$MX$HA$phsAHar`).
    pub item: String,
    /// Functional constraint.
    pub fc: Fc,
    /// The element of the array `item` names (`phsAHar(7)`: 7), checked against its `count`.
    pub array_index: Option<u32>,
    /// The `$`-joined path under the indexed element (`phsAHar(3).cVal.mag`: `cVal$mag`),
    /// checked against its type; None for the whole element (or without an index).
    pub component: Option<String>,
}

impl std::fmt::Display for Fcda {
    /// `domain/item`, with `(index)` and `$component` as there are.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.domain, self.item)?;
        if let Some(i) = self.array_index {
            write!(f, "({i})")?;
        }
        if let Some(c) = &self.component {
            write!(f, "${c}")?;
        }
        Ok(())
    }
}

/// Trigger options (`TrgOps`, IEC 61850-7-2 §14.2.2.7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TrgOps {
    /// Data change.
    pub dchg: bool,
    /// Quality change.
    pub qchg: bool,
    /// Data update.
    pub dupd: bool,
    /// Integrity period.
    pub period: bool,
    /// General interrogation (default true in the schema).
    pub gi: bool,
}

/// Optional fields (`OptFields`, IEC 61850-7-2 §14.2.2.6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OptFields {
    /// Sequence number.
    pub seq_num: bool,
    /// Report time stamp.
    pub time_stamp: bool,
    /// Data set name.
    pub data_set: bool,
    /// Reason for inclusion.
    pub reason_code: bool,
    /// Data reference.
    pub data_ref: bool,
    /// Entry id (buffered).
    pub entry_id: bool,
    /// Configuration revision.
    pub config_ref: bool,
    /// Buffer overflow (buffered).
    pub buf_ovfl: bool,
    /// Segmentation.
    pub segmentation: bool,
}

/// A report control block as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReportControl {
    /// `name`.
    pub name: String,
    /// `rptID` (None when absent or empty: the server uses the RCB's reference).
    pub rpt_id: Option<String>,
    /// `datSet`: a data set of the same LN, if any.
    pub data_set: Option<String>,
    /// `confRev` (required).
    pub conf_rev: u32,
    /// `buffered` (default false).
    pub buffered: bool,
    /// `bufTime` in ms (default 0).
    pub buf_time: u32,
    /// `intgPd` in ms (default 0).
    pub intg_pd: u32,
    /// `indexed` (default true).
    pub indexed: bool,
    /// `RptEnabled max` (default 1).
    pub max: u16,
    /// Trigger options.
    pub trg_ops: TrgOps,
    /// Optional fields.
    pub opt_fields: OptFields,
}

impl ReportControl {
    /// The instance names in the LN's MMS directory: with `indexed`, name + 01..max (two
    /// digits); otherwise the name alone (IEC 61850-6 §9.3.8; libiec61850's model generator
    /// does the same). An unindexed URCB with max > 1 is still one name: see
    /// [`Self::per_association`].
    pub fn instances(&self) -> Vec<String> {
        if self.indexed {
            (1..=self.max)
                .map(|i| format!("{}{i:02}", self.name))
                .collect()
        } else {
            vec![self.name.clone()]
        }
    }

    /// Whether the one name stands for up to `max` instances, one per client association
    /// (IEC TISSUE 1771): an unbuffered, unindexed block with `max` > 1. A server gives each
    /// association its own copy of `LN$RP$name` (its own RptEna, resvTms, sequence number) and
    /// refuses a further association's reservation once `max` associations hold one.
    pub fn per_association(&self) -> bool {
        !self.buffered && !self.indexed && self.max > 1
    }

    /// The FC of its instances: BR for buffered, RP for unbuffered.
    pub fn fc(&self) -> Fc {
        if self.buffered {
            Fc::BR
        } else {
            Fc::RP
        }
    }
}
