//! Where a TLS 1.2 handshake's time goes (`cargo run --release -p gander-bench --example
//! handshake_anatomy`): the decomposition behind `docs/reproduction.md`, "Where HT goes".
//!
//! OpenSSL only, with the configuration gander's OpenSSL backend uses (`crates/tls`): one
//! context per side built once, TLS 1.2 only, one suite, mutual authentication, the CA in the
//! context's store, the peer certificate pinned in a verify callback, no session cache, no
//! tickets. Measured, each as a median over many repetitions:
//!
//! 1. the whole handshake with both sides in one thread over in-memory buffers: no sockets, no
//!    wake-ups, no scheduler; the CPU time of each side is timed separately;
//! 2. the same with parts switched off: no pin callback, no client authentication, no chain
//!    verification at all, P-256 instead of X25519;
//! 3. the components: `SSL_new`, certificate decoding, chain verification, the public-key
//!    operations of the floor, and RSA verification with a freshly decoded key;
//! 4. the same handshake over loopback TCP and over a Unix socketpair between two threads,
//!    blocking and busy-polling, with each thread's CPU time beside the wall time (what the
//!    sockets add to the work itself, and what is waiting);
//! 5. the record layer after the handshake: `SSL_write` and `SSL_read` of one report-sized
//!    record in memory, the floor of what TLS can add to RT.
//!
//! Two processes (as `gander run` runs the peers) are the TLS sub-step of `gander run`.

use foreign_types::ForeignTypeRef;
use gander_measure::stats::Summary;
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private, Public};
use openssl::rsa::Padding;
use openssl::sign::{Signer, Verifier};
use openssl::ssl::{
    HandshakeError, MidHandshakeSslStream, Ssl, SslContext, SslContextBuilder, SslFiletype,
    SslMethod, SslOptions, SslSessionCacheMode, SslStream, SslVerifyMode, SslVersion,
};
use openssl::stack::Stack;
use openssl::x509::store::{X509Store, X509StoreBuilder};
use openssl::x509::{X509StoreContext, X509};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::os::raw::c_int;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

extern "C" {
    fn SSL_get_peer_signature_type_nid(s: *const openssl_sys::SSL, pnid: *mut c_int) -> c_int;
}
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;

/// What a handshake variant switches on.
#[derive(Clone, Debug)]
pub struct Variant {
    /// Row label in the anatomy's tables.
    pub name: &'static str,
    /// The server requires a client certificate (IEC 62351-3).
    pub mutual: bool,
    /// The peer certificate is compared in a verify callback (gander's pinning).
    pub pin: bool,
    /// Chains are verified at all.
    pub verify: bool,
    /// `SSL_CTX_set1_groups_list`, e.g. `X25519` or `P-256`.
    pub groups: &'static str,
    /// Own chain built once per context (`SSL_CTX_build_cert_chain`, root left out) instead of
    /// OpenSSL's default: build it from the trust store in every handshake and send the root too.
    pub chain_once: bool,
}

/// The variants of step 2, gander's configuration first.
pub fn variants() -> Vec<Variant> {
    let g = |name, mutual, pin, verify, groups, chain_once| Variant {
        name,
        mutual,
        pin,
        verify,
        groups,
        chain_once,
    };
    vec![
        g(
            "gander as before (mutual, pinned, X25519, chain built per handshake)",
            true,
            true,
            true,
            "X25519",
            false,
        ),
        g(
            "gander, own chain built once per context",
            true,
            true,
            true,
            "X25519",
            true,
        ),
        g("mutual, no pin callback", true, false, true, "X25519", true),
        g(
            "server authentication only",
            false,
            false,
            true,
            "X25519",
            true,
        ),
        g(
            "no chain verification at all",
            false,
            false,
            false,
            "X25519",
            true,
        ),
        g(
            "gander, P-256 instead of X25519",
            true,
            true,
            true,
            "P-256",
            true,
        ),
    ]
}

