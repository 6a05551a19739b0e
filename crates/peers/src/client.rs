//! `gander mms client`: the RSE paper's 61850CLI. Opens `connections` associations one after
//! the other (HT loop: HT_START before the TCP connect, HT_END once the MMS initiate response
//! is in), keeps the last one to enable `IMPLD0/LLN0.RP.urcb01` the way libiec61850's client
//! does (one Write of OptFlds, TrgOps, RptEna and optionally GI) and receives `reports` reports
//! (RT loop: RT_END when a decoded report is available), then releases it.
//!
//! The first failure ends the run: one ERROR event with a specific `kind`, an ABORT to the
//! peer where a session exists, a closed socket, and a summary with `ok: false`.
use super::clock::now_ns;
use super::config::ClientConfig;
use super::events::{name, Event, Sink};
use super::stream::{io_kind, mms_kind, tls_kind, Stream};
use gander_mms::association::{
    ClientAssociation, ClientConfig as AssocConfig, CloseReason, Event as AEvent, Limits, Step,
};
use gander_mms::pdu::ConfirmedResponse;
use gander_mms::rcb::{enable_reporting, mms_name};
use gander_mms::report::Report;
use gander_tls::TlsBackend;
use serde::Serialize;
use std::io::Read;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

mod rcb;
pub use rcb::{parse_reference, DISCOVER};

/// The client's one-line result.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClientSummary {
    /// Whether every connection and report succeeded.
    pub ok: bool,
    /// Connections completed (HT loop).
    pub connections: u64,
    /// Reports received (RT loop).
    pub reports: u64,
    /// HT (HT_START..HT_END) of each connection, nanoseconds.
    #[serde(skip)]
    pub ht_ns: Vec<u64>,
    /// Mean HT, ms.
    pub ht_mean_ms: Option<f64>,
    /// Median HT, ms.
    pub ht_p50_ms: Option<f64>,
    /// Negotiated TLS version, with TLS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Negotiated cipher suite, with TLS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// Kind of the failure that stopped the client (as in `ERROR` events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The failure's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A failure: (kind, detail).
type Fail = (String, String);

fn fail(kind: &str, detail: impl Into<String>) -> Fail {
    (kind.to_owned(), detail.into())
}

struct Conn<'a> {
    id: u64,
    stream: Stream,
    assoc: ClientAssociation,
    sink: &'a Sink,
    tls: bool,
    buf: Vec<u8>,
    timeout: Duration,
    /// Longest wait for the next report, ns.
    report_timeout: u64,
}

/// What one read brought.
struct Batch {
    t_ready: u64,
    t_read: u64,
    events: Vec<AEvent>,
}

