//! One control operation of a named object, and its measured round trips: the driver is
//! `gander_client::control` (one for `gander mms control`, the probe's `--control` and
//! `gander run`'s control rows), re-exported here for the probe's callers.
pub use gander_client::control::*;
