//! Layer-2 SV (IEC 61850-9-2) with the IEC 62351-6 extension: libiec61850 1.6.1's SV frame
//! (provenance: `tests/vectors/golden_frames.txt`, record `lib-sv-9-2-unsecured`) is protected
//! with MACs and signatures, verifies, fails on any flipped bit, strips back to the publisher's
//! bytes, and the capture verifier refuses replays of it by smpCnt and the capture clock.

use crate::frames;

use gander_sec::frame::{CaptureVerifier, Outcome};
use gander_sec::keystore::SignatureKeys;
use gander_sec::l2::{protect, verify, CheckedGoose};
use gander_sec::signature::{SignatureAlgorithm, SigningKey};
use gander_sec::spdu::RandomIv;
use gander_sec::{
    default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile, ReplayKind, SecError,
};
use gander_wire::l2_frame::L2Frame;
use gander_wire::sv::SavPdu;

fn lib_sv() -> Vec<u8> {
    frames::get("lib-sv-9-2-unsecured").frame()
}

/// libiec61850's frame with another smpCnt (the ASDU's smpCnt octets are at a fixed place in
/// this frame: after `82 02`).
fn lib_sv_at(smp: u16) -> Vec<u8> {
    let mut f = lib_sv();
    let at = f
        .windows(2)
        .position(|w| w == [0x82, 0x02])
        .expect("smpCnt")
        + 2;
    f[at..at + 2].copy_from_slice(&smp.to_be_bytes());
    f
}

fn store(entry: KeyEntry) -> KeyStore {
    let mut s = KeyStore::new();
    s.insert(entry).unwrap();
    s
}

fn mac_store(mac: MacAlgorithm, key: &[u8]) -> KeyStore {
    store(KeyEntry::new(3, mac, EncAlgorithm::None, key, default_provider()).unwrap())
}

#[test]
fn libiec61850_sv_frame_reads_as_9_2() {
    let (f, layout) = L2Frame::parse(&lib_sv()).unwrap();
    assert_eq!(f.eth.ethertype, 0x88ba);
    assert_eq!(f.body.appid, 0x4000);
    assert!(f.body.extension.is_none());
    assert_eq!(layout.end, lib_sv().len());
    let p = SavPdu::parse(&f.body.apdu).unwrap();
    assert_eq!(p.asdus.len(), 1);
    assert_eq!(p.asdus[0].sv_id, "GANDERMU01");
    assert_eq!(p.asdus[0].smp_cnt, 0);
    assert_eq!(p.asdus[0].sample.len(), 32);
    assert_eq!(&p.asdus[0].sample[..4], &1000i32.to_be_bytes());
}

#[test]
fn macs_round_trip_strip_and_fail_on_flips() {
    let plain = lib_sv();
    for (mac, key) in [
        (MacAlgorithm::HmacSha256_80, vec![7u8; 32]),
        (MacAlgorithm::HmacSha256_128, b"0123456789ABCDEF".to_vec()),
        (MacAlgorithm::HmacSha256_256, vec![7u8; 32]),
        (MacAlgorithm::AesGmac128, vec![7u8; 32]),
    ] {
        let s = mac_store(mac, &key);
        for profile in [Profile::Standard, Profile::Libiec61850] {
            let out = protect(profile, s.require(3).unwrap(), &plain, &mut RandomIv, 0).unwrap();
            // Still SV, same APDU, Reserved1 announces the extension.
            let (f, _) = L2Frame::parse(&out).unwrap();
            assert_eq!(f.eth.ethertype, 0x88ba);
            assert_eq!(
                f.body.reserved1 as usize,
                f.body.extension.as_ref().unwrap().len()
            );
            let CheckedGoose::Verified(v) = verify(profile, &s, &out, 0).unwrap() else {
                panic!("{mac} {profile:?}: not verified")
            };
            assert_eq!(v.extension.key_id, 3);
            // Removing the extension and resetting Reserved1/2 gives libiec61850's bytes back.
            let mut body = v.body.clone();
            body.extension = None;
            body.reserved1 = 0;
            body.reserved2 = 0;
            let back = L2Frame { eth: v.eth, body }.to_vec().unwrap();
            assert_eq!(back, plain);
            for i in 12 * 8..out.len() * 8 {
                let mut bad = out.clone();
                bad[i / 8] ^= 1 << (i % 8);
                assert!(
                    !matches!(verify(profile, &s, &bad, 0), Ok(CheckedGoose::Verified(_))),
                    "{mac} bit {i}"
                );
            }
            assert!(matches!(
                protect(profile, s.require(3).unwrap(), &out, &mut RandomIv, 0),
                Err(SecError::AlreadySecured(3))
            ));
        }
    }
}

