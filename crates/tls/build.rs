//! Links the system GnuTLS (Debian: libgnutls28-dev) found through pkg-config.
fn main() {
    if let Err(e) = pkg_config::Config::new()
        .atleast_version("3.6")
        .probe("gnutls")
    {
        // Fall back to the plain library name; the link step reports a clear error if absent.
        println!("cargo:warning=pkg-config could not find gnutls ({e}); trying -lgnutls");
        println!("cargo:rustc-link-lib=gnutls");
    }
}
