//! Reading the XML: the IED sections and the DataTypeTemplates they refer to (IEC 61850-6 §9:
//! `IED/AccessPoint/Server/LDevice/LN0|LN`, `DataSet/FCDA`, `ReportControl`; §9.5 templates
//! `LNodeType/DO`, `DOType/SDO|DA`, `DAType/BDA`, `EnumType`).
//!
//! Elements of other namespaces (`Private` extensions, vendor tools' own) are skipped; elements
//! of the SCL namespace or of none are read, since some tools write SCL without a namespace.
//! Initial values (`Val` in templates, `DOI`/`SDI`/`DAI` in instances) are read; the
//! communication section is not.

use crate::error::{Position, SclError, SclErrorKind};
use crate::model::*;
use crate::types::{BasicType, Fc};
use roxmltree::{Document, Node};
use std::collections::HashMap;

/// The SCL namespace (IEC 61850-6).
pub const SCL_NS: &str = "http://www.iec.ch/61850/2003/SCL";

/// Deepest nesting of SDOs and structured attributes accepted (a guard against absurd files;
/// the IEC 61850-7-3 common data classes nest a few levels).
const MAX_DEPTH: usize = 32;

pub(crate) struct Ctx<'i> {
    text: &'i str,
    /// Byte offset of the start of every line, so that a position costs a binary search.
    /// (`roxmltree::Document::text_pos_at` counts from the start of the text on every call,
    /// and positions are taken for every node of the model: that made reading quadratic in
    /// the file size, 4.5 s for an 865 kB SCD.)
    line_starts: Vec<usize>,
}

impl<'i> Ctx<'i> {
    fn new(text: &'i str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Ctx { text, line_starts }
    }

    /// The line and column (in characters, both 1-based, as roxmltree and editors count) of
    /// a byte offset.
    pub(crate) fn pos_of(&self, offset: usize) -> Position {
        let line = self.line_starts.partition_point(|s| *s <= offset).max(1);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        let column = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(0)
            + 1;
        Position {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }

    pub(crate) fn pos(&self, n: Node) -> Position {
        self.pos_of(n.range().start)
    }

    pub(crate) fn err(&self, n: Node, kind: SclErrorKind) -> SclError {
        SclError::new(kind, Some(self.pos(n)))
    }

    pub(crate) fn req<'n>(
        &self,
        n: Node<'n, 'i>,
        element: &'static str,
        attribute: &'static str,
    ) -> Result<&'n str, SclError> {
        n.attribute(attribute)
            .ok_or_else(|| self.err(n, SclErrorKind::MissingAttribute { element, attribute }))
    }

    /// A required name that becomes one component of an MMS object name: IEC 61850-8-1 joins
    /// components with `$`, so a `$` (or anything but letters, digits and `_` after a first
    /// letter, the ISO 9506 Identifier's characters less the separator) would make another
    /// name than the one the model holds. Found by the `fuzz_scl` target: a DO named `Mo$d`
    /// was listed as `LLN0$CF$Mo$d` and could not be read back under that name.
    pub(crate) fn name<'n>(
        &self,
        n: Node<'n, 'i>,
        element: &'static str,
        attribute: &'static str,
    ) -> Result<&'n str, SclError> {
        let v = self.req(n, element, attribute)?;
        self.check_name(n, element, attribute, v)
    }

    /// [`Self::name`]'s check of a value already read (or put together).
    pub(crate) fn check_name<'v>(
        &self,
        n: Node,
        element: &'static str,
        attribute: &'static str,
        v: &'v str,
    ) -> Result<&'v str, SclError> {
        let mut chars = v.chars();
        let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ok {
            Ok(v)
        } else {
            Err(self.err(
                n,
                SclErrorKind::BadValue {
                    element,
                    attribute,
                    value: v.into(),
                    why: "not a name of letters, digits and '_' starting with a letter (it is part of an MMS name, whose components are joined with '$')",
                },
            ))
        }
    }

    pub(crate) fn num<T: std::str::FromStr>(
        &self,
        n: Node,
        element: &'static str,
        attribute: &'static str,
        default: T,
    ) -> Result<T, SclError> {
        match n.attribute(attribute) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| {
                self.err(
                    n,
                    SclErrorKind::BadValue {
                        element,
                        attribute,
                        value: v.into(),
                        why: "not a number in range",
                    },
                )
            }),
        }
    }

    pub(crate) fn flag(
        &self,
        n: Node,
        element: &'static str,
        attribute: &'static str,
        default: bool,
    ) -> Result<bool, SclError> {
        match n.attribute(attribute) {
            None => Ok(default),
            // xs:boolean.
            Some("true") | Some("1") => Ok(true),
            Some("false") | Some("0") => Ok(false),
            Some(v) => Err(self.err(
                n,
                SclErrorKind::BadValue {
                    element,
                    attribute,
                    value: v.into(),
                    why: "expected true or false",
                },
            )),
        }
    }
}

