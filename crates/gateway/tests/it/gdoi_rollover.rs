//! The gateway's `[gdoi]` member rolls keys while GOOSE flows: a publishing gateway (outbound
//! `protect` bound to group goose-1) and a subscribing gateway (inbound `verify` bound to the
//! same group) each register with the key server over loopback UDP; the key server's schedule
//! then makes the next key and pushes it (GROUPKEY-PUSH under the KEK the registration gave)
//! before the current one expires, and the publisher switches to it at its activation. Every
//! frame sent across the change is protected, verified and counted on both sides: none lost,
//! none failing verification, and the publisher ends on the new key.

use gander_gateway::config::{Config, Direction};
use gander_gateway::driver::{Control, Housekeeping};
use gander_gateway::gdoi_keys::GdoiMember;
use gander_gateway::policy::{Decision, Policy};
use gander_gdoi::net::kdc::{GroupPolicy, Kdc, KdcPolicy, MemberPolicy};
use gander_wire::isakmp::iec61850::oid;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdPayload, Traffic};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use zeroize::Zeroizing;

const DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];
const PSK: &str = "000102030405060708090a0b0c0d0e0f";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn kdc_policy(key_id: u32, pushes: [SocketAddr; 2]) -> KdcPolicy {
    let m = |name: &str, a: [u8; 4], push: SocketAddr| MemberPolicy {
        identity: name.as_bytes().to_vec(),
        psk: Zeroizing::new(hex::decode(PSK).unwrap()),
        address: a.into(),
        groups: vec![b"goose-1".to_vec()],
        cert: None,
        push: Some(push),
    };
    KdcPolicy {
        identity: IdPayload {
            id_type: id_type::KEY_ID,
            protocol: 0,
            port: 0,
            data: b"kdc".to_vec(),
        },
        members: vec![
            m("gw-pub", [127, 0, 0, 1], pushes[0]),
            m("gw-sub", [127, 0, 0, 2], pushes[1]),
        ],
        groups: vec![GroupPolicy {
            id: b"goose-1".to_vec(),
            oid: oid::GOOSE.to_string(),
            traffic: Traffic::L2 { mac: DST, appid: 1 },
            mac_code: 2,
            enc_code: 0,
            // The next key is pushed 2 s (the activation delay) before the current one ends
            // and activates when it ends: 4 s after the start, then every 6 s.
            lifetime_secs: 6,
            activation_delay_secs: 2,
            overlap_secs: 6,
            key_id,
            key: Zeroizing::new(vec![key_id as u8; 32]),
        }],
    }
}

