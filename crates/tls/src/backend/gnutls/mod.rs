//! GnuTLS backend through gander's own minimal FFI ([`ffi`]).
//!
//! GnuTLS is the one library here that still has the 3DES suites (the RSE paper's reference suite
//! TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA) and TLS 1.0/1.1. Debian 12's GnuTLS 3.7.9 has them compiled
//! in but outside its default priorities (`NORMAL`): they are enabled by naming them in an explicit
//! priority string, `NONE:+VERS-TLS1.0:+DHE-RSA:+3DES-CBC:+SHA1:+COMP-NULL:+SIGN-ALL:+GROUP-ALL`;
//! no `%COMPAT` is needed. GnuTLS selects suites by component (key exchange × cipher × MAC), so a
//! profile listing several suites may admit combinations it did not list; the negotiated suite is
//! checked against the profile after the handshake and refused if it is not listed.
//!
//! Certificate checks run in a per-session verify callback: `gnutls_certificate_verify_peers2`
//! (chain to the trust file, validity, the CRLs loaded into the credentials, RFC 5280 §6), then the
//! pin. A failure is recorded with the alert gander sends for it (RFC 5246 §7.2.2), so both sides
//! see the same kind of error as with the other backends.
//!
//! Session resumption: TLS 1.2 session IDs through an in-memory server cache (`gnutls_db_*`),
//! RFC 5077 / TLS 1.3 tickets when enabled; the client keeps the last session's data.
//! Rekeying: TLS 1.3 KeyUpdate; TLS 1.0-1.2 secure renegotiation (RFC 5746). A server rekeys with
//! `gnutls_rehandshake` (HelloRequest), reads until the client's ClientHello shows up as
//! `GNUTLS_E_REHANDSHAKE`, then runs `gnutls_handshake`; a client rekeys by calling
//! `gnutls_handshake` again. On the other side the same `GNUTLS_E_REHANDSHAKE` from a read starts
//! the handshake: a client always follows a HelloRequest (as OpenSSL clients do), a server accepts a
//! client-initiated renegotiation only if its profile sets `renegotiation_interval_s` (as OpenSSL 3
//! servers need `SSL_OP_ALLOW_CLIENT_RENEGOTIATION`) and otherwise refuses it with a fatal
//! `no_renegotiation` alert, since GnuTLS leaves a server that saw a ClientHello only those two
//! choices. Application data that arrives while a renegotiation starts is kept and returned by
//! later reads. GnuTLS 3.7 aborts a client's renegotiation handshake when application data arrives
//! before the ServerHello (`GNUTLS_E_GOT_APPLICATION_DATA` resets the handshake state), so a GnuTLS
//! client renegotiates reliably only with a server that stops sending once it has asked for (or
//! received) a ClientHello: gander's GnuTLS server does, by reading until the ClientHello before
//! it writes again; an OpenSSL server that keeps writing after its HelloRequest does not. Renegotiation is refused
//! unless the peer signalled RFC 5746 support (`gnutls_safe_renegotiation_status`); GnuTLS's own
//! default (`%PARTIAL_RENEGOTIATION`) refuses unsafe renegotiation as well, while still allowing
//! initial handshakes with legacy peers. The peer may not change its certificate during a
//! renegotiation (GnuTLS without `GNUTLS_ALLOW_ID_CHANGE`), and the verify callback and the
//! profile's suite check run again on the new handshake.
pub mod ffi;

use super::{check_negotiated, set_timeouts, BackendKind, Capabilities, TlsBackend, TlsStream};
use crate::error::{alert, from_alert, Side};
use crate::profile::ProfileError;
use crate::suites::{self, CipherSuite};
use crate::{TlsError, TlsProfile, TlsVersion};
use ffi::*;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::raw::{c_int, c_uint, c_void};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

fn init() {
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        // SAFETY: reference-counted global initialisation, safe to call from any thread.
        unsafe {
            gnutls_global_init();
        }
    });
}

fn strerror(code: c_int) -> String {
    // SAFETY: gnutls_strerror returns a static string for every code.
    unsafe {
        let p = gnutls_strerror(code);
        if p.is_null() {
            format!("GnuTLS error {code}")
        } else {
            format!("{} ({code})", CStr::from_ptr(p).to_string_lossy())
        }
    }
}

fn library_version() -> String {
    init();
    // SAFETY: with NULL, returns the static version string.
    unsafe {
        let p = gnutls_check_version(std::ptr::null());
        if p.is_null() {
            "GnuTLS".into()
        } else {
            format!("GnuTLS {}", CStr::from_ptr(p).to_string_lossy())
        }
    }
}

