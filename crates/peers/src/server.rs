//! `gander mms server`: the RSE paper's 61850SER. Accepts MMS associations (plain or TLS),
//! serves gander's fixed IEC 61850 model, and once a client enables `IMPLD0/LLN0.RP.urcb01`
//! sends it a data-change report every `reports.period` (RT_START just before each). With
//! `scl` it serves an IED's model from its SCL file instead ([`super::scl_model`]), and the
//! period drives that model's data changes (`served.rs` says how): by default its values drift
//! like a real IED's, or stay still, or move only by the measurement stimulus.
//!
//! One thread per connection; the model (its RCBs each owned by one connection at a time) is
//! shared behind a mutex. Every failure of a connection is one ERROR event and a clean close of that
//! connection; the server itself keeps accepting until [`StopHandle::stop`].
use super::clock::now_ns;
use super::config::{ServerConfig, ValueMode};
use super::events::{name, Event, Sink};
use super::served::Served;
use super::stream::{io_kind, mms_kind, tls_kind, Stream};
use super::PeerError;
use gander_mms::association::{
    CloseReason, Event as AEvent, Limits, ServerAssociation, ServerConfig as AssocConfig, Step,
};
use gander_mms::model::{ImpModel, ModelConfig};
use gander_mms::server_model::DriftConfig;
use gander_tls::TlsBackend;
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Stops a running server (from another thread or a signal handler's flag).
#[derive(Clone, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    /// Asks the server to stop (it notices within its poll interval).
    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether a stop was asked for.
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

struct Shared {
    config: ServerConfig,
    tls: Option<Box<dyn TlsBackend>>,
    sink: Sink,
    model: Mutex<Served>,
    stop: StopHandle,
    counters: Counters,
}

/// What the server did, for its exit summary.
#[derive(Default, Debug)]
pub struct Counters {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// MMS associations accepted.
    pub associations: AtomicU64,
    /// Reports sent.
    pub reports: AtomicU64,
    /// Connections that ended with an error.
    pub errors: AtomicU64,
    /// Connections the client ended without a release (see [`ServerSummary::ended_by_client`]).
    pub ended_by_client: AtomicU64,
}

/// A bound, not yet running server.
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
    /// The repairs made to load the served SCL model (empty for the fixed model).
    scl_warnings: Vec<gander_scl::SclWarning>,
}

const STOP_POLL: Duration = Duration::from_millis(100);

impl Server {
    /// Binds the listening socket and builds the TLS backend (certificates are loaded here, so
    /// a bad `[tls]` table fails before READY).
    pub fn bind(config: ServerConfig, sink: Sink) -> Result<Server, PeerError> {
        config.check()?;
        let mut scl_warnings = Vec::new();
        let model = match &config.scl {
            Some(path) => {
                let (mut m, warnings) = super::scl_model::load_with_warnings(
                    path,
                    config.ied.as_deref(),
                    config.access_point.as_deref(),
                )?;
                scl_warnings = warnings;
                match config.values {
                    ValueMode::Drift => {
                        m.clear_stimuli();
                        m.enable_drift(DriftConfig::default());
                    }
                    ValueMode::Static => m.clear_stimuli(),
                    ValueMode::Stimulus => {}
                }
                Served::Scl(Box::new(m))
            }
            None => Served::Fixed(Box::new(ImpModel::new(
                ModelConfig::for_report_size(config.reports.size).map_err(PeerError::ReportSize)?,
            ))),
        };
        let tls = match &config.tls {
            Some(p) => Some(gander_tls::backend::open(p).map_err(PeerError::Tls)?),
            None => None,
        };
        let listener =
            TcpListener::bind(config.listen.as_str()).map_err(|source| PeerError::Bind {
                addr: config.listen.clone(),
                source,
            })?;
        Ok(Server {
            listener,
            scl_warnings,
            shared: Arc::new(Shared {
                model: Mutex::new(model),
                config,
                tls,
                sink,
                stop: StopHandle::default(),
                counters: Counters::default(),
            }),
        })
    }

    /// The repairs made to load the served SCL model (`gander_scl::Ied::warnings`), for the
    /// caller to print at start-up; empty for the fixed model or a file read as written.
    pub fn scl_warnings(&self) -> &[gander_scl::SclWarning] {
        &self.scl_warnings
    }

