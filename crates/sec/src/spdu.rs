//! Protect and verify IEC 61850-90-5 session PDUs (R-GOOSE, R-SV) with the IEC 62351-6
//! algorithms.
//!
//! What is protected, by profile (details and sources in `docs/framing.md`):
//!
//! | | standard / libiec61850 (v2) | seclib (v1) |
//! |---|---|---|
//! | MAC input | LI .. end of payload (padding included) | SI .. end of payload |
//! | GMAC IV | 12 bytes carried in the header's IV field | 12 zero bytes, not carried |
//! | AES-GCM | IV in the header, AAD = LI .. PayloadLength, payload (and inner MAC) encrypted, tag as `85 10 tag` | not verifiable (SecLib discards the tag): refused |
//! | MAC + GCM | MAC over the cleartext, then encrypted with the payload (libiec61850's order) | - |
//!
//! Verification authenticates before anything is parsed from the payload and before the replay
//! window moves; the result is a [`VerifiedSession`], which only this module can make.

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::error::SecError;
use crate::keystore::{KeyEntry, KeyStore};
use crate::nonce::{NonceError, NonceFields};
use crate::profile::Profile;
use crate::replay::{Freshness, ReplayState};
use gander_wire::spdu::{
    self, Dialect, Iv, PayloadElement, SecurityInfo, SessionHeader, SessionPdu, SpduId,
    SpduPayload, SIGNATURE_TAG,
};
use std::borrow::Cow;
use std::ops::Range;

/// A source of 96-bit IVs for AES-GCM and GMAC, and of 128-bit nonces for Ascon-AEAD128.
pub trait IvSource {
    /// The next IV; never repeats for one key (SP 800-38D §8).
    fn next_iv(&mut self) -> [u8; 12];

    /// The next Ascon-AEAD128 nonce for a message with `fields`; never repeats for one key
    /// (SP 800-232 §4). By default from the process's [`crate::nonce::NonceSequence`], whose
    /// fixed-width layout and uniqueness argument are in [`crate::nonce`].
    fn next_nonce128(&mut self, fields: NonceFields) -> Result<[u8; 16], NonceError> {
        crate::nonce::process_sequence().next(fields)
    }
}

/// The IV a layer-2 GOOSE MAC carries: 12 bytes from `next_iv` for GMAC, the 16-byte Ascon
/// nonce from (`st_num`, `sq_num`) for the Ascon MAC, none for HMACs. Returned in a fixed
/// buffer with its length (0 for none), so that protecting a frame allocates nothing for it.
pub(crate) fn mac_iv(
    mac: MacAlgorithm,
    st_num: u32,
    sq_num: u32,
    ivs: &mut dyn IvSource,
) -> Result<([u8; 16], usize), SecError> {
    let mut buf = [0u8; 16];
    Ok(match mac.iv_len() {
        0 => (buf, 0),
        16 => (
            ivs.next_nonce128(NonceFields {
                a: st_num,
                b: sq_num,
            })?,
            16,
        ),
        _ => {
            let iv = ivs.next_iv();
            buf[..iv.len()].copy_from_slice(&iv);
            (buf, iv.len())
        }
    })
}

/// The IV or nonce a message protected with `mac`/`enc` carries: the AEAD's when there is
/// one, else the MAC's (GMAC 12 bytes from `next_iv`, Ascon 16 bytes from `next_nonce128`
/// with `fields`), empty for HMACs and for SecLib's zero-IV GMAC.
pub(crate) fn message_iv(
    profile: Profile,
    mac: MacAlgorithm,
    enc: EncAlgorithm,
    fields: NonceFields,
    ivs: &mut dyn IvSource,
) -> Result<Iv, SecError> {
    let len = if enc != EncAlgorithm::None {
        enc.iv_len()
    } else if mac.needs_iv() && !profile.gmac_zero_iv() {
        mac.iv_len()
    } else {
        0
    };
    Ok(match len {
        0 => Iv::EMPTY,
        16 => Iv::new(&ivs.next_nonce128(fields)?)?,
        _ => Iv::new(&ivs.next_iv())?,
    })
}

