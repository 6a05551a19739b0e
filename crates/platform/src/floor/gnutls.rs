//! Floor operations timed with GnuTLS 3.7 and the nettle (hogweed) and GMP libraries under it,
//! as gander's GnuTLS backend performs them (`gander_tls::backend::gnutls`). FFI declarations:
//! `gnutls_ffi.rs`.
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

use super::gnutls_ffi::*;
use super::{FloorLib, Group, OpInput, OpKind, PrepError, Rep};
use gander_tls::pki::KeySpec;
use gander_tls::TlsVersion;
use std::cell::Cell;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::raw::{c_int, c_uint, c_void};
use std::path::Path;
use std::sync::OnceLock;

/// GnuTLS, with nettle and GMP for key agreement.
pub struct Gnutls;

/// The length of a TLS premaster secret (RFC 5246 §7.4.7.1).
const PREMASTER_LEN: usize = 48;
/// P-256 field elements and scalars, bytes.
const P256_LEN: usize = 32;

impl FloorLib for Gnutls {
    fn id(&self) -> &'static str {
        "gnutls"
    }
    fn name(&self) -> String {
        init();
        // SAFETY: with NULL, gnutls_check_version returns GnuTLS's static version string (or
        // NULL); nettle_version_* return ints; __gmp_version is GMP's static version string.
        unsafe {
            let gnutls = cstr(gnutls_check_version(std::ptr::null())).unwrap_or("?".into());
            let gmp = cstr(__gmp_version).unwrap_or("?".into());
            format!(
                "GnuTLS {gnutls} (nettle {}.{}, GMP {gmp})",
                nettle_version_major(),
                nettle_version_minor()
            )
        }
    }
    fn ecdh_group(&self) -> Group {
        Group::P256
    }
    fn dh_name(&self) -> String {
        // SAFETY: reads an exported, immutable datum of the GnuTLS library.
        let q = unsafe { gnutls_ffdhe_2048_group_q };
        // SAFETY: the datum points at `size` bytes of static data.
        match unsafe { datum_slice(&q) } {
            Some(q) => format!("ffdhe2048/{}", bit_len(q)),
            None => "ffdhe2048".into(),
        }
    }
    fn rsa_pss(&self, version: TlsVersion) -> bool {
        version >= TlsVersion::Tls13
    }

    fn prepare<'a>(&'a self, op: OpKind, input: &OpInput<'a>) -> Result<Rep<'a>, PrepError> {
        init();
        let msg = [0x5au8; 64];
        let spec = input.spec;
        match op {
            OpKind::DecodeCert => {
                let der = cert_der(input.cert)?;
                Ok(Box::new(move || decode_peer_cert(&der)))
            }
            OpKind::Sign => {
                let key = Privkey::from_pem_file(input.key, spec)?;
                let algo = sign_algo(spec, input.pss);
                Ok(Box::new(move || key.sign(algo, &msg).map(drop)))
            }
            OpKind::VerifyFresh | OpKind::VerifyCert => {
                let key = Privkey::from_pem_file(input.key, spec)?;
                // Certificate signatures are PKCS#1 v1.5 (sha256WithRSAEncryption).
                let algo = sign_algo(spec, input.pss && op == OpKind::VerifyFresh);
                let sig = key.sign(algo, &msg)?.to_vec();
                let parts = PubParts::of(&key)?;
                let kept = parts.fresh()?;
                let fresh = op == OpKind::VerifyFresh;
                Ok(Box::new(move || {
                    if fresh {
                        parts.fresh()?.verify(algo, &msg, &sig)
                    } else {
                        kept.verify(algo, &msg, &sig)
                    }
                }))
            }
            OpKind::PremasterDecrypt | OpKind::PremasterEncrypt => {
                if !matches!(spec, KeySpec::Rsa(_)) {
                    return Err(PrepError::Failed(
                        "RSA key transport needs an RSA key".into(),
                    ));
                }
                let key = Privkey::from_pem_file(input.key, spec)?;
                let parts = PubParts::of(&key)?;
                let pm = [3u8; PREMASTER_LEN];
                let ct = parts.fresh()?.encrypt(&pm)?.to_vec();
                if op == OpKind::PremasterEncrypt {
                    // The server's key is new to the client in every handshake.
                    Ok(Box::new(move || parts.fresh()?.encrypt(&pm).map(drop)))
                } else {
                    Ok(Box::new(move || {
                        let mut out = [0u8; PREMASTER_LEN];
                        key.decrypt(&ct, &mut out)
                    }))
                }
            }
            OpKind::Keygen(Group::P256) => {
                let rng = Rng::new();
                Ok(Box::new(move || p256_keygen(&rng).map(drop)))
            }
            OpKind::Derive(Group::P256) => {
                let rng = Rng::new();
                let mine = p256_keygen(&rng)?;
                let peer = p256_keygen(&rng)?;
                Ok(Box::new(move || {
                    p256_derive(&mine.k, &peer.x, &peer.y).map(drop)
                }))
            }
            OpKind::Keygen(Group::Dh2048) => {
                let group = Ffdhe::ffdhe2048()?;
                let rng = Rng::new();
                Ok(Box::new(move || dh_keygen(&group, &rng).map(drop)))
            }
            OpKind::Derive(Group::Dh2048) => {
                let group = Ffdhe::ffdhe2048()?;
                let rng = Rng::new();
                let mine = dh_keygen(&group, &rng)?;
                let peer = dh_keygen(&group, &rng)?;
                Ok(Box::new(move || {
                    dh_derive(&group, &mine.x, &peer.y).map(drop)
                }))
            }
            OpKind::Keygen(Group::X25519) => Ok(Box::new(|| x25519_keygen().map(drop))),
            OpKind::Derive(Group::X25519) => {
                let mine = x25519_keygen()?;
                let peer = x25519_keygen()?;
                Ok(Box::new(move || {
                    x25519_derive(&mine.private, &peer.public).map(drop)
                }))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn init() {
    static INIT: OnceLock<c_int> = OnceLock::new();
    // SAFETY: reference-counted global initialisation, safe to call from any thread (GnuTLS
    // 3.x also initialises itself in a library constructor).
    INIT.get_or_init(|| unsafe { gnutls_global_init() });
}

/// # Safety
/// `p` is NULL or a NUL-terminated string that outlives the call.
unsafe fn cstr(p: *const std::os::raw::c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        Some(CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

fn strerror(code: c_int) -> String {
    // SAFETY: gnutls_strerror returns a static string (or NULL) for every code.
    let s = unsafe { cstr(gnutls_strerror(code)) };
    format!("{} ({code})", s.unwrap_or_else(|| "GnuTLS error".into()))
}

/// `Ok(r)` for `r >= 0`, else the GnuTLS error with `what` failed.
fn check(what: &str, r: c_int) -> Result<c_int, String> {
    if r < 0 {
        Err(format!("{what}: {}", strerror(r)))
    } else {
        Ok(r)
    }
}

/// A borrowed datum over `b`. GnuTLS only reads through the `const gnutls_datum_t *` arguments
/// this is passed as, so the `*mut` it holds is never written through.
fn datum(b: &[u8]) -> Result<gnutls_datum_t, String> {
    Ok(gnutls_datum_t {
        data: b.as_ptr() as *mut u8,
        size: c_uint::try_from(b.len()).map_err(|_| "datum longer than 4 GiB".to_string())?,
    })
}

/// # Safety
/// `d.data` is NULL or points at `d.size` readable bytes that outlive the returned slice.
unsafe fn datum_slice(d: &gnutls_datum_t) -> Option<&[u8]> {
    if d.data.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts(d.data, d.size as usize))
    }
}

/// Bits of the big-endian unsigned number `b`.
fn bit_len(b: &[u8]) -> u32 {
    match b.iter().position(|&x| x != 0) {
        Some(i) => (b.len() - i - 1) as u32 * 8 + (8 - b[i].leading_zeros()),
        None => 0,
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|x| format!("cannot read {}: {x}", path.display()))
}

/// A datum GnuTLS allocated for the caller; released with `gnutls_free`.
struct GDatum(gnutls_datum_t);
impl GDatum {
    fn empty() -> Self {
        GDatum(gnutls_datum_t {
            data: std::ptr::null_mut(),
            size: 0,
        })
    }
    fn to_vec(&self) -> Vec<u8> {
        // SAFETY: GnuTLS filled the datum: `size` bytes at `data` (or NULL), owned by `self`.
        unsafe { datum_slice(&self.0) }
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    }
}
impl Drop for GDatum {
    fn drop(&mut self) {
        if !self.0.data.is_null() {
            // SAFETY: `data` came from gnutls_malloc (GnuTLS's out-parameter convention) and is
            // freed once; gnutls_free is the library's matching deallocator.
            unsafe {
                if let Some(free) = gnutls_free {
                    free(self.0.data as *mut c_void);
                }
            }
        }
    }
}

/// Random bytes for nettle, from `gnutls_rnd(GNUTLS_RND_RANDOM)` as GnuTLS's `rnd_tmpkey_func`.
/// nettle's callback cannot fail, so a failure is recorded and checked after the call.
struct Rng {
    failed: Cell<bool>,
}
impl Rng {
    fn new() -> Self {
        Rng {
            failed: Cell::new(false),
        }
    }
    fn ctx(&self) -> *mut c_void {
        self as *const Rng as *mut c_void
    }
    fn check(&self) -> Result<(), String> {
        if self.failed.replace(false) {
            Err("gnutls_rnd failed".into())
        } else {
            Ok(())
        }
    }
}

/// The `nettle_random_func` for [`Rng`]: `ctx` is [`Rng::ctx`].
unsafe extern "C" fn rng_fill(ctx: *mut c_void, len: usize, dst: *mut u8) {
    // SAFETY: nettle passes `len` writable bytes at `dst`, and the `ctx` it was given, which
    // points at an `Rng` borrowed for the duration of the nettle call.
    unsafe {
        if gnutls_rnd(GNUTLS_RND_RANDOM, dst as *mut c_void, len) < 0 {
            std::ptr::write_bytes(dst, 0, len);
            if let Some(rng) = (ctx as *const Rng).as_ref() {
                rng.failed.set(true);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Keys and certificates (GnuTLS)

/// The signature algorithm of a handshake (`pss`) or certificate signature with a `spec` key.
fn sign_algo(spec: KeySpec, pss: bool) -> c_int {
    match spec {
        KeySpec::Rsa(_) if pss => GNUTLS_SIGN_RSA_PSS_RSAE_SHA256,
        KeySpec::Rsa(_) => GNUTLS_SIGN_RSA_SHA256,
        KeySpec::P256 => GNUTLS_SIGN_ECDSA_SHA256,
        KeySpec::P384 => GNUTLS_SIGN_ECDSA_SHA384,
    }
}

/// A `gnutls_privkey_t`.
struct Privkey(gnutls_privkey_t);
impl Drop for Privkey {
    fn drop(&mut self) {
        // SAFETY: a key from gnutls_privkey_init, deinit once.
        unsafe { gnutls_privkey_deinit(self.0) }
    }
}
impl Privkey {
    /// The scenario's PEM key (PKCS#8 or traditional), checked to be of type `spec`.
    fn from_pem_file(path: &Path, spec: KeySpec) -> Result<Self, String> {
        let pem = read(path)?;
        let mut raw: gnutls_privkey_t = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; owned by `Privkey` from here on.
        check("gnutls_privkey_init", unsafe {
            gnutls_privkey_init(&mut raw)
        })?;
        let key = Privkey(raw);
        let d = datum(&pem)?;
        // SAFETY: a live key and a datum over `pem`, which outlives the call; no password.
        let r = unsafe {
            gnutls_privkey_import_x509_raw(key.0, &d, GNUTLS_X509_FMT_PEM, std::ptr::null(), 0)
        };
        check(
            &format!("{}: gnutls_privkey_import_x509_raw", path.display()),
            r,
        )?;
        // SAFETY: a live key; `bits` may be NULL.
        let alg = unsafe { gnutls_privkey_get_pk_algorithm(key.0, std::ptr::null_mut()) };
        let want = match spec {
            KeySpec::Rsa(_) => GNUTLS_PK_RSA,
            KeySpec::P256 | KeySpec::P384 => GNUTLS_PK_ECDSA,
        };
        if alg != want {
            return Err(format!(
                "{}: GnuTLS key algorithm {alg}, expected {want} for {spec:?}",
                path.display()
            ));
        }
        Ok(key)
    }

    /// `gnutls_privkey_sign_data2`.
    fn sign(&self, algo: c_int, msg: &[u8]) -> Result<GDatum, String> {
        let d = datum(msg)?;
        let mut sig = GDatum::empty();
        // SAFETY: a live key, a datum over `msg`, and an out-datum owned (and freed) by `sig`.
        let r = unsafe { gnutls_privkey_sign_data2(self.0, algo, 0, &d, &mut sig.0) };
        check("gnutls_privkey_sign_data2", r)?;
        Ok(sig)
    }

    /// `gnutls_privkey_decrypt_data2`: PKCS#1 v1.5 decryption into `out`, whose length is the
    /// expected plaintext length.
    fn decrypt(&self, ct: &[u8], out: &mut [u8]) -> Result<(), String> {
        let d = datum(ct)?;
        // SAFETY: a live key, a datum over `ct`, and `out.len()` writable bytes.
        let r = unsafe { gnutls_privkey_decrypt_data2(self.0, 0, &d, out.as_mut_ptr(), out.len()) };
        check("gnutls_privkey_decrypt_data2", r).map(drop)
    }
}

/// A `gnutls_pubkey_t`.
struct Pubkey(gnutls_pubkey_t);
impl Drop for Pubkey {
    fn drop(&mut self) {
        // SAFETY: a key from gnutls_pubkey_init, deinit once.
        unsafe { gnutls_pubkey_deinit(self.0) }
    }
}
impl Pubkey {
    fn new() -> Result<Self, String> {
        let mut raw: gnutls_pubkey_t = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; owned by `Pubkey` from here on.
        check("gnutls_pubkey_init", unsafe {
            gnutls_pubkey_init(&mut raw)
        })?;
        Ok(Pubkey(raw))
    }

    /// `gnutls_pubkey_verify_data2`; a bad signature is an error.
    fn verify(&self, algo: c_int, msg: &[u8], sig: &[u8]) -> Result<(), String> {
        let (d, s) = (datum(msg)?, datum(sig)?);
        // SAFETY: a live key and two datums over live slices.
        let r = unsafe { gnutls_pubkey_verify_data2(self.0, algo, 0, &d, &s) };
        check("gnutls_pubkey_verify_data2", r).map(drop)
    }

    /// `gnutls_pubkey_encrypt_data`: PKCS#1 v1.5 encryption.
    fn encrypt(&self, pt: &[u8]) -> Result<GDatum, String> {
        let d = datum(pt)?;
        let mut ct = GDatum::empty();
        // SAFETY: a live key, a datum over `pt`, and an out-datum owned (and freed) by `ct`.
        let r = unsafe { gnutls_pubkey_encrypt_data(self.0, 0, &d, &mut ct.0) };
        check("gnutls_pubkey_encrypt_data", r)?;
        Ok(ct)
    }
}

/// The public components of a key, from which a `gnutls_pubkey_t` is built as new.
enum PubParts {
    Rsa {
        m: Vec<u8>,
        e: Vec<u8>,
    },
    Ec {
        curve: c_int,
        x: Vec<u8>,
        y: Vec<u8>,
    },
}
impl PubParts {
    fn of(key: &Privkey) -> Result<Self, String> {
        let public = Pubkey::new()?;
        // SAFETY: two live keys; the public key copies what it needs.
        let r = unsafe { gnutls_pubkey_import_privkey(public.0, key.0, 0, 0) };
        check("gnutls_pubkey_import_privkey", r)?;
        // SAFETY: a live key; `bits` may be NULL.
        let alg = unsafe { gnutls_privkey_get_pk_algorithm(key.0, std::ptr::null_mut()) };
        if alg == GNUTLS_PK_RSA {
            let (mut m, mut e) = (GDatum::empty(), GDatum::empty());
            // SAFETY: a live key and out-datums owned (and freed) by `m` and `e`.
            let r = unsafe { gnutls_pubkey_export_rsa_raw2(public.0, &mut m.0, &mut e.0, 0) };
            check("gnutls_pubkey_export_rsa_raw2", r)?;
            Ok(PubParts::Rsa {
                m: m.to_vec(),
                e: e.to_vec(),
            })
        } else {
            let (mut x, mut y) = (GDatum::empty(), GDatum::empty());
            let mut curve: c_int = 0;
            // SAFETY: a live key, an out-int and out-datums owned (and freed) by `x` and `y`.
            let r = unsafe {
                gnutls_pubkey_export_ecc_raw2(public.0, &mut curve, &mut x.0, &mut y.0, 0)
            };
            check("gnutls_pubkey_export_ecc_raw2", r)?;
            Ok(PubParts::Ec {
                curve,
                x: x.to_vec(),
                y: y.to_vec(),
            })
        }
    }

    /// A new `gnutls_pubkey_t` from the components (`gnutls_pubkey_init` +
    /// `gnutls_pubkey_import_rsa_raw` / `gnutls_pubkey_import_ecc_raw`; `gnutls_pubkey_deinit`
    /// when dropped): what a key that arrived in this handshake costs, minus certificate parsing.
    fn fresh(&self) -> Result<Pubkey, String> {
        let k = Pubkey::new()?;
        let r = match self {
            PubParts::Rsa { m, e } => {
                let (m, e) = (datum(m)?, datum(e)?);
                // SAFETY: a live key and datums over live vectors; GnuTLS copies them.
                unsafe { gnutls_pubkey_import_rsa_raw(k.0, &m, &e) }
            }
            PubParts::Ec { curve, x, y } => {
                let (x, y) = (datum(x)?, datum(y)?);
                // SAFETY: as above.
                unsafe { gnutls_pubkey_import_ecc_raw(k.0, *curve, &x, &y) }
            }
        };
        check("gnutls_pubkey_import_*_raw", r)?;
        Ok(k)
    }
}

/// A `gnutls_x509_crt_t`.
struct Crt(gnutls_x509_crt_t);
impl Drop for Crt {
    fn drop(&mut self) {
        // SAFETY: a certificate from gnutls_x509_crt_init, deinit once.
        unsafe { gnutls_x509_crt_deinit(self.0) }
    }
}
impl Crt {
    /// `gnutls_x509_crt_init` + `gnutls_x509_crt_import`.
    fn import(data: &[u8], format: c_int) -> Result<Self, String> {
        let mut raw: gnutls_x509_crt_t = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; owned by `Crt` from here on.
        check("gnutls_x509_crt_init", unsafe {
            gnutls_x509_crt_init(&mut raw)
        })?;
        let crt = Crt(raw);
        let d = datum(data)?;
        // SAFETY: a live certificate and a datum over `data`.
        let r = unsafe { gnutls_x509_crt_import(crt.0, &d, format) };
        check("gnutls_x509_crt_import", r)?;
        Ok(crt)
    }
}

/// The DER of the PEM certificate at `path`.
fn cert_der(path: &Path) -> Result<Vec<u8>, String> {
    let pem = read(path)?;
    let crt =
        Crt::import(&pem, GNUTLS_X509_FMT_PEM).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut der = GDatum::empty();
    // SAFETY: a live certificate and an out-datum owned (and freed) by `der`.
    let r = unsafe { gnutls_x509_crt_export2(crt.0, GNUTLS_X509_FMT_DER, &mut der.0) };
    check("gnutls_x509_crt_export2", r)?;
    Ok(der.to_vec())
}

/// What one side of a GnuTLS handshake does with the peer's DER leaf: `gnutls_pcert_import_x509_raw`
/// (`_gnutls_proc_x509_crt`) and `gnutls_pcert_deinit` when the session ends, and the decoding
/// in `gnutls_certificate_verify_peers2`.
fn decode_peer_cert(der: &[u8]) -> Result<(), String> {
    let d = datum(der)?;
    let mut pcert = MaybeUninit::<gnutls_pcert_st>::zeroed();
    // SAFETY: `pcert` is writable storage for a gnutls_pcert_st, which the call initialises;
    // on failure GnuTLS leaves nothing allocated in it.
    let r = unsafe { gnutls_pcert_import_x509_raw(pcert.as_mut_ptr(), &d, GNUTLS_X509_FMT_DER, 0) };
    check("gnutls_pcert_import_x509_raw", r)?;
    // SAFETY: a pcert the import above filled; deinit once.
    unsafe { gnutls_pcert_deinit(pcert.as_mut_ptr()) };
    Crt::import(der, GNUTLS_X509_FMT_DER).map(drop)
}

// ---------------------------------------------------------------------------------------------
// Key agreement (nettle, GMP)

/// A GMP integer (`mpz_t`), cleared when dropped.
struct Mpz(mpz_struct);
impl Drop for Mpz {
    fn drop(&mut self) {
        // SAFETY: initialised by __gmpz_init in `new`, cleared once.
        unsafe { __gmpz_clear(&mut self.0) }
    }
}
impl Mpz {
    fn new() -> Self {
        let mut z = MaybeUninit::<mpz_struct>::uninit();
        // SAFETY: __gmpz_init initialises the struct (to 0); GMP keeps no pointer to the struct
        // itself, so it may be moved afterwards.
        unsafe {
            __gmpz_init(z.as_mut_ptr());
            Mpz(z.assume_init())
        }
    }
    fn ptr(&mut self) -> *mut mpz_struct {
        &mut self.0
    }
    fn get(&self) -> *const mpz_struct {
        &self.0
    }
    /// The unsigned big-endian number `b` (`nettle_mpz_set_str_256_u`, as GnuTLS's
    /// `_gnutls_mpi_init_scan_nz` reads peer values).
    fn from_bytes(b: &[u8]) -> Self {
        let mut z = Mpz::new();
        // SAFETY: `b.len()` readable bytes and a live integer.
        unsafe { nettle_mpz_set_str_256_u(z.ptr(), b.len(), b.as_ptr()) };
        z
    }
    fn from_datum(d: &gnutls_datum_t) -> Result<Self, String> {
        // SAFETY: the exported GnuTLS data this is called with points at `size` static bytes.
        let b = unsafe { datum_slice(d) }.ok_or("empty GnuTLS datum")?;
        Ok(Mpz::from_bytes(b))
    }
    /// Big-endian, exactly `len` bytes (`nettle_mpz_get_str_256`); an error if it does not fit.
    fn to_bytes(&self, len: usize) -> Result<Vec<u8>, String> {
        // SAFETY: a live integer.
        if unsafe { nettle_mpz_sizeinbase_256_u(self.get()) } > len {
            return Err(format!("integer longer than {len} bytes"));
        }
        let mut out = vec![0u8; len];
        // SAFETY: `len` writable bytes, and the value fits in them (checked above).
        unsafe { nettle_mpz_get_str_256(len, out.as_mut_ptr(), self.get()) };
        Ok(out)
    }
    /// Big-endian without leading zero bytes (`_gnutls_mpi_dprint`).
    fn to_bytes_min(&self) -> Result<Vec<u8>, String> {
        // SAFETY: a live integer.
        let len = unsafe { nettle_mpz_sizeinbase_256_u(self.get()) };
        self.to_bytes(len)
    }
    fn cmp_ui(&self, v: u64) -> c_int {
        // SAFETY: a live integer.
        unsafe { __gmpz_cmp_ui(self.get(), v as _) }
    }
    fn cmp(&self, o: &Mpz) -> c_int {
        // SAFETY: two live integers.
        unsafe { __gmpz_cmp(self.get(), o.get()) }
    }
    /// `mpz_powm(self, b, e, m)`: GMP's variable-time modular exponentiation, which GnuTLS uses
    /// for DH (`lib/nettle/pk.c` directly, and `_gnutls_mpi_powm` = `wrap_nettle_mpi_powm`).
    fn powm(b: &Mpz, e: &Mpz, m: &Mpz) -> Mpz {
        let mut r = Mpz::new();
        // SAFETY: four live integers; `r` is distinct from the inputs.
        unsafe { __gmpz_powm(r.ptr(), b.get(), e.get(), m.get()) };
        r
    }
}

/// A nettle `ecc_point`, cleared when dropped.
struct EccPoint(ecc_point);
impl Drop for EccPoint {
    fn drop(&mut self) {
        // SAFETY: initialised by nettle_ecc_point_init, cleared once.
        unsafe { nettle_ecc_point_clear(&mut self.0) }
    }
}
impl EccPoint {
    fn new(curve: *const ecc_curve) -> Self {
        let mut p = MaybeUninit::<ecc_point>::uninit();
        // SAFETY: `curve` is one of nettle's static curves; the init fills both fields, and the
        // struct holds no pointer to itself.
        unsafe {
            nettle_ecc_point_init(p.as_mut_ptr(), curve);
            EccPoint(p.assume_init())
        }
    }
    /// `ecc_point_get`.
    fn coordinates(&self) -> (Mpz, Mpz) {
        let (mut x, mut y) = (Mpz::new(), Mpz::new());
        // SAFETY: a live point and two live integers.
        unsafe { nettle_ecc_point_get(&self.0, x.ptr(), y.ptr()) };
        (x, y)
    }
}

/// A nettle `ecc_scalar`, cleared when dropped.
struct EccScalar(ecc_scalar);
impl Drop for EccScalar {
    fn drop(&mut self) {
        // SAFETY: initialised by nettle_ecc_scalar_init, cleared once.
        unsafe { nettle_ecc_scalar_clear(&mut self.0) }
    }
}
impl EccScalar {
    fn new(curve: *const ecc_curve) -> Self {
        let mut s = MaybeUninit::<ecc_scalar>::uninit();
        // SAFETY: as for `EccPoint::new`.
        unsafe {
            nettle_ecc_scalar_init(s.as_mut_ptr(), curve);
            EccScalar(s.assume_init())
        }
    }
}

fn p256() -> Result<*const ecc_curve, String> {
    // SAFETY: returns a pointer to nettle's static curve description.
    let c = unsafe { nettle_get_secp_256r1() };
    if c.is_null() {
        Err("nettle has no secp256r1".into())
    } else {
        Ok(c)
    }
}

/// A P-256 ECDHE key pair as GnuTLS keeps it: the scalar, and the public point's coordinates as
/// they travel in the key share.
struct P256Key {
    k: Mpz,
    x: Vec<u8>,
    y: Vec<u8>,
}

/// GnuTLS's ECDHE key generation, `wrap_nettle_pk_generate_keys(GNUTLS_PK_ECDSA, SECP256R1)`:
/// `ecdsa_generate_keypair` (random scalar, `ecc_point_mul_g`), `ecc_point_get`,
/// `ecc_scalar_get`, and the coordinates written out for the key share.
fn p256_keygen(rng: &Rng) -> Result<P256Key, String> {
    let curve = p256()?;
    let mut public = EccPoint::new(curve);
    let mut key = EccScalar::new(curve);
    // SAFETY: a point and a scalar on the same curve; `rng` outlives the call and `rng_fill`
    // matches nettle_random_func.
    unsafe { nettle_ecdsa_generate_keypair(&mut public.0, &mut key.0, rng.ctx(), rng_fill) };
    rng.check()?;
    let (x, y) = public.coordinates();
    let mut k = Mpz::new();
    // SAFETY: a live scalar and a live integer.
    unsafe { nettle_ecc_scalar_get(&key.0, k.ptr()) };
    Ok(P256Key {
        k,
        x: x.to_bytes(P256_LEN)?,
        y: y.to_bytes(P256_LEN)?,
    })
}

/// GnuTLS's ECDH derivation, `_wrap_nettle_pk_derive(GNUTLS_PK_EC)`: the peer's coordinates
/// read in, `ecc_point_set` (on-curve check), `ecc_scalar_set`, `ecc_point_mul`,
/// `ecc_point_get`, and the x coordinate written out as the shared secret.
fn p256_derive(k: &Mpz, peer_x: &[u8], peer_y: &[u8]) -> Result<Vec<u8>, String> {
    let curve = p256()?;
    let (x, y) = (Mpz::from_bytes(peer_x), Mpz::from_bytes(peer_y));
    let mut peer = EccPoint::new(curve);
    // SAFETY: a live point and two live integers.
    if unsafe { nettle_ecc_point_set(&mut peer.0, x.get(), y.get()) } == 0 {
        return Err("ECDH: the peer's point is not on P-256".into());
    }
    let mut scalar = EccScalar::new(curve);
    // SAFETY: a live scalar and a live integer.
    if unsafe { nettle_ecc_scalar_set(&mut scalar.0, k.get()) } == 0 {
        return Err("ECDH: invalid private scalar".into());
    }
    let mut r = EccPoint::new(curve);
    // SAFETY: three live objects on the same curve; `r` is distinct from the inputs.
    unsafe { nettle_ecc_point_mul(&mut r.0, &scalar.0, &peer.0) };
    let (rx, ry) = r.coordinates();
    if rx.cmp_ui(0) == 0 && ry.cmp_ui(0) == 0 {
        return Err("ECDH: shared point at infinity".into());
    }
    rx.to_bytes(P256_LEN)
}

/// A finite-field DH group with its prime-order subgroup.
struct Ffdhe {
    p: Mpz,
    g: Mpz,
    q: Mpz,
}
impl Ffdhe {
    /// RFC 7919 ffdhe2048 as exported by GnuTLS (`gnutls_ffdhe_2048_group_prime`, `_generator`,
    /// `_q`), the group its TLS code negotiates.
    fn ffdhe2048() -> Result<Self, String> {
        // SAFETY: reads exported, immutable datums of the GnuTLS library; their data is static.
        unsafe {
            Ok(Ffdhe {
                p: Mpz::from_datum(&gnutls_ffdhe_2048_group_prime)?,
                g: Mpz::from_datum(&gnutls_ffdhe_2048_group_generator)?,
                q: Mpz::from_datum(&gnutls_ffdhe_2048_group_q)?,
            })
        }
    }
}

/// A DHE key pair: the secret exponent and the public value as it travels.
struct DhKey {
    x: Mpz,
    y: Vec<u8>,
}

/// GnuTLS's DHE key generation with the group's q known (`wrap_nettle_pk_generate_keys`,
/// `GNUTLS_PK_DH`): x = 1 + `nettle_mpz_random`(q - 2), y = `mpz_powm`(g, x, p), again while
/// y = 1 (up to three tries), and y written out for the key exchange message.
fn dh_keygen(grp: &Ffdhe, rng: &Rng) -> Result<DhKey, String> {
    let mut r = Mpz::new();
    // SAFETY: live integers; `r` is distinct from `q`.
    unsafe { __gmpz_sub_ui(r.ptr(), grp.q.get(), 2) };
    for _ in 0..3 {
        let mut x = Mpz::new();
        // SAFETY: live integers; `rng` outlives the call and `rng_fill` matches
        // nettle_random_func.
        unsafe { nettle_mpz_random(x.ptr(), rng.ctx(), rng_fill, r.get()) };
        rng.check()?;
        // SAFETY: in-place add on a live integer (GMP allows aliasing here).
        unsafe { __gmpz_add_ui(x.ptr(), x.get(), 1) };
        let y = Mpz::powm(&grp.g, &x, &grp.p);
        if y.cmp_ui(1) != 0 {
            return Ok(DhKey {
                y: y.to_bytes_min()?,
                x,
            });
        }
    }
    Err("DH: key generation gave y = 1 three times".into())
}

/// GnuTLS's DHE derivation (`_wrap_nettle_pk_derive`, `GNUTLS_PK_DH`, q known): the peer
/// value read in and checked (1 < y < p-1, `mpz_powm`(y, q, p) = 1), the shared secret
/// `mpz_powm`(y, x, p) checked (not 0, 1, p-1) and written out without leading zeros.
fn dh_derive(grp: &Ffdhe, x: &Mpz, peer_y: &[u8]) -> Result<Vec<u8>, String> {
    let f = Mpz::from_bytes(peer_y);
    let mut p1 = Mpz::new();
    // SAFETY: live integers; `p1` is distinct from `p`.
    unsafe { __gmpz_sub_ui(p1.ptr(), grp.p.get(), 1) };
    if f.cmp_ui(1) == 0 || f.cmp_ui(0) == 0 || f.cmp(&p1) >= 0 {
        return Err("DH: the peer's value is out of range".into());
    }
    if Mpz::powm(&f, &grp.q, &grp.p).cmp_ui(1) != 0 {
        return Err("DH: the peer's value is not in the q-order subgroup".into());
    }
    let k = Mpz::powm(&f, x, &grp.p);
    if k.cmp_ui(1) == 0 || k.cmp_ui(0) == 0 || k.cmp(&p1) == 0 {
        return Err("DH: degenerate shared secret".into());
    }
    k.to_bytes_min()
}

/// An X25519 key pair.
struct X25519Key {
    private: [u8; CURVE25519_SIZE],
    public: [u8; CURVE25519_SIZE],
}

/// GnuTLS's X25519 key generation: `gnutls_rnd` for the scalar, `curve25519_mul_g`.
fn x25519_keygen() -> Result<X25519Key, String> {
    let mut k = X25519Key {
        private: [0; CURVE25519_SIZE],
        public: [0; CURVE25519_SIZE],
    };
    // SAFETY: 32 writable bytes.
    let r = unsafe {
        gnutls_rnd(
            GNUTLS_RND_RANDOM,
            k.private.as_mut_ptr() as *mut c_void,
            CURVE25519_SIZE,
        )
    };
    check("gnutls_rnd", r)?;
    // SAFETY: 32-byte output and input buffers, as curve25519_mul_g requires.
    unsafe { nettle_curve25519_mul_g(k.public.as_mut_ptr(), k.private.as_ptr()) };
    Ok(k)
}

/// GnuTLS's X25519 derivation: `curve25519_mul` and an all-zero check.
fn x25519_derive(
    private: &[u8; CURVE25519_SIZE],
    peer: &[u8; CURVE25519_SIZE],
) -> Result<[u8; CURVE25519_SIZE], String> {
    let mut out = [0u8; CURVE25519_SIZE];
    // SAFETY: 32-byte buffers, as curve25519_mul requires.
    unsafe { nettle_curve25519_mul(out.as_mut_ptr(), private.as_ptr(), peer.as_ptr()) };
    if out.iter().all(|&b| b == 0) {
        return Err("X25519: all-zero shared secret".into());
    }
    Ok(out)
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
            let key = Privkey::from_pem_file(&set.server_key, spec).unwrap();
            let parts = PubParts::of(&key).unwrap();
            let msg = [0x5au8; 64];
            for pss in [false, true] {
                let algo = sign_algo(spec, pss);
                let mut sig = key.sign(algo, &msg).unwrap().to_vec();
                parts.fresh().unwrap().verify(algo, &msg, &sig).unwrap();
                let n = sig.len();
                sig[n - 5] ^= 0x01; // inside s for ECDSA (DER r, s)
                let e = parts.fresh().unwrap().verify(algo, &msg, &sig).unwrap_err();
                assert!(
                    e.contains(&GNUTLS_E_PK_SIG_VERIFY_FAILED.to_string()),
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
        let key = Privkey::from_pem_file(&set.server_key, spec).unwrap();
        let pm = [7u8; PREMASTER_LEN];
        let ct = PubParts::of(&key)
            .unwrap()
            .fresh()
            .unwrap()
            .encrypt(&pm)
            .unwrap();
        let mut out = [0u8; PREMASTER_LEN];
        key.decrypt(&ct.to_vec(), &mut out).unwrap();
        assert_eq!(out, pm);
        assert!(Privkey::from_pem_file(&set.server_key, KeySpec::P256).is_err());
    }

    /// The timed key agreement is real: both sides derive the same secret.
    #[test]
    fn key_agreement_agrees() {
        let rng = Rng::new();
        let (a, b) = (p256_keygen(&rng).unwrap(), p256_keygen(&rng).unwrap());
        let s1 = p256_derive(&a.k, &b.x, &b.y).unwrap();
        assert_eq!(s1, p256_derive(&b.k, &a.x, &a.y).unwrap());
        assert_eq!(s1.len(), P256_LEN);
        assert_ne!(s1, p256_derive(&a.k, &a.x, &a.y).unwrap());
        let mut off = b.y.clone();
        off[P256_LEN - 1] ^= 1;
        assert!(
            p256_derive(&a.k, &b.x, &off).is_err(),
            "off-curve point accepted"
        );

        let grp = Ffdhe::ffdhe2048().unwrap();
        let (a, b) = (
            dh_keygen(&grp, &rng).unwrap(),
            dh_keygen(&grp, &rng).unwrap(),
        );
        let s1 = dh_derive(&grp, &a.x, &b.y).unwrap();
        assert_eq!(s1, dh_derive(&grp, &b.x, &a.y).unwrap());
        assert!(s1.len() > 240, "{}", s1.len());
        assert!(dh_derive(&grp, &a.x, &[1]).is_err());
        // Full-length exponents, as GnuTLS draws them below q = (p-1)/2.
        assert_eq!(grp.q.to_bytes_min().map(|q| bit_len(&q)), Ok(2047));
        assert!(bit_len(&a.x.to_bytes_min().unwrap()) > 2000);
        assert_eq!(Gnutls.dh_name(), "ffdhe2048/2047");
        // SAFETY: reads an exported constant.
        assert_eq!(unsafe { gnutls_ffdhe_2048_key_bits }, 256);

        let (a, b) = (x25519_keygen().unwrap(), x25519_keygen().unwrap());
        assert_eq!(
            x25519_derive(&a.private, &b.public).unwrap(),
            x25519_derive(&b.private, &a.public).unwrap()
        );
    }

    #[test]
    fn names_say_what_timed_it() {
        let n = Gnutls.name();
        assert!(n.starts_with("GnuTLS 3."), "{n}");
        assert!(n.contains("nettle 3."), "{n}");
        assert!(!Gnutls.rsa_pss(TlsVersion::Tls12));
        assert!(Gnutls.rsa_pss(TlsVersion::Tls13));
        assert_eq!(bit_len(&[0, 1, 0]), 9);
        assert_eq!(bit_len(&[0x80]), 8);
        assert_eq!(bit_len(&[]), 0);
    }
}
