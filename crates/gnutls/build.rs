//! Links the system GnuTLS, and nettle, hogweed and GMP under it for key agreement (Debian:
//! libgnutls28-dev, which pulls in nettle-dev and libgmp-dev), found through pkg-config.

fn main() {
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
