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

use crate::assoc::{AssociationReport, TlsReport};
use crate::finding::Finding;
use crate::gdoi::{Registration, Rekeys};
use crate::stream::StreamReport;
use crate::Audit;
use serde_json::{json, Map, Value};

/// The logs, in the order they are written.
pub const LOGS: [&str; 7] = ["goose", "sv", "rgoose", "mms", "tls", "gdoi", "findings"];

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

/// One column of a log: its field and how a line's value is read from the log's row, so the
/// schema and the writer are one table and cannot drift apart. `get` gives `None` for an unset
/// optional field (left out of the line, as Zeek's JSON writer does).
struct Col<S> {
    field: Field,
    get: fn(&S) -> Option<Value>,
}

fn c<S>(name: &'static str, ty: FieldType, required: bool, get: fn(&S) -> Option<Value>) -> Col<S> {
    Col {
        field: f(name, ty, required),
        get,
    }
}

/// The one writer: a row as a JSON object of its log's columns.
fn line<S>(cols: &[Col<S>], row: &S) -> String {
    let mut o = Map::new();
    for col in cols {
        if let Some(v) = (col.get)(row) {
            o.insert(col.field.name.into(), v);
        }
    }
    Value::Object(o).to_string()
}

fn secs(ns: u64) -> Value {
    json!(ns as f64 / 1e9)
}

fn some<V: Into<Value>>(v: V) -> Option<Value> {
    Some(v.into())
}

fn opt<V: Into<Value> + Clone>(v: &Option<V>) -> Option<Value> {
    v.clone().map(Into::into)
}

/// Columns every stream log has.
fn stream_common() -> Vec<Col<StreamReport>> {
    vec![
        c("ts", T::Time, true, |s| Some(secs(s.first_ts_ns))),
        c("uid", T::String, true, |s| some(s.uid.clone())),
        c("kind", T::String, true, |s| some(s.kind)),
        c("source_mac", T::Mac, true, |s| some(s.src_mac.clone())),
        c("destination_mac", T::Mac, true, |s| some(s.dst_mac.clone())),
        c("vlan", T::Count, false, |s| opt(&s.vlan)),
        c("priority", T::Count, false, |s| opt(&s.priority)),
        c("appid", T::Count, false, |s| opt(&s.appid)),
        c("dat_set", T::String, false, |s| opt(&s.dat_set)),
        c("conf_rev", T::Count, false, |s| opt(&s.conf_rev)),
        c("frames", T::Count, true, |s| some(s.frames)),
        c("first_frame", T::Count, true, |s| some(s.first_frame)),
        c("last_frame", T::Count, true, |s| some(s.last_frame)),
        c("last_ts", T::Time, true, |s| Some(secs(s.last_ts_ns))),
        c("rate", T::Double, true, |s| some(s.rate_per_s)),
        c("security", T::String, true, |s| some(s.security)),
        c("key_ids", T::VectorCount, true, |s| some(s.key_ids.clone())),
        c("mac", T::String, false, |s| opt(&s.mac)),
        c("enc", T::String, false, |s| opt(&s.enc)),
        c("verified", T::Count, true, |s| some(s.verified)),
        c("failed", T::Count, true, |s| some(s.failed)),
        c("simulation", T::Bool, true, |s| some(s.simulation)),
        c("mac_len", T::Count, false, |s| s.mac_len.map(|n| json!(n))),
        c("arrival_p50_ms", T::Double, false, |s| {
            s.arrival.as_ref().map(|a| json!(a.p50_ms))
        }),
        c("arrival_p99_ms", T::Double, false, |s| {
            s.arrival.as_ref().map(|a| json!(a.p99_ms))
        }),
        c("arrival_max_ms", T::Double, false, |s| {
            s.arrival.as_ref().map(|a| json!(a.max_ms))
        }),
        c("transfer_class", T::String, false, |s| {
            s.arrival.as_ref().and_then(|a| a.class).map(Value::from)
        }),
    ]
}

/// The connection 4-tuple of an R-GOOSE/R-SV stream (required in rgoose.log, present on the
/// R-SV lines of sv.log).
fn ip_id(required: bool) -> Vec<Col<StreamReport>> {
    vec![
        c("id.orig_h", T::Addr, required, |s| opt(&s.src_ip)),
        c("id.orig_p", T::Port, required, |s| opt(&s.src_port)),
        c("id.resp_h", T::Addr, required, |s| opt(&s.dst_ip)),
        c("id.resp_p", T::Port, required, |s| opt(&s.dst_port)),
    ]
}

