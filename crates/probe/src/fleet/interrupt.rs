//! SIGINT and SIGTERM during a sweep: the first asks the sweep to stop starting devices (the
//! ones being probed finish within their cap, their rows reach the state file, the report is
//! written with the rest marked pending); a second one ends the process at once, which still
//! leaves the state file consistent (every row is one appended line, `state`).
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    if STOP.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe (POSIX.1-2017 2.4.3); nothing else is touched.
        unsafe { libc::_exit(130) };
    }
}

/// Installs the handlers (for the `gander` command; tests call [`request_stop`] instead).
pub fn install() {
    // SAFETY: the handler only swaps an atomic and may call _exit, both async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

/// Whether a stop was asked for.
pub fn stopping() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Asks the sweep to stop as SIGINT would.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}
