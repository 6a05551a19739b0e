//! The key server's key schedule, sans-I/O: given the policy, the state and the time, which
//! keys exist, which GROUPKEY-PUSH messages are due, and what a registering member gets.
//! The UDP loop (`net::kdc`) signs, encrypts and sends what this plans; tests drive it with a
//! clock of their own.
//!
//! Per group (times in seconds since the epoch, docs/gdoi.md "Key schedule"):
//!
//! * each TEK is active from `activates_at` to `expires_at = activates_at + lifetime` and is
//!   withdrawn (RFC 6407 4.1 Delete payload) at `delete_at = expires_at + overlap` (SA_KDA);
//! * the next TEK is pushed `lead = max(activation_delay, 1)` seconds before the current one
//!   expires and activates when it expires, so every member holds current and next during the
//!   lead and both old and new during the overlap: publishers switch at the activation time,
//!   subscribers accept either;
//! * a member that registers gets the KEK (RFC 6407 5.3, 5.6.2) and every TEK not yet withdrawn,
//!   each with SA_ATD, lifetime and SA_KDA relative to the moment of the grant, so its key store
//!   ends up with the same windows as the key server's.
//!
//! Revocation (RFC 6407 1.1 forward access control; 4 GROUPKEY-PUSH; 3 GROUPKEY-PULL): a push
//! under a KEK the revoked member holds cannot exclude it, and gander implements no LKH tree
//! (RFC 6407 5.5.3). So when an identity leaves a group's policy the key server
//! 1. makes a new KEK and a new TEK that activates `REVOCATION_SWITCH_SECS` later, cuts every
//!    older TEK's lifetime to that instant and withdraws it `REVOCATION_GRACE_SECS` after it;
//! 2. pushes under the old KEK a Delete of that KEK (protocol PROTO_ISAKMP, the 16-octet KEK
//!    SPI as ISAKMP cookies, RFC 2408 3.15) and the old TEKs with their cut lifetimes, nothing
//!    new: every member, the revoked one included, learns that the KEK is gone and when the old
//!    TEKs end, and must register again (GROUPKEY-PULL under its own phase-1 SA);
//! 3. refuses the revoked identity at phase 1 and at registration, so only the remaining members
//!    get the new KEK and TEK; the Delete of the old TEKs then goes out under the new KEK.
//!
//! The revoked member ends with the old TEKs, which every other member withdraws; it cannot read
//! the new KEK, the new TEK, or any push that follows.

use crate::group_kek::{kek_packet, sa_kek, KdcSigner};
use crate::kdc_state::{GroupState, KdcState, KeyState, StateError};
use crate::net::kdc::{GroupPolicy, KdcPolicy};
use crate::pull::{Grant, PullError};
use crate::push::Kek;
use gander_wire::isakmp::gdoi::{kd_type, tek_protocol};
use gander_wire::isakmp::iec61850::encode_oid;
use gander_wire::isakmp::sa::{doi, PROTO_ISAKMP};
use gander_wire::isakmp::{
    DeletePayload, KeyDownload, KeyPacket, Payload, SaAttrPayload, SaBody, SaPayload, SaTek,
};
use rand::RngCore;
use zeroize::Zeroizing;

/// Shortest time between pushing a key and its activation: members need it before publishers
/// use it.
pub const MIN_LEAD_SECS: u64 = 1;
/// After a revocation, the new TEK activates this much later: the remaining members register
/// again (a round trip of four GROUPKEY-PULL messages) before publishers switch.
pub const REVOCATION_SWITCH_SECS: u64 = 2;
/// After a revocation, the old TEKs are withdrawn this long after the new TEK activates
/// (frames protected just before the switch still verify), however long the group's overlap.
pub const REVOCATION_GRACE_SECS: u64 = 2;
/// KEK key length (AES-256).
pub const KEK_KEY_LEN: usize = 32;

/// What a planned push does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushWhat {
    /// Announces a TEK (the next key, or a pending one again after a restart).
    Rekey {
        /// Its Key ID.
        key_id: u32,
        /// When it activates.
        activates_at: u64,
    },
    /// Withdraws TEKs.
    Delete {
        /// Their Key IDs.
        key_ids: Vec<u32>,
    },
    /// Withdraws the KEK after a revocation: members register again.
    KekWithdrawn,
}

/// A GROUPKEY-PUSH the key server must sign, encrypt under `kek` and send to the group's
/// members. Its SEQ is already recorded in the state.
#[derive(Debug, Clone)]
pub struct PlannedPush {
    /// The group id.
    pub group: String,
    /// The KEK it goes under.
    pub kek: Kek,
    /// Its SEQ.
    pub seq: u32,
    /// What it does (events, counters).
    pub what: PushWhat,
    /// The payloads between SEQ and SIG.
    pub payloads: Vec<Payload>,
}

