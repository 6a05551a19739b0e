//! Diffie-Hellman for phase 1: MODP group 14 (RFC 3526) and the ECP groups 19 and 20
//! (RFC 5903), with the peer's public value checked before use.
//!
//! Wire forms: a MODP public value is g^x as a big-endian integer left-padded to the prime's
//! 256 octets, and the shared secret g^xy likewise (RFC 2409 5 uses g^xy as the octet string
//! of the prime's length). An ECP public value is x | y, each the curve's coordinate size, and
//! the shared secret is the x coordinate of the product (RFC 5903 7, 9).

use crate::error::Phase1Error;
use crate::suite::Group;
use openssl::bn::{BigNum, BigNumContext};
use openssl::derive::Deriver;
use openssl::dh::Dh;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use zeroize::Zeroizing;

/// Octets of the group-14 prime.
const MODP2048_LEN: usize = 256;

enum Inner {
    Modp(Dh<Private>),
    Ec(EcKey<Private>),
}

/// An ephemeral key pair of one exchange.
pub struct KeyPair {
    group: Group,
    inner: Inner,
    public: Vec<u8>,
}

impl core::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeyPair")
            .field("group", &self.group)
            .finish_non_exhaustive()
    }
}

fn curve(group: Group) -> Option<(Nid, usize)> {
    match group {
        Group::Ecp256 => Some((Nid::X9_62_PRIME256V1, 32)),
        Group::Ecp384 => Some((Nid::SECP384R1, 48)),
        Group::Modp2048 => None,
    }
}

