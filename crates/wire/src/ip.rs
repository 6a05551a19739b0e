//! IPv4 (RFC 791) and UDP (RFC 768), as far as R-GOOSE and R-SV need them.
//!
//! IEC 61850-90-5 carries its session PDUs in UDP datagrams. gander has to find that payload
//! in a captured Ethernet frame, and, after protecting or stripping a payload (which changes
//! its size), rebuild the frame with correct IPv4 total length, header checksum, UDP length
//! and UDP checksum (RFC 1071 one's-complement sum). IPv6 lives in [`crate::ipv6`].

use crate::ethernet::{self, EthernetRepr, Frame};
use crate::{Codec, Error, Result};
use core::ops::Range;

/// IP protocol number of UDP (IANA).
pub const PROTOCOL_UDP: u8 = 17;
/// Length of an IPv4 header without options.
pub const IPV4_MIN_HEADER_LEN: usize = 20;
/// Length of the UDP header.
pub const UDP_HEADER_LEN: usize = 8;
/// Default UDP port of R-GOOSE/R-SV (IEC 61850-90-5 uses ISO-TSAP port 102).
pub const RGOOSE_PORT: u16 = 102;

/// An IPv4 address.
pub type Ipv4Address = [u8; 4];

/// Field positions of the IPv4 header (RFC 791 3.1, "Internet Header Format"), from its first
/// octet, and of the UDP header (RFC 768, "Format"), from the first UDP octet.
mod field {
    use core::ops::Range;
    /// Version (high nibble) and IHL in 32-bit words (low nibble) (RFC 791 3.1).
    pub(super) const VER_IHL: usize = 0;
    /// Type of Service (RFC 791 3.1; DSCP/ECN since RFC 2474/3168).
    pub(super) const TOS: usize = 1;
    /// Total Length: header and data, in octets (RFC 791 3.1).
    pub(super) const TOTAL_LEN: Range<usize> = 2..4;
    /// Identification (RFC 791 3.1).
    pub(super) const IDENTIFICATION: Range<usize> = 4..6;
    /// Flags (3 bits: reserved, DF, MF) and Fragment Offset (RFC 791 3.1).
    pub(super) const FLAGS_FRAG: Range<usize> = 6..8;
    /// Time to Live (RFC 791 3.1).
    pub(super) const TTL: usize = 8;
    /// Protocol (RFC 791 3.1; IANA numbers).
    pub(super) const PROTOCOL: usize = 9;
    /// Header Checksum (RFC 791 3.1).
    pub(super) const CHECKSUM: Range<usize> = 10..12;
    /// Source Address (RFC 791 3.1).
    pub(super) const SRC: Range<usize> = 12..16;
    /// Destination Address (RFC 791 3.1).
    pub(super) const DST: Range<usize> = 16..20;

    /// UDP Source Port (RFC 768).
    pub(super) const UDP_SRC_PORT: Range<usize> = 0..2;
    /// UDP Destination Port (RFC 768).
    pub(super) const UDP_DST_PORT: Range<usize> = 2..4;
    /// UDP Length: header and data, in octets (RFC 768).
    pub(super) const UDP_LEN: Range<usize> = 4..6;
    /// UDP Checksum over pseudo-header, header and data (RFC 768).
    pub(super) const UDP_CHECKSUM: Range<usize> = 6..8;
}

fn be16(b: &[u8], r: Range<usize>) -> u16 {
    u16::from_be_bytes([b[r.start], b[r.start + 1]])
}

/// The RFC 1071 one's-complement sum of `data` (odd length padded with a zero octet), folded
/// to 16 bits but not complemented.
pub fn ones_complement_sum(acc: u32, data: &[u8]) -> u32 {
    // Summed as 32-bit big-endian words into 64 bits and folded once at the end: RFC 1071
    // §2(B) (the sum does not depend on when carries are added back) and §2(C) (wider words
    // sum to the same 16-bit result after folding); a frame is far too short to overflow.
    let mut wide = acc as u64;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        wide += u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as u64;
    }
    let mut rest = words.remainder().chunks_exact(2);
    for c in &mut rest {
        wide += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = rest.remainder() {
        wide += (*last as u64) << 8;
    }
    while wide > 0xffff {
        wide = (wide & 0xffff) + (wide >> 16);
    }
    wide as u32
}

/// The Internet checksum (RFC 1071) of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    !(ones_complement_sum(0, data) as u16)
}

/// The UDP checksum over the IPv4 pseudo-header and `udp` (header with a zero checksum field,
/// plus payload), RFC 768. A computed zero is sent as 0xFFFF, since zero means "no checksum".
pub fn udp_checksum(src: Ipv4Address, dst: Ipv4Address, udp: &[u8]) -> u16 {
    match !(udp_sum(src, dst, udp) as u16) {
        0 => 0xffff,
        c => c,
    }
}

