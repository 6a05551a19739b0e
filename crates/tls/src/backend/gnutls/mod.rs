//! GnuTLS backend through the safe bindings of `gander-gnutls`.
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
#![forbid(unsafe_code)]

use super::{check_negotiated, set_timeouts, BackendKind, Capabilities, TlsBackend, TlsStream};
use crate::error::{alert, from_alert, Side};
use crate::profile::ProfileError;
use crate::suites::{self, CipherSuite};
use crate::{TlsError, TlsProfile, TlsVersion};
use gander_gnutls::tls::{
    self as gtls, cert_status, protocol, Credentials, Role, Session, SessionCache, Verifier,
    X509Format, ALERT_NO_RENEGOTIATION,
};
use gander_gnutls::{code, GnutlsError};
use std::collections::HashMap;
use std::ffi::CString;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// GnuTLS's text for an error code, with the code: `Resource temporarily unavailable ... (-28)`.
fn describe(code: i32) -> String {
    format!("{} ({code})", gander_gnutls::error_text(code))
}

/// The GnuTLS code of a failed call (every session call reports one).
fn code_of(e: &GnutlsError) -> i32 {
    e.code().unwrap_or(i32::MIN)
}

/// GnuTLS suite name (e.g. `TLS_DHE_RSA_3DES_EDE_CBC_SHA1`) -> IANA code, for every compiled suite.
fn gnutls_names() -> &'static HashMap<String, u16> {
    static N: OnceLock<HashMap<String, u16>> = OnceLock::new();
    N.get_or_init(|| gtls::cipher_suites().into_iter().collect())
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

fn proto_of(v: TlsVersion) -> i32 {
    match v {
        TlsVersion::Tls10 => protocol::TLS1_0,
        TlsVersion::Tls11 => protocol::TLS1_1,
        TlsVersion::Tls12 => protocol::TLS1_2,
        TlsVersion::Tls13 => protocol::TLS1_3,
    }
}

pub(crate) fn capabilities() -> Capabilities {
    let mut versions = Vec::new();
    for v in TlsVersion::ALL {
        let proto = proto_of(v);
        if let Ok((codes, protos)) = gtls::expand_priority(&priority_string(&[v], &[])) {
            if protos.contains(&proto) && !codes.is_empty() {
                versions.push(v);
            }
        }
    }
    // A suite is supported if its own single-suite priority string yields exactly it.
    let mut codes = Vec::new();
    for s in suites::CATALOGUE {
        let vers: Vec<TlsVersion> = s.versions().collect();
        if let Ok((got, _)) = gtls::expand_priority(&priority_string(&vers, &[s])) {
            if got.contains(&s.code) {
                codes.push(s.code);
            }
        }
    }
    Capabilities {
        library: gtls::library_name(),
        versions,
        suites: codes,
        renegotiation: true,
        key_update: true,
        // gander's GnuTLS priority strings keep `+GROUP-ALL`: the groups are not a dimension here.
        groups: Vec::new(),
        signature_schemes: Vec::new(),
        in_process: true,
    }
}

/// The error for a profile file GnuTLS could not load.
fn file_err(what: &'static str, p: &Path, e: GnutlsError) -> TlsError {
    match e.code() {
        Some(code) => TlsError::Profile(ProfileError::MissingFile {
            what,
            path: p.to_owned(),
            reason: describe(code),
        }),
        None => TlsError::Pki(e.to_string()),
    }
}

/// The GnuTLS backend.
pub struct GnutlsBackend {
    profile: TlsProfile,
    creds: Arc<Credentials>,
    priority: CString,
    pin: Option<Arc<Vec<u8>>>,
    /// Server-side TLS 1.2 session cache (RFC 5246 §7.4.1.2 session IDs).
    db: SessionCache,
    ticket_key: Option<Vec<u8>>,
    client_session: Arc<Mutex<Option<Vec<u8>>>>,
    hostname: Option<CString>,
    keylog: Option<Arc<crate::keylog::KeyLogFile>>,
}

