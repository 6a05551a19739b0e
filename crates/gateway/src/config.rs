//! The gateway's TOML configuration (documented in `docs/gateway.md`).
//!
//! Every field is checked when the file is read: unknown fields, a rule that protects without a
//! key, a translation without its addresses, and a driver without its section are refused with
//! the rule number and the reason, before any packet is touched.

use gander_sec::Profile;
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read gateway config {}", path.display())]
    Io {
        /// Path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Not valid TOML or wrong field types.
    #[error("gateway config: {0}")]
    Syntax(String),
    /// A semantic error.
    #[error("gateway config: {0}")]
    Invalid(String),
}

/// Which packet driver carries the frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverKind {
    /// AF_PACKET bridge between two interfaces.
    L2,
    /// Kernel bridge plus an iptables NFQUEUE rule (the gateway paper's design).
    Nfqueue,
    /// R-GOOSE/R-SV relay between two UDP sockets (routed networks).
    Udp,
}

/// Traffic direction, seen from the legacy IED.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// IED side to network side.
    Outbound,
    /// Network side to IED side.
    Inbound,
}

impl Direction {
    /// Name in JSON and logs.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Outbound => "outbound",
            Direction::Inbound => "inbound",
        }
    }
}

/// What a rule does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Add security with the rule's key.
    Protect,
    /// Require verified security; keep it or strip it.
    Verify,
    /// Layer-2 GOOSE <-> R-GOOSE.
    Translate,
    /// Forward unchanged.
    Pass,
    /// Drop.
    Drop,
}

/// Which traffic a rule matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum KindMatch {
    /// Every IEC 61850 kind.
    #[default]
    Any,
    /// Layer-2 GOOSE (EtherType 0x88B8).
    Goose,
    /// R-GOOSE (session SI 0xA1 or 0xA0).
    RGoose,
    /// R-SV (session SI 0xA2).
    RSv,
    /// Layer-2 sampled values (IEC 61850-9-2, EtherType 0x88BA): protect, verify, pass or
    /// drop (not translate).
    Sv,
    /// GSE management (EtherType 0x88B9; no IEC 62351-6 protection exists).
    GseManagement,
}

/// Pass or drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PassDrop {
    /// Forward unchanged.
    Pass,
    /// Drop (counted).
    Drop,
}

/// Where translated frames go.
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TranslateToml {
    /// Ethernet source of the frames the gateway writes.
    pub src_mac: Option<String>,
    /// Ethernet destination (GOOSE: a 01-0C-CD-01-xx-xx multicast; R-GOOSE: next hop or
    /// IPv4 multicast MAC).
    pub dst_mac: Option<String>,
    /// 802.1Q VLAN id for layer-2 output.
    pub vlan: Option<u16>,
    /// 802.1Q priority for layer-2 output (IEC 61850-8-1 default 4).
    pub priority: Option<u8>,
    /// IPv4 source for R-GOOSE output.
    pub src_ip: Option<Ipv4Addr>,
    /// IPv4 destination for R-GOOSE output (unicast or multicast).
    pub dst_ip: Option<Ipv4Addr>,
    /// UDP port (default 102).
    pub port: Option<u16>,
}

/// One policy rule as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleToml {
    /// outbound | inbound.
    pub direction: Direction,
    /// APPID to match; absent: any.
    pub appid: Option<u16>,
    /// Kind to match.
    #[serde(default)]
    pub kind: KindMatch,
    /// What to do.
    pub action: Action,
    /// Key for protect (and for protecting translated output).
    pub key_id: Option<u32>,
    /// Keys for protect, chosen by validity window (rotation).
    pub key_ids: Option<Vec<u32>>,
    /// protect/verify: the keys of this GDOI group of `[gdoi]`, as the key server rolls them.
    pub group: Option<String>,
    /// verify: forward with the security kept (true) or stripped for a legacy subscriber.
    #[serde(default)]
    pub keep_security: bool,
    /// translate: require verified input (default: true inbound, false outbound).
    pub verify_input: Option<bool>,
    /// Pin the Ethernet source address (IEC 62351-6 does not cover it).
    pub src_mac: Option<String>,
    /// translate: output addressing.
    pub translate: Option<TranslateToml>,
}

