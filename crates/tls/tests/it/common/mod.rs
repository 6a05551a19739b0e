//! Loopback harness: one PKI per test run, a server thread and a client over 127.0.0.1.
#![allow(dead_code)]
use gander_tls::pki::{self, KeySpec, PkiSet};
use gander_tls::{backend, BackendKind, TlsError, TlsProfile, TlsVersion};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::thread;

/// The backends this test binary can run: every one but `openssl35` (which runs in the binary
/// built with OpenSSL 3.5; `tests/it/ossl35.rs` covers it).
pub(crate) fn backends() -> Vec<BackendKind> {
    BackendKind::ALL
        .into_iter()
        .filter(|b| b.in_process())
        .collect()
}

/// The PKI for `spec`, generated once under the target's test temp dir and reused.
pub(crate) fn pki(spec: KeySpec) -> PkiSet {
    static LOCK: OnceLock<Mutex<()>> = OnceLock::new();
    let _g = LOCK
        .get_or_init(|| Mutex::new(()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gander-tls-pki");
    pki::init(&root, &[spec]).expect("pki init").remove(0).set
}

pub(crate) fn rsa() -> PkiSet {
    pki(KeySpec::Rsa(2048))
}

/// A mutual-auth profile with the set's server or client credentials.
pub(crate) fn profile(
    b: BackendKind,
    set: &PkiSet,
    server: bool,
    versions: &[TlsVersion],
    suites: &[&str],
) -> TlsProfile {
    TlsProfile {
        versions: versions.to_vec(),
        cipher_suites: suites.iter().map(|s| s.to_string()).collect(),
        io_timeout_ms: 5000,
        ..set.profile(b, server)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub version: Option<TlsVersion>,
    pub suite: Option<u16>,
    pub resumed: bool,
    pub peer_cert: bool,
}

/// Runs one connection: handshake, then the client sends "ping" and the server answers "pong".
/// Returns (server result, client result); a failure on either side is that side's `TlsError`.
pub(crate) fn run(
    server: &TlsProfile,
    client: &TlsProfile,
) -> (Result<Outcome, TlsError>, Result<Outcome, TlsError>) {
    let sb = match backend::open(server) {
        Ok(b) => b,
        Err(e) => {
            return (
                Err(e),
                Err(TlsError::HandshakeFailed("server not built".into())),
            )
        }
    };
    let cb = match backend::open(client) {
        Ok(b) => b,
        Err(e) => {
            return (
                Err(TlsError::HandshakeFailed("client not built".into())),
                Err(e),
            )
        }
    };
    run_with(&*sb, &*cb)
}

pub(crate) fn run_with(
    sb: &dyn backend::TlsBackend,
    cb: &dyn backend::TlsBackend,
) -> (Result<Outcome, TlsError>, Result<Outcome, TlsError>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    thread::scope(|scope| {
        let srv = scope.spawn(move || -> Result<Outcome, TlsError> {
            let (tcp, _) = listener.accept()?;
            let mut s = sb.server(tcp)?;
            s.handshake()?;
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf)?;
            assert_eq!(&buf, b"ping");
            s.write_all(b"pong")?;
            s.flush()?;
            let o = outcome(&*s);
            // Wait for the client's close so that the last flight is not cut off by a reset.
            let _ = s.read(&mut buf);
            Ok(o)
        });
        let cli = (|| -> Result<Outcome, TlsError> {
            let tcp = TcpStream::connect(addr)?;
            let mut s = cb.client(tcp)?;
            s.handshake()?;
            s.write_all(b"ping")?;
            s.flush()?;
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf)?;
            assert_eq!(&buf, b"pong");
            let o = outcome(&*s);
            let _ = s.shutdown();
            Ok(o)
        })();
        let srv = srv
            .join()
            .unwrap_or_else(|_| Err(TlsError::HandshakeFailed("server thread panicked".into())));
        (srv, cli)
    })
}

fn outcome(s: &dyn backend::TlsStream) -> Outcome {
    Outcome {
        version: s.negotiated_version(),
        suite: s.negotiated_suite_code(),
        resumed: s.session_resumed(),
        peer_cert: s.peer_certificate().is_some(),
    }
}

/// The suites to try per version: the RSE paper's five, Sandia's seven and TLS 1.3 AES-128-GCM.
pub(crate) fn reference_cases() -> Vec<(TlsVersion, &'static str)> {
    use gander_tls::suites;
    let mut v = Vec::new();
    for s in suites::rse_suites()
        .into_iter()
        .chain(suites::sandia_suites())
    {
        for ver in s.versions() {
            if !v.contains(&(ver, s.name)) {
                v.push((ver, s.name));
            }
        }
    }
    v.push((TlsVersion::Tls13, "TLS_AES_128_GCM_SHA256"));
    v
}