fn goose_only() -> Vec<Col<StreamReport>> {
    vec![
        c("gocbRef", T::String, false, |s| opt(&s.id)),
        c("goID", T::String, false, |s| opt(&s.go_id)),
        c("time_allowed_to_live", T::Count, false, |s| opt(&s.tal_ms)),
        c("state_changes", T::Count, true, |s| some(s.state_changes)),
    ]
}

fn goose_cols() -> Vec<Col<StreamReport>> {
    let mut v = stream_common();
    v.extend(goose_only());
    v
}

fn sv_cols() -> Vec<Col<StreamReport>> {
    let mut v = stream_common();
    v.extend([
        c("svID", T::String, false, |s: &StreamReport| opt(&s.id)),
        c("smp_rate", T::Count, false, |s| opt(&s.smp_rate)),
        c("smp_synch_none", T::Count, true, |s| some(s.smp_synch[0])),
        c("smp_synch_local", T::Count, true, |s| some(s.smp_synch[1])),
        c("smp_synch_global", T::Count, true, |s| some(s.smp_synch[2])),
    ]);
    v.extend(ip_id(false));
    v
}

fn rgoose_cols() -> Vec<Col<StreamReport>> {
    let mut v = goose_cols();
    v.extend(ip_id(true));
    v.push(c("spdu_kind", T::String, true, |s| some(s.kind)));
    v
}

/// `host` and `port` of a socket address's text.
fn split(addr: &str) -> (String, u16) {
    match addr.parse::<std::net::SocketAddr>() {
        Ok(a) => (a.ip().to_string(), a.port()),
        Err(_) => (addr.to_string(), 0),
    }
}

/// The columns of mms.log and tls.log that name the connection.
fn conn_id() -> Vec<Col<AssociationReport>> {
    vec![
        c("ts", T::Time, true, |a| Some(secs(a.first_ts_ns))),
        c("uid", T::String, true, |a| some(a.uid.clone())),
        c("id.orig_h", T::Addr, true, |a| some(split(&a.client).0)),
        c("id.orig_p", T::Port, true, |a| some(split(&a.client).1)),
        c("id.resp_h", T::Addr, true, |a| some(split(&a.server).0)),
        c("id.resp_p", T::Port, true, |a| some(split(&a.server).1)),
    ]
}

fn mms_cols() -> Vec<Col<AssociationReport>> {
    let mut v = conn_id();
    v.extend([
        c("transport", T::String, true, |a: &AssociationReport| {
            some(a.transport)
        }),
        c("frames", T::Count, true, |a| some(a.frames)),
        c("first_frame", T::Count, true, |a| some(a.first_frame)),
        c("last_ts", T::Time, true, |a| Some(secs(a.last_ts_ns))),
        c("orig_bytes", T::Count, true, |a| some(a.octets_orig)),
        c("resp_bytes", T::Count, true, |a| some(a.octets_resp)),
        // conn.log's history letters for what is known: S (SYN seen), F (FIN or RST seen).
        c("history", T::String, true, |a| {
            some(format!(
                "{}{}",
                if a.syn { "S" } else { "" },
                if a.closed { "F" } else { "" }
            ))
        }),
    ]);
    v
}

/// tls.log: Zeek's ssl.log names where they apply (`version`, `cipher`, `curve`, `resumed`,
/// `established`, `cert_chain_subjects`), gander's own after them. Written for associations
/// with a TLS handshake only.
fn tls_cols() -> Vec<Col<AssociationReport>> {
    fn t(a: &AssociationReport) -> Option<&TlsReport> {
        a.tls.as_ref()
    }
    let mut v = conn_id();
    v.extend([
        c("version", T::String, true, |a: &AssociationReport| {
            t(a).map(|t| json!(t.version))
        }),
        c("cipher", T::String, true, |a| t(a).map(|t| json!(t.suite))),
        c("curve", T::String, false, |a| {
            t(a).and_then(|t| opt(&t.group))
        }),
        c("resumed", T::Bool, false, |a| {
            t(a).and_then(|t| opt(&t.resumed))
        }),
        c("established", T::Bool, true, |a| {
            t(a).map(|t| json!(t.established))
        }),
        c("cert_chain_subjects", T::VectorString, true, |a| {
            t(a).map(|t| json!(t.chain))
        }),
        c("client_cert_requested", T::Bool, true, |a| {
            t(a).map(|t| json!(t.cert_requested))
        }),
        c("client_cert_sent", T::Bool, false, |a| {
            t(a).and_then(|t| opt(&t.client_cert_sent))
        }),
        c("renegotiations", T::Count, true, |a| {
            t(a).map(|t| json!(t.renegotiations))
        }),
        c("verdicts", T::VectorString, true, |a| {
            t(a).map(|t| {
                json!(t
                    .verdicts
                    .iter()
                    .map(|(id, level, _)| format!("{id}:{level}"))
                    .collect::<Vec<_>>())
            })
        }),
    ]);
    v
}

