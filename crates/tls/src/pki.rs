//! Lab PKI: a CA and server/client certificates per key type, CRLs and negative-test material.
//!
//! Layout for each key type `K` (`rsa1024`, `rsa2048`, `rsa3072`, `rsa4096`, `rsa8192`, `p256`, `p384`):
//!
//! | file | what |
//! |---|---|
//! | `D/K/ca.pem`, `ca.key` | root CA: X.509 v3, basicConstraints CA (critical), keyUsage keyCertSign+cRLSign |
//! | `D/K/server.pem`, `server.key` | server: EKU serverAuth, SAN DNS:localhost + IP:127.0.0.1 |
//! | `D/K/client.pem`, `client.key` | client: EKU clientAuth, same SAN |
//! | `D/K/revoked.pem` | a second end-entity certificate (both EKUs, key `client.key`) listed in `crl-revoked.pem` |
//! | `D/K/expired.pem` | end-entity certificate (key `client.key`) whose notAfter is in the past |
//! | `D/K/other-ca.pem`, `other-ca.key` | a different CA with the same subject layout |
//! | `D/K/other.pem` | end-entity certificate (key `client.key`) issued by `other-ca` |
//! | `D/K/crl.pem` | empty CRL v2 from `ca` (RFC 5280 §5) |
//! | `D/K/crl-revoked.pem` | CRL v2 from `ca` listing `revoked.pem` |
//!
//! End-entity keyUsage is digitalSignature + keyEncipherment for RSA (RSA key transport suites
//! need the latter, RFC 5246 §7.4.2) and digitalSignature + keyAgreement for ECDSA.
//! The negative-test certificates reuse `client.key`, so 8192-bit sets need four key generations,
//! not seven. Existing files are kept: re-running `init` only adds what is missing.
//! Validity: CA 20 years, end entities 10 years; CRLs are valid for 10 years.
use crate::TlsError;
use openssl::asn1::{Asn1Integer, Asn1Time};
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::x509::extension::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAlternativeName,
    SubjectKeyIdentifier,
};
use openssl::x509::{X509Builder, X509NameBuilder, X509};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A key type of the lab PKI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeySpec {
    /// RSA with a modulus of this many bits (1024, 2048, 3072, 4096 or 8192).
    Rsa(u32),
    /// ECDSA on NIST P-256 (secp256r1).
    P256,
    /// ECDSA on NIST P-384 (secp384r1).
    P384,
    /// ML-DSA-44 (FIPS 204, security category 2). Generated with OpenSSL 3.5 only.
    MlDsa44,
    /// ML-DSA-65 (FIPS 204, security category 3). Generated with OpenSSL 3.5 only.
    MlDsa65,
}

