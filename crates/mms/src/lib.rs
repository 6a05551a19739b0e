//! Sans-I/O ISO upper layers and MMS for IEC 61850.
pub mod acse;
pub mod asn1;
pub mod association;
pub mod bit_string;
pub mod cotp;
pub mod error;
pub mod model;
pub mod pdu;
pub mod presentation;
pub mod rcb;
pub mod report;
pub mod service;
pub mod session;
pub mod tpkt;

pub use error::{Error, Layer, Result};
