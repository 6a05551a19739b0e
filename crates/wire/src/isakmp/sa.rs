//! The Security Association payload with its proposals and transforms (RFC 2408 sections
//! 3.4-3.6), as IKEv1 phase 1 negotiates it (RFC 2409 5 and Appendix A), and in the GDOI form
//! (RFC 6407 5.1) whose SA attribute payloads carry the group policy.

use super::attribute::Attribute;
use super::chain::{self, ChainItem};
use super::error::{IsakmpError, Result};
use super::gdoi::SaAttrPayload;
use super::payload::kind;
use super::reader::{len8, Reader, Writer};

/// Domain of Interpretation values.
pub mod doi {
    /// The ISAKMP DOI (RFC 2408 3.4), used by IKEv1 phase 1 in general.
    pub const ISAKMP: u32 = 0;
    /// The IPsec DOI (RFC 2407), the DOI of IKEv1 phase 1 SAs in practice.
    pub const IPSEC: u32 = 1;
    /// The Group Domain of Interpretation (RFC 6407 5.1).
    pub const GDOI: u32 = 2;
}

/// Phase-1 proposal protocol: PROTO_ISAKMP (RFC 2407 4.4.1).
pub const PROTO_ISAKMP: u8 = 1;
/// Phase-1 transform: KEY_IKE (RFC 2407 4.4.2).
pub const KEY_IKE: u8 = 1;

/// Phase-1 SA attribute types and values (RFC 2409 Appendix A; AES RFC 3602, SHA-2 RFC 4868,
/// ECP groups RFC 5903, ECDSA RFC 4754).
pub mod ike_attr {
    /// Encryption algorithm (basic).
    pub const ENCRYPTION: u16 = 1;
    /// Hash algorithm (basic).
    pub const HASH: u16 = 2;
    /// Authentication method (basic).
    pub const AUTH_METHOD: u16 = 3;
    /// Group description (basic).
    pub const GROUP: u16 = 4;
    /// Life type (basic).
    pub const LIFE_TYPE: u16 = 11;
    /// Life duration (basic or variable).
    pub const LIFE_DURATION: u16 = 12;
    /// Key length in bits (basic), required with AES.
    pub const KEY_LENGTH: u16 = 14;

    /// AES-CBC (RFC 3602).
    pub const ENC_AES_CBC: u16 = 7;
    /// SHA2-256 (RFC 4868).
    pub const HASH_SHA256: u16 = 4;
    /// SHA2-384.
    pub const HASH_SHA384: u16 = 5;
    /// Pre-shared key.
    pub const AUTH_PSK: u16 = 1;
    /// RSA signatures.
    pub const AUTH_RSA_SIG: u16 = 3;
    /// ECDSA with SHA-256 on P-256 (RFC 4754).
    pub const AUTH_ECDSA_P256: u16 = 9;
    /// ECDSA with SHA-384 on P-384 (RFC 4754).
    pub const AUTH_ECDSA_P384: u16 = 10;
    /// Life type seconds.
    pub const LIFE_SECONDS: u16 = 1;
    /// 2048-bit MODP (RFC 3526).
    pub const GROUP_MODP2048: u16 = 14;
    /// 256-bit random ECP (RFC 5903).
    pub const GROUP_ECP256: u16 = 19;
    /// 384-bit random ECP (RFC 5903).
    pub const GROUP_ECP384: u16 = 20;
}

/// Most proposals or transforms one SA may offer.
pub const MAX_OFFERS: usize = 32;

/// A transform payload (RFC 2408 3.6).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Transform {
    /// Transform #.
    pub number: u8,
    /// Transform-Id (KEY_IKE in phase 1).
    pub id: u8,
    /// SA attributes.
    pub attributes: Vec<Attribute>,
}

/// A proposal payload (RFC 2408 3.5) with its transforms.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Proposal {
    /// Proposal #.
    pub number: u8,
    /// Protocol-Id (PROTO_ISAKMP in phase 1).
    pub protocol: u8,
    /// SPI (empty in phase 1: the cookies are the SPI).
    pub spi: Vec<u8>,
    /// Transforms offered, in preference order.
    pub transforms: Vec<Transform>,
}

/// What follows DOI and Situation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SaBody {
    /// Proposal payloads (phase 1).
    Proposals(Vec<Proposal>),
    /// SA attribute payloads (SA KEK, SA TEK, GAP) of a GDOI SA (RFC 6407 5.1).
    Gdoi(Vec<SaAttrPayload>),
}

/// The SA payload.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SaPayload {
    /// Domain of Interpretation ([`doi`]).
    pub doi: u32,
    /// Situation (SIT_IDENTITY_ONLY = 1 in phase 1; 0 in GDOI, RFC 6407 5.1).
    pub situation: u32,
    /// Proposals or group policy.
    pub body: SaBody,
}

impl ChainItem for Transform {
    fn kind(&self) -> u8 {
        kind::TRANSFORM
    }
    fn body_len(&self) -> usize {
        4 + Attribute::list_len(&self.attributes)
    }
    fn emit_body(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u8(self.number);
        w.u8(self.id);
        w.u16(0);
        let n = Attribute::emit_list(&self.attributes, w.tail());
        w.advance(n);
        w.written()
    }
}

impl ChainItem for Proposal {
    fn kind(&self) -> u8 {
        kind::PROPOSAL
    }
    fn body_len(&self) -> usize {
        4 + self.spi.len() + chain::chain_len(&self.transforms)
    }
    fn emit_body(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u8(self.number);
        w.u8(self.protocol);
        w.u8(len8(self.spi.len()));
        w.u8(len8(self.transforms.len()));
        w.bytes(&self.spi);
        let n = chain::emit_chain(&self.transforms, w.tail());
        w.advance(n);
        w.written()
    }
}

