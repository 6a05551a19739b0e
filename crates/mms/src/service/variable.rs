//! Shared productions of ISO 9506-2: ObjectName (clause 7.5.2 of 9506-1, `ObjectName` in
//! the 9506-2 ASN.1 module), VariableAccessSpecification (14.1), AccessResult (14.4) and
//! DataAccessError (14.4.3).

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};
use gander_wire::data::Data;

use super::alternate_access::AlternateAccess;
use super::{ber as berr, L};
use crate::asn1;
use crate::error::{Error, Result};

/// Longest Identifier accepted. ISO 9506-2 says 32; IEC 61850-8-1 clause 8.1.3.1 raises it
/// to 64 for domain names and item names grow to 129 with `$`-joined references
/// (libiec61850's buffers).
pub const MAX_IDENTIFIER_LEN: usize = 129;
/// The most entries any list in a PDU gander accepts can carry (every element is at least
/// two octets). No decoder counts against it: the octets already bound the count
/// ([`super::bounds`]); it is kept for callers that size a list before asking a peer.
pub const MAX_LIST_LEN: usize = super::bounds::max_elements(
    super::bounds::MAX_PDU_OCTETS,
    super::bounds::MIN_IDENTIFIER_OCTETS,
);

/// MMS ObjectName.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ObjectName {
    /// vmd-specific \[0\] IMPLICIT Identifier (`80`), e.g. the report list name "RPT".
    VmdSpecific(String),
    /// domain-specific \[1\] IMPLICIT SEQUENCE { domainId, itemId } (`A1`): IEC 61850-8-1 maps
    /// LD to domain and `LN$FC$DO$DA` to item.
    DomainSpecific {
        /// domainId: the logical device.
        domain: String,
        /// itemId: `LN$FC$DO$DA`.
        item: String,
    },
    /// aa-specific \[2\] IMPLICIT Identifier (`82`).
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

/// One entry of a listOfVariable (ISO 9506-2 14.1): `SEQUENCE { variableSpecification,
/// alternateAccess [5] IMPLICIT AlternateAccess OPTIONAL }`, with the variable given by name
/// (`A0 <ObjectName>`), the only form IEC 61850-8-1 uses.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VariableRef {
    /// The variable.
    pub name: ObjectName,
    /// A component, element or range of it (`None`: the whole variable).
    pub access: Option<AlternateAccess>,
}

impl From<ObjectName> for VariableRef {
    fn from(name: ObjectName) -> Self {
        VariableRef { name, access: None }
    }
}

impl VariableRef {
    /// A component of a variable selected by its `$`-joined path (IEC 61850-8-1 component
    /// access, as libiec61850's `MmsConnection_readVariableComponent` sends it).
    pub fn component(name: ObjectName, path: &str) -> Result<Self> {
        Ok(VariableRef {
            name,
            access: Some(AlternateAccess::component_path(path)?),
        })
    }

    /// The name IEC 61850 gives the selected component: `item$path` when the alternate
    /// access is a component chain; the name itself without alternate access; `None` for
    /// index selections (a server answers those with its own rules).
    pub fn flattened(&self) -> Option<ObjectName> {
        match (&self.access, &self.name) {
            (None, n) => Some(n.clone()),
            (Some(a), ObjectName::DomainSpecific { domain, item }) => a
                .as_component_path()
                .map(|p| ObjectName::domain(domain.clone(), format!("{item}${p}"))),
            (Some(a), ObjectName::VmdSpecific(n)) => a
                .as_component_path()
                .map(|p| ObjectName::VmdSpecific(format!("{n}${p}"))),
            (Some(a), ObjectName::AaSpecific(n)) => a
                .as_component_path()
                .map(|p| ObjectName::AaSpecific(format!("{n}${p}"))),
        }
    }

    /// Decode one `30 { A0 <ObjectName> [A5 <AlternateAccess>] }` entry.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let e = r
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
        let mut nr = spec.reader();
        let name = ObjectName::decode(&mut nr)?;
        nr.expect_end("variableSpecification").map_err(berr)?;
        let access = match er.read_optional(0xa5, "alternateAccess").map_err(berr)? {
            Some(t) => Some(AlternateAccess::decode_contents(t.value)?),
            None => None,
        };
        er.expect_end("listOfVariable entry").map_err(berr)?;
        Ok(VariableRef { name, access })
    }

    /// Append the entry.
    pub fn encode(&self, out: &mut dyn Sink) {
        asn1::nested(out, 0x30, |o| {
            asn1::nested(o, 0xa0, |o| self.name.encode(o));
            if let Some(a) = &self.access {
                asn1::tlv(o, 0xa5, &a.contents());
            }
        })
    }

    /// Decode entries until `r` is exhausted. Each entry is at least
    /// [`bounds::MIN_VARIABLE_OCTETS`](super::bounds::MIN_VARIABLE_OCTETS) octets, so the count
    /// follows from the PDU size ([`super::bounds`]).
    pub fn decode_list(r: &mut Reader<'_>) -> Result<Vec<Self>> {
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(VariableRef::decode(r)?);
        }
        Ok(out)
    }
}

