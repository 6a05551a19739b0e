//! The handshake floor: what a handshake's public-key operations cost on this machine, measured
//! in the same run as the handshakes (`docs/design.md`, "How results are measured").
//!
//! HT can never be below the sum of its public-key operations; HT divided by that sum says how
//! much the stack, the record layer, the kernel and the scheduler add. The count per full
//! handshake, with IEC 62351-3's mandatory mutual authentication and a one-level chain (the lab
//! PKI: CA → leaf, same key type), is:
//!
//! | key exchange | signatures | verifications with a peer key new in this handshake | certificate signatures (CA key, kept in the trust store) | key agreement |
//! |---|---|---|---|---|
//! | RSA (TLS 1.0-1.2) | client CertificateVerify (1); server decrypts the premaster (1) | server checks CertificateVerify (1); client encrypts the premaster to the server key (1) | 2 (each side checks the peer leaf) | – |
//! | DHE_RSA, ECDHE_RSA (TLS 1.2) | ServerKeyExchange (1), client CertificateVerify (1) | client checks ServerKeyExchange, server checks CertificateVerify (2) | 2 | 2 key generations + 2 derivations |
//! | ECDHE_ECDSA | the same with ECDSA | | | |
//! | TLS 1.3 | server and client CertificateVerify (2) | 2 | 2 | 2 + 2 (X25519) |
//! | resumed TLS 1.2 (ID, ticket) | – | – | – | – |
//! | resumed TLS 1.3 (psk_dhe_ke) | – | – | – | 2 + 2 |
//!
//! How each is timed (OpenSSL, the `openssl` crate, the scenario's own server key; median of
//! repetitions):
//! * signatures: `EVP_DigestSign` over 64 bytes with the loaded private key; RSA-PSS (SHA-256)
//!   at TLS 1.2 and 1.3, which is what OpenSSL 3.0 negotiates for RSA keys at 1.2 too
//!   (`rsa_pss_rsae_sha256` heads its `signature_algorithms`; checked with
//!   `examples/handshake_anatomy.rs`), PKCS#1 v1.5 at 1.0/1.1;
//! * verifications with a peer key new in this handshake: the public key is rebuilt from its
//!   components (RSA n and e, the EC point) before every verification, so the Montgomery set-up a
//!   fresh modulus needs is counted (about 7 µs at 2048 bits), but not OpenSSL 3.0's generic key
//!   *decoder* (d2i_PUBKEY, about 0.09 ms): decoding is not cryptography;
//! * certificate signatures: the CA key is decoded once into the trust store, so these are plain
//!   verifications with a kept key (sha256WithRSAEncryption: PKCS#1 v1.5);
//! * key agreement: `EVP_PKEY_keygen` and `EVP_PKEY_derive`.
//!
//! A trust anchor's self-signature is not checked (OpenSSL, GnuTLS and rustls all skip it), so
//! the chain costs one verification per side. DHE uses a 2048-bit group with a 256-bit subgroup
//! (RFC 5114 §2.3: the exponent size OpenSSL's and GnuTLS's ffdhe2048 use); ECDHE uses X25519
//! (what OpenSSL and rustls negotiate: checked with `examples/handshake_anatomy.rs`) and P-256
//! for GnuTLS (its first group). For GnuTLS and rustls rows the floor says that OpenSSL timed it.
//!
//! Not counted, but measured beside the floor ([`Floor::not_counted`]): decoding the peer's
//! certificate (d2i_X509 of the leaf, once per side). Every stack must parse the certificate it
//! receives, but how long that takes is the library's business, not the cryptography's: on
//! OpenSSL 3.0 it is about 0.1 ms per RSA-2048 leaf, almost all of it the generic key decoder.

use crate::scenario::{Case, Resumption};
use gander_tls::backend::BackendKind;
use gander_tls::pki::{KeySpec, PkiSet};
use gander_tls::suites::KeyExchange;
use gander_tls::TlsVersion;
use openssl::derive::Deriver;
use openssl::dh::Dh;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, PKeyRef, Private, Public};
use openssl::rsa::{Padding, Rsa};
use openssl::sign::{Signer, Verifier};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// One kind of operation in a floor, its count per handshake and its measured median.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FloorOp {
    pub op: String,
    pub count: u32,
    /// Median of the timed repetitions, ms.
    pub each_ms: f64,
    pub reps: usize,
}

