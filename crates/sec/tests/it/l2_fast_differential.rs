//! Differential tests of the layer-2 fast path (`l2::protect_into` on the frame bytes,
//! `view::verify` with borrowed views) against the full-decode path it replaced, kept here as
//! the reference: parse the frame into owned structures, decode the whole APDU, rebuild the
//! body with `set_security_fields` + `emit`, MAC it; on receipt decode the extension and the
//! whole APDU. For GOOSE and SV, HMAC, GMAC and the Ascon MAC, valid frames and frames with one
//! octet changed or cut short, the two give the same bytes, the same verdict and the same error,
//! also for an authentic frame whose allData holds a malformed value (both refuse it).
//! `l2::protect_view_into` (protect from the classification) gives the same bytes and errors.

use gander_sec::nonce::NonceFields;
use gander_sec::spdu::IvSource;
use gander_sec::view::{self, Judged, Verified};
use gander_sec::{
    default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile, SecError,
};
use gander_wire::data::Data;
use gander_wire::ethernet::{EthernetRepr, VlanTag, ETHERTYPE_GOOSE, ETHERTYPE_SV};
use gander_wire::goose::GoosePdu;
use gander_wire::l2_extension::{CrcByteOrder, SecurityExtension};
use gander_wire::l2_frame::{GooseFrameRepr, L2Frame};
use gander_wire::sv::{Asdu, SavPdu};
use gander_wire::Codec;
use proptest::prelude::*;

/// Deterministic IVs and nonces, so that two runs over the same frames can be compared.
#[derive(Clone)]
struct CountingIv(u64);

impl IvSource for CountingIv {
    fn next_iv(&mut self) -> [u8; 12] {
        self.0 += 1;
        let mut iv = [0u8; 12];
        iv[4..].copy_from_slice(&self.0.to_be_bytes());
        iv
    }

    fn next_nonce128(
        &mut self,
        fields: NonceFields,
    ) -> Result<[u8; 16], gander_sec::nonce::NonceError> {
        self.0 += 1;
        let mut n = [0u8; 16];
        n[..4].copy_from_slice(&fields.a.to_be_bytes());
        n[4..8].copy_from_slice(&fields.b.to_be_bytes());
        n[8..].copy_from_slice(&self.0.to_be_bytes());
        Ok(n)
    }
}

fn crc_order(profile: Profile) -> CrcByteOrder {
    match profile {
        Profile::Libiec61850 => CrcByteOrder::LowFirst,
        _ => CrcByteOrder::HighFirst,
    }
}

fn sav_first(apdu: &[u8]) -> Result<SavPdu, SecError> {
    let p = SavPdu::parse(apdu)?;
    if p.asdus.is_empty() {
        return Err(SecError::Malformed(gander_wire::Error::MissingField(
            "ASDU",
        )));
    }
    Ok(p)
}

