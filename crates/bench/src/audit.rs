//! `gander bench audit`: frames per second of `gander audit` on a generated mixed capture of a
//! substation's process and station bus (8 SV streams at 4800 frames/s, GOOSE publishers,
//! R-GOOSE, MMS over TLS), without keys and with HMAC-SHA256-128 verification of every tag,
//! against tshark dissecting the same capture in the same run, and the peak resident memory.

use gander_audit::{AuditOptions, Auditor};
use gander_sec::frame::protect_frame;
use gander_sec::spdu::RandomIv;
use gander_sec::{default_provider, KeyStore, Profile};
use gander_testkit::frames::{goose_frame, rgoose_spdu, sv_frame, udp_frame, UdpAddrs};
use gander_testkit::tcp_tls::{certificate, client_hello, server_hello, tcp_frame, tls_record};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// The key every generated frame is protected with.
const KEY: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
"#;

/// Errors of the benchmark.
#[derive(Debug, thiserror::Error)]
pub enum AuditBenchError {
    /// Building or protecting a frame failed.
    #[error("cannot build the capture: {0}")]
    Build(String),
    /// tshark could not run or failed.
    #[error("tshark: {0}")]
    Tshark(String),
    /// Writing the capture for tshark failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
}

/// One generated capture: (capture time ns, frame).
pub type Frames = Vec<(u64, Vec<u8>)>;

/// `seconds` of the mixed traffic, every IEC 61850 frame protected with HMAC-SHA256-128 (key
/// id 1), MMS over TLS as one association exchanging records every 10 ms.
pub fn mixed_capture(seconds: u32, store: &KeyStore) -> Result<Frames, AuditBenchError> {
    let key = store
        .get(1)
        .ok_or_else(|| AuditBenchError::Build("no key 1".into()))?;
    let t0: u64 = 1_700_000_000_000_000_000;
    let protect = |f: &[u8], ts: u64| {
        protect_frame(Profile::Standard, key, f, &mut RandomIv, ts / 1_000_000_000)
            .map_err(|e| AuditBenchError::Build(e.to_string()))?
            .ok_or_else(|| AuditBenchError::Build("not an IEC 61850 frame".into()))
    };
    let mut out = Vec::new();
    let (cli, srv) = (([10, 0, 0, 2], 40000u16), ([10, 0, 0, 1], 3782u16));
    let (mut cseq, mut sseq) = (1u32, 1u32);
    let mut push_tcp = |out: &mut Frames, ts: u64, from_client: bool, data: &[u8]| {
        let f = if from_client {
            cseq = cseq.wrapping_add(data.len() as u32);
            tcp_frame(cli, srv, cseq.wrapping_sub(data.len() as u32), 0x18, data)
        } else {
            sseq = sseq.wrapping_add(data.len() as u32);
            tcp_frame(srv, cli, sseq.wrapping_sub(data.len() as u32), 0x18, data)
        };
        out.push((ts, f));
    };
    push_tcp(
        &mut out,
        t0,
        true,
        &tls_record(22, &client_hello(&[0xc02f])),
    );
    push_tcp(
        &mut out,
        t0 + 1000,
        false,
        &tls_record(22, &server_hello(0xc02f, true)),
    );
    // The client authenticates (IEC 62351-3 mutual authentication); its certificate's contents
    // are not read.
    let mut flight = tls_record(22, &certificate(&[&[0x30, 0x00]]));
    flight.extend(tls_record(20, &[1]));
    push_tcp(&mut out, t0 + 2000, true, &flight);
    push_tcp(&mut out, t0 + 3000, false, &tls_record(20, &[1]));
    // One tick per SV sample period (4800 per second).
    let ticks = seconds as u64 * 4800;
    let mut sq = 0u32;
    for t in 0..ticks {
        let ts = t0 + t * 1_000_000_000 / 4800;
        for s in 0..8u8 {
            let src = [0x00, 0x30, 0xa7, 0, 1, s];
            let dst = [0x01, 0x0c, 0xcd, 0x04, 0x00, s];
            let f = sv_frame(
                src,
                dst,
                None,
                0x4000 + u16::from(s),
                "MU",
                (t % 4800) as u16,
            );
            out.push((ts + u64::from(s) * 1000, protect(&f, ts)?));
        }
        // Four GOOSE publishers and an R-GOOSE one at 100 frames/s; MMS records too.
        if t % 48 == 0 {
            for g in 0..4u8 {
                let src = [0x00, 0x30, 0xa7, 0, 2, g];
                let f = goose_frame(
                    src,
                    [0x01, 0x0c, 0xcd, 0x01, 0, g],
                    None,
                    u16::from(g) + 1,
                    1,
                    sq,
                );
                out.push((ts + 20_000 + u64::from(g) * 1000, protect(&f, ts)?));
            }
            let spdu = rgoose_spdu(Profile::Standard, 0x1000, sq + 1, 1, sq);
            let f = udp_frame(&UdpAddrs::IED_TO_SUB, &spdu);
            out.push((ts + 30_000, protect(&f, ts)?));
            push_tcp(
                &mut out,
                ts + 40_000,
                t % 96 == 0,
                &tls_record(23, &[0x5a; 120]),
            );
            sq += 1;
        }
    }
    Ok(out)
}