/// The floor of one case's handshake.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    pub total_ms: f64,
    pub ops: Vec<FloorOp>,
    /// The library that timed the operations.
    pub library: String,
    /// Whether that library is the one the handshake ran on.
    pub same_library: bool,
    pub note: String,
    /// Measured beside the floor, not part of it: decoding the peer certificate on each side.
    #[serde(default)]
    pub not_counted: Vec<FloorOp>,
}

/// Times operations once per run and key, then sums them per case.
pub struct FloorMeter {
    /// Per-operation time budget: repetitions stop after this long (at least `min_reps`).
    budget: Duration,
    min_reps: usize,
    max_reps: usize,
    cache: HashMap<String, (f64, usize)>,
}

impl Default for FloorMeter {
    fn default() -> Self {
        FloorMeter {
            budget: Duration::from_millis(250),
            min_reps: 3,
            max_reps: 200,
            cache: HashMap::new(),
        }
    }
}

/// Batches each operation is timed in. A floor is a lower bound of what the cryptography
/// costs: a disturbance (another process, a host hiccup) during one batch inflates that batch's
/// median only, so the floor takes the lowest of the batch medians (each batch's median already
/// ignores single slow repetitions). Without this, one disturbed timing moved the RSA-2048 floor
/// from 0.72 to 0.91 ms in one of four runs here.
const BATCHES: usize = 5;
const BATCH_PAUSE: Duration = Duration::from_millis(10);

/// The lowest of a non-empty list of batch medians.
fn lowest(medians: &[f64]) -> f64 {
    medians.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Median (upper middle) of a non-empty vector of nanoseconds, in ms.
fn median_ms(mut v: Vec<u64>) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64 / 1e6
}

impl FloorMeter {
    /// A meter with a smaller time budget (tests).
    pub fn quick() -> Self {
        FloorMeter {
            budget: Duration::from_millis(30),
            min_reps: 1,
            max_reps: 20,
            cache: HashMap::new(),
        }
    }

    fn time(
        &mut self,
        key: String,
        mut f: impl FnMut() -> Result<(), String>,
    ) -> Result<(f64, usize), String> {
        if let Some(v) = self.cache.get(&key) {
            return Ok(*v);
        }
        f()?; // warm-up: first call pays for lazy initialisation
              // BATCHES short batches, a pause between them; the floor takes the lowest batch median.
        let mut medians = Vec::new();
        let mut reps = 0;
        let per_batch = self.budget / BATCHES as u32;
        for b in 0..BATCHES {
            if b > 0 {
                std::thread::sleep(BATCH_PAUSE);
            }
            let mut samples = Vec::new();
            let start = Instant::now();
            while samples.len() < self.max_reps
                && (samples.len() < self.min_reps || start.elapsed() < per_batch)
            {
                let t = Instant::now();
                f()?;
                samples.push(t.elapsed().as_nanos() as u64);
            }
            reps += samples.len();
            medians.push(median_ms(samples));
        }
        let v = (lowest(&medians), reps);
        self.cache.insert(key, v);
        Ok(v)
    }