impl KeySpec {
    /// Every key type the paper and the standard mention: RSA 1024-8192 (RSE paper §4;
    /// IEC 62351-3 Amd1: >= 2048 mandatory, 1024 for legacy) and ECDSA P-256/P-384.
    pub const ALL: [KeySpec; 7] = [
        KeySpec::Rsa(1024),
        KeySpec::Rsa(2048),
        KeySpec::Rsa(3072),
        KeySpec::Rsa(4096),
        KeySpec::Rsa(8192),
        KeySpec::P256,
        KeySpec::P384,
    ];
    /// The post-quantum signature key types (FIPS 204 ML-DSA; X.509 per
    /// draft-ietf-lamps-dilithium-certificates), which need OpenSSL 3.5 to generate.
    pub const POST_QUANTUM: [KeySpec; 2] = [KeySpec::MlDsa44, KeySpec::MlDsa65];
    /// Directory name under the PKI root.
    pub fn dir_name(self) -> String {
        match self {
            KeySpec::Rsa(b) => format!("rsa{b}"),
            KeySpec::P256 => "p256".into(),
            KeySpec::P384 => "p384".into(),
            KeySpec::MlDsa44 => "mldsa44".into(),
            KeySpec::MlDsa65 => "mldsa65".into(),
        }
    }
    /// Whether the key type is ML-DSA.
    pub fn is_ml_dsa(self) -> bool {
        matches!(self, KeySpec::MlDsa44 | KeySpec::MlDsa65)
    }
    /// OpenSSL 3.5's algorithm name of an ML-DSA key type.
    pub fn ml_dsa_name(self) -> Option<&'static str> {
        match self {
            KeySpec::MlDsa44 => Some("ML-DSA-44"),
            KeySpec::MlDsa65 => Some("ML-DSA-65"),
            _ => None,
        }
    }
    fn digest(self) -> MessageDigest {
        match self {
            KeySpec::P384 => MessageDigest::sha384(),
            // ML-DSA signs the message itself (FIPS 204 "pure" mode): no separate digest.
            KeySpec::MlDsa44 | KeySpec::MlDsa65 => MessageDigest::null(),
            _ => MessageDigest::sha256(),
        }
    }
    fn generate(self) -> Result<PKey<Private>, TlsError> {
        Ok(match self {
            KeySpec::MlDsa44 | KeySpec::MlDsa65 => ml_dsa_keygen(self)?,
            KeySpec::Rsa(bits) => PKey::from_rsa(Rsa::generate(bits).map_err(pki)?).map_err(pki)?,
            KeySpec::P256 | KeySpec::P384 => {
                let nid = if self == KeySpec::P256 {
                    Nid::X9_62_PRIME256V1
                } else {
                    Nid::SECP384R1
                };
                let g = EcGroup::from_curve_name(nid).map_err(pki)?;
                PKey::from_ec_key(EcKey::generate(&g).map_err(pki)?).map_err(pki)?
            }
        })
    }
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.dir_name())
    }
}

/// A key type name [`KeySpec`]'s parser does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown key type {0:?} (expected 1024, 2048, 3072, 4096, 8192, p256, p384, mldsa44 or mldsa65)")]
pub struct UnknownKeySpec(pub String);

impl From<UnknownKeySpec> for String {
    fn from(e: UnknownKeySpec) -> Self {
        e.to_string()
    }
}

/// Parses `2048`, `rsa2048`, `p256`, `ecdsa-p256`, `P-384`, `mldsa44`, `ML-DSA-65`.
impl FromStr for KeySpec {
    type Err = UnknownKeySpec;
    fn from_str(s: &str) -> Result<Self, UnknownKeySpec> {
        let t = s.trim().to_ascii_lowercase().replace(['-', '_'], "");
        let t = t.strip_prefix("ecdsa").unwrap_or(&t);
        match t {
            "p256" | "secp256r1" | "prime256v1" => return Ok(KeySpec::P256),
            "p384" | "secp384r1" => return Ok(KeySpec::P384),
            "mldsa44" => return Ok(KeySpec::MlDsa44),
            "mldsa65" => return Ok(KeySpec::MlDsa65),
            _ => {}
        }
        let bits = t.strip_prefix("rsa").unwrap_or(t);
        match bits.parse::<u32>() {
            Ok(b @ (1024 | 2048 | 3072 | 4096 | 8192)) => Ok(KeySpec::Rsa(b)),
            _ => Err(UnknownKeySpec(s.to_string())),
        }
    }
}

fn pki(e: impl fmt::Display) -> TlsError {
    TlsError::Pki(e.to_string())
}

extern "C" {
    fn EVP_PKEY_CTX_new_from_name(
        libctx: *mut std::ffi::c_void,
        name: *const std::os::raw::c_char,
        propq: *const std::os::raw::c_char,
    ) -> *mut openssl_sys::EVP_PKEY_CTX;
    fn EVP_PKEY_generate(
        ctx: *mut openssl_sys::EVP_PKEY_CTX,
        pkey: *mut *mut openssl_sys::EVP_PKEY,
    ) -> std::os::raw::c_int;
}

