//! Layer-2 GOOSE with the IEC 62351-6 extension: the libiec61850 development encoder's frame
//! verifies (provenance: `tests/vectors/golden_frames.txt`, record
//! `lib-l2-goose-62351-6-hmac-sha256-128`, key "0123456789ABCDEF", HMAC-SHA256-128), and gander's
//! own protect/verify round-trips with MACs and signatures, failing on any flipped bit.

use crate::frames;

use gander_sec::keystore::SignatureKeys;
use gander_sec::l2::{protect, verify, CheckedGoose};
use gander_sec::signature::{SignatureAlgorithm, SigningKey};
use gander_sec::spdu::RandomIv;
use gander_sec::{
    default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile, SecError,
};

/// The libiec61850 development encoder's frame, by its record name in the vector file.
fn lib_l2() -> Vec<u8> {
    frames::get("lib-l2-goose-62351-6-hmac-sha256-128").frame()
}

fn store(entry: KeyEntry) -> KeyStore {
    let mut s = KeyStore::new();
    s.insert(entry).unwrap();
    s
}

fn flips_fail(profile: Profile, s: &KeyStore, frame: &[u8], from: usize) {
    for i in from * 8..frame.len() * 8 {
        let mut bad = frame.to_vec();
        bad[i / 8] ^= 1 << (i % 8);
        assert!(
            !matches!(verify(profile, s, &bad, 0), Ok(CheckedGoose::Verified(_))),
            "flip of bit {i} verified"
        );
    }
}

#[test]
fn libiec61850_l2_frame_verifies() {
    let frame = lib_l2();
    let s = store(
        KeyEntry::new(
            1,
            MacAlgorithm::HmacSha256_128,
            EncAlgorithm::None,
            b"0123456789ABCDEF",
            default_provider(),
        )
        .unwrap(),
    );
    let CheckedGoose::Verified(g) = verify(Profile::Libiec61850, &s, &frame, 0).unwrap() else {
        panic!()
    };
    assert_eq!(g.extension.key_id, 1);
    assert_eq!(g.body.appid, 0x4001);
    // Its Reserved2 CRC is stored low byte first: the standard profile refuses it.
    assert!(matches!(
        verify(Profile::Standard, &s, &frame, 0),
        Err(SecError::Malformed(_))
    ));
    // Everything from the EtherType on is covered by the MAC, or (Reserved2) by the header CRC.
    for i in 12 * 8..frame.len() * 8 {
        let mut bad = frame.clone();
        bad[i / 8] ^= 1 << (i % 8);
        assert!(
            !matches!(
                verify(Profile::Libiec61850, &s, &bad, 0),
                Ok(CheckedGoose::Verified(_))
            ),
            "bit {i}"
        );
    }
}

fn plain_frame() -> Vec<u8> {
    // The same frame with the extension removed and Length/Reserved fields reset.
    let mut f = lib_l2();
    let ext_len = 34;
    f.truncate(f.len() - ext_len);
    let len = (f.len() - 14) as u16;
    f[16..18].copy_from_slice(&len.to_be_bytes());
    f[18..22].copy_from_slice(&[0, 0, 0, 0]);
    f
}

#[test]
fn standard_macs_round_trip_and_fail_on_flips() {
    for (mac, key) in [
        (MacAlgorithm::HmacSha256_80, vec![7u8; 32]),
        (MacAlgorithm::HmacSha256_256, vec![7u8; 32]),
        (MacAlgorithm::AesGmac64, vec![7u8; 16]),
        (MacAlgorithm::AesGmac128, vec![7u8; 32]),
    ] {
        let s = store(KeyEntry::new(3, mac, EncAlgorithm::None, &key, default_provider()).unwrap());
        let out = protect(
            Profile::Standard,
            s.require(3).unwrap(),
            &plain_frame(),
            &mut RandomIv,
            0,
        )
        .unwrap();
        assert!(
            matches!(
                verify(Profile::Standard, &s, &out, 0),
                Ok(CheckedGoose::Verified(_))
            ),
            "{mac}"
        );
        flips_fail(Profile::Standard, &s, &out, 12);
        assert!(matches!(
            protect(
                Profile::Standard,
                s.require(3).unwrap(),
                &out,
                &mut RandomIv,
                0
            ),
            Err(SecError::AlreadySecured(3))
        ));
    }
}

#[test]
fn signatures_round_trip() {
    for (alg, bits) in [
        (SignatureAlgorithm::EcdsaP256Sha256, 0),
        (SignatureAlgorithm::Ed25519, 0),
        (SignatureAlgorithm::RsaPkcs1v15Sha256, 1024),
        (SignatureAlgorithm::RsaPssSha256, 1024),
    ] {
        let sk = SigningKey::generate(alg, bits).unwrap();
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
            &plain_frame(),
            &mut RandomIv,
            0,
        )
        .unwrap();
        assert!(
            matches!(
                verify(Profile::Standard, &subscriber, &out, 0),
                Ok(CheckedGoose::Verified(_))
            ),
            "{alg}"
        );
        // A sample of flips (RSA verification is slower; every 7th bit keeps the test quick).
        for i in (12 * 8..out.len() * 8).step_by(7) {
            let mut bad = out.clone();
            bad[i / 8] ^= 1 << (i % 8);
            assert!(
                !matches!(
                    verify(Profile::Standard, &subscriber, &bad, 0),
                    Ok(CheckedGoose::Verified(_))
                ),
                "{alg} bit {i}"
            );
        }
        // A subscriber cannot sign.
        assert!(protect(
            Profile::Standard,
            subscriber.require(4).unwrap(),
            &plain_frame(),
            &mut RandomIv,
            0
        )
        .is_err());
    }
}

