//! The `keylog` option: every backend writes the NSS key log format (draft-ietf-tls-keylogfile),
//! `CLIENT_RANDOM` for TLS 1.2 and the RFC 8446 §7.1 traffic secrets for TLS 1.3, and both ends
//! of a connection (whatever their libraries) log the same secrets for the same client random.
//! That tshark decrypts a capture with these lines is checked in
//! `interop/tests/test_keylog_tshark.py`.
use crate::common;
use common::*;
use gander_tls::TlsVersion::{self, *};
use gander_tls::{backend, BackendKind, ProfileError, TlsError};
use std::collections::BTreeMap;
use std::path::Path;

/// label -> (client random hex, secret hex), from a key log file; every line must be well formed.
fn read_log(path: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| {
            let p: Vec<&str> = l.split(' ').collect();
            assert_eq!(p.len(), 3, "{path:?}: {l:?}");
            assert!(
                p[0].bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit()),
                "{l:?}"
            );
            assert_eq!(p[1].len(), 64, "client random of 32 octets: {l:?}");
            for h in &p[1..] {
                assert!(h.bytes().all(|b| b.is_ascii_hexdigit()), "{l:?}");
                assert!(!h.is_empty() && h.len() % 2 == 0, "{l:?}");
            }
            (p[0].to_string(), p[1].to_string(), p[2].to_string())
        })
        .collect()
}

const TLS13_LABELS: [&str; 4] = [
    "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
    "SERVER_HANDSHAKE_TRAFFIC_SECRET",
    "CLIENT_TRAFFIC_SECRET_0",
    "SERVER_TRAFFIC_SECRET_0",
];

/// Runs one connection server `sk` / client `ck` at version `v`, each logging to its own file, and
/// checks the lines. Returns a description of what is wrong, if anything.
fn check_pair(sk: BackendKind, ck: BackendKind, v: TlsVersion) -> Option<String> {
    let set = rsa();
    let dir = tempfile::tempdir().unwrap();
    let (slog, clog) = (dir.path().join("server.log"), dir.path().join("client.log"));
    let suite = match v {
        Tls13 => "TLS_AES_128_GCM_SHA256",
        _ => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    };
    let mut sp = profile(sk, &set, true, &[v], &[suite]);
    let mut cp = profile(ck, &set, false, &[v], &[suite]);
    sp.keylog = Some(slog.clone());
    cp.keylog = Some(clog.clone());
    let (s, c) = run(&sp, &cp);
    if let Err(e) = s.as_ref().and(c.as_ref()) {
        return Some(format!("{sk}->{ck} {v}: handshake {e}"));
    }
    let (sl, cl) = (read_log(&slog), read_log(&clog));
    let secrets = |l: &[(String, String, String)]| -> BTreeMap<String, (String, String)> {
        l.iter()
            .map(|(a, b, c)| (a.clone(), (b.clone(), c.clone())))
            .collect()
    };
    let (sm, cm) = (secrets(&sl), secrets(&cl));
    let wanted: Vec<&str> = match v {
        Tls13 => TLS13_LABELS.to_vec(),
        _ => vec!["CLIENT_RANDOM"],
    };
    for (who, m, lines) in [("server", &sm, &sl), ("client", &cm, &cl)] {
        for w in &wanted {
            if !m.contains_key(*w) {
                return Some(format!("{sk}->{ck} {v}: {who} logged no {w}: {lines:?}"));
            }
        }
        if v == Tls12 && lines.len() != 1 {
            return Some(format!(
                "{sk}->{ck} {v}: {who}: one master secret expected: {lines:?}"
            ));
        }
        // One connection: one client random on every line.
        if lines.iter().any(|l| l.1 != lines[0].1) {
            return Some(format!(
                "{sk}->{ck} {v}: {who}: several client randoms: {lines:?}"
            ));
        }
    }
    for w in &wanted {
        let (a, b) = (&sm[*w], &cm[*w]);
        if a != b {
            return Some(format!(
                "{sk}->{ck} {v}: {w} differs: server {a:?} client {b:?}"
            ));
        }
        // TLS 1.2 master secret: 48 octets (RFC 5246 §8.1); SHA-256 traffic secrets: 32.
        let len = if v == Tls13 { 64 } else { 96 };
        if a.1.len() != len {
            return Some(format!("{sk}->{ck} {v}: {w} has {} hex digits", a.1.len()));
        }
    }
    None
}

#[test]
fn every_backend_pair_logs_the_same_secrets() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for sk in backends() {
        for ck in backends() {
            for v in [Tls12, Tls13] {
                ran += 1;
                if let Some(f) = check_pair(sk, ck, v) {
                    failures.push(f);
                }
            }
        }
    }
    assert!(ran >= 2 * 9, "at least openssl, gnutls and rustls: {ran}");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn bad_keylog_path_is_a_clear_error() {
    let set = rsa();
    for b in backends() {
        let mut p = profile(b, &set, true, &[Tls12, Tls13], &[]);
        p.keylog = Some("/nonexistent-gander-dir/keys.log".into());
        match backend::open(&p) {
            Err(TlsError::Profile(ProfileError::KeyLog { path, .. })) => {
                assert_eq!(path, Path::new("/nonexistent-gander-dir/keys.log"))
            }
            Err(e) => panic!("{b}: wrong error {e}"),
            Ok(_) => panic!("{b}: opened with a key log in a missing directory"),
        }
    }
}
