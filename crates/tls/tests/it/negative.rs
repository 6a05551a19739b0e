//! Every certificate and negotiation failure gives its specific error on both sides, quickly.
use crate::common;
use common::*;
use gander_tls::pki::PkiSet;
use gander_tls::TlsVersion::*;
use gander_tls::{BackendKind, Side, TlsError, TlsProfile};
use std::time::{Duration, Instant};

type Check = fn(&TlsError) -> bool;

/// Runs server `sk` against client `ck` with the profiles altered by `alter`, and checks each side.
fn case(
    name: &str,
    sk: BackendKind,
    ck: BackendKind,
    alter: &dyn Fn(&PkiSet, &mut TlsProfile, &mut TlsProfile),
    server_ok: Check,
    client_ok: Check,
) -> Option<String> {
    let set = rsa();
    let mut sp = profile(sk, &set, true, &[Tls12, Tls13], &[]);
    let mut cp = profile(ck, &set, false, &[Tls12, Tls13], &[]);
    sp.io_timeout_ms = 3000;
    cp.io_timeout_ms = 3000;
    alter(&set, &mut sp, &mut cp);
    let t = Instant::now();
    let (s, c) = run(&sp, &cp);
    let slow = t.elapsed() > Duration::from_secs(4);
    let s_ok = matches!(&s, Err(e) if server_ok(e));
    let c_ok = matches!(&c, Err(e) if client_ok(e));
    if s_ok && c_ok && !slow {
        None
    } else {
        Some(format!(
            "{name} server={sk} client={ck}: server {s:?}, client {c:?}, {:?}",
            t.elapsed()
        ))
    }
}

fn pairs() -> Vec<(BackendKind, BackendKind)> {
    let mut v = Vec::new();
    for s in common::backends() {
        for c in common::backends() {
            v.push((s, c));
        }
    }
    v
}

/// Pairs where a library limitation changes what one side can know (see docs/tls.md):
/// - a GnuTLS 3.7.9 TLS 1.3 server cannot decrypt the alert an OpenSSL client sends while it
///   rejects the server's certificate ("Decryption has failed", -24);
/// - a GnuTLS client withholds a certificate that a rustls server's CertificateRequest does not
///   match, so the server reports "no certificate" rather than "unknown CA".
fn known_limitation(name: &str, sk: BackendKind, ck: BackendKind) -> bool {
    use BackendKind::*;
    matches!(
        (name, sk, ck),
        ("pin mismatch" | "server unknown CA", Gnutls, Openssl)
            | ("unknown CA", Rustls | RustlsAwslc, Gnutls)
    )
}

