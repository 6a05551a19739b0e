//! One classification per frame: every layer parsed once, into a [`FrameView`] that the
//! policy, the replay check, the verifier and the forwarder all read.
//!
//! A check that parses the frame again may see a different frame than the check before it (a
//! tag stack one parser skips and another does not is exactly how unsecured GOOSE once passed
//! as "other" traffic). So [`classify`] walks the whole frame once:
//!
//! * the Ethernet header and the whole tag stack (802.1Q, 802.1ad, the pre-standard QinQ
//!   TPIDs), up to the EtherType that names the payload;
//! * layer-2 GOOSE (0x88B8), SV (0x88BA) and GSE management (0x88B9): APPID, Length, Reserved1/2,
//!   the APDU element and the IEC 62351-6 extension; bytes after Length only as padding;
//! * IPv4 and IPv6 (extension headers walked) to UDP; a datagram to or from port 102, or whose
//!   payload starts `01 40` (CLTP UD), is an IEC 61850-90-5 session, whose header is parsed with
//!   the profile's dialect; its IP and UDP checksums are checked once it is known to be a
//!   session (ports and SPDU identifier first: a non-IEC frame whose checksums were left to
//!   the NIC is other traffic, not a bad IEC frame), and fragments are refused (reassembly is
//!   `gander-capture`'s);
//! * anything else is [`Content::Other`].
//!
//! A frame that an IED could read as IEC 61850 traffic but that does not parse is an error,
//! never `Other`. [`verify`] then authenticates what the view found and parses the rest
//! (payload elements and every GOOSE/SV APDU inside them), so a frame is reported verified only
//! when every layer is well formed, the `Data` values inside a GOOSE allData included
//! ([`GooseView::parse`]; a receiver that only needs the header fields can use
//! `GooseView::parse_fields`, but verification does not), and numDatSetEntries counts them
//! (`check_entries`). Layer-2 GOOSE and SV carry the same
//! IEC 62351-6 extension (`crate::l2`); GSE management has none.

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::error::SecError;
use crate::keystore::{KeyEntry, KeyStore};
use crate::profile::Profile;
use crate::replay::Freshness;
use crate::spdu::{self, VerifiedSession};
use gander_wire::ethernet::{self, Frame, Tag};
use gander_wire::goose::{GoosePdu, GooseView};
use gander_wire::ip::{self, Ipv4Packet};
use gander_wire::ipv6::{self, Ipv6Payload, Udp6Location};
use gander_wire::l2_extension::{self, CrcByteOrder, ExtensionView};
use gander_wire::l2_frame::{GooseFrame, GOOSE_LENGTH_TAIL, RESERVED1_SIMULATION};
use gander_wire::spdu::{
    PayloadElement, SecurityInfo, SessionPdu, SpduId, CLTP_LI, CLTP_UD, SIGNATURE_TAG,
};
use gander_wire::sv::{SavPdu, SavView};
use gander_wire::udp_rewrite::LocatedUdp;
use std::ops::Range;

pub mod cut;
pub use cut::{classify_cut, cut_l2, cut_session, CutFrame, CutL2, CutSession};

/// The UDP port of IEC 61850-90-5 sessions.
pub const SESSION_PORT: u16 = 102;

/// The kind of IEC 61850 traffic a frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// R-GOOSE (SI 0xA1, or a tunnelled SPDU 0xA0).
    RGoose,
    /// R-SV (SI 0xA2).
    RSv,
    /// Another session SPDU (management, 0xA3).
    Session,
    /// Layer-2 GOOSE (EtherType 0x88B8).
    Goose,
    /// Layer-2 sampled values (EtherType 0x88BA).
    Sv,
    /// GSE management (EtherType 0x88B9).
    GseManagement,
    /// Not IEC 61850 traffic.
    Other,
}

impl Kind {
    /// Name in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::RGoose => "r-goose",
            Kind::RSv => "r-sv",
            Kind::Session => "session",
            Kind::Goose => "goose",
            Kind::Sv => "sv",
            Kind::GseManagement => "gse-management",
            Kind::Other => "other",
        }
    }

    /// The kind an SPDU identifier announces.
    pub fn of_spdu(si: SpduId) -> Kind {
        match si {
            SpduId::Goose | SpduId::Tunnelled => Kind::RGoose,
            SpduId::SampledValues => Kind::RSv,
            SpduId::Management => Kind::Session,
        }
    }
}

/// A layer-2 GOOSE, SV or GSE-management frame body (offsets absolute in the frame).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct L2View {
    /// The EtherType behind the tag stack.
    pub ethertype: u16,
    /// APPID.
    pub appid: u16,
    /// Reserved1 as on the wire.
    pub reserved1: u16,
    /// Reserved2 as on the wire.
    pub reserved2: u16,
    /// Offset of APPID.
    pub header_offset: usize,
    /// The APDU element.
    pub apdu: Range<usize>,
    /// The IEC 62351-6 extension, if any.
    pub extension: Option<Range<usize>>,
    /// End of the bytes Length counts (padding, if any, follows).
    pub end: usize,
}

impl L2View {
    /// Whether the frame carries an IEC 62351-6 extension.
    pub fn secured(&self) -> bool {
        self.extension.is_some()
    }
    /// The simulation bit of Reserved1.
    pub fn simulation(&self) -> bool {
        self.reserved1 & RESERVED1_SIMULATION != 0
    }
    /// The Length field.
    pub fn length(&self) -> u16 {
        (self.end - self.header_offset) as u16
    }
    /// The byte order of the IEC 62351-6 header CRC in Reserved2, if it carries one.
    pub fn crc_order(&self) -> Option<CrcByteOrder> {
        let crc =
            l2_extension::header_crc(self.ethertype, self.appid, self.length(), self.reserved1);
        CrcByteOrder::detect(crc, self.reserved2)
    }
}

/// IP addresses of a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IpAddrs {
    /// IPv4.
    V4 {
        /// Source.
        src: [u8; 4],
        /// Destination.
        dst: [u8; 4],
    },
    /// IPv6.
    V6 {
        /// Source.
        src: [u8; 16],
        /// Destination.
        dst: [u8; 16],
    },
}

impl IpAddrs {
    /// The source address.
    pub fn src(&self) -> std::net::IpAddr {
        match self {
            IpAddrs::V4 { src, .. } => std::net::IpAddr::from(*src),
            IpAddrs::V6 { src, .. } => std::net::IpAddr::from(*src),
        }
    }
}

