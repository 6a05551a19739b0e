//! A key server on a thread of its own, for the UDP tests: it polls until the [`Server`] is
//! dropped and keeps every event it reports, so a test can assert on them.

use gander_gdoi::net::kdc::{Kdc, KdcEvent};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    stop: Arc<AtomicBool>,
    pub(crate) events: Arc<Mutex<Vec<KdcEvent>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `kdc`, polling every `poll`, until the returned [`Server`] is dropped.
pub(crate) fn spawn(mut kdc: Kdc, poll: Duration) -> Server {
    let addr = kdc.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let events = Arc::new(Mutex::new(Vec::new()));
    let (s, e) = (stop.clone(), events.clone());
    let thread = std::thread::spawn(move || {
        while !s.load(Ordering::SeqCst) {
            if let Ok(Some(ev)) = kdc.poll(poll) {
                e.lock().unwrap().push(ev);
            }
        }
    });
    Server {
        addr,
        stop,
        events,
        thread: Some(thread),
    }
}
