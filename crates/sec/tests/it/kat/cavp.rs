//! NIST CAVP AES-GCM vectors (SP 800-38D test files `gcmEncryptExtIV*.rsp`, `gcmDecrypt*.rsp`).
//!
//! They are not copied into this repository: they come from the PyPI package
//! `cryptography_vectors` (pinned in the Makefile's venv target), found at test time.

use std::path::{Path, PathBuf};

use crate::support::{parse_records, Record};

/// The pip requirement that provides the files.
pub(crate) const PIP_PIN: &str = "cryptography_vectors==50.0.2";

/// The `cryptography_vectors` package directory: `$GANDER_CRYPTO_VECTORS`, or else
/// `<workspace root>/.venv/lib/python3.11/site-packages/cryptography_vectors`.
/// Panics with instructions if neither holds the GCM files: these tests never skip silently.
pub(crate) fn vectors_dir() -> PathBuf {
    let gcm = |p: &Path| p.join("ciphers/AES/GCM/gcmDecrypt128.rsp").is_file();
    if let Some(dir) = std::env::var_os("GANDER_CRYPTO_VECTORS") {
        let dir = PathBuf::from(dir);
        assert!(
            gcm(&dir),
            "GANDER_CRYPTO_VECTORS={} has no ciphers/AES/GCM/gcmDecrypt128.rsp. Point it at the \
             `cryptography_vectors` package directory (…/site-packages/cryptography_vectors of a venv \
             with `pip install {PIP_PIN}`), or unset it and run `make venv`.",
            dir.display()
        );
        return dir;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let dir = root.join(".venv/lib/python3.11/site-packages/cryptography_vectors");
    assert!(
        gcm(&dir),
        "NIST CAVP GCM test vectors not found at {}.\nRun `make venv` in {} (it installs {PIP_PIN} \
         into .venv), or set GANDER_CRYPTO_VECTORS to a cryptography_vectors package directory.",
        dir.display(),
        root.display()
    );
    dir
}

/// Reads one `.rsp` file from `ciphers/AES/GCM/`.
pub(crate) fn load(file: &str) -> Vec<Record> {
    let path = vectors_dir().join("ciphers/AES/GCM").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_records(file, &text)
        .into_iter()
        .filter(|r| r.has("Count"))
        .collect()
}
