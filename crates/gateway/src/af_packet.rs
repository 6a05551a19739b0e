//! The `l2` driver: a bridge of two AF_PACKET sockets (IED side, network side), every frame
//! through the policy. Handles GOOSE (EtherType 0x88B8, with or without 802.1Q) and R-GOOSE/R-SV
//! in UDP; everything else follows the policy's `other` action.
//!
//! The kernel hands AF_PACKET a frame without its 802.1Q tag when the NIC (or veth) stripped it;
//! the tag then arrives in `PACKET_AUXDATA` and is put back here, so the policy sees the frame as
//! it was on the wire (as libpcap does). Frames this socket sent are ignored
//! (`PACKET_IGNORE_OUTGOING`), so the bridge never loops its own output.
//!
//! Loss accounting: the kernel's per-socket counters (`PACKET_STATISTICS`, packet(7)) are read
//! every 20 ms and at exit and summed into the counters' `kernel` (a read resets them), and a
//! forwarded frame that `send` refuses is counted as the direction's `tx_errors`.

use crate::config::{Bypass, Config, Direction, L2Toml};
use crate::driver::{poll_fds, tap, unix_now, Control, Housekeeping, StageTimes};
use crate::policy::{Decision, KernelCounters, Policy, SocketCounters, OUTPUT_CAPACITY};
use crate::ring::{Pushed, RxRing, TxRing};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const ETH_P_ALL: u16 = 0x0003;
use crate::ring::SOL_PACKET;
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_MR_PROMISC: libc::c_ushort = 1;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_AUXDATA: libc::c_int = 8;
/// `tp_status`: the transport checksum was left to the device (packet(7)).
const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;

#[repr(C)]
struct PacketMreq {
    mr_ifindex: libc::c_int,
    mr_type: libc::c_ushort,
    mr_alen: libc::c_ushort,
    mr_address: [u8; 8],
}

#[repr(C)]
#[derive(Clone, Copy)]
struct TpacketAuxdata {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

use crate::ring::setopt;

/// The MTU of interface `name` (`SIOCGIFMTU`, netdevice(7)): the namespace of socket `fd`, which
/// sysfs would not give from a thread that entered another namespace.
pub(crate) fn mtu(fd: i32, name: &str) -> io::Result<u32> {
    // SAFETY: zeroed ifreq is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    let b = name.as_bytes();
    if b.len() >= ifr.ifr_name.len() {
        return Err(io::Error::other("interface name too long"));
    }
    for (d, s) in ifr.ifr_name.iter_mut().zip(b) {
        *d = *s as libc::c_char;
    }
    // SAFETY: ifr is a valid ifreq with a NUL-terminated name; SIOCGIFMTU writes ifru_mtu.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFMTU, &mut ifr) })?;
    // SAFETY: the kernel filled the ifru_mtu member of the union.
    let m = unsafe { ifr.ifr_ifru.ifru_mtu };
    u32::try_from(m).map_err(|_| io::Error::other("negative MTU"))
}

/// The index of interface `name` in the calling thread's namespace.
pub fn ifindex(name: &str) -> io::Result<i32> {
    let c = std::ffi::CString::new(name).map_err(|_| io::Error::other("bad interface name"))?;
    // SAFETY: c is a valid C string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface {name}: {}", io::Error::last_os_error()),
        ));
    }
    Ok(i as i32)
}

/// A raw socket bound to one interface (needs CAP_NET_RAW).
#[derive(Debug)]
pub struct RawSocket {
    fd: OwnedFd,
    ifindex: i32,
}

impl RawSocket {
    /// Opens a promiscuous raw socket on `ifname` that sees every EtherType.
    pub fn open(ifname: &str) -> io::Result<Self> {
        Ok(Self::open_with(ifname, None, None)?.0)
    }

    /// Opens a promiscuous raw socket on `ifname` that only receives the frames the classic
    /// BPF program `filter` accepts (e.g. [`crate::bpf::iec61850_filter`]).
    pub fn open_filtered(ifname: &str, filter: &[crate::bpf::Insn]) -> io::Result<Self> {
        Ok(Self::open_with(ifname, Some(filter), None)?.0)
    }

