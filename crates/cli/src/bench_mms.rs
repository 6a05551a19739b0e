//! `gander bench mms` (argument parsing only; the benchmark is `gander_bench::mms`).

use gander_bench::mms::{self, BenchOptions};
use gander_tls::{BackendKind, TlsVersion};
use std::path::PathBuf;
use std::process::ExitCode;

/// gander's full HT against a bare TLS handshake with the same backend and suite, and the report
/// rate and RT one server sustains to one client over TLS, with the cleartext floor.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// TLS backend: openssl, gnutls or rustls.
    #[arg(long, default_value = "openssl")]
    pub backend: String,
    /// TLS version: 1.2 or 1.3.
    #[arg(long, default_value = "1.2")]
    pub tls_version: String,
    /// Cipher suite (IANA name); default: TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 for 1.2,
    /// TLS_AES_128_GCM_SHA256 for 1.3.
    #[arg(long)]
    pub suite: Option<String>,
    /// Handshakes of each kind (after warm-up).
    #[arg(long, default_value_t = 300)]
    pub handshakes: usize,
    /// Reports per RT phase.
    #[arg(long, default_value_t = 20_000)]
    pub reports: u64,
    /// Paced rate for the RT latency phases (reports/s).
    #[arg(long, default_value_t = 10_000)]
    pub rate: u64,
    /// A short run (50 handshakes, 5000 reports).
    #[arg(long)]
    pub quick: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// PKI directory (created if missing; RSA-2048 set under rsa2048/).
    #[arg(long)]
    pub pki: Option<PathBuf>,
}

pub(crate) fn run(a: Args) -> anyhow::Result<ExitCode> {
    let backend: BackendKind = a.backend.parse().map_err(anyhow::Error::msg)?;
    let version = match a.tls_version.as_str() {
        "1.2" => TlsVersion::Tls12,
        "1.3" => TlsVersion::Tls13,
        v => anyhow::bail!("--tls-version {v}: expected 1.2 or 1.3"),
    };
    let suite = a.suite.clone().unwrap_or_else(|| {
        if version == TlsVersion::Tls13 {
            "TLS_AES_128_GCM_SHA256".into()
        } else {
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()
        }
    });
    let (handshakes, reports) = if a.quick {
        (50, 5_000)
    } else {
        (a.handshakes.max(1), a.reports.max(100))
    };
    let opts = BenchOptions {
        backend,
        version,
        suite,
        handshakes,
        warmup: 10,
        reports,
        rate: a.rate,
        pki_dir: a
            .pki
            .unwrap_or_else(|| std::env::temp_dir().join("gander-bench-mms-pki")),
    };
    let r = mms::run(&opts)?;
    if a.json {
        crate::out(serde_json::to_string_pretty(&r)?);
    } else {
        crate::out(mms::render(&r).trim_end());
    }
    Ok(ExitCode::SUCCESS)
}
