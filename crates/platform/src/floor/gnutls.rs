//! Floor operations timed with GnuTLS 3.7 and the nettle (hogweed) and GMP libraries under it,
//! as gander's GnuTLS backend performs them (`gander_tls::backend::gnutls`), through the safe
//! bindings of `gander-gnutls` (its `pk` and `kx` modules).
//!
//! Through GnuTLS's public API (`<gnutls/abstract.h>`):
//! * signatures: `gnutls_privkey_sign_data2` over 64 bytes with the PEM key imported once
//!   (`gnutls_privkey_import_x509_raw`). GnuTLS's default signature list (`SIGN-ALL` and `NORMAL`
//!   share it, `lib/priority.c`, `_sign_priority_default`) puts `RSA-SHA256` (PKCS#1 v1.5) before
//!   the RSA-PSS schemes, so two GnuTLS peers sign with PKCS#1 v1.5 at TLS 1.2 and with
//!   `rsa_pss_rsae_sha256` only at TLS 1.3 ([`FloorLib::rsa_pss`]; checked with
//!   `gnutls_sign_algorithm_get` and `gnutls_sign_algorithm_get_client` after a mutually
//!   authenticated handshake with gander's priority string); ECDSA keys: ECDSA with SHA-256
//!   (P-256) or SHA-384 (P-384);
//! * verifications with a peer key new in this handshake: every repetition builds a new
//!   `gnutls_pubkey_t` from the raw components (RSA n and e, the EC point: exported once, outside
//!   the timing), verifies with `gnutls_pubkey_verify_data2` and frees the key. The handshake gets
//!   the key out of the certificate instead (`gnutls_pcert_import_x509_raw`), which the not-counted
//!   certificate decoding below times;
//! * certificate signatures: `gnutls_pubkey_verify_data2` with a key imported once, PKCS#1 v1.5
//!   SHA-256 (ECDSA for EC keys). GnuTLS's chain check (`_gnutls_x509_verify_data`,
//!   `lib/x509/verify.c`) reads the CA key's numbers out of the stored CA certificate
//!   (`_gnutls_x509_crt_get_mpis`) for every check; that small decoding is not timed;
//! * RSA key transport: `gnutls_privkey_decrypt_data2` (the constant-time call the server's
//!   `proc_rsa_client_kx` uses, `lib/auth/rsa.c`) and `gnutls_pubkey_encrypt_data` to a fresh key;
//! * decoding the peer certificate (not counted): what each side does with the peer leaf,
//!   `gnutls_pcert_import_x509_raw` (`_gnutls_proc_x509_crt`, `lib/auth/cert.c`: `x509_crt_init`,
//!   `x509_crt_import`, `x509_crt_export2`, `pubkey_init`, `pubkey_import_x509`, `x509_crt_deinit`)
//!   and `gnutls_pcert_deinit`, plus the second decoding `gnutls_certificate_verify_peers2` does
//!   (`_gnutls_x509_cert_verify_peers`, `lib/cert-session.c`: `x509_crt_init` + `x509_crt_import`
//!   + `x509_crt_deinit`).
//!
//! GnuTLS 3.7 has no public key-agreement API (`gnutls_privkey_derive_secret` is 3.8.2), so key
//! agreement calls what its TLS code calls, in nettle and GMP (GnuTLS 3.7.9, `lib/nettle/pk.c`):
//! * ECDHE: gander's priority string ends in `+GROUP-ALL`, GnuTLS's `supported_groups_normal`
//!   (`lib/priority.c`), whose first group is SECP256R1; the client offers it first and a server
//!   without `%SERVER_PRECEDENCE` takes the client's first (`lib/ext/supported_groups.c`): P-256,
//!   at TLS 1.2 and 1.3 (checked with `gnutls_group_get`). Key generation is
//!   `wrap_nettle_pk_generate_keys(GNUTLS_PK_ECDSA)`: `ecdsa_generate_keypair` (a random scalar and
//!   `ecc_point_mul_g` inside nettle), `ecc_point_get`, `ecc_scalar_get`. Derivation is
//!   `_wrap_nettle_pk_derive(GNUTLS_PK_EC)`: `ecc_point_set` (checks the peer point is on the
//!   curve), `ecc_scalar_set`, then `ecc_shared_secret`: `ecc_point_mul`, `ecc_point_get`,
//!   `nettle_mpz_get_str_256`.
//! * DHE: the client offers the RFC 7919 groups (`+GROUP-ALL` includes them), so the server takes
//!   ffdhe2048 from `supported_groups` (`_gnutls_figure_dh_params`, `lib/dh.c`) rather than the
//!   credentials' `gnutls_certificate_set_known_dh_params` group, and both sides keep the group's
//!   q = (p-1)/2 (`set_dh_pk_params`; the client in `_gnutls_proc_dh_common_server_kx`,
//!   `lib/auth/dh_common.c`). With q set, `wrap_nettle_pk_generate_keys(GNUTLS_PK_DH)` draws the
//!   secret exponent as `1 + nettle_mpz_random(q - 2)`, a full 2047-bit exponent: the group's
//!   `gnutls_ffdhe_2048_key_bits` (256) is passed as `level` but only used when q is absent. The
//!   public value is `mpz_powm(g, x, p)` (GMP's variable-time `mpz_powm`, not `mpz_powm_sec`).
//!   Derivation (`_wrap_nettle_pk_derive(GNUTLS_PK_DH)`) checks the peer value's range, checks it
//!   is in the q-order subgroup with `mpz_powm(y, q, p) == 1` (a second full-length
//!   exponentiation, done because q is known), then computes `mpz_powm(y, x, p)`. Checked: after
//!   a DHE handshake between two GnuTLS 3.7.9 peers with gander's priority string,
//!   `gnutls_group_get` is FFDHE2048 and `gnutls_dh_get_secret_bits` 2043..2047 on both sides.
//! * X25519 (not negotiated between gander's GnuTLS peers, kept for completeness): 32 random
//!   bytes and `curve25519_mul_g`; `curve25519_mul` and an all-zero check.
//!
//! Randomness for nettle is `gnutls_rnd(GNUTLS_RND_RANDOM)`, the level GnuTLS uses for ephemeral
//! keys (`rnd_tmpkey_func`).

