//! [`verify`] of an R-GOOSE/R-SV session checks each payload element's APDU through a
//! borrowed [`ApduView`] and keeps only the first APDU's counters. It must give the verdict,
//! the error and the values that the owned parse gave when every APDU was decoded into a
//! [`GoosePdu`] / [`SavPdu`] (the code before, kept here as the reference: [`owned_verify`]),
//! on secured SPDUs whose elements are valid, damaged (one octet changed, cut short),
//! foreign (SV noise under a GOOSE SPDU and the reverse), of several APPIDs, or whose whole
//! payload is noise, under MAC-only and encrypting keys, with an APPID list on the key or
//! not, and with the secured SPDU itself damaged.

use super::*;
use crate::algorithm::MacAlgorithm;
use crate::keystore::KeyEntry;
use crate::spdu::{RandomIv, SendParams};
use gander_wire::data::Data;
use gander_wire::spdu::SpduPayload;
use gander_wire::Codec;
use proptest::prelude::*;
use std::net::SocketAddr;

const NOW: u64 = 1_767_225_600;

/// What the owned path reported of a verified session.
#[derive(Debug, PartialEq)]
struct OwnedSession {
    apdus: Vec<Apdu>,
    appid: u16,
    mixed_appids: bool,
    key_id: u32,
    st_sq: Option<(u32, u32)>,
    smp_cnt: Option<u16>,
}

/// The session verify as it was before the borrowed views: every element collected, each
/// APDU decoded into owned values ([`Apdu::of_element`]), in order.
fn owned_verify(
    profile: Profile,
    store: &KeyStore,
    view: &FrameView<'_>,
) -> Result<Option<OwnedSession>, SecError> {
    let Content::Session(s) = &view.content else {
        return Err(SecError::Unsupported("not a session"));
    };
    match spdu::verify_pdu(profile, store, s.pdu.clone(), NOW)? {
        spdu::Checked::Unsecured(_) => Ok(None),
        spdu::Checked::Verified(v) => {
            let key = store.require(v.protection().key_id)?;
            let si = v.header().spdu_id;
            let elements = v.elements()?;
            let Some(first) = elements.first().map(|e| e.appid) else {
                return Err(SecError::Malformed(gander_wire::Error::MissingField(
                    "payload element",
                )));
            };
            let mut apdus = Vec::with_capacity(elements.len());
            for e in &elements {
                key.check_appid(e.appid)?;
                apdus.push(Apdu::of_element(si, e)?);
            }
            let st_sq = match apdus.first() {
                Some(Apdu::Goose(g)) => Some((g.st_num, g.sq_num)),
                _ => None,
            };
            let smp_cnt = match apdus.first() {
                Some(Apdu::Sv(s)) => s.asdus.first().map(|a| a.smp_cnt),
                _ => None,
            };
            Ok(Some(OwnedSession {
                mixed_appids: elements.iter().any(|e| e.appid != first),
                apdus,
                appid: first,
                key_id: v.protection().key_id,
                st_sq,
                smp_cnt,
            }))
        }
    }
}

/// The borrowed path's result in the owned path's terms (the APDUs converted explicitly).
fn borrowed_verify(
    profile: Profile,
    store: &KeyStore,
    view: &FrameView<'_>,
) -> Result<Option<OwnedSession>, SecError> {
    match verify(profile, store, view, NOW)? {
        Judged::Unsecured => Ok(None),
        Judged::Verified(v) => {
            let Verified::Session { elements, .. } = &v else {
                return Err(SecError::Unsupported("a session verified as layer 2"));
            };
            let apdus = v
                .apdus()
                .map(|a| a.and_then(|a| a.to_apdu()))
                .collect::<Result<Vec<_>, _>>()?;
            assert_eq!(apdus.len(), *elements, "element count");
            Ok(Some(OwnedSession {
                apdus,
                appid: v.appid(),
                mixed_appids: v.mixed_appids(),
                key_id: v.key_id(),
                st_sq: v.st_sq(),
                smp_cnt: v.smp_cnt(),
            }))
        }
    }
}

