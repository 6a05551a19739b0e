//! The key server's UDP loop: phase 1 as responder, GROUPKEY-PULL as key server, for the
//! members and groups of its policy. One datagram in, at most one out, and an event saying
//! what happened (registrations, refusals with their reason) for the log and the counters.
//!
//! State per peer is bounded: half-open phase-1 exchanges are capped (RFC 2408 2.5.3: a
//! spoofed flood fills at most this table, and message 3 must carry the right cookie before
//! any Diffie-Hellman work), and an exact repeat of the last datagram of an exchange gets the
//! same reply again (the member's retransmission after a lost reply).
//!
//! The key server also rolls keys: once a second [`Kdc::tick`] asks the key schedule
//! (`kdc_schedule`) what is due, writes the state (`kdc_state`, write-ahead) and sends each
//! GROUPKEY-PUSH (RFC 6407 4) by UDP to the push address of every member authorised for the
//! group; [`Kdc::reload`] applies a new policy and revokes the members that left it.

use crate::cookie::CookieJar;
use crate::group_kek::KdcSigner;
use crate::kdc_schedule::{self, PlannedPush, PushWhat};
use crate::kdc_state::{load_state, save_state, KdcState, StateError};
use crate::main_mode::{Responder, ResponderConfig};
use crate::pull::{Grant, GroupSource, MessageIds, PullError, PullServer};
use crate::push::PushError;
use crate::{Phase1Sa, Suite};
use gander_wire::isakmp::gdoi::kd_type;
use gander_wire::isakmp::header::exchange;
use gander_wire::isakmp::iec61850::encode_oid;
use gander_wire::isakmp::sa::doi;
use gander_wire::isakmp::{
    Header, IdPayload, IsakmpError, KeyDownload, KeyPacket, SaAttrPayload, SaBody, SaPayload,
    SaTek, Traffic,
};
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::Duration;
use zeroize::Zeroizing;

/// Most half-open phase-1 exchanges kept at once.
pub const MAX_HALF_OPEN: usize = 1024;
/// Most established phase-1 SAs kept at once.
pub const MAX_SAS: usize = 4096;
/// Most phase-1 SAs kept per member identity: a member that registers again (each rekey it
/// missed, each restart) replaces its oldest SA, so the table does not fill with stale ones.
pub const MAX_SAS_PER_MEMBER: usize = 4;

/// One authorised member.
#[derive(Clone)]
pub struct MemberPolicy {
    /// Its identity (ID_KEY_ID data).
    pub identity: Vec<u8>,
    /// Its pre-shared key.
    pub psk: Zeroizing<Vec<u8>>,
    /// The address it registers from (RFC 2409 5.4: main mode chooses the PSK by address).
    pub address: IpAddr,
    /// The groups it may register for.
    pub groups: Vec<Vec<u8>>,
    /// For a member authenticated by certificate: the subject or subjectAltName that names it
    /// (then `psk` is empty and `address` unused; `cert_members.rs`).
    pub cert: Option<crate::cert_auth::CertMatch>,
    /// Where it listens for GROUPKEY-PUSH (UDP); no pushes if `None` (it must register
    /// again before its keys expire).
    pub push: Option<SocketAddr>,
}

impl MemberPolicy {
    /// The identities its pre-shared key is bound to: its ID_KEY_ID identity, or the address
    /// the key is chosen by (RFC 2409 5.4; `psk_identity`).
    pub fn psk_identities(&self) -> crate::psk_identity::PskIdentities {
        crate::psk_identity::PskIdentities::key_id_or_address(&self.identity, self.address)
    }

    /// Whether `id` is one of [`Self::psk_identities`] (without building them).
    pub fn psk_accepts(&self, id: &IdPayload) -> bool {
        crate::psk_identity::key_id_or_address_accepts(&self.identity, self.address, id)
    }
}

