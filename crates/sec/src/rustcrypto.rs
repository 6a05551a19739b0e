//! The RustCrypto provider: the default, fast implementation of [`CryptoProvider`].
//!
//! Every key is prepared once, so that the per-message work is only the primitive:
//!
//! * HMAC (RFC 2104 §2): the keyed state after absorbing `K ^ ipad` and `K ^ opad` is kept and
//!   cloned per message, so a message costs the hash of the data plus one outer block instead
//!   of four compressions extra for the key.
//! * HMAC-BLAKE2b/2s: the *HMAC construction* (RFC 2104) over BLAKE2b-512 resp. BLAKE2s-256
//!   (RFC 7693), exactly what OpenSSL's `HMAC(EVP_blake2b512(), ...)` computes, which is what
//!   the gateway paper's library (R-GOOSE_SecLib) used. It is *not* keyed BLAKE2
//!   (RFC 7693 §2.5), which gives different tags.
//! * AES-GMAC (NIST SP 800-38D §3, GCM with an empty plaintext, the data as AAD) and
//!   AES-GCM (SP 800-38D §7): the AES key schedule and the GHASH key `H = E_K(0^128)`
//!   (§6.4) are computed once.
//!
//! Truncated tags are the leftmost bytes of the full tag (RFC 2104 §5, RFC 4231 §4.9,
//! SP 800-38D §5.2.1.2) and are always compared in constant time ([`subtle`]), never with `==`.
//!
//! Key material: the AES round keys and GHASH keys are zeroized on drop (the `zeroize`
//! features of `aes`, `aes-gcm` and `ghash` are enabled). The HMAC pad states cannot be:
//! `hmac` 0.12, `sha2` 0.10 and `blake2` 0.10 offer no zeroize support.

