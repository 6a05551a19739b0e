//! Client and server association state machines, sans-I/O in the style of `quinn-proto`.
//!
//! Each machine owns no socket, clock or thread. The driver:
//! 1. feeds every byte read from the (TLS-)TCP stream to `handle_input(now, bytes)`,
//! 2. writes every packet returned by `poll_transmit()` to the stream, in order,
//! 3. drains `poll_event()` and acts on the events (timestamps, reports, responses),
//! 4. calls `handle_timeout(now)` when `poll_timeout()` says so,
//! 5. closes the TCP connection once `is_closed()` holds and `poll_transmit()` is empty.
//!
//! `now` is a driver-chosen monotonic timestamp in nanoseconds (gander uses
//! CLOCK_MONOTONIC), echoed in [`Event::Step`] so the measurement layer can split the
//! handshake time into its sub-steps exactly where each PDU is produced or consumed.
//!
//! The stack, bottom up (`docs/mms-bytes.md` §1): TPKT (RFC 1006) / COTP class 0 (ISO 8073) /
//! session kernel+duplex (ISO 8327-1) / presentation kernel (ISO 8823-1) / ACSE (ISO 8650-1) /
//! MMS (ISO 9506-2). Association: CR→CC, then one DT carrying CN{CP{AARQ{initiate-Request}}}
//! answered by AC{CPA{AARE{initiate-Response}}}. Release (`docs/mms-bytes.md` §3): conclude
//! `8B 00`→`8C 00`, then FINISH{RLRQ}→DISCONNECT{RLRE}.
//!
//! Every malformed or unexpected input ends in one [`Event::Closed`] carrying the specific
//! [`Error`]; after a session is up, the machine first queues an ABORT (ACSE ABRT, source
//! provider) so that the peer learns why. Sizes are capped (TPKT packet, reassembled TSDU,
//! outstanding requests) and each waiting state has a deadline, so a peer can neither make
//! the machine allocate without bound nor stall it forever.

use gander_wire::Codec;
use std::collections::VecDeque;

use gander_wire::data::Data;

use crate::acse::{self, Aare, Aarq, Apdu, Diagnostic};
use crate::cotp::{self, ConnectParams, DtReassembler, Tpdu};
use crate::error::{Error, Layer, Result};
use crate::iso_session::{ConnectSpdu, Spdu, ABORT_TRANSPORT_DISCONNECT};
use crate::pdu::{ConfirmedRequest, ConfirmedResponse, MmsPdu, Unconfirmed};
use crate::presentation::{self, AbortPpdu, AcceptPpdu, ConnectPpdu, Pdv, RefusePpdu};
use crate::service::{
    AccessResult, DataAccessError, DefineNamedVariableListRequest, DeleteNamedVariableListRequest,
    DeleteNamedVariableListResponse, GetNameListResponse, GetNamedVariableListAttributesResponse,
    GetVariableAccessAttributesResponse, IdentifyResponse, InformationReport, Initiate,
    ObjectClass, ObjectName, ObjectScope, ReadRequest, ReadResponse, Reject, ServiceError,
    StatusResponse, VariableAccessSpecification, VariableRef, WriteRequest, WriteResponse,
};
use crate::tpkt;

/// A monotonic timestamp in nanoseconds, supplied by the driver.
pub type Nanos = u64;
/// Identifies one server-side connection to the [`ServerHandler`] (RCB ownership).
pub type ConnId = u64;

/// Resource limits shared by both machines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest TPDU size code proposed/accepted (ISO 8073: 7..=13, 13 = 8192 octets).
    pub max_tpdu_size_code: u8,
    /// Largest reassembled TSDU (session PDU); default 65000 + 1024 octets of headers.
    pub max_tsdu: usize,
    /// Deadline for each waiting state (connect, associate, release), in nanoseconds.
    pub step_timeout: Nanos,
    /// Most confirmed requests outstanding at once (client side, before negotiation).
    pub max_outstanding: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_tpdu_size_code: cotp::TPDU_SIZE_MAX_CODE,
            max_tsdu: 65000 + 1024,
            step_timeout: 10_000_000_000,
            max_outstanding: 5,
        }
    }
}

/// A point in the association's life, reported with its timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Client: COTP CR queued.
    CotpConnectSent,
    /// Server: COTP CR received.
    CotpConnectReceived,
    /// Client: CC received / server: CC queued. The transport connection is up.
    CotpConnected,
    /// Client: CN{CP{AARQ{initiate}}} queued.
    AssociateSent,
    /// Server: CN{CP{AARQ{initiate}}} received.
    AssociateReceived,
    /// Client: positive AC{CPA{AARE{initiate}}} received / server: it is queued.
    Associated,
    /// Conclude request queued (client) or received (server).
    ConcludeRequested,
    /// Conclude response received (client) or queued (server).
    Concluded,
    /// FINISH{RLRQ} queued (client) or received (server).
    ReleaseRequested,
    /// DISCONNECT{RLRE} received (client) or queued (server).
    Released,
}

/// Why an association ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// Orderly release completed.
    Released,
    /// The peer aborted (session ABORT, ACSE ABRT or presentation abort).
    PeerAborted,
    /// The peer sent a COTP DR or ER.
    PeerDisconnected,
    /// The association was refused (by the peer, or by us as server).
    Refused(String),
    /// A waiting state exceeded [`Limits::step_timeout`].
    Timeout(&'static str),
    /// The local user called `abort`.
    LocalAbort,
    /// The peer sent something malformed or out of sequence.
    Error(Error),
}

/// What happened; drained with `poll_event`.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A handshake or release step, with the driver's timestamp.
    Step {
        /// Which step.
        step: Step,
        /// Driver timestamp of the input or call that produced the event.
        at: Nanos,
    },
    /// The association is up: the negotiated initiate parameters.
    Associated {
        /// Driver timestamp of the input or call that produced the event.
        at: Nanos,
        /// The initiate parameters both sides agreed on.
        initiate: Initiate,
    },
    /// Client: a confirmed response.
    Response {
        /// Driver timestamp of the input or call that produced the event.
        at: Nanos,
        /// invokeID of the request this answers.
        invoke_id: u32,
        /// The service response.
        response: ConfirmedResponse,
    },
    /// Client: a confirmed-Error.
    ServiceError {
        /// Driver timestamp of the input or call that produced the event.
        at: Nanos,
        /// invokeID of the request this answers.
        invoke_id: u32,
        /// The serviceError the server returned.
        error: ServiceError,
    },
    /// A reject PDU from the peer.
    Rejected {
        /// Driver timestamp of the input or call that produced the event.
        at: Nanos,
        /// The reject PDU as received.
        reject: Reject,
    },
    /// Client: an InformationReport (IEC 61850 reports arrive here).
    InformationReport {
        /// Driver timestamp of the input that completed the report (RT_END).
        at: Nanos,
        /// The report as received.
        report: InformationReport,
    },
    /// Server: a Read was answered.
    Read {
        /// Driver timestamp of the input or call that produced the event.
        at: Nanos,
        /// invokeID of the Read.
        invoke_id: u32,
        /// The variables that were read.
        spec: VariableAccessSpecification,
    },
    /// Server: one variable of a Write was handled.
    Written {
        /// Driver timestamp of the input or call that produced the event.
        at: Nanos,
        /// invokeID of the Write.
        invoke_id: u32,
        /// The variable written.
        name: ObjectName,
        /// Success, or the DataAccessError the server answered for this variable.
        result: core::result::Result<(), DataAccessError>,
    },
    /// The association is over; drain `poll_transmit` and close the stream.
    Closed {
        /// Driver timestamp of the input or call that produced the event.
        at: Nanos,
        /// Why the association ended.
        reason: CloseReason,
    },
}

