//! The TLS scanner: what a server accepts, learned from its answers to crafted ClientHellos,
//! for every IANA cipher suite, every named group and every protocol version from SSL 2.0 to
//! TLS 1.3, and the known weaknesses IEDs have shipped with (`docs/tls-survey.md`, "Scan").
//!
//! A TLS library offers only the suites it implements; a server's ServerHello names the suite
//! it chose whether or not the client could go on (RFC 5246 §7.4.1.3, RFC 8446 §4.1.3). So the
//! scanner offers a batch of code points, reads the chosen one, removes it and offers the rest
//! again until the server refuses: every accepted suite costs one connection, every batch one
//! more (the refusal). TLS 1.3 is asked with an empty key_share, which a server answers with a
//! HelloRetryRequest naming suite and group (RFC 8446 §4.1.4): no key is ever computed.
//!
//! - [`hello`]: the sans-I/O ClientHello builder (and the SSL 2.0 CLIENT-HELLO);
//! - [`parse`]: the sans-I/O parser of the server's answer;
//! - [`registry`] / [`groups`]: the IANA tables;
//! - [`enumerate`]: versions, suites, preference order, groups;
//! - [`weakness`]: Heartbleed, CCS injection, compression, TLS_FALLBACK_SCSV and the extensions;
//! - [`robot`]: ROBOT, the five malformed-PKCS #1 ClientKeyExchange probes;
//! - [`early_data`]: TLS 1.3 0-RTT, advertised in tickets and accepted on resumption;
//! - [`tls13_flight`]: what TLS 1.3 encrypts (a certificate per signature class, the
//!   CertificateRequest, a stapled OCSP response), read through completed handshakes;
//! - [`findings`]: verdicts with their public sources; [`render`]: the text section;
//! - [`conn`]: the blocking driver (sequential, paced, capped).
pub mod conn;
pub mod early_data;
pub mod enumerate;
pub mod findings;
pub mod groups;
pub mod hello;
mod iana_suites;
pub mod parse;
pub mod registry;
pub mod render;
pub mod robot;
mod tls13_client;
pub mod tls13_flight;
pub mod weakness;

pub use enumerate::VersionScan;
pub use weakness::{Weakness, WeaknessState};

use crate::survey::Verdict;
use serde::Serialize;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A protocol version as the scanner asks for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ProtocolVersion {
    /// SSL 2.0 (prohibited by RFC 6176).
    #[serde(rename = "SSLv2")]
    Ssl2,
    /// SSL 3.0 (deprecated by RFC 7568).
    #[serde(rename = "SSLv3")]
    Ssl3,
    /// TLS 1.0 (RFC 2246; deprecated by RFC 8996).
    #[serde(rename = "1.0")]
    Tls10,
    /// TLS 1.1 (RFC 4346; deprecated by RFC 8996).
    #[serde(rename = "1.1")]
    Tls11,
    /// TLS 1.2 (RFC 5246).
    #[serde(rename = "1.2")]
    Tls12,
    /// TLS 1.3 (RFC 8446).
    #[serde(rename = "1.3")]
    Tls13,
}

impl ProtocolVersion {
    /// SSL 3.0 to TLS 1.3, oldest first (SSL 2.0 has its own probe).
    pub const RECORD_VERSIONS: [ProtocolVersion; 5] = [
        ProtocolVersion::Ssl3,
        ProtocolVersion::Tls10,
        ProtocolVersion::Tls11,
        ProtocolVersion::Tls12,
        ProtocolVersion::Tls13,
    ];

    /// The version's wire code (0x0002 for SSL 2.0).
    pub fn code(self) -> u16 {
        match self {
            ProtocolVersion::Ssl2 => 0x0002,
            ProtocolVersion::Ssl3 => 0x0300,
            ProtocolVersion::Tls10 => 0x0301,
            ProtocolVersion::Tls11 => 0x0302,
            ProtocolVersion::Tls12 => 0x0303,
            ProtocolVersion::Tls13 => 0x0304,
        }
    }

    /// ClientHello.client_version: TLS 1.3 puts 0x0303 there (RFC 8446 §4.1.2).
    pub fn client_version(self) -> u16 {
        self.code().min(0x0303)
    }