/// One group and its current key.
#[derive(Clone)]
pub struct GroupPolicy {
    /// Group identity (ID_KEY_ID data).
    pub id: Vec<u8>,
    /// Dotted OID of the protocol (`isakmp::iec61850::oid`).
    pub oid: String,
    /// The traffic the key protects.
    pub traffic: Traffic,
    /// IEC 62351-6 MAC algorithm code.
    pub mac_code: u16,
    /// IEC 62351-6 encryption algorithm code.
    pub enc_code: u16,
    /// Key lifetime (s).
    pub lifetime_secs: u64,
    /// SA_ATD (s).
    pub activation_delay_secs: u64,
    /// SA_KDA (s).
    pub overlap_secs: u64,
    /// Seed Key ID: the first key of a group the state does not know yet (0: a fresh one).
    pub key_id: u32,
    /// Seed key (empty: a random one).
    pub key: Zeroizing<Vec<u8>>,
}

/// The key server's policy.
#[derive(Clone)]
pub struct KdcPolicy {
    /// The key server's identity (IDir).
    pub identity: IdPayload,
    /// Members.
    pub members: Vec<MemberPolicy>,
    /// Groups.
    pub groups: Vec<GroupPolicy>,
}

impl GroupPolicy {
    /// The SA and KD of the current key.
    pub fn grant(&self) -> Result<Grant, PullError> {
        let spi = self.key_id.to_be_bytes().to_vec();
        let key_attr = crate::tek_keys::key_attribute(self.mac_code, self.enc_code, &self.key)
            .map_err(|_| PullError::Crypto("TEK salt"))?;
        let oid = encode_oid(&self.oid)?;
        let tek = crate::tek_policy::TekPolicy {
            oid: &oid,
            traffic: self.traffic,
            key_id: self.key_id,
            mac_code: self.mac_code,
            enc_code: self.enc_code,
            key_len: self.key.len(),
            lifetime_secs: self.lifetime_secs,
            activation_delay_secs: self.activation_delay_secs,
            overlap_secs: self.overlap_secs,
        }
        .sa_tek()?;
        Ok(Grant {
            sa: SaPayload {
                doi: doi::GDOI,
                situation: 0,
                body: SaBody::Gdoi(vec![SaAttrPayload::Tek(SaTek::Iec61850(tek))]),
            },
            kd: KeyDownload {
                packets: vec![KeyPacket {
                    kd_type: kd_type::TEK,
                    spi,
                    attributes: vec![key_attr],
                }],
            },
            seq: None,
        })
    }
}

impl GroupSource for KdcPolicy {
    fn grant(&self, member: &IdPayload, group: &IdPayload) -> Result<Grant, PullError> {
        let m = self
            .members
            .iter()
            .find(|m| m.cert.is_none() && m.psk_accepts(member));
        self.grant_to(m, group)
    }

    fn grant_for(&self, sa: &Phase1Sa, group: &IdPayload) -> Result<Grant, PullError> {
        match &sa.peer_cert {
            None => self.grant(&sa.peer_id, group),
            Some(c) => self.grant_to(self.cert_member(c), group),
        }
    }
}

impl KdcPolicy {
    /// The configured name of the group a member of `sa` named by `id` (its ID_KEY_ID data,
    /// or the group an ID_OID finds, `group_lookup`), for events and push targets.
    pub fn group_name(&self, sa: &Phase1Sa, id: &IdPayload) -> Vec<u8> {
        let m = match &sa.peer_cert {
            None => self
                .members
                .iter()
                .find(|m| m.cert.is_none() && m.psk_accepts(&sa.peer_id)),
            Some(c) => self.cert_member(c),
        };
        self.find_group(id, m)
            .map_or_else(|_| id.data.clone(), |g| g.id.clone())
    }
}

impl KdcPolicy {
    /// The grant of `group` to `member` (none: not authorised).
    fn grant_to(&self, m: Option<&MemberPolicy>, group: &IdPayload) -> Result<Grant, PullError> {
        let g = self.find_group(group, m)?;
        let m = m.ok_or(PullError::NotAuthorized)?;
        if !m.groups.contains(&g.id) {
            return Err(PullError::NotAuthorized);
        }
        g.grant()
    }
}

