//! The payloads of an IKEv1/GDOI message (RFC 2408 3.4-3.15, RFC 6407 5) and the whole message.

use super::chain::{self, ChainItem};
use super::error::{IsakmpError, Result};
use super::gdoi::KeyDownload;
use super::header::{exchange, Header, HEADER_LEN};
use super::reader::{len16, Reader, Writer};
use super::sa::{doi, SaPayload};
use crate::Codec;

/// Next Payload values (RFC 2408 3.1; GDOI's from RFC 6407 5).
pub mod kind {
    /// Security Association.
    pub const SA: u8 = 1;
    /// Proposal (inside an SA).
    pub const PROPOSAL: u8 = 2;
    /// Transform (inside a proposal).
    pub const TRANSFORM: u8 = 3;
    /// Key Exchange.
    pub const KE: u8 = 4;
    /// Identification.
    pub const ID: u8 = 5;
    /// Certificate.
    pub const CERT: u8 = 6;
    /// Certificate Request.
    pub const CERTREQ: u8 = 7;
    /// Hash.
    pub const HASH: u8 = 8;
    /// Signature.
    pub const SIG: u8 = 9;
    /// Nonce.
    pub const NONCE: u8 = 10;
    /// Notification.
    pub const NOTIFY: u8 = 11;
    /// Delete.
    pub const DELETE: u8 = 12;
    /// Vendor ID.
    pub const VENDOR_ID: u8 = 13;
    /// SA KEK (RFC 6407 5.3), inside a GDOI SA.
    pub const SA_KEK: u8 = 15;
    /// SA TEK (RFC 6407 5.4), inside a GDOI SA.
    pub const SA_TEK: u8 = 16;
    /// Key Download (RFC 6407 5.6).
    pub const KD: u8 = 17;
    /// Sequence Number (RFC 6407 5.7).
    pub const SEQ: u8 = 18;
    /// Group Associated Policy (RFC 6407 5.8), inside a GDOI SA.
    pub const GAP: u8 = 22;
}

/// ID types (RFC 2407 4.6.2.1; ID_OID from RFC 8052, docs/gdoi.md).
pub mod id_type {
    /// IPv4 address.
    pub const IPV4_ADDR: u8 = 1;
    /// Fully qualified domain name.
    pub const FQDN: u8 = 2;
    /// user@fqdn.
    pub const USER_FQDN: u8 = 3;
    /// IPv6 address.
    pub const IPV6_ADDR: u8 = 5;
    /// DER-encoded X.500 Distinguished Name.
    pub const DER_ASN1_DN: u8 = 9;
    /// Opaque key identifier: gander's PSK identities and group numbers.
    pub const KEY_ID: u8 = 11;
    /// An OBJECT IDENTIFIER naming an IEC 61850 group (RFC 8052): the first value after
    /// ID_KEY_LIST (12) in the IKEv1 ID type registry, as gander reads RFC 8052.
    pub const OID: u8 = 13;
}

/// Identification payload (RFC 2408 3.8 in the IPsec DOI layout of RFC 2407 4.6.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdPayload {
    /// ID type ([`id_type`]).
    pub id_type: u8,
    /// IP protocol (0 in phase 1 and GDOI group identities).
    pub protocol: u8,
    /// Port (0 likewise).
    pub port: u16,
    /// Identification data.
    pub data: Vec<u8>,
}

/// Certificate or Certificate Request payload (RFC 2408 3.9, 3.10).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CertPayload {
    /// Certificate encoding (4 = X.509 signature).
    pub encoding: u8,
    /// The certificate, or for a request the DER DN of an acceptable CA (or empty).
    pub data: Vec<u8>,
}

/// X.509 Certificate - Signature (RFC 2408 3.9).
pub const CERT_X509_SIG: u8 = 4;

