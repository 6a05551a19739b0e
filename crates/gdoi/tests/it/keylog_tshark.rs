//! The key log against tshark: a phase 1 (with pre-shared keys and with ECDSA certificates)
//! and a GROUPKEY-PULL between gander's member and key server, written to a capture, and
//! the key log line of the phase-1 SA given to tshark as its `ikev1_decryption_table` UAT.
//! tshark must then decrypt messages 5 and 6 (showing the ID, HASH or CERT/SIG payloads
//! inside) and the GROUPKEY-PULL messages (showing the RFC 6407 payloads it knows).
//!
//! Needs tshark on PATH; `GANDER_SKIP_TSHARK=1` skips (saying so) where it is not installed.

use crate::pki;

use gander_gdoi::cert_auth::CertMatch;
use gander_gdoi::cookie::CookieJar;
use gander_gdoi::keylog::{ikev1_line, KeyLog, WARNING};
use gander_gdoi::main_mode::{CertPolicy, ResponderConfig};
use gander_gdoi::net::kdc::{GroupPolicy, KdcPolicy};
use gander_gdoi::profile::PeerProfile;
use gander_gdoi::pull::{MessageIds, PullMember, PullServer};
use gander_gdoi::{Auth, Initiator, Phase1Sa, Responder, Suite};
use gander_testkit::frames::{udp_frame, UdpAddrs};
use gander_wire::isakmp::iec61850::oid;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdPayload, Traffic};
use pki::{Kind, Leaf, Pki};
use std::path::Path;
use std::process::Command;
use zeroize::Zeroizing;

const MEMBER: UdpAddrs = UdpAddrs {
    src_mac: [2, 0, 0, 0, 0, 1],
    dst_mac: [2, 0, 0, 0, 0, 2],
    src_ip: [192, 0, 2, 10],
    dst_ip: [192, 0, 2, 1],
    src_port: 848,
    dst_port: 848,
};
const KDC: UdpAddrs = UdpAddrs {
    src_mac: [2, 0, 0, 0, 0, 2],
    dst_mac: [2, 0, 0, 0, 0, 1],
    src_ip: [192, 0, 2, 1],
    dst_ip: [192, 0, 2, 10],
    src_port: 848,
    dst_port: 848,
};

fn id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

fn policy() -> KdcPolicy {
    KdcPolicy {
        identity: id("kdc"),
        members: vec![
            gander_gdoi::net::kdc::MemberPolicy {
                identity: b"ied-1".to_vec(),
                psk: Zeroizing::new(b"0123456789abcdef".to_vec()),
                address: [192, 0, 2, 10].into(),
                groups: vec![b"goose-1".to_vec()],
                cert: None,
                push: None,
            },
            gander_gdoi::net::kdc::MemberPolicy {
                identity: b"ied-1-cert".to_vec(),
                psk: Zeroizing::new(Vec::new()),
                address: [0, 0, 0, 0].into(),
                groups: vec![b"goose-1".to_vec()],
                cert: Some(CertMatch::Subject("O=gander test,CN=ied-1".into())),
                push: None,
            },
        ],
        groups: vec![GroupPolicy {
            id: b"goose-1".to_vec(),
            oid: oid::GOOSE.to_string(),
            traffic: Traffic::L2 {
                mac: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
                appid: 1,
            },
            mac_code: 2,
            enc_code: 0,
            lifetime_secs: 3600,
            activation_delay_secs: 0,
            overlap_secs: 60,
            key_id: 0x1001,
            key: Zeroizing::new(vec![0x5c; 32]),
        }],
    }
}

/// Phase 1 then GROUPKEY-PULL; every datagram in order, with its direction (true: member to
/// key server), and the member's phase-1 SA.
fn exchange(
    auth: Auth,
    member_id: IdPayload,
    cfg: ResponderConfig,
    suite: Suite,
) -> (Vec<(bool, Vec<u8>)>, Phase1Sa) {
    let mut wire = Vec::new();
    let jar = CookieJar::new();
    // tshark 4.0 decrypts a phase 1 only in the IPsec DOI (a GDOI-DOI SA, RFC 6407 2.1, is
    // dissected in the GDOI layout and never yields the cipher): the `ipsec-doi` profile.
    let (mut i, m1) =
        Initiator::start_for(auth, member_id, vec![suite], PeerProfile::IpsecDoi).unwrap();
    wire.push((true, m1.clone()));
    let (mut r, mut back) = Responder::start(&jar, &[192, 0, 2, 10, 3, 0x50], &m1, cfg).unwrap();
    loop {
        wire.push((false, back.clone()));
        let Some(next) = i.handle(&back).unwrap() else {
            break;
        };
        wire.push((true, next.clone()));
        back = r.handle(&jar, &next).unwrap();
    }
    let (isa, rsa) = (i.into_sa().unwrap(), r.into_sa().unwrap());
    let policy = policy();
    let mut ids = MessageIds::default();
    let group = IdPayload {
        data: b"goose-1".to_vec(),
        ..id("")
    };
    let (mut pm, p1) = PullMember::start(&isa, group).unwrap();
    wire.push((true, p1.clone()));
    let (mut ps, p2) = PullServer::start(&rsa, &mut ids, &policy, &p1).unwrap();
    wire.push((false, p2.clone()));
    let p3 = pm.handle(&isa, &p2).unwrap().unwrap();
    wire.push((true, p3.clone()));
    let p4 = ps.handle(&rsa, &p3).unwrap();
    wire.push((false, p4.clone()));
    assert!(pm.handle(&isa, &p4).unwrap().is_none());
    assert!(pm.keys().is_some());
    (wire, isa)
}