    /// The floor of `case`'s handshake with the keys of `pki`; `None` for cleartext.
    pub fn floor(&mut self, case: &Case, pki: &PkiSet) -> Result<Option<Floor>, String> {
        let Some(tls) = &case.tls else {
            return Ok(None);
        };
        let spec = case.key.0;
        let resumed = case.params.session_resumption != Resumption::Off;
        let mut ops: Vec<(String, u32)> = Vec::new();
        let kx = tls.suite.kx;
        let ecdh_curve = if tls.backend == BackendKind::Gnutls {
            "P-256"
        } else {
            "X25519"
        };
        let modern = tls.version >= TlsVersion::Tls12;
        let (sig_name, sig_alg) = match spec {
            KeySpec::Rsa(b) => (format!("RSA-{b}"), if modern { "PSS" } else { "PKCS1" }),
            KeySpec::P256 => ("ECDSA P-256".into(), "SHA256"),
            KeySpec::P384 => ("ECDSA P-384".into(), "SHA384"),
        };
        let cert_alg = match spec {
            KeySpec::Rsa(_) => "PKCS1",
            KeySpec::P256 => "SHA256",
            KeySpec::P384 => "SHA384",
        };
        let verify_chain = format!("{sig_name} {cert_alg} verify (certificate, CA key)");
        let sign = format!("{sig_name} {sig_alg} sign");
        let verify = format!("{sig_name} {sig_alg} verify (peer key new in this handshake)");
        let ecdh_gen = format!("{ecdh_curve} key generation");
        let ecdh_der = format!("{ecdh_curve} derivation");
        let note;
        if resumed {
            if case.params.session_resumption == Resumption::Psk {
                ops.push((ecdh_gen.clone(), 2));
                ops.push((ecdh_der.clone(), 2));
                note = "resumed TLS 1.3 (psk_dhe_ke): key agreement only".to_string();
            } else {
                note = "resumed TLS 1.2: no public-key operations".to_string();
            }
        } else {
            match kx {
                KeyExchange::Rsa => {
                    ops.push((format!("{sig_name} decrypt (premaster)"), 1));
                    ops.push((
                        format!("{sig_name} encrypt (premaster, peer key new in this handshake)"),
                        1,
                    ));
                    ops.push((sign.clone(), 1));
                    ops.push((verify.clone(), 1));
                    ops.push((verify_chain.clone(), 2));
                    note = "RSA key transport, mutual authentication, one-level chain".into();
                }
                KeyExchange::DheRsa | KeyExchange::DhRsa => {
                    ops.push((sign.clone(), 2));
                    ops.push((verify.clone(), 2));
                    ops.push((verify_chain.clone(), 2));
                    ops.push(("DH-2048/256 key generation".into(), 2));
                    ops.push(("DH-2048/256 derivation".into(), 2));
                    note = "DHE (2048-bit group), mutual authentication, one-level chain".into();
                }
                KeyExchange::EcdheRsa | KeyExchange::EcdheEcdsa | KeyExchange::AnyTls13 => {
                    ops.push((sign.clone(), 2));
                    ops.push((verify.clone(), 2));
                    ops.push((verify_chain.clone(), 2));
                    ops.push((ecdh_gen.clone(), 2));
                    ops.push((ecdh_der.clone(), 2));
                    note = format!(
                        "(EC)DHE over {ecdh_curve}, mutual authentication, one-level chain"
                    );
                }
            }
        }
        let key = load_key(&pki.server_key)?;
        let mut out = Vec::new();
        let mut total = 0.0;
        for (op, count) in ops {
            let (each, reps) = self.measure_op(&op, &key, spec)?;
            total += each * count as f64;
            out.push(FloorOp {
                op,
                count,
                each_ms: each,
                reps,
            });
        }
        let mut not_counted = Vec::new();
        if !resumed {
            let op = format!("decode the peer certificate (d2i_X509, {sig_name} leaf)");
            let (each, reps) = self.measure_decode(&op, &pki.server, spec)?;
            not_counted.push(FloorOp {
                op,
                count: 2,
                each_ms: each,
                reps,
            });
        }
        Ok(Some(Floor {
            total_ms: total,
            ops: out,
            library: openssl::version::version().to_string(),
            same_library: tls.backend == BackendKind::Openssl,
            note,
            not_counted,
        }))
    }