/// GnuTLS suite name (e.g. `TLS_DHE_RSA_3DES_EDE_CBC_SHA1`) -> IANA code, for every compiled suite.
fn gnutls_names() -> &'static HashMap<String, u16> {
    static N: OnceLock<HashMap<String, u16>> = OnceLock::new();
    N.get_or_init(|| {
        init();
        let mut m = HashMap::new();
        for i in 0..10_000usize {
            let mut id = [0u8; 2];
            // SAFETY: id has room for the 2-byte code; null out-pointers are allowed.
            let p = unsafe {
                gnutls_cipher_suite_info(
                    i,
                    id.as_mut_ptr(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if p.is_null() {
                break;
            }
            // SAFETY: non-null names are static C strings.
            let name = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
            m.insert(name, u16::from_be_bytes(id));
        }
        m
    })
}

fn vers_keyword(v: TlsVersion) -> &'static str {
    match v {
        TlsVersion::Tls10 => "+VERS-TLS1.0",
        TlsVersion::Tls11 => "+VERS-TLS1.1",
        TlsVersion::Tls12 => "+VERS-TLS1.2",
        TlsVersion::Tls13 => "+VERS-TLS1.3",
    }
}

/// The priority string for `versions` and `suites` (empty = GnuTLS `NORMAL`).
pub fn priority_string(versions: &[TlsVersion], suites: &[&CipherSuite]) -> String {
    let vers: Vec<&str> = versions.iter().map(|v| vers_keyword(*v)).collect();
    if suites.is_empty() {
        return format!("NORMAL:-VERS-ALL:{}", vers.join(":"));
    }
    let mut parts: Vec<String> = vec!["NONE".into()];
    parts.extend(vers.iter().map(|s| s.to_string()));
    let mut push = |s: String| {
        if !parts.contains(&s) {
            parts.push(s);
        }
    };
    for s in suites {
        if !s.gnutls.kx.is_empty() {
            push(format!("+{}", s.gnutls.kx));
        }
    }
    for s in suites {
        push(format!("+{}", s.gnutls.cipher));
    }
    for s in suites {
        push(format!("+{}", s.gnutls.mac));
    }
    for k in ["+COMP-NULL", "+SIGN-ALL", "+GROUP-ALL"] {
        push(k.into());
    }
    parts.join(":")
}

/// Suite codes and protocol versions a priority string enables.
fn expand(priority: &str) -> Option<(Vec<u16>, Vec<c_int>)> {
    init();
    let c = CString::new(priority).ok()?;
    let mut p: gnutls_priority_t = std::ptr::null_mut();
    // SAFETY: valid C string; `p` is freed below.
    let r = unsafe { gnutls_priority_init(&mut p, c.as_ptr(), std::ptr::null_mut()) };
    if r < 0 || p.is_null() {
        return None;
    }
    let mut codes = Vec::new();
    for i in 0..1000u32 {
        let mut idx: c_uint = 0;
        // SAFETY: `p` is a live priority cache.
        let r = unsafe { gnutls_priority_get_cipher_suite_index(p, i, &mut idx) };
        if r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE {
            break;
        }
        if r < 0 {
            continue;
        }
        let mut id = [0u8; 2];
        // SAFETY: as in gnutls_names.
        let n = unsafe {
            gnutls_cipher_suite_info(
                idx as usize,
                id.as_mut_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if !n.is_null() {
            codes.push(u16::from_be_bytes(id));
        }
    }
    let mut list: *const c_uint = std::ptr::null();
    // SAFETY: `list` points into the priority cache, read before deinit.
    let n = unsafe { gnutls_priority_protocol_list(p, &mut list) };
    let mut protos = Vec::new();
    if n > 0 && !list.is_null() {
        for i in 0..n as usize {
            // SAFETY: the library returned `n` entries.
            protos.push(unsafe { *list.add(i) } as c_int);
        }
    }
    // SAFETY: frees what gnutls_priority_init allocated.
    unsafe { gnutls_priority_deinit(p) };
    Some((codes, protos))
}

fn proto_of(v: TlsVersion) -> c_int {
    match v {
        TlsVersion::Tls10 => GNUTLS_TLS1_0,
        TlsVersion::Tls11 => GNUTLS_TLS1_1,
        TlsVersion::Tls12 => GNUTLS_TLS1_2,
        TlsVersion::Tls13 => GNUTLS_TLS1_3,
    }
}

pub(crate) fn capabilities() -> Capabilities {
    let mut versions = Vec::new();
    for v in TlsVersion::ALL {
        let proto = proto_of(v);
        if let Some((codes, protos)) = expand(&priority_string(&[v], &[])) {
            if protos.contains(&proto) && !codes.is_empty() {
                versions.push(v);
            }
        }
    }
    // A suite is supported if its own single-suite priority string yields exactly it.
    let mut codes = Vec::new();
    for s in suites::CATALOGUE {
        let vers: Vec<TlsVersion> = s.versions().collect();
        if let Some((got, _)) = expand(&priority_string(&vers, &[s])) {
            if got.contains(&s.code) {
                codes.push(s.code);
            }
        }
    }
    Capabilities {
        library: library_version(),
        versions,
        suites: codes,
        renegotiation: true,
        key_update: true,
    }
}

/// Certificate credentials shared by the sessions of one backend.
struct Creds(gnutls_certificate_credentials_t);
// SAFETY: after set-up the credentials are only read, which GnuTLS allows from several threads.
unsafe impl Send for Creds {}
unsafe impl Sync for Creds {}
impl Drop for Creds {
    fn drop(&mut self) {
        // SAFETY: allocated in `GnutlsBackend::new`; every session holding it holds an Arc.
        unsafe { gnutls_certificate_free_credentials(self.0) }
    }
}

fn cpath(p: &Path) -> Result<CString, TlsError> {
    CString::new(p.as_os_str().as_encoded_bytes())
        .map_err(|_| TlsError::Pki(format!("path {p:?} contains NUL")))
}

fn file_err(what: &'static str, p: &Path, code: c_int) -> TlsError {
    TlsError::Profile(ProfileError::MissingFile {
        what,
        path: p.to_owned(),
        reason: strerror(code),
    })
}

/// Server-side TLS 1.2 session cache (RFC 5246 §7.4.1.2 session IDs).
type SessionDb = Mutex<HashMap<Vec<u8>, Vec<u8>>>;

/// The GnuTLS backend.
pub struct GnutlsBackend {
    profile: TlsProfile,
    creds: Arc<Creds>,
    priority: CString,
    pin: Option<Arc<Vec<u8>>>,
    db: Arc<SessionDb>,
    ticket_key: Option<Vec<u8>>,
    client_session: Arc<Mutex<Option<Vec<u8>>>>,
    hostname: Option<CString>,
}

impl GnutlsBackend {
    pub fn new(profile: &TlsProfile) -> Result<Self, TlsError> {
        init();
        let suites = profile.suites()?;
        let priority = priority_string(&profile.versions, &suites);
        let priority = CString::new(priority)
            .map_err(|_| TlsError::HandshakeFailed("priority string".into()))?;
        let mut raw: gnutls_certificate_credentials_t = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; freed by `Creds::drop`.
        let r = unsafe { gnutls_certificate_allocate_credentials(&mut raw) };
        if r < 0 || raw.is_null() {
            return Err(TlsError::HandshakeFailed(format!(
                "GnuTLS credentials: {}",
                strerror(r)
            )));
        }
        let creds = Arc::new(Creds(raw));
        for p in &profile.ca {
            let c = cpath(p)?;
            // SAFETY: live credentials and a C string.
            let n = unsafe {
                gnutls_certificate_set_x509_trust_file(raw, c.as_ptr(), GNUTLS_X509_FMT_PEM)
            };
            if n <= 0 {
                return Err(file_err("ca", p, n));
            }
        }
        for p in &profile.crl {
            let c = cpath(p)?;
            // SAFETY: as above.
            let mut n = unsafe {
                gnutls_certificate_set_x509_crl_file(raw, c.as_ptr(), GNUTLS_X509_FMT_PEM)
            };
            if n < 0 {
                // SAFETY: as above.
                n = unsafe {
                    gnutls_certificate_set_x509_crl_file(raw, c.as_ptr(), GNUTLS_X509_FMT_DER)
                };
            }
            if n < 0 {
                return Err(file_err("crl", p, n));
            }
        }
        if let (Some(cert), Some(key)) = (&profile.cert, &profile.key) {
            let (c, k) = (cpath(cert)?, cpath(key)?);
            // SAFETY: as above.
            let r = unsafe {
                gnutls_certificate_set_x509_key_file(
                    raw,
                    c.as_ptr(),
                    k.as_ptr(),
                    GNUTLS_X509_FMT_PEM,
                )
            };
            if r < 0 {
                return Err(file_err("cert", cert, r));
            }
        }
        // DHE suites: RFC 7919 groups matched to the key's security level.
        // SAFETY: as above.
        unsafe { gnutls_certificate_set_known_dh_params(raw, GNUTLS_SEC_PARAM_MEDIUM) };
        let pin = match &profile.peer_cert {
            Some(p) => Some(Arc::new(super::files::cert_der("peer_cert", p)?)),
            None => None,
        };
        let ticket_key = if profile.session_resumption && profile.session_tickets {
            let mut d = gnutls_datum_t {
                data: std::ptr::null_mut(),
                size: 0,
            };
            // SAFETY: GnuTLS allocates `d.data`; copied and released with gnutls_free.
            unsafe {
                let r = gnutls_session_ticket_key_generate(&mut d);
                if r < 0 || d.data.is_null() {
                    return Err(TlsError::HandshakeFailed(format!(
                        "GnuTLS ticket key: {}",
                        strerror(r)
                    )));
                }
                let v = std::slice::from_raw_parts(d.data, d.size as usize).to_vec();
                if let Some(free) = gnutls_free {
                    free(d.data as *mut c_void);
                }
                Some(v)
            }
        } else {
            None
        };
        let hostname = match (&profile.server_name, profile.verify_hostname) {
            (Some(n), true) => Some(
                CString::new(n.as_str())
                    .map_err(|_| TlsError::HandshakeFailed("server_name".into()))?,
            ),
            _ => None,
        };
        Ok(GnutlsBackend {
            profile: profile.clone(),
            creds,
            priority,
            pin,
            db: Arc::new(Mutex::new(HashMap::new())),
            ticket_key,
            client_session: Arc::new(Mutex::new(None)),
            hostname,
        })
    }

    fn wrap(&self, tcp: TcpStream, server: bool) -> Result<Box<dyn TlsStream>, TlsError> {
        set_timeouts(&tcp, &self.profile)?;
        let tickets =
            self.ticket_key.is_some() && (!server || self.profile.effective_num_tickets() > 0);
        let mut flags = if server { GNUTLS_SERVER } else { GNUTLS_CLIENT };
        if !tickets {
            flags |= GNUTLS_NO_TICKETS;
        }
        let mut session: gnutls_session_t = std::ptr::null_mut();
        // SAFETY: out-pointer; the session is owned by `GnutlsStream` and deinit in its Drop.
        let r = unsafe { gnutls_init(&mut session, flags) };
        if r < 0 || session.is_null() {
            return Err(TlsError::HandshakeFailed(format!(
                "gnutls_init: {}",
                strerror(r)
            )));
        }
        let mut stream = GnutlsStream {
            session,
            state: Box::new(SessionState {
                pin: self.pin.clone(),
                hostname: self.hostname.clone(),
                verdict: None,
            }),
            _creds: self.creds.clone(),
            db: self.db.clone(),
            ticket_key: self.ticket_key.clone(),
            client_session: if server || !self.profile.session_resumption {
                None
            } else {
                Some(self.client_session.clone())
            },
            tcp,
            server,
            done: false,
            pending: Vec::new(),
            profile: self.profile.clone(),
        };
        stream.setup(&self.priority)?;
        Ok(Box::new(stream))
    }
}

impl TlsBackend for GnutlsBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Gnutls
    }
    fn profile(&self) -> &TlsProfile {
        &self.profile
    }
    fn client(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        self.wrap(tcp, false)
    }
    fn server(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        if self.profile.cert.is_none() || self.profile.key.is_none() {
            return Err(ProfileError::Missing("cert").into());
        }
        self.wrap(tcp, true)
    }
}

/// Per-session data reachable from the verify callback through `gnutls_session_get_ptr`.
struct SessionState {
    pin: Option<Arc<Vec<u8>>>,
    hostname: Option<CString>,
    /// The local verification failure and the alert to send for it.
    verdict: Option<(TlsError, u8)>,
}

/// `gnutls_certificate_verify_function`: chain, validity, CRL, optional host name, then the pin.
unsafe extern "C" fn verify_cb(session: gnutls_session_t) -> c_int {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: the pointer was set to the stream's boxed state, which outlives the session.
        let st = unsafe { gnutls_session_get_ptr(session) as *mut SessionState };
        if st.is_null() {
            return -1;
        }
        let st = unsafe { &mut *st };
        let mut status: c_uint = 0;
        let r = unsafe {
            match &st.hostname {
                Some(h) => gnutls_certificate_verify_peers3(session, h.as_ptr(), &mut status),
                None => gnutls_certificate_verify_peers2(session, &mut status),
            }
        };
        let by = Side::Local;
        let fail = |st: &mut SessionState, e: TlsError, desc: u8| {
            // Sent here: once the handshake has failed GnuTLS invalidates the session and sends nothing.
            // SAFETY: live session inside its own handshake.
            unsafe { gnutls_alert_send(session, GNUTLS_AL_FATAL, desc as c_int) };
            st.verdict = Some((e, 0));
            GNUTLS_E_CERTIFICATE_ERROR
        };
        if r < 0 {
            let e = TlsError::BadCertificate {
                by,
                detail: strerror(r),
            };
            return fail(st, e, alert::BAD_CERTIFICATE);
        }
        if status != 0 {
            let detail = format!("GnuTLS verification status 0x{status:x}");
            let (e, desc) = if status & GNUTLS_CERT_SIGNER_NOT_FOUND != 0 {
                (TlsError::UnknownCa { by, detail }, alert::UNKNOWN_CA)
            } else if status & GNUTLS_CERT_REVOKED != 0 {
                (TlsError::Revoked { by, detail }, alert::CERTIFICATE_REVOKED)
            } else if status & (GNUTLS_CERT_EXPIRED | GNUTLS_CERT_NOT_ACTIVATED) != 0 {
                (TlsError::Expired { by, detail }, alert::CERTIFICATE_EXPIRED)
            } else {
                (
                    TlsError::BadCertificate { by, detail },
                    alert::BAD_CERTIFICATE,
                )
            };
            return fail(st, e, desc);
        }
        if let Some(pin) = &st.pin {
            let mut n: c_uint = 0;
            let list = unsafe { gnutls_certificate_get_peers(session, &mut n) };
            let same = !list.is_null() && n > 0 && {
                let d = unsafe { &*list };
                !d.data.is_null()
                    && unsafe { std::slice::from_raw_parts(d.data, d.size as usize) }
                        == pin.as_slice()
            };
            if !same {
                return fail(st, TlsError::PinMismatch, alert::BAD_CERTIFICATE);
            }
        }
        0
    });
    r.unwrap_or(-1)
}

