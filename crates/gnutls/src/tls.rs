//! TLS sessions and what they are built from: certificate [`Credentials`], priority strings,
//! the server's in-memory [`SessionCache`] and session-ticket keys.
//!
//! A [`Session`] owns its TCP socket (GnuTLS reads and writes the socket's descriptor directly,
//! `gnutls_transport_set_int2`), so the descriptor stays open for as long as GnuTLS may use it.
//! It keeps the credentials, the session cache and the ticket key it was given alive for its own
//! lifetime, and the certificate check ([`Session::set_verify`]) runs as a Rust closure inside
//! the handshake.

use crate::sys::{self, gnutls_datum_t, gnutls_session_t};
use crate::{check, cstr, datum, init, GnutlsError, OwnedDatum};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::net::TcpStream;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// Protocol versions as GnuTLS numbers them (`gnutls_protocol_t`).
pub mod protocol {
    use crate::sys;
    /// TLS 1.0.
    pub const TLS1_0: i32 = sys::GNUTLS_TLS1_0;
    /// TLS 1.1.
    pub const TLS1_1: i32 = sys::GNUTLS_TLS1_1;
    /// TLS 1.2.
    pub const TLS1_2: i32 = sys::GNUTLS_TLS1_2;
    /// TLS 1.3.
    pub const TLS1_3: i32 = sys::GNUTLS_TLS1_3;
}

/// Bits of the certificate verification status (`gnutls_certificate_status_t`).
pub mod cert_status {
    use crate::sys;
    /// The certificate is not trusted (set together with the reason bits).
    pub const INVALID: u32 = sys::GNUTLS_CERT_INVALID;
    /// A loaded CRL revokes the certificate.
    pub const REVOKED: u32 = sys::GNUTLS_CERT_REVOKED;
    /// No trusted issuer was found.
    pub const SIGNER_NOT_FOUND: u32 = sys::GNUTLS_CERT_SIGNER_NOT_FOUND;
    /// The certificate is not valid yet.
    pub const NOT_ACTIVATED: u32 = sys::GNUTLS_CERT_NOT_ACTIVATED;
    /// The certificate has expired.
    pub const EXPIRED: u32 = sys::GNUTLS_CERT_EXPIRED;
}

/// The TLS alert description `no_renegotiation` (RFC 5246 §7.2.2).
pub const ALERT_NO_RENEGOTIATION: u8 = sys::GNUTLS_A_NO_RENEGOTIATION as u8;

/// The encoding of a certificate or CRL file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum X509Format {
    /// PEM (base64 between `-----BEGIN` lines).
    Pem,
    /// DER (binary).
    Der,
}

impl X509Format {
    pub(crate) fn raw(self) -> c_int {
        match self {
            X509Format::Pem => sys::GNUTLS_X509_FMT_PEM,
            X509Format::Der => sys::GNUTLS_X509_FMT_DER,
        }
    }
}

/// A path as a C string.
fn cpath(p: &Path) -> Result<CString, GnutlsError> {
    CString::new(p.as_os_str().as_encoded_bytes()).map_err(|_| GnutlsError::Nul {
        what: format!("path {p:?}"),
    })
}

/// The GnuTLS version string of the library in use, e.g. `GnuTLS 3.7.9`.
pub fn library_name() -> String {
    match crate::version() {
        Some(v) => format!("GnuTLS {v}"),
        None => "GnuTLS".into(),
    }
}

/// Every cipher suite compiled into GnuTLS: its GnuTLS name (e.g.
/// `TLS_DHE_RSA_3DES_EDE_CBC_SHA1`) and IANA code (`gnutls_cipher_suite_info`).
pub fn cipher_suites() -> Vec<(String, u16)> {
    init();
    let mut out = Vec::new();
    for i in 0..10_000usize {
        match suite_info(i) {
            Some((name, id)) => out.push((name, id)),
            None => break,
        }
    }
    out
}

