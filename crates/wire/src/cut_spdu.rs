//! What the captured start of an IEC 61850-90-5 session PDU (R-GOOSE, R-SV) shows when the
//! capture cut its datagram (a snap length: `tcpdump -s 96`).
//!
//! [`SessionPdu::parse`](crate::spdu::SessionPdu::parse) refuses such a PDU: its SPDU length
//! and PayloadLength run past the captured octets. But the fixed session header is short (22
//! octets, then the security information and PayloadLength, [`crate::spdu`]'s layout table),
//! and behind it the first payload element's header (type, simulation, APPID, APDU length) and
//! the start of its APDU: what a reader of the capture needs to put the datagram into its
//! publisher's stream, as [`crate::cut_apdu`] does for a layer-2 frame. [`spdu_prefix`] reads
//! the fields in order as long as each is whole within the captured octets, never reads past
//! the slice and never fails: what it could not read is `None`.

use crate::spdu::{field, SpduId, CLTP_LI, CLTP_UD, COMMON_HEADER_TAG};

/// The session header fields and first payload element readable from a cut SPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpduPrefix<'a> {
    /// SI: what the session carries.
    pub spdu_id: SpduId,
    /// The SPDU number (the session's sequence counter), if captured.
    pub spdu_number: Option<u32>,
    /// The Key ID, if captured.
    pub key_id: Option<u32>,
    /// Whether the header announces security: `Some(true)` for a Key ID other than 0, an IV
    /// or (version 1) an algorithm code; `Some(false)` when all of these were captured and are
    /// zero (Key ID 0 names no key, IEC 62351-9); `None` when the capture cut them.
    pub secured: Option<bool>,
    /// Version 1 names its encryption algorithm in the header: `Some(false)` when it is 0 (the
    /// payload is cleartext). Version 2 leaves it to the key: `None`.
    pub encrypted: Option<bool>,
    /// The first payload element, if its six-octet header was captured. In a secured version-2
    /// SPDU it may be ciphertext that only looks like an element: the caller decides whether
    /// to believe it.
    pub element: Option<ElementPrefix<'a>>,
}

