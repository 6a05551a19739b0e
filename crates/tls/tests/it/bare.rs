//! The bare handshake (`gander_tls::bare`): both ends in one thread, per backend, TLS 1.2 and
//! 1.3, with resumption, and the failures it must report instead of hanging.
use crate::common;
use common::*;
use gander_tls::bare::{self, BareError};
use gander_tls::{backend, TlsVersion};

const S12: &str = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
const S13: &str = "TLS_AES_128_GCM_SHA256";

#[test]
fn every_backend_completes_in_lockstep() {
    let set = rsa();
    for b in backends() {
        for (v, suite) in [(TlsVersion::Tls12, S12), (TlsVersion::Tls13, S13)] {
            let caps = backend::capabilities(b);
            if !caps.versions.contains(&v) {
                continue;
            }
            let sp = profile(b, &set, true, &[v], &[suite]);
            let cp = profile(b, &set, false, &[v], &[suite]);
            let (s, c) = (backend::open(&sp).unwrap(), backend::open(&cp).unwrap());
            let times = bare::repeat(c.as_ref(), s.as_ref(), 1, 3)
                .unwrap_or_else(|e| panic!("{b} {v}: {e}"));
            assert_eq!(times.len(), 3);
            assert!(times.iter().all(|t| *t > 0), "{b} {v}: {times:?}");
        }
    }
}

#[test]
fn resumption_profiles_resume() {
    let set = rsa();
    for b in backends() {
        let mut sp = profile(b, &set, true, &[TlsVersion::Tls12], &[S12]);
        let mut cp = profile(b, &set, false, &[TlsVersion::Tls12], &[S12]);
        sp.session_resumption = true;
        cp.session_resumption = true;
        let (s, c) = (backend::open(&sp).unwrap(), backend::open(&cp).unwrap());
        let first = bare::handshake(c.as_ref(), s.as_ref()).unwrap();
        let second = bare::handshake(c.as_ref(), s.as_ref()).unwrap();
        assert!(!first.resumed, "{b}: first handshake cannot resume");
        assert!(
            second.resumed,
            "{b}: second handshake should resume a TLS 1.2 session id"
        );
    }
}

#[test]
fn version_mismatch_is_an_error_not_a_hang() {
    let set = rsa();
    for b in backends() {
        let sp = profile(b, &set, true, &[TlsVersion::Tls12], &[S12]);
        let cp = profile(b, &set, false, &[TlsVersion::Tls13], &[S13]);
        let (s, c) = (backend::open(&sp).unwrap(), backend::open(&cp).unwrap());
        match bare::handshake(c.as_ref(), s.as_ref()) {
            Err(BareError::Handshake { .. }) => {}
            other => panic!("{b}: expected a handshake failure, got {other:?}"),
        }
    }
}
