//! OpenSSL backend (the system library through the `openssl` crate).
//!
//! TLS 1.0/1.1 and SHA-1 or RSA-1024 material need `@SECLEVEL=0` on Debian (whose default is level 2):
//! the security level is 0 when the profile allows a version below 1.2, else 1 (RSA >= 1024 bits).
//! Debian's OpenSSL 3.0 is built without `enable-weak-ssl-ciphers`, so it has no 3DES suites.
use super::{
    check_negotiated, files, set_timeouts, BackendKind, Capabilities, TlsBackend, TlsStream,
};
use crate::error::{from_alert, Side};
use crate::suites::{self, CipherSuite};
use crate::{KxGroup, TlsError, TlsProfile, TlsVersion};
use openssl::ssl::{
    ErrorCode, ShutdownState, SslContext, SslContextBuilder, SslFiletype, SslMethod, SslOptions,
    SslRef, SslSession, SslSessionCacheMode, SslStream, SslVerifyMode, SslVersion,
};
use openssl::x509::store::X509StoreBuilderRef;
use openssl::x509::verify::X509VerifyFlags;
use openssl::x509::X509VerifyResult;
use openssl_sys as ffi;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::raw::{c_char, c_int, c_long};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

extern "C" {
    fn SSL_get_ciphers(ssl: *const ffi::SSL) -> *mut ffi::stack_st_SSL_CIPHER;
    fn SSL_get1_supported_ciphers(ssl: *mut ffi::SSL) -> *mut ffi::stack_st_SSL_CIPHER;
    fn SSL_CIPHER_get_name(c: *const ffi::SSL_CIPHER) -> *const c_char;
    fn SSL_key_update(ssl: *mut ffi::SSL, updatetype: c_int) -> c_int;
    fn SSL_renegotiate(ssl: *mut ffi::SSL) -> c_int;
    fn X509_STORE_add_crl(store: *mut ffi::X509_STORE, crl: *mut ffi::X509_CRL) -> c_int;
    fn SSL_get_peer_signature_type_nid(ssl: *const ffi::SSL, pnid: *mut c_int) -> c_int;
    fn SSL_SESSION_has_ticket(s: *const ffi::SSL_SESSION) -> c_int;
    fn SSL_get_client_CA_list(ssl: *const ffi::SSL) -> *mut ffi::stack_st_X509_NAME;
    fn SSL_group_to_name(ssl: *mut ffi::SSL, id: c_int) -> *const c_char;
    fn EVP_PKEY_get_group_name(
        pkey: *const ffi::EVP_PKEY,
        name: *mut c_char,
        name_sz: usize,
        gname_len: *mut usize,
    ) -> c_int;
}

/// `SSL_CTRL_GET_RI_SUPPORT` (`SSL_get_secure_renegotiation_support` is a macro over `SSL_ctrl`).
const SSL_CTRL_GET_RI_SUPPORT: c_int = 76;
/// `SSL_CTRL_GET_PEER_SIGNATURE_NID` (`SSL_get_peer_signature_nid`, a macro over `SSL_ctrl`).
const SSL_CTRL_GET_PEER_SIGNATURE_NID: c_int = 108;

/// The IANA signature-scheme name (RFC 8446 §4.2.3) of OpenSSL's (key type, digest) NIDs for
/// the peer's handshake signature. `rsassaPss` with an RSA key is reported as `rsa_pss_rsae_*`
/// (OpenSSL gives the same type NID for the `rsae` and `pss` variants); ECDSA in TLS 1.2 is not
/// bound to a curve, so the name is the TLS 1.3 one for that hash.
fn sig_scheme_name(type_nid: c_int, md_nid: c_int) -> Option<String> {
    // obj_mac.h: rsaEncryption 6, rsassaPss 912, X9_62_id_ecPublicKey 408, ED25519 1087,
    // ED448 1088; sha1 64, sha256 672, sha384 673, sha512 674.
    let hash = match md_nid {
        64 => "sha1",
        672 => "sha256",
        673 => "sha384",
        674 => "sha512",
        _ => "",
    };
    Some(match (type_nid, hash) {
        (1087, _) => "ed25519".into(),
        (1088, _) => "ed448".into(),
        (6, h) if !h.is_empty() => format!("rsa_pkcs1_{h}"),
        (912, h) if !h.is_empty() => format!("rsa_pss_rsae_{h}"),
        (408, "sha1") => "ecdsa_sha1".into(),
        (408, "sha256") => "ecdsa_secp256r1_sha256".into(),
        (408, "sha384") => "ecdsa_secp384r1_sha384".into(),
        (408, "sha512") => "ecdsa_secp521r1_sha512".into(),
        _ => return None,
    })
}