/// SCL-namespace (or namespace-less) element children named `tag`.
pub(crate) fn kids<'a, 'i>(
    n: Node<'a, 'i>,
    tag: &'a str,
) -> impl Iterator<Item = Node<'a, 'i>> + 'a {
    n.children().filter(move |c| {
        c.is_element()
            && c.tag_name().name() == tag
            && c.tag_name().namespace().is_none_or(|ns| ns == SCL_NS)
    })
}

struct Templates<'a, 'i> {
    ln: HashMap<&'a str, Node<'a, 'i>>,
    dos: HashMap<&'a str, Node<'a, 'i>>,
    das: HashMap<&'a str, Node<'a, 'i>>,
    enums: HashMap<&'a str, Node<'a, 'i>>,
}

fn index<'a, 'i>(
    cx: &Ctx<'i>,
    parent: Option<Node<'a, 'i>>,
    tag: &'static str,
) -> Result<HashMap<&'a str, Node<'a, 'i>>, SclError> {
    let mut m = HashMap::new();
    if let Some(p) = parent {
        for n in kids(p, tag) {
            let id = cx.req(n, tag, "id")?;
            if let Some(first) = m.get(id) {
                // A second template of the same id and the same content (libiec61850's
                // sg_demo.cid repeats its DOType "SPS") names one type: keep the first.
                if same_content(cx.text, *first, n) {
                    continue;
                }
                return Err(cx.err(
                    n,
                    SclErrorKind::Duplicate {
                        what: tag,
                        name: id.into(),
                    },
                ));
            }
            m.insert(id, n);
        }
    }
    Ok(m)
}

/// Whether two elements are written the same, whitespace aside.
fn same_content(text: &str, a: Node, b: Node) -> bool {
    let squeeze = |n: Node| {
        text.get(n.range())
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
    };
    squeeze(a).eq(squeeze(b))
}

impl<'a, 'i> Templates<'a, 'i> {
    fn read(cx: &Ctx<'i>, root: Node<'a, 'i>) -> Result<Self, SclError> {
        let t = kids(root, "DataTypeTemplates").next();
        Ok(Templates {
            ln: index(cx, t, "LNodeType")?,
            dos: index(cx, t, "DOType")?,
            das: index(cx, t, "DAType")?,
            enums: index(cx, t, "EnumType")?,
        })
    }
}

struct Resolver<'t, 'a, 'i, 'c> {
    cx: &'c Ctx<'i>,
    t: &'t Templates<'a, 'i>,
    /// Types being expanded (recursion guard).
    stack: Vec<&'a str>,
}

impl<'a, 'i> Resolver<'_, 'a, 'i, '_> {
    fn enter(&mut self, n: Node, kind: &'static str, id: &'a str) -> Result<(), SclError> {
        if self.stack.contains(&id) || self.stack.len() >= MAX_DEPTH {
            return Err(self.cx.err(
                n,
                SclErrorKind::RecursiveType {
                    kind,
                    id: id.into(),
                },
            ));
        }
        self.stack.push(id);
        Ok(())
    }

