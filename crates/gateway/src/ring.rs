//! Memory-mapped AF_PACKET rings (`PACKET_RX_RING` / `PACKET_TX_RING`, `TPACKET_V2`): the
//! kernel writes received frames into a ring shared with the gateway and reads frames to send
//! from another, so a batch of frames costs no system call on receive and one `send` on
//! transmit, and no frame is copied into a buffer allocated for it.
//!
//! Why `TPACKET_V2` and not `TPACKET_V3`: a V3 ring hands frames to user space a *block* at a
//! time, and a block is handed over only when it is full or when its retire timer
//! (`tp_retire_blk_tov`, in milliseconds, 1 ms at the least) expires
//! (Documentation/networking/packet_mmap.rst; `prb_retire_rx_blk_timer_expired` in
//! net/packet/af_packet.c). At the 4 ms GOOSE rate every trip message would wait up to that
//! timer, ten times the gateway's whole 100 us budget. A V2 ring has one status word per frame
//! that the kernel flips to `TP_STATUS_USER` and wakes the reader for, so latency stays per
//! frame while a busy ring is still drained in a batch without system calls.
//!
//! Layout (packet_mmap.rst): `tp_block_nr` blocks of `tp_block_size` bytes, each holding
//! `tp_block_size / tp_frame_size` frames; a frame starts with a `struct tpacket2_hdr`
//! whose `tp_status` is the ownership word. Receive: the kernel sets `TP_STATUS_USER`, the
//! reader sets `TP_STATUS_KERNEL` when done. Transmit: the writer fills the frame data at
//! `TPACKET2_HDRLEN - sizeof(struct sockaddr_ll)` (32 bytes in), sets `tp_len` and
//! `TP_STATUS_SEND_REQUEST`, and calls `send`; the kernel sets `TP_STATUS_AVAILABLE` when the
//! frame has gone, or `TP_STATUS_WRONG_FORMAT` (with `PACKET_LOSS` on) when it refused it.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU32, Ordering};

pub(crate) const SOL_PACKET: libc::c_int = 263;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_TX_RING: libc::c_int = 13;
const PACKET_LOSS: libc::c_int = 14;
const PACKET_VNET_HDR: libc::c_int = 15;
/// `struct virtio_net_hdr` (include/uapi/linux/virtio_net.h): flags, gso_type, hdr_len,
/// gso_size, csum_start, csum_offset.
const VNET_HDR_LEN: usize = 10;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const TPACKET_V2: libc::c_int = 1;

const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
/// The frame's transport checksum was left to the device (packet(7)); see [`gander_wire::offload`].
const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const TP_STATUS_AVAILABLE: u32 = 0;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TP_STATUS_SENDING: u32 = 2;
const TP_STATUS_WRONG_FORMAT: u32 = 4;

/// `TPACKET_ALIGN(sizeof(struct tpacket2_hdr))`: where a transmitted frame's data starts.
const TX_DATA_OFFSET: usize = 32;

/// `struct tpacket2_hdr` (linux/if_packet.h).
#[repr(C)]
struct Tpacket2Hdr {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_sec: u32,
    tp_nsec: u32,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
    tp_padding: [u8; 4],
}

/// `struct tpacket_req` (linux/if_packet.h).
#[repr(C)]
struct TpacketReq {
    tp_block_size: u32,
    tp_block_nr: u32,
    tp_frame_size: u32,
    tp_frame_nr: u32,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

pub(crate) fn setopt<T>(fd: i32, level: i32, name: i32, v: &T) -> io::Result<()> {
    // SAFETY: v points to a live T of the size given; the kernel only reads it.
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

/// The size of one ring slot for frames up to `mtu` bytes of payload: the Ethernet header, two
/// VLAN tags, the `tpacket2_hdr` and the `sockaddr_ll` the kernel writes in front, rounded up
/// to a power of two (slots never straddle a block).
pub(crate) fn frame_size_for(mtu: u32) -> u32 {
    (mtu + 14 + 8 + 128).next_power_of_two().max(2048)
}

/// A shared mapping of one ring.
struct Mapping {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory shared with the kernel; every access to a slot goes
// through the slot's status word with acquire/release ordering, and each ring is used by one
// thread at a time (the ring owning it is not Sync).
unsafe impl Send for Mapping {}

impl Mapping {
    fn new(fd: i32, len: usize) -> io::Result<Self> {
        // SAFETY: a fresh shared mapping of the socket's ring; the kernel checks len against
        // the ring it set up and fails otherwise.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED,
                fd,
                0,
            )
        };
        let p = if p == libc::MAP_FAILED {
            // MAP_LOCKED needs RLIMIT_MEMLOCK room; without it the ring still works, only its
            // pages may be swapped out.
            // SAFETY: as above, without MAP_LOCKED.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            p
        } else {
            p
        };
        Ok(Mapping {
            base: p as *mut u8,
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: base/len is exactly the mapping made in new(); nothing borrows it any more
        // (slices handed out borrow the ring, which is being dropped).
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}

/// The status word of the slot at `hdr`, borrowed for as long as `_ring` (the mapping the
/// slot lies in).
fn status(_ring: &Mapping, hdr: *mut Tpacket2Hdr) -> &AtomicU32 {
    // SAFETY: hdr points to a slot header inside the live mapping `_ring` (16-byte
    // aligned: slots start at multiples of the frame size); tp_status is its first u32 and the
    // kernel updates it concurrently, so it is only accessed as an atomic. The borrow of `_ring`
    // keeps the mapping alive while the result is used.
    unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*hdr).tp_status)) }
}

