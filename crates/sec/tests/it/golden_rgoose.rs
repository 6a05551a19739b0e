//! Golden frames with provenance: R-GOOSE written by real implementations, verified by gander.
//! The frames, their keys and where each comes from are in `tests/vectors/golden_frames.txt`
//! (read by `golden/frames.rs`):
//!
//! * `lib-*`: UDP payloads written by libiec61850 v1.6_develop_rgoose_sntp (d53da75), key = ASCII
//!   "0123456789ABCDEF", KeyID 1. The interop suite regenerates such frames live from
//!   libiec61850 1.6.1 (`interop/tests`); these fixed copies keep the check in `cargo test`.
//! * `seclib-*`: whole Ethernet frames `packet_*.bin` from slipz/RPi-Gateway (the gateway paper's
//!   samples), key 11754cd72aec309bf52f7687212e8957, MAC over SI..end of APDU, GMAC IV zero.

use crate::frames;

use gander_sec::spdu::{verify, Checked};
use gander_sec::{
    default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile, SecError,
};

fn frame(name: &str) -> Vec<u8> {
    frames::get(name).frame()
}

fn store(mac: MacAlgorithm, enc: EncAlgorithm, id: u32, key: &[u8]) -> KeyStore {
    let mut s = KeyStore::new();
    s.insert(KeyEntry::new(id, mac, enc, key, default_provider()).unwrap())
        .unwrap();
    s
}

fn assert_verifies_and_bits_matter(
    profile: Profile,
    store: &KeyStore,
    frame: &[u8],
    covered_from: usize,
) {
    let Checked::Verified(v) = verify(profile, store, frame, 0).expect("verifies") else {
        panic!("not verified")
    };
    let els = v.elements().unwrap();
    assert_eq!(els.len(), 1);
    assert_eq!(els[0].apdu[0], 0x61, "cleartext GOOSE APDU");
    for i in covered_from * 8..frame.len() * 8 {
        let mut bad = frame.to_vec();
        bad[i / 8] ^= 1 << (i % 8);
        assert!(
            !matches!(verify(profile, store, &bad, 0), Ok(Checked::Verified(_))),
            "flip of bit {i} still verified"
        );
    }
}

const LIB_KEY: &[u8] = b"0123456789ABCDEF";

#[test]
fn libiec61850_gcm_hmac_and_combined_verify() {
    let cases = [
        (
            "lib-mode1-aes-128-gcm",
            MacAlgorithm::None,
            EncAlgorithm::Aes128Gcm,
        ),
        (
            "lib-mode2-hmac-sha256-128",
            MacAlgorithm::HmacSha256_128,
            EncAlgorithm::None,
        ),
        (
            "lib-mode3-hmac-sha256-256",
            MacAlgorithm::HmacSha256_256,
            EncAlgorithm::None,
        ),
        (
            "lib-mode4-aes-128-gcm+hmac-sha256-128",
            MacAlgorithm::HmacSha256_128,
            EncAlgorithm::Aes128Gcm,
        ),
    ];
    for (name, mac, enc) in cases {
        let g = frames::get(name);
        assert_eq!((g.mac(), g.enc(), g.key_id()), (mac, enc, 1), "{name}");
        assert_eq!(g.key(), LIB_KEY, "{name}");
        assert_eq!(g.profile(), Profile::Libiec61850, "{name}");
        assert_verifies_and_bits_matter(Profile::Libiec61850, &g.store(), &g.frame(), 0);
    }
}

#[test]
fn libiec61850_quirks_are_refused_by_the_standard_profile() {
    let s = store(MacAlgorithm::HmacSha256_128, EncAlgorithm::None, 1, LIB_KEY);
    assert!(matches!(
        verify(
            Profile::Standard,
            &s,
            &frame("lib-mode2-hmac-sha256-128"),
            0
        ),
        Err(SecError::Malformed(_))
    ));
    let s = store(MacAlgorithm::HmacSha256_256, EncAlgorithm::None, 1, LIB_KEY);
    assert!(verify(
        Profile::Standard,
        &s,
        &frame("lib-mode3-hmac-sha256-256"),
        0
    )
    .is_err());
}

#[test]
fn libiec61850_plain_is_unsecured() {
    let s = store(MacAlgorithm::HmacSha256_128, EncAlgorithm::None, 1, LIB_KEY);
    assert!(matches!(
        verify(Profile::Libiec61850, &s, &frame("lib-mode0-none"), 0),
        Ok(Checked::Unsecured(_))
    ));
}

#[test]
fn wrong_key_fails_libiec61850() {
    let s = store(
        MacAlgorithm::HmacSha256_128,
        EncAlgorithm::Aes128Gcm,
        1,
        b"0123456789ABCDEX",
    );
    assert_eq!(
        verify(
            Profile::Libiec61850,
            &s,
            &frame("lib-mode4-aes-128-gcm+hmac-sha256-128"),
            0
        )
        .unwrap_err(),
        SecError::BadTag
    );
}

#[test]
fn seclib_samples_verify() {
    let key = hex::decode("11754cd72aec309bf52f7687212e8957").unwrap();
    let cases = [
        ("seclib-hmac-sha256-80", MacAlgorithm::HmacSha256_80),
        ("seclib-hmac-blake2b-80", MacAlgorithm::HmacBlake2b80),
        ("seclib-aes-gmac-128", MacAlgorithm::AesGmac128),
    ];
    for (name, mac) in cases {
        let g = frames::get(name);
        assert_eq!(
            (g.mac(), g.enc(), g.key_id()),
            (mac, EncAlgorithm::None, 0),
            "{name}"
        );
        assert_eq!(g.key(), key, "{name}");
        assert_eq!(g.profile(), Profile::Seclib, "{name}");
        assert!(g.is_ethernet(), "{name}");
        let frame = g.frame();
        let udp = &frame[42..];
        // SecLib leaves LI/TI (offsets 0-1) outside the MAC; the CLTP checks still reject their flips.
        assert_verifies_and_bits_matter(Profile::Seclib, &g.store(), udp, 0);
    }
}

#[test]
fn every_session_record_verifies_with_its_recorded_key() {
    // The file's own fields (profile, key id, key, algorithms) are enough to verify every
    // R-GOOSE record; the layer-2 records are checked by `l2_goose.rs` and `l2_sv.rs`.
    let mut n = 0;
    for g in frames::all() {
        if g.name().starts_with("lib-l2-") || g.name().starts_with("lib-sv-") {
            continue;
        }
        let frame = g.frame();
        let udp = if g.is_ethernet() {
            &frame[42..]
        } else {
            &frame[..]
        };
        let store = if g.key_id() == 0 && g.mac() == MacAlgorithm::None {
            KeyStore::new()
        } else {
            g.store()
        };
        let checked =
            verify(g.profile(), &store, udp, 0).unwrap_or_else(|e| panic!("{}: {e:?}", g.name()));
        let secured = g.mac() != MacAlgorithm::None || g.enc() != EncAlgorithm::None;
        match checked {
            Checked::Verified(_) => assert!(secured, "{}", g.name()),
            Checked::Unsecured(_) => assert!(!secured, "{}", g.name()),
        }
        n += 1;
    }
    assert_eq!(n, 8, "five libiec61850 modes and three SecLib samples");
}
