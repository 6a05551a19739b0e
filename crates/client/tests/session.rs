//! The blocking session against a small server built on gander-mms's `ServerAssociation`
//! (loopback, plain TCP): the hooks fire in the order the association comes up, GetNameList
//! follows `moreFollows` with `continueAfter` over small PDUs, unsolicited InformationReports
//! that arrive before an answer are kept in order (queued, or handed to `call_with` at once),
//! and a server that goes away leaves a session that says so.
use gander_client::session::{ConnectHooks, Connector};
use gander_client::ClientError;
use gander_mms::association::{ConnId, ServerAssociation, ServerConfig, ServerHandler};
use gander_mms::service::{
    AccessResult, DataAccessError, GetNameListRequest, InformationReport, ObjectClass, ObjectName,
    ObjectScope, ServiceError,
};
use gander_wire::data::Data;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const NAMES: usize = 200;

struct Handler {
    name_lists: Arc<AtomicU64>,
    /// Reports to send before the answer to the next read.
    reports_first: u64,
    close_on_write: bool,
    close: bool,
}

impl ServerHandler for Handler {
    fn read(&mut self, _conn: ConnId, _name: &ObjectName) -> AccessResult {
        self.reports_first = 2;
        AccessResult::Success(Data::Integer(7))
    }
    fn write(&mut self, _: ConnId, _: &ObjectName, _: &Data) -> Result<(), DataAccessError> {
        self.close = self.close_on_write;
        Err(DataAccessError(3))
    }
    fn name_list(
        &mut self,
        _conn: ConnId,
        class: ObjectClass,
        scope: &ObjectScope,
    ) -> Option<Result<Vec<String>, ServiceError>> {
        self.name_lists.fetch_add(1, Ordering::SeqCst);
        Some(Ok(match (class, scope) {
            (c, ObjectScope::Vmd) if c == ObjectClass::DOMAIN => vec!["LD0".into()],
            (_, ObjectScope::Domain(_)) => (0..NAMES).map(|i| format!("V{i:04}")).collect(),
            _ => Vec::new(),
        }))
    }
}

/// One connection served on a thread; the number of GetNameList requests it saw.
fn serve(close_on_write: bool) -> (SocketAddr, Arc<AtomicU64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let name_lists = Arc::new(AtomicU64::new(0));
    let n = name_lists.clone();
    std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut h = Handler {
            name_lists: n,
            reports_first: 0,
            close_on_write,
            close: false,
        };
        let now = gander_client::clock::now_ns;
        let mut a = ServerAssociation::new(ServerConfig::default(), 1, now());
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let k = match c.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(k) => k,
            };
            a.handle_input(now(), &buf[..k], &mut h);
            while a.poll_event().is_some() {}
            if h.close {
                return;
            }
            let answers: Vec<Vec<u8>> = std::iter::from_fn(|| a.poll_transmit()).collect();
            // Reports first, then the answer: as a server does when a report is due while it
            // handles a request.
            for i in 0..std::mem::take(&mut h.reports_first) {
                let r = InformationReport::rpt(vec![AccessResult::Success(Data::Unsigned(i))]);
                a.send_information_report(&r).unwrap();
                while let Some(p) = a.poll_transmit() {
                    c.write_all(&p).unwrap();
                }
            }
            for p in answers {
                if c.write_all(&p).is_err() {
                    return;
                }
            }
            if a.is_closed() {
                return;
            }
        }
    });
    (addr, name_lists)
}