/// IVs from the thread-local CSPRNG: the RBG-based construction of SP 800-38D §8.2.2, fine for
/// up to 2^32 messages per key.
#[derive(Debug, Default)]
pub struct RandomIv;

impl IvSource for RandomIv {
    fn next_iv(&mut self) -> [u8; 12] {
        use rand::RngCore;
        let mut iv = [0u8; 12];
        rand::thread_rng().fill_bytes(&mut iv);
        iv
    }
}

/// The header fields a sender chooses per message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendParams {
    /// SI.
    pub spdu_id: SpduId,
    /// SPDU number (the sender's counter).
    pub spdu_number: u32,
    /// Current time, Unix seconds (key validity and TimeToNextKey).
    pub now: u64,
}

/// The header of an unsecured SPDU as `profile` writes it: KeyID 0, no IV (version 2) or
/// algorithm codes 0 (version 1), no key rotation announced. What a legacy publisher sends and
/// what a gateway writes when it strips security.
pub fn unsecured_header(profile: Profile, spdu_id: SpduId, spdu_number: u32) -> SessionHeader {
    SessionHeader {
        spdu_id,
        spdu_number,
        time_of_current_key: 0,
        time_to_next_key: 0,
        security: if profile.session_version() == 1 {
            SecurityInfo::V1 {
                enc_code: 0,
                mac_code: 0,
                key_id: 0,
            }
        } else {
            SecurityInfo::V2 {
                key_id: 0,
                iv: Iv::EMPTY,
            }
        },
    }
}

/// What follows the payload of an unsigned SPDU: SecLib always ends an SPDU with a signature
/// element, `85 00` when unsigned; the other profiles write nothing.
pub fn unsigned_trailer(profile: Profile) -> &'static [u8] {
    if profile == Profile::Seclib {
        &[SIGNATURE_TAG, 0x00]
    } else {
        &[]
    }
}

/// Signature keys protect layer-2 GOOSE only. On an SPDU a signature key has neither MAC nor
/// AEAD, so without this check it would write, and accept, SPDUs with no authenticator at all.
/// The reason given is the size limit where the signature cannot fit the 90-5 signature
/// element or an unfragmented datagram ([`crate::fit`]), else that signing SPDUs is not
/// implemented.
pub(crate) fn refuse_signature_key(key: &KeyEntry) -> Result<(), SecError> {
    let Some(s) = &key.signature else {
        return Ok(());
    };
    crate::fit::check_signature(s.algorithm, s.wire_len(), crate::fit::Transport::RGooseIpv4)?;
    Err(SecError::Unsupported(
        "signatures on IEC 61850-90-5 SPDUs are not implemented (layer-2 GOOSE only)",
    ))
}

/// Appends a protected SPDU carrying `elements` to `out`, secured with `key` as `profile`
/// writes it: a `Vec` wrapper of [`crate::spdu_emit::SecuredSpduRepr`], which writes into any
/// caller's buffer (`out` grows once, by exactly the SPDU's size). On error `out` is as it was.
pub fn protect(
    profile: Profile,
    key: &KeyEntry,
    params: SendParams,
    elements: &[PayloadElement<'_>],
    ivs: &mut dyn IvSource,
    out: &mut Vec<u8>,
) -> Result<(), SecError> {
    let repr = crate::spdu_emit::SecuredSpduRepr::new(
        profile,
        key,
        params,
        SpduPayload::Elements(elements),
        ivs,
    )?;
    let base = out.len();
    out.resize(base + repr.buffer_len(), 0);
    repr.emit(&mut out[base..]).map(drop).inspect_err(|_| {
        out.truncate(base);
    })
}

/// What protected a verified SPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protection {
    /// Key id used.
    pub key_id: u32,
    /// MAC algorithm.
    pub mac: MacAlgorithm,
    /// Encryption algorithm.
    pub enc: EncAlgorithm,
}