/// The layers below MMS, shared by both machines: stream framing, DT reassembly and the
/// outgoing packet queue.
#[derive(Debug)]
struct Transport {
    tpkt: tpkt::Reassembler,
    dt: DtReassembler,
    tpdu_size: usize,
    out: VecDeque<Vec<u8>>,
    /// presentation context ids negotiated in the CP.
    acse_ctx: u64,
    mms_ctx: u64,
}

impl Transport {
    fn new(limits: &Limits) -> Self {
        let max_tpdu = cotp::tpdu_size_from_code(limits.max_tpdu_size_code);
        Transport {
            tpkt: tpkt::Reassembler::new(max_tpdu + tpkt::HEADER_LEN),
            dt: DtReassembler::new(limits.max_tsdu),
            tpdu_size: max_tpdu,
            out: VecDeque::new(),
            acse_ctx: presentation::ACSE_CONTEXT_ID,
            mms_ctx: presentation::MMS_CONTEXT_ID,
        }
    }

    fn send_tpdu(&mut self, t: &Tpdu<'_>) {
        if let Ok(p) = tpkt::frame(&t.to_vec()) {
            self.out.push_back(p);
        }
    }

    fn send_spdu(&mut self, s: &Spdu<'_>) {
        let tsdu = s.to_vec();
        for dt in cotp::data_tpdus(&tsdu, self.tpdu_size) {
            if let Ok(p) = tpkt::frame(&dt) {
                self.out.push_back(p);
            }
        }
    }

    fn send_mms(&mut self, pdu: &MmsPdu) {
        let ud = presentation::user_data(self.mms_ctx, pdu.to_vec());
        self.send_spdu(&Spdu::Data(&ud));
    }

    fn send_abort(&mut self) {
        let abrt = Apdu::Abrt {
            source: 1,
            diagnostic: None,
        }
        .to_vec();
        let aru = AbortPpdu::User(vec![Pdv::new(self.acse_ctx, abrt)]).to_vec();
        self.send_spdu(&Spdu::Abort {
            transport_disconnect: Some(ABORT_TRANSPORT_DISCONNECT),
            user_data: &aru,
        });
    }
}

/// One unit of input after framing.
enum Input {
    Tpdu(Vec<u8>),
}

fn next_input(t: &mut Transport) -> Option<Result<Input>> {
    t.tpkt.next_packet().map(|r| r.map(Input::Tpdu))
}

/// Extract the single PDV of `pdvs` in context `ctx`.
fn pdv_in(pdvs: Vec<Pdv>, ctx: u64, what: &'static str) -> Result<Vec<u8>> {
    pdvs.into_iter()
        .find(|p| p.context_id == ctx)
        .map(|p| p.data)
        .ok_or(Error::malformed(
            Layer::Presentation,
            what,
            "no PDV in the expected presentation context",
        ))
}

// ---------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------

/// Client configuration. The defaults reproduce libiec61850's client byte for byte.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// COTP CR parameters.
    pub cotp: ConnectParams,
    /// The AARQ (its user-information is replaced by the initiate request).
    pub aarq: Aarq,
    /// The MMS initiate request.
    pub initiate: Initiate,
    /// Limits.
    pub limits: Limits,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            cotp: ConnectParams::libiec61850_request(),
            aarq: Aarq::libiec61850(Vec::new()),
            initiate: Initiate::libiec61850_request(),
            limits: Limits::default(),
        }
    }
}

/// Client association states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientState {
    /// `connect` not called yet.
    Idle,
    /// CR sent, waiting for CC.
    AwaitCc,
    /// CN sent, waiting for AC.
    AwaitAc,
    /// Data phase.
    Associated,
    /// Conclude sent, waiting for its response.
    AwaitConclude,
    /// FINISH sent, waiting for DISCONNECT.
    AwaitDisconnect,
    /// Over.
    Closed,
}

impl ClientState {
    fn name(self) -> &'static str {
        match self {
            ClientState::Idle => "idle",
            ClientState::AwaitCc => "await-CC",
            ClientState::AwaitAc => "await-AC",
            ClientState::Associated => "associated",
            ClientState::AwaitConclude => "await-conclude",
            ClientState::AwaitDisconnect => "await-disconnect",
            ClientState::Closed => "closed",
        }
    }
}

/// The client side of one association.
#[derive(Debug)]
pub struct ClientAssociation {
    config: ClientConfig,
    state: ClientState,
    t: Transport,
    events: VecDeque<Event>,
    deadline: Option<Nanos>,
    next_invoke_id: u32,
    outstanding: Vec<u32>,
    max_outstanding: usize,
    negotiated: Option<Initiate>,
}

impl ClientAssociation {
    /// A new client; nothing is sent until [`connect`](Self::connect).
    pub fn new(config: ClientConfig) -> Self {
        ClientAssociation {
            t: Transport::new(&config.limits),
            max_outstanding: config.limits.max_outstanding.max(1),
            config,
            state: ClientState::Idle,
            events: VecDeque::new(),
            deadline: None,
            next_invoke_id: 1,
            outstanding: Vec::new(),
            negotiated: None,
        }
    }

    /// Current state.
    pub fn state(&self) -> ClientState {
        self.state
    }

    /// Whether the association is over.
    pub fn is_closed(&self) -> bool {
        self.state == ClientState::Closed
    }

    /// The initiate response, once associated.
    pub fn negotiated(&self) -> Option<&Initiate> {
        self.negotiated.as_ref()
    }

