//! Link emulation between the server's and the client's network namespaces.
//!
//! The manager builds the lab's `l2` topology (`docs/lab.md`): the server in `PREFIX-ied`
//! (10.85.0.1), the client in `PREFIX-sub` (10.85.0.2), and between them the gateway namespace's
//! `gi0` and `gn0`, which nothing bridges until an emulator does:
//!
//! * `netem`: kernel `tc netem` on the egress of `gi0` and `gn0`, with [`relay`] forwarding
//!   frames unchanged (used where the kernel has netem);
//! * `userspace`: [`relay`] itself delays, jitters, drops and rate-limits frames.
//!
//! Before each case the achieved one-way delay (half the median TCP connect time over 20
//! connects) and rate (one bulk transfer) are measured through the emulator and stored with the
//! result, beside the requested profile and the emulator's name.
//!
//! * [`profile`]: the link profiles (delay, jitter, loss, rate) with their sources.
pub mod profile;
pub mod relay;

use crate::scenario::EmulatorChoice;
use profile::LinkProfile;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

/// Server and client addresses in the lab's l2 segment.
pub const SERVER_IP: &str = "10.85.0.1";

/// The namespaces of a running link, and its emulator.
pub struct LinkEnv {
    lab: gander_lab::LabGuard,
    netem: bool,
}

/// An emulator running for one case.
pub struct ActiveLink {
    relay: relay::Relay,
    netem_on: Option<String>,
    /// Which emulator runs.
    pub emulator: String,
}

impl Drop for ActiveLink {
    fn drop(&mut self) {
        self.relay.stop();
        if let Some(ns) = &self.netem_on {
            for dev in ["gi0", "gn0"] {
                let _ = Command::new("ip")
                    .args([
                        "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root",
                    ])
                    .status();
            }
        }
    }
}

