//! rustls backend, with the *ring* provider (`rustls`) or the aws-lc-rs provider (`rustls-awslc`):
//! TLS 1.2 and 1.3, AEAD suites with ECDHE only, no renegotiation (rustls never implemented it),
//! KeyUpdate for TLS 1.3. The aws-lc-rs provider adds the ML-KEM groups (X25519MLKEM768,
//! MLKEM768: `rustls::crypto::aws_lc_rs::kx_group`) and ML-DSA certificates and signatures.
//!
//! Certificates and keys are read with rustls's own PEM reader, not OpenSSL's, so that ML-DSA
//! keys (which the system OpenSSL 3.0 cannot decode) load too.
//!
//! Certificate checks are webpki's (chain to the profile's CAs, validity, CRLs for the end entity,
//! RFC 5280 §6); gander wraps the verifier to add pinning and to make the host-name check optional
//! (IEC 61850 peers are usually addressed by IP and their certificates rarely name them).
use super::{
    check_negotiated, files, set_timeouts, BackendKind, Capabilities, TlsBackend, TlsStream,
};
use crate::error::{from_alert, Side};
use crate::profile::ProfileError;
use crate::suites::{self, CipherSuite};
use crate::{KxGroup, TlsError, TlsProfile, TlsVersion};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, Tls12Resumption};
use rustls::crypto::CryptoProvider;
use rustls::crypto::SupportedKxGroup;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime,
};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{NoServerSessionStorage, ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::{
    CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, DistinguishedName,
    Error as RError, HandshakeKind, PeerIncompatible, RootCertStore, ServerConfig,
    ServerConnection, SignatureScheme,
};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

/// The rustls crypto provider behind a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// *ring* (`BackendKind::Rustls`).
    Ring,
    /// aws-lc-rs (`BackendKind::RustlsAwslc`), in a binary built with the `aws-lc` feature.
    #[cfg(feature = "aws-lc")]
    AwsLc,
}

impl Provider {
    /// The provider of a rustls backend kind (`None` for the other backends, and for
    /// `rustls-awslc` in a binary built without the `aws-lc` feature).
    pub fn of(kind: BackendKind) -> Option<Provider> {
        match kind {
            BackendKind::Rustls => Some(Provider::Ring),
            #[cfg(feature = "aws-lc")]
            BackendKind::RustlsAwslc => Some(Provider::AwsLc),
            _ => None,
        }
    }
    fn kind(self) -> BackendKind {
        match self {
            Provider::Ring => BackendKind::Rustls,
            #[cfg(feature = "aws-lc")]
            Provider::AwsLc => BackendKind::RustlsAwslc,
        }
    }
    /// The provider with its defaults.
    fn default_provider(self) -> CryptoProvider {
        match self {
            Provider::Ring => rustls::crypto::ring::default_provider(),
            #[cfg(feature = "aws-lc")]
            Provider::AwsLc => rustls::crypto::aws_lc_rs::default_provider(),
        }
    }
    /// Every key-exchange group the provider implements (not only its defaults: aws-lc-rs
    /// offers MLKEM768 alone only when asked).
    fn all_groups(self) -> Vec<&'static dyn SupportedKxGroup> {
        match self {
            Provider::Ring => rustls::crypto::ring::ALL_KX_GROUPS.to_vec(),
            // ALL_KX_GROUPS leaves MLKEM768 alone out; `kx_group` has every one.
            #[cfg(feature = "aws-lc")]
            Provider::AwsLc => {
                use rustls::crypto::aws_lc_rs::kx_group;
                vec![
                    kx_group::X25519,
                    kx_group::SECP256R1,
                    kx_group::SECP384R1,
                    kx_group::X25519MLKEM768,
                    kx_group::SECP256R1MLKEM768,
                    kx_group::MLKEM768,
                    kx_group::MLKEM1024,
                ]
            }
        }
    }
    fn library(self) -> &'static str {
        match self {
            Provider::Ring => "rustls 0.23 (ring)",
            #[cfg(feature = "aws-lc")]
            Provider::AwsLc => "rustls 0.23 (aws-lc-rs)",
        }
    }
}

