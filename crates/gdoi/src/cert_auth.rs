//! Phase-1 authentication with certificates (RFC 2409 5.1): the own credentials (certificate,
//! chain, private key), the signatures over HASH_I / HASH_R, and the checks on the peer's
//! CERT payloads and identity.
//!
//! - RSA (method 3): the signature is the PKCS#1 v1.5 *private-key encryption* of HASH_I
//!   (block type 1, no DigestInfo), as RFC 2409 5.1 asks ("MUST be encoded as a private key
//!   encryption in PKCS #1 format and not as an RSA signature"); keys shorter than 2048 bits are
//!   refused.
//! - ECDSA (methods 9 and 10, RFC 4754): the method fixes the curve and its hash (SHA-256 on
//!   P-256, SHA-384 on P-384). HASH_I is computed with the HMAC of that hash (whatever hash
//!   the suite negotiated, `main_mode`) and is itself the digest the ECDSA operation signs:
//!   RFC 2409 5.1 applies the signature algorithm to HASH_I, and HASH_I already is a hash of
//!   the method's size, so it is not hashed a second time. The SIG payload is r | s, each the
//!   curve's size, not DER (RFC 4754 7). strongSwan 5.9 reads RFC 4754 the same way (its
//!   IKEv1 keymat computes HASH_I with the curve's PRF and signs it "with NULL" hash); gander
//!   hashed HASH_I again before and strongSwan refused its signatures (AUTHENTICATION-FAILED,
//!   `tests/strongswan_interop.rs`).
//! - The peer's chain is checked against the trust store (the trust module: RFC 5280 path
//!   validation by OpenSSL, with CRLs when configured), the end-entity key usage must allow
//!   signatures (RFC 5280 4.2.1.3), its key must be of the negotiated method, and the ID
//!   payload must name the certificate (RFC 4945 3.1: a DN equal to the subject, or an FQDN,
//!   user FQDN or address among the subjectAltNames).
//!
//! Each refusal is a [`CertError`] whose notification (RFC 2408 3.14.1) tells the peer why.

use crate::suite::AuthMethod;
use crate::trust::TrustStore;
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::payload::{id_type, CERT_X509_SIG};
use gander_wire::isakmp::{CertPayload, IdPayload};
use openssl::bn::BigNum;
use openssl::ecdsa::EcdsaSig;
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, PKeyRef, Private, Public};
use openssl::rsa::Padding;
use openssl::x509::{X509KeyUsage, X509Name, X509NameRef, X509Ref, X509};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// CERT-TYPE-UNSUPPORTED (RFC 2408 3.14.1).
pub const CERT_TYPE_UNSUPPORTED: u16 = 21;

/// Smallest RSA modulus accepted, in bits.
pub const MIN_RSA_BITS: u32 = 2048;
/// Most CERT payloads read from one message (end entity plus intermediates).
pub const MAX_CERTS: usize = 8;

/// Why a certificate-authenticated message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CertError {
    /// No CERT payload: gander does not look certificates up elsewhere.
    #[error("no certificate")]
    Unavailable,
    /// A CERT payload of an encoding other than X.509 signature (4).
    #[error("certificate encoding {0} not supported")]
    TypeUnsupported(u8),
    /// The certificate does not parse, does not chain to a trusted CA, is expired, revoked,
    /// not for signatures, or its key is not of the negotiated method.
    #[error("invalid certificate: {0}")]
    Invalid(String),
    /// The ID payload does not name the certificate (RFC 4945 3.1).
    #[error("identity does not match the certificate")]
    IdMismatch,
    /// The SIG payload does not verify under the certificate's key.
    #[error("signature does not verify")]
    BadSignature,
    /// The certificate is valid but the policy does not authorise it.
    #[error("certificate not authorised")]
    NotAuthorised,
    /// Own credentials unusable (key and certificate differ, RSA too short, file unreadable).
    #[error("credentials: {0}")]
    Credentials(String),
}

