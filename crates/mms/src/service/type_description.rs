//! GetVariableAccessAttributes (ISO 9506-2 14.9) and TypeSpecification (ISO 9506-2 14.2.1),
//! from the ASN.1 as published in Wireshark's `mms.asn`:
//!
//! ```text
//! GetVariableAccessAttributes-Request ::= CHOICE { name [0] ObjectName, address [1] Address }
//! GetVariableAccessAttributes-Response ::= SEQUENCE {
//!     mmsDeletable [0] IMPLICIT BOOLEAN, address [1] Address OPTIONAL,
//!     typeSpecification [2] TypeSpecification }
//! TypeSpecification ::= CHOICE {
//!     typeName [0] ObjectName,
//!     array [1] IMPLICIT SEQUENCE { packed [0] IMPLICIT BOOLEAN DEFAULT FALSE,
//!         numberOfElements [1] IMPLICIT Unsigned32, elementType [2] TypeSpecification },
//!     structure [2] IMPLICIT SEQUENCE { packed [0] IMPLICIT BOOLEAN DEFAULT FALSE,
//!         components [1] IMPLICIT SEQUENCE OF SEQUENCE {
//!             componentName [0] IMPLICIT Identifier OPTIONAL,
//!             componentType [1] TypeSpecification } },
//!     boolean [3] IMPLICIT NULL, bit-string [4] IMPLICIT Integer32,
//!     integer [5] IMPLICIT Unsigned8, unsigned [6] IMPLICIT Unsigned8,
//!     floating-point [7] IMPLICIT SEQUENCE { format-width Unsigned8, exponent-width Unsigned8 },
//!     octet-string [9] IMPLICIT Integer32, visible-string [10] IMPLICIT Integer32,
//!     generalized-time [11] IMPLICIT NULL, binary-time [12] IMPLICIT BOOLEAN,
//!     bcd [13] IMPLICIT Unsigned8, objId [15] IMPLICIT NULL,
//!     mMSString [16] IMPLICIT Integer32, utc-time [17] IMPLICIT NULL }
//! ```
//!
//! String and bit-string sizes are negative for varying-length types (ISO 9506-2: the
//! absolute value is the maximum), e.g. libiec61850 describes Quality as `84 01 F3` (-13)
//! and VisibleString129 as `8A 02 FF7F` (-129).
//!
//! IEC 61850-8-1 clause 8.1.3 describes a logical node as one structure whose components are
//! the functional constraints (ST, MX, CO, RP, BR, ...), then the data objects, then their
//! attributes; [`TypeSpec::data_attributes`] walks that tree.

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};

use super::variable::{identifier, ObjectName};
use super::{ber as berr, L};
use crate::asn1;
use crate::error::{Error, Result};

/// How deeply type descriptions may nest (bounds recursion against hostile input; IEC
/// 61850 types rarely exceed six levels under the logical node).
pub const MAX_TYPE_DEPTH: usize = 16;
/// The most nodes a type description in one PDU can have: every node is at least
/// [`bounds::MIN_TYPE_NODE_OCTETS`](super::bounds::MIN_TYPE_NODE_OCTETS) octets. The decoder
/// does not count against it (the octets bound the count, [`super::bounds`]); a large logical
/// node's type has tens of thousands of nodes.
pub const MAX_TYPE_NODES: usize = super::bounds::max_elements(
    super::bounds::MAX_PDU_OCTETS,
    super::bounds::MIN_TYPE_NODE_OCTETS,
);

/// One structure component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    /// componentName (IEC 61850 always names components).
    pub name: Option<String>,
    /// componentType.
    pub ty: TypeSpec,
}

