//! What an IANA cipher suite is made of, read from its registry name, and which protocol
//! versions it can be offered at.
//!
//! The registry's names are systematic: `TLS_<kx>[_<auth>]_WITH_<cipher>_<mac>` up to TLS 1.2
//! (RFC 5246 Appendix A.5, RFC 4492 §6, RFC 4279 §2) and `TLS_<aead>_<hash>` for TLS 1.3
//! (RFC 8446 B.4). The weakness flags follow the public sources each finding cites
//! (`super::findings`).
use super::iana_suites::SUITES;
use super::ProtocolVersion;
use serde::Serialize;

/// One registry entry with its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SuiteInfo {
    /// IANA code point.
    pub code: u16,
    /// IANA name.
    pub name: &'static str,
    /// Key exchange (`RSA`, `DHE`, `ECDHE`, `DH`, `ECDH`, `PSK`, `SRP`, `KRB5`, ... ; `any` for TLS 1.3).
    pub kx: &'static str,
    /// Server authentication (`RSA`, `DSS`, `ECDSA`, `anon`, `PSK`, ... ; `any` for TLS 1.3).
    pub auth: &'static str,
    /// Bulk cipher, e.g. `AES_128_GCM`, `3DES_EDE_CBC`, `NULL`.
    pub cipher: &'static str,
    /// MAC (`SHA`, `MD5`, `SHA256`, `SHA384`) or, for AEAD suites, the hash of the PRF / HKDF.
    pub mac: &'static str,
    /// No server authentication at all (`DH_anon`, `ECDH_anon`).
    pub anonymous: bool,
    /// No encryption (`WITH_NULL`, RFC 4785, RFC 9150 integrity-only).
    pub null: bool,
    /// An export-grade suite (40/56-bit keys or a 512/1024-bit export key exchange).
    pub export: bool,
    /// RC4 (RFC 7465).
    pub rc4: bool,
    /// Single DES (RFC 5469: removed from TLS 1.2).
    pub des: bool,
    /// Triple DES (64-bit block: SWEET32, CVE-2016-2183).
    pub triple_des: bool,
    /// The suite needs TLS 1.2 (an AEAD cipher or a SHA-2 MAC / PRF).
    pub tls12_only: bool,
    /// A TLS 1.3 suite (RFC 8446 B.4, RFC 8998, RFC 9150, RFC 9367).
    pub tls13: bool,
}

/// Every registry suite, in code order.
pub fn all() -> impl Iterator<Item = SuiteInfo> {
    SUITES.iter().map(|&(code, name)| info_of(code, name))
}

/// The registry entry of `code`, if assigned.
pub fn by_code(code: u16) -> Option<SuiteInfo> {
    SUITES
        .binary_search_by_key(&code, |&(c, _)| c)
        .ok()
        .map(|i| info_of(SUITES[i].0, SUITES[i].1))
}

/// The name of `code`: its registry name, else `0xXXXX`.
pub fn name_of(code: u16) -> String {
    by_code(code)
        .map(|s| s.name.to_string())
        .unwrap_or_else(|| format!("0x{code:04X}"))
}

/// The suites a ClientHello of `version` offers: TLS 1.3 suites only at 1.3; TLS 1.2-only
/// suites (AEAD, SHA-2 MAC) only at 1.2, where a server of an older version could not use them.
pub fn for_version(version: ProtocolVersion) -> Vec<SuiteInfo> {
    all()
        .filter(|s| match version {
            ProtocolVersion::Tls13 => s.tls13,
            ProtocolVersion::Tls12 => !s.tls13,
            _ => !s.tls13 && !s.tls12_only,
        })
        .collect()
}

/// Splits a registry name into its parts (see the module comment).
fn info_of(code: u16, name: &'static str) -> SuiteInfo {
    let body = name.strip_prefix("TLS_").unwrap_or(name);
    let (kx_auth, cipher_mac, tls13) = match body.split_once("_WITH_") {
        Some((a, b)) => (a, b, false),
        // TLS 1.3 names carry no key exchange; the GOST TLS 1.3 suites of RFC 9367 do carry
        // `_WITH_` but end in `_L`/`_S` (MGM), caught below.
        None => ("any", body, true),
    };
    let tls13 = tls13 || (0xC103..=0xC106).contains(&code);
    let (kx, auth) = split_kx(kx_auth);
    let (cipher, mac) = split_mac(cipher_mac);
    let aead = ["GCM", "CCM", "POLY1305", "MGM"]
        .iter()
        .any(|m| cipher.contains(m));
    let export = kx_auth.contains("EXPORT")
        || cipher.contains("_40")
        || cipher.starts_with("DES40")
        || cipher.contains("_56");
    SuiteInfo {
        code,
        name,
        kx,
        auth,
        cipher,
        mac,
        anonymous: auth == "anon",
        null: cipher == "NULL" || (tls13 && (0xC0B4..=0xC0B5).contains(&code)),
        export,
        rc4: cipher.starts_with("RC4"),
        des: cipher.starts_with("DES"),
        triple_des: cipher.starts_with("3DES"),
        tls12_only: !tls13 && (aead || mac == "SHA256" || mac == "SHA384"),
        tls13,
    }
}

