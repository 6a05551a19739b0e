//! gander's client services against a live libiec61850 1.6.1 server (the pyiec61850-ng wheel,
//! started from Python with the model of `tests/golden/capture_services.py`) over plain TCP on
//! loopback: discovery, then the BRCB planner's enable writes, a GI report, and the restore.
//!
//! Needs the project's `.venv` (`make venv`) or `GANDER_PYTHON` pointing at a Python with the
//! wheel; without one the test says so and passes without checking anything.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gander_mms::association::{ClientAssociation, ClientConfig};

/// The association's events, plus a tick after each read so a caller can wait on reports
/// already queued.
enum Event {
    Assoc(gander_mms::association::Event),
    Tick,
}
use gander_mms::association::Event as A;
use gander_mms::bit_string::BitString;
use gander_mms::pdu::{ConfirmedRequest, ConfirmedResponse};
use gander_mms::rcb_plan::{find_rcbs, BufferStart, RcbKind, RcbPlan, RcbSnapshot, ReportSettings};
use gander_mms::report::Report;
use gander_mms::service::{
    AccessResult, GetNameListRequest, GetNamedVariableListAttributesRequest,
    GetVariableAccessAttributesRequest, NameListQuery, ObjectName,
};
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

struct Live {
    tcp: TcpStream,
    c: ClientAssociation,
    t0: Instant,
    reports: Vec<Report>,
}

