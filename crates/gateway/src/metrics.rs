//! The gateway's counters as OpenMetrics text (the exposition format Prometheus scrapes,
//! OpenMetrics 1.0), served over HTTP on a configured local address and/or written to a file.
//!
//! The text is encoded by the Prometheus project's own Rust client (`prometheus-client`), from
//! the snapshot the packet thread publishes every 20 ms (`Control::counters`): a scrape never
//! touches the data path. Every drop reason is exported, the zeros too, so a rate query over
//! `gander_gateway_frames_dropped_total` sees a series appear at 0 rather than from nothing.
//! Metric names are documented in `docs/gateway.md` ("Metrics").

use crate::driver::Control;
use crate::policy::{Counters, DirCounters, DropReason};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The OpenMetrics content type (OpenMetrics 1.0, "Protocol Negotiation").
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What the `gander_gateway_build_info` gauge says about the running gateway.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayInfo {
    /// `l2`, `nfqueue` or `udp`.
    pub driver: String,
    /// The wire profile.
    pub profile: String,
}

#[derive(Debug)]
struct Snapshot {
    counters: Counters,
    info: GatewayInfo,
}

/// The per-direction counters, in the order they are exported: (metric name, help, field).
type DirField = (&'static str, &'static str, fn(&DirCounters) -> u64);

const DIR_FIELDS: [DirField; 9] = [
    ("frames_received", "Frames handed to the policy.", |c| {
        c.received
    }),
    (
        "frames_forwarded",
        "Frames forwarded, for any reason.",
        |c| c.forwarded,
    ),
    (
        "frames_passed",
        "IEC 61850 frames forwarded unchanged by a pass rule or the default.",
        |c| c.passed,
    ),
    (
        "frames_other_passed",
        "Frames that are not IEC 61850 traffic, forwarded.",
        |c| c.other_passed,
    ),
    (
        "frames_protected",
        "Frames secured by a protect rule.",
        |c| c.protected,
    ),
    (
        "frames_verified",
        "Frames whose IEC 62351-6 security verified.",
        |c| c.verified,
    ),
    (
        "frames_stripped",
        "Verified frames forwarded without their security.",
        |c| c.stripped,
    ),
    (
        "frames_translated",
        "Frames translated between layer-2 GOOSE and R-GOOSE.",
        |c| c.translated,
    ),
    (
        "tx_errors",
        "Frames the policy forwarded that the driver could not send: lost inside the gateway.",
        |c| c.tx_errors,
    ),
];

fn direction(dir: &'static str) -> [(&'static str, &'static str); 1] {
    [("direction", dir)]
}

impl Collector for Snapshot {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        let dirs = [
            ("outbound", &self.counters.outbound),
            ("inbound", &self.counters.inbound),
        ];
        let info = ConstGauge::new(1i64);
        let labels = [
            ("driver", self.info.driver.as_str()),
            ("profile", self.info.profile.as_str()),
            ("version", env!("CARGO_PKG_VERSION")),
        ];
        let mut fam = enc.encode_descriptor(
            "build_info",
            "The running gateway: driver, wire profile, gander version.",
            None,
            info.metric_type(),
        )?;
        info.encode(fam.encode_family(&labels)?)?;

        for (name, help, field) in DIR_FIELDS {
            let mut fam =
                enc.encode_descriptor(name, help, None, ConstCounter::new(0u64).metric_type())?;
            for (d, c) in dirs {
                ConstCounter::new(field(c)).encode(fam.encode_family(&direction(d))?)?;
            }
        }

        let mut fam = enc.encode_descriptor(
            "frames_dropped",
            "Frames dropped by the policy, by direction and reason (docs/gateway.md).",
            None,
            ConstCounter::new(0u64).metric_type(),
        )?;
        for (d, c) in dirs {
            // Every known reason (zeros too), then any name this build does not list.
            let known = DropReason::ALL.map(|r| r.name());
            for name in known
                .iter()
                .copied()
                .chain(c.dropped.keys().map(String::as_str))
                .filter({
                    let mut seen = std::collections::BTreeSet::new();
                    move |n| seen.insert(*n)
                })
            {
                let n = c.dropped.get(name).copied().unwrap_or(0);
                let labels = [("direction", d), ("reason", name)];
                ConstCounter::new(n).encode(fam.encode_family(&labels)?)?;
            }
        }

        if let Some(k) = &self.counters.kernel {
            let sides = [("ied", k.ied), ("net", k.net)];
            let mut fam = enc.encode_descriptor(
                "socket_packets",
                "Frames that reached the driver's AF_PACKET socket (PACKET_STATISTICS).",
                None,
                ConstCounter::new(0u64).metric_type(),
            )?;
            for (side, s) in sides {
                ConstCounter::new(s.packets).encode(fam.encode_family(&[("side", side)])?)?;
            }
            let mut fam = enc.encode_descriptor(
                "socket_drops",
                "Frames the kernel dropped because the gateway's socket buffer was full.",
                None,
                ConstCounter::new(0u64).metric_type(),
            )?;
            for (side, s) in sides {
                ConstCounter::new(s.drops).encode(fam.encode_family(&[("side", side)])?)?;
            }
        }

