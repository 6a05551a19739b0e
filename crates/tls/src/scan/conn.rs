//! The scanner's blocking driver: one TCP connection per ClientHello, paced and capped, read
//! until the server's answer is complete ([`ServerFlight::complete`]), closes, or the timeout
//! passes. All protocol is in `hello` and `parse`; every connection of the scanner is made
//! here (the 0-RTT check hands its connections to OpenSSL, `super::early_data`).
use super::parse::{parse_flight, ParseError, ServerFlight};
use super::ScanError;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// At most this much of a server's answer is read (a certificate chain fits well within).
const MAX_READ: usize = 256 * 1024;

/// How an exchange ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// The server said all the scanner waits for.
    Complete,
    /// The server closed the connection (or reset it).
    Closed,
    /// Nothing more within the timeout.
    TimedOut,
    /// The server's octets are not TLS.
    Malformed(ParseError),
}

/// A server's answer to one ClientHello.
#[derive(Debug)]
pub struct Answer {
    /// What was parsed.
    pub flight: ServerFlight,
    /// How it ended.
    pub end: End,
    /// The connection, still open when the server did not close it (for a follow-up record).
    pub stream: Option<TcpStream>,
}

/// Connections to one target, sequential, `pause` apart, at most `cap`.
#[derive(Debug)]
pub struct Conn {
    /// The target.
    pub addr: SocketAddr,
    /// Connect and answer timeout.
    pub timeout: Duration,
    /// Pause between two connections.
    pub pause: Duration,
    /// Most connections.
    pub cap: u32,
    /// Connections made.
    pub count: u32,
    /// The server has answered some exchange (an octet, or a close): once it has, silence to a
    /// later ClientHello is a refusal like any other, not a port that never answers.
    pub heard: bool,
    last: Option<Instant>,
}

impl Conn {
    /// A driver for `addr`.
    pub fn new(addr: SocketAddr, timeout: Duration, pause: Duration, cap: u32) -> Conn {
        Conn {
            addr,
            timeout,
            pause,
            cap,
            count: 0,
            heard: false,
            last: None,
        }
    }

    /// One more connection, after the pause and within the cap, with the timeout on writes
    /// (reads set their own). For checks that hand the connection to a TLS library.
    pub fn connect(&mut self) -> Result<TcpStream, ScanError> {
        if self.count >= self.cap {
            return Err(ScanError::Cap(self.cap));
        }
        if let Some(t) = self.last {
            let since = t.elapsed();
            if since < self.pause {
                std::thread::sleep(self.pause - since);
            }
        }
        self.count += 1;
        self.last = Some(Instant::now());
        let tcp = TcpStream::connect_timeout(&self.addr, self.timeout).map_err(|e| {
            ScanError::Connect {
                addr: self.addr,
                reason: e.to_string(),
            }
        })?;
        let _ = tcp.set_nodelay(true);
        let _ = tcp.set_write_timeout(Some(self.timeout));
        Ok(tcp)
    }

    /// Connects (after the pause), sends `hello`, reads the answer.
    pub fn exchange(&mut self, hello: &[u8]) -> Result<Answer, ScanError> {
        let mut tcp = self.connect()?;
        if tcp.write_all(hello).is_err() {
            self.heard = true;
            return Ok(Answer {
                flight: ServerFlight::default(),
                end: End::Closed,
                stream: None,
            });
        }
        let (buf, end) = read_until(&mut tcp, self.timeout, |b| match parse_flight(b) {
            Ok(f) => f.complete(),
            Err(_) => true,
        });
        self.heard |= !buf.is_empty() || end != End::TimedOut;
        let (flight, end) = match parse_flight(&buf) {
            Ok(f) => {
                let end = if f.complete() { End::Complete } else { end };
                (f, end)
            }
            Err(e) => (ServerFlight::default(), End::Malformed(e)),
        };
        let stream = (end == End::Complete).then_some(tcp);
        Ok(Answer {
            flight,
            end,
            stream,
        })
    }
}

/// Sends `bytes` on an open connection and reads what comes back within `wait`: the parsed
/// records (fresh: a follow-up starts at a record boundary) and how it ended.
pub fn follow_up(tcp: &mut TcpStream, bytes: &[u8], wait: Duration) -> (ServerFlight, End) {
    if tcp.write_all(bytes).is_err() {
        return (ServerFlight::default(), End::Closed);
    }
    let (buf, end) = read_until(tcp, wait, |b| match parse_flight_records(b) {
        Some(f) => f.alert.is_some() || f.heartbeat,
        None => true,
    });
    match parse_flight_records(&buf) {
        Some(f) => (f, end),
        None => (
            ServerFlight::default(),
            End::Malformed(ParseError::Malformed("follow-up records")),
        ),
    }
}

/// How a connection ended after [`drain`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Drained {
    /// The server closed (FIN).
    Closed,
    /// The server reset the connection (RST), or the write already failed.
    Reset,
    /// Still open at the end of the wait.
    Silent,
}

/// Sends `bytes` and reads everything until the server closes or resets, or `wait` passes:
/// ROBOT compares not only a server's alert but how the connection ends after it.
pub fn drain(tcp: &mut TcpStream, bytes: &[u8], wait: Duration) -> (Vec<u8>, Drained) {
    if tcp.write_all(bytes).is_err() {
        return (Vec::new(), Drained::Reset);
    }
    let deadline = Instant::now() + wait;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || buf.len() >= MAX_READ {
            return (buf, Drained::Silent);
        }
        let _ = tcp.set_read_timeout(Some(left));
        match tcp.read(&mut chunk) {
            Ok(0) => return (buf, Drained::Closed),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return (buf, Drained::Silent)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return (buf, Drained::Reset),
        }
    }
}

/// Records after the first flight carry no ServerHello: only the record layer is read.
pub(super) fn parse_flight_records(b: &[u8]) -> Option<ServerFlight> {
    let mut f = ServerFlight::default();
    let mut at = 0;
    while b.len() >= at + 5 {
        let len = u16::from_be_bytes([b[at + 3], b[at + 4]]) as usize;
        if b[at + 1] != 3 {
            return None;
        }
        if b.len() < at + 5 + len {
            break;
        }
        let frag = &b[at + 5..at + 5 + len];
        match b[at] {
            21 if frag.len() >= 2 && f.alert.is_none() => f.alert = Some((frag[0], frag[1])),
            24 => f.heartbeat = true,
            20 => f.change_cipher_spec = true,
            21..=23 => {}
            _ => return None,
        }
        at += 5 + len;
        f.consumed = at;
    }
    Some(f)
}

/// Reads until `done(buf)`, EOF, an error or the deadline.
fn read_until(tcp: &mut TcpStream, wait: Duration, done: impl Fn(&[u8]) -> bool) -> (Vec<u8>, End) {
    let deadline = Instant::now() + wait;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (buf, End::TimedOut);
        }
        let _ = tcp.set_read_timeout(Some(left));
        match tcp.read(&mut chunk) {
            Ok(0) => return (buf, End::Closed),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if done(&buf) || buf.len() >= MAX_READ {
                    return (buf, End::Complete);
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return (buf, End::TimedOut)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return (buf, End::Closed),
        }
    }
}
