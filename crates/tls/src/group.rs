//! Key-exchange groups (TLS `supported_groups`, RFC 8446 §4.2.7): classical, hybrid and
//! post-quantum, as a measured dimension (`docs/pq.md`).
//!
//! | group | IANA code | client key share | server key share | source |
//! |---|---|---|---|---|
//! | `x25519` | 0x001D | 32 | 32 | RFC 7748, RFC 8446 §4.2.8.2 |
//! | `secp256r1` (P-256) | 0x0017 | 65 | 65 | SEC 1 uncompressed point, RFC 8446 §4.2.8.2 |
//! | `X25519MLKEM768` | 0x11EC | 1216 | 1120 | draft-ietf-tls-ecdhe-mlkem: ML-KEM-768 encapsulation key (1184) ‖ X25519 (32); ciphertext (1088) ‖ X25519 (32) |
//! | `MLKEM768` | 0x0201 | 1184 | 1088 | draft-ietf-tls-mlkem; sizes from FIPS 203 Table 3 |
//!
//! The hybrid's key share puts ML-KEM first (the draft's order, opposite to the name).
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A key-exchange group a TLS 1.3 (and, for the elliptic curves, TLS 1.2 ECDHE) handshake can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum KxGroup {
    /// X25519 (RFC 7748).
    #[serde(rename = "x25519")]
    X25519,
    /// NIST P-256 (secp256r1).
    #[serde(rename = "secp256r1")]
    Secp256r1,
    /// The hybrid of ML-KEM-768 and X25519 (draft-ietf-tls-ecdhe-mlkem).
    #[serde(rename = "X25519MLKEM768")]
    X25519Mlkem768,
    /// ML-KEM-768 alone (FIPS 203; draft-ietf-tls-mlkem).
    #[serde(rename = "MLKEM768")]
    Mlkem768,
}

/// A group name [`KxGroup`]'s parser does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown key-exchange group {0:?} (expected x25519, secp256r1, X25519MLKEM768 or MLKEM768)"
)]
pub struct UnknownGroup(pub String);

impl KxGroup {
    /// Every group gander measures, classical first.
    pub const ALL: [KxGroup; 4] = [
        KxGroup::X25519,
        KxGroup::Secp256r1,
        KxGroup::X25519Mlkem768,
        KxGroup::Mlkem768,
    ];

    /// The name scenarios, profiles and reports use (the IANA registry's).
    pub fn name(self) -> &'static str {
        match self {
            KxGroup::X25519 => "x25519",
            KxGroup::Secp256r1 => "secp256r1",
            KxGroup::X25519Mlkem768 => "X25519MLKEM768",
            KxGroup::Mlkem768 => "MLKEM768",
        }
    }

    /// The IANA `NamedGroup` code point.
    pub fn code(self) -> u16 {
        match self {
            KxGroup::X25519 => 0x001D,
            KxGroup::Secp256r1 => 0x0017,
            KxGroup::X25519Mlkem768 => 0x11EC,
            KxGroup::Mlkem768 => 0x0201,
        }
    }

    /// The group of an IANA code point, if gander knows it.
    pub fn from_code(code: u16) -> Option<KxGroup> {
        Self::ALL.into_iter().find(|g| g.code() == code)
    }

    /// The name OpenSSL's `SSL_CTX_set1_groups_list` takes.
    pub fn openssl_name(self) -> &'static str {
        match self {
            KxGroup::X25519 => "X25519",
            KxGroup::Secp256r1 => "P-256",
            KxGroup::X25519Mlkem768 => "X25519MLKEM768",
            KxGroup::Mlkem768 => "MLKEM768",
        }
    }

    /// Octets of the client's and the server's key share (the `key_exchange` field, RFC 8446
    /// §4.2.8), from the table in the module documentation.
    pub fn key_share_sizes(self) -> (usize, usize) {
        match self {
            KxGroup::X25519 => (32, 32),
            KxGroup::Secp256r1 => (65, 65),
            KxGroup::X25519Mlkem768 => (1184 + 32, 1088 + 32),
            KxGroup::Mlkem768 => (1184, 1088),
        }
    }

    /// Whether the group resists a quantum adversary (alone or as one half of a hybrid).
    pub fn post_quantum(self) -> bool {
        matches!(self, KxGroup::X25519Mlkem768 | KxGroup::Mlkem768)
    }

    /// `classical`, `hybrid` or `post-quantum`: the column reports group rows by.
    pub fn family(self) -> &'static str {
        match self {
            KxGroup::X25519 | KxGroup::Secp256r1 => "classical",
            KxGroup::X25519Mlkem768 => "hybrid",
            KxGroup::Mlkem768 => "post-quantum",
        }
    }

    /// Whether TLS 1.2 ECDHE (RFC 8422) can use the group: the elliptic curves only; the
    /// ML-KEM groups are defined for TLS 1.3 only.
    pub fn tls12(self) -> bool {
        !self.post_quantum()
    }
}

