//! ISO 9506-2 MMS service PDUs: one module per service (or shared production).
//!
//! Each type has `decode(&[u8])` over the contents of its service tag and `encode(&mut Vec<u8>)`
//! writing those contents, so that [`crate::pdu`] owns the outer tags. Values are
//! `gander_wire::data::Data`.

pub mod alternate_access;
pub mod bounds;
pub mod define_named_variable_list;
pub mod delete_named_variable_list;
pub mod error;
pub mod get_name_list;
pub mod identify;
pub mod information_report;
pub mod initiate;
pub mod named_variable_list;
pub mod read;
pub mod status;
pub mod type_description;
pub mod variable;
pub mod write;

pub use alternate_access::{AccessSelection, AlternateAccess, Selection};
pub use define_named_variable_list::DefineNamedVariableListRequest;
pub use delete_named_variable_list::{
    DeleteNamedVariableListRequest, DeleteNamedVariableListResponse, DeleteScope,
};
pub use error::{Reject, ServiceError};
pub use get_name_list::{
    GetNameListRequest, GetNameListResponse, NameListQuery, ObjectClass, ObjectScope,
};
pub use identify::IdentifyResponse;
pub use information_report::InformationReport;
pub use initiate::Initiate;
pub use named_variable_list::{
    GetNamedVariableListAttributesRequest, GetNamedVariableListAttributesResponse,
};
pub use read::{ReadRequest, ReadResponse};
pub use status::StatusResponse;
pub use type_description::{
    Component, DataAttribute, GetVariableAccessAttributesRequest,
    GetVariableAccessAttributesResponse, TypeSpec,
};
pub use variable::{
    AccessResult, DataAccessError, ObjectName, VariableAccessSpecification, VariableRef,
};
pub use write::{WriteRequest, WriteResponse};

use crate::error::{Error, Layer};

pub(crate) const L: Layer = Layer::Mms;

pub(crate) fn ber(e: gander_wire::Error) -> Error {
    Error::Ber {
        layer: L,
        source: e,
    }
}
