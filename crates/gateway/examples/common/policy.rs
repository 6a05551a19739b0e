//! The measured policy of the instruction-count examples (`policy_core_ir`, `l2_path_ir`,
//! `rgoose_path_ir`): one configuration head, the examples' rules after it, the test keys.

use gander_gateway::config::Config;
use gander_gateway::policy::Policy;
use gander_sec::{default_provider, KeyStore};
use std::path::Path;

/// The configuration every measured policy starts from; the examples append their rules.
pub(crate) const HEAD: &str = r#"
driver = "l2"
keys = "unused"
profile = "standard"
reflected = "allow"
[l2]
ied = "gi0"
net = "gn0"
"#;

/// A policy with [`HEAD`] and `rules`, the test keys loaded.
pub(crate) fn policy(rules: &str) -> Result<Policy, Box<dyn std::error::Error>> {
    let cfg = Config::from_toml(&format!("{HEAD}{rules}"), Path::new("."))?;
    let keys = KeyStore::from_toml(
        gander_testkit::keys::ALGORITHMS,
        Path::new("."),
        default_provider(),
    )?;
    Ok(Policy::new(&cfg, keys)?)
}