/// Writes `frames` as a pcap file (microsecond timestamps, Ethernet), for tshark.
pub fn write_pcap(path: &Path, frames: &Frames) -> Result<(), AuditBenchError> {
    let io = |source| AuditBenchError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    let mut hdr = Vec::with_capacity(24);
    hdr.extend(0xa1b2c3d4u32.to_le_bytes());
    hdr.extend(2u16.to_le_bytes());
    hdr.extend(4u16.to_le_bytes());
    hdr.extend([0u8; 8]);
    hdr.extend(65535u32.to_le_bytes());
    hdr.extend(1u32.to_le_bytes());
    w.write_all(&hdr).map_err(io)?;
    for (ts, f) in frames {
        let mut r = Vec::with_capacity(16);
        r.extend(((ts / 1_000_000_000) as u32).to_le_bytes());
        r.extend(((ts % 1_000_000_000 / 1000) as u32).to_le_bytes());
        r.extend((f.len() as u32).to_le_bytes());
        r.extend((f.len() as u32).to_le_bytes());
        w.write_all(&r).map_err(io)?;
        w.write_all(f).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// One audit pass over `frames`: frames per CPU second of this thread (one core, whatever else
/// the machine runs), frames per wall-clock second, and the number of findings.
pub fn audit_rate(frames: &Frames, keys: Option<&KeyStore>) -> (f64, f64, usize) {
    let cpu0 = crate::anatomy::thread_cpu_ns();
    let start = Instant::now();
    let mut a = Auditor::new(AuditOptions::default(), keys);
    for (i, (ts, f)) in frames.iter().enumerate() {
        a.feed(i as u64 + 1, *ts, f);
    }
    let audit = a.finish();
    let wall = start.elapsed().as_secs_f64();
    let cpu = crate::anatomy::thread_cpu_ns().saturating_sub(cpu0).max(1) as f64 / 1e9;
    let n = frames.len() as f64;
    (n / cpu, n / wall, audit.findings.len())
}

/// tshark reading `path` with every dissector (GOOSE, SV, MMS, TLS): frames per CPU second of
/// the tshark process (user + system, from its rusage), or why it could not run.
pub fn tshark_rate(path: &Path, frames: usize) -> Result<f64, AuditBenchError> {
    let before = children_cpu_ns();
    let out = std::process::Command::new("tshark")
        .args(["-n", "-r"])
        .arg(path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| AuditBenchError::Tshark(format!("did not run: {e}")))?;
    if !out.success() {
        return Err(AuditBenchError::Tshark(format!("exited with {out}")));
    }
    let cpu = children_cpu_ns().saturating_sub(before).max(1) as f64 / 1e9;
    Ok(frames as f64 / cpu)
}

/// User + system CPU time of the waited-for children of this process, ns.
fn children_cpu_ns() -> u64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: a valid out pointer to a zeroed rusage; RUSAGE_CHILDREN is a constant the
    // kernel supports.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr()) } == 0;
    if !ok {
        return 0;
    }
    // SAFETY: getrusage succeeded and filled the struct (and it was zeroed before).
    let ru = unsafe { ru.assume_init() };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

/// Peak resident set of this process, KiB (VmHWM of /proc/self/status).
pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// The result of one run.
#[derive(Clone, Debug, Serialize)]
pub struct AuditBenchReport {
    /// Frames in the capture.
    pub frames: usize,
    /// Findings of the audit with keys (0 expected: the capture is clean).
    pub findings_with_keys: usize,
    /// Median frames per CPU second (one core) without keys over the runs.
    pub fps_without_keys: f64,
    /// Median frames per CPU second with HMAC-SHA256-128 verification of every tag.
    pub fps_with_keys: f64,
    /// The same two, per wall-clock second (lower on a shared machine).
    pub fps_wall: (f64, f64),
    /// tshark frames/s on the same capture (`None` if tshark could not run, see `tshark_error`).
    pub fps_tshark: Option<f64>,
    /// Why tshark did not run.
    pub tshark_error: Option<String>,
    /// Peak resident memory of the benchmark process, MiB (it holds the whole capture in memory;
    /// `gander audit` streams files).
    pub peak_rss_mib: Option<f64>,
    /// Targets: >= 1 M frames/s without keys, >= 500 k with, >= 10x tshark.
    pub targets_met: bool,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Runs the benchmark: a capture of `seconds` seconds, `runs` timed passes each way, tshark
/// once on a pcap written under `dir`.
pub fn run(seconds: u32, runs: usize, dir: &Path) -> Result<AuditBenchReport, AuditBenchError> {
    let store = KeyStore::from_toml(KEY, Path::new("."), default_provider())
        .map_err(|e| AuditBenchError::Build(e.to_string()))?;
    let frames = mixed_capture(seconds, &store)?;
    let runs = runs.max(1);
    // One warm-up pass each way.
    let _ = audit_rate(&frames, None);
    let (_, _, findings) = audit_rate(&frames, Some(&store));
    let a: Vec<_> = (0..runs).map(|_| audit_rate(&frames, None)).collect();
    let b: Vec<_> = (0..runs)
        .map(|_| audit_rate(&frames, Some(&store)))
        .collect();
    let without = median(a.iter().map(|r| r.0).collect());
    let with = median(b.iter().map(|r| r.0).collect());
    let fps_wall = (
        median(a.iter().map(|r| r.1).collect()),
        median(b.iter().map(|r| r.1).collect()),
    );
    let path = dir.join("gander-bench-audit.pcap");
    write_pcap(&path, &frames)?;
    let (fps_tshark, tshark_error) = match tshark_rate(&path, frames.len()) {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let _ = std::fs::remove_file(&path);
    let targets_met =
        without >= 1e6 && with >= 5e5 && fps_tshark.is_some_and(|t| without >= 10.0 * t);
    Ok(AuditBenchReport {
        frames: frames.len(),
        findings_with_keys: findings,
        fps_without_keys: without,
        fps_with_keys: with,
        fps_wall,
        fps_tshark,
        tshark_error,
        peak_rss_mib: peak_rss_kib().map(|k| k as f64 / 1024.0),
        targets_met,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_capture_is_clean_for_the_audit() {
        let store = KeyStore::from_toml(KEY, Path::new("."), default_provider()).unwrap();
        let frames = mixed_capture(2, &store).unwrap();
        assert!(frames.len() > 2 * 8 * 4800);
        let mut a = Auditor::new(AuditOptions::default(), Some(&store));
        for (i, (ts, f)) in frames.iter().enumerate() {
            a.feed(i as u64 + 1, *ts, f);
        }
        let audit = a.finish();
        assert!(
            audit.findings.is_empty(),
            "{:#?} {:#?}",
            audit.findings,
            audit.associations
        );
        assert_eq!(audit.streams.len(), 8 + 4 + 1);
        assert_eq!(audit.associations.len(), 1);
    }
}
