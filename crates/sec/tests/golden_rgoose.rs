//! Golden frames with provenance: R-GOOSE written by real implementations, verified by gander.
//!
//! * `LIB_*`: UDP payloads written by libiec61850 v1.6_develop_rgoose_sntp (d53da75), key = ASCII
//!   "0123456789ABCDEF", KeyID 1 (recorded in the project's reference notes,
//!   `shared/reference/rgoose-vectors.txt`). The interop suite regenerates such frames live from
//!   libiec61850 1.6.1 (`interop/tests`); these fixed copies keep the check in `cargo test`.
//! * `SEC_*`: whole Ethernet frames `packet_*.bin` from slipz/RPi-Gateway (the gateway paper's
//!   samples), key 11754cd72aec309bf52f7687212e8957, MAC over SI..end of APDU, GMAC IV zero.

use gander_sec::session::{verify, Checked};
use gander_sec::{
    default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile, SecError,
};

fn unhex(parts: &[&str]) -> Vec<u8> {
    hex::decode(parts.concat()).unwrap()
}

/// mode 0: no security (KeyID 0)
const LIB_PLAIN: &[&str] = &[
    "0140a1188012000000c10000000000020000000000000000000000000000ad8100400100a96181a4802973696d706c65",
    "494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c6549",
    "4f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f",
    "4c4c4e3024474f24676362416e616c6f6756616c75657384086b022a6fcb020c0a850101860100870100880101890100",
    "8a0102ab07850204d2830101",
];

/// mode 1: AES-128-GCM
const LIB_GCM128: &[&str] = &[
    "0140a1188012000000c1000000000002000000000000000000010c67c74afb0fffbe59ba1b90cf000000ad862a1b3866",
    "70d1c4f1dce47a978096a30c34f1f2a2faf6fe922c66004a6984ca53303de27ca4ad505bc93cffc906f6fdb215b110cb",
    "e021b3063fd6202a2ab0aea2dfc784495e562b9268d582219fa104d85796e2ccf1d2b19e48223975978cb06ce7ccb799",
    "8ac4d4bf5394adaf25c491af6c3237589f8fe4a312095c0d35db87cd50ce0d8ed0702c86af5f289ad8768eaa89037e2e",
    "de8128e37c2714f31a16af4a56deb725b24f256a44de3bd88510f0ce5894bbee78eada99d8d04bb72970",
];

/// mode 2: HMAC-SHA256-128
const LIB_HMAC128: &[&str] = &[
    "0140a1188012000000c10000000000020000000000000000000100000000ad8100400100a96181a4802973696d706c65",
    "494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c6549",
    "4f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f",
    "4c4c4e3024474f24676362416e616c6f6756616c75657384086b022a6fcd0e560a850101860100870100880101890100",
    "8a0102ab07850204d28301018510f576ff0a6ab4e1c24bc5442cc6e12d9a",
];

/// mode 3: HMAC-SHA256-256 (len byte says 16)
const LIB_HMAC256: &[&str] = &[
    "0140a1188012000000c10000000000020000000000000000000100000000ad8100400100a96181a4802973696d706c65",
    "494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c6549",
    "4f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f",
    "4c4c4e3024474f24676362416e616c6f6756616c75657384086b022a6fcdd2f10a850101860100870100880101890100",
    "8a0102ab07850204d28301018510c547cfca21db850413ec8d32a00246d3d8dd90996f6cdb7ccb389cd25c63f8ec",
];

/// mode 4: AES-128-GCM + HMAC-SHA256-128
const LIB_GCM128_HMAC128: &[&str] = &[
    "0140a1188012000000c1000000000002000000000000000000010c11a7810f01734e460c2fdffb000000ad512422bd3f",
    "c82f95b59ce5751f189ee6a7d4a10b81d060f59146e27078bf0bf63475040d67ed39856921ba751878d348ca0168b7f4",
    "2c17e446abe9b7b7de10037f3f4b8776ad1ec1658fd8f4d742657bce82fc4ef5a247a52596ab02fad5e1634ff4c3c23d",
    "5871dbe1069a725bab70402915a92bd883ae37387ffa659d6af94d76f0e58b0fc6d84f8cfb24f5a06c6db987e5485f25",
    "1514e80fd0cedc8da80d764af4704b1b6c89857e90452989a9a6e4221323d16f64e8f78072389c7f027785100c28c170",
    "89419c14e8d33f69c442b2f0",
];

