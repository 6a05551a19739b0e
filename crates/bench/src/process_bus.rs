//! `gander bench gateway --profile process-bus`: the gateway on an IEC 61850-9-2 process bus.
//!
//! Eight merging units each publish one SV stream at 4800 frames/s (IEC 61850-9-2LE: 80 samples
//! per cycle at 60 Hz, one ASDU per frame), the eight frames of one sample instant back to back
//! as PPS-synchronised merging units send them, plus GOOSE every 4 ms. The same traffic crosses
//! the direct path (the lab's second IED interface, through the switch only) and then the
//! gateway (`l2` driver: protect outbound with HMAC-SHA256-128), in the same run. The report
//! gives the one-way latency of SV on each path (n, p50, p99, max), the added p99 against the
//! target of 100 us, and a loss table of the gateway phase in the form of the flood test's.
//!
//! Latency is measured from the sender's CLOCK_REALTIME just before `send` to the kernel's
//! receive timestamp (`SO_TIMESTAMPNS`) on the subscriber, the same clock on both ends of the
//! namespace lab.

use crate::gateway::{
    fmt_us, host_snapshot, keys, machine_line, print_stages, stats_us, GatewayBenchError,
    GatewayOptions, GatewayReport, Gw, Loss, LossRow, Result, Side, LEGIT_PATH,
};
use gander_gateway::af_packet::RawSocket;
use gander_gateway::driver::poll_fds;
use gander_gateway::policy::SocketCounters;
use gander_lab::{addr, Lab, Mode, Role};
use gander_measure::machine::Machine;
use gander_sec::Profile;
use gander_testkit::frames as craft;
use gander_wire::l2_frame::L2Frame;
use gander_wire::sv::SavPdu;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// SV streams (merging units).
pub const STREAMS: usize = 8;
/// Frames per second of each stream: 80 samples per cycle at 60 Hz.
pub const SV_RATE: u64 = 4800;
/// The added one-way p99 the profile must stay under, in microseconds.
pub const TARGET_ADDED_P99_US: f64 = 100.0;

/// Sample ticks between two GOOSE frames: 19 ticks of 208 us, 3.96 ms.
pub(crate) const GOOSE_EVERY_TICKS: usize = (4_000_000 / (1_000_000_000 / SV_RATE)) as usize;

const SV_APPID: u16 = 0x4000;
const GOOSE_APPID: u16 = 0x0030;
const SV_MCAST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x04, 0x00, 0x00];
const GOOSE_MCAST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x30];

/// The gateway's configuration: sleeping in `poll` at real-time priority (the default way to
/// run it), or, with `dedicated`, the IED-to-network thread pinned to CPU 1 and spinning on its
/// ring (`busy_poll = "outbound"`) at normal priority: a core given to the SV that leaves the
/// merging unit. (Not real-time there: a spinning SCHED_FIFO thread is stopped by the kernel's
/// RT throttling, 50 ms in every second by default, whenever other work waits for its CPU.)
fn gw_config(dedicated: bool) -> String {
    let threads = if dedicated {
        "busy_poll = \"outbound\"\ncpu = [1, 0]\n"
    } else {
        ""
    };
    let prio = if dedicated { "" } else { "rt_priority = 50\n" };
    let wakeup = crate::gateway::wakeup_line();
    format!(
        r#"
driver = "l2"
keys = "unused"
{prio}{wakeup}[l2]
ied = "gi0"
net = "gn0"
{threads}[[rule]]
direction = "outbound"
action = "protect"
key_id = 1
[[rule]]
direction = "inbound"
action = "verify"
"#
    )
}

fn sv_id(stream: usize) -> String {
    format!("GANDERMU{:02}", stream + 1)
}

/// What one phase (one path) measured.
struct Phase {
    /// One-way SV latencies in ns.
    sv_ns: Vec<u64>,
    sv_sent: u64,
    sv_received: u64,
    goose_sent: u64,
    goose_received: u64,
    /// Received frames that should have been protected and were not (or did not verify).
    not_protected: u64,
    receiver_socket: SocketCounters,
}

