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
    /// With --interface: receive ring size in MiB.
    #[arg(long, default_value_t = 64, requires = "interface")]
    pub ring_mib: usize,
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
        if !(d.is_finite() && d > 0.0) {
            anyhow::bail!("--duration must be a positive number of seconds");
        }
        opts.duration = Some(Duration::from_secs_f64(d));
    }
    opts.metrics = a.metrics;
    opts.ring_bytes = a.ring_mib.max(1) << 20;
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
