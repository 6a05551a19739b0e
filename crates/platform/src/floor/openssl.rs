//! Floor operations timed with OpenSSL (the `openssl` crate), as gander's OpenSSL backend
//! performs them: `EVP_DigestSign`/`EVP_DigestVerify` over 64 bytes, RSA-PSS (SHA-256) at TLS
//! 1.2/1.3 (what OpenSSL 3.0 negotiates for RSA keys, `rsa_pss_rsae_sha256`), PKCS#1 v1.5
//! below; `EVP_PKEY_keygen`/`EVP_PKEY_derive` for X25519 and P-256 (`EVP_PKEY_derive_set_peer`
//! validates the peer's key, as `ssl_derive` does).
//!
//! DHE: with `SSL_CTX_set_dh_auto` and a 112-bit-security key (RSA-2048) OpenSSL 3.0 sends the
//! RFC 3526 2048-bit MODP group (group 14; seen in a ServerKeyExchange from `openssl s_server`,
//! whose prime starts C90FDAA2 2168C234). OpenSSL knows it by name (`modp_2048`, q = (p-1)/2),
//! draws 224-bit private exponents for it, and on derivation checks the peer's value against q:
//! a full-length exponentiation, 1.8 ms of a 2.0 ms derivation here, which the TLS code pays on
//! both sides (`EVP_PKEY_derive_set_peer` validates). Both are timed as the handshake does them.
//! Also the fallback for operations another library has no public interface for.

use super::{FloorLib, Group, OpError, OpInput, OpKind, PrepError, Rep};
use openssl::derive::Deriver;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, PKeyRef, Private, Public};
use openssl::rsa::{Padding, Rsa};
use openssl::sign::{Signer, Verifier};
use std::path::Path;

/// OpenSSL, the library the `openssl` backend links.
pub struct Openssl;

fn e(x: openssl::error::ErrorStack) -> OpError {
    OpError::Openssl(x)
}

