//! The value tree of one MMS named variable: structures of named components down to typed
//! leaves, each leaf carrying its declared MMS type so that GetVariableAccessAttributes answers
//! with the type IEC 61850-8-1 §8.1.3.3 gives the attribute (a VisString64 is a
//! `visible-string(-64)` even while empty, a Unicode255 an `mMSString(-255)`), not one
//! guessed from the value. Every `Data` alternative of ISO 9506-2 can be a leaf; a Write must
//! bring the alternative the declared type names ([`kind_matches`]).

use gander_wire::data::Data;

use crate::service::{Component, TypeSpec};

/// A node of a named variable.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelNode {
    /// A basic attribute: its MMS type and current value.
    Leaf {
        /// The declared MMS type.
        ty: TypeSpec,
        /// The current value (same MMS kind as `ty`).
        value: Data,
    },
    /// A structure: named components in order.
    Struct(Vec<(String, ModelNode)>),
    /// An array (an SCL `count`): elements of the same type; at least one element.
    Array(Vec<ModelNode>),
}

impl ModelNode {
    /// A leaf.
    pub fn leaf(ty: TypeSpec, value: Data) -> Self {
        ModelNode::Leaf { ty, value }
    }

    /// The value as a Read returns it.
    pub fn to_data(&self) -> Data {
        match self {
            ModelNode::Leaf { value, .. } => value.clone(),
            ModelNode::Struct(c) => Data::Structure(c.iter().map(|(_, n)| n.to_data()).collect()),
            ModelNode::Array(e) => Data::Array(e.iter().map(ModelNode::to_data).collect()),
        }
    }

    /// The type description (named components, as libiec61850 answers).
    pub fn type_spec(&self) -> TypeSpec {
        match self {
            ModelNode::Leaf { ty, .. } => ty.clone(),
            ModelNode::Struct(c) => TypeSpec::Structure {
                packed: false,
                components: c
                    .iter()
                    .map(|(n, c)| Component {
                        name: Some(n.clone()),
                        ty: c.type_spec(),
                    })
                    .collect(),
            },
            ModelNode::Array(e) => TypeSpec::Array {
                packed: false,
                count: e.len() as u32,
                element: Box::new(e.first().map_or(TypeSpec::Boolean, ModelNode::type_spec)),
            },
        }
    }

