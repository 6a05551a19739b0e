//! GDOI read with the lab's IKEv1 key log (`gander audit --ike-keylog`): a registration and
//! rekeys made by gander-gdoi's own member and key server in memory (main mode with a
//! pre-shared key, GROUPKEY-PULL granting TEK 7 and the group's KEK, GROUPKEY-PUSHes signed
//! with the key server's ECDSA P-256 key), written as UDP frames and audited with the key log
//! line `gander kdc --keylog` writes. Asserted: the group, the SEQ handed out and pushed, the
//! TEK key ids and algorithms, and every finding with its frame (a rekey after the key's
//! lifetime, a push with an old SEQ, a push whose signature is not the key server's, a
//! byte-identical replay, a push from a host that answered no registration, the newest key
//! expired before the capture's end) and nothing else; and no key material in any output.

use gander_audit::ike_keylog::IkeKeyLog;
use gander_audit::{Audit, AuditOptions, Auditor};
use gander_gdoi::cookie::CookieJar;
use gander_gdoi::group_kek::{kek_packet, sa_kek, KdcSigner};
use gander_gdoi::main_mode::ResponderConfig;
use gander_gdoi::pull::{Grant, GroupSource, MessageIds, PullError, PullMember, PullServer};
use gander_gdoi::push::{self, Kek};
use gander_gdoi::{Initiator, Phase1Sa, Responder, Suite};
use gander_testkit::frames::{udp_frame, UdpAddrs};
use gander_wire::isakmp::gdoi::{kd_attr, kd_type};
use gander_wire::isakmp::iec61850::{encode_oid, oid};
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::sa::doi;
use gander_wire::isakmp::{
    Attribute, IdPayload, Iec61850Tek, KeyDownload, KeyPacket, Payload, SaAttrPayload, SaBody,
    SaPayload, SaTek, Traffic,
};
use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use zeroize::Zeroizing;

const T0: u64 = 1_700_000_000_000_000_000;
const S: u64 = 1_000_000_000;
const MEMBER: [u8; 4] = [10, 0, 0, 2];
const KDC: [u8; 4] = [10, 0, 0, 1];
const ROGUE: [u8; 4] = [10, 0, 0, 66];
const TEK7_KEY: [u8; 32] = [0x5a; 32];
const KEK_KEY: [u8; 32] = [0x6b; 32];

fn id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

fn ec_key() -> PKey<Private> {
    let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
    PKey::from_ec_key(EcKey::generate(&g).unwrap()).unwrap()
}

/// An IEC 61850 SA TEK for layer-2 GOOSE with HMAC-SHA256-128 and its key packet.
fn tek(key_id: u32, lifetime: u64, key: &[u8]) -> (SaAttrPayload, KeyPacket) {
    let t = Iec61850Tek {
        oid: encode_oid(oid::GOOSE).unwrap(),
        traffic: Some(Traffic::L2 {
            mac: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
            appid: 1,
        }),
        spi: key_id,
        auth_alg: gander_wire::isakmp::iec61850_alg::auth::HMAC_SHA256_128,
        conf_alg: gander_wire::isakmp::iec61850_alg::conf::NONE,
        lifetime_secs: u32::try_from(lifetime).unwrap_or(u32::MAX),
        attributes: vec![],
    };
    let p = KeyPacket {
        kd_type: kd_type::TEK,
        spi: key_id.to_be_bytes().to_vec(),
        attributes: vec![Attribute::variable(
            kd_attr::TEK_INTEGRITY_KEY,
            key.to_vec(),
        )],
    };
    (SaAttrPayload::Tek(SaTek::Iec61850(t)), p)
}

struct Policy {
    kek: Kek,
    signer: KdcSigner,
}

