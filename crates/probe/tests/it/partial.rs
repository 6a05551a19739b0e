//! Partial results survive: against servers that misbehave on purpose (built here on
//! `gander_mms::association::ServerAssociation`, a tiny model of one logical device), every
//! probe step's results are kept when a later step fails, the report names the failed step and
//! how the device was left, and the outcome tells complete, partial and nothing apart.
//!
//! The misbehaviours are those seen on real stacks: a server that never answers Conclude (an
//! independent open IEC 61850 stack, issue #19 item 7), one that refuses Identify (a server
//! without the service), one that stalls in the middle of discovery, one that closes the
//! connection in the middle of the reads.
use gander_mms::association::{
    ConnId, Event, ServerAssociation, ServerConfig, ServerHandler, Step as AStep,
};
use gander_mms::service::{
    AccessResult, DataAccessError, IdentifyResponse, ObjectClass, ObjectName, ObjectScope,
    ServiceError,
};
use gander_probe::outcome::{AssociationEnd, Outcome, RcbState, Step};
use gander_probe::{probe, ProbeError, ProbeOptions};
use gander_wire::data::Data;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Normal,
    /// Every association: the Conclude request is read and never answered.
    IgnoreConclude,
    /// Identify is rejected (unrecognized-service), as by a server without it.
    RefuseIdentify,
    /// Every association: Identify is read and never answered, the rest is (iec61850bean
    /// 1.9 advertises Identify and drops the request).
    IgnoreIdentify,
    /// The first association: after this many directory answers, silence.
    StallAfter(u64),
    /// The first association: on this read (1 = the first), FIN instead of the answer.
    CloseOnRead(u64),
    /// An unbuffered RCB `LLN0$RP$urcb01` whose GI, once written TRUE, stays TRUE (stored as
    /// plain data: iec61850bean 1.9's server), so the probe cannot leave it as found.
    StickyGi,
}

/// `StickyGi`'s control block, shared by the connections: RptID, RptEna, Resv, DatSet,
/// ConfRev, OptFlds, BufTm, SqNum, TrgOps, IntgPd, GI (IEC 61850-8-1 URCB layout).
fn urcb_initial() -> Vec<Data> {
    vec![
        Data::VisibleString("urcb".into()),
        Data::Boolean(false),
        Data::Boolean(false),
        Data::VisibleString("LD0/LLN0$DS1".into()),
        Data::Unsigned(1),
        Data::BitString {
            unused_bits: 6,
            bytes: vec![0x70, 0x00],
        },
        Data::Unsigned(0),
        Data::Unsigned(0),
        Data::BitString {
            unused_bits: 2,
            bytes: vec![0x44],
        },
        Data::Unsigned(0),
        Data::Boolean(false),
    ]
}

const URCB: &str = "LLN0$RP$urcb01";

const VARS: [&str; 9] = [
    "GGIO1",
    "GGIO1$MX",
    "GGIO1$MX$AnIn1",
    "GGIO1$MX$AnIn1$mag",
    "GGIO1$MX$AnIn1$mag$f",
    "LLN0",
    "LLN0$ST",
    "LLN0$ST$Mod",
    "LLN0$ST$Mod$stVal",
];

/// The model and the misbehaviour of one connection.
struct Handler {
    mode: Mode,
    /// `StickyGi`'s control block.
    urcb: Arc<Mutex<Vec<Data>>>,
    first: bool,
    answers: u64,
    reads: u64,
    /// Set when the harness must stop sending (stall) or close.
    stall: bool,
    close: bool,
    /// Set when the harness must drop this round's answer.
    drop: bool,
}

impl Handler {
    fn count(&mut self) {
        self.answers += 1;
        if let (Mode::StallAfter(n), true) = (self.mode, self.first) {
            if self.answers > n {
                self.stall = true;
            }
        }
    }
}