impl Live {
    fn now(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn flush(&mut self) {
        while let Some(p) = self.c.poll_transmit() {
            self.tcp.write_all(&p).unwrap();
        }
    }

    /// Read until `done` finds what it wants among the events, or 5 s pass.
    fn until<T>(&mut self, mut done: impl FnMut(Event, &mut Vec<Report>) -> Option<T>) -> T {
        let end = Instant::now() + Duration::from_secs(5);
        let mut buf = [0u8; 65536];
        loop {
            self.flush();
            while let Some(ev) = self.c.poll_event() {
                if let A::InformationReport { report, .. } = &ev {
                    if report.is_rpt() {
                        let r = Report::from_information_report(report).expect("report decodes");
                        self.reports.push(r);
                        continue;
                    }
                }
                if let Some(t) = done(Event::Assoc(ev), &mut self.reports) {
                    return t;
                }
            }
            if let Some(t) = done(Event::Tick, &mut self.reports) {
                return t;
            }
            assert!(Instant::now() < end, "timed out");
            match self.tcp.read(&mut buf) {
                Ok(0) => panic!("server closed"),
                Ok(n) => {
                    let now = self.now();
                    self.c.handle_input(now, &buf[..n]);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("{e}"),
            }
        }
    }

    fn call(&mut self, req: ConfirmedRequest) -> ConfirmedResponse {
        let now = self.now();
        let id = self.c.request(now, req).unwrap();
        self.until(|ev, _| match ev {
            Event::Assoc(A::Response {
                invoke_id,
                response,
                ..
            }) if invoke_id == id => Some(response),
            Event::Assoc(A::ServiceError { error, .. }) => panic!("service error {error:?}"),
            Event::Assoc(A::Rejected { reject, .. }) => panic!("rejected {reject:?}"),
            Event::Assoc(A::Closed { reason, .. }) => panic!("closed: {reason:?}"),
            _ => None,
        })
    }

    fn names(&mut self, req: GetNameListRequest) -> Vec<String> {
        let mut q = NameListQuery::new(req);
        while let Some(r) = q.next_request() {
            let ConfirmedResponse::GetNameList(a) = self.call(ConfirmedRequest::GetNameList(r))
            else {
                panic!()
            };
            q.on_response(a).unwrap();
        }
        q.into_names()
    }

    fn read(&mut self, n: &ObjectName) -> Data {
        let r = self.call(ConfirmedRequest::Read(gander_mms::service::ReadRequest {
            specification_with_result: false,
            spec: gander_mms::service::VariableAccessSpecification::names([n.clone()]),
        }));
        let ConfirmedResponse::Read(r) = r else {
            panic!()
        };
        match r.results.as_slice() {
            [AccessResult::Success(d)] => d.clone(),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn discover_and_plan_against_libiec61850() {
    let Some(py) = python() else {
        eprintln!("skipped: no .venv with pyiec61850-ng (set GANDER_PYTHON)");
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = format!(
        "{}:{}",
        root.join("interop").display(),
        root.join("crates/mms/tests/golden").display()
    );
    let child = Command::new(py)
        .arg(root.join("crates/mms/tests/golden/serve_libiec61850.py"))
        .env("PYTHONPATH", path)
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
    let tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    tcp.set_nodelay(true).unwrap();
    let mut cc = ClientConfig::default();
    cc.initiate.local_detail = Some(400); // several GetNameList pages
    let mut l = Live {
        tcp,
        c: ClientAssociation::new(cc),
        t0: Instant::now(),
        reports: Vec::new(),
    };
    l.c.connect(0).unwrap();
    l.until(|ev, _| matches!(ev, Event::Assoc(A::Associated { .. })).then_some(()));

    let ConfirmedResponse::Identify(id) = l.call(ConfirmedRequest::Identify) else {
        panic!()
    };
    assert_eq!(
        (id.vendor.as_str(), id.model.as_str(), id.revision.as_str()),
        ("gander-test", "capture", "1.6.1")
    );
    assert_eq!(l.names(GetNameListRequest::domains()), ["IMPLD0"]);
    let vars = l.names(GetNameListRequest::variables("IMPLD0"));
    assert!(vars.contains(&"GGIO1$CO$SPCSO1$Oper$ctlVal".to_string()));
    let sets = l.names(GetNameListRequest::variable_lists("IMPLD0"));
    assert_eq!(sets, ["LLN0$DS1"]);
    let ConfirmedResponse::GetNamedVariableListAttributes(ds) =
        l.call(ConfirmedRequest::GetNamedVariableListAttributes(
            GetNamedVariableListAttributesRequest(ObjectName::domain("IMPLD0", "LLN0$DS1")),
        ))
    else {
        panic!()
    };
    assert_eq!(ds.members.len(), 2);

    let n = ds.members.len();
    use BufferStart::{Keep, Purge, ResumeAfter};
    // BRCB without configuration changes, whose OptFlds include entryID: the GI report's
    // EntryID, then a resynchronisation after it (libiec61850 refuses an EntryID it no longer
    // buffers, object-value-invalid, so this checks that the entry survived the restore).
    let first = plan_enable_restore(&mut l, &vars, RcbKind::Buffered, n, Keep, false);
    let entry = first
        .entry_id
        .clone()
        .expect("EntryID in the BRCB's report");
    assert_eq!(entry.len(), 8);
    plan_enable_restore(
        &mut l,
        &vars,
        RcbKind::Buffered,
        n,
        ResumeAfter(entry),
        false,
    );
    // With configuration changes, and purging the buffer.
    plan_enable_restore(&mut l, &vars, RcbKind::Buffered, n, Purge, true);
    plan_enable_restore(&mut l, &vars, RcbKind::Unbuffered, n, Keep, true);
    let now = l.now();
    l.c.release(now).unwrap();
    l.until(|ev, _| matches!(ev, Event::Assoc(A::Closed { .. })).then_some(()));
}

/// Plan, enable, take the GI report, restore, and compare one control block of `kind`.
fn plan_enable_restore(
    l: &mut Live,
    vars: &[String],
    kind: RcbKind,
    members: usize,
    buffer: BufferStart,
    configure: bool,
) -> Report {
    let rcb = find_rcbs("IMPLD0", vars)
        .into_iter()
        .find(|r| r.kind == kind)
        .expect("an RCB of that kind");
    let ConfirmedResponse::GetVariableAccessAttributes(t) =
        l.call(ConfirmedRequest::GetVariableAccessAttributes(
            GetVariableAccessAttributesRequest(rcb.object_name()),
        ))
    else {
        panic!()
    };
    let found =
        RcbSnapshot::from_type_and_value(rcb.clone(), &t.type_spec, &l.read(&rcb.object_name()))
            .unwrap();
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
    for step in plan.enable() {
        let ConfirmedResponse::Write(w) = l.call(ConfirmedRequest::Write(step.write_request()))
        else {
            panic!()
        };
        w.check()
            .unwrap_or_else(|e| panic!("enable {}: {e}", step.attr));
    }
    let enabled = RcbSnapshot::from_value(rcb.clone(), &l.read(&rcb.object_name())).unwrap();
    assert_eq!(enabled.get("RptEna"), Some(&Data::Boolean(true)));
    match kind {
        RcbKind::Buffered => assert_eq!(enabled.get("ResvTms"), Some(&Data::Integer(30))),
        RcbKind::Unbuffered => assert_eq!(enabled.get("Resv"), Some(&Data::Boolean(true))),
    }
    // The GI report: both members, for the data set read above.
    let r = l.until(|_, reports| reports.pop());
    let rpt_id = match kind {
        RcbKind::Buffered => "brpt01",
        RcbKind::Unbuffered => "rpt01",
    };
    assert_eq!(r.rpt_id, rpt_id);
    r.check_data_set_len(members).unwrap();
    assert_eq!(r.entries().len(), 2);
    for step in plan.restore() {
        let ConfirmedResponse::Write(w) = l.call(ConfirmedRequest::Write(step.write_request()))
        else {
            panic!()
        };
        w.check()
            .unwrap_or_else(|e| panic!("restore {}: {e}", step.attr));
    }
    let after = RcbSnapshot::from_value(rcb, &l.read(&rcb_name_of(&found))).unwrap();
    for ((n, a), (_, b)) in after.attrs.iter().zip(&found.attrs) {
        // Status values the server advanced by reporting.
        if matches!(n.as_str(), "SqNum" | "EntryID" | "TimeOfEntry") {
            continue;
        }
        assert_eq!(a, b, "{n} reads as found");
    }
    r
}

fn rcb_name_of(s: &RcbSnapshot) -> ObjectName {
    s.rcb.object_name()
}
