//! `gander bench mms`: in one run, on this machine,
//! 1. HT: gander's full handshake (TCP + TLS + MMS association, HT_START..HT_END) against a bare
//!    TLS handshake (TCP + TLS only) with the same backend, version and suite, interleaved.
//!    Target: the MMS association adds at most 10 % (median ratio <= 1.10).
//! 2. RT: the report rate one server sustains to one client over TLS, back to back, and RT
//!    (server RT_START -> client RT_END, same clock) at a paced rate of `rate` reports/s, with the
//!    cleartext exchange at the same rate as the floor. Target: >= 10,000 reports/s.
//!
//! Server and client run in this process (threads), so their clocks are the same.
use gander_measure::machine::Machine;
use gander_measure::stats::Summary;
use gander_peers::client;
use gander_peers::clock::now_ns;
use gander_peers::config::{ClientConfig, ReportsConfig, ServerConfig};
use gander_peers::events::{name, Event, Sink};
use gander_peers::server::Server;
use gander_tls::pki::{self, KeySpec};
use gander_tls::{backend, BackendKind, TlsProfile, TlsVersion};
use serde::Serialize;
use std::collections::HashMap;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// TLS library.
    pub backend: BackendKind,
    /// TLS version.
    pub version: TlsVersion,
    /// Cipher suite (IANA name).
    pub suite: String,
    /// Handshakes timed (each a full and a bare one).
    pub handshakes: usize,
    /// Handshakes before those, not timed.
    pub warmup: usize,
    /// Reports in each RT phase.
    pub reports: u64,
    /// Paced report rate, reports/s.
    pub rate: u64,
    /// Lab PKI root (the RSA-2048 set is created there if missing).
    pub pki_dir: PathBuf,
}

/// n, mean, p50, p99 (nanoseconds): the part of the shared [`Summary`] this report prints, under
/// the JSON names it has always had. Percentiles are nearest-rank (`gander_measure::stats`).
#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct Stats {
    /// Samples.
    pub n: usize,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Median, ns.
    pub p50_ns: f64,
    /// 99th percentile, ns.
    pub p99_ns: f64,
}

impl From<Summary> for Stats {
    fn from(s: Summary) -> Stats {
        Stats {
            n: s.n,
            mean_ns: s.mean,
            p50_ns: s.p50,
            p99_ns: s.p99,
        }
    }
}

impl Stats {
    /// The statistics of `v` (signed: a cross-thread step can be negative); all zero if empty.
    pub fn of(v: &[i64]) -> Stats {
        Summary::from_signed_samples(v)
            .map(Stats::from)
            .unwrap_or_default()
    }
}

/// One RT phase: a server sending reports to a client at a rate (0: back to back).
#[derive(Debug, Serialize)]
pub struct RtPhase {
    /// `tls` or `plain`.
    pub transport: &'static str,
    /// Reports/s asked for (0: back to back).
    pub target_rate: u64,
    /// Reports sent.
    pub reports: u64,
    /// Reports/s achieved (after the first 1 %).
    pub rate_per_s: f64,
    /// RT: server `RT_START` to client `RT_END`.
    pub rt: Stats,
    /// Encryption and send: `WRITE_START` to `WRITE_END`.
    pub write: Stats,
    /// Transmission: `WRITE_END` to the client's `READ_START`.
    pub transmission: Stats,
    /// Decryption: `READ_START` to `READ_END`.
    pub read: Stats,
}

