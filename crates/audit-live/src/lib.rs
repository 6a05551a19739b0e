//! `gander audit --interface IF`: the audit of `gander-audit` fed live from an interface (a
//! mirror or SPAN port, a tap, a bridge) until a duration ends or SIGINT/SIGTERM arrives, with
//! an OpenMetrics endpoint while it runs.
//!
//! Why a crate of its own: `gander-audit` is sans-I/O (frames in, an `Audit` out) and may not
//! depend on the gateway; the gateway may not depend on the audit. The frames come from the
//! gateway's AF_PACKET socket and `TPACKET_V2` receive ring (`gander_gateway::tap`, the `l2`
//! driver's ring code, reused), go through the same input step as a file's ([`input`]: IP
//! fragments reassembled by `gander-capture`) into the same [`Auditor`]; the caller finishes it
//! and writes the same outputs (HTML, Zeek logs, exit code) as for a file. This crate is the
//! I/O in between: the ring, the clock, the signals, the HTTP endpoint.
//!
//! Loss accounting: the kernel's `PACKET_STATISTICS` (packet(7)) of the capture socket are read
//! every [`STATS_EVERY`] and at the end and handed to the audit
//! ([`Auditor::kernel_counters`]): drops become a finding and the summary's `kernel_drops`.

pub mod endpoint;
pub mod input;
pub mod signals;

use gander_audit::metrics::{self, LiveStats};
use gander_audit::Auditor;
use gander_gateway::driver::Polled;
use gander_gateway::tap::{RingTap, BATCH};
use gander_sec::KeyStore;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How often the kernel's counters are read and the metrics text rebuilt.
pub const STATS_EVERY: Duration = Duration::from_millis(250);

/// The longest wait in `poll` for a frame: how late a stop request (signal, flag, end of the
/// duration) may be noticed on an idle interface.
const IDLE_WAIT_MS: i32 = 50;

/// Batches read after the stop at most: more than the default ring holds (about 32 000
/// slots), so a ring full at the stop is read whole.
const FINAL_BATCHES: usize = 256;

/// Why a live audit could not run.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The interface could not be opened (no such interface, no CAP_NET_RAW).
    #[error("cannot capture on {interface}: {source}")]
    Open {
        /// The interface.
        interface: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Reading the socket failed mid-audit.
    #[error("reading {interface}: {source}")]
    Read {
        /// The interface.
        interface: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The metrics endpoint could not listen.
    #[error("metrics: cannot listen on {addr}: {reason}")]
    Metrics {
        /// The address asked for.
        addr: SocketAddr,
        /// What the system said.
        reason: String,
    },
    /// SIGINT/SIGTERM could not be blocked for synchronous handling.
    #[error("cannot block SIGINT/SIGTERM: {0}")]
    Signals(#[source] std::io::Error),
    /// A thread could not be started.
    #[error("cannot start a thread: {0}")]
    Spawn(#[source] std::io::Error),
}

/// What to read and when to stop.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// The interface.
    pub interface: String,
    /// Stop after this long (`None`: only on a signal or `stop`).
    pub duration: Option<Duration>,
    /// Serve OpenMetrics on this address while running.
    pub metrics: Option<SocketAddr>,
    /// Receive ring size in bytes.
    pub ring_bytes: usize,
    /// Take SIGINT/SIGTERM as the end of the audit (the command); off for a caller that
    /// stops through `stop` (the benchmark, tests).
    pub signals: bool,
    /// Stop when set.
    pub stop: Option<Arc<AtomicBool>>,
    /// Told once the socket is open and the endpoint listening, with the endpoint's address:
    /// frames sent after this are seen. Reading starts when the message is taken (a
    /// rendezvous channel holds the reader until then).
    pub ready: Option<std::sync::mpsc::SyncSender<Option<SocketAddr>>>,
}

impl LiveOptions {
    /// Reading `interface` with the default ring, until a signal.
    pub fn new(interface: &str) -> Self {
        LiveOptions {
            interface: interface.to_string(),
            duration: None,
            metrics: None,
            ring_bytes: gander_gateway::tap::DEFAULT_RING_BYTES,
            signals: true,
            stop: None,
            ready: None,
        }
    }
}

/// Why the audit ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The duration ran out.
    Duration,
    /// SIGINT or SIGTERM (its number).
    Signal(i32),
    /// The caller's stop flag.
    Flag,
    /// The interface was removed (ENODEV).
    InterfaceGone,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::Duration => f.write_str("duration reached"),
            Stopped::Signal(s) => f.write_str(signals::name(*s)),
            Stopped::Flag => f.write_str("stopped"),
            Stopped::InterfaceGone => f.write_str("interface removed"),
        }
    }
}