/// Notification payload (RFC 2408 3.14).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NotifyPayload {
    /// DOI.
    pub doi: u32,
    /// Protocol-ID.
    pub protocol: u8,
    /// Notify Message Type ([`super::error::notify_type`]).
    pub message_type: u16,
    /// SPI (for phase 1: the two cookies, or empty).
    pub spi: Vec<u8>,
    /// Notification data.
    pub data: Vec<u8>,
}

/// Delete payload (RFC 2408 3.15): withdraws SAs, in GDOI a TEK or the KEK (RFC 6407 4.4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeletePayload {
    /// DOI.
    pub doi: u32,
    /// Protocol-ID of the SAs.
    pub protocol: u8,
    /// SPI size (every SPI has it).
    pub spi_size: u8,
    /// SPIs withdrawn.
    pub spis: Vec<Vec<u8>>,
}

/// One payload of a message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Payload {
    /// Security Association.
    Sa(SaPayload),
    /// Key Exchange data (the Diffie-Hellman public value).
    Ke(Vec<u8>),
    /// Identification.
    Id(IdPayload),
    /// Certificate.
    Cert(CertPayload),
    /// Certificate Request.
    CertReq(CertPayload),
    /// Hash.
    Hash(Vec<u8>),
    /// Signature.
    Sig(Vec<u8>),
    /// Nonce.
    Nonce(Vec<u8>),
    /// Notification.
    Notify(NotifyPayload),
    /// Delete.
    Delete(DeletePayload),
    /// Vendor ID.
    VendorId(Vec<u8>),
    /// Key Download.
    Kd(KeyDownload),
    /// Sequence number of a GROUPKEY-PUSH (RFC 6407 5.7).
    Seq(u32),
}

impl ChainItem for Payload {
    fn kind(&self) -> u8 {
        match self {
            Payload::Sa(_) => kind::SA,
            Payload::Ke(_) => kind::KE,
            Payload::Id(_) => kind::ID,
            Payload::Cert(_) => kind::CERT,
            Payload::CertReq(_) => kind::CERTREQ,
            Payload::Hash(_) => kind::HASH,
            Payload::Sig(_) => kind::SIG,
            Payload::Nonce(_) => kind::NONCE,
            Payload::Notify(_) => kind::NOTIFY,
            Payload::Delete(_) => kind::DELETE,
            Payload::VendorId(_) => kind::VENDOR_ID,
            Payload::Kd(_) => kind::KD,
            Payload::Seq(_) => kind::SEQ,
        }
    }

    fn body_len(&self) -> usize {
        match self {
            Payload::Sa(s) => s.body_len(),
            Payload::Ke(b)
            | Payload::Hash(b)
            | Payload::Sig(b)
            | Payload::Nonce(b)
            | Payload::VendorId(b) => b.len(),
            Payload::Id(i) => 4 + i.data.len(),
            Payload::Cert(c) | Payload::CertReq(c) => 1 + c.data.len(),
            Payload::Notify(n) => 8 + n.spi.len() + n.data.len(),
            Payload::Delete(d) => 8 + d.spis.iter().map(Vec::len).sum::<usize>(),
            Payload::Kd(k) => k.body_len(),
            Payload::Seq(_) => 4,
        }
    }

    fn emit_body(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        match self {
            Payload::Sa(s) => {
                let n = s.emit_body(w.tail());
                w.advance(n);
            }
            Payload::Ke(b)
            | Payload::Hash(b)
            | Payload::Sig(b)
            | Payload::Nonce(b)
            | Payload::VendorId(b) => w.bytes(b),
            Payload::Id(i) => {
                w.u8(i.id_type);
                w.u8(i.protocol);
                w.u16(i.port);
                w.bytes(&i.data);
            }
            Payload::Cert(c) | Payload::CertReq(c) => {
                w.u8(c.encoding);
                w.bytes(&c.data);
            }
            Payload::Notify(n) => {
                w.u32(n.doi);
                w.u8(n.protocol);
                w.u8(u8::try_from(n.spi.len()).unwrap_or(u8::MAX));
                w.u16(n.message_type);
                w.bytes(&n.spi);
                w.bytes(&n.data);
            }
            Payload::Delete(d) => {
                w.u32(d.doi);
                w.u8(d.protocol);
                w.u8(d.spi_size);
                w.u16(len16(d.spis.len()));
                for s in &d.spis {
                    w.bytes(s);
                }
            }
            Payload::Kd(k) => {
                let n = k.emit_body(w.tail());
                w.advance(n);
            }
            Payload::Seq(s) => w.u32(*s),
        }
        w.written()
    }
}

