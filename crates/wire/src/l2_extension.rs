//! The IEC 62351-6 security extension of layer-2 GOOSE and SV frames, and the CRC-16 that
//! protects the frame header when the extension is present.
//!
//! IEC 62351-6 (Ed.1, clause 8) appends a BER-encoded extension after the APDU, inside the
//! IEC 61850-8-1 Length, announces its size in the low 12 bits of Reserved1 and puts a CRC
//! of the header in Reserved2. Byte layout as libiec61850's development code writes it
//! (`goose_sec.c`, see `docs/session-layout.md` §6, and the synthetic frame
//! in `crates/sec/tests/vectors/golden_frames.txt`):
//!
//! ```text
//! A0 L                      SecurityExtension
//!    A4 L                   AuthenticationValue   <- MAC input ends after this element
//!       80 L version        INTEGER (1)
//!       81 L TimeOfCurrentKey   INTEGER
//!       82 L TimeToNextKey      INTEGER
//!       83 0C IV            OCTET STRING OPTIONAL (GMAC)
//!       84 L KeyID          INTEGER
//!    85 L mAC               OCTET STRING
//! ```
//!
//! The MAC covers the frame from the EtherType through the end of AuthenticationValue
//! ([`ExtensionLayout::auth_value`]); the `85` mAC element is outside the MAC input,
//! which is why it sits beside, not inside, `A4`.

use crate::ber::{self, FieldOrder, Reader};
use crate::ber_sink::{tlv, Sink, SliceSink};
use crate::tlv_scan::{self, Scan};
use crate::{Codec, Error, Result};
use core::ops::Range;

/// Tags of the extension.
pub mod tag {
    /// The whole security extension (constructed).
    pub const SECURITY_EXTENSION: u8 = 0xa0;
    /// AuthenticationValue (constructed): the fields below except the MAC.
    pub const AUTHENTICATION_VALUE: u8 = 0xa4;
    /// Version of the extension.
    pub const VERSION: u8 = 0x80;
    /// TimeOfCurrentKey: seconds since the epoch when the key became valid.
    pub const TIME_OF_CURRENT_KEY: u8 = 0x81;
    /// TimeToNextKey: minutes until the next key.
    pub const TIME_TO_NEXT_KEY: u8 = 0x82;
    /// Initialisation vector, if the algorithm uses one.
    pub const IV: u8 = 0x83;
    /// Key ID.
    pub const KEY_ID: u8 = 0x84;
    /// mAC: the MAC or signature value, after AuthenticationValue.
    pub const MAC: u8 = 0x85;
}

/// The only extension version defined (IEC 62351-6 Ed.1).
pub const VERSION_1: i64 = 1;

/// Largest extension Reserved1 can announce: its low 12 bits (IEC 62351-6).
pub const MAX_EXTENSION_LEN: usize = 0x0fff;

/// CRC-16/X-25, the PPP frame check sequence of RFC 1662 (Appendix C.2): polynomial
/// x^16 + x^12 + x^5 + 1 processed bit-reflected (0x8408), initial value 0xFFFF, final
/// complement. Check value over ASCII "123456789" is 0x906E.
#[inline]
pub fn crc16_x25(data: &[u8]) -> u16 {
    // Eight octets per step through eight tables (slicing-by-8): the eight independent lookups
    // overlap instead of eight dependent ones, and the header CRC of every secured frame sent
    // and received is exactly eight octets. The tail goes one octet per lookup.
    let mut crc: u16 = 0xffff;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let x = crc ^ u16::from_le_bytes([c[0], c[1]]);
        let t = &CRC16_X25_TABLES;
        crc = t[7][(x & 0xff) as usize]
            ^ t[6][(x >> 8) as usize]
            ^ t[5][c[2] as usize]
            ^ t[4][c[3] as usize]
            ^ t[3][c[4] as usize]
            ^ t[2][c[5] as usize]
            ^ t[1][c[6] as usize]
            ^ t[0][c[7] as usize];
    }
    for &b in chunks.remainder() {
        crc = (crc >> 8) ^ CRC16_X25_TABLES[0][((crc ^ b as u16) & 0xff) as usize];
    }
    !crc
}

