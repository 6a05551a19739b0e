//! The only I/O of GDOI: the key server's and the member's UDP loops (port 848, RFC 6407 2)
//! around the sans-I/O state machines.

pub mod cert_members;
pub mod group_lookup;
pub mod kdc;
pub mod kdc_service;
pub mod member;
