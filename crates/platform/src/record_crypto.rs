//! The record crypto of one report: the AEAD seal on the server and open on the client of a
//! record of the report's size, timed with the provider the row's library uses, in the same run
//! (`docs/measurement.md`, "RT accounting").
//!
//! A TLS 1.2 AEAD record (RFC 5246 §6.2.3.3, RFC 5288 for AES-GCM, RFC 7905 for
//! ChaCha20-Poly1305) is sealed once with 13 octets of additional data (sequence number, type,
//! version, length) and a per-record nonce; TLS 1.3 (RFC 8446 §5.2) seals the plaintext plus
//! one content-type octet with the 5-octet header as additional data. The key schedule is made
//! once per connection, so it is made once here too, and each timed operation sets only the
//! nonce, as the libraries do per record.
//!
//! Providers: rustls rows with *ring*, `rustls-awslc` rows with aws-lc-rs (the providers those
//! rows run on); OpenSSL rows with OpenSSL's EVP interface. GnuTLS uses nettle, which gander does
//! not bind: its rows are timed with OpenSSL's EVP as a stand-in (both use AES-NI and carry-less
//! multiplication on this CPU; `library` in the result says which provider was used). Suites
//! without an AEAD (CBC with HMAC, 3DES) are not split: their crypto stays in the library's part.
use gander_tls::BackendKind;
use std::time::Instant;

/// Additional data of a TLS 1.2 AEAD record (RFC 5246 §6.2.3.3).
const AAD_LEN: usize = 13;

/// The AEAD a suite's records use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aead {
    /// AES-128-GCM (RFC 5288, RFC 8446 `TLS_AES_128_GCM_SHA256`).
    Aes128Gcm,
    /// AES-256-GCM.
    Aes256Gcm,
    /// ChaCha20-Poly1305 (RFC 7905, RFC 8446).
    Chacha20Poly1305,
}

impl Aead {
    /// The AEAD of an IANA suite name, `None` for suites that are not AEAD.
    pub fn of_suite(name: &str) -> Option<Aead> {
        if name.contains("AES_128_GCM") {
            Some(Aead::Aes128Gcm)
        } else if name.contains("AES_256_GCM") {
            Some(Aead::Aes256Gcm)
        } else if name.contains("CHACHA20_POLY1305") {
            Some(Aead::Chacha20Poly1305)
        } else {
            None
        }
    }
    fn key_len(self) -> usize {
        match self {
            Aead::Aes128Gcm => 16,
            _ => 32,
        }
    }
}

/// Why the record crypto could not be timed.
#[derive(Debug, thiserror::Error)]
pub enum RecordCryptoError {
    /// OpenSSL refused an operation.
    #[error("record crypto with OpenSSL")]
    Openssl(#[from] openssl::error::ErrorStack),
    /// *ring* or aws-lc-rs refused an operation (they give no detail).
    #[error("record crypto with {0}: the AEAD operation failed")]
    Provider(&'static str),
    /// The opened record is not what was sealed.
    #[error("record crypto with {0}: the opened record differs from the sealed one")]
    Mismatch(&'static str),
}

/// One record size's seal + open, timed.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordCrypto {
    /// The provider that was timed (`OpenSSL EVP`, `ring`, `aws-lc-rs`).
    pub library: &'static str,
    /// Median seal + open of one record, ns.
    pub ns: u64,
    /// Operations timed.
    pub n: usize,
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
}

/// Times `n` seal + open pairs of `bytes` octets with `aead`, after `warmup` untimed, with the
/// provider of `backend`.
pub fn measure(
    backend: BackendKind,
    aead: Aead,
    bytes: usize,
    warmup: usize,
    n: usize,
) -> Result<RecordCrypto, RecordCryptoError> {
    let library = provider(backend);
    let mut op: Box<dyn FnMut(u64) -> Result<(), RecordCryptoError>> = match library {
        "ring" => Box::new(ring_op(aead, bytes)?),
        "aws-lc-rs" => Box::new(awslc_op(aead, bytes)?),
        _ => Box::new(openssl_op(aead, bytes)?),
    };
    let mut times = Vec::with_capacity(n);
    for i in 0..(warmup + n) as u64 {
        let t = Instant::now();
        op(i)?;
        let d = t.elapsed().as_nanos() as u64;
        if i >= warmup as u64 {
            times.push(d);
        }
    }
    Ok(RecordCrypto {
        library,
        ns: median(times),
        n,
    })
}

/// The provider whose AEAD a backend's records use (GnuTLS: OpenSSL as the stand-in).
pub fn provider(backend: BackendKind) -> &'static str {
    match backend {
        BackendKind::Rustls => "ring",
        BackendKind::RustlsAwslc => "aws-lc-rs",
        BackendKind::Openssl | BackendKind::Openssl35 | BackendKind::Gnutls => "OpenSSL EVP",
    }
}

/// The per-record nonce: 12 octets, the record number in the last 8 (RFC 8446 §5.3 style).
fn nonce(i: u64) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&i.to_be_bytes());
    n
}

fn aad(i: u64, bytes: usize) -> [u8; AAD_LEN] {
    let mut a = [0u8; AAD_LEN];
    a[..8].copy_from_slice(&i.to_be_bytes());
    a[8] = 23; // application_data
    a[9..11].copy_from_slice(&[3, 3]);
    a[11..].copy_from_slice(&(bytes.min(u16::MAX as usize) as u16).to_be_bytes());
    a
}