/// Name and IANA code of GnuTLS's suite number `idx`, or `None` past the end.
fn suite_info(idx: usize) -> Option<(String, u16)> {
    let mut id = [0u8; 2];
    // SAFETY: `id` has room for the 2-byte code; the other out-pointers may be NULL.
    let p = unsafe {
        sys::gnutls_cipher_suite_info(
            idx,
            id.as_mut_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    // SAFETY: a non-NULL name is a static C string of the library, copied at once.
    let name = unsafe { cstr(p) }?;
    Some((name, u16::from_be_bytes(id)))
}

/// A `gnutls_priority_t`, freed when dropped.
struct Priority(sys::gnutls_priority_t);

impl Drop for Priority {
    fn drop(&mut self) {
        // SAFETY: a cache from gnutls_priority_init, freed once; nothing borrows from it any more.
        unsafe { sys::gnutls_priority_deinit(self.0) }
    }
}

/// The suite codes and protocol versions ([`protocol`]) a priority string enables, or an error
/// if GnuTLS does not accept the string.
pub fn expand_priority(priority: &str) -> Result<(Vec<u16>, Vec<i32>), GnutlsError> {
    init();
    let c = CString::new(priority).map_err(|_| GnutlsError::Nul {
        what: format!("priority string {priority:?}"),
    })?;
    let mut raw: sys::gnutls_priority_t = std::ptr::null_mut();
    // SAFETY: a valid C string and an out-pointer to a local; the cache is owned by `Priority`
    // from here on.
    let r = unsafe { sys::gnutls_priority_init(&mut raw, c.as_ptr(), std::ptr::null_mut()) };
    check("gnutls_priority_init", r)?;
    let p = Priority(raw);
    let mut codes = Vec::new();
    for i in 0..1000u32 {
        let mut idx: c_uint = 0;
        // SAFETY: a live priority cache and an out-pointer to a local.
        let r = unsafe { sys::gnutls_priority_get_cipher_suite_index(p.0, i, &mut idx) };
        if r == sys::GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE {
            break;
        }
        if r < 0 {
            continue;
        }
        if let Some((_, id)) = suite_info(idx as usize) {
            codes.push(id);
        }
    }
    let mut list: *const c_uint = std::ptr::null();
    // SAFETY: a live priority cache; `list` then points into it, and is read before `p` drops.
    let n = unsafe { sys::gnutls_priority_protocol_list(p.0, &mut list) };
    let protos = if n > 0 && !list.is_null() {
        // SAFETY: GnuTLS returned `n` entries at `list`, alive as long as `p`.
        unsafe { std::slice::from_raw_parts(list, n as usize) }
            .iter()
            .map(|&v| v as i32)
            .collect()
    } else {
        Vec::new()
    };
    Ok((codes, protos))
}

/// A new random session-ticket encryption key (`gnutls_session_ticket_key_generate`).
pub fn generate_ticket_key() -> Result<Vec<u8>, GnutlsError> {
    init();
    let mut d = OwnedDatum::empty();
    // SAFETY: an out-datum GnuTLS fills with memory from gnutls_malloc, owned (and freed) by `d`.
    let r = unsafe { sys::gnutls_session_ticket_key_generate(&mut d.0) };
    check("gnutls_session_ticket_key_generate", r)?;
    Ok(d.as_slice().to_vec())
}

/// Certificate credentials (`gnutls_certificate_credentials_t`): trusted CAs, CRLs, the own
/// certificate and key, DH parameters. Set up through `&mut self`, then shared by sessions in
/// an [`Arc`].
pub struct Credentials(sys::gnutls_certificate_credentials_t);

// SAFETY: the credentials are only changed through `&mut self`; sessions only read them, which
// GnuTLS allows from several threads at once.
unsafe impl Send for Credentials {}
// SAFETY: as above: `&self` gives no way to change the credentials.
unsafe impl Sync for Credentials {}

impl Drop for Credentials {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, freed once; every session using them holds an `Arc` to
        // `self`, so none is left.
        unsafe { sys::gnutls_certificate_free_credentials(self.0) }
    }
}

impl Credentials {
    /// Empty credentials (`gnutls_certificate_allocate_credentials`).
    pub fn new() -> Result<Self, GnutlsError> {
        init();
        let mut raw: sys::gnutls_certificate_credentials_t = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; owned by `Credentials` from here on.
        let r = unsafe { sys::gnutls_certificate_allocate_credentials(&mut raw) };
        check("gnutls_certificate_allocate_credentials", r)?;
        Ok(Credentials(raw))
    }

    /// Adds the trusted CA certificates of a PEM file; returns how many were added.
    pub fn add_trust_file(&mut self, path: &Path) -> Result<usize, GnutlsError> {
        let c = cpath(path)?;
        // SAFETY: live credentials and a C string that outlives the call.
        let n = unsafe {
            sys::gnutls_certificate_set_x509_trust_file(
                self.0,
                c.as_ptr(),
                sys::GNUTLS_X509_FMT_PEM,
            )
        };
        check("gnutls_certificate_set_x509_trust_file", n).map(|n| n as usize)
    }

    /// Adds the CRLs of a file; returns how many were added.
    pub fn add_crl_file(&mut self, path: &Path, format: X509Format) -> Result<usize, GnutlsError> {
        let c = cpath(path)?;
        // SAFETY: live credentials and a C string that outlives the call.
        let n =
            unsafe { sys::gnutls_certificate_set_x509_crl_file(self.0, c.as_ptr(), format.raw()) };
        check("gnutls_certificate_set_x509_crl_file", n).map(|n| n as usize)
    }

    /// Sets the own certificate (chain) and private key from PEM files.
    pub fn set_key_file(&mut self, cert: &Path, key: &Path) -> Result<(), GnutlsError> {
        let (c, k) = (cpath(cert)?, cpath(key)?);
        // SAFETY: live credentials and two C strings that outlive the call.
        let r = unsafe {
            sys::gnutls_certificate_set_x509_key_file(
                self.0,
                c.as_ptr(),
                k.as_ptr(),
                sys::GNUTLS_X509_FMT_PEM,
            )
        };
        check("gnutls_certificate_set_x509_key_file", r).map(drop)
    }

    /// DHE suites: the RFC 7919 group matched to a medium security level
    /// (`gnutls_certificate_set_known_dh_params(GNUTLS_SEC_PARAM_MEDIUM)`).
    pub fn set_known_dh_params(&mut self) -> Result<(), GnutlsError> {
        // SAFETY: live credentials; the parameters are GnuTLS's own static groups.
        let r = unsafe {
            sys::gnutls_certificate_set_known_dh_params(self.0, sys::GNUTLS_SEC_PARAM_MEDIUM)
        };
        check("gnutls_certificate_set_known_dh_params", r).map(drop)
    }
}

/// A server's TLS 1.2 session cache (RFC 5246 §7.4.1.2 session IDs), shared by the sessions of
/// one server; holds at most about 4096 sessions (it is emptied when full).
#[derive(Clone, Default)]
pub struct SessionCache(Arc<Mutex<HashMap<Vec<u8>, Vec<u8>>>>);

impl SessionCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }
}

