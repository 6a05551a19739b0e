//! MMS associations in the inventory and their findings: plain MMS where IEC 62351-4 expects
//! TLS, and the IEC 62351-3 verdicts on what each TLS handshake showed ([`crate::tls_judge`]).

use crate::finding::{Findings, Severity};
use crate::mms_tcp::{Association, Transport};
use crate::stream::prefixed_uid;
use crate::tls_judge;
use crate::tls_wire::version_name;
use gander_tls::survey::verdicts::Level;
use serde::Serialize;

/// The TLS part of an association.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TlsReport {
    /// Negotiated version.
    pub version: &'static str,
    /// Negotiated suite (IANA name, or the code point).
    pub suite: String,
    /// Key-exchange group (key_share or ServerKeyExchange), IANA name or code point.
    pub group: Option<String>,
    /// The handshake resumed a session.
    pub resumed: Option<bool>,
    /// The server asked for a client certificate (TLS 1.2).
    pub cert_requested: bool,
    /// The client sent a certificate (TLS 1.2; `None` when the capture cannot show it).
    pub client_cert_sent: Option<bool>,
    /// Handshake records after application data (TLS 1.2 renegotiation).
    pub renegotiations: u64,
    /// Application data flowed (the server accepted the handshake).
    pub established: bool,
    /// The server's chain, leaf first: subject, issuer, key, validity.
    pub chain: Vec<String>,
    /// The passive IEC 62351-3 verdicts: (id, level, detail).
    pub verdicts: Vec<(String, String, String)>,
    /// Frame of the ServerHello.
    pub server_hello_frame: u64,
}

/// One association in the inventory.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AssociationReport {
    /// uid (`C...`).
    pub uid: String,
    /// Client address.
    pub client: String,
    /// Server address.
    pub server: String,
    /// plain, tls or unknown.
    pub transport: &'static str,
    /// First frame.
    pub first_frame: u64,
    /// Last frame.
    pub last_frame: u64,
    /// First capture time, ns.
    pub first_ts_ns: u64,
    /// Last capture time, ns.
    pub last_ts_ns: u64,
    /// Frames.
    pub frames: u64,
    /// Payload octets client to server.
    pub octets_orig: u64,
    /// Payload octets server to client.
    pub octets_resp: u64,
    /// The SYN was in the capture.
    pub syn: bool,
    /// FIN or RST seen.
    pub closed: bool,
    /// TLS details.
    pub tls: Option<TlsReport>,
}

/// The inventory row of association `j`.
pub fn report(a: &Association, j: usize) -> AssociationReport {
    let tls = a.server_hello.as_ref().map(|(sh, frame)| {
        let at_s = (a.first.1 / 1_000_000_000) as i64;
        let chain = gander_tls::survey::chain::describe_chain(&a.server_chain, at_s)
            .map(|c| {
                c.iter()
                    .map(|x| {
                        format!(
                            "{} (issuer {}; {} {} bits; {} .. {})",
                            x.subject, x.issuer, x.key_type, x.key_bits, x.not_before, x.not_after
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let group = sh.group.or(a.ske_group).map(|g| {
            gander_tls::KxGroup::from_code(g)
                .map(|k| k.name().to_string())
                .unwrap_or_else(|| format!("0x{g:04x}"))
        });
        TlsReport {
            version: version_name(sh.version),
            suite: gander_tls::suites::by_code(sh.suite)
                .map(|c| c.name.to_string())
                .unwrap_or_else(|| format!("0x{:04X}", sh.suite)),
            group,
            resumed: a.resumed(),
            cert_requested: a.cert_requested,
            client_cert_sent: a.client_cert_sent,
            renegotiations: a.later_handshakes.0,
            established: a.application_data,
            chain,
            verdicts: tls_judge::verdicts(a, at_s)
                .into_iter()
                .map(|v| (v.id.to_string(), v.level.word().to_string(), v.detail))
                .collect(),
            server_hello_frame: *frame,
        }
    });
    AssociationReport {
        uid: prefixed_uid('C', &format!("{}/{}/{j}", a.client, a.server)),
        client: a.client.to_string(),
        server: a.server.to_string(),
        transport: a.transport.word(),
        first_frame: a.first.0,
        last_frame: a.last.0,
        first_ts_ns: a.first.1,
        last_ts_ns: a.last.1,
        frames: a.frames,
        octets_orig: a.octets.0,
        octets_resp: a.octets.1,
        syn: a.syn,
        closed: a.closed,
        tls,
    }
}

/// The findings of one association (`index` keys them apart from the streams').
pub fn judge(a: &Association, r: &AssociationReport, index: usize, f: &mut Findings) {
    let at = Some((index, r.uid.as_str()));
    let ts = a.first.1;
    if a.transport == Transport::Plain {
        f.add("mms-plain", Severity::Medium, at, a.transport_frame, ts, || {
            format!("MMS association {} -> {} without TLS (IEC 62351-4 secures MMS with IEC 62351-3 TLS)", r.client, r.server)
        });
    }
    if let Some((e, frame)) = &a.tls_error {
        f.add("tls-unreadable", Severity::Low, at, *frame, ts, || {
            format!("the TLS handshake could not be read: {e}")
        });
    }
    if let Some(t) = &r.tls {
        let at_s = (a.first.1 / 1_000_000_000) as i64;
        for v in tls_judge::verdicts(a, at_s) {
            let sev = match v.level {
                Level::Fail => Severity::High,
                Level::Warn => Severity::Low,
                Level::Pass | Level::Info => continue,
            };
            f.add(
                tls_judge::code(v.id),
                sev,
                at,
                t.server_hello_frame,
                ts,
                || format!("{} ({}): {}", v.requirement, v.source, v.detail),
            );
        }
        if a.later_handshakes.0 > 0 {
            f.add("tls-renegotiation", Severity::Info, at, a.later_handshakes.1, ts, || {
                "a handshake after application data: TLS 1.2 renegotiation (IEC 62351-3 asks for one at least every 24 h)".into()
            });
        }
    }
}
