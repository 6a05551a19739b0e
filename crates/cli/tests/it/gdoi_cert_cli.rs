//! `gander kdc` with certificates and `gander gdoi register --cert --key --ca` as processes on
//! loopback UDP, with an ECDSA P-256 PKI made by the `openssl` command as an operator would:
//! the authorised member gets the key and its subject appears in the key server's events; a
//! certificate of the same CA that the policy does not name gets no key and a refusal event
//! with INVALID-ID-INFORMATION (18); `--keylog` writes a 0600 file with the warning and one
//! line per phase-1 SA, the same line on both sides.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

const GANDER: &str = env!("CARGO_BIN_EXE_gander");

struct Kdc(Child);
impl Drop for Kdc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pki(dir: &Path) {
    let script = r#"set -e
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
  -subj "/O=gander test/CN=CA" -days 2 -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign"
printf "keyUsage=critical,digitalSignature\n" > ee.ext
for n in kdc ied-1 ied-2; do
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $n.key -out $n.csr \
    -subj "/O=gander test/CN=$n"
  openssl x509 -req -in $n.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $n.pem -days 1 \
    -extfile ee.ext
done
"#;
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .expect("openssl command");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn register(dir: &Path, addr: &str, who: &str, keylog: Option<&Path>) -> (bool, String) {
    let mut c = Command::new(GANDER);
    c.args(["gdoi", "register", "--server", addr, "--group", "goose-1"])
        .arg("--cert")
        .arg(dir.join(format!("{who}.pem")))
        .arg("--key")
        .arg(dir.join(format!("{who}.key")))
        .arg("--ca")
        .arg(dir.join("ca.pem"))
        .args(["--server-name", "O=gander test,CN=kdc"])
        .args(["--bind", "127.0.0.1:0", "--timeout", "0.3"]);
    if let Some(k) = keylog {
        c.arg("--keylog").arg(k);
    }
    let o = c.output().unwrap();
    (
        o.status.success(),
        format!(
            "{}{:?} {}",
            String::from_utf8_lossy(&o.stdout),
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

#[test]
fn kdc_and_member_with_certificates_and_key_logs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let config = d.join("kdc.toml");
    std::fs::write(
        &config,
        format!(
            r#"listen = "127.0.0.1:0"
events = "json"
state = {:?}
cert = {:?}
key = {:?}
ca = {:?}
[[group]]
id = "goose-1"
protocol = "goose"
dst_mac = "01:0c:cd:01:00:01"
appid = 1
mac = 2
enc = 0
lifetime_s = 3600
[[member]]
identity = "ied-1"
subject = "O=gander test, CN=ied-1"
groups = ["goose-1"]
"#,
            d.join("state.toml"),
            d.join("kdc.pem"),
            d.join("kdc.key"),
            d.join("ca.pem"),
        ),
    )
    .unwrap();
    let kdc_log = d.join("kdc.keylog");
    let mut c = Command::new(GANDER)
        .args(["kdc", "--config"])
        .arg(&config)
        .arg("--keylog")
        .arg(&kdc_log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(c.stdout.take().unwrap());
    let mut err = String::new();
    BufReader::new(c.stderr.take().unwrap())
        .read_line(&mut err)
        .unwrap();
    assert!(err.contains("never in production"), "{err}");
    let kdc = Kdc(c);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let addr = serde_json::from_str::<serde_json::Value>(&line).unwrap()["addr"]
        .as_str()
        .unwrap()
        .to_string();
    let events = Arc::new(Mutex::new(Vec::<serde_json::Value>::new()));
    let ev = events.clone();
    std::thread::spawn(move || {
        for l in r.lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&l) {
                ev.lock().unwrap().push(v);
            }
        }
    });

    let member_log = d.join("member.keylog");
    let (ok, out) = register(d, &addr, "ied-1", Some(&member_log));
    assert!(ok, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).expect(&out);
    assert_eq!(v["group"], "goose-1");
    assert_eq!(v["integrity_key_hex"].as_str().unwrap().len(), 64);
    assert!(out.contains("never in production"), "{out}");

    let (ok, out) = register(d, &addr, "ied-2", None);
    assert!(!ok, "an unauthorised certificate got a key: {out}");
    // The member names the key server's notification (`gander_gdoi::notify`), not a timeout.
    assert!(
        out.contains("refused by the key server: INVALID-ID-INFORMATION (18)"),
        "{out}"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let ev = events.lock().unwrap().clone();
    assert!(
        ev.iter()
            .any(|e| e["event"] == "registered" && e["identity"] == "O=gander test,CN=ied-1"),
        "{ev:?}"
    );
    assert!(
        ev.iter().any(|e| e["event"] == "refused"
            && e["notify"] == "INVALID-ID-INFORMATION"
            && e["notifyType"] == "18"),
        "{ev:?}"
    );
    drop(kdc);

    let read = |p: &Path| {
        assert_eq!(
            std::fs::metadata(p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let t = std::fs::read_to_string(p).unwrap();
        assert!(t.starts_with("# gander IKEv1 key log"), "{t}");
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (k, m) = (read(&kdc_log), read(&member_log));
    assert_eq!(k.len(), 1, "one phase-1 SA completed: {k:?}");
    assert_eq!(k, m);
    let (cookie, key) = k[0].split_once(',').unwrap();
    assert_eq!(cookie.len(), 16);
    assert!(key.len() == 32 || key.len() == 64, "{key}");
}
