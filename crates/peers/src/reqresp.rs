//! The request/response peers of the Sandia 2023 experiment (`gander run-peer server|client`):
//! the client sends a request carrying `request_size` payload bytes and waits for the response,
//! over TLS or a bare TCP connection, as the report's test program did with an HTTP POST. No MMS:
//! the point is the cost TLS adds to one application round trip.
//!
//! Wire format (both directions): a 4-byte big-endian length, then that many bytes. The server
//! answers each request with 16 bytes. Event log and config follow the MMS peers' contract
//! (`docs/mms-peers.md`): `READY <addr>` on stdout, JSON lines with CLOCK_MONOTONIC `t_ns`;
//! HT_START, TCP_UP, TLS_UP, HT_END per connection; RT_START before the request is written and
//! RT_END when the whole response has been read (the RT of one request is the round trip).

use gander_tls::{backend, TlsProfile};
use serde::Deserialize;
use std::io::{BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `gander run-peer server|client` configuration (the MMS peers' keys that apply).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Server: address to listen on, `host:port`.
    #[serde(default)]
    pub listen: Option<String>,
    /// Client: server address, `host:port`.
    #[serde(default)]
    pub connect: Option<String>,
    /// JSON-lines event log; relative to the working directory.
    #[serde(default)]
    pub events: Option<PathBuf>,
    /// Accepted for symmetry with the MMS peers' configs; the exchange is always request/response.
    #[serde(default)]
    pub interaction: Option<String>,
    /// Client: connections opened one after the other (HT samples).
    #[serde(default = "one")]
    pub connections: u64,
    /// Client: requests on the last connection (RT samples).
    #[serde(default)]
    pub reports: u64,
    /// Client: request payload, bytes.
    #[serde(default)]
    pub request_size: u32,
    /// Client: pause between requests, ms.
    #[serde(default)]
    pub request_period_ms: u64,
    /// Accepted for symmetry with the MMS server's config; unused.
    #[serde(default)]
    pub reports_table: Option<toml::Value>,
    /// TLS settings; absent: plain TCP.
    #[serde(default)]
    pub tls: Option<TlsProfile>,
}

fn one() -> u64 {
    1
}

/// CLOCK_MONOTONIC in nanoseconds (the clock the MMS peers stamp with).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Why a request/response peer could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReqRespError {
    /// The config file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The config file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The config file is not valid TOML, or not a peer config.
    #[error("{}", path.display())]
    Config {
        /// The config file.
        path: PathBuf,
        /// What the TOML parser said.
        #[source]
        source: toml::de::Error,
    },
    /// A setting the role needs is missing (`listen` for a server, `connect` for a client).
    #[error("{role} config needs `{key}`")]
    Missing {
        /// `server` or `client`.
        role: &'static str,
        /// The missing key.
        key: &'static str,
    },
    /// The event log could not be created.
    #[error("cannot create event log {}", path.display())]
    EventLog {
        /// The event log.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The TLS backend could not be set up (certificates, keys, suite).
    #[error(transparent)]
    Tls(#[from] gander_tls::TlsError),
    /// The server could not listen.
    #[error("cannot listen on {addr}")]
    Listen {
        /// The address in the config.
        addr: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The client could not connect.
    #[error("connect {addr}")]
    Connect {
        /// The address in the config.
        addr: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A client handshake failed.
    #[error("handshake")]
    Handshake(#[source] gander_tls::TlsError),
    /// The server did not answer a request.
    #[error("request {0}: no response")]
    NoResponse(u64),
    /// Other socket I/O.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Loads a config; `[reports]` (the MMS server's table) is tolerated and ignored.
pub fn load(path: &Path) -> Result<Config, ReqRespError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReqRespError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |source| ReqRespError::Config {
        path: path.to_path_buf(),
        source,
    };
    let mut t: toml::Table = text.parse().map_err(bad)?;
    if let Some(r) = t.remove("reports") {
        match r {
            toml::Value::Table(_) => {
                t.insert("reports_table".into(), r);
            }
            other => {
                t.insert("reports".into(), other);
            }
        }
    }
    let mut c: Config = toml::Value::Table(t).try_into().map_err(bad)?;
    if let (Some(tls), Some(dir)) = (c.tls.as_mut(), path.parent()) {
        tls.rebase(dir);
    }
    Ok(c)
}

struct Log(Option<BufWriter<std::fs::File>>);

impl Log {
    fn open(p: &Option<PathBuf>) -> Result<Log, ReqRespError> {
        Ok(Log(match p {
            Some(p) => Some(BufWriter::new(std::fs::File::create(p).map_err(
                |source| ReqRespError::EventLog {
                    path: p.clone(),
                    source,
                },
            )?)),
            None => None,
        }))
    }
    fn emit(&mut self, event: &str, t: u64, conn: u64, n: Option<u64>) {
        if let Some(w) = &mut self.0 {
            let _ = match n {
                Some(n) => writeln!(
                    w,
                    r#"{{"event":"{event}","t_ns":{t},"conn":{conn},"seq":{n},"n":{n}}}"#
                ),
                None => writeln!(w, r#"{{"event":"{event}","t_ns":{t},"conn":{conn}}}"#),
            };
        }
    }
    /// The client's `TLS_UP` with the handshake's bytes each way and the group, as the MMS
    /// client writes it (docs/pq.md).
    fn tls_up(&mut self, t: u64, conn: u64, s: &dyn gander_tls::TlsStream) {
        if let Some(w) = &mut self.0 {
            let mut extra = String::new();
            if let Some(b) = s.wire_bytes() {
                extra.push_str(&format!(
                    r#","tx_bytes":{},"rx_bytes":{}"#,
                    b.sent, b.received
                ));
            }
            if let Some(g) = s.negotiated_group() {
                extra.push_str(&format!(r#","group":"{}""#, g.name()));
            }
            let _ = writeln!(w, r#"{{"event":"TLS_UP","t_ns":{t},"conn":{conn}{extra}}}"#);
        }
    }
    fn error(&mut self, kind: &str) {
        if let Some(w) = &mut self.0 {
            let _ = writeln!(
                w,
                r#"{{"event":"ERROR","t_ns":{},"conn":0,"kind":{}}}"#,
                now_ns(),
                serde_json::Value::String(kind.into())
            );
        }
    }
    fn flush(&mut self) {
        if let Some(w) = &mut self.0 {
            let _ = w.flush();
        }
    }
}

fn read_msg(s: &mut dyn Read, buf: &mut Vec<u8>) -> std::io::Result<Option<usize>> {
    let mut len = [0u8; 4];
    if let Err(e) = s.read_exact(&mut len) {
        return if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Ok(None)
        } else {
            Err(e)
        };
    }
    let n = u32::from_be_bytes(len) as usize;
    if n > 1 << 20 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "message longer than 1 MiB",
        ));
    }
    buf.resize(n, 0);
    s.read_exact(buf)?;
    Ok(Some(n))
}

fn write_msg(s: &mut dyn Write, payload: &[u8]) -> std::io::Result<()> {
    let mut m = Vec::with_capacity(4 + payload.len());
    m.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    m.extend_from_slice(payload);
    s.write_all(&m)?;
    s.flush()
}

/// Serves connections one at a time until killed.
pub fn server(cfg: &Config) -> Result<(), ReqRespError> {
    let listen = cfg.listen.as_deref().ok_or(ReqRespError::Missing {
        role: "server",
        key: "listen",
    })?;
    let tls = cfg.tls.as_ref().map(backend::open).transpose()?;
    let l = TcpListener::bind(listen).map_err(|source| ReqRespError::Listen {
        addr: listen.to_string(),
        source,
    })?;
    let addr = l.local_addr()?;
    println!("READY {addr}");
    let _ = std::io::stdout().flush();
    for tcp in l.incoming() {
        let Ok(tcp) = tcp else { continue };
        let _ = tcp.set_nodelay(true);
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(30)));
        let mut s: Box<dyn ReadWrite> = match &tls {
            Some(b) => match b.server(tcp).and_then(|mut s| s.handshake().map(|_| s)) {
                Ok(s) => Box::new(s),
                Err(e) => {
                    eprintln!("run-peer server: handshake: {e}");
                    continue;
                }
            },
            None => Box::new(tcp),
        };
        let mut buf = Vec::new();
        while let Ok(Some(_)) = read_msg(&mut s, &mut buf) {
            if write_msg(&mut s, b"0123456789abcdef").is_err() {
                break;
            }
        }
    }
    Ok(())
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// Runs the HT loop, then the request loop on the last connection; prints a JSON summary.
pub fn client(cfg: &Config) -> Result<(), ReqRespError> {
    let connect = cfg.connect.as_deref().ok_or(ReqRespError::Missing {
        role: "client",
        key: "connect",
    })?;
    let tls = cfg.tls.as_ref().map(backend::open).transpose()?;
    let mut log = Log::open(&cfg.events)?;
    let payload = vec![0x42u8; cfg.request_size as usize];
    let mut buf = Vec::new();
    let mut done = 0u64;
    for c in 0..cfg.connections {
        let last = c + 1 == cfg.connections;
        log.emit("HT_START", now_ns(), c, None);
        let tcp = TcpStream::connect(connect).map_err(|source| {
            log.error("connect");
            log.flush();
            ReqRespError::Connect {
                addr: connect.to_string(),
                source,
            }
        })?;
        let _ = tcp.set_nodelay(true);
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(30)));
        log.emit("TCP_UP", now_ns(), c, None);
        let mut s: Box<dyn ReadWrite> = match &tls {
            Some(b) => {
                let mut s = b.client(tcp)?;
                if let Err(e) = s.handshake() {
                    log.error(e.kind());
                    log.flush();
                    return Err(ReqRespError::Handshake(e));
                }
                log.tls_up(now_ns(), c, &*s);
                Box::new(s)
            }
            None => Box::new(tcp),
        };
        log.emit("HT_END", now_ns(), c, None);
        if last {
            for n in 0..cfg.reports {
                log.emit("RT_START", now_ns(), c, Some(n));
                let r = write_msg(&mut s, &payload).and_then(|_| read_msg(&mut s, &mut buf));
                match r {
                    Ok(Some(_)) => log.emit("RT_END", now_ns(), c, Some(n)),
                    _ => {
                        log.error("request");
                        log.flush();
                        return Err(ReqRespError::NoResponse(n));
                    }
                }
                done += 1;
                if cfg.request_period_ms > 0 {
                    std::thread::sleep(Duration::from_millis(cfg.request_period_ms));
                }
            }
        }
        log.flush();
    }
    log.flush();
    println!(r#"{{"connections":{},"requests":{done}}}"#, cfg.connections);
    Ok(())
}
