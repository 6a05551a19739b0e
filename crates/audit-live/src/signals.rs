//! SIGINT and SIGTERM as a request to stop, taken synchronously: the signals are blocked in
//! the calling thread (and so in every thread it starts afterwards, which inherit its mask,
//! pthread_sigmask(3)), and the reader asks the kernel between two batches whether one is
//! pending (`sigtimedwait` with a zero timeout, sigwaitinfo(2)). No handler runs at an
//! arbitrary point, so the audit ends between two frames and writes its outputs whole.

use std::io;

/// The signals that end a live audit: SIGHUP too (a closed terminal or ssh session), which
/// otherwise ended the process with the audit unwritten.
const STOP: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// SIGINT/SIGTERM blocked in this thread; the mask before is restored when dropped.
pub struct StopSignals {
    set: libc::sigset_t,
    old: libc::sigset_t,
}

impl std::fmt::Debug for StopSignals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StopSignals(SIGINT, SIGTERM)")
    }
}

impl StopSignals {
    /// Blocks SIGINT and SIGTERM in the calling thread. Call it before starting any thread
    /// that should not take them either.
    pub fn block() -> io::Result<Self> {
        // SAFETY: sigemptyset/sigaddset write the local sets they are given; zeroed sigset_t
        // values are valid storage for them.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: set is a valid sigset_t.
        unsafe { libc::sigemptyset(&mut set) };
        for s in STOP {
            // SAFETY: set is a valid sigset_t and s a valid signal number.
            unsafe { libc::sigaddset(&mut set, s) };
        }
        // SAFETY: set and old are valid sigset_t values; this changes only the calling
        // thread's mask.
        let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        Ok(StopSignals { set, old })
    }

    /// A pending SIGINT or SIGTERM, taken (it will not be delivered again); `None` if none.
    pub fn pending(&self) -> Option<libc::c_int> {
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: self.set is a valid sigset_t and zero a valid timespec; no siginfo asked.
        let s = unsafe { libc::sigtimedwait(&self.set, std::ptr::null_mut(), &zero) };
        (s > 0).then_some(s)
    }

    /// Leaves the signals blocked for the rest of the thread's life (the mask is not
    /// restored).
    pub fn keep_blocked(self) {
        std::mem::forget(self);
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        // SAFETY: restores the calling thread's mask saved in block(); old is a valid set.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

/// The name of a stop signal, for the summary line.
pub fn name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_signal_is_pending_not_delivered() {
        // Run on a thread of its own, so only its mask changes; the signal is sent to that
        // thread only (pthread_kill), never to the test process.
        let h = std::thread::spawn(|| {
            let s = StopSignals::block().unwrap();
            assert_eq!(s.pending(), None);
            // SAFETY: pthread_self is this live thread; SIGTERM is blocked in it.
            unsafe { libc::pthread_kill(libc::pthread_self(), libc::SIGTERM) };
            let got = s.pending();
            assert_eq!(s.pending(), None, "taken once");
            got
        });
        assert_eq!(h.join().unwrap(), Some(libc::SIGTERM));
        assert_eq!(name(libc::SIGINT), "SIGINT");
    }
}