impl ServerHandler for Handler {
    fn read(&mut self, _conn: ConnId, name: &ObjectName) -> AccessResult {
        self.count();
        self.reads += 1;
        if let (Mode::CloseOnRead(n), true) = (self.mode, self.first) {
            if self.reads >= n {
                self.close = true;
            }
        }
        match name {
            ObjectName::DomainSpecific { item, .. }
                if self.mode == Mode::StickyGi && item == URCB =>
            {
                AccessResult::Success(Data::Structure(self.urcb.lock().unwrap().clone()))
            }
            ObjectName::DomainSpecific { item, .. } if item == "LLN0$ST$Mod$stVal" => {
                AccessResult::Success(Data::Integer(1))
            }
            ObjectName::DomainSpecific { item, .. } if item == "GGIO1$MX$AnIn1$mag$f" => {
                AccessResult::Success(Data::FloatingPoint32(1.5))
            }
            _ => AccessResult::Failure(DataAccessError(10)),
        }
    }

    fn write(
        &mut self,
        _conn: ConnId,
        name: &ObjectName,
        value: &Data,
    ) -> Result<(), DataAccessError> {
        let ObjectName::DomainSpecific { item, .. } = name else {
            return Err(DataAccessError(3));
        };
        let attr = item.strip_prefix(URCB).and_then(|a| a.strip_prefix('$'));
        match (self.mode, attr) {
            (Mode::StickyGi, Some(a)) => {
                let i = gander_mms::rcb::URCB_ELEMENTS
                    .iter()
                    .position(|e| *e == a)
                    .ok_or(DataAccessError(10))?;
                self.urcb.lock().unwrap()[i] = value.clone();
                Ok(())
            }
            _ => Err(DataAccessError(3)),
        }
    }

    fn identify(&mut self, _conn: ConnId) -> Option<IdentifyResponse> {
        self.count();
        self.drop = self.mode == Mode::IgnoreIdentify;
        (self.mode != Mode::RefuseIdentify).then(|| IdentifyResponse {
            vendor: "gander tests".into(),
            model: "misbehaving".into(),
            revision: "1".into(),
            abstract_syntaxes: None,
        })
    }

    fn name_list(
        &mut self,
        _conn: ConnId,
        class: ObjectClass,
        scope: &ObjectScope,
    ) -> Option<Result<Vec<String>, ServiceError>> {
        self.count();
        Some(Ok(match (class, scope) {
            (c, ObjectScope::Vmd) if c == ObjectClass::DOMAIN => vec!["LD0".into()],
            (c, ObjectScope::Domain(d)) if c == ObjectClass::NAMED_VARIABLE && d == "LD0" => {
                let mut v: Vec<String> = VARS.iter().map(|s| s.to_string()).collect();
                if self.mode == Mode::StickyGi {
                    v.extend(["LLN0$RP".into(), URCB.into()]);
                    v.extend(
                        gander_mms::rcb::URCB_ELEMENTS
                            .iter()
                            .map(|e| format!("{URCB}${e}")),
                    );
                    v.sort();
                }
                v
            }
            _ => Vec::new(),
        }))
    }
}

/// A server on a free loopback port, one thread per connection, until dropped.
struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn now_ns() -> u64 {
    gander_client::clock::now_ns()
}

