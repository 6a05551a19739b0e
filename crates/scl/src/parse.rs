//! Reading the XML: the IED sections and the DataTypeTemplates they refer to (IEC 61850-6 §9:
//! `IED/AccessPoint/Server/LDevice/LN0|LN`, `DataSet/FCDA`, `ReportControl`; §9.5 templates
//! `LNodeType/DO`, `DOType/SDO|DA`, `DAType/BDA`, `EnumType`).
//!
//! Elements of other namespaces (`Private` extensions, vendor tools' own) are skipped; elements
//! of the SCL namespace or of none are read, since some tools write SCL without a namespace
//! (and of the 2006 draft's, in a file whose root is in it: [`crate::namespace`]). Initial
//! values are read in [`crate::vals`]; the Communication section in `controls` and `comm_ip`.
//!
//! Each IED is read on its own. A defect local to one element is repaired where it is found
//! and recorded in the context's [`Diag`] (an LN or a component left out, a member dropped,
//! a value ignored: docs/scl.md, "Repairs"); what makes the model meaningless or its MMS names
//! ambiguous (duplicates, no LDevice at all) is an `Err` that refuses the IED.

use crate::error::{Position, SclError, SclErrorKind};
use crate::model::*;
use crate::types::{BasicType, Fc};
use crate::warning::{Diag, Repair};
use crate::xml::SclAttr;
use roxmltree::Node;
use std::collections::HashMap;

/// The SCL namespace (IEC 61850-6).
pub const SCL_NS: &str = "http://www.iec.ch/61850/2003/SCL";

/// The one foreign root namespace read as SCL, under a named quirk: an IEC 61850-6 draft's
/// `http://www.iec.ch/61850/2006/SCL`, which rapid61850's Eclipse EMF SCL model (and the
/// files generated or edited with it, such as its `LEx2GOOSE.scd`) writes. Its element and
/// attribute names are those of the 2003 namespace. Any other namespace stays refused.
pub const SCL_NS_DRAFT_2006: &str = "http://www.iec.ch/61850/2006/SCL";

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
    /// The repairs made in the IED being read.
    pub(crate) diag: Diag,
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
        Ctx {
            text,
            line_starts,
            diag: Diag::default(),
        }
    }

    /// Records that `error` was repaired by `repair` in the IED being read.
    pub(crate) fn repaired(&self, error: SclError, repair: Repair) {
        self.diag.repaired(error, repair);
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
        n.scl_attr(attribute)
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
        match n.scl_attr(attribute) {
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
        match n.scl_attr(attribute) {
            None => Ok(default),
            // xs:boolean.
            Some("true") | Some("1") => Ok(true),
            Some("false") | Some("0") => Ok(false),
            Some(v) => {
                let e = self.err(
                    n,
                    SclErrorKind::BadValue {
                        element,
                        attribute,
                        value: v.into(),
                        why: "expected true or false (xs:boolean is lower-case)",
                    },
                );
                // `True`/`FALSE`: the intent is plain; read it and say so.
                match crate::value::boolean_any_case(v) {
                    Some(b) => {
                        self.repaired(e, Repair::BooleanCaseFolded(b));
                        Ok(b)
                    }
                    None => Err(e),
                }
            }
        }
    }
}

/// SCL-namespace (or namespace-less) element children named `tag`. In a file whose root is in
/// the draft namespace [`SCL_NS_DRAFT_2006`] (read under its quirk, with a warning), that
/// namespace is SCL's; in any other file it is foreign like a vendor's.
pub(crate) fn kids<'a, 'i>(
    n: Node<'a, 'i>,
    tag: &'a str,
) -> impl Iterator<Item = Node<'a, 'i>> + 'a {
    let draft = n.document().root_element().tag_name().namespace() == Some(SCL_NS_DRAFT_2006);
    n.children().filter(move |c| {
        c.is_element()
            && c.tag_name().name() == tag
            && c.tag_name()
                .namespace()
                .is_none_or(|ns| ns == SCL_NS || (draft && ns == SCL_NS_DRAFT_2006))
    })
}

pub(crate) struct Templates<'a, 'i> {
    ln: HashMap<&'a str, Node<'a, 'i>>,
    pub(crate) dos: HashMap<&'a str, Node<'a, 'i>>,
    pub(crate) das: HashMap<&'a str, Node<'a, 'i>>,
    pub(crate) enums: HashMap<&'a str, Node<'a, 'i>>,
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

pub(crate) struct Resolver<'t, 'a, 'i, 'c> {
    pub(crate) cx: &'c Ctx<'i>,
    pub(crate) t: &'t Templates<'a, 'i>,
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

