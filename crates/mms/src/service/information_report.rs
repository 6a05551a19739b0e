//! InformationReport (ISO 9506-2 14.8), the unconfirmed service IEC 61850-8-1 clause 17.2
//! uses for reports: `SEQUENCE { variableAccessSpecification, listOfAccessResult [0]
//! IMPLICIT SEQUENCE OF AccessResult }`. For IEC 61850 reports the specification is the
//! vmd-specific variable list name "RPT" (`A1 05 {80 03 "RPT"}`).

use crate::asn1::Sink;
use gander_wire::ber::Reader;

use super::ber as berr;
use super::variable::{AccessResult, ObjectName, VariableAccessSpecification};
use crate::asn1;
use crate::error::Result;

/// The variable list name IEC 61850-8-1 17.2.3 uses for reports.
pub const RPT: &str = "RPT";

/// An information report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InformationReport {
    /// What is reported ("RPT" for IEC 61850 reports).
    pub spec: VariableAccessSpecification,
    /// The values.
    pub results: Vec<AccessResult>,
}

impl InformationReport {
    /// An IEC 61850 report carrying `values`.
    pub fn rpt(values: Vec<AccessResult>) -> Self {
        InformationReport {
            spec: VariableAccessSpecification::VariableListName(ObjectName::VmdSpecific(
                RPT.into(),
            )),
            results: values,
        }
    }

    /// Whether this is an IEC 61850 report (list name "RPT").
    pub fn is_rpt(&self) -> bool {
        matches!(&self.spec, VariableAccessSpecification::VariableListName(ObjectName::VmdSpecific(n)) if n == RPT)
    }

    /// Decode the contents of the `A0` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let spec = VariableAccessSpecification::decode(&mut r)?;
        let t = r.read_expected(0xa0, "listOfAccessResult").map_err(berr)?;
        r.expect_end("InformationReport").map_err(berr)?;
        Ok(InformationReport {
            spec,
            results: AccessResult::decode_list(&mut t.reader())?,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        self.spec.encode(out);
        asn1::nested(out, 0xa0, |o| self.results.iter().for_each(|a| a.encode(o)));
    }
}
