//! Security events: every dropped frame and every key event as an RFC 5424 syslog message with
//! structured data, under a rate limit so a flood cannot drown the log.
//!
//! The data path never formats or writes a message. The policy asks the [`EventSink`] whether
//! an event fits the per-second budget (a counter compare, on the frame's own `now`), builds it
//! only then, and hands it to a bounded queue with `try_send`; a logger thread
//! ([`EventLogger`]) formats and writes. Events over the budget, or that find the queue full,
//! are counted, and one `events-suppressed` event says how many when the next second begins
//! (or at the next housekeeping tick), so the log tells an operator that it is incomplete.
//!
//! Event ids are stable and documented in `docs/gateway.md` ("Security events"); SIEM rules
//! key on the SD-ID and `eventId`, never on the free-text message.

use crate::config::Direction;
use crate::policy::DropReason;
use std::io::{self, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, SystemTime};

pub use gander_sec::syslog::{Severity, SD_ID};

/// The facility names of RFC 5424 §6.2.1, Table 1, that a gateway's operator would choose.
pub const FACILITIES: [(&str, u8); 12] = [
    ("user", 1),
    ("daemon", 3),
    ("auth", 4),
    ("authpriv", 10),
    ("local0", 16),
    ("local1", 17),
    ("local2", 18),
    ("local3", 19),
    ("local4", 20),
    ("local5", 21),
    ("local6", 22),
    ("local7", 23),
];

/// The facility number of a name of [`FACILITIES`].
pub fn facility(name: &str) -> Option<u8> {
    FACILITIES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, code)| *code)
}

/// What happened. The number is the stable `eventId`; the name is the RFC 5424 MSGID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// 100: the gateway started forwarding.
    GatewayStarted,
    /// 101: the gateway stopped (its final counters are in the JSON report).
    GatewayStopped,
    /// The driver could not start (an interface, a namespace, a socket or the queue): the
    /// gateway forwards nothing.
    GatewayFailed,
    /// An SV stream wraps its smpCnt below the wrap assumed (`sv_wrap`): its frames after
    /// each wrap are dropped as replay.
    SvWrap,
    /// 200: a key file was reloaded (SIGHUP).
    KeysReloaded,
    /// 201: a reloaded key file was refused; the old keys stay.
    KeysReloadFailed,
    /// 202: a protect rule started using a key for a publisher (first use or rotation).
    ProtectKey,
    /// 203: the `[gdoi]` member's keys changed (registered, rekeyed, deleted, expired).
    GdoiKeys,
    /// 204: a key server did not answer or refused; with no key server left, the policy
    /// (keep-until-expiry or fail-closed) holds.
    GdoiKeyServer,
    /// 3xx: a frame was dropped, one id per reason ([`drop_event_id`]).
    Dropped(DropReason),
    /// 400: events were not logged (rate limit or full queue).
    Suppressed,
}

impl EventKind {
    /// The stable event id.
    pub fn id(self) -> u16 {
        match self {
            EventKind::GatewayStarted => 100,
            EventKind::GatewayStopped => 101,
            EventKind::GatewayFailed => 102,
            EventKind::KeysReloaded => 200,
            EventKind::KeysReloadFailed => 201,
            EventKind::ProtectKey => 202,
            EventKind::GdoiKeys => 203,
            EventKind::GdoiKeyServer => 204,
            EventKind::SvWrap => 205,
            EventKind::Dropped(r) => drop_event_id(r),
            EventKind::Suppressed => 400,
        }
    }

