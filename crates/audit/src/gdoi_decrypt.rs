//! GDOI messages read with the lab's IKEv1 key log (`gander audit --ike-keylog FILE`): the
//! group, the SEQ of rekeys and the TEKs that the encrypted GROUPKEY-PULL and GROUPKEY-PUSH
//! messages carry (IEC 62351-9; RFC 6407 over RFC 2409 phase 1; RFC 8052's IEC 61850 TEKs).
//!
//! How, with the same cryptography as `gander kdc` and `gander gdoi register`
//! (`gander_gdoi::keys`, `pull`, `push`, `group_kek`):
//!
//! 1. **Phase 1** (main mode, six messages, RFC 2409 §5): messages 1-4 are in clear. The
//!    responder's SA (message 2) names the hash; the KE payloads of messages 3 and 4 give
//!    the first IV, `hash(g^xi | g^xr)` (RFC 2409 Appendix B); the key log gives the AES key
//!    for the initiator cookie. Message 5 (the member's identity) is decrypted with that IV,
//!    message 6 with the last ciphertext block of 5, and the last block of 6 starts every
//!    later exchange under the SA. The key log holds no IV, so a capture must hold messages
//!    1-6 (as tshark needs them too).
//! 2. **GROUPKEY-PULL** (RFC 6407 §3) and **Informational** exchanges: the first IV is
//!    `hash(last phase-1 block | Message ID)`, each later one the last block of the message
//!    before. Message 1 names the group (ID), message 2 carries the policy (the GDOI SA with
//!    its IEC 61850 SA TEKs and the SA KEK), message 4 the SEQ and the keys (KD). What the
//!    member receives is read by `gander_gdoi::pull::group_keys`, the member's own code:
//!    TEK key ids, algorithms, lifetimes, and the KEK with the key server's signature key.
//! 3. **GROUPKEY-PUSH** (RFC 6407 §4): under the KEK of the registration that handed it out
//!    (the push header's cookies are the KEK SPI), opened and checked by
//!    `gander_gdoi::push::PushReceiver`, the member's own receiver: the key server's signature
//!    over the message, then the SEQ against the highest accepted.
//!
//! Nothing of the key material leaves this module: the report and the logs get group names,
//! SEQ values, key ids, algorithm names and lifetimes.
//!
//! Memory: at most [`crate::gdoi::MAX_EXCHANGES`] phase-1 SAs and exchanges and
//! [`crate::gdoi::MAX_GROUPS`] KEKs are followed; each exchange holds one IV and what its
//! messages named; each group at most [`MAX_KEYS`] key ids.

use crate::ike_keylog::IkeKeyLog;
use gander_gdoi::keys::{self, BLOCK};
use gander_gdoi::push::{PushError, PushReceiver};
use gander_gdoi::suite::{HashAlg, Suite};
use gander_sec::Profile;
use gander_wire::isakmp::header::Header;
use gander_wire::isakmp::payload::{id_type, parse_payloads};
use gander_wire::isakmp::{IdOid, IdPayload, Payload, SaBody, SaPayload, HEADER_LEN};
use serde::Serialize;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// Key ids remembered per group (and TEKs listed per registration or rekey SA).
pub const MAX_KEYS: usize = 16;

/// A TEK as the audit reports it: never its key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TekInfo {
    /// The IEC 62351-6 Key ID (the TEK's SPI).
    pub key_id: u32,
    /// The MAC algorithm's key-file name (`hmac-sha256-128`, …), or `code-N` when unknown.
    pub mac: String,
    /// The encryption algorithm's name (`none`, `aes-128-gcm`, …).
    pub enc: String,
    /// KEY_LIFETIME in seconds.
    pub lifetime_secs: Option<u64>,
    /// SA_ATD, the activation delay, in seconds.
    pub activation_delay_secs: Option<u64>,
}

impl TekInfo {
    /// `key_id:mac/enc`, the gdoi.log form.
    pub fn algorithms(&self) -> String {
        format!("{}:{}/{}", self.key_id, self.mac, self.enc)
    }
}

