//! The directory services of gander's server model: Identify, GetNameList,
//! GetVariableAccessAttributes and GetNamedVariableListAttributes over the fixed model, so
//! a client (gander's or libiec61850's) can discover it like any IED.
//!
//! Types are derived from the values the model holds, with libiec61850 1.6.1's sizes for the
//! IEC 61850 types involved (captured, `docs/mms-services.md`): Quality `BitString(-13)`,
//! VisibleString129 `VisibleString(-129)`, INT32U `Unsigned(32)`, FLOAT32 `{32, 8}`, OptFlds
//! `BitString(-10)`, TrgOps `BitString(-6)`, SqNum of a URCB `Unsigned(8)`.

use gander_wire::data::Data;

use super::{ImpModel, Node, DATA_SET_ITEM, DOMAIN, DS1_MEMBERS};
use crate::service::{
    Component, GetNamedVariableListAttributesResponse, GetVariableAccessAttributesResponse,
    IdentifyResponse, ObjectClass, ObjectName, ObjectScope, ServiceError, TypeSpec,
};

/// ISO 9506-2 ServiceError `access` / `object-non-existent` (class 7, code 2).
pub(super) fn non_existent() -> ServiceError {
    ServiceError::new(ServiceError::CLASS_ACCESS, 2)
}

fn type_of(name: &str, d: &Data) -> TypeSpec {
    match d {
        Data::Array(v) => TypeSpec::Array {
            packed: false,
            count: v.len() as u32,
            element: Box::new(v.first().map_or(TypeSpec::Boolean, |e| type_of("", e))),
        },
        Data::Structure(v) => TypeSpec::Structure {
            packed: false,
            components: v
                .iter()
                .map(|e| Component {
                    name: None,
                    ty: type_of("", e),
                })
                .collect(),
        },
        Data::Boolean(_) => TypeSpec::Boolean,
        Data::BitString { unused_bits, bytes } => {
            TypeSpec::BitString(-((bytes.len() * 8) as i32 - *unused_bits as i32))
        }
        Data::Integer(_) => TypeSpec::Integer(32),
        Data::Unsigned(_) if name == "SqNum" => TypeSpec::Unsigned(8),
        Data::Unsigned(_) => TypeSpec::Unsigned(32),
        Data::FloatingPoint32(_) => TypeSpec::FloatingPoint {
            format_width: 32,
            exponent_width: 8,
        },
        Data::FloatingPoint64(_) => TypeSpec::FloatingPoint {
            format_width: 64,
            exponent_width: 11,
        },
        Data::OctetString(v) => TypeSpec::OctetString(-(v.len().min(i32::MAX as usize) as i32)),
        Data::VisibleString(_) => TypeSpec::VisibleString(-129),
        Data::BinaryTime(v) => TypeSpec::BinaryTime(v.len() == 6),
        Data::UtcTime(_) => TypeSpec::UtcTime,
        // Not in the fixed model; typed as IEC 61850-8-1 and ISO 9506-2 name them.
        Data::MmsString(_) => TypeSpec::MmsString(-255),
        Data::GeneralizedTime(_) => TypeSpec::GeneralizedTime,
        Data::Bcd(_) => TypeSpec::Bcd(20),
        Data::ObjId(_) => TypeSpec::ObjId,
        // ISO 9506-2:1990's `real` has no type description of its own since 2003; a double is
        // the closest one a client can read.
        Data::Real(_) => TypeSpec::FloatingPoint {
            format_width: 64,
            exponent_width: 11,
        },
        Data::BooleanArray { unused_bits, bytes } => TypeSpec::Array {
            packed: true,
            count: (bytes.len() * 8).saturating_sub(*unused_bits as usize) as u32,
            element: Box::new(TypeSpec::Boolean),
        },
    }
}

impl Node {
    fn type_spec(&self, name: &str) -> TypeSpec {
        match self {
            Node::Leaf(d) => type_of(name, d),
            Node::Branch(children) => TypeSpec::Structure {
                packed: false,
                components: children
                    .iter()
                    .map(|(n, c)| Component {
                        name: Some((*n).to_string()),
                        ty: c.type_spec(n),
                    })
                    .collect(),
            },
        }
    }

    fn names(&self, prefix: &str, out: &mut Vec<String>) {
        if let Node::Branch(children) = self {
            for (n, c) in children {
                let p = if prefix.is_empty() {
                    (*n).to_string()
                } else {
                    format!("{prefix}${n}")
                };
                out.push(p.clone());
                c.names(&p, out);
            }
        }
    }
}

impl ImpModel {
    pub(super) fn identify(&self) -> IdentifyResponse {
        IdentifyResponse {
            vendor: "gander".into(),
            model: "gander-mms".into(),
            revision: env!("CARGO_PKG_VERSION").into(),
            abstract_syntaxes: None,
        }
    }

