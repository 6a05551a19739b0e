//! `gander mms control HOST:PORT --object LD/LN.DO --value V [--tls FILE]`: one IEC 61850-7-2 control
//! operation of a named object (docs/mms-peers.md). It changes the device: the object must be
//! named, and `Test` is set unless `--no-test`. Parsing and printing only; the operation is
//! `gander_probe::control`.
use anyhow::Context;
use clap::Args;
use gander_mms::control::ControlOutcome;
use gander_probe::control::{operate, ControlOptions};
use gander_probe::session::{Connector, DEFAULT_MAX_PDU};
use std::net::ToSocketAddrs;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub(crate) struct ControlArgs {
    /// The server, HOST:PORT (102: MMS on TCP; 3782: MMS over TLS).
    target: String,
    /// Client TLS settings (a [tls] table or its contents, docs/tls.md); without it plain TCP.
    #[arg(long, value_name = "FILE")]
    tls: Option<std::path::PathBuf>,
    /// The control object, LD/LN.DO (e.g. IEDLD0/CSWI1.Pos). Required: nothing is operated
    /// unless named.
    #[arg(long)]
    object: String,
    /// The value: true/false, an integer, a number (APC), higher/lower/stop (BSC).
    #[arg(long)]
    value: String,
    /// Operate for real (without it the command carries Test = true and the device must not
    /// change its process).
    #[arg(long)]
    no_test: bool,
    /// Ask for the interlock check.
    #[arg(long)]
    interlock_check: bool,
    /// Ask for the synchrocheck.
    #[arg(long)]
    synchro_check: bool,
    /// orCat (3: remote-control).
    #[arg(long, default_value_t = 3)]
    or_cat: i64,
    /// orIdent.
    #[arg(long, default_value = "gander")]
    or_ident: String,
    /// Longest wait for each answer and for the CommandTermination, ms.
    #[arg(long, default_value_t = 5000)]
    timeout_ms: u64,
}

fn ms(from: Option<u64>, to: Option<u64>) -> serde_json::Value {
    match (from, to) {
        (Some(a), Some(b)) => serde_json::json!(b.saturating_sub(a) as f64 / 1e6),
        _ => serde_json::Value::Null,
    }
}

/// Prints one JSON line; exit 0 when operated, 1 when the server refused or failed it.
pub(crate) fn run(a: ControlArgs) -> anyhow::Result<ExitCode> {
    let addr = a
        .target
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {}", a.target))?
        .next()
        .with_context(|| format!("{} has no address", a.target))?;
    let timeout = Duration::from_millis(a.timeout_ms);
    let backend = match &a.tls {
        Some(f) => {
            let mut p = gander_tls::TlsProfile::from_file(f)
                .with_context(|| format!("--tls {}", f.display()))?;
            // The step timeout governs the handshake too.
            p.io_timeout_ms = a.timeout_ms.max(1);
            Some(gander_tls::backend::open(&p).with_context(|| format!("--tls {}", f.display()))?)
        }
        None => None,
    };
    let (mut session, _) = Connector {
        max_pdu: Some(DEFAULT_MAX_PDU),
        ..Connector::new(addr, backend.as_deref(), timeout)
    }
    .connect()?;
    let r = operate(
        &mut session,
        &ControlOptions {
            object: a.object.clone(),
            value: a.value,
            test: !a.no_test,
            interlock_check: a.interlock_check,
            synchro_check: a.synchro_check,
            or_cat: a.or_cat,
            or_ident: a.or_ident.into_bytes(),
            termination_timeout: timeout,
        },
    );
    let released = session.release().is_ok();
    let r = r?;
    let t = r.times;
    let (outcome, lae, error) = match &r.outcome {
        ControlOutcome::Done => ("done", None, None),
        ControlOutcome::SelectFailed => ("select-failed", None, None),
        ControlOutcome::Refused {
            last_appl_error,
            error,
            ..
        } => ("refused", last_appl_error.as_ref(), Some(error.0)),
        ControlOutcome::TerminatedNegative(l) => ("terminated-negative", Some(l), None),
        ControlOutcome::Protocol(_) => ("protocol-error", None, None),
    };
    let doc = serde_json::json!({
        "object": a.object,
        "ctl_model": r.model.code(),
        "outcome": outcome,
        "detail": match &r.outcome { ControlOutcome::Protocol(w) => Some(*w), _ => None },
        "data_access_error": error,
        "add_cause": lae.map(|l| l.add_cause.0),
        "add_cause_name": lae.and_then(|l| l.add_cause.name()),
        "select_ms": ms(t.started, t.selected),
        "operate_ms": ms(t.selected.or(t.started), t.operated),
        "termination_ms": ms(t.operated, t.terminated),
        "released": released,
    });
    println!("{doc}");
    Ok(if r.outcome == ControlOutcome::Done {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