/// What the live input did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveReport {
    /// Frames read from the ring.
    pub frames: u64,
    /// Frames that reached the socket, the dropped ones included (`PACKET_STATISTICS`).
    pub kernel_packets: u64,
    /// Frames the kernel dropped: never audited.
    pub kernel_drops: u64,
    /// Whether frames came through the memory-mapped ring.
    pub ring: bool,
    /// Why it stopped.
    pub stopped: Stopped,
    /// How long it read.
    pub elapsed: Duration,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn stats(auditor: &Auditor<'_>, interface: &str, keys: Option<&KeyStore>) -> LiveStats {
    let mut s = auditor.live_stats();
    s.interface = interface.to_string();
    s.kernel = auditor.kernel_totals().unwrap_or_default();
    if let Some(k) = keys {
        s.keys = metrics::key_ages(k, unix_now());
    }
    s
}

/// The index of interface `name` now (0: there is none).
fn interface_index(name: &str) -> u32 {
    match std::ffi::CString::new(name) {
        // SAFETY: a valid NUL-terminated string.
        Ok(c) => unsafe { libc::if_nametoindex(c.as_ptr()) },
        Err(_) => 0,
    }
}

/// The capture socket reported `e` after frame `input.frames`: the interface went down
/// (ENETDOWN: frames while it was down were not seen) or was removed (`gone`: the audit ends
/// there). A `capture-interrupted` finding (medium: the audit has a gap) and a line on
/// stderr; before, the reader spun at 100% of a CPU on the pending error and said nothing.
fn interrupted(
    auditor: &mut Auditor<'_>,
    interface: &str,
    e: &std::io::Error,
    gone: bool,
    input: &input::LiveInput,
) {
    let what = if gone {
        "was removed: the audit ends here"
    } else {
        "reported an error (link down?): frames while it lasted were not seen"
    };
    eprintln!("gander audit: warning: {interface} {what} ({e})");
    let detail = format!(
        "{interface} {what} ({e}), after frame {}: the audit has a gap there",
        input.frames
    );
    auditor.input_finding(
        "capture-interrupted",
        gander_audit::finding::Severity::Medium,
        input.frames.max(1),
        input.last_ts_ns,
        || detail,
    );
}

