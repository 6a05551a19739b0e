//! `gander bench audit --live`: `gander audit --interface` under the process-bus load of
//! `gander bench gateway --profile process-bus` (8 SV streams at 4800 frames/s, the eight
//! frames of one sample instant back to back, plus GOOSE every 4 ms), with the audit's thread
//! pinned to one core. The target: no frame dropped. Each run prints the frames sent,
//! the frames the audit saw (IEC 61850 frames of the publishers' streams), the kernel's drops
//! on the capture ring (`PACKET_STATISTICS`) and the audit thread's CPU time per frame.
//!
//! The traffic crosses the lab's direct path (IED `ied1`, the switch, the subscriber's
//! `sub0`); the audit reads `sub0` in the subscriber's namespace through the gateway's ring
//! (`gander-audit-live`), the sender runs on the other core.

use crate::gateway::{machine_line, GatewayBenchError, Result};
use crate::process_bus::{self, STREAMS, SV_RATE};
use gander_audit::{AuditOptions, Auditor};
use gander_audit_live::{LiveOptions, LiveReport};
use gander_lab::{addr, Lab, Mode, Role};
use gander_measure::machine::Machine;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One run.
#[derive(Clone, Debug, Serialize)]
pub struct LiveRun {
    /// Frames sent (SV and GOOSE).
    pub sent: u64,
    /// Frames of the publishers' streams in the audit's inventory.
    pub seen: u64,
    /// Frames read from the ring (any kind).
    pub read: u64,
    /// Frames the kernel dropped on the capture socket.
    pub kernel_drops: u64,
    /// Streams in the inventory.
    pub streams: usize,
    /// CPU time of the audit thread per frame read, ns.
    pub cpu_ns_per_frame: f64,
    /// The audit thread's CPU time over the run (setup and the idle wait before the traffic
    /// included) per second of traffic: the share of one core the load costs it.
    pub core_share: f64,
}

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct LiveBenchReport {
    /// Seconds of traffic per run.
    pub seconds: f64,
    /// Offered load, frames per second.
    pub offered_fps: f64,
    /// The runs, in order.
    pub runs: Vec<LiveRun>,
    /// Every run saw every frame sent with no kernel drop.
    pub targets_met: bool,
}

fn one_run(
    lab: &Lab,
    secs: f64,
    audit_cpu: Option<usize>,
    send_cpu: Option<usize>,
) -> Result<LiveRun> {
    let ticks = (secs * SV_RATE as f64) as usize;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let (ns, s2) = (lab.ns(Role::Sub), stop.clone());
    let reader = std::thread::spawn(move || -> Result<(LiveReport, gander_audit::Audit, u64)> {
        if let Some(c) = audit_cpu {
            gander_gateway::af_packet::pin(c)?;
        }
        gander_lab::enter(&ns)?;
        let mut a = Auditor::new(AuditOptions::default(), None);
        let mut o = LiveOptions::new("sub0");
        o.signals = false;
        o.stop = Some(s2);
        o.ready = Some(tx);
        let cpu0 = crate::anatomy::thread_cpu_ns();
        let r = gander_audit_live::run(&mut a, None, &o)
            .map_err(|e| GatewayBenchError::Io(std::io::Error::other(e.to_string())))?;
        let cpu = crate::anatomy::thread_cpu_ns().saturating_sub(cpu0);
        Ok((r, a.finish(), cpu))
    });
    let _ = rx.recv_timeout(Duration::from_secs(10));
    let ns = lab.ns(Role::Ied);
    let sent_at = std::thread::spawn(move || {
        if let Some(c) = send_cpu {
            gander_gateway::af_packet::pin(c)?;
        }
        process_bus::send(ns, "ied1", addr::IED_DIRECT_MAC, ticks)
    })
    .join()
    .map_err(|_| GatewayBenchError::Panicked("sender"))??;
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let (r, audit, cpu) = reader
        .join()
        .map_err(|_| GatewayBenchError::Panicked("audit"))??;
    let sv = sent_at.len() as u64;
    let goose = ticks.div_ceil(process_bus::GOOSE_EVERY_TICKS) as u64;
    let mac = gander_audit::stream::mac(&addr::IED_DIRECT_MAC);
    let seen = audit
        .streams
        .iter()
        .filter(|s| s.src_mac == mac)
        .map(|s| s.frames)
        .sum();
    let traffic_ns = (ticks as f64 / SV_RATE as f64 * 1e9).max(1.0);
    Ok(LiveRun {
        sent: sv + goose,
        seen,
        read: r.frames,
        kernel_drops: r.kernel_drops,
        streams: audit.streams.len(),
        cpu_ns_per_frame: cpu as f64 / r.frames.max(1) as f64,
        core_share: cpu as f64 / traffic_ns,
    })
}

/// Runs `runs` consecutive runs of `secs` seconds in a lab it builds (prefix `prefix`) and
/// removes, printing each through `out`.
pub fn run(
    secs: f64,
    runs: usize,
    prefix: &str,
    out: &mut dyn FnMut(String),
) -> Result<LiveBenchReport> {
    gander_lab::check_available()?;
    let lab = Lab::new(prefix, Mode::L2);
    Lab::down_prefix(prefix)?;
    lab.up()?;
    let machine = Machine::describe();
    let offered = (STREAMS as u64 * SV_RATE) as f64
        + 1e9 / (process_bus::GOOSE_EVERY_TICKS as f64 * (1e9 / SV_RATE as f64));
    out(format!(
        "gander bench audit --live: {} (lab {prefix})",
        machine_line(&machine)
    ));
    out(format!(
        "  {STREAMS} SV streams x {SV_RATE} frames/s + GOOSE every 4 ms ({offered:.0} frames/s), {secs} s per run; audit without keys on sub0, its thread pinned to one core"
    ));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (audit_cpu, send_cpu) = if cpus >= 2 {
        (Some(1), Some(0))
    } else {
        (None, None)
    };
    let mut all = Vec::new();
    let mut result = Ok(());
    for i in 0..runs.max(1) {
        match one_run(&lab, secs, audit_cpu, send_cpu) {
            Ok(r) => {
                out(format!(
                    "  run {}: sent {} frames, audit saw {} ({} read from the ring, {} streams), kernel drops {}; {:.0} ns CPU per frame, {:.1} % of one core",
                    i + 1,
                    r.sent,
                    r.seen,
                    r.read,
                    r.streams,
                    r.kernel_drops,
                    r.cpu_ns_per_frame,
                    r.core_share * 100.0
                ));
                all.push(r);
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    let _ = lab.down();
    result?;
    let targets_met = all.iter().all(|r| r.kernel_drops == 0 && r.seen == r.sent);
    out(format!(
        "  target: every frame seen, no kernel drop, in every run: {}",
        if targets_met { "met" } else { "NOT met" }
    ));
    Ok(LiveBenchReport {
        seconds: secs,
        offered_fps: offered,
        runs: all,
        targets_met,
    })
}