/// An MMS TypeSpecification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeSpec {
    /// typeName `[0]`: a named type.
    TypeName(ObjectName),
    /// array `[1]`.
    Array {
        /// packed.
        packed: bool,
        /// numberOfElements.
        count: u32,
        /// elementType.
        element: Box<TypeSpec>,
    },
    /// structure `[2]`.
    Structure {
        /// packed.
        packed: bool,
        /// components, in order.
        components: Vec<Component>,
    },
    /// boolean `[3]`.
    Boolean,
    /// bit-string `[4]`: size in bits (negative: varying, at most |size|).
    BitString(i32),
    /// integer `[5]`: width in bits.
    Integer(u8),
    /// unsigned `[6]`: width in bits.
    Unsigned(u8),
    /// floating-point `[7]`: format width (32 or 64) and exponent width (8 or 11).
    FloatingPoint {
        /// format-width.
        format_width: u8,
        /// exponent-width.
        exponent_width: u8,
    },
    /// octet-string `[9]`: size (negative: varying).
    OctetString(i32),
    /// visible-string `[10]`: size (negative: varying).
    VisibleString(i32),
    /// generalized-time `[11]`.
    GeneralizedTime,
    /// binary-time `[12]`: true with date (6 octets), false time of day only (4).
    BinaryTime(bool),
    /// bcd `[13]`: digits.
    Bcd(u8),
    /// objId `[15]`.
    ObjId,
    /// mMSString `[16]`: size (negative: varying), UTF-8.
    MmsString(i32),
    /// utc-time `[17]`.
    UtcTime,
}

fn i32_of(v: &[u8], what: &'static str) -> Result<i32> {
    let n = ber::decode_i64(v, what).map_err(berr)?;
    i32::try_from(n).map_err(|_| Error::malformed(L, what, "outside Integer32"))
}

fn u8_of(v: &[u8], what: &'static str) -> Result<u8> {
    let n = ber::decode_u64(v, what).map_err(berr)?;
    u8::try_from(n).map_err(|_| Error::malformed(L, what, "outside Unsigned8"))
}

fn null(v: &[u8], what: &'static str) -> Result<()> {
    if v.is_empty() {
        Ok(())
    } else {
        Err(Error::malformed(L, what, "NULL with contents"))
    }
}

/// One data attribute found by [`TypeSpec::data_attributes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataAttribute<'a> {
    /// Functional constraint: the first component under the logical node (ST, MX, ...).
    pub fc: &'a str,
    /// The names below the FC: data object, sub-data objects, attribute, sub-attributes.
    pub path: Vec<&'a str>,
    /// The attribute's type (a basic type or an array).
    pub ty: &'a TypeSpec,
}

impl DataAttribute<'_> {
    /// The IEC 61850 reference below the LN: `Ind1.stVal [ST]` style, as `Ind1.stVal`.
    pub fn dotted(&self) -> String {
        self.path.join(".")
    }

    /// The MMS item suffix below the LN: `ST$Ind1$stVal`.
    pub fn mms_suffix(&self) -> String {
        let mut s = self.fc.to_string();
        for p in &self.path {
            s.push('$');
            s.push_str(p);
        }
        s
    }
}

