//! Junk flood from the attacker while valid GOOSE flows both ways: from the counters, the
//! gateway itself dropped no valid frame (no policy drop other than the junk's, no socket
//! drop, no transmit error), and every valid frame arrived.

use crate::common;

use common::*;
use gander_gateway::af_packet::RawSocket;
use gander_lab::{addr, Mode, Role};
use gander_testkit::frames as craft;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MCAST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x50];

/// The packaged configuration's scheduling (`rt_priority = 50`, packaging/gateway.toml.example):
/// the claim is about the gateway, not about how a shared host schedules it. At normal priority
/// the packet threads compete with every other runnable thread; `make test` runs four test
/// binaries at once on two vCPUs, and in one such run (CI, 2026-11-27) the network-side thread
/// was kept off the CPU long enough for its 2048-slot ring to overflow at 50,000 frames/s: 467
/// kernel drops, two of them valid frames. A `SCHED_FIFO` thread runs as soon as it is woken.
const CONFIG: &str = r#"
driver = "l2"
keys = "unused.toml"
rt_priority = 50
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
"#;

/// Counts GOOSE frames from `src` arriving on `dev` until `stop`.
fn counter(
    ns: String,
    dev: &'static str,
    src: [u8; 6],
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        gander_lab::enter(&ns).expect("enter");
        let s = RawSocket::open(dev).expect("socket");
        tx.send(()).expect("ready");
        let mut buf = vec![0u8; 70000];
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            if !gander_gateway::driver::poll_fds(&[s.fd()], 20).expect("poll")[0] {
                continue;
            }
            while let Some(len) = s.recv(&mut buf, true).expect("recv") {
                let f = &buf[..len];
                if f.len() > 14 && f[6..12] == src && f[12..14] == [0x88, 0xb8] {
                    n += 1;
                }
            }
        }
        n
    });
    rx.recv().expect("ready");
    h
}

#[test]
fn under_a_junk_flood_the_gateway_drops_no_valid_frame() {
    let Some(lab) = lab("dpfld", Mode::L2) else {
        return;
    };
    let gw = Gateway::start(&lab.ns(Role::Gw), CONFIG, keys(GW_KEYS));
    let good = keys(GW_KEYS);
    let bad = keys(ATTACKER_KEYS);
    let stop = Arc::new(AtomicBool::new(false));
    let at_ied = counter(lab.ns(Role::Ied), "ied0", addr::SUB_MAC, stop.clone());
    let at_sub = counter(lab.ns(Role::Sub), "sub0", addr::IED_MAC, stop.clone());
    // The attacker: forged GOOSE (right key id, wrong secret) at about 50,000 frames/s.
    let (stop_atk, junk_sent) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let (s2, j2, ns) = (stop_atk.clone(), junk_sent.clone(), lab.ns(Role::Atk));
    let junk = secure(
        &bad,
        1,
        &craft::goose_frame(addr::ATK_MAC, MCAST, None, 0x50, 1, 1),
    );
    let attacker = std::thread::spawn(move || {
        gander_lab::enter(&ns).expect("enter");
        let s = RawSocket::open("atk0").expect("atk0");
        let start = Instant::now();
        let mut sent = 0u64;
        while !s2.load(Ordering::Relaxed) {
            let due = (start.elapsed().as_secs_f64() * 50_000.0) as u64;
            if sent >= due {
                std::thread::sleep(Duration::from_micros(200));
                continue;
            }
            for _ in 0..(due - sent).min(64) {
                if s.send(&junk).is_ok() {
                    sent += 1;
                }
            }
        }
        j2.store(sent, Ordering::Relaxed);
    });
    std::thread::sleep(Duration::from_millis(100));
    // Valid traffic both ways at the 4 ms rate: the IED's plain GOOSE, the publisher's
    // secured GOOSE.
    let n = 250u32;
    let senders: Vec<_> = [(Role::Ied, "ied0"), (Role::Sub, "sub0")]
        .into_iter()
        .map(|(role, dev)| {
            let ns = lab.ns(role);
            let frames: Vec<Vec<u8>> = (0..n)
                .map(|i| {
                    if role == Role::Ied {
                        craft::goose_frame(addr::IED_MAC, MCAST, None, 0x51, 1, i)
                    } else {
                        secure(
                            &good,
                            1,
                            &craft::goose_frame(addr::SUB_MAC, MCAST, None, 0x52, 1, i),
                        )
                    }
                })
                .collect();
            std::thread::spawn(move || {
                gander_lab::enter(&ns).expect("enter");
                let s = RawSocket::open(dev).expect("socket");
                let start = Instant::now();
                for (i, f) in frames.iter().enumerate() {
                    let due = start + Duration::from_millis(4 * i as u64);
                    while Instant::now() < due {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    s.send(f).expect("send");
                }
            })
        })
        .collect();
    for s in senders {
        s.join().expect("sender");
    }
    std::thread::sleep(Duration::from_millis(100));
    stop_atk.store(true, Ordering::Relaxed);
    attacker.join().expect("attacker");
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let (ied_got, sub_got) = (at_ied.join().expect("ied"), at_sub.join().expect("sub"));
    let p = gw.stop();
    let c = p.counters();
    let k = c.kernel.expect("kernel counters");
    let junk = junk_sent.load(Ordering::Relaxed);
    assert!(junk > 10_000, "the flood ran: {junk}");
    // From the counters: nothing valid was dropped inside the gateway.
    assert_eq!(c.outbound.dropped_total(), 0, "{c:?}");
    assert_eq!(c.outbound.protected, u64::from(n), "{c:?}");
    assert_eq!(c.inbound.verified, u64::from(n), "{c:?}");
    assert_eq!(k.ied.drops, 0, "{k:?}");
    assert_eq!(k.net.drops, 0, "{k:?}");
    assert_eq!(c.outbound.tx_errors + c.inbound.tx_errors, 0, "{c:?}");
    // Every inbound drop is junk, and every junk frame that reached the gateway was dropped.
    let dropped: u64 = c.inbound.dropped.values().sum();
    assert_eq!(
        c.inbound.dropped.get("bad-mac").copied(),
        Some(dropped),
        "{c:?}"
    );
    assert_eq!(c.inbound.received, dropped + u64::from(n), "{c:?}");
    assert!(dropped <= junk, "{dropped} {junk}");
    // And everything valid arrived.
    assert_eq!(ied_got, u64::from(n));
    assert_eq!(sub_got, u64::from(n));
}
