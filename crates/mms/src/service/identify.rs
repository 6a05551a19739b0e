//! Identify (ISO 9506-2 10.1, Wireshark `mms.asn`): `identify [2] IMPLICIT Identify-Request`
//! with `Identify-Request ::= NULL`, answered by
//!
//! ```text
//! Identify-Response ::= SEQUENCE {
//!     vendorName [0] IMPLICIT VisibleString,
//!     modelName  [1] IMPLICIT VisibleString,
//!     revision   [2] IMPLICIT VisibleString,
//!     listOfAbstractSyntaxes [3] IMPLICIT SEQUENCE OF OBJECT IDENTIFIER OPTIONAL }
//! ```
//!
//! libiec61850 1.6.1 sends the request as `82 00` and answers with its
//! `IedServer_setServerIdentity` strings (captured, `docs/mms-services.md`).

use crate::asn1::{Oid, Sink};
use gander_wire::ber::{self, Reader};

use super::{ber as berr, L};
use crate::asn1;
use crate::error::{Error, Result};

/// Longest vendor, model or revision string accepted (bounds memory; the standard leaves
/// VisibleString unbounded, libiec61850 sends short strings).
pub const MAX_IDENTITY_LEN: usize = 255;
/// Most abstract syntaxes kept.
pub const MAX_ABSTRACT_SYNTAXES: usize = 16;

/// What an Identify answers: who made the server and which version it runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IdentifyResponse {
    /// vendorName.
    pub vendor: String,
    /// modelName.
    pub model: String,
    /// revision.
    pub revision: String,
    /// listOfAbstractSyntaxes (`None` when absent, which is what libiec61850 sends).
    pub abstract_syntaxes: Option<Vec<Oid>>,
}

fn string(v: &[u8], what: &'static str) -> Result<String> {
    if v.len() > MAX_IDENTITY_LEN {
        return Err(Error::TooLarge {
            layer: L,
            what,
            size: v.len(),
            max: MAX_IDENTITY_LEN,
        });
    }
    ber::visible_string(v, what).map_err(berr)
}

impl IdentifyResponse {
    /// Decode the contents of the `A2` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let vendor = string(
            r.read_expected(0x80, "vendorName").map_err(berr)?.value,
            "vendorName",
        )?;
        let model = string(
            r.read_expected(0x81, "modelName").map_err(berr)?.value,
            "modelName",
        )?;
        let revision = string(
            r.read_expected(0x82, "revision").map_err(berr)?.value,
            "revision",
        )?;
        let abstract_syntaxes = match r
            .read_optional(0xa3, "listOfAbstractSyntaxes")
            .map_err(berr)?
        {
            Some(t) => {
                let mut lr = t.reader();
                let mut out = Vec::new();
                while !lr.is_empty() {
                    if out.len() == MAX_ABSTRACT_SYNTAXES {
                        return Err(Error::Limit {
                            layer: L,
                            what: "too many abstract syntaxes",
                        });
                    }
                    let o = lr.read_expected(0x06, "abstract syntax").map_err(berr)?;
                    out.push(Oid::from_contents(o.value, L)?);
                }
                Some(out)
            }
            None => None,
        };
        r.expect_end("Identify-Response").map_err(berr)?;
        Ok(IdentifyResponse {
            vendor,
            model,
            revision,
            abstract_syntaxes,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        asn1::tlv(out, 0x80, self.vendor.as_bytes());
        asn1::tlv(out, 0x81, self.model.as_bytes());
        asn1::tlv(out, 0x82, self.revision.as_bytes());
        if let Some(list) = &self.abstract_syntaxes {
            asn1::nested(out, 0xa3, |o| list.iter().for_each(|x| x.emit(o)));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::pdu::{ConfirmedRequest, ConfirmedResponse, MmsPdu};
    use gander_wire::Codec;
    use proptest::prelude::*;

    #[test]
    fn golden_libiec61850_identify() {
        // `docs/mms-services.md` (captured): request and response.
        let req = hex::decode("a0050201018200").unwrap();
        let pdu = MmsPdu::ConfirmedRequest {
            invoke_id: 1,
            request: ConfirmedRequest::Identify,
        };
        assert_eq!(MmsPdu::parse(&req).unwrap(), pdu);
        assert_eq!(pdu.to_vec(), req);
        let resp =
            hex::decode("a122020101a21d800b67616e6465722d746573748107636170747572658205312e362e31")
                .unwrap();
        let want = IdentifyResponse {
            vendor: "gander-test".into(),
            model: "capture".into(),
            revision: "1.6.1".into(),
            abstract_syntaxes: None,
        };
        let pdu = MmsPdu::ConfirmedResponse {
            invoke_id: 1,
            response: ConfirmedResponse::Identify(want),
        };
        assert_eq!(MmsPdu::parse(&resp).unwrap(), pdu);
        assert_eq!(pdu.to_vec(), resp);
        // The request is NULL: contents are an error.
        assert!(MmsPdu::parse(&hex::decode("a006020101820100").unwrap()).is_err());
        // A missing revision is an error.
        assert!(IdentifyResponse::decode_contents(&hex::decode("800161810162").unwrap()).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(
            vendor in "[ -~]{0,20}", model in "[ -~]{0,20}", revision in "[ -~]{0,8}",
            oids in proptest::option::of(proptest::collection::vec(
                proptest::collection::vec(1u64..100_000, 2..6), 0..3)),
        ) {
            let r = IdentifyResponse {
                vendor, model, revision,
                abstract_syntaxes: oids.map(|l| l.into_iter().map(|mut a| {
                    a[0] %= 3;
                    if a[0] < 2 { a[1] %= 40; }
                    Oid::from_arcs(&a)
                }).collect()),
            };
            let mut v = Vec::new();
            r.encode_contents(&mut v);
            prop_assert_eq!(IdentifyResponse::decode_contents(&v).unwrap(), r);
        }
    }
}
