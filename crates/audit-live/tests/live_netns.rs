//! Live audit in the namespace lab: publishers in the IED namespace send on its direct-path
//! interface (`ied1`, through the lab's switch), the audit reads the subscriber's interface
//! (`sub0`) through the gateway's ring. The live audit must judge the traffic exactly as the
//! file audit of the same frames does: the same inventory, the same findings on the same frame
//! numbers, both directions (nothing missing, nothing extra).

use gander_audit::{Audit, AuditOptions, Auditor};
use gander_audit_live::{run, LiveOptions, Stopped};
use gander_gateway::af_packet::RawSocket;
use gander_lab::{Mode, Role};
use gander_sec::frame::protect_frame;
use gander_sec::spdu::RandomIv;
use gander_sec::{default_provider, KeyStore, Profile};
use gander_testkit::frames::{goose_frame, rgoose_spdu, sv_frame, tagged, udp_frame, UdpAddrs};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
"#;

fn keys() -> KeyStore {
    KeyStore::from_toml(KEYS, std::path::Path::new("."), default_provider()).unwrap()
}

/// Frames 2 ms apart (no capture-copy window, no timeAllowedtoLive reached): an unsecured SV
/// stream with a gap, a protected GOOSE stream with a replayed frame and a tampered tag, an
/// unsecured multicast R-GOOSE stream.
fn traffic() -> Vec<Vec<u8>> {
    let ks = keys();
    let key = ks.get(1).unwrap();
    let protect = |f: &[u8]| {
        protect_frame(Profile::Standard, key, f, &mut RandomIv, 1_800_000_000)
            .unwrap()
            .unwrap()
    };
    let mu = [0x02, 0x47, 0x44, 0x00, 0x01, 0x02];
    let mut out = Vec::new();
    for c in (0u16..12).filter(|c| *c != 6) {
        out.push(sv_frame(
            mu,
            [0x01, 0x0c, 0xcd, 0x04, 0, 1],
            None,
            0x4001,
            "GANDERMU01",
            c,
        ));
    }
    let mut goose = Vec::new();
    for sq in 0..6 {
        goose.push(protect(&goose_frame(
            mu,
            [0x01, 0x0c, 0xcd, 0x01, 0, 1],
            None,
            1,
            1,
            sq,
        )));
    }
    // A replay of sqNum 2 after sqNum 5, and a tampered tag.
    goose.push(goose[2].clone());
    let mut bad = protect(&goose_frame(
        mu,
        [0x01, 0x0c, 0xcd, 0x01, 0, 1],
        None,
        1,
        1,
        6,
    ));
    let n = bad.len();
    bad[n - 1] ^= 0x01;
    goose.push(bad);
    // Interleave the GOOSE with the SV.
    let mut g = goose.into_iter();
    let mut mixed = Vec::new();
    for f in out.drain(..) {
        mixed.push(f);
        if let Some(x) = g.next() {
            mixed.push(x);
        }
    }
    mixed.extend(g);
    // An 802.1Q-tagged GOOSE publisher (VLAN 10): the receiving veth moves the tag into
    // metadata, the ring puts it back, the inventory must show it as the file does.
    for sq in 0..3 {
        let f = goose_frame(mu, [0x01, 0x0c, 0xcd, 0x01, 0, 2], None, 2, 1, sq);
        mixed.push(tagged(&f, &[(0x8100, 10)]));
    }
    let a = UdpAddrs {
        src_mac: mu,
        dst_mac: [0x01, 0x00, 0x5e, 0x7f, 0x00, 0x01],
        src_ip: gander_lab::addr::DIRECT_IED_IP,
        dst_ip: [239, 255, 0, 1],
        src_port: 102,
        dst_port: 102,
    };
    for i in 0..4u32 {
        mixed.push(udp_frame(
            &a,
            &rgoose_spdu(Profile::Standard, 0x1000, i + 1, 1, i),
        ));
    }
    mixed
}

/// What both audits must agree on: the inventory without times and rates, the findings
/// without times and details.
type Shape = (Vec<String>, Vec<String>);

