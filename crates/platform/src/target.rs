//! `gander run` against an external target: a scenario's `[target]` table names a server gander
//! did not start (an IED, libiec61850, another host), and each case runs gander's client
//! against it instead of starting a local pair (`docs/scenarios.md`, "External targets").
//!
//! What changes for a case:
//! * no local server: the client connects to `address`, with the target's client TLS settings
//!   restricted to the case's version, suite and group (so the matrix is "what the target
//!   accepts": a row whose suite the target refuses fails with the reason);
//! * reports come from the target's own control block (`rcb`: a reference or `"discover"`),
//!   enabled with an integrity period of the case's `period_ms` and GI, and restored as found
//!   afterwards (`gander_peers::client`);
//! * RT needs the server's clock (the server stamps the data change): without it a row reports
//!   the client-side measures instead: the report inter-arrival time and its jitter
//!   ([`crate::results::ScenarioResult::report_interarrival`]) and the round trip of a Read of
//!   the control block's data set ([`crate::results::ScenarioResult::read_rtt`]);
//! * no floor and no HT accounting: the server's key and library are not known.

use crate::scenario::ScenarioError;
use gander_tls::TlsProfile;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::net::ToSocketAddrs;
use std::path::Path;

/// Timed Reads of the control block's data set per target case (fewer when the case asks for
/// fewer reports).
pub const READS: u64 = 100;

/// The `[target]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// `host:port` of the server.
    pub address: String,
    /// Client TLS settings (`ca`, `cert`, `key`, optional `backend`, ...: the keys of
    /// `docs/tls.md`); paths relative to the scenario file. Absent: cleartext only.
    #[serde(default)]
    pub tls: Option<TlsProfile>,
    /// The report control block: `"discover"` (the first free one) or `LD/LN.RP|BR.name`.
    #[serde(default = "discover")]
    pub rcb: String,
    /// The user declares both clocks synchronised (PTP/NTP): each report's one-way time is then
    /// computed against its own timestamp (the changed data's `t`, else TimeOfEntry).
    #[serde(default)]
    pub clocks_synchronised: bool,
}

fn discover() -> String {
    gander_peers::client::DISCOVER.to_string()
}

impl TargetSpec {
    /// Parses and checks a `[target]` table; relative TLS paths are taken from `base`.
    pub fn from_table(
        scenario: &str,
        t: toml::Table,
        base: Option<&Path>,
    ) -> Result<TargetSpec, ScenarioError> {
        let bad = |what: String| ScenarioError::File {
            scenario: scenario.to_string(),
            what: format!("[target]: {what}"),
        };
        let mut spec: TargetSpec = toml::Value::Table(t)
            .try_into()
            .map_err(|e: toml::de::Error| bad(e.message().to_string()))?;
        match spec.address.to_socket_addrs().map(|mut a| a.next()) {
            Ok(Some(_)) => {}
            _ => {
                return Err(bad(format!(
                    "address {:?} is not a reachable host:port",
                    spec.address
                )))
            }
        }
        if spec.rcb != gander_peers::client::DISCOVER
            && gander_peers::client::parse_reference(&spec.rcb).is_none()
        {
            return Err(bad(format!(
                "rcb {:?}: expected \"discover\" or LD/LN.RP.name or LD/LN.BR.name",
                spec.rcb
            )));
        }
        if let Some(tls) = spec.tls.as_mut() {
            // Absolute before the peers see them: the client reads its config from a case's
            // work directory, where a relative path would mean something else.
            let cwd = std::env::current_dir().unwrap_or_default();
            tls.rebase(&cwd.join(base.unwrap_or(Path::new(""))));
            tls.validate(false)
                .map_err(|e| bad(format!("tls: {}", crate::error_chain(&e))))?;
        }
        Ok(spec)
    }