impl TypeSpec {
    /// Decode one TypeSpecification element from `r`.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        Self::decode_at(r, 0)
    }

    fn decode_at(r: &mut Reader<'_>, depth: usize) -> Result<Self> {
        if depth > MAX_TYPE_DEPTH {
            return Err(Error::Limit {
                layer: L,
                what: "type description nesting",
            });
        }
        let t = r.read_tlv("TypeSpecification").map_err(berr)?;
        let v = t.value;
        Ok(match t.tag {
            0xa0 => {
                let mut nr = t.reader();
                let n = ObjectName::decode(&mut nr)?;
                nr.expect_end("typeName").map_err(berr)?;
                TypeSpec::TypeName(n)
            }
            0xa1 => {
                let mut ar = t.reader();
                let packed = packed(&mut ar)?;
                let n = ar.read_expected(0x81, "numberOfElements").map_err(berr)?;
                let count = ber::decode_u32(n.value, "numberOfElements").map_err(berr)?;
                let e = ar.read_expected(0xa2, "elementType").map_err(berr)?;
                ar.expect_end("array").map_err(berr)?;
                let mut er = e.reader();
                let element = Self::decode_at(&mut er, depth + 1)?;
                er.expect_end("elementType").map_err(berr)?;
                TypeSpec::Array {
                    packed,
                    count,
                    element: Box::new(element),
                }
            }
            0xa2 => {
                let mut sr = t.reader();
                let packed = packed(&mut sr)?;
                let c = sr.read_expected(0xa1, "components").map_err(berr)?;
                sr.expect_end("structure").map_err(berr)?;
                let mut cr = c.reader();
                let mut components = Vec::new();
                while !cr.is_empty() {
                    let e = cr.read_expected(0x30, "component").map_err(berr)?;
                    let mut er = e.reader();
                    let name = match er.read_optional(0x80, "componentName").map_err(berr)? {
                        Some(n) => Some(identifier(n.value)?),
                        None => None,
                    };
                    let ct = er.read_expected(0xa1, "componentType").map_err(berr)?;
                    er.expect_end("component").map_err(berr)?;
                    let mut tr = ct.reader();
                    let ty = Self::decode_at(&mut tr, depth + 1)?;
                    tr.expect_end("componentType").map_err(berr)?;
                    components.push(Component { name, ty });
                }
                TypeSpec::Structure { packed, components }
            }
            0x83 => {
                null(v, "boolean")?;
                TypeSpec::Boolean
            }
            0x84 => TypeSpec::BitString(i32_of(v, "bit-string size")?),
            0x85 => TypeSpec::Integer(u8_of(v, "integer width")?),
            0x86 => TypeSpec::Unsigned(u8_of(v, "unsigned width")?),
            0xa7 => {
                let mut fr = t.reader();
                let f = fr.read_expected(0x02, "format-width").map_err(berr)?;
                let e = fr.read_expected(0x02, "exponent-width").map_err(berr)?;
                fr.expect_end("floating-point").map_err(berr)?;
                TypeSpec::FloatingPoint {
                    format_width: u8_of(f.value, "format-width")?,
                    exponent_width: u8_of(e.value, "exponent-width")?,
                }
            }
            0x89 => TypeSpec::OctetString(i32_of(v, "octet-string size")?),
            0x8a => TypeSpec::VisibleString(i32_of(v, "visible-string size")?),
            0x8b => {
                null(v, "generalized-time")?;
                TypeSpec::GeneralizedTime
            }
            0x8c => TypeSpec::BinaryTime(ber::decode_bool(v, "binary-time").map_err(berr)?),
            0x8d => TypeSpec::Bcd(u8_of(v, "bcd")?),
            0x8f => {
                null(v, "objId")?;
                TypeSpec::ObjId
            }
            0x90 => TypeSpec::MmsString(i32_of(v, "mMSString size")?),
            0x91 => {
                null(v, "utc-time")?;
                TypeSpec::UtcTime
            }
            tag => {
                return Err(Error::UnknownCode {
                    layer: L,
                    what: "TypeSpecification",
                    code: tag,
                })
            }
        })
    }

    /// Append the element.
    pub fn encode(&self, out: &mut dyn Sink) {
        out.bytes(&self.to_bytes());
    }

    /// The element's octets, built bottom-up: each level is sized once from its children's
    /// octets, so encoding stays linear in depth (the two-pass [`asn1::nested`] would run
    /// twice per constructed level, exponential for deep types).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let o = &mut out;
        match self {
            TypeSpec::TypeName(n) => {
                let mut c = Vec::new();
                n.encode(&mut c);
                asn1::tlv(o, 0xa0, &c);
            }
            TypeSpec::Array {
                packed,
                count,
                element,
            } => {
                let mut c = Vec::new();
                if *packed {
                    asn1::tlv(&mut c, 0x80, &[ber::encode_bool(true)]);
                }
                asn1::uint(&mut c, 0x81, *count as u64);
                asn1::tlv(&mut c, 0xa2, &element.to_bytes());
                asn1::tlv(o, 0xa1, &c);
            }
            TypeSpec::Structure { packed, components } => {
                let mut list = Vec::new();
                for comp in components {
                    let mut e = Vec::new();
                    if let Some(n) = &comp.name {
                        asn1::tlv(&mut e, 0x80, n.as_bytes());
                    }
                    asn1::tlv(&mut e, 0xa1, &comp.ty.to_bytes());
                    asn1::tlv(&mut list, 0x30, &e);
                }
                let mut c = Vec::new();
                if *packed {
                    asn1::tlv(&mut c, 0x80, &[ber::encode_bool(true)]);
                }
                asn1::tlv(&mut c, 0xa1, &list);
                asn1::tlv(o, 0xa2, &c);
            }
            TypeSpec::Boolean => asn1::tlv(o, 0x83, &[]),
            TypeSpec::BitString(n) => asn1::int(o, 0x84, *n as i64),
            TypeSpec::Integer(n) => asn1::uint(o, 0x85, *n as u64),
            TypeSpec::Unsigned(n) => asn1::uint(o, 0x86, *n as u64),
            TypeSpec::FloatingPoint {
                format_width,
                exponent_width,
            } => {
                let mut c = Vec::new();
                asn1::uint(&mut c, 0x02, *format_width as u64);
                asn1::uint(&mut c, 0x02, *exponent_width as u64);
                asn1::tlv(o, 0xa7, &c);
            }
            TypeSpec::OctetString(n) => asn1::int(o, 0x89, *n as i64),
            TypeSpec::VisibleString(n) => asn1::int(o, 0x8a, *n as i64),
            TypeSpec::GeneralizedTime => asn1::tlv(o, 0x8b, &[]),
            TypeSpec::BinaryTime(d) => asn1::tlv(o, 0x8c, &[ber::encode_bool(*d)]),
            TypeSpec::Bcd(n) => asn1::uint(o, 0x8d, *n as u64),
            TypeSpec::ObjId => asn1::tlv(o, 0x8f, &[]),
            TypeSpec::MmsString(n) => asn1::int(o, 0x90, *n as i64),
            TypeSpec::UtcTime => asn1::tlv(o, 0x91, &[]),
        }
        out
    }

    /// The component called `name`, if this is a structure.
    pub fn component(&self, name: &str) -> Option<&TypeSpec> {
        match self {
            TypeSpec::Structure { components, .. } => components
                .iter()
                .find(|c| c.name.as_deref() == Some(name))
                .map(|c| &c.ty),
            _ => None,
        }
    }

    /// The type at a `$`-separated path below this one (`ST$Ind1$stVal`).
    pub fn at_path(&self, path: &str) -> Option<&TypeSpec> {
        path.split('$').try_fold(self, |t, p| t.component(p))
    }

    /// Every leaf (non-structure) below this type with the names leading to it, depth
    /// first in component order. Unnamed components appear as `""`.
    pub fn leaves(&self) -> Vec<(Vec<&str>, &TypeSpec)> {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.collect(&mut path, &mut out);
        out
    }

    fn collect<'a>(&'a self, path: &mut Vec<&'a str>, out: &mut Vec<(Vec<&'a str>, &'a TypeSpec)>) {
        match self {
            TypeSpec::Structure { components, .. } => {
                for c in components {
                    path.push(c.name.as_deref().unwrap_or(""));
                    c.ty.collect(path, out);
                    path.pop();
                }
            }
            leaf => out.push((path.clone(), leaf)),
        }
    }

    /// The data attributes of a logical node type (IEC 61850-8-1 8.1.3: the LN's components
    /// are functional constraints): one entry per leaf, with its FC split off. Leaves
    /// directly under the LN (no FC level) are skipped.
    pub fn data_attributes(&self) -> Vec<DataAttribute<'_>> {
        self.leaves()
            .into_iter()
            .filter_map(|(path, ty)| {
                let (fc, rest) = path.split_first()?;
                (!rest.is_empty()).then(|| DataAttribute {
                    fc,
                    path: rest.to_vec(),
                    ty,
                })
            })
            .collect()
    }
}

