//! Interchangeable TLS backends behind one trait.
//!
//! A [`TlsBackend`] is built once from a [`TlsProfile`] (contexts, credentials, CRLs, session
//! caches) and then wraps any number of TCP connections. Wrapping exchanges no bytes:
//! [`TlsStream::handshake`] runs the handshake as a separate call, so the measurement layer can
//! stamp "TCP up" and "TLS up" (the RSE paper's HT sub-steps) around it.
//!
//! ```no_run
//! # use gander_tls::{backend, TlsProfile};
//! # fn main() -> Result<(), gander_tls::TlsError> {
//! let profile = TlsProfile::from_file("client.toml".as_ref())?;
//! let tls = backend::open(&profile)?;
//! let tcp = std::net::TcpStream::connect("127.0.0.1:3782")?;   // stamp TCP_UP after this
//! let mut s = tls.client(tcp)?;
//! s.handshake()?;                                               // stamp TLS_UP after this
//! println!("{:?} {:?}", s.negotiated_version(), s.negotiated_suite().map(|c| c.name));
//! # Ok(()) }
//! ```
use crate::suites::{self, CipherSuite};
use crate::{KxGroup, TlsError, TlsProfile, TlsVersion};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub(crate) mod files;
pub mod gnutls;
pub mod openssl_tls;
pub mod rustls_tls;
pub mod wire;

/// The TLS library behind a profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The system OpenSSL (3.0 on Debian 12) through the `openssl` crate.
    #[default]
    Openssl,
    /// The system GnuTLS (3.7 on Debian 12) through the safe bindings of `gander-gnutls`.
    Gnutls,
    /// rustls with the *ring* provider: TLS 1.2/1.3, AEAD suites only.
    Rustls,
    /// rustls with the aws-lc-rs provider: the same protocol code, AWS-LC's cryptography, and
    /// the ML-KEM groups (X25519MLKEM768, MLKEM768) and ML-DSA signatures.
    #[serde(rename = "rustls-awslc")]
    RustlsAwslc,
    /// OpenSSL 3.5 (ML-KEM groups, ML-DSA): the same backend code as `openssl`, linked into a
    /// second gander binary built with the `vendored-openssl` feature (`make build-ossl35`),
    /// because one binary holds one OpenSSL ([`linked_openssl35`]).
    Openssl35,
}

impl BackendKind {
    /// Every backend, in the order reports list them.
    pub const ALL: [BackendKind; 5] = [
        Self::Openssl,
        Self::Gnutls,
        Self::Rustls,
        Self::RustlsAwslc,
        Self::Openssl35,
    ];
    /// The name profiles and the command line use: `openssl`, `gnutls`, `rustls`,
    /// `rustls-awslc` or `openssl35`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Openssl => "openssl",
            Self::Gnutls => "gnutls",
            Self::Rustls => "rustls",
            Self::RustlsAwslc => "rustls-awslc",
            Self::Openssl35 => "openssl35",
        }
    }
    /// Whether this process can run the backend. `openssl35` runs only in a binary that links
    /// OpenSSL 3.5 or later; the measurement manager starts that binary for its rows.
    pub fn in_process(self) -> bool {
        self != Self::Openssl35 || linked_openssl35()
    }
}

/// Whether this binary links OpenSSL 3.5 or later (`OPENSSL_VERSION_NUMBER` >= 0x30500000): built
/// with the `vendored-openssl` feature, or on a system whose OpenSSL is that new.
pub fn linked_openssl35() -> bool {
    openssl::version::number() >= 0x3050_0000
}

/// The error for a `rustls-awslc` profile in a binary built without the `aws-lc` feature
/// (gander's own builds have it; a build for a parser's fuzz targets leaves AWS-LC's C library
/// out).
pub fn aws_lc_missing() -> TlsError {
    TlsError::Unsupported {
        backend: "rustls-awslc",
        what: "this gander binary was built without the `aws-lc` feature of gander-tls, which \
               links rustls's aws-lc-rs provider"
            .into(),
    }
}

