//! Ethernet II frames behind any stack of IEEE 802.1Q / 802.1ad tags.
//!
//! GOOSE and SV travel directly in Ethernet frames (IEC 61850-8-1 Annex C, IEC 61850-9-2
//! clause 8.1), normally with an 802.1Q tag carrying the priority (IEC 61850-8-1 C.1 suggests
//! priority 4 for GOOSE) and a VLAN ID; R-GOOSE/R-SV travel over IPv4/UDP
//! (IEC 61850-90-5). The frame check sequence is not part of what captures and sockets
//! hand us, so it is not modelled here.
//!
//! A frame may carry several tags: an 802.1ad service tag (TPID 0x88A8) in front of an 802.1Q
//! customer tag, two 802.1Q tags, or the pre-standard QinQ TPIDs 0x9100/0x9200/0x9300 some
//! switches still write. Linux removes the outer 802.1Q/802.1ad tag on receipt and keeps
//! removing priority tags (VID 0) at any depth, and libiec61850's GOOSE receiver skips one
//! 802.1Q tag, so an IED may read the payload of any such stack as GOOSE or IP. [`Frame`]
//! therefore walks the whole stack to the EtherType that names the payload; a stack deeper than
//! [`MAX_TAGS`] is refused rather than guessed at.

use crate::{Codec, Error, Result};

/// EtherType of IEC 61850-8-1 GOOSE (IEC 61850-8-1 Annex C, Table C.2).
pub const ETHERTYPE_GOOSE: u16 = 0x88b8;
/// EtherType of IEC 61850-9-2 sampled values.
pub const ETHERTYPE_SV: u16 = 0x88ba;
/// EtherType of IPv4 (RFC 894).
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6 (RFC 2464).
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
/// Tag protocol identifier of an IEEE 802.1Q tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// Tag protocol identifier of an IEEE 802.1ad service tag (S-tag).
pub const ETHERTYPE_SERVICE_VLAN: u16 = 0x88a8;
/// Pre-standard QinQ tag protocol identifiers still written by some switches.
pub const ETHERTYPE_QINQ_LEGACY: [u16; 3] = [0x9100, 0x9200, 0x9300];
/// EtherType of IEC 61850-8-1 GSE management (GOOSE/GSSE management services).
pub const ETHERTYPE_GSE_MANAGEMENT: u16 = 0x88b9;
/// The deepest tag stack a frame may carry before it is refused. Real networks use one or
/// two tags; the bound keeps the walk finite and makes "too deep" an explicit error.
pub const MAX_TAGS: usize = 8;

/// Whether `len - end` bytes after the end of a payload at `end` can be Ethernet padding: a
/// sender pads a short frame up to the 60-octet minimum (IEEE 802.3 clause 4.2.3.3), plus 4 per
/// tag where a bridge inserted one without re-padding. Anything longer is not padding but bytes
/// an IED could read, and is refused.
pub fn is_padding(len: usize, end: usize, tags: usize) -> bool {
    end >= len || len <= MIN_FRAME_LEN + VLAN_TAG_LEN * tags
}

/// [`is_padding`] as a check: the bytes of a `len`-byte frame after `end` (where the layer
/// named `what` ends) must be Ethernet padding.
pub fn check_padding(len: usize, end: usize, tags: usize, what: &'static str) -> Result<()> {
    if is_padding(len, end, tags) {
        Ok(())
    } else {
        Err(Error::TrailingBytes {
            what,
            count: len - end,
        })
    }
}

/// Whether `t` is the TPID of a VLAN tag (802.1Q, 802.1ad or a pre-standard QinQ TPID).
pub fn is_tpid(t: u16) -> bool {
    t == ETHERTYPE_VLAN || t == ETHERTYPE_SERVICE_VLAN || ETHERTYPE_QINQ_LEGACY.contains(&t)
}

/// Length of the untagged header: destination, source, EtherType.
pub const HEADER_LEN: usize = 14;
/// Length of an 802.1Q tag (TPID + TCI).
pub const VLAN_TAG_LEN: usize = 4;
/// Minimum frame size without the FCS (IEEE 802.3 clause 3.2.8: 64 octets with FCS).
pub const MIN_FRAME_LEN: usize = 60;

