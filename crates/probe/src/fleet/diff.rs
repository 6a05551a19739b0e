//! What changed between two sweeps of the same substation (`gander probe diff OLD NEW`, or
//! `--diff OLD` on a sweep): per device, reachability, the server certificate (the SHA-256 of
//! its DER, and of the chain's), the TLS versions, suites and groups accepted (per version,
//! from the scan when both sweeps scanned the device), the verdicts whose level changed, the
//! model (LDs, LNs, data sets, RCBs added or removed) and the firmware identity (Identify's
//! vendor, model, revision); devices that appeared or went.
//! Devices are matched by name. A device not reached in one of the sweeps has nothing to
//! compare beyond reachability: "unknown" is not "changed"; likewise a fact one sweep did not
//! learn (no scan, a report written before certificates had fingerprints).
use super::declared::Declared;
use super::error::FleetError;
use super::report::FleetReport;
use super::row::{Row, RowCert, RowTls};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What kind of fact changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// Reachable in one sweep, not in the other.
    Reachable,
    /// The certificate: the leaf's DER or the chain's.
    Certificate,
    /// TLS versions accepted.
    Versions,
    /// Cipher suites accepted (per version when scanned).
    Suites,
    /// Named groups accepted (scan only).
    Groups,
    /// A verdict's level (pass, info, warn, fail), or a verdict that came or went.
    Verdict,
    /// Names in the model.
    Model,
    /// vendor / model / revision.
    Identity,
}

/// One change of one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The kind.
    pub kind: ChangeKind,
    /// Before and after in words (for sets: what was removed and what was added).
    pub detail: String,
}

/// The changes of one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceDiff {
    /// Its name.
    pub name: String,
    /// What changed.
    pub changes: Vec<Change>,
}

/// The difference of two sweeps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetDiff {
    /// Devices only in the new sweep.
    pub added: Vec<String>,
    /// Devices only in the old sweep.
    pub removed: Vec<String>,
    /// Devices with a change, in the new sweep's order.
    pub changed: Vec<DeviceDiff>,
}

impl FleetDiff {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// One line per change.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for a in &self.added {
            s.push_str(&format!("{a}: new device\n"));
        }
        for r in &self.removed {
            s.push_str(&format!("{r}: no longer in the sweep\n"));
        }
        for d in &self.changed {
            for c in &d.changes {
                let k = serde_json::to_value(c.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default();
                s.push_str(&format!("{}: {k} changed: {}\n", d.name, c.detail));
            }
        }
        if s.is_empty() {
            s.push_str("no change\n");
        }
        s
    }
}

fn sets(what: &str, old: &BTreeSet<String>, new: &BTreeSet<String>, out: &mut Vec<String>) {
    let gone: Vec<&str> = old.difference(new).map(String::as_str).collect();
    let came: Vec<&str> = new.difference(old).map(String::as_str).collect();
    if !gone.is_empty() {
        out.push(format!("{what} removed: {}", gone.join(", ")));
    }
    if !came.is_empty() {
        out.push(format!("{what} added: {}", came.join(", ")));
    }
}

fn model(a: &Declared, b: &Declared) -> Vec<String> {
    let mut v = Vec::new();
    sets("LD", &a.lds, &b.lds, &mut v);
    sets("LN", &a.lns, &b.lns, &mut v);
    sets("data set", &a.data_sets, &b.data_sets, &mut v);
    sets("RCB", &a.rcbs, &b.rcbs, &mut v);
    v
}

/// A certificate in words: the decoded facts and the start of its fingerprint.
fn cert_words(c: &RowCert) -> String {
    format!(
        "{} (until {}, {}, sha256 {})",
        c.subject,
        c.not_after,
        c.key,
        c.sha256.get(..16).unwrap_or(&c.sha256)
    )
}

/// Set changes of `what`, compared only when both sides learned it (non-empty).
fn set_change(a: &[String], b: &[String]) -> Option<String> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let set = |v: &[String]| v.iter().cloned().collect::<BTreeSet<_>>();
    let mut v = Vec::new();
    sets("", &set(a), &set(b), &mut v);
    (!v.is_empty()).then(|| v.join("; ").trim().to_string())
}

/// The level rank, worst highest, for a verdict id met more than once (one per version).
fn rank(level: &str) -> u8 {
    match level {
        "fail" => 3,
        "warn" => 2,
        "info" => 1,
        _ => 0,
    }
}

/// Each verdict id with its worst level.
fn verdict_levels(t: &RowTls) -> BTreeMap<&str, &str> {
    let mut m: BTreeMap<&str, &str> = BTreeMap::new();
    for v in &t.verdicts {
        let e = m.entry(v.id.as_str()).or_insert(v.level.as_str());
        if rank(&v.level) > rank(e) {
            *e = v.level.as_str();
        }
    }
    m
}

