//! `gander bench audit --size GB`: the resident memory of `gander audit` reading a capture of
//! a given size, to show that it is bounded by the number of streams and not by the capture
//! (the issue's target: a 10 GB capture in less than 200 MiB).
//!
//! The capture is never kept: one second of the benchmark's mixed traffic
//! ([`crate::audit::mixed_capture`]: 8 SV streams at 4800 frames/s, 4 GOOSE publishers, an
//! R-GOOSE publisher, MMS over TLS) is generated once and written again and again, its capture
//! times moved on by a second each time, into a FIFO that the `gander audit` child process
//! reads as its capture file. Nothing touches the disk. Each pass repeats the same SV smpCnt
//! run (0..4799, the wrap of a 4800 Hz stream) and the same GOOSE numbers (a publisher restart
//! each second), and every secured frame is `not-verified` without keys, so findings recur all
//! along: the findings lists and their frame numbers are exercised too, not only the counters.
//!
//! While it writes, the benchmark samples the child's peak resident set (`VmHWM` of
//! `/proc/<pid>/status`) at every tenth of the size, so the report shows the peak against the
//! size read so far.

use crate::audit::{mixed_capture, AuditBenchError, Frames};
use gander_sec::{default_provider, KeyStore};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The key of the generated frames (the audit runs without keys).
const KEY: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
"#;

/// Octets of a classic pcap record header.
const RECORD_HEADER: usize = 16;

/// One sample: capture octets written so far, and the child's peak resident set then.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MemorySample {
    /// Octets of capture written to the child.
    pub bytes: u64,
    /// Frames written.
    pub frames: u64,
    /// The child's `VmHWM`, KiB.
    pub peak_rss_kib: u64,
}

/// The result of a `--size` run.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryReport {
    /// Octets of capture written (the pcap file the child read).
    pub bytes: u64,
    /// Frames in it.
    pub frames: u64,
    /// Peak resident set of `gander audit` over the whole capture, KiB (`VmHWM` read just
    /// before it exited, or its rusage maximum when /proc could not be read).
    pub peak_rss_kib: u64,
    /// The samples taken while writing.
    pub samples: Vec<MemorySample>,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// Exit code of `gander audit` (its worst finding, docs/audit.md).
    pub exit_code: Option<i32>,
    /// Peak resident set of the benchmark process itself, KiB.
    pub generator_peak_rss_kib: Option<u64>,
}

/// `VmHWM` of process `pid`, KiB.
fn vm_hwm(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// The largest resident set of the waited-for children, KiB (`ru_maxrss`).
fn children_max_rss_kib() -> u64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: a valid out pointer to a zeroed rusage; RUSAGE_CHILDREN is a constant the
    // kernel supports.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr()) } != 0 {
        return 0;
    }
    // SAFETY: getrusage succeeded and filled the struct (it was zeroed before).
    let ru = unsafe { ru.assume_init() };
    u64::try_from(ru.ru_maxrss).unwrap_or(0)
}

/// The pcap file header: classic pcap, microsecond times, Ethernet.
fn pcap_header() -> Vec<u8> {
    let mut h = Vec::with_capacity(24);
    h.extend(0xa1b2_c3d4u32.to_le_bytes());
    h.extend(2u16.to_le_bytes());
    h.extend(4u16.to_le_bytes());
    h.extend([0u8; 8]);
    h.extend(65535u32.to_le_bytes());
    h.extend(1u32.to_le_bytes());
    h
}

/// One second of traffic as pcap records, capture times starting at `second` seconds after
/// the template's.
fn emit_second(template: &Frames, second: u64, out: &mut Vec<u8>) {
    out.clear();
    for (ts, f) in template {
        let ts = ts + second * 1_000_000_000;
        out.extend(((ts / 1_000_000_000) as u32).to_le_bytes());
        out.extend(((ts % 1_000_000_000 / 1000) as u32).to_le_bytes());
        let n = u32::try_from(f.len()).unwrap_or(u32::MAX);
        out.extend(n.to_le_bytes());
        out.extend(n.to_le_bytes());
        out.extend_from_slice(f);
    }
}