/// The largest number of sessions a [`SessionCache`] keeps before it is emptied.
const CACHE_LIMIT: usize = 4096;

/// The cache a `gnutls_db_*` callback was given.
///
/// # Safety
/// `ptr` is NULL or the `Arc::as_ptr` of a [`SessionCache`] that the session holds, so it
/// outlives every callback.
unsafe fn cache_of<'a>(ptr: *mut c_void) -> Option<&'a Mutex<HashMap<Vec<u8>, Vec<u8>>>> {
    // SAFETY: per the function's contract.
    unsafe { (ptr as *const Mutex<HashMap<Vec<u8>, Vec<u8>>>).as_ref() }
}

/// The bytes of a datum GnuTLS passes to a callback.
///
/// # Safety
/// `d.data` is NULL or points at `d.size` bytes that stay valid during the callback.
unsafe fn datum_bytes<'a>(d: &gnutls_datum_t) -> Option<&'a [u8]> {
    if d.data.is_null() {
        None
    } else {
        // SAFETY: per the function's contract.
        Some(unsafe { std::slice::from_raw_parts(d.data, d.size as usize) })
    }
}

/// `gnutls_db_store_func`.
unsafe extern "C" fn db_store(
    ptr: *mut c_void,
    key: gnutls_datum_t,
    data: gnutls_datum_t,
) -> c_int {
    std::panic::catch_unwind(|| {
        // SAFETY: GnuTLS passes the pointer set by `set_session_cache` and two datums valid for
        // the call.
        let (db, k, v) = unsafe { (cache_of(ptr), datum_bytes(&key), datum_bytes(&data)) };
        let (Some(db), Some(k), Some(v)) = (db, k, v) else {
            return -1;
        };
        match db.lock() {
            Ok(mut g) => {
                if g.len() > CACHE_LIMIT {
                    g.clear();
                }
                g.insert(k.to_vec(), v.to_vec());
                0
            }
            Err(_) => -1,
        }
    })
    .unwrap_or(-1)
}

