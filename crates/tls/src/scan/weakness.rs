//! Known weaknesses IEDs have shipped with, each checked by what the server answers, never by
//! its banner:
//!
//! | id | how | source |
//! |---|---|---|
//! | `heartbleed` | heartbeat extension echoed? then, after ServerHelloDone, a heartbeat request claiming 16384 octets of payload and carrying none: a vulnerable server answers with a heartbeat response (its memory); a patched one drops it (RFC 6520 §4) | CVE-2014-0160 |
//! | `ccs-injection` | after ServerHelloDone, a ChangeCipherSpec before any key exchange: a patched server sends unexpected_message; a vulnerable one takes it, and a second one then fails on the (null-keyed) record protection with bad_record_mac / decryption_failed | CVE-2014-0224 |
//! | `compression` | a ClientHello offering DEFLATE (RFC 3749): the ServerHello's compression_method | CRIME, CVE-2012-4929; RFC 9325 §3.3 |
//! | `fallback-scsv` | a ClientHello below the newest accepted version with TLS_FALLBACK_SCSV: the server must answer inappropriate_fallback | RFC 7507 §3 |
//! | `extended-master-secret`, `secure-renegotiation`, `ocsp-stapling`, `session-ticket` | echoed in the first accepted ServerHello (no extra connection) | RFC 7627, RFC 5746, RFC 6066 §8, RFC 5077 |
//! | `client-certificate-request` | CertificateRequest in the TLS 1.2 first flight, or in TLS 1.3's handshake as [`super::tls13_flight`] decrypts it | RFC 5246 §7.4.4, RFC 8446 §4.3.2 |
//!
//! ROBOT has its own module ([`super::robot`]), which fills the `robot` row; 0-RTT needs a
//! completed TLS 1.3 session and its ticket ([`super::early_data`]), which fills `early-data`.
//!
//! Heartbleed and CCS injection are checked the way testssl.sh does: on the server's first
//! flight, before any key is agreed, so a vulnerable server's answer leaks nothing of a session.
use super::conn::{follow_up, Conn, End};
use super::enumerate::{alert_name, exchange, VersionScan};
use super::hello::{self, ext};
use super::{ProtocolVersion, ScanError, ScanOptions};
use serde::Serialize;
use std::time::Duration;

/// The state a check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeaknessState {
    /// The weakness is there (or the good property is absent).
    Vulnerable,
    /// The server is not affected (or has the property).
    NotVulnerable,
    /// Not tested (no suitable version, or the check is not implemented).
    NotTested,
    /// Tested; the answer did not tell.
    Undetermined,
}

/// One weakness check.
#[derive(Clone, Debug, Serialize)]
pub struct Weakness {
    /// Stable identifier, e.g. `heartbleed`.
    pub id: &'static str,
    /// What was found.
    pub state: WeaknessState,
    /// Details: the answer.
    pub detail: String,
}

fn w(id: &'static str, state: WeaknessState, detail: impl Into<String>) -> Weakness {
    Weakness {
        id,
        state,
        detail: detail.into(),
    }
}

