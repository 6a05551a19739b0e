//! Link profiles: the one-way delay, jitter, loss and rate a scenario asks of the path between
//! the server's and the client's network namespaces.
//!
//! The numbers are data with a source each (see `docs/scenarios.md`, "Link profiles"); both
//! emulators (kernel `tc netem` and gander's userspace relay) apply the same profile, and every
//! result says which one did.

use serde::Serialize;

/// One link profile. Delay and jitter are one-way (each direction gets them), as `tc netem` applies them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinkProfile {
    /// Name in scenario files (`loopback`, `lan`, `wan`, `4g`, `5g`).
    pub name: &'static str,
    /// Mean one-way delay added per packet, milliseconds.
    pub delay_ms: f64,
    /// Jitter (uniform, +-), milliseconds.
    pub jitter_ms: f64,
    /// Random loss per packet, percent.
    pub loss_pct: f64,
    /// Bottleneck rate, Mbit/s; 0 = unlimited.
    pub rate_mbit: f64,
    /// Where the numbers come from.
    pub source: &'static str,
}

impl LinkProfile {
    /// Whether this profile needs namespaces and an emulator at all.
    pub fn is_loopback(&self) -> bool {
        self.name == "loopback"
    }
}

/// The built-in profiles.
pub const PROFILES: [LinkProfile; 5] = [
    LinkProfile {
        name: "loopback",
        delay_ms: 0.0,
        jitter_ms: 0.0,
        loss_pct: 0.0,
        rate_mbit: 0.0,
        source: "the RSE paper's set-up: both peers on one host over the loopback interface",
    },
    LinkProfile {
        name: "lan",
        delay_ms: 0.1,
        jitter_ms: 0.02,
        loss_pct: 0.0,
        rate_mbit: 100.0,
        source: "IEC 61850-90-4 station bus: 100 Mbit/s switched Ethernet, sub-millisecond latency per hop",
    },
    LinkProfile {
        name: "wan",
        delay_ms: 10.0,
        jitter_ms: 1.0,
        loss_pct: 0.1,
        rate_mbit: 10.0,
        source: "IEC 61850-90-12 wide-area: utility MPLS/SDH links, 10 ms one-way class, 10 Mbit/s leased capacity",
    },
    LinkProfile {
        name: "4g",
        delay_ms: 25.0,
        jitter_ms: 5.0,
        loss_pct: 0.5,
        rate_mbit: 10.0,
        source: "3GPP TS 22.261 / field LTE measurements: ~50 ms RTT, 10 Mbit/s uplink, 0.5% loss",
    },
    LinkProfile {
        name: "5g",
        delay_ms: 5.0,
        jitter_ms: 1.0,
        loss_pct: 0.1,
        rate_mbit: 50.0,
        source: "3GPP TS 22.261 eMBB (non-URLLC) user-plane: ~10 ms RTT, 50 Mbit/s uplink",
    },
];

/// Looks a profile up by name (case-insensitive).
pub fn lookup(name: &str) -> Option<&'static LinkProfile> {
    PROFILES
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// Names of every profile, for error messages.
pub fn names() -> Vec<&'static str> {
    PROFILES.iter().map(|p| p.name).collect()
}
