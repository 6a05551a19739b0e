//! TLS 1.3 KeyUpdate (RFC 8446 §4.6.3) on every backend, TLS 1.2 renegotiation (RFC 5746) on
//! OpenSSL, and the `Unsupported` error where a backend cannot rekey.
mod common;
use common::*;
use gander_tls::TlsVersion::*;
use gander_tls::{backend, BackendKind, TlsError, TlsVersion};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

/// Echo server; the client rekeys between two round trips. Returns the client's rekey result.
fn rekey_round(b: BackendKind, v: TlsVersion) -> Result<(), TlsError> {
    let set = rsa();
    // An interval turns on OpenSSL 3's acceptance of client-initiated renegotiation.
    let mut sp = profile(b, &set, true, &[v], &[]);
    sp.renegotiation_interval_s = Some(86_400);
    let mut cp = profile(b, &set, false, &[v], &[]);
    cp.renegotiation_interval_s = Some(86_400);
    let sb = backend::open(&sp).unwrap();
    let cb = backend::open(&cp).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let (tcp, _) = l.accept().unwrap();
            let mut s = sb.server(tcp).unwrap();
            let mut buf = [0u8; 4];
            for _ in 0..2 {
                if s.read_exact(&mut buf).is_err() || s.write_all(&buf).is_err() {
                    return;
                }
            }
        });
        let mut c = cb.client(TcpStream::connect(addr).unwrap()).unwrap();
        c.handshake().unwrap();
        let mut buf = [0u8; 4];
        c.write_all(b"one!").unwrap();
        c.read_exact(&mut buf).unwrap();
        let r = c.rekey();
        c.write_all(b"two!").unwrap();
        c.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"two!");
        r
    })
}

#[test]
fn key_update_tls13_every_backend() {
    for b in BackendKind::ALL {
        rekey_round(b, Tls13).unwrap_or_else(|e| panic!("{b}: {e}"));
    }
}

#[test]
fn renegotiation_tls12() {
    rekey_round(BackendKind::Openssl, Tls12).unwrap();
    for b in [BackendKind::Rustls, BackendKind::Gnutls] {
        assert!(
            matches!(rekey_round(b, Tls12), Err(TlsError::Unsupported { .. })),
            "{b}"
        );
    }
}