    fn lookup(
        &self,
        n: Node,
        map: &HashMap<&'a str, Node<'a, 'i>>,
        kind: &'static str,
        id: &str,
    ) -> Result<(&'a str, Node<'a, 'i>), SclError> {
        map.get_key_value(id).map(|(k, v)| (*k, *v)).ok_or_else(|| {
            self.cx.err(
                n,
                SclErrorKind::UnknownType {
                    kind,
                    id: id.into(),
                },
            )
        })
    }

    /// A DO or SDO of DOType `type_id`.
    fn object(
        &mut self,
        at: Node,
        name: &str,
        type_id: &str,
        count: u32,
    ) -> Result<DataNode, SclError> {
        let (id, ty) = self.lookup(at, &self.t.dos, "DOType", type_id)?;
        self.enter(at, "DOType", id)?;
        let cdc = self.cx.req(ty, "DOType", "cdc")?.to_string();
        let mut children = Vec::new();
        for c in ty.children().filter(|c| c.is_element()) {
            match c.tag_name().name() {
                "SDO" => {
                    let n = self.cx.name(c, "SDO", "name")?;
                    let t = self.cx.req(c, "SDO", "type")?;
                    let count = self.cx.num(c, "SDO", "count", 0u32)?;
                    children.push(self.object(c, n, t, count)?);
                }
                "DA" => children.push(self.attribute(c, "DA", None)?),
                _ => {}
            }
        }
        self.stack.pop();
        Ok(DataNode {
            name: name.into(),
            kind: NodeKind::Object { cdc },
            count,
            children,
            value: None,
            group_values: Vec::new(),
            line: self.cx.pos(at).line,
        })
    }

    /// A DA (its own `fc`) or BDA (the DA's `fc`).
    fn attribute(
        &mut self,
        c: Node<'a, 'i>,
        element: &'static str,
        fc: Option<Fc>,
    ) -> Result<DataNode, SclError> {
        let name = self.cx.name(c, element, "name")?;
        let fc = match fc {
            Some(f) => f,
            None => {
                let s = self.cx.req(c, element, "fc")?;
                Fc::from_scl(s).ok_or_else(|| {
                    self.cx.err(
                        c,
                        SclErrorKind::BadValue {
                            element,
                            attribute: "fc",
                            value: s.into(),
                            why: "not a functional constraint of IEC 61850-7-2",
                        },
                    )
                })?
            }
        };
        let b = self.cx.req(c, element, "bType")?;
        let btype = BasicType::from_scl(b).ok_or_else(|| {
            self.cx.err(
                c,
                SclErrorKind::BadValue {
                    element,
                    attribute: "bType",
                    value: b.into(),
                    why: "not a basic type of IEC 61850-6",
                },
            )
        })?;
        let count = self.cx.num(c, element, "count", 0u32)?;
        let type_id = c.attribute("type");
        let mut children = Vec::new();
        let mut value = None;
        let mut group_values = Vec::new();
        match btype {
            BasicType::Struct => {
                let tid = self.cx.req(c, element, "type")?;
                let (id, ty) = self.lookup(c, &self.t.das, "DAType", tid)?;
                self.enter(c, "DAType", id)?;
                for b in kids(ty, "BDA") {
                    children.push(self.attribute(b, "BDA", Some(fc))?);
                }
                self.stack.pop();
            }
            BasicType::Enum => {
                let tid = self.cx.req(c, element, "type")?;
                let (_, et) = self.lookup(c, &self.t.enums, "EnumType", tid)?;
                let vals = checked_val(self.cx, btype, Some(et), c)?;
                value = Some(match vals.value() {
                    Some(v) => v,
                    None => enum_ord(self.cx, c, et, None)?,
                });
                group_values = vals.groups;
            }
            _ => {
                let vals = checked_val(self.cx, btype, None, c)?;
                value = vals.value();
                group_values = vals.groups;
            }
        }
        Ok(DataNode {
            name: name.into(),
            kind: NodeKind::Attribute {
                fc,
                btype,
                type_id: type_id.map(str::to_string),
            },
            count,
            children,
            value,
            group_values,
            line: self.cx.pos(c).line,
        })
    }
}

