//! The IEC 61850-9-2 sampled-values APDU, `savPdu` (IEC 61850-9-2 clause 8.5, Table 14).
//!
//! ```text
//! SavPdu ::= [APPLICATION 0] IMPLICIT SEQUENCE {          -- 0x60
//!   noASDU   [0] IMPLICIT INTEGER (1..65535),             -- 0x80
//!   security [1] ANY OPTIONAL,                            -- 0x81 (kept raw)
//!   asdu     [2] IMPLICIT SEQUENCE OF ASDU }              -- 0xA2
//! ASDU ::= SEQUENCE {                                     -- 0x30
//!   svID       [0] IMPLICIT VisibleString,                -- 0x80
//!   datset     [1] IMPLICIT VisibleString OPTIONAL,       -- 0x81
//!   smpCnt     [2] IMPLICIT OCTET STRING (SIZE(2)),       -- 0x82 INT16U
//!   confRev    [3] IMPLICIT OCTET STRING (SIZE(4)),       -- 0x83 INT32U
//!   refrTm     [4] IMPLICIT UtcTime OPTIONAL,             -- 0x84 (8)
//!   smpSynch   [5] IMPLICIT OCTET STRING (SIZE(1)),       -- 0x85
//!   smpRate    [6] IMPLICIT OCTET STRING (SIZE(2)) OPTIONAL, -- 0x86
//!   sample     [7] IMPLICIT OCTET STRING,                 -- 0x87 (data set values)
//!   smpMod     [8] IMPLICIT OCTET STRING (SIZE(2)) OPTIONAL, -- 0x88
//!   gmIdentity [9] IMPLICIT OCTET STRING (SIZE(8)) OPTIONAL } -- 0x89 (Ed.2.1)
//! ```
//!
//! Unlike GOOSE, the ASDU's numbers are fixed-size big-endian octet strings (9-2 clause 8.6
//! encodes the basic types without BER integer rules), so their sizes are enforced exactly.

use crate::ber::{self, FieldOrder, Reader};
use crate::ber_sink::{tlv, uint, Sink, SliceSink};
use crate::{Codec, Error, Result};

/// Identifier octet of `savPdu` ([APPLICATION 0], constructed).
pub const TAG_SAV_PDU: u8 = 0x60;
/// Identifier octet of the noASDU field.
pub const TAG_NO_ASDU: u8 = 0x80;
/// Identifier octet of the security field.
pub const TAG_SECURITY: u8 = 0x81;
/// Identifier octet of the SEQUENCE OF ASDU.
pub const TAG_SEQ_ASDU: u8 = 0xa2;
/// Identifier octet of one ASDU (universal SEQUENCE).
pub const TAG_ASDU: u8 = 0x30;

/// One application service data unit: one set of samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asdu {
    /// svID: sampled value control block identifier.
    pub sv_id: String,
    /// datSet: data set reference, if sent.
    pub dat_set: Option<String>,
    /// Sample counter, wrapping at the sample rate.
    pub smp_cnt: u16,
    /// confRev: configuration revision.
    pub conf_rev: u32,
    /// Refresh time (UtcTime).
    pub refr_tm: Option<[u8; 8]>,
    /// Synchronisation source: 0 none, 1 local, 2 global (IEC 61850-9-2 Ed.2).
    pub smp_synch: u8,
    /// smpRate: samples per period or per second, if sent.
    pub smp_rate: Option<u16>,
    /// The encoded data set values, kept raw (their layout depends on the data set).
    pub sample: Vec<u8>,
    /// smpMod: what smpRate counts (IEC 61850-9-2 Ed.2), if sent.
    pub smp_mod: Option<u16>,
    /// Grandmaster clock identity (IEC 61850-9-2 Ed.2.1).
    pub gm_identity: Option<[u8; 8]>,
}

/// The decoded `savPdu`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavPdu {
    /// Contents of the `security` field, if present (reserved by 9-2; kept raw).
    pub security: Option<Vec<u8>>,
    /// The ASDUs; `noASDU` on the wire is their number.
    pub asdus: Vec<Asdu>,
}

fn fixed<const N: usize>(v: &[u8], what: &'static str) -> Result<[u8; N]> {
    v.try_into().map_err(|_| Error::BadLength {
        what,
        value: v.len(),
    })
}

