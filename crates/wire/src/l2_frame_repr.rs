//! Layer-2 GOOSE/SV frames as values that borrow their APDU (and extension), in the one
//! encoder shape of issue 23 item 3 (smoltcp's `Repr`): [`L2FrameRepr::buffer_len`],
//! [`L2FrameRepr::emit`] into the caller's buffer, `to_vec` only as a helper.
//!
//! The packet path builds layer-2 frames from bytes it already holds: translating an R-GOOSE
//! element to layer-2 GOOSE writes the element's APDU behind a new Ethernet header, and nothing
//! there needs the APDU copied into a value of its own first. The owned
//! [`crate::l2_frame::GooseFrameRepr`] and [`crate::l2_frame::L2Frame`] stay for tests and
//! fixtures that build frames from values; they emit through these.
//!
//! Layout (IEC 61850-8-1 Annex C, Figure C.1; IEC 61850-9-2 clause 8.2 for SV): APPID,
//! Length (8 + APDU + extension), Reserved1, Reserved2, the APDU, the IEC 62351-6 extension.

use crate::ethernet::{EthernetRepr, Frame};
use crate::l2_frame::{GooseFrame, L2Layout, HEADER_LEN, RESERVED1_SIMULATION};
use crate::{Codec, Error, Result};

/// Field positions of the layer-2 header from APPID (IEC 61850-8-1 Figure C.1).
mod field {
    use core::ops::Range;
    pub(super) const APPID: Range<usize> = 0..2;
    pub(super) const LENGTH: Range<usize> = 2..4;
    pub(super) const RESERVED1: Range<usize> = 4..6;
    pub(super) const RESERVED2: Range<usize> = 6..8;
}

/// The layer-2 GOOSE/SV body from APPID on, its APDU and extension borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2BodyRepr<'a> {
    /// APPID: application identifier (IEC 61850-8-1 C.2.3).
    pub appid: u16,
    /// Reserved1 as written (simulation bit, IEC 62351-6 extension length).
    pub reserved1: u16,
    /// Reserved2 as written (IEC 62351-6 header CRC, or 0).
    pub reserved2: u16,
    /// The APDU element, tag and length included.
    pub apdu: &'a [u8],
    /// The IEC 62351-6 security extension, if any.
    pub extension: Option<&'a [u8]>,
}

impl<'a> L2BodyRepr<'a> {
    /// A body without security, as a legacy publisher writes it: Reserved1 carries only the
    /// simulation bit, Reserved2 is 0 (IEC 61850-8-1 Annex C).
    pub fn unsecured(appid: u16, simulation: bool, apdu: &'a [u8]) -> Self {
        L2BodyRepr {
            appid,
            reserved1: if simulation { RESERVED1_SIMULATION } else { 0 },
            reserved2: 0,
            apdu,
            extension: None,
        }
    }

    /// Reads the body that starts at APPID in `b`, borrowing its APDU and extension. An
    /// extension must match the length Reserved1 announces (IEC 62351-6).
    pub fn parse_bytes(b: &'a [u8]) -> Result<Self> {
        let frame = GooseFrame::new_checked(b)?;
        frame.check_extension_len()?;
        Ok(L2BodyRepr {
            appid: frame.appid(),
            reserved1: frame.reserved1(),
            reserved2: frame.reserved2(),
            apdu: &b[frame.apdu_range()],
            extension: frame.extension_range().map(|r| &b[r]),
        })
    }

    /// The simulation bit of Reserved1.
    pub fn simulation(&self) -> bool {
        self.reserved1 & RESERVED1_SIMULATION != 0
    }

    /// Octets from APPID to the end of the extension: the Length field's value.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.apdu.len() + self.extension.map_or(0, <[u8]>::len)
    }

    /// The Length field, if the body fits its 16 bits.
    fn length(&self) -> Result<u16> {
        u16::try_from(self.buffer_len()).map_err(|_| Error::TooLarge {
            what: "GOOSE Length",
        })
    }

    /// Writes the body at the start of `buf`, Length computed; returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// [`Error::TooLarge`] if the body exceeds 65535 octets; [`Error::Truncated`] if `buf` is
    /// shorter than [`Self::buffer_len`]. Nothing is written then.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let length = self.length()?;
        let len = self.buffer_len();
        check_room(buf, len)?;
        buf[field::APPID].copy_from_slice(&self.appid.to_be_bytes());
        buf[field::LENGTH].copy_from_slice(&length.to_be_bytes());
        buf[field::RESERVED1].copy_from_slice(&self.reserved1.to_be_bytes());
        buf[field::RESERVED2].copy_from_slice(&self.reserved2.to_be_bytes());
        let apdu_end = HEADER_LEN + self.apdu.len();
        buf[HEADER_LEN..apdu_end].copy_from_slice(self.apdu);
        if let Some(ext) = self.extension {
            buf[apdu_end..len].copy_from_slice(ext);
        }
        Ok(len)
    }
}

fn check_room(buf: &[u8], need: usize) -> Result<()> {
    if buf.len() < need {
        return Err(Error::Truncated {
            what: "layer-2 output buffer",
            need,
            have: buf.len(),
        });
    }
    Ok(())
}

/// A whole Ethernet frame carrying GOOSE or SV, its APDU and extension borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2FrameRepr<'a> {
    /// The Ethernet header (its EtherType names GOOSE or SV).
    pub eth: EthernetRepr,
    /// The body from APPID on.
    pub body: L2BodyRepr<'a>,
}