        if let Some(g) = &self.counters.gdoi {
            crate::gdoi_keys::encode_metrics(g, &mut enc)?;
        }
        if let Some(e) = &self.counters.events {
            let mut fam = enc.encode_descriptor(
                "security_events",
                "Security events queued for syslog, and those counted but not logged (rate limit or full queue).",
                None,
                ConstCounter::new(0u64).metric_type(),
            )?;
            for (outcome, n) in [("logged", e.logged), ("suppressed", e.suppressed)] {
                ConstCounter::new(n).encode(fam.encode_family(&[("outcome", outcome)])?)?;
            }
        }
        Ok(())
    }
}

/// The counters as one OpenMetrics exposition (ends with `# EOF`).
pub fn render(counters: &Counters, info: &GatewayInfo) -> String {
    let mut reg = Registry::with_prefix("gander_gateway");
    reg.register_collector(Box::new(Snapshot {
        counters: counters.clone(),
        info: info.clone(),
    }));
    let mut out = String::new();
    // Writing into a String cannot fail; an encoder error would be a bug in a label above.
    if prometheus_client::encoding::text::encode(&mut out, &reg).is_err() {
        out = "# EOF\n".into();
    }
    out
}

fn snapshot(ctl: &Control) -> Counters {
    let mut c = ctl.counters.lock().map(|c| c.clone()).unwrap_or_default();
    c.gdoi = ctl.gdoi.lock().ok().and_then(|g| g.clone());
    c
}

/// Replaces `path` with `text` atomically (a scraper or a textfile collector never reads half).
pub fn write_file(path: &Path, text: &str) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// A running exporter: HTTP listener and/or file writer threads, stopped with the gateway.
pub struct Exporter {
    threads: Vec<JoinHandle<()>>,
    file: Option<PathBuf>,
    ctl: Arc<Control>,
    info: GatewayInfo,
}

/// Where the metrics go (`[metrics]` in the config).
#[derive(Clone, Debug, Default)]
pub struct ExportTo {
    /// Serve `GET /metrics` on this address.
    pub listen: Option<SocketAddr>,
    /// Rewrite this file every `interval`.
    pub file: Option<PathBuf>,
    /// File rewrite interval.
    pub interval: Duration,
}