    /// The component named by a `$`-joined path (empty: this node).
    pub fn find(&self, path: &str) -> Option<&ModelNode> {
        if path.is_empty() {
            return Some(self);
        }
        let mut node = self;
        for part in path.split('$') {
            node = match node {
                ModelNode::Struct(c) => &c.iter().find(|(n, _)| n == part)?.1,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Mutable [`ModelNode::find`].
    pub fn find_mut(&mut self, path: &str) -> Option<&mut ModelNode> {
        if path.is_empty() {
            return Some(self);
        }
        let mut node = self;
        for part in path.split('$') {
            node = match node {
                ModelNode::Struct(c) => &mut c.iter_mut().find(|(n, _)| n == part)?.1,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Every structure component below this node, `$`-joined after `prefix`, depth first
    /// (array elements are not named variables: IEC 61850-8-1 reaches them by alternate access).
    pub fn names(&self, prefix: &str, out: &mut Vec<String>) {
        if let ModelNode::Struct(children) = self {
            for (n, c) in children {
                let p = format!("{prefix}${n}");
                out.push(p.clone());
                c.names(&p, out);
            }
        }
    }

    /// Every leaf below this node with its `$`-joined path relative to it, depth first.
    pub fn leaves(&self) -> Vec<(String, &ModelNode)> {
        fn walk<'a>(n: &'a ModelNode, path: String, out: &mut Vec<(String, &'a ModelNode)>) {
            match n {
                ModelNode::Struct(c) => {
                    for (name, child) in c {
                        let p = if path.is_empty() {
                            name.clone()
                        } else {
                            format!("{path}${name}")
                        };
                        walk(child, p, out);
                    }
                }
                _ => out.push((path, n)),
            }
        }
        let mut out = Vec::new();
        walk(self, String::new(), &mut out);
        out
    }

    /// Replace the value of a leaf, checking the MMS kind matches the declared type (a Write
    /// of another kind is type-inconsistent, ISO 9506-2 DataAccessError 7).
    pub fn set_value(&mut self, v: Data) -> Result<(), SetError> {
        match self {
            ModelNode::Leaf { ty, value } => {
                if !kind_matches(ty, &v) {
                    return Err(SetError::TypeInconsistent);
                }
                *value = v;
                Ok(())
            }
            ModelNode::Struct(c) => {
                let Data::Structure(vs) = v else {
                    return Err(SetError::TypeInconsistent);
                };
                if vs.len() != c.len() {
                    return Err(SetError::TypeInconsistent);
                }
                // Check every component before changing any.
                let mut trial = c.clone();
                for ((_, n), d) in trial.iter_mut().zip(vs) {
                    n.set_value(d)?;
                }
                *c = trial;
                Ok(())
            }
            ModelNode::Array(e) => {
                let Data::Array(vs) = v else {
                    return Err(SetError::TypeInconsistent);
                };
                if vs.len() != e.len() {
                    return Err(SetError::TypeInconsistent);
                }
                let mut trial = e.clone();
                for (n, d) in trial.iter_mut().zip(vs) {
                    n.set_value(d)?;
                }
                *e = trial;
                Ok(())
            }
        }
    }
}

/// Why a value was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    /// The value's MMS kind (or structure shape) is not the declared type's.
    #[error("value does not match the declared MMS type")]
    TypeInconsistent,
}

/// Whether a value is of the MMS kind a type declares (sizes are not checked beyond the kind).
pub fn kind_matches(ty: &TypeSpec, v: &Data) -> bool {
    matches!(
        (ty, v),
        (TypeSpec::Boolean, Data::Boolean(_))
            | (TypeSpec::BitString(_), Data::BitString { .. })
            | (TypeSpec::Integer(_), Data::Integer(_))
            | (TypeSpec::Unsigned(_), Data::Unsigned(_))
            | (
                TypeSpec::FloatingPoint {
                    format_width: 32,
                    ..
                },
                Data::FloatingPoint32(_)
            )
            | (
                TypeSpec::FloatingPoint {
                    format_width: 64,
                    ..
                },
                Data::FloatingPoint64(_)
            )
            | (TypeSpec::OctetString(_), Data::OctetString(_))
            | (TypeSpec::VisibleString(_), Data::VisibleString(_))
            | (TypeSpec::GeneralizedTime, Data::GeneralizedTime(_))
            | (TypeSpec::BinaryTime(_), Data::BinaryTime(_))
            | (TypeSpec::Bcd(_), Data::Bcd(_))
            | (TypeSpec::ObjId, Data::ObjId(_))
            | (TypeSpec::MmsString(_), Data::MmsString(_))
            | (TypeSpec::UtcTime, Data::UtcTime(_))
    ) || matches!(
        // ISO 9506-2: a booleanArray value is a packed array of booleans.
        (ty, v),
        (TypeSpec::Array { packed: true, element, .. }, Data::BooleanArray { .. })
            if **element == TypeSpec::Boolean
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_must_bring_the_declared_alternative() {
        // Unicode255 is an mMSString; a visible-string of the same text is another type.
        let mut n = ModelNode::leaf(TypeSpec::MmsString(-255), Data::MmsString(String::new()));
        assert_eq!(n.set_value(Data::MmsString("\u{3a9}".into())), Ok(()));
        assert_eq!(n.to_data(), Data::MmsString("\u{3a9}".into()));
        assert_eq!(
            n.set_value(Data::VisibleString("x".into())),
            Err(SetError::TypeInconsistent)
        );
        for (ty, ok, bad) in [
            (
                TypeSpec::GeneralizedTime,
                Data::GeneralizedTime("20261126120000Z".into()),
                Data::UtcTime([0; 8]),
            ),
            (TypeSpec::Bcd(4), Data::Bcd(1234), Data::Unsigned(1234)),
            (
                TypeSpec::ObjId,
                Data::ObjId(vec![0x28, 0x01]),
                Data::OctetString(vec![]),
            ),
            (
                TypeSpec::Array {
                    packed: true,
                    count: 3,
                    element: Box::new(TypeSpec::Boolean),
                },
                Data::BooleanArray {
                    unused_bits: 5,
                    bytes: vec![0xa0],
                },
                Data::BitString {
                    unused_bits: 5,
                    bytes: vec![0xa0],
                },
            ),
        ] {
            assert!(kind_matches(&ty, &ok), "{ty:?}");
            assert!(!kind_matches(&ty, &bad), "{ty:?}");
        }
    }
}
