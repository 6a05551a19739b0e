//! Runs `gander bench crypto` with 50 samples per row and checks its shape: every row the
//! gateway paper's Tables 3 and 6 and Farooq's Table 1 call for is there, with n = 50 and
//! ordered statistics, and the JSON output parses. No timing is asserted: this runs on shared
//! machines, in a debug-ish test profile.

use gander_bench::crypto::{
    self, CryptoConfig, Event, Impl, Op, AUTH_SIZES, ENC_SIZES, MAC_ROWS, RSA_BITS,
};
use gander_bench::crypto_report;
use gander_sec::signature::SignatureAlgorithm;
use gander_sec::EncAlgorithm;

const REPS: usize = 50;

fn expected_rows() -> Vec<(String, Option<u32>, usize, Impl, Op)> {
    let mut v = vec![];
    for (mac, key_len) in MAC_ROWS {
        let kb = mac.needs_iv().then_some(key_len as u32 * 8);
        for (bytes, _) in AUTH_SIZES {
            for (imp, ops) in [
                (Impl::Primitive, [Op::Mac, Op::Verify]),
                (Impl::Openssl, [Op::Mac, Op::Verify]),
                (Impl::Gander, [Op::Protect, Op::Verify]),
                (Impl::EvpPerMessage, [Op::Mac, Op::Verify]),
            ] {
                for op in ops {
                    v.push((mac.name().to_string(), kb, bytes, imp, op));
                }
            }
        }
    }
    for enc in [EncAlgorithm::Aes128Gcm, EncAlgorithm::Aes256Gcm] {
        for (bytes, _) in ENC_SIZES {
            for (imp, ops) in [
                (Impl::Primitive, [Op::Encrypt, Op::Decrypt]),
                (Impl::Openssl, [Op::Encrypt, Op::Decrypt]),
                (Impl::Gander, [Op::Protect, Op::Verify]),
                (Impl::EvpPerMessage, [Op::Encrypt, Op::Decrypt]),
            ] {
                for op in ops {
                    v.push((
                        enc.name().to_string(),
                        Some(enc.key_len() as u32 * 8),
                        bytes,
                        imp,
                        op,
                    ));
                }
            }
        }
    }
    for (bytes, _) in AUTH_SIZES {
        for (imp, op) in [
            (Impl::Primitive, Op::Mac),
            (Impl::Primitive, Op::Verify),
            (Impl::Gander, Op::Protect),
            (Impl::Gander, Op::Verify),
        ] {
            v.push(("ascon-aead128-mac".to_string(), None, bytes, imp, op));
        }
    }
    for (bytes, _) in ENC_SIZES {
        for (imp, op) in [
            (Impl::Primitive, Op::Encrypt),
            (Impl::Primitive, Op::Decrypt),
            (Impl::Gander, Op::Protect),
            (Impl::Gander, Op::Verify),
        ] {
            v.push(("ascon-aead128".to_string(), Some(128), bytes, imp, op));
        }
    }
    for (alg, bits) in crypto::signature_rows(&RSA_BITS) {
        for op in [Op::Sign, Op::Verify] {
            v.push((
                alg.name().to_string(),
                Some(bits),
                crypto::SIGNATURE_MESSAGE_LEN,
                Impl::Primitive,
                op,
            ));
        }
    }
    v
}