/// A revocation that took place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revocation {
    /// The group.
    pub group: String,
    /// The identities removed from it.
    pub identities: Vec<String>,
    /// The new TEK's Key ID.
    pub new_key_id: u32,
}

fn hex_key(s: &str, len: usize) -> Result<Zeroizing<Vec<u8>>, StateError> {
    let k = Zeroizing::new(hex::decode(s).map_err(|_| StateError::Bad("key is not hex"))?);
    if k.len() != len {
        return Err(StateError::Bad("key length does not fit the algorithm"));
    }
    Ok(k)
}

fn random(len: usize) -> Zeroizing<Vec<u8>> {
    let mut k = Zeroizing::new(vec![0u8; len]);
    rand::thread_rng().fill_bytes(&mut k);
    k
}

/// The TEK key length of an IEC 62351-6 algorithm pair (octets).
pub fn tek_key_len(mac: u16, enc: u16) -> usize {
    match (mac, enc) {
        (_, 2) => 32,
        (_, 1) => 16,
        (4 | 5, _) => 16,
        _ => 32,
    }
}

/// The group's KEK from its state.
pub fn group_kek(s: &GroupState) -> Result<Kek, StateError> {
    let spi: [u8; 16] = hex::decode(&s.kek_spi_hex)
        .ok()
        .and_then(|v| v.try_into().ok())
        .ok_or(StateError::Bad("kek_spi_hex is not 16 octets"))?;
    Ok(Kek {
        spi,
        key: hex_key(&s.kek_key_hex, KEK_KEY_LEN)?,
    })
}

fn new_kek(s: &mut GroupState) {
    let mut spi = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut spi);
    s.kek_spi_hex = hex::encode(spi);
    s.kek_key_hex = hex::encode(&*random(KEK_KEY_LEN));
}

fn lead(g: &GroupPolicy) -> u64 {
    g.activation_delay_secs.max(MIN_LEAD_SECS)
}

fn group_name(g: &GroupPolicy) -> String {
    String::from_utf8_lossy(&g.id).into_owned()
}

/// The identities authorised for a group by the policy, sorted.
pub fn authorised(policy: &KdcPolicy, g: &GroupPolicy) -> Vec<String> {
    let mut v: Vec<String> = policy
        .members
        .iter()
        .filter(|m| m.groups.contains(&g.id))
        .map(|m| String::from_utf8_lossy(&m.identity).into_owned())
        .collect();
    v.sort();
    v
}

fn new_key(g: &GroupPolicy, st: &mut KdcState, activates_at: u64) -> Result<KeyState, StateError> {
    let key_id = st.take_key_id()?;
    let expires_at = activates_at.saturating_add(g.lifetime_secs);
    Ok(KeyState {
        key_id,
        key_hex: hex::encode(&*random(tek_key_len(g.mac_code, g.enc_code))),
        activates_at,
        expires_at,
        delete_at: expires_at.saturating_add(g.overlap_secs),
    })
}

/// Creates a group's state on its first start: a KEK and a first TEK active now (the policy's
/// seed key if it carries one whose Key ID was never handed out).
fn ensure_group(g: &GroupPolicy, st: &mut KdcState, now: u64) -> Result<bool, StateError> {
    let name = group_name(g);
    let exists = st.groups.get(&name).is_some_and(|s| !s.keys.is_empty());
    if exists {
        return Ok(false);
    }
    let mut gs = st.groups.remove(&name).unwrap_or_default();
    if group_kek(&gs).is_err() {
        new_kek(&mut gs);
    }
    let len = tek_key_len(g.mac_code, g.enc_code);
    let key = if g.key.len() == len && g.key_id != 0 && g.key_id >= st.next_key_id {
        st.next_key_id = g
            .key_id
            .checked_add(1)
            .ok_or(StateError::Exhausted("Key IDs"))?;
        let expires_at = now.saturating_add(g.lifetime_secs);
        KeyState {
            key_id: g.key_id,
            key_hex: hex::encode(&*g.key),
            activates_at: now,
            expires_at,
            delete_at: expires_at.saturating_add(g.overlap_secs),
        }
    } else {
        new_key(g, st, now)?
    };
    gs.keys = vec![key];
    st.groups.insert(name, gs);
    Ok(true)
}

fn next_seq(gs: &mut GroupState) -> Result<u32, StateError> {
    gs.seq = gs.seq.checked_add(1).ok_or(StateError::Exhausted("SEQ"))?;
    Ok(gs.seq)
}

