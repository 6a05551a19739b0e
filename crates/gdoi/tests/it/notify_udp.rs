//! Notifications to refused members over UDP on loopback (RFC 2408 3.14.1, `gander_gdoi::notify`):
//! a wrong pre-shared key gets AUTHENTICATION-FAILED, an address no member registers from and
//! a member not authorised for the group get INVALID-ID-INFORMATION, and the member reports
//! each by name. The rule for unauthenticated notifications is tested with a relay standing
//! in for an attacker who can send datagrams from the key server's address: a forged
//! notification neither ends a registration that the key server answers, nor shortens the
//! member's retransmissions when the key server is silent.

use crate::kdc_support;

use crate::kdc_thread::{self, Server};
use gander_gdoi::net::kdc::{Kdc, KdcEvent};
use gander_gdoi::net::member::{register, MemberConfig, MemberError};
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::Header;
use kdc_support::{group, id, member, policy};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A key server with member `ied-1` at 127.0.0.1 (group goose-1) and `ied-2` at 127.0.0.3
/// (no groups).
fn serve() -> Server {
    let mut other = member("ied-2", [127, 0, 0, 3], None);
    other.groups.clear();
    let p = policy(
        vec![member("ied-1", [127, 0, 0, 1], None), other],
        group(3600, 0, 5),
    );
    let kdc = Kdc::new(UdpSocket::bind("127.0.0.1:0").unwrap(), p);
    kdc_thread::spawn(kdc, Duration::from_millis(20))
}

fn cfg(server: SocketAddr, ip: [u8; 4], identity: &str, psk: &[u8]) -> MemberConfig {
    MemberConfig {
        server,
        bind: Some(SocketAddr::from((ip, 0))),
        psk: psk.to_vec(),
        identity: id(identity),
        group: id("goose-1"),
        timeout: Duration::from_millis(250),
        tries: 3,
    }
}

fn psk(identity: &str) -> Vec<u8> {
    format!("psk-of-{identity}-0123456789").into_bytes()
}

fn notice(r: Result<gander_gdoi::pull::GroupKeys, MemberError>) -> gander_gdoi::notify::Notice {
    match r {
        Err(MemberError::Refused(n)) => n,
        other => panic!("not refused with a notification: {other:?}"),
    }
}

#[test]
fn wrong_psk_gets_authentication_failed_and_the_member_names_it() {
    let s = serve();
    let r = register(&cfg(
        s.addr,
        [127, 0, 0, 1],
        "ied-1",
        b"not-the-right-key-0123",
    ));
    let text = format!("{}", r.as_ref().unwrap_err());
    let n = notice(r);
    assert_eq!(n.notify, notify_type::AUTHENTICATION_FAILED);
    assert!(!n.authenticated);
    assert!(text.contains("AUTHENTICATION-FAILED"), "{text}");
    let ev = s.events.lock().unwrap();
    assert!(ev
        .iter()
        .any(|e| matches!(e, KdcEvent::Refused { notify, .. }
        if *notify == notify_type::AUTHENTICATION_FAILED)));
}

#[test]
fn unknown_address_gets_invalid_id_information() {
    let s = serve();
    let n = notice(register(&cfg(
        s.addr,
        [127, 0, 0, 2],
        "ied-1",
        &psk("ied-1"),
    )));
    assert_eq!(n.notify, notify_type::INVALID_ID_INFORMATION);
    assert!(!n.authenticated);
}

#[test]
fn member_not_authorised_for_the_group_is_told_under_its_phase1_sa_at_once() {
    let s = serve();
    let c = cfg(s.addr, [127, 0, 0, 3], "ied-2", &psk("ied-2"));
    let t = Instant::now();
    let n = notice(register(&c));
    assert_eq!(n.notify, notify_type::INVALID_ID_INFORMATION);
    assert!(n.authenticated, "GROUPKEY-PULL refusal is protected");
    // Authenticated: the registration ends on the notification, not after three silences.
    assert!(t.elapsed() < c.timeout * 2, "{:?}", t.elapsed());
    // The authorised member still registers.
    register(&cfg(s.addr, [127, 0, 0, 1], "ied-1", &psk("ied-1"))).unwrap();
}

/// A relay between member and key server that sends the member a forged unprotected
/// AUTHENTICATION-FAILED (with the member's cookies) and a forged "protected" notification
/// before each reply, and forwards the genuine traffic only when `forward`.
fn relay(kdc: Option<SocketAddr>) -> (SocketAddr, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = sock.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (n, st) = (seen.clone(), stop.clone());
    let up = UdpSocket::bind("127.0.0.1:0").unwrap();
    up.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_535];
        while !st.load(Ordering::SeqCst) {
            let Ok((len, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            n.fetch_add(1, Ordering::SeqCst);
            let msg = buf[..len].to_vec();
            let Ok(h) = Header::parse(&msg) else { continue };
            let forged = gander_gdoi::notify::unprotected(
                h.initiator_cookie,
                h.responder_cookie,
                notify_type::AUTHENTICATION_FAILED,
            );
            let _ = sock.send_to(&forged, from);
            // A "protected" notification nobody can verify: encrypted flag, garbage body.
            let mut fake = forged.clone();
            fake[19] |= 1;
            fake.resize(28 + 64, 0xa5);
            fake[24..28].copy_from_slice(&(92u32).to_be_bytes());
            let _ = sock.send_to(&fake, from);
            if let Some(k) = kdc {
                let _ = up.send_to(&msg, k);
                if let Ok((rl, _)) = up.recv_from(&mut buf) {
                    let _ = sock.send_to(&buf[..rl], from);
                }
            }
        }
    });
    (addr, seen, stop)
}

#[test]
fn a_forged_notification_does_not_stop_a_registration_the_key_server_answers() {
    let s = serve();
    let (addr, seen, stop) = relay(Some(s.addr));
    // The key server knows the member by the relay's address (127.0.0.1, as ied-1's).
    let mut c = cfg(addr, [127, 0, 0, 1], "ied-1", &psk("ied-1"));
    c.timeout = Duration::from_secs(2);
    let keys = register(&c).unwrap();
    assert!(!keys.teks.is_empty());
    // Every message of the exchange was sent once: no forged notification caused a resend.
    assert_eq!(seen.load(Ordering::SeqCst), 5);
    stop.store(true, Ordering::SeqCst);
}

#[test]
fn a_forged_notification_from_a_silent_key_server_shortens_nothing() {
    let (addr, seen, stop) = relay(None);
    let c = cfg(addr, [127, 0, 0, 1], "ied-1", &psk("ied-1"));
    let t = Instant::now();
    let n = notice(register(&c));
    // Reported by name, flagged unauthenticated, but only after every retransmission.
    assert_eq!(n.notify, notify_type::AUTHENTICATION_FAILED);
    assert!(!n.authenticated);
    assert!(t.elapsed() >= c.timeout * c.tries, "{:?}", t.elapsed());
    assert_eq!(seen.load(Ordering::SeqCst), c.tries as usize);
    stop.store(true, Ordering::SeqCst);
}