/// A fresh ML-DSA key (FIPS 204 ML-DSA.KeyGen) from OpenSSL 3.5's default provider. The system
/// OpenSSL 3.0 has no ML-DSA: then a clear error that says which binary can.
pub(crate) fn ml_dsa_keygen(spec: KeySpec) -> Result<PKey<Private>, TlsError> {
    use foreign_types::ForeignType;
    let name = spec
        .ml_dsa_name()
        .ok_or_else(|| pki(format!("{spec} is not an ML-DSA key type")))?;
    if !crate::backend::linked_openssl35() {
        return Err(TlsError::Unsupported {
            backend: "openssl",
            what: format!(
                "{name} keys: this gander links {}, which has no ML-DSA; run `make build-ossl35` \
                 and `target/ossl35/release/gander pki init --mldsa 44,65`",
                openssl::version::version()
            ),
        });
    }
    let cname = std::ffi::CString::new(name).map_err(pki)?;
    // SAFETY: a NUL-terminated algorithm name; a null library context and property query mean
    // the defaults. The context is freed below on every path.
    let ctx = unsafe {
        EVP_PKEY_CTX_new_from_name(std::ptr::null_mut(), cname.as_ptr(), std::ptr::null())
    };
    if ctx.is_null() {
        return Err(pki(openssl::error::ErrorStack::get()));
    }
    let mut key: *mut openssl_sys::EVP_PKEY = std::ptr::null_mut();
    // SAFETY: `ctx` is a live key-generation context; `key` receives a new reference we own.
    let ok = unsafe {
        openssl_sys::EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_generate(ctx, &mut key) == 1
    };
    // SAFETY: `ctx` came from EVP_PKEY_CTX_new_from_name and is not used after this.
    unsafe { openssl_sys::EVP_PKEY_CTX_free(ctx) };
    if !ok || key.is_null() {
        return Err(pki(openssl::error::ErrorStack::get()));
    }
    // SAFETY: `key` is a new, owned EVP_PKEY; PKey takes over that reference.
    Ok(unsafe { PKey::from_ptr(key) })
}

/// Paths of one key type's files (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PkiSet {
    /// The key type of every key in the set.
    pub spec: KeySpec,
    /// The directory holding the set, `D/K`.
    pub dir: PathBuf,
    /// `ca.pem`: the root CA certificate.
    pub ca: PathBuf,
    /// `ca.key`: the root CA's private key.
    pub ca_key: PathBuf,
    /// `server.pem`: the server certificate (serverAuth).
    pub server: PathBuf,
    /// `server.key`: the server's private key.
    pub server_key: PathBuf,
    /// `client.pem`: the client certificate (clientAuth).
    pub client: PathBuf,
    /// `client.key`: the client's private key, also the key of the negative-test certificates.
    pub client_key: PathBuf,
    /// `revoked.pem`: a certificate listed in `crl-revoked.pem`.
    pub revoked: PathBuf,
    /// `expired.pem`: a certificate whose notAfter is in the past.
    pub expired: PathBuf,
    /// `other-ca.pem`: a second, untrusted CA.
    pub other_ca: PathBuf,
    /// `other-ca.key`: the second CA's private key.
    pub other_ca_key: PathBuf,
    /// `other.pem`: a certificate issued by the second CA.
    pub other: PathBuf,
    /// `crl.pem`: an empty CRL from the CA.
    pub crl: PathBuf,
    /// `crl-revoked.pem`: a CRL from the CA listing `revoked.pem`.
    pub crl_revoked: PathBuf,
}

