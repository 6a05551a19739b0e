//! Link emulation between the server's and the client's network namespaces.
//!
//! * [`profile`]: the link profiles (delay, jitter, loss, rate) with their sources.
pub mod profile;
