//! IEC 62351-9 group key management for gander: GDOI (RFC 6407) with the IEC 61850 payloads
//! of RFC 8052, on IKEv1 phase 1 (RFC 2409).
//!
//! Sans-I/O: every exchange is a state machine that takes the bytes of one received message
//! and returns the bytes to send, so the same code runs under the key server's UDP loop, the
//! member's, a fuzz target and an in-memory test. The codecs are `gander_wire::isakmp`; the
//! cryptography (Diffie-Hellman, HMAC, AES-CBC) goes through OpenSSL.
//!
//! A message that fails any check is refused with a [`Phase1Error`] that names the RFC 2408
//! notification, and leaves the state machine exactly as it was (a spoofed or corrupted
//! datagram cannot derail an exchange under way).
//!
//! Layers here (docs/gdoi.md): [`suite`] (what phase 1 negotiates), [`dh`] (groups 14, 19,
//! 20), [`keys`] (RFC 2409's SKEYID derivation, the CBC IV chain), [`cookie`] (RFC 2408 2.5.3),
//! [`main_mode`] (the six messages with pre-shared keys or signatures), [`cert_auth`] and
//! [`trust`] (certificates: signatures, chain, identity), [`keylog`] (the lab's key log for
//! tshark), [`pull`] (GROUPKEY-PULL registration), [`push`] (GROUPKEY-PUSH rekey with SEQ and
//! signature), [`notify`] (notifications to refused members and the rule for reading them).

#![forbid(unsafe_code)]

pub mod cert_auth;
pub mod config;
pub mod cookie;
pub mod dh;
pub mod error;
pub mod group_kek;
pub mod install;
pub mod kdc_events;
pub mod kdc_metrics;
pub mod kdc_schedule;
pub mod kdc_state;
pub mod keylog;
pub mod keys;
pub mod main_mode;
pub mod member_state;
pub mod net;
pub mod notify;
pub mod profile;
pub mod psk_identity;
pub mod pull;
pub mod push;
pub mod suite;
pub mod tek_keys;
pub mod tek_policy;
pub mod trust;

pub use error::Phase1Error;
pub use main_mode::{Auth, Initiator, Phase1Sa, Responder};
pub use suite::{AuthMethod, Group, HashAlg, Suite};