struct Server {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(addr: SocketAddr, key_id: u32, pushes: [SocketAddr; 2]) -> Server {
        let sock = UdpSocket::bind(addr).unwrap();
        let mut kdc = Kdc::new(sock, kdc_policy(key_id, pushes));
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                let _ = kdc.poll(Duration::from_millis(20));
            }
        });
        Server {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn gateway(
    dir: &Path,
    kdc: SocketAddr,
    me: &str,
    ip: &str,
    rule: &str,
    push: SocketAddr,
) -> (Policy, Arc<Control>, GdoiMember) {
    let text = format!(
        "driver = \"udp\"\nkeys = \"keys.toml\"\nreflected = \"allow\"\n\
         [udp]\nied_listen = \"127.0.0.1:1\"\nnet_peer = \"127.0.0.1:2\"\nnet_listen = \"127.0.0.1:3\"\nied_peer = \"127.0.0.1:4\"\n\
         [gdoi]\nservers = [\"{kdc}\"]\nidentity = \"{me}\"\npsk_hex = \"{PSK}\"\ngroups = [\"goose-1\"]\nbind = \"{ip}\"\npush_listen = \"{push}\"\ntimeout_s = 0.3\nrenew_before_s = 1\n\
         {rule}"
    );
    let cfg = Config::from_toml(&text, dir).expect("config");
    let policy = Policy::new(&cfg, gander_sec::KeyStore::new()).expect("policy");
    let ctl = Arc::new(Control::new(None, None));
    let member = GdoiMember::start(&cfg, ctl.clone(), None).unwrap().unwrap();
    (policy, ctl, member)
}

#[test]
fn goose_flows_across_a_key_change_with_no_frame_lost() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keys.toml"), "").unwrap();
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let kdc_addr = SocketAddr::from(([127, 0, 0, 1], port.port()));
    let free = |ip: [u8; 4]| {
        UdpSocket::bind(SocketAddr::from((ip, 0)))
            .unwrap()
            .local_addr()
            .unwrap()
    };
    let pushes = [free([127, 0, 0, 1]), free([127, 0, 0, 2])];
    let _ks = Server::start(kdc_addr, 0x10, pushes);
    let (mut publ, pctl, pm) = gateway(
        dir.path(),
        kdc_addr,
        "gw-pub",
        "127.0.0.1",
        "[[rule]]\ndirection = \"outbound\"\nkind = \"goose\"\nappid = 1\naction = \"protect\"\ngroup = \"goose-1\"\n",
        pushes[0],
    );
    let (mut sub, sctl, sm) = gateway(
        dir.path(),
        kdc_addr,
        "gw-sub",
        "127.0.0.2",
        "[[rule]]\ndirection = \"inbound\"\nkind = \"goose\"\naction = \"verify\"\ngroup = \"goose-1\"\n",
        pushes[1],
    );
    let (mut ph, mut sh) = (Housekeeping::new(), Housekeeping::new());
    // Before the first key: the protect rule drops (never forwards unprotected).
    let first = gander_testkit::frames::goose_frame([2, 0, 0, 0, 0, 1], DST, None, 1, 1, 0);
    assert!(!publ
        .handle(Direction::Outbound, &first, now(), &mut Vec::new())
        .is_forward());
    // Wait until the first key is active on the publisher.
    let t0 = Instant::now();
    let mut frame_no = 1u32;
    loop {
        ph.tick(&pctl, &mut publ);
        sh.tick(&sctl, &mut sub);
        let f = gander_testkit::frames::goose_frame([2, 0, 0, 0, 0, 1], DST, None, 1, 1, frame_no);
        frame_no += 1;
        if let Decision::Forward(out) = publ.handle(Direction::Outbound, &f, now(), &mut Vec::new())
        {
            let out = out.to_vec();
            if sub
                .handle(Direction::Inbound, &out, now(), &mut Vec::new())
                .is_forward()
            {
                break;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(8),
            "no key became active"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The first key (the policy's seed, 0x10); the schedule's next one comes by push.
    assert!(publ.keys().get(0x10).is_some() && sub.keys().get(0x10).is_some());
    let (mut sent, mut protected, mut verified) = (0u64, 0u64, 0u64);
    let mut failures = Vec::new();
    let end = Instant::now() + Duration::from_secs(7);
    let mut new_key = None;
    while Instant::now() < end {
        ph.tick(&pctl, &mut publ);
        sh.tick(&sctl, &mut sub);
        let f = gander_testkit::frames::goose_frame([2, 0, 0, 0, 0, 1], DST, None, 1, 1, frame_no);
        frame_no += 1;
        sent += 1;
        match publ.handle(Direction::Outbound, &f, now(), &mut Vec::new()) {
            Decision::Forward(out) => {
                protected += 1;
                let out = out.to_vec();
                match sub.handle(Direction::Inbound, &out, now(), &mut Vec::new()) {
                    Decision::Forward(_) => verified += 1,
                    Decision::Drop(r) => failures.push(format!("verify: {r:?}")),
                }
            }
            Decision::Drop(r) => failures.push(format!("protect: {r:?}")),
        }
        if let Some(k) = publ.keys().iter().map(|k| k.id).find(|id| *id != 0x10) {
            if sub.keys().get(k).is_some() {
                new_key = Some(k);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let (ps, ss) = (pm.status(), sm.status());
    drop((pm, sm));
    assert!(
        failures.is_empty(),
        "{} failures: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert_eq!(protected, sent);
    assert_eq!(verified, sent);
    assert!(sent > 500, "{sent}");
    let new_key = new_key.unwrap_or_else(|| panic!("no second key held by both: {ps:?} {ss:?}"));
    // The publisher ends protecting with the new key, the subscriber holds it.
    let f = gander_testkit::frames::goose_frame([2, 0, 0, 0, 0, 1], DST, None, 1, 1, frame_no);
    let mut buf = Vec::new();
    let Decision::Forward(out) = publ.handle(Direction::Outbound, &f, now(), &mut buf) else {
        panic!("protect after the change")
    };
    // Every key the subscriber holds but the first: the frame verifies with them alone.
    let mut only_new = gander_sec::KeyStore::new();
    for k in sub.keys().iter().filter(|k| k.id != 0x10) {
        only_new
            .insert(
                gander_sec::KeyEntry::new(
                    k.id,
                    k.mac,
                    k.enc,
                    k.secret(),
                    gander_sec::default_provider(),
                )
                .unwrap(),
            )
            .unwrap();
    }
    assert!(only_new.get(new_key).is_some());
    assert!(
        gander_sec::l2::verify(gander_sec::Profile::Standard, &only_new, &out, now()).is_ok(),
        "the publisher still protects with the old key"
    );
    // The next key came by push (one registration each), not by registering again.
    assert_eq!(ps[0].counters.registrations, 1, "{ps:?}");
    assert_eq!(ss[0].counters.registrations, 1, "{ss:?}");
    assert!(ps[0].counters.pushes >= 1, "{ps:?}");
    assert!(ss[0].counters.pushes >= 1, "{ss:?}");
}