impl<'a> L2FrameRepr<'a> {
    /// Parses an Ethernet frame whose EtherType is GOOSE or SV, borrowing its APDU and
    /// extension: the checks of [`crate::l2_frame::L2Frame::parse`] (padding after Length
    /// allowed, anything else after it refused), without copying.
    pub fn parse(frame: &'a [u8]) -> Result<(Self, L2Layout)> {
        let (_, layout) = crate::l2_frame::locate(frame)?;
        let eth = EthernetRepr::parse(&Frame::new_checked(frame)?)?;
        let body = L2BodyRepr::parse_bytes(&frame[layout.header_offset..])?;
        Ok((L2FrameRepr { eth, body }, layout))
    }

    /// Size of the frame (no padding).
    pub fn buffer_len(&self) -> usize {
        self.eth.buffer_len() + self.body.buffer_len()
    }

    /// Writes the frame at the start of `buf` (no padding to the minimum frame size: the NIC
    /// pads); returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// [`Error::TooLarge`] if the body exceeds 65535 octets; [`Error::Truncated`] if `buf` is
    /// too short. Nothing is written then.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        self.body.length()?;
        check_room(buf, self.buffer_len())?;
        let off = self.eth.emit(buf);
        Ok(off + self.body.emit(&mut buf[off..])?)
    }

    /// The frame as a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        self.body.length()?;
        let mut out = vec![0u8; self.buffer_len()];
        self.emit(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ethernet::{tests::arb_vlan, ETHERTYPE_GOOSE, ETHERTYPE_SV};
    use crate::l2_frame::{GooseFrameRepr, L2Frame};
    use proptest::prelude::*;

    /// A well-formed BER element of `len` content octets (what `GooseFrame::new_checked`
    /// reads as the APDU).
    fn apdu(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut a = vec![tag];
        let n = content.len();
        if n < 128 {
            a.push(n as u8);
        } else {
            a.extend_from_slice(&[0x82, (n >> 8) as u8, n as u8]);
        }
        a.extend_from_slice(content);
        a
    }

    #[test]
    fn oversized_body_is_refused() {
        let big = vec![0u8; 65_536 - HEADER_LEN];
        let body = L2BodyRepr::unsecured(1, false, &big);
        assert_eq!(
            body.emit(&mut vec![0; body.buffer_len()]),
            Err(Error::TooLarge {
                what: "GOOSE Length"
            })
        );
        let f = L2FrameRepr {
            eth: EthernetRepr {
                dst: [1; 6],
                src: [2; 6],
                vlan: None,
                ethertype: ETHERTYPE_GOOSE,
            },
            body,
        };
        assert!(matches!(f.to_vec(), Err(Error::TooLarge { .. })));
        let fits = L2BodyRepr::unsecured(1, false, &big[1..]);
        assert_eq!(fits.emit(&mut vec![0; fits.buffer_len()]), Ok(65_535));
    }

    proptest! {
        /// parse(emit(x)) == x, `buffer_len` is what `emit` writes, the owned form writes the
        /// same octets, and every shorter buffer is an error that writes nothing.
        #[test]
        fn round_trip_and_short_buffers(vlan in arb_vlan(), sv: bool, appid: u16, sim: bool,
                                        reserved2: u16,
                                        content in proptest::collection::vec(any::<u8>(), 0..300),
                                        ext in proptest::option::of(proptest::collection::vec(any::<u8>(), 1..60)),
                                        cut in 1usize..100) {
            let a = apdu(if sv { 0x60 } else { 0x61 }, &content);
            let reserved1 = (if sim { RESERVED1_SIMULATION } else { 0 })
                | ext.as_ref().map_or(0, |e| e.len() as u16);
            let x = L2FrameRepr {
                eth: EthernetRepr { dst: [1; 6], src: [2; 6], vlan,
                                    ethertype: if sv { ETHERTYPE_SV } else { ETHERTYPE_GOOSE } },
                body: L2BodyRepr { appid, reserved1, reserved2, apdu: &a, extension: ext.as_deref() },
            };
            let mut buf = vec![0xa5; x.buffer_len() + 5];
            prop_assert_eq!(x.emit(&mut buf).unwrap(), x.buffer_len());
            let f = &buf[..x.buffer_len()];
            let (y, layout) = L2FrameRepr::parse(f).unwrap();
            prop_assert_eq!(y, x);
            prop_assert_eq!(&f[layout.apdu], &a[..]);
            let owned = L2Frame {
                eth: x.eth,
                body: GooseFrameRepr {
                    appid, reserved1, reserved2, apdu: a.clone(), extension: ext.clone(),
                },
            };
            prop_assert_eq!(&owned.to_vec().unwrap()[..], f);
            prop_assert_eq!(&x.to_vec().unwrap()[..], f);
            let short = x.buffer_len().saturating_sub(cut);
            let mut small = vec![0x3c; short];
            let is_truncated = matches!(x.emit(&mut small), Err(Error::Truncated { .. }));
            prop_assert!(is_truncated);
            prop_assert!(small.iter().all(|&b| b == 0x3c));
        }

        /// Arbitrary bytes never panic the borrowed parse, and what parses re-emits to a frame
        /// that parses to the same value.
        #[test]
        fn arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..120), goose: bool) {
            let mut data = data;
            if data.len() > 14 {
                let t = if goose { ETHERTYPE_GOOSE } else { ETHERTYPE_SV };
                data[12..14].copy_from_slice(&t.to_be_bytes());
            }
            if let Ok((x, _)) = L2FrameRepr::parse(&data) {
                let again = x.to_vec().unwrap();
                prop_assert_eq!(L2FrameRepr::parse(&again).unwrap().0, x);
            }
        }
    }
}
