//! The `nfqueue` driver: the gateway paper's design done fail-closed. A Linux bridge joins the IED
//! port and the network port; with `br_netfilter`, bridged IPv4 UDP traverses iptables' FORWARD
//! chain and bridged IPv6 UDP ip6tables' (`ipv6 = true`, the default), where rules that gander
//! installs (and removes on exit) queue it to this process (`-j NFQUEUE`, no `--queue-bypass`:
//! if gander is not running, UDP is dropped, not passed). The verdict carries the policy's bytes
//! (protected, stripped; for IPv6 with the mandatory UDP checksum recomputed) or drops the
//! packet. With `ipv6 = false`, or where no `ip6tables` exists (then the driver refuses to start
//! unless told `ipv6 = false`), IPv6 UDP to or from port 102 is dropped by ebtables instead.
//!
//! The netlink protocol (nfnetlink_queue) is spoken directly over an AF_NETLINK socket, so no
//! C library is needed. On this kernel only iptables' NFQUEUE target works (nftables' `queue`
//! statement is not built), so rules are installed with `iptables`.
//!
//! Limits: the kernel hands over IPv4 packets, not Ethernet frames, so a rule's `src_mac` cannot
//! match here and `translate` to layer 2 is refused (`unsupported`).
//! The policy takes the queued IP packets as they are ([`Policy::handle_ip`]): no Ethernet
//! header is made up for it, and a forwarded packet needs no unwrapping. What iptables
//! never sees is dropped across the bridge by `ebtables` rules (fail closed; see [`EBTABLES`]):
//! layer-2 GOOSE, SV and GSE management, IPv6 UDP to or from port 102 when IPv6 is not queued,
//! and every tag stack the bridge cannot hand to iptables (802.1ad and pre-standard QinQ outer
//! tags, two 802.1Q tags, IEC 61850 EtherTypes or IPv6 behind an 802.1Q tag). IPv4 behind one
//! 802.1Q tag is queued like untagged IPv4 (`bridge-nf-filter-vlan-tagged=1`). Use the `l2`
//! driver for layer-2 GOOSE and SV.

use crate::af_packet::ifindex;
use crate::config::{Direction, NfqueueToml, PassDrop};
use crate::driver::{tap_built, unix_now, Control, Housekeeping};
use crate::policy::{Decision, Forward, Policy, OUTPUT_CAPACITY};
use gander_wire::ethernet::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;

const NETLINK_NETFILTER: libc::c_int = 12;
const NFNL_SUBSYS_QUEUE: u16 = 3;
const NFQNL_MSG_PACKET: u16 = 0;
const NFQNL_MSG_VERDICT: u16 = 1;
const NFQNL_MSG_CONFIG: u16 = 2;
const NFQA_CFG_CMD: u16 = 1;
const NFQA_CFG_PARAMS: u16 = 2;
const NFQNL_CFG_CMD_BIND: u8 = 1;
const NFQNL_CFG_CMD_UNBIND: u8 = 2;
const NFQNL_COPY_PACKET: u8 = 2;
const NFQA_PACKET_HDR: u16 = 1;
const NFQA_VERDICT_HDR: u16 = 2;
const NFQA_IFINDEX_PHYSINDEV: u16 = 7;
const NFQA_PAYLOAD: u16 = 10;
const NF_DROP: u32 = 0;
const NF_ACCEPT: u32 = 1;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_ERROR: u16 = 2;

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Builds one nfnetlink message: nlmsghdr, nfgenmsg, attributes.
fn message(msg: u16, flags: u16, queue: u16, attrs: &[(u16, &[u8])]) -> Vec<u8> {
    let mut b = Vec::new();
    message_into(&mut b, msg, flags, queue, attrs);
    b
}

/// [`message`] written into `b` (cleared first): the verdict of every queued packet is built
/// in one buffer the queue loop keeps, so a verdict allocates nothing once it has grown.
fn message_into(b: &mut Vec<u8>, msg: u16, flags: u16, queue: u16, attrs: &[(u16, &[u8])]) {
    b.clear();
    b.resize(16, 0);
    b.extend_from_slice(&[libc::AF_UNSPEC as u8, 0]);
    b.extend_from_slice(&queue.to_be_bytes());
    for (t, v) in attrs {
        let len = 4 + v.len();
        b.extend_from_slice(&(len as u16).to_ne_bytes());
        b.extend_from_slice(&t.to_ne_bytes());
        b.extend_from_slice(v);
        b.resize(align4(b.len()), 0);
    }
    let total = b.len() as u32;
    b[0..4].copy_from_slice(&total.to_ne_bytes());
    b[4..6].copy_from_slice(&((NFNL_SUBSYS_QUEUE << 8) | msg).to_ne_bytes());
    b[6..8].copy_from_slice(&(NLM_F_REQUEST | flags).to_ne_bytes());
}

