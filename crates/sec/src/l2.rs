//! IEC 62351-6 security for layer-2 GOOSE (IEC 61850-8-1): the security extension after the
//! APDU, the header CRC in Reserved2, and a MAC or digital signature over EtherType .. end of
//! AuthenticationValue.
//!
//! Coverage was confirmed on libiec61850's development encoder (`goose_sec.c`, the synthetic
//! frame in the reference notes): HMAC-SHA256-128 over bytes 12..205 of that frame, i.e. from the
//! EtherType through the end of the `A4` element. Layer 2 carries no encryption in IEC 62351-6,
//! so a key with `enc` set is refused here.
//!
//! Profiles differ only in Reserved2, the CRC-16/X-25 (RFC 1662 FCS) of EtherType..Reserved1 as
//! emitted: `standard` writes it big-endian like every other IEC 61850-8-1 header field;
//! `libiec61850` writes it low byte first, as its development publisher does (RFC 1662's
//! transmission order). Each profile checks its own order on receipt.

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::error::SecError;
use crate::frame::{Kind, Outcome, Verdict};
use crate::keystore::{KeyEntry, KeyStore};
use crate::profile::Profile;
use crate::session::IvSource;
use gander_wire::ethernet::EthernetRepr;
use gander_wire::goose::GoosePdu;
use gander_wire::goose_frame::{GooseFrameRepr, L2Frame};
use gander_wire::l2_security::{CrcByteOrder, SecurityExtension};

fn crc_order(profile: Profile) -> CrcByteOrder {
    match profile {
        Profile::Libiec61850 => CrcByteOrder::LowFirst,
        _ => CrcByteOrder::HighFirst,
    }
}