    /// Opens `n` promiscuous raw sockets on `ifname` in one fanout group, steered by
    /// [`crate::bpf::fanout_program`]: the sockets the `l2` driver's `n` workers of one
    /// direction receive from.
    pub fn open_fanout(ifname: &str, n: usize) -> io::Result<Vec<Self>> {
        let socks = (0..n)
            .map(|_| Ok(Self::open_with(ifname, None, None)?.0))
            .collect::<io::Result<Vec<_>>>()?;
        fanout(&socks)?;
        Ok(socks)
    }

    /// Opens a promiscuous raw socket on `ifname` that only queues the frames `filter`
    /// accepts (classic BPF, attached before the socket is bound, so no other frame is ever
    /// queued), with a receive ring of about `ring_bytes` if asked for. A ring that cannot be
    /// set up (an old kernel, no memory) is reported and the socket is used without one.
    pub(crate) fn open_with(
        ifname: &str,
        filter: Option<&[crate::bpf::Insn]>,
        ring_bytes: Option<usize>,
    ) -> io::Result<(Self, Option<RxRing>)> {
        let ifindex = ifindex(ifname)?;
        // Protocol 0 first, then bind with ETH_P_ALL: no frame of another interface queues up
        // between socket() and bind(), and the filter and ring are in place before the first
        // frame arrives.
        // SAFETY: plain socket call.
        let fd =
            cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })
                .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("AF_PACKET socket (CAP_NET_RAW needed): {e}"),
                )
            })?;
        // SAFETY: fd was just returned by socket() and is owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        if let Some(f) = filter {
            crate::bpf::attach(raw, f).map_err(|e| {
                io::Error::new(e.kind(), format!("{ifname}: SO_ATTACH_FILTER: {e}"))
            })?;
        }
        let ring = match ring_bytes {
            None => None,
            Some(bytes) => {
                let mtu = mtu(raw, ifname).unwrap_or(1500);
                match RxRing::new(&fd, mtu, bytes) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        eprintln!("gander: {ifname}: no TPACKET_V2 receive ring ({e}); receiving one frame per system call");
                        None
                    }
                }
            }
        };
        // SAFETY: zeroed sockaddr_ll is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: sll is a valid sockaddr_ll.
        cvt(unsafe {
            libc::bind(
                raw,
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        let mreq = PacketMreq {
            mr_ifindex: ifindex,
            mr_type: PACKET_MR_PROMISC,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        setopt(raw, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq)?;
        setopt(raw, SOL_PACKET, PACKET_AUXDATA, &1i32)?;
        setopt(raw, SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32)?;
        let _ = setopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &(4i32 << 20));
        let _ = setopt(raw, libc::SOL_SOCKET, libc::SO_SNDBUF, &(4i32 << 20));
        Ok((RawSocket { fd, ifindex }, ring))
    }

    /// The interface index.
    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }

    /// The file descriptor (for poll).
    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Asks the kernel to timestamp every received frame (`SO_TIMESTAMPNS`, CLOCK_REALTIME),
    /// read with [`RawSocket::recv_ts`]: the time the frame reached the socket, independent of
    /// when the receiving thread is scheduled.
    pub fn enable_timestamps(&self) -> io::Result<()> {
        setopt(
            self.fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &1i32,
        )
    }

    /// Receives one frame into `buf` (which needs 4 spare bytes for a restored VLAN tag);
    /// `Ok(None)` if nothing is waiting (with `nonblocking`).
    pub fn recv(&self, buf: &mut [u8], nonblocking: bool) -> io::Result<Option<usize>> {
        Ok(self.recv_ts(buf, nonblocking)?.map(|(n, _)| n))
    }

    /// [`RawSocket::recv`] plus the kernel receive timestamp, if enabled.
    pub fn recv_ts(
        &self,
        buf: &mut [u8],
        nonblocking: bool,
    ) -> io::Result<Option<(usize, Option<std::time::SystemTime>)>> {
        let cap = buf.len().saturating_sub(4);
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr() as *mut libc::c_void,
            iov_len: cap,
        };
        let mut cbuf = [0u64; 16];
        // SAFETY: zeroed msghdr is valid; pointers set below outlive the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
        let flags = libc::MSG_TRUNC | if nonblocking { libc::MSG_DONTWAIT } else { 0 };
        // SAFETY: msg is fully initialised.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, flags) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) {
                return Ok(None);
            }
            return Err(e);
        }
        let whole = n as usize <= cap;
        let mut n = (n as usize).min(cap);
        let mut ts = None;
        let mut csum_not_ready = false;
        // SAFETY: walking the control messages the kernel wrote into cbuf.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == SOL_PACKET && (*c).cmsg_type == PACKET_AUXDATA {
                    let aux: TpacketAuxdata =
                        std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const TpacketAuxdata);
                    csum_not_ready = aux.tp_status & TP_STATUS_CSUMNOTREADY != 0;
                    if aux.tp_status & TP_STATUS_VLAN_VALID != 0 && n >= 12 {
                        let tpid = if aux.tp_status & TP_STATUS_VLAN_TPID_VALID != 0 {
                            aux.tp_vlan_tpid
                        } else {
                            0x8100
                        };
                        buf.copy_within(12..n, 16);
                        buf[12..14].copy_from_slice(&tpid.to_be_bytes());
                        buf[14..16].copy_from_slice(&aux.tp_vlan_tci.to_be_bytes());
                        n += 4;
                    }
                }
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_TIMESTAMPNS {
                    let t: libc::timespec =
                        std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                    ts = Some(
                        std::time::UNIX_EPOCH
                            + std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32),
                    );
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        if csum_not_ready && whole {
            // Sent with checksum offload by a peer on this host: complete it as the device
            // would have (`gander_wire::offload`), so the policy checks a real checksum.
            gander_wire::offload::complete_transport_checksum(&mut buf[..n]);
        }
        Ok(Some((n, ts)))
    }

    /// The kernel's counters of this socket since the previous call (or since it was opened):
    /// `PACKET_STATISTICS` (packet(7)); the kernel resets them on every read, so a caller that
    /// wants totals adds the results up ([`SocketCounters::add`]).
    pub fn take_stats(&self) -> io::Result<SocketCounters> {
        let mut st = libc::tpacket_stats {
            tp_packets: 0,
            tp_drops: 0,
        };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: st is a live tpacket_stats and len its size; the kernel writes at most len
        // bytes and updates len.
        cvt(unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                SOL_PACKET,
                PACKET_STATISTICS,
                &mut st as *mut libc::tpacket_stats as *mut libc::c_void,
                &mut len,
            )
        })?;
        Ok(SocketCounters {
            packets: u64::from(st.tp_packets),
            drops: u64::from(st.tp_drops),
        })
    }

    /// Sends one whole Ethernet frame out of the interface.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        loop {
            // SAFETY: frame is a valid buffer.
            let r = unsafe {
                libc::send(
                    self.fd.as_raw_fd(),
                    frame.as_ptr() as *const libc::c_void,
                    frame.len(),
                    0,
                )
            };
            if r >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Bytes of receive ring per socket (about 2000 frames of a 1500-byte MTU: 20 ms of a
/// 100,000 frames/s flood).
pub(crate) const RX_RING_BYTES: usize = 4 << 20;
/// Slots of a transmit ring.
pub(crate) const TX_RING_FRAMES: u32 = 512;
/// Frames judged per wake-up before the transmit ring is flushed.
pub(crate) const BATCH: usize = 64;

/// The policy, shared by the direction threads. The IED side has priority: while one of its
/// threads waits for the lock, no network-side thread takes it again, so a flood arriving from
/// the network delays an IED frame by at most the one frame being judged.
struct Shared {
    policy: Mutex<Policy>,
    ied_waiting: AtomicUsize,
    /// Frames longer than a ring slot, per direction (cut by the kernel, never forwarded).
    truncated: [AtomicU64; 2],
}

impl Shared {
    fn lock(&self, dir: Direction) -> MutexGuard<'_, Policy> {
        match dir {
            Direction::Outbound => {
                self.ied_waiting.fetch_add(1, Ordering::AcqRel);
                let g = self.policy.lock().unwrap_or_else(|e| e.into_inner());
                self.ied_waiting.fetch_sub(1, Ordering::AcqRel);
                g
            }
            Direction::Inbound => {
                while self.ied_waiting.load(Ordering::Acquire) > 0 {
                    std::hint::spin_loop();
                }
                self.policy.lock().unwrap_or_else(|e| e.into_inner())
            }
        }
    }
}

