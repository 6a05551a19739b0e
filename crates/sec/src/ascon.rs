//! Ascon-AEAD128 (NIST SP 800-232, August 2025, §4) as gander's experimental AEAD and MAC.
//!
//! The primitive is the `ascon-aead` crate 0.6 (RustCrypto), which implements the SP 800-232
//! final algorithm (the 0.5 series implemented the older Ascon-128 v1.2, whose tags differ);
//! `tests/ascon_kat.rs` checks it against the reference implementation's known answers.
//!
//! * [`AsconAeadKey`]: Ascon-AEAD128 as the session payload encryption ([`EncAlgorithm::AsconAead128`]).
//! * [`AsconMacKey`]: Ascon-AEAD128 with an empty plaintext and the covered bytes as associated
//!   data, a MAC the way GMAC is GCM without plaintext ([`MacAlgorithm::AsconAead128Mac`]);
//!   the only form layer-2 GOOSE can use, since IEC 62351-6 gives layer 2 no encryption.
//!
//! Both take a 128-bit key, a 128-bit nonce that must never repeat under one key (SP 800-232
//! §4.1; gander's construction is in [`crate::nonce`]) and give the full 128-bit tag. The
//! key is held by the crate in a type that is zeroized on drop (`zeroize` feature).

use ascon_aead::aead::inout::InOutBuf;
use ascon_aead::aead::{AeadInOut, KeyInit};
use ascon_aead::{AsconAead128, AsconAead128Nonce, AsconAead128Tag};
use subtle::ConstantTimeEq;

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::provider::{AeadKey, CryptoError, MacKey};

/// Key length of Ascon-AEAD128, bytes (SP 800-232 §4: k = 128).
pub const KEY_LEN: usize = 16;
/// Nonce length of Ascon-AEAD128, bytes (SP 800-232 §4: 128-bit nonce).
pub const NONCE_LEN: usize = 16;
/// Tag length of Ascon-AEAD128, bytes (SP 800-232 §4: 128-bit tag).
pub const TAG_LEN: usize = 16;

/// Payloads up to this many bytes are decrypted through a stack buffer; longer ones through
/// the heap. A 1500-byte Ethernet payload always fits.
const STACK_SCRATCH: usize = 2048;

fn cipher(alg: &'static str, key: &[u8]) -> Result<AsconAead128, CryptoError> {
    AsconAead128::new_from_slice(key).map_err(|_| CryptoError::BadKeyLength {
        alg,
        expected: "16",
        got: key.len(),
    })
}

fn nonce(alg: &'static str, iv: &[u8]) -> Result<AsconAead128Nonce, CryptoError> {
    let n: [u8; NONCE_LEN] = iv.try_into().map_err(|_| CryptoError::BadIvLength {
        alg,
        expected: NONCE_LEN,
        got: iv.len(),
    })?;
    Ok(n.into())
}

fn tag_of(alg: &'static str, tag: &[u8]) -> Result<AsconAead128Tag, CryptoError> {
    let t: [u8; TAG_LEN] = tag.try_into().map_err(|_| CryptoError::BadTagLength {
        alg,
        expected: TAG_LEN,
        got: tag.len(),
    })?;
    Ok(t.into())
}

/// Ascon-AEAD128 as the payload AEAD.
pub(crate) struct AsconAeadKey {
    aead: AsconAead128,
}

impl AsconAeadKey {
    /// Prepares a key; only 16-byte keys are accepted.
    pub(crate) fn new(key: &[u8]) -> Result<Self, CryptoError> {
        Ok(AsconAeadKey {
            aead: cipher(EncAlgorithm::AsconAead128.name(), key)?,
        })
    }
}

impl AeadKey for AsconAeadKey {
    fn algorithm(&self) -> EncAlgorithm {
        EncAlgorithm::AsconAead128
    }

    fn seal_in_place(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; 16], CryptoError> {
        let alg = EncAlgorithm::AsconAead128.name();
        let n = nonce(alg, iv)?;
        let tag = self
            .aead
            .encrypt_inout_detached(&n, aad, InOutBuf::from(buf))
            .map_err(|_| CryptoError::Backend(format!("{alg}: input too long")))?;
        Ok(tag.into())
    }

    fn open_in_place(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        let alg = EncAlgorithm::AsconAead128.name();
        let n = nonce(alg, iv)?;
        let t = tag_of(alg, tag)?;
        // The crate decrypts before it compares the tag and then zeroes its output; decrypting
        // into scratch keeps `buf` as ciphertext on failure (the trait's contract) and releases
        // no plaintext.
        let mut stack = [0u8; STACK_SCRATCH];
        let mut heap = Vec::new();
        let scratch: &mut [u8] = if buf.len() <= STACK_SCRATCH {
            &mut stack[..buf.len()]
        } else {
            heap.resize(buf.len(), 0);
            &mut heap
        };
        let io = InOutBuf::new(buf, scratch)
            .map_err(|_| CryptoError::Backend(format!("{alg}: scratch length")))?;
        let ok = self.aead.decrypt_inout_detached(&n, aad, io, &t).is_ok();
        if ok {
            buf.copy_from_slice(scratch);
        }
        zeroize::Zeroize::zeroize(scratch);
        if ok {
            Ok(())
        } else {
            Err(CryptoError::VerifyFailed)
        }
    }
}

