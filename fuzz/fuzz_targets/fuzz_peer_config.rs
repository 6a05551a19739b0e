//! MMS peer configs (docs/mms-peers.md) are user input: the server's and the client's
//! `from_toml` and, for what parses, their `check` must not panic.
#![no_main]
use gander_peers::config::{ClientConfig, ServerConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(c) = ServerConfig::from_toml(text) {
        let _ = c.check();
    }
    if let Ok(c) = ClientConfig::from_toml(text) {
        let _ = c.check();
    }
});
