//! gander's IKEv1 phase 1 (RFC 2409 main mode) against an independent implementation,
//! strongSwan 5.9 (charon, configured through swanctl), both ways, across two network
//! namespaces joined by a veth pair:
//!
//! - gander's group member (`net::member::register_with`, what `gander gdoi register` runs) as
//!   initiator against charon as IKEv1 main-mode responder: pre-shared keys with every suite
//!   gander offers that strongSwan is configured to accept one at a time (AES-CBC-128/256,
//!   SHA-256/384, DH groups 14, 19 and 20), and certificates (ECDSA P-256 and RSA-2048, a CA
//!   made by the test). Success is charon's `swanctl --list-sas` showing the IKEv1 SA
//!   ESTABLISHED with the negotiated algorithms and gander's identity. charon is no GDOI key
//!   server: it reads the member's GROUPKEY-PULL (exchange type 32) as a Quick Mode, finds no
//!   SA payload ("sa payload missing") and answers with a protected Informational exchange;
//!   the member must end with an error, within its retransmission budget, no panic.
//! - charon as initiator against gander's key server (`net::kdc::Kdc`, what `gander kdc`
//!   runs) on UDP 848 (`remote_port`): the key server completes phase 1 (its `Phase1` event
//!   with charon's identity, charon's SA ESTABLISHED) and refuses the Quick Mode that follows
//!   (IPsec DOI, not GDOI) as a Quick Mode, with DOI-NOT-SUPPORTED, and keeps serving.
//! - Every exchange is captured on the veth; tshark 4.0, with gander's key log, finds no
//!   malformed packet and decrypts both sides' messages.
//!
//! strongSwan is installed by scripts/setup.sh; without it the tests say so and skip
//! (docs/gdoi.md, "Interoperability").

use crate::interop_support;
use crate::pki;

use gander_gdoi::cert_auth::CertMatch;
use gander_gdoi::keylog::KeyLog;
use gander_gdoi::net::cert_members::KdcCerts;
use gander_gdoi::net::kdc::{GroupPolicy, Kdc, KdcEvent, KdcPolicy, MemberPolicy};
use gander_gdoi::net::member::{register_with, MemberConfig, MemberError, RegisterOptions};
use gander_gdoi::profile::PeerProfile;
use gander_gdoi::pull::PullError;
use gander_gdoi::Phase1Error;
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::iec61850::oid;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdPayload, Traffic};
use interop_support::{available, tshark_clean, Capture, Charon, Pair, TempDir, GANDER, PEER};
use pki::{Kind, Leaf, Pki};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zeroize::Zeroizing;

/// The pre-shared key both sides hold ("0123456789abcdef").
const PSK_HEX: &str = "30313233343536373839616263646566";

fn key_id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

/// How the member waits per message, and how often it sends each: the budget a refusal
/// must stay within.
const MEMBER_TIMEOUT: Duration = Duration::from_millis(500);
const MEMBER_TRIES: u32 = 2;

fn member_cfg(server: SocketAddr) -> MemberConfig {
    MemberConfig {
        server,
        bind: Some(SocketAddr::from((GANDER, 0))),
        psk: hex::decode(PSK_HEX).unwrap(),
        identity: key_id("ied-1"),
        group: key_id("goose-1"),
        timeout: MEMBER_TIMEOUT,
        tries: MEMBER_TRIES,
    }
}

/// A connection for gander's member: charon responds on UDP 500 with `proposals` only.
fn responder_conf(proposals: &str, local: &str, remote: &str, secrets: &str) -> String {
    format!(
        "connections {{\n gander {{\n  version = 1\n  local_addrs = {PEER}\n  \
         remote_addrs = {GANDER}\n  proposals = {proposals}\n  local {{\n{local}\n  }}\n  \
         remote {{\n{remote}\n  }}\n  children {{ c {{ local_ts = {PEER}/32\n    \
         remote_ts = {GANDER}/32\n    esp_proposals = aes128-sha256 }} }}\n }}\n}}\n\
         secrets {{\n{secrets}\n}}\n"
    )
}

fn psk_responder_conf(proposals: &str) -> String {
    responder_conf(
        proposals,
        "   auth = psk\n   id = keyid:swan",
        "   auth = psk\n   id = keyid:ied-1",
        &format!(" ike-1 {{ id-1 = keyid:ied-1\n  secret = 0x{PSK_HEX} }}"),
    )
}

