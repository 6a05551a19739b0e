//! The gateway's policy core: sans-I/O, one call per frame.
//!
//! [`Policy::handle`] takes a whole Ethernet frame, the direction it travels and the current time
//! (Unix seconds, for key validity) and returns a [`Decision`]: forward these bytes, or drop for
//! this reason. It owns the key store, the replay state and the counters; the drivers only move
//! bytes. Nothing here opens a socket or reads a clock, so every rule is unit-tested.
//!
//! Fail-closed rules, in the order they are applied:
//! 1. A frame that looks like IEC 61850 traffic but does not parse (truncated Ethernet/IPv4/UDP,
//!    GOOSE or session headers, IPv4 UDP fragments, bad IPv4 or UDP checksums) is dropped.
//! 2. A secured frame whose payload is encrypted is authenticated before its APPID is read, so the
//!    rule is chosen by an authenticated APPID.
//! 3. `verify` (and `translate` with verified input) refuses unsecured frames, unknown and
//!    expired key ids, bad MACs and tags, and replays (session SPDU-number window per sender,
//!    APPID and key id; GOOSE stNum/sqNum per APPID and key id). The replay state only moves
//!    after the frame verified.
//! 4. IEC 61850 traffic that no rule matches takes the configured default (drop unless set).

use crate::config::{
    parse_mac, Action, Config, ConfigError, Direction, KindMatch, PassDrop, RuleToml,
};
use gander_sec::frame::{locate, protect_frame, Located};
use gander_sec::l2::{self, CheckedGoose};
use gander_sec::replay::{GooseSequence, ReplayGuard};
use gander_sec::session::{self, Checked, IvSource, RandomIv, SendParams};
use gander_sec::{EncAlgorithm, KeyEntry, KeyStore, Profile, SecError};
use gander_wire::ethernet::{self, EthernetRepr, Frame, VlanTag};
use gander_wire::goose::GoosePdu;
use gander_wire::goose_frame::{GooseFrameRepr, L2Frame};
use gander_wire::ip::{self, Ipv4Packet, UdpFrameRepr};
use gander_wire::session::{
    parse_elements, PayloadElement, SecurityInfo, SessionHeader, SessionPdu, SpduId,
};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

/// What to do with one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision<'a> {
    /// Send these bytes out of the other side (borrowed: unchanged).
    Forward(Cow<'a, [u8]>),
    /// Do not forward; the reason is a stable counter name.
    Drop(&'static str),
}

impl Decision<'_> {
    /// Whether the frame goes on.
    pub fn is_forward(&self) -> bool {
        matches!(self, Decision::Forward(_))
    }
}

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
}

impl DirCounters {
    /// All drops.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.values().sum()
    }
}

/// Counters of both directions, as printed in JSON.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    /// IED to network.
    pub outbound: DirCounters,
    /// Network to IED.
    pub inbound: DirCounters,
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
struct Translate {
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    vlan: Option<VlanTag>,
    src_ip: Option<[u8; 4]>,
    dst_ip: Option<[u8; 4]>,
    port: u16,
}

#[derive(Debug, Clone)]
struct Rule {
    direction: Direction,
    appid: Option<u16>,
    kind: KindMatch,
    action: Action,
    keys: Vec<u32>,
    keep_security: bool,
    verify_input: bool,
    src_mac: Option<[u8; 6]>,
    translate: Option<Translate>,
}

