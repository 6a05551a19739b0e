//! Profiles: which reading of IEC 62351-6 / IEC 61850-90-5 gander writes and accepts.
//!
//! * `standard`: what the standards describe as far as public sources show (version-2 session
//!   header with KeyID and IV, true length fields, a fresh 96-bit IV per message for AES-GCM and
//!   AES-GMAC, every tag carried).
//! * `libiec61850`: libiec61850 1.6's R-GOOSE as it is on the wire (fixed header lengths 24/18,
//!   SPDU length = 20 + PayloadLength, APDU length = size + 2, HMAC-SHA256-256 written with a
//!   length byte of 16).
//! * `seclib`: the gateway paper's R-GOOSE_SecLib (version-1 header with algorithm codes, MAC over
//!   SI..end of APDU, GMAC with a constant zero IV, SEC's own code space).
//! * `experimental`: `standard`'s framing, plus the algorithms that have no standard code point
//!   (Ascon-AEAD128, NIST SP 800-232). Every other profile refuses them. Frames written under
//!   it interoperate with nothing but gander (`docs/ascon.md`).
//!
//! `docs/profiles.md` records every difference and where it was observed.

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::error::SecError;
use gander_wire::spdu::Dialect;
use std::fmt;
use std::str::FromStr;

/// A named set of framing and algorithm conventions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// IEC 62351-6 / IEC 61850-90-5 version 2 as specified.
    #[default]
    Standard,
    /// libiec61850 1.6 compatibility.
    Libiec61850,
    /// R-GOOSE_SecLib (Andrade et al.) compatibility.
    Seclib,
    /// `standard` framing plus experimental algorithms without a standard code point
    /// (Ascon-AEAD128); not interoperable.
    Experimental,
}

/// gander's private version-1 encryption code for Ascon-AEAD128. IEC 61850-90-5 and every
/// implementation seen use 0-2; no public source names a private-use range, so gander takes one
/// from the top of the 8-bit space. Only the `experimental` profile reads or writes it.
pub const ASCON_AEAD128_ENC_CODE: u8 = 0xF0;
/// gander's private version-1 MAC code for the Ascon-AEAD128 MAC (implementations use 0-9).
pub const ASCON_AEAD128_MAC_CODE: u8 = 0xF1;

impl Profile {
    /// All profiles.
    pub const ALL: [Profile; 4] = [
        Profile::Standard,
        Profile::Libiec61850,
        Profile::Seclib,
        Profile::Experimental,
    ];