/// The PEM files of one side.
pub struct Creds<'a> {
    /// CA certificate (PEM).
    pub ca: &'a Path,
    /// Own certificate (PEM).
    pub cert: &'a Path,
    /// Own private key (PEM).
    pub key: &'a Path,
    /// The peer's certificate (PEM), for pinning.
    pub peer: &'a Path,
}

/// Why a step of the anatomy could not be measured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnatomyError {
    /// OpenSSL refused a set-up or cryptographic call.
    #[error(transparent)]
    OpenSsl(#[from] openssl::error::ErrorStack),
    /// A PEM file could not be read.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// `SSL_write` or `SSL_read` failed after the handshake.
    #[error(transparent)]
    Ssl(#[from] openssl::ssl::Error),
    /// `SSL_CTX_build_cert_chain` failed (its return value).
    #[error("SSL_CTX_build_cert_chain: {0}")]
    BuildChain(std::os::raw::c_long),
    /// The handshake failed.
    #[error("handshake failed")]
    Handshake(#[source] openssl::ssl::Error),
    /// The in-memory handshake did not finish within 20 rounds.
    #[error("handshake did not finish")]
    Unfinished,
    /// The server side of a threaded handshake panicked.
    #[error("server thread panicked")]
    ServerPanicked,
    /// The server's chain did not verify against the CA.
    #[error("chain did not verify")]
    ChainRejected,
    /// A signature just made did not verify.
    #[error("bad signature")]
    BadSignature,
    /// A record came back shorter than sent.
    #[error("read {got} of {len}")]
    ShortRead {
        /// Bytes read.
        got: usize,
        /// Bytes written.
        len: usize,
    },
    /// Nothing was timed (zero budget and zero minimum).
    #[error("no samples")]
    NoSamples,
}

fn e<T, E: Into<AnatomyError>>(r: Result<T, E>) -> Result<T, AnatomyError> {
    r.map_err(Into::into)
}

/// A handshake error, with the stream dropped.
fn handshake_error<S>(h: HandshakeError<S>) -> AnatomyError {
    match h {
        HandshakeError::SetupFailure(x) => AnatomyError::OpenSsl(x),
        HandshakeError::Failure(m) | HandshakeError::WouldBlock(m) => {
            AnatomyError::Handshake(m.into_error())
        }
    }
}

/// A context configured as `crates/tls`'s OpenSSL backend configures one.
pub fn context(
    server: bool,
    c: &Creds,
    v: &Variant,
) -> Result<(SslContext, Vec<u8>), AnatomyError> {
    let mut b = e(SslContextBuilder::new(SslMethod::tls()))?;
    e(b.set_min_proto_version(Some(SslVersion::TLS1_2)))?;
    e(b.set_max_proto_version(Some(SslVersion::TLS1_2)))?;
    e(b.set_cipher_list("ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=1"))?;
    b.set_security_level(1);
    e(b.set_groups_list(v.groups))?;
    let ca = e(X509::from_pem(&e(std::fs::read(c.ca))?))?;
    e(b.cert_store_mut().add_cert(ca))?;
    if server || v.mutual {
        e(b.set_certificate_chain_file(c.cert))?;
        e(b.set_private_key_file(c.key, SslFiletype::PEM))?;
        if v.chain_once {
            // SSL_CTX_build_cert_chain(ctx, SSL_BUILD_CHAIN_FLAG_NO_ROOT)
            // SAFETY: plain ctrl call on a live context.
            let r =
                unsafe { openssl_sys::SSL_CTX_ctrl(b.as_ptr(), 105, 0x2, std::ptr::null_mut()) };
            if r != 1 {
                return Err(AnatomyError::BuildChain(r));
            }
        }
    }
    e(b.set_session_id_context(b"gander-iec62351"))?;
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    b.set_options(SslOptions::NO_TICKET);
    let pin = e(X509::from_pem(&e(std::fs::read(c.peer))?))?;
    Ok((b.build(), e(pin.to_der())?))
}

/// One side's SSL object with gander's per-connection settings (verify mode and pin callback).
fn ssl(ctx: &SslContext, server: bool, v: &Variant, pin: &[u8]) -> Result<Ssl, AnatomyError> {
    let mut s = e(Ssl::new(ctx))?;
    let mode = match (v.verify, server, v.mutual) {
        (false, _, _) => SslVerifyMode::NONE,
        (true, false, _) => SslVerifyMode::PEER,
        (true, true, true) => SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
        (true, true, false) => SslVerifyMode::NONE,
    };
    if v.pin && v.verify {
        let pin = pin.to_vec();
        s.set_verify_callback(mode, move |ok, x| {
            if !ok || x.error_depth() != 0 {
                return ok;
            }
            x.current_cert()
                .and_then(|c| c.to_der().ok())
                .is_some_and(|d| d == pin)
        });
    } else {
        s.set_verify(mode);
    }
    Ok(s)
}

/// One direction of an in-memory connection.
#[derive(Clone, Default)]
struct Pipe {
    rx: Rc<RefCell<VecDeque<u8>>>,
    tx: Rc<RefCell<VecDeque<u8>>>,
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut q = self.rx.borrow_mut();
        if q.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(q.len());
        for (d, s) in buf.iter_mut().zip(q.drain(..n)) {
            *d = s;
        }
        Ok(n)
    }
}

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tx.borrow_mut().extend(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Side {
    Mid(MidHandshakeSslStream<Pipe>),
    Done(SslStream<Pipe>),
}

fn step(r: Result<SslStream<Pipe>, HandshakeError<Pipe>>) -> Result<Side, AnatomyError> {
    match r {
        Ok(s) => Ok(Side::Done(s)),
        Err(HandshakeError::WouldBlock(m)) => Ok(Side::Mid(m)),
        Err(h) => Err(handshake_error(h)),
    }
}

/// One in-memory handshake: (total, client CPU, server CPU) ns, negotiated group and the
/// signature schemes each side saw.
pub struct MemHandshake {
    /// Wall time of the whole handshake, ns.
    pub total_ns: u64,
    /// Time spent in the client's handshake calls, ns.
    pub client_ns: u64,
    /// Time spent in the server's handshake calls, ns.
    pub server_ns: u64,
    /// Negotiated key-exchange group (OpenSSL short name).
    pub group: String,
    /// Signature scheme of the server's handshake signature, as the client saw it.
    pub server_sig: String,
    /// Signature scheme of the client's CertificateVerify, as the server saw it (`-`: none).
    pub client_sig: String,
    /// Handshake calls made on both sides until both finished.
    pub flights: u32,
    /// Certificates the client received from the server.
    pub server_chain_len: usize,
}

fn nid_name(nid: c_int) -> String {
    openssl::nid::Nid::from_raw(nid)
        .short_name()
        .map(str::to_string)
        .unwrap_or_else(|_| format!("nid {nid}"))
}

/// One handshake between an in-memory client and server on this thread, each step timed.
pub fn mem_handshake(
    sctx: &SslContext,
    cctx: &SslContext,
    v: &Variant,
    spin: &[u8],
    cpin: &[u8],
) -> Result<MemHandshake, AnatomyError> {
    let a = Pipe::default();
    let b = Pipe {
        rx: a.tx.clone(),
        tx: a.rx.clone(),
    };
    let t0 = Instant::now();
    let cs = ssl(cctx, false, v, cpin)?;
    let mut c = step(cs.connect(a))?;
    let mut client_ns = t0.elapsed().as_nanos() as u64;
    let t = Instant::now();
    let ss = ssl(sctx, true, v, spin)?;
    let mut s = step(ss.accept(b))?;
    let mut server_ns = t.elapsed().as_nanos() as u64;
    let mut flights = 2;
    for _ in 0..20 {
        if let (Side::Done(_), Side::Done(_)) = (&c, &s) {
            break;
        }
        if let Side::Mid(m) = c {
            let t = Instant::now();
            c = step(m.handshake())?;
            client_ns += t.elapsed().as_nanos() as u64;
            flights += 1;
        }
        if let Side::Mid(m) = s {
            let t = Instant::now();
            s = step(m.handshake())?;
            server_ns += t.elapsed().as_nanos() as u64;
            flights += 1;
        }
    }
    let total_ns = t0.elapsed().as_nanos() as u64;
    let (Side::Done(c), Side::Done(s)) = (c, s) else {
        return Err(AnatomyError::Unfinished);
    };
    let sig = |x: &SslStream<Pipe>| {
        let mut nid: c_int = 0;
        // SAFETY: valid SSL pointer, out-parameter.
        let ok = unsafe { SSL_get_peer_signature_type_nid(x.ssl().as_ptr(), &mut nid) };
        if ok == 1 {
            nid_name(nid)
        } else {
            "-".into()
        }
    };
    // SAFETY: plain ctrl call on a live SSL.
    let g = unsafe {
        openssl_sys::SSL_ctrl(
            s.ssl().as_ptr(),
            SSL_CTRL_GET_NEGOTIATED_GROUP,
            0,
            std::ptr::null_mut(),
        )
    };
    Ok(MemHandshake {
        total_ns,
        client_ns,
        server_ns,
        group: nid_name(g as c_int),
        server_sig: sig(&c),
        client_sig: sig(&s),
        flights,
        server_chain_len: c.ssl().peer_cert_chain().map(|x| x.len()).unwrap_or(0),
    })
}

/// Times `f` for about `budget` (at least `min` times, after one warm-up call); median ns.
pub fn time(
    budget: Duration,
    min: usize,
    mut f: impl FnMut() -> Result<(), AnatomyError>,
) -> Result<Summary, AnatomyError> {
    f()?;
    let mut v = Vec::new();
    let start = Instant::now();
    while v.len() < min || (start.elapsed() < budget && v.len() < 100_000) {
        let t = Instant::now();
        f()?;
        v.push(t.elapsed().as_nanos() as u64);
    }
    Summary::from_samples(&v).ok_or(AnatomyError::NoSamples)
}

/// The component costs of step 3, each (name, summary in ns).
pub fn components(
    server: &Creds,
    client: &Creds,
    budget: Duration,
) -> Result<Vec<(String, Summary)>, AnatomyError> {
    let mut out = Vec::new();
    let v = &variants()[0];
    let (sctx, _) = context(true, server, v)?;
    let (cctx, _) = context(false, client, v)?;
    out.push((
        "SSL_new (client)".into(),
        time(budget, 50, || e(Ssl::new(&cctx)).map(|_| ()))?,
    ));
    out.push((
        "SSL_new (server)".into(),
        time(budget, 50, || e(Ssl::new(&sctx)).map(|_| ()))?,
    ));
    let leaf_der = e(e(X509::from_pem(&e(std::fs::read(server.cert))?))?.to_der())?;
    let ca = e(X509::from_pem(&e(std::fs::read(server.ca))?))?;
    out.push((
        "decode a certificate (d2i_X509, RSA-2048 leaf)".into(),
        time(budget, 50, || e(X509::from_der(&leaf_der)).map(|_| ()))?,
    ));
    let store: X509Store = {
        let mut b = e(X509StoreBuilder::new())?;
        e(b.add_cert(ca.clone()))?;
        b.build()
    };
    let chain = e(Stack::<X509>::new())?;
    let verify_chain = |leaf: &X509| -> Result<(), AnatomyError> {
        let mut ctx = e(X509StoreContext::new())?;
        let ok = e(ctx.init(&store, leaf, &chain, |c| c.verify_cert()))?;
        if ok {
            Ok(())
        } else {
            Err(AnatomyError::ChainRejected)
        }
    };
    out.push((
        "decode + verify the chain (X509_verify_cert)".into(),
        time(budget, 50, || verify_chain(&e(X509::from_der(&leaf_der))?))?,
    ));
    let leaf = e(X509::from_der(&leaf_der))?;
    out.push((
        "verify the chain of an already decoded certificate".into(),
        time(budget, 50, || verify_chain(&leaf))?,
    ));
    let ca_pub = e(ca.public_key())?;
    out.push((
        "certificate signature alone (X509_verify, CA key decoded once)".into(),
        time(budget, 50, || e(leaf.verify(&ca_pub)).map(|_| ()))?,
    ));
    let ca_spki = e(ca_pub.public_key_to_der())?;
    out.push((
        "decode an RSA-2048 public key (d2i_PUBKEY)".into(),
        time(budget, 50, || {
            e(PKey::public_key_from_der(&ca_spki)).map(|_| ())
        })?,
    ));
    let key: PKey<Private> = e(PKey::private_key_from_pem(&e(std::fs::read(server.key))?))?;
    let spki = e(key.public_key_to_der())?;
    let msg = [0x5au8; 100];
    for (name, pss) in [("PKCS1", false), ("PSS", true)] {
        let sign = |k: &PKey<Private>| -> Result<Vec<u8>, AnatomyError> {
            let mut s = e(Signer::new(MessageDigest::sha256(), k))?;
            if pss {
                e(s.set_rsa_padding(Padding::PKCS1_PSS))?;
            }
            e(s.update(&msg))?;
            e(s.sign_to_vec())
        };
        out.push((
            format!("RSA-2048 {name} sign"),
            time(budget, 20, || sign(&key).map(|_| ()))?,
        ));
        let sig = sign(&key)?;
        let verify = |k: &PKey<Public>| -> Result<(), AnatomyError> {
            let mut v = e(Verifier::new(MessageDigest::sha256(), k))?;
            if pss {
                e(v.set_rsa_padding(Padding::PKCS1_PSS))?;
            }
            e(v.update(&msg))?;
            if e(v.verify(&sig))? {
                Ok(())
            } else {
                Err(AnatomyError::BadSignature)
            }
        };
        let pubk = e(PKey::public_key_from_der(&spki))?;
        out.push((
            format!("RSA-2048 {name} verify (key decoded once)"),
            time(budget, 50, || verify(&pubk))?,
        ));
        let rsa = e(pubk.rsa())?;
        let (n, ex) = (e(rsa.n().to_owned())?, e(rsa.e().to_owned())?);
        use openssl::bn::BigNumRef;
        out.push((
            format!("RSA-2048 {name} verify with a fresh key from (n, e), no decoder"),
            time(budget, 50, || {
                let r = e(openssl::rsa::Rsa::from_public_components(
                    e(BigNumRef::to_owned(&n))?,
                    e(BigNumRef::to_owned(&ex))?,
                ))?;
                verify(&e(PKey::from_rsa(r))?)
            })?,
        ));
        out.push((
            format!("RSA-2048 {name} verify with a freshly decoded key"),
            time(budget, 50, || verify(&e(PKey::public_key_from_der(&spki))?))?,
        ));
    }
    let peer = e(PKey::generate_x25519())?;
    let peer_pub = e(PKey::public_key_from_raw_bytes(
        &e(peer.raw_public_key())?,
        openssl::pkey::Id::X25519,
    ))?;
    out.push((
        "X25519 key generation".into(),
        time(budget, 50, || e(PKey::generate_x25519()).map(|_| ()))?,
    ));
    let mine = e(PKey::generate_x25519())?;
    out.push((
        "X25519 derivation".into(),
        time(budget, 50, || {
            let mut d = e(openssl::derive::Deriver::new(&mine))?;
            e(d.set_peer(&peer_pub))?;
            e(d.derive_to_vec()).map(|_| ())
        })?,
    ));
    Ok(out)
}

/// One handshake between two threads: the client's elapsed time from `SSL_new` to a finished
/// handshake and the CPU time each side's thread spent in it, ns.
#[derive(Clone, Copy, Debug)]
pub struct Threaded {
    /// Client's elapsed time from `SSL_new` to a finished handshake, ns.
    pub wall_ns: u64,
    /// CPU time of the client's thread in the handshake, ns.
    pub client_cpu_ns: u64,
    /// CPU time of the server's thread in the handshake, ns.
    pub server_cpu_ns: u64,
}

/// A handshake between two threads over a connected pair of streams.
pub fn threaded_handshake<S: Read + Write + Send + 'static + std::fmt::Debug>(
    sctx: &SslContext,
    cctx: &SslContext,
    v: &Variant,
    spin: &[u8],
    cpin: &[u8],
    pair: (S, S),
) -> Result<Threaded, AnatomyError> {
    let (cs, ss) = pair;
    let sssl = ssl(sctx, true, v, spin)?;
    let h = std::thread::spawn(move || {
        let c0 = thread_cpu_ns();
        let mut s = sssl.accept(ss).map_err(handshake_error)?;
        let c1 = thread_cpu_ns();
        let mut b = [0u8; 1];
        let _ = s.read(&mut b);
        Ok::<u64, AnatomyError>(c1 - c0)
    });
    let t = Instant::now();
    let c0 = thread_cpu_ns();
    let c = ssl(cctx, false, v, cpin)?;
    let mut c = c.connect(cs).map_err(handshake_error)?;
    let ccpu = thread_cpu_ns() - c0;
    let ns = t.elapsed().as_nanos() as u64;
    let _ = c.write(b"x");
    let scpu = h.join().map_err(|_| AnatomyError::ServerPanicked)??;
    Ok(Threaded {
        wall_ns: ns,
        client_cpu_ns: ccpu,
        server_cpu_ns: scpu,
    })
}

/// A non-blocking TCP stream whose reads and writes spin on `WouldBlock` instead of sleeping
/// (busy-polling peers): separates the cost of the scheduler's wake-ups from the rest.
#[derive(Debug)]
pub struct Spin(pub std::net::TcpStream);

impl Spin {
    /// Makes `t` non-blocking and wraps it.
    pub fn new(t: std::net::TcpStream) -> io::Result<Self> {
        t.set_nonblocking(true)?;
        Ok(Spin(t))
    }
}

impl Read for Spin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::hint::spin_loop(),
                r => return r,
            }
        }
    }
}