/// What charon did with the member's GROUPKEY-PULL and what the member made of it.
///
/// charon 5.9.8 parses exchange type 32 as Quick Mode; after decrypting it under the
/// phase-1 SA and checking its HASH(1) (the IV, the Message ID and prf(SKEYID_a, M-ID |
/// payloads) are the same in both exchanges), it finds no SA payload and queues an
/// Informational exchange. The member gets that datagram as the reply to its GROUPKEY-PULL,
/// cannot take it as one, and ends with an error when its retransmissions are spent.
fn assert_pull_refused(
    res: &Result<gander_gdoi::pull::GroupKeys, MemberError>,
    took: Duration,
    log: &str,
) {
    let e = match res {
        Ok(_) => panic!("strongSwan is no key server, yet the member got keys"),
        Err(e) => e,
    };
    // Two exact reports, by whether the member reads the key server's notifications
    // (`notify`, another change landing beside this one): without, charon's Informational is
    // an unexpected reply and the last refusal is reported once the retransmissions are
    // spent; with, it is charon's INVALID-PAYLOAD-TYPE under the phase-1 SA (its HASH(1)
    // verifies) and the registration ends at once. Either way after phase 1, in the
    // registration.
    let spent = MEMBER_TIMEOUT * MEMBER_TRIES;
    match e.to_string().as_str() {
        "registration: unexpected message in state GROUPKEY-PULL header" => {
            assert!(matches!(e, MemberError::Pull(PullError::Unexpected { .. })));
            assert!(took < spent + Duration::from_secs(3), "took {took:?}");
        }
        "refused by the key server: INVALID-PAYLOAD-TYPE (1), authenticated under the \
         phase-1 SA" => {
            assert!(
                took < spent,
                "an authenticated refusal ends at once: {took:?}"
            );
        }
        other => panic!("the member's report of charon's refusal: {other}"),
    }
    assert!(
        log.contains("parsed QUICK_MODE request") && log.contains("sa payload missing"),
        "charon reads GROUPKEY-PULL as a Quick Mode without SA:\n{log}"
    );
    assert!(
        !log.contains("invalid HASH"),
        "charon verified the GROUPKEY-PULL's HASH(1):\n{log}"
    );
}

/// Runs gander's member in its namespace against charon; returns its result and time.
fn register_in(
    ns: &str,
    opts: RegisterOptions,
) -> (Result<gander_gdoi::pull::GroupKeys, MemberError>, Duration) {
    gander_lab::in_ns(ns, move || {
        let t = Instant::now();
        let r = register_with(&member_cfg(SocketAddr::from((PEER, 500))), &opts);
        (r, t.elapsed())
    })
    .unwrap()
}

/// The ISAKMP datagrams tshark read, for messages.
fn flows(v: &[String]) -> String {
    v.join("\n")
}

/// charon's answers to GROUPKEY-PULL as tshark decrypts them with the member's key log:
/// Informational exchanges (5) from charon made of HASH (8) and a Notification (11) of type
/// INVALID-PAYLOAD-TYPE (1). (charon's Deletes after `--terminate` are HASH and D, 12.)
fn pull_refusals(lines: &[String]) -> usize {
    lines
        .iter()
        .filter(|l| {
            let f: Vec<&str> = l.split(';').collect();
            f.len() == 5 && f[0] == PEER.to_string() && f[2] == "5" && f[3] == "8,11" && f[4] == "1"
        })
        .count()
}

