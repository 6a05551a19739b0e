//! Phase-1 keying material (RFC 2409 5 and Appendix B) and the AES-CBC protection of
//! messages 5, 6 and every later exchange under the phase-1 SA.

use crate::error::Phase1Error;
use crate::suite::HashAlg;
use openssl::hash::Hasher;
use openssl::pkey::PKey;
use openssl::sign::Signer;
use openssl::symm::{Cipher, Crypter, Mode};
use zeroize::Zeroizing;

/// AES block size.
pub const BLOCK: usize = 16;

/// prf(key, parts...) = HMAC with the negotiated hash (RFC 2409 5).
pub fn prf(h: HashAlg, key: &[u8], parts: &[&[u8]]) -> Result<Zeroizing<Vec<u8>>, Phase1Error> {
    let k = PKey::hmac(key)?;
    let mut s = Signer::new(h.md(), &k)?;
    for p in parts {
        s.update(p)?;
    }
    Ok(Zeroizing::new(s.sign_to_vec()?))
}

/// The negotiated hash over the parts (the phase-1 IVs, RFC 2409 Appendix B).
pub fn hash(h: HashAlg, parts: &[&[u8]]) -> Result<Vec<u8>, Phase1Error> {
    let mut x = Hasher::new(h.md())?;
    for p in parts {
        x.update(p)?;
    }
    Ok(x.finish()?.to_vec())
}

/// SKEYID and its three derivatives (RFC 2409 5), plus the cipher key cut from SKEYID_e.
pub struct Phase1Keys {
    /// SKEYID = prf(pre-shared-key, Ni_b | Nr_b) for pre-shared keys, prf(Ni_b | Nr_b,
    /// g^xy) for signatures.
    pub skeyid: Zeroizing<Vec<u8>>,
    /// SKEYID_d: keying material for later SAs (GDOI's KEK and TEK protection, RFC 6407 3.2).
    pub skeyid_d: Zeroizing<Vec<u8>>,
    /// SKEYID_a: authenticates later exchanges (the HASH payloads of GROUPKEY-PULL).
    pub skeyid_a: Zeroizing<Vec<u8>>,
    /// The AES key (RFC 2409 Appendix B: SKEYID_e, expanded if shorter than the key).
    pub enc_key: Zeroizing<Vec<u8>>,
}

impl core::fmt::Debug for Phase1Keys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Phase1Keys(..)")
    }
}

impl Phase1Keys {
    /// Derives the keys of a pre-shared-key exchange.
    pub fn derive_psk(
        h: HashAlg,
        psk: &[u8],
        ni: &[u8],
        nr: &[u8],
        gxy: &[u8],
        (cky_i, cky_r): (&[u8; 8], &[u8; 8]),
        aes_bits: u16,
    ) -> Result<Phase1Keys, Phase1Error> {
        let skeyid = prf(h, psk, &[ni, nr])?;
        Phase1Keys::from_skeyid(h, skeyid, gxy, (cky_i, cky_r), aes_bits)
    }

    /// Derives the keys of a signature exchange: `SKEYID = prf(Ni_b | Nr_b, g^xy)` (RFC 2409
    /// 5: with signatures the nonces key the PRF and the shared secret is its input).
    pub fn derive_sig(
        h: HashAlg,
        ni: &[u8],
        nr: &[u8],
        gxy: &[u8],
        (cky_i, cky_r): (&[u8; 8], &[u8; 8]),
        aes_bits: u16,
    ) -> Result<Phase1Keys, Phase1Error> {
        let mut nonces = Zeroizing::new(Vec::with_capacity(ni.len() + nr.len()));
        nonces.extend_from_slice(ni);
        nonces.extend_from_slice(nr);
        let skeyid = prf(h, &nonces, &[gxy])?;
        Phase1Keys::from_skeyid(h, skeyid, gxy, (cky_i, cky_r), aes_bits)
    }

