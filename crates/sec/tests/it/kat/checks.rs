//! The checks every MAC and AEAD vector goes through, for one implementation at a time.
//!
//! A positive vector must reproduce the expected output, verify, and then fail to verify after
//! one flipped bit in the tag, in the message (MAC) or in the ciphertext and in the AAD (AEAD);
//! a failed AEAD open must leave the ciphertext in place. A negative vector must be rejected.

use gander_sec::{CryptoError, CryptoProvider, EncAlgorithm, MacAlgorithm};

use crate::support::{one_bit_changed, Report};

/// A MAC test case: `tag` is the expected wire tag (already of `alg.tag_len()` bytes).
pub(crate) struct MacCase<'a> {
    pub label: &'a str,
    pub origin: &'a str,
    pub alg: MacAlgorithm,
    pub key: &'a [u8],
    pub iv: &'a [u8],
    pub data: &'a [u8],
    pub tag: &'a [u8],
    /// Seed for the flipped-bit positions.
    pub seed: usize,
}

/// A positive MAC vector, against every implementation.
pub(crate) fn mac_valid(r: &mut Report, impls: &[&dyn CryptoProvider], c: &MacCase) {
    r.vector(c.label);
    for p in impls {
        let at = || format!("{} [{}] {}", c.origin, p.name(), c.alg);
        let key = match p.mac_key(c.alg, c.key) {
            Ok(k) => k,
            Err(e) => {
                r.check(false, || format!("{}: key refused: {e}", at()));
                continue;
            }
        };
        let mut tag = vec![0u8; c.alg.tag_len()];
        let signed = key.sign(c.iv, c.data, &mut tag);
        r.check(signed.is_ok() && tag == c.tag, || {
            format!(
                "{}: sign gave {:?} {}, expected {}",
                at(),
                signed,
                hex::encode(&tag),
                hex::encode(c.tag)
            )
        });
        let v = key.verify(c.iv, c.data, c.tag);
        r.check(v.is_ok(), || {
            format!("{}: verify of the expected tag: {v:?}", at())
        });

        let bad_tag = one_bit_changed(c.tag, c.seed);
        let v = key.verify(c.iv, c.data, &bad_tag);
        r.check(v == Err(CryptoError::VerifyFailed), || {
            format!("{}: flipped tag bit accepted: {v:?}", at())
        });
        let bad_data = one_bit_changed(c.data, c.seed);
        let v = key.verify(c.iv, &bad_data, c.tag);
        r.check(v == Err(CryptoError::VerifyFailed), || {
            format!("{}: flipped message bit accepted: {v:?}", at())
        });
        if c.alg.needs_iv() {
            let bad_iv = one_bit_changed(c.iv, c.seed);
            let v = key.verify(&bad_iv, c.data, c.tag);
            r.check(v == Err(CryptoError::VerifyFailed), || {
                format!("{}: flipped IV bit accepted: {v:?}", at())
            });
        }
    }
}

/// A negative MAC vector: refusing the key counts as rejecting it (noted), otherwise verify
/// must fail.
pub(crate) fn mac_invalid(r: &mut Report, impls: &[&dyn CryptoProvider], c: &MacCase) {
    r.vector(c.label);
    for p in impls {
        let at = || format!("{} [{}] {}", c.origin, p.name(), c.alg);
        match p.mac_key(c.alg, c.key) {
            Err(_) => r.check(true, String::new),
            Ok(key) => {
                let v = key.verify(c.iv, c.data, c.tag);
                r.check(v.is_err(), || format!("{}: invalid tag accepted", at()));
            }
        }
    }
}

/// An AEAD test case. `tag` may be truncated (4..=16 bytes); `pt` is `None` for a vector that
/// must be rejected.
pub(crate) struct AeadCase<'a> {
    pub label: &'a str,
    pub origin: &'a str,
    pub alg: EncAlgorithm,
    pub key: &'a [u8],
    pub iv: &'a [u8; 12],
    pub aad: &'a [u8],
    pub pt: Option<&'a [u8]>,
    pub ct: &'a [u8],
    pub tag: &'a [u8],
    pub seed: usize,
}

/// Opens `ct` with each changed input; each must fail with `VerifyFailed` and leave `ct`.
#[allow(clippy::too_many_arguments)]
fn open_must_fail(
    r: &mut Report,
    key: &dyn gander_sec::AeadKey,
    at: &dyn Fn() -> String,
    what: &str,
    iv: &[u8; 12],
    aad: &[u8],
    ct: &[u8],
    tag: &[u8],
) {
    let mut buf = ct.to_vec();
    let v = key.open_in_place(iv, aad, &mut buf, tag);
    r.check(v == Err(CryptoError::VerifyFailed), || {
        format!("{}: {what}: open gave {v:?}", at())
    });
    r.check(buf == ct, || {
        format!("{}: {what}: failed open changed the buffer", at())
    });
}

/// A positive or negative AEAD vector, against every implementation.
pub(crate) fn aead(r: &mut Report, impls: &[&dyn CryptoProvider], c: &AeadCase) {
    r.vector(c.label);
    for p in impls {
        let at = || format!("{} [{}] {}", c.origin, p.name(), c.alg);
        let key = match p.aead_key(c.alg, c.key) {
            Ok(k) => k,
            Err(e) => {
                r.check(false, || format!("{}: key refused: {e}", at()));
                continue;
            }
        };
        let Some(pt) = c.pt else {
            open_must_fail(
                r,
                key.as_ref(),
                &at,
                "invalid vector",
                c.iv,
                c.aad,
                c.ct,
                c.tag,
            );
            continue;
        };
        // Seal: same ciphertext, and the expected (possibly truncated) tag is the full tag's prefix.
        let mut buf = pt.to_vec();
        let sealed = key.seal_in_place(c.iv, c.aad, &mut buf);
        r.check(
            matches!(&sealed, Ok(t) if t[..c.tag.len()] == *c.tag) && buf == c.ct,
            || {
                format!(
                    "{}: seal gave {:?} ct {}, expected ct {} tag {}",
                    at(),
                    sealed,
                    hex::encode(&buf),
                    hex::encode(c.ct),
                    hex::encode(c.tag)
                )
            },
        );
        // Open with the vector's tag.
        let mut buf = c.ct.to_vec();
        let v = key.open_in_place(c.iv, c.aad, &mut buf, c.tag);
        r.check(v.is_ok() && buf == pt, || {
            format!("{}: open gave {v:?} pt {}", at(), hex::encode(&buf))
        });
        // One flipped bit in the tag, the ciphertext and the AAD.
        open_must_fail(
            r,
            key.as_ref(),
            &at,
            "flipped tag bit",
            c.iv,
            c.aad,
            c.ct,
            &one_bit_changed(c.tag, c.seed),
        );
        if !c.ct.is_empty() {
            open_must_fail(
                r,
                key.as_ref(),
                &at,
                "flipped ciphertext bit",
                c.iv,
                c.aad,
                &one_bit_changed(c.ct, c.seed),
                c.tag,
            );
        }
        open_must_fail(
            r,
            key.as_ref(),
            &at,
            "flipped AAD bit",
            c.iv,
            &one_bit_changed(c.aad, c.seed),
            c.ct,
            c.tag,
        );
    }
}
