//! `gander bench gdoi`'s certificate row: registrations whose phase 1 authenticates with ECDSA
//! P-256 certificates (IKEv1 main mode with signatures, RFC 2409 5.1, authentication method 9
//! of RFC 4754), on the same phase-1 suite as the pre-shared-key headline row (AES-128-CBC,
//! SHA-256, DH group 19), against the key server's real datagram handler (`Kdc::handle` with
//! `Kdc::set_certs`), and the bare cryptography of the key server's side measured in the same
//! run.
//!
//! The certificates are made here, in memory (no files): a P-256 CA, the key server's P-256
//! certificate and [`MEMBERS`] member certificates (subject `O=gander bench, CN=ied-N`, a
//! dNSName, digitalSignature key usage, authority and subject key identifiers, as an IED's
//! certificate from a utility CA has). The policy authorises each member by its subject
//! (`CertMatch::Subject`), and registrations take the members round-robin like the
//! pre-shared-key rows' 256, so the key server looks members up in a policy of realistic size.
//!
//! The bare cryptography ([`bare_crypto`]) is what the key server cannot avoid for one
//! certificate registration, computed with the primitives it uses (`gander_gdoi::keys`,
//! `dh`, `cookie`, `cert_auth::{sign_hash, verify_hash}`, `trust::TrustStore::verify`):
//!
//! - the three cookie HMACs (RFC 2408 2.5.3: made for message 2, checked on 3 and 5) and the
//!   responder's nonce;
//! - one P-256 Diffie-Hellman key pair and the shared secret with the peer's public value;
//! - SKEYID for signatures, prf(Ni | Nr, g^xy), and SKEYID_d/_a/_e (RFC 2409 5), the first IV;
//! - AES-CBC decryption of message 5 and encryption of message 6 at their real sizes;
//! - the member's certificate: parsed from its CERT payload's DER (X.509 cannot be checked
//!   unparsed), path validation against the CA (OpenSSL's X509_verify_cert through the trust
//!   store: the CA's ECDSA signature over the certificate, validity, key usage), its public key
//!   (with OpenSSL 3.0's conversion to the legacy `EC_KEY` that `verify_hash` verifies with);
//! - HASH_I and one ECDSA P-256 verification of SIG_I under the member's key; HASH_R and one
//!   ECDSA P-256 signature (SIG_R) with the key server's key (RFC 4754: r | s over the hash);
//! - GROUPKEY-PULL as in the pre-shared-key rows (`gdoi::bare_pull`).
//!
//! Not in it, so counted as the key server's own work: parsing and building the ISAKMP
//! messages, matching the ID payload against the certificate (RFC 4945 3.1), the key usage and
//! key type checks, the policy's subject match (three look-ups: phase 1, the grant, the event's
//! group name), the CERTREQ payload's DER, the grant (policy, schedule, KEK) and the bookkeeping
//! of exchanges and SAs. (The digest of the other ECDSA reading, `main_mode`, is computed only
//! when SIG_I does not verify over HASH_I, so never here.)

use crate::gdoi::{
    bare_pull, cbc_len, group_policy, id, proto, register_once, row, GdoiBenchError,
    RegistrationRow, Sizes,
};
use gander_gdoi::cert_auth::{sign_hash, verify_hash, CertMatch, Credentials};
use gander_gdoi::cookie::CookieJar;
use gander_gdoi::dh::KeyPair;
use gander_gdoi::keys::{self, Phase1Keys};
use gander_gdoi::net::cert_members::KdcCerts;
use gander_gdoi::net::kdc::{Kdc, KdcPolicy, MemberPolicy};
use gander_gdoi::trust::TrustStore;
use gander_gdoi::{Auth, AuthMethod, Group, HashAlg, Initiator, Phase1Error, Suite};
use openssl::asn1::{Asn1Integer, Asn1Time};
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::error::ErrorStack;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::x509::extension::{
    AuthorityKeyIdentifier, BasicConstraints, KeyUsage, SubjectAlternativeName,
    SubjectKeyIdentifier,
};
use openssl::x509::{X509Builder, X509Name, X509NameRef, X509};
use rand::RngCore;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Instant;
use zeroize::Zeroizing;

