//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod common;
mod control_rt;
mod peers_negative;
mod peers_plain;
mod peers_tls;
mod scl_controls;
