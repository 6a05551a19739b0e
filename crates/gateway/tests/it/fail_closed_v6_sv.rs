//! The gateway fails closed on IPv6 R-GOOSE with every driver (`l2`, `nfqueue`, `udp`) and on
//! layer-2 SV with the `l2` driver, in network namespaces.
//!
//! As in `fail_closed_bridge.rs`: the legit publisher (subscriber side) sends secured frames to
//! the legacy IED; the attacker sends forged frames, every single-bit flip, unsecured frames,
//! unknown/expired keys, truncations and replays. Only the legit frames reach the IED, all of
//! them, in order, stripped; the IED's plain frames reach the subscriber protected and
//! verifiable (for IPv6: with a right UDP checksum, which IPv6 makes mandatory). IPv6 addresses
//! are ULAs (fd00::/8) inside the test's own namespaces only, with duplicate address detection
//! off (`nodad`) so nothing waits.

use crate::common;

use common::*;
use gander_gateway::af_packet::RawSocket;
use gander_lab::{addr, Lab, Mode, Role};
use gander_sec::frame::CaptureVerifier;
use gander_sec::view::{self, Content, Kind};
use gander_sec::{KeyStore, Profile};
use gander_testkit::frames::{self as craft, Udp6Addrs};
use gander_wire::spdu::SessionPdu;
use gander_wire::sv::SavPdu;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const APPID: u16 = 0x0010;
const SV_APPID: u16 = 0x4000;
const SV_MCAST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01];

/// fd00:85::/64 addresses of the bridged labs (the raw frames carry them; no stack needs them).
fn ula(host: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0xfd;
    a[2] = 0x85;
    a[15] = host;
    a
}

/// The site-local R-GOOSE group ff05::102.
const GROUP: [u8; 16] = [0xff, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02];

fn rgoose6(src_mac: [u8; 6], src: [u8; 16], dst: [u8; 16], n: u32) -> Vec<u8> {
    let a = Udp6Addrs {
        src_mac,
        dst_mac: craft::ipv6_multicast_mac(dst),
        src_ip: src,
        dst_ip: dst,
        src_port: 102,
        dst_port: 102,
    };
    craft::udp6_frame(&a, &craft::rgoose_spdu(Profile::Standard, APPID, n, 1, n))
}

fn rgoose6_from_sub(n: u32) -> Vec<u8> {
    rgoose6(addr::SUB_MAC, ula(2), GROUP, n)
}

fn sv_from_sub(n: u32) -> Vec<u8> {
    craft::sv_frame(
        addr::SUB_MAC,
        SV_MCAST,
        None,
        SV_APPID,
        "MU01",
        (n % 4800) as u16,
    )
}

/// What a receiver saw: (kind, sequence) of every IEC 61850 frame in arrival order, and the
/// frames it could not accept (not verifying with `keys`, or secured without `keys`).
#[derive(Default, Debug)]
struct Seen {
    frames: Vec<(Kind, u32)>,
    unreadable: usize,
}

fn receiver(
    ns: String,
    dev: &'static str,
    keys: Option<&'static str>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Seen> {
    let ready = Arc::new(AtomicBool::new(false));
    let r2 = ready.clone();
    let h = std::thread::spawn(move || {
        gander_lab::enter(&ns).expect("enter");
        let sock = RawSocket::open(dev).expect("raw socket");
        r2.store(true, Ordering::SeqCst);
        let store: KeyStore = keys.map(common::keys).unwrap_or_default();
        let mut verifier = CaptureVerifier::new(Profile::Standard, &store);
        let mut seen = Seen::default();
        let mut buf = vec![0u8; 70000];
        let mut quiet_since = None;
        let start = std::time::Instant::now();
        loop {
            if stop.load(Ordering::SeqCst) {
                let t = *quiet_since.get_or_insert_with(std::time::Instant::now);
                if t.elapsed() > Duration::from_millis(300) {
                    break;
                }
            }
            if !gander_gateway::driver::poll_fds(&[sock.fd()], 20).unwrap()[0] {
                continue;
            }
            let Some(n) = sock.recv(&mut buf, true).unwrap() else {
                continue;
            };
            let f = &buf[..n];
            let Ok(v) = view::classify(Profile::Standard, f) else {
                // Anything that claims to be IEC 61850 and does not parse.
                if f.len() >= 14
                    && [[0x88, 0xb8], [0x88, 0xba], [0x86, 0xdd]].contains(&[f[12], f[13]])
                {
                    seen.unreadable += 1;
                }
                continue;
            };
            if v.kind() == Kind::Other {
                continue;
            }
            let at = start.elapsed().as_nanos() as u64;
            let verdict = verifier.verify_at(f, 0, at);
            let ok = match keys {
                Some(_) => verdict.outcome == gander_sec::frame::Outcome::Verified,
                None => verdict.outcome == gander_sec::frame::Outcome::Unsecured,
            };
            let seq = match &v.content {
                Content::Session(s) => Some(s.pdu.header.spdu_number),
                Content::L2(l) if v.kind() == Kind::Sv => SavPdu::parse(&f[l.apdu.clone()])
                    .ok()
                    .and_then(|p| p.asdus.first().map(|a| u32::from(a.smp_cnt))),
                _ => None,
            };
            match seq {
                Some(s) if ok => seen.frames.push((v.kind(), s)),
                _ => seen.unreadable += 1,
            }
        }
        seen
    });
    while !ready.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(5));
    }
    h
}

