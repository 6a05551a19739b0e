//! Files gander runs at run time that are not compiled into the binary: the libiec61850 peers of
//! `gander run` under the repository's `interop/` directory (the compiled C harness that
//! `make cref` builds, and the Python driver) and the project-local Python that has the
//! libiec61850 wheel (`.venv/bin/python`, made by `make venv`).
//!
//! `gander` may be started from any directory, so these are never looked up relative to the
//! working directory. The interop directory is, in this order:
//!
//! 1. `$GANDER_INTEROP_DIR` when it is set: then only there, so a wrong setting is reported
//!    instead of silently replaced by another copy;
//! 2. `interop/` beside the executable's directory or one of its first three parents
//!    (`<repo>/target/release/gander` finds `<repo>/interop`, as do `target/debug/deps/*` test
//!    binaries and `target/<triple>/release/gander`);
//! 3. `interop/` of the source tree the binary was built from (`CARGO_MANIFEST_DIR/../../interop`,
//!    fixed at compile time).
//!
//! A directory counts only if it holds the file asked for. When none does, the error names every
//! place looked at. The default Python is `.venv/bin/python` in the directory that holds the
//! interop directory found (the repository root).

use std::fmt;
use std::path::{Path, PathBuf};

/// Environment variable that names the interop directory.
pub const INTEROP_DIR_ENV: &str = "GANDER_INTEROP_DIR";
/// The libiec61850 peer driver started by `gander run` for the `libiec61850` stack.
pub const LIBIEC61850_PEER: &str = "imp_libiec61850_peer.py";
/// The compiled libiec61850 peer (`interop/cref/libiec61850_peer.c`, built by `make cref`
/// against the wheel's shared library), which `gander run` starts for the `libiec61850` stack.
pub const LIBIEC61850_CREF: &str = "cref/build/libiec61850_peer";
/// How many parents of the executable's directory are searched for `interop/`.
const EXE_PARENTS: usize = 3;

/// A runtime file that was looked for and not found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotFound {
    /// What was looked for, e.g. `interop/imp_libiec61850_peer.py`.
    pub what: String,
    /// Every path tried, in order.
    pub tried: Vec<PathBuf>,
    /// How to fix it.
    pub hint: String,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} not found; looked at:", self.what)?;
        for p in &self.tried {
            write!(f, "\n  {}", p.display())?;
        }
        if !self.hint.is_empty() {
            write!(f, "\n{}", self.hint)?;
        }
        Ok(())
    }
}

impl std::error::Error for NotFound {}

/// Where to look for `interop/`, in order, given the override and the executable's path.
fn interop_candidates(env: Option<PathBuf>, exe: Option<&Path>) -> Vec<PathBuf> {
    if let Some(dir) = env {
        return vec![dir];
    }
    let mut out = Vec::new();
    if let Some(dir) = exe.and_then(Path::parent) {
        out.extend(
            dir.ancestors()
                .take(EXE_PARENTS + 1)
                .map(|a| a.join("interop")),
        );
    }
    out.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop"));
    out
}

fn find_in(candidates: Vec<PathBuf>, file: &str, hint: String) -> Result<PathBuf, NotFound> {
    let mut tried = Vec::new();
    for dir in candidates {
        let path = dir.join(file);
        if path.is_file() {
            // Without `..` components, so that paths derived from it read well in errors.
            return Ok(path.canonicalize().unwrap_or(path));
        }
        if !tried.contains(&path) {
            tried.push(path);
        }
    }
    Err(NotFound {
        what: format!("interop/{file}"),
        tried,
        hint,
    })
}