/// The error for an `openssl35` profile in a binary that links an older OpenSSL.
pub fn openssl35_missing() -> TlsError {
    TlsError::Unsupported {
        backend: "openssl35",
        what: format!(
            "this gander binary links {}; the openssl35 backend runs in the binary built with \
             OpenSSL 3.5 (run `make build-ossl35`: target/ossl35/release/gander)",
            openssl::version::version()
        ),
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend name [`BackendKind`]'s parser does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown TLS backend {0:?} (expected openssl, gnutls, rustls, rustls-awslc or openssl35)")]
pub struct UnknownBackend(pub String);

impl From<UnknownBackend> for String {
    fn from(e: UnknownBackend) -> Self {
        e.to_string()
    }
}

/// Parses a backend name (`openssl`, `gnutls`, `rustls`, `rustls-awslc`, `openssl35`;
/// case-insensitive).
impl std::str::FromStr for BackendKind {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Self, UnknownBackend> {
        Self::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownBackend(s.to_string()))
    }
}

/// What a backend library on this machine can do, asked of the library itself.
#[derive(Clone, Debug, Serialize)]
pub struct Capabilities {
    /// Library name and version, e.g. `OpenSSL 3.0.19 ...`.
    pub library: String,
    /// Protocol versions the library can negotiate.
    pub versions: Vec<TlsVersion>,
    /// Catalogue code points the library can negotiate.
    pub suites: Vec<u16>,
    /// TLS 1.2 renegotiation (RFC 5746) through [`TlsStream::rekey`].
    pub renegotiation: bool,
    /// TLS 1.3 KeyUpdate (RFC 8446 §4.6.3) through [`TlsStream::rekey`].
    pub key_update: bool,
    /// Key-exchange groups the backend can be restricted to (`groups` in a profile).
    pub groups: Vec<KxGroup>,
    /// TLS 1.3 signature schemes it can sign and verify (IANA names, RFC 8446 §4.2.3 and
    /// draft-ietf-tls-mldsa), as the library lists them.
    pub signature_schemes: Vec<String>,
    /// `false` when this process cannot run the backend (`openssl35` in a binary linking an
    /// older OpenSSL): the other fields then describe nothing asked of the library.
    pub in_process: bool,
}

/// Capabilities of `kind`, computed once per process.
pub fn capabilities(kind: BackendKind) -> &'static Capabilities {
    static CAPS: [OnceLock<Capabilities>; 5] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    match kind {
        BackendKind::Openssl => CAPS[0].get_or_init(openssl_tls::capabilities),
        BackendKind::Gnutls => CAPS[1].get_or_init(gnutls::capabilities),
        BackendKind::Rustls => {
            CAPS[2].get_or_init(|| rustls_tls::capabilities(rustls_tls::Provider::Ring))
        }
        BackendKind::RustlsAwslc => CAPS[3].get_or_init(|| match rustls_tls::Provider::of(kind) {
            Some(p) => rustls_tls::capabilities(p),
            None => not_in_process(
                "rustls with aws-lc-rs (not in this binary: built without the `aws-lc` feature)",
            ),
        }),
        BackendKind::Openssl35 => CAPS[4].get_or_init(|| {
            if linked_openssl35() {
                openssl_tls::capabilities()
            } else {
                // The other binary's OpenSSL renegotiates and updates keys.
                Capabilities {
                    renegotiation: true,
                    key_update: true,
                    ..not_in_process("OpenSSL 3.5 (separate binary: make build-ossl35)")
                }
            }
        }),
    }
}

/// The capabilities of a backend this process cannot run: its library named, nothing offered.
fn not_in_process(library: &str) -> Capabilities {
    Capabilities {
        library: library.into(),
        versions: Vec::new(),
        suites: Vec::new(),
        renegotiation: false,
        key_update: false,
        groups: Vec::new(),
        signature_schemes: Vec::new(),
        in_process: false,
    }
}

