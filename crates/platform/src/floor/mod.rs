//! The handshake floor: what a handshake's public-key operations cost on this machine, measured
//! in the same run as the handshakes (`docs/measurement.md`, "How results are measured").
//!
//! HT can never be below the sum of its public-key operations; HT divided by that sum says how
//! much the stack, the record layer, the kernel and the scheduler add. The count per full
//! handshake, with IEC 62351-3's mandatory mutual authentication and a one-level chain (the lab
//! PKI: CA → leaf, same key type), is:
//!
//! | key exchange | signatures | verifications with a peer key new in this handshake | certificate signatures (CA key, kept in the trust store) | key agreement |
//! |---|---|---|---|---|
//! | RSA (TLS 1.0-1.2) | client CertificateVerify (1); server decrypts the premaster (1) | server checks CertificateVerify (1); client encrypts the premaster to the server key (1) | 2 (each side checks the peer leaf) | – |
//! | DHE_RSA, ECDHE_RSA (TLS 1.2) | ServerKeyExchange (1), client CertificateVerify (1) | client checks ServerKeyExchange, server checks CertificateVerify (2) | 2 | 2 key generations + 2 derivations |
//! | ECDHE_ECDSA | the same with ECDSA | | | |
//! | TLS 1.3 | server and client CertificateVerify (2) | 2 | 2 | 2 + 2 (X25519) |
//! | resumed TLS 1.2 (ID, ticket) | – | – | – | – |
//! | resumed TLS 1.3 (psk_dhe_ke) | – | – | – | 2 + 2 |
//!
//! Each operation is timed with the library the handshake runs on ([`FloorLib`]): OpenSSL for
//! the `openssl` backend ([`openssl`]), *ring* for `rustls` ([`ring`]), GnuTLS and the nettle
//! and GMP libraries under it for `gnutls` ([`gnutls`]). An operation a library cannot do
//! through a public interface is timed with OpenSSL and the floor says so
//! ([`FloorOp::library`], [`Floor::same_library`]). With OpenSSL (the scenario's own server
//! key; median of repetitions):
//! * signatures: `EVP_DigestSign` over 64 bytes with the loaded private key; RSA-PSS (SHA-256)
//!   at TLS 1.2 and 1.3, which is what OpenSSL 3.0 negotiates for RSA keys at 1.2 too
//!   (`rsa_pss_rsae_sha256` heads its `signature_algorithms`; checked with
//!   `examples/handshake_anatomy.rs`), PKCS#1 v1.5 at 1.0/1.1;
//! * verifications with a peer key new in this handshake: the public key is rebuilt from its
//!   components (RSA n and e, the EC point) before every verification, so the Montgomery set-up a
//!   fresh modulus needs is counted (about 7 µs at 2048 bits), but not OpenSSL 3.0's generic key
//!   *decoder* (d2i_PUBKEY, about 0.09 ms): decoding is not cryptography;
//! * certificate signatures: the CA key is decoded once into the trust store, so these are plain
//!   verifications with a kept key (sha256WithRSAEncryption: PKCS#1 v1.5);
//! * key agreement: `EVP_PKEY_keygen` and `EVP_PKEY_derive`.
//!
//! A trust anchor's self-signature is not checked (OpenSSL, GnuTLS and rustls all skip it), so
//! the chain costs one verification per side. DHE uses a 2048-bit group with a 256-bit subgroup
//! with OpenSSL (RFC 5114 §2.3: the exponent size OpenSSL's ffdhe2048 uses); ECDHE uses X25519
//! (what OpenSSL and rustls negotiate: checked with `examples/handshake_anatomy.rs`) and P-256
//! for GnuTLS (its first group).
//!
//! GnuTLS differs in two ways ([`gnutls`] has the details and the GnuTLS sources that show them):
//! between two GnuTLS 3.7 peers TLS 1.2 signatures are PKCS#1 v1.5 ([`FloorLib::rsa_pss`]), and
//! its ffdhe2048 uses full-length secret exponents (below q = (p-1)/2, 2047 bits) and checks the
//! peer's value with a second exponentiation, so its DHE is `ffdhe2048/2047`.
//!
//! Not counted, but measured beside the floor ([`Floor::not_counted`]): decoding the peer's
//! certificate (d2i_X509 of the leaf, once per side). Every stack must parse the certificate it
//! receives, but how long that takes is the library's business, not the cryptography's: on
//! OpenSSL 3.0 it is about 0.1 ms per RSA-2048 leaf, almost all of it the generic key decoder.

