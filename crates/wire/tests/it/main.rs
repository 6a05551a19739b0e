//! The crate's integration tests, one module per former test binary (docs/testing.md).
mod isakmp_tshark;
