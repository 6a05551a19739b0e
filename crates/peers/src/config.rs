//! TOML configuration of the two peers (the RSE paper's 61850SER and 61850CLI settings).
//!
//! Server:
//! ```toml
//! listen = "127.0.0.1:3782"        # port 0: any free port (printed in READY)
//! events = "server-events.jsonl"   # JSON lines, CLOCK_MONOTONIC ns; absent: no log
//! timeout_ms = 10000               # per association step and per silent peer
//! [tls]                            # absent: plain TCP (see gander_tls::TlsProfile)
//! backend = "openssl"
//! ca = "ca.pem"
//! cert = "server.pem"
//! key = "server.key"
//! peer_cert = "client.pem"
//! versions = ["1.2"]
//! cipher_suites = ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]
//! session_resumption = false
//! [reports]
//! period_ms = 500                  # 0: back to back
//! period_us = 100                  # optional, overrides period_ms
//! size = 125                       # MMS InformationReport PDU octets (fixed model only)
//! ```
//! Optionally `scl = "feeder.cid"` (with `ied = "FDR1"`, `access_point = "S1"`) serves that
//! IED's model instead of the fixed one (`docs/mms-peers.md`, "Serving an SCL model"); its
//! values drift like a real IED's unless `values = "static"` (still) or `"stimulus"` (the
//! measurement's one change per period).
//! Client: `connect` instead of `listen`, plus `connections` (HT loop), `reports` (RT loop),
//! `gi` (ask for a general interrogation when enabling the RCB) and `report_timeout_ms`.
//!
//! Relative paths (TLS files, event log) are taken relative to the configuration file.
use gander_tls::TlsProfile;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a peer config was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read {path:?}")]
    Read {
        /// The config file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The config file is not valid TOML, or has unknown or mistyped keys.
    #[error("{path:?}")]
    Parse {
        /// The config file.
        path: PathBuf,
        /// What the TOML parser said.
        #[source]
        source: toml::de::Error,
    },
    /// A value is out of range (the message says which and why).
    #[error("{0}")]
    Invalid(String),
}

fn default_timeout_ms() -> u64 {
    10_000
}
fn default_period_ms() -> u64 {
    500
}
fn default_size() -> usize {
    gander_mms::model::DEFAULT_REPORT_SIZE
}
fn default_one() -> u64 {
    1
}

/// `[reports]` of the server.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ReportsConfig {
    /// Report period, ms (used when `period_us` is absent).
    #[serde(default = "default_period_ms")]
    pub period_ms: u64,
    /// Report period, µs (overrides `period_ms`: sub-millisecond periods for the benchmarks).
    #[serde(default)]
    pub period_us: Option<u64>,
    /// Size of each report on the wire (MMS PDU), bytes.
    #[serde(default = "default_size")]
    pub size: usize,
}

impl Default for ReportsConfig {
    fn default() -> Self {
        ReportsConfig {
            period_ms: default_period_ms(),
            period_us: None,
            size: default_size(),
        }
    }
}

impl ReportsConfig {
    /// The report period (`period_us` if set, else `period_ms`).
    pub fn period(&self) -> Duration {
        match self.period_us {
            Some(us) => Duration::from_micros(us),
            None => Duration::from_millis(self.period_ms),
        }
    }
}

/// `gander mms server` configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on, `host:port` (port 0: any; the chosen one is printed with `READY`).
    pub listen: String,
    /// JSON-lines event log; relative paths are taken from the config file's directory.
    #[serde(default)]
    pub events: Option<PathBuf>,
    /// TLS settings; absent: plain TCP.
    #[serde(default)]
    pub tls: Option<TlsProfile>,
    /// The periodic reports.
    #[serde(default)]
    pub reports: ReportsConfig,
    /// Longest wait for a peer's message, ms.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Serve the model of this SCL file (ICD/CID) instead of gander's fixed model; relative
    /// to the config file's directory.
    #[serde(default)]
    pub scl: Option<PathBuf>,
    /// The IED of the SCL file (needed when it has several).
    #[serde(default)]
    pub ied: Option<String>,
    /// The access point whose logical devices are served (default: all).
    #[serde(default)]
    pub access_point: Option<String>,
    /// With `scl`: how the model's values change (`values = "drift"`, `"static"` or
    /// `"stimulus"`; default drift).
    #[serde(default)]
    pub values: ValueMode,
}

