//! What the survey reports of each certificate the server sends (RFC 5280 §4.1, §4.2), parsed
//! with OpenSSL's X.509 code, which the crate already links.
use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::x509::{X509KeyUsage, X509NameRef, X509};
use serde::Serialize;

/// One certificate of the chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CertInfo {
    /// Subject distinguished name, `CN=..., O=...`.
    pub subject: String,
    /// Issuer distinguished name.
    pub issuer: String,
    /// Whether subject and issuer are the same name (a root or a self-signed leaf).
    pub self_issued: bool,
    /// X.509 version (1 or 3; IEC 62351-4 Annex G asks for v3 per public extracts).
    pub x509_version: i32,
    /// Public-key algorithm: `RSA`, `RSA-PSS`, `EC`, `Ed25519`, `Ed448`, `DSA` or the OID's name.
    pub key_type: String,
    /// Key size in bits (the modulus for RSA, the field for EC).
    pub key_bits: u32,
    /// EC curve (`P-256`, `P-384`, `P-521` or OpenSSL's short name), for EC keys.
    pub curve: Option<String>,
    /// Signature algorithm of the certificate, e.g. `sha256WithRSAEncryption`.
    pub signature_algorithm: String,
    /// Start of validity, UTC, ISO 8601.
    pub not_before: String,
    /// End of validity, UTC, ISO 8601.
    pub not_after: String,
    /// Whether the survey's clock is inside the validity period.
    pub valid_now: bool,
    /// keyUsage bits (RFC 5280 §4.2.1.3); `None` when the extension is absent.
    pub key_usage: Option<Vec<&'static str>>,
    /// extendedKeyUsage purposes OpenSSL knows (RFC 5280 §4.2.1.12); `None` when absent.
    pub extended_key_usage: Option<Vec<&'static str>>,
    /// subjectAltName entries, `DNS:...`, `IP:...`, `URI:...`, `email:...`.
    pub san: Vec<String>,
    /// DER size in octets (IEC 62351-3 bounds certificates to 8192 octets, per public extracts).
    pub der_len: usize,
    /// SHA-256 of the certificate's DER, lowercase hex: the certificate's identity (a re-issued
    /// certificate with the same names and validity but a new key differs here), the
    /// fingerprint testssl.sh and sslyze print.
    pub sha256: String,
}

/// Errors parsing a certificate the server sent.
#[derive(Debug, thiserror::Error)]
#[error("certificate {index} of the chain does not parse: {reason}")]
pub struct ChainError {
    /// Position in the chain, 0 = leaf.
    pub index: usize,
    /// OpenSSL's message.
    pub reason: String,
}

fn name(n: &X509NameRef) -> String {
    let parts: Vec<String> = n
        .entries()
        .map(|e| {
            let key = e.object().nid().short_name().unwrap_or("?").to_string();
            let val = e
                .data()
                .to_string()
                .unwrap_or_else(|_| String::from_utf8_lossy(e.data().as_slice()).into_owned());
            format!("{key}={val}")
        })
        .collect();
    parts.join(", ")
}

/// Days since 1970-01-01 to a civil date (proleptic Gregorian; H. Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Seconds since the Unix epoch as `YYYY-MM-DDThh:mm:ssZ`.
pub(crate) fn iso8601(unix: i64) -> String {
    let (y, m, d) = civil(unix.div_euclid(86_400));
    let s = unix.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

fn unix(t: &openssl::asn1::Asn1TimeRef) -> Option<i64> {
    let epoch = openssl::asn1::Asn1Time::from_unix(0).ok()?;
    let d = epoch.diff(t).ok()?;
    Some(i64::from(d.days) * 86_400 + i64::from(d.secs))
}

fn key_usage(ku: X509KeyUsage) -> Vec<&'static str> {
    [
        (X509KeyUsage::DIGITAL_SIGNATURE, "digitalSignature"),
        (X509KeyUsage::NON_REPUDIATION, "nonRepudiation"),
        (X509KeyUsage::KEY_ENCIPHERMENT, "keyEncipherment"),
        (X509KeyUsage::DATA_ENCIPHERMENT, "dataEncipherment"),
        (X509KeyUsage::KEY_AGREEMENT, "keyAgreement"),
        (X509KeyUsage::KEY_CERT_SIGN, "keyCertSign"),
        (X509KeyUsage::CRL_SIGN, "cRLSign"),
        (X509KeyUsage::ENCIPHER_ONLY, "encipherOnly"),
        (X509KeyUsage::DECIPHER_ONLY, "decipherOnly"),
    ]
    .into_iter()
    .filter(|(b, _)| ku.contains(*b))
    .map(|(_, n)| n)
    .collect()
}