/// The `Val` children of a DA, BDA or DAI: the value without `sGroup` and the value of each
/// setting group (`sGroup="n"`, IEC 61850-6 §9.3.8: one value per group for a setting).
#[derive(Default)]
struct Vals {
    plain: Option<String>,
    groups: Vec<GroupValue>,
}

impl Vals {
    fn is_empty(&self) -> bool {
        self.plain.is_none() && self.groups.is_empty()
    }

    /// The node's [`DataNode::value`]: the `Val` without `sGroup`, else the first group's.
    fn value(&self) -> Option<String> {
        self.plain
            .clone()
            .or_else(|| self.groups.first().map(|g| g.value.clone()))
    }
}

/// Every `Val` child of a DA, BDA or DAI (an Enum's as its `ord`), each checked against
/// `btype` ([`crate::value::check`]) with an error naming the `Val`'s own line. `sGroup` must
/// be a group number of 1..=255 (`tVal` in the SCL schema: an unsigned int; IEC 61850-7-2
/// §16 numbers groups from 1 and NumOfSG is an 8-bit unsigned), once per group.
fn checked_val(
    cx: &Ctx,
    btype: BasicType,
    enum_type: Option<Node>,
    n: Node,
) -> Result<Vals, SclError> {
    let mut out = Vals::default();
    for v in kids(n, "Val") {
        let text = v.text().unwrap_or("").trim();
        let value = match (btype, enum_type) {
            (BasicType::Enum, Some(et)) => enum_ord(cx, v, et, Some(text))?,
            _ => {
                crate::value::check(btype, text).map_err(|why| {
                    cx.err(
                        v,
                        SclErrorKind::BadValue {
                            element: "Val",
                            attribute: "(text)",
                            value: text.into(),
                            why,
                        },
                    )
                })?;
                text.to_string()
            }
        };
        let Some(g) = v.attribute("sGroup") else {
            out.plain.get_or_insert(value);
            continue;
        };
        let bad = |why| {
            cx.err(
                v,
                SclErrorKind::BadValue {
                    element: "Val",
                    attribute: "sGroup",
                    value: g.into(),
                    why,
                },
            )
        };
        let group = g
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|g| *g >= 1)
            .ok_or_else(|| bad("not a setting group number of 1..=255"))?;
        if out.groups.iter().any(|x| x.group == group) {
            return Err(bad("a second Val for the same setting group"));
        }
        out.groups.push(GroupValue {
            group,
            value,
            at: cx.pos(v),
        });
    }
    Ok(out)
}

/// An Enum's value as its `ord`: a literal is looked up among the EnumType's `EnumVal`s; a
/// number is kept; none gives the first `ord`.
fn enum_ord(cx: &Ctx, at: Node, et: Node, literal: Option<&str>) -> Result<String, SclError> {
    let vals: Vec<(String, String)> = kids(et, "EnumVal")
        .map(|v| {
            (
                v.attribute("ord").unwrap_or("0").trim().to_string(),
                v.text().unwrap_or("").trim().to_string(),
            )
        })
        .collect();
    match literal {
        None => Ok(vals
            .first()
            .map(|(o, _)| o.clone())
            .unwrap_or_else(|| "0".into())),
        Some(l) if l.parse::<i64>().is_ok() => Ok(l.to_string()),
        Some(l) => vals
            .iter()
            .find(|(_, t)| t == l)
            .map(|(o, _)| o.clone())
            .ok_or_else(|| {
                cx.err(
                    at,
                    SclErrorKind::BadValue {
                        element: "Val",
                        attribute: "(text)",
                        value: l.into(),
                        why: "not a literal of the attribute's EnumType",
                    },
                )
            }),
    }
}

