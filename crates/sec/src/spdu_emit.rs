//! R-GOOSE/R-SV session PDUs written into the caller's buffer, secured or not, in the one
//! encoder shape of issue 23 item 3 (smoltcp's `Repr`): a value that borrows its payload,
//! `buffer_len()`, and `emit(&mut [u8])` that fills the buffer, MAC, GCM tag and every length
//! included. [`crate::spdu::protect`] is a `Vec` wrapper of [`SecuredSpduRepr`].
//!
//! A gateway that secures or strips a received SPDU sends its payload elements on unchanged
//! under a new header: [`SpduPayload::Encoded`] copies them as received (they were checked
//! with the same dialect), so they are neither parsed into a list nor re-encoded one by one.
//! [`SessionFrameRepr`] puts such an SPDU behind the Ethernet/IP/UDP headers of the frame it
//! came in, located once by the classification ([`crate::view::UdpView::located`]), and writes
//! the SPDU straight into its place in the output frame: no SPDU buffer of its own.
//!
//! What is protected and how (IEC 62351-6 on the IEC 61850-90-5 session, per profile) is in
//! [`crate::spdu`]'s documentation and `docs/framing.md`.

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::error::SecError;
use crate::keystore::KeyEntry;
use crate::nonce::NonceFields;
use crate::profile::Profile;
use crate::spdu::{message_iv, refuse_signature_key, IvSource, SendParams};
use gander_wire::spdu::{
    Iv, SecurityInfo, SessionHeader, SpduId, SpduPayload, SpduRepr, SIGNATURE_TAG,
};
use gander_wire::udp_rewrite::LocatedUdp;

/// A session PDU secured with one key as one profile writes it: header (key id, IV or
/// algorithm codes, key times), payload, then the MAC element and/or the AES-GCM (or Ascon)
/// tag element. The IV is drawn when the value is made, so [`SecuredSpduRepr::buffer_len`] is
/// known before anything is written.
#[derive(Clone)]
pub struct SecuredSpduRepr<'a> {
    profile: Profile,
    key: &'a KeyEntry,
    spdu: SpduRepr<'a>,
    mac: MacAlgorithm,
    enc: EncAlgorithm,
    /// Octets of the MAC element (`85 len MAC`; SecLib's `85 00` when unsigned), 0 for none.
    mac_elem: usize,
}

impl core::fmt::Debug for SecuredSpduRepr<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SecuredSpduRepr")
            .field("profile", &self.profile)
            .field("key_id", &self.key.id)
            .field("spdu", &self.spdu)
            .finish()
    }
}

impl<'a> SecuredSpduRepr<'a> {
    /// `payload` secured with `key` as `profile` writes it, with the header fields of
    /// `params`; draws the IV (or Ascon nonce) from `ivs` when the algorithms need one.
    ///
    /// # Errors
    /// The key's validity at `params.now`, a signature key (not for SPDUs), algorithms the
    /// profile refuses, encryption under SecLib, an IV of the wrong size, a length that does
    /// not fit its field: in that order, before anything is written.
    pub fn new(
        profile: Profile,
        key: &'a KeyEntry,
        params: SendParams,
        payload: SpduPayload<'a>,
        ivs: &mut dyn IvSource,
    ) -> Result<Self, SecError> {
        key.check_valid_at(params.now)?;
        refuse_signature_key(key)?;
        let (mac, enc) = (key.mac, key.enc);
        profile.check_algorithms(mac, enc)?;
        if enc != EncAlgorithm::None && !profile.supports_encryption() {
            return Err(SecError::Unsupported(
                "the seclib profile cannot encrypt verifiably (SecLib discards the GCM tag)",
            ));
        }
        let fields = NonceFields {
            a: key.id,
            b: params.spdu_number,
        };
        let iv: Iv = message_iv(profile, mac, enc, fields, ivs)?;
        let security = if profile.session_version() == 1 {
            SecurityInfo::V1 {
                enc_code: Profile::enc_code(enc),
                mac_code: profile.mac_code(mac, key.key_len())?,
                key_id: key.id,
            }
        } else {
            SecurityInfo::V2 { key_id: key.id, iv }
        };
        if enc != EncAlgorithm::None && iv.len() != enc.iv_len() {
            return Err(SecError::BadIv(iv.len()));
        }
        let header = SessionHeader {
            spdu_id: params.spdu_id,
            spdu_number: params.spdu_number,
            time_of_current_key: key.time_of_current_key(),
            time_to_next_key: key.time_to_next_key(params.now),
            security,
        };
        // SecLib always writes a signature element, `85 00` when unsigned.
        let mac_elem = if mac != MacAlgorithm::None || profile == Profile::Seclib {
            2 + mac.tag_len()
        } else {
            0
        };
        let enc_elem = if enc != EncAlgorithm::None {
            2 + enc.tag_len()
        } else {
            0
        };
        let spdu = SpduRepr::new(header, payload, mac_elem + enc_elem, &profile.dialect())?;
        Ok(SecuredSpduRepr {
            profile,
            key,
            spdu,
            mac,
            enc,
            mac_elem,
        })
    }