    /// The RFC 5424 MSGID.
    pub fn msgid(self) -> &'static str {
        match self {
            EventKind::GatewayStarted => "gateway-start",
            EventKind::GatewayStopped => "gateway-stop",
            EventKind::GatewayFailed => "gateway-failed",
            EventKind::KeysReloaded => "keys-reloaded",
            EventKind::KeysReloadFailed => "keys-reload-failed",
            EventKind::ProtectKey => "protect-key",
            EventKind::GdoiKeys => "gdoi-keys",
            EventKind::GdoiKeyServer => "gdoi-key-server",
            EventKind::SvWrap => "sv-wrap",
            EventKind::Dropped(_) => "drop",
            EventKind::Suppressed => "events-suppressed",
        }
    }

    /// The severity: an authentication failure is a warning (someone sent what they could not
    /// sign), a gateway that cannot protect is an error, traffic the policy refuses by rule is
    /// informational.
    pub fn severity(self) -> Severity {
        match self {
            EventKind::GatewayStarted | EventKind::GatewayStopped => Severity::Notice,
            EventKind::KeysReloaded | EventKind::ProtectKey | EventKind::GdoiKeys => {
                Severity::Notice
            }
            EventKind::GdoiKeyServer | EventKind::SvWrap => Severity::Warning,
            EventKind::KeysReloadFailed | EventKind::GatewayFailed => Severity::Error,
            EventKind::Suppressed => Severity::Warning,
            EventKind::Dropped(r) => match r {
                DropReason::NoValidKey | DropReason::Crypto => Severity::Error,
                DropReason::Policy | DropReason::NoRule | DropReason::Other => {
                    Severity::Informational
                }
                DropReason::Malformed
                | DropReason::BadChecksum
                | DropReason::IpFragment
                | DropReason::Unsupported
                | DropReason::TranslateMultiElement
                | DropReason::TranslateNotGoose
                | DropReason::TranslateUnconfigured
                | DropReason::AlreadySecured => Severity::Notice,
                _ => Severity::Warning,
            },
        }
    }
}

/// The stable event id of a drop: 300 + a number fixed per reason (never reused, never the
/// enum's order, so adding a reason changes no existing id).
pub fn drop_event_id(r: DropReason) -> u16 {
    300 + match r {
        DropReason::Malformed => 1,
        DropReason::BadChecksum => 2,
        DropReason::IpFragment => 3,
        DropReason::Unsecured => 4,
        DropReason::UnknownKey => 5,
        DropReason::KeyExpired => 6,
        DropReason::KeyNotYetValid => 7,
        DropReason::KeyNotAllowed => 8,
        DropReason::Reflected => 9,
        DropReason::PinMismatch => 10,
        DropReason::MixedAppids => 11,
        DropReason::BadMac => 12,
        DropReason::BadTag => 13,
        DropReason::MissingAuthenticator => 14,
        DropReason::BadIv => 15,
        DropReason::AlgorithmMismatch => 16,
        DropReason::UnknownAlgorithm => 17,
        DropReason::Replay => 18,
        DropReason::AlreadySecured => 19,
        DropReason::NoValidKey => 20,
        DropReason::Unsupported => 21,
        DropReason::Crypto => 22,
        DropReason::Policy => 23,
        DropReason::NoRule => 24,
        DropReason::Other => 25,
        DropReason::TranslateMultiElement => 26,
        DropReason::TranslateNotGoose => 27,
        DropReason::TranslateUnconfigured => 28,
    }
}

/// One security event, ready to be formatted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecurityEvent {
    /// What happened.
    pub kind: EventKind,
    /// When (the logger's clock when the event was built).
    pub time: SystemTime,
    /// Structured-data parameters after `eventId`, in order (names are RFC 5424 PARAM-NAMEs:
    /// printable ASCII without `=`, space, `]` or `"`).
    pub params: Vec<(&'static str, String)>,
    /// A short human-readable message.
    pub message: String,
}

impl SecurityEvent {
    /// An event of `kind` now.
    pub fn new(kind: EventKind, message: impl Into<String>) -> Self {
        SecurityEvent {
            kind,
            time: SystemTime::now(),
            params: Vec::new(),
            message: message.into(),
        }
    }

    /// Adds a structured-data parameter.
    pub fn with(mut self, name: &'static str, value: impl ToString) -> Self {
        self.params.push((name, value.to_string()));
        self
    }
}

/// Who the messages say they are from (RFC 5424 §6.2.4-§6.2.6).
#[derive(Clone, Debug)]
pub struct Origin {
    /// Facility number (RFC 5424 Table 1).
    pub facility: u8,
    /// HOSTNAME.
    pub hostname: String,
    /// APP-NAME.
    pub app_name: String,
    /// PROCID.
    pub procid: u32,
}

/// Formats one RFC 5424 message (`gander_sec::syslog`, shared with the key server's events).
pub fn format_rfc5424(origin: &Origin, e: &SecurityEvent) -> String {
    gander_sec::syslog::format(&gander_sec::syslog::Message {
        facility: origin.facility,
        severity: e.kind.severity(),
        time: e.time,
        hostname: &origin.hostname,
        app_name: &origin.app_name,
        procid: origin.procid,
        msgid: e.kind.msgid(),
        event_id: e.kind.id(),
        params: &e.params,
        text: &e.message,
    })
}

