//! Control rows of a scenario (`interaction = "control"`): the select, operate,
//! CommandTermination and Cancel round trips of one named control object (IEC 61850-7-2 clause
//! 20 over IEC 61850-8-1 clause 20), measured by gander's run client (`gander_peers::client`,
//! `[control]`, on `gander_client::control_rt`) over TLS and, as for every row, over cleartext.
//!
//! Against gander's own server the case serves the built-in control model (one controllable
//! object per ctlModel: `CTRLLD0/GGIO1.SPCSO1` direct-normal, `SPCSO2` sbo-normal, `SPCSO3`
//! direct-enhanced, `SPCSO4` sbo-enhanced, also `GGIO1.ISCSO1`, `GGIO1.APCSO1`, `CSWI1.Pos`)
//! with still values; against a target, the object the row names. Nothing is operated unless a
//! row names the object; Test is set unless `control_test = false`; the client reads the
//! object's state before and after and restores it (`docs/probe.md`, "Controls").
//!
//! The case's RT is the operate round trip (so RT, VAR% and the TLS/cleartext ratio of every
//! table apply); [`ControlStats`] adds each phase with its own cleartext ratio.

use crate::results::{Event, Stat};
use crate::scenario::Params;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The built-in control model gander's server serves for control rows: the control fixture of
/// gander-peers' tests (one object per ctlModel, an INC, an APC, a DPC with interlocking).
pub const CONTROL_MODEL: &str = include_str!("../../peers/tests/data/controls.cid");

/// Whether `object` reads as `LD/LN.DO`.
pub fn valid_object(object: &str) -> bool {
    object
        .split_once('/')
        .and_then(|(ld, rest)| Some((ld, rest.split_once('.')?)))
        .is_some_and(|(ld, (ln, dob))| !ld.is_empty() && !ln.is_empty() && !dob.is_empty())
}

/// Samples of each phase, ns, in measurement order (warm-up included).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ControlSamples {
    /// Select round trips (SBO read or SBOw write).
    pub select: Vec<u64>,
    /// Operate round trips.
    pub operate: Vec<u64>,
    /// Operate response to CommandTermination.
    pub termination: Vec<u64>,
    /// Cancel round trips after a select.
    pub cancel: Vec<u64>,
}

impl ControlSamples {
    /// No sample at all.
    pub fn is_empty(&self) -> bool {
        self.select.is_empty()
            && self.operate.is_empty()
            && self.termination.is_empty()
            && self.cancel.is_empty()
    }

    /// Adds one `CONTROL` event (`phase`, `ns`); other events are ignored.
    pub fn add(&mut self, e: &Event) {
        let (Some(phase), Some(ns)) = (e.phase.as_deref(), e.ns) else {
            return;
        };
        match phase {
            "select" => self.select.push(ns),
            "operate" => self.operate.push(ns),
            "termination" => self.termination.push(ns),
            "cancel" => self.cancel.push(ns),
            _ => {}
        }
    }
}

/// One phase over TLS and over cleartext.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseRow {
    /// Over the case's transport.
    pub tls: Stat,
    /// Over cleartext (the baseline run), when there is one.
    pub clear: Option<Stat>,
    /// Median over the case's transport / median over cleartext.
    pub ratio: Option<f64>,
}

/// Every phase of a control row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ControlStats {
    /// The object operated.
    pub object: String,
    /// Select (SBO models).
    pub select: Option<PhaseRow>,
    /// Operate.
    pub operate: Option<PhaseRow>,
    /// CommandTermination (enhanced security).
    pub termination: Option<PhaseRow>,
    /// Cancel (SBO models with a Cancel).
    pub cancel: Option<PhaseRow>,
}

impl ControlStats {
    /// The statistics of `tls` and `clear` with the first `warmup` samples of each phase
    /// discarded; `None` without samples.
    pub fn of(
        object: &str,
        tls: &ControlSamples,
        clear: &ControlSamples,
        warmup: usize,
    ) -> Option<ControlStats> {
        if tls.is_empty() {
            return None;
        }
        let keep = |v: &[u64]| v[warmup.min(v.len().saturating_sub(1))..].to_vec();
        let row = |t: &[u64], c: &[u64]| {
            let tls = Stat::of(&keep(t))?;
            let clear = Stat::of(&keep(c));
            let ratio = clear
                .as_ref()
                .filter(|c| c.median_ms > 0.0)
                .map(|c| tls.median_ms / c.median_ms);
            Some(PhaseRow { tls, clear, ratio })
        };
        Some(ControlStats {
            object: object.to_string(),
            select: row(&tls.select, &clear.select),
            operate: row(&tls.operate, &clear.operate),
            termination: row(&tls.termination, &clear.termination),
            cancel: row(&tls.cancel, &clear.cancel),
        })
    }
}

/// The client's `[control]` table: the row's object, `reports` operations `period_ms` apart.
pub fn client_table(p: &Params) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n[control]\nobject = {}\ncount = {}\ntest = {}\npause_ms = {}",
        toml::Value::String(p.control_object.clone()),
        p.reports,
        p.control_test,
        p.period_ms
    );
    s
}