/// `[0]`: the reflected CRC-16/X-25 register after shifting in one octet, for each octet value
/// (the usual table-driven form of the bitwise loop, RFC 1662 Appendix C.2); `[k]`: the same
/// followed by `k` zero octets, which slicing-by-8 combines.
const CRC16_X25_TABLES: [[u16; 256]; 8] = {
    let mut t = [[0u16; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u16;
        let mut k = 0;
        while k < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x8408
            } else {
                crc >> 1
            };
            k += 1;
        }
        t[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
};

/// The IEC 62351-6 header CRC: CRC-16/X-25 over the eight octets EtherType, APPID, Length
/// and Reserved1, with their final values.
#[inline]
pub fn header_crc(ethertype: u16, appid: u16, length: u16, reserved1: u16) -> u16 {
    let mut b = [0u8; 8];
    b[0..2].copy_from_slice(&ethertype.to_be_bytes());
    b[2..4].copy_from_slice(&appid.to_be_bytes());
    b[4..6].copy_from_slice(&length.to_be_bytes());
    b[6..8].copy_from_slice(&reserved1.to_be_bytes());
    crc16_x25(&b)
}

/// How the CRC is laid into the two Reserved2 octets.
///
/// RFC 1662 C.2 transmits the FCS least significant octet first and libiec61850's publisher
/// does the same, so that is what gander writes; its receiver (and Wireshark) read Reserved2
/// big-endian like every other IEC 61850-8-1 header field (pitfall P12, `docs/session-layout.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrcByteOrder {
    /// Low octet first (RFC 1662, libiec61850 publisher). The default.
    LowFirst,
    /// High octet first (network order).
    HighFirst,
}

impl CrcByteOrder {
    /// The Reserved2 value (read big-endian from the wire) that carries `crc` in this order.
    pub fn reserved2(self, crc: u16) -> u16 {
        match self {
            CrcByteOrder::LowFirst => crc.swap_bytes(),
            CrcByteOrder::HighFirst => crc,
        }
    }

    /// Which order, if any, makes `reserved2` carry `crc`.
    pub fn detect(crc: u16, reserved2: u16) -> Option<CrcByteOrder> {
        if reserved2 == crc.swap_bytes() {
            Some(CrcByteOrder::LowFirst)
        } else if reserved2 == crc {
            Some(CrcByteOrder::HighFirst)
        } else {
            None
        }
    }
}

/// The decoded security extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityExtension {
    /// Extension version; 1 in IEC 62351-6 Ed.1.
    pub version: i64,
    /// When the current key became valid (seconds, IEC 62351-9 key management).
    pub time_of_current_key: i64,
    /// Time until the next key change (minutes in IEC 62351-6; signed).
    pub time_to_next_key: i64,
    /// Initialisation vector, present for AES-GMAC (12 octets).
    pub iv: Option<Vec<u8>>,
    /// Identifies the key (and, by provisioning, the algorithm).
    pub key_id: u32,
    /// The MAC value (length implied by the algorithm).
    pub mac: Vec<u8>,
}

/// Where the parts of an encoded extension are, as offsets from its first octet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionLayout {
    /// The whole `A4` AuthenticationValue element; the MAC input ends at its end.
    pub auth_value: Range<usize>,
    /// The contents of the `85` mAC element.
    pub mac: Range<usize>,
}

/// A security extension checked exactly as [`SecurityExtension::parse_with_layout`] checks
/// it (the owned parse is built on this one), borrowing the IV and the mAC: what the layer-2
/// verify path reads without allocating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionView<'a> {
    /// Extension version.
    pub version: i64,
    /// TimeOfCurrentKey.
    pub time_of_current_key: i64,
    /// TimeToNextKey.
    pub time_to_next_key: i64,
    /// The IV, if present.
    pub iv: Option<&'a [u8]>,
    /// Key ID.
    pub key_id: u32,
    /// The mAC contents.
    pub mac: &'a [u8],
    /// Where AuthenticationValue and mAC are.
    pub layout: ExtensionLayout,
}

