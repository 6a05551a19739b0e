//! One row of the fleet report: what a utility engineer compares across a substation for one
//! IED. It is built from the probe's own report ([`crate::ProbeReport`]); the TLS part is read
//! from the survey's JSON by field name (`docs/tls-survey.md`), so the row keeps working while
//! the survey's internals change.
use super::declared::{compare, Declared, ModelCheck};
use super::scan::RowScan;
use super::targets::Target;
use crate::ProbeReport;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the probe of one device ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowOutcome {
    /// Every probe step ran.
    Complete,
    /// An association came up, a later step failed (the row says which).
    Partial,
    /// No association: nothing answered, or refused.
    Unreachable,
    /// The device's time cap ran out before the probe ended.
    TimedOut,
    /// The options or TLS settings made a probe impossible (nothing was sent).
    NotProbed,
}

impl RowOutcome {
    /// The word of the text and HTML reports.
    pub fn word(self) -> &'static str {
        match self {
            RowOutcome::Complete => "complete",
            RowOutcome::Partial => "partial",
            RowOutcome::Unreachable => "unreachable",
            RowOutcome::TimedOut => "timed out",
            RowOutcome::NotProbed => "not probed",
        }
    }
}

/// Identify's answer (ISO 9506-2 10.2): the firmware identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowIdentity {
    /// vendorName.
    pub vendor: String,
    /// modelName.
    pub model: String,
    /// revision.
    pub revision: String,
}

/// The server certificate (the leaf), as the survey decoded it.
///
/// Its identity is the SHA-256 of its DER (RFC 5280 §4.1: the certificate is the DER encoding
/// of its fields and signature), so any change of the certificate is a change, a new key under
/// the same subject, issuer and validity included; the decoded facts are for the human message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowCert {
    /// Subject DN.
    pub subject: String,
    /// Issuer DN.
    pub issuer: String,
    /// End of validity.
    pub not_after: String,
    /// `RSA 2048`, `EC 256 P-256`.
    pub key: String,
    /// SHA-256 of the leaf's DER, hex (empty in a report of a survey that gave none).
    #[serde(default)]
    pub sha256: String,
    /// SHA-256 of each certificate's DER in the chain the server sent, leaf first: an
    /// intermediate re-issued under an unchanged leaf is a change too.
    #[serde(default)]
    pub chain_sha256: Vec<String>,
}

/// One survey verdict, short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowVerdict {
    /// Stable id, `tls12-accepted`.
    pub id: String,
    /// `pass`, `info`, `warn`, `fail`.
    pub level: String,
    /// What the survey found.
    pub detail: String,
}

/// The TLS posture: the probe's connection and the survey (quick mode).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowTls {
    /// Negotiated version of the probe's connection.
    pub version: Option<String>,
    /// Negotiated suite.
    pub suite: Option<String>,
    /// Negotiated group.
    pub group: Option<String>,
    /// Versions the server accepted, `TLSv1.2`...
    pub versions: Vec<String>,
    /// Suites the server accepted (IANA names; with their version when the survey gives one).
    pub suites: Vec<String>,
    /// The leaf certificate.
    pub certificate: Option<RowCert>,
    /// Whether the chain verified against the given CA.
    pub chain_trusted: Option<bool>,
    /// Whether a client without a certificate was refused.
    pub client_cert_required: Option<bool>,
    /// The survey's verdicts.
    pub verdicts: Vec<RowVerdict>,
    /// Why there is no survey.
    pub survey_error: Option<String>,
    /// The scan of every IANA suite per version, the groups and the known weaknesses
    /// ([`super::scan`]); its verdicts are among [`RowTls::verdicts`] (ids `scan-...`).
    #[serde(default)]
    pub scan: Option<RowScan>,
    /// Why there is no scan (or why it is short): it failed, or the device's time cap ended it.
    #[serde(default)]
    pub scan_error: Option<String>,
}

impl RowTls {
    /// Verdicts at `level`.
    pub fn count(&self, level: &str) -> usize {
        self.verdicts.iter().filter(|v| v.level == level).count()
    }
}

/// One device's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The target's name.
    pub name: String,
    /// SCD only.
    pub ied: Option<String>,
    /// SCD only.
    pub access_point: Option<String>,
    /// `address:port` probed (or the ports tried).
    pub endpoint: String,
    /// Whether an MMS association came up.
    pub reachable: bool,
    /// How it ended.
    pub outcome: RowOutcome,
    /// The failed step or the reason, when not complete.
    pub error: Option<String>,
    /// With TLS.
    pub tls: Option<RowTls>,
    /// Identify's answer.
    pub identity: Option<RowIdentity>,
    /// The names the server listed.
    pub found: Option<Declared>,
    /// Declared against found (SCD only).
    pub model_check: Option<ModelCheck>,
    /// HT median, ms.
    pub ht_ms: Option<f64>,
    /// Read RTT median, ms.
    pub read_rtt_ms: Option<f64>,
    /// Wall time of this device's probe, ms.
    pub duration_ms: u64,
}

impl Row {
    /// A row with nothing gathered.
    pub fn empty(t: &Target, endpoint: String, outcome: RowOutcome, error: String) -> Row {
        Row {
            name: t.name.clone(),
            ied: t.ied.clone(),
            access_point: t.access_point.clone(),
            endpoint,
            reachable: false,
            outcome,
            error: Some(error),
            tls: None,
            identity: None,
            found: None,
            model_check: None,
            ht_ms: None,
            read_rtt_ms: None,
            duration_ms: 0,
        }
    }

