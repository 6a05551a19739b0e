//! The kernel bypass of the `l2` driver (`bypass = "tc"`): traffic that is not IEC 61850 is
//! bridged between the two interfaces by the kernel, at tc ingress, and never copied through
//! the gateway; IEC 61850 traffic is dropped at tc ingress, after the gateway's AF_PACKET
//! socket has taken its copy (packet taps run before tc ingress in `__netif_receive_skb_core`,
//! net/core/dev.c; a namespace test checks that order on the running kernel).
//!
//! On each of the two interfaces gander adds a `clsact` qdisc (tc-bpf(8)) with two ingress
//! filters:
//!
//! 1. `bpf da bytecode ...`: the classic program of [`crate::bpf::iec61850_tc_program`], in
//!    direct-action mode: `TC_ACT_SHOT` for IEC 61850 traffic (the same decision as the
//!    socket's filter), `TC_ACT_UNSPEC` (go on) for the rest;
//! 2. `u32 match u32 0 0 action mirred egress redirect dev OTHER` for the rest, or, where
//!    `other` is `drop` for that direction, a one-instruction `bpf da` program returning
//!    `TC_ACT_SHOT`.
//!
//! Only the classifiers and actions this needs are used (`cls_bpf`, `cls_u32`, `act_mirred`):
//! kernels built without `cls_matchall`, `cls_flower` or `act_gact` (this machine's) have them.
//! The qdisc, and with it both filters, is deleted when the guard is dropped (normal stop,
//! error, panic unwinding), so the device is left as it was found. If an interface already has
//! a `clsact` or `ingress` qdisc, gander refuses to start rather than change or delete
//! someone else's rules.

use crate::bpf;
use crate::config::PassDrop;
use std::process::Command;

/// Why the kernel bypass could not be installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BypassError {
    /// `tc` could not be run at all.
    #[error("cannot run tc (iproute2 needed for bypass = \"tc\")")]
    Spawn(#[source] std::io::Error),
    /// The interface already has an ingress/clsact qdisc: not ours to change.
    #[error("{dev} already has a clsact or ingress qdisc; gander does not touch another's tc rules (if it is left over from an earlier gander, remove it: tc qdisc del dev {dev} clsact)")]
    Busy {
        /// The interface.
        dev: String,
    },
    /// A tc command failed.
    #[error("tc {args}: {stderr}")]
    Tc {
        /// The arguments.
        args: String,
        /// What tc printed.
        stderr: String,
    },
}

fn tc(args: &[&str]) -> Result<String, BypassError> {
    let out = Command::new("tc")
        .args(args)
        .output()
        .map_err(BypassError::Spawn)?;
    if !out.status.success() {
        return Err(BypassError::Tc {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The tc rules of one gateway; removed on drop.
#[derive(Debug)]
pub struct TcBypass {
    devs: Vec<String>,
}

impl TcBypass {
    /// Installs the bypass between `ied` and `net` (interface names in the calling thread's
    /// namespace). `other_outbound` applies to non-IEC traffic arriving on `ied`,
    /// `other_inbound` to that arriving on `net`.
    pub fn install(
        ied: &str,
        net: &str,
        other_outbound: PassDrop,
        other_inbound: PassDrop,
    ) -> Result<Self, BypassError> {
        let mut me = TcBypass { devs: Vec::new() };
        for dev in [ied, net] {
            let shown = tc(&["qdisc", "show", "dev", dev])?;
            if shown.contains("qdisc clsact") || shown.contains("qdisc ingress") {
                return Err(BypassError::Busy { dev: dev.into() });
            }
        }
        let iec = bpf::tc_bytecode(&bpf::iec61850_tc_program());
        let shot = bpf::tc_bytecode(&[bpf::Insn {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: bpf::TC_ACT_SHOT,
        }]);
        for (dev, to, other) in [(ied, net, other_outbound), (net, ied, other_inbound)] {
            tc(&["qdisc", "add", "dev", dev, "clsact"])?;
            // From here on a failure drops `me`, which removes what was added.
            me.devs.push(dev.to_string());
            tc(&[
                "filter", "add", "dev", dev, "ingress", "pref", "1", "protocol", "all", "bpf",
                "da", "bytecode", &iec,
            ])?;
            match other {
                PassDrop::Pass => tc(&[
                    "filter", "add", "dev", dev, "ingress", "pref", "2", "protocol", "all", "u32",
                    "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", to,
                ])?,
                PassDrop::Drop => tc(&[
                    "filter", "add", "dev", dev, "ingress", "pref", "2", "protocol", "all", "bpf",
                    "da", "bytecode", &shot,
                ])?,
            };
        }
        Ok(me)
    }

    /// The interfaces that carry gander's rules.
    pub fn devices(&self) -> &[String] {
        &self.devs
    }

    /// Removes the rules now (also done on drop); the first failure is returned.
    pub fn remove(mut self) -> Result<(), BypassError> {
        self.remove_all()
    }

    fn remove_all(&mut self) -> Result<(), BypassError> {
        let mut first = Ok(());
        for dev in std::mem::take(&mut self.devs) {
            if let Err(e) = tc(&["qdisc", "del", "dev", &dev, "clsact"]) {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }
}

impl Drop for TcBypass {
    fn drop(&mut self) {
        if let Err(e) = self.remove_all() {
            eprintln!("gander gateway: removing the tc bypass: {e}");
        }
    }
}
