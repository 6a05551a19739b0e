//! What phase 1 negotiates (RFC 2409 Appendix A): cipher AES-CBC-128/256 (RFC 3602), hash and
//! PRF SHA-256/384 (RFC 4868), Diffie-Hellman group 14, 19 or 20, authentication method, life.

use gander_wire::isakmp::sa::ike_attr;
use gander_wire::isakmp::{Attribute, Transform};

/// The negotiated hash; its HMAC is the PRF (RFC 2409 5: "the HMAC version of the negotiated
/// hash algorithm").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HashAlg {
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
}

impl HashAlg {
    /// The OpenSSL digest.
    pub fn md(self) -> openssl::hash::MessageDigest {
        match self {
            HashAlg::Sha256 => openssl::hash::MessageDigest::sha256(),
            HashAlg::Sha384 => openssl::hash::MessageDigest::sha384(),
        }
    }
    fn attr(self) -> u16 {
        match self {
            HashAlg::Sha256 => ike_attr::HASH_SHA256,
            HashAlg::Sha384 => ike_attr::HASH_SHA384,
        }
    }
    fn from_attr(v: u16) -> Option<Self> {
        match v {
            ike_attr::HASH_SHA256 => Some(HashAlg::Sha256),
            ike_attr::HASH_SHA384 => Some(HashAlg::Sha384),
            _ => None,
        }
    }
}

/// Diffie-Hellman groups (RFC 3526 14; RFC 5903 19, 20).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// 2048-bit MODP.
    Modp2048,
    /// NIST P-256.
    Ecp256,
    /// NIST P-384.
    Ecp384,
}

impl Group {
    /// The IANA group number.
    pub fn number(self) -> u16 {
        match self {
            Group::Modp2048 => ike_attr::GROUP_MODP2048,
            Group::Ecp256 => ike_attr::GROUP_ECP256,
            Group::Ecp384 => ike_attr::GROUP_ECP384,
        }
    }
    fn from_number(v: u16) -> Option<Self> {
        [Group::Modp2048, Group::Ecp256, Group::Ecp384]
            .into_iter()
            .find(|g| g.number() == v)
    }
}

/// The phase-1 authentication method (RFC 2409 Appendix A; RFC 4754 6 for ECDSA).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthMethod {
    /// Pre-shared key (1).
    Psk,
    /// RSA signatures (3), PKCS#1 v1.5 private-key encryption of HASH_I/HASH_R (RFC 2409 5.1).
    RsaSig,
    /// ECDSA on P-256 with SHA-256 (9, RFC 4754).
    EcdsaP256,
    /// ECDSA on P-384 with SHA-384 (10, RFC 4754).
    EcdsaP384,
}

impl AuthMethod {
    /// The Authentication Method attribute value.
    pub fn number(self) -> u16 {
        match self {
            AuthMethod::Psk => ike_attr::AUTH_PSK,
            AuthMethod::RsaSig => ike_attr::AUTH_RSA_SIG,
            AuthMethod::EcdsaP256 => ike_attr::AUTH_ECDSA_P256,
            AuthMethod::EcdsaP384 => ike_attr::AUTH_ECDSA_P384,
        }
    }
    /// The method of an attribute value gander implements.
    pub fn from_number(v: u16) -> Option<Self> {
        [
            AuthMethod::Psk,
            AuthMethod::RsaSig,
            AuthMethod::EcdsaP256,
            AuthMethod::EcdsaP384,
        ]
        .into_iter()
        .find(|m| m.number() == v)
    }
    /// Whether this is a signature method (SKEYID from the nonces, CERT and SIG payloads).
    pub fn is_signature(self) -> bool {
        self != AuthMethod::Psk
    }

    /// The hash whose HMAC computes HASH_I and HASH_R under this method when `negotiated` is
    /// the suite's: an ECDSA method fixes its own (SHA-256 for P-256, SHA-384 for P-384,
    /// RFC 4754), because HASH_I is the digest the signature takes and must be of the
    /// curve's hash size; every other method uses the negotiated hash (RFC 2409 5).
    pub fn auth_hash(self, negotiated: HashAlg) -> HashAlg {
        match self {
            AuthMethod::EcdsaP256 => HashAlg::Sha256,
            AuthMethod::EcdsaP384 => HashAlg::Sha384,
            AuthMethod::Psk | AuthMethod::RsaSig => negotiated,
        }
    }
}