/// `gnutls_db_retr_func`: the stored session in memory from `gnutls_malloc`, which GnuTLS frees.
unsafe extern "C" fn db_retrieve(ptr: *mut c_void, key: gnutls_datum_t) -> gnutls_datum_t {
    let none = gnutls_datum_t {
        data: std::ptr::null_mut(),
        size: 0,
    };
    std::panic::catch_unwind(|| {
        // SAFETY: as in `db_store`.
        let (db, k) = unsafe { (cache_of(ptr), datum_bytes(&key)) };
        let (Some(db), Some(k)) = (db, k) else {
            return none;
        };
        let Ok(g) = db.lock() else { return none };
        let Some(v) = g.get(k) else { return none };
        let Ok(size) = c_uint::try_from(v.len()) else {
            return none;
        };
        // SAFETY: reads the library's immutable pointer to its allocator.
        let Some(malloc) = (unsafe { sys::gnutls_malloc }) else {
            return none;
        };
        // SAFETY: gnutls_malloc takes any size and returns NULL or that many writable bytes.
        let p = unsafe { malloc(v.len()) } as *mut u8;
        if p.is_null() {
            return none;
        }
        // SAFETY: `p` has `v.len()` writable bytes and cannot overlap the vector.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, v.len()) };
        gnutls_datum_t { data: p, size }
    })
    .unwrap_or(none)
}

/// `gnutls_db_remove_func`.
unsafe extern "C" fn db_remove(ptr: *mut c_void, key: gnutls_datum_t) -> c_int {
    std::panic::catch_unwind(|| {
        // SAFETY: as in `db_store`.
        let (db, k) = unsafe { (cache_of(ptr), datum_bytes(&key)) };
        let (Some(db), Some(k)) = (db, k) else {
            return -1;
        };
        match db.lock() {
            Ok(mut g) => {
                g.remove(k);
                0
            }
            Err(_) => -1,
        }
    })
    .unwrap_or(-1)
}

/// Which end of the connection a [`Session`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends the ClientHello.
    Client,
    /// Answers it.
    Server,
}

/// The session as the certificate check ([`Session::set_verify`]) sees it, during the
/// handshake.
pub struct Verifier<'a> {
    session: gnutls_session_t,
    _session: std::marker::PhantomData<&'a mut Session>,
}

impl Verifier<'_> {
    /// Checks the peer's chain against the trusted CAs and the CRLs of the credentials, its
    /// validity, and with `hostname` the host name (`gnutls_certificate_verify_peers3`, or
    /// `_peers2` without). Returns the status bits ([`cert_status`]), 0 if trusted.
    pub fn verify_peers(&self, hostname: Option<&CStr>) -> Result<u32, GnutlsError> {
        let mut status: c_uint = 0;
        // SAFETY: a live session inside its handshake, a C string that outlives the call (or
        // none) and an out-pointer to a local.
        let r = unsafe {
            match hostname {
                Some(h) => {
                    sys::gnutls_certificate_verify_peers3(self.session, h.as_ptr(), &mut status)
                }
                None => sys::gnutls_certificate_verify_peers2(self.session, &mut status),
            }
        };
        check("gnutls_certificate_verify_peers", r)?;
        Ok(status)
    }

    /// The peer's leaf certificate, DER.
    pub fn peer_certificate(&self) -> Option<Vec<u8>> {
        peer_certificate(self.session)
    }

    /// Sends a fatal alert with description `desc`. A check that refuses sends its alert here:
    /// once the handshake has failed GnuTLS invalidates the session and sends nothing.
    pub fn send_fatal_alert(&self, desc: u8) {
        // SAFETY: a live session inside its own handshake.
        unsafe { sys::gnutls_alert_send(self.session, sys::GNUTLS_AL_FATAL, c_int::from(desc)) };
    }
}

/// The first certificate of the peer's chain, DER.
fn peer_certificate(session: gnutls_session_t) -> Option<Vec<u8>> {
    let mut n: c_uint = 0;
    // SAFETY: a live session and an out-pointer to a local; the list belongs to the session.
    let list = unsafe { sys::gnutls_certificate_get_peers(session, &mut n) };
    if list.is_null() || n == 0 {
        return None;
    }
    // SAFETY: GnuTLS returned `n >= 1` datums at `list`, each over bytes owned by the session,
    // which is not changed while they are copied here.
    unsafe { datum_bytes(&*list) }.map(<[u8]>::to_vec)
}

