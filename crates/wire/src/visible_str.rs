//! A VisibleString as received: its octets, checked once, turned into `&str` only when a caller
//! reads it as text.
//!
//! The GOOSE references (gocbRef, datSet, goID) are `VisibleString`s (IEC 61850-8-1 Annex A),
//! whose characters are the ISO/IEC 646 graphic characters and space, 0x20..=0x7E (X.680 41.1,
//! Table 8). A parser checks every octet ([`crate::tlv_scan::visible`]); handing out a `&str`
//! then costs a second pass, the UTF-8 validation of `core::str::from_utf8` (safe Rust has no
//! other way from bytes to `&str`, and the project allows `unsafe` only at system interfaces).
//! On the layer-2 verify path that second pass was 234 instructions a frame for strings the
//! verifier only compares as octets (the replay check keys on gocbRef's octets), about a sixth
//! of the APDU check (`docs/bench-crypto.md`, "Layer 2: verify without a second pass over the
//! strings"). [`VisibleStr`] keeps the checked octets and converts on demand.

use core::fmt;

/// The octets of a VisibleString, every one in 0x20..=0x7E (checked when the value was made).
///
/// Equality, ordering and hashing are those of the octets, which for a VisibleString are those
/// of the text.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VisibleStr<'a>(&'a [u8]);

impl<'a> VisibleStr<'a> {
    /// `bytes` if every octet is a VisibleString character, else `None`.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        crate::tlv_scan::visible(bytes).then_some(VisibleStr(bytes))
    }

    /// A string that a general parser has already checked (`ber::visible_str`).
    #[inline]
    pub(crate) fn from_checked(s: &'a str) -> Self {
        VisibleStr(s.as_bytes())
    }

    /// The octets as received.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// The text. Every octet is ASCII, so the UTF-8 validation cannot fail (were it to, the
    /// result would be empty rather than a panic); it is a pass over the octets, which is why
    /// the value keeps bytes and converts only here.
    #[inline]
    pub fn as_str(&self) -> &'a str {
        core::str::from_utf8(self.0).unwrap_or_default()
    }

    /// Number of characters (octets).
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the string is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for VisibleStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for VisibleStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for VisibleStr<'_> {
    fn eq(&self, o: &str) -> bool {
        self.0 == o.as_bytes()
    }
}

impl PartialEq<&str> for VisibleStr<'_> {
    fn eq(&self, o: &&str) -> bool {
        self.0 == o.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `new` accepts exactly what the general parser's check accepts, and the text is the
        /// octets.
        #[test]
        fn new_agrees_with_visible_str(b in proptest::collection::vec(any::<u8>(), 0..80),
                                       printable in "[ -~]{0,80}") {
            for bytes in [&b[..], printable.as_bytes()] {
                let general = crate::ber::visible_str(bytes, "x").ok();
                let v = VisibleStr::new(bytes);
                prop_assert_eq!(v.map(|v| v.as_str()), general);
                if let Some(v) = v {
                    prop_assert_eq!(v.as_bytes(), bytes);
                    prop_assert_eq!(v.len(), bytes.len());
                    prop_assert!(v == v.as_str());
                    prop_assert_eq!(format!("{v}"), v.as_str());
                    prop_assert_eq!(format!("{v:?}"), format!("{:?}", v.as_str()));
                }
            }
        }
    }
}