/// Sends `ticks` sample instants of 8 SV frames (plus GOOSE every 4 ms) from `dev` in the IED
/// namespace with source `src_mac`; `sent[t * 8 + s]` gets the send time of stream `s` at
/// tick `t`.
pub(crate) fn send(
    ns: String,
    dev: &'static str,
    src_mac: [u8; 6],
    ticks: usize,
) -> Result<Vec<SystemTime>> {
    gander_lab::enter(&ns)?;
    let s = RawSocket::open(dev)?;
    // Frames are built before the clock starts: the sender must keep the 208 us period.
    let mut frames: Vec<Vec<u8>> = Vec::with_capacity(STREAMS * SV_RATE as usize);
    for smp in 0..SV_RATE as u16 {
        for st in 0..STREAMS {
            let mut dst = SV_MCAST;
            dst[5] = st as u8;
            frames.push(craft::sv_frame(
                src_mac,
                dst,
                None,
                SV_APPID + st as u16,
                &sv_id(st),
                smp,
            ));
        }
    }
    let mut sent = vec![SystemTime::UNIX_EPOCH; ticks * STREAMS];
    let period_ns = 1_000_000_000 / SV_RATE;
    let goose_every = (4_000_000 / period_ns) as usize; // 19 ticks: 3.96 ms
    let start = Instant::now();
    for t in 0..ticks {
        let due = start + Duration::from_nanos(t as u64 * period_ns);
        loop {
            let now = Instant::now();
            if now >= due {
                break;
            }
            let left = due - now;
            if left > Duration::from_micros(120) {
                std::thread::sleep(left - Duration::from_micros(100));
            } else {
                std::hint::spin_loop();
            }
        }
        let base = (t % SV_RATE as usize) * STREAMS;
        for st in 0..STREAMS {
            sent[t * STREAMS + st] = SystemTime::now();
            s.send(&frames[base + st])?;
        }
        if t % goose_every == 0 {
            let i = (t / goose_every) as u32;
            s.send(&craft::goose_frame(
                src_mac,
                GOOSE_MCAST,
                None,
                GOOSE_APPID,
                1,
                i,
            ))?;
        }
    }
    Ok(sent)
}

/// Where each SV frame of the benchmark's streams arrived, by stream and tick: the receivers of
/// this profile and of `gander bench gdoi --gateway` place frames alike.
pub(crate) struct SvArrivals {
    /// Per (tick, stream), the first arrival time.
    pub(crate) arrived: Vec<Option<SystemTime>>,
    turn: [usize; STREAMS],
    last: [Option<u16>; STREAMS],
}

impl SvArrivals {
    /// Room for `ticks` samples of every stream.
    pub(crate) fn new(ticks: usize) -> Self {
        SvArrivals {
            arrived: vec![None; ticks * STREAMS],
            turn: [0; STREAMS],
            last: [None; STREAMS],
        }
    }

    /// Records the arrival `ts` of the SV frame of `appid` with `apdu`; frames of other
    /// APPIDs or whose APDU does not read are ignored.
    pub(crate) fn place(&mut self, appid: u16, apdu: &[u8], ts: Option<SystemTime>) {
        let st = appid.wrapping_sub(SV_APPID) as usize;
        if st >= STREAMS {
            return;
        }
        let Some(smp) = SavPdu::parse(apdu)
            .ok()
            .and_then(|p| p.asdus.first().map(|a| a.smp_cnt))
        else {
            return;
        };
        // smpCnt wraps every second; the stream's turn counts the wraps.
        if self.last[st].is_some_and(|l| smp < l && l - smp > SV_RATE as u16 / 2) {
            self.turn[st] += 1;
        }
        self.last[st] = Some(smp);
        let tick = self.turn[st] * SV_RATE as usize + smp as usize;
        if let Some(slot) = self.arrived.get_mut(tick * STREAMS + st) {
            slot.get_or_insert(ts.unwrap_or_else(SystemTime::now));
        }
    }
}

