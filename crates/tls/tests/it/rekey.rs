//! TLS 1.3 KeyUpdate (RFC 8446 §4.6.3) on every backend, TLS 1.2 secure renegotiation (RFC 5746)
//! on OpenSSL and GnuTLS (each way, between the two, and at a profile interval), and the
//! `Unsupported` error where a backend cannot rekey (rustls, by design).
use crate::common;
use common::*;
use gander_tls::TlsVersion::*;
use gander_tls::{backend, BackendKind, TlsError, TlsVersion};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    for b in common::backends() {
        rekey_round(b, Tls13).unwrap_or_else(|e| panic!("{b}: {e}"));
    }
}

#[test]
fn renegotiation_tls12() {
    for b in [BackendKind::Openssl, BackendKind::Gnutls] {
        rekey_round(b, Tls12).unwrap_or_else(|e| panic!("{b}: {e}"));
    }
    assert!(matches!(
        rekey_round(BackendKind::Rustls, Tls12),
        Err(TlsError::Unsupported { .. })
    ));
}

/// Forwards one connection both ways and counts, per direction, the handshake records (TLS 1.2
/// content type 22, visible in the record header) sent after that direction's first application
/// data record: that is renegotiation traffic.
struct Relay {
    addr: SocketAddr,
    c2s: Arc<AtomicUsize>,
    s2c: Arc<AtomicUsize>,
}