const L2_CONFIG: &str = r#"
driver = "l2"
keys = "unused.toml"
other_inbound = "drop"
[l2]
ied = "gi0"
net = "gn0"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 2
[[rule]]
direction = "inbound"
action = "verify"
"#;

const NFQ_CONFIG: &str = r#"
driver = "nfqueue"
keys = "unused.toml"
[nfqueue]
queue = 9
ied = "gi0"
net = "gn0"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 2
[[rule]]
direction = "inbound"
action = "verify"
"#;

#[test]
fn l2_driver_fails_closed_on_ipv6_rgoose_and_sv() {
    scenario(
        "pb6l2",
        Mode::L2,
        L2_CONFIG,
        &[rgoose6_from_sub, sv_from_sub],
    );
}

#[test]
fn nfqueue_driver_fails_closed_on_ipv6_rgoose() {
    scenario("pb6nfq", Mode::Bridge, NFQ_CONFIG, &[rgoose6_from_sub]);
}

/// One inbound and one outbound phase with the frame makers `kinds` (legit frame `i` of each).
fn scenario(tag: &str, mode: Mode, config: &str, kinds: &[fn(u32) -> Vec<u8>]) {
    let Some(lab) = lab(tag, mode) else {
        return;
    };
    let gw = Gateway::start(&lab.ns(Role::Gw), config, keys(GW_KEYS));
    let good = keys(GW_KEYS);
    let bad = keys(ATTACKER_KEYS);

    let stop = Arc::new(AtomicBool::new(false));
    let ied_rx = receiver(lab.ns(Role::Ied), "ied0", None, stop.clone());
    let legit_n = 40u32;
    let mut legit = vec![];
    for i in 0..legit_n {
        for mk in kinds {
            legit.push(secure(&good, 1, &mk(i)));
        }
    }
    let mut attacks: Vec<Vec<u8>> = vec![];
    let mut seq = 1000u32;
    let mut next = || {
        seq += 1;
        seq
    };
    for mk in kinds.iter().copied() {
        attacks.push(secure(&bad, 1, &mk(next())));
        attacks.push(secure(&bad, 9, &mk(next())));
        attacks.push(secure(&bad, 5, &mk(next())));
        attacks.push(mk(next()));
        let base = secure(&good, 1, &mk(next()));
        let ipv6 = base[12..14] == [0x86, 0xdd];
        for i in 12 * 8..base.len() * 8 {
            // IPv6 traffic class, flow label and hop limit are covered neither by the IEC
            // 62351-6 MAC nor by the UDP checksum (RFC 8200 §8.1): a frame with them changed is
            // the key holder's valid frame (as a rewritten Ethernet address is), not an attack.
            let byte = i / 8;
            if ipv6 && ((14..18).contains(&byte) || byte == 21) {
                continue;
            }
            let mut f = secure(&good, 1, &mk(next()));
            f[i / 8] ^= 1 << (i % 8);
            attacks.push(f);
        }
        for len in 14..base.len() {
            attacks.push(base[..len].to_vec());
        }
        // The IED's own stream sent back at it.
        attacks.push(secure(&good, 2, &mk(next())));
    }
    let n_attacks = attacks.len();
    let (pub_ns, atk_ns) = (lab.ns(Role::Sub), lab.ns(Role::Atk));
    let legit2 = legit.clone();
    let attacker = std::thread::spawn(move || {
        gander_lab::enter(&atk_ns).unwrap();
        let s = RawSocket::open("atk0").unwrap();
        for (i, f) in attacks.iter_mut().enumerate() {
            if f.len() >= 12 {
                f[6..12].copy_from_slice(&addr::ATK_MAC);
            }
            let _ = s.send(f);
            pace(i);
        }
    });
    let publisher = std::thread::spawn(move || {
        gander_lab::enter(&pub_ns).unwrap();
        let s = RawSocket::open("sub0").unwrap();
        for f in &legit2 {
            s.send(f).unwrap();
            std::thread::sleep(Duration::from_millis(4));
        }
        std::thread::sleep(Duration::from_millis(50));
        for (i, f) in legit2.iter().enumerate() {
            s.send(f).unwrap();
            pace(i);
        }
    });
    attacker.join().unwrap();
    publisher.join().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    let seen = ied_rx.join().unwrap();
    let expect: Vec<u32> = (0..legit_n).collect();
    let got = |seen: &Seen, k: Kind| -> Vec<u32> {
        seen.frames
            .iter()
            .filter(|(kk, _)| *kk == k)
            .map(|(_, s)| *s)
            .collect()
    };
    eprintln!(
        "{tag} inbound: {:?}",
        gw.ctl.counters.lock().map(|c| c.inbound.clone())
    );
    assert_eq!(
        seen.unreadable, 0,
        "IED received unacceptable frames: {seen:?}"
    );
    assert_eq!(
        got(&seen, Kind::RGoose),
        expect,
        "IPv6 R-GOOSE on the IED side"
    );
    let with_sv = kinds.len() > 1;
    if with_sv {
        assert_eq!(got(&seen, Kind::Sv), expect, "SV on the IED side");
    }

    // Outbound: the IED's plain traffic reaches the subscriber protected, in order.
    let stop2 = Arc::new(AtomicBool::new(false));
    let sub_rx = receiver(lab.ns(Role::Sub), "sub0", Some(GW_KEYS), stop2.clone());
    let ied_ns = lab.ns(Role::Ied);
    std::thread::spawn(move || {
        gander_lab::enter(&ied_ns).unwrap();
        let s = RawSocket::open("ied0").unwrap();
        for i in 0..legit_n {
            s.send(&rgoose6(addr::IED_MAC, ula(1), GROUP, i)).unwrap();
            if with_sv {
                s.send(&craft::sv_frame(
                    addr::IED_MAC,
                    SV_MCAST,
                    None,
                    SV_APPID,
                    "MU01",
                    i as u16,
                ))
                .unwrap();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    })
    .join()
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stop2.store(true, Ordering::SeqCst);
    let seen = sub_rx.join().unwrap();
    assert_eq!(seen.unreadable, 0, "{seen:?}");
    assert_eq!(got(&seen, Kind::RGoose), expect);
    if with_sv {
        assert_eq!(got(&seen, Kind::Sv), expect);
    }

    let policy = gw.stop();
    let c = policy.counters();
    eprintln!("{}", serde_json::to_string_pretty(c).unwrap());
    assert_eq!(c.inbound.verified, legit.len() as u64);
    assert_eq!(c.outbound.protected, legit.len() as u64);
    assert_eq!(
        c.inbound.forwarded - c.inbound.other_passed,
        legit.len() as u64,
        "{c:?}"
    );
    for reason in [
        "bad-mac",
        "unknown-key",
        "key-expired",
        "replay",
        "unsecured",
        "reflected",
    ] {
        assert!(
            c.inbound.dropped.get(reason).copied().unwrap_or(0) > 0,
            "no {reason} drops: {c:?}"
        );
    }
    eprintln!("attacks sent {n_attacks}");
    assert_eq!(c.inbound.tx_errors + c.outbound.tx_errors, 0, "{c:?}");
}

// ---------------------------------------------------------------- udp relay over IPv6

/// Enables IPv6 on `dev` in `role`'s namespace and gives it `addr/64` without DAD.
fn v6_addr(lab: &Lab, role: Role, dev: &str, addr: &str) {
    let ns = lab.ns(role);
    for key in [
        "net.ipv6.conf.all.disable_ipv6".to_string(),
        format!("net.ipv6.conf.{dev}.disable_ipv6"),
    ] {
        let ok = std::process::Command::new("ip")
            .args(["netns", "exec", &ns, "sysctl", "-qw", &format!("{key}=0")])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "{ns}: sysctl {key}=0");
    }
    let ok = std::process::Command::new("ip")
        .args([
            "-n",
            &ns,
            "addr",
            "add",
            &format!("{addr}/64"),
            "dev",
            dev,
            "nodad",
        ])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "{ns}: ip addr add {addr} dev {dev}");
}

