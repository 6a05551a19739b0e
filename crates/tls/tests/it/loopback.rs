//! Loopback handshakes with mutual authentication, per backend and across backends.
use crate::common;
use common::*;
use gander_tls::suites;
use gander_tls::{backend, BackendKind};

/// Every reference suite × version the backend supports, with itself.
fn self_matrix(b: BackendKind) -> Vec<String> {
    let set = rsa();
    let caps = backend::capabilities(b);
    let mut done = Vec::new();
    let mut failures = Vec::new();
    for (v, name) in reference_cases() {
        let code = suites::lookup(name).unwrap().code;
        if !caps.versions.contains(&v) || !caps.suites.contains(&code) {
            continue;
        }
        let sp = profile(b, &set, true, &[v], &[name]);
        let cp = profile(b, &set, false, &[v], &[name]);
        let (s, c) = run(&sp, &cp);
        match (&s, &c) {
            (Ok(so), Ok(co)) => {
                assert_eq!(so.version, Some(v), "{b} {v} {name}");
                assert_eq!(co.suite, Some(code), "{b} {v} {name}");
                assert!(so.peer_cert && co.peer_cert, "mutual auth {b} {v} {name}");
                done.push(format!("{v} {name}"));
            }
            _ => failures.push(format!("{b} {v} {name}: server {s:?} client {c:?}")),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    eprintln!("{b}: {} cases: {done:#?}", done.len());
    done
}

#[test]
fn openssl_reference_suites() {
    let done = self_matrix(BackendKind::Openssl);
    assert!(
        done.iter().any(|d| d.contains("TLSv1.0")),
        "OpenSSL does TLS 1.0 at SECLEVEL 0"
    );
}

#[test]
fn rustls_reference_suites() {
    let done = self_matrix(BackendKind::Rustls);
    assert!(done.iter().any(|d| d == "TLSv1.3 TLS_AES_128_GCM_SHA256"));
}

#[test]
fn gnutls_reference_suites() {
    let done = self_matrix(BackendKind::Gnutls);
    assert!(
        done.iter()
            .any(|d| d == "TLSv1.0 TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA"),
        "{done:?}"
    );
}

use gander_tls::pki::KeySpec;
use gander_tls::TlsVersion::{self, *};

/// Every ordered pair of different backends, on the suites they share.
#[test]
fn cross_backend_pairs() {
    let set = rsa();
    let cases: &[(TlsVersion, &str)] = &[
        (Tls13, "TLS_AES_128_GCM_SHA256"),
        (Tls13, "TLS_AES_256_GCM_SHA384"),
        (Tls12, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
        (Tls12, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
        (Tls12, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"),
        (Tls12, "TLS_RSA_WITH_AES_128_CBC_SHA256"),
        (Tls10, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"),
    ];
    let mut ran = 0;
    let mut failures = Vec::new();
    for sk in common::backends() {
        for ck in common::backends() {
            if sk == ck {
                continue;
            }
            for &(v, name) in cases {
                let code = gander_tls::suites::lookup(name).unwrap().code;
                let ok = |b: BackendKind| {
                    let c = backend::capabilities(b);
                    c.versions.contains(&v) && c.suites.contains(&code)
                };
                if !ok(sk) || !ok(ck) {
                    continue;
                }
                let (s, c) = run(
                    &profile(sk, &set, true, &[v], &[name]),
                    &profile(ck, &set, false, &[v], &[name]),
                );
                match (&s, &c) {
                    (Ok(so), Ok(co)) if so.suite == Some(code) && co.version == Some(v) => ran += 1,
                    _ => {
                        failures.push(format!("server {sk} client {ck} {v} {name}: {s:?} / {c:?}"))
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(ran >= 20, "{ran}");
}

/// ECDSA P-256 certificates with the ECDHE_ECDSA suites (IEC 62351-4 mandatory per one source).
#[test]
fn ecdsa_p256_every_backend() {
    let set = pki(KeySpec::P256);
    for b in common::backends() {
        for (v, name) in [
            (Tls12, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
            (Tls13, "TLS_AES_128_GCM_SHA256"),
        ] {
            let (s, c) = run(
                &profile(b, &set, true, &[v], &[name]),
                &profile(b, &set, false, &[v], &[name]),
            );
            assert!(s.is_ok() && c.is_ok(), "{b} {v} {name}: {s:?} {c:?}");
        }
    }
}

/// TLS 1.2 session-ID resumption (RFC 5246 §7.4.1.2) and, with tickets, TLS 1.3 PSK resumption.
#[test]
fn session_resumption() {
    let set = rsa();
    for b in common::backends() {
        for (v, tickets) in [(Tls12, false), (Tls13, true)] {
            let mut sp = profile(b, &set, true, &[v], &[]);
            let mut cp = profile(b, &set, false, &[v], &[]);
            sp.session_tickets = tickets;
            cp.session_tickets = tickets;
            let sb = backend::open(&sp).unwrap();
            let cb = backend::open(&cp).unwrap();
            let (s1, c1) = run_with(&*sb, &*cb);
            let (s1, c1) = (
                s1.unwrap_or_else(|e| panic!("{b} {v} server: {e:?}")),
                c1.unwrap_or_else(|e| panic!("{b} {v} client: {e:?}")),
            );
            assert!(!c1.resumed && !s1.resumed);
            let (s2, c2) = run_with(&*sb, &*cb);
            let (s2, c2) = (
                s2.unwrap_or_else(|e| panic!("{b} {v} server 2: {e:?}")),
                c2.unwrap_or_else(|e| panic!("{b} {v} client 2: {e:?}")),
            );
            assert!(
                s2.resumed && c2.resumed,
                "{b} {v}: second connection not resumed"
            );
        }
    }
}

/// With `session_resumption = false` nothing is resumed.
#[test]
fn resumption_off() {
    let set = rsa();
    for b in common::backends() {
        let mut sp = profile(b, &set, true, &[Tls12], &[]);
        let mut cp = profile(b, &set, false, &[Tls12], &[]);
        sp.session_resumption = false;
        cp.session_resumption = false;
        let sb = backend::open(&sp).unwrap();
        let cb = backend::open(&cp).unwrap();
        let _ = run_with(&*sb, &*cb);
        let (s, c) = run_with(&*sb, &*cb);
        assert!(!s.unwrap().resumed && !c.unwrap().resumed, "{b}");
    }
}
