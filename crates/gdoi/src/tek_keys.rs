//! The keying material of an IEC 61850 TEK in the Key Download payload, as RFC 8052 2.3
//! defines it: the key of the authentication algorithm travels as TEK_INTEGRITY_KEY, the key of
//! the confidentiality algorithm as TEK_ALGORITHM_KEY, and an AES-GMAC or AES-GCM key is the AES
//! key followed by a 4-octet salt "used as the salt value in the nonce" (20 octets for AES-128,
//! 36 for AES-256). HMAC-SHA256 keys are 32 octets.
//!
//! The key server writes that form. The member also reads the form gander wrote before (a
//! GMAC key as TEK_ALGORITHM_KEY, GCM and GMAC keys without salt), so a member keeps working
//! with an older gander key server; a value whose length is not an AES key length plus four
//! is taken as a bare key.

use crate::pull::TekKey;
use gander_wire::isakmp::gdoi::kd_attr;
use gander_wire::isakmp::Attribute;
use openssl::hash::{hash, MessageDigest};
use zeroize::Zeroizing;

/// Octets of the salt RFC 8052 2.3 appends to GCM and GMAC keys.
pub const SALT_LEN: usize = 4;

/// Whether the IEC 62351-6 algorithm pair keys an AES-GCM cipher (encryption code non-zero)
/// or an AES-GMAC MAC (MAC codes 4 and 5): both take an AES key, with a salt on the wire.
pub fn uses_aes_key(mac_code: u16, enc_code: u16) -> bool {
    enc_code != 0 || matches!(mac_code, 4 | 5)
}

/// The salt the key server sends with an AES key. It is derived from the key (the first four
/// octets of SHA-256 over a label and the key) rather than drawn at random, so the state file
/// and a configured seed key keep their form and a restarted key server sends the same salt
/// for the same key; it is as secret as the key and differs with it. gander's own IEC 62351-6
/// GCM/GMAC carry the whole IV in each frame and do not use it.
fn salt_for(key: &[u8]) -> Result<[u8; SALT_LEN], openssl::error::ErrorStack> {
    let d = hash(
        MessageDigest::sha256(),
        &[b"gander RFC 8052 salt".as_slice(), key].concat(),
    )?;
    let mut s = [0u8; SALT_LEN];
    s.copy_from_slice(&d[..SALT_LEN]);
    Ok(s)
}

/// The key packet attribute carrying `key` for a group with these IEC 62351-6 codes
/// (RFC 8052 2.3): GCM as TEK_ALGORITHM_KEY, GMAC and HMAC as TEK_INTEGRITY_KEY, an AES key
/// with its salt.
pub fn key_attribute(
    mac_code: u16,
    enc_code: u16,
    key: &[u8],
) -> Result<Attribute, openssl::error::ErrorStack> {
    if !uses_aes_key(mac_code, enc_code) {
        return Ok(Attribute::variable(
            kd_attr::TEK_INTEGRITY_KEY,
            key.to_vec(),
        ));
    }
    let mut v = key.to_vec();
    v.extend_from_slice(&salt_for(key)?);
    let kind = if enc_code != 0 {
        kd_attr::TEK_ALGORITHM_KEY
    } else {
        kd_attr::TEK_INTEGRITY_KEY
    };
    Ok(Attribute::variable(kind, v))
}

/// The key a member installs for a received TEK, and the salt if one came with it.
pub struct ReceivedKey {
    /// The AES or HMAC key.
    pub key: Zeroizing<Vec<u8>>,
    /// RFC 8052 2.3's salt of an AES key, if the key server sent one.
    pub salt: Option<[u8; SALT_LEN]>,
}

/// Splits an AES key value into key and salt: 20, 28 or 36 octets (an AES key length plus
/// four) carry a salt, any other length is a bare key.
fn split_aes(v: &[u8]) -> ReceivedKey {
    if matches!(v.len(), 20 | 28 | 36) {
        let (k, s) = v.split_at(v.len() - SALT_LEN);
        let mut salt = [0u8; SALT_LEN];
        salt.copy_from_slice(s);
        ReceivedKey {
            key: Zeroizing::new(k.to_vec()),
            salt: Some(salt),
        }
    } else {
        ReceivedKey {
            key: Zeroizing::new(v.to_vec()),
            salt: None,
        }
    }
}

