//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod association;
mod discovery;
mod unknown_services;
