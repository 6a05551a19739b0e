//! GDOI's payloads (RFC 6407 section 5): the SA attribute payloads of a group SA (SA KEK,
//! SA TEK, GAP), Key Download with its key packets, and the attribute numbers they carry.

use super::attribute::Attribute;
use super::chain::ChainItem;
use super::error::{IsakmpError, Result};
use super::iec61850::Iec61850Tek;
use super::payload::kind;
use super::reader::{len16, len8, Reader, Writer};

/// SA TEK Protocol-IDs (RFC 6407 5.4; IEC 61850 from RFC 8052, docs/gdoi.md).
pub mod tek_protocol {
    /// IPsec ESP (RFC 6407 5.4.1).
    pub const IPSEC_ESP: u8 = 1;
    /// IPsec AH (RFC 6407 5.4.2).
    pub const IPSEC_AH: u8 = 2;
    /// IEC 61850 GOOSE, SV, R-GOOSE, R-SV (RFC 8052): the next value of the registry.
    pub const IEC61850: u8 = 3;
}

/// SA KEK policy attributes (RFC 6407 5.3.1-5.3.9).
pub mod kek_attr {
    /// KEK_MANAGEMENT_ALGORITHM.
    pub const MANAGEMENT_ALGORITHM: u16 = 1;
    /// KEK_ALGORITHM: the cipher protecting GROUPKEY-PUSH.
    pub const ALGORITHM: u16 = 2;
    /// KEK_KEY_LENGTH in bits.
    pub const KEY_LENGTH: u16 = 3;
    /// KEK_KEY_LIFETIME in seconds.
    pub const KEY_LIFETIME: u16 = 4;
    /// SIG_HASH_ALGORITHM of the key server's signature.
    pub const SIG_HASH_ALGORITHM: u16 = 5;
    /// SIG_ALGORITHM of the key server's signature.
    pub const SIG_ALGORITHM: u16 = 6;
    /// SIG_KEY_LENGTH in bits.
    pub const SIG_KEY_LENGTH: u16 = 7;
    /// KEK_INTEGRITY_ALGORITHM.
    pub const INTEGRITY_ALGORITHM: u16 = 8;

    /// KEK_ALGORITHM value AES-CBC (RFC 6407 5.3.3).
    pub const ALG_AES: u16 = 3;
    /// SIG_HASH value SHA-256 (RFC 6407 5.3.6).
    pub const HASH_SHA256: u16 = 4;
    /// SIG_HASH value SHA-384.
    pub const HASH_SHA384: u16 = 5;
    /// SIG_ALGORITHM RSA PKCS#1 v1.5 (RFC 6407 5.3.7).
    pub const SIG_RSA: u16 = 1;
    /// SIG_ALGORITHM ECDSA-256 (RFC 6407 5.3.7, RFC 4754).
    pub const SIG_ECDSA_256: u16 = 3;
    /// SIG_ALGORITHM ECDSA-384.
    pub const SIG_ECDSA_384: u16 = 4;
}

/// Key Download key packet types (RFC 6407 5.6).
pub mod kd_type {
    /// A TEK.
    pub const TEK: u8 = 1;
    /// The KEK.
    pub const KEK: u8 = 2;
    /// LKH array (not implemented by gander).
    pub const LKH: u8 = 3;
    /// Sender-ID block (RFC 6407 5.6.4, counter modes).
    pub const SID: u8 = 4;
}

/// Key packet attributes (RFC 6407 5.6.1, 5.6.2).
pub mod kd_attr {
    /// TEK_ALGORITHM_KEY: the TEK's cipher key (for the IEC 62351-6 GCM/GMAC algorithms).
    pub const TEK_ALGORITHM_KEY: u16 = 1;
    /// TEK_INTEGRITY_KEY: the TEK's MAC key (for the IEC 62351-6 HMAC algorithms).
    pub const TEK_INTEGRITY_KEY: u16 = 2;
    /// TEK_SOURCE_AUTH_KEY.
    pub const TEK_SOURCE_AUTH_KEY: u16 = 3;
    /// KEK_ALGORITHM_KEY: the KEK's cipher key.
    pub const KEK_ALGORITHM_KEY: u16 = 1;
    /// SIG_ALGORITHM_KEY: the key server's public key, to check GROUPKEY-PUSH signatures.
    pub const SIG_ALGORITHM_KEY: u16 = 2;
    /// KEK_INTEGRITY_KEY.
    pub const KEK_INTEGRITY_KEY: u16 = 3;
}

/// GAP attributes (RFC 6407 5.8).
pub mod gap_attr {
    /// ACTIVATION_TIME_DELAY in seconds.
    pub const ACTIVATION_TIME_DELAY: u16 = 1;
    /// DEACTIVATION_TIME_DELAY in seconds.
    pub const DEACTIVATION_TIME_DELAY: u16 = 2;
    /// SENDER_ID_REQUEST.
    pub const SENDER_ID_REQUEST: u16 = 3;
}