fn serve(mode: Mode) -> Server {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let conns = Arc::new(AtomicU64::new(0));
    let urcb = Arc::new(Mutex::new(urcb_initial()));
    let st = stop.clone();
    std::thread::spawn(move || {
        while !st.load(Ordering::SeqCst) {
            match l.accept() {
                Ok((c, _)) => {
                    let n = conns.fetch_add(1, Ordering::SeqCst) + 1;
                    let (st, urcb) = (st.clone(), urcb.clone());
                    std::thread::spawn(move || connection(c, mode, n == 1, &st, urcb));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    });
    Server { port, stop }
}

fn connection(
    mut c: TcpStream,
    mode: Mode,
    first: bool,
    stop: &AtomicBool,
    urcb: Arc<Mutex<Vec<Data>>>,
) {
    let _ = c.set_nodelay(true);
    let _ = c.set_read_timeout(Some(Duration::from_millis(50)));
    let mut h = Handler {
        mode,
        urcb,
        first,
        answers: 0,
        reads: 0,
        stall: false,
        close: false,
        drop: false,
    };
    let mut a = ServerAssociation::new(ServerConfig::default(), 1, now_ns());
    let mut silent = false;
    let mut buf = vec![0u8; 1 << 16];
    while !stop.load(Ordering::SeqCst) {
        let n = match c.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(_) => continue,
        };
        a.handle_input(now_ns(), &buf[..n], &mut h);
        while let Some(ev) = a.poll_event() {
            if let (
                Event::Step {
                    step: AStep::ConcludeRequested,
                    ..
                },
                Mode::IgnoreConclude,
            ) = (&ev, mode)
            {
                silent = true;
            }
        }
        if h.close {
            let _ = c.shutdown(std::net::Shutdown::Both);
            return;
        }
        silent |= h.stall;
        let dropped = std::mem::take(&mut h.drop);
        while let Some(p) = a.poll_transmit() {
            if !silent && !dropped && c.write_all(&p).is_err() {
                return;
            }
        }
        if a.is_closed() && !silent {
            return;
        }
    }
}

fn opts(port: u16) -> ProbeOptions {
    let mut o = ProbeOptions::new(format!("127.0.0.1:{port}")).quick();
    o.timeout = Duration::from_millis(400);
    o.associations = 3;
    o.interval = Duration::from_millis(1);
    o.reads = 5;
    o.read_interval = Duration::from_millis(1);
    o
}

#[test]
fn a_well_behaved_server_gives_a_complete_report() {
    let s = serve(Mode::Normal);
    let r = probe(&opts(s.port)).expect("probe");
    assert_eq!(r.outcome, Outcome::Complete, "{:?}", r.failed);
    assert!(r.failed.is_none());
    assert_eq!(r.device.association, AssociationEnd::Released);
    assert_eq!(r.model.logical_devices[0].name, "LD0");
    assert_eq!(r.measurements.read_rtt_ms.as_ref().unwrap().n, 5);
    assert_eq!(r.measurements.ht_ms.as_ref().unwrap().n, 3);
    assert_eq!(r.measurements.release_ms.as_ref().unwrap().n, 4);
}

#[test]
fn a_server_that_ignores_conclude_still_gets_the_whole_report() {
    let s = serve(Mode::IgnoreConclude);
    let t0 = Instant::now();
    let r = probe(&opts(s.port)).expect("a partial report, not an error");
    assert_eq!(r.outcome, Outcome::Partial);
    let f = r.failed.as_ref().unwrap();
    assert_eq!((f.step, f.kind), (Step::Release, "timeout"), "{f:?}");
    assert!(f.message.contains("release"), "{}", f.message);
    // Aborted, and everything measured is there: the model, the reads, the HT loop.
    assert_eq!(r.device.association, AssociationEnd::Aborted);
    assert_eq!(r.model.logical_devices[0].logical_nodes, ["GGIO1", "LLN0"]);
    assert_eq!(r.identity.as_ref().unwrap().vendor, "gander tests");
    assert_eq!(r.measurements.read_rtt_ms.as_ref().unwrap().n, 5);
    assert_eq!(r.measurements.ht_ms.as_ref().unwrap().n, 3);
    // The HT associations are aborted at once, not each after a release timeout.
    assert_eq!(r.device.ht_aborted, 3);
    assert!(r.measurements.release_ms.is_none());
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    let text = gander_probe::text::render(&r);
    assert!(text.contains("PARTIAL: the release step failed"), "{text}");
    assert!(
        text.contains("discovery association aborted by the probe"),
        "{text}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["outcome"], "partial");
    assert_eq!(json["failed"]["step"], "release");
    assert_eq!(json["device"]["association"], "aborted");
}

#[test]
fn a_server_that_refuses_identify_is_complete_with_a_warning() {
    let s = serve(Mode::RefuseIdentify);
    let r = probe(&opts(s.port)).expect("probe");
    assert_eq!(r.outcome, Outcome::Complete, "{:?}", r.failed);
    assert!(r.identity.is_none());
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("Identify not supported")),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.model.logical_devices.len(), 1);
}

#[test]
fn a_server_that_never_answers_identify_is_discovered_over_a_fresh_association() {
    let s = serve(Mode::IgnoreIdentify);
    let t0 = Instant::now();
    let r = probe(&opts(s.port)).expect("probe");
    assert_eq!(r.outcome, Outcome::Complete, "{:?}", r.failed);
    assert!(r.identity.is_none());
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("Identify not answered within 400 ms")),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.model.logical_devices[0].logical_nodes, ["GGIO1", "LLN0"]);
    assert_eq!(r.measurements.read_rtt_ms.as_ref().unwrap().n, 5);
    // The fresh association is released as usual.
    assert_eq!(r.device.association, AssociationEnd::Released);
    assert_eq!(r.measurements.ht_ms.as_ref().unwrap().n, 3);
    // One step timeout spent, not one per step.
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    let text = gander_probe::text::render(&r);
    assert!(text.contains("identity: not answered"), "{text}");
}

