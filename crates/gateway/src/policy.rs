//! The gateway's policy core: sans-I/O, one call per frame.
//!
//! [`Policy::handle`] takes a whole Ethernet frame, the direction it travels and the current time
//! (Unix seconds, for key validity) and returns a [`Decision`]: forward these bytes, or drop for
//! a [`DropReason`]. It owns the key store, the replay state and the counters; the drivers only
//! move bytes. Nothing here opens a socket; the one clock read is the monotonic clock that
//! [`Policy::handle`] gives the layer-2 SV freshness check ([`Policy::handle_at`] takes it
//! from the caller), so every rule is unit-tested.
//!
//! Every frame is classified once ([`gander_sec::view::classify`]): the tag stack, IPv4/IPv6,
//! UDP, the session header, the layer-2 header. That one view is what the rule lookup, the
//! verifier, the replay check, the pins and the forwarder read. Fail-closed rules, in order:
//! 1. A frame an IED could read as IEC 61850 traffic (GOOSE/SV/GSE EtherTypes behind any tag
//!    stack, UDP to or from port 102 or starting `01 40`, over IPv4 or IPv6) that does not
//!    parse, a fragment of a UDP datagram, a bad IPv4 or UDP checksum: dropped.
//! 2. A secured frame whose payload is encrypted is authenticated before its APPID is read, so
//!    the rule is chosen by an authenticated APPID.
//! 3. `verify` (and `translate` of verified input) refuses unsecured frames, unknown, expired
//!    and not-allowed keys (key file `appids`, rule `key_ids`), bad MACs and tags, frames not
//!    well formed at every layer, frames the gateway would itself protect in the other
//!    direction (reflection), pin mismatches and replays. Replay state is keyed on
//!    authenticated fields only ([`gander_sec::replay`]) and moves only after every other check.
//! 4. IEC 61850 traffic that no rule matches takes the configured default (drop unless set);
//!    only traffic that is not IEC 61850 at all takes `other`.

use crate::config::{
    parse_mac, Action, Config, ConfigError, Direction, KindMatch, PassDrop, PinToml, Reflected,
    RuleToml,
};
use crate::events::{self, EventKind, EventSink, SecurityEvent};
pub use crate::reason::DropReason;
use crate::translate::{self, Output, Translate, Translator};
use gander_sec::frame::protect_view_into;
use gander_sec::replay::ReplayState;
use gander_sec::spdu::{IvSource, RandomIv};
use gander_sec::view::{self, Content, FrameView, Judged, Kind, Link, Verified};
use gander_sec::{KeyEntry, KeyStore, Profile, SecError};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

mod decision;
pub use decision::{Decision, Forward, OUTPUT_CAPACITY};

/// Counters of one direction.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct DirCounters {
    /// Frames handed to the policy.
    pub received: u64,
    /// Frames forwarded (any reason).
    pub forwarded: u64,
    /// IEC 61850 frames forwarded unchanged by a `pass` rule or the default.
    pub passed: u64,
    /// Non-IEC 61850 frames forwarded.
    pub other_passed: u64,
    /// Frames secured by `protect`.
    pub protected: u64,
    /// Frames whose security verified (`verify`, `translate`).
    pub verified: u64,
    /// Verified frames forwarded with their security removed.
    pub stripped: u64,
    /// Frames translated between layer-2 GOOSE and R-GOOSE.
    pub translated: u64,
    /// Dropped frames by reason.
    pub dropped: BTreeMap<String, u64>,
    /// Frames the policy forwarded that the driver could not send (`ENOBUFS`, `EAGAIN`, a
    /// frame above the MTU): lost inside the gateway, not a policy decision. Counted by the
    /// driver, so also in `forwarded`.
    pub tx_errors: u64,
}

impl DirCounters {
    /// All drops.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.values().sum()
    }
}

/// What the kernel counted on one AF_PACKET socket (`PACKET_STATISTICS`, packet(7)), summed
/// over the driver's reads (each read resets the kernel's counters).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct SocketCounters {
    /// Frames that reached the socket, the dropped ones included (the kernel adds `tp_drops`
    /// to `tp_packets` before returning them).
    pub packets: u64,
    /// Frames the kernel dropped because the socket's receive buffer was full: the gateway
    /// did not read fast enough.
    pub drops: u64,
}

impl SocketCounters {
    /// Adds a later read.
    pub fn add(&mut self, more: SocketCounters) {
        self.packets += more.packets;
        self.drops += more.drops;
    }
}

/// The kernel's counters of the `l2` driver's two sockets.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct KernelCounters {
    /// The socket on the IED-side interface (outbound frames arrive here).
    pub ied: SocketCounters,
    /// The socket on the network-side interface (inbound frames arrive here).
    pub net: SocketCounters,
}

/// Security events handed to the logger, and those not logged (rate limit or full queue).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct EventCounters {
    /// Events queued for syslog.
    pub logged: u64,
    /// Events counted but not logged.
    pub suppressed: u64,
}

/// Counters of both directions, as printed in JSON.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    /// IED to network.
    pub outbound: DirCounters,
    /// Network to IED.
    pub inbound: DirCounters,
    /// The kernel's socket counters, for drivers that have them (`l2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelCounters>,
    /// Security events, when `[syslog]` is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<EventCounters>,
    /// The `[gdoi]` member's groups (key ids, key age, counters), filled in by the exporter
    /// from `Control::gdoi`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gdoi: Option<Vec<crate::gdoi_keys::GroupStatus>>,
}

impl Counters {
    /// The counters of `dir`.
    pub fn dir(&self, dir: Direction) -> &DirCounters {
        match dir {
            Direction::Outbound => &self.outbound,
            Direction::Inbound => &self.inbound,
        }
    }
    fn dir_mut(&mut self, dir: Direction) -> &mut DirCounters {
        match dir {
            Direction::Outbound => &mut self.outbound,
            Direction::Inbound => &mut self.inbound,
        }
    }
}

#[derive(Debug, Clone)]
struct Rule {
    direction: Direction,
    appid: Option<u16>,
    kind: KindMatch,
    action: Action,
    keys: Vec<u32>,
    /// A GDOI group whose keys this rule uses (`[gdoi]`): `keys` follows the group's keys and
    /// `activations` their activation times (`gdoi_keys`).
    group: Option<String>,
    activations: Vec<(u32, u64)>,
    keep_security: bool,
    verify_input: bool,
    src_mac: Option<[u8; 6]>,
    translate: Option<Translate>,
}

fn kind_match(k: Kind) -> KindMatch {
    match k {
        Kind::Goose => KindMatch::Goose,
        Kind::RGoose | Kind::Session => KindMatch::RGoose,
        Kind::RSv => KindMatch::RSv,
        Kind::Sv => KindMatch::Sv,
        Kind::GseManagement => KindMatch::GseManagement,
        Kind::Other => KindMatch::Any,
    }
}

impl Rule {
    fn from_toml(n: usize, r: &RuleToml) -> Result<Rule, ConfigError> {
        let translate = r
            .translate
            .as_ref()
            .map(|t| Translate::from_toml(n, r.kind, t))
            .transpose()?;
        Ok(Rule {
            direction: r.direction,
            appid: r.appid,
            kind: r.kind,
            action: r.action,
            keys: r
                .key_ids
                .clone()
                .or(r.key_id.map(|k| vec![k]))
                .unwrap_or_default(),
            group: r.group.clone(),
            activations: Vec::new(),
            keep_security: r.keep_security,
            verify_input: r.verify_input.unwrap_or(r.direction == Direction::Inbound),
            src_mac: r.src_mac.as_deref().map(parse_mac).transpose()?,
            translate,
        })
    }

    fn matches(&self, dir: Direction, kind: KindMatch, appid: u16, src: &[u8; 6]) -> bool {
        self.direction == dir
            && (self.kind == KindMatch::Any || self.kind == kind)
            && self.appid.is_none_or(|a| a == appid)
            && self.src_mac.is_none_or(|m| &m == src)
    }

    /// Whether this rule secures frames of (kind, appid) with `key` (protect, or translate
    /// with a key): the gateway's own output in its direction.
    fn secures(&self, kind: KindMatch, appid: u16, key: u32) -> bool {
        matches!(self.action, Action::Protect | Action::Translate)
            && (self.kind == KindMatch::Any || self.kind == kind)
            && self.appid.is_none_or(|a| a == appid)
            && self.keys.contains(&key)
    }
}

#[derive(Debug, Clone)]
struct Pin {
    appid: u16,
    kind: KindMatch,
    direction: Option<Direction>,
    src_mac: Option<[u8; 6]>,
    vlan: Option<u16>,
    untagged: bool,
    src_ip: Option<IpAddr>,
    src_port: Option<u16>,
}

impl Pin {
    fn from_toml(p: &PinToml) -> Result<Pin, ConfigError> {
        Ok(Pin {
            appid: p.appid,
            kind: p.kind,
            direction: p.direction,
            src_mac: p.src_mac.as_deref().map(parse_mac).transpose()?,
            vlan: p.vlan,
            untagged: p.untagged,
            src_ip: p.src_ip,
            src_port: p.src_port,
        })
    }

    fn applies(&self, dir: Direction, kind: KindMatch, appid: u16) -> bool {
        self.appid == appid
            && (self.kind == KindMatch::Any || self.kind == kind)
            && self.direction.is_none_or(|d| d == dir)
    }

    fn holds(&self, v: &FrameView<'_>) -> bool {
        let udp = match &v.content {
            Content::Session(s) => Some(&s.udp),
            _ => None,
        };
        self.src_mac.is_none_or(|m| m == v.src)
            && self.vlan.is_none_or(|vid| v.outer_vid() == Some(vid))
            && (!self.untagged || v.tags == 0)
            && self
                .src_ip
                .is_none_or(|ip| udp.is_some_and(|u| u.ip.src() == ip))
            && self
                .src_port
                .is_none_or(|p| udp.is_some_and(|u| u.src_port == p))
    }
}

/// The policy: rules, keys, replay state and counters.
pub struct Policy {
    profile: Profile,
    store: KeyStore,
    /// Shared with the frame being judged ([`Policy::rule`]): taking a rule costs a reference
    /// count, not a copy of its key list (an allocation per frame).
    rules: Vec<Arc<Rule>>,
    pins: Vec<Pin>,
    reflected: Reflected,
    other: [PassDrop; 2],
    default: PassDrop,
    /// Replay state per direction (the receiver of each direction is a different party).
    replay: [ReplayState; 2],
    translator: Translator,
    ivs: Box<dyn IvSource + Send>,
    counters: Counters,
    /// Security events (`[syslog]`), and the key each protect rule last used per publisher,
    /// so a rotation is logged once.
    events: Option<EventSink>,
    protect_keys: HashMap<(Direction, u16), u32>,
    /// SV streams already said to wrap below the assumed wrap (`note_sv_wrap`).
    sv_wrap_said: std::collections::HashSet<(Direction, u16)>,
    /// Origin of the monotonic clock [`Policy::handle`] reads (SV freshness).
    epoch: std::time::Instant,
    /// [`check_reflection`]'s warnings.
    warnings: Vec<String>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("profile", &self.profile)
            .field("rules", &self.rules.len())
            .field("keys", &self.store.len())
            .finish()
    }
}

