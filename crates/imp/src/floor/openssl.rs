//! Floor operations timed with OpenSSL (the `openssl` crate), as gander's OpenSSL backend
//! performs them: `EVP_DigestSign`/`EVP_DigestVerify` over 64 bytes, RSA-PSS (SHA-256) at TLS
//! 1.2/1.3 (what OpenSSL 3.0 negotiates for RSA keys, `rsa_pss_rsae_sha256`), PKCS#1 v1.5
//! below; `EVP_PKEY_keygen`/`EVP_PKEY_derive` for X25519 and P-256; DHE over the RFC 5114
//! §2.3 2048-bit group with its 256-bit subgroup (the exponent size OpenSSL uses for ffdhe2048).
//! Also the fallback for operations another library has no public interface for.

use super::{FloorLib, Group, OpInput, OpKind, PrepError, Rep};
use openssl::derive::Deriver;
use openssl::dh::Dh;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, PKeyRef, Private, Public};
use openssl::rsa::{Padding, Rsa};
use openssl::sign::{Signer, Verifier};
use std::path::Path;

/// OpenSSL, the library the `openssl` backend links.
pub struct Openssl;

fn e(x: openssl::error::ErrorStack) -> String {
    x.to_string()
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
        "DH-2048/256".into()
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
                    .map_err(|x| format!("{}: {x}", input.cert.display()))?;
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
                        return Err("floor: verification of own signature failed".into());
                    }
                    Ok(())
                }))
            }
            OpKind::PremasterDecrypt | OpKind::PremasterEncrypt => {
                let key = load_key(input.key)?;
                let rsa = key
                    .rsa()
                    .map_err(|_| PrepError::Failed("RSA key transport needs an RSA key".into()))?;
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
            OpKind::Keygen(Group::Dh2048) => Ok(Box::new(|| {
                Dh::get_2048_256()
                    .map_err(e)?
                    .generate_key()
                    .map(|_| ())
                    .map_err(e)
            })),
            OpKind::Derive(Group::Dh2048) => {
                let mine = Dh::get_2048_256().map_err(e)?.generate_key().map_err(e)?;
                let peer = Dh::get_2048_256().map_err(e)?.generate_key().map_err(e)?;
                let peer_pub = peer.public_key().to_owned().map_err(e)?;
                Ok(Box::new(move || {
                    mine.compute_key(&peer_pub).map(|_| ()).map_err(e)
                }))
            }
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|x| format!("cannot read {}: {x}", path.display()))
}

/// The scenario's private key.
pub(super) fn load_key(path: &Path) -> Result<PKey<Private>, String> {
    PKey::private_key_from_pem(&read(path)?).map_err(|x| format!("{}: {x}", path.display()))
}

/// The public half of `key`, rebuilt from its components (RSA n and e, the EC point): a key as
/// new to the library as one that just arrived in a certificate, without the generic decoder.
fn fresh_public(key: &PKey<Private>) -> Result<PKey<Public>, String> {
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