impl<'a> ExtensionView<'a> {
    /// Check an extension that fills `bytes` exactly.
    pub fn parse(bytes: &'a [u8]) -> Result<ExtensionView<'a>> {
        match Self::canonical(bytes) {
            Some(v) => Ok(v),
            None => Self::parse_general(bytes),
        }
    }

    /// The fast path for what senders write: every field in order, one definite-length
    /// element each, read on a [`Scan`] without an error per field. `None` for anything
    /// else, which [`Self::parse_general`] then judges, so the two accept the same input.
    fn canonical(bytes: &'a [u8]) -> Option<ExtensionView<'a>> {
        let mut outer = Scan::new(bytes);
        let ext = outer.field(tag::SECURITY_EXTENSION)?;
        if !outer.is_empty() {
            return None;
        }
        // Offsets in `bytes` of what `s` has not read yet: `ext` ends where `bytes` ends.
        let at = |s: &Scan<'a>| bytes.len() - s.rest().len();
        let mut body = Scan::new(ext);
        let av_start = at(&body);
        let mut f = Scan::new(body.field(tag::AUTHENTICATION_VALUE)?);
        let av_end = at(&body);
        let version = tlv_scan::i64_of(f.field(tag::VERSION)?)?;
        let time_of_current_key = tlv_scan::i64_of(f.field(tag::TIME_OF_CURRENT_KEY)?)?;
        let time_to_next_key = tlv_scan::i64_of(f.field(tag::TIME_TO_NEXT_KEY)?)?;
        let iv = f.optional(tag::IV)?;
        let key_id = tlv_scan::u32_of(f.field(tag::KEY_ID)?)?;
        let mac = body.field(tag::MAC)?;
        if !f.is_empty() || !body.is_empty() {
            return None;
        }
        Some(ExtensionView {
            version,
            time_of_current_key,
            time_to_next_key,
            iv,
            key_id,
            mac,
            layout: ExtensionLayout {
                auth_value: av_start..av_end,
                mac: bytes.len() - mac.len()..bytes.len(),
            },
        })
    }

    /// The general parser: fields dispatched on their tags, order and duplicates checked, so
    /// that every deviation gets its precise error.
    fn parse_general(bytes: &'a [u8]) -> Result<ExtensionView<'a>> {
        let mut r = Reader::new(bytes);
        let ext = r.read_expected(tag::SECURITY_EXTENSION, "SecurityExtension")?;
        r.expect_end("SecurityExtension")?;
        let mut body = ext.reader();
        let av = body.read_expected(tag::AUTHENTICATION_VALUE, "AuthenticationValue")?;
        let mut f = av.reader();
        let mut order = FieldOrder::new();
        let mut version = None;
        let mut tock = None;
        let mut ttnk = None;
        let mut iv = None;
        let mut key_id = None;
        while !f.is_empty() {
            let t = f.read_tlv("AuthenticationValue field")?;
            let (index, name) = match t.tag {
                tag::VERSION => (0, "version"),
                tag::TIME_OF_CURRENT_KEY => (1, "TimeOfCurrentKey"),
                tag::TIME_TO_NEXT_KEY => (2, "TimeToNextKey"),
                tag::IV => (3, "IV"),
                tag::KEY_ID => (4, "KeyID"),
                other => {
                    return Err(Error::UnknownTag {
                        what: "AuthenticationValue",
                        tag: other,
                    })
                }
            };
            order.see(index, name)?;
            match index {
                0 => version = Some(ber::decode_i64(t.value, "version")?),
                1 => tock = Some(ber::decode_i64(t.value, "TimeOfCurrentKey")?),
                2 => ttnk = Some(ber::decode_i64(t.value, "TimeToNextKey")?),
                3 => iv = Some(t.value),
                _ => key_id = Some(ber::decode_u32(t.value, "KeyID")?),
            }
        }
        let mac = body.read_expected(tag::MAC, "mAC")?;
        body.expect_end("SecurityExtension")?;
        Ok(ExtensionView {
            version: version.ok_or(Error::MissingField("version"))?,
            time_of_current_key: tock.ok_or(Error::MissingField("TimeOfCurrentKey"))?,
            time_to_next_key: ttnk.ok_or(Error::MissingField("TimeToNextKey"))?,
            iv,
            key_id: key_id.ok_or(Error::MissingField("KeyID"))?,
            mac: mac.value,
            layout: ExtensionLayout {
                auth_value: av.range(),
                mac: mac.value_range(),
            },
        })
    }

    /// The owned extension.
    pub fn to_extension(&self) -> SecurityExtension {
        SecurityExtension {
            version: self.version,
            time_of_current_key: self.time_of_current_key,
            time_to_next_key: self.time_to_next_key,
            iv: self.iv.map(<[u8]>::to_vec),
            key_id: self.key_id,
            mac: self.mac.to_vec(),
        }
    }
}

/// The fields a sender chooses for a version-1 extension, borrowed, so that it can be written
/// straight into the output frame ([`ExtensionFields::emit_placeholder`]) with no owned
/// [`SecurityExtension`] in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtensionFields<'a> {
    /// Key ID.
    pub key_id: u32,
    /// TimeOfCurrentKey.
    pub time_of_current_key: i64,
    /// TimeToNextKey.
    pub time_to_next_key: i64,
    /// The IV, if the algorithm uses one.
    pub iv: Option<&'a [u8]>,
    /// Length of the MAC or signature.
    pub mac_len: usize,
}

/// The integer encodings and lengths of one extension, computed once per frame: what the one
/// encoder ([`Encoded::encode`]) writes and what sizing and layout read, for the owned
/// [`SecurityExtension`] and the borrowed [`ExtensionFields`] alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Encoded<'a> {
    version: Int,
    time_of_current_key: Int,
    time_to_next_key: Int,
    iv: Option<&'a [u8]>,
    key_id: Int,
    mac_len: usize,
    /// Contents length of AuthenticationValue.
    auth_value_len: usize,
    /// Contents length of the whole extension.
    content_len: usize,
}

/// The minimal two's-complement contents octets of an INTEGER (X.690 8.3.2: the first nine
/// bits never all equal), found from the count of leading sign bits instead of a loop over
/// the octets: `v`'s magnitude bits plus one sign bit, rounded up to whole octets. The same
/// octets as `ber::encode_i64` (property test `int_matches_ber`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Int {
    /// `v` big-endian, its contents octets first (left-aligned), zeros after them.
    left: [u8; 8],
    len: u8,
}

