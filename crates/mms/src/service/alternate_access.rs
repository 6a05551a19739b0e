//! AlternateAccess (ISO 9506-2 14.1, as published in Wireshark's `mms.asn`): selecting a
//! component, an element or a range of a structured variable inside a Read, Write or
//! named-variable-list entry.
//!
//! ```text
//! AlternateAccess ::= SEQUENCE OF CHOICE {
//!     unnamed AlternateAccessSelection,
//!     named   [5] IMPLICIT SEQUENCE { componentName [0] IMPLICIT Identifier,
//!                                     access AlternateAccessSelection } }
//! AlternateAccessSelection ::= CHOICE {
//!     selectAlternateAccess [0] IMPLICIT SEQUENCE {
//!         accessSelection CHOICE { component [0], index [1], indexRange [2], allElements [3] },
//!         alternateAccess AlternateAccess },
//!     selectAccess CHOICE { component [1], index [2], indexRange [3], allElements [4] } }
//! ```
//!
//! IEC 61850-8-1 uses it for component selection: libiec61850's
//! `MmsConnection_readVariableComponent("GGIO1$ST", "Ind1$stVal")` sends
//! `A5 11 { A0 0F { 80 04 "Ind1", 30 07 { 81 05 "stVal" } } }` (captured, see
//! `docs/mms-services.md`): each `$`-separated part but the last is a selectAlternateAccess
//! whose nested access holds the rest.

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};

use super::variable::identifier;
use super::{ber as berr, L};
use crate::asn1;
use crate::error::{Error, Result};

/// How deeply selections may nest (bounds recursion against hostile input).
pub const MAX_ACCESS_DEPTH: usize = 16;
/// The most selections one AlternateAccess in a PDU can hold (each is at least
/// [`bounds::MIN_SELECTION_OCTETS`](super::bounds::MIN_SELECTION_OCTETS) octets); the decoder
/// does not count against it, the octets bound the count ([`super::bounds`]).
pub const MAX_ACCESS_ITEMS: usize = super::bounds::max_elements(
    super::bounds::MAX_PDU_OCTETS,
    super::bounds::MIN_SELECTION_OCTETS,
);

/// One access selection (the inner CHOICE of both alternatives).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AccessSelection {
    /// A structure component by name.
    Component(String),
    /// An array element by index.
    Index(u32),
    /// `numberOfElements` array elements from `lowIndex`.
    IndexRange {
        /// lowIndex.
        low: u32,
        /// numberOfElements.
        count: u32,
    },
    /// All elements of an array.
    AllElements,
}

/// One selection of an AlternateAccess list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Selection {
    /// selectAccess: the selection ends here.
    Select(AccessSelection),
    /// selectAlternateAccess: select, then apply the nested access to what was selected.
    SelectAlternate(AccessSelection, AlternateAccess),
    /// named `[5]`: a named alternative (kept for completeness; IEC 61850 does not use it).
    Named(String, Box<Selection>),
}

/// An AlternateAccess: the selections, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct AlternateAccess(pub Vec<Selection>);

impl AlternateAccess {
    /// The component path `a$b$c` as IEC 61850-8-1 and libiec61850 encode it: nested
    /// selectAlternateAccess for every part but the last, a selectAccess for the last.
    /// Empty parts are an error.
    pub fn component_path(path: &str) -> Result<Self> {
        let parts: Vec<&str> = path.split('$').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(Error::malformed(L, "component path", "empty component"));
        }
        let mut acc: Option<AlternateAccess> = None;
        for p in parts.iter().rev() {
            let sel = AccessSelection::Component((*p).to_string());
            acc = Some(AlternateAccess(vec![match acc {
                None => Selection::Select(sel),
                Some(inner) => Selection::SelectAlternate(sel, inner),
            }]));
        }
        acc.ok_or(Error::malformed(L, "component path", "empty"))
    }

    /// The inverse of [`AlternateAccess::component_path`]: `Some("a$b")` when the access is
    /// a single chain of non-empty component selections without `$`, else `None`.
    pub fn as_component_path(&self) -> Option<String> {
        let mut parts = Vec::new();
        let mut cur = self;
        loop {
            let [only] = cur.0.as_slice() else {
                return None;
            };
            match only {
                Selection::Select(AccessSelection::Component(c)) if path_part(c) => {
                    parts.push(c.as_str());
                    return Some(parts.join("$"));
                }
                Selection::SelectAlternate(AccessSelection::Component(c), inner)
                    if path_part(c) =>
                {
                    parts.push(c.as_str());
                    cur = inner;
                }
                _ => return None,
            }
        }
    }

    /// Decode the contents of an AlternateAccess (the octets inside `A5` or `30`).
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        Self::decode_at(v, 0)
    }

    fn decode_at(v: &[u8], depth: usize) -> Result<Self> {
        if depth > MAX_ACCESS_DEPTH {
            return Err(Error::Limit {
                layer: L,
                what: "alternate access nesting",
            });
        }
        let mut r = Reader::new(v);
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Selection::decode(&mut r, depth)?);
        }
        Ok(AlternateAccess(out))
    }

    /// Append the contents (no outer tag).
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        out.bytes(&self.contents());
    }

    /// The contents octets, built bottom-up so that encoding stays linear in the nesting
    /// depth (the two-pass [`asn1::nested`] would double the work at every level).
    pub fn contents(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for s in &self.0 {
            s.encode(&mut out);
        }
        out
    }
}

