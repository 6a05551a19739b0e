//! DeleteNamedVariableList (ISO 9506-2 clause 14.14, confirmed service `[13]`): a client
//! deletes named variable lists, which IEC 61850-8-1 clause 14 maps DeleteDataSet onto
//! (IEC 61850-7-2 clause 13.2.6).
//!
//! ```text
//! DeleteNamedVariableList-Request ::= SEQUENCE {
//!     scopeOfDelete [0] IMPLICIT INTEGER { specific (0), aa-specific (1), domain (2),
//!                                          vmd (3) } DEFAULT specific,
//!     listOfVariableListName [1] IMPLICIT SEQUENCE OF ObjectName OPTIONAL,
//!     domainName [2] IMPLICIT Identifier OPTIONAL }
//! DeleteNamedVariableList-Response ::= SEQUENCE {
//!     numberMatched [0] IMPLICIT Unsigned32,
//!     numberDeleted [1] IMPLICIT Unsigned32 }
//! ```
//!
//! Both travel in `AD`. A list that matched but may not be deleted (configured in SCL, or
//! referenced by a report control block) counts in numberMatched only; IEC 61850-8-1 answers
//! the referenced case with a confirmed-Error (see `crate::server_model`).

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};

use super::variable::{identifier, ObjectName};
use super::{ber as berr, L};
use crate::asn1;
use crate::error::{Error, Result};

/// Most names in one request: every ObjectName takes at least 2 octets, so a 65000-octet
/// PDU cannot carry more; the bound keeps a hostile request's work proportional to its size.
pub const MAX_DELETE_NAMES: usize = 32_768;

/// scopeOfDelete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeleteScope {
    /// specific (0): the lists named in listOfVariableListName.
    Specific,
    /// aa-specific (1): every list of this association.
    AaSpecific,
    /// domain (2): every list of domainName.
    Domain,
    /// vmd (3): every list of the VMD.
    Vmd,
}

impl DeleteScope {
    fn code(self) -> i64 {
        match self {
            DeleteScope::Specific => 0,
            DeleteScope::AaSpecific => 1,
            DeleteScope::Domain => 2,
            DeleteScope::Vmd => 3,
        }
    }
}

/// The request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteNamedVariableListRequest {
    /// scopeOfDelete (encoded only when not the default, specific).
    pub scope: DeleteScope,
    /// listOfVariableListName `[1]`, if present.
    pub names: Option<Vec<ObjectName>>,
    /// domainName `[2]`, if present.
    pub domain: Option<String>,
}

impl DeleteNamedVariableListRequest {
    /// The specific deletion of `names`.
    pub fn specific(names: Vec<ObjectName>) -> Self {
        DeleteNamedVariableListRequest {
            scope: DeleteScope::Specific,
            names: Some(names),
            domain: None,
        }
    }

    /// Decode the contents of the `AD` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let scope = match r.read_optional(0x80, "scopeOfDelete").map_err(berr)? {
            None => DeleteScope::Specific,
            Some(t) => match ber::decode_i64(t.value, "scopeOfDelete").map_err(berr)? {
                0 => DeleteScope::Specific,
                1 => DeleteScope::AaSpecific,
                2 => DeleteScope::Domain,
                3 => DeleteScope::Vmd,
                other => {
                    return Err(Error::UnknownCode {
                        layer: L,
                        what: "scopeOfDelete",
                        code: u8::try_from(other).unwrap_or(u8::MAX),
                    })
                }
            },
        };
        let names = match r
            .read_optional(0xa1, "listOfVariableListName")
            .map_err(berr)?
        {
            None => None,
            Some(t) => {
                let mut nr = t.reader();
                let mut names = Vec::new();
                while !nr.is_empty() {
                    if names.len() == MAX_DELETE_NAMES {
                        return Err(Error::Limit {
                            layer: L,
                            what: "too many names in one DeleteNamedVariableList",
                        });
                    }
                    names.push(ObjectName::decode(&mut nr)?);
                }
                Some(names)
            }
        };
        let domain = match r.read_optional(0x82, "domainName").map_err(berr)? {
            None => None,
            Some(t) => Some(identifier(t.value)?),
        };
        r.expect_end("DeleteNamedVariableList-Request")
            .map_err(berr)?;
        Ok(DeleteNamedVariableListRequest {
            scope,
            names,
            domain,
        })
    }

    /// Append the contents (DER: the default scope is left out).
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        if self.scope != DeleteScope::Specific {
            asn1::int(out, 0x80, self.scope.code());
        }
        if let Some(names) = &self.names {
            asn1::nested(out, 0xa1, |o| names.iter().for_each(|n| n.encode(o)));
        }
        if let Some(d) = &self.domain {
            asn1::tlv(out, 0x82, d.as_bytes());
        }
    }
}