/// What happens to a frame the gateway itself would have protected in the other direction
/// (an IED's own stream sent back at it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Reflected {
    /// Dropped as `reflected` (default).
    #[default]
    Drop,
    /// Judged like any other frame (benchmarks that echo frames back).
    Allow,
}

/// `[[pin]]`: the unauthenticated fields one publisher's frames must carry. IEC 62351-6 does
/// not cover Ethernet addresses, VLAN tags, IP addresses or UDP ports; a site that knows them
/// can pin them per publisher, identified by its (authenticated) APPID.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinToml {
    /// The publisher's APPID.
    pub appid: u16,
    /// Kind (default: any).
    #[serde(default)]
    pub kind: KindMatch,
    /// Direction (default: both).
    pub direction: Option<Direction>,
    /// Ethernet source.
    pub src_mac: Option<String>,
    /// Outermost VLAN id (0 for priority-tagged frames); `untagged = true` for none.
    pub vlan: Option<u16>,
    /// The frame must carry no VLAN tag.
    #[serde(default)]
    pub untagged: bool,
    /// IP source (R-GOOSE/R-SV), IPv4 or IPv6.
    pub src_ip: Option<IpAddr>,
    /// UDP source port (R-GOOSE/R-SV).
    pub src_port: Option<u16>,
}

/// Who carries the traffic that is not IEC 61850 across an `l2` gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Bypass {
    /// gander: every frame goes through the gateway's sockets and the policy (`other`
    /// decides), counted per frame.
    #[default]
    Gander,
    /// The kernel: tc ingress rules bridge non-IEC traffic between the two interfaces and the
    /// sockets only receive IEC 61850 traffic (a classic BPF filter); installed at start,
    /// removed at exit (`docs/gateway.md`, "Data path"). Needs CAP_NET_ADMIN.
    Tc,
}

/// Which packet threads spin on their rings (`[l2] busy_poll`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "BusyPollToml")]
pub enum BusyPoll {
    /// Every thread sleeps in `poll` when its ring is empty.
    #[default]
    Off,
    /// Every thread spins.
    All,
    /// Only the threads of one direction spin.
    Only(Direction),
}

impl BusyPoll {
    /// Whether the threads of `dir` spin.
    pub fn spins(self, dir: Direction) -> bool {
        match self {
            BusyPoll::Off => false,
            BusyPoll::All => true,
            BusyPoll::Only(d) => d == dir,
        }
    }
}

/// `busy_poll` as written: a boolean or a direction.
#[derive(Deserialize)]
#[serde(untagged)]
enum BusyPollToml {
    Flag(bool),
    Dir(String),
}

/// A `busy_poll` string that names no direction.
#[derive(Debug, thiserror::Error)]
#[error("busy_poll = {0:?}: expected true, false, \"outbound\" or \"inbound\"")]
pub struct BadBusyPoll(String);

impl TryFrom<BusyPollToml> for BusyPoll {
    type Error = BadBusyPoll;
    fn try_from(t: BusyPollToml) -> Result<Self, BadBusyPoll> {
        match t {
            BusyPollToml::Flag(false) => Ok(BusyPoll::Off),
            BusyPollToml::Flag(true) => Ok(BusyPoll::All),
            BusyPollToml::Dir(d) if d == "outbound" => Ok(BusyPoll::Only(Direction::Outbound)),
            BusyPollToml::Dir(d) if d == "inbound" => Ok(BusyPoll::Only(Direction::Inbound)),
            BusyPollToml::Dir(d) => Err(BadBusyPoll(d)),
        }
    }
}

