//! ISAKMP (RFC 2408) as IKEv1 (RFC 2409) and GDOI (RFC 6407) use it, with RFC 8052's IEC 61850
//! additions: sans-I/O parse and emit of the header, the payloads and whole messages.
//!
//! No cryptography here: encrypted messages are parsed up to the header, and their payloads
//! after the caller decrypted them ([`payload::parse_payloads`] with `allow_trailing` for the
//! cipher padding). The exchanges themselves are `gander-gdoi`'s.
//!
//! Every parser checks each length against the bytes present before it uses it, caps the
//! number of elements it collects, and refuses with an [`IsakmpError`] whose
//! [`IsakmpError::notify`] is the RFC 2408 3.14.1 notification for the peer. Encoding choices
//! where the RFC text leaves room are listed in `docs/gdoi.md`.

pub mod attribute;
mod chain;
pub mod error;
pub mod gdoi;
pub mod header;
pub mod id_oid;
pub mod iec61850;
pub mod iec61850_alg;
pub mod payload;
mod reader;
pub mod sa;

pub use attribute::{AttrValue, Attribute};
pub use error::{IsakmpError, Result};
pub use gdoi::{KekId, KeyDownload, KeyPacket, SaAttrPayload, SaKek, SaTek};
pub use header::{Header, HEADER_LEN};
pub use id_oid::IdOid;
pub use iec61850::{Iec61850Tek, Traffic};
pub use payload::{CertPayload, DeletePayload, IdPayload, Message, NotifyPayload, Payload};
pub use sa::{Proposal, SaBody, SaPayload, Transform};

/// Where a payload chain starting with `first` ends in `buf` (the octets after it are cipher
/// padding): a HASH over "the rest of the message" (RFC 2409 5.5) covers exactly up to here.
pub fn chain_end(first: u8, buf: &[u8]) -> Result<usize> {
    let parts = chain::split(first, buf, "payload", true)?;
    Ok(parts.iter().map(|(_, b)| 4 + b.len()).sum())
}

/// The UDP port of ISAKMP and GDOI (RFC 2408, RFC 6407 2).
pub const UDP_PORT: u16 = 848;

#[cfg(test)]
mod tests {
    use super::attribute::tests::arb_attrs;
    use super::header::exchange;
    use super::iec61850::tests::arb_tek;
    use super::*;
    use crate::Codec;
    use proptest::prelude::*;

    fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..max)
    }

    fn arb_transform() -> impl Strategy<Value = Transform> {
        (any::<u8>(), any::<u8>(), arb_attrs()).prop_map(|(number, id, attributes)| Transform {
            number,
            id,
            attributes,
        })
    }

    fn arb_proposal() -> impl Strategy<Value = Proposal> {
        (
            any::<u8>(),
            any::<u8>(),
            bytes(8),
            proptest::collection::vec(arb_transform(), 0..3),
        )
            .prop_map(|(number, protocol, spi, transforms)| Proposal {
                number,
                protocol,
                spi,
                transforms,
            })
    }

    fn arb_kek_id() -> impl Strategy<Value = KekId> {
        (any::<u8>(), any::<u16>(), bytes(16)).prop_map(|(id_type, port, data)| KekId {
            id_type,
            port,
            data,
        })
    }

    fn arb_sa_attr() -> impl Strategy<Value = SaAttrPayload> {
        prop_oneof![
            (
                any::<u8>(),
                arb_kek_id(),
                any::<u8>(),
                arb_kek_id(),
                any::<[u8; 16]>(),
                arb_attrs()
            )
                .prop_map(|(protocol, src, dst_protocol, dst, spi, attributes)| {
                    SaAttrPayload::Kek(SaKek {
                        protocol,
                        src,
                        dst_protocol,
                        dst,
                        spi,
                        attributes,
                    })
                }),
            arb_tek().prop_map(|t| SaAttrPayload::Tek(SaTek::Iec61850(t))),
            (1u8..3, bytes(20)).prop_map(|(protocol_id, body)| SaAttrPayload::Tek(SaTek::Other {
                protocol_id,
                body
            })),
            arb_attrs().prop_map(SaAttrPayload::Gap),
        ]
    }

    fn arb_kd() -> impl Strategy<Value = KeyDownload> {
        proptest::collection::vec(
            (any::<u8>(), bytes(8), arb_attrs()).prop_map(|(kd_type, spi, attributes)| KeyPacket {
                kd_type,
                spi,
                attributes,
            }),
            0..4,
        )
        .prop_map(|packets| KeyDownload { packets })
    }

    /// Payloads that may appear in any exchange (the SA's form depends on the exchange).
    fn arb_common() -> impl Strategy<Value = Payload> {
        prop_oneof![
            bytes(64).prop_map(Payload::Ke),
            (any::<u8>(), any::<u8>(), any::<u16>(), bytes(20)).prop_map(
                |(id_type, protocol, port, data)| Payload::Id(IdPayload {
                    id_type,
                    protocol,
                    port,
                    data
                })
            ),
            (any::<u8>(), bytes(40))
                .prop_map(|(encoding, data)| Payload::Cert(CertPayload { encoding, data })),
            (any::<u8>(), bytes(10))
                .prop_map(|(encoding, data)| Payload::CertReq(CertPayload { encoding, data })),
            bytes(48).prop_map(Payload::Hash),
            bytes(96).prop_map(Payload::Sig),
            bytes(32).prop_map(Payload::Nonce),
            (
                any::<u32>(),
                any::<u8>(),
                any::<u16>(),
                bytes(16),
                bytes(16)
            )
                .prop_map(|(doi, protocol, message_type, spi, data)| Payload::Notify(
                    NotifyPayload {
                        doi,
                        protocol,
                        message_type,
                        spi,
                        data
                    }
                )),
            (any::<u32>(), any::<u8>(), 1u8..17, 0usize..4).prop_map(
                |(doi, protocol, spi_size, n)| {
                    Payload::Delete(DeletePayload {
                        doi,
                        protocol,
                        spi_size,
                        spis: (0..n).map(|i| vec![i as u8; spi_size as usize]).collect(),
                    })
                }
            ),
            bytes(16).prop_map(Payload::VendorId),
            arb_kd().prop_map(Payload::Kd),
            any::<u32>().prop_map(Payload::Seq),
        ]
    }

    fn arb_message() -> impl Strategy<Value = Message> {
        let phase1 = (
            proptest::sample::select(vec![exchange::MAIN_MODE, exchange::INFORMATIONAL]),
            proptest::collection::vec(
                prop_oneof![
                    (
                        0u32..3,
                        any::<u32>(),
                        proptest::collection::vec(arb_proposal(), 0..3)
                    )
                        .prop_map(|(doi, situation, p)| Payload::Sa(
                            SaPayload {
                                doi,
                                situation,
                                body: SaBody::Proposals(p)
                            }
                        )),
                    arb_common(),
                ],
                0..6,
            ),
        );
        let gdoi = (
            proptest::sample::select(vec![exchange::GROUPKEY_PULL, exchange::GROUPKEY_PUSH]),
            proptest::collection::vec(
                prop_oneof![
                    (any::<u32>(), proptest::collection::vec(arb_sa_attr(), 0..4)).prop_map(
                        |(situation, p)| {
                            Payload::Sa(SaPayload {
                                doi: sa::doi::GDOI,
                                situation,
                                body: SaBody::Gdoi(p),
                            })
                        }
                    ),
                    arb_common(),
                ],
                0..6,
            ),
        );
        (
            prop_oneof![phase1, gdoi],
            any::<[u8; 8]>(),
            any::<[u8; 8]>(),
            any::<u32>(),
        )
            .prop_map(|((ex, payloads), ic, rc, mid)| Message {
                header: Header {
                    initiator_cookie: ic,
                    responder_cookie: rc,
                    next_payload: 0,
                    major_version: 1,
                    minor_version: 0,
                    exchange: ex,
                    flags: 0,
                    message_id: mid,
                    length: 0,
                },
                payloads,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn message_round_trip(m in arb_message()) {
            let bytes = m.to_bytes().unwrap();
            let p = Message::parse(&bytes).unwrap();
            prop_assert_eq!(&p.payloads, &m.payloads);
            prop_assert_eq!(p.to_vec(), bytes);
        }

        #[test]
        fn arbitrary_bytes_parse_or_refuse(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(m) = Message::parse(&data) {
                let again = Message::parse(&m.to_vec()).unwrap();
                prop_assert_eq!(again, m);
            }
        }

        #[test]
        fn every_truncation_refused(m in arb_message()) {
            let bytes = m.to_vec();
            for cut in 0..bytes.len() {
                prop_assert!(Message::parse(&bytes[..cut]).is_err());
            }
        }
    }

    #[test]
    fn gdoi_sa_attribute_next_payload_both_widths() {
        // A GDOI SA with one GAP payload, SA Attribute Next Payload in the two-octet form gander
        // writes (and Wireshark reads) and in the one-octet form of RFC 6407's text.
        let gap = [0u8, 0, 0, 8, 0x80, 1, 0, 30];
        for form in [[0u8, 22, 0, 0], [22u8, 0, 0, 0]] {
            let mut body = vec![0, 0, 0, 2, 0, 0, 0, 0];
            body.extend_from_slice(&form);
            body.extend_from_slice(&gap);
            let sa = SaPayload::parse(&body, true).unwrap();
            assert_eq!(
                sa.body,
                SaBody::Gdoi(vec![SaAttrPayload::Gap(vec![Attribute::basic(1, 30)])])
            );
        }
    }

    #[test]
    fn ke_payload_layout() {
        // RFC 2408 3.2: Next Payload, RESERVED, Payload Length (header included), data.
        let m = Message {
            header: Header {
                initiator_cookie: [1; 8],
                responder_cookie: [2; 8],
                next_payload: 0,
                major_version: 1,
                minor_version: 0,
                exchange: exchange::MAIN_MODE,
                flags: 0,
                message_id: 0,
                length: 0,
            },
            payloads: vec![Payload::Ke(vec![0xaa; 4]), Payload::Nonce(vec![0xbb; 2])],
        };
        let b = m.to_bytes().unwrap();
        assert_eq!(b[16], 4, "first payload KE");
        assert_eq!(b[17], 0x10);
        assert_eq!(&b[24..28], &(28u32 + 8 + 6).to_be_bytes());
        assert_eq!(&b[28..32], &[10, 0, 0, 8]);
        assert_eq!(&b[36..40], &[0, 0, 0, 6]);
    }
}
