//! Initial values: the `Val` children of a DA/BDA template or of a `DAI`, and the instance
//! values an LN's `DOI`/`SDI`/`DAI` tree lays over its type (IEC 61850-6 §9.3.6, §9.5.4.3).
//!
//! Every `Val` is checked against the attribute's `bType` ([`crate::value::check`]); a `Val`
//! that does not fit is a local defect: it is ignored with a warning naming its own line (the
//! template's value, else the type's default, stays), except an xs:boolean written in
//! another case (`False`: the IOP 2019 SED), which is read ignoring case with a warning. A
//! `DOI`/`SDI`/`DAI` naming nothing in the LN's type is ignored with what it holds.

use crate::error::{SclError, SclErrorKind};
use crate::model::{DataNode, GroupValue, NodeKind};
use crate::parse::{kids, Ctx, Templates};
use crate::types::BasicType;
use crate::warning::Repair;
use crate::xml::SclAttr;
use roxmltree::Node;

/// The `Val` children of a DA, BDA or DAI: the value without `sGroup` and the value of each
/// setting group (`sGroup="n"`, IEC 61850-6 §9.3.8: one value per group for a setting).
#[derive(Default)]
pub(crate) struct Vals {
    plain: Option<String>,
    pub(crate) groups: Vec<GroupValue>,
}

impl Vals {
    fn is_empty(&self) -> bool {
        self.plain.is_none() && self.groups.is_empty()
    }

    /// The node's [`DataNode::value`]: the `Val` without `sGroup`, else the first group's.
    pub(crate) fn value(&self) -> Option<String> {
        self.plain
            .clone()
            .or_else(|| self.groups.first().map(|g| g.value.clone()))
    }
}

/// Every `Val` child of a DA, BDA or DAI (an Enum's as its `ord`), each checked against
/// `btype`. `sGroup` must be a group number of 1..=255 (`tVal` in the SCL schema: an unsigned
/// int; IEC 61850-7-2 §16 numbers groups from 1 and NumOfSG is an 8-bit unsigned), once per
/// group. A `Val` that breaks a rule is ignored with a warning at its own line.
pub(crate) fn checked(cx: &Ctx, btype: BasicType, enum_type: Option<Node>, n: Node) -> Vals {
    let mut out = Vals::default();
    for v in kids(n, "Val") {
        match one(cx, btype, enum_type, v, &out) {
            Ok((None, value)) => {
                out.plain.get_or_insert(value);
            }
            Ok((Some(group), value)) => out.groups.push(GroupValue {
                group,
                value,
                at: cx.pos(v),
            }),
            Err(e) => cx.repaired(e, Repair::ValueIgnored),
        }
    }
    out
}

/// One `Val`: its group (None without `sGroup`) and its value as the model keeps it.
fn one(
    cx: &Ctx,
    btype: BasicType,
    enum_type: Option<Node>,
    v: Node,
    so_far: &Vals,
) -> Result<(Option<u8>, String), SclError> {
    let text = v.text().unwrap_or("").trim();
    let bad_text = |why| {
        cx.err(
            v,
            SclErrorKind::BadValue {
                element: "Val",
                attribute: "(text)",
                value: text.into(),
                why,
            },
        )
    };
    let value = match (btype, enum_type) {
        (BasicType::Enum, Some(et)) => enum_ord(cx, v, et, text)?,
        // An Enum whose EnumType is missing keeps a number; a literal maps to nothing.
        (BasicType::Enum, None) if text.parse::<i64>().is_err() => return Err(bad_text(
            "a literal of an EnumType that is not in DataTypeTemplates (only a number can be kept)",
        )),
        _ => match crate::value::check(btype, text) {
            Ok(()) => text.to_string(),
            Err(why) => match (btype, crate::value::boolean_any_case(text)) {
                (BasicType::Boolean, Some(b)) => {
                    cx.repaired(bad_text(why), Repair::BooleanCaseFolded(b));
                    b.to_string()
                }
                _ => return Err(bad_text(why)),
            },
        },
    };
    let Some(g) = v.scl_attr("sGroup") else {
        return Ok((None, value));
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
    if so_far.groups.iter().any(|x| x.group == group) {
        return Err(bad("a second Val for the same setting group"));
    }
    Ok((Some(group), value))
}

/// The first `ord` of an EnumType (an Enum without a value takes it), "0" when it has none.
pub(crate) fn first_ord(et: Node) -> String {
    kids(et, "EnumVal")
        .next()
        .map(|v| v.scl_attr("ord").unwrap_or("0").trim().to_string())
        .unwrap_or_else(|| "0".into())
}

/// An Enum's value as its `ord`: a literal is looked up among the EnumType's `EnumVal`s; a
/// number is kept.
fn enum_ord(cx: &Ctx, at: Node, et: Node, literal: &str) -> Result<String, SclError> {
    if literal.parse::<i64>().is_ok() {
        return Ok(literal.to_string());
    }
    kids(et, "EnumVal")
        .find(|v| v.text().unwrap_or("").trim() == literal)
        .map(|v| v.scl_attr("ord").unwrap_or("0").trim().to_string())
        .ok_or_else(|| {
            cx.err(
                at,
                SclErrorKind::BadValue {
                    element: "Val",
                    attribute: "(text)",
                    value: literal.into(),
                    why: "not a literal of the attribute's EnumType",
                },
            )
        })
}

/// Applies the instance values of an LN (`DOI`/`SDI`/`DAI` with `Val`) to its data objects.
/// A `DOI`/`SDI`/`DAI` naming nothing in the type is ignored with a warning (OpenSCD's
/// valid2007B4.scd configures an `SDI name="pulseConfig"` its type lacks).
pub(crate) fn apply_instance_values(
    cx: &Ctx,
    t: &Templates,
    ln: Node,
    data_objects: &mut [DataNode],
) {
    fn walk(cx: &Ctx, t: &Templates, n: Node, nodes: &mut [DataNode]) {
        for c in n.children().filter(|c| c.is_element()) {
            let element = match c.tag_name().name() {
                "DOI" => "DOI",
                "SDI" => "SDI",
                "DAI" => "DAI",
                _ => continue,
            };
            let Some(name) = c.scl_attr("name") else {
                continue;
            };
            let Some(target) = nodes.iter_mut().find(|d| d.name == name) else {
                cx.repaired(
                    cx.err(
                        c,
                        SclErrorKind::UnknownInstance {
                            element,
                            name: name.into(),
                        },
                    ),
                    Repair::InstanceIgnored,
                );
                continue;
            };
            if element == "DAI" {
                let vals = match &target.kind {
                    NodeKind::Attribute { btype, type_id, .. } => {
                        let et = match (btype, type_id) {
                            (BasicType::Enum, Some(id)) => t.enums.get(id.as_str()).copied(),
                            _ => None,
                        };
                        checked(cx, *btype, et, c)
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
                walk(cx, t, c, &mut target.children);
            }
        }
    }
    walk(cx, t, ln, data_objects)
}