type Verdict<'a> = Result<Decision<'a>, DropReason>;

/// Rules that make a class of valid traffic undeliverable through the `reflected` check: a
/// frame secured with a key the gateway itself uses in the other direction is dropped as its
/// own output sent back ([`Policy::admit`]). A protect (or translate) rule scoped wider than
/// the IED's own streams (no `kind`, no `appid`) claims every frame of the other direction
/// secured with its key. When a verify rule names that key, everything it would accept of that
/// scope is dropped: an error, with both rules and the fix. When the verify rule takes any key,
/// only that key's frames are lost: a warning (start-up log and `--check`). Said before the
/// gateway runs rather than found as a stream of `reflected` drops.
fn check_reflection(rules: &[Rule]) -> Result<Vec<String>, ConfigError> {
    let accepts =
        |r: &Rule| r.action == Action::Verify || (r.action == Action::Translate && r.verify_input);
    let mut warnings = Vec::new();
    for (ai, a) in rules.iter().enumerate().filter(|(_, r)| accepts(r)) {
        for (pi, p) in rules.iter().enumerate() {
            if p.direction == a.direction
                || !matches!(p.action, Action::Protect | Action::Translate)
            {
                continue;
            }
            let kind_covered = p.kind == KindMatch::Any || p.kind == a.kind;
            let appid_covered = p.appid.is_none() || p.appid == a.appid;
            let Some(key) = p
                .keys
                .iter()
                .find(|k| a.keys.is_empty() || a.keys.contains(k))
            else {
                continue;
            };
            if !(kind_covered && appid_covered) {
                continue;
            }
            let scope = match (p.kind, p.appid) {
                (KindMatch::Any, None) => "names no kind and no appid".to_string(),
                (_, None) => "names no appid".to_string(),
                (_, Some(x)) => format!("secures appid 0x{x:04X}"),
            };
            let what = format!(
                "rule {} ({} {}) {scope}, so every {} frame secured with key id {key} is dropped as reflected (the gateway's own output sent back)",
                pi + 1,
                p.direction.name(),
                if p.action == Action::Protect { "protect" } else { "translate" },
                a.direction.name(),
            );
            let fix = format!(
                "scope rule {} to the IED's own streams (kind and appid), give each direction its own key ids, or set reflected = \"allow\" if frames are meant to come back",
                pi + 1
            );
            if a.keys.is_empty() {
                warnings.push(format!(
                    "{what}, though rule {} ({} verify) accepts any key: {fix}",
                    ai + 1,
                    a.direction.name()
                ));
            } else {
                return Err(ConfigError::Invalid(format!(
                    "{what}, and rule {} ({} verify) accepts only frames secured with key ids {:?}: it can never deliver that key's frames; {fix}",
                    ai + 1,
                    a.direction.name(),
                    a.keys
                )));
            }
        }
    }
    Ok(warnings)
}

