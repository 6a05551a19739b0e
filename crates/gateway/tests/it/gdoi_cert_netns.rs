//! The gateway's `[gdoi]` member with certificates (IKEv1 main mode with signatures, RFC 2409
//! 5.1) against the standalone key server `gander-kdc` across two network namespaces joined by
//! a veth pair: `gander-kdc` runs in one with a certificate per key type and authorises the
//! gateway by its certificate's subject; the gateway's member runs in the other (`netns`), with
//! an ECDSA P-256 and then an RSA-2048 certificate. Each registers (GROUPKEY-PULL), its protect
//! rule protects GOOSE with the group's key, and the key server's scheduled rekey reaches it as
//! a GROUPKEY-PUSH. A gateway whose certificate the key server does not authorise gets no key,
//! and its member reports the key server's notification by name.

#[path = "../../../gdoi/tests/it/pki/mod.rs"]
mod pki;

use gander_gateway::config::{Config, Direction};
use gander_gateway::driver::{Control, Housekeeping};
use gander_gateway::gdoi_keys::GdoiMember;
use gander_gateway::policy::Policy;
use pki::{Kind, Leaf, Pki};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Namespaces `<p>k` (key server, 10.79.0.1) and `<p>g` (gateway, 10.79.0.2); removed on drop.
struct Pair {
    ks: String,
    gw: String,
}

impl Pair {
    fn up(tag: &str) -> Option<Pair> {
        if !gander_testkit::netns::available("gdoi_cert_netns") {
            return None;
        }
        let p = format!("gc{}{tag}", std::process::id() % 100_000);
        let pair = Pair {
            ks: format!("{p}k"),
            gw: format!("{p}g"),
        };
        let (va, vb) = (format!("{p}a"), format!("{p}b"));
        let ok = ip(&["netns", "add", &pair.ks])
            && ip(&["netns", "add", &pair.gw])
            && ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb])
            && ip(&["link", "set", &va, "netns", &pair.ks])
            && ip(&["link", "set", &vb, "netns", &pair.gw])
            && ip(&["-n", &pair.ks, "addr", "add", "10.79.0.1/24", "dev", &va])
            && ip(&["-n", &pair.gw, "addr", "add", "10.79.0.2/24", "dev", &vb])
            && ip(&["-n", &pair.ks, "link", "set", &va, "up"])
            && ip(&["-n", &pair.gw, "link", "set", &vb, "up"])
            && ip(&["-n", &pair.ks, "link", "set", "lo", "up"])
            && ip(&["-n", &pair.gw, "link", "set", "lo", "up"]);
        assert!(ok, "cannot set up the namespace pair");
        Some(pair)
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.ks]);
        let _ = ip(&["netns", "del", &self.gw]);
    }
}

/// `gander-kdc` in the key server's namespace; its JSON events collected; killed on drop.
struct KeyServer {
    child: Child,
    events: Arc<Mutex<Vec<String>>>,
}

