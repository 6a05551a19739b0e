//! One device of a sweep under its time cap: the reachability check, the probe (with the TLS
//! survey) and, on a TLS port, the scan ([`super::scan`]), one after the other, so the device
//! never has more than one session of ours at a time.
//!
//! The probe and the scan run in a thread of their own that hands over each stage's result as
//! it ends. When the cap runs out, the row is built from the stages that ended, marked timed
//! out and naming the stage still running: a slow device is reported with what was learned of
//! it so far. The thread is not killed (a blocking socket cannot be interrupted safely); the
//! worker waits for it before it takes the next device, so the global cap and one session per
//! IED hold even then, and the probe and the scan end by their own step timeouts and
//! connection cap.
use super::declared::Declared;
use super::reach;
use super::row::{self, Row, RowOutcome, RowTls};
use super::scan::RowScan;
use super::targets::Target;
use super::FleetOptions;
use crate::{ProbeError, ProbeReport};
use gander_tls::scan::{ScanError, ScanReport};
use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Instant;

/// What the device's thread hands over, in this order.
enum Stage {
    /// The probe ended (with its survey).
    Probe(Box<Result<ProbeReport, ProbeError>>),
    /// The scan ended.
    Scan(Box<Result<ScanReport, ScanError>>),
}

/// The thread of a device still running after its cap: wait on it before the next device.
pub(super) type Lingering = Option<mpsc::Receiver<StageMsg>>;

/// A stage's message (opaque outside this module).
pub(super) struct StageMsg(Stage);

/// What ended before the cap (or the end).
#[derive(Default)]
struct Gathered {
    probe: Option<Result<ProbeReport, ProbeError>>,
    scan: Option<Result<ScanReport, ScanError>>,
}

/// Probes one target with a cap: the reachability check, then the probe and the scan in their
/// own thread.
pub(super) fn probe_one(
    t: &Target,
    declared: Option<&Declared>,
    o: &FleetOptions,
) -> (Row, Lingering) {
    let started = Instant::now();
    let ep = match reach::find(t, o.tls.is_some(), o.probe.timeout) {
        Ok(e) => e,
        Err(n) => {
            let mut r = Row::empty(t, n.tried, RowOutcome::Unreachable, n.detail);
            r.duration_ms = started.elapsed().as_millis() as u64;
            return (r, None);
        }
    };
    let mut po = o.probe.clone();
    po.target = ep.addr.to_string();
    po.tls = if ep.tls { o.tls.clone() } else { None };
    // A TLS port without a client profile: no MMS probe, but the scan needs no credentials.
    let run_probe = !ep.tls || po.tls.is_some();
    let scan_opts = o.scan.clone().filter(|_| ep.tls).map(|mut so| {
        so.server_name = gander_tls::scan::server_name_for(
            &t.address,
            o.tls.as_ref().and_then(|p| p.server_name.as_deref()),
        );
        so
    });
    let endpoint = po.target.clone();
    let addr: SocketAddr = ep.addr;
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(format!("probe {}", t.name))
        .spawn(move || {
            if run_probe {
                let r = crate::probe(&po);
                if tx.send(StageMsg(Stage::Probe(Box::new(r)))).is_err() {
                    return;
                }
            }
            if let Some(so) = scan_opts {
                let r = gander_tls::scan::scan(addr, &so);
                let _ = tx.send(StageMsg(Stage::Scan(Box::new(r))));
            }
        });
    if let Err(e) = spawned {
        let r = Row::empty(
            t,
            endpoint,
            RowOutcome::NotProbed,
            format!("no thread: {e}"),
        );
        return (r, None);
    }
    let deadline = started + o.device_cap;
    let mut got = Gathered::default();
    let mut finished = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(StageMsg(Stage::Probe(r))) => got.probe = Some(*r),
            Ok(StageMsg(Stage::Scan(r))) => got.scan = Some(*r),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                finished = true;
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => break,
        }
    }
    let running = (!finished).then(|| {
        if run_probe && got.probe.is_none() {
            "the probe"
        } else {
            "the TLS scan"
        }
    });
    let mut row = assemble(t, endpoint, declared, run_probe, got);
    if let Some(stage) = running {
        row.outcome = RowOutcome::TimedOut;
        let msg = format!(
            "{stage} was still running at the device cap of {} s{}",
            o.device_cap.as_secs_f64(),
            if row.reachable || row.tls.is_some() {
                " (what ended before is kept)"
            } else {
                ""
            }
        );
        if stage == "the TLS scan" {
            row.tls.get_or_insert_with(RowTls::default).scan_error = Some(msg.clone());
        }
        row.error = Some(match row.error.take() {
            Some(e) if row.reachable => format!("{msg}; {e}"),
            _ => msg,
        });
    }
    row.duration_ms = started.elapsed().as_millis() as u64;
    (row, (!finished).then_some(rx))
}

/// Waits for a lingering device thread to end (its sender is dropped when it returns).
pub(super) fn wait(l: Lingering) {
    if let Some(rx) = l {
        while rx.recv().is_ok() {}
    }
}

