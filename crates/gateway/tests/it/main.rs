//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod alloc_per_frame;
mod bypass_tc;
mod checksum_offload;
mod common;
mod fail_closed_bridge;
mod fail_closed_udp;
mod fail_closed_v6_sv;
mod fanout;
mod flood;
mod gdoi_cert_netns;
mod gdoi_rollover;
mod tx_ring;
