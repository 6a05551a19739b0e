//! The algorithm catalogue: the MAC and encryption algorithms IEC 62351-6 names for GOOSE and
//! IEC 61850-90-5 sessions, plus the gateway paper's two BLAKE2 MACs (Andrade et al., Table 3).
//!
//! Experimental: Ascon-AEAD128 (NIST SP 800-232, 2025) as encryption and, with an empty
//! plaintext, as a MAC. No IEC 62351-6 code point exists for it: it is usable only under the
//! `experimental` profile and interoperates with nothing (`docs/ascon.md`).
//!
//! Names are the ones used in key files (`../../docs/keys.md`). Wire codes differ between
//! implementations (see `docs/profiles.md` and `docs/session-layout.md` §4, pitfall P7),
//! so codes live with the profiles, not here.

use core::fmt;
use core::str::FromStr;

/// A message authentication algorithm (the session "signature" or the L2 `mAC` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(non_camel_case_types)]
pub enum MacAlgorithm {
    /// No MAC.
    None,
    /// HMAC-SHA256 truncated to 80 bits (RFC 2104, RFC 4231 §4.9 truncation: leftmost bytes).
    HmacSha256_80,
    /// HMAC-SHA256 truncated to 128 bits.
    HmacSha256_128,
    /// HMAC-SHA256, full 256 bits.
    HmacSha256_256,
    /// AES-GMAC (NIST SP 800-38D, GCM with empty plaintext), tag truncated to 64 bits.
    /// AES-128 or AES-256 by key length.
    AesGmac64,
    /// AES-GMAC with the full 128-bit tag. AES-128 or AES-256 by key length.
    AesGmac128,
    /// HMAC over BLAKE2b-512 (RFC 7693), truncated to 80 bits: the gateway paper's extra.
    HmacBlake2b80,
    /// HMAC over BLAKE2s-256 (RFC 7693), truncated to 80 bits: the gateway paper's extra.
    HmacBlake2s80,
    /// Experimental: Ascon-AEAD128 (NIST SP 800-232 §4) with an empty plaintext and the covered
    /// bytes as associated data, the way GMAC is GCM without plaintext; 128-bit key, 128-bit
    /// nonce, full 128-bit tag. Only under the `experimental` profile (`docs/ascon.md`).
    AsconAead128Mac,
}

impl MacAlgorithm {
    /// Every algorithm, `None` first.
    pub const ALL: [MacAlgorithm; 9] = [
        MacAlgorithm::None,
        MacAlgorithm::HmacSha256_80,
        MacAlgorithm::HmacSha256_128,
        MacAlgorithm::HmacSha256_256,
        MacAlgorithm::AesGmac64,
        MacAlgorithm::AesGmac128,
        MacAlgorithm::HmacBlake2b80,
        MacAlgorithm::HmacBlake2s80,
        MacAlgorithm::AsconAead128Mac,
    ];

    /// The key-file name.
    pub const fn name(self) -> &'static str {
        match self {
            MacAlgorithm::None => "none",
            MacAlgorithm::HmacSha256_80 => "hmac-sha256-80",
            MacAlgorithm::HmacSha256_128 => "hmac-sha256-128",
            MacAlgorithm::HmacSha256_256 => "hmac-sha256-256",
            MacAlgorithm::AesGmac64 => "aes-gmac-64",
            MacAlgorithm::AesGmac128 => "aes-gmac-128",
            MacAlgorithm::HmacBlake2b80 => "hmac-blake2b-80",
            MacAlgorithm::HmacBlake2s80 => "hmac-blake2s-80",
            MacAlgorithm::AsconAead128Mac => "ascon-aead128-mac",
        }
    }

    /// Length of the tag carried on the wire, in bytes.
    pub const fn tag_len(self) -> usize {
        match self {
            MacAlgorithm::None => 0,
            MacAlgorithm::HmacSha256_80 => 10,
            MacAlgorithm::HmacSha256_128 => 16,
            MacAlgorithm::HmacSha256_256 => 32,
            MacAlgorithm::AesGmac64 => 8,
            MacAlgorithm::AesGmac128 => 16,
            MacAlgorithm::HmacBlake2b80 => 10,
            MacAlgorithm::HmacBlake2s80 => 10,
            MacAlgorithm::AsconAead128Mac => 16,
        }
    }

    /// GMAC needs a fresh 96-bit IV per message (SP 800-38D §8.2), the Ascon MAC a fresh
    /// 128-bit nonce (SP 800-232 §4); HMACs need none.
    pub const fn needs_iv(self) -> bool {
        self.iv_len() != 0
    }

    /// Length of the per-message IV or nonce carried on the wire: 12 for GMAC, 16 for the
    /// Ascon MAC, 0 for the HMACs.
    pub const fn iv_len(self) -> usize {
        match self {
            MacAlgorithm::AesGmac64 | MacAlgorithm::AesGmac128 => 12,
            MacAlgorithm::AsconAead128Mac => 16,
            _ => 0,
        }
    }

    /// Whether the algorithm has no standard code point and is allowed only under the
    /// `experimental` profile.
    pub const fn is_experimental(self) -> bool {
        matches!(self, MacAlgorithm::AsconAead128Mac)
    }

    /// Key lengths the algorithm accepts: GMAC takes an AES-128 or AES-256 key; HMAC any
    /// non-empty key (RFC 2104 §3; keys shorter than the hash output are weak, which the key
    /// store warns about, but RFC 4231 test case 2 uses a 4-byte key).
    pub fn accepts_key_len(self, len: usize) -> bool {
        match self {
            MacAlgorithm::None => true,
            MacAlgorithm::AesGmac64 | MacAlgorithm::AesGmac128 => len == 16 || len == 32,
            MacAlgorithm::AsconAead128Mac => len == 16,
            _ => len > 0,
        }
    }
}

