//! Performance sanity check, not a benchmark (that is `gander bench crypto`): prepared keys
//! must be faster per message than setting the key up for every message.
//!
//! Ignored by default; run optimised:
//! `cargo test --release -p gander-sec --test it -- perf_sanity:: --ignored --nocapture`

use std::hint::black_box;
use std::time::Instant;

use aes_gcm::{AeadInPlace, Aes128Gcm, KeyInit};
use gander_sec::openssl_evp::{evp_per_message, OpensslProvider};
use gander_sec::rustcrypto::RustCryptoProvider;
use gander_sec::{CryptoProvider, MacAlgorithm};
use hmac::{Hmac, Mac};
use sha2::Sha256;

const N: u32 = 100_000;

/// Median over 5 rounds of the mean time of `f`, in nanoseconds.
fn time(mut f: impl FnMut()) -> f64 {
    for _ in 0..N / 10 {
        f();
    }
    let mut rounds: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..N {
                f();
            }
            t.elapsed().as_nanos() as f64 / N as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[2]
}

#[test]
#[ignore = "timing; run with --release -- --ignored --nocapture"]
fn prepared_keys_are_faster_than_fresh() {
    let data = [0xa5u8; 256];
    let key16 = [0x42u8; 16];
    let iv = [0x24u8; 12];
    let mut tag16 = [0u8; 16];
    let mut tag8 = [0u8; 8];

    let hmac = RustCryptoProvider
        .mac_key(MacAlgorithm::HmacSha256_128, &key16)
        .unwrap();
    let hmac_prepared = time(|| hmac.sign(&[], black_box(&data), &mut tag16).unwrap());
    let hmac_fresh = time(|| {
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(black_box(&key16)).unwrap();
        m.update(black_box(&data));
        tag16.copy_from_slice(&m.finalize().into_bytes()[..16]);
    });
    let ossl = OpensslProvider
        .mac_key(MacAlgorithm::HmacSha256_128, &key16)
        .unwrap();
    let hmac_ossl = time(|| ossl.sign(&[], black_box(&data), &mut tag16).unwrap());
    let hmac_evp = time(|| {
        evp_per_message::mac(
            MacAlgorithm::HmacSha256_128,
            &key16,
            &[],
            black_box(&data),
            &mut tag16,
        )
        .unwrap()
    });

    let gmac = RustCryptoProvider
        .mac_key(MacAlgorithm::AesGmac128, &key16)
        .unwrap();
    let gmac_prepared = time(|| gmac.sign(&iv, black_box(&data), &mut tag16).unwrap());
    let gmac_fresh = time(|| {
        let c = Aes128Gcm::new_from_slice(black_box(&key16)).unwrap();
        let t = c
            .encrypt_in_place_detached((&iv).into(), black_box(&data), &mut [])
            .unwrap();
        tag16.copy_from_slice(&t);
    });
    let gossl = OpensslProvider
        .mac_key(MacAlgorithm::AesGmac128, &key16)
        .unwrap();
    let gmac_ossl = time(|| gossl.sign(&iv, black_box(&data), &mut tag16).unwrap());
    let gmac_evp = time(|| {
        evp_per_message::mac(
            MacAlgorithm::AesGmac128,
            &key16,
            &iv,
            black_box(&data),
            &mut tag16,
        )
        .unwrap()
    });
    let gmac64 = RustCryptoProvider
        .mac_key(MacAlgorithm::AesGmac64, &key16)
        .unwrap();
    let gmac64_prepared = time(|| gmac64.sign(&iv, black_box(&data), &mut tag8).unwrap());

    println!("per-message cost, 256-byte message, ns (median of 5 x {N}):");
    println!("  hmac-sha256-128  rustcrypto prepared {hmac_prepared:8.1}  rustcrypto fresh {hmac_fresh:8.1}  openssl prepared {hmac_ossl:8.1}  evp-per-message {hmac_evp:8.1}");
    println!("  aes-gmac-128     rustcrypto prepared {gmac_prepared:8.1}  rustcrypto fresh {gmac_fresh:8.1}  openssl prepared {gmac_ossl:8.1}  evp-per-message {gmac_evp:8.1}");
    println!("  aes-gmac-64      rustcrypto prepared {gmac64_prepared:8.1}");
    assert!(
        hmac_prepared < hmac_fresh,
        "prepared HMAC slower than fresh"
    );
    assert!(
        gmac_prepared < gmac_fresh,
        "prepared GMAC slower than fresh"
    );
}
