//! The impact measurement platform: statistics over kept raw samples and the benchmarks built
//! on them.
pub mod peer;