const TLS13_ALL: &str =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256";
/// `SSL_OP_ALLOW_CLIENT_RENEGOTIATION` (OpenSSL 3.0: off by default).
const OP_ALLOW_CLIENT_RENEGOTIATION: u64 = 1 << 8;
const SSL_KEY_UPDATE_REQUESTED: c_int = 1;

const SSL_CTRL_BUILD_CERT_CHAIN: c_int = 105;
const SSL_BUILD_CHAIN_FLAG_NO_ROOT: c_long = 0x2;
const SSL_BUILD_CHAIN_FLAG_IGNORE_ERROR: c_long = 0x8;
const SSL_BUILD_CHAIN_FLAG_CLEAR_ERROR: c_long = 0x10;

fn ssl_version(v: TlsVersion) -> SslVersion {
    match v {
        TlsVersion::Tls10 => SslVersion::TLS1,
        TlsVersion::Tls11 => SslVersion::TLS1_1,
        TlsVersion::Tls12 => SslVersion::TLS1_2,
        TlsVersion::Tls13 => SslVersion::TLS1_3,
    }
}

/// Reads a cipher stack into (code, OpenSSL name) pairs.
///
/// # Safety
/// `sk` must be a valid `STACK_OF(SSL_CIPHER)` or null.
unsafe fn read_stack(sk: *mut ffi::stack_st_SSL_CIPHER) -> Vec<(u16, String)> {
    let mut out = Vec::new();
    if sk.is_null() {
        return out;
    }
    // SAFETY: `sk` is a valid, non-null cipher stack (the caller's contract).
    let n = unsafe { ffi::OPENSSL_sk_num(sk as *const ffi::OPENSSL_STACK) };
    for i in 0..n.max(0) {
        // SAFETY: `i` is within 0..n, the stack's length.
        let c = unsafe { ffi::OPENSSL_sk_value(sk as *const ffi::OPENSSL_STACK, i) }
            as *const ffi::SSL_CIPHER;
        if c.is_null() {
            continue;
        }
        // SAFETY: `c` is a non-null SSL_CIPHER owned by the stack, alive for this call.
        let code = unsafe { ffi::SSL_CIPHER_get_protocol_id(c) };
        // SAFETY: as above; the name is a static string inside OpenSSL.
        let name = unsafe { SSL_CIPHER_get_name(c) };
        if name.is_null() {
            continue;
        }
        // SAFETY: a non-null, NUL-terminated string OpenSSL keeps for the process's life.
        let name = unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        out.push((code, name));
    }
    out
}

fn everything_ctx(v: Option<TlsVersion>) -> Option<SslContext> {
    let mut b = SslContextBuilder::new(SslMethod::tls()).ok()?;
    b.set_security_level(0);
    b.set_cipher_list("ALL:COMPLEMENTOFALL:@SECLEVEL=0").ok()?;
    b.set_ciphersuites(TLS13_ALL).ok()?;
    if let Some(v) = v {
        b.set_min_proto_version(Some(ssl_version(v))).ok()?;
        b.set_max_proto_version(Some(ssl_version(v))).ok()?;
    }
    Some(b.build())
}

/// Code point -> OpenSSL cipher name, for every suite this OpenSSL has compiled in.
fn names() -> &'static HashMap<u16, String> {
    static N: OnceLock<HashMap<u16, String>> = OnceLock::new();
    N.get_or_init(|| {
        let Some(ctx) = everything_ctx(None) else {
            return HashMap::new();
        };
        let Ok(ssl) = openssl::ssl::Ssl::new(&ctx) else {
            return HashMap::new();
        };
        // SAFETY: the stack belongs to `ssl`, which outlives the call.
        unsafe { read_stack(SSL_get_ciphers(foreign(&ssl))) }
            .into_iter()
            .collect()
    })
}

fn foreign(ssl: &SslRef) -> *mut ffi::SSL {
    use foreign_types::ForeignTypeRef;
    ssl.as_ptr()
}

pub(crate) fn capabilities() -> Capabilities {
    let mut versions = Vec::new();
    for v in TlsVersion::ALL {
        let usable = everything_ctx(Some(v))
            .and_then(|ctx| openssl::ssl::Ssl::new(&ctx).ok())
            .map(|mut ssl| {
                ssl.set_connect_state();
                // SAFETY: the returned stack is owned by us and freed here (not its ciphers).
                unsafe {
                    let sk = SSL_get1_supported_ciphers(foreign(&ssl));
                    let n = read_stack(sk).len();
                    if !sk.is_null() {
                        ffi::OPENSSL_sk_free(sk as *mut ffi::OPENSSL_STACK);
                    }
                    n > 0
                }
            })
            .unwrap_or(false);
        if usable {
            versions.push(v);
        }
    }
    let n = names();
    // A group or scheme is there when the library accepts a list naming it alone.
    let groups = KxGroup::ALL
        .into_iter()
        .filter(|g| {
            SslContextBuilder::new(SslMethod::tls())
                .is_ok_and(|mut b| b.set_groups_list(g.openssl_name()).is_ok())
        })
        .collect();
    let signature_schemes = crate::sigscheme::SCHEMES
        .iter()
        .filter(|s| {
            SslContextBuilder::new(SslMethod::tls())
                .is_ok_and(|mut b| b.set_sigalgs_list(s.openssl).is_ok())
        })
        .map(|s| s.name.to_string())
        .collect();
    Capabilities {
        library: openssl::version::version().to_string(),
        versions,
        suites: suites::CATALOGUE
            .iter()
            .map(|s| s.code)
            .filter(|c| n.contains_key(c))
            .collect(),
        renegotiation: true,
        key_update: true,
        groups,
        signature_schemes,
        in_process: true,
    }
}