/// An SPDU whose MAC and/or tag verified under a known, valid key; its payload is cleartext.
/// Only [`verify`] makes these.
#[derive(Clone, Debug)]
pub struct VerifiedSession<'a> {
    header: SessionHeader,
    protection: Protection,
    data: Cow<'a, [u8]>,
    payload: Range<usize>,
    dialect: Dialect,
}

impl<'a> VerifiedSession<'a> {
    /// The session header.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }
    /// How it was protected.
    pub fn protection(&self) -> Protection {
        self.protection
    }
    /// The cleartext payload elements.
    pub fn elements(&self) -> Result<Vec<PayloadElement<'_>>, SecError> {
        Ok(spdu::parse_elements(
            &self.data[self.payload.clone()],
            &self.dialect,
        )?)
    }
    /// The cleartext payload elements one by one, without allocating. They were checked
    /// whole when the SPDU verified, so on a verified session the iterator yields no error.
    pub fn each_element(&self) -> spdu::Elements<'_> {
        spdu::elements(&self.data[self.payload.clone()], &self.dialect)
    }
    /// The first cleartext payload element (APPID for replay windows and rules), without
    /// allocating.
    pub fn first_element(&self) -> Result<Option<PayloadElement<'_>>, SecError> {
        Ok(
            spdu::elements(&self.data[self.payload.clone()], &self.dialect)
                .next()
                .transpose()?,
        )
    }
    /// The cleartext payload elements in wire form (this SPDU's dialect), checked whole: what
    /// a stripped or re-secured SPDU carries on unchanged
    /// ([`gander_wire::spdu::SpduPayload::Encoded`]).
    pub fn payload(&self) -> &[u8] {
        &self.data[self.payload.clone()]
    }
    /// The cleartext SPDU (inner MAC, if any, still in place; outer GCM tag still appended).
    pub fn cleartext(&self) -> &[u8] {
        &self.data
    }

    /// The replay-check input of this SPDU: key id, SI, the first element's APPID and, for
    /// R-GOOSE, its APDU's `t` (a publisher restart's witness), all authenticated.
    pub fn freshness(&self) -> Result<Freshness<'static>, SecError> {
        let first = self.first_element()?;
        let appid = first.as_ref().map_or(0, |e| e.appid);
        // `verify` checks the elements' framing, not their APDUs: an APDU that does not parse
        // gives no `t`, and the stream keeps its window alone (no restart can be recognised).
        let t = first
            .and_then(|e| crate::view::ApduView::of_element(self.header.spdu_id, &e).ok())
            .and_then(|a| match a.counters() {
                crate::view::ApduCounters::Goose { t, .. } => Some(t),
                crate::view::ApduCounters::Sv { .. } => None,
            });
        Ok(Freshness::Spdu {
            key_id: self.protection.key_id,
            spdu_id: self.header.spdu_id.to_u8(),
            appid,
            number: self.header.spdu_number,
            t,
        })
    }
}

/// The result of checking one SPDU.
#[derive(Clone, Debug)]
pub enum Checked<'a> {
    /// Secured and verified.
    Verified(VerifiedSession<'a>),
    /// Carries no security at all (KeyID 0, no IV, no signature): nothing to verify. Callers
    /// that require security must treat this as a failure.
    Unsecured(SessionPdu<'a>),
}

/// Verifies one SPDU statelessly (no replay check): parse, find the key, check its validity,
/// check the GCM tag and decrypt, check the MAC, parse the payload.
pub fn verify<'a>(
    profile: Profile,
    store: &KeyStore,
    bytes: &'a [u8],
    now: u64,
) -> Result<Checked<'a>, SecError> {
    let pdu = SessionPdu::parse(bytes, &profile.dialect())?;
    verify_pdu(profile, store, pdu, now)
}

