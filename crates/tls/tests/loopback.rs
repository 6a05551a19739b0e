//! Loopback handshakes with mutual authentication, per backend and across backends.
mod common;
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
