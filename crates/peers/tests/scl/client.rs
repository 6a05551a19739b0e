//! `gander mms server` with an SCL model, driven by gander's own client code: the sans-I/O
//! client association over TCP, the directory services with GetNameList continuation (a
//! 1000-octet MMS PDU forces several pages), and the control-block discovery and planning of
//! `gander_mms::rcb_plan` (find, snapshot, plan, enable, reports, restore), as a probe of an
//! unknown device does it.

use gander_mms::association::{ClientAssociation, ClientConfig, Event};
use gander_mms::pdu::{ConfirmedRequest, ConfirmedResponse};
use gander_mms::rcb_plan::{find_rcbs, RcbPlan, RcbSnapshot, ReportSettings};
use gander_mms::report::Report;
use gander_mms::service::{
    AccessResult, GetNameListRequest, GetNamedVariableListAttributesRequest,
    GetVariableAccessAttributesRequest, ObjectName, ReadRequest, VariableAccessSpecification,
    WriteRequest,
};
use gander_peers::config::ServerConfig;
use gander_peers::events::Sink;
use gander_peers::server::Server;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

struct Cli {
    tcp: TcpStream,
    a: ClientAssociation,
    t0: Instant,
    reports: Vec<Report>,
}

impl Cli {
    fn now(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn connect(addr: std::net::SocketAddr) -> Cli {
        let tcp = TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut config = ClientConfig::default();
        config.initiate.local_detail = Some(1000);
        let mut c = Cli {
            tcp,
            a: ClientAssociation::new(config),
            t0: Instant::now(),
            reports: Vec::new(),
        };
        let now = c.now();
        c.a.connect(now).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            assert!(Instant::now() < deadline, "no association");
            if c.pump()
                .iter()
                .any(|e| matches!(e, Event::Associated { .. }))
            {
                return c;
            }
        }
    }

