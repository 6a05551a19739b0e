//! ISO 9506-2 MMS service PDUs: one module per service (or shared production).
//!
//! Each type has `decode(&[u8])` over the contents of its service tag and `encode(&mut Vec<u8>)`
//! writing those contents, so that [`crate::pdu`] owns the outer tags. Values are
//! `gander_wire::data::Data`.

pub mod error;
pub mod information_report;
pub mod initiate;
pub mod read;
pub mod variable;
pub mod write;

pub use error::{Reject, ServiceError};
pub use information_report::InformationReport;
pub use initiate::Initiate;
pub use read::{ReadRequest, ReadResponse};
pub use variable::{AccessResult, DataAccessError, ObjectName, VariableAccessSpecification};
pub use write::{WriteRequest, WriteResponse};

use crate::error::{Error, Layer};

pub(crate) const L: Layer = Layer::Mms;

pub(crate) fn ber(e: gander_wire::Error) -> Error {
    Error::Ber {
        layer: L,
        source: e,
    }
}
