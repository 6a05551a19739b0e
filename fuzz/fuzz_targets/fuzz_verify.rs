//! The security layer on hostile input: any Ethernet frame through capture verification under
//! every profile, with keys for every algorithm family. Nothing may panic, and a frame that
//! verifies must carry a MAC or tag that the fuzzer could only have copied from a seed. Every
//! frame that protects (layer-2 GOOSE and SV, R-GOOSE/R-SV over IPv4 and IPv6) must verify
//! under the key that protected it.
#![no_main]
use gander_sec::frame::CaptureVerifier;
use gander_sec::keystore::SignatureKeys;
use gander_sec::signature::{SignatureAlgorithm, SigningKey};
use gander_sec::{default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn store() -> &'static KeyStore {
    static S: OnceLock<KeyStore> = OnceLock::new();
    S.get_or_init(|| {
        let mut s = KeyStore::new();
        let p = default_provider();
        let k16 = b"0123456789ABCDEF";
        s.insert(KeyEntry::new(0, MacAlgorithm::HmacSha256_80, EncAlgorithm::None, k16, p).unwrap()).unwrap();
        s.insert(KeyEntry::new(1, MacAlgorithm::HmacSha256_128, EncAlgorithm::Aes128Gcm, k16, p).unwrap()).unwrap();
        s.insert(KeyEntry::new(2, MacAlgorithm::AesGmac128, EncAlgorithm::None, k16, p).unwrap()).unwrap();
        s.insert(KeyEntry::new(3, MacAlgorithm::HmacSha256_256, EncAlgorithm::None, k16, p).unwrap()).unwrap();
        // Ascon-AEAD128 (experimental profile): MAC, AEAD, and HMAC inside Ascon encryption.
        s.insert(KeyEntry::new(4, MacAlgorithm::AsconAead128Mac, EncAlgorithm::None, k16, p).unwrap()).unwrap();
        s.insert(KeyEntry::new(5, MacAlgorithm::None, EncAlgorithm::AsconAead128, k16, p).unwrap()).unwrap();
        s.insert(KeyEntry::new(6, MacAlgorithm::HmacSha256_80, EncAlgorithm::AsconAead128, k16, p).unwrap()).unwrap();
        // A post-quantum signature key (subscriber side: public key only).
        let sk = SigningKey::from_raw(SignatureAlgorithm::MlDsa44, &[7; 32]).unwrap();
        let keys = SignatureKeys {
            algorithm: SignatureAlgorithm::MlDsa44,
            signing: None,
            verifying: sk.verifying_key().unwrap(),
        };
        s.insert(KeyEntry::signature_only(7, keys)).unwrap();
        s
    })
}

fuzz_target!(|data: &[u8]| {
    for profile in Profile::ALL {
        let mut v = CaptureVerifier::new(profile, store());
        let _ = v.verify(data, 0);
        let _ = v.verify_at(data, 0, 1_000_000);
        for id in [0u32, 2, 3] {
            let key = store().require(id).expect("key");
            let mut ivs = gander_sec::spdu::RandomIv;
            if let Ok(Some(p)) = gander_sec::frame::protect_frame(profile, key, data, &mut ivs, 0) {
                let mut fresh = CaptureVerifier::new(profile, store());
                let verdict = fresh.verify(&p, 0);
                // Protect does not know the receiver's smpCnt wrap (`sv_wrap`), so an SV frame
                // whose smpCnt is beyond the default wrap protects and is then refused, by name.
                let beyond_wrap = matches!(
                    &verdict.outcome,
                    gander_sec::frame::Outcome::Failed(gander_sec::SecError::Malformed(
                        gander_wire::Error::BadValue { what: "smpCnt", .. }
                    ))
                );
                assert!(
                    verdict.outcome == gander_sec::frame::Outcome::Verified || beyond_wrap,
                    "{:?}",
                    verdict
                );
            }
        }
        let _ = gander_sec::spdu::verify(profile, store(), data, 0);
        let _ = gander_sec::l2::verify(profile, store(), data, 0);
        if let Ok(view) = gander_sec::view::classify(profile, data) {
            let _ = (view.kind(), view.visible_appid(profile, store()), view.outer_vid());
            read_back(gander_sec::view::verify(profile, store(), &view, 0));
        }
        // The same bytes as an IP packet (the nfqueue path) and as a UDP payload (the udp
        // relay): no panic, and an IP packet that classifies classifies the same in a frame.
        if let Ok(bare) = gander_sec::view::classify_ip(profile, data) {
            let _ = (bare.kind(), bare.visible_appid(profile, store()), bare.outer_vid());
            read_back(gander_sec::view::verify(profile, store(), &bare, 0));
            let mut framed = vec![0u8; 12];
            framed.extend_from_slice(if data[0] >> 4 == 6 { &[0x86, 0xdd] } else { &[0x08, 0x00] });
            framed.extend_from_slice(data);
            let v = gander_sec::view::classify(profile, &framed).expect("the packet in a frame");
            assert_eq!((v.kind(), v.secured()), (bare.kind(), bare.secured()));
        }
        let (src, dst) = ("10.0.0.1:102".parse().unwrap(), "10.0.0.2:102".parse().unwrap());
        if let Ok(d) = gander_sec::view::classify_datagram(profile, src, dst, data) {
            read_back(gander_sec::view::verify(profile, store(), &d, 0));
        }
    }
});

/// A verified frame's APDUs read back through their borrowed views, each convertible to owned
/// values: verification checked them whole, so neither may fail.
fn read_back(judged: Result<gander_sec::view::Judged<'_>, gander_sec::SecError>) {
    if let Ok(gander_sec::view::Judged::Verified(v)) = judged {
        for a in v.apdus() {
            a.and_then(|a| a.to_apdu()).expect("a verified APDU reads back");
        }
    }
}
