//! A blocking MMS client session over plain TCP or TLS, for any IEC 61850 server: the driver
//! of `gander_mms::association::ClientAssociation` (sans-I/O) with a timeout on every step,
//! the handshake's sub-steps stamped on CLOCK_MONOTONIC, and every failure turned into one
//! [`ProbeError`] that says what the server did.
//!
//! A session is opened by [`Connector::connect`] (TCP, then TLS when configured, then COTP
//! connect and the MMS initiate, IEC 61850-8-1 clause 6 over the ISO stack of RFC 1006), used
//! with one confirmed request at a time ([`Session::call`] and its helpers), and ended by
//! [`Session::release`] (MMS conclude, then ACSE release: the orderly end of ISO 9506-2 8.3 and
//! ISO 8650-1). A session dropped without a release is aborted (ACSE ABRT), so that a failure
//! never leaves the association open on the server.
//!
//! Reports (MMS InformationReports on `RPT`, IEC 61850-8-1 17.2) that arrive while the session
//! waits for something else are queued with their arrival time and handed out by
//! [`Session::next_report`].
use crate::error::ProbeError;
use gander_mms::association::{ClientAssociation, ClientConfig, CloseReason, Event, Limits, Step};
use gander_mms::cotp::{ConnectParams, Tpdu};
use gander_mms::pdu::{ConfirmedRequest, ConfirmedResponse};
use gander_mms::service::{
    AccessResult, DataAccessError, GetNameListRequest, InformationReport, Initiate, NameListQuery,
    ObjectName, ReadRequest, VariableAccessSpecification, WriteRequest,
};
use gander_mms::Codec;
use gander_peers::clock::now_ns;
use gander_peers::stream::Stream;
use gander_tls::{TlsBackend, TlsError};
use gander_wire::data::Data;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How to reach the server.
pub struct Connector<'a> {
    /// The server's address.
    pub addr: SocketAddr,
    /// The client TLS backend (built once from the `--tls` profile); `None`: plain TCP.
    pub tls: Option<&'a dyn TlsBackend>,
    /// Longest wait for each step: TCP connect, TLS handshake, each PDU the server owes.
    pub timeout: Duration,
    /// The largest MMS PDU proposed in the initiate (localDetailCalling, ISO 9506-2 8.2);
    /// libiec61850's client proposes [`DEFAULT_MAX_PDU`].
    pub max_pdu: u32,
}

/// The localDetailCalling libiec61850's client proposes, which gander's client copies.
pub const DEFAULT_MAX_PDU: u32 = 65000;

/// The handshake's sub-steps of one association, nanoseconds (CLOCK_MONOTONIC differences).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
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

/// A report as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    /// CLOCK_MONOTONIC ns when the bytes that completed it were read.
    pub at_ns: u64,
    /// Wall clock (Unix ns) at the same moment, for latencies against the device's timestamps.
    pub unix_ns: u128,
    /// The InformationReport.
    pub report: InformationReport,
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
    released: bool,
}

const COTP_CONNECT: &str = "the COTP connect";
const MMS_INITIATE: &str = "the MMS initiate";

