//! The group's KEK as GROUPKEY-PULL hands it out (RFC 6407 3.2, 5.3, 5.6.2): an SA KEK
//! attribute payload in the SA (the policy: AES-CBC, its key length, the signature algorithm of
//! the key server) and a KEK key packet in the KD (KEK_ALGORITHM_KEY, the AES key, and
//! SIG_ALGORITHM_KEY, the key server's public key that signs every GROUPKEY-PUSH).
//!
//! Both ends are here so the key server and the member cannot disagree on the encoding:
//! [`sa_kek`] and [`kek_packet`] build, [`GroupKek::from_grant`] reads. The public key is the
//! DER SubjectPublicKeyInfo (RFC 5280 4.1.2.7), which carries its own algorithm, so a member
//! needs nothing else to check signatures.

use crate::push::Kek;
use gander_wire::isakmp::gdoi::{kd_attr, kd_type, kek_attr};
use gander_wire::isakmp::{
    Attribute, KekId, KeyDownload, KeyPacket, SaAttrPayload, SaBody, SaKek, SaPayload,
};
use openssl::pkey::{Id, PKey, Private, Public};
use zeroize::Zeroizing;

/// ID type ID_IPV4_ADDR (RFC 2407 4.6.2.1) of the SA KEK's source and destination.
const ID_IPV4_ADDR: u8 = 1;
/// IP protocol UDP: pushes travel over UDP (RFC 6407 5.3, Protocol).
const IPPROTO_UDP: u8 = 17;
/// ISAKMP's port (RFC 6407 2): pushes are sent from it.
const ISAKMP_PORT: u16 = 848;

/// The KEK policy and key a member receives: enough to build a
/// [`crate::push::PushReceiver`].
#[derive(Clone, PartialEq, Eq)]
pub struct GroupKek {
    /// The KEK SPI: the cookies of every push under it.
    pub spi: [u8; 16],
    /// The AES key (KEK_ALGORITHM_KEY).
    pub key: Zeroizing<Vec<u8>>,
    /// The key server's public key, DER SubjectPublicKeyInfo (SIG_ALGORITHM_KEY).
    pub sig_key_der: Vec<u8>,
    /// KEK_KEY_LIFETIME (s), if given.
    pub lifetime_secs: Option<u64>,
}

impl core::fmt::Debug for GroupKek {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GroupKek")
            .field("spi", &self.spi)
            .field("lifetime_secs", &self.lifetime_secs)
            .finish_non_exhaustive()
    }
}

/// Why a KEK in a grant cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KekError {
    /// The SA names a KEK but the KD carries no key packet for its SPI.
    #[error("SA KEK without a KEK key packet")]
    NoKeyPacket,
    /// The key packet lacks KEK_ALGORITHM_KEY or SIG_ALGORITHM_KEY.
    #[error("KEK key packet without {0}")]
    MissingKey(&'static str),
    /// The KEK is not an AES-128 or AES-256 key, or the cipher is not AES-CBC.
    #[error("KEK algorithm or key length not supported")]
    Algorithm,
    /// SIG_ALGORITHM_KEY is not a public key OpenSSL reads.
    #[error("SIG_ALGORITHM_KEY is not a DER public key")]
    SigKey,
}

impl GroupKek {
    /// The KEK of a grant, if its SA carries an SA KEK; an SA KEK whose keys are missing or
    /// unusable is an error (a member must not register without the means to follow rekeys
    /// the key server announced).
    pub fn from_grant(sa: &SaPayload, kd: &KeyDownload) -> Result<Option<GroupKek>, KekError> {
        let SaBody::Gdoi(attrs) = &sa.body else {
            return Ok(None);
        };
        let Some(k) = attrs.iter().find_map(|a| match a {
            SaAttrPayload::Kek(k) => Some(k),
            _ => None,
        }) else {
            return Ok(None);
        };
        let alg = Attribute::find(&k.attributes, kek_attr::ALGORITHM).and_then(Attribute::as_u64);
        if alg.is_some_and(|a| a != u64::from(kek_attr::ALG_AES)) {
            return Err(KekError::Algorithm);
        }
        let pkt = kd
            .packets
            .iter()
            .find(|p| p.kd_type == kd_type::KEK && p.spi == k.spi)
            .ok_or(KekError::NoKeyPacket)?;
        let key = Attribute::find(&pkt.attributes, kd_attr::KEK_ALGORITHM_KEY)
            .ok_or(KekError::MissingKey("KEK_ALGORITHM_KEY"))?
            .bytes();
        if !matches!(key.len(), 16 | 32) {
            return Err(KekError::Algorithm);
        }
        let sig = Attribute::find(&pkt.attributes, kd_attr::SIG_ALGORITHM_KEY)
            .ok_or(KekError::MissingKey("SIG_ALGORITHM_KEY"))?
            .bytes();
        PKey::public_key_from_der(&sig).map_err(|_| KekError::SigKey)?;
        Ok(Some(GroupKek {
            spi: k.spi,
            key: Zeroizing::new(key),
            sig_key_der: sig,
            lifetime_secs: Attribute::find(&k.attributes, kek_attr::KEY_LIFETIME)
                .and_then(Attribute::as_u64),
        }))
    }