    /// Queue the COTP CR. Call right after the (TLS-)TCP connection is up.
    pub fn connect(&mut self, now: Nanos) -> Result<()> {
        if self.state != ClientState::Idle {
            return Err(self.invalid("connect"));
        }
        self.t
            .send_tpdu(&Tpdu::ConnectionRequest(self.config.cotp.clone()));
        self.enter(ClientState::AwaitCc, now);
        self.step(Step::CotpConnectSent, now);
        Ok(())
    }

    /// The next packet to write to the stream.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.t.out.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When `handle_timeout` must be called next.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.deadline
    }

    /// Close with [`CloseReason::Timeout`] if a waiting state's deadline has passed.
    pub fn handle_timeout(&mut self, now: Nanos) {
        if self.deadline.is_some_and(|d| now >= d) {
            let what = self.state.name();
            self.close(now, CloseReason::Timeout(what), self.session_up());
        }
    }

    /// Send a Read of the given variables; returns the invoke ID.
    pub fn read(&mut self, now: Nanos, names: Vec<ObjectName>) -> Result<u32> {
        self.request(
            now,
            ConfirmedRequest::Read(ReadRequest {
                specification_with_result: false,
                spec: VariableAccessSpecification::names(names),
            }),
        )
    }

    /// Send a Write; returns the invoke ID.
    pub fn write(&mut self, now: Nanos, request: WriteRequest) -> Result<u32> {
        self.request(now, ConfirmedRequest::Write(request))
    }

    /// Send any confirmed request; returns the invoke ID.
    pub fn request(&mut self, _now: Nanos, request: ConfirmedRequest) -> Result<u32> {
        if self.state != ClientState::Associated {
            return Err(self.invalid("confirmed request"));
        }
        if self.outstanding.len() >= self.max_outstanding {
            return Err(Error::Limit {
                layer: Layer::Mms,
                what: "negotiated maxServOutstandingCalling reached",
            });
        }
        let invoke_id = self.next_invoke_id;
        self.next_invoke_id = self.next_invoke_id.wrapping_add(1).max(1);
        self.outstanding.push(invoke_id);
        self.t
            .send_mms(&MmsPdu::ConfirmedRequest { invoke_id, request });
        Ok(invoke_id)
    }

    /// Start the orderly release: conclude, then FINISH{RLRQ} (`docs/mms-bytes.md` §3).
    pub fn release(&mut self, now: Nanos) -> Result<()> {
        if self.state != ClientState::Associated {
            return Err(self.invalid("release"));
        }
        self.t.send_mms(&MmsPdu::ConcludeRequest);
        self.enter(ClientState::AwaitConclude, now);
        self.step(Step::ConcludeRequested, now);
        Ok(())
    }

    /// Abort: queue an ABORT if a session exists, then close.
    pub fn abort(&mut self, now: Nanos) {
        if self.state != ClientState::Closed {
            self.close(now, CloseReason::LocalAbort, self.session_up());
        }
    }

    /// Feed bytes read from the stream.
    pub fn handle_input(&mut self, now: Nanos, bytes: &[u8]) {
        if self.state == ClientState::Closed {
            return;
        }
        self.t.tpkt.push(bytes);
        while self.state != ClientState::Closed {
            let Some(input) = next_input(&mut self.t) else {
                break;
            };
            let r = input.and_then(|Input::Tpdu(p)| self.on_tpdu(now, &p));
            if let Err(e) = r {
                let abort =
                    self.session_up() && !matches!(e.layer(), Some(Layer::Tpkt | Layer::Cotp));
                self.close(now, CloseReason::Error(e), abort);
            }
        }
    }

    fn session_up(&self) -> bool {
        matches!(
            self.state,
            ClientState::AwaitAc
                | ClientState::Associated
                | ClientState::AwaitConclude
                | ClientState::AwaitDisconnect
        )
    }

    fn invalid(&self, what: &'static str) -> Error {
        Error::InvalidState {
            what,
            state: self.state.name(),
        }
    }

    fn unexpected(&self, layer: Layer, what: &'static str) -> Error {
        Error::UnexpectedPdu {
            layer,
            what,
            state: self.state.name(),
        }
    }

    fn enter(&mut self, s: ClientState, now: Nanos) {
        self.state = s;
        self.deadline = match s {
            ClientState::AwaitCc
            | ClientState::AwaitAc
            | ClientState::AwaitConclude
            | ClientState::AwaitDisconnect => {
                Some(now.saturating_add(self.config.limits.step_timeout))
            }
            _ => None,
        };
    }

    fn step(&mut self, step: Step, at: Nanos) {
        self.events.push_back(Event::Step { step, at });
    }

    fn close(&mut self, now: Nanos, reason: CloseReason, send_abort: bool) {
        if send_abort {
            self.t.send_abort();
        }
        self.enter(ClientState::Closed, now);
        self.events.push_back(Event::Closed { at: now, reason });
    }

    fn on_tpdu(&mut self, now: Nanos, packet: &[u8]) -> Result<()> {
        match Tpdu::parse(packet)? {
            Tpdu::ConnectionConfirm(cc) => {
                if self.state != ClientState::AwaitCc {
                    return Err(self.unexpected(Layer::Cotp, "CC"));
                }
                // ISO 8073 14.6: the responder may lower, never raise, the TPDU size.
                let size = cc
                    .tpdu_size_octets()
                    .min(self.config.cotp.tpdu_size_octets());
                self.t.tpdu_size = size;
                self.step(Step::CotpConnected, now);
                self.send_associate(now);
                Ok(())
            }
            Tpdu::Data { eot, user_data } => {
                if matches!(self.state, ClientState::Idle | ClientState::AwaitCc) {
                    return Err(self.unexpected(Layer::Cotp, "DT"));
                }
                match self.t.dt.push(eot, user_data)? {
                    Some(tsdu) => self.on_spdu(now, &tsdu),
                    None => Ok(()),
                }
            }
            Tpdu::DisconnectRequest { .. } | Tpdu::Error { .. } => {
                self.close(now, CloseReason::PeerDisconnected, false);
                Ok(())
            }
            Tpdu::ConnectionRequest(_) => Err(self.unexpected(Layer::Cotp, "CR")),
        }
    }

    fn send_associate(&mut self, now: Nanos) {
        let initiate = MmsPdu::InitiateRequest(self.config.initiate.clone()).to_vec();
        let mut aarq = self.config.aarq.clone();
        aarq.user_information = Some(acse::External {
            indirect_reference: Some(self.t.mms_ctx as i64),
            data: initiate,
        });
        let cp = ConnectPpdu::libiec61850(Apdu::Aarq(aarq).to_vec()).to_vec();
        self.t
            .send_spdu(&Spdu::Connect(ConnectSpdu::libiec61850_connect(&cp)));
        self.enter(ClientState::AwaitAc, now);
        self.step(Step::AssociateSent, now);
    }

    fn on_spdu(&mut self, now: Nanos, tsdu: &[u8]) -> Result<()> {
        match Spdu::parse(tsdu)? {
            Spdu::Accept(ac) => {
                if self.state != ClientState::AwaitAc {
                    return Err(self.unexpected(Layer::Session, "ACCEPT"));
                }
                // libiec61850's client ignores the CPA's result list and selector.
                let cpa = AcceptPpdu::parse(ac.user_data)?;
                let aare = pdv_in(cpa.user_data, self.t.acse_ctx, "CPA user data")?;
                let Apdu::Aare(aare) = Apdu::parse(&aare)? else {
                    return Err(self.unexpected(Layer::Acse, "APDU other than AARE"));
                };
                if aare.result != Some(acse::result::ACCEPTED) {
                    let detail = format!(
                        "AARE result {:?}, diagnostic {:?}",
                        aare.result, aare.diagnostic
                    );
                    self.close(now, CloseReason::Refused(detail), false);
                    return Ok(());
                }
                let ext = aare.user_information.ok_or(Error::malformed(
                    Layer::Acse,
                    "AARE",
                    "no user-information",
                ))?;
                match MmsPdu::parse(&ext.data)? {
                    MmsPdu::InitiateResponse(i) => {
                        self.max_outstanding = (i.max_serv_outstanding_calling as usize)
                            .clamp(1, self.config.limits.max_outstanding.max(1));
                        self.negotiated = Some(i.clone());
                        self.enter(ClientState::Associated, now);
                        self.step(Step::Associated, now);
                        self.events.push_back(Event::Associated {
                            at: now,
                            initiate: i,
                        });
                        Ok(())
                    }
                    MmsPdu::InitiateError(e) => {
                        self.close(
                            now,
                            CloseReason::Refused(format!("initiate-Error {e:?}")),
                            true,
                        );
                        Ok(())
                    }
                    _ => Err(self.unexpected(Layer::Mms, "PDU other than initiate-Response")),
                }
            }
            Spdu::Refuse {
                user_data, reason, ..
            } => {
                if self.state != ClientState::AwaitAc {
                    return Err(self.unexpected(Layer::Session, "REFUSE"));
                }
                let mut detail = format!("session REFUSE reason {reason}");
                if let Ok(cpr) = RefusePpdu::parse(user_data) {
                    detail.push_str(&format!(", provider-reason {:?}", cpr.provider_reason));
                    if let Some(Ok(Apdu::Aare(a))) =
                        cpr.user_data.first().map(|p| Apdu::parse(&p.data))
                    {
                        detail.push_str(&format!(", AARE diagnostic {:?}", a.diagnostic));
                    }
                }
                self.close(now, CloseReason::Refused(detail), false);
                Ok(())
            }
            Spdu::Data(ud) => {
                if !matches!(
                    self.state,
                    ClientState::Associated | ClientState::AwaitConclude
                ) {
                    return Err(self.unexpected(Layer::Session, "DATA"));
                }
                let pdu = pdv_in(presentation::parse_user_data(ud)?, self.t.mms_ctx, "P-DATA")?;
                self.on_mms(now, MmsPdu::parse(&pdu)?)
            }
            Spdu::Disconnect(ud) => {
                if self.state != ClientState::AwaitDisconnect {
                    return Err(self.unexpected(Layer::Session, "DISCONNECT"));
                }
                let rlre = pdv_in(
                    presentation::parse_user_data(ud)?,
                    self.t.acse_ctx,
                    "DISCONNECT",
                )?;
                match Apdu::parse(&rlre)? {
                    Apdu::Rlre { .. } => {
                        self.step(Step::Released, now);
                        self.close(now, CloseReason::Released, false);
                        Ok(())
                    }
                    _ => Err(self.unexpected(Layer::Acse, "APDU other than RLRE")),
                }
            }
            Spdu::Abort { .. } => {
                self.close(now, CloseReason::PeerAborted, false);
                Ok(())
            }
            s => Err(self.unexpected(Layer::Session, s.name())),
        }
    }

    fn on_mms(&mut self, now: Nanos, pdu: MmsPdu) -> Result<()> {
        let done = |this: &mut Self, id: u32| -> Result<()> {
            match this.outstanding.iter().position(|&x| x == id) {
                Some(i) => {
                    this.outstanding.swap_remove(i);
                    Ok(())
                }
                None => Err(Error::malformed(
                    Layer::Mms,
                    "confirmed PDU",
                    "invokeID of no outstanding request",
                )),
            }
        };
        match pdu {
            MmsPdu::ConfirmedResponse {
                invoke_id,
                response,
            } => {
                done(self, invoke_id)?;
                self.events.push_back(Event::Response {
                    at: now,
                    invoke_id,
                    response,
                });
            }
            MmsPdu::ConfirmedError { invoke_id, error } => {
                done(self, invoke_id)?;
                self.events.push_back(Event::ServiceError {
                    at: now,
                    invoke_id,
                    error,
                });
            }
            MmsPdu::Unconfirmed(Unconfirmed::InformationReport(report)) => {
                self.events
                    .push_back(Event::InformationReport { at: now, report });
            }
            MmsPdu::Unconfirmed(Unconfirmed::Other { .. }) => {}
            MmsPdu::Reject(reject) => {
                if let Some(id) = reject.invoke_id {
                    let _ = done(self, id);
                }
                self.events.push_back(Event::Rejected { at: now, reject });
            }
            MmsPdu::ConcludeResponse if self.state == ClientState::AwaitConclude => {
                self.step(Step::Concluded, now);
                let rlrq = Apdu::Rlrq { reason: Some(0) }.to_vec();
                let ud = presentation::user_data(self.t.acse_ctx, rlrq);
                self.t.send_spdu(&Spdu::Finish(&ud));
                self.enter(ClientState::AwaitDisconnect, now);
                self.step(Step::ReleaseRequested, now);
            }
            MmsPdu::ConcludeError(e) if self.state == ClientState::AwaitConclude => {
                // ISO 9506-2 8.4: conclude refused; the association stays.
                self.enter(ClientState::Associated, now);
                self.events.push_back(Event::ServiceError {
                    at: now,
                    invoke_id: 0,
                    error: e,
                });
            }
            other => return Err(self.unexpected(Layer::Mms, other.name())),
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------

/// What a server association asks of the data model. [`crate::model::ImpModel`] is the
/// implementation gander uses; a test or another model can supply its own.
pub trait ServerHandler {
    /// Read one variable.
    fn read(&mut self, conn: ConnId, name: &ObjectName) -> AccessResult;
    /// Read a variable through an alternate access that is not a plain component path (an
    /// array element, ISO 9506-2 14.1 index selection). `None`: object-access-unsupported.
    fn read_selected(&mut self, _conn: ConnId, _var: &VariableRef) -> Option<AccessResult> {
        None
    }
    /// Write a variable through an alternate access that is not a plain component path (an
    /// array element, ISO 9506-2 14.1 index selection). `None`: object-access-unsupported.
    fn write_selected(
        &mut self,
        _conn: ConnId,
        _var: &VariableRef,
        _value: &Data,
    ) -> Option<core::result::Result<(), DataAccessError>> {
        None
    }
    /// Read a named variable list (data set); `None` if it does not exist.
    fn read_list(&mut self, _conn: ConnId, _list: &ObjectName) -> Option<Vec<AccessResult>> {
        None
    }
    /// Write one variable.
    fn write(
        &mut self,
        conn: ConnId,
        name: &ObjectName,
        value: &Data,
    ) -> core::result::Result<(), DataAccessError>;
    /// The connection ended (release, abort or error): free its reservations.
    fn connection_closed(&mut self, _conn: ConnId) {}
    /// Unconfirmed reports to send to `conn` before the response just computed, e.g. the
    /// LastApplError that precedes a refused control Write (IEC 61850-8-1 clause 20).
    fn take_reports_before_response(&mut self, _conn: ConnId) -> Vec<InformationReport> {
        Vec::new()
    }
    /// Status (ISO 9506-2 10.2). By default a working VMD that accepts changes (what
    /// libiec61850's server answers unless its application says otherwise), since every
    /// server advertises the service (`gander_server_services`); `None`: rejected
    /// (unrecognized-service).
    fn status(&mut self, _conn: ConnId, _extended_derivation: bool) -> Option<StatusResponse> {
        Some(StatusResponse::operational())
    }
    /// Identify (ISO 9506-2 10.1). `None`: not offered, the request is rejected
    /// (unrecognized-service) as libiec61850 does for services it lacks.
    fn identify(&mut self, _conn: ConnId) -> Option<IdentifyResponse> {
        None
    }
    /// GetNameList (ISO 9506-2 10.5): every name of `class` in `scope`, sorted; the
    /// association pages it to the negotiated PDU size and honours continueAfter. `None`:
    /// rejected; `Some(Err)`: a confirmed-Error.
    fn name_list(
        &mut self,
        _conn: ConnId,
        _class: ObjectClass,
        _scope: &ObjectScope,
    ) -> Option<core::result::Result<Vec<String>, ServiceError>> {
        None
    }
    /// GetVariableAccessAttributes (ISO 9506-2 14.9) of a named variable.
    fn variable_access_attributes(
        &mut self,
        _conn: ConnId,
        _name: &ObjectName,
    ) -> Option<core::result::Result<GetVariableAccessAttributesResponse, ServiceError>> {
        None
    }
    /// GetNamedVariableListAttributes (ISO 9506-2 14.13): a data set's members.
    fn named_variable_list_attributes(
        &mut self,
        _conn: ConnId,
        _name: &ObjectName,
    ) -> Option<core::result::Result<GetNamedVariableListAttributesResponse, ServiceError>> {
        None
    }
    /// DefineNamedVariableList (ISO 9506-2 14.12; IEC 61850 dynamic data sets), with the
    /// negotiated PDU size that bounds the list. `None`: rejected (unrecognized-service).
    fn define_named_variable_list(
        &mut self,
        _conn: ConnId,
        _request: &DefineNamedVariableListRequest,
        _max_pdu: usize,
    ) -> Option<core::result::Result<(), ServiceError>> {
        None
    }
    /// DeleteNamedVariableList (ISO 9506-2 14.14). `None`: rejected (unrecognized-service).
    fn delete_named_variable_list(
        &mut self,
        _conn: ConnId,
        _request: &DeleteNamedVariableListRequest,
    ) -> Option<core::result::Result<DeleteNamedVariableListResponse, ServiceError>> {
        None
    }
}

/// What a handler's optional service answered, before it becomes a PDU.
enum Answer {
    Response(ConfirmedResponse),
    Error(ServiceError),
    Unsupported,
}

fn answer<T>(
    r: Option<core::result::Result<T, ServiceError>>,
    wrap: impl FnOnce(T) -> ConfirmedResponse,
) -> Answer {
    match r {
        None => Answer::Unsupported,
        Some(Ok(v)) => Answer::Response(wrap(v)),
        Some(Err(e)) => Answer::Error(e),
    }
}

/// Server configuration.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The server's initiate limits and services (response = request clamped to these).
    pub initiate: Initiate,
    /// If set, the AARQ must carry this password (ACSE mechanism 2.2.3.1).
    pub password: Option<Vec<u8>>,
    /// Limits.
    pub limits: Limits,
}

impl Default for ServerConfig {
    fn default() -> Self {
        let mut initiate = Initiate::libiec61850_request();
        initiate.services_supported = crate::service::initiate::gander_server_services();
        ServerConfig {
            initiate,
            password: None,
            limits: Limits::default(),
        }
    }
}

/// Server association states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerState {
    /// Waiting for the COTP CR.
    AwaitCr,
    /// Waiting for CN.
    AwaitCn,
    /// Data phase.
    Associated,
    /// Conclude answered; waiting for FINISH.
    Concluded,
    /// Over.
    Closed,
}

