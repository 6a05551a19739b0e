//! The group member from the command line, against `gander kdc` on loopback: `gander gdoi
//! register --follow` fails over from a silent key server to the second, prints the key once as
//! a JSON line and its events on stderr, and exits 0; with no key server answering it exits 2.
//! `gander frame protect --kdc` then `gander frame verify --kdc` round-trip a layer-2 GOOSE
//! capture with the group's key, and `verify --keys` with another key fails it.

use pcap_file::pcap::{PcapPacket, PcapWriter};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const GANDER: &str = env!("CARGO_BIN_EXE_gander");
const PSK: &str = "000102030405060708090a0b0c0d0e0f";

struct Kdc(Child);
impl Drop for Kdc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_kdc(dir: &std::path::Path) -> (Kdc, String) {
    let config = dir.join("kdc.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nevents = \"json\"\nstate = \"{}\"\n[[group]]\nid = \"goose-1\"\nprotocol = \"goose\"\ndst_mac = \"01:0c:cd:01:00:01\"\nappid = 1\nmac = 2\nenc = 0\nlifetime_s = 3600\noverlap_s = 60\n[[member]]\nidentity = \"ied-1\"\naddress = \"127.0.0.1\"\npsk_hex = \"{PSK}\"\ngroups = [\"goose-1\"]\n",
            dir.join("state.toml").display()
        ),
    )
    .unwrap();
    let mut c = Command::new(GANDER)
        .args(["kdc", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(c.stdout.take().unwrap());
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    std::thread::spawn(move || for _ in r.lines().map_while(Result::ok) {});
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    (Kdc(c), v["addr"].as_str().unwrap().to_string())
}

/// A UDP port nothing answers on.
fn silent() -> String {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let a = s.local_addr().unwrap().to_string();
    // Kept open and never read: datagrams vanish, no ICMP error.
    std::mem::forget(s);
    a
}

fn member_args<'a>(servers: &'a [&'a str]) -> Vec<&'a str> {
    let mut v = Vec::new();
    for s in servers {
        v.extend(["--server", s]);
    }
    v.extend([
        "--group",
        "goose-1",
        "--identity",
        "ied-1",
        "--psk-hex",
        PSK,
        "--bind",
        "127.0.0.1:0",
        "--timeout",
        "0.2",
    ]);
    v
}

#[test]
fn register_follow_fails_over_and_prints_the_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_kdc, addr) = start_kdc(dir.path());
    let dead = silent();
    let o = Command::new(GANDER)
        .args(["gdoi", "register"])
        .args(member_args(&[&dead, &addr]))
        .args(["--follow", "1", "--json"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "each key once: {out}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["group"], "goose-1");
    assert_eq!(v["integrity_key_hex"].as_str().unwrap().len(), 64);
    assert!(err.contains("\"event\":\"failover\""), "{err}");
    assert!(err.contains("\"registration_failures\":1"), "{err}");

    let o = Command::new(GANDER)
        .args(["gdoi", "register"])
        .args(member_args(&[&dead]))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn frame_protect_and_verify_with_the_groups_key() {
    let dir = tempfile::tempdir().unwrap();
    let (_kdc, addr) = start_kdc(dir.path());
    let input = dir.path().join("in.pcap");
    let mut w = PcapWriter::new(std::fs::File::create(&input).unwrap()).unwrap();
    let f = gander_testkit::frames::goose_frame(
        [2, 0, 0, 0, 0, 1],
        [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
        None,
        1,
        1,
        1,
    );
    w.write_packet(&PcapPacket::new(
        Duration::from_secs(1_790_000_000),
        f.len() as u32,
        &f,
    ))
    .unwrap();
    drop(w);
    let out = dir.path().join("out.pcap");
    let kdc = |sub: &str| {
        let mut c = Command::new(GANDER);
        c.args(["frame", sub]);
        c.args([
            "--kdc",
            &addr,
            "--group",
            "goose-1",
            "--identity",
            "ied-1",
            "--psk-hex",
            PSK,
            "--bind",
            "127.0.0.1:0",
            "--kdc-timeout",
            "0.3",
        ]);
        c
    };
    let o = kdc("protect").arg(&input).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = kdc("verify")
        .arg(&out)
        .args(["--json", "--require-security"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("verified"), "{text}");
    // Another key under the same id does not verify it.
    let state = std::fs::read_to_string(dir.path().join("state.toml")).unwrap();
    let id: u32 = state
        .lines()
        .find_map(|l| l.trim().strip_prefix("key_id = "))
        .and_then(|v| v.trim().parse().ok())
        .expect("the state names the key id");
    std::fs::write(
        dir.path().join("other.toml"),
        format!(
            "[[key]]\nid = {id}\nmac = \"hmac-sha256-128\"\nkey = \"{}\"\n",
            "ab".repeat(32)
        ),
    )
    .unwrap();
    let o = Command::new(GANDER)
        .args(["frame", "verify", "--keys"])
        .arg(dir.path().join("other.toml"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
}