/// packet_hmacSHA256_80.bin
const SEC_HMAC_SHA256_80: &[&str] = &[
    "2c600cd50a8a00232414a2270800450001668b0c400040112923c0a80203c0a80204bda8006601521dbc0140a0118011",
    "000001403ba4c73e000100000000000000010000000000000122830003e8011a61820114802973696d706c65494f4765",
    "6e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810100822373696d706c65494f47656e65",
    "726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024",
    "474f24676362416e616c6f6756616c75657384085eec1a858666660a8501018601008701008801018901008a0114ab78",
    "850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000",
    "850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000",
    "850204d28c06000000000000850204d28c06000000000000850adeff696b712cc4e2fce0",
];

/// packet_hmacBLAKE2B_80.bin
const SEC_HMAC_BLAKE2B_80: &[&str] = &[
    "2c600cd50a8a00232414a2270800450001665492400040115f9dc0a80203c0a80204d2cf0066015217520140a0118011",
    "000001403ba4c73e000100000000000000060000000000000122830003e8011a61820114802973696d706c65494f4765",
    "6e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810100822373696d706c65494f47656e65",
    "726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024",
    "474f24676362416e616c6f6756616c75657384085eec1c23f5c28f0a8501018601008701008801018901008a0114ab78",
    "850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000",
    "850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000",
    "850204d28c06000000000000850204d28c06000000000000850a98439bd1d32e9210394a",
];

/// packet_gmacAES128_128.bin
const SEC_GMAC_AES128_128: &[&str] = &[
    "2c600cd50a8a00232414a22708004500016c98ed400040111b3cc0a80203c0a80204d5d80066015809720140a0118011",
    "000001463ba4c73e000100000000000000090000000000000122830003e8011a61820114802973696d706c65494f4765",
    "6e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810100822373696d706c65494f47656e65",
    "726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024",
    "474f24676362416e616c6f6756616c75657384085eec1caaf78d4f0a8501018601008701008801018901008a0114ab78",
    "850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000",
    "850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000",
    "850204d28c06000000000000850204d28c060000000000008510d1036aeb53f24469c15b31efaa7ca8f6",
];

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
    let cases: [(&[&str], MacAlgorithm, EncAlgorithm); 4] = [
        (LIB_GCM128, MacAlgorithm::None, EncAlgorithm::Aes128Gcm),
        (
            LIB_HMAC128,
            MacAlgorithm::HmacSha256_128,
            EncAlgorithm::None,
        ),
        (
            LIB_HMAC256,
            MacAlgorithm::HmacSha256_256,
            EncAlgorithm::None,
        ),
        (
            LIB_GCM128_HMAC128,
            MacAlgorithm::HmacSha256_128,
            EncAlgorithm::Aes128Gcm,
        ),
    ];
    for (hex, mac, enc) in cases {
        let s = store(mac, enc, 1, LIB_KEY);
        assert_verifies_and_bits_matter(Profile::Libiec61850, &s, &unhex(hex), 0);
    }
}

#[test]
fn libiec61850_quirks_are_refused_by_the_standard_profile() {
    let s = store(MacAlgorithm::HmacSha256_128, EncAlgorithm::None, 1, LIB_KEY);
    assert!(matches!(
        verify(Profile::Standard, &s, &unhex(LIB_HMAC128), 0),
        Err(SecError::Malformed(_))
    ));
    let s = store(MacAlgorithm::HmacSha256_256, EncAlgorithm::None, 1, LIB_KEY);
    assert!(verify(Profile::Standard, &s, &unhex(LIB_HMAC256), 0).is_err());
}

#[test]
fn libiec61850_plain_is_unsecured() {
    let s = store(MacAlgorithm::HmacSha256_128, EncAlgorithm::None, 1, LIB_KEY);
    assert!(matches!(
        verify(Profile::Libiec61850, &s, &unhex(LIB_PLAIN), 0),
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
        verify(Profile::Libiec61850, &s, &unhex(LIB_GCM128_HMAC128), 0).unwrap_err(),
        SecError::BadTag
    );
}

#[test]
fn seclib_samples_verify() {
    let key = hex::decode("11754cd72aec309bf52f7687212e8957").unwrap();
    let cases: [(&[&str], MacAlgorithm); 3] = [
        (SEC_HMAC_SHA256_80, MacAlgorithm::HmacSha256_80),
        (SEC_HMAC_BLAKE2B_80, MacAlgorithm::HmacBlake2b80),
        (SEC_GMAC_AES128_128, MacAlgorithm::AesGmac128),
    ];
    for (hex, mac) in cases {
        let frame = unhex(hex);
        let udp = &frame[42..];
        let s = store(mac, EncAlgorithm::None, 0, &key);
        // SecLib leaves LI/TI (offsets 0-1) outside the MAC; the CLTP checks still reject their flips.
        assert_verifies_and_bits_matter(Profile::Seclib, &s, udp, 0);
    }
}