/// Member certificates in the key server's policy, used round-robin.
pub const MEMBERS: usize = 64;

/// The phase-1 suite of the row: the pre-shared-key headline row's (P-256, AES-128, SHA-256).
pub const SUITE: Suite = Suite {
    aes_bits: 128,
    hash: HashAlg::Sha256,
    group: Group::Ecp256,
    life_secs: 86_400,
};

/// The row's name in the report.
pub const SUITE_NAME: &str = "ECDSA P-256 certificates, AES-128, SHA-256, P-256 (19)";

fn p256() -> Result<PKey<Private>, ErrorStack> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    PKey::from_ec_key(EcKey::generate(&group)?)
}

fn name(cn: &str) -> Result<X509Name, ErrorStack> {
    let mut n = X509Name::builder()?;
    n.append_entry_by_text("O", "gander bench")?;
    n.append_entry_by_text("CN", cn)?;
    Ok(n.build())
}

/// The subject a member's certificate has, as the key server's policy names it.
pub fn member_subject(i: usize) -> String {
    format!("O=gander bench, CN=ied-{i}")
}

/// The benchmark's CA (P-256, self-signed, valid from now for 30 days) and the end-entity
/// certificates it issues.
pub struct BenchPki {
    ca: X509,
    ca_key: PKey<Private>,
    trust: Arc<TrustStore>,
    serial: u32,
}

impl BenchPki {
    /// A new CA whose trust store holds only it (no CRL).
    pub fn new(cn: &str) -> Result<BenchPki, GdoiBenchError> {
        let ca_key = p256()?;
        let subject: X509Name = name(cn)?;
        let mut b = cert_builder(1, &subject, &subject, &ca_key, 30)?;
        b.append_extension(BasicConstraints::new().critical().ca().build()?)?;
        b.append_extension(
            KeyUsage::new()
                .critical()
                .key_cert_sign()
                .crl_sign()
                .build()?,
        )?;
        let ski = SubjectKeyIdentifier::new().build(&b.x509v3_context(None, None))?;
        b.append_extension(ski)?;
        b.sign(&ca_key, MessageDigest::sha256())?;
        let ca = b.build();
        let trust = TrustStore::from_pem(&ca.to_pem()?, None).map_err(proto)?;
        Ok(BenchPki {
            ca,
            ca_key,
            trust: Arc::new(trust),
            serial: 100,
        })
    }

    /// The trust store holding this CA.
    pub fn trust(&self) -> Arc<TrustStore> {
        self.trust.clone()
    }

    /// A P-256 end-entity certificate `O=gander bench, CN=cn` with the dNSName `cn.bench.example`,
    /// digitalSignature key usage and key identifiers, valid from now for 10 days.
    pub fn leaf(&mut self, cn: &str) -> Result<(X509, PKey<Private>), GdoiBenchError> {
        let key = p256()?;
        self.serial += 1;
        let subject: X509Name = name(cn)?;
        let mut b = cert_builder(self.serial, &subject, self.ca.subject_name(), &key, 10)?;
        b.append_extension(KeyUsage::new().critical().digital_signature().build()?)?;
        let ctx = b.x509v3_context(Some(&self.ca), None);
        let san = SubjectAlternativeName::new()
            .dns(&format!("{cn}.bench.example"))
            .build(&ctx)?;
        let ski = SubjectKeyIdentifier::new().build(&ctx)?;
        let aki = AuthorityKeyIdentifier::new().keyid(true).build(&ctx)?;
        b.append_extension(san)?;
        b.append_extension(ski)?;
        b.append_extension(aki)?;
        b.sign(&self.ca_key, MessageDigest::sha256())?;
        Ok((b.build(), key))
    }