impl FloorLib for Openssl {
    fn id(&self) -> &'static str {
        "openssl"
    }
    fn name(&self) -> String {
        openssl::version::version().to_string()
    }
    fn ecdh_group(&self) -> Group {
        Group::X25519
    }
    fn dh_name(&self) -> String {
        "modp2048/224".into()
    }

    fn prepare<'a>(&'a self, op: OpKind, input: &OpInput<'a>) -> Result<Rep<'a>, PrepError> {
        let msg = [0x5au8; 64];
        let md = if input.spec == gander_tls::pki::KeySpec::P384 {
            MessageDigest::sha384()
        } else {
            MessageDigest::sha256()
        };
        let pss = input.pss;
        match op {
            OpKind::DecodeCert => {
                let pem = read(input.cert)?;
                let der = openssl::x509::X509::from_pem(&pem)
                    .and_then(|c| c.to_der())
                    .map_err(|source| OpError::Decode {
                        path: input.cert.to_path_buf(),
                        source,
                    })?;
                Ok(Box::new(move || {
                    openssl::x509::X509::from_der(&der).map(|_| ()).map_err(e)
                }))
            }
            OpKind::Sign => {
                let key = load_key(input.key)?;
                Ok(Box::new(move || {
                    let mut s = Signer::new(md, &key).map_err(e)?;
                    if pss {
                        s.set_rsa_padding(Padding::PKCS1_PSS).map_err(e)?;
                    }
                    s.update(&msg).map_err(e)?;
                    s.sign_to_vec().map_err(e)?;
                    Ok(())
                }))
            }
            OpKind::VerifyFresh | OpKind::VerifyCert => {
                let key = load_key(input.key)?;
                // Certificate signatures are PKCS#1 v1.5 (sha256WithRSAEncryption).
                let pss = pss && op == OpKind::VerifyFresh;
                let mut s = Signer::new(md, &key).map_err(e)?;
                if pss {
                    s.set_rsa_padding(Padding::PKCS1_PSS).map_err(e)?;
                }
                s.update(&msg).map_err(e)?;
                let sig = s.sign_to_vec().map_err(e)?;
                let public = fresh_public(&key)?;
                let fresh = op == OpKind::VerifyFresh;
                Ok(Box::new(move || {
                    let fresh_key;
                    let k: &PKeyRef<_> = if fresh {
                        fresh_key = fresh_public(&key)?;
                        &fresh_key
                    } else {
                        public.as_ref()
                    };
                    let mut v = Verifier::new(md, k).map_err(e)?;
                    if pss {
                        v.set_rsa_padding(Padding::PKCS1_PSS).map_err(e)?;
                    }
                    v.update(&msg).map_err(e)?;
                    if !v.verify(&sig).map_err(e)? {
                        return Err(OpError::Check(
                            "floor: verification of own signature failed",
                        ));
                    }
                    Ok(())
                }))
            }
            OpKind::PremasterDecrypt | OpKind::PremasterEncrypt => {
                let key = load_key(input.key)?;
                let rsa = key.rsa().map_err(|_| {
                    PrepError::Failed(OpError::Check("RSA key transport needs an RSA key"))
                })?;
                let mut ct = vec![0u8; rsa.size() as usize];
                let pm = [3u8; 48];
                let n = rsa
                    .public_encrypt(&pm, &mut ct, Padding::PKCS1)
                    .map_err(e)?;
                ct.truncate(n);
                let encrypt = op == OpKind::PremasterEncrypt;
                Ok(Box::new(move || {
                    let mut buf = vec![0u8; rsa.size() as usize];
                    if encrypt {
                        // The server's key is new to the client in every handshake.
                        let fresh = Rsa::from_public_components(
                            rsa.n().to_owned().map_err(e)?,
                            rsa.e().to_owned().map_err(e)?,
                        )
                        .map_err(e)?;
                        fresh
                            .public_encrypt(&pm, &mut buf, Padding::PKCS1)
                            .map_err(e)?;
                    } else {
                        rsa.private_decrypt(&ct, &mut buf, Padding::PKCS1)
                            .map_err(e)?;
                    }
                    Ok(())
                }))
            }
            OpKind::Keygen(Group::X25519) => {
                Ok(Box::new(|| PKey::generate_x25519().map(|_| ()).map_err(e)))
            }
            OpKind::Derive(Group::X25519) => {
                let peer = PKey::generate_x25519().map_err(e)?;
                let peer_pub = PKey::public_key_from_raw_bytes(
                    &peer.raw_public_key().map_err(e)?,
                    openssl::pkey::Id::X25519,
                )
                .map_err(e)?;
                let mine = PKey::generate_x25519().map_err(e)?;
                Ok(Box::new(move || {
                    let mut d = Deriver::new(&mine).map_err(e)?;
                    d.set_peer(&peer_pub).map_err(e)?;
                    d.derive_to_vec().map(|_| ()).map_err(e)
                }))
            }
            OpKind::Keygen(Group::P256) => {
                let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(e)?;
                Ok(Box::new(move || EcKey::generate(&g).map(|_| ()).map_err(e)))
            }
            OpKind::Derive(Group::P256) => {
                let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(e)?;
                let mine = PKey::from_ec_key(EcKey::generate(&g).map_err(e)?).map_err(e)?;
                let peer = EcKey::generate(&g).map_err(e)?;
                let peer_pub =
                    PKey::from_ec_key(EcKey::from_public_key(&g, peer.public_key()).map_err(e)?)
                        .map_err(e)?;
                Ok(Box::new(move || {
                    let mut d = Deriver::new(&mine).map_err(e)?;
                    d.set_peer(&peer_pub).map_err(e)?;
                    d.derive_to_vec().map(|_| ()).map_err(e)
                }))
            }
            OpKind::Keygen(Group::Dh2048) => {
                dh_key()?; // fail here, not in the timed loop
                Ok(Box::new(|| dh_key().map(|_| ())))
            }
            OpKind::Derive(Group::Dh2048) => {
                let mine = dh_key()?;
                let peer = dh_key()?;
                let peer_pub = peer_public(&peer)?;
                Ok(Box::new(move || {
                    // set_peer validates the peer's value as ssl_derive does: with q known
                    // that is a full-length exponentiation, the larger part of the cost.
                    let mut d = Deriver::new(&mine).map_err(e)?;
                    d.set_peer(&peer_pub).map_err(e)?;
                    d.derive_to_vec().map(|_| ()).map_err(e)
                }))
            }
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, OpError> {
    std::fs::read(path).map_err(|source| OpError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The scenario's private key.
pub(super) fn load_key(path: &Path) -> Result<PKey<Private>, OpError> {
    PKey::private_key_from_pem(&read(path)?).map_err(|source| OpError::Decode {
        path: path.to_path_buf(),
        source,
    })
}

/// The public half of `key`, rebuilt from its components (RSA n and e, the EC point): a key as
/// new to the library as one that just arrived in a certificate, without the generic decoder.
fn fresh_public(key: &PKey<Private>) -> Result<PKey<Public>, OpError> {
    if let Ok(rsa) = key.rsa() {
        let r = Rsa::from_public_components(
            rsa.n().to_owned().map_err(e)?,
            rsa.e().to_owned().map_err(e)?,
        )
        .map_err(e)?;
        return PKey::from_rsa(r).map_err(e);
    }
    let ec = key.ec_key().map_err(e)?;
    let k = EcKey::from_public_key(ec.group(), ec.public_key()).map_err(e)?;
    PKey::from_ec_key(k).map_err(e)
}

extern "C" {
    // OpenSSL >= 3.0; not bound by openssl-sys.
    fn EVP_PKEY_CTX_set_group_name(
        ctx: *mut openssl_sys::EVP_PKEY_CTX,
        name: *const std::os::raw::c_char,
    ) -> std::os::raw::c_int;
}

/// A fresh key pair in OpenSSL's named `modp_2048` group (RFC 3526 group 14), what a TLS 1.2
/// DHE handshake of OpenSSL 3.0 with an RSA-2048 key generates on each side.
fn dh_key() -> Result<PKey<Private>, OpError> {
    use foreign_types::ForeignType;
    // SAFETY: each call's result is checked before use; the context is freed on every path and
    // the generated key's ownership moves into a PKey.
    unsafe {
        let ctx = openssl_sys::EVP_PKEY_CTX_new_from_name(
            std::ptr::null_mut(),
            c"DH".as_ptr(),
            std::ptr::null(),
        );
        if ctx.is_null() {
            return Err(OpError::Openssl(openssl::error::ErrorStack::get()));
        }
        let mut key: *mut openssl_sys::EVP_PKEY = std::ptr::null_mut();
        let ok = openssl_sys::EVP_PKEY_keygen_init(ctx) == 1
            && EVP_PKEY_CTX_set_group_name(ctx, c"modp_2048".as_ptr()) == 1
            && openssl_sys::EVP_PKEY_generate(ctx, &mut key) == 1
            && !key.is_null();
        openssl_sys::EVP_PKEY_CTX_free(ctx);
        if !ok {
            return Err(OpError::Openssl(openssl::error::ErrorStack::get()));
        }
        Ok(PKey::from_ptr(key))
    }
}

/// The public half of a DH key as the peer receives it (parameters and public value only).
fn peer_public(key: &PKey<Private>) -> Result<PKey<Public>, OpError> {
    let der = key.public_key_to_der().map_err(e)?;
    PKey::public_key_from_der(&der).map_err(e)
}