/// The UDP datagram of a frame (offsets absolute in the frame).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UdpView {
    /// Addresses.
    pub ip: IpAddrs,
    /// Offset of the IP header.
    pub ip_offset: usize,
    /// Offset of the UDP header.
    pub udp_offset: usize,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// The UDP payload.
    pub payload: Range<usize>,
    encap: Encap,
}

/// What carries a datagram's payload in the buffer a view was taken from, so that a new
/// payload is written back into the same framing ([`UdpView::located`]).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Encap {
    /// An IPv4 header (after a link header, or at the start of the buffer).
    V4,
    /// An IPv6 header and its extension headers.
    V6(Udp6Location),
    /// Nothing: the buffer is the UDP payload, as a socket receives it.
    Bare,
}

impl UdpView {
    /// The headers of this datagram in `frame` (the buffer it was classified from), ready to
    /// carry a new payload: every header byte up to UDP (tags, IP options, extension headers)
    /// kept, lengths and checksums recomputed when written. The datagram was located by the
    /// classification; it is not located again. A view of a bare UDP payload
    /// ([`classify_datagram`]) carries a payload alone.
    pub fn located<'f>(&self, frame: &'f [u8]) -> Result<LocatedUdp<'f>, SecError> {
        Ok(match &self.encap {
            Encap::V4 => LocatedUdp::v4(frame, self.ip_offset, self.udp_offset)?,
            Encap::V6(loc) => LocatedUdp::v6(frame, loc)?,
            Encap::Bare => LocatedUdp::bare(),
        })
    }

    /// `frame` with this datagram's payload replaced, as a new vector ([`UdpView::located`]
    /// writes into the caller's buffer).
    pub fn rewrite_payload(&self, frame: &[u8], new_payload: &[u8]) -> Result<Vec<u8>, SecError> {
        Ok(self.located(frame)?.with_payload(new_payload).to_vec()?)
    }

    /// Bytes of the IP packet that would carry a UDP payload of `payload_len` bytes in this
    /// datagram's framing: the IP and UDP headers as found (options and extension headers
    /// included), or the fixed headers of its family for a bare payload.
    pub fn ip_packet_len(&self, payload_len: usize) -> usize {
        let headers = match (&self.encap, &self.ip) {
            (Encap::Bare, IpAddrs::V4 { .. }) => ip::IPV4_MIN_HEADER_LEN + ip::UDP_HEADER_LEN,
            (Encap::Bare, IpAddrs::V6 { .. }) => ipv6::HEADER_LEN + ip::UDP_HEADER_LEN,
            _ => self.payload.start - self.ip_offset,
        };
        headers + payload_len
    }
}

/// An IEC 61850-90-5 session PDU in UDP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionView<'a> {
    /// Where it travels.
    pub udp: UdpView,
    /// The parsed header (payload possibly ciphertext).
    pub pdu: SessionPdu<'a>,
    /// Whether it carries security (a key id, an IV, algorithm codes or a signature).
    pub secured: bool,
    /// The profile whose dialect parsed the header (its payload elements use it too).
    pub profile: Profile,
}

impl SessionView<'_> {
    /// R-GOOSE, R-SV or another session.
    pub fn kind(&self) -> Kind {
        Kind::of_spdu(self.pdu.header.spdu_id)
    }
}

/// What a frame carries.
// The session variant holds the parsed header and its inline IV (about 270 octets against the
// layer-2 variant's 64): boxing it would allocate once per R-GOOSE/R-SV frame on the
// classification path, which allocates nothing; the view lives on the stack for one frame.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content<'a> {
    /// Layer-2 GOOSE, SV or GSE management.
    L2(L2View),
    /// R-GOOSE, R-SV or another session PDU over UDP.
    Session(SessionView<'a>),
    /// Not IEC 61850 traffic.
    Other,
}

/// Where a view's buffer starts: what a driver hands over decides what the policy and the
/// forwarder may write back (a layer-2 frame cannot go out of an IP path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Link {
    /// A whole Ethernet frame ([`classify`]).
    Ethernet,
    /// An IPv4 or IPv6 packet with no link header ([`classify_ip`]): a netfilter queue's
    /// packets.
    Ip,
    /// A UDP payload with its addresses given beside it ([`classify_datagram`]): what a UDP
    /// socket receives.
    Datagram,
}

/// A frame (an Ethernet frame, an IP packet or a UDP payload, see [`Link`]), classified once.
/// Offsets in it are absolute in [`FrameView::frame`]; the MAC addresses of a view without an
/// Ethernet header are zero and it has no tags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameView<'a> {
    /// The buffer classified.
    pub frame: &'a [u8],
    /// What the buffer starts with.
    pub link: Link,
    /// Destination MAC address.
    pub dst: [u8; 6],
    /// Source MAC address.
    pub src: [u8; 6],
    /// Number of VLAN tags.
    pub tags: usize,
    /// Offset of the EtherType that names the payload.
    pub ethertype_offset: usize,
    /// The payload.
    pub content: Content<'a>,
}

impl<'a> FrameView<'a> {
    /// The kind of traffic.
    pub fn kind(&self) -> Kind {
        match &self.content {
            Content::Other => Kind::Other,
            Content::Session(s) => s.kind(),
            Content::L2(l) => match l.ethertype {
                ethernet::ETHERTYPE_GOOSE => Kind::Goose,
                ethernet::ETHERTYPE_SV => Kind::Sv,
                _ => Kind::GseManagement,
            },
        }
    }
    /// The `i`-th VLAN tag from the outside.
    pub fn tag(&self, i: usize) -> Option<Tag> {
        // A view without an Ethernet header has no tags (`tags` is 0): its first octets are
        // an IP header, not a tag stack.
        if i >= self.tags {
            return None;
        }
        Frame::new_unchecked(self.frame).tag(i)
    }
    /// The VLAN id of the outermost tag.
    pub fn outer_vid(&self) -> Option<u16> {
        self.tag(0).map(|t| t.tag.vid)
    }
    /// The Ethernet header with its whole tag stack, up to (not including) the EtherType.
    ///
    /// Empty for a view without an Ethernet header.
    pub fn header(&self) -> &'a [u8] {
        &self.frame[..self.ethertype_offset]
    }
    /// The source MAC address, if the view has an Ethernet header.
    pub fn src_mac(&self) -> Option<[u8; 6]> {
        (self.link == Link::Ethernet).then_some(self.src)
    }
    /// Bytes the link carries for an output of `out` bytes written in this view's framing
    /// (what must fit the MTU): the Ethernet payload of a frame, the IP packet otherwise.
    pub fn link_payload_len(&self, out: &[u8]) -> usize {
        match (self.link, &self.content) {
            (Link::Ethernet, _) => {
                let offset = ethernet::EthernetRepr::parse_bytes(out).map_or(0, |(_, off)| off);
                out.len().saturating_sub(offset)
            }
            (Link::Datagram, Content::Session(s)) => s.udp.ip_packet_len(out.len()),
            _ => out.len(),
        }
    }
    /// Whether the frame carries IEC 62351-6 security (or claims to).
    pub fn secured(&self) -> bool {
        match &self.content {
            Content::L2(l) => l.secured(),
            Content::Session(s) => s.secured,
            Content::Other => false,
        }
    }
    /// The APPID readable without a key: layer-2 APPID, or the first payload element's APPID of
    /// a session whose payload is cleartext. `None` for encrypted payloads and other traffic.
    pub fn visible_appid(&self, profile: Profile, store: &KeyStore) -> Option<u16> {
        match &self.content {
            Content::L2(l) => Some(l.appid),
            Content::Session(s) => {
                let key = s.pdu.header.security.key_id();
                if s.secured && store.get(key).is_none_or(|k| k.enc != EncAlgorithm::None) {
                    return None;
                }
                gander_wire::spdu::elements(s.pdu.payload(), &profile.dialect())
                    .next()
                    .and_then(Result::ok)
                    .map(|e| e.appid)
            }
            Content::Other => None,
        }
    }
}