pub(crate) fn capabilities(provider: Provider) -> Capabilities {
    let p = provider.default_provider();
    let mut versions: Vec<TlsVersion> = rustls::ALL_VERSIONS
        .iter()
        .filter_map(|v| TlsVersion::from_wire(u16::from(v.version)))
        .collect();
    versions.sort();
    let codes: Vec<u16> = p
        .cipher_suites
        .iter()
        .map(|s| u16::from(s.suite()))
        .collect();
    let groups = provider
        .all_groups()
        .iter()
        .filter_map(|g| KxGroup::from_code(u16::from(g.name())))
        .collect();
    let schemes: Vec<u16> = p
        .signature_verification_algorithms
        .mapping
        .iter()
        .map(|(s, _)| u16::from(*s))
        .collect();
    Capabilities {
        library: provider.library().into(),
        versions,
        suites: suites::CATALOGUE
            .iter()
            .map(|s| s.code)
            .filter(|c| codes.contains(c))
            .collect(),
        renegotiation: false,
        key_update: true,
        groups,
        signature_schemes: crate::sigscheme::SCHEMES
            .iter()
            .filter(|s| schemes.contains(&s.code))
            .map(|s| s.name.to_string())
            .collect(),
        in_process: true,
    }
}

fn cfg(what: &str, e: impl std::fmt::Display) -> TlsError {
    TlsError::HandshakeFailed(format!("rustls {what}: {e}"))
}

#[derive(Debug)]
struct PinnedServer {
    inner: Arc<dyn ServerCertVerifier>,
    pin: Option<Vec<u8>>,
    check_name: bool,
}

