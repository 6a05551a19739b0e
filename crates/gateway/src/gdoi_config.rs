//! The gateway's `[gdoi]` table: the gateway is an IEC 62351-9 group member (GDOI, RFC 6407,
//! RFC 8052) that registers with one of two key servers and receives rekeys, so the keys of
//! rules that name a `group` arrive while frames flow (docs/gateway.md, "Keys from a key
//! server").
//!
//! ```toml
//! [gdoi]
//! servers = ["10.85.0.10:848", "10.85.0.11:848"]  # the second when the first does not answer
//! identity = "gw-1"                 # ID_KEY_ID the key server knows this gateway by
//! psk_hex = "000102..."             # pre-shared key (or cert/key/ca, see below)
//! groups = ["goose-1"]              # the groups to register for; rules name them (`group`)
//! policy = "keep-until-expiry"      # or "fail-closed": when no key server answers
//! bind = "10.85.0.254"              # optional: the address to register from
//! push_listen = "10.85.0.254:8848"  # optional: where the key server pushes rekeys
//! timeout_s = 2                     # wait per message before resending (3 sends)
//! renew_before_s = 30               # register again this long before the key's lifetime ends
//! ```
//!
//! With certificates (IKEv1 main mode with signatures, RFC 2409 5.1: RSA >= 2048 bits, ECDSA
//! P-256 or P-384 per RFC 4754) instead of `identity` and `psk_hex`:
//!
//! ```toml
//! cert = "gw-1.pem"                 # this gateway's certificate (PEM; intermediates after it)
//! key = "gw-1.key"                  # its private key (PEM)
//! ca = "ca.pem"                     # the CAs the key server's certificate must chain to
//! crl = "ca.crl"                    # optional: CRLs the key server's certificate is checked against
//! server_name = "O=Utility,CN=kdc"  # the key server's subject DN (or a subjectAltName)
//! ```
//!
//! The identity is then the certificate's subject (ID_DER_ASN1_DN, RFC 4945 3.1), which the key
//! server's policy names (`subject` or `san`), so `identity` is refused with `cert`. Without
//! `server_name` any certificate of the CA would pass as the key server (a CA that issues the
//! members' certificates would let any member pose as it): the table is refused without it.
//! Relative paths are read from the configuration file's directory; the files are read when
//! the configuration is checked, so `--check` refuses a missing or unusable certificate.

use gander_gdoi::cert_auth::{CertError, CertMatch, Credentials};
use gander_gdoi::member_state::{FailPolicy, MemberTiming};
use gander_gdoi::net::member::{RegisterOptions, RunnerConfig};
use gander_gdoi::profile::{PeerProfile, UnknownProfile};
use gander_gdoi::trust::TrustStore;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::IdPayload;
use serde::Deserialize;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Why the `[gdoi]` table was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GdoiConfigError {
    /// A field is missing, malformed or contradicts another.
    #[error("[gdoi] {0}")]
    Invalid(String),
    /// The certificate, its key, the CA or CRL file cannot be used.
    #[error("[gdoi] {what}: {source}")]
    Credentials {
        /// Which setting.
        what: &'static str,
        /// Why.
        #[source]
        source: CertError,
    },
}

/// `[gdoi]` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GdoiToml {
    /// Key servers, HOST:PORT, in order of preference (one or two).
    pub servers: Vec<String>,
    /// This gateway's identity (ID_KEY_ID), with `psk_hex` only.
    #[serde(default)]
    pub identity: String,
    /// Pre-shared key, hex (at least 16 octets, as the key server requires).
    pub psk_hex: Option<String>,
    /// Certificate (PEM) for phase 1 with signatures.
    pub cert: Option<PathBuf>,
    /// Its private key (PEM).
    pub key: Option<PathBuf>,
    /// The CA that signed the key server's certificate (PEM).
    pub ca: Option<PathBuf>,
    /// CRLs (PEM) the key server's certificate is checked against.
    pub crl: Option<PathBuf>,
    /// The key server's certificate: its subject DN (`O=Utility,CN=kdc`, anything with `=`) or
    /// a subjectAltName. Required with `cert`.
    pub server_name: Option<String>,
    /// Groups to register for.
    pub groups: Vec<String>,
    /// When no key server answers.
    #[serde(default)]
    pub policy: FailPolicy,
    /// Source address of registrations (the key server picks the PSK by it).
    pub bind: Option<IpAddr>,
    /// Where pushes arrive.
    pub push_listen: Option<SocketAddr>,
    /// Seconds to wait per message.
    pub timeout_s: Option<f64>,
    /// Seconds before the lifetime's end to register again.
    pub renew_before_s: Option<u64>,
    /// What gander writes for the key servers: "rfc" (default), "go-iec61850" or "ipsec-doi"
    /// (`gander_gdoi::profile`).
    pub profile: Option<String>,
}