/// The data path's side: a per-second budget and a bounded queue.
#[derive(Debug)]
pub struct EventSink {
    tx: SyncSender<SecurityEvent>,
    per_second: u32,
    second: u64,
    used: u32,
    /// Events not logged since the last `events-suppressed` event.
    pending_suppressed: u64,
    first_suppressed: u64,
    /// Totals for the counters.
    emitted: u64,
    suppressed: u64,
}

impl EventSink {
    /// A sink sending into `tx`, at most `per_second` events per second (the
    /// `events-suppressed` summaries are not counted against it).
    pub fn new(tx: SyncSender<SecurityEvent>, per_second: u32) -> Self {
        EventSink {
            tx,
            per_second,
            second: 0,
            used: 0,
            pending_suppressed: 0,
            first_suppressed: 0,
            emitted: 0,
            suppressed: 0,
        }
    }

    /// Events handed to the logger so far.
    pub fn emitted(&self) -> u64 {
        self.emitted
    }

    /// Events not logged so far (over the rate, or the queue full).
    pub fn suppressed(&self) -> u64 {
        self.suppressed
    }

    /// Whether an event at `now` (Unix seconds) fits the budget; counts it as suppressed if
    /// not. Call before building the event: a flood costs one compare per frame.
    pub fn admit(&mut self, now: u64) -> bool {
        if now != self.second {
            self.flush(now);
            self.second = now;
            self.used = 0;
        }
        if self.used < self.per_second {
            self.used += 1;
            true
        } else {
            self.note_suppressed(1);
            false
        }
    }

    fn note_suppressed(&mut self, n: u64) {
        if self.pending_suppressed == 0 {
            self.first_suppressed = self.second;
        }
        self.pending_suppressed += n;
        self.suppressed += n;
    }

    /// Queues an admitted event; a full queue counts it as suppressed.
    pub fn send(&mut self, e: SecurityEvent) {
        match self.tx.try_send(e) {
            Ok(()) => self.emitted += 1,
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.note_suppressed(1)
            }
        }
    }

    /// Queues the `events-suppressed` summary if events were suppressed in an earlier second
    /// than `now` (called when a new second begins and from the driver's housekeeping, so the
    /// summary comes even when the flood stops).
    pub fn flush(&mut self, now: u64) {
        if self.pending_suppressed == 0 || now == self.second {
            return;
        }
        let e = SecurityEvent::new(
            EventKind::Suppressed,
            format!(
                "{} security events not logged (rate limit {}/s or full queue)",
                self.pending_suppressed, self.per_second
            ),
        )
        .with("count", self.pending_suppressed)
        .with("from", self.first_suppressed)
        .with("to", self.second)
        .with("ratePerSecond", self.per_second);
        // The summary is not rate-limited; if even it finds the queue full, the count stays
        // pending and the next flush reports the sum.
        if self.tx.try_send(e).is_ok() {
            self.emitted += 1;
            self.pending_suppressed = 0;
        }
    }
}

/// Where the logger writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyslogTarget {
    /// A local syslog daemon's datagram socket (e.g. `/dev/log`; the daemon must accept
    /// RFC 5424 there, as rsyslog does).
    Unix(PathBuf),
    /// A collector over UDP (RFC 5426: one message per datagram).
    Udp(SocketAddr),
    /// Appended to a file, one message per line.
    File(PathBuf),
    /// Standard error, one message per line.
    Stderr,
}

/// A syslog target that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("syslog target {0:?}: expected unix:PATH, udp:ADDR:PORT, file:PATH or stderr")]
pub struct BadTarget(pub String);

impl std::str::FromStr for SyslogTarget {
    type Err = BadTarget;
    fn from_str(s: &str) -> Result<Self, BadTarget> {
        let bad = || BadTarget(s.to_string());
        if s == "stderr" {
            return Ok(SyslogTarget::Stderr);
        }
        let (scheme, rest) = s.split_once(':').ok_or_else(bad)?;
        match scheme {
            "unix" if !rest.is_empty() => Ok(SyslogTarget::Unix(rest.into())),
            "file" if !rest.is_empty() => Ok(SyslogTarget::File(rest.into())),
            "udp" => rest.parse().map(SyslogTarget::Udp).map_err(|_| bad()),
            _ => Err(bad()),
        }
    }
}

enum Writer {
    Unix(UnixDatagram, PathBuf),
    Udp(UdpSocket, SocketAddr),
    File(std::fs::File),
    Stderr,
}

