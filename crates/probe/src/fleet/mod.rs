//! `gander probe --scd FILE` / `--targets FILE`: one sweep of a substation. Every IED access
//! point with an IP address in the SCD's Communication section (or every target of a targets
//! file) is probed with the gentle quick probe ([`crate::ProbeOptions::quick`], the TLS survey
//! in its quick mode), a bounded number at a time:
//!
//! - a global cap on devices probed at once (`concurrency`), and one session at a time per IED
//!   (all access points of one IED are probed one after the other by the same worker);
//! - a time cap per device: a device still being probed or scanned at the cap is recorded as
//!   timed out at once, with what its finished stages learned ([`device`]); its worker waits
//!   for it to end (by its own step timeouts) before the next device, so the caps on sessions
//!   hold;
//! - on a TLS port, after the probe, the TLS scan ([`scan`]): every IANA suite per version, the
//!   groups, SSL 2.0/3.0 and the known weaknesses, sequential, paced and capped;
//! - progress: one line per device as it ends;
//! - resume: each finished row is appended to `fleet-state.jsonl` in `--out` ([`state`]); a
//!   sweep started again with the same `--out` skips the devices already there. SIGINT stops
//!   the sweep between devices ([`interrupt`]).
//!
//! The report ([`report`]) has a row per device ([`row`]): reachable, TLS posture (the survey's
//! and the scan's facts and verdicts), the model found against the model the SCD declares ([`declared`]), HT and
//! read RTT, and Identify's vendor, model and revision. [`diff`] compares two sweeps.

pub mod declared;
mod device;
pub mod diff;
pub mod error;
pub mod interrupt;
pub mod reach;
pub mod report;
pub mod row;
pub mod scan;
pub mod state;
pub mod targets;

pub use error::FleetError;

use crate::ProbeOptions;
use declared::Declared;
use gander_tls::TlsProfile;
use report::{FleetReport, FleetSettings, FLEET_SCHEMA};
use row::Row;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use targets::Target;

/// How the sweep runs.
#[derive(Debug, Clone)]
pub struct FleetOptions {
    /// Devices probed at once, at most (each device: one session at a time).
    pub concurrency: usize,
    /// Time cap per device (reachability check, probe and TLS survey).
    pub device_cap: Duration,
    /// The probe of each device; its `target` and `tls` are set per device.
    pub probe: ProbeOptions,
    /// The client TLS settings, for devices that speak TLS.
    pub tls: Option<TlsProfile>,
    /// The TLS scan of each device on a TLS port ([`scan::gentle`]); `None`: no scan.
    pub scan: Option<gander_tls::scan::ScanOptions>,
    /// `--out`: the state file and the reports.
    pub out: PathBuf,
    /// The SCD or targets file, as named in the report.
    pub source: String,
}

impl FleetOptions {
    /// The defaults: 8 devices at once, 120 s per device, the quick probe with a 3 s step
    /// timeout, 3 associations and 5 reads per device, and on a TLS port the gentle scan
    /// ([`scan::gentle`]: one connection at a time, paced, at most 300).
    pub fn new(out: PathBuf, source: String) -> Self {
        let mut probe = ProbeOptions::new(String::new()).quick();
        probe.timeout = Duration::from_secs(3);
        probe.associations = 3;
        probe.reads = 5;
        FleetOptions {
            concurrency: 8,
            device_cap: Duration::from_secs(120),
            probe,
            tls: None,
            scan: Some(scan::gentle(Duration::from_secs(3))),
            out,
            source,
        }
    }
}