impl ServerCertVerifier for PinnedServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, RError> {
        match self
            .inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Ok(_) => {}
            // webpki checks the name last, after chain, validity and revocation.
            Err(RError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => {}
            Err(e) => return Err(e),
        }
        if let Some(pin) = &self.pin {
            if end_entity.as_ref() != pin.as_slice() {
                return Err(RError::InvalidCertificate(
                    CertificateError::ApplicationVerificationFailure,
                ));
            }
        }
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, RError> {
        self.inner.verify_tls12_signature(m, c, d)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, RError> {
        self.inner.verify_tls13_signature(m, c, d)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[derive(Debug)]
struct PinnedClient {
    inner: Arc<dyn ClientCertVerifier>,
    pin: Option<Vec<u8>>,
}

impl ClientCertVerifier for PinnedClient {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }
    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }
    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, RError> {
        self.inner
            .verify_client_cert(end_entity, intermediates, now)?;
        if let Some(pin) = &self.pin {
            if end_entity.as_ref() != pin.as_slice() {
                return Err(RError::InvalidCertificate(
                    CertificateError::ApplicationVerificationFailure,
                ));
            }
        }
        Ok(ClientCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, RError> {
        self.inner.verify_tls12_signature(m, c, d)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, RError> {
        self.inner.verify_tls13_signature(m, c, d)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// rustls's key log hook writing the profile's `keylog` file: rustls passes the NSS label,
/// the client random and the secret ([`crate::keylog`]).
#[derive(Debug)]
struct NssKeyLog(Arc<crate::keylog::KeyLogFile>);

impl rustls::KeyLog for NssKeyLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        self.0.log(label, client_random, secret);
    }
}

/// The rustls backend.
pub struct RustlsBackend {
    kind: BackendKind,
    profile: TlsProfile,
    client: Arc<ClientConfig>,
    server: Option<Arc<ServerConfig>>,
    server_name: ServerName<'static>,
}

impl RustlsBackend {
    /// Builds the client and server configurations of `profile`.
    pub fn new(profile: &TlsProfile) -> Result<Self, TlsError> {
        let which = Provider::of(profile.backend).ok_or_else(super::aws_lc_missing)?;
        let bname = which.kind().name();
        let mut provider = which.default_provider();
        if !profile.groups.is_empty() {
            let all = which.all_groups();
            let mut chosen = Vec::new();
            for g in &profile.groups {
                let k = all
                    .iter()
                    .find(|k| u16::from(k.name()) == g.code())
                    .ok_or_else(|| {
                        TlsError::Profile(ProfileError::GroupNotInBackend {
                            group: *g,
                            backend: bname,
                            offered: String::new(),
                        })
                    })?;
                chosen.push(*k);
            }
            provider.kx_groups = chosen;
        }
        let wanted = profile.suites()?;
        if !wanted.is_empty() {
            let mut chosen = Vec::new();
            for w in &wanted {
                let s = provider
                    .cipher_suites
                    .iter()
                    .find(|s| u16::from(s.suite()) == w.code)
                    .ok_or(TlsError::Profile(ProfileError::SuiteNotInBackend {
                        suite: w.name,
                        backend: bname,
                    }))?;
                chosen.push(*s);
            }
            provider.cipher_suites = chosen;
        }
        let provider: Arc<CryptoProvider> = Arc::new(provider);
        let mut versions = Vec::new();
        for v in &profile.versions {
            match v {
                TlsVersion::Tls12 => versions.push(&rustls::version::TLS12),
                TlsVersion::Tls13 => versions.push(&rustls::version::TLS13),
                other => {
                    return Err(TlsError::Profile(ProfileError::VersionNotInBackend {
                        version: *other,
                        backend: bname,
                    }))
                }
            }
        }
        let mut roots = RootCertStore::empty();
        for p in &profile.ca {
            for c in pem_certs("ca", p)? {
                roots.add(c).map_err(|e| cfg("CA", e))?;
            }
        }
        let roots = Arc::new(roots);
        let mut crls = Vec::new();
        for p in &profile.crl {
            for c in files::crls(p)? {
                crls.push(CertificateRevocationListDer::from(
                    c.to_der().map_err(|e| cfg("CRL", e))?,
                ));
            }
        }
        let pin = match &profile.peer_cert {
            Some(p) => pem_certs("peer_cert", p)?
                .into_iter()
                .next()
                .map(|c| c.as_ref().to_vec()),
            None => None,
        };
        let creds = match (&profile.cert, &profile.key) {
            (Some(c), Some(k)) => {
                let chain = pem_certs("cert", c)?;
                let key = PrivateKeyDer::from_pem_file(k).map_err(|e| {
                    TlsError::Profile(ProfileError::MissingFile {
                        what: "key",
                        path: k.clone(),
                        reason: format!("not a valid key: {e}"),
                    })
                })?;
                Some((chain, key))
            }
            _ => None,
        };

        let keylog: Option<Arc<dyn rustls::KeyLog>> = crate::keylog::open_for(profile)?
            .map(|f| Arc::new(NssKeyLog(f)) as Arc<dyn rustls::KeyLog>);

        // Client.
        let server_verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            roots.clone(),
            provider.clone(),
        )
        .with_crls(crls.clone())
        .only_check_end_entity_revocation()
        .build()
        .map_err(|e| cfg("server verifier", e))?;
        let verifier = Arc::new(PinnedServer {
            inner: server_verifier,
            pin: pin.clone(),
            check_name: profile.verify_hostname,
        });
        let b = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&versions)
            .map_err(|e| cfg("versions", e))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut client = match &creds {
            Some((chain, key)) => b
                .with_client_auth_cert(chain.clone(), key.clone_key())
                .map_err(|e| cfg("client certificate", e))?,
            None => b.with_no_client_auth(),
        };
        client.resumption = if profile.session_resumption {
            Resumption::in_memory_sessions(64).tls12_resumption(if profile.session_tickets {
                Tls12Resumption::SessionIdOrTickets
            } else {
                Tls12Resumption::SessionIdOnly
            })
        } else {
            Resumption::disabled()
        };
        if let Some(k) = &keylog {
            client.key_log = k.clone();
        }

        // Server.
        let server = match &creds {
            Some((chain, key)) => {
                let mut vb =
                    WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
                        .with_crls(crls)
                        .only_check_end_entity_revocation();
                if !profile.require_client_auth {
                    vb = vb.allow_unauthenticated();
                }
                let inner = vb.build().map_err(|e| cfg("client verifier", e))?;
                let mut sc = ServerConfig::builder_with_provider(provider)
                    .with_protocol_versions(&versions)
                    .map_err(|e| cfg("versions", e))?
                    .with_client_cert_verifier(Arc::new(PinnedClient { inner, pin }))
                    .with_single_cert(chain.clone(), key.clone_key())
                    .map_err(|e| cfg("server certificate", e))?;
                if profile.session_resumption {
                    sc.session_storage = ServerSessionMemoryCache::new(256);
                    if profile.session_tickets {
                        sc.ticketer = match which {
                            Provider::Ring => rustls::crypto::ring::Ticketer::new(),
                            #[cfg(feature = "aws-lc")]
                            Provider::AwsLc => rustls::crypto::aws_lc_rs::Ticketer::new(),
                        }
                        .map_err(|e| cfg("ticketer", e))?;
                    }
                } else {
                    sc.session_storage = Arc::new(NoServerSessionStorage {});
                }
                sc.send_tls13_tickets = profile.effective_num_tickets() as usize;
                if let Some(k) = &keylog {
                    sc.key_log = k.clone();
                }
                Some(Arc::new(sc))
            }
            _ => None,
        };
        let name = profile
            .server_name
            .clone()
            .unwrap_or_else(|| "localhost".into());
        let server_name = ServerName::try_from(name.clone())
            .map_err(|e| cfg(&format!("server name {name:?}"), e))?;
        Ok(RustlsBackend {
            kind: which.kind(),
            profile: profile.clone(),
            client: Arc::new(client),
            server,
            server_name,
        })
    }
}

impl TlsBackend for RustlsBackend {
    fn kind(&self) -> BackendKind {
        self.kind
    }
    fn profile(&self) -> &TlsProfile {
        &self.profile
    }
    fn client(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        set_timeouts(&tcp, &self.profile)?;
        let conn = ClientConnection::new(self.client.clone(), self.server_name.clone())
            .map_err(|e| map_error(&e))?;
        Ok(Box::new(RustlsStream {
            conn: rustls::Connection::Client(conn),
            tcp,
            done: false,
            profile: self.profile.clone(),
        }))
    }
    fn server(&self, tcp: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        let cfg = self
            .server
            .clone()
            .ok_or(TlsError::Profile(ProfileError::Missing("cert")))?;
        set_timeouts(&tcp, &self.profile)?;
        let conn = ServerConnection::new(cfg).map_err(|e| map_error(&e))?;
        Ok(Box::new(RustlsStream {
            conn: rustls::Connection::Server(conn),
            tcp,
            done: false,
            profile: self.profile.clone(),
        }))
    }
}

/// Every certificate of a PEM file, with an error that names the file.
fn pem_certs(
    what: &'static str,
    p: &std::path::Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |reason: String| {
        TlsError::Profile(ProfileError::MissingFile {
            what,
            path: p.to_owned(),
            reason,
        })
    };
    let v: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(p)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad(format!("not a valid {what}: {e}")))?;
    if v.is_empty() {
        return Err(bad(format!("not a valid {what}: no certificate in file")));
    }
    Ok(v)
}

/// Maps a rustls error (ours: local; `AlertReceived`: the peer's).
fn map_error(e: &RError) -> TlsError {
    let by = Side::Local;
    let detail = e.to_string();
    match e {
        RError::InvalidCertificate(ce) => match ce {
            CertificateError::UnknownIssuer => TlsError::UnknownCa { by, detail },
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. } => TlsError::Expired { by, detail },
            CertificateError::Revoked => TlsError::Revoked { by, detail },
            CertificateError::ApplicationVerificationFailure => TlsError::PinMismatch,
            _ => TlsError::BadCertificate { by, detail },
        },
        RError::NoCertificatesPresented => TlsError::BadCertificate { by, detail },
        RError::AlertReceived(a) => from_alert(u8::from(*a), Side::Peer, &format!("{a:?}")),
        RError::PeerIncompatible(p) => match p {
            PeerIncompatible::NoCipherSuitesInCommon | PeerIncompatible::NoKxGroupsInCommon => {
                TlsError::NoSharedCipher { by, detail }
            }
            PeerIncompatible::ServerDoesNotSupportTls12Or13
            | PeerIncompatible::ServerTlsVersionIsDisabledByOurConfig
            | PeerIncompatible::SupportedVersionsExtensionRequired
            | PeerIncompatible::Tls12NotOffered
            | PeerIncompatible::Tls12NotOfferedOrEnabled => {
                TlsError::ProtocolVersion { by, detail }
            }
            _ => TlsError::HandshakeFailed(detail),
        },
        _ => TlsError::HandshakeFailed(detail),
    }
}

