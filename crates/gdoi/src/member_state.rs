//! The group member's long-lived state, sans-I/O: which keys it holds for its group, when it
//! must register again, which key server it talks to, what happens when none answers, and the
//! counters and events an operator needs (IEC 62351-9 group member; RFC 6407 3 and 4).
//!
//! The I/O loop (`net::member::Runner`) feeds it what happened (a registration's keys, a
//! received GROUPKEY-PUSH datagram, a key server that did not answer, the clock) and reads back
//! the keys to install and the time of the next registration. Nothing here touches a socket or
//! reads the clock, so every rule below is unit-tested with chosen times.
//!
//! Key lifetimes (RFC 8052's TEK attributes as `docs/gdoi.md` encodes them): a key received at
//! `t` becomes valid at `t + SA_ATD`, is the current key for `lifetime` seconds, and may still
//! be used `SA_KDA` seconds after that, the overlap with its successor. The member registers
//! again [`MemberTiming::renew_before`] seconds before the lifetime of its newest key ends, in
//! case no push brought a successor.
//!
//! When no key server answers, [`FailPolicy`] decides, and never silently:
//! * `KeepUntilExpiry`: the current key stays until the end of its validity (lifetime and
//!   overlap), each failed attempt is an event; when it expires there is no key, and an event.
//! * `FailClosed`: the overlap exists only for a key that has a successor (SA_KDA is the overlap
//!   of old and new key); without a successor the key is withdrawn when its lifetime ends.
//!
//! Either way a frame is never protected or verified with a key past its end.

use crate::install::{key_entry, InstallError};
use crate::pull::{group_keys, GroupKeys, TekKey};
use crate::push::{PushError, PushReceiver, Rekey};
use gander_sec::{CryptoProvider, KeyEntry};
use gander_wire::isakmp::{IdPayload, Payload};

/// What to do when no key server answers (docs/gdoi.md, "Member").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailPolicy {
    /// Keep the current key through its whole validity, with an event at each failed attempt.
    #[default]
    KeepUntilExpiry,
    /// Withdraw a key that has no successor at the end of its lifetime (no overlap).
    FailClosed,
}

impl FailPolicy {
    /// The configuration word.
    pub fn name(self) -> &'static str {
        match self {
            FailPolicy::KeepUntilExpiry => "keep-until-expiry",
            FailPolicy::FailClosed => "fail-closed",
        }
    }
}

/// Timers of a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberTiming {
    /// Register again this many seconds before the newest key's lifetime ends.
    pub renew_before: u64,
    /// After a failed round over every key server, try again after this many seconds.
    pub retry_after: u64,
}

impl Default for MemberTiming {
    fn default() -> Self {
        MemberTiming {
            renew_before: 30,
            retry_after: 5,
        }
    }
}

/// One key the member holds.
#[derive(Debug, Clone)]
pub struct HeldKey {
    /// The TEK as received.
    pub tek: TekKey,
    /// When it was received (Unix seconds).
    pub received: u64,
}

impl HeldKey {
    /// Start of validity: receipt + SA_ATD.
    pub fn not_before(&self) -> u64 {
        self.received
            .saturating_add(self.tek.activation_delay_secs.unwrap_or(0))
    }
    /// End of the lifetime proper (without the overlap); `None`: unlimited.
    pub fn lifetime_end(&self) -> Option<u64> {
        self.tek
            .lifetime_secs
            .map(|l| self.not_before().saturating_add(l))
    }
    /// End of validity with the overlap.
    pub fn overlap_end(&self) -> Option<u64> {
        self.lifetime_end()
            .map(|e| e.saturating_add(self.tek.overlap_secs.unwrap_or(0)))
    }
}

