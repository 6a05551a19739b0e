//! The peers' event log: one JSON object per line, CLOCK_MONOTONIC nanoseconds.
//!
//! ```json
//! {"event":"TLS_UP","t_ns":123456789,"conn":1,"version":"TLS 1.2","suite":"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}
//! {"event":"RT_START","t_ns":123999999,"conn":1,"seq":7,"n":7}
//! ```
//!
//! A [`Sink`] writes to a file (buffered; flushed at every connection end and on exit), keeps
//! the events in memory (tests and `gander bench mms`), or both. Writing is cheap (a format into
//! a buffer), so it does not disturb the intervals it records.
use serde::Serialize;
use serde_json::{Map, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Event names. See docs/mms-peers.md for where each is stamped.
pub mod name {
    /// Server: listening (printed on stdout with the address, also logged).
    pub const READY: &str = "READY";
    /// Client: about to connect (start of HT).
    pub const HT_START: &str = "HT_START";
    /// Client: TCP connected.
    pub const TCP_UP: &str = "TCP_UP";
    /// TLS handshake done (with version, suite and whether resumed).
    pub const TLS_UP: &str = "TLS_UP";
    /// COTP CC received (client) or queued (server).
    pub const COTP_UP: &str = "COTP_UP";
    /// Client: the initiate response was read and decoded (end of HT).
    pub const HT_END: &str = "HT_END";
    /// Server: MMS association accepted.
    pub const ASSOCIATED: &str = "ASSOCIATED";
    /// Write of RptEna answered (client) / first report scheduled (server).
    pub const RCB_ENABLED: &str = "RCB_ENABLED";
    /// Server: values updated, just before the report is built (start of RT).
    pub const RT_START: &str = "RT_START";
    /// Server: the write of the report's TPKT to the (TLS) stream begins.
    pub const WRITE_START: &str = "WRITE_START";
    /// Server: that write returned (encryption and send done).
    pub const WRITE_END: &str = "WRITE_END";
    /// Client: the socket became readable (or the TLS library had buffered data).
    pub const READ_START: &str = "READ_START";
    /// Client: the (TLS) read returned the plaintext.
    pub const READ_END: &str = "READ_END";
    /// One timed Read of a data set, `rtt_ns` its round trip (client side; external targets).
    pub const READ_RTT: &str = "READ_RTT";
    /// Client: the report was decoded (end of RT).
    pub const RT_END: &str = "RT_END";
    /// Client `[control]`: one phase sample of a control operation, `phase` (select, operate,
    /// termination, cancel), `n` and its duration `ns`.
    pub const CONTROL: &str = "CONTROL";
    /// MMS association released.
    pub const RELEASED: &str = "RELEASED";
    /// Connection closed.
    pub const CLOSED: &str = "CLOSED";
    /// A failure, with its kind and message.
    pub const ERROR: &str = "ERROR";
}

/// One event.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Event {
    /// Event name (see [`name`]).
    pub event: &'static str,
    /// CLOCK_MONOTONIC, ns.
    pub t_ns: u64,
    /// Connection number.
    pub conn: u64,
    /// The report's SqNum, for report events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Details: negotiated version/suite, error kind and text, addresses, report index `n`.
    #[serde(flatten)]
    pub details: Map<String, Value>,
}

impl Event {
    /// An event without details.
    pub fn new(event: &'static str, t_ns: u64, conn: u64) -> Self {
        Event {
            event,
            t_ns,
            conn,
            seq: None,
            details: Map::new(),
        }
    }
    /// Adds the report's SqNum.
    pub fn seq(mut self, seq: u64) -> Self {
        self.seq = Some(seq);
        self
    }
    /// Adds a detail.
    pub fn with(mut self, key: &str, v: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), v.into());
        self
    }
    /// A detail as a string, if present.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.details.get(key).and_then(Value::as_str)
    }
    /// A detail as an integer, if present.
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.details.get(key).and_then(Value::as_u64)
    }
}

#[derive(Default)]
struct Inner {
    file: Option<BufWriter<File>>,
    memory: Option<Vec<Event>>,
    failed: bool,
}

/// Where events go. Cloning shares the destination (threads of one peer).
#[derive(Clone, Default)]
pub struct Sink(Arc<Mutex<Inner>>);

impl Sink {
    /// Discards everything.
    pub fn null() -> Self {
        Sink::default()
    }
    /// Appends JSON lines to `path` (truncated first).
    pub fn file(path: &Path) -> std::io::Result<Self> {
        let f = File::create(path)?;
        Ok(Sink(Arc::new(Mutex::new(Inner {
            file: Some(BufWriter::with_capacity(1 << 16, f)),
            ..Inner::default()
        }))))
    }
    /// Keeps events in memory as well (read them with [`Sink::take`]).
    pub fn keep_in_memory(self) -> Self {
        if let Ok(mut g) = self.0.lock() {
            g.memory.get_or_insert_with(Vec::new);
        }
        self
    }
    /// In memory only.
    pub fn memory() -> Self {
        Sink::default().keep_in_memory()
    }
    /// Appends an event (a failed write is remembered, not returned).
    pub fn emit(&self, e: Event) {
        let Ok(mut g) = self.0.lock() else { return };
        if let Some(f) = g.file.as_mut() {
            let ok = serde_json::to_writer(&mut *f, &e).is_ok() && f.write_all(b"\n").is_ok();
            if !ok {
                g.failed = true;
            }
        }
        if let Some(m) = g.memory.as_mut() {
            m.push(e);
        }
    }
    /// Flushes the event log file.
    pub fn flush(&self) {
        if let Ok(mut g) = self.0.lock() {
            if let Some(f) = g.file.as_mut() {
                if f.flush().is_err() {
                    g.failed = true;
                }
            }
        }
    }
    /// Whether writing the log failed at some point.
    pub fn failed(&self) -> bool {
        self.0.lock().map(|g| g.failed).unwrap_or(true)
    }
    /// The events kept in memory so far (and forgets them).
    pub fn take(&self) -> Vec<Event> {
        self.0
            .lock()
            .ok()
            .and_then(|mut g| g.memory.as_mut().map(std::mem::take))
            .unwrap_or_default()
    }
    /// A copy of the events kept in memory so far.
    pub fn snapshot(&self) -> Vec<Event> {
        self.0
            .lock()
            .ok()
            .and_then(|g| g.memory.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn json_line_shape() {
        let e = Event::new(name::RT_START, 5, 1).seq(7).with("n", 7u64);
        let s = serde_json::to_string(&e).unwrap();
        assert_eq!(s, r#"{"event":"RT_START","t_ns":5,"conn":1,"seq":7,"n":7}"#);
    }
}
