//! The OpenSSL provider: the same algorithms through the system OpenSSL (3.x) EVP interface.
//!
//! Two ways of calling OpenSSL live here:
//!
//! * [`OpensslProvider`] prepares keys like the RustCrypto provider does: the HMAC key is parsed
//!   into an `EVP_PKEY` once, and each GCM/GMAC key keeps an `EVP_CIPHER_CTX` whose AES key
//!   schedule and GHASH key are set once; per message only the IV is set
//!   (`EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv)`). Used to cross-check the RustCrypto
//!   provider and as `impl=openssl` in `gander bench crypto`.
//! * [`evp_per_message`] creates a fresh context and key for every message, the way the gateway
//!   paper's C library (R-GOOSE_SecLib) called OpenSSL EVP; `impl=evp-per-message` in the
//!   benchmark, so the cost of key set-up per frame can be shown against the prepared paths.
//!
//! Algorithms: HMAC (RFC 2104) over SHA-256, BLAKE2b-512 and BLAKE2s-256 (RFC 7693; the HMAC
//! construction, as `HMAC(EVP_blake2b512(), ...)`, not keyed BLAKE2); AES-GMAC and AES-GCM
//! (NIST SP 800-38D) with 96-bit IVs. Truncated tags are the leftmost bytes and are compared
//! in constant time.

use std::sync::Mutex;

use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::sign::Signer;
use zeroize::Zeroizing;

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::provider::{AeadKey, CryptoError, CryptoProvider, MacKey};
use crate::rustcrypto::{
    check_aead_key, check_gcm_tag_len, check_mac_key, check_mac_tag_len, ct_verify_prefix, gcm_iv,
    sign_truncated, verify_truncated,
};

/// The OpenSSL provider (system OpenSSL through the `openssl` crate).
#[derive(Clone, Copy, Debug, Default)]
pub struct OpensslProvider;

/// Maps an OpenSSL error stack to [`CryptoError::Backend`].
fn backend(e: openssl::error::ErrorStack) -> CryptoError {
    CryptoError::Backend(format!("openssl: {e}"))
}

/// OpenSSL takes lengths as C `int`; the `openssl` crate panics above that, so refuse first.
fn check_c_len(alg: &'static str, len: usize) -> Result<(), CryptoError> {
    if len > i32::MAX as usize {
        return Err(CryptoError::Backend(format!(
            "{alg}: input of {len} bytes too long for OpenSSL"
        )));
    }
    Ok(())
}

/// `NID_blake2b512` in OpenSSL's obj_mac.h.
const NID_BLAKE2B512: Nid = Nid::from_raw(1056);
/// `NID_blake2s256` in OpenSSL's obj_mac.h.
const NID_BLAKE2S256: Nid = Nid::from_raw(1057);

/// The digest under each HMAC algorithm; `None` for non-HMAC algorithms.
fn hmac_digest(alg: MacAlgorithm) -> Result<Option<MessageDigest>, CryptoError> {
    // The `openssl` crate has no `Nid` constants for BLAKE2; these are OpenSSL's
    // `NID_blake2b512` / `NID_blake2s256` (obj_mac.h), whose short names are "BLAKE2b512" /
    // "BLAKE2s256" (`EVP_blake2b512()`, `EVP_blake2s256()`).
    let (nid, name) = match alg {
        MacAlgorithm::HmacSha256_80
        | MacAlgorithm::HmacSha256_128
        | MacAlgorithm::HmacSha256_256 => return Ok(Some(MessageDigest::sha256())),
        MacAlgorithm::HmacBlake2b80 => (NID_BLAKE2B512, "BLAKE2b512"),
        MacAlgorithm::HmacBlake2s80 => (NID_BLAKE2S256, "BLAKE2s256"),
        _ => return Ok(None),
    };
    MessageDigest::from_nid(nid)
        .or_else(|| MessageDigest::from_name(name))
        .map(Some)
        .ok_or_else(|| {
            CryptoError::Backend(format!(
                "{}: digest not available in this OpenSSL",
                alg.name()
            ))
        })
}

/// AES-GCM cipher by key length (16 -> AES-128, 32 -> AES-256); the caller checked the length.
fn gcm_cipher(key_len: usize) -> &'static CipherRef {
    if key_len == 32 {
        Cipher::aes_256_gcm()
    } else {
        Cipher::aes_128_gcm()
    }
}

