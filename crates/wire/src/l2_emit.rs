//! Layer-2 GOOSE/SV frame encoders in the one shape of issue 23 item 3, smoltcp's `Repr`
//! style: a value that borrows what it writes (the received frame, its APDU, the extension's
//! IV), [`SecuredL2Repr::buffer_len`]/[`StrippedL2Repr::buffer_len`] to size the caller's
//! buffer, and `emit(&mut [u8])` to fill it. Nothing is allocated per frame; `to_vec` exists
//! only for callers that want an owned frame.
//!
//! Both encoders take the positions [`crate::l2_frame::locate`] (or the security library's
//! one classification) found, so the headers are located once per frame:
//!
//! * [`SecuredL2Repr`]: the unsecured frame with the IEC 62351-6 extension appended after the
//!   APDU (IEC 62351-6 clause 8; Length, Reserved1's extension length and Reserved2's header
//!   CRC patched), the mAC left zero for the caller to fill.
//! * [`StrippedL2Repr`]: a secured frame without its extension, as a legacy subscriber expects
//!   it (IEC 61850-8-1 Annex C: Reserved1 keeps only the simulation bit, Reserved2 is 0).
//!
//! Everything in front of APPID (addresses and the whole tag stack) is copied byte for byte;
//! Ethernet padding after Length is dropped.

use crate::l2_extension::{self, CrcByteOrder, EncodedExtension, ExtensionFields};
use crate::l2_frame::{
    L2Layout, SecuredLayout, HEADER_LEN, RESERVED1_EXTENSION_LEN, RESERVED1_SIMULATION,
};
use crate::{Error, Result};
use core::ops::Range;

/// Offsets of the header fields from APPID (IEC 61850-8-1 Figure C.1).
const LENGTH: usize = 2;
const RESERVED1: usize = 4;
const RESERVED2: usize = 6;

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
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

/// An unsecured GOOSE or SV frame to be written with the IEC 62351-6 extension appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecuredL2Repr<'a> {
    frame: &'a [u8],
    ethertype: u16,
    ethertype_offset: usize,
    header_offset: usize,
    apdu_end: usize,
    length: u16,
    reserved1: u16,
    extension: EncodedExtension<'a>,
    order: CrcByteOrder,
}

impl<'a> SecuredL2Repr<'a> {
    /// `frame`, located as `layout` behind `ethertype`, secured with the extension `fields`,
    /// the header CRC written in `order`.
    ///
    /// # Errors
    /// [`Error::TooLarge`] if the extension exceeds [`l2_extension::MAX_EXTENSION_LEN`] or
    /// Length 65535; [`Error::BadLength`] if `layout` does not fit `frame` or already has an
    /// extension.
    pub fn new(
        frame: &'a [u8],
        ethertype: u16,
        layout: &L2Layout,
        fields: &ExtensionFields<'a>,
        order: CrcByteOrder,
    ) -> Result<Self> {
        let apdu_end = layout.apdu.end;
        let off = layout.header_offset;
        if layout.extension.is_some()
            || apdu_end > frame.len()
            || off + HEADER_LEN > apdu_end
            || layout.ethertype_offset > off
        {
            return Err(Error::BadLength {
                what: "layer-2 layout",
                value: apdu_end,
            });
        }
        let extension = fields.encode();
        let ext_len = extension.buffer_len();
        if ext_len > l2_extension::MAX_EXTENSION_LEN {
            return Err(Error::TooLarge {
                what: "security extension",
            });
        }
        let length = u16::try_from(apdu_end - off + ext_len).map_err(|_| Error::TooLarge {
            what: "GOOSE Length",
        })?;
        // Reserved1: the simulation bit (and any other high bit) kept, the low 12 bits
        // announcing the extension's size (IEC 62351-6).
        let reserved1 = (be16(frame, off + RESERVED1) & !RESERVED1_EXTENSION_LEN) | ext_len as u16;
        Ok(SecuredL2Repr {
            frame,
            ethertype,
            ethertype_offset: layout.ethertype_offset,
            header_offset: off,
            apdu_end,
            length,
            reserved1,
            extension,
            order,
        })
    }

    /// Size of the secured frame (no padding).
    pub fn buffer_len(&self) -> usize {
        self.apdu_end + self.extension.buffer_len()
    }