/// Whether a session header carries security, as `profile` writes "none".
///
/// KeyID 0 means unsecured (IEC 62351-9 reserves it; docs/keys.md): an SPDU with KeyID 0, no
/// IV and (version 1) zero algorithm codes carries no security whatever follows its payload,
/// as long as that is no authenticator: zero padding octets, optionally ended by an empty
/// signature element `85 00` (SecLib writes one; robidev's R-GOOSE publisher, in
/// robidev/iec61850-dissector test/RGOOSE2.pcap, ends 146 SPDUs with one `00` octet, which
/// made them "unknown key id 0" failures). A non-empty signature with KeyID 0 is still judged
/// as secured, and fails: no key can be 0.
pub fn session_secured(_profile: Profile, pdu: &SessionPdu<'_>) -> bool {
    let sec = &pdu.header.security;
    sec.key_id() != 0
        || !sec.iv().is_empty()
        || matches!(sec, SecurityInfo::V1 { enc_code, mac_code, .. } if *enc_code != 0 || *mac_code != 0)
        || !no_authenticator(pdu.trailer())
}

/// Zero padding, optionally followed by an empty signature element (`85 00`): a trailer that
/// authenticates nothing.
pub(crate) fn no_authenticator(trailer: &[u8]) -> bool {
    let padding = trailer.strip_suffix(&[SIGNATURE_TAG, 0]).unwrap_or(trailer);
    padding.iter().all(|&b| b == 0)
}

/// Where the EtherType of an untagged frame is: after the two addresses (IEEE 802.3 3.1.1).
const ETHERTYPE_OFFSET_UNTAGGED: usize = 12;

/// Classifies one Ethernet frame (see the module documentation).
///
/// # Errors
/// [`SecError::Malformed`] for a frame that is not valid Ethernet (runt, tag stack cut short or
/// deeper than [`ethernet::MAX_TAGS`]) or that looks like IEC 61850 traffic and does not parse;
/// [`SecError::BadChecksum`] for an IPv4 header or UDP checksum that does not verify;
/// [`SecError::Fragment`] for a fragment of a UDP datagram.
pub fn classify(profile: Profile, frame: &[u8]) -> Result<FrameView<'_>, SecError> {
    let eth = Frame::new_checked(frame)?;
    // The tag stack is walked once (each `Frame` accessor walks it again): every tag is four
    // octets in front of the EtherType that names the payload, which the payload follows.
    let ethertype_offset = eth.ethertype_offset();
    let tags = (ethertype_offset - ETHERTYPE_OFFSET_UNTAGGED) / ethernet::VLAN_TAG_LEN;
    let payload_offset = ethertype_offset + 2;
    let view = |content| FrameView {
        frame,
        link: Link::Ethernet,
        dst: eth.dst_addr(),
        src: eth.src_addr(),
        tags,
        ethertype_offset,
        content,
    };
    // `new_checked` walked the whole stack: the EtherType's two octets are in the frame.
    let ethertype = u16::from_be_bytes([frame[ethertype_offset], frame[ethertype_offset + 1]]);
    let content = match ethertype {
        ethernet::ETHERTYPE_GOOSE | ethernet::ETHERTYPE_SV | ethernet::ETHERTYPE_GSE_MANAGEMENT => {
            Content::L2(l2_view(frame, ethertype, payload_offset, tags)?)
        }
        ethernet::ETHERTYPE_IPV4 => {
            let trailer = |end| {
                ethernet::check_padding(
                    frame.len(),
                    end,
                    tags,
                    "IPv4 total length (not Ethernet padding)",
                )
            };
            ipv4_content(profile, frame, payload_offset, trailer)?
        }
        ethernet::ETHERTYPE_IPV6 => {
            let trailer = |end| {
                ethernet::check_padding(
                    frame.len(),
                    end,
                    tags,
                    "IPv6 payload length (not Ethernet padding)",
                )
            };
            ipv6_content(profile, frame, payload_offset, trailer)?
        }
        _ => Content::Other,
    };
    Ok(view(content))
}

/// Classifies one IPv4 or IPv6 packet with no link header in front (the version nibble says
/// which), as a netfilter queue hands it over: the same checks as [`classify`] on the same
/// packet behind an Ethernet header, except that nothing may follow the packet (there is no
/// Ethernet padding) and there are no MAC addresses or tags to read.
///
/// # Errors
/// As [`classify`]; [`SecError::Malformed`] for a version that is neither 4 nor 6 and for
/// bytes after the packet's length.
pub fn classify_ip(profile: Profile, packet: &[u8]) -> Result<FrameView<'_>, SecError> {
    let exact = |what: &'static str| {
        move |end: usize| {
            if end == packet.len() {
                Ok(())
            } else {
                Err(gander_wire::Error::TrailingBytes {
                    what,
                    count: packet.len().saturating_sub(end),
                })
            }
        }
    };
    let content = match packet.first().map(|b| b >> 4) {
        Some(4) => ipv4_content(profile, packet, 0, exact("IPv4 total length"))?,
        Some(6) => ipv6_content(profile, packet, 0, exact("IPv6 payload length"))?,
        _ => {
            return Err(SecError::Malformed(gander_wire::Error::BadValue {
                what: "IP version",
                detail: "neither 4 nor 6",
            }))
        }
    };
    Ok(FrameView {
        frame: packet,
        link: Link::Ip,
        dst: [0; 6],
        src: [0; 6],
        tags: 0,
        ethertype_offset: 0,
        content,
    })
}