/// What the sweep tells its caller as it goes.
#[derive(Debug, Clone)]
pub enum Progress<'a> {
    /// A device is taken from the state file, not probed again.
    Resumed(&'a Row),
    /// A device the state file has as unreachable: probed again (what an earlier run could not
    /// reach may be back: a cable, a route, a device switched on), its new row replacing the
    /// old one.
    Retried(&'a Row),
    /// A device's probe ended; `done` of `total`.
    Done {
        /// The row.
        row: &'a Row,
        /// Devices finished (including resumed).
        done: usize,
        /// All devices.
        total: usize,
    },
}

/// The work of one IED: its targets, in order.
struct Task {
    targets: Vec<Target>,
}

/// Sweeps `targets`. `declared` holds the SCD's model per target name. Rows already in the
/// state file of `opts.out` are kept and not probed again.
pub fn sweep(
    targets: &[Target],
    declared: &BTreeMap<String, Declared>,
    refused_ieds: Vec<String>,
    opts: &FleetOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<FleetReport, FleetError> {
    if opts.concurrency == 0 || opts.concurrency > 256 {
        return Err(FleetError::InvalidOption {
            what: "--concurrency",
            detail: "1 to 256".into(),
        });
    }
    if opts.device_cap.is_zero() {
        return Err(FleetError::InvalidOption {
            what: "--device-cap-s",
            detail: "must be at least 1".into(),
        });
    }
    std::fs::create_dir_all(&opts.out).map_err(|source| FleetError::Io {
        path: opts.out.display().to_string(),
        source,
    })?;
    let begun = Instant::now();
    let now_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (mut st, earlier) = state::State::open(&opts.out)?;
    let started_unix = std::fs::read_to_string(opts.out.join(STARTED_FILE))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(now_unix);
    if earlier.is_empty() {
        let _ = std::fs::write(opts.out.join(STARTED_FILE), format!("{now_unix}\n"));
    }
    let mut done: BTreeMap<String, Row> = BTreeMap::new();
    for r in earlier {
        if targets.iter().any(|t| t.name == r.name) {
            done.insert(r.name.clone(), r);
        }
    }
    let mut retried: BTreeMap<String, Row> = BTreeMap::new();
    done.retain(|name, r| {
        let again = r.outcome == row::RowOutcome::Unreachable;
        if again {
            retried.insert(name.clone(), r.clone());
        }
        !again
    });
    let resumed = done.len();
    for t in targets {
        if let Some(r) = done.get(&t.name) {
            progress(Progress::Resumed(r));
        } else if let Some(r) = retried.get(&t.name) {
            progress(Progress::Retried(r));
        }
    }
    // One task per device (targets sharing an IED or an address), its targets in file order.
    let todo: Vec<&Target> = targets
        .iter()
        .filter(|t| !done.contains_key(&t.name))
        .collect();
    let tasks: Vec<Task> = targets::devices(&todo)
        .into_iter()
        .map(|g| Task {
            targets: g.into_iter().map(|i| todo[i].clone()).collect(),
        })
        .collect();
    let queue = Arc::new(Mutex::new(tasks.into_iter().collect::<VecDeque<_>>()));
    let total = targets.len();
    let (tx, rx) = mpsc::channel::<Row>();
    let mut write_error = None;
    std::thread::scope(|sc| {
        for _ in 0..opts.concurrency {
            let tx = tx.clone();
            let queue = Arc::clone(&queue);
            sc.spawn(move || loop {
                if interrupt::stopping() {
                    return;
                }
                let task = match queue.lock() {
                    Ok(mut q) => q.pop_front(),
                    Err(_) => None,
                };
                let Some(task) = task else { return };
                for t in &task.targets {
                    if interrupt::stopping() {
                        return;
                    }
                    let (row, lingering) = device::probe_one(t, declared.get(&t.name), opts);
                    if tx.send(row).is_err() {
                        return;
                    }
                    device::wait(lingering);
                }
            });
        }
        drop(tx);
        for row in rx {
            if let Err(e) = st.append(&row) {
                write_error.get_or_insert(e);
            }
            progress(Progress::Done {
                row: &row,
                done: done.len() + 1,
                total,
            });
            done.insert(row.name.clone(), row);
        }
    });
    if let Some(e) = write_error {
        return Err(e);
    }
    let mut rows = Vec::new();
    let mut pending = Vec::new();
    for t in targets {
        match done.remove(&t.name) {
            Some(r) => rows.push(r),
            None => pending.push(t.name.clone()),
        }
    }
    Ok(FleetReport {
        fleet_schema: FLEET_SCHEMA,
        source: opts.source.clone(),
        started_unix,
        duration_ms: begun.elapsed().as_millis() as u64,
        interrupted: !pending.is_empty(),
        resumed,
        pending,
        settings: FleetSettings {
            concurrency: opts.concurrency,
            device_cap_ms: opts.device_cap.as_millis() as u64,
            timeout_ms: opts.probe.timeout.as_millis() as u64,
            tls: opts.tls.is_some(),
            scan_cap: opts.scan.as_ref().map(|s| s.max_connections),
        },
        refused_ieds,
        rows,
    })
}

/// The start time of a sweep across its resumed parts, in `--out`.
pub const STARTED_FILE: &str = "fleet-started";

#[cfg(test)]
mod tests {
    use super::row::RowOutcome;
    use super::*;
    use std::io::{Read, Write};

    /// A "device" that answers the reachability check's COTP CR with a CC and then keeps every
    /// later connection open without a word: the probe waits out its step timeout.
    fn silent_after_cc() -> (u16, std::thread::JoinHandle<()>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let mut held = Vec::new();
            for (i, s) in l.incoming().take(2).enumerate() {
                let Ok(mut s) = s else { return };
                if i == 0 {
                    let mut b = [0u8; 64];
                    let _ = s.read(&mut b);
                    let _ = s.write_all(&[3, 0, 0, 11, 6, 0xD0, 0, 1, 0, 1, 0]);
                }
                held.push(s);
            }
            std::thread::sleep(Duration::from_secs(3));
        });
        (port, h)
    }

    #[test]
    fn a_device_past_its_cap_is_timed_out_and_recorded() {
        let (port, h) = silent_after_cc();
        let dir = std::env::temp_dir().join(format!("gander-fleet-cap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut o = FleetOptions::new(dir.clone(), "test".into());
        o.device_cap = Duration::from_millis(300);
        o.probe.timeout = Duration::from_millis(1500);
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let t = |name: &str, port| Target {
            name: name.into(),
            ied: Some(name.into()),
            access_point: None,
            address: "127.0.0.1".into(),
            port: Some(port),
            tls: None,
        };
        let targets = [t("slow", port), t("gone", closed)];
        let mut seen = Vec::new();
        let begun = Instant::now();
        let r = sweep(&targets, &BTreeMap::new(), vec![], &o, &mut |p| {
            if let Progress::Done { row, .. } = p {
                seen.push((row.name.clone(), row.outcome, row.duration_ms));
            }
        })
        .unwrap();
        assert!(begun.elapsed() < Duration::from_secs(5));
        assert_eq!(r.rows.len(), 2);
        assert_eq!(r.rows[0].outcome, RowOutcome::TimedOut, "{:?}", r.rows[0]);
        assert!(r.rows[0].duration_ms < 1000, "{:?}", r.rows[0]);
        assert_eq!(r.rows[1].outcome, RowOutcome::Unreachable);
        assert!(!r.interrupted && r.pending.is_empty());
        assert_eq!(seen.len(), 2);
        // Both rows are in the state file; a second sweep takes the timed-out one from it and
        // tries the unreachable one again.
        let mut events = Vec::new();
        let again = sweep(&targets, &BTreeMap::new(), vec![], &o, &mut |p| {
            events.push(match p {
                Progress::Resumed(r) => format!("resumed {}", r.name),
                Progress::Retried(r) => format!("retried {}", r.name),
                Progress::Done { row, .. } => format!("done {}", row.name),
            });
        })
        .unwrap();
        assert_eq!(events, ["resumed slow", "retried gone", "done gone"]);
        assert_eq!(again.resumed, 1);
        assert_eq!(again.rows[0], r.rows[0]);
        assert_eq!(again.rows[1].outcome, RowOutcome::Unreachable);
        let _ = std::fs::remove_dir_all(&dir);
        h.join().unwrap();
    }
}
