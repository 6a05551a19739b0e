//! What changed between two sweeps of the same substation (`gander probe diff OLD NEW`, or
//! `--diff OLD` on a sweep): per device, reachability, the server certificate, the TLS
//! versions and suites accepted, the model (LDs, LNs, data sets, RCBs added or removed) and
//! the firmware identity (Identify's vendor, model, revision); devices that appeared or went.
//! Devices are matched by name. A device not reached in one of the sweeps has nothing to
//! compare beyond reachability: "unknown" is not "changed".
use super::declared::Declared;
use super::error::FleetError;
use super::report::FleetReport;
use super::row::Row;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// What kind of fact changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// Reachable in one sweep, not in the other.
    Reachable,
    /// The leaf certificate (its digest).
    Certificate,
    /// TLS versions accepted.
    Versions,
    /// Cipher suites accepted.
    Suites,
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
        (Some(a), Some(b)) => {
            let (ca, cb) = (a.certificate.as_ref(), b.certificate.as_ref());
            if let (Some(x), Some(y)) = (ca, cb) {
                if x.digest != y.digest {
                    push(
                        ChangeKind::Certificate,
                        format!(
                            "{} (until {}, {}) -> {} (until {}, {})",
                            x.subject, x.not_after, x.digest, y.subject, y.not_after, y.digest
                        ),
                    );
                }
            }
            let set = |v: &Vec<String>| v.iter().cloned().collect::<BTreeSet<_>>();
            let mut v = Vec::new();
            sets("", &set(&a.versions), &set(&b.versions), &mut v);
            if !(v.is_empty() || a.versions.is_empty() || b.versions.is_empty()) {
                push(ChangeKind::Versions, v.join("; ").trim().to_string());
            }
            let mut v = Vec::new();
            sets("", &set(&a.suites), &set(&b.suites), &mut v);
            if !(v.is_empty() || a.suites.is_empty() || b.suites.is_empty()) {
                push(ChangeKind::Suites, v.join("; ").trim().to_string());
            }
        }
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
                digest: digest.into(),
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
}
