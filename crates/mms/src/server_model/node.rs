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
                if !size_fits(ty, &v) {
                    return Err(SetError::OutOfRange);
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
    /// The value is of the declared kind but does not fit its size: an integer wider than
    /// its bits, a string or bit string longer than the type allows.
    #[error("value does not fit the declared MMS type's size")]
    OutOfRange,
}

impl SetError {
    /// The DataAccessError a Write answers (ISO 9506-2 7.3.2): type-inconsistent (7) for
    /// another kind, object-value-invalid (11) for a value outside the type's range, as
    /// libiec61850's server answers a value its model cannot hold.
    pub fn data_access_error(self) -> crate::service::DataAccessError {
        match self {
            SetError::TypeInconsistent => crate::service::DataAccessError::TYPE_INCONSISTENT,
            SetError::OutOfRange => crate::service::DataAccessError::OBJECT_VALUE_INVALID,
        }
    }
}

/// Whether a value of the declared kind fits the type's size (ISO 9506-2 14.1 TypeSpecification):
/// `integer(n)` / `unsigned(n)` hold n-bit two's-complement / binary values; a negative size of
/// a string or bit string is a maximum (varying), a positive one an exact size for bit strings
/// and a maximum for strings (a fixed-size string shorter than its size is padded by senders
/// in practice; none longer is accepted). An mMSString's size counts characters.
fn size_fits(ty: &TypeSpec, v: &Data) -> bool {
    fn at_most(size: i32, n: usize) -> bool {
        n <= size.unsigned_abs() as usize
    }
    match (ty, v) {
        (TypeSpec::Integer(bits), Data::Integer(i)) => match *bits {
            1..=63 => {
                let half = 1i64 << (bits - 1);
                (-half..half).contains(i)
            }
            _ => true,
        },
        (TypeSpec::Unsigned(bits), Data::Unsigned(u)) => match *bits {
            1..=63 => *u < (1u64 << bits),
            _ => true,
        },
        (TypeSpec::VisibleString(size), Data::VisibleString(s)) => at_most(*size, s.len()),
        (TypeSpec::OctetString(size), Data::OctetString(o)) => at_most(*size, o.len()),
        (TypeSpec::MmsString(size), Data::MmsString(s)) => at_most(*size, s.chars().count()),
        (
            TypeSpec::BitString(size),
            Data::BitString {
                unused_bits, bytes, ..
            },
        ) => {
            let bits = (bytes.len() * 8).saturating_sub(usize::from(*unused_bits));
            if *size >= 0 {
                bits == *size as usize
            } else {
                at_most(*size, bits)
            }
        }
        _ => true,
    }
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
    fn writes_must_fit_the_declared_size() {
        // Found with libiec61850's client: 1000 written to an integer(8) ctlModel was stored
        // and read back, a value the type description the server gives cannot hold.
        let mut n = ModelNode::leaf(TypeSpec::Integer(8), Data::Integer(1));
        assert_eq!(n.set_value(Data::Integer(1000)), Err(SetError::OutOfRange));
        assert_eq!(n.set_value(Data::Integer(-129)), Err(SetError::OutOfRange));
        assert_eq!(
            n.to_data(),
            Data::Integer(1),
            "a refused write changes nothing"
        );
        assert_eq!(n.set_value(Data::Integer(-128)), Ok(()));
        assert_eq!(n.set_value(Data::Integer(127)), Ok(()));
        let mut n = ModelNode::leaf(TypeSpec::Integer(64), Data::Integer(0));
        assert_eq!(n.set_value(Data::Integer(i64::MIN)), Ok(()));
        let mut n = ModelNode::leaf(TypeSpec::Unsigned(16), Data::Unsigned(0));
        assert_eq!(
            n.set_value(Data::Unsigned(65_536)),
            Err(SetError::OutOfRange)
        );
        assert_eq!(n.set_value(Data::Unsigned(65_535)), Ok(()));
        let mut n = ModelNode::leaf(
            TypeSpec::VisibleString(-255),
            Data::VisibleString(String::new()),
        );
        assert_eq!(
            n.set_value(Data::VisibleString("x".repeat(256))),
            Err(SetError::OutOfRange)
        );
        assert_eq!(n.set_value(Data::VisibleString("x".repeat(255))), Ok(()));
        // Unicode255 counts characters, not octets.
        let mut n = ModelNode::leaf(TypeSpec::MmsString(-255), Data::MmsString(String::new()));
        assert_eq!(n.set_value(Data::MmsString("\u{3a9}".repeat(255))), Ok(()));
        assert_eq!(
            n.set_value(Data::MmsString("\u{3a9}".repeat(256))),
            Err(SetError::OutOfRange)
        );
        let mut n = ModelNode::leaf(TypeSpec::OctetString(-64), Data::OctetString(Vec::new()));
        assert_eq!(
            n.set_value(Data::OctetString(vec![0; 65])),
            Err(SetError::OutOfRange)
        );
        // Quality: bit-string(13), fixed; a varying one takes up to its size.
        let q = |bits: usize| Data::BitString {
            unused_bits: ((8 - bits % 8) % 8) as u8,
            bytes: vec![0; bits.div_ceil(8)],
        };
        let mut n = ModelNode::leaf(TypeSpec::BitString(13), q(13));
        assert_eq!(n.set_value(q(13)), Ok(()));
        assert_eq!(n.set_value(q(16)), Err(SetError::OutOfRange));
        assert_eq!(n.set_value(q(12)), Err(SetError::OutOfRange));
        let mut n = ModelNode::leaf(TypeSpec::BitString(-10), q(10));
        assert_eq!(n.set_value(q(6)), Ok(()));
        assert_eq!(n.set_value(q(11)), Err(SetError::OutOfRange));
        assert_eq!(
            SetError::OutOfRange.data_access_error(),
            crate::service::DataAccessError::OBJECT_VALUE_INVALID
        );
    }

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