impl ServerState {
    fn name(self) -> &'static str {
        match self {
            ServerState::AwaitCr => "await-CR",
            ServerState::AwaitCn => "await-CN",
            ServerState::Associated => "associated",
            ServerState::Concluded => "concluded",
            ServerState::Closed => "closed",
        }
    }
}

/// The server side of one association.
#[derive(Debug)]
pub struct ServerAssociation {
    config: ServerConfig,
    conn: ConnId,
    state: ServerState,
    t: Transport,
    events: VecDeque<Event>,
    deadline: Option<Nanos>,
    negotiated: Option<Initiate>,
    calling_ap_title: Option<String>,
}

impl ServerAssociation {
    /// A server association for a freshly accepted stream; `now` starts the CR deadline.
    pub fn new(config: ServerConfig, conn: ConnId, now: Nanos) -> Self {
        ServerAssociation {
            t: Transport::new(&config.limits),
            deadline: Some(now.saturating_add(config.limits.step_timeout)),
            config,
            conn,
            state: ServerState::AwaitCr,
            events: VecDeque::new(),
            negotiated: None,
            calling_ap_title: None,
        }
    }

    /// Current state.
    pub fn state(&self) -> ServerState {
        self.state
    }

    /// The connection id given to the handler.
    pub fn conn_id(&self) -> ConnId {
        self.conn
    }