impl Policy {
    /// Builds the policy of a checked config with its keys.
    pub fn new(config: &Config, store: KeyStore) -> Result<Self, ConfigError> {
        let rules = config
            .raw
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| Rule::from_toml(i + 1, r))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, r) in rules.iter().enumerate() {
            for k in &r.keys {
                if store.get(*k).is_none() {
                    return Err(ConfigError::Invalid(format!(
                        "rule {}: key id {k} is not in the key file",
                        i + 1
                    )));
                }
            }
            if r.kind == KindMatch::Sv && r.group.is_none() {
                Self::check_sv_keys(i + 1, r, &store)?;
            }
        }
        let warnings = if config.raw.reflected == Reflected::Drop {
            check_reflection(&rules)?
        } else {
            Vec::new()
        };
        let pins = config
            .raw
            .pins
            .iter()
            .map(Pin::from_toml)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Policy {
            profile: config.profile,
            store,
            rules: rules.into_iter().map(Arc::new).collect(),
            pins,
            reflected: config.raw.reflected,
            other: [
                config.raw.other_outbound.unwrap_or(config.raw.other),
                config.raw.other_inbound.unwrap_or(config.raw.other),
            ],
            default: config.raw.default,
            replay: {
                let mut r = [ReplayState::new(), ReplayState::new()];
                for d in &mut r {
                    d.set_sv_wrap(config.raw.sv_wrap.unwrap_or(0));
                }
                r
            },
            translator: Translator::default(),
            ivs: Box::new(RandomIv),
            counters: Counters::default(),
            events: None,
            protect_keys: HashMap::new(),
            sv_wrap_said: std::collections::HashSet::new(),
            epoch: std::time::Instant::now(),
            warnings,
        })
    }

    /// What the configuration makes undeliverable without being an error (`--check` and the
    /// start-up log print them).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// An SV rule must have a key layer-2 SV can use: IEC 62351-6 secures layer-2 frames with
    /// a MAC or signature only, so an AES-GCM key (or none at all) is a configuration error,
    /// not a stream of drops.
    fn check_sv_keys(n: usize, r: &Rule, store: &KeyStore) -> Result<(), ConfigError> {
        let usable = |k: &KeyEntry| {
            k.enc == gander_sec::EncAlgorithm::None
                && (k.signature.is_some() || k.mac != gander_sec::MacAlgorithm::None)
        };
        let bad = |why: String| Err(ConfigError::Invalid(format!("rule {n}: {why}")));
        match r.action {
            Action::Protect | Action::Verify if !r.keys.is_empty() => {
                for k in &r.keys {
                    if store.get(*k).is_some_and(|e| !usable(e)) {
                        return bad(format!(
                            "key id {k} cannot secure layer-2 SV (IEC 62351-6 layer 2 takes a MAC or signature key, not encryption)"
                        ));
                    }
                }
                Ok(())
            }
            Action::Verify if !store.iter().any(usable) => bad(
                "an SV verify rule needs a key: the key file holds no MAC or signature key".into(),
            ),
            _ => Ok(()),
        }
    }

    /// Replaces the keys (SIGHUP). Replay state is kept: windows are per key id.
    pub fn replace_keys(&mut self, store: KeyStore) {
        self.store = store;
    }

    /// Binds the rules that name a GDOI group to that group's keys: each group's Key IDs
    /// with their activation times (`gdoi_keys`). Applied with the store that holds them, so
    /// a frame never sees a rule naming a key the store lacks.
    pub fn set_group_keys(&mut self, groups: &HashMap<String, Vec<(u32, u64)>>) {
        for r in &mut self.rules {
            if let Some(g) = &r.group {
                let a = groups.get(g).cloned().unwrap_or_default();
                let r = Arc::make_mut(r);
                r.keys = a.iter().map(|&(id, _)| id).collect();
                r.activations = a;
            }
        }
    }

    /// The keys in use.
    pub fn keys(&self) -> &KeyStore {
        &self.store
    }

    /// Uses `ivs` for AES-GCM/GMAC IVs (tests).
    pub fn set_iv_source(&mut self, ivs: Box<dyn IvSource + Send>) {
        self.ivs = ivs;
    }

    /// The counters so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Logs security events through `sink` (drops under its rate limit, key use unlimited).
    pub fn set_events(&mut self, sink: EventSink) {
        self.events = Some(sink);
        self.sync_event_counters();
    }

    /// Queues the `events-suppressed` summary once its second is over (drivers call this
    /// between frames, so the summary comes even when the flood has stopped).
    pub fn flush_events(&mut self, now: u64) {
        if let Some(s) = self.events.as_mut() {
            s.flush(now);
            self.sync_event_counters();
        }
    }

    fn sync_event_counters(&mut self) {
        if let Some(s) = &self.events {
            self.counters.events = Some(EventCounters {
                logged: s.emitted(),
                suppressed: s.suppressed(),
            });
        }
    }

    /// The drop event of `input`, if the budget admits one, from the classification the
    /// decision read (`view`; `None` when the input did not classify): the frame is not
    /// classified a second time to be logged.
    fn log_drop(
        &mut self,
        dir: Direction,
        reason: DropReason,
        input: &[u8],
        link: Link,
        view: Option<&FrameView<'_>>,
        now: u64,
    ) {
        let Some(sink) = self.events.as_mut() else {
            return;
        };
        if sink.admit(now) {
            let e = match view {
                Some(v) => events::drop_event(
                    reason,
                    dir,
                    Some(v.kind().name()),
                    v.visible_appid(self.profile, &self.store),
                    v.src_mac(),
                    input.len(),
                ),
                None => {
                    let (kind, appid) = match link {
                        Link::Ethernet => malformed_facts(input),
                        Link::Ip | Link::Datagram => (None, None),
                    };
                    events::drop_event(
                        reason,
                        dir,
                        kind,
                        appid,
                        match link {
                            Link::Ethernet => input.get(6..12).and_then(|m| m.try_into().ok()),
                            Link::Ip | Link::Datagram => None,
                        },
                        input.len(),
                    )
                }
            };
            if let Some(sink) = self.events.as_mut() {
                sink.send(e);
            }
        }
        self.sync_event_counters();
    }

    /// Logs the key a protect rule uses for a publisher when it differs from the last one
    /// (first use, rotation at `not_before`, a reload). Not rate-limited: a key changes
    /// rarely, and a flood must not hide a rotation.
    fn note_protect_key(&mut self, dir: Direction, appid: u16, key: u32) {
        if self.events.is_none() || self.protect_keys.get(&(dir, appid)) == Some(&key) {
            return;
        }
        let previous = self.protect_keys.insert((dir, appid), key);
        let mut e = SecurityEvent::new(
            EventKind::ProtectKey,
            format!(
                "{} APPID 0x{appid:04x} protected with key {key}",
                dir.name()
            ),
        )
        .with("direction", dir.name())
        .with("appid", format!("0x{appid:04x}"))
        .with("keyId", key);
        if let Some(p) = previous {
            e = e.with("previousKeyId", p);
        }
        if let Some(s) = self.events.as_mut() {
            s.send(e);
        }
        self.sync_event_counters();
    }

    /// Counts a frame the driver could not send in `dir` (see [`DirCounters::tx_errors`]).
    pub fn count_tx_error(&mut self, dir: Direction) {
        self.counters.dir_mut(dir).tx_errors += 1;
    }

    /// Sets the kernel's socket counters the driver has read.
    pub fn set_kernel_counters(&mut self, k: KernelCounters) {
        self.counters.kernel = Some(k);
    }

    /// Decides what happens to `frame` travelling in `dir` at `now` (Unix seconds); the SV
    /// freshness check reads the monotonic clock.
    ///
    /// A frame the policy rewrites (protect, strip, translate) is written into `out`, resized
    /// to it, and the decision borrows it from there ([`Forward::Rewritten`]); a frame that goes
    /// on unchanged is borrowed from `frame` ([`Forward::Unchanged`]) and `out` is not read.
    /// A caller that keeps one `out` across frames (the drivers keep one per packet thread)
    /// allocates nothing per frame once it has grown to the largest output (why the caller's
    /// buffer: [`Decision`]).
    pub fn handle<'a>(
        &mut self,
        dir: Direction,
        frame: &'a [u8],
        now: u64,
        out: &'a mut Vec<u8>,
    ) -> Decision<'a> {
        let at_ns = self.monotonic_ns();
        self.handle_at(dir, frame, now, at_ns, out)
    }

    /// [`Policy::handle`] with the arrival time given: `at_ns` on any monotonic clock (only the
    /// layer-2 SV freshness check reads it, [`gander_sec::replay::SvCounter`]).
    pub fn handle_at<'a>(
        &mut self,
        dir: Direction,
        frame: &'a [u8],
        now: u64,
        at_ns: u64,
        out: &'a mut Vec<u8>,
    ) -> Decision<'a> {
        let v = view::classify(self.profile, frame);
        self.judge(dir, frame, Link::Ethernet, v, now, at_ns, out)
    }

    /// Decides what happens to an IPv4 or IPv6 packet handed over without a link header (the
    /// `nfqueue` driver's input, [`view::classify_ip`]): the same rules as for the packet inside
    /// an Ethernet frame, and a forwarded packet is again an IP packet. A rule whose output is
    /// layer 2 (translation of R-GOOSE to GOOSE) cannot be carried on: `unsupported`. `out` as
    /// in [`Policy::handle`].
    pub fn handle_ip<'a>(
        &mut self,
        dir: Direction,
        packet: &'a [u8],
        now: u64,
        out: &'a mut Vec<u8>,
    ) -> Decision<'a> {
        let at_ns = self.monotonic_ns();
        self.handle_ip_at(dir, packet, now, at_ns, out)
    }

    /// [`Policy::handle_ip`] with the arrival time given (see [`Policy::handle_at`]).
    pub fn handle_ip_at<'a>(
        &mut self,
        dir: Direction,
        packet: &'a [u8],
        now: u64,
        at_ns: u64,
        out: &'a mut Vec<u8>,
    ) -> Decision<'a> {
        let v = view::classify_ip(self.profile, packet);
        self.judge(dir, packet, Link::Ip, v, now, at_ns, out)
    }

    /// Decides what happens to a UDP payload a socket received from `src` on `dst` (the `udp`
    /// relay's input, [`view::classify_datagram`]); a forwarded payload is again a bare UDP
    /// payload, to be sent on as it is. `out` as in [`Policy::handle`].
    #[allow(clippy::too_many_arguments)] // the socket's two addresses beside handle's arguments
    pub fn handle_datagram<'a>(
        &mut self,
        dir: Direction,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &'a [u8],
        now: u64,
        out: &'a mut Vec<u8>,
    ) -> Decision<'a> {
        let at_ns = self.monotonic_ns();
        let v = view::classify_datagram(self.profile, src, dst, payload);
        self.judge(dir, payload, Link::Datagram, v, now, at_ns, out)
    }

    fn monotonic_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// The one path behind every `handle_*`: the decision on the classified input, the
    /// counters, and the drop event from the same classification.
    #[allow(clippy::too_many_arguments)] // handle_at's arguments plus what classify found
    fn judge<'a>(
        &mut self,
        dir: Direction,
        input: &'a [u8],
        link: Link,
        v: Result<FrameView<'a>, SecError>,
        now: u64,
        at_ns: u64,
        out: &'a mut Vec<u8>,
    ) -> Decision<'a> {
        let v = v.map_err(DropReason::from);
        let d = match &v {
            Ok(v) => self
                .decide(dir, v, now, at_ns, out)
                .unwrap_or_else(Decision::Drop),
            Err(r) => Decision::Drop(*r),
        };
        let c = self.counters.dir_mut(dir);
        c.received += 1;
        match &d {
            Decision::Forward(_) => c.forwarded += 1,
            Decision::Drop(r) => match c.dropped.get_mut(r.name()) {
                Some(n) => *n += 1,
                None => {
                    c.dropped.insert(r.name().to_string(), 1);
                }
            },
        }
        if let Decision::Drop(r) = d {
            self.log_drop(dir, r, input, link, v.as_ref().ok(), now);
        }
        d
    }

    fn bump(&mut self, dir: Direction, f: impl FnOnce(&mut DirCounters)) {
        f(self.counters.dir_mut(dir))
    }

    fn rule(
        &self,
        dir: Direction,
        kind: KindMatch,
        appid: u16,
        src: &[u8; 6],
    ) -> Option<Arc<Rule>> {
        self.rules
            .iter()
            .find(|r| r.matches(dir, kind, appid, src))
            .cloned()
    }

    /// The rule that `rule` chooses for frames of `kind` from `src` in `dir` whatever their
    /// APPID: the first that could match, when it names no APPID; `None` when an earlier rule
    /// names one (the APPID decides) or none matches.
    fn rule_for_any_appid(
        &self,
        dir: Direction,
        kind: KindMatch,
        src: &[u8; 6],
    ) -> Option<&Arc<Rule>> {
        let first = self.rules.iter().find(|r| {
            r.direction == dir
                && (r.kind == KindMatch::Any || r.kind == kind)
                && r.src_mac.is_none_or(|m| &m == src)
        })?;
        first.appid.is_none().then_some(first)
    }

    /// The default for unmatched IEC traffic.
    fn unmatched<'a>(&mut self, dir: Direction, frame: &'a [u8]) -> Verdict<'a> {
        match self.default {
            PassDrop::Pass => {
                self.bump(dir, |c| c.passed += 1);
                Ok(unchanged(frame))
            }
            PassDrop::Drop => Err(DropReason::NoRule),
        }
    }

    /// The key a protect rule uses now: of its keys valid at `now`, the one that became valid
    /// last (so a new key takes over at its `not_before` and the old one ends at `not_after`).
    fn protect_key<'s>(
        store: &'s KeyStore,
        rule: &Rule,
        now: u64,
    ) -> Result<&'s KeyEntry, DropReason> {
        if rule.group.is_some() {
            // A group key takes over at its activation time (receipt + SA_ATD), not at
            // receipt: subscribers accept it from receipt, so they have it by then.
            return rule
                .activations
                .iter()
                .filter(|&&(_, at)| at <= now)
                .filter_map(|&(id, at)| store.get(id).map(|k| (k, at)))
                .filter(|(k, _)| k.check_valid_at(now).is_ok())
                .max_by_key(|&(_, at)| at)
                .map(|(k, _)| k)
                .ok_or(DropReason::NoValidKey);
        }
        rule.keys
            .iter()
            .filter_map(|k| store.get(*k))
            .filter(|k| k.check_valid_at(now).is_ok())
            .max_by_key(|k| k.not_before.unwrap_or(0))
            .ok_or(DropReason::NoValidKey)
    }

    /// Pins of the publisher `appid`: every pin that applies must hold.
    fn check_pins(
        &self,
        dir: Direction,
        kind: KindMatch,
        appid: u16,
        v: &FrameView<'_>,
    ) -> Result<(), DropReason> {
        if self
            .pins
            .iter()
            .any(|p| p.applies(dir, kind, appid) && !p.holds(v))
        {
            return Err(DropReason::PinMismatch);
        }
        Ok(())
    }

    /// The decision on a classified frame; a rewritten frame is written into `out`.
    fn decide<'a>(
        &mut self,
        dir: Direction,
        v: &FrameView<'a>,
        now: u64,
        at_ns: u64,
        out: &'a mut Vec<u8>,
    ) -> Verdict<'a> {
        let frame = v.frame;
        let kind = kind_match(v.kind());
        if v.kind() == Kind::Other {
            return match self.other[dir as usize] {
                PassDrop::Pass => {
                    self.bump(dir, |c| c.other_passed += 1);
                    Ok(unchanged(frame))
                }
                PassDrop::Drop => Err(DropReason::Other),
            };
        }
        // The rule is chosen by the APPID readable now; an encrypted payload is authenticated
        // first and its rule chosen by the authenticated APPID.
        let visible = v.visible_appid(self.profile, &self.store);
        let mut verified = None;
        let appid = match visible {
            Some(a) => a,
            // A secured frame whose APPID cannot be read without its key, meeting a protect
            // rule whatever the APPID: already secured, before any key is looked up (an
            // R-GOOSE secured by the IED with a key the gateway lacks was `unknown-key`, which
            // sends the operator to the key file; with a known key it was `already-secured`).
            None if v.secured()
                && self
                    .rule_for_any_appid(dir, kind, &v.src)
                    .is_some_and(|r| r.action == Action::Protect) =>
            {
                return Err(DropReason::AlreadySecured)
            }
            None => {
                let ok = self.authenticate(v, now)?;
                let a = ok.appid();
                verified = Some(ok);
                a
            }
        };
        let Some(rule) = self.rule(dir, kind, appid, &v.src) else {
            return self.unmatched(dir, frame);
        };
        match rule.action {
            Action::Pass => {
                self.check_pins(dir, kind, appid, v)?;
                self.bump(dir, |c| c.passed += 1);
                Ok(unchanged(frame))
            }
            Action::Drop => Err(DropReason::Policy),
            Action::Protect => {
                if v.secured() {
                    return Err(DropReason::AlreadySecured);
                }
                self.check_pins(dir, kind, appid, v)?;
                let key = Self::protect_key(&self.store, &rule, now)?;
                if !protect_view_into(self.profile, key, v, self.ivs.as_mut(), now, out)? {
                    return Err(DropReason::Malformed);
                }
                let key_id = key.id;
                self.note_protect_key(dir, appid, key_id);
                self.bump(dir, |c| c.protected += 1);
                Ok(rewritten(out))
            }
            Action::Verify | Action::Translate => {
                let needs_security = rule.action == Action::Verify || rule.verify_input;
                if !v.secured() {
                    if needs_security {
                        return Err(DropReason::Unsecured);
                    }
                    self.check_pins(dir, kind, appid, v)?;
                    return self.translate_unsecured(dir, &rule, v, now, out);
                }
                let ok = match verified {
                    Some(ok) => ok,
                    None => self.authenticate(v, now)?,
                };
                self.admit(dir, kind, &rule, v, &ok, at_ns)?;
                self.bump(dir, |c| c.verified += 1);
                if rule.action == Action::Translate {
                    return self.translate_verified(dir, &rule, v, &ok, now, out);
                }
                if rule.keep_security {
                    return Ok(unchanged(frame));
                }
                translate::strip(self.profile, v, &ok, out)?;
                self.bump(dir, |c| c.stripped += 1);
                Ok(rewritten(out))
            }
        }
    }

    /// Authenticates a secured frame and parses every layer behind it.
    fn authenticate<'a>(&self, v: &FrameView<'a>, now: u64) -> Result<Verified<'a>, DropReason> {
        match view::verify(self.profile, &self.store, v, now)? {
            Judged::Verified(ok) => Ok(ok),
            Judged::Unsecured => Err(DropReason::Unsecured),
        }
    }

    /// The checks a verified frame passes before it is forwarded, replay last so that a frame
    /// refused for any other reason does not move the window.
    fn admit(
        &mut self,
        dir: Direction,
        kind: KindMatch,
        rule: &Rule,
        v: &FrameView<'_>,
        ok: &Verified<'_>,
        at_ns: u64,
    ) -> Result<(), DropReason> {
        let key = ok.key_id();
        let appid = ok.appid();
        if ok.mixed_appids() {
            return Err(DropReason::MixedAppids);
        }
        if (!rule.keys.is_empty() || rule.group.is_some()) && !rule.keys.contains(&key) {
            return Err(DropReason::KeyNotAllowed);
        }
        if self.reflected == Reflected::Drop
            && self
                .rules
                .iter()
                .any(|r| r.direction != dir && r.secures(kind, appid, key))
        {
            return Err(DropReason::Reflected);
        }
        self.check_pins(dir, kind, appid, v)?;
        if let Err(e) = self.replay[dir as usize].check_and_accept(&ok.freshness(at_ns)) {
            if let SecError::Replay {
                kind: gander_sec::ReplayKind::WrappedEarly { last },
                ..
            } = e
            {
                self.note_sv_wrap(dir, appid, last);
            }
            return Err(e.into());
        }
        Ok(())
    }

    /// Says once per SV stream that it wraps below the wrap assumed (its frames are dropped
    /// as `replay`, which reads like an attack, while the fix is `sv_wrap`): on stderr and as
    /// a `sv-wrap` event. A 50 Hz merging unit's 4000 under the default 4800 lost 4,491 of
    /// 64,000 frames in a field test, with nothing saying why.
    fn note_sv_wrap(&mut self, dir: Direction, appid: u16, last: u16) {
        if !self.sv_wrap_said.insert((dir, appid)) {
            return;
        }
        let wraps_at = u32::from(last) + 1;
        let text = format!(
            "{} SV APPID 0x{appid:04x} went from smpCnt {last} to 0: it wraps at {wraps_at}, below the wrap assumed (smpRate, else sv_wrap); its frames after each wrap are dropped as replay until sv_wrap = {wraps_at}",
            dir.name()
        );
        eprintln!("gander gateway: warning: {text}");
        if let Some(s) = self.events.as_mut() {
            s.send(
                SecurityEvent::new(EventKind::SvWrap, text)
                    .with("direction", dir.name())
                    .with("appid", format!("0x{appid:04x}"))
                    .with("wrapsAt", wraps_at),
            );
        }
        self.sync_event_counters();
    }

    /// What a rule's output is written with: its addresses and its key now.
    fn output<'p>(
        store: &'p KeyStore,
        profile: Profile,
        rule: &'p Rule,
        ivs: &'p mut dyn IvSource,
        now: u64,
    ) -> Output<'p> {
        let key = if rule.keys.is_empty() {
            Ok(None)
        } else {
            Self::protect_key(store, rule, now).map(Some)
        };
        Output {
            profile,
            translate: rule.translate.as_ref(),
            key,
            ivs,
            now,
        }
    }

    /// Translation always changes layer: GOOSE to R-GOOSE needs a layer-2 input, R-GOOSE to
    /// GOOSE writes a layer-2 frame. Neither can happen on a path that hands over IP packets
    /// or UDP payloads (`nfqueue`, `udp`), so such a rule is refused there as `unsupported`
    /// rather than counted as forwarded and lost by the driver.
    fn layer2_output_allowed(v: &FrameView<'_>) -> Result<(), DropReason> {
        match v.link {
            Link::Ethernet => Ok(()),
            Link::Ip | Link::Datagram => Err(DropReason::Unsupported),
        }
    }

    fn translate_unsecured<'a>(
        &mut self,
        dir: Direction,
        rule: &Rule,
        v: &FrameView<'_>,
        now: u64,
        buf: &'a mut Vec<u8>,
    ) -> Verdict<'a> {
        Self::layer2_output_allowed(v)?;
        let out = Self::output(&self.store, self.profile, rule, self.ivs.as_mut(), now);
        self.translator.unsecured(v, out, buf)?;
        self.bump(dir, |c| c.translated += 1);
        Ok(rewritten(buf))
    }

    fn translate_verified<'a>(
        &mut self,
        dir: Direction,
        rule: &Rule,
        v: &FrameView<'_>,
        ok: &Verified<'_>,
        now: u64,
        buf: &'a mut Vec<u8>,
    ) -> Verdict<'a> {
        Self::layer2_output_allowed(v)?;
        let out = Self::output(&self.store, self.profile, rule, self.ivs.as_mut(), now);
        self.translator.verified(v, ok, out, buf)?;
        self.bump(dir, |c| c.translated += 1);
        Ok(rewritten(buf))
    }
}