unsafe extern "C" fn db_store(
    ptr: *mut c_void,
    key: gnutls_datum_t,
    data: gnutls_datum_t,
) -> c_int {
    std::panic::catch_unwind(|| {
        if ptr.is_null() || key.data.is_null() || data.data.is_null() {
            return -1;
        }
        // SAFETY: `ptr` is the stream's `Arc<SessionDb>` contents, alive for the session.
        let db = unsafe { &*(ptr as *const SessionDb) };
        let k = unsafe { std::slice::from_raw_parts(key.data, key.size as usize) }.to_vec();
        let v = unsafe { std::slice::from_raw_parts(data.data, data.size as usize) }.to_vec();
        match db.lock() {
            Ok(mut g) => {
                if g.len() > 4096 {
                    g.clear();
                }
                g.insert(k, v);
                0
            }
            Err(_) => -1,
        }
    })
    .unwrap_or(-1)
}

unsafe extern "C" fn db_retrieve(ptr: *mut c_void, key: gnutls_datum_t) -> gnutls_datum_t {
    let none = gnutls_datum_t {
        data: std::ptr::null_mut(),
        size: 0,
    };
    std::panic::catch_unwind(|| {
        if ptr.is_null() || key.data.is_null() {
            return none;
        }
        // SAFETY: as in db_store; the returned buffer is allocated with gnutls_malloc as the API requires.
        let db = unsafe { &*(ptr as *const SessionDb) };
        let k = unsafe { std::slice::from_raw_parts(key.data, key.size as usize) };
        let Ok(g) = db.lock() else { return none };
        let Some(v) = g.get(k) else { return none };
        let Some(malloc) = (unsafe { gnutls_malloc }) else {
            return none;
        };
        let p = unsafe { malloc(v.len()) } as *mut u8;
        if p.is_null() {
            return none;
        }
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, v.len()) };
        gnutls_datum_t {
            data: p,
            size: v.len() as c_uint,
        }
    })
    .unwrap_or(none)
}

