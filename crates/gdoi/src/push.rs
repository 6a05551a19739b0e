//! GROUPKEY-PUSH (RFC 6407 section 4): the key server rolls keys to every member at once.
//!
//! ```text
//! GCKS -> members  HDR*, SEQ, [D,] [SA, KD,] SIG
//! ```
//!
//! The cookies of the header are the KEK's SPI (16 octets, RFC 6407 5.3), the Message ID is
//! zero, and everything after the header is encrypted with the KEK (AES-CBC, KEK_ALGORITHM_KEY
//! from the registration). gander puts a fresh random IV as the first block of the encrypted
//! body (there is no phase-1 IV chain to continue from in a multicast message; docs/gdoi.md).
//!
//! The key server signs `"rekey" | HDR | payloads before SIG` (the HDR with the E flag set
//! and Length of the whole plaintext message including the SIG payload), as RFC 6407 4.1 has
//! it for the signature with the KEK's SIG_ALGORITHM; ECDSA values are r | s, each of the
//! curve's size (RFC 4754 7). A member accepts a push only if the signature verifies with the
//! key server's public key it received at registration (SIG_ALGORITHM_KEY) and its SEQ is
//! above every SEQ it accepted before (RFC 6407 4.1: replay protection); a refused push
//! changes nothing.

use crate::keys;
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::header::{exchange, flags};
use gander_wire::isakmp::payload::{emit_payloads, first_kind, kind, parse_payloads, payloads_len};
use gander_wire::isakmp::{chain_end, Header, IsakmpError, Payload, HEADER_LEN};
use gander_wire::Codec;
use openssl::bn::BigNum;
use openssl::ecdsa::EcdsaSig;
use openssl::hash::MessageDigest;
use openssl::pkey::{Id, PKey, Private, Public};
use openssl::sign::{Signer, Verifier};
use rand::RngCore;
use zeroize::Zeroizing;

/// Why a push was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PushError {
    /// Not a well-formed message (or the KEK's cookies are not ours).
    #[error("malformed: {0}")]
    Malformed(#[from] IsakmpError),
    /// Not a GROUPKEY-PUSH under this KEK.
    #[error("not a push under this KEK")]
    NotOurs,
    /// SEQ missing, or not first.
    #[error("SEQ payload missing or not first")]
    NoSeq,
    /// SEQ not above the last accepted one: a replay.
    #[error("replayed push: SEQ {got} not above {last}")]
    Replay {
        /// SEQ received.
        got: u32,
        /// Highest SEQ accepted before.
        last: u32,
    },
    /// SIG missing, or not last.
    #[error("SIG payload missing or not last")]
    NoSig,
    /// The signature does not verify.
    #[error("signature does not verify")]
    BadSignature,
    /// A key or crypto primitive failed (never peer data alone).
    #[error("crypto: {0}")]
    Crypto(&'static str),
}

impl PushError {
    /// The RFC 2408 3.14.1 notification (members do not answer pushes; this names the event).
    pub fn notify(&self) -> u16 {
        match self {
            PushError::Malformed(e) => e.notify(),
            PushError::NotOurs => notify_type::INVALID_COOKIE,
            PushError::NoSeq | PushError::NoSig | PushError::Crypto(_) => {
                notify_type::PAYLOAD_MALFORMED
            }
            PushError::Replay { .. } => notify_type::INVALID_MESSAGE_ID,
            PushError::BadSignature => notify_type::INVALID_SIGNATURE,
        }
    }
}

impl From<openssl::error::ErrorStack> for PushError {
    fn from(_: openssl::error::ErrorStack) -> Self {
        PushError::Crypto("openssl")
    }
}

impl From<crate::Phase1Error> for PushError {
    fn from(e: crate::Phase1Error) -> Self {
        match e {
            crate::Phase1Error::Malformed(m) => PushError::Malformed(m),
            _ => PushError::Crypto("cipher"),
        }
    }
}

/// The key encryption key of a group: SPI and AES key.
#[derive(Clone)]
pub struct Kek {
    /// The SA KEK's SPI: initiator cookie | responder cookie of every push.
    pub spi: [u8; 16],
    /// AES-128 or AES-256 key.
    pub key: Zeroizing<Vec<u8>>,
}

impl core::fmt::Debug for Kek {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kek")
            .field("spi", &self.spi)
            .finish_non_exhaustive()
    }
}