/// A TLS 1.2 ClientHello offering common suites of the IEC 62351-3 era (ECDHE-RSA/ECDSA and
/// RSA with AES-GCM and AES-CBC), groups P-256 and X25519, and RSA/ECDSA signatures: enough
/// for any TLS server to answer with a ServerHello or an alert.
fn client_hello() -> Vec<u8> {
    let mut body = vec![0x03, 0x03];
    body.extend((0u8..32).map(|i| i.wrapping_mul(37).wrapping_add(11))); // random
    body.push(0); // session id
    let suites: [u16; 6] = [0xc02f, 0xc02b, 0xc030, 0x009c, 0x003c, 0x002f];
    body.extend(((suites.len() * 2) as u16).to_be_bytes());
    suites.iter().for_each(|c| body.extend(c.to_be_bytes()));
    body.extend([1, 0]); // compression: null
    let ext: [u8; 31] = [
        0x00, 0x0a, 0x00, 0x06, 0x00, 0x04, 0x00, 0x17, 0x00, 0x1d, // supported_groups
        0x00, 0x0b, 0x00, 0x02, 0x01, 0x00, // ec_point_formats
        0x00, 0x0d, 0x00, 0x06, 0x00, 0x04, 0x04, 0x01, 0x04, 0x03, // signature_algorithms
        0xff, 0x01, 0x00, 0x01, 0x00, // renegotiation_info (RFC 5746), empty
    ];
    body.extend((ext.len() as u16).to_be_bytes());
    body.extend(ext);
    let mut hs = vec![0x01, 0];
    hs.extend((body.len() as u16).to_be_bytes());
    hs.extend(body);
    let mut rec = vec![0x16, 0x03, 0x01];
    rec.extend((hs.len() as u16).to_be_bytes());
    rec.extend(hs);
    rec
}

fn unix_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// First octets of a TLS record (RFC 8446 5.1: content type 20..=23, legacy version 3.x):
/// what a TLS server answers (an alert) to a COTP CR, which starts with TPKT version 3.
fn looks_like_tls(b: &[u8]) -> bool {
    b.len() >= 2 && (0x14..=0x17).contains(&b[0]) && b[1] == 0x03
}