/// Where a direction's frames come from.
enum Rx {
    Ring(RxRing),
    Plain(Vec<u8>),
}

/// Where they go.
enum Tx<'a> {
    Ring(TxRing),
    Plain(&'a RawSocket),
}

impl Tx<'_> {
    /// Queues (ring) or sends (plain) one frame; false if it could not be.
    fn push(&mut self, f: &[u8]) -> bool {
        match self {
            Tx::Ring(r) => r.push(f) == Pushed::Queued,
            Tx::Plain(s) => s.send(f).is_ok(),
        }
    }
    fn flush(&mut self) {
        if let Tx::Ring(r) = self {
            r.flush();
        }
    }
    fn queued(&self) -> usize {
        match self {
            Tx::Ring(r) => r.queued(),
            Tx::Plain(_) => 0,
        }
    }
}

/// How a direction thread waits and where it runs.
#[derive(Clone, Copy)]
struct Mode {
    busy_poll: bool,
    cpu: Option<usize>,
}

fn idx(dir: Direction) -> usize {
    match dir {
        Direction::Outbound => 0,
        Direction::Inbound => 1,
    }
}

/// Pins the calling thread to `cpu` (`sched_setaffinity`): the packet threads with `cpu`, and
/// benchmarks that keep their own threads off a core given to the gateway.
pub fn pin(cpu: usize) -> io::Result<()> {
    // SAFETY: zeroed cpu_set_t is the empty set; CPU_SET writes inside it (cpu is checked
    // against its size first).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(io::Error::other(format!("cpu {cpu} out of range")));
    }
    // SAFETY: cpu is inside the set (checked above).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: set is a valid cpu_set_t of the size given; pid 0 is the calling thread.
    cvt(unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) })
        .map(|_| ())
        .map_err(|e| io::Error::new(e.kind(), format!("pinning to cpu {cpu}: {e}")))
}