#![forbid(unsafe_code)]

use super::{FloorLib, Group, OpError, OpInput, OpKind, PrepError, Rep};
use gander_gnutls::kx::{self, Ffdhe, Rng};
use gander_gnutls::pk::{self, EcCurve, PkAlgorithm, Privkey, Pubkey, SignAlgorithm, X509Crt};
use gander_gnutls::tls::X509Format;
use gander_gnutls::GnutlsError;
use gander_tls::pki::KeySpec;
use gander_tls::TlsVersion;
use std::path::{Path, PathBuf};

/// GnuTLS, with nettle and GMP for key agreement.
pub struct Gnutls;

/// The length of a TLS premaster secret (RFC 5246 §7.4.7.1).
const PREMASTER_LEN: usize = 48;

/// Why a GnuTLS floor operation could not be prepared or run.
#[derive(Debug, thiserror::Error)]
pub enum GnutlsFloorError {
    /// GnuTLS 3.7 has no ML-DSA keys.
    #[error("GnuTLS 3.7 has no ML-DSA")]
    NoMlDsa,
    /// The scenario's key or certificate file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// GnuTLS cannot decode the scenario's key or certificate file.
    #[error("{}: {source}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// GnuTLS's error.
        source: GnutlsError,
    },
    /// The key file holds another kind of key than the scenario's.
    #[error("{}: GnuTLS key algorithm {found:?}, expected {spec:?}", path.display())]
    KeyType {
        /// The key file.
        path: PathBuf,
        /// What GnuTLS found in it.
        found: PkAlgorithm,
        /// What the scenario asked for.
        spec: KeySpec,
    },
    /// RSA key transport asked of a non-RSA key.
    #[error("RSA key transport needs an RSA key")]
    NeedsRsa,
    /// A GnuTLS, nettle or GMP operation failed.
    #[error(transparent)]
    Gnutls(#[from] GnutlsError),
}

