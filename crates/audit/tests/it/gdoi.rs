//! GDOI on UDP 848 seen passively (IEC 62351-9, RFC 6407): frames built here as a key server
//! and three members exchange them, with the payloads after phase 1 encrypted (opaque octets
//! behind a real ISAKMP header, as on the wire). One registration completes, one is refused by
//! a notification, one stops after its first message, and a rekey is replayed. Every finding
//! is asserted with its frame, and nothing else; gdoi.log fits its schema.

use gander_audit::{Audit, AuditOptions, Auditor};
use gander_testkit::frames::{udp_frame, UdpAddrs};

const T0: u64 = 1_700_000_000_000_000_000;
const KS: [u8; 4] = [10, 0, 0, 1];
const GROUP: [u8; 4] = [239, 192, 0, 1];

/// An ISAKMP message (RFC 2408 §3.1 header) with `body` as its (encrypted) payloads.
fn isakmp(cookies: [u8; 16], exchange: u8, encrypted: bool, mid: u32, body: &[u8]) -> Vec<u8> {
    let mut m = cookies.to_vec();
    m.push(8); // next payload: HASH
    m.push(0x10); // version 1.0
    m.push(exchange);
    m.push(u8::from(encrypted));
    m.extend(mid.to_be_bytes());
    m.extend(((28 + body.len()) as u32).to_be_bytes());
    m.extend(body);
    m
}

fn udp(src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    udp_frame(
        &UdpAddrs {
            src_mac: [0x02, 0, 0, 0, 0, src[3]],
            dst_mac: [0x02, 0, 0, 0, 0, dst[3]],
            src_ip: src,
            dst_ip: dst,
            src_port: 848,
            dst_port: 848,
        },
        payload,
    )
}

fn cookies(i: u8, r: u8) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[..8].fill(0xa0 | i);
    c[8..].fill(0xb0 | r);
    c
}

struct Cap {
    frames: Vec<Vec<u8>>,
}

impl Cap {
    fn push(&mut self, f: Vec<u8>) -> u64 {
        self.frames.push(f);
        self.frames.len() as u64
    }
    /// IKEv1 main mode between `m` and the key server: 4 clear messages, 2 encrypted.
    fn main_mode(&mut self, m: [u8; 4], c: [u8; 16]) {
        for i in 0..6u8 {
            let enc = i >= 4;
            let msg = isakmp(c, 2, enc, 0, &[0x40 + i; 48]);
            if i % 2 == 0 {
                self.push(udp(m, KS, &msg));
            } else {
                self.push(udp(KS, m, &msg));
            }
        }
    }
    fn audit(&self) -> Audit {
        let mut a = Auditor::new(AuditOptions::default(), None);
        for (i, f) in self.frames.iter().enumerate() {
            a.feed(i as u64 + 1, T0 + i as u64 * 1_000_000, f);
        }
        a.finish()
    }
}

