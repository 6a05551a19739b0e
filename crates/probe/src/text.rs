//! The human-readable summary of a probe (what `gander probe` prints without `--json`).
use crate::stats::MsSummary;
use crate::ProbeReport;
use std::fmt::Write;

fn ms(s: &Option<MsSummary>) -> String {
    match s {
        Some(s) => format!(
            "median {:.3} ms, p90 {:.3}, min {:.3}, max {:.3} (n={})",
            s.median, s.p90, s.min, s.max, s.n
        ),
        None => "not measured".into(),
    }
}

/// Renders the report as text, one fact per line.
pub fn render(r: &ProbeReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "gander probe {} ({})", r.target, r.address);
    match r.tls.as_ref().map(|t| &t.connection) {
        Some(t) => {
            let _ = writeln!(
                o,
                "  transport: TLS {} {} (client backend {}{})",
                t.version.as_deref().unwrap_or("?"),
                t.suite.as_deref().unwrap_or("?"),
                t.backend,
                t.group
                    .as_deref()
                    .map(|g| format!(", group {g}"))
                    .unwrap_or_default()
            );
        }
        None => {
            let _ = writeln!(o, "  transport: plain TCP (no TLS)");
        }
    }
    if let Some(m) = &r.mms {
        let _ = writeln!(
            o,
            "  MMS: max PDU {} octets, outstanding {}/{}, nesting {}",
            m.max_pdu_size.map_or("?".into(), |v| v.to_string()),
            m.max_serv_outstanding_calling,
            m.max_serv_outstanding_called,
            m.nesting_level.map_or("?".into(), |v| v.to_string())
        );
    }
    match &r.identity {
        Some(i) => {
            let _ = writeln!(
                o,
                "  identity: vendor {:?}, model {:?}, revision {:?}",
                i.vendor, i.model, i.revision
            );
        }
        None => {
            let said = |p: &str| r.warnings.iter().any(|w| w.starts_with(p));
            let why = if said("Identify not answered") {
                "not answered (taken as not supported, see warnings)"
            } else if said("Identify not supported") || said("Identify: answered") {
                "not supported by the server"
            } else {
                "unknown (the association failed before Identify was answered)"
            };
            let _ = writeln!(o, "  identity: {why}");
        }
    }
    let _ = writeln!(o, "model:");
    for ld in &r.model.logical_devices {
        let _ = writeln!(
            o,
            "  {} ({} variables): {}",
            ld.name,
            ld.variables,
            ld.logical_nodes.join(" ")
        );
    }
    let _ = writeln!(o, "data sets ({}):", r.model.data_sets.len());
    for ds in &r.model.data_sets {
        match &ds.error {
            Some(e) => {
                let _ = writeln!(o, "  {}: unreadable: {e}", ds.reference);
            }
            None => {
                let _ = writeln!(o, "  {} ({} members)", ds.reference, ds.members.len());
                for m in &ds.members {
                    let _ = writeln!(
                        o,
                        "    {}{}",
                        m.reference,
                        m.fc.as_deref()
                            .map(|f| format!(" [{f}]"))
                            .unwrap_or_default()
                    );
                }
            }
        }
    }
    let _ = writeln!(o, "report control blocks ({}):", r.model.rcbs.len());
    for c in &r.model.rcbs {
        if let Some(e) = &c.error {
            let _ = writeln!(o, "  {}: unreadable: {e}", c.reference);
            continue;
        }
        let _ = writeln!(
            o,
            "  {} {} RptID {:?} DatSet {} {}",
            c.reference,
            if c.buffered { "buffered" } else { "unbuffered" },
            c.rpt_id.as_deref().unwrap_or(""),
            c.data_set.as_deref().unwrap_or("-"),
            match (c.free, c.rpt_ena) {
                (Some(true), _) => "free",
                (_, Some(true)) => "ENABLED by a client",
                _ => "reserved",
            }
        );
        let _ = writeln!(
            o,
            "    OptFlds {} | TrgOps {} | BufTm {} | IntgPd {} | ConfRev {}",
            c.opt_flds.as_ref().map_or("?".into(), |v| v.join(",")),
            c.trg_ops.as_ref().map_or("?".into(), |v| v.join(",")),
            c.buf_tm.map_or("?".into(), |v| v.to_string()),
            c.intg_pd.map_or("?".into(), |v| v.to_string()),
            c.conf_rev.map_or("?".into(), |v| v.to_string()),
        );
    }
    let m = &r.measurements;
    let _ = writeln!(o, "measurements:");
    let _ = writeln!(o, "  HT {}", ms(&m.ht_ms));
    let _ = writeln!(o, "    TCP connect   {}", ms(&m.ht_steps_ms.tcp));
    if r.tls.is_some() {
        let _ = writeln!(o, "    TLS handshake {}", ms(&m.ht_steps_ms.tls));
    }
    let _ = writeln!(o, "    COTP connect  {}", ms(&m.ht_steps_ms.cotp));
    let _ = writeln!(o, "    MMS initiate  {}", ms(&m.ht_steps_ms.initiate));
    let _ = writeln!(o, "  release {}", ms(&m.release_ms));
    let _ = writeln!(
        o,
        "  read RTT of {}: {}",
        m.read_ref.as_deref().unwrap_or("(none)"),
        ms(&m.read_rtt_ms)
    );
    if let Some(rep) = &m.reports {
        let _ = writeln!(
            o,
            "  reports of {} (RptID {:?}): {} in {} ms, GI {}, {} missing by SqNum",
            rep.rcb,
            rep.rpt_id,
            rep.count,
            rep.listened_ms,
            if rep.gi_received {
                "received"
            } else {
                "not seen"
            },
            rep.seq_gaps
        );
        let _ = writeln!(o, "    inter-arrival {}", ms(&rep.inter_arrival_ms));
        match &rep.latency_ms {
            Some(l) => {
                let _ = writeln!(o, "    latency from data t {}", ms(&l.data));
                let _ = writeln!(o, "    latency from TimeOfEntry {}", ms(&l.entry));
            }
            None => {
                let _ = writeln!(
                    o,
                    "    latency: not computed (declare synchronised clocks with --clocks-synchronised)"
                );
            }
        }
        let _ = writeln!(
            o,
            "    wrote {}; restored as found: {}",
            rep.written.join(", "),
            if rep.restored { "yes" } else { "NO" }
        );
    }
    if let Some(c) = &m.control {
        control(&mut o, c);
    }
    if let Some(sv) = r.tls.as_ref().and_then(|t| t.survey.as_ref()) {
        let _ = writeln!(o, "  TLS survey:");
        for line in gander_tls::survey::render(sv).lines() {
            let _ = writeln!(o, "    {line}");
        }
    }
    for w in &r.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    outcome(&mut o, r);
    let _ = writeln!(o, "done in {} ms", r.duration_ms);
    o
}

