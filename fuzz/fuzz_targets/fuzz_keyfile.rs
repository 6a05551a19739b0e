//! Key files (docs/keys.md) are user input: any text through `KeyStore::from_toml` must give a
//! store or a `KeyFileError`, never a panic. `key_file` paths resolve against a directory that
//! does not exist, so only absolute paths can name a file. The post-quantum key readers
//! (ML-DSA, SLH-DSA: PEM, DER, raw) get the same bytes directly.
#![no_main]
use gander_sec::signature::{SignatureAlgorithm, SigningKey, VerifyingKey};
use gander_sec::{default_provider, KeyStore};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    // The key-file readers of the post-quantum keys (PKCS#8 / SPKI PEM and DER, raw forms),
    // which a key file reaches through private_key_file / public_key_file.
    for alg in SignatureAlgorithm::POST_QUANTUM {
        if let Ok(k) = SigningKey::from_pkcs8_pem(alg, data) {
            let _ = k.verifying_key();
        }
        let _ = SigningKey::from_pkcs8_der(alg, data);
        let _ = SigningKey::from_raw(alg, data);
        if let Ok(vk) = VerifyingKey::from_spki_pem(alg, data) {
            let _ = vk.verify(b"m", data);
        }
        let _ = VerifyingKey::from_spki_der(alg, data);
        let _ = VerifyingKey::from_raw(alg, data);
    }
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
