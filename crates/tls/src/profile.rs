//! `TlsProfile`: what one endpoint offers and requires, read from the `[tls]` table of a peer's
//! TOML configuration.
//!
//! ```toml
//! [tls]
//! backend = "openssl"                 # openssl | gnutls | rustls | rustls-awslc | openssl35
//! ca = "pki/rsa2048/ca.pem"           # one path or a list
//! cert = "pki/rsa2048/server.pem"
//! key = "pki/rsa2048/server.key"
//! peer_cert = "pki/rsa2048/client.pem"   # optional pinning: accept only this exact certificate
//! versions = ["1.2", "1.3"]
//! cipher_suites = ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"]
//! groups = ["X25519MLKEM768"]          # key-exchange groups offered/accepted; empty = library defaults
//! crl = ["pki/rsa2048/crl.pem"]
//! require_client_auth = true          # IEC 62351-3: mutual authentication is mandatory
//! session_resumption = true           # RFC 5246 §7.4.1.2 session IDs, RFC 5077 / RFC 8446 §4.6.1 tickets
//! session_tickets = false
//! num_tickets = 0                     # TLS 1.3 server; 0 for libiec61850 1.6.1 clients
//! renegotiation_interval_s = 3600     # TLS 1.2, RFC 5746 secure renegotiation
//! key_update_interval_s = 3600        # TLS 1.3, RFC 8446 §4.6.3 KeyUpdate
//! keylog = "keys.log"                 # NSS key log for tshark: LAB MONITORING ONLY (see `keylog`)
//! ```
//!
//! Relative paths are taken as written (relative to the working directory); callers that read a
//! profile from a file may rebase them with [`TlsProfile::rebase`].
use crate::backend::{self, BackendKind};
use crate::suites::{self, CipherSuite};
use crate::{KxGroup, TlsVersion};
use serde::{Deserialize, Deserializer, Serialize};
use std::path::{Path, PathBuf};

/// Errors in a profile. Each names the field and the offending value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProfileError {
    /// The TOML does not parse, or does not have the profile's shape (the parser's message).
    #[error("TLS profile: {0}")]
    Toml(String),
    /// A `cipher_suites` entry is not in the catalogue.
    #[error("unknown cipher suite {0:?} (expected an IANA name such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, see `gander suites`)")]
    UnknownSuite(String),
    /// The chosen backend's library on this machine cannot negotiate a listed suite.
    #[error("the {backend} backend on this machine lacks cipher suite {suite}")]
    SuiteNotInBackend {
        /// The suite's IANA name.
        suite: &'static str,
        /// The backend's name.
        backend: &'static str,
    },
    /// The chosen backend's library on this machine cannot negotiate a listed version.
    #[error("the {backend} backend cannot do {version}")]
    VersionNotInBackend {
        /// The version.
        version: TlsVersion,
        /// The backend's name.
        backend: &'static str,
    },
    /// A listed suite belongs to none of the listed versions (e.g. a TLS 1.3 suite with TLS 1.2).
    #[error("cipher suite {suite} cannot be used with any of the allowed versions ({versions})")]
    SuiteOutsideVersions {
        /// The suite's IANA name.
        suite: &'static str,
        /// The profile's versions, as written in the message.
        versions: String,
    },
    /// The chosen backend cannot restrict its handshakes to a listed key-exchange group.
    #[error("the {backend} backend on this machine lacks key-exchange group {group} (it offers: {offered})")]
    GroupNotInBackend {
        /// The group.
        group: KxGroup,
        /// The backend's name.
        backend: &'static str,
        /// The groups it has, as written in the message.
        offered: String,
    },
    /// Only post-quantum groups are listed but TLS 1.3 is not allowed (the ML-KEM groups are
    /// TLS 1.3 only).
    #[error(
        "key-exchange group {0} needs TLS 1.3 (the ML-KEM groups are not defined for TLS 1.2)"
    )]
    GroupNeedsTls13(KxGroup),
    /// A listed version has none of the listed suites.
    #[error("allowed version {0} has no cipher suite in the profile")]
    VersionWithoutSuite(TlsVersion),
    /// `versions` is empty.
    #[error("no TLS version allowed")]
    NoVersions,
    /// `versions` skips a version between its lowest and highest.
    #[error("versions must be contiguous (got {0}); a backend offers a range min..max")]
    VersionGap(String),
    /// A certificate, key, CA or CRL file cannot be read or loaded.
    #[error("{what} file {path:?} cannot be read: {reason}")]
    MissingFile {
        /// The profile field naming the file (`ca`, `cert`, `key`, `crl`, `peer_cert`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why it cannot be used, as the library or the system says it.
        reason: String,
    },
    /// A field the role needs is not set (the field's name).
    #[error("{0} is required (IEC 62351-3 mutual authentication needs a certificate, a key and a CA on both sides)")]
    Missing(&'static str),
    /// `num_tickets` is above 16.
    #[error("num_tickets = {0} is out of range (0..=16)")]
    NumTickets(u32),
    /// `io_timeout_ms` is 0.
    #[error("io_timeout_ms must be at least 1")]
    Timeout,
    /// The `keylog` file cannot be used (missing directory, a symbolic link, not a regular
    /// file, readable by others, or the system's error).
    #[error("keylog file {path:?}: {reason}")]
    KeyLog {
        /// The file.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
}

fn default_true() -> bool {
    true
}
fn default_versions() -> Vec<TlsVersion> {
    vec![TlsVersion::Tls12, TlsVersion::Tls13]
}
fn default_timeout() -> u64 {
    10_000
}

/// One path or a list of paths.
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(PathBuf),
        Many(Vec<PathBuf>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(p) => vec![p],
        OneOrMany::Many(v) => v,
    })
}