/// How the values of a served SCL model change by themselves (the fixed model is not
/// affected: its reports are the measurement's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueMode {
    /// Like a real IED's: measurands drift, status points toggle now and then, each with its
    /// quality and time stamp (`gander_mms::server_model::drift`), whether or not a client
    /// listens.
    #[default]
    Drift,
    /// Still: only clients' writes change values.
    Static,
    /// The measurement stimulus: every report period, while a client has an RCB with dchg
    /// enabled, the first changeable leaf of its data set's first member moves
    /// (`ServerModel::stimuli`), one data change per RCB per period; nothing else moves.
    Stimulus,
}

/// `gander mms client` configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientConfig {
    /// Server address, `host:port`.
    pub connect: String,
    /// JSON-lines event log; relative paths are taken from the config file's directory.
    #[serde(default)]
    pub events: Option<PathBuf>,
    /// TLS settings; absent: plain TCP.
    #[serde(default)]
    pub tls: Option<TlsProfile>,
    /// HT loop: connections opened one after the other (the paper: 1090). The last one stays
    /// open for the RT loop when `reports` > 0.
    #[serde(default = "default_one")]
    pub connections: u64,
    /// RT loop: reports to receive on the last connection (the paper: 4000).
    #[serde(default)]
    pub reports: u64,
    /// Write GI=true after RptEna (the first report is then a general interrogation).
    #[serde(default)]
    pub gi: bool,
    /// Longest wait for an answer during association and set-up, ms.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Longest wait for the next report before giving up with a `timeout` error.
    #[serde(default = "default_timeout_ms")]
    pub report_timeout_ms: u64,
    /// The report control block of a server whose model is not gander's: an IEC 61850 reference
    /// `LD/LN.RP.name` or `LD/LN.BR.name`, or `"discover"` for the first free one. Enabled with
    /// the planner and restored as found after the reports. Absent: gander's own model's
    /// `IMPLD0/LLN0.RP.urcb01`, enabled as libiec61850's client does.
    #[serde(default)]
    pub rcb: Option<String>,
    /// With `rcb`: write this integrity period (IntgPd, ms) and set the integrity trigger, so the
    /// block reports periodically whatever the data does; restored afterwards.
    #[serde(default)]
    pub intg_pd_ms: Option<u32>,
    /// With `rcb`: timed reads of the block's data set before the reports (READ_RTT events).
    #[serde(default)]
    pub reads: u64,
    /// With `rcb`: the user declares this host's clock and the server's synchronised (PTP/NTP);
    /// each RT_END then carries `one_way_ns`, arrival (CLOCK_REALTIME) minus the report's own
    /// time (the changed data's `t`, else TimeOfEntry).
    #[serde(default)]
    pub clocks_synchronised: bool,
    /// `[control]`: measure one named control object's round trips on the last association
    /// (it operates the device; `crate::client::control`).
    #[serde(default)]
    pub control: Option<crate::client::ControlConfig>,
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })
}

fn rebase(dir: &Path, events: &mut Option<PathBuf>, tls: &mut Option<TlsProfile>) {
    if let Some(e) = events.as_mut() {
        if e.is_relative() {
            *e = dir.join(&*e);
        }
    }
    if let Some(t) = tls.as_mut() {
        t.rebase(dir);
    }
}

fn check_common(timeout_ms: u64, tls: &Option<TlsProfile>) -> Result<(), ConfigError> {
    if timeout_ms == 0 {
        return Err(ConfigError::Invalid("timeout_ms must be at least 1".into()));
    }
    let _ = tls;
    Ok(())
}