/// The certificate check a session runs in its handshake: `true` accepts the peer.
pub type VerifyFn = Box<dyn FnMut(&Verifier<'_>) -> bool + Send>;

/// The key log hook of a session ([`Session::set_keylog`]): called with the NSS key log label
/// (`CLIENT_RANDOM`, `CLIENT_HANDSHAKE_TRAFFIC_SECRET`, ...), the session's ClientHello.random
/// and the secret, once per secret GnuTLS derives.
pub type KeyLogFn = Box<dyn Fn(&str, &[u8], &[u8]) + Send>;

/// What the callbacks of a session reach through `gnutls_session_get_ptr`.
struct Hooks {
    verify: Option<VerifyFn>,
    keylog: Option<KeyLogFn>,
}

/// `gnutls_keylog_func`: runs the session's [`KeyLogFn`] with the client random added (GnuTLS
/// passes only the label and the secret; its own SSLKEYLOGFILE writer reads the random the same
/// way). Always returns 0: a key log that cannot be written must not break the session it watches.
unsafe extern "C" fn keylog_cb(
    session: gnutls_session_t,
    label: *const c_char,
    secret: *const gnutls_datum_t,
) -> c_int {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the pointer was set by `Session::new` to the session's heap `Hooks`, which
        // lives as long as the session; GnuTLS calls this only inside calls that hold
        // `&mut Session` (handshake, recv, send, key update), never nested in `verify_cb`, so
        // only shared access happens meanwhile.
        let hooks = unsafe { (sys::gnutls_session_get_ptr(session) as *const Hooks).as_ref() };
        let Some(f) = hooks.and_then(|h| h.keylog.as_ref()) else {
            return 0;
        };
        if label.is_null() || secret.is_null() {
            return 0;
        }
        // SAFETY: GnuTLS passes a static NUL-terminated label, valid during the call.
        let label = unsafe { CStr::from_ptr(label) }.to_string_lossy();
        // SAFETY: a non-NULL datum over the secret, which the session owns during the call.
        let secret = unsafe { datum_bytes(&*secret) }.unwrap_or(&[]);
        let mut client = gnutls_datum_t {
            data: std::ptr::null_mut(),
            size: 0,
        };
        let mut server = client;
        // SAFETY: a live session and two out-datums that GnuTLS points into its own security
        // parameters (no allocation, nothing to free).
        unsafe { sys::gnutls_session_get_random(session, &mut client, &mut server) };
        // SAFETY: the datum points into the session's parameters, unchanged during this call.
        let random = unsafe { datum_bytes(&client) }.unwrap_or(&[]);
        f(&label, random, secret);
        0
    }))
    .unwrap_or(0)
}

/// `gnutls_certificate_verify_function`: runs the session's [`VerifyFn`].
unsafe extern "C" fn verify_cb(session: gnutls_session_t) -> c_int {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the pointer was set by `Session::new` to the session's heap `Hooks`, which
        // lives as long as the session; GnuTLS calls this only inside `handshake` or `recv`,
        // which hold `&mut Session`, so nothing else uses the hooks meanwhile.
        let hooks = unsafe { (sys::gnutls_session_get_ptr(session) as *mut Hooks).as_mut() };
        let Some(f) = hooks.and_then(|h| h.verify.as_mut()) else {
            return -1;
        };
        let v = Verifier {
            session,
            _session: std::marker::PhantomData,
        };
        if f(&v) {
            0
        } else {
            sys::GNUTLS_E_CERTIFICATE_ERROR
        }
    }))
    .unwrap_or(-1)
}

/// A TLS session (`gnutls_session_t`) over a TCP socket it owns; deinitialised when dropped.
pub struct Session {
    raw: gnutls_session_t,
    /// From `Box::into_raw`, freed in `Drop`; reached by `verify_cb` through the session pointer.
    /// Kept as a raw pointer so that writing it here does not invalidate the callback's access.
    hooks: NonNull<Hooks>,
    tcp: TcpStream,
    creds: Option<Arc<Credentials>>,
    cache: Option<SessionCache>,
    ticket_key: Option<Vec<u8>>,
}

// SAFETY: a GnuTLS session may move between threads as long as one thread uses it at a time;
// `Session` is not `Sync`, and everything it holds, the hooks included, is `Send`.
unsafe impl Send for Session {}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: the session was created by gnutls_init and is not used after this; the
        // socket, hooks, credentials and cache it points at are dropped only afterwards.
        unsafe { sys::gnutls_deinit(self.raw) };
        // SAFETY: `hooks` came from `Box::into_raw` in `new` and is freed once, here, after the
        // session that could call back into it is gone.
        drop(unsafe { Box::from_raw(self.hooks.as_ptr()) });
    }
}