fn shape(a: &Audit) -> Shape {
    let streams = a
        .streams
        .iter()
        .map(|s| {
            format!(
                "{} {} {:?} {:?} vlan={:?} prio={:?} {:?} {:?} {} frames={} first={} last={} verified={} failed={} keys={:?}",
                s.uid,
                s.kind,
                s.src_ip,
                s.appid,
                s.vlan,
                s.priority,
                s.id,
                s.dat_set,
                s.security,
                s.frames,
                s.first_frame,
                s.last_frame,
                s.verified,
                s.failed,
                s.key_ids
            )
        })
        .collect();
    let mut findings: Vec<String> = a
        .findings
        .iter()
        .map(|f| {
            format!(
                "{} {} {:?} x{} {:?}",
                f.code,
                f.severity.word(),
                f.stream,
                f.count,
                f.frames
            )
        })
        .collect();
    findings.sort();
    (streams, findings)
}

fn file_audit(frames: &[Vec<u8>], ks: &KeyStore) -> Audit {
    let mut a = Auditor::new(AuditOptions::default(), Some(ks));
    let t0 = 1_800_000_000_000_000_000u64;
    for (i, f) in frames.iter().enumerate() {
        a.feed(i as u64 + 1, t0 + i as u64 * 2_000_000, f);
    }
    a.finish()
}

/// Sends `frames` from the IED's direct-path interface, 2 ms apart.
fn send(ns: String, frames: Vec<Vec<u8>>) {
    gander_lab::enter(&ns).unwrap();
    let s = RawSocket::open("ied1").unwrap();
    for f in &frames {
        s.send(f).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// GET /metrics from inside namespace `ns`.
fn scrape(ns: &str, addr: SocketAddr) -> String {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        gander_lab::enter(&ns).unwrap();
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    })
    .join()
    .unwrap()
}