/// One direction: frames from `sock` (through `rx`) judged by the policy, forwarded to `tx`.
fn direction(
    dir: Direction,
    sock: &RawSocket,
    mut rx: Rx,
    mut tx: Tx<'_>,
    shared: &Shared,
    ctl: &Control,
    mode: Mode,
) -> io::Result<()> {
    if let Some(c) = mode.cpu {
        if let Err(e) = pin(c) {
            eprintln!("gander gateway: {}: {e}; not pinned", dir.name());
        }
    }
    // The pcap tap is set up before the driver starts: without one, no lock per frame.
    let tapping = ctl.tap.lock().map(|t| t.is_some()).unwrap_or(false);
    let timing = ctl.stages.lock().map(|t| t.is_some()).unwrap_or(false);
    let mut times = StageTimes::default();
    // The frames the policy writes (protect, strip, translate) go here, one buffer for the
    // thread's life: no allocation per frame, and the policy's lock is not held while the
    // frame is copied into the transmit ring (`Decision`).
    let mut out = Vec::with_capacity(OUTPUT_CAPACITY);
    while !ctl.stopping() {
        let ready = match &rx {
            Rx::Ring(r) => r.ready(),
            Rx::Plain(_) => false,
        };
        if !ready {
            if tx.queued() > 0 {
                tx.flush();
            }
            if mode.busy_poll && matches!(rx, Rx::Ring(_)) {
                std::hint::spin_loop();
                continue;
            }
            if !poll_fds(&[sock.fd()], 50)?[0] {
                continue;
            }
        }
        let now = unix_now();
        let (mut pushed, mut push_time) = (0u32, Duration::ZERO);
        for _ in 0..BATCH {
            match &mut rx {
                Rx::Ring(r) => {
                    let Some(f) = r.peek() else {
                        break;
                    };
                    if f.truncated {
                        shared.truncated[idx(dir)].fetch_add(1, Ordering::Relaxed);
                    } else {
                        let t0 = timing.then(|| {
                            if let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) {
                                times.wake.record(now.saturating_sub(f.stamp));
                            }
                            Instant::now()
                        });
                        let d = shared.lock(dir).handle(dir, f.data, now, &mut out);
                        if let Some(t0) = t0 {
                            times.judge.record(t0.elapsed());
                        }
                        if let Decision::Forward(fwd) = d {
                            let t1 = timing.then(Instant::now);
                            if !tx.push(&fwd) {
                                shared.lock(dir).count_tx_error(dir);
                            }
                            if let Some(t1) = t1 {
                                pushed += 1;
                                push_time += t1.elapsed();
                            }
                            if tapping {
                                tap(ctl, &fwd);
                            }
                        }
                    }
                    r.release();
                }
                Rx::Plain(buf) => {
                    let Some(n) = sock.recv(buf, true)? else {
                        break;
                    };
                    let d = shared.lock(dir).handle(dir, &buf[..n], now, &mut out);
                    if let Decision::Forward(fwd) = d {
                        if !tx.push(&fwd) {
                            shared.lock(dir).count_tx_error(dir);
                        }
                        if tapping {
                            tap(ctl, &fwd);
                        }
                    }
                }
            }
        }
        let t2 = Instant::now();
        tx.flush();
        // A batch of one frame is the latency case: its copy plus the `send`.
        if pushed == 1 {
            times.send.record(push_time + t2.elapsed());
        }
    }
    if timing {
        if let Ok(mut st) = ctl.stages.lock() {
            if let Some(st) = st.as_mut() {
                st[idx(dir)].add(&times);
            }
        }
    }
    // Whatever the ring refused at the end.
    if let Tx::Ring(r) = &mut tx {
        r.flush();
        r.reap();
        let errors = r.errors;
        if errors > 0 {
            let mut p = shared.lock(dir);
            for _ in 0..errors {
                p.count_tx_error(dir);
            }
        }
    }
    Ok(())
}