impl Session {
    /// A new session for `role` over `tcp` (`gnutls_init`, `gnutls_transport_set_int2`);
    /// `tickets: false` sets `GNUTLS_NO_TICKETS`.
    pub fn new(role: Role, tickets: bool, tcp: TcpStream) -> Result<Self, GnutlsError> {
        init();
        let mut flags = match role {
            Role::Server => sys::GNUTLS_SERVER,
            Role::Client => sys::GNUTLS_CLIENT,
        };
        if !tickets {
            flags |= sys::GNUTLS_NO_TICKETS;
        }
        let mut raw: gnutls_session_t = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; the session is owned by `Session` from here on.
        let r = unsafe { sys::gnutls_init(&mut raw, flags) };
        check("gnutls_init", r)?;
        let hooks = NonNull::from(Box::leak(Box::new(Hooks {
            verify: None,
            keylog: None,
        })));
        let s = Session {
            raw,
            hooks,
            tcp,
            creds: None,
            cache: None,
            ticket_key: None,
        };
        let fd = s.tcp.as_raw_fd();
        // SAFETY: a live session; the hooks are on the heap (a stable address) and the socket
        // is owned by `s`, so both outlive the session, which `Drop` deinitialises first.
        unsafe {
            sys::gnutls_session_set_ptr(raw, hooks.as_ptr() as *mut c_void);
            sys::gnutls_transport_set_int2(raw, fd, fd);
        }
        Ok(s)
    }

    /// The TCP socket the session runs over.
    pub fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    /// Sets the priority string (`gnutls_priority_set_direct`).
    pub fn set_priority(&mut self, priority: &CStr) -> Result<(), GnutlsError> {
        let mut err: *const c_char = std::ptr::null();
        // SAFETY: a live session, a C string that outlives the call and an out-pointer to a
        // local, which GnuTLS points into `priority` on error.
        let r = unsafe { sys::gnutls_priority_set_direct(self.raw, priority.as_ptr(), &mut err) };
        if r < 0 {
            // SAFETY: NULL or a pointer into `priority`, still alive.
            let at = unsafe { cstr(err) }.unwrap_or_default();
            return Err(GnutlsError::Priority {
                priority: priority.to_string_lossy().into_owned(),
                at,
                code: r,
                message: crate::error_text(r),
            });
        }
        Ok(())
    }

    /// Uses `creds` for the handshake (`gnutls_credentials_set`); the session keeps them alive.
    pub fn set_credentials(&mut self, creds: Arc<Credentials>) -> Result<(), GnutlsError> {
        // SAFETY: a live session and live credentials, which `self.creds` keeps until the
        // session is deinitialised.
        let r = unsafe {
            sys::gnutls_credentials_set(
                self.raw,
                sys::GNUTLS_CRD_CERTIFICATE,
                creds.0 as *mut c_void,
            )
        };
        check("gnutls_credentials_set", r)?;
        self.creds = Some(creds);
        Ok(())
    }

    /// Runs `f` as the certificate check of every handshake of this session
    /// (`gnutls_session_set_verify_function`).
    pub fn set_verify(&mut self, f: VerifyFn) {
        // SAFETY: `hooks` is live until `Drop`; `&mut self` means no GnuTLS call (hence no
        // callback) is running, so this is the only access.
        unsafe { (*self.hooks.as_ptr()).verify = Some(f) };
        // SAFETY: a live session; `verify_cb` reaches the hooks through the session pointer set
        // in `new`.
        unsafe { sys::gnutls_session_set_verify_function(self.raw, Some(verify_cb)) };
    }

    /// Runs `f` for every secret the session derives, to write an NSS key log
    /// (`gnutls_session_set_keylog_function`, GnuTLS >= 3.6.13). Replaces GnuTLS's own
    /// SSLKEYLOGFILE writer for this session.
    pub fn set_keylog(&mut self, f: KeyLogFn) {
        // SAFETY: `hooks` is live until `Drop`; `&mut self` means no GnuTLS call (hence no
        // callback) is running, so this is the only access.
        unsafe { (*self.hooks.as_ptr()).keylog = Some(f) };
        // SAFETY: a live session; `keylog_cb` reaches the hooks through the session pointer set
        // in `new`.
        unsafe { sys::gnutls_session_set_keylog_function(self.raw, Some(keylog_cb)) };
    }

    /// The handshake timeout, ms (`gnutls_handshake_set_timeout`).
    pub fn set_handshake_timeout(&mut self, ms: u32) {
        // SAFETY: a live session.
        unsafe { sys::gnutls_handshake_set_timeout(self.raw, ms) };
    }

