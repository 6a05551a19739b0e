//! `gander probe HOST:PORT`: the model, the TLS connection, HT, read RTT and (with `--reports`)
//! reports of any IEC 61850 server (docs/probe.md). Parsing and printing only; the probe is
//! `gander_probe::probe`.
use anyhow::Context;
use clap::Args;
use gander_probe::reports::ReportOptions;
use gander_probe::{model, outcome, probe, text, ProbeOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
#[command(
    after_help = "Exit status: 0 complete; 3 partial (a step failed after the association \
was up: the report says which, what was gathered and how the device was left); 1 nothing \
gathered (no association); 2 usage (an option or the TLS file)."
)]
pub(crate) struct ProbeArgs {
    /// The server, HOST:PORT (102: MMS on TCP; 3782: MMS over TLS); or `diff OLD.json
    /// NEW.json` to compare two fleet sweeps. Not with --scd/--targets.
    target: Option<String>,
    /// `diff`'s two fleet.json files.
    #[arg(hide = true)]
    rest: Vec<String>,
    /// A sweep of many devices (docs/probe.md, "Fleet").
    #[command(flatten)]
    fleet: crate::cmd_fleet::FleetArgs,
    /// Client TLS settings (a [tls] table or its contents: ca, cert, key, optional backend,
    /// versions, cipher_suites; docs/tls.md). Without it the probe connects without TLS.
    #[arg(long, value_name = "FILE")]
    tls: Option<PathBuf>,
    /// Print the result as one JSON document (schema in docs/probe.md).
    #[arg(long)]
    json: bool,
    /// Fewer samples: 5 associations, 10 reads, 15 s cap.
    #[arg(long)]
    quick: bool,
    /// Also write probe.json and probe.txt into DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Receive reports from RCB (LD/LN.BR.name or LD/LN.RP.name; a base name such as
    /// LD/LLN0.BR.brcbA takes the first free indexed instance brcbA01, brcbA02, ...), or from
    /// the first free control block when no name is given. WRITES to the device (reservation, OptFlds, TrgOps,
    /// RptEna, GI) and puts every attribute back as found afterwards.
    #[arg(long, value_name = "RCB", num_args = 0..=1, default_missing_value = "")]
    reports: Option<String>,
    /// How long to receive reports, seconds (default 10; 3 with --quick).
    #[arg(long, value_name = "S")]
    listen_s: Option<f64>,
    /// Declare the device's clock and this host's synchronised: report latencies from the
    /// device's timestamps.
    #[arg(long, alias = "clocks-synchronized")]
    clocks_synchronised: bool,
    /// The data attribute for the read round-trip time (LD/LN$FC$DO$DA or LD/LN.FC.DO.DA);
    /// default: the first readable ST or MX attribute.
    #[arg(long, value_name = "REF")]
    read: Option<String>,
    /// Associations for HT (default 20; 5 with --quick).
    #[arg(long, value_name = "N")]
    associations: Option<usize>,
    /// Pause between associations, ms (default 100; 20 with --quick).
    #[arg(long, value_name = "MS")]
    interval_ms: Option<u64>,
    /// Reads for the read RTT (default 50; 10 with --quick).
    #[arg(long, value_name = "N")]
    reads: Option<usize>,
    /// Longest wait for each step (connect, handshake, each answer), ms.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    timeout_ms: u64,
    /// Cap on the measuring time (associations and reads), seconds.
    #[arg(long, value_name = "S")]
    max_time_s: Option<u64>,
    /// Measure the control round trips (select, operate, CommandTermination, Cancel) of this
    /// object, LD/LN.DO. WRITES to the device: it is operated --control-count times with
    /// alternating values, Test set unless --no-test, its stVal read before and after and
    /// commanded back when it differs (docs/probe.md). Never without this option.
    #[arg(long, value_name = "LD/LN.DO")]
    control: Option<String>,
    /// The first value operated (true/false, an integer, a number, higher/lower); default: the
    /// opposite of the object's state.
    #[arg(long, value_name = "V", requires = "control")]
    control_value: Option<String>,
    /// Operations for the control round trips (default 10; 4 with --quick).
    #[arg(long, value_name = "N", requires = "control")]
    control_count: Option<usize>,
    /// Operate for real: clear Test in the commands (the device changes its process; the
    /// state is still restored). Without it, Test is set.
    #[arg(long, requires = "control")]
    no_test: bool,
    /// With --tls: skip the survey of what the server accepts (versions, suites, certificate
    /// chain, client authentication, resumption; docs/tls-survey.md).
    #[arg(long)]
    no_tls_survey: bool,
}