/// Why link emulation could not be set up or measured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// Not root, or no `ip netns`.
    #[error("link emulation needs network namespaces")]
    NoNamespaces(#[source] gander_lab::LabError),
    /// The lab's namespaces could not be built.
    #[error("lab up")]
    LabUp(#[source] gander_lab::LabError),
    /// The scenario asks for netem, which this kernel lacks.
    #[error("emulator = \"netem\", but this kernel has no tc netem (sch_netem)")]
    NoNetem,
    /// `ip netns exec .. tc` could not be run.
    #[error("cannot run tc")]
    Tc(#[source] std::io::Error),
    /// `tc qdisc add .. netem` failed on an interface.
    #[error("tc netem on {0} failed")]
    NetemFailed(String),
    /// The relay did not start.
    #[error(transparent)]
    Relay(#[from] relay::RelayError),
    /// The probe's sink could not listen in the server namespace.
    #[error("link probe: sink")]
    ProbeSink(#[source] std::io::Error),
    /// The probe's sink did not start within 5 s.
    #[error("link probe: sink did not start")]
    ProbeSinkTimeout,
    /// The probe could not run in the client namespace.
    #[error("link probe: client namespace")]
    ProbeNamespace(#[source] std::io::Error),
    /// The probe could not connect through the emulator.
    #[error("link probe connect")]
    ProbeConnect(#[source] std::io::Error),
    /// The probe's bulk transfer failed.
    #[error("link probe send")]
    ProbeSend(#[source] std::io::Error),
    /// The sink did not answer the bulk transfer.
    #[error("link probe: no answer")]
    ProbeNoAnswer(#[source] std::io::Error),
}

impl LinkEnv {
    /// Builds the namespaces (root needed) and finds out whether the kernel has netem.
    pub fn up() -> Result<LinkEnv, LinkError> {
        gander_lab::check_available().map_err(LinkError::NoNamespaces)?;
        let lab =
            gander_lab::LabGuard::up("imp", gander_lab::Mode::L2).map_err(LinkError::LabUp)?;
        let gw = lab.0.ns(gander_lab::Role::Gw);
        let ok = Command::new("ip")
            .args([
                "netns", "exec", &gw, "tc", "qdisc", "add", "dev", "gi0", "root", "netem", "delay",
                "1ms",
            ])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            let _ = Command::new("ip")
                .args([
                    "netns", "exec", &gw, "tc", "qdisc", "del", "dev", "gi0", "root",
                ])
                .status();
        }
        Ok(LinkEnv { lab, netem: ok })
    }

    /// The server's network namespace.
    pub fn server_ns(&self) -> String {
        self.lab.0.ns(gander_lab::Role::Ied)
    }
    /// The client's network namespace.
    pub fn client_ns(&self) -> String {
        self.lab.0.ns(gander_lab::Role::Sub)
    }
    /// Whether the kernel has `tc netem` (sch_netem).
    pub fn netem_available(&self) -> bool {
        self.netem
    }

    /// Starts the emulator for `profile`.
    pub fn start(
        &self,
        profile: LinkProfile,
        choice: EmulatorChoice,
    ) -> Result<ActiveLink, LinkError> {
        let gw = self.lab.0.ns(gander_lab::Role::Gw);
        let use_netem = match choice {
            EmulatorChoice::Netem if !self.netem => return Err(LinkError::NoNetem),
            EmulatorChoice::Netem => true,
            EmulatorChoice::Auto => self.netem,
            EmulatorChoice::Userspace => false,
        };
        if use_netem {
            for dev in ["gi0", "gn0"] {
                let mut args: Vec<String> = [
                    "netns", "exec", &gw, "tc", "qdisc", "add", "dev", dev, "root", "netem",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                args.extend([
                    "delay".into(),
                    format!("{}ms", profile.delay_ms),
                    format!("{}ms", profile.jitter_ms),
                ]);
                if profile.loss_pct > 0.0 {
                    args.extend(["loss".into(), format!("{}%", profile.loss_pct)]);
                }
                if profile.rate_mbit > 0.0 {
                    args.extend(["rate".into(), format!("{}mbit", profile.rate_mbit)]);
                }
                let st = Command::new("ip")
                    .args(&args)
                    .status()
                    .map_err(LinkError::Tc)?;
                if !st.success() {
                    return Err(LinkError::NetemFailed(dev.to_string()));
                }
            }
            let identity = LinkProfile {
                delay_ms: 0.0,
                jitter_ms: 0.0,
                loss_pct: 0.0,
                rate_mbit: 0.0,
                ..profile
            };
            let relay = relay::Relay::start(&gw, "gi0", "gn0", identity)?;
            return Ok(ActiveLink {
                relay,
                netem_on: Some(gw),
                emulator: "netem (kernel tc) + gander relay forwarding".into(),
            });
        }
        let relay = relay::Relay::start(&gw, "gi0", "gn0", profile)?;
        Ok(ActiveLink {
            relay,
            netem_on: None,
            emulator: "userspace relay (gander, AF_PACKET)".into(),
        })
    }

    /// Measures the achieved one-way delay and rate through the running emulator.
    pub fn measure(&self, profile: &LinkProfile) -> Result<serde_json::Value, LinkError> {
        let (tx, rx) = std::sync::mpsc::channel::<std::io::Result<SocketAddr>>();
        let server_ns = self.server_ns();
        // A sink in the server namespace: reads to EOF, answers one byte.
        std::thread::spawn(move || {
            let r = gander_lab::enter(&server_ns).and_then(|_| TcpListener::bind((SERVER_IP, 0)));
            let l = match r {
                Ok(l) => l,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            let _ = tx.send(l.local_addr());
            let _ = l.set_nonblocking(false);
            for s in l.incoming().take(21) {
                let Ok(mut s) = s else { continue };
                let mut b = vec![0u8; 65536];
                while let Ok(n) = s.read(&mut b) {
                    if n == 0 {
                        break;
                    }
                }
                let _ = s.write_all(b"k");
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(5))
            .map_err(|_| LinkError::ProbeSinkTimeout)?
            .map_err(LinkError::ProbeSink)?;
        let bytes: usize = if profile.rate_mbit > 0.0 {
            ((profile.rate_mbit * 1e6 / 8.0) as usize).clamp(256 << 10, 4 << 20)
        } else {
            2 << 20
        };
        let client_ns = self.client_ns();
        let probe = gander_lab::in_ns(&client_ns, move || -> Result<(Vec<f64>, f64), LinkError> {
            let mut rtts = Vec::new();
            for _ in 0..20 {
                let t = Instant::now();
                let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                    .map_err(LinkError::ProbeConnect)?;
                rtts.push(t.elapsed().as_secs_f64() * 1e3);
                drop(s);
            }
            let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                .map_err(LinkError::ProbeConnect)?;
            s.set_read_timeout(Some(Duration::from_secs(60))).ok();
            let buf = vec![0x55u8; 65536];
            let t = Instant::now();
            let mut left = bytes;
            while left > 0 {
                let n = left.min(buf.len());
                s.write_all(&buf[..n]).map_err(LinkError::ProbeSend)?;
                left -= n;
            }
            s.shutdown(std::net::Shutdown::Write).ok();
            let mut k = [0u8; 1];
            s.read_exact(&mut k).map_err(LinkError::ProbeNoAnswer)?;
            Ok((rtts, t.elapsed().as_secs_f64()))
        })
        .map_err(LinkError::ProbeNamespace)??;
        let (mut rtts, secs) = probe;
        rtts.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        // Nearest-rank median (rank ceil(n/2)), as every report.
        let median = rtts[rtts.len().div_ceil(2) - 1];
        let one_way = median / 2.0;
        // The transfer ends one round trip after the last byte left (its ACK and our answer).
        let rate = bytes as f64 * 8.0 / ((secs - median / 1e3).max(1e-6)) / 1e6;
        Ok(serde_json::json!({
            "requested": { "delay_ms": profile.delay_ms, "jitter_ms": profile.jitter_ms, "loss_pct": profile.loss_pct, "rate_mbit": profile.rate_mbit },
            "achieved": {
                "one_way_delay_ms": one_way,
                "delay_error_ms": one_way - profile.delay_ms,
                "rate_mbit": rate,
                "rate_ratio": if profile.rate_mbit > 0.0 { serde_json::json!(rate / profile.rate_mbit) } else { serde_json::Value::Null },
                "connect_rtt_ms": { "min": rtts[0], "median": median, "max": rtts[rtts.len() - 1], "n": rtts.len() },
                "bulk_bytes": bytes,
            },
            "method": "one-way delay = median TCP connect time / 2 (20 connects); rate = one bulk TCP transfer client->server",
        }))
    }
}
