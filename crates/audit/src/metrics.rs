//! The state of a live audit as OpenMetrics text (the exposition format Prometheus scrapes,
//! OpenMetrics 1.0), for `gander audit --interface IF --metrics ADDR:PORT`.
//!
//! The reader takes a [`LiveStats`] snapshot of its [`Auditor`] between two batches of frames
//! ([`Auditor::live_stats`]: a walk over the streams and findings, never over frames) and the
//! endpoint serves the last one rendered, so a scrape never touches the frame path. The text is
//! encoded by the Prometheus project's own Rust client (`prometheus-client`), as the gateway's
//! metrics are; every label value the audit knows is exported, the zeros too, so a rate query
//! sees a series start at 0 rather than from nothing. Metric names are listed in
//! `docs/audit.md` ("Live").

use crate::finding::Severity;
use crate::Auditor;
use gander_sec::KeyStore;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use std::fmt;

/// The OpenMetrics content type (OpenMetrics 1.0, "Protocol Negotiation").
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Frame kinds always exported (the audit's `Summary::kinds` names).
const KINDS: [&str; 9] = [
    "goose",
    "sv",
    "r-goose",
    "r-sv",
    "mms",
    "other",
    "malformed",
    "ip-fragment",
    "truncated",
];

/// Stream kinds always exported.
const STREAM_KINDS: [&str; 4] = ["goose", "sv", "r-goose", "r-sv"];

/// Verification outcomes always exported: a tag that verified, a frame with no IEC 62351-6
/// security, a secured frame not verified (no keys), and every failure verdict of
/// `gander_sec` (the `sec-` finding codes without their prefix).
const OUTCOMES: [&str; 17] = [
    "verified",
    "unsecured",
    "not-verified",
    "malformed",
    "unknown-key",
    "key-not-yet-valid",
    "key-expired",
    "algorithm-mismatch",
    "unknown-algorithm",
    "missing-authenticator",
    "bad-iv",
    "bad-mac",
    "bad-tag",
    "replay",
    "key-not-allowed",
    "bad-checksum",
    "unsupported",
];

const SEVERITIES: [Severity; 4] = [
    Severity::Info,
    Severity::Low,
    Severity::Medium,
    Severity::High,
];

/// One key of the key file as the metrics show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyAge {
    /// Key id.
    pub id: u32,
    /// Seconds since the key's `not_before` (negative: not valid yet), if it has one.
    pub age_s: Option<i64>,
    /// Seconds until its `not_after` (negative: expired), if it has one.
    pub expires_in_s: Option<i64>,
}

/// The key ages of `keys` at `now` (Unix seconds): IEC 62351-9 keys have a lifetime, and a
/// key running out with no successor in the file is an outage a dashboard should see coming.
pub fn key_ages(keys: &KeyStore, now: u64) -> Vec<KeyAge> {
    let diff = |a: u64, b: u64| i64::try_from(a as i128 - b as i128).unwrap_or(i64::MAX);
    let mut v: Vec<KeyAge> = keys
        .iter()
        .map(|k| KeyAge {
            id: k.id,
            age_s: k.not_before.map(|nb| diff(now, nb)),
            expires_in_s: k.not_after.map(|na| diff(na, now)),
        })
        .collect();
    v.sort_by_key(|k| k.id);
    v
}

/// What the kernel counted on the capture socket (`PACKET_STATISTICS`, packet(7)), summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelTotals {
    /// Frames that reached the socket, the dropped ones included.
    pub packets: u64,
    /// Frames dropped because the ring was full: never audited.
    pub drops: u64,
}

/// A snapshot of a live audit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveStats {
    /// The interface read.
    pub interface: String,
    /// Framing profile.
    pub profile: &'static str,
    /// Frames read, by kind (as `Summary::kinds`).
    pub kinds: BTreeMap<&'static str, u64>,
    /// Publisher streams, by kind.
    pub streams: BTreeMap<&'static str, u64>,
    /// MMS associations (plain and TLS).
    pub associations: u64,
    /// IEC 61850 frames by verification outcome ([`OUTCOMES`]).
    pub outcomes: BTreeMap<String, u64>,
    /// Occurrences of findings, by severity.
    pub findings: BTreeMap<Severity, u64>,
    /// Distinct findings (code and stream), by severity.
    pub finding_kinds: BTreeMap<Severity, u64>,
    /// The kernel's counters of the capture socket.
    pub kernel: KernelTotals,
    /// Key ages, with `--keys`.
    pub keys: Vec<KeyAge>,
}

