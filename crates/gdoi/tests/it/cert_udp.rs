//! The key server and members over UDP on loopback with certificates (RFC 2409 5.1): the key
//! server's configuration file names its certificate, key, CA and CRL and authorises members
//! by subject or subjectAltName; members with RSA-2048, P-256 and P-384 certificates register
//! and receive the group key; a revoked, expired, untrusted or unauthorised certificate gets
//! no key, the key server's event names the notification, and the member reports the same
//! notification by name.

use crate::pki;

use crate::kdc_thread::{self, Server};
use gander_gdoi::cert_auth::Credentials;
use gander_gdoi::keylog::KeyLog;
use gander_gdoi::net::cert_members::KdcCerts;
use gander_gdoi::net::kdc::{Kdc, KdcEvent};
use gander_gdoi::net::member::{register_with, MemberConfig, MemberError, RegisterOptions};
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::IdPayload;
use pki::{Kind, Leaf, Pki};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Writes the key server's configuration into the PKI's directory and serves it.
/// The key server has one certificate per kind in `kinds`.
fn serve(
    p: &Pki,
    kinds: &[Kind],
    crl: Option<&Path>,
    members: &str,
    keylog: Option<&Path>,
) -> Server {
    let (mut cert, mut key) = (Vec::new(), Vec::new());
    for (n, kind) in kinds.iter().enumerate() {
        let (kc, kk) = p.leaf(&Leaf::new("kdc", *kind));
        let (c, k) = p.write(&format!("kdc-{n}"), &kc, &kk);
        cert.push(c);
        key.push(k);
    }
    let crl_line = crl.map_or(String::new(), |c| format!("crl = {:?}\n", c));
    let toml = format!(
        r#"listen = "127.0.0.1:0"
state = {state:?}
cert = {cert:?}
key = {key:?}
ca = {ca:?}
{crl_line}
[[group]]
id = "goose-1"
protocol = "goose"
dst_mac = "01:0c:cd:01:00:01"
appid = 1
mac = 2
enc = 0
lifetime_s = 3600

{members}
"#,
        state = p.dir.join("state.toml"),
        ca = p.ca_path(),
    );
    let path = p.dir.join("kdc.toml");
    std::fs::write(&path, toml).unwrap();
    let cfg = gander_gdoi::config::load(&path).unwrap();
    assert_eq!(cfg.credentials.len(), kinds.len());
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut kdc = Kdc::new(sock, cfg.policy);
    kdc.set_certs(KdcCerts {
        creds: cfg.credentials,
        keylog: keylog.map(|k| Arc::new(KeyLog::open(k).unwrap())),
        profiles: cfg.profiles,
    });
    kdc_thread::spawn(kdc, Duration::from_millis(50))
}

fn member_cfg(server: SocketAddr) -> MemberConfig {
    MemberConfig {
        server,
        bind: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        psk: Vec::new(),
        identity: IdPayload {
            id_type: id_type::KEY_ID,
            protocol: 0,
            port: 0,
            data: vec![],
        },
        group: IdPayload {
            id_type: id_type::KEY_ID,
            protocol: 0,
            port: 0,
            data: b"goose-1".to_vec(),
        },
        timeout: Duration::from_millis(300),
        tries: 2,
    }
}

fn opts(creds: Arc<Credentials>) -> RegisterOptions {
    RegisterOptions {
        cert: Some(creds),
        keylog: None,
        server_cert: Some(gander_gdoi::cert_auth::CertMatch::Subject(
            "O=gander test,CN=kdc".into(),
        )),
        profile: Default::default(),
    }
}

#[test]
fn members_register_with_rsa_p256_p384_certificates_over_udp() {
    for kind in pki::ALL {
        let p = Pki::new("gander test CA", kind);
        let log = p.dir.join("kdc.keylog");
        let s = serve(
            &p,
            &[kind],
            None,
            "[[member]]\nidentity = \"ied-1\"\nsubject = \"O=gander test, CN=ied-1\"\ngroups = [\"goose-1\"]\n",
            Some(&log),
        );
        let m = p.creds(&Leaf::new("ied-1", kind), p.trust(None));
        let keys = register_with(&member_cfg(s.addr), &opts(m)).unwrap();
        assert_eq!(keys.teks.len(), 1, "{kind:?}");
        assert_eq!(keys.teks[0].integrity_key.as_ref().unwrap().len(), 32);
        std::thread::sleep(Duration::from_millis(100));
        let ev = s.events.lock().unwrap().clone();
        assert!(
            ev.iter()
                .any(|e| matches!(e, KdcEvent::Registered { group, .. } if group == b"goose-1")),
            "{ev:?}"
        );
        // The key server's key log has the SA's line after its warning.
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.starts_with("# gander IKEv1 key log"));
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 1);
    }
}

