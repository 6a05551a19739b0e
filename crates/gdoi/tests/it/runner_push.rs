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

extern "C" fn ignore_signal(_: nix::libc::c_int) {}

/// A signal caught while the runner waits for a push (EINTR from `recvfrom`: a handler
/// installed without `SA_RESTART`, as the gateway's are) ends the turn early; it is not a
/// socket error. Seen in CI: the test above failed with "Interrupted system call" while the
/// strongSwan tests in the same binary ran their daemons.
#[test]
fn a_signal_during_the_wait_is_not_an_error() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let handler = SigAction::new(
        SigHandler::Handler(ignore_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    // SAFETY: the handler does nothing, so it is async-signal-safe; SIGUSR1 is sent only to
    // this test's own thread below.
    unsafe { sigaction(Signal::SIGUSR1, &handler) }.unwrap();
    // A key server that never answers: registration times out, then the turn waits for a push.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let cfg = RunnerConfig {
        servers: vec![silent.local_addr().unwrap()],
        bind: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        push_listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        psk: b"0123456789abcdef".to_vec(),
        identity: id("ied-1"),
        group: id("goose-1"),
        timeout: Duration::from_millis(300),
        tries: 1,
        policy: FailPolicy::KeepUntilExpiry,
        timing: MemberTiming::default(),
    };
    let mut runner = Runner::new(cfg).unwrap();
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { nix::libc::pthread_self() };
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    // Signals during the registration's wait and during the push wait.
    let kicker = std::thread::spawn(move || {
        for _ in 0..12 {
            std::thread::sleep(Duration::from_millis(100));
            if d.load(Ordering::Relaxed) {
                break;
            }
            // SAFETY: `me` is the test's thread, alive until `kicker` is joined below.
            let r = unsafe { nix::libc::pthread_kill(me, nix::libc::SIGUSR1) };
            assert_eq!(r, 0);
        }
    });
    let t0 = Instant::now();
    let turns: Vec<_> = (0..3)
        .map(|_| runner.step(Duration::from_millis(400)))
        .collect();
    done.store(true, Ordering::Relaxed);
    kicker.join().unwrap();
    for t in &turns {
        assert!(t.is_ok(), "{t:?}");
    }
    assert!(t0.elapsed() < Duration::from_secs(5));
}
