//! The userspace link emulator: an Ethernet relay between two interfaces (the lab's `gi0` and
//! `gn0` in the gateway namespace) that applies a [`LinkProfile`] per direction, for kernels
//! without `tc netem` (this machine's).
//!
//! Per frame, in each direction, as netem does: drop with probability `loss`; otherwise depart at
//! `arrival + delay ± jitter` (uniform), never before the previous frame (FIFO: no reordering),
//! and not before the link has finished serialising the previous frame at `rate`
//! (`len * 8 / rate`). Frames are read from and written to AF_PACKET raw sockets; departures are
//! waited for with `ppoll` (nanosecond timeouts) and a short spin for the last 50 µs, so a LAN
//! profile's 0.1 ms is honoured. What it achieves is measured by [`super::measure`] and reported
//! with every result.

use super::profile::LinkProfile;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Why the relay did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RelayError {
    /// The relay thread could not move into the gateway namespace.
    #[error("cannot enter namespace {ns}")]
    Enter {
        /// The namespace.
        ns: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// No AF_PACKET socket (root needed).
    #[error("AF_PACKET socket")]
    Socket(#[source] std::io::Error),
    /// An interface name with a NUL byte.
    #[error("bad interface name")]
    BadName,
    /// No interface of that name in the namespace.
    #[error("no interface {0}")]
    NoInterface(String),
    /// The socket could not be bound to the interface.
    #[error("bind to {ifname}")]
    Bind {
        /// The interface.
        ifname: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A relay thread ended before saying whether it started.
    #[error("relay thread died")]
    ThreadDied,
}

/// Frames relayed and dropped, per direction.
#[derive(Debug, Default)]
pub struct Counters {
    /// Frames passed on (after their delay).
    pub forwarded: AtomicU64,
    /// Frames dropped by the loss model.
    pub dropped: AtomicU64,
}

/// A running relay; stopped (and its threads joined) on [`Relay::stop`] or drop.
pub struct Relay {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// Frame counters of the two directions (`a` to `b`, then `b` to `a`).
    pub counters: [Arc<Counters>; 2],
}

impl Relay {
    /// Starts both directions inside namespace `ns` between interfaces `a` and `b`.
    pub fn start(ns: &str, a: &str, b: &str, profile: LinkProfile) -> Result<Relay, RelayError> {
        let stop = Arc::new(AtomicBool::new(false));
        let counters = [Arc::new(Counters::default()), Arc::new(Counters::default())];
        let mut threads = Vec::new();
        for (i, (from, to)) in [(a, b), (b, a)].into_iter().enumerate() {
            let (ns, from, to) = (ns.to_string(), from.to_string(), to.to_string());
            let (stop, c) = (stop.clone(), counters[i].clone());
            let (tx, rx) = std::sync::mpsc::channel();
            threads.push(std::thread::spawn(move || {
                let socks = gander_lab::enter(&ns)
                    .map_err(|source| RelayError::Enter {
                        ns: ns.clone(),
                        source,
                    })
                    .and_then(|_| Ok((RawSocket::open(&from)?, RawSocket::open(&to)?)));
                match socks {
                    Ok((rx_sock, tx_sock)) => {
                        let _ = tx.send(Ok(()));
                        direction(
                            &rx_sock,
                            &tx_sock,
                            profile,
                            &stop,
                            &c,
                            0x9e37_79b9_7f4a_7c15 ^ i as u64,
                        );
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                    }
                }
            }));
            rx.recv().map_err(|_| RelayError::ThreadDied)??;
        }
        Ok(Relay {
            stop,
            threads,
            counters,
        })
    }

    /// Stops both directions and joins their threads (idempotent).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An AF_PACKET socket bound to one interface (all protocols).
struct RawSocket {
    fd: libc::c_int,
}

impl RawSocket {
    fn open(ifname: &str) -> Result<RawSocket, RelayError> {
        let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
        // SAFETY: plain socket(2); the fd is owned by RawSocket and closed on drop.
        let fd =
            unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, proto) };
        if fd < 0 {
            return Err(RelayError::Socket(std::io::Error::last_os_error()));
        }
        let s = RawSocket { fd };
        let name = std::ffi::CString::new(ifname).map_err(|_| RelayError::BadName)?;
        // SAFETY: a valid NUL-terminated name.
        let idx = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if idx == 0 {
            return Err(RelayError::NoInterface(ifname.to_string()));
        }
        // SAFETY: sockaddr_ll is plain data; zeroed is a valid starting value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = idx as i32;
        // SAFETY: bind with a correctly sized sockaddr_ll.
        let r = unsafe {
            libc::bind(
                fd,
                &sll as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if r != 0 {
            return Err(RelayError::Bind {
                ifname: ifname.to_string(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(s)
    }

    /// One incoming frame (outgoing copies of our own sends are skipped), or None.
    fn recv(&self, buf: &mut [u8]) -> Option<usize> {
        loop {
            // SAFETY: zeroed sockaddr_ll and a correctly sized length for recvfrom.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            // SAFETY: buf is valid for buf.len() bytes.
            let n = unsafe {
                libc::recvfrom(
                    self.fd,
                    buf.as_mut_ptr() as *mut _,
                    buf.len(),
                    0,
                    &mut sll as *mut _ as *mut libc::sockaddr,
                    &mut len,
                )
            };
            if n <= 0 {
                return None;
            }
            if sll.sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            return Some(n as usize);
        }
    }

    fn send(&self, frame: &[u8]) {
        // SAFETY: frame is valid for its length; the socket is bound to the output interface.
        unsafe { libc::send(self.fd, frame.as_ptr() as *const _, frame.len(), 0) };
    }

    /// Waits until the socket is readable or `timeout` has passed.
    fn wait(&self, timeout: Duration) {
        let mut p = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: one valid pollfd; a valid timespec; no signal mask change.
        unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
    }
}

impl Drop for RawSocket {
    fn drop(&mut self) {
        // SAFETY: we own the fd.
        unsafe { libc::close(self.fd) };
    }
}

/// xorshift64*: enough randomness for loss and jitter, reproducible per direction.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The schedule of one direction: when a frame that arrives at `now` departs (None: dropped).
pub struct Schedule {
    profile: LinkProfile,
    last_departure: Option<Instant>,
    rng: Rng,
}

impl Schedule {
    /// A schedule for `profile`, its loss and jitter drawn from a generator seeded with `seed`.
    pub fn new(profile: LinkProfile, seed: u64) -> Schedule {
        Schedule {
            profile,
            last_departure: None,
            rng: Rng(seed | 1),
        }
    }

    /// When a frame of `len` bytes arriving at `now` departs; `None` if the loss model drops it.
    pub fn departure(&mut self, now: Instant, len: usize) -> Option<Instant> {
        let p = &self.profile;
        if p.loss_pct > 0.0 && self.rng.next_f64() * 100.0 < p.loss_pct {
            return None;
        }
        let jitter = if p.jitter_ms > 0.0 {
            (self.rng.next_f64() * 2.0 - 1.0) * p.jitter_ms
        } else {
            0.0
        };
        let delay = Duration::from_secs_f64(((p.delay_ms + jitter).max(0.0)) / 1e3);
        let mut dep = now + delay;
        if let Some(last) = self.last_departure {
            let tx = if p.rate_mbit > 0.0 {
                Duration::from_secs_f64(len as f64 * 8.0 / (p.rate_mbit * 1e6))
            } else {
                Duration::ZERO
            };
            dep = dep.max(last + tx);
        }
        self.last_departure = Some(dep);
        Some(dep)
    }
}

fn direction(
    rx: &RawSocket,
    tx: &RawSocket,
    profile: LinkProfile,
    stop: &AtomicBool,
    c: &Counters,
    seed: u64,
) {
    let mut sched = Schedule::new(profile, seed);
    let mut queue: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut buf = vec![0u8; 65536];
    while !stop.load(Ordering::Relaxed) {
        while let Some(n) = rx.recv(&mut buf) {
            match sched.departure(Instant::now(), n) {
                Some(dep) => queue.push_back((dep, buf[..n].to_vec())),
                None => {
                    c.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let now = Instant::now();
        while queue.front().is_some_and(|(d, _)| *d <= now) {
            if let Some((_, f)) = queue.pop_front() {
                tx.send(&f);
                c.forwarded.fetch_add(1, Ordering::Relaxed);
            }
        }
        match queue.front() {
            Some((d, _)) => {
                let left = d.saturating_duration_since(Instant::now());
                if left > Duration::from_micros(50) {
                    rx.wait(left - Duration::from_micros(50));
                } else {
                    std::hint::spin_loop();
                }
            }
            None => rx.wait(Duration::from_millis(20)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_applies_delay_rate_and_loss() {
        let p = LinkProfile {
            name: "t",
            delay_ms: 10.0,
            jitter_ms: 0.0,
            loss_pct: 0.0,
            rate_mbit: 8.0,
            source: "",
        };
        let mut s = Schedule::new(p, 7);
        let t0 = Instant::now();
        let d1 = s.departure(t0, 1000).unwrap();
        assert_eq!(d1 - t0, Duration::from_millis(10));
        // 1000 bytes at 8 Mbit/s = 1 ms after the previous departure.
        let d2 = s.departure(t0, 1000).unwrap();
        assert_eq!(d2 - d1, Duration::from_millis(1));
        let lossy = LinkProfile {
            loss_pct: 50.0,
            ..p
        };
        let mut s = Schedule::new(lossy, 7);
        let dropped = (0..10_000)
            .filter(|_| s.departure(t0, 60).is_none())
            .count();
        assert!((4_500..5_500).contains(&dropped), "{dropped}");
        let jittery = LinkProfile {
            jitter_ms: 2.0,
            rate_mbit: 0.0,
            ..p
        };
        let mut s = Schedule::new(jittery, 7);
        let mut last = t0;
        for _ in 0..1000 {
            let d = s.departure(t0, 60).unwrap();
            assert!(d >= last, "FIFO");
            assert!(d - t0 <= Duration::from_millis(12));
            last = d;
        }
    }
}
