//! The gateway fails closed with the `udp` relay driver (routed lab): only verified R-GOOSE reaches the
//! IED, all of it and in order; the IED's plain R-GOOSE reaches the subscriber protected.

use crate::common;

use common::*;
use gander_lab::{addr, Mode, Role};
use gander_sec::spdu::{self, Checked};
use gander_sec::{KeyStore, Profile};
use gander_testkit::frames::{self as craft, UdpAddrs};
use gander_wire::ip::locate_udp;
use gander_wire::spdu::SessionPdu;
use std::time::Duration;

const CONFIG: &str = r#"
driver = "udp"
keys = "unused.toml"
[udp]
ied_listen = "10.85.1.254:102"
net_peer = "10.85.2.2:102"
net_listen = "10.85.2.254:102"
ied_peer = "10.85.1.1:102"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 2
[[rule]]
direction = "inbound"
action = "verify"
"#;

fn spdu(store: Option<(&KeyStore, u32)>, n: u32) -> Vec<u8> {
    let a = UdpAddrs {
        src_mac: [2; 6],
        dst_mac: [2; 6],
        src_ip: addr::R_SUB_IP,
        dst_ip: addr::R_GW_NET_IP,
        src_port: 102,
        dst_port: 102,
    };
    let f = craft::udp_frame(&a, &craft::rgoose_spdu(Profile::Standard, 0x10, n, 1, n));
    let f = match store {
        Some((s, id)) => secure(s, id, &f),
        None => f,
    };
    let loc = locate_udp(&f).unwrap();
    f[loc.payload].to_vec()
}

/// Receives datagrams on `bind` in namespace `ns` for `ms`; returns the SPDU numbers that pass
/// `check` and the count of those that do not.
fn collect(
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
            let good = match keys {
                Some(_) => matches!(
                    spdu::verify(Profile::Standard, &store, p, 0),
                    Ok(Checked::Verified(_))
                ),
                None => matches!(
                    spdu::verify(Profile::Standard, &store, p, 0),
                    Ok(Checked::Unsecured(_))
                ),
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
fn udp_relay_fails_closed_and_delivers_in_order() {
    let Some(lab) = lab("udp", Mode::Routed) else {
        return;
    };
    let gw = Gateway::start(&lab.ns(Role::Gw), CONFIG, keys(GW_KEYS));
    let good = keys(GW_KEYS);
    let bad = keys(ATTACKER_KEYS);
    let n = 40u32;

    let ied = collect(lab.ns(Role::Ied), "10.85.1.1:102", 2500, None);
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
        let s = common::bind_udp("10.85.2.66:102");
        for (i, f) in attacks.iter().enumerate() {
            let _ = s.send_to(f, "10.85.2.254:102");
            pace(i);
        }
    });
    let l2 = legit.clone();
    let p = std::thread::spawn(move || {
        gander_lab::enter(&sub_ns).unwrap();
        let s = common::bind_udp("10.85.2.2:102");
        for f in &l2 {
            s.send_to(f, "10.85.2.254:102").unwrap();
            std::thread::sleep(Duration::from_millis(4));
        }
        for f in &l2 {
            s.send_to(f, "10.85.2.254:102").unwrap();
        }
        // The same frames from another source port: the port is outside every MAC.
        let other_port = common::bind_udp("10.85.2.2:4000");
        for f in &l2 {
            other_port.send_to(f, "10.85.2.254:102").unwrap();
        }
    });
    a.join().unwrap();
    p.join().unwrap();
    // Then the attacker replays the captured frames from its own address, and sends the IED's
    // own stream (protected with the gateway's outbound key 2) back at it.
    let (l3, atk_ns) = (legit.clone(), lab.ns(Role::Atk));
    let reflected: Vec<Vec<u8>> = (0..4).map(|i| spdu(Some((&good, 2)), 2000 + i)).collect();
    let late = l3.len() + reflected.len();
    std::thread::spawn(move || {
        gander_lab::enter(&atk_ns).unwrap();
        let s = common::bind_udp("10.85.2.66:102");
        for (i, f) in l3.iter().chain(&reflected).enumerate() {
            s.send_to(f, "10.85.2.254:102").unwrap();
            pace(i);
        }
    })
    .join()
    .unwrap();
    let (ok, unreadable) = ied.join().unwrap();
    assert_eq!(unreadable, 0);
    assert_eq!(ok, (0..n).collect::<Vec<_>>());

    let sub = collect(lab.ns(Role::Sub), "10.85.2.2:102", 1000, Some(GW_KEYS));
    let ied_ns = lab.ns(Role::Ied);
    std::thread::spawn(move || {
        gander_lab::enter(&ied_ns).unwrap();
        let s = common::bind_udp("10.85.1.1:102");
        for i in 0..n {
            s.send_to(
                &craft::rgoose_spdu(Profile::Standard, 0x10, i, 1, i),
                "10.85.1.254:102",
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
    // Every datagram sent to the gateway is accounted for: dropped by the policy, or by the
    // kernel before the relay read it (a full receive buffer on a loaded host; reported as
    // socket drops, never silent).
    let kernel = c
        .kernel
        .expect("the udp driver reports its sockets' counters");
    assert_eq!(
        c.inbound.dropped_total() + kernel.net.drops,
        (n_attacks + 2 * legit.len() + late) as u64,
        "{c:?}"
    );
    assert_eq!(c.inbound.dropped.get("reflected"), Some(&4), "{c:?}");
    assert_eq!(c.outbound.protected, n as u64);
}
