//! The rows `gander bench crypto` adds for issue #13: Ascon-AEAD128 (NIST SP 800-232,
//! experimental in gander, `docs/ascon.md`) on R-GOOSE as a MAC and as the payload AEAD, and
//! MACs on whole layer-2 GOOSE frames (Ascon beside AES-GMAC).
//!
//! Each algorithm and size is measured as in [`crate::crypto`]: the bare primitive with a
//! prepared key on the very bytes the frame authenticates or encrypts, and the library on the
//! whole frame, interleaved, in the same run, so "protect and verify <= 1.5x the primitive" is a
//! ratio of rows that saw the same machine. Neither OpenSSL 3.0 nor 3.5 has Ascon, so Ascon
//! rows have no `openssl`/`evp-per-message` implementations.
//!
//! * R-GOOSE sizes are the gateway paper's Table 6 sizes, as for the other algorithms; the
//!   header in front of the payload is 47 bytes here (31 + the 16-byte nonce).
//! * Layer-2 rows time [`l2::protect_into`] (into a reused buffer) and, for verify, [`view::classify`] + [`view::verify`]
//!   (what the gateway and `gander frame verify` run); both decode the whole GOOSE APDU, which
//!   the primitive rows do not.
//! * Layer-2 rows carry the same APDUs as the R-GOOSE HMAC rows (1, 12, 72 data objects) in an
//!   untagged Ethernet frame; `bytes` is the range the MAC covers (EtherType through the end of
//!   the AuthenticationValue, IEC 62351-6), which differs with the IV length.

use crate::crypto::{
    bench_key, element, goose_apdu, op, params, spdu_ops, BenchError, Group, Impl, Op, RowId,
    Runner, TimedOp, AUTH_SIZES, ELEMENT_HEADER_LEN, ENC_SIZES, HEADER_LEN_NO_IV, NOW,
};
use gander_sec::spdu::{self, Checked, IvSource, RandomIv};
use gander_sec::{
    default_provider, AeadKey, CryptoError, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, MacKey,
    Profile, SecError,
};
use gander_sec::{l2, view};
use gander_wire::ethernet::{EthernetRepr, ETHERTYPE_GOOSE};
use gander_wire::l2_extension::SecurityExtension;
use gander_wire::l2_frame::{GooseFrameRepr, L2Frame};
use gander_wire::spdu::SessionPdu;
use std::hint::black_box;

/// Session header up to PayloadLength with Ascon's 16-byte nonce.
pub const HEADER_LEN_NONCE16: usize = HEADER_LEN_NO_IV + 16;

/// Layer-2 rows: MAC, key length and the profile that allows it.
pub const L2_ROWS: [(MacAlgorithm, usize, Profile); 2] = [
    (MacAlgorithm::AsconAead128Mac, 16, Profile::Experimental),
    (MacAlgorithm::AesGmac128, 16, Profile::Standard),
];

/// 128-bit nonces for the primitive encrypt row: a counter, so none repeats in a run and no
/// random number generator is in the measurement.
struct CounterNonce(u64);

impl CounterNonce {
    fn next(&mut self) -> [u8; 16] {
        self.0 += 1;
        let mut n = [0u8; 16];
        n[8..].copy_from_slice(&self.0.to_be_bytes());
        n
    }
}

fn store_with(
    id: u32,
    mac: MacAlgorithm,
    enc: EncAlgorithm,
    secret: &[u8],
) -> Result<KeyStore, BenchError> {
    let mut store = KeyStore::new();
    store.insert(KeyEntry::new(id, mac, enc, secret, default_provider())?)?;
    Ok(store)
}