#[test]
fn member_with_psk_against_strongswan_responder_every_suite() {
    if !available("member_with_psk_against_strongswan_responder_every_suite") {
        return;
    }
    let pair = Pair::up("p");
    let dir = TempDir::new("psk-member");
    let charon = Charon::start(&pair.peer_ns, &dir.0);
    let cap = Capture::start(&pair.gander_ns, &pair.gander_if, &dir.0.join("psk.pcapng"));
    let keylog = dir.0.join("member.keylog");
    // strongSwan's proposal keyword, and how `--list-sas` names the negotiated suite.
    let suites = [
        (
            "aes128-sha256-modp2048",
            "AES_CBC-128/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/MODP_2048",
        ),
        (
            "aes256-sha256-modp2048",
            "AES_CBC-256/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/MODP_2048",
        ),
        (
            "aes128-sha256-ecp256",
            "AES_CBC-128/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/ECP_256",
        ),
        (
            "aes256-sha256-ecp256",
            "AES_CBC-256/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/ECP_256",
        ),
        (
            "aes256-sha384-ecp384",
            "AES_CBC-256/HMAC_SHA2_384_192/PRF_HMAC_SHA2_384/ECP_384",
        ),
    ];
    for (proposal, listed) in suites {
        charon.load(&psk_responder_conf(proposal));
        // charon speaks IKEv1 main mode in the IPsec DOI only (and tshark 4.0 decrypts only
        // that): gander's member offers it for such a peer (`ipsec-doi`, docs/gdoi.md).
        let opts = RegisterOptions {
            keylog: Some(Arc::new(KeyLog::open(&keylog).unwrap())),
            profile: PeerProfile::IpsecDoi,
            ..RegisterOptions::default()
        };
        let (res, took) = register_in(&pair.gander_ns, opts);
        let sas = charon
            .wait_established(&GANDER.to_string(), Duration::from_secs(2))
            .unwrap_or_else(|| {
                panic!(
                    "{proposal}: no ESTABLISHED IKEv1 SA at charon:\n{}\n{}",
                    charon.list_sas(),
                    charon.log()
                )
            });
        assert!(sas.contains(listed), "{proposal}: {sas}");
        assert!(sas.contains("remote 'ied-1'"), "{proposal}: {sas}");
        assert_pull_refused(&res, took, &charon.log());
        charon.terminate("gander");
    }
    let pcap = cap.stop();
    let lines = tshark_clean(&pcap, Some(&keylog));
    assert_eq!(
        pull_refusals(&lines),
        suites.len(),
        "one protected INVALID-PAYLOAD-TYPE from charon per registration:\n{}",
        flows(&lines)
    );
}