/// A source or destination identity of an SA KEK (RFC 6407 5.3).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KekId {
    /// ID type (RFC 2407 4.6.2.1).
    pub id_type: u8,
    /// Port.
    pub port: u16,
    /// Identification data (at most 255 octets: the length is one octet).
    pub data: Vec<u8>,
}

/// SA KEK payload (RFC 6407 5.3): how GROUPKEY-PUSH messages are protected.
///
/// ```text
/// Protocol (1) | SRC ID Type (1) | SRC ID Port (2) | SRC ID Data Len (1) | SRC ID Data
/// DST ID Type (1) | DST ID Prot (1) | DST ID Port (2) | DST ID Data Len (1) | DST ID Data
/// SPI (16) | RESERVED2 (4) | KEK Attributes
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SaKek {
    /// IP protocol of the push (17, UDP).
    pub protocol: u8,
    /// The key server's address.
    pub src: KekId,
    /// IP protocol of the destination.
    pub dst_protocol: u8,
    /// The group's push destination.
    pub dst: KekId,
    /// The KEK SPI: the cookies of the push messages.
    pub spi: [u8; 16],
    /// KEK policy ([`kek_attr`]).
    pub attributes: Vec<Attribute>,
}

/// SA TEK payload (RFC 6407 5.4): one traffic-protection policy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SaTek {
    /// IEC 61850 (RFC 8052).
    Iec61850(Iec61850Tek),
    /// Another protocol (ESP, AH): kept as bytes, never acted on.
    Other {
        /// Its Protocol-ID.
        protocol_id: u8,
        /// Its protocol-specific payload.
        body: Vec<u8>,
    },
}

/// One SA attribute payload of a GDOI SA.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SaAttrPayload {
    /// SA KEK.
    Kek(SaKek),
    /// SA TEK.
    Tek(SaTek),
    /// Group Associated Policy ([`gap_attr`]).
    Gap(Vec<Attribute>),
}

fn read_kek_id(r: &mut Reader<'_>, id_type: u8, port: u16) -> Result<KekId> {
    let n = r.u8()? as usize;
    Ok(KekId {
        id_type,
        port,
        data: r.take(n)?.to_vec(),
    })
}

impl SaKek {
    fn parse(body: &[u8]) -> Result<SaKek> {
        let mut r = Reader::new(body, "SA KEK");
        let protocol = r.u8()?;
        let st = r.u8()?;
        let sp = r.u16()?;
        let src = read_kek_id(&mut r, st, sp)?;
        let dt = r.u8()?;
        let dst_protocol = r.u8()?;
        let dp = r.u16()?;
        let dst = read_kek_id(&mut r, dt, dp)?;
        let mut spi = [0u8; 16];
        spi.copy_from_slice(r.take(16)?);
        let _reserved2 = r.take(4)?;
        Ok(SaKek {
            protocol,
            src,
            dst_protocol,
            dst,
            spi,
            attributes: Attribute::parse_list(r.rest())?,
        })
    }

    fn body_len(&self) -> usize {
        4 + 1
            + self.src.data.len()
            + 4
            + 1
            + self.dst.data.len()
            + 16
            + 4
            + Attribute::list_len(&self.attributes)
    }

    fn emit_body(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u8(self.protocol);
        w.u8(self.src.id_type);
        w.u16(self.src.port);
        w.u8(len8(self.src.data.len()));
        w.bytes(&self.src.data);
        w.u8(self.dst.id_type);
        w.u8(self.dst_protocol);
        w.u16(self.dst.port);
        w.u8(len8(self.dst.data.len()));
        w.bytes(&self.dst.data);
        w.bytes(&self.spi);
        w.u32(0);
        let n = Attribute::emit_list(&self.attributes, w.tail());
        w.advance(n);
        w.written()
    }
}

impl SaAttrPayload {
    /// Parses one SA attribute payload body of type `k`.
    pub fn parse(k: u8, body: &[u8]) -> Result<SaAttrPayload> {
        match k {
            kind::SA_KEK => Ok(SaAttrPayload::Kek(SaKek::parse(body)?)),
            kind::SA_TEK => {
                let mut r = Reader::new(body, "SA TEK");
                let protocol_id = r.u8()?;
                let rest = r.rest();
                Ok(SaAttrPayload::Tek(
                    if protocol_id == tek_protocol::IEC61850 {
                        SaTek::Iec61850(Iec61850Tek::parse(rest)?)
                    } else {
                        SaTek::Other {
                            protocol_id,
                            body: rest.to_vec(),
                        }
                    },
                ))
            }
            kind::GAP => Ok(SaAttrPayload::Gap(Attribute::parse_list(body)?)),
            other => Err(IsakmpError::InvalidPayloadType {
                what: "GDOI SA",
                kind: other,
            }),
        }
    }