impl Int {
    #[inline(always)]
    fn new(v: i64) -> Int {
        // `v` for v >= 0, `!v` for v < 0: either way the bits that are not sign copies.
        let magnitude = (v ^ (v >> 63)) as u64;
        let len = ((72 - magnitude.leading_zeros()) / 8).max(1);
        Int {
            left: ((v as u64) << (8 * (8 - len))).to_be_bytes(),
            len: len as u8,
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.len as usize
    }
}

impl AsRef<[u8]> for Int {
    fn as_ref(&self) -> &[u8] {
        &self.left[..self.len as usize]
    }
}

/// Largest extension [`Encoded::emit_short`] writes: every element length in the short form.
const SHORT_MAX: usize = 127;

/// Zeros for a placeholder mAC, written in pieces of this size (signatures can be longer).
const ZEROS: [u8; 64] = [0; 64];

impl<'a> Encoded<'a> {
    // Always inlined: a sender's version is the constant 1 and its integer encodings then fold,
    // as they did when each caller computed them itself (callgrind: 200 instructions a frame).
    #[inline(always)]
    fn new(
        version: i64,
        time_of_current_key: i64,
        time_to_next_key: i64,
        iv: Option<&'a [u8]>,
        key_id: u32,
        mac_len: usize,
    ) -> Self {
        let version = Int::new(version);
        let time_of_current_key = Int::new(time_of_current_key);
        let time_to_next_key = Int::new(time_to_next_key);
        // A u32 is a non-negative i64: the same minimal octets as `ber::encode_u64`, a
        // leading zero octet where its top bit is set (X.690 8.3.3).
        let key_id = Int::new(i64::from(key_id));
        let auth_value_len = ber::tlv_len(version.len())
            + ber::tlv_len(time_of_current_key.len())
            + ber::tlv_len(time_to_next_key.len())
            + iv.map_or(0, |iv| ber::tlv_len(iv.len()))
            + ber::tlv_len(key_id.len());
        Encoded {
            version,
            time_of_current_key,
            time_to_next_key,
            iv,
            key_id,
            mac_len,
            auth_value_len,
            content_len: ber::tlv_len(auth_value_len) + ber::tlv_len(mac_len),
        }
    }

    #[inline]
    fn buffer_len(&self) -> usize {
        ber::tlv_len(self.content_len)
    }

    /// Where AuthenticationValue and mAC are in the encoding, without encoding.
    #[inline]
    fn layout(&self) -> ExtensionLayout {
        let av_start = 1 + ber::encoded_len_len(self.content_len);
        let av_end = av_start + ber::tlv_len(self.auth_value_len);
        let mac_start = av_end + 1 + ber::encoded_len_len(self.mac_len);
        ExtensionLayout {
            auth_value: av_start..av_end,
            mac: mac_start..mac_start + self.mac_len,
        }
    }