/// Forward the input as it came.
fn unchanged(input: &[u8]) -> Decision<'_> {
    Decision::Forward(Forward::Unchanged(input))
}

/// Forward the frame just written into the caller's buffer (all of it: every writer resizes
/// the buffer to its output).
fn rewritten(out: &mut Vec<u8>) -> Decision<'_> {
    Decision::Forward(Forward::Rewritten(out.as_slice()))
}

/// What the headers of an Ethernet frame that did not classify still say, for its drop event:
/// the kind (GOOSE, SV, GSE management, an IEC 61850 datagram) and, for layer 2, the APPID
/// (`view::classify_cut`, `view::cut_l2`: the readers of frames a capture cut). A GOOSE frame
/// cut to 100 octets or with an empty security extension was logged with neither, though
/// both were readable.
fn malformed_facts(input: &[u8]) -> (Option<&'static str>, Option<u16>) {
    if let Some(c) = view::cut_l2(input) {
        return (Some(c.kind.name()), Some(c.appid));
    }
    match view::classify_cut(input) {
        view::CutFrame::Iec61850(k) => (Some(k.name()), None),
        view::CutFrame::Other | view::CutFrame::Unknown => (None, None),
    }
}

#[cfg(test)]
mod link_tests;

#[cfg(test)]
mod reuse_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use gander_sec::default_provider;
    use gander_sec::spdu::{self, RandomIv, SendParams};
    use gander_testkit::frames::{self as craft, UdpAddrs};
    use gander_wire::ethernet::{self, EthernetRepr, VlanTag};
    use gander_wire::ip;
    use gander_wire::l2_frame::L2Frame;
    use gander_wire::spdu::{PayloadElement, SessionPdu, SpduId};
    use std::path::Path;

    const KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 2
enc = "aes-128-gcm"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 3
mac = "hmac-sha256-80"
key_ascii = "old-key-old-key!"
not_before = 100
not_after = 200
[[key]]
id = 4
mac = "hmac-sha256-80"
key_ascii = "new-key-new-key!"
not_before = 150
[[key]]
id = 5
mac = "hmac-sha256-128"
key_ascii = "ied-outbound-key"
"#;

    const IED_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const SUB_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
    const GOOSE_DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];

    fn policy(rules: &str) -> Policy {
        try_policy(rules).unwrap()
    }

    /// Builds a policy (top-level settings, then `[[rule]]`s) or returns its configuration error.
    fn try_policy(rules: &str) -> Result<Policy, ConfigError> {
        let (top, rules) = match rules.find("[[rule]]") {
            Some(i) => rules.split_at(i),
            None => (rules, ""),
        };
        let text = format!(
            "driver = \"udp\"\nkeys = \"k.toml\"\n{top}\n[udp]\nied_listen = \"127.0.0.1:1\"\nnet_peer = \"127.0.0.1:2\"\nnet_listen = \"127.0.0.1:3\"\nied_peer = \"127.0.0.1:4\"\n{rules}"
        );
        let cfg = Config::from_toml(&text, Path::new(".")).unwrap();
        let store = KeyStore::from_toml(KEYS, Path::new("."), default_provider()).unwrap();
        Policy::new(&cfg, store)
    }

    fn addrs() -> UdpAddrs {
        UdpAddrs {
            src_mac: IED_MAC,
            dst_mac: SUB_MAC,
            src_ip: [10, 85, 0, 1],
            dst_ip: [10, 85, 0, 2],
            src_port: 102,
            dst_port: 102,
        }
    }

    fn rgoose(appid: u16, n: u32) -> Vec<u8> {
        craft::udp_frame(
            &addrs(),
            &craft::rgoose_spdu(Profile::Standard, appid, n, 1, n),
        )
    }

    /// The gateway under test: the IED's own traffic leaves protected with key 5; inbound
    /// traffic must verify.
    const PROTECT_VERIFY: &str = r#"
