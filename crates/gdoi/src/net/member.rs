//! A member registering with a key server over UDP: phase 1 then GROUPKEY-PULL, each message
//! retransmitted on silence (RFC 2408 has no acknowledgements; the last message is resent),
//! and the long-running member ([`Runner`]): registration when due with failover to the next
//! key server, GROUPKEY-PUSH received on its own UDP address between registrations
//! (`member_state` holds every rule; this file only moves datagrams).

use crate::main_mode::{Auth, Initiator};
use crate::member_state::{FailPolicy, MemberState, MemberTiming};
use crate::pull::{GroupKeys, PullError, PullMember};
use crate::{Phase1Error, Suite};
use gander_wire::isakmp::IdPayload;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// Why a registration failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemberError {
    /// Socket error.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// No answer after every retransmission.
    #[error("no answer from the key server")]
    Timeout,
    /// Phase 1 failed.
    #[error("phase 1: {0}")]
    Phase1(#[from] Phase1Error),
    /// GROUPKEY-PULL failed.
    #[error("registration: {0}")]
    Pull(#[from] PullError),
    /// No key server configured.
    #[error("no key server configured")]
    NoServer,
    /// The key server refused the member with a notification (RFC 2408 3.14.1): at once if
    /// it was authenticated under the phase-1 SA, else only after the exchange timed out
    /// (`crate::notify`: an unauthenticated notification changes nothing).
    #[error("refused by the key server: {0}")]
    Refused(crate::notify::Notice),
}

/// What a datagram from the key server means to the exchange under way.
enum Reply<T> {
    /// The next step of the exchange.
    Step(T),
    /// An authenticated notification: the exchange ends with it.
    Refused(crate::notify::Notice),
}

/// What a member needs to register.
#[derive(Debug, Clone)]
pub struct MemberConfig {
    /// The key server.
    pub server: SocketAddr,
    /// Local address to send from (the key server picks the PSK by it); any if `None`.
    pub bind: Option<SocketAddr>,
    /// The member's pre-shared key.
    pub psk: Vec<u8>,
    /// The member's identity (ID_KEY_ID).
    pub identity: IdPayload,
    /// The group (ID_KEY_ID or ID_OID).
    pub group: IdPayload,
    /// Wait per message before resending.
    pub timeout: Duration,
    /// Sends of each message before giving up.
    pub tries: u32,
}

/// Sends `msg`, waits for a reply from the server that `accept` takes; resends on silence.
/// Datagrams `accept` refuses (stray, forged, corrupted) are dropped and waiting goes on.
fn exchange<T>(
    sock: &UdpSocket,
    cfg: &MemberConfig,
    msg: &[u8],
    mut accept: impl FnMut(&[u8]) -> Option<Reply<T>>,
) -> Result<T, MemberError> {
    let mut buf = vec![0u8; 65_535];
    for _ in 0..cfg.tries.max(1) {
        sock.send_to(msg, cfg.server)?;
        let deadline = std::time::Instant::now() + cfg.timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            sock.set_read_timeout(Some(left))?;
            match sock.recv_from(&mut buf) {
                Ok((n, from)) if from == cfg.server => match accept(&buf[..n]) {
                    Some(Reply::Step(v)) => return Ok(v),
                    Some(Reply::Refused(n)) => return Err(MemberError::Refused(n)),
                    None => {}
                },
                Ok(_) => {}
                Err(e) => match super::no_datagram(&e) {
                    // A signal: wait again for what is left of the deadline.
                    Some(super::NoDatagram::Interrupted) => {}
                    Some(super::NoDatagram::TimedOut) => break,
                    None => return Err(e.into()),
                },
            }
        }
    }
    Err(MemberError::Timeout)
}

/// Registers: main mode with the PSK, then GROUPKEY-PULL for the group; returns the keys.
/// The last refusal of a reply is reported if no acceptable reply arrives.
pub fn register(cfg: &MemberConfig) -> Result<GroupKeys, MemberError> {
    register_with(cfg, &RegisterOptions::default())
}

/// What a registration may add to [`MemberConfig`]: a certificate instead of the PSK, and the
/// lab key log.
#[derive(Default, Clone)]
pub struct RegisterOptions {
    /// Authenticate phase 1 with this certificate (the ID payload is then its subject, and
    /// `MemberConfig::psk` and `identity` are not used).
    pub cert: Option<std::sync::Arc<crate::cert_auth::Credentials>>,
    /// Write the phase-1 SA's line to this key log ([`crate::keylog`]).
    pub keylog: Option<std::sync::Arc<crate::keylog::KeyLog>>,
    /// With `cert`: the key server's certificate must be the one this names.
    pub server_cert: Option<crate::cert_auth::CertMatch>,
    /// What gander writes for this key server ([`crate::profile::PeerProfile`]).
    pub profile: crate::profile::PeerProfile,
}

