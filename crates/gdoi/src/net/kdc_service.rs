//! `gander kdc` as a service: the UDP loop of [`Kdc`] with its state file, RFC 5424 events
//! (`kdc_events`), OpenMetrics (`kdc_metrics`), SIGHUP to reload the policy (members that left
//! it are revoked, `kdc_schedule`) and SIGTERM/SIGINT to stop. Signals are taken through a
//! signalfd (blocked in every thread, read between datagrams), so no handler runs inside the
//! key server's state changes.

use crate::config::{self, ConfigError, KdcConfig};
use crate::kdc_events::EventWriter;
use crate::kdc_metrics::{self, KdcCounters, MetricsError};
use crate::kdc_state::{load_state, StateError};
use crate::net::kdc::{unix_now, Kdc, KdcError, KdcEvent};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use std::net::UdpSocket;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Why the key server stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// The configuration is refused.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The state file is refused.
    #[error("{0}")]
    State(#[from] StateError),
    /// The key server failed.
    #[error("{0}")]
    Kdc(#[from] KdcError),
    /// The metrics endpoint failed to start.
    #[error("{0}")]
    Metrics(#[from] MetricsError),
    /// Socket, signal or event output error.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The error.
        source: std::io::Error,
    },
}

fn io(what: &'static str) -> impl Fn(std::io::Error) -> ServiceError {
    move |source| ServiceError::Io { what, source }
}

/// `--check`: the configuration and the state file (readable by the key server's user only)
/// are usable. Returns the configuration.
pub fn check(path: &Path) -> Result<KdcConfig, ServiceError> {
    let cfg = config::load(path)?;
    load_state(&cfg.state_path)?;
    Ok(cfg)
}

/// Runs the key server until SIGTERM or SIGINT, with the configuration's certificates (if any)
/// and, in the lab only, a key log of its phase-1 SAs.
pub fn run(
    path: &Path,
    keylog: Option<std::sync::Arc<crate::keylog::KeyLog>>,
) -> Result<(), ServiceError> {
    let mut mask = SigSet::empty();
    for s in [Signal::SIGHUP, Signal::SIGTERM, Signal::SIGINT] {
        mask.add(s);
    }
    // Before any thread starts, so every thread inherits the blocked mask.
    mask.thread_block()
        .map_err(|e| io("block signals")(e.into()))?;
    let sfd = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .map_err(|e| io("signalfd")(e.into()))?;
    let cfg = config::load(path)?;
    let counters = Arc::new(KdcCounters::default());
    let metrics = match cfg.metrics {
        Some(a) => Some(kdc_metrics::serve(a, counters.clone())?),
        None => None,
    };
    let mut events = EventWriter::new(cfg.events.clone()).map_err(io("events"))?;
    let sock = UdpSocket::bind(cfg.listen).map_err(io("bind"))?;
    let listen = sock.local_addr().map_err(io("bind"))?;
    let creds = cfg.credentials.clone();
    let (mut kdc, first) = Kdc::open(sock, cfg.policy, &cfg.state_path, unix_now())?;
    kdc.set_certs(super::cert_members::KdcCerts {
        creds,
        keylog,
        profiles: cfg.profiles.clone(),
    });
    counters.set_policy(kdc.policy().groups.len(), kdc.policy().members.len());
    let emit = |e: &KdcEvent, ev: &mut EventWriter| {
        counters.observe(e);
        let _ = ev.write(e);
    };
    emit(&KdcEvent::Started { listen }, &mut events);
    for e in &first {
        emit(e, &mut events);
    }
    let result = loop {
        match sfd.read_signal() {
            Ok(Some(si)) if si.ssi_signo == Signal::SIGHUP as u32 => {
                match config::load(path) {
                    Ok(c) if c.listen == cfg.listen && c.state_path == cfg.state_path => {
                        kdc.set_profiles(c.profiles);
                        match kdc.reload(c.policy, unix_now()) {
                            Ok(evs) => evs.iter().for_each(|e| emit(e, &mut events)),
                            Err(e) => break Err(e.into()),
                        }
                    }
                    Ok(_) => emit(
                        &KdcEvent::ReloadFailed {
                            reason: "listen or state changed: restart the key server".into(),
                        },
                        &mut events,
                    ),
                    Err(e) => emit(
                        &KdcEvent::ReloadFailed {
                            reason: e.to_string(),
                        },
                        &mut events,
                    ),
                }
                continue;
            }
            Ok(Some(_)) => break Ok(()),
            Ok(None) => {}
            Err(e) => break Err(io("signalfd")(e.into())),
        }
        match kdc.poll(Duration::from_millis(200)) {
            Ok(Some(e)) => emit(&e, &mut events),
            Ok(None) => {}
            Err(e) => break Err(e.into()),
        }
    };
    emit(&KdcEvent::Stopped, &mut events);
    counters.stop();
    if let Some(h) = metrics {
        let _ = h.join();
    }
    result
}