    /// SKEYID_d/_a/_e and the cipher key from SKEYID (RFC 2409 5 and Appendix B), the same
    /// for every authentication method.
    fn from_skeyid(
        h: HashAlg,
        skeyid: Zeroizing<Vec<u8>>,
        gxy: &[u8],
        (cky_i, cky_r): (&[u8; 8], &[u8; 8]),
        aes_bits: u16,
    ) -> Result<Phase1Keys, Phase1Error> {
        let skeyid_d = prf(h, &skeyid, &[gxy, cky_i, cky_r, &[0]])?;
        let skeyid_a = prf(h, &skeyid, &[&skeyid_d, gxy, cky_i, cky_r, &[1]])?;
        let skeyid_e = prf(h, &skeyid, &[&skeyid_a, gxy, cky_i, cky_r, &[2]])?;
        let need = usize::from(aes_bits / 8);
        // Appendix B: Ka = K1 | K2 | ... with K1 = prf(SKEYID_e, 0), Kn = prf(SKEYID_e, Kn-1)
        // when SKEYID_e is too short; otherwise its leading octets.
        let enc_key = if skeyid_e.len() >= need {
            Zeroizing::new(skeyid_e[..need].to_vec())
        } else {
            let mut ka = Zeroizing::new(Vec::new());
            let mut k = prf(h, &skeyid_e, &[&[0]])?;
            while ka.len() < need {
                ka.extend_from_slice(&k);
                k = prf(h, &skeyid_e, &[&k])?;
            }
            ka.truncate(need);
            ka
        };
        Ok(Phase1Keys {
            skeyid,
            skeyid_d,
            skeyid_a,
            enc_key,
        })
    }
}

fn cipher(key: &[u8]) -> Result<Cipher, Phase1Error> {
    match key.len() {
        16 => Ok(Cipher::aes_128_cbc()),
        32 => Ok(Cipher::aes_256_cbc()),
        _ => Err(Phase1Error::Crypto("AES key length")),
    }
}

/// AES-CBC without padding of its own: `plain` is zero-padded to the block size here
/// (RFC 2409 Appendix B lets the receiver ignore what follows the last payload).
pub fn encrypt(key: &[u8], iv: &[u8], plain: &[u8]) -> Result<Vec<u8>, Phase1Error> {
    let mut data = plain.to_vec();
    let pad = (BLOCK - data.len() % BLOCK) % BLOCK;
    data.resize(data.len() + pad, 0);
    let mut c = Crypter::new(cipher(key)?, Mode::Encrypt, key, Some(&iv[..BLOCK]))?;
    c.pad(false);
    let mut out = vec![0u8; data.len() + BLOCK];
    let mut n = c.update(&data, &mut out)?;
    n += c.finalize(&mut out[n..])?;
    out.truncate(n);
    Ok(out)
}

/// Decrypts a body; refuses one that is empty or not whole blocks.
pub fn decrypt(key: &[u8], iv: &[u8], ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Phase1Error> {
    if ct.is_empty() || !ct.len().is_multiple_of(BLOCK) {
        return Err(Phase1Error::Decrypt("not whole AES blocks"));
    }
    let mut c = Crypter::new(cipher(key)?, Mode::Decrypt, key, Some(&iv[..BLOCK]))?;
    c.pad(false);
    let mut out = Zeroizing::new(vec![0u8; ct.len() + BLOCK]);
    let mut n = c.update(ct, &mut out)?;
    n += c.finalize(&mut out[n..])?;
    out.truncate(n);
    Ok(out)
}

/// The last ciphertext block: the IV of the next message in the same exchange (RFC 2409 B).
pub fn last_block(ct: &[u8]) -> [u8; BLOCK] {
    let mut b = [0u8; BLOCK];
    if ct.len() >= BLOCK {
        b.copy_from_slice(&ct[ct.len() - BLOCK..]);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_rfc4231_case2() {
        // RFC 4231 4.3 test case 2.
        let mac = prf(
            HashAlg::Sha256,
            b"Jefe",
            &[b"what do ya want ", b"for nothing?"],
        )
        .unwrap();
        assert_eq!(
            mac.iter().map(|b| format!("{b:02x}")).collect::<String>(),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn cbc_round_trip_and_refusals() {
        let key = [7u8; 32];
        let iv = [9u8; 16];
        let ct = encrypt(&key, &iv, b"seventeen octets!").unwrap();
        assert_eq!(ct.len(), 32);
        let pt = decrypt(&key, &iv, &ct).unwrap();
        assert_eq!(&pt[..17], b"seventeen octets!");
        assert!(decrypt(&key, &iv, &ct[..31]).is_err());
        assert!(decrypt(&key, &iv, &[]).is_err());
    }
}
