//! `gander bench gdoi` end to end with few registrations and members: every registration row
//! is there, the last with ECDSA P-256 certificates on the PSK headline row's suite, each row's
//! figures agree with its samples, and `targets_met` takes the certificate row's own share into
//! account. The targets themselves are not asserted: they depend on the host (docs/gdoi.md).

use gander_bench::gdoi::{run, GdoiBenchOptions};

#[test]
fn every_row_including_the_certificate_row_is_reported() {
    let o = GdoiBenchOptions {
        registrations: 6,
        members: 2,
        rekeys: 2,
    };
    let mut lines = Vec::new();
    let r = run(&o, &mut |l| lines.push(l)).expect("bench runs");
    let auths: Vec<&str> = r.registrations.iter().map(|x| x.auth.as_str()).collect();
    assert_eq!(auths, ["PSK", "PSK", "PSK", "ECDSA P-256"]);
    let cert = &r.registrations[3];
    assert_eq!(cert.registrations, 6);
    assert_eq!(cert.key_server_ns.n, 6);
    assert!(cert.suite.contains("P-256 (19)") && cert.suite.contains("AES-128"));
    for row in &r.registrations {
        assert!(row.bare_crypto_ns.p50 > 0.0, "{}", row.suite);
        assert!(row.whole_ns.p50 >= row.key_server_ns.p50, "{}", row.suite);
        let own = 1.0 - row.bare_crypto_ns.p50 / row.key_server_ns.p50;
        assert!((row.own_share - own).abs() < 1e-9, "{}", row.suite);
    }
    let psk = &r.registrations[0];
    let want = psk.key_server_per_s >= 500.0
        && psk.own_share <= 0.10
        && cert.own_share <= 0.10
        && r.push.all_installed_ns.p99 < 100e6
        && r.push.missed == 0;
    assert_eq!(r.targets_met, want);
    // One progress line per registration row, then the push.
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(lines[3].starts_with("registration, ECDSA P-256 certificates"));
    let json = serde_json::to_value(&r).expect("serialises");
    assert_eq!(json["registrations"][3]["auth"], "ECDSA P-256");
}
