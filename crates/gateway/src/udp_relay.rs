//! The `udp` driver: an R-GOOSE/R-SV relay for routed networks, over IPv4 or IPv6. The IED sends
//! its session PDUs to the gateway's IED-side address; the relay secures them and sends them from
//! its network-side address to the configured peer (unicast or a multicast group), and the
//! reverse for inbound traffic. No kernel forwarding is involved, so nothing reaches the IED that
//! the policy did not pass.
//!
//! Each datagram is judged as it was received, with its real source address and port and the
//! address it was sent to beside it ([`Policy::handle_datagram`]), by the same policy core as
//! every other driver's frames, whatever the family; what the policy forwards is the UDP
//! payload to send on. (An Ethernet/IP/UDP frame around it is built only for the pcap tap,
//! when one is configured.) Each side's listen address and peer are of one family
//! ([`UdpToml::check`]); the two sides may differ (an IPv4 IED behind an IPv6 network).
//!
//! Multicast (IEC 61850-90-5 clause 8: R-GOOSE/R-SV to IP multicast groups): a listen address
//! that is a group is joined (IPv6 on the interface its scope id names, or the default one); a
//! peer that is a group is sent to with a hop limit of 64 (the session may cross routers), out of
//! the interface its scope id names (IPv6), and without local loopback, so the relay never reads
//! its own output back.