/// `SSL_CTRL_GET_NEGOTIATED_GROUP` (`SSL_get_negotiated_group` is a macro over `SSL_ctrl`).
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;
/// OpenSSL marks a group without a NID as `TLSEXT_nid_unknown | code point`.
const TLSEXT_NID_UNKNOWN: c_long = 0x0100_0000;

/// The OpenSSL backend.
pub struct OpensslBackend {
    profile: TlsProfile,
    quirks: SurveyQuirks,
    ctx: SslContext,
    pin: Option<Arc<Vec<u8>>>,
    session: Arc<Mutex<Option<SslSession>>>,
}

fn stack_err(what: &str, e: impl std::fmt::Display) -> TlsError {
    TlsError::HandshakeFailed(format!("OpenSSL {what}: {e}"))
}

/// What a survey's client does differently from gander's own clients, to *observe* a server
/// that a careful client would refuse (`docs/tls-survey.md`). All off by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SurveyQuirks {
    /// `SSL_OP_LEGACY_SERVER_CONNECT`: connect to a server that does not signal RFC 5746
    /// (OpenSSL 3 refuses it by default, "unsafe legacy renegotiation disabled"), so that the
    /// missing signal can be reported instead of ending the survey (RFC 5746 §4.1 lets a client
    /// go on).
    pub legacy_server_connect: bool,
    /// `SSL_OP_ALLOW_UNSAFE_LEGACY_RENEGOTIATION`: renegotiate with such a server, to find out
    /// whether it accepts an insecure renegotiation (the attack RFC 5746 §1 closes).
    pub unsafe_legacy_renegotiation: bool,
    /// Verify nothing of the server's chain (`SSL_VERIFY_NONE`): after the survey has recorded
    /// that the chain fails (expired, unknown CA), the later probes still run.
    pub no_server_verification: bool,
    /// Send no server_name (SNI) but still check the certificate against the profile's
    /// `server_name` when `verify_hostname` is set: the server refused the name with
    /// unrecognized_name (RFC 6066 §3), and the survey goes on without it.
    pub no_sni: bool,
}

impl OpensslBackend {
    /// Builds the client and server contexts of `profile`.
    pub fn new(profile: &TlsProfile) -> Result<Self, TlsError> {
        Self::with_quirks(profile, SurveyQuirks::default())
    }