/// What one datagram, tick or reload did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KdcEvent {
    /// A GROUPKEY-PUSH announced a TEK.
    Rekeyed {
        /// The group.
        group: String,
        /// The push's SEQ.
        seq: u32,
        /// The new TEK's Key ID.
        key_id: u32,
        /// When it activates (seconds since the epoch).
        activates_at: u64,
        /// Members it was sent to.
        members: usize,
    },
    /// A GROUPKEY-PUSH withdrew TEKs (Delete payload).
    KeysWithdrawn {
        /// The group.
        group: String,
        /// The push's SEQ.
        seq: u32,
        /// Their Key IDs.
        key_ids: Vec<u32>,
        /// Members it was sent to.
        members: usize,
    },
    /// Members left a group's policy: new KEK and TEK, the old KEK withdrawn.
    Revoked {
        /// The group.
        group: String,
        /// The identities revoked.
        identities: Vec<String>,
        /// The new TEK's Key ID.
        new_key_id: u32,
        /// SEQ of the push withdrawing the old KEK.
        seq: u32,
        /// Members it was sent to.
        members: usize,
    },
    /// A push could not be sent to one member.
    PushFailed {
        /// The group.
        group: String,
        /// The member's push address.
        target: SocketAddr,
        /// Why.
        reason: String,
    },
    /// The key server started listening.
    Started {
        /// Its address.
        listen: SocketAddr,
    },
    /// The key server stopped (SIGTERM, SIGINT).
    Stopped,
    /// A reload was refused; the policy in force stays.
    ReloadFailed {
        /// Why.
        reason: String,
    },
    /// A new policy was applied.
    Reloaded {
        /// Groups.
        groups: usize,
        /// Members.
        members: usize,
    },
    /// A phase-1 SA was established with a member.
    Phase1 {
        /// Peer.
        peer: SocketAddr,
        /// Its identity.
        identity: Vec<u8>,
    },
    /// A member registered and received the group's key.
    Registered {
        /// Peer.
        peer: SocketAddr,
        /// Its identity.
        identity: Vec<u8>,
        /// The group.
        group: Vec<u8>,
    },
    /// A datagram was refused.
    Refused {
        /// Peer.
        peer: SocketAddr,
        /// Why.
        reason: String,
        /// The RFC 2408 notification it maps to.
        notify: u16,
    },
    /// A repeated datagram got the same reply again.
    Retransmitted {
        /// Peer.
        peer: SocketAddr,
    },
    /// A step of an exchange went through.
    Progress {
        /// Peer.
        peer: SocketAddr,
    },
}

type Cookies = ([u8; 8], [u8; 8]);

struct HalfOpen {
    responder: Responder,
    peer: SocketAddr,
    last_in: Vec<u8>,
    last_out: Vec<u8>,
}

struct Pull {
    server: PullServer,
    last_in: Vec<u8>,
    last_out: Vec<u8>,
    group: Vec<u8>,
}

/// Why the key server cannot go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KdcError {
    /// Socket error.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// The state cannot be read, written or advanced.
    #[error("{0}")]
    State(#[from] StateError),
    /// A push cannot be built (signing key).
    #[error("push: {0}")]
    Push(#[from] PushError),
}

/// The key server.
pub struct Kdc {
    sock: UdpSocket,
    jar: CookieJar,
    policy: KdcPolicy,
    half_open: HashMap<Cookies, HalfOpen>,
    sas: HashMap<Cookies, (Phase1Sa, MessageIds)>,
    pulls: HashMap<(Cookies, u32), Pull>,
    certs: super::cert_members::KdcCerts,
    state: KdcState,
    state_path: Option<PathBuf>,
    signer: Option<KdcSigner>,
    now: u64,
    queued: VecDeque<KdcEvent>,
    /// Push targets of the policy before a reload, per group: the push withdrawing the KEK
    /// also reaches the members just revoked (it tells them when their keys end).
    previous_targets: HashMap<String, Vec<SocketAddr>>,
    /// Phase-1 SAs per member identity, oldest first.
    sa_by_identity: HashMap<Vec<u8>, VecDeque<Cookies>>,
    /// Notifications to refused peers sent this second (`notify`).
    notify_limit: crate::notify::NotifyLimit,
}

/// Seconds since the epoch (the clock of key lifetimes, as members see it).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Answers GROUPKEY-PULL message 1 from the policy and the schedule's keys.
struct Granter<'a> {
    policy: &'a KdcPolicy,
    state: &'a KdcState,
    signer: Option<&'a KdcSigner>,
    src: Ipv4Addr,
    now: u64,
}

