//! Ascon-AEAD128 (NIST SP 800-232) known answers: every record of the reference
//! implementation's `LWC_AEAD_KAT_128_128.txt` (ascon/ascon-c, `crypto_aead/asconaead128`,
//! stored unchanged as `tests/vectors/ascon-c_asconaead128_LWC_AEAD_KAT_128_128.txt`, provenance
//! in `tests/vectors/README.md`), through the provider that serves key files.
//!
//! * Positive: sealing PT gives CT (ciphertext || 128-bit tag), opening CT gives PT; for the
//!   records with an empty PT the Ascon MAC over AD gives the tag.
//! * Negative: one flipped bit, at several positions, in the ciphertext, the tag, the AD and the
//!   nonce must each fail with `CryptoError::VerifyFailed` and leave the buffer as ciphertext
//!   (no plaintext released); the MAC must refuse the same flips.

use crate::records;

use gander_sec::openssl_evp::OpensslProvider;
use gander_sec::rustcrypto::RustCryptoProvider;
use gander_sec::{AeadKey, CryptoError, CryptoProvider, EncAlgorithm, MacAlgorithm, MacKey};

const FILE: &str = "ascon-c_asconaead128_LWC_AEAD_KAT_128_128.txt";

struct Vector {
    origin: String,
    key: Vec<u8>,
    nonce: Vec<u8>,
    pt: Vec<u8>,
    ad: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
}

fn vectors() -> Vec<Vector> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(FILE);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    records::parse_records(FILE, &text)
        .into_iter()
        .map(|r| {
            let mut ct = r.hex("CT");
            assert!(ct.len() >= 16, "{}: CT shorter than the tag", r.origin);
            let tag = ct.split_off(ct.len() - 16);
            Vector {
                key: r.hex("Key"),
                nonce: r.hex("Nonce"),
                pt: r.hex("PT"),
                ad: r.hex("AD"),
                ct,
                tag,
                origin: r.origin,
            }
        })
        .collect()
}

/// Bit positions to flip in a field of `len` bytes: first, last and a middle one.
fn flip_positions(len: usize) -> Vec<usize> {
    let bits = len * 8;
    if bits == 0 {
        // An empty field (no AD, no plaintext) has no bit to flip.
        return Vec::new();
    }
    let mut v = vec![0, bits / 2 + 3, bits - 1];
    v.retain(|&b| b < bits);
    v.dedup();
    v
}

fn flipped(v: &[u8], bit: usize) -> Vec<u8> {
    let mut w = v.to_vec();
    w[bit / 8] ^= 1 << (bit % 8);
    w
}

fn open_must_fail(
    key: &dyn AeadKey,
    v: &Vector,
    what: &str,
    nonce: &[u8],
    ad: &[u8],
    ct: &[u8],
    tag: &[u8],
) {
    let mut buf = ct.to_vec();
    let r = key.open_in_place(nonce, ad, &mut buf, tag);
    assert_eq!(r, Err(CryptoError::VerifyFailed), "{}: {what}", v.origin);
    assert_eq!(buf, ct, "{}: {what}: failed open released bytes", v.origin);
}