/// Catalogue suites that `kind` supports here.
pub fn supported_suites(kind: BackendKind) -> Vec<&'static CipherSuite> {
    let caps = capabilities(kind);
    suites::CATALOGUE
        .iter()
        .filter(|s| caps.suites.contains(&s.code))
        .collect()
}

/// An established (or about to be established) TLS connection over TCP.
///
/// `Read`/`Write` errors that come from TLS carry a [`TlsError`] inside the `io::Error`
/// (`TlsError::from(io_error)` recovers it). Reading or writing before [`TlsStream::handshake`]
/// runs the handshake implicitly.
pub trait TlsStream: Read + Write + Send {
    /// Runs the handshake (RFC 5246 §7.3, RFC 8446 §2) to completion. Idempotent.
    ///
    /// In TLS 1.3 the client finishes before the server has checked the client certificate
    /// (RFC 8446 §4.4.2.4): a rejection of the client's certificate reaches the client at its
    /// first read, as the same `TlsError` wrapped in the `io::Error`.
    fn handshake(&mut self) -> Result<(), TlsError>;
    /// Advances the handshake without waiting for the peer, on a socket set non-blocking:
    /// `Ok(true)` once it is complete (and checked as [`TlsStream::handshake`] checks it),
    /// `Ok(false)` when it needs bytes the peer has not sent yet. Lets one thread drive both
    /// ends of a handshake in lockstep ([`crate::bare`]), with no scheduler between the flights.
    /// The library's own handshake timeout is off in this mode: the caller bounds the time.
    fn handshake_step(&mut self) -> Result<bool, TlsError>;
    /// The negotiated protocol version, once the handshake is done.
    fn negotiated_version(&self) -> Option<TlsVersion>;
    /// The negotiated suite, if it is in the catalogue.
    fn negotiated_suite(&self) -> Option<&'static CipherSuite>;
    /// The negotiated suite's IANA code point.
    fn negotiated_suite_code(&self) -> Option<u16>;
    /// The peer's leaf certificate (DER).
    fn peer_certificate(&self) -> Option<Vec<u8>>;
    /// Whether the handshake resumed a previous session (abbreviated handshake).
    fn session_resumed(&self) -> bool;
    /// The certificates the peer sent (DER), leaf first, as received (RFC 5246 §7.4.2,
    /// RFC 8446 §4.4.2): what a survey reports as the server's chain. Backends that do not keep
    /// the whole list give the leaf only. Where the library keeps it, the chain is there even
    /// after a handshake that failed on the certificate check.
    fn peer_chain(&self) -> Vec<Vec<u8>> {
        self.peer_certificate().into_iter().collect()
    }
    /// The version and suite code point the peer chose in its ServerHello, also when the
    /// handshake failed after it (e.g. on a certificate check): what a survey needs to tell "the
    /// server accepted this suite, then refused my certificate" from "no suite in common". The
    /// default knows only completed handshakes.
    fn server_hello(&self) -> Option<(TlsVersion, u16)> {
        Some((self.negotiated_version()?, self.negotiated_suite_code()?))
    }
    /// The IANA name of the signature scheme the peer signed the handshake with (RFC 8446
    /// §4.2.3; TLS 1.2 `SignatureAndHashAlgorithm`, RFC 5246 §7.4.1.4.1), where the backend
    /// reports it.
    fn peer_signature_scheme(&self) -> Option<String> {
        None
    }
    /// Whether the peer signalled RFC 5746 secure renegotiation (`renegotiation_info`) in this
    /// TLS 1.0-1.2 handshake; `None` where the backend does not report it.
    fn secure_renegotiation(&self) -> Option<bool> {
        None
    }
    /// Whether the current session carries a ticket from the server (RFC 5077 NewSessionTicket in
    /// TLS 1.2, RFC 8446 §4.6.1 in TLS 1.3); `None` where the backend does not report it.
    fn session_ticket_received(&self) -> Option<bool> {
        None
    }
    /// The key-exchange group the handshake used, if gander knows it (`None` before the
    /// handshake, for RSA key transport and for finite-field DHE).
    fn negotiated_group(&self) -> Option<KxGroup> {
        None
    }
    /// The key-exchange group by its IANA name (RFC 8446 §4.2.7 registry: `secp384r1`, `x448`,
    /// `ffdhe2048`, `brainpoolP256r1`, `X25519MLKEM768`, ...), whatever the group, where the
    /// backend reports it; for TLS 1.2 finite-field DHE the server's parameters by name
    /// (`ffdhe2048`, `modp_2048`) or size. The default knows [`TlsStream::negotiated_group`]'s.
    fn negotiated_group_name(&self) -> Option<String> {
        self.negotiated_group().map(|g| g.name().to_string())
    }
    /// On a client: whether the server sent a CertificateRequest in this handshake (RFC 5246
    /// §7.4.4, RFC 8446 §4.3.2), also when the handshake failed after it; `None` where the
    /// backend does not report it.
    fn client_cert_requested(&self) -> Option<bool> {
        None
    }
    /// TLS payload octets this end has sent and received on its TCP connection so far, from the
    /// kernel's counters ([`wire::tcp_bytes`]). Read right after [`TlsStream::handshake`] on the
    /// client, they are the handshake's bytes on the wire in each direction.
    fn wire_bytes(&self) -> Option<wire::WireBytes> {
        wire::tcp_bytes(self.tcp())
    }
    /// Fresh keys now: TLS 1.2 renegotiation (RFC 5746) or TLS 1.3 KeyUpdate (RFC 8446 §4.6.3),
    /// where the backend can ([`Capabilities`]). Completes on later reads/writes.
    fn rekey(&mut self) -> Result<(), TlsError>;
    /// Sends close_notify (RFC 5246 §7.2.1) and stops.
    fn shutdown(&mut self) -> Result<(), TlsError>;
    /// The TCP socket underneath (for addresses and socket options).
    fn tcp(&self) -> &TcpStream;
    /// Whether the library holds received data that a `read` would return without touching the
    /// socket (so polling the socket for readability would miss it). A driver that polls the
    /// socket checks this first: e.g. the first application data can arrive together with the
    /// client's Finished and be buffered by the handshake.
    fn has_buffered_data(&mut self) -> bool {
        false
    }
}

