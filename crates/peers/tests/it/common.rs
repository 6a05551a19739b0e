//! Shared helpers for the peer tests: PKI, configurations, an in-process server.
#![allow(dead_code)]
use gander_peers::client::{self, ClientSummary};
use gander_peers::config::{ClientConfig, ReportsConfig, ServerConfig};
use gander_peers::events::{Event, Sink};
use gander_peers::server::{Server, ServerSummary, StopHandle};
use gander_tls::pki::{self, KeySpec, PkiSet};
use gander_tls::{backend, BackendKind, TlsProfile, TlsVersion};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

pub(crate) fn pki() -> PkiSet {
    static LOCK: OnceLock<Mutex<()>> = OnceLock::new();
    let _g = LOCK
        .get_or_init(|| Mutex::new(()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gander-peer-pki");
    pki::init(&root, &[KeySpec::Rsa(2048)])
        .expect("pki init")
        .remove(0)
        .set
}

pub(crate) fn profile(
    b: BackendKind,
    server: bool,
    versions: &[TlsVersion],
    suites: &[&str],
) -> TlsProfile {
    let set = pki();
    TlsProfile {
        versions: versions.to_vec(),
        cipher_suites: suites.iter().map(|s| s.to_string()).collect(),
        session_resumption: false,
        io_timeout_ms: 3000,
        ..set.profile(b, server)
    }
}

pub(crate) fn server_cfg(tls: Option<TlsProfile>, period_ms: u64) -> ServerConfig {
    ServerConfig {
        listen: "127.0.0.1:0".into(),
        scl: None,
        ied: None,
        access_point: None,
        values: gander_peers::config::ValueMode::Stimulus,
        events: None,
        tls,
        reports: ReportsConfig {
            period_ms,
            ..ReportsConfig::default()
        },
        timeout_ms: 3000,
    }
}

pub(crate) fn client_cfg(
    addr: SocketAddr,
    tls: Option<TlsProfile>,
    connections: u64,
    reports: u64,
) -> ClientConfig {
    ClientConfig {
        connect: addr.to_string(),
        events: None,
        tls,
        connections,
        reports,
        gi: true,
        timeout_ms: 3000,
        report_timeout_ms: 3000,
        rcb: None,
        intg_pd_ms: None,
        reads: 0,
        clocks_synchronised: false,
        control: None,
    }
}

pub(crate) struct Running {
    pub addr: SocketAddr,
    pub sink: Sink,
    stop: StopHandle,
    h: Option<std::thread::JoinHandle<Result<ServerSummary, gander_peers::PeerError>>>,
}

impl Running {
    pub(crate) fn start(cfg: ServerConfig) -> Running {
        let sink = Sink::memory();
        let (addr, stop, h) = Server::bind(cfg, sink.clone()).expect("bind").spawn();
        Running {
            addr,
            sink,
            stop,
            h: Some(h),
        }
    }
    pub(crate) fn finish(mut self) -> (ServerSummary, Vec<Event>) {
        self.stop.stop();
        let s = self.h.take().unwrap().join().unwrap().unwrap();
        (s, self.sink.take())
    }
    /// Waits (bounded) until the server has logged an event named `name`.
    pub(crate) fn wait_for(&self, name: &str) -> Vec<Event> {
        for _ in 0..200 {
            let ev = self.sink.snapshot();
            if ev.iter().any(|e| e.event == name) {
                return ev;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        self.sink.snapshot()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(h) = self.h.take() {
            let _ = h.join();
        }
    }
}

pub(crate) fn run_client(cfg: &ClientConfig) -> (ClientSummary, Vec<Event>) {
    let sink = Sink::memory();
    let b = cfg
        .tls
        .as_ref()
        .map(|p| backend::open(p).expect("client backend"));
    let s = client::run(cfg, b.as_deref(), &sink);
    (s, sink.take())
}

pub(crate) fn error_kinds(ev: &[Event]) -> Vec<String> {
    ev.iter()
        .filter(|e| e.event == "ERROR")
        .filter_map(|e| e.get_str("kind").map(str::to_owned))
        .collect()
}