/// Classifies a UDP payload received on a socket from `src` to `dst` (the addresses the
/// kernel reports; their checksums were checked by the kernel): an IEC 61850-90-5 session by
/// the same rule as [`classify`]'s (port 102 either way, or a payload starting `01 40`), other
/// traffic otherwise. A view of it writes back bare payloads ([`UdpView::located`]).
///
/// # Errors
/// [`SecError::Malformed`] (or [`SecError::WrongProfile`]) for a session header that does not
/// parse; [`SecError::Malformed`] when `src` and `dst` are of different families.
pub fn classify_datagram(
    profile: Profile,
    src: std::net::SocketAddr,
    dst: std::net::SocketAddr,
    payload: &[u8],
) -> Result<FrameView<'_>, SecError> {
    use std::net::SocketAddr;
    let ip = match (src, dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => IpAddrs::V4 {
            src: s.ip().octets(),
            dst: d.ip().octets(),
        },
        (SocketAddr::V6(s), SocketAddr::V6(d)) => IpAddrs::V6 {
            src: s.ip().octets(),
            dst: d.ip().octets(),
        },
        _ => {
            return Err(SecError::Malformed(gander_wire::Error::BadValue {
                what: "datagram addresses",
                detail: "source and destination of different IP families",
            }))
        }
    };
    let udp = UdpView {
        ip,
        ip_offset: 0,
        udp_offset: 0,
        src_port: src.port(),
        dst_port: dst.port(),
        payload: 0..payload.len(),
        encap: Encap::Bare,
    };
    let content = session_or_other(profile, payload, udp, Ok(()))?;
    Ok(FrameView {
        frame: payload,
        link: Link::Datagram,
        dst: [0; 6],
        src: [0; 6],
        tags: 0,
        ethertype_offset: 0,
        content,
    })
}

/// The content of the IPv4 packet at `frame[off..]`; `trailer` judges the bytes after its
/// Total Length (Ethernet padding, or none).
fn ipv4_content(
    profile: Profile,
    frame: &[u8],
    off: usize,
    trailer: impl Fn(usize) -> Result<(), gander_wire::Error>,
) -> Result<Content<'_>, SecError> {
    Ok(match ipv4_udp(frame, off, trailer)? {
        Some((udp, checksums)) => session_or_other(profile, frame, udp, checksums)?,
        None => Content::Other,
    })
}

/// The content of the IPv6 packet at `frame[off..]`, extension headers walked; `trailer`
/// judges the bytes after its payload length.
fn ipv6_content(
    profile: Profile,
    frame: &[u8],
    off: usize,
    trailer: impl Fn(usize) -> Result<(), gander_wire::Error>,
) -> Result<Content<'_>, SecError> {
    Ok(match ipv6::locate(frame, off)? {
        Ipv6Payload::Fragment => return Err(SecError::Fragment),
        Ipv6Payload::Other(_) => Content::Other,
        Ipv6Payload::Udp(loc) => {
            trailer(loc.end)?;
            let checksums = if loc.udp_checksum_ok {
                Ok(())
            } else {
                Err(SecError::BadChecksum("UDP"))
            };
            let udp = UdpView {
                ip: IpAddrs::V6 {
                    src: loc.src_addr,
                    dst: loc.dst_addr,
                },
                ip_offset: loc.ip_offset,
                udp_offset: loc.udp_offset,
                src_port: loc.src_port,
                dst_port: loc.dst_port,
                payload: loc.payload.clone(),
                encap: Encap::V6(loc),
            };
            session_or_other(profile, frame, udp, checksums)?
        }
    })
}

fn l2_view(frame: &[u8], ethertype: u16, off: usize, tags: usize) -> Result<L2View, SecError> {
    let g = GooseFrame::new_checked(&frame[off..])?;
    let end = off + g.length() as usize;
    ethernet::check_padding(frame.len(), end, tags, GOOSE_LENGTH_TAIL)?;
    g.check_extension_len()?;
    let shift = |r: Range<usize>| r.start + off..r.end + off;
    Ok(L2View {
        ethertype,
        appid: g.appid(),
        reserved1: g.reserved1(),
        reserved2: g.reserved2(),
        header_offset: off,
        apdu: shift(g.apdu_range()),
        extension: g.extension_range().map(shift),
        end,
    })
}

/// The verdict of a datagram's IP and UDP checksums, applied only once it is a session.
type Checksums = Result<(), SecError>;

/// The UDP datagram of an IPv4 packet, `None` for other protocols, with the verdict of its
/// checksums, which [`session_or_other`] applies only to a session: a host that leaves
/// checksums to its NIC is captured with a zero or partial (pseudo-header only) IPv4 or UDP
/// checksum in every frame it sends, and its LLMNR, NBNS or IGMP traffic is no IEC 61850
/// finding.
///
/// The packet is read once: its header here, then the datagram at the offset found
/// ([`ip::locate_udp4`]), never by walking the link header again.
fn ipv4_udp(
    frame: &[u8],
    off: usize,
    trailer: impl Fn(usize) -> Result<(), gander_wire::Error>,
) -> Result<Option<(UdpView, Checksums)>, SecError> {
    let p = Ipv4Packet::new_checked(&frame[off..])?;
    if p.protocol() != ip::PROTOCOL_UDP {
        return Ok(None);
    }
    if p.is_fragment() {
        return Err(SecError::Fragment);
    }
    trailer(off + p.total_len() as usize)?;
    let loc = ip::locate_udp4(frame, off)?;
    let checksums = if !loc.ip_checksum_ok {
        Err(SecError::BadChecksum("IPv4 header"))
    } else if !loc.udp_checksum_ok {
        Err(SecError::BadChecksum("UDP"))
    } else {
        Ok(())
    };
    Ok(Some((
        UdpView {
            ip: IpAddrs::V4 {
                src: loc.src_addr,
                dst: loc.dst_addr,
            },
            ip_offset: loc.ip_offset,
            udp_offset: loc.udp_offset,
            src_port: loc.src_port,
            dst_port: loc.dst_port,
            payload: loc.payload,
            encap: Encap::V4,
        },
        checksums,
    )))
}

