//! Splitting an IP datagram into fragments (IPv4: RFC 791 §3.2 "Fragmentation and
//! Reassembly"; IPv6: RFC 8200 §4.5, a Fragment header after the fixed header).
//!
//! `gander frame protect` needs it for a capture whose R-GOOSE or R-SV datagrams were sent in
//! fragments (an R-SV SPDU of several ASDUs is often longer than the MTU): the datagram is
//! reassembled, protected, and sent on as the publisher sent it, in fragments no longer than
//! its own, since the path it was captured on carried no longer ones. The inverse, reassembly,
//! is `gander-capture`'s.

use crate::ethernet::{Frame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use crate::ip::checksum;
use crate::{Error, Result};

/// IPv6 Next Header value of the Fragment header (RFC 8200 §4.5).
const IPV6_FRAGMENT: u8 = 44;
/// IPv4 More Fragments flag (RFC 791 §3.1).
const MF: u16 = 0x2000;
/// IPv4 Don't Fragment flag.
const DF: u16 = 0x4000;

/// Splits the Ethernet frame `frame` (IPv4 or IPv6, one whole datagram, behind any VLAN
/// tags) into frames whose IP packets are at most `max_ip_len` octets: the frame itself when
/// it fits. IPv4 fragments keep the header (options copied into every fragment, as RFC 791
/// allows for the ones it marks copied; gander's frames carry none) and Identification, with
/// DF cleared, MF and Fragment Offset set and the checksum recomputed. IPv6 fragments get a
/// Fragment header with `id` after the fixed header; a datagram with extension headers is
/// refused (which of them are unfragmentable would need walking; R-GOOSE/R-SV use none).
///
/// # Errors
/// [`Error::Truncated`] or [`Error::BadLength`] for a frame that is not one whole IPv4/IPv6
/// datagram; [`Error::WrongEtherType`]; [`Error::TooLarge`] when `max_ip_len` leaves no room
/// for eight octets of data per fragment.
pub fn fragment(frame: &[u8], max_ip_len: usize, id: u32) -> Result<Vec<Vec<u8>>> {
    let eth = Frame::new_checked(frame)?;
    let ip = eth.payload_offset();
    match eth.ethertype() {
        ETHERTYPE_IPV4 => fragment_v4(frame, ip, max_ip_len),
        ETHERTYPE_IPV6 => fragment_v6(frame, ip, max_ip_len, id),
        other => Err(Error::WrongEtherType(other)),
    }
}

/// The data octets per fragment behind a header of `header` octets: a multiple of eight.
fn per_fragment(max_ip_len: usize, header: usize) -> Result<usize> {
    let n = max_ip_len.saturating_sub(header) / 8 * 8;
    if n == 0 {
        return Err(Error::TooLarge {
            what: "IP header for the fragment size",
        });
    }
    Ok(n)
}

fn need(frame: &[u8], n: usize, what: &'static str) -> Result<()> {
    if frame.len() < n {
        return Err(Error::Truncated {
            what,
            need: n,
            have: frame.len(),
        });
    }
    Ok(())
}

fn fragment_v4(frame: &[u8], ip: usize, max_ip_len: usize) -> Result<Vec<Vec<u8>>> {
    need(frame, ip + 20, "IPv4 header")?;
    let hl = usize::from(frame[ip] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([frame[ip + 2], frame[ip + 3]]));
    let flags = u16::from_be_bytes([frame[ip + 6], frame[ip + 7]]);
    if frame[ip] >> 4 != 4 || hl < 20 || total < hl || flags & (MF | 0x1fff) != 0 {
        return Err(Error::BadLength {
            what: "IPv4 datagram to fragment",
            value: total,
        });
    }
    need(frame, ip + total, "IPv4 datagram")?;
    if total <= max_ip_len {
        return Ok(vec![frame[..ip + total].to_vec()]);
    }
    let step = per_fragment(max_ip_len, hl)?;
    let data = &frame[ip + hl..ip + total];
    let mut out = Vec::with_capacity(data.len().div_ceil(step));
    for (i, chunk) in data.chunks(step).enumerate() {
        let offset = i * step;
        let more = offset + chunk.len() < data.len();
        let mut f = Vec::with_capacity(ip + hl + chunk.len());
        f.extend_from_slice(&frame[..ip + hl]);
        f.extend_from_slice(chunk);
        let h = &mut f[ip..ip + hl];
        h[2..4].copy_from_slice(&((hl + chunk.len()) as u16).to_be_bytes());
        let ff = (flags & !DF) | if more { MF } else { 0 } | (offset / 8) as u16;
        h[6..8].copy_from_slice(&ff.to_be_bytes());
        h[10..12].fill(0);
        let c = checksum(h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        out.push(f);
    }
    Ok(out)
}

fn fragment_v6(frame: &[u8], ip: usize, max_ip_len: usize, id: u32) -> Result<Vec<Vec<u8>>> {
    need(frame, ip + 40, "IPv6 header")?;
    let payload = usize::from(u16::from_be_bytes([frame[ip + 4], frame[ip + 5]]));
    let next = frame[ip + 6];
    need(frame, ip + 40 + payload, "IPv6 datagram")?;
    if frame[ip] >> 4 != 6 {
        return Err(Error::BadLength {
            what: "IPv6 datagram to fragment",
            value: payload,
        });
    }
    if 40 + payload <= max_ip_len {
        return Ok(vec![frame[..ip + 40 + payload].to_vec()]);
    }
    // Only a datagram whose fixed header is followed by its upper-layer header (no extension
    // headers to sort into unfragmentable and fragmentable parts).
    if !matches!(next, 6 | 17 | 58) {
        return Err(Error::BadLength {
            what: "IPv6 datagram with extension headers to fragment",
            value: usize::from(next),
        });
    }
    let step = per_fragment(max_ip_len, 40 + 8)?;
    let data = &frame[ip + 40..ip + 40 + payload];
    let mut out = Vec::with_capacity(data.len().div_ceil(step));
    for (i, chunk) in data.chunks(step).enumerate() {
        let offset = i * step;
        let more = offset + chunk.len() < data.len();
        let mut f = Vec::with_capacity(ip + 48 + chunk.len());
        f.extend_from_slice(&frame[..ip + 40]);
        f[ip + 4..ip + 6].copy_from_slice(&((8 + chunk.len()) as u16).to_be_bytes());
        f[ip + 6] = IPV6_FRAGMENT;
        f.push(next);
        f.push(0);
        f.extend_from_slice(&((offset as u16) | u16::from(more)).to_be_bytes());
        f.extend_from_slice(&id.to_be_bytes());
        f.extend_from_slice(chunk);
        out.push(f);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4_frame(payload_len: usize) -> Vec<u8> {
        let mut f = vec![1, 0, 0x5e, 0, 1, 4, 2, 2, 2, 2, 2, 2, 0x08, 0x00];
        let total = 20 + payload_len;
        let mut h = vec![
            0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 16, 17, 0, 0, 10, 0, 0, 1, 224, 0, 1, 4,
        ];
        h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        let c = checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend(h);
        f.extend((0..payload_len).map(|i| i as u8));
        f
    }

    /// A 2,258-octet UDP datagram (robidev/iec61850-dissector's iec90-5-samples.pcap sends
    /// such R-SV datagrams in a 1,500-octet and an 806-octet fragment): the same split, every
    /// header checksum valid, the data in order, DF cleared.
    #[test]
    fn ipv4_splits_as_the_publisher_did() {
        let f = v4_frame(2266);
        let parts = fragment(&f, 1500, 0).unwrap();
        let lens: Vec<_> = parts.iter().map(|p| p.len() - 14).collect();
        assert_eq!(lens, [1500, 806]);
        let mut data = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            let h = &p[14..34];
            assert_eq!(checksum(h), 0, "fragment {i}");
            let ff = u16::from_be_bytes([h[6], h[7]]);
            assert_eq!(ff & DF, 0);
            assert_eq!(ff & MF != 0, i == 0);
            assert_eq!(usize::from(ff & 0x1fff) * 8, data.len());
            assert_eq!(&h[4..6], &[0x12, 0x34]);
            data.extend_from_slice(&p[34..]);
        }
        assert_eq!(data, &f[34..]);
        // A datagram that fits is the frame itself; a size that leaves no data is an error.
        assert_eq!(fragment(&f, 3000, 0).unwrap(), vec![f.clone()]);
        assert!(fragment(&f, 27, 0).is_err());
        // A fragment is not a datagram to split.
        assert!(fragment(&parts[0], 600, 0).is_err());
    }

    #[test]
    fn ipv6_gets_a_fragment_header() {
        let mut f = vec![0x33, 0x33, 0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 0x86, 0xdd];
        let payload = 3000usize;
        f.extend([0x60, 0, 0, 0]);
        f.extend((payload as u16).to_be_bytes());
        f.extend([17, 64]);
        f.extend([0xfe; 32]);
        f.extend((0..payload).map(|i| (i * 7) as u8));
        let parts = fragment(&f, 1280, 0xabcd).unwrap();
        let mut data = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            let ip = &p[14..];
            assert!(ip.len() <= 1280);
            assert_eq!(ip[6], IPV6_FRAGMENT);
            assert_eq!(
                usize::from(u16::from_be_bytes([ip[4], ip[5]])),
                ip.len() - 40
            );
            let fh = &ip[40..48];
            assert_eq!(fh[0], 17);
            let om = u16::from_be_bytes([fh[2], fh[3]]);
            assert_eq!(usize::from(om & !7), data.len(), "fragment {i}");
            assert_eq!(om & 1 == 1, i + 1 < parts.len());
            assert_eq!(&fh[4..], &0xabcdu32.to_be_bytes());
            data.extend_from_slice(&ip[48..]);
        }
        assert_eq!(data, &f[54..]);
    }
}