/// A directory of this run under the benchmark's `--dir`, removed with what it holds when
/// dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(dir: &Path) -> std::io::Result<TempDir> {
        let p = dir.join(format!("gander-audit-mem-{}", std::process::id()));
        std::fs::create_dir_all(&p)?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Creates a FIFO at `path`.
fn mkfifo(path: &Path) -> Result<(), AuditBenchError> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| AuditBenchError::Build("a path with a NUL byte".into()))?;
    // SAFETY: a valid NUL-terminated path; mkfifo does not keep the pointer.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(AuditBenchError::Io {
            path: path.display().to_string(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Streams `size_gb` GB (10^9 octets) of generated capture into `gander audit` (the binary
/// `exe`) through a FIFO under `dir`, and measures its peak resident set.
pub fn run(size_gb: f64, exe: &Path, dir: &Path) -> Result<MemoryReport, AuditBenchError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| AuditBenchError::Io { path, source }
    };
    let store = KeyStore::from_toml(KEY, Path::new("."), default_provider())
        .map_err(|e| AuditBenchError::Build(e.to_string()))?;
    let template = mixed_capture(1, &store)?;
    let per_second: u64 = template
        .iter()
        .map(|(_, f)| (RECORD_HEADER + f.len()) as u64)
        .sum();
    let target = (size_gb.max(0.0) * 1e9) as u64;
    let tmp = TempDir::new(dir).map_err(io(dir))?;
    let fifo = tmp.0.join("capture.pcap");
    mkfifo(&fifo)?;
    let start = Instant::now();
    let mut child = Command::new(exe)
        .arg("audit")
        .arg(&fifo)
        .arg("--out")
        .arg(tmp.0.join("out"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(io(exe))?;
    let pid = child.id();
    // Opening for writing waits for the child to open it for reading.
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .map_err(io(&fifo))?;
    let header = pcap_header();
    w.write_all(&header).map_err(io(&fifo))?;
    let (mut bytes, mut frames, mut second) = (header.len() as u64, 0u64, 0u64);
    let step = (target / 10).max(1);
    let mut next_sample = step;
    let mut samples = Vec::new();
    let mut buf = Vec::with_capacity(usize::try_from(per_second).unwrap_or(0));
    while bytes < target {
        emit_second(&template, second, &mut buf);
        w.write_all(&buf).map_err(io(&fifo))?;
        bytes += buf.len() as u64;
        frames += template.len() as u64;
        second += 1;
        if bytes >= next_sample {
            if let Some(k) = vm_hwm(pid) {
                samples.push(MemorySample {
                    bytes,
                    frames,
                    peak_rss_kib: k,
                });
            }
            next_sample += step;
        }
    }
    drop(w);
    // The child reads to the end, judges, and writes its report; its VmHWM is read while it
    // does (after exit /proc has no status), its rusage maximum after.
    let mut last = None;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(io(exe))? {
            break s;
        }
        if let Some(k) = vm_hwm(pid) {
            last = Some(k);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let peak = children_max_rss_kib().max(last.unwrap_or(0));
    Ok(MemoryReport {
        bytes,
        frames,
        peak_rss_kib: peak,
        samples,
        wall_s: start.elapsed().as_secs_f64(),
        exit_code: status.code(),
        generator_peak_rss_kib: crate::audit::peak_rss_kib(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_of_records_is_the_template_moved_on() {
        let t: Frames = vec![
            (1_000_000_500_000, vec![1, 2, 3]),
            (1_000_000_900_000, vec![4]),
        ];
        let mut out = Vec::new();
        emit_second(&t, 2, &mut out);
        assert_eq!(out.len(), 2 * RECORD_HEADER + 4);
        // 1002 s, 500 µs; length 3 twice; the data.
        assert_eq!(&out[..4], &1002u32.to_le_bytes());
        assert_eq!(&out[4..8], &500u32.to_le_bytes());
        assert_eq!(&out[8..16], &[3, 0, 0, 0, 3, 0, 0, 0]);
        assert_eq!(&out[16..19], &[1, 2, 3]);
        assert_eq!(pcap_header().len(), 24);
    }
}