struct Netlink {
    fd: OwnedFd,
}

impl Netlink {
    fn open() -> io::Result<Self> {
        // SAFETY: plain socket call.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                NETLINK_NETFILTER,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: zeroed sockaddr_nl is valid (pid 0: the kernel assigns one).
        let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        sa.nl_family = libc::AF_NETLINK as u16;
        // SAFETY: sa is a valid sockaddr_nl.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &sa as *const libc::sockaddr_nl as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let big = 8i32 << 20;
        // SAFETY: valid option value.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                &big as *const i32 as *const libc::c_void,
                4,
            );
        }
        Ok(Netlink { fd })
    }

    fn send(&self, b: &[u8]) -> io::Result<()> {
        // SAFETY: b is a valid buffer; the kernel is the destination (zeroed sockaddr_nl).
        let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        sa.nl_family = libc::AF_NETLINK as u16;
        // SAFETY: as above.
        let r = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                b.as_ptr() as *const libc::c_void,
                b.len(),
                0,
                &sa as *const libc::sockaddr_nl as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn recv(&self, buf: &mut [u8], timeout_ms: i32) -> io::Result<usize> {
        if !crate::driver::poll_fds(&[self.fd.as_raw_fd()], timeout_ms)?[0] {
            return Ok(0);
        }
        // SAFETY: buf is a valid buffer.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) {
                return Ok(0);
            }
            return Err(e);
        }
        Ok(n as usize)
    }

    /// Sends a config request and waits for its acknowledgement.
    fn config(&self, queue: u16, attrs: &[(u16, &[u8])]) -> io::Result<()> {
        self.send(&message(NFQNL_MSG_CONFIG, NLM_F_ACK, queue, attrs))?;
        let mut buf = vec![0u8; 8192];
        for _ in 0..50 {
            let n = self.recv(&mut buf, 100)?;
            if n >= 20 && u16::from_ne_bytes([buf[4], buf[5]]) == NLMSG_ERROR {
                let err = i32::from_ne_bytes([buf[16], buf[17], buf[18], buf[19]]);
                if err == 0 {
                    return Ok(());
                }
                return Err(io::Error::from_raw_os_error(-err));
            }
        }
        Err(io::Error::other("nfnetlink_queue: no acknowledgement"))
    }
}

/// The parts of one queued packet.
struct Packet<'a> {
    id: u32,
    physin: Option<u32>,
    payload: &'a [u8],
}

/// Parses the attributes of one NFQNL_MSG_PACKET (after nlmsghdr + nfgenmsg).
fn parse_packet(attrs: &[u8]) -> Option<Packet<'_>> {
    let (mut id, mut physin, mut payload) = (None, None, None);
    let mut at = 0;
    while at + 4 <= attrs.len() {
        let len = u16::from_ne_bytes([attrs[at], attrs[at + 1]]) as usize;
        let typ = u16::from_ne_bytes([attrs[at + 2], attrs[at + 3]]) & 0x3fff;
        if len < 4 || at + len > attrs.len() {
            return None;
        }
        let v = &attrs[at + 4..at + len];
        match typ {
            NFQA_PACKET_HDR if v.len() >= 4 => {
                id = Some(u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
            }
            NFQA_IFINDEX_PHYSINDEV if v.len() >= 4 => {
                physin = Some(u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
            }
            NFQA_PAYLOAD => payload = Some(v),
            _ => {}
        }
        at += align4(len);
    }
    Some(Packet {
        id: id?,
        physin,
        payload: payload?,
    })
}

/// Runs `iptables` or `ip6tables` (both from Debian's iptables package).
fn xtables(cmd: &str, args: &[&str]) -> io::Result<bool> {
    let s = Command::new(cmd)
        .arg("-w")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{cmd}: {e} (install the iptables package)"),
            )
        })?;
    Ok(s.success())
}

/// Whether `ip6tables` can be run here: the driver refuses to queue IPv6 without it, with a
/// message that names the fix, instead of letting IPv6 R-GOOSE fall through.
pub fn ip6tables_available() -> bool {
    xtables_runs("ip6tables")
}