use crate::config::{Direction, UdpToml};
use crate::driver::{poll_fds, tap_built, unix_now, Control, Housekeeping};
use crate::policy::{Decision, KernelCounters, Policy, SocketCounters, OUTPUT_CAPACITY};
use gander_wire::ethernet::{EthernetRepr, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use gander_wire::ip::UdpFrameRepr;
use gander_wire::ipv6::Udp6FrameRepr;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// The Ethernet frame of a datagram from `src` to `dst`, for the pcap tap.
fn wrap(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Option<Vec<u8>> {
    let eth = |ethertype| EthernetRepr {
        dst: [0; 6],
        src: [0; 6],
        vlan: None,
        ethertype,
    };
    match (src, dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => UdpFrameRepr {
            eth: eth(ETHERTYPE_IPV4),
            src_addr: s.ip().octets(),
            dst_addr: d.ip().octets(),
            src_port: s.port(),
            dst_port: d.port(),
            ttl: 64,
            tos: 0,
            identification: 0,
        }
        .to_vec(payload)
        .ok(),
        (SocketAddr::V6(s), SocketAddr::V6(d)) => Udp6FrameRepr {
            eth: eth(ETHERTYPE_IPV6),
            src_addr: s.ip().octets(),
            dst_addr: d.ip().octets(),
            src_port: s.port(),
            dst_port: d.port(),
            traffic_class: 0,
            hop_limit: 64,
        }
        .to_vec(payload)
        .ok(),
        // A socket only receives from its own family (IPv4-mapped addresses are not used:
        // every IPv6 socket here is bound to an IPv6 address).
        _ => None,
    }
}

fn setsockopt_int(fd: i32, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: `value` is a valid c_int for the duration of the call and its size is passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &value as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `SO_MEMINFO` (asm-generic/socket.h; the same number on x86-64, AArch64 and 32-bit Arm, the
/// architectures gander is built for) and the index of `sk_drops` in the array it returns
/// (`SK_MEMINFO_DROPS`, include/uapi/linux/sock_diag.h; Linux 4.4 and later).
const SO_MEMINFO: libc::c_int = 55;
const SK_MEMINFO_DROPS: usize = 8;
const SK_MEMINFO_VARS: usize = 9;

/// The datagrams the kernel dropped on this socket since it was opened (`sk_drops`): almost
/// always a full receive buffer, i.e. the relay did not read fast enough. The kernel keeps
/// counting them whatever gander does, so the relay reports them beside its own counters
/// instead of letting them vanish (`KernelCounters`, as the `l2` driver does with
/// `PACKET_STATISTICS`). `None` if the kernel does not say.
fn socket_drops(s: &UdpSocket) -> Option<u64> {
    let mut info = [0u32; SK_MEMINFO_VARS];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` is writable for `len` bytes, and the kernel writes at most `len` bytes
    // and stores the length it wrote in `len`.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_MEMINFO,
            info.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    let written = len as usize / std::mem::size_of::<u32>();
    (r == 0 && written > SK_MEMINFO_DROPS).then(|| u64::from(info[SK_MEMINFO_DROPS]))
}

/// The receive buffer the relay asks for on each socket (the `l2` driver's, 4 MiB): a burst
/// of datagrams while the relay thread waits for a CPU is queued rather than dropped. The
/// kernel caps it at `net.core.rmem_max` for an unprivileged process; what it did not grant
/// shows as socket drops.
const RECEIVE_BUFFER: i32 = 4 << 20;

/// Binds one side's socket: joins `listen` if it is a group, and prepares sending to `peer` if
/// that is a group.
fn bind(listen: SocketAddr, peer: SocketAddr) -> io::Result<UdpSocket> {
    let s = UdpSocket::bind(listen)
        .map_err(|e| io::Error::new(e.kind(), format!("udp driver: cannot bind {listen}: {e}")))?;
    // Best effort (SO_RCVBUFFORCE needs CAP_NET_ADMIN; the plain request is capped, not refused).
    if setsockopt_int(
        s.as_raw_fd(),
        libc::SOL_SOCKET,
        libc::SO_RCVBUFFORCE,
        RECEIVE_BUFFER,
    )
    .is_err()
    {
        let _ = setsockopt_int(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            RECEIVE_BUFFER,
        );
    }
    match listen {
        SocketAddr::V4(a) if a.ip().is_multicast() => {
            s.join_multicast_v4(a.ip(), &std::net::Ipv4Addr::UNSPECIFIED)?
        }
        SocketAddr::V6(a) if a.ip().is_multicast() => s.join_multicast_v6(a.ip(), a.scope_id())?,
        _ => {}
    }
    match peer {
        SocketAddr::V4(p) if p.ip().is_multicast() => {
            s.set_multicast_ttl_v4(64)?;
            s.set_multicast_loop_v4(false)?;
        }
        SocketAddr::V6(p) if p.ip().is_multicast() => {
            let fd = s.as_raw_fd();
            setsockopt_int(fd, libc::IPPROTO_IPV6, libc::IPV6_MULTICAST_HOPS, 64)?;
            s.set_multicast_loop_v6(false)?;
            if p.scope_id() != 0 {
                let idx = i32::try_from(p.scope_id())
                    .map_err(|_| io::Error::other("scope id out of range"))?;
                setsockopt_int(fd, libc::IPPROTO_IPV6, libc::IPV6_MULTICAST_IF, idx)?;
            }
        }
        _ => {}
    }
    s.set_nonblocking(true)?;
    Ok(s)
}

/// Runs the relay until `ctl.stop` is set; returns the policy.
pub fn run(cfg: &UdpToml, mut policy: Policy, ctl: &Control) -> io::Result<Policy> {
    cfg.check()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let ied = bind(cfg.ied_listen, cfg.ied_peer)?;
    let net = bind(cfg.net_listen, cfg.net_peer)?;
    let mut buf = vec![0u8; 65536];
    // What the policy rewrites (protect, strip) is written here, kept for the relay's life.
    let mut out = Vec::with_capacity(OUTPUT_CAPACITY);
    let mut hk = Housekeeping::new();
    // Datagrams read per side (IED, network), for the kernel counters.
    let mut read = [0u64; 2];
    // `None` where the kernel does not report `sk_drops` (before Linux 4.4, or an emulator
    // such as qemu-user, which does not translate SO_MEMINFO): then there is no `kernel` key
    // rather than a count of zero that would claim nothing was dropped.
    let kernel = |read: &[u64; 2]| {
        let side = |s: &UdpSocket, n: u64| {
            socket_drops(s).map(|drops| SocketCounters {
                packets: n + drops,
                drops,
            })
        };
        Some(KernelCounters {
            ied: side(&ied, read[0])?,
            net: side(&net, read[1])?,
        })
    };
    if kernel(&read).is_none() {
        eprintln!(
            "gander gateway: udp driver: the kernel does not report socket drops (SO_MEMINFO); \
             datagrams it drops before the relay reads them are not counted"
        );
    }
    let mut last_kernel = std::time::Instant::now();
    ctl.set_running();
    while !ctl.stopping() {
        let ready = poll_fds(&[ied.as_raw_fd(), net.as_raw_fd()], 50)?;
        let now = unix_now();
        for (i, (rx, tx, local, peer, dir)) in [
            (
                &ied,
                &net,
                cfg.ied_listen,
                cfg.net_peer,
                Direction::Outbound,
            ),
            (&net, &ied, cfg.net_listen, cfg.ied_peer, Direction::Inbound),
        ]
        .into_iter()
        .enumerate()
        {
            if !ready[i] {
                continue;
            }
            for _ in 0..64 {
                let (n, from) = match rx.recv_from(&mut buf) {
                    Ok(x) => x,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // ICMP errors of earlier sends surface here; they are not frames.
                    Err(_) => break,
                };
                read[i] += 1;
                // Every datagram on these sockets is addressed to the R-GOOSE/R-SV service,
                // whatever port the site gave it: the frame the policy judges carries port 102,
                // so a datagram that does not parse is `malformed`, never `other` traffic. The
                // scope id is the receiver's business, not part of the datagram.
                let dst = SocketAddr::new(local.ip(), gander_wire::ip::RGOOSE_PORT);
                // Translation to layer 2 has no meaning here: the policy refuses it
                // (`unsupported`), so what it forwards is a UDP payload.
                if let Decision::Forward(p) =
                    policy.handle_datagram(dir, from, dst, &buf[..n], now, &mut out)
                {
                    if tx.send_to(&p, peer).is_err() {
                        policy.count_tx_error(dir);
                    }
                    tap_built(ctl, || wrap(from, dst, &p));
                }
            }
        }
        if last_kernel.elapsed() >= std::time::Duration::from_millis(10) {
            if let Some(k) = kernel(&read) {
                policy.set_kernel_counters(k);
            }
            last_kernel = std::time::Instant::now();
        }
        hk.tick(ctl, &mut policy);
    }
    if let Some(k) = kernel(&read) {
        policy.set_kernel_counters(k);
    }
    ctl.publish(&policy, false);
    Ok(policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tap_frame_carries_the_datagram_in_both_families() {
        let p = b"\x01\x40payload";
        for (src, dst) in [
            ("10.0.0.1:102", "10.0.0.2:102"),
            ("[fd00::1]:102", "[ff05::102]:102"),
        ] {
            let (s, d): (SocketAddr, SocketAddr) = (src.parse().unwrap(), dst.parse().unwrap());
            let f = wrap(s, d, p).unwrap();
            assert!(f.ends_with(p));
            let ethertype = u16::from_be_bytes([f[12], f[13]]);
            assert_eq!(ethertype == ETHERTYPE_IPV4, s.is_ipv4());
            assert_eq!(ethertype == ETHERTYPE_IPV6, s.is_ipv6());
        }
        let v4: SocketAddr = "10.0.0.1:102".parse().unwrap();
        let v6: SocketAddr = "[fd00::1]:102".parse().unwrap();
        assert!(wrap(v4, v6, p).is_none());
    }

    /// `sk_drops` read through `SO_MEMINFO`: a socket with the smallest receive buffer that
    /// is sent more than it can queue reports exactly the datagrams it did not deliver.
    #[test]
    fn socket_drops_count_what_a_full_buffer_refused() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        setsockopt_int(rx.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, 1).unwrap();
        rx.set_nonblocking(true).unwrap();
        let Some(before) = socket_drops(&rx) else {
            // qemu-user (the cross tests) does not translate SO_MEMINFO; a kernel does.
            eprintln!("SO_MEMINFO not available here: nothing to check");
            return;
        };
        assert_eq!(before, 0);
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let sent = 200u64;
        for _ in 0..sent {
            tx.send_to(&[0u8; 512], rx.local_addr().unwrap()).unwrap();
        }
        let mut got = 0u64;
        let mut buf = [0u8; 1024];
        while rx.recv_from(&mut buf).is_ok() {
            got += 1;
        }
        let drops = socket_drops(&rx).unwrap();
        assert!(drops > 0, "a 1-byte buffer cannot queue {sent} datagrams");
        assert_eq!(got + drops, sent);
    }

    #[test]
    fn mixed_families_on_one_side_are_refused() {
        let cfg = |il: &str, np: &str, nl: &str, ip: &str| UdpToml {
            ied_listen: il.parse().unwrap(),
            net_peer: np.parse().unwrap(),
            net_listen: nl.parse().unwrap(),
            ied_peer: ip.parse().unwrap(),
        };
        let e = cfg(
            "10.0.0.1:102",
            "[ff05::102]:102",
            "10.0.1.1:102",
            "10.0.0.2:102",
        )
        .check()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("network side") && e.contains("IPv4") && e.contains("IPv6"),
            "{e}"
        );
        // An IPv4 IED side and an IPv6 network side are fine.
        cfg(
            "10.0.0.1:102",
            "[ff05::102]:102",
            "[fd00::1]:102",
            "10.0.0.2:102",
        )
        .check()
        .unwrap();
    }
}