fn pump(mut from: TcpStream, mut to: TcpStream, count: Arc<AtomicUsize>) {
    let mut buf = [0u8; 16 * 1024];
    let mut acc = Vec::new();
    let mut seen_app = false;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
        acc.extend_from_slice(&buf[..n]);
        while acc.len() >= 5 {
            let len = u16::from_be_bytes([acc[3], acc[4]]) as usize;
            if acc.len() < 5 + len {
                break;
            }
            match acc[0] {
                23 => seen_app = true,
                22 if seen_app => {
                    count.fetch_add(1, Ordering::SeqCst);
                }
                _ => {}
            }
            acc.drain(..5 + len);
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

fn relay(upstream: SocketAddr) -> Relay {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let c2s = Arc::new(AtomicUsize::new(0));
    let s2c = Arc::new(AtomicUsize::new(0));
    let (a, b) = (c2s.clone(), s2c.clone());
    std::thread::spawn(move || {
        let (down, _) = l.accept().unwrap();
        let up = TcpStream::connect(upstream).unwrap();
        let (d2, u2) = (down.try_clone().unwrap(), up.try_clone().unwrap());
        let t = std::thread::spawn(move || pump(d2, u2, a));
        pump(up, down, b);
        let _ = t.join();
    });
    Relay { addr, c2s, s2c }
}

#[derive(Clone, Copy, Debug)]
enum Who {
    /// `rekey()` by the client before rounds 1 and 3.
    Client,
    /// `rekey()` by the server before it answers rounds 1 and 3.
    Server,
    /// No explicit call: both profiles renegotiate every second, for 2.5 s of traffic.
    Interval,
}

/// TLS 1.2 echo through a [`Relay`]; returns the renegotiation records counted (c->s, s->c).
fn renegotiating_echo(server: BackendKind, client: BackendKind, who: Who) -> (usize, usize) {
    let set = rsa();
    let interval = match who {
        Who::Interval => 1,
        _ => 86_400,
    };
    let mut sp = profile(server, &set, true, &[Tls12], &[]);
    // An OpenSSL server sends application data right after its HelloRequest, which a GnuTLS client
    // cannot take (see docs/tls.md): with a GnuTLS client only the client renegotiates then.
    sp.renegotiation_interval_s = Some(
        if server == BackendKind::Openssl && client == BackendKind::Gnutls {
            86_400
        } else {
            interval
        },
    );
    let mut cp = profile(client, &set, false, &[Tls12], &[]);
    cp.renegotiation_interval_s = Some(interval);
    let sb = backend::open(&sp).unwrap();
    let cb = backend::open(&cp).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let r = relay(l.local_addr().unwrap());
    let ctx = format!("{server} server, {client} client, {who:?}");
    std::thread::scope(|scope| {
        let server_ctx = ctx.clone();
        let srv = scope.spawn(move || {
            let (tcp, _) = l.accept().unwrap();
            let mut s = sb.server(tcp).unwrap();
            let mut buf = [0u8; 8];
            let mut round = 0u32;
            loop {
                match s.read(&mut buf[..1]) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) => panic!("{server_ctx}: server read: {e}"),
                }
                s.read_exact(&mut buf[1..])
                    .unwrap_or_else(|e| panic!("{server_ctx}: server read: {e}"));
                if matches!(who, Who::Server) && (round == 1 || round == 3) {
                    s.rekey()
                        .unwrap_or_else(|e| panic!("{server_ctx}: server rekey: {e}"));
                }
                s.write_all(&buf)
                    .unwrap_or_else(|e| panic!("{server_ctx}: server write: {e}"));
                round += 1;
            }
            round
        });
        let mut c = cb.client(TcpStream::connect(r.addr).unwrap()).unwrap();
        c.handshake().unwrap();
        let start = Instant::now();
        let mut round = 0u32;
        loop {
            let done = match who {
                Who::Interval => start.elapsed() > Duration::from_millis(2500),
                _ => round >= 5,
            };
            if done {
                break;
            }
            if matches!(who, Who::Client) && (round == 1 || round == 3) {
                c.rekey()
                    .unwrap_or_else(|e| panic!("{ctx}: client rekey: {e}"));
            }
            let msg = format!("msg{round:05}");
            c.write_all(msg.as_bytes())
                .unwrap_or_else(|e| panic!("{ctx}: client write: {e}"));
            let mut buf = [0u8; 8];
            c.read_exact(&mut buf)
                .unwrap_or_else(|e| panic!("{ctx}: client read: {e}"));
            assert_eq!(&buf, msg.as_bytes(), "{ctx}");
            round += 1;
            if matches!(who, Who::Interval) {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let _ = c.shutdown();
        drop(c);
        assert_eq!(srv.join().unwrap(), round, "{ctx}");
    });
    // The relay sees the close after the streams are dropped; its counters are final by then.
    std::thread::sleep(Duration::from_millis(50));
    (r.c2s.load(Ordering::SeqCst), r.s2c.load(Ordering::SeqCst))
}

const RENEG_PAIRS: [(BackendKind, BackendKind); 3] = [
    (BackendKind::Gnutls, BackendKind::Gnutls),
    (BackendKind::Gnutls, BackendKind::Openssl),
    (BackendKind::Openssl, BackendKind::Gnutls),
];

#[test]
fn renegotiation_tls12_client_initiated_gnutls_openssl() {
    for (s, c) in RENEG_PAIRS {
        let (c2s, s2c) = renegotiating_echo(s, c, Who::Client);
        // Two renegotiations: each has at least a ClientHello one way and a ServerHello back.
        assert!(c2s >= 2 && s2c >= 2, "{s}/{c}: {c2s} {s2c}");
    }
}

#[test]
fn renegotiation_tls12_server_initiated_gnutls_openssl() {
    // Not OpenSSL server -> GnuTLS client: see `renegotiating_echo`.
    for (s, c) in &RENEG_PAIRS[..2] {
        let (s, c) = (*s, *c);
        let (c2s, s2c) = renegotiating_echo(s, c, Who::Server);
        // HelloRequest + ServerHello.. from the server, ClientHello.. from the client, twice.
        assert!(c2s >= 2 && s2c >= 4, "{s}/{c}: {c2s} {s2c}");
    }
}

#[test]
fn renegotiation_tls12_at_interval_gnutls_openssl() {
    for (s, c) in RENEG_PAIRS {
        let (c2s, s2c) = renegotiating_echo(s, c, Who::Interval);
        assert!(c2s >= 2 && s2c >= 2, "{s}/{c}: {c2s} {s2c}");
    }
}

/// A GnuTLS server whose profile sets no renegotiation interval refuses a client's renegotiation
/// (as an OpenSSL 3 server does), with a fatal no_renegotiation alert.
#[test]
fn gnutls_server_refuses_client_renegotiation_without_interval() {
    let set = rsa();
    let sp = profile(BackendKind::Gnutls, &set, true, &[Tls12], &[]);
    let cp = profile(BackendKind::Gnutls, &set, false, &[Tls12], &[]);
    let sb = backend::open(&sp).unwrap();
    let cb = backend::open(&cp).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::scope(|scope| {
        let srv = scope.spawn(|| {
            let (tcp, _) = l.accept().unwrap();
            let mut s = sb.server(tcp).unwrap();
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf).unwrap();
            s.write_all(&buf).unwrap();
            s.read_exact(&mut buf)
        });
        let mut c = cb.client(TcpStream::connect(addr).unwrap()).unwrap();
        let mut buf = [0u8; 4];
        c.write_all(b"one!").unwrap();
        c.read_exact(&mut buf).unwrap();
        assert!(c.rekey().is_err());
        let e = srv.join().unwrap().unwrap_err();
        assert!(e.to_string().contains("renegotiation"), "{e}");
    });
}