/// Applies the instance values of an LN (`DOI`/`SDI`/`DAI` with `Val`) to its data objects.
/// A DOI naming no data object is an error (the file configures something the type lacks).
fn apply_instance_values(
    cx: &Ctx,
    t: &Templates,
    ln: Node,
    data_objects: &mut [DataNode],
) -> Result<(), SclError> {
    fn walk(cx: &Ctx, t: &Templates, n: Node, nodes: &mut [DataNode]) -> Result<(), SclError> {
        for c in n.children().filter(|c| c.is_element()) {
            let tag = c.tag_name().name();
            if !matches!(tag, "DOI" | "SDI" | "DAI") {
                continue;
            }
            let Some(name) = c.attribute("name") else {
                continue;
            };
            let Some(target) = nodes.iter_mut().find(|d| d.name == name) else {
                return Err(cx.err(
                    c,
                    SclErrorKind::UnknownInstance {
                        element: if tag == "DOI" {
                            "DOI"
                        } else if tag == "SDI" {
                            "SDI"
                        } else {
                            "DAI"
                        },
                        name: name.into(),
                    },
                ));
            };
            if tag == "DAI" {
                let vals = match &target.kind {
                    NodeKind::Attribute { btype, type_id, .. } => {
                        let et = match (btype, type_id) {
                            (BasicType::Enum, Some(id)) => t.enums.get(id.as_str()).copied(),
                            _ => None,
                        };
                        checked_val(cx, *btype, et, c)?
                    }
                    // A DAI naming a data object: nothing to hold a value.
                    NodeKind::Object { .. } => Vals::default(),
                };
                // The instance's values replace the template's (every group's with them).
                if !vals.is_empty() {
                    target.value = vals.value();
                    target.group_values = vals.groups;
                }
            } else {
                walk(cx, t, c, &mut target.children)?;
            }
        }
        Ok(())
    }
    walk(cx, t, ln, data_objects)
}

/// Reads every IED of the file, each on its own: the valid ones and the refused ones with
/// their error (naming the IED).
pub(crate) fn read(text: &str) -> Result<(Vec<Ied>, Vec<crate::RefusedIed>), SclError> {
    let opts = roxmltree::ParsingOptions {
        // SCL files never need a DTD; refusing one keeps entity expansion out.
        allow_dtd: false,
        ..Default::default()
    };
    let doc = Document::parse_with_options(text, opts)
        .map_err(|e| SclError::new(SclErrorKind::Xml(e.to_string()), None))?;
    let cx = Ctx::new(text);
    let root = doc.root_element();
    if root.tag_name().name() != "SCL" {
        return Err(cx.err(root, SclErrorKind::NotScl(root.tag_name().name().into())));
    }
    if let Some(ns) = root.tag_name().namespace().filter(|ns| *ns != SCL_NS) {
        return Err(cx.err(root, SclErrorKind::WrongNamespace { found: ns.into() }));
    }
    let t = Templates::read(&cx, root)?;
    let comm = crate::controls::CommIndex::read(root);
    let mut ieds: Vec<Ied> = Vec::new();
    let mut refused: Vec<crate::RefusedIed> = Vec::new();
    for ied in kids(root, "IED") {
        let name = ied.attribute("name").unwrap_or("(unnamed)");
        let result =
            if ieds.iter().any(|i| i.name == name) || refused.iter().any(|r| r.name == name) {
                // IEC 61850-6 §9.3.1: the IED name is unique in an SCD (it names the IED's MMS
                // domains, its GSE and SMV addresses).
                Err(cx.err(
                    ied,
                    SclErrorKind::Duplicate {
                        what: "IED",
                        name: name.into(),
                    },
                ))
            } else {
                read_ied(&cx, &t, &comm, ied)
            };
        match result {
            Ok(i) => ieds.push(i),
            Err(e) => refused.push(crate::RefusedIed {
                name: name.into(),
                error: e.in_ied(name),
            }),
        }
    }
    if ieds.is_empty() && refused.is_empty() {
        return Err(SclError::new(SclErrorKind::NoIed, None));
    }
    Ok((ieds, refused))
}