impl Writer {
    fn open(t: &SyslogTarget) -> io::Result<Writer> {
        Ok(match t {
            SyslogTarget::Unix(p) => Writer::Unix(UnixDatagram::unbound()?, p.clone()),
            SyslogTarget::Udp(a) => {
                let bind: SocketAddr = if a.is_ipv4() {
                    "0.0.0.0:0".parse().expect("literal")
                } else {
                    "[::]:0".parse().expect("literal")
                };
                Writer::Udp(UdpSocket::bind(bind)?, *a)
            }
            SyslogTarget::File(p) => Writer::File(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?,
            ),
            SyslogTarget::Stderr => Writer::Stderr,
        })
    }

    fn write(&mut self, msg: &str) -> io::Result<()> {
        match self {
            Writer::Unix(s, p) => s.send_to(msg.as_bytes(), &*p).map(drop),
            Writer::Udp(s, a) => s.send_to(msg.as_bytes(), *a).map(drop),
            Writer::File(f) => writeln!(f, "{msg}"),
            Writer::Stderr => writeln!(io::stderr(), "{msg}"),
        }
    }
}

/// The logger thread's side: formats queued events and writes them to the target.
pub struct EventLogger {
    rx: Receiver<SecurityEvent>,
    origin: Origin,
    target: SyslogTarget,
}

/// How many events the queue between the data path and the logger holds.
pub const QUEUE: usize = 1024;

impl EventLogger {
    /// A logger and the sender for its queue ([`QUEUE`] events deep).
    pub fn new(origin: Origin, target: SyslogTarget) -> (EventLogger, SyncSender<SecurityEvent>) {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        (EventLogger { rx, origin, target }, tx)
    }

    /// Writes events until every sender is gone. A target that fails is reported once on
    /// stderr and retried for the next event (a restarted syslog daemon comes back).
    pub fn run(self) {
        let mut writer = None;
        let mut failing = false;
        while let Ok(e) = self.rx.recv() {
            let line = format_rfc5424(&self.origin, &e);
            if writer.is_none() {
                writer = Writer::open(&self.target).ok();
            }
            let r = match writer.as_mut() {
                Some(w) => w.write(&line),
                None => Err(io::Error::other("cannot open")),
            };
            match r {
                Ok(()) => failing = false,
                Err(err) => {
                    if !failing {
                        eprintln!(
                            "gander gateway: syslog {:?}: {err}; events are counted but not logged",
                            self.target
                        );
                    }
                    failing = true;
                    writer = None;
                }
            }
        }
    }
}

/// The host name for HOSTNAME (RFC 5424 §6.2.4), `-` if unknown.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The event of a dropped frame: reason, direction, and what could be read of the frame
/// (`kind`, `appid`, `srcMac` when known).
pub fn drop_event(
    reason: DropReason,
    dir: Direction,
    kind: Option<&str>,
    appid: Option<u16>,
    src_mac: Option<[u8; 6]>,
    len: usize,
) -> SecurityEvent {
    let mut e = SecurityEvent::new(
        EventKind::Dropped(reason),
        format!("{} frame dropped: {}", dir.name(), reason.name()),
    )
    .with("reason", reason.name())
    .with("direction", dir.name());
    if let Some(k) = kind {
        e = e.with("kind", k);
    }
    if let Some(a) = appid {
        e = e.with("appid", format!("0x{a:04x}"));
    }
    if let Some(m) = src_mac {
        e = e.with(
            "srcMac",
            m.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":"),
        );
    }
    e.with("length", len)
}

