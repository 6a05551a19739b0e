//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md). `fake_peer.py`, the manager's stand-in peer, stays in
//! `tests/` where `manager_fake_peers` names it.
//!
//! `tests/link_userspace.rs` stays a binary of its own: it times the userspace link emulator
//! (one-way delay within 2.5 ms of the profile), and a test of this binary starting Python peers
//! on the other test thread would be in its measurement.
mod manager_fake_peers;
mod scenario_files;
