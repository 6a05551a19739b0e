//! `gander probe HOST:PORT`: what a utility engineer wants to know of an IEC 61850 server on
//! the bench, from any vendor: its model (logical devices and nodes, data sets, report control
//! blocks with their attributes), the TLS connection it accepts with the given settings, the
//! association time HT with its sub-steps, the read round-trip time of one data attribute, and,
//! only on request because it writes to the device, reports from one control block, which is
//! then put back exactly as it was found. `docs/probe.md` says what is sent and when.
//!
//! - [`session`]: the blocking MMS client session (plain or TLS) with per-step timeouts: the
//!   one of `gander-client`, re-exported.
//! - [`discover`]: the model through the directory services (reads only).
//! - [`control`]: one control operation of a named object (`gander mms control`; writes).
//! - [`model`]: the model's JSON shape and the pure rules that assemble it from MMS names.
//! - [`reports`]: `--reports`: enable, receive, restore, check.
//! - [`outcome`]: complete or partial, the failed step, how the device was left, exit codes.
//! - [`stats`]: millisecond summaries with the conventions of `gander_measure`.
//! - [`text`]: the human-readable summary.
//!
//! The probe is bounded: a timeout on every step, a pause between associations, a cap on the
//! measuring time, and every association it opens is released (or aborted when the server
//! misbehaves).

pub mod control;
pub mod discover;
pub mod error;
pub mod fleet;
pub mod model;
pub mod outcome;
pub mod reports;
/// The MMS client session the probe runs on (`gander_client::session`).
pub use gander_client::session;
pub mod stats;
pub mod text;

pub use error::ProbeError;

use gander_client::clock::now_ns;
use gander_mms::service::{AccessResult, ObjectName};
use gander_tls::TlsProfile;
use model::{Identity, Model};
use outcome::{AssociationEnd, DeviceState, Failure, Outcome, RcbState, Step};
use reports::{ReportOptions, ReportsResult};
use serde::Serialize;
use session::{Connector, Session, TlsInfo};
use stats::MsSummary;
use std::net::ToSocketAddrs;
use std::time::Duration;

/// Version of the JSON document; raised when a field changes meaning or disappears.
pub const SCHEMA: u32 = 1;

/// What to probe and how hard.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// `HOST:PORT` (102 is ISO on TCP, 3782 IEC 62351-3 TLS).
    pub target: String,
    /// Client TLS settings (`docs/tls.md`); `None`: plain TCP.
    pub tls: Option<TlsProfile>,
    /// Longest wait for each step (connect, handshake, each answer).
    pub timeout: Duration,
    /// Associations opened for HT (after the discovery association).
    pub associations: usize,
    /// Pause between two associations (the probe's rate bound).
    pub interval: Duration,
    /// Reads for the read round-trip time.
    pub reads: usize,
    /// Pause between two reads.
    pub read_interval: Duration,
    /// The variable to read (`LD/LN$FC$DO$DA`, or dotted `LD/LN.FC.DO.DA`); `None`: the first
    /// readable ST or MX attribute.
    pub read: Option<String>,
    /// Cap on the measuring time (HT loop and reads); what was measured by then is reported.
    pub max_time: Duration,
    /// `--reports`: receive reports from one control block (writes to the device).
    pub reports: Option<ReportOptions>,
    /// `--control LD/LN.DO`: measure the control round trips of this object (writes to the
    /// device: Test set unless cleared, the state restored; [`control`]).
    pub control: Option<gander_client::control_rt::RtOptions>,
    /// Whether `--quick` chose the sizes (recorded in the output).
    pub quick: bool,
    /// With TLS: survey what the server accepts (versions, suites, certificates, client
    /// authentication, resumption; [`gander_tls::survey`]) after the MMS measurements.
    pub tls_survey: bool,
}