/// The protect path before the fast one (MAC keys only), step for step.
fn reference_protect(
    profile: Profile,
    key: &KeyEntry,
    frame: &[u8],
    ivs: &mut dyn IvSource,
    now: u64,
) -> Result<Vec<u8>, SecError> {
    key.check_valid_at(now)?;
    profile.check_algorithms(key.mac, key.enc)?;
    let tag_len = key.mac.tag_len();
    let (mut l2, layout) = L2Frame::parse(frame)?;
    if let Some(ext) = &l2.body.extension {
        let id = SecurityExtension::parse(ext).map(|e| e.key_id).unwrap_or(0);
        return Err(SecError::AlreadySecured(id));
    }
    let (st, sq) = if l2.eth.ethertype == ETHERTYPE_SV {
        let sav = sav_first(&l2.body.apdu)?;
        (0, u32::from(sav.asdus[0].smp_cnt))
    } else {
        let g = GoosePdu::parse(&l2.body.apdu)?;
        (g.st_num, g.sq_num)
    };
    let iv = match key.mac.iv_len() {
        0 => None,
        16 => Some(ivs.next_nonce128(NonceFields { a: st, b: sq })?.to_vec()),
        _ => Some(ivs.next_iv().to_vec()),
    };
    let ext = SecurityExtension::with_placeholder_mac(
        key.id,
        key.time_of_current_key() as i64,
        key.time_to_next_key(now) as i64,
        iv.clone(),
        tag_len,
    );
    key.check_appid(l2.body.appid)?;
    l2.body.extension = Some(ext.to_vec());
    l2.body
        .set_security_fields(l2.eth.ethertype, crc_order(profile))?;
    let mut out = frame[..layout.header_offset].to_vec();
    out.resize(layout.header_offset + l2.body.buffer_len(), 0);
    l2.body.emit(&mut out[layout.header_offset..])?;
    let start = layout.apdu.end;
    let covered = layout.ethertype_offset..start + ext.layout().auth_value.end;
    let mut t = vec![0u8; tag_len];
    key.mac_key()
        .ok_or(SecError::Unsupported("key has no MAC"))?
        .sign(iv.as_deref().unwrap_or(&[]), &out[covered], &mut t)?;
    out[start + ext.layout().mac.start..start + ext.layout().mac.end].copy_from_slice(&t);
    Ok(out)
}

/// What a verified frame reports to the replay check, comparable across the two paths.
#[derive(Debug, PartialEq)]
enum Seen {
    Unsecured,
    Goose {
        key_id: u32,
        appid: u16,
        gocb_ref: String,
        st: u32,
        sq: u32,
        extension: SecurityExtension,
    },
    Sv {
        key_id: u32,
        appid: u16,
        sv_id: String,
        smp_cnt: u16,
        extension: SecurityExtension,
    },
}

/// The verify path before the fast one (MAC keys only): classify, then decode the extension
/// and the whole APDU.
fn reference_verify(
    profile: Profile,
    store: &KeyStore,
    frame: &[u8],
    now: u64,
) -> Result<Seen, SecError> {
    let v = view::classify(profile, frame)?;
    let view::Content::L2(l) = &v.content else {
        return Err(SecError::Unsupported("not layer 2"));
    };
    let Some(ext_range) = l.extension.clone() else {
        return Ok(Seen::Unsecured);
    };
    // GSE management (EtherType 0x88B9) has no IEC 62351-6 security: a secured one is refused
    // as such before anything in it is read. A secured SV frame whose EtherType octet 13 was
    // flipped from 0xBA to 0xB9 is one (proptest found the reference checking the CRC first).
    if l.ethertype == gander_wire::ethernet::ETHERTYPE_GSE_MANAGEMENT {
        return Err(SecError::Unsupported(
            "IEC 62351-6 defines no security for GSE management",
        ));
    }
    let (ext, el) = SecurityExtension::parse_with_layout(&frame[ext_range.clone()])?;
    let crc = gander_wire::l2_extension::header_crc(l.ethertype, l.appid, l.length(), l.reserved1);
    if l.reserved2 != crc_order(profile).reserved2(crc) {
        return Err(SecError::Malformed(gander_wire::Error::BadChecksum {
            what: "IEC 62351-6 header CRC",
            computed: crc,
            found: l.reserved2,
        }));
    }
    let key = store.require(ext.key_id)?;
    key.check_valid_at(now)?;
    profile.check_algorithms(key.mac, key.enc)?;
    let covered = &frame[l.header_offset - 2..ext_range.start + el.auth_value.end];
    let mk = key
        .mac_key()
        .ok_or(SecError::Unsupported("key has no MAC"))?;
    if ext.mac.len() != key.mac.tag_len() {
        return Err(SecError::BadMac);
    }
    let iv: &[u8] = if key.mac.needs_iv() {
        match &ext.iv {
            Some(iv) if iv.len() == key.mac.iv_len() => iv,
            other => return Err(SecError::BadIv(other.as_ref().map_or(0, Vec::len))),
        }
    } else {
        &[]
    };
    mk.verify(iv, covered, &ext.mac)
        .map_err(|_| SecError::BadMac)?;
    key.check_appid(l.appid)?;
    let apdu = &frame[l.apdu.clone()];
    if l.ethertype == ETHERTYPE_SV {
        let p = sav_first(apdu)?;
        return Ok(Seen::Sv {
            key_id: ext.key_id,
            appid: l.appid,
            sv_id: p.asdus[0].sv_id.clone(),
            smp_cnt: p.asdus[0].smp_cnt,
            extension: ext,
        });
    }
    let g = GoosePdu::parse(apdu)?;
    Ok(Seen::Goose {
        key_id: ext.key_id,
        appid: l.appid,
        gocb_ref: g.gocb_ref,
        st: g.st_num,
        sq: g.sq_num,
        extension: ext,
    })
}

