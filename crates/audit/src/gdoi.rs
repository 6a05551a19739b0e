//! GDOI exchanges on UDP port 848 (IEC 62351-9 key management: RFC 6407 GDOI over ISAKMP,
//! RFC 8052's IEC 61850 payloads), seen passively.
//!
//! What a passive observer can read: the ISAKMP header of every message (RFC 2408 §3.1), in
//! clear. After phase 1 (IKEv1 main mode, RFC 2409 §5) every payload is encrypted (flag E), so
//! the group id, the SEQ of a rekey and the notification type are hidden without the keys. The
//! header still tells:
//!
//! * a **registration** (GROUPKEY-PULL, exchange 32, RFC 6407 §3): the member (the sender of
//!   its first message), the key server, the phase-1 cookies and the message id. An exact
//!   repeat of the message before in the same direction is a retransmission (a member resends
//!   on silence), not a new message. It completes in four messages (member: HASH/Nonce/ID; server: SA/… ; member: HASH/…; server:
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
    /// Distinct messages of the exchange seen (retransmissions not counted).
    pub messages: u32,
    /// Of them, from the key server.
    pub from_server: u32,
    /// Exact repeats of the message before in the same direction.
    pub retransmissions: u32,
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
    /// Hash of the last message each way (member to server, server to member): an exact
    /// repeat is a retransmission (RFC 6407 §3.2 members resend on silence), not a message.
    last: [Option<u64>; 2],
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
            exchange::GROUPKEY_PULL => self.pull(no, ts, src, dst, cookies, h.message_id, msg),
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

    #[allow(clippy::too_many_arguments)]
    fn pull(
        &mut self,
        no: u64,
        ts: u64,
        src: SocketAddr,
        dst: SocketAddr,
        c: [u8; 16],
        mid: u32,
        msg: &[u8],
    ) {
        let h = hash(msg);
        if let Some(&i) = self.pull_index.get(&(c, mid)) {
            let p = &mut self.pulls[i];
            let way = usize::from(src != p.member);
            p.reg.last_frame = no;
            if p.last[way] == Some(h) {
                p.reg.retransmissions = p.reg.retransmissions.saturating_add(1);
            } else {
                p.last[way] = Some(h);
                p.reg.messages = p.reg.messages.saturating_add(1);
                if way == 1 {
                    p.reg.from_server = p.reg.from_server.saturating_add(1);
                }
            }
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
                from_server: 0,
                retransmissions: 0,
                outcome: "incomplete",
                first_frame: no,
                last_frame: no,
                first_ts_ns: ts,
            },
            cookies: c,
            member: src,
            notified: false,
            last: [Some(h), None],
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
                        let answer = if r.from_server == 0 {
                            "no answer from the key server (a server that refuses without a notification, or the answer lost)".to_string()
                        } else {
                            format!("{} answer(s) from the key server", r.from_server)
                        };
                        format!(
                            "GROUPKEY-PULL of {} to key server {}: {} of 4 messages ({} retransmissions), {answer}",
                            r.member, r.key_server, r.messages, r.retransmissions
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

#[cfg(test)]
mod tests {
    use super::*;
    use gander_testkit::frames::{udp_frame, UdpAddrs};
    use proptest::prelude::*;

    fn frame(src: u8, payload: &[u8]) -> Vec<u8> {
        udp_frame(
            &UdpAddrs {
                src_mac: [2, 0, 0, 0, 0, src],
                dst_mac: [2, 0, 0, 0, 0, 1],
                src_ip: [10, 0, 0, src],
                dst_ip: [10, 0, 0, 1],
                src_port: PORT,
                dst_port: PORT,
            },
            payload,
        )
    }

    proptest! {
        /// Any datagram on port 848, header-shaped or not, in any order: no panic, every
        /// registration's counts add up, and the outcome follows them.
        #[test]
        fn any_messages_on_848_are_read_without_panic(
            msgs in proptest::collection::vec(
                (1u8..4, any::<u8>(), 30u8..34, any::<u32>(), proptest::collection::vec(any::<u8>(), 0..64)),
                0..40,
            )
        ) {
            let mut t = GdoiTracker::default();
            let mut f = Findings::default();
            for (i, (src, cookie, exch, mid, body)) in msgs.iter().enumerate() {
                let mut m = vec![*cookie; 16];
                m.extend([8, 0x10, *exch, 1]);
                m.extend((mid % 3).to_be_bytes());
                m.extend(((28 + body.len()) as u32).to_be_bytes());
                m.extend(body);
                let fr = frame(*src, if i % 7 == 6 { &m[..10] } else { &m });
                t.feed(i as u64 + 1, i as u64 * 1_000_000, &fr, &mut f);
            }
            let (regs, rekeys) = t.finish(&mut f);
            for r in &regs {
                prop_assert!(r.from_server < r.messages);
                prop_assert_eq!(r.outcome == "completed", r.messages >= 4);
            }
            for g in &rekeys {
                prop_assert!(g.replayed < g.pushes);
            }
        }
    }
}
