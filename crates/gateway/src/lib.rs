//! The bump-in-the-wire security gateway (the Andrade et al. bridging device, done fail-closed).
//!
//! Layers: [`config`] reads the TOML file; [`policy`] is the sans-I/O core that decides per frame
//! (protect, verify, translate, pass, drop) with counters, and [`translate`] builds the frames
//! those decisions call for (strip, GOOSE <-> R-GOOSE); the drivers move bytes between the IED
//! side and the network side and call the core: [`af_packet`] (two raw interfaces),
//! [`nfqueue`] (a kernel bridge plus an iptables NFQUEUE rule), [`udp_relay`] (R-GOOSE over
//! routed networks). The `l2` driver's data path: [`ring`] (memory-mapped `TPACKET_V2` rings),
//! [`bpf`] (the classic BPF programs that pick out IEC 61850 traffic and steer fanout workers),
//! [`bypass`] (the tc rules that bridge everything else in the kernel). [`pcap`] is a tap around
//! any driver; [`driver`] holds what they share;
//! [`tap`] is a receive-only socket and ring for readers that only watch (`gander audit
//! --interface`); [`host_stats`] reads the host's drop counters (interfaces, softnet backlog) for loss
//! accounting; [`service`] ties config, keys, signals and a driver together for `gander gateway`.

pub mod af_packet;
pub mod bpf;
pub mod bypass;
pub mod config;
pub mod cpu_latency;
pub mod driver;
pub mod events;
pub mod floor;
pub mod gdoi_config;
pub mod gdoi_keys;
pub mod host_stats;
pub mod metrics;
pub mod nfqueue;
pub mod pcap;
pub mod policy;
pub mod reason;
pub mod ring;
pub mod service;
pub mod tap;
pub mod translate;
pub mod udp_relay;

pub use config::{Action, Config, ConfigError, Direction, DriverKind};
pub use driver::Control;
pub use policy::{
    Counters, Decision, DirCounters, Forward, KernelCounters, Policy, SocketCounters,
};
pub use reason::DropReason;
