//! JSON-lines logs in the Zeek convention, one file per kind, for Zeek, Malcolm or any SIEM.
//!
//! Zeek's JSON writer puts one object per line; `ts` is the time of the event in seconds since
//! the epoch (a double), `uid` ties the lines of one flow together, and the connection
//! 4-tuple is flattened into `id.orig_h`, `id.orig_p`, `id.resp_h`, `id.resp_p`; unset
//! optional fields are left out. The layer-2 logs follow the CISA ICSNPP GOOSE/SV parsers in
//! naming the addresses `source_mac` and `destination_mac`. Each line is one stream, the way
//! conn.log holds one connection: `ts` its first frame, the counters over the whole capture;
//! findings.log holds one line per finding with the frame numbers that show it.
//!
//! [`schema`] gives the fields of every log (name, Zeek type, required), and [`check_line`] checks
//! a line against it; the tests run every line the audit writes through it.

use crate::finding::Finding;
use crate::stream::StreamReport;
use crate::Audit;
use serde_json::{json, Map, Value};

/// The logs, in the order they are written.
pub const LOGS: [&str; 6] = ["goose", "sv", "rgoose", "mms", "tls", "findings"];

/// Zeek field types used here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// `time`: seconds since the epoch, a non-negative double.
    Time,
    /// `string`.
    String,
    /// `count`: a non-negative integer.
    Count,
    /// `double`.
    Double,
    /// `bool`.
    Bool,
    /// `addr`: an IPv4 or IPv6 address.
    Addr,
    /// `port`: 0..=65535.
    Port,
    /// A MAC address, `string` in Zeek, six colon-separated hex octets.
    Mac,
    /// `vector of count`.
    VectorCount,
    /// `vector of string`.
    VectorString,
}

/// One field of a log.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// Name as in the JSON (dotted for the connection id).
    pub name: &'static str,
    /// Type.
    pub ty: FieldType,
    /// Present in every line.
    pub required: bool,
}

const fn f(name: &'static str, ty: FieldType, required: bool) -> Field {
    Field { name, ty, required }
}

use FieldType as T;

/// Fields every stream log has.
const STREAM_COMMON: [Field; 23] = [
    f("ts", T::Time, true),
    f("uid", T::String, true),
    f("kind", T::String, true),
    f("source_mac", T::Mac, true),
    f("destination_mac", T::Mac, true),
    f("vlan", T::Count, false),
    f("priority", T::Count, false),
    f("appid", T::Count, false),
    f("dat_set", T::String, false),
    f("conf_rev", T::Count, false),
    f("frames", T::Count, true),
    f("first_frame", T::Count, true),
    f("last_frame", T::Count, true),
    f("last_ts", T::Time, true),
    f("rate", T::Double, true),
    f("security", T::String, true),
    f("key_ids", T::VectorCount, true),
    f("mac", T::String, false),
    f("enc", T::String, false),
    f("verified", T::Count, true),
    f("failed", T::Count, true),
    f("simulation", T::Bool, true),
    f("transfer_class", T::String, false),
];

const ARRIVAL: [Field; 3] = [
    f("arrival_p50_ms", T::Double, false),
    f("arrival_p99_ms", T::Double, false),
    f("arrival_max_ms", T::Double, false),
];

const IP_ID: [Field; 4] = [
    f("id.orig_h", T::Addr, true),
    f("id.orig_p", T::Port, true),
    f("id.resp_h", T::Addr, true),
    f("id.resp_p", T::Port, true),
];

const GOOSE_ONLY: [Field; 5] = [
    f("gocbRef", T::String, false),
    f("goID", T::String, false),
    f("time_allowed_to_live", T::Count, false),
    f("state_changes", T::Count, true),
    f("mac_len", T::Count, false),
];

const SV_ONLY: [Field; 6] = [
    f("svID", T::String, false),
    f("smp_rate", T::Count, false),
    f("smp_synch_none", T::Count, true),
    f("smp_synch_local", T::Count, true),
    f("smp_synch_global", T::Count, true),
    f("mac_len", T::Count, false),
];

const MMS: [Field; 13] = [
    f("ts", T::Time, true),
    f("uid", T::String, true),
    f("id.orig_h", T::Addr, true),
    f("id.orig_p", T::Port, true),
    f("id.resp_h", T::Addr, true),
    f("id.resp_p", T::Port, true),
    f("transport", T::String, true),
    f("frames", T::Count, true),
    f("first_frame", T::Count, true),
    f("last_ts", T::Time, true),
    f("orig_bytes", T::Count, true),
    f("resp_bytes", T::Count, true),
    f("history", T::String, true),
];