    /// The name used in reports: `SSLv2`, `SSLv3`, `1.0` .. `1.3`.
    pub fn name(self) -> &'static str {
        match self {
            ProtocolVersion::Ssl2 => "SSLv2",
            ProtocolVersion::Ssl3 => "SSLv3",
            ProtocolVersion::Tls10 => "1.0",
            ProtocolVersion::Tls11 => "1.1",
            ProtocolVersion::Tls12 => "1.2",
            ProtocolVersion::Tls13 => "1.3",
        }
    }

    /// The version of a wire code.
    pub fn from_code(code: u16) -> Option<ProtocolVersion> {
        [ProtocolVersion::Ssl2]
            .into_iter()
            .chain(ProtocolVersion::RECORD_VERSIONS)
            .find(|v| v.code() == code)
    }
}

/// How the scan runs. The defaults are gentle: an IED has few connection slots.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// TCP connect and the wait for each answer.
    pub timeout: Duration,
    /// Pause between two connections.
    pub pause: Duration,
    /// Most connections the scan makes; when reached, what is left is reported as not tested.
    pub max_connections: u32,
    /// Code points per ClientHello (RFC 5246 allows 32767; some stacks choke on long hellos).
    pub batch: usize,
    /// The host name for server_name, if the target was named by one.
    pub server_name: Option<String>,
    /// A client certificate chain and key (PEM files) for the checks that complete a TLS 1.3
    /// handshake (0-RTT): a server requiring client authentication (IEC 62351-3) issues no
    /// ticket to a client without one. The suite enumeration never needs them.
    pub client_identity: Option<(std::path::PathBuf, std::path::PathBuf)>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            timeout: Duration::from_secs(5),
            // A scan connection carries one ClientHello and is closed after the server's first
            // flight: it holds a slot for one round trip, so a short pause keeps it gentle.
            pause: Duration::from_millis(20),
            max_connections: 500,
            batch: 128,
            server_name: None,
            client_identity: None,
        }
    }
}

/// The server_name to send (RFC 6066 §3): the profile's, else the target's host when it is a
/// name and not an IP literal (which server_name must not carry).
pub fn server_name_for(target: &str, profile_name: Option<&str>) -> Option<String> {
    if let Some(n) = profile_name {
        return Some(n.to_string());
    }
    let host = match target.rsplit_once(':') {
        Some((h, _)) => h.trim_start_matches('[').trim_end_matches(']'),
        None => target,
    };
    (!host.is_empty() && host.parse::<std::net::IpAddr>().is_err()).then(|| host.to_string())
}

/// Why a scan could not run at all (per-version refusals are results, not errors).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The TCP connection failed.
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// The target.
        addr: SocketAddr,
        /// The system's message.
        reason: String,
    },
    /// The connection cap was reached.
    #[error("connection cap of {0} reached")]
    Cap(u32),
    /// The port took the connection but answered no ClientHello within the timeout (not an
    /// octet, not a close) before anything else was heard from it: the scan stops there
    /// instead of waiting out the timeout once per probe.
    #[error("{addr} does not answer a ClientHello within {timeout_ms} ms")]
    Silent {
        /// The target.
        addr: SocketAddr,
        /// The timeout used.
        timeout_ms: u64,
    },
}

/// Everything the scan found.
#[derive(Clone, Debug, Serialize)]
pub struct ScanReport {
    /// SSL 2.0: accepted, with the cipher kinds the SERVER-HELLO listed.
    pub sslv2: enumerate::Sslv2Scan,
    /// SSL 3.0 to TLS 1.3, oldest first.
    pub versions: Vec<VersionScan>,
    /// The weakness checks.
    pub weaknesses: Vec<Weakness>,
    /// ROBOT in detail (its row in `weaknesses` is the summary); `None` when not reached.
    pub robot: Option<robot::RobotResult>,
    /// 0-RTT in detail (its row in `weaknesses` is `early-data`); `None` when not reached.
    pub early_data: Option<early_data::EarlyDataResult>,
    /// Verdicts with their public sources.
    pub verdicts: Vec<Verdict>,
    /// Connections made.
    pub connections: u32,
    /// The scan stopped before it was done: the connection cap was reached, or the server
    /// stopped taking connections part-way (`VersionScan::incomplete` says which version).
    pub capped: bool,
    /// Wall time, s.
    pub duration_s: f64,
}

impl ScanReport {
    /// The scan of `v`, if made.
    pub fn version(&self, v: ProtocolVersion) -> Option<&VersionScan> {
        self.versions.iter().find(|s| s.version == v)
    }
}