fn xtables_runs(cmd: &str) -> bool {
    Command::new(cmd)
        .args(["-w", "-L", "FORWARD", "-n"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The ebtables rules (FORWARD chain) that drop what the queue cannot see: whatever an IED
/// could read as IEC 61850 traffic without it having crossed iptables.
pub const EBTABLES: &[&[&str]] = &[
    &["-p", "0x88b8"],
    &["-p", "0x88ba"],
    &["-p", "0x88b9"],
    &["-p", "0x88a8"],
    &["-p", "0x9100"],
    &["-p", "0x9200"],
    &["-p", "0x9300"],
    &["-p", "802_1Q", "--vlan-encap", "802_1Q"],
    &["-p", "802_1Q", "--vlan-encap", "0x88a8"],
    &["-p", "802_1Q", "--vlan-encap", "0x88b8"],
    &["-p", "802_1Q", "--vlan-encap", "0x88ba"],
    &["-p", "802_1Q", "--vlan-encap", "0x88b9"],
    &["-p", "802_1Q", "--vlan-encap", "IPv6"],
];

/// The ebtables rules added when IPv6 is not queued (`ipv6 = false`): IPv6 R-GOOSE/R-SV would
/// otherwise cross the bridge unchecked.
pub const EBTABLES_NO_IPV6: &[&[&str]] = &[
    &["-p", "IPv6", "--ip6-proto", "udp", "--ip6-dport", "102"],
    &["-p", "IPv6", "--ip6-proto", "udp", "--ip6-sport", "102"],
];

fn ebtables(op: &str, rule: &[&str]) -> bool {
    let mut args = vec![op, "FORWARD"];
    args.extend_from_slice(rule);
    args.extend_from_slice(&["-j", "DROP"]);
    Command::new("ebtables")
        .args(&args)
        .status()
        .is_ok_and(|s| s.success())
}

/// The iptables/ip6tables (and ebtables) rules of one queue; removed on drop.
struct Rules {
    chain: String,
    /// The xtables commands whose chain is installed (`iptables`, and `ip6tables` with IPv6).
    tables: Vec<&'static str>,
    /// The ebtables rules installed, in order.
    ebtables: Vec<&'static [&'static str]>,
}

impl Rules {
    /// Queues bridged UDP of one family to `queue`.
    fn install_family(
        cmd: &'static str,
        chain: &str,
        queue: u16,
        other: PassDrop,
    ) -> io::Result<bool> {
        let _ = xtables(cmd, &["-N", chain]);
        let q = queue.to_string();
        let jump = ["-m", "physdev", "--physdev-is-bridged", "-j", chain];
        let with = |op: &'static str| {
            let mut v = vec![op, "FORWARD"];
            v.extend_from_slice(&jump);
            v
        };
        Ok(xtables(cmd, &["-F", chain])?
            && xtables(
                cmd,
                &["-A", chain, "-p", "udp", "-j", "NFQUEUE", "--queue-num", &q],
            )?
            && (other == PassDrop::Pass || xtables(cmd, &["-A", chain, "-j", "DROP"])?)
            && (xtables(cmd, &with("-C"))? || xtables(cmd, &with("-I"))?))
    }

    fn install(queue: u16, other: PassDrop, ipv6: bool) -> io::Result<Rules> {
        let chain = format!("GANDER-Q{queue}");
        // Bridged IPv4 (and IPv6), also behind one 802.1Q tag, must traverse iptables.
        let mut knobs = vec!["bridge-nf-call-iptables", "bridge-nf-filter-vlan-tagged"];
        if ipv6 {
            knobs.push("bridge-nf-call-ip6tables");
        }
        for knob in knobs {
            std::fs::write(format!("/proc/sys/net/bridge/{knob}"), "1")
                .map_err(|e| io::Error::new(e.kind(), format!("{knob}: {e}")))?;
        }
        let mut rules = Rules {
            chain: chain.clone(),
            tables: vec![],
            ebtables: vec![],
        };
        let families: &[&'static str] = if ipv6 {
            &["iptables", "ip6tables"]
        } else {
            &["iptables"]
        };
        for cmd in families {
            rules.tables.push(cmd);
            if !Self::install_family(cmd, &chain, queue, other)? {
                return Err(io::Error::other(format!(
                    "could not install the {cmd} NFQUEUE rules (CAP_NET_ADMIN and the iptables package are needed)"
                )));
            }
        }
        // Without these the bridge would forward IEC 61850 traffic that no check saw: refuse
        // to run rather than warn.
        let extra: &[&'static [&'static str]] = if ipv6 { &[] } else { EBTABLES_NO_IPV6 };
        for rule in EBTABLES.iter().chain(extra) {
            if !ebtables("-I", rule) {
                return Err(io::Error::other(format!(
                    "could not install the ebtables rule `{}` (the nfqueue driver needs ebtables to fail closed)",
                    rule.join(" ")
                )));
            }
            rules.ebtables.push(rule);
        }
        Ok(rules)
    }
}