/// Receives on the subscriber until `stop`: per (stream, tick) the kernel receive time.
/// `protected` says whether frames must carry the IEC 62351-6 extension (1 in 64 is fully
/// verified).
fn receive(
    ns: String,
    src_mac: [u8; 6],
    ticks: usize,
    protected: bool,
    stop: Arc<AtomicBool>,
    ready: std::sync::mpsc::Sender<()>,
) -> Result<(Vec<Option<SystemTime>>, u64, u64, SocketCounters)> {
    gander_lab::enter(&ns)?;
    let s = RawSocket::open("sub0")?;
    s.enable_timestamps()?;
    let k = keys()?;
    let _ = ready.send(());
    let mut arrivals = SvArrivals::new(ticks);
    let (mut goose, mut not_protected, mut n) = (0u64, 0u64, 0u64);
    let mut buf = vec![0u8; 70000];
    while !stop.load(Ordering::Relaxed) {
        if !poll_fds(&[s.fd()], 20)?[0] {
            continue;
        }
        while let Some((len, ts)) = s.recv_ts(&mut buf, true)? {
            let f = &buf[..len];
            if f.len() < 14 || f[6..12] != src_mac {
                continue;
            }
            let Ok((l2, _)) = L2Frame::parse(f) else {
                continue;
            };
            n += 1;
            if protected
                && (l2.body.extension.is_none()
                    || (n % 64 == 0
                        && gander_sec::l2::verify(Profile::Standard, &k, f, 0).is_err()))
            {
                not_protected += 1;
                continue;
            }
            if l2.eth.ethertype == gander_wire::ethernet::ETHERTYPE_GOOSE {
                goose += 1;
                continue;
            }
            arrivals.place(l2.body.appid, &l2.body.apdu, ts);
        }
    }
    Ok((arrivals.arrived, goose, not_protected, s.take_stats()?))
}

