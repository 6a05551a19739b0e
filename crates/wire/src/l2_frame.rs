//! The IEC 61850-8-1 layer-2 header that follows the EtherType of GOOSE (and, identically,
//! of IEC 61850-9-2 SV): APPID, Length, Reserved1, Reserved2, then the APDU
//! (IEC 61850-8-1 Annex C, Figure C.1; IEC 61850-9-2 clause 8.2), and with IEC 62351-6 the
//! security extension after the APDU.
//!
//! ```text
//! off  size  field
//!  0    2    APPID
//!  2    2    Length      = 8 + APDU (+ extension); counts from APPID
//!  4    2    Reserved1   bit 15: simulation (Ed.2); IEC 62351-6: bits 0..11 extension length
//!  6    2    Reserved2   IEC 62351-6: CRC-16 over EtherType..Reserved1
//!  8    m    APDU        one BER element (0x61 GOOSE, 0x60 SV)
//!  8+m  n    extension   IEC 62351-6 security extension (optional)
//! ```
//!
//! Length is authoritative: bytes after it may only be Ethernet padding up to the 60-octet
//! minimum frame size (IEEE 802.3); a longer tail is refused, so nothing unauthenticated rides
//! behind a verified frame.

use crate::ber::Reader;
use crate::ethernet::{self, EthernetRepr, Frame};
use crate::l2_extension::{self, CrcByteOrder};
use crate::{Codec, Error, Result};
use core::ops::Range;

/// What [`ethernet::check_padding`] names when bytes after Length are not padding.
pub const GOOSE_LENGTH_TAIL: &str = "GOOSE/SV Length (not Ethernet padding)";

/// Size of APPID + Length + Reserved1 + Reserved2.
pub const HEADER_LEN: usize = 8;
/// Simulation bit of Reserved1 (IEC 61850-8-1 Ed.2, C.2.3).
pub const RESERVED1_SIMULATION: u16 = 0x8000;
/// Bits of Reserved1 that carry the security extension length (IEC 62351-6).
pub const RESERVED1_EXTENSION_LEN: u16 = 0x0fff;

mod field {
    use core::ops::Range;
    pub(super) const APPID: Range<usize> = 0..2;
    pub(super) const LENGTH: Range<usize> = 2..4;
    pub(super) const RESERVED1: Range<usize> = 4..6;
    pub(super) const RESERVED2: Range<usize> = 6..8;
}

fn be16(b: &[u8], r: Range<usize>) -> u16 {
    u16::from_be_bytes([b[r.start], b[r.start + 1]])
}

/// A zero-copy view of the layer-2 GOOSE/SV header and what follows, starting at APPID.
#[derive(Debug, Clone)]
pub struct GooseFrame<T: AsRef<[u8]>> {
    buffer: T,
    apdu_end: usize,
}