unsafe extern "C" fn db_remove(ptr: *mut c_void, key: gnutls_datum_t) -> c_int {
    std::panic::catch_unwind(|| {
        if ptr.is_null() || key.data.is_null() {
            return -1;
        }
        // SAFETY: as in db_store.
        let db = unsafe { &*(ptr as *const SessionDb) };
        let k = unsafe { std::slice::from_raw_parts(key.data, key.size as usize) };
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

struct GnutlsStream {
    session: gnutls_session_t,
    state: Box<SessionState>,
    _creds: Arc<Creds>,
    db: Arc<SessionDb>,
    ticket_key: Option<Vec<u8>>,
    client_session: Option<Arc<Mutex<Option<Vec<u8>>>>>,
    tcp: TcpStream,
    server: bool,
    done: bool,
    /// Application data that arrived while a renegotiation started, returned by the next reads.
    pending: Vec<u8>,
    profile: TlsProfile,
}

// SAFETY: a GnuTLS session may move between threads as long as one thread uses it at a time,
// which `&mut self` guarantees.
unsafe impl Send for GnutlsStream {}

impl Drop for GnutlsStream {
    fn drop(&mut self) {
        self.save_session();
        // SAFETY: the session was created by gnutls_init and is not used after this.
        unsafe { gnutls_deinit(self.session) };
    }
}

impl GnutlsStream {
    fn setup(&mut self, priority: &CStr) -> Result<(), TlsError> {
        let s = self.session;
        let mut err: *const std::os::raw::c_char = std::ptr::null();
        // SAFETY: `s` is live; every pointer handed over outlives the session (boxed state, Arcs,
        // credentials held in `_creds`, the socket owned by `self.tcp`).
        unsafe {
            let r = gnutls_priority_set_direct(s, priority.as_ptr(), &mut err);
            if r < 0 {
                let at = if err.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(err).to_string_lossy().into_owned()
                };
                return Err(TlsError::HandshakeFailed(format!(
                    "GnuTLS priority {priority:?} at {at:?}: {}",
                    strerror(r)
                )));
            }
            let r = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, self._creds.0 as *mut c_void);
            if r < 0 {
                return Err(TlsError::HandshakeFailed(format!(
                    "GnuTLS credentials: {}",
                    strerror(r)
                )));
            }
            gnutls_session_set_ptr(s, &mut *self.state as *mut SessionState as *mut c_void);
            gnutls_session_set_verify_function(s, Some(verify_cb));
            let fd = self.tcp.as_raw_fd();
            gnutls_transport_set_int2(s, fd, fd);
            gnutls_handshake_set_timeout(
                s,
                self.profile.io_timeout_ms.min(u32::MAX as u64) as c_uint,
            );
            if self.server {
                let req = if self.profile.require_client_auth {
                    GNUTLS_CERT_REQUIRE
                } else {
                    GNUTLS_CERT_IGNORE
                };
                gnutls_certificate_server_set_request(s, req);
                // No CA names in the CertificateRequest: GnuTLS clients would otherwise withhold a
                // certificate from another CA, and the server could not report it as unknown.
                gnutls_certificate_send_x509_rdn_sequence(s, 1);
                if self.profile.session_resumption {
                    gnutls_db_set_ptr(s, Arc::as_ptr(&self.db) as *mut c_void);
                    gnutls_db_set_store_function(s, Some(db_store));
                    gnutls_db_set_retrieve_function(s, Some(db_retrieve));
                    gnutls_db_set_remove_function(s, Some(db_remove));
                }
                if let Some(k) = &self.ticket_key {
                    if self.profile.effective_num_tickets() > 0
                        || self.profile.versions.iter().any(|v| *v < TlsVersion::Tls13)
                    {
                        let d = gnutls_datum_t {
                            data: k.as_ptr() as *mut u8,
                            size: k.len() as c_uint,
                        };
                        let r = gnutls_session_ticket_enable_server(s, &d);
                        if r < 0 {
                            return Err(TlsError::HandshakeFailed(format!(
                                "GnuTLS tickets: {}",
                                strerror(r)
                            )));
                        }
                    }
                }
            } else if let Some(slot) = &self.client_session {
                if let Some(data) = slot.lock().ok().and_then(|g| g.clone()) {
                    // A stale or foreign session only costs a full handshake.
                    let _ = gnutls_session_set_data(s, data.as_ptr() as *const c_void, data.len());
                }
            }
        }
        Ok(())
    }

    /// Keeps the client's session for the next connection (after tickets may have arrived).
    fn save_session(&mut self) {
        let Some(slot) = &self.client_session else {
            return;
        };
        if !self.done {
            return;
        }
        let mut d = gnutls_datum_t {
            data: std::ptr::null_mut(),
            size: 0,
        };
        // SAFETY: live session; GnuTLS allocates `d.data`, released with gnutls_free.
        unsafe {
            if gnutls_session_get_data2(self.session, &mut d) == 0 && !d.data.is_null() {
                let v = std::slice::from_raw_parts(d.data, d.size as usize).to_vec();
                if let Ok(mut g) = slot.lock() {
                    *g = Some(v);
                }
                if let Some(free) = gnutls_free {
                    free(d.data as *mut c_void);
                }
            }
        }
    }

    /// Maps a failed handshake, sending the alert that describes a local failure.
    fn handshake_error(&mut self, code: c_int) -> TlsError {
        let e = self.classify(code);
        if !self.done {
            super::drain_after_failure(&self.tcp);
        }
        e
    }

    /// Maps `code` and sends the alert for a local failure (the verify callback sends its own).
    fn classify(&mut self, code: c_int) -> TlsError {
        let s = self.session;
        if let Some((e, _)) = self.state.verdict.take() {
            return e;
        }
        let by = Side::Local;
        let detail = strerror(code);
        // SAFETY: live session.
        let proto = unsafe { gnutls_protocol_get_version(s) };
        match code {
            GNUTLS_E_FATAL_ALERT_RECEIVED | GNUTLS_E_INVALID_SESSION => {
                // SAFETY: live session; the name is a static string.
                let (desc, name) = unsafe {
                    let d = gnutls_alert_get(s);
                    let n = gnutls_alert_get_name(d);
                    (
                        d,
                        if n.is_null() {
                            String::new()
                        } else {
                            CStr::from_ptr(n).to_string_lossy().into_owned()
                        },
                    )
                };
                if code == GNUTLS_E_INVALID_SESSION && desc <= 0 {
                    return TlsError::HandshakeFailed(detail);
                }
                from_alert(desc.clamp(0, 255) as u8, Side::Peer, &name)
            }
            // A server whose versions the client does not offer reports "no cipher suites"; the
            // version it recorded from the ClientHello tells the two apart.
            GNUTLS_E_NO_CIPHER_SUITES | GNUTLS_E_UNKNOWN_CIPHER_SUITE
                if self.server && !self.profile.versions.iter().any(|v| proto_of(*v) == proto) =>
            {
                // SAFETY: live session.
                unsafe { gnutls_alert_send(s, GNUTLS_AL_FATAL, alert::PROTOCOL_VERSION as c_int) };
                TlsError::ProtocolVersion {
                    by,
                    detail: format!("{detail}; client offered protocol {proto}"),
                }
            }
            GNUTLS_E_AGAIN | GNUTLS_E_TIMEDOUT => TlsError::Timeout,
            GNUTLS_E_PREMATURE_TERMINATION
            | GNUTLS_E_PUSH_ERROR
            | GNUTLS_E_PULL_ERROR
            | GNUTLS_E_SESSION_EOF => TlsError::Closed,
            _ => {
                // SAFETY: live session.
                unsafe { gnutls_alert_send_appropriate(s, code) };
                match code {
                    GNUTLS_E_UNSUPPORTED_VERSION_PACKET => TlsError::ProtocolVersion { by, detail },
                    GNUTLS_E_UNKNOWN_CIPHER_SUITE
                    | GNUTLS_E_NO_CIPHER_SUITES
                    | GNUTLS_E_INSUFFICIENT_CREDENTIALS
                    | GNUTLS_E_NO_COMMON_KEY_SHARE => TlsError::NoSharedCipher { by, detail },
                    GNUTLS_E_NO_CERTIFICATE_FOUND
                    | GNUTLS_E_CERTIFICATE_REQUIRED
                    | GNUTLS_E_CERTIFICATE_ERROR
                    | GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR => {
                        TlsError::BadCertificate { by, detail }
                    }
                    _ => TlsError::HandshakeFailed(detail),
                }
            }
        }
    }

    /// Whether the profile's I/O timeout has passed since `start` (the socket's own timeout
    /// produces E_AGAIN; an early E_AGAIN is retried).
    fn timed_out(&self, start: std::time::Instant) -> bool {
        start.elapsed()
            >= std::time::Duration::from_millis(self.profile.io_timeout_ms.saturating_sub(5))
    }

    /// The error for a renegotiation this side cannot or will not do.
    fn reneg_unsupported(what: &str) -> TlsError {
        TlsError::Unsupported {
            backend: "gnutls",
            what: what.into(),
        }
    }

    /// RFC 5746: renegotiate only with a peer that sent the renegotiation_info extension (or SCSV).
    fn require_safe_renegotiation(&self) -> Result<(), TlsError> {
        // SAFETY: live session.
        if unsafe { gnutls_safe_renegotiation_status(self.session) } == 0 {
            return Err(Self::reneg_unsupported(
                "renegotiation with a peer without RFC 5746 secure renegotiation",
            ));
        }
        Ok(())
    }

    /// Moves application data GnuTLS buffered during a renegotiation (`GNUTLS_E_GOT_APPLICATION_DATA`)
    /// into `pending`; it is returned by later reads.
    fn keep_application_data(&mut self) -> Result<(), TlsError> {
        let mut tmp = [0u8; 16 * 1024];
        loop {
            // SAFETY: `tmp` is valid for its length; the data is already buffered, so this does not
            // wait for the socket.
            let n = unsafe {
                gnutls_record_recv(self.session, tmp.as_mut_ptr() as *mut c_void, tmp.len())
            };
            if n > 0 {
                self.pending.extend_from_slice(&tmp[..n as usize]);
            } else if n == 0 {
                return Err(TlsError::Closed);
            } else if n != GNUTLS_E_INTERRUPTED as isize {
                return Err(self.classify(n as c_int));
            }
            // SAFETY: live session.
            if unsafe { gnutls_record_check_pending(self.session) } == 0 {
                return Ok(());
            }
        }
    }

    /// Whether the last warning alert was the peer's `no_renegotiation`.
    fn got_no_renegotiation(&self) -> bool {
        // SAFETY: live session.
        unsafe { gnutls_alert_get(self.session) == GNUTLS_A_NO_RENEGOTIATION }
    }

    /// Runs `gnutls_handshake` on an established TLS 1.0-1.2 session until the renegotiation is
    /// complete, then checks the result against the profile as after the first handshake.
    fn run_renegotiation(&mut self) -> Result<(), TlsError> {
        let start = std::time::Instant::now();
        loop {
            // SAFETY: live session with transport set.
            let r = unsafe { gnutls_handshake(self.session) };
            match r {
                GNUTLS_E_SUCCESS => break,
                GNUTLS_E_INTERRUPTED => {}
                GNUTLS_E_AGAIN if !self.timed_out(start) => {}
                // Application data where GnuTLS awaited the peer's hello. GnuTLS then resets the
                // handshake (it reads this as "the peer declined"): a server simply awaits the
                // ClientHello again, but a client that already sent its ClientHello cannot take
                // the ServerHello that follows, so it reports the renegotiation as failed.
                GNUTLS_E_GOT_APPLICATION_DATA => {
                    self.keep_application_data()?;
                    if !self.server {
                        return Err(TlsError::HandshakeFailed(
                            "renegotiation aborted: the server sent application data before its \
                             ServerHello, which GnuTLS clients cannot interleave"
                                .into(),
                        ));
                    }
                }
                GNUTLS_E_WARNING_ALERT_RECEIVED if self.got_no_renegotiation() => {
                    return Err(Self::reneg_unsupported(
                        "renegotiation: the peer answered no_renegotiation",
                    ))
                }
                GNUTLS_E_WARNING_ALERT_RECEIVED => {}
                GNUTLS_E_UNSAFE_RENEGOTIATION_DENIED => {
                    return Err(Self::reneg_unsupported(
                        "renegotiation with a peer without RFC 5746 secure renegotiation",
                    ))
                }
                GNUTLS_E_SESSION_USER_ID_CHANGED => {
                    // SAFETY: live session.
                    unsafe {
                        gnutls_alert_send(
                            self.session,
                            GNUTLS_AL_FATAL,
                            alert::BAD_CERTIFICATE as c_int,
                        )
                    };
                    return Err(TlsError::BadCertificate {
                        by: Side::Local,
                        detail: "the peer changed its certificate during renegotiation".into(),
                    });
                }
                _ => return Err(self.classify(r)),
            }
        }
        self.save_session();
        if let Err(e) = check_negotiated(&self.profile, self) {
            // SAFETY: live session.
            unsafe {
                gnutls_alert_send(
                    self.session,
                    GNUTLS_AL_FATAL,
                    alert::HANDSHAKE_FAILURE as c_int,
                )
            };
            return Err(e);
        }
        Ok(())
    }

    /// This side starts a TLS 1.0-1.2 renegotiation and returns once it is complete.
    fn renegotiate_now(&mut self) -> Result<(), TlsError> {
        self.require_safe_renegotiation()?;
        if !self.server {
            return self.run_renegotiation();
        }
        // SAFETY: live server session.
        let r = unsafe { gnutls_rehandshake(self.session) };
        if r < 0 {
            return Err(self.classify(r));
        }
        // Read until the client's ClientHello arrives, keeping the data it sent before.
        let start = std::time::Instant::now();
        let mut tmp = [0u8; 16 * 1024];
        loop {
            // SAFETY: `tmp` is valid for its length.
            let n = unsafe {
                gnutls_record_recv(self.session, tmp.as_mut_ptr() as *mut c_void, tmp.len())
            };
            match n {
                n if n > 0 => self.pending.extend_from_slice(&tmp[..n as usize]),
                0 => return Err(TlsError::Closed),
                n if n == GNUTLS_E_REHANDSHAKE as isize => break,
                n if n == GNUTLS_E_INTERRUPTED as isize => {}
                n if n == GNUTLS_E_AGAIN as isize && !self.timed_out(start) => {}
                n if n == GNUTLS_E_AGAIN as isize => return Err(TlsError::Timeout),
                n if n == GNUTLS_E_WARNING_ALERT_RECEIVED as isize
                    && self.got_no_renegotiation() =>
                {
                    return Err(Self::reneg_unsupported(
                        "renegotiation: the client answered no_renegotiation",
                    ))
                }
                n if n == GNUTLS_E_WARNING_ALERT_RECEIVED as isize => {}
                n => return Err(self.classify(n as c_int)),
            }
        }
        self.run_renegotiation()
    }

    /// The peer started a renegotiation (a read returned `GNUTLS_E_REHANDSHAKE`).
    fn peer_renegotiation(&mut self) -> Result<(), TlsError> {
        let refuse = |s: &mut Self, what: &str| {
            // SAFETY: live session. A GnuTLS server that has read a ClientHello can only run the
            // handshake or end the session, so the refusal is fatal.
            unsafe { gnutls_alert_send(s.session, GNUTLS_AL_FATAL, GNUTLS_A_NO_RENEGOTIATION) };
            Err(Self::reneg_unsupported(what))
        };
        if self.server && self.profile.renegotiation_interval_s.is_none() {
            return refuse(
                self,
                "client-initiated renegotiation (the server profile sets no renegotiation_interval_s)",
            );
        }
        if self.require_safe_renegotiation().is_err() {
            return refuse(
                self,
                "renegotiation with a peer without RFC 5746 secure renegotiation",
            );
        }
        self.run_renegotiation()
    }

    fn record_error(&mut self, code: isize) -> io::Error {
        let code = code.clamp(c_int::MIN as isize, 0) as c_int;
        self.handshake_error(code).into()
    }
}

impl Read for GnutlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.handshake()?;
        if !self.pending.is_empty() {
            let n = buf.len().min(self.pending.len());
            buf[..n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            return Ok(n);
        }
        let start = std::time::Instant::now();
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes.
            let n = unsafe {
                gnutls_record_recv(self.session, buf.as_mut_ptr() as *mut c_void, buf.len())
            };
            match n {
                n if n >= 0 => return Ok(n as usize),
                n if n == GNUTLS_E_INTERRUPTED as isize => continue,
                // After a post-handshake message (e.g. a TLS 1.3 NewSessionTicket) GnuTLS may
                // return E_AGAIN before the socket timeout has passed: keep reading.
                n if n == GNUTLS_E_AGAIN as isize && !self.timed_out(start) => continue,
                // The peer started a TLS 1.2 renegotiation (our client got a HelloRequest, or our
                // server a ClientHello): run it, then go on reading.
                n if n == GNUTLS_E_REHANDSHAKE as isize => {
                    self.peer_renegotiation()?;
                    if !self.pending.is_empty() {
                        return self.read(buf);
                    }
                }
                n if n == GNUTLS_E_WARNING_ALERT_RECEIVED as isize => continue,
                n if n == GNUTLS_E_PREMATURE_TERMINATION as isize => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "TCP closed without close_notify",
                    ))
                }
                n => return Err(self.record_error(n)),
            }
        }
    }
}