/// One ASDU checked exactly as the owned parse checks it, borrowing its strings and samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsduView<'a> {
    /// svID.
    pub sv_id: &'a str,
    /// datSet, if sent.
    pub dat_set: Option<&'a str>,
    /// Sample counter.
    pub smp_cnt: u16,
    /// confRev.
    pub conf_rev: u32,
    /// Refresh time (UtcTime), if sent.
    pub refr_tm: Option<[u8; 8]>,
    /// smpSynch.
    pub smp_synch: u8,
    /// smpRate, if sent.
    pub smp_rate: Option<u16>,
    /// The encoded data set values.
    pub sample: &'a [u8],
    /// smpMod, if sent.
    pub smp_mod: Option<u16>,
    /// Grandmaster clock identity, if sent.
    pub gm_identity: Option<[u8; 8]>,
}

impl<'a> AsduView<'a> {
    fn decode(t: &ber::Tlv<'a>) -> Result<AsduView<'a>> {
        let mut r = t.reader();
        let mut order = FieldOrder::new();
        let mut sv_id = None;
        let mut dat_set = None;
        let mut smp_cnt = None;
        let mut conf_rev = None;
        let mut refr_tm = None;
        let mut smp_synch = None;
        let mut smp_rate = None;
        let mut sample = None;
        let mut smp_mod = None;
        let mut gm_identity = None;
        while !r.is_empty() {
            let f = r.read_tlv("ASDU field")?;
            let v = f.value;
            let (index, name) = match f.tag {
                0x80 => (0, "svID"),
                0x81 => (1, "datSet"),
                0x82 => (2, "smpCnt"),
                0x83 => (3, "confRev"),
                0x84 => (4, "refrTm"),
                0x85 => (5, "smpSynch"),
                0x86 => (6, "smpRate"),
                0x87 => (7, "sample"),
                0x88 => (8, "smpMod"),
                0x89 => (9, "gmIdentity"),
                other => {
                    return Err(Error::UnknownTag {
                        what: "ASDU",
                        tag: other,
                    })
                }
            };
            order.see(index, name)?;
            match index {
                0 => sv_id = Some(ber::visible_str(v, "svID")?),
                1 => dat_set = Some(ber::visible_str(v, "datSet")?),
                2 => smp_cnt = Some(u16::from_be_bytes(fixed(v, "smpCnt")?)),
                3 => conf_rev = Some(u32::from_be_bytes(fixed(v, "confRev")?)),
                4 => refr_tm = Some(fixed(v, "refrTm")?),
                5 => smp_synch = Some(fixed::<1>(v, "smpSynch")?[0]),
                6 => smp_rate = Some(u16::from_be_bytes(fixed(v, "smpRate")?)),
                7 => sample = Some(v),
                8 => smp_mod = Some(u16::from_be_bytes(fixed(v, "smpMod")?)),
                _ => gm_identity = Some(fixed(v, "gmIdentity")?),
            }
        }
        Ok(AsduView {
            sv_id: sv_id.ok_or(Error::MissingField("svID"))?,
            dat_set,
            smp_cnt: smp_cnt.ok_or(Error::MissingField("smpCnt"))?,
            conf_rev: conf_rev.ok_or(Error::MissingField("confRev"))?,
            refr_tm,
            smp_synch: smp_synch.ok_or(Error::MissingField("smpSynch"))?,
            smp_rate,
            sample: sample.ok_or(Error::MissingField("sample"))?,
            smp_mod,
            gm_identity,
        })
    }

    /// The owned ASDU.
    pub fn to_asdu(&self) -> Asdu {
        Asdu {
            sv_id: self.sv_id.to_owned(),
            dat_set: self.dat_set.map(str::to_owned),
            smp_cnt: self.smp_cnt,
            conf_rev: self.conf_rev,
            refr_tm: self.refr_tm,
            smp_synch: self.smp_synch,
            smp_rate: self.smp_rate,
            sample: self.sample.to_vec(),
            smp_mod: self.smp_mod,
            gm_identity: self.gm_identity,
        }
    }
}

/// A `savPdu` checked exactly as [`SavPdu::parse`] checks it (same errors for the same input:
/// the owned parse is built on the same walk), keeping only the first ASDU, borrowed: what the
/// layer-2 replay check reads (svID, smpCnt, smpRate/smpMod), without allocating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavView<'a> {
    /// Contents of the `security` field, if present.
    pub security: Option<&'a [u8]>,
    /// Number of ASDUs (equal to noASDU).
    pub no_asdu: usize,
    /// The first ASDU, if any.
    pub first: Option<AsduView<'a>>,
    /// The savPdu checked, for [`SavView::to_pdu`].
    bytes: &'a [u8],
}

