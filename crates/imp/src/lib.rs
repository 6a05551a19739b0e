//! The impact measurement platform: statistics over kept raw samples and the benchmarks built
//! on them.
//!
//! * [`stats`]: summary statistics (nearest-rank percentiles, t-based confidence intervals).
//! * [`machine`]: the description of the machine every report starts with.
//! * [`transfer_time`]: IEC 61850-5 transfer-time requirements as data, for verdicts.
//! * [`crypto_bench`] and [`crypto_report`]: `gander bench crypto`.

pub mod anatomy;
pub mod assets;
pub mod crypto_bench;
pub mod crypto_report;
pub mod machine;
pub mod peer;
pub mod stats;
pub mod transfer_time;

// The measurement platform: scenarios, manager, floors, results and reports (`gander run`).
pub mod builtin;
pub mod floor;
pub mod link;
pub mod manager;
pub mod report;
pub mod reqresp;
pub mod results;
pub mod scenario;
