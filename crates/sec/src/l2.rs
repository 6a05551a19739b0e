//! IEC 62351-6 security for layer-2 GOOSE (IEC 61850-8-1) and SV (IEC 61850-9-2): the security
//! extension after the APDU, the header CRC in Reserved2, and a MAC or digital signature over
//! EtherType .. end of AuthenticationValue.
//!
//! SV (EtherType 0x88BA) shares GOOSE's header (APPID, Length, Reserved1 with the simulation
//! bit, Reserved2; IEC 61850-9-2 clause 8.2, Wireshark's `packet-sv.c` reads the same four
//! fields) and IEC 62351-6 secures both the same way, so one code path serves both; only the
//! APDU differs (`savPdu`, tag 0x60, instead of `goosePdu`, 0x61). It is checked whole before a
//! frame is protected and again on receipt: every field, the `Data` values of a GOOSE allData
//! included, and numDatSetEntries equal to their number (`GooseView::check_counters` here,
//! `GooseView::parse` in `crate::view::verify`).
//!
//! Both directions work on the frame's bytes through borrowed views (`gander_wire`'s
//! `l2_frame::locate`/`emit_secured`, `GooseView`, `SavView`, `ExtensionView`): no owned frame
//! is built, and [`protect_into`] writes into a buffer the caller reuses.
//!
//! Coverage was confirmed on libiec61850's development encoder (`goose_sec.c`, the synthetic
//! frame, `docs/session-layout.md` §6): HMAC-SHA256-128 over bytes 12..205 of that frame, i.e. from the
//! EtherType through the end of the `A4` element. Layer 2 carries no encryption in IEC 62351-6,
//! so a key with `enc` set is refused here.
//!
//! Profiles differ only in Reserved2, the CRC-16/X-25 (RFC 1662 FCS) of EtherType..Reserved1 as
//! emitted: `standard` writes it big-endian like every other IEC 61850-8-1 header field;
//! `libiec61850` writes it low byte first, as its development publisher does (RFC 1662's
//! transmission order). Each profile checks its own order on receipt.

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::error::SecError;
use crate::keystore::{KeyEntry, KeyStore};
use crate::profile::Profile;
use crate::spdu::IvSource;
use gander_wire::ethernet::EthernetRepr;
use gander_wire::ethernet::{ETHERTYPE_GOOSE, ETHERTYPE_SV};
use gander_wire::goose::GooseView;
use gander_wire::l2_extension::{ExtensionFields, ExtensionView, SecurityExtension};
use gander_wire::l2_frame::{self, GooseFrameRepr, L2Frame, L2Layout};

use crate::view::{crc_order, L2View};

/// What authenticates an L2 frame under a key: a MAC, or a signature.
fn auth_len(key: &KeyEntry) -> Result<usize, SecError> {
    if key.enc != EncAlgorithm::None {
        return Err(SecError::Unsupported(
            "IEC 62351-6 layer-2 GOOSE/SV carries a MAC or signature, not encryption",
        ));
    }
    if let Some(s) = &key.signature {
        if s.signing.is_none() {
            return Err(SecError::Unsupported("signature key has no private key"));
        }
        return Ok(s.wire_len());
    }
    if key.mac == MacAlgorithm::None {
        return Err(SecError::Unsupported("key has no MAC"));
    }
    Ok(key.mac.tag_len())
}

/// Adds the security extension to an unsecured layer-2 GOOSE or SV frame (a whole Ethernet
/// frame). See [`protect_into`], which this calls with a fresh buffer.
pub fn protect(
    profile: Profile,
    key: &KeyEntry,
    frame: &[u8],
    ivs: &mut dyn IvSource,
    now: u64,
) -> Result<Vec<u8>, SecError> {
    let mut out = Vec::new();
    protect_into(profile, key, frame, ivs, now, &mut out)?;
    Ok(out)
}