/// A datagram is a session if it uses port 102 (either way) or its payload starts `01 40`:
/// a damaged first byte must fail verification, not make the frame "other". Only then do its
/// IP and UDP checksums (`checksums`) count: they are decided on the port and the SPDU
/// identifier first, so that a non-IEC frame is never an IEC 61850 checksum failure.
fn session_or_other(
    profile: Profile,
    frame: &[u8],
    udp: UdpView,
    checksums: Checksums,
) -> Result<Content<'_>, SecError> {
    let p = &frame[udp.payload.clone()];
    if !is_session_datagram(udp.src_port, udp.dst_port, p) {
        return Ok(Content::Other);
    }
    checksums?;
    let pdu = SessionPdu::parse(p, &profile.dialect()).map_err(|e| dialect_hint(profile, p, e))?;
    let secured = session_secured(profile, &pdu);
    Ok(Content::Session(SessionView {
        udp,
        pdu,
        secured,
        profile,
    }))
}

/// Whether a UDP datagram is an IEC 61850-90-5 session by its ports (102 either way) or its
/// payload's first octets (CLTP LI and UD, `01 40`, IEC 61850-90-5 §11.3).
pub fn is_session_datagram(src_port: u16, dst_port: u16, payload: &[u8]) -> bool {
    let cltp = payload.len() >= 2 && payload[0] == CLTP_LI && payload[1] == CLTP_UD;
    cltp || dst_port == SESSION_PORT || src_port == SESSION_PORT
}

/// A session header that does not parse in `profile` but does in another profile's dialect is
/// reported as such, so the user can pick the right `--profile`.
fn dialect_hint(profile: Profile, bytes: &[u8], e: gander_wire::Error) -> SecError {
    for other in Profile::ALL {
        if other != profile && SessionPdu::parse(bytes, &other.dialect()).is_ok() {
            return SecError::WrongProfile {
                error: e,
                reads_as: other.name(),
            };
        }
    }
    SecError::Malformed(e)
}

/// An APDU inside a verified frame, parsed whole into owned values: what a caller that keeps
/// or edits the values builds from an [`ApduView`] ([`ApduView::to_apdu`]); verification
/// itself does not allocate one.
#[derive(Clone, Debug, PartialEq)]
pub enum Apdu {
    /// A GOOSE APDU.
    Goose(GoosePdu),
    /// A sampled-values savPdu.
    Sv(SavPdu),
}

impl Apdu {
    /// Parses the APDU of an element of an SPDU with identifier `si`: exactly one APDU, no
    /// trailing bytes, of the kind the SI announces (a GOOSE SPDU carries GOOSE, so the kind a
    /// rule matches on is the kind the subscriber decodes). A tunnelled SPDU (0xA0) says
    /// nothing about its contents (SecLib writes payload type 0x83 in one), so the APDU's own
    /// tag decides; management SPDUs cannot be checked.
    pub fn of_element(si: SpduId, e: &PayloadElement<'_>) -> Result<Apdu, SecError> {
        Ok(match ApduKind::of_element(si, e)? {
            ApduKind::Goose => {
                let g = GoosePdu::parse(e.apdu)?;
                check_entries(g.all_data.len() == g.num_dat_set_entries as usize)?;
                Apdu::Goose(g)
            }
            ApduKind::Sv => Apdu::Sv(SavPdu::parse(e.apdu)?),
        })
    }

    /// [`Self::of_element`]'s checks (the same errors for the same element) without building
    /// the owned APDU ([`ApduView::of_element`]), for a sender that only has to know the
    /// element is well formed before protecting it.
    pub fn check_element(si: SpduId, e: &PayloadElement<'_>) -> Result<(), SecError> {
        ApduView::of_element(si, e).map(drop)
    }
}

