//! Why a fleet sweep could not start or could not keep its record: the inputs (SCD, targets
//! file, an earlier report) and the output directory. A device that does not answer is not an
//! error: it is a row of the report.
use gander_scl::SclError;

/// Why the sweep (or the diff) stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// The SCD could not be read or has no usable IED.
    #[error("SCD {path}")]
    Scd {
        /// The file.
        path: String,
        /// What gander-scl said (boxed: it is large and rare).
        #[source]
        source: Box<SclError>,
    },
    /// The targets file is not the documented TOML (`docs/probe.md`, "Fleet").
    #[error("targets file {path}: {detail}")]
    Targets {
        /// The file.
        path: String,
        /// What is wrong.
        detail: String,
    },
    /// No target to sweep.
    #[error("nothing to sweep: {0}")]
    NoTargets(String),
    /// Two targets share a name (the name keys the resume state and the diff).
    #[error("two targets are named {0:?}: names key the state file and the diff")]
    DuplicateName(String),
    /// Reading or writing a file of the sweep.
    #[error("{path}")]
    Io {
        /// The file.
        path: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The state file of an earlier, interrupted sweep is damaged before its last line (a
    /// torn last line is expected after a kill and is ignored).
    #[error("state file {path}, line {line}: {detail} (remove it to start the sweep over)")]
    State {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// The JSON error.
        detail: String,
    },
    /// A report given to `diff` is not a fleet report.
    #[error("{path} is not a fleet report (gander probe --scd/--targets --out): {detail}")]
    Report {
        /// The file.
        path: String,
        /// The JSON error.
        detail: String,
    },
    /// An option is out of range.
    #[error("{what}: {detail}")]
    InvalidOption {
        /// The option.
        what: &'static str,
        /// Why.
        detail: String,
    },
}

impl FleetError {
    /// Whether the invocation is wrong (exit 2) rather than a file or device problem.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            FleetError::InvalidOption { .. }
                | FleetError::Targets { .. }
                | FleetError::NoTargets(_)
                | FleetError::DuplicateName(_)
                | FleetError::Scd { .. }
        )
    }
}