    /// As [`OpensslBackend::new`], with a survey client's [`SurveyQuirks`].
    pub fn with_quirks(profile: &TlsProfile, quirks: SurveyQuirks) -> Result<Self, TlsError> {
        let (min, max) = profile.version_range()?;
        let suites = profile.suites()?;
        let n = names();
        let level = if min < TlsVersion::Tls12 { 0 } else { 1 };
        let mut b =
            SslContextBuilder::new(SslMethod::tls()).map_err(|e| stack_err("context", e))?;
        b.set_min_proto_version(Some(ssl_version(min)))
            .map_err(|e| stack_err("min version", e))?;
        b.set_max_proto_version(Some(ssl_version(max)))
            .map_err(|e| stack_err("max version", e))?;
        let lookup = |s: &CipherSuite| {
            n.get(&s.code).cloned().ok_or(TlsError::Unsupported {
                backend: "openssl",
                what: s.name.to_string(),
            })
        };
        let legacy: Vec<String> = suites
            .iter()
            .filter(|s| !s.is_tls13())
            .map(|s| lookup(s))
            .collect::<Result<_, _>>()?;
        let modern: Vec<String> = suites
            .iter()
            .filter(|s| s.is_tls13())
            .map(|s| lookup(s))
            .collect::<Result<_, _>>()?;
        let list = if legacy.is_empty() {
            "DEFAULT".to_string()
        } else {
            legacy.join(":")
        };
        b.set_cipher_list(&format!("{list}:@SECLEVEL={level}"))
            .map_err(|e| stack_err("cipher list", e))?;
        if !modern.is_empty() {
            b.set_ciphersuites(&modern.join(":"))
                .map_err(|e| stack_err("TLS 1.3 suites", e))?;
        }
        b.set_security_level(level);
        if !profile.groups.is_empty() {
            let list: Vec<&str> = profile.groups.iter().map(|g| g.openssl_name()).collect();
            b.set_groups_list(&list.join(":"))
                .map_err(|e| stack_err("groups", e))?;
        }
        // DHE suites need server DH parameters: let OpenSSL pick a group matching the key size.
        // SAFETY: plain ctrl call on a live context.
        unsafe {
            ffi::SSL_CTX_set_dh_auto(b.as_ptr(), 1);
        }
        if let (Some(cert), Some(key)) = (&profile.cert, &profile.key) {
            files::certs("cert", cert)?; // readable, parseable: a clear error before OpenSSL's
            b.set_certificate_chain_file(cert)
                .map_err(|e| stack_err("certificate", e))?;
            b.set_private_key_file(key, SslFiletype::PEM)
                .or_else(|_| b.set_private_key_file(key, SslFiletype::ASN1))
                .map_err(|e| stack_err("private key", e))?;
            b.check_private_key()
                .map_err(|e| stack_err("key does not match certificate", e))?;
        }
        {
            let store: &mut X509StoreBuilderRef = b.cert_store_mut();
            for p in &profile.ca {
                for c in files::certs("ca", p)? {
                    store.add_cert(c).map_err(|e| stack_err("CA", e))?;
                }
            }
            let mut any_crl = false;
            for p in &profile.crl {
                for crl in files::crls(p)? {
                    use foreign_types::{ForeignType, ForeignTypeRef};
                    // SAFETY: X509_STORE_add_crl takes its own reference; `crl` is dropped after.
                    let ok = unsafe { X509_STORE_add_crl(store.as_ptr(), crl.as_ptr()) };
                    if ok != 1 {
                        return Err(stack_err("CRL", openssl::error::ErrorStack::get()));
                    }
                    any_crl = true;
                }
            }
            if any_crl {
                // RFC 5280 §6.3: check the leaf against its issuer's CRL.
                store
                    .set_flags(X509VerifyFlags::CRL_CHECK)
                    .map_err(|e| stack_err("CRL flags", e))?;
            }
        }
        if profile.cert.is_some() {
            // Build our own chain once, here, from the certificate file and the trust store, and
            // leave the self-signed root out (RFC 5246 §7.4.2: the peer must already have it).
            // OpenSSL's default instead rebuilds it with X509_verify_cert in every handshake and
            // sends the root too, which the peer then decodes: about 0.3 ms of a 1.1 ms RSA-2048
            // mutual handshake on OpenSSL 3.0 (docs/reproduction.md, "Where HT goes"). Errors are
            // ignored as the per-handshake build ignores them: the peer judges the chain.
            // SAFETY: SSL_CTX_build_cert_chain is a ctrl call on a live context.
            unsafe {
                ffi::SSL_CTX_ctrl(
                    b.as_ptr(),
                    SSL_CTRL_BUILD_CERT_CHAIN,
                    SSL_BUILD_CHAIN_FLAG_NO_ROOT
                        | SSL_BUILD_CHAIN_FLAG_IGNORE_ERROR
                        | SSL_BUILD_CHAIN_FLAG_CLEAR_ERROR,
                    std::ptr::null_mut(),
                );
            }
        }
        let session = Arc::new(Mutex::new(None::<SslSession>));
        b.set_session_id_context(b"gander-iec62351")
            .map_err(|e| stack_err("session id context", e))?;
        let mut opts = SslOptions::empty();
        if profile.session_resumption {
            b.set_session_cache_mode(SslSessionCacheMode::SERVER | SslSessionCacheMode::CLIENT);
            let slot = session.clone();
            b.set_new_session_callback(move |_, s| {
                if let Ok(mut g) = slot.lock() {
                    *g = Some(s);
                }
            });
        } else {
            b.set_session_cache_mode(SslSessionCacheMode::OFF);
        }
        if !(profile.session_resumption && profile.session_tickets) {
            opts |= SslOptions::NO_TICKET;
        }
        if profile.renegotiation_interval_s.is_some() {
            opts |= SslOptions::from_bits_retain(OP_ALLOW_CLIENT_RENEGOTIATION as _);
        }
        if quirks.legacy_server_connect {
            opts |= SslOptions::from_bits_retain(ffi::SSL_OP_LEGACY_SERVER_CONNECT as _);
        }
        if quirks.unsafe_legacy_renegotiation {
            opts |= SslOptions::ALLOW_UNSAFE_LEGACY_RENEGOTIATION;
        }
        b.set_options(opts);
        b.set_num_tickets(profile.effective_num_tickets() as usize)
            .map_err(|e| stack_err("num_tickets", e))?;
        if let Some(log) = crate::keylog::open_for(profile)? {
            // SSL_CTX_set_keylog_callback (OpenSSL >= 1.1.1) hands each secret as a finished
            // NSS key log line, for both roles of every connection of this context.
            b.set_keylog_callback(move |_, line| log.log_line(line));
        }
        // Read-ahead: OpenSSL's socket BIO then fills its read buffer with whatever the kernel
        // holds, so one record costs one recv. Without it OpenSSL reads each record's 5-octet
        // header (RFC 5246 §6.2.1) and then its body, two system calls per MMS report (seen with
        // strace on a `gander run` client; measured in docs/measurement.md, "RT accounting").
        // Octets read ahead are in SSL_has_pending, which `has_buffered_data` reports.
        b.set_read_ahead(true);
        let pin = match &profile.peer_cert {
            Some(p) => Some(Arc::new(files::cert_der("peer_cert", p)?)),
            None => None,
        };
        Ok(OpensslBackend {
            profile: profile.clone(),
            quirks,
            ctx: b.build(),
            pin,
            session,
        })
    }

