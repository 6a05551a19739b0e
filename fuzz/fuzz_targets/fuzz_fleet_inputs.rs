//! The fleet sweep's inputs are files a user hands over or an earlier run left behind: an SCD's
//! Communication section (`gander_scl::ip_access_points`, then the sweep plan), a targets file
//! (TOML), the resume state (JSON lines, a torn last line allowed) and an earlier `fleet.json`
//! for the diff. Any text gives a value or a typed error, never a panic; a plan's target names
//! are unique; a report with unique names diffs with itself to nothing.
#![no_main]
use gander_probe::fleet::{diff, report::FleetReport, state, targets};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(aps) = gander_scl::ip_access_points(text) {
        for a in &aps {
            assert!(a.port != Some(0));
        }
    }
    if let Ok(plan) = targets::from_scd("fuzz.scd", text) {
        let mut names: Vec<&str> = plan.targets.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), plan.targets.len());
    }
    let _ = targets::from_toml("fuzz.toml", text);
    if let Ok(rows) = state::parse("fuzz.jsonl", text) {
        // Numbers may move by an ulp through JSON; the rows and their names may not.
        let again: String = rows.iter().map(state::line).collect();
        let back = state::parse("again", &again).expect("written rows read back");
        assert!(back.iter().map(|r| &r.name).eq(rows.iter().map(|r| &r.name)));
    }
    if let Ok(r) = serde_json::from_str::<FleetReport>(text) {
        let mut names: Vec<&str> = r.rows.iter().map(|x| x.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        if names.len() == r.rows.len() {
            assert!(diff::diff(&r, &r).is_empty());
        }
        let _ = gander_probe::fleet::report::html(&r);
        let _ = gander_probe::fleet::report::openmetrics(&r);
    }
});