/// Ascon-AEAD128 with an empty plaintext: the tag authenticates the associated data only.
pub(crate) struct AsconMacKey {
    aead: AsconAead128,
}

impl AsconMacKey {
    /// Prepares a key; only 16-byte keys are accepted.
    pub(crate) fn new(key: &[u8]) -> Result<Self, CryptoError> {
        Ok(AsconMacKey {
            aead: cipher(MacAlgorithm::AsconAead128Mac.name(), key)?,
        })
    }

    fn full_tag(&self, iv: &[u8], data: &[u8]) -> Result<[u8; 16], CryptoError> {
        let alg = MacAlgorithm::AsconAead128Mac.name();
        let n = nonce(alg, iv)?;
        let tag = self
            .aead
            .encrypt_inout_detached(&n, data, InOutBuf::from(&mut [][..]))
            .map_err(|_| CryptoError::Backend(format!("{alg}: input too long")))?;
        Ok(tag.into())
    }
}

impl MacKey for AsconMacKey {
    fn algorithm(&self) -> MacAlgorithm {
        MacAlgorithm::AsconAead128Mac
    }

    fn sign(&self, iv: &[u8], data: &[u8], tag_out: &mut [u8]) -> Result<(), CryptoError> {
        let alg = MacAlgorithm::AsconAead128Mac;
        if tag_out.len() != TAG_LEN {
            return Err(CryptoError::BadTagLength {
                alg: alg.name(),
                expected: TAG_LEN,
                got: tag_out.len(),
            });
        }
        tag_out.copy_from_slice(&self.full_tag(iv, data)?);
        Ok(())
    }

    fn verify(&self, iv: &[u8], data: &[u8], tag: &[u8]) -> Result<(), CryptoError> {
        tag_of(MacAlgorithm::AsconAead128Mac.name(), tag)?;
        let full = self.full_tag(iv, data)?;
        if bool::from(full.ct_eq(tag)) {
            Ok(())
        } else {
            Err(CryptoError::VerifyFailed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Record 1 of the reference implementation's SP 800-232 known-answer file
    /// (`crypto_aead/asconaead128/LWC_AEAD_KAT_128_128.txt`, all of which `tests/ascon_kat.rs`
    /// runs), and record 1 of the older Ascon-128 v1.2 file (`ascon128v12`), whose tag this
    /// crate must *not* give: a guard against a dependency that implements v1.2.
    #[test]
    fn sp800_232_not_v1_2() {
        let key: Vec<u8> = (0..16).collect();
        let mac = AsconMacKey::new(&key).unwrap();
        let mut tag = [0u8; 16];
        let nonce: Vec<u8> = (0x10..0x20).collect();
        mac.sign(&nonce, b"", &mut tag).unwrap();
        assert_eq!(hex::encode_upper(tag), "4F9C278211BEC9316BF68F46EE8B2EC6");
        mac.sign(&key, b"", &mut tag).unwrap();
        assert_ne!(hex::encode_upper(tag), "CADB9F15DFD2F5DC8F686548A88DCD88");
    }

    #[test]
    fn wrong_lengths_are_typed_errors() {
        assert!(matches!(
            AsconAeadKey::new(&[0; 32]),
            Err(CryptoError::BadKeyLength { got: 32, .. })
        ));
        let k = AsconAeadKey::new(&[0; 16]).unwrap();
        assert!(matches!(
            k.seal_in_place(&[0; 12], b"", &mut []),
            Err(CryptoError::BadIvLength { got: 12, .. })
        ));
        assert!(matches!(
            k.open_in_place(&[0; 16], b"", &mut [], &[0; 8]),
            Err(CryptoError::BadTagLength { got: 8, .. })
        ));
    }

    #[test]
    fn failed_open_leaves_ciphertext_and_large_payloads_work() {
        let k = AsconAeadKey::new(&[7; 16]).unwrap();
        for len in [0usize, 1, 100, STACK_SCRATCH, STACK_SCRATCH + 1, 9000] {
            let pt: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut buf = pt.clone();
            let tag = k.seal_in_place(&[1; 16], b"ad", &mut buf).unwrap();
            let ct = buf.clone();
            let mut bad = tag;
            bad[0] ^= 1;
            assert_eq!(
                k.open_in_place(&[1; 16], b"ad", &mut buf, &bad),
                Err(CryptoError::VerifyFailed)
            );
            assert_eq!(buf, ct, "len {len}");
            k.open_in_place(&[1; 16], b"ad", &mut buf, &tag).unwrap();
            assert_eq!(buf, pt, "len {len}");
        }
    }
}
