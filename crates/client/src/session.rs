//! The one blocking MMS client session, over plain TCP or TLS: the driver of
//! `gander_mms::association::ClientAssociation` (sans-I/O) with a timeout on every step, the
//! handshake's sub-steps stamped on CLOCK_MONOTONIC (and handed to [`ConnectHooks`] as they
//! happen, for `gander run`'s event log), and every failure turned into one [`ClientError`].
//!
//! A session is opened by [`Connector::connect`] (TCP, then TLS when configured, then COTP
//! connect and the MMS initiate, IEC 61850-8-1 clause 6 over the ISO stack of RFC 1006), used
//! with one confirmed request at a time ([`Session::call`] and its helpers), and ended by
//! [`Session::release`] (MMS conclude, then ACSE release: the orderly end of ISO 9506-2 8.3 and
//! ISO 8650-1) or [`Session::abort`]. A session dropped without either is aborted (ACSE ABRT),
//! so that a failure never leaves the association open on the server.
//!
//! Unsolicited InformationReports (IEC 61850-8-1 17.2 reports, 20.2 LastApplError and
//! CommandTermination of controls) that arrive while the session waits for something else are
//! queued in order with their arrival stamps and handed out by [`Session::next_report`], or
//! passed at once to the caller of [`Session::call_with`].
use crate::clock::now_ns;
use crate::core::{self, Matched};
use crate::detect::{client_hello, cotp_connect_request, is_cotp_confirm, looks_like_tls};
use crate::error::ClientError;
use crate::stream::Stream;
use gander_mms::association::{ClientAssociation, ClientConfig, CloseReason, Event, Limits, Step};
use gander_mms::cotp::Tpdu;
use gander_mms::pdu::{ConfirmedRequest, ConfirmedResponse};
use gander_mms::service::{
    AccessResult, DataAccessError, GetNameListRequest, InformationReport, Initiate, NameListQuery,
    ObjectName, ServiceError, WriteRequest,
};
use gander_mms::Codec;
use gander_tls::{TlsBackend, TlsError, TlsStream};
use gander_wire::data::Data;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The localDetailCalling libiec61850's client proposes, which gander's client copies.
pub const DEFAULT_MAX_PDU: u32 = 65000;

/// How to reach the server.
pub struct Connector<'a> {
    /// The server's address.
    pub addr: SocketAddr,
    /// The client TLS backend (built once, as a real client loads its credentials once);
    /// `None`: plain TCP.
    pub tls: Option<&'a dyn TlsBackend>,
    /// Longest wait for each step: TCP connect, TLS handshake, each PDU the server owes.
    pub timeout: Duration,
    /// The largest MMS PDU proposed in the initiate (localDetailCalling, ISO 9506-2 8.2);
    /// `None`: the association's default ([`DEFAULT_MAX_PDU`]).
    pub max_pdu: Option<u32>,
    /// On a failed connect, find out whether the port speaks the other transport (one more
    /// connection: a ClientHello to a plain port, a COTP CR to a TLS port) and say so. The
    /// probe wants this; a measurement loop does not (it would add a connection).
    pub diagnose: bool,
}

/// The handshake's sub-steps of one association, nanoseconds (CLOCK_MONOTONIC differences).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// CLOCK_MONOTONIC ns before the TCP connect (HT_START).
    pub start_ns: u64,
    /// TCP connect (SYN to the connect call's return).
    pub tcp_ns: u64,
    /// TLS handshake, with TLS.
    pub tls_ns: Option<u64>,
    /// COTP CR to CC.
    pub cotp_ns: u64,
    /// MMS initiate: CN{AARQ{initiate-Request}} to AC{AARE{initiate-Response}}.
    pub initiate_ns: u64,
}

impl Timings {
    /// HT: from before the TCP connect to the initiate response (the RSE paper's HT).
    pub fn total_ns(&self) -> u64 {
        self.tcp_ns + self.tls_ns.unwrap_or(0) + self.cotp_ns + self.initiate_ns
    }
}