impl Write for Spin {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            match self.0.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::hint::spin_loop(),
                r => return r,
            }
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), ns: what one side of a
/// handshake spent computing, as opposed to waiting for the other.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer; the clock id is a constant the kernel supports.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// After an in-memory handshake, `n` records of `len` bytes from server to client: median ns
/// of `SSL_write` and of `SSL_read`.
pub fn mem_records(
    sctx: &SslContext,
    cctx: &SslContext,
    v: &Variant,
    spin: &[u8],
    cpin: &[u8],
    len: usize,
    n: usize,
) -> Result<(u64, u64), AnatomyError> {
    let a = Pipe::default();
    let b = Pipe {
        rx: a.tx.clone(),
        tx: a.rx.clone(),
    };
    let mut c = step(ssl(cctx, false, v, cpin)?.connect(a))?;
    let mut s = step(ssl(sctx, true, v, spin)?.accept(b))?;
    for _ in 0..20 {
        if let Side::Mid(m) = c {
            c = step(m.handshake())?;
        }
        if let Side::Mid(m) = s {
            s = step(m.handshake())?;
        }
    }
    let (Side::Done(mut c), Side::Done(mut s)) = (c, s) else {
        return Err(AnatomyError::Unfinished);
    };
    let msg = vec![0x5au8; len];
    let mut buf = vec![0u8; len + 64];
    let (mut w, mut r) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = Instant::now();
        s.ssl_write(&msg)?;
        let t1 = Instant::now();
        let got = c.ssl_read(&mut buf)?;
        let t2 = Instant::now();
        if got != len {
            return Err(AnatomyError::ShortRead { got, len });
        }
        w.push((t1 - t).as_nanos() as u64);
        r.push((t2 - t1).as_nanos() as u64);
    }
    w.sort_unstable();
    r.sort_unstable();
    Ok((w[n / 2], r[n / 2]))
}
