//! `gander gateway --config FILE`: load the config and keys, start the driver on a worker
//! thread (inside the configured network namespace), and serve signals:
//!
//! * SIGHUP: reload the key file; the worker switches keys between two frames (the sockets keep
//!   queueing meanwhile, so no frame is lost). A key file that does not load is logged and the
//!   old keys stay.
//! * SIGUSR1: print the counters as one JSON line (also every `stats_interval` seconds).
//! * SIGTERM / SIGINT: stop, remove installed rules, print the final counters.

use crate::config::{Config, ConfigError, DriverKind};
use crate::driver::{Control, Reporter};
use crate::events::{EventKind, EventLogger, EventSink, Origin, SecurityEvent};
use crate::metrics::{ExportTo, Exporter, ExporterError, GatewayInfo};
use crate::pcap::PcapTap;
use crate::policy::{Counters, Policy};
use gander_sec::{default_provider, KeyFileError, KeyStore};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What the packet threads run under, set on the calling thread before they are spawned (they
/// inherit its scheduling policy): `rt_priority` (SCHED_FIFO) and, with
/// `cpu_wakeup_latency_us`, a CPU latency QoS request held as long as the returned guard lives.
/// Neither stops the gateway when refused: each is reported and the gateway runs without it.
pub fn prepare_thread(cfg: &Config) -> Option<crate::cpu_latency::CpuLatency> {
    if let Some(prio) = cfg.raw.rt_priority {
        let p = libc::sched_param {
            sched_priority: prio.clamp(1, 99),
        };
        // SAFETY: p is valid; pid 0 is the calling thread.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
            eprintln!(
                "gander gateway: SCHED_FIFO {prio} refused ({}); running at normal priority",
                io::Error::last_os_error()
            );
        }
    }
    let us = cfg.raw.cpu_wakeup_latency_us?;
    match crate::cpu_latency::CpuLatency::request(us) {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("gander gateway: {e}; idle CPUs keep their deeper idle states");
            None
        }
    }
}

/// Runs the configured driver on the calling thread until `ctl.stop`.
pub fn run_driver(cfg: &Config, policy: Policy, ctl: &Control) -> io::Result<Policy> {
    let _latency = prepare_thread(cfg);
    match cfg.raw.driver {
        DriverKind::L2 => crate::af_packet::run(cfg, policy, ctl),
        DriverKind::Udp => crate::udp_relay::run(
            cfg.raw
                .udp
                .as_ref()
                .ok_or_else(|| io::Error::other("no [udp]"))?,
            policy,
            ctl,
        ),
        DriverKind::Nfqueue => crate::nfqueue::run(
            cfg.raw
                .nfqueue
                .as_ref()
                .ok_or_else(|| io::Error::other("no [nfqueue]"))?,
            cfg.raw.other,
            policy,
            ctl,
        ),
    }
}

/// One JSON report line.
pub fn report_json(c: &Counters) -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    serde_json::json!({ "time": t, "counters": c }).to_string()
}

fn reporter(stats_file: Option<PathBuf>) -> Reporter {
    Box::new(move |c: &Counters| {
        let line = report_json(c);
        match &stats_file {
            None => println!("{line}"),
            Some(p) => {
                let tmp = p.with_extension("tmp");
                if std::fs::write(&tmp, format!("{line}\n")).is_ok() {
                    let _ = std::fs::rename(&tmp, p);
                }
            }
        }
    })
}