    /// Whether the association is over.
    pub fn is_closed(&self) -> bool {
        self.state == ServerState::Closed
    }

    /// Whether reports may be sent.
    pub fn is_associated(&self) -> bool {
        self.state == ServerState::Associated
    }

    /// The negotiated initiate parameters.
    pub fn negotiated(&self) -> Option<&Initiate> {
        self.negotiated.as_ref()
    }

    /// The client's calling AP title from the AARQ, dotted.
    pub fn calling_ap_title(&self) -> Option<&str> {
        self.calling_ap_title.as_deref()
    }

    /// The next packet to write to the stream.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.t.out.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When `handle_timeout` must be called next.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.deadline
    }

    /// Close with [`CloseReason::Timeout`] if the deadline has passed.
    pub fn handle_timeout(&mut self, now: Nanos, handler: &mut dyn ServerHandler) {
        if self.deadline.is_some_and(|d| now >= d) {
            let what = self.state.name();
            let abort = self.state == ServerState::Concluded;
            self.close(now, CloseReason::Timeout(what), abort, handler);
        }
    }

    /// Queue an InformationReport (unconfirmed, ISO 9506-2 14.8).
    pub fn send_information_report(&mut self, report: &InformationReport) -> Result<()> {
        if self.state != ServerState::Associated {
            return Err(Error::InvalidState {
                what: "information report",
                state: self.state.name(),
            });
        }
        self.t
            .send_mms(&MmsPdu::Unconfirmed(Unconfirmed::InformationReport(
                report.clone(),
            )));
        Ok(())
    }

    /// Abort the association.
    pub fn abort(&mut self, now: Nanos, handler: &mut dyn ServerHandler) {
        if self.state != ServerState::Closed {
            let abort = matches!(self.state, ServerState::Associated | ServerState::Concluded);
            self.close(now, CloseReason::LocalAbort, abort, handler);
        }
    }

    /// Feed bytes read from the stream; requests are answered through `handler`.
    pub fn handle_input(&mut self, now: Nanos, bytes: &[u8], handler: &mut dyn ServerHandler) {
        if self.state == ServerState::Closed {
            return;
        }
        self.t.tpkt.push(bytes);
        while self.state != ServerState::Closed {
            let Some(input) = next_input(&mut self.t) else {
                break;
            };
            let r = input.and_then(|Input::Tpdu(p)| self.on_tpdu(now, &p, handler));
            if let Err(e) = r {
                let abort = matches!(self.state, ServerState::Associated | ServerState::Concluded)
                    && !matches!(e.layer(), Some(Layer::Tpkt | Layer::Cotp));
                self.close(now, CloseReason::Error(e), abort, handler);
            }
        }
    }

    fn unexpected(&self, layer: Layer, what: &'static str) -> Error {
        Error::UnexpectedPdu {
            layer,
            what,
            state: self.state.name(),
        }
    }

    fn step(&mut self, step: Step, at: Nanos) {
        self.events.push_back(Event::Step { step, at });
    }

    fn close(
        &mut self,
        now: Nanos,
        reason: CloseReason,
        send_abort: bool,
        handler: &mut dyn ServerHandler,
    ) {
        if send_abort {
            self.t.send_abort();
        }
        self.state = ServerState::Closed;
        self.deadline = None;
        handler.connection_closed(self.conn);
        self.events.push_back(Event::Closed { at: now, reason });
    }

    fn on_tpdu(
        &mut self,
        now: Nanos,
        packet: &[u8],
        handler: &mut dyn ServerHandler,
    ) -> Result<()> {
        match Tpdu::parse(packet)? {
            Tpdu::ConnectionRequest(cr) => {
                if self.state != ServerState::AwaitCr {
                    return Err(self.unexpected(Layer::Cotp, "CR"));
                }
                self.step(Step::CotpConnectReceived, now);
                let cc = ConnectParams::confirm_for(&cr, self.config.limits.max_tpdu_size_code);
                self.t.tpdu_size = cc.tpdu_size_octets();
                self.t.send_tpdu(&Tpdu::ConnectionConfirm(cc));
                self.state = ServerState::AwaitCn;
                self.deadline = Some(now.saturating_add(self.config.limits.step_timeout));
                self.step(Step::CotpConnected, now);
                Ok(())
            }
            Tpdu::Data { eot, user_data } => {
                if self.state == ServerState::AwaitCr {
                    return Err(self.unexpected(Layer::Cotp, "DT"));
                }
                match self.t.dt.push(eot, user_data)? {
                    Some(tsdu) => self.on_spdu(now, &tsdu, handler),
                    None => Ok(()),
                }
            }
            Tpdu::DisconnectRequest { .. } | Tpdu::Error { .. } => {
                self.close(now, CloseReason::PeerDisconnected, false, handler);
                Ok(())
            }
            Tpdu::ConnectionConfirm(_) => Err(self.unexpected(Layer::Cotp, "CC")),
        }
    }

    fn refuse(
        &mut self,
        now: Nanos,
        detail: String,
        aare: Option<Aare>,
        handler: &mut dyn ServerHandler,
    ) {
        let cpr = RefusePpdu {
            responding_selector: None,
            results: Vec::new(),
            provider_reason: if aare.is_some() { None } else { Some(0) },
            user_data: aare
                .map(|a| vec![Pdv::new(self.t.acse_ctx, Apdu::Aare(a).to_vec())])
                .unwrap_or_default(),
        }
        .to_vec();
        // ISO 8327-1 8.3.4.9: reason 2 = rejection by the called SS-user, user data follows.
        self.t.send_spdu(&Spdu::Refuse {
            transport_disconnect: Some(1),
            reason: 2,
            user_data: &cpr,
        });
        self.close(now, CloseReason::Refused(detail), false, handler);
    }

    fn on_spdu(&mut self, now: Nanos, tsdu: &[u8], handler: &mut dyn ServerHandler) -> Result<()> {
        match Spdu::parse(tsdu)? {
            Spdu::Connect(cn) => {
                if self.state != ServerState::AwaitCn {
                    return Err(self.unexpected(Layer::Session, "CONNECT"));
                }
                self.step(Step::AssociateReceived, now);
                self.on_connect(now, &cn, handler)
            }
            Spdu::Data(ud) => {
                if !matches!(self.state, ServerState::Associated | ServerState::Concluded) {
                    return Err(self.unexpected(Layer::Session, "DATA"));
                }
                // libiec61850 delivers only the MMS context.
                let pdu = pdv_in(presentation::parse_user_data(ud)?, self.t.mms_ctx, "P-DATA")?;
                match MmsPdu::parse(&pdu) {
                    Ok(p) => self.on_mms(now, p, handler),
                    // ISO 9506-2 7.5: an MMS protocol error is answered with a Reject and the
                    // association lives on (libiec61850 does the same); only the layers
                    // below MMS abort.
                    Err(_) => {
                        self.t
                            .send_mms(&MmsPdu::Reject(crate::pdu::reject_for(&pdu)));
                        Ok(())
                    }
                }
            }
            Spdu::Finish(ud) => {
                if !matches!(self.state, ServerState::Associated | ServerState::Concluded) {
                    return Err(self.unexpected(Layer::Session, "FINISH"));
                }
                let rlrq = pdv_in(
                    presentation::parse_user_data(ud)?,
                    self.t.acse_ctx,
                    "FINISH",
                )?;
                let Apdu::Rlrq { .. } = Apdu::parse(&rlrq)? else {
                    return Err(self.unexpected(Layer::Acse, "APDU other than RLRQ"));
                };
                self.step(Step::ReleaseRequested, now);
                let rlre =
                    presentation::user_data(self.t.acse_ctx, Apdu::Rlre { reason: None }.to_vec());
                self.t.send_spdu(&Spdu::Disconnect(&rlre));
                self.step(Step::Released, now);
                self.close(now, CloseReason::Released, false, handler);
                Ok(())
            }
            Spdu::Abort { .. } => {
                self.close(now, CloseReason::PeerAborted, false, handler);
                Ok(())
            }
            s => Err(self.unexpected(Layer::Session, s.name())),
        }
    }

    fn on_connect(
        &mut self,
        now: Nanos,
        cn: &ConnectSpdu<'_>,
        handler: &mut dyn ServerHandler,
    ) -> Result<()> {
        let cp = ConnectPpdu::parse(cn.user_data)?;
        // libiec61850: every proposed context must be ACSE or MMS, else refuse.
        let acse_syntax = presentation::acse_abstract_syntax();
        let mms_syntax = presentation::mms_abstract_syntax();
        if cp
            .contexts
            .iter()
            .any(|c| c.abstract_syntax != acse_syntax && c.abstract_syntax != mms_syntax)
        {
            self.refuse(
                now,
                "unsupported presentation context".into(),
                None,
                handler,
            );
            return Ok(());
        }
        let (Some(acse_ctx), Some(mms_ctx)) =
            (cp.context_for(&acse_syntax), cp.context_for(&mms_syntax))
        else {
            self.refuse(
                now,
                "ACSE or MMS presentation context missing".into(),
                None,
                handler,
            );
            return Ok(());
        };
        self.t.acse_ctx = acse_ctx;
        self.t.mms_ctx = mms_ctx;
        let aarq = pdv_in(cp.user_data.clone(), acse_ctx, "CP user data")?;
        let Apdu::Aarq(aarq) = Apdu::parse(&aarq)? else {
            return Err(self.unexpected(Layer::Acse, "APDU other than AARQ"));
        };
        self.calling_ap_title = aarq.calling_ap_title.as_ref().map(|o| o.to_string());
        if let Some(expected) = &self.config.password {
            // Compared in constant time with respect to the contents.
            let ok = aarq.password.as_ref().is_some_and(|p| {
                p.len() == expected.len()
                    && p.iter()
                        .zip(expected)
                        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                        == 0
            });
            if !ok {
                let aare = Aare::reject(Diagnostic::User(acse::DIAG_AUTHENTICATION_FAILURE));
                self.refuse(now, "authentication failure".into(), Some(aare), handler);
                return Ok(());
            }
        }
        let ext = aarq.user_information.ok_or(Error::malformed(
            Layer::Acse,
            "AARQ",
            "no user-information",
        ))?;
        let MmsPdu::InitiateRequest(req) = MmsPdu::parse(&ext.data)? else {
            return Err(self.unexpected(Layer::Mms, "PDU other than initiate-Request"));
        };
        if req.version < 1 {
            let aare = Aare::reject(Diagnostic::User(acse::DIAG_NO_REASON));
            self.refuse(now, "MMS version below 1".into(), Some(aare), handler);
            return Ok(());
        }
        let resp = Initiate::respond(&req, &self.config.initiate);
        let aare = Aare::accept(
            MmsPdu::InitiateResponse(resp.clone()).to_vec(),
            mms_ctx as i64,
        );
        let cpa = AcceptPpdu::libiec61850(cp.contexts.len(), acse_ctx, Apdu::Aare(aare).to_vec())
            .to_vec();
        self.t
            .send_spdu(&Spdu::Accept(ConnectSpdu::libiec61850_accept(cn, &cpa)));
        self.negotiated = Some(resp.clone());
        self.state = ServerState::Associated;
        self.deadline = None;
        self.step(Step::Associated, now);
        self.events.push_back(Event::Associated {
            at: now,
            initiate: resp,
        });
        Ok(())
    }

    fn on_mms(&mut self, now: Nanos, pdu: MmsPdu, handler: &mut dyn ServerHandler) -> Result<()> {
        match pdu {
            MmsPdu::ConfirmedRequest { invoke_id, request }
                if self.state == ServerState::Associated =>
            {
                // The client's localDetailCalling: no response may be larger (ISO 9506-2 8.2).
                let max_pdu = self
                    .negotiated
                    .as_ref()
                    .and_then(|i| i.local_detail)
                    .map_or(crate::service::bounds::LOCAL_DETAIL, |d| d as usize);
                let response = match request {
                    ConfirmedRequest::Read(r) => {
                        let results = match &r.spec {
                            VariableAccessSpecification::ListOfVariable(vars) => {
                                // Stop reading once the answer cannot fit: a small request
                                // naming many large variables must not build an answer of
                                // hundreds of megabytes.
                                let mut octets = 0usize;
                                let mut results = Vec::new();
                                for v in vars {
                                    let a = match v.flattened() {
                                        // IEC 61850-8-1: a component selection reads `item$path`.
                                        Some(n) => handler.read(self.conn, &n),
                                        // An array element (and a component of it), if the
                                        // handler serves them.
                                        None => handler.read_selected(self.conn, v).unwrap_or(
                                            AccessResult::Failure(
                                                DataAccessError::OBJECT_ACCESS_UNSUPPORTED,
                                            ),
                                        ),
                                    };
                                    octets += a.data().map_or(3, Codec::buffer_len);
                                    results.push(a);
                                    if octets > max_pdu {
                                        break;
                                    }
                                }
                                results
                            }
                            VariableAccessSpecification::VariableListName(n) => {
                                match handler.read_list(self.conn, n) {
                                    Some(v) => v,
                                    None => vec![AccessResult::Failure(
                                        DataAccessError::OBJECT_NON_EXISTENT,
                                    )],
                                }
                            }
                        };
                        self.events.push_back(Event::Read {
                            at: now,
                            invoke_id,
                            spec: r.spec.clone(),
                        });
                        ConfirmedResponse::Read(ReadResponse {
                            spec: r.specification_with_result.then_some(r.spec),
                            results,
                        })
                    }
                    ConfirmedRequest::Write(w) => {
                        let VariableAccessSpecification::ListOfVariable(names) = &w.spec else {
                            self.reject(invoke_id, Reject::INVALID_ARGUMENT);
                            return Ok(());
                        };
                        if names.len() != w.data.len() {
                            self.reject(invoke_id, Reject::INVALID_ARGUMENT);
                            return Ok(());
                        }
                        let mut results = Vec::with_capacity(names.len());
                        for (v, d) in names.iter().zip(&w.data) {
                            let (name, result) = match v.flattened() {
                                Some(n) => {
                                    let r = handler.write(self.conn, &n, d);
                                    (n, r)
                                }
                                None => (
                                    v.name.clone(),
                                    handler
                                        .write_selected(self.conn, v, d)
                                        .unwrap_or(Err(DataAccessError::OBJECT_ACCESS_UNSUPPORTED)),
                                ),
                            };
                            self.events.push_back(Event::Written {
                                at: now,
                                invoke_id,
                                name,
                                result,
                            });
                            results.push(result);
                        }
                        ConfirmedResponse::Write(WriteResponse(results))
                    }
                    other => {
                        let a = match other {
                            ConfirmedRequest::Status {
                                extended_derivation,
                            } => answer(
                                handler.status(self.conn, extended_derivation).map(Ok),
                                ConfirmedResponse::Status,
                            ),
                            ConfirmedRequest::Identify => {
                                answer(handler.identify(self.conn).map(Ok), |r| {
                                    ConfirmedResponse::Identify(r)
                                })
                            }
                            ConfirmedRequest::GetNameList(q) => answer(
                                handler.name_list(self.conn, q.object_class, &q.scope),
                                |all| {
                                    ConfirmedResponse::GetNameList(GetNameListResponse::page(
                                        &all,
                                        q.continue_after.as_deref(),
                                        max_pdu,
                                    ))
                                },
                            ),
                            ConfirmedRequest::GetVariableAccessAttributes(q) => answer(
                                handler.variable_access_attributes(self.conn, &q.0),
                                ConfirmedResponse::GetVariableAccessAttributes,
                            ),
                            ConfirmedRequest::GetNamedVariableListAttributes(q) => answer(
                                handler.named_variable_list_attributes(self.conn, &q.0),
                                ConfirmedResponse::GetNamedVariableListAttributes,
                            ),
                            ConfirmedRequest::DefineNamedVariableList(q) => answer(
                                handler.define_named_variable_list(self.conn, &q, max_pdu),
                                |()| ConfirmedResponse::DefineNamedVariableList,
                            ),
                            ConfirmedRequest::DeleteNamedVariableList(q) => answer(
                                handler.delete_named_variable_list(self.conn, &q),
                                ConfirmedResponse::DeleteNamedVariableList,
                            ),
                            _ => Answer::Unsupported,
                        };
                        match a {
                            Answer::Response(r) => r,
                            Answer::Error(error) => {
                                self.t
                                    .send_mms(&MmsPdu::ConfirmedError { invoke_id, error });
                                return Ok(());
                            }
                            Answer::Unsupported => {
                                // What libiec61850 answers to services it does not implement.
                                self.reject(invoke_id, Reject::UNRECOGNIZED_SERVICE);
                                return Ok(());
                            }
                        }
                    }
                };
                for ir in handler.take_reports_before_response(self.conn) {
                    self.t
                        .send_mms(&MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir)));
                }
                let pdu = MmsPdu::ConfirmedResponse {
                    invoke_id,
                    response,
                };
                if pdu.buffer_len() > max_pdu {
                    // ISO 9506-2 ServiceError class service (4), pdu-size (3): the answer
                    // would exceed the PDU size the client accepts.
                    self.t.send_mms(&MmsPdu::ConfirmedError {
                        invoke_id,
                        error: ServiceError::new(ServiceError::CLASS_SERVICE, 3),
                    });
                } else {
                    self.t.send_mms(&pdu);
                }
            }
            MmsPdu::ConfirmedResponse { invoke_id, .. } => {
                // The server never sends a request, so no invokeID can match (ISO 9506-2
                // RejectPDU confirmed-responsePDU invalid-invokeID).
                self.t.send_mms(&MmsPdu::Reject(Reject {
                    invoke_id: Some(invoke_id),
                    kind: crate::pdu::reject_reason::CONFIRMED_RESPONSE,
                    code: crate::pdu::reject_reason::INVALID_INVOKE_ID,
                }));
            }
            MmsPdu::ConfirmedError { invoke_id, .. } => {
                self.t.send_mms(&MmsPdu::Reject(Reject {
                    invoke_id: Some(invoke_id),
                    kind: crate::pdu::reject_reason::CONFIRMED_ERROR,
                    code: crate::pdu::reject_reason::INVALID_INVOKE_ID,
                }));
            }
            MmsPdu::ConcludeRequest if self.state == ServerState::Associated => {
                self.step(Step::ConcludeRequested, now);
                self.t.send_mms(&MmsPdu::ConcludeResponse);
                self.state = ServerState::Concluded;
                self.deadline = Some(now.saturating_add(self.config.limits.step_timeout));
                self.step(Step::Concluded, now);
            }
            MmsPdu::Reject(reject) => self.events.push_back(Event::Rejected { at: now, reject }),
            MmsPdu::Unconfirmed(_) => {}
            MmsPdu::CancelRequest(invoke_id) => {
                // Every request is answered before the next PDU is read, so none is ever
                // outstanding to cancel: ISO 9506-2 cancel-Error, class cancel (10),
                // invoke-id-unknown (1).
                self.t.send_mms(&MmsPdu::CancelError {
                    invoke_id,
                    error: ServiceError::new(ServiceError::CLASS_CANCEL, 1),
                });
            }
            other => {
                // A PDU a client must not send here: reject it (pdu-error, invalid-pdu) and
                // carry on, as libiec61850 does for unexpected PDU types.
                let _ = other;
                self.t.send_mms(&MmsPdu::Reject(Reject {
                    invoke_id: None,
                    kind: Reject::PDU_ERROR,
                    code: Reject::INVALID_PDU,
                }));
            }
        }
        Ok(())
    }

    fn reject(&mut self, invoke_id: u32, code: i64) {
        self.t.send_mms(&MmsPdu::Reject(Reject {
            invoke_id: Some(invoke_id),
            kind: Reject::CONFIRMED_REQUEST,
            code,
        }));
    }
}