    /// Octets of the secured SPDU.
    pub fn buffer_len(&self) -> usize {
        self.spdu.buffer_len()
    }

    /// The header written (key id, IV, SPDU number).
    pub fn header(&self) -> &SessionHeader {
        self.spdu.header()
    }

    /// Writes the secured SPDU at the start of `buf`: header and payload, then the MAC over
    /// the profile's covered bytes (LI, or SI under SecLib, through the end of the payload)
    /// straight into its element, then, for an AEAD key, the payload and that element
    /// encrypted in place with the header up to PayloadLength as associated data and the tag
    /// element appended (libiec61850's order). Returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// [`SecError::Malformed`] (`Truncated`) if `buf` is too short (nothing written); a
    /// provider's failure (the output must then not be sent).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, SecError> {
        let total = self.spdu.buffer_len();
        let layout = self.spdu.emit(buf)?;
        let buf = &mut buf[..total];
        let iv = self.spdu.header().security.iv();
        let mut at = layout.payload_end;
        if self.mac_elem > 0 {
            let (covered, rest) = buf.split_at_mut(at);
            rest[0] = SIGNATURE_TAG;
            rest[1] = self.profile.written_mac_len(self.mac);
            let tag = &mut rest[2..self.mac_elem];
            match self.key.mac_key() {
                Some(k) => {
                    let zero = [0u8; 12];
                    let mac_iv: &[u8] = if self.profile.gmac_zero_iv() {
                        &zero
                    } else {
                        iv
                    };
                    k.sign(mac_iv, &covered[self.profile.mac_start()..], tag)?;
                }
                None => tag.fill(0),
            }
            at += self.mac_elem;
        }
        if let Some(k) = self.key.aead_key() {
            let (aad, body) = buf[..at].split_at_mut(layout.payload_start);
            let tag = k.seal_in_place(iv, aad, body)?;
            let el = &mut buf[at..];
            el[0] = SIGNATURE_TAG;
            el[1] = tag.len() as u8;
            el[2..2 + tag.len()].copy_from_slice(&tag);
            at += 2 + tag.len();
        }
        debug_assert_eq!(at, total, "{:?}", self.enc);
        Ok(total)
    }
}

/// A session PDU without security, as `profile` writes "none" (KeyID 0, no IV or algorithm
/// codes 0, SecLib's empty signature element `85 00`): what a legacy publisher sends, and what
/// a gateway writes when it strips security or translates to an unkeyed R-GOOSE output.
#[derive(Clone, Debug)]
pub struct PlainSpduRepr<'a> {
    spdu: SpduRepr<'a>,
    trailer: &'static [u8],
}

impl<'a> PlainSpduRepr<'a> {
    /// `payload` in an unsecured SPDU of `spdu_id` numbered `spdu_number`.
    ///
    /// # Errors
    /// [`SecError::Malformed`] (`TooLarge`) when a length does not fit its field.
    pub fn new(
        profile: Profile,
        spdu_id: SpduId,
        spdu_number: u32,
        payload: SpduPayload<'a>,
    ) -> Result<Self, SecError> {
        let header = crate::spdu::unsecured_header(profile, spdu_id, spdu_number);
        let trailer = crate::spdu::unsigned_trailer(profile);
        let spdu = SpduRepr::new(header, payload, trailer.len(), &profile.dialect())?;
        Ok(PlainSpduRepr { spdu, trailer })
    }

    /// Octets of the SPDU.
    pub fn buffer_len(&self) -> usize {
        self.spdu.buffer_len()
    }

