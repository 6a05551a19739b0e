//! The TLS scan in a fleet row: what `gander_tls::scan` learned of one IED (every IANA suite
//! per version, SSL 2.0 and 3.0, the named groups, the known weaknesses) kept in the row as
//! plain facts, and the gentle options a sweep scans with.
//!
//! An IED has few association slots and its TLS stack is often small, so the sweep scans the
//! way `docs/tls-survey.md` ("Scan") describes for one device and no harder: one connection at
//! a time, after the probe's own session has ended (one session per IED), a pause between two
//! connections, and a cap on their number; what the cap left untested is marked as such
//! (`capped`). Like the survey, the scan is read from its JSON by field name, so the row keeps
//! working while the scanner's internals change.
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// What the scan found at one protocol version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowScanVersion {
    /// `SSLv3`, `1.0` .. `1.3`.
    pub version: String,
    /// The server chose this version.
    pub accepted: bool,
    /// Every accepted suite (IANA names), in the order found.
    pub suites: Vec<String>,
    /// Accepted suites that are anonymous, NULL, EXPORT, RC4, DES or 3DES, each with its class:
    /// `TLS_DH_anon_WITH_AES_128_CBC_SHA (anonymous)`.
    pub weak_suites: Vec<String>,
    /// Named groups accepted (TLS 1.3 key_share groups, ECDHE curves below).
    pub groups: Vec<String>,
    /// The finite-field prime of a DHE suite: `ffdhe2048`, `own 1024-bit prime`.
    pub dh_prime: Option<String>,
    /// The connection cap stopped this version's scan: what is missing was not tested.
    pub incomplete: bool,
}

/// One known-weakness check (Heartbleed, CCS injection, compression, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowWeakness {
    /// Stable id, `heartbleed`.
    pub id: String,
    /// `vulnerable`, `not-vulnerable`, `not-tested`, `undetermined`.
    pub state: String,
    /// The server's answer.
    pub detail: String,
}

/// The scan of one IED.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowScan {
    /// SSL 2.0 accepted.
    pub sslv2: bool,
    /// SSL 3.0 to TLS 1.3, oldest first.
    pub versions: Vec<RowScanVersion>,
    /// The weakness checks.
    pub weaknesses: Vec<RowWeakness>,
    /// Connections the scan made.
    pub connections: u32,
    /// The scan stopped before it was done (the connection cap, or the server stopped
    /// answering part-way).
    pub capped: bool,
    /// Wall time of the scan, ms.
    pub duration_ms: u64,
}

impl RowScan {
    /// The scan from `gander_tls::scan::ScanReport`'s JSON (`None` when `v` is not one).
    pub fn from_json(v: &Value) -> Option<RowScan> {
        let vs = v.get("versions")?.as_array()?;
        let str_of = |x: &Value, k: &str| x.get(k).and_then(Value::as_str).map(str::to_string);
        let versions = vs
            .iter()
            .map(|x| {
                let mut out = RowScanVersion {
                    version: str_of(x, "version").unwrap_or_default(),
                    accepted: x.get("accepted").and_then(Value::as_bool) == Some(true),
                    incomplete: x.get("incomplete").and_then(Value::as_bool) == Some(true),
                    ..RowScanVersion::default()
                };
                for s in x
                    .get("suites")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(name) = str_of(s, "name") else {
                        continue;
                    };
                    let classes: Vec<&str> = [
                        ("anonymous", "anonymous"),
                        ("null", "NULL"),
                        ("export", "EXPORT"),
                        ("rc4", "RC4"),
                        ("des", "DES"),
                        ("triple_des", "3DES"),
                    ]
                    .into_iter()
                    .filter(|(k, _)| s.get(*k).and_then(Value::as_bool) == Some(true))
                    .map(|(_, w)| w)
                    .collect();
                    if !classes.is_empty() {
                        out.weak_suites
                            .push(format!("{name} ({})", classes.join(", ")));
                    }
                    out.suites.push(name);
                }
                out.groups = x
                    .get("groups")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|g| str_of(g, "name"))
                    .collect();
                out.dh_prime = x.get("dh_prime").filter(|p| !p.is_null()).map(|p| {
                    str_of(p, "family").unwrap_or_else(|| {
                        format!(
                            "own {}-bit prime",
                            p.get("bits").and_then(Value::as_u64).unwrap_or(0)
                        )
                    })
                });
                out
            })
            .collect();
        let weaknesses = v
            .get("weaknesses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|w| RowWeakness {
                id: str_of(w, "id").unwrap_or_default(),
                state: str_of(w, "state").unwrap_or_default(),
                detail: str_of(w, "detail").unwrap_or_default(),
            })
            .collect();
        Some(RowScan {
            sslv2: v
                .get("sslv2")
                .and_then(|s| s.get("accepted"))
                .and_then(Value::as_bool)
                == Some(true),
            versions,
            weaknesses,
            connections: v
                .get("connections")
                .and_then(Value::as_u64)
                .map_or(0, |c| c.min(u64::from(u32::MAX)) as u32),
            capped: v.get("capped").and_then(Value::as_bool) == Some(true),
            duration_ms: v
                .get("duration_s")
                .and_then(Value::as_f64)
                .map_or(0, |s| (s * 1e3).max(0.0) as u64),
        })
    }

    /// Accepted versions, `SSLv2` included: `TLS 1.2`, `SSLv3`.
    pub fn accepted_versions(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        if self.sslv2 {
            out.push("SSLv2".into());
        }
        for v in self.versions.iter().filter(|v| v.accepted) {
            out.push(version_word(&v.version));
        }
        out
    }

    /// Every accepted suite with its version, `TLS_AES_128_GCM_SHA256 (TLS 1.3)`: what the diff
    /// compares, so a suite that appears at one more version is a change.
    pub fn suites_by_version(&self) -> Vec<String> {
        self.versions
            .iter()
            .flat_map(|v| {
                let w = version_word(&v.version);
                v.suites.iter().map(move |s| format!("{s} ({w})"))
            })
            .collect()
    }

    /// Every accepted group with its version.
    pub fn groups_by_version(&self) -> Vec<String> {
        self.versions
            .iter()
            .flat_map(|v| {
                let w = version_word(&v.version);
                v.groups
                    .iter()
                    .cloned()
                    .chain(v.dh_prime.iter().map(|p| format!("DH {p}")))
                    .map(move |g| format!("{g} ({w})"))
            })
            .collect()
    }

    /// The weaknesses found (`vulnerable`).
    pub fn vulnerable(&self) -> Vec<&RowWeakness> {
        self.weaknesses
            .iter()
            .filter(|w| w.state == "vulnerable")
            .collect()
    }
}

