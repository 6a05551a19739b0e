//! Declarations of the part of the GnuTLS 3.x, nettle/hogweed and GMP C APIs that gander uses.
//! Private to this crate: the rest of gander calls the safe wrappers.
//!
//! Checked against Debian 12's headers: `<gnutls/gnutls.h>`, `<gnutls/abstract.h>`,
//! `<gnutls/x509.h>`, `<gnutls/crypto.h>` (GnuTLS 3.7.9; all functions are stable since GnuTLS 3.6
//! except `gnutls_ciphersuite_get`, 3.7.3), `<nettle/ecc.h>`, `<nettle/ecc-curve.h>`,
//! `<nettle/ecdsa.h>`, `<nettle/bignum.h>`, `<nettle/curve25519.h>`, `<nettle/version.h>`
//! (nettle 3.8.1) and `<gmp.h>` (GMP 6.2.1, x86-64 and other LP64 targets: `mp_limb_t` is
//! `unsigned long`). Linked by this crate's `build.rs`.
//!
//! GnuTLS types are opaque pointers; `gnutls_datum_t` is `{ unsigned char *data; unsigned int size; }`.
//! GMP's `mpz_*` names are macros for the exported `__gmpz_*` symbols; nettle's unprefixed names
//! are macros for `nettle_*`.
#![allow(non_camel_case_types, non_upper_case_globals, dead_code, missing_docs)]

use std::os::raw::{c_char, c_int, c_uint, c_ulong, c_void};

// ---------------------------------------------------------------------------------------------
// GnuTLS: sessions and credentials

#[repr(C)]
pub(crate) struct gnutls_session_int {
    _p: [u8; 0],
}
#[repr(C)]
pub(crate) struct gnutls_certificate_credentials_st {
    _p: [u8; 0],
}
#[repr(C)]
pub(crate) struct gnutls_priority_st {
    _p: [u8; 0],
}
pub(crate) type gnutls_session_t = *mut gnutls_session_int;
pub(crate) type gnutls_certificate_credentials_t = *mut gnutls_certificate_credentials_st;
pub(crate) type gnutls_priority_t = *mut gnutls_priority_st;

#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct gnutls_datum_t {
    pub data: *mut u8,
    pub size: c_uint,
}

pub(crate) type verify_function = unsafe extern "C" fn(gnutls_session_t) -> c_int;
/// `gnutls_keylog_func` (GnuTLS >= 3.6.13): non-zero return is an error.
pub(crate) type keylog_function =
    unsafe extern "C" fn(gnutls_session_t, *const c_char, *const gnutls_datum_t) -> c_int;
pub(crate) type db_store_func =
    unsafe extern "C" fn(*mut c_void, gnutls_datum_t, gnutls_datum_t) -> c_int;
pub(crate) type db_remove_func = unsafe extern "C" fn(*mut c_void, gnutls_datum_t) -> c_int;
pub(crate) type db_retr_func = unsafe extern "C" fn(*mut c_void, gnutls_datum_t) -> gnutls_datum_t;