    /// Writes the secured frame at the start of `buf`, the mAC zero; returns where the covered
    /// bytes and the mAC are.
    ///
    /// # Errors
    /// [`Error::Truncated`] if `buf` is shorter than [`Self::buffer_len`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<SecuredLayout> {
        check_room(buf, self.buffer_len())?;
        let (h, apdu_end) = (self.header_offset, self.apdu_end);
        buf[..apdu_end].copy_from_slice(&self.frame[..apdu_end]);
        let appid = be16(buf, h);
        let crc = l2_extension::header_crc(self.ethertype, appid, self.length, self.reserved1);
        buf[h + LENGTH..h + LENGTH + 2].copy_from_slice(&self.length.to_be_bytes());
        buf[h + RESERVED1..h + RESERVED1 + 2].copy_from_slice(&self.reserved1.to_be_bytes());
        buf[h + RESERVED2..h + RESERVED2 + 2]
            .copy_from_slice(&self.order.reserved2(crc).to_be_bytes());
        let el = self.extension.emit_placeholder(&mut buf[apdu_end..]);
        Ok(SecuredLayout {
            covered: self.ethertype_offset..apdu_end + el.auth_value.end,
            mac: apdu_end + el.mac.start..apdu_end + el.mac.end,
        })
    }

    /// The secured frame as an owned buffer, with where its covered bytes and mAC are.
    pub fn to_vec(&self) -> Result<(Vec<u8>, SecuredLayout)> {
        let mut out = vec![0; self.buffer_len()];
        let at = self.emit(&mut out)?;
        Ok((out, at))
    }
}

/// A secured (or unsecured) GOOSE or SV frame to be written without its extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrippedL2Repr<'a> {
    frame: &'a [u8],
    header_offset: usize,
    apdu: Range<usize>,
    length: u16,
}

impl<'a> StrippedL2Repr<'a> {
    /// `frame` with APPID at `header_offset` and the APDU element at `apdu` (absolute
    /// offsets, as located), to be written without what follows the APDU.
    ///
    /// # Errors
    /// [`Error::BadLength`] if the APDU does not start right after the eight header octets or
    /// ends past the frame; [`Error::TooLarge`] if Length would exceed 65535.
    pub fn new(frame: &'a [u8], header_offset: usize, apdu: Range<usize>) -> Result<Self> {
        if apdu.start != header_offset + HEADER_LEN
            || apdu.end < apdu.start
            || apdu.end > frame.len()
        {
            return Err(Error::BadLength {
                what: "layer-2 layout",
                value: apdu.end,
            });
        }
        let length = u16::try_from(apdu.end - header_offset).map_err(|_| Error::TooLarge {
            what: "GOOSE Length",
        })?;
        Ok(StrippedL2Repr {
            frame,
            header_offset,
            apdu,
            length,
        })
    }

    /// Size of the frame without its extension (no padding).
    pub fn buffer_len(&self) -> usize {
        self.apdu.end
    }