/// Feeds `auditor` from `opts.interface` until the duration, a signal or the stop flag; the
/// caller then calls `auditor.finish()` and writes the outputs as for a file. `keys` (the
/// store the auditor verifies with) gives the key ages in the metrics.
pub fn run(
    auditor: &mut Auditor<'_>,
    keys: Option<&KeyStore>,
    opts: &LiveOptions,
) -> Result<LiveReport, LiveError> {
    // Before any thread starts: the endpoint's thread inherits the blocked mask, so the
    // signal stays pending for this one.
    let sigs = if opts.signals {
        Some(signals::StopSignals::block().map_err(LiveError::Signals)?)
    } else {
        None
    };
    let mut tap =
        RingTap::open(&opts.interface, opts.ring_bytes).map_err(|source| LiveError::Open {
            interface: opts.interface.clone(),
            source,
        })?;
    let endpoint = match opts.metrics {
        Some(a) => Some(endpoint::Endpoint::start(
            a,
            metrics::render(&stats(auditor, &opts.interface, keys)),
        )?),
        None => None,
    };
    if let Some(r) = &opts.ready {
        let _ = r.send(endpoint.as_ref().map(endpoint::Endpoint::addr));
    }
    let read_err = |source| LiveError::Read {
        interface: opts.interface.clone(),
        source,
    };
    let start = Instant::now();
    let deadline = opts.duration.map(|d| start + d);
    // The interface's index, to tell when it is removed: after it went down the socket is no
    // longer bound and its removal raises no error of its own (packet_notifier).
    let ifindex = interface_index(&opts.interface);
    let mut next_stats = start + STATS_EVERY;
    let mut input = input::LiveInput::default();
    let stopped = loop {
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break Stopped::Duration;
        }
        if opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            break Stopped::Flag;
        }
        if now >= next_stats {
            if let Some(s) = sigs.as_ref().and_then(signals::StopSignals::pending) {
                break Stopped::Signal(s);
            }
            if interface_index(&opts.interface) != ifindex {
                let e = std::io::Error::from_raw_os_error(libc::ENODEV);
                interrupted(auditor, &opts.interface, &e, true, &input);
                break Stopped::InterfaceGone;
            }
            let k = tap.take_stats().map_err(read_err)?;
            auditor.kernel_counters(k.packets, k.drops, input.frames, input.last_ts_ns);
            if let Some(e) = &endpoint {
                e.publish(metrics::render(&stats(auditor, &opts.interface, keys)));
            }
            next_stats = now + STATS_EVERY;
        }
        let wait = deadline
            .map(|d| d.saturating_duration_since(now).as_millis())
            .map_or(IDLE_WAIT_MS, |ms| (ms as i32).clamp(0, IDLE_WAIT_MS));
        match tap.wait(wait).map_err(read_err)? {
            Polled::Readable => {}
            Polled::Idle => continue,
            Polled::Error(e) => {
                let gone = matches!(e.raw_os_error(), Some(libc::ENODEV | libc::ENXIO))
                    || interface_index(&opts.interface) != ifindex;
                interrupted(auditor, &opts.interface, &e, gone, &input);
                if gone {
                    break Stopped::InterfaceGone;
                }
                continue;
            }
        }
        tap.drain(BATCH, |f| {
            input.frame(auditor, f.data, f.ts_ns, f.truncated)
        })
        .map_err(read_err)?;
    };
    // Frames already in the ring when the stop came are part of the audit (bounded: a flood
    // faster than the reader must not keep it from stopping).
    for _ in 0..FINAL_BATCHES {
        let n = tap
            .drain(BATCH, |f| {
                input.frame(auditor, f.data, f.ts_ns, f.truncated)
            })
            .map_err(read_err)?;
        if n == 0 {
            break;
        }
    }
    let k = tap.take_stats().map_err(read_err)?;
    auditor.kernel_counters(k.packets, k.drops, input.frames, input.last_ts_ns);
    input.finish(auditor);
    // Publishers silent past their timeAllowedtoLive when the audit ends.
    auditor.end_live(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
    );
    if let Some(e) = &endpoint {
        e.publish(metrics::render(&stats(auditor, &opts.interface, keys)));
    }
    drop(endpoint);
    if let Some(s) = sigs {
        // Still blocked while the caller writes the outputs: a second Ctrl-C does not cut
        // the report short (it stays pending and ends nothing).
        s.keep_blocked();
    }
    let totals = auditor.kernel_totals().unwrap_or_default();
    Ok(LiveReport {
        frames: input.frames,
        kernel_packets: totals.packets,
        kernel_drops: totals.drops,
        ring: tap.has_ring(),
        stopped,
        elapsed: start.elapsed(),
    })
}
