//! Shared productions of ISO 9506-2: ObjectName (clause 7.5.2 of 9506-1, `ObjectName` in
//! the 9506-2 ASN.1 module), VariableAccessSpecification (14.1), AccessResult (14.4) and
//! DataAccessError (14.4.3).

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};
use gander_wire::data::Data;

use super::{ber as berr, L};
use crate::asn1;
use crate::error::{Error, Result};

/// Longest Identifier accepted. ISO 9506-2 says 32; IEC 61850-8-1 clause 8.1.3.1 raises it
/// to 64 for domain names and item names grow to 129 with `$`-joined references
/// (libiec61850's buffers).
pub const MAX_IDENTIFIER_LEN: usize = 129;
/// Most variables in one list (bounds work per PDU).
pub const MAX_LIST_LEN: usize = 1024;

/// MMS ObjectName.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ObjectName {
    /// vmd-specific [0] IMPLICIT Identifier (`80`), e.g. the report list name "RPT".
    VmdSpecific(String),
    /// domain-specific [1] IMPLICIT SEQUENCE { domainId, itemId } (`A1`): IEC 61850-8-1 maps
    /// LD to domain and `LN$FC$DO$DA` to item.
    DomainSpecific {
        /// domainId: the logical device.
        domain: String,
        /// itemId: `LN$FC$DO$DA`.
        item: String,
    },
    /// aa-specific [2] IMPLICIT Identifier (`82`).
    AaSpecific(String),
}

impl ObjectName {
    /// A domain-specific name.
    pub fn domain(domain: impl Into<String>, item: impl Into<String>) -> Self {
        ObjectName::DomainSpecific {
            domain: domain.into(),
            item: item.into(),
        }
    }

    /// Decode one ObjectName element.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let t = r.read_tlv("ObjectName").map_err(berr)?;
        match t.tag {
            0x80 => Ok(ObjectName::VmdSpecific(identifier(t.value)?)),
            0x82 => Ok(ObjectName::AaSpecific(identifier(t.value)?)),
            0xa1 => {
                let mut ir = t.reader();
                let d = ir.read_expected(0x1a, "domainId").map_err(berr)?;
                let i = ir.read_expected(0x1a, "itemId").map_err(berr)?;
                ir.expect_end("domain-specific").map_err(berr)?;
                Ok(ObjectName::DomainSpecific {
                    domain: identifier(d.value)?,
                    item: identifier(i.value)?,
                })
            }
            tag => Err(Error::UnknownCode {
                layer: L,
                what: "ObjectName",
                code: tag,
            }),
        }
    }

    /// Append the element.
    pub fn encode(&self, out: &mut dyn Sink) {
        match self {
            ObjectName::VmdSpecific(s) => asn1::tlv(out, 0x80, s.as_bytes()),
            ObjectName::AaSpecific(s) => asn1::tlv(out, 0x82, s.as_bytes()),
            ObjectName::DomainSpecific { domain, item } => asn1::nested(out, 0xa1, |o| {
                asn1::tlv(o, 0x1a, domain.as_bytes());
                asn1::tlv(o, 0x1a, item.as_bytes());
            }),
        }
    }
}

impl core::fmt::Display for ObjectName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ObjectName::VmdSpecific(s) => write!(f, "{s}"),
            ObjectName::AaSpecific(s) => write!(f, "@{s}"),
            ObjectName::DomainSpecific { domain, item } => write!(f, "{domain}/{item}"),
        }
    }
}

/// An MMS Identifier: a VisibleString of bounded length.
pub fn identifier(v: &[u8]) -> Result<String> {
    if v.len() > MAX_IDENTIFIER_LEN {
        return Err(Error::TooLarge {
            layer: L,
            what: "identifier",
            size: v.len(),
            max: MAX_IDENTIFIER_LEN,
        });
    }
    ber::visible_string(v, "identifier").map_err(berr)
}

/// VariableAccessSpecification (ISO 9506-2 14.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariableAccessSpecification {
    /// listOfVariable [0]: each entry `30 { A0 <ObjectName> }` (variableSpecification name [0]).
    ListOfVariable(Vec<ObjectName>),
    /// variableListName [1]: a named variable list (data set or "RPT").
    VariableListName(ObjectName),
}

impl VariableAccessSpecification {
    /// Decode one element (`A0` or `A1`).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let t = r.read_tlv("VariableAccessSpecification").map_err(berr)?;
        match t.tag {
            0xa0 => {
                let mut lr = t.reader();
                let mut out = Vec::new();
                while !lr.is_empty() {
                    if out.len() == MAX_LIST_LEN {
                        return Err(Error::Limit {
                            layer: L,
                            what: "too many variables in one list",
                        });
                    }
                    let e = lr
                        .read_expected(0x30, "listOfVariable entry")
                        .map_err(berr)?;
                    let mut er = e.reader();
                    let spec = er.read_tlv("variableSpecification").map_err(berr)?;
                    if spec.tag != 0xa0 {
                        return Err(Error::malformed(
                            L,
                            "variableSpecification",
                            "only the name [0] form is supported",
                        ));
                    }
                    if !er.is_empty() {
                        return Err(Error::malformed(
                            L,
                            "listOfVariable entry",
                            "alternateAccess is not supported",
                        ));
                    }
                    let mut nr = spec.reader();
                    out.push(ObjectName::decode(&mut nr)?);
                    nr.expect_end("variableSpecification").map_err(berr)?;
                }
                Ok(VariableAccessSpecification::ListOfVariable(out))
            }
            0xa1 => {
                let mut nr = t.reader();
                let n = ObjectName::decode(&mut nr)?;
                nr.expect_end("variableListName").map_err(berr)?;
                Ok(VariableAccessSpecification::VariableListName(n))
            }
            tag => Err(Error::UnknownCode {
                layer: L,
                what: "VariableAccessSpecification",
                code: tag,
            }),
        }
    }

    /// Append the element.
    pub fn encode(&self, out: &mut dyn Sink) {
        match self {
            VariableAccessSpecification::ListOfVariable(names) => asn1::nested(out, 0xa0, |o| {
                for n in names {
                    asn1::nested(o, 0x30, |o| asn1::nested(o, 0xa0, |o| n.encode(o)));
                }
            }),
            VariableAccessSpecification::VariableListName(n) => {
                asn1::nested(out, 0xa1, |o| n.encode(o))
            }
        }
    }
}