    /// [`BenchPki::leaf`] as credentials trusting this CA; with the private key.
    pub fn creds(&mut self, cn: &str) -> Result<(Arc<Credentials>, PKey<Private>), GdoiBenchError> {
        let (cert, key) = self.leaf(cn)?;
        let c = Credentials::new(cert, vec![], key.clone(), self.trust()).map_err(proto)?;
        Ok((Arc::new(c), key))
    }
}

/// An X.509 v3 certificate in the making: `serial`, `subject` issued by `issuer`, `key`'s public
/// half, valid from now for `days`; extensions and signature are the caller's.
fn cert_builder(
    serial: u32,
    subject: &X509NameRef,
    issuer: &X509NameRef,
    key: &PKey<Private>,
    days: u32,
) -> Result<X509Builder, GdoiBenchError> {
    let mut b = X509Builder::new()?;
    b.set_version(2)?;
    let n: BigNum = BigNum::from_u32(serial)?;
    let serial: Asn1Integer = Asn1Integer::from_bn(&n)?;
    let (from, until): (Asn1Time, Asn1Time) =
        (Asn1Time::days_from_now(0)?, Asn1Time::days_from_now(days)?);
    b.set_serial_number(&serial)?;
    b.set_subject_name(subject)?;
    b.set_issuer_name(issuer)?;
    b.set_pubkey(key)?;
    b.set_not_before(&from)?;
    b.set_not_after(&until)?;
    Ok(b)
}

/// One member of the row: its credentials, private key, certificate DER and address.
struct Member {
    creds: Arc<Credentials>,
    key: PKey<Private>,
    der: Vec<u8>,
    peer: SocketAddr,
}

/// What the bare cryptography of one registration works on besides the message sizes.
pub struct BareInput<'a> {
    /// The key server's cookie jar.
    pub jar: &'a CookieJar,
    /// A P-256 public value in the member's role.
    pub peer_pub: &'a [u8],
    /// The member's certificate as its CERT payload carries it (DER).
    pub member_der: &'a [u8],
    /// The key server's trust store.
    pub trust: &'a TrustStore,
    /// The key server's signing key.
    pub kdc_key: &'a PKey<Private>,
    /// A digest the member signed and its SIG payload (r | s), for the verification.
    pub sig_i: (&'a [u8], &'a [u8]),
}

/// The key server's unavoidable cryptography for one certificate registration (module doc);
/// ns. Fails if the certificate or the signature does not verify, so what is timed is the
/// verification that succeeds.
#[inline(never)]
pub(crate) fn bare_crypto(sz: Sizes, b: &BareInput<'_>) -> Result<u64, GdoiBenchError> {
    let h = SUITE.hash;
    let method = AuthMethod::EcdsaP256;
    let auth_h = method.auth_hash(h);
    let (ck_i, ck_r) = ([1u8; 8], [2u8; 8]);
    let (mut ni, mut nr) = ([0u8; 32], [0u8; 32]);
    rand::thread_rng().fill_bytes(&mut ni);
    let t = Instant::now();
    for _ in 0..3 {
        b.jar
            .responder_cookie(b"peer-address", &ck_i)
            .map_err(proto)?;
    }
    rand::thread_rng().fill_bytes(&mut nr);
    let kp = KeyPair::generate(SUITE.group).map_err(proto)?;
    let gxy = kp.shared(b.peer_pub).map_err(proto)?;
    let k =
        Phase1Keys::derive_sig(h, &ni, &nr, &gxy, (&ck_i, &ck_r), SUITE.aes_bits).map_err(proto)?;
    let iv = keys::hash(h, &[b.peer_pub, kp.public()]).map_err(proto)?;
    let iv = &iv[..keys::BLOCK];
    keys::decrypt(&k.enc_key, iv, &vec![0u8; cbc_len(sz.mm5)]).map_err(proto)?;
    let cert = X509::from_der(b.member_der)?;
    b.trust.verify(&cert, &[]).map_err(proto)?;
    let member_key = cert.public_key()?;
    keys::prf(
        auth_h,
        &k.skeyid,
        &[b.peer_pub, kp.public(), &ck_i, &ck_r, &ni, b"idii"],
    )
    .map_err(proto)?;
    verify_hash(method, &member_key, b.sig_i.0, b.sig_i.1).map_err(proto)?;
    let hash_r = keys::prf(
        auth_h,
        &k.skeyid,
        &[kp.public(), b.peer_pub, &ck_r, &ck_i, &ni, b"idir"],
    )
    .map_err(proto)?;
    sign_hash(method, b.kdc_key, &hash_r).map_err(proto)?;
    keys::encrypt(&k.enc_key, iv, &vec![0u8; cbc_len(sz.mm6)]).map_err(proto)?;
    bare_pull(h, &k, iv, sz)?;
    Ok(t.elapsed().as_nanos() as u64)
}