/// `--control`: the phases' nearest-rank statistics and the values operated.
fn control(o: &mut String, c: &gander_client::control_rt::ControlRt) {
    let _ = writeln!(
        o,
        "  control of {} ({}, Test {}): {} of {} operations, values {}",
        c.object,
        c.ctl_model_name,
        if c.test { "set" } else { "NOT set" },
        c.operated,
        c.asked,
        c.values.join(" / ")
    );
    for (name, s) in [
        ("select", &c.select_ms),
        ("operate", &c.operate_ms),
        ("termination", &c.termination_ms),
        ("cancel", &c.cancel_ms),
    ] {
        if let Some(s) = s {
            let _ = writeln!(
                o,
                "    {name:<11} n={} p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
                s.n, s.p50_ms, s.p99_ms, s.max_ms
            );
        }
    }
    if let Some(why) = &c.stopped {
        let _ = writeln!(o, "    stopped: {why}");
    }
    if let Some(r) = &c.state_ref {
        let _ = writeln!(
            o,
            "    {r}: {} before, {} after",
            c.before.as_deref().unwrap_or("?"),
            c.after.as_deref().unwrap_or("?")
        );
    }
}

/// The outcome lines: complete or partial, the failed step, how the device was left.
fn outcome(o: &mut String, r: &ProbeReport) {
    use crate::outcome::{AssociationEnd, RcbState};
    if let Some(f) = &r.failed {
        let _ = writeln!(
            o,
            "PARTIAL: the {} step failed ({}): {}; the results above are what was gathered",
            f.step.word(),
            f.kind,
            f.message
        );
    }
    let assoc = match r.device.association {
        AssociationEnd::Released => "released",
        AssociationEnd::Aborted => "aborted by the probe",
        AssociationEnd::ClosedByServer => "closed by the server",
    };
    let rcb = match r.device.rcb {
        None => String::new(),
        Some(RcbState::Untouched) => ", report control block not written".into(),
        Some(RcbState::Restored) => ", report control block restored".into(),
        Some(RcbState::NotRestored) => {
            ", report control block NOT restored (see the failure)".into()
        }
    };
    let ht = match r.device.ht_aborted {
        0 => String::new(),
        n => format!(", {n} HT association(s) aborted"),
    };
    use gander_client::control_rt::DeviceLeft;
    let ctl = match &r.device.control {
        None => String::new(),
        Some(DeviceLeft::Untouched) => ", control object not operated".into(),
        Some(DeviceLeft::AsFound) => ", control object as found".into(),
        Some(DeviceLeft::Restored) => ", control object restored to its state before".into(),
        Some(DeviceLeft::NotRestored { detail }) => {
            format!(", control object NOT restored: {detail}")
        }
        Some(DeviceLeft::Unknown { detail }) => {
            format!(", control object state unknown: {detail}")
        }
    };
    let _ = writeln!(
        o,
        "device left: discovery association {assoc}{rcb}{ctl}{ht}"
    );
}