impl<'a> SavView<'a> {
    /// Check a `savPdu` that fills `bytes` exactly, without allocating.
    pub fn parse(bytes: &'a [u8]) -> Result<SavView<'a>> {
        let mut first = None;
        let (security, no_asdu) = walk(bytes, |a| {
            if first.is_none() {
                first = Some(a);
            }
        })?;
        Ok(SavView {
            security,
            no_asdu,
            first,
            bytes,
        })
    }

    /// The owned savPdu, every ASDU decoded (the view keeps only the first).
    pub fn to_pdu(&self) -> Result<SavPdu> {
        SavPdu::parse(self.bytes)
    }
}

/// Walks a `savPdu`, handing each checked ASDU to `each`; returns the security field and the
/// number of ASDUs.
fn walk<'a>(
    bytes: &'a [u8],
    mut each: impl FnMut(AsduView<'a>),
) -> Result<(Option<&'a [u8]>, usize)> {
    let mut r = Reader::new(bytes);
    let pdu = r.read_expected(TAG_SAV_PDU, "savPdu")?;
    r.expect_end("savPdu")?;
    let mut body = pdu.reader();
    let no_asdu = body.read_expected(TAG_NO_ASDU, "noASDU")?;
    let no_asdu = ber::decode_u64(no_asdu.value, "noASDU")?;
    let security = body
        .read_optional(TAG_SECURITY, "security")?
        .map(|t| t.value);
    let seq = body.read_expected(TAG_SEQ_ASDU, "seqASDU")?;
    body.expect_end("savPdu")?;
    let mut items = seq.reader();
    let mut count = 0usize;
    while !items.is_empty() {
        let t = items.read_expected(TAG_ASDU, "ASDU")?;
        each(AsduView::decode(&t)?);
        count += 1;
    }
    if no_asdu != count as u64 {
        return Err(Error::BadValue {
            what: "noASDU",
            detail: "does not match the number of ASDUs",
        });
    }
    Ok((security, count))
}

impl Asdu {
    fn content_len(&self) -> usize {
        ber::tlv_len(self.sv_id.len())
            + self.dat_set.as_ref().map_or(0, |d| ber::tlv_len(d.len()))
            + ber::tlv_len(2)
            + ber::tlv_len(4)
            + self.refr_tm.map_or(0, |_| ber::tlv_len(8))
            + ber::tlv_len(1)
            + self.smp_rate.map_or(0, |_| ber::tlv_len(2))
            + ber::tlv_len(self.sample.len())
            + self.smp_mod.map_or(0, |_| ber::tlv_len(2))
            + self.gm_identity.map_or(0, |_| ber::tlv_len(8))
    }
}

impl Asdu {
    /// The one encoder of an ASDU (IEC 61850-9-2 8.5.2, `ASDU`), for every [`Sink`].
    pub fn encode<S: Sink + ?Sized>(&self, out: &mut S) {
        out.header(TAG_ASDU, self.content_len());
        tlv(out, 0x80, self.sv_id.as_bytes());
        if let Some(d) = &self.dat_set {
            tlv(out, 0x81, d.as_bytes());
        }
        tlv(out, 0x82, &self.smp_cnt.to_be_bytes());
        tlv(out, 0x83, &self.conf_rev.to_be_bytes());
        if let Some(t) = &self.refr_tm {
            tlv(out, 0x84, t);
        }
        tlv(out, 0x85, &[self.smp_synch]);
        if let Some(r) = self.smp_rate {
            tlv(out, 0x86, &r.to_be_bytes());
        }
        tlv(out, 0x87, &self.sample);
        if let Some(m) = self.smp_mod {
            tlv(out, 0x88, &m.to_be_bytes());
        }
        if let Some(g) = &self.gm_identity {
            tlv(out, 0x89, g);
        }
    }
}

impl Codec for Asdu {
    /// Size of the encoded ASDU element.
    fn buffer_len(&self) -> usize {
        ber::tlv_len(self.content_len())
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

impl SavPdu {
    /// Parse a `savPdu` that fills `bytes` exactly.
    pub fn parse(bytes: &[u8]) -> Result<SavPdu> {
        let mut asdus = Vec::new();
        let (security, _) = walk(bytes, |a| asdus.push(a.to_asdu()))?;
        Ok(SavPdu {
            security: security.map(<[u8]>::to_vec),
            asdus,
        })
    }

    /// Check that the strings are VisibleString so that the encoding parses back to `self`.
    pub fn validate(&self) -> Result<()> {
        for a in &self.asdus {
            if !ber::is_visible(&a.sv_id)
                || a.dat_set.as_deref().is_some_and(|d| !ber::is_visible(d))
            {
                return Err(Error::BadValue {
                    what: "ASDU",
                    detail: "character outside VisibleString",
                });
            }
        }
        Ok(())
    }

    fn seq_len(&self) -> usize {
        self.asdus.iter().map(Asdu::buffer_len).sum()
    }

    fn content_len(&self) -> usize {
        ber::tlv_len(ber::encode_u64(self.asdus.len() as u64).len())
            + self.security.as_ref().map_or(0, |s| ber::tlv_len(s.len()))
            + ber::tlv_len(self.seq_len())
    }
}

impl SavPdu {
    /// The one encoder of the `savPdu` (IEC 61850-9-2 8.5.2), for every [`Sink`].
    pub fn encode<S: Sink + ?Sized>(&self, out: &mut S) {
        out.header(TAG_SAV_PDU, self.content_len());
        uint(out, TAG_NO_ASDU, self.asdus.len() as u64);
        if let Some(s) = &self.security {
            tlv(out, TAG_SECURITY, s);
        }
        out.header(TAG_SEQ_ASDU, self.seq_len());
        self.asdus.iter().for_each(|a| a.encode(out));
    }
}

impl Codec for SavPdu {
    /// Size of the encoded APDU.
    fn buffer_len(&self) -> usize {
        ber::tlv_len(self.content_len())
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

    /// A 9-2LE style savPdu: one ASDU, svID "MU01", smpCnt 0x0102, confRev 1, smpSynch 2,
    /// eight INT32 + quality pairs (64 octets) of samples. Hand-assembled from the clause 8.5
    /// grammar.
    fn le_sample() -> Vec<u8> {
        let mut asdu = hex::decode("80044d5530318202010283040000000185010287").unwrap();
        asdu.push(64);
        asdu.extend((0..64u8).collect::<Vec<_>>());
        let mut seq = vec![0x30, asdu.len() as u8];
        seq.extend(asdu);
        let mut body = hex::decode("800101a2").unwrap();
        body.push(seq.len() as u8);
        body.extend(seq);
        let mut out = vec![0x60, body.len() as u8];
        out.extend(body);
        out
    }

    pub(crate) fn arb_asdu() -> impl Strategy<Value = Asdu> {
        (
            (
                "[ -~]{0,40}",
                proptest::option::of("[ -~]{0,40}"),
                any::<u16>(),
                any::<u32>(),
            ),
            (
                proptest::option::of(any::<[u8; 8]>()),
                any::<u8>(),
                proptest::option::of(any::<u16>()),
            ),
            (
                proptest::collection::vec(any::<u8>(), 0..200),
                proptest::option::of(any::<u16>()),
                proptest::option::of(any::<[u8; 8]>()),
            ),
        )
            .prop_map(
                |(
                    (sv_id, dat_set, smp_cnt, conf_rev),
                    (refr_tm, smp_synch, smp_rate),
                    (sample, smp_mod, gm_identity),
                )| Asdu {
                    sv_id,
                    dat_set,
                    smp_cnt,
                    conf_rev,
                    refr_tm,
                    smp_synch,
                    smp_rate,
                    sample,
                    smp_mod,
                    gm_identity,
                },
            )
    }

    #[test]
    fn nine_two_le_sample() {
        let b = le_sample();
        let p = SavPdu::parse(&b).unwrap();
        assert_eq!(p.asdus.len(), 1);
        let a = &p.asdus[0];
        assert_eq!(
            (a.sv_id.as_str(), a.smp_cnt, a.conf_rev, a.smp_synch),
            ("MU01", 0x0102, 1, 2)
        );
        assert_eq!(a.sample.len(), 64);
        assert_eq!(p.to_vec(), b);
        let mut buf = vec![0xa5; b.len() + 1];
        assert_eq!(p.emit(&mut buf), b.len());
        assert_eq!(buf[b.len()], 0xa5);
    }

    #[test]
    fn rejects_malformed() {
        let mut b = le_sample();
        b[4] = 2; // noASDU = 2 with one ASDU
        assert!(matches!(
            SavPdu::parse(&b),
            Err(Error::BadValue { what: "noASDU", .. })
        ));
        let mut b = le_sample();
        b[13] = 0x81; // a non-visible character in svID
        assert!(matches!(
            SavPdu::parse(&b),
            Err(Error::BadValue { what: "svID", .. })
        ));
        let mut b = le_sample();
        let i = b.windows(2).position(|w| w == [0x83, 0x04]).unwrap();
        b[i] = 0x84; // confRev tag -> refrTm with 4 octets
        assert_eq!(
            SavPdu::parse(&b),
            Err(Error::BadLength {
                what: "refrTm",
                value: 4
            })
        );
        let mut b = le_sample();
        b.push(0);
        assert!(matches!(
            SavPdu::parse(&b),
            Err(Error::TrailingBytes { .. })
        ));
    }

    proptest! {
        /// The one encoder of the savPdu and of each ASDU gives the same octets on the Vec,
        /// Counter and Slice sinks, and `buffer_len`'s closed form is what it counts.
        #[test]
        fn sinks_agree(
            asdus in proptest::collection::vec(arb_asdu(), 0..3),
            security in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..200)),
        ) {
            for a in &asdus {
                prop_assert!(crate::ber_sink::check_codec_agrees(a, |o| a.encode(o)).is_ok());
            }
            let p = SavPdu { security, asdus };
            prop_assert!(crate::ber_sink::check_codec_agrees(&p, |o| p.encode(o)).is_ok());
        }

        /// [`SavView`] accepts exactly what [`SavPdu::parse`] accepts, with the same error,
        /// and its first ASDU is the owned parse's first: on encoded savPdus, the same with
        /// one octet changed, and arbitrary bytes.
        #[test]
        fn view_agrees_with_owned_parse(
            asdus in proptest::collection::vec(arb_asdu(), 0..3),
            flip in any::<prop::sample::Index>(), x: u8,
            noise in proptest::collection::vec(any::<u8>(), 0..96),
        ) {
            let good = SavPdu { security: None, asdus }.to_vec();
            let mut bad = good.clone();
            let i = flip.index(bad.len());
            bad[i] ^= x;
            for b in [&good[..], &bad[..], &noise[..]] {
                match (SavView::parse(b), SavPdu::parse(b)) {
                    (Ok(v), Ok(p)) => {
                        prop_assert_eq!(v.no_asdu, p.asdus.len());
                        prop_assert_eq!(v.security.map(<[u8]>::to_vec), p.security);
                        let first = v.first.map(|a| a.to_asdu());
                        prop_assert_eq!(first.as_ref(), p.asdus.first());
                    }
                    (Err(a), Err(b)) => prop_assert_eq!(a, b),
                    (a, b) => prop_assert!(false, "view {:?} owned {:?}", a, b),
                }
            }
        }

        #[test]
        fn parse_emit_round_trip(asdus in proptest::collection::vec(arb_asdu(), 0..4),
                                 security in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20))) {
            let p = SavPdu { security, asdus };
            prop_assert!(p.validate().is_ok());
            let b = p.to_vec();
            prop_assert_eq!(b.len(), p.buffer_len());
            prop_assert_eq!(SavPdu::parse(&b).unwrap(), p);
        }

        #[test]
        fn no_panic_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = SavPdu::parse(&data);
            let mut framed = vec![0x60];
            crate::ber_sink::length(&mut framed, data.len());
            framed.extend_from_slice(&data);
            let _ = SavPdu::parse(&framed);
        }
    }
}
