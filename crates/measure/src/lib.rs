//! gander's measurement core, shared by every benchmark and by the platform so that every table
//! is computed the same way (`docs/measurement.md`):
//!
//! * [`stats`]: summary statistics over kept raw samples (nearest-rank percentiles, t-based
//!   95 % confidence intervals).
//! * [`machine`]: the description of the machine every report starts with.
//! * [`html`]: escaping for every HTML report.
//! * [`transfer_time`]: the IEC 61850-5 transfer-time classes, one table, for verdicts.

#![forbid(unsafe_code)]

pub mod html;
pub mod machine;
pub mod stats;
pub mod transfer_time;