/// [`verify`] of an SPDU whose header is already parsed (with `profile`'s dialect), so a
/// caller that classified the frame does not parse it again.
pub fn verify_pdu<'a>(
    profile: Profile,
    store: &KeyStore,
    pdu: SessionPdu<'a>,
    now: u64,
) -> Result<Checked<'a>, SecError> {
    let dialect = profile.dialect();
    let bytes = pdu.bytes();
    let (key, mac, enc) = match &pdu.header.security {
        // KeyID 0 is unsecured whatever padding follows (`view::session_secured`).
        SecurityInfo::V2 { key_id: 0, iv }
            if iv.is_empty() && crate::view::no_authenticator(pdu.trailer()) =>
        {
            spdu::validate_elements(pdu.payload(), &dialect)?;
            return Ok(Checked::Unsecured(pdu));
        }
        SecurityInfo::V1 {
            enc_code: 0,
            mac_code: 0,
            ..
        } if crate::view::no_authenticator(pdu.trailer()) => {
            spdu::validate_elements(pdu.payload(), &dialect)?;
            return Ok(Checked::Unsecured(pdu));
        }
        SecurityInfo::V2 { key_id, .. } => {
            let k = store.require(*key_id)?;
            (k, k.mac, k.enc)
        }
        SecurityInfo::V1 {
            enc_code,
            mac_code,
            key_id,
        } => {
            let k = store.require(*key_id)?;
            let wire_enc = profile.enc_from_code(*enc_code)?;
            let (wire_mac, implied_len) = profile.mac_from_code(*mac_code)?;
            if wire_enc != k.enc
                || wire_mac != k.mac
                || implied_len.is_some_and(|l| l != k.key_len())
            {
                return Err(SecError::AlgorithmMismatch {
                    id: *key_id,
                    enc_code: *enc_code,
                    mac_code: *mac_code,
                });
            }
            (k, k.mac, k.enc)
        }
    };
    key.check_valid_at(now)?;
    refuse_signature_key(key)?;
    profile.check_algorithms(mac, enc)?;
    let iv = pdu.header.security.iv();
    let mut data: Cow<'a, [u8]> = Cow::Borrowed(bytes);

    // Outer AES-GCM: the last 18 bytes are `85 10 tag`.
    let mut inner_end = bytes.len();
    if enc != EncAlgorithm::None {
        if !profile.supports_encryption() {
            return Err(SecError::Unsupported(
                "seclib-encrypted payloads carry no tag and cannot be verified",
            ));
        }
        let aead = key
            .aead_key()
            .ok_or(SecError::Unsupported("key has no AEAD"))?;
        if iv.len() != enc.iv_len() {
            return Err(SecError::BadIv(iv.len()));
        }
        let tag_at = bytes
            .len()
            .checked_sub(18)
            .filter(|&t| t >= pdu.payload_end)
            .ok_or(SecError::MissingAuthenticator("AES-GCM tag"))?;
        if bytes[tag_at] != SIGNATURE_TAG || bytes[tag_at + 1] != 16 {
            return Err(SecError::MissingAuthenticator("AES-GCM tag"));
        }
        let mut buf = bytes.to_vec();
        let (aad, rest) = buf.split_at_mut(pdu.payload_start);
        let (body, tag) = rest.split_at_mut(tag_at - pdu.payload_start);
        aead.open_in_place(iv, aad, body, &tag[2..])
            .map_err(|_| SecError::BadTag)?;
        data = Cow::Owned(buf);
        inner_end = tag_at;
    }

    // MAC: signature element in the (now cleartext) trailer.
    let trailer = &data[pdu.payload_end..inner_end];
    if mac != MacAlgorithm::None {
        let mk = key
            .mac_key()
            .ok_or(SecError::Unsupported("key has no MAC"))?;
        let sig = spdu::parse_signature(trailer, mac.tag_len(), |stated, _| {
            profile.tolerates_mac_len(mac, stated)
        })
        .map_err(|e| match e {
            gander_wire::Error::Truncated { .. } => SecError::MissingAuthenticator("MAC"),
            other => SecError::Malformed(other),
        })?;
        let zero = [0u8; 12];
        let mac_iv: &[u8] = if profile.gmac_zero_iv() {
            &zero
        } else if mac.needs_iv() {
            if iv.len() != mac.iv_len() {
                return Err(SecError::BadIv(iv.len()));
            }
            iv
        } else {
            &[]
        };
        // The MAC covers everything ahead of the signature element: header, payload and any
        // padding, so no byte of the SPDU outside the MAC itself is unauthenticated.
        let covered_end = pdu.payload_end + sig.offset;
        mk.verify(mac_iv, &data[profile.mac_start()..covered_end], sig.value)
            .map_err(|_| SecError::BadMac)?;
    } else {
        // Nothing may follow the payload but padding (and SecLib's empty `85 00`).
        spdu::parse_trailer(trailer, &[], |_, _| false).or_else(|e| {
            if profile == Profile::Seclib && trailer == [SIGNATURE_TAG, 0] {
                Ok((None, vec![]))
            } else {
                Err(e)
            }
        })?;
    }

    spdu::validate_elements(&data[pdu.payload_start..pdu.payload_end], &dialect)?;
    Ok(Checked::Verified(VerifiedSession {
        protection: Protection {
            key_id: key.id,
            mac,
            enc,
        },
        payload: pdu.payload_start..pdu.payload_end,
        header: pdu.header,
        data,
        dialect,
    }))
}