    /// [`Self::encode`] with a zero mAC for the extension every MAC key writes (the whole
    /// extension under 128 octets, so every length is one octet, X.690 8.1.3.4), assembled in
    /// a zeroed stack buffer with fixed eight-octet stores (an [`Int`] is left-aligned with
    /// zeros after it, so the next element overwrites only zeros) and copied out once: a
    /// layer-2 protect writes it per frame, and a copy per element was most of its cost.
    /// `false` (nothing written) for anything larger, which [`Self::encode`] writes.
    #[inline]
    fn emit_short(&self, buf: &mut [u8]) -> bool {
        let total = self.buffer_len();
        if total > SHORT_MAX || buf.len() < total || self.iv.is_some_and(|iv| iv.len() > 16) {
            return false;
        }
        // Room for the last eight-octet store past the end of the extension.
        let mut t = [0u8; SHORT_MAX + 16];
        t[0] = tag::SECURITY_EXTENSION;
        t[1] = self.content_len as u8;
        t[2] = tag::AUTHENTICATION_VALUE;
        t[3] = self.auth_value_len as u8;
        let mut at = 4;
        let int = |t: &mut [u8; SHORT_MAX + 16], at: &mut usize, tag: u8, v: &Int| {
            t[*at] = tag;
            t[*at + 1] = v.len;
            t[*at + 2..*at + 10].copy_from_slice(&v.left);
            *at += 2 + v.len();
        };
        int(&mut t, &mut at, tag::VERSION, &self.version);
        int(
            &mut t,
            &mut at,
            tag::TIME_OF_CURRENT_KEY,
            &self.time_of_current_key,
        );
        int(
            &mut t,
            &mut at,
            tag::TIME_TO_NEXT_KEY,
            &self.time_to_next_key,
        );
        if let Some(iv) = self.iv {
            t[at] = tag::IV;
            t[at + 1] = iv.len() as u8;
            // GMAC's 12-octet IV (SP 800-38D 8.2) as one fixed-size store; any other length
            // through a zero-padded block, so that the store size is fixed either way.
            match <&[u8; 12]>::try_from(iv) {
                Ok(iv12) => t[at + 2..at + 14].copy_from_slice(iv12),
                Err(_) => {
                    let mut ivb = [0u8; 16];
                    ivb[..iv.len()].copy_from_slice(iv);
                    t[at + 2..at + 18].copy_from_slice(&ivb);
                }
            }
            at += 2 + iv.len();
        }
        int(&mut t, &mut at, tag::KEY_ID, &self.key_id);
        t[at] = tag::MAC;
        t[at + 1] = self.mac_len as u8;
        // The mAC's octets are still zero: nothing was stored past the KeyID's contents but
        // the zeros that follow them in `Int::left` (and the IV's zero padding before that).
        buf[..total].copy_from_slice(&t[..total]);
        true
    }

    /// The one encoder of the extension (IEC 62351-6 8.4: `SecurityExtension` holding
    /// AuthenticationValue and the mAC), for every [`Sink`]; `mac` `None` writes
    /// `mac_len` zero octets (a placeholder the sender patches after MACing).
    #[inline]
    fn encode<S: Sink + ?Sized>(&self, out: &mut S, mac: Option<&[u8]>) {
        out.header(tag::SECURITY_EXTENSION, self.content_len);
        out.header(tag::AUTHENTICATION_VALUE, self.auth_value_len);
        tlv(out, tag::VERSION, self.version.as_ref());
        tlv(
            out,
            tag::TIME_OF_CURRENT_KEY,
            self.time_of_current_key.as_ref(),
        );
        tlv(out, tag::TIME_TO_NEXT_KEY, self.time_to_next_key.as_ref());
        if let Some(iv) = self.iv {
            tlv(out, tag::IV, iv);
        }
        tlv(out, tag::KEY_ID, self.key_id.as_ref());
        match mac {
            Some(mac) => tlv(out, tag::MAC, mac),
            None => {
                out.header(tag::MAC, self.mac_len);
                let mut left = self.mac_len;
                while left > 0 {
                    let n = left.min(ZEROS.len());
                    out.bytes(&ZEROS[..n]);
                    left -= n;
                }
            }
        }
    }
}

impl<'a> ExtensionFields<'a> {
    #[inline]
    fn encoded(&self) -> Encoded<'a> {
        Encoded::new(
            VERSION_1,
            self.time_of_current_key,
            self.time_to_next_key,
            self.iv,
            self.key_id,
            self.mac_len,
        )
    }