    /// Writes the SPDU at the start of `buf`; returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// [`SecError::Malformed`] (`Truncated`) if `buf` is too short (nothing written).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, SecError> {
        let layout = self.spdu.emit(buf)?;
        let end = layout.payload_end + self.trailer.len();
        buf[layout.payload_end..end].copy_from_slice(self.trailer);
        Ok(end)
    }
}

/// An SPDU to write: secured or not.
#[derive(Clone, Debug)]
pub enum SpduOut<'a> {
    /// Secured with a key.
    Secured(SecuredSpduRepr<'a>),
    /// Without security.
    Plain(PlainSpduRepr<'a>),
}

impl SpduOut<'_> {
    /// Octets of the SPDU.
    pub fn buffer_len(&self) -> usize {
        match self {
            SpduOut::Secured(s) => s.buffer_len(),
            SpduOut::Plain(p) => p.buffer_len(),
        }
    }

    /// Writes the SPDU at the start of `buf`; returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// As [`SecuredSpduRepr::emit`] / [`PlainSpduRepr::emit`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, SecError> {
        match self {
            SpduOut::Secured(s) => s.emit(buf),
            SpduOut::Plain(p) => p.emit(buf),
        }
    }
}

/// An SPDU behind the headers of the frame (or packet, or nothing for a socket's payload) a
/// received SPDU came in: the link and IP headers as found, lengths and checksums recomputed
/// (RFC 768, RFC 791, RFC 8200 §8.1), the SPDU written in its place.
#[derive(Clone, Debug)]
pub struct SessionFrameRepr<'a> {
    /// The headers, borrowed from the received frame.
    pub udp: LocatedUdp<'a>,
    /// The SPDU.
    pub spdu: SpduOut<'a>,
}