/// A stateful receiver: [`verify`] plus the replay window per stream (key id, SI and APPID:
/// authenticated fields only, never the sender's address; see [`crate::replay`]).
#[derive(Debug)]
pub struct SessionReceiver {
    /// Profile of the peers.
    pub profile: Profile,
    /// Whether unsecured SPDUs are refused.
    pub require_security: bool,
    replay: ReplayState,
}

impl SessionReceiver {
    /// A receiver with empty replay state.
    pub fn new(profile: Profile, require_security: bool) -> Self {
        SessionReceiver {
            profile,
            require_security,
            replay: ReplayState::new(),
        }
    }

    /// Verifies `bytes`, then checks and advances the replay window of its stream.
    pub fn receive<'a>(
        &mut self,
        store: &KeyStore,
        bytes: &'a [u8],
        now: u64,
    ) -> Result<Checked<'a>, SecError> {
        let checked = verify(self.profile, store, bytes, now)?;
        match &checked {
            Checked::Unsecured(_) if self.require_security => return Err(SecError::Unsecured),
            Checked::Unsecured(_) => {}
            Checked::Verified(v) => {
                self.replay.check_and_accept(&v.freshness()?)?;
            }
        }
        Ok(checked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::default_provider;

    struct CountingIv(u8);
    impl IvSource for CountingIv {
        fn next_iv(&mut self) -> [u8; 12] {
            self.0 += 1;
            [self.0; 12]
        }
    }

    const APDU: &[u8] = &[0x61, 0x08, 0x80, 0x01, 0x41, 0x85, 0x01, 0x05, 0x86, 0x00];

    fn element() -> PayloadElement<'static> {
        PayloadElement {
            payload_type: 0x81,
            simulation: 0,
            appid: 0x1234,
            apdu: APDU,
        }
    }

    /// An SPDU of `element()` under `h`, standard lengths, trailer of `trailer_len` zeros.
    fn emit_plain(h: SessionHeader, trailer_len: usize) -> Vec<u8> {
        let els = [element()];
        spdu::SpduRepr::new(
            h,
            SpduPayload::Elements(&els),
            trailer_len,
            &Dialect::STANDARD,
        )
        .unwrap()
        .to_vec_with_trailer(&vec![0; trailer_len])
        .unwrap()
    }

    fn store_with(mac: MacAlgorithm, enc: EncAlgorithm, key: &[u8]) -> KeyStore {
        let mut s = KeyStore::new();
        s.insert(KeyEntry::new(9, mac, enc, key, default_provider()).unwrap())
            .unwrap();
        s
    }

    fn every_combination() -> Vec<(Profile, MacAlgorithm, EncAlgorithm, usize)> {
        let mut v = vec![];
        for p in Profile::ALL {
            for mac in MacAlgorithm::ALL {
                for enc in EncAlgorithm::ALL {
                    if mac == MacAlgorithm::None && enc == EncAlgorithm::None {
                        continue;
                    }
                    if mac.needs_iv() && enc != EncAlgorithm::None {
                        continue;
                    }
                    if p == Profile::Seclib && enc != EncAlgorithm::None {
                        continue;
                    }
                    if p.check_algorithms(mac, enc).is_err() {
                        continue;
                    }
                    if p != Profile::Seclib
                        && matches!(
                            mac,
                            MacAlgorithm::HmacBlake2b80 | MacAlgorithm::HmacBlake2s80
                        )
                        && p.session_version() == 1
                    {
                        continue;
                    }
                    let key_len = if enc == EncAlgorithm::Aes256Gcm {
                        32
                    } else {
                        16
                    };
                    v.push((p, mac, enc, key_len));
                    if mac.needs_iv() && !mac.is_experimental() {
                        v.push((p, mac, enc, 32));
                    }
                }
            }
        }
        v
    }

    #[test]
    fn protect_verify_every_combination_and_every_bit_flip() {
        for (p, mac, enc, key_len) in every_combination() {
            let key: Vec<u8> = (0..key_len as u8).collect();
            let store = store_with(mac, enc, &key);
            let mut out = Vec::new();
            let params = SendParams {
                spdu_id: SpduId::Goose,
                spdu_number: 77,
                now: 0,
            };
            protect(
                p,
                store.require(9).unwrap(),
                params,
                &[element()],
                &mut CountingIv(0),
                &mut out,
            )
            .unwrap_or_else(|e| panic!("{p} {mac} {enc}: {e}"));
            let Checked::Verified(v) =
                verify(p, &store, &out, 0).unwrap_or_else(|e| panic!("{p} {mac} {enc}: {e}"))
            else {
                panic!("not verified")
            };
            assert_eq!(v.elements().unwrap(), vec![element()], "{p} {mac} {enc}");
            assert_eq!(
                v.protection(),
                Protection {
                    key_id: 9,
                    mac,
                    enc
                }
            );
            if enc != EncAlgorithm::None {
                assert!(
                    !out.windows(APDU.len()).any(|w| w == APDU),
                    "{p} {enc}: payload visible"
                );
            }
            for i in 0..out.len() * 8 {
                let mut bad = out.clone();
                bad[i / 8] ^= 1 << (i % 8);
                // Under SecLib LI and TI are outside the MAC (pitfall P5): flipping them must
                // still fail, via the CLTP checks.
                assert!(
                    !matches!(verify(p, &store, &bad, 0), Ok(Checked::Verified(_))),
                    "{p} {mac} {enc}: flip of bit {i} verified"
                );
            }
        }
    }

    #[test]
    fn ascon_runs_only_under_the_experimental_profile() {
        for (mac, enc) in [
            (MacAlgorithm::AsconAead128Mac, EncAlgorithm::None),
            (MacAlgorithm::None, EncAlgorithm::AsconAead128),
            (MacAlgorithm::HmacSha256_128, EncAlgorithm::AsconAead128),
        ] {
            let store = store_with(mac, enc, &[5; 16]);
            let params = SendParams {
                spdu_id: SpduId::Goose,
                spdu_number: 1,
                now: 0,
            };
            let key = store.require(9).unwrap();
            let mut out = Vec::new();
            protect(
                Profile::Experimental,
                key,
                params,
                &[element()],
                &mut RandomIv,
                &mut out,
            )
            .unwrap();
            // The 16-byte nonce rides in the header's IV field.
            let pdu = SessionPdu::parse(&out, &Dialect::STANDARD).unwrap();
            assert_eq!(pdu.header.security.iv().len(), 16);
            assert!(matches!(
                verify(Profile::Experimental, &store, &out, 0),
                Ok(Checked::Verified(_))
            ));
            for p in [Profile::Standard, Profile::Libiec61850, Profile::Seclib] {
                assert!(matches!(
                    protect(p, key, params, &[element()], &mut RandomIv, &mut Vec::new()),
                    Err(SecError::Unsupported(_))
                ));
            }
            assert!(matches!(
                verify(Profile::Standard, &store, &out, 0),
                Err(SecError::Unsupported(_))
            ));
        }
    }

    #[test]
    fn ascon_nonces_differ_for_repeated_spdu_numbers() {
        let store = store_with(MacAlgorithm::None, EncAlgorithm::AsconAead128, &[5; 16]);
        let params = SendParams {
            spdu_id: SpduId::Goose,
            spdu_number: 42,
            now: 0,
        };
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let mut out = Vec::new();
            protect(
                Profile::Experimental,
                store.require(9).unwrap(),
                params,
                &[element()],
                &mut RandomIv,
                &mut out,
            )
            .unwrap();
            let pdu = SessionPdu::parse(&out, &Dialect::STANDARD).unwrap();
            let iv = pdu.header.security.iv().to_vec();
            // KeyID and SPDU number sit at fixed offsets of the nonce.
            assert_eq!(&iv[4..8], &9u32.to_be_bytes());
            assert_eq!(&iv[8..12], &42u32.to_be_bytes());
            assert!(seen.insert(iv), "nonce repeated");
        }
    }

    #[test]
    fn signature_keys_never_protect_or_pass_an_spdu() {
        use crate::keystore::SignatureKeys;
        use crate::signature::{SignatureAlgorithm, SigningKey};
        let sk = SigningKey::generate(SignatureAlgorithm::Ed25519, 0).unwrap();
        let verifying = sk.verifying_key().unwrap();
        let mut store = KeyStore::new();
        store
            .insert(KeyEntry::signature_only(
                9,
                SignatureKeys {
                    algorithm: SignatureAlgorithm::Ed25519,
                    signing: Some(sk),
                    verifying,
                },
            ))
            .unwrap();
        let params = SendParams {
            spdu_id: SpduId::Goose,
            spdu_number: 1,
            now: 0,
        };
        let key = store.require(9).unwrap();
        let err = protect(
            Profile::Standard,
            key,
            params,
            &[element()],
            &mut RandomIv,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(matches!(err, SecError::Unsupported(_)), "{err}");
        // An SPDU naming the signature key id but carrying nothing must not verify.
        let mut bare = Vec::new();
        let h = SessionHeader {
            spdu_id: SpduId::Goose,
            spdu_number: 1,
            time_of_current_key: 0,
            time_to_next_key: 0,
            security: SecurityInfo::V2 {
                key_id: 9,
                iv: Iv::EMPTY,
            },
        };
        bare.extend_from_slice(&emit_plain(h, 0));
        assert!(verify(Profile::Standard, &store, &bare, 0).is_err());
    }

    #[test]
    fn padding_is_covered_by_the_mac() {
        let store = store_with(
            MacAlgorithm::HmacSha256_128,
            EncAlgorithm::None,
            b"0123456789ABCDEF",
        );
        let key = store.require(9).unwrap();
        let h = SessionHeader {
            spdu_id: SpduId::Goose,
            spdu_number: 3,
            time_of_current_key: 0,
            time_to_next_key: -1,
            security: SecurityInfo::V2 {
                key_id: 9,
                iv: Iv::EMPTY,
            },
        };
        // A sender that pads: `AF 03 00 00 00`, then the MAC over everything before it.
        let els = [element()];
        let repr = spdu::SpduRepr::new(h, SpduPayload::Elements(&els), 5 + 18, &Dialect::STANDARD)
            .unwrap();
        let lay = repr.layout();
        let mut out = repr.to_vec_with_trailer(&[0; 5 + 18]).unwrap();
        out.truncate(lay.payload_end);
        out.extend_from_slice(&[0xAF, 3, 0, 0, 0]);
        let mut tag = [0u8; 16];
        key.mac_key().unwrap().sign(&[], &out, &mut tag).unwrap();
        out.extend_from_slice(&[0x85, 16]);
        out.extend_from_slice(&tag);
        assert_eq!(lay.payload_end + 5 + 18, out.len());
        assert!(matches!(
            verify(Profile::Standard, &store, &out, 0),
            Ok(Checked::Verified(_))
        ));
        let mut bad = out.clone();
        bad[lay.payload_end + 3] ^= 1;
        assert_eq!(
            verify(Profile::Standard, &store, &bad, 0).unwrap_err(),
            SecError::BadMac
        );
    }

    #[test]
    fn wrong_key_unknown_key_and_expired_key_fail() {
        let store = store_with(
            MacAlgorithm::HmacSha256_128,
            EncAlgorithm::None,
            b"0123456789ABCDEF",
        );
        let other = store_with(
            MacAlgorithm::HmacSha256_128,
            EncAlgorithm::None,
            b"0123456789ABCDEX",
        );
        let mut out = Vec::new();
        let params = SendParams {
            spdu_id: SpduId::Goose,
            spdu_number: 1,
            now: 0,
        };
        protect(
            Profile::Standard,
            store.require(9).unwrap(),
            params,
            &[element()],
            &mut RandomIv,
            &mut out,
        )
        .unwrap();
        assert_eq!(
            verify(Profile::Standard, &other, &out, 0).unwrap_err(),
            SecError::BadMac
        );
        assert_eq!(
            verify(Profile::Standard, &KeyStore::new(), &out, 0).unwrap_err(),
            SecError::UnknownKeyId(9)
        );
        let mut s = KeyStore::new();
        s.insert(
            KeyEntry::new(
                9,
                MacAlgorithm::HmacSha256_128,
                EncAlgorithm::None,
                b"0123456789ABCDEF",
                default_provider(),
            )
            .unwrap()
            .with_validity(Some(10), Some(20)),
        )
        .unwrap();
        assert!(matches!(
            verify(Profile::Standard, &s, &out, 25),
            Err(SecError::KeyExpired { .. })
        ));
        assert!(matches!(
            verify(Profile::Standard, &s, &out, 5),
            Err(SecError::KeyNotYetValid { .. })
        ));
    }

    #[test]
    fn receiver_refuses_replays_and_unsecured() {
        let store = store_with(MacAlgorithm::HmacSha256_80, EncAlgorithm::None, b"k");
        let mut rx = SessionReceiver::new(Profile::Standard, true);
        let mut frames = vec![];
        for n in [1u32, 2, 3] {
            let mut out = Vec::new();
            let params = SendParams {
                spdu_id: SpduId::Goose,
                spdu_number: n,
                now: 0,
            };
            protect(
                Profile::Standard,
                store.require(9).unwrap(),
                params,
                &[element()],
                &mut RandomIv,
                &mut out,
            )
            .unwrap();
            frames.push(out);
        }
        rx.receive(&store, &frames[0], 0).unwrap();
        rx.receive(&store, &frames[2], 0).unwrap();
        rx.receive(&store, &frames[1], 0).unwrap();
        assert!(matches!(
            rx.receive(&store, &frames[1], 0),
            Err(SecError::Replay { .. })
        ));
        // An unsecured SPDU is refused when security is required.
        let mut plain = Vec::new();
        let h = SessionHeader {
            spdu_id: SpduId::Goose,
            spdu_number: 4,
            time_of_current_key: 0,
            time_to_next_key: 0,
            security: SecurityInfo::V2 {
                key_id: 0,
                iv: Iv::EMPTY,
            },
        };
        plain.extend_from_slice(&emit_plain(h, 0));
        assert!(matches!(
            rx.receive(&store, &plain, 0),
            Err(SecError::Unsecured)
        ));
        assert!(matches!(
            verify(Profile::Standard, &store, &plain, 0),
            Ok(Checked::Unsecured(_))
        ));
    }
}