impl Connector<'_> {
    fn ms(&self) -> u64 {
        self.timeout.as_millis() as u64
    }

    fn tcp(&self) -> Result<TcpStream, ProbeError> {
        let tcp =
            TcpStream::connect_timeout(&self.addr, self.timeout).map_err(|e| match e.kind() {
                io::ErrorKind::ConnectionRefused => {
                    ProbeError::ConnectionRefused { addr: self.addr }
                }
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ProbeError::ConnectTimeout {
                    addr: self.addr,
                    ms: self.ms(),
                },
                _ => ProbeError::Connect {
                    addr: self.addr,
                    source: e,
                },
            })?;
        // Safety net under the poll-based waits: no single read or write blocks longer.
        let io = |source| ProbeError::Io {
            during: "TCP set-up".into(),
            source,
        };
        tcp.set_nodelay(true).map_err(io)?;
        tcp.set_read_timeout(Some(self.timeout)).map_err(io)?;
        tcp.set_write_timeout(Some(self.timeout)).map_err(io)?;
        Ok(tcp)
    }

    /// Opens one association and stamps its sub-steps.
    pub fn connect(&self) -> Result<(Session, Timings), ProbeError> {
        let mut t = Timings::default();
        let t0 = now_ns();
        let tcp = self.tcp()?;
        let t_tcp = now_ns();
        t.tcp_ns = t_tcp.saturating_sub(t0);
        let mut t_up = t_tcp;
        let (stream, tls_info) = match self.tls {
            None => (Stream::Plain(tcp), None),
            Some(b) => {
                let mut st = b.client(tcp).map_err(ProbeError::TlsSetup)?;
                if let Err(e) = st.handshake() {
                    drop(st);
                    return Err(self.classify_tls_failure(e));
                }
                t_up = now_ns();
                t.tls_ns = Some(t_up.saturating_sub(t_tcp));
                let info = TlsInfo {
                    backend: b.kind().name().to_string(),
                    version: st.negotiated_version().map(|v| v.to_string()),
                    suite: st.negotiated_suite().map(|c| c.name.to_string()),
                    group: st.negotiated_group().map(|g| g.name().to_string()),
                };
                (Stream::Tls(st), Some(info))
            }
        };
        let limits = Limits {
            step_timeout: self.timeout.as_nanos() as u64,
            ..Limits::default()
        };
        let mut config = ClientConfig {
            limits,
            ..ClientConfig::default()
        };
        config.initiate.local_detail = Some(self.max_pdu);
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
            released: false,
        };
        match s.associate(t_up, &mut t) {
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
    fn classify_association_failure(&self, e: ProbeError) -> ProbeError {
        match &e {
            ProbeError::Closed { during, .. }
            | ProbeError::Timeout { during, .. }
            | ProbeError::Protocol { during, .. }
                if self.tls.is_none() && during == COTP_CONNECT =>
            {
                match self.tls_answers() {
                    Some(evidence) => ProbeError::ServerSpeaksTls {
                        addr: self.addr,
                        evidence: format!("{}, and {evidence}", e.chain()),
                    },
                    None => e,
                }
            }
            ProbeError::Closed { during, .. } if during == MMS_INITIATE => {
                ProbeError::AssociationRefused {
                    detail: "it closed the connection right after the association request \
                             (AARQ) instead of answering it"
                        .into(),
                }
            }
            ProbeError::Aborted { during } if during == MMS_INITIATE => {
                ProbeError::AssociationRefused {
                    detail: "it aborted the association request (AARQ)".into(),
                }
            }
            _ => e,
        }
    }

    /// Sends a TLS 1.2 ClientHello (RFC 5246 7.4.1.2) and says whether a TLS record came back
    /// (a ServerHello or an alert): the port speaks TLS. Nothing else is exchanged.
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
    fn classify_tls_failure(&self, e: TlsError) -> ProbeError {
        let peer_alert = matches!(
            &e,
            TlsError::UnknownCa {
                by: gander_tls::Side::Peer,
                ..
            } | TlsError::Revoked {
                by: gander_tls::Side::Peer,
                ..
            } | TlsError::Expired {
                by: gander_tls::Side::Peer,
                ..
            } | TlsError::BadCertificate {
                by: gander_tls::Side::Peer,
                ..
            } | TlsError::ProtocolVersion {
                by: gander_tls::Side::Peer,
                ..
            } | TlsError::NoSharedCipher {
                by: gander_tls::Side::Peer,
                ..
            }
        );
        let no_tls_seen = matches!(
            &e,
            TlsError::Closed | TlsError::HandshakeFailed(_) | TlsError::Io(_) | TlsError::Timeout
        );
        if !peer_alert && no_tls_seen {
            if let Some(evidence) = self.plain_cotp_answers() {
                return ProbeError::ServerNotTls {
                    addr: self.addr,
                    evidence: format!("the TLS handshake failed ({e}), and {evidence}"),
                };
            }
        }
        ProbeError::TlsHandshake {
            addr: self.addr,
            source: e,
        }
    }

    /// Sends one COTP CR without TLS and says what came back, if it was a COTP CC; then
    /// disconnects the transport connection (COTP DR, ISO 8073 13.5) without associating.
    fn plain_cotp_answers(&self) -> Option<String> {
        let mut tcp = self.tcp().ok()?;
        let cr = Tpdu::ConnectionRequest(ConnectParams::libiec61850_request()).to_vec();
        tcp.write_all(&gander_mms::tpkt::frame(&cr).ok()?).ok()?;
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
        let tpdu = gander_mms::tpkt::parse(&got).ok()?;
        let Ok(Tpdu::ConnectionConfirm(cc)) = Tpdu::parse(tpdu) else {
            return None;
        };
        let dr = Tpdu::DisconnectRequest {
            dst_ref: cc.src_ref,
            src_ref: 1,
            reason: 0,
        }
        .to_vec();
        if let Ok(p) = gander_mms::tpkt::frame(&dr) {
            let _ = tcp.write_all(&p);
        }
        let _ = tcp.shutdown(std::net::Shutdown::Both);
        Some("a plain COTP connect request on the same port was confirmed".into())
    }
}