impl Conn<'_> {
    fn transmit(&mut self) -> Result<(), Fail> {
        while let Some(p) = self.assoc.poll_transmit() {
            self.stream.send(&p).map_err(|e| io_kind(e, self.tls))?;
        }
        Ok(())
    }

    /// Writes what is queued, waits (at most until `deadline`, CLOCK_MONOTONIC ns) for input,
    /// feeds it to the association and returns its events.
    fn pump(&mut self, deadline: u64, what: &str) -> Result<Batch, Fail> {
        self.transmit()?;
        let mut events = Vec::new();
        while let Some(e) = self.assoc.poll_event() {
            events.push(e);
        }
        if !events.is_empty() {
            let t = now_ns();
            return Ok(Batch {
                t_ready: t,
                t_read: t,
                events,
            });
        }
        let now = now_ns();
        let mut until = deadline;
        if let Some(d) = self.assoc.poll_timeout() {
            until = until.min(d);
        }
        if now >= until {
            self.assoc.handle_timeout(now);
            if now >= deadline && !self.assoc.is_closed() {
                return Err(fail("timeout", format!("no {what} within the timeout")));
            }
            return self.drain(now, now);
        }
        let readable = self
            .stream
            .wait_readable(Some(Duration::from_nanos(until - now)))
            .map_err(|e| fail("io", e.to_string()))?;
        let t_ready = now_ns();
        if !readable {
            return self.drain(t_ready, t_ready);
        }
        match self.stream.read(&mut self.buf) {
            Ok(0) => Err(fail(
                "closed",
                format!("server closed the connection while waiting for {what}"),
            )),
            Ok(n) => {
                let t_read = now_ns();
                let (assoc, buf) = (&mut self.assoc, &self.buf);
                assoc.handle_input(t_read, &buf[..n]);
                self.drain(t_ready, t_read)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                ) =>
            {
                self.drain(t_ready, t_ready)
            }
            Err(e) => Err(io_kind(e, self.tls)),
        }
    }

    fn drain(&mut self, t_ready: u64, t_read: u64) -> Result<Batch, Fail> {
        let mut events = Vec::new();
        while let Some(e) = self.assoc.poll_event() {
            events.push(e);
        }
        Ok(Batch {
            t_ready,
            t_read,
            events,
        })
    }

    fn abort(&mut self) {
        self.assoc.abort(now_ns());
        while self.assoc.poll_event().is_some() {}
        let _ = self.transmit();
        self.stream.close();
    }

    fn deadline(&self) -> u64 {
        now_ns().saturating_add(self.timeout.as_nanos() as u64)
    }
}

fn closed_fail(reason: CloseReason) -> Fail {
    match reason {
        CloseReason::Released => fail("closed", "association released unexpectedly"),
        CloseReason::PeerAborted => fail("peer-aborted", "server aborted the association"),
        CloseReason::PeerDisconnected => fail("peer-disconnected", "COTP DR/ER from server"),
        CloseReason::Refused(d) => fail("refused", d),
        CloseReason::Timeout(s) => fail("timeout", format!("no answer in state {s}")),
        CloseReason::LocalAbort => fail("aborted", "local abort"),
        CloseReason::Error(e) => (mms_kind(&e), e.to_string()),
    }
}

/// Runs the HT loop then the RT loop. `tls` is the backend built from `config.tls` (built once,
/// outside the loops, as a real peer loads its credentials once).
pub fn run(config: &ClientConfig, tls: Option<&dyn TlsBackend>, sink: &Sink) -> ClientSummary {
    let mut s = ClientSummary::default();
    let addr = match config.connect.to_socket_addrs().map(|mut a| a.next()) {
        Ok(Some(a)) => a,
        Ok(None) | Err(_) => {
            s.error = Some("address".into());
            s.detail = Some(format!("cannot resolve {:?}", config.connect));
            sink.emit(
                Event::new(name::ERROR, now_ns(), 0)
                    .with("kind", "address")
                    .with("detail", s.detail.clone().unwrap_or_default()),
            );
            sink.flush();
            return s;
        }
    };
    let timeout = Duration::from_millis(config.timeout_ms);
    for c in 1..=config.connections {
        let last = c == config.connections;
        let r = one_connection(
            config,
            tls,
            sink,
            addr,
            c,
            last && config.reports > 0,
            timeout,
            &mut s,
        );
        if let Err((kind, detail)) = r {
            sink.emit(
                Event::new(name::ERROR, now_ns(), c)
                    .with("kind", kind.as_str())
                    .with("detail", detail.as_str()),
            );
            s.error = Some(kind);
            s.detail = Some(detail);
            break;
        }
    }
    sink.flush();
    s.ok = s.error.is_none();
    if !s.ht_ns.is_empty() {
        let mut v = s.ht_ns.clone();
        v.sort_unstable();
        s.ht_mean_ms = Some(v.iter().sum::<u64>() as f64 / v.len() as f64 / 1e6);
        s.ht_p50_ms = Some(v[v.len() / 2] as f64 / 1e6);
    }
    s
}