    fn wrap(&self, tcp: TcpStream, server: bool) -> Result<Box<dyn TlsStream>, TlsError> {
        set_timeouts(&tcp, &self.profile)?;
        let mut ssl = openssl::ssl::Ssl::new(&self.ctx).map_err(|e| stack_err("new", e))?;
        let pin_failed = Arc::new(AtomicBool::new(false));
        let mode = if !server && self.quirks.no_server_verification {
            SslVerifyMode::NONE
        } else if !server {
            SslVerifyMode::PEER
        } else if self.profile.require_client_auth {
            SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT
        } else {
            SslVerifyMode::NONE
        };
        let pin = self.pin.clone();
        let flag = pin_failed.clone();
        ssl.set_verify_callback(mode, move |ok, ctx| {
            if !ok || ctx.error_depth() != 0 {
                return ok;
            }
            let Some(pin) = &pin else { return true };
            let same = ctx
                .current_cert()
                .and_then(|c| c.to_der().ok())
                .is_some_and(|d| d == **pin);
            if !same {
                flag.store(true, Ordering::SeqCst);
                // X509_V_ERR_CERT_REJECTED: OpenSSL answers with a bad_certificate alert.
                // SAFETY: 28 is a valid X509_V_ERR code.
                ctx.set_error(unsafe { X509VerifyResult::from_raw(28) });
            }
            same
        });
        if !server {
            if let Some(name) = &self.profile.server_name {
                if name.parse::<std::net::IpAddr>().is_err() && !self.quirks.no_sni {
                    ssl.set_hostname(name).map_err(|e| stack_err("SNI", e))?;
                }
                if self.profile.verify_hostname {
                    let param = ssl.param_mut();
                    match name.parse::<std::net::IpAddr>() {
                        Ok(ip) => param.set_ip(ip),
                        Err(_) => param.set_host(name),
                    }
                    .map_err(|e| stack_err("hostname check", e))?;
                }
            }
            if self.profile.session_resumption {
                if let Some(s) = self.session.lock().ok().and_then(|g| g.clone()) {
                    // SAFETY: the session comes from this same context.
                    unsafe { ssl.set_session(&s) }.map_err(|e| stack_err("set session", e))?;
                }
            }
        }
        let stream = SslStream::new(ssl, tcp).map_err(|e| stack_err("stream", e))?;
        Ok(Box::new(OpensslStream {
            s: stream,
            server,
            done: false,
            pin_failed,
            profile: self.profile.clone(),
            failed: false,
        }))
    }
}

impl TlsBackend for OpensslBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Openssl
    }
    fn profile(&self) -> &TlsProfile {
        &self.profile
    }
    fn client(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        self.wrap(tcp, false)
    }
    fn server(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        if self.profile.cert.is_none() || self.profile.key.is_none() {
            return Err(crate::profile::ProfileError::Missing("cert").into());
        }
        self.wrap(tcp, true)
    }
}

struct OpensslStream {
    s: SslStream<TcpStream>,
    server: bool,
    done: bool,
    pin_failed: Arc<AtomicBool>,
    profile: TlsProfile,
    /// A fatal error occurred: the session must not be resumed (RFC 5246 §7.2.2).
    failed: bool,
}

impl Drop for OpensslStream {
    fn drop(&mut self) {
        // OpenSSL drops a session from its cache when the connection ends without close_notify
        // in both directions. A peer that just closes TCP after a clean exchange (common in IEC 61850
        // stacks) should still be resumable; a connection that failed must not be.
        if self.done && !self.failed {
            self.s
                .set_shutdown(ShutdownState::SENT | ShutdownState::RECEIVED);
        }
    }
}