impl fmt::Display for KxGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses the IANA names, case-insensitively, and the aliases `p256`, `P-256`, `prime256v1`,
/// `x25519mlkem768`, `mlkem768`, `ML-KEM-768`.
impl FromStr for KxGroup {
    type Err = UnknownGroup;
    fn from_str(s: &str) -> Result<Self, UnknownGroup> {
        let t = s.trim().to_ascii_lowercase().replace(['-', '_'], "");
        Ok(match t.as_str() {
            "x25519" => KxGroup::X25519,
            "secp256r1" | "p256" | "prime256v1" => KxGroup::Secp256r1,
            "x25519mlkem768" => KxGroup::X25519Mlkem768,
            "mlkem768" => KxGroup::Mlkem768,
            _ => return Err(UnknownGroup(s.to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_codes_and_aliases_round_trip() {
        for g in KxGroup::ALL {
            assert_eq!(g.name().parse::<KxGroup>(), Ok(g));
            assert_eq!(KxGroup::from_code(g.code()), Some(g));
            let json = serde_json::to_string(&g).unwrap();
            assert_eq!(json, format!("\"{}\"", g.name()));
            assert_eq!(serde_json::from_str::<KxGroup>(&json).unwrap(), g);
        }
        assert_eq!("P-256".parse(), Ok(KxGroup::Secp256r1));
        assert_eq!("ml-kem-768".parse(), Ok(KxGroup::Mlkem768));
        assert_eq!("x25519mlkem768".parse(), Ok(KxGroup::X25519Mlkem768));
        assert!("X448".parse::<KxGroup>().is_err());
        assert!("".parse::<KxGroup>().is_err());
        assert_eq!(KxGroup::from_code(0x0018), None);
    }

    proptest::proptest! {
        /// Any text: parsing never panics, and what parses prints back as a name that parses to
        /// the same group (parse/emit pair).
        #[test]
        fn parse_never_panics_and_round_trips(text in ".{0,24}") {
            if let Ok(g) = text.parse::<KxGroup>() {
                proptest::prop_assert_eq!(g.to_string().parse::<KxGroup>(), Ok(g));
            }
        }

        /// Code points: only the four known ones map to a group, and back.
        #[test]
        fn codes_round_trip(code in proptest::prelude::any::<u16>()) {
            if let Some(g) = KxGroup::from_code(code) {
                proptest::prop_assert_eq!(g.code(), code);
            }
        }
    }

    #[test]
    fn key_shares_follow_fips_203() {
        // FIPS 203 Table 3, ML-KEM-768: ek 1184 bytes, ciphertext 1088 bytes.
        let (c, s) = KxGroup::X25519Mlkem768.key_share_sizes();
        let (c0, s0) = KxGroup::X25519.key_share_sizes();
        assert_eq!((c - c0, s - s0), (1184, 1088));
        assert!(KxGroup::Secp256r1.tls12() && !KxGroup::Mlkem768.tls12());
        assert_eq!(KxGroup::Mlkem768.family(), "post-quantum");
    }
}