impl GdoiToml {
    /// Checks the table without any I/O except resolving the key servers' names.
    pub fn check(&self) -> Result<(), GdoiConfigError> {
        self.peer_profile()?;
        self.runner_configs().map(|_| ())
    }

    /// `profile`: what gander writes for the key servers (an unknown name is refused with
    /// the valid ones).
    pub fn peer_profile(&self) -> Result<PeerProfile, GdoiConfigError> {
        match &self.profile {
            None => Ok(PeerProfile::default()),
            Some(p) => p
                .parse()
                .map_err(|e: UnknownProfile| GdoiConfigError::Invalid(format!("profile: {e}"))),
        }
    }

    /// [`GdoiToml::check`] and, with certificates, reads and checks the certificate, its key,
    /// the CAs and CRLs (what `--check` must refuse before the gateway starts).
    pub fn check_files(&self) -> Result<(), GdoiConfigError> {
        self.check()?;
        self.register_options().map(|_| ())
    }

    /// Makes `cert`, `key`, `ca` and `crl` relative to `base` (the configuration's directory).
    pub fn resolve_paths(&mut self, base: &Path) {
        for p in [&mut self.cert, &mut self.key, &mut self.ca, &mut self.crl]
            .into_iter()
            .flatten()
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
    }

    /// How every group's registration authenticates: with `cert`, the loaded credentials and
    /// the key server's expected certificate name; with `psk_hex`, the defaults.
    pub fn register_options(&self) -> Result<RegisterOptions, GdoiConfigError> {
        let profile = self.peer_profile()?;
        let (Some(c), Some(k), Some(ca)) = (&self.cert, &self.key, &self.ca) else {
            return Ok(RegisterOptions {
                profile,
                ..RegisterOptions::default()
            });
        };
        let cred = |what| move |source| GdoiConfigError::Credentials { what, source };
        let trust = TrustStore::load(ca, self.crl.as_deref()).map_err(cred("ca/crl"))?;
        let creds = Credentials::load(c, k, Arc::new(trust)).map_err(cred("cert/key"))?;
        let server_cert = self.server_name.clone().map(|n| {
            if n.contains('=') {
                CertMatch::Subject(n)
            } else {
                CertMatch::San(n)
            }
        });
        Ok(RegisterOptions {
            cert: Some(Arc::new(creds)),
            keylog: None,
            server_cert,
            profile,
        })
    }