    /// Builds one component (`element` `c`, inside `parent`); when it cannot be built, it is
    /// left out with a warning and the rest of its parent is built (docs/scl.md, "Repairs").
    fn component(
        &mut self,
        c: Node,
        element: &'static str,
        parent: &'static str,
        build: impl FnOnce(&mut Self) -> Result<DataNode, SclError>,
    ) -> Option<DataNode> {
        let depth = self.stack.len();
        match build(self) {
            Ok(n) => Some(n),
            Err(e) => {
                // An error deep inside left its types on the stack.
                self.stack.truncate(depth);
                self.cx.repaired(
                    e,
                    Repair::ComponentLeftOut {
                        element,
                        name: c.scl_attr("name").unwrap_or("(unnamed)").into(),
                        parent,
                    },
                );
                None
            }
        }
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

    /// The data objects of LNodeType `ty`, each built on its own: one that cannot be built is
    /// left out with a warning.
    pub(crate) fn data_objects(&mut self, ty: Node<'a, 'i>) -> Vec<DataNode> {
        kids(ty, "DO")
            .filter_map(|d| {
                self.component(d, "DO", "logical node", |r| {
                    let n = r.cx.name(d, "DO", "name")?;
                    let t = r.cx.req(d, "DO", "type")?;
                    let count = r.cx.num(d, "DO", "count", 0u32)?;
                    r.object(d, n, t, count)
                })
            })
            .collect()
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
            let built = match c.tag_name().name() {
                "SDO" => self.component(c, "SDO", "DOType", |r| {
                    let n = r.cx.name(c, "SDO", "name")?;
                    let t = r.cx.req(c, "SDO", "type")?;
                    let count = r.cx.num(c, "SDO", "count", 0u32)?;
                    r.object(c, n, t, count)
                }),
                "DA" => self.component(c, "DA", "DOType", |r| r.attribute(c, "DA", None)),
                _ => None,
            };
            children.extend(built);
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
        let type_id = c.scl_attr("type");
        let mut children = Vec::new();
        let mut value = None;
        let mut group_values = Vec::new();
        match btype {
            BasicType::Struct => {
                let tid = self.cx.req(c, element, "type")?;
                let (id, ty) = self.lookup(c, &self.t.das, "DAType", tid)?;
                self.enter(c, "DAType", id)?;
                for b in kids(ty, "BDA") {
                    children.extend(
                        self.component(b, "BDA", "DAType", |r| r.attribute(b, "BDA", Some(fc))),
                    );
                }
                self.stack.pop();
            }
            BasicType::Enum => {
                let tid = self.cx.req(c, element, "type")?;
                // A missing EnumType leaves the attribute an Enum without literals (OpenSCD's
                // valid2003.scd names EnumType "Beh", which it does not define).
                let et = match self.lookup(c, &self.t.enums, "EnumType", tid) {
                    Ok((_, et)) => Some(et),
                    Err(e) => {
                        self.cx.repaired(e, Repair::EnumWithoutType);
                        None
                    }
                };
                let vals = crate::vals::checked(self.cx, btype, et, c);
                value = match (vals.value(), et) {
                    (Some(v), _) => Some(v),
                    (None, Some(et)) => Some(crate::vals::first_ord(et)),
                    (None, None) => None,
                };
                group_values = vals.groups;
            }
            _ => {
                let vals = crate::vals::checked(self.cx, btype, None, c);
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

/// Reads every IED of the file, each on its own: the valid ones (each with the warnings of
/// the repairs made in it) and the refused ones with their error (naming the IED).
pub(crate) fn read(text: &str) -> Result<(Vec<Ied>, Vec<crate::RefusedIed>), SclError> {
    let prepared = crate::xml::prepare(text)?;
    let doc = prepared.document()?;
    let text: &str = &prepared.text;
    let cx = Ctx::new(text);
    let root = doc.root_element();
    let quirk = crate::namespace::check_root(root).map_err(|k| cx.err(root, k))?;
    let t = Templates::read(&cx, root)?;
    let comm = crate::controls::CommIndex::read(root);
    let mut ieds: Vec<Ied> = Vec::new();
    let mut refused: Vec<crate::RefusedIed> = Vec::new();
    for ied in kids(root, "IED") {
        let name = ied.scl_attr("name").unwrap_or("(unnamed)");
        // Each IED's warnings are its own; a file-wide quirk is said on every IED, since
        // every IED was read under it.
        cx.diag.take();
        if let Some((kind, repair)) = &quirk {
            cx.repaired(cx.err(root, kind.clone()), repair.clone());
        }
        for (e, repair) in &prepared.repairs {
            cx.repaired(e.clone(), repair.clone());
        }
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
            Ok(mut i) => {
                i.warnings = cx.diag.take();
                ieds.push(i)
            }
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
    // The LN elements of every LD, parallel to its `logical_nodes` (an LN left out has none).
    let mut ln_nodes: Vec<Vec<Node>> = Vec::new();
    // The schema's tServer has one LDevice or more. An empty Server beside one that has LDs
    // (sp_multiple_access_points.icd's second access point) serves nothing: a warning. An
    // IED whose Servers hold no LDevice at all has no model: refused. An IED without any
    // Server (a client only) is valid and has no LDs.
    let mut empty_server = None;
    let mut empty_ld = None;
    for ap in kids(ied, "AccessPoint") {
        let ap_name = cx.req(ap, "AccessPoint", "name")?;
        for ld in kids(ap, "LDevice") {
            cx.repaired(
                cx.err(
                    ld,
                    SclErrorKind::MissingElement {
                        element: "AccessPoint",
                        child: "Server",
                    },
                ),
                Repair::LDeviceOutsideServer {
                    access_point: ap_name.into(),
                    ld: ld.scl_attr("inst").unwrap_or("?").into(),
                },
            );
        }
        for server in kids(ap, "Server") {
            if kids(server, "LDevice").next().is_none() {
                let e = cx.err(
                    server,
                    SclErrorKind::MissingElement {
                        element: "Server",
                        child: "LDevice",
                    },
                );
                empty_server.get_or_insert(e.clone());
                cx.repaired(
                    e,
                    Repair::EmptyServerIgnored {
                        access_point: ap_name.into(),
                    },
                );
            }
            for ld in kids(server, "LDevice") {
                let inst = cx.req(ld, "LDevice", "inst")?;
                let domain = ld
                    .scl_attr("ldName")
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
                let mut lns: Vec<LogicalNode> = Vec::new();
                let mut nodes = Vec::new();
                for (tag, ln) in kids(ld, "LN0")
                    .map(|n| ("LN0", n))
                    .chain(kids(ld, "LN").map(|n| ("LN", n)))
                {
                    let at = crate::controls::Where {
                        ied: &name,
                        access_point: ap_name,
                        ld_inst: inst,
                    };
                    let Some(l) = read_ln(cx, t, comm, &at, tag, ln)? else {
                        continue;
                    };
                    // IEC 61850-8-1 §8.1.3.2: the LN name is its MMS variable in the domain;
                    // two LNs of one name would be one variable.
                    if lns.iter().any(|x| x.name == l.name) {
                        return Err(cx.err(
                            ln,
                            SclErrorKind::Duplicate {
                                what: "logical node",
                                name: l.name,
                            },
                        ));
                    }
                    lns.push(l);
                    nodes.push(ln);
                }
                if lns.is_empty() {
                    let e = cx.err(
                        ld,
                        SclErrorKind::NoBuildableLn {
                            ld: domain.clone(),
                            last: false,
                        },
                    );
                    empty_ld.get_or_insert(e.clone());
                    cx.repaired(e, Repair::LogicalDeviceLeftOut { ld: domain });
                    continue;
                }
                crate::groups::check_group_numbers(cx, &mut lns);
                lds.push(LogicalDevice {
                    inst: inst.into(),
                    access_point: ap_name.into(),
                    domain,
                    logical_nodes: lns,
                });
                ln_nodes.push(nodes);
            }
        }
    }
    // Servers that had LDevices of which none could be built serve nothing: refused as an
    // empty Server is.
    if let (true, Some(mut e)) = (lds.is_empty(), empty_server.or(empty_ld)) {
        if let SclErrorKind::NoBuildableLn { last, .. } = &mut e.kind {
            *last = true;
        }
        return Err(e);
    }
    crate::log_control::resolve_log_refs(&name, &mut lds);
    let mut out = Ied {
        name,
        manufacturer: ied.scl_attr("manufacturer").map(str::to_string),
        ied_type: ied.scl_attr("type").map(str::to_string),
        logical_devices: lds,
        warnings: Vec::new(),
    };
    check_data_sets(cx, &mut out, &ln_nodes);
    Ok(out)
}

/// Reads one LN, or None when it cannot be built (no `lnClass`/`lnType`/`inst`, a name that
/// is no MMS name component, an `LNodeType` missing from the templates): it is left out with
/// a warning. Defects inside it are repaired where they are; two data sets or control blocks
/// of one name refuse the IED (they would be one MMS name).
fn read_ln<'a, 'i>(
    cx: &Ctx<'i>,
    t: &Templates<'a, 'i>,
    comm: &crate::controls::CommIndex<'a, 'i>,
    at: &crate::controls::Where,
    tag: &'static str,
    ln: Node<'a, 'i>,
) -> Result<Option<LogicalNode>, SclError> {
    let mut r = Resolver {
        cx,
        t,
        stack: Vec::new(),
    };
    let head = (|| {
        let ln_class = cx.req(ln, tag, "lnClass")?;
        let ln_type = cx.req(ln, tag, "lnType")?;
        let inst = if tag == "LN0" {
            ""
        } else {
            cx.req(ln, tag, "inst")?
        };
        let name = format!("{}{ln_class}{inst}", ln.scl_attr("prefix").unwrap_or(""));
        cx.check_name(ln, tag, "prefix, lnClass and inst", &name)?;
        let (_, ty) = r.lookup(ln, &t.ln, "LNodeType", ln_type)?;
        Ok((ln_class, ln_type, name, ty))
    })();
    if let (Ok((_, _, name, _)), "LN", Some("")) = (&head, tag, ln.scl_attr("inst")) {
        cx.repaired(
            cx.err(
                ln,
                SclErrorKind::BadValue {
                    element: "LN",
                    attribute: "inst",
                    value: String::new(),
                    why: "not 1 to 12 digits",
                },
            ),
            Repair::EmptyLnInst { ln: name.clone() },
        );
    }
    let (ln_class, ln_type, name, ty) = match head {
        Ok(h) => h,
        Err(e) => {
            let known = format!(
                "{}{}{}",
                ln.scl_attr("prefix").unwrap_or(""),
                ln.scl_attr("lnClass").unwrap_or("?"),
                ln.scl_attr("inst").unwrap_or("")
            );
            cx.repaired(
                e,
                Repair::LogicalNodeLeftOut {
                    ld: at.ld_inst.into(),
                    ln: known,
                },
            );
            return Ok(None);
        }
    };
    let mut data_objects = r.data_objects(ty);
    crate::vals::apply_instance_values(cx, t, ln, &mut data_objects);
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
    let report_controls = crate::rcb::read_all(cx, ln, &data_sets)?;
    let controls = if tag == "LN0" {
        crate::controls::read_ln0(cx, comm, at, ln, &data_sets)?
    } else {
        Default::default()
    };
    let logs = crate::log_control::read(cx, ln, &data_sets)?;
    Ok(Some(LogicalNode {
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
    }))
}

/// Resolves every FCDA against the model ([`crate::fcda::resolve`]): a member that names
/// nothing with its FC is left out of its data set with a warning.
fn check_data_sets(cx: &Ctx, ied: &mut Ied, ln_nodes: &[Vec<Node>]) {
    let mut resolved = Vec::new();
    {
        let index = crate::fcda::LnIndex::new(ied);
        for (li, lns) in ln_nodes.iter().enumerate() {
            let here = ied.logical_devices[li].inst.as_str();
            for (ni, ln) in lns.iter().enumerate() {
                for (di, ds) in kids(*ln, "DataSet").enumerate() {
                    let ds_name = &ied.logical_devices[li].logical_nodes[ni].data_sets[di].name;
                    let mut members = Vec::new();
                    for f in kids(ds, "FCDA") {
                        match crate::fcda::resolve(cx, &index, here, ds_name, f) {
                            Ok(m) => members.push(m),
                            Err(e) => cx.repaired(
                                e,
                                Repair::MemberDropped {
                                    data_set: ds_name.clone(),
                                },
                            ),
                        }
                    }
                    resolved.push((li, ni, di, members));
                }
            }
        }
    }
    for (li, ni, di, members) in resolved {
        ied.logical_devices[li].logical_nodes[ni].data_sets[di].members = members;
    }
}