impl GroupSource for Granter<'_> {
    fn grant(&self, member: &IdPayload, group: &IdPayload) -> Result<Grant, PullError> {
        let m = self
            .policy
            .members
            .iter()
            .find(|m| m.cert.is_none() && m.psk_accepts(member));
        self.grant_to(m, group)
    }

    /// A member authenticated by certificate is found by the certificate phase 1 verified,
    /// never by its ID payload alone.
    fn grant_for(&self, sa: &Phase1Sa, group: &IdPayload) -> Result<Grant, PullError> {
        match &sa.peer_cert {
            None => self.grant(&sa.peer_id, group),
            Some(c) => self.grant_to(self.policy.cert_member(c), group),
        }
    }
}

impl Granter<'_> {
    /// The grant of `group` to `m` (none: not authorised) from the schedule's keys.
    fn grant_to(&self, m: Option<&MemberPolicy>, group: &IdPayload) -> Result<Grant, PullError> {
        let g = self.policy.find_group(group, m)?;
        let m = m.ok_or(PullError::NotAuthorized)?;
        if !m.groups.contains(&g.id) {
            return Err(PullError::NotAuthorized);
        }
        let signer = self
            .signer
            .ok_or(PullError::Crypto("key server has no signing key"))?;
        kdc_schedule::grant(g, self.state, signer, self.src, self.now)
    }
}

fn peer_bytes(p: &SocketAddr) -> Vec<u8> {
    let mut v = match p.ip() {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    };
    v.extend_from_slice(&p.port().to_be_bytes());
    v
}

impl Kdc {
    /// A key server on a bound socket with its state in memory only (tests, benchmarks): a
    /// group's first key is the policy's seed key, if any.
    pub fn new(sock: UdpSocket, policy: KdcPolicy) -> Kdc {
        let state = KdcState::new().unwrap_or_default();
        let mut k = Kdc::bare(sock, policy, state, None);
        let now = unix_now();
        // An in-memory state cannot fail to save; a group whose seed does not fit gets a
        // fresh key instead.
        if let Ok(ev) = k.start(now) {
            k.queued.extend(ev);
        }
        k
    }

    /// A key server whose state lives in `path` (created on first start, refused if others may
    /// read it): members removed from the policy while it was down are revoked, keys not yet
    /// active are pushed again under a fresh SEQ, and anything due is done. Returns the events.
    pub fn open(
        sock: UdpSocket,
        policy: KdcPolicy,
        path: &Path,
        now: u64,
    ) -> Result<(Kdc, Vec<KdcEvent>), KdcError> {
        let state = match load_state(path)? {
            Some(s) => s,
            None => KdcState::new()?,
        };
        let mut k = Kdc::bare(sock, policy, state, Some(path.to_path_buf()));
        let ev = k.start(now)?;
        Ok((k, ev))
    }

    fn bare(sock: UdpSocket, policy: KdcPolicy, state: KdcState, path: Option<PathBuf>) -> Kdc {
        let signer = state.signer().ok().and_then(|k| KdcSigner::new(k).ok());
        Kdc {
            sock,
            jar: CookieJar::new(),
            policy,
            half_open: HashMap::new(),
            sas: HashMap::new(),
            pulls: HashMap::new(),
            certs: Default::default(),
            state,
            state_path: path,
            signer,
            now: 0,
            queued: VecDeque::new(),
            previous_targets: HashMap::new(),
            sa_by_identity: HashMap::new(),
            notify_limit: crate::notify::NotifyLimit::default(),
        }
    }

