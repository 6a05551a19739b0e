//! What the interop tests against strongSwan need around the peer: a pair of network
//! namespaces joined by a veth (strongSwan's side 10.79.0.1, gander's 10.79.0.2), a charon
//! daemon of its own in the first (configuration, vici socket and log in a directory of the
//! test; its fixed pid file `/var/run/charon.pid` on a tmpfs private to the daemon's mount
//! namespace, so tests and other charons never collide), `swanctl` to load connections and
//! read SAs, and a capture of the veth that tshark then dissects.
//!
//! The tests decide one way (`gander_testkit::netns`): namespaces available or a failure
//! that says why; strongSwan absent (no `/usr/lib/ipsec/charon` or `swanctl`, installed by
//! `scripts/setup.sh`) is the one reason they skip, with a message.
#![allow(dead_code, unreachable_pub)]

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// charon, as Debian's strongswan-charon installs it.
pub const CHARON: &str = "/usr/lib/ipsec/charon";

/// strongSwan's address in its namespace.
pub const PEER: Ipv4Addr = Ipv4Addr::new(10, 79, 0, 1);
/// gander's address in its namespace.
pub const GANDER: Ipv4Addr = Ipv4Addr::new(10, 79, 0, 2);

/// Whether the test can run: namespaces (fails with the reason otherwise, unless
/// `GANDER_SKIP_NETNS=1`) and strongSwan (skips with a message when it is not installed).
pub fn available(test: &str) -> bool {
    if !gander_testkit::netns::available(test) {
        return false;
    }
    // `swanctl --version` asks the daemon; look for the program instead.
    let swanctl = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("swanctl").is_file()));
    if !Path::new(CHARON).exists() || !swanctl {
        eprintln!(
            "{test}: skipped: strongSwan is not installed ({CHARON} and swanctl; \
             scripts/setup.sh installs strongswan-charon, strongswan-swanctl and \
             libstrongswan-standard-plugins)"
        );
        return false;
    }
    true
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Two namespaces `<p>s` (strongSwan) and `<p>g` (gander) on one veth pair; removed on drop.
pub struct Pair {
    /// strongSwan's namespace.
    pub peer_ns: String,
    /// gander's namespace.
    pub gander_ns: String,
    /// The veth end in gander's namespace (captures are taken there).
    pub gander_if: String,
}

impl Pair {
    /// Sets the pair up.
    ///
    /// # Panics
    /// If `ip` cannot (the caller checked [`available`] first).
    pub fn up(tag: &str) -> Pair {
        let p = format!("gx{}{tag}", std::process::id() % 100_000);
        let pair = Pair {
            peer_ns: format!("{p}s"),
            gander_ns: format!("{p}g"),
            gander_if: format!("{p}b"),
        };
        let _ = ip(&["netns", "del", &pair.peer_ns]);
        let _ = ip(&["netns", "del", &pair.gander_ns]);
        let va = format!("{p}a");
        let (pa, ga) = (format!("{PEER}/24"), format!("{GANDER}/24"));
        let ok = ip(&["netns", "add", &pair.peer_ns])
            && ip(&["netns", "add", &pair.gander_ns])
            && ip(&[
                "link",
                "add",
                &va,
                "type",
                "veth",
                "peer",
                "name",
                &pair.gander_if,
            ])
            && ip(&["link", "set", &va, "netns", &pair.peer_ns])
            && ip(&["link", "set", &pair.gander_if, "netns", &pair.gander_ns])
            && ip(&["-n", &pair.peer_ns, "addr", "add", &pa, "dev", &va])
            && ip(&[
                "-n",
                &pair.gander_ns,
                "addr",
                "add",
                &ga,
                "dev",
                &pair.gander_if,
            ])
            && ip(&["-n", &pair.peer_ns, "link", "set", &va, "up"])
            && ip(&["-n", &pair.gander_ns, "link", "set", &pair.gander_if, "up"])
            && ip(&["-n", &pair.peer_ns, "link", "set", "lo", "up"])
            && ip(&["-n", &pair.gander_ns, "link", "set", "lo", "up"]);
        assert!(ok, "cannot set up the namespace pair {p}");
        pair
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.peer_ns]);
        let _ = ip(&["netns", "del", &self.gander_ns]);
    }
}