#[allow(clippy::too_many_arguments)]
fn one_connection(
    config: &ClientConfig,
    tls: Option<&dyn TlsBackend>,
    sink: &Sink,
    addr: SocketAddr,
    id: u64,
    rt: bool,
    timeout: Duration,
    s: &mut ClientSummary,
) -> Result<(), Fail> {
    let t0 = now_ns();
    sink.emit(Event::new(name::HT_START, t0, id));
    let tcp = TcpStream::connect_timeout(&addr, timeout).map_err(|e| {
        let kind = match e.kind() {
            std::io::ErrorKind::ConnectionRefused => "tcp-refused",
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => "timeout",
            _ => "io",
        };
        fail(kind, format!("connect {addr}: {e}"))
    })?;
    let t_tcp = now_ns();
    let local = tcp.local_addr().map(|a| a.to_string()).unwrap_or_default();
    sink.emit(
        Event::new(name::TCP_UP, t_tcp, id)
            .with("local", local)
            .with("peer", addr.to_string()),
    );
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(timeout));
    let _ = tcp.set_write_timeout(Some(timeout));
    let stream = match tls {
        None => Stream::Plain(tcp),
        Some(b) => {
            let mut st = b.client(tcp).map_err(|e| (tls_kind(&e), e.to_string()))?;
            st.handshake().map_err(|e| (tls_kind(&e), e.to_string()))?;
            let t_tls = now_ns();
            let mut e = Event::new(name::TLS_UP, t_tls, id).with("resumed", st.session_resumed());
            // The client's handshake ends with its last flight written and the server's read:
            // its counters now are the handshake's bytes in each direction (docs/pq.md).
            if let Some(w) = st.wire_bytes() {
                e = e.with("tx_bytes", w.sent).with("rx_bytes", w.received);
            }
            if let Some(g) = st.negotiated_group() {
                e = e.with("group", g.name());
            }
            if let Some(v) = st.negotiated_version() {
                s.version = Some(v.to_string());
                e = e.with("version", v.to_string());
            }
            if let Some(c) = st.negotiated_suite() {
                s.suite = Some(c.name.to_string());
                e = e.with("suite", c.name);
            }
            sink.emit(e);
            Stream::Tls(st)
        }
    };
    let limits = Limits {
        step_timeout: timeout.as_nanos() as u64,
        ..Limits::default()
    };
    let mut c = Conn {
        id,
        stream,
        assoc: ClientAssociation::new(AssocConfig {
            limits,
            ..AssocConfig::default()
        }),
        sink,
        tls: tls.is_some(),
        buf: vec![0u8; 1 << 16],
        timeout,
        report_timeout: Duration::from_millis(config.report_timeout_ms).as_nanos() as u64,
    };
    let r = drive(&mut c, config, rt, t0, s);
    if r.is_err() {
        c.abort();
    } else {
        c.stream.close();
    }
    r
}

fn drive(
    c: &mut Conn<'_>,
    config: &ClientConfig,
    rt: bool,
    t0: u64,
    s: &mut ClientSummary,
) -> Result<(), Fail> {
    let id = c.id;
    let sink = c.sink;
    c.assoc
        .connect(now_ns())
        .map_err(|e| (mms_kind(&e), e.to_string()))?;
    // Association (HT's last sub-step).
    let deadline = c.deadline();
    'assoc: loop {
        let b = c.pump(deadline, "association")?;
        for ev in b.events {
            match ev {
                AEvent::Step {
                    step: Step::CotpConnected,
                    at,
                } => sink.emit(Event::new(name::COTP_UP, at, id)),
                AEvent::Associated { .. } => {
                    let t = now_ns();
                    sink.emit(Event::new(name::HT_END, t, id));
                    s.ht_ns.push(t.saturating_sub(t0));
                    s.connections += 1;
                    break 'assoc;
                }
                AEvent::Closed { reason, .. } => return Err(closed_fail(reason)),
                _ => {}
            }
        }
    }
    if rt {
        match &config.rcb {
            Some(spec) => s.reports = rcb::receive(c, spec, config)?,
            None => receive_reports(c, config, s)?,
        }
    }
    release(c)
}