    /// Phase 1 with certificates (the key server's own credentials) and the lab key log.
    pub fn set_certs(&mut self, certs: super::cert_members::KdcCerts) {
        self.certs = certs;
    }

    /// Replaces the certificate members' peer profiles (a reloaded configuration's).
    pub fn set_profiles(
        &mut self,
        profiles: Vec<(crate::cert_auth::CertMatch, crate::profile::PeerProfile)>,
    ) {
        self.certs.profiles = profiles;
    }

    fn start(&mut self, now: u64) -> Result<Vec<KdcEvent>, KdcError> {
        self.now = now;
        let mut st = self.state.clone();
        let (mut pushes, revoked) = kdc_schedule::revoke_removed(&self.policy, &mut st, now)?;
        pushes.extend(kdc_schedule::announce_pending(&self.policy, &mut st, now)?);
        pushes.extend(kdc_schedule::tick(&self.policy, &mut st, now)?);
        self.commit(st)?;
        self.send_all(pushes, &revoked)
    }

    /// Writes the new state (before anything it plans is sent), then adopts it.
    fn commit(&mut self, st: KdcState) -> Result<(), KdcError> {
        if let Some(p) = &self.state_path {
            if st != self.state {
                save_state(p, &st)?;
            }
        }
        self.state = st;
        Ok(())
    }

    /// Records a new phase-1 SA of `identity`, dropping its oldest beyond
    /// [`MAX_SAS_PER_MEMBER`] with their exchanges.
    fn remember_sa(&mut self, identity: &[u8], cookies: Cookies) {
        let q = self.sa_by_identity.entry(identity.to_vec()).or_default();
        q.push_back(cookies);
        while q.len() > MAX_SAS_PER_MEMBER {
            if let Some(old) = q.pop_front() {
                self.sas.remove(&old);
                self.pulls.retain(|(c, _), _| *c != old);
            }
        }
    }

    /// Established phase-1 SAs held.
    pub fn sa_count(&self) -> usize {
        self.sas.len()
    }

    /// The state (keys, SEQs) as the key server holds it.
    pub fn state(&self) -> &KdcState {
        &self.state
    }

    /// The policy in force.
    pub fn policy(&self) -> &KdcPolicy {
        &self.policy
    }

    /// Runs the key schedule at `now` (seconds since the epoch): rekeys and withdrawals that
    /// are due are written to the state, then pushed.
    pub fn tick(&mut self, now: u64) -> Result<Vec<KdcEvent>, KdcError> {
        self.now = now;
        let mut st = self.state.clone();
        let pushes = kdc_schedule::tick(&self.policy, &mut st, now)?;
        if pushes.is_empty() {
            return Ok(Vec::new());
        }
        self.commit(st)?;
        self.send_all(pushes, &[])
    }

    /// Applies a new policy (SIGHUP): phase-1 SAs and exchanges of members no longer in it (or
    /// at another address) are dropped, and members that left a group are revoked
    /// (`kdc_schedule::revoke_removed`).
    pub fn reload(&mut self, policy: KdcPolicy, now: u64) -> Result<Vec<KdcEvent>, KdcError> {
        self.now = now;
        self.sas.retain(|_, (sa, _)| {
            policy
                .members
                .iter()
                .any(|m| m.identity == sa.peer_id.data || m.psk_accepts(&sa.peer_id))
        });
        let sas = &self.sas;
        self.pulls.retain(|(c, _), _| sas.contains_key(c));
        self.sa_by_identity.retain(|_, q| {
            q.retain(|c| sas.contains_key(c));
            !q.is_empty()
        });
        self.half_open
            .retain(|_, h| policy.members.iter().any(|m| m.address == h.peer.ip()));
        let mut st = self.state.clone();
        self.previous_targets = self
            .policy
            .groups
            .iter()
            .map(|g| {
                let name = String::from_utf8_lossy(&g.id).into_owned();
                let t = self.targets(&name);
                (name, t)
            })
            .collect();
        self.policy = policy;
        let (pushes, revoked) = kdc_schedule::revoke_removed(&self.policy, &mut st, now)?;
        let mut pushes = pushes;
        pushes.extend(kdc_schedule::tick(&self.policy, &mut st, now)?);
        self.commit(st)?;
        let mut ev = vec![KdcEvent::Reloaded {
            groups: self.policy.groups.len(),
            members: self.policy.members.len(),
        }];
        let sent = self.send_all(pushes, &revoked);
        self.previous_targets.clear();
        ev.extend(sent?);
        Ok(ev)
    }