    /// The address it listens on (the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// A handle that stops the server.
    pub fn stop_handle(&self) -> StopHandle {
        self.shared.stop.clone()
    }

    /// Uses `stop` (e.g. one set by a signal handler) instead of the server's own handle.
    pub fn with_stop(mut self, stop: StopHandle) -> Self {
        if let Some(s) = Arc::get_mut(&mut self.shared) {
            s.stop = stop;
        }
        self
    }

    /// Emits READY, then accepts connections until stopped; waits for the connection threads.
    pub fn run(self) -> Result<ServerSummary, PeerError> {
        let addr = self.local_addr();
        let sh = self.shared;
        sh.sink.emit(
            Event::new(name::READY, now_ns(), 0)
                .with("addr", addr.to_string())
                .with(
                    "tls",
                    sh.tls.as_ref().map(|b| b.kind().name()).unwrap_or("none"),
                ),
        );
        sh.sink.flush();
        self.listener
            .set_nonblocking(true)
            .map_err(|source| PeerError::Bind {
                addr: addr.to_string(),
                source,
            })?;
        let fd = self.listener.as_raw_fd();
        let mut next_conn = 1u64;
        let mut threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
        while !sh.stop.is_stopped() {
            match super::stream::wait_fd(fd, Some(STOP_POLL)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => {
                    std::thread::sleep(STOP_POLL);
                    continue;
                }
            }
            match self.listener.accept() {
                Ok((tcp, peer)) => {
                    let conn = next_conn;
                    next_conn += 1;
                    sh.counters.connections.fetch_add(1, Ordering::Relaxed);
                    let t = now_ns();
                    let sh2 = Arc::clone(&sh);
                    threads.retain(|h| !h.is_finished());
                    let spawned = std::thread::Builder::new()
                        .name(format!("mms-conn-{conn}"))
                        .spawn(move || serve(&sh2, conn, tcp, peer, t));
                    match spawned {
                        Ok(h) => threads.push(h),
                        Err(e) => sh.sink.emit(
                            Event::new(name::ERROR, now_ns(), conn)
                                .with("kind", "resources")
                                .with("detail", e.to_string()),
                        ),
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // EMFILE and the like: report and back off instead of spinning.
                    sh.sink.emit(
                        Event::new(name::ERROR, now_ns(), 0)
                            .with("kind", "accept")
                            .with("detail", e.to_string()),
                    );
                    std::thread::sleep(STOP_POLL);
                }
            }
        }
        for h in threads {
            let _ = h.join();
        }
        sh.sink.flush();
        let c = &sh.counters;
        Ok(ServerSummary {
            connections: c.connections.load(Ordering::Relaxed),
            associations: c.associations.load(Ordering::Relaxed),
            reports: c.reports.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
            ended_by_client: c.ended_by_client.load(Ordering::Relaxed),
        })
    }

    /// Runs on a background thread; returns the address, the stop handle and the thread.
    pub fn spawn(
        self,
    ) -> (
        SocketAddr,
        StopHandle,
        std::thread::JoinHandle<Result<ServerSummary, PeerError>>,
    ) {
        let addr = self.local_addr();
        let stop = self.stop_handle();
        (addr, stop, std::thread::spawn(move || self.run()))
    }
}

/// Totals over the server's life.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct ServerSummary {
    /// Connections accepted.
    pub connections: u64,
    /// MMS associations accepted.
    pub associations: u64,
    /// Reports sent.
    pub reports: u64,
    /// Connections that ended with an error: a failed TLS handshake, malformed or truncated
    /// input, a timeout, a refused association, a failed write.
    pub errors: u64,
    /// Connections the client ended without an orderly release: an ACSE ABORT, a COTP DR/ER,
    /// or TCP closed (or reset) between two packets. Many clients end so (libiec61850's
    /// `IedConnection_abort`, a tool that just closes its socket); the event log still names
    /// each (`peer-aborted`, `peer-disconnected`, `closed`), but none is a fault of the
    /// server's, so they are not counted in `errors`.
    pub ended_by_client: u64,
}

