//! The reader of `Name = value` vector files, shared by the known-answer tests and the golden
//! frames: records separated by blank lines, `#` comments, CAVP-style `[Name = value]` section
//! headers.

// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;

/// One record of a `Name = value` vector file, with the `[Name = value]` section headers in
/// force where it starts (CAVP `.rsp` style). A line that is a bare word (CAVP's `FAIL`) is a
/// field with an empty value.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// Source file and 1-based line where the record starts, for messages.
    pub origin: String,
    pub headers: BTreeMap<String, String>,
    pub fields: BTreeMap<String, String>,
}

impl Record {
    pub(crate) fn has(&self, name: &str) -> bool {
        self.fields.contains_key(name)
    }

    pub(crate) fn field(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .unwrap_or_else(|| panic!("{}: no field {name}", self.origin))
    }

    pub(crate) fn hex(&self, name: &str) -> Vec<u8> {
        hex::decode(self.field(name))
            .unwrap_or_else(|e| panic!("{}: field {name} is not hex: {e}", self.origin))
    }

    pub(crate) fn header_num(&self, name: &str) -> usize {
        let v = self
            .headers
            .get(name)
            .unwrap_or_else(|| panic!("{}: no [{name}] header", self.origin));
        v.parse()
            .unwrap_or_else(|_| panic!("{}: [{name} = {v}] is not a number", self.origin))
    }
}

/// Parses `text` (from `source`) into records separated by blank lines.
pub(crate) fn parse_records(source: &str, text: &str) -> Vec<Record> {
    let mut out = Vec::new();
    let mut headers = BTreeMap::new();
    let mut cur: Option<Record> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            out.extend(cur.take());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if let Some(h) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.extend(cur.take());
            let (k, v) = h.split_once('=').unwrap_or((h, ""));
            headers.insert(k.trim().to_string(), v.trim().to_string());
            continue;
        }
        let rec = cur.get_or_insert_with(|| Record {
            origin: format!("{source}:{}", i + 1),
            headers: headers.clone(),
            fields: BTreeMap::new(),
        });
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        rec.fields
            .insert(k.trim().to_string(), v.trim().to_string());
    }
    out.extend(cur);
    out
}