/// An APDU of a payload element checked exactly as [`Apdu::of_element`] checks it (the same
/// verdict and the same error for the same element, property test
/// `session_tests::borrowed_verify_agrees_with_owned`), borrowing the element's octets: the
/// GOOSE references stay checked octets and allData's values stay encoded
/// ([`GooseView`]), an SV savPdu keeps its first ASDU ([`SavView`]). Nothing is allocated;
/// [`ApduView::to_apdu`] gives the owned values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApduView<'a> {
    /// A GOOSE APDU, every field and allData value checked, numDatSetEntries counting them.
    Goose(GooseView<'a>),
    /// A sampled-values savPdu, every ASDU checked.
    Sv(SavView<'a>),
}

impl<'a> ApduView<'a> {
    /// Checks the APDU of an element of an SPDU with identifier `si` (the rules of
    /// [`Apdu::of_element`]) and borrows it.
    pub fn of_element(si: SpduId, e: &PayloadElement<'a>) -> Result<ApduView<'a>, SecError> {
        Ok(match ApduKind::of_element(si, e)? {
            ApduKind::Goose => {
                let g = GooseView::parse(e.apdu)?;
                check_entries(g.entries_match())?;
                ApduView::Goose(g)
            }
            ApduKind::Sv => ApduView::Sv(SavView::parse(e.apdu)?),
        })
    }

    /// The owned APDU (strings copied, allData's values and every ASDU decoded): an explicit
    /// conversion for callers that keep the values beyond the frame.
    pub fn to_apdu(&self) -> Result<Apdu, SecError> {
        Ok(match self {
            ApduView::Goose(g) => Apdu::Goose(g.to_pdu()?),
            ApduView::Sv(s) => Apdu::Sv(s.to_pdu()?),
        })
    }

    /// The counters a verdict reports and the replay check reads.
    pub fn counters(&self) -> ApduCounters {
        match self {
            ApduView::Goose(g) => ApduCounters::Goose {
                st_num: g.st_num,
                sq_num: g.sq_num,
                t: crate::replay::goose_time(&g.t),
            },
            ApduView::Sv(s) => ApduCounters::Sv {
                smp_cnt: s.first.as_ref().map(|a| a.smp_cnt),
            },
        }
    }
}

/// The counters of an APDU (IEC 61850-8-1 stNum/sqNum, IEC 61850-9-2 smpCnt), kept by a
/// verified session for its first element so that a verdict needs no second read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApduCounters {
    /// GOOSE: stNum, sqNum and the time of the state.
    Goose {
        /// stNum.
        st_num: u32,
        /// sqNum.
        sq_num: u32,
        /// `t` as [`crate::replay::goose_time`] orders it (a publisher restart's witness).
        t: u64,
    },
    /// SV: smpCnt of the first ASDU, if the savPdu has one.
    Sv {
        /// smpCnt.
        smp_cnt: Option<u16>,
    },
}

/// IEC 61850-8-1 Table 60: allData carries one value per member of the data set and
/// numDatSetEntries says how many members there are. The wire parsers read an APDU whose two
/// disagree (a capture reports what was sent); a frame gander signs or forwards must not,
/// since a subscriber that maps values to members by position would misread it (fail closed,
/// like any other malformed APDU).
pub(crate) fn check_entries(matches: bool) -> Result<(), SecError> {
    if matches {
        Ok(())
    } else {
        Err(SecError::Malformed(gander_wire::Error::BadValue {
            what: "numDatSetEntries",
            detail: "differs from the number of allData values",
        }))
    }
}

/// Which APDU an element must hold.
enum ApduKind {
    Goose,
    Sv,
}

impl ApduKind {
    /// The kind the SPDU identifier announces (see [`Apdu::of_element`]).
    fn of_element(si: SpduId, e: &PayloadElement<'_>) -> Result<ApduKind, SecError> {
        let wrong_type = || {
            Err(SecError::Malformed(gander_wire::Error::BadValue {
                what: "payload type",
                detail: "does not match the SPDU identifier",
            }))
        };
        match si {
            SpduId::Goose if e.payload_type == SpduId::Goose.payload_type() => Ok(ApduKind::Goose),
            SpduId::SampledValues if e.payload_type == SpduId::SampledValues.payload_type() => {
                Ok(ApduKind::Sv)
            }
            SpduId::Goose | SpduId::SampledValues => wrong_type(),
            SpduId::Tunnelled => match e.apdu.first() {
                Some(&gander_wire::goose::TAG_GOOSE_PDU) => Ok(ApduKind::Goose),
                Some(&gander_wire::sv::TAG_SAV_PDU) => Ok(ApduKind::Sv),
                _ => Err(SecError::Unsupported(
                    "a tunnelled element that is neither GOOSE nor SV cannot be checked",
                )),
            },
            SpduId::Management => Err(SecError::Unsupported("management SPDUs cannot be checked")),
        }
    }
}

/// What verified, with every layer checked.
///
/// Every frame is checked by borrowing views ([`ExtensionView`], [`GooseView`], [`SavView`],
/// [`ApduView`] for each payload element of a session) that accept exactly what the owned
/// parsers accept but copy nothing: verifying a layer-2 frame or a MAC-only R-GOOSE/R-SV
/// frame on the gateway's path allocates nothing (an encrypted SPDU is decrypted into a
/// copy). `to_pdu`/`to_extension`/[`ApduView::to_apdu`] give the owned values.
#[derive(Clone, Debug)]
pub enum Verified<'a> {
    /// Layer-2 GOOSE.
    Goose {
        /// Key id.
        key_id: u32,
        /// The extension.
        extension: ExtensionView<'a>,
        /// APPID.
        appid: u16,
        /// The APDU, every field checked, the values inside allData included
        /// ([`GooseView::parse`]).
        apdu: GooseView<'a>,
        /// MAC or signature algorithm name.
        algorithm: &'static str,
    },
    /// Layer-2 SV (IEC 61850-9-2 with the IEC 62351-6 extension).
    Sv {
        /// Key id.
        key_id: u32,
        /// The extension.
        extension: ExtensionView<'a>,
        /// APPID.
        appid: u16,
        /// The savPdu, every ASDU checked; at least one.
        apdu: SavView<'a>,
        /// MAC or signature algorithm name.
        algorithm: &'static str,
    },
    /// An R-GOOSE/R-SV SPDU.
    Session {
        /// The verified SPDU (cleartext).
        session: VerifiedSession<'a>,
        /// Number of payload elements, one APDU each, every one checked whole
        /// ([`ApduView::of_element`]); [`Verified::apdus`] reads them.
        elements: usize,
        /// The counters of the first element's APDU.
        first: ApduCounters,
        /// APPID of the first payload element.
        appid: u16,
        /// Whether another element carries a different APPID.
        mixed_appids: bool,
    },
}