#[test]
fn every_known_answer_and_its_bit_flips() {
    let vs = vectors();
    // The file has one record per (PT length, AD length) in 0..=32 x 0..=32.
    assert_eq!(vs.len(), 33 * 33, "record count of {FILE}");
    let p = RustCryptoProvider;
    let (mut positives, mut negatives, mut macs) = (0, 0, 0);
    for v in &vs {
        let key = p.aead_key(EncAlgorithm::AsconAead128, &v.key).unwrap();
        let mut buf = v.pt.clone();
        let tag = key.seal_in_place(&v.nonce, &v.ad, &mut buf).unwrap();
        assert_eq!(
            (hex::encode(&buf), hex::encode(tag)),
            (hex::encode(&v.ct), hex::encode(&v.tag)),
            "{}: seal",
            v.origin
        );
        let mut buf = v.ct.clone();
        key.open_in_place(&v.nonce, &v.ad, &mut buf, &v.tag)
            .unwrap_or_else(|e| panic!("{}: open: {e}", v.origin));
        assert_eq!(buf, v.pt, "{}: open", v.origin);
        positives += 1;

        for bit in flip_positions(v.ct.len()) {
            let ct = flipped(&v.ct, bit);
            open_must_fail(
                key.as_ref(),
                v,
                &format!("ciphertext bit {bit}"),
                &v.nonce,
                &v.ad,
                &ct,
                &v.tag,
            );
            negatives += 1;
        }
        for bit in flip_positions(16) {
            let tag = flipped(&v.tag, bit);
            open_must_fail(
                key.as_ref(),
                v,
                &format!("tag bit {bit}"),
                &v.nonce,
                &v.ad,
                &v.ct,
                &tag,
            );
            negatives += 1;
        }
        for bit in flip_positions(v.ad.len()) {
            let ad = flipped(&v.ad, bit);
            open_must_fail(
                key.as_ref(),
                v,
                &format!("AD bit {bit}"),
                &v.nonce,
                &ad,
                &v.ct,
                &v.tag,
            );
            negatives += 1;
        }
        for bit in flip_positions(16) {
            let nonce = flipped(&v.nonce, bit);
            open_must_fail(
                key.as_ref(),
                v,
                &format!("nonce bit {bit}"),
                &nonce,
                &v.ad,
                &v.ct,
                &v.tag,
            );
            negatives += 1;
        }

        // Empty plaintext: the tag is the Ascon MAC of AD (what layer-2 GOOSE uses).
        if v.pt.is_empty() {
            let mac = p.mac_key(MacAlgorithm::AsconAead128Mac, &v.key).unwrap();
            let mut t = [0u8; 16];
            mac.sign(&v.nonce, &v.ad, &mut t).unwrap();
            assert_eq!(t.as_slice(), v.tag.as_slice(), "{}: MAC", v.origin);
            mac.verify(&v.nonce, &v.ad, &v.tag).unwrap();
            mac_flips_fail(mac.as_ref(), v);
            macs += 1;
        }
    }
    eprintln!(
        "{FILE}: {positives} positive, {negatives} flipped-bit negatives, {macs} MAC answers"
    );
    assert_eq!(macs, 33);
}

fn mac_flips_fail(mac: &dyn MacKey, v: &Vector) {
    for bit in flip_positions(16) {
        assert_eq!(
            mac.verify(&v.nonce, &v.ad, &flipped(&v.tag, bit)),
            Err(CryptoError::VerifyFailed),
            "{}: MAC tag bit {bit}",
            v.origin
        );
        assert_eq!(
            mac.verify(&flipped(&v.nonce, bit), &v.ad, &v.tag),
            Err(CryptoError::VerifyFailed),
            "{}: MAC nonce bit {bit}",
            v.origin
        );
    }
    for bit in flip_positions(v.ad.len()) {
        assert_eq!(
            mac.verify(&v.nonce, &flipped(&v.ad, bit), &v.tag),
            Err(CryptoError::VerifyFailed),
            "{}: MAC AD bit {bit}",
            v.origin
        );
    }
    // A truncated tag is a typed length error, not a shorter comparison.
    assert!(matches!(
        mac.verify(&v.nonce, &v.ad, &v.tag[..8]),
        Err(CryptoError::BadTagLength { got: 8, .. })
    ));
}

#[test]
fn openssl_has_no_ascon() {
    assert_eq!(
        OpensslProvider
            .aead_key(EncAlgorithm::AsconAead128, &[0; 16])
            .err(),
        Some(CryptoError::Unsupported("ascon-aead128"))
    );
    assert!(matches!(
        OpensslProvider.mac_key(MacAlgorithm::AsconAead128Mac, &[0; 16]),
        Err(CryptoError::Unsupported(_))
    ));
}