/// The result of `gander bench mms` (its JSON output).
#[derive(Debug, Serialize)]
pub struct BenchResult {
    /// The shared machine description, taken at the start of the run.
    pub machine: Machine,
    /// TLS backend name.
    pub backend: String,
    /// TLS library and version.
    pub library: String,
    /// TLS version.
    pub version: String,
    /// Cipher suite.
    pub suite: String,
    /// Key and authentication used.
    pub key: &'static str,
    /// Full HT: TCP, TLS and MMS association (`HT_START` to `HT_END`).
    pub ht_full: Stats,
    /// Sub-steps of the full HT: TCP connect, TLS handshake, MMS association.
    pub ht_steps: [Stats; 3],
    /// TLS-only handshake: TCP and TLS over loopback sockets between two threads, wall time, same
    /// backend, version and suite. Not `gander run`'s *bare handshake* (`gander_tls::bare`: one
    /// thread drives both ends in lockstep, CPU time): this one includes scheduling and wake-ups.
    pub ht_bare_tls: Stats,
    /// Median full HT over median bare TLS handshake.
    pub ht_ratio_p50: f64,
    /// p50 of the MMS association step over p50 of the bare TLS handshake.
    pub ht_added_p50: f64,
    /// Whether the MMS association adds at most 10 % (`ht_added_p50` <= 0.10).
    pub ht_pass: bool,
    /// Reports back to back over TLS (the sustained rate).
    pub throughput: RtPhase,
    /// Reports over TLS at the paced rate.
    pub paced_tls: RtPhase,
    /// Reports in cleartext at the paced rate (the floor).
    pub paced_plain: RtPhase,
    /// Median paced RT over TLS over median paced RT in cleartext.
    pub rt_ratio_p50: f64,
    /// Whether the sustained rate reaches 10,000 reports/s.
    pub rate_pass: bool,
}

