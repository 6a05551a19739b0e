//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md). The helpers that several of them used to include each with
//! its own `#[path]` copy (the vector-file reader, the golden frames, the CAVP loader and the
//! known-answer harness) are declared once here.
#[path = "kat/cavp.rs"]
mod cavp;
#[path = "kat/checks.rs"]
mod checks;
#[path = "golden/frames.rs"]
mod frames;
#[path = "support/records.rs"]
mod records;
#[path = "kat/support.rs"]
mod support;

mod ascon_kat;
mod capture_defects;
mod golden_rgoose;
mod kat;
mod l2_fast_differential;
mod l2_goose;
mod l2_sv;
mod perf_sanity;
mod pq_signatures;
mod protect_into;
mod rsv;
mod signature_roundtrip;
mod verify_allocations;