fn tek_info(t: &gander_gdoi::pull::TekKey) -> TekInfo {
    let code = |c: Option<u16>| u8::try_from(c.unwrap_or(0)).ok();
    let mac = code(t.mac_algorithm)
        .and_then(|c| Profile::Standard.mac_from_code(c).ok())
        .map_or_else(
            || format!("code-{}", t.mac_algorithm.unwrap_or(0)),
            |(m, _)| m.name().to_string(),
        );
    let enc = code(t.encryption_algorithm)
        .and_then(|c| Profile::Standard.enc_from_code(c).ok())
        .map_or_else(
            || format!("code-{}", t.encryption_algorithm.unwrap_or(0)),
            |e| e.name().to_string(),
        );
    TekInfo {
        key_id: t.key_id,
        mac,
        enc,
        lifetime_secs: t.lifetime_secs,
        activation_delay_secs: t.activation_delay_secs,
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A group's name from its ID payload (RFC 6407 §3.2: ID_KEY_ID, or RFC 8052's ID_OID):
/// `key-id:NAME` (hex when not printable), `oid:1.0.…` with `/HEX` for an OID-Specific
/// Payload.
///
/// ID_OID data is read in RFC 8052 2.1's layout (OID Length, OID, OID-Specific Payload Length
/// and payload: [`IdOid`], as gander's member and go-iec61850 write it); data that is not in
/// that layout is tried as bare OID contents octets, the form gander's member sent before
/// it followed RFC 8052 2.1, and printed in hex when neither reads.
pub fn group_name(id: &IdPayload) -> String {
    match id.id_type {
        id_type::OID => match IdOid::parse(&id.data).and_then(|o| Ok((o.dotted()?, o.selector))) {
            Ok((dotted, sel)) if sel.is_empty() => format!("oid:{dotted}"),
            Ok((dotted, sel)) => format!("oid:{dotted}/{}", hex(&sel)),
            Err(_) => gander_wire::isakmp::iec61850::decode_oid(&id.data).map_or_else(
                |_| format!("oid-hex:{}", hex(&id.data)),
                |arcs| {
                    let a: Vec<String> = arcs.iter().map(u64::to_string).collect();
                    format!("oid:{}", a.join("."))
                },
            ),
        },
        id_type::KEY_ID => match std::str::from_utf8(&id.data) {
            Ok(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_graphic() || c == ' ') => {
                format!("key-id:{s}")
            }
            _ => format!("key-id-hex:{}", hex(&id.data)),
        },
        t => format!("id-type-{t}:{}", hex(&id.data)),
    }
}

/// A phase-1 identity (IDii) for the log: printable data as text, else hex.
fn identity(id: &IdPayload) -> String {
    match std::str::from_utf8(&id.data) {
        Ok(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_graphic() || c == ' ') => {
            s.to_string()
        }
        _ if id.id_type == id_type::IPV4_ADDR && id.data.len() == 4 => {
            IpAddr::from([id.data[0], id.data[1], id.data[2], id.data[3]]).to_string()
        }
        _ => hex(&id.data),
    }
}

#[derive(Debug)]
struct Phase1 {
    initiator: SocketAddr,
    hash: Option<HashAlg>,
    gxi: Option<Vec<u8>>,
    gxr: Option<Vec<u8>>,
    /// IV of the next encrypted phase-1 message.
    chain: Option<[u8; BLOCK]>,
    /// Message 5 decrypted.
    got5: bool,
    /// The last CBC block of message 6: phase 1 complete.
    last_iv: Option<[u8; BLOCK]>,
    member_id: Option<String>,
    /// The key log's key does not open the messages.
    broken: bool,
    /// Hashes of the encrypted messages read (a resent one is skipped).
    read: Vec<u64>,
}

#[derive(Debug)]
struct PullDec {
    iv: [u8; BLOCK],
    read: Vec<u64>,
    group: Option<IdPayload>,
    sa: Option<SaPayload>,
    broken: bool,
}

struct KekState {
    receiver: PushReceiver,
    group: IdPayload,
    key_server: IpAddr,
}

/// What one GROUPKEY-PULL message told.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PullInfo {
    /// The group (message 1).
    pub group: Option<String>,
    /// The member's phase-1 identity.
    pub member_id: Option<String>,
    /// The SEQ handed out (message 4).
    pub seq: Option<u32>,
    /// The TEKs handed out (message 4).
    pub teks: Vec<TekInfo>,
    /// The KEK SPI handed out (message 4), hex.
    pub kek_spi: Option<String>,
}

