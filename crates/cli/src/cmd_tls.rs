//! `gander` subcommands of the tls crate (argument parsing only): `gander suites`,
//! `gander pki init` and `gander tls survey`.
use anyhow::Context;
use clap::{Subcommand, ValueEnum};
use gander_tls::backend::{self, BackendKind};
use gander_tls::pki::{self, KeySpec};
use gander_tls::suites::{self, CipherSuite};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// The IEC 62351-3/-4 cipher-suite catalogue, with what each TLS backend supports on this machine.
    Suites {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Only suites this backend supports.
        #[arg(long)]
        backend: Option<Backend>,
    },
    /// Lab PKI: CA, server and client certificates per key type, CRLs and negative-test certificates.
    Pki {
        #[command(subcommand)]
        command: PkiCommand,
    },
    /// TLS tools for external servers.
    Tls {
        #[command(subcommand)]
        command: TlsCommand,
    },
}

#[derive(Subcommand)]
pub(crate) enum TlsCommand {
    /// Survey what a TLS server accepts: versions, catalogue suites, certificate chain, client
    /// authentication, resumption, renegotiation, KeyUpdate, with IEC 62351-3 verdicts
    /// (docs/tls-survey.md). Exit 0 when the survey ran, 1 when the target cannot be surveyed
    /// (nothing listening, not TLS, no answer, no handshake), 2 on bad arguments.
    Survey {
        /// The server, HOST:PORT (3782 for MMS over TLS).
        target: String,
        /// Client TLS settings (docs/tls.md): `ca`, `cert`, `key`, optional `server_name`.
        /// Without it (or without `ca` in it) the server's chain is read but not verified and
        /// every probe runs with verification off; without `cert`/`key` the probes that need a
        /// client certificate the server accepts say so.
        #[arg(long)]
        tls: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Only the suites whose IEC 62351 status is mandatory or recommended.
        #[arg(long)]
        quick: bool,
        /// Per-connection timeout, ms.
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
        /// Pause between two connections, ms.
        #[arg(long, default_value_t = 100)]
        pause_ms: u64,
        /// Skip the scan of every IANA suite, group and known weakness (docs/tls-survey.md, "Scan").
        #[arg(long)]
        no_scan: bool,
        /// Most connections the scan may make (sequential).
        #[arg(long, default_value_t = 500)]
        scan_max_connections: u32,
        /// Pause between two scan connections, ms (each carries one ClientHello and is closed
        /// after the server's first flight).
        #[arg(long, default_value_t = 20)]
        scan_pause_ms: u64,
        /// Connections at once for the suite probes (1: sequential, the gentle default for an
        /// IED with few connection slots).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=32))]
        parallel: u16,
    },
}

#[derive(Subcommand)]
pub(crate) enum PkiCommand {
    /// Create (or complete) the PKI under DIR; existing files are kept.
    Init {
        /// Root directory; one subdirectory per key type (rsa2048/, p256/, ...).
        #[arg(long)]
        dir: PathBuf,
        /// RSA key sizes (1024, 2048, 3072, 4096, 8192); `none` for no RSA. 8192-bit keys take a while.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "1024,2048,3072,4096,8192"
        )]
        rsa: Vec<String>,
        /// ECDSA curves (p256, p384); `none` for no ECDSA.
        #[arg(long, value_delimiter = ',', default_value = "p256,p384")]
        ecdsa: Vec<String>,
        /// ML-DSA parameter sets (44, 65; FIPS 204); needs the binary built with OpenSSL 3.5
        /// (`make build-ossl35`: target/ossl35/release/gander). Default none.
        #[arg(long, value_delimiter = ',', default_value = "none")]
        mldsa: Vec<String>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Backend {
    Openssl,
    Gnutls,
    Rustls,
    RustlsAwslc,
    Openssl35,
}