impl ProbeOptions {
    /// The defaults: 20 associations 100 ms apart, 50 reads 10 ms apart, 5 s per step, at
    /// most 60 s of measuring.
    pub fn new(target: impl Into<String>) -> Self {
        ProbeOptions {
            target: target.into(),
            tls: None,
            timeout: Duration::from_secs(5),
            associations: 20,
            interval: Duration::from_millis(100),
            reads: 50,
            read_interval: Duration::from_millis(10),
            read: None,
            max_time: Duration::from_secs(60),
            reports: None,
            control: None,
            quick: false,
            tls_survey: true,
        }
    }

    /// `--quick`: 5 associations 20 ms apart, 10 reads, at most 15 s of measuring.
    pub fn quick(mut self) -> Self {
        self.associations = 5;
        self.interval = Duration::from_millis(20);
        self.reads = 10;
        self.read_interval = Duration::from_millis(2);
        self.max_time = Duration::from_secs(15);
        self.quick = true;
        self
    }

    fn check(&self) -> Result<(), ProbeError> {
        let bad = |what, detail: &str| {
            Err(ProbeError::InvalidOption {
                what,
                detail: detail.into(),
            })
        };
        if self.timeout.is_zero() {
            return bad("--timeout-ms", "must be at least 1");
        }
        if self.reads == 0 {
            return bad("--reads", "must be at least 1");
        }
        if let Some(c) = &self.control {
            if !control::valid_object(&c.control.object) {
                return bad("--control", "expected LD/LN.DO (e.g. LD0/CSWI1.Pos)");
            }
            if !(1..=1000).contains(&c.count) {
                return bad("--control-count", "1 to 1000 operations");
            }
        }
        if self.associations > 10_000 {
            return bad(
                "--associations",
                "at most 10000 (a probe is not a load test)",
            );
        }
        Ok(())
    }
}

/// The `--control` options: `count` operations of `object` starting with `value` (empty: the
/// opposite of its state), Test as given, origin remote-control (orCat 3) "gander probe", no
/// checks asked, the probe's step timeout for the CommandTermination and its association
/// interval between operations; Cancel measured after a select (SBO models).
pub fn control_options(
    object: &str,
    value: &str,
    test: bool,
    count: usize,
    o: &ProbeOptions,
) -> gander_client::control_rt::RtOptions {
    gander_client::control_rt::RtOptions {
        control: control::ControlOptions {
            object: object.to_string(),
            value: value.to_string(),
            test,
            interlock_check: false,
            synchro_check: false,
            or_cat: 3,
            or_ident: b"gander probe".to_vec(),
            termination_timeout: o.timeout,
        },
        count,
        pause: o.interval,
        cancel: true,
    }
}

/// The negotiated MMS initiate parameters (ISO 9506-2 8.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MmsInfo {
    /// localDetailCalled: the largest MMS PDU the server accepts.
    pub max_pdu_size: Option<u32>,
    /// MaxServOutstandingCalling.
    pub max_serv_outstanding_calling: u16,
    /// MaxServOutstandingCalled.
    pub max_serv_outstanding_called: u16,
    /// DataStructureNestingLevel.
    pub nesting_level: Option<u8>,
    /// VersionNumber.
    pub version: u16,
}

/// HT's sub-steps, each summarised over the associations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HtSteps {
    /// TCP connect.
    pub tcp: Option<MsSummary>,
    /// TLS handshake (with TLS).
    pub tls: Option<MsSummary>,
    /// COTP connect (CR to CC).
    pub cotp: Option<MsSummary>,
    /// MMS initiate (AARQ to AARE).
    pub initiate: Option<MsSummary>,
}

/// What was measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurements {
    /// HT: TCP connect to initiate response, over the measured associations.
    pub ht_ms: Option<MsSummary>,
    /// HT's sub-steps.
    pub ht_steps_ms: HtSteps,
    /// Release (conclude + ACSE release) of the measured associations.
    pub release_ms: Option<MsSummary>,
    /// The variable read for the RTT (IEC 61850 reference with its FC).
    pub read_ref: Option<String>,
    /// Read round-trip time (request written to response decoded).
    pub read_rtt_ms: Option<MsSummary>,
    /// Whether `max_time` cut the measuring short.
    pub truncated: bool,
    /// `--reports` only.
    pub reports: Option<ReportsResult>,
    /// `--control` only: select, operate, termination (and cancel) round trips (absent
    /// without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<gander_client::control_rt::ControlRt>,
}