/// What a GROUPKEY-PUSH was, read under its KEK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PushInfo {
    /// No registration in the capture handed out its KEK (or it was not decrypted).
    NoKek,
    /// Signature good, SEQ above the last: a rekey the members apply.
    Accepted {
        /// The group of the KEK.
        group: String,
        /// Its SEQ.
        seq: u32,
        /// New TEKs.
        teks: Vec<TekInfo>,
        /// Key ids withdrawn (Delete payloads).
        deleted: Vec<u32>,
        /// Whether it came from the key server that handed out the KEK.
        from_key_server: bool,
    },
    /// Signature good, SEQ not above the last accepted (RFC 6407 §4.2.1: members drop it).
    SeqBackwards {
        /// The group.
        group: String,
        /// Its SEQ.
        seq: u32,
        /// The highest accepted.
        last: u32,
    },
    /// The KEK opens it but the key server's signature does not verify: forged by a holder
    /// of the KEK (every member holds it).
    BadSignature {
        /// The group.
        group: String,
    },
    /// The KEK does not open it, or what it holds does not parse.
    Unreadable {
        /// The group.
        group: String,
        /// Why.
        why: String,
    },
}

/// The decrypting side of the GDOI audit.
pub struct Decryptor {
    log: IkeKeyLog,
    p1: HashMap<[u8; 8], Phase1>,
    pulls: HashMap<([u8; 16], u32), PullDec>,
    keks: HashMap<[u8; 16], KekState>,
    /// Exchanges and SAs beyond the limits, counted only.
    pub dropped: u64,
}

impl std::fmt::Debug for Decryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decryptor")
            .field("log", &self.log)
            .field("phase1", &self.p1.len())
            .field("pulls", &self.pulls.len())
            .field("keks", &self.keks.len())
            .finish()
    }
}

fn first_iv(h: HashAlg, parts: &[&[u8]]) -> Option<[u8; BLOCK]> {
    let d = keys::hash(h, parts).ok()?;
    d.get(..BLOCK)?.try_into().ok()
}

/// Decrypts an encrypted message's body with `key`/`iv`; its payloads and last block.
fn open(
    key: &[u8],
    iv: &[u8; BLOCK],
    h: &Header,
    msg: &[u8],
) -> Option<(Vec<Payload>, [u8; BLOCK])> {
    let ct = msg.get(HEADER_LEN..)?;
    let pt = keys::decrypt(key, iv, ct).ok()?;
    let p = parse_payloads(h.next_payload, &pt, h.exchange, true).ok()?;
    Some((p, keys::last_block(ct)))
}

impl Decryptor {
    /// A decryptor with the keys of `log`.
    pub fn new(log: IkeKeyLog) -> Decryptor {
        Decryptor {
            log,
            p1: HashMap::new(),
            pulls: HashMap::new(),
            keks: HashMap::new(),
            dropped: 0,
        }
    }

    /// A main-mode message (exchange 2) from `src`.
    pub fn main_mode(&mut self, src: SocketAddr, h: &Header, msg: &[u8], msg_hash: u64) {
        let Some(key) = self.log.key(&h.initiator_cookie) else {
            return;
        };
        if !self.p1.contains_key(&h.initiator_cookie) {
            // Message 1 (responder cookie still zero) names the initiator.
            if h.responder_cookie != [0; 8] || h.encrypted() {
                return;
            }
            if self.p1.len() >= crate::gdoi::MAX_EXCHANGES {
                self.dropped += 1;
                return;
            }
            self.p1.insert(
                h.initiator_cookie,
                Phase1 {
                    initiator: src,
                    hash: None,
                    gxi: None,
                    gxr: None,
                    chain: None,
                    got5: false,
                    last_iv: None,
                    member_id: None,
                    broken: false,
                    read: Vec::new(),
                },
            );
        }
        let Some(p) = self.p1.get_mut(&h.initiator_cookie) else {
            return;
        };
        let from_initiator = src == p.initiator;
        if !h.encrypted() {
            let Ok(payloads) = parse_payloads(
                h.next_payload,
                msg.get(HEADER_LEN..).unwrap_or(&[]),
                h.exchange,
                true,
            ) else {
                return;
            };
            for x in payloads {
                match x {
                    // The responder's choice: one proposal with one transform.
                    Payload::Sa(sa) if !from_initiator => {
                        if let SaBody::Proposals(ps) = &sa.body {
                            p.hash = ps
                                .first()
                                .and_then(|pr| pr.transforms.first())
                                .and_then(Suite::from_transform_auth)
                                .map(|(s, _)| s.hash);
                        }
                    }
                    Payload::Ke(k) if from_initiator => p.gxi = Some(k),
                    Payload::Ke(k) => p.gxr = Some(k),
                    _ => {}
                }
            }
            return;
        }
        if p.broken || p.last_iv.is_some() || p.read.contains(&msg_hash) {
            return;
        }
        let (Some(hash), Some(gxi), Some(gxr)) = (p.hash, &p.gxi, &p.gxr) else {
            return;
        };
        let iv = match p.chain {
            Some(iv) => iv,
            None => match first_iv(hash, &[gxi, gxr]) {
                Some(iv) => iv,
                None => return,
            },
        };
        let Some((payloads, last)) = open(key, &iv, h, msg) else {
            p.broken = true;
            return;
        };
        p.read.push(msg_hash);
        p.chain = Some(last);
        if from_initiator && !p.got5 {
            p.got5 = true;
            p.member_id = payloads.iter().find_map(|x| match x {
                Payload::Id(id) => Some(identity(id)),
                _ => None,
            });
        } else if !from_initiator && p.got5 {
            p.last_iv = Some(last);
        }
    }

