//! The TLS survey against in-process gander TLS servers on loopback, whose settings are known:
//! the survey must find exactly those.
use crate::common;

use gander_tls::backend::{self, TlsBackend};
use gander_tls::survey::{self, Level, SurveyError, SurveyOptions};
use gander_tls::{BackendKind, TlsProfile, TlsVersion};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

/// A TPKT + COTP CC, the answer an MMS server gives to the survey's CR.
const CC: [u8; 11] = [3, 0, 0, 11, 6, 0xD0, 0, 1, 0, 1, 0];

/// Serves `profile` on a loopback port: handshake, answer the first request with a CC, wait for
/// the client's close. One thread per connection; the listener lives as long as the test binary.
fn serve(profile: TlsProfile) -> SocketAddr {
    let b: Arc<dyn TlsBackend> = Arc::from(backend::open(&profile).expect("server backend"));
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        for tcp in l.incoming().flatten() {
            let b = b.clone();
            std::thread::spawn(move || {
                let Ok(mut s) = b.server(tcp) else { return };
                if s.handshake().is_err() {
                    return;
                }
                let mut buf = [0u8; 256];
                if matches!(s.read(&mut buf), Ok(n) if n > 0) {
                    let _ = s.write_all(&CC);
                    let _ = s.flush();
                }
                while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
                let _ = s.shutdown();
            });
        }
    });
    addr
}

/// What a server that speaks TLS 1.2 and nothing else answers to each version.
const TLS12_ONLY: [(&str, bool); 4] = [
    ("1.0", false),
    ("1.1", false),
    ("1.2", true),
    ("1.3", false),
];

/// The survey's application round as an MMS client makes it (gander-tls knows no MMS; the
/// real one is `gander_client::detect::MmsRound`): TPKT + COTP CR class 0, TPDU size 8192,
/// TSAPs 0x0001, confirmed by a CC.
#[derive(Debug)]
struct CotpRound;

impl survey::AppRound for CotpRound {
    fn request(&self) -> Vec<u8> {
        vec![
            0x03, 0x00, 0x00, 0x16, 0x11, 0xE0, 0x00, 0x00, 0x00, 0x01, 0x00, 0xC0, 0x01, 0x0D,
            0xC1, 0x02, 0x00, 0x01, 0xC2, 0x02, 0x00, 0x01,
        ]
    }
    fn is_confirm(&self, b: &[u8]) -> bool {
        b.len() >= 6 && b[0] == 3 && b[1] == 0 && b[5] & 0xF0 == 0xD0
    }
}

fn opts(quick: bool) -> SurveyOptions {
    SurveyOptions {
        timeout: Duration::from_secs(2),
        pause: Duration::from_millis(5),
        quick,
        round: Some(Arc::new(CotpRound)),
        parallel: 1,
    }
}

fn client(set: &gander_tls::pki::PkiSet) -> TlsProfile {
    TlsProfile {
        io_timeout_ms: 2000,
        ..set.profile(BackendKind::Openssl, false)
    }
}

/// The accepted suites' names, sorted.
fn accepted(s: &survey::TlsSurvey) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = s
        .suites
        .iter()
        .filter(|p| p.accepted)
        .map(|p| p.name)
        .collect();
    v.sort();
    v
}

/// `(version, accepted)` in the survey's order.
fn versions(s: &survey::TlsSurvey) -> Vec<(&str, bool)> {
    s.versions.iter().map(|(k, v)| (*k, *v)).collect()
}

fn level(s: &survey::TlsSurvey, id: &str) -> Option<Level> {
    s.verdicts.iter().find(|v| v.id == id).map(|v| v.level)
}