impl<T: AsRef<[u8]>> GooseFrame<T> {
    /// Check the header, the Length field and the APDU's outer BER header; after success no
    /// accessor panics.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let b = buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated {
                what: "GOOSE header",
                need: HEADER_LEN,
                have: b.len(),
            });
        }
        let length = be16(b, field::LENGTH) as usize;
        if length < HEADER_LEN {
            return Err(Error::BadLength {
                what: "GOOSE Length",
                value: length,
            });
        }
        if length > b.len() {
            return Err(Error::Truncated {
                what: "GOOSE frame",
                need: length,
                have: b.len(),
            });
        }
        let mut r = Reader::with_base(&b[HEADER_LEN..length], HEADER_LEN);
        let apdu = r.read_tlv("GOOSE APDU")?;
        let apdu_end = apdu.range().end;
        Ok(GooseFrame { buffer, apdu_end })
    }

    /// Application identifier.
    pub fn appid(&self) -> u16 {
        be16(self.buffer.as_ref(), field::APPID)
    }

    /// Length field: octets from APPID to the end of the APDU or extension.
    pub fn length(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Reserved1 as on the wire.
    pub fn reserved1(&self) -> u16 {
        be16(self.buffer.as_ref(), field::RESERVED1)
    }

    /// Reserved2 as on the wire (big-endian).
    pub fn reserved2(&self) -> u16 {
        be16(self.buffer.as_ref(), field::RESERVED2)
    }

    /// The simulation bit of Reserved1.
    pub fn simulation(&self) -> bool {
        self.reserved1() & RESERVED1_SIMULATION != 0
    }

    /// The extension length that Reserved1 announces (IEC 62351-6).
    pub fn announced_extension_len(&self) -> usize {
        (self.reserved1() & RESERVED1_EXTENSION_LEN) as usize
    }

    /// Byte range of the APDU element, relative to APPID.
    pub fn apdu_range(&self) -> Range<usize> {
        HEADER_LEN..self.apdu_end
    }

    /// The APDU element (tag, length and contents).
    pub fn apdu(&self) -> &[u8] {
        &self.buffer.as_ref()[self.apdu_range()]
    }

    /// Byte range of the bytes between the APDU and Length, relative to APPID, if any.
    pub fn extension_range(&self) -> Option<Range<usize>> {
        let end = self.length() as usize;
        (end > self.apdu_end).then_some(self.apdu_end..end)
    }

    /// The security extension bytes, if any.
    pub fn extension(&self) -> Option<&[u8]> {
        self.extension_range().map(|r| &self.buffer.as_ref()[r])
    }

    /// Checks that the bytes after the APDU are exactly the extension Reserved1 announces, and
    /// that Reserved1 announces none when there are none (IEC 62351-6).
    pub fn check_extension_len(&self) -> Result<()> {
        let have = self.extension_range().map_or(0, |r| r.len());
        if self.announced_extension_len() != have {
            return Err(Error::BadLength {
                what: "Reserved1 security extension length",
                value: self.announced_extension_len(),
            });
        }
        Ok(())
    }

    /// The IEC 62351-6 header CRC computed over EtherType..Reserved1.
    pub fn header_crc(&self, ethertype: u16) -> u16 {
        l2_extension::header_crc(ethertype, self.appid(), self.length(), self.reserved1())
    }
}

/// The owned layer-2 GOOSE/SV frame body, for tests and fixtures that build frames from values
/// (the packet path uses the borrowed [`crate::l2_frame_repr::L2BodyRepr`], which this emits
/// through). The APDU is kept as raw bytes so that a MAC can be checked over exactly what was
/// received; decode it with [`crate::goose::GoosePdu::parse`] or [`crate::sv::SavPdu::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GooseFrameRepr {
    /// APPID: application identifier (IEC 61850-8-1 C.2.3).
    pub appid: u16,
    /// Reserved1 as on the wire (simulation bit, extension length).
    pub reserved1: u16,
    /// Reserved2 as on the wire.
    pub reserved2: u16,
    /// The APDU element, tag and length included.
    pub apdu: Vec<u8>,
    /// The IEC 62351-6 security extension, if any (never empty).
    pub extension: Option<Vec<u8>>,
}

impl GooseFrameRepr {
    /// Read a checked view. An extension must match the length Reserved1 announces, and
    /// Reserved1 must not announce an extension that is absent (IEC 62351-6).
    pub fn parse<T: AsRef<[u8]>>(frame: &GooseFrame<T>) -> Result<Self> {
        frame.check_extension_len()?;
        let ext = frame.extension();
        Ok(GooseFrameRepr {
            appid: frame.appid(),
            reserved1: frame.reserved1(),
            reserved2: frame.reserved2(),
            apdu: frame.apdu().to_vec(),
            extension: ext.map(<[u8]>::to_vec),
        })
    }