/// The TLS changes of a device reached over TLS in both sweeps.
fn tls_changes(a: &RowTls, b: &RowTls, push: &mut dyn FnMut(ChangeKind, String)) {
    if let (Some(x), Some(y)) = (&a.certificate, &b.certificate) {
        if !x.sha256.is_empty() && !y.sha256.is_empty() {
            if x.sha256 != y.sha256 {
                push(
                    ChangeKind::Certificate,
                    format!("{} -> {}", cert_words(x), cert_words(y)),
                );
            } else if !x.chain_sha256.is_empty()
                && !y.chain_sha256.is_empty()
                && x.chain_sha256 != y.chain_sha256
            {
                push(
                    ChangeKind::Certificate,
                    format!(
                        "same leaf, chain changed: {} -> {} certificates",
                        x.chain_sha256.len(),
                        y.chain_sha256.len()
                    ),
                );
            }
        }
    }
    // The scan knows every version and suite; the survey only its catalogue. Compare like
    // with like: the scan's facts when both sweeps scanned, else the survey's.
    let (va, vb, sa, sb) = match (&a.scan, &b.scan) {
        (Some(x), Some(y)) => {
            if let Some(d) = set_change(&x.groups_by_version(), &y.groups_by_version()) {
                push(ChangeKind::Groups, d);
            }
            (
                x.accepted_versions(),
                y.accepted_versions(),
                x.suites_by_version(),
                y.suites_by_version(),
            )
        }
        _ => (
            a.versions.clone(),
            b.versions.clone(),
            a.suites.clone(),
            b.suites.clone(),
        ),
    };
    if let Some(d) = set_change(&va, &vb) {
        push(ChangeKind::Versions, d);
    }
    if let Some(d) = set_change(&sa, &sb) {
        push(ChangeKind::Suites, d);
    }
    let (la, lb) = (verdict_levels(a), verdict_levels(b));
    // A verdict that only one sweep could give (its scan ran in one of them) is not a change.
    let same_tests = a.scan.is_some() == b.scan.is_some();
    let mut v = Vec::new();
    for (id, l) in &lb {
        match la.get(id) {
            Some(o) if o != l => v.push(format!("{id} {o} -> {l}")),
            None if same_tests && !la.is_empty() => v.push(format!("{id} new, {l}")),
            _ => {}
        }
    }
    for (id, o) in &la {
        if same_tests && !lb.is_empty() && !lb.contains_key(id) {
            v.push(format!("{id} {o}, gone"));
        }
    }
    if !v.is_empty() {
        push(ChangeKind::Verdict, v.join("; "));
    }
}

/// The changes of one device between two rows.
pub fn row_changes(old: &Row, new: &Row) -> Vec<Change> {
    let mut c = Vec::new();
    let mut push = |kind, detail: String| c.push(Change { kind, detail });
    if old.reachable != new.reachable {
        push(
            ChangeKind::Reachable,
            format!("{} -> {}", old.reachable, new.reachable),
        );
    }
    if !(old.reachable && new.reachable) {
        return c;
    }
    match (&old.tls, &new.tls) {
        (Some(a), Some(b)) => tls_changes(a, b, &mut push),
        (None, Some(_)) => push(ChangeKind::Versions, "plain -> TLS".into()),
        (Some(_), None) => push(ChangeKind::Versions, "TLS -> plain".into()),
        (None, None) => {}
    }
    if let (Some(a), Some(b)) = (&old.found, &new.found) {
        let v = model(a, b);
        if !v.is_empty() {
            push(ChangeKind::Model, v.join("; "));
        }
    }
    if let (Some(a), Some(b)) = (&old.identity, &new.identity) {
        if a != b {
            push(
                ChangeKind::Identity,
                format!(
                    "{} {} {} -> {} {} {}",
                    a.vendor, a.model, a.revision, b.vendor, b.model, b.revision
                ),
            );
        }
    }
    c
}

/// The difference of two sweeps.
pub fn diff(old: &FleetReport, new: &FleetReport) -> FleetDiff {
    let mut d = FleetDiff::default();
    for n in &new.rows {
        match old.rows.iter().find(|o| o.name == n.name) {
            None => d.added.push(n.name.clone()),
            Some(o) => {
                let changes = row_changes(o, n);
                if !changes.is_empty() {
                    d.changed.push(DeviceDiff {
                        name: n.name.clone(),
                        changes,
                    });
                }
            }
        }
    }
    d.removed = old
        .rows
        .iter()
        .filter(|o| !new.rows.iter().any(|n| n.name == o.name))
        .map(|o| o.name.clone())
        .collect();
    d
}