#[test]
fn tls12_two_suites_with_client_auth() {
    let set = common::rsa();
    let server = TlsProfile {
        versions: vec![TlsVersion::Tls12],
        cipher_suites: vec![
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into(),
            "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256".into(),
        ],
        require_client_auth: true,
        // Lets the client renegotiate (OpenSSL 3 refuses client-initiated renegotiation otherwise).
        renegotiation_interval_s: Some(3600),
        io_timeout_ms: 2000,
        ..set.profile(BackendKind::Openssl, true)
    };
    let addr = serve(server);
    let s = survey::survey(addr, &client(&set), &opts(false)).expect("survey");
    let text = survey::render(&s);
    println!("{text}");
    let v = versions(&s);
    assert_eq!(v, TLS12_ONLY);
    let acc = accepted(&s);
    assert_eq!(
        acc,
        [
            "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
        ]
    );
    for p in s.suites.iter().filter(|p| p.accepted) {
        assert!(p.ht_ms.is_some_and(|h| h > 0.0), "{}", p.name);
        assert_eq!(p.version, Some(TlsVersion::Tls12));
    }
    // The full catalogue was tried: more suites than the quick (mandatory/recommended) set.
    assert!(s.suites.len() > 20, "{}", s.suites.len());
    assert_eq!(s.client_cert_required, Some(true));
    assert_eq!(s.untrusted_client_cert_refused, Some(true));
    // The server answers the COTP CR: learned from the first round.
    assert_eq!(s.round_answered, Some(true));
    let n = s.negotiated.as_ref().expect("default handshake");
    assert_eq!(n.version, TlsVersion::Tls12);
    assert!(
        n.signature_scheme
            .as_deref()
            .is_some_and(|x| x.starts_with("rsa_")),
        "{n:?}"
    );
    assert!(n.group.is_some());
    // The server sends its leaf (the lab CA is left out of the chain it sends).
    assert_eq!(s.chain[0].key_type, "RSA");
    assert_eq!(s.chain[0].key_bits, 2048);
    assert!(s.chain[0].valid_now);
    assert_eq!(s.chain_trusted, Some(true));
    assert_eq!(s.renegotiation.secure_renegotiation, Some(true));
    assert_eq!(
        s.renegotiation.client_initiated.ok,
        Some(true),
        "{:?}",
        s.renegotiation
    );
    assert_eq!(
        s.resumption.tls12_session_id.ok,
        Some(true),
        "{:?}",
        s.resumption
    );
    assert_eq!(
        s.resumption.tls12_ticket.ok,
        Some(false),
        "{:?}",
        s.resumption
    );
    assert_eq!(s.resumption.tls13_psk.ok, None);
    assert_eq!(level(&s, "tls12-accepted"), Some(Level::Pass));
    assert_eq!(level(&s, "no-legacy-tls"), Some(Level::Pass));
    assert_eq!(level(&s, "client-cert-required"), Some(Level::Pass));
    assert_eq!(level(&s, "suites-in-profile"), Some(Level::Pass));
    // 0x003C (RSA key transport) is mandatory but not offered by this server.
    assert_eq!(level(&s, "mandatory-tls12-suites"), Some(Level::Warn));
    // The JSON shape `gander probe` merges.
    let j = serde_json::to_value(&s).expect("json");
    assert_eq!(j["versions"]["1.2"], true);
    assert_eq!(j["client_cert_required"], true);
    assert!(j["suites"][0]["name"].is_string());
    assert!(j["suites"][0]["iec_status"].is_string());
}