impl TekKey {
    /// The key to install for the TEK's algorithms (IEC 62351-6 codes): for GCM the
    /// TEK_ALGORITHM_KEY, for GMAC the TEK_INTEGRITY_KEY (or the TEK_ALGORITHM_KEY older gander
    /// key servers sent), for HMAC the TEK_INTEGRITY_KEY; an AES key without its salt. `None`
    /// when the key packet has no key for the algorithm.
    pub fn received_key(&self, uses_aes_key: bool, gcm: bool) -> Option<ReceivedKey> {
        let v = if gcm {
            self.algorithm_key.as_ref()
        } else if uses_aes_key {
            self.integrity_key.as_ref().or(self.algorithm_key.as_ref())
        } else {
            self.integrity_key.as_ref()
        }?;
        Some(if uses_aes_key {
            split_aes(v)
        } else {
            ReceivedKey {
                key: v.clone(),
                salt: None,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tek(integrity: Option<Vec<u8>>, algorithm: Option<Vec<u8>>) -> TekKey {
        TekKey {
            key_id: 1,
            oid: vec![],
            traffic: None,
            mac_algorithm: None,
            encryption_algorithm: None,
            lifetime_secs: None,
            activation_delay_secs: None,
            overlap_secs: None,
            integrity_key: integrity.map(Zeroizing::new),
            algorithm_key: algorithm.map(Zeroizing::new),
        }
    }

    #[test]
    fn rfc_8052_key_forms_are_written() {
        // HMAC-SHA256-128 (IEC 62351-6 MAC code 2): 32 octets as TEK_INTEGRITY_KEY.
        let a = key_attribute(2, 0, &[7; 32]).unwrap();
        assert_eq!((a.kind, a.bytes().len()), (kd_attr::TEK_INTEGRITY_KEY, 32));
        // AES-GMAC (MAC code 5) with AES-128: 16 + 4 octets as TEK_INTEGRITY_KEY.
        let a = key_attribute(5, 0, &[7; 16]).unwrap();
        assert_eq!((a.kind, a.bytes().len()), (kd_attr::TEK_INTEGRITY_KEY, 20));
        assert_eq!(&a.bytes()[..16], &[7; 16]);
        // AES-256-GCM (encryption code 2): 32 + 4 octets as TEK_ALGORITHM_KEY.
        let a = key_attribute(0, 2, &[7; 32]).unwrap();
        assert_eq!((a.kind, a.bytes().len()), (kd_attr::TEK_ALGORITHM_KEY, 36));
        // The same key gets the same salt; another key another one.
        let b = key_attribute(0, 2, &[7; 32]).unwrap();
        let c = key_attribute(0, 2, &[8; 32]).unwrap();
        assert_eq!(a.bytes(), b.bytes());
        assert_ne!(a.bytes()[32..], c.bytes()[32..]);
    }

    #[test]
    fn go_iec61850_gmac_key_is_read_from_the_integrity_key_without_its_salt() {
        // go-iec61850's `gdoi` sends AES-GMAC-128 as a 20-octet TEK_INTEGRITY_KEY (RFC 8052
        // 2.3): gander installs the 16-octet AES key and keeps the salt apart.
        let mut v = vec![0x5a; 16];
        v.extend_from_slice(&[1, 2, 3, 4]);
        let r = tek(Some(v), None).received_key(true, false).unwrap();
        assert_eq!(&r.key[..], &[0x5a; 16]);
        assert_eq!(r.salt, Some([1, 2, 3, 4]));
    }

    #[test]
    fn older_gander_forms_are_still_read() {
        // GMAC as a bare TEK_ALGORITHM_KEY.
        let r = tek(None, Some(vec![9; 16]))
            .received_key(true, false)
            .unwrap();
        assert_eq!((&r.key[..], r.salt), (&[9u8; 16][..], None));
        // GCM bare.
        let r = tek(None, Some(vec![9; 32]))
            .received_key(true, true)
            .unwrap();
        assert_eq!((r.key.len(), r.salt), (32, None));
        // GCM never from the integrity key; HMAC never from the algorithm key.
        assert!(tek(Some(vec![9; 36]), None)
            .received_key(true, true)
            .is_none());
        assert!(tek(None, Some(vec![9; 32]))
            .received_key(false, false)
            .is_none());
        // An HMAC key of 36 octets is not split.
        let r = tek(Some(vec![9; 36]), None)
            .received_key(false, false)
            .unwrap();
        assert_eq!(r.key.len(), 36);
    }
}
