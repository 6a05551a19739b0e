//! Ethernet II frames with an optional IEEE 802.1Q tag.
//!
//! GOOSE and SV travel directly in Ethernet frames (IEC 61850-8-1 Annex C, IEC 61850-9-2
//! clause 8.1), normally with an 802.1Q tag carrying the priority (IEC 61850-8-1 C.1 suggests
//! priority 4 for GOOSE) and a VLAN ID; R-GOOSE/R-SV travel over IPv4/UDP
//! (IEC 61850-90-5). The frame check sequence is not part of what captures and sockets
//! hand us, so it is not modelled here.

use crate::{Error, Result};

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
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    /// EtherType, or TPID if the frame is tagged.
    pub const TYPE: Range<usize> = 12..14;
    pub const TCI: Range<usize> = 14..16;
    pub const INNER_TYPE: Range<usize> = 16..18;
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
        let need = if b.len() >= HEADER_LEN && self.outer_type() == ETHERTYPE_VLAN {
            HEADER_LEN + VLAN_TAG_LEN
        } else {
            HEADER_LEN
        };
        if b.len() < need {
            return Err(Error::Truncated {
                what: "Ethernet header",
                need,
                have: b.len(),
            });
        }
        Ok(())
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

    /// The 802.1Q tag, if the frame has one.
    pub fn vlan(&self) -> Option<VlanTag> {
        (self.outer_type() == ETHERTYPE_VLAN).then(|| {
            let b = &self.buffer.as_ref()[field::TCI];
            VlanTag::from_tci(u16::from_be_bytes([b[0], b[1]]))
        })
    }

    /// Offset of the EtherType that names the payload (12 untagged, 16 tagged). IEC 62351-6
    /// MACs over GOOSE start here.
    pub fn ethertype_offset(&self) -> usize {
        if self.outer_type() == ETHERTYPE_VLAN {
            field::INNER_TYPE.start
        } else {
            field::TYPE.start
        }
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

/// The owned header of an Ethernet II frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EthernetRepr {
    pub dst: Address,
    pub src: Address,
    pub vlan: Option<VlanTag>,
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

    /// Header length: 14, or 18 with a tag.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + if self.vlan.is_some() { VLAN_TAG_LEN } else { 0 }
    }

    /// Write the header into the start of `buf`; returns the payload offset.
    ///
    /// # Panics
    /// If `buf` is shorter than `buffer_len()` (a caller bug).
    pub fn emit(&self, buf: &mut [u8]) -> usize {
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
                      ethertype in any::<u16>().prop_filter("not a TPID", |t| *t != ETHERTYPE_VLAN)) {
            let r = EthernetRepr { dst, src, vlan, ethertype };
            let mut buf = vec![0xa5; r.buffer_len()];
            prop_assert_eq!(r.emit(&mut buf), r.buffer_len());
            let (p, off) = EthernetRepr::parse_bytes(&buf).unwrap();
            prop_assert_eq!(p, r);
            prop_assert_eq!(off, r.buffer_len());
        }

        #[test]
        fn canonical_bytes_round_trip(data in proptest::collection::vec(any::<u8>(), 14..40)) {
            if let Ok((r, off)) = EthernetRepr::parse_bytes(&data) {
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