/// Whether a component name can stand in a `$`-joined path.
fn path_part(c: &str) -> bool {
    !c.is_empty() && !c.contains('$')
}

fn u32_of(v: &[u8], what: &'static str) -> Result<u32> {
    ber::decode_u32(v, what).map_err(berr)
}

impl AccessSelection {
    /// Decode with the tag numbering of selectAccess (`base` 1) or of the accessSelection
    /// inside selectAlternateAccess (`base` 0).
    fn decode(tag: u8, value: &[u8], base: u8) -> Result<Option<Self>> {
        let t = tag.wrapping_sub(base);
        Ok(Some(match (tag & 0xe0, t & 0x1f) {
            (0x80, 0) => AccessSelection::Component(identifier(value)?),
            (0x80, 1) => AccessSelection::Index(u32_of(value, "index")?),
            (0xa0, 2) => {
                let mut r = Reader::new(value);
                let lo = r.read_expected(0x80, "lowIndex").map_err(berr)?;
                let n = r.read_expected(0x81, "numberOfElements").map_err(berr)?;
                r.expect_end("indexRange").map_err(berr)?;
                AccessSelection::IndexRange {
                    low: u32_of(lo.value, "lowIndex")?,
                    count: u32_of(n.value, "numberOfElements")?,
                }
            }
            (0x80, 3) if value.is_empty() => AccessSelection::AllElements,
            _ => return Ok(None),
        }))
    }

    fn encode(&self, out: &mut dyn Sink, base: u8) {
        match self {
            AccessSelection::Component(c) => asn1::tlv(out, 0x80 + base, c.as_bytes()),
            AccessSelection::Index(i) => asn1::uint(out, 0x81 + base, *i as u64),
            AccessSelection::IndexRange { low, count } => asn1::nested(out, 0xa2 + base, |o| {
                asn1::uint(o, 0x80, *low as u64);
                asn1::uint(o, 0x81, *count as u64);
            }),
            AccessSelection::AllElements => asn1::tlv(out, 0x83 + base, &[]),
        }
    }
}