fn pcap(wire: &[(bool, Vec<u8>)], path: &Path) {
    let mut p = Vec::new();
    p.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&4u16.to_le_bytes());
    p.extend_from_slice(&[0; 8]);
    p.extend_from_slice(&65535u32.to_le_bytes());
    p.extend_from_slice(&1u32.to_le_bytes());
    for (n, (up, d)) in wire.iter().enumerate() {
        let f = udp_frame(if *up { &MEMBER } else { &KDC }, d);
        p.extend_from_slice(&(n as u32).to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&(f.len() as u32).to_le_bytes());
        p.extend_from_slice(&(f.len() as u32).to_le_bytes());
        p.extend_from_slice(&f);
    }
    std::fs::write(path, p).unwrap();
}

/// `tshark -V` of the capture with (or without) the key log line; stdout.
fn tshark(cap: &Path, line: Option<&str>) -> Option<String> {
    if std::env::var_os("GANDER_SKIP_TSHARK").is_some() {
        eprintln!("GANDER_SKIP_TSHARK set: tshark key log test skipped");
        return None;
    }
    let mut c = Command::new("tshark");
    // GDOI runs on UDP 848 (RFC 6407 5), which tshark does not map to ISAKMP by itself.
    c.arg("-n")
        .arg("-r")
        .arg(cap)
        .args(["-V", "-d", "udp.port==848,isakmp"]);
    if let Some(l) = line {
        c.arg("-o").arg(format!("uat:ikev1_decryption_table:{l}"));
    }
    let out = c
        .output()
        .expect("tshark on PATH (GANDER_SKIP_TSHARK=1 to skip)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The dissection of frame `n` (1-based).
fn frame(all: &str, n: usize) -> &str {
    let start = all.find(&format!("Frame {n}:")).unwrap();
    let end = all[start..]
        .find(&format!("Frame {}:", n + 1))
        .map_or(all.len(), |e| start + e);
    &all[start..end]
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gander-keylog-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn tshark_decrypts_psk_phase1_and_groupkey_pull_with_the_key_log() {
    let suite = Suite::all(3600)[1]; // AES-256, SHA-256, P-256
    let cfg = ResponderConfig {
        psk: Zeroizing::new(b"0123456789abcdef".to_vec()),
        suites: vec![suite],
        id: id("kdc"),
        expect_peer: None,
        cert: None,
    };
    let (wire, sa) = exchange(
        Auth::Psk(Zeroizing::new(b"0123456789abcdef".to_vec())),
        id("ied-1"),
        cfg,
        suite,
    );
    let cap = tmp("psk.pcap");
    pcap(&wire, &cap);
    // The key log file: warning, then the line.
    let log_path = tmp("psk.keylog");
    let _ = std::fs::remove_file(&log_path);
    let log = KeyLog::open(&log_path).unwrap();
    log.record(&sa).unwrap();
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert!(text.starts_with(WARNING));
    let line = ikev1_line(&sa);
    assert!(text.ends_with(&format!("{line}\n")));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&log_path).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let Some(clear) = tshark(&cap, None) else {
        return;
    };
    assert!(
        !frame(&clear, 5).contains("Key ID: ied-1"),
        "without the key log nothing decrypts"
    );
    let out = tshark(&cap, Some(&line)).unwrap();
    std::fs::write(tmp("psk.txt"), &out).unwrap();
    // Message 5: IDii ("ied-1") and HASH_I; message 6: IDir ("kdc") and HASH_R.
    let m5 = frame(&out, 5);
    assert!(m5.contains("Encrypted Data"), "{m5}");
    assert!(m5.contains("ID_KEY_ID: 6965642d31"), "{m5}");
    assert!(m5.contains("Payload: Hash (8)"), "{m5}");
    let m6 = frame(&out, 6);
    assert!(
        m6.contains("ID_KEY_ID: 6b6463") && m6.contains("Payload: Hash (8)"),
        "{m6}"
    );
    // GROUPKEY-PULL (exchange 32, which tshark names by IKEv1's Quick Mode of the same
    // number): HASH(1), Ni, ID(group) / HASH(2), Nr, SA / HASH(3) / HASH(4), KD.
    let p1 = frame(&out, 7);
    assert!(
        p1.contains("(32)") && p1.contains("Payload: Nonce (10)"),
        "{p1}"
    );
    assert!(p1.contains("ID_KEY_ID: 676f6f73652d31"), "{p1}");
    let p2 = frame(&out, 8);
    assert!(p2.contains("Domain of interpretation: GDOI (2)"), "{p2}");
    assert!(p2.contains("SA TEK Payload (16)"), "{p2}");
    // RFC 8052's IEC 61850 SA TEK is unknown to tshark: Protocol-ID 3, body as bytes.
    assert!(p2.contains("Protocol ID: Unassigned (3)"), "{p2}");
    let p3 = frame(&out, 9);
    assert!(p3.contains("Payload: Hash (8)"), "{p3}");
    let p4 = frame(&out, 10);
    assert!(
        p4.contains("Key Download (17)") && p4.contains("TEK_INTEGRITY_KEY"),
        "{p4}"
    );
    assert!(
        p4.contains(&"5c".repeat(32)),
        "the group key itself is readable: {p4}"
    );
}

#[test]
fn tshark_decrypts_certificate_phase1_with_the_key_log() {
    let p = Pki::new("gander test CA", Kind::P256);
    let trust = p.trust(None);
    let member = p.creds(&Leaf::new("ied-1", Kind::P256), trust.clone());
    let kdc = p.creds(&Leaf::new("kdc", Kind::P256), trust);
    let suite = Suite::all(3600)[2]; // AES-128, SHA-256, P-256
    let cfg = ResponderConfig {
        psk: Zeroizing::new(Vec::new()),
        suites: vec![suite],
        id: id("kdc"),
        expect_peer: None,
        cert: Some(CertPolicy {
            creds: vec![kdc],
            allowed: vec![CertMatch::Subject("O=gander test,CN=ied-1".into())],
            profiles: vec![],
        }),
    };
    let mid = member.id_payload().unwrap();
    let (wire, sa) = exchange(Auth::Cert(member), mid, cfg, suite);
    let cap = tmp("cert.pcap");
    pcap(&wire, &cap);
    let Some(out) = tshark(&cap, Some(&ikev1_line(&sa))) else {
        return;
    };
    std::fs::write(tmp("cert.txt"), &out).unwrap();
    for n in [5, 6] {
        let m = frame(&out, n);
        assert!(
            m.contains("Payload: Identification (5)") && m.contains("ID_DER_ASN1_DN"),
            "{m}"
        );
        assert!(m.contains("Payload: Certificate (6)"), "{m}");
        assert!(m.contains("Payload: Signature (9)"), "{m}");
    }
    // Message 3 carries the CERTREQ naming the CA.
    assert!(
        frame(&out, 3).contains("Payload: Certificate Request (7)"),
        "{}",
        frame(&out, 3)
    );
    // And the GROUPKEY-PULL under the certificate SA decrypts too.
    assert!(
        frame(&out, 10).contains("Key Download (17)"),
        "{}",
        frame(&out, 10)
    );
}

/// The key server's notifications to a refused member (`gander_gdoi::notify`): tshark reads the
/// clear form as an Informational exchange with its Notification, and with the key log the
/// protected form (HASH(1), N under the phase-1 SA, RFC 2409 5.7) too.
#[test]
fn tshark_reads_both_forms_of_the_notification() {
    use gander_gdoi::notify;
    use gander_wire::isakmp::error::notify_type;
    let suite = Suite::all(3600)[1];
    let cfg = ResponderConfig {
        psk: Zeroizing::new(b"0123456789abcdef".to_vec()),
        suites: vec![suite],
        id: id("kdc"),
        expect_peer: None,
        cert: None,
    };
    let (mut wire, sa) = exchange(
        Auth::Psk(Zeroizing::new(b"0123456789abcdef".to_vec())),
        id("ied-1"),
        cfg,
        suite,
    );
    wire.push((
        false,
        notify::unprotected(sa.cky_i, sa.cky_r, notify_type::AUTHENTICATION_FAILED),
    ));
    wire.push((
        false,
        notify::protected(&sa, notify_type::INVALID_ID_INFORMATION).unwrap(),
    ));
    let cap = tmp("notify.pcap");
    pcap(&wire, &cap);
    let Some(out) = tshark(&cap, Some(&ikev1_line(&sa))) else {
        return;
    };
    let clear = frame(&out, 11);
    assert!(
        clear.contains("Exchange type: Informational (5)"),
        "{clear}"
    );
    assert!(
        clear.contains("Domain of interpretation: IPSEC (1)"),
        "{clear}"
    );
    assert!(
        clear.contains("Notify Message Type: AUTHENTICATION-FAILED (24)"),
        "{clear}"
    );
    let protected = frame(&out, 12);
    assert!(protected.contains("Payload: Hash (8)"), "{protected}");
    assert!(
        protected.contains("Notify Message Type: INVALID-ID-INFORMATION (18)"),
        "{protected}"
    );
}