    /// Whether every nested length fits.
    pub fn fits(&self) -> bool {
        match self {
            SaAttrPayload::Kek(k) => {
                k.src.data.len() <= 255
                    && k.dst.data.len() <= 255
                    && k.attributes.iter().all(Attribute::fits)
            }
            SaAttrPayload::Tek(SaTek::Iec61850(t)) => t.fits(),
            SaAttrPayload::Tek(SaTek::Other { .. }) => true,
            SaAttrPayload::Gap(a) => a.iter().all(Attribute::fits),
        }
    }
}

impl ChainItem for SaAttrPayload {
    fn kind(&self) -> u8 {
        match self {
            SaAttrPayload::Kek(_) => kind::SA_KEK,
            SaAttrPayload::Tek(_) => kind::SA_TEK,
            SaAttrPayload::Gap(_) => kind::GAP,
        }
    }

    fn body_len(&self) -> usize {
        match self {
            SaAttrPayload::Kek(k) => k.body_len(),
            SaAttrPayload::Tek(SaTek::Iec61850(t)) => 1 + t.body_len(),
            SaAttrPayload::Tek(SaTek::Other { body, .. }) => 1 + body.len(),
            SaAttrPayload::Gap(a) => Attribute::list_len(a),
        }
    }

    fn emit_body(&self, buf: &mut [u8]) -> usize {
        match self {
            SaAttrPayload::Kek(k) => k.emit_body(buf),
            SaAttrPayload::Tek(SaTek::Iec61850(t)) => {
                buf[0] = tek_protocol::IEC61850;
                1 + t.emit_body(&mut buf[1..])
            }
            SaAttrPayload::Tek(SaTek::Other { protocol_id, body }) => {
                buf[0] = *protocol_id;
                buf[1..1 + body.len()].copy_from_slice(body);
                1 + body.len()
            }
            SaAttrPayload::Gap(a) => Attribute::emit_list(a, buf),
        }
    }
}

/// One key packet of a Key Download payload (RFC 6407 5.6).
///
/// ```text
/// KD Type (1) | RESERVED (1) | KD Length (2) | SPI Size (1) | SPI | Key Packet Attributes
/// ```
/// RFC 6407 5.6 defines KD Length as the length of the key packet "including the Key Packet
/// header" (RFC 3547 5.6 said the same): gander writes that. It also reads the length of the
/// octets after the field, which gander wrote before (docs/gdoi.md, "Encoding choices").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyPacket {
    /// KD Type ([`kd_type`]).
    pub kd_type: u8,
    /// SPI of the SA whose keys these are (the IEC 62351-6 Key ID for a TEK).
    pub spi: Vec<u8>,
    /// The keys ([`kd_attr`]).
    pub attributes: Vec<Attribute>,
}

/// Key Download payload (RFC 6407 5.6).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyDownload {
    /// Key packets.
    pub packets: Vec<KeyPacket>,
}

/// Most key packets one KD may hold.
pub const MAX_KEY_PACKETS: usize = 64;

/// Octets of a key packet's header (KD Type, RESERVED, KD Length), which KD Length counts.
const KEY_PACKET_HEADER: usize = 4;

impl KeyPacket {
    /// The KD Length written: the whole key packet, header included (RFC 6407 5.6).
    fn len_field(&self) -> usize {
        KEY_PACKET_HEADER + 1 + self.spi.len() + Attribute::list_len(&self.attributes)
    }
}

impl KeyDownload {
    /// Parses a KD body: Number of Key Packets (2), RESERVED2 (2), the key packets.
    ///
    /// KD Length is read as RFC 6407 5.6 defines it (the key packet with its 4-octet header,
    /// as go-iec61850's `gdoi` and the Cisco GDOI reference implementation write it); when
    /// that reading fails, the whole body is read again with KD Length counting only the
    /// octets after the field, the form gander wrote before. Each reading must consume the
    /// body exactly, so the two cannot both explain one input by accident unless they agree on
    /// every packet (docs/gdoi.md).
    pub fn parse(body: &[u8]) -> Result<KeyDownload> {
        Self::parse_reading(body, KEY_PACKET_HEADER)
            .or_else(|e| Self::parse_reading(body, 0).map_err(|_| e))
    }