impl Drop for Rules {
    fn drop(&mut self) {
        let c = self.chain.clone();
        for cmd in &self.tables {
            let _ = xtables(
                cmd,
                &[
                    "-D",
                    "FORWARD",
                    "-m",
                    "physdev",
                    "--physdev-is-bridged",
                    "-j",
                    &c,
                ],
            );
            let _ = xtables(cmd, &["-F", &c]);
            let _ = xtables(cmd, &["-X", &c]);
        }
        for rule in &self.ebtables {
            ebtables("-D", rule);
        }
    }
}

/// Refuses to start when IPv6 is to be queued (`ipv6 = true`, rules installed by gander) and
/// `ip6tables` does not run: IPv6 R-GOOSE would otherwise meet no rule that queues it.
fn check_ipv6_support(cfg: &NfqueueToml, ip6tables: impl Fn() -> bool) -> io::Result<()> {
    if cfg.ipv6 && cfg.install_rules && !ip6tables() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "nfqueue driver: ip6tables is not available, so IPv6 R-GOOSE/R-SV cannot be queued: install the iptables package (ip6tables), or set `ipv6 = false` in [nfqueue] to have ebtables drop IPv6 UDP to and from port 102",
        ));
    }
    Ok(())
}

/// An IP packet behind a neutral Ethernet header (zero addresses, the EtherType its version
/// nibble names), for the pcap tap only: the tap writes Ethernet frames.
fn ip_in_ethernet(packet: &[u8]) -> Vec<u8> {
    let ethertype = match packet.first().map(|b| b >> 4) {
        Some(6) => ETHERTYPE_IPV6,
        _ => ETHERTYPE_IPV4,
    };
    let mut f = Vec::with_capacity(14 + packet.len());
    f.extend_from_slice(&[0u8; 12]);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(packet);
    f
}

