//! DefineNamedVariableList (ISO 9506-2 clause 14.12, confirmed service `[11]`): a client
//! creates a named variable list, which IEC 61850-8-1 clause 14 maps the dynamic data set onto
//! (IEC 61850-7-2 clause 13.2.5 CreateDataSet).
//!
//! ```text
//! DefineNamedVariableList-Request ::= SEQUENCE {
//!     variableListName ObjectName,
//!     listOfVariable [0] IMPLICIT SEQUENCE OF SEQUENCE {
//!         variableSpecification VariableSpecification,
//!         alternateAccess [5] IMPLICIT AlternateAccess OPTIONAL } }
//! DefineNamedVariableList-Response ::= NULL
//! ```
//!
//! The request is `AB { <ObjectName> A0 { 30 {...} ... } }`; the response is the primitive
//! `8B 00`. The list's name says its life: aa-specific (`82`, `@name` in IEC 61850 references)
//! ends with the association, domain-specific (`A1`, `LD/LN$name`) is persistent in its
//! logical device. A member is a variable by name with, for an array element (SCL FCDA
//! `doName="phsAHar(7)"`), an alternate access (`crate::service::alternate_access`).

use crate::asn1::Sink;
use gander_wire::ber::Reader;

use super::ber as berr;
use super::variable::{ObjectName, VariableRef};
use crate::asn1;
use crate::error::Result;

/// The request: the new list's name and its members, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefineNamedVariableListRequest {
    /// variableListName.
    pub name: ObjectName,
    /// listOfVariable `[0]`.
    pub members: Vec<VariableRef>,
}

impl DefineNamedVariableListRequest {
    /// Decode the contents of the `AB` service element. The member count is bounded by
    /// [`VariableRef::decode_list`].
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let name = ObjectName::decode(&mut r)?;
        let l = r.read_expected(0xa0, "listOfVariable").map_err(berr)?;
        let members = VariableRef::decode_list(&mut l.reader())?;
        r.expect_end("DefineNamedVariableList-Request")
            .map_err(berr)?;
        Ok(DefineNamedVariableListRequest { name, members })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        self.name.encode(out);
        asn1::nested(out, 0xa0, |o| self.members.iter().for_each(|m| m.encode(o)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::{ConfirmedRequest, ConfirmedResponse, MmsPdu};
    use crate::service::alternate_access::{AccessSelection, AlternateAccess, Selection};
    use crate::service::variable::tests::{arb_name, arb_var};
    use gander_wire::Codec;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    #[test]
    fn golden_aa_specific_with_array_element() {
        // Built by hand from the ASN.1 above: @ds1 = { IED1LD0/MMXU1$MX$TotW,
        // IED1LD0/MHAI1$MX$HA$phsAHar with selectAccess index 7 }.
        let q = DefineNamedVariableListRequest {
            name: ObjectName::AaSpecific("ds1".into()),
            members: vec![
                ObjectName::domain("IED1LD0", "MMXU1$MX$TotW").into(),
                VariableRef {
                    name: ObjectName::domain("IED1LD0", "MHAI1$MX$HA$phsAHar"),
                    access: Some(AlternateAccess(vec![Selection::Select(
                        AccessSelection::Index(7),
                    )])),
                },
            ],
        };
        let bytes = h("A0 53 02 01 05 AB 4E 82 03 647331 A0 47 \
             30 1C A0 1A A1 18 1A 07 49454431 4C4430 1A 0D 4D4D5855 31244D58 24546F74 57 \
             30 27 A0 20 A1 1E 1A 07 49454431 4C4430 1A 13 4D484149 31244D58 24484124 \
             70687341 486172 A5 03 82 01 07");
        let pdu = MmsPdu::ConfirmedRequest {
            invoke_id: 5,
            request: ConfirmedRequest::DefineNamedVariableList(q),
        };
        assert_eq!(pdu.to_vec(), bytes);
        assert_eq!(MmsPdu::parse(&bytes).unwrap(), pdu);
        // The response is NULL.
        let a = MmsPdu::ConfirmedResponse {
            invoke_id: 5,
            response: ConfirmedResponse::DefineNamedVariableList,
        };
        assert_eq!(a.to_vec(), h("A1 05 02 01 05 8B 00"));
        assert_eq!(MmsPdu::parse(&h("A1 05 02 01 05 8B 00")).unwrap(), a);
        assert!(MmsPdu::parse(&h("A1 06 02 01 05 8B 01 00")).is_err());
    }

    #[test]
    fn malformed() {
        for (b, why) in [
            ("", "empty"),
            ("82 03 647331", "no listOfVariable"),
            ("82 03 647331 A0 00 00", "trailing"),
            ("A0 00", "no name"),
            ("82 03 647331 A0 02 30 00", "member without specification"),
        ] {
            assert!(
                DefineNamedVariableListRequest::decode_contents(&h(b)).is_err(),
                "{why}"
            );
        }
    }

    proptest! {
        #[test]
        fn round_trip(name in arb_name(), members in proptest::collection::vec(arb_var(), 0..6)) {
            let q = DefineNamedVariableListRequest { name, members };
            let mut v = Vec::new();
            q.encode_contents(&mut v);
            prop_assert_eq!(DefineNamedVariableListRequest::decode_contents(&v).unwrap(), q);
        }

        #[test]
        fn no_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
            let _ = DefineNamedVariableListRequest::decode_contents(&bytes);
        }
    }
}