use aes::cipher::consts::{U12, U16};
use aes::cipher::{BlockCipher, BlockEncrypt, BlockSizeUser, KeyInit};
use aes::{Aes128, Aes256};
use aes_gcm::{AeadInPlace, AesGcm};
use blake2::{Blake2b512, Blake2s256};
use ghash::universal_hash::UniversalHash;
use ghash::GHash;
use hmac::{Hmac, Mac, SimpleHmac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::provider::{AeadKey, CryptoError, CryptoProvider, MacKey};

/// The RustCrypto provider (AES-NI, PCLMULQDQ and SHA-NI where the CPU has them, detected at
/// run time by the `aes`, `polyval` and `sha2` crates).
#[derive(Clone, Copy, Debug, Default)]
pub struct RustCryptoProvider;

impl CryptoProvider for RustCryptoProvider {
    fn name(&self) -> &'static str {
        "rustcrypto"
    }

    fn mac_key(&self, alg: MacAlgorithm, key: &[u8]) -> Result<Box<dyn MacKey>, CryptoError> {
        check_mac_key(alg, key)?;
        Ok(match alg {
            MacAlgorithm::None => return Err(CryptoError::Unsupported(alg.name())),
            MacAlgorithm::HmacSha256_80
            | MacAlgorithm::HmacSha256_128
            | MacAlgorithm::HmacSha256_256 => Box::new(HmacKey::<Hmac<Sha256>>::new(alg, key)?),
            MacAlgorithm::HmacBlake2b80 => {
                Box::new(HmacKey::<SimpleHmac<Blake2b512>>::new(alg, key)?)
            }
            MacAlgorithm::HmacBlake2s80 => {
                Box::new(HmacKey::<SimpleHmac<Blake2s256>>::new(alg, key)?)
            }
            MacAlgorithm::AsconAead128Mac => Box::new(crate::ascon::AsconMacKey::new(key)?),
            MacAlgorithm::AesGmac64 | MacAlgorithm::AesGmac128 => match key.len() {
                16 => Box::new(GmacKey {
                    alg,
                    gcm: Gcm::<Aes128>::new(alg.name(), key)?,
                }),
                _ => Box::new(GmacKey {
                    alg,
                    gcm: Gcm::<Aes256>::new(alg.name(), key)?,
                }),
            },
        })
    }

    fn aead_key(&self, alg: EncAlgorithm, key: &[u8]) -> Result<Box<dyn AeadKey>, CryptoError> {
        check_aead_key(alg, key)?;
        Ok(match alg {
            EncAlgorithm::None => return Err(CryptoError::Unsupported(alg.name())),
            EncAlgorithm::Aes128Gcm => Box::new(GcmKey {
                alg,
                gcm: Gcm::<Aes128>::new(alg.name(), key)?,
            }),
            EncAlgorithm::Aes256Gcm => Box::new(GcmKey {
                alg,
                gcm: Gcm::<Aes256>::new(alg.name(), key)?,
            }),
            EncAlgorithm::AsconAead128 => Box::new(crate::ascon::AsconAeadKey::new(key)?),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Checks shared with the OpenSSL provider.

/// Rejects `None` and key lengths the algorithm does not accept.
pub(crate) fn check_mac_key(alg: MacAlgorithm, key: &[u8]) -> Result<(), CryptoError> {
    if alg == MacAlgorithm::None {
        return Err(CryptoError::Unsupported(alg.name()));
    }
    if !alg.accepts_key_len(key.len()) {
        let expected = if alg == MacAlgorithm::AsconAead128Mac {
            "16"
        } else if alg.needs_iv() {
            "16 or 32"
        } else {
            "at least 1"
        };
        return Err(CryptoError::BadKeyLength {
            alg: alg.name(),
            expected,
            got: key.len(),
        });
    }
    Ok(())
}

/// Rejects `None` and a key that is not exactly the algorithm's key length.
pub(crate) fn check_aead_key(alg: EncAlgorithm, key: &[u8]) -> Result<(), CryptoError> {
    match alg {
        EncAlgorithm::None => Err(CryptoError::Unsupported(alg.name())),
        EncAlgorithm::Aes128Gcm if key.len() != 16 => Err(CryptoError::BadKeyLength {
            alg: alg.name(),
            expected: "16",
            got: key.len(),
        }),
        EncAlgorithm::Aes256Gcm if key.len() != 32 => Err(CryptoError::BadKeyLength {
            alg: alg.name(),
            expected: "32",
            got: key.len(),
        }),
        EncAlgorithm::AsconAead128 if key.len() != 16 => Err(CryptoError::BadKeyLength {
            alg: alg.name(),
            expected: "16",
            got: key.len(),
        }),
        _ => Ok(()),
    }
}

/// The output buffer or received tag must be exactly the algorithm's wire tag length.
pub(crate) fn check_mac_tag_len(alg: MacAlgorithm, len: usize) -> Result<(), CryptoError> {
    if len != alg.tag_len() {
        return Err(CryptoError::BadTagLength {
            alg: alg.name(),
            expected: alg.tag_len(),
            got: len,
        });
    }
    Ok(())
}

/// GCM here always takes a 96-bit IV (SP 800-38D §5.2.1.1: the recommended length, for which
/// `J0 = IV || 0^31 || 1`, §7.1 step 2).
pub(crate) fn gcm_iv(alg: &'static str, iv: &[u8]) -> Result<[u8; 12], CryptoError> {
    iv.try_into().map_err(|_| CryptoError::BadIvLength {
        alg,
        expected: 12,
        got: iv.len(),
    })
}

/// Shortest and longest GCM tag `open_in_place` accepts (SP 800-38D §5.2.1.2 allows 128, 120,
/// 112, 104, 96 and, for some applications, 64 and 32 bits; we accept any whole byte count
/// from 4 to 16, as the CAVP files need).
pub(crate) const GCM_MIN_TAG: usize = 4;

/// Checks a received GCM tag length (4..=16 bytes).
pub(crate) fn check_gcm_tag_len(alg: &'static str, len: usize) -> Result<(), CryptoError> {
    if !(GCM_MIN_TAG..=16).contains(&len) {
        return Err(CryptoError::BadTagLength {
            alg,
            expected: 16,
            got: len,
        });
    }
    Ok(())
}

/// Writes the leading `tag_out.len()` bytes of a full 16-byte tag (SP 800-38D §5.2.1.2
/// truncation), after checking that length suits `alg`.
pub(crate) fn sign_truncated(
    alg: MacAlgorithm,
    tag_out: &mut [u8],
    full: impl FnOnce() -> Result<[u8; 16], CryptoError>,
) -> Result<(), CryptoError> {
    check_mac_tag_len(alg, tag_out.len())?;
    let full = full()?;
    let n = tag_out.len();
    tag_out.copy_from_slice(&full[..n]);
    Ok(())
}

/// Checks a (possibly truncated) tag against the leading bytes of the full tag, in constant time.
pub(crate) fn verify_truncated(
    alg: MacAlgorithm,
    tag: &[u8],
    full: impl FnOnce() -> Result<[u8; 16], CryptoError>,
) -> Result<(), CryptoError> {
    check_mac_tag_len(alg, tag.len())?;
    ct_verify_prefix(&full()?, tag)
}

/// Constant-time comparison of a received (possibly truncated) tag with the leftmost bytes of
/// the full tag. Returns `VerifyFailed` if they differ; the caller has checked the length.
pub(crate) fn ct_verify_prefix(full: &[u8], received: &[u8]) -> Result<(), CryptoError> {
    match full.get(..received.len()) {
        Some(prefix) if bool::from(prefix.ct_eq(received)) => Ok(()),
        _ => Err(CryptoError::VerifyFailed),
    }
}

// ---------------------------------------------------------------------------------------------
// HMAC.

/// A prepared HMAC key: the keyed inner/outer state, cloned per message.
struct HmacKey<M> {
    alg: MacAlgorithm,
    mac: M,
}

impl<M: Mac + KeyInit> HmacKey<M> {
    fn new(alg: MacAlgorithm, key: &[u8]) -> Result<Self, CryptoError> {
        // RFC 2104 §2: a key longer than the block size is hashed first; `new_from_slice`
        // does that and accepts any length.
        let mac = <M as KeyInit>::new_from_slice(key).map_err(|_| CryptoError::BadKeyLength {
            alg: alg.name(),
            expected: "at least 1",
            got: key.len(),
        })?;
        Ok(HmacKey { alg, mac })
    }
}

impl<M: Mac + Clone + Send + Sync> HmacKey<M> {
    fn full_tag(&self, data: &[u8]) -> hmac::digest::Output<M> {
        let mut mac = self.mac.clone();
        mac.update(data);
        mac.finalize().into_bytes()
    }
}

impl<M: Mac + Clone + Send + Sync> MacKey for HmacKey<M> {
    fn algorithm(&self) -> MacAlgorithm {
        self.alg
    }

    fn sign(&self, _iv: &[u8], data: &[u8], tag_out: &mut [u8]) -> Result<(), CryptoError> {
        check_mac_tag_len(self.alg, tag_out.len())?;
        let full = self.full_tag(data);
        // RFC 2104 §5: the truncated output is the leftmost bits of the HMAC.
        let n = tag_out.len();
        tag_out.copy_from_slice(&full[..n]);
        Ok(())
    }

    fn verify(&self, _iv: &[u8], data: &[u8], tag: &[u8]) -> Result<(), CryptoError> {
        check_mac_tag_len(self.alg, tag.len())?;
        ct_verify_prefix(&self.full_tag(data), tag)
    }
}

// ---------------------------------------------------------------------------------------------
// GCM and GMAC.

/// An AES block cipher usable under GCM.
trait AesBlock:
    BlockCipher
    + BlockEncrypt
    + BlockSizeUser<BlockSize = U16>
    + KeyInit
    + Clone
    + Send
    + Sync
    + 'static
{
}
impl<T> AesBlock for T where
    T: BlockCipher
        + BlockEncrypt
        + BlockSizeUser<BlockSize = U16>
        + KeyInit
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// A prepared AES-GCM key: the `aes-gcm` AEAD for the common path, plus the bare block cipher
/// and GHASH key for computing a full tag without decrypting (needed to check a truncated tag
/// before any plaintext is produced).
struct Gcm<C: AesBlock> {
    aead: AesGcm<C, U12>,
    block: C,
    ghash: GHash,
}

impl<C: AesBlock> Gcm<C> {
    fn new(alg: &'static str, key: &[u8]) -> Result<Self, CryptoError> {
        let block = C::new_from_slice(key).map_err(|_| CryptoError::BadKeyLength {
            alg,
            expected: "16 or 32",
            got: key.len(),
        })?;
        // SP 800-38D §6.4 / §7.1 step 1: H = CIPH_K(0^128).
        let mut h = ghash::Key::default();
        block.encrypt_block(&mut h);
        let ghash = GHash::new(&h);
        zeroize::Zeroize::zeroize(h.as_mut_slice());
        let aead = AesGcm::<C, U12>::from(block.clone());
        Ok(Gcm { aead, block, ghash })
    }

    /// Seals `buf` in place (SP 800-38D §7.1) and returns the full 128-bit tag.
    fn seal(
        &self,
        alg: &'static str,
        iv: &[u8; 12],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; 16], CryptoError> {
        let tag = self
            .aead
            .encrypt_in_place_detached(iv.into(), aad, buf)
            .map_err(|_| CryptoError::Backend(format!("{alg}: input longer than GCM allows")))?;
        Ok(tag.into())
    }

    /// The full tag of ciphertext `ct` under `aad`, without decrypting (SP 800-38D §7.2 steps
    /// 4-7): `T = CIPH_K(J0) xor GHASH_H(A || 0^v || C || 0^u || [len(A)]64 || [len(C)]64)`.
    fn full_tag_of_ciphertext(&self, iv: &[u8; 12], aad: &[u8], ct: &[u8]) -> [u8; 16] {
        let mut gh = self.ghash.clone();
        gh.update_padded(aad);
        gh.update_padded(ct);
        let mut lens = ghash::Block::default();
        lens[..8].copy_from_slice(&((aad.len() as u64).wrapping_mul(8)).to_be_bytes());
        lens[8..].copy_from_slice(&((ct.len() as u64).wrapping_mul(8)).to_be_bytes());
        gh.update(&[lens]);
        let s = gh.finalize();
        let mut j0 = ghash::Block::default();
        j0[..12].copy_from_slice(iv);
        j0[15] = 1;
        self.block.encrypt_block(&mut j0);
        let mut tag = [0u8; 16];
        for (t, (a, b)) in tag.iter_mut().zip(s.iter().zip(j0.iter())) {
            *t = a ^ b;
        }
        tag
    }

    /// Verifies `tag` (4..=16 bytes) and only then decrypts `buf` in place (SP 800-38D §7.2).
    fn open(
        &self,
        alg: &'static str,
        iv: &[u8; 12],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        check_gcm_tag_len(alg, tag.len())?;
        if tag.len() == 16 {
            // `aes-gcm` computes the tag over the ciphertext, compares it in constant time and
            // decrypts only on success, leaving `buf` untouched otherwise.
            return self
                .aead
                .decrypt_in_place_detached(iv.into(), aad, buf, tag.into())
                .map_err(|_| CryptoError::VerifyFailed);
        }
        // Truncated tag (§5.2.1.2): compute the full tag, compare its leftmost bytes in constant
        // time, and only then decrypt with the now-known full tag.
        let full = self.full_tag_of_ciphertext(iv, aad, buf);
        ct_verify_prefix(&full, tag)?;
        self.aead
            .decrypt_in_place_detached(iv.into(), aad, buf, (&full).into())
            .map_err(|_| CryptoError::VerifyFailed)
    }
}

/// AES-GMAC (SP 800-38D §3: GCM with empty plaintext, authenticating the data as AAD).
struct GmacKey<C: AesBlock> {
    alg: MacAlgorithm,
    gcm: Gcm<C>,
}

impl<C: AesBlock> GmacKey<C> {
    fn full_tag(&self, iv: &[u8], data: &[u8]) -> Result<[u8; 16], CryptoError> {
        let iv = gcm_iv(self.alg.name(), iv)?;
        self.gcm.seal(self.alg.name(), &iv, data, &mut [])
    }
}

impl<C: AesBlock> MacKey for GmacKey<C> {
    fn algorithm(&self) -> MacAlgorithm {
        self.alg
    }

    fn sign(&self, iv: &[u8], data: &[u8], tag_out: &mut [u8]) -> Result<(), CryptoError> {
        sign_truncated(self.alg, tag_out, || self.full_tag(iv, data))
    }

    fn verify(&self, iv: &[u8], data: &[u8], tag: &[u8]) -> Result<(), CryptoError> {
        verify_truncated(self.alg, tag, || self.full_tag(iv, data))
    }
}

/// AES-GCM as an AEAD (SP 800-38D §7).
struct GcmKey<C: AesBlock> {
    alg: EncAlgorithm,
    gcm: Gcm<C>,
}

impl<C: AesBlock> AeadKey for GcmKey<C> {
    fn algorithm(&self) -> EncAlgorithm {
        self.alg
    }

    fn seal_in_place(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; 16], CryptoError> {
        let iv = gcm_iv(self.alg.name(), iv)?;
        self.gcm.seal(self.alg.name(), &iv, aad, buf)
    }

    fn open_in_place(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        let iv = gcm_iv(self.alg.name(), iv)?;
        self.gcm.open(self.alg.name(), &iv, aad, buf, tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        hex::decode(s).unwrap()
    }

    #[test]
    fn rejects_bad_keys_and_none() {
        let p = RustCryptoProvider;
        assert!(matches!(
            p.mac_key(MacAlgorithm::None, b"k"),
            Err(CryptoError::Unsupported(_))
        ));
        assert!(matches!(
            p.mac_key(MacAlgorithm::HmacSha256_80, b""),
            Err(CryptoError::BadKeyLength { .. })
        ));
        assert!(matches!(
            p.mac_key(MacAlgorithm::AesGmac64, &[0; 24]),
            Err(CryptoError::BadKeyLength { .. })
        ));
        assert!(matches!(
            p.aead_key(EncAlgorithm::None, &[]),
            Err(CryptoError::Unsupported(_))
        ));
        assert!(matches!(
            p.aead_key(EncAlgorithm::Aes128Gcm, &[0; 32]),
            Err(CryptoError::BadKeyLength { .. })
        ));
        assert!(matches!(
            p.aead_key(EncAlgorithm::Aes256Gcm, &[0; 16]),
            Err(CryptoError::BadKeyLength { .. })
        ));
    }

    #[test]
    fn rejects_bad_tag_and_iv_lengths() {
        let p = RustCryptoProvider;
        let k = p.mac_key(MacAlgorithm::AesGmac64, &[7; 16]).unwrap();
        let mut tag = [0u8; 8];
        assert!(matches!(
            k.sign(&[0; 11], b"x", &mut tag),
            Err(CryptoError::BadIvLength { got: 11, .. })
        ));
        assert!(matches!(
            k.sign(&[0; 12], b"x", &mut [0; 16]),
            Err(CryptoError::BadTagLength { .. })
        ));
        k.sign(&[0; 12], b"x", &mut tag).unwrap();
        assert!(matches!(
            k.verify(&[0; 12], b"x", &tag[..7]),
            Err(CryptoError::BadTagLength { .. })
        ));
        k.verify(&[0; 12], b"x", &tag).unwrap();

        let a = p.aead_key(EncAlgorithm::Aes128Gcm, &[7; 16]).unwrap();
        let mut buf = *b"hello";
        let t = a.seal_in_place(&[1; 12], b"", &mut buf).unwrap();
        assert!(matches!(
            a.open_in_place(&[1; 12], b"", &mut buf, &t[..3]),
            Err(CryptoError::BadTagLength { .. })
        ));
        assert!(matches!(
            a.open_in_place(&[1; 12], b"", &mut buf, &[0; 17]),
            Err(CryptoError::BadTagLength { .. })
        ));
        a.open_in_place(&[1; 12], b"", &mut buf, &t[..4]).unwrap();
        assert_eq!(&buf, b"hello");
    }

    /// RFC 4231 §4.2, test case 1, at every truncation the catalogue has.
    #[test]
    fn hmac_sha256_rfc4231_case1_truncations() {
        let full = hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
        let p = RustCryptoProvider;
        for alg in [
            MacAlgorithm::HmacSha256_80,
            MacAlgorithm::HmacSha256_128,
            MacAlgorithm::HmacSha256_256,
        ] {
            let k = p.mac_key(alg, &[0x0b; 20]).unwrap();
            let mut tag = vec![0u8; alg.tag_len()];
            k.sign(&[], b"Hi There", &mut tag).unwrap();
            assert_eq!(tag, full[..alg.tag_len()]);
            k.verify(&[], b"Hi There", &tag).unwrap();
            tag[0] ^= 1;
            assert_eq!(
                k.verify(&[], b"Hi There", &tag),
                Err(CryptoError::VerifyFailed)
            );
        }
    }

    /// SP 800-38D GCM test case 2 of McGrew & Viega's GCM spec (AES-128, zero key, one zero
    /// block): checks the hand-computed tag path against `aes-gcm`'s, then open with a
    /// truncated tag, then a failed open leaves the ciphertext.
    #[test]
    fn truncated_tag_path_matches_aead() {
        let p = RustCryptoProvider;
        let a = p.aead_key(EncAlgorithm::Aes128Gcm, &[0; 16]).unwrap();
        let mut buf = [0u8; 16];
        let tag = a.seal_in_place(&[0; 12], b"", &mut buf).unwrap();
        assert_eq!(buf.to_vec(), hex("0388dace60b6a392f328c2b971b2fe78"));
        assert_eq!(tag.to_vec(), hex("ab6e47d42cec13bdf53a67b21257bddf"));

        let g = Gcm::<Aes256>::new("t", &[3; 32]).unwrap();
        for len in [0usize, 1, 15, 16, 17, 100] {
            let mut b = vec![0x5a; len];
            let t = g.seal("t", &[9; 12], b"some aad", &mut b).unwrap();
            assert_eq!(g.full_tag_of_ciphertext(&[9; 12], b"some aad", &b), t);
            let ct = b.clone();
            let mut bad = t;
            bad[0] ^= 0x80;
            assert_eq!(
                g.open("t", &[9; 12], b"some aad", &mut b, &bad[..8]),
                Err(CryptoError::VerifyFailed)
            );
            assert_eq!(b, ct, "failed open must leave the ciphertext");
            g.open("t", &[9; 12], b"some aad", &mut b, &t[..8]).unwrap();
            assert_eq!(b, vec![0x5a; len]);
        }
    }

    /// HMAC-BLAKE2 is the RFC 2104 construction, not keyed BLAKE2 (RFC 7693 §2.5).
    #[test]
    fn hmac_blake2_is_not_keyed_blake2() {
        use blake2::digest::Mac as _;
        let key = [0x42u8; 32];
        let k = RustCryptoProvider
            .mac_key(MacAlgorithm::HmacBlake2b80, &key)
            .unwrap();
        let mut tag = [0u8; 10];
        k.sign(&[], b"abc", &mut tag).unwrap();
        let keyed = <blake2::Blake2bMac512 as KeyInit>::new_from_slice(&key)
            .unwrap()
            .chain_update(b"abc")
            .finalize()
            .into_bytes();
        assert_ne!(tag[..], keyed[..10]);
    }
}
