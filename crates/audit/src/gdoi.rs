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
//! needs the KEK, which a monitor does not hold; `gdoi-push-unknown-server` (medium) is a push
//! from an address that answered no registration in the capture.
//!
//! In the lab, with the IKEv1 key log (`--ike-keylog`, [`crate::gdoi_decrypt`]), the group,
//! member identity, SEQs and TEKs are read as well, and pushes are judged by SEQ and signature
//! (`gdoi-push-seq-backwards`, `gdoi-push-bad-signature`, `gdoi-push-unreadable`) and the
//! group's keys by their lifetimes (`gdoi-rekey-late`, `gdoi-tek-expired`).
//!
//! Memory: at most [`MAX_EXCHANGES`] registrations and [`MAX_GROUPS`] rekey SAs are kept, each
//! rekey SA with the hashes of its last [`PUSH_HASHES`] messages; more are counted. Their
//! findings are keyed from the top of the index range (`usize::MAX - i`), so they never meet
//! a stream's or an association's.

use crate::finding::{Findings, Severity};
use crate::gdoi_decrypt::{Decryptor, PullInfo, PushInfo, TekInfo};
use crate::ike_keylog::IkeKeyLog;
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
    /// With `--ike-keylog`: the group registered for (ID of message 1).
    pub group: Option<String>,
    /// With `--ike-keylog`: the member's phase-1 identity (IDii of main mode message 5).
    pub member_id: Option<String>,
    /// With `--ike-keylog`: the SEQ of the group's rekeys handed out (message 4).
    pub seq: Option<u32>,
    /// With `--ike-keylog`: the TEKs handed out (key ids, algorithms, lifetimes; no keys).
    pub teks: Vec<TekInfo>,
    /// With `--ike-keylog`: the KEK SPI handed out, hex.
    pub kek_spi: Option<String>,
    /// The Notify Message Type of a refusal (RFC 2408 §3.14.1), when it could be read.
    pub notify: Option<u16>,
    /// Messages of the exchange decrypted with the key log.
    pub decrypted: u32,
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
    /// With `--ike-keylog`: the group of the KEK (from the registration that handed it out).
    pub group: Option<String>,
    /// With `--ike-keylog`: the SEQ of each push read, in capture order (the first
    /// [`PUSH_HASHES`]).
    pub seqs: Vec<u32>,
    /// With `--ike-keylog`: the TEKs the pushes brought (no keys).
    pub teks: Vec<TekInfo>,
    /// With `--ike-keylog`: key ids the pushes withdrew (Delete).
    pub deleted: Vec<u32>,
    /// Pushes opened and verified under the KEK.
    pub decrypted: u64,
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

/// The newest TEK of a group as the capture saw it arrive, for the lifetime rule.
#[derive(Debug)]
struct KeyClock {
    /// Key ids seen for the group (the first [`crate::gdoi_decrypt::MAX_KEYS`]).
    known: Vec<u32>,
    /// The newest key id.
    newest: u32,
    /// When its lifetime ends: first seen + SA_ATD + KEY_LIFETIME, ns.
    end_ns: Option<u64>,
    /// The finding slot and uid of the exchange that brought it.
    at: (usize, String),
    /// Frame that brought it.
    frame: u64,
}

/// Most key servers remembered (addresses that answered a registration).
const MAX_KEY_SERVERS: usize = 64;

