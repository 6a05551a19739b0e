//! The manager against a stand-in peer (`fake_peer.py`) that follows the peers' contract:
//! readiness, event logs, warm-up, floors, a failing case, resume and the written outputs.
use gander_platform::manager::{self, RunOptions};
use gander_platform::report;
use gander_platform::results::{RunResults, TransferClass};
use gander_platform::scenario::Scenario;
use std::path::PathBuf;
use std::time::Duration;

const SCENARIO: &str = r#"
name = "fake"
[defaults]
cipher_suite = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
key = "rsa1024"
connections = 6
reports = 12
period_ms = 2
warmup = 2
rt_blocks = 2
[[table]]
id = "t"
title = "test table"
reference = "a"
layout = "rse"
row_label = "suite"
[[row]]
name = "a"
table = "t"
[[row]]
name = "b/dhe"
table = "t"
cipher_suite = "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"
reference = "a"
rt_blocks = 0
[[row]]
name = "c/iec"
table = "t"
server_stack = "libiec61850"
"#;

fn opts(dir: &std::path::Path) -> RunOptions {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    RunOptions {
        out: dir.join("run"),
        pki_dir: root.join("../../target/tmp/imp-test-pki"),
        class: TransferClass::by_name("TT3").unwrap(),
        resume: false,
        gander_exe: root.join("tests/fake_peer.py"),
        ossl35_exe: Some(PathBuf::from("/nonexistent/ossl35/gander")),
        python: Some(PathBuf::from("/nonexistent/python")),
        libiec61850_driver: Some(PathBuf::from("/nonexistent/driver.py")),
        libiec61850_python: true,
        libiec61850_cref: None,
        ready_timeout: Duration::from_secs(10),
        progress: false,
    }
}

#[test]
fn runs_cases_records_failures_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = Scenario::from_str("fake", SCENARIO, false).unwrap();
    let o = opts(tmp.path());
    let run = manager::run(&sc, &o).unwrap();
    assert_eq!(run.scenarios.len(), 3);
    let a = &run.scenarios[0];
    assert_eq!(a.status, "ok", "{:?}", a.error);
    let ht = a.ht.as_ref().unwrap();
    assert_eq!((ht.n, a.discarded.ht), (4, 2));
    // RT in 2 interleaved TLS/cleartext block pairs of 6 reports, 2 warm-up discarded per block.
    assert_eq!((a.rt.as_ref().unwrap().n, a.discarded.rt), (8, 4));
    assert_eq!(
        (a.rt_cleartext.as_ref().unwrap().n, a.discarded.rt_clear),
        (8, 4)
    );
    assert_eq!((a.rt_blocks, a.rt_cleartext_block_ratios.len()), (2, 2));
    assert!(a.rt_cleartext_median_ms.is_some() && a.rt_cleartext_ratio.is_some());
    assert!(a.ht_floor_ms.unwrap() > 0.0 && a.ht_floor_ratio.is_some());
    assert!(a.ht_steps.is_some());
    // The DHE case has a DH floor (OpenSSL 3.0 sends RFC 3526 MODP-2048) and a VAR% against `a`.
    let b = &run.scenarios[1];
    assert!(b
        .floor
        .as_ref()
        .unwrap()
        .ops
        .iter()
        .any(|op| op.op.starts_with("modp2048") && op.op.ends_with("derivation")));
    assert!(b.ht.as_ref().unwrap().var_pct.is_some());
    // rt_blocks = 0: one RT loop after the HT loop, and a separate cleartext run.
    assert_eq!((b.rt.as_ref().unwrap().n, b.rt_blocks), (10, 0));
    assert!(b.rt_cleartext_ratio.is_some());
    // The libiec61850 case fails with its reason, and the run went on.
    let c = &run.scenarios[2];
    assert_eq!(c.status, "failed");
    assert!(
        c.error.as_ref().unwrap().contains("driver"),
        "{:?}",
        c.error
    );

    let path = report::write_all(&run, &o.out).unwrap();
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("<svg") && html.contains("tbl-t") && !html.contains("NaN"));
    let csv = std::fs::read_to_string(o.out.join("samples.csv")).unwrap();
    assert!(csv.starts_with("scenario,metric,index,warmup,ns\n") && csv.contains("\na,ht,0,1,"));
    // Per-block warm-up is marked in the CSV: the 7th RT sample opens the second block.
    assert!(
        csv.contains("\na,rt,6,1,") && csv.contains("\na,rt,5,0,"),
        "{csv}"
    );
    // No headline case (RSA-1024): the RT target judges the worst row and gives the range.
    assert!(
        run.targets[1].detail.contains("all 2 rows"),
        "{:?}",
        run.targets[1]
    );
    let md = std::fs::read_to_string(o.out.join("summary.md")).unwrap();
    assert!(md.contains("failed") || md.contains("FAILED"));
    let back = RunResults::load(&o.out).unwrap();
    assert_eq!(back.scenarios.len(), 3);
    assert!(
        back.scenarios[0].samples.is_some(),
        "samples re-attached from scenarios/*.json"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(o.out.join("results.json")).unwrap())
            .unwrap();
    for k in [
        "n",
        "mean_ms",
        "sd_ms",
        "median_ms",
        "p95_ms",
        "p99_ms",
        "min_ms",
        "max_ms",
        "ci95_ms",
        "var_pct",
    ] {
        assert!(
            json["scenarios"][0]["ht"].get(k).is_some(),
            "results.json ht lacks {k}"
        );
    }

    // Resume: the ok cases are kept (same numbers), the failed one is run again.
    let mut o2 = o.clone();
    o2.resume = true;
    let again = manager::run(&sc, &o2).unwrap();
    let (x, y) = (
        again.scenarios[0].ht.as_ref().unwrap(),
        run.scenarios[0].ht.as_ref().unwrap(),
    );
    assert_eq!((x.n, x.median_ms, x.max_ms), (y.n, y.median_ms, y.max_ms));
    assert_eq!(again.scenarios[2].status, "failed");
    // Same test (the environment is process-wide): a server that dies before READY.
    a_server_that_dies_before_ready_fails_its_case_only();
}

