//! Key files (docs/keys.md) are user input: any text through `KeyStore::from_toml` must give a
//! store or a `KeyFileError`, never a panic. `key_file` paths resolve against a directory that
//! does not exist, so only absolute paths can name a file.
#![no_main]
use gander_sec::{default_provider, KeyStore};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let base = Path::new("/nonexistent/gander-fuzz");
    if let Ok(store) = KeyStore::from_toml(text, base, default_provider()) {
        for k in store.iter() {
            assert!(store.get(k.id).is_some());
        }
    }
});
