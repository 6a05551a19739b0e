//! What a report was measured on. Absolute times mean nothing without the machine
//! (`docs/measurement.md`, "Every table states the machine, the TLS library and its version"), so
//! every benchmark prints this header and the JSON report carries it.
//!
//! Everything is read from `/proc` (Linux) and the linked OpenSSL; fields that cannot be read are
//! `"unknown"` rather than an error, since a benchmark should still run in an odd container.

use serde::Serialize;
use std::fmt;
use std::time::Instant;

/// CPU flags that change the cost of the algorithms measured: AES-NI and carry-less multiply
/// (AES-GCM/GMAC), the SHA extensions (HMAC-SHA256), AVX2 (BLAKE2, wide GHASH) and the
/// AVX-512 vector AES/CLMUL that OpenSSL uses for GCM when present.
pub const RELEVANT_FLAGS: [&str; 7] = [
    "aes",
    "pclmulqdq",
    "sha_ni",
    "avx2",
    "avx512f",
    "vaes",
    "vpclmulqdq",
];

/// A description of the machine and software a benchmark ran on.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Host name.
    pub hostname: String,
    /// CPU model name (`/proc/cpuinfo`).
    pub cpu_model: String,
    /// Logical CPUs available to this process.
    pub cores: usize,
    /// Of [`RELEVANT_FLAGS`], those the CPU reports.
    pub cpu_flags: Vec<String>,
    /// Of [`RELEVANT_FLAGS`], those it lacks.
    pub cpu_flags_missing: Vec<String>,
    /// Kernel release.
    pub kernel: String,
    /// Linked OpenSSL (`OpenSSL_version(OPENSSL_VERSION)`).
    pub openssl: String,
    /// Compiler that built this binary.
    pub rustc: String,
    /// Cargo profile of this build (`release` or `debug`); debug numbers are not comparable.
    pub build_profile: String,
    /// 1-, 5- and 15-minute load averages when the description was taken.
    pub loadavg: [f64; 3],
    /// The clock the benchmarks read.
    pub clock: &'static str,
    /// Median cost of one `Instant::now()` (ns), from back-to-back reads.
    pub clock_overhead_ns: u64,
    /// Smallest non-zero difference between two back-to-back reads (ns): the effective
    /// resolution the timing loop sees.
    pub clock_granularity_ns: u64,
}

impl Machine {
    /// Describes this machine now (takes about a millisecond: it times the clock).
    pub fn describe() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let flags: Vec<String> = field("flags")
            .map(|f| f.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default();
        let (present, missing): (Vec<&str>, Vec<&str>) = RELEVANT_FLAGS
            .iter()
            .partition(|f| flags.iter().any(|g| g == *f));
        let (overhead, granularity) = clock_cost();
        Machine {
            hostname: read_trimmed("/proc/sys/kernel/hostname"),
            cpu_model: field("model name")
                .or_else(|| field("Model"))
                .unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            cpu_flags: present.into_iter().map(str::to_string).collect(),
            cpu_flags_missing: missing.into_iter().map(str::to_string).collect(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            openssl: openssl::version::version().to_string(),
            rustc: env!("GANDER_RUSTC_VERSION").to_string(),
            build_profile: env!("GANDER_BUILD_PROFILE").to_string(),
            loadavg: loadavg(),
            clock: "CLOCK_MONOTONIC (std::time::Instant)",
            clock_overhead_ns: overhead,
            clock_granularity_ns: granularity,
        }
    }

    /// Whether the machine was busy when described: a 1-minute load average above the number
    /// of CPUs means other work competed for them, and tails (p99, max) will show it.
    pub fn busy(&self) -> bool {
        self.loadavg[0] > self.cores as f64
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "machine:  {} ({}, {} logical CPUs)",
            self.hostname, self.cpu_model, self.cores
        )?;
        let missing = if self.cpu_flags_missing.is_empty() {
            String::new()
        } else {
            format!("; lacks {}", self.cpu_flags_missing.join(" "))
        };
        writeln!(f, "cpu:      {}{}", self.cpu_flags.join(" "), missing)?;
        writeln!(
            f,
            "software: Linux {}, {}, {} ({} build)",
            self.kernel, self.openssl, self.rustc, self.build_profile
        )?;
        writeln!(
            f,
            "clock:    {}, {} ns per read, {} ns granularity",
            self.clock, self.clock_overhead_ns, self.clock_granularity_ns
        )?;
        write!(
            f,
            "load:     {:.2} {:.2} {:.2}",
            self.loadavg[0], self.loadavg[1], self.loadavg[2]
        )?;
        if self.busy() {
            write!(f, "  (busy: load above the CPU count, tails are noisy)")?;
        }
        Ok(())
    }
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn loadavg() -> [f64; 3] {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut it = s.split_whitespace().map(|x| x.parse().unwrap_or(0.0));
    [
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
    ]
}

/// Median cost of `Instant::now()` and the smallest non-zero step between two reads, from
/// 10,000 back-to-back pairs.
pub fn clock_cost() -> (u64, u64) {
    const PAIRS: usize = 10_000;
    let mut d = Vec::with_capacity(PAIRS);
    for _ in 0..PAIRS {
        let a = Instant::now();
        let b = Instant::now();
        d.push(b.duration_since(a).as_nanos() as u64);
    }
    d.sort_unstable();
    let granularity = d.iter().copied().find(|&x| x > 0).unwrap_or(0);
    (d[PAIRS / 2], granularity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_something() {
        let m = Machine::describe();
        assert!(m.cores >= 1);
        assert!(m.openssl.contains("OpenSSL"), "{}", m.openssl);
        assert!(!m.rustc.is_empty());
        let text = m.to_string();
        assert!(text.contains("machine:") && text.contains("clock:"));
    }
}
