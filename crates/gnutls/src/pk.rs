//! Private and public keys and X.509 certificates through GnuTLS's public API
//! (`<gnutls/abstract.h>`, `<gnutls/x509.h>`): signing, verification, RSA key transport and
//! certificate decoding.

use crate::sys::{self, gnutls_privkey_t, gnutls_pubkey_t, gnutls_x509_crt_t};
use crate::tls::X509Format;
use crate::{check, datum, init, GnutlsError, OwnedDatum};
use std::mem::MaybeUninit;
use std::os::raw::c_int;

/// A signature algorithm (`gnutls_sign_algorithm_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignAlgorithm {
    /// RSA PKCS#1 v1.5 with SHA-256.
    RsaSha256,
    /// RSA-PSS (rsaEncryption key) with SHA-256.
    RsaPssRsaeSha256,
    /// ECDSA with SHA-256.
    EcdsaSha256,
    /// ECDSA with SHA-384.
    EcdsaSha384,
}

impl SignAlgorithm {
    fn raw(self) -> c_int {
        match self {
            SignAlgorithm::RsaSha256 => sys::GNUTLS_SIGN_RSA_SHA256,
            SignAlgorithm::RsaPssRsaeSha256 => sys::GNUTLS_SIGN_RSA_PSS_RSAE_SHA256,
            SignAlgorithm::EcdsaSha256 => sys::GNUTLS_SIGN_ECDSA_SHA256,
            SignAlgorithm::EcdsaSha384 => sys::GNUTLS_SIGN_ECDSA_SHA384,
        }
    }
}

/// The public-key algorithm of a key (`gnutls_pk_algorithm_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PkAlgorithm {
    /// RSA.
    Rsa,
    /// ECDSA (any curve).
    Ecdsa,
    /// Another algorithm, by its GnuTLS number.
    Other(i32),
}

/// An elliptic curve as GnuTLS numbers it (`gnutls_ecc_curve_t`), as exported from a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcCurve(c_int);

/// A private key (`gnutls_privkey_t`), freed when dropped.
pub struct Privkey(gnutls_privkey_t);

impl Drop for Privkey {
    fn drop(&mut self) {
        // SAFETY: a key from gnutls_privkey_init, deinitialised once.
        unsafe { sys::gnutls_privkey_deinit(self.0) }
    }
}

impl Privkey {
    /// Imports a PEM key without password, PKCS#8 or traditional
    /// (`gnutls_privkey_import_x509_raw`).
    pub fn from_pem(pem: &[u8]) -> Result<Self, GnutlsError> {
        init();
        let mut raw: gnutls_privkey_t = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; owned by `Privkey` from here on.
        check("gnutls_privkey_init", unsafe {
            sys::gnutls_privkey_init(&mut raw)
        })?;
        let key = Privkey(raw);
        let d = datum(pem)?;
        // SAFETY: a live key and a datum over `pem`, which outlives the call; no password.
        let r = unsafe {
            sys::gnutls_privkey_import_x509_raw(
                key.0,
                &d,
                sys::GNUTLS_X509_FMT_PEM,
                std::ptr::null(),
                0,
            )
        };
        check("gnutls_privkey_import_x509_raw", r)?;
        Ok(key)
    }

    /// The key's algorithm (`gnutls_privkey_get_pk_algorithm`).
    pub fn algorithm(&self) -> PkAlgorithm {
        // SAFETY: a live key; `bits` may be NULL.
        match unsafe { sys::gnutls_privkey_get_pk_algorithm(self.0, std::ptr::null_mut()) } {
            sys::GNUTLS_PK_RSA => PkAlgorithm::Rsa,
            sys::GNUTLS_PK_ECDSA => PkAlgorithm::Ecdsa,
            n => PkAlgorithm::Other(n),
        }
    }

    /// Signs `msg` (`gnutls_privkey_sign_data2`).
    pub fn sign(&self, algo: SignAlgorithm, msg: &[u8]) -> Result<Vec<u8>, GnutlsError> {
        let d = datum(msg)?;
        let mut sig = OwnedDatum::empty();
        // SAFETY: a live key, a datum over `msg`, and an out-datum owned (and freed) by `sig`.
        let r = unsafe { sys::gnutls_privkey_sign_data2(self.0, algo.raw(), 0, &d, &mut sig.0) };
        check("gnutls_privkey_sign_data2", r)?;
        Ok(sig.as_slice().to_vec())
    }