impl Write for GnutlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.handshake()?;
        if buf.is_empty() {
            return Ok(0);
        }
        let start = std::time::Instant::now();
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes.
            let n = unsafe {
                gnutls_record_send(self.session, buf.as_ptr() as *const c_void, buf.len())
            };
            match n {
                n if n >= 0 => return Ok(n as usize),
                n if n == GNUTLS_E_INTERRUPTED as isize => continue,
                n if n == GNUTLS_E_AGAIN as isize && !self.timed_out(start) => continue,
                n => return Err(self.record_error(n)),
            }
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TlsStream for GnutlsStream {
    fn has_buffered_data(&mut self) -> bool {
        // SAFETY: the session is valid for the life of the stream.
        !self.pending.is_empty() || unsafe { gnutls_record_check_pending(self.session) > 0 }
    }
    fn handshake(&mut self) -> Result<(), TlsError> {
        if self.done {
            return Ok(());
        }
        let start = std::time::Instant::now();
        loop {
            // SAFETY: live session with transport set.
            let r = unsafe { gnutls_handshake(self.session) };
            if r == GNUTLS_E_SUCCESS {
                break;
            }
            if r == GNUTLS_E_INTERRUPTED || r == GNUTLS_E_WARNING_ALERT_RECEIVED {
                continue;
            }
            if r == GNUTLS_E_AGAIN && !self.timed_out(start) {
                continue;
            }
            return Err(self.handshake_error(r));
        }
        self.done = true;
        self.save_session();
        if let Err(e) = check_negotiated(&self.profile, self) {
            // SAFETY: live session.
            unsafe {
                gnutls_alert_send(
                    self.session,
                    GNUTLS_AL_FATAL,
                    alert::HANDSHAKE_FAILURE as c_int,
                )
            };
            return Err(e);
        }
        Ok(())
    }
    fn negotiated_version(&self) -> Option<TlsVersion> {
        if !self.done {
            return None;
        }
        // SAFETY: live session.
        match unsafe { gnutls_protocol_get_version(self.session) } {
            GNUTLS_TLS1_0 => Some(TlsVersion::Tls10),
            GNUTLS_TLS1_1 => Some(TlsVersion::Tls11),
            GNUTLS_TLS1_2 => Some(TlsVersion::Tls12),
            GNUTLS_TLS1_3 => Some(TlsVersion::Tls13),
            _ => None,
        }
    }
    fn negotiated_suite(&self) -> Option<&'static CipherSuite> {
        suites::by_code(self.negotiated_suite_code()?)
    }
    fn negotiated_suite_code(&self) -> Option<u16> {
        if !self.done {
            return None;
        }
        // SAFETY: live session; static or session-owned string, copied at once.
        let name = unsafe {
            let p = gnutls_ciphersuite_get(self.session);
            if p.is_null() {
                return None;
            }
            CStr::from_ptr(p).to_string_lossy().into_owned()
        };
        // gnutls_ciphersuite_get returns the IANA (RFC) name; older names are GnuTLS's own.
        suites::lookup(&name)
            .map(|s| s.code)
            .or_else(|| gnutls_names().get(&name).copied())
    }
    fn peer_certificate(&self) -> Option<Vec<u8>> {
        let mut n: c_uint = 0;
        // SAFETY: the list belongs to the live session and is copied at once.
        unsafe {
            let list = gnutls_certificate_get_peers(self.session, &mut n);
            if list.is_null() || n == 0 || (*list).data.is_null() {
                return None;
            }
            Some(std::slice::from_raw_parts((*list).data, (*list).size as usize).to_vec())
        }
    }
    fn session_resumed(&self) -> bool {
        // SAFETY: live session.
        self.done && unsafe { gnutls_session_is_resumed(self.session) } != 0
    }
    fn rekey(&mut self) -> Result<(), TlsError> {
        self.handshake()?;
        if self.negotiated_version() != Some(TlsVersion::Tls13) {
            return self.renegotiate_now();
        }
        // SAFETY: live session.
        let r = unsafe { gnutls_session_key_update(self.session, GNUTLS_KU_PEER) };
        if r < 0 {
            return Err(self.handshake_error(r));
        }
        Ok(())
    }
    fn shutdown(&mut self) -> Result<(), TlsError> {
        self.save_session();
        if !self.done {
            return Ok(());
        }
        // SAFETY: live session.
        let r = unsafe { gnutls_bye(self.session, GNUTLS_SHUT_WR) };
        if r < 0 && r != GNUTLS_E_PUSH_ERROR && r != GNUTLS_E_AGAIN {
            return Err(TlsError::HandshakeFailed(strerror(r)));
        }
        Ok(())
    }
    fn tcp(&self) -> &TcpStream {
        &self.tcp
    }
}
