//! Several workers per direction (`[l2] workers`): the kernel steers frames by the fanout
//! program (APPID, publisher address and port), so a stream stays in one worker and in order,
//! and the replay state stays correct when a replay is steered to another worker.

use crate::common;

use common::*;
use gander_gateway::af_packet::RawSocket;
use gander_lab::{addr, Mode, Role};
use gander_sec::Profile;
use gander_testkit::frames::{self as craft, UdpAddrs};
use std::time::{Duration, Instant};

const MCAST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x40];
const APPID: u16 = 0x0041;

fn send_from(ns: &str, dev: &str, frames: &[Vec<u8>]) {
    let (ns, dev, frames) = (ns.to_string(), dev.to_string(), frames.to_vec());
    std::thread::spawn(move || {
        gander_lab::enter(&ns).expect("enter");
        let s = RawSocket::open(&dev).expect("socket");
        for f in &frames {
            s.send(f).expect("send");
            std::thread::sleep(Duration::from_millis(3));
        }
    })
    .join()
    .expect("sender");
}

/// Which fanout member (of two) the running kernel hands each frame to.
#[test]
fn the_kernel_steers_by_appid_and_publisher() {
    let Some(lab) = lab("dpfan", Mode::L2) else {
        return;
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let ns = lab.ns(Role::Gw);
    let h = std::thread::spawn(move || {
        gander_lab::enter(&ns).expect("enter");
        let socks = RawSocket::open_fanout("gi0", 2).expect("fanout");
        tx.send(()).expect("ready");
        let mut got: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
        let mut buf = vec![0u8; 70000];
        let end = Instant::now() + Duration::from_millis(800);
        while Instant::now() < end {
            let r = gander_gateway::driver::poll_fds(&[socks[0].fd(), socks[1].fd()], 20)
                .expect("poll");
            for i in 0..2 {
                if !r[i] {
                    continue;
                }
                while let Some(n) = socks[i].recv(&mut buf, true).expect("recv") {
                    let f = &buf[..n];
                    if f.len() > 14 && matches!(f[12..14], [0x88, 0xb8] | [0x08, 0x00]) {
                        got[i].push(f.to_vec());
                    }
                }
            }
        }
        got
    });
    rx.recv().expect("ready");
    let mut frames = Vec::new();
    for appid in 0..8u16 {
        frames.push(craft::goose_frame(addr::IED_MAC, MCAST, None, appid, 1, 1));
    }
    for port in [40000u16, 40001, 40002, 40003] {
        let a = UdpAddrs {
            src_port: port,
            ..UdpAddrs::IED_TO_SUB
        };
        frames.push(craft::udp_frame(
            &a,
            &craft::rgoose_spdu(Profile::Standard, APPID, 1, 1, 1),
        ));
    }
    send_from(&lab.ns(Role::Ied), "ied0", &frames);
    let got = h.join().expect("rx");
    for (i, set) in got.iter().enumerate() {
        for f in set {
            let want = if f[12] == 0x88 {
                u32::from(u16::from_be_bytes([f[14], f[15]]))
            } else {
                u32::from_be_bytes([f[26], f[27], f[28], f[29]])
                    .wrapping_add(u32::from(u16::from_be_bytes([f[34], f[35]])))
            };
            assert_eq!(want as usize % 2, i, "{f:02x?}");
        }
    }
    assert_eq!(got[0].len() + got[1].len(), frames.len());
    assert!(!got[0].is_empty() && !got[1].is_empty());
}

const CONFIG: &str = r#"
driver = "l2"
keys = "unused.toml"
[l2]
ied = "gi0"
net = "gn0"
workers = 2
bypass = "tc"
# The spinning mode too: the threads never sleep in poll.
busy_poll = true
[[rule]]
direction = "outbound"
action = "protect"
key_id = 2
[[rule]]
direction = "inbound"
action = "verify"
"#;

/// A valid R-GOOSE and its replay with another source port, which the fanout program sends to
/// the other worker (the port is chosen so): the replay is caught, because the replay state
/// is shared by the workers, not split by how frames are steered. (The workers busy-poll.)
#[test]
fn a_replay_steered_to_another_worker_is_caught() {
    let Some(lab) = lab("dprep", Mode::L2) else {
        return;
    };
    let gw = Gateway::start(&lab.ns(Role::Gw), CONFIG, keys(GW_KEYS));
    let good = keys(GW_KEYS);
    let a = UdpAddrs {
        src_mac: addr::SUB_MAC,
        dst_mac: addr::IED_MAC,
        src_ip: addr::SUB_IP,
        dst_ip: addr::IED_IP,
        src_port: 102,
        dst_port: 102,
    };
    let steer = |f: &[u8]| {
        u32::from_be_bytes([f[26], f[27], f[28], f[29]])
            .wrapping_add(u32::from(u16::from_be_bytes([f[34], f[35]])))
            % 2
    };
    let mut frames = Vec::new();
    let mut replays = 0;
    for n in 1..=10u32 {
        let f = secure(
            &good,
            1,
            &craft::udp_frame(&a, &craft::rgoose_spdu(Profile::Standard, APPID, n, 1, n)),
        );
        // The same secured frame from another port (UDP ports are outside every MAC).
        let port = (40000u16..)
            .find(|&p| steer(&craft::resourced(&f, addr::SUB_IP, p)) != steer(&f))
            .expect("a port for the other worker");
        let r = craft::resourced(&f, addr::SUB_IP, port);
        assert_ne!(steer(&r), steer(&f));
        frames.push(f);
        frames.push(r);
        replays += 1;
    }
    send_from(&lab.ns(Role::Sub), "sub0", &frames);
    std::thread::sleep(Duration::from_millis(200));
    let p = gw.stop();
    let c = p.counters();
    assert_eq!(c.inbound.verified, 10, "{c:?}");
    assert_eq!(
        c.inbound.dropped.get("replay").copied(),
        Some(replays),
        "{c:?}"
    );
}