    /// Writes the frame at the start of `buf`: everything up to APPID and APPID itself as
    /// received, Length counting the APDU only, Reserved1 with only its simulation bit,
    /// Reserved2 zero, then the APDU; returns [`Self::buffer_len`].
    ///
    /// # Errors
    /// [`Error::Truncated`] if `buf` is shorter than [`Self::buffer_len`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let end = self.buffer_len();
        check_room(buf, end)?;
        let h = self.header_offset;
        buf[..end].copy_from_slice(&self.frame[..end]);
        let reserved1 = be16(self.frame, h + RESERVED1) & RESERVED1_SIMULATION;
        buf[h + LENGTH..h + LENGTH + 2].copy_from_slice(&self.length.to_be_bytes());
        buf[h + RESERVED1..h + RESERVED1 + 2].copy_from_slice(&reserved1.to_be_bytes());
        buf[h + RESERVED2..h + RESERVED2 + 2].fill(0);
        Ok(end)
    }

    /// The stripped frame as an owned buffer.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut out = vec![0; self.buffer_len()];
        self.emit(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ethernet::{self, EthernetRepr, VlanTag};
    use crate::l2_frame::{emit_secured, locate, GooseFrameRepr, L2Frame};
    use proptest::prelude::*;

    /// An unsecured frame around a GOOSE-tagged APDU of `apdu_body`, padded to the minimum
    /// frame size as a capture shows it.
    fn frame(
        apdu_body: &[u8],
        appid: u16,
        reserved1: u16,
        vlan: Option<u16>,
        sv: bool,
    ) -> Option<(L2Frame, Vec<u8>)> {
        let mut apdu = Vec::new();
        crate::ber_sink::tlv(&mut apdu, 0x61, apdu_body);
        let f = L2Frame {
            eth: EthernetRepr {
                dst: [1, 0x0c, 0xcd, 1, 0, 1],
                src: [2; 6],
                vlan: vlan.map(|vid| VlanTag {
                    pcp: 4,
                    dei: false,
                    vid,
                }),
                ethertype: if sv {
                    ethernet::ETHERTYPE_SV
                } else {
                    ethernet::ETHERTYPE_GOOSE
                },
            },
            body: GooseFrameRepr {
                appid,
                reserved1,
                reserved2: 0x1234,
                apdu,
                extension: None,
            },
        };
        let mut bytes = f.to_vec().ok()?;
        let min = if vlan.is_some() { 64 } else { 60 };
        if bytes.len() < min {
            bytes.resize(min, 0);
        }
        Some((f, bytes))
    }

    #[test]
    fn short_buffers_are_errors_not_panics() {
        let (_, bytes) = frame(&[0x80, 1, 0x41], 1, 0, None, false).unwrap();
        let (et, layout) = locate(&bytes).unwrap();
        let fields = ExtensionFields {
            key_id: 1,
            time_of_current_key: 0,
            time_to_next_key: 0,
            iv: None,
            mac_len: 16,
        };
        let s = SecuredL2Repr::new(&bytes, et, &layout, &fields, CrcByteOrder::HighFirst).unwrap();
        let mut buf = vec![0; s.buffer_len() - 1];
        assert!(matches!(s.emit(&mut buf), Err(Error::Truncated { .. })));
        let st = StrippedL2Repr::new(&bytes, layout.header_offset, layout.apdu.clone()).unwrap();
        let mut buf = vec![0; st.buffer_len() - 1];
        assert!(matches!(st.emit(&mut buf), Err(Error::Truncated { .. })));
        // Layouts that do not fit the frame are refused, not sliced out of bounds.
        assert!(StrippedL2Repr::new(
            &bytes,
            layout.header_offset,
            layout.apdu.start..bytes.len() + 1
        )
        .is_err());
        assert!(
            StrippedL2Repr::new(&bytes, layout.header_offset + 1, layout.apdu.clone()).is_err()
        );
        let mut far = layout.clone();
        far.apdu.end = bytes.len() + 1;
        assert!(SecuredL2Repr::new(&bytes, et, &far, &fields, CrcByteOrder::HighFirst).is_err());
    }

    proptest! {
        /// Securing then stripping gives the owned path's frame back: the same Ethernet header
        /// and tag stack, the APDU, Reserved1 with only the simulation bit, Reserved2 zero, no
        /// padding; the secured frame is what `emit_secured` (and so the owned path, its own
        /// property test) writes, into a buffer longer than needed too.
        #[test]
        fn secure_then_strip_round_trips(
            apdu_body in proptest::collection::vec(any::<u8>(), 0..200),
            appid: u16, sim: bool, vlan in proptest::option::of(0u16..4095), sv: bool,
            key_id: u32, tock: i64, ttnk: i64,
            iv in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..17)),
            mac_len in 1usize..80, low_first: bool, slack in 0usize..16,
        ) {
            let reserved1 = if sim { RESERVED1_SIMULATION } else { 0 };
            let Some((f, bytes)) = frame(&apdu_body, appid, reserved1, vlan, sv) else { return Ok(()) };
            let order = if low_first { CrcByteOrder::LowFirst } else { CrcByteOrder::HighFirst };
            let fields = ExtensionFields { key_id, time_of_current_key: tock, time_to_next_key: ttnk, iv: iv.as_deref(), mac_len };
            let (et, layout) = locate(&bytes).unwrap();
            let repr = SecuredL2Repr::new(&bytes, et, &layout, &fields, order).unwrap();
            let mut buf = vec![0xa5; repr.buffer_len() + slack];
            let at = repr.emit(&mut buf).unwrap();
            let mut via_vec = vec![0xee; 7];
            let at_vec = emit_secured(&bytes, et, &layout, &fields, order, &mut via_vec).unwrap();
            prop_assert_eq!(&buf[..repr.buffer_len()], &via_vec[..]);
            prop_assert_eq!(&at, &at_vec);
            prop_assert_eq!(repr.to_vec().unwrap(), (via_vec.clone(), at_vec));
            // The secured frame parses, and stripping it gives the unsecured frame back.
            let (sec, sec_layout) = L2Frame::parse(&via_vec).unwrap();
            prop_assert!(sec.crc_order().is_some());
            let strip = StrippedL2Repr::new(&via_vec, sec_layout.header_offset, sec_layout.apdu.clone()).unwrap();
            let stripped = strip.to_vec().unwrap();
            let mut expected = f.clone();
            expected.body.reserved2 = 0;
            prop_assert_eq!(&stripped, &expected.to_vec().unwrap());
            let (back, _) = L2Frame::parse(&stripped).unwrap();
            prop_assert_eq!(back.body.apdu, f.body.apdu);
            prop_assert_eq!(back.body.extension, None);
        }

        /// Stripping keeps only Reserved1's simulation bit, whatever else it held.
        #[test]
        fn strip_keeps_only_the_simulation_bit(apdu_body in proptest::collection::vec(any::<u8>(), 0..60), reserved1: u16) {
            let Some((_, bytes)) = frame(&apdu_body, 7, reserved1 & !RESERVED1_EXTENSION_LEN, Some(3), false) else { return Ok(()) };
            let (_, layout) = locate(&bytes).unwrap();
            let out = StrippedL2Repr::new(&bytes, layout.header_offset, layout.apdu.clone()).unwrap().to_vec().unwrap();
            let h = layout.header_offset;
            prop_assert_eq!(be16(&out, h + RESERVED1), reserved1 & RESERVED1_SIMULATION);
            prop_assert_eq!(be16(&out, h + RESERVED2), 0);
            prop_assert_eq!(&out[..h], &bytes[..h]);
        }
    }
}