    /// The fields with their integers encoded and the lengths computed, once: what a frame
    /// encoder sizes its output with and then writes ([`EncodedExtension`]).
    pub fn encode(&self) -> EncodedExtension<'a> {
        EncodedExtension { e: self.encoded() }
    }

    /// Size of the encoded extension.
    pub fn buffer_len(&self) -> usize {
        self.encoded().buffer_len()
    }

    /// Write the extension with a zero mAC to `out`.
    pub fn encode_placeholder<S: Sink + ?Sized>(&self, out: &mut S) {
        self.encoded().encode(out, None);
    }

    /// Write the extension with a zero mAC at the start of `buf` (at least
    /// [`Self::buffer_len`] octets; a shorter buffer is a caller bug and panics, as for
    /// [`Codec::emit`]); returns where AuthenticationValue and the mAC are. Encodes what
    /// [`SecurityExtension::with_placeholder_mac`] with the same fields encodes.
    pub fn emit_placeholder(&self, buf: &mut [u8]) -> ExtensionLayout {
        self.encode().emit_placeholder(buf)
    }
}

/// An [`ExtensionFields`] encoded once (its integers' contents octets and the element
/// lengths), in the encoder shape of every frame part: [`Self::buffer_len`] to size the
/// caller's buffer, [`Self::emit_placeholder`] to write into it. A layer-2 protect both sizes
/// and writes the extension; encoding the fields once for both halves the integer encodings
/// per frame (issue 23 item 4: they were a tenth of a layer-2 GMAC protect).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodedExtension<'a> {
    e: Encoded<'a>,
}

impl EncodedExtension<'_> {
    /// Size of the encoded extension.
    pub fn buffer_len(&self) -> usize {
        self.e.buffer_len()
    }

    /// [`ExtensionFields::emit_placeholder`] from the encodings made once.
    pub fn emit_placeholder(&self, buf: &mut [u8]) -> ExtensionLayout {
        if !self.e.emit_short(buf) {
            self.e.encode(&mut SliceSink::new(buf), None);
        }
        self.e.layout()
    }
}

impl SecurityExtension {
    /// A version-1 extension with a zero MAC of `mac_len` octets, to be emitted, MACed over
    /// EtherType..`layout().auth_value.end` and patched at `layout().mac`.
    pub fn with_placeholder_mac(
        key_id: u32,
        time_of_current_key: i64,
        time_to_next_key: i64,
        iv: Option<Vec<u8>>,
        mac_len: usize,
    ) -> Self {
        SecurityExtension {
            version: VERSION_1,
            time_of_current_key,
            time_to_next_key,
            iv,
            key_id,
            mac: vec![0; mac_len],
        }
    }

    /// Parse an extension that fills `bytes` exactly.
    pub fn parse(bytes: &[u8]) -> Result<SecurityExtension> {
        Self::parse_with_layout(bytes).map(|(e, _)| e)
    }

    /// Parse an extension and report where its AuthenticationValue and mAC are.
    pub fn parse_with_layout(bytes: &[u8]) -> Result<(SecurityExtension, ExtensionLayout)> {
        let v = ExtensionView::parse(bytes)?;
        Ok((v.to_extension(), v.layout))
    }

    #[inline]
    fn encoded(&self) -> Encoded<'_> {
        Encoded::new(
            self.version,
            self.time_of_current_key,
            self.time_to_next_key,
            self.iv.as_deref(),
            self.key_id,
            self.mac.len(),
        )
    }

    /// Where AuthenticationValue and mAC will be in the encoding, without encoding.
    pub fn layout(&self) -> ExtensionLayout {
        self.encoded().layout()
    }

    /// The one encoder of the extension (IEC 62351-6 8.4, `SecurityExtension` in the GOOSE
    /// and SV reserved-field extension), for every [`Sink`].
    pub fn encode<S: Sink + ?Sized>(&self, out: &mut S) {
        self.encoded().encode(out, Some(&self.mac));
    }
}

impl Codec for SecurityExtension {
    /// Size of the encoded extension.
    fn buffer_len(&self) -> usize {
        self.encoded().buffer_len()
    }

    fn emit(&self, buf: &mut [u8]) -> usize {
        let mut w = SliceSink::new(buf);
        self.encode(&mut w);
        w.pos
    }