/// What authenticates an L2 frame under a key: a MAC, or a signature.
fn auth_len(key: &KeyEntry) -> Result<usize, SecError> {
    if key.enc != EncAlgorithm::None {
        return Err(SecError::Unsupported(
            "IEC 62351-6 layer-2 GOOSE carries a MAC or signature, not encryption",
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

/// Adds the security extension to an unsecured GOOSE frame (a whole Ethernet frame).
pub fn protect(
    profile: Profile,
    key: &KeyEntry,
    frame: &[u8],
    ivs: &mut dyn IvSource,
    now: u64,
) -> Result<Vec<u8>, SecError> {
    key.check_valid_at(now)?;
    let tag_len = auth_len(key)?;
    let (mut l2, layout) = L2Frame::parse(frame)?;
    if let Some(ext) = &l2.body.extension {
        let id = SecurityExtension::parse(ext).map(|e| e.key_id).unwrap_or(0);
        return Err(SecError::AlreadySecured(id));
    }
    let iv = if key.signature.is_none() && key.mac.needs_iv() {
        Some(ivs.next_iv().to_vec())
    } else {
        None
    };
    let ext = SecurityExtension::with_placeholder_mac(
        key.id,
        key.time_of_current_key() as i64,
        key.time_to_next_key(now) as i64,
        iv.clone(),
        tag_len,
    );
    let ext_layout = ext.layout();
    l2.body.extension = Some(ext.to_vec());
    l2.body
        .set_security_fields(l2.eth.ethertype, crc_order(profile))?;
    let mut out = l2.to_vec()?;
    let ext_start = layout.apdu.end;
    let covered = layout.ethertype_offset..ext_start + ext_layout.auth_value.end;
    let mac_at = ext_start + ext_layout.mac.start..ext_start + ext_layout.mac.end;
    let tag = if let Some(s) = &key.signature {
        let signer = s
            .signing
            .as_ref()
            .ok_or(SecError::Unsupported("no private key"))?;
        let sig = signer.sign(&out[covered])?;
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
        sig
    } else {
        let mk = key
            .mac_key()
            .ok_or(SecError::Unsupported("key has no MAC"))?;
        let mut t = vec![0u8; tag_len];
        mk.sign(iv.as_deref().unwrap_or(&[]), &out[covered], &mut t)?;
        t
    };
    out[mac_at].copy_from_slice(&tag);
    Ok(out)
}

/// A GOOSE frame whose extension verified under a known, valid key.
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

/// Verifies one layer-2 GOOSE frame statelessly.
pub fn verify(
    profile: Profile,
    store: &KeyStore,
    frame: &[u8],
    now: u64,
) -> Result<CheckedGoose, SecError> {
    let (l2, layout) = L2Frame::parse(frame)?;
    let (Some(ext_bytes), Some(ext_range)) = (&l2.body.extension, &layout.extension) else {
        return Ok(CheckedGoose::Unsecured(l2));
    };
    let (ext, ext_layout) = SecurityExtension::parse_with_layout(ext_bytes)?;
    if l2.crc_order() != Some(crc_order(profile)) {
        return Err(SecError::Malformed(gander_wire::Error::BadChecksum {
            what: "IEC 62351-6 header CRC",
            computed: 0,
            found: l2.body.reserved2,
        }));
    }
    let key = store.require(ext.key_id)?;
    key.check_valid_at(now)?;
    let covered = &frame[layout.ethertype_offset..ext_range.start + ext_layout.auth_value.end];
    if let Some(s) = &key.signature {
        let sig = if s.algorithm == crate::signature::SignatureAlgorithm::EcdsaP256Sha256 {
            crate::signature::ecdsa_raw_to_der(&ext.mac).map_err(|_| SecError::BadMac)?
        } else {
            ext.mac.clone()
        };
        s.verifying
            .verify(covered, &sig)
            .map_err(|_| SecError::BadMac)?;
    } else {
        let mk = key
            .mac_key()
            .ok_or(SecError::Unsupported("key has no MAC"))?;
        if ext.mac.len() != key.mac.tag_len() {
            return Err(SecError::BadMac);
        }
        let iv: &[u8] = if key.mac.needs_iv() {
            match &ext.iv {
                Some(iv) if iv.len() == 12 => iv,
                other => return Err(SecError::BadIv(other.as_ref().map_or(0, Vec::len))),
            }
        } else {
            &[]
        };
        mk.verify(iv, covered, &ext.mac)
            .map_err(|_| SecError::BadMac)?;
    }
    GoosePdu::parse(&l2.body.apdu)?;
    Ok(CheckedGoose::Verified(VerifiedGoose {
        eth: l2.eth,
        body: l2.body,
        extension: ext,
    }))
}

/// What the caller's GOOSE replay check needs of a verified frame: source MAC, APPID, stNum, sqNum.
pub(crate) type GooseSequenceKey = ([u8; 6], u16, u32, u32);

/// A verdict for `gander frame verify` (GOOSE replay rules are applied by the caller).
pub(crate) fn verdict(
    profile: Profile,
    store: &KeyStore,
    frame: &[u8],
    now: u64,
) -> (Verdict, Option<GooseSequenceKey>) {
    let mut v = Verdict::new(Kind::Goose, Outcome::Skipped);
    let mut seq = None;
    match verify(profile, store, frame, now) {
        Ok(CheckedGoose::Verified(g)) => {
            v.outcome = Outcome::Verified;
            v.key_id = Some(g.extension.key_id);
            v.appid = Some(g.body.appid);
            if let Ok(p) = GoosePdu::parse(&g.body.apdu) {
                v.st_sq = Some((p.st_num, p.sq_num));
                seq = Some((g.eth.src, g.body.appid, p.st_num, p.sq_num));
            }
            if let Ok(k) = store.require(g.extension.key_id) {
                v.algorithms = Some(match &k.signature {
                    Some(s) => (s.algorithm.name(), "none"),
                    None => (k.mac.name(), "none"),
                });
            }
        }
        Ok(CheckedGoose::Unsecured(l2)) => {
            v.outcome = Outcome::Unsecured;
            v.appid = Some(l2.body.appid);
            v.st_sq = GoosePdu::parse(&l2.body.apdu)
                .ok()
                .map(|p| (p.st_num, p.sq_num));
        }
        Err(e) => {
            if let Ok((l2, _)) = L2Frame::parse(frame) {
                v.key_id = l2
                    .body
                    .extension
                    .as_deref()
                    .and_then(|e| SecurityExtension::parse(e).ok())
                    .map(|e| e.key_id);
            }
            v.outcome = Outcome::Failed(e);
        }
    }
    (v, seq)
}