/// One phase-1 suite (cipher, hash, group, life; the authentication method is offered beside
/// it, [`Suite::transform_auth`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Suite {
    /// AES key length in bits: 128 or 256.
    pub aes_bits: u16,
    /// Hash and PRF.
    pub hash: HashAlg,
    /// Diffie-Hellman group.
    pub group: Group,
    /// Phase-1 SA lifetime in seconds.
    pub life_secs: u32,
}

impl Suite {
    /// Every suite gander offers, strongest first.
    pub fn all(life_secs: u32) -> Vec<Suite> {
        let mut v = Vec::new();
        for (aes_bits, hash, group) in [
            (256, HashAlg::Sha384, Group::Ecp384),
            (256, HashAlg::Sha256, Group::Ecp256),
            (128, HashAlg::Sha256, Group::Ecp256),
            (256, HashAlg::Sha256, Group::Modp2048),
            (128, HashAlg::Sha256, Group::Modp2048),
        ] {
            v.push(Suite {
                aes_bits,
                hash,
                group,
                life_secs,
            });
        }
        v
    }

    /// The transform offering this suite (RFC 2409 Appendix A attributes, PSK authentication).
    pub fn transform(&self, number: u8) -> Transform {
        self.transform_auth(number, AuthMethod::Psk)
    }

    /// The transform offering this suite with `auth` as the authentication method.
    pub fn transform_auth(&self, number: u8, auth: AuthMethod) -> Transform {
        Transform {
            number,
            id: gander_wire::isakmp::sa::KEY_IKE,
            attributes: vec![
                Attribute::basic(ike_attr::ENCRYPTION, ike_attr::ENC_AES_CBC),
                Attribute::basic(ike_attr::KEY_LENGTH, self.aes_bits),
                Attribute::basic(ike_attr::HASH, self.hash.attr()),
                Attribute::basic(ike_attr::AUTH_METHOD, auth.number()),
                Attribute::basic(ike_attr::GROUP, self.group.number()),
                Attribute::basic(ike_attr::LIFE_TYPE, ike_attr::LIFE_SECONDS),
                Attribute::unsigned(ike_attr::LIFE_DURATION, u64::from(self.life_secs)),
            ],
        }
    }

    /// What a responder that accepts this suite makes of an `offered` one: the offer if its
    /// cipher, key length, hash and group are this suite's, with the shorter of the two
    /// lifetimes. The lifetime is the initiator's proposal, not an algorithm: RFC 2409 5 has
    /// the responder return the chosen transform unmodified, so a responder that required its
    /// own value would refuse every peer configured with another (strongSwan offers 15840 s by
    /// default, and `gander kdc` refused it with NO-PROPOSAL-CHOSEN before this); the SA is
    /// then kept no longer than either side wants.
    pub fn accepts(&self, offered: &Suite) -> Option<Suite> {
        (self.aes_bits == offered.aes_bits
            && self.hash == offered.hash
            && self.group == offered.group)
            .then(|| Suite {
                life_secs: offered.life_secs.min(self.life_secs),
                ..*self
            })
    }

    /// The suite a pre-shared-key transform offers, if gander implements it (see
    /// [`Suite::from_transform_auth`]); a transform with another method is `None`.
    pub fn from_transform(t: &Transform) -> Option<Suite> {
        match Suite::from_transform_auth(t)? {
            (s, AuthMethod::Psk) => Some(s),
            _ => None,
        }
    }

