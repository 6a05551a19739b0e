//! The impact measurement platform (`gander run`): a scenario matrix in, results, statistics
//! and a report out.
//!
//! * [`scenario`] and [`builtin`]: the matrix (TOML) and the scenarios shipped with gander.
//! * [`manager`]: runs each case (PKI, peer configs, READY wait, warm-up, resume, progress).
//! * [`floor`]: the public-key floors every HT is compared with, per TLS library.
//! * [`accounting`]: where HT goes: floor, library, transport, gander's own work, the rest.
//! * [`rt_accounting`] and [`record_crypto`]: where RT over TLS goes: transport (cleartext),
//!   record crypto, the library's own work, gander's own.
//! * [`link`]: link emulation (netem in namespaces or the userspace relay).
//! * [`results`] and [`report`]: results.json, samples.csv, summary.md and report.html.
//! * [`control_rows`]: control rows (`interaction = "control"`): select, operate, termination RT.
//! * [`target`]: runs against an external server (`[target]`): no local server, client-side RT measures.
//! * [`assets`]: where the runtime assets (the libiec61850 peer driver) are found.
//!
//! The peers it runs are `gander-peers`; its statistics and machine description are
//! `gander-measure`, the same as every benchmark's.

pub mod accounting;
pub mod assets;
pub mod builtin;
pub mod control_rows;
pub mod floor;
pub mod link;
pub mod manager;
pub mod record_crypto;
pub mod report;
pub mod results;
pub mod rt_accounting;
pub mod scenario;
pub mod target;

/// An error and its sources as one line, `outer: cause: root cause`, the way `gander` prints
/// errors. For messages stored in results and notes.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