#[test]
fn every_row_with_fifty_samples_and_json_that_parses() {
    // SLH-DSA signing takes a third of a second for 128s: two samples are enough for shape.
    let cfg = CryptoConfig {
        slh_cap: 2,
        ..CryptoConfig::new(REPS)
    };
    let mut raw_rows = 0usize;
    let report = crypto::run(&cfg, &mut |ev| {
        if let Event::Row(row, timing) = ev {
            raw_rows += 1;
            assert_eq!(timing.samples.len(), row.n, "{}", row.label());
        }
    })
    .expect("benchmark runs");

    let expected = expected_rows();
    // 9 MAC rows x 3 sizes x 4 impls x 2 ops + 2 AEADs x 3 sizes x 8 + Ascon MAC and AEAD x 3
    // sizes x 4 + 14 signature algorithms x 2; plus 2 layer-2 MACs x 3 sizes x 4 (their sizes
    // depend on the IV length, so they are counted, not listed).
    assert_eq!(expected.len(), 9 * 3 * 8 + 2 * 3 * 8 + 2 * 3 * 4 + 14 * 2);
    let layer2 = report
        .rows
        .iter()
        .filter(|r| r.group == crypto::Group::Layer2)
        .count();
    assert_eq!(layer2, 2 * 3 * 4);
    assert_eq!(report.rows.len(), expected.len() + layer2);
    assert_eq!(raw_rows, report.rows.len());
    for (alg, kb, bytes, imp, op) in &expected {
        let row = report
            .row(alg, *kb, *bytes, *imp, *op)
            .unwrap_or_else(|| panic!("missing row {alg} {kb:?} {bytes} {imp:?} {op:?}"));
        let l = row.label();
        let want = if alg.starts_with("slh-dsa") { 2 } else { REPS };
        assert_eq!(row.n, want, "{l}");
        assert!(row.batch >= 1 && row.warmup >= 1, "{l}");
        assert!(row.min_ns > 0.0, "{l}: zero time");
        assert!(row.min_ns <= row.p50_ns && row.p50_ns <= row.p95_ns, "{l}");
        assert!(row.p95_ns <= row.p99_ns && row.p99_ns <= row.max_ns, "{l}");
        assert!(
            row.min_ns <= row.mean_ns && row.mean_ns <= row.max_ns,
            "{l}"
        );
        assert!(
            row.sd_ns >= 0.0 && row.ci95_ns >= 0.0 && row.ci95_ns.is_finite(),
            "{l}"
        );
        assert!(
            matches!(row.verdict_3ms, "ok" | "over") && matches!(row.verdict_10ms, "ok" | "over")
        );
    }
    // The signature rows carry their key size, and RSA/PSS both appear at every size.
    for bits in RSA_BITS {
        for alg in [
            SignatureAlgorithm::RsaPkcs1v15Sha256,
            SignatureAlgorithm::RsaPssSha256,
        ] {
            assert!(report
                .row(alg.name(), Some(bits), 256, Impl::Primitive, Op::Sign)
                .is_some());
        }
    }

    // JSON: one array of row objects with the documented fields.
    let json: serde_json::Value =
        serde_json::from_str(&crypto_report::render_json(&report)).expect("valid JSON");
    let arr = json.as_array().expect("an array");
    assert_eq!(arr.len(), report.rows.len());
    for o in arr {
        for field in [
            "op",
            "algorithm",
            "bytes",
            "impl",
            "n",
            "mean_ns",
            "sd_ns",
            "min_ns",
            "max_ns",
            "p50_ns",
            "p99_ns",
            "ci95_ns",
        ] {
            assert!(o.get(field).is_some(), "field {field} missing in {o}");
        }
        if !o["algorithm"].as_str().unwrap_or("").starts_with("slh-dsa") {
            assert_eq!(o["n"], REPS);
        }
    }
    let gmac = arr
        .iter()
        .find(|o| {
            o["algorithm"] == "aes-gmac-128"
                && o["key_bits"] == 256
                && o["impl"] == "evp-per-message"
        })
        .expect("GMAC row with key_bits");
    assert_eq!(gmac["op"], "mac");
    assert!(arr
        .iter()
        .any(|o| o["algorithm"] == "rsassa-pss-sha256" && o["key_bits"] == 2048));
    assert!(arr
        .iter()
        .all(|o| o["algorithm"] != "hmac-sha256-128" || o.get("key_bits").is_none()));

    // The targets are all computable from this run, and the text report names the machine.
    assert_eq!(crypto_report::targets(&report).len(), 16);
    // Post-quantum signatures fit no frame; Ed25519 fits both.
    for alg in SignatureAlgorithm::POST_QUANTUM {
        let fit = crypto_report::signature_fit(alg.name(), 128).unwrap();
        assert!(!fit.l2_goose && !fit.r_goose, "{alg}");
    }
    let ed = crypto_report::signature_fit("ed25519", 256).unwrap();
    assert!(ed.l2_goose && ed.r_goose && ed.signature_len == 64);
    let text = crypto_report::render_text(&report);
    assert!(text.contains("machine:") && text.contains("Targets"));
}
