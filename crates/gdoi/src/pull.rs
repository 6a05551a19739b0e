//! GROUPKEY-PULL (RFC 6407 section 3): a member registers with the key server under an
//! established phase-1 SA and receives the group policy (SA with its IEC 61850 SA TEKs,
//! RFC 8052) and the keys (KD), with the SEQ of the group's push stream.
//!
//! ```text
//! 1 M->KS  HDR*, HASH(1), Ni, ID          HASH(1) = prf(SKEYID_a, M-ID | Ni | ID)
//! 2 KS->M  HDR*, HASH(2), Nr, SA          HASH(2) = prf(SKEYID_a, M-ID | Ni_b | Nr | SA)
//! 3 M->KS  HDR*, HASH(3)                  HASH(3) = prf(SKEYID_a, M-ID | Ni_b | Nr_b)
//! 4 KS->M  HDR*, HASH(4), [SEQ,] KD       HASH(4) = prf(SKEYID_a, M-ID | Ni_b | Nr_b | [SEQ |] KD)
//! ```
//!
//! As in IKEv1 quick mode, each HASH covers the Message ID and the payloads that follow the
//! HASH payload exactly as received (generic headers included); `Ni_b`/`Nr_b` are nonce
//! bodies. The first IV is hash(last phase-1 CBC block | M-ID), later ones the last block of
//! the previous message (RFC 2409 Appendix B). gander's member sends neither KE (no PFS) nor
//! CERT/POP (pre-shared-key phase 1): the optional payloads of RFC 6407 3.2.
//!
//! Like phase 1, each step checks everything before it changes anything.

use crate::keys;
use crate::main_mode::{seal, Phase1Sa};
use gander_wire::isakmp::chain_end;
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::gdoi::{kd_attr, kd_type};
use gander_wire::isakmp::header::{exchange, flags};
use gander_wire::isakmp::iec61850::tek_attr;
use gander_wire::isakmp::iec61850_alg;
use gander_wire::isakmp::payload::parse_payloads;
use gander_wire::isakmp::{
    Attribute, Header, IdPayload, IsakmpError, KeyDownload, Payload, SaAttrPayload, SaBody,
    SaPayload, SaTek, Traffic, HEADER_LEN,
};
use rand::RngCore;
use std::collections::HashSet;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