impl Auditor<'_> {
    /// The numbers the metrics endpoint serves (`interface`, `kernel` and `keys` are the
    /// caller's to fill in). Costs a walk over streams and findings: take it between batches,
    /// not per frame.
    pub fn live_stats(&self) -> LiveStats {
        let mut s = LiveStats {
            profile: self.opts.profile.name(),
            kinds: self.kinds.clone(),
            associations: self.mms.associations.len() as u64,
            ..LiveStats::default()
        };
        let (mut verified, mut unsecured, mut not_verified) = (0u64, 0u64, 0u64);
        for st in &self.streams {
            *s.streams.entry(st.key.kind.name()).or_insert(0) += 1;
            verified += st.verified;
            unsecured += st.unsecured;
            if self.verifier.is_none() {
                not_verified += st.secured;
            }
        }
        s.outcomes.insert("verified".into(), verified);
        s.outcomes.insert("unsecured".into(), unsecured);
        s.outcomes.insert("not-verified".into(), not_verified);
        for f in self.findings.as_slice() {
            *s.findings.entry(f.severity).or_insert(0) += f.count;
            *s.finding_kinds.entry(f.severity).or_insert(0) += 1;
            if let Some(code) = f.code.strip_prefix("sec-") {
                *s.outcomes.entry(code.to_string()).or_insert(0) += f.count;
            }
        }
        s
    }
}

/// The registry's collector: one snapshot.
#[derive(Debug)]
struct Owned(LiveStats);

fn counter_family(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    label: &str,
    values: impl Iterator<Item = (String, u64)>,
) -> fmt::Result {
    let mut fam = enc.encode_descriptor(name, help, None, ConstCounter::new(0u64).metric_type())?;
    for (v, n) in values {
        ConstCounter::new(n).encode(fam.encode_family(&[(label, v.as_str())])?)?;
    }
    Ok(())
}

/// Every name of `fixed`, then any other key of `map`, each once, with its value (0 if absent).
fn with_zeros<'m>(
    fixed: &'m [&'m str],
    map: &'m BTreeMap<impl AsRef<str> + Ord + 'm, u64>,
) -> impl Iterator<Item = (String, u64)> + 'm {
    let extra = map
        .iter()
        .filter(|(k, _)| !fixed.contains(&k.as_ref()))
        .map(|(k, v)| (k.as_ref().to_string(), *v));
    fixed
        .iter()
        .map(|k| {
            let v = map
                .iter()
                .find(|(m, _)| m.as_ref() == *k)
                .map_or(0, |(_, v)| *v);
            (k.to_string(), v)
        })
        .chain(extra)
}

impl Collector for Owned {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        let s = &self.0;
        let info = ConstGauge::new(1i64);
        let labels = [
            ("interface", s.interface.as_str()),
            ("profile", s.profile),
            ("version", env!("CARGO_PKG_VERSION")),
        ];
        let mut fam = enc.encode_descriptor(
            "info",
            "The running audit: interface, wire profile, gander version.",
            None,
            info.metric_type(),
        )?;
        info.encode(fam.encode_family(&labels)?)?;

