//! The byte stream under an association: plain TCP or TLS over TCP, plus readiness polling and
//! the mapping of failures to the event log's error kinds.
use gander_tls::{TlsError, TlsStream};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Plain TCP (ISO on TCP, port 102) or TLS (IEC 62351-3/-4, port 3782).
pub enum Stream {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP.
    Tls(Box<dyn TlsStream>),
}

impl Stream {
    /// The underlying TCP socket.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(t) => t,
            Stream::Tls(s) => s.tcp(),
        }
    }

    /// Waits until the socket is readable, for at most `timeout` (`None`: forever).
    /// Returns false on timeout.
    ///
    /// TLS libraries can hold received bytes that the socket no longer shows (e.g. the first
    /// COTP CR read by the server's handshake together with the client's Finished): those count
    /// as readable ([`TlsStream::has_buffered_data`]).
    pub fn wait_readable(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
        if let Stream::Tls(s) = self {
            if s.has_buffered_data() {
                return Ok(true);
            }
        }
        wait_fd(self.tcp().as_raw_fd(), timeout)
    }

    /// Writes the whole packet.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_all(bytes)?;
        self.flush()
    }

    /// Orderly end: close_notify for TLS, then TCP FIN.
    pub fn close(&mut self) {
        if let Stream::Tls(s) = self {
            let _ = s.shutdown();
        }
        let _ = self.tcp().shutdown(std::net::Shutdown::Both);
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(t) => t.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(t) => t.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(t) => t.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// ppoll(2) for POLLIN on `fd` (nanosecond timeout, so paced reports can be 100 us apart).
/// Errors and hang-ups count as readable (the read reports them).
pub fn wait_fd(fd: i32, timeout: Option<Duration>) -> io::Result<bool> {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: one valid pollfd; `tsp` is null or points to a live timespec; no signal mask.
        let rc = unsafe { libc::ppoll(&mut p, 1, tsp, std::ptr::null()) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        return Ok(rc > 0);
    }
}

/// The `kind` of an ERROR event for a failure of the MMS stack: `<layer>-<what>`, e.g.
/// `tpkt-version`, `cotp-malformed`, `session-unexpected-pdu`, `mms-ber`.
pub fn mms_kind(e: &gander_mms::Error) -> String {
    use gander_mms::{Error as E, Layer};
    let layer = match e.layer() {
        Some(Layer::Tpkt) => "tpkt",
        Some(Layer::Cotp) => "cotp",
        Some(Layer::Session) => "session",
        Some(Layer::Presentation) => "presentation",
        Some(Layer::Acse) => "acse",
        Some(Layer::Mms) => "mms",
        Some(Layer::Iec61850) => "iec61850",
        None => "local",
    };
    let what = match e {
        E::TpktVersion(_) => "version",
        E::TpktTooShort(_) => "too-short",
        E::TooLarge { .. } => "too-large",
        E::Truncated { .. } => "truncated",
        E::Malformed { .. } => "malformed",
        E::UnknownCode { .. } => "unknown-code",
        E::Ber { .. } => "ber",
        E::UnexpectedPdu { .. } => "unexpected-pdu",
        E::Refused { .. } => "refused",
        E::Limit { .. } => "limit",
        E::InvalidState { .. } => "invalid-state",
        _ => "error",
    };
    format!("{layer}-{what}")
}

/// The `kind` of an ERROR event for a TLS failure: `tls-<TlsError::kind()>`, e.g.
/// `tls-unknown-ca`, `tls-pin-mismatch`, `tls-expired`, `tls-protocol-version`.
pub fn tls_kind(e: &TlsError) -> String {
    format!("tls-{}", e.kind())
}

/// The `kind` of an I/O failure on the stream (TLS errors inside io::Error are recovered).
pub fn io_kind(e: io::Error, tls: bool) -> (String, String) {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ("timeout".into(), e.to_string()),
        io::ErrorKind::UnexpectedEof
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => ("closed".into(), e.to_string()),
        _ if tls => {
            let t = TlsError::from(e);
            (tls_kind(&t), t.to_string())
        }
        _ => ("io".into(), e.to_string()),
    }
}