/// Something an operator must hear about (one log line or RFC 5424 event each).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberEvent {
    /// A registration gave keys.
    Registered {
        /// Index of the key server in the configuration.
        server: usize,
        /// Key IDs received.
        key_ids: Vec<u32>,
    },
    /// A key server did not answer (or refused); the next one is tried.
    ServerFailed {
        /// Index of the key server.
        server: usize,
        /// Why.
        reason: String,
    },
    /// The member moved to another key server.
    Failover {
        /// From.
        from: usize,
        /// To.
        to: usize,
    },
    /// No key server answered; the policy holds the current key (or has none).
    NoServer {
        /// The policy in force.
        policy: FailPolicy,
        /// Key IDs still held.
        holding: Vec<u32>,
    },
    /// A push brought new keys.
    Rekeyed {
        /// Its SEQ.
        seq: u32,
        /// Key IDs received.
        key_ids: Vec<u32>,
    },
    /// A push withdrew keys (Delete).
    Deleted {
        /// Key IDs withdrawn.
        key_ids: Vec<u32>,
    },
    /// A push was refused (nothing changed).
    PushRefused {
        /// Why.
        reason: String,
    },
    /// A key reached its end and was removed.
    Expired {
        /// The key.
        key_id: u32,
        /// Whether it ended early because it had no successor (`FailClosed`).
        fail_closed: bool,
    },
}

/// Counters (OpenMetrics in the gateway).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemberCounters {
    /// Successful registrations.
    pub registrations: u64,
    /// Registrations that failed (per key server tried).
    pub registration_failures: u64,
    /// Moves to another key server.
    pub failovers: u64,
    /// New keys received after the first (by registration or push).
    pub rekeys: u64,
    /// Pushes accepted.
    pub pushes: u64,
    /// Pushes refused.
    pub pushes_refused: u64,
    /// Keys removed at their end.
    pub expired: u64,
}