    /// Reads a file holding a `[target]` table, or its keys at the top level (`gander run
    /// --target FILE`); relative paths are taken from the file's directory.
    pub fn load(path: &Path) -> Result<TargetSpec, ScenarioError> {
        let hint = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: hint.clone(),
            source,
        })?;
        let mut root: toml::Table = text.parse().map_err(|source| ScenarioError::Toml {
            scenario: hint.clone(),
            source,
        })?;
        let table = match root.remove("target") {
            Some(toml::Value::Table(t)) if root.is_empty() => t,
            Some(_) => {
                return Err(ScenarioError::File {
                    scenario: hint,
                    what: "[target] must be the only table of a target file".into(),
                })
            }
            None => root,
        };
        Self::from_table(&hint, table, path.parent())
    }

    /// The client config of one case (`docs/mms-peers.md`), with the case's TLS choice applied
    /// to the target's client settings.
    pub fn client_config(
        &self,
        case: &crate::scenario::Case,
        events: &Path,
    ) -> Result<String, ScenarioError> {
        let p = &case.params;
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# written by gander run for case {} against {}",
            q(&p.name),
            q(&self.address)
        );
        let _ = writeln!(s, "connect = {}", q(&self.address));
        let _ = writeln!(s, "connections = {}", p.connections);
        // A control row's `reports` are its operations ([control]), not reports.
        let reports = if p.interaction == crate::scenario::Interaction::Control {
            0
        } else {
            p.reports
        };
        let _ = writeln!(s, "reports = {reports}");
        let _ = writeln!(s, "events = {}", q(&events.to_string_lossy()));
        let _ = writeln!(s, "rcb = {}", q(&self.rcb));
        let _ = writeln!(s, "gi = true");
        let _ = writeln!(s, "intg_pd_ms = {}", p.period_ms.max(1));
        let _ = writeln!(s, "reads = {}", READS.min(p.reports.max(1) as u64));
        let _ = writeln!(s, "clocks_synchronised = {}", self.clocks_synchronised);
        let _ = writeln!(s, "report_timeout_ms = {}", (p.period_ms * 4).max(5000));
        if p.interaction == crate::scenario::Interaction::Control {
            // The object is named in the row (checked there); `reports` are its operations.
            let _ = write!(s, "{}", crate::control_rows::client_table(p));
        }
        if let Some(choice) = &case.tls {
            let Some(base) = &self.tls else {
                return Err(ScenarioError::Case {
                    scenario: String::new(),
                    case: p.name.clone(),
                    what: "a TLS case needs [target] tls settings".into(),
                });
            };
            let mut prof = base.clone();
            prof.backend = choice.backend;
            prof.versions = vec![choice.version];
            prof.cipher_suites = vec![choice.suite.name.to_string()];
            if let Some(g) = choice.group {
                prof.groups = vec![g];
            }
            let table = toml::Value::try_from(&prof).map_err(|e| ScenarioError::Case {
                scenario: String::new(),
                case: p.name.clone(),
                what: format!("client TLS settings: {e}"),
            })?;
            let mut root = toml::Table::new();
            root.insert("tls".into(), table);
            let _ = write!(s, "\n{}", toml::to_string(&root).unwrap_or_default());
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    #[test]
    fn a_target_needs_an_address_and_a_valid_rcb() {
        let ok = TargetSpec::from_table("t", table("address = \"127.0.0.1:102\""), None).unwrap();
        assert_eq!(ok.rcb, "discover");
        assert!(!ok.clocks_synchronised);
        for (bad, why) in [
            ("", "address"),
            ("address = \"nowhere\"", "not a reachable"),
            ("address = \"127.0.0.1:102\"\nrcb = \"LLN0.RP.x\"", "rcb"),
            ("address = \"127.0.0.1:102\"\nbogus = 1", "bogus"),
            (
                "address = \"127.0.0.1:102\"\n[tls]\nca = \"/nonexistent/ca.pem\"",
                "tls",
            ),
        ] {
            let e = TargetSpec::from_table("t", table(bad), None).unwrap_err();
            assert!(
                e.to_string().contains(why) || format!("{e:?}").contains(why),
                "{bad}: {e}"
            );
        }
    }
}