/// Why the MMS benchmark stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MmsBenchError {
    /// The lab PKI could not be generated or loaded.
    #[error("PKI generation under {}", dir.display())]
    Pki {
        /// The PKI root.
        dir: std::path::PathBuf,
        /// What the generator said.
        #[source]
        source: gander_tls::TlsError,
    },
    /// The server's TLS profile could not be opened.
    #[error("server profile")]
    ServerProfile(#[source] gander_tls::TlsError),
    /// The client's TLS profile could not be opened.
    #[error("client profile")]
    ClientProfile(#[source] gander_tls::TlsError),
    /// A bare TLS connection or handshake failed.
    #[error(transparent)]
    Tls(#[from] gander_tls::TlsError),
    /// Socket I/O of the bare TLS server.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// gander's MMS server could not start.
    #[error(transparent)]
    Server(#[from] gander_peers::PeerError),
    /// gander's MMS client failed in a phase (`HT` or `RT`).
    #[error("{phase} client failed: {error} {detail}")]
    ClientFailed {
        /// `HT` or `RT`.
        phase: &'static str,
        /// The client's error kind, as it reports it.
        error: String,
        /// The client's detail message, as it reports it.
        detail: String,
    },
}

fn profile(o: &BenchOptions, server: bool) -> Result<TlsProfile, MmsBenchError> {
    let set = pki::init(&o.pki_dir, &[KeySpec::Rsa(2048)])
        .map_err(|source| MmsBenchError::Pki {
            dir: o.pki_dir.clone(),
            source,
        })?
        .remove(0)
        .set;
    Ok(TlsProfile {
        peer_cert: Some(if server {
            set.client.clone()
        } else {
            set.server.clone()
        }),
        versions: vec![o.version],
        cipher_suites: vec![o.suite.clone()],
        session_resumption: false,
        io_timeout_ms: 5000,
        ..set.profile(o.backend, server)
    })
}

fn server_cfg(tls: Option<TlsProfile>, period_us: u64) -> ServerConfig {
    ServerConfig {
        listen: "127.0.0.1:0".into(),
        scl: None,
        ied: None,
        access_point: None,
        values: gander_peers::config::ValueMode::Stimulus,
        events: None,
        tls,
        reports: ReportsConfig {
            period_ms: 0,
            period_us: Some(period_us),
            size: gander_mms::model::DEFAULT_REPORT_SIZE,
        },
        timeout_ms: 10_000,
    }
}

fn client_cfg(addr: std::net::SocketAddr, tls: Option<TlsProfile>, reports: u64) -> ClientConfig {
    ClientConfig {
        connect: addr.to_string(),
        events: None,
        tls,
        connections: 1,
        reports,
        gi: false,
        timeout_ms: 10_000,
        report_timeout_ms: 10_000,
        rcb: None,
        intg_pd_ms: None,
        reads: 0,
        clocks_synchronised: false,
        control: None,
    }
}

/// A TLS-only server: accept, handshake (one thread per connection, as gander's server), read to EOF.
fn bare_tls_server(
    b: Arc<dyn gander_tls::TlsBackend>,
) -> Result<(std::net::SocketAddr, Arc<AtomicBool>), MmsBenchError> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let addr = l.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    std::thread::spawn(move || {
        for tcp in l.incoming() {
            if st.load(Ordering::SeqCst) {
                break;
            }
            let Ok(tcp) = tcp else { continue };
            let b = b.clone();
            std::thread::spawn(move || {
                let _ = tcp.set_nodelay(true);
                if let Ok(mut s) = b.server(tcp) {
                    if s.handshake().is_ok() {
                        let mut buf = [0u8; 4096];
                        while let Ok(n) = s.read(&mut buf) {
                            if n == 0 {
                                break;
                            }
                        }
                    }
                }
            });
        }
    });
    Ok((addr, stop))
}

fn bare_handshake(
    b: &dyn gander_tls::TlsBackend,
    addr: std::net::SocketAddr,
) -> Result<u64, MmsBenchError> {
    let t0 = now_ns();
    let tcp = TcpStream::connect(addr)?;
    let _ = tcp.set_nodelay(true);
    let mut s = b.client(tcp)?;
    s.handshake()?;
    let t1 = now_ns();
    let _ = s.shutdown();
    Ok(t1 - t0)
}

fn rt_phase(
    transport: &'static str,
    tls: Option<(TlsProfile, TlsProfile)>,
    reports: u64,
    rate: u64,
) -> Result<RtPhase, MmsBenchError> {
    let period_us = 1_000_000u64.checked_div(rate).unwrap_or(0);
    let (sp, cp) = match tls {
        Some((s, c)) => (Some(s), Some(c)),
        None => (None, None),
    };
    let ssink = Sink::memory();
    let srv = Server::bind(server_cfg(sp, period_us), ssink.clone())?;
    let (addr, stop, h) = srv.spawn();
    let csink = Sink::memory();
    let cb = match &cp {
        Some(p) => Some(backend::open(p)?),
        None => None,
    };
    let s = client::run(&client_cfg(addr, cp, reports), cb.as_deref(), &csink);
    stop.stop();
    let _ = h.join();
    if !s.ok {
        return Err(MmsBenchError::ClientFailed {
            phase: "RT",
            error: format!("{:?}", s.error),
            detail: format!("{:?}", s.detail),
        });
    }
    let sev = ssink.take();
    let cev = csink.take();
    let key = |e: &Event| (e.conn, e.get_u64("n").unwrap_or(u64::MAX));
    let index = |ev: &[Event], n: &str| -> HashMap<(u64, u64), u64> {
        ev.iter()
            .filter(|e| e.event == n)
            .map(|e| (key(e), e.t_ns))
            .collect()
    };
    let (st, ws, we) = (
        index(&sev, name::RT_START),
        index(&sev, name::WRITE_START),
        index(&sev, name::WRITE_END),
    );
    let (rs, re) = (index(&cev, name::READ_START), index(&cev, name::READ_END));
    let ends: Vec<&Event> = cev.iter().filter(|e| e.event == name::RT_END).collect();
    // Discard the first 1 % (warm-up), at least 10.
    let skip = (ends.len() / 100).max(10).min(ends.len().saturating_sub(1));
    let mut rt = Vec::new();
    let (mut w, mut t, mut r) = (Vec::new(), Vec::new(), Vec::new());
    for e in &ends[skip..] {
        let k = key(e);
        if let (Some(a), Some(b), Some(c), Some(d), Some(f)) =
            (st.get(&k), ws.get(&k), we.get(&k), rs.get(&k), re.get(&k))
        {
            rt.push(e.t_ns as i64 - *a as i64);
            w.push(*c as i64 - *b as i64);
            t.push(*d as i64 - *c as i64);
            r.push(*f as i64 - *d as i64);
        }
    }
    let first = ends.get(skip).map(|e| e.t_ns).unwrap_or(0);
    let last = ends.last().map(|e| e.t_ns).unwrap_or(0);
    let n = ends.len().saturating_sub(skip + 1);
    let rate_per_s = if last > first {
        n as f64 * 1e9 / (last - first) as f64
    } else {
        0.0
    };
    Ok(RtPhase {
        transport,
        target_rate: rate,
        reports,
        rate_per_s,
        rt: Stats::of(&rt),
        write: Stats::of(&w),
        transmission: Stats::of(&t),
        read: Stats::of(&r),
    })
}

/// Runs the benchmark.
pub fn run(o: &BenchOptions) -> Result<BenchResult, MmsBenchError> {
    let machine = Machine::describe();
    let sp = profile(o, true)?;
    let cp = profile(o, false)?;
    let sb: Arc<dyn gander_tls::TlsBackend> =
        Arc::from(backend::open(&sp).map_err(MmsBenchError::ServerProfile)?);
    let cb = backend::open(&cp).map_err(MmsBenchError::ClientProfile)?;
    let library = backend::capabilities(o.backend).library.clone();

    // HT: full (gander server) and bare TLS, interleaved one by one.
    let srv = Server::bind(server_cfg(Some(sp.clone()), 1_000_000), Sink::null())?;
    let (maddr, mstop, mh) = srv.spawn();
    let (baddr, bstop) = bare_tls_server(sb.clone())?;
    let mut full = Vec::new();
    let mut bare = Vec::new();
    let (mut tcp_v, mut tls_v, mut mms_v) = (Vec::new(), Vec::new(), Vec::new());
    let ccfg = client_cfg(maddr, Some(cp.clone()), 0);
    for i in 0..(o.handshakes + o.warmup) {
        let b = bare_handshake(cb.as_ref(), baddr)?;
        let sink = Sink::memory();
        let s = client::run(&ccfg, Some(cb.as_ref()), &sink);
        if !s.ok {
            return Err(MmsBenchError::ClientFailed {
                phase: "HT",
                error: format!("{:?}", s.error),
                detail: format!("{:?}", s.detail),
            });
        }
        if i >= o.warmup {
            bare.push(b as i64);
            full.push(s.ht_ns.first().copied().unwrap_or(0) as i64);
            let ev = sink.take();
            let t = |n: &str| {
                ev.iter()
                    .find(|e| e.event == n)
                    .map(|e| e.t_ns as i64)
                    .unwrap_or(0)
            };
            tcp_v.push(t(name::TCP_UP) - t(name::HT_START));
            tls_v.push(t(name::TLS_UP) - t(name::TCP_UP));
            mms_v.push(t(name::HT_END) - t(name::TLS_UP));
        }
    }
    mstop.stop();
    let _ = mh.join();
    bstop.store(true, Ordering::SeqCst);
    let _ = TcpStream::connect(baddr);
    let ht_steps = [Stats::of(&tcp_v), Stats::of(&tls_v), Stats::of(&mms_v)];
    let ht_full = Stats::of(&full);
    let ht_bare = Stats::of(&bare);
    let ht_ratio = if ht_bare.p50_ns > 0.0 {
        ht_full.p50_ns / ht_bare.p50_ns
    } else {
        f64::NAN
    };
    // What the association adds, measured on the same connections (robust to preemption of the
    // ~2 ms handshakes on a loaded machine): p50(HT_END - TLS_UP) / p50(bare TLS handshake).
    let ht_added = if ht_bare.p50_ns > 0.0 {
        ht_steps[2].p50_ns / ht_bare.p50_ns
    } else {
        f64::NAN
    };

    // RT: back to back over TLS, then paced over TLS and cleartext.
    let throughput = rt_phase("tls", Some((sp.clone(), cp.clone())), o.reports, 0)?;
    std::thread::sleep(Duration::from_millis(50));
    let paced_tls = rt_phase("tls", Some((sp, cp)), o.reports, o.rate)?;
    let paced_plain = rt_phase("plain", None, o.reports, o.rate)?;
    let rt_ratio = if paced_plain.rt.p50_ns > 0.0 {
        paced_tls.rt.p50_ns / paced_plain.rt.p50_ns
    } else {
        f64::NAN
    };
    let rate_pass = throughput.rate_per_s >= 10_000.0;
    Ok(BenchResult {
        machine,
        backend: o.backend.name().into(),
        library,
        version: o.version.to_string(),
        suite: o.suite.clone(),
        key: "RSA-2048, mutual authentication, pinned",
        ht_full,
        ht_steps,
        ht_bare_tls: ht_bare,
        ht_ratio_p50: ht_ratio,
        ht_added_p50: ht_added,
        ht_pass: ht_added <= 0.10,
        throughput,
        paced_tls,
        paced_plain,
        rt_ratio_p50: rt_ratio,
        rate_pass,
    })
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

/// The human-readable report.
pub fn render(r: &BenchResult) -> String {
    let mut s = String::new();
    let pf = |b: bool| if b { "PASS" } else { "FAIL" };
    s += &format!(
        "machine: {} ({} cores), Linux {}, load {:.2}{}\nTLS: {} [{}], {} {}, {}\n\n",
        r.machine.cpu_model,
        r.machine.cores,
        r.machine.kernel,
        r.machine.loadavg[0],
        if r.machine.busy() {
            " (NOISY: other load on this machine; ratios less reliable)"
        } else {
            ""
        },
        r.backend,
        r.library,
        r.version,
        r.suite,
        r.key
    );
    s += "HT (client: before TCP connect -> after MMS initiate response), interleaved, us\n";
    s += &format!(
        "  {:<34} {:>6} {:>10} {:>10} {:>10}\n",
        "", "n", "mean", "p50", "p99"
    );
    for (name, st) in [
        (
            "TLS-only handshake (TCP+TLS, loopback, wall)",
            &r.ht_bare_tls,
        ),
        ("gander full HT (TCP+TLS+MMS)", &r.ht_full),
    ] {
        s += &format!(
            "  {:<34} {:>6} {:>10} {:>10} {:>10}\n",
            name,
            st.n,
            us(st.mean_ns),
            us(st.p50_ns),
            us(st.p99_ns)
        );
    }
    for (name, st) in [
        "  step: TCP connect",
        "  step: TLS handshake",
        "  step: MMS association",
    ]
    .iter()
    .zip(&r.ht_steps)
    {
        s += &format!(
            "  {:<34} {:>6} {:>10} {:>10} {:>10}\n",
            name,
            st.n,
            us(st.mean_ns),
            us(st.p50_ns),
            us(st.p99_ns)
        );
    }
    s += &format!(
        "  full / TLS-only (p50) = {:.3}\n  MMS association adds (p50 step / p50 TLS-only) = {:.1} %   target <= 10 %   {}\n\n",
        r.ht_ratio_p50,
        r.ht_added_p50 * 100.0,
        pf(r.ht_pass)
    );
    s += "RT (server RT_START -> client RT_END), us; write = server WRITE_START..END (encrypt+send),\n";
    s += "   tx = WRITE_END -> client READ_START (may be < 0 on loopback), read = READ_START..END (decrypt)\n";
    s += &format!(
        "  {:<26} {:>9} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "", "reports/s", "n", "RT p50", "RT p99", "write p50", "tx p50", "read p50"
    );
    for (label, p) in [
        ("TLS back to back", &r.throughput),
        ("TLS paced", &r.paced_tls),
        ("cleartext paced (floor)", &r.paced_plain),
    ] {
        s += &format!(
            "  {:<26} {:>9.0} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
            label,
            p.rate_per_s,
            p.rt.n,
            us(p.rt.p50_ns),
            us(p.rt.p99_ns),
            us(p.write.p50_ns),
            us(p.transmission.p50_ns),
            us(p.read.p50_ns)
        );
    }
    s += &format!(
        "  sustained TLS rate {:.0} reports/s   target >= 10000   {}\n",
        r.throughput.rate_per_s,
        pf(r.rate_pass)
    );
    s += &format!(
        "  RT TLS / cleartext at {} reports/s (p50) = {:.3}\n",
        r.paced_tls.target_rate, r.rt_ratio_p50
    );
    s
}