impl Rule {
    fn from_toml(n: usize, r: &RuleToml) -> Result<Rule, ConfigError> {
        let translate = match &r.translate {
            None => None,
            Some(t) => {
                let mac = |m: &Option<String>| -> Result<[u8; 6], ConfigError> {
                    parse_mac(m.as_deref().unwrap_or(""))
                };
                let needs_ip = matches!(r.kind, KindMatch::Any | KindMatch::Goose);
                if needs_ip && (t.src_ip.is_none() || t.dst_ip.is_none()) {
                    return Err(ConfigError::Invalid(format!(
                        "rule {n}: translating GOOSE to R-GOOSE needs src_ip and dst_ip"
                    )));
                }
                Some(Translate {
                    src_mac: mac(&t.src_mac)?,
                    dst_mac: mac(&t.dst_mac)?,
                    vlan: t.vlan.map(|vid| VlanTag {
                        pcp: t.priority.unwrap_or(4),
                        dei: false,
                        vid,
                    }),
                    src_ip: t.src_ip.map(|a| a.octets()),
                    dst_ip: t.dst_ip.map(|a| a.octets()),
                    port: t.port.unwrap_or(ip::RGOOSE_PORT),
                })
            }
        };
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
}

/// The policy: rules, keys, replay state and counters.
pub struct Policy {
    profile: Profile,
    store: KeyStore,
    rules: Vec<Rule>,
    other: [PassDrop; 2],
    default: PassDrop,
    sessions: ReplayGuard<(Direction, [u8; 4], u16, u16, u32)>,
    goose: HashMap<(Direction, u16, u32), GooseSequence>,
    spdu_numbers: HashMap<u16, u32>,
    ivs: Box<dyn IvSource + Send>,
    counters: Counters,
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

type Verdict<'a> = Result<Decision<'a>, &'static str>;

fn session_kind(si: u8) -> KindMatch {
    match SpduId::from_u8(si) {
        Ok(SpduId::SampledValues) => KindMatch::RSv,
        _ => KindMatch::RGoose,
    }
}

fn code(e: &SecError) -> &'static str {
    e.code()
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
        }
        Ok(Policy {
            profile: config.profile,
            store,
            rules,
            other: [
                config.raw.other_outbound.unwrap_or(config.raw.other),
                config.raw.other_inbound.unwrap_or(config.raw.other),
            ],
            default: config.raw.default,
            sessions: ReplayGuard::new(),
            goose: HashMap::new(),
            spdu_numbers: HashMap::new(),
            ivs: Box::new(RandomIv),
            counters: Counters::default(),
        })
    }

    /// Replaces the keys (SIGHUP). Replay state is kept: windows are per key id.
    pub fn replace_keys(&mut self, store: KeyStore) {
        self.store = store;
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

    /// Decides what happens to `frame` travelling in `dir` at `now` (Unix seconds).
    pub fn handle<'a>(&mut self, dir: Direction, frame: &'a [u8], now: u64) -> Decision<'a> {
        let d = match self.decide(dir, frame, now) {
            Ok(d) => d,
            Err(reason) => Decision::Drop(reason),
        };
        let c = self.counters.dir_mut(dir);
        c.received += 1;
        match &d {
            Decision::Forward(_) => c.forwarded += 1,
            Decision::Drop(r) => *c.dropped.entry((*r).to_string()).or_default() += 1,
        }
        d
    }

    fn bump(&mut self, dir: Direction, f: impl FnOnce(&mut DirCounters)) {
        f(self.counters.dir_mut(dir))
    }

    fn rule(&self, dir: Direction, kind: KindMatch, appid: u16, src: &[u8; 6]) -> Option<Rule> {
        self.rules
            .iter()
            .find(|r| r.matches(dir, kind, appid, src))
            .cloned()
    }

    /// The default for unmatched IEC traffic.
    fn unmatched<'a>(&mut self, dir: Direction, frame: &'a [u8]) -> Verdict<'a> {
        match self.default {
            PassDrop::Pass => {
                self.bump(dir, |c| c.passed += 1);
                Ok(Decision::Forward(Cow::Borrowed(frame)))
            }
            PassDrop::Drop => Err("no-rule"),
        }
    }

    /// The key a protect rule uses now: of its keys valid at `now`, the one that became valid
    /// last (so a new key takes over at its `not_before` and the old one ends at `not_after`).
    fn protect_key<'s>(
        store: &'s KeyStore,
        rule: &Rule,
        now: u64,
    ) -> Result<&'s KeyEntry, &'static str> {
        rule.keys
            .iter()
            .filter_map(|k| store.get(*k))
            .filter(|k| k.check_valid_at(now).is_ok())
            .max_by_key(|k| k.not_before.unwrap_or(0))
            .ok_or("no-valid-key")
    }

    fn decide<'a>(&mut self, dir: Direction, frame: &'a [u8], now: u64) -> Verdict<'a> {
        self.precheck_ip(frame)?;
        match locate(frame) {
            Located::Other => match self.other[dir as usize] {
                PassDrop::Pass => {
                    self.bump(dir, |c| c.other_passed += 1);
                    Ok(Decision::Forward(Cow::Borrowed(frame)))
                }
                PassDrop::Drop => Err("other"),
            },
            Located::Goose { .. } => self.goose(dir, frame, now),
            Located::Session {
                payload,
                src,
                spdu_id,
            } => self.session(dir, frame, payload, src, spdu_id, now),
        }
    }

    /// IPv4 carrying UDP must parse whole and carry good checksums, and is never a fragment:
    /// otherwise a damaged or fragmented R-GOOSE datagram would be "not ours" and pass.
    fn precheck_ip(&self, frame: &[u8]) -> Result<(), &'static str> {
        let Ok(eth) = Frame::new_checked(frame) else {
            return Ok(());
        };
        if eth.ethertype() != ethernet::ETHERTYPE_IPV4 {
            return Ok(());
        }
        let ipk = Ipv4Packet::new_checked(eth.payload()).map_err(|_| "malformed")?;
        if !ipk.verify_checksum() {
            return Err("bad-checksum");
        }
        if ipk.protocol() != ip::PROTOCOL_UDP {
            return Ok(());
        }
        if ipk.is_fragment() {
            return Err("ip-fragment");
        }
        let loc = ip::locate_udp(frame).map_err(|_| "malformed")?;
        if !loc.udp_checksum_ok {
            return Err("bad-checksum");
        }
        Ok(())
    }

    // ---- layer-2 GOOSE ----

    fn goose<'a>(&mut self, dir: Direction, frame: &'a [u8], now: u64) -> Verdict<'a> {
        let (l2f, _) = L2Frame::parse(frame).map_err(|_| "malformed")?;
        let appid = l2f.body.appid;
        let Some(rule) = self.rule(dir, KindMatch::Goose, appid, &l2f.eth.src) else {
            return self.unmatched(dir, frame);
        };
        let secured = l2f.body.extension.is_some();
        match rule.action {
            Action::Pass => {
                self.bump(dir, |c| c.passed += 1);
                Ok(Decision::Forward(Cow::Borrowed(frame)))
            }
            Action::Drop => Err("policy"),
            Action::Protect => {
                if secured {
                    return Err("already-secured");
                }
                GoosePdu::parse(&l2f.body.apdu).map_err(|_| "malformed")?;
                let key = Self::protect_key(&self.store, &rule, now)?;
                let out = l2::protect(self.profile, key, frame, self.ivs.as_mut(), now)
                    .map_err(|e| code(&e))?;
                self.bump(dir, |c| c.protected += 1);
                Ok(Decision::Forward(Cow::Owned(out)))
            }
            Action::Verify => {
                let g = self.verify_goose(dir, frame, now)?;
                if rule.keep_security {
                    return Ok(Decision::Forward(Cow::Borrowed(frame)));
                }
                let out = strip_goose(g.eth, g.body)?;
                self.bump(dir, |c| c.stripped += 1);
                Ok(Decision::Forward(Cow::Owned(out)))
            }
            Action::Translate => {
                let (sim, apdu) = if secured {
                    let g = self.verify_goose(dir, frame, now)?;
                    (g.body.simulation(), g.body.apdu)
                } else if rule.verify_input {
                    return Err("unsecured");
                } else {
                    GoosePdu::parse(&l2f.body.apdu).map_err(|_| "malformed")?;
                    (l2f.body.simulation(), l2f.body.apdu)
                };
                let el = PayloadElement {
                    payload_type: SpduId::Goose.payload_type(),
                    simulation: sim as u8,
                    appid,
                    apdu: &apdu,
                };
                let out = self.build_rgoose(&rule, el, now)?;
                self.bump(dir, |c| c.translated += 1);
                Ok(Decision::Forward(Cow::Owned(out)))
            }
        }
    }

    /// Verifies a secured GOOSE frame and applies the stNum/sqNum rule per direction, APPID and
    /// key id (not per source MAC, which the IEC 62351-6 MAC does not cover: a copy with another
    /// source address is still a replay).
    fn verify_goose(
        &mut self,
        dir: Direction,
        frame: &[u8],
        now: u64,
    ) -> Result<l2::VerifiedGoose, &'static str> {
        let g = match l2::verify(self.profile, &self.store, frame, now) {
            Ok(CheckedGoose::Verified(g)) => g,
            Ok(CheckedGoose::Unsecured(_)) => return Err("unsecured"),
            Err(e) => return Err(code(&e)),
        };
        let pdu = GoosePdu::parse(&g.body.apdu).map_err(|_| "malformed")?;
        let seq = self
            .goose
            .entry((dir, g.body.appid, g.extension.key_id))
            .or_default();
        seq.check(pdu.st_num, pdu.sq_num).map_err(|e| code(&e))?;
        seq.accept(pdu.st_num, pdu.sq_num);
        self.bump(dir, |c| c.verified += 1);
        Ok(g)
    }

    fn build_rgoose(
        &mut self,
        rule: &Rule,
        el: PayloadElement<'_>,
        now: u64,
    ) -> Result<Vec<u8>, &'static str> {
        let t = rule.translate.as_ref().ok_or("translate-unconfigured")?;
        let (Some(src_ip), Some(dst_ip)) = (t.src_ip, t.dst_ip) else {
            return Err("translate-unconfigured");
        };
        let n = self.spdu_numbers.entry(el.appid).or_insert(0);
        let spdu_number = *n;
        *n = n.wrapping_add(1);
        let mut spdu = Vec::with_capacity(el.apdu.len() + 96);
        if rule.keys.is_empty() {
            let header = unsecured_header(self.profile, SpduId::Goose, spdu_number);
            let trailer = seclib_trailer(self.profile);
            gander_wire::session::emit(
                &header,
                &[el],
                trailer.len(),
                &self.profile.dialect(),
                &mut spdu,
            )
            .map_err(|_| "malformed")?;
            spdu.extend_from_slice(trailer);
        } else {
            let key = Self::protect_key(&self.store, rule, now)?;
            let params = SendParams {
                spdu_id: SpduId::Goose,
                spdu_number,
                now,
            };
            session::protect(
                self.profile,
                key,
                params,
                &[el],
                self.ivs.as_mut(),
                &mut spdu,
            )
            .map_err(|e| code(&e))?;
        }
        let repr = UdpFrameRepr {
            eth: EthernetRepr {
                dst: t.dst_mac,
                src: t.src_mac,
                vlan: t.vlan,
                ethertype: ethernet::ETHERTYPE_IPV4,
            },
            src_addr: src_ip,
            dst_addr: dst_ip,
            src_port: t.port,
            dst_port: t.port,
            ttl: 64,
            // DSCP EF (46): IEC 61850-90-5 asks for a priority class for R-GOOSE.
            tos: 46 << 2,
            identification: (spdu_number & 0xffff) as u16,
        };
        repr.emit(&spdu).map_err(|_| "malformed")
    }

    // ---- sessions (R-GOOSE, R-SV) ----

    fn session<'a>(
        &mut self,
        dir: Direction,
        frame: &'a [u8],
        payload: std::ops::Range<usize>,
        src: ([u8; 4], u16),
        spdu_id: u8,
        now: u64,
    ) -> Verdict<'a> {
        let bytes = &frame[payload];
        let dialect = self.profile.dialect();
        let pdu = SessionPdu::parse(bytes, &dialect).map_err(|_| "malformed")?;
        let kind = session_kind(spdu_id);
        let eth_src = Frame::new_checked(frame)
            .map(|f| f.src_addr())
            .unwrap_or([0; 6]);
        let sec = &pdu.header.security;
        let trailer = pdu.trailer();
        let secured = sec.key_id() != 0
            || !sec.iv().is_empty()
            || matches!(sec, SecurityInfo::V1 { enc_code, mac_code, .. } if *enc_code != 0 || *mac_code != 0)
            || !(trailer.is_empty() || (self.profile == Profile::Seclib && trailer == [0x85, 0]));

        if !secured {
            let elements = parse_elements(pdu.payload(), &dialect).map_err(|_| "malformed")?;
            let appid = elements.first().map(|e| e.appid).ok_or("malformed")?;
            let Some(rule) = self.rule(dir, kind, appid, &eth_src) else {
                return self.unmatched(dir, frame);
            };
            return match rule.action {
                Action::Pass => {
                    self.bump(dir, |c| c.passed += 1);
                    Ok(Decision::Forward(Cow::Borrowed(frame)))
                }
                Action::Drop => Err("policy"),
                Action::Verify => Err("unsecured"),
                Action::Protect => {
                    let key = Self::protect_key(&self.store, &rule, now)?;
                    match protect_frame(self.profile, key, frame, self.ivs.as_mut(), now) {
                        Ok(Some(out)) => {
                            self.bump(dir, |c| c.protected += 1);
                            Ok(Decision::Forward(Cow::Owned(out)))
                        }
                        Ok(None) => Err("malformed"),
                        Err(e) => Err(code(&e)),
                    }
                }
                Action::Translate => {
                    if rule.verify_input {
                        return Err("unsecured");
                    }
                    self.session_to_goose(dir, &rule, &elements, now)
                }
            };
        }

        // Secured. If the key encrypts, nothing in the payload is readable before the tag is
        // checked; otherwise the cleartext APPID picks the rule, and only `pass` skips checks.
        let encrypted = self
            .store
            .get(sec.key_id())
            .is_some_and(|k| k.enc != EncAlgorithm::None);
        let visible = if encrypted {
            None
        } else {
            parse_elements(pdu.payload(), &dialect)
                .ok()
                .and_then(|e| e.first().map(|e| e.appid))
        };
        if let Some(appid) = visible {
            match self.rule(dir, kind, appid, &eth_src).map(|r| r.action) {
                None => return self.unmatched(dir, frame),
                Some(Action::Pass) => {
                    self.bump(dir, |c| c.passed += 1);
                    return Ok(Decision::Forward(Cow::Borrowed(frame)));
                }
                Some(Action::Drop) => return Err("policy"),
                Some(Action::Protect) => return Err("already-secured"),
                Some(Action::Verify | Action::Translate) => {}
            }
        }
        let verified = match session::verify(self.profile, &self.store, bytes, now) {
            Ok(Checked::Verified(v)) => v,
            Ok(Checked::Unsecured(_)) => return Err("unsecured"),
            Err(e) => return Err(code(&e)),
        };
        let elements = verified.elements().map_err(|e| code(&e))?;
        let appid = elements.first().map(|e| e.appid).ok_or("malformed")?;
        let Some(rule) = self.rule(dir, kind, appid, &eth_src) else {
            return self.unmatched(dir, frame);
        };
        match rule.action {
            // Only reachable for encrypted frames: the authenticated APPID says pass.
            Action::Pass => {
                self.bump(dir, |c| c.passed += 1);
                return Ok(Decision::Forward(Cow::Borrowed(frame)));
            }
            Action::Drop => return Err("policy"),
            Action::Protect => return Err("already-secured"),
            Action::Verify | Action::Translate => {}
        }
        let key_id = verified.protection().key_id;
        self.sessions
            .check_and_accept(
                (dir, src.0, src.1, appid, key_id),
                verified.header().spdu_number,
            )
            .map_err(|e| code(&e))?;
        self.bump(dir, |c| c.verified += 1);
        if rule.action == Action::Translate {
            return self.session_to_goose(dir, &rule, &elements, now);
        }
        if rule.keep_security {
            return Ok(Decision::Forward(Cow::Borrowed(frame)));
        }
        let header = unsecured_header(
            self.profile,
            verified.header().spdu_id,
            verified.header().spdu_number,
        );
        let trailer = seclib_trailer(self.profile);
        let mut out = Vec::with_capacity(bytes.len());
        gander_wire::session::emit(&header, &elements, trailer.len(), &dialect, &mut out)
            .map_err(|_| "malformed")?;
        out.extend_from_slice(trailer);
        let out = ip::rewrite_udp_payload(frame, &out).map_err(|_| "malformed")?;
        self.bump(dir, |c| c.stripped += 1);
        Ok(Decision::Forward(Cow::Owned(out)))
    }

    fn session_to_goose<'a>(
        &mut self,
        dir: Direction,
        rule: &Rule,
        elements: &[PayloadElement<'_>],
        now: u64,
    ) -> Verdict<'a> {
        let [el] = elements else {
            return Err("translate-multi-element");
        };
        if el.payload_type != SpduId::Goose.payload_type() {
            return Err("translate-not-goose");
        }
        GoosePdu::parse(el.apdu).map_err(|_| "malformed")?;
        let t = rule.translate.as_ref().ok_or("translate-unconfigured")?;
        let l2f = L2Frame {
            eth: EthernetRepr {
                dst: t.dst_mac,
                src: t.src_mac,
                vlan: t.vlan,
                ethertype: ethernet::ETHERTYPE_GOOSE,
            },
            body: GooseFrameRepr {
                appid: el.appid,
                reserved1: if el.simulation != 0 { 0x8000 } else { 0 },
                reserved2: 0,
                apdu: el.apdu.to_vec(),
                extension: None,
            },
        };
        let mut out = l2f.to_vec().map_err(|_| "malformed")?;
        if !rule.keys.is_empty() {
            let key = Self::protect_key(&self.store, rule, now)?;
            out = l2::protect(self.profile, key, &out, self.ivs.as_mut(), now)
                .map_err(|e| code(&e))?;
        }
        self.bump(dir, |c| c.translated += 1);
        Ok(Decision::Forward(Cow::Owned(out)))
    }
}

