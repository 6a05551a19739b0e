//! Key agreement as GnuTLS 3.7's TLS code does it, in nettle (hogweed) and GMP
//! (`lib/nettle/pk.c`): P-256 ECDH, RFC 7919 ffdhe2048 DH with the group's q, and X25519.
//! GnuTLS 3.7 has no public key-agreement API (`gnutls_privkey_derive_secret` is 3.8.2), so
//! these call what its TLS code calls. Randomness for nettle is `gnutls_rnd(GNUTLS_RND_RANDOM)`,
//! the level GnuTLS uses for ephemeral keys (`rnd_tmpkey_func`).

use crate::sys::*;
use crate::{check, GnutlsError};
use std::cell::Cell;
use std::mem::MaybeUninit;
use std::os::raw::{c_int, c_void};

/// P-256 field elements and scalars, bytes.
pub const P256_LEN: usize = 32;
/// X25519 keys and shared secrets, bytes.
pub const X25519_LEN: usize = CURVE25519_SIZE;

/// Random bytes for nettle, from `gnutls_rnd(GNUTLS_RND_RANDOM)` as GnuTLS's `rnd_tmpkey_func`.
/// nettle's callback cannot fail, so a failure is recorded and checked after the call.
pub struct Rng {
    failed: Cell<bool>,
}
impl Default for Rng {
    fn default() -> Self {
        Self::new()
    }
}