#[test]
fn without_credentials_suites_and_refusal_still_found() {
    // An engineer with only the CA (no client certificate yet) against a server that requires
    // one: the server chooses the suite in its ServerHello before refusing, which the survey sees.
    let set = common::rsa();
    let server = TlsProfile {
        versions: vec![TlsVersion::Tls12],
        cipher_suites: vec![
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into(),
            "TLS_RSA_WITH_AES_128_CBC_SHA256".into(),
        ],
        io_timeout_ms: 2000,
        ..set.profile(BackendKind::Openssl, true)
    };
    let addr = serve(server);
    let anon = TlsProfile {
        cert: None,
        key: None,
        require_client_auth: false,
        ..client(&set)
    };
    let s = survey::survey(addr, &anon, &opts(true)).expect("survey");
    let v = versions(&s);
    assert_eq!(v, TLS12_ONLY);
    let acc = accepted(&s);
    assert_eq!(
        acc,
        [
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_RSA_WITH_AES_128_CBC_SHA256"
        ]
    );
    // Refused handshakes give no HT.
    assert!(s.suites.iter().all(|p| p.ht_ms.is_none()));
    assert_eq!(s.client_cert_required, Some(true), "{:?}", s.client_auth);
    assert_eq!(
        s.untrusted_client_cert_refused,
        Some(true),
        "{:?}",
        s.client_auth
    );
    assert!(!s.chain.is_empty());
}

#[test]
fn tls13_without_client_auth() {
    let set = common::rsa();
    let server = TlsProfile {
        versions: vec![TlsVersion::Tls13],
        require_client_auth: false,
        session_tickets: true,
        io_timeout_ms: 2000,
        ..set.profile(BackendKind::Rustls, true)
    };
    let addr = serve(server);
    let s = survey::survey(addr, &client(&set), &opts(true)).expect("survey");
    println!("{}", survey::render(&s));
    let v = versions(&s);
    assert_eq!(
        v,
        [
            ("1.0", false),
            ("1.1", false),
            ("1.2", false),
            ("1.3", true)
        ]
    );
    // Quick: mandatory and recommended only. rustls has TLS 1.3 AES-GCM, not CCM.
    assert!(s.suites.iter().all(|p| matches!(
        p.iec_status,
        gander_tls::suites::IecStatus::Mandatory | gander_tls::suites::IecStatus::Recommended
    )));
    let acc = accepted(&s);
    assert_eq!(acc, ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"]);
    assert_eq!(s.client_cert_required, Some(false));
    // rustls without required client authentication still checks a certificate that is sent
    // (`allow_unauthenticated`): an unknown CA is refused even though no certificate is not.
    assert_eq!(s.untrusted_client_cert_refused, Some(true));
    assert_eq!(s.resumption.tls13_psk.ok, Some(true), "{:?}", s.resumption);
    assert_eq!(s.key_update.ok, Some(true), "{:?}", s.key_update);
    assert_eq!(s.renegotiation.client_initiated.ok, None);
    assert_eq!(level(&s, "tls12-accepted"), Some(Level::Fail));
    assert_eq!(level(&s, "client-cert-required"), Some(Level::Fail));
    assert_eq!(level(&s, "untrusted-client-cert"), Some(Level::Pass));
}

#[test]
fn tls13_client_auth_refusal_seen_at_first_read() {
    // rustls requiring client certificates, TLS 1.3 only: the refusal comes after the client's
    // Finished, so only the round after the handshake shows it.
    let set = common::rsa();
    let server = TlsProfile {
        versions: vec![TlsVersion::Tls13],
        require_client_auth: true,
        io_timeout_ms: 2000,
        ..set.profile(BackendKind::Rustls, true)
    };
    let addr = serve(server);
    let s = survey::survey(addr, &client(&set), &opts(true)).expect("survey");
    assert_eq!(s.client_cert_required, Some(true), "{:?}", s.client_auth);
    assert_eq!(
        s.untrusted_client_cert_refused,
        Some(true),
        "{:?}",
        s.client_auth
    );
    assert_eq!(s.client_auth.baseline.refused, Some(false));
}

#[test]
fn nothing_listening_plain_and_silent_servers_are_typed_errors() {
    let set = common::rsa();
    // Nothing listening: bind, note the port, close.
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let e = survey::survey(addr, &client(&set), &opts(true)).unwrap_err();
    assert!(matches!(e, SurveyError::Refused { .. }), "{e}");

    // A plain COTP server: answers a CR with a CC in the clear, closes on anything else.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let plain = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut tcp in l.incoming().flatten() {
            let mut b = [0u8; 512];
            if let Ok(n) = tcp.read(&mut b) {
                if n > 0 && b[0] == 3 {
                    let _ = tcp.write_all(&CC);
                }
            }
        }
    });
    let e = survey::survey(plain, &client(&set), &opts(true)).unwrap_err();
    assert!(matches!(e, SurveyError::NotTls { .. }), "{e}");

    // A server that accepts TCP and never says anything.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut keep = Vec::new();
        for tcp in l.incoming().flatten() {
            keep.push(tcp);
        }
    });
    let o = SurveyOptions {
        timeout: Duration::from_millis(300),
        pause: Duration::ZERO,
        quick: true,
        round: Some(Arc::new(CotpRound)),
        parallel: 1,
    };
    let e = survey::survey(silent, &client(&set), &o).unwrap_err();
    assert!(matches!(e, SurveyError::Timeout { .. }), "{e}");
}