other_inbound = "drop"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 5
[[rule]]
direction = "inbound"
action = "verify"
"#;

    /// A remote publisher's gateway: protects with key 1 (AES-GCM key 2 in some tests).
    fn publisher(key: u32) -> Policy {
        policy(&format!(
            "[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = {key}\n"
        ))
    }

    fn fwd(d: Decision<'_>) -> Vec<u8> {
        match d {
            Decision::Forward(b) => b.to_vec(),
            Decision::Drop(r) => panic!("dropped: {r}"),
        }
    }

    #[test]
    fn protect_then_verify_strip_round_trips() {
        let mut tx = publisher(1);
        let mut gw = policy(PROTECT_VERIFY);
        let plain = rgoose(0x1000, 7);
        let secured = fwd(tx.handle(Direction::Outbound, &plain, 0, &mut Vec::new()));
        assert_ne!(secured, plain);
        let back = fwd(gw.handle(Direction::Inbound, &secured, 0, &mut Vec::new()));
        assert_eq!(back, plain, "stripping restores the legacy frame");
        let c = gw.counters();
        assert_eq!(
            (
                tx.counters().outbound.protected,
                c.inbound.verified,
                c.inbound.stripped
            ),
            (1, 1, 1)
        );
        // The same frame again is a replay.
        assert_eq!(
            gw.handle(Direction::Inbound, &secured, 0, &mut Vec::new()),
            Decision::Drop(DropReason::Replay)
        );
        assert_eq!(gw.counters().inbound.dropped["replay"], 1);
    }

    #[test]
    fn any_flipped_bit_is_dropped() {
        let mut tx = publisher(1);
        let mut n = 0;
        let base = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 0), 0, &mut Vec::new()));
        for i in 12 * 8..base.len() * 8 {
            n += 1;
            let mut f = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, n), 0, &mut Vec::new()));
            f[i / 8] ^= 1 << (i % 8);
            let mut rx = policy(PROTECT_VERIFY);
            assert!(
                !rx.handle(Direction::Inbound, &f, 0, &mut Vec::new())
                    .is_forward(),
                "bit {i}"
            );
        }
        // And an unflipped one passes.
        let mut rx = policy(PROTECT_VERIFY);
        assert!(rx
            .handle(Direction::Inbound, &base, 0, &mut Vec::new())
            .is_forward());
    }

    #[test]
    fn with_other_pass_only_non_iec_damage_gets_through() {
        let rules = PROTECT_VERIFY.replace("other_inbound = \"drop\"", "");
        let mut tx = publisher(1);
        let mut n = 0;
        let len = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 0), 0, &mut Vec::new())).len();
        for i in 0..len * 8 {
            n += 1;
            let mut f = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, n), 0, &mut Vec::new()));
            f[i / 8] ^= 1 << (i % 8);
            let mut rx = policy(&rules);
            if let Decision::Forward(out) = rx.handle(Direction::Inbound, &f, 0, &mut Vec::new()) {
                // Only Ethernet addresses (outside every IEC 62351-6 MAC), the EtherType (which
                // makes it not IPv4 at all) and the IPv4 protocol (which makes it not UDP, so
                // no IED's UDP socket can receive it; checksums are judged only on IEC
                // datagrams, as the NIC may leave them to the device) can be hit and still be
                // forwarded as non-IEC traffic.
                const IPV4_PROTOCOL: usize = 14 + 9;
                assert!(i < 14 * 8 || i / 8 == IPV4_PROTOCOL, "bit {i}");
                if i / 8 == IPV4_PROTOCOL {
                    assert_ne!(out[IPV4_PROTOCOL], 17, "bit {i}: still UDP");
                }
                assert!(
                    i < 12 * 8
                        || view::classify(Profile::Standard, &out).map(|v| v.kind())
                            == Ok(Kind::Other),
                    "bit {i}"
                );
            }
        }
    }

    #[test]
    fn truncations_unsecured_unknown_and_expired_keys_are_dropped() {
        let mut tx = publisher(1);
        let f = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 1), 0, &mut Vec::new()));
        let mut rx = policy(PROTECT_VERIFY);
        for len in 0..f.len() {
            assert!(
                !rx.handle(Direction::Inbound, &f[..len], 0, &mut Vec::new())
                    .is_forward(),
                "len {len}"
            );
        }
        assert_eq!(
            rx.handle(Direction::Inbound, &rgoose(0x1000, 2), 0, &mut Vec::new()),
            Decision::Drop(DropReason::Unsecured)
        );
        // Unknown key id: a receiver without key 1.
        let mut other = policy("[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\n");
        other.replace_keys(KeyStore::new());
        assert_eq!(
            other.handle(Direction::Inbound, &f, 0, &mut Vec::new()),
            Decision::Drop(DropReason::UnknownKey)
        );
        // Expired key: key 3 ends at 200.
        let mut tx3 = policy("[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = 3\n[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\n");
        let f3 = fwd(tx3.handle(
            Direction::Outbound,
            &rgoose(0x1000, 1),
            120,
            &mut Vec::new(),
        ));
        assert_eq!(
            tx3.handle(Direction::Inbound, &f3, 250, &mut Vec::new()),
            Decision::Drop(DropReason::KeyExpired)
        );
        assert_eq!(
            tx3.handle(
                Direction::Outbound,
                &rgoose(0x1000, 2),
                250,
                &mut Vec::new()
            ),
            Decision::Drop(DropReason::NoValidKey)
        );
    }

    #[test]
    fn rotation_picks_the_newest_valid_key() {
        let mut gw =
            policy("[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_ids = [3, 4]\n");
        let key_of = |f: &[u8]| {
            let loc = ip::locate_udp(f).unwrap();
            SessionPdu::parse(&f[loc.payload], &Profile::Standard.dialect())
                .unwrap()
                .header
                .security
                .key_id()
        };
        assert_eq!(
            key_of(&fwd(gw.handle(
                Direction::Outbound,
                &rgoose(1, 1),
                120,
                &mut Vec::new()
            ))),
            3
        );
        assert_eq!(
            key_of(&fwd(gw.handle(
                Direction::Outbound,
                &rgoose(1, 2),
                160,
                &mut Vec::new()
            ))),
            4
        );
        assert_eq!(
            key_of(&fwd(gw.handle(
                Direction::Outbound,
                &rgoose(1, 3),
                500,
                &mut Vec::new()
            ))),
            4
        );
        assert_eq!(
            gw.handle(Direction::Outbound, &rgoose(1, 4), 50, &mut Vec::new()),
            Decision::Drop(DropReason::NoValidKey)
        );
    }

    #[test]
    fn encrypted_frames_are_matched_by_their_authenticated_appid() {
        let mut gw = policy(
            r#"
[[rule]]
direction = "inbound"
appid = 0x2000
action = "drop"
[[rule]]
direction = "inbound"
action = "verify"
keep_security = true
"#,
        );
        let mut tx = publisher(2);
        let a = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 1), 0, &mut Vec::new()));
        let b = fwd(tx.handle(Direction::Outbound, &rgoose(0x2000, 2), 0, &mut Vec::new()));
        assert_eq!(
            fwd(gw.handle(Direction::Inbound, &a, 0, &mut Vec::new())),
            a
        );
        assert_eq!(
            gw.handle(Direction::Inbound, &b, 0, &mut Vec::new()),
            Decision::Drop(DropReason::Policy)
        );
    }

    fn goose(appid: u16, st: u32, sq: u32, vlan: bool) -> Vec<u8> {
        let tag = vlan.then_some(VlanTag {
            pcp: 4,
            dei: false,
            vid: 10,
        });
        craft::goose_frame(IED_MAC, GOOSE_DST, tag, appid, st, sq)
    }

    #[test]
    fn goose_protect_verify_strip_with_and_without_vlan() {
        for vlan in [false, true] {
            let mut gw = policy(PROTECT_VERIFY);
            let mut tx = publisher(1);
            for sq in 0..3 {
                let plain = goose(0x0001, 1, sq, vlan);
                let secured = fwd(tx.handle(Direction::Outbound, &plain, 0, &mut Vec::new()));
                assert!(secured.len() > plain.len());
                assert_eq!(
                    fwd(gw.handle(Direction::Inbound, &secured, 0, &mut Vec::new())),
                    plain
                );
                assert_eq!(
                    gw.handle(Direction::Inbound, &secured, 0, &mut Vec::new()),
                    Decision::Drop(DropReason::Replay)
                );
            }
            let s = fwd(tx.handle(
                Direction::Outbound,
                &goose(1, 2, 0, vlan),
                0,
                &mut Vec::new(),
            ));
            let start = if vlan { 16 } else { 12 };
            for i in start * 8..s.len() * 8 {
                let mut f = s.clone();
                f[i / 8] ^= 1 << (i % 8);
                let mut rx = policy(PROTECT_VERIFY);
                assert!(
                    !rx.handle(Direction::Inbound, &f, 0, &mut Vec::new())
                        .is_forward(),
                    "bit {i}"
                );
            }
            // Unsecured GOOSE does not pass a verify rule.
            assert_eq!(
                gw.handle(
                    Direction::Inbound,
                    &goose(1, 9, 0, vlan),
                    0,
                    &mut Vec::new()
                ),
                Decision::Drop(DropReason::Unsecured)
            );
        }
    }

    #[test]
    fn translate_goose_to_rgoose_and_back() {
        let rules = r#"
[[rule]]
direction = "outbound"
kind = "goose"
action = "translate"
key_id = 1
[rule.translate]
src_mac = "02:00:00:00:00:fe"
dst_mac = "02:00:00:00:00:02"
src_ip = "10.85.0.254"
dst_ip = "10.85.0.2"
[[rule]]
direction = "inbound"
kind = "r-goose"
action = "translate"
[rule.translate]
src_mac = "02:00:00:00:00:fe"
dst_mac = "01:0c:cd:01:00:01"
"#;
        let mut gw = policy(rules);
        let plain = goose(0x0001, 1, 0, false);
        let r = fwd(gw.handle(Direction::Outbound, &plain, 0, &mut Vec::new()));
        let loc = ip::locate_udp(&r).unwrap();
        assert_eq!(loc.dst_addr, [10, 85, 0, 2]);
        let back = fwd(gw.handle(Direction::Inbound, &r, 0, &mut Vec::new()));
        let (l2b, _) = L2Frame::parse(&back).unwrap();
        let (l2p, _) = L2Frame::parse(&plain).unwrap();
        assert_eq!(l2b.body, l2p.body);
        assert_eq!(gw.counters().outbound.translated, 1);
        // Inbound translation requires verified input by default.
        let unsecured = rgoose(0x0001, 5);
        assert_eq!(
            gw.handle(Direction::Inbound, &unsecured, 0, &mut Vec::new()),
            Decision::Drop(DropReason::Unsecured)
        );
    }

    #[test]
    fn other_traffic_default_and_damaged_udp() {
        let mut gw = policy(
            "other = \"drop\"\n[[rule]]\ndirection = \"outbound\"\nappid = 5\naction = \"pass\"\n",
        );
        let arp = [0xffu8; 60];
        assert_eq!(
            gw.handle(Direction::Outbound, &arp, 0, &mut Vec::new()),
            Decision::Drop(DropReason::Other)
        );
        assert!(gw
            .handle(Direction::Outbound, &rgoose(5, 1), 0, &mut Vec::new())
            .is_forward());
        assert_eq!(
            gw.handle(Direction::Outbound, &rgoose(6, 1), 0, &mut Vec::new()),
            Decision::Drop(DropReason::NoRule)
        );
        let mut bad = rgoose(5, 2);
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert_eq!(
            gw.handle(Direction::Outbound, &bad, 0, &mut Vec::new()),
            Decision::Drop(DropReason::BadChecksum)
        );
        let mut frag = rgoose(5, 3);
        frag[14 + 6] |= 0x20; // more fragments
        let c = ip::checksum(&{
            let mut h = frag[14..34].to_vec();
            h[10] = 0;
            h[11] = 0;
            h
        });
        frag[24..26].copy_from_slice(&c.to_be_bytes());
        assert_eq!(
            gw.handle(Direction::Outbound, &frag, 0, &mut Vec::new()),
            Decision::Drop(DropReason::IpFragment)
        );
        let mut pass = policy("[[rule]]\ndirection = \"outbound\"\naction = \"drop\"\n");
        assert!(pass
            .handle(Direction::Outbound, &arp, 0, &mut Vec::new())
            .is_forward());
    }

    #[test]
    fn config_errors_are_reported() {
        let base = "driver = \"l2\"\nkeys = \"k\"\n[l2]\nied = \"a\"\nnet = \"b\"\n";
        for bad in [
            "[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\n",
            "[[rule]]\ndirection = \"sideways\"\naction = \"pass\"\n",
            "[[rule]]\ndirection = \"inbound\"\naction = \"translate\"\n",
            "bogus = 1\n",
        ] {
            assert!(
                Config::from_toml(&format!("{base}{bad}"), Path::new(".")).is_err(),
                "{bad}"
            );
        }
        assert!(Config::from_toml("driver = \"l2\"\nkeys = \"k\"\n", Path::new(".")).is_err());
        let cfg = Config::from_toml(
            &format!(
                "{base}[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = 99\n"
            ),
            Path::new("."),
        )
        .unwrap();
        assert!(Policy::new(&cfg, KeyStore::new()).is_err());
    }

    // ---- the bypass classes: replay through unauthenticated fields, tag stacks, key
    // bindings, junk behind a verified APDU, one replay semantics ----

    #[test]
    fn replay_from_another_address_or_port_is_a_replay() {
        let mut tx = publisher(1);
        let mut gw = policy(PROTECT_VERIFY);
        let f = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 7), 0, &mut Vec::new()));
        assert!(gw
            .handle(Direction::Inbound, &f, 0, &mut Vec::new())
            .is_forward());
        for copy in [
            f.clone(),
            craft::resourced(&f, [10, 85, 0, 99], 102),
            craft::resourced(&f, [10, 85, 0, 1], 40000),
            craft::resourced(&f, [192, 0, 2, 1], 9),
        ] {
            assert_eq!(
                gw.handle(Direction::Inbound, &copy, 0, &mut Vec::new()),
                Decision::Drop(DropReason::Replay)
            );
        }
        // An older number (a counter that "wrapped") from a fresh address is too old.
        let newer = fwd(tx.handle(
            Direction::Outbound,
            &rgoose(0x1000, 300),
            0,
            &mut Vec::new(),
        ));
        assert!(gw
            .handle(Direction::Inbound, &newer, 0, &mut Vec::new())
            .is_forward());
        let old = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 8), 0, &mut Vec::new()));
        assert_eq!(
            gw.handle(
                Direction::Inbound,
                &craft::resourced(&old, [10, 85, 0, 77], 7777),
                0,
                &mut Vec::new()
            ),
            Decision::Drop(DropReason::Replay)
        );
    }

    #[test]
    fn layer2_goose_replay_ignores_the_source_mac() {
        let mut tx = publisher(1);
        let mut gw = policy(PROTECT_VERIFY);
        let f = fwd(tx.handle(
            Direction::Outbound,
            &goose(1, 1, 0, false),
            0,
            &mut Vec::new(),
        ));
        assert!(gw
            .handle(Direction::Inbound, &f, 0, &mut Vec::new())
            .is_forward());
        let mut other_src = f.clone();
        other_src[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0x66]);
        assert_eq!(
            gw.handle(Direction::Inbound, &other_src, 0, &mut Vec::new()),
            Decision::Drop(DropReason::Replay)
        );
    }

    const STACKS: &[&[(u16, u16)]] = &[
        &[(0x88a8, 100)],
        &[(0x88a8, 100), (0x8100, 10)],
        &[(0x8100, 100), (0x8100, 10)],
        &[(0x9100, 5)],
        &[(0x9200, 5), (0x8100, 0)],
        &[(0x8100, 0), (0x8100, 0), (0x8100, 0), (0x88a8, 1)],
    ];

    #[test]
    fn tag_stacks_do_not_hide_unsecured_traffic() {
        // `other = "pass"` (the documented default): IEC traffic behind any stack is still
        // IEC traffic, judged by the verify rule.
        let rules = PROTECT_VERIFY.replace("other_inbound = \"drop\"", "");
        let mut gw = policy(&rules);
        for stack in STACKS {
            for plain in [goose(1, 1, 0, false), rgoose(0x1000, 1)] {
                assert_eq!(
                    gw.handle(
                        Direction::Inbound,
                        &craft::tagged(&plain, stack),
                        0,
                        &mut Vec::new()
                    ),
                    Decision::Drop(DropReason::Unsecured),
                    "{stack:x?}"
                );
            }
        }
        // Deeper than MAX_TAGS: refused, never "other".
        let deep: Vec<(u16, u16)> = vec![(0x8100, 0); ethernet::MAX_TAGS + 1];
        assert_eq!(
            gw.handle(
                Direction::Inbound,
                &craft::tagged(&goose(1, 1, 0, false), &deep),
                0,
                &mut Vec::new()
            ),
            Decision::Drop(DropReason::Malformed)
        );
        assert_eq!(gw.counters().inbound.other_passed, 0);
    }

    #[test]
    fn secured_traffic_behind_tag_stacks_verifies_and_keeps_its_tags() {
        let mut tx = publisher(1);
        let mut gw = policy(PROTECT_VERIFY);
        for (i, stack) in STACKS.iter().enumerate() {
            let i = i as u32;
            for plain in [goose(1, 1, i, false), rgoose(0x1000, i)] {
                let plain = craft::tagged(&plain, stack);
                let secured = fwd(tx.handle(Direction::Outbound, &plain, 0, &mut Vec::new()));
                assert_eq!(
                    &secured[..12 + 4 * stack.len()],
                    &plain[..12 + 4 * stack.len()]
                );
                assert_eq!(
                    fwd(gw.handle(Direction::Inbound, &secured, 0, &mut Vec::new())),
                    plain,
                    "{stack:x?}"
                );
            }
        }
    }

    #[test]
    fn key_ids_on_a_verify_rule_are_enforced() {
        let mut gw =
            policy("[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\nkey_ids = [1]\n");
        let f1 =
            fwd(publisher(1).handle(Direction::Outbound, &rgoose(0x1000, 1), 0, &mut Vec::new()));
        let f2 =
            fwd(publisher(2).handle(Direction::Outbound, &rgoose(0x1000, 2), 0, &mut Vec::new()));
        let g2 = fwd(publisher(5).handle(
            Direction::Outbound,
            &goose(1, 1, 0, false),
            0,
            &mut Vec::new(),
        ));
        assert!(gw
            .handle(Direction::Inbound, &f1, 0, &mut Vec::new())
            .is_forward());
        assert_eq!(
            gw.handle(Direction::Inbound, &f2, 0, &mut Vec::new()),
            Decision::Drop(DropReason::KeyNotAllowed)
        );
        assert_eq!(
            gw.handle(Direction::Inbound, &g2, 0, &mut Vec::new()),
            Decision::Drop(DropReason::KeyNotAllowed)
        );
    }

    /// The trap: an outbound protect rule with no kind or APPID claims every inbound frame
    /// secured with its key as the gateway's own output, so an inbound verify rule for that key
    /// can never deliver one. Refused at start-up (and by `--check`), naming both rules and the
    /// fix; scoped to the IED's own APPID it is fine.
    #[test]
    fn a_protect_rule_that_reflects_all_verified_traffic_is_refused() {
        let trap = "[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = 1\n[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\nkey_id = 1\n";
        let e = try_policy(trap).unwrap_err().to_string();
        assert!(
            e.contains("rule 1 (outbound protect) names no kind and no appid"),
            "{e}"
        );
        assert!(e.contains("rule 2 (inbound verify)"), "{e}");
        assert!(e.contains("scope rule 1"), "{e}");
        // The frames really are lost: with reflected = "allow" the same rules build, and an
        // inbound frame secured with key 1 by a remote publisher is delivered.
        let mut allowed = try_policy(&format!("reflected = \"allow\"\n{trap}")).unwrap();
        assert!(allowed.warnings().is_empty());
        let remote =
            fwd(publisher(1).handle(Direction::Outbound, &rgoose(0x1000, 1), 0, &mut Vec::new()));
        assert!(allowed
            .handle(Direction::Inbound, &remote, 0, &mut Vec::new())
            .is_forward());
        // Scoped to the IED's own GOOSE APPID, inbound R-GOOSE with key 1 is not claimed.
        let scoped = "[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkind = \"goose\"\nappid = 1\nkey_id = 1\n[[rule]]\ndirection = \"inbound\"\nkind = \"r-goose\"\naction = \"verify\"\nkey_id = 1\n";
        let p = try_policy(scoped).unwrap();
        assert!(p.warnings().is_empty(), "{:?}", p.warnings());
        // Same kind, same APPID, same key: the inbound rule's whole class is claimed again.
        let same = "[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkind = \"goose\"\nappid = 1\nkey_id = 1\n[[rule]]\ndirection = \"inbound\"\nkind = \"goose\"\nappid = 1\naction = \"verify\"\nkey_id = 1\n";
        let e = try_policy(same).unwrap_err().to_string();
        assert!(e.contains("secures appid 0x0001"), "{e}");
    }

    /// An inbound verify rule that takes any key loses only the frames secured with the
    /// outbound key: valid, but said.
    #[test]
    fn a_protect_rule_that_reflects_one_key_is_a_warning() {
        let p = try_policy(PROTECT_VERIFY).unwrap();
        assert_eq!(p.warnings().len(), 1, "{:?}", p.warnings());
        assert!(p.warnings()[0].contains("key id 5"), "{:?}", p.warnings());
        assert!(
            p.warnings()[0].contains("accepts any key"),
            "{:?}",
            p.warnings()
        );
    }

    #[test]
    fn reflected_frames_are_refused() {
        let mut gw = policy(PROTECT_VERIFY);
        for plain in [goose(1, 1, 0, false), rgoose(0x1000, 1)] {
            let out = fwd(gw.handle(Direction::Outbound, &plain, 0, &mut Vec::new()));
            assert_eq!(
                gw.handle(Direction::Inbound, &out, 0, &mut Vec::new()),
                Decision::Drop(DropReason::Reflected)
            );
        }
        // Allowed only when the config says so (benchmarks that echo frames).
        let mut echo = policy(&format!("reflected = \"allow\"\n{PROTECT_VERIFY}"));
        let out = fwd(echo.handle(Direction::Outbound, &rgoose(0x1000, 2), 0, &mut Vec::new()));
        assert!(echo
            .handle(Direction::Inbound, &out, 0, &mut Vec::new())
            .is_forward());
    }

    #[test]
    fn key_file_appids_bind_keys_to_publishers() {
        let keys = format!("{KEYS}[[key]]\nid = 6\nmac = \"hmac-sha256-128\"\nkey_ascii = \"bound-to-0x1000!\"\nappids = [0x1000]\n");
        let store = KeyStore::from_toml(&keys, Path::new("."), default_provider()).unwrap();
        // A publisher that holds key 6 but has no binding on its side.
        let mut loose = KeyEntry::new(
            6,
            gander_sec::MacAlgorithm::HmacSha256_128,
            gander_sec::EncAlgorithm::None,
            b"bound-to-0x1000!",
            default_provider(),
        )
        .unwrap();
        loose.appids = None;
        let mut s = KeyStore::new();
        s.insert(loose).unwrap();
        let mut tx =
            policy("[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = 1\n");
        tx.replace_keys(s);
        Arc::make_mut(&mut tx.rules[0]).keys = vec![6];
        let ok = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 1), 0, &mut Vec::new()));
        let bad = fwd(tx.handle(Direction::Outbound, &rgoose(0x2000, 2), 0, &mut Vec::new()));
        let mut gw = policy(PROTECT_VERIFY);
        gw.replace_keys(store);
        assert!(gw
            .handle(Direction::Inbound, &ok, 0, &mut Vec::new())
            .is_forward());
        assert_eq!(
            gw.handle(Direction::Inbound, &bad, 0, &mut Vec::new()),
            Decision::Drop(DropReason::KeyNotAllowed)
        );
    }

    #[test]
    fn junk_behind_a_verified_apdu_is_refused() {
        let store = KeyStore::from_toml(KEYS, Path::new("."), default_provider()).unwrap();
        let key = store.get(1).unwrap();
        // A key holder's element whose APDU is a valid GOOSE APDU plus junk.
        let mut apdu = craft::goose_apdu(1, 1, 2);
        apdu.extend_from_slice(&[0xde, 0xad]);
        let el = PayloadElement {
            payload_type: 0x81,
            simulation: 0,
            appid: 0x1000,
            apdu: &apdu,
        };
        let params = SendParams {
            spdu_id: SpduId::Goose,
            spdu_number: 1,
            now: 0,
        };
        let mut spdu = Vec::new();
        spdu::protect(
            Profile::Standard,
            key,
            params,
            &[el],
            &mut RandomIv,
            &mut spdu,
        )
        .unwrap();
        let f = craft::udp_frame(&addrs(), &spdu);
        let mut gw = policy(PROTECT_VERIFY);
        assert_eq!(
            gw.handle(Direction::Inbound, &f, 0, &mut Vec::new()),
            Decision::Drop(DropReason::Malformed)
        );
        // Layer 2: bytes after Length in a frame longer than the minimum are not padding, in
        // keep mode too.
        let mut keep = policy(&PROTECT_VERIFY.replace(
            "action = \"verify\"",
            "action = \"verify\"\nkeep_security = true",
        ));
        let mut g = fwd(publisher(1).handle(
            Direction::Outbound,
            &goose(1, 1, 0, false),
            0,
            &mut Vec::new(),
        ));
        g.extend_from_slice(&[0; 8]);
        assert_eq!(
            keep.handle(Direction::Inbound, &g, 0, &mut Vec::new()),
            Decision::Drop(DropReason::Malformed)
        );
    }

    #[test]
    fn unknown_config_fields_and_useless_keys_are_errors() {
        let base = "driver = \"l2\"\nkeys = \"k\"\n[l2]\nied = \"a\"\nnet = \"b\"\n";
        for bad in [
            "[[rule]]\ndirection = \"inbound\"\naction = \"pass\"\nkey_ids = [1]\n",
            "[[rule]]\ndirection = \"inbound\"\naction = \"drop\"\nkey_id = 1\n",
            "[[rule]]\ndirection = \"inbound\"\naction = \"pass\"\nkeep_security = true\n",
            "[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\nverify_input = true\n",
            "[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\nkey_ids = []\n",
            "[[rule]]\ndirection = \"outbound\"\nkind = \"sv\"\naction = \"translate\"\nkey_id = 1\n",
            "[[rule]]\ndirection = \"outbound\"\nkind = \"gse-management\"\naction = \"protect\"\nkey_id = 1\n",
            "[[pin]]\nappid = 1\n",
            "[[pin]]\nappid = 1\nsrc_mac = \"02:00:00:00:00:01\"\nbogus = 2\n",
            "reflected = \"sometimes\"\n",
        ] {
            assert!(
                Config::from_toml(&format!("{base}{bad}"), Path::new(".")).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn pins_hold_the_unauthenticated_fields() {
        let mut tx = publisher(1);
        let cfg = format!(
            "{PROTECT_VERIFY}[[pin]]\nappid = 0x1000\nsrc_mac = \"02:00:00:00:00:01\"\nsrc_ip = \"10.85.0.1\"\nsrc_port = 102\nuntagged = true\n"
        );
        let mut gw = policy(&cfg);
        let f = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 1), 0, &mut Vec::new()));
        let moved = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 2), 0, &mut Vec::new()));
        let moved = craft::resourced(&moved, [10, 85, 0, 9], 102);
        let tagged_f = craft::tagged(
            &fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 3), 0, &mut Vec::new())),
            &[(0x8100, 4)],
        );
        assert!(gw
            .handle(Direction::Inbound, &f, 0, &mut Vec::new())
            .is_forward());
        assert_eq!(
            gw.handle(Direction::Inbound, &moved, 0, &mut Vec::new()),
            Decision::Drop(DropReason::PinMismatch)
        );
        assert_eq!(
            gw.handle(Direction::Inbound, &tagged_f, 0, &mut Vec::new()),
            Decision::Drop(DropReason::PinMismatch)
        );
        // A refused frame did not move the replay window: the publisher's next frame passes.
        let next = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 4), 0, &mut Vec::new()));
        assert!(gw
            .handle(Direction::Inbound, &next, 0, &mut Vec::new())
            .is_forward());
    }

    #[test]
    fn ipv6_rgoose_is_judged_like_ipv4() {
        let plain_v4 = rgoose(0x1000, 1);
        let loc = ip::locate_udp(&plain_v4).unwrap();
        let eth = EthernetRepr {
            dst: [0x33, 0x33, 0, 0, 0, 1],
            src: IED_MAC,
            vlan: None,
            ethertype: 0,
        };
        let v6 = |payload: &[u8]| {
            gander_wire::ipv6::Udp6FrameRepr {
                eth,
                src_addr: [0xfd; 16],
                dst_addr: [0xff; 16],
                src_port: 102,
                dst_port: 102,
                traffic_class: 0,
                hop_limit: 64,
            }
            .to_vec(payload)
            .unwrap()
        };
        let plain = v6(&plain_v4[loc.payload]);
        let mut gw = policy(PROTECT_VERIFY);
        assert_eq!(
            gw.handle(Direction::Inbound, &plain, 0, &mut Vec::new()),
            Decision::Drop(DropReason::Unsecured)
        );
        let secured = fwd(publisher(1).handle(Direction::Outbound, &plain, 0, &mut Vec::new()));
        assert_eq!(
            fwd(gw.handle(Direction::Inbound, &secured, 0, &mut Vec::new())),
            plain
        );
        assert_eq!(
            gw.handle(Direction::Inbound, &secured, 0, &mut Vec::new()),
            Decision::Drop(DropReason::Replay)
        );
    }

    fn sv(appid: u16, sv_id: &str, smp: u16) -> Vec<u8> {
        craft::sv_frame(
            IED_MAC,
            [0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01],
            None,
            appid,
            sv_id,
            smp,
        )
    }

    /// Frame `i` of a 4800/s stream arrives at i * 208 333 ns.
    fn sv_at(i: u64) -> u64 {
        i * 1_000_000_000 / 4800
    }

    #[test]
    fn a_stream_wrapping_below_the_assumed_wrap_is_said_once() {
        // A 50 Hz merging unit (smpCnt 0..3999, 4000 a second, no smpRate) under the default
        // sv_wrap of 4800: its 0 after 3999 is dropped as replay, and the reason said once.
        let mut tx = publisher(1);
        let mut gw = policy(PROTECT_VERIFY);
        let (etx, erx) = std::sync::mpsc::sync_channel(16);
        gw.set_events(crate::events::EventSink::new(etx, 100));
        let at = |i: u64| i * 250_000;
        let mut dropped = 0;
        for (i, smp) in (3995..4000).chain(0..3).enumerate() {
            let s = fwd(tx.handle_at(
                Direction::Outbound,
                &sv(0x4000, "MU01", smp),
                0,
                at(i as u64),
                &mut Vec::new(),
            ));
            match gw.handle_at(
                Direction::Inbound,
                &s,
                0,
                at(i as u64) + 50_000,
                &mut Vec::new(),
            ) {
                Decision::Drop(DropReason::Replay) => dropped += 1,
                d => assert!(d.is_forward(), "smpCnt {smp}: {d:?}"),
            }
        }
        assert_eq!(dropped, 3, "0, 1 and 2 are 801-803 samples ahead");
        let said: Vec<_> = erx
            .try_iter()
            .filter(|e: &crate::events::SecurityEvent| e.kind == EventKind::SvWrap)
            .collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].message.contains("wraps at 4000"), "{:?}", said[0]);
    }

    #[test]
    fn sv_protect_verify_strip_and_replay() {
        let mut tx = publisher(1);
        let mut gw = policy(PROTECT_VERIFY);
        let mut secured = vec![];
        // Across the wrap at 4800.
        for (i, smp) in (4795..4800).chain(0..5).enumerate() {
            let plain = sv(0x4000, "MU01", smp);
            let s = fwd(tx.handle_at(
                Direction::Outbound,
                &plain,
                0,
                sv_at(i as u64),
                &mut Vec::new(),
            ));
            assert!(s.len() > plain.len());
            assert_eq!(&s[12..14], &[0x88, 0xba]);
            let mut out = Vec::new();
            let back = gw.handle_at(
                Direction::Inbound,
                &s,
                0,
                sv_at(i as u64) + 50_000,
                &mut out,
            );
            assert_eq!(
                fwd(back),
                plain,
                "smpCnt {smp}: stripped back to the MU's frame"
            );
            secured.push(s);
        }
        let t = sv_at(10) + 50_000;
        // Duplicates and older frames are replays.
        for s in &secured {
            assert_eq!(
                gw.handle_at(Direction::Inbound, s, 0, t, &mut Vec::new()),
                Decision::Drop(DropReason::Replay)
            );
        }
        // A frame 100 samples ahead of the clock (captured a turn earlier) is a replay too ...
        let ahead = fwd(tx.handle_at(
            Direction::Outbound,
            &sv(0x4000, "MU01", 105),
            0,
            t,
            &mut Vec::new(),
        ));
        assert_eq!(
            gw.handle_at(Direction::Inbound, &ahead, 0, t, &mut Vec::new()),
            Decision::Drop(DropReason::Replay)
        );
        // ... and the stream goes on at its rate.
        let next = fwd(tx.handle_at(
            Direction::Outbound,
            &sv(0x4000, "MU01", 5),
            0,
            t,
            &mut Vec::new(),
        ));
        assert!(gw
            .handle_at(Direction::Inbound, &next, 0, t, &mut Vec::new())
            .is_forward());
        // Another svID is another stream.
        let other = fwd(tx.handle_at(
            Direction::Outbound,
            &sv(0x4000, "MU02", 5),
            0,
            t,
            &mut Vec::new(),
        ));
        assert!(gw
            .handle_at(Direction::Inbound, &other, 0, t, &mut Vec::new())
            .is_forward());
        let c = gw.counters();
        assert_eq!((c.inbound.verified, c.inbound.stripped), (12, 12));
        assert_eq!(c.inbound.dropped["replay"], 11);
        // Every bit flip after the addresses is dropped.
        let s = fwd(tx.handle_at(
            Direction::Outbound,
            &sv(0x4000, "MU01", 6),
            0,
            t,
            &mut Vec::new(),
        ));
        for i in 12 * 8..s.len() * 8 {
            let mut f = s.clone();
            f[i / 8] ^= 1 << (i % 8);
            let mut rx = policy(PROTECT_VERIFY);
            assert!(
                !rx.handle_at(Direction::Inbound, &f, 0, t, &mut Vec::new())
                    .is_forward(),
                "bit {i}"
            );
        }
        // Unsecured SV does not pass a verify rule.
        assert_eq!(
            gw.handle(
                Direction::Inbound,
                &sv(0x4000, "MU01", 7),
                0,
                &mut Vec::new()
            ),
            Decision::Drop(DropReason::Unsecured)
        );
    }

    #[test]
    fn sv_wrap_comes_from_the_config() {
        let mut tx = publisher(1);
        let mut gw50 = policy(&format!(
            "sv_wrap = 4000
{PROTECT_VERIFY}"
        ));
        let mut gw60 = policy(PROTECT_VERIFY);
        let a = fwd(tx.handle_at(
            Direction::Outbound,
            &sv(0x4000, "MU01", 3999),
            0,
            0,
            &mut Vec::new(),
        ));
        let b = fwd(tx.handle_at(
            Direction::Outbound,
            &sv(0x4000, "MU01", 0),
            0,
            0,
            &mut Vec::new(),
        ));
        for gw in [&mut gw50, &mut gw60] {
            assert!(gw
                .handle_at(Direction::Inbound, &a, 0, 0, &mut Vec::new())
                .is_forward());
        }
        // 3999 -> 0 is the next sample at 4000/s, and 801 samples ahead at 4800/s.
        assert!(gw50
            .handle_at(Direction::Inbound, &b, 0, 250_000, &mut Vec::new())
            .is_forward());
        assert_eq!(
            gw60.handle_at(Direction::Inbound, &b, 0, 250_000, &mut Vec::new()),
            Decision::Drop(DropReason::Replay)
        );
    }

    #[test]
    fn sv_policy_config_errors() {
        let cfg = |rules: &str| {
            let text = format!(
                "driver = \"udp\"\nkeys = \"k.toml\"\n[udp]\nied_listen = \"127.0.0.1:1\"\nnet_peer = \"127.0.0.1:2\"\nnet_listen = \"127.0.0.1:3\"\nied_peer = \"127.0.0.1:4\"\n{rules}"
            );
            Config::from_toml(&text, Path::new("."))
        };
        let err =
            |r: Result<Config, ConfigError>| r.err().map(|e| e.to_string()).unwrap_or_default();
        // Without a key.
        let e = err(cfg(
            "[[rule]]\ndirection = \"outbound\"\nkind = \"sv\"\naction = \"protect\"\n",
        ));
        assert!(e.contains("SV protect rule needs a key"), "{e}");
        let e = err(cfg(
            "[[rule]]\ndirection = \"outbound\"\nkind = \"sv\"\naction = \"translate\"\n",
        ));
        assert!(e.contains("SV cannot be translated"), "{e}");
        let e = err(cfg("sv_wrap = 0\n"));
        assert!(e.contains("sv_wrap"), "{e}");
        // An encryption key cannot secure layer 2.
        let c = cfg(
            "[[rule]]\ndirection = \"outbound\"\nkind = \"sv\"\naction = \"protect\"\nkey_id = 2\n",
        )
        .unwrap();
        let store = KeyStore::from_toml(KEYS, Path::new("."), default_provider()).unwrap();
        let e = Policy::new(&c, store)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("cannot secure layer-2 SV"), "{e}");
        // A verify rule for SV with no MAC or signature key in the key file.
        let c =
            cfg("[[rule]]\ndirection = \"inbound\"\nkind = \"sv\"\naction = \"verify\"\n").unwrap();
        let only_gcm = "[[key]]\nid = 2\nenc = \"aes-128-gcm\"\nkey_ascii = \"0123456789ABCDEF\"\n";
        let store = KeyStore::from_toml(only_gcm, Path::new("."), default_provider()).unwrap();
        let e = Policy::new(&c, store)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("SV verify rule needs a key"), "{e}");
    }

    #[test]
    fn ipv6_multicast_rgoose_protect_verify_strip() {
        let group = [0xff, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02];
        let a = craft::Udp6Addrs {
            src_mac: IED_MAC,
            dst_mac: craft::ipv6_multicast_mac(group),
            src_ip: [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            dst_ip: group,
            src_port: 102,
            dst_port: 102,
        };
        let plain = craft::udp6_frame(&a, &craft::rgoose_spdu(Profile::Standard, 0x1000, 3, 1, 3));
        let mut tx = publisher(1);
        let mut gw = policy(PROTECT_VERIFY);
        let s = fwd(tx.handle(Direction::Outbound, &plain, 0, &mut Vec::new()));
        // The UDP checksum of the protected datagram is right (mandatory in IPv6).
        let v = view::classify(Profile::Standard, &s).unwrap();
        assert_eq!(v.kind(), Kind::RGoose);
        assert!(v.secured());
        assert_eq!(
            fwd(gw.handle(Direction::Inbound, &s, 0, &mut Vec::new())),
            plain
        );
        // A zero UDP checksum is refused over IPv6.
        let mut z = s.clone();
        let udp = 14 + 40;
        z[udp + 6] = 0;
        z[udp + 7] = 0;
        assert_eq!(
            policy(PROTECT_VERIFY).handle(Direction::Inbound, &z, 0, &mut Vec::new()),
            Decision::Drop(DropReason::BadChecksum)
        );
    }

    #[test]
    fn frame_verify_and_the_gateway_agree() {
        // One capture with every class: the gateway (verify, keep) forwards exactly the frames
        // `gander frame verify` calls verified, and drops the others with the same word.
        let mut tx = publisher(1);
        let mut frames = vec![];
        let f = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 1), 0, &mut Vec::new()));
        frames.push(f.clone());
        frames.push(f.clone());
        frames.push(craft::resourced(&f, [10, 85, 0, 99], 102));
        frames.push(craft::resourced(&f, [10, 85, 0, 1], 4000));
        let g = fwd(tx.handle(
            Direction::Outbound,
            &goose(1, 1, 0, false),
            0,
            &mut Vec::new(),
        ));
        frames.push(g.clone());
        let mut g2 = g.clone();
        g2[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0x77]);
        frames.push(g2);
        frames.push(craft::tagged(
            &goose(1, 9, 0, false),
            &[(0x88a8, 1), (0x8100, 2)],
        ));
        frames.push(craft::tagged(
            &rgoose(0x1000, 9),
            &[(0x8100, 1), (0x8100, 2)],
        ));
        let mut flipped =
            fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 10), 0, &mut Vec::new()));
        let n = flipped.len();
        flipped[n - 3] ^= 4;
        frames.push(flipped);
        let store = KeyStore::from_toml(KEYS, Path::new("."), default_provider()).unwrap();
        let mut cv = gander_sec::frame::CaptureVerifier::new(Profile::Standard, &store);
        let mut gw = policy(
            "[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\nkeep_security = true\n",
        );
        let mut words = vec![];
        for f in &frames {
            let v = cv.verify(f, 0);
            let gw_word = match gw.handle(Direction::Inbound, f, 0, &mut Vec::new()) {
                Decision::Forward(_) => "verified",
                Decision::Drop(r) => r.name(),
            };
            assert_eq!(v.word(), gw_word, "{v:?}");
            words.push(gw_word);
        }
        assert_eq!(
            words,
            [
                "verified",
                "replay",
                "replay",
                "replay",
                "verified",
                "replay",
                "unsecured",
                "unsecured",
                "bad-checksum"
            ]
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn tpid() -> impl Strategy<Value = u16> {
            prop_oneof![
                Just(0x8100u16),
                Just(0x88a8),
                Just(0x9100),
                Just(0x9200),
                Just(0x9300)
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            /// No tag stack and no change to a field outside the MAC turns a dropped frame into
            /// a forwarded one: unsecured, replayed and reflected frames stay dropped.
            #[test]
            fn no_tag_stack_or_header_mutation_forwards_a_dropped_frame(
                stack in proptest::collection::vec((tpid(), 0u16..4095), 0..10),
                src_mac: [u8; 6],
                dst_mac: [u8; 6],
                src_ip: [u8; 4],
                src_port: u16,
                which in 0usize..5,
            ) {
                let rules = PROTECT_VERIFY.replace("other_inbound = \"drop\"", "");
                let mut gw = policy(&rules);
                let mut tx = publisher(1);
                let secured_r = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 1), 0, &mut Vec::new()));
                let secured_g = fwd(tx.handle(Direction::Outbound, &goose(1, 1, 0, false), 0, &mut Vec::new()));
                // Accept both once, so a copy is a replay.
                prop_assert!(gw.handle(Direction::Inbound, &secured_r, 0, &mut Vec::new()).is_forward());
                prop_assert!(gw.handle(Direction::Inbound, &secured_g, 0, &mut Vec::new()).is_forward());
                let reflected = fwd(gw.handle(Direction::Outbound, &rgoose(0x1000, 5), 0, &mut Vec::new()));
                let base = match which {
                    0 => rgoose(0x1000, 2),
                    1 => goose(1, 2, 0, false),
                    2 => craft::resourced(&secured_r, src_ip, src_port),
                    3 => secured_g.clone(),
                    _ => craft::resourced(&reflected, src_ip, src_port),
                };
                let mut f = craft::tagged(&base, &stack);
                f[0..6].copy_from_slice(&dst_mac);
                f[6..12].copy_from_slice(&src_mac);
                prop_assert!(!gw.handle(Direction::Inbound, &f, 0, &mut Vec::new()).is_forward(), "{:?}", gw.counters().inbound);
            }
        }
    }
}