    fn targets(&self, group: &str) -> Vec<SocketAddr> {
        self.policy
            .members
            .iter()
            .filter(|m| m.groups.iter().any(|g| g == group.as_bytes()))
            .filter_map(|m| m.push)
            .collect()
    }

    fn send_all(
        &mut self,
        pushes: Vec<PlannedPush>,
        revoked: &[kdc_schedule::Revocation],
    ) -> Result<Vec<KdcEvent>, KdcError> {
        let mut ev = Vec::new();
        let Some(signer) = self.signer.clone() else {
            return Err(PushError::Crypto("key server has no signing key").into());
        };
        for p in pushes {
            let msg = crate::push::build(&p.kek, &signer.key, p.seq, p.payloads)?;
            let mut targets = self.targets(&p.group);
            if p.what == PushWhat::KekWithdrawn {
                for t in self.previous_targets.get(&p.group).into_iter().flatten() {
                    if !targets.contains(t) {
                        targets.push(*t);
                    }
                }
            }
            let mut sent = 0;
            for t in &targets {
                match self.sock.send_to(&msg, t) {
                    Ok(_) => sent += 1,
                    Err(e) => ev.push(KdcEvent::PushFailed {
                        group: p.group.clone(),
                        target: *t,
                        reason: e.to_string(),
                    }),
                }
            }
            ev.push(match p.what {
                PushWhat::Rekey {
                    key_id,
                    activates_at,
                } => KdcEvent::Rekeyed {
                    group: p.group,
                    seq: p.seq,
                    key_id,
                    activates_at,
                    members: sent,
                },
                PushWhat::Delete { key_ids } => KdcEvent::KeysWithdrawn {
                    group: p.group,
                    seq: p.seq,
                    key_ids,
                    members: sent,
                },
                PushWhat::KekWithdrawn => {
                    let r = revoked.iter().find(|r| r.group == p.group);
                    KdcEvent::Revoked {
                        identities: r.map(|r| r.identities.clone()).unwrap_or_default(),
                        new_key_id: r.map_or(0, |r| r.new_key_id),
                        group: p.group,
                        seq: p.seq,
                        members: sent,
                    }
                }
            });
        }
        Ok(ev)
    }