fn goose_apdu(st: u32, entries: u32) -> Vec<u8> {
    GoosePdu {
        gocb_ref: "IED1LD0/LLN0$GO$gcb01".into(),
        time_allowed_to_live: 2000,
        dat_set: "IED1LD0/LLN0$DS1".into(),
        go_id: Some("IED1_gcb01".into()),
        t: [0x66, 0, 0, 0, 0, 0, 0, 0x0a],
        st_num: st,
        sq_num: 3,
        simulation: false,
        conf_rev: 1,
        nds_com: false,
        num_dat_set_entries: entries,
        all_data: vec![
            Data::Integer(5),
            Data::Boolean(true),
            Data::Structure(vec![Data::Integer(-3), Data::VisibleString("ab".into())]),
        ],
    }
    .to_vec()
}

/// A savPdu with one ASDU (IEC 61850-9-2 clause 8.6), smpCnt `cnt`.
fn sv_apdu(cnt: u16) -> Vec<u8> {
    use gander_wire::sv::{Asdu, SavPdu};
    SavPdu {
        security: None,
        asdus: vec![Asdu {
            sv_id: "MU01".into(),
            dat_set: None,
            smp_cnt: cnt,
            conf_rev: 1,
            refr_tm: None,
            smp_synch: 1,
            smp_rate: None,
            sample: vec![0; 16],
            smp_mod: None,
            gm_identity: None,
        }],
    }
    .to_vec()
}

fn keys() -> KeyStore {
    let p = crate::default_provider();
    let k16 = b"0123456789ABCDEF";
    let mut s = KeyStore::new();
    for entry in [
        KeyEntry::new(1, MacAlgorithm::HmacSha256_128, EncAlgorithm::None, k16, p),
        KeyEntry::new(2, MacAlgorithm::AesGmac128, EncAlgorithm::None, k16, p),
        KeyEntry::new(
            3,
            MacAlgorithm::HmacSha256_80,
            EncAlgorithm::Aes128Gcm,
            k16,
            p,
        ),
        KeyEntry::new(4, MacAlgorithm::HmacSha256_128, EncAlgorithm::None, k16, p)
            .map(|k| k.with_appids(Some(vec![0x10, 0x11]))),
    ] {
        s.insert(entry.expect("key")).expect("insert");
    }
    s
}

/// `spdu` as a UDP payload to port 102, classified.
/// The standard-profile SPDU (number 1, at [`NOW`]) carrying `els` under `key`.
fn protected(key: &KeyEntry, spdu_id: SpduId, els: &[PayloadElement<'_>]) -> Vec<u8> {
    let params = SendParams {
        spdu_id,
        spdu_number: 1,
        now: NOW,
    };
    let mut spdu = Vec::new();
    spdu::protect(
        Profile::Standard,
        key,
        params,
        els,
        &mut RandomIv,
        &mut spdu,
    )
    .expect("protect");
    spdu
}

fn classified<'a>(profile: Profile, spdu: &'a [u8]) -> Result<FrameView<'a>, SecError> {
    let src: SocketAddr = "10.0.0.1:102".parse().expect("addr");
    let dst: SocketAddr = "10.0.0.2:102".parse().expect("addr");
    classify_datagram(profile, src, dst, spdu)
}

