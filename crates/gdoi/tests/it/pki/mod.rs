//! A test PKI made with the openssl crate: a CA, end-entity certificates of each key type
//! (RSA-2048, P-256, P-384) with chosen validity, key usage and subjectAltName, and CRLs.
#![allow(dead_code, unreachable_pub)]

use gander_gdoi::cert_auth::Credentials;
use gander_gdoi::trust::TrustStore;
use openssl::asn1::{Asn1Integer, Asn1Time};
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::x509::extension::{
    AuthorityKeyIdentifier, BasicConstraints, KeyUsage, SubjectAlternativeName,
    SubjectKeyIdentifier,
};
use openssl::x509::{CrlNumber, X509Builder, X509CrlBuilder, X509Name, X509RevokedBuilder, X509};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Rsa2048,
    P256,
    P384,
}

pub const ALL: [Kind; 3] = [Kind::Rsa2048, Kind::P256, Kind::P384];

pub fn key(kind: Kind) -> PKey<Private> {
    let ec = |nid| {
        PKey::from_ec_key(EcKey::generate(&EcGroup::from_curve_name(nid).unwrap()).unwrap())
            .unwrap()
    };
    match kind {
        Kind::Rsa2048 => PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap(),
        Kind::P256 => ec(Nid::X9_62_PRIME256V1),
        Kind::P384 => ec(Nid::SECP384R1),
    }
}

/// What an end-entity certificate looks like.
#[derive(Debug, Clone)]
pub struct Leaf<'a> {
    pub cn: &'a str,
    pub kind: Kind,
    pub san: Option<&'a str>,
    pub expired: bool,
    pub signing_usage: bool,
}