/// HMAC of `data` into `out` (the full output, up to 64 bytes); returns the output length.
fn hmac_full(
    pkey: &PKey<Private>,
    md: MessageDigest,
    data: &[u8],
    out: &mut [u8; 64],
) -> Result<usize, CryptoError> {
    let mut signer = Signer::new(md, pkey).map_err(backend)?;
    signer.update(data).map_err(backend)?;
    let len = signer.len().map_err(backend)?;
    if len > out.len() {
        return Err(CryptoError::Backend(format!(
            "unexpected HMAC length {len}"
        )));
    }
    signer.sign(&mut out[..]).map_err(backend)
}

/// GMAC (SP 800-38D §3): GCM over an empty plaintext with `data` as AAD; a context whose key
/// is already set only gets the IV here. Returns the full 128-bit tag.
fn gmac_with_ctx(ctx: &mut CipherCtx, iv: &[u8; 12], data: &[u8]) -> Result<[u8; 16], CryptoError> {
    ctx.encrypt_init(None, None, Some(iv)).map_err(backend)?;
    if !data.is_empty() {
        ctx.cipher_update(data, None).map_err(backend)?;
    }
    let mut fin = [0u8; 16];
    ctx.cipher_final(&mut fin).map_err(backend)?;
    let mut tag = [0u8; 16];
    ctx.tag(&mut tag).map_err(backend)?;
    Ok(tag)
}

/// GCM authenticated encryption in place (SP 800-38D §7.1) with a keyed context.
fn seal_with_ctx(
    ctx: &mut CipherCtx,
    iv: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
) -> Result<[u8; 16], CryptoError> {
    ctx.encrypt_init(None, None, Some(iv)).map_err(backend)?;
    if !aad.is_empty() {
        ctx.cipher_update(aad, None).map_err(backend)?;
    }
    if !buf.is_empty() {
        let len = buf.len();
        ctx.cipher_update_inplace(buf, len).map_err(backend)?;
    }
    let mut fin = [0u8; 16];
    ctx.cipher_final(&mut fin).map_err(backend)?;
    let mut tag = [0u8; 16];
    ctx.tag(&mut tag).map_err(backend)?;
    Ok(tag)
}

/// GCM authenticated decryption (SP 800-38D §7.2) with a keyed context. OpenSSL decrypts while
/// it hashes and checks the tag (constant time, `CRYPTO_memcmp`) only at the end, so the
/// plaintext goes to a scratch buffer that is copied into `buf` only once the tag verified,
/// and wiped otherwise: `buf` stays ciphertext on failure.
fn open_with_ctx(
    ctx: &mut CipherCtx,
    iv: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8],
) -> Result<(), CryptoError> {
    ctx.decrypt_init(None, None, Some(iv)).map_err(backend)?;
    // SP 800-38D §5.2.1.2: a truncated tag is compared with the leftmost bytes; OpenSSL does
    // this when given a shorter tag.
    ctx.set_tag(tag).map_err(backend)?;
    if !aad.is_empty() {
        ctx.cipher_update(aad, None).map_err(backend)?;
    }
    let mut scratch = Zeroizing::new(vec![0u8; buf.len()]);
    if !buf.is_empty() {
        ctx.cipher_update(buf, Some(&mut scratch[..]))
            .map_err(backend)?;
    }
    let mut fin = [0u8; 16];
    ctx.cipher_final(&mut fin)
        .map_err(|_| CryptoError::VerifyFailed)?;
    buf.copy_from_slice(&scratch);
    Ok(())
}

/// A fresh context keyed for AES-GCM, with the default (96-bit) IV length.
fn new_gcm_ctx(key: &[u8], encrypt: bool) -> Result<CipherCtx, CryptoError> {
    let mut ctx = CipherCtx::new().map_err(backend)?;
    let cipher = gcm_cipher(key.len());
    if encrypt {
        ctx.encrypt_init(Some(cipher), Some(key), None)
            .map_err(backend)?;
    } else {
        ctx.decrypt_init(Some(cipher), Some(key), None)
            .map_err(backend)?;
    }
    Ok(ctx)
}