/// The header of an unsecured SPDU as `profile` writes it (KeyID 0, no IV; version 1: codes 0).
fn unsecured_header(profile: Profile, spdu_id: SpduId, spdu_number: u32) -> SessionHeader {
    SessionHeader {
        spdu_id,
        spdu_number,
        time_of_current_key: 0,
        time_to_next_key: 0,
        security: if profile.session_version() == 1 {
            SecurityInfo::V1 {
                enc_code: 0,
                mac_code: 0,
                key_id: 0,
            }
        } else {
            SecurityInfo::V2 {
                key_id: 0,
                iv: Vec::new(),
            }
        },
    }
}

/// SecLib always ends an SPDU with a signature element, `85 00` when unsigned.
fn seclib_trailer(profile: Profile) -> &'static [u8] {
    if profile == Profile::Seclib {
        &[0x85, 0x00]
    } else {
        &[]
    }
}

/// A verified GOOSE frame without its IEC 62351-6 extension: Reserved1 keeps only the
/// simulation bit and Reserved2 returns to 0, as a legacy subscriber expects.
fn strip_goose(eth: EthernetRepr, mut body: GooseFrameRepr) -> Result<Vec<u8>, &'static str> {
    body.extension = None;
    body.reserved1 &= 0x8000;
    body.reserved2 = 0;
    L2Frame { eth, body }.to_vec().map_err(|_| "malformed")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::craft::{self, UdpAddrs};
    use gander_sec::default_provider;
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
"#;

    const IED_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const SUB_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
    const GOOSE_DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];

    fn policy(rules: &str) -> Policy {
        let (top, rules) = match rules.find("[[rule]]") {
            Some(i) => rules.split_at(i),
            None => (rules, ""),
        };
        let text = format!(
            "driver = \"udp\"\nkeys = \"k.toml\"\n{top}\n[udp]\nied_listen = \"127.0.0.1:1\"\nnet_peer = \"127.0.0.1:2\"\nnet_listen = \"127.0.0.1:3\"\nied_peer = \"127.0.0.1:4\"\n{rules}"
        );
        let cfg = Config::from_toml(&text, Path::new(".")).unwrap();
        let store = KeyStore::from_toml(KEYS, Path::new("."), default_provider()).unwrap();
        Policy::new(&cfg, store).unwrap()
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

    const PROTECT_VERIFY: &str = r#"
other_inbound = "drop"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 1
[[rule]]
direction = "inbound"
action = "verify"
"#;

    fn fwd(d: Decision<'_>) -> Vec<u8> {
        match d {
            Decision::Forward(b) => b.into_owned(),
            Decision::Drop(r) => panic!("dropped: {r}"),
        }
    }

    #[test]
    fn protect_then_verify_strip_round_trips() {
        let mut gw = policy(PROTECT_VERIFY);
        let plain = rgoose(0x1000, 7);
        let secured = fwd(gw.handle(Direction::Outbound, &plain, 0));
        assert_ne!(secured, plain);
        let back = fwd(gw.handle(Direction::Inbound, &secured, 0));
        assert_eq!(back, plain, "stripping restores the legacy frame");
        let c = gw.counters();
        assert_eq!(
            (c.outbound.protected, c.inbound.verified, c.inbound.stripped),
            (1, 1, 1)
        );
        // The same frame again is a replay.
        assert_eq!(
            gw.handle(Direction::Inbound, &secured, 0),
            Decision::Drop("replay")
        );
        assert_eq!(gw.counters().inbound.dropped["replay"], 1);
    }

    #[test]
    fn any_flipped_bit_is_dropped() {
        let mut tx = policy(PROTECT_VERIFY);
        let mut n = 0;
        let base = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 0), 0));
        for i in 12 * 8..base.len() * 8 {
            n += 1;
            let mut f = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, n), 0));
            f[i / 8] ^= 1 << (i % 8);
            let mut rx = policy(PROTECT_VERIFY);
            assert!(
                !rx.handle(Direction::Inbound, &f, 0).is_forward(),
                "bit {i}"
            );
        }
        // And an unflipped one passes.
        let mut rx = policy(PROTECT_VERIFY);
        assert!(rx.handle(Direction::Inbound, &base, 0).is_forward());
    }

    #[test]
    fn with_other_pass_only_non_iec_damage_gets_through() {
        let rules = PROTECT_VERIFY.replace("other_inbound = \"drop\"", "");
        let mut tx = policy(&rules);
        let mut n = 0;
        let len = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 0), 0)).len();
        for i in 0..len * 8 {
            n += 1;
            let mut f = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, n), 0));
            f[i / 8] ^= 1 << (i % 8);
            let mut rx = policy(&rules);
            if let Decision::Forward(out) = rx.handle(Direction::Inbound, &f, 0) {
                // Only Ethernet addresses (outside every IEC 62351-6 MAC) and the EtherType
                // (which makes it not IPv4 at all) can be hit and still be forwarded.
                assert!(i < 14 * 8, "bit {i}");
                assert!(i < 12 * 8 || locate(&out) == Located::Other, "bit {i}");
            }
        }
    }

    #[test]
    fn truncations_unsecured_unknown_and_expired_keys_are_dropped() {
        let mut tx = policy(PROTECT_VERIFY);
        let f = fwd(tx.handle(Direction::Outbound, &rgoose(0x1000, 1), 0));
        let mut rx = policy(PROTECT_VERIFY);
        for len in 0..f.len() {
            assert!(
                !rx.handle(Direction::Inbound, &f[..len], 0).is_forward(),
                "len {len}"
            );
        }
        assert_eq!(
            rx.handle(Direction::Inbound, &rgoose(0x1000, 2), 0),
            Decision::Drop("unsecured")
        );
        // Unknown key id: a receiver without key 1.
        let mut other = policy("[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\n");
        other.replace_keys(KeyStore::new());
        assert_eq!(
            other.handle(Direction::Inbound, &f, 0),
            Decision::Drop("unknown-key")
        );
        // Expired key: key 3 ends at 200.
        let mut tx3 = policy("[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = 3\n[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\n");
        let f3 = fwd(tx3.handle(Direction::Outbound, &rgoose(0x1000, 1), 120));
        assert_eq!(
            tx3.handle(Direction::Inbound, &f3, 250),
            Decision::Drop("key-expired")
        );
        assert_eq!(
            tx3.handle(Direction::Outbound, &rgoose(0x1000, 2), 250),
            Decision::Drop("no-valid-key")
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
            key_of(&fwd(gw.handle(Direction::Outbound, &rgoose(1, 1), 120))),
            3
        );
        assert_eq!(
            key_of(&fwd(gw.handle(Direction::Outbound, &rgoose(1, 2), 160))),
            4
        );
        assert_eq!(
            key_of(&fwd(gw.handle(Direction::Outbound, &rgoose(1, 3), 500))),
            4
        );
        assert_eq!(
            gw.handle(Direction::Outbound, &rgoose(1, 4), 50),
            Decision::Drop("no-valid-key")
        );
    }

    #[test]
    fn encrypted_frames_are_matched_by_their_authenticated_appid() {
        let mut gw = policy(
            r#"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 2
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
        let a = fwd(gw.handle(Direction::Outbound, &rgoose(0x1000, 1), 0));
        let b = fwd(gw.handle(Direction::Outbound, &rgoose(0x2000, 2), 0));
        assert_eq!(fwd(gw.handle(Direction::Inbound, &a, 0)), a);
        assert_eq!(
            gw.handle(Direction::Inbound, &b, 0),
            Decision::Drop("policy")
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
            for sq in 0..3 {
                let plain = goose(0x0001, 1, sq, vlan);
                let secured = fwd(gw.handle(Direction::Outbound, &plain, 0));
                assert!(secured.len() > plain.len());
                assert_eq!(fwd(gw.handle(Direction::Inbound, &secured, 0)), plain);
                assert_eq!(
                    gw.handle(Direction::Inbound, &secured, 0),
                    Decision::Drop("replay")
                );
            }
            let s = fwd(gw.handle(Direction::Outbound, &goose(1, 2, 0, vlan), 0));
            let start = if vlan { 16 } else { 12 };
            for i in start * 8..s.len() * 8 {
                let mut f = s.clone();
                f[i / 8] ^= 1 << (i % 8);
                let mut rx = policy(PROTECT_VERIFY);
                assert!(
                    !rx.handle(Direction::Inbound, &f, 0).is_forward(),
                    "bit {i}"
                );
            }
            // Unsecured GOOSE does not pass a verify rule.
            assert_eq!(
                gw.handle(Direction::Inbound, &goose(1, 9, 0, vlan), 0),
                Decision::Drop("unsecured")
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
        let r = fwd(gw.handle(Direction::Outbound, &plain, 0));
        let loc = ip::locate_udp(&r).unwrap();
        assert_eq!(loc.dst_addr, [10, 85, 0, 2]);
        let back = fwd(gw.handle(Direction::Inbound, &r, 0));
        let (l2b, _) = L2Frame::parse(&back).unwrap();
        let (l2p, _) = L2Frame::parse(&plain).unwrap();
        assert_eq!(l2b.body, l2p.body);
        assert_eq!(gw.counters().outbound.translated, 1);
        // Inbound translation requires verified input by default.
        let unsecured = rgoose(0x0001, 5);
        assert_eq!(
            gw.handle(Direction::Inbound, &unsecured, 0),
            Decision::Drop("unsecured")
        );
    }

    #[test]
    fn other_traffic_default_and_damaged_udp() {
        let mut gw = policy(
            "other = \"drop\"\n[[rule]]\ndirection = \"outbound\"\nappid = 5\naction = \"pass\"\n",
        );
        let arp = [0xffu8; 60];
        assert_eq!(
            gw.handle(Direction::Outbound, &arp, 0),
            Decision::Drop("other")
        );
        assert!(gw
            .handle(Direction::Outbound, &rgoose(5, 1), 0)
            .is_forward());
        assert_eq!(
            gw.handle(Direction::Outbound, &rgoose(6, 1), 0),
            Decision::Drop("no-rule")
        );
        let mut bad = rgoose(5, 2);
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert_eq!(
            gw.handle(Direction::Outbound, &bad, 0),
            Decision::Drop("bad-checksum")
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
            gw.handle(Direction::Outbound, &frag, 0),
            Decision::Drop("ip-fragment")
        );
        let mut pass = policy("[[rule]]\ndirection = \"outbound\"\naction = \"drop\"\n");
        assert!(pass.handle(Direction::Outbound, &arp, 0).is_forward());
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
}