impl GroupSource for Policy {
    fn grant(&self, _member: &IdPayload, group: &IdPayload) -> Result<Grant, PullError> {
        if group.data != b"substation-goose" {
            return Err(PullError::UnknownGroup);
        }
        let (t, p) = tek(7, 10, &TEK7_KEY);
        Ok(Grant {
            sa: SaPayload {
                doi: doi::GDOI,
                situation: 0,
                body: SaBody::Gdoi(vec![
                    sa_kek(&self.kek, KDC.into(), &self.signer.key, Some(86_400)),
                    t,
                ]),
            },
            kd: KeyDownload {
                packets: vec![p, kek_packet(&self.kek, &self.signer)],
            },
            seq: Some(3),
        })
    }
}

/// Main mode (6 messages) and GROUPKEY-PULL (4): (sender is the member, datagram), and the
/// member's SA for the key log.
fn registration(policy: &Policy) -> (Vec<(bool, Vec<u8>)>, Phase1Sa) {
    let suite = Suite::all(3600)[1];
    let jar = CookieJar::new();
    let (mut i, m1) = Initiator::start(b"psk", id("ied-1"), vec![suite]).unwrap();
    let cfg = ResponderConfig {
        psk: Zeroizing::new(b"psk".to_vec()),
        suites: vec![suite],
        id: id("kdc"),
        expect_peer: None,
        cert: None,
    };
    let (mut r, m2) = Responder::start(&jar, &[10, 0, 0, 2], &m1, cfg).unwrap();
    let m3 = i.handle(&m2).unwrap().unwrap();
    let m4 = r.handle(&jar, &m3).unwrap();
    let m5 = i.handle(&m4).unwrap().unwrap();
    let m6 = r.handle(&jar, &m5).unwrap();
    i.handle(&m6).unwrap();
    let (m, k) = (i.into_sa().unwrap(), r.into_sa().unwrap());
    let mut ids = MessageIds::default();
    let (mut member, p1) = PullMember::start(&m, id("substation-goose")).unwrap();
    let (mut server, p2) = PullServer::start(&k, &mut ids, policy, &p1).unwrap();
    let p3 = member.handle(&m, &p2).unwrap().unwrap();
    let p4 = server.handle(&k, &p3).unwrap();
    assert!(member.handle(&m, &p4).unwrap().is_none());
    let msgs = vec![
        (true, m1),
        (false, m2),
        (true, m3),
        (false, m4),
        (true, m5),
        (false, m6),
        (true, p1.clone()),
        // The member resends message 1 on silence: a retransmission, read once.
        (true, p1),
        (false, p2),
        (true, p3),
        (false, p4),
    ];
    (msgs, m)
}

fn frame(src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    udp_frame(
        &UdpAddrs {
            src_mac: [2, 0, 0, 0, 0, src[3]],
            dst_mac: [2, 0, 0, 0, 0, dst[3]],
            src_ip: src,
            dst_ip: dst,
            src_port: 848,
            dst_port: 848,
        },
        payload,
    )
}

struct Lab {
    audit: Audit,
    /// Frame numbers: registration's message 4, the late rekey, the old-SEQ push, the forged
    /// push, the byte-identical replay, the push from the rogue host.
    p4: u64,
    late: u64,
    old_seq: u64,
    forged: u64,
    replay: u64,
    rogue: u64,
}

/// Which key log the audit gets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyLog {
    None,
    /// The member's line, as `gander gdoi register --keylog` writes it.
    Right,
    /// The SA's cookie with a wrong key.
    Wrong,
}