impl Transform {
    fn parse(body: &[u8]) -> Result<Transform> {
        let mut r = Reader::new(body, "transform");
        let number = r.u8()?;
        let id = r.u8()?;
        let _reserved2 = r.u16()?;
        Ok(Transform {
            number,
            id,
            attributes: Attribute::parse_list(r.rest())?,
        })
    }
}

impl Proposal {
    fn parse(body: &[u8]) -> Result<Proposal> {
        let mut r = Reader::new(body, "proposal");
        let number = r.u8()?;
        let protocol = r.u8()?;
        let spi_len = r.u8()? as usize;
        let count = r.u8()? as usize;
        let spi = r.take(spi_len)?.to_vec();
        let rest = r.rest();
        let first = if rest.is_empty() { 0 } else { kind::TRANSFORM };
        let items = chain::split(first, rest, "transform", false)?;
        if items.len() != count {
            return Err(IsakmpError::BadValue {
                what: "proposal",
                detail: "# of transforms disagrees with the transforms present",
            });
        }
        if items.len() > MAX_OFFERS {
            return Err(IsakmpError::TooMany {
                what: "transforms",
                limit: MAX_OFFERS,
            });
        }
        let mut transforms = Vec::with_capacity(items.len());
        for (k, b) in items {
            if k != kind::TRANSFORM {
                return Err(IsakmpError::InvalidPayloadType {
                    what: "proposal",
                    kind: k,
                });
            }
            transforms.push(Transform::parse(b)?);
        }
        Ok(Proposal {
            number,
            protocol,
            spi,
            transforms,
        })
    }
}

impl SaPayload {
    /// Parses an SA payload body. `gdoi_policy` selects the RFC 6407 form (the SA of a
    /// GROUPKEY-PULL or GROUPKEY-PUSH with DOI 2); otherwise proposals follow.
    pub fn parse(body: &[u8], gdoi_policy: bool) -> Result<SaPayload> {
        let mut r = Reader::new(body, "SA payload");
        let doi = r.u32()?;
        let situation = r.u32()?;
        if gdoi_policy {
            if doi != doi::GDOI {
                return Err(IsakmpError::BadValue {
                    what: "SA payload",
                    detail: "DOI is not GDOI",
                });
            }
            // RFC 6407 5.1: SA Attribute Next Payload, then reserved octets to the 32-bit
            // boundary. The RFC's figure and text disagree on the field's width (two octets
            // in the figure of RFC 3547, one in the text of RFC 6407); every payload type is
            // below 256, so the value is the first octet when that is non-zero and the
            // second otherwise, which reads both forms (docs/gdoi.md).
            let f = r.take(4)?;
            let first = if f[0] != 0 { f[0] } else { f[1] };
            let items = chain::split(first, r.rest(), "SA attribute payload", false)?;
            let mut out = Vec::with_capacity(items.len());
            for (k, b) in items {
                out.push(SaAttrPayload::parse(k, b)?);
            }
            Ok(SaPayload {
                doi,
                situation,
                body: SaBody::Gdoi(out),
            })
        } else {
            let rest = r.rest();
            let first = if rest.is_empty() { 0 } else { kind::PROPOSAL };
            let items = chain::split(first, rest, "proposal", false)?;
            if items.len() > MAX_OFFERS {
                return Err(IsakmpError::TooMany {
                    what: "proposals",
                    limit: MAX_OFFERS,
                });
            }
            let mut out = Vec::with_capacity(items.len());
            for (k, b) in items {
                if k != kind::PROPOSAL {
                    return Err(IsakmpError::InvalidPayloadType {
                        what: "SA payload",
                        kind: k,
                    });
                }
                out.push(Proposal::parse(b)?);
            }
            Ok(SaPayload {
                doi,
                situation,
                body: SaBody::Proposals(out),
            })
        }
    }

    /// Octets of the body.
    pub fn body_len(&self) -> usize {
        8 + match &self.body {
            SaBody::Proposals(p) => chain::chain_len(p),
            SaBody::Gdoi(p) => 4 + chain::chain_len(p),
        }
    }

    /// Writes the body; the GDOI form writes SA Attribute Next Payload as two octets (the
    /// width of RFC 6407's figure, and the one Wireshark's dissector reads) followed by the
    /// two zero octets of RESERVED2 (docs/gdoi.md).
    pub fn emit_body(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u32(self.doi);
        w.u32(self.situation);
        match &self.body {
            SaBody::Proposals(p) => {
                let n = chain::emit_chain(p, w.tail());
                w.advance(n);
            }
            SaBody::Gdoi(p) => {
                w.u16(u16::from(p.first().map_or(0, ChainItem::kind)));
                w.u16(0);
                let n = chain::emit_chain(p, w.tail());
                w.advance(n);
            }
        }
        w.written()
    }

    /// Whether every nested length fits its field.
    pub fn fits(&self) -> bool {
        match &self.body {
            SaBody::Proposals(p) => {
                chain::chain_fits(p)
                    && p.iter().all(|x| {
                        x.spi.len() <= 255
                            && x.transforms.len() <= 255
                            && chain::chain_fits(&x.transforms)
                            && x.transforms
                                .iter()
                                .all(|t| t.attributes.iter().all(Attribute::fits))
                    })
            }
            SaBody::Gdoi(p) => chain::chain_fits(p) && p.iter().all(SaAttrPayload::fits),
        }
    }
}
