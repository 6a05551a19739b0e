//! Write (ISO 9506-2 14.7): `Write-Request ::= SEQUENCE { variableAccessSpecification,
//! listOfData [0] IMPLICIT SEQUENCE OF Data }`, `Write-Response ::= SEQUENCE OF CHOICE {
//! failure [0] IMPLICIT DataAccessError, success [1] IMPLICIT NULL }`.

use crate::asn1::Sink;
use gander_wire::ber::Reader;
use gander_wire::data::Data;

use super::variable::{DataAccessError, VariableAccessSpecification};
use super::{ber as berr, L};
use crate::asn1;
use crate::error::{Error, Result};

/// A write request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteRequest {
    /// The variables written.
    pub spec: VariableAccessSpecification,
    /// One value per variable.
    pub data: Vec<Data>,
}

impl WriteRequest {
    /// Decode the contents of the `A5` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let spec = VariableAccessSpecification::decode(&mut r)?;
        let t = r.read_expected(0xa0, "listOfData").map_err(berr)?;
        r.expect_end("Write-Request").map_err(berr)?;
        // As many values as the PDU carries ([`super::bounds`]).
        let data = Data::decode_seq(&mut t.reader(), 0).map_err(berr)?;
        Ok(WriteRequest { spec, data })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        self.spec.encode(out);
        asn1::nested(out, 0xa0, |o| self.data.iter().for_each(|d| o.put(d)));
    }
}

/// A write response: one outcome per written variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteResponse(pub Vec<core::result::Result<(), DataAccessError>>);

impl WriteResponse {
    /// Decode the contents of the `A5` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let mut out = Vec::new();
        while !r.is_empty() {
            let t = r.read_tlv("Write-Response item").map_err(berr)?;
            match t.tag {
                0x81 if t.value.is_empty() => out.push(Ok(())),
                0x80 => out.push(Err(DataAccessError::decode(t.value)?)),
                0x81 => return Err(Error::malformed(L, "Write-Response", "success is not NULL")),
                tag => {
                    return Err(Error::UnknownCode {
                        layer: L,
                        what: "Write-Response item",
                        code: tag,
                    })
                }
            }
        }
        Ok(WriteResponse(out))
    }

    /// The first failed item and its typed error, if any (a control's failure is explained
    /// by the LastApplError report the server sent just before, [`crate::last_appl_error`]).
    pub fn first_failure(&self) -> Option<(usize, DataAccessError)> {
        self.0
            .iter()
            .enumerate()
            .find_map(|(i, r)| r.err().map(|e| (i, e)))
    }

    /// `Ok` when every item was written, else the first failure.
    pub fn check(&self) -> core::result::Result<(), DataAccessError> {
        self.first_failure().map_or(Ok(()), |(_, e)| Err(e))
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        for r in &self.0 {
            match r {
                Ok(()) => asn1::tlv(out, 0x81, &[]),
                Err(e) => asn1::uint(out, 0x80, e.0 as u64),
            }
        }
    }
}
