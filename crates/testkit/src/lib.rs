//! Fixtures shared by gander's tests and benchmarks, in one place so that a test and the
//! benchmark that measures the same path send the same bytes and hold the same keys:
//!
//! * [`frames`]: unsecured GOOSE and R-GOOSE frames as a legacy IED publishes them, and the
//!   re-tagged / re-addressed variants an attacker sends.
//! * [`keys`]: the key files of the gateway tests and benchmarks.
//! * [`netns`]: the one rule for tests that need network namespaces (run, or skip only when
//!   asked to, always saying why).
//!
//! Not a library for users: nothing outside tests and benchmarks depends on it.

#![forbid(unsafe_code)]

pub mod frames;
pub mod keys;
pub mod netns;
pub mod tcp_tls;