/// The fast path's verdict in the same terms.
fn fast_verify(
    profile: Profile,
    store: &KeyStore,
    frame: &[u8],
    now: u64,
) -> Result<Seen, SecError> {
    let v = view::classify(profile, frame)?;
    if !matches!(v.content, view::Content::L2(_)) {
        return Err(SecError::Unsupported("not layer 2"));
    }
    Ok(match view::verify(profile, store, &v, now)? {
        Judged::Unsecured => Seen::Unsecured,
        Judged::Verified(Verified::Goose {
            key_id,
            appid,
            extension,
            apdu,
            ..
        }) => Seen::Goose {
            key_id,
            appid,
            gocb_ref: apdu.gocb_ref.as_str().to_owned(),
            st: apdu.st_num,
            sq: apdu.sq_num,
            extension: extension.to_extension(),
        },
        Judged::Verified(Verified::Sv {
            key_id,
            appid,
            extension,
            apdu,
            ..
        }) => {
            let first = apdu.first.expect("verify refuses a savPdu without ASDUs");
            Seen::Sv {
                key_id,
                appid,
                sv_id: first.sv_id.to_owned(),
                smp_cnt: first.smp_cnt,
                extension: extension.to_extension(),
            }
        }
        Judged::Verified(other) => panic!("layer-2 frame verified as {other:?}"),
    })
}

/// The keys the comparison runs under, each with a profile that allows it.
fn keyed() -> Vec<(Profile, KeyStore)> {
    let mk = |mac, len| {
        let mut s = KeyStore::new();
        s.insert(
            KeyEntry::new(
                5,
                mac,
                EncAlgorithm::None,
                &vec![0x3c; len],
                default_provider(),
            )
            .unwrap(),
        )
        .unwrap();
        s
    };
    vec![
        (Profile::Standard, mk(MacAlgorithm::HmacSha256_128, 32)),
        (Profile::Libiec61850, mk(MacAlgorithm::HmacSha256_128, 32)),
        (Profile::Standard, mk(MacAlgorithm::AesGmac128, 16)),
        (Profile::Experimental, mk(MacAlgorithm::AsconAead128Mac, 16)),
    ]
}

fn eth(ethertype: u16, vlan: Option<u16>) -> EthernetRepr {
    EthernetRepr {
        dst: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x07],
        src: [0x02, 0, 0, 0, 0, 0x07],
        vlan: vlan.map(|vid| VlanTag {
            pcp: 4,
            dei: false,
            vid,
        }),
        ethertype,
    }
}

fn frame(ethertype: u16, vlan: Option<u16>, appid: u16, sim: bool, apdu: Vec<u8>) -> Vec<u8> {
    L2Frame {
        eth: eth(ethertype, vlan),
        body: GooseFrameRepr {
            appid,
            reserved1: if sim { 0x8000 } else { 0 },
            reserved2: 0,
            apdu,
            extension: None,
        },
    }
    .to_vec()
    .unwrap()
}

