//! `gander audit --interface IF [--duration S] [--metrics ADDR:PORT]`: the arguments of a live
//! audit and the call into `gander-audit-live`; `cmd_audit` finishes the audit and writes the
//! same outputs as for files.

use anyhow::Result;
use clap::Args;
use gander_audit::Auditor;
use gander_sec::KeyStore;
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Args)]
pub(crate) struct LiveArgs {
    /// Audit live from this interface (a mirror port, a tap) through an AF_PACKET ring
    /// (CAP_NET_RAW), until --duration or SIGINT/SIGTERM; then the same outputs as for files.
    #[arg(long, value_name = "IF")]
    pub interface: Option<String>,
    /// With --interface: stop after this many seconds.
    #[arg(long, value_name = "S", requires = "interface")]
    pub duration: Option<f64>,
    /// With --interface: serve OpenMetrics on GET /metrics at this address while running.
    #[arg(long, value_name = "ADDR:PORT", requires = "interface")]
    pub metrics: Option<SocketAddr>,
    /// With --interface: receive ring size in MiB (default 64, at most 65536).
    #[arg(long, requires = "interface")]
    pub ring_mib: Option<usize>,
}

/// The longest `--duration`: a year (a longer number, 1e19 s, overflowed the clock and
/// panicked).
const MAX_DURATION_S: f64 = 366.0 * 24.0 * 3600.0;

/// The largest `--ring-mib` (64 GiB): beyond it the byte count wrapped.
const MAX_RING_MIB: usize = 65536;

impl LiveArgs {
    /// Options that only a live audit reads, given without `--interface` (clap's `requires`
    /// is not applied across the flattened group): refused, not silently ignored.
    pub(crate) fn check_without_interface(&self) -> Result<()> {
        let given: Vec<&str> = [
            (self.duration.is_some(), "--duration"),
            (self.metrics.is_some(), "--metrics"),
            (self.ring_mib.is_some(), "--ring-mib"),
        ]
        .into_iter()
        .filter_map(|(g, n)| g.then_some(n))
        .collect();
        if self.interface.is_none() && !given.is_empty() {
            anyhow::bail!(
                "{} {} to a live audit only (--interface IF); a capture file is read whole",
                given.join(", "),
                if given.len() == 1 { "applies" } else { "apply" }
            );
        }
        Ok(())
    }
}

/// Feeds `auditor` from the interface; prints what the input saw.
pub(crate) fn feed(
    a: &LiveArgs,
    iface: &str,
    auditor: &mut Auditor<'_>,
    keys: Option<&KeyStore>,
) -> Result<()> {
    let mut opts = gander_audit_live::LiveOptions::new(iface);
    if let Some(d) = a.duration {
        if !(d.is_finite() && d > 0.0 && d <= MAX_DURATION_S) {
            anyhow::bail!(
                "--duration must be a positive number of seconds, at most {MAX_DURATION_S} (a year)"
            );
        }
        opts.duration = Some(Duration::from_secs_f64(d));
    }
    opts.metrics = a.metrics;
    let mib = a.ring_mib.unwrap_or(64);
    if !(1..=MAX_RING_MIB).contains(&mib) {
        anyhow::bail!("--ring-mib must be 1 to {MAX_RING_MIB}");
    }
    opts.ring_bytes = mib << 20;
    // Blocked before the announcing thread starts, so that no thread of the process takes
    // SIGINT/SIGTERM with the default action (the end of the process, the report unwritten);
    // the reader takes them between two batches.
    gander_audit_live::signals::StopSignals::block()?.keep_blocked();
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    opts.ready = Some(tx);
    let iface2 = iface.to_string();
    let announce = std::thread::spawn(move || {
        if let Ok(addr) = rx.recv() {
            eprintln!(
                "gander audit: reading {iface2}{}; SIGINT or SIGTERM ends the audit and writes the report",
                addr.map(|a| format!(", OpenMetrics on http://{a}/metrics"))
                    .unwrap_or_default()
            );
        }
    });
    let r = gander_audit_live::run(auditor, keys, &opts)?;
    let _ = announce.join();
    eprintln!(
        "gander audit: {iface}: {} ({:.1} s): {} frames read, {} reached the socket, {} dropped by the kernel{}",
        r.stopped,
        r.elapsed.as_secs_f64(),
        r.frames,
        r.kernel_packets,
        r.kernel_drops,
        if r.ring { "" } else { " (no receive ring: one system call per frame)" }
    );
    if r.kernel_drops > 0 {
        eprintln!("gander audit: warning: {} frames were lost before the audit read them: the audit is incomplete (finding capture-drops)", r.kernel_drops);
    }
    Ok(())
}