/// The folded one's-complement sum over the IPv4 pseudo-header and `udp` as it is.
fn udp_sum(src: Ipv4Address, dst: Ipv4Address, udp: &[u8]) -> u32 {
    let mut acc = ones_complement_sum(0, &src);
    acc = ones_complement_sum(acc, &dst);
    acc += PROTOCOL_UDP as u32;
    acc += (udp.len() as u32) & 0xffff;
    ones_complement_sum(acc, udp)
}

/// Whether `udp` (header with its checksum field as received, plus payload) carries a right,
/// non-zero UDP checksum: the sum over pseudo-header, header and data, the checksum included,
/// is all ones (RFC 1071 §1(2), "checking"). The same answer as recomputing with the field
/// zeroed and comparing (0xFFFF standing for a computed zero), without copying the datagram.
/// A zero field (no checksum, RFC 768) is not a right one: the caller decides what it means.
pub fn udp_checksum_verifies(src: Ipv4Address, dst: Ipv4Address, udp: &[u8]) -> bool {
    udp.get(6..8).is_some_and(|c| c != [0, 0]) && udp_sum(src, dst, udp) == 0xffff
}

/// A zero-copy view of an IPv4 packet.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Wrap a buffer and check version, header length and total length.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Ipv4Packet { buffer };
        p.check_len()?;
        Ok(p)
    }

    /// Check that the header and the `total_len` bytes it announces are present
    /// (RFC 791 3.1); after success no accessor panics. Bytes beyond total length (Ethernet
    /// padding) are allowed and ignored.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < IPV4_MIN_HEADER_LEN {
            return Err(Error::Truncated {
                what: "IPv4 header",
                need: IPV4_MIN_HEADER_LEN,
                have: b.len(),
            });
        }
        if b[field::VER_IHL] >> 4 != 4 {
            return Err(Error::NotUdp("IP version is not 4"));
        }
        let hl = self.header_len();
        if hl < IPV4_MIN_HEADER_LEN {
            return Err(Error::BadLength {
                what: "IPv4 IHL",
                value: hl,
            });
        }
        let total = self.total_len() as usize;
        if total < hl {
            return Err(Error::BadLength {
                what: "IPv4 total length",
                value: total,
            });
        }
        if total > b.len() {
            return Err(Error::Truncated {
                what: "IPv4 packet",
                need: total,
                have: b.len(),
            });
        }
        Ok(())
    }

    /// Header length in bytes (IHL x 4; options included).
    pub fn header_len(&self) -> usize {
        ((self.buffer.as_ref()[field::VER_IHL] & 0x0f) as usize) * 4
    }

    /// Total length field.
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::TOTAL_LEN)
    }

    /// Whether this is a fragment (MF set or non-zero offset, RFC 791 3.1).
    pub fn is_fragment(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLAGS_FRAG) & 0x3fff != 0
    }

    /// Protocol field.
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }

    /// Header checksum field.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Whether the header checksum verifies (sum over the header is 0xFFFF, RFC 1071).
    pub fn verify_checksum(&self) -> bool {
        checksum(&self.buffer.as_ref()[..self.header_len()]) == 0
    }

    /// Source address.
    pub fn src_addr(&self) -> Ipv4Address {
        let mut a = [0; 4];
        a.copy_from_slice(&self.buffer.as_ref()[field::SRC]);
        a
    }

    /// Destination address.
    pub fn dst_addr(&self) -> Ipv4Address {
        let mut a = [0; 4];
        a.copy_from_slice(&self.buffer.as_ref()[field::DST]);
        a
    }

    /// The payload, bounded by the total length.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..self.total_len() as usize]
    }
}

/// A zero-copy view of a UDP datagram.
#[derive(Debug, Clone)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Wrap a buffer and check that the header and announced length fit.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = UdpPacket { buffer };
        let b = p.buffer.as_ref();
        if b.len() < UDP_HEADER_LEN {
            return Err(Error::Truncated {
                what: "UDP header",
                need: UDP_HEADER_LEN,
                have: b.len(),
            });
        }
        let len = p.len() as usize;
        if len < UDP_HEADER_LEN {
            return Err(Error::BadLength {
                what: "UDP length",
                value: len,
            });
        }
        if len > b.len() {
            return Err(Error::Truncated {
                what: "UDP datagram",
                need: len,
                have: b.len(),
            });
        }
        Ok(p)
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::UDP_SRC_PORT)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::UDP_DST_PORT)
    }

    /// Length field (header plus payload).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::UDP_LEN)
    }

    /// Checksum field (0: not computed by the sender).
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::UDP_CHECKSUM)
    }

    /// The payload, bounded by the length field.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[UDP_HEADER_LEN..self.len() as usize]
    }
}

