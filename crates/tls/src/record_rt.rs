//! The in-memory record round trip: one report-sized TLS record from a server stream to a client
//! stream of the same backend objects, in one thread, with nothing around it. It is the
//! reference `gander run` splits each report's RT over TLS against (`docs/measurement.md`, "RT
//! accounting"), as the bare handshake ([`crate::bare`]) is for HT.
//!
//! A report over TLS is one `SSL_write` / `gnutls_record_send` / rustls write of the whole MMS
//! PDU on the server (one TLS record, RFC 5246 §6.2, RFC 8446 §5) and reads of that record on
//! the client. The same two calls are timed here on a pair made by [`crate::bare::establish`]
//! (same library, suite, keys, verification as the peers), alternating with the same bytes over
//! a plain loopback TCP pair in the same thread. Their difference is what the library adds to
//! one report: record framing, the AEAD seal and open, its buffer handling and any extra system
//! calls it makes (OpenSSL without read-ahead reads a record's header and body with two
//! `recv`s). No process boundary, no scheduler wake-up and no MMS are in either time; the
//! kernel's loopback copy is in both and cancels.
//!
//! GnuTLS sessions are bound to a socket by gander ([`crate::backend::gnutls`]), so the pair is a
//! loopback TCP pair for every library (memory BIOs would leave GnuTLS out); subtracting the
//! plain pair's time removes the kernel's share.
use crate::backend::{TlsBackend, TlsStream};
use crate::bare::{self, BareError};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Read timeout on both pairs: a record that does not arrive in this time is an error.
const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// The timed round trips of one backend pair, ns (medians of wall time per record).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecordRoundTrip {
    /// Plaintext octets per record (the MMS PDU as written, TPKT included).
    pub bytes: usize,
    /// Records timed on each pair (after the warm-up).
    pub n: usize,
    /// Median server write + client read of one TLS record.
    pub tls_ns: u64,
    /// Median write + read of the same octets over a plain loopback TCP pair.
    pub plain_ns: u64,
}

impl RecordRoundTrip {
    /// What the library adds to one record: `tls_ns - plain_ns` (0 when the plain pair was
    /// slower, which only noise can make).
    pub fn added_ns(&self) -> u64 {
        self.tls_ns.saturating_sub(self.plain_ns)
    }
}

/// Why the record round trip could not be timed.
#[derive(Debug, thiserror::Error)]
pub enum RecordRtError {
    /// The TLS pair could not be handshaken.
    #[error("record round trip: handshake")]
    Handshake(#[source] BareError),
    /// A socket option or the plain pair failed.
    #[error("record round trip: socket")]
    Socket(#[from] std::io::Error),
    /// A record could not be written or read.
    #[error("record round trip: {side} failed to {what} a record")]
    Record {
        /// `client` or `server`.
        side: &'static str,
        /// `write` or `read`.
        what: &'static str,
        /// What the library or the socket said.
        #[source]
        source: std::io::Error,
    },
    /// The peer closed before the whole record arrived.
    #[error("record round trip: {side} closed after {got} of {want} octets")]
    Short {
        /// The end that read 0.
        side: &'static str,
        /// Octets read.
        got: usize,
        /// Octets expected.
        want: usize,
    },
    /// A zero-length record measures nothing.
    #[error("record round trip: a record needs at least one octet")]
    Empty,
}

/// Writes `rec` on `tx` and reads it whole on `rx` into `buf`; the time it took.
fn one<W: Write + ?Sized, R: Read + ?Sized>(
    tx: &mut W,
    rx: &mut R,
    rec: &[u8],
    buf: &mut [u8],
) -> Result<Duration, RecordRtError> {
    let t0 = Instant::now();
    tx.write_all(rec)
        .and_then(|()| tx.flush())
        .map_err(|source| RecordRtError::Record {
            side: "server",
            what: "write",
            source,
        })?;
    let mut got = 0;
    while got < rec.len() {
        match rx.read(buf) {
            Ok(0) => {
                return Err(RecordRtError::Short {
                    side: "client",
                    got,
                    want: rec.len(),
                })
            }
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(RecordRtError::Record {
                    side: "client",
                    what: "read",
                    source,
                })
            }
        }
    }
    Ok(t0.elapsed())
}

fn blocking(t: &TcpStream) -> std::io::Result<()> {
    t.set_nonblocking(false)?;
    t.set_read_timeout(Some(READ_TIMEOUT))?;
    t.set_write_timeout(Some(READ_TIMEOUT))
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
}

/// Times `n` records of `bytes` octets server → client over TLS and as many over plain TCP,
/// alternating, after `warmup` of each untimed. The client reads with a 64 KiB buffer, as the
/// peers do.
///
/// `pace`: the thread sleeps this long before each record (zero: back to back). Records one
/// report period apart find the library's code and data colder than records back to back (other
/// processes ran meanwhile; the core may have idled), as the peers find them in a run; both
/// pairs sleep alike, so the difference is still the library's.
pub fn measure(
    client: &dyn TlsBackend,
    server: &dyn TlsBackend,
    bytes: usize,
    warmup: usize,
    n: usize,
    pace: Duration,
) -> Result<RecordRoundTrip, RecordRtError> {
    if bytes == 0 {
        return Err(RecordRtError::Empty);
    }
    let (mut c, mut s, _) = bare::establish(client, server).map_err(RecordRtError::Handshake)?;
    let result = run(c.as_mut(), s.as_mut(), bytes, warmup, n, pace);
    bare::finish(c, s);
    result
}

fn run(
    c: &mut dyn TlsStream,
    s: &mut dyn TlsStream,
    bytes: usize,
    warmup: usize,
    n: usize,
    pace: Duration,
) -> Result<RecordRoundTrip, RecordRtError> {
    blocking(c.tcp())?;
    blocking(s.tcp())?;
    // The client's one application byte from the handshake loop.
    let mut buf = vec![0u8; 1 << 16];
    let mut one_byte = [0u8; 1];
    s.read_exact(&mut one_byte)
        .map_err(|source| RecordRtError::Record {
            side: "server",
            what: "read",
            source,
        })?;
    let (mut pc, mut ps) = bare::pair()?;
    blocking(&pc)?;
    blocking(&ps)?;
    // An MMS-like payload: the octets do not change the cost, the length does.
    let rec: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
    let mut tls = Vec::with_capacity(n);
    let mut plain = Vec::with_capacity(n);
    let nap = || {
        if !pace.is_zero() {
            std::thread::sleep(pace);
        }
    };
    for i in 0..warmup + n {
        nap();
        let t = one(s, c, &rec, &mut buf)?;
        nap();
        let p = one(&mut ps, &mut pc, &rec, &mut buf)?;
        if i >= warmup {
            tls.push(t.as_nanos() as u64);
            plain.push(p.as_nanos() as u64);
        }
    }
    Ok(RecordRoundTrip {
        bytes,
        n,
        tls_ns: median(tls),
        plain_ns: median(plain),
    })
}
