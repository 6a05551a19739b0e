//! The gateway as a GDOI group member (`[gdoi]`): one thread registers for every group, listens
//! for pushes and expires keys (`gander_gdoi::net::member::Runner`), and whenever a group's
//! keys change it hands the packet worker a new key store (the key file's keys plus every
//! group's) and the groups' Key IDs, through the same switch as a SIGHUP reload
//! (`Control::reload_with_groups`): the worker swaps them between two frames, the sockets keep
//! queueing, no frame is lost. Replay windows are per key id and stay.
//!
//! A rule naming a `group` protects with the key activated last among those whose activation
//! time (receipt + SA_ATD) has come, and verifies with any key of the group the member holds
//! (current and next). Until the first registration a group has no key: its protect rules drop
//! (`no-valid-key`) and its verify rules drop (`key-not-allowed` / `unknown-key`), never a
//! silent pass.

use crate::config::Config;
use crate::driver::{Control, GroupActivations};
use crate::events::{EventKind, SecurityEvent};
use gander_gdoi::member_state::{MemberCounters, MemberEvent};
use gander_gdoi::net::member::{unix_now, MemberError, Runner};
use gander_sec::{default_provider, KeyStore};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why the member could not start or rebuild the keys.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GdoiKeysError {
    /// `[gdoi]` refused.
    #[error(transparent)]
    Config(#[from] crate::gdoi_config::GdoiConfigError),
    /// A runner could not start (push socket).
    #[error("group member: {0}")]
    Member(#[from] MemberError),
    /// The key file did not load.
    #[error("key file: {0}")]
    Keys(#[from] gander_sec::KeyFileError),
    /// A received key could not become a key-store entry.
    #[error("group key: {0}")]
    Install(#[from] gander_gdoi::member_state::MemberStateError),
    /// The thread could not start.
    #[error("cannot start the group member thread")]
    Spawn(#[source] std::io::Error),
}

/// One group's state for reports (OpenMetrics and the JSON status line).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GroupStatus {
    /// The group.
    pub group: String,
    /// Key IDs held, oldest first.
    pub key_ids: Vec<u32>,
    /// Seconds since the newest key arrived.
    pub key_age_s: Option<u64>,
    /// Registrations, failures, failovers, rekeys, pushes.
    pub counters: MemberCounters,
    /// Why the last registration failed (a key server's notification by its RFC 2408 name,
    /// "no answer", ...); cleared by the next registration that succeeds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

/// The running member thread.
pub struct GdoiMember {
    stop: Arc<AtomicBool>,
    rebuild: Arc<AtomicBool>,
    status: Arc<Mutex<Vec<GroupStatus>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Builds the store the worker gets: the key file's keys, then each group's (a group key with
/// the id of a file key is refused: the file wins and the event says so).
pub fn build_store(
    keys_path: &std::path::Path,
    runners: &[(String, Runner)],
) -> Result<(KeyStore, GroupActivations, Vec<String>), GdoiKeysError> {
    let mut store = KeyStore::load(keys_path, default_provider())?;
    let mut groups = HashMap::new();
    let mut clashes = Vec::new();
    for (g, r) in runners {
        let mut held = Vec::new();
        let acts = r.state().activations();
        for e in r.state().key_entries(default_provider())? {
            let id = e.id;
            match store.insert(e) {
                Ok(()) => {
                    if let Some(a) = acts.iter().find(|(k, _)| *k == id) {
                        held.push(*a);
                    }
                }
                Err(_) => clashes.push(format!(
                    "group {g}: key id {id} is also in the key file; the file's key stays"
                )),
            }
        }
        groups.insert(g.clone(), held);
    }
    Ok((store, groups, clashes))
}

fn event_line(group: &str, e: &MemberEvent) -> String {
    serde_json::json!({"gdoi": group, "event": format!("{e:?}")}).to_string()
}

/// The RFC 5424 event of a member event (`[syslog]`): key changes are notices, a key server
/// that fails is a warning.
pub fn security_event(group: &str, e: &MemberEvent) -> SecurityEvent {
    let server_side = matches!(
        e,
        MemberEvent::ServerFailed { .. }
            | MemberEvent::Failover { .. }
            | MemberEvent::NoServer { .. }
    );
    let kind = if server_side {
        EventKind::GdoiKeyServer
    } else {
        EventKind::GdoiKeys
    };
    let msg = match e {
        MemberEvent::Registered { key_ids, .. } => format!("registered: key ids {key_ids:?}"),
        MemberEvent::ServerFailed { server, reason } => {
            format!("key server {server} failed: {reason}")
        }
        MemberEvent::Failover { from, to } => format!("failover from key server {from} to {to}"),
        MemberEvent::NoServer { policy, holding } => format!(
            "no key server answers; {} holds key ids {holding:?}",
            policy.name()
        ),
        MemberEvent::Rekeyed { seq, key_ids } => format!("push SEQ {seq}: key ids {key_ids:?}"),
        MemberEvent::Deleted { key_ids } => format!("push deleted key ids {key_ids:?}"),
        MemberEvent::PushRefused { reason } => format!("push refused: {reason}"),
        MemberEvent::Expired {
            key_id,
            fail_closed,
        } => format!("key id {key_id} expired (fail-closed: {fail_closed})"),
        other => format!("{other:?}"),
    };
    SecurityEvent::new(kind, msg).with("group", group)
}

impl GdoiMember {
    /// Starts the member of `cfg`'s `[gdoi]` (inside `cfg.raw.netns` when set, where the
    /// gateway's network side is); `None` without a `[gdoi]` table.
    /// Member events go to stderr and, with `[syslog]`, to `events` as RFC 5424 events.
    pub fn start(
        cfg: &Config,
        ctl: Arc<Control>,
        events: Option<SyncSender<SecurityEvent>>,
    ) -> Result<Option<GdoiMember>, GdoiKeysError> {
        let Some(t) = &cfg.raw.gdoi else {
            return Ok(None);
        };
        let configs = t.runner_configs()?;
        // With certificates every group's registration signs with the same credentials.
        let opts = t.register_options()?;
        let names = t.groups.clone();
        let (stop, rebuild) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let status = Arc::new(Mutex::new(Vec::new()));
        let (s, rb, st) = (stop.clone(), rebuild.clone(), status.clone());
        let keys_path: PathBuf = cfg.keys_path.clone();
        let ns = cfg.raw.netns.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("gander-gdoi".into())
            .spawn(move || {
                if let Some(ns) = &ns {
                    if let Err(e) = crate::service::enter_netns(ns) {
                        let _ = tx.send(Err(GdoiKeysError::Spawn(e)));
                        return;
                    }
                }
                let mut runners = Vec::new();
                for (g, c) in names.into_iter().zip(configs) {
                    match Runner::new(c) {
                        Ok(r) => runners.push((g, r.with_options(opts.clone()))),
                        Err(e) => {
                            let _ = tx.send(Err(e.into()));
                            return;
                        }
                    }
                }
                let _ = tx.send(Ok(()));
                run(
                    &mut runners,
                    &keys_path,
                    &ctl,
                    &s,
                    &rb,
                    &st,
                    events.as_ref(),
                );
            })
            .map_err(GdoiKeysError::Spawn)?;
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(_) => return Err(GdoiKeysError::Spawn(std::io::Error::other("member thread"))),
        }
        Ok(Some(GdoiMember {
            stop,
            rebuild,
            status,
            thread: Some(thread),
        }))
    }

    /// Rebuilds the store (after SIGHUP reloads the key file: the group keys must stay).
    pub fn request_rebuild(&self) {
        self.rebuild.store(true, Ordering::Relaxed);
    }

    /// Each group's keys and counters.
    pub fn status(&self) -> Vec<GroupStatus> {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Why the first group's last registration failed, if it did (see [`GroupStatus`]).
    pub fn last_failure(&self) -> Option<String> {
        self.status().into_iter().find_map(|g| g.last_failure)
    }
}

impl Drop for GdoiMember {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The member loop: each turn every group's runner registers if due and waits briefly for a
/// push; a change of any group's keys (or a rebuild request) hands the worker a new store.
pub fn run(
    runners: &mut [(String, Runner)],
    keys_path: &std::path::Path,
    ctl: &Control,
    stop: &AtomicBool,
    rebuild: &AtomicBool,
    status: &Mutex<Vec<GroupStatus>>,
    events: Option<&SyncSender<SecurityEvent>>,
) {
    let wait = Duration::from_millis((100 / runners.len().max(1)) as u64);
    let mut failures: HashMap<String, String> = HashMap::new();
    while !stop.load(Ordering::Relaxed) && !ctl.stopping() {
        let mut changed = rebuild.swap(false, Ordering::Relaxed);
        for (g, r) in runners.iter_mut() {
            match r.step(wait) {
                Ok(c) => changed |= c,
                Err(e) => eprintln!("{}", serde_json::json!({"gdoi": g, "error": e.to_string()})),
            }
            for e in r.state_mut().take_events() {
                match &e {
                    MemberEvent::ServerFailed { server, reason } => {
                        failures.insert(g.clone(), format!("key server {server}: {reason}"));
                    }
                    MemberEvent::Registered { .. } => {
                        failures.remove(g);
                    }
                    _ => {}
                }
                eprintln!("{}", event_line(g, &e));
                if let Some(tx) = events {
                    // A full queue loses the event, as it would any (the line above stays).
                    let _ = tx.try_send(security_event(g, &e));
                }
            }
        }
        if changed {
            match build_store(keys_path, runners) {
                Ok((store, groups, clashes)) => {
                    for c in clashes {
                        eprintln!("{}", serde_json::json!({"gdoi": "keys", "warning": c}));
                    }
                    ctl.reload_with_groups(store, groups);
                }
                Err(e) => eprintln!(
                    "{}",
                    serde_json::json!({"gdoi": "keys", "error": e.to_string(), "kept": "the keys in use"})
                ),
            }
        }
        let now = unix_now();
        if let Ok(mut s) = status.lock() {
            let before: Vec<(Vec<u32>, MemberCounters)> =
                s.iter().map(|g| (g.key_ids.clone(), g.counters)).collect();
            *s = runners
                .iter()
                .map(|(g, r)| GroupStatus {
                    group: g.clone(),
                    key_ids: r.state().key_ids(),
                    key_age_s: r.state().key_age(now),
                    counters: r.state().counters(),
                    last_failure: failures.get(g).cloned(),
                })
                .collect();
            let after: Vec<(Vec<u32>, MemberCounters)> =
                s.iter().map(|g| (g.key_ids.clone(), g.counters)).collect();
            if let Ok(mut m) = ctl.gdoi.lock() {
                *m = Some(s.clone());
            }
            if after != before {
                // Key ids, key age and counters (registrations, failures, failovers, rekeys,
                // pushes) whenever one of them moved: one JSON line.
                eprintln!("{}", serde_json::json!({"gdoi": "status", "groups": *s}));
            }
        }
    }
}

/// One metric family: name, help, and how to read its value.
type Family<T, V> = (&'static str, &'static str, fn(&T) -> V);

/// The groups as OpenMetrics families (`[metrics]`): key age, keys held, and the member's
/// counters, each labelled by group.
pub fn encode_metrics(
    groups: &[GroupStatus],
    enc: &mut prometheus_client::encoding::DescriptorEncoder,
) -> std::fmt::Result {
    use prometheus_client::encoding::EncodeMetric;
    use prometheus_client::metrics::counter::ConstCounter;
    use prometheus_client::metrics::gauge::ConstGauge;
    let gauge = ConstGauge::new(0i64).metric_type();
    let counter = ConstCounter::new(0u64).metric_type();
    let gauges: [Family<GroupStatus, i64>; 2] = [
        (
            "gdoi_key_age_seconds",
            "Seconds since the group's newest key arrived (-1: no key yet).",
            |g| {
                g.key_age_s
                    .map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX))
            },
        ),
        (
            "gdoi_keys_held",
            "Keys of the group the gateway holds (current and next).",
            |g| i64::try_from(g.key_ids.len()).unwrap_or(i64::MAX),
        ),
    ];
    for (name, help, f) in gauges {
        let mut fam = enc.encode_descriptor(name, help, None, gauge)?;
        for g in groups {
            ConstGauge::new(f(g)).encode(fam.encode_family(&[("group", g.group.as_str())])?)?;
        }
    }
    let counters: [Family<MemberCounters, u64>; 5] = [
        (
            "gdoi_registrations",
            "Successful registrations (GROUPKEY-PULL).",
            |c| c.registrations,
        ),
        (
            "gdoi_registration_failures",
            "Registrations a key server did not answer or refused.",
            |c| c.registration_failures,
        ),
        ("gdoi_failovers", "Moves to the other key server.", |c| {
            c.failovers
        }),
        ("gdoi_rekeys", "New keys after the first.", |c| c.rekeys),
        (
            "gdoi_pushes_refused",
            "GROUPKEY-PUSH datagrams refused.",
            |c| c.pushes_refused,
        ),
    ];
    for (name, help, f) in counters {
        let mut fam = enc.encode_descriptor(name, help, None, counter)?;
        for g in groups {
            ConstCounter::new(f(&g.counters))
                .encode(fam.encode_family(&[("group", g.group.as_str())])?)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_gdoi::member_state::FailPolicy;

    #[test]
    fn member_events_become_rfc5424_events_of_their_kind() {
        let e = security_event(
            "goose-1",
            &MemberEvent::NoServer {
                policy: FailPolicy::FailClosed,
                holding: vec![7],
            },
        );
        assert_eq!(e.kind, EventKind::GdoiKeyServer);
        assert!(e.message.contains("fail-closed"), "{}", e.message);
        let e = security_event(
            "goose-1",
            &MemberEvent::Rekeyed {
                seq: 3,
                key_ids: vec![8],
            },
        );
        assert_eq!(e.kind, EventKind::GdoiKeys);
        assert_eq!(EventKind::GdoiKeys.id(), 203);
        assert_eq!(EventKind::GdoiKeyServer.msgid(), "gdoi-key-server");
    }

    #[test]
    fn groups_appear_in_the_openmetrics_exposition() {
        let c = crate::policy::Counters {
            gdoi: Some(vec![GroupStatus {
                group: "goose-1".into(),
                key_ids: vec![7, 8],
                key_age_s: Some(12),
                counters: MemberCounters {
                    rekeys: 3,
                    registration_failures: 2,
                    ..MemberCounters::default()
                },
                last_failure: None,
            }]),
            ..Default::default()
        };
        let info = crate::metrics::GatewayInfo {
            driver: "udp".into(),
            profile: "standard".into(),
        };
        let text = crate::metrics::render(&c, &info);
        for line in [
            "gander_gateway_gdoi_key_age_seconds{group=\"goose-1\"} 12",
            "gander_gateway_gdoi_keys_held{group=\"goose-1\"} 2",
            "gander_gateway_gdoi_rekeys_total{group=\"goose-1\"} 3",
            "gander_gateway_gdoi_registration_failures_total{group=\"goose-1\"} 2",
        ] {
            assert!(text.contains(line), "{line} missing in\n{text}");
        }
    }
}
