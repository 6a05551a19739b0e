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

use crate::config::{Direction, L2Toml};
use crate::driver::{poll_fds, tap, unix_now, Control, Housekeeping};
use crate::policy::{Decision, KernelCounters, Policy, SocketCounters};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const ETH_P_ALL: u16 = 0x0003;
const SOL_PACKET: libc::c_int = 263;
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_MR_PROMISC: libc::c_ushort = 1;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_AUXDATA: libc::c_int = 8;
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

fn setopt<T>(fd: i32, level: i32, name: i32, v: &T) -> io::Result<()> {
    // SAFETY: v points to a live T of the size given.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
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
        let ifindex = ifindex(ifname)?;
        // Protocol 0 first, then bind with ETH_P_ALL: no frame of another interface queues up
        // between socket() and bind().
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
        Ok(RawSocket { fd, ifindex })
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
        let mut n = (n as usize).min(cap);
        let mut ts = None;
        // SAFETY: walking the control messages the kernel wrote into cbuf.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == SOL_PACKET && (*c).cmsg_type == PACKET_AUXDATA {
                    let aux: TpacketAuxdata =
                        std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const TpacketAuxdata);
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

/// Runs the bridge until `ctl.stop` is set; returns the policy (with its counters).
pub fn run(cfg: &L2Toml, mut policy: Policy, ctl: &Control) -> io::Result<Policy> {
    let ied = RawSocket::open(&cfg.ied)?;
    let net = RawSocket::open(&cfg.net)?;
    let mut buf = vec![0u8; 65536 + 4];
    let mut hk = Housekeeping::new();
    let mut send_errors = 0u64;
    let mut kernel = KernelCounters::default();
    let mut last_stats = std::time::Instant::now();
    read_kernel(&ied, &net, &mut kernel, &mut policy);
    while !ctl.stopping() {
        let ready = poll_fds(&[ied.fd(), net.fd()], 50)?;
        let mut now = unix_now();
        // Drain both sides in turns, up to a batch each, so neither direction starves.
        for _ in 0..64 {
            let mut any = false;
            for (i, (rx, tx, dir)) in [
                (&ied, &net, Direction::Outbound),
                (&net, &ied, Direction::Inbound),
            ]
            .into_iter()
            .enumerate()
            {
                if !ready[i] {
                    continue;
                }
                let Some(n) = rx.recv(&mut buf, true)? else {
                    continue;
                };
                any = true;
                if let Decision::Forward(out) = policy.handle(dir, &buf[..n], now) {
                    if tx.send(&out).is_err() {
                        send_errors += 1;
                        policy.count_tx_error(dir);
                    }
                    tap(ctl, &out);
                }
            }
            if !any {
                break;
            }
            now = unix_now();
        }
        if last_stats.elapsed() >= std::time::Duration::from_millis(20) {
            last_stats = std::time::Instant::now();
            read_kernel(&ied, &net, &mut kernel, &mut policy);
        }
        hk.tick(ctl, &mut policy);
    }
    read_kernel(&ied, &net, &mut kernel, &mut policy);
    if send_errors > 0 {
        eprintln!("gander gateway: {send_errors} frames could not be sent (interface down or frame larger than the MTU)");
    }
    ctl.publish(&policy, false);
    Ok(policy)
}

/// Adds both sockets' kernel counters to `acc` and hands the totals to the policy's counters. A
/// read that fails leaves the totals as they were (the next read catches up: the kernel keeps
/// counting until it is read).
fn read_kernel(ied: &RawSocket, net: &RawSocket, acc: &mut KernelCounters, policy: &mut Policy) {
    if let Ok(s) = ied.take_stats() {
        acc.ied.add(s);
    }
    if let Ok(s) = net.take_stats() {
        acc.net.add(s);
    }
    policy.set_kernel_counters(*acc);
}