const PACKET_FANOUT: libc::c_int = 18;
const PACKET_FANOUT_DATA: libc::c_int = 22;
const PACKET_FANOUT_CBPF: u32 = 6;

/// `PACKET_FANOUT_FLAG_UNIQUEID` (linux/if_packet.h, Linux 4.18): the kernel picks a group id
/// no other group of the namespace uses.
const PACKET_FANOUT_FLAG_UNIQUEID: u32 = 0x2000;

/// Puts `socks` (bound to one interface) into a new fanout group steered by
/// [`crate::bpf::fanout_program`] (packet(7): `PACKET_FANOUT` with `PACKET_FANOUT_CBPF`, then
/// the program with `PACKET_FANOUT_DATA`). The first socket creates the group with an id the
/// kernel chooses (read back with `getsockopt`), so two gateways in one namespace never meet
/// in one group; the others join it.
fn fanout(socks: &[RawSocket]) -> io::Result<()> {
    let Some((first, rest)) = socks.split_first() else {
        return Ok(());
    };
    let err =
        |what: &'static str| move |e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
    setopt(
        first.fd(),
        SOL_PACKET,
        PACKET_FANOUT,
        &((PACKET_FANOUT_CBPF | PACKET_FANOUT_FLAG_UNIQUEID) << 16),
    )
    .map_err(err("PACKET_FANOUT"))?;
    let mut arg = 0u32;
    let mut len = std::mem::size_of::<u32>() as libc::socklen_t;
    // SAFETY: arg is a live u32 and len its size; the kernel writes at most len bytes.
    cvt(unsafe {
        libc::getsockopt(
            first.fd(),
            SOL_PACKET,
            PACKET_FANOUT,
            &mut arg as *mut u32 as *mut libc::c_void,
            &mut len,
        )
    })
    .map_err(err("getsockopt PACKET_FANOUT"))?;
    let id = arg & 0xFFFF;
    crate::bpf::set_prog(
        first.fd(),
        SOL_PACKET,
        PACKET_FANOUT_DATA,
        &crate::bpf::fanout_program(),
    )
    .map_err(err("PACKET_FANOUT_DATA"))?;
    for s in rest {
        setopt(
            s.fd(),
            SOL_PACKET,
            PACKET_FANOUT,
            &(id | (PACKET_FANOUT_CBPF << 16)),
        )
        .map_err(err("PACKET_FANOUT"))?;
    }
    Ok(())
}