    /// One runner configuration per group (each group is one registration and one push
    /// stream, RFC 6407 3); push addresses of later groups are the first's port + index.
    pub fn runner_configs(&self) -> Result<Vec<RunnerConfig>, GdoiConfigError> {
        let bad = |s: String| Err(GdoiConfigError::Invalid(s));
        if self.servers.is_empty() || self.servers.len() > 2 {
            return bad("servers: give one or two key servers".into());
        }
        if self.groups.is_empty() {
            return bad("groups is empty".into());
        }
        let mut seen = std::collections::HashSet::new();
        for g in &self.groups {
            if g.is_empty() || !seen.insert(g) {
                return bad(format!("group {g:?} is empty or repeated"));
            }
        }
        let psk = match (&self.psk_hex, &self.cert, &self.key, &self.ca) {
            (Some(h), None, None, None) => {
                let k = hex::decode(h)
                    .map_err(|e| GdoiConfigError::Invalid(format!("psk_hex: {e}")))?;
                if k.len() < 16 {
                    return bad("psk_hex: at least 16 octets".into());
                }
                if self.identity.is_empty() {
                    return bad("identity is empty (psk_hex needs it)".into());
                }
                if self.crl.is_some() || self.server_name.is_some() {
                    return bad("crl and server_name go with cert/key/ca, not psk_hex".into());
                }
                k
            }
            (None, Some(_), Some(_), Some(_)) => {
                if !self.identity.is_empty() {
                    return bad(
                        "identity: with cert the identity is the certificate's subject; remove identity"
                            .into(),
                    );
                }
                if !matches!(self.server_name.as_deref(), Some(n) if !n.is_empty()) {
                    return bad(
                        "server_name: with cert, name the key server's certificate (its subject DN or a subjectAltName)"
                            .into(),
                    );
                }
                Vec::new()
            }
            _ => return bad("give psk_hex, or cert, key and ca (not both)".into()),
        };
        let servers = self
            .servers
            .iter()
            .map(|s| {
                s.to_socket_addrs()
                    .ok()
                    .and_then(|mut a| a.next())
                    .ok_or_else(|| GdoiConfigError::Invalid(format!("server {s:?}: no address")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let timeout = self.timeout_s.unwrap_or(2.0);
        if !(0.05..=60.0).contains(&timeout) {
            return bad("timeout_s: 0.05 to 60".into());
        }
        let id = |s: &str| IdPayload {
            id_type: id_type::KEY_ID,
            protocol: 0,
            port: 0,
            data: s.as_bytes().to_vec(),
        };
        let mut out = Vec::new();
        for (i, g) in self.groups.iter().enumerate() {
            let push_listen = match self.push_listen {
                Some(a) => {
                    let port = u16::try_from(usize::from(a.port()) + i)
                        .map_err(|_| GdoiConfigError::Invalid("push_listen port".into()))?;
                    Some(SocketAddr::new(a.ip(), port))
                }
                None => None,
            };
            out.push(RunnerConfig {
                servers: servers.clone(),
                bind: self.bind.map(|ip| SocketAddr::new(ip, 0)),
                push_listen,
                psk: psk.clone(),
                identity: id(&self.identity),
                group: id(g),
                timeout: Duration::from_secs_f64(timeout),
                tries: 3,
                policy: self.policy,
                timing: MemberTiming {
                    renew_before: self.renew_before_s.unwrap_or(30),
                    retry_after: 5,
                },
            });
        }
        Ok(out)
    }
}

/// A rule's `group`: only on protect and verify rules (a translate rule without a key would
/// forward unsecured output until the first key: never), not with `key_id`/`key_ids`, and
/// only a group `[gdoi]` registers for.
pub fn check_rule_group(
    n: usize,
    r: &crate::config::RuleToml,
    gdoi: Option<&GdoiToml>,
) -> Result<(), crate::config::ConfigError> {
    use crate::config::{Action, ConfigError};
    let Some(g) = &r.group else {
        return Ok(());
    };
    let bad = |why: String| Err(ConfigError::Invalid(format!("rule {n}: {why}")));
    if !matches!(r.action, Action::Protect | Action::Verify) {
        return bad("group applies to protect and verify rules only".into());
    }
    if r.key_id.is_some() || r.key_ids.is_some() {
        return bad("give group or key_id/key_ids, not both".into());
    }
    match gdoi {
        None => bad(format!("group {g:?} needs a [gdoi] table")),
        Some(t) if !t.groups.contains(g) => bad(format!("group {g:?} is not in [gdoi] groups")),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> GdoiToml {
        toml::from_str(s).unwrap()
    }

    const OK: &str = "servers = [\"127.0.0.1:848\", \"127.0.0.2:848\"]\nidentity = \"gw\"\npsk_hex = \"000102030405060708090a0b0c0d0e0f\"\ngroups = [\"goose-1\", \"sv-1\"]\npush_listen = \"127.0.0.1:8848\"\npolicy = \"fail-closed\"\n";

    #[test]
    fn a_profile_is_read_and_an_unknown_one_refused_with_the_valid_names() {
        let go = parse(&format!("{OK}profile = \"go-iec61850\"\n"));
        assert_eq!(
            go.register_options().unwrap().profile,
            PeerProfile::GoIec61850
        );
        assert_eq!(parse(OK).peer_profile().unwrap(), PeerProfile::Rfc);
        let e = parse(&format!("{OK}profile = \"cisco\"\n"))
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("rfc, go-iec61850"), "{e}");
    }

    #[test]
    fn a_table_gives_one_runner_per_group() {
        let r = parse(OK).runner_configs().unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].servers.len(), 2);
        assert_eq!(r[1].push_listen.unwrap().port(), 8849);
        assert_eq!(r[0].policy, FailPolicy::FailClosed);
        assert_eq!(r[1].group.data, b"sv-1");
    }

    #[test]
    fn bad_tables_are_refused_with_the_reason() {
        for (bad, why) in [
            (
                OK.replace(
                    "psk_hex = \"000102030405060708090a0b0c0d0e0f\"",
                    "psk_hex = \"0001\"",
                ),
                "16 octets",
            ),
            (
                OK.replace("\"goose-1\", \"sv-1\"", "\"g\", \"g\""),
                "repeated",
            ),
            (
                OK.replace("\"127.0.0.1:848\", \"127.0.0.2:848\"", ""),
                "one or two",
            ),
            (
                OK.replace(
                    "psk_hex = \"000102030405060708090a0b0c0d0e0f\"",
                    "cert = \"c\"\nkey = \"k\"\nca = \"a\"",
                ),
                "certificate's subject",
            ),
            (
                OK.replace(
                    "identity = \"gw\"\npsk_hex = \"000102030405060708090a0b0c0d0e0f\"",
                    "cert = \"c\"\nkey = \"k\"\nca = \"a\"",
                ),
                "server_name",
            ),
            (
                OK.replace(
                    "psk_hex = \"000102030405060708090a0b0c0d0e0f\"",
                    "psk_hex = \"000102030405060708090a0b0c0d0e0f\"\nserver_name = \"kdc\"",
                ),
                "not psk_hex",
            ),
            (
                OK.replace(
                    "psk_hex = \"000102030405060708090a0b0c0d0e0f\"",
                    "cert = \"c\"\nkey = \"k\"",
                ),
                "cert, key and ca",
            ),
            (
                OK.replace("psk_hex = \"000102030405060708090a0b0c0d0e0f\"", ""),
                "psk_hex",
            ),
        ] {
            let e = parse(&bad).check().unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
        assert!(toml::from_str::<GdoiToml>(&format!("{OK}policy2 = 1")).is_err());
        assert!(toml::from_str::<GdoiToml>(&OK.replace("fail-closed", "open")).is_err());
    }

    #[test]
    fn rules_name_only_groups_of_the_table_and_only_on_protect_or_verify() {
        let base =
            format!("driver = \"l2\"\nkeys = \"k\"\n[l2]\nied = \"a\"\nnet = \"b\"\n[gdoi]\n{OK}");
        let rule = |r: &str| {
            crate::config::Config::from_toml(
                &format!("{base}[[rule]]\n{r}"),
                std::path::Path::new("."),
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
        };
        rule("direction = \"outbound\"\naction = \"protect\"\ngroup = \"goose-1\"\n").unwrap();
        rule("direction = \"inbound\"\naction = \"verify\"\ngroup = \"sv-1\"\n").unwrap();
        for (bad, why) in [
            ("direction = \"outbound\"\naction = \"protect\"\ngroup = \"other\"\n", "not in [gdoi] groups"),
            ("direction = \"outbound\"\naction = \"protect\"\ngroup = \"goose-1\"\nkey_id = 1\n", "not both"),
            ("direction = \"outbound\"\nkind = \"goose\"\naction = \"translate\"\ngroup = \"goose-1\"\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:01\"\ndst_mac = \"01:00:5e:01:02:03\"\n", "protect and verify rules only"),
        ] {
            let e = rule(bad).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
        let no_table = crate::config::Config::from_toml(
            "driver = \"l2\"\nkeys = \"k\"\n[l2]\nied = \"a\"\nnet = \"b\"\n[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\ngroup = \"g\"\n",
            std::path::Path::new("."),
        )
        .unwrap_err()
        .to_string();
        assert!(no_table.contains("needs a [gdoi] table"), "{no_table}");
    }
}