    fn emit_vec(&self, out: &mut Vec<u8>) {
        self.encode(out);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The extension of the synthetic libiec61850 frame in gander-sec's `golden_frames.txt`.
    pub(crate) const LIB_EXT: &str =
        "a020a40c800101810100820100840101851030f90ee17f312b2dd902094ef6496319";

    pub(crate) fn arb_ext() -> impl Strategy<Value = SecurityExtension> {
        (
            any::<i64>(),
            any::<i64>(),
            any::<i64>(),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..16)),
            any::<u32>(),
            proptest::collection::vec(any::<u8>(), 0..40),
        )
            .prop_map(
                |(version, time_of_current_key, time_to_next_key, iv, key_id, mac)| {
                    SecurityExtension {
                        version,
                        time_of_current_key,
                        time_to_next_key,
                        iv,
                        key_id,
                        mac,
                    }
                },
            )
    }

    #[test]
    fn crc_check_value() {
        assert_eq!(crc16_x25(b"123456789"), 0x906e);
        assert_eq!(crc16_x25(b""), 0x0000);
    }

    #[test]
    fn libiec61850_extension() {
        let b = hex::decode(LIB_EXT).unwrap();
        let (e, l) = SecurityExtension::parse_with_layout(&b).unwrap();
        assert_eq!(
            (
                e.version,
                e.time_of_current_key,
                e.time_to_next_key,
                e.key_id
            ),
            (1, 0, 0, 1)
        );
        assert_eq!(e.iv, None);
        assert_eq!(
            e.mac,
            hex::decode("30f90ee17f312b2dd902094ef6496319").unwrap()
        );
        assert_eq!(
            l,
            ExtensionLayout {
                auth_value: 2..16,
                mac: 18..34
            }
        );
        assert_eq!(e.layout(), l);
        assert_eq!(e.to_vec(), b);
        assert_eq!(e.buffer_len(), b.len());
    }

    #[test]
    fn placeholder_then_patch() {
        let e = SecurityExtension::with_placeholder_mac(7, 100, -5, Some(vec![9; 12]), 16);
        let mut buf = vec![0xa5; e.buffer_len()];
        assert_eq!(e.emit(&mut buf), buf.len());
        let l = e.layout();
        assert!(buf[l.mac.clone()].iter().all(|&b| b == 0));
        buf[l.mac.clone()].copy_from_slice(&[0x11; 16]);
        let p = SecurityExtension::parse(&buf).unwrap();
        assert_eq!(p.mac, vec![0x11; 16]);
        assert_eq!(p.iv, Some(vec![9; 12]));
        assert_eq!(p.time_to_next_key, -5);
    }

    #[test]
    fn rejects_malformed() {
        // mAC inside AuthenticationValue is not the layout on the wire.
        let inside = hex::decode("a011a40f800101810100820100840101850100").unwrap();
        assert!(matches!(
            SecurityExtension::parse(&inside),
            Err(Error::UnknownTag {
                what: "AuthenticationValue",
                tag: 0x85
            })
        ));
        let no_key = hex::decode("a00ea409800101810100820100850100").unwrap();
        assert_eq!(
            SecurityExtension::parse(&no_key),
            Err(Error::MissingField("KeyID"))
        );
        let swapped = hex::decode("a011a40c810100800101820100840101850100").unwrap();
        assert_eq!(
            SecurityExtension::parse(&swapped),
            Err(Error::OutOfOrder("version"))
        );
        let no_mac = hex::decode("a00ea40c800101810100820100840101").unwrap();
        assert!(matches!(
            SecurityExtension::parse(&no_mac),
            Err(Error::Truncated { .. })
        ));
        let mut trailing = hex::decode(LIB_EXT).unwrap();
        trailing.push(0);
        assert!(matches!(
            SecurityExtension::parse(&trailing),
            Err(Error::TrailingBytes { .. })
        ));
    }

    #[test]
    fn crc_byte_order() {
        assert_eq!(CrcByteOrder::LowFirst.reserved2(0x35c0), 0xc035);
        assert_eq!(
            CrcByteOrder::detect(0x35c0, 0xc035),
            Some(CrcByteOrder::LowFirst)
        );
        assert_eq!(
            CrcByteOrder::detect(0x35c0, 0x35c0),
            Some(CrcByteOrder::HighFirst)
        );
        assert_eq!(CrcByteOrder::detect(0x35c0, 0), None);
    }

    proptest! {
        /// Writing the extension from borrowed fields gives the bytes and layout of the owned
        /// placeholder extension, and the view reads it back.
        #[test]
        fn emit_placeholder_matches_owned(
            key_id: u32, tock: i64, ttnk: i64,
            iv in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..17)),
            mac_len in 0usize..300,
        ) {
            let owned = SecurityExtension::with_placeholder_mac(key_id, tock, ttnk, iv.clone(), mac_len);
            let fields = ExtensionFields {
                key_id,
                time_of_current_key: tock,
                time_to_next_key: ttnk,
                iv: iv.as_deref(),
                mac_len,
            };
            prop_assert_eq!(fields.buffer_len(), owned.buffer_len());
            let mut buf = vec![0xa5; fields.buffer_len()];
            let layout = fields.emit_placeholder(&mut buf);
            prop_assert_eq!(&buf, &owned.to_vec());
            prop_assert_eq!(&layout, &owned.layout());
            let v = ExtensionView::parse(&buf).unwrap();
            prop_assert_eq!(&v.layout, &layout);
            prop_assert_eq!(v.to_extension(), owned);
            let placeholder = crate::ber_sink::check_sinks_agree(|o| fields.encode_placeholder(o));
            prop_assert_eq!(placeholder, Ok(buf));
        }

        /// The one encoder gives the same octets on the Vec, Counter and Slice sinks, and
        /// `buffer_len`'s closed form is what it counts; the layout points at the
        /// AuthenticationValue and mAC it wrote.
        #[test]
        fn sinks_agree(e in arb_ext()) {
            let v = crate::ber_sink::check_codec_agrees(&e, |o| e.encode(o));
            prop_assert!(v.is_ok());
            let v = v.unwrap_or_default();
            let l = e.layout();
            prop_assert_eq!(&v[l.mac.clone()], &e.mac[..]);
            prop_assert_eq!(SecurityExtension::parse_with_layout(&v).ok(), Some((e, l)));
        }

        /// The leading-zero count gives `ber::encode_i64`'s octets, for every i64 and u32.
        #[test]
        fn int_matches_ber(v: i64, k: u32) {
            let (a, b) = (Int::new(v), ber::encode_i64(v));
            prop_assert_eq!(a.as_ref(), b.as_ref());
            let (a, b) = (Int::new(i64::from(k)), ber::encode_u64(k.into()));
            prop_assert_eq!(a.as_ref(), b.as_ref());
        }

        /// The table-driven CRC equals the bitwise RFC 1662 loop.
        #[test]
        fn crc_table_matches_bitwise(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut crc: u16 = 0xffff;
            for &b in &data {
                crc ^= b as u16;
                for _ in 0..8 {
                    crc = if crc & 1 != 0 { (crc >> 1) ^ 0x8408 } else { crc >> 1 };
                }
            }
            prop_assert_eq!(crc16_x25(&data), !crc);
        }

        #[test]
        fn parse_emit_round_trip(e in arb_ext()) {
            let b = e.to_vec();
            prop_assert_eq!(b.len(), e.buffer_len());
            let (p, l) = SecurityExtension::parse_with_layout(&b).unwrap();
            prop_assert_eq!(&p, &e);
            prop_assert_eq!(l, e.layout());
        }

        /// The fast path gives the general parser's view wherever it answers, and answers for
        /// every extension gander writes; one octet changed or the bytes framed as an
        /// extension do not make them disagree.
        #[test]
        fn canonical_agrees_with_general(
            e in arb_ext(), flip in any::<prop::sample::Index>(), x: u8,
            noise in proptest::collection::vec(any::<u8>(), 0..80),
        ) {
            let mut b = e.to_vec();
            let fast = ExtensionView::canonical(&b);
            prop_assert!(fast.is_some());
            prop_assert_eq!(fast, ExtensionView::parse_general(&b).ok());
            let i = flip.index(b.len());
            b[i] ^= x;
            if let Some(v) = ExtensionView::canonical(&b) {
                prop_assert_eq!(Some(v), ExtensionView::parse_general(&b).ok());
            }
            let mut framed = vec![0xa0];
            crate::ber_sink::length(&mut framed, noise.len());
            framed.extend_from_slice(&noise);
            for bytes in [&noise, &framed] {
                if let Some(v) = ExtensionView::canonical(bytes) {
                    prop_assert_eq!(Some(v), ExtensionView::parse_general(bytes).ok());
                }
            }
        }

        #[test]
        fn no_panic_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = SecurityExtension::parse(&data);
            let mut framed = vec![0xa0];
            crate::ber_sink::length(&mut framed, data.len());
            framed.extend_from_slice(&data);
            let _ = SecurityExtension::parse(&framed);
        }
    }
}