fn digest_for(bits: u32) -> MessageDigest {
    if bits > 256 {
        MessageDigest::sha384()
    } else {
        MessageDigest::sha256()
    }
}

/// Signs with the key server's key: ECDSA as r | s (RFC 4754), RSA PKCS#1 v1.5 with SHA-256.
pub fn sign(key: &PKey<Private>, data: &[u8]) -> Result<Vec<u8>, PushError> {
    match key.id() {
        Id::EC => {
            let ec = key.ec_key()?;
            let bits = ec.group().degree();
            let mut h = openssl::hash::Hasher::new(digest_for(bits))?;
            h.update(data)?;
            let sig = EcdsaSig::sign(&h.finish()?, &ec)?;
            let n = bits.div_ceil(8) as i32;
            let mut out = sig.r().to_vec_padded(n)?;
            out.extend(sig.s().to_vec_padded(n)?);
            Ok(out)
        }
        Id::RSA => {
            let mut s = Signer::new(MessageDigest::sha256(), key)?;
            s.update(data)?;
            Ok(s.sign_to_vec()?)
        }
        _ => Err(PushError::Crypto("signature key type")),
    }
}

/// Verifies [`sign`]'s output.
pub fn verify(key: &PKey<Public>, data: &[u8], sig: &[u8]) -> Result<bool, PushError> {
    match key.id() {
        Id::EC => {
            let ec = key.ec_key()?;
            let bits = ec.group().degree();
            let n = bits.div_ceil(8) as usize;
            if sig.len() != 2 * n {
                return Ok(false);
            }
            let r = BigNum::from_slice(&sig[..n])?;
            let s = BigNum::from_slice(&sig[n..])?;
            let sig = EcdsaSig::from_private_components(r, s)?;
            let mut h = openssl::hash::Hasher::new(digest_for(bits))?;
            h.update(data)?;
            Ok(sig.verify(&h.finish()?, &ec).unwrap_or(false))
        }
        Id::RSA => {
            let mut v = Verifier::new(MessageDigest::sha256(), key)?;
            v.update(data)?;
            Ok(v.verify(sig).unwrap_or(false))
        }
        _ => Err(PushError::Crypto("signature key type")),
    }
}

fn push_header(kek: &Kek) -> Header {
    let mut ci = [0u8; 8];
    let mut cr = [0u8; 8];
    ci.copy_from_slice(&kek.spi[..8]);
    cr.copy_from_slice(&kek.spi[8..]);
    Header {
        initiator_cookie: ci,
        responder_cookie: cr,
        next_payload: kind::SEQ,
        major_version: 1,
        minor_version: 0,
        exchange: exchange::GROUPKEY_PUSH,
        flags: flags::ENCRYPTION,
        message_id: 0,
        length: 0,
    }
}

/// The octets the signature covers: "rekey" | HDR | payloads before SIG.
fn signed_data(h: &Header, before_sig: &[u8]) -> Vec<u8> {
    let mut d = b"rekey".to_vec();
    d.extend(h.to_vec());
    d.extend_from_slice(before_sig);
    d
}

