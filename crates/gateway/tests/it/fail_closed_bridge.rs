//! The gateway fails closed with the `l2` (AF_PACKET) and `nfqueue` (kernel bridge + iptables
//! NFQUEUE) drivers, in network namespaces.
//!
//! The legit publisher (subscriber namespace, network side) sends secured GOOSE and R-GOOSE to
//! the legacy IED; the attacker sends forged frames, every single-bit flip of a secured frame,
//! replays, frames under an unknown and an expired key id, every truncation and malformed
//! frames. On the IED side only the legit frames may arrive, all of them, in order, stripped
//! of their security. Outbound, the IED's plain GOOSE and R-GOOSE arrive at the subscriber
//! protected and verifiable, in order.

use crate::common;

use common::*;
use gander_gateway::af_packet::RawSocket;
use gander_lab::{addr, Mode, Role};
use gander_sec::l2::{self, CheckedGoose};
use gander_sec::spdu::{self, Checked};
use gander_sec::Profile;
use gander_testkit::frames::{self as craft, UdpAddrs};
use gander_wire::goose::GoosePdu;
use gander_wire::ip::locate_udp;
use gander_wire::l2_frame::L2Frame;
use gander_wire::spdu::SessionPdu;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const CONFIG: &str = r#"
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

const MCAST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x10];
const APPID: u16 = 0x0010;

/// What one receiver saw: (kind, sequence) of every IEC 61850 frame, in arrival order, and
/// the number of frames it could not read.
#[derive(Default, Debug)]
struct Seen {
    frames: Vec<(&'static str, u32)>,
    unreadable: usize,
}

/// Counts IEC 61850 frames arriving on `dev` in namespace `ns` until `stop`. With `keys`, the
/// frames must verify (outbound check); without, they must be unsecured (inbound, stripped).
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
        let store = keys.map(common::keys);
        let mut seen = Seen::default();
        let mut buf = vec![0u8; 70000];
        let mut quiet_since = None;
        loop {
            if stop.load(Ordering::SeqCst) {
                let t = *quiet_since.get_or_insert_with(std::time::Instant::now);
                if t.elapsed() > Duration::from_millis(300) {
                    break;
                }
            }
            let ready = gander_gateway::driver::poll_fds(&[sock.fd()], 20).unwrap();
            if !ready[0] {
                continue;
            }
            let Some(n) = sock.recv(&mut buf, true).unwrap() else {
                continue;
            };
            let f = &buf[..n];
            if let Ok((l2f, _)) = L2Frame::parse(f) {
                let ok = match &store {
                    Some(s) => matches!(
                        l2::verify(Profile::Standard, s, f, 0),
                        Ok(CheckedGoose::Verified(_))
                    ),
                    None => l2f.body.extension.is_none(),
                };
                match GoosePdu::parse(&l2f.body.apdu) {
                    Ok(p) if ok => seen.frames.push(("goose", p.sq_num)),
                    _ => seen.unreadable += 1,
                }
            } else if let Ok(loc) = locate_udp(f) {
                if loc.dst_port != 102 {
                    continue;
                }
                let p = &f[loc.payload];
                let ok = match &store {
                    Some(s) => matches!(
                        spdu::verify(Profile::Standard, s, p, 0),
                        Ok(Checked::Verified(_))
                    ),
                    None => matches!(
                        spdu::verify(Profile::Standard, &Default::default(), p, 0),
                        Ok(Checked::Unsecured(_))
                    ),
                };
                match SessionPdu::parse(p, &Profile::Standard.dialect()) {
                    Ok(pdu) if ok => seen.frames.push(("r-goose", pdu.header.spdu_number)),
                    _ => seen.unreadable += 1,
                }
            } else if f.len() >= 14 && (f[12..14] == [0x88, 0xb8] || f[12..14] == [0x81, 0x00]) {
                seen.unreadable += 1;
            }
        }
        seen
    });
    while !ready.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(5));
    }
    h
}

const STACKS: &[&[(u16, u16)]] = &[
    &[(0x88a8, 100)],
    &[(0x88a8, 100), (0x8100, 10)],
    &[(0x8100, 100), (0x8100, 10)],
    &[(0x9100, 5)],
    &[(0x8100, 0)],
];