/// A TLS endpoint profile. See the module documentation for the TOML form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsProfile {
    /// The TLS library that runs the endpoint.
    #[serde(default)]
    pub backend: BackendKind,
    /// Trust anchors (PEM, one or more certificates per file).
    #[serde(default, deserialize_with = "one_or_many")]
    pub ca: Vec<PathBuf>,
    /// Own certificate (PEM; further certificates in the file are sent as the chain).
    #[serde(default)]
    pub cert: Option<PathBuf>,
    /// Own private key (PEM, unencrypted).
    #[serde(default)]
    pub key: Option<PathBuf>,
    /// Pinned peer certificate: the peer's leaf must be byte-identical (DER) to it, in addition to
    /// chaining to `ca`.
    #[serde(default)]
    pub peer_cert: Option<PathBuf>,
    /// Allowed protocol versions, a contiguous range (default TLS 1.2 and 1.3).
    #[serde(default = "default_versions")]
    pub versions: Vec<TlsVersion>,
    /// IANA names in preference order; empty = the backend library's defaults.
    #[serde(default)]
    pub cipher_suites: Vec<String>,
    /// Key-exchange groups (RFC 8446 §4.2.7 `supported_groups`) in preference order, the only
    /// ones offered (client) and accepted (server); empty = the library's defaults.
    #[serde(default)]
    pub groups: Vec<KxGroup>,
    /// CRLs (PEM or DER) checked for the peer's leaf certificate (RFC 5280 §6.3).
    #[serde(default, deserialize_with = "one_or_many")]
    pub crl: Vec<PathBuf>,
    /// Server: request and require a client certificate. IEC 62351-3 makes this mandatory; turning
    /// it off is only for experiments.
    #[serde(default = "default_true")]
    pub require_client_auth: bool,
    /// Resume sessions (TLS 1.2 session IDs; with `session_tickets` also RFC 5077 tickets and TLS 1.3 PSK).
    #[serde(default = "default_true")]
    pub session_resumption: bool,
    /// Issue and accept session tickets (RFC 5077 in TLS 1.2, NewSessionTicket in TLS 1.3).
    #[serde(default)]
    pub session_tickets: bool,
    /// TLS 1.3 server: NewSessionTickets sent after the handshake. Default: 2 when resumption with
    /// tickets is on, else 0. libiec61850 1.6.1 clients drop the connection on a ticket: use 0.
    #[serde(default)]
    pub num_tickets: Option<u32>,
    /// TLS 1.2: renegotiate (RFC 5746) after this many seconds; IEC 62351-3 asks for at most 24 h.
    #[serde(default)]
    pub renegotiation_interval_s: Option<u64>,
    /// TLS 1.3: send a KeyUpdate (RFC 8446 §4.6.3) after this many seconds.
    #[serde(default)]
    pub key_update_interval_s: Option<u64>,
    /// Client: name sent as SNI; when `verify_hostname` is set the server certificate must match it.
    #[serde(default)]
    pub server_name: Option<String>,
    /// Client: check that the server certificate matches `server_name`.
    #[serde(default)]
    pub verify_hostname: bool,
    /// Socket read/write timeout for the handshake and I/O, so that no failure hangs.
    #[serde(default = "default_timeout")]
    pub io_timeout_ms: u64,
    /// Append every session's secrets to this file in the NSS key log format, so that tshark
    /// or Wireshark can decrypt captures ([`crate::keylog`]). This defeats TLS confidentiality
    /// for anyone who can read the file: for lab monitoring only. Created with mode 0600.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keylog: Option<PathBuf>,
}

