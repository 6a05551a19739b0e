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
//!
//! In the binary built with OpenSSL 3.5 (`openssl35` rows) the same code times ML-KEM-768
//! (`EVP_PKEY_encapsulate`/`EVP_PKEY_decapsulate`, the client's encapsulation key imported
//! anew for every encapsulation as a server receives it) and ML-DSA (`EVP_DigestSign` without
//! a digest, FIPS 204 pure mode, the mode TLS uses per draft-ietf-tls-mldsa).

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
        if input.spec.is_ml_dsa()
            && matches!(op, OpKind::Sign | OpKind::VerifyFresh | OpKind::VerifyCert)
        {
            return prepare_ml_dsa(op, input);
        }
        match op {
            OpKind::KemKeygen | OpKind::KemEncap | OpKind::KemDecap => prepare_kem(op),
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

/// An ML-KEM-768 key pair from OpenSSL's provider (OpenSSL 3.5 and later; 3.0 has no ML-KEM and
/// the floor then says `Unsupported`).
fn mlkem_key() -> Result<PKey<Private>, PrepError> {
    use foreign_types::ForeignType;
    // SAFETY: each call's result is checked before use; the context is freed on every path and
    // the generated key's ownership moves into a PKey.
    unsafe {
        let ctx = openssl_sys::EVP_PKEY_CTX_new_from_name(
            std::ptr::null_mut(),
            c"ML-KEM-768".as_ptr(),
            std::ptr::null(),
        );
        if ctx.is_null() {
            let _ = openssl::error::ErrorStack::get();
            return Err(PrepError::Unsupported(format!(
                "{} has no ML-KEM-768 (OpenSSL 3.5 has)",
                openssl::version::version()
            )));
        }
        let mut key: *mut openssl_sys::EVP_PKEY = std::ptr::null_mut();
        let ok = openssl_sys::EVP_PKEY_keygen_init(ctx) == 1
            && openssl_sys::EVP_PKEY_generate(ctx, &mut key) == 1
            && !key.is_null();
        openssl_sys::EVP_PKEY_CTX_free(ctx);
        if !ok {
            return Err(PrepError::Failed(OpError::Openssl(
                openssl::error::ErrorStack::get(),
            )));
        }
        Ok(PKey::from_ptr(key))
    }
}

/// The encapsulation key (FIPS 203 `ek`, 1184 bytes) of an ML-KEM-768 key, as it travels in the
/// client's key share.
fn mlkem_public_bytes(key: &PKeyRef<Private>) -> Result<Vec<u8>, OpError> {
    key.raw_public_key().map_err(e)
}

/// The server's half of ML-KEM in a handshake: import the client's encapsulation key (new in
/// every handshake) and encapsulate to it (FIPS 203 ML-KEM.Encaps). Returns the ciphertext.
fn mlkem_encapsulate(ek: &[u8]) -> Result<Vec<u8>, OpError> {
    use foreign_types::ForeignType;
    // SAFETY: `ek` is readable for its length; the imported key and the context are freed on
    // every path; output buffers are sized by the first (length-only) calls.
    unsafe {
        let pk = openssl_sys::EVP_PKEY_new_raw_public_key_ex(
            std::ptr::null_mut(),
            c"ML-KEM-768".as_ptr(),
            std::ptr::null(),
            ek.as_ptr(),
            ek.len(),
        );
        if pk.is_null() {
            return Err(OpError::Openssl(openssl::error::ErrorStack::get()));
        }
        let pk = PKey::<Public>::from_ptr(pk);
        let ctx = openssl_sys::EVP_PKEY_CTX_new(pk.as_ptr(), std::ptr::null_mut());
        if ctx.is_null() {
            return Err(OpError::Openssl(openssl::error::ErrorStack::get()));
        }
        let (mut ctlen, mut sslen) = (0usize, 0usize);
        let mut ok = openssl_sys::EVP_PKEY_encapsulate_init(ctx, std::ptr::null()) == 1
            && openssl_sys::EVP_PKEY_encapsulate(
                ctx,
                std::ptr::null_mut(),
                &mut ctlen,
                std::ptr::null_mut(),
                &mut sslen,
            ) == 1;
        let mut ct = vec![0u8; ctlen];
        let mut ss = vec![0u8; sslen];
        ok = ok
            && openssl_sys::EVP_PKEY_encapsulate(
                ctx,
                ct.as_mut_ptr(),
                &mut ctlen,
                ss.as_mut_ptr(),
                &mut sslen,
            ) == 1;
        openssl_sys::EVP_PKEY_CTX_free(ctx);
        if !ok {
            return Err(OpError::Openssl(openssl::error::ErrorStack::get()));
        }
        ct.truncate(ctlen);
        Ok(ct)
    }
}

/// The client's last ML-KEM step: decapsulate the server's ciphertext (FIPS 203 ML-KEM.Decaps).
fn mlkem_decapsulate(key: &PKeyRef<Private>, ct: &[u8]) -> Result<Vec<u8>, OpError> {
    use foreign_types::ForeignTypeRef;
    // SAFETY: `key` is a live ML-KEM key; `ct` is readable for its length; the context is
    // freed on every path; the output buffer is sized by the length-only call.
    unsafe {
        let ctx = openssl_sys::EVP_PKEY_CTX_new(key.as_ptr(), std::ptr::null_mut());
        if ctx.is_null() {
            return Err(OpError::Openssl(openssl::error::ErrorStack::get()));
        }
        let mut sslen = 0usize;
        let mut ok = openssl_sys::EVP_PKEY_decapsulate_init(ctx, std::ptr::null()) == 1
            && openssl_sys::EVP_PKEY_decapsulate(
                ctx,
                std::ptr::null_mut(),
                &mut sslen,
                ct.as_ptr(),
                ct.len(),
            ) == 1;
        let mut ss = vec![0u8; sslen];
        ok = ok
            && openssl_sys::EVP_PKEY_decapsulate(
                ctx,
                ss.as_mut_ptr(),
                &mut sslen,
                ct.as_ptr(),
                ct.len(),
            ) == 1;
        openssl_sys::EVP_PKEY_CTX_free(ctx);
        if !ok {
            return Err(OpError::Openssl(openssl::error::ErrorStack::get()));
        }
        ss.truncate(sslen);
        Ok(ss)
    }
}

/// ML-KEM-768 operations for [`Openssl::prepare`].
fn prepare_kem<'a>(op: OpKind) -> Result<Rep<'a>, PrepError> {
    let key = mlkem_key()?;
    let ek = mlkem_public_bytes(&key)?;
    match op {
        OpKind::KemKeygen => Ok(Box::new(|| {
            let k = mlkem_key().map_err(|p| match p {
                PrepError::Failed(e) => e,
                PrepError::Unsupported(_) => OpError::Check("ML-KEM-768 went away"),
            })?;
            mlkem_public_bytes(&k).map(|_| ())
        })),
        OpKind::KemEncap => Ok(Box::new(move || mlkem_encapsulate(&ek).map(|_| ()))),
        _ => {
            let ct = mlkem_encapsulate(&ek)?;
            Ok(Box::new(move || {
                mlkem_decapsulate(&key, &ct).map(|ss| {
                    debug_assert_eq!(ss.len(), 32);
                })
            }))
        }
    }
}

/// ML-DSA (pure, FIPS 204) signatures over the scenario's key, as OpenSSL 3.5's TLS code makes
/// and checks them (`EVP_DigestSign` without a digest).
fn prepare_ml_dsa<'a>(op: OpKind, input: &OpInput<'a>) -> Result<Rep<'a>, PrepError> {
    let msg = [0x5au8; 64];
    let key = load_key(input.key)?;
    match op {
        OpKind::Sign => Ok(Box::new(move || {
            let mut s = Signer::new_without_digest(&key).map_err(e)?;
            s.sign_oneshot_to_vec(&msg).map(|_| ()).map_err(e)
        })),
        _ => {
            let mut s = Signer::new_without_digest(&key).map_err(e)?;
            let sig = s.sign_oneshot_to_vec(&msg).map_err(e)?;
            let der = key.public_key_to_der().map_err(e)?;
            let kept = PKey::public_key_from_der(&der).map_err(e)?;
            let fresh = op == OpKind::VerifyFresh;
            Ok(Box::new(move || {
                // A key new in this handshake is decoded from its SubjectPublicKeyInfo (ML-DSA
                // keys have no components to rebuild them from).
                let fresh_key;
                let k: &PKeyRef<Public> = if fresh {
                    fresh_key = PKey::public_key_from_der(&der).map_err(e)?;
                    &fresh_key
                } else {
                    &kept
                };
                let mut v = Verifier::new_without_digest(k).map_err(e)?;
                if !v.verify_oneshot(&sig, &msg).map_err(e)? {
                    return Err(OpError::Check(
                        "floor: verification of own signature failed",
                    ));
                }
                Ok(())
            }))
        }
    }
}