#[test]
fn encryption_keys_are_refused_at_layer_2() {
    let s = store(
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
            s.require(5).unwrap(),
            &plain_frame(),
            &mut RandomIv,
            0
        ),
        Err(SecError::Unsupported(_))
    ));
}

#[test]
fn ascon_mac_round_trips_under_the_experimental_profile_only() {
    let s = store(
        KeyEntry::new(
            6,
            MacAlgorithm::AsconAead128Mac,
            EncAlgorithm::None,
            &[0x42; 16],
            default_provider(),
        )
        .unwrap(),
    );
    let key = s.require(6).unwrap();
    let plain = plain_frame();
    let out = protect(Profile::Experimental, key, &plain, &mut RandomIv, 0).unwrap();
    let CheckedGoose::Verified(g) = verify(Profile::Experimental, &s, &out, 0).unwrap() else {
        panic!("not verified")
    };
    // The 128-bit nonce rides in the extension's IV field; stNum/sqNum of the APDU sit at
    // fixed offsets in it (big-endian), whatever their BER length.
    let iv = g.extension.iv.clone().unwrap();
    assert_eq!(iv.len(), 16);
    let apdu = gander_wire::goose::GoosePdu::parse(&g.body.apdu).unwrap();
    assert_eq!(&iv[4..8], &apdu.st_num.to_be_bytes());
    assert_eq!(&iv[8..12], &apdu.sq_num.to_be_bytes());
    assert_eq!(g.extension.mac.len(), 16);
    flips_fail(Profile::Experimental, &s, &out, 12);
    // Protecting the same frame again gives a fresh nonce.
    let again = protect(Profile::Experimental, key, &plain, &mut RandomIv, 0).unwrap();
    assert_ne!(out, again);
    for p in [Profile::Standard, Profile::Libiec61850, Profile::Seclib] {
        assert!(matches!(
            protect(p, key, &plain, &mut RandomIv, 0),
            Err(SecError::Unsupported(_))
        ));
    }
    assert!(!matches!(
        verify(Profile::Standard, &s, &out, 0),
        Ok(CheckedGoose::Verified(_))
    ));
}

#[test]
fn post_quantum_signatures_sign_layer_2_but_do_not_fit_a_frame() {
    use gander_sec::fit::{Limit, Transport};
    use gander_sec::frame::protect_frame;
    for alg in SignatureAlgorithm::POST_QUANTUM {
        let sk = SigningKey::generate(alg, 0).unwrap();
        let vk = sk.verifying_key().unwrap();
        let sig_len = vk.signature_len();
        let s = store(KeyEntry::signature_only(
            4,
            SignatureKeys {
                algorithm: alg,
                signing: Some(sk),
                verifying: vk,
            },
        ));
        let key = s.require(4).unwrap();
        // Through the frame API (what `gander frame protect` and the gateway call): refused
        // with the size, the limit and the signature named.
        let err =
            protect_frame(Profile::Standard, key, &plain_frame(), &mut RandomIv, 0).unwrap_err();
        let SecError::DoesNotFit(fit) = &err else {
            panic!("{alg}: {err}")
        };
        assert_eq!(fit.transport, Transport::L2Goose);
        assert_eq!(fit.signature, Some((alg.name(), sig_len)), "{alg}");
        let msg = err.to_string();
        assert!(
            msg.contains(&sig_len.to_string()) && (msg.contains("1500") || msg.contains("4095")),
            "{msg}"
        );
        if sig_len < 4000 {
            // ML-DSA: the extension itself can be encoded (under 4095 octets), so the bare
            // layer-2 function signs and a subscriber verifies; only the Ethernet frame is too big.
            assert_eq!(fit.limit, Limit::EthernetPayload, "{alg}");
            let out = protect(Profile::Standard, key, &plain_frame(), &mut RandomIv, 0).unwrap();
            assert!(out.len() - 14 > 1500);
            assert!(matches!(
                verify(Profile::Standard, &s, &out, 0),
                Ok(CheckedGoose::Verified(_))
            ));
            let mut bad = out.clone();
            let n = bad.len();
            bad[n - 100] ^= 1;
            assert!(verify(Profile::Standard, &s, &bad, 0).is_err());
        } else {
            // SLH-DSA: Reserved1's 12 bits cannot even announce the extension.
            assert_eq!(fit.limit, Limit::ExtensionLength, "{alg}");
        }
    }
}

#[test]
fn classical_signatures_still_fit() {
    use gander_sec::frame::protect_frame;
    for (alg, bits) in [
        (SignatureAlgorithm::Ed25519, 0),
        (SignatureAlgorithm::RsaPssSha256, 2048),
    ] {
        let sk = SigningKey::generate(alg, bits).unwrap();
        let vk = sk.verifying_key().unwrap();
        let s = store(KeyEntry::signature_only(
            4,
            SignatureKeys {
                algorithm: alg,
                signing: Some(sk),
                verifying: vk,
            },
        ));
        let out = protect_frame(
            Profile::Standard,
            s.require(4).unwrap(),
            &plain_frame(),
            &mut RandomIv,
            0,
        )
        .unwrap()
        .unwrap();
        assert!(out.len() - 14 <= 1500, "{alg}");
    }
}
