//! The cipher-suite catalogue: every suite gander knows by IANA name and code point, with its
//! components, the TLS versions it is defined for, its IEC 62351-3/-4 status (and where that
//! statement comes from), and whether it appears in the two reference studies.
//!
//! Which *backend* supports a suite is not written here: it is asked of each library at run time
//! ([`crate::backend::supported_suites`]), so the answer is true for the libraries on this machine.
//!
//! Code points: IANA "TLS Cipher Suites" registry (RFC 5246 App. A.5, RFC 8446 §B.4, RFC 5288,
//! RFC 5289, RFC 7905, RFC 6655).
//!
//! IEC 62351 status is taken from public descriptions only (see `docs/tls.md`, "what the public
//! sources say"): IEC 62351-4:2018 names four mandatory TLS 1.2 suites for native mode, of which the
//! ECDHE one is ECDHE_RSA according to libiec61850's comments but ECDHE_ECDSA according to a third-party
//! extract; both are marked mandatory here with that conflict stated. IEC 62351-3 Ed.1 Amd1 deprecates
//! SHA-1, so every SHA-1 MAC suite is `Deprecated`.
use crate::TlsVersion;
use serde::Serialize;
use std::fmt;

/// Key exchange of a TLS 1.0-1.2 suite; TLS 1.3 suites (RFC 8446 §4.2.7) do not name one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum KeyExchange {
    /// RSA key transport (RFC 5246 §7.4.7.1): no forward secrecy.
    Rsa,
    /// Static Diffie-Hellman with an RSA-signed DH certificate (RFC 5246 §7.4.7.2).
    DhRsa,
    /// Ephemeral finite-field Diffie-Hellman, RSA-signed (RFC 5246 §7.4.3).
    DheRsa,
    /// Ephemeral elliptic-curve Diffie-Hellman, RSA-signed (RFC 8422).
    EcdheRsa,
    /// Ephemeral elliptic-curve Diffie-Hellman, ECDSA-signed (RFC 8422).
    EcdheEcdsa,
    /// TLS 1.3: (EC)DHE always, negotiated separately (RFC 8446 §4.2.8).
    AnyTls13,
}

impl KeyExchange {
    /// The key exchange as IANA suite names spell it, e.g. `ECDHE_RSA`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rsa => "RSA",
            Self::DhRsa => "DH_RSA",
            Self::DheRsa => "DHE_RSA",
            Self::EcdheRsa => "ECDHE_RSA",
            Self::EcdheEcdsa => "ECDHE_ECDSA",
            Self::AnyTls13 => "(EC)DHE",
        }
    }
    /// Authentication algorithm implied by the key exchange.
    pub fn auth(self) -> &'static str {
        match self {
            Self::Rsa | Self::DhRsa | Self::DheRsa | Self::EcdheRsa => "RSA",
            Self::EcdheEcdsa => "ECDSA",
            Self::AnyTls13 => "any",
        }
    }
    /// Whether a passive attacker who later learns the long-term key can decrypt recorded traffic.
    pub fn forward_secrecy(self) -> bool {
        !matches!(self, Self::Rsa | Self::DhRsa)
    }
}

/// Status of a suite in IEC 62351-3/-4, as far as public sources say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IecStatus {
    /// Every IEC 62351-3/-4 implementation must support it.
    Mandatory,
    /// IEC 62351-3/-4 recommends it.
    Recommended,
    /// IEC 62351-3/-4 allows it.
    Optional,
    /// Kept for IEC 62351-4 compatibility mode with legacy devices.
    Legacy,
    /// Uses SHA-1, deprecated by IEC 62351-3 Ed.1 Amd1.
    Deprecated,
    /// Not named by IEC 62351-3/-4.
    NotListed,
}

impl IecStatus {
    /// The status as `gander suites` prints it (`-` for not listed).
    pub fn name(self) -> &'static str {
        match self {
            Self::Mandatory => "mandatory",
            Self::Recommended => "recommended",
            Self::Optional => "optional",
            Self::Legacy => "legacy",
            Self::Deprecated => "deprecated",
            Self::NotListed => "-",
        }
    }
}