fn all(name: &str, alter: &dyn Fn(&PkiSet, &mut TlsProfile, &mut TlsProfile), s: Check, c: Check) {
    let failures: Vec<String> = pairs()
        .into_iter()
        .filter(|(sk, ck)| !known_limitation(name, *sk, *ck))
        .filter_map(|(sk, ck)| case(name, sk, ck, alter, s, c))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn client_from_unknown_ca() {
    all(
        "unknown CA",
        &|set, _s, c| {
            c.cert = Some(set.other.clone());
        },
        |e| {
            matches!(
                e,
                TlsError::UnknownCa {
                    by: Side::Local,
                    ..
                }
            )
        },
        |e| matches!(e, TlsError::UnknownCa { by: Side::Peer, .. }),
    );
}

#[test]
fn server_from_unknown_ca() {
    all(
        "server unknown CA",
        &|set, s, _c| {
            s.cert = Some(set.other.clone());
            s.key = Some(set.client_key.clone());
        },
        |e| matches!(e, TlsError::UnknownCa { by: Side::Peer, .. }),
        |e| {
            matches!(
                e,
                TlsError::UnknownCa {
                    by: Side::Local,
                    ..
                }
            )
        },
    );
}

#[test]
fn pin_mismatch() {
    // The client pins the CA-issued client certificate, so the genuine server certificate fails.
    all(
        "pin mismatch",
        &|set, _s, c| {
            c.peer_cert = Some(set.client.clone());
        },
        |e| matches!(e, TlsError::BadCertificate { by: Side::Peer, .. }),
        |e| matches!(e, TlsError::PinMismatch),
    );
}

#[test]
fn pin_match_is_accepted() {
    for (sk, ck) in pairs() {
        let set = rsa();
        let mut sp = profile(sk, &set, true, &[Tls12, Tls13], &[]);
        let mut cp = profile(ck, &set, false, &[Tls12, Tls13], &[]);
        sp.peer_cert = Some(set.client.clone());
        cp.peer_cert = Some(set.server.clone());
        let (s, c) = run(&sp, &cp);
        assert!(s.is_ok() && c.is_ok(), "{sk}/{ck}: {s:?} {c:?}");
    }
}

#[test]
fn revoked_client() {
    all(
        "revoked",
        &|set, s, c| {
            s.crl = vec![set.crl_revoked.clone()];
            c.cert = Some(set.revoked.clone());
        },
        |e| {
            matches!(
                e,
                TlsError::Revoked {
                    by: Side::Local,
                    ..
                }
            )
        },
        |e| matches!(e, TlsError::Revoked { by: Side::Peer, .. }),
    );
}

#[test]
fn empty_crl_accepts() {
    for (sk, ck) in pairs() {
        let set = rsa();
        let mut sp = profile(sk, &set, true, &[Tls12, Tls13], &[]);
        let mut cp = profile(ck, &set, false, &[Tls12, Tls13], &[]);
        sp.crl = vec![set.crl.clone()];
        cp.crl = vec![set.crl_revoked.clone()];
        let (s, c) = run(&sp, &cp);
        assert!(s.is_ok() && c.is_ok(), "{sk}/{ck}: {s:?} {c:?}");
    }
}

#[test]
fn expired_client() {
    all(
        "expired",
        &|set, _s, c| {
            c.cert = Some(set.expired.clone());
        },
        |e| {
            matches!(
                e,
                TlsError::Expired {
                    by: Side::Local,
                    ..
                }
            )
        },
        |e| matches!(e, TlsError::Expired { by: Side::Peer, .. }),
    );
}

#[test]
fn forbidden_version() {
    // A TLS 1.3-only server and a TLS 1.2-only client (every backend can do both).
    all(
        "version",
        &|_set, s, c| {
            s.versions = vec![Tls13];
            c.versions = vec![Tls12];
        },
        |e| matches!(e, TlsError::ProtocolVersion { .. }),
        |e| matches!(e, TlsError::ProtocolVersion { .. }),
    );
}

#[test]
fn no_shared_suite() {
    all(
        "no shared suite",
        &|_set, s, c| {
            s.versions = vec![Tls12];
            c.versions = vec![Tls12];
            s.cipher_suites = vec!["TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384".into()];
            c.cipher_suites = vec!["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()];
        },
        |e| {
            matches!(
                e,
                TlsError::NoSharedCipher {
                    by: Side::Local,
                    ..
                }
            )
        },
        |e| matches!(e, TlsError::NoSharedCipher { by: Side::Peer, .. }),
    );
}

#[test]
fn client_without_certificate() {
    // IEC 62351-3: mutual authentication is mandatory, so a server refuses a client with no certificate.
    all(
        "no client certificate",
        &|_set, _s, c| {
            c.cert = None;
            c.key = None;
            c.require_client_auth = false;
        },
        |e| {
            matches!(
                e,
                TlsError::BadCertificate {
                    by: Side::Local,
                    ..
                }
            )
        },
        |e| {
            matches!(
                e,
                TlsError::BadCertificate { by: Side::Peer, .. }
                    | TlsError::NoSharedCipher { by: Side::Peer, .. }
            )
        },
    );
}

#[test]
fn silent_peer_times_out() {
    // A TCP peer that never speaks TLS: the handshake fails with Timeout, not a hang.
    let set = rsa();
    for b in common::backends() {
        let mut cp = profile(b, &set, false, &[Tls12, Tls13], &[]);
        cp.io_timeout_ms = 300;
        let be = gander_tls::backend::open(&cp).unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tcp = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let _held = l.accept().unwrap();
        let t = Instant::now();
        let r = be.client(tcp).and_then(|mut s| s.handshake());
        assert!(matches!(r, Err(TlsError::Timeout)), "{b}: {r:?}");
        assert!(t.elapsed() < Duration::from_secs(3));
    }
}