fn release(c: &mut Conn<'_>) -> Result<(), Fail> {
    c.assoc
        .release(now_ns())
        .map_err(|e| (mms_kind(&e), e.to_string()))?;
    let deadline = c.deadline();
    loop {
        let b = c.pump(deadline, "release")?;
        for ev in b.events {
            if let AEvent::Closed { reason, at } = ev {
                return match reason {
                    CloseReason::Released => {
                        let _ = c.transmit();
                        c.sink.emit(Event::new(name::RELEASED, at, c.id));
                        Ok(())
                    }
                    r => Err(closed_fail(r)),
                };
            }
        }
    }
}

fn receive_reports(
    c: &mut Conn<'_>,
    config: &ClientConfig,
    s: &mut ClientSummary,
) -> Result<(), Fail> {
    let id = c.id;
    let sink = c.sink;
    let rcb = mms_name(gander_mms::model::RCB_REF).map_err(|e| (mms_kind(&e), e.to_string()))?;
    let write_id = c
        .assoc
        .write(now_ns(), enable_reporting(&rcb, config.gi))
        .map_err(|e| (mms_kind(&e), e.to_string()))?;
    let mut enabled = false;
    let mut n = 0u64;
    let report_timeout = Duration::from_millis(config.report_timeout_ms).as_nanos() as u64;
    let mut deadline = c.deadline();
    while n < config.reports || !enabled {
        let b = c.pump(
            deadline,
            if enabled {
                "report"
            } else {
                "the RCB write response"
            },
        )?;
        for ev in b.events {
            match ev {
                AEvent::Response {
                    invoke_id,
                    response,
                    at,
                } if invoke_id == write_id => {
                    let ConfirmedResponse::Write(w) = response else {
                        return Err(fail(
                            "rcb-enable-refused",
                            "response is not a Write response",
                        ));
                    };
                    if let Some(bad) = w.0.iter().find_map(|r| r.err()) {
                        return Err(fail(
                            "rcb-enable-refused",
                            format!(
                                "Write of {} refused: DataAccessError {}",
                                gander_mms::model::RCB_REF,
                                bad.0
                            ),
                        ));
                    }
                    enabled = true;
                    sink.emit(Event::new(name::RCB_ENABLED, at, id));
                    deadline = now_ns().saturating_add(report_timeout);
                }
                AEvent::ServiceError {
                    invoke_id, error, ..
                } if invoke_id == write_id => {
                    return Err(fail("rcb-enable-refused", format!("{error:?}")));
                }
                AEvent::Rejected { reject, .. } => {
                    return Err(fail("mms-rejected", format!("{reject:?}")));
                }
                AEvent::InformationReport { report, .. } => {
                    let r = Report::from_information_report(&report)
                        .map_err(|e| (mms_kind(&e), e.to_string()))?;
                    let t_end = now_ns();
                    if r.rpt_id != gander_mms::model::RPT_ID {
                        continue;
                    }
                    let seq = r.seq_num.map(u64::from).unwrap_or(n);
                    if n < config.reports {
                        sink.emit(
                            Event::new(name::READ_START, b.t_ready, id)
                                .seq(seq)
                                .with("n", n),
                        );
                        sink.emit(
                            Event::new(name::READ_END, b.t_read, id)
                                .seq(seq)
                                .with("n", n),
                        );
                        sink.emit(Event::new(name::RT_END, t_end, id).seq(seq).with("n", n));
                        n += 1;
                        s.reports = n;
                    }
                    deadline = now_ns().saturating_add(report_timeout);
                }
                AEvent::Closed { reason, .. } => return Err(closed_fail(reason)),
                _ => {}
            }
        }
    }
    Ok(())
}