/// Adds the security extension to an unsecured layer-2 GOOSE or SV frame, writing the secured
/// frame into `out` (resized to the secured frame, every octet written; a caller that reuses
/// `out` allocates nothing once it is large enough). On error
/// `out` holds no secured frame: it may be unchanged or hold a frame with a zero mAC, and must
/// not be sent.
///
/// Works on the frame's bytes: the frame is located (Ethernet header and tag stack, Length,
/// Reserved1, the APDU element; `l2_frame::locate`), the APDU checked whole without copying
/// (`GooseView` / `SavView`: a frame is only protected if it parses, and its counters feed the
/// Ascon nonce), then one buffer is filled: the frame up to the end of the APDU, Length,
/// Reserved1 and Reserved2 patched, the extension appended (`l2_frame::emit_secured`), and the
/// MAC or signature computed over EtherType..end of AuthenticationValue straight into the mAC
/// (IEC 62351-6 clause 8). The Ethernet header and tag stack are kept byte for byte; padding is
/// dropped.
pub fn protect_into(
    profile: Profile,
    key: &KeyEntry,
    frame: &[u8],
    ivs: &mut dyn IvSource,
    now: u64,
    out: &mut Vec<u8>,
) -> Result<(), SecError> {
    let tag_len = check_key(profile, key, now)?;
    let (ethertype, layout) = l2_frame::locate(frame)?;
    protect_located(
        profile, key, tag_len, frame, ethertype, &layout, ivs, now, out,
    )
}

/// [`protect_into`] of a frame that [`crate::view::classify`] has already located (`l`, from
/// its [`crate::view::Content::L2`]): the Ethernet and GOOSE/SV headers are not read again.
/// `frame` must be the frame `l` was classified from.
pub fn protect_view_into(
    profile: Profile,
    key: &KeyEntry,
    frame: &[u8],
    l: &L2View,
    ivs: &mut dyn IvSource,
    now: u64,
    out: &mut Vec<u8>,
) -> Result<(), SecError> {
    let tag_len = check_key(profile, key, now)?;
    if l.ethertype != ETHERTYPE_GOOSE && l.ethertype != ETHERTYPE_SV {
        return Err(SecError::Malformed(gander_wire::Error::WrongEtherType(
            l.ethertype,
        )));
    }
    // The EtherType that names the payload sits right in front of APPID
    // (`view::classify` found it there behind the tag stack).
    let layout = L2Layout {
        ethertype_offset: l.header_offset - 2,
        header_offset: l.header_offset,
        apdu: l.apdu.clone(),
        extension: l.extension.clone(),
        end: l.end,
    };
    protect_located(
        profile,
        key,
        tag_len,
        frame,
        l.ethertype,
        &layout,
        ivs,
        now,
        out,
    )
}

/// The key checks both entry points make first: valid at `now`, allowed by the profile, and
/// able to authenticate a layer-2 frame; returns the length of its MAC or signature.
fn check_key(profile: Profile, key: &KeyEntry, now: u64) -> Result<usize, SecError> {
    key.check_valid_at(now)?;
    profile.check_algorithms(key.mac, key.enc)?;
    auth_len(key)
}