fn eku(e: openssl::x509::X509ExtendedKeyUsage) -> Vec<&'static str> {
    use openssl::x509::X509ExtendedKeyUsage as E;
    [
        (E::SSL_SERVER, "serverAuth"),
        (E::SSL_CLIENT, "clientAuth"),
        (E::SMIME, "emailProtection"),
        (E::CODE_SIGN, "codeSigning"),
        (E::OCSP_SIGN, "OCSPSigning"),
        (E::TIMESTAMP, "timeStamping"),
        (E::ANYEKU, "anyExtendedKeyUsage"),
    ]
    .into_iter()
    .filter(|(b, _)| e.contains(*b))
    .map(|(_, n)| n)
    .collect()
}

fn curve_name(nid: Nid) -> String {
    match nid {
        Nid::X9_62_PRIME256V1 => "P-256".into(),
        Nid::SECP384R1 => "P-384".into(),
        Nid::SECP521R1 => "P-521".into(),
        n => n.short_name().unwrap_or("unknown").to_string(),
    }
}

/// Describes one DER certificate; `now` is the survey's clock (Unix seconds).
pub fn describe(der: &[u8], now: i64) -> Result<CertInfo, openssl::error::ErrorStack> {
    let x = X509::from_der(der)?;
    let pk = x.public_key()?;
    let (key_type, curve) = match pk.id() {
        Id::RSA => ("RSA".to_string(), None),
        Id::RSA_PSS => ("RSA-PSS".to_string(), None),
        Id::EC => (
            "EC".to_string(),
            pk.ec_key()
                .ok()
                .and_then(|k| k.group().curve_name())
                .map(curve_name),
        ),
        Id::ED25519 => ("Ed25519".to_string(), None),
        Id::ED448 => ("Ed448".to_string(), None),
        Id::DSA => ("DSA".to_string(), None),
        other => (
            Nid::from_raw(other.as_raw())
                .short_name()
                .unwrap_or("unknown")
                .to_string(),
            None,
        ),
    };
    let nb = unix(x.not_before());
    let na = unix(x.not_after());
    let fmt = |t: Option<i64>| t.map(iso8601).unwrap_or_else(|| "unreadable".into());
    let san = x
        .subject_alt_names()
        .map(|st| {
            st.iter()
                .filter_map(|g| {
                    if let Some(d) = g.dnsname() {
                        Some(format!("DNS:{d}"))
                    } else if let Some(ip) = g.ipaddress() {
                        match ip.len() {
                            4 => <[u8; 4]>::try_from(ip)
                                .ok()
                                .map(|a| format!("IP:{}", std::net::Ipv4Addr::from(a))),
                            16 => <[u8; 16]>::try_from(ip)
                                .ok()
                                .map(|a| format!("IP:{}", std::net::Ipv6Addr::from(a))),
                            _ => None,
                        }
                    } else if let Some(u) = g.uri() {
                        Some(format!("URI:{u}"))
                    } else {
                        g.email().map(|e| format!("email:{e}"))
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let subject = name(x.subject_name());
    let issuer = name(x.issuer_name());
    Ok(CertInfo {
        self_issued: subject == issuer,
        subject,
        issuer,
        x509_version: x.version() + 1,
        key_type,
        key_bits: pk.bits(),
        curve,
        signature_algorithm: x.signature_algorithm().object().to_string(),
        not_before: fmt(nb),
        not_after: fmt(na),
        valid_now: matches!((nb, na), (Some(b), Some(a)) if b <= now && now <= a),
        key_usage: x.key_usage().map(key_usage),
        extended_key_usage: x.extended_key_usage().map(eku),
        san,
        der_len: der.len(),
        sha256: openssl::sha::sha256(der)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    })
}

/// Describes a chain, leaf first.
pub fn describe_chain(chain: &[Vec<u8>], now: i64) -> Result<Vec<CertInfo>, ChainError> {
    chain
        .iter()
        .enumerate()
        .map(|(index, der)| {
            describe(der, now).map_err(|e| ChainError {
                index,
                reason: e.to_string(),
            })
        })
        .collect()
}

/// The system clock as Unix seconds.
pub(crate) fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::asn1::Asn1Time;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::hash::MessageDigest;
    use openssl::pkey::PKey;
    use openssl::x509::extension::{ExtendedKeyUsage, KeyUsage, SubjectAlternativeName};
    use openssl::x509::{X509Builder, X509NameBuilder};

    fn cert(not_before: i64, not_after: i64) -> Vec<u8> {
        let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
        let k = PKey::from_ec_key(EcKey::generate(&g).unwrap()).unwrap();
        let mut n = X509NameBuilder::new().unwrap();
        n.append_entry_by_text("CN", "ied1").unwrap();
        n.append_entry_by_text("O", "utility").unwrap();
        let n = n.build();
        let mut b = X509Builder::new().unwrap();
        b.set_version(2).unwrap();
        b.set_subject_name(&n).unwrap();
        b.set_issuer_name(&n).unwrap();
        b.set_pubkey(&k).unwrap();
        b.set_not_before(&Asn1Time::from_unix(not_before).unwrap())
            .unwrap();
        b.set_not_after(&Asn1Time::from_unix(not_after).unwrap())
            .unwrap();
        b.append_extension(KeyUsage::new().digital_signature().build().unwrap())
            .unwrap();
        b.append_extension(ExtendedKeyUsage::new().server_auth().build().unwrap())
            .unwrap();
        let san = SubjectAlternativeName::new()
            .dns("ied1.example")
            .ip("10.0.0.7")
            .build(&b.x509v3_context(None, None))
            .unwrap();
        b.append_extension(san).unwrap();
        b.sign(&k, MessageDigest::sha256()).unwrap();
        b.build().to_der().unwrap()
    }

    #[test]
    fn describes_a_generated_certificate() {
        let der = cert(1_700_000_000, 1_900_000_000);
        let c = describe(&der, 1_800_000_000).unwrap();
        assert_eq!(c.subject, "CN=ied1, O=utility");
        assert!(c.self_issued);
        assert_eq!(c.x509_version, 3);
        assert_eq!((c.key_type.as_str(), c.key_bits), ("EC", 256));
        assert_eq!(c.curve.as_deref(), Some("P-256"));
        assert_eq!(c.signature_algorithm, "ecdsa-with-SHA256");
        assert_eq!(c.not_before, "2023-11-14T22:13:20Z");
        assert_eq!(c.not_after, "2030-03-17T17:46:40Z");
        assert!(c.valid_now);
        assert_eq!(c.key_usage, Some(vec!["digitalSignature"]));
        assert_eq!(c.extended_key_usage, Some(vec!["serverAuth"]));
        assert_eq!(c.san, ["DNS:ied1.example", "IP:10.0.0.7"]);
        assert_eq!(c.der_len, der.len());
        assert_eq!(c.sha256.len(), 64);
        assert_ne!(
            describe(&cert(1_700_000_000, 1_900_000_001), 0)
                .unwrap()
                .sha256,
            c.sha256
        );
        assert!(!describe(&der, 1_950_000_000).unwrap().valid_now);
        assert!(!describe(&der, 1_600_000_000).unwrap().valid_now);
    }

    #[test]
    fn bad_der_is_an_error() {
        let e = describe_chain(&[vec![0x30, 0x03, 1, 2, 3]], 0).unwrap_err();
        assert_eq!(e.index, 0);
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59Z");
    }
}
