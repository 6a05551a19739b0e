//! Revocation over UDP on loopback (docs/gdoi.md "Revocation"): three members register with
//! `Kdc` and follow its pushes; ied-3 is removed from the policy (reload). The key server
//! withdraws the KEK in a push under the old KEK, the remaining members register again and get
//! the new KEK and a new TEK before it activates, the old TEK is deleted under the new KEK. The
//! remaining members hold the publishers' key at every sample (no gap); ied-3 is refused at
//! registration, cannot open any push under the new KEK, never sees the new TEK, and ends with
//! no key valid.

use crate::kdc_support;

use gander_gdoi::net::kdc::{unix_now, Kdc, KdcEvent, KdcPolicy};
use gander_gdoi::net::member::{register, MemberConfig};
use gander_gdoi::push::PushError;
use kdc_support::{group, id, member, policy, Model};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::mpsc;
use std::time::{Duration, Instant};

struct Outcome {
    model: Model,
    /// (second, Key IDs valid then).
    samples: Vec<(u64, Vec<u32>)>,
    /// Pushes accepted after the first re-registration (under the new KEK).
    later_pushes: Vec<Vec<u8>>,
    reregistered: bool,
    refused: bool,
}

fn cfg(server: SocketAddr, ip: IpAddr, name: &str, p: &KdcPolicy) -> MemberConfig {
    let m = p
        .members
        .iter()
        .find(|m| m.identity == name.as_bytes())
        .unwrap();
    MemberConfig {
        server,
        bind: Some(SocketAddr::new(ip, 0)),
        psk: m.psk.to_vec(),
        identity: id(name),
        group: id("goose-1"),
        timeout: Duration::from_millis(300),
        tries: 2,
    }
}

fn follow(sock: UdpSocket, c: MemberConfig, mut model: Model, until: Instant) -> Outcome {
    let mut o = Outcome {
        model: Model::default(),
        samples: Vec::new(),
        later_pushes: Vec::new(),
        reregistered: false,
        refused: false,
    };
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut buf = vec![0u8; 65_535];
    while Instant::now() < until {
        if let Ok(n) = sock.recv(&mut buf) {
            let now = unix_now();
            if model.push(&buf[..n], now).is_ok() && o.reregistered {
                o.later_pushes.push(buf[..n].to_vec());
            }
            if model.must_register {
                match register(&c) {
                    Ok(k) => {
                        model.registered(&k, unix_now());
                        o.reregistered = true;
                    }
                    Err(_) => {
                        o.refused = true;
                        model.must_register = false;
                    }
                }
            }
        }
        let now = unix_now();
        o.samples.push((now, model.valid_at(now)));
    }
    o.model = model;
    o
}

#[test]
fn revoked_member_ends_without_keys_others_continue() {
    let ips: [[u8; 4]; 3] = [[127, 0, 0, 11], [127, 0, 0, 12], [127, 0, 0, 13]];
    let names = ["ied-1", "ied-2", "ied-3"];
    let socks: Vec<UdpSocket> = ips
        .iter()
        .map(|ip| UdpSocket::bind(SocketAddr::new((*ip).into(), 0)).unwrap())
        .collect();
    let members = (0..3)
        .map(|i| member(names[i], ips[i], Some(socks[i].local_addr().unwrap())))
        .collect();
    let p = policy(members, group(3600, 0, 60));
    let ksock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let server = ksock.local_addr().unwrap();
    let (reload_tx, reload_rx) = mpsc::channel::<KdcPolicy>();
    let (ev_tx, ev_rx) = mpsc::channel::<KdcEvent>();
    let kp = p.clone();
    let end = Instant::now() + Duration::from_secs(9);
    let kdc = std::thread::spawn(move || {
        let mut k = Kdc::new(ksock, kp);
        while Instant::now() < end {
            if let Ok(np) = reload_rx.try_recv() {
                for e in k.reload(np, unix_now()).unwrap() {
                    let _ = ev_tx.send(e);
                }
            }
            if let Ok(Some(e)) = k.poll(Duration::from_millis(20)) {
                let _ = ev_tx.send(e);
            }
        }
    });
    let cfgs: Vec<MemberConfig> = (0..3)
        .map(|i| cfg(server, ips[i].into(), names[i], &p))
        .collect();
    let mut models = Vec::new();
    for c in &cfgs {
        let mut m = Model::default();
        m.registered(&register(c).unwrap(), unix_now());
        models.push(m);
    }
    let old_key = *models[0].keys.keys().next().unwrap();
    let until = Instant::now() + Duration::from_secs(7);
    let threads: Vec<_> = socks
        .into_iter()
        .zip(cfgs)
        .zip(models)
        .map(|((s, c), m)| std::thread::spawn(move || follow(s, c, m, until)))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let revoked_at = unix_now();
    let mut np = p.clone();
    np.members.retain(|m| m.identity != b"ied-3");
    reload_tx.send(np).unwrap();
    let out: Vec<Outcome> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    kdc.join().unwrap();
    let events: Vec<KdcEvent> = ev_rx.try_iter().collect();
    let new_key = events
        .iter()
        .find_map(|e| match e {
            KdcEvent::Revoked {
                identities,
                new_key_id,
                members,
                ..
            } => {
                assert_eq!(identities, &vec!["ied-3".to_string()]);
                assert_eq!(
                    *members, 3,
                    "the revoked member hears the KEK withdrawal too"
                );
                Some(*new_key_id)
            }
            _ => None,
        })
        .expect("revocation event");
    assert!(events.iter().any(
        |e| matches!(e, KdcEvent::KeysWithdrawn { key_ids, .. } if key_ids == &vec![old_key])
    ));
    assert!(events.iter().any(|e| matches!(e, KdcEvent::Refused { .. })));

    for o in &out[..2] {
        assert!(o.reregistered && !o.refused);
        // No gap: some key valid at every sample, the old one until the switch.
        for (t, valid) in &o.samples {
            assert!(!valid.is_empty(), "no key at {t}");
            if *t <= revoked_at + 1 {
                assert!(valid.contains(&old_key), "{t}: {valid:?}");
            }
        }
        let (_, last) = o.samples.last().unwrap();
        assert_eq!(last, &vec![new_key], "only the new key at the end");
        assert!(!o.model.keys.contains_key(&old_key), "old key deleted");
    }
    let r = &out[2];
    assert!(r.refused && !r.reregistered);
    assert!(!r.model.keys.contains_key(&new_key));
    let (t, last) = r.samples.last().unwrap();
    assert!(
        last.is_empty(),
        "revoked member still holds a valid key at {t}: {last:?}"
    );
    // It cannot open what follows under the new KEK.
    let later = out[0].later_pushes.clone();
    assert!(
        !later.is_empty(),
        "the old key's Delete came under the new KEK"
    );
    let mut r_model = out.into_iter().nth(2).unwrap().model;
    for msg in &later {
        assert_eq!(r_model.push(msg, unix_now()), Err(PushError::NotOurs));
    }
}