fn openssl_op(
    aead: Aead,
    bytes: usize,
) -> Result<impl FnMut(u64) -> Result<(), RecordCryptoError>, RecordCryptoError> {
    use openssl::cipher::Cipher;
    use openssl::cipher_ctx::CipherCtx;
    let cipher = match aead {
        Aead::Aes128Gcm => Cipher::aes_128_gcm(),
        Aead::Aes256Gcm => Cipher::aes_256_gcm(),
        Aead::Chacha20Poly1305 => Cipher::chacha20_poly1305(),
    };
    let key = vec![0x42u8; aead.key_len()];
    // One context per direction, keyed once: per record only the nonce changes.
    let mut enc = CipherCtx::new()?;
    enc.encrypt_init(Some(cipher), Some(&key), None)?;
    let mut dec = CipherCtx::new()?;
    dec.decrypt_init(Some(cipher), Some(&key), None)?;
    let plain: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
    let mut ct = vec![0u8; bytes + 16];
    let mut pt = vec![0u8; bytes + 16];
    let mut tag = [0u8; 16];
    Ok(move |i: u64| {
        let (n, a) = (nonce(i), aad(i, bytes));
        enc.encrypt_init(None, None, Some(&n))?;
        enc.cipher_update(&a, None)?;
        let k = enc.cipher_update(&plain, Some(&mut ct))?;
        enc.cipher_final(&mut ct[k..])?;
        enc.tag(&mut tag)?;
        dec.decrypt_init(None, None, Some(&n))?;
        dec.cipher_update(&a, None)?;
        let k = dec.cipher_update(&ct[..bytes], Some(&mut pt))?;
        dec.set_tag(&tag)?;
        dec.cipher_final(&mut pt[k..])?;
        if pt[..bytes] != plain[..] {
            return Err(RecordCryptoError::Mismatch("OpenSSL EVP"));
        }
        Ok(())
    })
}

/// One seal-and-open closure over a ring-shaped AEAD API: ring and aws-lc-rs expose the same
/// `LessSafeKey` interface under different types, so one body serves both.
macro_rules! less_safe_key_op {
    ($fn_name:ident, $krate:ident, $label:literal) => {
        fn $fn_name(
            aead: Aead,
            bytes: usize,
        ) -> Result<impl FnMut(u64) -> Result<(), RecordCryptoError>, RecordCryptoError> {
            use $krate::aead::{self as ka, Aad, LessSafeKey, Nonce, UnboundKey};
            let alg = match aead {
                Aead::Aes128Gcm => &ka::AES_128_GCM,
                Aead::Aes256Gcm => &ka::AES_256_GCM,
                Aead::Chacha20Poly1305 => &ka::CHACHA20_POLY1305,
            };
            let fail = || RecordCryptoError::Provider($label);
            let key = vec![0x42u8; aead.key_len()];
            let k = LessSafeKey::new(UnboundKey::new(alg, &key).map_err(|_| fail())?);
            let plain: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
            let mut buf = Vec::with_capacity(bytes + 16);
            Ok(move |i: u64| {
                let a = aad(i, bytes);
                buf.clear();
                buf.extend_from_slice(&plain);
                let tag = k
                    .seal_in_place_separate_tag(
                        Nonce::assume_unique_for_key(nonce(i)),
                        Aad::from(a),
                        &mut buf,
                    )
                    .map_err(|_| fail())?;
                buf.extend_from_slice(tag.as_ref());
                let opened = k
                    .open_in_place(
                        Nonce::assume_unique_for_key(nonce(i)),
                        Aad::from(a),
                        &mut buf,
                    )
                    .map_err(|_| fail())?;
                if opened != &plain[..] {
                    return Err(RecordCryptoError::Mismatch($label));
                }
                Ok(())
            })
        }
    };
}

less_safe_key_op!(ring_op, ring, "ring");
less_safe_key_op!(awslc_op, aws_lc_rs, "aws-lc-rs");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_map_to_their_aead() {
        assert_eq!(
            Aead::of_suite("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            Some(Aead::Aes128Gcm)
        );
        assert_eq!(
            Aead::of_suite("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
            Some(Aead::Aes256Gcm)
        );
        assert_eq!(
            Aead::of_suite("TLS_CHACHA20_POLY1305_SHA256"),
            Some(Aead::Chacha20Poly1305)
        );
        assert_eq!(Aead::of_suite("TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA"), None);
        assert_eq!(Aead::of_suite("TLS_RSA_WITH_AES_128_CBC_SHA256"), None);
    }

    #[test]
    fn every_provider_seals_and_opens_every_aead() {
        for b in [
            BackendKind::Openssl,
            BackendKind::Gnutls,
            BackendKind::Rustls,
            BackendKind::RustlsAwslc,
        ] {
            for a in [Aead::Aes128Gcm, Aead::Aes256Gcm, Aead::Chacha20Poly1305] {
                for bytes in [1, 200, 16_384] {
                    let r =
                        measure(b, a, bytes, 2, 20).unwrap_or_else(|e| panic!("{b} {a:?}: {e}"));
                    assert_eq!(r.n, 20);
                    assert!(r.ns > 0, "{b} {a:?} {bytes}");
                    assert_eq!(r.library, provider(b));
                }
            }
        }
    }
}