impl Verified<'_> {
    /// Key id that verified the frame.
    pub fn key_id(&self) -> u32 {
        match self {
            Verified::Goose { key_id, .. } | Verified::Sv { key_id, .. } => *key_id,
            Verified::Session { session, .. } => session.protection().key_id,
        }
    }
    /// APPID (of the first payload element).
    pub fn appid(&self) -> u16 {
        match self {
            Verified::Goose { appid, .. }
            | Verified::Sv { appid, .. }
            | Verified::Session { appid, .. } => *appid,
        }
    }
    /// MAC and encryption algorithm names.
    pub fn algorithms(&self) -> (&'static str, &'static str) {
        match self {
            Verified::Goose { algorithm, .. } | Verified::Sv { algorithm, .. } => {
                (algorithm, "none")
            }
            Verified::Session { session, .. } => {
                let p = session.protection();
                (p.mac.name(), p.enc.name())
            }
        }
    }
    /// stNum/sqNum of the (first) GOOSE APDU.
    pub fn st_sq(&self) -> Option<(u32, u32)> {
        match self {
            Verified::Goose { apdu, .. } => Some((apdu.st_num, apdu.sq_num)),
            Verified::Sv { .. } => None,
            Verified::Session { first, .. } => match *first {
                ApduCounters::Goose { st_num, sq_num, .. } => Some((st_num, sq_num)),
                ApduCounters::Sv { .. } => None,
            },
        }
    }
    /// smpCnt of the (first) SV ASDU.
    pub fn smp_cnt(&self) -> Option<u16> {
        match self {
            Verified::Sv { apdu, .. } => apdu.first.as_ref().map(|a| a.smp_cnt),
            Verified::Session { first, .. } => match *first {
                ApduCounters::Sv { smp_cnt } => smp_cnt,
                ApduCounters::Goose { .. } => None,
            },
            Verified::Goose { .. } => None,
        }
    }
    /// The replay-check input (authenticated fields only); `at_ns` is the receiver's monotonic
    /// clock at arrival (or the capture time), which only layer-2 SV uses
    /// ([`crate::replay::SvCounter`]).
    pub fn freshness(&self, at_ns: u64) -> Freshness<'_> {
        match self {
            Verified::Sv {
                key_id,
                appid,
                apdu,
                ..
            } => {
                // `verify_l2` refuses a savPdu without ASDUs, so `first` is always there.
                let first = apdu.first.as_ref();
                // smpMod 1 (IEC 61850-9-2 Ed.2): smpRate counts samples per second, which is
                // where smpCnt wraps.
                let rate = first
                    .filter(|a| a.smp_mod == Some(1))
                    .and_then(|a| a.smp_rate);
                Freshness::Sv {
                    key_id: *key_id,
                    appid: *appid,
                    sv_id: first.map_or("", |a| a.sv_id),
                    smp_cnt: first.map_or(0, |a| a.smp_cnt),
                    rate,
                    at_ns,
                }
            }
            Verified::Goose {
                key_id,
                appid,
                apdu,
                ..
            } => Freshness::Goose {
                key_id: *key_id,
                appid: *appid,
                gocb_ref: apdu.gocb_ref.as_bytes(),
                st: apdu.st_num,
                sq: apdu.sq_num,
                t: crate::replay::goose_time(&apdu.t),
            },
            Verified::Session {
                session,
                appid,
                first,
                ..
            } => Freshness::Spdu {
                key_id: session.protection().key_id,
                spdu_id: session.header().spdu_id.to_u8(),
                appid: *appid,
                number: session.header().spdu_number,
                t: match *first {
                    ApduCounters::Goose { t, .. } => Some(t),
                    ApduCounters::Sv { .. } => None,
                },
            },
        }
    }
    /// The APDUs, in order, borrowed (the one of a layer-2 frame, or one per payload
    /// element of a session, read again from the verified payload with the checks
    /// verification ran: nothing is kept per element, so a caller that never asks pays
    /// nothing). Each is `Ok` on a verified frame; [`ApduView::to_apdu`] gives owned values.
    pub fn apdus(&self) -> impl Iterator<Item = Result<ApduView<'_>, SecError>> + '_ {
        let (one, session) = match self {
            Verified::Goose { apdu, .. } => (Some(ApduView::Goose(apdu.clone())), None),
            Verified::Sv { apdu, .. } => (Some(ApduView::Sv(apdu.clone())), None),
            Verified::Session { session, .. } => (
                None,
                Some((session.header().spdu_id, session.each_element())),
            ),
        };
        one.map(Ok).into_iter().chain(
            session
                .into_iter()
                .flat_map(|(si, elements)| elements.map(move |e| ApduView::of_element(si, &e?))),
        )
    }
    /// Whether the payload elements carry more than one APPID.
    pub fn mixed_appids(&self) -> bool {
        matches!(
            self,
            Verified::Session {
                mixed_appids: true,
                ..
            }
        )
    }
}

/// The result of [`verify`].
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // made once per frame and consumed at once: no boxing
pub enum Judged<'a> {
    /// Secured, authenticated and well formed at every layer.
    Verified(Verified<'a>),
    /// Carries no security.
    Unsecured,
}

/// Authenticates a classified IEC 61850 frame statelessly (no replay check) and parses every
/// layer behind the authentication: payload elements, and the GOOSE/SV APDU of each. The key
/// must be valid at `now` and allowed for every APPID the frame carries (its `appids`).
pub fn verify<'a>(
    profile: Profile,
    store: &KeyStore,
    view: &FrameView<'a>,
    now: u64,
) -> Result<Judged<'a>, SecError> {
    match &view.content {
        Content::Other => Err(SecError::Unsupported("not IEC 61850 traffic")),
        Content::L2(l) if l.ethertype == ethernet::ETHERTYPE_GSE_MANAGEMENT => {
            if l.secured() {
                Err(SecError::Unsupported(
                    "IEC 62351-6 defines no security for GSE management",
                ))
            } else {
                Ok(Judged::Unsecured)
            }
        }
        Content::L2(l) => verify_l2(profile, store, view.frame, l, now),
        Content::Session(s) => {
            let pdu = s.pdu.clone();
            match spdu::verify_pdu(profile, store, pdu, now)? {
                spdu::Checked::Unsecured(_) => Ok(Judged::Unsecured),
                spdu::Checked::Verified(v) => {
                    let key = store.require(v.protection().key_id)?;
                    let si = v.header().spdu_id;
                    // One pass over the elements (their framing was checked whole when the
                    // SPDU verified): each APPID against the key, each APDU checked through
                    // its borrowed view, in order, so the first failure is the one the owned
                    // parse met first. Only the first APDU's counters are kept.
                    let mut first: Option<(u16, ApduCounters)> = None;
                    let mut elements = 0usize;
                    let mut mixed_appids = false;
                    for e in v.each_element() {
                        let e = e?;
                        key.check_appid(e.appid)?;
                        let apdu = ApduView::of_element(si, &e)?;
                        match first {
                            None => first = Some((e.appid, apdu.counters())),
                            Some((a, _)) => mixed_appids |= e.appid != a,
                        }
                        elements += 1;
                    }
                    let Some((appid, first)) = first else {
                        return Err(SecError::Malformed(gander_wire::Error::MissingField(
                            "payload element",
                        )));
                    };
                    Ok(Judged::Verified(Verified::Session {
                        session: v,
                        elements,
                        first,
                        appid,
                        mixed_appids,
                    }))
                }
            }
        }
    }
}

/// A savPdu with at least one ASDU (IEC 61850-9-2 clause 8.5: noASDU is 1..65535), whose first
/// ASDU names the stream and carries the smpCnt the replay check reads; checked whole, without
/// copying.
pub(crate) fn sav_view(apdu: &[u8]) -> Result<SavView<'_>, SecError> {
    let pdu = SavView::parse(apdu)?;
    if pdu.first.is_none() {
        return Err(SecError::Malformed(gander_wire::Error::MissingField(
            "ASDU",
        )));
    }
    Ok(pdu)
}

/// The CRC byte order a profile writes in Reserved2.
pub(crate) fn crc_order(profile: Profile) -> CrcByteOrder {
    match profile {
        Profile::Libiec61850 => CrcByteOrder::LowFirst,
        _ => CrcByteOrder::HighFirst,
    }
}

