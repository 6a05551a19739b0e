//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod array_members;
mod controls;
mod encodings;
mod group_values;
mod log_controls;
mod parse;
mod per_ied;
mod rcb_per_association;
mod values;
mod vendor_defects;