/// The response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeleteNamedVariableListResponse {
    /// numberMatched: lists that the request named and that exist.
    pub matched: u32,
    /// numberDeleted: of those, the lists deleted.
    pub deleted: u32,
}

impl DeleteNamedVariableListResponse {
    /// Decode the contents of the `AD` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let m = r.read_expected(0x80, "numberMatched").map_err(berr)?;
        let d = r.read_expected(0x81, "numberDeleted").map_err(berr)?;
        r.expect_end("DeleteNamedVariableList-Response")
            .map_err(berr)?;
        Ok(DeleteNamedVariableListResponse {
            matched: ber::decode_u32(m.value, "numberMatched").map_err(berr)?,
            deleted: ber::decode_u32(d.value, "numberDeleted").map_err(berr)?,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        asn1::uint(out, 0x80, self.matched as u64);
        asn1::uint(out, 0x81, self.deleted as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::{ConfirmedRequest, ConfirmedResponse, MmsPdu};
    use crate::service::variable::tests::arb_name;
    use gander_wire::Codec;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    #[test]
    fn golden_specific_and_response() {
        // Built from the ASN.1 above: delete @ds1, answered numberMatched 1, numberDeleted 1.
        let q = h("A0 0C 02 01 09 AD 07 A1 05 82 03 647331");
        let pdu = MmsPdu::ConfirmedRequest {
            invoke_id: 9,
            request: ConfirmedRequest::DeleteNamedVariableList(
                DeleteNamedVariableListRequest::specific(vec![ObjectName::AaSpecific(
                    "ds1".into(),
                )]),
            ),
        };
        assert_eq!(pdu.to_vec(), q);
        assert_eq!(MmsPdu::parse(&q).unwrap(), pdu);
        // An explicit default scope decodes to the same request.
        let explicit = h("80 01 00 A1 05 82 03 647331");
        let d = DeleteNamedVariableListRequest::decode_contents(&explicit).unwrap();
        assert_eq!(d.scope, DeleteScope::Specific);
        let a = h("A1 0B 02 01 09 AD 06 80 01 01 81 01 01");
        let pdu = MmsPdu::ConfirmedResponse {
            invoke_id: 9,
            response: ConfirmedResponse::DeleteNamedVariableList(DeleteNamedVariableListResponse {
                matched: 1,
                deleted: 1,
            }),
        };
        assert_eq!(pdu.to_vec(), a);
        assert_eq!(MmsPdu::parse(&a).unwrap(), pdu);
    }

    #[test]
    fn malformed() {
        for (b, why) in [
            ("80 01 07", "unknown scope"),
            ("80 00", "empty scope"),
            ("A1 02 30 00", "bad name"),
            ("82 01 41 80 01 00", "out of order"),
        ] {
            assert!(
                DeleteNamedVariableListRequest::decode_contents(&h(b)).is_err(),
                "{why}"
            );
        }
        for (b, why) in [
            ("", "empty"),
            ("80 01 01", "no numberDeleted"),
            ("80 01 01 81 05 0100000000", "wider than 32 bits"),
            ("80 01 01 81 01 01 00", "trailing"),
        ] {
            assert!(
                DeleteNamedVariableListResponse::decode_contents(&h(b)).is_err(),
                "{why}"
            );
        }
    }

    fn arb_scope() -> impl Strategy<Value = DeleteScope> {
        prop_oneof![
            Just(DeleteScope::Specific),
            Just(DeleteScope::AaSpecific),
            Just(DeleteScope::Domain),
            Just(DeleteScope::Vmd),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(
            scope in arb_scope(),
            names in proptest::option::of(proptest::collection::vec(arb_name(), 0..5)),
            domain in proptest::option::of("[A-Za-z0-9]{1,16}"),
            matched in any::<u32>(),
            deleted in any::<u32>(),
        ) {
            let q = DeleteNamedVariableListRequest { scope, names, domain };
            let mut v = Vec::new();
            q.encode_contents(&mut v);
            prop_assert_eq!(DeleteNamedVariableListRequest::decode_contents(&v).unwrap(), q);
            let a = DeleteNamedVariableListResponse { matched, deleted };
            let mut v = Vec::new();
            a.encode_contents(&mut v);
            prop_assert_eq!(DeleteNamedVariableListResponse::decode_contents(&v).unwrap(), a);
        }

        #[test]
        fn no_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
            let _ = DeleteNamedVariableListRequest::decode_contents(&bytes);
            let _ = DeleteNamedVariableListResponse::decode_contents(&bytes);
        }
    }
}