impl KeyPair {
    /// A fresh key pair in `group`.
    pub fn generate(group: Group) -> Result<KeyPair, Phase1Error> {
        match curve(group) {
            None => {
                let p = BigNum::get_rfc3526_prime_2048()?;
                let dh = Dh::from_pqg(p, None, BigNum::from_u32(2)?)?.generate_key()?;
                let public = dh.public_key().to_vec_padded(MODP2048_LEN as i32)?;
                Ok(KeyPair {
                    group,
                    inner: Inner::Modp(dh),
                    public,
                })
            }
            Some((nid, _)) => {
                let g = EcGroup::from_curve_name(nid)?;
                let key = EcKey::generate(&g)?;
                let mut ctx = BigNumContext::new()?;
                let pt =
                    key.public_key()
                        .to_bytes(&g, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
                Ok(KeyPair {
                    group,
                    inner: Inner::Ec(key),
                    public: pt[1..].to_vec(),
                })
            }
        }
    }

    /// The Key Exchange data to send.
    pub fn public(&self) -> &[u8] {
        &self.public
    }

    /// The shared secret with the peer's Key Exchange data, after checking it: the right
    /// length, a MODP value in 2..p-2 (RFC 2631's range, so neither 1 nor p-1 forces the
    /// secret), an ECP point on the curve.
    pub fn shared(&self, peer: &[u8]) -> Result<Zeroizing<Vec<u8>>, Phase1Error> {
        match &self.inner {
            Inner::Modp(dh) => {
                if peer.len() != MODP2048_LEN {
                    return Err(Phase1Error::InvalidKe);
                }
                let y = BigNum::from_slice(peer)?;
                let one = BigNum::from_u32(1)?;
                let mut pm1 = BigNum::new()?;
                pm1.checked_sub(dh.prime_p(), &one)?;
                if y <= one || y >= pm1 {
                    return Err(Phase1Error::InvalidKe);
                }
                // g^xy mod p, written as the prime's 256 octets. Not `Dh::compute_key`: it
                // returns OpenSSL's DH_compute_key buffer whole, ignoring the length that
                // function returns, so a secret whose top octet is zero (1 handshake in 256)
                // came out shifted left with a zero appended, and the phase-1 keys differed
                // from the peer's (strongSwan: "invalid ID_V1 payload length, decryption
                // failed?" on message 5). The private exponent carries BN_FLG_CONSTTIME from
                // key generation, so BN_mod_exp takes the constant-time path as
                // DH_compute_key does.
                let mut ctx = BigNumContext::new()?;
                let mut s = BigNum::new()?;
                s.mod_exp(&y, dh.private_key(), dh.prime_p(), &mut ctx)?;
                Ok(Zeroizing::new(s.to_vec_padded(MODP2048_LEN as i32)?))
            }
            Inner::Ec(key) => {
                let (nid, coord) = curve(self.group).ok_or(Phase1Error::Crypto("group"))?;
                if peer.len() != 2 * coord {
                    return Err(Phase1Error::InvalidKe);
                }
                let g = EcGroup::from_curve_name(nid)?;
                let mut ctx = BigNumContext::new()?;
                let mut enc = Vec::with_capacity(1 + peer.len());
                enc.push(0x04);
                enc.extend_from_slice(peer);
                let pt =
                    EcPoint::from_bytes(&g, &enc, &mut ctx).map_err(|_| Phase1Error::InvalidKe)?;
                let pk = EcKey::from_public_key(&g, &pt).map_err(|_| Phase1Error::InvalidKe)?;
                pk.check_key().map_err(|_| Phase1Error::InvalidKe)?;
                let mine = PKey::from_ec_key(key.clone())?;
                let theirs = PKey::from_ec_key(pk)?;
                let mut d = Deriver::new(&mine)?;
                d.set_peer(&theirs).map_err(|_| Phase1Error::InvalidKe)?;
                Ok(Zeroizing::new(d.derive_to_vec()?))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_agree_and_bad_values_are_refused() {
        for g in [Group::Modp2048, Group::Ecp256, Group::Ecp384] {
            let a = KeyPair::generate(g).unwrap();
            let b = KeyPair::generate(g).unwrap();
            assert_eq!(
                *a.shared(b.public()).unwrap(),
                *b.shared(a.public()).unwrap()
            );
            assert_eq!(
                a.shared(&b.public()[1..]).unwrap_err(),
                Phase1Error::InvalidKe
            );
            let mut off = b.public().to_vec();
            *off.last_mut().unwrap() ^= 1;
            if g != Group::Modp2048 {
                assert_eq!(
                    a.shared(&off).unwrap_err(),
                    Phase1Error::InvalidKe,
                    "point off the curve"
                );
            }
        }
        let a = KeyPair::generate(Group::Modp2048).unwrap();
        let mut one = vec![0u8; 256];
        one[255] = 1;
        assert_eq!(a.shared(&one).unwrap_err(), Phase1Error::InvalidKe);
    }

    /// A MODP secret whose top octet is zero (about 1 exchange in 256): it is the 256-octet
    /// big-endian g^xy, as an independent computation gives it, on both sides. With
    /// `Dh::compute_key` it came out shifted (the strongSwan interop tests failed now and
    /// then with "decryption failed" on message 5).
    #[test]
    fn a_modp_secret_with_a_leading_zero_octet_is_padded_not_shifted() {
        let p = BigNum::get_rfc3526_prime_2048().unwrap();
        let mut ctx = BigNumContext::new().unwrap();
        for _ in 0..4096 {
            let a = KeyPair::generate(Group::Modp2048).unwrap();
            let b = KeyPair::generate(Group::Modp2048).unwrap();
            let s = a.shared(b.public()).unwrap();
            if s[0] != 0 {
                continue;
            }
            let Inner::Modp(dh) = &a.inner else {
                unreachable!()
            };
            let mut want = BigNum::new().unwrap();
            let y = BigNum::from_slice(b.public()).unwrap();
            want.mod_exp(&y, dh.private_key(), &p, &mut ctx).unwrap();
            assert_eq!(&s[..], &want.to_vec_padded(256).unwrap()[..]);
            assert_eq!(s, b.shared(a.public()).unwrap());
            return;
        }
        panic!("no secret with a leading zero octet in 4096 exchanges");
    }
}
