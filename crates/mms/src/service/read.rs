//! Read (ISO 9506-2 14.6): `Read-Request ::= SEQUENCE { specificationWithResult [0] BOOLEAN
//! DEFAULT FALSE, variableAccessSpecification [1] VariableAccessSpecification }` and
//! `Read-Response ::= SEQUENCE { variableAccessSpecification [0] OPTIONAL,
//! listOfAccessResult [1] IMPLICIT SEQUENCE OF AccessResult }`.

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};

use super::ber as berr;
use super::variable::{AccessResult, VariableAccessSpecification};
use crate::asn1;
use crate::error::Result;

/// A read request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRequest {
    /// specificationWithResult.
    pub specification_with_result: bool,
    /// What to read.
    pub spec: VariableAccessSpecification,
}

impl ReadRequest {
    /// Decode the contents of the `A4` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let swr = match r
            .read_optional(0x80, "specificationWithResult")
            .map_err(berr)?
        {
            Some(t) => ber::decode_bool(t.value, "specificationWithResult").map_err(berr)?,
            None => false,
        };
        let t = r
            .read_expected(0xa1, "variableAccessSpecification")
            .map_err(berr)?;
        r.expect_end("Read-Request").map_err(berr)?;
        let mut sr = t.reader();
        let spec = VariableAccessSpecification::decode(&mut sr)?;
        sr.expect_end("variableAccessSpecification").map_err(berr)?;
        Ok(ReadRequest {
            specification_with_result: swr,
            spec,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        if self.specification_with_result {
            asn1::tlv(out, 0x80, &[0xff]);
        }
        asn1::nested(out, 0xa1, |o| self.spec.encode(o));
    }
}

/// A read response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadResponse {
    /// Echoed specification, if specificationWithResult was set.
    pub spec: Option<VariableAccessSpecification>,
    /// One result per variable read.
    pub results: Vec<AccessResult>,
}

impl ReadResponse {
    /// Decode the contents of the `A4` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let spec = match r
            .read_optional(0xa0, "variableAccessSpecification")
            .map_err(berr)?
        {
            Some(t) => Some(VariableAccessSpecification::decode(&mut t.reader())?),
            None => None,
        };
        let t = r.read_expected(0xa1, "listOfAccessResult").map_err(berr)?;
        r.expect_end("Read-Response").map_err(berr)?;
        Ok(ReadResponse {
            spec,
            results: AccessResult::decode_list(&mut t.reader())?,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        if let Some(s) = &self.spec {
            asn1::nested(out, 0xa0, |o| s.encode(o));
        }
        asn1::nested(out, 0xa1, |o| self.results.iter().for_each(|a| a.encode(o)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden;
    use crate::pdu::{ConfirmedRequest, ConfirmedResponse, MmsPdu};
    use crate::service::{ObjectName, VariableRef};
    use gander_wire::data::Data;
    use gander_wire::Codec;

    #[test]
    fn golden_libiec61850_component_read() {
        // Captured: readVariableComponent(IMPLD0, "GGIO1$ST", "Ind1$stVal") and its answer.
        let q = golden::find(1, true, "a034");
        let p = MmsPdu::parse(&q).unwrap();
        assert_eq!(p.to_vec(), q);
        let MmsPdu::ConfirmedRequest {
            invoke_id,
            request: ConfirmedRequest::Read(r),
        } = p
        else {
            panic!()
        };
        let want =
            VariableRef::component(ObjectName::domain("IMPLD0", "GGIO1$ST"), "Ind1$stVal").unwrap();
        assert_eq!(
            r.spec,
            VariableAccessSpecification::ListOfVariable(vec![want])
        );
        let a = golden::find(1, false, &format!("a10a02010{invoke_id:x}a405"));
        let MmsPdu::ConfirmedResponse {
            response: ConfirmedResponse::Read(r),
            ..
        } = MmsPdu::parse(&a).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.results, [AccessResult::Success(Data::Boolean(false))]);
    }

    #[test]
    fn golden_libiec61850_structured_read() {
        // Captured: read of IMPLD0/GGIO1$MX$AnIn1 (mag.f, q, t): a nested structure.
        let a = golden::find(1, false, "a121");
        let p = MmsPdu::parse(&a).unwrap();
        assert_eq!(p.to_vec(), a);
        let MmsPdu::ConfirmedResponse {
            response: ConfirmedResponse::Read(r),
            ..
        } = p
        else {
            panic!()
        };
        let [AccessResult::Success(Data::Structure(v))] = r.results.as_slice() else {
            panic!("{r:?}")
        };
        assert_eq!(v[0], Data::Structure(vec![Data::FloatingPoint32(0.0)]));
        assert_eq!(v[2], Data::UtcTime([0; 8]));
    }
}
