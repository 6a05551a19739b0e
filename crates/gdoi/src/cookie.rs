//! Anti-clogging cookies (RFC 2408 2.5.3): the responder's cookie is a keyed hash of the
//! peer's address and port and the initiator's cookie under a local secret, so a third
//! message from a spoofed address (which never saw message 2) is refused before the
//! responder spends a Diffie-Hellman computation on it.

use crate::error::Phase1Error;
use crate::keys::prf;
use crate::suite::HashAlg;
use rand::RngCore;
use zeroize::Zeroizing;

/// The responder's cookie secret (rotate it by building a new jar).
pub struct CookieJar {
    secret: Zeroizing<[u8; 32]>,
}

impl CookieJar {
    /// A jar with a random secret.
    pub fn new() -> CookieJar {
        let mut s = Zeroizing::new([0u8; 32]);
        rand::thread_rng().fill_bytes(&mut s[..]);
        CookieJar { secret: s }
    }

    /// The responder cookie for a peer (its address and port as octets) and its cookie.
    pub fn responder_cookie(&self, peer: &[u8], cky_i: &[u8; 8]) -> Result<[u8; 8], Phase1Error> {
        let m = prf(HashAlg::Sha256, &self.secret[..], &[peer, cky_i])?;
        let mut c = [0u8; 8];
        c.copy_from_slice(&m[..8]);
        if c == [0; 8] {
            c[7] = 1; // a zero cookie means "none yet" (RFC 2408 3.1)
        }
        Ok(c)
    }

    /// Whether `cky_r` is the cookie this jar gave the peer.
    pub fn check(
        &self,
        peer: &[u8],
        cky_i: &[u8; 8],
        cky_r: &[u8; 8],
    ) -> Result<bool, Phase1Error> {
        use subtle::ConstantTimeEq;
        Ok(self.responder_cookie(peer, cky_i)?.ct_eq(cky_r).into())
    }
}

impl Default for CookieJar {
    fn default() -> Self {
        CookieJar::new()
    }
}

/// A random initiator cookie (never zero).
pub fn initiator_cookie() -> [u8; 8] {
    let mut c = [0u8; 8];
    while c == [0; 8] {
        rand::thread_rng().fill_bytes(&mut c);
    }
    c
}