/// One element's APDU, mostly of the kind the SPDU announces (`sv`): valid GOOSE
/// (numDatSetEntries right or wrong) or SV, either with one octet changed and cut short, the
/// other kind, or noise.
fn arb_apdu(sv: bool) -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![4 => Just(0u8), 2 => 1u8..=5],
        any::<u32>(),
        any::<prop::sample::Index>(),
        any::<u8>(),
        0usize..3,
        proptest::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(move |(which, n, at, x, cut, noise)| match which {
            0 if sv => sv_apdu(n as u16),
            0 | 1 => goose_apdu(n, if which == 0 { 3 } else { n % 5 }),
            2 => sv_apdu(n as u16),
            3 | 4 => {
                let mut g = if which == 3 {
                    goose_apdu(n, 3)
                } else {
                    sv_apdu(n as u16)
                };
                let i = at.index(g.len());
                g[i] ^= x;
                g.truncate(g.len() - cut);
                g
            }
            _ => noise,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// The borrowed session verify and the owned one agree: the same verdict, the same error,
    /// the same APDUs once converted, the same APPID, mixed-APPID flag, key and counters.
    #[test]
    fn borrowed_verify_agrees_with_owned(
        (si, apdus) in proptest::sample::select(vec![SpduId::Goose, SpduId::SampledValues, SpduId::Tunnelled])
            .prop_flat_map(|si| {
                let n = prop_oneof![1 => Just(0usize), 8 => 1usize..4];
                let apdus = n.prop_flat_map(move |n| {
                    proptest::collection::vec(arb_apdu(si == SpduId::SampledValues), n)
                });
                (Just(si), apdus)
            }),
        appids in proptest::collection::vec(
            prop_oneof![6 => Just(0x10u16), 1 => Just(0x11), 1 => Just(0x12)], 4),
        pt in proptest::option::weighted(0.2, proptest::sample::select(vec![0x81u8, 0x82, 0x83])),
        key_id in 1u32..=4,
        raw in proptest::option::weighted(0.1, proptest::collection::vec(any::<u8>(), 0..60)),
        flip in proptest::option::weighted(0.1, (any::<prop::sample::Index>(), 1u8..=255)),
        profile in proptest::sample::select(vec![Profile::Standard, Profile::Libiec61850]),
    ) {
        let store = keys();
        let key = store.require(key_id).expect("key");
        // Mostly the payload type the SPDU identifier announces, sometimes another.
        let pt = pt.unwrap_or(si.payload_type());
        let els: Vec<PayloadElement<'_>> = apdus
            .iter()
            .zip(&appids)
            .map(|(a, &appid)| PayloadElement { payload_type: pt, simulation: 0, appid, apdu: a })
            .collect();
        let payload = match &raw {
            Some(r) => SpduPayload::Encoded(r),
            None => SpduPayload::Elements(&els),
        };
        let params = SendParams { spdu_id: si, spdu_number: 9, now: NOW };
        let Ok(repr) = crate::spdu_emit::SecuredSpduRepr::new(profile, key, params, payload, &mut RandomIv) else {
            return Ok(());
        };
        let mut spdu = vec![0; repr.buffer_len()];
        if repr.emit(&mut spdu).is_err() {
            return Ok(());
        }
        if let Some((at, x)) = flip {
            let i = at.index(spdu.len());
            spdu[i] ^= x;
        }
        let Ok(view) = classified(profile, &spdu) else {
            return Ok(());
        };
        let owned = owned_verify(profile, &store, &view);
        let borrowed = borrowed_verify(profile, &store, &view);
        prop_assert_eq!(borrowed, owned);
    }
}

/// The property test above must see both outcomes; a fixed case of each, with the owned
/// values read back through the borrowed views.
#[test]
fn verified_session_reads_back_and_malformed_apdu_fails() {
    let store = keys();
    let key = store.require(1).expect("key");
    let good = goose_apdu(7, 3);
    let sv = sv_apdu(42);
    for (apdus, expect) in [
        (vec![&good[..]], Ok(Some((7, 3)))),
        (vec![&good[..], &good[..]], Ok(Some((7, 3)))),
        (vec![&sv[..]], Ok(None)),
    ] {
        let si = if apdus[0][0] == gander_wire::sv::TAG_SAV_PDU {
            SpduId::Tunnelled
        } else {
            SpduId::Goose
        };
        let els: Vec<_> = apdus
            .iter()
            .map(|a| PayloadElement {
                payload_type: 0x81,
                simulation: 0,
                appid: 0x10,
                apdu: a,
            })
            .collect();
        let spdu = protected(key, si, &els);
        let view = classified(Profile::Standard, &spdu).expect("classify");
        let got =
            borrowed_verify(Profile::Standard, &store, &view).map(|s| s.and_then(|s| s.st_sq));
        let expect: Result<Option<(u32, u32)>, SecError> = expect;
        assert_eq!(got, expect);
        assert_eq!(
            borrowed_verify(Profile::Standard, &store, &view),
            owned_verify(Profile::Standard, &store, &view)
        );
    }
    // numDatSetEntries 2 for 3 values: authentic, and dropped as malformed.
    let wrong = goose_apdu(7, 2);
    let el = PayloadElement {
        payload_type: 0x81,
        simulation: 0,
        appid: 0x10,
        apdu: &wrong,
    };
    let spdu = protected(key, SpduId::Goose, &[el]);
    let view = classified(Profile::Standard, &spdu).expect("classify");
    assert!(matches!(
        verify(Profile::Standard, &store, &view, NOW),
        Err(SecError::Malformed(gander_wire::Error::BadValue {
            what: "numDatSetEntries",
            ..
        }))
    ));
}