#[test]
fn registrations_and_rekeys_are_inventoried_and_refusals_and_replays_found() {
    let mut cap = Cap { frames: Vec::new() };
    let (a, b, c) = ([10, 0, 0, 21], [10, 0, 0, 22], [10, 0, 0, 23]);
    // Member A registers: main mode, then the four GROUPKEY-PULL messages.
    let ca = cookies(1, 1);
    cap.main_mode(a, ca);
    for i in 0..4u8 {
        let msg = isakmp(ca, 32, true, 0x1111, &[0x60 + i; 64]);
        if i % 2 == 0 {
            cap.push(udp(a, KS, &msg));
        } else {
            cap.push(udp(KS, a, &msg));
        }
    }
    // Member B: the key server answers its second message with a notification.
    let cb = cookies(2, 2);
    cap.main_mode(b, cb);
    cap.push(udp(b, KS, &isakmp(cb, 32, true, 0x2222, &[0x70; 64])));
    cap.push(udp(KS, b, &isakmp(cb, 32, true, 0x2222, &[0x71; 64])));
    cap.push(udp(b, KS, &isakmp(cb, 32, true, 0x2222, &[0x72; 64])));
    let refused = cap.push(udp(KS, b, &isakmp(cb, 5, true, 0x3333, &[0x73; 48])));
    // Member C: one message, nothing after.
    let cc = cookies(3, 3);
    cap.main_mode(c, cc);
    let c1 = isakmp(cc, 32, true, 0x4444, &[0x74; 64]);
    let incomplete = cap.push(udp(c, KS, &c1));
    // ... resent once on silence: a retransmission, not a message.
    cap.push(udp(c, KS, &c1));
    // Three rekeys to the group under KEK SPI 9/9, then the first one again.
    let kek = cookies(9, 9);
    let first_push = isakmp(kek, 33, true, 0, &[0x80; 96]);
    cap.push(udp(KS, GROUP, &first_push));
    cap.push(udp(KS, GROUP, &isakmp(kek, 33, true, 0, &[0x81; 96])));
    cap.push(udp(KS, GROUP, &isakmp(kek, 33, true, 0, &[0x82; 96])));
    let replay = cap.push(udp(KS, GROUP, &first_push));

    let audit = cap.audit();
    let regs: Vec<(&str, &str, u32, &str)> = audit
        .registrations
        .iter()
        .map(|r| {
            (
                r.member.as_str(),
                r.key_server.as_str(),
                r.messages,
                r.outcome,
            )
        })
        .collect();
    assert_eq!(
        regs,
        [
            ("10.0.0.21:848", "10.0.0.1:848", 4, "completed"),
            ("10.0.0.22:848", "10.0.0.1:848", 3, "refused"),
            ("10.0.0.23:848", "10.0.0.1:848", 1, "incomplete"),
        ]
    );
    assert_eq!(audit.registrations[2].retransmissions, 1);
    assert_eq!(audit.registrations[0].from_server, 2);
    assert_eq!(audit.rekeys.len(), 1);
    let g = &audit.rekeys[0];
    assert_eq!(
        (g.destination.as_str(), g.pushes, g.replayed),
        ("239.192.0.1:848", 4, 1)
    );
    assert_eq!(g.kek_spi, "a9a9a9a9a9a9a9a9b9b9b9b9b9b9b9b9");
    let mut found: Vec<(String, Vec<u64>)> = audit
        .findings
        .iter()
        .map(|f| (f.code.clone(), f.frames.clone()))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("gdoi-push-replayed".to_string(), vec![replay]),
            ("gdoi-registration-incomplete".to_string(), vec![incomplete]),
            ("gdoi-registration-refused".to_string(), vec![refused]),
        ]
    );
    assert_eq!(
        audit.summary.kinds.get("gdoi"),
        Some(&(cap.frames.len() as u64))
    );
    // gdoi.log: a line per registration and per rekey SA, each fitting the schema.
    let logs = gander_audit::zeek::logs(&audit);
    let gdoi = &logs.iter().find(|l| l.0 == "gdoi").unwrap().1;
    assert_eq!(gdoi.len(), 4);
    for l in gdoi {
        gander_audit::zeek::check_line("gdoi", l).unwrap_or_else(|e| panic!("{e}: {l}"));
    }
    let push: serde_json::Value = serde_json::from_str(&gdoi[3]).unwrap();
    assert_eq!(push["exchange"], "GROUPKEY-PUSH");
    assert_eq!(push["replayed"], 1);
    assert_eq!(push["id.resp_h"], "239.192.0.1");
}

#[test]
fn a_frame_recorded_twice_by_the_capture_is_not_a_replay_and_other_udp_is_not_gdoi() {
    let kek = cookies(9, 9);
    let push = udp(KS, GROUP, &isakmp(kek, 33, true, 0, &[0x80; 96]));
    let mut a = Auditor::new(AuditOptions::default(), None);
    a.feed(1, T0, &push);
    a.feed(2, T0 + 20_000, &push);
    // Not ISAKMP: a datagram to 848 too short for the header.
    a.feed(3, T0 + 1_000_000, &udp(KS, GROUP, &[1, 2, 3]));
    let audit = a.finish();
    assert!(audit.findings.is_empty(), "{:#?}", audit.findings);
    assert_eq!(audit.rekeys[0].pushes, 2);
    assert_eq!(audit.summary.kinds.get("other"), Some(&1));
}