    /// Every name of the class in the scope, sorted (so `$`-joined children follow their
    /// parent, as in libiec61850's answers).
    pub(super) fn name_list(
        &self,
        class: ObjectClass,
        scope: &ObjectScope,
    ) -> Result<Vec<String>, ServiceError> {
        let mut out = match (class, scope) {
            (ObjectClass::DOMAIN, ObjectScope::Vmd) => vec![DOMAIN.to_string()],
            (ObjectClass::NAMED_VARIABLE, ObjectScope::Domain(d)) if d == DOMAIN => {
                let mut v = Vec::new();
                self.domain_tree().names("", &mut v);
                v
            }
            (ObjectClass::NAMED_VARIABLE_LIST, ObjectScope::Domain(d)) if d == DOMAIN => {
                vec![DATA_SET_ITEM.to_string()]
            }
            (_, ObjectScope::Domain(d)) if d != DOMAIN => return Err(non_existent()),
            _ => Vec::new(),
        };
        out.sort();
        Ok(out)
    }

    pub(super) fn variable_access_attributes(
        &self,
        name: &ObjectName,
    ) -> Result<GetVariableAccessAttributesResponse, ServiceError> {
        match name {
            ObjectName::DomainSpecific { domain, item } if domain == DOMAIN => {
                let tree = self.domain_tree();
                let node = tree.find(item).ok_or_else(non_existent)?;
                let last = item.rsplit('$').next().unwrap_or(item);
                Ok(GetVariableAccessAttributesResponse {
                    deletable: false,
                    type_spec: node.type_spec(last),
                })
            }
            _ => Err(non_existent()),
        }
    }

    pub(super) fn named_variable_list_attributes(
        &self,
        name: &ObjectName,
    ) -> Result<GetNamedVariableListAttributesResponse, ServiceError> {
        match name {
            ObjectName::DomainSpecific { domain, item }
                if domain == DOMAIN && item == DATA_SET_ITEM =>
            {
                Ok(GetNamedVariableListAttributesResponse {
                    deletable: false,
                    members: DS1_MEMBERS
                        .iter()
                        .map(|m| ObjectName::domain(DOMAIN, *m).into())
                        .collect(),
                    access_control_list: None,
                })
            }
            _ => Err(non_existent()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelConfig, RCB_ITEM};
    use crate::rcb_plan::{RcbRef, RcbSnapshot};
    use crate::service::TypeSpec;

    #[test]
    fn directory_describes_the_model() {
        let m = ImpModel::new(ModelConfig::default());
        assert_eq!(
            m.name_list(ObjectClass::DOMAIN, &ObjectScope::Vmd).unwrap(),
            [DOMAIN]
        );
        let vars = m
            .name_list(
                ObjectClass::NAMED_VARIABLE,
                &ObjectScope::Domain(DOMAIN.into()),
            )
            .unwrap();
        assert!(vars.contains(&"GGIO1$ST$Ind1$stVal".to_string()));
        assert!(vars.contains(&RCB_ITEM.to_string()));
        let mut sorted = vars.clone();
        sorted.sort();
        assert_eq!(vars, sorted);
        assert!(m
            .name_list(
                ObjectClass::NAMED_VARIABLE,
                &ObjectScope::Domain("X".into())
            )
            .is_err());
        let t = m
            .variable_access_attributes(&ObjectName::domain(DOMAIN, "GGIO1"))
            .unwrap()
            .type_spec;
        assert_eq!(t.at_path("ST$Ind1$q"), Some(&TypeSpec::BitString(-13)));
        assert_eq!(
            t.at_path("MX$AnIn1$mag$f"),
            Some(&TypeSpec::FloatingPoint {
                format_width: 32,
                exponent_width: 8
            })
        );
        let fcs: Vec<&str> = t.data_attributes().iter().map(|a| a.fc).collect();
        assert!(fcs.contains(&"ST") && fcs.contains(&"MX"));
        // The RCB's type names its components, which the planner can use.
        let rcb = RcbRef::parse(DOMAIN, RCB_ITEM).unwrap();
        let ty = m
            .variable_access_attributes(&rcb.object_name())
            .unwrap()
            .type_spec;
        assert_eq!(ty.component("SqNum"), Some(&TypeSpec::Unsigned(8)));
        assert_eq!(ty.component("OptFlds"), Some(&TypeSpec::BitString(-10)));
        let snap = RcbSnapshot::from_type_and_value(rcb, &ty, &m.rcb().to_data()).unwrap();
        snap.check_free().unwrap();
        let ds = m
            .named_variable_list_attributes(&ObjectName::domain(DOMAIN, DATA_SET_ITEM))
            .unwrap();
        assert_eq!(ds.members.len(), DS1_MEMBERS.len());
        assert!(m
            .variable_access_attributes(&ObjectName::domain(DOMAIN, "NOPE"))
            .is_err());
    }
}
