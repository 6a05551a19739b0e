//! Network-namespace lab topology for tests, demos, benchmarks and link emulation.
//!
//! ```text
//!   {p}-ied                {p}-gw                 {p}-net (switch br0)        {p}-sub
//!   ied0 ------------------ gi0   [gateway]   gn0 --- ng0 ┐                ┌ ns0 --- sub0
//!   ied1 ---------------------------------------------- nd0 ┤   br0        │
//!     (direct path, the benchmarks' baseline)               └ na0 --- atk0   ({p}-atk)
//! ```
//!
//! The gateway namespace has no forwarding of its own in `l2` mode (the AF_PACKET driver copies
//! frames between `gi0` and `gn0`), a Linux bridge `br0` over both in `bridge` mode (the NFQUEUE
//! driver, as in the gateway paper), and IPv4 addresses on both sides with forwarding off in
//! `routed` mode (the UDP relay is the only path). Everything is created with `ip` inside
//! namespaces named after the prefix, so several labs can coexist, and nothing leaves the
//! machine. `up` is idempotent; `down` deletes the namespaces, which removes every link.

#![forbid(unsafe_code)]

use std::fmt;
use std::process::Command;

/// A lab failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// A command failed.
    #[error("`{cmd}` failed: {stderr}")]
    Command {
        /// The command line.
        cmd: String,
        /// Its standard error.
        stderr: String,
    },
    /// Not root, or no `ip netns`.
    #[error("{0}")]
    Unavailable(String),
    /// The lab exists in another mode.
    #[error("lab {prefix} exists in {have} mode; run `gander lab down --prefix {prefix}` first")]
    WrongMode {
        /// Prefix.
        prefix: String,
        /// Its mode.
        have: String,
    },
    /// I/O (setns, marker files).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// How the gateway namespace forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No kernel forwarding: the AF_PACKET driver bridges `gi0` and `gn0`.
    L2,
    /// A Linux bridge over `gi0` and `gn0` (the NFQUEUE driver).
    Bridge,
    /// Routed: IPv4 on both sides, forwarding off (the UDP relay).
    Routed,
}

impl Mode {
    /// Name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::L2 => "l2",
            Mode::Bridge => "bridge",
            Mode::Routed => "routed",
        }
    }
}

/// A lab mode name that is not `l2`, `bridge` or `routed`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown lab mode {0:?} (l2, bridge, routed)")]
pub struct UnknownMode(pub String);

impl std::str::FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, UnknownMode> {
        match s {
            "l2" => Ok(Mode::L2),
            "bridge" => Ok(Mode::Bridge),
            "routed" => Ok(Mode::Routed),
            o => Err(UnknownMode(o.to_string())),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A namespace of the lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The legacy IED (publisher).
    Ied,
    /// The gateway.
    Gw,
    /// The network (a switch).
    Net,
    /// A subscriber on the network side.
    Sub,
    /// The attacker position on the network side.
    Atk,
}

impl Role {
    /// All roles.
    pub const ALL: [Role; 5] = [Role::Ied, Role::Gw, Role::Net, Role::Sub, Role::Atk];
    fn suffix(self) -> &'static str {
        match self {
            Role::Ied => "ied",
            Role::Gw => "gw",
            Role::Net => "net",
            Role::Sub => "sub",
            Role::Atk => "atk",
        }
    }
}

/// Fixed addresses of the lab (the same in every lab: each lives in its own namespaces).
pub mod addr {
    /// IED interface towards the gateway.
    pub const IED_MAC: [u8; 6] = [0x02, 0x47, 0x44, 0x00, 0x01, 0x01];
    /// IED interface of the direct path.
    pub const IED_DIRECT_MAC: [u8; 6] = [0x02, 0x47, 0x44, 0x00, 0x01, 0x02];
    /// Gateway, IED side.
    pub const GW_IED_MAC: [u8; 6] = [0x02, 0x47, 0x44, 0x00, 0x04, 0x01];
    /// Gateway, network side.
    pub const GW_NET_MAC: [u8; 6] = [0x02, 0x47, 0x44, 0x00, 0x04, 0x02];
    /// Subscriber.
    pub const SUB_MAC: [u8; 6] = [0x02, 0x47, 0x44, 0x00, 0x02, 0x01];
    /// Attacker.
    pub const ATK_MAC: [u8; 6] = [0x02, 0x47, 0x44, 0x00, 0x03, 0x01];
    /// IED (l2/bridge modes: the shared segment 10.85.0.0/24).
    pub const IED_IP: [u8; 4] = [10, 85, 0, 1];
    /// Subscriber (l2/bridge).
    pub const SUB_IP: [u8; 4] = [10, 85, 0, 2];
    /// Attacker (l2/bridge).
    pub const ATK_IP: [u8; 4] = [10, 85, 0, 66];
    /// IED in routed mode (10.85.1.0/24).
    pub const R_IED_IP: [u8; 4] = [10, 85, 1, 1];
    /// Gateway, IED side, routed mode.
    pub const R_GW_IED_IP: [u8; 4] = [10, 85, 1, 254];
    /// Gateway, network side, routed mode (10.85.2.0/24).
    pub const R_GW_NET_IP: [u8; 4] = [10, 85, 2, 254];
    /// Subscriber, routed mode.
    pub const R_SUB_IP: [u8; 4] = [10, 85, 2, 2];
    /// Attacker, routed mode.
    pub const R_ATK_IP: [u8; 4] = [10, 85, 2, 66];
    /// IED on the direct path (10.86.0.0/24, all modes).
    pub const DIRECT_IED_IP: [u8; 4] = [10, 86, 0, 1];
    /// Subscriber on the direct path.
    pub const DIRECT_SUB_IP: [u8; 4] = [10, 86, 0, 2];
}