impl Default for TlsProfile {
    fn default() -> Self {
        TlsProfile {
            backend: BackendKind::default(),
            ca: Vec::new(),
            cert: None,
            key: None,
            peer_cert: None,
            versions: default_versions(),
            cipher_suites: Vec::new(),
            groups: Vec::new(),
            crl: Vec::new(),
            require_client_auth: true,
            session_resumption: true,
            session_tickets: false,
            num_tickets: None,
            renegotiation_interval_s: None,
            key_update_interval_s: None,
            server_name: None,
            verify_hostname: false,
            io_timeout_ms: default_timeout(),
            keylog: None,
        }
    }
}

#[derive(Deserialize)]
struct Wrapper {
    tls: TlsProfile,
}

impl TlsProfile {
    /// Parses a profile from TOML: either a document with a `[tls]` table (other tables are
    /// ignored) or the bare table contents.
    pub fn from_toml(text: &str) -> Result<Self, ProfileError> {
        let value: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ProfileError::Toml(e.to_string()))?;
        if let Some(t) = value.get("tls") {
            if t.is_table() {
                return Wrapper::deserialize(toml::Value::Table(value.clone()))
                    .map(|w| w.tls)
                    .map_err(|e| ProfileError::Toml(e.to_string()));
            }
        }
        TlsProfile::deserialize(toml::Value::Table(value))
            .map_err(|e| ProfileError::Toml(e.to_string()))
    }

    /// Reads [`TlsProfile::from_toml`] from a file and rebases relative paths on its directory.
    pub fn from_file(path: &Path) -> Result<Self, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|e| ProfileError::MissingFile {
            what: "profile",
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        let mut p = Self::from_toml(&text)?;
        if let Some(dir) = path.parent() {
            p.rebase(dir);
        }
        Ok(p)
    }

    /// Makes every relative path relative to `dir`.
    pub fn rebase(&mut self, dir: &Path) {
        let fix = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = dir.join(&*p);
            }
        };
        self.ca.iter_mut().for_each(fix);
        self.crl.iter_mut().for_each(fix);
        for p in [
            &mut self.cert,
            &mut self.key,
            &mut self.peer_cert,
            &mut self.keylog,
        ]
        .into_iter()
        .flatten()
        {
            fix(p);
        }
    }

    /// The cipher suites of the profile, resolved in the catalogue (empty = backend defaults).
    pub fn suites(&self) -> Result<Vec<&'static CipherSuite>, ProfileError> {
        self.cipher_suites
            .iter()
            .map(|n| suites::lookup(n).ok_or_else(|| ProfileError::UnknownSuite(n.clone())))
            .collect()
    }

    /// Lowest and highest allowed version.
    pub fn version_range(&self) -> Result<(TlsVersion, TlsVersion), ProfileError> {
        let min = self
            .versions
            .iter()
            .min()
            .copied()
            .ok_or(ProfileError::NoVersions)?;
        let max = self
            .versions
            .iter()
            .max()
            .copied()
            .ok_or(ProfileError::NoVersions)?;
        let all: Vec<_> = TlsVersion::ALL
            .into_iter()
            .filter(|v| min <= *v && *v <= max)
            .collect();
        if all.iter().any(|v| !self.versions.contains(v)) {
            let list: Vec<_> = self.versions.iter().map(|v| v.short()).collect();
            return Err(ProfileError::VersionGap(list.join(", ")));
        }
        Ok((min, max))
    }

    /// TLS 1.3 tickets the server sends after the handshake.
    pub fn effective_num_tickets(&self) -> u32 {
        match self.num_tickets {
            Some(n) => n,
            None if self.session_resumption && self.session_tickets => 2,
            None => 0,
        }
    }

    /// Checks everything that can be checked without a peer: suite names, what the chosen backend
    /// offers on this machine, version/suite coherence, and that every file can be read.
    /// `server` selects the role (a server always needs a certificate and key; a client needs them
    /// too, since IEC 62351-3 mutual authentication is mandatory, unless the profile opts out).
    pub fn validate(&self, server: bool) -> Result<(), ProfileError> {
        self.validate_with(server, true)
    }

    /// [`TlsProfile::validate`] for the client of a TLS survey, which may come without trust
    /// anchors: an engineer surveying a device whose CA they do not hold (as with sslscan or
    /// testssl.sh) still learns versions, suites, the chain as sent and the rest; the chain is
    /// then read and not verified (`survey`, docs/tls-survey.md).
    pub fn validate_survey_client(&self) -> Result<(), ProfileError> {
        self.validate_with(false, false)
    }

    fn validate_with(&self, server: bool, need_ca: bool) -> Result<(), ProfileError> {
        let (min, max) = self.version_range()?;
        let caps = backend::capabilities(self.backend);
        let bname = self.backend.name();
        for v in &self.versions {
            if caps.in_process && !caps.versions.contains(v) {
                return Err(ProfileError::VersionNotInBackend {
                    version: *v,
                    backend: bname,
                });
            }
        }
        let suites = self.suites()?;
        for s in &suites {
            if caps.in_process && !caps.suites.contains(&s.code) {
                return Err(ProfileError::SuiteNotInBackend {
                    suite: s.name,
                    backend: bname,
                });
            }
            if !self.versions.iter().any(|v| s.allows(*v)) {
                let list: Vec<_> = self.versions.iter().map(|v| v.short()).collect();
                return Err(ProfileError::SuiteOutsideVersions {
                    suite: s.name,
                    versions: list.join(", "),
                });
            }
        }
        if !suites.is_empty() {
            for v in TlsVersion::ALL
                .into_iter()
                .filter(|v| min <= *v && *v <= max)
            {
                if !suites.iter().any(|s| s.allows(v)) {
                    return Err(ProfileError::VersionWithoutSuite(v));
                }
            }
        }
        if caps.in_process {
            for g in &self.groups {
                if !caps.groups.contains(g) {
                    let offered: Vec<_> = caps.groups.iter().map(|g| g.name()).collect();
                    return Err(ProfileError::GroupNotInBackend {
                        group: *g,
                        backend: bname,
                        offered: if offered.is_empty() {
                            "none selectable".into()
                        } else {
                            offered.join(", ")
                        },
                    });
                }
            }
        }
        if !self.groups.is_empty()
            && !self.versions.contains(&TlsVersion::Tls13)
            && self.groups.iter().all(|g| !g.tls12())
        {
            return Err(ProfileError::GroupNeedsTls13(self.groups[0]));
        }
        if let Some(n) = self.num_tickets {
            if n > 16 {
                return Err(ProfileError::NumTickets(n));
            }
        }
        if self.io_timeout_ms == 0 {
            return Err(ProfileError::Timeout);
        }
        let needs_own = server || self.require_client_auth;
        if needs_own {
            if self.cert.is_none() {
                return Err(ProfileError::Missing("cert"));
            }
            if self.key.is_none() {
                return Err(ProfileError::Missing("key"));
            }
        }
        if need_ca && self.ca.is_empty() && (!server || self.require_client_auth) {
            return Err(ProfileError::Missing("ca"));
        }
        let check = |what: &'static str, p: &PathBuf| -> Result<(), ProfileError> {
            std::fs::metadata(p)
                .and_then(|m| {
                    if m.is_file() {
                        Ok(())
                    } else {
                        Err(std::io::Error::other("not a regular file"))
                    }
                })
                .map_err(|e| ProfileError::MissingFile {
                    what,
                    path: p.clone(),
                    reason: e.to_string(),
                })
        };
        for p in &self.ca {
            check("ca", p)?;
        }
        for p in &self.crl {
            check("crl", p)?;
        }
        if let Some(p) = &self.cert {
            check("cert", p)?;
        }
        if let Some(p) = &self.key {
            check("key", p)?;
        }
        if let Some(p) = &self.peer_cert {
            check("peer_cert", p)?;
        }
        if let Some(p) = &self.keylog {
            // Created when the backend opens; here only what can be told without creating it.
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            if dir.is_some_and(|d| !d.is_dir()) {
                return Err(ProfileError::KeyLog {
                    path: p.clone(),
                    reason: "its directory does not exist".into(),
                });
            }
            if p.is_dir() {
                return Err(ProfileError::KeyLog {
                    path: p.clone(),
                    reason: "is a directory".into(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tls_table_and_bare() {
        let doc = r#"
            [server]
            address = "127.0.0.1:3782"
            [tls]
            backend = "gnutls"
            ca = "ca.pem"
            versions = ["1.0", "1.1", "1.2"]
            cipher_suites = ["TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA"]
            crl = ["a.pem", "b.pem"]
            num_tickets = 0
        "#;
        let p = TlsProfile::from_toml(doc).unwrap();
        assert_eq!(p.backend, BackendKind::Gnutls);
        assert_eq!(p.ca, vec![PathBuf::from("ca.pem")]);
        assert_eq!(p.crl.len(), 2);
        assert_eq!(
            p.version_range().unwrap(),
            (TlsVersion::Tls10, TlsVersion::Tls12)
        );
        assert!(p.require_client_auth);
        let bare = TlsProfile::from_toml("backend = \"rustls\"\nversions = [\"1.3\"]").unwrap();
        assert_eq!(bare.backend, BackendKind::Rustls);
    }

    #[test]
    fn keylog_parses_rebases_and_is_checked() {
        let mut p = TlsProfile::from_toml("keylog = \"keys.log\"").unwrap();
        assert_eq!(p.keylog, Some(PathBuf::from("keys.log")));
        p.rebase(Path::new("/etc/gander"));
        assert_eq!(p.keylog, Some(PathBuf::from("/etc/gander/keys.log")));
        assert_eq!(TlsProfile::default().keylog, None);
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, "").unwrap();
        let with = |keylog: PathBuf| TlsProfile {
            keylog: Some(keylog),
            require_client_auth: false,
            ca: vec![ca.clone()],
            ..Default::default()
        };
        assert_eq!(with(dir.path().join("keys.log")).validate(false), Ok(()));
        assert!(matches!(
            with("/nonexistent-gander-dir/keys.log".into()).validate(false),
            Err(ProfileError::KeyLog { .. })
        ));
        assert!(matches!(
            with(dir.path().to_owned()).validate(false),
            Err(ProfileError::KeyLog { .. })
        ));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            TlsProfile::from_toml("backend = \"schannel\""),
            Err(ProfileError::Toml(_))
        ));
        assert!(matches!(
            TlsProfile::from_toml("versions = [\"1.4\"]"),
            Err(ProfileError::Toml(_))
        ));
        assert!(matches!(
            TlsProfile::from_toml("cypher = 1"),
            Err(ProfileError::Toml(_))
        ));
        let p = TlsProfile {
            cipher_suites: vec!["TLS_NOPE".into()],
            ..Default::default()
        };
        assert_eq!(
            p.suites(),
            Err(ProfileError::UnknownSuite("TLS_NOPE".into()))
        );
        let p = TlsProfile {
            versions: vec![TlsVersion::Tls10, TlsVersion::Tls12],
            ..Default::default()
        };
        assert!(matches!(
            p.version_range(),
            Err(ProfileError::VersionGap(_))
        ));
        let p = TlsProfile {
            versions: vec![],
            ..Default::default()
        };
        assert_eq!(p.validate(true), Err(ProfileError::NoVersions));
    }

    #[test]
    fn groups_parse_and_are_checked() {
        let p = TlsProfile::from_toml(
            "backend = \"rustls-awslc\"\ngroups = [\"X25519MLKEM768\", \"x25519\"]",
        )
        .unwrap();
        assert_eq!(p.backend, BackendKind::RustlsAwslc);
        assert_eq!(p.groups, vec![KxGroup::X25519Mlkem768, KxGroup::X25519]);
        assert!(matches!(
            TlsProfile::from_toml("groups = [\"X448\"]"),
            Err(ProfileError::Toml(_))
        ));
        // ring has no ML-KEM.
        let p = TlsProfile {
            backend: BackendKind::Rustls,
            groups: vec![KxGroup::Mlkem768],
            ..Default::default()
        };
        assert!(matches!(
            p.validate(true),
            Err(ProfileError::GroupNotInBackend {
                group: KxGroup::Mlkem768,
                backend: "rustls",
                ..
            })
        ));
        let p = TlsProfile {
            backend: BackendKind::RustlsAwslc,
            versions: vec![TlsVersion::Tls12],
            groups: vec![KxGroup::Mlkem768],
            ..Default::default()
        };
        assert_eq!(
            p.validate(true),
            Err(ProfileError::GroupNeedsTls13(KxGroup::Mlkem768))
        );
    }

    #[test]
    fn backend_limits() {
        let p = TlsProfile {
            backend: BackendKind::Rustls,
            versions: vec![TlsVersion::Tls11, TlsVersion::Tls12],
            ..Default::default()
        };
        assert_eq!(
            p.validate(true),
            Err(ProfileError::VersionNotInBackend {
                version: TlsVersion::Tls11,
                backend: "rustls"
            })
        );
        let p = TlsProfile {
            backend: BackendKind::Rustls,
            versions: vec![TlsVersion::Tls12],
            cipher_suites: vec!["TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA".into()],
            ..Default::default()
        };
        assert!(matches!(
            p.validate(true),
            Err(ProfileError::SuiteNotInBackend { .. })
        ));
        let p = TlsProfile {
            versions: vec![TlsVersion::Tls13],
            cipher_suites: vec!["TLS_RSA_WITH_AES_128_CBC_SHA256".into()],
            ..Default::default()
        };
        assert!(matches!(
            p.validate(true),
            Err(ProfileError::SuiteOutsideVersions { .. })
        ));
        let p = TlsProfile {
            cert: Some("/nonexistent/x.pem".into()),
            key: Some("/nonexistent/k".into()),
            ca: vec!["/nonexistent/ca".into()],
            ..Default::default()
        };
        assert!(matches!(
            p.validate(true),
            Err(ProfileError::MissingFile { what: "ca", .. })
        ));
    }
}