/// Called as the association comes up, each with its CLOCK_MONOTONIC stamp: where `gander run`
/// writes HT_START, TCP_UP, TLS_UP, COTP_UP and HT_END (`docs/mms-peers.md`). Every method
/// has an empty default.
pub trait ConnectHooks {
    /// Before the TCP connect.
    fn start(&mut self, _at: u64) {}
    /// The TCP connection is up.
    fn tcp_up(&mut self, _at: u64, _tcp: &TcpStream) {}
    /// The TLS handshake is done (its library's view of it is in `tls`).
    fn tls_up(&mut self, _at: u64, _tls: &dyn TlsStream) {}
    /// The COTP connect confirm was read.
    fn cotp_up(&mut self, _at: u64) {}
    /// The MMS initiate response was decoded (stamped when the session handles it).
    fn associated(&mut self, _at: u64) {}
}

/// No hooks.
impl ConnectHooks for () {}

/// What the TLS handshake negotiated.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct TlsInfo {
    /// TLS library that ran the client side.
    pub backend: String,
    /// Protocol version, e.g. `TLSv1.3`.
    pub version: Option<String>,
    /// IANA name of the cipher suite.
    pub suite: Option<String>,
    /// Key-exchange group, when the library says.
    pub group: Option<String>,
}

/// An unsolicited InformationReport as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    /// CLOCK_MONOTONIC ns when the socket showed the bytes that completed it (poll returned).
    pub ready_ns: u64,
    /// CLOCK_MONOTONIC ns when those bytes were read.
    pub at_ns: u64,
    /// Wall clock (Unix ns) at the same moment, for latencies against the device's timestamps.
    pub unix_ns: u128,
    /// The InformationReport.
    pub report: InformationReport,
}

/// The end of an orderly release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    /// CLOCK_MONOTONIC ns when the release response was read.
    pub at_ns: u64,
    /// From the conclude request to the release response, ns.
    pub duration_ns: u64,
}

/// One open association.
pub struct Session {
    stream: Stream,
    assoc: ClientAssociation,
    addr: SocketAddr,
    tls: bool,
    buf: Vec<u8>,
    timeout: Duration,
    reports: VecDeque<Received>,
    negotiated: Option<Initiate>,
    tls_info: Option<TlsInfo>,
    ended: bool,
    /// The transport connection is gone (FIN, RST, a failed write): nothing more can be sent.
    lost: bool,
    /// When the last input was seen readable and read (for report stamps).
    last_ready: u64,
}

/// What the session was doing during the COTP connect (for the TLS/plain diagnosis).
pub const COTP_CONNECT: &str = "the COTP connect";
/// What the session was doing during the MMS initiate.
pub const MMS_INITIATE: &str = "the MMS initiate";
const RELEASE: &str = "the release (conclude, ACSE release)";
const WAIT_REPORTS: &str = "waiting for reports";

fn unix_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