fn lab(keylog: KeyLog) -> Lab {
    let signer = KdcSigner::new(ec_key()).unwrap();
    let kek = Kek {
        spi: [0x4b; 16],
        key: Zeroizing::new(KEK_KEY.to_vec()),
    };
    let policy = Policy {
        kek: kek.clone(),
        signer: signer.clone(),
    };
    let (msgs, sa) = registration(&policy);
    let mut a = Auditor::new(AuditOptions::default(), None);
    match keylog {
        KeyLog::None => {}
        KeyLog::Right => {
            let text = format!(
                "{}{}\n",
                gander_gdoi::keylog::WARNING,
                gander_gdoi::keylog::ikev1_line(&sa)
            );
            a.set_ike_keylog(IkeKeyLog::parse(&text).unwrap());
        }
        KeyLog::Wrong => {
            let mut log = IkeKeyLog::default();
            log.insert(sa.cky_i, &[0u8; 16]);
            a.set_ike_keylog(log);
        }
    }
    let mut no = 0u64;
    let mut ts = T0;
    let mut feed = |a: &mut Auditor, src, dst, m: &[u8], dt: u64| {
        no += 1;
        ts += dt;
        a.feed(no, ts, &frame(src, dst, m));
        no
    };
    let mut p4 = 0;
    for (from_member, m) in &msgs {
        let (s, d) = if *from_member {
            (MEMBER, KDC)
        } else {
            (KDC, MEMBER)
        };
        p4 = feed(&mut a, s, d, m, S / 100);
    }
    // 15 s later (TEK 7 lived 10 s): SEQ 4 brings TEK 8 (lifetime 20 s) and withdraws 7.
    let (t8, k8) = tek(8, 20, &[0x77; 32]);
    let body = |t: SaAttrPayload, k: KeyPacket, del: Option<u32>| {
        let mut b = Vec::new();
        if let Some(d) = del {
            b.push(Payload::Delete(gander_wire::isakmp::DeletePayload {
                doi: doi::GDOI,
                protocol: 3,
                spi_size: 4,
                spis: vec![d.to_be_bytes().to_vec()],
            }));
        }
        b.push(Payload::Sa(SaPayload {
            doi: doi::GDOI,
            situation: 0,
            body: SaBody::Gdoi(vec![t]),
        }));
        b.push(Payload::Kd(KeyDownload { packets: vec![k] }));
        b
    };
    let push4 = push::build(&kek, &signer.key, 4, body(t8.clone(), k8.clone(), Some(7))).unwrap();
    let late = feed(&mut a, KDC, MEMBER, &push4, 15 * S);
    // SEQ 5, then an old SEQ 2 signed by the key server.
    let push5 = push::build(&kek, &signer.key, 5, vec![]).unwrap();
    feed(&mut a, KDC, MEMBER, &push5, S);
    let push2 = push::build(&kek, &signer.key, 2, vec![]).unwrap();
    let old_seq = feed(&mut a, KDC, MEMBER, &push2, S);
    // A member holding the KEK forges SEQ 9 with its own key.
    let forged_push = push::build(&kek, &ec_key(), 9, vec![]).unwrap();
    let forged = feed(&mut a, KDC, MEMBER, &forged_push, S);
    // SEQ 4 again, octet for octet.
    let replay = feed(&mut a, KDC, MEMBER, &push4, S);
    // A genuine SEQ 6 sent from another host (the key server's key, but not its address).
    let push6 = push::build(&kek, &signer.key, 6, vec![]).unwrap();
    let rogue = feed(&mut a, ROGUE, MEMBER, &push6, S);
    // The capture runs on 60 s: TEK 8's 20 s ended with no successor.
    feed(
        &mut a,
        MEMBER,
        [10, 0, 0, 9],
        b"not isakmp at all, long enough",
        60 * S,
    );
    Lab {
        audit: a.finish(),
        p4,
        late,
        old_seq,
        forged,
        replay,
        rogue,
    }
}

fn gdoi_findings(a: &Audit) -> Vec<(String, Vec<u64>)> {
    let mut v: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.code.starts_with("gdoi-"))
        .map(|f| (f.code.clone(), f.frames.clone()))
        .collect();
    v.sort();
    v
}