/// Why the exporter did not start.
#[derive(Debug, thiserror::Error)]
pub enum ExporterError {
    /// The listening socket could not be opened (address in use, not local, ...).
    #[error("metrics: cannot listen on {addr}: {reason}")]
    Listen {
        /// The configured address.
        addr: SocketAddr,
        /// What the system said.
        reason: String,
    },
    /// The first write of the metrics file failed.
    #[error("metrics: cannot write {}", path.display())]
    File {
        /// The configured file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// A thread could not be started.
    #[error("metrics: cannot start a thread")]
    Spawn(#[source] io::Error),
}

impl Exporter {
    /// Starts the exporter. The listener is bound before this returns, so a bad address fails
    /// the gateway's start, not a later scrape.
    pub fn start(
        to: &ExportTo,
        ctl: Arc<Control>,
        info: GatewayInfo,
    ) -> Result<Exporter, ExporterError> {
        let mut threads = Vec::new();
        if let Some(addr) = to.listen {
            let server = tiny_http::Server::http(addr).map_err(|e| ExporterError::Listen {
                addr,
                reason: e.to_string(),
            })?;
            let (ctl, info) = (ctl.clone(), info.clone());
            threads.push(
                std::thread::Builder::new()
                    .name("gander-metrics".into())
                    .spawn(move || serve(server, &ctl, &info))
                    .map_err(ExporterError::Spawn)?,
            );
        }
        if let Some(path) = &to.file {
            write_file(path, &render(&snapshot(&ctl), &info)).map_err(|source| {
                ExporterError::File {
                    path: path.clone(),
                    source,
                }
            })?;
            let (ctl, info, path, every) = (ctl.clone(), info.clone(), path.clone(), to.interval);
            threads.push(
                std::thread::Builder::new()
                    .name("gander-metrics-file".into())
                    .spawn(move || {
                        let mut waited = Duration::ZERO;
                        let step = Duration::from_millis(100);
                        while !ctl.stopping() {
                            std::thread::sleep(step);
                            waited += step;
                            if waited >= every {
                                waited = Duration::ZERO;
                                let _ = write_file(&path, &render(&snapshot(&ctl), &info));
                            }
                        }
                    })
                    .map_err(ExporterError::Spawn)?,
            );
        }
        Ok(Exporter {
            threads,
            file: to.file.clone(),
            ctl,
            info,
        })
    }

    /// Joins the threads (the gateway has stopped) and writes the final counters to the file.
    pub fn finish(self, final_counters: &Counters) {
        for t in self.threads {
            let _ = t.join();
        }
        if let Some(p) = &self.file {
            let _ = write_file(p, &render(final_counters, &self.info));
        }
        drop(self.ctl);
    }
}

/// Answers scrapes until the gateway stops: `GET /metrics` (or `/`) gets the text, anything
/// else a 404 or 405.
fn serve(server: tiny_http::Server, ctl: &Control, info: &GatewayInfo) {
    let header = |k: &str, v: &str| tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()).ok();
    while !ctl.stopping() {
        let req = match server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(_) => break,
        };
        let path = req.url().split('?').next().unwrap_or("").to_string();
        let resp = if *req.method() != tiny_http::Method::Get {
            tiny_http::Response::from_string("only GET\n").with_status_code(405)
        } else if path == "/metrics" || path == "/" {
            let mut r = tiny_http::Response::from_string(render(&snapshot(ctl), info));
            if let Some(h) = header("Content-Type", CONTENT_TYPE) {
                r = r.with_header(h);
            }
            r
        } else {
            tiny_http::Response::from_string("not found: GET /metrics\n").with_status_code(404)
        };
        let _ = req.respond(resp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{KernelCounters, SocketCounters};

    fn info() -> GatewayInfo {
        GatewayInfo {
            driver: "l2".into(),
            profile: "standard".into(),
        }
    }

    #[test]
    fn renders_openmetrics_with_every_reason() {
        let mut c = Counters::default();
        c.inbound.received = 12;
        c.inbound.dropped.insert("bad-mac".into(), 5);
        c.outbound.protected = 7;
        c.kernel = Some(KernelCounters {
            ied: SocketCounters {
                packets: 9,
                drops: 1,
            },
            net: SocketCounters::default(),
        });
        let t = render(&c, &info());
        assert!(t.ends_with("# EOF\n"), "{t}");
        assert!(
            t.contains("# TYPE gander_gateway_frames_dropped counter"),
            "{t}"
        );
        assert!(t.contains(
            "gander_gateway_frames_dropped_total{direction=\"inbound\",reason=\"bad-mac\"} 5"
        ));
        assert!(t.contains(
            "gander_gateway_frames_dropped_total{direction=\"outbound\",reason=\"replay\"} 0"
        ));
        assert!(t.contains("gander_gateway_frames_received_total{direction=\"inbound\"} 12"));
        assert!(t.contains("gander_gateway_frames_protected_total{direction=\"outbound\"} 7"));
        assert!(t.contains("gander_gateway_socket_drops_total{side=\"ied\"} 1"));
        assert!(t.contains("driver=\"l2\""), "{t}");
        // Every reason appears once per direction.
        let n = t
            .lines()
            .filter(|l| l.starts_with("gander_gateway_frames_dropped_total{"))
            .count();
        assert_eq!(n, 2 * DropReason::ALL.len());
        // No events section without [syslog].
        assert!(!t.contains("security_events"));
    }

    #[test]
    fn serves_get_metrics_only() {
        use std::io::{Read, Write};
        let ctl = Arc::new(Control::new(None, None));
        if let Ok(mut c) = ctl.counters.lock() {
            c.outbound.received = 3;
        }
        // Loopback of this test's own process, port chosen by the kernel.
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        let ex = Exporter::start(
            &ExportTo {
                listen: Some(addr),
                ..Default::default()
            },
            ctl.clone(),
            info(),
        )
        .unwrap();
        let get = |req: &str| -> String {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(req.as_bytes()).unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        };
        let ok = get("GET /metrics HTTP/1.0\r\n\r\n");
        assert!(
            ok.starts_with("HTTP/1.0 200") || ok.starts_with("HTTP/1.1 200"),
            "{ok}"
        );
        assert!(ok.contains(CONTENT_TYPE), "{ok}");
        assert!(ok.contains("gander_gateway_frames_received_total{direction=\"outbound\"} 3"));
        assert!(get("GET /other HTTP/1.0\r\n\r\n").contains(" 404 "));
        assert!(get("POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n").contains(" 405 "));
        // A second listener on the same address is refused at start, with the address.
        let e = Exporter::start(
            &ExportTo {
                listen: Some(addr),
                ..Default::default()
            },
            ctl.clone(),
            info(),
        )
        .err()
        .expect("address in use");
        assert!(e.to_string().contains(&addr.to_string()), "{e}");
        ctl.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        ex.finish(&Counters::default());
    }

    #[test]
    fn file_is_written_at_start_and_at_finish() {
        let dir = std::env::temp_dir().join(format!("gander-metrics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gw.om");
        let ctl = Arc::new(Control::new(None, None));
        let ex = Exporter::start(
            &ExportTo {
                file: Some(path.clone()),
                interval: Duration::from_secs(5),
                ..Default::default()
            },
            ctl.clone(),
            info(),
        )
        .unwrap();
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("frames_received_total{direction=\"inbound\"} 0"));
        ctl.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut fin = Counters::default();
        fin.inbound.received = 99;
        ex.finish(&fin);
        let t = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            t.contains("frames_received_total{direction=\"inbound\"} 99"),
            "{t}"
        );
    }
}
