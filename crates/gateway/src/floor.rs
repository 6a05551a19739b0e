//! The floor of the `l2` data path: the driver's sockets, rings, tc bypass, thread shape and
//! scheduling, forwarding every frame its filter takes without judging it.
//!
//! Why: on a shared or virtualised host most of the gateway's added latency is not gander's
//! work but what any forwarding thread pays there (the wake-up of a sleeping thread on an idle
//! vCPU, the veth hop, the next namespace's receive path run inside `send`). A benchmark that
//! puts this forwarder where the gateway sits, in the same run, separates the host's share
//! ("floor") from gander's (docs/gateway.md, "Where the time goes"). It is not a mode of the
//! gateway: no configuration reaches it, only code that calls [`run`] (the benchmark).

use crate::af_packet::{mtu, pin, RawSocket, BATCH, RX_RING_BYTES, TX_RING_FRAMES};
use crate::config::{Bypass, Config, PassDrop};
use crate::driver::{poll_fds, Control};
use crate::ring::{Pushed, RxRing, TxRing};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// Forwards between the `[l2]` interfaces of `config` until `ctl.stop`, with the driver's
/// socket set-up (filter, rings, `bypass`), its threads (one per direction, `cpu`,
/// `busy_poll`) and the service's scheduling (`rt_priority`, `cpu_wakeup_latency_us`).
/// Returns the frames forwarded IED-to-network and network-to-IED. Needs rings (`ring = true`).
pub fn run(config: &Config, ctl: &Control) -> io::Result<[u64; 2]> {
    let _env = crate::service::prepare_thread(config);
    let cfg = config
        .raw
        .l2
        .as_ref()
        .ok_or_else(|| io::Error::other("no [l2]"))?;
    let filter = (cfg.bypass == Bypass::Tc).then(crate::bpf::iec61850_filter);
    let (ied, ied_rx) = RawSocket::open_with(&cfg.ied, filter.as_deref(), Some(RX_RING_BYTES))?;
    let (net, net_rx) = RawSocket::open_with(&cfg.net, filter.as_deref(), Some(RX_RING_BYTES))?;
    let no_ring = || io::Error::other("the floor forwarder needs receive rings");
    let (ied_rx, net_rx) = (ied_rx.ok_or_else(no_ring)?, net_rx.ok_or_else(no_ring)?);
    let tx = |s: &RawSocket, name: &str| {
        TxRing::open(
            s.ifindex(),
            mtu(s.fd(), name).unwrap_or(1500),
            TX_RING_FRAMES,
            true,
        )
    };
    let (to_net, to_ied) = (tx(&net, &cfg.net)?, tx(&ied, &cfg.ied)?);
    let bypass = match cfg.bypass {
        Bypass::Gander => None,
        Bypass::Tc => Some(
            crate::bypass::TcBypass::install(&cfg.ied, &cfg.net, PassDrop::Pass, PassDrop::Pass)
                .map_err(io::Error::other)?,
        ),
    };
    let counts = [AtomicU64::new(0), AtomicU64::new(0)];
    let cpu = |k: usize| (!cfg.cpu.is_empty()).then(|| cfg.cpu[k % cfg.cpu.len()]);
    let spins = [
        cfg.busy_poll.spins(crate::config::Direction::Outbound),
        cfg.busy_poll.spins(crate::config::Direction::Inbound),
    ];
    let r = std::thread::scope(|s| -> io::Result<()> {
        let (c0, c1) = (&counts[0], &counts[1]);
        let (ied, net) = (&ied, &net);
        let a = std::thread::Builder::new()
            .name("gander-floor-out".into())
            .spawn_scoped(s, move || {
                forward(ied, ied_rx, to_net, ctl, spins[0], cpu(0), c0)
            })?;
        let b = std::thread::Builder::new()
            .name("gander-floor-in".into())
            .spawn_scoped(s, move || {
                forward(net, net_rx, to_ied, ctl, spins[1], cpu(1), c1)
            })?;
        let ra = a
            .join()
            .map_err(|_| io::Error::other("floor thread panicked"));
        let rb = b
            .join()
            .map_err(|_| io::Error::other("floor thread panicked"));
        ra.and_then(|r| r).and(rb.and_then(|r| r))
    });
    if let Some(b) = bypass {
        b.remove().map_err(io::Error::other)?;
    }
    r?;
    Ok([
        counts[0].load(Ordering::Relaxed),
        counts[1].load(Ordering::Relaxed),
    ])
}

/// One direction: the driver's wait (ring check, `poll` or spin), up to [`BATCH`] frames copied
/// into the transmit ring, one `send` per batch.
fn forward(
    sock: &RawSocket,
    mut rx: RxRing,
    mut tx: TxRing,
    ctl: &Control,
    spin: bool,
    cpu: Option<usize>,
    count: &AtomicU64,
) -> io::Result<()> {
    if let Some(c) = cpu {
        if let Err(e) = pin(c) {
            eprintln!("gander floor: {e}; not pinned");
        }
    }
    while !ctl.stopping() {
        if !rx.ready() {
            if tx.queued() > 0 {
                tx.flush();
            }
            if spin {
                std::hint::spin_loop();
                continue;
            }
            if !poll_fds(&[sock.fd()], 50)?[0] {
                continue;
            }
        }
        let mut n = 0;
        for _ in 0..BATCH {
            let Some(f) = rx.peek() else {
                break;
            };
            if !f.truncated && tx.push(f.data) == Pushed::Queued {
                n += 1;
            }
            rx.release();
        }
        tx.flush();
        count.fetch_add(n, Ordering::Relaxed);
    }
    tx.flush();
    tx.reap();
    Ok(())
}