/// Where the pieces of an Ethernet/IPv4/UDP frame are, and its addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpLocation {
    /// Ethernet header (VLAN tag and addresses) in front of the IPv4 header.
    pub eth: EthernetRepr,
    /// Offset of the IPv4 header.
    pub ip_offset: usize,
    /// Offset of the UDP header.
    pub udp_offset: usize,
    /// Absolute range of the UDP payload.
    pub payload: Range<usize>,
    /// IPv4 source address.
    pub src_addr: Ipv4Address,
    /// IPv4 destination address.
    pub dst_addr: Ipv4Address,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// Whether the IPv4 header checksum verified.
    pub ip_checksum_ok: bool,
    /// Whether the UDP checksum verified (true when the sender sent none, RFC 768).
    pub udp_checksum_ok: bool,
}

/// Where the UDP datagram of an IPv4 packet is, whatever carries the packet (an Ethernet frame,
/// a netfilter queue message, nothing): offsets are absolute in the buffer given to
/// [`locate_udp4`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Udp4Location {
    /// Offset of the IPv4 header.
    pub ip_offset: usize,
    /// Offset of the UDP header.
    pub udp_offset: usize,
    /// Absolute range of the UDP payload.
    pub payload: Range<usize>,
    /// End of the IPv4 packet (its Total Length from `ip_offset`); link padding may follow.
    pub end: usize,
    /// IPv4 source address.
    pub src_addr: Ipv4Address,
    /// IPv4 destination address.
    pub dst_addr: Ipv4Address,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// Whether the IPv4 header checksum verified.
    pub ip_checksum_ok: bool,
    /// Whether the UDP checksum verified (true when the sender sent none, RFC 768).
    pub udp_checksum_ok: bool,
}

/// Finds the UDP datagram of the IPv4 packet that starts at `buf[ip_offset..]` (RFC 791 3.1,
/// RFC 768). Bytes after the packet's Total Length are the caller's to judge (Ethernet padding
/// is allowed, an IP packet handed over alone has none): see [`Udp4Location::end`].
///
/// # Errors
/// [`Error::NotUdp`] for another protocol or a fragment; [`Error::Truncated`] /
/// [`Error::BadLength`] for a header or length that does not fit.
pub fn locate_udp4(buf: &[u8], ip_offset: usize) -> Result<Udp4Location> {
    let ip = Ipv4Packet::new_checked(buf.get(ip_offset..).unwrap_or(&[]))?;
    if ip.protocol() != PROTOCOL_UDP {
        return Err(Error::NotUdp("IPv4 protocol is not UDP"));
    }
    if ip.is_fragment() {
        return Err(Error::NotUdp("fragmented IPv4 datagram"));
    }
    let udp_offset = ip_offset + ip.header_len();
    let udp = UdpPacket::new_checked(ip.payload())?;
    if udp.len() as usize != ip.payload().len() {
        return Err(Error::BadLength {
            what: "UDP length",
            value: udp.len() as usize,
        });
    }
    let udp_checksum_ok =
        udp.checksum() == 0 || udp_checksum_verifies(ip.src_addr(), ip.dst_addr(), ip.payload());
    let start = udp_offset + UDP_HEADER_LEN;
    Ok(Udp4Location {
        ip_offset,
        udp_offset,
        payload: start..start + udp.payload().len(),
        end: ip_offset + ip.total_len() as usize,
        src_addr: ip.src_addr(),
        dst_addr: ip.dst_addr(),
        src_port: udp.src_port(),
        dst_port: udp.dst_port(),
        ip_checksum_ok: ip.verify_checksum(),
        udp_checksum_ok,
    })
}

/// Find the UDP datagram in an Ethernet II frame (tagged or not).
pub fn locate_udp(frame: &[u8]) -> Result<UdpLocation> {
    let eth_frame = Frame::new_checked(frame)?;
    let eth = EthernetRepr::parse(&eth_frame)?;
    match eth.ethertype {
        ethernet::ETHERTYPE_IPV4 => {}
        ethernet::ETHERTYPE_IPV6 => return Err(Error::NotUdp("ipv6 not supported")),
        _ => return Err(Error::NotUdp("not an IPv4 frame")),
    }
    let ip_offset = eth_frame.payload_offset();
    // The checks `locate_udp4` makes, in the order this function always made them: the
    // padding check needs the Total Length, which is only read once the header is whole.
    let ip = Ipv4Packet::new_checked(&frame[ip_offset..])?;
    if ip.protocol() != PROTOCOL_UDP {
        return Err(Error::NotUdp("IPv4 protocol is not UDP"));
    }
    if ip.is_fragment() {
        return Err(Error::NotUdp("fragmented IPv4 datagram"));
    }
    ethernet::check_padding(
        frame.len(),
        ip_offset + ip.total_len() as usize,
        eth_frame.tag_count(),
        "IPv4 total length (not Ethernet padding)",
    )?;
    let l = locate_udp4(frame, ip_offset)?;
    Ok(UdpLocation {
        eth,
        ip_offset: l.ip_offset,
        udp_offset: l.udp_offset,
        payload: l.payload,
        src_addr: l.src_addr,
        dst_addr: l.dst_addr,
        src_port: l.src_port,
        dst_port: l.dst_port,
        ip_checksum_ok: l.ip_checksum_ok,
        udp_checksum_ok: l.udp_checksum_ok,
    })
}