/// `[l2]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Toml {
    /// Interface towards the IED.
    pub ied: String,
    /// Interface towards the network.
    pub net: String,
    /// Who bridges non-IEC 61850 traffic: `gander` (default) or `tc` (the kernel).
    #[serde(default)]
    pub bypass: Bypass,
    /// CPUs to pin the packet threads to, round-robin in the order IED-to-network workers,
    /// then network-to-IED workers: with one worker per direction `[a, b]` puts the IED side
    /// on `a` and the network side on `b` (empty: not pinned).
    #[serde(default)]
    pub cpu: Vec<usize>,
    /// Worker threads per direction (default 1). More than one spreads each interface's frames
    /// over the workers with `PACKET_FANOUT`, steered by APPID (layer 2) or publisher address
    /// and port (UDP), so each stream stays in one worker and in order.
    #[serde(default = "one")]
    pub workers: usize,
    /// Spin on the rings instead of sleeping in `poll` (a dedicated core per spinning
    /// thread: no wake-up latency, 100 % CPU), and ask for socket busy polling
    /// (`SO_BUSY_POLL`): `true` for every packet thread, `"outbound"` or `"inbound"` for one
    /// direction's threads only (the merging unit's SV leaving, say, on a box with one core to
    /// spare), `false` (default) for none.
    #[serde(default)]
    pub busy_poll: BusyPoll,
    /// Memory-mapped rings (`TPACKET_V2`, default true); false: one `recvmsg`/`send` per frame.
    #[serde(default = "yes")]
    pub ring: bool,
}

/// `[nfqueue]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NfqueueToml {
    /// Queue number.
    #[serde(default)]
    pub queue: u16,
    /// Bridge port towards the IED (its frames are `outbound`).
    pub ied: String,
    /// Bridge port towards the network.
    pub net: String,
    /// Install and remove the iptables rules (default true).
    #[serde(default = "yes")]
    pub install_rules: bool,
    /// Queue bridged IPv6 UDP through ip6tables too (default true; needs `ip6tables`). With
    /// `false`, ebtables drops IPv6 UDP to and from port 102 instead.
    #[serde(default = "yes")]
    pub ipv6: bool,
}

fn yes() -> bool {
    true
}

fn one() -> usize {
    1
}

/// `[udp]`: IPv4 or IPv6 socket addresses (`"10.0.0.1:102"`, `"[fd00::1]:102"`). Each side's
/// listen address and peer are of one family (the two sides may differ). A peer may be a
/// multicast group (224.0.0.0/4, ff00::/8); a listen address may be a group too, joined on the
/// interface its scope id names for IPv6 (`"[ff05::102%3]:102"`) or the default one.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpToml {
    /// Where the IED sends its R-GOOSE.
    pub ied_listen: SocketAddr,
    /// Where outbound R-GOOSE goes.
    pub net_peer: SocketAddr,
    /// Where the network sends R-GOOSE for the IED.
    pub net_listen: SocketAddr,
    /// Where inbound R-GOOSE goes.
    pub ied_peer: SocketAddr,
}

impl UdpToml {
    /// Each side's listen address and peer must be of one family: a socket bound to an IPv4
    /// address cannot send to an IPv6 peer (nor the reverse).
    pub fn check(&self) -> Result<(), ConfigError> {
        for (side, listen, peer) in [
            ("IED", self.ied_listen, self.ied_peer),
            ("network", self.net_listen, self.net_peer),
        ] {
            if listen.is_ipv4() != peer.is_ipv4() {
                let fam = |a: SocketAddr| if a.is_ipv4() { "IPv4" } else { "IPv6" };
                return Err(ConfigError::Invalid(format!(
                    "[udp] {side} side: listen address {listen} is {} but its peer {peer} is {}: the udp driver sends from the listen socket, so both must be of one family",
                    fam(listen),
                    fam(peer)
                )));
            }
        }
        Ok(())
    }
}

/// `[metrics]`: the counters as OpenMetrics text (docs/gateway.md, "Metrics").
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsToml {
    /// Serve `GET /metrics` on this address (in the gateway's `netns` when one is set).
    pub listen: Option<std::net::SocketAddr>,
    /// Rewrite this file (atomically) every `interval` seconds and at exit.
    pub file: Option<PathBuf>,
    /// Seconds between file rewrites (default 5).
    #[serde(default = "five")]
    pub interval: u64,
}

fn five() -> u64 {
    5
}

/// `[syslog]`: every drop and key event as an RFC 5424 message (docs/gateway.md, "Security
/// events").
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyslogToml {
    /// `unix:/dev/log`, `udp:ADDR:PORT`, `file:PATH` or `stderr`.
    pub target: String,
    /// RFC 5424 facility name (default `local0`).
    #[serde(default = "local0")]
    pub facility: String,
    /// At most this many events per second; the rest are counted and summarised (default 50).
    #[serde(default = "fifty")]
    pub rate: u32,
    /// APP-NAME (default `gander-gateway`).
    pub app_name: Option<String>,
}