/// The common part of [`protect_into`] and [`protect_view_into`], from the located frame on.
#[allow(clippy::too_many_arguments)] // the two entry points' arguments plus what they found
fn protect_located(
    profile: Profile,
    key: &KeyEntry,
    tag_len: usize,
    frame: &[u8],
    ethertype: u16,
    layout: &L2Layout,
    ivs: &mut dyn IvSource,
    now: u64,
    out: &mut Vec<u8>,
) -> Result<(), SecError> {
    if let Some(ext) = &layout.extension {
        let id = ExtensionView::parse(&frame[ext.clone()]).map_or(0, |e| e.key_id);
        return Err(SecError::AlreadySecured(id));
    }
    let apdu = &frame[layout.apdu.clone()];
    // The APDU must parse before it is protected; its counters feed the Ascon nonce's
    // informational fields (stNum/sqNum for GOOSE, 0/smpCnt of the first ASDU for SV; the
    // nonce's own counter is what keeps it unique).
    let (st_num, sq_num) = if ethertype == ETHERTYPE_SV {
        let sav = crate::view::sav_view(apdu)?;
        (0, sav.first.as_ref().map_or(0, |a| u32::from(a.smp_cnt)))
    } else {
        let g = GooseView::check_counters(apdu)?;
        crate::view::check_entries(g.entries_match())?;
        (g.st_num, g.sq_num)
    };
    let (iv_buf, iv_len) = if key.signature.is_none() {
        crate::spdu::mac_iv(key.mac, st_num, sq_num, ivs)?
    } else {
        ([0; 16], 0)
    };
    let iv = &iv_buf[..iv_len];
    let appid = u16::from_be_bytes([frame[layout.header_offset], frame[layout.header_offset + 1]]);
    key.check_appid(appid)?;
    let fields = ExtensionFields {
        key_id: key.id,
        time_of_current_key: key.time_of_current_key() as i64,
        time_to_next_key: key.time_to_next_key(now) as i64,
        iv: (iv_len > 0).then_some(iv),
        mac_len: tag_len,
    };
    let at = l2_frame::emit_secured(frame, ethertype, layout, &fields, crc_order(profile), out)?;
    // The mAC follows AuthenticationValue, so the covered bytes and the mAC never overlap.
    let (head, tail) = out.split_at_mut(at.mac.start);
    let covered = &head[at.covered.clone()];
    let mac_out = &mut tail[..at.mac.len()];
    if let Some(s) = &key.signature {
        let signer = s
            .signing
            .as_ref()
            .ok_or(SecError::Unsupported("no private key"))?;
        let sig = signer.sign(covered)?;
        let sig = if s.algorithm == crate::signature::SignatureAlgorithm::EcdsaP256Sha256 {
            crate::signature::ecdsa_der_to_raw(&sig)?.to_vec()
        } else {
            sig
        };
        if sig.len() != tag_len {
            return Err(SecError::Unsupported(
                "signature length differs from the key size",
            ));
        }
        mac_out.copy_from_slice(&sig);
    } else {
        let mk = key
            .mac_key()
            .ok_or(SecError::Unsupported("key has no MAC"))?;
        mk.sign(iv, covered, mac_out)?;
    }
    Ok(())
}

/// A layer-2 GOOSE or SV frame whose extension verified under a known, valid key.
#[derive(Clone, Debug)]
pub struct VerifiedGoose {
    /// Ethernet header.
    pub eth: EthernetRepr,
    /// APPID .. extension.
    pub body: GooseFrameRepr,
    /// The decoded extension.
    pub extension: SecurityExtension,
}

/// The result of checking one L2 frame.
#[derive(Clone, Debug)]
pub enum CheckedGoose {
    /// Extension present and verified.
    Verified(VerifiedGoose),
    /// No extension.
    Unsecured(L2Frame),
}

/// Verifies one layer-2 GOOSE or SV frame statelessly (through [`crate::view::verify`]).
pub fn verify(
    profile: Profile,
    store: &KeyStore,
    frame: &[u8],
    now: u64,
) -> Result<CheckedGoose, SecError> {
    let view = crate::view::classify(profile, frame)?;
    if !matches!(
        view.kind(),
        crate::view::Kind::Goose | crate::view::Kind::Sv
    ) {
        return Err(SecError::Malformed(gander_wire::Error::WrongEtherType(
            gander_wire::ethernet::Frame::new_unchecked(frame).ethertype(),
        )));
    }
    let judged = crate::view::verify(profile, store, &view, now)?;
    let (l2, _) = L2Frame::parse(frame)?;
    match judged {
        crate::view::Judged::Unsecured => Ok(CheckedGoose::Unsecured(l2)),
        crate::view::Judged::Verified(
            crate::view::Verified::Goose { extension, .. }
            | crate::view::Verified::Sv { extension, .. },
        ) => Ok(CheckedGoose::Verified(VerifiedGoose {
            eth: l2.eth,
            body: l2.body,
            extension: extension.to_extension(),
        })),
        crate::view::Judged::Verified(_) => Err(SecError::Unsupported("not layer-2 GOOSE or SV")),
    }
}

