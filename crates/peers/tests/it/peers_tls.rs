//! In-process server and client over TLS: the RSE suites, TLS 1.3, each backend, pinning.
use crate::common;
use common::*;
use gander_peers::events::name;
use gander_tls::{BackendKind, TlsVersion};

const ECDHE_GCM: &str = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
const RSA_CBC: &str = "TLS_RSA_WITH_AES_128_CBC_SHA256";
const T13: &str = "TLS_AES_128_GCM_SHA256";

fn round(sb: BackendKind, cb: BackendKind, v: TlsVersion, suite: &str, pin: bool) {
    let mut sp = profile(sb, true, &[v], &[suite]);
    let mut cp = profile(cb, false, &[v], &[suite]);
    if pin {
        let set = pki();
        sp.peer_cert = Some(set.client.clone());
        cp.peer_cert = Some(set.server.clone());
    }
    let srv = Running::start(server_cfg(Some(sp), 2));
    let (s, cev) = run_client(&client_cfg(srv.addr, Some(cp), 2, 5));
    let (sum, sev) = srv.finish();
    assert!(s.ok, "{sb}->{cb} {v} {suite}: {s:?}\n{cev:?}\n{sev:?}");
    assert_eq!((s.connections, s.reports), (2, 5));
    assert_eq!(s.suite.as_deref(), Some(suite));
    assert_eq!(s.version.as_deref(), Some(v.to_string().as_str()));
    assert_eq!(sum.errors, 0, "{sev:?}");
    for c in 1..=2u64 {
        let up: Vec<_> = sev
            .iter()
            .filter(|e| e.event == name::TLS_UP && e.conn == c)
            .collect();
        assert_eq!(up.len(), 1);
        assert_eq!(up[0].get_str("suite"), Some(suite));
        let t = |n: &str| {
            cev.iter()
                .find(|e| e.event == n && e.conn == c)
                .map(|e| e.t_ns)
                .unwrap()
        };
        assert!(t(name::TCP_UP) < t(name::TLS_UP) && t(name::TLS_UP) < t(name::HT_END));
    }
}

#[test]
fn openssl_tls12_ecdhe_gcm_pinned() {
    round(
        BackendKind::Openssl,
        BackendKind::Openssl,
        TlsVersion::Tls12,
        ECDHE_GCM,
        true,
    );
}

#[test]
fn openssl_tls12_rsa_cbc_sha256() {
    round(
        BackendKind::Openssl,
        BackendKind::Openssl,
        TlsVersion::Tls12,
        RSA_CBC,
        false,
    );
}

#[test]
fn openssl_tls13() {
    round(
        BackendKind::Openssl,
        BackendKind::Openssl,
        TlsVersion::Tls13,
        T13,
        true,
    );
}

#[test]
fn gnutls_server_rustls_client() {
    round(
        BackendKind::Gnutls,
        BackendKind::Rustls,
        TlsVersion::Tls12,
        ECDHE_GCM,
        true,
    );
    round(
        BackendKind::Rustls,
        BackendKind::Gnutls,
        TlsVersion::Tls13,
        T13,
        false,
    );
}
