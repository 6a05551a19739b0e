//! `gander mms client`: the RSE paper's 61850CLI. Opens `connections` associations one after
//! the other (HT loop: HT_START before the TCP connect, HT_END once the MMS initiate response
//! is in), keeps the last one to enable `IMPLD0/LLN0.RP.urcb01` the way libiec61850's client
//! does (one Write of OptFlds, TrgOps, RptEna and optionally GI) and receives `reports` reports
//! (RT loop: RT_END when a decoded report is available), then releases it.
//!
//! The MMS client is `gander_client::Session` (the same session `gander probe` uses); this
//! module only decides what to ask and writes the event log, through the session's
//! [`ConnectHooks`] for the handshake's stamps and the reports' arrival stamps.
//!
//! The first failure ends the run: one ERROR event with a specific `kind`, an ABORT to the
//! peer where a session exists (the session aborts when dropped), a closed socket, and a
//! summary with `ok: false`.
use super::clock::now_ns;
use super::config::ClientConfig;
use super::events::{name, Event, Sink};
use gander_client::session::{ConnectHooks, Connector, Received, Session};
use gander_mms::pdu::ConfirmedRequest;
use gander_mms::rcb::{enable_reporting, mms_name};
use gander_mms::report::Report;
use gander_tls::{TlsBackend, TlsStream};
use serde::Serialize;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

mod control;
mod error;
mod rcb;
pub use control::ControlConfig;
pub use error::RunError;
pub use rcb::DISCOVER;

/// Parses an IEC 61850 control-block reference `LD/LN.RP.name` or `LD/LN.BR.name`.
pub use gander_client::reference::parse_rcb as parse_reference;

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
    /// `[control]`: the control round trips and how the object was left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<gander_client::control_rt::ControlRt>,
}

/// The event log's view of one association coming up.
struct Stamps<'a> {
    sink: &'a Sink,
    id: u64,
    t0: u64,
    s: &'a mut ClientSummary,
}

impl ConnectHooks for Stamps<'_> {
    fn start(&mut self, at: u64) {
        self.t0 = at;
        self.sink.emit(Event::new(name::HT_START, at, self.id));
    }

    fn tcp_up(&mut self, at: u64, tcp: &TcpStream) {
        let local = tcp.local_addr().map(|a| a.to_string()).unwrap_or_default();
        let peer = tcp.peer_addr().map(|a| a.to_string()).unwrap_or_default();
        self.sink.emit(
            Event::new(name::TCP_UP, at, self.id)
                .with("local", local)
                .with("peer", peer),
        );
    }

    fn tls_up(&mut self, at: u64, st: &dyn TlsStream) {
        let mut e = Event::new(name::TLS_UP, at, self.id).with("resumed", st.session_resumed());
        // The client's handshake ends with its last flight written and the server's read:
        // its counters now are the handshake's bytes in each direction (docs/pq.md).
        if let Some(w) = st.wire_bytes() {
            e = e.with("tx_bytes", w.sent).with("rx_bytes", w.received);
        }
        if let Some(g) = st.negotiated_group() {
            e = e.with("group", g.name());
        }
        if let Some(v) = st.negotiated_version() {
            self.s.version = Some(v.to_string());
            e = e.with("version", v.to_string());
        }
        if let Some(c) = st.negotiated_suite() {
            self.s.suite = Some(c.name.to_string());
            e = e.with("suite", c.name);
        }
        self.sink.emit(e);
    }

    fn cotp_up(&mut self, at: u64) {
        self.sink.emit(Event::new(name::COTP_UP, at, self.id));
    }

    fn associated(&mut self, at: u64) {
        self.sink.emit(Event::new(name::HT_END, at, self.id));
        self.s.ht_ns.push(at.saturating_sub(self.t0));
        self.s.connections += 1;
    }
}