/// Builds a push: SEQ, then `body` (Delete, SA, KD as the rekey needs), then SIG.
pub fn build(
    kek: &Kek,
    signer: &PKey<Private>,
    seq: u32,
    body: Vec<Payload>,
) -> Result<Vec<u8>, PushError> {
    let mut payloads = vec![Payload::Seq(seq)];
    payloads.extend(body);
    // The SIG's length is known before its value: compute it with a placeholder.
    let sig_len = sign(signer, b"size")?.len();
    let mut with_sig = payloads.clone();
    with_sig.push(Payload::Sig(vec![0; sig_len]));
    if !with_sig.iter().all(Payload::fits) {
        return Err(IsakmpError::TooLarge { what: "payload" }.into());
    }
    let plain_len = HEADER_LEN + payloads_len(&with_sig);
    let mut h = push_header(kek);
    h.length = u32::try_from(plain_len).map_err(|_| PushError::Crypto("length"))?;
    // Emitted as the start of the full chain: the last header before SIG names SIG.
    let mut chain = vec![0u8; payloads_len(&with_sig)];
    emit_payloads(&with_sig, &mut chain);
    let before = chain[..payloads_len(&payloads)].to_vec();
    let sig = sign(signer, &signed_data(&h, &before))?;
    *with_sig.last_mut().ok_or(PushError::NoSig)? = Payload::Sig(sig);
    let mut plain = Zeroizing::new(vec![0u8; payloads_len(&with_sig)]);
    emit_payloads(&with_sig, &mut plain);
    let mut iv = [0u8; keys::BLOCK];
    rand::thread_rng().fill_bytes(&mut iv);
    let ct = keys::encrypt(&kek.key, &iv, &plain)?;
    h.next_payload = first_kind(&with_sig);
    h.length = u32::try_from(HEADER_LEN + keys::BLOCK + ct.len())
        .map_err(|_| PushError::Crypto("length"))?;
    let mut out = h.to_vec();
    out.extend_from_slice(&iv);
    out.extend(ct);
    Ok(out)
}

/// What an accepted push carries (SEQ and SIG removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rekey {
    /// Its SEQ.
    pub seq: u32,
    /// The payloads between SEQ and SIG (Delete, SA, KD).
    pub payloads: Vec<Payload>,
}

/// A member's receiving end of one group's pushes.
pub struct PushReceiver {
    kek: Kek,
    verify_key: PKey<Public>,
    last_seq: u32,
}

impl PushReceiver {
    /// A receiver for `kek`, trusting `verify_key` (SIG_ALGORITHM_KEY from registration), that
    /// has seen SEQ up to `last_seq` (the SEQ of the registration).
    pub fn new(kek: Kek, verify_key: PKey<Public>, last_seq: u32) -> PushReceiver {
        PushReceiver {
            kek,
            verify_key,
            last_seq,
        }
    }

    /// The highest SEQ accepted.
    pub fn last_seq(&self) -> u32 {
        self.last_seq
    }

    /// Checks and opens a push; on success records its SEQ.
    pub fn receive(&mut self, buf: &[u8]) -> Result<Rekey, PushError> {
        let h = Header::parse(buf)?;
        let mut spi = [0u8; 16];
        spi[..8].copy_from_slice(&h.initiator_cookie);
        spi[8..].copy_from_slice(&h.responder_cookie);
        if h.exchange != exchange::GROUPKEY_PUSH
            || !h.encrypted()
            || h.message_id != 0
            || spi != self.kek.spi
        {
            return Err(PushError::NotOurs);
        }
        if buf.len() != h.length as usize || buf.len() < HEADER_LEN + 2 * keys::BLOCK {
            return Err(IsakmpError::BadLength {
                what: "push",
                value: buf.len(),
            }
            .into());
        }
        let iv = &buf[HEADER_LEN..HEADER_LEN + keys::BLOCK];
        let plain = keys::decrypt(&self.kek.key, iv, &buf[HEADER_LEN + keys::BLOCK..])?;
        let payloads = parse_payloads(h.next_payload, &plain, h.exchange, true)?;
        let end = chain_end(h.next_payload, &plain)?;
        let Some(Payload::Seq(seq)) = payloads.first() else {
            return Err(PushError::NoSeq);
        };
        let Some(Payload::Sig(sig)) = payloads.last() else {
            return Err(PushError::NoSig);
        };
        let sig_len = 4 + sig.len();
        let mut signed_h = h;
        signed_h.length =
            u32::try_from(HEADER_LEN + end).map_err(|_| PushError::Crypto("length"))?;
        if !verify(
            &self.verify_key,
            &signed_data(&signed_h, &plain[..end - sig_len]),
            sig,
        )? {
            return Err(PushError::BadSignature);
        }
        if *seq <= self.last_seq {
            return Err(PushError::Replay {
                got: *seq,
                last: self.last_seq,
            });
        }
        self.last_seq = *seq;
        let n = payloads.len();
        Ok(Rekey {
            seq: *seq,
            payloads: payloads[1..n - 1].to_vec(),
        })
    }
}