/// Zeek's ssl.log names where they apply (`version`, `cipher`, `curve`, `resumed`,
/// `established`, `cert_chain_subjects`), gander's own after them.
const TLS: [Field; 16] = [
    f("ts", T::Time, true),
    f("uid", T::String, true),
    f("id.orig_h", T::Addr, true),
    f("id.orig_p", T::Port, true),
    f("id.resp_h", T::Addr, true),
    f("id.resp_p", T::Port, true),
    f("version", T::String, true),
    f("cipher", T::String, true),
    f("curve", T::String, false),
    f("resumed", T::Bool, false),
    f("established", T::Bool, true),
    f("cert_chain_subjects", T::VectorString, true),
    f("client_cert_requested", T::Bool, true),
    f("client_cert_sent", T::Bool, false),
    f("renegotiations", T::Count, true),
    f("verdicts", T::VectorString, true),
];

const FINDINGS: [Field; 9] = [
    f("ts", T::Time, true),
    f("uid", T::String, true),
    f("stream_uid", T::String, false),
    f("code", T::String, true),
    f("severity", T::String, true),
    f("msg", T::String, true),
    f("frames", T::VectorCount, true),
    f("first_frame", T::Count, true),
    f("count", T::Count, true),
];

/// The fields of log `log` (`goose`, `sv`, `rgoose`, `findings`), `None` for another name.
pub fn schema(log: &str) -> Option<Vec<Field>> {
    let mut v: Vec<Field> = Vec::new();
    match log {
        "goose" => {
            v.extend(STREAM_COMMON);
            v.extend(ARRIVAL);
            v.extend(GOOSE_ONLY);
        }
        "sv" => {
            v.extend(STREAM_COMMON);
            v.extend(ARRIVAL);
            v.extend(SV_ONLY);
            // R-SV lines also carry the IP 4-tuple.
            v.extend(IP_ID.iter().map(|x| Field {
                required: false,
                ..*x
            }));
        }
        "rgoose" => {
            v.extend(STREAM_COMMON);
            v.extend(ARRIVAL);
            v.extend(GOOSE_ONLY);
            v.extend(IP_ID);
            v.push(f("spdu_kind", T::String, true));
        }
        "mms" => v.extend(MMS),
        "tls" => v.extend(TLS),
        "findings" => v.extend(FINDINGS),
        _ => return None,
    }
    Some(v)
}

/// Why a line does not fit its log's schema.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The log has no schema.
    #[error("no log named {0:?}")]
    UnknownLog(String),
    /// The line is not a JSON object.
    #[error("not a JSON object")]
    NotAnObject,
    /// A required field is missing.
    #[error("required field {0:?} missing")]
    Missing(&'static str),
    /// A field the schema does not know.
    #[error("field {0:?} is not in the schema")]
    Unknown(String),
    /// A field of the wrong type.
    #[error("field {field:?} is not a {ty:?}: {value}")]
    WrongType {
        /// Field.
        field: &'static str,
        /// Expected type.
        ty: FieldType,
        /// What was there.
        value: String,
    },
}

fn fits(ty: FieldType, v: &Value) -> bool {
    match ty {
        T::Time => v.as_f64().is_some_and(|x| x >= 0.0),
        T::String => v.is_string(),
        T::Count => v.as_u64().is_some(),
        T::Double => v.is_number(),
        T::Bool => v.is_boolean(),
        T::Addr => v
            .as_str()
            .is_some_and(|s| s.parse::<std::net::IpAddr>().is_ok()),
        T::Port => v.as_u64().is_some_and(|p| p <= 65535),
        T::Mac => v.as_str().is_some_and(|s| {
            let parts: Vec<&str> = s.split(':').collect();
            parts.len() == 6
                && parts
                    .iter()
                    .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
        }),
        T::VectorCount => v
            .as_array()
            .is_some_and(|a| a.iter().all(|x| x.as_u64().is_some())),
        T::VectorString => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
    }
}

/// Checks one line of log `log` against its schema: every required field present, every field
/// known and of its type.
pub fn check_line(log: &str, line: &str) -> Result<(), SchemaError> {
    let fields = schema(log).ok_or_else(|| SchemaError::UnknownLog(log.into()))?;
    let v: Value = serde_json::from_str(line).map_err(|_| SchemaError::NotAnObject)?;
    let o = v.as_object().ok_or(SchemaError::NotAnObject)?;
    for (k, val) in o {
        let fd = fields
            .iter()
            .find(|x| x.name == k)
            .ok_or_else(|| SchemaError::Unknown(k.clone()))?;
        if !fits(fd.ty, val) {
            return Err(SchemaError::WrongType {
                field: fd.name,
                ty: fd.ty,
                value: val.to_string(),
            });
        }
    }
    for fd in fields.iter().filter(|x| x.required) {
        if !o.contains_key(fd.name) {
            return Err(SchemaError::Missing(fd.name));
        }
    }
    Ok(())
}