/// Library reason code of a packed OpenSSL 3 error (`ERR_GET_REASON`).
fn reason(code: u64) -> u64 {
    code & 0x7F_FFFF
}

fn map_verify(vr: X509VerifyResult) -> Option<TlsError> {
    if vr == X509VerifyResult::OK {
        return None;
    }
    let detail = format!("{} (X509_V_ERR {})", vr.error_string(), vr.as_raw());
    let by = Side::Local;
    Some(match vr.as_raw() {
        9 | 10 => TlsError::Expired { by, detail },
        23 => TlsError::Revoked { by, detail },
        2 | 18 | 19 | 20 | 21 => TlsError::UnknownCa { by, detail },
        28 => TlsError::PinMismatch,
        _ => TlsError::BadCertificate { by, detail },
    })
}

/// Maps an OpenSSL error to a [`TlsError`], local verification first, then the error queue.
/// `verifying`: whether this end judges the peer's chain; with `SSL_VERIFY_NONE` OpenSSL still
/// records the chain's verify result, which then explains no failure.
fn map_error(e: &openssl::ssl::Error, ssl: &SslRef, pin_failed: bool, verifying: bool) -> TlsError {
    if pin_failed && verifying {
        return TlsError::PinMismatch;
    }
    if let Some(err) = map_verify(ssl.verify_result()).filter(|_| verifying) {
        return err;
    }
    if let Some(io) = e.io_error() {
        return match io.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => TlsError::Timeout,
            _ => TlsError::from(io::Error::new(io.kind(), io.to_string())),
        };
    }
    if let Some(stack) = e.ssl_error() {
        for err in stack.errors() {
            #[allow(clippy::unnecessary_cast)] // c_ulong is u32 on some targets
            let r = reason(err.code() as u64);
            let text = err.reason().unwrap_or("?").to_string();
            let by = Side::Local;
            match r {
                1000..=1255 => return from_alert((r - 1000) as u8, Side::Peer, &text),
                193 | 181 | 410 | 295 => return TlsError::NoSharedCipher { by, detail: text },
                258 | 259 | 191 | 267 | 396 | 166 | 373 => {
                    return TlsError::ProtocolVersion { by, detail: text }
                }
                199 => return TlsError::BadCertificate { by, detail: text },
                294 => return TlsError::Closed,
                _ => {}
            }
        }
        return TlsError::HandshakeFailed(stack.to_string());
    }
    match e.code() {
        ErrorCode::ZERO_RETURN | ErrorCode::SYSCALL => TlsError::Closed,
        ErrorCode::WANT_READ | ErrorCode::WANT_WRITE => TlsError::Timeout,
        _ => TlsError::HandshakeFailed(e.to_string()),
    }
}

impl OpensslStream {
    fn err(&mut self, e: &openssl::ssl::Error) -> TlsError {
        self.failed = true;
        let verifying = self.s.ssl().verify_mode() != SslVerifyMode::NONE;
        map_error(
            e,
            self.s.ssl(),
            self.pin_failed.load(Ordering::SeqCst),
            verifying,
        )
    }
}

impl Read for OpensslStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.done {
            self.handshake()?;
        }
        match self.s.ssl_read(buf) {
            Ok(n) => Ok(n),
            Err(e) if e.code() == ErrorCode::ZERO_RETURN => Ok(0),
            Err(e) if e.code() == ErrorCode::SYSCALL && e.io_error().is_none() => Ok(0),
            Err(e) => Err(self.err(&e).into()),
        }
    }
}

impl Write for OpensslStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.done {
            self.handshake()?;
        }
        match self.s.ssl_write(buf) {
            Ok(n) => Ok(n),
            Err(e) => Err(self.err(&e).into()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        self.s.get_mut().flush()
    }
}

extern "C" {
    // OpenSSL >= 1.1.0; not bound by openssl-sys.
    fn SSL_has_pending(ssl: *const openssl_sys::SSL) -> std::os::raw::c_int;
}