/// The notification of a refused registration: the key server's event names it, and the
/// member reports the same one by name (unauthenticated: phase 1 did not complete, so it is
/// reported only once the exchange timed out, `gander_gdoi::notify`).
fn refused(s: &Server, creds: Arc<Credentials>) -> u16 {
    let before = s.events.lock().unwrap().len();
    let r = register_with(&member_cfg(s.addr), &opts(creds));
    let Err(MemberError::Refused(n)) = r else {
        panic!("not refused with a notification: {r:?}")
    };
    assert!(!n.authenticated);
    assert!(r.unwrap_err().to_string().contains(n.name()));
    std::thread::sleep(Duration::from_millis(100));
    let ev = s.events.lock().unwrap();
    let logged = ev[before..]
        .iter()
        .find_map(|e| match e {
            KdcEvent::Refused { notify, .. } => Some(*notify),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no refusal in {:?}", &ev[before..]));
    assert_eq!(n.notify, logged);
    logged
}

#[test]
fn revoked_expired_untrusted_and_unauthorised_certificates_get_no_key() {
    let p = Pki::new("gander test CA", Kind::P256);
    let (revoked_cert, revoked_key) = p.leaf(&Leaf::new("ied-1", Kind::P256));
    let crl = p.crl(&[&revoked_cert], "ca.crl");
    let s = serve(
        &p,
        &[Kind::P256],
        Some(&crl),
        "[[member]]\nidentity = \"ied-1\"\nsubject = \"O=gander test,CN=ied-1\"\ngroups = [\"goose-1\"]\n\
         [[member]]\nidentity = \"ied-2\"\nsan = \"ied-2.example\"\ngroups = [\"goose-1\"]\n",
        None,
    );
    let trust = p.trust(None);
    let revoked =
        Arc::new(Credentials::new(revoked_cert, vec![], revoked_key, trust.clone()).unwrap());
    assert_eq!(refused(&s, revoked), notify_type::INVALID_CERTIFICATE);
    let mut l = Leaf::new("ied-1", Kind::P256);
    l.expired = true;
    assert_eq!(
        refused(&s, p.creds(&l, trust.clone())),
        notify_type::INVALID_CERTIFICATE
    );
    let other = Pki::new("another CA", Kind::P256);
    assert_eq!(
        refused(
            &s,
            other.creds(&Leaf::new("ied-1", Kind::P256), trust.clone())
        ),
        notify_type::INVALID_CERTIFICATE
    );
    assert_eq!(
        refused(&s, p.creds(&Leaf::new("ied-9", Kind::P256), trust.clone())),
        notify_type::INVALID_ID_INFORMATION
    );
    // A fresh certificate for ied-1 (not on the CRL) and ied-2 named by its SAN register.
    let ok = p.creds(&Leaf::new("ied-1", Kind::P256), trust.clone());
    assert_eq!(
        register_with(&member_cfg(s.addr), &opts(ok))
            .unwrap()
            .teks
            .len(),
        1
    );
    let mut l = Leaf::new("ied-2", Kind::P256);
    l.san = Some("ied-2.example");
    let by_san = p.creds(&l, trust);
    // Its ID is its subject DN; the SAN entry still authorises the certificate in phase 1,
    // and GROUPKEY-PULL finds it by the same certificate-checked identity.
    let r = register_with(&member_cfg(s.addr), &opts(by_san));
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn one_key_server_answers_rsa_and_ecdsa_members_with_the_matching_certificate() {
    let p = Pki::new("gander test CA", Kind::P256);
    let s = serve(
        &p,
        &[Kind::Rsa2048, Kind::P256, Kind::P384],
        None,
        "[[member]]\nidentity = \"ied-1\"\nsubject = \"O=gander test,CN=ied-1\"\ngroups = [\"goose-1\"]\n",
        None,
    );
    for kind in pki::ALL {
        let m = p.creds(&Leaf::new("ied-1", kind), p.trust(None));
        let r = register_with(&member_cfg(s.addr), &opts(m));
        assert_eq!(r.map(|k| k.teks.len()).ok(), Some(1), "{kind:?}");
    }
}