/// Runs the checks on the newest accepted version up to TLS 1.2 (TLS 1.3 encrypts all after its
/// ServerHello and has neither heartbeat, compression nor a ChangeCipherSpec state).
pub fn check(
    c: &mut Conn,
    versions: &[VersionScan],
    opts: &ScanOptions,
) -> Result<Vec<Weakness>, ScanError> {
    use WeaknessState::*;
    let legacy = versions
        .iter()
        .rev()
        .find(|v| v.accepted && v.version <= ProtocolVersion::Tls12 && !v.suites.is_empty());
    let mut out = Vec::new();
    // What TLS 1.3's encrypted flight showed (`super::tls13_flight`), if it was read.
    let v13 = versions
        .iter()
        .find(|v| v.version == ProtocolVersion::Tls13 && v.accepted);
    let Some(vs) = legacy else {
        for id in [
            "heartbleed",
            "ccs-injection",
            "compression",
            "extended-master-secret",
            "secure-renegotiation",
            "session-ticket",
        ] {
            out.push(w(id, NotTested, "no version up to TLS 1.2 accepted"));
        }
        out.push(ocsp_tls13(v13).unwrap_or_else(|| {
            w(
                "ocsp-stapling",
                NotTested,
                "no version up to TLS 1.2 accepted",
            )
        }));
        out.push(certificate_request(None, v13));
        out.push(fallback(c, versions, opts)?);
        out.extend(not_implemented());
        return Ok(out);
    };
    let v = vs.version;
    let suites: Vec<u16> = vs.suites.iter().map(|s| s.code).collect();
    let groups = super::groups::offered(false);
    let wait = opts.timeout.min(Duration::from_secs(2));

    // Heartbleed.
    out.push(match vs.echoed(ext::HEARTBEAT) {
        Some(true) => {
            let mut a = exchange(c, v, &suites, &groups, opts)?;
            match (&mut a.stream, a.flight.hello_done) {
                (Some(tcp), true) => {
                    // type heartbeat_request (1), payload_length 0x4000, no payload.
                    let rec = [24, 3, (v.code() & 0xFF) as u8, 0, 3, 1, 0x40, 0x00];
                    let (f, end) = follow_up(tcp, &rec, wait);
                    if f.heartbeat {
                        w("heartbleed", Vulnerable, "heartbeat response to a request with a payload length beyond its record (memory disclosed)")
                    } else {
                        w(
                            "heartbleed",
                            NotVulnerable,
                            format!("heartbeat extension on; the over-long request got {}", answer(&f, &end)),
                        )
                    }
                }
                _ => w("heartbleed", Undetermined, "no ServerHelloDone to send the request after"),
            }
        }
        Some(false) => w("heartbleed", NotVulnerable, "no heartbeat extension in the ServerHello"),
        None => w("heartbleed", NotTested, "SSL 3.0 only: no extensions"),
    });

    // CCS injection.
    out.push({
        let mut a = exchange(c, v, &suites, &groups, opts)?;
        match (&mut a.stream, a.flight.hello_done) {
            (Some(tcp), true) => {
                let ccs = [20, 3, (v.code() & 0xFF) as u8, 0, 1, 1];
                let (f, end) = follow_up(tcp, &ccs, wait);
                match f.alert {
                    Some((_, 10)) => w("ccs-injection", NotVulnerable, "early ChangeCipherSpec refused with unexpected_message"),
                    Some((_, d)) => w("ccs-injection", NotVulnerable, format!("early ChangeCipherSpec refused with {}", alert_name(d))),
                    None if end == End::Closed => w("ccs-injection", NotVulnerable, "early ChangeCipherSpec: connection closed"),
                    None => {
                        let (f2, end2) = follow_up(tcp, &ccs, wait);
                        match f2.alert {
                            Some((_, d @ (20 | 21))) => w(
                                "ccs-injection",
                                Vulnerable,
                                format!("early ChangeCipherSpec taken; the next record failed with {} (keys in use)", alert_name(d)),
                            ),
                            Some((_, 10)) => w("ccs-injection", NotVulnerable, "second early ChangeCipherSpec refused with unexpected_message"),
                            _ => w("ccs-injection", Undetermined, format!("no refusal of an early ChangeCipherSpec ({})", answer(&f2, &end2))),
                        }
                    }
                }
            }
            _ => w("ccs-injection", Undetermined, "no ServerHelloDone to send the ChangeCipherSpec after"),
        }
    });

    // Compression (CRIME).
    out.push({
        let mut h = super::enumerate::hello_for(v, &suites, &groups, opts);
        h.compression = vec![1, 0];
        let a = c.exchange(&h.to_record())?;
        match a.flight.server_hello {
            Some(sh) if sh.compression == 0 => w(
                "compression",
                NotVulnerable,
                "null compression chosen although DEFLATE was offered",
            ),
            Some(sh) => w(
                "compression",
                Vulnerable,
                format!("compression method {} chosen (1 = DEFLATE)", sh.compression),
            ),
            None => w(
                "compression",
                Undetermined,
                "no ServerHello to a ClientHello offering DEFLATE",
            ),
        }
    });

    out.push(fallback(c, versions, opts)?);

    let echoed = |t: u16, id: &'static str, yes: &str, no: &str| match vs.echoed(t) {
        Some(true) => w(id, NotVulnerable, format!("{yes} (TLS {})", v.name())),
        Some(false) => w(id, Vulnerable, format!("{no} (TLS {})", v.name())),
        None => w(id, NotTested, "SSL 3.0 only: no extensions"),
    };
    out.push(echoed(
        ext::EXTENDED_MASTER_SECRET,
        "extended-master-secret",
        "extended_master_secret echoed",
        "no extended_master_secret in the ServerHello",
    ));
    out.push(echoed(
        ext::RENEGOTIATION_INFO,
        "secure-renegotiation",
        "renegotiation_info in the ServerHello",
        "no renegotiation_info in the ServerHello to a ClientHello with TLS_EMPTY_RENEGOTIATION_INFO_SCSV",
    ));
    out.push(
        match (vs.echoed(ext::STATUS_REQUEST), vs.certificate_status) {
            (Some(true), _) | (_, Some(true)) => w(
                "ocsp-stapling",
                NotVulnerable,
                "status_request echoed: the server staples OCSP responses",
            ),
            (Some(false), _) => ocsp_tls13(v13)
                .filter(|x| x.state == NotVulnerable)
                .unwrap_or_else(|| {
                    w(
                        "ocsp-stapling",
                        Vulnerable,
                        "no status_request in the ServerHello: no stapled OCSP response",
                    )
                }),
            _ => w("ocsp-stapling", NotTested, "SSL 3.0 only: no extensions"),
        },
    );
    out.push(echoed(
        ext::SESSION_TICKET,
        "session-ticket",
        "session_ticket echoed: RFC 5077 tickets issued",
        "no session_ticket in the ServerHello",
    ));
    out.push(certificate_request(Some(vs), v13));
    out.extend(not_implemented());
    Ok(out)
}