impl Session {
    /// COTP connect and MMS initiate; fills the two sub-steps of `t`.
    fn associate(&mut self, t_up: u64, t: &mut Timings) -> Result<(), ProbeError> {
        self.assoc
            .connect(now_ns())
            .map_err(|e| ProbeError::Protocol {
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
            match self.next_event(deadline, during)? {
                Event::Step {
                    step: Step::CotpConnected,
                    at,
                } => t_cotp = Some(at),
                Event::Associated { at, initiate } => {
                    let c = t_cotp.unwrap_or(at);
                    t.cotp_ns = c.saturating_sub(t_up);
                    t.initiate_ns = at.saturating_sub(c);
                    self.negotiated = Some(initiate);
                    return Ok(());
                }
                Event::Closed { reason, .. } => return Err(self.closed(reason, during)),
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

    fn deadline(&self) -> u64 {
        now_ns().saturating_add(self.timeout.as_nanos() as u64)
    }

    fn ms(&self) -> u64 {
        self.timeout.as_millis() as u64
    }

    fn transmit(&mut self, during: &str) -> Result<(), ProbeError> {
        while let Some(p) = self.assoc.poll_transmit() {
            self.stream.send(&p).map_err(|e| self.io_error(e, during))?;
        }
        Ok(())
    }

    fn io_error(&self, e: io::Error, during: &str) -> ProbeError {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ProbeError::Timeout {
                during: during.into(),
                ms: self.ms(),
            },
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => ProbeError::Closed {
                during: during.into(),
                hint: "",
            },
            _ => ProbeError::Io {
                during: during.into(),
                source: e,
            },
        }
    }

    /// The error for a closed association.
    fn closed(&self, reason: CloseReason, during: &str) -> ProbeError {
        let during = during.to_string();
        match reason {
            CloseReason::Refused(detail) => ProbeError::AssociationRefused { detail },
            CloseReason::PeerAborted => ProbeError::Aborted { during },
            CloseReason::PeerDisconnected => ProbeError::Closed {
                during,
                hint: " (COTP disconnect)",
            },
            CloseReason::Timeout(_) => ProbeError::Timeout {
                during,
                ms: self.ms(),
            },
            CloseReason::Error(e) => ProbeError::Protocol { during, source: e },
            CloseReason::Released | CloseReason::LocalAbort => ProbeError::Closed {
                during,
                hint: " (association already over)",
            },
        }
    }

    /// The next event other than a report (reports are queued), waiting at most until
    /// `deadline` (CLOCK_MONOTONIC ns).
    fn next_event(&mut self, deadline: u64, during: &str) -> Result<Event, ProbeError> {
        loop {
            self.transmit(during)?;
            while let Some(ev) = self.assoc.poll_event() {
                match ev {
                    Event::InformationReport { at, report } => self.reports.push_back(Received {
                        at_ns: at,
                        unix_ns: unix_ns(),
                        report,
                    }),
                    ev => return Ok(ev),
                }
            }
            if !self.wait_input(deadline, during)? {
                return Err(ProbeError::Timeout {
                    during: during.into(),
                    ms: self.ms(),
                });
            }
        }
    }

    /// Waits for input until `deadline` and feeds it to the association; false on timeout.
    fn wait_input(&mut self, deadline: u64, during: &str) -> Result<bool, ProbeError> {
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
        let readable = self
            .stream
            .wait_readable(Some(Duration::from_nanos(until - now)))
            .map_err(|e| self.io_error(e, during))?;
        if !readable {
            return Ok(true); // the loop re-checks the deadlines
        }
        match self.stream.read(&mut self.buf) {
            Ok(0) => Err(ProbeError::Closed {
                during: during.into(),
                hint: "",
            }),
            Ok(n) => {
                if !self.tls && !self.assoc_up() && looks_like_tls(&self.buf[..n]) {
                    return Err(ProbeError::ServerSpeaksTls {
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
            Err(e) => Err(self.io_error(e, during)),
        }
    }

    fn assoc_up(&self) -> bool {
        self.negotiated.is_some()
    }

    /// Sends one confirmed request and waits for its response (or the step timeout).
    pub fn call(
        &mut self,
        request: ConfirmedRequest,
        what: &str,
    ) -> Result<ConfirmedResponse, ProbeError> {
        self.call_timed(request, what).map(|(r, _)| r)
    }

    /// [`Session::call`], also returning the round-trip time in ns (request written to
    /// response decoded).
    pub fn call_timed(
        &mut self,
        request: ConfirmedRequest,
        what: &str,
    ) -> Result<(ConfirmedResponse, u64), ProbeError> {
        let t0 = now_ns();
        let id = self
            .assoc
            .request(t0, request)
            .map_err(|e| ProbeError::Protocol {
                during: what.into(),
                source: e,
            })?;
        let deadline = self.deadline();
        loop {
            match self.next_event(deadline, what)? {
                Event::Response {
                    invoke_id,
                    response,
                    at,
                } if invoke_id == id => return Ok((response, at.saturating_sub(t0))),
                Event::ServiceError {
                    invoke_id, error, ..
                } if invoke_id == id => {
                    return Err(ProbeError::Service {
                        request: what.into(),
                        error,
                    })
                }
                Event::Rejected { reject, .. } => {
                    return Err(ProbeError::Rejected {
                        request: what.into(),
                        reject,
                    })
                }
                Event::Closed { reason, .. } => return Err(self.closed(reason, what)),
                _ => {}
            }
        }
    }

    /// Every name of a GetNameList query, following `moreFollows` (ISO 9506-2 10.5).
    pub fn names(
        &mut self,
        req: GetNameListRequest,
        what: &str,
    ) -> Result<Vec<String>, ProbeError> {
        let mut q = NameListQuery::new(req);
        while let Some(r) = q.next_request() {
            match self.call(ConfirmedRequest::GetNameList(r), what)? {
                ConfirmedResponse::GetNameList(a) => {
                    q.on_response(a).map_err(|e| ProbeError::Protocol {
                        during: what.into(),
                        source: e,
                    })?
                }
                other => return Err(unexpected(what, &other)),
            }
        }
        Ok(q.into_names())
    }

    /// Reads one variable; the access result and the round trip in ns.
    pub fn read(
        &mut self,
        name: &ObjectName,
        what: &str,
    ) -> Result<(AccessResult, u64), ProbeError> {
        let req = ConfirmedRequest::Read(ReadRequest {
            specification_with_result: false,
            spec: VariableAccessSpecification::names([name.clone()]),
        });
        match self.call_timed(req, what)? {
            (ConfirmedResponse::Read(r), rtt) => match r.results.into_iter().next() {
                Some(a) => Ok((a, rtt)),
                None => Err(ProbeError::Protocol {
                    during: what.into(),
                    source: gander_mms::Error::malformed(
                        gander_mms::Layer::Mms,
                        "Read response",
                        "no access result",
                    ),
                }),
            },
            (other, _) => Err(unexpected(what, &other)),
        }
    }

    /// Reads one variable that must succeed.
    pub fn read_value(&mut self, name: &ObjectName, what: &str) -> Result<Data, ProbeError> {
        match self.read(name, what)?.0 {
            AccessResult::Success(d) => Ok(d),
            AccessResult::Failure(e) => Err(ProbeError::Service {
                request: format!("{what} (DataAccessError {e})"),
                error: gander_mms::service::ServiceError::new(
                    gander_mms::service::ServiceError::CLASS_ACCESS,
                    e.0 as i64,
                ),
            }),
        }
    }

    /// Writes one variable: `Ok(Err(e))` when the server refused it with a DataAccessError.
    pub fn write(
        &mut self,
        request: WriteRequest,
        what: &str,
    ) -> Result<Result<(), DataAccessError>, ProbeError> {
        match self.call(ConfirmedRequest::Write(request), what)? {
            ConfirmedResponse::Write(w) => Ok(w.check()),
            other => Err(unexpected(what, &other)),
        }
    }

    /// The next report received, waiting at most until `deadline` (CLOCK_MONOTONIC ns);
    /// `None` when none came.
    pub fn next_report(&mut self, deadline: u64) -> Result<Option<Received>, ProbeError> {
        loop {
            if let Some(r) = self.reports.pop_front() {
                return Ok(Some(r));
            }
            self.transmit("waiting for reports")?;
            while let Some(ev) = self.assoc.poll_event() {
                match ev {
                    Event::InformationReport { at, report } => self.reports.push_back(Received {
                        at_ns: at,
                        unix_ns: unix_ns(),
                        report,
                    }),
                    Event::Closed { reason, .. } => {
                        return Err(self.closed(reason, "waiting for reports"))
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
            self.wait_input(deadline, "waiting for reports")?;
        }
    }

    /// Orderly release: conclude, then ACSE release; returns its duration in ns.
    pub fn release(mut self) -> Result<u64, ProbeError> {
        let during = "the release (conclude, ACSE release)";
        let t0 = now_ns();
        self.assoc.release(t0).map_err(|e| ProbeError::Protocol {
            during: during.into(),
            source: e,
        })?;
        let deadline = self.deadline();
        loop {
            match self.next_event(deadline, during)? {
                Event::Closed {
                    reason: CloseReason::Released,
                    at,
                } => {
                    let _ = self.transmit(during);
                    self.released = true;
                    self.stream.close();
                    return Ok(at.saturating_sub(t0));
                }
                Event::Closed { reason, .. } => return Err(self.closed(reason, during)),
                _ => {}
            }
        }
    }
}

impl Drop for Session {
    /// A session not released is aborted: ABORT to the server (where a session exists), then
    /// close_notify and FIN.
    fn drop(&mut self) {
        if !self.released {
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
}

fn unexpected(what: &str, got: &ConfirmedResponse) -> ProbeError {
    let got = match got {
        ConfirmedResponse::Identify(_) => "Identify",
        ConfirmedResponse::GetNameList(_) => "GetNameList",
        ConfirmedResponse::GetVariableAccessAttributes(_) => "GetVariableAccessAttributes",
        ConfirmedResponse::GetNamedVariableListAttributes(_) => "GetNamedVariableListAttributes",
        ConfirmedResponse::Read(_) => "Read",
        ConfirmedResponse::Write(_) => "Write",
        ConfirmedResponse::DefineNamedVariableList => "DefineNamedVariableList",
        ConfirmedResponse::DeleteNamedVariableList(_) => "DeleteNamedVariableList",
        ConfirmedResponse::Other { .. } => "other service's",
    };
    ProbeError::UnexpectedResponse {
        request: what.into(),
        got,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_records_are_told_from_tpkt() {
        // A TLS alert (21, 3.3), a handshake record, and a TPKT header (version 3).
        assert!(looks_like_tls(&[0x15, 0x03, 0x03, 0x00, 0x02]));
        assert!(looks_like_tls(&[0x16, 0x03, 0x01]));
        assert!(!looks_like_tls(&[0x03, 0x00, 0x00, 0x16]));
        assert!(!looks_like_tls(&[0x15]));
    }

    #[test]
    fn client_hello_lengths_add_up() {
        let h = client_hello();
        assert_eq!(&h[..3], &[0x16, 0x03, 0x01]);
        assert_eq!(u16::from_be_bytes([h[3], h[4]]) as usize, h.len() - 5);
        assert_eq!(h[5], 0x01); // ClientHello
        assert_eq!(u16::from_be_bytes([h[7], h[8]]) as usize, h.len() - 9);
        // Extensions block length matches what follows it.
        let ext_at = 9 + 2 + 32 + 1 + 2 + 12 + 2;
        assert_eq!(
            u16::from_be_bytes([h[ext_at], h[ext_at + 1]]) as usize,
            h.len() - ext_at - 2
        );
    }

    #[test]
    fn total_is_the_sum_of_the_steps() {
        let t = Timings {
            tcp_ns: 1,
            tls_ns: Some(10),
            cotp_ns: 100,
            initiate_ns: 1000,
        };
        assert_eq!(t.total_ns(), 1111);
    }
}