    fn pump(&mut self) -> Vec<Event> {
        while let Some(p) = self.a.poll_transmit() {
            self.tcp.write_all(&p).unwrap();
        }
        let mut buf = [0u8; 65536];
        match self.tcp.read(&mut buf) {
            Ok(0) => panic!("server closed"),
            Ok(n) => {
                let now = self.now();
                self.a.handle_input(now, &buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => panic!("{e}"),
        }
        let mut out = Vec::new();
        while let Some(e) = self.a.poll_event() {
            if let Event::InformationReport { report, .. } = &e {
                self.reports
                    .push(Report::from_information_report(report).unwrap());
            }
            out.push(e);
        }
        out
    }

    fn call(&mut self, req: ConfirmedRequest) -> ConfirmedResponse {
        let now = self.now();
        let id = self.a.request(now, req).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            assert!(Instant::now() < deadline, "no answer to {id}");
            for e in self.pump() {
                match e {
                    Event::Response {
                        invoke_id,
                        response,
                        ..
                    } if invoke_id == id => return response,
                    Event::ServiceError {
                        invoke_id, error, ..
                    } if invoke_id == id => panic!("service error {error:?}"),
                    _ => {}
                }
            }
        }
    }

    fn names(&mut self, mut q: GetNameListRequest) -> (Vec<String>, usize) {
        let (mut all, mut pages) = (Vec::new(), 0);
        loop {
            let ConfirmedResponse::GetNameList(r) =
                self.call(ConfirmedRequest::GetNameList(q.clone()))
            else {
                panic!()
            };
            pages += 1;
            all.extend(r.identifiers);
            if !r.more_follows {
                return (all, pages);
            }
            q.continue_after = all.last().cloned();
        }
    }

    fn read(&mut self, name: ObjectName) -> gander_wire::data::Data {
        let ConfirmedResponse::Read(r) = self.call(ConfirmedRequest::Read(ReadRequest {
            specification_with_result: false,
            spec: VariableAccessSpecification::names([name]),
        })) else {
            panic!()
        };
        match &r.results[..] {
            [AccessResult::Success(d)] => d.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn write(&mut self, w: WriteRequest) {
        let ConfirmedResponse::Write(r) = self.call(ConfirmedRequest::Write(w)) else {
            panic!()
        };
        assert!(r.0.iter().all(|x| x.is_ok()), "{r:?}");
    }
}

#[test]
fn gander_client_discovers_and_reports_from_an_scl_model() {
    let mut cfg = ServerConfig::with_listen("127.0.0.1:0");
    cfg.reports.period_ms = 20;
    // The stimulus path alone (the measurement's), without the drift of a real IED's values.
    cfg.values = gander_peers::config::ValueMode::Stimulus;
    cfg.scl =
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scl/tests/data/feeder_protection.cid"));
    let (addr, stop, h) = Server::bind(cfg, Sink::null()).unwrap().spawn();
    let mut c = Cli::connect(addr);

    let (domains, _) = c.names(GetNameListRequest::domains());
    assert_eq!(domains, ["FDR1MEAS", "FDR1PROT"]);
    let (vars, pages) = c.names(GetNameListRequest::variables("FDR1PROT"));
    assert!(
        pages > 1,
        "a 1000-octet PDU needs continuation ({} names)",
        vars.len()
    );
    let mut sorted = vars.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(vars, sorted, "pages join without gaps or repeats");
    assert!(vars.contains(&"Q0XCBR1$ST$Pos$stVal".to_string()));
    let (lists, _) = c.names(GetNameListRequest::variable_lists("FDR1PROT"));
    assert_eq!(lists, ["LLN0$dsProt"]);
    let ConfirmedResponse::GetNamedVariableListAttributes(ds) =
        c.call(ConfirmedRequest::GetNamedVariableListAttributes(
            GetNamedVariableListAttributesRequest(ObjectName::domain("FDR1PROT", "LLN0$dsProt")),
        ))
    else {
        panic!()
    };
    assert_eq!(ds.members.len(), 5);

    // Control blocks as a probe finds them: the BRCB of FDR1PROT.
    let rcbs = find_rcbs("FDR1PROT", &vars);
    assert_eq!(rcbs.len(), 1);
    let rcb = rcbs[0].clone();
    let ConfirmedResponse::GetVariableAccessAttributes(t) =
        c.call(ConfirmedRequest::GetVariableAccessAttributes(
            GetVariableAccessAttributesRequest(rcb.object_name()),
        ))
    else {
        panic!()
    };
    let v = c.read(rcb.object_name());
    let snap = RcbSnapshot::from_type_and_value(rcb.clone(), &t.type_spec, &v).unwrap();
    let plan = RcbPlan::new(
        &snap,
        &ReportSettings {
            gi: true,
            resv_tms: Some(5),
            ..ReportSettings::default()
        },
    )
    .unwrap();
    for s in plan.enable() {
        c.write(s.write_request());
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.reports.len() < 4 && Instant::now() < deadline {
        c.pump();
    }
    assert!(c.reports.len() >= 4, "{} reports", c.reports.len());
    let r0 = &c.reports[0];
    assert_eq!(r0.rpt_id, "FDR1PROT/LLN0$BR$brcbProt");
    assert_eq!(r0.data_set.as_deref(), Some("FDR1PROT/LLN0$dsProt"));
    assert_eq!(r0.conf_rev, Some(1));
    // A data change may come between the RptEna and GI writes; the GI carries every member.
    let gi = gander_mms::bit_string::BitString::with_bits(6, &[gander_mms::report::trg_ops::GI]);
    let g = c
        .reports
        .iter()
        .find(|r| r.reasons.first() == Some(&gi))
        .expect("a GI report");
    assert_eq!(g.values.len(), 5);
    let ids: Vec<Vec<u8>> = c
        .reports
        .iter()
        .filter_map(|r| r.entry_id.clone())
        .collect();
    assert_eq!(ids.len(), c.reports.len(), "OptFlds entryID honoured");
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "EntryID moves on");
    let seqs: Vec<u16> = c.reports.iter().filter_map(|r| r.seq_num).collect();
    assert_eq!(seqs, (0..seqs.len() as u16).collect::<Vec<_>>());
    // The data changes come from the stimulus (PTRC1.Tr.general, the first member).
    assert!(c
        .reports
        .iter()
        .filter(|r| r.reasons.first() != Some(&gi))
        .all(|r| r.inclusion.ones().collect::<Vec<_>>() == [0]));

    // Leave the control block as found.
    for s in plan.restore() {
        c.write(s.write_request());
    }
    let after =
        RcbSnapshot::from_type_and_value(rcb.clone(), &t.type_spec, &c.read(rcb.object_name()))
            .unwrap();
    assert_eq!(after.get("RptEna"), snap.get("RptEna"));
    assert_eq!(after.get("TrgOps"), snap.get("TrgOps"));
    let now = c.now();
    c.a.release(now).unwrap();
    for _ in 0..10 {
        c.pump();
        if c.a.is_closed() {
            break;
        }
    }
    stop.stop();
    let summary = h.join().unwrap().unwrap();
    assert_eq!(summary.errors, 0);
}

impl Cli {
    /// One request whose answer may be a confirmed-Error: `Err((class, code))`.
    fn try_call(&mut self, req: ConfirmedRequest) -> Result<ConfirmedResponse, (u8, i64)> {
        let now = self.now();
        let id = self.a.request(now, req).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            assert!(Instant::now() < deadline, "no answer to {id}");
            for e in self.pump() {
                match e {
                    Event::Response {
                        invoke_id,
                        response,
                        ..
                    } if invoke_id == id => return Ok(response),
                    Event::ServiceError {
                        invoke_id, error, ..
                    } if invoke_id == id => return Err((error.class, error.code)),
                    _ => {}
                }
            }
        }
    }
}

/// IEC 61850-8-1 clause 14 dynamic data sets on a served SCL model, over TCP with gander's own
/// client association: an association-specific data set is defined, listed in the aa-specific
/// scope, read, made an URCB's DatSet (then undeletable: service/object-constraint-conflict),
/// and the drifting values of the SCL model (the server is not `static`) bring data-change
/// reports that carry its members only.
#[test]
fn dynamic_data_set_feeds_an_urcb_with_drifting_values() {
    use gander_mms::service::{
        DefineNamedVariableListRequest, DeleteNamedVariableListRequest, ObjectClass, ObjectScope,
    };
    let mut cfg = ServerConfig::with_listen("127.0.0.1:0");
    cfg.reports.period_ms = 20;
    cfg.scl =
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scl/tests/data/feeder_protection.cid"));
    let (addr, stop, h) = Server::bind(cfg, Sink::null()).unwrap().spawn();
    let mut c = Cli::connect(addr);
    let mine = ObjectName::AaSpecific("mine".into());
    let members = vec![
        ObjectName::domain("FDR1MEAS", "MMXU1$MX$Hz").into(),
        ObjectName::domain("FDR1MEAS", "MMXU1$MX$PhV$phsA").into(),
    ];
    let r = c.try_call(ConfirmedRequest::DefineNamedVariableList(
        DefineNamedVariableListRequest {
            name: mine.clone(),
            members,
        },
    ));
    assert_eq!(r, Ok(ConfirmedResponse::DefineNamedVariableList));
    let (aa, _) = c.names(GetNameListRequest {
        object_class: ObjectClass::NAMED_VARIABLE_LIST,
        scope: ObjectScope::Association,
        continue_after: None,
    });
    assert_eq!(aa, ["mine"]);
    let ConfirmedResponse::Read(r) = c.call(ConfirmedRequest::Read(ReadRequest {
        specification_with_result: false,
        spec: VariableAccessSpecification::VariableListName(mine.clone()),
    })) else {
        panic!()
    };
    assert_eq!(r.results.len(), 2);
    assert!(r
        .results
        .iter()
        .all(|x| matches!(x, AccessResult::Success(_))));

    let urcb = |e: &str| ObjectName::domain("FDR1MEAS", format!("LLN0$RP$urcbMeas01${e}"));
    let write = |name: ObjectName, d: gander_wire::data::Data| WriteRequest {
        spec: VariableAccessSpecification::names([name]),
        data: vec![d],
    };
    c.write(write(
        urcb("DatSet"),
        gander_wire::data::Data::VisibleString("@mine".into()),
    ));
    let del =
        ConfirmedRequest::DeleteNamedVariableList(DeleteNamedVariableListRequest::specific(vec![
            mine.clone(),
        ]));
    assert_eq!(c.try_call(del.clone()), Err((4, 5)));
    c.write(write(
        urcb("RptEna"),
        gander_wire::data::Data::Boolean(true),
    ));
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.reports.len() < 3 && Instant::now() < deadline {
        c.pump();
    }
    assert!(c.reports.len() >= 3, "{} reports", c.reports.len());
    for r in &c.reports {
        assert_eq!(r.data_set.as_deref(), Some("@mine"));
        assert_eq!(r.inclusion.len(), 2, "the report is over the two members");
    }
    c.write(write(
        urcb("RptEna"),
        gander_wire::data::Data::Boolean(false),
    ));
    c.write(write(
        urcb("DatSet"),
        gander_wire::data::Data::VisibleString("FDR1MEAS/LLN0$dsMeas".into()),
    ));
    let ConfirmedResponse::DeleteNamedVariableList(d) = c.call(del) else {
        panic!()
    };
    assert_eq!((d.matched, d.deleted), (1, 1));
    let now = c.now();
    c.a.release(now).unwrap();
    for _ in 0..10 {
        c.pump();
        if c.a.is_closed() {
            break;
        }
    }
    stop.stop();
    assert_eq!(h.join().unwrap().unwrap().errors, 0);
}
