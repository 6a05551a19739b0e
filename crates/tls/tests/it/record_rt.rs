//! The in-memory record round trip (`gander_tls::record_rt`): one report-sized record from a
//! server stream to a client stream of the same backend objects, per backend, TLS 1.2 and 1.3.
use crate::common;
use common::*;
use gander_tls::record_rt::{self, RecordRtError};
use gander_tls::{backend, TlsVersion};
use std::time::Duration;

const S12: &str = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
const S13: &str = "TLS_AES_128_GCM_SHA256";

#[test]
fn every_backend_times_a_record_and_its_plain_twin() {
    let set = rsa();
    for b in backends() {
        for (v, suite) in [(TlsVersion::Tls12, S12), (TlsVersion::Tls13, S13)] {
            if !backend::capabilities(b).versions.contains(&v) {
                continue;
            }
            let sp = profile(b, &set, true, &[v], &[suite]);
            let cp = profile(b, &set, false, &[v], &[suite]);
            let (s, c) = (backend::open(&sp).unwrap(), backend::open(&cp).unwrap());
            let r = record_rt::measure(c.as_ref(), s.as_ref(), 200, 5, 50, Duration::ZERO)
                .unwrap_or_else(|e| panic!("{b} {v}: {e}"));
            assert_eq!((r.bytes, r.n), (200, 50));
            assert!(r.tls_ns > 0 && r.plain_ns > 0, "{b} {v}: {r:?}");
            assert_eq!(r.added_ns(), r.tls_ns.saturating_sub(r.plain_ns));
        }
    }
}

#[test]
fn a_record_larger_than_one_tls_record_arrives_whole() {
    // 20000 octets: two TLS records (16384 is the most plaintext one record carries, RFC 5246
    // §6.2.1, RFC 8446 §5.1); the client keeps reading until every octet is there.
    let set = rsa();
    for b in backends() {
        let sp = profile(b, &set, true, &[TlsVersion::Tls12], &[S12]);
        let cp = profile(b, &set, false, &[TlsVersion::Tls12], &[S12]);
        let (s, c) = (backend::open(&sp).unwrap(), backend::open(&cp).unwrap());
        let r = record_rt::measure(
            c.as_ref(),
            s.as_ref(),
            20_000,
            1,
            3,
            Duration::from_micros(200),
        )
        .unwrap_or_else(|e| panic!("{b}: {e}"));
        assert_eq!(r.bytes, 20_000);
    }
}

#[test]
fn an_empty_record_is_refused() {
    let set = rsa();
    let b = backend::BackendKind::Openssl;
    let sp = profile(b, &set, true, &[TlsVersion::Tls12], &[S12]);
    let cp = profile(b, &set, false, &[TlsVersion::Tls12], &[S12]);
    let (s, c) = (backend::open(&sp).unwrap(), backend::open(&cp).unwrap());
    assert!(matches!(
        record_rt::measure(c.as_ref(), s.as_ref(), 0, 0, 1, Duration::ZERO),
        Err(RecordRtError::Empty)
    ));
}