    /// Server: whether a client certificate is required or not asked for
    /// (`gnutls_certificate_server_set_request`).
    pub fn require_client_certificate(&mut self, require: bool) {
        let req = if require {
            sys::GNUTLS_CERT_REQUIRE
        } else {
            sys::GNUTLS_CERT_IGNORE
        };
        // SAFETY: a live session.
        unsafe { sys::gnutls_certificate_server_set_request(self.raw, req) };
    }

    /// Server: sends no CA names in the CertificateRequest
    /// (`gnutls_certificate_send_x509_rdn_sequence(session, 1)`).
    pub fn omit_ca_names(&mut self) {
        // SAFETY: a live session.
        unsafe { sys::gnutls_certificate_send_x509_rdn_sequence(self.raw, 1) };
    }

    /// Server: keeps TLS 1.2 sessions in `cache` for resumption (`gnutls_db_*`).
    pub fn set_session_cache(&mut self, cache: SessionCache) {
        let ptr = Arc::as_ptr(&cache.0) as *mut c_void;
        self.cache = Some(cache);
        // SAFETY: a live session; `ptr` points into the cache `self.cache` keeps alive until the
        // session is deinitialised, and the callbacks only use it through `&`.
        unsafe {
            sys::gnutls_db_set_ptr(self.raw, ptr);
            sys::gnutls_db_set_store_function(self.raw, Some(db_store));
            sys::gnutls_db_set_retrieve_function(self.raw, Some(db_retrieve));
            sys::gnutls_db_set_remove_function(self.raw, Some(db_remove));
        }
    }

    /// Server: issues and accepts session tickets encrypted with `key` (from
    /// [`generate_ticket_key`]; `gnutls_session_ticket_enable_server`).
    pub fn enable_ticket_server(&mut self, key: &[u8]) -> Result<(), GnutlsError> {
        let key = self.ticket_key.insert(key.to_vec());
        let d = datum(key)?;
        // SAFETY: a live session and a datum over the key `self.ticket_key` keeps alive as long
        // as the session; GnuTLS only reads it.
        let r = unsafe { sys::gnutls_session_ticket_enable_server(self.raw, &d) };
        check("gnutls_session_ticket_enable_server", r).map(drop)
    }

    /// Client: offers to resume the session `data` came from (`gnutls_session_set_data`).
    pub fn set_session_data(&mut self, data: &[u8]) -> Result<(), GnutlsError> {
        // SAFETY: a live session and `data.len()` readable bytes, which GnuTLS copies.
        let r = unsafe {
            sys::gnutls_session_set_data(self.raw, data.as_ptr() as *const c_void, data.len())
        };
        check("gnutls_session_set_data", r).map(drop)
    }

    /// Client: the data to resume this session later (`gnutls_session_get_data2`).
    pub fn session_data(&self) -> Result<Vec<u8>, GnutlsError> {
        let mut d = OwnedDatum::empty();
        // SAFETY: a live session and an out-datum owned (and freed) by `d`.
        let r = unsafe { sys::gnutls_session_get_data2(self.raw, &mut d.0) };
        check("gnutls_session_get_data2", r)?;
        Ok(d.as_slice().to_vec())
    }

    /// One step of the handshake (`gnutls_handshake`); also runs a renegotiation.
    pub fn handshake(&mut self) -> Result<(), GnutlsError> {
        // SAFETY: a live session with its transport set; `&mut self` keeps the hooks the verify
        // callback uses unaliased.
        let r = unsafe { sys::gnutls_handshake(self.raw) };
        check("gnutls_handshake", r).map(drop)
    }

    /// Reads application data into `buf` (`gnutls_record_recv`); `Ok(0)` is the peer's
    /// close_notify.
    pub fn recv(&mut self, buf: &mut [u8]) -> Result<usize, GnutlsError> {
        // SAFETY: a live session and `buf.len()` writable bytes.
        let n = unsafe {
            sys::gnutls_record_recv(self.raw, buf.as_mut_ptr() as *mut c_void, buf.len())
        };
        record_result("gnutls_record_recv", n)
    }

    /// Writes application data (`gnutls_record_send`); returns the bytes taken.
    pub fn send(&mut self, buf: &[u8]) -> Result<usize, GnutlsError> {
        // SAFETY: a live session and `buf.len()` readable bytes.
        let n =
            unsafe { sys::gnutls_record_send(self.raw, buf.as_ptr() as *const c_void, buf.len()) };
        record_result("gnutls_record_send", n)
    }