/// Runs the queue until `ctl.stop`; installs and removes the rules if configured.
pub fn run(
    cfg: &NfqueueToml,
    other: PassDrop,
    mut policy: Policy,
    ctl: &Control,
) -> io::Result<Policy> {
    check_ipv6_support(cfg, ip6tables_available)?;
    let ied_index = ifindex(&cfg.ied)? as u32;
    let _net_index = ifindex(&cfg.net)?;
    let nl = Netlink::open()?;
    let q = cfg.queue;
    // Unbind first in case a previous run died; then bind and copy whole packets.
    let _ = nl.config(q, &[(NFQA_CFG_CMD, &[NFQNL_CFG_CMD_UNBIND, 0, 0, 0])]);
    nl.config(q, &[(NFQA_CFG_CMD, &[NFQNL_CFG_CMD_BIND, 0, 0, 0])])
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("bind queue {q}: {e} (CAP_NET_ADMIN needed)"),
            )
        })?;
    let mut params = 0xffffu32.to_be_bytes().to_vec();
    params.push(NFQNL_COPY_PACKET);
    nl.config(q, &[(NFQA_CFG_PARAMS, &params)])?;
    let rules = if cfg.install_rules {
        Some(Rules::install(q, other, cfg.ipv6)?)
    } else {
        None
    };
    let mut buf = vec![0u8; 1 << 17];
    // A packet the policy rewrites is written into `out`, its verdict into `verdict`: both
    // kept for the queue's life, so no packet allocates.
    let mut out = Vec::with_capacity(OUTPUT_CAPACITY);
    let mut verdict = Vec::with_capacity(OUTPUT_CAPACITY + 64);
    let mut hk = Housekeeping::new();
    let mut verdict_errors = 0u64;
    ctl.set_running();
    while !ctl.stopping() {
        let n = nl.recv(&mut buf, 50)?;
        let now = unix_now();
        let mut at = 0;
        while at + 16 <= n {
            let len = u32::from_ne_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]) as usize;
            let typ = u16::from_ne_bytes([buf[at + 4], buf[at + 5]]);
            if len < 16 || at + len > n {
                break;
            }
            if typ == NLMSG_ERROR && len >= 20 {
                let err =
                    i32::from_ne_bytes([buf[at + 16], buf[at + 17], buf[at + 18], buf[at + 19]]);
                if err != 0 {
                    verdict_errors += 1;
                    if verdict_errors == 1 {
                        eprintln!(
                            "gander gateway: the kernel refused a verdict: {}",
                            io::Error::from_raw_os_error(-err)
                        );
                    }
                }
            }
            if typ == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET && len >= 20 {
                if let Some(p) = parse_packet(&buf[at + 20..at + len]) {
                    let dir = if p.physin == Some(ied_index) {
                        Direction::Outbound
                    } else {
                        Direction::Inbound
                    };
                    // The policy judges the IP packet as the queue hands it over; what it
                    // forwards is an IP packet again (a rule whose output would be layer 2 is
                    // refused by the policy as `unsupported`).
                    let (code, payload): (u32, Option<&[u8]>) =
                        match policy.handle_ip(dir, p.payload, now, &mut out) {
                            Decision::Forward(f) => {
                                tap_built(ctl, || Some(ip_in_ethernet(&f)));
                                match f {
                                    // The packet as it came: accepted unchanged, not copied
                                    // back to the kernel.
                                    Forward::Unchanged(_) => (NF_ACCEPT, None),
                                    Forward::Rewritten(o) => (NF_ACCEPT, Some(o)),
                                }
                            }
                            Decision::Drop(_) => (NF_DROP, None),
                        };
                    // nfqnl_msg_verdict_hdr: verdict and packet id, both big-endian.
                    let mut vh = [0u8; 8];
                    vh[..4].copy_from_slice(&code.to_be_bytes());
                    vh[4..].copy_from_slice(&p.id.to_be_bytes());
                    let hdr: (u16, &[u8]) = (NFQA_VERDICT_HDR, &vh);
                    let with_payload;
                    let attrs: &[(u16, &[u8])] = match payload {
                        Some(o) => {
                            with_payload = [hdr, (NFQA_PAYLOAD, o)];
                            &with_payload
                        }
                        None => std::slice::from_ref(&hdr),
                    };
                    message_into(&mut verdict, NFQNL_MSG_VERDICT, 0, q, attrs);
                    nl.send(&verdict)?;
                }
            }
            at += align4(len);
        }
        hk.tick(ctl, &mut policy);
    }
    let _ = nl.config(q, &[(NFQA_CFG_CMD, &[NFQNL_CFG_CMD_UNBIND, 0, 0, 0])]);
    drop(rules);
    ctl.publish(&policy, false);
    Ok(policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(ipv6: bool, install_rules: bool) -> NfqueueToml {
        NfqueueToml {
            queue: 0,
            ied: "a".into(),
            net: "b".into(),
            install_rules,
            ipv6,
        }
    }

    #[test]
    fn a_verdict_written_over_a_longer_one_is_the_fresh_message() {
        let payload = [0xaau8; 101];
        let mut b = Vec::new();
        let with_payload: [(u16, &[u8]); 2] =
            [(NFQA_VERDICT_HDR, &[0; 8]), (NFQA_PAYLOAD, &payload)];
        message_into(&mut b, NFQNL_MSG_VERDICT, 0, 3, &with_payload);
        assert_eq!(b, message(NFQNL_MSG_VERDICT, 0, 3, &with_payload));
        // nlmsghdr, nfgenmsg, the verdict header attribute, the payload attribute padded to 4.
        assert_eq!(b.len(), 16 + 4 + (4 + 8) + align4(4 + payload.len()));
        let accept: [(u16, &[u8]); 1] = [(NFQA_VERDICT_HDR, &[1; 8])];
        message_into(&mut b, NFQNL_MSG_VERDICT, 0, 3, &accept);
        assert_eq!(b, message(NFQNL_MSG_VERDICT, 0, 3, &accept));
        assert_eq!(b.len(), 16 + 4 + (4 + 8));
        assert_eq!(
            u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize,
            b.len()
        );
    }

    #[test]
    fn ipv6_without_ip6tables_is_a_clear_error() {
        let e = check_ipv6_support(&cfg(true, true), || false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("ip6tables") && e.to_string().contains("ipv6 = false"));
        // Told to leave IPv6 to ebtables, or not installing rules at all: no need for it.
        check_ipv6_support(&cfg(false, true), || false).unwrap();
        check_ipv6_support(&cfg(true, false), || false).unwrap();
        check_ipv6_support(&cfg(true, true), || true).unwrap();
        assert!(!xtables_runs("gander-no-such-ip6tables"));
    }
}