/// Ascon-AEAD128 as the R-GOOSE MAC (empty plaintext, the covered bytes as associated data).
pub(crate) fn ascon_mac_rows(r: &mut Runner<'_>) -> Result<(), BenchError> {
    let mac = MacAlgorithm::AsconAead128Mac;
    (r.events)(crate::crypto::Event::Algorithm(mac.name()));
    let secret = bench_key(16, 5);
    let store = store_with(1, mac, EncAlgorithm::None, &secret)?;
    let entry = store.require(1)?;
    let store = &store;
    let mk: &dyn MacKey = entry
        .mac_key()
        .ok_or_else(|| BenchError::Setup("no MAC key".into()))?;
    for (bytes, objects) in AUTH_SIZES {
        let apdu = goose_apdu(bytes - HEADER_LEN_NONCE16 - ELEMENT_HEADER_LEN, objects)?;
        let elements = [element(&apdu)];
        let mut frame = Vec::new();
        spdu::protect(
            Profile::Experimental,
            entry,
            params(1),
            &elements,
            &mut RandomIv,
            &mut frame,
        )?;
        if frame.len() != bytes + 2 + mac.tag_len() {
            return Err(BenchError::Setup(format!(
                "{mac}: frame of {} bytes, expected {bytes} + tag",
                frame.len()
            )));
        }
        let pdu =
            SessionPdu::parse(&frame, &Profile::Experimental.dialect()).map_err(SecError::from)?;
        let iv = pdu.header.security.iv().to_vec();
        let data = frame[..bytes].to_vec();
        let tag = frame[bytes + 2..].to_vec();
        mk.verify(&iv, &data, &tag)?;
        if !matches!(
            spdu::verify(Profile::Experimental, store, &frame, NOW)?,
            Checked::Verified(_)
        ) {
            return Err(BenchError::Setup(format!("{mac}: frame did not verify")));
        }
        let (iv, data, tag, frame, elements) =
            (&iv[..], &data[..], &tag[..], &frame[..], &elements);
        let id = |imp, op| RowId {
            group: Group::Authentication,
            op,
            algorithm: mac.name(),
            key_bits: None,
            bytes,
            imp,
        };
        let mut ops: Vec<(RowId, TimedOp<'_, BenchError>)> = vec![
            (
                id(Impl::Primitive, Op::Mac),
                op(move || {
                    let mut t = [0u8; 16];
                    mk.sign(black_box(iv), black_box(data), &mut t)?;
                    black_box(&t);
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::Primitive, Op::Verify),
                op(move || mk.verify(black_box(iv), black_box(data), black_box(tag))),
            ),
        ];
        ops.extend(spdu_ops(
            Profile::Experimental,
            entry,
            elements,
            store,
            frame,
            id,
        ));
        r.rows(r.cfg.reps, ops)?;
    }
    Ok(())
}

/// Ascon-AEAD128 as the R-GOOSE payload encryption.
pub(crate) fn ascon_enc_rows(r: &mut Runner<'_>) -> Result<(), BenchError> {
    let enc = EncAlgorithm::AsconAead128;
    let key_bits = Some(128);
    (r.events)(crate::crypto::Event::Algorithm(enc.name()));
    let secret = bench_key(16, 13);
    let store = store_with(2, MacAlgorithm::None, enc, &secret)?;
    let entry = store.require(2)?;
    let store = &store;
    let ak: &dyn AeadKey = entry
        .aead_key()
        .ok_or_else(|| BenchError::Setup("no AEAD key".into()))?;
    let h = HEADER_LEN_NONCE16;
    for (bytes, objects) in ENC_SIZES {
        let crate::crypto::Sealed {
            apdu,
            frame,
            iv,
            aad,
            ciphertext: ct,
            tag,
            plaintext: pt,
        } = crate::crypto::seal(Profile::Experimental, enc, entry, store, bytes, objects, h)?;
        let elements = [element(&apdu)];
        let (iv, aad, ct, tag, pt, frame, elements) = (
            &iv[..],
            &aad[..],
            &ct[..],
            &tag[..],
            &pt[..],
            &frame[..],
            &elements,
        );
        let id = |imp, op| RowId {
            group: Group::Encryption,
            op,
            algorithm: enc.name(),
            key_bits,
            bytes,
            imp,
        };
        let (mut w1, mut w2) = (pt.to_vec(), pt.to_vec());
        let mut nonces = CounterNonce(0);
        let mut ops: Vec<(RowId, TimedOp<'_, BenchError>)> = vec![
            (
                id(Impl::Primitive, Op::Encrypt),
                op(move || {
                    w1.copy_from_slice(pt);
                    let t = ak.seal_in_place(&nonces.next(), black_box(aad), &mut w1)?;
                    black_box((&w1, t));
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::Primitive, Op::Decrypt),
                op(move || {
                    w2.copy_from_slice(ct);
                    ak.open_in_place(black_box(iv), black_box(aad), &mut w2, black_box(tag))?;
                    black_box(&w2);
                    Ok::<_, CryptoError>(())
                }),
            ),
        ];
        ops.extend(spdu_ops(
            Profile::Experimental,
            entry,
            elements,
            store,
            frame,
            id,
        ));
        r.rows(r.cfg.reps, ops)?;
    }
    Ok(())
}

/// An unsecured layer-2 GOOSE frame around `apdu`.
fn l2_frame(apdu: Vec<u8>) -> Result<Vec<u8>, BenchError> {
    L2Frame {
        eth: EthernetRepr {
            dst: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
            src: [0x02, 0, 0, 0, 0, 0x01],
            vlan: None,
            ethertype: ETHERTYPE_GOOSE,
        },
        body: GooseFrameRepr {
            appid: 0x3001,
            reserved1: 0,
            reserved2: 0,
            apdu,
            extension: None,
        },
    }
    .to_vec()
    .map_err(|e| BenchError::Setup(format!("layer-2 frame: {e}")))
}

/// `mac` on whole layer-2 GOOSE frames: [`l2::protect`] / [`l2::verify`] against the primitive
/// over the covered range.
pub(crate) fn l2_rows(
    r: &mut Runner<'_>,
    mac: MacAlgorithm,
    key_len: usize,
    profile: Profile,
) -> Result<(), BenchError> {
    let key_bits = (mac == MacAlgorithm::AesGmac128 || mac == MacAlgorithm::AesGmac64)
        .then_some(key_len as u32 * 8);
    (r.events)(crate::crypto::Event::Algorithm(&format!(
        "{} layer 2",
        mac.name()
    )));
    let secret = bench_key(key_len, 17);
    let store = store_with(3, mac, EncAlgorithm::None, &secret)?;
    let entry = store.require(3)?;
    let store = &store;
    let mk: &dyn MacKey = entry
        .mac_key()
        .ok_or_else(|| BenchError::Setup("no MAC key".into()))?;
    for (auth_bytes, objects) in AUTH_SIZES {
        let apdu = goose_apdu(auth_bytes - HEADER_LEN_NO_IV - ELEMENT_HEADER_LEN, objects)?;
        let plain = l2_frame(apdu)?;
        let frame = l2::protect(profile, entry, &plain, &mut RandomIv, NOW)?;
        let (parsed, layout) = L2Frame::parse(&frame).map_err(SecError::from)?;
        let ext_bytes = parsed
            .body
            .extension
            .ok_or_else(|| BenchError::Setup("no extension".into()))?;
        let (ext, ext_layout) =
            SecurityExtension::parse_with_layout(&ext_bytes).map_err(SecError::from)?;
        let covered =
            frame[layout.ethertype_offset..layout.apdu.end + ext_layout.auth_value.end].to_vec();
        let bytes = covered.len();
        let iv = ext.iv.clone().unwrap_or_default();
        let tag = ext.mac.clone();
        mk.verify(&iv, &covered, &tag)?;
        if !matches!(
            l2::verify(profile, store, &frame, NOW)?,
            l2::CheckedGoose::Verified(_)
        ) {
            return Err(BenchError::Setup(format!(
                "{mac}: layer-2 frame did not verify"
            )));
        }
        let (iv, covered, tag, frame, plain) =
            (&iv[..], &covered[..], &tag[..], &frame[..], &plain[..]);
        let tl = mac.tag_len();
        let id = |imp, op| RowId {
            group: Group::Layer2,
            op,
            algorithm: mac.name(),
            key_bits,
            bytes,
            imp,
        };
        let mut ivs = RandomIv;
        let mut out = Vec::new();
        let ops: Vec<(RowId, TimedOp<'_, BenchError>)> = vec![
            (
                id(Impl::Primitive, Op::Mac),
                op(move || {
                    let mut t = [0u8; 32];
                    mk.sign(black_box(iv), black_box(covered), &mut t[..tl])?;
                    black_box(&t);
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::Primitive, Op::Verify),
                op(move || mk.verify(black_box(iv), black_box(covered), black_box(tag))),
            ),
            (
                id(Impl::Gander, Op::Protect),
                op(move || {
                    // Into a reused buffer, as the R-GOOSE rows' `spdu::protect`.
                    l2::protect_into(
                        profile,
                        entry,
                        black_box(plain),
                        &mut ivs as &mut dyn IvSource,
                        NOW,
                        &mut out,
                    )?;
                    black_box(&out);
                    Ok::<_, SecError>(())
                }),
            ),
            (
                id(Impl::Gander, Op::Verify),
                op(move || {
                    // What the gateway and `frame verify` call: classify, then verify (the
                    // extension, key, MAC, APPID binding and the whole GOOSE APDU).
                    let view = view::classify(profile, black_box(frame))?;
                    black_box(view::verify(profile, store, &view, NOW)?);
                    Ok::<_, SecError>(())
                }),
            ),
        ];
        r.rows(r.cfg.reps, ops)?;
    }
    Ok(())
}