    /// Bytes of application data GnuTLS has decrypted and not returned yet
    /// (`gnutls_record_check_pending`).
    pub fn pending(&self) -> usize {
        // SAFETY: a live session.
        unsafe { sys::gnutls_record_check_pending(self.raw) }
    }

    /// Sends close_notify and stops writing (`gnutls_bye(GNUTLS_SHUT_WR)`).
    pub fn bye(&mut self) -> Result<(), GnutlsError> {
        // SAFETY: a live session.
        let r = unsafe { sys::gnutls_bye(self.raw, sys::GNUTLS_SHUT_WR) };
        check("gnutls_bye", r).map(drop)
    }

    /// The description of the last alert received (`gnutls_alert_get`) and its name.
    pub fn alert(&self) -> (i32, String) {
        // SAFETY: a live session.
        let d = unsafe { sys::gnutls_alert_get(self.raw) };
        // SAFETY: a static name (or NULL) for every description, copied at once.
        let name = unsafe { cstr(sys::gnutls_alert_get_name(d)) }.unwrap_or_default();
        (d, name)
    }

    /// Sends a fatal alert with description `desc` (`gnutls_alert_send`).
    pub fn send_fatal_alert(&mut self, desc: u8) {
        // SAFETY: a live session.
        unsafe { sys::gnutls_alert_send(self.raw, sys::GNUTLS_AL_FATAL, c_int::from(desc)) };
    }

    /// Sends the alert GnuTLS finds appropriate for the error `code`
    /// (`gnutls_alert_send_appropriate`).
    pub fn send_appropriate_alert(&mut self, code: i32) {
        // SAFETY: a live session.
        unsafe { sys::gnutls_alert_send_appropriate(self.raw, code) };
    }

    /// TLS 1.3: updates the own keys and asks the peer to update its own
    /// (`gnutls_session_key_update(GNUTLS_KU_PEER)`).
    pub fn key_update(&mut self) -> Result<(), GnutlsError> {
        // SAFETY: a live session.
        let r = unsafe { sys::gnutls_session_key_update(self.raw, sys::GNUTLS_KU_PEER) };
        check("gnutls_session_key_update", r).map(drop)
    }

    /// Server, TLS 1.0-1.2: sends a HelloRequest (`gnutls_rehandshake`).
    pub fn rehandshake(&mut self) -> Result<(), GnutlsError> {
        // SAFETY: a live session.
        let r = unsafe { sys::gnutls_rehandshake(self.raw) };
        check("gnutls_rehandshake", r).map(drop)
    }

    /// Whether the peer signalled RFC 5746 secure renegotiation
    /// (`gnutls_safe_renegotiation_status`).
    pub fn safe_renegotiation(&self) -> bool {
        // SAFETY: a live session.
        unsafe { sys::gnutls_safe_renegotiation_status(self.raw) != 0 }
    }

    /// The protocol version ([`protocol`]) negotiated, or on a server the one the client's
    /// hello asked for (`gnutls_protocol_get_version`).
    pub fn protocol_version(&self) -> i32 {
        // SAFETY: a live session.
        unsafe { sys::gnutls_protocol_get_version(self.raw) }
    }

    /// The negotiated cipher suite's name (`gnutls_ciphersuite_get`): the IANA name, or for
    /// older suites GnuTLS's own.
    pub fn cipher_suite_name(&self) -> Option<String> {
        // SAFETY: a live session; a static or session-owned string (or NULL), copied at once.
        unsafe { cstr(sys::gnutls_ciphersuite_get(self.raw)) }
    }

    /// The peer's leaf certificate, DER (`gnutls_certificate_get_peers`).
    pub fn peer_certificate(&self) -> Option<Vec<u8>> {
        peer_certificate(self.raw)
    }

    /// Whether the handshake resumed an earlier session (`gnutls_session_is_resumed`).
    pub fn is_resumed(&self) -> bool {
        // SAFETY: a live session.
        unsafe { sys::gnutls_session_is_resumed(self.raw) != 0 }
    }
}

/// A record-layer result: a byte count, or the GnuTLS error of `function`.
fn record_result(function: &'static str, n: isize) -> Result<usize, GnutlsError> {
    if n >= 0 {
        Ok(n as usize)
    } else {
        Err(GnutlsError::call(
            function,
            n.clamp(c_int::MIN as isize, 0) as c_int,
        ))
    }
}