fn packed(r: &mut Reader<'_>) -> Result<bool> {
    match r.read_optional(0x80, "packed").map_err(berr)? {
        Some(t) => ber::decode_bool(t.value, "packed").map_err(berr),
        None => Ok(false),
    }
}

/// GetVariableAccessAttributes-Request by name (the address form is not used by IEC 61850).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetVariableAccessAttributesRequest(pub ObjectName);

impl GetVariableAccessAttributesRequest {
    /// Decode the contents of the `A6` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let t = r
            .read_tlv("GetVariableAccessAttributes-Request")
            .map_err(berr)?;
        r.expect_end("GetVariableAccessAttributes-Request")
            .map_err(berr)?;
        if t.tag != 0xa0 {
            return Err(Error::malformed(
                L,
                "GetVariableAccessAttributes-Request",
                "only the name [0] form is supported",
            ));
        }
        let mut nr = t.reader();
        let n = ObjectName::decode(&mut nr)?;
        nr.expect_end("name").map_err(berr)?;
        Ok(GetVariableAccessAttributesRequest(n))
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        asn1::nested(out, 0xa0, |o| self.0.encode(o));
    }
}

/// GetVariableAccessAttributes-Response (the address is not kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetVariableAccessAttributesResponse {
    /// mmsDeletable.
    pub deletable: bool,
    /// typeSpecification.
    pub type_spec: TypeSpec,
}