/// Reads a `fleet.json`.
pub fn load(path: &Path) -> Result<FleetReport, FleetError> {
    let text = std::fs::read_to_string(path).map_err(|source| FleetError::Io {
        path: path.display().to_string(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| FleetError::Report {
        path: path.display().to_string(),
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::row::{RowCert, RowIdentity, RowOutcome, RowTls};
    use super::super::targets::Target;
    use super::*;

    fn row(digest: &str, ln: &str, rev: &str) -> Row {
        let t = Target {
            name: "P1".into(),
            ied: None,
            access_point: None,
            address: "a".into(),
            port: None,
            tls: None,
        };
        let mut r = Row::empty(&t, "a:3782".into(), RowOutcome::Complete, String::new());
        r.reachable = true;
        r.tls = Some(RowTls {
            versions: vec!["TLSv1.2".into()],
            suites: vec!["S1".into()],
            certificate: Some(RowCert {
                subject: "CN=p1".into(),
                issuer: "CN=ca".into(),
                not_after: "2030".into(),
                key: "EC 256".into(),
                sha256: digest.into(),
                chain_sha256: vec![digest.into(), "ca".into()],
            }),
            ..RowTls::default()
        });
        let mut f = Declared::default();
        f.lns.insert(ln.into());
        r.found = Some(f);
        r.identity = Some(RowIdentity {
            vendor: "v".into(),
            model: "m".into(),
            revision: rev.into(),
        });
        r
    }

    #[test]
    fn each_kind_of_change_is_found_and_nothing_else() {
        let a = row("aa", "LD/GGIO1", "1.0");
        assert!(row_changes(&a, &a).is_empty());
        let b = row("bb", "LD/GGIO2", "1.1");
        let kinds: Vec<ChangeKind> = row_changes(&a, &b).iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [
                ChangeKind::Certificate,
                ChangeKind::Model,
                ChangeKind::Identity
            ]
        );
        let mut c = a.clone();
        c.tls.as_mut().unwrap().versions.push("TLSv1.3".into());
        c.tls.as_mut().unwrap().suites = vec!["S2".into()];
        let ch = row_changes(&a, &c);
        assert_eq!(ch[0].kind, ChangeKind::Versions);
        assert!(ch[0].detail.contains("added: TLSv1.3"), "{}", ch[0].detail);
        assert_eq!(ch[1].kind, ChangeKind::Suites);
        let mut down = a.clone();
        down.reachable = false;
        assert_eq!(
            row_changes(&a, &down)
                .iter()
                .map(|c| c.kind)
                .collect::<Vec<_>>(),
            [ChangeKind::Reachable]
        );
    }

    /// A self-signed certificate of `CN=ied1` valid 2024-2034 under a fresh P-256 key.
    fn cert_der() -> Vec<u8> {
        use openssl::asn1::Asn1Time;
        use openssl::ec::{EcGroup, EcKey};
        use openssl::hash::MessageDigest;
        use openssl::nid::Nid;
        use openssl::pkey::PKey;
        use openssl::x509::{X509Builder, X509NameBuilder};
        let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
        let k = PKey::from_ec_key(EcKey::generate(&g).unwrap()).unwrap();
        let mut n = X509NameBuilder::new().unwrap();
        n.append_entry_by_text("CN", "ied1").unwrap();
        let n = n.build();
        let mut b = X509Builder::new().unwrap();
        b.set_version(2).unwrap();
        b.set_subject_name(&n).unwrap();
        b.set_issuer_name(&n).unwrap();
        b.set_pubkey(&k).unwrap();
        b.set_not_before(&Asn1Time::from_unix(1_704_067_200).unwrap())
            .unwrap();
        b.set_not_after(&Asn1Time::from_unix(2_019_686_400).unwrap())
            .unwrap();
        b.sign(&k, MessageDigest::sha256()).unwrap();
        b.build().to_der().unwrap()
    }

    /// The row of a survey that saw `der`, through the survey's own description and JSON.
    fn row_with(der: &[u8]) -> Row {
        let info = gander_tls::survey::chain::describe(der, 1_800_000_000).unwrap();
        let v = serde_json::json!({ "chain": [info] });
        let mut r = row("-", "LD/GGIO1", "1.0");
        r.tls = Some(super::super::row::tls_of(&v));
        r
    }

    #[test]
    fn a_reissued_certificate_with_a_new_key_is_a_change() {
        let (a, b) = (row_with(&cert_der()), row_with(&cert_der()));
        let (ca, cb) = (
            a.tls.as_ref().unwrap().certificate.as_ref().unwrap(),
            b.tls.as_ref().unwrap().certificate.as_ref().unwrap(),
        );
        // Same subject, issuer, validity and key type: only the DER tells them apart.
        assert_eq!(
            (&ca.subject, &ca.issuer, &ca.not_after, &ca.key),
            (&cb.subject, &cb.issuer, &cb.not_after, &cb.key)
        );
        let ch = row_changes(&a, &b);
        assert_eq!(ch.len(), 1, "{ch:?}");
        assert_eq!(ch[0].kind, ChangeKind::Certificate);
        assert!(ch[0].detail.contains("CN=ied1"), "{}", ch[0].detail);
        assert!(row_changes(&a, &a).is_empty());
        // A report without fingerprints (older survey) claims nothing about the certificate.
        let mut old = a.clone();
        old.tls
            .as_mut()
            .unwrap()
            .certificate
            .as_mut()
            .unwrap()
            .sha256 = String::new();
        assert!(row_changes(&old, &b).is_empty());
        // Same leaf, another chain.
        let mut c = a.clone();
        c.tls
            .as_mut()
            .unwrap()
            .certificate
            .as_mut()
            .unwrap()
            .chain_sha256 = vec![ca.sha256.clone(), "11".into()];
        let ch = row_changes(&a, &c);
        assert_eq!(ch.len(), 1);
        assert!(ch[0].detail.contains("chain changed"), "{}", ch[0].detail);
    }

    fn scanned(suites: &[&str], groups: &[&str], v13: bool, rc4: &str) -> Row {
        use super::super::row::RowVerdict;
        use super::super::scan::{RowScan, RowScanVersion};
        let mut r = row("aa", "LD/GGIO1", "1.0");
        let t = r.tls.as_mut().unwrap();
        let mut versions = vec![RowScanVersion {
            version: "1.2".into(),
            accepted: true,
            suites: suites.iter().map(|s| s.to_string()).collect(),
            groups: groups.iter().map(|s| s.to_string()).collect(),
            ..RowScanVersion::default()
        }];
        versions.push(RowScanVersion {
            version: "1.3".into(),
            accepted: v13,
            suites: if v13 {
                vec!["TLS_AES_128_GCM_SHA256".into()]
            } else {
                vec![]
            },
            ..RowScanVersion::default()
        });
        t.scan = Some(RowScan {
            versions,
            ..RowScan::default()
        });
        t.verdicts = vec![
            RowVerdict {
                id: "scan-rc4-suites".into(),
                level: rc4.into(),
                detail: String::new(),
            },
            RowVerdict {
                id: "scan-cipher-order".into(),
                level: "info".into(),
                detail: "1.2".into(),
            },
            RowVerdict {
                id: "scan-cipher-order".into(),
                level: "info".into(),
                detail: "1.3".into(),
            },
        ];
        r
    }

    #[test]
    fn scan_facts_per_version_and_verdict_levels_are_compared() {
        let a = scanned(&["S1"], &["x25519"], true, "pass");
        assert!(row_changes(&a, &a).is_empty());
        // An RC4 suite appears at TLS 1.2, TLS 1.3 goes, P-384 comes, the RC4 verdict fails.
        let b = scanned(
            &["S1", "TLS_RSA_WITH_RC4_128_SHA"],
            &["x25519", "secp384r1"],
            false,
            "fail",
        );
        let ch = row_changes(&a, &b);
        let kinds: Vec<ChangeKind> = ch.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [
                ChangeKind::Groups,
                ChangeKind::Versions,
                ChangeKind::Suites,
                ChangeKind::Verdict
            ],
            "{ch:?}"
        );
        assert_eq!(ch[0].detail, "added: secp384r1 (TLS 1.2)");
        assert_eq!(ch[1].detail, "removed: TLS 1.3");
        assert!(
            ch[2]
                .detail
                .contains("removed: TLS_AES_128_GCM_SHA256 (TLS 1.3)")
                && ch[2]
                    .detail
                    .contains("added: TLS_RSA_WITH_RC4_128_SHA (TLS 1.2)"),
            "{}",
            ch[2].detail
        );
        assert_eq!(ch[3].detail, "scan-rc4-suites pass -> fail");
        // One sweep without a scan: the survey's facts are compared, scan verdicts are not.
        let mut c = b.clone();
        c.tls.as_mut().unwrap().scan = None;
        assert!(row_changes(&a, &c)
            .iter()
            .all(|x| x.kind == ChangeKind::Verdict && x.detail == "scan-rc4-suites pass -> fail"));
    }
}
