//! The manager: runs a scenario's cases as separate server and client processes, as the RSE
//! paper's 62351IMPGR does, and turns their event logs into results.
//!
//! For each case: generate (or reuse) the PKI of its key type, write the peers' TOML configs,
//! start the server, wait for its `READY <addr>` line (not a fixed sleep, unlike the paper's
//! 200 ms), run the client to completion, stop the server, merge both event logs, discard and
//! count the warm-up, time the floor, and store `DIR/scenarios/<case>.json`. A case that fails
//! is recorded with its reason and the run goes on. With `resume`, cases whose file already says
//! `ok` are not run again. The cleartext baseline of each distinct exchange is run once per run.

use crate::accounting::{self, OwnCost};
use crate::floor::FloorMeter;
use crate::link::{LinkEnv, LinkError};
use crate::results::{
    self, extract, read_events, ResultsError, RunResults, Samples, ScenarioResult, TransferClass,
};
use crate::rt_accounting;
use crate::scenario::{file_stem, Case, Interaction, Resumption, Scenario, Stack};
use gander_tls::backend::{self, BackendKind};
use gander_tls::pki::{self, KeySpec, PkiSet};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};

/// How to start the peers and where to put things.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Output directory: results.json, the per-case files, the report and the peers' work files.
    pub out: PathBuf,
    /// Lab PKI root (kept across runs: RSA-8192 keys take a while to generate).
    pub pki_dir: PathBuf,
    /// The IEC 61850-5 transfer-time class the verdicts judge against.
    pub class: TransferClass,
    /// Keep cases whose file under `scenarios/` already says `ok` (do not run them again).
    pub resume: bool,
    /// The `gander` binary that provides `mms server|client`.
    pub gander_exe: PathBuf,
    /// The `gander` binary built with OpenSSL 3.5 (`make build-ossl35`), which runs the peers,
    /// floors and ML-DSA key generation of `openssl35` rows when `gander_exe` links an older
    /// OpenSSL. `None` or missing: those rows fail with the command that builds it.
    pub ossl35_exe: Option<PathBuf>,
    /// Python with pyiec61850-ng, and the libiec61850 peer driver (the `stacks` scenario).
    /// `None`: found when a libiec61850 case runs, by [`crate::assets`] (the driver in the
    /// repository's `interop/`, the Python in the `.venv` beside it), whatever the working
    /// directory.
    pub python: Option<PathBuf>,
    /// The libiec61850 peer driver (`interop/imp_libiec61850_peer.py`); `None`: see `python`.
    /// Setting it selects the Python driver, as [`RunOptions::libiec61850_python`] does.
    pub libiec61850_driver: Option<PathBuf>,
    /// Drive libiec61850 through the Python driver instead of the compiled harness: the
    /// comparison then includes the interpreter's cost (how `stacks` was measured before the
    /// harness existed).
    pub libiec61850_python: bool,
    /// The compiled libiec61850 peer (`make cref`); `None`: found by
    /// [`crate::assets::libiec61850_cref`].
    pub libiec61850_cref: Option<PathBuf>,
    /// How long a server may take to print `READY`.
    pub ready_timeout: Duration,
    /// Show a progress bar (only when stderr is a terminal).
    pub progress: bool,
}