    /// Parse the body that starts at APPID.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self> {
        Self::parse(&GooseFrame::new_checked(bytes)?)
    }

    /// The simulation bit of Reserved1.
    pub fn simulation(&self) -> bool {
        self.reserved1 & RESERVED1_SIMULATION != 0
    }

    /// Octets from APPID to the end of the extension: the Length field's value.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.apdu.len() + self.extension.as_ref().map_or(0, Vec::len)
    }

    /// Set Reserved1's extension-length bits (keeping the simulation bit) and Reserved2 to
    /// the IEC 62351-6 header CRC, as the frame will be emitted behind `ethertype`.
    pub fn set_security_fields(&mut self, ethertype: u16, order: CrcByteOrder) -> Result<()> {
        let ext_len = self.extension.as_ref().map_or(0, Vec::len);
        if ext_len > l2_extension::MAX_EXTENSION_LEN {
            return Err(Error::TooLarge {
                what: "security extension",
            });
        }
        let length = u16::try_from(self.buffer_len()).map_err(|_| Error::TooLarge {
            what: "GOOSE Length",
        })?;
        self.reserved1 = (self.reserved1 & !RESERVED1_EXTENSION_LEN) | ext_len as u16;
        let crc = l2_extension::header_crc(ethertype, self.appid, length, self.reserved1);
        self.reserved2 = order.reserved2(crc);
        Ok(())
    }

    /// The body as a value that borrows this one's APDU and extension (what the packet path
    /// emits; see [`crate::l2_frame_repr`]).
    pub fn as_repr(&self) -> crate::l2_frame_repr::L2BodyRepr<'_> {
        crate::l2_frame_repr::L2BodyRepr {
            appid: self.appid,
            reserved1: self.reserved1,
            reserved2: self.reserved2,
            apdu: &self.apdu,
            extension: self.extension.as_deref(),
        }
    }

    /// Write the body at the start of `buf`, with Length computed; returns `buffer_len()`.
    ///
    /// # Errors
    /// [`Error::TooLarge`] if the body exceeds 65535 octets; [`Error::Truncated`] if `buf` is
    /// shorter than `buffer_len()`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        self.as_repr().emit(buf)
    }
}

/// Absolute positions in an Ethernet frame carrying GOOSE or SV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct L2Layout {
    /// Offset of the EtherType (12, or 16 behind an 802.1Q tag). IEC 62351-6 MACs start here.
    pub ethertype_offset: usize,
    /// Offset of APPID.
    pub header_offset: usize,
    /// The APDU element.
    pub apdu: Range<usize>,
    /// The security extension, if any.
    pub extension: Option<Range<usize>>,
    /// End of the octets counted by Length (padding starts here).
    pub end: usize,
}

/// A whole Ethernet frame carrying GOOSE or SV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct L2Frame {
    /// The Ethernet header.
    pub eth: EthernetRepr,
    /// The layer-2 body from APPID on.
    pub body: GooseFrameRepr,
}

/// Where the fields of a secured frame written by [`emit_secured`] are, absolute in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecuredLayout {
    /// What the MAC or signature covers: EtherType through the end of AuthenticationValue
    /// (IEC 62351-6).
    pub covered: Range<usize>,
    /// The mAC contents, zero until the caller writes the MAC or signature there.
    pub mac: Range<usize>,
}

/// Locates the parts of a GOOSE or SV frame without copying it: the checks of
/// [`L2Frame::parse`] (same errors, in the same order), the EtherType and the layout.
pub fn locate(frame: &[u8]) -> Result<(u16, L2Layout)> {
    let eth_frame = Frame::new_checked(frame)?;
    let ethertype = eth_frame.ethertype();
    if ethertype != ethernet::ETHERTYPE_GOOSE && ethertype != ethernet::ETHERTYPE_SV {
        return Err(Error::WrongEtherType(ethertype));
    }
    let off = eth_frame.payload_offset();
    let view = GooseFrame::new_checked(&frame[off..])?;
    view.check_extension_len()?;
    let end = off + view.length() as usize;
    ethernet::check_padding(frame.len(), end, eth_frame.tag_count(), GOOSE_LENGTH_TAIL)?;
    let shift = |r: Range<usize>| r.start + off..r.end + off;
    Ok((
        ethertype,
        L2Layout {
            ethertype_offset: eth_frame.ethertype_offset(),
            header_offset: off,
            apdu: shift(view.apdu_range()),
            extension: view.extension_range().map(shift),
            end,
        },
    ))
}

