//! A receive-only tap on one interface through the `l2` driver's socket and `TPACKET_V2`
//! receive ring ([`crate::ring`]): for readers that only watch the wire, such as
//! `gander audit --interface` on a mirror (SPAN) port. Frames reach the reader exactly as the
//! gateway's policy sees them: the 802.1Q tag the NIC moved into metadata put back, a transport
//! checksum left to the device completed, the kernel's receive time stamp.
//!
//! Unlike the gateway's sockets, a tap also sees the frames the host itself sends (it clears
//! `PACKET_IGNORE_OUTGOING`, packet(7)), as tcpdump does: an audit on a publisher's own host
//! sees its publications.
//!
//! Loss: a frame the kernel could not put into a full ring is counted in the socket's
//! `PACKET_STATISTICS` `tp_drops` (packet(7); `tpacket_rcv` in net/packet/af_packet.c counts
//! it when no slot is free), read with [`RingTap::take_stats`]. A reader that lost frames must
//! say so; the counters are how it knows.

use crate::af_packet::RawSocket;
use crate::policy::SocketCounters;
use crate::ring::{setopt, RxRing, SOL_PACKET};
use std::io;

const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// The receive ring's default size: 64 MiB holds about 30 000 slots of 2 KiB, a tenth of a
/// second of a 300 000 frames/s burst, or 0.8 s of the process-bus load (8 SV streams at
/// 4800 frames/s plus GOOSE) should the reader be descheduled.
pub const DEFAULT_RING_BYTES: usize = 64 << 20;

/// Frames handed over per [`RingTap::drain`] before the caller gets control back.
pub const BATCH: usize = 256;

/// One frame of a [`RingTap`].
#[derive(Debug)]
pub struct TapFrame<'a> {
    /// The Ethernet frame as on the wire.
    pub data: &'a [u8],
    /// Kernel receive time, nanoseconds since the Unix epoch (CLOCK_REALTIME).
    pub ts_ns: u64,
    /// The frame was longer than the ring slot (or the receive buffer) and was cut.
    pub truncated: bool,
}

/// A promiscuous receive-only socket with a memory-mapped ring (or, where the kernel refuses
/// a ring, one `recvmsg` per frame).
#[derive(Debug)]
pub struct RingTap {
    sock: RawSocket,
    ring: Option<RxRingBox>,
    buf: Vec<u8>,
}

/// `RxRing` is crate-private and not `Debug`; this keeps [`RingTap`] printable.
struct RxRingBox(RxRing);

impl std::fmt::Debug for RxRingBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RxRing")
    }
}

impl RingTap {
    /// Opens a tap on `ifname` (CAP_NET_RAW) with a receive ring of about `ring_bytes`.
    pub fn open(ifname: &str, ring_bytes: usize) -> io::Result<Self> {
        let (sock, ring) = RawSocket::open_with(ifname, None, Some(ring_bytes))?;
        // A watcher wants the host's own frames too; a kernel without the option (before
        // 4.20) never ignored them.
        let _ = setopt(sock.fd(), SOL_PACKET, PACKET_IGNORE_OUTGOING, &0i32);
        if ring.is_none() {
            // Without a ring the receive time comes as a control message.
            sock.enable_timestamps()?;
        }
        Ok(RingTap {
            sock,
            ring: ring.map(RxRingBox),
            buf: vec![0u8; 65536 + 4],
        })
    }

    /// Whether frames come through the memory-mapped ring (`false`: one system call each).
    pub fn has_ring(&self) -> bool {
        self.ring.is_some()
    }

    /// Waits up to `timeout_ms` for a frame: ready, idle, or the socket's error (the
    /// interface went down, or away), taken so that the next wait waits again.
    pub fn wait(&self, timeout_ms: i32) -> io::Result<crate::driver::Polled> {
        if let Some(r) = &self.ring {
            if r.0.ready() {
                return Ok(crate::driver::Polled::Readable);
            }
        }
        crate::driver::poll_one(self.sock.fd(), timeout_ms)
    }

    /// Hands up to `max` waiting frames to `f`, in arrival order, without blocking; returns
    /// how many.
    pub fn drain(&mut self, max: usize, mut f: impl FnMut(TapFrame<'_>)) -> io::Result<usize> {
        let mut n = 0;
        match &mut self.ring {
            Some(RxRingBox(r)) => {
                while n < max {
                    let Some(fr) = r.peek() else {
                        break;
                    };
                    f(TapFrame {
                        data: fr.data,
                        ts_ns: u64::try_from(fr.stamp.as_nanos()).unwrap_or(u64::MAX),
                        truncated: fr.truncated,
                    });
                    r.release();
                    n += 1;
                }
            }
            None => {
                while n < max {
                    let Some((len, ts)) = self.sock.recv_ts(&mut self.buf, true)? else {
                        break;
                    };
                    let ts = ts
                        .unwrap_or_else(std::time::SystemTime::now)
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
                        .unwrap_or(0);
                    let cap = self.buf.len() - 4;
                    f(TapFrame {
                        data: &self.buf[..len],
                        ts_ns: ts,
                        truncated: len >= cap,
                    });
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// The kernel's counters since the previous call ([`RawSocket::take_stats`]): frames that
    /// reached the socket and frames dropped for want of a free slot.
    pub fn take_stats(&self) -> io::Result<SocketCounters> {
        self.sock.take_stats()
    }

    /// The socket's file descriptor (for poll).
    pub fn fd(&self) -> i32 {
        self.sock.fd()
    }
}
