//! The `l2` driver's kernel bypass (`bypass = "tc"`), in network namespaces: traffic that is not
//! IEC 61850 crosses through the kernel (tc), IEC 61850 traffic only through the gateway, and
//! the tc rules are gone after the gateway stops. Also: the kernel order the bypass relies on
//! (a packet socket gets its copy before tc ingress drops the frame), and the classic BPF
//! filter attached to a real socket.

use crate::common;

use common::*;
use gander_gateway::af_packet::RawSocket;
use gander_gateway::bpf;
use gander_lab::{addr, Mode, Role};
use gander_sec::l2::{self, CheckedGoose};
use gander_sec::Profile;
use gander_testkit::frames::{self as craft, UdpAddrs};
use std::time::{Duration, Instant};

const MCAST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x30];

fn config(other: &str) -> String {
    format!(
        r#"
driver = "l2"
keys = "unused.toml"
other = "{other}"
[l2]
ied = "gi0"
net = "gn0"
bypass = "tc"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 2
[[rule]]
direction = "inbound"
action = "verify"
"#
    )
}

fn sh(args: &[&str]) -> (bool, String) {
    let o = std::process::Command::new(args[0])
        .args(&args[1..])
        .output()
        .expect("run");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
    )
}

fn qdiscs(ns: &str, dev: &str) -> String {
    sh(&["ip", "netns", "exec", ns, "tc", "qdisc", "show", "dev", dev]).1
}

fn ping(ns: &str, to: &str) -> bool {
    sh(&[
        "ip", "netns", "exec", ns, "ping", "-n", "-c", "3", "-i", "0.05", "-W", "1", to,
    ])
    .0
}

/// Frames of `n` received on `dev` in `ns` within `wait` that satisfy `keep`.
fn receive(
    ns: String,
    dev: &'static str,
    sock: impl FnOnce() -> RawSocket + Send + 'static,
    wait: Duration,
    keep: impl Fn(&[u8]) -> bool + Send + 'static,
) -> std::thread::JoinHandle<Vec<Vec<u8>>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        gander_lab::enter(&ns).expect("enter");
        let _ = dev;
        let s = sock();
        tx.send(()).expect("ready");
        let mut buf = vec![0u8; 70000];
        let mut got = Vec::new();
        let end = Instant::now() + wait;
        while Instant::now() < end {
            if !gander_gateway::driver::poll_fds(&[s.fd()], 20).expect("poll")[0] {
                continue;
            }
            while let Some(n) = s.recv(&mut buf, true).expect("recv") {
                if keep(&buf[..n]) {
                    got.push(buf[..n].to_vec());
                }
            }
        }
        got
    });
    rx.recv().expect("receiver up");
    h
}

fn send_from(ns: &str, dev: &str, frames: &[Vec<u8>]) {
    let ns = ns.to_string();
    let dev = dev.to_string();
    let frames = frames.to_vec();
    std::thread::spawn(move || {
        gander_lab::enter(&ns).expect("enter");
        let s = RawSocket::open(&dev).expect("socket");
        for f in &frames {
            s.send(f).expect("send");
            std::thread::sleep(Duration::from_millis(2));
        }
    })
    .join()
    .expect("sender");
}

