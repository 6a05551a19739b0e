//! The key server's counters as OpenMetrics 1.0 text, served on `GET /metrics` of a configured
//! local address (docs/gdoi.md "Metrics"). The UDP loop counts every event
//! ([`KdcCounters::observe`], atomics only); the HTTP thread reads them, never the key
//! server's state. Refusals are labelled with their RFC 2408 notification, every label
//! exported from the start at zero so a rate query sees a series appear at 0.

use crate::kdc_events::notify_name;
use crate::net::kdc::KdcEvent;
use gander_wire::isakmp::error::notify_type as nt;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The OpenMetrics content type (OpenMetrics 1.0, "Protocol Negotiation").
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The notifications a refusal is labelled with (any other counts as `OTHER`).
const REFUSAL_LABELS: [u16; 13] = [
    nt::INVALID_COOKIE,
    nt::INVALID_EXCHANGE_TYPE,
    nt::INVALID_MESSAGE_ID,
    nt::NO_PROPOSAL_CHOSEN,
    nt::PAYLOAD_MALFORMED,
    nt::INVALID_KEY_INFORMATION,
    nt::INVALID_ID_INFORMATION,
    nt::INVALID_CERTIFICATE,
    nt::INVALID_HASH_INFORMATION,
    nt::AUTHENTICATION_FAILED,
    nt::INVALID_SIGNATURE,
    nt::INVALID_MAJOR_VERSION,
    nt::INVALID_MINOR_VERSION,
];

/// Counters of one key server.
#[derive(Debug, Default)]
pub struct KdcCounters {
    phase1: AtomicU64,
    registrations: AtomicU64,
    refusals: [AtomicU64; REFUSAL_LABELS.len() + 1],
    rekeys: AtomicU64,
    withdrawals: AtomicU64,
    revocations: AtomicU64,
    pushes_sent: AtomicU64,
    push_failures: AtomicU64,
    reloads: AtomicU64,
    reload_failures: AtomicU64,
    groups: AtomicU64,
    members: AtomicU64,
    stop: AtomicBool,
}

