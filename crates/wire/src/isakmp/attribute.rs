//! Data attributes (RFC 2408 section 3.3): the type/value pairs inside transforms, SA KEK and
//! SA TEK policies, key packets and GAP.
//!
//! ```text
//!  AF=1 (TV):  |1| type (15 bits) | value (2)
//!  AF=0 (TLV): |0| type (15 bits) | length (2) | value (length)
//! ```

use super::error::{IsakmpError, Result};
use super::reader::{len16, Reader, Writer};
use crate::Codec;

/// Most attributes one list may hold: far more than any policy needs, few enough that a
/// hostile list of empty TLVs costs nothing.
pub const MAX_ATTRIBUTES: usize = 256;

/// An attribute's value: the basic (TV) form carries 16 bits in place of the length.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AttrValue {
    /// AF=1: a two-octet value.
    Basic(u16),
    /// AF=0: a value of up to 65535 octets.
    Variable(Vec<u8>),
}

/// One data attribute.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Attribute {
    /// Attribute type (15 bits; the top bit of the wire field is the AF flag).
    pub kind: u16,
    /// Its value.
    pub value: AttrValue,
}

impl Attribute {
    /// A basic (TV) attribute.
    pub fn basic(kind: u16, value: u16) -> Self {
        Attribute {
            kind,
            value: AttrValue::Basic(value),
        }
    }

    /// A variable (TLV) attribute.
    pub fn variable(kind: u16, value: impl Into<Vec<u8>>) -> Self {
        Attribute {
            kind,
            value: AttrValue::Variable(value.into()),
        }
    }

    /// The value as an unsigned integer: the basic value, or a variable value of at most 8
    /// octets read big-endian (RFC 2408 3.3 lets a long integer use the variable form, as
    /// life durations do, RFC 2409 Appendix A).
    pub fn as_u64(&self) -> Option<u64> {
        match &self.value {
            AttrValue::Basic(v) => Some(u64::from(*v)),
            AttrValue::Variable(b) if b.len() <= 8 => {
                Some(b.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x)))
            }
            AttrValue::Variable(_) => None,
        }
    }

    /// The value's octets (a basic value as its two octets).
    pub fn bytes(&self) -> Vec<u8> {
        match &self.value {
            AttrValue::Basic(v) => v.to_be_bytes().to_vec(),
            AttrValue::Variable(b) => b.clone(),
        }
    }

    /// An unsigned value in the shortest form that holds it: basic when it fits 16 bits,
    /// otherwise variable with four or eight octets.
    pub fn unsigned(kind: u16, v: u64) -> Self {
        if let Ok(b) = u16::try_from(v) {
            Attribute::basic(kind, b)
        } else if let Ok(w) = u32::try_from(v) {
            Attribute::variable(kind, w.to_be_bytes())
        } else {
            Attribute::variable(kind, v.to_be_bytes())
        }
    }

    /// Parses one attribute from the front of `r`.
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Attribute> {
        let t = r.u16()?;
        let kind = t & 0x7fff;
        if t & 0x8000 != 0 {
            Ok(Attribute::basic(kind, r.u16()?))
        } else {
            let n = r.u16()? as usize;
            Ok(Attribute::variable(kind, r.take(n)?))
        }
    }

    /// Parses a whole attribute list filling `buf`.
    pub fn parse_list(buf: &[u8]) -> Result<Vec<Attribute>> {
        let mut r = Reader::new(buf, "data attribute");
        let mut out = Vec::new();
        while r.remaining() > 0 {
            if out.len() == MAX_ATTRIBUTES {
                return Err(IsakmpError::TooMany {
                    what: "attributes",
                    limit: MAX_ATTRIBUTES,
                });
            }
            out.push(Attribute::read(&mut r)?);
        }
        Ok(out)
    }

    /// Octets of a list.
    pub fn list_len(list: &[Attribute]) -> usize {
        list.iter().map(Codec::buffer_len).sum()
    }

    /// Emits a list; returns the octets written.
    pub fn emit_list(list: &[Attribute], buf: &mut [u8]) -> usize {
        let mut at = 0;
        for a in list {
            at += a.emit(&mut buf[at..]);
        }
        at
    }

    /// Whether the value fits the 16-bit length of the variable form.
    pub fn fits(&self) -> bool {
        match &self.value {
            AttrValue::Basic(_) => true,
            AttrValue::Variable(b) => b.len() <= usize::from(u16::MAX),
        }
    }

    /// The first attribute of `kind` in `list`.
    pub fn find(list: &[Attribute], kind: u16) -> Option<&Attribute> {
        list.iter().find(|a| a.kind == kind)
    }
}

impl Codec for Attribute {
    fn buffer_len(&self) -> usize {
        match &self.value {
            AttrValue::Basic(_) => 4,
            AttrValue::Variable(b) => 4 + b.len(),
        }
    }

    /// Writes the attribute; the type is masked to its 15 bits.
    fn emit(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        match &self.value {
            AttrValue::Basic(v) => {
                w.u16(0x8000 | (self.kind & 0x7fff));
                w.u16(*v);
            }
            AttrValue::Variable(b) => {
                w.u16(self.kind & 0x7fff);
                w.u16(len16(b.len()));
                w.bytes(b);
            }
        }
        w.written()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn arb_attr() -> impl Strategy<Value = Attribute> {
        prop_oneof![
            (0u16..0x8000, any::<u16>()).prop_map(|(k, v)| Attribute::basic(k, v)),
            (0u16..0x8000, proptest::collection::vec(any::<u8>(), 0..40))
                .prop_map(|(k, v)| Attribute::variable(k, v)),
        ]
    }

    pub(crate) fn arb_attrs() -> impl Strategy<Value = Vec<Attribute>> {
        proptest::collection::vec(arb_attr(), 0..6)
    }

    #[test]
    fn life_duration_in_both_forms() {
        // RFC 2409 Appendix A: Life Duration (12) may be basic or variable.
        let b = Attribute::unsigned(12, 28_800);
        assert_eq!(b.to_vec(), [0x80, 0x0c, 0x70, 0x80]);
        let v = Attribute::unsigned(12, 86_400);
        assert_eq!(v.to_vec(), [0x00, 0x0c, 0x00, 0x04, 0x00, 0x01, 0x51, 0x80]);
        assert_eq!(v.as_u64(), Some(86_400));
        assert!(Attribute::parse_list(&[0x00, 0x0c, 0x00, 0x05, 1]).is_err());
    }

    proptest! {
        #[test]
        fn list_round_trip(list in arb_attrs()) {
            let mut buf = vec![0u8; Attribute::list_len(&list)];
            prop_assert_eq!(Attribute::emit_list(&list, &mut buf), buf.len());
            prop_assert_eq!(Attribute::parse_list(&buf), Ok(list));
        }
    }
}
