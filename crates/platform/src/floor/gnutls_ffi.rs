//! Hand-written declarations of the GnuTLS, nettle/hogweed and GMP functions the GnuTLS floor
//! ([`super::gnutls`]) times. Checked against Debian 12's headers: `<gnutls/gnutls.h>`,
//! `<gnutls/abstract.h>`, `<gnutls/x509.h>`, `<gnutls/crypto.h>` (GnuTLS 3.7.9),
//! `<nettle/ecc.h>`, `<nettle/ecc-curve.h>`, `<nettle/ecdsa.h>`, `<nettle/bignum.h>`,
//! `<nettle/curve25519.h>`, `<nettle/version.h>` (nettle 3.8.1) and `<gmp.h>` (GMP 6.2.1, x86-64 and
//! other LP64 targets: `mp_limb_t` is `unsigned long`). Linked by `crates/platform/build.rs`.
//!
//! GMP's `mpz_*` names are macros for the exported `__gmpz_*` symbols; nettle's unprefixed names
//! are macros for `nettle_*`.
#![allow(non_camel_case_types, non_upper_case_globals, dead_code)]

use std::os::raw::{c_char, c_int, c_uint, c_ulong, c_void};

// ---------------------------------------------------------------------------------------------
// GnuTLS

#[repr(C)]
pub struct gnutls_privkey_st {
    _p: [u8; 0],
}
#[repr(C)]
pub struct gnutls_pubkey_st {
    _p: [u8; 0],
}
#[repr(C)]
pub struct gnutls_x509_crt_int {
    _p: [u8; 0],
}
pub type gnutls_privkey_t = *mut gnutls_privkey_st;
pub type gnutls_pubkey_t = *mut gnutls_pubkey_st;
pub type gnutls_x509_crt_t = *mut gnutls_x509_crt_int;

// Shared with the TLS backend's declarations rather than declared twice.
pub use gander_tls::backend::gnutls::ffi::{
    gnutls_check_version, gnutls_datum_t, gnutls_free, gnutls_global_init, gnutls_strerror,
    GNUTLS_X509_FMT_DER, GNUTLS_X509_FMT_PEM,
};

/// `gnutls_pcert_st` (`<gnutls/abstract.h>`): a parsed certificate as the handshake keeps it.
#[repr(C)]
pub struct gnutls_pcert_st {
    pub pubkey: gnutls_pubkey_t,
    pub cert: gnutls_datum_t,
    /// `gnutls_certificate_type_t`
    pub type_: c_int,
}

// gnutls_pk_algorithm_t
pub const GNUTLS_PK_RSA: c_int = 1;
pub const GNUTLS_PK_ECDSA: c_int = 4;
// gnutls_sign_algorithm_t
pub const GNUTLS_SIGN_RSA_SHA256: c_int = 6;
pub const GNUTLS_SIGN_ECDSA_SHA256: c_int = 14;
pub const GNUTLS_SIGN_ECDSA_SHA384: c_int = 15;
pub const GNUTLS_SIGN_RSA_PSS_RSAE_SHA256: c_int = 40;
// gnutls_ecc_curve_t
pub const GNUTLS_ECC_CURVE_SECP256R1: c_int = 2;
pub const GNUTLS_ECC_CURVE_SECP384R1: c_int = 3;
// gnutls_rnd_level_t
pub const GNUTLS_RND_RANDOM: c_int = 1;
// error codes
pub const GNUTLS_E_PK_SIG_VERIFY_FAILED: c_int = -89;