/// VariableAccessSpecification (ISO 9506-2 14.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariableAccessSpecification {
    /// listOfVariable \[0\]: each entry `30 { A0 <ObjectName> [A5 <AlternateAccess>] }`.
    ListOfVariable(Vec<VariableRef>),
    /// variableListName \[1\]: a named variable list (data set or "RPT").
    VariableListName(ObjectName),
}

impl VariableAccessSpecification {
    /// A listOfVariable of whole variables.
    pub fn names(names: impl IntoIterator<Item = ObjectName>) -> Self {
        VariableAccessSpecification::ListOfVariable(
            names.into_iter().map(VariableRef::from).collect(),
        )
    }

    /// Decode one element (`A0` or `A1`).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let t = r.read_tlv("VariableAccessSpecification").map_err(berr)?;
        match t.tag {
            0xa0 => Ok(VariableAccessSpecification::ListOfVariable(
                VariableRef::decode_list(&mut t.reader())?,
            )),
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
            VariableAccessSpecification::ListOfVariable(vars) => asn1::nested(out, 0xa0, |o| {
                vars.iter().for_each(|v| v.encode(o));
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

    /// The ISO 9506-2 name of the code, `None` for codes the standard does not define.
    pub fn name(self) -> Option<&'static str> {
        const NAMES: [&str; 12] = [
            "object-invalidated",
            "hardware-fault",
            "temporarily-unavailable",
            "object-access-denied",
            "object-undefined",
            "invalid-address",
            "type-unsupported",
            "type-inconsistent",
            "object-attribute-inconsistent",
            "object-access-unsupported",
            "object-non-existent",
            "object-value-invalid",
        ];
        NAMES.get(self.0 as usize).copied()
    }

    pub(crate) fn decode(v: &[u8]) -> Result<Self> {
        let n = ber::decode_u64(v, "DataAccessError").map_err(berr)?;
        u8::try_from(n)
            .map(DataAccessError)
            .map_err(|_| Error::malformed(L, "DataAccessError", "value out of range"))
    }
}

impl core::fmt::Display for DataAccessError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "data access error {}", self.0),
        }
    }
}

/// A failed read or write of one variable is an error a caller can `?` on.
impl std::error::Error for DataAccessError {}

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

    /// Decode elements until `r` is exhausted. Each is at least
    /// [`bounds::MIN_ACCESS_RESULT_OCTETS`](super::bounds::MIN_ACCESS_RESULT_OCTETS) octets,
    /// so the count follows from the PDU size ([`super::bounds`]); nesting is bounded by
    /// `gander_wire::data::MAX_DEPTH`.
    pub fn decode_list(r: &mut Reader<'_>) -> Result<Vec<Self>> {
        let mut out = Vec::new();
        while !r.is_empty() {
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

    pub(crate) fn arb_var() -> impl Strategy<Value = VariableRef> {
        (
            arb_name(),
            proptest::option::of(crate::service::alternate_access::tests::arb_access()),
        )
            .prop_map(|(name, access)| VariableRef { name, access })
    }

    pub(crate) fn arb_spec() -> impl Strategy<Value = VariableAccessSpecification> {
        prop_oneof![
            proptest::collection::vec(arb_var(), 0..4)
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
    fn alternate_access_and_long_names() {
        // An entry with an index selection (selectAccess index [2] = 5).
        let v = hex::decode("a00c300aa003800141a503820105").unwrap();
        let VariableAccessSpecification::ListOfVariable(vars) =
            VariableAccessSpecification::decode(&mut Reader::new(&v)).unwrap()
        else {
            panic!()
        };
        assert_eq!(vars[0].flattened(), None);
        let c = VariableRef::component(ObjectName::domain("D", "LN$ST"), "Ind1$stVal").unwrap();
        assert_eq!(
            c.flattened(),
            Some(ObjectName::domain("D", "LN$ST$Ind1$stVal"))
        );
        // Trailing bytes after the alternate access.
        let v = hex::decode("a00e300ca003800141a5038201050500").unwrap();
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