impl PkiSet {
    /// The paths for `spec` under `root`, whether or not they exist.
    pub fn paths(root: &Path, spec: KeySpec) -> PkiSet {
        let dir = root.join(spec.dir_name());
        let f = |n: &str| dir.join(n);
        PkiSet {
            spec,
            ca: f("ca.pem"),
            ca_key: f("ca.key"),
            server: f("server.pem"),
            server_key: f("server.key"),
            client: f("client.pem"),
            client_key: f("client.key"),
            revoked: f("revoked.pem"),
            expired: f("expired.pem"),
            other_ca: f("other-ca.pem"),
            other_ca_key: f("other-ca.key"),
            other: f("other.pem"),
            crl: f("crl.pem"),
            crl_revoked: f("crl-revoked.pem"),
            dir,
        }
    }

    /// The profile of one side of a lab handshake with mutual authentication (IEC 62351-4
    /// requires both sides to authenticate): the set's CA as the only trust anchor and that
    /// side's certificate and key; everything else is the profile's default, for the caller to
    /// set (`..set.profile(...)`). The one place tests and benchmarks build lab profiles.
    pub fn profile(&self, backend: crate::BackendKind, server: bool) -> crate::TlsProfile {
        let (cert, key) = if server {
            (&self.server, &self.server_key)
        } else {
            (&self.client, &self.client_key)
        };
        crate::TlsProfile {
            backend,
            ca: vec![self.ca.clone()],
            cert: Some(cert.clone()),
            key: Some(key.clone()),
            ..Default::default()
        }
    }
}

/// What [`init`] did for one key type.
#[derive(Clone, Debug)]
pub struct InitReport {
    /// The paths of the key type's files.
    pub set: PkiSet,
    /// Files written in this run (others already existed and were kept).
    pub created: Vec<PathBuf>,
}

fn write_private(path: &Path, data: &[u8]) -> Result<(), TlsError> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    o.mode(0o600);
    let mut f = o
        .open(path)
        .map_err(|e| pki(format!("{}: {e}", path.display())))?;
    f.write_all(data)
        .map_err(|e| pki(format!("{}: {e}", path.display())))
}

fn write_public(path: &Path, data: &[u8]) -> Result<(), TlsError> {
    std::fs::write(path, data).map_err(|e| pki(format!("{}: {e}", path.display())))
}

struct Ctx<'a> {
    created: &'a mut Vec<PathBuf>,
}

impl Ctx<'_> {
    fn key(&mut self, path: &Path, spec: KeySpec) -> Result<PKey<Private>, TlsError> {
        if path.exists() {
            let data = std::fs::read(path).map_err(|e| pki(format!("{}: {e}", path.display())))?;
            return PKey::private_key_from_pem(&data)
                .map_err(|e| pki(format!("{}: {e}", path.display())));
        }
        let k = spec.generate()?;
        write_private(path, &k.private_key_to_pem_pkcs8().map_err(pki)?)?;
        self.created.push(path.to_owned());
        Ok(k)
    }

    fn cert(
        &mut self,
        path: &Path,
        make: impl FnOnce() -> Result<X509, TlsError>,
    ) -> Result<X509, TlsError> {
        if path.exists() {
            let data = std::fs::read(path).map_err(|e| pki(format!("{}: {e}", path.display())))?;
            return X509::from_pem(&data).map_err(|e| pki(format!("{}: {e}", path.display())));
        }
        let c = make()?;
        write_public(path, &c.to_pem().map_err(pki)?)?;
        self.created.push(path.to_owned());
        Ok(c)
    }
}

fn serial() -> Result<Asn1Integer, TlsError> {
    let mut bn = BigNum::new().map_err(pki)?;
    bn.rand(127, MsbOption::MAYBE_ZERO, false).map_err(pki)?;
    bn.to_asn1_integer().map_err(pki)
}