impl CertError {
    /// The Notify Message Type for the peer.
    pub fn notify(&self) -> u16 {
        match self {
            CertError::Unavailable => notify_type::CERTIFICATE_UNAVAILABLE,
            CertError::TypeUnsupported(_) => CERT_TYPE_UNSUPPORTED,
            CertError::Invalid(_) | CertError::Credentials(_) => notify_type::INVALID_CERTIFICATE,
            CertError::IdMismatch => notify_type::AUTHENTICATION_FAILED,
            CertError::BadSignature => notify_type::INVALID_SIGNATURE,
            CertError::NotAuthorised => notify_type::INVALID_ID_INFORMATION,
        }
    }
}

fn invalid(what: &str) -> impl Fn(openssl::error::ErrorStack) -> CertError + '_ {
    move |_| CertError::Invalid(what.to_string())
}

/// The signature method a key can make, or why it cannot.
pub fn method_of(key: &PKeyRef<impl openssl::pkey::HasPublic>) -> Result<AuthMethod, CertError> {
    match key.id() {
        Id::RSA => {
            if key.bits() < MIN_RSA_BITS {
                return Err(CertError::Invalid(format!(
                    "RSA key of {} bits (at least {MIN_RSA_BITS})",
                    key.bits()
                )));
            }
            Ok(AuthMethod::RsaSig)
        }
        Id::EC => {
            let ec = key.ec_key().map_err(invalid("EC key"))?;
            match ec.group().curve_name() {
                Some(Nid::X9_62_PRIME256V1) => Ok(AuthMethod::EcdsaP256),
                Some(Nid::SECP384R1) => Ok(AuthMethod::EcdsaP384),
                _ => Err(CertError::Invalid("EC curve not P-256 or P-384".into())),
            }
        }
        _ => Err(CertError::Invalid(
            "key type not RSA or ECDSA P-256/P-384".into(),
        )),
    }
}

/// The size of r and s (and of the method's hash) for an ECDSA method.
fn ec_size(method: AuthMethod) -> Option<usize> {
    match method {
        AuthMethod::EcdsaP256 => Some(32),
        AuthMethod::EcdsaP384 => Some(48),
        _ => None,
    }
}

/// Signs HASH_I or HASH_R with the method's encoding (module doc).
pub fn sign_hash(
    method: AuthMethod,
    key: &PKeyRef<Private>,
    data: &[u8],
) -> Result<Vec<u8>, CertError> {
    let fail = |_| CertError::Credentials("signing failed".into());
    if method == AuthMethod::RsaSig {
        let rsa = key.rsa().map_err(fail)?;
        let mut out = vec![0u8; rsa.size() as usize];
        let n = rsa
            .private_encrypt(data, &mut out, Padding::PKCS1)
            .map_err(fail)?;
        out.truncate(n);
        return Ok(out);
    }
    let n = ec_size(method).ok_or(CertError::Credentials("not a signature method".into()))?;
    // HASH_I is the digest (module doc): signed as it is.
    let sig = EcdsaSig::sign(data, &*key.ec_key().map_err(fail)?).map_err(fail)?;
    let mut out = sig.r().to_vec_padded(n as i32).map_err(fail)?;
    out.extend(sig.s().to_vec_padded(n as i32).map_err(fail)?);
    Ok(out)
}

/// Verifies [`sign_hash`]'s output; any malformed signature is [`CertError::BadSignature`].
pub fn verify_hash(
    method: AuthMethod,
    key: &PKeyRef<Public>,
    data: &[u8],
    sig: &[u8],
) -> Result<(), CertError> {
    let bad = |_| CertError::BadSignature;
    if method == AuthMethod::RsaSig {
        let rsa = key.rsa().map_err(bad)?;
        if sig.len() != rsa.size() as usize {
            return Err(CertError::BadSignature);
        }
        let mut out = vec![0u8; rsa.size() as usize];
        let n = rsa
            .public_decrypt(sig, &mut out, Padding::PKCS1)
            .map_err(bad)?;
        return if n == data.len() && bool::from(out[..n].ct_eq(data)) {
            Ok(())
        } else {
            Err(CertError::BadSignature)
        };
    }
    let n = ec_size(method).ok_or(CertError::BadSignature)?;
    if sig.len() != 2 * n {
        return Err(CertError::BadSignature);
    }
    let r = BigNum::from_slice(&sig[..n]).map_err(bad)?;
    let s = BigNum::from_slice(&sig[n..]).map_err(bad)?;
    let sig = EcdsaSig::from_private_components(r, s).map_err(bad)?;
    match sig.verify(data, &*key.ec_key().map_err(bad)?) {
        Ok(true) => Ok(()),
        _ => Err(CertError::BadSignature),
    }
}