use crate::scenario::{Case, Resumption};
use gander_tls::backend::BackendKind;
use gander_tls::pki::{KeySpec, PkiSet};
use gander_tls::suites::KeyExchange;
use gander_tls::{KxGroup, TlsVersion};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

pub mod awslc;
pub mod gnutls;
pub mod openssl;
pub mod ring;

/// One kind of operation in a floor, its count per handshake and its measured median.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FloorOp {
    /// The operation, e.g. `sign rsa2048`.
    pub op: String,
    /// How many times one handshake performs it (both sides together).
    pub count: u32,
    /// Median of the timed repetitions, ms.
    pub each_ms: f64,
    /// Repetitions timed.
    pub reps: usize,
    /// The library that timed this operation (empty in results from before per-operation
    /// libraries: then [`Floor::library`]).
    #[serde(default)]
    pub library: String,
}

/// The floor of one case's handshake.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    /// Sum over `ops` of count times median, ms: the handshake's public-key floor.
    pub total_ms: f64,
    /// The operations counted in the floor.
    pub ops: Vec<FloorOp>,
    /// The library that timed the operations (several, joined with " + ", when one had to be
    /// timed with another library).
    pub library: String,
    /// Whether every operation was timed with the library the handshake ran on.
    pub same_library: bool,
    /// How the handshake was modelled (key exchange, resumption, what was left out).
    pub note: String,
    /// Measured beside the floor, not part of it: decoding the peer certificate on each side.
    #[serde(default)]
    pub not_counted: Vec<FloorOp>,
}

impl Floor {
    /// The libraries that timed its operations (counted or not), in order of first use.
    pub fn libraries(&self) -> Vec<&str> {
        let mut libs: Vec<&str> = Vec::new();
        for o in self.ops.iter().chain(&self.not_counted) {
            if !o.library.is_empty() && !libs.contains(&o.library.as_str()) {
                libs.push(&o.library);
            }
        }
        libs
    }
}

/// A key-agreement group as a handshake uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// X25519 (RFC 7748).
    X25519,
    /// NIST P-256 (secp256r1).
    P256,
    /// Finite-field DH with a 2048-bit prime; which prime and how long the secret exponent is
    /// are the library's ([`FloorLib::dh_name`]).
    Dh2048,
}

/// What one timed repetition does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// A handshake signature (ServerKeyExchange, CertificateVerify) with the own key.
    Sign,
    /// Checking the peer's handshake signature with a public key that arrived in this
    /// handshake: the library's per-key set-up (e.g. RSA Montgomery constants) is counted.
    VerifyFresh,
    /// Checking a certificate's signature with the CA key, kept decoded in the trust store.
    VerifyCert,
    /// RSA key transport, server side: decrypting the premaster secret.
    PremasterDecrypt,
    /// RSA key transport, client side: encrypting the premaster secret to the server key.
    PremasterEncrypt,
    /// Generating an ephemeral key pair in the group.
    Keygen(Group),
    /// Deriving the shared secret from the own key and the peer's public value.
    Derive(Group),
    /// Parsing the peer's certificate (not counted in the floor).
    DecodeCert,
    /// ML-KEM-768 key generation (FIPS 203 ML-KEM.KeyGen), the client's key share.
    KemKeygen,
    /// ML-KEM-768 encapsulation to the client's encapsulation key, imported as received
    /// (FIPS 203 ML-KEM.Encaps), the server's key share.
    KemEncap,
    /// ML-KEM-768 decapsulation of the server's ciphertext (FIPS 203 ML-KEM.Decaps), client.
    KemDecap,
}