#[test]
fn reports_received_are_kept_when_the_block_cannot_be_left_as_found() {
    let s = serve(Mode::StickyGi);
    let mut o = opts(s.port);
    o.reports = Some(gander_probe::reports::ReportOptions {
        rcb: gander_mms::rcb_plan::RcbRef::parse("LD0", URCB),
        listen: Duration::from_millis(200),
        clocks_synchronised: false,
    });
    let r = probe(&o).expect("a partial report");
    assert_eq!(r.outcome, Outcome::Partial);
    let f = r.failed.as_ref().unwrap();
    assert_eq!(f.step, Step::Reports, "{f:?}");
    assert!(
        f.message.contains("GI: false before, true after"),
        "{}",
        f.message
    );
    assert_eq!(r.device.rcb, Some(RcbState::NotRestored));
    // What the listening gathered is in the report, marked not restored.
    let rep = r
        .measurements
        .reports
        .as_ref()
        .expect("the reports step's result");
    assert_eq!((rep.count, rep.restored), (0, false));
    assert!(rep.listened_ms >= 200, "{}", rep.listened_ms);
    assert!(
        rep.written.iter().any(|w| w == "GI=true"),
        "{:?}",
        rep.written
    );
    let text = gander_probe::text::render(&r);
    assert!(text.contains("restored as found: NO"), "{text}");
}

#[test]
fn a_server_that_stalls_mid_discovery_keeps_what_was_found() {
    // Identify and the list of domains answered; the variables of LD0 never are.
    let s = serve(Mode::StallAfter(2));
    let r = probe(&opts(s.port)).expect("a partial report");
    assert_eq!(r.outcome, Outcome::Partial);
    let f = r.failed.as_ref().unwrap();
    assert_eq!((f.step, f.kind), (Step::Discovery, "timeout"), "{f:?}");
    assert!(
        f.message.contains("GetNameList of the variables of LD0"),
        "{}",
        f.message
    );
    assert_eq!(r.identity.as_ref().unwrap().model, "misbehaving");
    assert!(r.measurements.read_rtt_ms.is_none());
    assert_eq!(r.device.association, AssociationEnd::Aborted);
    // The server behaves on the next associations: HT is measured.
    assert_eq!(r.measurements.ht_ms.as_ref().unwrap().n, 3);
}

#[test]
fn a_server_that_closes_mid_read_keeps_the_model_and_the_reads_so_far() {
    let s = serve(Mode::CloseOnRead(3));
    let r = probe(&opts(s.port)).expect("a partial report");
    assert_eq!(r.outcome, Outcome::Partial);
    let f = r.failed.as_ref().unwrap();
    assert_eq!((f.step, f.kind), (Step::Read, "closed"), "{f:?}");
    assert_eq!(r.model.logical_devices[0].variables, VARS.len());
    assert_eq!(r.measurements.read_rtt_ms.as_ref().unwrap().n, 2);
    assert_eq!(
        r.measurements.read_ref.as_deref(),
        Some("LD0/GGIO1.AnIn1.mag.f [MX]")
    );
    assert_eq!(r.device.association, AssociationEnd::ClosedByServer);
    assert_eq!(r.measurements.ht_ms.as_ref().unwrap().n, 3);
}

#[test]
fn no_association_is_nothing() {
    // A port nothing listens on: an error, no report.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let e = probe(&opts(port)).unwrap_err();
    assert!(matches!(e, ProbeError::Client(_)), "{e:?}");
    assert_eq!(e.kind(), "connection-refused");
    assert!(!e.is_usage());
}
