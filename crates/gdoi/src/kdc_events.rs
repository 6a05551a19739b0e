//! The key server's security events as RFC 5424 syslog messages with structured data:
//! registrations, refusals with their reason and RFC 2408 notification, rekeys, withdrawals,
//! revocations, reloads (docs/gdoi.md "Security events").
//!
//! Event ids are stable (SIEM rules key on the SD-ID and `eventId`, never on the free text).
//! Refusals come from the network, so a spoofed flood could drown the log: at most
//! [`REFUSALS_PER_SECOND`] are written per second, and the next one written says how many were
//! left out (`suppressed`); the counters (`kdc_metrics`) still count every one.

use crate::net::kdc::KdcEvent;
use gander_wire::isakmp::error::notify_type as nt;
use std::io::{self, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::time::SystemTime;

pub use gander_sec::syslog::{Severity, SD_ID};
/// Refusal events written per second at most.
pub const REFUSALS_PER_SECOND: u32 = 20;
/// Facility `authpriv` (RFC 5424 Table 1): key management is an authorisation matter.
pub const FACILITY_AUTHPRIV: u8 = 10;

/// The RFC 2408 3.14.1 name of a notification, for logs and metric labels.
pub fn notify_name(n: u16) -> &'static str {
    match n {
        nt::INVALID_PAYLOAD_TYPE => "INVALID-PAYLOAD-TYPE",
        nt::DOI_NOT_SUPPORTED => "DOI-NOT-SUPPORTED",
        nt::INVALID_COOKIE => "INVALID-COOKIE",
        nt::INVALID_MAJOR_VERSION => "INVALID-MAJOR-VERSION",
        nt::INVALID_MINOR_VERSION => "INVALID-MINOR-VERSION",
        nt::INVALID_EXCHANGE_TYPE => "INVALID-EXCHANGE-TYPE",
        nt::INVALID_FLAGS => "INVALID-FLAGS",
        nt::INVALID_MESSAGE_ID => "INVALID-MESSAGE-ID",
        nt::INVALID_PROTOCOL_ID => "INVALID-PROTOCOL-ID",
        nt::ATTRIBUTES_NOT_SUPPORTED => "ATTRIBUTES-NOT-SUPPORTED",
        nt::NO_PROPOSAL_CHOSEN => "NO-PROPOSAL-CHOSEN",
        nt::PAYLOAD_MALFORMED => "PAYLOAD-MALFORMED",
        nt::INVALID_KEY_INFORMATION => "INVALID-KEY-INFORMATION",
        nt::INVALID_ID_INFORMATION => "INVALID-ID-INFORMATION",
        nt::INVALID_CERTIFICATE => "INVALID-CERTIFICATE",
        nt::INVALID_HASH_INFORMATION => "INVALID-HASH-INFORMATION",
        nt::AUTHENTICATION_FAILED => "AUTHENTICATION-FAILED",
        nt::INVALID_SIGNATURE => "INVALID-SIGNATURE",
        nt::CERTIFICATE_UNAVAILABLE => "CERTIFICATE-UNAVAILABLE",
        _ => "OTHER",
    }
}