/// [`register`] with [`RegisterOptions`].
pub fn register_with(cfg: &MemberConfig, opts: &RegisterOptions) -> Result<GroupKeys, MemberError> {
    let any: SocketAddr = if cfg.server.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let bind = cfg.bind.unwrap_or(any);
    let sock = UdpSocket::bind(bind)?;
    let (auth, identity) = match &opts.cert {
        Some(c) => (
            Auth::Cert(c.clone()),
            c.id_payload().map_err(Phase1Error::Cert)?,
        ),
        None => (
            Auth::Psk(zeroize::Zeroizing::new(cfg.psk.clone())),
            cfg.identity.clone(),
        ),
    };
    let (mut init, mut msg) =
        Initiator::start_for(auth, identity, Suite::all(86_400), opts.profile)?;
    if let Some(m) = &opts.server_cert {
        init = init.expect_peer_cert(m.clone());
    }
    // Our cookie names the exchange in the key server's notifications.
    let cky_i = gander_wire::isakmp::Header::parse(&msg)
        .map_err(Phase1Error::from)?
        .initiator_cookie;
    let mut last_err: Option<Phase1Error> = None;
    // The last unauthenticated notification: remembered, never acted on (`crate::notify`).
    let mut notice: Option<crate::notify::Notice> = None;
    loop {
        let next = exchange(&sock, cfg, &msg, |b| {
            if let Some(n) = crate::notify::read(b, cky_i, None) {
                notice = Some(n);
                return None;
            }
            match init.handle(b) {
                Ok(n) => Some(Reply::Step(n)),
                Err(e) => {
                    last_err = Some(e);
                    None
                }
            }
        });
        match next {
            Ok(Some(m)) => msg = m,
            Ok(None) => break,
            Err(MemberError::Timeout) => {
                return Err(match (notice, last_err) {
                    (Some(n), _) => MemberError::Refused(n),
                    (None, Some(e)) => MemberError::Phase1(e),
                    (None, None) => MemberError::Timeout,
                })
            }
            Err(e) => return Err(e),
        }
    }
    let sa = init.into_sa().ok_or(MemberError::Timeout)?;
    if let Some(k) = &opts.keylog {
        if let Err(e) = k.record(&sa) {
            eprintln!("key log {}: {e}", k.path().display());
        }
    }
    let (mut pull, m1) = PullMember::start(&sa, cfg.group.clone())?;
    let mut last_pull: Option<PullError> = None;
    let mut notice: Option<crate::notify::Notice> = None;
    let mut msg = m1;
    loop {
        let next = exchange(&sock, cfg, &msg, |b| {
            match crate::notify::read(b, sa.cky_i, Some(&sa)) {
                Some(n) if n.authenticated => return Some(Reply::Refused(n)),
                Some(n) => {
                    notice = Some(n);
                    return None;
                }
                None => {}
            }
            match pull.handle(&sa, b) {
                Ok(n) => Some(Reply::Step(n)),
                Err(e) => {
                    last_pull = Some(e);
                    None
                }
            }
        });
        match next {
            Ok(Some(m)) => msg = m,
            Ok(None) => break,
            Err(MemberError::Timeout) => {
                return Err(match (notice, last_pull) {
                    (Some(n), _) => MemberError::Refused(n),
                    (None, Some(e)) => MemberError::Pull(e),
                    (None, None) => MemberError::Timeout,
                })
            }
            Err(e) => return Err(e),
        }
    }
    pull.keys().cloned().ok_or(MemberError::Timeout)
}

/// What a long-running member needs: its key servers (the first preferred, the second on
/// failover), its credentials, its group, where it listens for GROUPKEY-PUSH, and its policy.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// Key servers, tried in order (one or two in practice; any number works).
    pub servers: Vec<SocketAddr>,
    /// Local address to register from (the key server picks the PSK by its IP).
    pub bind: Option<SocketAddr>,
    /// Where pushes arrive (the key server's push target for this member); none: no pushes,
    /// keys are renewed by registration only.
    pub push_listen: Option<SocketAddr>,
    /// The member's pre-shared key.
    pub psk: Vec<u8>,
    /// The member's identity (ID_KEY_ID).
    pub identity: IdPayload,
    /// The group.
    pub group: IdPayload,
    /// Wait per message before resending.
    pub timeout: Duration,
    /// Sends of each message before the key server counts as silent.
    pub tries: u32,
    /// When no key server answers.
    pub policy: FailPolicy,
    /// Renewal and retry times.
    pub timing: MemberTiming,
}