/// Runs the bridge until `ctl.stop` is set; returns the policy (with its counters).
///
/// Packet threads per direction (IED to network, network to IED; `workers` each, spread by
/// `PACKET_FANOUT`), each with its own receive socket and ring and its own transmit ring, share
/// the policy under a lock that gives the IED side priority; this thread reads the kernel's
/// counters and does the housekeeping. With `bypass = "tc"`, the sockets only receive IEC 61850
/// traffic and tc bridges the rest.
pub fn run(config: &Config, policy: Policy, ctl: &Control) -> io::Result<Policy> {
    let cfg: &L2Toml = config
        .raw
        .l2
        .as_ref()
        .ok_or_else(|| io::Error::other("no [l2]"))?;
    let filter = (cfg.bypass == Bypass::Tc).then(crate::bpf::iec61850_filter);
    let ring = cfg.ring.then_some(RX_RING_BYTES);
    let workers = cfg.workers.max(1);
    let mut socks: [Vec<RawSocket>; 2] = [Vec::new(), Vec::new()];
    let mut rings: [Vec<Option<RxRing>>; 2] = [Vec::new(), Vec::new()];
    // Index 0 is the IED side (outbound frames arrive there), 1 the network side.
    for (d, (name, dir)) in [
        (&cfg.ied, Direction::Outbound),
        (&cfg.net, Direction::Inbound),
    ]
    .into_iter()
    .enumerate()
    {
        for _ in 0..workers {
            let (s, r) = RawSocket::open_with(name, filter.as_deref(), ring)?;
            if cfg.busy_poll.spins(dir) {
                // Busy polling of the device queue where the driver supports it (socket(7)).
                let _ = setopt(s.fd(), libc::SOL_SOCKET, libc::SO_BUSY_POLL, &50i32);
            }
            socks[d].push(s);
            rings[d].push(r);
        }
        if workers > 1 {
            fanout(&socks[d])?;
        }
    }
    let tx_ring = |ifindex: i32, fd: i32, name: &str| -> Option<TxRing> {
        if !cfg.ring {
            return None;
        }
        let m = mtu(fd, name).unwrap_or(1500);
        match TxRing::open(ifindex, m, TX_RING_FRAMES, true) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("gander gateway: {name}: no TPACKET_V2 transmit ring ({e}); sending one frame per system call");
                None
            }
        }
    };
    let (ied0, net0) = (&socks[0][0], &socks[1][0]);
    let mut txs: [Vec<Option<TxRing>>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..workers {
        txs[0].push(tx_ring(net0.ifindex(), net0.fd(), &cfg.net));
        txs[1].push(tx_ring(ied0.ifindex(), ied0.fd(), &cfg.ied));
    }
    let bypass = match cfg.bypass {
        Bypass::Gander => None,
        Bypass::Tc => Some(
            crate::bypass::TcBypass::install(
                &cfg.ied,
                &cfg.net,
                config.raw.other_outbound.unwrap_or(config.raw.other),
                config.raw.other_inbound.unwrap_or(config.raw.other),
            )
            .map_err(io::Error::other)?,
        ),
    };
    let shared = Shared {
        policy: Mutex::new(policy),
        ied_waiting: AtomicUsize::new(0),
        truncated: [AtomicU64::new(0), AtomicU64::new(0)],
    };
    let mut hk = Housekeeping::new();
    let mut kernel = KernelCounters::default();
    ctl.set_running();
    let result = std::thread::scope(|s| -> io::Result<()> {
        let mut handles = Vec::new();
        let (shared, socks_ref) = (&shared, &socks);
        for (d, dir) in [Direction::Outbound, Direction::Inbound]
            .into_iter()
            .enumerate()
        {
            let rs = std::mem::take(&mut rings[d]);
            let ts = std::mem::take(&mut txs[d]);
            for (w, (r, t)) in rs.into_iter().zip(ts).enumerate() {
                let k = d * workers + w;
                let mode = Mode {
                    busy_poll: cfg.busy_poll.spins(dir),
                    cpu: (!cfg.cpu.is_empty()).then(|| cfg.cpu[k % cfg.cpu.len()]),
                };
                let rx = match r {
                    Some(r) => Rx::Ring(r),
                    None => Rx::Plain(vec![0u8; 65536 + 4]),
                };
                let out_sock = &socks_ref[1 - d][0];
                let in_sock = &socks_ref[d][w];
                let h = std::thread::Builder::new()
                    .name(format!(
                        "gander-{}{w}",
                        if d == 0 { "ied-net" } else { "net-ied" }
                    ))
                    .spawn_scoped(s, move || {
                        let tx = t.map_or(Tx::Plain(out_sock), Tx::Ring);
                        direction(dir, in_sock, rx, tx, shared, ctl, mode)
                    })?;
                handles.push(h);
            }
        }
        let mut last_stats = Instant::now();
        while !ctl.stopping() && !handles.iter().any(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(5));
            if last_stats.elapsed() >= Duration::from_millis(20) {
                last_stats = Instant::now();
                read_kernel(socks_ref, &mut kernel, shared);
            }
            let mut p = shared.lock(Direction::Inbound);
            hk.tick(ctl, &mut p);
        }
        // A thread that stopped on an error stops the others too.
        ctl.stop.store(true, Ordering::Relaxed);
        let mut first = Ok(());
        for h in handles {
            let r = h
                .join()
                .map_err(|_| io::Error::other("packet thread panicked"))
                .and_then(|r| r);
            if first.is_ok() {
                first = r;
            }
        }
        first
    });
    read_kernel(&socks, &mut kernel, &shared);
    if let Some(b) = bypass {
        b.remove().map_err(io::Error::other)?;
    }
    let policy = shared
        .policy
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    result?;
    let tx_errors = policy.counters().outbound.tx_errors + policy.counters().inbound.tx_errors;
    if tx_errors > 0 {
        eprintln!("gander gateway: {tx_errors} frames could not be sent (interface down, transmit ring full or frame larger than the MTU)");
    }
    ctl.publish(&policy, false);
    Ok(policy)
}

