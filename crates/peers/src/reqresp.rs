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
    #[serde(default)]
    pub listen: Option<String>,
    #[serde(default)]
    pub connect: Option<String>,
    #[serde(default)]
    pub events: Option<PathBuf>,
    #[serde(default)]
    pub interaction: Option<String>,
    #[serde(default = "one")]
    pub connections: u64,
    #[serde(default)]
    pub reports: u64,
    #[serde(default)]
    pub request_size: u32,
    #[serde(default)]
    pub request_period_ms: u64,
    /// Accepted for symmetry with the MMS server's config; unused.
    #[serde(default)]
    pub reports_table: Option<toml::Value>,
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

/// Loads a config; `[reports]` (the MMS server's table) is tolerated and ignored.
pub fn load(path: &Path) -> Result<Config, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut t: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: {e}", path.display()))?;
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
    let mut c: Config = toml::Value::Table(t)
        .try_into()
        .map_err(|e: toml::de::Error| format!("{}: {}", path.display(), e.message()))?;
    if let (Some(tls), Some(dir)) = (c.tls.as_mut(), path.parent()) {
        tls.rebase(dir);
    }
    Ok(c)
}

struct Log(Option<BufWriter<std::fs::File>>);

impl Log {
    fn open(p: &Option<PathBuf>) -> Result<Log, String> {
        Ok(Log(match p {
            Some(p) => {
                Some(BufWriter::new(std::fs::File::create(p).map_err(|e| {
                    format!("cannot create event log {}: {e}", p.display())
                })?))
            }
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
pub fn server(cfg: &Config) -> Result<(), String> {
    let listen = cfg
        .listen
        .as_deref()
        .ok_or("server config needs `listen`")?;
    let tls = cfg
        .tls
        .as_ref()
        .map(backend::open)
        .transpose()
        .map_err(|e| e.to_string())?;
    let l = TcpListener::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = l.local_addr().map_err(|e| e.to_string())?;
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
pub fn client(cfg: &Config) -> Result<(), String> {
    let connect = cfg
        .connect
        .as_deref()
        .ok_or("client config needs `connect`")?;
    let tls = cfg
        .tls
        .as_ref()
        .map(backend::open)
        .transpose()
        .map_err(|e| e.to_string())?;
    let mut log = Log::open(&cfg.events)?;
    let payload = vec![0x42u8; cfg.request_size as usize];
    let mut buf = Vec::new();
    let mut done = 0u64;
    for c in 0..cfg.connections {
        let last = c + 1 == cfg.connections;
        log.emit("HT_START", now_ns(), c, None);
        let tcp = TcpStream::connect(connect).map_err(|e| {
            log.error("connect");
            log.flush();
            format!("connect {connect}: {e}")
        })?;
        let _ = tcp.set_nodelay(true);
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(30)));
        log.emit("TCP_UP", now_ns(), c, None);
        let mut s: Box<dyn ReadWrite> = match &tls {
            Some(b) => {
                let mut s = b.client(tcp).map_err(|e| e.to_string())?;
                if let Err(e) = s.handshake() {
                    log.error(e.kind());
                    log.flush();
                    return Err(format!("handshake: {e}"));
                }
                log.emit("TLS_UP", now_ns(), c, None);
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
                        return Err(format!("request {n}: no response"));
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