    /// The suite and authentication method a transform offers, if gander implements them:
    /// every attribute must be known and appear once (RFC 2409 5: an unknown attribute makes
    /// the transform unacceptable).
    pub fn from_transform_auth(t: &Transform) -> Option<(Suite, AuthMethod)> {
        if t.id != gander_wire::isakmp::sa::KEY_IKE {
            return None;
        }
        let (mut enc, mut bits, mut hash, mut auth, mut group, mut life_type, mut life) =
            (None, None, None, None, None, None, None);
        for a in &t.attributes {
            let slot = match a.kind {
                ike_attr::ENCRYPTION => &mut enc,
                ike_attr::KEY_LENGTH => &mut bits,
                ike_attr::HASH => &mut hash,
                ike_attr::AUTH_METHOD => &mut auth,
                ike_attr::GROUP => &mut group,
                ike_attr::LIFE_TYPE => &mut life_type,
                ike_attr::LIFE_DURATION => &mut life,
                _ => return None,
            };
            if slot.is_some() {
                return None;
            }
            *slot = Some(a.as_u64()?);
        }
        if enc != Some(u64::from(ike_attr::ENC_AES_CBC)) {
            return None;
        }
        let auth = AuthMethod::from_number(u16::try_from(auth?).ok()?)?;
        let aes_bits = match bits? {
            128 => 128,
            256 => 256,
            _ => return None,
        };
        let life_secs = match (life_type, life) {
            (None, None) => 28_800, // RFC 2409 Appendix A default: 8 hours.
            (Some(t), Some(v)) if t == u64::from(ike_attr::LIFE_SECONDS) => {
                u32::try_from(v).ok()?
            }
            _ => return None,
        };
        Some((
            Suite {
                aes_bits,
                hash: HashAlg::from_attr(u16::try_from(hash?).ok()?)?,
                group: Group::from_number(u16::try_from(group?).ok()?)?,
                life_secs,
            },
            auth,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transform_round_trip_and_unknown_attribute_refused() {
        for s in Suite::all(3600) {
            assert_eq!(Suite::from_transform(&s.transform(1)), Some(s));
        }
        let mut t = Suite::all(3600)[0].transform(1);
        t.attributes.push(Attribute::basic(99, 1));
        assert_eq!(Suite::from_transform(&t), None);
        let mut t = Suite::all(3600)[0].transform(1);
        t.attributes
            .push(Attribute::basic(ike_attr::HASH, ike_attr::HASH_SHA256));
        assert_eq!(Suite::from_transform(&t), None, "duplicate attribute");
    }

    /// RFC 2409 5 and Appendix A: the life duration is the initiator's offer; a responder
    /// accepts the algorithms it wants whatever lifetime comes with them and keeps the
    /// shorter one. strongSwan 5.9.8's default IKEv1 offer carries 15840 s (captured in the
    /// interop test `strongswan_interop`).
    #[test]
    fn responder_accepts_any_offered_lifetime_and_keeps_the_shorter() {
        let own = Suite::all(86_400)[3];
        let short = Suite {
            life_secs: 15_840,
            ..own
        };
        assert_eq!(own.accepts(&short), Some(short));
        let long = Suite {
            life_secs: 1_000_000,
            ..own
        };
        assert_eq!(own.accepts(&long), Some(own));
        for other in Suite::all(15_840) {
            if (other.aes_bits, other.hash, other.group) != (own.aes_bits, own.hash, own.group) {
                assert_eq!(own.accepts(&other), None, "{other:?}");
            }
        }
    }

    /// RFC 4754: HASH_I under ECDSA is computed with the curve's hash, so a P-384
    /// certificate with a SHA-256 suite still signs a 48-octet HASH_I.
    #[test]
    fn ecdsa_methods_fix_the_hash_of_hash_i() {
        for n in [HashAlg::Sha256, HashAlg::Sha384] {
            assert_eq!(AuthMethod::EcdsaP256.auth_hash(n), HashAlg::Sha256);
            assert_eq!(AuthMethod::EcdsaP384.auth_hash(n), HashAlg::Sha384);
            assert_eq!(AuthMethod::Psk.auth_hash(n), n);
            assert_eq!(AuthMethod::RsaSig.auth_hash(n), n);
        }
    }

    #[test]
    fn every_auth_method_round_trips() {
        for m in [
            AuthMethod::Psk,
            AuthMethod::RsaSig,
            AuthMethod::EcdsaP256,
            AuthMethod::EcdsaP384,
        ] {
            let s = Suite::all(60)[1];
            assert_eq!(
                Suite::from_transform_auth(&s.transform_auth(2, m)),
                Some((s, m))
            );
            assert_eq!(
                Suite::from_transform(&s.transform_auth(2, m)).is_some(),
                m == AuthMethod::Psk
            );
        }
        // DSS (2) and the RSA encryption methods (4, 5) are not implemented.
        let mut t = Suite::all(60)[0].transform(1);
        for a in &mut t.attributes {
            if a.kind == ike_attr::AUTH_METHOD {
                *a = Attribute::basic(ike_attr::AUTH_METHOD, 2);
            }
        }
        assert_eq!(Suite::from_transform_auth(&t), None);
    }
}
