//! Recognising a fragment in an Ethernet frame: IPv4 (RFC 791 §3.1: MF flag or a non-zero
//! Fragment Offset) and IPv6 (RFC 8200 §4.5: a Fragment header after the unfragmentable
//! extension headers).

use super::finding::DatagramId;
use gander_wire::ethernet::{Frame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use gander_wire::ip::{Ipv4Packet, IPV4_MIN_HEADER_LEN};
use gander_wire::ipv6::{next_header, HEADER_LEN as IPV6_HEADER_LEN};
use std::net::IpAddr;

/// IPv4 header fields (RFC 791 §3.1), from the first octet of the header.
pub(super) mod v4 {
    /// Total Length.
    pub(crate) const TOTAL_LEN: usize = 2;
    /// Identification.
    pub(crate) const ID: usize = 4;
    /// Flags (reserved, DF, MF) and Fragment Offset in 8-octet units.
    pub(crate) const FLAGS_FRAG: usize = 6;
    /// Header Checksum.
    pub(crate) const CHECKSUM: usize = 10;
    /// Don't Fragment flag.
    pub(crate) const DF: u16 = 0x4000;
    /// More Fragments flag.
    pub(crate) const MF: u16 = 0x2000;
    /// Fragment Offset mask.
    pub(crate) const OFFSET: u16 = 0x1fff;
}

/// IPv6 fields (RFC 8200 §3, §4.5).
pub(super) mod v6 {
    /// Payload Length in the fixed header.
    pub(crate) const PAYLOAD_LEN: usize = 4;
    /// Next Header in the fixed header.
    pub(crate) const NEXT_HEADER: usize = 6;
    /// Length of the Fragment header.
    pub(crate) const FRAG_HEADER_LEN: usize = 8;
    /// Fragment Offset (13 bits, in 8-octet units, high bits) and M flag (low bit).
    pub(crate) const FRAG_OFFSET_M: usize = 2;
    /// Identification in the Fragment header.
    pub(crate) const FRAG_ID: usize = 4;
}

/// How the header of the first fragment is turned into the reassembled datagram's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patch {
    /// IPv4 at this offset of the frame.
    V4 {
        /// Offset of the IPv4 header.
        ip_offset: usize,
    },
    /// IPv6 at `ip_offset`; the octet at `nh_at` (which named the Fragment header) becomes
    /// `next`.
    V6 {
        /// Offset of the IPv6 header.
        ip_offset: usize,
        /// Offset of the Next Header octet that pointed to the Fragment header.
        nh_at: usize,
        /// The Fragment header's Next Header.
        next: u8,
    },
}

/// The reassembly key: RFC 791 §3.2 (source, destination, protocol, identification) and
/// RFC 8200 §4.5 (source, destination, identification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    V4 {
        src: [u8; 4],
        dst: [u8; 4],
        protocol: u8,
        id: u16,
    },
    V6 {
        src: [u8; 16],
        dst: [u8; 16],
        id: u32,
    },
}

impl Key {
    pub(crate) fn id(&self) -> DatagramId {
        match *self {
            Key::V4 { src, dst, id, .. } => DatagramId {
                src: IpAddr::from(src),
                dst: IpAddr::from(dst),
                id: id as u32,
            },
            Key::V6 { src, dst, id } => DatagramId {
                src: IpAddr::from(src),
                dst: IpAddr::from(dst),
                id,
            },
        }
    }
}

/// One fragment found in a frame.
#[derive(Debug, Clone)]
pub(crate) struct Fragment<'a> {
    pub(crate) key: Key,
    /// Offset of the fragment's data in the datagram's fragmentable part.
    pub(crate) offset: u32,
    /// More fragments follow.
    pub(crate) more: bool,
    /// The fragment's data.
    pub(crate) data: &'a [u8],
    /// The frame up to the fragmentable part (Ethernet, IP header, unfragmentable IPv6
    /// extension headers): the header of the reassembled frame, if this is the first fragment.
    pub(crate) header: &'a [u8],
    pub(crate) patch: Patch,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The fragment `frame` carries, `None` if it carries none (or is not well-formed enough to
/// be one: the frame's own classification reports that).
pub(crate) fn find(frame: &[u8]) -> Option<Fragment<'_>> {
    let eth = Frame::new_checked(frame).ok()?;
    let off = eth.payload_offset();
    match eth.ethertype() {
        ETHERTYPE_IPV4 => find_v4(frame, off),
        ETHERTYPE_IPV6 => find_v6(frame, off),
        _ => None,
    }
}

