//! Bad peers and bad input: each gives one ERROR event with a specific kind and a clean close of
//! that connection (bounded in time), never a panic or a hang, and the server keeps serving.
use crate::common;
use common::*;
use gander_mms::acse::{Aarq, Apdu, External};
use gander_mms::cotp::{self, ConnectParams, Tpdu};
use gander_mms::iso_session::{ConnectSpdu, Spdu};
use gander_mms::pdu::MmsPdu;
use gander_mms::presentation::{self, ConnectPpdu};
use gander_mms::service::Initiate;
use gander_mms::tpkt;
use gander_mms::Codec;
use gander_peers::events::name;
use gander_tls::{BackendKind, TlsProfile, TlsVersion};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const GCM: &str = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
const CBC: &str = "TLS_RSA_WITH_AES_128_CBC_SHA256";
const T13: &str = "TLS_AES_128_GCM_SHA256";

// ---------------------------------------------------------------------------------------------
// TLS

fn tls_case(sp: TlsProfile, cp: TlsProfile, server_kind: &str, client_kind: &str) {
    let srv = Running::start(server_cfg(Some(sp), 10));
    let t0 = Instant::now();
    let (s, cev) = run_client(&client_cfg(srv.addr, Some(cp), 1, 3));
    assert!(
        t0.elapsed() < Duration::from_secs(8),
        "client took {:?}",
        t0.elapsed()
    );
    assert!(!s.ok);
    assert_eq!(s.error.as_deref(), Some(client_kind), "client: {s:?}");
    assert_eq!(error_kinds(&cev), vec![client_kind.to_string()]);
    let ev = srv.wait_for(name::CLOSED);
    let (sum, sev) = srv.finish();
    assert!(!ev.is_empty());
    assert_eq!(error_kinds(&sev), vec![server_kind.to_string()], "{sev:?}");
    assert_eq!(sum.associations, 0);
    assert!(sev.iter().any(|e| e.event == name::CLOSED));
}

fn sp12() -> TlsProfile {
    let mut p = profile(BackendKind::Openssl, true, &[TlsVersion::Tls12], &[GCM]);
    p.peer_cert = None;
    p
}
fn cp12() -> TlsProfile {
    profile(BackendKind::Openssl, false, &[TlsVersion::Tls12], &[GCM])
}

#[test]
fn client_certificate_from_unknown_ca() {
    let set = pki();
    let mut cp = cp12();
    cp.cert = Some(set.other.clone());
    tls_case(sp12(), cp, "tls-unknown-ca", "tls-unknown-ca");
}

#[test]
fn server_certificate_from_unknown_ca() {
    let set = pki();
    let mut cp = cp12();
    cp.ca = vec![set.other_ca.clone()];
    // The client refuses the server; the server learns it from the client's alert.
    tls_case(sp12(), cp, "tls-unknown-ca", "tls-unknown-ca");
}

#[test]
fn client_certificate_other_than_the_pinned_one() {
    let set = pki();
    let mut sp = sp12();
    sp.peer_cert = Some(set.client.clone());
    let mut cp = cp12();
    cp.cert = Some(set.revoked.clone()); // same CA, valid, but not the pinned certificate
    tls_case(sp, cp, "tls-pin-mismatch", "tls-bad-certificate");
}

#[test]
fn expired_client_certificate() {
    let set = pki();
    let mut cp = cp12();
    cp.cert = Some(set.expired.clone());
    tls_case(sp12(), cp, "tls-expired", "tls-expired");
}

#[test]
fn revoked_client_certificate() {
    let set = pki();
    let mut sp = sp12();
    sp.crl = vec![set.crl_revoked.clone()];
    let mut cp = cp12();
    cp.cert = Some(set.revoked.clone());
    tls_case(sp, cp, "tls-revoked", "tls-revoked");
}

#[test]
fn version_the_profile_forbids() {
    let cp = profile(BackendKind::Openssl, false, &[TlsVersion::Tls13], &[T13]);
    tls_case(sp12(), cp, "tls-protocol-version", "tls-protocol-version");
}