/// Why a run, or one of its cases, failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManagerError {
    /// An output or work directory could not be created.
    #[error("cannot create {}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A directory could not be made absolute.
    #[error("{}", path.display())]
    Canonicalize {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The lab PKI could not be generated.
    #[error("PKI generation under {}", dir.display())]
    Pki {
        /// The PKI root.
        dir: PathBuf,
        /// What the generator said.
        #[source]
        source: gander_tls::TlsError,
    },
    /// A case's result could not be serialised (not expected: it is plain data).
    #[error("cannot serialise a case's result")]
    Serialise(#[from] serde_json::Error),
    /// Results or event logs could not be read or written.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// Link emulation failed for this case.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// The link emulation environment could not be set up (kept for the rest of the run).
    #[error(transparent)]
    LinkSetup(Arc<LinkError>),
    /// The cleartext baseline this case shares with others failed.
    #[error("cleartext baseline failed")]
    Baseline(#[source] Arc<ManagerError>),
    /// One block of an interleaved RT measurement failed.
    #[error("RT block {block} ({what})")]
    RtBlock {
        /// The block's index.
        block: u32,
        /// `tls` or `clear`.
        what: &'static str,
        /// Why.
        #[source]
        source: Box<ManagerError>,
    },
    /// A runtime asset (the libiec61850 driver or its Python) was not found.
    #[error(transparent)]
    Asset(#[from] crate::assets::NotFound),
    /// The libiec61850 peer driver given does not exist.
    #[error("libiec61850 peer driver {} not found", .0.display())]
    DriverMissing(PathBuf),
    /// The Python given for the libiec61850 peer does not exist.
    #[error("Python {} not found (make venv)", .0.display())]
    PythonMissing(PathBuf),
    /// A peer's config or stderr file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The server process could not be started.
    #[error("cannot start the server ({})", exe.display())]
    SpawnServer {
        /// The program.
        exe: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The client process could not be started.
    #[error("cannot start the client")]
    SpawnClient(#[source] std::io::Error),
    /// A peer's stdout was not captured (not expected).
    #[error("{0} stdout not captured")]
    NoStdout(&'static str),
    /// The server exited before printing `READY`.
    #[error("{peer} exited before READY: {stderr}")]
    ExitedBeforeReady {
        /// `server`.
        peer: String,
        /// The last lines of its stderr.
        stderr: String,
    },
    /// The server did not print `READY` in time.
    #[error("{peer} not READY within {timeout:?}: {stderr}")]
    ReadyTimeout {
        /// `server`.
        peer: String,
        /// How long it was given.
        timeout: Duration,
        /// The last lines of its stderr.
        stderr: String,
    },
    /// The client did not finish in time (it was stopped).
    #[error("client did not finish within {secs} s")]
    ClientTimeout {
        /// How long it was given, in seconds.
        secs: u64,
    },
    /// Waiting for the client failed.
    #[error("waiting for the client")]
    Wait(#[source] std::io::Error),
    /// A `[target]` case could not be set up.
    #[error("target: {0}")]
    Target(String),
    /// The client exited with an error.
    #[error("client failed: {stderr}")]
    ClientFailed {
        /// The last lines of its stderr.
        stderr: String,
    },
    /// An `openssl35` row or an ML-DSA key needs the binary built with OpenSSL 3.5.
    #[error("{what} needs the gander binary built with OpenSSL 3.5 ({}): run `make build-ossl35`", path.display())]
    Ossl35Missing {
        /// What needed it.
        what: String,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A helper run of the OpenSSL 3.5 binary failed (PKI or floor).
    #[error("{} {args}: {stderr}", exe.display())]
    Helper {
        /// The binary.
        exe: PathBuf,
        /// Its arguments.
        args: String,
        /// What it said (or why it could not start).
        stderr: String,
    },
}

/// The binary that runs `backend`'s peers: this one, or for `openssl35` in a binary linking an
/// older OpenSSL, the one built with OpenSSL 3.5.
fn exe_for(backend: Option<BackendKind>, opts: &RunOptions) -> Result<PathBuf, ManagerError> {
    match backend {
        Some(b) if !b.in_process() => ossl35(opts, &format!("backend {}", b.name())),
        _ => Ok(opts.gander_exe.clone()),
    }
}

fn ossl35(opts: &RunOptions, what: &str) -> Result<PathBuf, ManagerError> {
    let path = opts
        .ossl35_exe
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/ossl35/release/gander"));
    if path.is_file() {
        Ok(path)
    } else {
        Err(ManagerError::Ossl35Missing {
            what: what.to_string(),
            path,
        })
    }
}

/// Runs the OpenSSL 3.5 binary with `args` and returns its stdout.
fn helper(exe: &Path, args: &[String]) -> Result<String, ManagerError> {
    let err = |stderr: String| ManagerError::Helper {
        exe: exe.to_path_buf(),
        args: args.join(" "),
        stderr,
    };
    let out = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| err(e.to_string()))?;
    if !out.status.success() {
        return Err(err(String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The floor of an `openssl35` row, timed by the binary that links OpenSSL 3.5.
fn floor_elsewhere(
    case: &Case,
    opts: &RunOptions,
) -> Result<Option<crate::floor::Floor>, ManagerError> {
    let Some(spec) = crate::floor::FloorSpec::of(case) else {
        return Ok(None);
    };
    let exe = ossl35(opts, "the openssl35 floor")?;
    let args = vec![
        "run-floor".to_string(),
        "--pki".to_string(),
        opts.pki_dir.to_string_lossy().into_owned(),
        "--spec".to_string(),
        serde_json::to_string(&spec)?,
    ];
    let out = helper(&exe, &args)?;
    Ok(Some(serde_json::from_str(out.trim())?))
}

/// What a peer process is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Server,
    Client,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Server => "server",
            Role::Client => "client",
        }
    }
}

/// A child process that is killed if still running when dropped (no orphans on any error path).
struct Peer {
    child: Child,
    name: String,
}

impl Peer {
    /// SIGTERM, a grace period for flushing the event log, then SIGKILL.
    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let pid = self.child.id().to_string();
        let _ = Command::new("kill")
            .args(["-TERM", &pid])
            .stderr(Stdio::null())
            .status();
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Result of one run of a pair of peers.
struct PairRun {
    samples: Samples,
    client_summary: Option<serde_json::Value>,
}

/// Runs the whole scenario; returns the results (also written under `opts.out`).
pub fn run(scenario: &Scenario, opts: &RunOptions) -> Result<RunResults, ManagerError> {
    let started = Instant::now();
    let started_unix = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let create = |dir: &Path, path: &Path| {
        std::fs::create_dir_all(dir).map_err(|source| ManagerError::CreateDir {
            path: path.to_path_buf(),
            source,
        })
    };
    create(&opts.out.join("scenarios"), &opts.out)?;
    create(&opts.out.join("work"), &opts.out)?;
    create(&opts.pki_dir, &opts.pki_dir)?;
    let canonical = |path: &Path| {
        std::fs::canonicalize(path).map_err(|source| ManagerError::Canonicalize {
            path: path.to_path_buf(),
            source,
        })
    };
    // The peers resolve relative paths against their config file's directory: give them absolute ones.
    let mut abs = opts.clone();
    abs.out = canonical(&opts.out)?;
    abs.pki_dir = canonical(&opts.pki_dir)?;
    let opts = &abs;
    let dir = &opts.out;
    let machine =
        serde_json::to_value(gander_measure::machine::Machine::describe()).unwrap_or_default();

    let mut notes = Vec::new();
    // Keys first: every key type the scenario needs, generated once and kept.
    let mut specs: Vec<KeySpec> = scenario
        .cases
        .iter()
        .filter(|c| c.tls.is_some() && c.skip.is_none())
        .map(|c| c.key.0)
        .collect();
    specs.sort_by_key(|s| s.dir_name());
    specs.dedup();
    if !specs.is_empty() {
        let missing: Vec<String> = specs
            .iter()
            .filter(|s| !PkiSet::paths(&opts.pki_dir, **s).server_key.exists())
            .map(|s| s.dir_name())
            .collect();
        if !missing.is_empty() {
            eprintln!(
                "gander run: generating the lab PKI for {} under {} (once; RSA-8192 takes a while)",
                missing.join(", "),
                opts.pki_dir.display()
            );
        }
        let (here, there): (Vec<KeySpec>, Vec<KeySpec>) = specs
            .iter()
            .partition(|s| !s.is_ml_dsa() || backend::linked_openssl35());
        pki::init(&opts.pki_dir, &here).map_err(|source| ManagerError::Pki {
            dir: opts.pki_dir.clone(),
            source,
        })?;
        // ML-DSA certificates need OpenSSL 3.5: the binary that links it makes them.
        let missing_pq: Vec<KeySpec> = there
            .into_iter()
            .filter(|s| !PkiSet::paths(&opts.pki_dir, *s).crl_revoked.exists())
            .collect();
        if !missing_pq.is_empty() {
            let names: Vec<String> = missing_pq.iter().map(|s| s.dir_name()).collect();
            match ossl35(opts, &format!("the {} certificates", names.join(", "))) {
                Ok(exe) => {
                    let args = vec![
                        "pki".to_string(),
                        "init".into(),
                        "--dir".into(),
                        opts.pki_dir.to_string_lossy().into_owned(),
                        "--rsa".into(),
                        "none".into(),
                        "--ecdsa".into(),
                        "none".into(),
                        "--mldsa".into(),
                        names.join(","),
                    ];
                    if let Err(e) = helper(&exe, &args) {
                        notes.push(format!(
                            "ML-DSA PKI not generated: {}",
                            crate::error_chain(&e)
                        ));
                    }
                }
                Err(e) => notes.push(crate::error_chain(&e)),
            }
        }
    }

    let bar = progress_bar(scenario.cases.len() as u64, opts.progress);
    let mut floors = FloorMeter::default();
    // gander's own cost: measured at the first row that needs it (`None` inside: it failed).
    let mut own: Option<Option<OwnCost>> = None;
    let mut baselines: HashMap<String, Result<Samples, Arc<ManagerError>>> = HashMap::new();
    let mut out: Vec<ScenarioResult> = Vec::new();
    let mut link_env: Option<Result<LinkEnv, Arc<LinkError>>> = None;
    for (i, case) in scenario.cases.iter().enumerate() {
        let file = dir
            .join("scenarios")
            .join(format!("{}.json", case.file_stem()));
        if opts.resume {
            if let Some(prev) = load_done(&file) {
                progress_line(
                    &bar,
                    i,
                    scenario.cases.len(),
                    case.name(),
                    "kept from the previous run",
                );
                out.push(prev);
                continue;
            }
        }
        if let Some(b) = &bar {
            b.set_message(case.name().to_string());
        }
        let t = Instant::now();
        let mut r = blank_result(case);
        if let Some(why) = &case.skip {
            r.status = "skipped".into();
            r.skip_reason = Some(why.clone());
            let text = serde_json::to_string(&r)?;
            results::write_atomic(&file, text.as_bytes())?;
            progress_line(
                &bar,
                i,
                scenario.cases.len(),
                case.name(),
                &format!("skipped: {why}"),
            );
            out.push(r);
            continue;
        }
        let outcome = match &scenario.target {
            Some(t) => run_target_case(case, t, opts).map(|r| (r, None, None)),
            None => run_case(case, opts, &mut baselines, &mut link_env),
        };
        match outcome {
            Ok((tls, clear, link)) => {
                if let Some((emulator, achieved)) = link {
                    r.emulator = emulator;
                    r.link_achieved = Some(achieved);
                }
                let mut samples = tls.samples;
                if let Some(c) = clear {
                    samples.rt_clear = c.rt;
                    samples.control_clear = c.control;
                }
                r.client_summary = tls.client_summary;
                // Against a target the server's key and library are unknown: no floor.
                if let Some(tls_choice) = case.tls.as_ref().filter(|_| scenario.target.is_none()) {
                    if tls_choice.backend.in_process() {
                        match floors.floor(case, &PkiSet::paths(&opts.pki_dir, case.key.0)) {
                            Ok(f) => r.floor = f,
                            Err(e) => notes.push(format!(
                                "{}: floor not measured: {}",
                                case.name(),
                                crate::error_chain(&e)
                            )),
                        }
                    } else {
                        match floor_elsewhere(case, opts) {
                            Ok(f) => r.floor = f,
                            Err(e) => notes.push(format!(
                                "{}: floor not measured: {}",
                                case.name(),
                                crate::error_chain(&e)
                            )),
                        }
                    }
                }
                let errors: Vec<String> = samples
                    .errors
                    .iter()
                    .map(|(k, n)| format!("{k} x{n}"))
                    .collect();
                let expect_ht = case.params.connections as usize;
                let got_ht = samples.ht.len();
                r.compute(samples, case.params.warmup as usize);
                if let Some(s) = &r.samples {
                    r.control = crate::control_rows::ControlStats::of(
                        &case.params.control_object,
                        &s.control,
                        &s.control_clear,
                        case.params.warmup as usize,
                    );
                }
                if scenario.target.is_none() {
                    account_row(&mut r, case, opts, &mut own, &mut notes);
                    account_rt_row(&mut r, case, opts, &mut notes);
                }
                if case.params.session_resumption != Resumption::Off
                    && r.resumed_handshakes + 1 < got_ht
                {
                    notes.push(format!(
                        "{}: session resumption ({}) requested, but the peers resumed only {} of {} handshakes",
                        case.name(),
                        case.params.session_resumption.name(),
                        r.resumed_handshakes,
                        got_ht
                    ));
                }
                if got_ht < expect_ht || !errors.is_empty() {
                    let msg = format!(
                        "{got_ht} of {expect_ht} handshakes completed{}",
                        if errors.is_empty() {
                            String::new()
                        } else {
                            format!("; peer errors: {}", errors.join(", "))
                        }
                    );
                    if got_ht == 0 && expect_ht > 0 {
                        r.status = "failed".into();
                        r.error = Some(msg);
                    } else {
                        notes.push(format!("{}: {msg}", case.name()));
                    }
                }
            }
            Err(e) => {
                r.status = "failed".into();
                r.error = Some(crate::error_chain(&e));
            }
        }
        r.duration_s = t.elapsed().as_secs_f64();
        if let Some(e) = &r.error {
            notes.push(format!("{} failed: {e}", case.name()));
        }
        let text = serde_json::to_string(&r)?;
        results::write_atomic(&file, text.as_bytes())?;
        progress_line(&bar, i, scenario.cases.len(), case.name(), &status_line(&r));
        out.push(r);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    results::apply_var_pct(&mut out);
    let mut libraries = BTreeMap::new();
    for b in BackendKind::ALL {
        libraries.insert(
            b.name().to_string(),
            backend::capabilities(b).library.clone(),
        );
    }
    // The library the openssl35 rows ran on, as that binary reports it.
    if !BackendKind::Openssl35.in_process() {
        if let Ok(exe) = ossl35(opts, "openssl35") {
            let args = vec!["suites".to_string(), "--json".into()];
            if let Ok(text) = helper(&exe, &args) {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                    let lib = v["backends"]
                        .as_array()
                        .and_then(|a| a.iter().find(|b| b["backend"] == "openssl35"))
                        .and_then(|b| b["library"].as_str())
                        .map(|l| format!("{l} (binary {})", exe.display()));
                    if let Some(l) = lib {
                        libraries.insert("openssl35".into(), l);
                    }
                }
            }
        }
    }
    if scenario.cases.iter().any(|c| {
        c.params.server_stack == Stack::Libiec61850 || c.params.client_stack == Stack::Libiec61850
    }) {
        libraries.insert(
            "libiec61850".into(),
            format!(
                "libiec61850 1.6 (pyiec61850-ng 1.6.1.10) with its bundled mbedTLS, driven {}",
                if uses_python(opts) {
                    "from Python (ctypes: interop/imp_libiec61850_peer.py)"
                } else {
                    "by the compiled C harness (interop/cref/libiec61850_peer.c)"
                }
            ),
        );
    }
    let targets = results::targets(&out);
    // Each floor is timed with its handshake's library; name them all.
    let mut floor_libs: Vec<String> = Vec::new();
    for f in out.iter().filter_map(|r| r.floor.as_ref()) {
        for l in f.libraries() {
            if !floor_libs.iter().any(|x| x == l) {
                floor_libs.push(l.to_string());
            }
        }
    }
    let run = RunResults {
        gander_version: env!("CARGO_PKG_VERSION").to_string(),
        scenario: scenario.name.clone(),
        description: scenario.description.clone(),
        source: scenario.source.clone(),
        quick: scenario.quick,
        started_unix,
        duration_s: started.elapsed().as_secs_f64(),
        machine,
        libraries,
        floor_library: if floor_libs.is_empty() {
            "-".into()
        } else {
            floor_libs.join("; ")
        },
        class: opts.class.clone(),
        tables: scenario.tables.clone(),
        scenarios: out,
        targets,
        notes,
    };
    Ok(run)
}

/// Fills [`ScenarioResult::ht_accounting`] of a TLS row (`crate::accounting`); gander's own cost
/// is measured once per run, at the first row that needs it. Rows that cannot be accounted
/// (libiec61850, OpenSSL 3.5 binary) are left without; a failed measurement becomes a note.
fn account_row(
    r: &mut ScenarioResult,
    case: &Case,
    opts: &RunOptions,
    own: &mut Option<Option<OwnCost>>,
    notes: &mut Vec<String>,
) {
    let Some(ht) = &r.ht else {
        return;
    };
    if case.tls.is_none() {
        return;
    }
    let own = *own.get_or_insert_with(|| {
        let dir = opts.out.join("work");
        let measured = std::fs::create_dir_all(&dir)
            .map_err(|e| e.to_string())
            .and_then(|()| accounting::own_cost(&dir).map_err(|e| crate::error_chain(&e)));
        match measured {
            Ok(o) => Some(o),
            Err(e) => {
                notes.push(format!("HT not accounted: gander's own cost: {e}"));
                None
            }
        }
    });
    let Some(own) = own else { return };
    let pki = PkiSet::paths(&opts.pki_dir, case.key.0);
    let work = opts.out.join("work").join(case.file_stem());
    let server = peer_config(case, Role::Server, &pki, &work, None, true);
    let client = peer_config(case, Role::Client, &pki, &work, None, true);
    match accounting::account(
        case,
        &server,
        &client,
        ht.median_ms,
        &r.ht_paths,
        r.ht_floor_ms,
        &own,
    ) {
        Ok(a) => r.ht_accounting = Some(a),
        Err(accounting::AccountingError::NotApplicable(_)) => {}
        Err(e) => notes.push(format!(
            "{}: HT not accounted: {}",
            case.name(),
            crate::error_chain(&e)
        )),
    }
}

/// Fills [`ScenarioResult::rt_accounting`] of a TLS report row with cleartext in the same run
/// (`crate::rt_accounting`); rows that cannot be accounted are left without, a failed
/// measurement becomes a note.
fn account_rt_row(r: &mut ScenarioResult, case: &Case, opts: &RunOptions, notes: &mut Vec<String>) {
    let (Some(rt), Some(clear), Some(s)) = (&r.rt, &r.rt_cleartext, &r.samples) else {
        return;
    };
    if case.tls.is_none() || case.params.interaction != Interaction::Report {
        return;
    }
    let pki = PkiSet::paths(&opts.pki_dir, case.key.0);
    let work = opts.out.join("work").join(case.file_stem());
    let server = peer_config(case, Role::Server, &pki, &work, None, true);
    let client = peer_config(case, Role::Client, &pki, &work, None, true);
    let row = rt_accounting::RowRt {
        rt_ms: rt.median_ms,
        clear_ms: clear.median_ms,
        writes: &s.rt_writes,
    };
    match rt_accounting::account(case, &server, &client, row) {
        Ok(a) => r.rt_accounting = Some(a),
        Err(rt_accounting::RtAccountingError::NotApplicable(_)) => {}
        Err(e) => notes.push(format!(
            "{}: RT not accounted: {}",
            case.name(),
            crate::error_chain(&e)
        )),
    }
}

fn status_line(r: &ScenarioResult) -> String {
    if r.status != "ok" {
        return format!("FAILED: {}", r.error.as_deref().unwrap_or("?"));
    }
    let mut s = String::new();
    if let Some(h) = &r.ht {
        let _ = write!(s, "HT median {:.3} ms (n={})", h.median_ms, h.n);
    }
    if let Some(x) = r.ht_floor_ratio {
        let _ = write!(s, " = {x:.2}x floor");
    }
    if let Some(a) = &r.ht_accounting {
        let _ = write!(
            s,
            " = {:.2}x (bare {:.3} + transport {:.3}), gander {:.1}%",
            a.ht_over_bare_transport,
            a.bare_ms,
            a.transport_ms,
            a.gander_share * 100.0
        );
    }
    if let Some(h) = &r.rt {
        let _ = write!(s, ", RT median {:.3} ms (n={})", h.median_ms, h.n);
    }
    if let Some(x) = r.rt_cleartext_ratio {
        let _ = write!(s, " = {x:.2}x cleartext");
    }
    if let Some(a) = &r.rt_accounting {
        let _ = write!(
            s,
            " (transport {:.1} + crypto {} + library {:.1} + gander {:.1} us, gander {:.1}%)",
            a.transport_ms * 1e3,
            a.crypto_ms
                .map_or_else(|| "-".to_string(), |c| format!("{:.1}", c * 1e3)),
            a.library_ms * 1e3,
            a.gander_ms * 1e3,
            a.gander_share * 100.0
        );
    }
    if let Some(g) = &r.report_one_way {
        let _ = write!(
            s,
            ", one-way median {:.3} ms (declared synchronised clocks)",
            g.median_ms
        );
    }
    if let Some(g) = &r.read_rtt {
        let _ = write!(s, ", read RTT median {:.3} ms (n={})", g.median_ms, g.n);
    }
    if let Some(g) = &r.report_interarrival {
        let _ = write!(
            s,
            ", report inter-arrival median {:.3} ms, jitter (sd) {:.3} ms (n={})",
            g.median_ms, g.sd_ms, g.n
        );
    }
    let _ = write!(s, " [{:.1} s]", r.duration_s);
    s
}

fn progress_bar(len: u64, wanted: bool) -> Option<indicatif::ProgressBar> {
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new(len);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} cases, {elapsed} elapsed, ETA {eta}: {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(b)
}

fn progress_line(bar: &Option<indicatif::ProgressBar>, i: usize, n: usize, name: &str, what: &str) {
    let line = format!("[{}/{}] {name}: {what}", i + 1, n);
    match bar {
        Some(b) => {
            b.println(line);
            b.inc(1);
        }
        None => eprintln!("{line}"),
    }
}

fn load_done(file: &Path) -> Option<ScenarioResult> {
    let t = std::fs::read_to_string(file).ok()?;
    let r: ScenarioResult = serde_json::from_str(&t).ok()?;
    (r.status == "ok").then_some(r)
}

/// The result skeleton of a case: its parameters, no measurements yet.
pub fn blank_result(case: &Case) -> ScenarioResult {
    let p = &case.params;
    let tls = case.tls.as_ref();
    let emulator = if case.link.is_loopback() {
        "none (loopback)".to_string()
    } else {
        "userspace relay".to_string()
    };
    ScenarioResult {
        name: p.name.clone(),
        tables: p.table.clone(),
        stack: case.stack(),
        server_stack: p.server_stack.name().into(),
        client_stack: p.client_stack.name().into(),
        backend: tls
            .map(|t| t.backend.name().to_string())
            .unwrap_or_else(|| "none".into()),
        backend_reason: tls.map(|t| t.backend_reason.clone()).unwrap_or_default(),
        library: tls
            .map(|t| t.library.clone())
            .unwrap_or_else(|| "none (cleartext)".into()),
        tls_version: tls
            .map(|t| t.version.short().to_string())
            .unwrap_or_else(|| "none".into()),
        cipher_suite: tls
            .map(|t| t.suite.name.to_string())
            .unwrap_or_else(|| "none".into()),
        group: tls.and_then(|t| t.group).map(|g| g.name().to_string()),
        negotiated_group: None,
        handshake_bytes: None,
        skip_reason: None,
        rse_label: tls.and_then(|t| t.suite.rse.map(str::to_string)),
        sandia_label: tls.and_then(|t| t.suite.sandia.map(str::to_string)),
        key: case.key.to_string(),
        interaction: p.interaction.name().into(),
        payload: p.payload,
        period_ms: p.period_ms,
        connections: p.connections,
        reports: p.reports,
        warmup: p.warmup,
        session_resumption: p.session_resumption.name().into(),
        link: case.link.name.into(),
        emulator,
        link_achieved: None,
        reference: p.reference.clone(),
        status: "ok".into(),
        error: None,
        discarded: Default::default(),
        resumed_handshakes: 0,
        ht: None,
        ht_steps: None,
        rt: None,
        rt_steps: None,
        ht_floor_ms: None,
        floor: None,
        ht_floor_ratio: None,
        ht_accounting: None,
        rt_accounting: None,
        ht_paths: Vec::new(),
        report_interarrival: None,
        read_rtt: None,
        report_one_way: None,
        app_rtt: None,
        rt_cleartext: None,
        rt_cleartext_median_ms: None,
        rt_cleartext_ratio: None,
        rt_blocks: 0,
        rt_cleartext_block_ratios: vec![],
        rt_diff: None,
        control: None,
        client_summary: None,
        duration_s: 0.0,
        samples: None,
    }
}

/// Namespaces the peers run in (link emulation).
struct Net {
    server_ns: String,
    client_ns: String,
}

type LinkInfo = Option<(String, serde_json::Value)>;

/// Runs a case and (once per distinct exchange) its cleartext baseline; with a link profile,
/// both through the emulator, whose achieved delay and rate are measured first.
fn run_case(
    case: &Case,
    opts: &RunOptions,
    baselines: &mut HashMap<String, Result<Samples, Arc<ManagerError>>>,
    link_env: &mut Option<Result<LinkEnv, Arc<LinkError>>>,
) -> Result<(PairRun, Option<Samples>, LinkInfo), ManagerError> {
    let mut _active = None;
    let mut info = None;
    let mut net = None;
    if !case.link.is_loopback() {
        let env = link_env
            .get_or_insert_with(|| LinkEnv::up().map_err(Arc::new))
            .as_ref()
            .map_err(|e| ManagerError::LinkSetup(e.clone()))?;
        let active = env.start(case.link, case.params.emulator)?;
        let achieved = env.measure(&case.link)?;
        info = Some((active.emulator.clone(), achieved));
        _active = Some(active);
        net = Some(Net {
            server_ns: env.server_ns(),
            client_ns: env.client_ns(),
        });
    }
    let net = net.as_ref();
    let work = opts.out.join("work").join(case.file_stem());
    if interleaved(case) {
        let run = run_interleaved(case, opts, &work, net)?;
        return Ok((run, None, info));
    }
    let tls = run_pair(case, opts, &work, true, net)?;
    let clear = if case.tls.is_some() && case.params.cleartext_baseline {
        let p = &case.params;
        let key = format!(
            "{:?}/{:?}/{}{}/{}/{}/{}/{}/{}",
            p.server_stack,
            p.client_stack,
            p.interaction.name(),
            if p.interaction == Interaction::Control {
                format!(":{}:{}", p.control_object, p.control_test)
            } else {
                String::new()
            },
            p.payload,
            p.period_ms,
            p.link,
            p.reports,
            p.connections
        );
        let stem = format!("cleartext-{}", file_stem(&key));
        let entry = baselines.entry(key).or_insert_with(|| {
            run_pair(case, opts, &opts.out.join("work").join(stem), false, net)
                .map(|r| r.samples)
                .map_err(Arc::new)
        });
        match entry {
            Ok(s) => Some(s.clone()),
            Err(e) => return Err(ManagerError::Baseline(e.clone())),
        }
    } else {
        None
    };
    Ok((tls, clear, info))
}

/// Whether a case's RT and cleartext RT are measured in alternating blocks (`rt_blocks`).
pub fn interleaved(case: &Case) -> bool {
    let p = &case.params;
    case.tls.is_some()
        && p.cleartext_baseline
        && p.interaction == Interaction::Report
        && p.rt_blocks > 0
        && p.reports > 0
}

/// Sizes of `blocks` blocks that together hold `total` reports (the first ones one larger).
pub fn block_sizes(total: u32, blocks: u32) -> Vec<u32> {
    let blocks = blocks.clamp(1, total.max(1));
    (0..blocks)
        .map(|b| total / blocks + u32::from(b < total % blocks))
        .collect()
}

/// Which transport goes first in block `b`: TLS, clear | clear, TLS | TLS, clear | ... so that a
/// drift in the machine's state during the run favours neither.
pub fn block_order(b: u32) -> [bool; 2] {
    if b.is_multiple_of(2) {
        [true, false]
    } else {
        [false, true]
    }
}

/// The HT loop on its own (TLS, no reports), then the RT loop in `rt_blocks` blocks, TLS and
/// cleartext alternating, each block a fresh pair of peers with one connection.
fn run_interleaved(
    case: &Case,
    opts: &RunOptions,
    work: &Path,
    net: Option<&Net>,
) -> Result<PairRun, ManagerError> {
    let p = &case.params;
    let mut ht_case = case.clone();
    ht_case.params.reports = 0;
    let ht = run_pair(&ht_case, opts, work, true, net)?;
    let mut samples = ht.samples;
    for (b, n) in block_sizes(p.reports, p.rt_blocks).into_iter().enumerate() {
        let b = b as u32;
        let mut bc = case.clone();
        bc.params.connections = 1;
        bc.params.reports = n;
        for with_tls in block_order(b) {
            let what = if with_tls { "tls" } else { "clear" };
            let dir = work.join(format!("rt-{b}-{what}"));
            let r =
                run_pair(&bc, opts, &dir, with_tls, net).map_err(|e| ManagerError::RtBlock {
                    block: b,
                    what,
                    source: Box::new(e),
                })?;
            let s = r.samples;
            for (k, v) in s.errors {
                *samples.errors.entry(k).or_default() += v;
            }
            if with_tls {
                samples.rt_block.extend(std::iter::repeat_n(b, s.rt.len()));
                samples.rt.extend(s.rt);
                samples.rt_enc.extend(s.rt_enc);
                samples.rt_net.extend(s.rt_net);
                samples.rt_dec.extend(s.rt_dec);
                samples.rt_writes.extend(s.rt_writes);
            } else {
                samples
                    .rt_clear_block
                    .extend(std::iter::repeat_n(b, s.rt.len()));
                samples.rt_clear.extend(s.rt);
            }
        }
    }
    Ok(PairRun {
        samples,
        client_summary: ht.client_summary,
    })
}

/// Whether the `libiec61850` stack runs through the Python driver rather than the compiled
/// harness.
fn uses_python(opts: &RunOptions) -> bool {
    opts.libiec61850_python || opts.libiec61850_driver.is_some()
}

/// The command that starts one peer.
fn peer_command(
    stack: Stack,
    role: Role,
    interaction: Interaction,
    config: &Path,
    opts: &RunOptions,
    backend: Option<BackendKind>,
) -> Result<Command, ManagerError> {
    match stack {
        // Request/response (Sandia): gander's own request/response peers (`gander_peers::reqresp`).
        Stack::Gander if matches!(interaction, Interaction::Read | Interaction::Write) => {
            let mut c = Command::new(exe_for(backend, opts)?);
            c.args(["run-peer", role.name(), "--config"]).arg(config);
            Ok(c)
        }
        Stack::Gander => {
            let mut c = Command::new(exe_for(backend, opts)?);
            c.args(["mms", role.name(), "--config"]).arg(config);
            Ok(c)
        }
        // libiec61850 through its C API, with no interpreter in between (issue #11 item 6).
        Stack::Libiec61850 if !uses_python(opts) => {
            let harness = match &opts.libiec61850_cref {
                Some(h) => h.clone(),
                None => crate::assets::libiec61850_cref()?,
            };
            if !harness.exists() {
                return Err(ManagerError::DriverMissing(harness));
            }
            let mut c = Command::new(&harness);
            c.arg(role.name()).arg("--config").arg(config);
            Ok(c)
        }
        Stack::Libiec61850 => {
            let driver = match &opts.libiec61850_driver {
                Some(d) => d.clone(),
                None => crate::assets::libiec61850_peer()?,
            };
            if !driver.exists() {
                return Err(ManagerError::DriverMissing(driver));
            }
            let python = match &opts.python {
                Some(p) => p.clone(),
                None => crate::assets::venv_python_for(&driver)?,
            };
            if !python.exists() {
                return Err(ManagerError::PythonMissing(python));
            }
            let mut c = Command::new(&python);
            c.arg(&driver).arg(role.name()).arg("--config").arg(config);
            Ok(c)
        }
    }
}

/// Starts the client and waits for its end, within a limit that grows with the case's
/// connections and reports: (exited successfully, its stdout).
fn run_client(mut cmd: Command, case: &Case) -> Result<(bool, String), ManagerError> {
    let child = cmd.spawn().map_err(ManagerError::SpawnClient)?;
    let mut client = Peer {
        child,
        name: "client".into(),
    };
    let p = &case.params;
    let limit = Duration::from_secs(60)
        + Duration::from_millis(p.connections as u64 * 1000)
        + Duration::from_millis(p.reports as u64 * (p.period_ms + 50) * 3 / 2);
    wait_exit(&mut client, limit)
}

/// One case against an external target: gander's client only ([`crate::target`]).
fn run_target_case(
    case: &Case,
    target: &crate::target::TargetSpec,
    opts: &RunOptions,
) -> Result<PairRun, ManagerError> {
    let work = opts.out.join("work").join(case.file_stem());
    std::fs::create_dir_all(&work).map_err(|source| ManagerError::CreateDir {
        path: work.clone(),
        source,
    })?;
    let events = work.join("client.events");
    let _ = std::fs::remove_file(&events);
    let client_cfg = work.join("client.toml");
    let text = target
        .client_config(case, &events)
        .map_err(|e| ManagerError::Target(crate::error_chain(&e)))?;
    std::fs::write(&client_cfg, text).map_err(|source| ManagerError::Write {
        path: client_cfg.clone(),
        source,
    })?;
    let mut cmd = peer_command(
        Stack::Gander,
        Role::Client,
        Interaction::Report,
        &client_cfg,
        opts,
        case.tls.as_ref().map(|t| t.backend),
    )?;
    let client_stderr = work.join("client.stderr");
    let err = std::fs::File::create(&client_stderr).map_err(|source| ManagerError::Write {
        path: client_stderr.clone(),
        source,
    })?;
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(err);
    let (status, stdout) = run_client(cmd, case)?;
    let client_summary = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok());
    if !status {
        let why = client_summary
            .as_ref()
            .and_then(|s| {
                Some(format!(
                    "{}: {}",
                    s.get("error")?.as_str()?,
                    s.get("detail")?.as_str()?
                ))
            })
            .unwrap_or_else(|| tail(&client_stderr));
        return Err(ManagerError::ClientFailed { stderr: why });
    }
    let events = read_events(&events)?;
    Ok(PairRun {
        samples: extract(&events),
        client_summary,
    })
}

/// Writes the configs, runs server and client, returns the merged samples.
fn run_pair(
    case: &Case,
    opts: &RunOptions,
    work: &Path,
    with_tls: bool,
    net: Option<&Net>,
) -> Result<PairRun, ManagerError> {
    std::fs::create_dir_all(work).map_err(|source| ManagerError::CreateDir {
        path: work.to_path_buf(),
        source,
    })?;
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ManagerError::Write { path, source }
    };
    for f in ["server.events", "client.events"] {
        let _ = std::fs::remove_file(work.join(f));
    }
    let pki = PkiSet::paths(&opts.pki_dir, case.key.0);
    let server_cfg = work.join("server.toml");
    let client_cfg = work.join("client.toml");
    if case.params.interaction == Interaction::Control {
        let model = work.join("controls.cid");
        std::fs::write(&model, crate::control_rows::CONTROL_MODEL).map_err(write_err(&model))?;
    }
    let listen = if net.is_some() {
        format!("{}:0", crate::link::SERVER_IP)
    } else {
        "127.0.0.1:0".to_string()
    };
    std::fs::write(
        &server_cfg,
        peer_config(case, Role::Server, &pki, work, Some(&listen), with_tls),
    )
    .map_err(write_err(&server_cfg))?;

    let mut cmd = in_namespace(
        peer_command(
            case.params.server_stack,
            Role::Server,
            case.params.interaction,
            &server_cfg,
            opts,
            case.tls.as_ref().filter(|_| with_tls).map(|t| t.backend),
        )?,
        net.map(|n| n.server_ns.as_str()),
    );
    let server_stderr = work.join("server.stderr");
    let server_err = std::fs::File::create(&server_stderr).map_err(write_err(&server_stderr))?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(server_err);
    let child = cmd.spawn().map_err(|source| ManagerError::SpawnServer {
        exe: opts.gander_exe.clone(),
        source,
    })?;
    let mut server = Peer {
        child,
        name: "server".into(),
    };
    let addr = wait_ready(&mut server, opts.ready_timeout, &work.join("server.stderr"))?;

    std::fs::write(
        &client_cfg,
        peer_config(case, Role::Client, &pki, work, Some(&addr), with_tls),
    )
    .map_err(write_err(&client_cfg))?;
    let mut cmd = in_namespace(
        peer_command(
            case.params.client_stack,
            Role::Client,
            case.params.interaction,
            &client_cfg,
            opts,
            case.tls.as_ref().filter(|_| with_tls).map(|t| t.backend),
        )?,
        net.map(|n| n.client_ns.as_str()),
    );
    let client_stderr = work.join("client.stderr");
    let client_err = std::fs::File::create(&client_stderr).map_err(write_err(&client_stderr))?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(client_err);
    let (status, stdout) = run_client(cmd, case)?;
    server.stop();
    if !status {
        return Err(ManagerError::ClientFailed {
            stderr: tail(&work.join("client.stderr")),
        });
    }
    let client_summary = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok());
    let mut events = read_events(&work.join("client.events"))?;
    let app_rtt = results::app_round_trips(&events);
    if let Ok(mut s) = read_events(&work.join("server.events")) {
        events.append(&mut s);
    }
    events.sort_by_key(|e| e.t_ns);
    let mut samples = extract(&events);
    samples.app_rtt = app_rtt;
    Ok(PairRun {
        samples,
        client_summary,
    })
}

/// `ip netns exec NS <cmd>` (ip execs the program: the pid stays the peer's).
fn in_namespace(cmd: Command, ns: Option<&str>) -> Command {
    let Some(ns) = ns else { return cmd };
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    c
}

/// Last lines of a peer's stderr, for error messages.
fn tail(path: &Path) -> String {
    let t = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
    let s = lines[lines.len().saturating_sub(3)..].join(" | ");
    if s.is_empty() {
        format!("no message (see {})", path.display())
    } else {
        s
    }
}

/// Reads the server's stdout until `READY <addr>`.
fn wait_ready(server: &mut Peer, timeout: Duration, stderr: &Path) -> Result<String, ManagerError> {
    let stdout = server
        .child
        .stdout
        .take()
        .ok_or(ManagerError::NoStdout("server"))?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            match r.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    return;
                }
                Ok(_) => {
                    if let Some(a) = line.trim().strip_prefix("READY ") {
                        let _ = tx.send(Some(a.trim().to_string()));
                        // Keep draining so the server never blocks on a full pipe.
                        let _ = std::io::copy(&mut r, &mut std::io::sink());
                        return;
                    }
                }
            }
        }
    });
    match rx.recv_timeout(timeout) {
        Ok(Some(addr)) => Ok(addr),
        Ok(None) => {
            let _ = server.child.wait();
            Err(ManagerError::ExitedBeforeReady {
                peer: server.name.clone(),
                stderr: tail(stderr),
            })
        }
        Err(_) => Err(ManagerError::ReadyTimeout {
            peer: server.name.clone(),
            timeout,
            stderr: tail(stderr),
        }),
    }
}

/// Waits for the client; returns (success, stdout).
fn wait_exit(client: &mut Peer, limit: Duration) -> Result<(bool, String), ManagerError> {
    let mut stdout = client
        .child
        .stdout
        .take()
        .ok_or(ManagerError::NoStdout("client"))?;
    let h = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let t = Instant::now();
    loop {
        match client.child.try_wait() {
            Ok(Some(st)) => {
                let out = h.join().unwrap_or_default();
                return Ok((st.success(), out));
            }
            Ok(None) if t.elapsed() > limit => {
                client.stop();
                return Err(ManagerError::ClientTimeout {
                    secs: limit.as_secs(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(ManagerError::Wait(e)),
        }
    }
}

/// A TOML string literal.
fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn qp(p: &Path) -> String {
    q(&p.to_string_lossy())
}

/// The peer config of `docs/mms-peers.md`.
fn peer_config(
    case: &Case,
    role: Role,
    pki: &PkiSet,
    work: &Path,
    connect: Option<&str>,
    with_tls: bool,
) -> String {
    let p = &case.params;
    let mut s = String::new();
    let _ = writeln!(s, "# written by gander run for case {}", q(&p.name));
    match role {
        Role::Server => {
            let _ = writeln!(s, "listen = {}", q(connect.unwrap_or("127.0.0.1:0")));
        }
        Role::Client => {
            let _ = writeln!(s, "connect = {}", q(connect.unwrap_or("127.0.0.1:3782")));
            let _ = writeln!(s, "connections = {}", p.connections);
            // A control row's `reports` are its operations ([control]), not reports.
            let reports = if p.interaction == Interaction::Control {
                0
            } else {
                p.reports
            };
            let _ = writeln!(s, "reports = {reports}");
        }
    }
    let _ = writeln!(
        s,
        "events = {}",
        qp(&work.join(format!("{}.events", role.name())))
    );
    if matches!(p.interaction, Interaction::Read | Interaction::Write) {
        let _ = writeln!(s, "interaction = {}", q(p.interaction.name()));
    }
    match (role, p.interaction) {
        // Control rows: gander's server serves the built-in control model (written by
        // run_pair), the client operates the row's object ([`crate::control_rows`]).
        (Role::Server, Interaction::Control) => {
            let _ = write!(
                s,
                "scl = {}\nvalues = \"static\"\n",
                qp(&work.join("controls.cid"))
            );
        }
        (Role::Client, Interaction::Control) => {
            let _ = write!(s, "{}", crate::control_rows::client_table(p));
        }
        // The server pushes reports: period and size are its business; the client counts them.
        (Role::Server, _) => {
            let _ = writeln!(
                s,
                "\n[reports]\nperiod_ms = {}\nsize = {}",
                p.period_ms, p.payload
            );
        }
        (Role::Client, Interaction::Report) => {}
        (Role::Client, _) => {
            let _ = writeln!(
                s,
                "request_period_ms = {}\nrequest_size = {}",
                p.period_ms, p.payload
            );
        }
    }
    if let (true, Some(tls)) = (with_tls, &case.tls) {
        let (cert, key, peer) = match role {
            Role::Server => (&pki.server, &pki.server_key, &pki.client),
            Role::Client => (&pki.client, &pki.client_key, &pki.server),
        };
        let _ = writeln!(s, "\n[tls]\nbackend = {}", q(tls.backend.name()));
        let _ = writeln!(
            s,
            "ca = {}\ncert = {}\nkey = {}\npeer_cert = {}",
            qp(&pki.ca),
            qp(cert),
            qp(key),
            qp(peer)
        );
        let _ = writeln!(s, "versions = [{}]", q(tls.version.short()));
        let _ = writeln!(s, "cipher_suites = [{}]", q(tls.suite.name));
        if let Some(g) = tls.group {
            let _ = writeln!(s, "groups = [{}]", q(g.name()));
        }
        let (ids, tickets) = match p.session_resumption {
            Resumption::Off => (false, false),
            Resumption::Id => (true, false),
            Resumption::Ticket | Resumption::Psk => (true, true),
        };
        let _ = writeln!(s, "session_resumption = {ids}\nsession_tickets = {tickets}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_split_the_reports_and_alternate() {
        assert_eq!(block_sizes(400, 4), [100, 100, 100, 100]);
        assert_eq!(block_sizes(10, 4), [3, 3, 2, 2]);
        assert_eq!(block_sizes(2, 8), [1, 1]);
        assert_eq!(block_sizes(0, 3), [0]);
        assert_eq!(block_order(0), [true, false]);
        assert_eq!(block_order(1), [false, true]);
    }
}