/// Why a push could not be applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemberStateError {
    /// No KEK yet: pushes cannot be authenticated.
    #[error("no KEK from the registration: pushes cannot be authenticated")]
    NoKek,
    /// The push did not pass its checks.
    #[error("push: {0}")]
    Push(#[from] PushError),
    /// The rekey's policy or keys are unusable.
    #[error("rekey: {0}")]
    Rekey(#[from] crate::pull::PullError),
    /// A key could not become a key-store entry.
    #[error("install: {0}")]
    Install(#[from] InstallError),
}

/// A member of one group.
pub struct MemberState {
    group: IdPayload,
    servers: usize,
    server: usize,
    policy: FailPolicy,
    timing: MemberTiming,
    keys: Vec<HeldKey>,
    push: Option<PushReceiver>,
    next_attempt: u64,
    retry_at: Option<u64>,
    failed_in_round: usize,
    counters: MemberCounters,
    events: Vec<MemberEvent>,
    ever_keyed: bool,
}

impl MemberState {
    /// A member of `group` with `servers` key servers (tried in order, the first preferred).
    pub fn new(group: IdPayload, servers: usize, policy: FailPolicy, timing: MemberTiming) -> Self {
        MemberState {
            group,
            servers: servers.max(1),
            server: 0,
            policy,
            timing,
            keys: Vec::new(),
            push: None,
            next_attempt: 0,
            retry_at: None,
            failed_in_round: 0,
            counters: MemberCounters::default(),
            events: Vec::new(),
            ever_keyed: false,
        }
    }

    /// The group.
    pub fn group(&self) -> &IdPayload {
        &self.group
    }

    /// The key server to register with now (index into the configured list).
    pub fn server(&self) -> usize {
        self.server
    }

    /// The counters.
    pub fn counters(&self) -> MemberCounters {
        self.counters
    }

    /// The keys held.
    pub fn keys(&self) -> &[HeldKey] {
        &self.keys
    }

    /// Takes the events since the last call.
    pub fn take_events(&mut self) -> Vec<MemberEvent> {
        std::mem::take(&mut self.events)
    }

    /// Trusts pushes under `receiver` (KEK and the key server's signature key, from the
    /// registration: RFC 6407 3.2 hands out the SA KEK and the KEK's keys in the KD).
    pub fn set_push_receiver(&mut self, receiver: PushReceiver) {
        self.push = Some(receiver);
    }

    /// Whether pushes can be received.
    pub fn has_push_receiver(&self) -> bool {
        self.push.is_some()
    }

    /// Seconds since the newest key was received (`None` before the first).
    pub fn key_age(&self, now: u64) -> Option<u64> {
        self.keys
            .iter()
            .map(|k| k.received)
            .max()
            .map(|r| now.saturating_sub(r))
    }

    /// When the member must register next (Unix seconds): at once before any key; otherwise
    /// `renew_before` ahead of the end of the newest key's lifetime (not sooner than
    /// `retry_after` after the last registration); after a round in which no key server
    /// answered, `retry_after` later.
    pub fn next_registration(&self) -> u64 {
        let renew = self
            .keys
            .iter()
            .filter_map(HeldKey::lifetime_end)
            .max()
            .map(|e| e.saturating_sub(self.timing.renew_before));
        if let Some(r) = self.retry_at {
            return r;
        }
        match (self.keys.is_empty(), renew) {
            (true, _) => self.next_attempt,
            // A key server that hands out the same key again must not be asked in a loop.
            (false, Some(r)) => r.max(self.next_attempt),
            (false, None) => u64::MAX,
        }
    }

    /// Whether a registration is due at `now`.
    pub fn registration_due(&self, now: u64) -> bool {
        now >= self.next_registration()
    }

    fn install(&mut self, teks: &[TekKey], now: u64) -> Vec<u32> {
        let mut ids = Vec::new();
        for t in teks {
            ids.push(t.key_id);
            if let Some(k) = self.keys.iter_mut().find(|k| k.tek.key_id == t.key_id) {
                // The same key again (a registration during its lifetime): keep the original
                // receipt time so its window does not move; take updated material if any.
                let received = k.received;
                *k = HeldKey {
                    tek: t.clone(),
                    received,
                };
                continue;
            }
            if self.ever_keyed {
                self.counters.rekeys += 1;
            }
            self.keys.push(HeldKey {
                tek: t.clone(),
                received: now,
            });
        }
        self.ever_keyed = true;
        ids
    }

    /// A registration with the current key server gave `keys` at `now`.
    pub fn on_registered(&mut self, keys: &GroupKeys, now: u64) {
        let ids = self.install(&keys.teks, now);
        self.counters.registrations += 1;
        self.failed_in_round = 0;
        self.retry_at = None;
        self.next_attempt = now.saturating_add(self.timing.retry_after);
        self.events.push(MemberEvent::Registered {
            server: self.server,
            key_ids: ids,
        });
        self.expire(now);
    }

    /// The current key server did not answer or refused (`reason`) at `now`: count it, move
    /// to the next server, and after a whole round without an answer apply the policy and wait
    /// `retry_after`.
    pub fn on_server_failed(&mut self, reason: &str, now: u64) {
        self.counters.registration_failures += 1;
        self.events.push(MemberEvent::ServerFailed {
            server: self.server,
            reason: reason.to_string(),
        });
        self.failed_in_round += 1;
        if self.servers > 1 {
            let from = self.server;
            self.server = (self.server + 1) % self.servers;
            self.counters.failovers += 1;
            self.events.push(MemberEvent::Failover {
                from,
                to: self.server,
            });
        }
        if self.failed_in_round >= self.servers {
            self.failed_in_round = 0;
            self.retry_at = Some(now.saturating_add(self.timing.retry_after));
            self.expire(now);
            self.events.push(MemberEvent::NoServer {
                policy: self.policy,
                holding: self.keys.iter().map(|k| k.tek.key_id).collect(),
            });
        }
    }

    /// A datagram arrived on the push socket at `now`: applied only if the KEK opens it, the
    /// key server's signature verifies and its SEQ is new (`push::PushReceiver`); anything
    /// else changes nothing.
    pub fn on_push(&mut self, datagram: &[u8], now: u64) -> Result<Vec<u32>, MemberStateError> {
        let r = match self.push.as_mut() {
            None => Err(MemberStateError::NoKek),
            Some(rx) => rx.receive(datagram).map_err(MemberStateError::from),
        };
        let rekey = match r {
            Ok(k) => k,
            Err(e) => {
                self.counters.pushes_refused += 1;
                self.events.push(MemberEvent::PushRefused {
                    reason: e.to_string(),
                });
                return Err(e);
            }
        };
        self.apply_rekey(rekey, now)
    }

    fn apply_rekey(&mut self, rekey: Rekey, now: u64) -> Result<Vec<u32>, MemberStateError> {
        // Check the whole rekey before changing anything.
        let mut deleted = Vec::new();
        let mut sa = None;
        let mut kd = None;
        for p in &rekey.payloads {
            match p {
                Payload::Delete(d) => {
                    for spi in &d.spis {
                        if let Ok(b) = <[u8; 4]>::try_from(spi.as_slice()) {
                            deleted.push(u32::from_be_bytes(b));
                        }
                    }
                }
                Payload::Sa(s) => sa = Some(s),
                Payload::Kd(k) => kd = Some(k),
                _ => {}
            }
        }
        let new = match (sa, kd) {
            (Some(s), Some(k)) => Some(group_keys(self.group.clone(), s, k, Some(rekey.seq))?),
            _ => None,
        };
        self.counters.pushes += 1;
        if !deleted.is_empty() {
            self.keys.retain(|k| !deleted.contains(&k.tek.key_id));
            self.events.push(MemberEvent::Deleted {
                key_ids: deleted.clone(),
            });
        }
        let ids = match new {
            Some(g) => self.install(&g.teks, now),
            None => Vec::new(),
        };
        self.events.push(MemberEvent::Rekeyed {
            seq: rekey.seq,
            key_ids: ids.clone(),
        });
        self.expire(now);
        Ok(ids)
    }

    /// The end of `k` under the policy: the overlap counts only when a newer key exists under
    /// `FailClosed`.
    fn end_of(&self, k: &HeldKey) -> Option<u64> {
        match self.policy {
            FailPolicy::KeepUntilExpiry => k.overlap_end(),
            FailPolicy::FailClosed => {
                let successor = self
                    .keys
                    .iter()
                    .any(|o| o.tek.key_id != k.tek.key_id && o.not_before() > k.not_before());
                if successor {
                    k.overlap_end()
                } else {
                    k.lifetime_end()
                }
            }
        }
    }

    /// Removes keys past their end at `now`; returns whether anything changed.
    pub fn expire(&mut self, now: u64) -> bool {
        let ends: Vec<(u32, Option<u64>, bool)> = self
            .keys
            .iter()
            .map(|k| {
                let end = self.end_of(k);
                (k.tek.key_id, end, end != k.overlap_end())
            })
            .collect();
        let mut changed = false;
        for (id, end, early) in ends {
            if end.is_some_and(|e| now >= e) {
                self.keys.retain(|k| k.tek.key_id != id);
                self.counters.expired += 1;
                self.events.push(MemberEvent::Expired {
                    key_id: id,
                    fail_closed: early,
                });
                changed = true;
            }
        }
        changed
    }

    /// The key-store entries of the keys held, each valid from its receipt to the end the
    /// policy gives it (`install::key_entry`, with the end clipped under `FailClosed`). The
    /// window opens at receipt, not at activation: a subscriber must accept the next key as
    /// soon as it has it (a publisher that received it a second earlier may switch first),
    /// while a publisher switches at [`MemberState::activations`].
    pub fn key_entries(
        &self,
        provider: &dyn CryptoProvider,
    ) -> Result<Vec<KeyEntry>, MemberStateError> {
        let mut out = Vec::new();
        for k in &self.keys {
            let e = key_entry(&k.tek, provider, k.received)?;
            let end = self.end_of(k);
            out.push(e.with_validity(Some(k.received), end));
        }
        Ok(out)
    }

    /// Each key's Key ID and activation time (receipt + SA_ATD), oldest first: a publisher
    /// protects with the key activated last among those whose time has come.
    pub fn activations(&self) -> Vec<(u32, u64)> {
        let mut k: Vec<(u32, u64)> = self
            .keys
            .iter()
            .map(|k| (k.tek.key_id, k.not_before()))
            .collect();
        k.sort_by_key(|&(id, t)| (t, id));
        k
    }

    /// The Key IDs held, oldest first: the ids a gateway rule bound to this group uses.
    pub fn key_ids(&self) -> Vec<u32> {
        let mut k: Vec<&HeldKey> = self.keys.iter().collect();
        k.sort_by_key(|k| (k.not_before(), k.tek.key_id));
        k.iter().map(|k| k.tek.key_id).collect()
    }
}

#[cfg(test)]
mod tests;