fn find_v4(frame: &[u8], off: usize) -> Option<Fragment<'_>> {
    let p = Ipv4Packet::new_checked(frame.get(off..)?).ok()?;
    if !p.is_fragment() || !p.verify_checksum() {
        return None;
    }
    let ip = &frame[off..];
    let hl = p.header_len();
    let total = p.total_len() as usize;
    let ff = be16(ip, v4::FLAGS_FRAG);
    let src = p.src_addr();
    let dst = p.dst_addr();
    Some(Fragment {
        key: Key::V4 {
            src,
            dst,
            protocol: p.protocol(),
            id: be16(ip, v4::ID),
        },
        offset: (ff & v4::OFFSET) as u32 * 8,
        more: ff & v4::MF != 0,
        data: &ip[hl..total],
        header: &frame[..off + hl.max(IPV4_MIN_HEADER_LEN)],
        patch: Patch::V4 { ip_offset: off },
    })
}

fn find_v6(frame: &[u8], off: usize) -> Option<Fragment<'_>> {
    let ip = frame.get(off..)?;
    if ip.len() < IPV6_HEADER_LEN || ip[0] >> 4 != 6 {
        return None;
    }
    let end = IPV6_HEADER_LEN + be16(ip, v6::PAYLOAD_LEN) as usize;
    if end > ip.len() {
        return None;
    }
    let mut next = ip[v6::NEXT_HEADER];
    let mut nh_at = v6::NEXT_HEADER;
    let mut at = IPV6_HEADER_LEN;
    loop {
        let len = match next {
            next_header::HOP_BY_HOP | next_header::ROUTING | next_header::DEST_OPTS => {
                (*ip.get(at + 1)? as usize + 1) * 8
            }
            next_header::AUTH => (*ip.get(at + 1)? as usize + 2) * 4,
            next_header::FRAGMENT => break,
            _ => return None,
        };
        if at + len > end {
            return None;
        }
        next = ip[at];
        nh_at = at;
        at += len;
    }
    let fh = ip
        .get(at..at + v6::FRAG_HEADER_LEN)
        .filter(|_| at + v6::FRAG_HEADER_LEN <= end)?;
    let om = be16(fh, v6::FRAG_OFFSET_M);
    let id = u32::from_be_bytes([
        fh[v6::FRAG_ID],
        fh[v6::FRAG_ID + 1],
        fh[v6::FRAG_ID + 2],
        fh[v6::FRAG_ID + 3],
    ]);
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src.copy_from_slice(&ip[8..24]);
    dst.copy_from_slice(&ip[24..40]);
    Some(Fragment {
        key: Key::V6 { src, dst, id },
        offset: (om & 0xfff8) as u32,
        more: om & 1 != 0,
        data: &ip[at + v6::FRAG_HEADER_LEN..end],
        header: &frame[..off + at],
        patch: Patch::V6 {
            ip_offset: off,
            nh_at: off + nh_at,
            next: fh[0],
        },
    })
}

/// What a frame's fragment is part of, for a caller that keeps the fragments of a datagram
/// together (`gander frame protect`, which protects a fragmented R-GOOSE/R-SV datagram whole
/// and sends it on in fragments no longer than the publisher's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentOf {
    /// The datagram (source, destination, Identification).
    pub datagram: DatagramId,
    /// Offset of the fragment's data in the datagram's fragmentable part, octets.
    pub offset: u32,
    /// More fragments follow.
    pub more: bool,
    /// The fragment's IP packet length (IPv4 Total Length; IPv6 40 + Payload Length).
    pub ip_len: usize,
}

/// The fragment `frame` carries, by the reassembler's own rules; `None` if none.
pub fn fragment_of(frame: &[u8]) -> Option<FragmentOf> {
    let f = find(frame)?;
    let ip = match f.patch {
        Patch::V4 { ip_offset } | Patch::V6 { ip_offset, .. } => ip_offset,
    };
    let h = frame.get(ip..ip + 6)?;
    let ip_len = match f.patch {
        Patch::V4 { .. } => usize::from(be16(h, v4::TOTAL_LEN)),
        Patch::V6 { .. } => IPV6_HEADER_LEN + usize::from(be16(h, v6::PAYLOAD_LEN)),
    };
    Some(FragmentOf {
        datagram: f.key.id(),
        offset: f.offset,
        more: f.more,
        ip_len,
    })
}