impl GetVariableAccessAttributesResponse {
    /// Decode the contents of the `A6` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let d = r.read_expected(0x80, "mmsDeletable").map_err(berr)?;
        let deletable = ber::decode_bool(d.value, "mmsDeletable").map_err(berr)?;
        let _address = r.read_optional(0xa1, "address").map_err(berr)?;
        let t = r.read_expected(0xa2, "typeSpecification").map_err(berr)?;
        r.expect_end("GetVariableAccessAttributes-Response")
            .map_err(berr)?;
        let mut tr = t.reader();
        let type_spec = TypeSpec::decode(&mut tr)?;
        tr.expect_end("typeSpecification").map_err(berr)?;
        Ok(GetVariableAccessAttributesResponse {
            deletable,
            type_spec,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        asn1::tlv(out, 0x80, &[ber::encode_bool(self.deletable)]);
        asn1::tlv(out, 0xa2, &self.type_spec.to_bytes());
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn arb_type() -> impl Strategy<Value = TypeSpec> {
        let leaf = prop_oneof![
            Just(TypeSpec::Boolean),
            any::<i32>().prop_map(TypeSpec::BitString),
            any::<u8>().prop_map(TypeSpec::Integer),
            any::<u8>().prop_map(TypeSpec::Unsigned),
            (any::<u8>(), any::<u8>()).prop_map(|(f, e)| TypeSpec::FloatingPoint {
                format_width: f,
                exponent_width: e
            }),
            any::<i32>().prop_map(TypeSpec::OctetString),
            any::<i32>().prop_map(TypeSpec::VisibleString),
            Just(TypeSpec::GeneralizedTime),
            any::<bool>().prop_map(TypeSpec::BinaryTime),
            any::<u8>().prop_map(TypeSpec::Bcd),
            Just(TypeSpec::ObjId),
            any::<i32>().prop_map(TypeSpec::MmsString),
            Just(TypeSpec::UtcTime),
            crate::service::variable::tests::arb_name().prop_map(TypeSpec::TypeName),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                (any::<bool>(), any::<u32>(), inner.clone()).prop_map(|(packed, count, e)| {
                    TypeSpec::Array {
                        packed,
                        count,
                        element: Box::new(e),
                    }
                }),
                (
                    any::<bool>(),
                    proptest::collection::vec(
                        (proptest::option::of("[A-Za-z0-9]{1,10}"), inner),
                        0..6
                    )
                )
                    .prop_map(|(packed, cs)| TypeSpec::Structure {
                        packed,
                        components: cs
                            .into_iter()
                            .map(|(name, ty)| Component { name, ty })
                            .collect(),
                    }),
            ]
        })
    }

    proptest! {
        #[test]
        fn round_trip(t in arb_type(), deletable in any::<bool>()) {
            let r = GetVariableAccessAttributesResponse { deletable, type_spec: t };
            let mut v = Vec::new();
            r.encode_contents(&mut v);
            prop_assert_eq!(GetVariableAccessAttributesResponse::decode_contents(&v).unwrap(), r);
        }

        #[test]
        fn no_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
            let _ = GetVariableAccessAttributesResponse::decode_contents(&bytes);
            let _ = TypeSpec::decode(&mut Reader::new(&bytes));
        }
    }

    #[test]
    fn limits() {
        // 17 nested arrays exceed the depth limit.
        let mut t = TypeSpec::Boolean;
        for _ in 0..=MAX_TYPE_DEPTH {
            t = TypeSpec::Array {
                packed: false,
                count: 1,
                element: Box::new(t),
            };
        }
        let mut v = Vec::new();
        t.encode(&mut v);
        assert!(matches!(
            TypeSpec::decode(&mut Reader::new(&v)),
            Err(Error::Limit { .. })
        ));
        assert!(TypeSpec::decode(&mut Reader::new(&[0x83, 0x01, 0x00])).is_err());
        assert!(TypeSpec::decode(&mut Reader::new(&[0x8e, 0x00])).is_err());
        assert!(TypeSpec::decode(&mut Reader::new(&[0x85, 0x02, 0x01, 0x00])).is_err());
    }
}

#[cfg(test)]
mod golden_tests {
    use super::*;
    use crate::golden;
    use crate::pdu::{ConfirmedResponse, MmsPdu};
    use gander_wire::Codec;

