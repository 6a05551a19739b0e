//! A gander client discovers gander's server model with the directory services (Identify,
//! GetNameList with continuation, GetNamedVariableListAttributes, GetVariableAccessAttributes),
//! then enables the report control block it found with `rcb_plan` and restores it: the RCB
//! reads back exactly as found.

use gander_mms::association::{
    ClientAssociation, ClientConfig, Event, ServerAssociation, ServerConfig,
};
use gander_mms::bit_string::BitString;
use gander_mms::model::{ImpModel, ModelConfig, Trigger};
use gander_mms::pdu::{ConfirmedRequest, ConfirmedResponse};
use gander_mms::rcb_plan::{find_rcbs, RcbPlan, RcbSnapshot, ReportSettings};
use gander_mms::report::Report;
use gander_mms::service::{
    AccessResult, GetNameListRequest, GetNamedVariableListAttributesRequest,
    GetVariableAccessAttributesRequest, NameListQuery, ObjectName,
};

struct Pair {
    c: ClientAssociation,
    s: ServerAssociation,
    m: ImpModel,
    now: u64,
}

impl Pair {
    fn new(local_detail: u32) -> Pair {
        let mut cc = ClientConfig::default();
        cc.initiate.local_detail = Some(local_detail);
        let mut p = Pair {
            c: ClientAssociation::new(cc),
            s: ServerAssociation::new(ServerConfig::default(), 1, 0),
            m: ImpModel::new(ModelConfig::default()),
            now: 0,
        };
        p.c.connect(0).unwrap();
        p.pump();
        p
    }

    fn pump(&mut self) {
        self.now += 1;
        loop {
            let mut moved = false;
            while let Some(b) = self.c.poll_transmit() {
                self.s.handle_input(self.now, &b, &mut self.m);
                moved = true;
            }
            while let Some(b) = self.s.poll_transmit() {
                self.c.handle_input(self.now, &b);
                moved = true;
            }
            if !moved {
                break;
            }
        }
    }

    /// Send one request and return its response.
    fn call(&mut self, req: ConfirmedRequest) -> ConfirmedResponse {
        let id = self.c.request(self.now, req).unwrap();
        self.pump();
        while let Some(ev) = self.c.poll_event() {
            match ev {
                Event::Response {
                    invoke_id,
                    response,
                    ..
                } if invoke_id == id => return response,
                Event::ServiceError { error, .. } => panic!("service error {error:?}"),
                Event::Rejected { reject, .. } => panic!("rejected {reject:?}"),
                _ => {}
            }
        }
        panic!("no response")
    }

    fn names(&mut self, req: GetNameListRequest) -> (Vec<String>, usize) {
        let mut q = NameListQuery::new(req);
        let mut pages = 0;
        while let Some(r) = q.next_request() {
            let ConfirmedResponse::GetNameList(a) = self.call(ConfirmedRequest::GetNameList(r))
            else {
                panic!()
            };
            q.on_response(a).unwrap();
            pages += 1;
        }
        (q.into_names(), pages)
    }

    fn read(&mut self, n: &ObjectName) -> gander_wire::data::Data {
        let id = self.c.read(self.now, vec![n.clone()]).unwrap();
        self.pump();
        while let Some(ev) = self.c.poll_event() {
            if let Event::Response {
                invoke_id,
                response: ConfirmedResponse::Read(r),
                ..
            } = ev
            {
                assert_eq!(invoke_id, id);
                let [AccessResult::Success(d)] = r.results.as_slice() else {
                    panic!("{r:?}")
                };
                return d.clone();
            }
        }
        panic!("no read response")
    }
}

#[test]
fn discover_enable_and_restore() {
    // A 400-octet PDU limit makes the variable listing take several pages.
    let mut p = Pair::new(400);
    let ConfirmedResponse::Identify(id) = p.call(ConfirmedRequest::Identify) else {
        panic!()
    };
    assert_eq!(id.vendor, "gander");
    let (domains, _) = p.names(GetNameListRequest::domains());
    assert_eq!(domains, ["IMPLD0"]);
    let (vars, pages) = p.names(GetNameListRequest::variables("IMPLD0"));
    assert!(pages > 1, "continuation used");
    assert!(vars.contains(&"GGIO1$ST$Ind1$stVal".to_string()));
    let (lists, _) = p.names(GetNameListRequest::variable_lists("IMPLD0"));
    assert_eq!(lists, ["LLN0$DS1"]);
    let ConfirmedResponse::GetNamedVariableListAttributes(ds) =
        p.call(ConfirmedRequest::GetNamedVariableListAttributes(
            GetNamedVariableListAttributesRequest(ObjectName::domain("IMPLD0", "LLN0$DS1")),
        ))
    else {
        panic!()
    };
    assert_eq!(ds.members.len(), 3);
    let ConfirmedResponse::GetVariableAccessAttributes(ln) =
        p.call(ConfirmedRequest::GetVariableAccessAttributes(
            GetVariableAccessAttributesRequest(ObjectName::domain("IMPLD0", "LLN0")),
        ))
    else {
        panic!()
    };
    let rcbs = find_rcbs("IMPLD0", &vars);
    assert_eq!(rcbs.len(), 1);
    let rcb = rcbs[0].clone();
    let ty = ln.type_spec.at_path("RP$urcb01").unwrap();
    let rcb_name = rcb.object_name();
    let found = p.read(&rcb_name);
    let snap = RcbSnapshot::from_type_and_value(rcb.clone(), ty, &found).unwrap();

    let settings = ReportSettings {
        trg_ops: Some(BitString::with_bits(6, &[1, 4, 5])),
        intg_pd: Some(1000),
        gi: true,
        ..Default::default()
    };
    let plan = RcbPlan::new(&snap, &settings).unwrap();
    for step in plan.enable() {
        let ConfirmedResponse::Write(w) = p.call(ConfirmedRequest::Write(step.write_request()))
        else {
            panic!()
        };
        w.check().unwrap_or_else(|e| panic!("{}: {e}", step.attr));
    }
    assert!(p.m.is_enabled_for(1));
    assert!(p.m.take_gi(1));
    let ir =
        p.m.build_report(1, Trigger::GeneralInterrogation, 0)
            .unwrap();
    let r = Report::from_information_report(&ir).unwrap();
    assert_eq!(r.values.len(), ds.members.len());
    for step in plan.restore() {
        let ConfirmedResponse::Write(w) = p.call(ConfirmedRequest::Write(step.write_request()))
        else {
            panic!()
        };
        w.check().unwrap_or_else(|e| panic!("{}: {e}", step.attr));
    }
    // Every attribute reads as found except SqNum, which the server advanced by sending
    // the report (a status value, not writable).
    let after = RcbSnapshot::from_value(rcb, &p.read(&rcb_name)).unwrap();
    for ((n, a), (_, b)) in after.attrs.iter().zip(&snap.attrs) {
        if n == "SqNum" {
            assert_eq!(*a, gander_wire::data::Data::Unsigned(1));
        } else {
            assert_eq!(a, b, "{n}");
        }
    }
}