extern "C" {
    /// RFC 7919 ffdhe2048 as GnuTLS's TLS stack uses it (`lib/dh-primes.c`, `lib/algorithms/groups.c`).
    pub static gnutls_ffdhe_2048_group_prime: gnutls_datum_t;
    pub static gnutls_ffdhe_2048_group_generator: gnutls_datum_t;
    pub static gnutls_ffdhe_2048_group_q: gnutls_datum_t;
    pub static gnutls_ffdhe_2048_key_bits: c_uint;

    pub fn gnutls_rnd(level: c_int, data: *mut c_void, len: usize) -> c_int;

    pub fn gnutls_privkey_init(key: *mut gnutls_privkey_t) -> c_int;
    pub fn gnutls_privkey_deinit(key: gnutls_privkey_t);
    pub fn gnutls_privkey_import_x509_raw(
        pkey: gnutls_privkey_t,
        data: *const gnutls_datum_t,
        format: c_int,
        password: *const c_char,
        flags: c_uint,
    ) -> c_int;
    pub fn gnutls_privkey_get_pk_algorithm(key: gnutls_privkey_t, bits: *mut c_uint) -> c_int;
    pub fn gnutls_privkey_sign_data2(
        signer: gnutls_privkey_t,
        algo: c_int,
        flags: c_uint,
        data: *const gnutls_datum_t,
        signature: *mut gnutls_datum_t,
    ) -> c_int;
    pub fn gnutls_privkey_decrypt_data2(
        key: gnutls_privkey_t,
        flags: c_uint,
        ciphertext: *const gnutls_datum_t,
        plaintext: *mut u8,
        plaintext_size: usize,
    ) -> c_int;

    pub fn gnutls_pubkey_init(key: *mut gnutls_pubkey_t) -> c_int;
    pub fn gnutls_pubkey_deinit(key: gnutls_pubkey_t);
    pub fn gnutls_pubkey_import_privkey(
        key: gnutls_pubkey_t,
        pkey: gnutls_privkey_t,
        usage: c_uint,
        flags: c_uint,
    ) -> c_int;
    pub fn gnutls_pubkey_export_rsa_raw2(
        key: gnutls_pubkey_t,
        m: *mut gnutls_datum_t,
        e: *mut gnutls_datum_t,
        flags: c_uint,
    ) -> c_int;
    pub fn gnutls_pubkey_export_ecc_raw2(
        key: gnutls_pubkey_t,
        curve: *mut c_int,
        x: *mut gnutls_datum_t,
        y: *mut gnutls_datum_t,
        flags: c_uint,
    ) -> c_int;
    pub fn gnutls_pubkey_import_rsa_raw(
        key: gnutls_pubkey_t,
        m: *const gnutls_datum_t,
        e: *const gnutls_datum_t,
    ) -> c_int;
    pub fn gnutls_pubkey_import_ecc_raw(
        key: gnutls_pubkey_t,
        curve: c_int,
        x: *const gnutls_datum_t,
        y: *const gnutls_datum_t,
    ) -> c_int;
    pub fn gnutls_pubkey_verify_data2(
        pubkey: gnutls_pubkey_t,
        algo: c_int,
        flags: c_uint,
        data: *const gnutls_datum_t,
        signature: *const gnutls_datum_t,
    ) -> c_int;
    pub fn gnutls_pubkey_encrypt_data(
        key: gnutls_pubkey_t,
        flags: c_uint,
        plaintext: *const gnutls_datum_t,
        ciphertext: *mut gnutls_datum_t,
    ) -> c_int;

    pub fn gnutls_x509_crt_init(cert: *mut gnutls_x509_crt_t) -> c_int;
    pub fn gnutls_x509_crt_deinit(cert: gnutls_x509_crt_t);
    pub fn gnutls_x509_crt_import(
        cert: gnutls_x509_crt_t,
        data: *const gnutls_datum_t,
        format: c_int,
    ) -> c_int;
    pub fn gnutls_x509_crt_export2(
        cert: gnutls_x509_crt_t,
        format: c_int,
        out: *mut gnutls_datum_t,
    ) -> c_int;
    pub fn gnutls_pcert_import_x509_raw(
        pcert: *mut gnutls_pcert_st,
        cert: *const gnutls_datum_t,
        format: c_int,
        flags: c_uint,
    ) -> c_int;
    pub fn gnutls_pcert_deinit(pcert: *mut gnutls_pcert_st);
}

// ---------------------------------------------------------------------------------------------
// GMP

pub type mp_limb_t = c_ulong;

/// `__mpz_struct`; `mpz_t` is a one-element array of it, so functions take `*mut`/`*const`.
#[repr(C)]
pub struct mpz_struct {
    pub alloc: c_int,
    pub size: c_int,
    pub d: *mut mp_limb_t,
}