/// Component names as GnuTLS priority strings spell them (gnutls_priority_init(3)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GnutlsParts {
    /// Key exchange keyword, e.g. `DHE-RSA` (empty for TLS 1.3 suites).
    pub kx: &'static str,
    /// Cipher keyword, e.g. `3DES-CBC`.
    pub cipher: &'static str,
    /// MAC keyword, e.g. `SHA1` (`AEAD` for AEAD ciphers).
    pub mac: &'static str,
}

/// One cipher suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CipherSuite {
    /// IANA name, e.g. `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`.
    pub name: &'static str,
    /// IANA code point.
    pub code: u16,
    /// Key exchange and authentication.
    pub kx: KeyExchange,
    /// Bulk cipher, e.g. `AES-128-GCM`.
    pub cipher: &'static str,
    /// Record MAC (`AEAD` for AEAD ciphers); for TLS 1.3 the HKDF hash is part of the name.
    pub mac: &'static str,
    /// Oldest version the suite can be used with.
    pub min_version: TlsVersion,
    /// Newest version the suite can be used with.
    pub max_version: TlsVersion,
    /// Status in IEC 62351-3/-4.
    pub iec: IecStatus,
    /// Where the IEC status comes from.
    pub iec_source: &'static str,
    /// Position in the RSE 2019 paper's list (i..v), if there.
    pub rse: Option<&'static str>,
    /// Label in the Sandia 2023 report (CS1..CS7), if there.
    pub sandia: Option<&'static str>,
    /// How a GnuTLS priority string enables the suite.
    #[serde(skip)]
    pub gnutls: GnutlsParts,
}

impl CipherSuite {
    /// Whether the suite is defined for `v`.
    pub fn allows(&self, v: TlsVersion) -> bool {
        self.min_version <= v && v <= self.max_version
    }
    /// The versions the suite is defined for, oldest first.
    pub fn versions(&self) -> impl Iterator<Item = TlsVersion> + '_ {
        TlsVersion::ALL.into_iter().filter(|v| self.allows(*v))
    }
    /// Whether the suite's key exchange gives forward secrecy.
    pub fn forward_secrecy(&self) -> bool {
        self.kx.forward_secrecy()
    }
    /// Whether it is a TLS 1.3 suite.
    pub fn is_tls13(&self) -> bool {
        self.kx == KeyExchange::AnyTls13
    }
}

impl fmt::Display for CipherSuite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

use IecStatus::*;
use KeyExchange::*;
use TlsVersion::*;

const SRC_62351_4_MAND: &str =
    "IEC 62351-4:2018 native mode, mandatory TLS 1.2 suite (libiec61850 comments; docs/tls.md)";
const SRC_62351_4_ECDHE: &str = "IEC 62351-4:2018 mandatory 'ECDHE AES128_GCM_SHA256': ECDHE_RSA per libiec61850, ECDHE_ECDSA per a third-party extract (conflict; docs/tls.md)";
const SRC_62351_4_REC: &str = "IEC 62351-4:2018 recommended (libiec61850 comments; docs/tls.md)";
const SRC_62351_3_ED2: &str =
    "IEC 62351-3 Ed.2 (2023) TLS 1.3 profile per libiec61850 comments (docs/tls.md)";
const SRC_SHA1: &str = "SHA-1 deprecated by IEC 62351-3 Ed.1 Amd1 (2018) (docs/tls.md)";
const SRC_COMPAT: &str =
    "IEC 62351-4 compatibility mode (RSE 2019 paper §4); SHA-1 deprecated by IEC 62351-3 Amd1";
const SRC_NONE: &str = "";