#[test]
fn registration_and_rekeys_are_read_with_the_key_log() {
    let l = lab(KeyLog::Right);
    let a = &l.audit;
    assert_eq!(a.registrations.len(), 1);
    let r = &a.registrations[0];
    assert_eq!(r.outcome, "completed");
    assert_eq!(r.retransmissions, 1);
    assert_eq!(r.group.as_deref(), Some("key-id:substation-goose"));
    assert_eq!(r.member_id.as_deref(), Some("ied-1"));
    assert_eq!(r.seq, Some(3));
    assert_eq!(r.decrypted, 4);
    assert_eq!(r.kek_spi.as_deref(), Some(&"4b".repeat(16)[..]));
    assert_eq!(r.teks.len(), 1);
    assert_eq!(r.teks[0].key_id, 7);
    assert_eq!(r.teks[0].algorithms(), "7:hmac-sha256-128/none");
    assert_eq!(r.teks[0].lifetime_secs, Some(10));
    assert_eq!(r.last_frame, l.p4);
    // Two rekey SAs: the key server's and the rogue host's (same KEK SPI, other source).
    assert_eq!(a.rekeys.len(), 2);
    let ks = &a.rekeys[0];
    assert_eq!(ks.group.as_deref(), Some("key-id:substation-goose"));
    assert_eq!(ks.pushes, 5);
    assert_eq!(ks.replayed, 1);
    // Accepted SEQs in order (the old one, the forged one and the replay are not).
    assert_eq!(ks.seqs, vec![4, 5]);
    assert_eq!(
        ks.teks.iter().map(|t| t.key_id).collect::<Vec<_>>(),
        vec![8]
    );
    assert_eq!(ks.deleted, vec![7]);
    assert_eq!(a.rekeys[1].seqs, vec![6]);
    let mut want = vec![
        ("gdoi-rekey-late".to_string(), vec![l.late]),
        ("gdoi-push-seq-backwards".to_string(), vec![l.old_seq]),
        ("gdoi-push-bad-signature".to_string(), vec![l.forged]),
        ("gdoi-push-replayed".to_string(), vec![l.replay]),
        ("gdoi-push-unknown-server".to_string(), vec![l.rogue]),
        ("gdoi-tek-expired".to_string(), vec![l.late]),
    ];
    want.sort();
    assert_eq!(gdoi_findings(a), want);
    // The logs and the report carry the group, SEQs and key ids, never a key.
    let logs = gander_audit::zeek::logs(a);
    let (_, lines) = logs.iter().find(|(n, _)| *n == "gdoi").unwrap();
    for line in lines {
        gander_audit::zeek::check_line("gdoi", line).unwrap();
    }
    let gdoi = lines.join("\n");
    assert!(
        gdoi.contains("\"tek_algorithms\":[\"7:hmac-sha256-128/none\"]"),
        "{gdoi}"
    );
    assert!(gdoi.contains("\"seqs\":[4,5]"), "{gdoi}");
    let html = gander_audit::html::render(a, "lab");
    let json = serde_json::to_string(a).unwrap();
    for key in [&TEK7_KEY[..], &KEK_KEY[..], &[0x77; 32][..]] {
        let h: String = key.iter().map(|b| format!("{b:02x}")).collect();
        for text in [gdoi.as_str(), html.as_str(), json.as_str()] {
            assert!(!text.contains(&h));
        }
    }
}

#[test]
fn without_the_key_log_only_headers_are_judged() {
    let l = lab(KeyLog::None);
    let a = &l.audit;
    assert_eq!(a.registrations[0].group, None);
    assert_eq!(a.registrations[0].decrypted, 0);
    assert!(a.rekeys[0].seqs.is_empty());
    let mut want = vec![
        ("gdoi-push-replayed".to_string(), vec![l.replay]),
        ("gdoi-push-unknown-server".to_string(), vec![l.rogue]),
    ];
    want.sort();
    assert_eq!(gdoi_findings(a), want);
}

#[test]
fn a_wrong_key_log_reads_nothing_and_judges_nothing_more() {
    let l = lab(KeyLog::Wrong);
    let a = &l.audit;
    assert_eq!(a.registrations[0].decrypted, 0);
    assert_eq!(a.registrations[0].group, None);
    assert!(a.rekeys[0].seqs.is_empty());
    let mut want = vec![
        ("gdoi-push-replayed".to_string(), vec![l.replay]),
        ("gdoi-push-unknown-server".to_string(), vec![l.rogue]),
    ];
    want.sort();
    assert_eq!(gdoi_findings(a), want);
}
