//! A member registering with a key server over UDP: phase 1 then GROUPKEY-PULL, each message
//! retransmitted on silence (RFC 2408 has no acknowledgements; the last message is resent).

use crate::main_mode::{Auth, Initiator};
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
    mut accept: impl FnMut(&[u8]) -> Option<T>,
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
                Ok((n, from)) if from == cfg.server => {
                    if let Some(v) = accept(&buf[..n]) {
                        return Ok(v);
                    }
                }
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    break
                }
                Err(e) => return Err(e.into()),
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
    let (mut init, mut msg) = Initiator::start_with(auth, identity, Suite::all(86_400))?;
    if let Some(m) = &opts.server_cert {
        init = init.expect_peer_cert(m.clone());
    }
    let mut last_err: Option<Phase1Error> = None;
    loop {
        let next = exchange(&sock, cfg, &msg, |b| match init.handle(b) {
            Ok(n) => Some(n),
            Err(e) => {
                last_err = Some(e);
                None
            }
        });
        match next {
            Ok(Some(m)) => msg = m,
            Ok(None) => break,
            Err(MemberError::Timeout) => {
                return Err(last_err.map_or(MemberError::Timeout, MemberError::Phase1))
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
    let mut msg = m1;
    loop {
        let next = exchange(&sock, cfg, &msg, |b| match pull.handle(&sa, b) {
            Ok(n) => Some(n),
            Err(e) => {
                last_pull = Some(e);
                None
            }
        });
        match next {
            Ok(Some(m)) => msg = m,
            Ok(None) => break,
            Err(MemberError::Timeout) => {
                return Err(last_pull.map_or(MemberError::Timeout, MemberError::Pull))
            }
            Err(e) => return Err(e),
        }
    }
    pull.keys().cloned().ok_or(MemberError::Timeout)
}