fn goose_from_sub(sq: u32) -> Vec<u8> {
    craft::goose_frame(addr::SUB_MAC, MCAST, None, APPID, 1, sq)
}

fn rgoose_from_sub(n: u32) -> Vec<u8> {
    let a = UdpAddrs {
        src_mac: addr::SUB_MAC,
        dst_mac: addr::IED_MAC,
        src_ip: addr::SUB_IP,
        dst_ip: addr::IED_IP,
        src_port: 102,
        dst_port: 102,
    };
    craft::udp_frame(&a, &craft::rgoose_spdu(Profile::Standard, APPID, n, 1, n))
}

#[test]
fn l2_driver_fails_closed_and_delivers_in_order() {
    scenario("l2", Mode::L2, CONFIG, true);
}

/// With the documented default `other = "pass"`: tag stacks must not turn IEC 61850 traffic
/// into "other" traffic that passes.
#[test]
fn l2_driver_with_other_pass_fails_closed() {
    let config = CONFIG.replace("other_inbound = \"drop\"\n", "");
    scenario("l2p", Mode::L2, &config, true);
}

/// With the kernel bypass: only IEC 61850 traffic reaches gander, the rest is tc's. The IED
/// must still receive only the legit frames, all of them, in order.
#[test]
fn l2_driver_with_tc_bypass_fails_closed() {
    let config = CONFIG.replace("net = \"gn0\"\n", "net = \"gn0\"\nbypass = \"tc\"\n");
    assert!(config.contains("bypass"));
    scenario("l2tc", Mode::L2, &config, true);
    let config = config.replace("other_inbound = \"drop\"\n", "");
    scenario("l2tcp", Mode::L2, &config, true);
}

/// Two workers per direction (`PACKET_FANOUT`), with the kernel bypass.
#[test]
fn l2_driver_with_two_workers_fails_closed() {
    let config = CONFIG.replace(
        "net = \"gn0\"\n",
        "net = \"gn0\"\nbypass = \"tc\"\nworkers = 2\n",
    );
    assert!(config.contains("workers"));
    scenario("l2w2", Mode::L2, &config, true);
}

const NFQ_CONFIG: &str = r#"
driver = "nfqueue"
keys = "unused.toml"
[nfqueue]
queue = 7
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
fn nfqueue_driver_fails_closed_and_delivers_in_order() {
    scenario("nfq", Mode::Bridge, NFQ_CONFIG, false);
}