#[test]
fn non_iec_traffic_crosses_in_the_kernel_and_the_rules_go_at_exit() {
    let Some(lab) = lab("dpbyp", Mode::L2) else {
        return;
    };
    let gw_ns = lab.ns(Role::Gw);
    // Nothing crosses without the gateway.
    assert!(!ping(&lab.ns(Role::Ied), "10.85.0.2"));
    let gw = Gateway::start(&gw_ns, &config("pass"), keys(GW_KEYS));
    for dev in ["gi0", "gn0"] {
        let q = qdiscs(&gw_ns, dev);
        assert!(q.contains("clsact"), "{dev}: {q}");
    }
    // Non-IEC traffic (ICMP, ARP) crosses...
    assert!(ping(&lab.ns(Role::Ied), "10.85.0.2"));
    // ... and IEC 61850 traffic still only through the policy: plain GOOSE from the IED
    // arrives protected, once (not also bridged by tc).
    let good = keys(GW_KEYS);
    let sub = receive(
        lab.ns(Role::Sub),
        "sub0",
        || RawSocket::open("sub0").expect("sub0"),
        Duration::from_millis(800),
        |f| f.len() > 14 && f[6..12] == addr::IED_MAC && f[12..14] == [0x88, 0xb8],
    );
    let n = 20u32;
    let goose: Vec<Vec<u8>> = (0..n)
        .map(|i| craft::goose_frame(addr::IED_MAC, MCAST, None, 0x30, 1, i))
        .collect();
    send_from(&lab.ns(Role::Ied), "ied0", &goose);
    let got = sub.join().expect("sub");
    assert_eq!(got.len(), n as usize, "each GOOSE exactly once");
    for f in &got {
        assert!(matches!(
            l2::verify(Profile::Standard, &good, f, 0),
            Ok(CheckedGoose::Verified(_))
        ));
    }
    let p = gw.stop();
    let c = p.counters();
    assert_eq!(c.outbound.protected, u64::from(n), "{c:?}");
    // The ping never went through gander: the sockets saw only IEC 61850 traffic.
    assert_eq!(c.outbound.other_passed + c.inbound.other_passed, 0, "{c:?}");
    let k = c.kernel.expect("kernel counters");
    assert_eq!(k.ied.packets, u64::from(n), "{k:?}");
    // The device is left as found.
    for dev in ["gi0", "gn0"] {
        let q = qdiscs(&gw_ns, dev);
        assert!(!q.contains("clsact"), "{dev}: {q}");
    }
    assert!(!ping(&lab.ns(Role::Ied), "10.85.0.2"));
}

#[test]
fn other_drop_drops_in_the_kernel_and_a_busy_device_is_refused() {
    let Some(lab) = lab("dpbyd", Mode::L2) else {
        return;
    };
    let gw_ns = lab.ns(Role::Gw);
    let gw = Gateway::start(&gw_ns, &config("drop"), keys(GW_KEYS));
    assert!(!ping(&lab.ns(Role::Ied), "10.85.0.2"));
    let p = gw.stop();
    assert_eq!(p.counters().outbound.other_passed, 0);
    assert!(!qdiscs(&gw_ns, "gi0").contains("clsact"));
    // Someone else's clsact on an interface: gander refuses to start and touches nothing.
    let (ok, out) = sh(&[
        "ip", "netns", "exec", &gw_ns, "tc", "qdisc", "add", "dev", "gn0", "clsact",
    ]);
    assert!(ok, "{out}");
    let cfg = gander_gateway::Config::from_toml(&config("pass"), std::path::Path::new("."))
        .expect("config");
    let policy = gander_gateway::Policy::new(&cfg, keys(GW_KEYS)).expect("policy");
    let ctl = gander_gateway::Control::new(None, None);
    let ns = gw_ns.clone();
    let r = std::thread::spawn(move || {
        gander_lab::enter(&ns).expect("enter");
        gander_gateway::service::run_driver(&cfg, policy, &ctl).map(|_| ())
    })
    .join()
    .expect("driver thread");
    let e = r.expect_err("a busy interface must be refused");
    assert!(e.to_string().contains("already has a clsact"), "{e}");
    assert!(
        !qdiscs(&gw_ns, "gi0").contains("clsact"),
        "gi0 left as found"
    );
    assert!(
        qdiscs(&gw_ns, "gn0").contains("clsact"),
        "the other clsact kept"
    );
    sh(&[
        "ip", "netns", "exec", &gw_ns, "tc", "qdisc", "del", "dev", "gn0", "clsact",
    ]);
}