/// The inputs of an operation: the scenario's key and certificate, and the signature scheme.
pub struct OpInput<'a> {
    /// The certificate key type.
    pub spec: KeySpec,
    /// RSA-PSS (TLS 1.2 and 1.3) rather than PKCS#1 v1.5 (TLS 1.0/1.1) for handshake signatures.
    pub pss: bool,
    /// The own private key (PEM).
    pub key: &'a Path,
    /// The own certificate (PEM).
    pub cert: &'a Path,
}

/// One repetition of an operation, with everything it needs prepared outside the timing.
pub type Rep<'a> = Box<dyn FnMut() -> Result<(), OpError> + 'a>;

/// A library failure while an operation is prepared (outside the timed loop).
pub(crate) fn prep_fail(
    what: &str,
    e: impl std::error::Error + Send + Sync + 'static,
) -> PrepError {
    PrepError::Failed(OpError::library(what, e))
}

/// Certificate decoding as the rustls-based floors (ring, aws-lc-rs) time it: webpki parses the
/// leaf, as rustls does in a handshake. A certificate webpki cannot parse at all fails here, not
/// in the timed loop.
pub(crate) fn webpki_decode_cert<'a>(input: &OpInput<'a>) -> Result<Rep<'a>, PrepError> {
    use rustls_pki_types::pem::PemObject;
    let der = rustls_pki_types::CertificateDer::from_pem_file(input.cert)
        .map_err(|e| prep_fail(&input.cert.display().to_string(), e))?;
    webpki::EndEntityCert::try_from(&der).map_err(|e| prep_fail("webpki", e))?;
    Ok(Box::new(move || {
        webpki::EndEntityCert::try_from(&der)
            .map(|_| ())
            .map_err(|e| OpError::library("webpki", e))
    }))
}