    /// PKCS#1 v1.5 decryption into `out`, whose length is the expected plaintext length
    /// (`gnutls_privkey_decrypt_data2`, constant time).
    pub fn decrypt(&self, ct: &[u8], out: &mut [u8]) -> Result<(), GnutlsError> {
        let d = datum(ct)?;
        // SAFETY: a live key, a datum over `ct`, and `out.len()` writable bytes.
        let r = unsafe {
            sys::gnutls_privkey_decrypt_data2(self.0, 0, &d, out.as_mut_ptr(), out.len())
        };
        check("gnutls_privkey_decrypt_data2", r).map(drop)
    }
}

/// A public key (`gnutls_pubkey_t`), freed when dropped.
pub struct Pubkey(gnutls_pubkey_t);

impl Drop for Pubkey {
    fn drop(&mut self) {
        // SAFETY: a key from gnutls_pubkey_init, deinitialised once.
        unsafe { sys::gnutls_pubkey_deinit(self.0) }
    }
}

impl Pubkey {
    /// An empty key (`gnutls_pubkey_init`).
    fn new() -> Result<Self, GnutlsError> {
        init();
        let mut raw: gnutls_pubkey_t = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; owned by `Pubkey` from here on.
        check("gnutls_pubkey_init", unsafe {
            sys::gnutls_pubkey_init(&mut raw)
        })?;
        Ok(Pubkey(raw))
    }

    /// The public half of `key` (`gnutls_pubkey_import_privkey`).
    pub fn from_privkey(key: &Privkey) -> Result<Self, GnutlsError> {
        let k = Pubkey::new()?;
        // SAFETY: two live keys; the public key copies what it needs.
        let r = unsafe { sys::gnutls_pubkey_import_privkey(k.0, key.0, 0, 0) };
        check("gnutls_pubkey_import_privkey", r)?;
        Ok(k)
    }

    /// A new RSA key from its modulus and exponent, big-endian (`gnutls_pubkey_init` +
    /// `gnutls_pubkey_import_rsa_raw`).
    pub fn from_rsa_raw(m: &[u8], e: &[u8]) -> Result<Self, GnutlsError> {
        let k = Pubkey::new()?;
        let (m, e) = (datum(m)?, datum(e)?);
        // SAFETY: a live key and datums over live slices; GnuTLS copies them.
        let r = unsafe { sys::gnutls_pubkey_import_rsa_raw(k.0, &m, &e) };
        check("gnutls_pubkey_import_rsa_raw", r)?;
        Ok(k)
    }

    /// A new EC key from its curve and point coordinates, big-endian (`gnutls_pubkey_init` +
    /// `gnutls_pubkey_import_ecc_raw`).
    pub fn from_ecc_raw(curve: EcCurve, x: &[u8], y: &[u8]) -> Result<Self, GnutlsError> {
        let k = Pubkey::new()?;
        let (x, y) = (datum(x)?, datum(y)?);
        // SAFETY: a live key and datums over live slices; GnuTLS copies them.
        let r = unsafe { sys::gnutls_pubkey_import_ecc_raw(k.0, curve.0, &x, &y) };
        check("gnutls_pubkey_import_ecc_raw", r)?;
        Ok(k)
    }

    /// An RSA key's modulus and exponent, big-endian (`gnutls_pubkey_export_rsa_raw2`).
    pub fn rsa_raw(&self) -> Result<(Vec<u8>, Vec<u8>), GnutlsError> {
        let (mut m, mut e) = (OwnedDatum::empty(), OwnedDatum::empty());
        // SAFETY: a live key and out-datums owned (and freed) by `m` and `e`.
        let r = unsafe { sys::gnutls_pubkey_export_rsa_raw2(self.0, &mut m.0, &mut e.0, 0) };
        check("gnutls_pubkey_export_rsa_raw2", r)?;
        Ok((m.as_slice().to_vec(), e.as_slice().to_vec()))
    }

    /// An EC key's curve and point coordinates, big-endian (`gnutls_pubkey_export_ecc_raw2`).
    pub fn ecc_raw(&self) -> Result<(EcCurve, Vec<u8>, Vec<u8>), GnutlsError> {
        let (mut x, mut y) = (OwnedDatum::empty(), OwnedDatum::empty());
        let mut curve: c_int = 0;
        // SAFETY: a live key, an out-int and out-datums owned (and freed) by `x` and `y`.
        let r = unsafe {
            sys::gnutls_pubkey_export_ecc_raw2(self.0, &mut curve, &mut x.0, &mut y.0, 0)
        };
        check("gnutls_pubkey_export_ecc_raw2", r)?;
        Ok((EcCurve(curve), x.as_slice().to_vec(), y.as_slice().to_vec()))
    }