/// Writes into `out` (resized to the secured frame; one allocation at most, none when its
/// capacity suffices) the unsecured `frame`, located by [`locate`] as `layout` behind `ethertype`,
/// with the IEC 62351-6 extension `fields` appended after the APDU and a zero mAC: Length
/// counts the extension, Reserved1's low 12 bits announce its size (the simulation bit kept),
/// Reserved2 carries the header CRC in `order`. Ethernet padding is dropped; everything in
/// front of APPID (addresses, the tag stack) is copied byte for byte. What
/// [`GooseFrameRepr::set_security_fields`] and [`GooseFrameRepr::emit`] produce, without an
/// owned body in between. A `Vec` wrapper of [`crate::l2_emit::SecuredL2Repr`], which writes
/// into any caller's buffer.
///
/// # Errors
/// [`Error::TooLarge`] if the extension exceeds [`l2_extension::MAX_EXTENSION_LEN`] or Length
/// 65535; [`Error::BadLength`] if `layout` does not fit `frame` or already has an extension.
pub fn emit_secured(
    frame: &[u8],
    ethertype: u16,
    layout: &L2Layout,
    fields: &l2_extension::ExtensionFields<'_>,
    order: CrcByteOrder,
    out: &mut Vec<u8>,
) -> Result<SecuredLayout> {
    let repr = crate::l2_emit::SecuredL2Repr::new(frame, ethertype, layout, fields, order)?;
    // Every octet up to `buffer_len` is written by `emit`: a reused `out` is resized, not
    // cleared and zero-filled first.
    out.resize(repr.buffer_len(), 0);
    repr.emit(out)
}

impl L2Frame {
    /// Parse an Ethernet frame whose EtherType is GOOSE or SV; padding after Length is ignored
    /// (and anything after Length that cannot be padding refused).
    pub fn parse(frame: &[u8]) -> Result<(L2Frame, L2Layout)> {
        let (_, layout) = locate(frame)?;
        let eth = EthernetRepr::parse(&Frame::new_checked(frame)?)?;
        let body =
            GooseFrameRepr::parse(&GooseFrame::new_checked(&frame[layout.header_offset..])?)?;
        Ok((L2Frame { eth, body }, layout))
    }

    /// Size of the emitted frame (no padding).
    pub fn buffer_len(&self) -> usize {
        self.eth.buffer_len() + self.body.buffer_len()
    }

