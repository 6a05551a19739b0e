//! Shared pieces of the namespace tests: lab set-up (or a clear failure), a gateway on a thread,
//! raw senders and receivers, and secured frames made with the security library.
#![allow(dead_code, unused_imports)]

use gander_gateway::config::Config;
use gander_gateway::driver::Control;
use gander_gateway::policy::Policy;
use gander_sec::frame::protect_frame;
use gander_sec::spdu::RandomIv;
use gander_sec::{default_provider, KeyStore, Profile};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

pub(crate) use gander_testkit::keys::{ATTACKER_KEYS, GW_KEYS};

pub(crate) fn keys(text: &str) -> KeyStore {
    KeyStore::from_toml(text, Path::new("."), default_provider()).expect("keys")
}

pub(crate) use gander_testkit::netns::lab;

/// A running gateway: its control block and worker.
pub(crate) struct Gateway {
    pub ctl: Arc<Control>,
    pub handle: Option<JoinHandle<std::io::Result<Policy>>>,
}

impl Gateway {
    /// Starts `config` (driver from the file) inside namespace `ns` with `keys`.
    pub(crate) fn start(ns: &str, config: &str, keys: KeyStore) -> Gateway {
        let cfg = Config::from_toml(config, Path::new(".")).expect("config");
        let policy = Policy::new(&cfg, keys).expect("policy");
        let ctl = Arc::new(Control::new(None, None));
        let c2 = ctl.clone();
        let ns = ns.to_string();
        let handle = std::thread::spawn(move || {
            gander_lab::enter(&ns)?;
            gander_gateway::service::run_driver(&cfg, policy, &c2)
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        Gateway {
            ctl,
            handle: Some(handle),
        }
    }

    /// Stops the worker and returns the policy with its counters.
    pub(crate) fn stop(mut self) -> Policy {
        self.ctl
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle
            .take()
            .expect("running")
            .join()
            .expect("gateway thread")
            .expect("gateway driver")
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.ctl
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Secures an unsecured frame with key `id` of `store`.
pub(crate) fn secure(store: &KeyStore, id: u32, frame: &[u8]) -> Vec<u8> {
    let key = store.require(id).expect("key");
    protect_frame(Profile::Standard, key, frame, &mut RandomIv, 0)
        .expect("protect")
        .expect("iec frame")
}

/// Paces a burst of sends so the veth backlog (netdev_max_backlog) never overflows.
pub(crate) fn pace(i: usize) {
    if i % 8 == 7 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// A receiver on `dev` in namespace `ns`, running once this returns: up to `n` frames that
/// satisfy `keep`, within `wait`.
pub(crate) fn receive_frames(
    ns: &str,
    dev: &'static str,
    n: usize,
    wait: std::time::Duration,
    keep: impl Fn(&[u8]) -> bool + Send + 'static,
) -> JoinHandle<Vec<Vec<u8>>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let ns = ns.to_string();
    let h = std::thread::spawn(move || {
        gander_lab::enter(&ns).expect("enter");
        let s = gander_gateway::af_packet::RawSocket::open(dev).expect("socket");
        tx.send(()).expect("ready");
        let mut buf = vec![0u8; 70000];
        let mut got = Vec::new();
        let end = std::time::Instant::now() + wait;
        while std::time::Instant::now() < end && got.len() < n {
            while let Some(k) = s.recv(&mut buf, true).expect("recv") {
                if keep(&buf[..k]) {
                    got.push(buf[..k].to_vec());
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        got
    });
    rx.recv().expect("receiver up");
    h
}

/// Binds `addr`, waiting up to a second while it is in use: a socket the test just closed on
/// the same address stays bound while a child process that another test of this binary is
/// spawning still holds a copy of the descriptor table between its fork and its exec (every
/// descriptor, close-on-exec ones included, until exec). On a loaded host that window lasts
/// milliseconds; a clean clone's `make test` hit it once (EADDRINUSE in the IPv6 UDP relay
/// test, 2026-11-28). Every test here that binds an address a socket of its own held before
/// binds through this.
pub(crate) fn bind_udp(addr: &str) -> std::net::UdpSocket {
    let mut tries = 0;
    loop {
        match std::net::UdpSocket::bind(addr) {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => return r.unwrap_or_else(|e| panic!("bind {addr}: {e}")),
        }
    }
}