/// Why a floor library could not prepare or repeat an operation: the library's own error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// OpenSSL refused (its error stack).
    #[error("{0}")]
    Openssl(#[from] ::openssl::error::ErrorStack),
    /// GnuTLS, nettle or GMP refused.
    #[error("{0}")]
    Gnutls(#[from] gander_gnutls::GnutlsError),
    /// The GnuTLS floor could not use the scenario's key as asked.
    #[error("{0}")]
    GnutlsFloor(#[from] gnutls::GnutlsFloorError),
    /// *ring*, webpki or the PEM reader refused, in the step named.
    #[error("{what}: {source}")]
    Library {
        /// The step, e.g. `ring: RSA sign`.
        what: String,
        /// The library's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A key or certificate file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A key or certificate file could not be decoded.
    #[error("{}: {source}", path.display())]
    Decode {
        /// The file.
        path: std::path::PathBuf,
        /// The library's error.
        source: ::openssl::error::ErrorStack,
    },
    /// A result inside the repetition was wrong (a signature that does not verify, a key of
    /// the wrong type): the floor would time something other than the handshake's operation.
    #[error("{0}")]
    Check(&'static str),
}

/// Why a library did not time an operation.
#[derive(Debug)]
pub enum PrepError {
    /// The library has no public interface for it (the floor falls back to OpenSSL).
    Unsupported(String),
    /// The library failed while preparing it.
    Failed(OpError),
}

impl OpError {
    /// A library's error in the step `what`.
    pub fn library(what: &str, e: impl std::error::Error + Send + Sync + 'static) -> OpError {
        OpError::Library {
            what: what.to_string(),
            source: Box::new(e),
        }
    }
}

impl<E: Into<OpError>> From<E> for PrepError {
    fn from(e: E) -> Self {
        PrepError::Failed(e.into())
    }
}

/// Why a floor was not measured.
#[derive(Debug, thiserror::Error)]
#[error("floor ({library}): {op}: {reason}")]
pub struct FloorError {
    /// The library that was to time the operation (name and version).
    pub library: String,
    /// The operation, e.g. `sign RSA-2048`.
    pub op: String,
    /// What went wrong: the library's own message.
    pub reason: String,
    /// Whether the library has no public interface for the operation (rather than failing).
    pub unsupported: bool,
}

/// A library that times a floor's operations the way its TLS stack performs them.
pub trait FloorLib {
    /// Short id for caches, e.g. `openssl`.
    fn id(&self) -> &'static str;
    /// Name and version, e.g. `OpenSSL 3.0.19 27 Jan 2026`.
    fn name(&self) -> String;
    /// The group its handshakes use for ECDHE.
    fn ecdh_group(&self) -> Group;
    /// How it names its 2048-bit DHE, e.g. `DH-2048/256` (prime bits / exponent bits).
    fn dh_name(&self) -> String;
    /// Whether its handshakes at `version` sign with RSA-PSS rather than PKCS#1 v1.5 when the
    /// key is RSA. RSA-PSS from TLS 1.2 on by default (OpenSSL 3.0, rustls); GnuTLS prefers
    /// PKCS#1 v1.5 at TLS 1.2.
    fn rsa_pss(&self, version: TlsVersion) -> bool {
        version >= TlsVersion::Tls12
    }
    /// One repetition of `op`.
    fn prepare<'a>(&'a self, op: OpKind, input: &OpInput<'a>) -> Result<Rep<'a>, PrepError>;
}

/// The floor library for a backend. `openssl35` is timed by this process's OpenSSL: the
/// manager asks the binary that links OpenSSL 3.5 for those floors (`gander run-floor`).
pub fn library_for(backend: BackendKind) -> Box<dyn FloorLib> {
    match backend {
        BackendKind::Openssl | BackendKind::Openssl35 => Box::new(openssl::Openssl),
        BackendKind::Rustls => Box::new(ring::Ring),
        BackendKind::RustlsAwslc => Box::new(awslc::AwsLc),
        BackendKind::Gnutls => Box::new(gnutls::Gnutls),
    }
}

/// What a floor depends on: the handshake's library, version, suite, certificate key, group
/// and resumption. Serialised, it is what the manager hands `gander run-floor` in the binary
/// that links OpenSSL 3.5.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FloorSpec {
    /// The backend the handshake ran on.
    pub backend: BackendKind,
    /// The TLS version.
    pub version: TlsVersion,
    /// The suite's IANA name.
    pub suite: String,
    /// The certificate key type (`rsa2048`, `mldsa44`, ...).
    pub key: String,
    /// The key-exchange group; `None`: the library's default ([`FloorLib::ecdh_group`]).
    pub group: Option<KxGroup>,
    /// Session resumption.
    pub resumption: Resumption,
    /// A libiec61850 peer (its mbedTLS is not timed here).
    pub mbedtls: bool,
}

/// Why a [`FloorSpec`] does not describe a handshake gander knows.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FloorSpecError {
    /// The suite is not in the catalogue.
    #[error("unknown cipher suite {0:?}")]
    Suite(String),
    /// The key type is not one of the lab PKI's.
    #[error(transparent)]
    Key(#[from] gander_tls::pki::UnknownKeySpec),
}

impl FloorSpec {
    /// The floor inputs of a case.
    pub fn of(case: &Case) -> Option<FloorSpec> {
        let tls = case.tls.as_ref()?;
        Some(FloorSpec {
            backend: tls.backend,
            version: tls.version,
            suite: tls.suite.name.to_string(),
            key: case.key.0.dir_name(),
            group: tls.group,
            resumption: case.params.session_resumption,
            mbedtls: [case.params.server_stack, case.params.client_stack]
                .contains(&crate::scenario::Stack::Libiec61850),
        })
    }
}

/// Times operations once per run, library and key, then sums them per case.
pub struct FloorMeter {
    /// Per-operation time budget: repetitions stop after this long (at least `min_reps`).
    budget: Duration,
    min_reps: usize,
    max_reps: usize,
    cache: HashMap<String, (f64, usize)>,
}
impl Default for FloorMeter {
    fn default() -> Self {
        FloorMeter {
            budget: Duration::from_millis(250),
            min_reps: 3,
            max_reps: 200,
            cache: HashMap::new(),
        }
    }
}

/// Batches each operation is timed in. A floor is a lower bound of what the cryptography
/// costs: a disturbance (another process, a host hiccup) during one batch inflates that batch's
/// median only, so the floor takes the lowest of the batch medians (each batch's median already
/// ignores single slow repetitions). Without this, one disturbed timing moved the RSA-2048 floor
/// from 0.72 to 0.91 ms in one of four runs here.
const BATCHES: usize = 5;
const BATCH_PAUSE: Duration = Duration::from_millis(10);

/// The lowest of a non-empty list of batch medians.
fn lowest(medians: &[f64]) -> f64 {
    medians.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Median (nearest rank, as every report) of a non-empty vector of nanoseconds, in ms.
fn median_ms(mut v: Vec<u64>) -> f64 {
    v.sort_unstable();
    gander_measure::stats::nearest_rank(&v, 50.0) as f64 / 1e6
}

impl FloorMeter {
    /// A meter with a smaller time budget (tests).
    pub fn quick() -> Self {
        FloorMeter {
            budget: Duration::from_millis(30),
            min_reps: 1,
            max_reps: 20,
            cache: HashMap::new(),
        }
    }

    fn time(
        &mut self,
        key: String,
        mut f: impl FnMut() -> Result<(), OpError>,
    ) -> Result<(f64, usize), OpError> {
        if let Some(v) = self.cache.get(&key) {
            return Ok(*v);
        }
        f()?; // warm-up: first call pays for lazy initialisation
              // BATCHES short batches, a pause between them; the floor takes the lowest batch median.
        let mut medians = Vec::new();
        let mut reps = 0;
        let per_batch = self.budget / BATCHES as u32;
        for b in 0..BATCHES {
            if b > 0 {
                std::thread::sleep(BATCH_PAUSE);
            }
            let mut samples = Vec::new();
            let start = Instant::now();
            while samples.len() < self.max_reps
                && (samples.len() < self.min_reps || start.elapsed() < per_batch)
            {
                let t = Instant::now();
                f()?;
                samples.push(t.elapsed().as_nanos() as u64);
            }
            reps += samples.len();
            medians.push(median_ms(samples));
        }
        let v = (lowest(&medians), reps);
        self.cache.insert(key, v);
        Ok(v)
    }

    /// The floor of `case`'s handshake with the keys of `pki`; `None` for cleartext.
    pub fn floor(&mut self, case: &Case, pki: &PkiSet) -> Result<Option<Floor>, FloorError> {
        match FloorSpec::of(case) {
            None => Ok(None),
            Some(spec) => self.floor_of(&spec, pki).map(Some),
        }
    }

    /// The floor of the handshake `spec` describes, with the keys of `pki`.
    pub fn floor_of(&mut self, fs: &FloorSpec, pki: &PkiSet) -> Result<Floor, FloorError> {
        let bad = |reason: String| FloorError {
            library: fs.backend.name().into(),
            op: "floor".into(),
            reason,
            unsupported: false,
        };
        let suite = gander_tls::suites::lookup(&fs.suite)
            .ok_or_else(|| bad(FloorSpecError::Suite(fs.suite.clone()).to_string()))?;
        let spec: KeySpec = fs
            .key
            .parse()
            .map_err(|e: gander_tls::pki::UnknownKeySpec| bad(e.to_string()))?;
        let lib = library_for(fs.backend);
        let resumed = fs.resumption != Resumption::Off;
        let kx = suite.kx;
        // The group the handshake agrees on, and whether ML-KEM is in it.
        let (ecdh, kem) = match fs.group {
            None => (Some(lib.ecdh_group()), false),
            Some(KxGroup::X25519) => (Some(Group::X25519), false),
            Some(KxGroup::Secp256r1) => (Some(Group::P256), false),
            Some(KxGroup::X25519Mlkem768) => (Some(Group::X25519), true),
            Some(KxGroup::Mlkem768) => (None, true),
        };
        let group_name = |g: Group| match g {
            Group::X25519 => "X25519".to_string(),
            Group::P256 => "P-256".to_string(),
            Group::Dh2048 => lib.dh_name(),
        };
        let kx_name = match fs.group {
            Some(g) => g.name().to_string(),
            None => ecdh.map(group_name).unwrap_or_default(),
        };
        let pss = lib.rsa_pss(fs.version);
        let (sig_name, sig_alg) = match spec {
            KeySpec::Rsa(b) => (format!("RSA-{b}"), if pss { "PSS" } else { "PKCS1" }),
            KeySpec::P256 => ("ECDSA P-256".into(), "SHA256"),
            KeySpec::P384 => ("ECDSA P-384".into(), "SHA384"),
            KeySpec::MlDsa44 => ("ML-DSA-44".into(), "pure"),
            KeySpec::MlDsa65 => ("ML-DSA-65".into(), "pure"),
        };
        let cert_alg = match spec {
            KeySpec::Rsa(_) => "PKCS1",
            KeySpec::P256 => "SHA256",
            KeySpec::P384 => "SHA384",
            KeySpec::MlDsa44 | KeySpec::MlDsa65 => "pure",
        };
        let mut ops: Vec<(OpKind, String, u32)> = Vec::new();
        let sign = (OpKind::Sign, format!("{sig_name} {sig_alg} sign"));
        let verify = (
            OpKind::VerifyFresh,
            format!("{sig_name} {sig_alg} verify (peer key new in this handshake)"),
        );
        let verify_chain = (
            OpKind::VerifyCert,
            format!("{sig_name} {cert_alg} verify (certificate, CA key)"),
        );
        let agree = |g: Group| {
            [
                (
                    OpKind::Keygen(g),
                    format!("{} key generation", group_name(g)),
                ),
                (OpKind::Derive(g), format!("{} derivation", group_name(g))),
            ]
        };
        let mut push = |(k, l): (OpKind, String), n: u32| ops.push((k, l, n));
        let push_agreement = |push: &mut dyn FnMut((OpKind, String), u32)| {
            if let Some(g) = ecdh {
                for x in agree(g) {
                    push(x, 2);
                }
            }
            if kem {
                push(
                    (
                        OpKind::KemKeygen,
                        "ML-KEM-768 key generation (client)".into(),
                    ),
                    1,
                );
                push(
                    (
                        OpKind::KemEncap,
                        "ML-KEM-768 encapsulation (server, client key new in this handshake)"
                            .into(),
                    ),
                    1,
                );
                push(
                    (OpKind::KemDecap, "ML-KEM-768 decapsulation (client)".into()),
                    1,
                );
            }
        };
        let note;
        if resumed {
            if fs.resumption == Resumption::Psk {
                push_agreement(&mut push);
                note = "resumed TLS 1.3 (psk_dhe_ke): key agreement only".to_string();
            } else {
                note = "resumed TLS 1.2: no public-key operations".to_string();
            }
        } else {
            match kx {
                KeyExchange::Rsa => {
                    push(
                        (
                            OpKind::PremasterDecrypt,
                            format!("{sig_name} decrypt (premaster)"),
                        ),
                        1,
                    );
                    push(
                        (
                            OpKind::PremasterEncrypt,
                            format!(
                                "{sig_name} encrypt (premaster, peer key new in this handshake)"
                            ),
                        ),
                        1,
                    );
                    push(sign, 1);
                    push(verify, 1);
                    push(verify_chain, 2);
                    note = "RSA key transport, mutual authentication, one-level chain".into();
                }
                KeyExchange::DheRsa | KeyExchange::DhRsa => {
                    push(sign, 2);
                    push(verify, 2);
                    push(verify_chain, 2);
                    for x in agree(Group::Dh2048) {
                        push(x, 2);
                    }
                    note = format!(
                        "DHE ({}), mutual authentication, one-level chain",
                        lib.dh_name()
                    );
                }
                KeyExchange::EcdheRsa | KeyExchange::EcdheEcdsa | KeyExchange::AnyTls13 => {
                    push(sign, 2);
                    push(verify, 2);
                    push(verify_chain, 2);
                    push_agreement(&mut push);
                    note = format!(
                        "key exchange over {kx_name}, mutual authentication, one-level chain"
                    );
                }
            }
        }
        let input = OpInput {
            spec,
            pss: pss && matches!(spec, KeySpec::Rsa(_)),
            key: &pki.server_key,
            cert: &pki.server,
        };
        let mut out = Vec::new();
        let mut total = 0.0;
        for (kind, op, count) in ops {
            let (each, reps, library) = self.measure(lib.as_ref(), kind, &op, &input)?;
            total += each * count as f64;
            out.push(FloorOp {
                op,
                count,
                each_ms: each,
                reps,
                library,
            });
        }
        let mut not_counted = Vec::new();
        if !resumed {
            let op = format!("decode the peer certificate ({sig_name} leaf)");
            let (each, reps, library) =
                self.measure(lib.as_ref(), OpKind::DecodeCert, &op, &input)?;
            not_counted.push(FloorOp {
                op,
                count: 2,
                each_ms: each,
                reps,
                library,
            });
        }
        let own = lib.name();
        // libiec61850 runs its TLS on the mbedTLS it bundles, which gander cannot time: a
        // handshake with a libiec61850 peer gets the backend's floor, marked as another library's.
        let mbedtls = fs.mbedtls;
        let mut note = note;
        if mbedtls {
            note.push_str("; a libiec61850 peer runs on its bundled mbedTLS, not timed here");
        }
        let mut floor = Floor {
            total_ms: total,
            same_library: !mbedtls && out.iter().all(|o| o.library == own),
            library: String::new(),
            ops: out,
            note,
            not_counted,
        };
        floor.library = floor.libraries().join(" + ");
        Ok(floor)
    }

    /// Times `kind` with `lib`, or with OpenSSL when `lib` has no public interface for it.
    fn measure(
        &mut self,
        lib: &dyn FloorLib,
        kind: OpKind,
        label: &str,
        input: &OpInput,
    ) -> Result<(f64, usize, String), FloorError> {
        // Key agreement does not depend on the certificate key.
        let scope = match kind {
            OpKind::Keygen(_) | OpKind::Derive(_) => "any".to_string(),
            _ => input.spec.dir_name().to_string(),
        };
        let scope = match kind {
            OpKind::KemKeygen | OpKind::KemEncap | OpKind::KemDecap => "any".to_string(),
            _ => scope,
        };
        let key = format!("{}:{scope}:{label}", lib.id());
        if let Some(v) = self.cache.get(&key) {
            return Ok((v.0, v.1, lib.name()));
        }
        let fail = |reason: String, unsupported: bool| FloorError {
            library: lib.name(),
            op: label.to_string(),
            reason,
            unsupported,
        };
        match lib.prepare(kind, input) {
            Ok(mut rep) => {
                let (each, reps) = self
                    .time(key, &mut rep)
                    .map_err(|why| fail(why.to_string(), false))?;
                Ok((each, reps, lib.name()))
            }
            Err(PrepError::Unsupported(_)) if lib.id() != "openssl" => {
                self.measure(&openssl::Openssl, kind, label, input)
            }
            Err(PrepError::Unsupported(why)) => Err(fail(why, true)),
            Err(PrepError::Failed(why)) => Err(fail(why.to_string(), false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_keep_the_least_disturbed_median() {
        assert_eq!(lowest(&[0.9, 0.72, 0.75]), 0.72);
        assert_eq!(median_ms(vec![3_000_000, 1_000_000, 2_000_000]), 2.0);
        // A run of slow calls in one batch does not move the floor.
        let mut m = FloorMeter::quick();
        let mut calls = 0u32;
        let (each, reps) = m
            .time("k".into(), || {
                calls += 1;
                let d = if (2..=4).contains(&calls) { 3 } else { 1 };
                std::thread::sleep(Duration::from_millis(d));
                Ok(())
            })
            .unwrap();
        assert!(each < 2.0, "{each}");
        assert!(reps >= BATCHES);
        // Cached: the same key is not timed again.
        assert_eq!(
            m.time("k".into(), || Err(OpError::Check("timed twice")))
                .unwrap(),
            (each, reps)
        );
    }

    /// Every library prepares and runs every operation it claims, for RSA and ECDSA keys,
    /// and says `Unsupported` only where its TLS stack cannot do the operation at all.
    #[test]
    fn every_library_runs_its_operations() {
        let dir = tempfile::tempdir().unwrap();
        let specs = [KeySpec::Rsa(2048), KeySpec::P256];
        gander_tls::pki::init(dir.path(), &specs).unwrap();
        let groups = [Group::X25519, Group::P256, Group::Dh2048];
        let mut kinds = vec![
            OpKind::Sign,
            OpKind::VerifyFresh,
            OpKind::VerifyCert,
            OpKind::PremasterDecrypt,
            OpKind::PremasterEncrypt,
            OpKind::DecodeCert,
        ];
        for g in groups {
            kinds.push(OpKind::Keygen(g));
            kinds.push(OpKind::Derive(g));
        }
        kinds.extend([OpKind::KemKeygen, OpKind::KemEncap, OpKind::KemDecap]);
        for backend in [
            BackendKind::Openssl,
            BackendKind::Rustls,
            BackendKind::RustlsAwslc,
            BackendKind::Gnutls,
        ] {
            let lib = library_for(backend);
            for spec in specs {
                let set = PkiSet::paths(dir.path(), spec);
                let input = OpInput {
                    spec,
                    pss: matches!(spec, KeySpec::Rsa(_)),
                    key: &set.server_key,
                    cert: &set.server,
                };
                for &op in &kinds {
                    let rsa_only =
                        matches!(op, OpKind::PremasterDecrypt | OpKind::PremasterEncrypt);
                    let kem = matches!(op, OpKind::KemKeygen | OpKind::KemEncap | OpKind::KemDecap);
                    match lib.prepare(op, &input) {
                        Ok(mut rep) => {
                            rep().unwrap_or_else(|e| panic!("{} {op:?} {spec:?}: {e}", lib.id()));
                            rep().unwrap_or_else(|e| panic!("{} {op:?} {spec:?}: {e}", lib.id()));
                        }
                        Err(PrepError::Unsupported(why)) => {
                            let dh = op == OpKind::Keygen(Group::Dh2048)
                                || op == OpKind::Derive(Group::Dh2048);
                            let expected = match backend {
                                // ML-KEM only from OpenSSL 3.5 on.
                                BackendKind::Openssl | BackendKind::Openssl35 => {
                                    kem && !gander_tls::backend::linked_openssl35()
                                }
                                BackendKind::Rustls => rsa_only || dh || kem,
                                BackendKind::RustlsAwslc => rsa_only || dh,
                                BackendKind::Gnutls => kem,
                            };
                            assert!(expected, "{} {op:?} {spec:?} unsupported: {why}", lib.id());
                        }
                        Err(PrepError::Failed(why)) => {
                            // RSA key transport with an ECDSA key is a configuration error.
                            assert!(
                                rsa_only && spec == KeySpec::P256,
                                "{} {op:?} {spec:?}: {why}",
                                lib.id()
                            );
                        }
                    }
                }
            }
        }
    }
}