fn a_server_that_dies_before_ready_fails_its_case_only() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = Scenario::from_str("fake", "name = \"x\"\n[[row]]\nname = \"clear\"\ntls_version = \"none\"\nconnections = 2\nreports = 2\nperiod_ms = 1\n", false).unwrap();
    std::env::set_var("FAKE_PEER_FAIL", "server");
    let run = manager::run(&sc, &opts(tmp.path())).unwrap();
    std::env::remove_var("FAKE_PEER_FAIL");
    let e = run.scenarios[0].error.as_deref().unwrap_or("");
    assert!(
        e.contains("exited before READY") && e.contains("refusing"),
        "{e}"
    );
}

/// An `openssl35` row without the OpenSSL 3.5 binary fails with the command that builds it; a
/// group the backend lacks is skipped with its reason; neither stops the run.
#[test]
fn openssl35_without_its_binary_fails_clearly_and_unsupported_groups_skip() {
    if gander_tls::backend::linked_openssl35() {
        return; // this binary is the OpenSSL 3.5 one: the row would run
    }
    let text = r#"
name = "pq"
[defaults]
tls_version = "1.3"
cipher_suite = "TLS_AES_128_GCM_SHA256"
key = "p256"
connections = 2
reports = 0
cleartext_baseline = false
[[row]]
name = "ossl35"
backend = "openssl35"
group = "X25519MLKEM768"
[[row]]
name = "ring-hybrid"
backend = "rustls"
group = "X25519MLKEM768"
"#;
    let tmp = tempfile::tempdir().unwrap();
    let sc = Scenario::from_str("pq", text, false).unwrap();
    let run = manager::run(&sc, &opts(tmp.path())).unwrap();
    let r = &run.scenarios[0];
    assert_eq!(r.status, "failed");
    let e = r.error.as_deref().unwrap_or("");
    assert!(e.contains("make build-ossl35"), "{e}");
    let r = &run.scenarios[1];
    assert_eq!(r.status, "skipped");
    assert!(r
        .skip_reason
        .as_deref()
        .unwrap_or("")
        .contains("cannot negotiate X25519MLKEM768"));
}