/// Follows TPKT framing on the input stream, only to tell "peer closed mid-packet"
/// (`tpkt-truncated`) from a plain early close.
#[derive(Default)]
struct TpktTracker {
    header: Vec<u8>,
    remaining: usize,
}

impl TpktTracker {
    fn push(&mut self, mut b: &[u8]) {
        while !b.is_empty() {
            if self.remaining > 0 {
                let k = self.remaining.min(b.len());
                self.remaining -= k;
                b = &b[k..];
                continue;
            }
            let need = 4 - self.header.len();
            let k = need.min(b.len());
            self.header.extend_from_slice(&b[..k]);
            b = &b[k..];
            if self.header.len() == 4 {
                let len = u16::from_be_bytes([self.header[2], self.header[3]]) as usize;
                self.remaining = len.saturating_sub(4);
                self.header.clear();
            }
        }
    }
    fn mid_packet(&self) -> bool {
        self.remaining > 0 || !self.header.is_empty()
    }
}

struct Conn<'a> {
    sh: &'a Shared,
    id: u64,
    stream: Stream,
    assoc: ServerAssociation,
    reports_sent: u64,
    tls: bool,
}

enum Outcome {
    Continue,
    Done,
}

fn serve(sh: &Shared, conn: u64, tcp: TcpStream, peer: SocketAddr, t_accept: u64) {
    let sink = &sh.sink;
    sink.emit(Event::new(name::TCP_UP, t_accept, conn).with("peer", peer.to_string()));
    let _ = tcp.set_nodelay(true);
    let io_timeout = Some(Duration::from_millis(sh.config.timeout_ms));
    let _ = tcp.set_read_timeout(io_timeout);
    let _ = tcp.set_write_timeout(io_timeout);
    let stream = match &sh.tls {
        None => Stream::Plain(tcp),
        Some(b) => {
            let r = b.server(tcp).and_then(|mut s| s.handshake().map(|_| s));
            match r {
                Ok(s) => {
                    let mut e = Event::new(name::TLS_UP, now_ns(), conn)
                        .with("resumed", s.session_resumed());
                    if let Some(v) = s.negotiated_version() {
                        e = e.with("version", v.to_string());
                    }
                    if let Some(c) = s.negotiated_suite() {
                        e = e.with("suite", c.name);
                    }
                    sink.emit(e);
                    Stream::Tls(s)
                }
                Err(e) => {
                    sh.counters.errors.fetch_add(1, Ordering::Relaxed);
                    sink.emit(
                        Event::new(name::ERROR, now_ns(), conn)
                            .with("kind", tls_kind(&e))
                            .with("stage", "tls")
                            .with("detail", e.to_string()),
                    );
                    sink.emit(Event::new(name::CLOSED, now_ns(), conn));
                    sink.flush();
                    return;
                }
            }
        }
    };
    let limits = Limits {
        step_timeout: sh.config.timeout_ms.saturating_mul(1_000_000),
        ..Limits::default()
    };
    let assoc = ServerAssociation::new(
        AssocConfig {
            limits,
            ..AssocConfig::default()
        },
        conn,
        now_ns(),
    );
    let tls = sh.tls.is_some();
    let mut c = Conn {
        sh,
        id: conn,
        stream,
        assoc,
        reports_sent: 0,
        tls,
    };
    c.run();
    c.stream.close();
    sink.emit(Event::new(name::CLOSED, now_ns(), conn).with("reports", c.reports_sent));
    sink.flush();
}