/// Rebuild `frame` with its UDP payload replaced by `new_payload`, as a new vector.
///
/// Ethernet, 802.1Q and IPv4 header bytes (options, TTL, identification, DSCP) are kept;
/// the IPv4 total length and header checksum, the UDP length and the UDP checksum are
/// recomputed. Ethernet padding after the old datagram is dropped (the sender's NIC pads).
/// A thin helper for tests and tools: the packet path writes into its own buffer through
/// [`crate::udp_rewrite::LocatedUdp`].
pub fn rewrite_udp_payload(frame: &[u8], new_payload: &[u8]) -> Result<Vec<u8>> {
    let loc = locate_udp(frame)?;
    rewrite_udp4_payload(frame, loc.ip_offset, loc.udp_offset, new_payload)
}

/// [`rewrite_udp_payload`] for a datagram already located (by [`locate_udp4`] or a
/// classification): `buf[..udp_offset + 8]` is kept, whatever link header precedes
/// `ip_offset` (none for an IP packet on its own), and the lengths and checksums are
/// recomputed. The caller vouches that `ip_offset` and `udp_offset` came from a parse of `buf`.
/// A `Vec` wrapper of [`crate::udp_rewrite::LocatedUdp::v4`].
///
/// # Errors
/// [`Error::TooLarge`] when the datagram would not fit IPv4's 16-bit Total Length;
/// [`Error::Truncated`] for offsets outside `buf` or out of order.
pub fn rewrite_udp4_payload(
    buf: &[u8],
    ip_offset: usize,
    udp_offset: usize,
    new_payload: &[u8],
) -> Result<Vec<u8>> {
    crate::udp_rewrite::LocatedUdp::v4(buf, ip_offset, udp_offset)?
        .with_payload(new_payload)
        .to_vec()
}

/// Fill in total length, header checksum, UDP length and UDP checksum of the IPv4 packet
/// that fills `ip` exactly. The caller has checked that the sizes fit in 16 bits and that `ip`
/// holds the IPv4 header (`ip_header_len` octets) and a whole UDP header.
pub(crate) fn finish_ipv4_udp(ip: &mut [u8], ip_header_len: usize) {
    let total = ip.len() as u16;
    ip[field::TOTAL_LEN].copy_from_slice(&total.to_be_bytes());
    ip[field::CHECKSUM].fill(0);
    let c = checksum(&ip[..ip_header_len]);
    ip[field::CHECKSUM].copy_from_slice(&c.to_be_bytes());
    let mut src = [0; 4];
    src.copy_from_slice(&ip[field::SRC]);
    let mut dst = [0; 4];
    dst.copy_from_slice(&ip[field::DST]);
    let udp = &mut ip[ip_header_len..];
    let udp_len = udp.len() as u16;
    udp[field::UDP_LEN].copy_from_slice(&udp_len.to_be_bytes());
    udp[field::UDP_CHECKSUM].fill(0);
    let c = udp_checksum(src, dst, udp);
    udp[field::UDP_CHECKSUM].copy_from_slice(&c.to_be_bytes());
}

/// Whether an IPv4 datagram of `udp_payload_len` payload octets behind a header of
/// `ip_header_len` octets fits the 16-bit Total Length (RFC 791 3.1).
pub(crate) fn check_ipv4_size(ip_header_len: usize, udp_payload_len: usize) -> Result<()> {
    let total = ip_header_len
        .checked_add(UDP_HEADER_LEN)
        .and_then(|n| n.checked_add(udp_payload_len));
    match total {
        Some(t) if t <= u16::MAX as usize => Ok(()),
        _ => Err(Error::TooLarge {
            what: "IPv4 datagram",
        }),
    }
}

/// What [`UdpFrameRepr::emit_with`] and the rewrite encoders say when the caller's buffer is
/// shorter than the frame.
pub(crate) fn check_room(buf: &[u8], need: usize) -> Result<()> {
    if buf.len() < need {
        return Err(Error::Truncated {
            what: "UDP frame output buffer",
            need,
            have: buf.len(),
        });
    }
    Ok(())
}

