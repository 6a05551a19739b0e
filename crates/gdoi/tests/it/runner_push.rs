//! The member runner (`net::member::Runner`) against the key server (`net::kdc::Kdc`) over UDP on
//! loopback, end to end: the registration's SA KEK (RFC 6407 3.2, 5.3) arms the runner for
//! GROUPKEY-PUSH, and the key server's scheduled rekey (RFC 6407 4) reaches it as a push, not
//! as a second registration.

use crate::kdc_support;

use gander_gdoi::member_state::{FailPolicy, MemberTiming};
use gander_gdoi::net::kdc::Kdc;
use gander_gdoi::net::member::{Runner, RunnerConfig};
use kdc_support::{group, id, member, policy};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn a_registered_runner_receives_the_scheduled_rekey_as_a_push() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let server = sock.local_addr().unwrap();
    let pol = member("ied-1", [127, 0, 0, 1], None);
    let psk = pol.psk.to_vec();
    // The runner's push socket first: its address is the member's push target in the policy.
    let cfg = RunnerConfig {
        servers: vec![server],
        bind: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        push_listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        psk,
        identity: id("ied-1"),
        group: id("goose-1"),
        timeout: Duration::from_millis(500),
        tries: 3,
        policy: FailPolicy::KeepUntilExpiry,
        // Renew only in the last second: the rekey must come by push.
        timing: MemberTiming {
            renew_before: 1,
            ..MemberTiming::default()
        },
    };
    let mut runner = Runner::new(cfg).unwrap();
    let push_to = runner.push_addr().expect("push socket bound");
    // Lifetime 3 s, the next key pushed 1 s (the activation delay) before the current expires.
    let p = policy(
        vec![member("ied-1", [127, 0, 0, 1], Some(push_to))],
        group(3, 1, 1),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let kdc = std::thread::spawn(move || {
        let mut k = Kdc::new(sock, p);
        while !s.load(Ordering::Relaxed) {
            let _ = k.poll(Duration::from_millis(50));
        }
    });
    let end = Instant::now() + Duration::from_secs(6);
    while Instant::now() < end && runner.state().counters().pushes == 0 {
        runner.step(Duration::from_millis(100)).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    kdc.join().unwrap();
    let c = runner.state().counters();
    assert!(runner.state().has_push_receiver(), "the grant armed pushes");
    assert_eq!(c.registrations, 1, "{c:?}");
    assert!(c.pushes >= 1, "a scheduled rekey arrived as a push: {c:?}");
    assert_eq!(c.pushes_refused, 0, "{c:?}");
    assert!(
        runner.state().key_ids().len() >= 2,
        "current and next key held"
    );
}