fn inc(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl KdcCounters {
    /// Counts one event.
    pub fn observe(&self, e: &KdcEvent) {
        match e {
            KdcEvent::Phase1 { .. } => inc(&self.phase1, 1),
            KdcEvent::Registered { .. } => inc(&self.registrations, 1),
            KdcEvent::Refused { notify, .. } => {
                let i = REFUSAL_LABELS
                    .iter()
                    .position(|n| n == notify)
                    .unwrap_or(REFUSAL_LABELS.len());
                inc(&self.refusals[i], 1);
            }
            KdcEvent::Rekeyed { members, .. } => {
                inc(&self.rekeys, 1);
                inc(&self.pushes_sent, *members as u64);
            }
            KdcEvent::KeysWithdrawn { members, .. } => {
                inc(&self.withdrawals, 1);
                inc(&self.pushes_sent, *members as u64);
            }
            KdcEvent::Revoked {
                identities,
                members,
                ..
            } => {
                inc(&self.revocations, identities.len() as u64);
                inc(&self.pushes_sent, *members as u64);
            }
            KdcEvent::PushFailed { .. } => inc(&self.push_failures, 1),
            KdcEvent::ReloadFailed { .. } => inc(&self.reload_failures, 1),
            KdcEvent::Reloaded { groups, members } => {
                inc(&self.reloads, 1);
                self.set_policy(*groups, *members);
            }
            _ => {}
        }
    }

    /// Sets the policy gauges.
    pub fn set_policy(&self, groups: usize, members: usize) {
        self.groups.store(groups as u64, Ordering::Relaxed);
        self.members.store(members as u64, Ordering::Relaxed);
    }

    /// The OpenMetrics text.
    pub fn render(&self) -> String {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut s = String::new();
        let mut counter = |name: &str, help: &str, v: u64| {
            let _ = write!(
                s,
                "# TYPE gander_kdc_{name} counter\n# HELP gander_kdc_{name} {help}\ngander_kdc_{name}_total {v}\n"
            );
        };
        counter("phase1", "Phase-1 SAs established.", g(&self.phase1));
        counter(
            "registrations",
            "GROUPKEY-PULL registrations completed.",
            g(&self.registrations),
        );
        counter(
            "rekeys",
            "GROUPKEY-PUSH messages announcing a TEK.",
            g(&self.rekeys),
        );
        counter(
            "withdrawals",
            "GROUPKEY-PUSH messages deleting TEKs.",
            g(&self.withdrawals),
        );
        counter(
            "revocations",
            "Member identities revoked from a group.",
            g(&self.revocations),
        );
        counter(
            "pushes_sent",
            "GROUPKEY-PUSH datagrams sent (one per member).",
            g(&self.pushes_sent),
        );
        counter(
            "push_failures",
            "GROUPKEY-PUSH datagrams the socket refused.",
            g(&self.push_failures),
        );
        counter("reloads", "Policy reloads.", g(&self.reloads));
        counter(
            "reload_failures",
            "Policy reloads refused.",
            g(&self.reload_failures),
        );
        let _ = write!(
            s,
            "# TYPE gander_kdc_refusals counter\n# HELP gander_kdc_refusals Datagrams refused, by RFC 2408 notification.\n"
        );
        for (i, c) in self.refusals.iter().enumerate() {
            let label = REFUSAL_LABELS.get(i).map_or("OTHER", |n| notify_name(*n));
            let _ = writeln!(
                s,
                "gander_kdc_refusals_total{{notify=\"{label}\"}} {}",
                g(c)
            );
        }
        for (name, help, v) in [
            ("groups", "Groups in the policy.", g(&self.groups)),
            ("members", "Members in the policy.", g(&self.members)),
        ] {
            let _ = write!(
                s,
                "# TYPE gander_kdc_{name} gauge\n# HELP gander_kdc_{name} {help}\ngander_kdc_{name} {v}\n"
            );
        }
        s.push_str("# EOF\n");
        s
    }

    /// Makes [`serve`]'s thread return.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Why the exporter could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// The address cannot be listened on.
    #[error("metrics: cannot listen on {addr}: {reason}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
    /// The thread could not start.
    #[error("metrics: cannot start a thread: {0}")]
    Spawn(#[source] std::io::Error),
}

/// Serves `GET /metrics` (or `/`) on `addr` in a thread until [`KdcCounters::stop`]. Bound
/// before it returns, so a bad address fails the key server's start.
pub fn serve(addr: SocketAddr, c: Arc<KdcCounters>) -> Result<JoinHandle<()>, MetricsError> {
    let server = tiny_http::Server::http(addr).map_err(|e| MetricsError::Listen {
        addr,
        reason: e.to_string(),
    })?;
    std::thread::Builder::new()
        .name("gander-kdc-metrics".into())
        .spawn(move || {
            while !c.stop.load(Ordering::Relaxed) {
                let req = match server.recv_timeout(Duration::from_millis(200)) {
                    Ok(Some(r)) => r,
                    Ok(None) => continue,
                    Err(_) => break,
                };
                let path = req.url().split('?').next().unwrap_or("").to_string();
                let resp = if *req.method() != tiny_http::Method::Get {
                    tiny_http::Response::from_string("only GET\n").with_status_code(405)
                } else if path == "/metrics" || path == "/" {
                    let mut r = tiny_http::Response::from_string(c.render());
                    if let Ok(h) = tiny_http::Header::from_bytes(&b"Content-Type"[..], CONTENT_TYPE)
                    {
                        r = r.with_header(h);
                    }
                    r
                } else {
                    tiny_http::Response::from_string("not found: GET /metrics\n")
                        .with_status_code(404)
                };
                let _ = req.respond(resp);
            }
        })
        .map_err(MetricsError::Spawn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn counts_and_serves_openmetrics() {
        let c = Arc::new(KdcCounters::default());
        c.observe(&KdcEvent::Refused {
            peer: "192.0.2.1:848".parse().unwrap(),
            reason: "x".into(),
            notify: nt::INVALID_ID_INFORMATION,
        });
        c.observe(&KdcEvent::Rekeyed {
            group: "g".into(),
            seq: 2,
            key_id: 3,
            activates_at: 0,
            members: 5,
        });
        let t = c.render();
        assert!(t.contains("gander_kdc_refusals_total{notify=\"INVALID-ID-INFORMATION\"} 1\n"));
        assert!(t.contains("gander_kdc_refusals_total{notify=\"AUTHENTICATION-FAILED\"} 0\n"));
        assert!(t.contains("gander_kdc_rekeys_total 1\n"));
        assert!(t.contains("gander_kdc_pushes_sent_total 5\n"));
        assert!(t.ends_with("# EOF\n"));
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        let h = serve(addr, c.clone()).unwrap();
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
        let mut body = String::new();
        s.read_to_string(&mut body).unwrap();
        assert!(body.contains("200"), "{body}");
        assert!(body.contains("application/openmetrics-text"));
        assert!(body.contains("gander_kdc_rekeys_total 1"));
        c.stop();
        h.join().unwrap();
    }
}
