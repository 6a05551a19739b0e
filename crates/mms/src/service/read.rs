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