/// Adds both sockets' kernel counters to `acc` and hands the totals to the policy's counters. A
/// read that fails leaves the totals as they were (the next read catches up: the kernel keeps
/// counting until it is read). Frames longer than a ring slot count as the socket's drops.
fn read_kernel(socks: &[Vec<RawSocket>; 2], acc: &mut KernelCounters, shared: &Shared) {
    for s in &socks[0] {
        if let Ok(s) = s.take_stats() {
            acc.ied.add(s);
        }
    }
    for s in &socks[1] {
        if let Ok(s) = s.take_stats() {
            acc.net.add(s);
        }
    }
    let mut k = *acc;
    k.ied.drops += shared.truncated[0].load(Ordering::Relaxed);
    k.net.drops += shared.truncated[1].load(Ordering::Relaxed);
    shared.lock(Direction::Inbound).set_kernel_counters(k);
}

/// The `[l2]` data-path options of [`crate::config::L2Toml`], tested beside their driver.
#[cfg(test)]
mod l2_config_tests {
    use crate::config::{BusyPoll, Bypass, Config, ConfigError, Direction};
    use std::path::Path;

    fn l2(extra: &str) -> Result<Config, ConfigError> {
        Config::from_toml(
            &format!("driver = \"l2\"\nkeys = \"k.toml\"\n[l2]\nied = \"a\"\nnet = \"b\"\n{extra}"),
            Path::new("."),
        )
    }

    #[test]
    fn data_path_options_default_and_are_checked() {
        let c = l2("").expect("defaults");
        let d = c.raw.l2.expect("[l2]");
        assert_eq!(d.bypass, Bypass::Gander);
        assert!(d.ring && d.busy_poll == BusyPoll::Off && d.cpu.is_empty() && d.workers == 1);
        let c = l2("bypass = \"tc\"\nworkers = 4\ncpu = [0, 1]\nbusy_poll = true\nring = false")
            .expect("all set");
        let d = c.raw.l2.expect("[l2]");
        assert_eq!(
            (d.bypass, d.workers, d.cpu, d.busy_poll),
            (Bypass::Tc, 4, vec![0, 1], BusyPoll::All)
        );
        let d = l2("busy_poll = \"outbound\"")
            .expect("one direction")
            .raw
            .l2
            .expect("[l2]");
        assert_eq!(d.busy_poll, BusyPoll::Only(Direction::Outbound));
        assert!(d.busy_poll.spins(Direction::Outbound) && !d.busy_poll.spins(Direction::Inbound));
        for (bad, why) in [
            ("busy_poll = \"sideways\"", "busy_poll"),
            ("busy_poll = 1", "busy_poll"),
            ("workers = 0", "workers"),
            ("workers = 17", "workers"),
            ("cpu = [4096]", "cpu"),
            ("bypass = \"xdp\"", "bypass"),
        ] {
            let e = l2(bad).expect_err(bad).to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = Config::from_toml(
            "driver = \"l2\"\nkeys = \"k\"\n[l2]\nied = \"a\"\nnet = \"a\"\n",
            Path::new("."),
        )
        .expect_err("same interface twice")
        .to_string();
        assert!(e.contains("different"), "{e}");
    }
}
