//! What every packet driver shares: the control block the signal thread talks to, the clock the
//! policy is given, and the housekeeping done between frames (key reload, counter reports).

use crate::pcap::PcapTap;
use crate::policy::{Counters, Policy};
use gander_sec::KeyStore;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Each GDOI group's Key IDs with their activation times (Unix seconds).
pub type GroupActivations = std::collections::HashMap<String, Vec<(u32, u64)>>;

/// Receives counter reports.
pub type Reporter = Box<dyn FnMut(&Counters) + Send>;

/// Shared between a driver's worker thread and whoever controls it (signals, tests).
pub struct Control {
    /// Ask the driver to stop after the current frame.
    pub stop: AtomicBool,
    /// Ask for a counter report now (SIGUSR1).
    pub report: AtomicBool,
    /// Set by the driver once its interfaces, sockets or queue are open and frames flow: the
    /// service says "started" only then (a missing interface is a failure to start, not a
    /// gateway that is up).
    pub running: AtomicBool,
    /// Keys to switch to between two frames (SIGHUP): no frame is lost, the sockets keep
    /// queueing while the file is read by another thread.
    pub new_keys: Mutex<Option<KeyStore>>,
    /// The GDOI groups' Key IDs and activation times that go with `new_keys` (`gdoi_keys`):
    /// written while `new_keys` is locked, taken with it, so rules and store switch together.
    pub new_group_keys: Mutex<Option<GroupActivations>>,
    /// The `[gdoi]` member's groups, for the metrics (`gdoi_keys` writes, the exporter reads).
    pub gdoi: Mutex<Option<Vec<crate::gdoi_keys::GroupStatus>>>,
    /// The last counters published by the worker.
    pub counters: Mutex<Counters>,
    reporter: Mutex<Option<Reporter>>,
    interval: Option<Duration>,
    /// Optional pcap of forwarded frames.
    pub tap: Mutex<Option<PcapTap>>,
    /// Per-stage times of the `l2` driver's ring threads, collected when this holds `Some`
    /// before the driver starts (benchmarks), added up when the threads stop.
    pub stages: Mutex<Option<[StageTimes; 2]>>,
}

/// Microsecond histogram (1 us buckets up to 2 ms, then one overflow bucket): fixed size, so
/// recording a time allocates nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    buckets: Vec<u64>,
}

const HIST_US: usize = 2000;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: vec![0; HIST_US + 1],
        }
    }
}

impl Histogram {
    /// Records one time.
    pub fn record(&mut self, d: Duration) {
        let us = (d.as_micros() as usize).min(HIST_US);
        if let Some(b) = self.buckets.get_mut(us) {
            *b += 1;
        }
    }
    /// Times recorded.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }
    /// The nearest-rank `p`-th percentile (0 < p <= 100) in microseconds: the upper edge of its
    /// bucket (2000 means "2 ms or more"); 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b;
            if seen >= rank {
                return (i as u64 + 1).min(HIST_US as u64);
            }
        }
        HIST_US as u64
    }
    /// Adds another histogram's counts.
    pub fn add(&mut self, o: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
    }
}

/// Where a frame's time goes inside the gateway, per direction (see `docs/gateway.md`, "Where
/// the time goes").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// From the kernel writing the frame into the receive ring (its ring time stamp) to the
    /// packet thread reading it: wake-up and queueing.
    pub wake: Histogram,
    /// The policy's decision, lock included.
    pub judge: Histogram,
    /// Copying into the transmit ring and the `send` that hands the batch to the kernel (the
    /// kernel's transmit path up to the next interface's receive queue runs inside it).
    pub send: Histogram,
}

impl StageTimes {
    /// Adds another's counts.
    pub fn add(&mut self, o: &StageTimes) {
        self.wake.add(&o.wake);
        self.judge.add(&o.judge);
        self.send.add(&o.send);
    }
}

impl Control {
    /// A control block; `interval` for periodic reports, `reporter` to print them.
    pub fn new(interval: Option<Duration>, reporter: Option<Reporter>) -> Self {
        Control {
            stop: AtomicBool::new(false),
            report: AtomicBool::new(false),
            running: AtomicBool::new(false),
            new_keys: Mutex::new(None),
            new_group_keys: Mutex::new(None),
            gdoi: Mutex::new(None),
            counters: Mutex::new(Counters::default()),
            reporter: Mutex::new(reporter),
            interval,
            tap: Mutex::new(None),
            stages: Mutex::new(None),
        }
    }

    /// The driver is set up: frames flow from now on.
    pub fn set_running(&self) {
        self.running.store(true, Ordering::Release);
    }

    /// Whether the driver is set up ([`Self::set_running`]).
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// Whether the driver should stop.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Hands new keys to the worker.
    pub fn reload(&self, keys: KeyStore) {
        if let Ok(mut k) = self.new_keys.lock() {
            *k = Some(keys);
        }
    }

    /// Hands new keys and the GDOI groups' key bindings to the worker, as one switch.
    pub fn reload_with_groups(&self, keys: KeyStore, groups: GroupActivations) {
        if let Ok(mut k) = self.new_keys.lock() {
            if let Ok(mut g) = self.new_group_keys.lock() {
                *g = Some(groups);
            }
            *k = Some(keys);
        }
    }