/// Locks a context; a poisoned lock is taken over, since every use re-initialises the IV.
fn lock(m: &Mutex<CipherCtx>) -> std::sync::MutexGuard<'_, CipherCtx> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CryptoProvider for OpensslProvider {
    fn name(&self) -> &'static str {
        "openssl"
    }

    fn mac_key(&self, alg: MacAlgorithm, key: &[u8]) -> Result<Box<dyn MacKey>, CryptoError> {
        if alg.is_experimental() {
            // OpenSSL has no Ascon (3.0 on the target systems, nor 3.5).
            return Err(CryptoError::Unsupported(alg.name()));
        }
        check_mac_key(alg, key)?;
        if let Some(md) = hmac_digest(alg)? {
            let pkey = PKey::hmac(key).map_err(backend)?;
            return Ok(Box::new(OsslHmacKey { alg, md, pkey }));
        }
        // GMAC: only the encrypt direction is needed.
        Ok(Box::new(OsslGmacKey {
            alg,
            ctx: Mutex::new(new_gcm_ctx(key, true)?),
        }))
    }

    fn aead_key(&self, alg: EncAlgorithm, key: &[u8]) -> Result<Box<dyn AeadKey>, CryptoError> {
        if alg.is_experimental() {
            return Err(CryptoError::Unsupported(alg.name()));
        }
        check_aead_key(alg, key)?;
        Ok(Box::new(OsslGcmKey {
            alg,
            enc: Mutex::new(new_gcm_ctx(key, true)?),
            dec: Mutex::new(new_gcm_ctx(key, false)?),
        }))
    }
}

/// HMAC key parsed once into an `EVP_PKEY`; a signing context is made per message (the
/// `openssl` crate cannot duplicate a keyed `EVP_MD_CTX`).
struct OsslHmacKey {
    alg: MacAlgorithm,
    md: MessageDigest,
    pkey: PKey<Private>,
}

impl MacKey for OsslHmacKey {
    fn algorithm(&self) -> MacAlgorithm {
        self.alg
    }

    fn sign(&self, _iv: &[u8], data: &[u8], tag_out: &mut [u8]) -> Result<(), CryptoError> {
        check_mac_tag_len(self.alg, tag_out.len())?;
        let mut full = Zeroizing::new([0u8; 64]);
        hmac_full(&self.pkey, self.md, data, &mut full)?;
        let n = tag_out.len();
        tag_out.copy_from_slice(&full[..n]);
        Ok(())
    }

    fn verify(&self, _iv: &[u8], data: &[u8], tag: &[u8]) -> Result<(), CryptoError> {
        check_mac_tag_len(self.alg, tag.len())?;
        let mut full = Zeroizing::new([0u8; 64]);
        let len = hmac_full(&self.pkey, self.md, data, &mut full)?;
        ct_verify_prefix(&full[..len], tag)
    }
}

/// GMAC key: a keyed `EVP_CIPHER_CTX`, re-initialised with each IV. The mutex serialises
/// threads sharing one key; the RustCrypto provider has no such lock.
struct OsslGmacKey {
    alg: MacAlgorithm,
    ctx: Mutex<CipherCtx>,
}

impl OsslGmacKey {
    fn full_tag(&self, iv: &[u8], data: &[u8]) -> Result<[u8; 16], CryptoError> {
        let iv = gcm_iv(self.alg.name(), iv)?;
        check_c_len(self.alg.name(), data.len())?;
        gmac_with_ctx(&mut lock(&self.ctx), &iv, data)
    }
}

impl MacKey for OsslGmacKey {
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

/// AES-GCM key: one keyed context per direction.
struct OsslGcmKey {
    alg: EncAlgorithm,
    enc: Mutex<CipherCtx>,
    dec: Mutex<CipherCtx>,
}

impl AeadKey for OsslGcmKey {
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
        check_c_len(self.alg.name(), aad.len().max(buf.len()))?;
        seal_with_ctx(&mut lock(&self.enc), &iv, aad, buf)
    }

    fn open_in_place(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        let iv = gcm_iv(self.alg.name(), iv)?;
        check_gcm_tag_len(self.alg.name(), tag.len())?;
        check_c_len(self.alg.name(), aad.len().max(buf.len()))?;
        open_with_ctx(&mut lock(&self.dec), &iv, aad, buf, tag)
    }
}