/// One timed repetition's result as the floor's timing loop takes it.
fn rep<T>(r: Result<T, GnutlsError>) -> Result<(), OpError> {
    r.map(drop).map_err(OpError::from)
}

impl FloorLib for Gnutls {
    fn id(&self) -> &'static str {
        "gnutls"
    }
    fn name(&self) -> String {
        let (major, minor) = gander_gnutls::nettle_version();
        format!(
            "GnuTLS {} (nettle {major}.{minor}, GMP {})",
            gander_gnutls::version().unwrap_or("?".into()),
            gander_gnutls::gmp_version().unwrap_or("?".into()),
        )
    }
    fn ecdh_group(&self) -> Group {
        Group::P256
    }
    fn dh_name(&self) -> String {
        match Ffdhe::ffdhe2048() {
            Ok(g) => format!("ffdhe2048/{}", g.q_bits()),
            Err(_) => "ffdhe2048".into(),
        }
    }
    fn rsa_pss(&self, version: TlsVersion) -> bool {
        version >= TlsVersion::Tls13
    }

    fn prepare<'a>(&'a self, op: OpKind, input: &OpInput<'a>) -> Result<Rep<'a>, PrepError> {
        let msg = [0x5au8; 64];
        let spec = input.spec;
        if spec.is_ml_dsa() {
            return Err(PrepError::Unsupported("GnuTLS 3.7 has no ML-DSA".into()));
        }
        match op {
            OpKind::KemKeygen | OpKind::KemEncap | OpKind::KemDecap => {
                Err(PrepError::Unsupported("GnuTLS 3.7 has no ML-KEM".into()))
            }
            OpKind::DecodeCert => {
                let der = cert_der(input.cert)?;
                Ok(Box::new(move || rep(decode_peer_cert(&der))))
            }
            OpKind::Sign => {
                let key = privkey_from_pem_file(input.key, spec)?;
                let algo = sign_algo(spec, input.pss);
                Ok(Box::new(move || rep(key.sign(algo, &msg))))
            }
            OpKind::VerifyFresh | OpKind::VerifyCert => {
                let key = privkey_from_pem_file(input.key, spec)?;
                // Certificate signatures are PKCS#1 v1.5 (sha256WithRSAEncryption).
                let algo = sign_algo(spec, input.pss && op == OpKind::VerifyFresh);
                let sig = key.sign(algo, &msg)?;
                let parts = PubParts::of(&key)?;
                let kept = parts.fresh()?;
                let fresh = op == OpKind::VerifyFresh;
                Ok(Box::new(move || {
                    if fresh {
                        rep(parts.fresh().and_then(|k| k.verify(algo, &msg, &sig)))
                    } else {
                        rep(kept.verify(algo, &msg, &sig))
                    }
                }))
            }
            OpKind::PremasterDecrypt | OpKind::PremasterEncrypt => {
                if !matches!(spec, KeySpec::Rsa(_)) {
                    return Err(GnutlsFloorError::NeedsRsa.into());
                }
                let key = privkey_from_pem_file(input.key, spec)?;
                let parts = PubParts::of(&key)?;
                let pm = [3u8; PREMASTER_LEN];
                let ct = parts.fresh()?.encrypt(&pm)?;
                if op == OpKind::PremasterEncrypt {
                    // The server's key is new to the client in every handshake.
                    Ok(Box::new(move || {
                        rep(parts.fresh().and_then(|k| k.encrypt(&pm)))
                    }))
                } else {
                    Ok(Box::new(move || {
                        let mut out = [0u8; PREMASTER_LEN];
                        rep(key.decrypt(&ct, &mut out))
                    }))
                }
            }
            OpKind::Keygen(Group::P256) => {
                let rng = Rng::new();
                Ok(Box::new(move || rep(kx::p256_keygen(&rng))))
            }
            OpKind::Derive(Group::P256) => {
                let rng = Rng::new();
                let mine = kx::p256_keygen(&rng)?;
                let peer = kx::p256_keygen(&rng)?;
                Ok(Box::new(move || {
                    rep(kx::p256_derive(&mine, &peer.x, &peer.y))
                }))
            }
            OpKind::Keygen(Group::Dh2048) => {
                let group = Ffdhe::ffdhe2048()?;
                let rng = Rng::new();
                Ok(Box::new(move || rep(kx::dh_keygen(&group, &rng))))
            }
            OpKind::Derive(Group::Dh2048) => {
                let group = Ffdhe::ffdhe2048()?;
                let rng = Rng::new();
                let mine = kx::dh_keygen(&group, &rng)?;
                let peer = kx::dh_keygen(&group, &rng)?;
                Ok(Box::new(move || rep(kx::dh_derive(&group, &mine, &peer.y))))
            }
            OpKind::Keygen(Group::X25519) => Ok(Box::new(|| rep(kx::x25519_keygen()))),
            OpKind::Derive(Group::X25519) => {
                let mine = kx::x25519_keygen()?;
                let peer = kx::x25519_keygen()?;
                Ok(Box::new(move || {
                    rep(kx::x25519_derive(&mine, &peer.public))
                }))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Keys and certificates

fn read(path: &Path) -> Result<Vec<u8>, GnutlsFloorError> {
    std::fs::read(path).map_err(|source| GnutlsFloorError::Read {
        path: path.to_owned(),
        source,
    })
}

/// The signature algorithm of a handshake (`pss`) or certificate signature with a `spec` key.
fn sign_algo(spec: KeySpec, pss: bool) -> SignAlgorithm {
    match spec {
        KeySpec::Rsa(_) if pss => SignAlgorithm::RsaPssRsaeSha256,
        KeySpec::Rsa(_) => SignAlgorithm::RsaSha256,
        KeySpec::P256 => SignAlgorithm::EcdsaSha256,
        // Never reached: `prepare` refuses ML-DSA keys first.
        KeySpec::P384 | KeySpec::MlDsa44 | KeySpec::MlDsa65 => SignAlgorithm::EcdsaSha384,
    }
}

/// The scenario's PEM key (PKCS#8 or traditional), imported once
/// (`gnutls_privkey_import_x509_raw`) and checked to be of type `spec`.
fn privkey_from_pem_file(path: &Path, spec: KeySpec) -> Result<Privkey, GnutlsFloorError> {
    let pem = read(path)?;
    let key = Privkey::from_pem(&pem).map_err(|source| GnutlsFloorError::Decode {
        path: path.to_owned(),
        source,
    })?;
    let want = match spec {
        KeySpec::Rsa(_) => PkAlgorithm::Rsa,
        KeySpec::P256 | KeySpec::P384 => PkAlgorithm::Ecdsa,
        KeySpec::MlDsa44 | KeySpec::MlDsa65 => {
            return Err(GnutlsFloorError::NoMlDsa);
        }
    };
    let found = key.algorithm();
    if found != want {
        return Err(GnutlsFloorError::KeyType {
            path: path.to_owned(),
            found,
            spec,
        });
    }
    Ok(key)
}

/// The public components of a key, from which a `gnutls_pubkey_t` is built as new.
enum PubParts {
    Rsa {
        m: Vec<u8>,
        e: Vec<u8>,
    },
    Ec {
        curve: EcCurve,
        x: Vec<u8>,
        y: Vec<u8>,
    },
}

impl PubParts {
    /// Exported once, outside the timing.
    fn of(key: &Privkey) -> Result<Self, GnutlsError> {
        let public = Pubkey::from_privkey(key)?;
        if key.algorithm() == PkAlgorithm::Rsa {
            let (m, e) = public.rsa_raw()?;
            Ok(PubParts::Rsa { m, e })
        } else {
            let (curve, x, y) = public.ecc_raw()?;
            Ok(PubParts::Ec { curve, x, y })
        }
    }

    /// A new `gnutls_pubkey_t` from the components (`gnutls_pubkey_init` +
    /// `gnutls_pubkey_import_rsa_raw` / `gnutls_pubkey_import_ecc_raw`; `gnutls_pubkey_deinit`
    /// when dropped): what a key that arrived in this handshake costs, minus certificate parsing.
    fn fresh(&self) -> Result<Pubkey, GnutlsError> {
        match self {
            PubParts::Rsa { m, e } => Pubkey::from_rsa_raw(m, e),
            PubParts::Ec { curve, x, y } => Pubkey::from_ecc_raw(*curve, x, y),
        }
    }
}

/// The DER of the PEM certificate at `path`.
fn cert_der(path: &Path) -> Result<Vec<u8>, GnutlsFloorError> {
    let pem = read(path)?;
    let crt =
        X509Crt::import(&pem, X509Format::Pem).map_err(|source| GnutlsFloorError::Decode {
            path: path.to_owned(),
            source,
        })?;
    Ok(crt.to_der()?)
}

/// What one side of a GnuTLS handshake does with the peer's DER leaf: `gnutls_pcert_import_x509_raw`
/// (`_gnutls_proc_x509_crt`) and `gnutls_pcert_deinit` when the session ends, and the decoding
/// in `gnutls_certificate_verify_peers2`.
fn decode_peer_cert(der: &[u8]) -> Result<(), GnutlsError> {
    pk::import_pcert(der)?;
    X509Crt::import(der, X509Format::Der).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_tls::pki::{self, PkiSet};

    fn lab(spec: KeySpec) -> (tempfile::TempDir, PkiSet) {
        let dir = tempfile::tempdir().unwrap();
        let set = pki::init(dir.path(), &[spec]).unwrap().remove(0).set;
        (dir, set)
    }

    fn input(set: &PkiSet, spec: KeySpec, pss: bool) -> OpInput<'_> {
        OpInput {
            spec,
            pss,
            key: &set.server_key,
            cert: &set.server,
        }
    }

    /// Every operation prepares and one repetition succeeds, with both signature schemes.
    fn all_ops(spec: KeySpec) {
        let (_d, set) = lab(spec);
        let lib = Gnutls;
        let mut kinds = vec![
            OpKind::Sign,
            OpKind::VerifyFresh,
            OpKind::VerifyCert,
            OpKind::DecodeCert,
        ];
        for g in [Group::P256, Group::Dh2048, Group::X25519] {
            kinds.push(OpKind::Keygen(g));
            kinds.push(OpKind::Derive(g));
        }
        let rsa = matches!(spec, KeySpec::Rsa(_));
        if rsa {
            kinds.push(OpKind::PremasterDecrypt);
            kinds.push(OpKind::PremasterEncrypt);
        }
        for pss in [false, true] {
            for &k in &kinds {
                let mut rep = lib
                    .prepare(k, &input(&set, spec, pss && rsa))
                    .unwrap_or_else(|e| panic!("{spec:?} {k:?}: {e:?}"));
                rep().unwrap_or_else(|e| panic!("{spec:?} {k:?}: {e}"));
                rep().unwrap_or_else(|e| panic!("{spec:?} {k:?} again: {e}"));
            }
        }
        if !rsa {
            assert!(matches!(
                lib.prepare(OpKind::PremasterDecrypt, &input(&set, spec, false)),
                Err(PrepError::Failed(_))
            ));
        }
    }

    #[test]
    fn every_op_runs_rsa2048() {
        all_ops(KeySpec::Rsa(2048));
    }

    #[test]
    fn every_op_runs_p256() {
        all_ops(KeySpec::P256);
    }

    /// The verify timings really verify: a corrupted signature fails.
    #[test]
    fn corrupted_signature_fails() {
        for spec in [KeySpec::Rsa(2048), KeySpec::P256] {
            let (_d, set) = lab(spec);
            let key = privkey_from_pem_file(&set.server_key, spec).unwrap();
            let parts = PubParts::of(&key).unwrap();
            let msg = [0x5au8; 64];
            for pss in [false, true] {
                let algo = sign_algo(spec, pss);
                let mut sig = key.sign(algo, &msg).unwrap();
                parts.fresh().unwrap().verify(algo, &msg, &sig).unwrap();
                let n = sig.len();
                sig[n - 5] ^= 0x01; // inside s for ECDSA (DER r, s)
                let e = parts.fresh().unwrap().verify(algo, &msg, &sig).unwrap_err();
                assert_eq!(
                    e.code(),
                    Some(gander_gnutls::code::PK_SIG_VERIFY_FAILED),
                    "{e}"
                );
                // A good signature over another message fails too.
                sig[n - 5] ^= 0x01; // restored
                assert!(parts
                    .fresh()
                    .unwrap()
                    .verify(algo, &[0u8; 64], &sig)
                    .is_err());
            }
        }
    }

    /// The premaster round trip works: encryption to the fresh key, decryption with the
    /// private key.
    #[test]
    fn premaster_round_trip() {
        let spec = KeySpec::Rsa(2048);
        let (_d, set) = lab(spec);
        let key = privkey_from_pem_file(&set.server_key, spec).unwrap();
        let pm = [7u8; PREMASTER_LEN];
        let ct = PubParts::of(&key)
            .unwrap()
            .fresh()
            .unwrap()
            .encrypt(&pm)
            .unwrap();
        let mut out = [0u8; PREMASTER_LEN];
        key.decrypt(&ct, &mut out).unwrap();
        assert_eq!(out, pm);
        assert!(matches!(
            privkey_from_pem_file(&set.server_key, KeySpec::P256),
            Err(GnutlsFloorError::KeyType { .. })
        ));
    }

    /// The timed key agreement is real: both sides derive the same secret.
    #[test]
    fn key_agreement_agrees() {
        let rng = Rng::new();
        let (a, b) = (
            kx::p256_keygen(&rng).unwrap(),
            kx::p256_keygen(&rng).unwrap(),
        );
        let s1 = kx::p256_derive(&a, &b.x, &b.y).unwrap();
        assert_eq!(s1, kx::p256_derive(&b, &a.x, &a.y).unwrap());
        assert_eq!(s1.len(), kx::P256_LEN);
        assert_ne!(s1, kx::p256_derive(&a, &a.x, &a.y).unwrap());
        let mut off = b.y.clone();
        off[kx::P256_LEN - 1] ^= 1;
        assert!(
            kx::p256_derive(&a, &b.x, &off).is_err(),
            "off-curve point accepted"
        );

        let grp = Ffdhe::ffdhe2048().unwrap();
        let (a, b) = (
            kx::dh_keygen(&grp, &rng).unwrap(),
            kx::dh_keygen(&grp, &rng).unwrap(),
        );
        let s1 = kx::dh_derive(&grp, &a, &b.y).unwrap();
        assert_eq!(s1, kx::dh_derive(&grp, &b, &a.y).unwrap());
        assert!(s1.len() > 240, "{}", s1.len());
        assert!(kx::dh_derive(&grp, &a, &[1]).is_err());
        // Full-length exponents, as GnuTLS draws them below q = (p-1)/2.
        assert_eq!(grp.q_bits(), 2047);
        assert!(a.secret_bits() > 2000);
        assert_eq!(Gnutls.dh_name(), "ffdhe2048/2047");
        assert_eq!(Ffdhe::key_bits(), 256);

        let (a, b) = (kx::x25519_keygen().unwrap(), kx::x25519_keygen().unwrap());
        assert_eq!(
            kx::x25519_derive(&a, &b.public).unwrap(),
            kx::x25519_derive(&b, &a.public).unwrap()
        );
    }

    #[test]
    fn names_say_what_timed_it() {
        let n = Gnutls.name();
        assert!(n.starts_with("GnuTLS 3."), "{n}");
        assert!(n.contains("nettle 3."), "{n}");
        assert!(!Gnutls.rsa_pss(TlsVersion::Tls12));
        assert!(Gnutls.rsa_pss(TlsVersion::Tls13));
    }
}