impl From<Backend> for BackendKind {
    fn from(b: Backend) -> Self {
        match b {
            Backend::Openssl => BackendKind::Openssl,
            Backend::Gnutls => BackendKind::Gnutls,
            Backend::Rustls => BackendKind::Rustls,
            Backend::RustlsAwslc => BackendKind::RustlsAwslc,
            Backend::Openssl35 => BackendKind::Openssl35,
        }
    }
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Suites { json, backend } => match suites_cmd(json, backend.map(Into::into)) {
            // `gander suites | head` is not an error.
            Err(e)
                if e.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
            {
                Ok(ExitCode::SUCCESS)
            }
            r => r,
        },
        Command::Pki {
            command:
                PkiCommand::Init {
                    dir,
                    rsa,
                    ecdsa,
                    mldsa,
                },
        } => pki_init(dir, rsa, ecdsa, mldsa),
        Command::Tls {
            command:
                TlsCommand::Survey {
                    target,
                    tls,
                    json,
                    quick,
                    timeout_ms,
                    pause_ms,
                    no_scan,
                    scan_max_connections,
                    scan_pause_ms,
                    parallel,
                },
        } => {
            let scan = (!no_scan).then_some((scan_max_connections, scan_pause_ms));
            survey_cmd(
                &target,
                tls.as_deref(),
                json,
                quick,
                (timeout_ms, pause_ms),
                scan,
                usize::from(parallel),
            )
        }
    }
}

fn survey_cmd(
    target: &str,
    tls: Option<&std::path::Path>,
    json: bool,
    quick: bool,
    (timeout_ms, pause_ms): (u64, u64),
    scan: Option<(u32, u64)>,
    parallel: usize,
) -> anyhow::Result<ExitCode> {
    use gander_tls::survey::{self, SurveyError, SurveyOptions};
    use std::net::ToSocketAddrs;
    use std::time::Duration;
    let addr = target
        .to_socket_addrs()
        .with_context(|| format!("target {target:?}: expected HOST:PORT"))?
        .next()
        .with_context(|| format!("target {target:?} resolves to no address"))?;
    let profile = match tls {
        Some(tls) => gander_tls::TlsProfile::from_file(tls)
            .with_context(|| format!("--tls {}", tls.display()))?,
        // No credentials, no trust anchors: what sslscan and testssl.sh start from.
        None => {
            gander_tls::TlsProfile::from_toml("").context("the survey's default client settings")?
        }
    };
    // Before the scan touches the device: an unusable profile is exit 2 with nothing sent.
    let profile = survey::client_for_survey(&profile)?;
    anyhow::ensure!(timeout_ms > 0, "--timeout-ms must be at least 1");
    let opts = SurveyOptions {
        timeout: Duration::from_millis(timeout_ms),
        pause: Duration::from_millis(pause_ms),
        quick,
        round: Some(std::sync::Arc::new(gander_client::detect::MmsRound)),
        parallel,
    };
    let scan_opts = scan.map(|(cap, pause_ms)| gander_tls::scan::ScanOptions {
        timeout: opts.timeout,
        pause: Duration::from_millis(pause_ms),
        max_connections: cap,
        server_name: gander_tls::scan::server_name_for(target, profile.server_name.as_deref()),
        client_identity: profile.cert.clone().zip(profile.key.clone()),
        ..Default::default()
    });
    // The scan first: the library probes then skip the catalogue suites it found refused.
    let mut scan_error = None;
    let scanned = scan_opts
        .as_ref()
        .and_then(|so| match gander_tls::scan::scan(addr, so) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("gander: scan not done: {e}");
                scan_error = Some(e);
                None
            }
        });
    // A port that answered the scan's ClientHello with nothing at all: the library probes would
    // each wait the timeout out again. One clear request tells a plain port; then stop.
    let result = match scan_error {
        Some(gander_tls::scan::ScanError::Silent { .. }) => Err(survey::silent_port(addr, &opts)),
        _ => survey::survey_after_scan(addr, &profile, &opts, scanned.as_ref()),
    };
    match result {
        Ok(mut s) => {
            if let Some(r) = scanned {
                survey::attach_scan(&mut s, r);
            }
            if json {
                crate::out(serde_json::to_string_pretty(&s)?);
            } else {
                crate::out(survey::render(&s).trim_end());
                if let Some(r) = &s.scan {
                    crate::out(gander_tls::scan::render::render(r).trim_end());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ SurveyError::Profile(_)) => Err(e.into()),
        // The target cannot be surveyed (exit 1). With --json, stdout still carries one JSON
        // document: the error, its kind, and whatever was learned (the scan needs no library:
        // for a server of 3DES only, which Debian's OpenSSL cannot offer, it still tells what
        // the server accepts).
        Err(e) => {
            eprintln!("gander: {e}");
            if json {
                let v = serde_json::json!({
                    "target": target,
                    "error": e.to_string(),
                    "error_kind": survey_error_kind(&e),
                    "scan_error": scan_error.as_ref().map(|e| e.to_string()),
                    "scan": scanned,
                });
                crate::out(serde_json::to_string_pretty(&v)?);
            } else if let Some(r) = scanned {
                crate::out(gander_tls::scan::render::render(&r).trim_end());
                for v in &r.verdicts {
                    crate::out(format!(
                        "  {:<4} {:<24} {}: {}",
                        v.level.word(),
                        v.id,
                        v.requirement,
                        v.detail
                    ));
                }
            }
            Ok(ExitCode::from(1))
        }
    }
}

/// A stable name of a survey error for the JSON document of exit 1.
fn survey_error_kind(e: &gander_tls::survey::SurveyError) -> &'static str {
    use gander_tls::survey::SurveyError;
    match e {
        SurveyError::Refused { .. } => "refused",
        SurveyError::Timeout { .. } => "timeout",
        SurveyError::NotTls { .. } => "not-tls",
        SurveyError::NoHandshake { .. } => "no-handshake",
        SurveyError::Profile(_) => "profile",
        SurveyError::Setup(_) => "setup",
        _ => "other",
    }
}