impl Rng {
    /// A generator with no failure recorded.
    pub fn new() -> Self {
        Rng {
            failed: Cell::new(false),
        }
    }
    fn ctx(&self) -> *mut c_void {
        self as *const Rng as *mut c_void
    }
    fn check(&self) -> Result<(), GnutlsError> {
        if self.failed.replace(false) {
            Err(GnutlsError::Random)
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
    /// The unsigned big-endian number in a datum.
    ///
    /// # Safety
    /// `d.data` is NULL or points at `d.size` readable bytes.
    unsafe fn from_datum(d: &gnutls_datum_t) -> Result<Self, GnutlsError> {
        if d.data.is_null() {
            return Err(GnutlsError::KeyAgreement("empty GnuTLS datum"));
        }
        // SAFETY: checked non-NULL above; `size` readable bytes by the function's contract.
        let b = unsafe { std::slice::from_raw_parts(d.data, d.size as usize) };
        Ok(Mpz::from_bytes(b))
    }
    /// Big-endian, exactly `len` bytes (`nettle_mpz_get_str_256`); an error if it does not fit.
    fn to_bytes(&self, len: usize) -> Result<Vec<u8>, GnutlsError> {
        // SAFETY: a live integer.
        if unsafe { nettle_mpz_sizeinbase_256_u(self.get()) } > len {
            return Err(GnutlsError::IntegerTooLong(len));
        }
        let mut out = vec![0u8; len];
        // SAFETY: `len` writable bytes, and the value fits in them (checked above).
        unsafe { nettle_mpz_get_str_256(len, out.as_mut_ptr(), self.get()) };
        Ok(out)
    }
    /// Big-endian without leading zero bytes (`_gnutls_mpi_dprint`).
    fn to_bytes_min(&self) -> Result<Vec<u8>, GnutlsError> {
        // SAFETY: a live integer.
        let len = unsafe { nettle_mpz_sizeinbase_256_u(self.get()) };
        self.to_bytes(len)
    }
    /// Bits of the number (`mpz_sizeinbase(x, 2)`; 1 for 0).
    fn bits(&self) -> u32 {
        // SAFETY: a live integer.
        unsafe { __gmpz_sizeinbase(self.get(), 2) as u32 }
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

fn p256() -> Result<*const ecc_curve, GnutlsError> {
    // SAFETY: returns a pointer to nettle's static curve description.
    let c = unsafe { nettle_get_secp_256r1() };
    if c.is_null() {
        Err(GnutlsError::KeyAgreement("nettle has no secp256r1"))
    } else {
        Ok(c)
    }
}

/// A P-256 ECDHE key pair as GnuTLS keeps it: the scalar, and the public point's coordinates as
/// they travel in the key share.
pub struct P256Key {
    k: Mpz,
    /// The public point's x coordinate, big-endian, [`P256_LEN`] bytes.
    pub x: Vec<u8>,
    /// The public point's y coordinate, big-endian, [`P256_LEN`] bytes.
    pub y: Vec<u8>,
}

/// GnuTLS's ECDHE key generation, `wrap_nettle_pk_generate_keys(GNUTLS_PK_ECDSA, SECP256R1)`:
/// `ecdsa_generate_keypair` (random scalar, `ecc_point_mul_g`), `ecc_point_get`,
/// `ecc_scalar_get`, and the coordinates written out for the key share.
pub fn p256_keygen(rng: &Rng) -> Result<P256Key, GnutlsError> {
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
pub fn p256_derive(mine: &P256Key, peer_x: &[u8], peer_y: &[u8]) -> Result<Vec<u8>, GnutlsError> {
    let k = &mine.k;
    let curve = p256()?;
    let (x, y) = (Mpz::from_bytes(peer_x), Mpz::from_bytes(peer_y));
    let mut peer = EccPoint::new(curve);
    // SAFETY: a live point and two live integers.
    if unsafe { nettle_ecc_point_set(&mut peer.0, x.get(), y.get()) } == 0 {
        return Err(GnutlsError::KeyAgreement(
            "ECDH: the peer's point is not on P-256",
        ));
    }
    let mut scalar = EccScalar::new(curve);
    // SAFETY: a live scalar and a live integer.
    if unsafe { nettle_ecc_scalar_set(&mut scalar.0, k.get()) } == 0 {
        return Err(GnutlsError::KeyAgreement("ECDH: invalid private scalar"));
    }
    let mut r = EccPoint::new(curve);
    // SAFETY: three live objects on the same curve; `r` is distinct from the inputs.
    unsafe { nettle_ecc_point_mul(&mut r.0, &scalar.0, &peer.0) };
    let (rx, ry) = r.coordinates();
    if rx.cmp_ui(0) == 0 && ry.cmp_ui(0) == 0 {
        return Err(GnutlsError::KeyAgreement("ECDH: shared point at infinity"));
    }
    rx.to_bytes(P256_LEN)
}

/// A finite-field DH group with its prime-order subgroup.
pub struct Ffdhe {
    p: Mpz,
    g: Mpz,
    q: Mpz,
}
impl Ffdhe {
    /// RFC 7919 ffdhe2048 as exported by GnuTLS (`gnutls_ffdhe_2048_group_prime`, `_generator`,
    /// `_q`), the group its TLS code negotiates.
    pub fn ffdhe2048() -> Result<Self, GnutlsError> {
        // SAFETY: reads exported, immutable datums of the GnuTLS library, each pointing at `size`
        // bytes of static data.
        unsafe {
            Ok(Ffdhe {
                p: Mpz::from_datum(&gnutls_ffdhe_2048_group_prime)?,
                g: Mpz::from_datum(&gnutls_ffdhe_2048_group_generator)?,
                q: Mpz::from_datum(&gnutls_ffdhe_2048_group_q)?,
            })
        }
    }
}

impl Ffdhe {
    /// Bits of the subgroup order q = (p-1)/2, the bound of the secret exponents GnuTLS draws.
    pub fn q_bits(&self) -> u32 {
        self.q.bits()
    }
    /// The group's `gnutls_ffdhe_2048_key_bits`: the exponent length GnuTLS would use without q.
    pub fn key_bits() -> u32 {
        // SAFETY: reads an exported, immutable integer of the GnuTLS library.
        unsafe { gnutls_ffdhe_2048_key_bits }
    }
}

/// A DHE key pair: the secret exponent and the public value as it travels.
pub struct DhKey {
    x: Mpz,
    /// The public value, big-endian without leading zeros.
    pub y: Vec<u8>,
}

impl DhKey {
    /// Bits of the secret exponent.
    pub fn secret_bits(&self) -> u32 {
        self.x.bits()
    }
}

/// GnuTLS's DHE key generation with the group's q known (`wrap_nettle_pk_generate_keys`,
/// `GNUTLS_PK_DH`): x = 1 + `nettle_mpz_random`(q - 2), y = `mpz_powm`(g, x, p), again while
/// y = 1 (up to three tries), and y written out for the key exchange message.
pub fn dh_keygen(grp: &Ffdhe, rng: &Rng) -> Result<DhKey, GnutlsError> {
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
    Err(GnutlsError::KeyAgreement(
        "DH: key generation gave y = 1 three times",
    ))
}

/// GnuTLS's DHE derivation (`_wrap_nettle_pk_derive`, `GNUTLS_PK_DH`, q known): the peer
/// value read in and checked (1 < y < p-1, `mpz_powm`(y, q, p) = 1), the shared secret
/// `mpz_powm`(y, x, p) checked (not 0, 1, p-1) and written out without leading zeros.
pub fn dh_derive(grp: &Ffdhe, mine: &DhKey, peer_y: &[u8]) -> Result<Vec<u8>, GnutlsError> {
    let x = &mine.x;
    let f = Mpz::from_bytes(peer_y);
    let mut p1 = Mpz::new();
    // SAFETY: live integers; `p1` is distinct from `p`.
    unsafe { __gmpz_sub_ui(p1.ptr(), grp.p.get(), 1) };
    if f.cmp_ui(1) == 0 || f.cmp_ui(0) == 0 || f.cmp(&p1) >= 0 {
        return Err(GnutlsError::KeyAgreement(
            "DH: the peer's value is out of range",
        ));
    }
    if Mpz::powm(&f, &grp.q, &grp.p).cmp_ui(1) != 0 {
        return Err(GnutlsError::KeyAgreement(
            "DH: the peer's value is not in the q-order subgroup",
        ));
    }
    let k = Mpz::powm(&f, x, &grp.p);
    if k.cmp_ui(1) == 0 || k.cmp_ui(0) == 0 || k.cmp(&p1) == 0 {
        return Err(GnutlsError::KeyAgreement("DH: degenerate shared secret"));
    }
    k.to_bytes_min()
}

/// An X25519 key pair.
pub struct X25519Key {
    private: [u8; CURVE25519_SIZE],
    /// The public key.
    pub public: [u8; CURVE25519_SIZE],
}

/// GnuTLS's X25519 key generation: `gnutls_rnd` for the scalar, `curve25519_mul_g`.
pub fn x25519_keygen() -> Result<X25519Key, GnutlsError> {
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
pub fn x25519_derive(
    mine: &X25519Key,
    peer: &[u8; CURVE25519_SIZE],
) -> Result<[u8; CURVE25519_SIZE], GnutlsError> {
    let private = &mine.private;
    let mut out = [0u8; CURVE25519_SIZE];
    // SAFETY: 32-byte buffers, as curve25519_mul requires.
    unsafe { nettle_curve25519_mul(out.as_mut_ptr(), private.as_ptr(), peer.as_ptr()) };
    if out.iter().all(|&b| b == 0) {
        return Err(GnutlsError::KeyAgreement("X25519: all-zero shared secret"));
    }
    Ok(out)
}