impl GnutlsBackend {
    /// Loads the profile's CA, CRLs and own credentials into GnuTLS certificate credentials.
    pub fn new(profile: &TlsProfile) -> Result<Self, TlsError> {
        let suites = profile.suites()?;
        let priority = priority_string(&profile.versions, &suites);
        let priority = CString::new(priority)
            .map_err(|_| TlsError::HandshakeFailed("priority string".into()))?;
        let mut creds = Credentials::new().map_err(|e| {
            TlsError::HandshakeFailed(format!("GnuTLS credentials: {}", describe(code_of(&e))))
        })?;
        for p in &profile.ca {
            match creds.add_trust_file(p) {
                // GnuTLS loaded nothing from the file: no certificate in it.
                Ok(0) => {
                    return Err(TlsError::Profile(ProfileError::MissingFile {
                        what: "ca",
                        path: p.to_owned(),
                        reason: describe(0),
                    }))
                }
                Ok(_) => {}
                Err(e) => return Err(file_err("ca", p, e)),
            }
        }
        for p in &profile.crl {
            creds
                .add_crl_file(p, X509Format::Pem)
                .or_else(|_| creds.add_crl_file(p, X509Format::Der))
                .map_err(|e| file_err("crl", p, e))?;
        }
        if let (Some(cert), Some(key)) = (&profile.cert, &profile.key) {
            creds
                .set_key_file(cert, key)
                .map_err(|e| file_err("cert", cert, e))?;
        }
        // DHE suites: RFC 7919 groups matched to the key's security level. A failure leaves the
        // DHE suites without parameters, which the handshake reports.
        let _ = creds.set_known_dh_params();
        let pin = match &profile.peer_cert {
            Some(p) => Some(Arc::new(super::files::cert_der("peer_cert", p)?)),
            None => None,
        };
        let ticket_key = if profile.session_resumption && profile.session_tickets {
            Some(gtls::generate_ticket_key().map_err(|e| {
                TlsError::HandshakeFailed(format!("GnuTLS ticket key: {}", describe(code_of(&e))))
            })?)
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
        let keylog = crate::keylog::open_for(profile)?;
        Ok(GnutlsBackend {
            profile: profile.clone(),
            creds: Arc::new(creds),
            priority,
            pin,
            db: SessionCache::new(),
            ticket_key,
            client_session: Arc::new(Mutex::new(None)),
            hostname,
            keylog,
        })
    }

    fn wrap(&self, tcp: TcpStream, server: bool) -> Result<Box<dyn TlsStream>, TlsError> {
        set_timeouts(&tcp, &self.profile)?;
        let tickets =
            self.ticket_key.is_some() && (!server || self.profile.effective_num_tickets() > 0);
        let role = if server { Role::Server } else { Role::Client };
        let mut session = Session::new(role, tickets, tcp).map_err(|e| {
            TlsError::HandshakeFailed(format!("gnutls_init: {}", describe(code_of(&e))))
        })?;
        if let Some(log) = &self.keylog {
            // gnutls_session_set_keylog_function (GnuTLS >= 3.6.13): per session, unlike
            // OpenSSL's and rustls's per-context hooks.
            let log = log.clone();
            session.set_keylog(Box::new(move |label, random, secret| {
                log.log(label, random, secret)
            }));
        }
        let mut stream = GnutlsStream {
            session,
            verdict: Arc::new(Mutex::new(None)),
            client_session: if server || !self.profile.session_resumption {
                None
            } else {
                Some(self.client_session.clone())
            },
            server,
            done: false,
            pending: Vec::new(),
            profile: self.profile.clone(),
        };
        stream.setup(self)?;
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

/// The local verification failure of the last handshake, for the error the handshake returns.
type Verdict = Arc<Mutex<Option<TlsError>>>;

/// The certificate check of every handshake: chain, validity, CRL, optional host name, then the
/// pin. A failure sends its alert and is recorded in `verdict`.
fn verify_peer(
    v: &Verifier<'_>,
    hostname: Option<&CString>,
    pin: Option<&[u8]>,
    verdict: &Verdict,
) -> bool {
    let by = Side::Local;
    let fail = |e: TlsError, desc: u8| {
        v.send_fatal_alert(desc);
        if let Ok(mut g) = verdict.lock() {
            *g = Some(e);
        }
        false
    };
    let status = match v.verify_peers(hostname.map(CString::as_c_str)) {
        Ok(s) => s,
        Err(e) => {
            let e = TlsError::BadCertificate {
                by,
                detail: describe(code_of(&e)),
            };
            return fail(e, alert::BAD_CERTIFICATE);
        }
    };
    if status != 0 {
        let detail = format!("GnuTLS verification status 0x{status:x}");
        let (e, desc) = if status & cert_status::SIGNER_NOT_FOUND != 0 {
            (TlsError::UnknownCa { by, detail }, alert::UNKNOWN_CA)
        } else if status & cert_status::REVOKED != 0 {
            (TlsError::Revoked { by, detail }, alert::CERTIFICATE_REVOKED)
        } else if status & (cert_status::EXPIRED | cert_status::NOT_ACTIVATED) != 0 {
            (TlsError::Expired { by, detail }, alert::CERTIFICATE_EXPIRED)
        } else {
            (
                TlsError::BadCertificate { by, detail },
                alert::BAD_CERTIFICATE,
            )
        };
        return fail(e, desc);
    }
    if let Some(pin) = pin {
        if v.peer_certificate().as_deref() != Some(pin) {
            return fail(TlsError::PinMismatch, alert::BAD_CERTIFICATE);
        }
    }
    true
}

struct GnutlsStream {
    /// The GnuTLS session; owns the TCP socket.
    session: Session,
    verdict: Verdict,
    client_session: Option<Arc<Mutex<Option<Vec<u8>>>>>,
    server: bool,
    done: bool,
    /// Application data that arrived while a renegotiation started, returned by the next reads.
    pending: Vec<u8>,
    profile: TlsProfile,
}

impl Drop for GnutlsStream {
    fn drop(&mut self) {
        self.save_session();
    }
}

impl GnutlsStream {
    fn setup(&mut self, backend: &GnutlsBackend) -> Result<(), TlsError> {
        let s = &mut self.session;
        s.set_priority(&backend.priority)
            .map_err(|e| TlsError::HandshakeFailed(e.to_string()))?;
        s.set_credentials(backend.creds.clone()).map_err(|e| {
            TlsError::HandshakeFailed(format!("GnuTLS credentials: {}", describe(code_of(&e))))
        })?;
        let (hostname, pin, verdict) = (
            backend.hostname.clone(),
            backend.pin.clone(),
            self.verdict.clone(),
        );
        s.set_verify(Box::new(move |v| {
            verify_peer(
                v,
                hostname.as_ref(),
                pin.as_deref().map(Vec::as_slice),
                &verdict,
            )
        }));
        s.set_handshake_timeout(self.profile.io_timeout_ms.min(u32::MAX as u64) as u32);
        if self.server {
            s.require_client_certificate(self.profile.require_client_auth);
            // No CA names in the CertificateRequest: GnuTLS clients would otherwise withhold a
            // certificate from another CA, and the server could not report it as unknown.
            s.omit_ca_names();
            if self.profile.session_resumption {
                s.set_session_cache(backend.db.clone());
            }
            if let Some(k) = &backend.ticket_key {
                if self.profile.effective_num_tickets() > 0
                    || self.profile.versions.iter().any(|v| *v < TlsVersion::Tls13)
                {
                    s.enable_ticket_server(k).map_err(|e| {
                        TlsError::HandshakeFailed(format!(
                            "GnuTLS tickets: {}",
                            describe(code_of(&e))
                        ))
                    })?;
                }
            }
        } else if let Some(slot) = &self.client_session {
            if let Some(data) = slot.lock().ok().and_then(|g| g.clone()) {
                // A stale or foreign session only costs a full handshake.
                let _ = s.set_session_data(&data);
            }
        }
        Ok(())
    }

    /// After the handshake completed: keep the session, check the result against the profile.
    fn finish_handshake(&mut self) -> Result<(), TlsError> {
        self.done = true;
        self.save_session();
        if let Err(e) = check_negotiated(&self.profile, self) {
            self.session.send_fatal_alert(alert::HANDSHAKE_FAILURE);
            return Err(e);
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
        if let Ok(v) = self.session.session_data() {
            if !v.is_empty() {
                if let Ok(mut g) = slot.lock() {
                    *g = Some(v);
                }
            }
        }
    }

    /// Maps a failed handshake, sending the alert that describes a local failure.
    fn handshake_error(&mut self, code: i32) -> TlsError {
        let e = self.classify(code);
        if !self.done {
            super::drain_after_failure(self.session.tcp());
        }
        e
    }

    /// Maps `code` and sends the alert for a local failure (the verify callback sends its own).
    fn classify(&mut self, code: i32) -> TlsError {
        if let Some(e) = self.verdict.lock().ok().and_then(|mut g| g.take()) {
            return e;
        }
        let by = Side::Local;
        let detail = describe(code);
        let proto = self.session.protocol_version();
        match code {
            code::FATAL_ALERT_RECEIVED | code::INVALID_SESSION => {
                let (desc, name) = self.session.alert();
                if code == code::INVALID_SESSION && desc <= 0 {
                    return TlsError::HandshakeFailed(detail);
                }
                from_alert(desc.clamp(0, 255) as u8, Side::Peer, &name)
            }
            // A server whose versions the client does not offer reports "no cipher suites"; the
            // version it recorded from the ClientHello tells the two apart.
            code::NO_CIPHER_SUITES | code::UNKNOWN_CIPHER_SUITE
                if self.server && !self.profile.versions.iter().any(|v| proto_of(*v) == proto) =>
            {
                self.session.send_fatal_alert(alert::PROTOCOL_VERSION);
                TlsError::ProtocolVersion {
                    by,
                    detail: format!("{detail}; client offered protocol {proto}"),
                }
            }
            code::AGAIN | code::TIMEDOUT => TlsError::Timeout,
            code::PREMATURE_TERMINATION
            | code::PUSH_ERROR
            | code::PULL_ERROR
            | code::SESSION_EOF => TlsError::Closed,
            _ => {
                self.session.send_appropriate_alert(code);
                match code {
                    code::UNSUPPORTED_VERSION_PACKET => TlsError::ProtocolVersion { by, detail },
                    code::UNKNOWN_CIPHER_SUITE
                    | code::NO_CIPHER_SUITES
                    | code::INSUFFICIENT_CREDENTIALS
                    | code::NO_COMMON_KEY_SHARE => TlsError::NoSharedCipher { by, detail },
                    code::NO_CERTIFICATE_FOUND
                    | code::CERTIFICATE_REQUIRED
                    | code::CERTIFICATE_ERROR
                    | code::CERTIFICATE_VERIFICATION_ERROR => {
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
        if !self.session.safe_renegotiation() {
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
            // The data is already buffered, so this does not wait for the socket.
            match self.session.recv(&mut tmp) {
                Ok(0) => return Err(TlsError::Closed),
                Ok(n) => self.pending.extend_from_slice(&tmp[..n]),
                Err(e) if code_of(&e) == code::INTERRUPTED => {}
                Err(e) => return Err(self.classify(code_of(&e))),
            }
            if self.session.pending() == 0 {
                return Ok(());
            }
        }
    }

    /// Whether the last warning alert was the peer's `no_renegotiation`.
    fn got_no_renegotiation(&self) -> bool {
        self.session.alert().0 == i32::from(ALERT_NO_RENEGOTIATION)
    }

    /// Runs `gnutls_handshake` on an established TLS 1.0-1.2 session until the renegotiation is
    /// complete, then checks the result against the profile as after the first handshake.
    fn run_renegotiation(&mut self) -> Result<(), TlsError> {
        let start = std::time::Instant::now();
        loop {
            let r = match self.session.handshake() {
                Ok(()) => break,
                Err(e) => code_of(&e),
            };
            match r {
                code::INTERRUPTED => {}
                code::AGAIN if !self.timed_out(start) => {}
                // Application data where GnuTLS awaited the peer's hello. GnuTLS then resets the
                // handshake (it reads this as "the peer declined"): a server simply awaits the
                // ClientHello again, but a client that already sent its ClientHello cannot take
                // the ServerHello that follows, so it reports the renegotiation as failed.
                code::GOT_APPLICATION_DATA => {
                    self.keep_application_data()?;
                    if !self.server {
                        return Err(TlsError::HandshakeFailed(
                            "renegotiation aborted: the server sent application data before its \
                             ServerHello, which GnuTLS clients cannot interleave"
                                .into(),
                        ));
                    }
                }
                code::WARNING_ALERT_RECEIVED if self.got_no_renegotiation() => {
                    return Err(Self::reneg_unsupported(
                        "renegotiation: the peer answered no_renegotiation",
                    ))
                }
                code::WARNING_ALERT_RECEIVED => {}
                code::UNSAFE_RENEGOTIATION_DENIED => {
                    return Err(Self::reneg_unsupported(
                        "renegotiation with a peer without RFC 5746 secure renegotiation",
                    ))
                }
                code::SESSION_USER_ID_CHANGED => {
                    self.session.send_fatal_alert(alert::BAD_CERTIFICATE);
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
            self.session.send_fatal_alert(alert::HANDSHAKE_FAILURE);
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
        if let Err(e) = self.session.rehandshake() {
            return Err(self.classify(code_of(&e)));
        }
        // Read until the client's ClientHello arrives, keeping the data it sent before.
        let start = std::time::Instant::now();
        let mut tmp = [0u8; 16 * 1024];
        loop {
            let n = match self.session.recv(&mut tmp) {
                Ok(0) => return Err(TlsError::Closed),
                Ok(n) => {
                    self.pending.extend_from_slice(&tmp[..n]);
                    continue;
                }
                Err(e) => code_of(&e),
            };
            match n {
                code::REHANDSHAKE => break,
                code::INTERRUPTED => {}
                code::AGAIN if !self.timed_out(start) => {}
                code::AGAIN => return Err(TlsError::Timeout),
                code::WARNING_ALERT_RECEIVED if self.got_no_renegotiation() => {
                    return Err(Self::reneg_unsupported(
                        "renegotiation: the client answered no_renegotiation",
                    ))
                }
                code::WARNING_ALERT_RECEIVED => {}
                n => return Err(self.classify(n)),
            }
        }
        self.run_renegotiation()
    }

    /// The peer started a renegotiation (a read returned `GNUTLS_E_REHANDSHAKE`).
    fn peer_renegotiation(&mut self) -> Result<(), TlsError> {
        let refuse = |s: &mut Self, what: &str| {
            // A GnuTLS server that has read a ClientHello can only run the handshake or end the
            // session, so the refusal is fatal.
            s.session.send_fatal_alert(ALERT_NO_RENEGOTIATION);
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

    fn record_error(&mut self, code: i32) -> io::Error {
        self.handshake_error(code.min(0)).into()
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
            let n = match self.session.recv(buf) {
                Ok(n) => return Ok(n),
                Err(e) => code_of(&e),
            };
            match n {
                code::INTERRUPTED => continue,
                // After a post-handshake message (e.g. a TLS 1.3 NewSessionTicket) GnuTLS may
                // return E_AGAIN before the socket timeout has passed: keep reading.
                code::AGAIN if !self.timed_out(start) => continue,
                // The peer started a TLS 1.2 renegotiation (our client got a HelloRequest, or our
                // server a ClientHello): run it, then go on reading.
                code::REHANDSHAKE => {
                    self.peer_renegotiation()?;
                    if !self.pending.is_empty() {
                        return self.read(buf);
                    }
                }
                code::WARNING_ALERT_RECEIVED => continue,
                code::PREMATURE_TERMINATION => {
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
            let n = match self.session.send(buf) {
                Ok(n) => return Ok(n),
                Err(e) => code_of(&e),
            };
            match n {
                code::INTERRUPTED => continue,
                code::AGAIN if !self.timed_out(start) => continue,
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
        !self.pending.is_empty() || self.session.pending() > 0
    }
    fn handshake(&mut self) -> Result<(), TlsError> {
        if self.done {
            return Ok(());
        }
        let start = std::time::Instant::now();
        loop {
            let r = match self.session.handshake() {
                Ok(()) => break,
                Err(e) => code_of(&e),
            };
            if r == code::INTERRUPTED || r == code::WARNING_ALERT_RECEIVED {
                continue;
            }
            if r == code::AGAIN && !self.timed_out(start) {
                continue;
            }
            return Err(self.handshake_error(r));
        }
        self.finish_handshake()
    }
    fn handshake_step(&mut self) -> Result<bool, TlsError> {
        if self.done {
            return Ok(true);
        }
        // With a handshake timeout GnuTLS waits for each flight in poll() (its pull_timeout),
        // which would block the one thread that also drives the peer; the caller bounds the time.
        self.session.set_handshake_timeout(0);
        loop {
            let r = match self.session.handshake() {
                Ok(()) => return self.finish_handshake().map(|()| true),
                Err(e) => code_of(&e),
            };
            if r == code::INTERRUPTED || r == code::WARNING_ALERT_RECEIVED {
                continue;
            }
            if r == code::AGAIN {
                return Ok(false);
            }
            return Err(self.handshake_error(r));
        }
    }
    fn negotiated_version(&self) -> Option<TlsVersion> {
        if !self.done {
            return None;
        }
        match self.session.protocol_version() {
            protocol::TLS1_0 => Some(TlsVersion::Tls10),
            protocol::TLS1_1 => Some(TlsVersion::Tls11),
            protocol::TLS1_2 => Some(TlsVersion::Tls12),
            protocol::TLS1_3 => Some(TlsVersion::Tls13),
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
        let name = self.session.cipher_suite_name()?;
        // gnutls_ciphersuite_get returns the IANA (RFC) name; older names are GnuTLS's own.
        suites::lookup(&name)
            .map(|s| s.code)
            .or_else(|| gnutls_names().get(&name).copied())
    }
    fn peer_certificate(&self) -> Option<Vec<u8>> {
        self.session.peer_certificate()
    }
    fn session_resumed(&self) -> bool {
        self.done && self.session.is_resumed()
    }
    fn rekey(&mut self) -> Result<(), TlsError> {
        self.handshake()?;
        if self.negotiated_version() != Some(TlsVersion::Tls13) {
            return self.renegotiate_now();
        }
        if let Err(e) = self.session.key_update() {
            return Err(self.handshake_error(code_of(&e)));
        }
        Ok(())
    }
    fn shutdown(&mut self) -> Result<(), TlsError> {
        self.save_session();
        if !self.done {
            return Ok(());
        }
        match self.session.bye() {
            Err(e) if code_of(&e) != code::PUSH_ERROR && code_of(&e) != code::AGAIN => {
                Err(TlsError::HandshakeFailed(describe(code_of(&e))))
            }
            _ => Ok(()),
        }
    }
    fn tcp(&self) -> &TcpStream {
        self.session.tcp()
    }
}
