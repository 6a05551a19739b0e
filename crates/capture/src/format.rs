//! The sans-I/O decoder of pcap and pcapng record framing.
//!
//! [`Decoder::step`] is given the unread bytes of the file and either asks for more
//! ([`Step::Need`]) or consumes one record ([`Step::Record`]), which is a packet or a block
//! that only changes state (a section, an interface, statistics). Nothing is copied: a packet
//! is a range of the input.
//!
//! Formats, as the tcpdump.org and IETF drafts describe them (draft-ietf-opsawg-pcap,
//! draft-ietf-opsawg-pcapng):
//! * pcap: a 24-octet file header (magic 0xA1B2C3D4 for microsecond or 0xA1B23C4D for
//!   nanosecond timestamps, in the writer's byte order; 0xA1B2CD34 for the "modified" pcap of
//!   old Linux patches, whose record headers are 8 octets longer), then 16-octet record headers
//!   (seconds, sub-seconds, captured length, original length) each followed by its data. The
//!   LinkType field's bits 26-31 may state a frame check sequence length.
//! * pcapng: blocks of type, total length, body, total length again (§3.1); a Section Header
//!   Block (0x0A0D0D0A) sets the byte order and forgets the interfaces; Interface Description
//!   Blocks (1) number the interfaces of the section in order, with their link type and
//!   `if_tsresol` (option 9: 10^-n or 2^-n seconds, default 10^-6), `if_tsoffset` (14) and
//!   `if_fcslen` (13); Enhanced (6), Simple (3) and the obsolete Packet Block (2) carry
//!   packets. pcap-file 2.0 reads Enhanced Packet timestamps as nanoseconds whatever
//!   `if_tsresol` says (they are microseconds by default), which is one reason this decoder
//!   reads the framing itself.

use crate::error::FormatError;
use crate::link::LinkType;
use std::ops::Range;

/// Longest record accepted: 16 MiB. Real captures hold frames up to 64 KiB (offloaded
/// segments), the largest snap length tools write is 256 KiB; a length beyond this is a
/// corrupt field, and reading it would make memory depend on the file.
pub const MAX_RECORD_LEN: usize = 16 << 20;
/// Most interfaces one pcapng section may declare (each costs a few octets of state).
pub const MAX_INTERFACES: usize = 4096;

const PCAP_MAGIC_US: u32 = 0xa1b2_c3d4;
const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
const PCAP_MAGIC_MODIFIED: u32 = 0xa1b2_cd34;
const PCAP_HEADER_LEN: usize = 24;
const PCAPNG_SHB: u32 = 0x0a0d_0d0a;
const PCAPNG_BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;
const BLOCK_IDB: u32 = 1;
const BLOCK_PB: u32 = 2;
const BLOCK_SPB: u32 = 3;
const BLOCK_EPB: u32 = 6;
const OPT_END: u16 = 0;
const OPT_IF_TSRESOL: u16 = 9;
const OPT_IF_FCSLEN: u16 = 13;
const OPT_IF_TSOFFSET: u16 = 14;

/// One packet record: where its bytes are in the input given to [`Decoder::step`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawPacket {
    /// Interface (pcapng) or 0 (pcap).
    pub interface: u32,
    /// Link type of the interface.
    pub link: LinkType,
    /// Capture time in nanoseconds since the Unix epoch (saturating).
    pub timestamp_ns: u64,
    /// Length of the packet on the wire.
    pub orig_len: u32,
    /// Octets the file holds for the packet (its captured length, a frame check sequence
    /// included): less than `orig_len` when the capture's snap length cut the packet.
    pub captured_len: u32,
    /// The captured bytes, frame check sequence (if the file states one) removed.
    pub data: Range<usize>,
}

/// What [`Decoder::step`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The next record needs this many octets from the start of the input; give more.
    Need(usize),
    /// `used` octets were consumed: one packet record, or (None) a block that only changed
    /// the decoder's state.
    Record {
        /// Octets consumed.
        used: usize,
        /// The packet, if the record was one.
        packet: Option<RawPacket>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Little,
    Big,
}

impl Order {
    fn u16(self, b: &[u8], at: usize) -> u16 {
        let a = [b[at], b[at + 1]];
        match self {
            Order::Little => u16::from_le_bytes(a),
            Order::Big => u16::from_be_bytes(a),
        }
    }
    fn u32(self, b: &[u8], at: usize) -> u32 {
        let a = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        match self {
            Order::Little => u32::from_le_bytes(a),
            Order::Big => u32::from_be_bytes(a),
        }
    }
}