fn supports(b: BackendKind, s: &CipherSuite) -> bool {
    backend::capabilities(b).suites.contains(&s.code)
}

fn versions(s: &CipherSuite) -> String {
    let v: Vec<&str> = s.versions().map(|v| v.short()).collect();
    v.join(",")
}

fn suites_cmd(json: bool, only: Option<BackendKind>) -> anyhow::Result<ExitCode> {
    let list: Vec<&CipherSuite> = suites::CATALOGUE
        .iter()
        .filter(|s| only.is_none_or(|b| supports(b, s)))
        .collect();
    let mut out = std::io::stdout().lock();
    if json {
        let libs: Vec<_> = BackendKind::ALL
            .iter()
            .map(|b| {
                let c = backend::capabilities(*b);
                serde_json::json!({
                    "backend": b.name(), "library": c.library,
                    "versions": c.versions.iter().map(|v| v.short()).collect::<Vec<_>>(),
                    "renegotiation": c.renegotiation, "key_update": c.key_update,
                    "groups": c.groups.iter().map(|g| g.name()).collect::<Vec<_>>(),
                    "signature_schemes": c.signature_schemes,
                    "in_process": c.in_process,
                })
            })
            .collect();
        let rows: Vec<_> = list
            .iter()
            .map(|s| {
                let backends: Vec<&str> =
                    BackendKind::ALL.iter().filter(|b| supports(**b, s)).map(|b| b.name()).collect();
                serde_json::json!({
                    "name": s.name, "code": format!("0x{:04X}", s.code),
                    "versions": s.versions().map(|v| v.short()).collect::<Vec<_>>(),
                    "key_exchange": s.kx.name(), "auth": s.kx.auth(), "cipher": s.cipher, "mac": s.mac,
                    "forward_secrecy": s.forward_secrecy(), "iec62351": s.iec.name(),
                    "iec62351_source": s.iec_source, "rse2019": s.rse, "sandia2023": s.sandia,
                    "backends": backends,
                })
            })
            .collect();
        let doc = serde_json::json!({ "backends": libs, "suites": rows });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for b in BackendKind::ALL {
        let c = backend::capabilities(b);
        if !c.in_process {
            writeln!(
                out,
                "# {:<12} {}: not in this binary; run target/ossl35/release/gander suites",
                b.name(),
                c.library
            )?;
            continue;
        }
        let v: Vec<&str> = c.versions.iter().map(|v| v.short()).collect();
        let g: Vec<&str> = c.groups.iter().map(|g| g.name()).collect();
        writeln!(
            out,
            "# {:<12} {} (TLS {})\n#              groups: {}\n#              TLS 1.3 signature schemes: {}",
            b.name(),
            c.library,
            v.join(", "),
            if g.is_empty() {
                "library defaults (not selectable here)".to_string()
            } else {
                g.join(", ")
            },
            if c.signature_schemes.is_empty() {
                "library defaults (not listed here)".to_string()
            } else {
                c.signature_schemes.join(", ")
            }
        )?;
    }
    writeln!(
        out,
        "{:<46} {:<6} {:<11} {:<11} {:<17} {:<6} {:<3} {:<11} {:<4} {:<6} {:<7} {:<6} {:<6}",
        "SUITE",
        "CODE",
        "TLS",
        "KX",
        "CIPHER",
        "MAC",
        "FS",
        "IEC62351",
        "RSE",
        "SANDIA",
        "OPENSSL",
        "GNUTLS",
        "RUSTLS"
    )?;
    let yes = |b| if b { "yes" } else { "-" };
    for s in list {
        writeln!(
            out,
            "{:<46} {:<6} {:<11} {:<11} {:<17} {:<6} {:<3} {:<11} {:<4} {:<6} {:<7} {:<6} {:<6}",
            s.name,
            format!("{:04X}", s.code),
            versions(s),
            s.kx.name(),
            s.cipher,
            s.mac,
            yes(s.forward_secrecy()),
            s.iec.name(),
            s.rse.unwrap_or("-"),
            s.sandia.unwrap_or("-"),
            yes(supports(BackendKind::Openssl, s)),
            yes(supports(BackendKind::Gnutls, s)),
            yes(supports(BackendKind::Rustls, s)),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn pki_init(
    dir: PathBuf,
    rsa: Vec<String>,
    ecdsa: Vec<String>,
    mldsa: Vec<String>,
) -> anyhow::Result<ExitCode> {
    let mut specs = Vec::new();
    for r in rsa
        .iter()
        .filter(|r| !r.eq_ignore_ascii_case("none") && !r.is_empty())
    {
        let s: KeySpec = format!("rsa{}", r.trim().trim_start_matches("rsa"))
            .parse()
            .map_err(anyhow::Error::msg)?;
        specs.push(s);
    }
    for e in ecdsa
        .iter()
        .filter(|e| !e.eq_ignore_ascii_case("none") && !e.is_empty())
    {
        let s: KeySpec = e.parse().map_err(anyhow::Error::msg)?;
        if matches!(s, KeySpec::Rsa(_)) {
            anyhow::bail!("--ecdsa takes p256 or p384, not {e:?}");
        }
        specs.push(s);
    }
    for m in mldsa
        .iter()
        .filter(|m| !m.eq_ignore_ascii_case("none") && !m.is_empty())
    {
        let s: KeySpec = format!(
            "mldsa{}",
            m.trim().to_ascii_lowercase().trim_start_matches("mldsa")
        )
        .parse()
        .map_err(anyhow::Error::msg)?;
        specs.push(s);
    }
    let mut out = std::io::stdout().lock();
    for spec in specs {
        let r = pki::init(&dir, &[spec])
            .with_context(|| format!("PKI for {spec} in {}", dir.display()))?;
        for rep in r {
            writeln!(
                out,
                "{}: {} ({} new files)",
                spec,
                rep.set.dir.display(),
                rep.created.len()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