/// The header of a payload element and the captured start of its APDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementPrefix<'a> {
    /// Payload type: 0x81 GOOSE, 0x82 SV, 0x83 tunnelled, 0x84 management.
    pub payload_type: u8,
    /// The simulation octet.
    pub simulation: u8,
    /// APPID.
    pub appid: u16,
    /// The APDU as far as captured (its announced length not applied: it may run past).
    pub apdu: &'a [u8],
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Reads what `payload` (the captured UDP payload) shows of a session PDU. `None` unless its
/// first five octets were captured and are a CLTP UD TPDU (`01 40`), a known SI and the common
/// session header's tag: anything else is not an SPDU this reader can vouch for.
pub fn spdu_prefix(payload: &[u8]) -> Option<SpduPrefix<'_>> {
    let head = payload.get(..=field::COMMON_HEADER_TAG)?;
    if head[field::LI] != CLTP_LI
        || head[field::TI] != CLTP_UD
        || head[field::COMMON_HEADER_TAG] != COMMON_HEADER_TAG
    {
        return None;
    }
    let spdu_id = SpduId::from_u8(head[field::SI]).ok()?;
    let mut p = SpduPrefix {
        spdu_id,
        spdu_number: be32(payload, field::SPDU_NUMBER.start),
        key_id: None,
        secured: None,
        encrypted: None,
        element: None,
    };
    // The security information's layout and the payload's start, by version.
    let payload_length_at = match be16(payload, field::VERSION.start) {
        Some(1) => {
            p.key_id = be32(payload, field::V1_KEY_ID.start);
            let codes = payload.get(field::V1_ENC_ALGORITHM..=field::V1_MAC_ALGORITHM);
            p.encrypted = codes.map(|c| c[0] != 0);
            p.secured = codes
                .zip(p.key_id)
                .map(|(c, k)| k != 0 || c.iter().any(|&x| x != 0));
            field::V1_KEY_ID.end
        }
        Some(2) => {
            p.key_id = be32(payload, field::V2_KEY_ID.start);
            let iv_len = payload.get(field::V2_IV_LEN).map(|&n| usize::from(n));
            p.secured = iv_len.zip(p.key_id).map(|(n, k)| k != 0 || n != 0);
            let Some(n) = iv_len else {
                return Some(p);
            };
            field::V2_IV + n
        }
        _ => return Some(p),
    };
    let at = payload_length_at + field::PAYLOAD_LENGTH_LEN;
    if let Some(h) = payload.get(at..at + crate::spdu::ELEMENT_HEADER_LEN) {
        p.element = Some(ElementPrefix {
            payload_type: h[field::ELEMENT_TYPE],
            simulation: h[field::ELEMENT_SIMULATION],
            appid: u16::from_be_bytes([
                h[field::ELEMENT_APPID.start],
                h[field::ELEMENT_APPID.start + 1],
            ]),
            apdu: &payload[at + crate::spdu::ELEMENT_HEADER_LEN..],
        });
    }
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spdu::{
        Dialect, Iv, PayloadElement, SecurityInfo, SessionHeader, SessionPdu, SpduPayload,
        SpduRepr, ELEMENT_HEADER_LEN,
    };
    use proptest::prelude::*;

    const APDU: &[u8] = &[0x61, 0x05, 0x80, 0x03, b'a', b'/', b'b'];

    fn spdu(security: SecurityInfo) -> Vec<u8> {
        let header = SessionHeader {
            spdu_id: SpduId::Goose,
            spdu_number: 0x0102_0304,
            time_of_current_key: 7,
            time_to_next_key: -1,
            security,
        };
        let element = [PayloadElement {
            payload_type: 0x81,
            simulation: 1,
            appid: 0x3001,
            apdu: APDU,
        }];
        SpduRepr::new(
            header,
            SpduPayload::Elements(&element),
            0,
            &Dialect::STANDARD,
        )
        .unwrap()
        .to_vec_with_trailer(&[])
        .unwrap()
    }

    /// A whole SPDU of each version reads as the parser reads it: SI, SPDU number, Key ID,
    /// security, the first element's header and its APDU.
    #[test]
    fn a_whole_spdu_reads_as_parsed() {
        let v1 = SecurityInfo::V1 {
            enc_code: 0,
            mac_code: 0,
            key_id: 0,
        };
        let v2 = SecurityInfo::V2 {
            key_id: 9,
            iv: Iv::from([5; 12]),
        };
        for (sec, secured) in [(v1, false), (v2, true)] {
            let b = spdu(sec);
            let parsed = SessionPdu::parse(&b, &Dialect::STANDARD).unwrap();
            let p = spdu_prefix(&b).unwrap();
            assert_eq!(p.spdu_id, SpduId::Goose);
            assert_eq!(p.spdu_number, Some(parsed.header.spdu_number));
            assert_eq!(p.key_id, Some(parsed.header.security.key_id()));
            assert_eq!(p.secured, Some(secured));
            let e = p.element.unwrap();
            assert_eq!((e.payload_type, e.simulation, e.appid), (0x81, 1, 0x3001));
            assert_eq!(&e.apdu[..APDU.len()], APDU);
            assert_eq!(
                parsed.payload_start + ELEMENT_HEADER_LEN,
                b.len() - e.apdu.len()
            );
        }
    }

    /// Cut at every length: the fields appear in order and never change once read.
    #[test]
    fn fields_appear_in_order_as_the_cut_moves() {
        let b = spdu(SecurityInfo::V2 {
            key_id: 9,
            iv: Iv::from([5; 12]),
        });
        let whole = spdu_prefix(&b).unwrap();
        for n in 0..b.len() {
            let Some(p) = spdu_prefix(&b[..n]) else {
                assert!(n < 5, "cut at {n}");
                continue;
            };
            assert_eq!(p.spdu_number.is_some(), n >= 14, "cut at {n}");
            assert_eq!(p.key_id.is_some(), n >= 26, "cut at {n}");
            assert_eq!(p.secured.is_some(), n >= 27, "cut at {n}");
            assert_eq!(p.element.is_some(), n >= 27 + 12 + 4 + 6, "cut at {n}");
            for (got, want) in [(p.spdu_number, whole.spdu_number), (p.key_id, whole.key_id)] {
                assert!(got.is_none() || got == want, "cut at {n}");
            }
        }
    }

    /// Not a CLTP UD TPDU, an unknown SI, no common header: not an SPDU.
    #[test]
    fn what_is_not_an_spdu() {
        let b = spdu(SecurityInfo::V1 {
            enc_code: 0,
            mac_code: 0,
            key_id: 0,
        });
        for (at, byte) in [(0, 0x02), (1, 0x41), (2, 0xa7), (4, 0x81)] {
            let mut x = b.clone();
            x[at] = byte;
            assert_eq!(spdu_prefix(&x), None, "octet {at}");
        }
        // A version this reader does not know: the header's fixed part only.
        let mut x = b.clone();
        x[15] = 3;
        let p = spdu_prefix(&x).unwrap();
        assert_eq!((p.key_id, p.secured, p.element), (None, None, None));
    }

    proptest! {
        /// Any bytes behind a valid start: an answer, never a read past the slice.
        #[test]
        fn any_bytes_have_an_answer(rest in proptest::collection::vec(any::<u8>(), 0..96)) {
            let mut b = vec![0x01, 0x40, 0xa1, 0x20, 0x80];
            b.extend(rest);
            let p = spdu_prefix(&b);
            prop_assert!(p.is_some());
            let _ = spdu_prefix(&b[1..]);
        }
    }
}