/// Runs the HT loop then the RT loop. `tls` is the backend built from `config.tls` (built once,
/// outside the loops, as a real peer loads its credentials once).
pub fn run(config: &ClientConfig, tls: Option<&dyn TlsBackend>, sink: &Sink) -> ClientSummary {
    let mut s = ClientSummary::default();
    let timeout = Duration::from_millis(config.timeout_ms);
    let r = match config.connect.to_socket_addrs().map(|mut a| a.next()) {
        Ok(Some(addr)) => (1..=config.connections).try_for_each(|c| {
            let rt = c == config.connections && (config.reports > 0 || config.control.is_some());
            one_connection(config, tls, sink, addr, c, rt, timeout, &mut s).map_err(|e| (c, e))
        }),
        Ok(None) | Err(_) => Err((0, RunError::Address(config.connect.clone()))),
    };
    if let Err((c, e)) = r {
        let (kind, detail) = (e.kind(), e.detail());
        sink.emit(
            Event::new(name::ERROR, now_ns(), c)
                .with("kind", kind.as_str())
                .with("detail", detail.as_str()),
        );
        s.error = Some(kind);
        s.detail = Some(detail);
    }
    sink.flush();
    s.ok = s.error.is_none();
    if !s.ht_ns.is_empty() {
        let mut v = s.ht_ns.clone();
        v.sort_unstable();
        s.ht_mean_ms = Some(v.iter().sum::<u64>() as f64 / v.len() as f64 / 1e6);
        // Nearest rank, as every report (docs/mms-peers.md).
        s.ht_p50_ms = Some(gander_measure::stats::nearest_rank(&v, 50.0) as f64 / 1e6);
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
) -> Result<(), RunError> {
    let connector = Connector {
        addr,
        tls,
        timeout,
        max_pdu: None,
        // A measurement loop opens no extra connection to explain a failure.
        diagnose: false,
    };
    let mut stamps = Stamps { sink, id, t0: 0, s };
    let (mut session, _) = connector.connect_with(&mut stamps)?;
    if let (true, Some(c)) = (rt, &config.control) {
        s.control = Some(control::run(&mut session, sink, id, c, timeout)?);
    }
    if rt && config.reports > 0 {
        let report_timeout = Duration::from_millis(config.report_timeout_ms);
        match &config.rcb {
            Some(spec) => {
                s.reports = rcb::receive(&mut session, sink, id, spec, config, report_timeout)?
            }
            None => receive_reports(&mut session, sink, id, config, report_timeout, s)?,
        }
    }
    let released = session.release()?;
    sink.emit(Event::new(name::RELEASED, released.at_ns, id));
    Ok(())
}

/// The fixed model's RT loop: one Write enables the control block; every report of it is
/// stamped READ_START (socket readable), READ_END (bytes read) and RT_END (report decoded).
fn receive_reports(
    session: &mut Session,
    sink: &Sink,
    id: u64,
    config: &ClientConfig,
    report_timeout: Duration,
    s: &mut ClientSummary,
) -> Result<(), RunError> {
    let rcb = mms_name(gander_mms::model::RCB_REF).map_err(RunError::Report)?;
    let mut n = 0u64;
    let mut failure = None;
    let mut on_report = |rx: Received| {
        if failure.is_some() {
            return;
        }
        match Report::from_information_report(&rx.report) {
            Ok(r) => {
                stamp(sink, id, &rx, &r, config.reports, &mut n);
            }
            Err(e) => failure = Some(RunError::Report(e)),
        }
    };
    let what = "the RCB write response";
    let id_w = session.send(
        ConfirmedRequest::Write(enable_reporting(&rcb, config.gi)),
        what,
    )?;
    let (response, at) = session.wait_for_with(id_w, what, &mut on_report)?;
    let refused = |detail: String| RunError::EnableRefused {
        rcb: gander_mms::model::RCB_REF.into(),
        detail,
    };
    match gander_client::core::write_result(what, response) {
        Ok(Ok(())) => {}
        Ok(Err(bad)) => return Err(refused(format!("DataAccessError {}", bad.0))),
        Err(e) => return Err(refused(e.to_string())),
    }
    if let Some(e) = failure.take() {
        return Err(e);
    }
    s.reports = n;
    sink.emit(Event::new(name::RCB_ENABLED, at, id));
    let mut deadline = now_ns().saturating_add(report_timeout.as_nanos() as u64);
    while n < config.reports {
        let Some(rx) = session.next_report(deadline)? else {
            return Err(gander_client::ClientError::Timeout {
                during: "report".into(),
                ms: report_timeout.as_millis() as u64,
            }
            .into());
        };
        let r = Report::from_information_report(&rx.report).map_err(RunError::Report)?;
        if stamp(sink, id, &rx, &r, config.reports, &mut n) {
            deadline = now_ns().saturating_add(report_timeout.as_nanos() as u64);
            s.reports = n;
        }
    }
    Ok(())
}

/// Stamps one report of the fixed model's block (RptID `gander_mms::model::RPT_ID`) while
/// fewer than `want` were stamped; true when it was one.
fn stamp(sink: &Sink, id: u64, rx: &Received, r: &Report, want: u64, n: &mut u64) -> bool {
    let t_end = now_ns();
    if r.rpt_id != gander_mms::model::RPT_ID || *n >= want {
        return false;
    }
    let k = *n;
    let seq = r.seq_num.map(u64::from).unwrap_or(k);
    sink.emit(
        Event::new(name::READ_START, rx.ready_ns, id)
            .seq(seq)
            .with("n", k),
    );
    sink.emit(
        Event::new(name::READ_END, rx.at_ns, id)
            .seq(seq)
            .with("n", k),
    );
    sink.emit(Event::new(name::RT_END, t_end, id).seq(seq).with("n", k));
    *n += 1;
    true
}
