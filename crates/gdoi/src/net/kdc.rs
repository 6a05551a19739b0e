//! The key server's UDP loop: phase 1 as responder, GROUPKEY-PULL as key server, for the
//! members and groups of its policy. One datagram in, at most one out, and an event saying
//! what happened (registrations, refusals with their reason) for the log and the counters.
//!
//! State per peer is bounded: half-open phase-1 exchanges are capped (RFC 2408 2.5.3: a
//! spoofed flood fills at most this table, and message 3 must carry the right cookie before
//! any Diffie-Hellman work), and an exact repeat of the last datagram of an exchange gets the
//! same reply again (the member's retransmission after a lost reply).

use crate::cookie::CookieJar;
use crate::main_mode::{Responder, ResponderConfig};
use crate::pull::{Grant, GroupSource, MessageIds, PullError, PullServer};
use crate::{Phase1Sa, Suite};
use gander_wire::isakmp::gdoi::{kd_attr, kd_type};
use gander_wire::isakmp::header::exchange;
use gander_wire::isakmp::iec61850::{encode_oid, tek_attr};
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::sa::doi;
use gander_wire::isakmp::{
    Attribute, Header, IdPayload, Iec61850Tek, IsakmpError, KeyDownload, KeyPacket, SaAttrPayload,
    SaBody, SaPayload, SaTek, Traffic,
};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::Duration;
use zeroize::Zeroizing;

/// Most half-open phase-1 exchanges kept at once.
pub const MAX_HALF_OPEN: usize = 1024;
/// Most established phase-1 SAs kept at once.
pub const MAX_SAS: usize = 4096;

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
    /// Current Key ID.
    pub key_id: u32,
    /// Current key.
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
        let uses_algorithm_key = self.enc_code != 0 || matches!(self.mac_code, 4 | 5);
        let key_attr = if uses_algorithm_key {
            kd_attr::TEK_ALGORITHM_KEY
        } else {
            kd_attr::TEK_INTEGRITY_KEY
        };
        let spi = self.key_id.to_be_bytes().to_vec();
        let tek = Iec61850Tek {
            oid: encode_oid(&self.oid)?,
            spi: spi.clone(),
            traffic: self.traffic,
            attributes: vec![
                Attribute::basic(tek_attr::MAC_ALGORITHM, self.mac_code),
                Attribute::basic(tek_attr::ENCRYPTION_ALGORITHM, self.enc_code),
                Attribute::unsigned(tek_attr::KEY_LIFETIME, self.lifetime_secs),
                Attribute::unsigned(tek_attr::SA_ATD, self.activation_delay_secs),
                Attribute::unsigned(tek_attr::SA_KDA, self.overlap_secs),
            ],
        };
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
                    attributes: vec![Attribute::variable(key_attr, self.key.to_vec())],
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
            .find(|m| m.cert.is_none() && m.identity == member.data);
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
    /// The grant of `group` to `member` (none: not authorised).
    fn grant_to(&self, m: Option<&MemberPolicy>, group: &IdPayload) -> Result<Grant, PullError> {
        let g = self
            .groups
            .iter()
            .find(|g| g.id == group.data)
            .ok_or(PullError::UnknownGroup)?;
        let m = m.ok_or(PullError::NotAuthorized)?;
        if !m.groups.contains(&g.id) {
            return Err(PullError::NotAuthorized);
        }
        g.grant()
    }
}

/// What one datagram did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KdcEvent {
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

/// The key server.
pub struct Kdc {
    sock: UdpSocket,
    jar: CookieJar,
    policy: KdcPolicy,
    half_open: HashMap<Cookies, HalfOpen>,
    sas: HashMap<Cookies, (Phase1Sa, MessageIds)>,
    pulls: HashMap<(Cookies, u32), Pull>,
    certs: super::cert_members::KdcCerts,
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
    /// A key server on a bound socket.
    pub fn new(sock: UdpSocket, policy: KdcPolicy) -> Kdc {
        Kdc {
            sock,
            jar: CookieJar::new(),
            policy,
            half_open: HashMap::new(),
            sas: HashMap::new(),
            pulls: HashMap::new(),
            certs: Default::default(),
        }
    }

    /// Phase 1 with certificates (the key server's own credentials) and the lab key log.
    pub fn set_certs(&mut self, certs: super::cert_members::KdcCerts) {
        self.certs = certs;
    }

    /// The socket's address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.sock.local_addr()
    }

    /// Waits up to `timeout` for one datagram and handles it.
    pub fn poll(&mut self, timeout: Duration) -> std::io::Result<Option<KdcEvent>> {
        let mut buf = vec![0u8; 65_535];
        self.sock.set_read_timeout(Some(timeout))?;
        let (n, peer) = match self.sock.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        let (reply, event) = self.handle(peer, &buf[..n]);
        if let Some(r) = reply {
            self.sock.send_to(&r, peer)?;
        }
        Ok(Some(event))
    }

    /// Handles one datagram from `peer`: the reply to send and the event.
    pub fn handle(&mut self, peer: SocketAddr, data: &[u8]) -> (Option<Vec<u8>>, KdcEvent) {
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
                match PullServer::start(sa, ids, &self.policy, data) {
                    Ok((server, out)) => {
                        let group = server.group().to_vec();
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
            expect_peer: m.map(|m| (id_type::KEY_ID, m.identity.clone())),
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
