//! Bytes on the wire, from the kernel's per-connection TCP counters.
//!
//! Linux keeps, per TCP connection, the payload octets sent and received (`tcpi_bytes_sent`,
//! `tcpi_bytes_received` of `struct tcp_info`, the RFC 4898 `HCDataOctetsOut`/`HCDataOctetsIn`
//! counters; Linux 4.19 and later). Every backend writes its records to the socket (GnuTLS
//! straight to the descriptor), so reading the counters after the handshake counts the TLS
//! records each side put on the wire, whatever the library, with no wrapper in the data path.
//!
//! What is counted is TCP payload: TLS record headers and every handshake message, not TCP/IP
//! headers. Retransmitted octets are subtracted; octets still queued in the socket and not yet
//! sent (`tcpi_notsent_bytes`) are added, so `sent` is what the application has written.
use serde::{Deserialize, Serialize};
use std::net::TcpStream;
use std::os::fd::AsRawFd;

/// Octets of TCP payload one end has sent and received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireBytes {
    /// Written by this end (sent or queued), retransmissions not counted twice.
    pub sent: u64,
    /// Received in order by this end's TCP.
    pub received: u64,
}

// Offsets in Linux's `struct tcp_info` (include/uapi/linux/tcp.h), a stable ABI that only grows
// at its end.
const OFF_NOTSENT: usize = 144; // __u32 tcpi_notsent_bytes
const OFF_BYTES_RECEIVED: usize = 128; // __u64 tcpi_bytes_received (4.1)
const OFF_BYTES_SENT: usize = 200; // __u64 tcpi_bytes_sent (4.19)
const OFF_BYTES_RETRANS: usize = 208; // __u64 tcpi_bytes_retrans (4.19)
const NEEDED: usize = OFF_BYTES_RETRANS + 8;

fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_ne_bytes(a)
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[off..off + 4]);
    u32::from_ne_bytes(a)
}

/// The counters of `tcp`, or `None` where the kernel does not report them (before 4.19, or
/// not a TCP socket).
pub fn tcp_bytes(tcp: &TcpStream) -> Option<WireBytes> {
    let mut buf = [0u8; 512];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is writable for `len` bytes and `len` points to its size; getsockopt writes
    // at most `len` bytes and stores the length it wrote. The descriptor is owned by `tcp`.
    let r = unsafe {
        libc::getsockopt(
            tcp.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r != 0 || (len as usize) < NEEDED {
        return None;
    }
    let b = &buf[..len as usize];
    let sent = u64_at(b, OFF_BYTES_SENT).saturating_sub(u64_at(b, OFF_BYTES_RETRANS))
        + u64::from(u32_at(b, OFF_NOTSENT));
    Some(WireBytes {
        sent,
        received: u64_at(b, OFF_BYTES_RECEIVED),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn counts_what_each_side_wrote() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        assert_eq!(tcp_bytes(&c), Some(WireBytes::default()));
        c.write_all(&[7u8; 1000]).unwrap();
        let mut buf = [0u8; 1000];
        s.read_exact(&mut buf).unwrap();
        s.write_all(&[1u8; 33]).unwrap();
        let mut b2 = [0u8; 33];
        c.read_exact(&mut b2).unwrap();
        assert_eq!(
            tcp_bytes(&c),
            Some(WireBytes {
                sent: 1000,
                received: 33
            })
        );
        assert_eq!(
            tcp_bytes(&s),
            Some(WireBytes {
                sent: 33,
                received: 1000
            })
        );
    }
}
