//! Records the compiler version for the machine description of every report
//! (`src/machine.rs`): one `rustc --version` at build time, exposed as `GANDER_RUSTC_VERSION`.
//!
//! Links the libraries the GnuTLS floor (`src/floor/gnutls.rs`) calls directly: GnuTLS, and
//! nettle, hogweed and GMP under it for key agreement (Debian: libgnutls28-dev, which pulls in
//! nettle-dev and libgmp-dev), found through pkg-config.

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=GANDER_RUSTC_VERSION={version}");
    let profile = std::env::var("PROFILE").unwrap_or_default();
    println!("cargo:rustc-env=GANDER_BUILD_PROFILE={profile}");
    println!("cargo:rerun-if-env-changed=RUSTC");
    println!("cargo:rerun-if-changed=build.rs");

    for (lib, min) in [
        ("gnutls", "3.6"),
        ("hogweed", "3.4"),
        ("nettle", "3.4"),
        ("gmp", "6"),
    ] {
        if let Err(e) = pkg_config::Config::new().atleast_version(min).probe(lib) {
            // Fall back to the plain library name; the link step reports a clear error if absent.
            println!("cargo:warning=pkg-config could not find {lib} ({e}); trying -l{lib}");
            println!("cargo:rustc-link-lib={lib}");
        }
    }
}