/// Everything needed to build an Ethernet/IPv4/UDP frame around a payload (for writing
/// captures and for the UDP relay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpFrameRepr {
    /// Ethernet header; its `ethertype` is ignored and written as IPv4.
    pub eth: EthernetRepr,
    /// IPv4 source address.
    pub src_addr: Ipv4Address,
    /// IPv4 destination address.
    pub dst_addr: Ipv4Address,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// IPv4 Time to Live.
    pub ttl: u8,
    /// DSCP/ECN octet (IEC 61850-90-5 recommends a DSCP for priority).
    pub tos: u8,
    /// IPv4 Identification.
    pub identification: u16,
}

impl UdpFrameRepr {
    /// Read the header fields of an Ethernet/IPv4/UDP frame; returns them and the payload
    /// range. IPv4 options are not represented, so [`UdpFrameRepr::emit`] drops them.
    pub fn parse(frame: &[u8]) -> Result<(Self, Range<usize>)> {
        let loc = locate_udp(frame)?;
        let ip = &frame[loc.ip_offset..];
        let repr = UdpFrameRepr {
            eth: loc.eth,
            src_addr: loc.src_addr,
            dst_addr: loc.dst_addr,
            src_port: loc.src_port,
            dst_port: loc.dst_port,
            ttl: ip[field::TTL],
            tos: ip[field::TOS],
            identification: be16(ip, field::IDENTIFICATION),
        };
        Ok((repr, loc.payload))
    }

    /// Size of the frame for a payload of `payload_len` bytes.
    pub fn buffer_len(&self, payload_len: usize) -> usize {
        self.eth.buffer_len() + IPV4_MIN_HEADER_LEN + UDP_HEADER_LEN + payload_len
    }

    /// This header around `payload`: the frame as a value to emit (smoltcp's `Repr` shape).
    pub fn with_payload(self, payload: &[u8]) -> Udp4Frame<'_> {
        Udp4Frame {
            headers: self,
            payload,
        }
    }

    /// Writes the frame for a payload of `payload_len` octets at the start of `buf` (no
    /// options, DF set, no padding), `write_payload` filling the payload in place (as
    /// smoltcp's `UdpRepr::emit` takes its payload writer), then the lengths and both
    /// checksums; returns the frame's length. Whatever `write_payload` leaves in its slice is
    /// the payload: it is given exactly `payload_len` octets.
    ///
    /// # Errors
    /// [`Error::TooLarge`] when the datagram would not fit IPv4's Total Length;
    /// [`Error::Truncated`] when `buf` is shorter than [`Self::buffer_len`]; whatever
    /// `write_payload` returns. Nothing is written before the sizes are checked.
    pub fn emit_with<E: From<Error>>(
        &self,
        buf: &mut [u8],
        payload_len: usize,
        write_payload: impl FnOnce(&mut [u8]) -> core::result::Result<(), E>,
    ) -> core::result::Result<usize, E> {
        check_ipv4_size(IPV4_MIN_HEADER_LEN, payload_len)?;
        let len = self.buffer_len(payload_len);
        check_room(buf, len)?;
        let eth = EthernetRepr {
            ethertype: ethernet::ETHERTYPE_IPV4,
            ..self.eth
        };
        let ip_offset = eth.emit(buf);
        let ip = &mut buf[ip_offset..len];
        ip[field::VER_IHL] = 0x45;
        ip[field::TOS] = self.tos;
        ip[field::IDENTIFICATION].copy_from_slice(&self.identification.to_be_bytes());
        ip[field::FLAGS_FRAG].copy_from_slice(&0x4000u16.to_be_bytes());
        ip[field::TTL] = self.ttl;
        ip[field::PROTOCOL] = PROTOCOL_UDP;
        ip[field::SRC].copy_from_slice(&self.src_addr);
        ip[field::DST].copy_from_slice(&self.dst_addr);
        let udp = &mut ip[IPV4_MIN_HEADER_LEN..];
        udp[field::UDP_SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        udp[field::UDP_DST_PORT].copy_from_slice(&self.dst_port.to_be_bytes());
        write_payload(&mut udp[UDP_HEADER_LEN..])?;
        finish_ipv4_udp(ip, IPV4_MIN_HEADER_LEN);
        Ok(len)
    }

    /// The frame around `payload` as a new vector: a thin helper for callers that want an
    /// owned frame (tests, captures); see [`Udp4Frame::emit`].
    pub fn to_vec(&self, payload: &[u8]) -> Result<Vec<u8>> {
        self.with_payload(payload).to_vec()
    }
}

