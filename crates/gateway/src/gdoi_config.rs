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

use gander_gdoi::member_state::{FailPolicy, MemberTiming};
use gander_gdoi::net::member::RunnerConfig;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::IdPayload;
use serde::Deserialize;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// Why the `[gdoi]` table was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GdoiConfigError {
    /// A field is missing, malformed or contradicts another.
    #[error("[gdoi] {0}")]
    Invalid(String),
}

/// `[gdoi]` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GdoiToml {
    /// Key servers, HOST:PORT, in order of preference (one or two).
    pub servers: Vec<String>,
    /// This gateway's identity (ID_KEY_ID).
    pub identity: String,
    /// Pre-shared key, hex (at least 16 octets, as the key server requires).
    pub psk_hex: Option<String>,
    /// Certificate (PEM) for phase 1 with signatures.
    pub cert: Option<PathBuf>,
    /// Its private key (PEM).
    pub key: Option<PathBuf>,
    /// The CA that signed the key server's certificate (PEM).
    pub ca: Option<PathBuf>,
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
}

impl GdoiToml {
    /// Checks the table without any I/O except resolving the key servers' names.
    pub fn check(&self) -> Result<(), GdoiConfigError> {
        self.runner_configs().map(|_| ())
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
        if self.identity.is_empty() {
            return bad("identity is empty".into());
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
                k
            }
            (None, Some(_), Some(_), Some(_)) => {
                return bad(
                    "cert/key/ca: phase 1 with certificates is not available to the member yet; use psk_hex"
                        .into(),
                )
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
                "certificates",
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