/// The `client-certificate-request` row: a CertificateRequest in the TLS 1.2-or-older first
/// flight (in the clear) or in TLS 1.3's encrypted flight (read by `super::tls13_flight`);
/// either one asking is enough, and the row names where it was seen.
fn certificate_request(legacy: Option<&VersionScan>, v13: Option<&VersionScan>) -> Weakness {
    use WeaknessState::*;
    let id = "client-certificate-request";
    let seen: Vec<(&VersionScan, bool)> = [legacy, v13]
        .into_iter()
        .flatten()
        .filter_map(|v| v.certificate_request.map(|r| (v, r)))
        .collect();
    if let Some((v, _)) = seen.iter().find(|(_, r)| *r) {
        return w(
            id,
            NotVulnerable,
            format!(
                "CertificateRequest in the TLS {} {}",
                v.version.name(),
                flight(v)
            ),
        );
    }
    if seen.is_empty() {
        return w(id, NotTested, "not seen");
    }
    let names: Vec<String> = seen
        .iter()
        .map(|(v, _)| format!("TLS {} {}", v.version.name(), flight(v)))
        .collect();
    w(
        id,
        Vulnerable,
        format!(
            "no CertificateRequest in the {}: no client certificate asked for",
            names.join(" or the ")
        ),
    )
}

/// Where a version's CertificateRequest would be: the clear first flight up to TLS 1.2, the
/// encrypted handshake of TLS 1.3.
fn flight(v: &VersionScan) -> &'static str {
    if v.version == ProtocolVersion::Tls13 {
        "handshake (decrypted)"
    } else {
        "first flight"
    }
}

/// The `ocsp-stapling` row from TLS 1.3's Certificate entry (RFC 8446 §4.4.2.1), when the
/// encrypted flight was read.
fn ocsp_tls13(v13: Option<&VersionScan>) -> Option<Weakness> {
    use WeaknessState::*;
    Some(match v13?.certificate_status? {
        true => w(
            "ocsp-stapling",
            NotVulnerable,
            "an OCSP response stapled to the TLS 1.3 Certificate (status_request)",
        ),
        false => w(
            "ocsp-stapling",
            Vulnerable,
            "no OCSP response stapled to the TLS 1.3 Certificate although status_request was offered",
        ),
    })
}