    /// The frame as a value that borrows this one's APDU and extension.
    pub fn as_repr(&self) -> crate::l2_frame_repr::L2FrameRepr<'_> {
        crate::l2_frame_repr::L2FrameRepr {
            eth: self.eth,
            body: self.body.as_repr(),
        }
    }

    /// The frame as bytes, without padding to the minimum frame size.
    ///
    /// Not [`Codec::to_vec`]: the body's Length field can overflow, so this fails with
    /// [`Error::TooLarge`] where [`GooseFrameRepr::emit`] does.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        self.as_repr().to_vec()
    }

    /// Whether Reserved2 carries the IEC 62351-6 header CRC, and in which byte order.
    pub fn crc_order(&self) -> Option<CrcByteOrder> {
        let length = u16::try_from(self.body.buffer_len()).ok()?;
        let crc = l2_extension::header_crc(
            self.eth.ethertype,
            self.body.appid,
            length,
            self.body.reserved1,
        );
        CrcByteOrder::detect(crc, self.body.reserved2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goose::tests::LIB_APDU;
    use crate::goose::GoosePdu;
    use crate::l2_extension::SecurityExtension;
    use proptest::prelude::*;

    /// `lib-l2-goose-62351-6-hmac-sha256-128` of `crates/sec/tests/vectors/golden_frames.txt`: libiec61850 dev `goose_sec.c` layout, HMAC-SHA256-128,
    /// key "0123456789ABCDEF".
    const LIB_L2_FRAME: &str = "010ccd01000102000000000188b8400100d10022c0356181a4802973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c65494f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c75657384086b022a6fcb020c0a8501018601008701008801018901008a0102ab07850204d2830101a020a40c800101810100820100840101851030f90ee17f312b2dd902094ef6496319";

    #[test]
    fn libiec61850_secured_frame() {
        let f = hex::decode(LIB_L2_FRAME).unwrap();
        let (frame, layout) = L2Frame::parse(&f).unwrap();
        assert_eq!(frame.body.appid, 0x4001);
        assert_eq!(frame.body.reserved1, 0x0022);
        assert!(!frame.body.simulation());
        assert_eq!(frame.crc_order(), Some(CrcByteOrder::LowFirst));
        assert_eq!(layout.ethertype_offset, 12);
        assert_eq!(layout.apdu, 22..22 + 167);
        assert_eq!(layout.extension, Some(189..223));
        assert_eq!(layout.end, f.len());
        let pdu = GoosePdu::parse(&frame.body.apdu).unwrap();
        assert_eq!(
            pdu,
            GoosePdu::parse(&hex::decode(LIB_APDU).unwrap()).unwrap()
        );
        let ext_range = layout.extension.clone().unwrap();
        let (ext, el) = SecurityExtension::parse_with_layout(&f[ext_range.clone()]).unwrap();
        assert_eq!(ext.key_id, 1);
        // HMAC-SHA256-128 over EtherType..end of AuthenticationValue, checked independently:
        // bytes 12..205.
        assert_eq!(ext_range.start + el.auth_value.end, 205);
        assert_eq!(ext_range.start + el.mac.start, f.len() - 16);
        assert_eq!(frame.to_vec().unwrap(), f);
        // Re-securing the same body reproduces Reserved1/Reserved2.
        let mut body = frame.body.clone();
        body.reserved1 = 0;
        body.reserved2 = 0;
        body.set_security_fields(frame.eth.ethertype, CrcByteOrder::LowFirst)
            .unwrap();
        assert_eq!(body, frame.body);
    }

    #[test]
    fn padding_and_vlan() {
        let apdu = hex::decode(LIB_APDU).unwrap();
        let body = GooseFrameRepr {
            appid: 3,
            reserved1: RESERVED1_SIMULATION,
            reserved2: 0,
            apdu: apdu.clone(),
            extension: None,
        };
        let eth = EthernetRepr {
            dst: [1, 0x0c, 0xcd, 1, 0, 1],
            src: [2; 6],
            vlan: Some(ethernet::VlanTag {
                pcp: 4,
                dei: false,
                vid: 0,
            }),
            ethertype: ethernet::ETHERTYPE_GOOSE,
        };
        let mut f = L2Frame {
            eth,
            body: body.clone(),
        }
        .to_vec()
        .unwrap();
        let (p, l) = L2Frame::parse(&f).unwrap();
        assert_eq!(p.body, body);
        assert!(p.body.simulation());
        assert_eq!(l.ethertype_offset, 16);
        assert_eq!(l.end, f.len());
        assert_eq!(&f[l.apdu], &apdu[..]);
        // Ten bytes after Length in a frame longer than the minimum are not padding.
        f.extend_from_slice(&[0; 10]);
        assert!(matches!(
            L2Frame::parse(&f),
            Err(Error::TrailingBytes { count: 10, .. })
        ));
        // A short frame padded up to the minimum (64 octets with one tag) is fine.
        let short = GooseFrameRepr {
            apdu: vec![0x61, 0x03, 0x80, 0x01, 0x41],
            ..body
        };
        let mut f = L2Frame { eth, body: short }.to_vec().unwrap();
        let unpadded = f.len();
        f.resize(64, 0);
        let (_, l) = L2Frame::parse(&f).unwrap();
        assert_eq!(l.end, unpadded);
        f.push(0);
        assert!(
            L2Frame::parse(&f).is_err(),
            "65 octets: one byte more than padding"
        );
    }

    #[test]
    fn rejects_bad_lengths() {
        let f = hex::decode(LIB_L2_FRAME).unwrap();
        let body = &f[14..];
        let mut b = body.to_vec();
        b[3] = 7;
        b[2] = 0;
        assert_eq!(
            GooseFrame::new_checked(&b[..]).err(),
            Some(Error::BadLength {
                what: "GOOSE Length",
                value: 7
            })
        );
        let mut b = body.to_vec();
        b[3] += 1;
        assert!(matches!(
            GooseFrame::new_checked(&b[..]),
            Err(Error::Truncated { .. })
        ));
        let mut b = body.to_vec();
        b[5] = 0x21; // Reserved1 disagrees with the extension
        assert!(matches!(
            GooseFrameRepr::parse_bytes(&b),
            Err(Error::BadLength { .. })
        ));
        let mut g = f.clone();
        g[13] = 0xb9;
        assert_eq!(
            L2Frame::parse(&g).err(),
            Some(Error::WrongEtherType(0x88b9))
        );
    }

    proptest! {
        /// `emit_secured` writes what the owned path (set_security_fields + emit behind the
        /// kept Ethernet header) writes, padding dropped, and reports the covered bytes and
        /// the mAC where the extension's layout puts them; `locate` agrees with
        /// `L2Frame::parse` on the frame and on the frame with one octet changed.
        #[test]
        fn emit_secured_matches_owned_path(
            apdu_body in proptest::collection::vec(any::<u8>(), 0..200),
            appid: u16, sim: bool, vlan in proptest::option::of(0u16..4095), sv: bool,
            key_id: u32, mac_len in 1usize..80, low_first: bool,
            flip in any::<prop::sample::Index>(), x: u8,
        ) {
            let mut apdu = Vec::new();
            crate::ber_sink::tlv(&mut apdu, 0x61, &apdu_body);
            let ethertype = if sv { ethernet::ETHERTYPE_SV } else { ethernet::ETHERTYPE_GOOSE };
            let frame = L2Frame {
                eth: EthernetRepr {
                    dst: [1, 0x0c, 0xcd, 1, 0, 1],
                    src: [2; 6],
                    vlan: vlan.map(|vid| ethernet::VlanTag { pcp: 4, dei: false, vid }),
                    ethertype,
                },
                body: GooseFrameRepr {
                    appid,
                    reserved1: if sim { RESERVED1_SIMULATION } else { 0 },
                    reserved2: 0x1234,
                    apdu,
                    extension: None,
                },
            };
            let Ok(mut bytes) = frame.to_vec() else { return Ok(()) };
            // Padding up to the minimum frame size, as a capture would show it.
            let min = if vlan.is_some() { 64 } else { 60 };
            if bytes.len() < min {
                bytes.resize(min, 0);
            }
            let order = if low_first { CrcByteOrder::LowFirst } else { CrcByteOrder::HighFirst };
            let fields = l2_extension::ExtensionFields {
                key_id, time_of_current_key: 0, time_to_next_key: -1, iv: None, mac_len,
            };
            let (et, layout) = locate(&bytes).unwrap();
            prop_assert_eq!(et, ethertype);
            let mut out = vec![0xee; 3];
            let at = emit_secured(&bytes, et, &layout, &fields, order, &mut out).unwrap();
            let ext = SecurityExtension::with_placeholder_mac(key_id, 0, -1, None, mac_len);
            let mut body = frame.body.clone();
            body.extension = Some(ext.to_vec());
            body.set_security_fields(ethertype, order).unwrap();
            let expected = L2Frame { eth: frame.eth, body }.to_vec().unwrap();
            prop_assert_eq!(&out, &expected);
            prop_assert_eq!(at.covered.start, layout.ethertype_offset);
            prop_assert_eq!(at.covered.end, layout.apdu.end + ext.layout().auth_value.end);
            prop_assert_eq!(at.mac.clone(), layout.apdu.end + ext.layout().mac.start..out.len());
            // A secured frame cannot be secured again.
            let (et2, l2) = locate(&out).unwrap();
            prop_assert!(emit_secured(&out, et2, &l2, &fields, order, &mut Vec::new()).is_err());
            let mut bad = bytes.clone();
            let i = flip.index(bad.len());
            bad[i] ^= x;
            match (locate(&bad), L2Frame::parse(&bad)) {
                (Ok((_, a)), Ok((_, b))) => prop_assert_eq!(a, b),
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                (a, b) => prop_assert!(false, "locate {:?} parse {:?}", a, b),
            }
        }

        #[test]
        fn round_trip(appid: u16, sim: bool, reserved2: u16,
                      apdu_body in proptest::collection::vec(any::<u8>(), 0..300),
                      ext in proptest::option::of(proptest::collection::vec(any::<u8>(), 1..100))) {
            let mut apdu = Vec::new();
            crate::ber_sink::tlv(&mut apdu, 0x61, &apdu_body);
            let ext_len = ext.as_ref().map_or(0, Vec::len) as u16;
            let body = GooseFrameRepr {
                appid,
                reserved1: if sim { RESERVED1_SIMULATION } else { 0 } | ext_len,
                reserved2,
                apdu,
                extension: ext,
            };
            let mut buf = vec![0xa5; body.buffer_len()];
            prop_assert_eq!(body.emit(&mut buf).unwrap(), buf.len());
            prop_assert_eq!(GooseFrameRepr::parse_bytes(&buf).unwrap(), body);
        }

        /// Layer-2 SV (EtherType 0x88BA) with the IEC 62351-6 extension, behind no tag or one
        /// 802.1Q tag: emit then parse gives the frame back, the layout points at the savPdu
        /// and the extension, and Reserved2 carries the header CRC in the order written.
        #[test]
        fn sv_frame_with_extension_round_trips(
            asdus in proptest::collection::vec(crate::sv::tests::arb_asdu(), 1..3),
            appid: u16, sim: bool, vlan in proptest::option::of(0u16..4095),
            key_id: u32, mac_len in 1usize..64, low_first: bool,
        ) {
            use crate::sv::SavPdu;
            let pdu = SavPdu { security: None, asdus };
            prop_assume!(pdu.validate().is_ok());
            let ext = SecurityExtension::with_placeholder_mac(key_id, 0, 0, None, mac_len).to_vec();
            let mut body = GooseFrameRepr {
                appid,
                reserved1: if sim { RESERVED1_SIMULATION } else { 0 },
                reserved2: 0,
                apdu: pdu.to_vec(),
                extension: Some(ext.clone()),
            };
            let order = if low_first { CrcByteOrder::LowFirst } else { CrcByteOrder::HighFirst };
            prop_assume!(body.set_security_fields(ethernet::ETHERTYPE_SV, order).is_ok());
            let eth = EthernetRepr {
                dst: [1, 0x0c, 0xcd, 4, 0, 1],
                src: [2; 6],
                vlan: vlan.map(|vid| ethernet::VlanTag { pcp: 4, dei: false, vid }),
                ethertype: ethernet::ETHERTYPE_SV,
            };
            let frame = L2Frame { eth, body: body.clone() };
            let Ok(bytes) = frame.to_vec() else { return Ok(()) };
            let (back, layout) = L2Frame::parse(&bytes).unwrap();
            prop_assert_eq!(&back, &frame);
            prop_assert_eq!(SavPdu::parse(&bytes[layout.apdu.clone()]).unwrap(), pdu);
            prop_assert_eq!(&bytes[layout.extension.clone().unwrap()], &ext[..]);
            prop_assert_eq!(back.body.simulation(), sim);
            prop_assert_eq!(back.body.reserved1 & RESERVED1_EXTENSION_LEN, ext.len() as u16);
            // Both byte orders of a CRC coincide when its two octets are equal; then the
            // detector reads the order it tries first.
            let crc = l2_extension::header_crc(
                ethernet::ETHERTYPE_SV,
                appid,
                back.body.buffer_len() as u16,
                back.body.reserved1,
            );
            if crc == crc.swap_bytes() {
                prop_assert!(back.crc_order().is_some());
            } else {
                prop_assert_eq!(back.crc_order(), Some(order));
            }
        }

        #[test]
        fn canonical_re_emit(data in proptest::collection::vec(any::<u8>(), 8..120)) {
            if let Ok(r) = GooseFrameRepr::parse_bytes(&data) {
                let mut buf = vec![0xa5; r.buffer_len()];
                r.emit(&mut buf).unwrap();
                prop_assert_eq!(&buf[..], &data[..r.buffer_len()]);
            }
        }

        #[test]
        fn no_panic_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = GooseFrameRepr::parse_bytes(&data);
            let _ = L2Frame::parse(&data);
            if let Ok(v) = GooseFrame::new_checked(&data[..]) {
                let _ = (v.apdu(), v.extension(), v.header_crc(0x88b8), v.simulation());
            }
        }
    }
}