fn local0() -> String {
    "local0".into()
}
fn fifty() -> u32 {
    50
}

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigToml {
    /// l2 | nfqueue | udp.
    pub driver: DriverKind,
    /// Key file (docs/keys.md), relative to the config file.
    pub keys: PathBuf,
    /// standard | libiec61850 | seclib.
    #[serde(default)]
    pub profile: Option<String>,
    /// Non-IEC 61850 traffic.
    #[serde(default = "pass")]
    pub other: PassDrop,
    /// Non-IEC 61850 traffic from the network side (default: `other`).
    pub other_inbound: Option<PassDrop>,
    /// Non-IEC 61850 traffic from the IED side (default: `other`).
    pub other_outbound: Option<PassDrop>,
    /// IEC 61850 traffic that no rule matches.
    #[serde(default = "drop")]
    pub default: PassDrop,
    /// Seconds between counter reports (0: only on SIGUSR1).
    #[serde(default)]
    pub stats_interval: u64,
    /// Counter reports go to this file (replaced atomically) instead of stdout.
    pub stats_file: Option<PathBuf>,
    /// Optional pcap of every frame the gateway forwards (after policy).
    pub pcap: Option<PathBuf>,
    /// Run the driver inside this network namespace (`/run/netns/NAME`).
    pub netns: Option<String>,
    /// Run the packet thread with SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE):
    /// the gateway's wake-up latency is most of its added latency on a busy host.
    pub rt_priority: Option<i32>,
    /// Hold a CPU latency QoS request of this many microseconds while running
    /// (`/dev/cpu_dma_latency`, needs root): idle CPUs then stay in idle states that wake
    /// faster than this (0: polling only, no halt). Removes the wake-up of a halted (v)CPU from
    /// the latency at the price of idle CPUs spinning; see `cpu_latency` and docs/gateway.md.
    pub cpu_wakeup_latency_us: Option<u32>,
    /// `[l2]`.
    pub l2: Option<L2Toml>,
    /// `[nfqueue]`.
    pub nfqueue: Option<NfqueueToml>,
    /// `[udp]`.
    pub udp: Option<UdpToml>,
    /// Frames the gateway would itself have protected in the other direction: drop | allow.
    #[serde(default)]
    pub reflected: Reflected,
    /// smpCnt wrap (samples per second) of layer-2 SV streams that do not state it with
    /// smpMod = 1 (default 4800: IEC 61850-9-2LE at 60 Hz; 4000 at 50 Hz). See
    /// `docs/gateway.md`, "Replay".
    pub sv_wrap: Option<u16>,
    /// Rules, first match wins.
    #[serde(default, rename = "rule")]
    pub rules: Vec<RuleToml>,
    /// Per-publisher pins of unauthenticated fields.
    #[serde(default, rename = "pin")]
    pub pins: Vec<PinToml>,
    /// `[metrics]`.
    pub metrics: Option<MetricsToml>,
    /// `[syslog]`.
    pub syslog: Option<SyslogToml>,
    /// `[gdoi]`: keys from an IEC 62351-9 key server (`gdoi_config`).
    pub gdoi: Option<crate::gdoi_config::GdoiToml>,
}

fn pass() -> PassDrop {
    PassDrop::Pass
}
fn drop() -> PassDrop {
    PassDrop::Drop
}

/// A checked configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// The parsed file.
    pub raw: ConfigToml,
    /// Profile.
    pub profile: Profile,
    /// Key file path, resolved.
    pub keys_path: PathBuf,
}

/// Parses `aa:bb:cc:dd:ee:ff` or `aa-bb-...`.
pub fn parse_mac(s: &str) -> Result<[u8; 6], ConfigError> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    let bad = || ConfigError::Invalid(format!("bad MAC address {s:?}"));
    if parts.len() != 6 {
        return Err(bad());
    }
    let mut m = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        if p.len() != 2 {
            return Err(bad());
        }
        m[i] = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    Ok(m)
}