/// Scans `addr`: SSL 2.0, then each version's suites, order and groups, then the weaknesses.
/// A connection failure after the first is a result (`capped` or a version's `error`).
pub fn scan(addr: SocketAddr, opts: &ScanOptions) -> Result<ScanReport, ScanError> {
    let start = Instant::now();
    let mut c = conn::Conn::new(addr, opts.timeout, opts.pause, opts.max_connections);
    let sslv2 = enumerate::sslv2(&mut c)?;
    let mut versions = Vec::new();
    let mut capped = false;
    // Alert 112 (unrecognized_name) refuses the server name, not the version (RFC 6066 §3):
    // that version is asked again without SNI, and so is everything after it.
    let mut opts = opts.clone();
    let mut refused_name = None;
    for v in ProtocolVersion::RECORD_VERSIONS.into_iter().rev() {
        let r = match enumerate::version(&mut c, v, &opts) {
            Ok(s)
                if !s.accepted
                    && s.refusal_alert == Some(enumerate::UNRECOGNIZED_NAME)
                    && opts.server_name.is_some() =>
            {
                refused_name = opts.server_name.take();
                enumerate::version(&mut c, v, &opts)
            }
            r => r,
        };
        match r {
            Ok(s) => versions.push(s),
            Err(ScanError::Cap(_)) => {
                capped = true;
                break;
            }
            Err(e) => return Err(e),
        }
    }
    versions.reverse();
    capped |= versions.iter().any(|v| v.incomplete);
    if !capped {
        match tls13_flight::read(&mut c, &mut versions, &opts) {
            Ok(()) => {}
            Err(ScanError::Cap(_)) => capped = true,
            // The server stopped taking connections part-way: what was found stays.
            Err(ScanError::Connect { .. } | ScanError::Silent { .. }) => {}
        }
    }
    let mut weaknesses = match weakness::check(&mut c, &versions, &opts) {
        Ok(w) => w,
        Err(ScanError::Cap(_)) => {
            capped = true;
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    let robot = if capped {
        None
    } else {
        match robot::check(&mut c, &versions, &opts) {
            Ok(r) => Some(r),
            Err(ScanError::Cap(_)) => {
                capped = true;
                None
            }
            // The server stopped taking connections part-way: what was found stays.
            Err(ScanError::Connect { .. } | ScanError::Silent { .. }) => None,
        }
    };
    if let Some(r) = &robot {
        if let Some(w) = weaknesses.iter_mut().find(|w| w.id == "robot") {
            w.state = r.weakness_state();
            w.detail = r.detail.clone();
        }
    }
    let early = if capped {
        None
    } else {
        match early_data::check(&mut c, &versions, &opts) {
            Ok(r) => Some(r),
            Err(ScanError::Cap(_)) => {
                capped = true;
                None
            }
            Err(ScanError::Connect { .. } | ScanError::Silent { .. }) => None,
        }
    };
    if let Some(r) = &early {
        if let Some(w) = weaknesses.iter_mut().find(|w| w.id == "early-data") {
            w.state = r.weakness_state();
            w.detail = r.detail.clone();
        }
    }
    let mut r = ScanReport {
        sslv2,
        versions,
        weaknesses,
        robot,
        early_data: early,
        verdicts: Vec::new(),
        connections: c.count,
        capped,
        duration_s: 0.0,
    };
    r.verdicts = findings::judge(&r);
    if let Some(name) = &refused_name {
        r.verdicts.insert(
            0,
            findings::server_name_refused("scan-sni", name, "the scan"),
        );
    }
    r.duration_s = start.elapsed().as_secs_f64();
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_name_is_never_an_ip_literal() {
        assert_eq!(server_name_for("10.0.0.7:3782", None), None);
        assert_eq!(server_name_for("[::1]:3782", None), None);
        assert_eq!(
            server_name_for("ied1.substation:3782", None).as_deref(),
            Some("ied1.substation")
        );
        assert_eq!(
            server_name_for("10.0.0.7:3782", Some("ied1")).as_deref(),
            Some("ied1")
        );
    }

    #[test]
    fn versions_round_trip_their_codes() {
        for v in ProtocolVersion::RECORD_VERSIONS {
            assert_eq!(ProtocolVersion::from_code(v.code()), Some(v));
        }
        assert_eq!(ProtocolVersion::Tls13.client_version(), 0x0303);
    }
}