/// The settings the probe ran with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// `--quick`.
    pub quick: bool,
    /// Associations asked for.
    pub associations: usize,
    /// Pause between associations, ms.
    pub interval_ms: u64,
    /// Reads asked for.
    pub reads: usize,
    /// Step timeout, ms.
    pub timeout_ms: u64,
    /// Cap on the measuring time, ms.
    pub max_time_ms: u64,
}

/// The whole result (`--json` prints it; `docs/probe.md` has the schema).
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    /// [`SCHEMA`].
    pub schema: u32,
    /// `HOST:PORT` as given.
    pub target: String,
    /// The address connected to.
    pub address: String,
    /// Complete, or partial when a step failed ([`outcome`]).
    pub outcome: Outcome,
    /// The step that failed and how, when one did.
    pub failed: Option<Failure>,
    /// How the device was left: the association released or aborted, the control block.
    pub device: DeviceState,
    /// With `--tls`: the connection the probe used and the survey of what the server accepts.
    pub tls: Option<ProbeTls>,
    /// The MMS initiate the server answered.
    pub mms: Option<MmsInfo>,
    /// Identify's answer (vendor, model, revision), when the server supports it.
    pub identity: Option<Identity>,
    /// The model.
    pub model: Model,
    /// The measurements.
    pub measurements: Measurements,
    /// What the server would not answer that did not stop the probe.
    pub warnings: Vec<String>,
    /// The settings.
    pub settings: Settings,
    /// Wall time of the whole probe, ms.
    pub duration_ms: u64,
}

/// The TLS section: the probe's own connection, and the survey's findings beside it (flattened:
/// `versions`, `suites`, `client_cert_required`, `chain`, `verdicts`, ...; `docs/tls-survey.md`).
#[derive(Debug, Clone, Serialize)]
pub struct ProbeTls {
    /// The client side of the connection the model and measurements used.
    #[serde(flatten)]
    pub connection: TlsInfo,
    /// What the server accepts (absent with `--no-tls-survey` or when the survey failed).
    #[serde(flatten)]
    pub survey: Option<gander_tls::survey::TlsSurvey>,
    /// Why there is no survey, when it was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub survey_error: Option<String>,
}

fn resolve(target: &str) -> Result<std::net::SocketAddr, ProbeError> {
    let err = || ProbeError::Resolve {
        target: target.into(),
    };
    target
        .to_socket_addrs()
        .map_err(|_| err())?
        .next()
        .ok_or_else(err)
}

/// Parses `--read`: `LD/LN$FC$DO$DA` or `LD/LN.FC.DO.DA`.
pub use gander_client::reference::parse_variable as parse_read_ref;

fn show_ref(n: &ObjectName) -> String {
    let m = model::member(n);
    match m.fc {
        Some(fc) => format!("{} [{fc}]", m.reference),
        None => m.reference,
    }
}