impl Config {
    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_toml(&text, path.parent().unwrap_or(Path::new(".")))
    }

    /// Parses config text; relative paths are resolved against `base`.
    pub fn from_toml(text: &str, base: &Path) -> Result<Self, ConfigError> {
        let mut raw: ConfigToml =
            toml::from_str(text).map_err(|e| ConfigError::Syntax(e.to_string()))?;
        let profile = match &raw.profile {
            None => Profile::Standard,
            Some(p) => p
                .parse()
                .map_err(|_| ConfigError::Invalid(format!("unknown profile {p:?}")))?,
        };
        let need = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(ConfigError::Invalid(format!(
                    "driver needs a [{what}] section"
                )))
            }
        };
        if let Some(l2) = &raw.l2 {
            if l2.cpu.iter().any(|&c| c >= 1024) {
                return Err(ConfigError::Invalid(
                    "[l2] cpu: CPU numbers are below 1024".into(),
                ));
            }
            if !(1..=16).contains(&l2.workers) {
                return Err(ConfigError::Invalid("[l2] workers must be 1 to 16".into()));
            }
            if l2.ied == l2.net {
                return Err(ConfigError::Invalid(
                    "[l2] ied and net must be different interfaces".into(),
                ));
            }
        }
        match raw.driver {
            DriverKind::L2 => need(raw.l2.is_some(), "l2")?,
            DriverKind::Nfqueue => need(raw.nfqueue.is_some(), "nfqueue")?,
            DriverKind::Udp => need(raw.udp.is_some(), "udp")?,
        }
        if let (DriverKind::Udp, Some(u)) = (raw.driver, &raw.udp) {
            u.check()?;
        }
        if let Some(g) = &mut raw.gdoi {
            g.resolve_paths(base);
            g.check_files()
                .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        }
        for (i, r) in raw.rules.iter().enumerate() {
            let n = i + 1;
            let bad = |why: &str| Err(ConfigError::Invalid(format!("rule {n}: {why}")));
            if r.key_id.is_some() && r.key_ids.is_some() {
                return bad("give key_id or key_ids, not both");
            }
            if r.key_ids.as_ref().is_some_and(Vec::is_empty) {
                return bad("key_ids is empty");
            }
            // A field that has no effect on this action is an error, never silently ignored.
            let keyed = matches!(
                r.action,
                Action::Protect | Action::Verify | Action::Translate
            );
            if !keyed && (r.key_id.is_some() || r.key_ids.is_some()) {
                return bad("key_id/key_ids apply to protect, verify and translate rules only");
            }
            if r.keep_security && r.action != Action::Verify {
                return bad("keep_security applies to verify rules only");
            }
            if r.verify_input.is_some() && r.action != Action::Translate {
                return bad("verify_input applies to translate rules only");
            }
            if r.translate.is_some() && r.action != Action::Translate {
                return bad("a [rule.translate] table applies to translate rules only");
            }
            if r.kind == KindMatch::GseManagement
                && !matches!(r.action, Action::Pass | Action::Drop | Action::Verify)
            {
                return bad("GSE management can only be passed, dropped or verified (verify drops it: IEC 62351-6 defines no security for it)");
            }
            if r.kind == KindMatch::Sv && r.action == Action::Translate {
                return bad("layer-2 SV cannot be translated (translate handles GOOSE only)");
            }
            crate::gdoi_config::check_rule_group(n, r, raw.gdoi.as_ref())?;
            if r.action == Action::Protect
                && r.key_id.is_none()
                && r.key_ids.is_none()
                && r.group.is_none()
            {
                if r.kind == KindMatch::Sv {
                    return bad("an SV protect rule needs a key: give key_id or key_ids");
                }
                return bad("protect needs key_id or key_ids");
            }
            if let Some(m) = &r.src_mac {
                parse_mac(m)?;
            }
            if r.action == Action::Translate {
                let Some(t) = &r.translate else {
                    return bad("translate needs a [rule.translate] table");
                };
                for m in [&t.src_mac, &t.dst_mac].into_iter().flatten() {
                    parse_mac(m)?;
                }
                if t.src_mac.is_none() || t.dst_mac.is_none() {
                    return bad("translate needs src_mac and dst_mac");
                }
                if r.kind == KindMatch::RSv {
                    return bad("translate handles GOOSE only");
                }
                if t.vlan.is_some_and(|v| v >= 4095) || t.priority.is_some_and(|p| p > 7) {
                    return bad("vlan must be < 4095 and priority <= 7");
                }
            }
        }
        for (i, p) in raw.pins.iter().enumerate() {
            let n = i + 1;
            if let Some(m) = &p.src_mac {
                parse_mac(m)?;
            }
            if p.untagged && p.vlan.is_some() {
                return Err(ConfigError::Invalid(format!(
                    "pin {n}: give vlan or untagged, not both"
                )));
            }
            if p.vlan.is_some_and(|v| v >= 4095) {
                return Err(ConfigError::Invalid(format!(
                    "pin {n}: vlan must be < 4095"
                )));
            }
            if p.src_mac.is_none()
                && p.vlan.is_none()
                && !p.untagged
                && p.src_ip.is_none()
                && p.src_port.is_none()
            {
                return Err(ConfigError::Invalid(format!(
                    "pin {n}: pins nothing (give src_mac, vlan, untagged, src_ip or src_port)"
                )));
            }
        }
        if raw.sv_wrap == Some(0) {
            return Err(ConfigError::Invalid(
                "sv_wrap must be the samples per second at which smpCnt wraps (e.g. 4000, 4800)"
                    .into(),
            ));
        }
        check_operations(&raw)?;
        let keys_path = if raw.keys.is_absolute() {
            raw.keys.clone()
        } else {
            base.join(&raw.keys)
        };
        Ok(Config {
            raw,
            profile,
            keys_path,
        })
    }
}