/// A backend configured from one profile.
pub trait TlsBackend: Send + Sync {
    /// Which library this is.
    fn kind(&self) -> BackendKind;
    /// The profile this backend was built from.
    fn profile(&self) -> &TlsProfile;
    /// Wraps a connected TCP stream as the TLS client; no bytes are sent yet.
    fn client(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError>;
    /// Wraps an accepted TCP stream as the TLS server; no bytes are read yet.
    fn server(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError>;
}

/// Validates `profile` and builds its backend. Server credentials are needed only if
/// [`TlsBackend::server`] is used.
pub fn open(profile: &TlsProfile) -> Result<Box<dyn TlsBackend>, TlsError> {
    if !profile.backend.in_process() {
        return Err(openssl35_missing());
    }
    if profile.backend == BackendKind::RustlsAwslc
        && rustls_tls::Provider::of(profile.backend).is_none()
    {
        return Err(aws_lc_missing());
    }
    profile.validate(profile.cert.is_some())?;
    let inner: Box<dyn TlsBackend> = match profile.backend {
        BackendKind::Openssl | BackendKind::Openssl35 => {
            Box::new(openssl_tls::OpensslBackend::new(profile)?)
        }
        BackendKind::Gnutls => Box::new(gnutls::GnutlsBackend::new(profile)?),
        BackendKind::Rustls | BackendKind::RustlsAwslc => {
            Box::new(rustls_tls::RustlsBackend::new(profile)?)
        }
    };
    Ok(
        if profile.renegotiation_interval_s.is_some() || profile.key_update_interval_s.is_some() {
            Box::new(Rekeying(inner))
        } else {
            inner
        },
    )
}

/// Convenience: wraps as client and runs the handshake.
pub fn connect(backend: &dyn TlsBackend, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
    let mut s = backend.client(tcp)?;
    s.handshake()?;
    Ok(s)
}

/// Convenience: wraps as server and runs the handshake.
pub fn accept(backend: &dyn TlsBackend, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
    let mut s = backend.server(tcp)?;
    s.handshake()?;
    Ok(s)
}

/// Sets the profile's socket timeouts so that no handshake or read can hang.
pub(crate) fn set_timeouts(tcp: &TcpStream, profile: &TlsProfile) -> Result<(), TlsError> {
    let t = Some(Duration::from_millis(profile.io_timeout_ms.max(1)));
    tcp.set_read_timeout(t)?;
    tcp.set_write_timeout(t)?;
    Ok(())
}

/// After a failed handshake: half-close and read what the peer still sends (briefly), so that the
/// fatal alert just sent reaches it instead of being destroyed by a TCP reset. Without this a TLS 1.3
/// client whose certificate is refused, and which has already written application data, often
/// sees only "connection reset" (RFC 8446 §6.2 alerts are lost when the socket closes with unread data).
pub(crate) fn drain_after_failure(tcp: &TcpStream) {
    let _ = tcp.shutdown(std::net::Shutdown::Write);
    let _ = tcp.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf = [0u8; 4096];
    let mut r = tcp;
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(300) {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// Checks after a handshake that the result is within the profile (defence in depth: a backend
/// priority string may admit more than the listed suites).
pub(crate) fn check_negotiated(profile: &TlsProfile, s: &dyn TlsStream) -> Result<(), TlsError> {
    if let Some(v) = s.negotiated_version() {
        if !profile.versions.contains(&v) {
            return Err(TlsError::VersionNotAllowed(v));
        }
    }
    if !profile.cipher_suites.is_empty() {
        let listed = profile.suites()?;
        match s.negotiated_suite_code() {
            Some(code) if listed.iter().any(|c| c.code == code) => {}
            other => {
                return Err(TlsError::NoSharedCipher {
                    by: crate::Side::Local,
                    detail: format!("negotiated suite {other:04X?} is not in the profile"),
                })
            }
        }
    }
    Ok(())
}

/// Wraps a backend so that its streams rekey on write once the profile's interval has passed,
/// as libiec61850 does for renegotiation (IEC 62351-3: renegotiate at least every 24 h).
struct Rekeying(Box<dyn TlsBackend>);

impl TlsBackend for Rekeying {
    fn kind(&self) -> BackendKind {
        self.0.kind()
    }
    fn profile(&self) -> &TlsProfile {
        self.0.profile()
    }
    fn client(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        let p = self.0.profile();
        Ok(Box::new(RekeyingStream::new(self.0.client(tcp)?, p)))
    }
    fn server(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        let p = self.0.profile();
        Ok(Box::new(RekeyingStream::new(self.0.server(tcp)?, p)))
    }
}

struct RekeyingStream {
    inner: Box<dyn TlsStream>,
    reneg: Option<Duration>,
    key_update: Option<Duration>,
    last: Option<Instant>,
}

impl RekeyingStream {
    fn new(inner: Box<dyn TlsStream>, p: &TlsProfile) -> Self {
        RekeyingStream {
            inner,
            reneg: p.renegotiation_interval_s.map(Duration::from_secs),
            key_update: p.key_update_interval_s.map(Duration::from_secs),
            last: None,
        }
    }
    fn due(&mut self) -> bool {
        let interval = match self.inner.negotiated_version() {
            Some(TlsVersion::Tls13) => self.key_update,
            Some(_) => self.reneg,
            None => None,
        };
        match (interval, self.last) {
            (Some(i), Some(last)) => last.elapsed() >= i,
            (Some(_), None) => {
                self.last = Some(Instant::now());
                false
            }
            _ => false,
        }
    }
}

impl Read for RekeyingStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf)
    }
}

impl Write for RekeyingStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.due() {
            self.inner.rekey()?;
            self.last = Some(Instant::now());
        }
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl TlsStream for RekeyingStream {
    fn has_buffered_data(&mut self) -> bool {
        self.inner.has_buffered_data()
    }
    fn handshake(&mut self) -> Result<(), TlsError> {
        self.inner.handshake()?;
        self.last.get_or_insert_with(Instant::now);
        Ok(())
    }
    fn handshake_step(&mut self) -> Result<bool, TlsError> {
        let done = self.inner.handshake_step()?;
        if done {
            self.last.get_or_insert_with(Instant::now);
        }
        Ok(done)
    }
    fn negotiated_version(&self) -> Option<TlsVersion> {
        self.inner.negotiated_version()
    }
    fn negotiated_suite(&self) -> Option<&'static CipherSuite> {
        self.inner.negotiated_suite()
    }
    fn negotiated_suite_code(&self) -> Option<u16> {
        self.inner.negotiated_suite_code()
    }
    fn peer_certificate(&self) -> Option<Vec<u8>> {
        self.inner.peer_certificate()
    }
    fn session_resumed(&self) -> bool {
        self.inner.session_resumed()
    }
    fn negotiated_group(&self) -> Option<KxGroup> {
        self.inner.negotiated_group()
    }
    fn negotiated_group_name(&self) -> Option<String> {
        self.inner.negotiated_group_name()
    }
    fn client_cert_requested(&self) -> Option<bool> {
        self.inner.client_cert_requested()
    }
    fn peer_chain(&self) -> Vec<Vec<u8>> {
        self.inner.peer_chain()
    }
    fn server_hello(&self) -> Option<(TlsVersion, u16)> {
        self.inner.server_hello()
    }
    fn peer_signature_scheme(&self) -> Option<String> {
        self.inner.peer_signature_scheme()
    }
    fn secure_renegotiation(&self) -> Option<bool> {
        self.inner.secure_renegotiation()
    }
    fn session_ticket_received(&self) -> Option<bool> {
        self.inner.session_ticket_received()
    }
    fn rekey(&mut self) -> Result<(), TlsError> {
        self.inner.rekey()?;
        self.last = Some(Instant::now());
        Ok(())
    }
    fn shutdown(&mut self) -> Result<(), TlsError> {
        self.inner.shutdown()
    }
    fn tcp(&self) -> &TcpStream {
        self.inner.tcp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rustls-awslc` runs where the `aws-lc` feature is built in (every gander build) and is
    /// refused with the feature named where it is not (`cargo test -p gander-tls
    /// --no-default-features`), never served by the *ring* provider instead.
    #[test]
    fn rustls_awslc_follows_the_aws_lc_feature() {
        let caps = capabilities(BackendKind::RustlsAwslc);
        let profile = TlsProfile {
            backend: BackendKind::RustlsAwslc,
            ..Default::default()
        };
        let opened = open(&profile);
        if cfg!(feature = "aws-lc") {
            assert!(caps.library.contains("aws-lc-rs"), "{}", caps.library);
            assert!(caps.in_process && !caps.suites.is_empty());
            // Without a CA this profile is refused for what it lacks, not for the provider.
            assert!(
                !matches!(opened, Err(TlsError::Unsupported { .. })),
                "{:?}",
                opened.err()
            );
        } else {
            assert!(!caps.in_process && caps.suites.is_empty());
            match opened {
                Err(TlsError::Unsupported { backend, what }) => {
                    assert_eq!(backend, "rustls-awslc");
                    assert!(what.contains("aws-lc"), "{what}");
                }
                Err(e) => panic!("expected the missing feature, got {e}"),
                Ok(_) => panic!("rustls-awslc opened without aws-lc"),
            }
        }
    }
}