/// Why a GROUPKEY-PULL message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PullError {
    /// Not a well-formed message.
    #[error("malformed: {0}")]
    Malformed(#[from] IsakmpError),
    /// Not the message this state expects (replay, wrong exchange, wrong cookies).
    #[error("unexpected message in state {state}")]
    Unexpected {
        /// The state that refused it.
        state: &'static str,
    },
    /// The Message ID was used before under this phase-1 SA, or is zero.
    #[error("message ID reused or zero")]
    MessageId,
    /// The header sets Commit or Authentication-Only (RFC 2408 3.1). GDOI's pull uses the
    /// Encryption flag alone, and the header is outside HASH(1)..HASH(4) (RFC 6407 3.2), so a
    /// flag accepted here would be accepted unauthenticated.
    #[error("ISAKMP flags {0:#04x}: GROUPKEY-PULL uses Encryption alone")]
    Flags(u8),
    /// A required payload is missing, or the HASH payload is not first.
    #[error("missing {0} payload")]
    Missing(&'static str),
    /// A HASH does not verify.
    #[error("hash does not verify")]
    HashMismatch,
    /// The key server has no such group.
    #[error("unknown group")]
    UnknownGroup,
    /// The member is not authorised for the group (or was revoked).
    #[error("member not authorised for the group")]
    NotAuthorized,
    /// The policy carries no IEC 61850 TEK the member can use, or a TEK has no keys.
    #[error("unusable policy: {0}")]
    Policy(&'static str),
    /// Decryption or a crypto primitive failed.
    #[error("crypto: {0}")]
    Crypto(&'static str),
    /// Message 1 carries an SA payload: the peer runs an IKEv1 Quick Mode (RFC 2409 5.5),
    /// which shares exchange type 32 with GROUPKEY-PULL, to negotiate IPsec SAs; GDOI's first
    /// message has no SA (RFC 6407 3.2). A general-purpose IKEv1 peer (strongSwan) pointed at
    /// the key server does this right after phase 1.
    #[error("a Quick Mode with an SA of DOI {doi} (IPsec SA negotiation, RFC 2409 5.5), not a GROUPKEY-PULL (RFC 6407 3.2)")]
    QuickMode {
        /// The SA payload's DOI (1: IPsec).
        doi: u32,
    },
}

impl PullError {
    /// The Notify Message Type (RFC 2408 3.14.1) for the peer.
    pub fn notify(&self) -> u16 {
        match self {
            PullError::Malformed(e) => e.notify(),
            PullError::Unexpected { .. } => notify_type::INVALID_EXCHANGE_TYPE,
            PullError::MessageId => notify_type::INVALID_MESSAGE_ID,
            PullError::Flags(_) => notify_type::INVALID_FLAGS,
            PullError::Missing(_) | PullError::Crypto(_) => notify_type::PAYLOAD_MALFORMED,
            PullError::HashMismatch => notify_type::INVALID_HASH_INFORMATION,
            PullError::UnknownGroup | PullError::NotAuthorized => {
                notify_type::INVALID_ID_INFORMATION
            }
            PullError::Policy(_) => notify_type::ATTRIBUTES_NOT_SUPPORTED,
            // RFC 2408 3.14.1: the SA names a DOI the key server does not negotiate SAs of
            // (phase 2 here is GDOI only); an SA of the GDOI itself has no place in message 1.
            PullError::QuickMode { doi } if *doi != gander_wire::isakmp::sa::doi::GDOI => {
                notify_type::DOI_NOT_SUPPORTED
            }
            PullError::QuickMode { .. } => notify_type::INVALID_PAYLOAD_TYPE,
        }
    }
}

impl From<crate::Phase1Error> for PullError {
    fn from(e: crate::Phase1Error) -> Self {
        match e {
            crate::Phase1Error::Malformed(m) | crate::Phase1Error::AuthFailed(m) => {
                PullError::Malformed(m)
            }
            _ => PullError::Crypto("phase-1 primitive"),
        }
    }
}

/// A received, decrypted message: header, payloads, the bytes after the HASH payload, the
/// HASH value, and the last CBC block.
struct Opened {
    header: Header,
    payloads: Vec<Payload>,
    after_hash: Vec<u8>,
    hash: Vec<u8>,
    last: [u8; 16],
}

fn open(sa: &Phase1Sa, buf: &[u8], iv: &[u8]) -> Result<Opened, PullError> {
    let header = Header::parse(buf)?;
    if header.exchange != exchange::GROUPKEY_PULL
        || !header.encrypted()
        || header.initiator_cookie != sa.cky_i
        || header.responder_cookie != sa.cky_r
    {
        return Err(PullError::Unexpected {
            state: "GROUPKEY-PULL header",
        });
    }
    if header.flags != flags::ENCRYPTION {
        return Err(PullError::Flags(header.flags));
    }
    if buf.len() != header.length as usize {
        return Err(IsakmpError::BadLength {
            what: "message",
            value: buf.len(),
        }
        .into());
    }
    let ct = &buf[HEADER_LEN..];
    let pt = keys::decrypt(&sa.keys.enc_key, iv, ct)?;
    let payloads = parse_payloads(header.next_payload, &pt, header.exchange, true)?;
    let Some(Payload::Hash(hash)) = payloads.first() else {
        return Err(PullError::Missing("HASH first"));
    };
    let hash = hash.clone();
    let end = chain_end(header.next_payload, &pt)?;
    let hash_len = 4 + hash.len();
    Ok(Opened {
        header,
        after_hash: pt[hash_len..end].to_vec(),
        payloads,
        hash,
        last: keys::last_block(ct),
    })
}

fn after_hash_bytes(rest: &[Payload]) -> Vec<u8> {
    let mut b = vec![0u8; gander_wire::isakmp::payload::payloads_len(rest)];
    gander_wire::isakmp::payload::emit_payloads(rest, &mut b);
    b
}

fn mac(sa: &Phase1Sa, parts: &[&[u8]]) -> Result<Zeroizing<Vec<u8>>, PullError> {
    Ok(keys::prf(sa.suite.hash, &sa.keys.skeyid_a, parts)?)
}

fn verify(want: &[u8], got: &[u8]) -> Result<(), PullError> {
    if bool::from(want.ct_eq(got)) {
        Ok(())
    } else {
        Err(PullError::HashMismatch)
    }
}

fn first_iv(sa: &Phase1Sa, mid: u32) -> Result<Vec<u8>, PullError> {
    Ok(keys::hash(
        sa.suite.hash,
        &[&sa.last_iv, &mid.to_be_bytes()],
    )?)
}

fn pull_header(sa: &Phase1Sa, mid: u32) -> Header {
    Header {
        initiator_cookie: sa.cky_i,
        responder_cookie: sa.cky_r,
        next_payload: 0,
        major_version: 1,
        minor_version: 0,
        exchange: exchange::GROUPKEY_PULL,
        flags: 0,
        message_id: mid,
        length: 0,
    }
}

/// Builds an encrypted message HASH | rest with HASH = prf(SKEYID_a, M-ID | prefix | rest).
fn send(
    sa: &Phase1Sa,
    mid: u32,
    prefix: &[&[u8]],
    rest: Vec<Payload>,
    iv: &[u8],
) -> Result<(Vec<u8>, [u8; 16]), PullError> {
    let after = after_hash_bytes(&rest);
    let m = mid.to_be_bytes();
    let mut parts: Vec<&[u8]> = vec![&m];
    parts.extend_from_slice(prefix);
    parts.push(&after);
    let h = mac(sa, &parts)?;
    let mut payloads = vec![Payload::Hash(h.to_vec())];
    payloads.extend(rest);
    Ok(seal(pull_header(sa, mid), &payloads, &sa.keys.enc_key, iv)?)
}

fn nonce() -> Vec<u8> {
    let mut n = vec![0u8; 32];
    rand::thread_rng().fill_bytes(&mut n);
    n
}

// ---------------------------------------------------------------------------------------------
// What the member ends up with

/// One traffic key as the member installs it (IEC 62351-6 key store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TekKey {
    /// The IEC 62351-6 Key ID (the TEK's SPI).
    pub key_id: u32,
    /// DER contents of the OID naming the protocol.
    pub oid: Vec<u8>,
    /// The traffic it protects.
    /// `None` when the SA TEK's OID-Specific Payload was empty: the group's configured
    /// traffic applies (RFC 8052 2.2).
    pub traffic: Option<Traffic>,
    /// IEC 62351-6 MAC algorithm number, if the policy names one.
    pub mac_algorithm: Option<u16>,
    /// IEC 62351-6 encryption algorithm number, if the policy names one.
    pub encryption_algorithm: Option<u16>,
    /// Lifetime in seconds, if given.
    pub lifetime_secs: Option<u64>,
    /// Activation delay in seconds (SA_ATD), if given.
    pub activation_delay_secs: Option<u64>,
    /// Overlap in seconds (gander's private SA attribute, `tek_attr::GANDER_OVERLAP`), if
    /// given.
    pub overlap_secs: Option<u64>,
    /// TEK_INTEGRITY_KEY (the HMAC key), if sent.
    pub integrity_key: Option<Zeroizing<Vec<u8>>>,
    /// TEK_ALGORITHM_KEY (the GCM/GMAC key), if sent.
    pub algorithm_key: Option<Zeroizing<Vec<u8>>>,
}

/// What a registration gives the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupKeys {
    /// The group's identity as registered.
    pub group: IdPayload,
    /// The traffic keys.
    pub teks: Vec<TekKey>,
    /// The group's current push sequence number, if sent.
    pub seq: Option<u32>,
    /// The KEK and the key server's signature key, if the SA carries an SA KEK: what a
    /// member needs to accept GROUPKEY-PUSH (`group_kek`, `push::PushReceiver`).
    pub kek: Option<crate::group_kek::GroupKek>,
}

/// Pairs each IEC 61850 SA TEK with its key packet (by SPI); refuses a policy without one.
pub fn group_keys(
    group: IdPayload,
    sa: &SaPayload,
    kd: &KeyDownload,
    seq: Option<u32>,
) -> Result<GroupKeys, PullError> {
    let SaBody::Gdoi(attrs) = &sa.body else {
        return Err(PullError::Policy("SA is not a GDOI SA"));
    };
    let mut teks = Vec::new();
    for a in attrs {
        let SaAttrPayload::Tek(SaTek::Iec61850(t)) = a else {
            continue;
        };
        let key_id = t.key_id();
        // RFC 6407 5.6: the key packet is paired with its SA TEK by SPI.
        let pkt = kd
            .packets
            .iter()
            .find(|p| p.kd_type == kd_type::TEK && p.spi == key_id.to_be_bytes())
            .ok_or(PullError::Policy("TEK without keys in the KD"))?;
        let mac_algorithm = iec61850_alg::auth_to_62351(t.auth_alg)
            .map_err(|_| PullError::Policy("TEK authentication algorithm not supported"))?;
        let encryption_algorithm = iec61850_alg::conf_to_62351(t.conf_alg)
            .map_err(|_| PullError::Policy("TEK confidentiality algorithm not supported"))?;
        let key = |k| Attribute::find(&pkt.attributes, k).map(|a| Zeroizing::new(a.bytes()));
        let integrity_key = key(kd_attr::TEK_INTEGRITY_KEY);
        let algorithm_key = key(kd_attr::TEK_ALGORITHM_KEY);
        if integrity_key.is_none() && algorithm_key.is_none() {
            return Err(PullError::Policy("TEK key packet without a key"));
        }
        teks.push(TekKey {
            key_id,
            oid: t.oid.clone(),
            traffic: t.traffic,
            mac_algorithm: Some(mac_algorithm),
            encryption_algorithm: Some(encryption_algorithm),
            lifetime_secs: Some(u64::from(t.lifetime_secs)),
            activation_delay_secs: t.attr_u64(tek_attr::SA_ATD),
            overlap_secs: t.attr_u64(tek_attr::GANDER_OVERLAP),
            integrity_key,
            algorithm_key,
        });
    }
    if teks.is_empty() {
        return Err(PullError::Policy("no IEC 61850 TEK"));
    }
    let kek = crate::group_kek::GroupKek::from_grant(sa, kd)
        .map_err(|_| PullError::Policy("SA KEK without usable keys"))?;
    Ok(GroupKeys {
        group,
        teks,
        seq,
        kek,
    })
}

// ---------------------------------------------------------------------------------------------
// Member (initiator)

enum MState {
    Sent1 {
        ni: Vec<u8>,
        iv: [u8; 16],
    },
    Sent3 {
        ni: Vec<u8>,
        nr: Vec<u8>,
        sa: SaPayload,
        iv: [u8; 16],
    },
    Done(GroupKeys),
}

/// The member side of one GROUPKEY-PULL.
pub struct PullMember {
    mid: u32,
    group: IdPayload,
    state: MState,
}

impl PullMember {
    /// Starts a registration for `group` (ID_KEY_ID or ID_OID); returns message 1.
    pub fn start(sa: &Phase1Sa, group: IdPayload) -> Result<(PullMember, Vec<u8>), PullError> {
        let mut mid = 0;
        while mid == 0 {
            mid = rand::thread_rng().next_u32();
        }
        let ni = nonce();
        let iv = first_iv(sa, mid)?;
        let (msg, last) = send(
            sa,
            mid,
            &[],
            vec![Payload::Nonce(ni.clone()), Payload::Id(group.clone())],
            &iv,
        )?;
        Ok((
            PullMember {
                mid,
                group,
                state: MState::Sent1 { ni, iv: last },
            },
            msg,
        ))
    }

    /// Handles messages 2 and 4; returns message 3 after 2, nothing after 4.
    pub fn handle(&mut self, sa: &Phase1Sa, buf: &[u8]) -> Result<Option<Vec<u8>>, PullError> {
        match &self.state {
            MState::Sent1 { ni, iv } => {
                let o = open(sa, buf, iv)?;
                if o.header.message_id != self.mid {
                    return Err(PullError::MessageId);
                }
                let m = self.mid.to_be_bytes();
                verify(&mac(sa, &[&m, ni, &o.after_hash])?, &o.hash)?;
                let nr = o.payloads.iter().find_map(|p| {
                    if let Payload::Nonce(n) = p {
                        Some(n.clone())
                    } else {
                        None
                    }
                });
                let nr = nr.ok_or(PullError::Missing("nonce"))?;
                let gsa = o.payloads.iter().find_map(|p| {
                    if let Payload::Sa(s) = p {
                        Some(s.clone())
                    } else {
                        None
                    }
                });
                let gsa = gsa.ok_or(PullError::Missing("SA"))?;
                if !matches!(gsa.body, SaBody::Gdoi(_)) {
                    return Err(PullError::Policy("SA is not a GDOI SA"));
                }
                let (msg, last) = send(sa, self.mid, &[ni, &nr], vec![], &o.last)?;
                self.state = MState::Sent3 {
                    ni: ni.clone(),
                    nr,
                    sa: gsa,
                    iv: last,
                };
                Ok(Some(msg))
            }
            MState::Sent3 {
                ni,
                nr,
                sa: gsa,
                iv,
            } => {
                let o = open(sa, buf, iv)?;
                if o.header.message_id != self.mid {
                    return Err(PullError::MessageId);
                }
                let m = self.mid.to_be_bytes();
                verify(&mac(sa, &[&m, ni, nr, &o.after_hash])?, &o.hash)?;
                let kd = o.payloads.iter().find_map(|p| {
                    if let Payload::Kd(k) = p {
                        Some(k)
                    } else {
                        None
                    }
                });
                let kd = kd.ok_or(PullError::Missing("KD"))?;
                let seq = o.payloads.iter().find_map(|p| {
                    if let Payload::Seq(s) = p {
                        Some(*s)
                    } else {
                        None
                    }
                });
                let keys = group_keys(self.group.clone(), gsa, kd, seq)?;
                self.state = MState::Done(keys);
                Ok(None)
            }
            MState::Done(_) => Err(PullError::Unexpected {
                state: "member registered",
            }),
        }
    }

    /// The keys, once message 4 verified.
    pub fn keys(&self) -> Option<&GroupKeys> {
        if let MState::Done(k) = &self.state {
            Some(k)
        } else {
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Key server (responder)

/// The group policy and keys a key server hands one member.
#[derive(Debug, Clone)]
pub struct Grant {
    /// The GDOI SA (SA TEKs, optional SA KEK and GAP).
    pub sa: SaPayload,
    /// The keys.
    pub kd: KeyDownload,
    /// The group's push SEQ, if it has a KEK.
    pub seq: Option<u32>,
}

/// Where the key server looks up groups and authorisation.
pub trait GroupSource {
    /// The grant for `member` (its phase-1 identity) in `group`, or why not.
    fn grant(&self, member: &IdPayload, group: &IdPayload) -> Result<Grant, PullError>;

    /// The grant for the peer of `sa` in `group`: by default by its identity; a source that
    /// authorises certificates looks at `sa.peer_cert` instead.
    fn grant_for(&self, sa: &Phase1Sa, group: &IdPayload) -> Result<Grant, PullError> {
        self.grant(&sa.peer_id, group)
    }
}

/// Message IDs seen under one phase-1 SA: a GROUPKEY-PULL with a used one is a replay.
#[derive(Debug, Default)]
pub struct MessageIds {
    seen: HashSet<u32>,
}

/// Most Message IDs remembered per phase-1 SA: a member re-registers a few times per
/// phase-1 lifetime; past this the SA must be renewed.
pub const MAX_MESSAGE_IDS: usize = 4096;

enum KState {
    Sent2 {
        ni: Vec<u8>,
        nr: Vec<u8>,
        grant: Grant,
        iv: [u8; 16],
    },
    Done,
}

/// The key-server side of one GROUPKEY-PULL.
pub struct PullServer {
    mid: u32,
    group: IdPayload,
    state: KState,
}

impl PullServer {
    /// Handles message 1: checks HASH(1), the Message ID (fresh, non-zero) and the member's
    /// authorisation for the group; returns the machine and message 2.
    pub fn start(
        sa: &Phase1Sa,
        ids: &mut MessageIds,
        source: &dyn GroupSource,
        buf: &[u8],
    ) -> Result<(PullServer, Vec<u8>), PullError> {
        let h = Header::parse(buf)?;
        let mid = h.message_id;
        if mid == 0 || ids.seen.contains(&mid) || ids.seen.len() >= MAX_MESSAGE_IDS {
            return Err(PullError::MessageId);
        }
        let o = open(sa, buf, &first_iv(sa, mid)?)?;
        let m = mid.to_be_bytes();
        verify(&mac(sa, &[&m, &o.after_hash])?, &o.hash)?;
        // Authenticated by HASH(1), so the diagnosis is the peer's: an SA payload means a
        // Quick Mode (its HASH(1) is computed the same way), not a registration.
        if let Some(doi) = o.payloads.iter().find_map(|p| match p {
            Payload::Sa(s) => Some(s.doi),
            _ => None,
        }) {
            return Err(PullError::QuickMode { doi });
        }
        let ni = o.payloads.iter().find_map(|p| {
            if let Payload::Nonce(n) = p {
                Some(n.clone())
            } else {
                None
            }
        });
        let ni = ni.ok_or(PullError::Missing("nonce"))?;
        let group = o.payloads.iter().find_map(|p| {
            if let Payload::Id(i) = p {
                Some(i)
            } else {
                None
            }
        });
        let group = group.ok_or(PullError::Missing("ID"))?;
        let grant = source.grant_for(sa, group)?;
        let nr = nonce();
        let (msg, last) = send(
            sa,
            mid,
            &[&ni],
            vec![Payload::Nonce(nr.clone()), Payload::Sa(grant.sa.clone())],
            &o.last,
        )?;
        ids.seen.insert(mid);
        Ok((
            PullServer {
                mid,
                group: group.clone(),
                state: KState::Sent2 {
                    ni,
                    nr,
                    grant,
                    iv: last,
                },
            },
            msg,
        ))
    }

    /// The group the member asked for (its ID data).
    pub fn group(&self) -> &[u8] {
        &self.group.data
    }

    /// The ID payload the member named its group with (ID_KEY_ID or ID_OID).
    pub fn group_id(&self) -> &IdPayload {
        &self.group
    }

    /// Handles message 3; returns message 4 with the keys.
    pub fn handle(&mut self, sa: &Phase1Sa, buf: &[u8]) -> Result<Vec<u8>, PullError> {
        let KState::Sent2 { ni, nr, grant, iv } = &self.state else {
            return Err(PullError::Unexpected {
                state: "key server sent keys",
            });
        };
        let o = open(sa, buf, iv)?;
        if o.header.message_id != self.mid {
            return Err(PullError::MessageId);
        }
        let m = self.mid.to_be_bytes();
        verify(&mac(sa, &[&m, ni, nr, &o.after_hash])?, &o.hash)?;
        let mut rest = Vec::new();
        if let Some(s) = grant.seq {
            rest.push(Payload::Seq(s));
        }
        rest.push(Payload::Kd(grant.kd.clone()));
        let (msg, _) = send(sa, self.mid, &[ni, nr], rest, &o.last)?;
        self.state = KState::Done;
        Ok(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cookie::CookieJar;
    use crate::main_mode::ResponderConfig;
    use crate::{Initiator, Responder, Suite};
    use gander_wire::isakmp::payload::id_type;
    use gander_wire::isakmp::sa::doi;
    use gander_wire::isakmp::{Proposal, Transform};

    fn id(id_type: u8, data: &[u8]) -> IdPayload {
        IdPayload {
            id_type,
            protocol: 0,
            port: 0,
            data: data.to_vec(),
        }
    }

    /// The key server's side of a phase-1 SA made in memory.
    fn key_server_sa() -> Phase1Sa {
        let suite = Suite::all(3600)[1];
        let jar = CookieJar::new();
        let (mut i, m1) =
            Initiator::start(b"psk", id(id_type::KEY_ID, b"swan"), vec![suite]).unwrap();
        let cfg = ResponderConfig {
            psk: Zeroizing::new(b"psk".to_vec()),
            suites: vec![suite],
            id: id(id_type::KEY_ID, b"kdc"),
            expect_peer: None,
            cert: None,
        };
        let (mut r, m2) = Responder::start(&jar, &[1, 2, 3, 4], &m1, cfg).unwrap();
        let m3 = i.handle(&m2).unwrap().unwrap();
        let m4 = r.handle(&jar, &m3).unwrap();
        let m5 = i.handle(&m4).unwrap().unwrap();
        let m6 = r.handle(&jar, &m5).unwrap();
        i.handle(&m6).unwrap();
        r.into_sa().unwrap()
    }

    struct NoGroups;
    impl GroupSource for NoGroups {
        fn grant(&self, _: &IdPayload, _: &IdPayload) -> Result<Grant, PullError> {
            Err(PullError::UnknownGroup)
        }
    }

    /// RFC 2409 5.5 with RFC 6407 3.2: exchange type 32 carries both. A Quick Mode's first
    /// message (HASH(1), SA of the IPsec DOI with an ESP proposal, Ni, IDci, IDcr: what
    /// strongSwan 5.9.8 sends after phase 1) authenticates like a GROUPKEY-PULL message 1, and
    /// is refused as what it is, with DOI-NOT-SUPPORTED, not taken for a registration of an
    /// unknown group (whose ID would be strongSwan's IDci). Its Message ID is not consumed.
    #[test]
    fn quick_mode_is_refused_as_such_with_doi_not_supported() {
        let sa = key_server_sa();
        let esp = SaPayload {
            doi: doi::IPSEC,
            situation: 1, // SIT_IDENTITY_ONLY (RFC 2407 4.2)
            body: SaBody::Proposals(vec![Proposal {
                number: 1,
                protocol: 3,
                spi: vec![0xc1, 0x2e, 0x00, 0x07],
                transforms: vec![Transform {
                    number: 1,
                    id: 12,
                    attributes: vec![Attribute::basic(5, 12), Attribute::basic(6, 128)],
                }],
            }]),
        };
        let mid = 0x5851_2a30;
        let qm1 = |sa_payload: SaPayload| {
            send(
                &sa,
                mid,
                &[],
                vec![
                    Payload::Sa(sa_payload),
                    Payload::Nonce(vec![7; 32]),
                    Payload::Id(id(id_type::IPV4_ADDR, &[10, 79, 0, 1])),
                    Payload::Id(id(id_type::IPV4_ADDR, &[10, 79, 0, 2])),
                ],
                &first_iv(&sa, mid).unwrap(),
            )
            .unwrap()
            .0
        };
        let mut ids = MessageIds::default();
        let e = PullServer::start(&sa, &mut ids, &NoGroups, &qm1(esp)).err();
        assert_eq!(e, Some(PullError::QuickMode { doi: doi::IPSEC }));
        assert_eq!(e.map(|e| e.notify()), Some(notify_type::DOI_NOT_SUPPORTED));
        assert!(
            ids.seen.is_empty(),
            "a refused message consumes no Message ID"
        );
        // An SA of the GDOI itself has no place in message 1 either (RFC 6407 3.2).
        assert_eq!(
            PullError::QuickMode { doi: doi::GDOI }.notify(),
            notify_type::INVALID_PAYLOAD_TYPE
        );
    }
}
