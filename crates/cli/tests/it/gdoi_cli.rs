//! `gander kdc` and `gander gdoi register` as processes on loopback UDP: the member prints the
//! group key as one JSON line and exits 0; the state file is mode 0600 and a restarted key
//! server hands out the same Key ID and key (never a reused Key ID with another key); a member
//! with the wrong key exits non-zero.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};

const GANDER: &str = env!("CARGO_BIN_EXE_gander");
const PSK: &str = "000102030405060708090a0b0c0d0e0f";

struct Kdc(Child);
impl Drop for Kdc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(config: &std::path::Path) -> (Kdc, String) {
    let mut c = Command::new(GANDER)
        .args(["kdc", "--config"])
        .arg(config)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(c.stdout.take().unwrap());
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    // Keep reading its event lines: a closed pipe would end the key server (exit 141).
    std::thread::spawn(move || {
        for l in r.lines().map_while(Result::ok) {
            eprintln!("kdc: {l}");
        }
    });
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    (Kdc(c), v["addr"].as_str().unwrap().to_string())
}

fn register(addr: &str, psk: &str) -> (bool, String) {
    let o = Command::new(GANDER)
        .args([
            "gdoi",
            "register",
            "--server",
            addr,
            "--group",
            "goose-1",
            "--identity",
            "ied-1",
        ])
        .args([
            "--psk-hex",
            psk,
            "--bind",
            "127.0.0.1:0",
            "--timeout",
            "0.3",
        ])
        .output()
        .unwrap();
    let why = format!("{:?} {}", o.status, String::from_utf8_lossy(&o.stderr));
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned() + &why,
    )
}

#[test]
fn kdc_and_member_processes() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.toml");
    let config = dir.path().join("kdc.toml");
    std::fs::write(
        &config,
        format!(
            r#"listen = "127.0.0.1:0"
state = "{}"
events = "json"
[[group]]
id = "goose-1"
protocol = "goose"
dst_mac = "01:0c:cd:01:00:01"
appid = 1
mac = 2
enc = 0
lifetime_s = 3600
overlap_s = 60
[[member]]
identity = "ied-1"
address = "127.0.0.1"
psk_hex = "{PSK}"
groups = ["goose-1"]
"#,
            state.display()
        ),
    )
    .unwrap();
    let (kdc, addr) = start(&config);
    let (ok, out) = register(&addr, PSK);
    assert!(ok, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).expect(&out);
    assert_eq!(v["group"], "goose-1");
    assert_eq!(v["oid"], "1.2.840.10070.61850.8.1.1");
    assert_eq!(v["traffic"]["dst_mac"], "01:0c:cd:01:00:01");
    assert_eq!(v["mac_algorithm"], 2);
    assert_eq!(v["integrity_key_hex"].as_str().unwrap().len(), 64);
    assert_eq!(
        std::fs::metadata(&state).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let (bad, _) = register(&addr, "ffffffffffffffffffffffffffffffff");
    assert!(!bad, "a wrong pre-shared key got a key");
    drop(kdc);
    let (_kdc, addr) = start(&config);
    let (ok, again) = register(&addr, PSK);
    assert!(ok);
    let w: serde_json::Value = serde_json::from_str(again.lines().next().unwrap()).unwrap();
    assert_eq!(
        (&w["key_id"], &w["integrity_key_hex"]),
        (&v["key_id"], &v["integrity_key_hex"])
    );
}