fn read_ied<'a, 'i>(
    cx: &Ctx<'i>,
    t: &Templates<'a, 'i>,
    comm: &crate::controls::CommIndex<'a, 'i>,
    ied: Node<'a, 'i>,
) -> Result<Ied, SclError> {
    let name = cx.req(ied, "IED", "name")?.to_string();
    let mut lds = Vec::new();
    let mut ld_nodes = Vec::new();
    for ap in kids(ied, "AccessPoint") {
        let ap_name = cx.req(ap, "AccessPoint", "name")?;
        for server in kids(ap, "Server") {
            for ld in kids(server, "LDevice") {
                let inst = cx.req(ld, "LDevice", "inst")?;
                let domain = ld
                    .attribute("ldName")
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("{name}{inst}"));
                if lds.iter().any(|l: &LogicalDevice| l.domain == domain) {
                    return Err(cx.err(
                        ld,
                        SclErrorKind::Duplicate {
                            what: "logical device",
                            name: domain,
                        },
                    ));
                }
                let mut lns = Vec::new();
                for (tag, ln) in kids(ld, "LN0")
                    .map(|n| ("LN0", n))
                    .chain(kids(ld, "LN").map(|n| ("LN", n)))
                {
                    let at = crate::controls::Where {
                        ied: &name,
                        access_point: ap_name,
                        ld_inst: inst,
                    };
                    lns.push(read_ln(cx, t, comm, &at, tag, ln)?);
                }
                check_group_numbers(&lns)?;
                lds.push(LogicalDevice {
                    inst: inst.into(),
                    access_point: ap_name.into(),
                    domain,
                    logical_nodes: lns,
                });
                ld_nodes.push(ld);
            }
        }
    }
    crate::log_control::resolve_log_refs(&name, &mut lds);
    let mut out = Ied {
        name,
        manufacturer: ied.attribute("manufacturer").map(str::to_string),
        ied_type: ied.attribute("type").map(str::to_string),
        logical_devices: lds,
    };
    check_data_sets(cx, &mut out, &ld_nodes)?;
    Ok(out)
}

/// Every `Val sGroup` of an LD names one of its setting groups: 1..=`numOfSGs` of its LLN0's
/// `SettingControl` (IEC 61850-7-2 §16.2.2: groups are numbered 1..NumOfSG). An LD without a
/// `SettingControl` has no groups to switch; its `sGroup` values are kept but never served.
fn check_group_numbers(lns: &[LogicalNode]) -> Result<(), SclError> {
    fn walk(nodes: &[DataNode], max: u8) -> Result<(), SclError> {
        for n in nodes {
            if let Some(g) = n.group_values.iter().find(|g| g.group > max) {
                return Err(SclError::new(
                    SclErrorKind::BadValue {
                        element: "Val",
                        attribute: "sGroup",
                        value: g.group.to_string(),
                        why: "beyond numOfSGs of the LD's SettingControl",
                    },
                    Some(g.at),
                ));
            }
            walk(&n.children, max)?;
        }
        Ok(())
    }
    let Some(sc) = lns.iter().find_map(|l| l.setting_control.as_ref()) else {
        return Ok(());
    };
    lns.iter()
        .try_for_each(|l| walk(&l.data_objects, sc.num_of_sgs))
}