    /// Parses with KD Length counting `header` octets of the key packet before its data.
    fn parse_reading(body: &[u8], header: usize) -> Result<KeyDownload> {
        let mut r = Reader::new(body, "key download");
        let count = r.u16()? as usize;
        let _reserved = r.u16()?;
        if count > MAX_KEY_PACKETS {
            return Err(IsakmpError::TooMany {
                what: "key packets",
                limit: MAX_KEY_PACKETS,
            });
        }
        let mut packets = Vec::with_capacity(count);
        for _ in 0..count {
            let kd_type = r.u8()?;
            let _res = r.u8()?;
            let declared = r.u16()? as usize;
            let len = declared.checked_sub(header).ok_or(IsakmpError::BadLength {
                what: "key packet",
                value: declared,
            })?;
            let pkt = r.take(len).map_err(|_| IsakmpError::BadLength {
                what: "key packet",
                value: len,
            })?;
            let mut p = Reader::new(pkt, "key packet");
            let spi_len = p.u8()? as usize;
            let spi = p.take(spi_len)?.to_vec();
            packets.push(KeyPacket {
                kd_type,
                spi,
                attributes: Attribute::parse_list(p.rest())?,
            });
        }
        r.finish()?;
        Ok(KeyDownload { packets })
    }

    /// Octets of the body.
    pub fn body_len(&self) -> usize {
        4 + self.packets.iter().map(KeyPacket::len_field).sum::<usize>()
    }

    /// Writes the body.
    pub fn emit_body(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u16(len16(self.packets.len()));
        w.u16(0);
        for p in &self.packets {
            w.u8(p.kd_type);
            w.u8(0);
            w.u16(len16(p.len_field()));
            w.u8(len8(p.spi.len()));
            w.bytes(&p.spi);
            let n = Attribute::emit_list(&p.attributes, w.tail());
            w.advance(n);
        }
        w.written()
    }

    /// Whether every length fits.
    pub fn fits(&self) -> bool {
        self.packets.len() <= usize::from(u16::MAX)
            && self.packets.iter().all(|p| {
                p.spi.len() <= 255
                    && p.len_field() <= usize::from(u16::MAX)
                    && p.attributes.iter().all(Attribute::fits)
            })
    }
}

#[cfg(test)]
mod kd_length_tests {
    use super::*;

    /// go-iec61850's `gdoi` KD for one TEK (SPI bd61aa83, a 32-octet TEK_INTEGRITY_KEY), as
    /// its key server sent it to `gander gdoi register`: KD Length 0x2d = 4 (header) + 1 + 4
    /// + 36, RFC 6407 5.6's "including the Key Packet header".
    fn go_kd(kd_length: u8) -> Vec<u8> {
        let mut b = vec![
            0x00,
            0x01,
            0x00,
            0x00,
            kd_type::TEK,
            0x00,
            0x00,
            kd_length,
            0x04,
        ];
        b.extend_from_slice(&[0xbd, 0x61, 0xaa, 0x83, 0x00, 0x02, 0x00, 0x20]);
        b.extend_from_slice(&[0x11; 32]);
        b
    }

    #[test]
    fn kd_length_counts_the_key_packet_header_as_rfc_6407_says() {
        let b = go_kd(0x2d);
        let kd = KeyDownload::parse(&b).unwrap();
        assert_eq!(kd.packets[0].spi, vec![0xbd, 0x61, 0xaa, 0x83]);
        assert_eq!(kd.packets[0].attributes[0].bytes(), vec![0x11; 32]);
        // gander writes the same octets: the Go member read gander's earlier KD Length (4
        // less) as landing inside the key ("key packet of 25625 octets, 49 remain").
        let mut out = vec![0u8; kd.body_len()];
        kd.emit_body(&mut out);
        assert_eq!(out, b);
    }

    #[test]
    fn the_older_gander_form_is_still_read() {
        // KD Length 0x29: the octets after the field, what gander wrote before.
        let kd = KeyDownload::parse(&go_kd(0x29)).unwrap();
        assert_eq!(kd, KeyDownload::parse(&go_kd(0x2d)).unwrap());
        // Neither reading explains a length of 3.
        assert!(KeyDownload::parse(&go_kd(3)).is_err());
    }

    #[test]
    fn two_key_packets_are_delimited_by_kd_length() {
        let p = |spi: u8, n: usize| KeyPacket {
            kd_type: kd_type::TEK,
            spi: vec![0, 0, 0, spi],
            attributes: vec![Attribute::variable(
                kd_attr::TEK_INTEGRITY_KEY,
                vec![spi; n],
            )],
        };
        let kd = KeyDownload {
            packets: vec![p(1, 32), p(2, 20)],
        };
        let mut out = vec![0u8; kd.body_len()];
        assert_eq!(kd.emit_body(&mut out), out.len());
        // The second packet starts KD Length octets after the first one's start.
        let first_len = usize::from(u16::from_be_bytes([out[6], out[7]]));
        assert_eq!(first_len, 4 + 1 + 4 + 4 + 32);
        assert_eq!(out[4 + first_len], kd_type::TEK);
        assert_eq!(KeyDownload::parse(&out), Ok(kd));
    }
}