/// A six-octet MAC address.
pub type Address = [u8; 6];

mod field {
    use core::ops::Range;
    pub(super) const DST: Range<usize> = 0..6;
    pub(super) const SRC: Range<usize> = 6..12;
    /// EtherType, or TPID if the frame is tagged.
    pub(super) const TYPE: Range<usize> = 12..14;
    pub(super) const TCI: Range<usize> = 14..16;
}

/// One tag of a stack: its TPID and tag control information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tag {
    /// Tag protocol identifier (0x8100, 0x88A8, 0x9100, ...).
    pub tpid: u16,
    /// Priority, DEI and VLAN id.
    pub tag: VlanTag,
}

/// Walks the tag stack of `b` (which holds at least the 14-byte header); returns the offset of
/// the EtherType that names the payload and the number of tags.
fn walk_tags(b: &[u8]) -> Result<(usize, usize)> {
    let mut at = field::TYPE.start;
    let mut depth = 0;
    loop {
        if b.len() < at + 2 {
            return Err(Error::Truncated {
                what: "Ethernet header",
                need: at + 2,
                have: b.len(),
            });
        }
        if !is_tpid(u16::from_be_bytes([b[at], b[at + 1]])) {
            return Ok((at, depth));
        }
        depth += 1;
        if depth > MAX_TAGS {
            return Err(Error::TooManyTags(MAX_TAGS));
        }
        at += VLAN_TAG_LEN;
    }
}

/// The 802.1Q tag control information (IEEE 802.1Q clause 9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct VlanTag {
    /// Priority code point, 0..=7.
    pub pcp: u8,
    /// Drop eligible indicator (formerly CFI).
    pub dei: bool,
    /// VLAN identifier, 0..=4095 (0: priority tag only).
    pub vid: u16,
}

impl VlanTag {
    /// Split a TCI into its fields.
    pub fn from_tci(tci: u16) -> Self {
        VlanTag {
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0fff,
        }
    }

    /// The TCI; fields out of range are masked to their width.
    pub fn tci(&self) -> u16 {
        ((self.pcp as u16 & 0x7) << 13) | ((self.dei as u16) << 12) | (self.vid & 0x0fff)
    }
}

/// A zero-copy view of an Ethernet II frame.
#[derive(Debug, Clone)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wrap a buffer without checking it; accessors may panic until [`Frame::check_len`] passes.
    pub fn new_unchecked(buffer: T) -> Self {
        Frame { buffer }
    }

    /// Wrap a buffer and check that the header (with its tag, if any) is present.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let f = Frame::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// Check that the header fits; after success no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated {
                what: "Ethernet header",
                need: HEADER_LEN,
                have: b.len(),
            });
        }
        walk_tags(b).map(|_| ())
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn outer_type(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::TYPE];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Destination address.
    pub fn dst_addr(&self) -> Address {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::DST]);
        a
    }

    /// Source address.
    pub fn src_addr(&self) -> Address {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::SRC]);
        a
    }

    /// The outermost tag's control information, if the frame is tagged (any TPID).
    pub fn vlan(&self) -> Option<VlanTag> {
        is_tpid(self.outer_type()).then(|| {
            let b = &self.buffer.as_ref()[field::TCI];
            VlanTag::from_tci(u16::from_be_bytes([b[0], b[1]]))
        })
    }

    /// Number of tags in front of the EtherType.
    pub fn tag_count(&self) -> usize {
        (self.ethertype_offset() - field::TYPE.start) / VLAN_TAG_LEN
    }

    /// The `i`-th tag from the outside, if there is one.
    pub fn tag(&self, i: usize) -> Option<Tag> {
        if i >= self.tag_count() {
            return None;
        }
        let at = field::TYPE.start + i * VLAN_TAG_LEN;
        let b = self.buffer.as_ref();
        Some(Tag {
            tpid: u16::from_be_bytes([b[at], b[at + 1]]),
            tag: VlanTag::from_tci(u16::from_be_bytes([b[at + 2], b[at + 3]])),
        })
    }

    /// Offset of the EtherType that names the payload (12 untagged, 16 behind one tag, 20
    /// behind two, ...). IEC 62351-6 MACs over GOOSE start here.
    pub fn ethertype_offset(&self) -> usize {
        walk_tags(self.buffer.as_ref()).map_or(field::TYPE.start, |(at, _)| at)
    }

    /// The EtherType of the payload (after the tag, if any).
    pub fn ethertype(&self) -> u16 {
        let o = self.ethertype_offset();
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[o], b[o + 1]])
    }

    /// Offset of the first payload byte.
    pub fn payload_offset(&self) -> usize {
        self.ethertype_offset() + 2
    }

    /// The payload, including any padding up to the minimum frame size.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.payload_offset()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// The payload, mutably.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let o = self.payload_offset();
        &mut self.buffer.as_mut()[o..]
    }
}