/// Why the gateway service stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// The gateway config was refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The key file was refused.
    #[error(transparent)]
    Keys(#[from] KeyFileError),
    /// The capture file could not be created.
    #[error("pcap {}", path.display())]
    Pcap {
        /// The capture file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The `[gdoi]` group member did not start.
    #[error(transparent)]
    Gdoi(#[from] crate::gdoi_keys::GdoiKeysError),
    /// The metrics exporter did not start.
    #[error(transparent)]
    Metrics(#[from] ExporterError),
    /// The worker thread could not be started.
    #[error("cannot start the gateway worker")]
    Spawn(#[source] io::Error),
    /// The worker thread panicked.
    #[error("gateway worker panicked")]
    WorkerPanicked,
    /// The driver stopped with an error (sockets, namespace, firewall rules).
    #[error("driver")]
    Driver(#[source] io::Error),
}

fn load_keys(path: &Path) -> Result<KeyStore, KeyFileError> {
    KeyStore::load(path, default_provider())
}

/// Reads and checks the config of `path` and its key file, as `run` would, without touching
/// an interface (`--check`). Returns the warnings: rules that are valid but make some valid
/// traffic undeliverable ([`Policy::warnings`]).
pub fn check(path: &Path) -> Result<Vec<String>, ServiceError> {
    let cfg = Config::load(path)?;
    let keys = load_keys(&cfg.keys_path)?;
    let mut warnings = Policy::new(&cfg, keys)?.warnings().to_vec();
    warnings.extend(host_warnings(
        &cfg,
        Path::new("/run/netns"),
        Path::new("/sys/class/net"),
    ));
    Ok(warnings)
}

/// What on this host would stop the driver from starting: a network namespace that does not
/// exist (`ip netns` keeps them under `netns_dir`), an interface that does not exist here
/// (`net_dir`; not checked inside a namespace, which `--check` does not enter). Warnings, not
/// errors: `--check` may run on another machine than the gateway.
fn host_warnings(cfg: &Config, netns_dir: &Path, net_dir: &Path) -> Vec<String> {
    if let Some(ns) = &cfg.raw.netns {
        if !netns_dir.join(ns).exists() {
            return vec![format!(
                "network namespace {ns:?} does not exist on this host (ip netns list): the gateway would not start here"
            )];
        }
        return Vec::new();
    }
    let interfaces: Vec<&str> = match (&cfg.raw.l2, &cfg.raw.nfqueue) {
        (Some(l), _) if cfg.raw.driver == crate::config::DriverKind::L2 => {
            vec![l.ied.as_str(), l.net.as_str()]
        }
        (_, Some(q)) if cfg.raw.driver == crate::config::DriverKind::Nfqueue => {
            vec![q.ied.as_str(), q.net.as_str()]
        }
        _ => Vec::new(),
    };
    interfaces
        .into_iter()
        .filter(|i| !net_dir.join(i).exists())
        .map(|i| {
            format!("interface {i:?} does not exist on this host: the gateway would not start here")
        })
        .collect()
}

/// An error and its causes on one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Runs the gateway of config file `path` until SIGTERM/SIGINT; returns the final counters.
pub fn run(path: &Path) -> Result<Counters, ServiceError> {
    let cfg = Config::load(path)?;
    let keys = load_keys(&cfg.keys_path)?;
    let mut policy = Policy::new(&cfg, keys)?;
    for w in policy.warnings() {
        eprintln!("gander gateway: warning: {w}");
    }
    let interval =
        (cfg.raw.stats_interval > 0).then(|| Duration::from_secs(cfg.raw.stats_interval));
    let ctl = Arc::new(Control::new(
        interval,
        Some(reporter(cfg.raw.stats_file.clone())),
    ));
    if let Some(p) = &cfg.raw.pcap {
        let tap = PcapTap::create(p).map_err(|source| ServiceError::Pcap {
            path: p.clone(),
            source,
        })?;
        if let Ok(mut t) = ctl.tap.lock() {
            *t = Some(tap);
        }
    }
    // Block the signals in every thread; this thread takes them with sigtimedwait.
    // SAFETY: sigset manipulation on a local set.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGHUP, libc::SIGUSR1, libc::SIGTERM, libc::SIGINT] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let info = GatewayInfo {
        driver: format!("{:?}", cfg.raw.driver).to_lowercase(),
        profile: cfg.profile.to_string(),
    };
    let exporter = start_exporter(&cfg, &ctl, &info)?;
    let (events, logger) = start_logger(&cfg, &mut policy)?;
    // `[gdoi]`: group keys arrive while frames flow (gdoi_keys).
    let member = crate::gdoi_keys::GdoiMember::start(&cfg, ctl.clone(), events.clone())?;
    let worker_ctl = ctl.clone();
    let worker_cfg = cfg.clone();
    let worker = std::thread::Builder::new()
        .name("gander-gateway".into())
        .spawn(move || -> io::Result<Policy> {
            if let Some(ns) = &worker_cfg.raw.netns {
                enter_netns(ns)?;
            }
            run_driver(&worker_cfg, policy, &worker_ctl)
        })
        .map_err(ServiceError::Spawn)?;
    // "Started" only once the driver is up: a driver that fails to open its interfaces (or
    // its namespace, sockets, queue) is a gateway that never started.
    while !ctl.is_running() && !worker.is_finished() {
        std::thread::sleep(Duration::from_millis(2));
    }
    if !ctl.is_running() {
        let error = match worker.join() {
            Ok(Ok(_)) => io::Error::other("the driver ended before it started"),
            Ok(Err(e)) => e,
            Err(_) => return Err(ServiceError::WorkerPanicked),
        };
        emit(
            &events,
            SecurityEvent::new(
                EventKind::GatewayFailed,
                format!("{} driver failed to start", info.driver),
            )
            .with("driver", &info.driver)
            .with("error", chain(&error)),
        );
        drop(member);
        drop(events);
        if let Some(l) = logger {
            let _ = l.join();
        }
        return Err(ServiceError::Driver(error));
    }
    emit(
        &events,
        SecurityEvent::new(
            EventKind::GatewayStarted,
            format!("{} driver started", info.driver),
        )
        .with("driver", &info.driver)
        .with("profile", &info.profile)
        .with("rules", cfg.raw.rules.len()),
    );
    eprintln!(
        "gander gateway: {:?} driver running ({} rules, {} keys, profile {}); SIGHUP reloads keys, SIGUSR1 prints counters",
        cfg.raw.driver,
        cfg.raw.rules.len(),
        load_keys(&cfg.keys_path).map(|k| k.len()).unwrap_or(0),
        cfg.profile
    );
    loop {
        if worker.is_finished() {
            break;
        }
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        };
        // SAFETY: set and ts are valid.
        let sig = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &ts) };
        match sig {
            libc::SIGHUP => match load_keys(&cfg.keys_path) {
                Ok(k) => {
                    eprintln!("gander gateway: SIGHUP: {} keys reloaded", k.len());
                    emit(
                        &events,
                        SecurityEvent::new(
                            EventKind::KeysReloaded,
                            format!("{} keys reloaded", k.len()),
                        )
                        .with("keys", k.len())
                        .with("file", cfg.keys_path.display()),
                    );
                    match &member {
                        // The member rebuilds the store: the file's keys and the group keys.
                        Some(m) => m.request_rebuild(),
                        None => ctl.reload(k),
                    }
                }
                Err(e) => {
                    eprintln!(
                        "gander gateway: SIGHUP: keeping the old keys: {}",
                        chain(&e)
                    );
                    emit(
                        &events,
                        SecurityEvent::new(
                            EventKind::KeysReloadFailed,
                            "key file refused; the old keys stay",
                        )
                        .with("file", cfg.keys_path.display())
                        .with("error", chain(&e)),
                    );
                }
            },
            libc::SIGUSR1 => ctl.report.store(true, std::sync::atomic::Ordering::Relaxed),
            libc::SIGTERM | libc::SIGINT => {
                ctl.stop.store(true, std::sync::atomic::Ordering::Relaxed);
                break;
            }
            _ => {}
        }
    }
    if let Some(m) = &member {
        eprintln!(
            "{}",
            serde_json::json!({"gdoi": "status", "groups": m.status()})
        );
    }
    drop(member);
    let policy = worker
        .join()
        .map_err(|_| ServiceError::WorkerPanicked)?
        .map_err(ServiceError::Driver)?;
    ctl.publish(&policy, true);
    let counters = policy.counters().clone();
    drop(policy);
    let (received, dropped) = [&counters.outbound, &counters.inbound]
        .iter()
        .fold((0, 0), |(r, d), c| (r + c.received, d + c.dropped_total()));
    emit(
        &events,
        SecurityEvent::new(EventKind::GatewayStopped, "gateway stopped")
            .with("received", received)
            .with("dropped", dropped),
    );
    drop(events);
    if let Some(l) = logger {
        // Every sender is gone, so the logger ends once it has written what is queued.
        let _ = l.join();
    }
    if let Some(e) = exporter {
        e.finish(&counters);
    }
    Ok(counters)
}

/// Queues a service event (start, stop, key reload): rare, so not rate-limited; a full queue
/// loses it, as it would any event.
fn emit(events: &Option<std::sync::mpsc::SyncSender<SecurityEvent>>, e: SecurityEvent) {
    if let Some(tx) = events {
        let _ = tx.try_send(e);
    }
}

/// Starts `[metrics]` in the gateway's namespace (a thread that enters it binds the
/// listener, and the exporter's threads inherit it).
fn start_exporter(
    cfg: &Config,
    ctl: &Arc<Control>,
    info: &GatewayInfo,
) -> Result<Option<Exporter>, ServiceError> {
    let Some(m) = cfg.raw.metrics.clone() else {
        return Ok(None);
    };
    let to = ExportTo {
        listen: m.listen,
        file: m.file.clone(),
        interval: Duration::from_secs(m.interval),
    };
    let (ns, ctl, info) = (cfg.raw.netns.clone(), ctl.clone(), info.clone());
    let h = std::thread::Builder::new()
        .name("gander-metrics-start".into())
        .spawn(move || -> Result<Exporter, ServiceError> {
            if let Some(ns) = &ns {
                enter_netns(ns).map_err(ServiceError::Driver)?;
            }
            Ok(Exporter::start(&to, ctl, info)?)
        })
        .map_err(ServiceError::Spawn)?;
    h.join()
        .map_err(|_| ServiceError::WorkerPanicked)?
        .map(Some)
}

type Logger = (
    Option<std::sync::mpsc::SyncSender<SecurityEvent>>,
    Option<std::thread::JoinHandle<()>>,
);

/// Starts `[syslog]`: the logger thread, and the rate-limited sink the policy logs drops into.
fn start_logger(cfg: &Config, policy: &mut Policy) -> Result<Logger, ServiceError> {
    let Some(l) = &cfg.raw.syslog else {
        return Ok((None, None));
    };
    let target = l
        .target
        .parse()
        .map_err(|e| ConfigError::Invalid(format!("[syslog] {e}")))?;
    let origin = Origin {
        facility: crate::events::facility(&l.facility)
            .ok_or_else(|| ConfigError::Invalid(format!("[syslog] facility {:?}", l.facility)))?,
        hostname: crate::events::hostname(),
        app_name: l
            .app_name
            .clone()
            .unwrap_or_else(|| "gander-gateway".into()),
        procid: std::process::id(),
    };
    let (logger, tx) = EventLogger::new(origin, target);
    let h = std::thread::Builder::new()
        .name("gander-syslog".into())
        .spawn(move || logger.run())
        .map_err(ServiceError::Spawn)?;
    policy.set_events(EventSink::new(tx.clone(), l.rate));
    Ok((Some(tx), Some(h)))
}

/// Moves the calling thread into the named network namespace (`ip netns` names it under
/// `/run/netns`): config `netns`, for a gateway whose interfaces live in a namespace.
pub(crate) fn enter_netns(ns: &str) -> io::Result<()> {
    let f = std::fs::File::open(std::path::Path::new("/run/netns").join(ns))
        .map_err(|e| io::Error::new(e.kind(), format!("netns {ns}: {e}")))?;
    nix::sched::setns(&f, nix::sched::CloneFlags::CLONE_NEWNET)
        .map_err(|e| io::Error::other(format!("netns {ns}: setns: {}", e.desc())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{KernelCounters, SocketCounters};

    #[test]
    fn report_keeps_the_keys_and_adds_loss_accounting() {
        let mut c = Counters::default();
        let v: serde_json::Value = serde_json::from_str(&report_json(&c)).unwrap();
        // Drivers without kernel socket counters print none; the existing keys stay.
        assert!(v["counters"].get("kernel").is_none(), "{v}");
        for key in [
            "received",
            "forwarded",
            "passed",
            "other_passed",
            "protected",
            "verified",
            "stripped",
            "translated",
            "dropped",
            "tx_errors",
        ] {
            assert!(v["counters"]["inbound"].get(key).is_some(), "{key}: {v}");
        }
        c.outbound.tx_errors = 2;
        c.kernel = Some(KernelCounters {
            ied: SocketCounters {
                packets: 10,
                drops: 1,
            },
            net: SocketCounters {
                packets: 7,
                drops: 0,
            },
        });
        let v: serde_json::Value = serde_json::from_str(&report_json(&c)).unwrap();
        assert_eq!(v["counters"]["outbound"]["tx_errors"], 2);
        assert_eq!(v["counters"]["kernel"]["ied"]["packets"], 10);
        assert_eq!(v["counters"]["kernel"]["ied"]["drops"], 1);
        assert_eq!(v["counters"]["kernel"]["net"]["packets"], 7);
    }

    /// What would stop the driver here is said by `--check` (a missing interface made the
    /// gateway fail at start while `--check` said "ok").
    #[test]
    fn check_names_a_missing_interface_or_namespace_on_this_host() {
        let dir = tempfile::tempdir().unwrap();
        let (netns, net) = (dir.path().join("netns"), dir.path().join("net"));
        std::fs::create_dir_all(net.join("eth1")).unwrap();
        std::fs::create_dir_all(netns.join("gw")).unwrap();
        let cfg = |extra: &str| {
            Config::from_toml(
                &format!(
                    "driver = \"l2\"\nkeys = \"k.toml\"\n{extra}[l2]\nied = \"eth1\"\nnet = \"nosuch0\"\n"
                ),
                dir.path(),
            )
            .unwrap()
        };
        let w = host_warnings(&cfg(""), &netns, &net);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("\"nosuch0\" does not exist"), "{w:?}");
        // Inside a namespace the interfaces are not looked for; the namespace is.
        assert!(host_warnings(&cfg("netns = \"gw\"\n"), &netns, &net).is_empty());
        let w = host_warnings(&cfg("netns = \"other\"\n"), &netns, &net);
        assert!(w.len() == 1 && w[0].contains("\"other\""), "{w:?}");
    }

    #[test]
    fn socket_counters_accumulate() {
        let mut a = SocketCounters::default();
        a.add(SocketCounters {
            packets: 5,
            drops: 2,
        });
        a.add(SocketCounters {
            packets: 3,
            drops: 0,
        });
        assert_eq!(
            a,
            SocketCounters {
                packets: 8,
                drops: 2
            }
        );
    }
}