/// The row of what ended.
fn assemble(
    t: &Target,
    endpoint: String,
    declared: Option<&Declared>,
    run_probe: bool,
    got: Gathered,
) -> Row {
    let mut scan = got.scan;
    let mut row = match got.probe {
        Some(Ok(mut rep)) => {
            // The scan joins the survey (its verdicts and the client-certificate mode).
            if let (Some(survey), Some(Ok(_))) = (
                rep.tls.as_mut().and_then(|t| t.survey.as_mut()),
                scan.as_ref(),
            ) {
                if let Some(Ok(s)) = scan.take() {
                    gander_tls::survey::attach_scan(survey, s);
                }
            }
            Row::from_probe(t, &rep, declared)
        }
        Some(Err(e)) => Row::empty(
            t,
            endpoint,
            if e.is_usage() {
                RowOutcome::NotProbed
            } else {
                RowOutcome::Unreachable
            },
            e.chain(),
        ),
        None if !run_probe => Row::empty(
            t,
            endpoint,
            RowOutcome::NotProbed,
            "the port answers as TLS (no COTP connection confirm) and no --tls was given: \
             scanned only"
                .into(),
        ),
        None => Row::empty(t, endpoint, RowOutcome::TimedOut, String::new()),
    };
    match scan {
        Some(Ok(s)) => {
            let v = serde_json::to_value(&s).unwrap_or_default();
            let tls = row.tls.get_or_insert_with(RowTls::default);
            tls.scan = RowScan::from_json(&v);
            tls.verdicts.extend(row::tls_of(&v).verdicts);
        }
        Some(Err(e)) => {
            row.tls.get_or_insert_with(RowTls::default).scan_error = Some(e.to_string());
        }
        None => {}
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            name: "IED1".into(),
            ied: Some("IED1".into()),
            access_point: None,
            address: "127.0.0.1".into(),
            port: Some(3782),
            tls: Some(true),
        }
    }

    fn scan_report() -> ScanReport {
        ScanReport {
            sslv2: gander_tls::scan::enumerate::Sslv2Scan::default(),
            versions: vec![],
            weaknesses: vec![],
            robot: None,
            early_data: None,
            verdicts: vec![gander_tls::survey::Verdict {
                id: "scan-sslv2",
                level: gander_tls::survey::Level::Pass,
                requirement: "no SSL 2.0",
                source: "RFC 6176",
                detail: "refused".into(),
            }],
            connections: 2,
            capped: false,
            duration_s: 0.1,
        }
    }

    #[test]
    fn a_scan_without_a_probe_still_fills_the_tls_posture() {
        let got = Gathered {
            probe: None,
            scan: Some(Ok(scan_report())),
        };
        let r = assemble(&target(), "127.0.0.1:3782".into(), None, false, got);
        assert_eq!(r.outcome, RowOutcome::NotProbed);
        let t = r.tls.unwrap();
        assert_eq!(t.scan.as_ref().unwrap().connections, 2);
        assert_eq!(t.verdicts.len(), 1);
        assert_eq!(
            (t.verdicts[0].id.as_str(), t.count("pass")),
            ("scan-sslv2", 1)
        );
    }

    #[test]
    fn a_failed_scan_is_said() {
        let got = Gathered {
            probe: None,
            scan: Some(Err(ScanError::Cap(0))),
        };
        let r = assemble(&target(), "x".into(), None, false, got);
        let t = r.tls.unwrap();
        assert!(t.scan.is_none());
        assert!(t.scan_error.unwrap().contains("cap"));
    }

    /// A "TLS port" (it closes on the COTP connection request) that then accepts every
    /// connection and never answers a ClientHello: the scan waits out each answer.
    fn silent_tls_port() -> u16 {
        use std::io::Read;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for (i, s) in l.incoming().enumerate() {
                let Ok(mut s) = s else { return };
                if i == 0 {
                    let mut b = [0u8; 64];
                    let _ = s.read(&mut b);
                    continue; // dropped: closed, as a TLS server closes on a COTP CR
                }
                held.push(s);
            }
        });
        port
    }

    #[test]
    fn a_scan_past_the_cap_is_timed_out_and_says_so() {
        let mut t = target();
        t.port = Some(silent_tls_port());
        let dir = std::env::temp_dir();
        let mut o = FleetOptions::new(dir, "test".into());
        o.device_cap = std::time::Duration::from_millis(600);
        o.probe.timeout = std::time::Duration::from_millis(300);
        o.scan = Some(super::super::scan::gentle(std::time::Duration::from_secs(
            2,
        )));
        let begun = Instant::now();
        let (row, lingering) = probe_one(&t, None, &o);
        assert!(begun.elapsed() < std::time::Duration::from_millis(1500));
        assert!(lingering.is_some());
        assert_eq!(row.outcome, RowOutcome::TimedOut, "{row:?}");
        let e = row.error.as_deref().unwrap();
        assert!(e.starts_with("the TLS scan was still running"), "{e}");
        let tls = row.tls.as_ref().unwrap();
        assert!(tls.scan.is_none());
        assert!(tls.scan_error.as_deref().unwrap().contains("device cap"));
    }
}