fn goose_apdu(gocb: &str, st: u32, sq: u32, values: &[i64]) -> Vec<u8> {
    GoosePdu {
        gocb_ref: gocb.into(),
        time_allowed_to_live: 2000,
        dat_set: "LD0/LLN0$ds".into(),
        go_id: Some("goid".into()),
        t: [0; 8],
        st_num: st,
        sq_num: sq,
        simulation: false,
        conf_rev: 1,
        nds_com: false,
        num_dat_set_entries: values.len() as u32,
        all_data: values.iter().map(|&v| Data::Integer(v)).collect(),
    }
    .to_vec()
}

fn sv_apdu(sv_id: &str, smp_cnt: u16) -> Vec<u8> {
    SavPdu {
        security: None,
        asdus: vec![Asdu {
            sv_id: sv_id.into(),
            dat_set: None,
            smp_cnt,
            conf_rev: 1,
            refr_tm: None,
            smp_synch: 1,
            smp_rate: Some(4000),
            sample: vec![0x11; 32],
            smp_mod: Some(1),
            gm_identity: None,
        }],
    }
    .to_vec()
}

/// Runs both paths on one unsecured frame and its secured form under every key, and on the
/// secured form with octet `flip` xor-ed with `x` and cut to `cut` octets.
fn compare(plain: &[u8], valid: bool, flip: usize, x: u8, cut: usize) -> Result<(), TestCaseError> {
    for (profile, store) in keyed() {
        let key = store.require(5).unwrap();
        let mut ivs = CountingIv(7);
        let old = reference_protect(profile, key, plain, &mut ivs.clone(), 0);
        let mut out = vec![0xee; 5];
        let new = gander_sec::l2::protect_into(profile, key, plain, &mut ivs, 0, &mut out);
        prop_assert_eq!(new.as_ref().map(|_| &out), old.as_ref());
        // Protect from the classification (what the gateway runs): the same bytes, the same
        // error for a frame that classifies.
        if let Ok(v) = view::classify(profile, plain) {
            if let view::Content::L2(l) = &v.content {
                let mut out2 = vec![0xee; 3];
                let from_view = gander_sec::l2::protect_view_into(
                    profile,
                    key,
                    plain,
                    l,
                    &mut CountingIv(7),
                    0,
                    &mut out2,
                );
                prop_assert_eq!(from_view.as_ref().map(|_| &out2), old.as_ref());
            }
        }
        prop_assert_eq!(
            fast_verify(profile, &store, plain, 0),
            reference_verify(profile, &store, plain, 0)
        );
        prop_assert_eq!(old.is_ok(), valid, "{:?}", old);
        let Ok(secured) = old else { continue };
        let got = fast_verify(profile, &store, &secured, 0);
        prop_assert!(
            matches!(got, Ok(Seen::Goose { .. } | Seen::Sv { .. })),
            "{:?}",
            got
        );
        prop_assert_eq!(got, reference_verify(profile, &store, &secured, 0));
        // Protecting a secured frame is refused the same way.
        prop_assert_eq!(
            gander_sec::l2::protect(profile, key, &secured, &mut CountingIv(1), 0).map(|_| ()),
            reference_protect(profile, key, &secured, &mut CountingIv(1), 0).map(|_| ())
        );
        let mut bad = secured.clone();
        let i = flip % bad.len();
        bad[i] ^= x;
        prop_assert_eq!(
            fast_verify(profile, &store, &bad, 0),
            reference_verify(profile, &store, &bad, 0),
            "octet {} ^ {:#x}",
            i,
            x
        );
        let short = &secured[..cut % secured.len()];
        prop_assert_eq!(
            fast_verify(profile, &store, short, 0),
            reference_verify(profile, &store, short, 0)
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn goose_fast_path_equals_full_decode(
        gocb in "[ -~]{0,60}", st: u32, sq: u32,
        values in proptest::collection::vec(any::<i64>(), 0..20),
        appid: u16, sim: bool, vlan in proptest::option::of(0u16..4095),
        flip: usize, x in 1u8.., cut: usize,
    ) {
        let plain = frame(ETHERTYPE_GOOSE, vlan, appid, sim, goose_apdu(&gocb, st, sq, &values));
        compare(&plain, true, flip, x, cut)?;
    }

    #[test]
    fn sv_fast_path_equals_full_decode(
        sv_id in "[ -~]{0,40}", smp: u16, appid: u16, sim: bool,
        vlan in proptest::option::of(0u16..4095), flip: usize, x in 1u8.., cut: usize,
    ) {
        let plain = frame(ETHERTYPE_SV, vlan, appid, sim, sv_apdu(&sv_id, smp));
        compare(&plain, true, flip, x, cut)?;
    }

    /// Malformed APDUs are refused by protect with the full decoder's error.
    #[test]
    fn malformed_apdus_are_refused_alike(
        body in proptest::collection::vec(any::<u8>(), 0..80), sv: bool,
    ) {
        let tag = if sv { 0x60 } else { 0x61 };
        let mut apdu = Vec::new();
        gander_wire::ber_sink::tlv(&mut apdu, tag, &body);
        let et = if sv { ETHERTYPE_SV } else { ETHERTYPE_GOOSE };
        let valid = if sv { SavPdu::parse(&apdu).is_ok_and(|p| !p.asdus.is_empty()) } else { GoosePdu::parse(&apdu).is_ok() };
        compare(&frame(et, None, 1, false, apdu), valid, 0, 1, 0)?;
    }
}

/// An authentic frame (its MAC verifies) whose allData holds a malformed `Data` value (a
/// BOOLEAN of two octets) is refused as malformed by both paths: verification fails closed on
/// what the IED's decoder would choke on.
#[test]
fn malformed_all_data_is_refused_even_when_authentic() {
    let (profile, store) = keyed().remove(0);
    let key = store.require(5).unwrap();
    let good = goose_apdu("LD0/LLN0$GO$gcb", 3, 4, &[1]);
    // allData `ab 03 85 01 01` -> `ab 04 83 02 01 01`: a boolean with two octets.
    let mut pdu = GoosePdu::parse(&good).unwrap();
    pdu.all_data.clear();
    let mut apdu_body = pdu.to_vec()[2..].to_vec();
    let at = apdu_body.len() - 2;
    apdu_body.truncate(at);
    apdu_body.extend_from_slice(&[0xab, 0x04, 0x83, 0x02, 0x01, 0x01]);
    let mut apdu = Vec::new();
    gander_wire::ber_sink::tlv(&mut apdu, 0x61, &apdu_body);
    assert!(GoosePdu::parse(&apdu).is_err());
    let plain = frame(ETHERTYPE_GOOSE, None, 9, false, apdu);
    // Secure it as a key holder would, without protect's APDU check.
    let (et, layout) = gander_wire::l2_frame::locate(&plain).unwrap();
    let fields = gander_wire::l2_extension::ExtensionFields {
        key_id: 5,
        time_of_current_key: 0,
        time_to_next_key: -1,
        iv: None,
        mac_len: 16,
    };
    let mut out = Vec::new();
    let at = gander_wire::l2_frame::emit_secured(
        &plain,
        et,
        &layout,
        &fields,
        CrcByteOrder::HighFirst,
        &mut out,
    )
    .unwrap();
    let (head, tail) = out.split_at_mut(at.mac.start);
    key.mac_key()
        .unwrap()
        .sign(&[], &head[at.covered.clone()], &mut tail[..16])
        .unwrap();
    assert!(matches!(
        reference_verify(profile, &store, &out, 0),
        Err(SecError::Malformed(gander_wire::Error::BadLength { .. }))
    ));
    let v = view::classify(profile, &out).unwrap();
    assert!(matches!(
        view::verify(profile, &store, &v, 0),
        Err(SecError::Malformed(gander_wire::Error::BadLength { .. }))
    ));
    // protect decodes the whole APDU too, so it refuses to secure this frame.
    assert!(gander_sec::l2::protect(profile, key, &plain, &mut CountingIv(0), 0).is_err());
}