/// TLS_FALLBACK_SCSV: a ClientHello at the second-newest accepted version (below TLS 1.3) with
/// the SCSV must be refused with inappropriate_fallback (RFC 7507 §3).
fn fallback(
    c: &mut Conn,
    versions: &[VersionScan],
    opts: &ScanOptions,
) -> Result<Weakness, ScanError> {
    use WeaknessState::*;
    let accepted: Vec<&VersionScan> = versions
        .iter()
        .filter(|v| v.accepted && !v.suites.is_empty())
        .collect();
    let lower = accepted
        .iter()
        .rev()
        .skip(1)
        .find(|v| v.version <= ProtocolVersion::Tls12 && v.version >= ProtocolVersion::Tls10);
    let Some(lower) = lower else {
        return Ok(w(
            "fallback-scsv",
            NotTested,
            "fewer than two versions accepted: no fallback to protect against",
        ));
    };
    let mut suites: Vec<u16> = lower.suites.iter().map(|s| s.code).collect();
    suites.push(hello::SCSV_FALLBACK);
    let a = exchange(
        c,
        lower.version,
        &suites,
        &super::groups::offered(false),
        opts,
    )?;
    Ok(match (a.flight.alert, &a.flight.server_hello) {
        (Some((_, 86)), _) => w(
            "fallback-scsv",
            NotVulnerable,
            format!(
                "TLS {} with TLS_FALLBACK_SCSV refused with inappropriate_fallback",
                lower.version.name()
            ),
        ),
        (_, Some(_)) => w(
            "fallback-scsv",
            Vulnerable,
            format!(
                "TLS {} with TLS_FALLBACK_SCSV accepted although a newer version is",
                lower.version.name()
            ),
        ),
        (Some((_, d)), None) => w(
            "fallback-scsv",
            Undetermined,
            format!(
                "refused with {} instead of inappropriate_fallback",
                alert_name(d)
            ),
        ),
        (None, None) => w(
            "fallback-scsv",
            Undetermined,
            "no answer to a ClientHello with TLS_FALLBACK_SCSV",
        ),
    })
}

fn not_implemented() -> Vec<Weakness> {
    vec![
        w(
            "robot",
            WeaknessState::NotTested,
            "not reached (connection cap, or the server stopped taking connections)",
        ),
        w(
            "early-data",
            WeaknessState::NotTested,
            "not reached (connection cap, or the server stopped taking connections)",
        ),
    ]
}

fn answer(f: &super::parse::ServerFlight, end: &End) -> String {
    match (f.alert, end) {
        (Some((_, d)), _) => format!("alert {}", alert_name(d)),
        (None, End::Closed) => "a close".into(),
        (None, End::TimedOut) => "no answer".into(),
        (None, End::Malformed(e)) => format!("a malformed answer ({e})"),
        (None, End::Complete) => "records without an alert".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vs(v: ProtocolVersion, request: Option<bool>, status: Option<bool>) -> VersionScan {
        let mut s = VersionScan::new(v);
        s.accepted = true;
        s.certificate_request = request;
        s.certificate_status = status;
        s
    }

    #[test]
    fn a_request_in_either_flight_is_named_where_it_was_seen() {
        use ProtocolVersion::*;
        use WeaknessState::*;
        let r = certificate_request(
            Some(&vs(Tls12, Some(false), None)),
            Some(&vs(Tls13, Some(true), None)),
        );
        assert_eq!(r.state, NotVulnerable);
        assert!(r.detail.contains("TLS 1.3 handshake (decrypted)"), "{r:?}");
        let r = certificate_request(
            Some(&vs(Tls12, Some(false), None)),
            Some(&vs(Tls13, Some(false), None)),
        );
        assert_eq!(r.state, Vulnerable);
        assert!(
            r.detail.contains("TLS 1.2 first flight or the TLS 1.3"),
            "{r:?}"
        );
        let r = certificate_request(None, Some(&vs(Tls13, None, None)));
        assert_eq!(r.state, NotTested);
        let r = certificate_request(Some(&vs(Tls12, Some(true), None)), None);
        assert_eq!(r.state, NotVulnerable);
        assert!(r.detail.contains("TLS 1.2 first flight"), "{r:?}");
    }

    #[test]
    fn tls13_stapling_is_read_only_when_a_handshake_completed() {
        use ProtocolVersion::*;
        assert!(ocsp_tls13(None).is_none());
        assert!(ocsp_tls13(Some(&vs(Tls13, None, None))).is_none());
        assert_eq!(
            ocsp_tls13(Some(&vs(Tls13, None, Some(true)))).map(|w| w.state),
            Some(WeaknessState::NotVulnerable)
        );
        assert_eq!(
            ocsp_tls13(Some(&vs(Tls13, None, Some(false)))).map(|w| w.state),
            Some(WeaknessState::Vulnerable)
        );
    }
}