pub(crate) fn run(a: ProbeArgs) -> anyhow::Result<ExitCode> {
    if a.target.as_deref() == Some("diff") {
        let [old, new] = a.rest.as_slice() else {
            anyhow::bail!("gander probe diff OLD.json NEW.json");
        };
        return crate::cmd_fleet::run_diff(old.as_ref(), new.as_ref(), a.json);
    }
    anyhow::ensure!(a.rest.is_empty(), "unexpected arguments: {:?}", a.rest);
    if a.fleet.wanted() {
        anyhow::ensure!(a.target.is_none(), "HOST:PORT or --scd/--targets, not both");
        let tls = match &a.tls {
            Some(p) => Some(
                gander_tls::TlsProfile::from_file(p)
                    .with_context(|| format!("--tls {}", p.display()))?,
            ),
            None => None,
        };
        return crate::cmd_fleet::run(
            &a.fleet,
            tls,
            Duration::from_millis(a.timeout_ms),
            a.out.as_deref(),
            a.json,
        );
    }
    let Some(target) = a.target.clone() else {
        // `--reports` takes an optional value, so `--reports 192.0.2.10:102` reads the target
        // as a control block name: say so rather than "no target".
        if let Some(r) = a.reports.as_deref().filter(|r| looks_like_target(r)) {
            anyhow::bail!(
                "--reports took {r:?} as its control block; put HOST:PORT before --reports \
                 (gander probe {r} --reports), or name the block with --reports=RCB"
            );
        }
        anyhow::bail!("HOST:PORT, --scd FILE or --targets FILE");
    };
    let mut o = ProbeOptions::new(target.clone());
    if a.quick {
        o = o.quick();
    }
    if let Some(p) = &a.tls {
        o.tls = Some(
            gander_tls::TlsProfile::from_file(p)
                .with_context(|| format!("--tls {}", p.display()))?,
        );
    }
    o.timeout = Duration::from_millis(a.timeout_ms);
    o.tls_survey = !a.no_tls_survey;
    if let Some(n) = a.associations {
        o.associations = n;
    }
    if let Some(ms) = a.interval_ms {
        o.interval = Duration::from_millis(ms);
    }
    if let Some(n) = a.reads {
        o.reads = n;
    }
    if let Some(s) = a.max_time_s {
        o.max_time = Duration::from_secs(s);
    }
    o.read = a.read.clone();
    if let Some(r) = &a.reports {
        let rcb = if r.is_empty() {
            None
        } else {
            Some(model::parse_rcb(r).ok_or_else(|| {
                anyhow::anyhow!("--reports {r:?}: expected LD/LN.BR.name or LD/LN.RP.name")
            })?)
        };
        let listen = a.listen_s.unwrap_or(if a.quick { 3.0 } else { 10.0 });
        anyhow::ensure!(
            listen.is_finite() && (0.0..=3600.0).contains(&listen),
            "--listen-s {listen}: expected 0..3600"
        );
        o.reports = Some(ReportOptions {
            rcb,
            listen: Duration::from_secs_f64(listen),
            clocks_synchronised: a.clocks_synchronised,
        });
    }
    if let Some(object) = &a.control {
        o.control = Some(gander_probe::control_options(
            object,
            a.control_value.as_deref().unwrap_or(""),
            !a.no_test,
            a.control_count.unwrap_or(if a.quick { 4 } else { 10 }),
            &o,
        ));
    }
    if let Some(d) = &a.out {
        std::fs::create_dir_all(d).with_context(|| format!("--out {}", d.display()))?;
    }
    match probe(&o) {
        Ok(r) => {
            let json = serde_json::to_string_pretty(&r)?;
            let human = text::render(&r);
            if let Some(d) = &a.out {
                std::fs::write(d.join("probe.json"), format!("{json}\n"))?;
                std::fs::write(d.join("probe.txt"), &human)?;
            }
            if a.json {
                crate::out(json);
            } else {
                crate::out(human.trim_end());
            }
            Ok(ExitCode::from(match &r.failed {
                None => outcome::EXIT_COMPLETE,
                Some(f) => {
                    eprintln!(
                        "gander probe: partial: the {} step failed: {}",
                        f.step.word(),
                        f.message
                    );
                    outcome::EXIT_PARTIAL
                }
            }))
        }
        Err(e) => {
            let msg = e.chain();
            // Nothing gathered: the discovery association never came up (or the invocation
            // is wrong and nothing was sent).
            let failed = (!e.is_usage()).then(
                || serde_json::json!({ "step": "connect", "kind": e.kind(), "message": msg }),
            );
            let doc = serde_json::json!({
                "schema": gander_probe::SCHEMA,
                "target": target,
                "outcome": if e.is_usage() { "usage" } else { "nothing" },
                "failed": failed,
                "error": { "kind": e.kind(), "message": msg },
            });
            if let Some(d) = &a.out {
                std::fs::write(d.join("probe.json"), format!("{doc:#}\n"))?;
                std::fs::write(d.join("probe.txt"), format!("gander probe: {msg}\n"))?;
            }
            if a.json {
                crate::out(doc);
            }
            eprintln!("gander probe: {msg}");
            Ok(ExitCode::from(if e.is_usage() {
                outcome::EXIT_USAGE
            } else {
                outcome::EXIT_NOTHING
            }))
        }
    }
}

/// A `--reports` value that is an address, not a control block reference (`LD/LN.RP.name`
/// always has a `/`; `HOST:PORT` has none and ends in a port number).
fn looks_like_target(v: &str) -> bool {
    !v.contains('/')
        && v.rsplit_once(':')
            .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
}

#[cfg(test)]
mod target_tests {
    use super::looks_like_target;

    #[test]
    fn an_address_given_to_reports_is_recognised() {
        assert!(looks_like_target("192.0.2.10:102"));
        assert!(looks_like_target("[2001:db8::1]:3782"));
        assert!(looks_like_target("relay.example:102"));
        assert!(!looks_like_target("LD0/LLN0.BR.brcbA"));
        assert!(!looks_like_target("LD0/LLN0$RP$urcb01"));
        assert!(!looks_like_target("urcbA"));
    }
}
