//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod any_bytes;
mod cut;
mod gdoi;
mod gdoi_keylog;
mod lab;
mod mms_tls;
mod scd;
mod scd_routable;
mod shared_appid;
mod tal;
