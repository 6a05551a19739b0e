//! The `udp` driver: an R-GOOSE/R-SV relay for routed networks. The IED sends its session PDUs to
//! the gateway's IED-side address; the relay secures them and sends them from its network-side
//! address to the configured peer, and the reverse for inbound traffic. No kernel forwarding is
//! involved, so nothing reaches the IED that the policy did not pass.
//!
//! Each datagram is wrapped in an Ethernet/IPv4/UDP frame carrying its real source address and
//! port (the replay window's sender) so the same policy core judges it.

use crate::config::{Direction, UdpToml};
use crate::driver::{poll_fds, tap, unix_now, Control, Housekeeping};
use crate::policy::{Decision, Policy};
use gander_wire::ethernet::{EthernetRepr, ETHERTYPE_IPV4};
use gander_wire::ip::{locate_udp, UdpFrameRepr};
use std::io;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;

fn wrap(src: SocketAddrV4, dst: SocketAddrV4, payload: &[u8]) -> Option<Vec<u8>> {
    UdpFrameRepr {
        eth: EthernetRepr {
            dst: [0; 6],
            src: [0; 6],
            vlan: None,
            ethertype: ETHERTYPE_IPV4,
        },
        src_addr: src.ip().octets(),
        dst_addr: dst.ip().octets(),
        src_port: src.port(),
        dst_port: dst.port(),
        ttl: 64,
        tos: 0,
        identification: 0,
    }
    .emit(payload)
    .ok()
}

/// Runs the relay until `ctl.stop` is set; returns the policy.
pub fn run(cfg: &UdpToml, mut policy: Policy, ctl: &Control) -> io::Result<Policy> {
    let ied = UdpSocket::bind(cfg.ied_listen)?;
    let net = UdpSocket::bind(cfg.net_listen)?;
    ied.set_nonblocking(true)?;
    net.set_nonblocking(true)?;
    let mut buf = vec![0u8; 65536];
    let mut hk = Housekeeping::new();
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
                let SocketAddr::V4(from) = from else { continue };
                // Every datagram on these sockets is addressed to the R-GOOSE/R-SV service,
                // whatever port the site gave it: the frame the policy judges carries port 102,
                // so a datagram that does not parse is `malformed`, never `other` traffic.
                let service = SocketAddrV4::new(*local.ip(), gander_wire::ip::RGOOSE_PORT);
                let Some(frame) = wrap(from, service, &buf[..n]) else {
                    continue;
                };
                if let Decision::Forward(out) = policy.handle(dir, &frame, now) {
                    // Translation to layer 2 has no meaning here: the output must be UDP.
                    if let Ok(loc) = locate_udp(&out) {
                        if tx.send_to(&out[loc.payload.clone()], peer).is_err() {
                            policy.count_tx_error(dir);
                        }
                        tap(ctl, &out);
                    }
                }
            }
        }
        hk.tick(ctl, &mut policy);
    }
    ctl.publish(&policy, false);
    Ok(policy)
}