impl Selection {
    fn decode(r: &mut Reader<'_>, depth: usize) -> Result<Self> {
        if depth > MAX_ACCESS_DEPTH {
            return Err(Error::Limit {
                layer: L,
                what: "alternate access nesting",
            });
        }
        let t = r.read_tlv("AlternateAccess selection").map_err(berr)?;
        if t.tag == 0xa0 {
            let mut sr = t.reader();
            let a = sr.read_tlv("accessSelection").map_err(berr)?;
            let sel = AccessSelection::decode(a.tag, a.value, 0)?.ok_or(Error::UnknownCode {
                layer: L,
                what: "accessSelection",
                code: a.tag,
            })?;
            let inner = sr.read_expected(0x30, "alternateAccess").map_err(berr)?;
            sr.expect_end("selectAlternateAccess").map_err(berr)?;
            return Ok(Selection::SelectAlternate(
                sel,
                AlternateAccess::decode_at(inner.value, depth + 1)?,
            ));
        }
        if t.tag == 0xa5 {
            let mut nr = t.reader();
            let n = nr.read_expected(0x80, "componentName").map_err(berr)?;
            let inner = Selection::decode(&mut nr, depth + 1)?;
            nr.expect_end("named alternate access").map_err(berr)?;
            return Ok(Selection::Named(identifier(n.value)?, Box::new(inner)));
        }
        match AccessSelection::decode(t.tag, t.value, 1)? {
            Some(s) => Ok(Selection::Select(s)),
            None => Err(Error::UnknownCode {
                layer: L,
                what: "AlternateAccess selection",
                code: t.tag,
            }),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Selection::Select(s) => s.encode(out, 1),
            Selection::SelectAlternate(s, inner) => {
                let mut c = Vec::new();
                s.encode(&mut c, 0);
                asn1::tlv(&mut c, 0x30, &inner.contents());
                asn1::tlv(out, 0xa0, &c);
            }
            Selection::Named(n, inner) => {
                let mut c = Vec::new();
                asn1::tlv(&mut c, 0x80, n.as_bytes());
                inner.encode(&mut c);
                asn1::tlv(out, 0xa5, &c);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    #[test]
    fn golden_libiec61850_component() {
        // Captured (`docs/mms-services.md`, readVariableComponent "GGIO1$ST" / "Ind1$stVal"):
        // contents of A5 11.
        let v = h("A0 0F 80 04 496E6431 30 07 81 05 737456616C");
        let a = AlternateAccess::decode_contents(&v).unwrap();
        assert_eq!(a, AlternateAccess::component_path("Ind1$stVal").unwrap());
        assert_eq!(a.as_component_path().as_deref(), Some("Ind1$stVal"));
        let mut out = Vec::new();
        a.encode_contents(&mut out);
        assert_eq!(out, v);
        assert!(AlternateAccess::component_path("a$$b").is_err());
        // Found by fuzz_mms_alternate_access: an empty component has no path form.
        let empty = AlternateAccess::decode_contents(&h("81 00")).unwrap();
        assert_eq!(empty.as_component_path(), None);
    }

    #[test]
    fn bounds_and_unknown_tags() {
        // 17 nested selectAlternateAccess levels exceed the depth limit.
        let deep = "x$".repeat(MAX_ACCESS_DEPTH + 1) + "y";
        let a = AlternateAccess::component_path(&deep).unwrap();
        let mut v = Vec::new();
        a.encode_contents(&mut v);
        assert!(matches!(
            AlternateAccess::decode_contents(&v),
            Err(Error::Limit { .. })
        ));
        // Named selections nested 20 deep (each `A5 { 80 01 "n", <inner> }`) hit the same limit.
        let mut v = h("81 01 78");
        for _ in 0..20 {
            let mut c = h("80 01 6E");
            c.extend(&v);
            v = vec![0xa5, c.len() as u8];
            v.extend(c);
        }
        assert!(matches!(
            AlternateAccess::decode_contents(&v),
            Err(Error::Limit { .. })
        ));
        assert!(AlternateAccess::decode_contents(&h("86 00")).is_err());
        assert!(AlternateAccess::decode_contents(&h("84 01 00")).is_err());
    }

    fn arb_sel() -> impl Strategy<Value = AccessSelection> {
        prop_oneof![
            "[A-Za-z0-9]{1,12}".prop_map(AccessSelection::Component),
            any::<u32>().prop_map(AccessSelection::Index),
            (any::<u32>(), any::<u32>())
                .prop_map(|(low, count)| AccessSelection::IndexRange { low, count }),
            Just(AccessSelection::AllElements),
        ]
    }

    pub(crate) fn arb_access() -> impl Strategy<Value = AlternateAccess> {
        let leaf = proptest::collection::vec(arb_sel().prop_map(Selection::Select), 1..3)
            .prop_map(AlternateAccess);
        leaf.prop_recursive(3, 12, 3, |inner| {
            proptest::collection::vec(
                prop_oneof![
                    arb_sel().prop_map(Selection::Select),
                    (arb_sel(), inner).prop_map(|(s, a)| Selection::SelectAlternate(s, a)),
                    ("[a-z]{1,6}", arb_sel())
                        .prop_map(|(n, s)| Selection::Named(n, Box::new(Selection::Select(s)))),
                ],
                1..3,
            )
            .prop_map(AlternateAccess)
        })
    }

    proptest! {
        #[test]
        fn round_trip(a in arb_access()) {
            let mut v = Vec::new();
            a.encode_contents(&mut v);
            prop_assert_eq!(AlternateAccess::decode_contents(&v).unwrap(), a);
        }

        #[test]
        fn no_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = AlternateAccess::decode_contents(&bytes);
        }
    }
}