fn v6_route(lab: &Lab, role: Role, via: &str) {
    let ns = lab.ns(role);
    let ok = std::process::Command::new("ip")
        .args(["-n", &ns, "-6", "route", "replace", "default", "via", via])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "{ns}: default via {via}");
}

const UDP6_CONFIG: &str = r#"
driver = "udp"
keys = "unused.toml"
[udp]
ied_listen = "[fd00:85:1::fe]:102"
net_peer = "[fd00:85:2::2]:102"
net_listen = "[fd00:85:2::fe]:102"
ied_peer = "[fd00:85:1::1]:102"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 2
[[rule]]
direction = "inbound"
action = "verify"
"#;

fn spdu(store: Option<(&KeyStore, u32)>, n: u32) -> Vec<u8> {
    let f = rgoose6(addr::SUB_MAC, ula(2), ula(0xfe), n);
    let f = match store {
        Some((s, id)) => secure(s, id, &f),
        None => f,
    };
    match gander_wire::ipv6::locate(&f, 14) {
        Ok(gander_wire::ipv6::Ipv6Payload::Udp(l)) => f[l.payload].to_vec(),
        other => panic!("not IPv6 UDP: {other:?}"),
    }
}

fn collect6(
    ns: String,
    bind: &'static str,
    ms: u64,
    keys: Option<&'static str>,
) -> std::thread::JoinHandle<(Vec<u32>, usize)> {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        gander_lab::enter(&ns).unwrap();
        let s = common::bind_udp(bind);
        s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        tx.send(()).unwrap();
        let store = keys.map(common::keys).unwrap_or_default();
        let (mut ok, mut bad) = (vec![], 0);
        let end = std::time::Instant::now() + Duration::from_millis(ms);
        let mut buf = [0u8; 4096];
        while std::time::Instant::now() < end {
            let Ok((n, _)) = s.recv_from(&mut buf) else {
                continue;
            };
            let p = &buf[..n];
            let verdict = gander_sec::spdu::verify(Profile::Standard, &store, p, 0);
            let good = match keys {
                Some(_) => matches!(verdict, Ok(gander_sec::spdu::Checked::Verified(_))),
                None => matches!(verdict, Ok(gander_sec::spdu::Checked::Unsecured(_))),
            };
            match SessionPdu::parse(p, &Profile::Standard.dialect()) {
                Ok(pdu) if good => ok.push(pdu.header.spdu_number),
                _ => bad += 1,
            }
        }
        (ok, bad)
    });
    rx.recv().unwrap();
    h
}

