//! TLS profiles (docs/tls.md) are user input: `TlsProfile::from_toml` and, for what parses, the
//! validation against this machine's backends and the suite lookup must not panic.
#![no_main]
use gander_tls::TlsProfile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = TlsProfile::from_toml(text) {
        let _ = p.suites();
        let _ = p.validate(false);
        let _ = p.validate(true);
        let _ = p.effective_num_tickets();
    }
});