/// `[metrics]` and `[syslog]`: refused with the reason before the gateway starts.
fn check_operations(raw: &ConfigToml) -> Result<(), ConfigError> {
    let bad = |why: String| Err(ConfigError::Invalid(why));
    if let Some(m) = &raw.metrics {
        if m.listen.is_none() && m.file.is_none() {
            return bad("[metrics] needs listen or file".into());
        }
        if m.interval == 0 {
            return bad("[metrics] interval must be at least 1 second".into());
        }
    }
    if let Some(l) = &raw.syslog {
        if let Err(e) = l.target.parse::<crate::events::SyslogTarget>() {
            return bad(format!("[syslog] {e}"));
        }
        if crate::events::facility(&l.facility).is_none() {
            let names: Vec<&str> = crate::events::FACILITIES.iter().map(|f| f.0).collect();
            return bad(format!(
                "[syslog] unknown facility {:?} (one of {})",
                l.facility,
                names.join(", ")
            ));
        }
        if !(1..=100_000).contains(&l.rate) {
            return bad("[syslog] rate must be 1..=100000 events per second".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "driver = \"l2\"\nkeys = \"k\"\n[l2]\nied = \"a\"\nnet = \"b\"\n";

    fn err(extra: &str) -> String {
        Config::from_toml(&format!("{BASE}{extra}"), Path::new("."))
            .expect_err(extra)
            .to_string()
    }

    #[test]
    fn operations_sections_are_checked() {
        let ok = Config::from_toml(
            &format!("{BASE}[metrics]\nlisten = \"127.0.0.1:9561\"\n[syslog]\ntarget = \"unix:/dev/log\"\nfacility = \"authpriv\"\nrate = 10\n"),
            Path::new("."),
        )
        .unwrap();
        assert_eq!(ok.raw.syslog.unwrap().rate, 10);
        assert_eq!(ok.raw.metrics.unwrap().interval, 5);
        assert!(err("[metrics]\n").contains("listen or file"));
        assert!(err("[metrics]\nfile = \"m\"\ninterval = 0\n").contains("interval"));
        assert!(err("[metrics]\nlisten = \"localhost\"\n").contains("invalid socket address"));
        assert!(err("[metrics]\nlisten = \"127.0.0.1:1\"\nport = 3\n").contains("unknown field"));
        assert!(err("[syslog]\ntarget = \"tcp:10.0.0.1:514\"\n").contains("expected unix:PATH"));
        assert!(err("[syslog]\ntarget = \"stderr\"\nfacility = \"kern\"\n").contains("local0"));
        assert!(err("[syslog]\ntarget = \"stderr\"\nrate = 0\n").contains("rate"));
    }
}