#[cfg(test)]
mod entries_tests {
    //! numDatSetEntries against allData on the layer-2 security path (IEC 61850-8-1 Table 60).
    use super::*;
    use crate::spdu::RandomIv;
    use crate::view::{self, Judged};
    use crate::{default_provider, MacAlgorithm};
    use gander_wire::data::Data;
    use gander_wire::ethernet::ETHERTYPE_GOOSE;
    use gander_wire::goose::GoosePdu;
    use gander_wire::l2_extension::CrcByteOrder;
    use gander_wire::Codec;

    const NOW: u64 = 1_767_225_600;

    fn frame(entries: u32) -> Vec<u8> {
        L2Frame {
            eth: EthernetRepr {
                dst: [0x01, 0x0c, 0xcd, 0x01, 0, 1],
                src: [2, 0, 0, 0, 0, 1],
                vlan: None,
                ethertype: ETHERTYPE_GOOSE,
            },
            body: GooseFrameRepr {
                appid: 0x3001,
                reserved1: 0,
                reserved2: 0,
                apdu: GoosePdu {
                    gocb_ref: "IED1LD0/LLN0$GO$gcb1".into(),
                    time_allowed_to_live: 2000,
                    dat_set: "IED1LD0/LLN0$ds1".into(),
                    go_id: None,
                    t: [0; 8],
                    st_num: 4,
                    sq_num: 9,
                    simulation: false,
                    conf_rev: 1,
                    nds_com: false,
                    num_dat_set_entries: entries,
                    all_data: vec![Data::Boolean(true), Data::Integer(7)],
                }
                .to_vec(),
                extension: None,
            },
        }
        .to_vec()
        .unwrap()
    }

    fn store() -> KeyStore {
        let mut s = KeyStore::new();
        let k = KeyEntry::new(
            5,
            MacAlgorithm::AesGmac128,
            EncAlgorithm::None,
            &[7; 16],
            default_provider(),
        )
        .unwrap();
        s.insert(k).unwrap();
        s
    }

    fn is_entries_error(e: &SecError) -> bool {
        matches!(
            e,
            SecError::Malformed(gander_wire::Error::BadValue {
                what: "numDatSetEntries",
                ..
            })
        )
    }

    #[test]
    fn protect_refuses_a_count_that_differs() {
        let s = store();
        let key = s.require(5).unwrap();
        let p = Profile::Standard;
        assert!(protect(p, key, &frame(2), &mut RandomIv, NOW).is_ok());
        for n in [0, 1, 3] {
            let e = protect(p, key, &frame(n), &mut RandomIv, NOW).unwrap_err();
            assert!(is_entries_error(&e), "{n}: {e:?}");
        }
    }

    /// An authentic frame whose count differs (signed here without the check, as a publisher
    /// holding the key could) is refused as malformed: verification fails closed.
    #[test]
    fn verify_refuses_an_authentic_frame_whose_count_differs() {
        let s = store();
        let key = s.require(5).unwrap();
        let p = Profile::Standard;
        for (n, ok) in [(2, true), (3, false)] {
            let plain = frame(n);
            let (ethertype, layout) = l2_frame::locate(&plain).unwrap();
            let iv = [3u8; 12];
            let fields = ExtensionFields {
                key_id: 5,
                time_of_current_key: 0,
                time_to_next_key: -1,
                iv: Some(&iv),
                mac_len: 16,
            };
            let mut out = Vec::new();
            let at = l2_frame::emit_secured(
                &plain,
                ethertype,
                &layout,
                &fields,
                CrcByteOrder::HighFirst,
                &mut out,
            )
            .unwrap();
            let (head, tail) = out.split_at_mut(at.mac.start);
            key.mac_key()
                .unwrap()
                .sign(&iv, &head[at.covered.clone()], &mut tail[..16])
                .unwrap();
            let v = view::classify(p, &out).unwrap();
            match view::verify(p, &s, &v, NOW) {
                Ok(Judged::Verified(_)) => assert!(ok),
                Err(e) => assert!(!ok && is_entries_error(&e), "{e:?}"),
                Ok(Judged::Unsecured) => panic!("secured frame read as unsecured"),
            }
        }
    }
}