/// The owned header of an Ethernet II frame as gander writes it: untagged or one 802.1Q tag.
/// Parsed from a frame with a deeper stack it keeps the outermost tag's TCI and the payload's
/// EtherType only; code that forwards a received frame keeps the received header bytes
/// instead of re-emitting this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EthernetRepr {
    /// Destination MAC address.
    pub dst: Address,
    /// Source MAC address.
    pub src: Address,
    /// The (outermost) tag.
    pub vlan: Option<VlanTag>,
    /// EtherType after any VLAN tag (e.g. [`ETHERTYPE_GOOSE`]).
    pub ethertype: u16,
}

impl EthernetRepr {
    /// Read the header of a checked frame.
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>) -> Result<Self> {
        frame.check_len()?;
        Ok(EthernetRepr {
            dst: frame.dst_addr(),
            src: frame.src_addr(),
            vlan: frame.vlan(),
            ethertype: frame.ethertype(),
        })
    }

    /// Parse the header at the start of `bytes`; returns it and the payload offset.
    pub fn parse_bytes(bytes: &[u8]) -> Result<(Self, usize)> {
        let f = Frame::new_checked(bytes)?;
        Ok((EthernetRepr::parse(&f)?, f.payload_offset()))
    }
}

impl Codec for EthernetRepr {
    /// Header length: 14, or 18 with a tag.
    fn buffer_len(&self) -> usize {
        HEADER_LEN + if self.vlan.is_some() { VLAN_TAG_LEN } else { 0 }
    }

