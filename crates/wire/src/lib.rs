//! Sans-I/O codecs for IEC 61850 traffic and its IEC 62351-6 security extensions.
//!
//! Everything here works on byte slices: no sockets, clocks, threads or cryptography.
//! Each protocol has its own module holding an owned `Repr` with `parse` and the [`Codec`]
//! methods (`buffer_len`, `emit` in place into the caller's buffer, `to_vec`), and, where a
//! caller needs to patch a field in place, a zero-copy view over `&[u8]`/`&mut [u8]`.
//!
//! # Panic contract
//! No function in this crate panics on any input byte sequence. Parsers return
//! [`Error`]; views check their length once (`new_checked`) after which no accessor panics.
//! `emit` functions panic only if handed a buffer shorter than `buffer_len()` (a caller bug,
//! never peer-controlled), and say so in their docs.

#![forbid(unsafe_code)]

pub mod ber;
pub mod ber_sink;
pub mod codec;
pub mod cut_apdu;
pub mod cut_spdu;
pub mod data;
mod data_scan;
pub mod error;
pub mod ethernet;
pub mod goose;
pub mod ip;
pub mod ip_fragment;
pub mod ipv6;
pub mod isakmp;
pub mod l2_emit;
pub mod l2_extension;
pub mod l2_frame;
pub mod l2_frame_repr;
pub mod offload;
pub mod spdu;
pub mod sv;
pub mod tlv_scan;
pub mod udp_rewrite;
pub mod visible_str;

pub use codec::Codec;
pub use error::{Error, Result};
