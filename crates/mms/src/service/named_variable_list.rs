//! GetNamedVariableListAttributes (ISO 9506-2 14.13, Wireshark `mms.asn`): the members of a
//! named variable list, which IEC 61850-8-1 clause 13 uses for data sets.
//!
//! ```text
//! GetNamedVariableListAttributes-Request ::= ObjectName           -- [12], explicit
//! GetNamedVariableListAttributes-Response ::= SEQUENCE {
//!     mmsDeletable [0] IMPLICIT BOOLEAN,
//!     listOfVariable [1] IMPLICIT SEQUENCE OF SEQUENCE {
//!         variableSpecification VariableSpecification,
//!         alternateAccess [5] IMPLICIT AlternateAccess OPTIONAL },
//!     accessControlList [2] IMPLICIT Identifier OPTIONAL }
//! ```
//!
//! A member is a domain-specific name such as `IMPLD0` / `GGIO1$ST$Ind1` (functional
//! constrained data) or, with an alternate access, a part of one.

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};

use super::ber as berr;
use super::variable::{identifier, ObjectName, VariableRef};
use crate::asn1;
use crate::error::Result;

/// The request: the list's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetNamedVariableListAttributesRequest(pub ObjectName);

impl GetNamedVariableListAttributesRequest {
    /// Decode the contents of the `AC` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let n = ObjectName::decode(&mut r)?;
        r.expect_end("GetNamedVariableListAttributes-Request")
            .map_err(berr)?;
        Ok(GetNamedVariableListAttributesRequest(n))
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        self.0.encode(out);
    }
}

/// The response: the members, in data-set order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetNamedVariableListAttributesResponse {
    /// mmsDeletable: false for data sets configured in SCL.
    pub deletable: bool,
    /// The members.
    pub members: Vec<VariableRef>,
    /// accessControlList.
    pub access_control_list: Option<String>,
}

impl GetNamedVariableListAttributesResponse {
    /// Decode the contents of the `AC` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let d = r.read_expected(0x80, "mmsDeletable").map_err(berr)?;
        let deletable = ber::decode_bool(d.value, "mmsDeletable").map_err(berr)?;
        let l = r.read_expected(0xa1, "listOfVariable").map_err(berr)?;
        let members = VariableRef::decode_list(&mut l.reader())?;
        let access_control_list = match r.read_optional(0x82, "accessControlList").map_err(berr)? {
            Some(t) => Some(identifier(t.value)?),
            None => None,
        };
        r.expect_end("GetNamedVariableListAttributes-Response")
            .map_err(berr)?;
        Ok(GetNamedVariableListAttributesResponse {
            deletable,
            members,
            access_control_list,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        asn1::tlv(out, 0x80, &[ber::encode_bool(self.deletable)]);
        asn1::nested(out, 0xa1, |o| self.members.iter().for_each(|m| m.encode(o)));
        if let Some(a) = &self.access_control_list {
            asn1::tlv(out, 0x82, a.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::{ConfirmedRequest, ConfirmedResponse, MmsPdu};
    use crate::service::variable::tests::{arb_name, arb_var};
    use gander_wire::Codec;
    use proptest::prelude::*;

    #[test]
    fn golden_libiec61850_data_set_directory() {
        // `docs/mms-services.md` (captured): the members of IMPLD0/LLN0$DS1.
        let q = hex::decode("a019020103ac14a1121a06494d504c44301a084c4c4e3024445331").unwrap();
        let pdu = MmsPdu::ConfirmedRequest {
            invoke_id: 3,
            request: ConfirmedRequest::GetNamedVariableListAttributes(
                GetNamedVariableListAttributesRequest(ObjectName::domain("IMPLD0", "LLN0$DS1")),
            ),
        };
        assert_eq!(MmsPdu::parse(&q).unwrap(), pdu);
        assert_eq!(pdu.to_vec(), q);
        let a = hex::decode(
            "a145020103ac40800100a13b301ba019a1171a06494d504c44301a0d4747494f3124535424496e6431\
             301ca01aa1181a06494d504c44301a0e4747494f31244d5824416e496e31",
        )
        .unwrap();
        let pdu = MmsPdu::ConfirmedResponse {
            invoke_id: 3,
            response: ConfirmedResponse::GetNamedVariableListAttributes(
                GetNamedVariableListAttributesResponse {
                    deletable: false,
                    members: vec![
                        ObjectName::domain("IMPLD0", "GGIO1$ST$Ind1").into(),
                        ObjectName::domain("IMPLD0", "GGIO1$MX$AnIn1").into(),
                    ],
                    access_control_list: None,
                },
            ),
        };
        assert_eq!(MmsPdu::parse(&a).unwrap(), pdu);
        assert_eq!(pdu.to_vec(), a);
    }

    proptest! {
        #[test]
        fn round_trip(
            name in arb_name(),
            deletable in any::<bool>(),
            members in proptest::collection::vec(arb_var(), 0..5),
            acl in proptest::option::of("[a-z]{1,8}"),
        ) {
            let q = GetNamedVariableListAttributesRequest(name);
            let mut v = Vec::new();
            q.encode_contents(&mut v);
            prop_assert_eq!(GetNamedVariableListAttributesRequest::decode_contents(&v).unwrap(), q);
            let a = GetNamedVariableListAttributesResponse { deletable, members, access_control_list: acl };
            let mut v = Vec::new();
            a.encode_contents(&mut v);
            prop_assert_eq!(GetNamedVariableListAttributesResponse::decode_contents(&v).unwrap(), a);
        }
    }
}
