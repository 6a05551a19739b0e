//! Hybrid and post-quantum key exchange (draft-ietf-tls-ecdhe-mlkem, FIPS 203) over loopback:
//! the negotiated group, the bytes each side sends, and a group mismatch that fails fast.
use crate::common;

use common::pki;
use gander_tls::backend::wire::WireBytes;
use gander_tls::pki::KeySpec;
use gander_tls::{backend, BackendKind, KxGroup, TlsError, TlsProfile, TlsVersion};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

fn profile(b: BackendKind, server: bool, groups: &[KxGroup]) -> TlsProfile {
    TlsProfile {
        versions: vec![TlsVersion::Tls13],
        cipher_suites: vec!["TLS_AES_128_GCM_SHA256".into()],
        groups: groups.to_vec(),
        io_timeout_ms: 5000,
        ..pki(KeySpec::P256).profile(b, server)
    }
}

struct Seen {
    group: Option<KxGroup>,
    /// The client's counters right after its handshake.
    client: WireBytes,
    /// The server's counters right after its handshake.
    server: WireBytes,
}

/// The errors of a failed handshake: (server, client).
type Failure = Box<(Option<TlsError>, Option<TlsError>)>;

/// One handshake; each side's negotiated group must agree.
fn handshake(server: &TlsProfile, client: &TlsProfile) -> Result<Seen, Failure> {
    let sb = backend::open(server).map_err(|e| Box::new((Some(e), None)))?;
    let cb = backend::open(client).map_err(|e| Box::new((None, Some(e))))?;
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    thread::scope(|scope| {
        let srv = scope.spawn(move || -> Result<(Option<KxGroup>, WireBytes), TlsError> {
            let (tcp, _) = listener.accept()?;
            let mut s = sb.server(tcp)?;
            s.handshake()?;
            let w = s.wire_bytes().ok_or(TlsError::Closed)?;
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf)?;
            s.write_all(b"pong")?;
            let _ = s.read(&mut buf);
            Ok((s.negotiated_group(), w))
        });
        let cli = (|| -> Result<(Option<KxGroup>, WireBytes), TlsError> {
            let tcp = TcpStream::connect(addr)?;
            let mut s = cb.client(tcp)?;
            s.handshake()?;
            let w = s.wire_bytes().ok_or(TlsError::Closed)?;
            s.write_all(b"ping")?;
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf)?;
            let g = s.negotiated_group();
            let _ = s.shutdown();
            Ok((g, w))
        })();
        let srv = srv.join().expect("server thread");
        match (srv, cli) {
            (Ok((gs, ws)), Ok((gc, wc))) => {
                assert_eq!(gs, gc, "both sides name the same group");
                Ok(Seen {
                    group: gc,
                    client: wc,
                    server: ws,
                })
            }
            (s, c) => Err(Box::new((s.err(), c.err()))),
        }
    })
}

#[test]
fn hybrid_handshake_negotiates_x25519mlkem768_and_carries_the_mlkem_shares() {
    let b = BackendKind::RustlsAwslc;
    let classical = handshake(
        &profile(b, true, &[KxGroup::X25519]),
        &profile(b, false, &[KxGroup::X25519]),
    )
    .unwrap_or_else(|e| panic!("classical handshake: {e:?}"));
    assert_eq!(classical.group, Some(KxGroup::X25519));
    let hybrid = handshake(
        &profile(b, true, &[KxGroup::X25519Mlkem768]),
        &profile(b, false, &[KxGroup::X25519Mlkem768]),
    )
    .unwrap_or_else(|e| panic!("hybrid handshake: {e:?}"));
    assert_eq!(hybrid.group, Some(KxGroup::X25519Mlkem768));

    // What one side sent, the other received (no tickets, nothing else in flight).
    for s in [&classical, &hybrid] {
        assert_eq!(s.client.sent, s.server.received);
        assert_eq!(s.server.sent, s.client.received);
    }
    // The hybrid adds the ML-KEM-768 encapsulation key (1184 B) to the ClientHello and the
    // ciphertext (1088 B) to the ServerHello (FIPS 203 Table 3). Everything else is the same
    // but for ECDSA signatures, whose DER length varies by a few bytes.
    let c = hybrid.client.sent as i64 - classical.client.sent as i64;
    let s = hybrid.server.sent as i64 - classical.server.sent as i64;
    assert!((c - 1184).abs() <= 8, "client sent {c} more bytes");
    assert!((s - 1088).abs() <= 8, "server sent {s} more bytes");
}

#[test]
fn mlkem768_alone_and_p256_negotiate() {
    let b = BackendKind::RustlsAwslc;
    for g in [KxGroup::Mlkem768, KxGroup::Secp256r1] {
        let seen = handshake(&profile(b, true, &[g]), &profile(b, false, &[g]))
            .unwrap_or_else(|e| panic!("{g}: {e:?}"));
        assert_eq!(seen.group, Some(g));
    }
}

#[test]
fn group_mismatch_fails_fast_with_no_shared_group() {
    // Client offers only MLKEM768, server accepts only x25519: the server has no common group
    // and ends the handshake with handshake_failure (RFC 8446 §4.1.1), not a hang.
    let started = Instant::now();
    let e = handshake(
        &profile(BackendKind::RustlsAwslc, true, &[KxGroup::X25519]),
        &profile(BackendKind::RustlsAwslc, false, &[KxGroup::Mlkem768]),
    )
    .err()
    .expect("the handshake must fail");
    assert!(started.elapsed() < Duration::from_secs(3), "{e:?}");
    assert!(
        matches!(e.0, Some(TlsError::NoSharedCipher { .. })),
        "server: {e:?}"
    );
    assert!(
        matches!(e.1, Some(TlsError::NoSharedCipher { .. })),
        "client: {e:?}"
    );
    // The same across libraries: an OpenSSL 3.0 server (no ML-KEM) and the aws-lc-rs client.
    let e = handshake(
        &profile(BackendKind::Openssl, true, &[KxGroup::X25519]),
        &profile(BackendKind::RustlsAwslc, false, &[KxGroup::Mlkem768]),
    )
    .err()
    .expect("the handshake must fail");
    assert!(
        matches!(e.1, Some(TlsError::NoSharedCipher { .. })),
        "{e:?}"
    );
}

#[test]
fn a_group_the_backend_lacks_is_a_profile_error() {
    let e = backend::open(&profile(
        BackendKind::Rustls,
        true,
        &[KxGroup::X25519Mlkem768],
    ))
    .err()
    .expect("ring has no ML-KEM");
    assert!(e.to_string().contains("X25519MLKEM768"), "{e}");
    if !backend::linked_openssl35() {
        let e = backend::open(&profile(BackendKind::Openssl35, true, &[]))
            .err()
            .expect("openssl35 runs in the other binary");
        assert!(e.to_string().contains("make build-ossl35"), "{e}");
    }
}

#[test]
fn openssl_classical_groups_interoperate_with_aws_lc() {
    for g in [KxGroup::X25519, KxGroup::Secp256r1] {
        let seen = handshake(
            &profile(BackendKind::Openssl, true, &[g]),
            &profile(BackendKind::RustlsAwslc, false, &[g]),
        )
        .unwrap_or_else(|e| panic!("{g}: {e:?}"));
        assert_eq!(seen.group, Some(g));
    }
}
