//! `gander run`, `gander scenarios`, `gander report` (argument parsing only; the work is in
//! `gander_platform::{scenario, manager, report}`).
use anyhow::{anyhow, Context};
use clap::Subcommand;
use gander_platform::builtin;
use gander_platform::manager::{self, RunOptions};
use gander_platform::report;
use gander_platform::results::{self, RunResults};
use gander_platform::scenario::Scenario;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run a scenario matrix (a built-in name or a TOML file) and write results.json,
    /// samples.csv, summary.md and report.html. No argument: `rse2019 --quick` on loopback.
    Run {
        /// Built-in name (see `gander scenarios`) or path to a scenario file.
        scenario: Option<String>,
        /// Same rows, smaller counts and a shorter period (the file's [quick] table).
        #[arg(long)]
        quick: bool,
        /// Output directory (default: out/run-<scenario>[-quick]).
        #[arg(long)]
        out: Option<PathBuf>,
        /// IEC 61850-5 transfer-time class for the verdicts: TT1..TT6, trip, fast, medium, low.
        #[arg(long, default_value = "TT3")]
        class: String,
        /// Keep the cases already completed in DIR/scenarios/ and run only the rest.
        #[arg(long)]
        resume: bool,
        /// Lab PKI directory, reused across runs (default: ~/.cache/gander/pki).
        #[arg(long)]
        pki: Option<PathBuf>,
        /// Python with pyiec61850-ng for the libiec61850 peer (default: the .venv/bin/python
        /// beside the interop/ directory that holds the peer driver; GANDER_INTEROP_DIR names
        /// that directory, else it is found from the executable's or the source tree's location).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Drive libiec61850 (the `stacks` scenario) through the Python driver instead of the
        /// compiled harness that `make cref` builds; the figures then include the interpreter.
        #[arg(long)]
        libiec61850_python: bool,
        /// Print the resolved cases and exit.
        #[arg(long)]
        dry_run: bool,
        /// Run against an external server instead of local pairs: a TOML file with the keys of
        /// a scenario's [target] table (address, tls, rcb, clocks_synchronised;
        /// docs/scenarios.md, "External targets").
        #[arg(long)]
        target: Option<PathBuf>,
    },
    /// List the built-in scenarios.
    Scenarios,
    /// The request/response peers `gander run` starts for the Sandia interaction (internal).
    #[command(hide = true)]
    RunPeer {
        /// server or client
        role: String,
        #[arg(long)]
        config: PathBuf,
    },
    /// Time one handshake floor and print it as JSON (internal: how `gander run` gets the floors
    /// of `openssl35` rows from the binary that links OpenSSL 3.5).
    #[command(hide = true)]
    RunFloor {
        /// Lab PKI root.
        #[arg(long)]
        pki: PathBuf,
        /// The floor's inputs (`gander_platform::floor::FloorSpec` as JSON).
        #[arg(long)]
        spec: String,
    },
    /// Re-render summary.md, samples.csv and report.html of a run directory from its results.
    Report {
        dir: PathBuf,
        /// Transfer-time class for the verdicts (default: the run's).
        #[arg(long)]
        class: Option<String>,
    },
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::RunPeer { role, config } => {
            let cfg = gander_peers::reqresp::load(&config)?;
            match role.as_str() {
                "server" => gander_peers::reqresp::server(&cfg)?,
                "client" => gander_peers::reqresp::client(&cfg)?,
                other => return Err(anyhow!("unknown role {other:?} (server or client)")),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::RunFloor { pki, spec } => {
            let spec: gander_platform::floor::FloorSpec =
                serde_json::from_str(&spec).context("--spec")?;
            let key: gander_tls::pki::KeySpec = spec.key.parse().map_err(anyhow::Error::msg)?;
            let set = gander_tls::pki::PkiSet::paths(&pki, key);
            let floor = gander_platform::floor::FloorMeter::default().floor_of(&spec, &set)?;
            crate::out(serde_json::to_string(&floor)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Scenarios => {
            crate::out(format!("{:<12} {:<26} {}", "NAME", "NEEDS", "WHAT"));
            for b in builtin::BUILTINS {
                let s = Scenario::from_str(b.name, b.toml, false)?;
                crate::out(format!(
                    "{:<12} {:<26} {} ({} cases)",
                    b.name,
                    b.needs,
                    b.summary,
                    s.cases.len()
                ));
            }
            crate::out(format!(
                "\n`gander run` with no argument runs `{} --quick`.",
                builtin::DEFAULT
            ));
            Ok(ExitCode::SUCCESS)
        }
        Command::Report { dir, class } => {
            let mut run = RunResults::load(&dir)?;
            if let Some(c) = class {
                run.class = results::TransferClass::by_name(&c)?;
            }
            let path = report::write_all(&run, &dir)?;
            crate::out(format!("report: {}", path.display()));
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            scenario,
            quick,
            out,
            class,
            resume,
            pki,
            python,
            libiec61850_python,
            dry_run,
            target,
        } => {
            let (name, quick) = match scenario {
                Some(s) => (s, quick),
                None => (builtin::DEFAULT.to_string(), true),
            };
            let mut sc = Scenario::load(&name, quick)?;
            if let Some(f) = target {
                let spec = gander_platform::target::TargetSpec::load(&f)?;
                sc.set_target(spec)?;
            }
            let class = results::TransferClass::by_name(&class)?;
            if dry_run {
                for c in &sc.cases {
                    let tls = c
                        .tls
                        .as_ref()
                        .map(|t| {
                            format!(
                                "{} TLS {} {} ({})",
                                t.backend,
                                t.version.short(),
                                t.suite.name,
                                t.backend_reason
                            )
                        })
                        .unwrap_or_else(|| "cleartext".into());
                    let group = c
                        .tls
                        .as_ref()
                        .and_then(|t| t.group)
                        .map(|g| format!(" group={g}"))
                        .unwrap_or_default();
                    let skip = c
                        .skip
                        .as_ref()
                        .map(|w| format!(" SKIPPED: {w}"))
                        .unwrap_or_default();
                    crate::out(format!("{:<28} {} {} {} {}B/{}ms conn={} reports={} warmup={} link={} resumption={}", c.name(), c.stack(), tls, c.key, c.params.payload, c.params.period_ms, c.params.connections, c.params.reports, c.params.warmup, c.link.name, c.params.session_resumption.name()) + &group + &skip);
                }
                return Ok(ExitCode::SUCCESS);
            }
            let out = out.unwrap_or_else(|| {
                PathBuf::from(format!(
                    "out/run-{}{}",
                    gander_platform::scenario::file_stem(&sc.name),
                    if quick { "-quick" } else { "" }
                ))
            });
            let pki_dir = pki.unwrap_or_else(|| {
                std::env::var_os("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                    .unwrap_or_else(|| PathBuf::from("out"))
                    .join("gander/pki")
            });
            let opts = RunOptions {
                out: out.clone(),
                pki_dir,
                class,
                resume,
                gander_exe: std::env::current_exe().context("locating the gander binary")?,
                ossl35_exe: Some(ossl35_exe()),
                python: python.clone(),
                // Located when a libiec61850 case needs it, independently of the working
                // directory (`gander_platform::assets`).
                libiec61850_driver: None,
                libiec61850_python,
                libiec61850_cref: None,
                ready_timeout: Duration::from_secs(20),
                progress: true,
            };
            let started = std::time::Instant::now();
            let run = manager::run(&sc, &opts)?;
            let path = report::write_all(&run, &out)?;
            let failed: Vec<&str> = run
                .scenarios
                .iter()
                .filter(|s| s.status == "failed")
                .map(|s| s.name.as_str())
                .collect();
            let skipped = run
                .scenarios
                .iter()
                .filter(|s| s.status == "skipped")
                .count();
            for t in &run.targets {
                crate::out(format!(
                    "target: {} -> {} (limit {}x): {}",
                    t.what,
                    t.ratio
                        .map(|r| format!("{r:.2}x"))
                        .unwrap_or_else(|| "-".into()),
                    t.limit,
                    t.verdict
                ));
            }
            crate::out(format!(
                "{} of {} cases ok{} in {:.1} s",
                run.scenarios.len() - failed.len() - skipped,
                run.scenarios.len(),
                if skipped > 0 {
                    format!(", {skipped} skipped (reasons in the report)")
                } else {
                    String::new()
                },
                started.elapsed().as_secs_f64()
            ));
            if !failed.is_empty() {
                crate::out(format!("failed: {}", failed.join(", ")));
            }
            crate::out(format!("report: {}", path.display()));
            Ok(if failed.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}

/// The binary built with OpenSSL 3.5: `GANDER_OSSL35`, else `target/ossl35/release/gander` of
/// the target directory this binary lives in (`make build-ossl35`).
fn ossl35_exe() -> PathBuf {
    if let Some(p) = std::env::var_os("GANDER_OSSL35") {
        return PathBuf::from(p);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            // .../target/release/gander -> .../target/ossl35/release/gander
            let target = exe.parent()?.parent()?;
            Some(target.join("ossl35/release/gander"))
        })
        .unwrap_or_else(|| PathBuf::from("target/ossl35/release/gander"))
}