/// With `goose` (the l2 driver), layer-2 GOOSE is part of the traffic; without (nfqueue:
/// GOOSE never reaches iptables and ebtables drops it), only R-GOOSE.
fn scenario(tag: &str, mode: Mode, config: &str, goose: bool) {
    let Some(lab) = lab(tag, mode) else {
        return;
    };
    let gw = Gateway::start(&lab.ns(Role::Gw), config, keys(GW_KEYS));
    let good = keys(GW_KEYS);
    let bad = keys(ATTACKER_KEYS);

    // ---- inbound: legit publisher vs attacker, counted on the IED ----
    let stop = Arc::new(AtomicBool::new(false));
    let ied_rx = receiver(lab.ns(Role::Ied), "ied0", None, stop.clone());
    let legit_n = 40u32;
    let mut attacks: Vec<Vec<u8>> = Vec::new();
    let mut legit: Vec<Vec<u8>> = Vec::new();
    for i in 0..legit_n {
        if goose {
            legit.push(secure(&good, 1, &goose_from_sub(i)));
        }
        legit.push(secure(&good, 1, &rgoose_from_sub(i)));
    }
    let kinds: Vec<fn(u32) -> Vec<u8>> = if goose {
        vec![goose_from_sub, rgoose_from_sub]
    } else {
        vec![rgoose_from_sub]
    };
    let mut seq = 1000u32;
    let mut next = || {
        seq += 1;
        seq
    };
    for mk in kinds.iter().copied() {
        // Forged (right key id, wrong secret), unknown key id, expired key id, unsecured.
        attacks.push(secure(&bad, 1, &mk(next())));
        attacks.push(secure(&bad, 9, &mk(next())));
        attacks.push(secure(&bad, 5, &mk(next())));
        attacks.push(mk(next()));
        // Every single-bit flip after the Ethernet addresses (which no IEC 62351-6 MAC covers).
        let base = secure(&good, 1, &mk(next()));
        for i in 12 * 8..base.len() * 8 {
            let mut f = secure(&good, 1, &mk(next()));
            f[i / 8] ^= 1 << (i % 8);
            attacks.push(f);
        }
        // Every truncation.
        let f = secure(&good, 1, &mk(next()));
        for len in 14..f.len() {
            attacks.push(f[..len].to_vec());
        }
        // Unsecured and forged frames behind every tag stack an IED's kernel strips.
        for stack in STACKS {
            attacks.push(craft::tagged(&mk(next()), stack));
            attacks.push(craft::tagged(&secure(&bad, 1, &mk(next())), stack));
        }
        // The IED's own stream, protected with the gateway's outbound key, sent back at it.
        attacks.push(secure(&good, 2, &mk(next())));
        // A key holder's valid frame with bytes after Length / the IPv4 packet that are not
        // padding. (On the nfqueue bridge the kernel trims an IPv4 frame to its total length
        // before iptables, so the bytes never reach the IED either way.)
        if goose {
            let mut junk = secure(&good, 1, &mk(next()));
            junk.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0]);
            attacks.push(junk);
        }
        // Malformed: garbage behind the right headers.
        let mut g = f.clone();
        for (j, b) in g
            .iter_mut()
            .enumerate()
            .skip(if f[12] == 0x88 { 14 } else { 42 })
        {
            *b = (j as u8).wrapping_mul(37);
        }
        attacks.push(g);
    }
    let (pub_ns, atk_ns) = (lab.ns(Role::Sub), lab.ns(Role::Atk));
    let legit2 = legit.clone();
    let n_attacks = attacks.len();
    let attacker = std::thread::spawn(move || {
        gander_lab::enter(&atk_ns).unwrap();
        let s = RawSocket::open("atk0").unwrap();
        for (i, f) in attacks.iter_mut().enumerate() {
            // The attacker sends from its own MAC: spoofing the subscriber's would teach the
            // network switch to deliver the subscriber's traffic to the attacker's port
            // (FDB poisoning, outside IEC 62351-6: Ethernet addresses are not covered).
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
        // Replays of everything already delivered, as they were, and R-GOOSE from another
        // source address and port (fields outside every IEC 62351-6 MAC).
        std::thread::sleep(Duration::from_millis(50));
        for (i, f) in legit2.iter().enumerate() {
            s.send(f).unwrap();
            pace(i);
            if f.len() > 14 && f[12..14] == [0x08, 0x00] {
                s.send(&craft::resourced(f, [10, 85, 0, 77], 102)).unwrap();
                s.send(&craft::resourced(f, addr::SUB_IP, 40000 + i as u16))
                    .unwrap();
                pace(i);
            }
        }
    });
    attacker.join().unwrap();
    publisher.join().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    let seen = ied_rx.join().unwrap();

    eprintln!(
        "{tag} gateway after the inbound phase: {:?}",
        gw.ctl.counters.lock().map(|c| c.clone())
    );
    let expect_goose: Vec<u32> = (0..legit_n).collect();
    let got = |k: &str| -> Vec<u32> {
        seen.frames
            .iter()
            .filter(|(kk, _)| *kk == k)
            .map(|(_, s)| *s)
            .collect()
    };
    assert_eq!(
        seen.unreadable, 0,
        "IED received unreadable IEC frames: {seen:?}"
    );
    if goose {
        assert_eq!(got("goose"), expect_goose, "GOOSE on the IED side");
    } else {
        assert!(got("goose").is_empty());
    }
    assert_eq!(got("r-goose"), expect_goose, "R-GOOSE on the IED side");

    // ---- outbound: the IED's plain traffic reaches the subscriber protected, in order ----
    let stop2 = Arc::new(AtomicBool::new(false));
    let sub_rx = receiver(lab.ns(Role::Sub), "sub0", Some(GW_KEYS), stop2.clone());
    let ied_ns = lab.ns(Role::Ied);
    std::thread::spawn(move || {
        gander_lab::enter(&ied_ns).unwrap();
        let s = RawSocket::open("ied0").unwrap();
        let a = UdpAddrs::IED_TO_SUB;
        for i in 0..legit_n {
            if goose {
                s.send(&craft::goose_frame(addr::IED_MAC, MCAST, None, APPID, 1, i))
                    .unwrap();
            }
            s.send(&craft::udp_frame(
                &a,
                &craft::rgoose_spdu(Profile::Standard, APPID, i, 1, i),
            ))
            .unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
    })
    .join()
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stop2.store(true, Ordering::SeqCst);
    let seen = sub_rx.join().unwrap();
    eprintln!(
        "{tag} gateway after the outbound phase: {:?}",
        gw.ctl.counters.lock().map(|c| c.outbound.clone())
    );
    let got = |k: &str| -> Vec<u32> {
        seen.frames
            .iter()
            .filter(|(kk, _)| *kk == k)
            .map(|(_, s)| *s)
            .collect()
    };
    assert_eq!(seen.unreadable, 0, "{seen:?}");
    if goose {
        assert_eq!(got("goose"), expect_goose);
    }
    assert_eq!(got("r-goose"), expect_goose);

    let policy = gw.stop();
    let c = policy.counters();
    eprintln!("{}", serde_json::to_string_pretty(c).unwrap());
    assert_eq!(c.inbound.verified, legit.len() as u64);
    assert_eq!(c.outbound.protected, legit.len() as u64);
    // Only the legit frames were forwarded; everything else that reached the gateway was
    // dropped with a reason: every attack and every replay (plus the odd frame of the
    // namespaces' own kernels, e.g. ARP, which `other_inbound = "drop"` also drops).
    assert_eq!(
        c.inbound.forwarded - c.inbound.other_passed,
        legit.len() as u64,
        "{c:?}"
    );
    assert_eq!(
        c.inbound.received,
        c.inbound.forwarded + c.inbound.dropped_total()
    );
    eprintln!("attacks sent {n_attacks}, legit {}", legit.len());
    // The nfqueue driver sees only what the kernel bridge queues: IPv4 with a damaged header
    // is dropped by br_netfilter first, and a damaged EtherType is not IPv4 at all.
    // With the tc bypass, an attack frame damaged into non-IEC traffic is tc's (bridged or
    // dropped in the kernel), never gander's.
    let tc = config.contains("bypass = \"tc\"");
    let (need_all, reasons): (bool, &[&str]) = if goose {
        (
            !tc,
            &[
                "bad-mac",
                "unknown-key",
                "key-expired",
                "replay",
                "unsecured",
                "malformed",
                "bad-checksum",
                "reflected",
            ],
        )
    } else {
        (
            false,
            &[
                "bad-mac",
                "unknown-key",
                "key-expired",
                "replay",
                "unsecured",
                "bad-checksum",
                "reflected",
            ],
        )
    };
    assert!(
        !need_all
            || c.inbound.dropped_total() + c.inbound.other_passed
                >= (n_attacks + legit.len()) as u64,
        "{c:?}"
    );
    for reason in reasons.iter().copied() {
        assert!(
            c.inbound.dropped.get(reason).copied().unwrap_or(0) > 0,
            "no {reason} drops: {c:?}"
        );
    }
    // Loss accounting: nothing was lost inside the gateway at this rate.
    assert_eq!(c.outbound.tx_errors, 0, "{c:?}");
    assert_eq!(c.inbound.tx_errors, 0, "{c:?}");
    // The l2 driver's sockets: the kernel's counters are there, nothing was dropped at the
    // sockets, and every frame the policy judged passed through them (the counters are read
    // once more after the last frame, so they cannot be behind the policy's).
    if mode == Mode::L2 {
        let k = c.kernel.expect("kernel counters of the l2 driver");
        assert_eq!(k.ied.drops, 0, "{k:?}");
        assert_eq!(k.net.drops, 0, "{k:?}");
        assert!(k.ied.packets >= c.outbound.received, "{k:?} {c:?}");
        assert!(k.net.packets >= c.inbound.received, "{k:?} {c:?}");
        let v: serde_json::Value =
            serde_json::from_str(&gander_gateway::service::report_json(c)).unwrap();
        assert_eq!(v["counters"]["kernel"]["ied"]["drops"], 0, "{v}");
    } else {
        assert!(c.kernel.is_none(), "{c:?}");
    }
}