/// OpenSSL EVP called the way the gateway paper's C library (R-GOOSE_SecLib) calls it: every
/// function creates a fresh context and key (`EVP_PKEY` / `EVP_CIPHER_CTX` with the key
/// schedule), uses it for one message and frees it. This is the `impl=evp-per-message`
/// baseline of `gander bench crypto`; it computes the same tags as the providers.
pub mod evp_per_message {
    use super::*;

    /// Computes the (truncated) tag of `data` into `out`, whose length must be
    /// `alg.tag_len()`. `iv` must be 12 bytes for GMAC and is ignored by the HMACs.
    pub fn mac(
        alg: MacAlgorithm,
        key: &[u8],
        iv: &[u8],
        data: &[u8],
        out: &mut [u8],
    ) -> Result<(), CryptoError> {
        if alg.is_experimental() {
            return Err(CryptoError::Unsupported(alg.name()));
        }
        check_mac_key(alg, key)?;
        check_mac_tag_len(alg, out.len())?;
        let mut full = Zeroizing::new([0u8; 64]);
        if let Some(md) = hmac_digest(alg)? {
            let pkey = PKey::hmac(key).map_err(backend)?;
            hmac_full(&pkey, md, data, &mut full)?;
        } else {
            let iv = gcm_iv(alg.name(), iv)?;
            check_c_len(alg.name(), data.len())?;
            let mut ctx = new_gcm_ctx(key, true)?;
            full[..16].copy_from_slice(&gmac_with_ctx(&mut ctx, &iv, data)?);
        }
        let n = out.len();
        out.copy_from_slice(&full[..n]);
        Ok(())
    }