    fn exchange_iv(&self, h: &Header) -> Option<(&[u8], [u8; BLOCK])> {
        let p = self.p1.get(&h.initiator_cookie)?;
        let last = p.last_iv?;
        let iv = first_iv(p.hash?, &[&last, &h.message_id.to_be_bytes()])?;
        Some((self.log.key(&h.initiator_cookie)?, iv))
    }

    /// A GROUPKEY-PULL message from `src`: what it told, if it was decrypted.
    pub fn pull(
        &mut self,
        src: SocketAddr,
        h: &Header,
        msg: &[u8],
        msg_hash: u64,
    ) -> Option<PullInfo> {
        let (key, iv0) = self.exchange_iv(h)?;
        let key = key.to_vec();
        let mut cookies = [0u8; 16];
        cookies[..8].copy_from_slice(&h.initiator_cookie);
        cookies[8..].copy_from_slice(&h.responder_cookie);
        let k = (cookies, h.message_id);
        if !self.pulls.contains_key(&k) {
            if self.pulls.len() >= crate::gdoi::MAX_EXCHANGES {
                self.dropped += 1;
                return None;
            }
            self.pulls.insert(
                k,
                PullDec {
                    iv: iv0,
                    read: Vec::new(),
                    group: None,
                    sa: None,
                    broken: false,
                },
            );
        }
        let member_id = self
            .p1
            .get(&h.initiator_cookie)
            .and_then(|p| p.member_id.clone());
        let d = self.pulls.get_mut(&k)?;
        if d.broken || d.read.contains(&msg_hash) || d.read.len() >= 8 {
            return None;
        }
        let Some((payloads, last)) = open(&key, &d.iv, h, msg) else {
            d.broken = true;
            return None;
        };
        d.read.push(msg_hash);
        d.iv = last;
        let mut info = PullInfo {
            member_id,
            ..PullInfo::default()
        };
        let (mut kd, mut seq) = (None, None);
        for x in payloads {
            match x {
                Payload::Id(id) => {
                    info.group = Some(group_name(&id));
                    d.group = Some(id);
                }
                Payload::Sa(sa) if matches!(sa.body, SaBody::Gdoi(_)) => d.sa = Some(sa),
                Payload::Kd(k) => kd = Some(k),
                Payload::Seq(s) => seq = Some(s),
                _ => {}
            }
        }
        info.seq = seq;
        let (Some(kd), Some(group), Some(sa)) = (kd, d.group.clone(), d.sa.as_ref()) else {
            return Some(info);
        };
        info.group = Some(group_name(&group));
        let Ok(keys) = gander_gdoi::pull::group_keys(group.clone(), sa, &kd, seq) else {
            return Some(info);
        };
        info.teks = keys.teks.iter().take(MAX_KEYS).map(tek_info).collect();
        if let Some(kek) = &keys.kek {
            let k = kek.kek();
            info.kek_spi = Some(hex(&k.spi));
            if let Ok(vk) = kek.verify_key() {
                if !self.keks.contains_key(&k.spi) && self.keks.len() < crate::gdoi::MAX_GROUPS {
                    let spi = k.spi;
                    self.keks.insert(
                        spi,
                        KekState {
                            receiver: PushReceiver::new(k, vk, seq.unwrap_or(0)),
                            group,
                            key_server: src.ip(),
                        },
                    );
                }
            }
        }
        Some(info)
    }