/// The GDOI exchanges of a capture.
#[derive(Debug, Default)]
pub struct GdoiTracker {
    pulls: Vec<Pull>,
    pull_index: HashMap<([u8; 16], u32), usize>,
    groups: Vec<Group>,
    group_index: HashMap<([u8; 16], SocketAddr), usize>,
    /// Messages beyond the limits, counted only.
    pub dropped: u64,
    /// With `--ike-keylog`.
    dec: Option<Decryptor>,
    /// Addresses that answered a registration.
    key_servers: Vec<IpAddr>,
    /// Per group, its newest TEK.
    clocks: HashMap<String, KeyClock>,
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
pub(crate) fn hash(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in b {
        h ^= u64::from(*x);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^ (b.len() as u64).rotate_left(48)
}

impl GdoiTracker {
    /// Reads the encrypted GDOI messages of the phase-1 SAs in `log` from now on
    /// ([`crate::gdoi_decrypt`]).
    pub fn set_keylog(&mut self, log: IkeKeyLog) {
        self.dec = Some(Decryptor::new(log));
    }

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
            exchange::MAIN_MODE => {
                if let Some(d) = &mut self.dec {
                    d.main_mode(src, &h, msg, hash(msg));
                }
            }
            exchange::GROUPKEY_PULL => {
                if let Some(i) = self.pull(no, ts, src, dst, cookies, h.message_id, msg) {
                    let info = self
                        .dec
                        .as_mut()
                        .and_then(|d| d.pull(src, &h, msg, hash(msg)));
                    if let Some(info) = info {
                        self.pull_read(i, no, ts, info, f);
                    }
                }
            }
            exchange::GROUPKEY_PUSH => self.push(no, ts, src, dst, cookies, &h, msg, f),
            exchange::INFORMATIONAL => {
                let kind = self.dec.as_mut().and_then(|d| d.informational(&h, msg));
                // A notification from the key server on the SA of a registration under way.
                for p in self.pulls.iter_mut().rev() {
                    if p.cookies == cookies && p.member == dst && p.reg.messages < 4 {
                        p.notified = true;
                        p.reg.last_frame = no;
                        p.reg.notify = p.reg.notify.or(kind);
                        break;
                    }
                }
            }
            _ => {}
        }
        true
    }