fn mac(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn ip4(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

fn run(args: &[&str]) -> Result<String, LabError> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| LabError::Command {
            cmd: args.join(" "),
            stderr: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(LabError::Command {
            cmd: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

fn ok(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this process can build labs: root (or CAP_NET_ADMIN+CAP_SYS_ADMIN) and `ip netns`.
pub fn check_available() -> Result<(), LabError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(LabError::Unavailable(
            "network-namespace labs need root".into(),
        ));
    }
    if !ok(&["ip", "netns", "list"]) {
        return Err(LabError::Unavailable(
            "`ip netns` is not available (install iproute2)".into(),
        ));
    }
    Ok(())
}

/// One lab: five namespaces named `{prefix}-ied`, `-gw`, `-net`, `-sub`, `-atk`.
#[derive(Clone, Debug)]
pub struct Lab {
    /// Namespace name prefix.
    pub prefix: String,
    /// Gateway mode.
    pub mode: Mode,
}

impl Lab {
    /// A lab description (nothing is created yet).
    pub fn new(prefix: &str, mode: Mode) -> Self {
        Lab {
            prefix: prefix.to_string(),
            mode,
        }
    }

    /// The namespace of `role`.
    pub fn ns(&self, role: Role) -> String {
        format!("{}-{}", self.prefix, role.suffix())
    }

    fn marker(&self) -> std::path::PathBuf {
        std::path::Path::new("/run/gander-lab").join(format!("{}.mode", self.prefix))
    }

    /// The mode of an existing lab with this prefix.
    pub fn existing_mode(prefix: &str) -> Option<Mode> {
        let m = std::fs::read_to_string(format!("/run/gander-lab/{prefix}.mode")).ok()?;
        m.trim().parse().ok()
    }

    fn ns_exists(name: &str) -> bool {
        std::path::Path::new("/run/netns").join(name).exists()
    }

    fn link_exists(ns: &str, dev: &str) -> bool {
        ok(&["ip", "-n", ns, "link", "show", "dev", dev])
    }

    fn ipn(&self, role: Role, args: &[&str]) -> Result<String, LabError> {
        let ns = self.ns(role);
        let mut v = vec!["ip", "-n", ns.as_str()];
        v.extend_from_slice(args);
        run(&v)
    }

    fn exec(&self, role: Role, args: &[&str]) -> Result<String, LabError> {
        let ns = self.ns(role);
        let mut v = vec!["ip", "netns", "exec", ns.as_str()];
        v.extend_from_slice(args);
        run(&v)
    }

    fn sysctl(&self, role: Role, key: &str, value: &str) -> Result<(), LabError> {
        self.exec(role, &["sysctl", "-qw", &format!("{key}={value}")])
            .map(|_| ())
    }

    /// A veth pair between two namespaces (skipped if it exists).
    fn veth(
        &self,
        a: Role,
        a_dev: &str,
        a_mac: Option<[u8; 6]>,
        b: Role,
        b_dev: &str,
    ) -> Result<(), LabError> {
        let (na, nb) = (self.ns(a), self.ns(b));
        if Self::link_exists(&na, a_dev) {
            return Ok(());
        }
        let mut args = vec!["ip", "link", "add", "name", a_dev, "netns", &na];
        let m = a_mac.map(mac);
        if let Some(m) = &m {
            args.extend_from_slice(&["address", m]);
        }
        args.extend_from_slice(&["type", "veth", "peer", "name", b_dev, "netns", &nb]);
        run(&args)?;
        Ok(())
    }

    fn set_mac(&self, role: Role, dev: &str, m: [u8; 6]) -> Result<(), LabError> {
        self.ipn(role, &["link", "set", "dev", dev, "address", &mac(m)])
            .map(|_| ())
    }

    fn up_dev(&self, role: Role, dev: &str) -> Result<(), LabError> {
        // Checksum and segmentation offloads off: frames copied between interfaces by a raw
        // socket must be complete (real checksums, no 64 KiB super-frames).
        let _ = self.offloads(role, dev, false);
        self.ipn(role, &["link", "set", "dev", dev, "up"])
            .map(|_| ())
    }

    fn offloads(&self, role: Role, dev: &str, on: bool) -> Result<String, LabError> {
        let v = if on { "on" } else { "off" };
        self.exec(
            role,
            &[
                "ethtool", "-K", dev, "tx", v, "rx", v, "tso", v, "gso", v, "gro", v,
            ],
        )
    }

    /// Checksum and segmentation offloads (`tx`, `rx`, `tso`, `gso`, `gro`) on or off on every
    /// interface of every namespace of the lab, both paths alike. The lab keeps them off (so
    /// frames a raw socket copies are complete); on is what a NIC has, for measuring traffic
    /// that gander does not copy (`bypass = "tc"`).
    pub fn set_offloads(&self, on: bool) -> Result<(), LabError> {
        for role in Role::ALL {
            let links = self.ipn(role, &["-o", "link", "show"])?;
            for dev in links.lines().filter_map(|l| {
                let name = l.split(": ").nth(1)?;
                Some(name.split('@').next().unwrap_or(name).to_string())
            }) {
                if dev != "lo" {
                    self.offloads(role, &dev, on)?;
                }
            }
        }
        Ok(())
    }

    fn addr(&self, role: Role, dev: &str, a: [u8; 4], plen: u8) -> Result<(), LabError> {
        let cidr = format!("{}/{plen}", ip4(a));
        let shown = self.ipn(role, &["-4", "addr", "show", "dev", dev])?;
        if !shown.contains(&format!("inet {cidr}")) {
            self.ipn(role, &["addr", "add", &cidr, "dev", dev])?;
        }
        Ok(())
    }

    fn bridge(&self, role: Role, ports: &[&str]) -> Result<(), LabError> {
        let ns = self.ns(role);
        if !Self::link_exists(&ns, "br0") {
            self.ipn(
                role,
                &[
                    "link",
                    "add",
                    "br0",
                    "type",
                    "bridge",
                    "stp_state",
                    "0",
                    "forward_delay",
                    "0",
                    "mcast_snooping",
                    "0",
                ],
            )?;
        }
        for p in ports {
            self.ipn(role, &["link", "set", "dev", p, "master", "br0"])?;
        }
        self.up_dev(role, "br0")
    }

    /// Creates the lab (idempotent: every step checks first).
    pub fn up(&self) -> Result<(), LabError> {
        check_available()?;
        if let Some(have) = Self::existing_mode(&self.prefix) {
            if have != self.mode && Self::ns_exists(&self.ns(Role::Gw)) {
                return Err(LabError::WrongMode {
                    prefix: self.prefix.clone(),
                    have: have.to_string(),
                });
            }
        }
        std::fs::create_dir_all("/run/gander-lab")?;
        std::fs::write(self.marker(), self.mode.name())?;
        for r in Role::ALL {
            let n = self.ns(r);
            if !Self::ns_exists(&n) {
                run(&["ip", "netns", "add", &n])?;
            }
            self.ipn(r, &["link", "set", "dev", "lo", "up"])?;
            let _ = self.sysctl(r, "net.ipv6.conf.all.disable_ipv6", "1");
            let _ = self.sysctl(r, "net.ipv6.conf.default.disable_ipv6", "1");
            let _ = self.sysctl(r, "net.ipv4.ip_forward", "0");
        }
        use addr::*;
        self.veth(Role::Ied, "ied0", Some(IED_MAC), Role::Gw, "gi0")?;
        self.veth(Role::Ied, "ied1", Some(IED_DIRECT_MAC), Role::Net, "nd0")?;
        self.veth(Role::Gw, "gn0", Some(GW_NET_MAC), Role::Net, "ng0")?;
        self.veth(Role::Sub, "sub0", Some(SUB_MAC), Role::Net, "ns0")?;
        self.veth(Role::Atk, "atk0", Some(ATK_MAC), Role::Net, "na0")?;
        self.set_mac(Role::Gw, "gi0", GW_IED_MAC)?;
        for (r, d) in [
            (Role::Ied, "ied0"),
            (Role::Ied, "ied1"),
            (Role::Gw, "gi0"),
            (Role::Gw, "gn0"),
            (Role::Net, "ng0"),
            (Role::Net, "nd0"),
            (Role::Net, "ns0"),
            (Role::Net, "na0"),
            (Role::Sub, "sub0"),
            (Role::Atk, "atk0"),
        ] {
            self.up_dev(r, d)?;
        }
        self.bridge(Role::Net, &["ng0", "nd0", "ns0", "na0"])?;
        // The switch must not filter: with br_netfilter built in, bridged IPv4 would otherwise
        // be validated (bad headers dropped) before it reaches the gateway under test.
        for t in ["iptables", "ip6tables", "arptables"] {
            let _ = self.sysctl(Role::Net, &format!("net.bridge.bridge-nf-call-{t}"), "0");
        }
        self.addr(Role::Ied, "ied1", DIRECT_IED_IP, 24)?;
        self.addr(Role::Sub, "sub0", DIRECT_SUB_IP, 24)?;
        match self.mode {
            Mode::L2 | Mode::Bridge => {
                self.addr(Role::Ied, "ied0", IED_IP, 24)?;
                self.addr(Role::Sub, "sub0", SUB_IP, 24)?;
                self.addr(Role::Atk, "atk0", ATK_IP, 24)?;
                if self.mode == Mode::Bridge {
                    self.bridge(Role::Gw, &["gi0", "gn0"])?;
                }
            }
            Mode::Routed => {
                self.addr(Role::Ied, "ied0", R_IED_IP, 24)?;
                self.addr(Role::Gw, "gi0", R_GW_IED_IP, 24)?;
                self.addr(Role::Gw, "gn0", R_GW_NET_IP, 24)?;
                self.addr(Role::Sub, "sub0", R_SUB_IP, 24)?;
                self.addr(Role::Atk, "atk0", R_ATK_IP, 24)?;
                for (r, gw) in [
                    (Role::Ied, R_GW_IED_IP),
                    (Role::Sub, R_GW_NET_IP),
                    (Role::Atk, R_GW_NET_IP),
                ] {
                    self.ipn(r, &["route", "replace", "default", "via", &ip4(gw)])?;
                }
            }
        }
        Ok(())
    }

    /// Deletes the namespaces (and so every link) and the mode marker. Idempotent.
    pub fn down(&self) -> Result<(), LabError> {
        Self::down_prefix(&self.prefix)
    }

    /// [`Lab::down`] for a prefix without knowing its mode.
    pub fn down_prefix(prefix: &str) -> Result<(), LabError> {
        let mut first = None;
        for r in Role::ALL {
            let n = format!("{prefix}-{}", r.suffix());
            if Self::ns_exists(&n) {
                if let Err(e) = run(&["ip", "netns", "del", &n]) {
                    first.get_or_insert(e);
                }
            }
        }
        let _ = std::fs::remove_file(format!("/run/gander-lab/{prefix}.mode"));
        first.map_or(Ok(()), Err)
    }

    /// Whether every namespace exists.
    pub fn is_up(&self) -> bool {
        Role::ALL.iter().all(|r| Self::ns_exists(&self.ns(*r)))
    }

    /// Runs a command inside a namespace of the lab and returns its stdout.
    pub fn exec_in(&self, role: Role, args: &[&str]) -> Result<String, LabError> {
        self.exec(role, args)
    }
}

/// Moves the calling thread into the network namespace `/run/netns/{name}`. Sockets opened
/// afterwards by this thread live there; other threads are unaffected.
pub fn enter(name: &str) -> std::io::Result<()> {
    let f = std::fs::File::open(std::path::Path::new("/run/netns").join(name))?;
    nix::sched::setns(&f, nix::sched::CloneFlags::CLONE_NEWNET)
        .map_err(|e| std::io::Error::from_raw_os_error(e as i32))
}

/// Runs `f` on a new thread inside namespace `name` and returns its result.
pub fn in_ns<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<T> {
    let name = name.to_string();
    std::thread::spawn(move || {
        enter(&name)?;
        Ok(f())
    })
    .join()
    .map_err(|_| std::io::Error::other("namespace thread panicked"))?
}

/// A lab that is taken down when dropped (tests: cleanup even on failure).
#[derive(Debug)]
pub struct LabGuard(pub Lab);

impl LabGuard {
    /// Creates a lab with a prefix unique to this process and `tag`.
    pub fn up(tag: &str, mode: Mode) -> Result<Self, LabError> {
        let prefix = format!("g{}{}", std::process::id() % 100000, tag);
        let lab = Lab::new(&prefix, mode);
        let _ = lab.down();
        let g = LabGuard(lab);
        g.0.up()?;
        Ok(g)
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        let _ = self.0.down();
    }
}

impl std::ops::Deref for LabGuard {
    type Target = Lab;
    fn deref(&self) -> &Lab {
        &self.0
    }
}