fn map_io(e: io::Error) -> TlsError {
    if e.kind() == io::ErrorKind::InvalidData {
        if let Some(r) = e.get_ref().and_then(|x| x.downcast_ref::<RError>()) {
            return map_error(r);
        }
    }
    TlsError::from(e)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

struct RustlsStream {
    conn: rustls::Connection,
    tcp: TcpStream,
    done: bool,
    profile: TlsProfile,
}

impl RustlsStream {
    fn with_stream<R>(&mut self, f: impl FnOnce(&mut dyn ReadWrite) -> R) -> R {
        match &mut self.conn {
            rustls::Connection::Client(c) => f(&mut rustls::Stream::new(c, &mut self.tcp)),
            rustls::Connection::Server(c) => f(&mut rustls::Stream::new(c, &mut self.tcp)),
        }
    }
}

impl Read for RustlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.handshake()?;
        self.with_stream(|s| s.read(buf))
            .map_err(|e| map_io(e).into())
    }
}

impl Write for RustlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.handshake()?;
        self.with_stream(|s| s.write(buf))
            .map_err(|e| map_io(e).into())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.with_stream(|s| s.flush())
            .map_err(|e| map_io(e).into())
    }
}

impl TlsStream for RustlsStream {
    fn has_buffered_data(&mut self) -> bool {
        // Decrypts complete records already read from the socket; reports the plaintext waiting.
        match self.conn.process_new_packets() {
            Ok(st) => st.plaintext_bytes_to_read() > 0 || st.peer_has_closed(),
            Err(_) => true, // the next read reports the error
        }
    }
    fn handshake_step(&mut self) -> Result<bool, TlsError> {
        if self.done {
            return Ok(true);
        }
        while self.conn.is_handshaking() {
            match self.conn.complete_io(&mut self.tcp) {
                Ok((0, 0)) if self.conn.is_handshaking() => return Err(TlsError::Closed),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(map_io(e)),
            }
        }
        self.handshake().map(|()| true)
    }
    fn handshake(&mut self) -> Result<(), TlsError> {
        if self.done {
            return Ok(());
        }
        while self.conn.is_handshaking() {
            let (r, w) = match self.conn.complete_io(&mut self.tcp) {
                Ok(x) => x,
                Err(e) => {
                    super::drain_after_failure(&self.tcp);
                    return Err(map_io(e));
                }
            };
            if r == 0 && w == 0 && self.conn.is_handshaking() {
                return Err(TlsError::Closed);
            }
        }
        // Flush anything queued after the last flight (e.g. TLS 1.3 server tickets).
        while self.conn.wants_write() {
            self.conn.write_tls(&mut self.tcp).map_err(map_io)?;
        }
        self.done = true;
        check_negotiated(&self.profile, self)
    }
    fn negotiated_version(&self) -> Option<TlsVersion> {
        TlsVersion::from_wire(u16::from(self.conn.protocol_version()?))
    }
    fn negotiated_suite(&self) -> Option<&'static CipherSuite> {
        suites::by_code(self.negotiated_suite_code()?)
    }
    fn negotiated_suite_code(&self) -> Option<u16> {
        Some(u16::from(self.conn.negotiated_cipher_suite()?.suite()))
    }
    fn peer_certificate(&self) -> Option<Vec<u8>> {
        self.conn
            .peer_certificates()?
            .first()
            .map(|c| c.as_ref().to_vec())
    }
    fn session_resumed(&self) -> bool {
        self.conn.handshake_kind() == Some(HandshakeKind::Resumed)
    }
    fn peer_chain(&self) -> Vec<Vec<u8>> {
        self.conn
            .peer_certificates()
            .map(|v| v.iter().map(|c| c.as_ref().to_vec()).collect())
            .unwrap_or_default()
    }
    fn negotiated_group(&self) -> Option<KxGroup> {
        KxGroup::from_code(u16::from(self.conn.negotiated_key_exchange_group()?.name()))
    }
    fn rekey(&mut self) -> Result<(), TlsError> {
        self.handshake()?;
        match self.negotiated_version() {
            Some(TlsVersion::Tls13) => {
                self.conn
                    .refresh_traffic_keys()
                    .map_err(|e| map_error(&e))?;
                while self.conn.wants_write() {
                    self.conn.write_tls(&mut self.tcp).map_err(map_io)?;
                }
                Ok(())
            }
            _ => Err(TlsError::Unsupported {
                backend: "rustls",
                what: "TLS 1.2 renegotiation".into(),
            }),
        }
    }
    fn shutdown(&mut self) -> Result<(), TlsError> {
        self.conn.send_close_notify();
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.tcp) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                    ) =>
                {
                    break
                }
                Err(e) => return Err(map_io(e)),
            }
        }
        Ok(())
    }
    fn tcp(&self) -> &TcpStream {
        &self.tcp
    }
}