/// One path for `secs`; with `bench_cpu`, the benchmark's sender and receiver run on that CPU
/// only (off the core given to the gateway).
fn phase(lab: &Lab, gateway: bool, secs: f64, bench_cpu: Option<usize>) -> Result<Phase> {
    let ticks = (secs * SV_RATE as f64) as usize;
    let (dev, mac) = if gateway {
        ("ied0", addr::IED_MAC)
    } else {
        ("ied1", addr::IED_DIRECT_MAC)
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let (s2, ns) = (stop.clone(), lab.ns(Role::Sub));
    let pin = move || -> Result<()> {
        if let Some(c) = bench_cpu {
            gander_gateway::af_packet::pin(c)?;
        }
        Ok(())
    };
    let rcv = std::thread::spawn(move || {
        pin()?;
        receive(ns, mac, ticks, gateway, s2, tx)
    });
    let _ = rx.recv();
    let ns = lab.ns(Role::Ied);
    let sent = std::thread::spawn(move || {
        pin()?;
        send(ns, dev, mac, ticks)
    })
    .join()
    .map_err(|_| GatewayBenchError::Panicked("sender"))??;
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let (arrived, goose_received, not_protected, receiver_socket) = rcv
        .join()
        .map_err(|_| GatewayBenchError::Panicked("receiver"))??;
    let warm = STREAMS * SV_RATE as usize / 20; // the first 50 ms are warm-up
    let sv_ns: Vec<u64> = sent
        .iter()
        .zip(&arrived)
        .skip(warm)
        .filter_map(|(s, a)| Some(a.as_ref()?.duration_since(*s).ok()?.as_nanos() as u64))
        .collect();
    let goose_every = (4_000_000 / (1_000_000_000 / SV_RATE)) as usize;
    Ok(Phase {
        sv_ns,
        sv_sent: sent.len() as u64,
        sv_received: arrived.iter().filter(|a| a.is_some()).count() as u64,
        goose_sent: ticks.div_ceil(goose_every) as u64,
        goose_received,
        not_protected,
        receiver_socket,
    })
}

/// Runs the process-bus profile in a lab it builds and removes.
pub fn run(args: &GatewayOptions, out: &mut dyn FnMut(String)) -> Result<GatewayReport> {
    gander_lab::check_available()?;
    let lab = Lab::new(&args.prefix, Mode::L2);
    Lab::down_prefix(&args.prefix)?;
    lab.up()?;
    let result = bench(&lab, args, out);
    let _ = lab.down();
    result
}

fn bench(lab: &Lab, args: &GatewayOptions, out: &mut dyn FnMut(String)) -> Result<GatewayReport> {
    let secs = if args.quick { 2.0 } else { 10.0 };
    let machine = Machine::describe();
    out(format!(
        "gander bench gateway --profile process-bus: {} (l2 driver, lab {})",
        machine_line(&machine),
        lab.prefix
    ));
    out(format!(
        "  {STREAMS} SV streams x {SV_RATE} frames/s (IEC 61850-9-2LE, 80 samples/cycle at 60 Hz, {} frames/s) + GOOSE every 4 ms, {secs} s per path; protect with HMAC-SHA256-128",
        STREAMS as u64 * SV_RATE
    ));
    let direct = phase(lab, false, secs, None)?;
    // The dedicated-core configuration first needs a second CPU to give away.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dedicated = if cpus >= 2 {
        let gw = Gw::start_with(lab, &gw_config(true), true)?;
        let d = phase(lab, true, secs, Some(0))?;
        let (p, stages) = gw.stop_timed()?;
        Some((d, p.counters().clone(), stages))
    } else {
        None
    };
    let gw = Gw::start_with(lab, &gw_config(false), true)?;
    let before = host_snapshot(lab)?;
    let through = phase(lab, true, secs, None)?;
    let after = host_snapshot(lab)?;
    let (p, stages) = gw.stop_timed()?;
    let (sd, sg) = (stats_us(&direct.sv_ns), stats_us(&through.sv_ns));
    out(format!("    SV one-way direct   {}", fmt_us(&sd)));
    out(format!("    SV one-way gateway  {}", fmt_us(&sg)));
    let added = sg.p99 - sd.p99;
    let delivered_ok = through.sv_received * 100 >= through.sv_sent * 99;
    let pass = added <= TARGET_ADDED_P99_US && delivered_ok && through.not_protected == 0;
    out(format!(
        "    SV added one-way p99 {added:.1} us (target <= {TARGET_ADDED_P99_US:.0} us: {}); p99 ratio {:.2}; SV delivered direct {}/{}, gateway {}/{}; GOOSE delivered direct {}/{}, gateway {}/{}; unprotected or failing on the gateway path {}",
        if pass { "met" } else { "MISSED" },
        sg.p99 / sd.p99.max(1e-9),
        direct.sv_received,
        direct.sv_sent,
        through.sv_received,
        through.sv_sent,
        direct.goose_received,
        direct.goose_sent,
        through.goose_received,
        through.goose_sent,
        through.not_protected,
    ));
    let stage_json = print_stages(stages.as_ref(), out);
    let c = p.counters();
    let k = c.kernel.unwrap_or_default();
    let mut rows = vec![
        LossRow {
            what: "gateway ied socket drops (gw gi0, PACKET_STATISTICS)".into(),
            count: k.ied.drops,
            side: Side::Gateway,
        },
        LossRow {
            what: "gateway policy drops, outbound".into(),
            count: c.outbound.dropped_total(),
            side: Side::Gateway,
        },
        LossRow {
            what: "gateway tx errors, outbound (send to gn0 failed)".into(),
            count: c.outbound.tx_errors,
            side: Side::Gateway,
        },
    ];
    for (((_, dev, ns), a), b) in LEGIT_PATH.iter().zip(&after.ifs).zip(&before.ifs) {
        let d = a.since(b);
        rows.push(LossRow {
            what: format!(
                "interface {ns} {dev} (rx_dropped {}, rx_missed {}, tx_dropped {})",
                d.rx_dropped, d.rx_missed_errors, d.tx_dropped
            ),
            count: d.total(),
            side: Side::Host,
        });
    }
    rows.push(LossRow {
        what: "softnet backlog drops, all CPUs (/proc/net/softnet_stat)".into(),
        count: after.softnet.saturating_sub(before.softnet),
        side: Side::Host,
    });
    rows.push(LossRow {
        what: "receiver socket drops (sub sub0, PACKET_STATISTICS)".into(),
        count: through.receiver_socket.drops,
        side: Side::Host,
    });
    let loss = Loss {
        legit_sent: through.sv_sent + through.goose_sent,
        legit_received: through.sv_received + through.goose_received,
        rows,
    };
    for line in loss.lines() {
        out(line.replace("legit GOOSE", "SV + GOOSE"));
    }
    let mut dedicated_json = serde_json::Value::Null;
    let mut lost_dedicated = 0;
    if let Some((d, dc, dstages)) = &dedicated {
        let sdd = stats_us(&d.sv_ns);
        let added_d = sdd.p99 - sd.p99;
        let lost_inside = dc.kernel.map_or(0, |k| k.ied.drops)
            + dc.outbound.dropped_total()
            + dc.outbound.tx_errors;
        lost_dedicated = lost_inside;
        let pass_d = added_d <= TARGET_ADDED_P99_US
            && d.sv_received * 100 >= d.sv_sent * 99
            && d.not_protected == 0
            && lost_inside == 0;
        out("  the same gateway with a core for the SV leaving the merging unit (busy_poll = \"outbound\", that thread pinned to CPU 1, the benchmark's sender and receiver on CPU 0):".into());
        out(format!("    SV one-way gateway  {}", fmt_us(&sdd)));
        out(format!(
            "    SV added one-way p99 {added_d:.1} us (target <= {TARGET_ADDED_P99_US:.0} us: {}); SV delivered {}/{}; GOOSE delivered {}/{}; unprotected or failing {}; lost inside the gateway {lost_inside}",
            if pass_d { "met" } else { "MISSED" },
            d.sv_received,
            d.sv_sent,
            d.goose_received,
            d.goose_sent,
            d.not_protected,
        ));
        let stage_json = print_stages(dstages.as_ref(), out);
        dedicated_json = serde_json::json!({
            "sv_one_way_gateway": sdd,
            "sv_added_one_way_p99_us": added_d,
            "sv_received_gateway": d.sv_received,
            "goose_received_gateway": d.goose_received,
            "not_protected": d.not_protected,
            "lost_inside_gateway": lost_inside,
            "stages": stage_json,
        });
    }
    // The verdict is the default configuration's; the dedicated core is reported beside it
    // (and must not lose a frame inside the gateway either).
    let ok = pass && loss.sum(Side::Gateway) == 0 && lost_dedicated == 0;
    let json = serde_json::json!({
        "profile": "process-bus",
        "machine": serde_json::to_value(&machine).unwrap_or_default(),
        "streams": STREAMS,
        "sv_rate": SV_RATE,
        "seconds": secs,
        "sv_one_way_direct": sd,
        "sv_one_way_gateway": sg,
        "sv_added_one_way_p99_us": added,
        "sv_sent": through.sv_sent,
        "sv_received_direct": direct.sv_received,
        "sv_received_gateway": through.sv_received,
        "goose_sent": through.goose_sent,
        "goose_received_direct": direct.goose_received,
        "goose_received_gateway": through.goose_received,
        "not_protected": through.not_protected,
        "gateway_protected": c.outbound.protected,
        "stages": stage_json,
        "loss": loss.json(),
        "dedicated_core": dedicated_json,
    });
    Ok(GatewayReport {
        targets_met: ok,
        json,
    })
}