/// A frame read from an [`RxRing`]; the slot is handed back to the kernel by
/// [`RxRing::release`].
pub(crate) struct RxFrame<'a> {
    /// The frame as on the wire (the VLAN tag the kernel moved to metadata put back).
    pub data: &'a [u8],
    /// The frame was longer than the slot and was cut: not forwarded.
    pub truncated: bool,
    /// When the kernel put the frame into the ring (CLOCK_REALTIME: the skb's receive time
    /// stamp, else the time of the copy; `tpacket_get_timestamp` in net/packet/af_packet.c).
    pub stamp: std::time::Duration,
}

/// A receive ring on one AF_PACKET socket.
pub(crate) struct RxRing {
    map: Mapping,
    frame_size: usize,
    frame_nr: usize,
    next: usize,
    /// Frame with its VLAN tag restored (reused, never reallocated after start).
    scratch: Vec<u8>,
}

impl RxRing {
    /// Sets up a `TPACKET_V2` receive ring of about `bytes` on socket `fd` (before bind is
    /// fine, and so is after) for frames of up to `mtu` payload bytes.
    pub(crate) fn new(fd: &OwnedFd, mtu: u32, bytes: usize) -> io::Result<Self> {
        let raw = fd.as_raw_fd();
        setopt(raw, SOL_PACKET, PACKET_VERSION, &TPACKET_V2)?;
        let frame_size = frame_size_for(mtu);
        let block_size = frame_size.max(1 << 16);
        let block_nr = (bytes / block_size as usize).max(4) as u32;
        let frames_per_block = block_size / frame_size;
        let req = TpacketReq {
            tp_block_size: block_size,
            tp_block_nr: block_nr,
            tp_frame_size: frame_size,
            tp_frame_nr: block_nr * frames_per_block,
        };
        setopt(raw, SOL_PACKET, PACKET_RX_RING, &req)?;
        let map = Mapping::new(raw, block_size as usize * block_nr as usize)?;
        Ok(RxRing {
            map,
            frame_size: frame_size as usize,
            frame_nr: req.tp_frame_nr as usize,
            next: 0,
            scratch: vec![0u8; frame_size as usize + 8],
        })
    }

    fn hdr(&self, i: usize) -> *mut Tpacket2Hdr {
        // Slots are contiguous: frame_size divides block_size, so frame i is at i * frame_size.
        // SAFETY: i < frame_nr, so the offset is inside the mapping.
        unsafe { self.map.base.add(i * self.frame_size) as *mut Tpacket2Hdr }
    }

    /// Whether the next slot holds a frame (no system call).
    pub(crate) fn ready(&self) -> bool {
        status(&self.map, self.hdr(self.next)).load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// The next received frame, if any. The caller must [`RxRing::release`] it before asking
    /// for the next one.
    pub(crate) fn peek(&mut self) -> Option<RxFrame<'_>> {
        let h = self.hdr(self.next);
        let st = status(&self.map, h).load(Ordering::Acquire);
        if st & TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the kernel handed this slot to us (TP_STATUS_USER, read with Acquire, so its
        // writes to the header and data are visible) and will not touch it until release().
        let (len, snap, mac, tci, tpid, sec, nsec) = unsafe {
            (
                (*h).tp_len as usize,
                (*h).tp_snaplen as usize,
                (*h).tp_mac as usize,
                (*h).tp_vlan_tci,
                (*h).tp_vlan_tpid,
                (*h).tp_sec,
                (*h).tp_nsec,
            )
        };
        let stamp = std::time::Duration::new(u64::from(sec), nsec.min(999_999_999));
        let snap = snap.min(self.frame_size.saturating_sub(mac));
        // SAFETY: tp_mac + tp_snaplen lies inside the slot (clamped above), which lies inside
        // the mapping (mapped writable); the slot is ours to read and change until release().
        let data: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut((h as *mut u8).add(mac), snap) };
        let truncated = snap < len;
        if st & TP_STATUS_CSUMNOTREADY != 0 && !truncated {
            // Sent with checksum offload by a peer on this host (veth, virtio): the field holds
            // only the pseudo-header sum. Do the device's work before the policy checks it.
            gander_wire::offload::complete_transport_checksum(data);
        }
        let data: &[u8] = data;
        if st & TP_STATUS_VLAN_VALID != 0 && data.len() >= 12 {
            // The NIC (or veth, or the receive path's skb_vlan_untag) moved the outer tag into
            // metadata; the policy must see the frame as it was on the wire.
            let tpid = if st & TP_STATUS_VLAN_TPID_VALID != 0 {
                tpid
            } else {
                0x8100
            };
            let n = data.len() + 4;
            if n > self.scratch.len() {
                return Some(RxFrame {
                    data,
                    truncated: true,
                    stamp,
                });
            }
            self.scratch[..12].copy_from_slice(&data[..12]);
            self.scratch[12..14].copy_from_slice(&tpid.to_be_bytes());
            self.scratch[14..16].copy_from_slice(&tci.to_be_bytes());
            self.scratch[16..n].copy_from_slice(&data[12..]);
            return Some(RxFrame {
                data: &self.scratch[..n],
                truncated,
                stamp,
            });
        }
        Some(RxFrame {
            data,
            truncated,
            stamp,
        })
    }