/// The key server's policy: [`MEMBERS`] certificate members of `goose-1`, each named by its
/// subject.
fn policy(members: usize) -> KdcPolicy {
    KdcPolicy {
        identity: id("kdc"),
        members: (0..members)
            .map(|i| MemberPolicy {
                identity: format!("ied-{i}").into_bytes(),
                psk: Zeroizing::new(Vec::new()),
                address: [10, 1, (i >> 8) as u8, i as u8].into(),
                groups: vec![b"goose-1".to_vec()],
                push: None,
                cert: Some(CertMatch::Subject(member_subject(i))),
            })
            .collect(),
        groups: vec![group_policy(3600, 60)],
    }
}

/// The certificate row: `n` registrations (after a warm-up of a twentieth, at least 5) of
/// `members` certificate members round-robin, each followed by its bare cryptography.
pub fn registrations(
    n: usize,
    members: usize,
    progress: &mut dyn FnMut(String),
) -> Result<RegistrationRow, GdoiBenchError> {
    let members = members.max(1);
    let mut pki = BenchPki::new("gander bench CA")?;
    let (kdc_creds, kdc_key) = pki.creds("kdc")?;
    let ms = (0..members)
        .map(|i| {
            let (creds, key) = pki.creds(&format!("ied-{i}"))?;
            let der = creds
                .cert_payloads()
                .map_err(proto)?
                .into_iter()
                .next()
                .ok_or_else(|| proto("no certificate"))?
                .data;
            Ok(Member {
                creds,
                key,
                der,
                peer: SocketAddr::new([10, 1, (i >> 8) as u8, i as u8].into(), 848),
            })
        })
        .collect::<Result<Vec<_>, GdoiBenchError>>()?;
    let mut kdc = Kdc::new(UdpSocket::bind("127.0.0.1:0")?, policy(members));
    kdc.set_certs(KdcCerts {
        creds: vec![kdc_creds],
        keylog: None,
        profiles: vec![],
    });
    let kdc_name = CertMatch::Subject("O=gander bench, CN=kdc".into());
    let jar = CookieJar::new();
    let peer = KeyPair::generate(SUITE.group).map_err(proto)?;
    let trust = pki.trust();
    let (mut ks, mut whole, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    let warm = (n / 20).max(5);
    for i in 0..n + warm {
        let m = &ms[i % ms.len()];
        let start = || -> Result<(Initiator, Vec<u8>), Phase1Error> {
            let (init, msg) = Initiator::start_with(
                Auth::Cert(m.creds.clone()),
                m.creds.id_payload()?,
                vec![SUITE],
            )?;
            Ok((init.expect_peer_cert(kdc_name.clone()), msg))
        };
        let (k, w, sz) = register_once(&mut kdc, m.peer, start, AuthMethod::EcdsaP256)?;
        let mut digest = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut digest);
        let sig = sign_hash(AuthMethod::EcdsaP256, &m.key, &digest).map_err(proto)?;
        let input = BareInput {
            jar: &jar,
            peer_pub: peer.public(),
            member_der: &m.der,
            trust: &trust,
            kdc_key: &kdc_key,
            sig_i: (&digest, &sig),
        };
        let b = bare_crypto(sz, &input)?;
        if i >= warm {
            ks.push(k);
            whole.push(w);
            bare.push(b);
        }
    }
    row(
        SUITE_NAME.to_string(),
        "ECDSA P-256",
        n,
        &ks,
        &bare,
        &whole,
        progress,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input_for(
        pki: &mut BenchPki,
        member_pki: &mut BenchPki,
        f: impl FnOnce(&BareInput<'_>) -> Result<u64, GdoiBenchError>,
    ) -> Result<u64, GdoiBenchError> {
        let (_, kdc_key) = pki.creds("kdc")?;
        let (creds, key) = member_pki.creds("ied-0")?;
        let der = creds.cert_payloads().map_err(proto)?[0].data.clone();
        let peer = KeyPair::generate(SUITE.group).map_err(proto)?;
        let digest = [7u8; 32];
        let sig = sign_hash(AuthMethod::EcdsaP256, &key, &digest).map_err(proto)?;
        let trust = pki.trust();
        let jar = CookieJar::new();
        f(&BareInput {
            jar: &jar,
            peer_pub: peer.public(),
            member_der: &der,
            trust: &trust,
            kdc_key: &kdc_key,
            sig_i: (&digest, &sig),
        })
    }

    fn sizes() -> Sizes {
        Sizes {
            mm5: 600,
            mm6: 600,
            p1: 100,
            p2: 400,
            p3: 100,
            p4: 600,
        }
    }

    #[test]
    fn bare_crypto_verifies_the_chain_and_the_signature() {
        let mut pki = BenchPki::new("CA one").unwrap();
        let mut same = BenchPki {
            ca: pki.ca.clone(),
            ca_key: pki.ca_key.clone(),
            trust: pki.trust(),
            serial: 500,
        };
        let ns = input_for(&mut pki, &mut same, |b| bare_crypto(sizes(), b)).unwrap();
        assert!(ns > 0);
        // A member certificate of another CA does not chain: the bare path refuses it.
        let mut other = BenchPki::new("CA two").unwrap();
        assert!(input_for(&mut pki, &mut other, |b| bare_crypto(sizes(), b)).is_err());
        // A signature over another digest does not verify.
        let r = input_for(&mut pki, &mut same, |b| {
            bare_crypto(
                sizes(),
                &BareInput {
                    sig_i: (&[8u8; 32], b.sig_i.1),
                    ..*b
                },
            )
        });
        assert!(r.is_err());
    }

    #[test]
    fn policy_names_every_member_by_subject() {
        let p = policy(3);
        assert_eq!(p.members.len(), 3);
        assert!(p.members.iter().all(|m| m.psk.is_empty()));
        assert_eq!(
            p.members[2].cert,
            Some(CertMatch::Subject("O=gander bench, CN=ied-2".into()))
        );
    }

    #[test]
    fn a_few_certificate_registrations_give_a_sane_row() {
        let mut lines = Vec::new();
        let r = registrations(12, 4, &mut |l| lines.push(l)).unwrap();
        assert_eq!(r.registrations, 12);
        assert_eq!(r.key_server_ns.n, 12);
        assert_eq!(r.auth, "ECDSA P-256");
        assert!(r.bare_crypto_ns.p50 > 0.0 && r.key_server_ns.p50 > 0.0);
        // Every whole registration contains the key server's part of it.
        assert!(r.whole_ns.p50 >= r.key_server_ns.p50);
        assert!((r.key_server_per_s - 1e9 / r.key_server_ns.p50).abs() < 1e-6);
        assert!(r.own_share < 1.0 && r.own_share.is_finite());
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("registration, ECDSA P-256 certificates"));
    }
}