/// A line of gdoi.log: a registration or a rekey SA.
enum GdoiRow<'a> {
    Pull(&'a Registration),
    Push(&'a Rekeys),
}

fn sock(a: &str, host: bool) -> Option<Value> {
    let (h, p) = split(a);
    Some(if host { json!(h) } else { json!(p) })
}

/// gdoi.log: one line per GROUPKEY-PULL registration (orig the member, resp the key server) and
/// one per GROUPKEY-PUSH rekey SA (orig the key server, resp where the rekeys went).
fn gdoi_cols<'a>() -> Vec<Col<GdoiRow<'a>>> {
    use GdoiRow::{Pull, Push};
    vec![
        c("ts", T::Time, true, |r| {
            Some(secs(match r {
                Pull(p) => p.first_ts_ns,
                Push(p) => p.first_ts_ns,
            }))
        }),
        c("uid", T::String, true, |r| match r {
            Pull(p) => some(p.uid.clone()),
            Push(p) => some(p.uid.clone()),
        }),
        c("id.orig_h", T::Addr, true, |r| match r {
            Pull(p) => sock(&p.member, true),
            Push(p) => sock(&p.key_server, true),
        }),
        c("id.orig_p", T::Port, true, |r| match r {
            Pull(p) => sock(&p.member, false),
            Push(p) => sock(&p.key_server, false),
        }),
        c("id.resp_h", T::Addr, true, |r| match r {
            Pull(p) => sock(&p.key_server, true),
            Push(p) => sock(&p.destination, true),
        }),
        c("id.resp_p", T::Port, true, |r| match r {
            Pull(p) => sock(&p.key_server, false),
            Push(p) => sock(&p.destination, false),
        }),
        c("exchange", T::String, true, |r| match r {
            Pull(_) => some("GROUPKEY-PULL"),
            Push(_) => some("GROUPKEY-PUSH"),
        }),
        c("spi", T::String, true, |r| match r {
            Pull(p) => some(p.cookies.clone()),
            Push(p) => some(p.kek_spi.clone()),
        }),
        c("messages", T::Count, true, |r| match r {
            Pull(p) => some(p.messages),
            Push(p) => some(p.pushes),
        }),
        c("retransmissions", T::Count, false, |r| match r {
            Pull(p) => some(p.retransmissions),
            Push(_) => None,
        }),
        c("outcome", T::String, false, |r| match r {
            Pull(p) => some(p.outcome),
            Push(_) => None,
        }),
        c("replayed", T::Count, false, |r| match r {
            Pull(_) => None,
            Push(p) => some(p.replayed),
        }),
        c("first_frame", T::Count, true, |r| match r {
            Pull(p) => some(p.first_frame),
            Push(p) => some(p.first_frame),
        }),
        c("last_frame", T::Count, true, |r| match r {
            Pull(p) => some(p.last_frame),
            Push(p) => some(p.last_frame),
        }),
        // Read with `--ike-keylog` (gdoi_decrypt): never key material.
        c("group", T::String, false, |r| match r {
            Pull(p) => opt(&p.group),
            Push(p) => opt(&p.group),
        }),
        c("member_id", T::String, false, |r| match r {
            Pull(p) => opt(&p.member_id),
            Push(_) => None,
        }),
        c("seq", T::Count, false, |r| match r {
            Pull(p) => opt(&p.seq),
            Push(p) => p.seqs.last().map(|s| json!(s)),
        }),
        c("seqs", T::VectorCount, false, |r| match r {
            Pull(_) => None,
            Push(p) => (p.decrypted > 0).then(|| json!(p.seqs)),
        }),
        c("tek_key_ids", T::VectorCount, false, |r| {
            let t = match r {
                Pull(p) => &p.teks,
                Push(p) => &p.teks,
            };
            (!t.is_empty()).then(|| json!(t.iter().map(|k| k.key_id).collect::<Vec<_>>()))
        }),
        c("tek_algorithms", T::VectorString, false, |r| {
            let t = match r {
                Pull(p) => &p.teks,
                Push(p) => &p.teks,
            };
            (!t.is_empty()).then(|| json!(t.iter().map(|k| k.algorithms()).collect::<Vec<_>>()))
        }),
        c("tek_lifetimes", T::VectorCount, false, |r| {
            let t = match r {
                Pull(p) => &p.teks,
                Push(p) => &p.teks,
            };
            (!t.is_empty()).then(|| {
                json!(t
                    .iter()
                    .map(|k| k.lifetime_secs.unwrap_or(0))
                    .collect::<Vec<_>>())
            })
        }),
        c("deleted_key_ids", T::VectorCount, false, |r| match r {
            Pull(_) => None,
            Push(p) => (!p.deleted.is_empty()).then(|| json!(p.deleted)),
        }),
        c("kek_spi", T::String, false, |r| match r {
            Pull(p) => opt(&p.kek_spi),
            Push(_) => None,
        }),
        c("notify", T::Count, false, |r| match r {
            Pull(p) => opt(&p.notify),
            Push(_) => None,
        }),
        c("decrypted", T::Count, false, |r| match r {
            Pull(p) => (p.decrypted > 0).then(|| json!(p.decrypted)),
            Push(p) => (p.decrypted > 0).then(|| json!(p.decrypted)),
        }),
    ]
}

/// A finding with its place in the list (its uid is made of both).
struct FindingRow<'a> {
    n: usize,
    f: &'a Finding,
}