/// Layer-2 GOOSE or SV (the same extension and coverage, IEC 62351-6 clause 8 for both).
fn verify_l2<'a>(
    profile: Profile,
    store: &KeyStore,
    frame: &'a [u8],
    l: &L2View,
    now: u64,
) -> Result<Judged<'a>, SecError> {
    let Some(ext_range) = l.extension.clone() else {
        return Ok(Judged::Unsecured);
    };
    let ext = ExtensionView::parse(&frame[ext_range.clone()])?;
    // Reserved2 must hold the header CRC in the byte order this profile writes. Compared as
    // written, not through `CrcByteOrder::detect`: a CRC whose two octets are equal reads as
    // either order, and detection would name the other one (found by `fuzz_verify`).
    let crc = l2_extension::header_crc(l.ethertype, l.appid, l.length(), l.reserved1);
    if l.reserved2 != crc_order(profile).reserved2(crc) {
        return Err(SecError::Malformed(gander_wire::Error::BadChecksum {
            what: "IEC 62351-6 header CRC",
            computed: crc,
            found: l.reserved2,
        }));
    }
    let key = store.require(ext.key_id)?;
    key.check_valid_at(now)?;
    profile.check_algorithms(key.mac, key.enc)?;
    // The MAC covers the EtherType that names the payload through the AuthenticationValue
    // element; the tag stack and addresses in front of it are not covered.
    let covered = &frame[l.header_offset - 2..ext_range.start + ext.layout.auth_value.end];
    let algorithm = verify_l2_tag(key, &ext, covered)?;
    key.check_appid(l.appid)?;
    let apdu = &frame[l.apdu.clone()];
    if l.ethertype == ethernet::ETHERTYPE_SV {
        return Ok(Judged::Verified(Verified::Sv {
            key_id: ext.key_id,
            extension: ext,
            appid: l.appid,
            apdu: sav_view(apdu)?,
            algorithm,
        }));
    }
    Ok(Judged::Verified(Verified::Goose {
        key_id: ext.key_id,
        extension: ext,
        appid: l.appid,
        // Every field of the APDU is checked, the Data values inside allData included: a MAC
        // binds the bytes to a key holder, not their well-formedness, and a gateway forwards
        // what it verified to an IED's decoder, so a malformed frame is dropped as malformed
        // even when it is authentic (fail closed). The walk costs about 36 ns
        // (docs/bench-crypto.md, "Layer 2 on the frame bytes").
        apdu: {
            let g = GooseView::parse(apdu)?;
            check_entries(g.entries_match())?;
            g
        },
        algorithm,
    }))
}

fn verify_l2_tag(
    key: &KeyEntry,
    ext: &ExtensionView<'_>,
    covered: &[u8],
) -> Result<&'static str, SecError> {
    if let Some(s) = &key.signature {
        let der;
        let sig = if s.algorithm == crate::signature::SignatureAlgorithm::EcdsaP256Sha256 {
            der = crate::signature::ecdsa_raw_to_der(ext.mac).map_err(|_| SecError::BadMac)?;
            &der[..]
        } else {
            ext.mac
        };
        s.verifying
            .verify(covered, sig)
            .map_err(|_| SecError::BadMac)?;
        return Ok(s.algorithm.name());
    }
    if key.enc != EncAlgorithm::None || key.mac == MacAlgorithm::None {
        return Err(SecError::Unsupported(
            "IEC 62351-6 layer-2 GOOSE/SV carries a MAC or signature, not encryption",
        ));
    }
    let mk = key
        .mac_key()
        .ok_or(SecError::Unsupported("key has no MAC"))?;
    if ext.mac.len() != key.mac.tag_len() {
        return Err(SecError::BadMac);
    }
    let iv: &[u8] = if key.mac.needs_iv() {
        match ext.iv {
            Some(iv) if iv.len() == key.mac.iv_len() => iv,
            other => return Err(SecError::BadIv(other.map_or(0, <[u8]>::len))),
        }
    } else {
        &[]
    };
    mk.verify(iv, covered, ext.mac)
        .map_err(|_| SecError::BadMac)?;
    Ok(key.mac.name())
}

#[cfg(test)]
mod link_tests;

#[cfg(test)]
mod session_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runts_and_deep_stacks_are_errors_not_other() {
        assert!(classify(Profile::Standard, &[0u8; 13]).is_err());
        let mut f = vec![0u8; 12];
        for _ in 0..=ethernet::MAX_TAGS {
            f.extend_from_slice(&[0x88, 0xa8, 0, 1]);
        }
        f.extend_from_slice(&[0x88, 0xb8]);
        f.resize(100, 0);
        assert!(matches!(
            classify(Profile::Standard, &f),
            Err(SecError::Malformed(gander_wire::Error::TooManyTags(_)))
        ));
    }

    fn goose_apdu() -> Vec<u8> {
        use gander_wire::data::Data;
        use gander_wire::Codec;
        GoosePdu {
            gocb_ref: "IED/LLN0$GO$gcb01".into(),
            time_allowed_to_live: 2000,
            dat_set: "IED/LLN0$DS1".into(),
            go_id: Some("g".into()),
            t: [0x66, 0, 0, 0, 0, 0, 0, 0x0a],
            st_num: 7,
            sq_num: 3,
            simulation: false,
            conf_rev: 1,
            nds_com: false,
            num_dat_set_entries: 3,
            all_data: vec![Data::Integer(5), Data::Boolean(true), Data::Integer(-3)],
        }
        .to_vec()
    }

    proptest::proptest! {
        /// The allocation-free check accepts and refuses exactly what the owned parse does,
        /// with the same error, on valid and damaged GOOSE, on SV-tagged noise and under each
        /// SPDU identifier.
        #[test]
        fn check_element_agrees_with_of_element(at: usize, byte: u8, cut: usize, noise: Vec<u8>,
                                                si in proptest::sample::select(vec![SpduId::Goose, SpduId::SampledValues, SpduId::Tunnelled]),
                                                pt in proptest::sample::select(vec![0x81u8, 0x82, 0x83])) {
            let mut goose = goose_apdu();
            let i = at % goose.len();
            goose[i] = byte;
            goose.truncate(goose.len() - cut % 3);
            let mut sv = vec![gander_wire::sv::TAG_SAV_PDU, noise.len().min(127) as u8];
            sv.extend(noise.iter().take(127));
            for apdu in [&goose_apdu()[..], &goose[..], &sv[..]] {
                let e = PayloadElement { payload_type: pt, simulation: 0, appid: 1, apdu };
                let owned = Apdu::of_element(si, &e).map(drop).map_err(|e| e.to_string());
                let checked = Apdu::check_element(si, &e).map_err(|e| e.to_string());
                proptest::prop_assert_eq!(owned, checked);
            }
        }
    }

    #[test]
    fn arp_is_other() {
        let mut f = vec![0xffu8; 60];
        f[12] = 0x08;
        f[13] = 0x06;
        assert_eq!(classify(Profile::Standard, &f).unwrap().kind(), Kind::Other);
    }
}