    /// The GetVariableAccessAttributes answer with `invoke` in the second captured
    /// association; every server PDU of it must re-encode byte for byte.
    fn gvaa(invoke: u32) -> GetVariableAccessAttributesResponse {
        for (from_client, b) in golden::association(2) {
            let p = MmsPdu::parse(&b).unwrap();
            assert_eq!(p.to_vec(), b, "byte-exact re-encoding");
            if let (
                false,
                MmsPdu::ConfirmedResponse {
                    invoke_id,
                    response: ConfirmedResponse::GetVariableAccessAttributes(r),
                },
            ) = (from_client, p)
            {
                if invoke_id == invoke {
                    return r;
                }
            }
        }
        panic!("no GetVariableAccessAttributes response {invoke}")
    }

    #[test]
    fn golden_libiec61850_lln0_with_rcbs() {
        let t = gvaa(1).type_spec;
        let attrs = t.data_attributes();
        let brcb: Vec<String> = attrs
            .iter()
            .filter(|a| a.fc == "BR")
            .map(|a| a.dotted())
            .collect();
        assert_eq!(
            brcb,
            [
                "brcb01.RptID",
                "brcb01.RptEna",
                "brcb01.DatSet",
                "brcb01.ConfRev",
                "brcb01.OptFlds",
                "brcb01.BufTm",
                "brcb01.SqNum",
                "brcb01.TrgOps",
                "brcb01.IntgPd",
                "brcb01.GI",
                "brcb01.PurgeBuf",
                "brcb01.EntryID",
                "brcb01.TimeofEntry",
                "brcb01.ResvTms",
                "brcb01.Owner"
            ]
        );
        assert_eq!(
            t.at_path("BR$brcb01$EntryID"),
            Some(&TypeSpec::OctetString(8))
        );
        assert_eq!(
            t.at_path("BR$brcb01$TimeofEntry"),
            Some(&TypeSpec::BinaryTime(true))
        );
        assert_eq!(t.at_path("BR$brcb01$ResvTms"), Some(&TypeSpec::Integer(16)));
        assert_eq!(
            t.at_path("RP$urcb01$RptID"),
            Some(&TypeSpec::VisibleString(-129))
        );
        assert_eq!(
            t.at_path("RP$urcb01$OptFlds"),
            Some(&TypeSpec::BitString(-10))
        );
        assert_eq!(t.at_path("RP$urcb01$SqNum"), Some(&TypeSpec::Unsigned(8)));
        assert_eq!(
            t.at_path("RP$urcb01$Owner"),
            Some(&TypeSpec::OctetString(-64))
        );
        assert_eq!(attrs.iter().filter(|a| a.fc == "RP").count(), 12);
    }

    #[test]
    fn golden_libiec61850_ggio_with_control() {
        let t = gvaa(2).type_spec;
        let attrs = t.data_attributes();
        let find = |s: &str| attrs.iter().find(|a| a.mms_suffix() == s).map(|a| a.ty);
        assert_eq!(
            find("MX$AnIn1$mag$f"),
            Some(&TypeSpec::FloatingPoint {
                format_width: 32,
                exponent_width: 8
            })
        );
        assert_eq!(find("ST$Ind1$q"), Some(&TypeSpec::BitString(-13)));
        assert_eq!(find("ST$Ind1$t"), Some(&TypeSpec::UtcTime));
        assert_eq!(
            find("CO$SPCSO1$Oper$origin$orCat"),
            Some(&TypeSpec::Integer(8))
        );
        assert_eq!(find("CO$SPCSO1$Oper$Check"), Some(&TypeSpec::BitString(-2)));
        assert_eq!(find("CF$SPCSO1$ctlModel"), Some(&TypeSpec::Integer(8)));
        let fcs: std::collections::BTreeSet<&str> = attrs.iter().map(|a| a.fc).collect();
        assert_eq!(
            fcs.into_iter().collect::<Vec<_>>(),
            ["CF", "CO", "MX", "ST"]
        );
        assert_eq!(attrs.len(), 17);
    }

    #[test]
    fn golden_libiec61850_request() {
        let q = golden::find(2, true, "a017020101a612");
        let MmsPdu::ConfirmedRequest {
            request: crate::pdu::ConfirmedRequest::GetVariableAccessAttributes(r),
            ..
        } = MmsPdu::parse(&q).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.0, ObjectName::domain("IMPLD0", "LLN0"));
    }
}