impl RunnerConfig {
    fn member_config(&self, server: SocketAddr) -> MemberConfig {
        MemberConfig {
            server,
            bind: self.bind,
            psk: self.psk.clone(),
            identity: self.identity.clone(),
            group: self.group.clone(),
            timeout: self.timeout,
            tries: self.tries,
        }
    }
}

/// Unix seconds now (key windows are in Unix seconds, as the key store's).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The member's I/O loop around [`MemberState`]: registers when due (with failover), receives
/// pushes between registrations, and expires keys; the caller installs the keys whenever
/// [`Runner::step`] says they changed.
pub struct Runner {
    cfg: RunnerConfig,
    opts: RegisterOptions,
    state: MemberState,
    push_sock: Option<UdpSocket>,
    clock: fn() -> u64,
}

impl Runner {
    /// Binds the push socket (if configured); registers on the first [`Runner::step`].
    pub fn new(cfg: RunnerConfig) -> Result<Runner, MemberError> {
        if cfg.servers.is_empty() {
            return Err(MemberError::NoServer);
        }
        let push_sock = cfg.push_listen.map(UdpSocket::bind).transpose()?;
        let state = MemberState::new(cfg.group.clone(), cfg.servers.len(), cfg.policy, cfg.timing);
        Ok(Runner {
            cfg,
            opts: RegisterOptions::default(),
            state,
            push_sock,
            clock: unix_now,
        })
    }

    /// Registers with these options (a certificate instead of the PSK, the lab key log).
    pub fn with_options(mut self, opts: RegisterOptions) -> Self {
        self.opts = opts;
        self
    }

    /// Uses another clock (tests that move time).
    pub fn with_clock(mut self, clock: fn() -> u64) -> Self {
        self.clock = clock;
        self
    }

    /// The push socket's address (tests bind port 0).
    pub fn push_addr(&self) -> Option<SocketAddr> {
        self.push_sock.as_ref().and_then(|s| s.local_addr().ok())
    }

    /// The state (keys, counters).
    pub fn state(&self) -> &MemberState {
        &self.state
    }

    /// The state, to hand it the push receiver once the KEK is known.
    pub fn state_mut(&mut self) -> &mut MemberState {
        &mut self.state
    }

    /// Registers now with the current key server; on failure moves to the next one.
    /// Returns whether keys arrived.
    pub fn register_once(&mut self) -> bool {
        let i = self.state.server().min(self.cfg.servers.len() - 1);
        let server = self.cfg.servers[i];
        match register_with(&self.cfg.member_config(server), &self.opts) {
            Ok(keys) => {
                self.state.on_registered(&keys, (self.clock)());
                // The grant's SA KEK (RFC 6407 3.2, 5.3): the KEK and the key server's
                // signature key make later GROUPKEY-PUSH messages acceptable, from the SEQ
                // the registration carried (5.6: a push must be newer).
                if let Some(kek) = &keys.kek {
                    match kek.verify_key() {
                        Ok(vk) => self.state.set_push_receiver(crate::push::PushReceiver::new(
                            kek.kek(),
                            vk,
                            keys.seq.unwrap_or(0),
                        )),
                        Err(e) => self
                            .state
                            .on_server_failed(&format!("KEK signature key: {e}"), (self.clock)()),
                    }
                }
                true
            }
            Err(e) => {
                self.state.on_server_failed(&e.to_string(), (self.clock)());
                false
            }
        }
    }

    /// One turn: registers if due (each key server at most once per turn), waits up to `wait`
    /// for a push, then expires keys. Returns whether the key set changed, so the caller
    /// rebuilds its key store only then.
    pub fn step(&mut self, wait: Duration) -> Result<bool, MemberError> {
        let before = self.state.key_ids();
        let mut tried = 0;
        while self.state.registration_due((self.clock)()) && tried < self.cfg.servers.len() {
            tried += 1;
            if self.register_once() {
                break;
            }
        }
        if let Some(s) = &self.push_sock {
            s.set_read_timeout(Some(wait.max(Duration::from_millis(1))))?;
            let mut buf = vec![0u8; 65_535];
            match s.recv_from(&mut buf) {
                Ok((n, _)) => {
                    // A refused push is an event and a counter in the state, nothing more.
                    let _ = self.state.on_push(&buf[..n], (self.clock)());
                }
                // No push this turn: the wait ran out or a signal ended it early.
                Err(e) if super::no_datagram(&e).is_some() => {}
                Err(e) => return Err(e.into()),
            }
        } else {
            std::thread::sleep(wait);
        }
        self.state.expire((self.clock)());
        Ok(self.state.key_ids() != before)
    }
}