impl Payload {
    /// Parses one payload body of type `kind`. `exchange` decides the SA form: a GDOI SA
    /// (RFC 6407 5.1) in GROUPKEY-PULL and GROUPKEY-PUSH, proposals elsewhere.
    pub fn parse(kind: u8, body: &[u8], exchange: u8) -> Result<Payload> {
        let mut r = Reader::new(body, "payload");
        Ok(match kind {
            kind::SA => {
                let gdoi = matches!(exchange, exchange::GROUPKEY_PULL | exchange::GROUPKEY_PUSH)
                    && body.len() >= 4
                    && u32::from_be_bytes([body[0], body[1], body[2], body[3]]) == doi::GDOI;
                Payload::Sa(SaPayload::parse(body, gdoi)?)
            }
            kind::KE => Payload::Ke(body.to_vec()),
            kind::ID => {
                let id_type = r.u8()?;
                let protocol = r.u8()?;
                let port = r.u16()?;
                Payload::Id(IdPayload {
                    id_type,
                    protocol,
                    port,
                    data: r.rest().to_vec(),
                })
            }
            kind::CERT | kind::CERTREQ => {
                let c = CertPayload {
                    encoding: r.u8()?,
                    data: r.rest().to_vec(),
                };
                if kind == kind::CERT {
                    Payload::Cert(c)
                } else {
                    Payload::CertReq(c)
                }
            }
            kind::HASH => Payload::Hash(body.to_vec()),
            kind::SIG => Payload::Sig(body.to_vec()),
            kind::NONCE => Payload::Nonce(body.to_vec()),
            kind::NOTIFY => {
                let doi = r.u32()?;
                let protocol = r.u8()?;
                let spi_len = r.u8()? as usize;
                let message_type = r.u16()?;
                let spi = r.take(spi_len)?.to_vec();
                Payload::Notify(NotifyPayload {
                    doi,
                    protocol,
                    message_type,
                    spi,
                    data: r.rest().to_vec(),
                })
            }
            kind::DELETE => {
                let doi = r.u32()?;
                let protocol = r.u8()?;
                let spi_size = r.u8()?;
                let count = r.u16()? as usize;
                if spi_size == 0 && count != 0 {
                    return Err(IsakmpError::BadValue {
                        what: "delete payload",
                        detail: "SPIs of size 0",
                    });
                }
                // Check the count against the bytes before allocating for it.
                if count.saturating_mul(spi_size as usize) != r.remaining() {
                    return Err(IsakmpError::BadLength {
                        what: "delete payload",
                        value: count,
                    });
                }
                let mut spis = Vec::with_capacity(count);
                for _ in 0..count {
                    spis.push(r.take(spi_size as usize)?.to_vec());
                }
                Payload::Delete(DeletePayload {
                    doi,
                    protocol,
                    spi_size,
                    spis,
                })
            }
            kind::VENDOR_ID => Payload::VendorId(body.to_vec()),
            kind::KD => Payload::Kd(KeyDownload::parse(body)?),
            kind::SEQ => {
                let s = r.u32()?;
                r.finish()?;
                Payload::Seq(s)
            }
            other => {
                return Err(IsakmpError::InvalidPayloadType {
                    what: "message",
                    kind: other,
                })
            }
        })
    }