/// `host` and `port` of a socket address's text.
fn split(addr: &str) -> (String, u16) {
    match addr.parse::<std::net::SocketAddr>() {
        Ok(a) => (a.ip().to_string(), a.port()),
        Err(_) => (addr.to_string(), 0),
    }
}

fn secs(ns: u64) -> Value {
    json!(ns as f64 / 1e9)
}

fn put<T: Into<Value>>(o: &mut Map<String, Value>, k: &str, v: Option<T>) {
    if let Some(v) = v {
        o.insert(k.into(), v.into());
    }
}

fn stream_line(s: &StreamReport) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("ts".into(), secs(s.first_ts_ns));
    o.insert("uid".into(), json!(s.uid));
    o.insert("kind".into(), json!(s.kind));
    o.insert("source_mac".into(), json!(s.src_mac));
    o.insert("destination_mac".into(), json!(s.dst_mac));
    put(&mut o, "vlan", s.vlan);
    put(&mut o, "priority", s.priority);
    put(&mut o, "appid", s.appid);
    put(&mut o, "dat_set", s.dat_set.clone());
    put(&mut o, "conf_rev", s.conf_rev);
    o.insert("frames".into(), json!(s.frames));
    o.insert("first_frame".into(), json!(s.first_frame));
    o.insert("last_frame".into(), json!(s.last_frame));
    o.insert("last_ts".into(), secs(s.last_ts_ns));
    o.insert("rate".into(), json!(s.rate_per_s));
    o.insert("security".into(), json!(s.security));
    o.insert("key_ids".into(), json!(s.key_ids));
    put(&mut o, "mac", s.mac);
    put(&mut o, "enc", s.enc);
    o.insert("verified".into(), json!(s.verified));
    o.insert("failed".into(), json!(s.failed));
    o.insert("simulation".into(), json!(s.simulation));
    put(&mut o, "mac_len", s.mac_len);
    if let Some(a) = &s.arrival {
        o.insert("arrival_p50_ms".into(), json!(a.p50_ms));
        o.insert("arrival_p99_ms".into(), json!(a.p99_ms));
        o.insert("arrival_max_ms".into(), json!(a.max_ms));
        put(&mut o, "transfer_class", a.class);
    }
    if let (Some(sh), Some(sp), Some(dh), Some(dp)) = (&s.src_ip, s.src_port, &s.dst_ip, s.dst_port)
    {
        o.insert("id.orig_h".into(), json!(sh));
        o.insert("id.orig_p".into(), json!(sp));
        o.insert("id.resp_h".into(), json!(dh));
        o.insert("id.resp_p".into(), json!(dp));
    }
    o
}

fn goose_fields(o: &mut Map<String, Value>, s: &StreamReport) {
    put(o, "gocbRef", s.id.clone());
    put(o, "goID", s.go_id.clone());
    put(o, "time_allowed_to_live", s.tal_ms);
    o.insert("state_changes".into(), json!(s.state_changes));
}

fn finding_line(f: &Finding, n: usize) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("ts".into(), secs(f.first_ts_ns));
    o.insert(
        "uid".into(),
        json!(crate::stream::prefixed_uid(
            'F',
            &format!("{}/{:?}/{n}", f.code, f.stream)
        )),
    );
    put(&mut o, "stream_uid", f.stream.clone());
    o.insert("code".into(), json!(f.code));
    o.insert("severity".into(), json!(f.severity.word()));
    o.insert("msg".into(), json!(f.detail));
    o.insert("frames".into(), json!(f.frames));
    o.insert(
        "first_frame".into(),
        json!(f.frames.first().copied().unwrap_or(0)),
    );
    o.insert("count".into(), json!(f.count));
    o
}