impl<'a> Leaf<'a> {
    pub fn new(cn: &'a str, kind: Kind) -> Leaf<'a> {
        Leaf {
            cn,
            kind,
            san: None,
            expired: false,
            signing_usage: true,
        }
    }
}

pub struct Pki {
    pub ca: X509,
    pub ca_key: PKey<Private>,
    pub dir: PathBuf,
    serial: AtomicU32,
}

static DIRS: AtomicU32 = AtomicU32::new(0);

fn name(cn: &str) -> X509Name {
    let mut n = X509Name::builder().unwrap();
    n.append_entry_by_text("O", "gander test").unwrap();
    n.append_entry_by_text("CN", cn).unwrap();
    n.build()
}

impl Pki {
    pub fn new(cn: &str, kind: Kind) -> Pki {
        let dir = std::env::temp_dir().join(format!(
            "gander-pki-{}-{}",
            std::process::id(),
            DIRS.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_key = key(kind);
        let mut b = X509Builder::new().unwrap();
        b.set_version(2).unwrap();
        b.set_serial_number(&Asn1Integer::from_bn(&BigNum::from_u32(1).unwrap()).unwrap())
            .unwrap();
        b.set_subject_name(&name(cn)).unwrap();
        b.set_issuer_name(&name(cn)).unwrap();
        b.set_pubkey(&ca_key).unwrap();
        b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
            .unwrap();
        b.set_not_after(&Asn1Time::days_from_now(30).unwrap())
            .unwrap();
        b.append_extension(BasicConstraints::new().critical().ca().build().unwrap())
            .unwrap();
        b.append_extension(
            KeyUsage::new()
                .critical()
                .key_cert_sign()
                .crl_sign()
                .build()
                .unwrap(),
        )
        .unwrap();
        let ski = SubjectKeyIdentifier::new()
            .build(&b.x509v3_context(None, None))
            .unwrap();
        b.append_extension(ski).unwrap();
        b.sign(&ca_key, MessageDigest::sha256()).unwrap();
        let ca = b.build();
        std::fs::write(dir.join("ca.pem"), ca.to_pem().unwrap()).unwrap();
        Pki {
            ca,
            ca_key,
            dir,
            serial: AtomicU32::new(100),
        }
    }

    pub fn ca_path(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    pub fn leaf(&self, l: &Leaf<'_>) -> (X509, PKey<Private>) {
        let k = key(l.kind);
        let mut b = X509Builder::new().unwrap();
        b.set_version(2).unwrap();
        let serial = self.serial.fetch_add(1, Ordering::SeqCst);
        b.set_serial_number(&Asn1Integer::from_bn(&BigNum::from_u32(serial).unwrap()).unwrap())
            .unwrap();
        b.set_subject_name(&name(l.cn)).unwrap();
        b.set_issuer_name(self.ca.subject_name()).unwrap();
        b.set_pubkey(&k).unwrap();
        if l.expired {
            // Valid from 1 January 2000 for one day.
            b.set_not_before(&Asn1Time::from_unix(946_684_800).unwrap())
                .unwrap();
            b.set_not_after(&Asn1Time::from_unix(946_771_200).unwrap())
                .unwrap();
        } else {
            b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
                .unwrap();
            b.set_not_after(&Asn1Time::days_from_now(10).unwrap())
                .unwrap();
        }
        let ku = if l.signing_usage {
            KeyUsage::new().critical().digital_signature().build()
        } else {
            KeyUsage::new().critical().key_encipherment().build()
        };
        b.append_extension(ku.unwrap()).unwrap();
        if let Some(s) = l.san {
            let ext = {
                let ctx = b.x509v3_context(Some(&self.ca), None);
                if s.parse::<std::net::IpAddr>().is_ok() {
                    SubjectAlternativeName::new().ip(s).build(&ctx).unwrap()
                } else {
                    SubjectAlternativeName::new().dns(s).build(&ctx).unwrap()
                }
            };
            b.append_extension(ext).unwrap();
        }
        b.sign(&self.ca_key, MessageDigest::sha256()).unwrap();
        (b.build(), k)
    }

    /// A CRL of this CA revoking `revoked`, written to a file.
    pub fn crl(&self, revoked: &[&X509], file: &str) -> PathBuf {
        let mut b = X509CrlBuilder::new().unwrap();
        b.set_issuer_name(self.ca.subject_name()).unwrap();
        b.set_last_update(&Asn1Time::days_from_now(0).unwrap())
            .unwrap();
        b.set_next_update(&Asn1Time::days_from_now(7).unwrap())
            .unwrap();
        for c in revoked {
            let mut r = X509RevokedBuilder::new().unwrap();
            r.set_serial_number(c.serial_number()).unwrap();
            r.set_revocation_date(&Asn1Time::days_from_now(0).unwrap())
                .unwrap();
            b.add_revoked(r.build()).unwrap();
        }
        // RFC 5280 5.2.1 and 5.2.3: the CRL names its key by AKI and carries a number.
        let aki = {
            let cb = X509Builder::new().unwrap();
            let ctx = cb.x509v3_context(Some(&self.ca), None);
            AuthorityKeyIdentifier::new()
                .keyid(true)
                .build(&ctx)
                .unwrap()
        };
        b.append_extension(aki).unwrap();
        b.append_extension(
            CrlNumber::new(BigNum::from_u32(1).unwrap())
                .unwrap()
                .build()
                .unwrap(),
        )
        .unwrap();
        b.sign(&self.ca_key, MessageDigest::sha256()).unwrap();
        let crl = b.build().unwrap();
        let p = self.dir.join(file);
        std::fs::write(&p, crl.to_pem().unwrap()).unwrap();
        p
    }

    pub fn trust(&self, crl: Option<&Path>) -> Arc<TrustStore> {
        Arc::new(TrustStore::load(&self.ca_path(), crl).unwrap())
    }

    pub fn creds(&self, l: &Leaf<'_>, trust: Arc<TrustStore>) -> Arc<Credentials> {
        let (c, k) = self.leaf(l);
        Arc::new(Credentials::new(c, vec![], k, trust).unwrap())
    }

    /// Writes a certificate and key as PEM files; returns their paths.
    pub fn write(&self, stem: &str, cert: &X509, key: &PKey<Private>) -> (PathBuf, PathBuf) {
        let c = self.dir.join(format!("{stem}.pem"));
        let k = self.dir.join(format!("{stem}.key"));
        std::fs::write(&c, cert.to_pem().unwrap()).unwrap();
        std::fs::write(&k, key.private_key_to_pem_pkcs8().unwrap()).unwrap();
        (c, k)
    }
}
