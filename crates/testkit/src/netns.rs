//! Tests that need network namespaces all decide the same way: when the lab can be built they
//! run; when it cannot (not root, no `ip netns`), they fail with the reason, unless
//! `GANDER_SKIP_NETNS=1` asks to skip them, and then they say that they skipped and why. A
//! namespace test never passes silently without having run.

use gander_lab::{LabGuard, Mode};

/// The environment variable that turns "cannot run" into "skipped".
pub const SKIP_ENV: &str = "GANDER_SKIP_NETNS";

/// Whether the namespace test `test` can run: `true` if labs can be built; `false` (after
/// printing the reason) if they cannot and [`SKIP_ENV`] is `1`.
///
/// # Panics
/// If labs cannot be built and skipping was not asked for: the failure says why and how to
/// skip.
pub fn available(test: &str) -> bool {
    match gander_lab::check_available() {
        Ok(()) => true,
        Err(e) if std::env::var(SKIP_ENV).as_deref() == Ok("1") => {
            eprintln!("{test}: skipped ({SKIP_ENV}=1): {e}");
            false
        }
        Err(e) => panic!("{test}: namespace test cannot run: {e} (set {SKIP_ENV}=1 to skip)"),
    }
}

/// A lab for test `tag`, taken down when dropped; `None` when [`available`] says skip.
///
/// # Panics
/// As [`available`], and if the lab cannot be brought up.
pub fn lab(tag: &str, mode: Mode) -> Option<LabGuard> {
    if !available(tag) {
        return None;
    }
    Some(LabGuard::up(tag, mode).unwrap_or_else(|e| panic!("{tag}: lab up: {e}")))
}