impl KeyServer {
    fn start(ns: &str, config: &Path) -> KeyServer {
        let mut child = Command::new("ip")
            .args([
                "netns",
                "exec",
                ns,
                env!("CARGO_BIN_EXE_gander-kdc"),
                "--config",
            ])
            .arg(config)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("gander-kdc");
        let out = child.stdout.take().unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let e = events.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                e.lock().unwrap().push(l);
            }
        });
        KeyServer { child, events }
    }

    fn wait_for(&self, what: &str) {
        let t = Instant::now();
        while !self.events.lock().unwrap().iter().any(|l| l.contains(what)) {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "no {what} event: {:?}",
                self.events.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for KeyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The gateway's configuration with `[gdoi]` by certificate, its member started.
fn gateway(p: &Pki, ns: &str, stem: &str, leaf: &Leaf<'_>) -> (Policy, Arc<Control>, GdoiMember) {
    let (c, k) = p.leaf(leaf);
    p.write(stem, &c, &k);
    std::fs::write(p.dir.join("keys.toml"), "").unwrap();
    // Relative paths: read from the configuration's directory.
    let text = format!(
        "driver = \"udp\"\nkeys = \"keys.toml\"\nnetns = \"{ns}\"\n\
         [udp]\nied_listen = \"127.0.0.1:1\"\nnet_peer = \"127.0.0.1:2\"\nnet_listen = \"127.0.0.1:3\"\nied_peer = \"127.0.0.1:4\"\n\
         [gdoi]\nservers = [\"10.79.0.1:848\"]\ncert = \"{stem}.pem\"\nkey = \"{stem}.key\"\nca = \"ca.pem\"\n\
         server_name = \"O=gander test,CN=kdc\"\ngroups = [\"goose-1\"]\nbind = \"10.79.0.2\"\n\
         push_listen = \"10.79.0.2:8848\"\ntimeout_s = 0.5\nrenew_before_s = 1\n\
         [[rule]]\ndirection = \"outbound\"\nkind = \"goose\"\nappid = 1\naction = \"protect\"\ngroup = \"goose-1\"\n"
    );
    let cfg = Config::from_toml(&text, &p.dir).expect("config");
    let policy = Policy::new(&cfg, gander_sec::KeyStore::new()).expect("policy");
    let ctl = Arc::new(Control::new(None, None));
    let member = GdoiMember::start(&cfg, ctl.clone(), None)
        .expect("member")
        .expect("[gdoi]");
    (policy, ctl, member)
}

fn kdc_config(p: &Pki) -> std::path::PathBuf {
    let mut certs = Vec::new();
    let mut keys = Vec::new();
    for (n, kind) in [Kind::P256, Kind::Rsa2048].into_iter().enumerate() {
        let (c, k) = p.leaf(&Leaf::new("kdc", kind));
        let (c, k) = p.write(&format!("kdc-{n}"), &c, &k);
        certs.push(c);
        keys.push(k);
    }
    let text = format!(
        r#"listen = "10.79.0.1:848"
state = {state:?}
events = "json"
cert = {certs:?}
key = {keys:?}
ca = {ca:?}

[[group]]
id = "goose-1"
protocol = "goose"
dst_mac = "01:0c:cd:01:00:01"
appid = 1
mac = 2
enc = 0
lifetime_s = 5
activation_delay_s = 2
overlap_s = 5

[[member]]
identity = "gw-1"
subject = "O=gander test,CN=gw-1"
groups = ["goose-1"]
push = "10.79.0.2:8848"
"#,
        state = p.dir.join("kdc-state"),
        ca = p.ca_path(),
    );
    let path = p.dir.join("kdc.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn gateway_registers_by_certificate_with_gander_kdc_across_namespaces() {
    let Some(pair) = Pair::up("r") else { return };
    let p = Pki::new("gander test CA", Kind::P256);
    let ks = KeyServer::start(&pair.ks, &kdc_config(&p));
    ks.wait_for("\"listening\"");
    for (n, kind) in [Kind::P256, Kind::Rsa2048].into_iter().enumerate() {
        let (mut policy, ctl, member) =
            gateway(&p, &pair.gw, &format!("gw-{n}"), &Leaf::new("gw-1", kind));
        let mut hk = Housekeeping::new();
        let t = Instant::now();
        let mut frame_no = 1;
        // Registered, the key active, and GOOSE protected with it.
        loop {
            hk.tick(&ctl, &mut policy);
            let f =
                gander_testkit::frames::goose_frame([2, 0, 0, 0, 0, 1], DST, None, 1, 1, frame_no);
            frame_no += 1;
            if policy
                .handle(Direction::Outbound, &f, now(), &mut Vec::new())
                .is_forward()
            {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{kind:?}: no key: {:?} {:?}",
                member.status(),
                ks.events.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let s = member.status();
        assert_eq!(s[0].counters.registrations, 1, "{kind:?}: {s:?}");
        // The schedule's next key arrives by GROUPKEY-PUSH under the KEK of the registration.
        let t = Instant::now();
        while member.status().first().map_or(0, |g| g.counters.pushes) == 0 {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{kind:?}: no push: {:?}",
                member.status()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(
            member.status()[0].key_ids.len() >= 2,
            "{:?}",
            member.status()
        );
        drop(member);
    }
    let registered = ks
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("\"registered\"") && l.contains("CN=gw-1"))
        .count();
    assert_eq!(registered, 2, "{:?}", ks.events.lock().unwrap());
}

#[test]
fn a_gateway_the_key_server_does_not_authorise_reports_the_notification() {
    let Some(pair) = Pair::up("u") else { return };
    let p = Pki::new("gander test CA", Kind::P256);
    let ks = KeyServer::start(&pair.ks, &kdc_config(&p));
    ks.wait_for("\"listening\"");
    let (_policy, _ctl, member) = gateway(&p, &pair.gw, "gw-x", &Leaf::new("gw-9", Kind::P256));
    let t = Instant::now();
    let failures = |m: &GdoiMember| {
        m.status()
            .first()
            .map_or(0, |g| g.counters.registration_failures)
    };
    while failures(&member) == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{:?}",
            member.status()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(member.status()[0].key_ids.is_empty());
    ks.wait_for("INVALID-ID-INFORMATION");
    let reason = member.last_failure();
    assert!(
        reason
            .as_deref()
            .is_some_and(|r| r.contains("INVALID-ID-INFORMATION")),
        "{reason:?}"
    );
}
