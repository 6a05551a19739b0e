//! The bare handshake: one TLS handshake of a library with nothing around it, the reference
//! `gander run` measures its HT against (`docs/measurement.md`, "HT accounting").
//!
//! Both ends are built from the same [`TlsBackend`] objects the peers use (same library, suite,
//! keys, verification and pinning), and one thread drives them in lockstep with
//! [`TlsStream::handshake_step`] over a non-blocking loopback TCP pair: each flight is written
//! by one end and read by the other in the same thread, so no process boundary, no scheduler
//! wake-up and no MMS are in the time. What is left besides the library's own work is the
//! kernel's loopback copy of each flight (a few microseconds; `docs/measurement.md` says how
//! much). A one-thread in-memory pipe would remove that too, but not for GnuTLS, whose sessions
//! gander binds to a socket; the same transport for every library keeps the rows comparable.

use crate::backend::{TlsBackend, TlsStream};
use crate::TlsError;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Lockstep rounds after which a handshake that makes no progress is abandoned.
const MAX_IDLE_ROUNDS: u32 = 10_000;

/// One bare handshake's outcome.
#[derive(Clone, Copy, Debug)]
pub struct BareHandshake {
    /// Wall time from making the two streams to both ends complete.
    pub elapsed: Duration,
    /// CPU time of this thread over the same span (user + system: the library's work and the
    /// kernel's loopback copies). Equal to `elapsed` on an idle machine; on a busy one it is not
    /// inflated by waiting for a core, so it is what [`repeat`] returns.
    pub cpu: Duration,
    /// Whether the client resumed a session.
    pub resumed: bool,
}

/// Why a bare handshake could not be timed.
#[derive(Debug, thiserror::Error)]
pub enum BareError {
    /// The loopback pair could not be set up.
    #[error("loopback pair for the bare handshake: {0}")]
    Socket(#[from] std::io::Error),
    /// The handshake failed on one end.
    #[error("bare handshake failed on the {side}: {source}")]
    Handshake {
        /// `client` or `server`.
        side: &'static str,
        /// What the library reported.
        #[source]
        source: TlsError,
    },
    /// Neither end made progress for [`MAX_IDLE_ROUNDS`] rounds.
    #[error("bare handshake stalled: no progress in {MAX_IDLE_ROUNDS} lockstep rounds")]
    Stalled,
}

pub(crate) fn pair() -> std::io::Result<(TcpStream, TcpStream)> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let c = TcpStream::connect(l.local_addr()?)?;
    let (s, _) = l.accept()?;
    for t in [&c, &s] {
        t.set_nodelay(true)?;
    }
    Ok((c, s))
}

/// Runs one handshake between `client` and `server` in this thread and times it. The streams
/// are closed with close_notify afterwards so session state (tickets) is kept as in a run.
pub fn handshake(
    client: &dyn TlsBackend,
    server: &dyn TlsBackend,
) -> Result<BareHandshake, BareError> {
    let (c, s, h) = establish(client, server)?;
    finish(c, s);
    Ok(h)
}

/// A handshaken pair: the client stream, the server stream and how the handshake went.
pub type Established = (Box<dyn TlsStream>, Box<dyn TlsStream>, BareHandshake);

/// A client and a server stream of `client` / `server`, handshaken in lockstep in this thread
/// over a loopback TCP pair (timed as [`handshake`] times it), left open and non-blocking: the
/// in-memory record round trip ([`crate::record_rt`]) runs on them. The client has written one
/// application byte that the server has not read yet (see the loop).
pub fn establish(
    client: &dyn TlsBackend,
    server: &dyn TlsBackend,
) -> Result<Established, BareError> {
    let (ct, st) = pair()?;
    let hs = |side, source| BareError::Handshake { side, source };
    // Timed from before the streams are made: a run's HT holds the per-connection set-up
    // (`SSL_new`, `gnutls_init`, rustls' connection state) too.
    let start = Instant::now();
    let cpu0 = thread_cpu_ns();
    let mut c = client.client(ct).map_err(|e| hs("client", e))?;
    let mut s = server.server(st).map_err(|e| hs("server", e))?;
    // The backends set blocking timeouts; lockstep needs the sockets non-blocking.
    c.tcp().set_nonblocking(true)?;
    s.tcp().set_nonblocking(true)?;
    let (mut c_done, mut s_done) = (false, false);
    let mut idle = 0u32;
    while !(c_done && s_done) {
        let before = (c_done, s_done);
        if !c_done {
            c_done = c.handshake_step().map_err(|e| hs("client", e))?;
            if c_done {
                // The client's first application record, as the COTP CR is in a run. GnuTLS
                // holds a TLS 1.3 client's last flight back until the next write (measured: the
                // server otherwise sees it only when its delayed ACK releases it, ~40 ms later).
                c.write_all(&[0])
                    .map_err(|e| hs("client", TlsError::from(e)))?;
            }
        }
        if !s_done {
            s_done = s.handshake_step().map_err(|e| hs("server", e))?;
        }
        if (c_done, s_done) == before {
            idle += 1;
            if idle > MAX_IDLE_ROUNDS {
                return Err(BareError::Stalled);
            }
        } else {
            idle = 0;
        }
    }
    let elapsed = start.elapsed();
    let cpu = Duration::from_nanos(thread_cpu_ns().saturating_sub(cpu0));
    let resumed = c.session_resumed();
    Ok((
        c,
        s,
        BareHandshake {
            elapsed,
            cpu,
            resumed,
        },
    ))
}

/// Lets the client read what the server sent after its last flight (TLS 1.3 tickets, so a
/// resumption profile resumes next time), then closes both ends.
pub(crate) fn finish(mut c: Box<dyn TlsStream>, mut s: Box<dyn TlsStream>) {
    for t in [c.tcp(), s.tcp()] {
        let _ = t.set_nonblocking(false);
        let _ = t.set_read_timeout(Some(Duration::from_millis(200)));
    }
    let mut buf = [0u8; 512];
    // The server reads the client's one application byte before closing (no reset).
    let _ = s.read(&mut buf);
    let _ = s.shutdown();
    // Reads until the server's close_notify: tickets in between are processed by the library.
    while let Ok(n) = c.read(&mut buf) {
        if n == 0 {
            break;
        }
    }
    let _ = c.shutdown();
}

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`, POSIX `clock_gettime`), ns.
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer; the clock id is a constant Linux supports.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `n` bare handshakes after `warmup` untimed ones: the CPU time of each, ns.
pub fn repeat(
    client: &dyn TlsBackend,
    server: &dyn TlsBackend,
    warmup: usize,
    n: usize,
) -> Result<Vec<u64>, BareError> {
    for _ in 0..warmup {
        handshake(client, server)?;
    }
    (0..n)
        .map(|_| handshake(client, server).map(|h| h.cpu.as_nanos() as u64))
        .collect()
}
