//! The algorithm numbers of RFC 8052's IEC 61850 SA TEK and their mapping to the IEC 62351-6
//! MAC and encryption codes gander's security layer uses.
//!
//! RFC 8052 2.2 carries a 16-bit Auth Alg and a 16-bit Enc Alg, numbered in the "IEC 62351-9
//! Authentication Values" and "IEC 62351-9 Confidentiality Values" registries the RFC created
//! (section 4); the numbers below are those registries' (go-iec61850's `gdoi` uses the same).
//! Numbers an IEC 62351-6 profile cannot express, and unknown numbers, are refused with
//! [`IsakmpError::BadValue`], never guessed.

use super::error::{IsakmpError, Result};

/// Authentication Values registry (RFC 8052 2.2.2, 4).
pub mod auth {
    /// No authentication (the confidentiality algorithm is an AEAD).
    pub const NONE: u16 = 1;
    /// HMAC-SHA256 truncated to 128 bits.
    pub const HMAC_SHA256_128: u16 = 2;
    /// HMAC-SHA256, full 256 bits.
    pub const HMAC_SHA256: u16 = 3;
    /// AES-GMAC with a 128-bit key.
    pub const AES_GMAC_128: u16 = 4;
    /// AES-GMAC with a 256-bit key.
    pub const AES_GMAC_256: u16 = 5;
}

/// Confidentiality Values registry (RFC 8052 2.2.3, 4).
pub mod conf {
    /// No confidentiality.
    pub const NONE: u16 = 1;
    /// AES-CBC, 128-bit key (no IEC 62351-6 counterpart in gander).
    pub const AES_CBC_128: u16 = 2;
    /// AES-CBC, 256-bit key (no IEC 62351-6 counterpart in gander).
    pub const AES_CBC_256: u16 = 3;
    /// AES-GCM, 128-bit key.
    pub const AES_GCM_128: u16 = 4;
    /// AES-GCM, 256-bit key.
    pub const AES_GCM_256: u16 = 5;
}

/// IEC 62351-6 MAC codes as gander numbers them (`gander_sec::MacAlgorithm`).
pub mod mac62351 {
    /// No MAC.
    pub const NONE: u16 = 0;
    /// HMAC-SHA256-80.
    pub const HMAC_SHA256_80: u16 = 1;
    /// HMAC-SHA256-128.
    pub const HMAC_SHA256_128: u16 = 2;
    /// HMAC-SHA256-256.
    pub const HMAC_SHA256_256: u16 = 3;
    /// AES-GMAC-64.
    pub const AES_GMAC_64: u16 = 4;
    /// AES-GMAC-128 (128-bit tag; AES-128 or AES-256 by key length).
    pub const AES_GMAC_128: u16 = 5;
}

/// IEC 62351-6 encryption codes as gander numbers them.
pub mod enc62351 {
    /// No encryption.
    pub const NONE: u16 = 0;
    /// AES-128-GCM.
    pub const AES_128_GCM: u16 = 1;
    /// AES-256-GCM.
    pub const AES_256_GCM: u16 = 2;
}

fn unrepresentable(what: &'static str) -> IsakmpError {
    IsakmpError::BadValue {
        what,
        detail: "no RFC 8052 algorithm number for this IEC 62351-6 algorithm",
    }
}

fn unsupported(what: &'static str) -> IsakmpError {
    IsakmpError::BadValue {
        what,
        detail: "RFC 8052 algorithm without an IEC 62351-6 counterpart",
    }
}

/// RFC 8052 authentication algorithm for an IEC 62351-6 MAC code; `key_len` (octets of the
/// AES key, salt excluded) chooses between AES-GMAC-128 and -256.
pub fn auth_from_62351(mac: u16, key_len: usize) -> Result<u16> {
    match mac {
        mac62351::NONE => Ok(auth::NONE),
        mac62351::HMAC_SHA256_128 => Ok(auth::HMAC_SHA256_128),
        mac62351::HMAC_SHA256_256 => Ok(auth::HMAC_SHA256),
        mac62351::AES_GMAC_128 if key_len == 32 => Ok(auth::AES_GMAC_256),
        mac62351::AES_GMAC_128 => Ok(auth::AES_GMAC_128),
        _ => Err(unrepresentable("authentication algorithm")),
    }
}

/// IEC 62351-6 MAC code for an RFC 8052 authentication algorithm.
pub fn auth_to_62351(alg: u16) -> Result<u16> {
    match alg {
        auth::NONE => Ok(mac62351::NONE),
        auth::HMAC_SHA256_128 => Ok(mac62351::HMAC_SHA256_128),
        auth::HMAC_SHA256 => Ok(mac62351::HMAC_SHA256_256),
        auth::AES_GMAC_128 | auth::AES_GMAC_256 => Ok(mac62351::AES_GMAC_128),
        _ => Err(unsupported("authentication algorithm")),
    }
}

/// RFC 8052 confidentiality algorithm for an IEC 62351-6 encryption code.
pub fn conf_from_62351(enc: u16) -> Result<u16> {
    match enc {
        enc62351::NONE => Ok(conf::NONE),
        enc62351::AES_128_GCM => Ok(conf::AES_GCM_128),
        enc62351::AES_256_GCM => Ok(conf::AES_GCM_256),
        _ => Err(unrepresentable("confidentiality algorithm")),
    }
}

/// IEC 62351-6 encryption code for an RFC 8052 confidentiality algorithm.
pub fn conf_to_62351(alg: u16) -> Result<u16> {
    match alg {
        conf::NONE => Ok(enc62351::NONE),
        conf::AES_GCM_128 => Ok(enc62351::AES_128_GCM),
        conf::AES_GCM_256 => Ok(enc62351::AES_256_GCM),
        _ => Err(unsupported("confidentiality algorithm")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_pairs() {
        assert_eq!(auth_from_62351(2, 32), Ok(auth::HMAC_SHA256_128));
        assert_eq!(auth_from_62351(5, 16), Ok(auth::AES_GMAC_128));
        assert_eq!(auth_from_62351(5, 32), Ok(auth::AES_GMAC_256));
        assert!(auth_from_62351(1, 32).is_err());
        assert!(auth_from_62351(4, 16).is_err());
        assert_eq!(conf_from_62351(1), Ok(conf::AES_GCM_128));
        assert!(conf_to_62351(conf::AES_CBC_128).is_err());
        assert!(auth_to_62351(0).is_err());
    }

    proptest! {
        #[test]
        fn mapping_round_trips_or_refuses(a in any::<u16>(), e in any::<u16>()) {
            if let Ok(m) = auth_to_62351(a) {
                let k = if a == auth::AES_GMAC_256 { 32 } else { 16 };
                prop_assert_eq!(auth_from_62351(m, k), Ok(a));
            }
            if let Ok(m) = conf_to_62351(e) {
                prop_assert_eq!(conf_from_62351(m), Ok(e));
            }
        }
    }
}