/// A timestamp resolution: units per second as 10^-n or 2^-n (pcapng `if_tsresol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolution {
    Decimal(u8),
    Binary(u8),
}

impl Resolution {
    fn to_ns(self, units: u64) -> u64 {
        let ns: u128 = match self {
            Resolution::Decimal(n) if n <= 9 => units as u128 * 10u128.pow(9 - n as u32),
            Resolution::Decimal(n) => units as u128 / 10u128.pow((n as u32 - 9).min(38)),
            Resolution::Binary(n) => {
                let n = n.min(127) as u32;
                (units as u128)
                    .checked_mul(1_000_000_000)
                    .map_or(u128::MAX, |v| v >> n)
            }
        };
        u64::try_from(ns).unwrap_or(u64::MAX)
    }
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    link: LinkType,
    snaplen: u32,
    resolution: Resolution,
    offset_s: i64,
    fcs_len: u8,
}

#[derive(Debug)]
enum State {
    Start,
    Pcap {
        order: Order,
        nanos: bool,
        record_header: usize,
        link: LinkType,
        fcs_len: u8,
    },
    PcapNg {
        order: Order,
        interfaces: Vec<Interface>,
    },
}

/// The decoder: its state is the format, byte order and (pcapng) the section's interfaces.
#[derive(Debug)]
pub struct Decoder {
    state: State,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

fn need(input: &[u8], n: usize) -> Option<Step> {
    (input.len() < n).then_some(Step::Need(n))
}

fn check_len(len: u64) -> Result<(), FormatError> {
    if len > MAX_RECORD_LEN as u64 {
        return Err(FormatError::RecordTooLarge {
            len,
            max: MAX_RECORD_LEN,
        });
    }
    Ok(())
}

impl Decoder {
    /// A decoder at the start of a file.
    pub fn new() -> Self {
        Decoder {
            state: State::Start,
        }
    }

    /// Whether the file header has been read (a file shorter than it is no capture at all).
    pub fn started(&self) -> bool {
        !matches!(self.state, State::Start)
    }

    /// Decodes the next record at the start of `input`.
    ///
    /// # Errors
    /// A [`FormatError`] when the bytes cannot be a record of this format; the caller cannot
    /// resynchronise and should stop.
    pub fn step(&mut self, input: &[u8]) -> Result<Step, FormatError> {
        match &mut self.state {
            State::Start => self.file_header(input),
            State::Pcap {
                order,
                nanos,
                record_header,
                link,
                fcs_len,
            } => {
                let (order, nanos, rh, link, fcs) =
                    (*order, *nanos, *record_header, *link, *fcs_len);
                if let Some(s) = need(input, rh) {
                    return Ok(s);
                }
                let caplen = order.u32(input, 8) as usize;
                check_len(caplen as u64)?;
                if let Some(s) = need(input, rh + caplen) {
                    return Ok(s);
                }
                let secs = order.u32(input, 0) as u64;
                let sub = order.u32(input, 4) as u64;
                let ts = secs.saturating_mul(1_000_000_000).saturating_add(if nanos {
                    sub
                } else {
                    sub.saturating_mul(1000)
                });
                let orig_len = order.u32(input, 12);
                let data = rh..rh + without_fcs(caplen, orig_len, fcs);
                Ok(Step::Record {
                    used: rh + caplen,
                    packet: Some(RawPacket {
                        interface: 0,
                        link,
                        timestamp_ns: ts,
                        orig_len,
                        captured_len: caplen as u32,
                        data,
                    }),
                })
            }
            State::PcapNg { .. } => self.block(input),
        }
    }

    fn file_header(&mut self, input: &[u8]) -> Result<Step, FormatError> {
        if let Some(s) = need(input, 4) {
            return Ok(s);
        }
        let m = [input[0], input[1], input[2], input[3]];
        if u32::from_be_bytes(m) == PCAPNG_SHB {
            // The Section Header Block is read by the block decoder, which sets the order.
            self.state = State::PcapNg {
                order: Order::Little,
                interfaces: Vec::new(),
            };
            return self.block(input);
        }
        let (order, magic) = if [PCAP_MAGIC_US, PCAP_MAGIC_NS, PCAP_MAGIC_MODIFIED]
            .contains(&u32::from_le_bytes(m))
        {
            (Order::Little, u32::from_le_bytes(m))
        } else if [PCAP_MAGIC_US, PCAP_MAGIC_NS, PCAP_MAGIC_MODIFIED]
            .contains(&u32::from_be_bytes(m))
        {
            (Order::Big, u32::from_be_bytes(m))
        } else {
            return Err(FormatError::UnknownMagic(m));
        };
        if let Some(s) = need(input, PCAP_HEADER_LEN) {
            return Ok(s);
        }
        let (major, minor) = (order.u16(input, 4), order.u16(input, 6));
        if major != 2 {
            return Err(FormatError::PcapVersion { major, minor });
        }
        let lt = order.u32(input, 20);
        // LinkType bits 26-31: F (FCS length present) and the FCS length in 16-bit words.
        let fcs_len = if lt & 0x0400_0000 != 0 {
            (((lt >> 28) & 0xf) * 2) as u8
        } else {
            0
        };
        self.state = State::Pcap {
            order,
            nanos: magic == PCAP_MAGIC_NS,
            record_header: if magic == PCAP_MAGIC_MODIFIED { 24 } else { 16 },
            link: LinkType::from_code(lt & 0xffff),
            fcs_len,
        };
        Ok(Step::Record {
            used: PCAP_HEADER_LEN,
            packet: None,
        })
    }