    /// The KEK as [`crate::push`] uses it.
    pub fn kek(&self) -> Kek {
        Kek {
            spi: self.spi,
            key: self.key.clone(),
        }
    }

    /// The key server's public key.
    pub fn verify_key(&self) -> Result<PKey<Public>, KekError> {
        PKey::public_key_from_der(&self.sig_key_der).map_err(|_| KekError::SigKey)
    }
}

/// The key server's signing key with its public key already encoded: OpenSSL 3 encodes a
/// public key through its provider machinery, which costs more than the rest of a grant, so it
/// is done once, not per registration.
#[derive(Clone)]
pub struct KdcSigner {
    /// The private key.
    pub key: PKey<Private>,
    /// Its public key, DER SubjectPublicKeyInfo (SIG_ALGORITHM_KEY).
    pub public_der: Vec<u8>,
}

impl KdcSigner {
    /// Wraps `key`.
    pub fn new(key: PKey<Private>) -> Result<KdcSigner, KekError> {
        let public_der = key.public_key_to_der().map_err(|_| KekError::SigKey)?;
        Ok(KdcSigner { key, public_der })
    }
}

/// SIG_ALGORITHM, SIG_HASH_ALGORITHM and SIG_KEY_LENGTH of a signing key (RFC 6407 5.3.6-8),
/// matching what [`crate::push::sign`] does with it.
fn sig_attrs(signer: &PKey<Private>) -> Vec<Attribute> {
    let bits = signer.bits();
    let (alg, hash) = match signer.id() {
        Id::EC if bits > 256 => (kek_attr::SIG_ECDSA_384, kek_attr::HASH_SHA384),
        Id::EC => (kek_attr::SIG_ECDSA_256, kek_attr::HASH_SHA256),
        _ => (kek_attr::SIG_RSA, kek_attr::HASH_SHA256),
    };
    vec![
        Attribute::basic(kek_attr::SIG_HASH_ALGORITHM, hash),
        Attribute::basic(kek_attr::SIG_ALGORITHM, alg),
        Attribute::unsigned(kek_attr::SIG_KEY_LENGTH, u64::from(bits)),
    ]
}

/// The SA KEK attribute payload of a group (RFC 6407 5.3): pushes come over UDP from the key
/// server's `src` address, protected by AES-CBC with `kek`, signed by `signer`.
pub fn sa_kek(
    kek: &Kek,
    src: std::net::Ipv4Addr,
    signer: &PKey<Private>,
    lifetime_secs: Option<u64>,
) -> SaAttrPayload {
    let mut attributes = vec![
        Attribute::basic(kek_attr::ALGORITHM, kek_attr::ALG_AES),
        Attribute::unsigned(kek_attr::KEY_LENGTH, (kek.key.len() * 8) as u64),
    ];
    if let Some(l) = lifetime_secs {
        attributes.push(Attribute::unsigned(kek_attr::KEY_LIFETIME, l));
    }
    attributes.extend(sig_attrs(signer));
    SaAttrPayload::Kek(SaKek {
        protocol: IPPROTO_UDP,
        src: KekId {
            id_type: ID_IPV4_ADDR,
            port: ISAKMP_PORT,
            data: src.octets().to_vec(),
        },
        dst_protocol: IPPROTO_UDP,
        // Pushes are sent to each member's own push address (unicast): the SA KEK names no
        // multicast destination (0.0.0.0, port 0), docs/gdoi.md "Push delivery".
        dst: KekId {
            id_type: ID_IPV4_ADDR,
            port: 0,
            data: vec![0; 4],
        },
        spi: kek.spi,
        attributes,
    })
}