    /// Write the header into the start of `buf`; returns the payload offset.
    fn emit(&self, buf: &mut [u8]) -> usize {
        buf[field::DST].copy_from_slice(&self.dst);
        buf[field::SRC].copy_from_slice(&self.src);
        let mut at = field::TYPE.start;
        if let Some(tag) = self.vlan {
            buf[at..at + 2].copy_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
            buf[at + 2..at + 4].copy_from_slice(&tag.tci().to_be_bytes());
            at += VLAN_TAG_LEN;
        }
        buf[at..at + 2].copy_from_slice(&self.ethertype.to_be_bytes());
        at + 2
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn arb_vlan() -> impl Strategy<Value = Option<VlanTag>> {
        proptest::option::of(
            (0u8..8, any::<bool>(), 0u16..4096).prop_map(|(pcp, dei, vid)| VlanTag {
                pcp,
                dei,
                vid,
            }),
        )
    }

    #[test]
    fn tagged_goose_header() {
        // 01-0C-CD-01-00-01 is in the GOOSE multicast range (IEC 61850-8-1 Annex B).
        let f =
            hex::decode("010ccd010001020000000001 8100 8005 88b8 4001".replace(' ', "")).unwrap();
        let frame = Frame::new_checked(&f[..]).unwrap();
        assert_eq!(
            frame.vlan(),
            Some(VlanTag {
                pcp: 4,
                dei: false,
                vid: 5
            })
        );
        assert_eq!(frame.ethertype(), ETHERTYPE_GOOSE);
        assert_eq!(frame.ethertype_offset(), 16);
        assert_eq!(frame.payload(), &[0x40, 0x01]);
        let r = EthernetRepr::parse(&frame).unwrap();
        let mut buf = [0xa5; 18];
        assert_eq!(r.emit(&mut buf), 18);
        assert_eq!(&buf[..], &f[..18]);
    }

    #[test]
    fn tag_stacks_are_walked_to_the_payload() {
        // S-tag + C-tag, two C-tags, a legacy 0x9100 tag: the payload EtherType is GOOSE.
        for tags in [
            "88a8 0064 8100 8005",
            "8100 0064 8100 8005",
            "9100 0001",
            "8100 0000 88a8 0001 8100 0002",
        ] {
            let hex_frame = format!("010ccd010001020000000001 {tags} 88b8 4001");
            let f = hex::decode(hex_frame.replace(' ', "")).unwrap();
            let frame = Frame::new_checked(&f[..]).unwrap();
            assert_eq!(frame.ethertype(), ETHERTYPE_GOOSE, "{tags}");
            assert_eq!(frame.payload(), &[0x40, 0x01], "{tags}");
            assert_eq!(frame.tag_count(), tags.split(' ').count() / 2, "{tags}");
            assert_eq!(frame.ethertype_offset(), 12 + 4 * frame.tag_count());
        }
        let f = hex::decode("010ccd010001020000000001 88a8 0064 8100 8005 88b8".replace(' ', ""))
            .unwrap();
        let frame = Frame::new_checked(&f[..]).unwrap();
        assert_eq!(
            frame.tag(0).map(|t| (t.tpid, t.tag.vid)),
            Some((0x88a8, 100))
        );
        assert_eq!(frame.tag(1).map(|t| (t.tpid, t.tag.vid)), Some((0x8100, 5)));
        assert_eq!(frame.tag(2), None);
        // One tag too many is refused, not guessed at; a stack cut short is truncated.
        let mut deep = hex::decode("010ccd010001020000000001").unwrap();
        for _ in 0..=MAX_TAGS {
            deep.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
        }
        deep.extend_from_slice(&[0x88, 0xb8]);
        assert_eq!(
            Frame::new_checked(&deep[..]).err(),
            Some(Error::TooManyTags(MAX_TAGS))
        );
        assert!(
            Frame::new_checked(&deep[4..]).is_ok(),
            "exactly MAX_TAGS tags"
        );
        assert!(matches!(
            Frame::new_checked(&f[..19]),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn truncated() {
        assert!(Frame::new_checked(&[0u8; 13][..]).is_err());
        let mut f = [0u8; 16];
        f[12] = 0x81;
        assert_eq!(
            Frame::new_checked(&f[..]).err(),
            Some(Error::Truncated {
                what: "Ethernet header",
                need: 18,
                have: 16
            })
        );
    }

    proptest! {
        #[test]
        fn round_trip(dst: [u8; 6], src: [u8; 6], vlan in arb_vlan(),
                      ethertype in any::<u16>().prop_filter("not a TPID", |t| !is_tpid(*t))) {
            let r = EthernetRepr { dst, src, vlan, ethertype };
            let mut buf = vec![0xa5; r.buffer_len()];
            prop_assert_eq!(r.emit(&mut buf), r.buffer_len());
            let (p, off) = EthernetRepr::parse_bytes(&buf).unwrap();
            prop_assert_eq!(p, r);
            prop_assert_eq!(off, r.buffer_len());
        }

        #[test]
        fn canonical_bytes_round_trip(data in proptest::collection::vec(any::<u8>(), 14..40)) {
            let simple = Frame::new_checked(&data[..]).is_ok_and(|f| {
                f.tag_count() == 0 || (f.tag_count() == 1 && f.tag(0).unwrap().tpid == ETHERTYPE_VLAN)
            });
            if let (true, Ok((r, off))) = (simple, EthernetRepr::parse_bytes(&data)) {
                let mut buf = vec![0xa5; r.buffer_len()];
                r.emit(&mut buf);
                prop_assert_eq!(&buf[..], &data[..off]);
            }
        }

        #[test]
        fn no_panic_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(f) = Frame::new_checked(&data[..]) {
                let _ = (f.dst_addr(), f.src_addr(), f.vlan(), f.ethertype(), f.payload());
            }
        }
    }
}