/// A distinguished name as `SN=value` pairs in the certificate's order, joined by commas
/// (`CN=ied-1,O=Utility`): how the key server's policy names a member's subject.
pub fn dn_string(name: &X509NameRef) -> String {
    name.entries()
        .map(|e| {
            let k = e.object().nid().short_name().unwrap_or("?");
            let v = e.data().to_string().unwrap_or_default();
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A configured DN (`CN=ied-1, O=Utility`) in [`dn_string`]'s form: spaces around the
/// separators dropped.
pub fn normalise_dn(s: &str) -> String {
    s.split(',')
        .map(|rdn| {
            let mut kv = rdn.splitn(2, '=');
            let k = kv.next().unwrap_or("").trim();
            let v = kv.next().unwrap_or("").trim();
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether `normalise_dn(configured) == dn`, without building the normalised string: the key
/// server compares a verified subject with every certificate member of its policy in each
/// registration (phase 1 and GROUPKEY-PULL), so an allocation per entry and look-up was a
/// measurable share of its time (docs/gdoi.md, "Benchmark").
pub fn normalised_eq(configured: &str, dn: &str) -> bool {
    let mut rest = dn;
    let mut take = |part: &str| match rest.strip_prefix(part) {
        Some(r) => {
            rest = r;
            true
        }
        None => false,
    };
    for (i, rdn) in configured.split(',').enumerate() {
        let mut kv = rdn.splitn(2, '=');
        let k = kv.next().unwrap_or("").trim();
        let v = kv.next().unwrap_or("").trim();
        if (i > 0 && !take(",")) || !take(k) || !take("=") || !take(v) {
            return false;
        }
    }
    rest.is_empty()
}

/// The subjectAltNames of a certificate as text: dNSName and rfc822Name as written, iPAddress
/// as an address.
pub fn san_strings(cert: &X509Ref) -> Vec<String> {
    let Some(names) = cert.subject_alt_names() else {
        return Vec::new();
    };
    names
        .iter()
        .filter_map(|n| {
            if let Some(d) = n.dnsname() {
                Some(d.to_string())
            } else if let Some(e) = n.email() {
                Some(e.to_string())
            } else {
                n.ipaddress().and_then(ip_from).map(|a| a.to_string())
            }
        })
        .collect()
}

fn ip_from(b: &[u8]) -> Option<IpAddr> {
    match b.len() {
        4 => <[u8; 4]>::try_from(b).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(b).ok().map(IpAddr::from),
        _ => None,
    }
}

/// Whether `id` names `cert` (RFC 4945 3.1): ID_DER_ASN1_DN equal to the subject (as DER, or
/// entry by entry), ID_FQDN / ID_USER_FQDN equal to a dNSName / rfc822Name (case-insensitive),
/// ID_IPV4_ADDR / ID_IPV6_ADDR equal to an iPAddress. ID_KEY_ID names no certificate and never
/// matches.
pub fn id_matches(id: &IdPayload, cert: &X509Ref) -> bool {
    let Some(names) = (match id.id_type {
        id_type::DER_ASN1_DN => {
            let subject = cert.subject_name();
            if subject.to_der().ok().as_deref() == Some(&id.data[..]) {
                return true;
            }
            return X509Name::from_der(&id.data)
                .map(|n| dn_string(&n) == dn_string(subject))
                .unwrap_or(false);
        }
        id_type::FQDN | id_type::USER_FQDN | id_type::IPV4_ADDR | id_type::IPV6_ADDR => {
            cert.subject_alt_names()
        }
        _ => None,
    }) else {
        return false;
    };
    names.iter().any(|n| match id.id_type {
        id_type::FQDN => n
            .dnsname()
            .is_some_and(|d| d.as_bytes().eq_ignore_ascii_case(&id.data)),
        id_type::USER_FQDN => n
            .email()
            .is_some_and(|d| d.as_bytes().eq_ignore_ascii_case(&id.data)),
        _ => n.ipaddress() == Some(&id.data[..]),
    })
}

/// What the peer's verified certificate says, kept with the phase-1 SA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerCert {
    /// Subject in [`dn_string`] form.
    pub subject: String,
    /// subjectAltNames ([`san_strings`]).
    pub sans: Vec<String>,
    /// The end-entity certificate, DER.
    pub der: Vec<u8>,
}

/// How the key server's policy names an authorised certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertMatch {
    /// The subject DN, in [`dn_string`] form (normalised with [`normalise_dn`]).
    Subject(String),
    /// One subjectAltName (DNS name, e-mail address or IP address).
    San(String),
}

impl CertMatch {
    /// Whether a verified certificate is the one this entry names.
    pub fn matches(&self, c: &PeerCert) -> bool {
        match self {
            CertMatch::Subject(s) => normalised_eq(s, &c.subject),
            CertMatch::San(s) => c.sans.iter().any(|x| san_eq(x, s)),
        }
    }

    /// Whether an ID payload names this entry. Used after phase 1, where the ID has been
    /// checked against the certificate ([`id_matches`]), so matching the ID is matching it.
    pub fn matches_id(&self, id: &IdPayload) -> bool {
        match (self, id.id_type) {
            (CertMatch::Subject(s), id_type::DER_ASN1_DN) => X509Name::from_der(&id.data)
                .map(|n| dn_string(&n) == normalise_dn(s))
                .unwrap_or(false),
            (CertMatch::San(s), id_type::FQDN | id_type::USER_FQDN) => {
                std::str::from_utf8(&id.data).is_ok_and(|d| d.eq_ignore_ascii_case(s))
            }
            (CertMatch::San(s), id_type::IPV4_ADDR | id_type::IPV6_ADDR) => {
                ip_from(&id.data).is_some_and(|a| s.parse::<IpAddr>().ok() == Some(a))
            }
            _ => false,
        }
    }
}

fn san_eq(have: &str, want: &str) -> bool {
    match (have.parse::<IpAddr>(), want.parse::<IpAddr>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => have.eq_ignore_ascii_case(want),
    }
}

/// One side's certificate credentials: its certificate, the intermediates it sends, its key,
/// the signature method they make, and the trust store it checks the peer with.
pub struct Credentials {
    cert: X509,
    /// The CERT payloads (certificate, then intermediates) and the ID payload, encoded once:
    /// they go into every message 5 or 6 this side sends.
    payloads: Vec<CertPayload>,
    id: IdPayload,
    key: PKey<Private>,
    method: AuthMethod,
    trust: Arc<TrustStore>,
}

impl core::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Credentials")
            .field("subject", &dn_string(self.cert.subject_name()))
            .field("method", &self.method)
            .finish_non_exhaustive()
    }
}

impl Credentials {
    /// Credentials from a certificate, its intermediates, its private key and a trust store;
    /// refuses a key that is not the certificate's or that no method can use.
    pub fn new(
        cert: X509,
        chain: Vec<X509>,
        key: PKey<Private>,
        trust: Arc<TrustStore>,
    ) -> Result<Credentials, CertError> {
        let public = cert
            .public_key()
            .map_err(|_| CertError::Credentials("certificate key".into()))?;
        if !public.public_eq(&key) {
            return Err(CertError::Credentials(
                "private key is not the certificate's".into(),
            ));
        }
        let method = method_of(&key).map_err(|e| CertError::Credentials(e.to_string()))?;
        let payloads = std::iter::once(&cert)
            .chain(chain.iter())
            .map(|c| {
                Ok(CertPayload {
                    encoding: CERT_X509_SIG,
                    data: c
                        .to_der()
                        .map_err(|_| CertError::Credentials("certificate DER".into()))?,
                })
            })
            .collect::<Result<Vec<_>, CertError>>()?;
        let id = IdPayload {
            id_type: id_type::DER_ASN1_DN,
            protocol: 0,
            port: 0,
            data: cert
                .subject_name()
                .to_der()
                .map_err(|_| CertError::Credentials("subject".into()))?,
        };
        Ok(Credentials {
            cert,
            payloads,
            id,
            key,
            method,
            trust,
        })
    }

    /// Loads a PEM certificate file (the first certificate is this side's, the rest its
    /// intermediates) and a PEM private key file.
    pub fn load(cert: &Path, key: &Path, trust: Arc<TrustStore>) -> Result<Credentials, CertError> {
        let read = |p: &Path| {
            std::fs::read(p).map_err(|e| CertError::Credentials(format!("{}: {e}", p.display())))
        };
        let mut certs = X509::stack_from_pem(&read(cert)?).map_err(|_| {
            CertError::Credentials(format!("{}: not PEM certificates", cert.display()))
        })?;
        if certs.is_empty() {
            return Err(CertError::Credentials(format!(
                "{}: no certificate",
                cert.display()
            )));
        }
        let leaf = certs.remove(0);
        let k = PKey::private_key_from_pem(&read(key)?).map_err(|_| {
            CertError::Credentials(format!("{}: not a PEM private key", key.display()))
        })?;
        Credentials::new(leaf, certs, k, trust)
    }

    /// The signature method of the key.
    pub fn method(&self) -> AuthMethod {
        self.method
    }

    /// The trust store for the peer's certificate.
    pub fn trust(&self) -> &TrustStore {
        &self.trust
    }

    /// This side's ID payload: ID_DER_ASN1_DN with the certificate's subject (RFC 4945 3.1.5).
    pub fn id_payload(&self) -> Result<IdPayload, CertError> {
        Ok(self.id.clone())
    }

    /// CERT payloads: the certificate, then its intermediates.
    pub fn cert_payloads(&self) -> Result<Vec<CertPayload>, CertError> {
        Ok(self.payloads.clone())
    }

    /// Signs HASH_I or HASH_R.
    pub fn sign(&self, data: &[u8]) -> Result<Vec<u8>, CertError> {
        sign_hash(self.method, &self.key, data)
    }
}

/// Checks the peer's authentication in message 5 or 6 with one digest, `hash`
/// ([`verify_peer_digests`]).
pub fn verify_peer(
    trust: &TrustStore,
    method: AuthMethod,
    certs: &[&CertPayload],
    id: &IdPayload,
    hash: &[u8],
    sig: &[u8],
) -> Result<PeerCert, CertError> {
    verify_peer_digests(trust, method, certs, id, &[hash], sig)
}

/// Checks the peer's authentication in message 5 or 6: its CERT payloads (end entity first),
/// the chain, the key usage and key type for `method`, that `id` names the certificate, and
/// that `sig` is its signature over one of `digests` (HASH_I or HASH_R as gander computes it,
/// and, for ECDSA, the other reading of RFC 4754 that `main_mode` accepts on input). Returns
/// what the certificate says.
pub fn verify_peer_digests(
    trust: &TrustStore,
    method: AuthMethod,
    certs: &[&CertPayload],
    id: &IdPayload,
    digests: &[&[u8]],
    sig: &[u8],
) -> Result<PeerCert, CertError> {
    verify_peer_then(
        trust,
        method,
        certs,
        id,
        sig,
        digests.first().copied(),
        || digests.iter().skip(1).map(|d| d.to_vec()).collect(),
    )
}

/// [`verify_peer_digests`] with the digests after `first` computed only when `sig` does not
/// verify over it: the other ECDSA reading (`main_mode`) costs a PRF and a hash that a peer
/// signing as RFC 4754 reads (gander, strongSwan) never needs.
pub fn verify_peer_then(
    trust: &TrustStore,
    method: AuthMethod,
    certs: &[&CertPayload],
    id: &IdPayload,
    sig: &[u8],
    first: Option<&[u8]>,
    others: impl FnOnce() -> Vec<Vec<u8>>,
) -> Result<PeerCert, CertError> {
    let (leaf, rest) = certs.split_first().ok_or(CertError::Unavailable)?;
    if let Some(c) = certs.iter().find(|c| c.encoding != CERT_X509_SIG) {
        return Err(CertError::TypeUnsupported(c.encoding));
    }
    let parse =
        |c: &CertPayload| X509::from_der(&c.data).map_err(invalid("not an X.509 DER certificate"));
    let cert = parse(leaf)?;
    let chain = rest
        .iter()
        .take(MAX_CERTS)
        .map(|c| parse(c))
        .collect::<Result<Vec<_>, _>>()?;
    trust.verify(&cert, &chain)?;
    if let Some(ku) = cert.key_usage() {
        if !ku.intersects(X509KeyUsage::DIGITAL_SIGNATURE | X509KeyUsage::NON_REPUDIATION) {
            return Err(CertError::Invalid(
                "key usage does not allow signatures".into(),
            ));
        }
    }
    let key = cert.public_key().map_err(invalid("public key"))?;
    if method_of(&key)? != method {
        return Err(CertError::Invalid(
            "certificate key is not of the negotiated method".into(),
        ));
    }
    if !id_matches(id, &cert) {
        return Err(CertError::IdMismatch);
    }
    let ok = |d: &[u8]| verify_hash(method, &key, d, sig).is_ok();
    if !(first.is_some_and(ok) || others().iter().any(|d| ok(d))) {
        return Err(CertError::BadSignature);
    }
    Ok(PeerCert {
        subject: dn_string(cert.subject_name()),
        sans: san_strings(&cert),
        der: leaf.data.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::rsa::Rsa;

    fn keys() -> Vec<(AuthMethod, PKey<Private>)> {
        let ec = |nid| {
            PKey::from_ec_key(EcKey::generate(&EcGroup::from_curve_name(nid).unwrap()).unwrap())
                .unwrap()
        };
        vec![
            (
                AuthMethod::RsaSig,
                PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap(),
            ),
            (AuthMethod::EcdsaP256, ec(Nid::X9_62_PRIME256V1)),
            (AuthMethod::EcdsaP384, ec(Nid::SECP384R1)),
        ]
    }

    fn public(k: &PKey<Private>) -> PKey<Public> {
        PKey::public_key_from_der(&k.public_key_to_der().unwrap()).unwrap()
    }

    #[test]
    fn signatures_round_trip_with_the_rfc_encodings() {
        let h = [0x5au8; 32];
        for (m, k) in keys() {
            assert_eq!(method_of(&k).unwrap(), m);
            let s = sign_hash(m, &k, &h).unwrap();
            match m {
                // r | s, each the curve's size (RFC 4754 7).
                AuthMethod::EcdsaP256 => assert_eq!(s.len(), 64),
                AuthMethod::EcdsaP384 => assert_eq!(s.len(), 96),
                // The modulus size: PKCS#1 private-key encryption (RFC 2409 5.1).
                _ => assert_eq!(s.len(), 256),
            }
            let p = public(&k);
            verify_hash(m, &p, &h, &s).unwrap();
            let mut bad = s.clone();
            bad[3] ^= 1;
            assert_eq!(verify_hash(m, &p, &h, &bad), Err(CertError::BadSignature));
            assert_eq!(
                verify_hash(m, &p, &[0x5b; 32], &s),
                Err(CertError::BadSignature)
            );
            assert_eq!(
                verify_hash(m, &p, &h, &s[1..]),
                Err(CertError::BadSignature)
            );
            assert_eq!(verify_hash(m, &p, &h, &[]), Err(CertError::BadSignature));
        }
    }

    /// RFC 4754 with RFC 2409 5.1: the ECDSA operation takes HASH_I as its digest. A
    /// signature made here verifies as a bare ECDSA signature of those octets and not of
    /// their hash (what gander did before, which strongSwan 5.9 refused).
    #[test]
    fn ecdsa_signs_hash_i_as_the_digest() {
        for (m, k) in keys().into_iter().skip(1) {
            let h = vec![0x3cu8; ec_size(m).unwrap()];
            let s = sign_hash(m, &k, &h).unwrap();
            let n = s.len() / 2;
            let sig = EcdsaSig::from_private_components(
                BigNum::from_slice(&s[..n]).unwrap(),
                BigNum::from_slice(&s[n..]).unwrap(),
            )
            .unwrap();
            let ec = k.ec_key().unwrap();
            assert!(sig.verify(&h, &ec).unwrap(), "{m:?}");
            let md = match m {
                AuthMethod::EcdsaP256 => openssl::hash::MessageDigest::sha256(),
                _ => openssl::hash::MessageDigest::sha384(),
            };
            let rehashed = openssl::hash::hash(md, &h).unwrap();
            assert!(!sig.verify(&rehashed, &ec).unwrap(), "{m:?}");
        }
    }

    #[test]
    fn rsa_signature_is_the_hash_under_type_1_padding() {
        // RFC 2409 5.1: no DigestInfo, so the public operation gives HASH_I back as it was.
        let k = PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap();
        let s = sign_hash(AuthMethod::RsaSig, &k, b"0123456789abcdef0123456789abcdef").unwrap();
        let mut out = vec![0u8; 256];
        let n = k
            .rsa()
            .unwrap()
            .public_decrypt(&s, &mut out, Padding::NONE)
            .unwrap();
        assert_eq!(out[..2], [0, 1]);
        assert_eq!(&out[n - 32..n], b"0123456789abcdef0123456789abcdef");
    }

    #[test]
    fn short_rsa_key_and_other_curves_are_refused() {
        let k = PKey::from_rsa(Rsa::generate(1024).unwrap()).unwrap();
        assert!(matches!(method_of(&k), Err(CertError::Invalid(_))));
        let k = PKey::from_ec_key(
            EcKey::generate(&EcGroup::from_curve_name(Nid::SECP521R1).unwrap()).unwrap(),
        )
        .unwrap();
        assert!(matches!(method_of(&k), Err(CertError::Invalid(_))));
    }

    #[test]
    fn configured_dn_is_normalised() {
        assert_eq!(normalise_dn("CN = ied-1 , O=Utility"), "CN=ied-1,O=Utility");
        let m = CertMatch::Subject("CN=ied-1, O=Utility".into());
        let c = PeerCert {
            subject: "CN=ied-1,O=Utility".into(),
            sans: vec!["ied-1.example".into(), "192.0.2.1".into()],
            der: vec![],
        };
        assert!(m.matches(&c));
        assert!(CertMatch::San("IED-1.example".into()).matches(&c));
        assert!(CertMatch::San("192.0.2.1".into()).matches(&c));
        assert!(!CertMatch::San("ied-2.example".into()).matches(&c));
        assert!(!CertMatch::Subject("CN=ied-1".into()).matches(&c));
    }

    proptest::proptest! {
        /// `normalised_eq` is `normalise_dn` then `==`, on DN-like text (separators, spaces,
        /// '=' in values, empty parts) and on the normalised form itself.
        #[test]
        fn normalised_eq_is_normalise_then_compare(
            a in "[ ,=CNOab-]{0,16}",
            b in "[ ,=CNOab-]{0,16}",
        ) {
            proptest::prop_assert_eq!(normalised_eq(&a, &b), normalise_dn(&a) == b);
            proptest::prop_assert!(normalised_eq(&a, &normalise_dn(&a)));
        }
    }

    #[test]
    fn notifications_are_the_rfc_2408_ones() {
        assert_eq!(CertError::Unavailable.notify(), 28);
        assert_eq!(CertError::TypeUnsupported(1).notify(), 21);
        assert_eq!(CertError::Invalid(String::new()).notify(), 19);
        assert_eq!(CertError::BadSignature.notify(), 25);
        assert_eq!(CertError::IdMismatch.notify(), 24);
        assert_eq!(CertError::NotAuthorised.notify(), 18);
    }
}