fn name(cn: &str) -> Result<openssl::x509::X509Name, TlsError> {
    let mut n = X509NameBuilder::new().map_err(pki)?;
    n.append_entry_by_nid(Nid::ORGANIZATIONNAME, "gander lab")
        .map_err(pki)?;
    n.append_entry_by_nid(Nid::COMMONNAME, cn).map_err(pki)?;
    Ok(n.build())
}

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn make_ca(cn: &str, key: &PKey<Private>, spec: KeySpec) -> Result<X509, TlsError> {
    let mut b = X509Builder::new().map_err(pki)?;
    b.set_version(2).map_err(pki)?;
    {
        let v = serial()?;
        b.set_serial_number(&v).map_err(pki)?;
    }
    let n = name(cn)?;
    b.set_subject_name(&n).map_err(pki)?;
    b.set_issuer_name(&n).map_err(pki)?;
    b.set_pubkey(key).map_err(pki)?;
    {
        let v = Asn1Time::from_unix(now_unix() - 3600).map_err(pki)?;
        b.set_not_before(&v).map_err(pki)?;
    }
    {
        let v = Asn1Time::days_from_now(20 * 365).map_err(pki)?;
        b.set_not_after(&v).map_err(pki)?;
    }
    b.append_extension(
        BasicConstraints::new()
            .critical()
            .ca()
            .build()
            .map_err(pki)?,
    )
    .map_err(pki)?;
    b.append_extension(
        KeyUsage::new()
            .critical()
            .key_cert_sign()
            .crl_sign()
            .build()
            .map_err(pki)?,
    )
    .map_err(pki)?;
    let ski = SubjectKeyIdentifier::new()
        .build(&b.x509v3_context(None, None))
        .map_err(pki)?;
    b.append_extension(ski).map_err(pki)?;
    b.sign(key, spec.digest()).map_err(pki)?;
    Ok(b.build())
}

#[derive(Clone, Copy)]
struct Leaf {
    server: bool,
    client: bool,
    expired: bool,
}

fn make_leaf(
    cn: &str,
    key: &PKey<Private>,
    ca: &X509,
    ca_key: &PKey<Private>,
    spec: KeySpec,
    leaf: Leaf,
) -> Result<X509, TlsError> {
    let mut b = X509Builder::new().map_err(pki)?;
    b.set_version(2).map_err(pki)?;
    {
        let v = serial()?;
        b.set_serial_number(&v).map_err(pki)?;
    }
    {
        let v = name(cn)?;
        b.set_subject_name(&v).map_err(pki)?;
    }
    b.set_issuer_name(ca.subject_name()).map_err(pki)?;
    b.set_pubkey(key).map_err(pki)?;
    let now = now_unix();
    if leaf.expired {
        {
            let v = Asn1Time::from_unix(now - 30 * 86400).map_err(pki)?;
            b.set_not_before(&v).map_err(pki)?;
        }
        {
            let v = Asn1Time::from_unix(now - 86400).map_err(pki)?;
            b.set_not_after(&v).map_err(pki)?;
        }
    } else {
        {
            let v = Asn1Time::from_unix(now - 3600).map_err(pki)?;
            b.set_not_before(&v).map_err(pki)?;
        }
        {
            let v = Asn1Time::days_from_now(10 * 365).map_err(pki)?;
            b.set_not_after(&v).map_err(pki)?;
        }
    }
    b.append_extension(BasicConstraints::new().critical().build().map_err(pki)?)
        .map_err(pki)?;
    let mut ku = KeyUsage::new();
    ku.critical().digital_signature();
    match spec {
        KeySpec::Rsa(_) => {
            ku.key_encipherment();
        }
        // A signature-only algorithm (draft-ietf-lamps-dilithium-certificates §5).
        KeySpec::MlDsa44 | KeySpec::MlDsa65 => {}
        _ => {
            ku.key_agreement();
        }
    };
    b.append_extension(ku.build().map_err(pki)?).map_err(pki)?;
    let mut eku = ExtendedKeyUsage::new();
    if leaf.server {
        eku.server_auth();
    }
    if leaf.client {
        eku.client_auth();
    }
    b.append_extension(eku.build().map_err(pki)?).map_err(pki)?;
    let ctx = b.x509v3_context(Some(ca), None);
    let san = SubjectAlternativeName::new()
        .dns("localhost")
        .ip("127.0.0.1")
        .build(&ctx)
        .map_err(pki)?;
    let ski = SubjectKeyIdentifier::new().build(&ctx).map_err(pki)?;
    let aki = AuthorityKeyIdentifier::new()
        .keyid(true)
        .build(&ctx)
        .map_err(pki)?;
    b.append_extension(san).map_err(pki)?;
    b.append_extension(ski).map_err(pki)?;
    b.append_extension(aki).map_err(pki)?;
    b.sign(ca_key, spec.digest()).map_err(pki)?;
    Ok(b.build())
}