extern "C" {
    pub static __gmp_version: *const c_char;

    pub fn __gmpz_init(x: *mut mpz_struct);
    pub fn __gmpz_clear(x: *mut mpz_struct);
    pub fn __gmpz_set(rop: *mut mpz_struct, op: *const mpz_struct);
    pub fn __gmpz_add_ui(rop: *mut mpz_struct, op1: *const mpz_struct, op2: c_ulong);
    pub fn __gmpz_sub_ui(rop: *mut mpz_struct, op1: *const mpz_struct, op2: c_ulong);
    pub fn __gmpz_cmp(op1: *const mpz_struct, op2: *const mpz_struct) -> c_int;
    pub fn __gmpz_cmp_ui(op1: *const mpz_struct, op2: c_ulong) -> c_int;
    pub fn __gmpz_sizeinbase(op: *const mpz_struct, base: c_int) -> usize;
    pub fn __gmpz_powm(
        rop: *mut mpz_struct,
        base: *const mpz_struct,
        exp: *const mpz_struct,
        m: *const mpz_struct,
    );
}

// ---------------------------------------------------------------------------------------------
// nettle / hogweed

#[repr(C)]
pub struct ecc_curve {
    _p: [u8; 0],
}

/// `struct ecc_point` (`<nettle/ecc.h>`).
#[repr(C)]
pub struct ecc_point {
    pub ecc: *const ecc_curve,
    pub p: *mut mp_limb_t,
}

/// `struct ecc_scalar` (`<nettle/ecc.h>`).
#[repr(C)]
pub struct ecc_scalar {
    pub ecc: *const ecc_curve,
    pub p: *mut mp_limb_t,
}

/// `nettle_random_func`: `void f(void *ctx, size_t length, uint8_t *dst)`.
pub type nettle_random_func = unsafe extern "C" fn(ctx: *mut c_void, length: usize, dst: *mut u8);

pub const CURVE25519_SIZE: usize = 32;

extern "C" {
    pub fn nettle_version_major() -> c_int;
    pub fn nettle_version_minor() -> c_int;

    pub fn nettle_get_secp_256r1() -> *const ecc_curve;

    pub fn nettle_ecc_point_init(p: *mut ecc_point, ecc: *const ecc_curve);
    pub fn nettle_ecc_point_clear(p: *mut ecc_point);
    pub fn nettle_ecc_point_set(
        p: *mut ecc_point,
        x: *const mpz_struct,
        y: *const mpz_struct,
    ) -> c_int;
    pub fn nettle_ecc_point_get(p: *const ecc_point, x: *mut mpz_struct, y: *mut mpz_struct);
    pub fn nettle_ecc_scalar_init(s: *mut ecc_scalar, ecc: *const ecc_curve);
    pub fn nettle_ecc_scalar_clear(s: *mut ecc_scalar);
    pub fn nettle_ecc_scalar_set(s: *mut ecc_scalar, z: *const mpz_struct) -> c_int;
    pub fn nettle_ecc_scalar_get(s: *const ecc_scalar, z: *mut mpz_struct);
    pub fn nettle_ecc_point_mul(r: *mut ecc_point, n: *const ecc_scalar, p: *const ecc_point);
    pub fn nettle_ecdsa_generate_keypair(
        public: *mut ecc_point,
        key: *mut ecc_scalar,
        random_ctx: *mut c_void,
        random: nettle_random_func,
    );

    pub fn nettle_curve25519_mul_g(q: *mut u8, n: *const u8);
    pub fn nettle_curve25519_mul(q: *mut u8, n: *const u8, p: *const u8);

    pub fn nettle_mpz_random(
        x: *mut mpz_struct,
        ctx: *mut c_void,
        random: nettle_random_func,
        n: *const mpz_struct,
    );
    pub fn nettle_mpz_sizeinbase_256_u(x: *const mpz_struct) -> usize;
    pub fn nettle_mpz_get_str_256(length: usize, s: *mut u8, x: *const mpz_struct);
    pub fn nettle_mpz_set_str_256_u(x: *mut mpz_struct, length: usize, s: *const u8);
}