/// The Markdown table of a scenario's control rows: per row the object, transport, and each
/// phase's median over the row's transport, over cleartext and their ratio.
pub fn markdown(rows: &[(String, String, &ControlStats)]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "\n### Control round trips (median ms; TLS / cleartext ratio)\n\n| case | transport | object | select | operate | termination | cancel |\n|---|---|---|---|---|---|---|"
    );
    let cell = |r: &Option<PhaseRow>| match r {
        None => "-".to_string(),
        Some(r) => match (&r.clear, r.ratio) {
            (Some(c), Some(x)) => {
                format!("{:.3} / {:.3} ({:.2}x)", r.tls.median_ms, c.median_ms, x)
            }
            _ => format!("{:.3}", r.tls.median_ms),
        },
    };
    for (case, transport, c) in rows {
        let _ = writeln!(
            s,
            "| {case} | {transport} | {} | {} | {} | {} | {} |",
            c.object,
            cell(&c.select),
            cell(&c.operate),
            cell(&c.termination),
            cell(&c.cancel)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn ev(phase: &str, ns: u64) -> Event {
        serde_json::from_value(serde_json::json!({
            "event": "CONTROL", "t_ns": 1, "conn": 1, "phase": phase, "ns": ns
        }))
        .unwrap()
    }

    #[test]
    fn phases_are_collected_and_compared_with_cleartext() {
        let mut t = ControlSamples::default();
        let mut c = ControlSamples::default();
        for ns in [9_000_000, 2_000_000, 2_000_000, 2_000_000] {
            t.add(&ev("operate", ns));
            c.add(&ev("operate", ns / 2));
        }
        t.add(&ev("termination", 1_000_000));
        t.add(&ev("bogus", 1));
        assert!(t.select.is_empty() && t.termination.len() == 1);
        // One warm-up sample discarded: the 9 ms first operation.
        let s = ControlStats::of("LD/LN.DO", &t, &c, 1).unwrap();
        let op = s.operate.unwrap();
        assert_eq!((op.tls.n, op.tls.median_ms), (3, 2.0));
        assert_eq!(op.ratio, Some(2.0));
        // A phase with one sample keeps it; one without cleartext has no ratio.
        let term = s.termination.unwrap();
        assert_eq!((term.tls.n, term.ratio), (1, None));
        assert!(s.select.is_none());
        assert!(ControlStats::of("x", &ControlSamples::default(), &c, 0).is_none());
        let md = markdown(&[(
            "c1".into(),
            "TLS 1.3".into(),
            &ControlStats::of("LD/LN.DO", &t, &c, 1).unwrap(),
        )]);
        assert!(
            md.contains("| c1 | TLS 1.3 | LD/LN.DO | - | 2.000 / 1.000 (2.00x) | 1.000 | - |"),
            "{md}"
        );
    }

    #[test]
    fn rows_name_their_object_and_run_gander_peers() {
        use crate::scenario::Scenario;
        let file = |row: &str| {
            format!("name = \"t\"\ndescription = \"d\"\nsource = \"s\"\n[defaults]\ninteraction = \"control\"\nreports = 4\ntls_version = \"none\"\n[[row]]\nname = \"r\"\n{row}")
        };
        let e = Scenario::from_str("t", &file(""), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("control_object"), "{e}");
        let e = Scenario::from_str(
            "t",
            &file("control_object = \"LD0/CSWI1.Pos\"\nserver_stack = \"libiec61850\""),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("gander's server and client"), "{e}");
        let s =
            Scenario::from_str("t", &file("control_object = \"LD0/CSWI1.Pos\""), false).unwrap();
        assert!(s.cases[0].params.control_test, "Test is the default");
        // The client's table, and against a target: no reports, the row's object.
        let t = client_table(&s.cases[0].params);
        assert!(
            t.contains("object = \"LD0/CSWI1.Pos\"")
                && t.contains("test = true")
                && t.contains("count = 4"),
            "{t}"
        );
        let mut tt = toml::Table::new();
        tt.insert(
            "address".into(),
            toml::Value::String("127.0.0.1:102".into()),
        );
        let target = crate::target::TargetSpec::from_table("t", tt, None).unwrap();
        let c = target
            .client_config(&s.cases[0], Path::new("/tmp/e"))
            .unwrap();
        assert!(
            c.contains("reports = 0\n") && c.contains("[control]"),
            "{c}"
        );
        let parsed: toml::Table = c.parse().unwrap();
        assert_eq!(parsed["control"]["object"].as_str(), Some("LD0/CSWI1.Pos"));
    }

    #[test]
    fn the_built_in_scenario_has_every_model_on_every_backend() {
        let s = crate::scenario::Scenario::load("controls", true).unwrap();
        assert_eq!(s.cases.len(), 12);
        assert!(s
            .cases
            .iter()
            .all(|c| c.params.control_test && c.tls.is_some()));
    }

    #[test]
    fn objects_are_named() {
        assert!(valid_object("CTRLLD0/GGIO1.SPCSO1"));
        assert!(!valid_object(""));
        assert!(!valid_object("CTRLLD0/GGIO1"));
    }

    #[test]
    fn the_built_in_model_has_one_object_per_ctl_model() {
        for m in [
            "direct-with-normal-security",
            "sbo-with-normal-security",
            "direct-with-enhanced-security",
            "sbo-with-enhanced-security",
        ] {
            assert!(CONTROL_MODEL.contains(m), "{m}");
        }
    }
}