impl Conn<'_> {
    fn model(&self) -> std::sync::MutexGuard<'_, Served> {
        // A panicking connection thread cannot poison the model for the others.
        self.sh.model.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn error(&self, kind: &str, detail: impl Into<String>, stage: &str) {
        self.sh.counters.errors.fetch_add(1, Ordering::Relaxed);
        self.end_event(kind, detail, stage);
    }

    /// The client ended the connection without a release: logged like an error (the kind
    /// says how), counted apart ([`ServerSummary::ended_by_client`]).
    fn client_ended(&self, kind: &str, detail: impl Into<String>, stage: &str) {
        self.sh
            .counters
            .ended_by_client
            .fetch_add(1, Ordering::Relaxed);
        self.end_event(kind, detail, stage);
    }

    fn end_event(&self, kind: &str, detail: impl Into<String>, stage: &str) {
        self.sh.sink.emit(
            Event::new(name::ERROR, now_ns(), self.id)
                .with("kind", kind)
                .with("stage", stage)
                .with("detail", detail.into()),
        );
    }

    /// Writes every queued packet, each in one write (one TLS record per TPKT packet, the
    /// TPKT header never apart from its body). Returns the octets written and the writes made:
    /// a report's `WRITE_END` carries both, so a report that left in more than one write shows.
    fn transmit(&mut self) -> Result<(usize, u32), (String, String)> {
        let (mut bytes, mut writes) = (0, 0);
        while let Some(p) = self.assoc.poll_transmit() {
            self.stream.send(&p).map_err(|e| io_kind(e, self.tls))?;
            bytes += p.len();
            writes += 1;
        }
        Ok((bytes, writes))
    }

    fn abort_model(&mut self) {
        let now = now_ns();
        let sh = self.sh;
        let mut m = sh.model.lock().unwrap_or_else(|p| p.into_inner());
        self.assoc.abort(now, m.handler());
        drop(m);
        while self.assoc.poll_event().is_some() {}
        let _ = self.transmit();
    }

    fn run(&mut self) {
        let mut buf = vec![0u8; 1 << 16];
        let mut tracker = TpktTracker::default();
        let mut next_due: Option<u64> = None;
        let period = self.sh.config.reports.period().as_nanos() as u64;
        loop {
            if let Err((kind, detail)) = self.transmit() {
                self.error(&kind, detail, "write");
                self.abort_model();
                return;
            }
            if let Outcome::Done = self.drain_events() {
                let _ = self.transmit();
                return;
            }
            if self.sh.stop.is_stopped() {
                self.abort_model();
                return;
            }
            // Reports: what is due now first (GI; with an SCL model also integrity and
            // clients' changes), then the periodic data changes.
            let (enabled, due) = {
                let mut m = self.model();
                let due = if self.assoc.is_associated() {
                    m.immediate(self.id)
                } else {
                    Vec::new()
                };
                (m.is_enabled_for(self.id), due)
            };
            if !due.is_empty() {
                if let Err((k, d)) = self.send_reports(due) {
                    self.error(&k, d, "report");
                    self.abort_model();
                    return;
                }
                continue;
            }
            let now = now_ns();
            match (enabled, next_due) {
                (false, _) => next_due = None,
                (true, None) => {
                    self.sh
                        .sink
                        .emit(Event::new(name::RCB_ENABLED, now, self.id));
                    next_due = Some(now);
                }
                (true, Some(_)) => {}
            }
            if let Some(due) = next_due {
                if now >= due {
                    let built = if self.assoc.is_associated() {
                        self.model().periodic(self.id)
                    } else {
                        Vec::new()
                    };
                    if let Err((k, d)) = self.send_reports(built) {
                        self.error(&k, d, "report");
                        self.abort_model();
                        return;
                    }
                    // Keep the schedule; never burst to catch up more than one period.
                    let next = due.saturating_add(period);
                    next_due = Some(if next + period < now { now } else { next });
                    if period > 0 {
                        continue;
                    }
                    // Back to back: look at the socket only when it has something.
                    if let Ok(false) = self.stream.wait_readable(Some(Duration::ZERO)) {
                        continue;
                    }
                }
            }
            // Wait for input, the next report, the association's deadline or the stop poll.
            let now = now_ns();
            let mut wait = STOP_POLL.as_nanos() as u64;
            if let Some(d) = next_due {
                wait = wait.min(d.saturating_sub(now));
            }
            if let Some(d) = self.assoc.poll_timeout() {
                wait = wait.min(d.saturating_sub(now));
            }
            let readable = match self.stream.wait_readable(Some(Duration::from_nanos(wait))) {
                Ok(r) => r,
                Err(e) => {
                    self.error("io", e.to_string(), "read");
                    self.abort_model();
                    return;
                }
            };
            if !readable {
                let now = now_ns();
                let sh = self.sh;
                let mut m = sh.model.lock().unwrap_or_else(|p| p.into_inner());
                self.assoc.handle_timeout(now, m.handler());
                continue;
            }
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    if !self.assoc.is_closed() {
                        if tracker.mid_packet() {
                            self.error(
                                "tpkt-truncated",
                                "peer closed TCP inside a TPKT packet",
                                "read",
                            );
                        } else {
                            self.client_ended(
                                "closed",
                                format!(
                                    "peer closed the connection in state {:?}",
                                    self.assoc.state()
                                ),
                                "read",
                            );
                        }
                        self.abort_model();
                    }
                    return;
                }
                Ok(n) => {
                    tracker.push(&buf[..n]);
                    let now = now_ns();
                    let sh = self.sh;
                    let mut m = sh.model.lock().unwrap_or_else(|p| p.into_inner());
                    self.assoc.handle_input(now, &buf[..n], m.handler());
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => {
                    let (k, d) = io_kind(e, self.tls);
                    if k == "closed" && tracker.mid_packet() {
                        self.error("tpkt-truncated", d, "read");
                    } else if k == "closed" {
                        self.client_ended(&k, d, "read");
                    } else {
                        self.error(&k, d, "read");
                    }
                    self.abort_model();
                    return;
                }
            }
        }
    }

    fn drain_events(&mut self) -> Outcome {
        let mut out = Outcome::Continue;
        while let Some(ev) = self.assoc.poll_event() {
            match ev {
                AEvent::Step {
                    step: Step::CotpConnected,
                    at,
                } => self.sh.sink.emit(Event::new(name::COTP_UP, at, self.id)),
                AEvent::Associated { at, .. } => {
                    self.sh
                        .counters
                        .associations
                        .fetch_add(1, Ordering::Relaxed);
                    self.sh.sink.emit(Event::new(name::ASSOCIATED, at, self.id));
                }
                AEvent::Closed { at, reason } => {
                    out = Outcome::Done;
                    match reason {
                        CloseReason::Released => {
                            self.sh.sink.emit(Event::new(name::RELEASED, at, self.id))
                        }
                        CloseReason::Error(e) => self.error(&mms_kind(&e), e.to_string(), "mms"),
                        CloseReason::Timeout(state) => {
                            self.error("timeout", format!("no input in state {state}"), "mms")
                        }
                        CloseReason::Refused(d) => self.error("refused", d, "mms"),
                        CloseReason::PeerAborted => {
                            self.client_ended("peer-aborted", "peer aborted", "mms")
                        }
                        CloseReason::PeerDisconnected => {
                            self.client_ended("peer-disconnected", "COTP DR/ER from peer", "mms")
                        }
                        CloseReason::LocalAbort => {}
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// Sends reports built by the model: RT_START was taken after the values were updated,
    /// just before each report was built; WRITE_START/WRITE_END around the write to the
    /// (TLS) stream. Nothing is built once the client concludes (the callers check).
    fn send_reports(&mut self, built: Vec<super::served::Built>) -> Result<(), (String, String)> {
        for b in built {
            self.assoc
                .send_information_report(&b.ir)
                .map_err(|e| (mms_kind(&e), e.to_string()))?;
            let t_w0 = now_ns();
            let (bytes, writes) = self.transmit()?;
            let t_w1 = now_ns();
            if !b.ir.is_rpt() {
                // A control's CommandTermination: sent, but not a report of the measurement.
                continue;
            }
            let n = self.reports_sent;
            self.reports_sent += 1;
            self.sh.counters.reports.fetch_add(1, Ordering::Relaxed);
            let s = &self.sh.sink;
            let seq = b.seq;
            s.emit(
                Event::new(name::RT_START, b.t_rt, self.id)
                    .seq(seq)
                    .with("n", n),
            );
            s.emit(
                Event::new(name::WRITE_START, t_w0, self.id)
                    .seq(seq)
                    .with("n", n),
            );
            s.emit(
                Event::new(name::WRITE_END, t_w1, self.id)
                    .seq(seq)
                    .with("n", n)
                    .with("bytes", bytes as u64)
                    .with("writes", writes),
            );
        }
        Ok(())
    }
}

static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::SeqCst);
}

/// SIGINT and SIGTERM stop `stop` (the server then flushes its event log and exits cleanly).
pub fn stop_on_signals(stop: StopHandle) {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            if SIGNALLED.load(Ordering::SeqCst) {
                stop.stop();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        });
}