/// `DHE_RSA` -> (`DHE`, `RSA`); `RSA` -> (`RSA`, `RSA`); `PSK` -> (`PSK`, `PSK`).
fn split_kx(s: &'static str) -> (&'static str, &'static str) {
    if s == "any" {
        return ("any", "any");
    }
    let s = s
        .strip_suffix("_EXPORT1024")
        .or_else(|| s.strip_suffix("_EXPORT"))
        .unwrap_or(s);
    match s {
        "RSA" | "RSA_EXPORT" | "RSA_EXPORT1024" => ("RSA", "RSA"),
        "KRB5" => ("KRB5", "KRB5"),
        "PSK" => ("PSK", "PSK"),
        "PSK_DHE" => ("DHE", "PSK"),
        "SRP_SHA" => ("SRP", "SRP"),
        "SRP_SHA_RSA" => ("SRP", "RSA"),
        "SRP_SHA_DSS" => ("SRP", "DSS"),
        "ECCPWD" => ("ECCPWD", "ECCPWD"),
        "GOSTR341094" | "GOSTR341001" | "GOSTR341112_256" => ("GOST", "GOST"),
        "NULL" => ("NULL", "NULL"),
        _ => match s.split_once('_') {
            Some((kx, auth)) => (kx, auth),
            None => (s, s),
        },
    }
}

/// `AES_128_CBC_SHA` -> (`AES_128_CBC`, `SHA`); `AES_128_CCM` -> (`AES_128_CCM`, `SHA256`).
fn split_mac(s: &'static str) -> (&'static str, &'static str) {
    for mac in [
        "_SHA384", "_SHA256", "_SHA", "_MD5", "_SM3", "_IMIT", "_OMAC",
    ] {
        if let Some(c) = s.strip_suffix(mac) {
            return (c, &mac[1..]);
        }
    }
    // AEAD suites without a hash in the name (RFC 6655 CCM, RFC 9367 MGM) use SHA-256 / Streebog.
    (
        s,
        if s.contains("MGM") {
            "STREEBOG256"
        } else {
            "SHA256"
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        assert!(SUITES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(SUITES.len() > 330);
    }

    #[test]
    fn classifies_known_suites() {
        let s = by_code(0x0018).unwrap();
        assert_eq!(s.name, "TLS_DH_anon_WITH_RC4_128_MD5");
        assert!(s.anonymous && s.rc4 && !s.export);
        assert_eq!(
            (s.kx, s.auth, s.cipher, s.mac),
            ("DH", "anon", "RC4_128", "MD5")
        );
        let s = by_code(0xC018).unwrap();
        assert!(s.anonymous && s.kx == "ECDH");
        let s = by_code(0x000A).unwrap();
        assert!(s.triple_des && !s.des && !s.tls12_only);
        let s = by_code(0x0009).unwrap();
        assert!(s.des && !s.triple_des);
        let s = by_code(0x0003).unwrap();
        assert!(s.export && s.rc4);
        let s = by_code(0x0002).unwrap();
        assert!(s.null && s.mac == "SHA");
        let s = by_code(0xC02F).unwrap();
        assert_eq!((s.kx, s.auth, s.mac), ("ECDHE", "RSA", "SHA256"));
        assert!(s.tls12_only && !s.tls13);
        let s = by_code(0x1302).unwrap();
        assert!(s.tls13 && s.cipher == "AES_256_GCM" && s.mac == "SHA384");
        let s = by_code(0xC0B4).unwrap();
        assert!(s.tls13 && s.null);
        assert!(by_code(0x5600).is_none());
    }

    #[test]
    fn version_sets() {
        let t13 = for_version(ProtocolVersion::Tls13);
        assert!(t13.iter().all(|s| s.tls13));
        assert!(t13.iter().any(|s| s.code == 0x1301));
        let t10 = for_version(ProtocolVersion::Tls10);
        assert!(t10.iter().all(|s| !s.tls12_only && !s.tls13));
        assert!(t10.iter().any(|s| s.code == 0x002F));
        assert!(!t10.iter().any(|s| s.code == 0xC02F));
    }
}