// gnutls_init flags
pub(crate) const GNUTLS_SERVER: c_uint = 1;
pub(crate) const GNUTLS_CLIENT: c_uint = 1 << 1;
pub(crate) const GNUTLS_NO_TICKETS: c_uint = 1 << 10;
// enums
pub(crate) const GNUTLS_CRD_CERTIFICATE: c_int = 1;
pub(crate) const GNUTLS_X509_FMT_DER: c_int = 0;
pub(crate) const GNUTLS_X509_FMT_PEM: c_int = 1;
pub(crate) const GNUTLS_CERT_IGNORE: c_int = 0;
pub(crate) const GNUTLS_CERT_REQUIRE: c_int = 2;
pub(crate) const GNUTLS_SHUT_WR: c_int = 1;
pub(crate) const GNUTLS_AL_WARNING: c_int = 1;
pub(crate) const GNUTLS_AL_FATAL: c_int = 2;
// gnutls_alert_description_t
pub(crate) const GNUTLS_A_NO_RENEGOTIATION: c_int = 100;
pub(crate) const GNUTLS_SEC_PARAM_MEDIUM: c_int = 35;
pub(crate) const GNUTLS_KU_PEER: c_uint = 1;
pub(crate) const GNUTLS_TLS1_0: c_int = 2;
pub(crate) const GNUTLS_TLS1_1: c_int = 3;
pub(crate) const GNUTLS_TLS1_2: c_int = 4;
pub(crate) const GNUTLS_TLS1_3: c_int = 5;
// gnutls_certificate_status_t bits
pub(crate) const GNUTLS_CERT_INVALID: c_uint = 1 << 1;
pub(crate) const GNUTLS_CERT_REVOKED: c_uint = 1 << 5;
pub(crate) const GNUTLS_CERT_SIGNER_NOT_FOUND: c_uint = 1 << 6;
pub(crate) const GNUTLS_CERT_NOT_ACTIVATED: c_uint = 1 << 9;
pub(crate) const GNUTLS_CERT_EXPIRED: c_uint = 1 << 10;
// error codes
pub(crate) const GNUTLS_E_SUCCESS: c_int = 0;
pub(crate) const GNUTLS_E_INVALID_SESSION: c_int = -10;
pub(crate) const GNUTLS_E_UNSUPPORTED_VERSION_PACKET: c_int = -8;
pub(crate) const GNUTLS_E_FATAL_ALERT_RECEIVED: c_int = -12;
pub(crate) const GNUTLS_E_WARNING_ALERT_RECEIVED: c_int = -16;
pub(crate) const GNUTLS_E_UNKNOWN_CIPHER_SUITE: c_int = -21;
pub(crate) const GNUTLS_E_AGAIN: c_int = -28;
pub(crate) const GNUTLS_E_INSUFFICIENT_CREDENTIALS: c_int = -32;
pub(crate) const GNUTLS_E_REHANDSHAKE: c_int = -37;
pub(crate) const GNUTLS_E_GOT_APPLICATION_DATA: c_int = -38;
pub(crate) const GNUTLS_E_CERTIFICATE_ERROR: c_int = -43;
pub(crate) const GNUTLS_E_NO_CERTIFICATE_FOUND: c_int = -49;
pub(crate) const GNUTLS_E_INTERRUPTED: c_int = -52;
pub(crate) const GNUTLS_E_PUSH_ERROR: c_int = -53;
pub(crate) const GNUTLS_E_PULL_ERROR: c_int = -54;
pub(crate) const GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE: c_int = -56;
pub(crate) const GNUTLS_E_NO_CIPHER_SUITES: c_int = -87;
pub(crate) const GNUTLS_E_UNSAFE_RENEGOTIATION_DENIED: c_int = -108;
pub(crate) const GNUTLS_E_PREMATURE_TERMINATION: c_int = -110;
pub(crate) const GNUTLS_E_CERTIFICATE_REQUIRED: c_int = -112;
pub(crate) const GNUTLS_E_TIMEDOUT: c_int = -319;
pub(crate) const GNUTLS_E_SESSION_EOF: c_int = -328;
pub(crate) const GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR: c_int = -348;
pub(crate) const GNUTLS_E_SESSION_USER_ID_CHANGED: c_int = -406;
pub(crate) const GNUTLS_E_NO_COMMON_KEY_SHARE: c_int = -423;

