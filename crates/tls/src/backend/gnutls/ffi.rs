//! Hand-written declarations of the part of the GnuTLS 3.x C API that gander uses
//! (`<gnutls/gnutls.h>`, Debian libgnutls28-dev 3.7.9). Only the functions and constants below are
//! bound; all are stable since GnuTLS 3.6 except `gnutls_ciphersuite_get` (3.7.3).
//!
//! Types are opaque pointers; `gnutls_datum_t` is `{ unsigned char *data; unsigned int size; }`.
#![allow(non_camel_case_types, non_upper_case_globals, dead_code)]
use std::os::raw::{c_char, c_int, c_uint, c_void};

#[repr(C)]
pub struct gnutls_session_int {
    _p: [u8; 0],
}
#[repr(C)]
pub struct gnutls_certificate_credentials_st {
    _p: [u8; 0],
}
#[repr(C)]
pub struct gnutls_priority_st {
    _p: [u8; 0],
}
pub type gnutls_session_t = *mut gnutls_session_int;
pub type gnutls_certificate_credentials_t = *mut gnutls_certificate_credentials_st;
pub type gnutls_priority_t = *mut gnutls_priority_st;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct gnutls_datum_t {
    pub data: *mut u8,
    pub size: c_uint,
}

pub type verify_function = unsafe extern "C" fn(gnutls_session_t) -> c_int;
pub type db_store_func = unsafe extern "C" fn(*mut c_void, gnutls_datum_t, gnutls_datum_t) -> c_int;
pub type db_remove_func = unsafe extern "C" fn(*mut c_void, gnutls_datum_t) -> c_int;
pub type db_retr_func = unsafe extern "C" fn(*mut c_void, gnutls_datum_t) -> gnutls_datum_t;

// gnutls_init flags
pub const GNUTLS_SERVER: c_uint = 1;
pub const GNUTLS_CLIENT: c_uint = 1 << 1;
pub const GNUTLS_NO_TICKETS: c_uint = 1 << 10;
// enums
pub const GNUTLS_CRD_CERTIFICATE: c_int = 1;
pub const GNUTLS_X509_FMT_DER: c_int = 0;
pub const GNUTLS_X509_FMT_PEM: c_int = 1;
pub const GNUTLS_CERT_IGNORE: c_int = 0;
pub const GNUTLS_CERT_REQUIRE: c_int = 2;
pub const GNUTLS_SHUT_WR: c_int = 1;
pub const GNUTLS_AL_WARNING: c_int = 1;
pub const GNUTLS_AL_FATAL: c_int = 2;
// gnutls_alert_description_t
pub const GNUTLS_A_NO_RENEGOTIATION: c_int = 100;
pub const GNUTLS_SEC_PARAM_MEDIUM: c_int = 35;
pub const GNUTLS_KU_PEER: c_uint = 1;
pub const GNUTLS_TLS1_0: c_int = 2;
pub const GNUTLS_TLS1_1: c_int = 3;
pub const GNUTLS_TLS1_2: c_int = 4;
pub const GNUTLS_TLS1_3: c_int = 5;
// gnutls_certificate_status_t bits
pub const GNUTLS_CERT_INVALID: c_uint = 1 << 1;
pub const GNUTLS_CERT_REVOKED: c_uint = 1 << 5;
pub const GNUTLS_CERT_SIGNER_NOT_FOUND: c_uint = 1 << 6;
pub const GNUTLS_CERT_NOT_ACTIVATED: c_uint = 1 << 9;
pub const GNUTLS_CERT_EXPIRED: c_uint = 1 << 10;
// error codes
pub const GNUTLS_E_SUCCESS: c_int = 0;
pub const GNUTLS_E_INVALID_SESSION: c_int = -10;
pub const GNUTLS_E_UNSUPPORTED_VERSION_PACKET: c_int = -8;
pub const GNUTLS_E_FATAL_ALERT_RECEIVED: c_int = -12;
pub const GNUTLS_E_WARNING_ALERT_RECEIVED: c_int = -16;
pub const GNUTLS_E_UNKNOWN_CIPHER_SUITE: c_int = -21;
pub const GNUTLS_E_AGAIN: c_int = -28;
pub const GNUTLS_E_INSUFFICIENT_CREDENTIALS: c_int = -32;
pub const GNUTLS_E_REHANDSHAKE: c_int = -37;
pub const GNUTLS_E_GOT_APPLICATION_DATA: c_int = -38;
pub const GNUTLS_E_CERTIFICATE_ERROR: c_int = -43;
pub const GNUTLS_E_NO_CERTIFICATE_FOUND: c_int = -49;
pub const GNUTLS_E_INTERRUPTED: c_int = -52;
pub const GNUTLS_E_PUSH_ERROR: c_int = -53;
pub const GNUTLS_E_PULL_ERROR: c_int = -54;
pub const GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE: c_int = -56;
pub const GNUTLS_E_NO_CIPHER_SUITES: c_int = -87;
pub const GNUTLS_E_UNSAFE_RENEGOTIATION_DENIED: c_int = -108;
pub const GNUTLS_E_PREMATURE_TERMINATION: c_int = -110;
pub const GNUTLS_E_CERTIFICATE_REQUIRED: c_int = -112;
pub const GNUTLS_E_TIMEDOUT: c_int = -319;
pub const GNUTLS_E_SESSION_EOF: c_int = -328;
pub const GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR: c_int = -348;
pub const GNUTLS_E_SESSION_USER_ID_CHANGED: c_int = -406;
pub const GNUTLS_E_NO_COMMON_KEY_SHARE: c_int = -423;