#[test]
fn udp_relay_fails_closed_over_ipv6() {
    let Some(lab) = lab("pb6udp", Mode::Routed) else {
        return;
    };
    v6_addr(&lab, Role::Ied, "ied0", "fd00:85:1::1");
    v6_addr(&lab, Role::Gw, "gi0", "fd00:85:1::fe");
    v6_addr(&lab, Role::Gw, "gn0", "fd00:85:2::fe");
    v6_addr(&lab, Role::Sub, "sub0", "fd00:85:2::2");
    v6_addr(&lab, Role::Atk, "atk0", "fd00:85:2::66");
    v6_route(&lab, Role::Ied, "fd00:85:1::fe");
    v6_route(&lab, Role::Sub, "fd00:85:2::fe");
    v6_route(&lab, Role::Atk, "fd00:85:2::fe");
    let gw = Gateway::start(&lab.ns(Role::Gw), UDP6_CONFIG, keys(GW_KEYS));
    let good = keys(GW_KEYS);
    let bad = keys(ATTACKER_KEYS);
    let n = 40u32;
    let ied = collect6(lab.ns(Role::Ied), "[fd00:85:1::1]:102", 2500, None);
    let mut attacks = vec![];
    let mut seq = 1000;
    let mut next = || {
        seq += 1;
        seq
    };
    attacks.push(spdu(Some((&bad, 1)), next()));
    attacks.push(spdu(Some((&bad, 9)), next()));
    attacks.push(spdu(Some((&bad, 5)), next()));
    attacks.push(spdu(None, next()));
    let base = spdu(Some((&good, 1)), next());
    for i in 0..base.len() * 8 {
        let mut f = spdu(Some((&good, 1)), next());
        f[i / 8] ^= 1 << (i % 8);
        attacks.push(f);
    }
    for len in 0..base.len() {
        attacks.push(base[..len].to_vec());
    }
    let n_attacks = attacks.len();
    let legit: Vec<Vec<u8>> = (0..n).map(|i| spdu(Some((&good, 1)), i)).collect();
    let (atk_ns, sub_ns) = (lab.ns(Role::Atk), lab.ns(Role::Sub));
    let a = std::thread::spawn(move || {
        gander_lab::enter(&atk_ns).unwrap();
        let s = common::bind_udp("[fd00:85:2::66]:102");
        for (i, f) in attacks.iter().enumerate() {
            let _ = s.send_to(f, "[fd00:85:2::fe]:102");
            pace(i);
        }
    });
    let l2 = legit.clone();
    let p = std::thread::spawn(move || {
        gander_lab::enter(&sub_ns).unwrap();
        let s = common::bind_udp("[fd00:85:2::2]:102");
        for f in &l2 {
            s.send_to(f, "[fd00:85:2::fe]:102").unwrap();
            std::thread::sleep(Duration::from_millis(4));
        }
        // Replays, also from another source port.
        for f in &l2 {
            s.send_to(f, "[fd00:85:2::fe]:102").unwrap();
        }
        let other = std::net::UdpSocket::bind("[fd00:85:2::2]:4000").unwrap();
        for f in &l2 {
            other.send_to(f, "[fd00:85:2::fe]:102").unwrap();
        }
    });
    a.join().unwrap();
    p.join().unwrap();
    let (ok, unreadable) = ied.join().unwrap();
    assert_eq!(unreadable, 0);
    assert_eq!(ok, (0..n).collect::<Vec<_>>());

    let sub = collect6(lab.ns(Role::Sub), "[fd00:85:2::2]:102", 1000, Some(GW_KEYS));
    let ied_ns = lab.ns(Role::Ied);
    std::thread::spawn(move || {
        gander_lab::enter(&ied_ns).unwrap();
        let s = common::bind_udp("[fd00:85:1::1]:102");
        for i in 0..n {
            s.send_to(
                &craft::rgoose_spdu(Profile::Standard, APPID, i, 1, i),
                "[fd00:85:1::fe]:102",
            )
            .unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
    })
    .join()
    .unwrap();
    let (ok, unreadable) = sub.join().unwrap();
    assert_eq!(unreadable, 0);
    assert_eq!(ok, (0..n).collect::<Vec<_>>());

    let policy = gw.stop();
    let c = policy.counters();
    eprintln!("{}", serde_json::to_string(c).unwrap());
    assert_eq!(c.inbound.forwarded, n as u64);
    // Dropped by the policy, or by the kernel before the relay read it (socket drops).
    let kernel = c
        .kernel
        .expect("the udp driver reports its sockets' counters");
    assert_eq!(
        c.inbound.dropped_total() + kernel.net.drops,
        (n_attacks + 2 * legit.len()) as u64,
        "{c:?}"
    );
    assert_eq!(c.outbound.protected, n as u64);
}

/// A udp driver whose IED side mixes families is refused before any socket is opened.
#[test]
fn udp_driver_refuses_an_ipv4_bind_with_an_ipv6_peer() {
    let cfg = UDP6_CONFIG.replace("[fd00:85:1::fe]:102", "10.85.1.254:102");
    let e = gander_gateway::config::Config::from_toml(&cfg, std::path::Path::new("."))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("IED side") && e.contains("one family"), "{e}");
}