/// The SA TEK and key packet of `k`, with SA_ATD, lifetime and SA_KDA relative to `now` so that
/// a member installing it at `now` gets the window `[activates_at, delete_at]`
/// (`install::key_entry`).
pub fn tek_payloads(
    g: &GroupPolicy,
    k: &KeyState,
    now: u64,
) -> Result<(SaAttrPayload, KeyPacket), StateError> {
    let start = k.activates_at.max(now);
    let end = k.expires_at.max(start);
    let spi = k.key_id.to_be_bytes().to_vec();
    let oid = encode_oid(&g.oid).map_err(|_| StateError::Bad("group OID"))?;
    let tek = crate::tek_policy::TekPolicy {
        oid: &oid,
        traffic: g.traffic,
        key_id: k.key_id,
        mac_code: g.mac_code,
        enc_code: g.enc_code,
        key_len: tek_key_len(g.mac_code, g.enc_code),
        lifetime_secs: end - start,
        activation_delay_secs: start - now,
        overlap_secs: k.delete_at.saturating_sub(end),
    }
    .sa_tek()
    .map_err(|_| StateError::Bad("group algorithms have no RFC 8052 number"))?;
    let key = hex_key(&k.key_hex, tek_key_len(g.mac_code, g.enc_code))?;
    Ok((
        SaAttrPayload::Tek(SaTek::Iec61850(tek)),
        KeyPacket {
            kd_type: kd_type::TEK,
            spi,
            attributes: vec![crate::tek_keys::key_attribute(g.mac_code, g.enc_code, &key)
                .map_err(|_| StateError::Bad("TEK salt"))?],
        },
    ))
}

fn gdoi_sa(attrs: Vec<SaAttrPayload>) -> SaPayload {
    SaPayload {
        doi: doi::GDOI,
        situation: 0,
        body: SaBody::Gdoi(attrs),
    }
}

fn rekey_push(
    g: &GroupPolicy,
    gs: &mut GroupState,
    k: &KeyState,
    now: u64,
) -> Result<PlannedPush, StateError> {
    let (sa, pkt) = tek_payloads(g, k, now)?;
    Ok(PlannedPush {
        group: group_name(g),
        kek: group_kek(gs)?,
        seq: next_seq(gs)?,
        what: PushWhat::Rekey {
            key_id: k.key_id,
            activates_at: k.activates_at,
        },
        payloads: vec![
            Payload::Sa(gdoi_sa(vec![sa])),
            Payload::Kd(KeyDownload { packets: vec![pkt] }),
        ],
    })
}

/// Everything due at `now`: first TEKs of new groups, withdrawals of keys past their
/// `delete_at`, and the next TEK `lead` seconds before the newest one expires. Changes the
/// state; the caller saves it before sending what is returned.
pub fn tick(
    policy: &KdcPolicy,
    st: &mut KdcState,
    now: u64,
) -> Result<Vec<PlannedPush>, StateError> {
    let mut out = Vec::new();
    for g in &policy.groups {
        ensure_group(g, st, now)?;
        let name = group_name(g);
        let Some(mut gs) = st.groups.remove(&name) else {
            continue;
        };
        let r = tick_group(g, st, &mut gs, now, &mut out);
        st.groups.insert(name, gs);
        r?;
    }
    Ok(out)
}

fn tick_group(
    g: &GroupPolicy,
    st: &mut KdcState,
    gs: &mut GroupState,
    now: u64,
    out: &mut Vec<PlannedPush>,
) -> Result<(), StateError> {
    // Withdraw keys past their delete time, but never the newest one.
    let newest = gs.keys.iter().map(|k| k.activates_at).max().unwrap_or(0);
    let gone: Vec<u32> = gs
        .keys
        .iter()
        .filter(|k| k.delete_at <= now && k.activates_at < newest)
        .map(|k| k.key_id)
        .collect();
    if !gone.is_empty() {
        gs.keys.retain(|k| !gone.contains(&k.key_id));
        out.push(PlannedPush {
            group: group_name(g),
            kek: group_kek(gs)?,
            seq: next_seq(gs)?,
            what: PushWhat::Delete {
                key_ids: gone.clone(),
            },
            payloads: vec![Payload::Delete(DeletePayload {
                doi: doi::GDOI,
                protocol: tek_protocol::IEC61850,
                spi_size: 4,
                spis: gone.iter().map(|id| id.to_be_bytes().to_vec()).collect(),
            })],
        });
    }
    // The next key, `lead` before the newest expires.
    let Some(last) = gs.keys.iter().max_by_key(|k| k.activates_at).cloned() else {
        return Ok(());
    };
    if now.saturating_add(lead(g)) >= last.expires_at {
        let k = new_key(g, st, last.expires_at.max(now))?;
        gs.keys.push(k.clone());
        out.push(rekey_push(g, gs, &k, now)?);
    }
    Ok(())
}