/// The lines of every log: (log name, lines), in [`LOGS`] order.
pub fn logs(audit: &Audit) -> Vec<(&'static str, Vec<String>)> {
    let mut goose = Vec::new();
    let mut sv = Vec::new();
    let mut rgoose = Vec::new();
    for s in &audit.streams {
        let mut o = stream_line(s);
        match s.kind {
            "goose" => {
                goose_fields(&mut o, s);
                goose.push(Value::Object(o).to_string());
            }
            "sv" | "r-sv" => {
                put(&mut o, "svID", s.id.clone());
                put(&mut o, "smp_rate", s.smp_rate);
                o.insert("smp_synch_none".into(), json!(s.smp_synch[0]));
                o.insert("smp_synch_local".into(), json!(s.smp_synch[1]));
                o.insert("smp_synch_global".into(), json!(s.smp_synch[2]));
                sv.push(Value::Object(o).to_string());
            }
            "r-goose" | "session" => {
                goose_fields(&mut o, s);
                o.insert("spdu_kind".into(), json!(s.kind));
                rgoose.push(Value::Object(o).to_string());
            }
            // GSE management: counted in the summary, no log of its own.
            _ => {}
        }
    }
    let mut mms = Vec::new();
    let mut tls = Vec::new();
    for a in &audit.associations {
        let (ch, cp) = split(&a.client);
        let (sh, sp) = split(&a.server);
        let mut o = Map::new();
        o.insert("ts".into(), secs(a.first_ts_ns));
        o.insert("uid".into(), json!(a.uid));
        o.insert("id.orig_h".into(), json!(ch));
        o.insert("id.orig_p".into(), json!(cp));
        o.insert("id.resp_h".into(), json!(sh));
        o.insert("id.resp_p".into(), json!(sp));
        let base = o.clone();
        o.insert("transport".into(), json!(a.transport));
        o.insert("frames".into(), json!(a.frames));
        o.insert("first_frame".into(), json!(a.first_frame));
        o.insert("last_ts".into(), secs(a.last_ts_ns));
        o.insert("orig_bytes".into(), json!(a.octets_orig));
        o.insert("resp_bytes".into(), json!(a.octets_resp));
        // conn.log's history letters for what is known: S (SYN seen), F (FIN or RST seen).
        let history = format!(
            "{}{}",
            if a.syn { "S" } else { "" },
            if a.closed { "F" } else { "" }
        );
        o.insert("history".into(), json!(history));
        mms.push(Value::Object(o).to_string());
        if let Some(t) = &a.tls {
            let mut o = base;
            o.insert("version".into(), json!(t.version));
            o.insert("cipher".into(), json!(t.suite));
            put(&mut o, "curve", t.group.clone());
            put(&mut o, "resumed", t.resumed);
            o.insert("established".into(), json!(t.established));
            o.insert("cert_chain_subjects".into(), json!(t.chain));
            o.insert("client_cert_requested".into(), json!(t.cert_requested));
            put(&mut o, "client_cert_sent", t.client_cert_sent);
            o.insert("renegotiations".into(), json!(t.renegotiations));
            let verdicts: Vec<String> = t
                .verdicts
                .iter()
                .map(|(id, level, _)| format!("{id}:{level}"))
                .collect();
            o.insert("verdicts".into(), json!(verdicts));
            tls.push(Value::Object(o).to_string());
        }
    }
    let findings = audit
        .findings
        .iter()
        .enumerate()
        .map(|(i, f)| Value::Object(finding_line(f, i)).to_string())
        .collect();
    vec![
        ("goose", goose),
        ("sv", sv),
        ("rgoose", rgoose),
        ("mms", mms),
        ("tls", tls),
        ("findings", findings),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checker_refuses_what_a_consumer_would_choke_on() {
        let ok = r#"{"ts":1.5,"uid":"Fx","code":"c","severity":"low","msg":"m","frames":[1,2],"first_frame":1,"count":2}"#;
        check_line("findings", ok).unwrap();
        assert_eq!(
            check_line("findings", r#"{"ts":1.5}"#),
            Err(SchemaError::Missing("uid"))
        );
        assert!(matches!(
            check_line("findings", &ok.replace("\"count\":2", "\"count\":-2")),
            Err(SchemaError::WrongType { field: "count", .. })
        ));
        assert!(matches!(
            check_line(
                "findings",
                &ok.replace("\"ts\":1.5", "\"ts\":1.5,\"extra\":1")
            ),
            Err(SchemaError::Unknown(_))
        ));
        assert_eq!(
            check_line("nope", ok),
            Err(SchemaError::UnknownLog("nope".into()))
        );
        assert_eq!(check_line("findings", "[1]"), Err(SchemaError::NotAnObject));
        assert!(fits(T::Mac, &json!("01:0c:cd:01:00:01")));
        assert!(!fits(T::Mac, &json!("01:0c:cd:01:00")));
        assert!(fits(T::Addr, &json!("fe80::1")));
        assert!(!fits(T::Port, &json!(70000)));
    }
}