/// The interface index of `dev` in `role`'s namespace (`ip -o link show`: "N: dev@...").
fn ifindex(lab: &Lab, role: Role, dev: &str) -> u32 {
    let out = std::process::Command::new("ip")
        .args(["-n", &lab.ns(role), "-o", "link", "show", "dev", dev])
        .output()
        .expect("ip link show");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split(':')
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no ifindex for {dev}: {text}"))
}

/// The udp driver with multicast peers and listen groups over IPv6: the IED's unicast R-GOOSE
/// leaves protected to the group ff05::102 (joined by the subscriber), and protected R-GOOSE the
/// subscriber sends to the group ff05::103 (joined by the gateway) reaches the IED verified and
/// stripped, while a forged one does not.
#[test]
fn udp_relay_ipv6_multicast() {
    let Some(lab) = lab("pb6mc", Mode::Routed) else {
        return;
    };
    v6_addr(&lab, Role::Ied, "ied0", "fd00:85:1::1");
    v6_addr(&lab, Role::Gw, "gi0", "fd00:85:1::fe");
    v6_addr(&lab, Role::Gw, "gn0", "fd00:85:2::fe");
    v6_addr(&lab, Role::Sub, "sub0", "fd00:85:2::2");
    v6_route(&lab, Role::Ied, "fd00:85:1::fe");
    let gn0 = ifindex(&lab, Role::Gw, "gn0");
    let sub0 = ifindex(&lab, Role::Sub, "sub0");
    let config = UDP6_CONFIG
        .replace(
            "net_peer = \"[fd00:85:2::2]:102\"",
            &format!("net_peer = \"[ff05::102%{gn0}]:102\""),
        )
        .replace(
            "net_listen = \"[fd00:85:2::fe]:102\"",
            &format!("net_listen = \"[ff05::103%{gn0}]:102\""),
        );
    let gw = Gateway::start(&lab.ns(Role::Gw), &config, keys(GW_KEYS));
    let n = 20u32;
    // Outbound: the subscriber joins ff05::102 on sub0.
    let (tx, rx) = std::sync::mpsc::channel();
    let sub_ns = lab.ns(Role::Sub);
    let sub = std::thread::spawn(move || {
        gander_lab::enter(&sub_ns).unwrap();
        let s = std::net::UdpSocket::bind("[ff05::102]:102").unwrap();
        s.join_multicast_v6(&"ff05::102".parse().unwrap(), sub0)
            .unwrap();
        s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        tx.send(()).unwrap();
        let store = common::keys(GW_KEYS);
        let mut ok = vec![];
        let end = std::time::Instant::now() + Duration::from_millis(1500);
        let mut buf = [0u8; 4096];
        while std::time::Instant::now() < end {
            if let Ok((len, from)) = s.recv_from(&mut buf) {
                if let Ok(gander_sec::spdu::Checked::Verified(v)) =
                    gander_sec::spdu::verify(Profile::Standard, &store, &buf[..len], 0)
                {
                    assert_eq!(from.ip().to_string(), "fd00:85:2::fe");
                    ok.push(v.header().spdu_number);
                }
            }
        }
        ok
    });
    rx.recv().unwrap();
    let ied_ns = lab.ns(Role::Ied);
    std::thread::spawn(move || {
        gander_lab::enter(&ied_ns).unwrap();
        let s = std::net::UdpSocket::bind("[fd00:85:1::1]:102").unwrap();
        for i in 0..n {
            s.send_to(
                &craft::rgoose_spdu(Profile::Standard, APPID, i, 1, i),
                "[fd00:85:1::fe]:102",
            )
            .unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
    })
    .join()
    .unwrap();
    assert_eq!(sub.join().unwrap(), (0..n).collect::<Vec<_>>());

    // Inbound: the subscriber publishes to ff05::103; the gateway listens on that group.
    let ied = collect6(lab.ns(Role::Ied), "[fd00:85:1::1]:102", 1500, None);
    let good = keys(GW_KEYS);
    let bad = keys(ATTACKER_KEYS);
    let mut frames: Vec<Vec<u8>> = (0..n).map(|i| spdu(Some((&good, 1)), i)).collect();
    frames.push(spdu(Some((&bad, 1)), n));
    frames.push(spdu(None, n + 1));
    let sub_ns = lab.ns(Role::Sub);
    std::thread::spawn(move || {
        gander_lab::enter(&sub_ns).unwrap();
        let s = common::bind_udp("[fd00:85:2::2]:102");
        for f in &frames {
            s.send_to(f, format!("[ff05::103%{sub0}]:102")).unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
    })
    .join()
    .unwrap();
    let (ok, unreadable) = ied.join().unwrap();
    assert_eq!(unreadable, 0);
    assert_eq!(ok, (0..n).collect::<Vec<_>>());
    let policy = gw.stop();
    let c = policy.counters();
    assert_eq!(c.outbound.protected, n as u64, "{c:?}");
    assert_eq!(c.inbound.verified, n as u64, "{c:?}");
    assert_eq!(c.inbound.dropped_total(), 2, "{c:?}");
}