    /// Whether every length inside fits its field.
    pub fn fits(&self) -> bool {
        let own = chain::GENERIC_HEADER_LEN + self.body_len() <= usize::from(u16::MAX);
        own && match self {
            Payload::Sa(s) => s.fits(),
            Payload::Notify(n) => n.spi.len() <= 255,
            Payload::Delete(d) => {
                d.spis.len() <= usize::from(u16::MAX)
                    && d.spis.iter().all(|s| s.len() == usize::from(d.spi_size))
            }
            Payload::Kd(k) => k.fits(),
            _ => true,
        }
    }
}

/// Parses a payload chain starting with `first` (the header's Next Payload); with
/// `allow_trailing`, bytes after the last payload (cipher padding) are ignored.
pub fn parse_payloads(
    first: u8,
    buf: &[u8],
    exchange: u8,
    allow_trailing: bool,
) -> Result<Vec<Payload>> {
    chain::split(first, buf, "payload", allow_trailing)?
        .into_iter()
        .map(|(k, b)| Payload::parse(k, b, exchange))
        .collect()
}

/// Octets of a payload chain.
pub fn payloads_len(p: &[Payload]) -> usize {
    chain::chain_len(p)
}

/// Writes a payload chain (each generic header naming the next); returns the octets written.
pub fn emit_payloads(p: &[Payload], buf: &mut [u8]) -> usize {
    chain::emit_chain(p, buf)
}

/// The Next Payload value of the first payload (0 for none).
pub fn first_kind(p: &[Payload]) -> u8 {
    p.first().map_or(0, ChainItem::kind)
}

/// A whole unencrypted message: the header and its payloads.
///
/// The header's `next_payload` and `length` are recomputed on emit.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Message {
    /// The header.
    pub header: Header,
    /// The payloads in order.
    pub payloads: Vec<Payload>,
}

impl Message {
    /// Parses a message whose payloads are in the clear (phase-1 messages 1-4, and any
    /// message after decryption); an encrypted message is refused here: decrypt its body
    /// first and use [`parse_payloads`].
    pub fn parse(buf: &[u8]) -> Result<Message> {
        let header = Header::parse(buf)?;
        if header.encrypted() {
            return Err(IsakmpError::BadValue {
                what: "message",
                detail: "encrypted: decrypt first",
            });
        }
        let body = &buf[HEADER_LEN..header.length as usize];
        if buf.len() != header.length as usize {
            return Err(IsakmpError::TrailingBytes {
                what: "message",
                count: buf.len() - header.length as usize,
            });
        }
        let payloads = parse_payloads(header.next_payload, body, header.exchange, false)?;
        Ok(Message { header, payloads })
    }

    /// Checks that every length fits its field, so [`Codec::emit`] writes what it holds.
    pub fn check(&self) -> Result<()> {
        if !self.payloads.iter().all(Payload::fits) {
            return Err(IsakmpError::TooLarge { what: "payload" });
        }
        if u32::try_from(self.buffer_len()).is_err() {
            return Err(IsakmpError::TooLarge { what: "message" });
        }
        Ok(())
    }

    /// The encoding, after [`Message::check`].
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.check()?;
        Ok(self.to_vec())
    }
}

impl Codec for Message {
    fn buffer_len(&self) -> usize {
        HEADER_LEN + payloads_len(&self.payloads)
    }

    /// Writes the message with Next Payload and Length computed. Lengths that do not fit
    /// their fields saturate: call [`Message::check`] first (or use [`Message::to_bytes`]).
    fn emit(&self, buf: &mut [u8]) -> usize {
        let total = self.buffer_len();
        let mut h = self.header;
        h.next_payload = first_kind(&self.payloads);
        h.length = u32::try_from(total).unwrap_or(u32::MAX);
        h.emit(buf);
        emit_payloads(&self.payloads, &mut buf[HEADER_LEN..]);
        total
    }
}