/// The key server's side: `Kdc` on GANDER:848 in gander's namespace, its events kept.
struct Server {
    stop: Arc<AtomicBool>,
    events: Arc<Mutex<Vec<KdcEvent>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(ns: &str, policy: KdcPolicy, certs: KdcCerts) -> Server {
        let stop = Arc::new(AtomicBool::new(false));
        let events = Arc::new(Mutex::new(Vec::new()));
        let (s, e, ns) = (stop.clone(), events.clone(), ns.to_string());
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            gander_lab::enter(&ns).unwrap();
            let sock = UdpSocket::bind(SocketAddr::from((GANDER, 848))).unwrap();
            let mut kdc = Kdc::new(sock, policy);
            kdc.set_certs(certs);
            tx.send(()).unwrap();
            while !s.load(Ordering::SeqCst) {
                match kdc.poll(Duration::from_millis(50)) {
                    Ok(Some(ev)) => e.lock().unwrap().push(ev),
                    Ok(None) => {}
                    Err(err) => panic!("key server: {err}"),
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        Server {
            stop,
            events,
            thread: Some(thread),
        }
    }

    fn events(&self) -> Vec<KdcEvent> {
        self.events.lock().unwrap().clone()
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

fn goose_group() -> GroupPolicy {
    GroupPolicy {
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
        key_id: 0,
        key: Zeroizing::new(Vec::new()),
    }
}

/// A connection that initiates to the key server's UDP 848 from charon's port 500.
fn initiator_conf(proposals: &str, local: &str, remote: &str, secrets: &str) -> String {
    format!(
        "connections {{\n kdc {{\n  version = 1\n  local_addrs = {PEER}\n  \
         remote_addrs = {GANDER}\n  remote_port = 848\n  proposals = {proposals}\n  \
         local {{\n{local}\n  }}\n  remote {{\n{remote}\n  }}\n  children {{ q {{ \
         local_ts = {PEER}/32\n    remote_ts = {GANDER}/32\n    esp_proposals = aes128-sha256 }} }}\n \
         }}\n}}\nsecrets {{\n{secrets}\n}}\n"
    )
}

/// Waits for a key-server event that `f` picks.
fn wait_event(s: &Server, within: Duration, f: impl Fn(&KdcEvent) -> bool) -> Option<KdcEvent> {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if let Some(e) = s.events().into_iter().find(|e| f(e)) {
            return Some(e);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// charon initiates (main mode, then Quick Mode for child `q`) against the key server;
/// checks phase 1 at both ends and the key server's refusal of the Quick Mode. Returns the
/// key server's events.
fn charon_initiates(
    charon: &Charon,
    server: &Server,
    identity: &[u8],
    listed: &str,
) -> Vec<KdcEvent> {
    let t = Instant::now();
    let (ok, out) = charon.initiate("q", 6);
    assert!(!ok, "the key server cannot have made an IPsec SA: {out}");
    assert!(
        t.elapsed() < Duration::from_secs(12),
        "initiate took {:?}",
        t.elapsed()
    );
    let sas = charon
        .wait_established(&format!("{GANDER}[848]"), Duration::from_secs(2))
        .unwrap_or_else(|| {
            panic!(
                "no ESTABLISHED IKEv1 SA at charon:\n{out}\nkey server: {:?}",
                server.events()
            )
        });
    assert!(sas.contains(listed), "{sas}");
    let phase1 = wait_event(
        server,
        Duration::from_secs(2),
        |e| matches!(e, KdcEvent::Phase1 { identity: i, .. } if i == identity),
    );
    assert!(phase1.is_some(), "key server events: {:?}", server.events());
    let refused = wait_event(
        server,
        Duration::from_secs(2),
        |e| matches!(e, KdcEvent::Refused { peer, .. } if peer.ip() == PEER),
    );
    let Some(KdcEvent::Refused { reason, notify, .. }) = refused else {
        panic!("no refusal of the Quick Mode: {:?}", server.events())
    };
    // Refused as what it is (pull::PullError::QuickMode), after its HASH(1) verified.
    assert_eq!(
        (reason.as_str(), notify),
        (
            "a Quick Mode with an SA of DOI 1 (IPsec SA negotiation, RFC 2409 5.5), not a \
             GROUPKEY-PULL (RFC 6407 3.2)",
            notify_type::DOI_NOT_SUPPORTED
        ),
    );
    let log = charon.log();
    assert!(
        log.contains("QUICK_MODE request"),
        "charon sent a Quick Mode:\n{log}"
    );
    // A key server that notifies refused peers (`notify`, landing beside this change) sends
    // DOI-NOT-SUPPORTED under the phase-1 SA; charon then verifies its HASH and logs the type
    // (it has no name for 2). Nothing else may reach charon as an Informational.
    for l in log
        .lines()
        .filter(|l| l.contains("parsed INFORMATIONAL_V1 request"))
    {
        assert!(l.ends_with("[ HASH N((2)) ]"), "{l}");
    }
    server.events()
}

#[test]
fn strongswan_initiator_with_psk_against_the_key_server() {
    if !available("strongswan_initiator_with_psk_against_the_key_server") {
        return;
    }
    let pair = Pair::up("k");
    let dir = TempDir::new("psk-kdc");
    let charon = Charon::start(&pair.peer_ns, &dir.0);
    let keylog = dir.0.join("kdc.keylog");
    let policy = KdcPolicy {
        identity: key_id("kdc"),
        members: vec![MemberPolicy {
            identity: b"swan".to_vec(),
            psk: Zeroizing::new(hex::decode(PSK_HEX).unwrap()),
            address: PEER.into(),
            groups: vec![b"goose-1".to_vec()],
            cert: None,
            push: None,
        }],
        groups: vec![goose_group()],
    };
    let server = Server::start(
        &pair.gander_ns,
        policy,
        KdcCerts {
            creds: vec![],
            keylog: Some(Arc::new(KeyLog::open(&keylog).unwrap())),
            profiles: vec![],
        },
    );
    let cap = Capture::start(&pair.gander_ns, &pair.gander_if, &dir.0.join("kdc.pcapng"));
    for (proposal, listed) in [
        (
            "aes128-sha256-modp2048",
            "AES_CBC-128/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/MODP_2048",
        ),
        (
            "aes256-sha256-ecp256",
            "AES_CBC-256/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/ECP_256",
        ),
    ] {
        charon.load(&initiator_conf(
            proposal,
            "   auth = psk\n   id = keyid:swan",
            "   auth = psk\n   id = keyid:kdc",
            &format!(" ike-1 {{ id-1 = keyid:kdc\n  secret = 0x{PSK_HEX} }}"),
        ));
        charon_initiates(&charon, &server, b"swan", listed);
        charon.terminate("kdc");
    }
    let pcap = cap.stop();
    let lines = tshark_clean(&pcap, Some(&keylog));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("{PEER};{GANDER};32"))),
        "tshark reads charon's Quick Mode:\n{}",
        flows(&lines)
    );
}

/// The subject DN gander's policy and strongSwan's configuration name a test certificate by.
fn subject(cn: &str) -> (String, String) {
    (
        format!("O=gander test,CN={cn}"),
        format!("O=gander test, CN={cn}"),
    )
}

/// Writes charon's certificate, key and the CA where swanctl looks for them.
fn charon_credentials(p: &Pki, kind: Kind, dir: &Path) {
    for d in ["x509", "x509ca", "private"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let (c, k) = p.leaf(&Leaf::new("swan", kind));
    std::fs::write(dir.join("x509/swan.pem"), c.to_pem().unwrap()).unwrap();
    std::fs::write(
        dir.join("private/swan.key"),
        k.private_key_to_pem_pkcs8().unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("x509ca/ca.pem"), p.ca.to_pem().unwrap()).unwrap();
}

#[test]
fn member_with_certificates_against_strongswan_responder() {
    if !available("member_with_certificates_against_strongswan_responder") {
        return;
    }
    let pair = Pair::up("c");
    let dir = TempDir::new("cert-member");
    let charon = Charon::start(&pair.peer_ns, &dir.0);
    let cap = Capture::start(&pair.gander_ns, &pair.gander_if, &dir.0.join("cert.pcapng"));
    let keylog = dir.0.join("member.keylog");
    for (kind, proposal, listed) in [
        (
            Kind::P256,
            "aes256-sha256-ecp256",
            "AES_CBC-256/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/ECP_256",
        ),
        (
            Kind::Rsa2048,
            "aes128-sha256-modp2048",
            "AES_CBC-128/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/MODP_2048",
        ),
    ] {
        let p = Pki::new("gander interop CA", kind);
        charon_credentials(&p, kind, &dir.0);
        let (member_dn, swan_dn) = (subject("ied-1").1, subject("swan").1);
        charon.load(&responder_conf(
            proposal,
            &format!("   auth = pubkey\n   certs = swan.pem\n   id = \"{swan_dn}\""),
            &format!("   auth = pubkey\n   id = \"{member_dn}\"\n   cacerts = ca.pem"),
            "",
        ));
        let opts = RegisterOptions {
            cert: Some(p.creds(&Leaf::new("ied-1", kind), p.trust(None))),
            keylog: Some(Arc::new(KeyLog::open(&keylog).unwrap())),
            server_cert: Some(CertMatch::Subject(subject("swan").0)),
            profile: PeerProfile::IpsecDoi,
        };
        let (res, took) = register_in(&pair.gander_ns, opts);
        let sas = charon
            .wait_established(&GANDER.to_string(), Duration::from_secs(2))
            .unwrap_or_else(|| {
                panic!(
                    "{kind:?}: no ESTABLISHED IKEv1 SA:\n{:?}\n{}",
                    res.as_ref().err(),
                    charon.log()
                )
            });
        assert!(sas.contains(listed), "{kind:?}: {sas}");
        assert!(sas.contains("CN=ied-1"), "{kind:?}: {sas}");
        assert_pull_refused(&res, took, &charon.log());
        charon.terminate("gander");
    }
    let pcap = cap.stop();
    let lines = tshark_clean(&pcap, Some(&keylog));
    assert_eq!(pull_refusals(&lines), 2, "{}", flows(&lines));
}

#[test]
fn strongswan_initiator_with_certificates_against_the_key_server() {
    if !available("strongswan_initiator_with_certificates_against_the_key_server") {
        return;
    }
    let pair = Pair::up("d");
    let dir = TempDir::new("cert-kdc");
    let charon = Charon::start(&pair.peer_ns, &dir.0);
    let keylog = dir.0.join("kdc.keylog");
    let cap = Capture::start(&pair.gander_ns, &pair.gander_if, &dir.0.join("kdc.pcapng"));
    for (kind, proposal, listed) in [
        (
            Kind::P256,
            "aes128-sha256-ecp256",
            "AES_CBC-128/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/ECP_256",
        ),
        (
            Kind::Rsa2048,
            "aes256-sha256-modp2048",
            "AES_CBC-256/HMAC_SHA2_256_128/PRF_HMAC_SHA2_256/MODP_2048",
        ),
    ] {
        let p = Pki::new("gander interop CA", kind);
        charon_credentials(&p, kind, &dir.0);
        let policy = KdcPolicy {
            identity: key_id("kdc"),
            members: vec![MemberPolicy {
                identity: b"swan".to_vec(),
                psk: Zeroizing::new(Vec::new()),
                address: PEER.into(),
                groups: vec![b"goose-1".to_vec()],
                cert: Some(CertMatch::Subject(subject("swan").0)),
                push: None,
            }],
            groups: vec![goose_group()],
        };
        let server = Server::start(
            &pair.gander_ns,
            policy,
            KdcCerts {
                creds: vec![p.creds(&Leaf::new("kdc", kind), p.trust(None))],
                keylog: Some(Arc::new(KeyLog::open(&keylog).unwrap())),
                profiles: vec![],
            },
        );
        let (swan_dn, kdc_dn) = (subject("swan").1, subject("kdc").1);
        charon.load(&initiator_conf(
            proposal,
            &format!("   auth = pubkey\n   certs = swan.pem\n   id = \"{swan_dn}\""),
            &format!("   auth = pubkey\n   id = \"{kdc_dn}\"\n   cacerts = ca.pem"),
            "",
        ));
        charon_initiates(&charon, &server, subject("swan").0.as_bytes(), listed);
        charon.terminate("kdc");
        drop(server);
    }
    let pcap = cap.stop();
    tshark_clean(&pcap, Some(&keylog));
}

/// A wrong pre-shared key, both ways: neither side establishes anything, each refuses the
/// other's message 5 (whose decryption under the wrong key is garbage), and each reports it.
#[test]
fn wrong_psk_is_refused_both_ways() {
    if !available("wrong_psk_is_refused_both_ways") {
        return;
    }
    let pair = Pair::up("w");
    let dir = TempDir::new("wrong-psk");
    let charon = Charon::start(&pair.peer_ns, &dir.0);
    let cap = Capture::start(&pair.gander_ns, &pair.gander_if, &dir.0.join("w.pcapng"));
    // gander's member with a key charon does not hold.
    let other = "00112233445566778899aabbccddeeff";
    charon.load(&responder_conf(
        "aes128-sha256-modp2048",
        "   auth = psk\n   id = keyid:swan",
        "   auth = psk\n   id = keyid:ied-1",
        &format!(" ike-1 {{ id-1 = keyid:ied-1\n  secret = 0x{other} }}"),
    ));
    let opts = RegisterOptions {
        profile: PeerProfile::IpsecDoi,
        ..RegisterOptions::default()
    };
    let (res, took) = register_in(&pair.gander_ns, opts);
    let e = res.expect_err("no keys with a wrong PSK");
    assert!(
        matches!(e, MemberError::Phase1(Phase1Error::PeerRefusedIdentity)),
        "{e}"
    );
    assert!(
        took < MEMBER_TIMEOUT * MEMBER_TRIES * 3 + Duration::from_secs(3),
        "{took:?}"
    );
    assert!(
        !charon.list_sas().contains("ESTABLISHED"),
        "{}",
        charon.list_sas()
    );
    // charon cannot decrypt message 5 and answers each copy with an Informational encrypted
    // under its own (other) keys.
    let log = charon.log();
    eprintln!("member with a wrong PSK: {e}");
    assert!(
        log.contains("decryption failed?") && !log.contains("established between"),
        "{log}"
    );
    // charon initiating to the key server with a key the key server does not hold.
    let policy = KdcPolicy {
        identity: key_id("kdc"),
        members: vec![MemberPolicy {
            identity: b"swan".to_vec(),
            psk: Zeroizing::new(hex::decode(PSK_HEX).unwrap()),
            address: PEER.into(),
            groups: vec![b"goose-1".to_vec()],
            cert: None,
            push: None,
        }],
        groups: vec![goose_group()],
    };
    let server = Server::start(&pair.gander_ns, policy, KdcCerts::default());
    charon.load(&initiator_conf(
        "aes128-sha256-modp2048",
        "   auth = psk\n   id = keyid:swan",
        "   auth = psk\n   id = keyid:kdc",
        &format!(" ike-1 {{ id-1 = keyid:kdc\n  secret = 0x{other} }}"),
    ));
    let (ok, out) = charon.initiate("q", 6);
    assert!(!ok, "{out}");
    let refused = wait_event(
        &server,
        Duration::from_secs(2),
        |e| matches!(e, KdcEvent::Refused { notify, .. } if *notify == notify_type::AUTHENTICATION_FAILED),
    );
    assert!(
        refused.is_some(),
        "key server events: {:?}",
        server.events()
    );
    assert!(
        !server
            .events()
            .iter()
            .any(|e| matches!(e, KdcEvent::Phase1 { .. })),
        "{:?}",
        server.events()
    );
    eprintln!("key server on charon's wrong PSK: {refused:?}");
    let pcap = cap.stop();
    tshark_clean(&pcap, None);
}