        counter_family(
            &mut enc,
            "frames",
            "Frames read from the interface, by kind (other: not IEC 61850 traffic).",
            "kind",
            with_zeros(&KINDS, &s.kinds),
        )?;
        counter_family(
            &mut enc,
            "verification",
            "IEC 61850 frames by IEC 62351-6 verification outcome (failures by gander's verdict word).",
            "outcome",
            with_zeros(&OUTCOMES, &s.outcomes),
        )?;
        let sev = |m: &BTreeMap<Severity, u64>| -> Vec<(String, u64)> {
            SEVERITIES
                .iter()
                .map(|v| (v.word().to_string(), m.get(v).copied().unwrap_or(0)))
                .collect()
        };
        counter_family(
            &mut enc,
            "findings",
            "Frames that showed a finding, by severity.",
            "severity",
            sev(&s.findings).into_iter(),
        )?;
        let mut fam = enc.encode_descriptor(
            "finding_kinds",
            "Distinct findings (code and stream), by severity.",
            None,
            ConstGauge::new(0i64).metric_type(),
        )?;
        for (v, n) in sev(&s.finding_kinds) {
            ConstGauge::new(i64::try_from(n).unwrap_or(i64::MAX))
                .encode(fam.encode_family(&[("severity", v.as_str())])?)?;
        }
        let mut fam = enc.encode_descriptor(
            "streams",
            "Publisher streams seen, by kind.",
            None,
            ConstGauge::new(0i64).metric_type(),
        )?;
        for (k, n) in with_zeros(&STREAM_KINDS, &s.streams) {
            ConstGauge::new(i64::try_from(n).unwrap_or(i64::MAX))
                .encode(fam.encode_family(&[("kind", k.as_str())])?)?;
        }
        let g = ConstGauge::new(i64::try_from(s.associations).unwrap_or(i64::MAX));
        let fam = enc.encode_descriptor(
            "mms_associations",
            "MMS associations seen (plain and TLS).",
            None,
            g.metric_type(),
        )?;
        g.encode(fam)?;
        let c = ConstCounter::new(s.kernel.packets);
        let fam = enc.encode_descriptor(
            "socket_packets",
            "Frames that reached the capture socket, dropped ones included (PACKET_STATISTICS).",
            None,
            c.metric_type(),
        )?;
        c.encode(fam)?;
        let c = ConstCounter::new(s.kernel.drops);
        let fam = enc.encode_descriptor(
            "socket_drops",
            "Frames the kernel dropped because the capture ring was full: never audited.",
            None,
            c.metric_type(),
        )?;
        c.encode(fam)?;
        if !s.keys.is_empty() {
            let mut fam = enc.encode_descriptor(
                "key_age_seconds",
                "Seconds since the key's not_before (keys with a validity start).",
                None,
                ConstGauge::new(0i64).metric_type(),
            )?;
            for k in &s.keys {
                if let Some(a) = k.age_s {
                    let id = k.id.to_string();
                    ConstGauge::new(a).encode(fam.encode_family(&[("key_id", id.as_str())])?)?;
                }
            }
            let mut fam = enc.encode_descriptor(
                "key_expires_in_seconds",
                "Seconds until the key's not_after, negative once expired (keys with a validity end).",
                None,
                ConstGauge::new(0i64).metric_type(),
            )?;
            for k in &s.keys {
                if let Some(e) = k.expires_in_s {
                    let id = k.id.to_string();
                    ConstGauge::new(e).encode(fam.encode_family(&[("key_id", id.as_str())])?)?;
                }
            }
        }
        Ok(())
    }
}