    /// Name used on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Profile::Standard => "standard",
            Profile::Libiec61850 => "libiec61850",
            Profile::Seclib => "seclib",
            Profile::Experimental => "experimental",
        }
    }

    /// Whether the profile writes and accepts algorithms without a standard code point.
    pub const fn allows_experimental(self) -> bool {
        matches!(self, Profile::Experimental)
    }

    /// Refuses experimental algorithms outside the `experimental` profile, so an Ascon key
    /// never produces or accepts a frame that claims to be standard IEC 62351-6.
    pub fn check_algorithms(self, mac: MacAlgorithm, enc: EncAlgorithm) -> Result<(), SecError> {
        if (mac.is_experimental() || enc.is_experimental()) && !self.allows_experimental() {
            return Err(SecError::Unsupported(
                "Ascon-AEAD128 has no IEC 62351-6 code point: use --profile experimental (docs/ascon.md)",
            ));
        }
        Ok(())
    }

    /// Session length conventions.
    pub const fn dialect(self) -> Dialect {
        match self {
            Profile::Standard => Dialect::STANDARD,
            Profile::Libiec61850 => Dialect::LIBIEC61850,
            Profile::Seclib => Dialect::SECLIB,
            Profile::Experimental => Dialect::STANDARD,
        }
    }

    /// Session protocol version written.
    pub const fn session_version(self) -> u16 {
        match self {
            Profile::Seclib => 1,
            _ => 2,
        }
    }

    /// First byte covered by the session MAC: LI (offset 0) in libiec61850 and here by default;
    /// SI (offset 2) in SecLib.
    pub const fn mac_start(self) -> usize {
        match self {
            Profile::Seclib => 2,
            _ => 0,
        }
    }

    /// The length byte written in front of a MAC of `alg` (libiec61850 writes 16 for the
    /// 32-byte HMAC-SHA256-256, `docs/session-layout.md` §3).
    pub fn written_mac_len(self, alg: MacAlgorithm) -> u8 {
        match (self, alg) {
            (Profile::Libiec61850, MacAlgorithm::HmacSha256_256) => 16,
            _ => alg.tag_len() as u8,
        }
    }

    /// Whether a stated signature length may differ from the actual one (only the libiec61850
    /// HMAC-SHA256-256 quirk).
    pub fn tolerates_mac_len(self, alg: MacAlgorithm, stated: u8) -> bool {
        self == Profile::Libiec61850 && alg == MacAlgorithm::HmacSha256_256 && stated == 16
    }

    /// Whether GMAC uses the IV carried in the header (standard) or a constant zero IV (SecLib).
    pub const fn gmac_zero_iv(self) -> bool {
        matches!(self, Profile::Seclib)
    }

    /// Whether this profile can encrypt and authenticate an encrypted payload. SecLib's
    /// encryption discards the GCM tag and does not carry the IV, so nothing it encrypts can
    /// be verified.
    pub const fn supports_encryption(self) -> bool {
        !matches!(self, Profile::Seclib)
    }

    /// Version-1 MAC algorithm code. SecLib's code space (MAC_SIZES in `r_goose_security.h`):
    /// 4/5 are GMAC with AES-256 keys, 8/9 GMAC with AES-128 keys, 6/7 HMAC-BLAKE2b/2s-80;
    /// libiec61850's (`r_session.h`): 1-3 HMAC-SHA256, 4/5 GMAC (key length decides).
    pub fn mac_code(self, alg: MacAlgorithm, key_len: usize) -> Result<u8, SecError> {
        use MacAlgorithm::*;
        let aes256 = key_len == 32;
        Ok(match (self, alg) {
            (_, None) => 0,
            (_, HmacSha256_80) => 1,
            (_, HmacSha256_128) => 2,
            (_, HmacSha256_256) => 3,
            (Profile::Seclib, AesGmac64) => {
                if aes256 {
                    4
                } else {
                    8
                }
            }
            (Profile::Seclib, AesGmac128) => {
                if aes256 {
                    5
                } else {
                    9
                }
            }
            (Profile::Seclib, HmacBlake2b80) => 6,
            (Profile::Seclib, HmacBlake2s80) => 7,
            (_, AesGmac64) => 4,
            (_, AesGmac128) => 5,
            (_, HmacBlake2b80 | HmacBlake2s80) => {
                return Err(SecError::Unsupported(
                    "BLAKE2 MACs have no code outside the seclib profile",
                ))
            }
            (Profile::Experimental, AsconAead128Mac) => ASCON_AEAD128_MAC_CODE,
            (_, AsconAead128Mac) => {
                return Err(SecError::Unsupported(
                    "the Ascon MAC has a code only in the experimental profile",
                ))
            }
        })
    }

    /// Decodes a version-1 MAC code to the algorithm and, for SecLib GMAC codes, the AES key
    /// length the code implies.
    pub fn mac_from_code(self, code: u8) -> Result<(MacAlgorithm, Option<usize>), SecError> {
        use MacAlgorithm::*;
        let unknown = || SecError::UnknownAlgorithmCode {
            what: "MAC",
            code,
            profile: self.name(),
        };
        Ok(match (self, code) {
            (_, 0) => (None, Option::None),
            (_, 1) => (HmacSha256_80, Option::None),
            (_, 2) => (HmacSha256_128, Option::None),
            (_, 3) => (HmacSha256_256, Option::None),
            (Profile::Seclib, 4) => (AesGmac64, Some(32)),
            (Profile::Seclib, 5) => (AesGmac128, Some(32)),
            (Profile::Seclib, 6) => (HmacBlake2b80, Option::None),
            (Profile::Seclib, 7) => (HmacBlake2s80, Option::None),
            (Profile::Seclib, 8) => (AesGmac64, Some(16)),
            (Profile::Seclib, 9) => (AesGmac128, Some(16)),
            (_, 4) => (AesGmac64, Option::None),
            (_, 5) => (AesGmac128, Option::None),
            (Profile::Experimental, ASCON_AEAD128_MAC_CODE) => (AsconAead128Mac, Option::None),
            _ => return Err(unknown()),
        })
    }

    /// Version-1 encryption code (the same in every known implementation; Ascon-AEAD128's is
    /// gander's private [`ASCON_AEAD128_ENC_CODE`], which [`Self::check_algorithms`] keeps to
    /// the experimental profile).
    pub const fn enc_code(alg: EncAlgorithm) -> u8 {
        match alg {
            EncAlgorithm::None => 0,
            EncAlgorithm::Aes128Gcm => 1,
            EncAlgorithm::Aes256Gcm => 2,
            EncAlgorithm::AsconAead128 => ASCON_AEAD128_ENC_CODE,
        }
    }

    /// Decodes a version-1 encryption code.
    pub fn enc_from_code(self, code: u8) -> Result<EncAlgorithm, SecError> {
        Ok(match code {
            0 => EncAlgorithm::None,
            1 => EncAlgorithm::Aes128Gcm,
            2 => EncAlgorithm::Aes256Gcm,
            ASCON_AEAD128_ENC_CODE if self.allows_experimental() => EncAlgorithm::AsconAead128,
            _ => {
                return Err(SecError::UnknownAlgorithmCode {
                    what: "encryption",
                    code,
                    profile: self.name(),
                })
            }
        })
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .iter()
            .copied()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                format!("unknown profile {s:?}; known: standard, libiec61850, seclib, experimental")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_experimental_allows_ascon() {
        for p in Profile::ALL {
            let mac = p.check_algorithms(MacAlgorithm::AsconAead128Mac, EncAlgorithm::None);
            let enc = p.check_algorithms(MacAlgorithm::None, EncAlgorithm::AsconAead128);
            assert_eq!(mac.is_ok(), p == Profile::Experimental, "{p}");
            assert_eq!(enc.is_ok(), p == Profile::Experimental, "{p}");
            assert!(p
                .check_algorithms(MacAlgorithm::HmacSha256_80, EncAlgorithm::Aes128Gcm)
                .is_ok());
        }
    }

    #[test]
    fn codes_round_trip() {
        for p in Profile::ALL {
            for alg in MacAlgorithm::ALL {
                for key_len in [16usize, 32] {
                    let Ok(code) = p.mac_code(alg, key_len) else {
                        continue;
                    };
                    let (back, implied) = p.mac_from_code(code).unwrap();
                    assert_eq!(back, alg, "{p} {alg}");
                    if let Some(l) = implied {
                        assert_eq!(l, key_len);
                    }
                }
            }
        }
        assert!(Profile::Standard.mac_from_code(6).is_err());
        assert!(Profile::Standard
            .mac_from_code(ASCON_AEAD128_MAC_CODE)
            .is_err());
        assert!(Profile::Standard
            .enc_from_code(ASCON_AEAD128_ENC_CODE)
            .is_err());
        assert_eq!(
            Profile::Experimental
                .enc_from_code(ASCON_AEAD128_ENC_CODE)
                .unwrap(),
            EncAlgorithm::AsconAead128
        );
        assert_eq!(
            Profile::Seclib.mac_from_code(9).unwrap(),
            (MacAlgorithm::AesGmac128, Some(16))
        );
    }
}
