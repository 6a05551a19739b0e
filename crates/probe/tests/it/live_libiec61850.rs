//! The probe's session against a live libiec61850 1.6.1 server (the pyiec61850-ng wheel,
//! started from Python with the model of `crates/mms/tests/golden/capture_services.py`) over
//! plain TCP on loopback: discovery with GetNameList continuation (a 400-octet PDU size), then
//! the BRCB and URCB planner's enable writes, a GI report, and the restore, for every buffer
//! start of a BRCB.
//!
//! Needs the project's `.venv` (`make venv`) or `GANDER_PYTHON` pointing at a Python with the
//! wheel; without one the test says so and passes without checking anything.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gander_client::clock::now_ns;
use gander_mms::bit_string::BitString;
use gander_mms::pdu::{ConfirmedRequest, ConfirmedResponse};
use gander_mms::rcb_plan::{find_rcbs, BufferStart, RcbKind, RcbPlan, RcbSnapshot, ReportSettings};
use gander_mms::report::Report;
use gander_mms::service::{
    GetNameListRequest, GetNamedVariableListAttributesRequest, GetVariableAccessAttributesRequest,
    ObjectName,
};
use gander_probe::session::{Connector, Session};
use gander_wire::data::Data;

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GANDER_PYTHON") {
        return Some(p.into());
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = root.join(".venv/bin/python");
    p.exists().then_some(p)
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const LD: &str = "IMPLD0";

