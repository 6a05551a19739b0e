//! GDOI exchanges on UDP port 848 (IEC 62351-9 key management: RFC 6407 GDOI over ISAKMP,
//! RFC 8052's IEC 61850 payloads), seen passively.
//!
//! What a passive observer can read: the ISAKMP header of every message (RFC 2408 §3.1), in
//! clear. After phase 1 (IKEv1 main mode, RFC 2409 §5) every payload is encrypted (flag E), so
//! the group id, the SEQ of a rekey and the notification type are hidden without the keys. The
//! header still tells:
//!
//! * a **registration** (GROUPKEY-PULL, exchange 32, RFC 6407 §3): the member (the sender of
//!   its first message), the key server, the phase-1 cookies and the message id. It completes
//!   in four messages (member: HASH/Nonce/ID; server: SA/… ; member: HASH/…; server:
//!   SEQ/KD); an Informational exchange (5, RFC 2408 §4.8: a notification) from the key
//!   server on the same phase-1 SA after the registration began is the server refusing it;
//! * a **rekey** (GROUPKEY-PUSH, exchange 33, RFC 6407 §4) from the key server, whose cookie
//!   pair is the KEK's SPI (§5.3.1): the group's rekey SA, which names the group on the wire.
//!
//! Findings: `gdoi-registration-refused` (medium), `gdoi-registration-incomplete` (low, a
//! registration without its fourth message at the end of the capture), and
//! `gdoi-push-replayed` (high): the same GROUPKEY-PUSH message again, octet for octet, later
//! than a capture copy. A replayed rekey repeats a SEQ the members have passed (RFC 6407 §4.2.1
//! wants it dropped); a fresh rekey always differs (new SEQ, new IV). Decrypting the SEQ itself
//! needs the KEK, which a monitor does not hold.
//!
//! Memory: at most [`MAX_EXCHANGES`] registrations and [`MAX_GROUPS`] rekey SAs are kept, each
//! rekey SA with the hashes of its last [`PUSH_HASHES`] messages; more are counted. Their
//! findings are keyed from the top of the index range (`usize::MAX - i`), so they never meet
//! a stream's or an association's.

use crate::finding::{Findings, Severity};
use crate::stream::prefixed_uid;
use gander_wire::isakmp::header::{exchange, Header};
use serde::Serialize;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// The UDP port of ISAKMP, and so of GDOI (RFC 2408 §2.5.2, RFC 6407 §2).
pub const PORT: u16 = 848;
/// Registrations kept.
pub const MAX_EXCHANGES: usize = 4096;
/// Rekey SAs kept.
pub const MAX_GROUPS: usize = 1024;
/// Hashes of recent GROUPKEY-PUSH messages kept per rekey SA.
pub const PUSH_HASHES: usize = 64;
/// A repeat within this time is the capture recording a frame twice (Linux "any"), not a replay.
const COPY_WINDOW_NS: u64 = 50_000;

/// One GROUPKEY-PULL registration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registration {
    /// Zeek-style uid.
    pub uid: String,
    /// The group member (address and port).
    pub member: String,
    /// The key server.
    pub key_server: String,
    /// Phase-1 cookies, initiator then responder, hex.
    pub cookies: String,
    /// Message id of the exchange.
    pub message_id: u32,
    /// Messages of the exchange seen.
    pub messages: u32,
    /// `completed`, `refused` (a notification from the key server), or `incomplete`.
    pub outcome: &'static str,
    /// First and last frame.
    pub first_frame: u64,
    /// See `first_frame`.
    pub last_frame: u64,
    /// Capture time of the first message, ns.
    pub first_ts_ns: u64,
}

/// The GROUPKEY-PUSH messages of one rekey SA.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rekeys {
    /// Zeek-style uid.
    pub uid: String,
    /// The key server.
    pub key_server: String,
    /// Where the rekeys went (the group's multicast address, or a member).
    pub destination: String,
    /// The KEK SPI (the push header's cookie pair), hex: the group's rekey SA.
    pub kek_spi: String,
    /// GROUPKEY-PUSH messages.
    pub pushes: u64,
    /// Of them, repeats of an earlier message (replays).
    pub replayed: u64,
    /// First and last frame.
    pub first_frame: u64,
    /// See `first_frame`.
    pub last_frame: u64,
    /// Capture time of the first push, ns.
    pub first_ts_ns: u64,
    /// Of the last.
    pub last_ts_ns: u64,
}