/// The read round-trip time: the first candidate the server reads successfully, then reads of
/// it until `opts.reads` or the time cap. The attribute used and the samples gathered before a
/// failure are kept in `used` and `rtts`.
#[allow(clippy::too_many_arguments)]
fn read_rtt(
    s: &mut Session,
    opts: &ProbeOptions,
    candidates: &[ObjectName],
    measuring_end: u64,
    used: &mut Option<ObjectName>,
    rtts: &mut Vec<u64>,
    d: &mut discover::Discovery,
    truncated: &mut bool,
) -> Result<(), ProbeError> {
    for c in candidates {
        let what = format!("reading {}", show_ref(c));
        match s.read(c, &what) {
            Ok((AccessResult::Success(_), rtt)) => {
                *used = Some(c.clone());
                rtts.push(rtt);
                break;
            }
            Ok((AccessResult::Failure(e), _)) => {
                d.warnings.push(format!("{what}: DataAccessError {e}"))
            }
            Err(e) if e.answered() => d.warnings.push(e.chain()),
            Err(e) => return Err(e.into()),
        }
    }
    let Some(c) = used.as_ref() else {
        d.warnings.push(
            "no readable ST or MX data attribute found for the read round-trip time (name one with --read)"
                .into(),
        );
        return Ok(());
    };
    let what = format!("reading {}", show_ref(c));
    while rtts.len() < opts.reads {
        if now_ns() >= measuring_end {
            *truncated = true;
            break;
        }
        std::thread::sleep(opts.read_interval);
        match s.read(c, &what) {
            Ok((_, rtt)) => rtts.push(rtt),
            // The attribute read before: report what was measured and which read failed.
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Identify on the discovery association `s`. A server that advertises Identify and never
/// answers it (iec61850bean 1.9 drops the request: its initiate response lists the service,
/// and libiec61850's client, which does not ask, browses it whole) is a server without the
/// service, as one that refuses it is: the outstanding request is abandoned with the
/// association (aborted, since its answer could still come and be taken for the next one's),
/// and discovery goes on over a fresh association.
fn identify_or_reconnect(
    connector: &Connector<'_>,
    s: &mut Session,
    opts: &ProbeOptions,
    d: &mut discover::Discovery,
) -> Result<(), ProbeError> {
    match discover::identify(s, &mut d.warnings) {
        Ok(i) => {
            d.identity = i;
            Ok(())
        }
        Err(e) if e.kind() == "timeout" => {
            d.warnings.push(format!(
                "Identify not answered within {} ms (the server advertises it): taken as not supported; that association aborted, discovery went on over a fresh one",
                opts.timeout.as_millis()
            ));
            s.abort_now();
            *s = connector.connect()?.0;
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Runs the probe: discovery, read RTT, `--reports` if asked, then the HT loop.
///
/// `Err` only when nothing was gathered (the options, the TLS file, or no association at all).
/// Once the discovery association is up, a failing step ends the steps that need it, the
/// association is released or aborted, the HT loop still runs, and the report says which step
/// failed and how the device was left ([`outcome`]).
pub fn probe(opts: &ProbeOptions) -> Result<ProbeReport, ProbeError> {
    opts.check()?;
    let started = now_ns();
    let addr = resolve(&opts.target)?;
    let backend = match &opts.tls {
        Some(p) => {
            let mut p = p.clone();
            // The probe's step timeout governs the handshake too.
            p.io_timeout_ms = opts.timeout.as_millis().max(1) as u64;
            Some(gander_tls::backend::open(&p).map_err(ProbeError::TlsSetup)?)
        }
        None => None,
    };
    let read_ref = match &opts.read {
        Some(r) => Some(parse_read_ref(r).ok_or_else(|| ProbeError::InvalidOption {
            what: "--read",
            detail: format!("{r:?} is not LD/LN$FC$DO[$DA] (or LD/LN.FC.DO.DA)"),
        })?),
        None => None,
    };
    let connector = Connector {
        max_pdu: Some(session::DEFAULT_MAX_PDU),
        ..Connector::new(addr, backend.as_deref(), opts.timeout)
    };
    let measuring_end = started.saturating_add(opts.max_time.as_nanos() as u64);
    let (mut s, _first) = connector.connect()?;
    let tls = s.tls_info().cloned();
    let mms = s.negotiated().map(|i| MmsInfo {
        max_pdu_size: i.local_detail,
        max_serv_outstanding_calling: i.max_serv_outstanding_calling,
        max_serv_outstanding_called: i.max_serv_outstanding_called,
        nesting_level: i.nesting_level,
        version: i.version,
    });
    let mut failed: Option<Failure> = None;
    let mut d = discover::Discovery::default();
    match identify_or_reconnect(&connector, &mut s, opts, &mut d) {
        Ok(()) => {
            if let Err(e) = discover::discover_model(&mut s, &mut d) {
                failed = Some(Failure::new(Step::Discovery, &e));
            }
        }
        Err(e) => failed = Some(Failure::new(Step::Discovery, &e)),
    }
    let mut truncated = false;

    // Read RTT: the first candidate the server reads successfully.
    let candidates: Vec<ObjectName> = match &read_ref {
        Some(r) => vec![r.clone()],
        None => d.read_candidates.iter().take(5).cloned().collect(),
    };
    let mut read_used = None;
    let mut rtts = Vec::new();
    if failed.is_none() {
        if let Err(e) = read_rtt(
            &mut s,
            opts,
            &candidates,
            measuring_end,
            &mut read_used,
            &mut rtts,
            &mut d,
            &mut truncated,
        ) {
            failed = Some(Failure::new(Step::Read, &e));
        }
    }

    let mut rcb_state = None;
    let reports = match (&opts.reports, &failed) {
        (Some(ro), None) => {
            let names: Vec<String> = d
                .model
                .data_sets
                .iter()
                .filter(|x| x.error.is_none())
                .map(|x| x.reference.clone())
                .collect();
            let r = reports::choose(&d.snapshots, ro.rcb.as_ref(), &names)
                .cloned()
                .map_err(reports::ReportsFailure::from)
                .and_then(|found| reports::run(&mut s, &found, ro));
            match r {
                Ok(r) => {
                    rcb_state = Some(RcbState::Restored);
                    Some(r)
                }
                Err(f) => {
                    rcb_state = Some(RcbState::after(&f.error));
                    failed = Some(Failure::new(Step::Reports, &f.error));
                    // Reports received before a failed restore check still count.
                    f.gathered.map(|r| *r)
                }
            }
        }
        (Some(_), Some(_)) => {
            rcb_state = Some(RcbState::Untouched);
            None
        }
        (None, _) => None,
    };

    // --control: only the named object, only when every step before succeeded.
    let mut control_state = None;
    let mut control_rt = None;
    if let Some(co) = &opts.control {
        if failed.is_none() {
            let r = control::step(&mut s, co);
            control_state = Some(r.left);
            control_rt = r.rt;
            if let Some(e) = r.error {
                failed = Some(Failure::new(Step::Control, &e));
            }
        } else {
            control_state = Some(gander_client::control_rt::DeviceLeft::Untouched);
        }
    }

    // The end of the discovery association: released when it is usable, else aborted.
    let mut release = Vec::new();
    let mut release_works = true;
    let association = if s.aborted_here() {
        AssociationEnd::Aborted
    } else if !s.is_open() {
        AssociationEnd::ClosedByServer
    } else if failed.is_some() {
        s.abort();
        AssociationEnd::Aborted
    } else {
        match s.release() {
            Ok(r) => {
                release.push(r.duration_ns);
                AssociationEnd::Released
            }
            Err(e) => {
                // The session aborted itself, or the server closed the connection first (a
                // COTP disconnect in answer to the release request); the measurements so far
                // stand.
                release_works = false;
                let closed = e.kind() == "closed";
                failed = Some(Failure::new(Step::Release, &e.into()));
                if closed {
                    AssociationEnd::ClosedByServer
                } else {
                    AssociationEnd::Aborted
                }
            }
        }
    };

    // HT loop: fresh associations, one at a time, paced; each released, or aborted when the
    // server did not answer a release.
    let (mut tcp, mut tls_v, mut cotp, mut init, mut ht) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut ht_aborted = 0usize;
    for _ in 0..opts.associations {
        if now_ns() >= measuring_end {
            truncated = true;
            break;
        }
        std::thread::sleep(opts.interval);
        let (s, t) = match connector.connect() {
            Ok(x) => x,
            Err(e) => {
                failed.get_or_insert(Failure::new(Step::Ht, &e.into()));
                break;
            }
        };
        ht.push(t.total_ns());
        tcp.push(t.tcp_ns);
        if let Some(x) = t.tls_ns {
            tls_v.push(x);
        }
        cotp.push(t.cotp_ns);
        init.push(t.initiate_ns);
        if !release_works {
            s.abort();
            ht_aborted += 1;
            continue;
        }
        match s.release() {
            Ok(r) => release.push(r.duration_ns),
            Err(e) => {
                release_works = false;
                ht_aborted += 1;
                failed.get_or_insert(Failure::new(Step::Ht, &e.into()));
            }
        }
    }
    let mut warnings = std::mem::take(&mut d.warnings);
    if truncated {
        warnings.push(format!(
            "measuring stopped at the time cap of {} ms",
            opts.max_time.as_millis()
        ));
    }
    if ht_aborted > 0 {
        warnings.push(format!(
            "{ht_aborted} HT association(s) aborted instead of released: the server did not answer a release"
        ));
    }
    let tls = tls.map(|connection| {
        let mut t = ProbeTls {
            connection,
            survey: None,
            survey_error: None,
        };
        if let (true, Some(profile)) = (opts.tls_survey, &opts.tls) {
            let so = gander_tls::survey::SurveyOptions {
                timeout: opts.timeout,
                quick: opts.quick,
                round: Some(std::sync::Arc::new(gander_client::detect::MmsRound)),
                ..gander_tls::survey::SurveyOptions::default()
            };
            match gander_tls::survey::survey(addr, profile, &so) {
                Ok(sv) => t.survey = Some(sv),
                Err(e) => {
                    let m = gander_client::error::chain(&e);
                    warnings.push(format!("TLS survey: {m}"));
                    t.survey_error = Some(m);
                }
            }
        }
        t
    });
    Ok(ProbeReport {
        schema: SCHEMA,
        target: opts.target.clone(),
        address: addr.to_string(),
        outcome: if failed.is_some() {
            Outcome::Partial
        } else {
            Outcome::Complete
        },
        failed,
        device: DeviceState {
            association,
            ht_aborted,
            rcb: rcb_state,
            control: control_state,
        },
        tls,
        mms,
        identity: d.identity,
        model: d.model,
        measurements: Measurements {
            ht_ms: MsSummary::from_ns(&ht),
            ht_steps_ms: HtSteps {
                tcp: MsSummary::from_ns(&tcp),
                tls: MsSummary::from_ns(&tls_v),
                cotp: MsSummary::from_ns(&cotp),
                initiate: MsSummary::from_ns(&init),
            },
            release_ms: MsSummary::from_ns(&release),
            read_ref: read_used.as_ref().map(show_ref),
            read_rtt_ms: MsSummary::from_ns(&rtts),
            truncated,
            reports,
            control: control_rt,
        },
        warnings,
        settings: Settings {
            quick: opts.quick,
            associations: opts.associations,
            interval_ms: opts.interval.as_millis() as u64,
            reads: opts.reads,
            timeout_ms: opts.timeout.as_millis() as u64,
            max_time_ms: opts.max_time.as_millis() as u64,
        },
        duration_ms: now_ns().saturating_sub(started) / 1_000_000,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_refs_are_shown_with_their_fc() {
        // The parsing is gander_client::reference's (tested there).
        let a = parse_read_ref("MEAS/MMXU1.MX.TotW.mag.f").unwrap();
        assert_eq!(show_ref(&a), "MEAS/MMXU1.TotW.mag.f [MX]");
    }

    #[test]
    fn options_are_checked() {
        let mut o = ProbeOptions::new("127.0.0.1:102").quick();
        assert_eq!((o.associations, o.reads), (5, 10));
        o.reads = 0;
        assert!(matches!(
            probe(&o),
            Err(ProbeError::InvalidOption {
                what: "--reads",
                ..
            })
        ));
        let o = ProbeOptions::new("no-port-here");
        assert!(matches!(probe(&o), Err(ProbeError::Resolve { .. })));
    }
}
