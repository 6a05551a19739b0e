//! `gander bench fleet`: one sweep of a substation (`gander probe --scd`, docs/probe.md
//! "Fleet") timed against issue #22's target: 100 IEDs, plain and TLS, swept in under 2
//! minutes on 2 vCPUs with the gentle per-IED defaults, memory growing linearly and small.
//!
//! The substation is built on this machine only: a hub namespace with a Linux bridge (the
//! station bus) and one namespace per IED on a veth into it, each running `gander mms server`
//! of its IED from an SCD written for the benchmark ([`crate::fleet_scd`]); a share of them
//! serve MMS over TLS on 3782 with a lab PKI (`gander pki init`), the rest plain MMS on 102.
//! The sweep runs from the hub's namespace as the user would run it, a `gander probe --scd`
//! process with its defaults (8 devices at once, one session per IED, the quick probe, the TLS
//! survey's quick mode and the paced, capped TLS scan on every TLS port).
//!
//! Measured per sweep: its wall time; each IED's time (`duration_ms` of its row: p50, p99);
//! the prober's peak RSS (`ru_maxrss` of the process, from `wait4`). The smaller size (half
//! the IEDs) gives the memory slope: (RSS(N) - RSS(N/2)) / (N - N/2) per IED, with the
//! intercept, so "linear and small" is a number. Nothing leaves the namespaces it creates,
//! and they are removed at the end (also on an error).
use crate::fleet_scd;
use gander_measure::stats::Summary;
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// The sweep-time target of issue #22, s.
pub const TARGET_S: f64 = 120.0;

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetBenchError {
    /// Not root, or no `ip netns`.
    #[error(transparent)]
    Lab(#[from] gander_lab::LabError),
    /// An option out of range.
    #[error("{what}: {detail}")]
    InvalidOption {
        /// The option.
        what: &'static str,
        /// Its range.
        detail: String,
    },
    /// A command of the set-up failed.
    #[error("`{cmd}` failed: {detail}")]
    Command {
        /// The command line.
        cmd: String,
        /// Its standard error or the system's message.
        detail: String,
    },
    /// A file of the set-up.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A server did not say READY.
    #[error("the server of {ied} did not start: {detail}")]
    Server {
        /// The IED.
        ied: String,
        /// Its first line or the error.
        detail: String,
    },
    /// The sweep's report is missing or not a fleet report.
    #[error("the sweep's report {path}: {detail}")]
    Report {
        /// `fleet.json`.
        path: String,
        /// What is wrong.
        detail: String,
    },
}

/// How the benchmark runs.
#[derive(Debug, Clone)]
pub struct FleetBenchOptions {
    /// IEDs of the full size (the smaller size is half of it).
    pub ieds: usize,
    /// Share of IEDs served over TLS, 0 to 1.
    pub tls_share: f64,
    /// Sweeps per size.
    pub runs: usize,
    /// The `gander` binary the servers and the sweep run.
    pub gander: PathBuf,
    /// Namespace prefix (at most 6 characters, so interface names stay within 15).
    pub prefix: String,
}

/// One sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRun {
    /// IEDs in the SCD.
    pub ieds: usize,
    /// Of them, served over TLS.
    pub tls_ieds: usize,
    /// 1-based run number at this size.
    pub run: usize,
    /// Wall time of the sweep process, s.
    pub sweep_s: f64,
    /// Per IED (its row's `duration_ms`), ms.
    pub per_ied_ms: Summary,
    /// Peak RSS of the sweep process, KiB.
    pub peak_rss_kib: u64,
    /// `peak_rss_kib / ieds`.
    pub rss_per_ied_kib: f64,
    /// Rows in the report.
    pub rows: usize,
    /// Rows complete.
    pub complete: usize,
    /// TLS rows with a scan.
    pub scanned: usize,
    /// The sweep's exit status.
    pub exit: i32,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct FleetBenchReport {
    /// Every sweep, smaller size first.
    pub runs: Vec<SweepRun>,
    /// Total RSS of all servers when the sweeps began, KiB (the devices, not the prober).
    pub servers_rss_kib: u64,
    /// RSS growth per IED between the two sizes (medians of their runs), KiB.
    pub rss_slope_kib_per_ied: Option<f64>,
    /// RSS at zero IEDs on that line, KiB.
    pub rss_intercept_kib: Option<f64>,
    /// [`TARGET_S`].
    pub target_s: f64,
    /// The slowest sweep of the full size, s.
    pub worst_full_sweep_s: f64,
    /// Whether every full-size sweep met the target with every row complete.
    pub met: bool,
}

/// Which IEDs serve TLS: `share` of them, spread evenly.
pub fn tls_indices(n: usize, share: f64) -> BTreeSet<usize> {
    let share = share.clamp(0.0, 1.0);
    (0..n)
        .filter(|&i| ((i + 1) as f64 * share).floor() > (i as f64 * share).floor())
        .collect()
}

/// The station-bus address of IED `i`: 10.63.0.0/16 from .11 on.
pub fn addr(i: usize) -> Ipv4Addr {
    let h = 11 + i;
    Ipv4Addr::new(10, 63, (h / 250) as u8, (h % 250 + 1) as u8)
}

fn cmdline(c: &Command) -> String {
    std::iter::once(c.get_program())
        .chain(c.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn sh(args: &[&str]) -> Result<(), FleetBenchError> {
    let mut c = Command::new(args[0]);
    c.args(&args[1..]);
    let out = c.output().map_err(|e| FleetBenchError::Command {
        cmd: cmdline(&c),
        detail: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(FleetBenchError::Command {
            cmd: cmdline(&c),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), FleetBenchError> {
    std::fs::write(path, text).map_err(|source| FleetBenchError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// The namespaces, the servers and the work directory; all removed on drop.
struct Substation {
    prefix: String,
    namespaces: Vec<String>,
    servers: Vec<Child>,
    work: PathBuf,
}

impl Substation {
    fn hub(&self) -> String {
        format!("{}hub", self.prefix)
    }

    /// The hub with its bridge, and `n` IED namespaces on it.
    fn net(&mut self, n: usize) -> Result<(), FleetBenchError> {
        let hub = self.hub();
        let br = format!("{}br", self.prefix);
        sh(&["ip", "netns", "add", &hub])?;
        self.namespaces.push(hub.clone());
        sh(&["ip", "-n", &hub, "link", "add", &br, "type", "bridge"])?;
        sh(&["ip", "-n", &hub, "addr", "add", "10.63.0.1/16", "dev", &br])?;
        sh(&["ip", "-n", &hub, "link", "set", &br, "up"])?;
        sh(&["ip", "-n", &hub, "link", "set", "lo", "up"])?;
        for i in 0..n {
            let ns = format!("{}i{i}", self.prefix);
            sh(&["ip", "netns", "add", &ns])?;
            self.namespaces.push(ns.clone());
            let (a, b) = (
                format!("{}i{i}a", self.prefix),
                format!("{}i{i}b", self.prefix),
            );
            sh(&[
                "ip", "link", "add", &a, "netns", &ns, "type", "veth", "peer", &b, "netns", &hub,
            ])?;
            sh(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{}/16", addr(i)),
                "dev",
                &a,
            ])?;
            sh(&["ip", "-n", &ns, "link", "set", &a, "up"])?;
            sh(&["ip", "-n", &ns, "link", "set", "lo", "up"])?;
            sh(&["ip", "-n", &hub, "link", "set", &b, "master", &br])?;
            sh(&["ip", "-n", &hub, "link", "set", &b, "up"])?;
        }
        Ok(())
    }

    /// Starts the server of IED `i` and waits for its READY line.
    fn serve(
        &mut self,
        gander: &Path,
        scd: &Path,
        i: usize,
        tls: bool,
        pki: &Path,
    ) -> Result<(), FleetBenchError> {
        let name = fleet_scd::name(i);
        let ns = format!("{}i{i}", self.prefix);
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &ns])
            .arg(gander)
            .args(["mms", "server"]);
        if tls {
            let cfg = self.work.join(format!("{name}.toml"));
            write(
                &cfg,
                &format!(
                    "listen = \"{}:{}\"\nscl = \"{}\"\nied = \"{name}\"\n[tls]\nca = \"{p}/ca.pem\"\n\
                     cert = \"{p}/server.pem\"\nkey = \"{p}/server.key\"\n",
                    addr(i),
                    fleet_scd::TLS_PORT,
                    scd.display(),
                    p = pki.display()
                ),
            )?;
            c.arg("--config").arg(&cfg);
        } else {
            c.arg("--scl")
                .arg(scd)
                .args(["--ied", &name, "--listen"])
                .arg(format!("{}:{}", addr(i), fleet_scd::PLAIN_PORT));
        }
        c.stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = c.spawn().map_err(|e| FleetBenchError::Command {
            cmd: cmdline(&c),
            detail: e.to_string(),
        })?;
        let mut line = String::new();
        let read = child
            .stdout
            .take()
            .map(|o| BufReader::new(o).read_line(&mut line));
        self.servers.push(child);
        match read {
            Some(Ok(_)) if line.starts_with("READY") => Ok(()),
            Some(Err(e)) => Err(FleetBenchError::Server {
                ied: name,
                detail: e.to_string(),
            }),
            _ => Err(FleetBenchError::Server {
                ied: name,
                detail: format!("first line {:?}", line.trim()),
            }),
        }
    }

    /// RSS of the servers now, KiB.
    fn servers_rss_kib(&self) -> u64 {
        self.servers
            .iter()
            .map(|c| status_kib(c.id(), "VmRSS"))
            .sum()
    }
}

impl Drop for Substation {
    fn drop(&mut self) {
        for c in &mut self.servers {
            let _ = c.kill();
        }
        for c in &mut self.servers {
            let _ = c.wait();
        }
        for ns in self.namespaces.iter().rev() {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

/// A `/proc/PID/status` field in KiB (0 when unreadable).
fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Waits for `child` and returns its exit status and peak RSS (KiB): `wait4` reports the
/// child's own `ru_maxrss`, which the standard library's `wait` does not expose.
fn wait_with_peak(child: &Child) -> Result<(i32, u64), FleetBenchError> {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data that wait4 fills; zeroed is a valid value of it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own unwaited child (std's Child is never waited on after this),
        // and both out-pointers point to live locals of the right types.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(FleetBenchError::Command {
                cmd: format!("wait4({pid})"),
                detail: e.to_string(),
            });
        }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Ok((code, ru.ru_maxrss.max(0) as u64))
}

/// One sweep of the first `n` IEDs (their SCD is `scd`).
fn sweep(
    o: &FleetBenchOptions,
    s: &Substation,
    scd: &Path,
    client: &Path,
    n: usize,
    tls_ieds: usize,
    run: usize,
) -> Result<SweepRun, FleetBenchError> {
    let out = s.work.join(format!("sweep-{n}-{run}"));
    let mut c = Command::new("ip");
    c.args(["netns", "exec", &s.hub()])
        .arg(&o.gander)
        .args(["probe", "--scd"])
        .arg(scd)
        .arg("--tls")
        .arg(client)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let t0 = Instant::now();
    let child = c.spawn().map_err(|e| FleetBenchError::Command {
        cmd: cmdline(&c),
        detail: e.to_string(),
    })?;
    let (exit, peak) = wait_with_peak(&child)?;
    let sweep_s = t0.elapsed().as_secs_f64();
    let path = out.join("fleet.json");
    let bad = |detail: String| FleetBenchError::Report {
        path: path.display().to_string(),
        detail,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let rows = doc
        .get("rows")
        .and_then(|r| r.as_array())
        .ok_or_else(|| bad("no rows".into()))?;
    let durations: Vec<u64> = rows
        .iter()
        .filter_map(|r| r.get("duration_ms").and_then(|d| d.as_u64()))
        .collect();
    let complete = rows
        .iter()
        .filter(|r| r.get("outcome").and_then(|x| x.as_str()) == Some("complete"))
        .count();
    let scanned = rows
        .iter()
        .filter(|r| {
            r.get("tls")
                .and_then(|t| t.get("scan"))
                .is_some_and(|s| !s.is_null())
        })
        .count();
    Ok(SweepRun {
        ieds: n,
        tls_ieds,
        run,
        sweep_s,
        per_ied_ms: Summary::from_samples(&durations).unwrap_or_default(),
        peak_rss_kib: peak,
        rss_per_ied_kib: peak as f64 / n.max(1) as f64,
        rows: rows.len(),
        complete,
        scanned,
        exit,
    })
}

/// One line of a sweep.
pub fn line(r: &SweepRun) -> String {
    format!(
        "{:>4} IEDs ({} TLS), run {}: sweep {:.1} s ({:.2} of the {TARGET_S:.0} s target), per IED \
         p50 {:.2} s p99 {:.2} s, peak RSS {:.1} MiB ({:.0} KiB per IED), {}/{} rows complete, {} scanned",
        r.ieds,
        r.tls_ieds,
        r.run,
        r.sweep_s,
        r.sweep_s / TARGET_S,
        r.per_ied_ms.p50 / 1e3,
        r.per_ied_ms.p99 / 1e3,
        r.peak_rss_kib as f64 / 1024.0,
        r.rss_per_ied_kib,
        r.complete,
        r.rows,
        r.scanned
    )
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len().checked_sub(1)? / 2).copied()
}

/// The line through two sizes' median RSS: (slope KiB per IED, intercept KiB).
pub fn rss_line(runs: &[SweepRun], small: usize, full: usize) -> Option<(f64, f64)> {
    let at = |n: usize| {
        median(
            runs.iter()
                .filter(|r| r.ieds == n)
                .map(|r| r.peak_rss_kib as f64)
                .collect(),
        )
    };
    if full <= small {
        return None;
    }
    let (a, b) = (at(small)?, at(full)?);
    let slope = (b - a) / (full - small) as f64;
    Some((slope, b - slope * full as f64))
}

/// Runs the benchmark, printing each sweep as it ends.
pub fn run(
    o: &FleetBenchOptions,
    say: &mut dyn FnMut(String),
) -> Result<FleetBenchReport, FleetBenchError> {
    if !(2..=1000).contains(&o.ieds) {
        return Err(FleetBenchError::InvalidOption {
            what: "--ieds",
            detail: "2 to 1000".into(),
        });
    }
    if !(0.0..=1.0).contains(&o.tls_share) {
        return Err(FleetBenchError::InvalidOption {
            what: "--tls-share",
            detail: "0 to 1".into(),
        });
    }
    if o.runs == 0 || o.prefix.is_empty() || o.prefix.len() > 6 {
        return Err(FleetBenchError::InvalidOption {
            what: "--runs / --prefix",
            detail: "at least one run; a prefix of 1 to 6 characters".into(),
        });
    }
    gander_lab::check_available()?;
    let work = std::env::temp_dir().join(format!("gander-bench-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|source| FleetBenchError::Io {
        path: work.display().to_string(),
        source,
    })?;
    let mut s = Substation {
        prefix: o.prefix.clone(),
        namespaces: Vec::new(),
        servers: Vec::new(),
        work: work.clone(),
    };
    let n = o.ieds;
    let small = n / 2;
    let tls = tls_indices(n, o.tls_share);
    let scd_full = work.join(format!("fleet{n}.scd"));
    write(&scd_full, &fleet_scd::scd(n, addr, &tls))?;
    let tls_small: BTreeSet<usize> = tls.iter().copied().filter(|&i| i < small).collect();
    let scd_small = work.join(format!("fleet{small}.scd"));
    write(&scd_small, &fleet_scd::scd(small, addr, &tls_small))?;
    let pki_dir = work.join("pki");
    let gander = o.gander.display().to_string();
    sh(&[
        &gander,
        "pki",
        "init",
        "--dir",
        &pki_dir.display().to_string(),
        "--rsa",
        "2048",
        "--ecdsa",
        "none",
    ])?;
    let pki = pki_dir.join("rsa2048");
    let client = work.join("client.toml");
    write(
        &client,
        &format!(
            "[tls]\nca = \"{p}/ca.pem\"\ncert = \"{p}/client.pem\"\nkey = \"{p}/client.key\"\n",
            p = pki.display()
        ),
    )?;
    say(format!(
        "substation: {n} IEDs ({} over TLS) in namespaces {}*, servers starting",
        tls.len(),
        o.prefix
    ));
    s.net(n)?;
    for i in 0..n {
        s.serve(&o.gander, &scd_full, i, tls.contains(&i), &pki)?;
    }
    let servers_rss_kib = s.servers_rss_kib();
    let mut runs = Vec::new();
    for (size, scd, tls_n) in [
        (small, &scd_small, tls_small.len()),
        (n, &scd_full, tls.len()),
    ] {
        if size == 0 {
            continue;
        }
        for k in 1..=o.runs {
            let r = sweep(o, &s, scd, &client, size, tls_n, k)?;
            say(line(&r));
            runs.push(r);
        }
    }
    let fit = rss_line(&runs, small, n);
    let full: Vec<&SweepRun> = runs.iter().filter(|r| r.ieds == n).collect();
    let worst = full.iter().map(|r| r.sweep_s).fold(0.0, f64::max);
    let met = full
        .iter()
        .all(|r| r.sweep_s < TARGET_S && r.complete == r.ieds);
    drop(s);
    Ok(FleetBenchReport {
        runs,
        servers_rss_kib,
        rss_slope_kib_per_ied: fit.map(|f| f.0),
        rss_intercept_kib: fit.map(|f| f.1),
        target_s: TARGET_S,
        worst_full_sweep_s: worst,
        met,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tls_share_is_spread_and_exact() {
        assert_eq!(tls_indices(10, 0.5).len(), 5);
        assert_eq!(tls_indices(4, 0.5).into_iter().collect::<Vec<_>>(), [1, 3]);
        assert!(tls_indices(7, 0.0).is_empty());
        assert_eq!(tls_indices(7, 1.0).len(), 7);
        assert_eq!(tls_indices(100, 0.3).len(), 30);
    }

    #[test]
    fn addresses_are_distinct_hosts_of_the_bus() {
        let all: BTreeSet<Ipv4Addr> = (0..1000).map(addr).collect();
        assert_eq!(all.len(), 1000);
        assert!(all.iter().all(|a| {
            let o = a.octets();
            o[0] == 10 && o[1] == 63 && o[3] != 0 && o[3] != 255
        }));
        assert!(!all.contains(&Ipv4Addr::new(10, 63, 0, 1)));
    }

    fn run_of(ieds: usize, kib: u64) -> SweepRun {
        SweepRun {
            ieds,
            tls_ieds: 0,
            run: 1,
            sweep_s: 1.0,
            per_ied_ms: Summary::default(),
            peak_rss_kib: kib,
            rss_per_ied_kib: kib as f64 / ieds as f64,
            rows: ieds,
            complete: ieds,
            scanned: 0,
            exit: 0,
        }
    }

    #[test]
    fn the_rss_line_goes_through_the_medians() {
        let runs = [
            run_of(50, 20_000),
            run_of(50, 21_000),
            run_of(50, 40_000),
            run_of(100, 30_000),
            run_of(100, 31_000),
            run_of(100, 29_000),
        ];
        let (slope, icpt) = rss_line(&runs, 50, 100).unwrap();
        // Medians 21 000 (50 IEDs) and 30 000 KiB (100 IEDs): the outlier run does not count.
        assert!((slope - 180.0).abs() < 1e-9, "{slope}");
        assert!((icpt - 12_000.0).abs() < 1e-9, "{icpt}");
        assert!(rss_line(&runs, 100, 100).is_none());
        assert!(rss_line(&runs, 10, 100).is_none());
    }

    #[test]
    fn options_out_of_range_are_refused_before_anything_is_made() {
        let o = FleetBenchOptions {
            ieds: 1,
            tls_share: 0.5,
            runs: 1,
            gander: PathBuf::from("/nonexistent"),
            prefix: "gbt".into(),
        };
        assert!(matches!(
            run(&o, &mut |_| {}),
            Err(FleetBenchError::InvalidOption { what: "--ieds", .. })
        ));
        let o = FleetBenchOptions {
            ieds: 10,
            tls_share: 1.5,
            ..o
        };
        assert!(matches!(
            run(&o, &mut |_| {}),
            Err(FleetBenchError::InvalidOption {
                what: "--tls-share",
                ..
            })
        ));
    }
}