impl TlsStream for OpensslStream {
    fn has_buffered_data(&mut self) -> bool {
        // SSL_has_pending: processed plaintext or unprocessed record bytes in OpenSSL's buffers.
        use foreign_types::ForeignTypeRef;
        self.s.ssl().pending() > 0
            // SAFETY: the SSL pointer is valid for the life of the stream.
            || unsafe { SSL_has_pending(self.s.ssl().as_ptr()) == 1 }
    }
    fn handshake_step(&mut self) -> Result<bool, TlsError> {
        if self.done {
            return Ok(true);
        }
        let r = if self.server {
            self.s.accept()
        } else {
            self.s.connect()
        };
        match r {
            Err(e) if e.code() == ErrorCode::WANT_READ || e.code() == ErrorCode::WANT_WRITE => {
                Ok(false)
            }
            Err(e) => Err(self.err(&e)),
            Ok(()) => {
                self.done = true;
                let r = check_negotiated(&self.profile, self);
                self.failed = r.is_err();
                r.map(|()| true)
            }
        }
    }
    fn handshake(&mut self) -> Result<(), TlsError> {
        if self.done {
            return Ok(());
        }
        let r = if self.server {
            self.s.accept()
        } else {
            self.s.connect()
        };
        if let Err(e) = r {
            let err = self.err(&e);
            // The drain lets *our* fatal alert reach the peer; after the peer's own alert there
            // is none to deliver, and waiting for a peer that keeps the connection open (as
            // gnutls-serv does) would cost up to the drain's 300 ms per refused handshake.
            if !err.from_peer_alert() {
                super::drain_after_failure(self.s.get_ref());
            }
            return Err(err);
        }
        self.done = true;
        let r = check_negotiated(&self.profile, self);
        self.failed = r.is_err();
        r
    }
    fn negotiated_version(&self) -> Option<TlsVersion> {
        if !self.done {
            return None;
        }
        match self.s.ssl().version2()? {
            SslVersion::TLS1 => Some(TlsVersion::Tls10),
            SslVersion::TLS1_1 => Some(TlsVersion::Tls11),
            SslVersion::TLS1_2 => Some(TlsVersion::Tls12),
            SslVersion::TLS1_3 => Some(TlsVersion::Tls13),
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
        let id = self.s.ssl().current_cipher()?.protocol_id();
        Some(u16::from_be_bytes(id))
    }
    fn peer_certificate(&self) -> Option<Vec<u8>> {
        self.s.ssl().peer_certificate()?.to_der().ok()
    }
    fn session_resumed(&self) -> bool {
        self.done && self.s.ssl().session_reused()
    }
    fn peer_chain(&self) -> Vec<Vec<u8>> {
        // On the client the stack holds the leaf too (SSL_get_peer_cert_chain(3)); on the server
        // it does not, so the leaf is put first there.
        let mut out: Vec<Vec<u8>> = Vec::new();
        if self.server {
            out.extend(self.peer_certificate());
        }
        if let Some(st) = self.s.ssl().peer_cert_chain() {
            out.extend(st.iter().filter_map(|c| c.to_der().ok()));
        }
        out
    }
    fn server_hello(&self) -> Option<(TlsVersion, u16)> {
        // OpenSSL records the version and the session's cipher when it processes the
        // ServerHello (client side), before the certificate checks that may fail later.
        if self.server {
            return Some((self.negotiated_version()?, self.negotiated_suite_code()?));
        }
        let v = match self.s.ssl().version2()? {
            SslVersion::TLS1 => TlsVersion::Tls10,
            SslVersion::TLS1_1 => TlsVersion::Tls11,
            SslVersion::TLS1_2 => TlsVersion::Tls12,
            SslVersion::TLS1_3 => TlsVersion::Tls13,
            _ => return None,
        };
        let id = self.s.ssl().current_cipher()?.protocol_id();
        Some((v, u16::from_be_bytes(id)))
    }
    fn peer_signature_scheme(&self) -> Option<String> {
        if !self.done {
            return None;
        }
        let ssl = foreign(self.s.ssl());
        let (mut ty, mut md): (c_int, c_int) = (0, 0);
        // SAFETY: `ssl` is the live connection owned by `self.s`; `ty` is a writable int.
        let ok = unsafe { SSL_get_peer_signature_type_nid(ssl, &mut ty) };
        // SAFETY: as above; the ctrl call writes one int through the pointer.
        let ok2 = unsafe {
            ffi::SSL_ctrl(
                ssl,
                SSL_CTRL_GET_PEER_SIGNATURE_NID,
                0,
                (&mut md as *mut c_int).cast(),
            )
        };
        if ok != 1 || ok2 != 1 {
            return None;
        }
        sig_scheme_name(ty, md)
    }
    fn secure_renegotiation(&self) -> Option<bool> {
        // Known from the ServerHello on (RFC 5746 §3.4), also when the handshake failed later.
        if matches!(self.server_hello(), None | Some((TlsVersion::Tls13, _))) {
            return None;
        }
        // SAFETY: a ctrl query on the live connection owned by `self.s`.
        let v = unsafe {
            ffi::SSL_ctrl(
                foreign(self.s.ssl()),
                SSL_CTRL_GET_RI_SUPPORT,
                0,
                std::ptr::null_mut(),
            )
        };
        Some(v == 1)
    }
    fn session_ticket_received(&self) -> Option<bool> {
        use foreign_types::ForeignTypeRef;
        let sess = self.s.ssl().session()?;
        // SAFETY: `sess` is the live session of this connection, borrowed for the call.
        Some(unsafe { SSL_SESSION_has_ticket(sess.as_ptr()) } == 1)
    }
    fn negotiated_group(&self) -> Option<KxGroup> {
        if !self.done {
            return None;
        }
        // SAFETY: a ctrl query on the live connection owned by `self.s`.
        let v = unsafe {
            ffi::SSL_ctrl(
                foreign(self.s.ssl()),
                SSL_CTRL_GET_NEGOTIATED_GROUP,
                0,
                std::ptr::null_mut(),
            )
        };
        if v & TLSEXT_NID_UNKNOWN != 0 {
            return KxGroup::from_code((v & 0xFFFF) as u16);
        }
        // NID_X25519 (1034) and NID_X9_62_prime256v1 (415), obj_mac.h.
        match v {
            1034 => Some(KxGroup::X25519),
            415 => Some(KxGroup::Secp256r1),
            _ => None,
        }
    }
    fn negotiated_group_name(&self) -> Option<String> {
        if !self.done {
            return None;
        }
        let ssl = foreign(self.s.ssl());
        // SAFETY: a ctrl query on the live connection owned by `self.s`.
        let v =
            unsafe { ffi::SSL_ctrl(ssl, SSL_CTRL_GET_NEGOTIATED_GROUP, 0, std::ptr::null_mut()) };
        if v & TLSEXT_NID_UNKNOWN != 0 {
            let code = (v & 0xFFFF) as u16;
            return Some(
                crate::named_group::name(code)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("0x{code:04X}")),
            );
        }
        if v > 0 {
            if let Some(n) = crate::named_group::by_openssl_nid(v as i32) {
                return Some(n.to_string());
            }
            // A group this table lacks: OpenSSL's own name for it.
            // SAFETY: `ssl` is live; the returned string is static inside OpenSSL or null.
            let p = unsafe { SSL_group_to_name(ssl, v as c_int) };
            if !p.is_null() {
                // SAFETY: a non-null, NUL-terminated string OpenSSL keeps.
                return Some(
                    unsafe { std::ffi::CStr::from_ptr(p) }
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
        // TLS 1.2 finite-field DHE carries the server's parameters, not a group code (RFC 5246
        // §7.4.3; RFC 7919 names them where they match): name them from the server's key.
        let key = self.s.ssl().peer_tmp_key().ok()?;
        if key.id() != openssl::pkey::Id::DH {
            return None;
        }
        let mut buf = [0 as c_char; 64];
        let mut len = 0usize;
        use foreign_types::ForeignTypeRef;
        // SAFETY: `key` is a live EVP_PKEY; `buf` is writable for its length.
        let ok =
            unsafe { EVP_PKEY_get_group_name(key.as_ptr(), buf.as_mut_ptr(), buf.len(), &mut len) };
        if ok == 1 && len > 0 && len < buf.len() {
            // SAFETY: OpenSSL wrote a NUL-terminated name of `len` octets into `buf`.
            let n = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned();
            return Some(n);
        }
        Some(format!("DH-{} (server parameters)", key.bits()))
    }
    fn client_cert_requested(&self) -> Option<bool> {
        if self.server {
            return None;
        }
        // On a client, SSL_get_client_CA_list is the CA list of the server's CertificateRequest
        // (RFC 5246 §7.4.4, RFC 8446 §4.3.2): non-null once one was received, even empty.
        // SAFETY: a query on the live connection owned by `self.s`.
        let l = unsafe { SSL_get_client_CA_list(foreign(self.s.ssl())) };
        Some(!l.is_null())
    }
    fn rekey(&mut self) -> Result<(), TlsError> {
        self.handshake()?;
        let ssl = foreign(self.s.ssl());
        // SAFETY: `ssl` is the live connection owned by `self.s`.
        let ok = unsafe {
            match self.negotiated_version() {
                Some(TlsVersion::Tls13) => SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED),
                _ => SSL_renegotiate(ssl),
            }
        };
        if ok != 1 {
            return Err(stack_err("rekey", openssl::error::ErrorStack::get()));
        }
        // Sends the KeyUpdate / HelloRequest / ClientHello now; the rest completes in later I/O.
        // SAFETY: as above.
        let r = unsafe { ffi::SSL_do_handshake(ssl) };
        if r != 1 {
            return Err(stack_err("rekey", openssl::error::ErrorStack::get()));
        }
        Ok(())
    }
    fn shutdown(&mut self) -> Result<(), TlsError> {
        match self.s.shutdown() {
            Ok(_) => Ok(()),
            Err(e) if e.code() == ErrorCode::ZERO_RETURN || e.code() == ErrorCode::SYSCALL => {
                Ok(())
            }
            Err(e) => Err(self.err(&e)),
        }
    }
    fn tcp(&self) -> &TcpStream {
        self.s.get_ref()
    }
}