    /// Hands the current slot back to the kernel and moves on.
    pub(crate) fn release(&mut self) {
        status(&self.map, self.hdr(self.next)).store(TP_STATUS_KERNEL, Ordering::Release);
        self.next = (self.next + 1) % self.frame_nr;
    }
}

/// A transmit ring on one AF_PACKET socket bound to the outgoing interface.
pub struct TxRing {
    fd: OwnedFd,
    map: Mapping,
    frame_size: usize,
    frame_nr: usize,
    next: usize,
    queued: usize,
    /// Each slot starts with a `virtio_net_hdr` (`PACKET_VNET_HDR` was accepted).
    vnet: bool,
    /// Frames the kernel refused (`TP_STATUS_WRONG_FORMAT`) or that found the ring full.
    pub errors: u64,
}

/// What [`TxRing::push`] did with a frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Pushed {
    /// Queued; sent at the next [`TxRing::flush`].
    Queued,
    /// Larger than a slot or the ring stayed full: not sent.
    Refused,
}

impl TxRing {
    /// Opens a send-only AF_PACKET socket on interface `ifindex` (bound with protocol 0, so it
    /// receives nothing) with a `TPACKET_V2` transmit ring of `frames` slots. With
    /// `qdisc_bypass`, frames go straight to the driver (`PACKET_QDISC_BYPASS`): no queueing
    /// discipline, and no copy to the interface's packet taps.
    pub fn open(ifindex: i32, mtu: u32, frames: u32, qdisc_bypass: bool) -> io::Result<Self> {
        // SAFETY: plain socket call.
        let fd =
            cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: fd was just returned by socket() and is owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        setopt(raw, SOL_PACKET, PACKET_VERSION, &TPACKET_V2)?;
        setopt(raw, SOL_PACKET, PACKET_LOSS, &1i32)?;
        if qdisc_bypass {
            let _ = setopt(raw, SOL_PACKET, PACKET_QDISC_BYPASS, &1i32);
        }
        // A `virtio_net_hdr` before each frame lets the ring say how much of the frame to copy
        // into the socket buffer's linear head (`hdr_len`; `tpacket_snd`, net/packet/af_packet.c).
        // Without it only the 14-byte Ethernet header is copied and the rest is attached as
        // fragments of the ring's pages: every later header read (the receiving socket's BPF
        // filter, tc, a bridge, the IP stack) then takes the slow path for fragments, and a
        // veth hop into another namespace copies the fragments again (`skb_copy_ubufs`). A
        // NIC's receive path hands the next box linear headers too. Set before the ring, as the
        // kernel requires; on a kernel without it the ring works as before.
        let vnet = setopt(raw, SOL_PACKET, PACKET_VNET_HDR, &1i32).is_ok();
        let frame_size = frame_size_for(mtu + VNET_HDR_LEN as u32);
        let block_size = frame_size.max(1 << 16);
        let per_block = block_size / frame_size;
        let block_nr = frames.div_ceil(per_block).max(1);
        let req = TpacketReq {
            tp_block_size: block_size,
            tp_block_nr: block_nr,
            tp_frame_size: frame_size,
            tp_frame_nr: block_nr * per_block,
        };
        setopt(raw, SOL_PACKET, PACKET_TX_RING, &req)?;
        // SAFETY: zeroed sockaddr_ll is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = 0;
        sll.sll_ifindex = ifindex;
        // SAFETY: sll is a valid sockaddr_ll of the size given.
        cvt(unsafe {
            libc::bind(
                raw,
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        let map = Mapping::new(raw, block_size as usize * block_nr as usize)?;
        Ok(TxRing {
            fd,
            map,
            frame_size: frame_size as usize,
            frame_nr: req.tp_frame_nr as usize,
            next: 0,
            queued: 0,
            vnet,
            errors: 0,
        })
    }

    fn hdr(&self, i: usize) -> *mut Tpacket2Hdr {
        // SAFETY: i < frame_nr, so the offset is inside the mapping.
        unsafe { self.map.base.add(i * self.frame_size) as *mut Tpacket2Hdr }
    }

    /// Copies `frame` into the next free slot; it leaves at the next [`TxRing::flush`]. A full
    /// ring is flushed first; a frame that still finds no slot is refused (counted).
    pub fn push(&mut self, frame: &[u8]) -> Pushed {
        let vnet = if self.vnet { VNET_HDR_LEN } else { 0 };
        if frame.len() + vnet > self.frame_size - TX_DATA_OFFSET
            || frame.len() > usize::from(u16::MAX)
        {
            self.errors += 1;
            return Pushed::Refused;
        }
        let h = self.hdr(self.next);
        let mut st = status(&self.map, h).load(Ordering::Acquire);
        if st == TP_STATUS_SEND_REQUEST || st == TP_STATUS_SENDING {
            self.flush();
            for _ in 0..1000 {
                st = status(&self.map, h).load(Ordering::Acquire);
                if st != TP_STATUS_SEND_REQUEST && st != TP_STATUS_SENDING {
                    break;
                }
                std::hint::spin_loop();
            }
            if st == TP_STATUS_SEND_REQUEST || st == TP_STATUS_SENDING {
                self.errors += 1;
                return Pushed::Refused;
            }
        }
        if st == TP_STATUS_WRONG_FORMAT {
            // The frame sent from this slot one lap ago was refused by the kernel.
            self.errors += 1;
        }
        // SAFETY: the slot is AVAILABLE (or WRONG_FORMAT): the kernel does not touch it until
        // we set SEND_REQUEST; the virtio header (if any) and the data fit (checked above)
        // after the 32-byte slot header.
        unsafe {
            let mut data = (h as *mut u8).add(TX_DATA_OFFSET);
            if vnet > 0 {
                // No offload asked (flags 0, GSO_NONE); hdr_len (little-endian, as virtio
                // 1.0 and every little-endian host): the whole frame goes into the linear head.
                let mut v = [0u8; VNET_HDR_LEN];
                v[2..4].copy_from_slice(&(frame.len() as u16).to_le_bytes());
                std::ptr::copy_nonoverlapping(v.as_ptr(), data, VNET_HDR_LEN);
                data = data.add(VNET_HDR_LEN);
            }
            std::ptr::copy_nonoverlapping(frame.as_ptr(), data, frame.len());
            (*h).tp_len = (vnet + frame.len()) as u32;
        }
        fence(Ordering::Release);
        status(&self.map, h).store(TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.next = (self.next + 1) % self.frame_nr;
        self.queued += 1;
        Pushed::Queued
    }

    /// Whether frames leave with their bytes in the socket buffer's linear head
    /// (`PACKET_VNET_HDR` accepted by the kernel) rather than as fragments of the ring's pages.
    pub fn linear_heads(&self) -> bool {
        self.vnet
    }

    /// Frames queued and not yet flushed.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Asks the kernel to send every queued frame (one `send` for the batch).
    pub fn flush(&mut self) {
        if self.queued == 0 {
            return;
        }
        loop {
            // SAFETY: a zero-length send on a socket with a TX ring sends the ring's queued
            // frames (packet_mmap.rst); no user buffer is read.
            let r =
                unsafe { libc::send(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
            if r >= 0 {
                break;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                // The device queue is full: the frames stay queued for the next flush.
                io::ErrorKind::WouldBlock => break,
                _ => break,
            }
        }
        self.queued = 0;
    }

    /// Counts the slots the kernel refused since they were written, and marks them free.
    pub fn reap(&mut self) {
        for i in 0..self.frame_nr {
            let s = status(&self.map, self.hdr(i));
            if s.load(Ordering::Acquire) == TP_STATUS_WRONG_FORMAT {
                self.errors += 1;
                s.store(TP_STATUS_AVAILABLE, Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_sizes_hold_a_tagged_mtu_frame() {
        for mtu in [1500u32, 1522, 4000, 9000] {
            let s = frame_size_for(mtu) as usize;
            assert!(s.is_power_of_two());
            // The kernel writes tp_mac at most 32 + 20 + 16 (alignment) + 4 (tag room) in.
            assert!(s >= 32 + 20 + 16 + 4 + mtu as usize + 14 + 8, "{mtu}: {s}");
        }
        assert_eq!(std::mem::size_of::<Tpacket2Hdr>(), 32);
        assert_eq!(std::mem::size_of::<TpacketReq>(), 16);
    }
}
