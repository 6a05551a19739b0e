//! A CPU latency QoS request for as long as the gateway runs (`cpu_wakeup_latency_us`).
//!
//! Why: on an idle CPU the kernel's cpuidle governor picks an idle state whose exit latency it
//! deems affordable. In a virtual machine the deepest state is a halt that exits to the
//! hypervisor (`cpuidle-haltpoll`, and with `haltpoll.guest_halt_poll_ns=0` the guest does not
//! even poll before halting): waking the packet thread on such a vCPU takes an inter-processor
//! interrupt through the hypervisor, tens of microseconds at the tail (docs/gateway.md, "Where
//! the time goes"). A CPU latency QoS request (Linux `Documentation/power/pm_qos_interface.rst`,
//! "CPU latency QoS") caps the exit latency of the idle states the governor may choose for
//! every CPU; with 0 only the polling state is left, so an idle CPU spins in the guest and a
//! wake-up is a flag the idle loop sees, without an interrupt or a hypervisor exit.
//!
//! How: the request is made by writing the value as a binary 32-bit integer to
//! `/dev/cpu_dma_latency` and holds while the file stays open; the kernel drops it when the
//! file is closed, so a crashed gateway leaves no setting behind. The price is power and CPU
//! time: every idle CPU of the host polls instead of halting (in a VM, the vCPUs stay busy on
//! the host), which is why it is an option and why the value is the operator's choice.

use std::fs::File;
use std::io::{self, Write};

/// Where the kernel takes CPU latency QoS requests from user space.
const DEVICE: &str = "/dev/cpu_dma_latency";

/// Why a CPU latency request could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CpuLatencyError {
    /// The device could not be opened (missing, or CAP_SYS_ADMIN/root needed: it is 0600).
    #[error("{DEVICE}: {0} (root or write access to the device needed for cpu_wakeup_latency_us)")]
    Open(#[source] io::Error),
    /// The kernel refused the value.
    #[error("{DEVICE}: writing {value} us: {source}")]
    Write {
        /// The value asked for.
        value: i32,
        /// The kernel's answer.
        #[source]
        source: io::Error,
    },
}

/// A held CPU latency QoS request; dropped, the request ends.
#[derive(Debug)]
pub struct CpuLatency {
    _file: File,
    /// The latency asked for, in microseconds.
    pub us: i32,
}

impl CpuLatency {
    /// Asks the kernel to keep every CPU's idle-state exit latency at or below `us`
    /// microseconds until the returned guard is dropped.
    pub fn request(us: u32) -> Result<Self, CpuLatencyError> {
        let value = encode(us);
        let mut f = File::options()
            .write(true)
            .open(DEVICE)
            .map_err(CpuLatencyError::Open)?;
        f.write_all(&value.to_ne_bytes())
            .map_err(|source| CpuLatencyError::Write { value, source })?;
        Ok(CpuLatency {
            _file: f,
            us: value,
        })
    }
}

/// The kernel takes a signed 32-bit value (`cpu_latency_qos_write`, kernel/power/qos.c); a
/// larger configured value is the same as "no constraint" in practice and is clamped.
fn encode(us: u32) -> i32 {
    i32::try_from(us).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_clamped_to_the_kernels_range() {
        assert_eq!(encode(0), 0);
        assert_eq!(encode(20), 20);
        assert_eq!(encode(u32::MAX), i32::MAX);
    }

    #[test]
    fn the_option_is_read_and_a_negative_value_refused() {
        let cfg = |extra: &str| {
            crate::config::Config::from_toml(
                &format!(
                    "driver = \"l2\"\nkeys = \"k\"\n{extra}\n[l2]\nied = \"a\"\nnet = \"b\"\n"
                ),
                std::path::Path::new("."),
            )
        };
        assert_eq!(
            cfg("").map(|c| c.raw.cpu_wakeup_latency_us).ok(),
            Some(None)
        );
        assert_eq!(
            cfg("cpu_wakeup_latency_us = 0")
                .map(|c| c.raw.cpu_wakeup_latency_us)
                .ok(),
            Some(Some(0))
        );
        assert!(cfg("cpu_wakeup_latency_us = -1").is_err());
    }

    #[test]
    fn a_request_holds_while_the_guard_lives() {
        // Only where this test may write the device (root in CI namespaces); elsewhere the
        // error must be the typed open error, never a panic.
        match CpuLatency::request(0) {
            Ok(g) => {
                assert_eq!(g.us, 0);
                drop(g);
            }
            Err(e) => assert!(matches!(e, CpuLatencyError::Open(_)), "{e}"),
        }
    }
}