    /// An Informational exchange under a phase-1 SA: the Notify Message Type it carries.
    pub fn informational(&mut self, h: &Header, msg: &[u8]) -> Option<u16> {
        if !h.encrypted() {
            let p =
                parse_payloads(h.next_payload, msg.get(HEADER_LEN..)?, h.exchange, true).ok()?;
            return notify(&p);
        }
        let (key, iv) = self.exchange_iv(h)?;
        let (p, _) = open(key, &iv, h, msg)?;
        notify(&p)
    }

    /// A GROUPKEY-PUSH from `src`.
    pub fn push(&mut self, src: SocketAddr, h: &Header, msg: &[u8]) -> PushInfo {
        let mut spi = [0u8; 16];
        spi[..8].copy_from_slice(&h.initiator_cookie);
        spi[8..].copy_from_slice(&h.responder_cookie);
        let Some(st) = self.keks.get_mut(&spi) else {
            return PushInfo::NoKek;
        };
        let group = group_name(&st.group);
        match st.receiver.receive(msg) {
            Ok(r) => {
                let mut deleted = Vec::new();
                let (mut sa, mut kd) = (None, None);
                for x in &r.payloads {
                    match x {
                        Payload::Delete(d) => deleted.extend(
                            d.spis
                                .iter()
                                .filter_map(|s| <[u8; 4]>::try_from(s.as_slice()).ok())
                                .map(u32::from_be_bytes)
                                .take(MAX_KEYS),
                        ),
                        Payload::Sa(s) => sa = Some(s),
                        Payload::Kd(k) => kd = Some(k),
                        _ => {}
                    }
                }
                let teks = match (sa, kd) {
                    (Some(sa), Some(kd)) => {
                        gander_gdoi::pull::group_keys(st.group.clone(), sa, kd, Some(r.seq))
                            .map(|k| k.teks.iter().take(MAX_KEYS).map(tek_info).collect())
                            .unwrap_or_default()
                    }
                    _ => Vec::new(),
                };
                PushInfo::Accepted {
                    group,
                    seq: r.seq,
                    teks,
                    deleted,
                    from_key_server: src.ip() == st.key_server,
                }
            }
            Err(PushError::Replay { got, last }) => PushInfo::SeqBackwards {
                group,
                seq: got,
                last,
            },
            Err(PushError::BadSignature) => PushInfo::BadSignature { group },
            Err(e) => PushInfo::Unreadable {
                group,
                why: e.to_string(),
            },
        }
    }
}

fn notify(p: &[Payload]) -> Option<u16> {
    p.iter().find_map(|x| match x {
        Payload::Notify(n) => Some(n.message_type),
        _ => None,
    })
}

#[cfg(test)]
mod group_name_tests {
    use super::*;

    fn id(id_type: u8, data: Vec<u8>) -> IdPayload {
        IdPayload {
            id_type,
            protocol: 0,
            port: 0,
            data,
        }
    }

    #[test]
    fn id_oid_in_the_rfc_8052_layout_names_the_oid_and_its_payload() {
        // go-iec61850's member (and gander's since RFC 8052 2.1): OID Length 13, the DER OID
        // 1.2.840.10070.61850.8.1.2, payload length 0.
        let go = IdOid::parse(&[
            0x0d, 0x06, 0x0b, 0x2a, 0x86, 0x48, 0xce, 0x56, 0x83, 0xe3, 0x1a, 0x08, 0x01, 0x02,
            0x00, 0x00,
        ])
        .map(|o| o.to_vec())
        .unwrap_or_default();
        assert_eq!(
            group_name(&id(id_type::OID, go)),
            "oid:1.2.840.10070.61850.8.1.2"
        );
        let with_selector = IdOid::new("1.2.840.10070.61850.8.1.2", vec![0xab, 0xcd])
            .map(|o| o.to_vec())
            .unwrap_or_default();
        assert_eq!(
            group_name(&id(id_type::OID, with_selector)),
            "oid:1.2.840.10070.61850.8.1.2/abcd"
        );
    }

    #[test]
    fn bare_oid_contents_and_garbage_still_print() {
        // gander's member before RFC 8052 2.1: the OID's contents octets only.
        let bare = vec![
            0x2a, 0x86, 0x48, 0xce, 0x56, 0x83, 0xe3, 0x1a, 0x08, 0x01, 0x02,
        ];
        assert_eq!(
            group_name(&id(id_type::OID, bare)),
            "oid:1.2.840.10070.61850.8.1.2"
        );
        assert_eq!(group_name(&id(id_type::OID, vec![0xff])), "oid-hex:ff");
    }
}