/// How long the service waits for the logger to drain at exit.
pub const DRAIN: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            facility: facility("local0").unwrap(),
            hostname: "gw 1".into(),
            app_name: "gander-gateway".into(),
            procid: 42,
        }
    }

    #[test]
    fn formats_rfc5424_with_structured_data() {
        let mut e = drop_event(
            DropReason::BadMac,
            Direction::Inbound,
            Some("r-goose"),
            Some(0x10),
            Some([0, 0x1b, 0x21, 0, 0, 0x0a]),
            180,
        );
        e.time = SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
        let s = format_rfc5424(&origin(), &e);
        // local0 (16) * 8 + warning (4) = 132; spaces leave the hostname.
        assert_eq!(
            s,
            "<132>1 2023-11-14T22:13:20.123456Z gw1 gander-gateway 42 drop \
             [gander@32473 eventId=\"312\" reason=\"bad-mac\" direction=\"inbound\" \
             kind=\"r-goose\" appid=\"0x0010\" srcMac=\"00:1b:21:00:00:0a\" length=\"180\"] \
             inbound frame dropped: bad-mac"
        );
    }

    #[test]
    fn param_values_are_escaped() {
        let e = SecurityEvent::new(EventKind::KeysReloadFailed, "x").with("error", "bad \"]\"");
        let s = format_rfc5424(&origin(), &e);
        assert!(s.contains(r#"error="bad \"\]\"""#), "{s}");
        assert!(s.starts_with("<131>1 "), "local0 error: {s}");
    }

    #[test]
    fn event_ids_are_unique_and_stable() {
        let reasons = DropReason::ALL;
        let mut ids: Vec<u16> = reasons.iter().map(|r| drop_event_id(*r)).collect();
        ids.extend([100, 101, 200, 201, 202, 400]);
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate event id");
        // The documented ones.
        assert_eq!(drop_event_id(DropReason::BadMac), 312);
        assert_eq!(drop_event_id(DropReason::Replay), 318);
        assert_eq!(EventKind::Suppressed.id(), 400);
    }

    #[test]
    fn rate_limit_suppresses_and_summarises() {
        let (tx, rx) = std::sync::mpsc::sync_channel(100);
        let mut s = EventSink::new(tx, 3);
        let mut sent = 0;
        for _ in 0..10 {
            if s.admit(1000) {
                s.send(SecurityEvent::new(EventKind::ProtectKey, "x"));
                sent += 1;
            }
        }
        assert_eq!(sent, 3);
        assert_eq!(s.suppressed(), 7);
        // No summary within the same second.
        s.flush(1000);
        assert_eq!(rx.try_iter().count(), 3);
        // The housekeeping tick of the next second brings the summary.
        s.flush(1001);
        let got: Vec<SecurityEvent> = rx.try_iter().collect();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].kind, EventKind::Suppressed);
        assert!(got[0].params.contains(&("count", "7".into())), "{got:?}");
        // A new second has a fresh budget, and nothing pending is reported twice.
        assert!(s.admit(1002));
        s.flush(1003);
        assert_eq!(rx.try_iter().count(), 0);
        assert_eq!(s.emitted(), 4);
    }

    #[test]
    fn full_queue_counts_as_suppressed() {
        let (tx, rx) = std::sync::mpsc::sync_channel(2);
        let mut s = EventSink::new(tx, 100);
        for _ in 0..5 {
            assert!(s.admit(7));
            s.send(SecurityEvent::new(EventKind::ProtectKey, "x"));
        }
        assert_eq!((s.emitted(), s.suppressed()), (2, 3));
        assert_eq!(rx.try_iter().count(), 2);
        s.flush(8);
        assert_eq!(rx.try_iter().next().unwrap().kind, EventKind::Suppressed);
    }

    #[test]
    fn targets_parse_or_say_why() {
        assert_eq!(
            "unix:/dev/log".parse::<SyslogTarget>().unwrap(),
            SyslogTarget::Unix("/dev/log".into())
        );
        assert_eq!(
            "udp:[fd00::1]:514".parse::<SyslogTarget>().unwrap(),
            SyslogTarget::Udp("[fd00::1]:514".parse().unwrap())
        );
        assert!("tcp:1.2.3.4:514".parse::<SyslogTarget>().is_err());
        assert!("udp:nohost".parse::<SyslogTarget>().is_err());
        assert!("unix:".parse::<SyslogTarget>().is_err());
        assert_eq!(facility("authpriv"), Some(10));
        assert_eq!(facility("kern"), None);
    }

    #[test]
    fn logger_writes_what_the_sink_admits() {
        let dir = std::env::temp_dir().join(format!("gander-events-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("log.sock");
        let _ = std::fs::remove_file(&sock);
        let rx_sock = UnixDatagram::bind(&sock).unwrap();
        rx_sock
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let (logger, tx) = EventLogger::new(origin(), SyslogTarget::Unix(sock.clone()));
        let h = std::thread::spawn(move || logger.run());
        let mut s = EventSink::new(tx, 2);
        for _ in 0..4 {
            if s.admit(5) {
                s.send(drop_event(
                    DropReason::Replay,
                    Direction::Inbound,
                    None,
                    None,
                    None,
                    60,
                ));
            }
        }
        s.flush(6);
        drop(s);
        h.join().unwrap();
        let mut buf = [0u8; 2048];
        let mut got = Vec::new();
        while let Ok(n) = rx_sock.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..n]).to_string());
            if got.len() == 3 {
                break;
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].contains("eventId=\"318\""), "{}", got[0]);
        assert!(got[2].contains("eventId=\"400\"") && got[2].contains("count=\"2\""));
    }
}