    /// The socket's address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.sock.local_addr()
    }

    /// Runs the key schedule if the second changed, then waits up to `timeout` for one
    /// datagram and handles it. Returns one event: a queued one of the schedule first.
    pub fn poll(&mut self, timeout: Duration) -> Result<Option<KdcEvent>, KdcError> {
        let now = unix_now();
        if now != self.now {
            let ev = self.tick(now)?;
            self.queued.extend(ev);
        }
        if let Some(e) = self.queued.pop_front() {
            return Ok(Some(e));
        }
        let mut buf = vec![0u8; 65_535];
        self.sock.set_read_timeout(Some(timeout))?;
        let (n, peer) = match self.sock.recv_from(&mut buf) {
            Ok(x) => x,
            // Nothing this turn: the wait ran out or a signal ended it early.
            Err(e) if super::no_datagram(&e).is_some() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let (reply, event) = self.handle(peer, &buf[..n]);
        if let Some(r) = reply {
            self.sock.send_to(&r, peer)?;
        }
        Ok(Some(event))
    }

    /// Handles one datagram from `peer`: the reply to send and the event. A refused datagram
    /// whose header parses is answered with the refusal's notification (`crate::notify`):
    /// protected under the peer's phase-1 SA when a GROUPKEY-PULL under it is refused, in the
    /// clear otherwise; never in answer to an Informational exchange, at most
    /// `notify::NOTIFY_PER_SECOND` a second.
    pub fn handle(&mut self, peer: SocketAddr, data: &[u8]) -> (Option<Vec<u8>>, KdcEvent) {
        let (reply, event) = self.handle_datagram(peer, data);
        if reply.is_some() {
            return (reply, event);
        }
        let KdcEvent::Refused { notify, .. } = &event else {
            return (reply, event);
        };
        (self.notification(data, *notify), event)
    }

    /// The notification answering refused datagram `data` (see [`Kdc::handle`]).
    fn notification(&mut self, data: &[u8], notify: u16) -> Option<Vec<u8>> {
        let h = Header::parse(data).ok()?;
        if h.exchange == exchange::INFORMATIONAL || notify == 0 {
            return None;
        }
        if !self.notify_limit.allow(unix_now()) {
            return None;
        }
        let cookies = (h.initiator_cookie, h.responder_cookie);
        if h.exchange == exchange::GROUPKEY_PULL {
            if let Some((sa, _)) = self.sas.get(&cookies) {
                return crate::notify::protected(sa, notify).ok();
            }
        }
        Some(crate::notify::unprotected(
            h.initiator_cookie,
            h.responder_cookie,
            notify,
        ))
    }

    fn handle_datagram(&mut self, peer: SocketAddr, data: &[u8]) -> (Option<Vec<u8>>, KdcEvent) {
        let refuse = |reason: String, notify: u16| {
            (
                None,
                KdcEvent::Refused {
                    peer,
                    reason,
                    notify,
                },
            )
        };
        let h = match Header::parse(data) {
            Ok(h) => h,
            Err(e) => return refuse(e.to_string(), e.notify()),
        };
        let cookies = (h.initiator_cookie, h.responder_cookie);
        match h.exchange {
            exchange::MAIN_MODE if h.responder_cookie == [0; 8] => self.main_mode_1(peer, data),
            exchange::MAIN_MODE => {
                let Some(ho) = self.half_open.get_mut(&cookies) else {
                    return refuse(
                        "no exchange with these cookies".into(),
                        gander_wire::isakmp::error::notify_type::INVALID_COOKIE,
                    );
                };
                if ho.peer != peer {
                    return refuse(
                        "cookies from another address".into(),
                        gander_wire::isakmp::error::notify_type::INVALID_COOKIE,
                    );
                }
                if ho.last_in == data {
                    return (Some(ho.last_out.clone()), KdcEvent::Retransmitted { peer });
                }
                match ho.responder.handle(&self.jar, data) {
                    Ok(out) => {
                        ho.last_in = data.to_vec();
                        ho.last_out = out.clone();
                        if ho.responder.established().is_some() && self.sas.len() < MAX_SAS {
                            let Some(ho) = self.half_open.remove(&cookies) else {
                                return (Some(out), KdcEvent::Progress { peer });
                            };
                            if let Some(sa) = ho.responder.into_sa() {
                                self.certs.log(&sa);
                                let identity = sa.peer_name();
                                self.remember_sa(&sa.peer_id.data.clone(), cookies);
                                self.sas.insert(cookies, (sa, MessageIds::default()));
                                return (Some(out), KdcEvent::Phase1 { peer, identity });
                            }
                        }
                        (Some(out), KdcEvent::Progress { peer })
                    }
                    Err(e) => refuse(e.to_string(), e.notify()),
                }
            }
            exchange::GROUPKEY_PULL => {
                let key = (cookies, h.message_id);
                let Some((sa, ids)) = self.sas.get_mut(&cookies) else {
                    return refuse(
                        "no phase-1 SA with these cookies".into(),
                        gander_wire::isakmp::error::notify_type::INVALID_COOKIE,
                    );
                };
                if let Some(p) = self.pulls.get_mut(&key) {
                    if p.last_in == data {
                        return (Some(p.last_out.clone()), KdcEvent::Retransmitted { peer });
                    }
                    return match p.server.handle(sa, data) {
                        Ok(out) => {
                            p.last_in = data.to_vec();
                            p.last_out = out.clone();
                            let group = p.group.clone();
                            (
                                Some(out),
                                KdcEvent::Registered {
                                    peer,
                                    identity: sa.peer_name(),
                                    group,
                                },
                            )
                        }
                        Err(e) => refuse(e.to_string(), e.notify()),
                    };
                }
                let src = match self.sock.local_addr().map(|a| a.ip()) {
                    Ok(IpAddr::V4(a)) => a,
                    _ => Ipv4Addr::UNSPECIFIED,
                };
                let granter = Granter {
                    policy: &self.policy,
                    state: &self.state,
                    signer: self.signer.as_ref(),
                    src,
                    now: self.now,
                };
                match PullServer::start(sa, ids, &granter, data) {
                    Ok((server, out)) => {
                        let group = self.policy.group_name(sa, server.group_id());
                        self.pulls.insert(
                            key,
                            Pull {
                                server,
                                last_in: data.to_vec(),
                                last_out: out.clone(),
                                group,
                            },
                        );
                        (Some(out), KdcEvent::Progress { peer })
                    }
                    Err(e) => refuse(e.to_string(), e.notify()),
                }
            }
            other => refuse(
                IsakmpError::BadValue {
                    what: "exchange type",
                    detail: "not main mode or GROUPKEY-PULL",
                }
                .to_string()
                    + &format!(" ({other})"),
                gander_wire::isakmp::error::notify_type::INVALID_EXCHANGE_TYPE,
            ),
        }
    }

    fn main_mode_1(&mut self, peer: SocketAddr, data: &[u8]) -> (Option<Vec<u8>>, KdcEvent) {
        let refuse = |reason: String, notify: u16| {
            (
                None,
                KdcEvent::Refused {
                    peer,
                    reason,
                    notify,
                },
            )
        };
        if let Some(ho) = self
            .half_open
            .values()
            .find(|h| h.peer == peer && h.last_in == data)
        {
            return (Some(ho.last_out.clone()), KdcEvent::Retransmitted { peer });
        }
        if self.half_open.len() >= MAX_HALF_OPEN {
            return refuse(
                "too many half-open exchanges".into(),
                gander_wire::isakmp::error::notify_type::INVALID_COOKIE,
            );
        }
        let m = self
            .policy
            .members
            .iter()
            .find(|m| m.cert.is_none() && m.address == peer.ip());
        let cert = self.certs.policy(&self.policy);
        if m.is_none() && cert.is_none() {
            return refuse(
                format!("no member registers from {}", peer.ip()),
                gander_wire::isakmp::error::notify_type::INVALID_ID_INFORMATION,
            );
        }
        let cfg = ResponderConfig {
            psk: m.map(|m| m.psk.clone()).unwrap_or_default(),
            suites: Suite::all(86_400),
            id: self.policy.identity.clone(),
            expect_peer: m.map(MemberPolicy::psk_identities),
            cert,
        };
        match Responder::start(&self.jar, &peer_bytes(&peer), data, cfg) {
            Ok((responder, out)) => {
                let Ok(h) = Header::parse(&out) else {
                    return refuse("internal".into(), 16);
                };
                self.half_open.insert(
                    (h.initiator_cookie, h.responder_cookie),
                    HalfOpen {
                        responder,
                        peer,
                        last_in: data.to_vec(),
                        last_out: out.clone(),
                    },
                );
                (Some(out), KdcEvent::Progress { peer })
            }
            Err(e) => refuse(e.to_string(), e.notify()),
        }
    }
}