/// Builds and signs a CRL v2 (RFC 5280 §5.1) listing `revoked`, with a CRL number (§5.2.3).
fn make_crl(
    ca: &X509,
    ca_key: &PKey<Private>,
    spec: KeySpec,
    revoked: &[&X509],
    number: u32,
) -> Result<Vec<u8>, TlsError> {
    use foreign_types::{ForeignType, ForeignTypeRef};
    use openssl_sys as ffi;
    let last = Asn1Time::from_unix(now_unix() - 3600).map_err(pki)?;
    let next = Asn1Time::days_from_now(10 * 365).map_err(pki)?;
    let num = BigNum::from_u32(number)
        .and_then(|b| b.to_asn1_integer())
        .map_err(pki)?;
    // SAFETY: every pointer below is either freshly allocated and checked, or borrowed from a live
    // Rust wrapper for the duration of the call; ownership transfers follow the OpenSSL docs
    // (add0 takes the X509_REVOKED; set/set1 copy).
    unsafe {
        let crl = ffi::X509_CRL_new();
        if crl.is_null() {
            return Err(pki("X509_CRL_new failed"));
        }
        let guard = openssl::x509::X509Crl::from_ptr(crl);
        let ok = ffi::X509_CRL_set_version(crl, 1) == 1
            && ffi::X509_CRL_set_issuer_name(crl, ca.subject_name().as_ptr()) == 1
            && ffi::X509_CRL_set1_lastUpdate(crl, last.as_ptr()) == 1
            && ffi::X509_CRL_set1_nextUpdate(crl, next.as_ptr()) == 1
            && ffi::X509_CRL_add1_ext_i2d(crl, ffi::NID_crl_number, num.as_ptr() as *mut _, 0, 0)
                == 1;
        if !ok {
            return Err(pki(openssl::error::ErrorStack::get()));
        }
        for c in revoked {
            let r = ffi::X509_REVOKED_new();
            if r.is_null() {
                return Err(pki("X509_REVOKED_new failed"));
            }
            if ffi::X509_REVOKED_set_serialNumber(r, c.serial_number().as_ptr()) != 1
                || ffi::X509_REVOKED_set_revocationDate(r, last.as_ptr()) != 1
                || ffi::X509_CRL_add0_revoked(crl, r) != 1
            {
                ffi::X509_REVOKED_free(r);
                return Err(pki(openssl::error::ErrorStack::get()));
            }
        }
        if ffi::X509_CRL_sort(crl) != 1
            || ffi::X509_CRL_sign(crl, ca_key.as_ptr(), spec.digest().as_ptr()) <= 0
        {
            return Err(pki(openssl::error::ErrorStack::get()));
        }
        guard.to_pem().map_err(pki)
    }
}