/// One formatted-to-be event: id, MSGID, severity, parameters, message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KdcLogEvent {
    /// Stable `eventId`.
    pub id: u16,
    /// RFC 5424 MSGID.
    pub msgid: &'static str,
    /// Severity.
    pub severity: Severity,
    /// Structured-data parameters after `eventId`.
    pub params: Vec<(&'static str, String)>,
    /// Free text.
    pub message: String,
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The log event of a key-server event; `None` for steps that are not security events
/// (an exchange's intermediate messages, retransmissions).
pub fn log_event(e: &KdcEvent) -> Option<KdcLogEvent> {
    let ev = |id, msgid, severity, params: Vec<(&'static str, String)>, message: String| {
        Some(KdcLogEvent {
            id,
            msgid,
            severity,
            params,
            message,
        })
    };
    match e {
        KdcEvent::Phase1 { peer, identity } => ev(
            200,
            "phase1",
            Severity::Informational,
            vec![("peer", peer.to_string()), ("identity", lossy(identity))],
            "phase-1 SA established".into(),
        ),
        KdcEvent::Registered {
            peer,
            identity,
            group,
        } => ev(
            201,
            "registered",
            Severity::Notice,
            vec![
                ("peer", peer.to_string()),
                ("identity", lossy(identity)),
                ("group", lossy(group)),
            ],
            "member registered and received the group's keys".into(),
        ),
        KdcEvent::Refused {
            peer,
            reason,
            notify,
        } => ev(
            300,
            "refused",
            Severity::Warning,
            vec![
                ("peer", peer.to_string()),
                ("notify", notify_name(*notify).into()),
                ("notifyType", notify.to_string()),
                ("reason", reason.clone()),
            ],
            format!("refused: {reason}"),
        ),
        KdcEvent::Rekeyed {
            group,
            seq,
            key_id,
            activates_at,
            members,
        } => ev(
            400,
            "rekey",
            Severity::Notice,
            vec![
                ("group", group.clone()),
                ("seq", seq.to_string()),
                ("keyId", key_id.to_string()),
                ("activatesAt", activates_at.to_string()),
                ("members", members.to_string()),
            ],
            format!("next key {key_id} pushed"),
        ),
        KdcEvent::KeysWithdrawn {
            group,
            seq,
            key_ids,
            members,
        } => {
            let ids: Vec<String> = key_ids.iter().map(u32::to_string).collect();
            ev(
                401,
                "keys-withdrawn",
                Severity::Notice,
                vec![
                    ("group", group.clone()),
                    ("seq", seq.to_string()),
                    ("keyIds", ids.join(",")),
                    ("members", members.to_string()),
                ],
                "withdrawn keys deleted".into(),
            )
        }
        KdcEvent::Revoked {
            group,
            identities,
            new_key_id,
            seq,
            members,
        } => ev(
            402,
            "revoked",
            Severity::Warning,
            vec![
                ("group", group.clone()),
                ("identities", identities.join(",")),
                ("newKeyId", new_key_id.to_string()),
                ("seq", seq.to_string()),
                ("members", members.to_string()),
            ],
            "members revoked: KEK withdrawn, group rekeyed".into(),
        ),
        KdcEvent::PushFailed {
            group,
            target,
            reason,
        } => ev(
            403,
            "push-failed",
            Severity::Error,
            vec![
                ("group", group.clone()),
                ("target", target.to_string()),
                ("reason", reason.clone()),
            ],
            "push not sent".into(),
        ),
        KdcEvent::Reloaded { groups, members } => ev(
            101,
            "reloaded",
            Severity::Notice,
            vec![
                ("groups", groups.to_string()),
                ("members", members.to_string()),
            ],
            "policy reloaded".into(),
        ),
        KdcEvent::Started { listen } => ev(
            100,
            "started",
            Severity::Notice,
            vec![("listen", listen.to_string())],
            "key server started".into(),
        ),
        KdcEvent::ReloadFailed { reason } => ev(
            102,
            "reload-failed",
            Severity::Error,
            vec![("reason", reason.clone())],
            "reload refused; the policy in force stays".into(),
        ),
        KdcEvent::Stopped => ev(
            103,
            "stopped",
            Severity::Notice,
            vec![],
            "key server stopped".into(),
        ),
        _ => None,
    }
}

/// Formats one RFC 5424 message (`gander_sec::syslog`, shared with the gateway's events).
pub fn format_rfc5424(
    facility: u8,
    hostname: &str,
    procid: u32,
    time: SystemTime,
    e: &KdcLogEvent,
) -> String {
    gander_sec::syslog::format(&gander_sec::syslog::Message {
        facility,
        severity: e.severity,
        time,
        hostname,
        app_name: "gander-kdc",
        procid,
        msgid: e.msgid,
        event_id: e.id,
        params: &e.params,
        text: &e.message,
    })
}

/// Where events go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventTarget {
    /// One RFC 5424 line per event on stdout (journald under systemd).
    Stdout,
    /// One JSON object per line on stdout (`event` is the MSGID, `listening` with `addr` for
    /// the start; the structured-data parameters as strings): the format `gander kdc` printed
    /// before the RFC 5424 events, for scripts and tests that read it.
    Json,
    /// A local syslog socket (`/dev/log`), one datagram per event.
    Unix(PathBuf),
    /// A syslog collector over UDP (RFC 5426), one datagram per event.
    Udp(SocketAddr),
}