/// The KEK key packet of the KD (RFC 6407 5.6.2).
pub fn kek_packet(kek: &Kek, signer: &KdcSigner) -> KeyPacket {
    KeyPacket {
        kd_type: kd_type::KEK,
        spi: kek.spi.to_vec(),
        attributes: vec![
            Attribute::variable(kd_attr::KEK_ALGORITHM_KEY, kek.key.to_vec()),
            Attribute::variable(kd_attr::SIG_ALGORITHM_KEY, signer.public_der.clone()),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_wire::isakmp::sa::doi;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::nid::Nid;

    fn signer() -> PKey<Private> {
        let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
        PKey::from_ec_key(EcKey::generate(&g).unwrap()).unwrap()
    }

    #[test]
    fn built_kek_reads_back() {
        let s = signer();
        let kek = Kek {
            spi: [7; 16],
            key: Zeroizing::new(vec![3; 32]),
        };
        let sa = SaPayload {
            doi: doi::GDOI,
            situation: 0,
            body: SaBody::Gdoi(vec![sa_kek(&kek, [192, 0, 2, 1].into(), &s, Some(600))]),
        };
        let kd = KeyDownload {
            packets: vec![kek_packet(&kek, &KdcSigner::new(s.clone()).unwrap())],
        };
        let g = GroupKek::from_grant(&sa, &kd).unwrap().unwrap();
        assert_eq!(g.spi, [7; 16]);
        assert_eq!(&*g.key, &[3; 32]);
        assert_eq!(g.lifetime_secs, Some(600));
        assert!(g.verify_key().unwrap().public_eq(&s));
        // An SA KEK without its key packet is refused, not ignored.
        let empty = KeyDownload { packets: vec![] };
        assert_eq!(
            GroupKek::from_grant(&sa, &empty).unwrap_err(),
            KekError::NoKeyPacket
        );
    }

    fn on_the_wire(sa: SaPayload, kd: KeyDownload) -> (SaPayload, KeyDownload) {
        use gander_wire::isakmp::header::exchange;
        use gander_wire::isakmp::payload::{
            emit_payloads, first_kind, parse_payloads, payloads_len,
        };
        use gander_wire::isakmp::Payload;
        let p = vec![Payload::Sa(sa), Payload::Kd(kd)];
        let mut b = vec![0u8; payloads_len(&p)];
        emit_payloads(&p, &mut b);
        let back = parse_payloads(first_kind(&p), &b, exchange::GROUPKEY_PULL, true).unwrap();
        match (&back[0], &back[1]) {
            (Payload::Sa(s), Payload::Kd(k)) => (s.clone(), k.clone()),
            _ => panic!("{back:?}"),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
        /// Whatever KEK the key server builds reads back the same after the wire codec.
        #[test]
        fn kek_survives_the_wire(
            spi: [u8; 16],
            long: bool,
            fill: u8,
            lifetime in proptest::option::of(0u64..1 << 40),
        ) {
            let s = signer();
            let kek = Kek { spi, key: Zeroizing::new(vec![fill; if long { 32 } else { 16 }]) };
            let sa = SaPayload {
                doi: doi::GDOI,
                situation: 0,
                body: SaBody::Gdoi(vec![sa_kek(&kek, [10, 0, 0, 1].into(), &s, lifetime)]),
            };
            let kd = KeyDownload { packets: vec![kek_packet(&kek, &KdcSigner::new(s.clone()).unwrap())] };
            let (sa, kd) = on_the_wire(sa, kd);
            let g = GroupKek::from_grant(&sa, &kd).unwrap().unwrap();
            proptest::prop_assert_eq!(g.spi, spi);
            proptest::prop_assert_eq!(&g.key[..], &kek.key[..]);
            proptest::prop_assert_eq!(g.lifetime_secs, lifetime);
            proptest::prop_assert!(g.verify_key().unwrap().public_eq(&s));
        }
    }
}