impl ServerConfig {
    /// Parses a config (paths as written).
    pub fn from_toml(text: &str) -> Result<Self, toml::de::Error> {
        toml::from_str(text)
    }
    /// Reads a config file, rebases its relative paths on the file's directory and checks it.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let mut c = Self::from_toml(&read(path)?).map_err(|source| ConfigError::Parse {
            path: path.to_owned(),
            source,
        })?;
        if let Some(dir) = path.parent() {
            rebase(dir, &mut c.events, &mut c.tls);
            if let Some(s) = c.scl.as_mut() {
                if s.is_relative() {
                    *s = dir.join(&*s);
                }
            }
        }
        c.check()?;
        Ok(c)
    }
    /// A configuration with the defaults of a config file that gives only `listen`.
    pub fn with_listen(listen: &str) -> Self {
        ServerConfig {
            listen: listen.into(),
            events: None,
            tls: None,
            reports: ReportsConfig::default(),
            timeout_ms: default_timeout_ms(),
            scl: None,
            ied: None,
            access_point: None,
            values: ValueMode::default(),
        }
    }
    /// Checks values that TOML types cannot (timeouts, a buildable report size).
    pub fn check(&self) -> Result<(), ConfigError> {
        check_common(self.timeout_ms, &self.tls)?;
        if self.scl.is_none() && (self.ied.is_some() || self.access_point.is_some()) {
            return Err(ConfigError::Invalid(
                "ied and access_point select from an SCL file: give scl too".into(),
            ));
        }
        gander_mms::model::ModelConfig::for_report_size(self.reports.size).map_err(|_| {
            ConfigError::Invalid(format!(
                "reports.size = {}: no report of exactly this size can be built (minimum {} octets; some sizes fall on a BER length step: try one more)",
                self.reports.size,
                gander_mms::model::ImpModel::new(gander_mms::model::ModelConfig { blob_len: 0 })
                    .full_report_size()
            ))
        })?;
        Ok(())
    }
}

impl ClientConfig {
    /// Parses a config (paths as written).
    pub fn from_toml(text: &str) -> Result<Self, toml::de::Error> {
        toml::from_str(text)
    }
    /// Reads a config file, rebases its relative paths on the file's directory and checks it.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let mut c = Self::from_toml(&read(path)?).map_err(|source| ConfigError::Parse {
            path: path.to_owned(),
            source,
        })?;
        if let Some(dir) = path.parent() {
            rebase(dir, &mut c.events, &mut c.tls);
        }
        c.check()?;
        Ok(c)
    }
    /// Checks values that TOML types cannot (timeouts, at least one connection).
    pub fn check(&self) -> Result<(), ConfigError> {
        check_common(self.timeout_ms, &self.tls)?;
        if self.connections == 0 {
            return Err(ConfigError::Invalid(
                "connections must be at least 1".into(),
            ));
        }
        if let Some(r) = &self.rcb {
            if r != crate::client::DISCOVER && crate::client::parse_reference(r).is_none() {
                return Err(ConfigError::Invalid(format!(
                    "rcb {r:?}: expected \"discover\" or a reference LD/LN.RP.name or LD/LN.BR.name"
                )));
            }
        }
        if self.report_timeout_ms == 0 {
            return Err(ConfigError::Invalid(
                "report_timeout_ms must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn paper_settings_parse() {
        let s = ServerConfig::from_toml(
            r#"
listen = "127.0.0.1:3782"
events = "server-events.jsonl"
[tls]
backend = "openssl"
ca = "ca.pem"
cert = "server.pem"
key = "server.key"
peer_cert = "client.pem"
versions = ["1.2"]
cipher_suites = ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]
session_resumption = false
[reports]
period_ms = 500
size = 125
"#,
        )
        .unwrap();
        assert_eq!(s.reports.period(), Duration::from_millis(500));
        assert!(s.tls.is_some());
        s.check().unwrap();
        let c = ClientConfig::from_toml(
            "connect = \"127.0.0.1:3782\"\nconnections = 1090\nreports = 4000\n",
        )
        .unwrap();
        assert_eq!((c.connections, c.reports), (1090, 4000));
        assert!(ClientConfig::from_toml("connect = \"x\"\nbogus = 1\n").is_err());
        let mut bad = s.clone();
        bad.reports.size = 3;
        assert!(bad.check().is_err());
    }

    #[test]
    fn value_modes_parse() {
        let v =
            |t: &str| ServerConfig::from_toml(&format!("listen = \"x\"\n{t}")).map(|c| c.values);
        assert_eq!(v("").unwrap(), ValueMode::Drift);
        assert_eq!(v("values = \"static\"").unwrap(), ValueMode::Static);
        assert_eq!(v("values = \"stimulus\"").unwrap(), ValueMode::Stimulus);
        assert!(v("values = \"wobble\"").is_err());
    }
}