#[allow(clippy::too_many_arguments)]
const fn s(
    code: u16,
    name: &'static str,
    kx: KeyExchange,
    cipher: &'static str,
    mac: &'static str,
    min_version: TlsVersion,
    max_version: TlsVersion,
    iec: IecStatus,
    iec_source: &'static str,
    rse: Option<&'static str>,
    sandia: Option<&'static str>,
) -> CipherSuite {
    let gkx = match kx {
        Rsa => "RSA",
        DhRsa => "DH-RSA",
        DheRsa => "DHE-RSA",
        EcdheRsa => "ECDHE-RSA",
        EcdheEcdsa => "ECDHE-ECDSA",
        AnyTls13 => "",
    };
    let gmac = match mac.as_bytes() {
        b"SHA" => "SHA1",
        b"SHA256" => "SHA256",
        b"SHA384" => "SHA384",
        _ => "AEAD",
    };
    CipherSuite {
        name,
        code,
        kx,
        cipher,
        mac,
        min_version,
        max_version,
        iec,
        iec_source,
        rse,
        sandia,
        gnutls: GnutlsParts {
            kx: gkx,
            cipher: gnutls_cipher(cipher),
            mac: gmac,
        },
    }
}

const fn gnutls_cipher(c: &'static str) -> &'static str {
    match c.as_bytes() {
        b"3DES-EDE-CBC" => "3DES-CBC",
        b"CHACHA20-POLY1305" => "CHACHA20-POLY1305",
        b"NULL" => "NULL",
        _ => c,
    }
}

const AEAD: &str = "AEAD";

/// The catalogue, TLS 1.3 first, then by key exchange.
#[rustfmt::skip]
pub static CATALOGUE: &[CipherSuite] = &[
    // TLS 1.3 (RFC 8446 §B.4)
    s(0x1301, "TLS_AES_128_GCM_SHA256", AnyTls13, "AES-128-GCM", AEAD, Tls13, Tls13, Mandatory, SRC_62351_3_ED2, None, None),
    s(0x1302, "TLS_AES_256_GCM_SHA384", AnyTls13, "AES-256-GCM", AEAD, Tls13, Tls13, Mandatory, SRC_62351_3_ED2, None, None),
    s(0x1303, "TLS_CHACHA20_POLY1305_SHA256", AnyTls13, "CHACHA20-POLY1305", AEAD, Tls13, Tls13, Optional, SRC_62351_3_ED2, None, None),
    s(0x1304, "TLS_AES_128_CCM_SHA256", AnyTls13, "AES-128-CCM", AEAD, Tls13, Tls13, Mandatory, SRC_62351_3_ED2, None, None),
    s(0x1305, "TLS_AES_128_CCM_8_SHA256", AnyTls13, "AES-128-CCM-8", AEAD, Tls13, Tls13, Optional, SRC_62351_3_ED2, None, None),
    // RSA key transport
    s(0x000A, "TLS_RSA_WITH_3DES_EDE_CBC_SHA", Rsa, "3DES-EDE-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, None),
    s(0x002F, "TLS_RSA_WITH_AES_128_CBC_SHA", Rsa, "AES-128-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, Some("CS1")),
    s(0x0035, "TLS_RSA_WITH_AES_256_CBC_SHA", Rsa, "AES-256-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, None),
    s(0x003B, "TLS_RSA_WITH_NULL_SHA256", Rsa, "NULL", "SHA256", Tls12, Tls12, NotListed, "no encryption; listed in libiec61850's defaults but not compiled there", None, None),
    s(0x003C, "TLS_RSA_WITH_AES_128_CBC_SHA256", Rsa, "AES-128-CBC", "SHA256", Tls12, Tls12, Mandatory, SRC_62351_4_MAND, Some("i"), None),
    s(0x003D, "TLS_RSA_WITH_AES_256_CBC_SHA256", Rsa, "AES-256-CBC", "SHA256", Tls12, Tls12, NotListed, SRC_NONE, None, None),
    s(0x009C, "TLS_RSA_WITH_AES_128_GCM_SHA256", Rsa, "AES-128-GCM", AEAD, Tls12, Tls12, NotListed, SRC_NONE, None, None),
    s(0x009D, "TLS_RSA_WITH_AES_256_GCM_SHA384", Rsa, "AES-256-GCM", AEAD, Tls12, Tls12, NotListed, SRC_NONE, None, None),
    // static DH with RSA-signed DH certificates: named by IEC 62351-4, implemented by none of the backends
    s(0x003F, "TLS_DH_RSA_WITH_AES_128_CBC_SHA256", DhRsa, "AES-128-CBC", "SHA256", Tls12, Tls12, Recommended, SRC_62351_4_REC, None, None),
    s(0x00A0, "TLS_DH_RSA_WITH_AES_128_GCM_SHA256", DhRsa, "AES-128-GCM", AEAD, Tls12, Tls12, Mandatory, SRC_62351_4_MAND, None, None),
    s(0x00A1, "TLS_DH_RSA_WITH_AES_256_GCM_SHA384", DhRsa, "AES-256-GCM", AEAD, Tls12, Tls12, Recommended, SRC_62351_4_REC, None, None),
    // DHE_RSA
    s(0x0016, "TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA", DheRsa, "3DES-EDE-CBC", "SHA", Tls10, Tls12, Legacy, SRC_COMPAT, Some("iii"), None),
    s(0x0033, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA", DheRsa, "AES-128-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, None),
    s(0x0039, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA", DheRsa, "AES-256-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, None),
    s(0x0067, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", DheRsa, "AES-128-CBC", "SHA256", Tls12, Tls12, NotListed, SRC_NONE, None, None),
    s(0x006B, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256", DheRsa, "AES-256-CBC", "SHA256", Tls12, Tls12, NotListed, SRC_NONE, None, None),
    s(0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", DheRsa, "AES-128-GCM", AEAD, Tls12, Tls12, Mandatory, SRC_62351_4_MAND, Some("ii"), None),
    s(0x009F, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", DheRsa, "AES-256-GCM", AEAD, Tls12, Tls12, NotListed, SRC_NONE, None, None),
    s(0xCCAA, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256", DheRsa, "CHACHA20-POLY1305", AEAD, Tls12, Tls12, NotListed, SRC_NONE, None, None),
    // ECDHE_RSA
    s(0xC012, "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", EcdheRsa, "3DES-EDE-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, None),
    s(0xC013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", EcdheRsa, "AES-128-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, Some("CS2")),
    s(0xC014, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", EcdheRsa, "AES-256-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, Some("CS3")),
    s(0xC027, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", EcdheRsa, "AES-128-CBC", "SHA256", Tls12, Tls12, NotListed, SRC_NONE, None, Some("CS4")),
    s(0xC028, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", EcdheRsa, "AES-256-CBC", "SHA384", Tls12, Tls12, NotListed, SRC_NONE, None, Some("CS5")),
    s(0xC02F, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", EcdheRsa, "AES-128-GCM", AEAD, Tls12, Tls12, Mandatory, SRC_62351_4_ECDHE, Some("iv"), Some("CS6")),
    s(0xC030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", EcdheRsa, "AES-256-GCM", AEAD, Tls12, Tls12, Recommended, SRC_62351_4_REC, Some("v"), Some("CS7")),
    s(0xCCA8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", EcdheRsa, "CHACHA20-POLY1305", AEAD, Tls12, Tls12, NotListed, SRC_NONE, None, None),
    // ECDHE_ECDSA
    s(0xC008, "TLS_ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA", EcdheEcdsa, "3DES-EDE-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, None),
    s(0xC009, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", EcdheEcdsa, "AES-128-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, None),
    s(0xC00A, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", EcdheEcdsa, "AES-256-CBC", "SHA", Tls10, Tls12, Deprecated, SRC_SHA1, None, None),
    s(0xC023, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", EcdheEcdsa, "AES-128-CBC", "SHA256", Tls12, Tls12, NotListed, SRC_NONE, None, None),
    s(0xC024, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", EcdheEcdsa, "AES-256-CBC", "SHA384", Tls12, Tls12, NotListed, SRC_NONE, None, None),
    s(0xC02B, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", EcdheEcdsa, "AES-128-GCM", AEAD, Tls12, Tls12, Mandatory, SRC_62351_4_ECDHE, None, None),
    s(0xC02C, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", EcdheEcdsa, "AES-256-GCM", AEAD, Tls12, Tls12, Recommended, SRC_62351_4_REC, None, None),
    s(0xCCA9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", EcdheEcdsa, "CHACHA20-POLY1305", AEAD, Tls12, Tls12, NotListed, SRC_NONE, None, None),
];

/// Looks a suite up by IANA name (case-insensitive) or by code point written `0xC02F`.
pub fn lookup(name: &str) -> Option<&'static CipherSuite> {
    let n = name.trim();
    if let Some(hex) = n.strip_prefix("0x").or_else(|| n.strip_prefix("0X")) {
        let code = u16::from_str_radix(hex, 16).ok()?;
        return by_code(code);
    }
    CATALOGUE.iter().find(|s| s.name.eq_ignore_ascii_case(n))
}

/// Looks a suite up by code point.
pub fn by_code(code: u16) -> Option<&'static CipherSuite> {
    CATALOGUE.iter().find(|s| s.code == code)
}

/// The five suites of the RSE 2019 paper (§4, i-v), in paper order.
pub fn rse_suites() -> Vec<&'static CipherSuite> {
    let mut v: Vec<_> = CATALOGUE.iter().filter(|s| s.rse.is_some()).collect();
    v.sort_by_key(|s| match s.rse {
        Some("i") => 1,
        Some("ii") => 2,
        Some("iii") => 3,
        Some("iv") => 4,
        _ => 5,
    });
    v
}

/// The seven TLS 1.2 suites of the Sandia 2023 report (CS1..CS7).
pub fn sandia_suites() -> Vec<&'static CipherSuite> {
    let mut v: Vec<_> = CATALOGUE.iter().filter(|s| s.sandia.is_some()).collect();
    v.sort_by_key(|s| s.sandia);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_consistent() {
        for (i, a) in CATALOGUE.iter().enumerate() {
            for b in &CATALOGUE[i + 1..] {
                assert_ne!(a.code, b.code, "{} / {}", a.name, b.name);
                assert_ne!(a.name, b.name);
            }
            assert!(a.min_version <= a.max_version);
            assert_eq!(
                a.is_tls13(),
                a.min_version == TlsVersion::Tls13,
                "{}",
                a.name
            );
            if a.mac == "SHA256" || a.mac == "SHA384" || a.mac == AEAD {
                assert!(a.min_version >= TlsVersion::Tls12, "{}", a.name);
            }
            assert!(a.name.starts_with("TLS_"));
        }
    }

    #[test]
    fn reference_lists_are_complete() {
        let rse: Vec<_> = rse_suites().iter().map(|s| s.name).collect();
        assert_eq!(
            rse,
            [
                "TLS_RSA_WITH_AES_128_CBC_SHA256",
                "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
                "TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            ]
        );
        let sandia: Vec<_> = sandia_suites().iter().map(|s| s.code).collect();
        assert_eq!(
            sandia,
            [0x002F, 0xC013, 0xC014, 0xC027, 0xC028, 0xC02F, 0xC030]
        );
    }

    #[test]
    fn lookup_by_name_and_code() {
        assert_eq!(
            lookup("tls_aes_128_gcm_sha256").map(|s| s.code),
            Some(0x1301)
        );
        assert_eq!(
            lookup("0x009E").map(|s| s.name),
            Some("TLS_DHE_RSA_WITH_AES_128_GCM_SHA256")
        );
        assert!(lookup("TLS_FOO").is_none());
        assert!(lookup("0xZZ").is_none());
    }
}