/// A directory of the test's own under the temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// Makes `gander-swan-<pid>-<tag>`.
    pub fn new(tag: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("gander-swan-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("GANDER_KEEP_INTEROP").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The plugins charon loads: only what IKEv1 main mode with PSK, RSA and ECDSA, AES-CBC,
/// SHA-2, MODP and ECP groups, X.509 and the kernel interface need (the openssl plugin does
/// the ECP groups and ECDSA), so the machine's own strongSwan configuration plays no part.
const PLUGINS: &str = "random nonce openssl pem pkcs1 pkcs8 x509 pubkey constraints \
                       revocation sha1 sha2 hmac aes gmp kernel-netlink socket-default vici";

/// A charon daemon in the peer's namespace, stopped on drop.
pub struct Charon {
    child: Child,
    dir: PathBuf,
}

impl Charon {
    /// Starts charon in `ns` with its files in `dir`, IKE on UDP 500; waits for its vici
    /// socket.
    ///
    /// # Panics
    /// If charon does not come up within 10 s (its log is in the message).
    pub fn start(ns: &str, dir: &Path) -> Charon {
        let conf = dir.join("strongswan.conf");
        std::fs::write(
            &conf,
            format!(
                "charon {{\n  port = 500\n  port_nat_t = 4500\n  install_routes = no\n  \
                 load_modular = no\n  load = {PLUGINS}\n  retransmit_tries = 2\n  \
                 retransmit_timeout = 1.0\n  \
                 plugins {{ vici {{ socket = unix://{vici} }} }}\n  \
                 filelog {{ log {{ path = {log}\n    default = 1\n    ike = 2\n    cfg = 2\n    \
                 flush_line = yes }} }}\n}}\n",
                vici = dir.join("charon.vici").display(),
                log = dir.join("charon.log").display(),
            ),
        )
        .unwrap();
        // `ip netns exec` runs the command in a mount namespace of its own; the tmpfs on
        // /run stays there and takes charon's fixed pid file.
        let child = Command::new("ip")
            .args(["netns", "exec", ns, "sh", "-c"])
            .arg(format!("mount -t tmpfs tmpfs /run && exec {CHARON}"))
            .env("STRONGSWAN_CONF", &conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("charon.stderr")).unwrap())
            .spawn()
            .expect("charon starts");
        let c = Charon {
            child,
            dir: dir.to_path_buf(),
        };
        let end = Instant::now() + Duration::from_secs(10);
        while !c.dir.join("charon.vici").exists() {
            assert!(
                Instant::now() < end,
                "charon did not come up: {}{}",
                std::fs::read_to_string(dir.join("charon.stderr")).unwrap_or_default(),
                c.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        c
    }

    fn swanctl(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new("swanctl")
            .args(args)
            .arg("--uri")
            .arg(format!("unix://{}", self.dir.join("charon.vici").display()))
            .output()
            .expect("swanctl runs");
        let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
        s.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.success(), s)
    }

    /// Loads `swanctl_conf` (connections and secrets; relative certificate and key names
    /// are taken from the `x509`, `x509ca` and `private` directories beside it).
    ///
    /// # Panics
    /// If swanctl refuses it.
    pub fn load(&self, swanctl_conf: &str) {
        let f = self.dir.join("swanctl.conf");
        std::fs::write(&f, swanctl_conf).unwrap();
        let (ok, out) = self.swanctl(&["--load-all", "--noprompt", "--file", &f.to_string_lossy()]);
        assert!(ok, "swanctl --load-all: {out}");
    }

    /// `swanctl --list-sas`: one block per IKE SA, with its state and algorithms.
    pub fn list_sas(&self) -> String {
        self.swanctl(&["--list-sas"]).1
    }

    /// Waits until `--list-sas` shows an ESTABLISHED IKEv1 SA with `remote` as peer; returns
    /// the listing.
    pub fn wait_established(&self, remote: &str, within: Duration) -> Option<String> {
        let end = Instant::now() + within;
        loop {
            let s = self.list_sas();
            if s.contains("ESTABLISHED, IKEv1") && s.contains(remote) {
                return Some(s);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Deletes every IKE SA of connection `ike` (so the next exchange starts afresh).
    pub fn terminate(&self, ike: &str) {
        let _ = self.swanctl(&["--terminate", "--ike", ike, "--force", "--timeout", "2"]);
    }

    /// `swanctl --initiate --child CHILD` (which first brings up the IKE SA), bounded.
    pub fn initiate(&self, child: &str, timeout_s: u32) -> (bool, String) {
        self.swanctl(&[
            "--initiate",
            "--child",
            child,
            "--timeout",
            &timeout_s.to_string(),
        ])
    }

    /// charon's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("charon.log")).unwrap_or_default()
    }

    /// The directory charon's `swanctl.conf` lives in (`x509/`, `x509ca/`, `private/`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Charon {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let end = Instant::now() + Duration::from_secs(3);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A capture of one interface in a namespace by dumpcap, stopped with SIGINT so the file is
/// complete.
pub struct Capture {
    child: Child,
    /// The pcapng file.
    pub path: PathBuf,
}

impl Capture {
    /// Starts capturing UDP on `iface` in `ns`; returns once dumpcap is capturing.
    ///
    /// # Panics
    /// If dumpcap does not start within 10 s.
    pub fn start(ns: &str, iface: &str, path: &Path) -> Capture {
        let err = path.with_extension("stderr");
        let child = Command::new("ip")
            .args([
                "netns", "exec", ns, "dumpcap", "-q", "-i", iface, "-f", "udp", "-w",
            ])
            .arg(path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("dumpcap starts");
        let end = Instant::now() + Duration::from_secs(10);
        // dumpcap writes the pcapng section header once the capture is open.
        while std::fs::metadata(path).map_or(true, |m| m.len() == 0) {
            assert!(
                Instant::now() < end,
                "dumpcap did not start: {}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Capture {
            child,
            path: path.to_path_buf(),
        }
    }

    /// Stops the capture (the last packets flushed).
    pub fn stop(mut self) -> PathBuf {
        // Let the last datagrams reach the ring before stopping.
        std::thread::sleep(Duration::from_millis(300));
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGINT,
            );
        }
        let _ = self.child.wait();
        self.path.clone()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// tshark's reading of a capture: UDP 848 decoded as ISAKMP (GDOI's port; 500 is
/// tshark's default), the IKEv1 decryption table from `keylog` lines if given.
pub fn tshark(pcap: &Path, keylog: Option<&Path>, extra: &[&str]) -> String {
    let mut c = Command::new("tshark");
    c.arg("-r").arg(pcap).args(["-d", "udp.port==848,isakmp"]);
    if let Some(k) = keylog {
        let lines = std::fs::read_to_string(k).unwrap();
        for l in lines
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            c.arg("-o").arg(format!("uat:ikev1_decryption_table:{l}"));
        }
    }
    let out = c.args(extra).output().expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Frame numbers of datagrams that repeat an earlier one byte for byte (retransmissions).
///
/// tshark decrypts an encrypted IKEv1 message with the CBC chain left by the message before
/// it, so the retransmission of a phase-2 message (charon's Quick Mode, gander's
/// GROUPKEY-PULL) decrypts to garbage and is shown as malformed although its bytes are the
/// first copy's: those are checked only in the framing pass.
fn repeats(pcap: &Path) -> Vec<String> {
    let out = tshark(
        pcap,
        None,
        &["-T", "fields", "-e", "frame.number", "-e", "udp.payload"],
    );
    let mut seen = std::collections::HashSet::new();
    out.lines()
        .filter_map(|l| {
            let (n, p) = l.split_once('\t')?;
            (!seen.insert(p.to_string())).then(|| n.to_string())
        })
        .collect()
}

/// Checks that tshark finds no malformed packet and no error in the capture, and that it
/// holds ISAKMP; returns one line per ISAKMP datagram as tshark reads it with the key log
/// (source; destination; exchange type; payload types; notification types), for the
/// test's assertions and messages.
///
/// Two passes: without the key log over every datagram (header, payload chain and cleartext
/// payloads; an encrypted body is opaque), and with it over every first copy (retransmissions
/// excluded, [`repeats`]), so the decrypted payloads of both sides are dissected too.
///
/// # Panics
/// If tshark reports a malformed packet or an error-level expert item, or reads no ISAKMP.
pub fn tshark_clean(pcap: &Path, keylog: Option<&Path>) -> Vec<String> {
    let bad_filter = "_ws.malformed || _ws.expert.severity >= \"Error\"";
    let bad = tshark(pcap, None, &["-Y", bad_filter]);
    assert!(
        bad.trim().is_empty(),
        "tshark: malformed or erroneous packets:\n{bad}\n{}",
        tshark(pcap, None, &["-V", "-Y", bad_filter])
    );
    if keylog.is_some() {
        let skip = repeats(pcap);
        let filter = if skip.is_empty() {
            format!("({bad_filter})")
        } else {
            format!(
                "({bad_filter}) && !(frame.number in {{{}}})",
                skip.join(", ")
            )
        };
        let bad = tshark(pcap, keylog, &["-Y", &filter]);
        assert!(
            bad.trim().is_empty(),
            "tshark with the key log: malformed or erroneous packets:\n{bad}\n{}",
            tshark(pcap, keylog, &["-V", "-Y", &filter])
        );
    }
    let lines = tshark(
        pcap,
        keylog,
        &[
            "-Y",
            "isakmp",
            "-T",
            "fields",
            "-E",
            "separator=;",
            "-e",
            "ip.src",
            "-e",
            "ip.dst",
            "-e",
            "isakmp.exchangetype",
            "-e",
            "isakmp.typepayload",
            "-e",
            "isakmp.notify.msgtype",
        ],
    );
    let v: Vec<String> = lines.lines().map(str::to_string).collect();
    assert!(
        !v.is_empty(),
        "tshark reads no ISAKMP in {}",
        pcap.display()
    );
    v
}

/// UDP address of the peer's IKE port.
pub fn peer_ike() -> SocketAddr {
    SocketAddr::from((PEER, 500))
}
