//! Unit tests of the reassembler (property tests are in tests/reassembly_props.rs).