    /// Publishes the counters and calls the reporter.
    pub fn publish(&self, policy: &Policy, force_report: bool) {
        if let Ok(mut c) = self.counters.lock() {
            c.clone_from(policy.counters());
        }
        if force_report {
            if let Ok(mut r) = self.reporter.lock() {
                if let Some(r) = r.as_mut() {
                    r(policy.counters());
                }
            }
            if let Ok(mut t) = self.tap.lock() {
                if let Some(t) = t.as_mut() {
                    let _ = t.flush();
                }
            }
        }
    }
}

/// The driver side of [`Control`]: called between frames.
pub struct Housekeeping {
    last_report: Instant,
    last_publish: Instant,
}

impl Default for Housekeeping {
    fn default() -> Self {
        Self::new()
    }
}

impl Housekeeping {
    /// Starts the clocks.
    pub fn new() -> Self {
        Housekeeping {
            last_report: Instant::now(),
            last_publish: Instant::now(),
        }
    }

    /// Swaps keys, publishes counters (every 20 ms) and reports (on request or interval).
    pub fn tick(&mut self, ctl: &Control, policy: &mut Policy) {
        if let Ok(mut k) = ctl.new_keys.try_lock() {
            if let Some(keys) = k.take() {
                policy.replace_keys(keys);
                if let Ok(mut g) = ctl.new_group_keys.lock() {
                    if let Some(g) = g.take() {
                        policy.set_group_keys(&g);
                    }
                }
            }
        }
        let now = Instant::now();
        if now.duration_since(self.last_publish) >= Duration::from_millis(20) {
            policy.flush_events(unix_now());
        }
        let due = ctl
            .interval
            .is_some_and(|i| now.duration_since(self.last_report) >= i);
        let asked = ctl.report.swap(false, Ordering::Relaxed);
        if due || asked {
            self.last_report = now;
            ctl.publish(policy, true);
            self.last_publish = now;
        } else if now.duration_since(self.last_publish) >= Duration::from_millis(20) {
            ctl.publish(policy, false);
            self.last_publish = now;
        }
    }
}

/// Unix seconds now (key validity).
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Writes a forwarded frame to the tap, if there is one (the `l2` driver's two direction
/// threads share it, so this waits for the lock rather than skipping the frame).
pub fn tap(ctl: &Control, frame: &[u8]) {
    if let Ok(mut t) = ctl.tap.lock() {
        if let Some(t) = t.as_mut() {
            let _ = t.write(frame);
        }
    }
}

/// Writes the Ethernet frame `build` makes to the pcap tap, if there is one: the tap's link
/// type is Ethernet, and a driver whose packets have no Ethernet header (`nfqueue`, `udp`)
/// builds one only when a tap is configured, never on the path of every packet.
pub fn tap_built(ctl: &Control, build: impl FnOnce() -> Option<Vec<u8>>) {
    if let Ok(mut t) = ctl.tap.lock() {
        if let Some(t) = t.as_mut() {
            if let Some(frame) = build() {
                let _ = t.write(&frame);
            }
        }
    }
}

/// Waits until one of `fds` is readable or `timeout_ms` passes; returns the readiness flags.
/// What one socket said to `poll`.
#[derive(Debug)]
pub enum Polled {
    /// Nothing within the timeout.
    Idle,
    /// Readable.
    Readable,
    /// The socket had an error pending (POLLERR), now taken and cleared: for an AF_PACKET
    /// socket ENETDOWN when its interface goes down, ENODEV when it is removed (packet(7),
    /// `packet_notifier`). Until it is read, `poll` reports it at once every time: a reader
    /// that only polled spun at 100% of a CPU after a link flap.
    Error(std::io::Error),
}

/// The error pending on socket `fd` (`SO_ERROR`, which clears it), if any.
pub fn take_socket_error(fd: i32) -> Option<std::io::Error> {
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: err and len are valid for getsockopt's SO_ERROR (an int).
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut err as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (r == 0 && err != 0).then(|| std::io::Error::from_raw_os_error(err))
}

/// Waits up to `timeout_ms` for socket `fd`: readable, idle, or its pending error (taken).
pub fn poll_one(fd: i32, timeout_ms: i32) -> std::io::Result<Polled> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: p is one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(Polled::Idle);
        }
        return Err(e);
    }
    if p.revents & libc::POLLERR != 0 {
        if let Some(e) = take_socket_error(fd) {
            return Ok(Polled::Error(e));
        }
    }
    Ok(if p.revents & libc::POLLIN != 0 {
        Polled::Readable
    } else {
        Polled::Idle
    })
}

/// Waits up to `timeout_ms` for any of `fds`; per fd, whether it is readable. A pending
/// socket error (POLLERR) is taken and cleared ([`take_socket_error`]), not reported as
/// readable: the gateway's packet threads spun otherwise after a link flap.
pub fn poll_fds(fds: &[i32], timeout_ms: i32) -> std::io::Result<Vec<bool>> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: p is a valid array of pollfd of the given length.
    let r = unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(e);
    }
    for x in &p {
        if x.revents & libc::POLLERR != 0 {
            let _ = take_socket_error(x.fd);
        }
    }
    Ok(p.iter().map(|x| x.revents & libc::POLLIN != 0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_percentiles_are_nearest_rank() {
        let mut h = Histogram::default();
        assert_eq!(h.percentile(99.0), 0);
        for us in 0..100u64 {
            h.record(Duration::from_micros(us));
        }
        h.record(Duration::from_secs(1));
        assert_eq!(h.count(), 101);
        assert_eq!(h.percentile(50.0), 51);
        assert_eq!(h.percentile(99.0), 100);
        assert_eq!(h.percentile(100.0), 2000);
        let mut g = Histogram::default();
        g.add(&h);
        assert_eq!(g, h);
    }
}
