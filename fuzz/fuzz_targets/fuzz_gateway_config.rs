//! Gateway configs (docs/gateway.md) are user input: `Config::from_toml` and, for what parses,
//! building the policy (rule compilation, key ids against a fixed key store) must not panic.
#![no_main]
use gander_gateway::{Config, Policy};
use gander_sec::{default_provider, KeyStore};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

const KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 2
enc = "aes-128-gcm"
key_ascii = "0123456789ABCDEF"
"#;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cfg) = Config::from_toml(text, Path::new("/nonexistent/gander-fuzz")) {
        let store = KeyStore::from_toml(KEYS, Path::new("."), default_provider()).unwrap();
        let _ = Policy::new(&cfg, store);
    }
});
