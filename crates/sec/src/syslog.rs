//! RFC 5424 security events, formatted once for every gander service that writes them (the
//! gateway's dropped frames and key events, the key server's registrations and rekeys).
//!
//! IEC 62351-6/-9 leave the event format open; RFC 5424 with structured data is what syslog
//! collectors and SIEMs parse without a custom decoder. One formatter means one escaping rule:
//! values from the network (an identity, a refusal reason) can carry `"`, `]` or line breaks,
//! and an event must stay one well-formed line (RFC 5424 §6.3.3, §6.4).

use std::time::SystemTime;

/// The SD-ID of gander's structured data (RFC 5424 §6.3.2, §7.2.2: `name@<enterprise number>`).
/// gander has no IANA Private Enterprise Number; 32473 is the number RFC 5612 reserves for
/// documentation and examples. A site that needs its own rewrites the SD-ID in its collector.
pub const SD_ID: &str = "gander@32473";

/// Severity (RFC 5424 §6.2.1, Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// 3: error conditions.
    Error = 3,
    /// 4: warning conditions.
    Warning = 4,
    /// 5: normal but significant condition.
    Notice = 5,
    /// 6: informational messages.
    Informational = 6,
}

/// One message's header fields and content.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    /// Facility number (RFC 5424 Table 1).
    pub facility: u8,
    /// Severity.
    pub severity: Severity,
    /// TIMESTAMP (written in UTC with microseconds, §6.2.3).
    pub time: SystemTime,
    /// HOSTNAME (§6.2.4).
    pub hostname: &'a str,
    /// APP-NAME (§6.2.5).
    pub app_name: &'a str,
    /// PROCID (§6.2.6).
    pub procid: u32,
    /// MSGID (§6.2.7).
    pub msgid: &'a str,
    /// The stable `eventId` parameter, first in the structured data.
    pub event_id: u16,
    /// Structured-data parameters after `eventId`, in order (names are RFC 5424 PARAM-NAMEs:
    /// printable ASCII without `=`, space, `]` or `"`).
    pub params: &'a [(&'static str, String)],
    /// The free-text MSG.
    pub text: &'a str,
}

/// A header field as RFC 5424 §6 allows it: printable US-ASCII without spaces, at most `max`
/// characters, `-` (NILVALUE) when empty.
fn header_field(s: &str, max: usize) -> String {
    let f: String = s
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(max)
        .collect();
    if f.is_empty() {
        "-".into()
    } else {
        f
    }
}

/// A PARAM-VALUE with `"`, `\` and `]` escaped (§6.3.3) and control characters (which a
/// peer-controlled value could carry) replaced by spaces, so an event stays one line.
fn escape_param(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if matches!(c, '"' | '\\' | ']') {
            out.push('\\');
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

/// Formats one message: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD] MSG`, with
/// PRI = facility * 8 + severity (§6.2.1).
pub fn format(m: &Message<'_>) -> String {
    let pri = u16::from(m.facility) * 8 + m.severity as u16;
    let ts = humantime::format_rfc3339_micros(m.time);
    let mut sd = format!("[{SD_ID} eventId=\"{}\"", m.event_id);
    for (k, v) in m.params {
        sd.push_str(&format!(" {k}=\"{}\"", escape_param(v)));
    }
    sd.push(']');
    // Control characters in the free text (a peer-controlled reason) would split the line.
    let text: String = m
        .text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!(
        "<{pri}>1 {ts} {} {} {} {} {sd} {text}",
        header_field(m.hostname, 255),
        header_field(m.app_name, 48),
        m.procid,
        header_field(m.msgid, 32),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn msg<'a>(params: &'a [(&'static str, String)], text: &'a str) -> Message<'a> {
        Message {
            facility: 10,
            severity: Severity::Warning,
            time: UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456),
            hostname: "sub station",
            app_name: "gander-kdc",
            procid: 42,
            msgid: "refused",
            event_id: 201,
            params,
            text,
        }
    }

    #[test]
    fn header_pri_timestamp_and_nil_fields() {
        let line = format(&Message {
            hostname: "",
            ..msg(&[], "ok")
        });
        // authpriv (10) * 8 + warning (4) = 84.
        assert_eq!(
            line,
            "<84>1 2023-11-14T22:13:20.123456Z - gander-kdc 42 refused [gander@32473 eventId=\"201\"] ok"
        );
        assert!(format(&msg(&[], "x")).contains(" substation gander-kdc "));
    }

    #[test]
    fn peer_values_cannot_break_the_structured_data_or_the_line() {
        let params = [("identity", "a\"b]c\\d\ne".to_string())];
        let line = format(&msg(&params, "bad\r\nline"));
        assert!(line.contains(r#"identity="a\"b\]c\\d e""#), "{line}");
        assert!(line.ends_with("bad  line"), "{line}");
        assert!(!line.contains('\n') && !line.contains('\r'));
    }
}