#[derive(Default)]
struct Order(Vec<(&'static str, u64)>);

impl ConnectHooks for Order {
    fn start(&mut self, at: u64) {
        self.0.push(("start", at));
    }
    fn tcp_up(&mut self, at: u64, _: &std::net::TcpStream) {
        self.0.push(("tcp", at));
    }
    fn cotp_up(&mut self, at: u64) {
        self.0.push(("cotp", at));
    }
    fn associated(&mut self, at: u64) {
        self.0.push(("associated", at));
    }
}

fn connector(addr: SocketAddr) -> Connector<'static> {
    Connector {
        max_pdu: Some(400),
        ..Connector::new(addr, None, Duration::from_secs(2))
    }
}

fn value(r: &gander_client::Received) -> &Data {
    match &r.report.results[0] {
        AccessResult::Success(d) => d,
        other => panic!("{other:?}"),
    }
}

#[test]
fn hooks_paging_reports_in_order_and_release() {
    let (addr, name_lists) = serve(false);
    let mut order = Order::default();
    let (mut s, t) = connector(addr).connect_with(&mut order).unwrap();
    let names: Vec<_> = order.0.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["start", "tcp", "cotp", "associated"]);
    assert!(
        order.0.windows(2).all(|w| w[0].1 <= w[1].1),
        "{:?}",
        order.0
    );
    assert_eq!(t.start_ns, order.0[0].1);
    assert_eq!(s.negotiated().unwrap().local_detail, Some(400));

    // 200 names do not fit one 400-octet answer: the session continues after the last name.
    let v = s
        .names(GetNameListRequest::variables("LD0"), "GetNameList")
        .unwrap();
    assert_eq!(v.len(), NAMES);
    assert!(v.windows(2).all(|w| w[0] < w[1]));
    assert!(name_lists.load(Ordering::SeqCst) > 1);

    // Two reports arrive before the read's answer: queued in order with their stamps.
    let (r, rtt) = s.read(&ObjectName::domain("LD0", "V0001"), "read").unwrap();
    assert!(matches!(r, AccessResult::Success(Data::Integer(7))) && rtt > 0);
    let a = s.next_report(0).unwrap().unwrap();
    let b = s.next_report(0).unwrap().unwrap();
    assert_eq!(
        (value(&a), value(&b)),
        (&Data::Unsigned(0), &Data::Unsigned(1))
    );
    assert!(a.ready_ns <= a.at_ns && a.at_ns <= b.at_ns);
    assert!(s.next_report(0).unwrap().is_none());

    // With call_with they are handed over at once, before the answer returns.
    let mut seen = Vec::new();
    let req = gander_client::core::read_request([ObjectName::domain("LD0", "V0002")]);
    let resp = s
        .call_with(req, "read", &mut |r| seen.push(value(&r).clone()))
        .unwrap();
    assert!(gander_client::core::one_result("read", resp).is_ok());
    assert_eq!(seen, [Data::Unsigned(0), Data::Unsigned(1)]);
    assert_eq!(s.take_reports().count(), 0);

    // A planned sequence of writes stops at the first refusal and says which.
    let step = |attr: &str| gander_mms::rcb_plan::Step {
        attr: attr.into(),
        name: ObjectName::domain("LD0", format!("LLN0$RP$urcb01${attr}")),
        value: Data::Boolean(true),
    };
    let stopped = gander_client::writes::apply(
        &mut s,
        &[step("Resv"), step("RptEna")],
        &|st| format!("write of {}", st.attr),
        None,
    )
    .unwrap_err();
    assert_eq!(stopped.index, 0);
    assert!(matches!(
        stopped.why,
        gander_client::writes::WriteFailure::Refused(DataAccessError(3))
    ));
    // The session lives on after a refusal.
    assert!(s.is_open());
    let rel = s.release().unwrap();
    assert!(rel.duration_ns > 0 && rel.at_ns > 0);
}

#[test]
fn a_server_that_closes_instead_of_answering_ends_the_session() {
    let (addr, _) = serve(true);
    let (mut s, _) = connector(addr).connect().unwrap();
    let w = gander_mms::service::WriteRequest {
        spec: gander_mms::service::VariableAccessSpecification::names([ObjectName::domain(
            "LD0", "V0001",
        )]),
        data: vec![Data::Boolean(true)],
    };
    // The server closes instead of answering the write.
    let e = s.write(w, "write of V0001").unwrap_err();
    assert!(matches!(e, ClientError::Closed { .. }), "{e:?}");
    assert_eq!((e.kind(), e.event_kind().as_str()), ("closed", "closed"));
    assert!(!s.is_open());
    let e = s
        .read(&ObjectName::domain("LD0", "V0001"), "read")
        .unwrap_err();
    assert!(!e.answered(), "{e:?}");
}
