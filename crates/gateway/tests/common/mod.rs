//! Shared pieces of the namespace tests: lab set-up (or a clear failure), a gateway on a thread,
//! raw senders and receivers, and secured frames made with the security library.
#![allow(dead_code)]

use gander_gateway::config::Config;
use gander_gateway::driver::Control;
use gander_gateway::policy::Policy;
use gander_lab::{LabGuard, Mode};
use gander_sec::frame::protect_frame;
use gander_sec::spdu::RandomIv;
use gander_sec::{default_provider, KeyStore, Profile};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The gateway's keys: 1 is the live key, 5 has expired.
pub const GW_KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 2
mac = "hmac-sha256-128"
key_ascii = "ied-outbound-key"
[[key]]
id = 5
mac = "hmac-sha256-128"
key_ascii = "expired-expired!"
not_before = 0
not_after = 1
"#;

/// What an attacker holds: key 1 with the wrong secret, key 9 (unknown to the gateway), and
/// the expired key 5.
pub const ATTACKER_KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "not-the-real-key"
[[key]]
id = 9
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 5
mac = "hmac-sha256-128"
key_ascii = "expired-expired!"
"#;

pub fn keys(text: &str) -> KeyStore {
    KeyStore::from_toml(text, Path::new("."), default_provider()).expect("keys")
}

/// A lab, or None when GANDER_SKIP_NETNS=1 and namespaces are unavailable; otherwise a
/// failure that says why.
pub fn lab(tag: &str, mode: Mode) -> Option<LabGuard> {
    if let Err(e) = gander_lab::check_available() {
        if std::env::var("GANDER_SKIP_NETNS").as_deref() == Ok("1") {
            eprintln!("skipping namespace test: {e}");
            return None;
        }
        panic!("namespace test cannot run: {e}. Run as root, or set GANDER_SKIP_NETNS=1 to skip.");
    }
    Some(LabGuard::up(tag, mode).unwrap_or_else(|e| panic!("lab up: {e}")))
}

/// A running gateway: its control block and worker.
pub struct Gateway {
    pub ctl: Arc<Control>,
    pub handle: Option<JoinHandle<std::io::Result<Policy>>>,
}

impl Gateway {
    /// Starts `config` (driver from the file) inside namespace `ns` with `keys`.
    pub fn start(ns: &str, config: &str, keys: KeyStore) -> Gateway {
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
    pub fn stop(mut self) -> Policy {
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
pub fn secure(store: &KeyStore, id: u32, frame: &[u8]) -> Vec<u8> {
    let key = store.require(id).expect("key");
    protect_frame(Profile::Standard, key, frame, &mut RandomIv, 0)
        .expect("protect")
        .expect("iec frame")
}

/// Paces a burst of sends so the veth backlog (netdev_max_backlog) never overflows.
pub fn pace(i: usize) {
    if i % 8 == 7 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}