impl SessionFrameRepr<'_> {
    /// Octets of the output.
    pub fn buffer_len(&self) -> usize {
        self.udp.buffer_len(self.spdu.buffer_len())
    }

    /// Writes the output at the start of `buf`; returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// [`SecError::Malformed`] (`Truncated`, `TooLarge`) when `buf` is too short or the
    /// datagram too large for its IP length field (nothing written then); as
    /// [`SpduOut::emit`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, SecError> {
        let n = self.spdu.buffer_len();
        self.udp
            .emit_with(buf, n, |p: &mut [u8]| self.spdu.emit(p).map(drop))
    }

    /// Writes the output into `out`, resized to exactly [`Self::buffer_len`] (a caller that
    /// reuses `out` allocates nothing once it is large enough). On error `out` must not be
    /// sent.
    ///
    /// # Errors
    /// As [`Self::emit`].
    pub fn emit_into(&self, out: &mut Vec<u8>) -> Result<(), SecError> {
        out.resize(self.buffer_len(), 0);
        self.emit(out).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::default_provider;
    use crate::spdu::{verify, Checked, RandomIv};
    use crate::KeyStore;
    use gander_wire::spdu::{parse_elements, PayloadElement, SessionPdu};
    use proptest::prelude::*;

    const APDU: &[u8] = &[0x61, 0x08, 0x80, 0x01, 0x41, 0x85, 0x01, 0x05, 0x86, 0x00];

    fn store(mac: MacAlgorithm, enc: EncAlgorithm) -> KeyStore {
        let mut s = KeyStore::new();
        let len = if enc == EncAlgorithm::Aes256Gcm {
            32
        } else {
            16
        };
        let key: Vec<u8> = (0..len as u8).collect();
        s.insert(KeyEntry::new(9, mac, enc, &key, default_provider()).unwrap())
            .unwrap();
        s
    }

    fn params(n: u32) -> SendParams {
        SendParams {
            spdu_id: SpduId::Goose,
            spdu_number: n,
            now: 0,
        }
    }

    fn arb_case() -> impl Strategy<Value = (Profile, MacAlgorithm, EncAlgorithm)> {
        prop_oneof![
            Just((
                Profile::Standard,
                MacAlgorithm::HmacSha256_128,
                EncAlgorithm::None
            )),
            Just((
                Profile::Standard,
                MacAlgorithm::AesGmac128,
                EncAlgorithm::None
            )),
            Just((
                Profile::Standard,
                MacAlgorithm::None,
                EncAlgorithm::Aes128Gcm
            )),
            Just((
                Profile::Standard,
                MacAlgorithm::HmacSha256_80,
                EncAlgorithm::Aes256Gcm
            )),
            Just((
                Profile::Libiec61850,
                MacAlgorithm::HmacSha256_256,
                EncAlgorithm::None
            )),
            Just((
                Profile::Libiec61850,
                MacAlgorithm::HmacSha256_128,
                EncAlgorithm::Aes128Gcm
            )),
            Just((
                Profile::Seclib,
                MacAlgorithm::HmacSha256_80,
                EncAlgorithm::None
            )),
        ]
    }

    proptest! {
        /// What `emit` writes verifies, carries the elements it was given, is `buffer_len`
        /// long, and the payload copied as encoded gives the same SPDU as the elements
        /// (same IV); a shorter buffer is an error.
        #[test]
        fn secured_emit_verifies_and_short_buffers_fail(
            (profile, mac, enc) in arb_case(),
            appids in proptest::collection::vec(any::<u16>(), 1..4),
            n: u32, cut in 1usize..60,
        ) {
            let s = store(mac, enc);
            let key = s.require(9).unwrap();
            let els: Vec<_> = appids.iter().map(|&appid| PayloadElement {
                payload_type: 0x81, simulation: 0, appid, apdu: APDU,
            }).collect();
            let repr = SecuredSpduRepr::new(profile, key, params(n), SpduPayload::Elements(&els), &mut RandomIv).unwrap();
            let mut buf = vec![0x77; repr.buffer_len() + 4];
            prop_assert_eq!(repr.emit(&mut buf).unwrap(), repr.buffer_len());
            let out = &buf[..repr.buffer_len()];
            let Ok(Checked::Verified(v)) = verify(profile, &s, out, 0) else {
                return Err(TestCaseError::fail("did not verify"));
            };
            prop_assert_eq!(v.elements().unwrap(), els.clone());
            prop_assert_eq!(v.header(), repr.header());
            // The same SPDU from the payload in wire form (the IV is the repr's own).
            let pdu = SessionPdu::parse(v.cleartext(), &profile.dialect()).unwrap();
            prop_assert_eq!(parse_elements(pdu.payload(), &profile.dialect()).unwrap(), els.clone());
            let short = repr.buffer_len().saturating_sub(cut);
            let mut small = vec![0x3c; short];
            prop_assert!(repr.emit(&mut small).is_err());
            prop_assert!(small.iter().all(|&b| b == 0x3c));
        }

        /// An unsecured SPDU parses back to its header and elements; copying the encoded
        /// payload writes the same octets; a shorter buffer is an error.
        #[test]
        fn plain_round_trip(profile in prop_oneof![Just(Profile::Standard), Just(Profile::Libiec61850), Just(Profile::Seclib)],
                            appid: u16, n: u32, cut in 1usize..40) {
            let els = [PayloadElement { payload_type: 0x81, simulation: 1, appid, apdu: APDU }];
            let repr = PlainSpduRepr::new(profile, SpduId::Goose, n, SpduPayload::Elements(&els)).unwrap();
            let mut out = vec![0; repr.buffer_len()];
            prop_assert_eq!(repr.emit(&mut out).unwrap(), out.len());
            let pdu = SessionPdu::parse(&out, &profile.dialect()).unwrap();
            prop_assert_eq!(&pdu.header, &crate::spdu::unsecured_header(profile, SpduId::Goose, n));
            prop_assert_eq!(parse_elements(pdu.payload(), &profile.dialect()).unwrap(), els.to_vec());
            let copied = PlainSpduRepr::new(profile, SpduId::Goose, n, SpduPayload::Encoded(pdu.payload())).unwrap();
            let mut again = vec![0; copied.buffer_len()];
            copied.emit(&mut again).unwrap();
            prop_assert_eq!(&again, &out);
            let mut small = vec![0; out.len().saturating_sub(cut)];
            prop_assert!(repr.emit(&mut small).is_err());
        }
    }

    #[test]
    fn refusals_come_before_anything_is_drawn_or_written() {
        struct NoIv;
        impl IvSource for NoIv {
            fn next_iv(&mut self) -> [u8; 12] {
                panic!("no IV may be drawn for a refused key")
            }
        }
        let s = store(MacAlgorithm::None, EncAlgorithm::Aes128Gcm);
        let els = [PayloadElement {
            payload_type: 0x81,
            simulation: 0,
            appid: 1,
            apdu: APDU,
        }];
        let key = s.require(9).unwrap();
        assert!(SecuredSpduRepr::new(
            Profile::Seclib,
            key,
            params(1),
            SpduPayload::Elements(&els),
            &mut NoIv
        )
        .is_err());
    }
}