    /// The row of a probe report.
    pub fn from_probe(t: &Target, r: &ProbeReport, declared: Option<&Declared>) -> Row {
        let found = Declared::from_found(&r.model);
        Row {
            name: t.name.clone(),
            ied: t.ied.clone(),
            access_point: t.access_point.clone(),
            endpoint: r.address.clone(),
            reachable: true,
            outcome: if r.failed.is_some() {
                RowOutcome::Partial
            } else {
                RowOutcome::Complete
            },
            error: r
                .failed
                .as_ref()
                .map(|f| format!("{} step: {}", f.step.word(), f.message)),
            tls: r.tls.as_ref().map(|t| {
                let v = serde_json::to_value(t).unwrap_or(Value::Null);
                tls_of(&v)
            }),
            identity: r.identity.as_ref().map(|i| RowIdentity {
                vendor: i.vendor.clone(),
                model: i.model.clone(),
                revision: i.revision.clone(),
            }),
            model_check: declared.map(|d| compare(d, &found)),
            found: Some(found),
            ht_ms: r.measurements.ht_ms.map(|s| s.median),
            read_rtt_ms: r.measurements.read_rtt_ms.map(|s| s.median),
            duration_ms: r.duration_ms,
        }
    }
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

/// The posture from the probe's TLS section (connection fields and the flattened survey).
pub fn tls_of(v: &Value) -> RowTls {
    let mut t = RowTls {
        version: s(v, "version"),
        suite: s(v, "suite"),
        group: s(v, "group"),
        survey_error: s(v, "survey_error"),
        chain_trusted: v.get("chain_trusted").and_then(Value::as_bool),
        client_cert_required: v.get("client_cert_required").and_then(Value::as_bool),
        ..RowTls::default()
    };
    if let Some(m) = v.get("versions").and_then(Value::as_object) {
        t.versions = m
            .iter()
            .filter(|(_, a)| a.as_bool() == Some(true))
            .map(|(k, _)| k.clone())
            .collect();
    }
    if let Some(a) = v.get("suites").and_then(Value::as_array) {
        for x in a {
            if x.get("accepted").and_then(Value::as_bool) != Some(true) {
                continue;
            }
            let Some(n) = s(x, "name") else { continue };
            let name = match x.get("version").and_then(Value::as_str) {
                Some(ver) => format!("{n} ({ver})"),
                None => n,
            };
            if !t.suites.contains(&name) {
                t.suites.push(name);
            }
        }
    }
    if let Some(leaf) = v
        .get("chain")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    {
        let key = [
            s(leaf, "key_type"),
            leaf.get("key_bits").map(|b| b.to_string()),
            s(leaf, "curve"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
        let chain_sha256 = v
            .get("chain")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| s(c, "sha256").unwrap_or_default())
            .collect();
        t.certificate = Some(RowCert {
            subject: s(leaf, "subject").unwrap_or_default(),
            issuer: s(leaf, "issuer").unwrap_or_default(),
            not_after: s(leaf, "not_after").unwrap_or_default(),
            key,
            sha256: s(leaf, "sha256").unwrap_or_default(),
            chain_sha256,
        });
    }
    t.scan = v.get("scan").and_then(RowScan::from_json);
    if let Some(a) = v.get("verdicts").and_then(Value::as_array) {
        t.verdicts = a
            .iter()
            .map(|x| RowVerdict {
                id: s(x, "id").unwrap_or_default(),
                level: s(x, "level").unwrap_or_default().to_ascii_lowercase(),
                detail: s(x, "detail").unwrap_or_default(),
            })
            .collect();
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_posture_is_read_by_field_name() {
        let v = serde_json::json!({
            "backend": "openssl", "version": "TLSv1.3", "suite": "TLS_AES_128_GCM_SHA256",
            "group": "x25519",
            "versions": {"TLSv1.2": true, "TLSv1.3": true, "TLSv1.1": false},
            "suites": [
                {"name": "TLS_AES_128_GCM_SHA256", "version": "TLSv1.3", "accepted": true},
                {"name": "TLS_RSA_WITH_NULL_SHA256", "version": null, "accepted": false}
            ],
            "chain": [{"subject": "CN=ied", "issuer": "CN=ca", "not_after": "2030-01-01",
                       "key_type": "EC", "key_bits": 256, "curve": "P-256", "sha256": "aa"},
                      {"subject": "CN=ca", "issuer": "CN=ca", "sha256": "cc"}],
            "chain_trusted": true, "client_cert_required": true,
            "verdicts": [{"id": "tls12-accepted", "level": "pass", "detail": "yes"},
                         {"id": "x", "level": "fail", "detail": "no"}]
        });
        let t = tls_of(&v);
        assert_eq!(t.versions, ["TLSv1.2", "TLSv1.3"]);
        assert_eq!(t.suites, ["TLS_AES_128_GCM_SHA256 (TLSv1.3)"]);
        let c = t.certificate.as_ref().unwrap();
        assert_eq!((c.key.as_str(), c.sha256.as_str()), ("EC 256 P-256", "aa"));
        assert_eq!(c.chain_sha256, ["aa", "cc"]);
        assert_eq!((t.count("pass"), t.count("fail")), (1, 1));
        assert_eq!(t.scan, None);
        // Nothing there: nothing claimed.
        assert_eq!(tls_of(&Value::Null), RowTls::default());
    }
}