/// DataAccessError (ISO 9506-2 14.4.3), kept open: unknown codes survive a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataAccessError(pub u8);

impl DataAccessError {
    /// object-invalidated (0).
    pub const OBJECT_INVALIDATED: Self = Self(0);
    /// hardware-fault (1).
    pub const HARDWARE_FAULT: Self = Self(1);
    /// temporarily-unavailable (2): e.g. an RCB reserved by someone else or already enabled.
    pub const TEMPORARILY_UNAVAILABLE: Self = Self(2);
    /// object-access-denied (3): e.g. writing ConfRev or a status value.
    pub const OBJECT_ACCESS_DENIED: Self = Self(3);
    /// object-undefined (4).
    pub const OBJECT_UNDEFINED: Self = Self(4);
    /// invalid-address (5).
    pub const INVALID_ADDRESS: Self = Self(5);
    /// type-unsupported (6).
    pub const TYPE_UNSUPPORTED: Self = Self(6);
    /// type-inconsistent (7): the written value has the wrong type.
    pub const TYPE_INCONSISTENT: Self = Self(7);
    /// object-attribute-inconsistent (8).
    pub const OBJECT_ATTRIBUTE_INCONSISTENT: Self = Self(8);
    /// object-access-unsupported (9).
    pub const OBJECT_ACCESS_UNSUPPORTED: Self = Self(9);
    /// object-non-existent (10).
    pub const OBJECT_NON_EXISTENT: Self = Self(10);
    /// object-value-invalid (11).
    pub const OBJECT_VALUE_INVALID: Self = Self(11);

    fn decode(v: &[u8]) -> Result<Self> {
        let n = ber::decode_u64(v, "DataAccessError").map_err(berr)?;
        u8::try_from(n)
            .map(DataAccessError)
            .map_err(|_| Error::malformed(L, "DataAccessError", "value out of range"))
    }
}

/// AccessResult (ISO 9506-2 14.4): `failure [0] IMPLICIT DataAccessError` or `success Data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessResult {
    /// The value.
    Success(Data),
    /// Why it could not be read.
    Failure(DataAccessError),
}

impl AccessResult {
    /// Decode one element.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        if r.peek_tag() == Some(0x80) {
            let t = r.read_tlv("AccessResult failure").map_err(berr)?;
            return Ok(AccessResult::Failure(DataAccessError::decode(t.value)?));
        }
        Ok(AccessResult::Success(Data::decode(r, 0).map_err(berr)?))
    }

    /// Decode elements until `r` is exhausted, at most [`MAX_LIST_LEN`].
    pub fn decode_list(r: &mut Reader<'_>) -> Result<Vec<Self>> {
        let mut out = Vec::new();
        while !r.is_empty() {
            if out.len() == MAX_LIST_LEN {
                return Err(Error::Limit {
                    layer: L,
                    what: "too many access results",
                });
            }
            out.push(AccessResult::decode(r)?);
        }
        Ok(out)
    }

    /// Append the element.
    pub fn encode(&self, out: &mut dyn Sink) {
        match self {
            AccessResult::Success(d) => out.put(d),
            AccessResult::Failure(e) => asn1::uint(out, 0x80, e.0 as u64),
        }
    }

    /// The value, if successful.
    pub fn data(&self) -> Option<&Data> {
        match self {
            AccessResult::Success(d) => Some(d),
            AccessResult::Failure(_) => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn arb_identifier() -> impl Strategy<Value = String> {
        "[A-Za-z0-9$_]{1,40}"
    }

    pub(crate) fn arb_name() -> impl Strategy<Value = ObjectName> {
        prop_oneof![
            arb_identifier().prop_map(ObjectName::VmdSpecific),
            (arb_identifier(), arb_identifier()).prop_map(|(d, i)| ObjectName::domain(d, i)),
            arb_identifier().prop_map(ObjectName::AaSpecific),
        ]
    }

    pub(crate) fn arb_spec() -> impl Strategy<Value = VariableAccessSpecification> {
        prop_oneof![
            proptest::collection::vec(arb_name(), 0..4)
                .prop_map(VariableAccessSpecification::ListOfVariable),
            arb_name().prop_map(VariableAccessSpecification::VariableListName),
        ]
    }

    proptest! {
        #[test]
        fn spec_round_trip(s in arb_spec()) {
            let mut v = Vec::new();
            s.encode(&mut v);
            let mut r = Reader::new(&v);
            prop_assert_eq!(VariableAccessSpecification::decode(&mut r).unwrap(), s);
            prop_assert!(r.is_empty());
        }
    }

    #[test]
    fn rejects_alternate_access_and_long_names() {
        let v = hex::decode("a00a3008a00380014185020000").unwrap();
        assert!(VariableAccessSpecification::decode(&mut Reader::new(&v)).is_err());
        let long = "x".repeat(MAX_IDENTIFIER_LEN + 1);
        let mut v = Vec::new();
        ObjectName::VmdSpecific(long).encode(&mut v);
        assert!(matches!(
            ObjectName::decode(&mut Reader::new(&v)),
            Err(Error::TooLarge { .. })
        ));
    }
}