#[test]
fn signatures_round_trip() {
    for alg in [
        SignatureAlgorithm::EcdsaP256Sha256,
        SignatureAlgorithm::Ed25519,
    ] {
        let sk = SigningKey::generate(alg, 0).unwrap();
        let vk = sk.verifying_key().unwrap();
        let publisher = store(KeyEntry::signature_only(
            4,
            SignatureKeys {
                algorithm: alg,
                signing: Some(sk),
                verifying: vk.clone(),
            },
        ));
        let subscriber = store(KeyEntry::signature_only(
            4,
            SignatureKeys {
                algorithm: alg,
                signing: None,
                verifying: vk,
            },
        ));
        let out = protect(
            Profile::Standard,
            publisher.require(4).unwrap(),
            &lib_sv(),
            &mut RandomIv,
            0,
        )
        .unwrap();
        assert!(matches!(
            verify(Profile::Standard, &subscriber, &out, 0),
            Ok(CheckedGoose::Verified(_))
        ));
        let mut bad = out.clone();
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert!(verify(Profile::Standard, &subscriber, &bad, 0).is_err());
    }
}

#[test]
fn encryption_keys_and_empty_savpdus_are_refused() {
    let gcm = store(
        KeyEntry::new(
            5,
            MacAlgorithm::None,
            EncAlgorithm::Aes128Gcm,
            &[1; 16],
            default_provider(),
        )
        .unwrap(),
    );
    assert!(matches!(
        protect(
            Profile::Standard,
            gcm.require(5).unwrap(),
            &lib_sv(),
            &mut RandomIv,
            0
        ),
        Err(SecError::Unsupported(_))
    ));
    // A savPdu with noASDU 0 and no ASDU names no stream: refused before protection.
    let mut f = lib_sv();
    f.truncate(14 + 8);
    f.extend_from_slice(&[0x60, 0x05, 0x80, 0x01, 0x00, 0xa2, 0x00]);
    let len = (f.len() - 14) as u16;
    f[16..18].copy_from_slice(&len.to_be_bytes());
    let s = mac_store(MacAlgorithm::HmacSha256_128, &[7; 32]);
    assert!(matches!(
        protect(
            Profile::Standard,
            s.require(3).unwrap(),
            &f,
            &mut RandomIv,
            0
        ),
        Err(SecError::Malformed(_))
    ));
}

#[test]
fn capture_verifier_refuses_sv_replays_by_smpcnt_and_clock() {
    let s = mac_store(MacAlgorithm::HmacSha256_128, &[7; 32]);
    let key = s.require(3).unwrap();
    let sec = |smp| protect(Profile::Standard, key, &lib_sv_at(smp), &mut RandomIv, 0).unwrap();
    let mut v = CaptureVerifier::new(Profile::Standard, &s);
    let period = 1_000_000_000 / 4800;
    for (i, smp) in (4797..4800).chain(0..3).enumerate() {
        let verdict = v.verify_at(&sec(smp), 0, i as u64 * period);
        assert_eq!(verdict.outcome, Outcome::Verified, "smpCnt {smp}");
        assert_eq!(verdict.smp_cnt, Some(smp));
        assert_eq!(verdict.appid, Some(0x4000));
    }
    let t = 6 * period;
    let replay = |v: &mut CaptureVerifier<'_>, smp| match v.verify_at(&sec(smp), 0, t).outcome {
        Outcome::Failed(SecError::Replay { kind, .. }) => Some(kind),
        _ => None,
    };
    assert_eq!(replay(&mut v, 2), Some(ReplayKind::Duplicate));
    assert_eq!(replay(&mut v, 4798), Some(ReplayKind::NotNewer));
    // The frame a turn earlier with smpCnt 500 is 497 samples ahead of a clock that allows ~50.
    assert_eq!(replay(&mut v, 500), Some(ReplayKind::AheadOfClock));
    assert_eq!(v.verify_at(&sec(3), 0, t).outcome, Outcome::Verified);
}

/// Regression (found by `fuzz_verify`): a frame whose header CRC has two equal octets (here
/// 0x0707) reads as either byte order; verification must compare Reserved2 with the order the
/// profile writes, not with the order a detector guesses first.
#[test]
fn a_header_crc_with_equal_octets_verifies() {
    let frame = hex::decode(concat!(
        "010ccd0100016ef6635b6b5088bac108004c000000006042800101a23d303b80",
        "0a47414e4445524d5530318202e50183040000000185010087200000",
        "03e9000007d100000bb900000fa1000013890000177100001b5900001f41"
    ))
    .unwrap();
    let s = mac_store(MacAlgorithm::HmacSha256_256, b"0123456789ABCDEF");
    for profile in [Profile::Standard, Profile::Libiec61850] {
        let out = protect(profile, s.require(3).unwrap(), &frame, &mut RandomIv, 0).unwrap();
        assert!(matches!(
            verify(profile, &s, &out, 0),
            Ok(CheckedGoose::Verified(_))
        ));
    }
    let out = protect(
        Profile::Standard,
        s.require(3).unwrap(),
        &frame,
        &mut RandomIv,
        0,
    )
    .unwrap();
    assert_eq!(
        out[20], out[21],
        "the case under test: Reserved2 has two equal octets"
    );
}
