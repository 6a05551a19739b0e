//! Safe bindings to the part of GnuTLS 3.x (and the nettle/hogweed and GMP libraries under it)
//! that gander uses. All of gander's GnuTLS `unsafe` code lives here.
//!
//! - [`tls`]: TLS sessions ([`tls::Session`]), certificate credentials ([`tls::Credentials`]),
//!   priority strings ([`tls::expand_priority`]), the server's session cache and ticket keys,
//!   for the GnuTLS backend of `gander-tls`.
//! - [`pk`]: private and public keys ([`pk::Privkey`], [`pk::Pubkey`]), X.509 certificates,
//!   for the GnuTLS floor of `gander-platform`.
//! - [`kx`]: key agreement as GnuTLS 3.7's TLS code does it in nettle and GMP (P-256 ECDH,
//!   RFC 7919 ffdhe2048 DH, X25519), also for the floor.
//!
//! Every fallible call returns [`GnutlsError`], which carries the GnuTLS error code and its
//! `gnutls_strerror` text. The C declarations are private (`sys`); every `unsafe` block says
//! why it is sound.

mod error;
pub mod kx;
pub mod pk;
mod sys;
pub mod tls;

pub use error::{code, error_text, GnutlsError};

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// Initialises GnuTLS once per process (`gnutls_global_init`); every entry point calls it.
pub(crate) fn init() {
    static INIT: OnceLock<c_int> = OnceLock::new();
    // SAFETY: reference-counted global initialisation, safe to call from any thread (GnuTLS 3.x
    // also initialises itself in a library constructor); it takes no arguments.
    INIT.get_or_init(|| unsafe { sys::gnutls_global_init() });
}

/// The GnuTLS version of the library linked at run time, e.g. `3.7.9` (`gnutls_check_version`).
pub fn version() -> Option<String> {
    init();
    // SAFETY: with NULL, gnutls_check_version returns the library's static version string (or
    // NULL), which `cstr` copies at once.
    unsafe { cstr(sys::gnutls_check_version(std::ptr::null())) }
}

/// The nettle version linked at run time, `(major, minor)`.
pub fn nettle_version() -> (i32, i32) {
    // SAFETY: both functions take no arguments and return an int.
    unsafe { (sys::nettle_version_major(), sys::nettle_version_minor()) }
}

/// The GMP version linked at run time, e.g. `6.2.1` (`gmp_version`).
pub fn gmp_version() -> Option<String> {
    // SAFETY: `__gmp_version` is GMP's immutable pointer to its static version string, which
    // `cstr` copies at once.
    unsafe { cstr(sys::__gmp_version) }
}

/// Copies a C string.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that stays valid during the call.
pub(crate) unsafe fn cstr(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: the caller guarantees a valid NUL-terminated string.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// `Ok(r)` for `r >= 0`, else the GnuTLS error of `function`.
pub(crate) fn check(function: &'static str, r: c_int) -> Result<c_int, GnutlsError> {
    if r < 0 {
        Err(GnutlsError::call(function, r))
    } else {
        Ok(r)
    }
}

/// A datum borrowing `b`, for `const gnutls_datum_t *` arguments. GnuTLS only reads through
/// those, so the `*mut` it holds is never written through.
pub(crate) fn datum(b: &[u8]) -> Result<sys::gnutls_datum_t, GnutlsError> {
    Ok(sys::gnutls_datum_t {
        data: b.as_ptr() as *mut u8,
        size: c_uint::try_from(b.len()).map_err(|_| GnutlsError::TooLong(b.len()))?,
    })
}

/// A datum GnuTLS allocated for the caller; released with `gnutls_free`.
pub(crate) struct OwnedDatum(pub(crate) sys::gnutls_datum_t);

impl OwnedDatum {
    /// An empty out-datum, for GnuTLS to fill.
    pub(crate) fn empty() -> Self {
        OwnedDatum(sys::gnutls_datum_t {
            data: std::ptr::null_mut(),
            size: 0,
        })
    }
    /// The bytes GnuTLS wrote (empty if none).
    pub(crate) fn as_slice(&self) -> &[u8] {
        if self.0.data.is_null() {
            return &[];
        }
        // SAFETY: GnuTLS filled the datum with `size` bytes at `data`, owned by `self` until
        // it is dropped, which the borrow of `self` outlives.
        unsafe { std::slice::from_raw_parts(self.0.data, self.0.size as usize) }
    }
}

impl Drop for OwnedDatum {
    fn drop(&mut self) {
        if self.0.data.is_null() {
            return;
        }
        // SAFETY: reads the library's immutable pointer to its deallocator.
        let free = unsafe { sys::gnutls_free };
        if let Some(free) = free {
            // SAFETY: `data` came from gnutls_malloc (GnuTLS's out-parameter convention) and is
            // freed once, here; gnutls_free is the matching deallocator.
            unsafe { free(self.0.data as *mut c_void) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_errors() {
        assert!(version().is_some_and(|v| v.starts_with("3.")));
        assert!(nettle_version().0 >= 3);
        assert!(gmp_version().is_some());
        let e = GnutlsError::call("gnutls_handshake", code::AGAIN);
        assert_eq!(e.code(), Some(code::AGAIN));
        assert!(e.to_string().starts_with("gnutls_handshake: "), "{e}");
        assert!(e.to_string().ends_with("(-28)"), "{e}");
    }

    #[test]
    fn priority_strings_expand() {
        let (codes, protos) = tls::expand_priority("NORMAL:-VERS-ALL:+VERS-TLS1.2").unwrap();
        assert!(!codes.is_empty());
        assert_eq!(protos, vec![tls::protocol::TLS1_2]);
        assert!(tls::expand_priority("NOT-A-KEYWORD").is_err());
        assert!(tls::expand_priority("NORMAL\0").is_err());
        let all = tls::cipher_suites();
        assert!(all.iter().any(|(_, id)| *id == 0xc02f), "{all:?}");
        assert!(!tls::generate_ticket_key().unwrap().is_empty());
    }

    #[test]
    fn key_agreement_agrees() {
        let rng = kx::Rng::new();
        let (a, b) = (
            kx::p256_keygen(&rng).unwrap(),
            kx::p256_keygen(&rng).unwrap(),
        );
        let s = kx::p256_derive(&a, &b.x, &b.y).unwrap();
        assert_eq!(s, kx::p256_derive(&b, &a.x, &a.y).unwrap());
        let grp = kx::Ffdhe::ffdhe2048().unwrap();
        let (a, b) = (
            kx::dh_keygen(&grp, &rng).unwrap(),
            kx::dh_keygen(&grp, &rng).unwrap(),
        );
        assert_eq!(
            kx::dh_derive(&grp, &a, &b.y).unwrap(),
            kx::dh_derive(&grp, &b, &a.y).unwrap()
        );
        assert_eq!(grp.q_bits(), 2047);
        let (a, b) = (kx::x25519_keygen().unwrap(), kx::x25519_keygen().unwrap());
        assert_eq!(
            kx::x25519_derive(&a, &b.public).unwrap(),
            kx::x25519_derive(&b, &a.public).unwrap()
        );
    }
}