fn read_ln<'a, 'i>(
    cx: &Ctx<'i>,
    t: &Templates<'a, 'i>,
    comm: &crate::controls::CommIndex<'a, 'i>,
    at: &crate::controls::Where,
    tag: &'static str,
    ln: Node<'a, 'i>,
) -> Result<LogicalNode, SclError> {
    let ln_class = cx.req(ln, tag, "lnClass")?;
    let ln_type = cx.req(ln, tag, "lnType")?;
    let inst = if tag == "LN0" {
        ""
    } else {
        cx.req(ln, tag, "inst")?
    };
    let name = format!("{}{ln_class}{inst}", ln.attribute("prefix").unwrap_or(""));
    cx.check_name(ln, tag, "prefix, lnClass and inst", &name)?;
    let mut r = Resolver {
        cx,
        t,
        stack: Vec::new(),
    };
    let (_, ty) = r.lookup(ln, &t.ln, "LNodeType", ln_type)?;
    let mut data_objects = Vec::new();
    for d in kids(ty, "DO") {
        let n = cx.name(d, "DO", "name")?;
        let ty = cx.req(d, "DO", "type")?;
        let count = cx.num(d, "DO", "count", 0u32)?;
        data_objects.push(r.object(d, n, ty, count)?);
    }
    apply_instance_values(cx, t, ln, &mut data_objects)?;
    let mut data_sets = Vec::new();
    for ds in kids(ln, "DataSet") {
        let dn = cx.name(ds, "DataSet", "name")?.to_string();
        if data_sets.iter().any(|d: &DataSet| d.name == dn) {
            return Err(cx.err(
                ds,
                SclErrorKind::Duplicate {
                    what: "data set",
                    name: dn,
                },
            ));
        }
        data_sets.push(DataSet {
            name: dn,
            // Filled by check_data_sets once every LD is known (members may name other LDs).
            members: Vec::new(),
        });
    }
    let mut report_controls: Vec<ReportControl> = Vec::new();
    for rc in kids(ln, "ReportControl") {
        let r = crate::rcb::read(cx, rc)?;
        if report_controls.iter().any(|x| x.name == r.name) {
            return Err(cx.err(
                rc,
                SclErrorKind::Duplicate {
                    what: "ReportControl",
                    name: r.name,
                },
            ));
        }
        if let Some(ds) = &r.data_set {
            if !data_sets.iter().any(|d| &d.name == ds) {
                return Err(cx.err(
                    rc,
                    SclErrorKind::UnknownDataSet {
                        control: r.name.clone(),
                        data_set: ds.clone(),
                    },
                ));
            }
        }
        report_controls.push(r);
    }
    let controls = if tag == "LN0" {
        crate::controls::read_ln0(cx, comm, at, ln, &data_sets)?
    } else {
        Default::default()
    };
    let logs = crate::log_control::read(cx, ln, &data_sets)?;
    Ok(LogicalNode {
        name,
        ln_class: ln_class.into(),
        ln_type: ln_type.into(),
        data_objects,
        data_sets,
        report_controls,
        gse_controls: controls.gse,
        sv_controls: controls.sv,
        setting_control: controls.setting,
        log_controls: logs.controls,
        logs: logs.logs,
    })
}

/// Resolves every FCDA against the model: the member must exist with that FC
/// ([`crate::fcda::resolve`]).
fn check_data_sets(cx: &Ctx, ied: &mut Ied, ld_nodes: &[Node]) -> Result<(), SclError> {
    let mut resolved = Vec::new();
    {
        let index = crate::fcda::LnIndex::new(ied);
        for (li, ld) in ld_nodes.iter().enumerate() {
            let here = ied.logical_devices[li].inst.as_str();
            let lns = kids(*ld, "LN0").chain(kids(*ld, "LN"));
            for (ni, ln) in lns.enumerate() {
                for (di, ds) in kids(ln, "DataSet").enumerate() {
                    let ds_name = &ied.logical_devices[li].logical_nodes[ni].data_sets[di].name;
                    let members = kids(ds, "FCDA")
                        .map(|f| crate::fcda::resolve(cx, &index, here, ds_name, f))
                        .collect::<Result<Vec<_>, _>>()?;
                    resolved.push((li, ni, di, members));
                }
            }
        }
    }
    for (li, ni, di, members) in resolved {
        ied.logical_devices[li].logical_nodes[ni].data_sets[di].members = members;
    }
    Ok(())
}
