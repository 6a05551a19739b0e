//! The peer programs the measurement platform measures: the MMS peers (the RSE paper's
//! 61850SER and 61850CLI, `gander mms server|client --config F`) and the Sandia 2023
//! request/response peers (`gander run-peer server|client`, [`reqresp`]). They do the I/O; the
//! protocol is `gander-mms` (sans-I/O) and the TLS is `gander-tls`.
//!
//! - [`config`]: the TOML settings (address, event log, `[tls]`, `[reports]`, loops).
//! - [`server`]: accept loop, one thread per connection, shared IEC 61850 model, periodic reports.
//! - [`client`]: the HT loop (connections) and the RT loop (reports), on the one MMS client
//!   session of `gander-client`.
//! - [`events`]: JSON-lines event log with CLOCK_MONOTONIC nanosecond stamps ([`clock`],
//!   from `gander-client`, as is [`stream`]).
//! - [`own_cost`]: gander's own work inside one HT, measured in memory (HT accounting).
//! - [`reqresp`]: the request/response peers (no MMS: one length-prefixed request, one answer).
//!
//! Where each stamp is taken, and how server and client events are matched: docs/mms-peers.md.

pub mod client;
/// CLOCK_MONOTONIC nanoseconds (the client crate's, re-exported for the peers' event stamps).
pub use gander_client::clock;
pub mod config;
pub mod events;
pub mod own_cost;
pub mod reqresp;
pub mod scl_model;
mod served;
pub mod server;
/// The plain or TLS byte stream, readiness polling and event-log error kinds (from the client
/// crate, re-exported for the server).
pub use gander_client::stream;

/// Errors that stop a peer before it runs (bad configuration, TLS set-up, bind).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// The configuration does not hold together.
    #[error("configuration")]
    Config(#[from] config::ConfigError),
    /// No report of the configured size can be built.
    #[error("configuration: reports.size")]
    ReportSize(#[source] gander_mms::Error),
    /// The TLS backend could not be set up (certificates, keys, suite).
    #[error("TLS set-up")]
    Tls(#[source] gander_tls::TlsError),
    /// The SCL file to serve is refused (the message names the problem and its line; boxed:
    /// it is large and rare).
    #[error("SCL model")]
    Scl(#[source] Box<scl_model::SclModelError>),
    /// The listening socket could not be bound or set up.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl From<scl_model::SclModelError> for PeerError {
    fn from(e: scl_model::SclModelError) -> Self {
        PeerError::Scl(Box::new(e))
    }
}