impl Connector<'_> {
    /// A connector with the usual settings: default PDU size, diagnosis of the transport.
    pub fn new(addr: SocketAddr, tls: Option<&dyn TlsBackend>, timeout: Duration) -> Connector<'_> {
        Connector {
            addr,
            tls,
            timeout,
            max_pdu: None,
            diagnose: true,
        }
    }

    fn ms(&self) -> u64 {
        self.timeout.as_millis() as u64
    }

    fn tcp(&self) -> Result<TcpStream, ClientError> {
        let tcp =
            TcpStream::connect_timeout(&self.addr, self.timeout).map_err(|e| match e.kind() {
                io::ErrorKind::ConnectionRefused => {
                    ClientError::ConnectionRefused { addr: self.addr }
                }
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                    ClientError::ConnectTimeout {
                        addr: self.addr,
                        ms: self.ms(),
                    }
                }
                _ => ClientError::Connect {
                    addr: self.addr,
                    source: e,
                },
            })?;
        // Safety net under the poll-based waits: no single read or write blocks longer.
        let io = |source| ClientError::Io {
            during: "TCP set-up".into(),
            source,
        };
        tcp.set_nodelay(true).map_err(io)?;
        tcp.set_read_timeout(Some(self.timeout)).map_err(io)?;
        tcp.set_write_timeout(Some(self.timeout)).map_err(io)?;
        Ok(tcp)
    }

    /// Opens one association and stamps its sub-steps.
    pub fn connect(&self) -> Result<(Session, Timings), ClientError> {
        self.connect_with(&mut ())
    }

    /// [`Connector::connect`], calling `hooks` at each sub-step as it happens.
    pub fn connect_with(
        &self,
        hooks: &mut dyn ConnectHooks,
    ) -> Result<(Session, Timings), ClientError> {
        let mut t = Timings::default();
        let t0 = now_ns();
        t.start_ns = t0;
        hooks.start(t0);
        let tcp = self.tcp()?;
        let t_tcp = now_ns();
        t.tcp_ns = t_tcp.saturating_sub(t0);
        hooks.tcp_up(t_tcp, &tcp);
        let mut t_up = t_tcp;
        let (stream, tls_info) = match self.tls {
            None => (Stream::Plain(tcp), None),
            Some(b) => {
                let mut st = b.client(tcp).map_err(ClientError::TlsSetup)?;
                if let Err(e) = st.handshake() {
                    drop(st);
                    return Err(self.classify_tls_failure(e));
                }
                t_up = now_ns();
                t.tls_ns = Some(t_up.saturating_sub(t_tcp));
                hooks.tls_up(t_up, st.as_ref());
                let info = TlsInfo {
                    backend: b.kind().name().to_string(),
                    version: st.negotiated_version().map(|v| v.to_string()),
                    suite: st.negotiated_suite().map(|c| c.name.to_string()),
                    group: st.negotiated_group().map(|g| g.name().to_string()),
                };
                (Stream::Tls(st), Some(info))
            }
        };
        let mut config = ClientConfig {
            limits: Limits {
                step_timeout: self.timeout.as_nanos() as u64,
                ..Limits::default()
            },
            ..ClientConfig::default()
        };
        if let Some(p) = self.max_pdu {
            config.initiate.local_detail = Some(p);
        }
        let mut s = Session {
            stream,
            assoc: ClientAssociation::new(config),
            addr: self.addr,
            tls: self.tls.is_some(),
            buf: vec![0u8; 1 << 16],
            timeout: self.timeout,
            reports: VecDeque::new(),
            negotiated: None,
            tls_info,
            ended: false,
            lost: false,
            last_ready: 0,
        };
        match s.associate(t_up, &mut t, hooks) {
            Ok(()) => Ok((s, t)),
            Err(e) => {
                drop(s);
                Err(self.classify_association_failure(e))
            }
        }
    }

    /// A failed association: a plain connection that a TLS server drops before the COTP
    /// connect confirm is checked with a TLS ClientHello; a close or abort in answer to the
    /// association request is a refusal (libiec61850 1.6.1 closes the connection when its
    /// authenticator rejects a client, without an AARE).
    fn classify_association_failure(&self, e: ClientError) -> ClientError {
        match &e {
            ClientError::Closed { during, .. }
            | ClientError::Timeout { during, .. }
            | ClientError::Protocol { during, .. }
                if self.diagnose && self.tls.is_none() && during == COTP_CONNECT =>
            {
                match self.tls_answers() {
                    Some(evidence) => ClientError::ServerSpeaksTls {
                        addr: self.addr,
                        evidence: format!("{}, and {evidence}", e.chain()),
                    },
                    None => e,
                }
            }
            ClientError::Closed { during, .. } if during == MMS_INITIATE => {
                ClientError::AssociationRefused {
                    detail: "it closed the connection right after the association request \
                             (AARQ) instead of answering it"
                        .into(),
                }
            }
            ClientError::Aborted { during } if during == MMS_INITIATE => {
                ClientError::AssociationRefused {
                    detail: "it aborted the association request (AARQ)".into(),
                }
            }
            _ => e,
        }
    }

    /// Sends a TLS 1.2 ClientHello and says whether a TLS record came back (a ServerHello or
    /// an alert): the port speaks TLS. Nothing else is exchanged.
    fn tls_answers(&self) -> Option<String> {
        let mut tcp = self.tcp().ok()?;
        tcp.write_all(&client_hello()).ok()?;
        let mut buf = [0u8; 8];
        let mut got = Vec::new();
        while got.len() < 3 {
            match tcp.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        let _ = tcp.shutdown(std::net::Shutdown::Both);
        looks_like_tls(&got).then(|| {
            format!(
                "a TLS ClientHello on the same port was answered with a TLS {}",
                if got[0] == 0x16 {
                    "handshake record"
                } else {
                    "alert"
                }
            )
        })
    }

    /// A failed TLS handshake: when the library saw no TLS from the server (it closed on the
    /// ClientHello, or answered with something that is no TLS record), check whether the port
    /// speaks plain ISO transport: one COTP CR, and a CC back settles it.
    fn classify_tls_failure(&self, e: TlsError) -> ClientError {
        use gander_tls::Side::Peer;
        let peer_alert = matches!(
            &e,
            TlsError::UnknownCa { by: Peer, .. }
                | TlsError::Revoked { by: Peer, .. }
                | TlsError::Expired { by: Peer, .. }
                | TlsError::BadCertificate { by: Peer, .. }
                | TlsError::ProtocolVersion { by: Peer, .. }
                | TlsError::NoSharedCipher { by: Peer, .. }
        );
        let no_tls_seen = matches!(
            &e,
            TlsError::Closed | TlsError::HandshakeFailed(_) | TlsError::Io(_) | TlsError::Timeout
        );
        if self.diagnose && !peer_alert && no_tls_seen {
            if let Some(evidence) = self.plain_cotp_answers() {
                return ClientError::ServerNotTls {
                    addr: self.addr,
                    evidence: format!("the TLS handshake failed ({e}), and {evidence}"),
                };
            }
        }
        ClientError::TlsHandshake {
            addr: self.addr,
            source: e,
        }
    }

    /// Sends one COTP CR without TLS and says what came back, if it was a COTP CC; then
    /// disconnects the transport connection (COTP DR, ISO 8073 13.5) without associating.
    fn plain_cotp_answers(&self) -> Option<String> {
        let mut tcp = self.tcp().ok()?;
        tcp.write_all(&cotp_connect_request()).ok()?;
        let mut buf = [0u8; 512];
        let mut got = Vec::new();
        while got.len() < 4 || got.len() < u16::from_be_bytes([got[2], got[3]]) as usize {
            match tcp.read(&mut buf) {
                Ok(0) | Err(_) => return None,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
            if got.len() > 4096 {
                return None;
            }
        }
        if !is_cotp_confirm(&got) {
            return None;
        }
        if let Ok(Tpdu::ConnectionConfirm(cc)) = gander_mms::tpkt::parse(&got).and_then(Tpdu::parse)
        {
            let dr = Tpdu::DisconnectRequest {
                dst_ref: cc.src_ref,
                src_ref: 1,
                reason: 0,
            }
            .to_vec();
            if let Ok(p) = gander_mms::tpkt::frame(&dr) {
                let _ = tcp.write_all(&p);
            }
        }
        let _ = tcp.shutdown(std::net::Shutdown::Both);
        Some("a plain COTP connect request on the same port was confirmed".into())
    }
}

impl Session {
    /// COTP connect and MMS initiate; fills the two sub-steps of `t`.
    fn associate(
        &mut self,
        t_up: u64,
        t: &mut Timings,
        hooks: &mut dyn ConnectHooks,
    ) -> Result<(), ClientError> {
        self.assoc
            .connect(now_ns())
            .map_err(|e| ClientError::Protocol {
                during: COTP_CONNECT.into(),
                source: e,
            })?;
        let deadline = self.deadline();
        let mut t_cotp = None;
        loop {
            let during = if t_cotp.is_none() {
                COTP_CONNECT
            } else {
                MMS_INITIATE
            };
            match self.next_event(deadline, during, &mut None)? {
                Event::Step {
                    step: Step::CotpConnected,
                    at,
                } => {
                    t_cotp = Some(at);
                    hooks.cotp_up(at);
                }
                Event::Associated { at, initiate } => {
                    hooks.associated(now_ns());
                    let c = t_cotp.unwrap_or(at);
                    t.cotp_ns = c.saturating_sub(t_up);
                    t.initiate_ns = at.saturating_sub(c);
                    self.negotiated = Some(initiate);
                    return Ok(());
                }
                Event::Closed { reason, .. } => {
                    return Err(core::closed(reason, during, self.ms()))
                }
                _ => {}
            }
        }
    }

    /// The initiate parameters the server answered with.
    pub fn negotiated(&self) -> Option<&Initiate> {
        self.negotiated.as_ref()
    }

    /// What the TLS handshake negotiated, with TLS.
    pub fn tls_info(&self) -> Option<&TlsInfo> {
        self.tls_info.as_ref()
    }

    /// The step timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether the association is still open (not released, aborted or closed by the server).
    pub fn is_open(&self) -> bool {
        !self.ended && !self.lost && !self.assoc.is_closed()
    }

    fn deadline(&self) -> u64 {
        now_ns().saturating_add(self.timeout.as_nanos() as u64)
    }

    fn ms(&self) -> u64 {
        self.timeout.as_millis() as u64
    }

    fn transmit(&mut self, during: &str) -> Result<(), ClientError> {
        while let Some(p) = self.assoc.poll_transmit() {
            if let Err(e) = self.stream.send(&p) {
                self.lost = true;
                return Err(self.io_error(e, during));
            }
        }
        Ok(())
    }

    fn io_error(&self, e: io::Error, during: &str) -> ClientError {
        let during = during.to_string();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ClientError::Timeout {
                during,
                ms: self.ms(),
            },
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => ClientError::Closed { during, hint: "" },
            _ if self.tls => ClientError::Tls {
                during,
                source: TlsError::from(e),
            },
            _ => ClientError::Io { during, source: e },
        }
    }

    fn queue(&mut self, at: u64, report: InformationReport) -> Received {
        Received {
            ready_ns: self.last_ready.min(at),
            at_ns: at,
            unix_ns: unix_ns(),
            report,
        }
    }

    /// The next event other than a report, waiting at most until `deadline`
    /// (CLOCK_MONOTONIC ns). Reports go to `on_report` when given, else to the queue.
    fn next_event(
        &mut self,
        deadline: u64,
        during: &str,
        on_report: &mut Option<&mut dyn FnMut(Received)>,
    ) -> Result<Event, ClientError> {
        loop {
            self.transmit(during)?;
            while let Some(ev) = self.assoc.poll_event() {
                match ev {
                    Event::InformationReport { at, report } => {
                        let r = self.queue(at, report);
                        match on_report {
                            Some(f) => f(r),
                            None => self.reports.push_back(r),
                        }
                    }
                    ev => return Ok(ev),
                }
            }
            if !self.wait_input(deadline, during)? {
                return Err(ClientError::Timeout {
                    during: during.into(),
                    ms: self.ms(),
                });
            }
        }
    }

    /// Waits for input until `deadline` and feeds it to the association; false on timeout.
    fn wait_input(&mut self, deadline: u64, during: &str) -> Result<bool, ClientError> {
        let now = now_ns();
        let until = match self.assoc.poll_timeout() {
            Some(d) => d.min(deadline),
            None => deadline,
        };
        if now >= until {
            // A waiting state of the association expired (it queues Closed) or ours did.
            self.assoc.handle_timeout(now);
            return Ok(now < deadline || self.assoc.is_closed());
        }
        let readable = match self
            .stream
            .wait_readable(Some(Duration::from_nanos(until - now)))
        {
            Ok(r) => r,
            Err(e) => return Err(self.io_error(e, during)),
        };
        if !readable {
            return Ok(true); // the loop re-checks the deadlines
        }
        self.last_ready = now_ns();
        match self.stream.read(&mut self.buf) {
            Ok(0) => {
                self.lost = true;
                Err(ClientError::Closed {
                    during: during.into(),
                    hint: "",
                })
            }
            Ok(n) => {
                if !self.tls && self.negotiated.is_none() && looks_like_tls(&self.buf[..n]) {
                    return Err(ClientError::ServerSpeaksTls {
                        addr: self.addr,
                        evidence: format!(
                            "it answered the COTP connect request with a TLS record (content type {}, version 3.{})",
                            self.buf[0],
                            if n > 2 { self.buf[2] } else { 0 }
                        ),
                    });
                }
                let at = now_ns();
                let (assoc, buf) = (&mut self.assoc, &self.buf);
                assoc.handle_input(at, &buf[..n]);
                Ok(true)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(true)
            }
            Err(e) => {
                let e = self.io_error(e, during);
                self.lost |= !matches!(e, ClientError::Timeout { .. });
                Err(e)
            }
        }
    }

    /// Sends one confirmed request without waiting; its invokeID. With [`Session::wait_for`],
    /// the two halves of [`Session::call`] (a control's Operate is sent, then its answer and
    /// the CommandTermination report awaited).
    pub fn send(&mut self, request: ConfirmedRequest, what: &str) -> Result<u32, ClientError> {
        if self.ended {
            return Err(ClientError::NotOpen {
                during: what.into(),
            });
        }
        let id = self
            .assoc
            .request(now_ns(), request)
            .map_err(|e| ClientError::Protocol {
                during: what.into(),
                source: e,
            })?;
        self.transmit(what)?;
        Ok(id)
    }

    /// Waits for the answer to invokeID `id` (at most the step timeout); reports arriving
    /// meanwhile are queued. The response and when it was read (CLOCK_MONOTONIC ns).
    pub fn wait_for(
        &mut self,
        id: u32,
        what: &str,
    ) -> Result<(ConfirmedResponse, u64), ClientError> {
        self.wait_inner(id, what, &mut None)
    }

    fn wait_inner(
        &mut self,
        id: u32,
        what: &str,
        on_report: &mut Option<&mut dyn FnMut(Received)>,
    ) -> Result<(ConfirmedResponse, u64), ClientError> {
        let deadline = self.deadline();
        loop {
            let ev = self.next_event(deadline, what, on_report)?;
            match core::match_event(id, ev, what, self.ms()) {
                Matched::Answer { response, at } => return Ok((response, at)),
                Matched::Failed(e) => return Err(e),
                Matched::Report { at, report } => {
                    let r = self.queue(at, report);
                    self.reports.push_back(r);
                }
                Matched::Other => {}
            }
        }
    }

    /// Sends one confirmed request and waits for its response (or the step timeout).
    pub fn call(
        &mut self,
        request: ConfirmedRequest,
        what: &str,
    ) -> Result<ConfirmedResponse, ClientError> {
        self.call_timed(request, what).map(|(r, _)| r)
    }

    /// [`Session::call`], also returning the round-trip time in ns (request written to
    /// response decoded).
    pub fn call_timed(
        &mut self,
        request: ConfirmedRequest,
        what: &str,
    ) -> Result<(ConfirmedResponse, u64), ClientError> {
        let t0 = now_ns();
        let id = self.send(request, what)?;
        let (r, at) = self.wait_inner(id, what, &mut None)?;
        Ok((r, at.saturating_sub(t0)))
    }

    /// [`Session::wait_for`], handing each report that arrives meanwhile to `on_report` at
    /// once (in order) instead of queueing it: for a caller that stamps reports as they come.
    pub fn wait_for_with(
        &mut self,
        id: u32,
        what: &str,
        on_report: &mut dyn FnMut(Received),
    ) -> Result<(ConfirmedResponse, u64), ClientError> {
        self.wait_inner(id, what, &mut Some(on_report))
    }

    /// [`Session::call`], handing each report that arrives meanwhile to `on_report` at once
    /// (in order) instead of queueing it.
    pub fn call_with(
        &mut self,
        request: ConfirmedRequest,
        what: &str,
        on_report: &mut dyn FnMut(Received),
    ) -> Result<ConfirmedResponse, ClientError> {
        let id = self.send(request, what)?;
        self.wait_for_with(id, what, on_report).map(|(r, _)| r)
    }

    /// Every name of a GetNameList query, following `moreFollows` with `continueAfter`
    /// (ISO 9506-2 10.5).
    pub fn names(
        &mut self,
        req: GetNameListRequest,
        what: &str,
    ) -> Result<Vec<String>, ClientError> {
        let mut q = NameListQuery::new(req);
        while let Some(r) = q.next_request() {
            let a = core::name_list(what, self.call(ConfirmedRequest::GetNameList(r), what)?)?;
            q.on_response(a).map_err(|e| ClientError::Protocol {
                during: what.into(),
                source: e,
            })?;
        }
        Ok(q.into_names())
    }

    /// Reads one variable; the access result and the round trip in ns.
    pub fn read(
        &mut self,
        name: &ObjectName,
        what: &str,
    ) -> Result<(AccessResult, u64), ClientError> {
        let (r, rtt) = self.call_timed(core::read_request([name.clone()]), what)?;
        Ok((core::one_result(what, r)?, rtt))
    }

    /// Reads one variable that must succeed.
    pub fn read_value(&mut self, name: &ObjectName, what: &str) -> Result<Data, ClientError> {
        match self.read(name, what)?.0 {
            AccessResult::Success(d) => Ok(d),
            AccessResult::Failure(e) => Err(ClientError::Service {
                request: format!("{what} (DataAccessError {e})"),
                error: ServiceError::new(ServiceError::CLASS_ACCESS, e.0 as i64),
            }),
        }
    }

    /// Writes one variable: `Ok(Err(e))` when the server refused it with a DataAccessError.
    pub fn write(
        &mut self,
        request: WriteRequest,
        what: &str,
    ) -> Result<Result<(), DataAccessError>, ClientError> {
        core::write_result(what, self.call(ConfirmedRequest::Write(request), what)?)
    }

    /// The reports received so far, in order, without waiting.
    pub fn take_reports(&mut self) -> impl Iterator<Item = Received> + '_ {
        self.reports.drain(..)
    }

    /// The next report received, waiting at most until `deadline` (CLOCK_MONOTONIC ns);
    /// `None` when none came.
    pub fn next_report(&mut self, deadline: u64) -> Result<Option<Received>, ClientError> {
        loop {
            if let Some(r) = self.reports.pop_front() {
                return Ok(Some(r));
            }
            self.transmit(WAIT_REPORTS)?;
            while let Some(ev) = self.assoc.poll_event() {
                match ev {
                    Event::InformationReport { at, report } => {
                        let r = self.queue(at, report);
                        self.reports.push_back(r);
                    }
                    Event::Closed { reason, .. } => {
                        return Err(core::closed(reason, WAIT_REPORTS, self.ms()))
                    }
                    _ => {}
                }
            }
            if !self.reports.is_empty() {
                continue;
            }
            if now_ns() >= deadline {
                return Ok(None);
            }
            self.wait_input(deadline, WAIT_REPORTS)?;
        }
    }

    /// Orderly release: conclude, then ACSE release. On failure the association is aborted
    /// (the session is dropped), so the server is not left with it.
    pub fn release(mut self) -> Result<Released, ClientError> {
        let t0 = now_ns();
        self.assoc.release(t0).map_err(|e| ClientError::Protocol {
            during: RELEASE.into(),
            source: e,
        })?;
        let deadline = self.deadline();
        loop {
            match self.next_event(deadline, RELEASE, &mut None)? {
                Event::Closed {
                    reason: CloseReason::Released,
                    at,
                } => {
                    let _ = self.transmit(RELEASE);
                    self.ended = true;
                    self.stream.close();
                    return Ok(Released {
                        at_ns: at,
                        duration_ns: at.saturating_sub(t0),
                    });
                }
                Event::Closed { reason, .. } => {
                    return Err(core::closed(reason, RELEASE, self.ms()))
                }
                _ => {}
            }
        }
    }

    /// Ends the association at once: ABORT to the server (where a session exists), then
    /// close_notify and FIN (ISO 8650-1 ABRT; the end a client uses when it cannot release).
    pub fn abort(mut self) {
        self.abort_now();
    }

    /// Whether this side ended the association ([`Self::abort_now`]).
    pub fn aborted_here(&self) -> bool {
        self.ended
    }

    /// [`Self::abort`] through a reference: the session stays, ended (a caller that replaces
    /// it with a fresh association aborts the old one first, for a server that takes one
    /// association at a time).
    pub fn abort_now(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.assoc.abort(now_ns());
        while self.assoc.poll_event().is_some() {}
        while let Some(p) = self.assoc.poll_transmit() {
            if self.stream.send(&p).is_err() {
                break;
            }
        }
        self.stream.close();
    }
}

impl Drop for Session {
    /// A session neither released nor aborted is aborted.
    fn drop(&mut self) {
        self.abort_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_is_the_sum_of_the_steps() {
        let t = Timings {
            start_ns: 5,
            tcp_ns: 1,
            tls_ns: Some(10),
            cotp_ns: 100,
            initiate_ns: 1000,
        };
        assert_eq!(t.total_ns(), 1111);
    }
}