/// The bypass depends on a packet socket getting its copy of a frame before tc ingress drops
/// it (`__netif_receive_skb_core` runs the taps first). Checked on the running kernel: with a
/// tc program that drops everything on gi0, a socket on gi0 still receives every frame.
#[test]
fn packet_sockets_see_frames_before_tc_ingress() {
    let Some(lab) = lab("dpord", Mode::L2) else {
        return;
    };
    let gw_ns = lab.ns(Role::Gw);
    let shot = bpf::tc_bytecode(&[bpf::Insn {
        code: 0x06,
        jt: 0,
        jf: 0,
        k: bpf::TC_ACT_SHOT,
    }]);
    let tc = |args: &[&str]| {
        let mut v = vec!["ip", "netns", "exec", gw_ns.as_str(), "tc"];
        v.extend_from_slice(args);
        let (ok, out) = sh(&v);
        assert!(ok, "{args:?}: {out}");
        out
    };
    tc(&["qdisc", "add", "dev", "gi0", "clsact"]);
    tc(&[
        "filter", "add", "dev", "gi0", "ingress", "pref", "1", "protocol", "all", "bpf", "da",
        "bytecode", &shot,
    ]);
    let rx = receive(
        gw_ns.clone(),
        "gi0",
        || RawSocket::open("gi0").expect("gi0"),
        Duration::from_millis(500),
        |f| f.len() > 14 && f[12..14] == [0x88, 0xb8],
    );
    let frames: Vec<Vec<u8>> = (0..10)
        .map(|i| craft::goose_frame(addr::IED_MAC, MCAST, None, 0x30, 1, i))
        .collect();
    send_from(&lab.ns(Role::Ied), "ied0", &frames);
    let got = rx.join().expect("rx");
    let stats = tc(&["-s", "filter", "show", "dev", "gi0", "ingress"]);
    tc(&["qdisc", "del", "dev", "gi0", "clsact"]);
    assert_eq!(got.len(), 10, "the tap sees frames tc ingress drops");
    // And tc did see (and drop) them: its counters moved.
    assert!(!stats.contains("Sent 0 bytes"), "{stats}");
}

/// The IEC 61850 filter attached to a real socket: only IEC 61850 frames arrive.
#[test]
fn the_socket_filter_admits_only_iec_traffic() {
    let Some(lab) = lab("dpbpf", Mode::L2) else {
        return;
    };
    let gw_ns = lab.ns(Role::Gw);
    let prog = bpf::iec61850_filter();
    let rx = receive(
        gw_ns,
        "gi0",
        move || RawSocket::open_filtered("gi0", &prog).expect("filtered"),
        Duration::from_millis(600),
        |_| true,
    );
    let goose = craft::goose_frame(addr::IED_MAC, MCAST, None, 0x30, 1, 1);
    let tagged = craft::tagged(&goose, &[(0x8100, 10)]);
    let qinq = craft::tagged(&goose, &[(0x88A8, 5), (0x8100, 10)]);
    let rgoose = craft::udp_frame(
        &UdpAddrs::IED_TO_SUB,
        &craft::rgoose_spdu(Profile::Standard, 0x30, 1, 1, 1),
    );
    let other_udp = craft::udp_frame(
        &UdpAddrs {
            src_port: 5000,
            dst_port: 5001,
            ..UdpAddrs::IED_TO_SUB
        },
        &[9u8; 30],
    );
    let mut tcp = other_udp.clone();
    tcp[23] = 6;
    let mut arp = vec![0xffu8; 6];
    arp.extend_from_slice(&addr::IED_MAC);
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.extend_from_slice(&[0u8; 46]);
    let tagged_tcp = craft::tagged(&tcp, &[(0x8100, 10)]);
    send_from(
        &lab.ns(Role::Ied),
        "ied0",
        &[
            goose.clone(),
            other_udp,
            tagged.clone(),
            tcp,
            qinq.clone(),
            arp,
            rgoose.clone(),
            tagged_tcp,
        ],
    );
    let got = rx.join().expect("rx");
    assert_eq!(got, vec![goose, tagged, qinq, rgoose]);
}