/// Creates (or completes) the PKI for each key type under `root`. Existing files are reused.
pub fn init(root: &Path, specs: &[KeySpec]) -> Result<Vec<InitReport>, TlsError> {
    let mut out = Vec::new();
    for &spec in specs {
        let set = PkiSet::paths(root, spec);
        std::fs::create_dir_all(&set.dir)
            .map_err(|e| pki(format!("{}: {e}", set.dir.display())))?;
        let mut created = Vec::new();
        let mut c = Ctx {
            created: &mut created,
        };
        let ca_key = c.key(&set.ca_key, spec)?;
        let ca = c.cert(&set.ca, || {
            make_ca(&format!("gander test CA {spec}"), &ca_key, spec)
        })?;
        let server_key = c.key(&set.server_key, spec)?;
        let both = Leaf {
            server: true,
            client: true,
            expired: false,
        };
        c.cert(&set.server, || {
            make_leaf(
                "localhost",
                &server_key,
                &ca,
                &ca_key,
                spec,
                Leaf {
                    server: true,
                    client: false,
                    expired: false,
                },
            )
        })?;
        let client_key = c.key(&set.client_key, spec)?;
        c.cert(&set.client, || {
            make_leaf(
                "gander client",
                &client_key,
                &ca,
                &ca_key,
                spec,
                Leaf {
                    server: false,
                    client: true,
                    expired: false,
                },
            )
        })?;
        let revoked = c.cert(&set.revoked, || {
            make_leaf("gander revoked", &client_key, &ca, &ca_key, spec, both)
        })?;
        c.cert(&set.expired, || {
            make_leaf(
                "gander expired",
                &client_key,
                &ca,
                &ca_key,
                spec,
                Leaf {
                    expired: true,
                    ..both
                },
            )
        })?;
        let other_ca_key = c.key(&set.other_ca_key, spec)?;
        let other_ca = c.cert(&set.other_ca, || {
            make_ca(&format!("gander other CA {spec}"), &other_ca_key, spec)
        })?;
        c.cert(&set.other, || {
            make_leaf(
                "gander other",
                &client_key,
                &other_ca,
                &other_ca_key,
                spec,
                both,
            )
        })?;
        if !set.crl.exists() {
            write_public(&set.crl, &make_crl(&ca, &ca_key, spec, &[], 1)?)?;
            created.push(set.crl.clone());
        }
        if !set.crl_revoked.exists() {
            write_public(
                &set.crl_revoked,
                &make_crl(&ca, &ca_key, spec, &[&revoked], 2)?,
            )?;
            created.push(set.crl_revoked.clone());
        }
        out.push(InitReport { set, created });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_spec_parse() {
        assert_eq!("2048".parse(), Ok(KeySpec::Rsa(2048)));
        assert_eq!("rsa8192".parse(), Ok(KeySpec::Rsa(8192)));
        assert_eq!("ECDSA-P256".parse(), Ok(KeySpec::P256));
        assert_eq!("p-384".parse(), Ok(KeySpec::P384));
        assert!("rsa512".parse::<KeySpec>().is_err());
        assert!("".parse::<KeySpec>().is_err());
    }

    #[test]
    fn init_creates_and_reuses() {
        let dir = tempfile::tempdir().unwrap();
        let r = init(dir.path(), &[KeySpec::P256]).unwrap();
        assert_eq!(r[0].created.len(), 13);
        let set = &r[0].set;
        let ca = X509::from_pem(&std::fs::read(&set.ca).unwrap()).unwrap();
        let srv = X509::from_pem(&std::fs::read(&set.server).unwrap()).unwrap();
        assert_eq!(srv.version(), 2);
        assert!(srv.verify(&ca.public_key().unwrap()).unwrap());
        let crl =
            openssl::x509::X509Crl::from_pem(&std::fs::read(&set.crl_revoked).unwrap()).unwrap();
        let rev = X509::from_pem(&std::fs::read(&set.revoked).unwrap()).unwrap();
        assert!(matches!(
            crl.get_by_cert(&rev),
            openssl::x509::CrlStatus::Revoked(_)
        ));
        assert!(crl.verify(&ca.public_key().unwrap()).unwrap());
        let again = init(dir.path(), &[KeySpec::P256]).unwrap();
        assert!(again[0].created.is_empty());
    }
}