    /// Counts a GROUPKEY-PULL message; the index of its registration.
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
    ) -> Option<usize> {
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
                    if !self.key_servers.contains(&src.ip())
                        && self.key_servers.len() < MAX_KEY_SERVERS
                    {
                        self.key_servers.push(src.ip());
                    }
                }
            }
            return Some(i);
        }
        if self.pulls.len() >= MAX_EXCHANGES {
            self.dropped += 1;
            return None;
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
                group: None,
                member_id: None,
                seq: None,
                teks: Vec::new(),
                kek_spi: None,
                notify: None,
                decrypted: 0,
            },
            cookies: c,
            member: src,
            notified: false,
            last: [Some(h), None],
        });
        Some(self.pulls.len() - 1)
    }

    /// What a decrypted GROUPKEY-PULL message told, into registration `i`.
    fn pull_read(&mut self, i: usize, no: u64, ts: u64, info: PullInfo, f: &mut Findings) {
        let Some(p) = self.pulls.get_mut(i) else {
            return;
        };
        let r = &mut p.reg;
        r.decrypted = r.decrypted.saturating_add(1);
        r.group = r.group.take().or(info.group);
        r.member_id = r.member_id.take().or(info.member_id);
        r.seq = r.seq.or(info.seq);
        r.kek_spi = r.kek_spi.take().or(info.kek_spi);
        if info.teks.is_empty() {
            return;
        }
        r.teks = info.teks;
        let (group, uid, teks) = (r.group.clone(), r.uid.clone(), r.teks.clone());
        if let Some(g) = group {
            self.keys_arrived(&g, &teks, (usize::MAX - MAX_GROUPS - i, uid), no, ts, f);
        }
    }

    /// TEKs of `group` seen arriving in frame `no`: the rekey is late when the newest key's
    /// lifetime had already ended (publishers were left without a current key).
    fn keys_arrived(
        &mut self,
        group: &str,
        teks: &[TekInfo],
        at: (usize, String),
        no: u64,
        ts: u64,
        f: &mut Findings,
    ) {
        for t in teks {
            let end = t.lifetime_secs.map(|l| {
                ts.saturating_add(
                    l.saturating_add(t.activation_delay_secs.unwrap_or(0))
                        .saturating_mul(1_000_000_000),
                )
            });
            let Some(c) = self.clocks.get_mut(group) else {
                if self.clocks.len() < MAX_GROUPS {
                    self.clocks.insert(
                        group.to_string(),
                        KeyClock {
                            known: vec![t.key_id],
                            newest: t.key_id,
                            end_ns: end,
                            at: at.clone(),
                            frame: no,
                        },
                    );
                }
                continue;
            };
            if c.known.contains(&t.key_id) {
                continue;
            }
            if let Some(e) = c.end_ns.filter(|e| *e < ts) {
                let (old, late) = (c.newest, (ts - e) as f64 / 1e9);
                f.add("gdoi-rekey-late", Severity::Medium, Some((at.0, &at.1)), no, ts, || {
                    format!("group {group}: TEK {} arrived {late:.1} s after the lifetime of TEK {old} had ended (IEC 62351-9: the key server distributes the next key before the current one expires; publishers had no current key meanwhile)", t.key_id)
                });
            }
            if c.known.len() < crate::gdoi_decrypt::MAX_KEYS {
                c.known.push(t.key_id);
            }
            if end > c.end_ns {
                c.newest = t.key_id;
                c.end_ns = end;
                c.at = at.clone();
                c.frame = no;
            }
        }
    }

    /// Counts a GROUPKEY-PUSH and, with the key log, reads it.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        no: u64,
        ts: u64,
        src: SocketAddr,
        dst: SocketAddr,
        c: [u8; 16],
        h: &Header,
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
                        group: None,
                        seqs: Vec::new(),
                        teks: Vec::new(),
                        deleted: Vec::new(),
                        decrypted: 0,
                    },
                    recent: Vec::new(),
                });
                self.groups.len() - 1
            }
        };
        let slot = usize::MAX - i;
        let g = &mut self.groups[i];
        g.rekeys.pushes += 1;
        g.rekeys.last_frame = no;
        g.rekeys.last_ts_ns = ts;
        let uid = g.rekeys.uid.clone();
        let hsh = hash(msg);
        match g.recent.iter().find(|(x, _)| *x == hsh) {
            // The capture recorded the same datagram twice: read it once.
            Some(&(_, at)) if ts.saturating_sub(at) < COPY_WINDOW_NS => return,
            Some(_) => {
                g.rekeys.replayed += 1;
                f.add("gdoi-push-replayed", Severity::High, Some((slot, &uid)), no, ts, || {
                    format!("GROUPKEY-PUSH from {src} (KEK SPI {}) repeated octet for octet: a replayed rekey, whose SEQ the members have passed (RFC 6407 §4.2.1)", g.rekeys.kek_spi)
                });
                // Its SEQ is the one already read: nothing more to learn from it.
                return;
            }
            None => {
                if g.recent.len() >= PUSH_HASHES {
                    g.recent.remove(0);
                }
                g.recent.push((hsh, ts));
            }
        }
        let stranger = !self.key_servers.is_empty() && !self.key_servers.contains(&src.ip());
        if stranger {
            let known = self.key_servers.clone();
            f.add("gdoi-push-unknown-server", Severity::Medium, Some((slot, &uid)), no, ts, || {
                format!("GROUPKEY-PUSH from {src}, which answered no registration in the capture (key servers seen: {}): a rekey from a host that is not the group's key server", known.iter().map(IpAddr::to_string).collect::<Vec<_>>().join(", "))
            });
        }
        let Some(d) = self.dec.as_mut() else {
            return;
        };
        let info = d.push(src, h, msg);
        let g = &mut self.groups[i];
        match info {
            PushInfo::NoKek => {}
            PushInfo::Accepted {
                group,
                seq,
                teks,
                deleted,
                from_key_server,
            } => {
                let r = &mut g.rekeys;
                r.decrypted += 1;
                r.group.get_or_insert_with(|| group.clone());
                if r.seqs.len() < PUSH_HASHES {
                    r.seqs.push(seq);
                }
                for t in &teks {
                    if r.teks.len() < crate::gdoi_decrypt::MAX_KEYS
                        && !r.teks.iter().any(|x| x.key_id == t.key_id)
                    {
                        r.teks.push(t.clone());
                    }
                }
                for k in &deleted {
                    if r.deleted.len() < crate::gdoi_decrypt::MAX_KEYS && !r.deleted.contains(k) {
                        r.deleted.push(*k);
                    }
                }
                if !from_key_server && !stranger {
                    f.add("gdoi-push-unknown-server", Severity::Medium, Some((slot, &uid)), no, ts, || {
                        format!("GROUPKEY-PUSH of group {group} (SEQ {seq}) from {src}, not the key server that handed out its KEK, though signed with the key server's key")
                    });
                }
                self.keys_arrived(&group, &teks, (slot, uid), no, ts, f);
            }
            PushInfo::SeqBackwards { group, seq, last } => {
                g.rekeys.group.get_or_insert_with(|| group.clone());
                f.add("gdoi-push-seq-backwards", Severity::High, Some((slot, &uid)), no, ts, || {
                    format!("GROUPKEY-PUSH of group {group} with SEQ {seq}, not above the last accepted ({last}): signed by the key server but old, a replayed or reordered rekey that members drop (RFC 6407 §4.2.1)")
                });
            }
            PushInfo::BadSignature { group } => {
                g.rekeys.group.get_or_insert_with(|| group.clone());
                f.add("gdoi-push-bad-signature", Severity::High, Some((slot, &uid)), no, ts, || {
                    format!("GROUPKEY-PUSH of group {group}: the KEK opens it but the key server's signature does not verify (RFC 6407 §4: a rekey forged by a holder of the KEK, which every member is)")
                });
            }
            PushInfo::Unreadable { group, why } => {
                g.rekeys.group.get_or_insert_with(|| group.clone());
                f.add(
                    "gdoi-push-unreadable",
                    Severity::Medium,
                    Some((slot, &uid)),
                    no,
                    ts,
                    || {
                        format!(
                            "GROUPKEY-PUSH of group {group} under its KEK SPI does not read: {why}"
                        )
                    },
                );
            }
        }
    }

    /// The registrations and rekey SAs, with their findings added to `f`.
    /// `end_ns` is the capture time of the capture's last frame: a group whose newest TEK's
    /// lifetime ended before it, with no successor seen, is `gdoi-tek-expired`.
    pub fn finish(&mut self, f: &mut Findings, end_ns: u64) -> (Vec<Registration>, Vec<Rekeys>) {
        let mut clocks: Vec<_> = self.clocks.iter().collect();
        clocks.sort_by_key(|(_, c)| c.frame);
        for (group, c) in clocks {
            if let Some(e) = c.end_ns.filter(|e| *e < end_ns) {
                let over = (end_ns - e) as f64 / 1e9;
                f.add("gdoi-tek-expired", Severity::Medium, Some((c.at.0, &c.at.1)), c.frame, e, || {
                    format!("group {group}: the lifetime of its newest TEK {} ended {over:.1} s before the capture did, and no new key was distributed (members keep it only for the overlap, then have no key)", c.newest)
                });
            }
        }
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
                (1u8..4, any::<u8>(), prop_oneof![Just(2u8), Just(5u8), 30u8..34], any::<u32>(), proptest::collection::vec(any::<u8>(), 0..64)),
                0..40,
            ),
            with_keylog in any::<bool>(),
        ) {
            let mut t = GdoiTracker::default();
            if with_keylog {
                // Keys for some of the cookies used, so the decrypting paths see the junk too.
                let mut log = IkeKeyLog::default();
                for c in 0..=255u8 {
                    if c % 3 == 0 {
                        log.insert([c; 8], &[c; 16]);
                    }
                }
                t.set_keylog(log);
            }
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
            let (regs, rekeys) = t.finish(&mut f, u64::MAX);
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