fn findings_cols<'a>() -> Vec<Col<FindingRow<'a>>> {
    vec![
        c("ts", T::Time, true, |r| Some(secs(r.f.first_ts_ns))),
        c("uid", T::String, true, |r| {
            some(crate::stream::prefixed_uid(
                'F',
                &format!("{}/{:?}/{}", r.f.code, r.f.stream, r.n),
            ))
        }),
        c("stream_uid", T::String, false, |r| opt(&r.f.stream)),
        c("code", T::String, true, |r| some(r.f.code.clone())),
        c("severity", T::String, true, |r| some(r.f.severity.word())),
        c("msg", T::String, true, |r| some(r.f.detail.clone())),
        c("frames", T::VectorCount, true, |r| some(r.f.frames.clone())),
        c("first_frame", T::Count, true, |r| {
            some(r.f.frames.first().copied().unwrap_or(0))
        }),
        c("count", T::Count, true, |r| some(r.f.count)),
    ]
}

fn fields<S>(cols: Vec<Col<S>>) -> Vec<Field> {
    cols.into_iter().map(|c| c.field).collect()
}

/// The fields of log `log` (one of [`LOGS`]), `None` for another name.
pub fn schema(log: &str) -> Option<Vec<Field>> {
    Some(match log {
        "goose" => fields(goose_cols()),
        "sv" => fields(sv_cols()),
        "rgoose" => fields(rgoose_cols()),
        "mms" => fields(mms_cols()),
        "tls" => fields(tls_cols()),
        "gdoi" => fields(gdoi_cols()),
        "findings" => fields(findings_cols()),
        _ => return None,
    })
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

/// The lines of every log: (log name, lines), in [`LOGS`] order.
pub fn logs(audit: &Audit) -> Vec<(&'static str, Vec<String>)> {
    let (goose, sv, rgoose) = (goose_cols(), sv_cols(), rgoose_cols());
    let by_kind = |kinds: &[&str], cols: &[Col<StreamReport>]| -> Vec<String> {
        audit
            .streams
            .iter()
            .filter(|s| kinds.contains(&s.kind))
            .map(|s| line(cols, s))
            .collect()
    };
    // GSE management streams are counted in the summary and have no log of their own.
    let goose = by_kind(&["goose"], &goose);
    let sv = by_kind(&["sv", "r-sv"], &sv);
    let rgoose = by_kind(&["r-goose", "session"], &rgoose);
    let mms_c = mms_cols();
    let mms = audit.associations.iter().map(|a| line(&mms_c, a)).collect();
    let tls_c = tls_cols();
    let tls = audit
        .associations
        .iter()
        .filter(|a| a.tls.is_some())
        .map(|a| line(&tls_c, a))
        .collect();
    let gc = gdoi_cols();
    let gdoi = audit
        .registrations
        .iter()
        .map(GdoiRow::Pull)
        .chain(audit.rekeys.iter().map(GdoiRow::Push))
        .map(|r| line(&gc, &r))
        .collect();
    let fc = findings_cols();
    let findings = audit
        .findings
        .iter()
        .enumerate()
        .map(|(n, f)| line(&fc, &FindingRow { n, f }))
        .collect();
    vec![
        ("goose", goose),
        ("sv", sv),
        ("rgoose", rgoose),
        ("mms", mms),
        ("tls", tls),
        ("gdoi", gdoi),
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