    /// Recomputes the tag of `data` and compares it with `tag` in constant time.
    pub fn mac_verify(
        alg: MacAlgorithm,
        key: &[u8],
        iv: &[u8],
        data: &[u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        check_mac_tag_len(alg, tag.len())?;
        let mut expect = Zeroizing::new([0u8; 32]);
        let expect = &mut expect[..tag.len()];
        mac(alg, key, iv, data, expect)?;
        ct_verify_prefix(expect, tag)
    }

    /// AES-GCM encryption of `buf` in place; returns the 128-bit tag (SP 800-38D §7.1).
    pub fn seal(
        alg: EncAlgorithm,
        key: &[u8],
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; 16], CryptoError> {
        if alg.is_experimental() {
            return Err(CryptoError::Unsupported(alg.name()));
        }
        check_aead_key(alg, key)?;
        let iv = gcm_iv(alg.name(), iv)?;
        check_c_len(alg.name(), aad.len().max(buf.len()))?;
        let mut ctx = new_gcm_ctx(key, true)?;
        seal_with_ctx(&mut ctx, &iv, aad, buf)
    }

    /// AES-GCM decryption of `buf` in place after the tag (4..=16 bytes) verified
    /// (SP 800-38D §7.2); on failure `buf` is left as ciphertext.
    pub fn open(
        alg: EncAlgorithm,
        key: &[u8],
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        if alg.is_experimental() {
            return Err(CryptoError::Unsupported(alg.name()));
        }
        check_aead_key(alg, key)?;
        let iv = gcm_iv(alg.name(), iv)?;
        check_gcm_tag_len(alg.name(), tag.len())?;
        check_c_len(alg.name(), aad.len().max(buf.len()))?;
        let mut ctx = new_gcm_ctx(key, false)?;
        open_with_ctx(&mut ctx, &iv, aad, buf, tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rustcrypto::RustCryptoProvider;

    /// Every MAC algorithm and key length gives the same tag from both providers and from
    /// the per-message functions, and each verifies the others' tags.
    #[test]
    fn agrees_with_rustcrypto_on_macs() {
        let data: Vec<u8> = (0..=255u8).collect();
        for alg in MacAlgorithm::ALL
            .into_iter()
            .skip(1)
            .filter(|a| !a.is_experimental())
        {
            let key_lens: &[usize] = if alg.needs_iv() {
                &[16, 32]
            } else {
                &[1, 20, 64, 65, 200]
            };
            for &kl in key_lens {
                let key: Vec<u8> = (0..kl).map(|i| (i * 7 + 3) as u8).collect();
                let iv = [0x11u8; 12];
                let a = RustCryptoProvider.mac_key(alg, &key).unwrap();
                let b = OpensslProvider.mac_key(alg, &key).unwrap();
                for len in [0usize, 1, 63, 64, 65, 256] {
                    let mut ta = vec![0u8; alg.tag_len()];
                    let mut tb = ta.clone();
                    let mut tc = ta.clone();
                    a.sign(&iv, &data[..len], &mut ta).unwrap();
                    b.sign(&iv, &data[..len], &mut tb).unwrap();
                    evp_per_message::mac(alg, &key, &iv, &data[..len], &mut tc).unwrap();
                    assert_eq!(ta, tb, "{alg} key {kl} len {len}");
                    assert_eq!(ta, tc, "{alg} key {kl} len {len}");
                    b.verify(&iv, &data[..len], &ta).unwrap();
                    evp_per_message::mac_verify(alg, &key, &iv, &data[..len], &ta).unwrap();
                    ta[alg.tag_len() - 1] ^= 1;
                    assert_eq!(
                        b.verify(&iv, &data[..len], &ta),
                        Err(CryptoError::VerifyFailed)
                    );
                }
            }
        }
    }

    #[test]
    fn agrees_with_rustcrypto_on_gcm() {
        for alg in [EncAlgorithm::Aes128Gcm, EncAlgorithm::Aes256Gcm] {
            let key = vec![0x5cu8; alg.key_len()];
            let a = RustCryptoProvider.aead_key(alg, &key).unwrap();
            let b = OpensslProvider.aead_key(alg, &key).unwrap();
            for len in [0usize, 1, 16, 17, 300] {
                let pt: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let iv = [len as u8; 12];
                let (mut ca, mut cb, mut cc) = (pt.clone(), pt.clone(), pt.clone());
                let ta = a.seal_in_place(&iv, b"hdr", &mut ca).unwrap();
                let tb = b.seal_in_place(&iv, b"hdr", &mut cb).unwrap();
                let tc = evp_per_message::seal(alg, &key, &iv, b"hdr", &mut cc).unwrap();
                assert_eq!((&ca, ta), (&cb, tb));
                assert_eq!((&ca, ta), (&cc, tc));
                let mut bad = ta;
                bad[15] ^= 1;
                assert_eq!(
                    b.open_in_place(&iv, b"hdr", &mut cb, &bad),
                    Err(CryptoError::VerifyFailed)
                );
                assert_eq!(cb, ca, "failed open must leave the ciphertext");
                b.open_in_place(&iv, b"hdr", &mut cb, &ta[..12]).unwrap();
                assert_eq!(cb, pt);
                evp_per_message::open(alg, &key, &iv, b"hdr", &mut cc, &ta).unwrap();
                assert_eq!(cc, pt);
            }
        }
    }

    #[test]
    fn rejects_bad_lengths() {
        let p = OpensslProvider;
        assert!(matches!(
            p.mac_key(MacAlgorithm::AesGmac128, &[0; 17]),
            Err(CryptoError::BadKeyLength { .. })
        ));
        assert!(matches!(
            p.aead_key(EncAlgorithm::Aes256Gcm, &[0; 16]),
            Err(CryptoError::BadKeyLength { .. })
        ));
        let k = p.mac_key(MacAlgorithm::AesGmac128, &[0; 16]).unwrap();
        assert!(matches!(
            k.sign(&[0; 16], b"", &mut [0; 16]),
            Err(CryptoError::BadIvLength { .. })
        ));
        let mut out = [0u8; 16];
        assert!(matches!(
            evp_per_message::mac(MacAlgorithm::AesGmac128, &[0; 16], &[0; 8], b"", &mut out),
            Err(CryptoError::BadIvLength { .. })
        ));
        assert!(matches!(
            evp_per_message::seal(EncAlgorithm::Aes128Gcm, &[0; 15], &[0; 12], b"", &mut []),
            Err(CryptoError::BadKeyLength { .. })
        ));
        assert!(matches!(
            evp_per_message::open(
                EncAlgorithm::Aes128Gcm,
                &[0; 16],
                &[0; 12],
                b"",
                &mut [],
                &[0; 2]
            ),
            Err(CryptoError::BadTagLength { .. })
        ));
    }
}
