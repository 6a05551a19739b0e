//! Findings: what the audit judged, how bad it is, and the frames that show it.
//!
//! One finding per (code, stream): the first frames that show it are kept (at most
//! [`MAX_FRAMES`] numbers) and every further occurrence is only counted, so memory is bounded by
//! the number of streams and codes, never by the capture.

use serde::Serialize;
use std::collections::HashMap;

/// Frame numbers kept per finding; later occurrences are counted only.
pub const MAX_FRAMES: usize = 64;

/// How bad a finding is. The exit code of `gander audit` follows the worst one
/// ([`Severity::exit_code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// For the inventory; nothing wrong.
    Info,
    /// Unusual, worth a look (a lost retransmission, an unsynchronised merging unit).
    Low,
    /// A weakness or misbehaviour (unsecured stream, simulation traffic, state gaps).
    Medium,
    /// An attack or a broken protection (tag failures, replays, downgrades).
    High,
}

impl Severity {
    /// Lower-case word, as in the logs.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }

    /// The process exit code when this is the worst finding: 0 for none or info only, 3 low,
    /// 4 medium, 5 high. 2 stays gander's code for an error that stopped the command (an
    /// unreadable capture or key file), so a script can tell "could not judge" from a verdict.
    pub fn exit_code(worst: Option<Severity>) -> u8 {
        match worst {
            None | Some(Severity::Info) => 0,
            Some(Severity::Low) => 3,
            Some(Severity::Medium) => 4,
            Some(Severity::High) => 5,
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable identifier, e.g. `goose-sq-gap` or `sec-bad-mac`.
    pub code: String,
    /// Severity.
    pub severity: Severity,
    /// The stream it concerns (its uid in the logs), if any.
    pub stream: Option<String>,
    /// What was seen the first time.
    pub detail: String,
    /// Capture time of the first occurrence, nanoseconds since the Unix epoch.
    pub first_ts_ns: u64,
    /// The first frame numbers that show it (1-based, as Wireshark numbers them).
    pub frames: Vec<u64>,
    /// How many frames show it.
    pub count: u64,
}

/// The findings of one audit, in the order they were first seen.
#[derive(Debug, Default)]
pub struct Findings {
    list: Vec<Finding>,
    index: HashMap<(&'static str, Option<usize>), usize, crate::fnv::FnvBuild>,
}

impl Findings {
    /// Records one occurrence of `code` on stream `stream` (its index and uid) in frame
    /// `frame`; `detail` is built only for the first occurrence.
    pub fn add(
        &mut self,
        code: &'static str,
        severity: Severity,
        stream: Option<(usize, &str)>,
        frame: u64,
        ts_ns: u64,
        detail: impl FnOnce() -> String,
    ) {
        let key = (code, stream.map(|s| s.0));
        match self.index.get(&key) {
            Some(&i) => {
                let f = &mut self.list[i];
                f.count += 1;
                if f.frames.len() < MAX_FRAMES {
                    f.frames.push(frame);
                }
            }
            None => {
                self.index.insert(key, self.list.len());
                self.list.push(Finding {
                    code: code.to_string(),
                    severity,
                    stream: stream.map(|s| s.1.to_string()),
                    detail: detail(),
                    first_ts_ns: ts_ns,
                    frames: vec![frame],
                    count: 1,
                });
            }
        }
    }

    /// The findings, in the order first seen.
    pub fn into_vec(self) -> Vec<Finding> {
        self.list
    }

    /// The findings so far.
    pub fn as_slice(&self) -> &[Finding] {
        &self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_merge_per_code_and_stream_and_frames_are_bounded() {
        let mut f = Findings::default();
        for n in 1..=100u64 {
            f.add("x", Severity::Low, Some((0, "S1")), n, n, || "d".into());
        }
        f.add("x", Severity::Low, Some((1, "S2")), 7, 7, || "d".into());
        f.add("y", Severity::High, None, 3, 3, || "d".into());
        let v = f.into_vec();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].count, 100);
        assert_eq!(v[0].frames.len(), MAX_FRAMES);
        assert_eq!(v[0].frames[..3], [1, 2, 3]);
        assert_eq!(v[1].frames, vec![7]);
        assert_eq!(v[2].stream, None);
    }

    #[test]
    fn exit_code_follows_the_worst_severity() {
        assert_eq!(Severity::exit_code(None), 0);
        assert_eq!(Severity::exit_code(Some(Severity::Info)), 0);
        assert_eq!(Severity::exit_code(Some(Severity::Low)), 3);
        assert_eq!(Severity::exit_code(Some(Severity::Medium)), 4);
        assert_eq!(Severity::exit_code(Some(Severity::High)), 5);
        assert!(Severity::High > Severity::Medium && Severity::Low > Severity::Info);
    }
}