#[derive(Debug)]
struct Pull {
    reg: Registration,
    cookies: [u8; 16],
    member: SocketAddr,
    notified: bool,
}

#[derive(Debug)]
struct Group {
    rekeys: Rekeys,
    /// (hash, capture time) of the last pushes.
    recent: Vec<(u64, u64)>,
}

/// The GDOI exchanges of a capture.
#[derive(Debug, Default)]
pub struct GdoiTracker {
    pulls: Vec<Pull>,
    pull_index: HashMap<([u8; 16], u32), usize>,
    groups: Vec<Group>,
    group_index: HashMap<([u8; 16], SocketAddr), usize>,
    /// Messages beyond the limits, counted only.
    pub dropped: u64,
}

/// Source, destination and payload of a UDP datagram in an Ethernet frame, IPv4 or IPv6.
fn udp(frame: &[u8]) -> Option<(SocketAddr, SocketAddr, &[u8])> {
    use gander_wire::ethernet::{Frame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
    let eth = Frame::new_checked(frame).ok()?;
    let off = eth.payload_offset();
    match eth.ethertype() {
        ETHERTYPE_IPV4 => {
            let p = gander_wire::ip::Ipv4Packet::new_checked(frame.get(off..)?).ok()?;
            if p.protocol() != gander_wire::ip::PROTOCOL_UDP {
                return None;
            }
            let (s, d) = (IpAddr::from(p.src_addr()), IpAddr::from(p.dst_addr()));
            let u = frame.get(off + p.header_len()..)?;
            let up = gander_wire::ip::UdpPacket::new_checked(u).ok()?;
            Some((
                SocketAddr::new(s, up.src_port()),
                SocketAddr::new(d, up.dst_port()),
                u.get(8..)?,
            ))
        }
        ETHERTYPE_IPV6 => match gander_wire::ipv6::locate(frame, off).ok()? {
            gander_wire::ipv6::Ipv6Payload::Udp(l) => Some((
                SocketAddr::new(IpAddr::from(l.src_addr), l.src_port),
                SocketAddr::new(IpAddr::from(l.dst_addr), l.dst_port),
                frame.get(l.payload)?,
            )),
            _ => None,
        },
        _ => None,
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// 64-bit FNV-1a of a message, for replay detection (a rekey differs in its SEQ and IV, so
/// equal hashes of equal lengths are the same message).
fn hash(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in b {
        h ^= u64::from(*x);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^ (b.len() as u64).rotate_left(48)
}

impl GdoiTracker {
    /// Reads a frame that is not IEC 61850 multicast traffic; returns whether it was GDOI
    /// (a UDP datagram to or from port 848 holding an ISAKMP header).
    pub fn feed(&mut self, no: u64, ts: u64, frame: &[u8], f: &mut Findings) -> bool {
        let Some((src, dst, payload)) = udp(frame) else {
            return false;
        };
        if src.port() != PORT && dst.port() != PORT {
            return false;
        }
        let Ok(h) = Header::parse(payload) else {
            return false;
        };
        let msg = payload.get(..h.length as usize).unwrap_or(payload);
        let mut cookies = [0u8; 16];
        cookies[..8].copy_from_slice(&h.initiator_cookie);
        cookies[8..].copy_from_slice(&h.responder_cookie);
        match h.exchange {
            exchange::GROUPKEY_PULL => self.pull(no, ts, src, dst, cookies, h.message_id),
            exchange::GROUPKEY_PUSH => self.push(no, ts, src, dst, cookies, msg, f),
            exchange::INFORMATIONAL => {
                // A notification from the key server on the SA of a registration under way.
                for p in self.pulls.iter_mut().rev() {
                    if p.cookies == cookies && p.member == dst && p.reg.messages < 4 {
                        p.notified = true;
                        p.reg.last_frame = no;
                        break;
                    }
                }
            }
            _ => {}
        }
        true
    }

    fn pull(&mut self, no: u64, ts: u64, src: SocketAddr, dst: SocketAddr, c: [u8; 16], mid: u32) {
        if let Some(&i) = self.pull_index.get(&(c, mid)) {
            let p = &mut self.pulls[i];
            p.reg.messages = p.reg.messages.saturating_add(1);
            p.reg.last_frame = no;
            return;
        }
        if self.pulls.len() >= MAX_EXCHANGES {
            self.dropped += 1;
            return;
        }
        let cookies = hex(&c);
        self.pull_index.insert((c, mid), self.pulls.len());
        self.pulls.push(Pull {
            reg: Registration {
                uid: prefixed_uid('K', &format!("{cookies}/{mid}/{}", self.pulls.len())),
                member: src.to_string(),
                key_server: dst.to_string(),
                cookies,
                message_id: mid,
                messages: 1,
                outcome: "incomplete",
                first_frame: no,
                last_frame: no,
                first_ts_ns: ts,
            },
            cookies: c,
            member: src,
            notified: false,
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        no: u64,
        ts: u64,
        src: SocketAddr,
        dst: SocketAddr,
        c: [u8; 16],
        msg: &[u8],
        f: &mut Findings,
    ) {
        let i = match self.group_index.get(&(c, src)) {
            Some(&i) => i,
            None => {
                if self.groups.len() >= MAX_GROUPS {
                    self.dropped += 1;
                    return;
                }
                let spi = hex(&c);
                self.group_index.insert((c, src), self.groups.len());
                self.groups.push(Group {
                    rekeys: Rekeys {
                        uid: prefixed_uid('P', &format!("{spi}/{src}/{}", self.groups.len())),
                        key_server: src.to_string(),
                        destination: dst.to_string(),
                        kek_spi: spi,
                        pushes: 0,
                        replayed: 0,
                        first_frame: no,
                        last_frame: no,
                        first_ts_ns: ts,
                        last_ts_ns: ts,
                    },
                    recent: Vec::new(),
                });
                self.groups.len() - 1
            }
        };
        let g = &mut self.groups[i];
        g.rekeys.pushes += 1;
        g.rekeys.last_frame = no;
        g.rekeys.last_ts_ns = ts;
        let hsh = hash(msg);
        match g.recent.iter().find(|(x, _)| *x == hsh) {
            Some(&(_, at)) if ts.saturating_sub(at) < COPY_WINDOW_NS => {}
            Some(_) => {
                g.rekeys.replayed += 1;
                let uid = g.rekeys.uid.clone();
                f.add("gdoi-push-replayed", Severity::High, Some((usize::MAX - i, &uid)), no, ts, || {
                    format!("GROUPKEY-PUSH from {src} (KEK SPI {}) repeated octet for octet: a replayed rekey, whose SEQ the members have passed (RFC 6407 §4.2.1)", g.rekeys.kek_spi)
                });
            }
            None => {
                if g.recent.len() >= PUSH_HASHES {
                    g.recent.remove(0);
                }
                g.recent.push((hsh, ts));
            }
        }
    }

    /// The registrations and rekey SAs, with their findings added to `f`.
    pub fn finish(&mut self, f: &mut Findings) -> (Vec<Registration>, Vec<Rekeys>) {
        let mut regs = Vec::with_capacity(self.pulls.len());
        for (i, p) in self.pulls.iter_mut().enumerate() {
            let at = Some((usize::MAX - MAX_GROUPS - i, p.reg.uid.as_str()));
            p.reg.outcome = if p.reg.messages >= 4 {
                "completed"
            } else if p.notified {
                let r = &p.reg;
                f.add("gdoi-registration-refused", Severity::Medium, at, r.last_frame, r.first_ts_ns, || {
                    format!("GROUPKEY-PULL of {} to key server {}: answered by a notification after {} message(s) (RFC 6407 §3.2: the server refused the registration)", r.member, r.key_server, r.messages)
                });
                "refused"
            } else {
                let r = &p.reg;
                f.add(
                    "gdoi-registration-incomplete",
                    Severity::Low,
                    at,
                    r.first_frame,
                    r.first_ts_ns,
                    || {
                        format!(
                            "GROUPKEY-PULL of {} to key server {}: {} of 4 messages in the capture",
                            r.member, r.key_server, r.messages
                        )
                    },
                );
                "incomplete"
            };
            regs.push(p.reg.clone());
        }
        (regs, self.groups.iter().map(|g| g.rekeys.clone()).collect())
    }
}