/// `1.2` -> `TLS 1.2`; `SSLv3` stays.
fn version_word(v: &str) -> String {
    if v.starts_with("SSL") {
        v.to_string()
    } else {
        format!("TLS {v}")
    }
}

/// The scan options of a sweep: the scanner's sequential driver with `timeout` for each answer
/// (the probe's step timeout), 50 ms between two connections and at most 300 connections per
/// IED. 300 covers every version of a server that accepts a few dozen suites; a server that
/// accepts hundreds is reported `capped` with what was found.
pub fn gentle(timeout: Duration) -> gander_tls::scan::ScanOptions {
    gander_tls::scan::ScanOptions {
        timeout,
        pause: Duration::from_millis(50),
        max_connections: 300,
        ..gander_tls::scan::ScanOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Value {
        serde_json::json!({
            "sslv2": {"accepted": false, "ciphers": [], "refusal": "closed"},
            "versions": [
                {"version": "SSLv3", "accepted": false, "suites": [], "groups": [],
                 "dh_prime": null, "incomplete": false},
                {"version": "1.2", "accepted": true, "incomplete": false,
                 "suites": [
                    {"code": 49199, "name": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                     "anonymous": false, "null": false, "export": false, "rc4": false,
                     "des": false, "triple_des": false},
                    {"code": 52, "name": "TLS_DH_anon_WITH_AES_128_CBC_SHA",
                     "anonymous": true, "null": false, "export": false, "rc4": false,
                     "des": false, "triple_des": false}],
                 "groups": [{"code": 23, "name": "secp256r1"}],
                 "dh_prime": {"bits": 1024, "family": null}},
                {"version": "1.3", "accepted": true, "incomplete": true,
                 "suites": [{"code": 4865, "name": "TLS_AES_128_GCM_SHA256"}],
                 "groups": [{"code": 29, "name": "x25519"}], "dh_prime": null}
            ],
            "weaknesses": [{"id": "heartbleed", "state": "not-vulnerable", "detail": "no echo"},
                           {"id": "compression", "state": "vulnerable", "detail": "DEFLATE"}],
            "verdicts": [], "connections": 17, "capped": true, "duration_s": 1.25
        })
    }

    #[test]
    fn the_scan_is_read_by_field_name() {
        let s = RowScan::from_json(&report()).unwrap();
        assert!(!s.sslv2 && s.capped);
        assert_eq!((s.connections, s.duration_ms), (17, 1250));
        assert_eq!(s.accepted_versions(), ["TLS 1.2", "TLS 1.3"]);
        assert_eq!(
            s.versions[1].weak_suites,
            ["TLS_DH_anon_WITH_AES_128_CBC_SHA (anonymous)"]
        );
        assert_eq!(
            s.versions[1].dh_prime.as_deref(),
            Some("own 1024-bit prime")
        );
        assert!(s.versions[2].incomplete);
        assert!(s
            .suites_by_version()
            .contains(&"TLS_AES_128_GCM_SHA256 (TLS 1.3)".to_string()));
        assert_eq!(
            s.groups_by_version(),
            [
                "secp256r1 (TLS 1.2)",
                "DH own 1024-bit prime (TLS 1.2)",
                "x25519 (TLS 1.3)"
            ]
        );
        assert_eq!(s.vulnerable().len(), 1);
        // Not a scan: nothing claimed.
        assert_eq!(RowScan::from_json(&Value::Null), None);
        assert_eq!(
            RowScan::from_json(&serde_json::json!({"versions": 3})),
            None
        );
    }

    #[test]
    fn a_real_scan_report_reads_back() {
        // The scanner's own types serialised: the field names this module reads are theirs.
        let r = gander_tls::scan::ScanReport {
            sslv2: gander_tls::scan::enumerate::Sslv2Scan {
                accepted: true,
                ciphers: vec!["SSL_CK_RC4_128_WITH_MD5".into()],
                refusal: None,
            },
            versions: vec![],
            weaknesses: vec![],
            robot: None,
            early_data: None,
            verdicts: vec![],
            connections: 3,
            capped: false,
            duration_s: 0.5,
        };
        let s = RowScan::from_json(&serde_json::to_value(&r).unwrap()).unwrap();
        assert!(s.sslv2);
        assert_eq!(s.accepted_versions(), ["SSLv2"]);
        assert_eq!((s.connections, s.duration_ms), (3, 500));
    }
}
