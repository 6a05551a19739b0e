//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod frame_capture_cli;
mod frame_cli;
mod gdoi_cert_cli;
mod gdoi_cli;
mod gdoi_member_cli;
mod scl_cli;