/// At start: pushes again, under a fresh SEQ, every TEK that is not active yet (its first push
/// may have been lost in a crash between the state write and the send).
pub fn announce_pending(
    policy: &KdcPolicy,
    st: &mut KdcState,
    now: u64,
) -> Result<Vec<PlannedPush>, StateError> {
    let mut out = Vec::new();
    for g in &policy.groups {
        let name = group_name(g);
        let Some(gs) = st.groups.get_mut(&name) else {
            continue;
        };
        let pending: Vec<KeyState> = gs
            .keys
            .iter()
            .filter(|k| k.activates_at > now)
            .cloned()
            .collect();
        for k in pending {
            out.push(rekey_push(g, gs, &k, now)?);
        }
    }
    Ok(out)
}

/// Compares each group's authorised identities with those of the state and revokes the ones
/// that left (module doc): a new KEK and TEK, the old TEKs cut short, and a push under the old
/// KEK withdrawing it. The state then records the policy's identities.
pub fn revoke_removed(
    policy: &KdcPolicy,
    st: &mut KdcState,
    now: u64,
) -> Result<(Vec<PlannedPush>, Vec<Revocation>), StateError> {
    let mut pushes = Vec::new();
    let mut revoked = Vec::new();
    for g in &policy.groups {
        ensure_group(g, st, now)?;
        let name = group_name(g);
        let now_ids = authorised(policy, g);
        let Some(mut gs) = st.groups.remove(&name) else {
            continue;
        };
        let removed: Vec<String> = gs
            .members
            .iter()
            .filter(|m| !now_ids.contains(m))
            .cloned()
            .collect();
        gs.members = now_ids;
        if removed.is_empty() {
            st.groups.insert(name, gs);
            continue;
        }
        let r = (|| -> Result<(PlannedPush, u32), StateError> {
            let old_kek = group_kek(&gs)?;
            let switch = now.saturating_add(REVOCATION_SWITCH_SECS.max(lead(g)));
            for k in &mut gs.keys {
                k.expires_at = k.expires_at.min(switch);
                k.delete_at = k
                    .delete_at
                    .min(switch.saturating_add(REVOCATION_GRACE_SECS));
            }
            // The old TEKs again with their cut windows: every holder of the old KEK, the
            // revoked member included, learns they end at `switch + grace`.
            let mut sa = Vec::new();
            let mut packets = Vec::new();
            for k in &gs.keys {
                let (a, p) = tek_payloads(g, k, now)?;
                sa.push(a);
                packets.push(p);
            }
            let k = new_key(g, st, switch)?;
            let new_id = k.key_id;
            gs.keys.push(k);
            let mut payloads = vec![Payload::Delete(DeletePayload {
                doi: doi::GDOI,
                protocol: PROTO_ISAKMP,
                spi_size: 16,
                spis: vec![old_kek.spi.to_vec()],
            })];
            if !sa.is_empty() {
                payloads.push(Payload::Sa(gdoi_sa(sa)));
                payloads.push(Payload::Kd(KeyDownload { packets }));
            }
            let push = PlannedPush {
                group: name.clone(),
                kek: old_kek.clone(),
                seq: next_seq(&mut gs)?,
                what: PushWhat::KekWithdrawn,
                payloads,
            };
            new_kek(&mut gs);
            Ok((push, new_id))
        })();
        st.groups.insert(name.clone(), gs);
        let (push, new_key_id) = r?;
        pushes.push(push);
        revoked.push(Revocation {
            group: name,
            identities: removed,
            new_key_id,
        });
    }
    Ok((pushes, revoked))
}

/// Why a grant cannot be made (besides the policy's refusals, which are [`PullError`]s).
fn state_to_pull(e: StateError) -> PullError {
    match e {
        StateError::Bad(w) | StateError::Exhausted(w) => PullError::Policy(w),
        _ => PullError::Policy("key server state"),
    }
}

/// The grant for a registration at `now`: the SA with the SA KEK and a TEK per key not yet
/// withdrawn, the KD with the KEK packet and each TEK's key, and the group's last SEQ.
pub fn grant(
    g: &GroupPolicy,
    st: &KdcState,
    signer: &KdcSigner,
    src: std::net::Ipv4Addr,
    now: u64,
) -> Result<Grant, PullError> {
    let gs = st
        .groups
        .get(&group_name(g))
        .ok_or(PullError::Policy("group has no keys yet"))?;
    let kek = group_kek(gs).map_err(state_to_pull)?;
    let mut attrs = vec![sa_kek(&kek, src, &signer.key, None)];
    let mut packets = vec![kek_packet(&kek, signer)];
    for k in gs.keys.iter().filter(|k| k.delete_at > now) {
        let (sa, pkt) = tek_payloads(g, k, now).map_err(state_to_pull)?;
        attrs.push(sa);
        packets.push(pkt);
    }
    if packets.len() < 2 {
        return Err(PullError::Policy("group has no keys yet"));
    }
    Ok(Grant {
        sa: gdoi_sa(attrs),
        kd: KeyDownload { packets },
        seq: Some(gs.seq),
    })
}