#[test]
fn live_audit_judges_as_the_file_audit_does() {
    let Some(lab) = gander_testkit::netns::lab("alv", Mode::L2) else {
        return;
    };
    let frames = traffic();
    let expected = file_audit(&frames, &keys());
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let (sub, s2) = (lab.ns(Role::Sub), stop.clone());
    let audit = std::thread::spawn(move || {
        gander_lab::enter(&sub).unwrap();
        let ks = keys();
        let mut a = Auditor::new(AuditOptions::default(), Some(&ks));
        let mut o = LiveOptions::new("sub0");
        o.signals = false;
        o.stop = Some(s2);
        o.ready = Some(tx);
        o.metrics = Some("127.0.0.1:0".parse().unwrap());
        o.ring_bytes = 4 << 20;
        let r = run(&mut a, Some(&ks), &o).unwrap();
        (r, a.finish())
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap()
        .expect("metrics address");
    let ied = lab.ns(Role::Ied);
    let n = frames.len();
    std::thread::spawn(move || send(ied, frames))
        .join()
        .unwrap();
    // Two stats periods: the metrics have caught up with the frames.
    std::thread::sleep(gander_audit_live::STATS_EVERY * 2 + Duration::from_millis(100));
    let m = scrape(&lab.ns(Role::Sub), addr);
    stop.store(true, Ordering::Relaxed);
    let (report, live) = audit.join().unwrap();
    assert_eq!(report.stopped, Stopped::Flag);
    assert_eq!(report.frames, n as u64, "{:?}", live.summary.kinds);
    assert_eq!(report.kernel_drops, 0);
    assert_eq!(live.summary.kernel_drops, Some(0));
    let (es, ef) = shape(&expected);
    let (ls, lf) = shape(&live);
    assert_eq!(ls, es, "inventory");
    assert_eq!(lf, ef, "findings");
    // The traffic held what the test meant it to.
    for code in ["sv-gap", "sec-replay", "unsecured"] {
        assert!(
            ef.iter().any(|f| f.starts_with(code)),
            "{code} missing: {ef:?}"
        );
    }
    assert!(ef.iter().any(|f| f.starts_with("sec-bad")), "{ef:?}");
    assert!(es.iter().any(|s| s.contains("vlan=Some(10)")), "{es:?}");
    // The endpoint answered while the audit ran, with what it had seen.
    assert!(m.contains(" 200 "), "{m}");
    assert!(m.ends_with("# EOF\n"), "{m}");
    assert!(m.contains("gander_audit_streams{kind=\"goose\"} 2"), "{m}");
    assert!(
        m.contains("gander_audit_streams{kind=\"r-goose\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("gander_audit_frames_total{kind=\"sv\"} 11"),
        "{m}"
    );
    assert!(m.contains("gander_audit_socket_drops_total 0"), "{m}");
    assert!(
        m.contains("gander_audit_verification_total{outcome=\"replay\"} 1"),
        "{m}"
    );
}

#[test]
fn a_ring_too_small_for_a_burst_reports_its_drops() {
    let Some(lab) = gander_testkit::netns::lab("ald", Mode::L2) else {
        return;
    };
    // The smallest ring (4 blocks of 32 slots) and a reader held at the start (a rendezvous
    // channel) while 20 000 frames arrive: the kernel must drop all but 128 and say so.
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::sync_channel(0);
    let (sub, s2) = (lab.ns(Role::Sub), stop.clone());
    let audit = std::thread::spawn(move || {
        gander_lab::enter(&sub).unwrap();
        let mut a = Auditor::new(AuditOptions::default(), None);
        let mut o = LiveOptions::new("sub0");
        o.signals = false;
        o.stop = Some(s2);
        o.ready = Some(tx);
        o.ring_bytes = 0;
        let r = run(&mut a, None, &o).unwrap();
        (r, a.finish())
    });
    // The socket is open well before this (it is opened before the reader waits).
    std::thread::sleep(Duration::from_millis(500));
    let ied = lab.ns(Role::Ied);
    let sent = std::thread::spawn(move || {
        gander_lab::enter(&ied).unwrap();
        let s = RawSocket::open("ied1").unwrap();
        let mu = [0x02, 0x47, 0x44, 0x00, 0x01, 0x02];
        let mut n = 0u64;
        for c in 0..20_000u32 {
            let f = sv_frame(
                mu,
                [1, 0x0c, 0xcd, 4, 0, 1],
                None,
                0x4001,
                "MU",
                (c % 4000) as u16,
            );
            n += u64::from(s.send(&f).is_ok());
        }
        n
    })
    .join()
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    rx.recv_timeout(Duration::from_secs(10)).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    stop.store(true, Ordering::Relaxed);
    let (r, audit) = audit.join().unwrap();
    assert!(sent > 10_000, "{sent}");
    assert!(r.kernel_drops > 0, "{r:?}");
    assert_eq!(r.kernel_packets, r.frames + r.kernel_drops, "{r:?}");
    assert_eq!(audit.summary.kernel_drops, Some(r.kernel_drops));
    let f = audit
        .findings
        .iter()
        .find(|f| f.code == "capture-drops")
        .expect("capture-drops finding");
    assert_eq!(f.severity.word(), "medium");
    assert_eq!(audit.exit_code(), 4);
}

/// The interface going down and then away under a live audit: before, the reader spun at 100%
/// of a CPU on the socket's pending error (POLLERR: ENETDOWN, then ENODEV) and said nothing,
/// even after the interface was deleted. Now the link going down is a `capture-interrupted`
/// finding and the audit goes on; the interface removed ends the audit, its report whole.
#[test]
fn an_interface_that_goes_down_and_away_is_said_and_ends_the_audit() {
    let Some(lab) = gander_testkit::netns::lab("alg", Mode::L2) else {
        return;
    };
    let ns = lab.ns(Role::Sub);
    let ip = |args: &[&str]| {
        let s = std::process::Command::new("ip")
            .args(["-n", &ns])
            .args(args)
            .status()
            .unwrap();
        assert!(s.success(), "ip {args:?}");
    };
    ip(&[
        "link", "add", "flap0", "type", "veth", "peer", "name", "flap1",
    ]);
    ip(&["link", "set", "flap0", "up"]);
    ip(&["link", "set", "flap1", "up"]);
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let sub = ns.clone();
    let audit = std::thread::spawn(move || {
        gander_lab::enter(&sub).unwrap();
        let mut a = Auditor::new(AuditOptions::default(), None);
        let mut o = LiveOptions::new("flap0");
        o.signals = false;
        o.ready = Some(tx);
        o.ring_bytes = 1 << 20;
        o.duration = Some(Duration::from_secs(20));
        let t0 = std::time::Instant::now();
        let r = run(&mut a, None, &o).unwrap();
        (r, t0.elapsed(), a.finish())
    });
    rx.recv_timeout(Duration::from_secs(10)).unwrap();
    ip(&["link", "set", "flap1", "down"]);
    std::thread::sleep(Duration::from_millis(300));
    ip(&["link", "set", "flap1", "up"]);
    std::thread::sleep(Duration::from_millis(300));
    ip(&["link", "del", "flap0"]);
    let (r, took, audit) = audit.join().unwrap();
    assert_eq!(r.stopped, Stopped::InterfaceGone, "{r:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let f = audit
        .findings
        .iter()
        .find(|f| f.code == "capture-interrupted")
        .expect("capture-interrupted");
    assert_eq!(f.severity.word(), "medium");
    assert!(f.detail.contains("flap0"), "{}", f.detail);
}