extern "C" {
    pub static gnutls_malloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>;
    pub static gnutls_free: Option<unsafe extern "C" fn(*mut c_void)>;

    pub fn gnutls_global_init() -> c_int;
    pub fn gnutls_check_version(req: *const c_char) -> *const c_char;
    pub fn gnutls_strerror(error: c_int) -> *const c_char;

    pub fn gnutls_certificate_allocate_credentials(
        res: *mut gnutls_certificate_credentials_t,
    ) -> c_int;
    pub fn gnutls_certificate_free_credentials(sc: gnutls_certificate_credentials_t);
    pub fn gnutls_certificate_set_x509_trust_file(
        cred: gnutls_certificate_credentials_t,
        cafile: *const c_char,
        fmt: c_int,
    ) -> c_int;
    pub fn gnutls_certificate_set_x509_crl_file(
        res: gnutls_certificate_credentials_t,
        crlfile: *const c_char,
        fmt: c_int,
    ) -> c_int;
    pub fn gnutls_certificate_set_x509_key_file(
        res: gnutls_certificate_credentials_t,
        certfile: *const c_char,
        keyfile: *const c_char,
        fmt: c_int,
    ) -> c_int;
    pub fn gnutls_certificate_set_known_dh_params(
        res: gnutls_certificate_credentials_t,
        sec_param: c_int,
    ) -> c_int;
    pub fn gnutls_certificate_verify_peers2(
        session: gnutls_session_t,
        status: *mut c_uint,
    ) -> c_int;
    pub fn gnutls_certificate_verify_peers3(
        session: gnutls_session_t,
        hostname: *const c_char,
        status: *mut c_uint,
    ) -> c_int;
    pub fn gnutls_certificate_get_peers(
        session: gnutls_session_t,
        list_size: *mut c_uint,
    ) -> *const gnutls_datum_t;
    pub fn gnutls_certificate_send_x509_rdn_sequence(session: gnutls_session_t, status: c_int);
    pub fn gnutls_certificate_server_set_request(session: gnutls_session_t, req: c_int);
    pub fn gnutls_session_set_verify_function(
        session: gnutls_session_t,
        func: Option<verify_function>,
    );

    pub fn gnutls_init(session: *mut gnutls_session_t, flags: c_uint) -> c_int;
    pub fn gnutls_deinit(session: gnutls_session_t);
    pub fn gnutls_session_set_ptr(session: gnutls_session_t, ptr: *mut c_void);
    pub fn gnutls_session_get_ptr(session: gnutls_session_t) -> *mut c_void;
    pub fn gnutls_priority_set_direct(
        session: gnutls_session_t,
        priorities: *const c_char,
        err_pos: *mut *const c_char,
    ) -> c_int;
    pub fn gnutls_credentials_set(
        session: gnutls_session_t,
        type_: c_int,
        cred: *mut c_void,
    ) -> c_int;
    pub fn gnutls_transport_set_int2(session: gnutls_session_t, r: c_int, s: c_int);
    pub fn gnutls_handshake(session: gnutls_session_t) -> c_int;
    pub fn gnutls_handshake_set_timeout(session: gnutls_session_t, ms: c_uint);
    pub fn gnutls_record_recv(session: gnutls_session_t, data: *mut c_void, size: usize) -> isize;
    pub fn gnutls_record_check_pending(session: gnutls_session_t) -> usize;
    pub fn gnutls_record_send(session: gnutls_session_t, data: *const c_void, size: usize)
        -> isize;
    pub fn gnutls_bye(session: gnutls_session_t, how: c_int) -> c_int;
    pub fn gnutls_alert_get(session: gnutls_session_t) -> c_int;
    pub fn gnutls_alert_get_name(alert: c_int) -> *const c_char;
    pub fn gnutls_alert_send(session: gnutls_session_t, level: c_int, desc: c_int) -> c_int;
    pub fn gnutls_alert_send_appropriate(session: gnutls_session_t, err: c_int) -> c_int;
    pub fn gnutls_session_key_update(session: gnutls_session_t, flags: c_uint) -> c_int;
    pub fn gnutls_rehandshake(session: gnutls_session_t) -> c_int;
    pub fn gnutls_safe_renegotiation_status(session: gnutls_session_t) -> c_uint;

    pub fn gnutls_protocol_get_version(session: gnutls_session_t) -> c_int;
    pub fn gnutls_ciphersuite_get(session: gnutls_session_t) -> *const c_char;
    pub fn gnutls_session_is_resumed(session: gnutls_session_t) -> c_int;
    pub fn gnutls_session_get_data2(session: gnutls_session_t, data: *mut gnutls_datum_t) -> c_int;
    pub fn gnutls_session_set_data(
        session: gnutls_session_t,
        data: *const c_void,
        size: usize,
    ) -> c_int;
    pub fn gnutls_session_ticket_key_generate(key: *mut gnutls_datum_t) -> c_int;
    pub fn gnutls_session_ticket_enable_server(
        session: gnutls_session_t,
        key: *const gnutls_datum_t,
    ) -> c_int;
    pub fn gnutls_db_set_retrieve_function(session: gnutls_session_t, f: Option<db_retr_func>);
    pub fn gnutls_db_set_remove_function(session: gnutls_session_t, f: Option<db_remove_func>);
    pub fn gnutls_db_set_store_function(session: gnutls_session_t, f: Option<db_store_func>);
    pub fn gnutls_db_set_ptr(session: gnutls_session_t, ptr: *mut c_void);

    pub fn gnutls_priority_init(
        p: *mut gnutls_priority_t,
        priorities: *const c_char,
        err_pos: *mut *const c_char,
    ) -> c_int;
    pub fn gnutls_priority_deinit(p: gnutls_priority_t);
    pub fn gnutls_priority_get_cipher_suite_index(
        p: gnutls_priority_t,
        idx: c_uint,
        sidx: *mut c_uint,
    ) -> c_int;
    pub fn gnutls_priority_protocol_list(p: gnutls_priority_t, list: *mut *const c_uint) -> c_int;
    pub fn gnutls_cipher_suite_info(
        idx: usize,
        cs_id: *mut u8,
        kx: *mut c_int,
        cipher: *mut c_int,
        mac: *mut c_int,
        min_version: *mut c_int,
    ) -> *const c_char;
}