#[test]
fn discover_and_plan_against_libiec61850() {
    let Some(py) = python() else {
        eprintln!("skipped: no .venv with pyiec61850-ng (set GANDER_PYTHON)");
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let golden = root.join("crates/mms/tests/golden");
    let child = Command::new(py)
        .arg(golden.join("serve_libiec61850.py"))
        .env(
            "PYTHONPATH",
            format!("{}:{}", root.join("interop").display(), golden.display()),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start python");
    let mut server = Server(child);
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().expect("port from the server");
    let connector = Connector {
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        tls: None,
        timeout: Duration::from_secs(5),
        max_pdu: Some(400), // several GetNameList pages
        diagnose: true,
    };
    let (mut s, t) = connector.connect().unwrap();
    assert!(t.total_ns() > 0 && t.tls_ns.is_none());
    assert_eq!(s.negotiated().unwrap().local_detail, Some(400));

    let ConfirmedResponse::Identify(id) = s.call(ConfirmedRequest::Identify, "Identify").unwrap()
    else {
        panic!()
    };
    assert_eq!(
        (id.vendor.as_str(), id.model.as_str(), id.revision.as_str()),
        ("gander-test", "capture", "1.6.1")
    );
    assert_eq!(
        s.names(GetNameListRequest::domains(), "domains").unwrap(),
        [LD]
    );
    let vars = s
        .names(GetNameListRequest::variables(LD), "variables")
        .unwrap();
    assert!(vars.contains(&"GGIO1$CO$SPCSO1$Oper$ctlVal".to_string()));
    let sets = s
        .names(GetNameListRequest::variable_lists(LD), "data sets")
        .unwrap();
    assert_eq!(sets, ["LLN0$DS1"]);
    let ConfirmedResponse::GetNamedVariableListAttributes(ds) = s
        .call(
            ConfirmedRequest::GetNamedVariableListAttributes(
                GetNamedVariableListAttributesRequest(ObjectName::domain(LD, "LLN0$DS1")),
            ),
            "DS1",
        )
        .unwrap()
    else {
        panic!()
    };
    let n = ds.members.len();
    assert_eq!(n, 2);

    use BufferStart::{Keep, Purge, ResumeAfter};
    // BRCB without configuration changes, whose OptFlds include entryID: the GI report's
    // EntryID, then a resynchronisation after it (libiec61850 refuses an EntryID it no longer
    // buffers, object-value-invalid, so this checks that the entry survived the restore).
    let first = plan_enable_restore(&mut s, &vars, RcbKind::Buffered, n, Keep, false);
    let entry = first
        .entry_id
        .clone()
        .expect("EntryID in the BRCB's report");
    assert_eq!(entry.len(), 8);
    plan_enable_restore(
        &mut s,
        &vars,
        RcbKind::Buffered,
        n,
        ResumeAfter(entry),
        false,
    );
    // With configuration changes, and purging the buffer.
    plan_enable_restore(&mut s, &vars, RcbKind::Buffered, n, Purge, true);
    plan_enable_restore(&mut s, &vars, RcbKind::Unbuffered, n, Keep, true);
    assert!(s.release().unwrap().duration_ns > 0);
}

/// Plan, enable, take the GI report, restore, and compare one control block of `kind`.
fn plan_enable_restore(
    s: &mut Session,
    vars: &[String],
    kind: RcbKind,
    members: usize,
    buffer: BufferStart,
    configure: bool,
) -> Report {
    let rcb = find_rcbs(LD, vars)
        .into_iter()
        .find(|r| r.kind == kind)
        .expect("an RCB of that kind");
    let ConfirmedResponse::GetVariableAccessAttributes(t) = s
        .call(
            ConfirmedRequest::GetVariableAccessAttributes(GetVariableAccessAttributesRequest(
                rcb.object_name(),
            )),
            "RCB type",
        )
        .unwrap()
    else {
        panic!()
    };
    let value = s.read_value(&rcb.object_name(), "RCB").unwrap();
    let found = RcbSnapshot::from_type_and_value(rcb.clone(), &t.type_spec, &value).unwrap();
    let settings = ReportSettings {
        trg_ops: configure.then(|| BitString::with_bits(6, &[1, 4, 5])),
        intg_pd: configure.then_some(5000),
        buf_tm: configure.then_some(0),
        resv_tms: (kind == RcbKind::Buffered).then_some(30),
        gi: true,
        buffer,
        ..Default::default()
    };
    let plan = RcbPlan::new(&found, &settings).unwrap();
    // Reports of the previous block that came in during its restore are not this block's.
    while s.next_report(now_ns()).unwrap().is_some() {}
    for step in plan.enable() {
        s.write(step.write_request(), &step.attr)
            .unwrap()
            .unwrap_or_else(|e| panic!("enable {}: {e}", step.attr));
    }
    let enabled = RcbSnapshot::from_value(
        rcb.clone(),
        &s.read_value(&rcb.object_name(), "RCB").unwrap(),
    )
    .unwrap();
    assert_eq!(enabled.get("RptEna"), Some(&Data::Boolean(true)));
    match kind {
        RcbKind::Buffered => assert_eq!(enabled.get("ResvTms"), Some(&Data::Integer(30))),
        RcbKind::Unbuffered => assert_eq!(enabled.get("Resv"), Some(&Data::Boolean(true))),
    }
    // The GI report: both members, for the data set read above.
    let rx = s
        .next_report(now_ns() + 5_000_000_000)
        .unwrap()
        .expect("a GI report within 5 s");
    let r = Report::from_information_report(&rx.report).expect("report decodes");
    let rpt_id = match kind {
        RcbKind::Buffered => "brpt01",
        RcbKind::Unbuffered => "rpt01",
    };
    assert_eq!(r.rpt_id, rpt_id);
    r.check_data_set_len(members).unwrap();
    assert_eq!(r.entries().len(), 2);
    for step in plan.restore() {
        s.write(step.write_request(), &step.attr)
            .unwrap()
            .unwrap_or_else(|e| panic!("restore {}: {e}", step.attr));
    }
    let after = RcbSnapshot::from_value(
        rcb.clone(),
        &s.read_value(&rcb.object_name(), "RCB").unwrap(),
    )
    .unwrap();
    assert!(
        gander_probe::reports::differences(&found, &after).is_empty(),
        "{:?}",
        gander_probe::reports::differences(&found, &after)
    );
    r
}