/// An Ethernet/IPv4/UDP frame to emit: header values and a borrowed payload, in smoltcp's
/// `Repr` shape ([`Udp4Frame::buffer_len`], [`Udp4Frame::emit`] into the caller's buffer with
/// lengths and checksums filled in, `to_vec` as a thin helper).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Udp4Frame<'p> {
    /// Ethernet, IPv4 and UDP header values.
    pub headers: UdpFrameRepr,
    /// The UDP payload.
    pub payload: &'p [u8],
}

impl<'p> Udp4Frame<'p> {
    /// Reads a frame: its header values (IPv4 options are not represented) and its payload,
    /// borrowed.
    pub fn parse(frame: &'p [u8]) -> Result<Self> {
        let (headers, range) = UdpFrameRepr::parse(frame)?;
        Ok(Udp4Frame {
            headers,
            payload: &frame[range],
        })
    }

    /// Octets [`Udp4Frame::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        self.headers.buffer_len(self.payload.len())
    }

    /// Writes the frame at the start of `buf` (no options, DF set, no padding, lengths and
    /// checksums computed); returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// [`Error::TooLarge`] when the datagram would not fit IPv4's Total Length;
    /// [`Error::Truncated`] when `buf` is too short.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        self.headers
            .emit_with(buf, self.payload.len(), |p: &mut [u8]| {
                p.copy_from_slice(self.payload);
                Ok::<(), Error>(())
            })
    }

    /// The frame as a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        check_ipv4_size(IPV4_MIN_HEADER_LEN, self.payload.len())?;
        let mut out = vec![0u8; self.buffer_len()];
        self.emit(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ethernet::tests::arb_vlan;
    use proptest::prelude::*;

    /// slipz/RPi-Gateway `packet_hmacSHA256_80.bin` (`seclib-hmac-sha256-80` of
    /// `crates/sec/tests/vectors/golden_frames.txt`): a real capture
    /// with valid IPv4 and UDP checksums.
    const GW_FRAME: &str = "2c600cd50a8a00232414a2270800450001668b0c400040112923c0a80203c0a80204bda8006601521dbc0140a0118011000001403ba4c73e000100000000000000010000000000000122830003e8011a61820114802973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810100822373696d706c65494f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c75657384085eec1a858666660a8501018601008701008801018901008a0114ab78850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850204d28c06000000000000850adeff696b712cc4e2fce0";

    #[test]
    fn locate_real_frame() {
        let f = hex::decode(GW_FRAME).unwrap();
        let loc = locate_udp(&f).unwrap();
        assert_eq!(loc.src_addr, [192, 168, 2, 3]);
        assert_eq!(loc.dst_addr, [192, 168, 2, 4]);
        assert_eq!(loc.dst_port, RGOOSE_PORT);
        assert_eq!((loc.ip_offset, loc.udp_offset), (14, 34));
        assert_eq!(&f[loc.payload.clone()][..2], &[0x01, 0x40]);
        assert_eq!(loc.payload.end, f.len());
        assert!(loc.ip_checksum_ok && loc.udp_checksum_ok);
    }

    #[test]
    fn rewrite_keeps_headers_and_fixes_checksums() {
        let f = hex::decode(GW_FRAME).unwrap();
        let loc = locate_udp(&f).unwrap();
        // Same payload: byte-identical frame.
        assert_eq!(rewrite_udp_payload(&f, &f[loc.payload.clone()]).unwrap(), f);
        // Shorter payload: lengths and checksums fixed, headers kept.
        let g = rewrite_udp_payload(&f, b"\x01\x40hello").unwrap();
        let l2 = locate_udp(&g).unwrap();
        assert_eq!(&g[l2.payload.clone()], b"\x01\x40hello");
        assert!(l2.ip_checksum_ok && l2.udp_checksum_ok);
        assert_eq!(&g[..16], &f[..16]);
        assert_eq!(&g[18..24], &f[18..24]);
        assert_eq!(&g[26..34], &f[26..34]);
        assert!(rewrite_udp_payload(&f, &vec![0; 70_000]).is_err());
    }

    /// A plain IPv4/UDP frame description the tests below share.
    fn sample_repr() -> UdpFrameRepr {
        UdpFrameRepr {
            eth: EthernetRepr {
                dst: [1; 6],
                src: [2; 6],
                vlan: None,
                ethertype: 0,
            },
            src_addr: [10, 0, 0, 1],
            dst_addr: [10, 0, 0, 2],
            src_port: 1000,
            dst_port: 102,
            ttl: 64,
            tos: 0,
            identification: 7,
        }
    }

    #[test]
    fn oversized_payload_is_refused_before_anything_is_written() {
        let repr = sample_repr();
        let big = vec![0u8; u16::MAX as usize - 27];
        assert_eq!(
            repr.to_vec(&big),
            Err(Error::TooLarge {
                what: "IPv4 datagram"
            })
        );
        let fits = &big[..big.len() - 1];
        let f = repr.to_vec(fits).unwrap();
        assert_eq!(locate_udp(&f).unwrap().payload.len(), fits.len());
        // A payload writer's error is the caller's, and stops the frame.
        let mut buf = vec![0; repr.buffer_len(3)];
        let r: core::result::Result<usize, Error> =
            repr.emit_with(&mut buf, 3, |_| Err(Error::MissingField("test")));
        assert_eq!(r, Err(Error::MissingField("test")));
    }

    #[test]
    fn ipv6_and_fragments_rejected() {
        let mut f = hex::decode(GW_FRAME).unwrap();
        f[12..14].copy_from_slice(&[0x86, 0xdd]);
        assert_eq!(locate_udp(&f), Err(Error::NotUdp("ipv6 not supported")));
        let mut f = hex::decode(GW_FRAME).unwrap();
        f[20] = 0x20; // MF
        assert_eq!(
            locate_udp(&f),
            Err(Error::NotUdp("fragmented IPv4 datagram"))
        );
    }

    #[test]
    fn options_are_kept() {
        let repr = sample_repr();
        let f = repr.to_vec(b"abc").unwrap();
        // Insert a 4-byte NOP option block by hand: IHL 6.
        let mut g = f[..34].to_vec();
        g[14] = 0x46;
        g.extend_from_slice(&[1, 1, 1, 0]);
        g.extend_from_slice(&f[34..]);
        let g = rewrite_udp_payload_unchecked_lengths(g);
        let loc = locate_udp(&g).unwrap();
        assert_eq!(loc.udp_offset, 38);
        assert_eq!(&g[loc.payload.clone()], b"abc");
        let h = rewrite_udp_payload(&g, b"abcdef").unwrap();
        assert_eq!(&h[34..38], &[1, 1, 1, 0]);
        assert!(locate_udp(&h).unwrap().ip_checksum_ok);
    }

    fn rewrite_udp_payload_unchecked_lengths(mut g: Vec<u8>) -> Vec<u8> {
        let hl = ((g[14] & 0xf) * 4) as usize;
        finish_ipv4_udp(&mut g[14..], hl);
        g
    }

    #[test]
    fn checksum_rfc1071_example() {
        // RFC 1071 section 3 example: sum of 0001 f203 f4f5 f6f7 is 0xddf2.
        assert_eq!(
            ones_complement_sum(0, &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0xddf2
        );
    }

    proptest! {
        #[test]
        fn build_parse_round_trip(dst: [u8; 6], src: [u8; 6], vlan in arb_vlan(),
                                  sa: [u8; 4], da: [u8; 4], sp: u16, dp: u16, ttl: u8, tos: u8, id: u16,
                                  payload in proptest::collection::vec(any::<u8>(), 0..300)) {
            let repr = UdpFrameRepr {
                eth: EthernetRepr { dst, src, vlan, ethertype: ethernet::ETHERTYPE_IPV4 },
                src_addr: sa, dst_addr: da, src_port: sp, dst_port: dp, ttl, tos, identification: id,
            };
            let f = repr.to_vec(&payload).unwrap();
            prop_assert_eq!(f.len(), repr.buffer_len(payload.len()));
            let (p, range) = UdpFrameRepr::parse(&f).unwrap();
            prop_assert_eq!(p, repr);
            prop_assert_eq!(&f[range], &payload[..]);
            let loc = locate_udp(&f).unwrap();
            prop_assert!(loc.ip_checksum_ok && loc.udp_checksum_ok);
            // Canonical frames re-emit identically.
            prop_assert_eq!(p.to_vec(&payload).unwrap(), f);
        }

        /// The 32-bit-word sum equals the plain RFC 1071 sum of 16-bit words, at any length
        /// and starting value.
        #[test]
        fn wide_sum_matches_16_bit_words(acc in 0u32..0x2_0000, data in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut r = acc as u64;
            for c in data.chunks(2) {
                r += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u64;
            }
            while r > 0xffff {
                r = (r & 0xffff) + (r >> 16);
            }
            prop_assert_eq!(ones_complement_sum(acc, &data), r as u32);
        }

        /// Checking by summing with the received checksum in place accepts exactly the
        /// checksums that recomputing with the field zeroed produces (0xFFFF for a computed
        /// zero), for any datagram and any stated value, the edge values included.
        #[test]
        fn verify_in_place_agrees_with_recompute(sa: [u8; 4], da: [u8; 4],
                                                 mut udp in proptest::collection::vec(any::<u8>(), 8..200),
                                                 stated in prop_oneof![Just(0u16), Just(0xffff), any::<u16>()],
                                                 right: bool) {
            udp[6..8].fill(0);
            let want = udp_checksum(sa, da, &udp);
            let c = if right { want } else { stated };
            udp[6..8].copy_from_slice(&c.to_be_bytes());
            prop_assert_eq!(udp_checksum_verifies(sa, da, &udp), c != 0 && c == want);
            let (s6, d6) = ([sa[0]; 16], [da[1]; 16]);
            udp[6..8].fill(0);
            let want6 = crate::ipv6::udp6_checksum(&s6, &d6, &udp);
            let c6 = if right { want6 } else { stated };
            udp[6..8].copy_from_slice(&c6.to_be_bytes());
            prop_assert_eq!(crate::ipv6::udp6_checksum_verifies(&s6, &d6, &udp), c6 != 0 && c6 == want6);
        }

        /// The IP packet on its own locates and rewrites as it does inside its frame: the same
        /// datagram, and a rewritten packet is the rewritten frame's packet byte for byte.
        #[test]
        fn bare_packet_locates_and_rewrites_as_its_frame(vlan in arb_vlan(), sa: [u8; 4], da: [u8; 4],
                                                         sp: u16, dp: u16,
                                                         payload in proptest::collection::vec(any::<u8>(), 0..300),
                                                         new in proptest::collection::vec(any::<u8>(), 0..300)) {
            let repr = UdpFrameRepr {
                eth: EthernetRepr { dst: [1; 6], src: [2; 6], vlan, ethertype: ethernet::ETHERTYPE_IPV4 },
                src_addr: sa, dst_addr: da, src_port: sp, dst_port: dp, ttl: 64, tos: 0, identification: 1,
            };
            let f = repr.to_vec(&payload).unwrap();
            let framed = locate_udp(&f).unwrap();
            let off = framed.ip_offset;
            let bare = locate_udp4(&f[off..], 0).unwrap();
            prop_assert_eq!(bare.end, f.len() - off);
            prop_assert_eq!(bare.udp_offset + off, framed.udp_offset);
            prop_assert_eq!(&f[off..][bare.payload.clone()], &payload[..]);
            prop_assert_eq!((bare.src_addr, bare.dst_addr, bare.src_port, bare.dst_port),
                            (sa, da, sp, dp));
            prop_assert!(bare.ip_checksum_ok && bare.udp_checksum_ok);
            let whole = rewrite_udp_payload(&f, &new).unwrap();
            let packet = rewrite_udp4_payload(&f[off..], 0, bare.udp_offset, &new).unwrap();
            prop_assert_eq!(&whole[off..], &packet[..]);
            let at = rewrite_udp4_payload(&f, off, framed.udp_offset, &new).unwrap();
            prop_assert_eq!(at, whole);
        }

        /// The borrowed-payload frame: parse(emit(x)) == x, `buffer_len` is what `emit`
        /// writes, and every buffer shorter than that is an error, never a panic or a partial
        /// frame passed off as whole.
        #[test]
        fn frame_repr_round_trip_and_short_buffers(vlan in arb_vlan(), sa: [u8; 4], da: [u8; 4],
                                                   sp: u16, dp: u16, ttl: u8, tos: u8, id: u16,
                                                   payload in proptest::collection::vec(any::<u8>(), 0..200),
                                                   cut in 1usize..80) {
            let headers = UdpFrameRepr {
                eth: EthernetRepr { dst: [1; 6], src: [2; 6], vlan, ethertype: ethernet::ETHERTYPE_IPV4 },
                src_addr: sa, dst_addr: da, src_port: sp, dst_port: dp, ttl, tos, identification: id,
            };
            let x = headers.with_payload(&payload);
            let mut buf = vec![0xa5; x.buffer_len() + 7];
            prop_assert_eq!(x.emit(&mut buf).unwrap(), x.buffer_len());
            let f = &buf[..x.buffer_len()];
            prop_assert_eq!(Udp4Frame::parse(f).unwrap(), x);
            prop_assert_eq!(&x.to_vec().unwrap()[..], f);
            let short = x.buffer_len().saturating_sub(cut);
            let is_truncated = matches!(x.emit(&mut vec![0; short]), Err(Error::Truncated { .. }));
            prop_assert!(is_truncated);
        }

        #[test]
        fn no_panic_on_arbitrary_bytes(mut data in proptest::collection::vec(any::<u8>(), 0..80), tag: bool) {
            if data.len() > 14 {
                data[12] = 0x08;
                data[13] = 0x00;
                if tag { data[12] = 0x81; }
            }
            if data.len() > 14 { data[14] = 0x45 | (data[14] & 0x0f); }
            let _ = locate_udp(&data);
            let _ = rewrite_udp_payload(&data, b"x");
            for off in [0, 14, 18] {
                let _ = locate_udp4(&data, off);
                let _ = rewrite_udp4_payload(&data, off, off + 20, b"x");
            }
            let _ = UdpFrameRepr::parse(&data);
        }
    }
}