/// Writes events to their target, with the refusal budget.
pub struct EventWriter {
    target: EventTarget,
    unix: Option<UnixDatagram>,
    udp: Option<UdpSocket>,
    hostname: String,
    second: u64,
    refusals: u32,
    suppressed: u64,
}

impl EventWriter {
    /// A writer to `target`.
    pub fn new(target: EventTarget) -> io::Result<EventWriter> {
        let (unix, udp) = match &target {
            EventTarget::Stdout | EventTarget::Json => (None, None),
            EventTarget::Unix(_) => (Some(UnixDatagram::unbound()?), None),
            EventTarget::Udp(a) => {
                let any: SocketAddr = if a.is_ipv4() {
                    ([0, 0, 0, 0], 0).into()
                } else {
                    ([0u16; 8], 0).into()
                };
                (None, Some(UdpSocket::bind(any)?))
            }
        };
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        Ok(EventWriter {
            target,
            unix,
            udp,
            hostname,
            second: 0,
            refusals: 0,
            suppressed: 0,
        })
    }

    /// Writes the event if it is a security event and within the budget.
    pub fn write(&mut self, e: &KdcEvent) -> io::Result<()> {
        let Some(mut le) = log_event(e) else {
            return Ok(());
        };
        let time = SystemTime::now();
        let sec = time
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if sec != self.second {
            self.second = sec;
            self.refusals = 0;
        }
        if le.id == 300 {
            if self.refusals >= REFUSALS_PER_SECOND {
                self.suppressed += 1;
                return Ok(());
            }
            self.refusals += 1;
        }
        if self.suppressed > 0 {
            le.params.push(("suppressed", self.suppressed.to_string()));
            self.suppressed = 0;
        }
        if self.target == EventTarget::Json {
            let mut m = serde_json::Map::new();
            let name = if le.id == 100 { "listening" } else { le.msgid };
            m.insert("event".into(), name.into());
            m.insert("eventId".into(), le.id.into());
            if let KdcEvent::Started { listen } = e {
                m.insert("addr".into(), listen.to_string().into());
            }
            for (k, v) in &le.params {
                m.insert((*k).into(), v.clone().into());
            }
            let mut out = io::stdout().lock();
            writeln!(out, "{}", serde_json::Value::Object(m))?;
            return out.flush();
        }
        let line = format_rfc5424(
            FACILITY_AUTHPRIV,
            &self.hostname,
            std::process::id(),
            time,
            &le,
        );
        match (&self.target, &self.unix, &self.udp) {
            (EventTarget::Unix(p), Some(s), _) => s.send_to(line.as_bytes(), p).map(|_| ()),
            (EventTarget::Udp(a), _, Some(s)) => s.send_to(line.as_bytes(), a).map(|_| ()),
            _ => {
                let mut out = io::stdout().lock();
                writeln!(out, "{line}")?;
                out.flush()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_is_one_rfc5424_line_with_reason_and_notification() {
        let e = KdcEvent::Refused {
            peer: "192.0.2.7:500".parse().unwrap(),
            reason: "member not \"authorised\"]\nx".into(),
            notify: nt::INVALID_ID_INFORMATION,
        };
        let le = log_event(&e).unwrap();
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let line = format_rfc5424(FACILITY_AUTHPRIV, "kdc host", 42, t, &le);
        assert!(line.starts_with("<84>1 2023-11-14T22:13:20.000000Z kdchost gander-kdc 42 refused [gander@32473 eventId=\"300\""), "{line}");
        assert!(line.contains("notify=\"INVALID-ID-INFORMATION\" notifyType=\"18\""));
        assert!(
            line.contains(r#"reason="member not \"authorised\"\]"#),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn progress_is_not_an_event_and_revocation_is_a_warning() {
        let p = KdcEvent::Progress {
            peer: "192.0.2.7:500".parse().unwrap(),
        };
        assert!(log_event(&p).is_none());
        let r = log_event(&KdcEvent::Revoked {
            group: "g".into(),
            identities: vec!["ied-2".into()],
            new_key_id: 9,
            seq: 4,
            members: 3,
        })
        .unwrap();
        assert_eq!((r.id, r.severity), (402, Severity::Warning));
    }
}
