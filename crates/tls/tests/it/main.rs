//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod bare;
mod common;
mod keylog;
mod loopback;
mod negative;
mod ossl35;
mod pq;
mod record_rt;
mod rekey;
mod scan;
mod survey;
mod survey_real_servers;
