//! In-process server and client over plain TCP: the HT loop, the RT loop with GI, event
//! ordering and the RT_START <-> RT_END matching rule; and (module `scl_client`, kept in this
//! test binary to save a link) the server with an SCL model against gander's own client code.
#[path = "../scl/client.rs"]
mod scl_client;
use gander_peers::client;
use gander_peers::config::{ClientConfig, ReportsConfig, ServerConfig};
use gander_peers::events::{name, Event, Sink};
use gander_peers::server::Server;

fn server_cfg(period_ms: u64) -> ServerConfig {
    ServerConfig {
        listen: "127.0.0.1:0".into(),
        scl: None,
        ied: None,
        access_point: None,
        values: gander_peers::config::ValueMode::Stimulus,
        events: None,
        tls: None,
        reports: ReportsConfig {
            period_ms,
            ..ReportsConfig::default()
        },
        timeout_ms: 5000,
    }
}

fn client_cfg(
    addr: std::net::SocketAddr,
    connections: u64,
    reports: u64,
    gi: bool,
) -> ClientConfig {
    ClientConfig {
        connect: addr.to_string(),
        events: None,
        tls: None,
        connections,
        reports,
        gi,
        timeout_ms: 5000,
        report_timeout_ms: 5000,
        rcb: None,
        intg_pd_ms: None,
        reads: 0,
        clocks_synchronised: false,
        control: None,
    }
}

fn of<'a>(ev: &'a [Event], n: &str, conn: u64) -> Vec<&'a Event> {
    ev.iter()
        .filter(|e| e.event == n && e.conn == conn)
        .collect()
}

#[test]
fn ht_and_rt_loops_over_plain_tcp() {
    let ssink = Sink::memory();
    let srv = Server::bind(server_cfg(5), ssink.clone()).unwrap();
    let (addr, stop, h) = srv.spawn();
    let csink = Sink::memory();
    let s = client::run(&client_cfg(addr, 3, 12, true), None, &csink);
    assert!(s.ok, "{s:?}");
    assert_eq!((s.connections, s.reports), (3, 12));
    stop.stop();
    let sum = h.join().unwrap().unwrap();
    assert_eq!(sum.connections, 3);
    assert_eq!(sum.errors, 0);

    let cev = csink.take();
    let sev = ssink.take();
    // HT: every connection has HT_START < TCP_UP < COTP_UP < HT_END, no TLS_UP.
    for c in 1..=3 {
        let t = |n| {
            of(&cev, n, c)
                .first()
                .map(|e| e.t_ns)
                .unwrap_or_else(|| panic!("{n} {c}"))
        };
        assert!(t(name::HT_START) < t(name::TCP_UP));
        assert!(t(name::TCP_UP) < t(name::COTP_UP));
        assert!(t(name::COTP_UP) < t(name::HT_END));
        assert!(of(&cev, name::TLS_UP, c).is_empty());
        assert_eq!(of(&cev, name::RELEASED, c).len(), 1);
    }
    assert!(cev.iter().all(|e| e.event != name::ERROR), "{cev:?}");
    // RT: 12 reports on connection 3, SqNum 0.. in order, the first a GI.
    let ends = of(&cev, name::RT_END, 3);
    assert_eq!(ends.len(), 12);
    for (i, e) in ends.iter().enumerate() {
        assert_eq!(e.seq, Some(i as u64));
        assert_eq!(e.get_u64("n"), Some(i as u64));
    }
    // Matching: the server's conn for the client's connection 3 is the one whose peer address is
    // the client's local address.
    let local = of(&cev, name::TCP_UP, 3)[0]
        .get_str("local")
        .unwrap()
        .to_owned();
    let sconn = sev
        .iter()
        .find(|e| e.event == name::TCP_UP && e.get_str("peer") == Some(local.as_str()))
        .unwrap()
        .conn;
    assert_eq!(
        sconn, 3,
        "a fresh server numbers connections as the client does"
    );
    for e in &ends {
        let st = sev
            .iter()
            .find(|s| s.event == name::RT_START && s.conn == sconn && s.seq == e.seq)
            .unwrap();
        let ws = sev
            .iter()
            .find(|s| s.event == name::WRITE_START && s.conn == sconn && s.seq == e.seq)
            .unwrap();
        let we = sev
            .iter()
            .find(|s| s.event == name::WRITE_END && s.conn == sconn && s.seq == e.seq)
            .unwrap();
        let rs = cev
            .iter()
            .find(|s| s.event == name::READ_START && s.conn == 3 && s.seq == e.seq)
            .unwrap();
        let re = cev
            .iter()
            .find(|s| s.event == name::READ_END && s.conn == 3 && s.seq == e.seq)
            .unwrap();
        assert!(st.t_ns <= ws.t_ns && ws.t_ns <= we.t_ns);
        // One write per report, and its size (the RT accounting's record): a report split over
        // two writes would cost two TLS records and two wake-ups.
        assert_eq!(we.get_u64("writes"), Some(1), "{we:?}");
        assert!(we.get_u64("bytes").is_some_and(|b| b > 100), "{we:?}");
        // Causality. (WRITE_END may follow READ_START on loopback: the kernel delivers to the
        // reader inside the writer's send call.)
        assert!(ws.t_ns <= rs.t_ns, "write start before read start");
        assert!(
            rs.t_ns <= re.t_ns && re.t_ns <= e.t_ns,
            "{rs:?} {re:?} {e:?}"
        );
        let rt = e.t_ns - st.t_ns;
        assert!(rt < 1_000_000_000, "RT {rt} ns");
    }
    // Server: HT-side stamps and a clean release on every connection.
    for c in 1..=3 {
        assert_eq!(of(&sev, name::ASSOCIATED, c).len(), 1);
        assert_eq!(of(&sev, name::RELEASED, c).len(), 1);
    }
    assert!(sev.iter().all(|e| e.event != name::ERROR), "{sev:?}");
}

#[test]
fn second_client_cannot_take_the_reserved_rcb() {
    let srv = Server::bind(server_cfg(50), Sink::null()).unwrap();
    let (addr, stop, h) = srv.spawn();
    let t = std::thread::spawn(move || {
        client::run(&client_cfg(addr, 1, 20, false), None, &Sink::null())
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    let s2 = client::run(&client_cfg(addr, 1, 1, false), None, &Sink::null());
    assert!(!s2.ok);
    assert_eq!(s2.error.as_deref(), Some("rcb-enable-refused"), "{s2:?}");
    assert!(t.join().unwrap().ok);
    stop.stop();
    h.join().unwrap().unwrap();
}

#[test]
fn nothing_listening_is_tcp_refused() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    let sink = Sink::memory();
    let s = client::run(&client_cfg(addr, 1, 0, false), None, &sink);
    assert_eq!(s.error.as_deref(), Some("tcp-refused"));
    assert!(sink
        .take()
        .iter()
        .any(|e| e.event == name::ERROR && e.get_str("kind") == Some("tcp-refused")));
}