    fn block(&mut self, input: &[u8]) -> Result<Step, FormatError> {
        if let Some(s) = need(input, 12) {
            return Ok(s);
        }
        let State::PcapNg { order, interfaces } = &mut self.state else {
            return Err(FormatError::NoSection);
        };
        let be_type = u32::from_be_bytes([input[0], input[1], input[2], input[3]]);
        if be_type == PCAPNG_SHB {
            let bom = u32::from_le_bytes([input[8], input[9], input[10], input[11]]);
            *order = match bom {
                PCAPNG_BYTE_ORDER_MAGIC => Order::Little,
                m if m.swap_bytes() == PCAPNG_BYTE_ORDER_MAGIC => Order::Big,
                m => return Err(FormatError::SectionMagic(m)),
            };
            interfaces.clear();
        }
        let order = *order;
        let block_type = order.u32(input, 0);
        let len = order.u32(input, 4);
        if len < 12 || len % 4 != 0 {
            return Err(FormatError::BlockLength { block_type, len });
        }
        check_len(len as u64)?;
        let len = len as usize;
        if let Some(s) = need(input, len) {
            return Ok(s);
        }
        if order.u32(input, len - 4) as usize != len {
            return Err(FormatError::BlockLength {
                block_type,
                len: len as u32,
            });
        }
        let body = &input[8..len - 4];
        let packet = match block_type {
            BLOCK_IDB => {
                if interfaces.len() >= MAX_INTERFACES {
                    return Err(FormatError::TooManyInterfaces(MAX_INTERFACES));
                }
                interfaces.push(interface(order, body, block_type)?);
                None
            }
            BLOCK_EPB | BLOCK_PB => {
                // EPB: interface(4) ts(8) caplen(4) len(4); PB: interface(2) drops(2) ts(8) ...
                if body.len() < 20 {
                    return Err(FormatError::BlockLength {
                        block_type,
                        len: len as u32,
                    });
                }
                let iface_id = if block_type == BLOCK_EPB {
                    order.u32(body, 0)
                } else {
                    order.u16(body, 0) as u32
                };
                let iface = *interfaces
                    .get(iface_id as usize)
                    .ok_or(FormatError::UnknownInterface(iface_id))?;
                let units = ((order.u32(body, 4) as u64) << 32) | order.u32(body, 8) as u64;
                let caplen = order.u32(body, 12);
                let room = body.len() - 20;
                if caplen as usize > room {
                    return Err(FormatError::CapturedLength { caplen, room });
                }
                let ts = iface.resolution.to_ns(units);
                let ts = offset_ts(ts, iface.offset_s);
                let start = 8 + 20;
                let orig_len = order.u32(body, 16);
                let cap = without_fcs(caplen as usize, orig_len, iface.fcs_len);
                Some(RawPacket {
                    interface: iface_id,
                    link: iface.link,
                    timestamp_ns: ts,
                    orig_len,
                    captured_len: caplen,
                    data: start..start + cap,
                })
            }
            BLOCK_SPB => {
                if body.len() < 4 {
                    return Err(FormatError::BlockLength {
                        block_type,
                        len: len as u32,
                    });
                }
                let iface = *interfaces.first().ok_or(FormatError::UnknownInterface(0))?;
                let orig_len = order.u32(body, 0);
                // pcapng §4.4: the captured length is the smaller of the original length and
                // the interface's snap length (0: none); the block may hold padding only.
                let mut cap = orig_len as usize;
                if iface.snaplen != 0 {
                    cap = cap.min(iface.snaplen as usize);
                }
                let cap = cap.min(body.len() - 4);
                let captured_len = cap as u32;
                let cap = without_fcs(cap, orig_len, iface.fcs_len);
                Some(RawPacket {
                    interface: 0,
                    link: iface.link,
                    timestamp_ns: 0,
                    orig_len,
                    captured_len,
                    data: 12..12 + cap,
                })
            }
            _ => None,
        };
        Ok(Step::Record { used: len, packet })
    }
}

/// The captured octets that are the packet, its frame check sequence (`fcs` octets at the end
/// of the `orig_len` octets on the wire) removed. A packet the snap length cut before its FCS
/// holds none of it: its last captured octets are payload and stay. (A record that claims
/// fewer octets on the wire than it holds is taken as captured whole.)
fn without_fcs(caplen: usize, orig_len: u32, fcs: u8) -> usize {
    let fcs = fcs as usize;
    if caplen >= orig_len as usize {
        caplen.saturating_sub(fcs)
    } else {
        caplen.min((orig_len as usize).saturating_sub(fcs))
    }
}

fn offset_ts(ts: u64, offset_s: i64) -> u64 {
    let off_ns = (offset_s as i128) * 1_000_000_000;
    u64::try_from((ts as i128 + off_ns).max(0)).unwrap_or(u64::MAX)
}

/// An Interface Description Block body: link type(2) reserved(2) snaplen(4) options.
fn interface(order: Order, body: &[u8], block_type: u32) -> Result<Interface, FormatError> {
    if body.len() < 8 {
        return Err(FormatError::BlockLength {
            block_type,
            len: body.len() as u32 + 12,
        });
    }
    let mut i = Interface {
        link: LinkType::from_code(order.u16(body, 0) as u32),
        snaplen: order.u32(body, 4),
        resolution: Resolution::Decimal(6),
        offset_s: 0,
        fcs_len: 0,
    };
    // Options: code(2) length(2) value padded to 4; a malformed tail is ignored, as the
    // options only refine how packets are read.
    let mut at = 8;
    while at + 4 <= body.len() {
        let code = order.u16(body, at);
        let olen = order.u16(body, at + 2) as usize;
        let Some(v) = body.get(at + 4..at + 4 + olen) else {
            break;
        };
        match (code, v.len()) {
            (OPT_END, _) => break,
            (OPT_IF_TSRESOL, 1) => {
                i.resolution = if v[0] & 0x80 == 0 {
                    Resolution::Decimal(v[0])
                } else {
                    Resolution::Binary(v[0] & 0x7f)
                }
            }
            (OPT_IF_TSOFFSET, 8) => {
                let b = [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]];
                i.offset_s = match order {
                    Order::Little => i64::from_le_bytes(b),
                    Order::Big => i64::from_be_bytes(b),
                }
            }
            (OPT_IF_FCSLEN, 1) => i.fcs_len = v[0],
            _ => {}
        }
        at += 4 + olen.div_ceil(4) * 4;
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolutions_convert_to_nanoseconds() {
        assert_eq!(Resolution::Decimal(6).to_ns(1_500_000), 1_500_000_000);
        assert_eq!(Resolution::Decimal(9).to_ns(7), 7);
        assert_eq!(Resolution::Decimal(12).to_ns(7_000), 7);
        assert_eq!(Resolution::Binary(10).to_ns(1024), 1_000_000_000);
        assert_eq!(Resolution::Decimal(0).to_ns(u64::MAX), u64::MAX);
    }

    #[test]
    fn garbage_is_an_unknown_magic() {
        let mut d = Decoder::new();
        assert_eq!(
            d.step(b"GET / HTTP/1.1").unwrap_err(),
            FormatError::UnknownMagic(*b"GET ")
        );
    }

    #[test]
    fn a_short_header_asks_for_more() {
        let mut d = Decoder::new();
        assert_eq!(d.step(&[0xd4, 0xc3]).unwrap(), Step::Need(4));
        assert_eq!(
            d.step(&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0]).unwrap(),
            Step::Need(24)
        );
    }

    #[test]
    fn an_absurd_record_length_is_refused_before_buffering() {
        let mut d = Decoder::new();
        let mut h = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        h.extend([0; 8]);
        h.extend(65535u32.to_le_bytes());
        h.extend(1u32.to_le_bytes());
        assert!(matches!(d.step(&h).unwrap(), Step::Record { used: 24, .. }));
        let mut r = vec![0; 8];
        r.extend(u32::MAX.to_le_bytes());
        r.extend(60u32.to_le_bytes());
        assert!(matches!(
            d.step(&r),
            Err(FormatError::RecordTooLarge { .. })
        ));
    }
}