#[test]
fn ecdsa_server_and_small_rsa_key() {
    // GnuTLS serving a P-256 certificate, TLS 1.2 and 1.3, no client authentication.
    let set = common::pki(gander_tls::pki::KeySpec::P256);
    let server = TlsProfile {
        versions: vec![TlsVersion::Tls12, TlsVersion::Tls13],
        require_client_auth: false,
        session_tickets: true,
        io_timeout_ms: 2000,
        ..set.profile(BackendKind::Gnutls, true)
    };
    let addr = serve(server);
    let s = survey::survey(addr, &client(&set), &opts(true)).expect("survey");
    assert_eq!(s.versions.get("1.2"), Some(&true));
    assert_eq!(s.versions.get("1.3"), Some(&true));
    let c = &s.chain[0];
    assert_eq!(
        (c.key_type.as_str(), c.key_bits, c.curve.as_deref()),
        ("EC", 256, Some("P-256"))
    );
    let n = s.negotiated.as_ref().expect("default handshake");
    assert_eq!(
        n.signature_scheme.as_deref(),
        Some("ecdsa_secp256r1_sha256"),
        "{n:?}"
    );
    let acc = accepted(&s);
    assert!(
        acc.contains(&"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
        "{acc:?}"
    );
    assert!(!acc.iter().any(|n| n.contains("_RSA_")), "{acc:?}");
    // ECDHE_ECDSA satisfies IEC 62351-4's ECDHE suite; the RSA-authenticated ones are missing.
    let m = s
        .verdicts
        .iter()
        .find(|v| v.id == "mandatory-tls12-suites")
        .expect("verdict");
    assert_eq!(m.level, Level::Warn);
    assert!(!m.detail.contains("ECDHE"), "{}", m.detail);
    assert!(
        m.detail.contains("TLS_RSA_WITH_AES_128_CBC_SHA256"),
        "{}",
        m.detail
    );
    assert_eq!(s.client_cert_required, Some(false));
    // Tickets on: RFC 5077 in TLS 1.2 and NewSessionTicket in TLS 1.3.
    assert_eq!(
        s.resumption.tls12_ticket.ok,
        Some(true),
        "{:?}",
        s.resumption
    );
    assert_eq!(s.resumption.tls13_psk.ok, Some(true), "{:?}", s.resumption);

    // OpenSSL serving an RSA-1024 certificate: the key-size verdict fails.
    let set = common::pki(gander_tls::pki::KeySpec::Rsa(1024));
    let server = TlsProfile {
        versions: vec![TlsVersion::Tls12],
        io_timeout_ms: 2000,
        ..set.profile(BackendKind::Openssl, true)
    };
    let addr = serve(server);
    let s = survey::survey(addr, &client(&set), &opts(true)).expect("survey");
    assert_eq!(s.chain[0].key_bits, 1024);
    assert_eq!(level(&s, "key-size"), Some(Level::Fail));
    assert_eq!(level(&s, "certificates"), None);
}