    /// Verifies `sig` over `msg` (`gnutls_pubkey_verify_data2`); a bad signature is an error
    /// ([`crate::code::PK_SIG_VERIFY_FAILED`]).
    pub fn verify(&self, algo: SignAlgorithm, msg: &[u8], sig: &[u8]) -> Result<(), GnutlsError> {
        let (d, s) = (datum(msg)?, datum(sig)?);
        // SAFETY: a live key and two datums over live slices.
        let r = unsafe { sys::gnutls_pubkey_verify_data2(self.0, algo.raw(), 0, &d, &s) };
        check("gnutls_pubkey_verify_data2", r).map(drop)
    }

    /// PKCS#1 v1.5 encryption (`gnutls_pubkey_encrypt_data`).
    pub fn encrypt(&self, pt: &[u8]) -> Result<Vec<u8>, GnutlsError> {
        let d = datum(pt)?;
        let mut ct = OwnedDatum::empty();
        // SAFETY: a live key, a datum over `pt`, and an out-datum owned (and freed) by `ct`.
        let r = unsafe { sys::gnutls_pubkey_encrypt_data(self.0, 0, &d, &mut ct.0) };
        check("gnutls_pubkey_encrypt_data", r)?;
        Ok(ct.as_slice().to_vec())
    }
}

/// An X.509 certificate (`gnutls_x509_crt_t`), freed when dropped.
pub struct X509Crt(gnutls_x509_crt_t);

impl Drop for X509Crt {
    fn drop(&mut self) {
        // SAFETY: a certificate from gnutls_x509_crt_init, deinitialised once.
        unsafe { sys::gnutls_x509_crt_deinit(self.0) }
    }
}

impl X509Crt {
    /// Decodes a certificate (`gnutls_x509_crt_init` + `gnutls_x509_crt_import`).
    pub fn import(data: &[u8], format: X509Format) -> Result<Self, GnutlsError> {
        init();
        let mut raw: gnutls_x509_crt_t = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; owned by `X509Crt` from here on.
        check("gnutls_x509_crt_init", unsafe {
            sys::gnutls_x509_crt_init(&mut raw)
        })?;
        let crt = X509Crt(raw);
        let d = datum(data)?;
        // SAFETY: a live certificate and a datum over `data`.
        let r = unsafe { sys::gnutls_x509_crt_import(crt.0, &d, format.raw()) };
        check("gnutls_x509_crt_import", r)?;
        Ok(crt)
    }

    /// The certificate, DER (`gnutls_x509_crt_export2`).
    pub fn to_der(&self) -> Result<Vec<u8>, GnutlsError> {
        let mut der = OwnedDatum::empty();
        // SAFETY: a live certificate and an out-datum owned (and freed) by `der`.
        let r =
            unsafe { sys::gnutls_x509_crt_export2(self.0, sys::GNUTLS_X509_FMT_DER, &mut der.0) };
        check("gnutls_x509_crt_export2", r)?;
        Ok(der.as_slice().to_vec())
    }
}

/// Decodes a DER certificate into a `gnutls_pcert_st` and frees it again
/// (`gnutls_pcert_import_x509_raw`, `gnutls_pcert_deinit`): what a handshake does with the
/// peer's leaf.
pub fn import_pcert(der: &[u8]) -> Result<(), GnutlsError> {
    init();
    let d = datum(der)?;
    let mut pcert = MaybeUninit::<sys::gnutls_pcert_st>::zeroed();
    // SAFETY: `pcert` is writable storage for a gnutls_pcert_st, which the call initialises; on
    // failure GnuTLS leaves nothing allocated in it.
    let r = unsafe {
        sys::gnutls_pcert_import_x509_raw(pcert.as_mut_ptr(), &d, sys::GNUTLS_X509_FMT_DER, 0)
    };
    check("gnutls_pcert_import_x509_raw", r)?;
    // SAFETY: a pcert the import above filled, deinitialised once.
    unsafe { sys::gnutls_pcert_deinit(pcert.as_mut_ptr()) };
    Ok(())
}