/// An encryption algorithm (AEAD) for the session payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EncAlgorithm {
    /// Cleartext payload.
    None,
    /// AES-128 in GCM (SP 800-38D), 96-bit IV, 128-bit tag.
    Aes128Gcm,
    /// AES-256 in GCM (SP 800-38D), 96-bit IV, 128-bit tag.
    Aes256Gcm,
    /// Experimental: Ascon-AEAD128 (NIST SP 800-232 §4), 128-bit key, 128-bit nonce, 128-bit
    /// tag. Only under the `experimental` profile (`docs/ascon.md`).
    AsconAead128,
}

impl EncAlgorithm {
    /// Every algorithm, `None` first.
    pub const ALL: [EncAlgorithm; 4] = [
        EncAlgorithm::None,
        EncAlgorithm::Aes128Gcm,
        EncAlgorithm::Aes256Gcm,
        EncAlgorithm::AsconAead128,
    ];

    /// The key-file name.
    pub const fn name(self) -> &'static str {
        match self {
            EncAlgorithm::None => "none",
            EncAlgorithm::Aes128Gcm => "aes-128-gcm",
            EncAlgorithm::Aes256Gcm => "aes-256-gcm",
            EncAlgorithm::AsconAead128 => "ascon-aead128",
        }
    }

    /// Required key length in bytes (0 for `None`).
    pub const fn key_len(self) -> usize {
        match self {
            EncAlgorithm::None => 0,
            EncAlgorithm::Aes128Gcm => 16,
            EncAlgorithm::Aes256Gcm => 32,
            EncAlgorithm::AsconAead128 => 16,
        }
    }

    /// Tag length on the wire (16 for GCM and Ascon-AEAD128).
    pub const fn tag_len(self) -> usize {
        match self {
            EncAlgorithm::None => 0,
            _ => 16,
        }
    }

    /// Length of the per-message IV or nonce: 12 for GCM (SP 800-38D §5.2.1.1), 16 for
    /// Ascon-AEAD128 (SP 800-232 §4).
    pub const fn iv_len(self) -> usize {
        match self {
            EncAlgorithm::None => 0,
            EncAlgorithm::Aes128Gcm | EncAlgorithm::Aes256Gcm => 12,
            EncAlgorithm::AsconAead128 => 16,
        }
    }

    /// Whether the algorithm has no standard code point and is allowed only under the
    /// `experimental` profile.
    pub const fn is_experimental(self) -> bool {
        matches!(self, EncAlgorithm::AsconAead128)
    }
}

/// A name that is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown algorithm {name:?}; known: {known}")]
pub struct UnknownAlgorithm {
    /// What was asked for.
    pub name: String,
    /// The names that would have been accepted.
    pub known: String,
}

/// Looks `s` up by name (case-insensitive) among `all`; the error lists the accepted names.
pub(crate) fn from_name<T: Copy>(
    s: &str,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<T, UnknownAlgorithm> {
    let want = s.trim().to_ascii_lowercase();
    all.iter()
        .copied()
        .find(|a| name(*a) == want)
        .ok_or_else(|| UnknownAlgorithm {
            name: s.to_string(),
            known: all.iter().map(|a| name(*a)).collect::<Vec<_>>().join(", "),
        })
}

macro_rules! name_impls {
    ($t:ty) => {
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
        impl FromStr for $t {
            type Err = UnknownAlgorithm;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                from_name(s, &Self::ALL, Self::name)
            }
        }
    };
}
name_impls!(MacAlgorithm);
name_impls!(EncAlgorithm);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for a in MacAlgorithm::ALL {
            assert_eq!(a.name().parse::<MacAlgorithm>().unwrap(), a);
        }
        for a in EncAlgorithm::ALL {
            assert_eq!(a.name().parse::<EncAlgorithm>().unwrap(), a);
        }
        assert!("hmac-md5".parse::<MacAlgorithm>().is_err());
    }
}