    fn measure_decode(
        &mut self,
        op: &str,
        cert: &Path,
        spec: KeySpec,
    ) -> Result<(f64, usize), String> {
        let pem = std::fs::read(cert)
            .map_err(|e| format!("floor: cannot read {}: {e}", cert.display()))?;
        let der = openssl::x509::X509::from_pem(&pem)
            .and_then(|c| c.to_der())
            .map_err(|e| format!("floor: {}: {e}", cert.display()))?;
        self.time(format!("{}:{op}", spec.dir_name()), || {
            openssl::x509::X509::from_der(&der)
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    }

    fn measure_op(
        &mut self,
        op: &str,
        key: &PKey<Private>,
        spec: KeySpec,
    ) -> Result<(f64, usize), String> {
        let e = |x: openssl::error::ErrorStack| x.to_string();
        let cache_key = format!("{}:{op}", spec.dir_name());
        let msg = [0x5au8; 64];
        let md = if spec == KeySpec::P384 {
            MessageDigest::sha384()
        } else {
            MessageDigest::sha256()
        };
        let pss = op.contains("PSS");
        if op.ends_with(" sign") {
            return self.time(cache_key, || {
                let mut s = Signer::new(md, key).map_err(e)?;
                if pss {
                    s.set_rsa_padding(Padding::PKCS1_PSS).map_err(e)?;
                }
                s.update(&msg).map_err(e)?;
                s.sign_to_vec().map_err(e)?;
                Ok(())
            });
        }
        if op.contains("verify") {
            let mut s = Signer::new(md, key).map_err(e)?;
            if pss {
                s.set_rsa_padding(Padding::PKCS1_PSS).map_err(e)?;
            }
            s.update(&msg).map_err(e)?;
            let sig = s.sign_to_vec().map_err(e)?;
            let public = fresh_public(key)?;
            let fresh = op.contains("new in this handshake");
            return self.time(cache_key, || {
                let fresh_key;
                let k: &PKeyRef<_> = if fresh {
                    fresh_key = fresh_public(key)?;
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
            });
        }
        if op.contains("premaster") {
            let rsa = key.rsa().map_err(e)?;
            let mut ct = vec![0u8; rsa.size() as usize];
            let pm = [3u8; 48];
            let n = rsa
                .public_encrypt(&pm, &mut ct, Padding::PKCS1)
                .map_err(e)?;
            ct.truncate(n);
            let encrypt = op.contains("encrypt");
            return self.time(cache_key, || {
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
            });
        }
        let cache_key = op.to_string(); // key agreement does not depend on the certificate key
        if op.starts_with("X25519") {
            let peer = PKey::generate_x25519().map_err(e)?;
            let peer_pub = PKey::public_key_from_raw_bytes(
                &peer.raw_public_key().map_err(e)?,
                openssl::pkey::Id::X25519,
            )
            .map_err(e)?;
            let mine = PKey::generate_x25519().map_err(e)?;
            if op.ends_with("generation") {
                return self.time(cache_key, || PKey::generate_x25519().map(|_| ()).map_err(e));
            }
            return self.time(cache_key, || {
                let mut d = Deriver::new(&mine).map_err(e)?;
                d.set_peer(&peer_pub).map_err(e)?;
                d.derive_to_vec().map(|_| ()).map_err(e)
            });
        }
        if op.starts_with("P-256") {
            let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(e)?;
            if op.ends_with("generation") {
                return self.time(cache_key, || EcKey::generate(&g).map(|_| ()).map_err(e));
            }
            let mine = PKey::from_ec_key(EcKey::generate(&g).map_err(e)?).map_err(e)?;
            let peer = EcKey::generate(&g).map_err(e)?;
            let peer_pub =
                PKey::from_ec_key(EcKey::from_public_key(&g, peer.public_key()).map_err(e)?)
                    .map_err(e)?;
            return self.time(cache_key, || {
                let mut d = Deriver::new(&mine).map_err(e)?;
                d.set_peer(&peer_pub).map_err(e)?;
                d.derive_to_vec().map(|_| ()).map_err(e)
            });
        }
        if op.starts_with("DH-2048") {
            let mk = || Dh::get_2048_256().map_err(e);
            if op.ends_with("generation") {
                return self.time(cache_key, || mk()?.generate_key().map(|_| ()).map_err(e));
            }
            let mine = mk()?.generate_key().map_err(e)?;
            let peer = mk()?.generate_key().map_err(e)?;
            let peer_pub = peer.public_key().to_owned().map_err(e)?;
            return self.time(cache_key, || {
                mine.compute_key(&peer_pub).map(|_| ()).map_err(e)
            });
        }
        Err(format!("floor: unknown operation {op:?}"))
    }
}

/// The public half of `key`, rebuilt from its components (RSA n and e, the EC point): a key as
/// new to the library as one that just arrived in a certificate, without the generic decoder.
fn fresh_public(key: &PKey<Private>) -> Result<PKey<Public>, String> {
    let e = |x: openssl::error::ErrorStack| x.to_string();
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

fn load_key(path: &Path) -> Result<PKey<Private>, String> {
    let pem =
        std::fs::read(path).map_err(|e| format!("floor: cannot read {}: {e}", path.display()))?;
    PKey::private_key_from_pem(&pem).map_err(|e| format!("floor: {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_keep_the_least_disturbed_median() {
        assert_eq!(lowest(&[0.9, 0.72, 0.75]), 0.72);
        assert_eq!(median_ms(vec![3_000_000, 1_000_000, 2_000_000]), 2.0);
        // A run of slow calls in one batch does not move the floor.
        let mut m = FloorMeter::quick();
        let mut calls = 0u32;
        let (each, reps) = m
            .time("k".into(), || {
                calls += 1;
                let d = if (2..=4).contains(&calls) { 3 } else { 1 };
                std::thread::sleep(Duration::from_millis(d));
                Ok(())
            })
            .unwrap();
        assert!(each < 2.0, "{each}");
        assert!(reps >= BATCHES);
        // Cached: the same key is not timed again.
        assert_eq!(
            m.time("k".into(), || Err("timed twice".into())).unwrap(),
            (each, reps)
        );
    }
}