extern "C" {
    pub(crate) static gnutls_malloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>;
    pub(crate) static gnutls_free: Option<unsafe extern "C" fn(*mut c_void)>;

    pub(crate) fn gnutls_global_init() -> c_int;
    pub(crate) fn gnutls_check_version(req: *const c_char) -> *const c_char;
    pub(crate) fn gnutls_strerror(error: c_int) -> *const c_char;

    pub(crate) fn gnutls_certificate_allocate_credentials(
        res: *mut gnutls_certificate_credentials_t,
    ) -> c_int;
    pub(crate) fn gnutls_certificate_free_credentials(sc: gnutls_certificate_credentials_t);
    pub(crate) fn gnutls_certificate_set_x509_trust_file(
        cred: gnutls_certificate_credentials_t,
        cafile: *const c_char,
        fmt: c_int,
    ) -> c_int;
    pub(crate) fn gnutls_certificate_set_x509_crl_file(
        res: gnutls_certificate_credentials_t,
        crlfile: *const c_char,
        fmt: c_int,
    ) -> c_int;
    pub(crate) fn gnutls_certificate_set_x509_key_file(
        res: gnutls_certificate_credentials_t,
        certfile: *const c_char,
        keyfile: *const c_char,
        fmt: c_int,
    ) -> c_int;
    pub(crate) fn gnutls_certificate_set_known_dh_params(
        res: gnutls_certificate_credentials_t,
        sec_param: c_int,
    ) -> c_int;
    pub(crate) fn gnutls_certificate_verify_peers2(
        session: gnutls_session_t,
        status: *mut c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_certificate_verify_peers3(
        session: gnutls_session_t,
        hostname: *const c_char,
        status: *mut c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_certificate_get_peers(
        session: gnutls_session_t,
        list_size: *mut c_uint,
    ) -> *const gnutls_datum_t;
    pub(crate) fn gnutls_certificate_send_x509_rdn_sequence(
        session: gnutls_session_t,
        status: c_int,
    );
    pub(crate) fn gnutls_certificate_server_set_request(session: gnutls_session_t, req: c_int);
    pub(crate) fn gnutls_session_set_verify_function(
        session: gnutls_session_t,
        func: Option<verify_function>,
    );

    pub(crate) fn gnutls_session_set_keylog_function(
        session: gnutls_session_t,
        func: Option<keylog_function>,
    );
    pub(crate) fn gnutls_session_get_random(
        session: gnutls_session_t,
        client: *mut gnutls_datum_t,
        server: *mut gnutls_datum_t,
    );

    pub(crate) fn gnutls_init(session: *mut gnutls_session_t, flags: c_uint) -> c_int;
    pub(crate) fn gnutls_deinit(session: gnutls_session_t);
    pub(crate) fn gnutls_session_set_ptr(session: gnutls_session_t, ptr: *mut c_void);
    pub(crate) fn gnutls_session_get_ptr(session: gnutls_session_t) -> *mut c_void;
    pub(crate) fn gnutls_priority_set_direct(
        session: gnutls_session_t,
        priorities: *const c_char,
        err_pos: *mut *const c_char,
    ) -> c_int;
    pub(crate) fn gnutls_credentials_set(
        session: gnutls_session_t,
        type_: c_int,
        cred: *mut c_void,
    ) -> c_int;
    pub(crate) fn gnutls_transport_set_int2(session: gnutls_session_t, r: c_int, s: c_int);
    pub(crate) fn gnutls_handshake(session: gnutls_session_t) -> c_int;
    pub(crate) fn gnutls_handshake_set_timeout(session: gnutls_session_t, ms: c_uint);
    pub(crate) fn gnutls_record_recv(
        session: gnutls_session_t,
        data: *mut c_void,
        size: usize,
    ) -> isize;
    pub(crate) fn gnutls_record_check_pending(session: gnutls_session_t) -> usize;
    pub(crate) fn gnutls_record_send(
        session: gnutls_session_t,
        data: *const c_void,
        size: usize,
    ) -> isize;
    pub(crate) fn gnutls_bye(session: gnutls_session_t, how: c_int) -> c_int;
    pub(crate) fn gnutls_alert_get(session: gnutls_session_t) -> c_int;
    pub(crate) fn gnutls_alert_get_name(alert: c_int) -> *const c_char;
    pub(crate) fn gnutls_alert_send(session: gnutls_session_t, level: c_int, desc: c_int) -> c_int;
    pub(crate) fn gnutls_alert_send_appropriate(session: gnutls_session_t, err: c_int) -> c_int;
    pub(crate) fn gnutls_session_key_update(session: gnutls_session_t, flags: c_uint) -> c_int;
    pub(crate) fn gnutls_rehandshake(session: gnutls_session_t) -> c_int;
    pub(crate) fn gnutls_safe_renegotiation_status(session: gnutls_session_t) -> c_uint;

    pub(crate) fn gnutls_protocol_get_version(session: gnutls_session_t) -> c_int;
    pub(crate) fn gnutls_ciphersuite_get(session: gnutls_session_t) -> *const c_char;
    pub(crate) fn gnutls_session_is_resumed(session: gnutls_session_t) -> c_int;
    pub(crate) fn gnutls_session_get_data2(
        session: gnutls_session_t,
        data: *mut gnutls_datum_t,
    ) -> c_int;
    pub(crate) fn gnutls_session_set_data(
        session: gnutls_session_t,
        data: *const c_void,
        size: usize,
    ) -> c_int;
    pub(crate) fn gnutls_session_ticket_key_generate(key: *mut gnutls_datum_t) -> c_int;
    pub(crate) fn gnutls_session_ticket_enable_server(
        session: gnutls_session_t,
        key: *const gnutls_datum_t,
    ) -> c_int;
    pub(crate) fn gnutls_db_set_retrieve_function(
        session: gnutls_session_t,
        f: Option<db_retr_func>,
    );
    pub(crate) fn gnutls_db_set_remove_function(
        session: gnutls_session_t,
        f: Option<db_remove_func>,
    );
    pub(crate) fn gnutls_db_set_store_function(session: gnutls_session_t, f: Option<db_store_func>);
    pub(crate) fn gnutls_db_set_ptr(session: gnutls_session_t, ptr: *mut c_void);

    pub(crate) fn gnutls_priority_init(
        p: *mut gnutls_priority_t,
        priorities: *const c_char,
        err_pos: *mut *const c_char,
    ) -> c_int;
    pub(crate) fn gnutls_priority_deinit(p: gnutls_priority_t);
    pub(crate) fn gnutls_priority_get_cipher_suite_index(
        p: gnutls_priority_t,
        idx: c_uint,
        sidx: *mut c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_priority_protocol_list(
        p: gnutls_priority_t,
        list: *mut *const c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_cipher_suite_info(
        idx: usize,
        cs_id: *mut u8,
        kx: *mut c_int,
        cipher: *mut c_int,
        mac: *mut c_int,
        min_version: *mut c_int,
    ) -> *const c_char;
}

// ---------------------------------------------------------------------------------------------
// GnuTLS: keys and certificates

#[repr(C)]
pub(crate) struct gnutls_privkey_st {
    _p: [u8; 0],
}
#[repr(C)]
pub(crate) struct gnutls_pubkey_st {
    _p: [u8; 0],
}
#[repr(C)]
pub(crate) struct gnutls_x509_crt_int {
    _p: [u8; 0],
}
pub(crate) type gnutls_privkey_t = *mut gnutls_privkey_st;
pub(crate) type gnutls_pubkey_t = *mut gnutls_pubkey_st;
pub(crate) type gnutls_x509_crt_t = *mut gnutls_x509_crt_int;

/// `gnutls_pcert_st` (`<gnutls/abstract.h>`): a parsed certificate as the handshake keeps it.
#[repr(C)]
pub(crate) struct gnutls_pcert_st {
    pub pubkey: gnutls_pubkey_t,
    pub cert: gnutls_datum_t,
    /// `gnutls_certificate_type_t`
    pub type_: c_int,
}

// gnutls_pk_algorithm_t
pub(crate) const GNUTLS_PK_RSA: c_int = 1;
pub(crate) const GNUTLS_PK_ECDSA: c_int = 4;
// gnutls_sign_algorithm_t
pub(crate) const GNUTLS_SIGN_RSA_SHA256: c_int = 6;
pub(crate) const GNUTLS_SIGN_ECDSA_SHA256: c_int = 14;
pub(crate) const GNUTLS_SIGN_ECDSA_SHA384: c_int = 15;
pub(crate) const GNUTLS_SIGN_RSA_PSS_RSAE_SHA256: c_int = 40;
// gnutls_ecc_curve_t
pub(crate) const GNUTLS_ECC_CURVE_SECP256R1: c_int = 2;
pub(crate) const GNUTLS_ECC_CURVE_SECP384R1: c_int = 3;
// gnutls_rnd_level_t
pub(crate) const GNUTLS_RND_RANDOM: c_int = 1;
// error codes
pub(crate) const GNUTLS_E_PK_SIG_VERIFY_FAILED: c_int = -89;

extern "C" {
    /// RFC 7919 ffdhe2048 as GnuTLS's TLS stack uses it (`lib/dh-primes.c`, `lib/algorithms/groups.c`).
    pub(crate) static gnutls_ffdhe_2048_group_prime: gnutls_datum_t;
    pub(crate) static gnutls_ffdhe_2048_group_generator: gnutls_datum_t;
    pub(crate) static gnutls_ffdhe_2048_group_q: gnutls_datum_t;
    pub(crate) static gnutls_ffdhe_2048_key_bits: c_uint;

    pub(crate) fn gnutls_rnd(level: c_int, data: *mut c_void, len: usize) -> c_int;

    pub(crate) fn gnutls_privkey_init(key: *mut gnutls_privkey_t) -> c_int;
    pub(crate) fn gnutls_privkey_deinit(key: gnutls_privkey_t);
    pub(crate) fn gnutls_privkey_import_x509_raw(
        pkey: gnutls_privkey_t,
        data: *const gnutls_datum_t,
        format: c_int,
        password: *const c_char,
        flags: c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_privkey_get_pk_algorithm(
        key: gnutls_privkey_t,
        bits: *mut c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_privkey_sign_data2(
        signer: gnutls_privkey_t,
        algo: c_int,
        flags: c_uint,
        data: *const gnutls_datum_t,
        signature: *mut gnutls_datum_t,
    ) -> c_int;
    pub(crate) fn gnutls_privkey_decrypt_data2(
        key: gnutls_privkey_t,
        flags: c_uint,
        ciphertext: *const gnutls_datum_t,
        plaintext: *mut u8,
        plaintext_size: usize,
    ) -> c_int;

    pub(crate) fn gnutls_pubkey_init(key: *mut gnutls_pubkey_t) -> c_int;
    pub(crate) fn gnutls_pubkey_deinit(key: gnutls_pubkey_t);
    pub(crate) fn gnutls_pubkey_import_privkey(
        key: gnutls_pubkey_t,
        pkey: gnutls_privkey_t,
        usage: c_uint,
        flags: c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_pubkey_export_rsa_raw2(
        key: gnutls_pubkey_t,
        m: *mut gnutls_datum_t,
        e: *mut gnutls_datum_t,
        flags: c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_pubkey_export_ecc_raw2(
        key: gnutls_pubkey_t,
        curve: *mut c_int,
        x: *mut gnutls_datum_t,
        y: *mut gnutls_datum_t,
        flags: c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_pubkey_import_rsa_raw(
        key: gnutls_pubkey_t,
        m: *const gnutls_datum_t,
        e: *const gnutls_datum_t,
    ) -> c_int;
    pub(crate) fn gnutls_pubkey_import_ecc_raw(
        key: gnutls_pubkey_t,
        curve: c_int,
        x: *const gnutls_datum_t,
        y: *const gnutls_datum_t,
    ) -> c_int;
    pub(crate) fn gnutls_pubkey_verify_data2(
        pubkey: gnutls_pubkey_t,
        algo: c_int,
        flags: c_uint,
        data: *const gnutls_datum_t,
        signature: *const gnutls_datum_t,
    ) -> c_int;
    pub(crate) fn gnutls_pubkey_encrypt_data(
        key: gnutls_pubkey_t,
        flags: c_uint,
        plaintext: *const gnutls_datum_t,
        ciphertext: *mut gnutls_datum_t,
    ) -> c_int;

    pub(crate) fn gnutls_x509_crt_init(cert: *mut gnutls_x509_crt_t) -> c_int;
    pub(crate) fn gnutls_x509_crt_deinit(cert: gnutls_x509_crt_t);
    pub(crate) fn gnutls_x509_crt_import(
        cert: gnutls_x509_crt_t,
        data: *const gnutls_datum_t,
        format: c_int,
    ) -> c_int;
    pub(crate) fn gnutls_x509_crt_export2(
        cert: gnutls_x509_crt_t,
        format: c_int,
        out: *mut gnutls_datum_t,
    ) -> c_int;
    pub(crate) fn gnutls_pcert_import_x509_raw(
        pcert: *mut gnutls_pcert_st,
        cert: *const gnutls_datum_t,
        format: c_int,
        flags: c_uint,
    ) -> c_int;
    pub(crate) fn gnutls_pcert_deinit(pcert: *mut gnutls_pcert_st);
}

// ---------------------------------------------------------------------------------------------
// GMP

pub(crate) type mp_limb_t = c_ulong;

/// `__mpz_struct`; `mpz_t` is a one-element array of it, so functions take `*mut`/`*const`.
#[repr(C)]
pub(crate) struct mpz_struct {
    pub alloc: c_int,
    pub size: c_int,
    pub d: *mut mp_limb_t,
}

extern "C" {
    pub(crate) static __gmp_version: *const c_char;

    pub(crate) fn __gmpz_init(x: *mut mpz_struct);
    pub(crate) fn __gmpz_clear(x: *mut mpz_struct);
    pub(crate) fn __gmpz_set(rop: *mut mpz_struct, op: *const mpz_struct);
    pub(crate) fn __gmpz_add_ui(rop: *mut mpz_struct, op1: *const mpz_struct, op2: c_ulong);
    pub(crate) fn __gmpz_sub_ui(rop: *mut mpz_struct, op1: *const mpz_struct, op2: c_ulong);
    pub(crate) fn __gmpz_cmp(op1: *const mpz_struct, op2: *const mpz_struct) -> c_int;
    pub(crate) fn __gmpz_cmp_ui(op1: *const mpz_struct, op2: c_ulong) -> c_int;
    pub(crate) fn __gmpz_sizeinbase(op: *const mpz_struct, base: c_int) -> usize;
    pub(crate) fn __gmpz_powm(
        rop: *mut mpz_struct,
        base: *const mpz_struct,
        exp: *const mpz_struct,
        m: *const mpz_struct,
    );
}

// ---------------------------------------------------------------------------------------------
// nettle / hogweed

#[repr(C)]
pub(crate) struct ecc_curve {
    _p: [u8; 0],
}

/// `struct ecc_point` (`<nettle/ecc.h>`).
#[repr(C)]
pub(crate) struct ecc_point {
    pub ecc: *const ecc_curve,
    pub p: *mut mp_limb_t,
}

/// `struct ecc_scalar` (`<nettle/ecc.h>`).
#[repr(C)]
pub(crate) struct ecc_scalar {
    pub ecc: *const ecc_curve,
    pub p: *mut mp_limb_t,
}

/// `nettle_random_func`: `void f(void *ctx, size_t length, uint8_t *dst)`.
pub(crate) type nettle_random_func =
    unsafe extern "C" fn(ctx: *mut c_void, length: usize, dst: *mut u8);

pub(crate) const CURVE25519_SIZE: usize = 32;

extern "C" {
    pub(crate) fn nettle_version_major() -> c_int;
    pub(crate) fn nettle_version_minor() -> c_int;

    pub(crate) fn nettle_get_secp_256r1() -> *const ecc_curve;

    pub(crate) fn nettle_ecc_point_init(p: *mut ecc_point, ecc: *const ecc_curve);
    pub(crate) fn nettle_ecc_point_clear(p: *mut ecc_point);
    pub(crate) fn nettle_ecc_point_set(
        p: *mut ecc_point,
        x: *const mpz_struct,
        y: *const mpz_struct,
    ) -> c_int;
    pub(crate) fn nettle_ecc_point_get(p: *const ecc_point, x: *mut mpz_struct, y: *mut mpz_struct);
    pub(crate) fn nettle_ecc_scalar_init(s: *mut ecc_scalar, ecc: *const ecc_curve);
    pub(crate) fn nettle_ecc_scalar_clear(s: *mut ecc_scalar);
    pub(crate) fn nettle_ecc_scalar_set(s: *mut ecc_scalar, z: *const mpz_struct) -> c_int;
    pub(crate) fn nettle_ecc_scalar_get(s: *const ecc_scalar, z: *mut mpz_struct);
    pub(crate) fn nettle_ecc_point_mul(
        r: *mut ecc_point,
        n: *const ecc_scalar,
        p: *const ecc_point,
    );
    pub(crate) fn nettle_ecdsa_generate_keypair(
        public: *mut ecc_point,
        key: *mut ecc_scalar,
        random_ctx: *mut c_void,
        random: nettle_random_func,
    );

    pub(crate) fn nettle_curve25519_mul_g(q: *mut u8, n: *const u8);
    pub(crate) fn nettle_curve25519_mul(q: *mut u8, n: *const u8, p: *const u8);

    pub(crate) fn nettle_mpz_random(
        x: *mut mpz_struct,
        ctx: *mut c_void,
        random: nettle_random_func,
        n: *const mpz_struct,
    );
    pub(crate) fn nettle_mpz_sizeinbase_256_u(x: *const mpz_struct) -> usize;
    pub(crate) fn nettle_mpz_get_str_256(length: usize, s: *mut u8, x: *const mpz_struct);
    pub(crate) fn nettle_mpz_set_str_256_u(x: *mut mpz_struct, length: usize, s: *const u8);
}