#[test]
fn suite_the_profile_forbids() {
    let cp = profile(BackendKind::Openssl, false, &[TlsVersion::Tls12], &[CBC]);
    tls_case(sp12(), cp, "tls-no-shared-cipher", "tls-no-shared-cipher");
}

#[test]
fn plain_client_to_tls_server_and_back() {
    // A cleartext COTP CR to a TLS server: a TLS error, not a hang.
    let srv = Running::start(server_cfg(Some(sp12()), 10));
    let (s, _) = run_client(&client_cfg(srv.addr, None, 1, 0));
    assert!(!s.ok, "{s:?}");
    let (_, sev) = srv.finish();
    let k = error_kinds(&sev);
    assert_eq!(k.len(), 1, "{sev:?}");
    assert!(k[0].starts_with("tls-"), "{k:?}");
    // A TLS client to a plain server.
    let srv = Running::start(server_cfg(None, 10));
    let (s, _) = run_client(&client_cfg(srv.addr, Some(cp12()), 1, 0));
    assert!(
        !s.ok && s.error.as_deref().unwrap_or("").starts_with("tls-"),
        "{s:?}"
    );
    let (_, sev) = srv.finish();
    let k = error_kinds(&sev);
    assert_eq!(k.len(), 1, "{sev:?}");
    assert!(
        k[0].starts_with("tpkt-") || k[0].starts_with("cotp-"),
        "{k:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Garbage from a raw-socket peer (plain TCP server)

fn cr() -> Vec<u8> {
    tpkt::frame(&Tpdu::ConnectionRequest(ConnectParams::libiec61850_request()).to_vec()).unwrap()
}

fn dt(spdu: &[u8]) -> Vec<u8> {
    cotp::data_tpdus(spdu, 8192)
        .into_iter()
        .flat_map(|d| tpkt::frame(&d).unwrap())
        .collect()
}

fn cn(cp: &[u8]) -> Vec<u8> {
    dt(&Spdu::Connect(ConnectSpdu::libiec61850_connect(cp)).to_vec())
}

fn aarq(initiate: Vec<u8>) -> Vec<u8> {
    Apdu::Aarq(Aarq::libiec61850(initiate)).to_vec()
}

fn good_initiate() -> Vec<u8> {
    MmsPdu::InitiateRequest(Initiate::libiec61850_request()).to_vec()
}

fn associate() -> Vec<u8> {
    let mut v = cr();
    v.extend(cn(&ConnectPpdu::libiec61850(aarq(good_initiate())).to_vec()));
    v
}

/// Sends `bytes` (then half-closes if `close`), and waits for the server to close. Returns the
/// server's ERROR kinds for this connection.
fn raw_case(bytes: &[u8], close: bool) -> Vec<String> {
    let mut cfg = server_cfg(None, 10);
    cfg.timeout_ms = 700;
    let srv = Running::start(cfg);
    let mut s = TcpStream::connect(srv.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(bytes).unwrap();
    if close {
        s.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let t0 = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        assert!(
            t0.elapsed() < Duration::from_secs(4),
            "server did not close"
        );
    }
    assert!(
        t0.elapsed() < Duration::from_secs(4),
        "server did not close in time"
    );
    srv.wait_for(name::CLOSED);
    // The server still serves a well-behaved client afterwards.
    let (ok, _) = run_client(&client_cfg(srv.addr, None, 1, 2));
    assert!(ok.ok, "server unusable after bad input: {ok:?}");
    let (_, sev) = srv.finish();
    sev.iter()
        .filter(|e| e.event == name::ERROR && e.conn == 1)
        .filter_map(|e| e.get_str("kind").map(str::to_owned))
        .collect()
}

fn one_kind(bytes: &[u8], close: bool, prefix: &str) -> String {
    let k = raw_case(bytes, close);
    assert_eq!(k.len(), 1, "{k:?}");
    assert!(k[0].starts_with(prefix), "expected {prefix}*, got {k:?}");
    k[0].clone()
}

#[test]
fn tpkt_bad_version() {
    assert_eq!(
        one_kind(&[4, 0, 0, 8, 1, 2, 3, 4], false, "tpkt-"),
        "tpkt-version"
    );
}

#[test]
fn tpkt_too_short() {
    assert_eq!(
        one_kind(&[3, 0, 0, 3, 0, 0, 0], false, "tpkt-"),
        "tpkt-too-short"
    );
}

#[test]
fn tpkt_too_large() {
    let mut v = vec![3, 0, 0xFF, 0xFF];
    v.extend([0u8; 64]);
    assert_eq!(one_kind(&v, false, "tpkt-"), "tpkt-too-large");
}

#[test]
fn tpkt_truncated_then_closed() {
    let c = cr();
    assert_eq!(one_kind(&c[..9], true, "tpkt-"), "tpkt-truncated");
}

#[test]
fn cotp_garbage() {
    one_kind(&tpkt::frame(&[3, 0xFF, 0, 0]).unwrap(), false, "cotp-");
}

#[test]
fn cotp_data_before_connect() {
    assert_eq!(
        one_kind(&dt(&[1, 0, 1, 0]), false, "cotp-"),
        "cotp-unexpected-pdu"
    );
}

#[test]
fn session_garbage() {
    let mut v = cr();
    v.extend(dt(&[0xFF, 2, 0, 0]));
    one_kind(&v, false, "session-");
}

#[test]
fn presentation_garbage() {
    let mut v = cr();
    v.extend(cn(&[0x31, 0x03, 0xA0, 0x01, 0xFF]));
    one_kind(&v, false, "presentation-");
}

#[test]
fn acse_garbage() {
    let mut v = cr();
    v.extend(cn(&ConnectPpdu::libiec61850(vec![
        0x60, 0x03, 0xA1, 0x05, 0x00,
    ])
    .to_vec()));
    one_kind(&v, false, "acse-");
}

#[test]
fn mms_garbage_in_the_initiate() {
    let mut v = cr();
    let mut a = Aarq::libiec61850(Vec::new());
    a.user_information = Some(External {
        indirect_reference: Some(3),
        data: vec![0xA8, 0x05, 0x80, 0x09, 0x00],
    });
    v.extend(cn(
        &ConnectPpdu::libiec61850(Apdu::Aarq(a).to_vec()).to_vec()
    ));
    one_kind(&v, false, "mms-");
}

#[test]
fn mms_garbage_after_association() {
    // ISO 9506-2 7.5: an MMS PDU that does not parse is answered with a reject (pdu-error,
    // invalid-pdu: `A4 03 85 01 01`) and the association lives on; the client's close ends it,
    // and no MMS error is logged.
    let mut v = associate();
    v.extend(dt(&Spdu::Data(&presentation::user_data(
        3,
        vec![0xA0, 0x06, 0x02, 0x01],
    ))
    .to_vec()));
    let mut cfg = server_cfg(None, 10);
    cfg.timeout_ms = 700;
    let srv = Running::start(cfg);
    let mut s = TcpStream::connect(srv.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(&v).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let reject = [0xA4, 0x03, 0x85, 0x01, 0x01];
    while !got.windows(reject.len()).any(|w| w == reject) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => panic!("closed without a reject: {got:02x?}"),
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    s.shutdown(std::net::Shutdown::Both).unwrap();
    srv.wait_for(name::CLOSED);
    let (_, sev) = srv.finish();
    let kinds: Vec<String> = sev
        .iter()
        .filter(|e| e.event == name::ERROR && e.conn == 1)
        .filter_map(|e| e.get_str("kind").map(str::to_owned))
        .collect();
    assert!(kinds.iter().all(|k| !k.starts_with("mms-")), "{kinds:?}");
}

#[test]
fn truncated_after_association() {
    let mut v = associate();
    let d = dt(&Spdu::Data(&presentation::user_data(3, good_initiate())).to_vec());
    v.extend(&d[..d.len() - 3]);
    assert_eq!(one_kind(&v, true, "tpkt-"), "tpkt-truncated");
}

#[test]
fn silent_peer_times_out() {
    assert_eq!(one_kind(&[], false, "timeout"), "timeout");
}

#[test]
fn random_garbage_never_panics_or_hangs() {
    // A fixed xorshift stream: 40 connections of random bytes after a valid CR.
    let mut x: u64 = 0x9E3779B97F4A7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut cfg = server_cfg(None, 10);
    cfg.timeout_ms = 300;
    let srv = Running::start(cfg);
    for i in 0..40 {
        let mut v = if i % 2 == 0 { cr() } else { associate() };
        let n = (next() % 200) as usize + 1;
        v.extend((0..n).map(|_| next() as u8));
        let mut s = TcpStream::connect(srv.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let _ = s.write_all(&v);
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut buf = [0u8; 4096];
        let t0 = Instant::now();
        while let Ok(k) = s.read(&mut buf) {
            if k == 0 {
                break;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(2),
            "connection {i} not closed"
        );
    }
    let (ok, _) = run_client(&client_cfg(srv.addr, None, 1, 1));
    assert!(ok.ok, "{ok:?}");
    let (sum, sev) = srv.finish();
    assert_eq!(sum.connections, 41);
    let errs = sev.iter().filter(|e| e.event == name::ERROR).count();
    assert_eq!(errs, 40, "every garbage connection gives exactly one ERROR");
}

/// A client that ends without a release (an ABORT after the association, a TCP close between
/// packets, a COTP DR) is how many clients leave, libiec61850's `IedConnection_abort` among
/// them: the event log names each, but the server's summary counts them apart from its
/// errors. Garbage on the same server is still an error.
#[test]
fn a_client_that_ends_without_a_release_is_not_an_error() {
    let mut cfg = server_cfg(None, 10);
    cfg.timeout_ms = 700;
    let srv = Running::start(cfg);
    let abort = dt(&Spdu::Abort {
        transport_disconnect: Some(gander_mms::iso_session::ABORT_TRANSPORT_DISCONNECT),
        user_data: &[],
    }
    .to_vec());
    let dr = tpkt::frame(
        &Tpdu::DisconnectRequest {
            dst_ref: 1,
            src_ref: 2,
            reason: 0,
        }
        .to_vec(),
    )
    .unwrap();
    let cases: [(Vec<u8>, Option<Vec<u8>>); 4] = [
        (associate(), Some(abort)),        // ABORT once associated
        (associate(), None),               // TCP closed between packets
        (cr(), Some(dr)),                  // COTP DR after the CC
        (vec![0x03, 0, 0, 5, 0xff], None), // garbage: an error
    ];
    for (first, then) in cases {
        let mut s = TcpStream::connect(srv.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        s.write_all(&first).unwrap();
        let mut buf = [0u8; 4096];
        // The server's answer (CC, or CC and AC) before the client ends.
        let _ = s.read(&mut buf);
        std::thread::sleep(Duration::from_millis(50));
        if let Some(b) = then {
            s.write_all(&b).unwrap();
        }
        s.shutdown(std::net::Shutdown::Both).unwrap();
    }
    let t0 = Instant::now();
    while srv
        .sink
        .snapshot()
        .iter()
        .filter(|e| e.event == name::CLOSED)
        .count()
        < 4
    {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "connections not closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (summary, ev) = srv.finish();
    let kinds = error_kinds(&ev);
    assert!(kinds.contains(&"peer-aborted".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"closed".to_string()), "{kinds:?}");
    assert!(
        kinds.contains(&"peer-disconnected".to_string()),
        "{kinds:?}"
    );
    assert_eq!(
        (summary.ended_by_client, summary.errors),
        (3, 1),
        "{summary:?} {kinds:?}"
    );
}