/// The snapshot as one OpenMetrics exposition (metric names `gander_audit_*`, ends with
/// `# EOF`).
pub fn render(stats: &LiveStats) -> String {
    let mut out = String::new();
    let mut reg = Registry::with_prefix("gander_audit");
    // A registry owns its collectors: it gets a copy of the snapshot.
    reg.register_collector(Box::new(Owned(stats.clone())));
    // Writing into a String cannot fail; an encoder error would be a bug in a label above.
    if prometheus_client::encoding::text::encode(&mut out, &reg).is_err() {
        out = "# EOF\n".into();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AuditOptions;
    use gander_testkit::frames::{goose_frame, sv_frame};

    fn sample() -> LiveStats {
        let mut a = Auditor::new(AuditOptions::default(), None);
        let src = [0x00, 0x30, 0xa7, 0, 0, 1];
        a.feed(
            1,
            1_000,
            &goose_frame(src, [0x01, 0x0c, 0xcd, 1, 0, 1], None, 1, 1, 0),
        );
        a.feed(
            2,
            2_000_000,
            &goose_frame(src, [0x01, 0x0c, 0xcd, 1, 0, 1], None, 1, 1, 0),
        );
        a.feed(
            3,
            3_000_000,
            &sv_frame(src, [0x01, 0x0c, 0xcd, 4, 0, 1], None, 0x4000, "MU", 7),
        );
        let mut s = a.live_stats();
        s.interface = "sub0".into();
        s.kernel = KernelTotals {
            packets: 5,
            drops: 2,
        };
        s.keys = vec![KeyAge {
            id: 7,
            age_s: Some(60),
            expires_in_s: Some(-5),
        }];
        s
    }

    #[test]
    fn snapshot_counts_what_the_audit_saw() {
        let s = sample();
        assert_eq!(s.kinds.get("goose"), Some(&2));
        assert_eq!(s.kinds.get("sv"), Some(&1));
        assert_eq!(s.streams.get("goose"), Some(&1));
        assert_eq!(s.streams.get("sv"), Some(&1));
        assert_eq!(s.outcomes.get("unsecured"), Some(&3));
        // Three unsecured frames (medium) and one duplicate (low).
        assert_eq!(s.findings.get(&Severity::Medium), Some(&3));
        assert_eq!(s.findings.get(&Severity::Low), Some(&1));
    }

    #[test]
    fn renders_openmetrics_with_zeros_and_eof() {
        let t = render(&sample());
        assert!(t.ends_with("# EOF\n"), "{t}");
        assert!(t.contains("# TYPE gander_audit_frames counter"), "{t}");
        assert!(
            t.contains("gander_audit_frames_total{kind=\"goose\"} 2"),
            "{t}"
        );
        assert!(
            t.contains("gander_audit_frames_total{kind=\"r-sv\"} 0"),
            "{t}"
        );
        assert!(t.contains("gander_audit_verification_total{outcome=\"bad-mac\"} 0"));
        assert!(t.contains("gander_audit_verification_total{outcome=\"unsecured\"} 3"));
        assert!(t.contains("gander_audit_findings_total{severity=\"medium\"} 3"));
        assert!(t.contains("gander_audit_findings_total{severity=\"high\"} 0"));
        assert!(t.contains("gander_audit_streams{kind=\"sv\"} 1"));
        assert!(t.contains("gander_audit_socket_drops_total 2"), "{t}");
        assert!(t.contains("gander_audit_key_age_seconds{key_id=\"7\"} 60"));
        assert!(t.contains("gander_audit_key_expires_in_seconds{key_id=\"7\"} -5"));
        assert!(t.contains("interface=\"sub0\""));
        // Each family is described once.
        assert_eq!(t.matches("# TYPE gander_audit_frames ").count(), 1);
    }

    /// A strict reading of the OpenMetrics 1.0 text format for what `render` writes: every
    /// line a `# HELP`, `# TYPE` (counter or gauge) or a sample of the family described last
    /// (counters only as `_total`), label values quoted, values integers, families described
    /// once, `# EOF` last.
    /// Why a text is not OpenMetrics.
    #[derive(Debug)]
    struct Bad(#[allow(dead_code)] String);

    fn check_openmetrics(t: &str) -> Result<usize, Bad> {
        let mut family: Option<(String, String)> = None;
        let mut seen = std::collections::BTreeSet::new();
        let mut samples = 0;
        let mut lines = t.split_terminator('\n').peekable();
        while let Some(l) = lines.next() {
            if l == "# EOF" {
                return if lines.peek().is_none() && t.ends_with("# EOF\n") {
                    Ok(samples)
                } else {
                    Err(Bad("text after # EOF".into()))
                };
            }
            if let Some(r) = l.strip_prefix("# HELP ") {
                let name = r.split(' ').next().unwrap_or("");
                if !name.starts_with("gander_audit_") || seen.contains(name) {
                    return Err(Bad(format!("bad or repeated HELP: {l}")));
                }
                continue;
            }
            if let Some(r) = l.strip_prefix("# TYPE ") {
                let mut p = r.split(' ');
                let (n, ty) = (p.next().unwrap_or(""), p.next().unwrap_or(""));
                if !matches!(ty, "counter" | "gauge") || !seen.insert(n.to_string()) {
                    return Err(Bad(format!("bad TYPE: {l}")));
                }
                family = Some((n.to_string(), ty.to_string()));
                continue;
            }
            let (f, ty) = family
                .clone()
                .ok_or_else(|| Bad(format!("sample before TYPE: {l}")))?;
            let (name_labels, value) = l
                .rsplit_once(' ')
                .ok_or_else(|| Bad(format!("no value: {l}")))?;
            value
                .parse::<i64>()
                .map_err(|_| Bad(format!("value: {l}")))?;
            let name = name_labels.split('{').next().unwrap_or("");
            let want = if ty == "counter" {
                format!("{f}_total")
            } else {
                f.clone()
            };
            if name != want {
                return Err(Bad(format!("sample {name} in family {f} ({ty})")));
            }
            if let Some(labels) = name_labels.strip_prefix(name) {
                if !labels.is_empty() {
                    let inner = labels
                        .strip_prefix('{')
                        .and_then(|x| x.strip_suffix('}'))
                        .ok_or_else(|| Bad(format!("labels: {l}")))?;
                    for kv in inner.split("\",") {
                        let (k, v) = kv
                            .split_once("=\"")
                            .ok_or_else(|| Bad(format!("label: {l}")))?;
                        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        {
                            return Err(Bad(format!("label name: {l}")));
                        }
                        if v.contains('\n') {
                            return Err(Bad(format!("label value: {l}")));
                        }
                    }
                }
            }
            samples += 1;
        }
        Err(Bad("no # EOF".into()))
    }

    #[test]
    fn the_sample_parses_strictly() {
        let n = check_openmetrics(&render(&sample())).unwrap();
        assert!(n > 40, "{n}");
    }

    proptest::proptest! {
        /// Whatever the counts, the interface name or the keys, the exposition parses.
        #[test]
        fn any_snapshot_renders_valid_openmetrics(
            frames in proptest::collection::btree_map(0usize..KINDS.len(), 0u64..u64::MAX / 2, 0..9),
            outcomes in proptest::collection::btree_map("[a-z-]{1,12}", 0u64..1 << 40, 0..6),
            iface in "[a-zA-Z0-9._-]{1,15}",
            drops in 0u64..1 << 40,
            keys in proptest::collection::vec((0u32..100, proptest::option::of(-1i64 << 40..1 << 40), proptest::option::of(-1i64 << 40..1 << 40)), 0..4),
        ) {
            let mut s = LiveStats {
                interface: iface,
                profile: "standard",
                ..LiveStats::default()
            };
            for (k, v) in frames {
                s.kinds.insert(KINDS[k], v);
            }
            s.outcomes = outcomes;
            s.kernel.drops = drops;
            s.kernel.packets = drops.saturating_mul(2);
            s.findings.insert(Severity::High, 3);
            let mut ids = std::collections::BTreeSet::new();
            s.keys = keys
                .into_iter()
                .filter(|k| ids.insert(k.0))
                .map(|(id, age_s, expires_in_s)| KeyAge { id, age_s, expires_in_s })
                .collect();
            let t = render(&s);
            proptest::prop_assert!(check_openmetrics(&t).is_ok(), "{:?}\n{}", check_openmetrics(&t), t);
        }
    }

    #[test]
    fn no_key_families_without_keys() {
        let mut s = sample();
        s.keys.clear();
        assert!(!render(&s).contains("key_age"));
    }

    #[test]
    fn key_ages_from_the_validity_window() {
        let text = r#"
[[key]]
id = 2
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
not_before = 1000
not_after = 5000
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
"#;
        let ks = KeyStore::from_toml(
            text,
            std::path::Path::new("."),
            gander_sec::default_provider(),
        )
        .unwrap();
        let ages = key_ages(&ks, 1500);
        assert_eq!(
            ages,
            vec![
                KeyAge {
                    id: 1,
                    age_s: None,
                    expires_in_s: None
                },
                KeyAge {
                    id: 2,
                    age_s: Some(500),
                    expires_in_s: Some(3500)
                },
            ]
        );
    }
}