/// The path of `file` in the interop directory (see the module documentation for the order).
pub fn interop_file(file: &str) -> Result<PathBuf, NotFound> {
    let env = std::env::var_os(INTEROP_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let hint = if env.is_some() {
        format!(
            "{INTEROP_DIR_ENV} is set, so only it is looked at: point it at the interop/ \
             directory of a gander checkout, or unset it."
        )
    } else {
        format!(
            "Set {INTEROP_DIR_ENV} to the interop/ directory of a gander checkout, or run a \
             gander binary built inside one."
        )
    };
    let exe = std::env::current_exe().ok();
    find_in(interop_candidates(env, exe.as_deref()), file, hint)
}

/// The libiec61850 peer driver of `gander run`.
pub fn libiec61850_peer() -> Result<PathBuf, NotFound> {
    interop_file(LIBIEC61850_PEER)
}

/// The compiled libiec61850 peer of `gander run` ([`LIBIEC61850_CREF`]).
pub fn libiec61850_cref() -> Result<PathBuf, NotFound> {
    interop_file(LIBIEC61850_CREF).map_err(|mut e| {
        e.hint = format!(
            "Run `make cref` in the repository (it builds the harness against the libiec61850 \
             of .venv), or pass --libiec61850-python to drive libiec61850 from Python. {}",
            e.hint
        );
        e
    })
}

/// The project-local Python beside the interop directory that holds `driver`
/// (`<repo>/.venv/bin/python` for `<repo>/interop/<driver>`).
pub fn venv_python_for(driver: &Path) -> Result<PathBuf, NotFound> {
    let python = driver
        .parent()
        .and_then(Path::parent)
        .map(|root| root.join(".venv/bin/python"));
    match python {
        Some(p) if p.exists() => Ok(p),
        other => Err(NotFound {
            what: "the project's Python (.venv/bin/python)".into(),
            tried: other.into_iter().collect(),
            hint: "Run `make venv` in the repository, or pass --python.".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_is_the_only_place_looked_at() {
        let c = interop_candidates(
            Some(PathBuf::from("/opt/x")),
            Some(Path::new("/r/target/release/gander")),
        );
        assert_eq!(c, vec![PathBuf::from("/opt/x")]);
    }

    #[test]
    fn executable_parents_then_source_tree() {
        let c = interop_candidates(None, Some(Path::new("/r/target/release/gander")));
        assert_eq!(
            &c[..3],
            &[
                PathBuf::from("/r/target/release/interop"),
                PathBuf::from("/r/target/interop"),
                PathBuf::from("/r/interop"),
            ]
        );
        assert_eq!(c.len(), EXE_PARENTS + 2);
        assert!(c.last().unwrap().ends_with("../../interop"));
    }

    #[test]
    fn finds_this_repository_driver_and_names_every_place_when_missing() {
        // The source tree's interop/ holds the driver whatever the working directory is.
        let found = find_in(
            interop_candidates(None, None),
            LIBIEC61850_PEER,
            String::new(),
        )
        .unwrap();
        assert!(found.is_file(), "{}", found.display());

        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("a/b/gander");
        let err = find_in(
            interop_candidates(Some(tmp.path().join("nowhere")), Some(&exe)),
            LIBIEC61850_PEER,
            format!("check {INTEROP_DIR_ENV}"),
        )
        .unwrap_err();
        assert_eq!(
            err.tried,
            vec![tmp.path().join("nowhere").join(LIBIEC61850_PEER)]
        );
        let msg = err.to_string();
        assert!(
            msg.contains("nowhere") && msg.contains(INTEROP_DIR_ENV),
            "{msg}"
        );

        let err = find_in(
            interop_candidates(None, Some(&exe)),
            "no-such-driver.py",
            String::new(),
        )
        .unwrap_err();
        assert_eq!(err.tried.len(), EXE_PARENTS + 2, "{err}");
        assert!(err.tried[0].starts_with(tmp.path().join("a")), "{err}");
    }

    #[test]
    fn venv_python_is_beside_the_interop_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let driver = tmp.path().join("interop").join(LIBIEC61850_PEER);
        let err = venv_python_for(&driver).unwrap_err();
        assert_eq!(err.tried, vec![tmp.path().join(".venv/bin/python")]);
        std::fs::create_dir_all(tmp.path().join(".venv/bin")).unwrap();
        std::fs::write(tmp.path().join(".venv/bin/python"), "").unwrap();
        assert_eq!(
            venv_python_for(&driver).unwrap(),
            tmp.path().join(".venv/bin/python")
        );
    }
}
