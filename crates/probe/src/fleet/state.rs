//! The resume state of a sweep: `fleet-state.jsonl` in `--out`, one finished row per line,
//! appended and flushed to disk as each device finishes. A sweep that is interrupted (SIGINT,
//! a kill, a power cut) leaves every finished row whole; at most the last line is torn, and a
//! torn last line is ignored on reading. The next sweep with the same `--out` skips the
//! devices already in the file.
use super::error::FleetError;
use super::row::Row;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file's name in `--out`.
pub const STATE_FILE: &str = "fleet-state.jsonl";

/// The open state file.
pub struct State {
    path: PathBuf,
    file: std::fs::File,
}

/// Parses the state file's text: every whole line is a row; a last line without its newline
/// that does not parse is a torn write and dropped; any other bad line is an error.
pub fn parse(path: &str, text: &str) -> Result<Vec<Row>, FleetError> {
    let mut rows = Vec::new();
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Row>(line) {
            Ok(r) => rows.push(r),
            Err(_) if i + 1 == lines.len() && !complete => break,
            Err(e) => {
                return Err(FleetError::State {
                    path: path.into(),
                    line: i + 1,
                    detail: e.to_string(),
                })
            }
        }
    }
    Ok(rows)
}

/// One row as its line (JSON, no newline inside, newline at the end).
pub fn line(r: &Row) -> String {
    let mut s = serde_json::to_string(r).unwrap_or_default();
    s.push('\n');
    s
}

impl State {
    /// Opens (creating) the state file in `dir` and returns the rows already there. A torn
    /// last line is cut off the file, so that the next append starts on a line of its own.
    pub fn open(dir: &Path) -> Result<(State, Vec<Row>), FleetError> {
        let path = dir.join(STATE_FILE);
        let io = |source| FleetError::Io {
            path: path.display().to_string(),
            source,
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io(e)),
        };
        let rows = parse(&path.display().to_string(), &text)?;
        if !text.is_empty() && !text.ends_with('\n') {
            let keep = text.rfind('\n').map_or(0, |i| i + 1);
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(io)?;
            f.set_len(keep as u64).map_err(io)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        Ok((State { path, file }, rows))
    }

    /// Appends one finished row in one write and flushes it to the disk.
    pub fn append(&mut self, r: &Row) -> Result<(), FleetError> {
        let io = |source| FleetError::Io {
            path: self.path.display().to_string(),
            source,
        };
        self.file.write_all(line(r).as_bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::super::row::RowOutcome;
    use super::super::targets::Target;
    use super::*;
    use proptest::prelude::*;

    fn row(name: &str, err: &str) -> Row {
        let t = Target {
            name: name.into(),
            ied: Some(name.into()),
            access_point: None,
            address: "10.0.0.1".into(),
            port: None,
            tls: None,
        };
        Row::empty(
            &t,
            "10.0.0.1:102".into(),
            RowOutcome::Unreachable,
            err.into(),
        )
    }

    proptest! {
        /// Every row written reads back; a torn tail of the next line is dropped.
        #[test]
        fn rows_round_trip_and_a_torn_tail_is_dropped(
            names in proptest::collection::vec("[A-Za-z0-9_/\"\\\\ é]{1,12}", 1..6),
            err in ".{0,40}",
            cut in 1usize..40,
        ) {
            let rows: Vec<Row> = names.iter().map(|n| row(n, &err)).collect();
            let text: String = rows.iter().map(line).collect();
            prop_assert_eq!(parse("s", &text).unwrap(), rows.clone());
            let next = line(&row("next", &err));
            let cut = cut.min(next.len() - 1);
            let torn = format!("{text}{}", &next[..next.floor_char_boundary(cut)]);
            prop_assert_eq!(parse("s", &torn).unwrap(), rows);
        }
    }

    #[test]
    fn a_damaged_middle_line_is_an_error_and_the_file_resumes() {
        let text = format!("{}garbage\n{}", line(&row("a", "")), line(&row("b", "")));
        assert!(matches!(
            parse("s", &text),
            Err(FleetError::State { line: 2, .. })
        ));
        let dir = std::env::temp_dir().join(format!("gander-fleet-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (mut s, rows) = State::open(&dir).unwrap();
        assert!(rows.is_empty());
        s.append(&row("a", "x")).unwrap();
        drop(s);
        // A torn write after "a".
        let p = dir.join(STATE_FILE);
        let mut t = std::fs::read_to_string(&p).unwrap();
        t.push_str("{\"name\":\"b");
        std::fs::write(&p, t).unwrap();
        let (mut s, rows) = State::open(&dir).unwrap();
        assert_eq!(rows.len(), 1);
        s.append(&row("c", "y")).unwrap();
        drop(s);
        let (_, rows) = State::open(&dir).unwrap();
        assert_eq!(
            rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["a", "c"]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
