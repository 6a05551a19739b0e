//! Every scenario file the repository ships (`scenarios/*.toml`) parses and resolves on this
//! machine, in its full form and, where it has a `[quick]` table, its quick form: a file that
//! only `gander run FILE` reads (not a built-in) is otherwise checked by nobody until someone
//! runs it.

use gander_platform::scenario::{Scenario, ScenarioError};
use std::path::PathBuf;

fn files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_shipped_scenario_file_resolves() {
    let files = files();
    assert!(files.len() >= 9, "{files:?}");
    for f in files {
        let path = f.to_string_lossy().to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        let forms: &[bool] = if text.contains("\n[quick]") {
            &[false, true]
        } else {
            &[false]
        };
        for &quick in forms {
            match Scenario::load(&path, quick) {
                Ok(s) => assert!(!s.cases.is_empty(), "{path} (quick {quick}): no cases"),
                // A case needing a backend this build lacks (the OpenSSL 3.5 binary of the
                // post-quantum rows) is the one refusal allowed, and it must say so by case.
                Err(ScenarioError::Case { case, what, .. }) if what.contains("backend") => {
                    eprintln!("{path}: {case}: {what}")
                }
                Err(e) => panic!("{path} (quick {quick}): {e}"),
            }
        }
    }
}
