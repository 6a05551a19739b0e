//! The GOOSE APDU, `IECGoosePdu` (IEC 61850-8-1 Annex A, `GOOSEpdu ::= CHOICE { gseMngtPdu,
//! goosePdu [APPLICATION 1] IMPLICIT IECGoosePdu }`, so tag 0x61).
//!
//! ```text
//! IECGoosePdu ::= SEQUENCE {
//!   gocbRef           [0] IMPLICIT VisibleString,        -- 0x80
//!   timeAllowedtoLive [1] IMPLICIT INTEGER,              -- 0x81 (ms)
//!   datSet            [2] IMPLICIT VisibleString,        -- 0x82
//!   goID              [3] IMPLICIT VisibleString OPTIONAL,-- 0x83
//!   t                 [4] IMPLICIT UtcTime,              -- 0x84 (8 octets)
//!   stNum             [5] IMPLICIT INTEGER,              -- 0x85
//!   sqNum             [6] IMPLICIT INTEGER,              -- 0x86
//!   simulation        [7] IMPLICIT BOOLEAN DEFAULT FALSE,-- 0x87 (Ed.1: test)
//!   confRev           [8] IMPLICIT INTEGER,              -- 0x88
//!   ndsCom            [9] IMPLICIT BOOLEAN DEFAULT FALSE,-- 0x89
//!   numDatSetEntries [10] IMPLICIT INTEGER,              -- 0x8A
//!   allData          [11] IMPLICIT SEQUENCE OF Data,     -- 0xAB
//!   -- security      [12] ANY OPTIONAL (reserved, commented out in the standard)
//! }
//! ```
//!
//! `simulation` and `ndsCom` are DEFAULT FALSE in the ASN.1 but every implementation we know
//! (libiec61850, the IEDs in the papers) always sends them, so parse accepts their absence
//! (meaning FALSE) and emit always writes them. The integers are INT32U in IEC 61850-7-2
//! (stNum, sqNum, confRev) so values above `u32::MAX` or below zero are rejected.

use crate::ber::{self, FieldOrder, Reader};
use crate::ber_sink::{tlv, uint, Sink, SliceSink};
use crate::data::{self, Data};
use crate::tlv_scan::{self, Scan};
use crate::visible_str::VisibleStr;
use crate::{Codec, Error, Result};
use core::ops::Range;

/// Identifier octet of `IECGoosePdu` ([APPLICATION 1], constructed).
pub const TAG_GOOSE_PDU: u8 = 0x61;

/// Tags of the `IECGoosePdu` components (context-specific, X.690 8.1.2).
pub mod tag {
    /// gocbRef `[0]`: GOOSE control block reference.
    pub const GOCB_REF: u8 = 0x80;
    /// timeAllowedtoLive `[1]`: milliseconds before the next message.
    pub const TIME_ALLOWED_TO_LIVE: u8 = 0x81;
    /// datSet `[2]`: data set reference.
    pub const DAT_SET: u8 = 0x82;
    /// goID `[3]`: optional application identifier.
    pub const GO_ID: u8 = 0x83;
    /// t `[4]`: UtcTime of the last state change.
    pub const T: u8 = 0x84;
    /// stNum `[5]`: state number, bumped on each change.
    pub const ST_NUM: u8 = 0x85;
    /// sqNum `[6]`: sequence number within a state.
    pub const SQ_NUM: u8 = 0x86;
    /// simulation `[7]` (test in Ed.1).
    pub const SIMULATION: u8 = 0x87;
    /// confRev `[8]`: configuration revision.
    pub const CONF_REV: u8 = 0x88;
    /// ndsCom `[9]`: needs commissioning.
    pub const NDS_COM: u8 = 0x89;
    /// numDatSetEntries `[10]`.
    pub const NUM_DAT_SET_ENTRIES: u8 = 0x8a;
    /// allData `[11]` (constructed): the data set values.
    pub const ALL_DATA: u8 = 0xab;
}

/// The decoded `IECGoosePdu`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoosePdu {
    /// GoCB reference, e.g. `simpleIOGenericIO/LLN0$GO$gcbAnalogValues`.
    pub gocb_ref: String,
    /// Milliseconds until the subscriber should expect the next message (IEC 61850-8-1 18.1.2.5).
    pub time_allowed_to_live: u32,
    /// Data set reference.
    pub dat_set: String,
    /// Optional GOOSE identifier.
    pub go_id: Option<String>,
    /// Time of the last state change, UtcTime: seconds (4), fraction (3), quality (1).
    pub t: [u8; 8],
    /// State number, incremented on each change of data.
    pub st_num: u32,
    /// Sequence number, incremented on each retransmission.
    pub sq_num: u32,
    /// Simulation (Ed.2) / test (Ed.1) flag.
    pub simulation: bool,
    /// Configuration revision of the data set.
    pub conf_rev: u32,
    /// Needs commissioning.
    pub nds_com: bool,
    /// Number of data set entries (should equal `all_data.len()`; not enforced here, a
    /// publisher that gets it wrong is a finding to report; the security library refuses to
    /// protect or verify such an APDU, [`GooseView::entries_match`]).
    pub num_dat_set_entries: u32,
    /// The data set values.
    pub all_data: Vec<Data>,
}

/// Absolute byte ranges of the contents octets of fields a caller may want to patch or
/// inspect without re-encoding (e.g. a replay test bumping sqNum of the same width).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GooseFieldRanges {
    /// Contents octets of `t`.
    pub t: Range<usize>,
    /// Contents octets of `stNum`.
    pub st_num: Range<usize>,
    /// Contents octets of `sqNum`.
    pub sq_num: Range<usize>,
    /// Contents octets of `simulation`, if present.
    pub simulation: Option<Range<usize>>,
    /// Contents octets of `allData` (the concatenated values).
    pub all_data: Range<usize>,
}

/// Field positions in the SEQUENCE, for order checking.
fn field_index(t: u8) -> Option<(usize, &'static str)> {
    Some(match t {
        tag::GOCB_REF => (0, "gocbRef"),
        tag::TIME_ALLOWED_TO_LIVE => (1, "timeAllowedtoLive"),
        tag::DAT_SET => (2, "datSet"),
        tag::GO_ID => (3, "goID"),
        tag::T => (4, "t"),
        tag::ST_NUM => (5, "stNum"),
        tag::SQ_NUM => (6, "sqNum"),
        tag::SIMULATION => (7, "simulation"),
        tag::CONF_REV => (8, "confRev"),
        tag::NDS_COM => (9, "ndsCom"),
        tag::NUM_DAT_SET_ENTRIES => (10, "numDatSetEntries"),
        tag::ALL_DATA => (11, "allData"),
        _ => return None,
    })
}

/// An `IECGoosePdu` checked exactly as [`GoosePdu::parse`] checks it (same errors for the
/// same input: both run the same general parser, which decodes allData for the owned parse
/// and only checks it here; `data::check_seq` and `Data::parse_seq` agree), borrowing its
/// strings as checked octets ([`VisibleStr`]: turned into `&str` only when read as text) and
/// leaving allData undecoded: the layer-2 verify path needs the APDU well formed and a few
/// fields (gocbRef's octets, stNum, sqNum for the replay check), not a copy of every value.
#[derive(Debug, Clone)]
pub struct GooseView<'a> {
    /// GoCB reference (its checked octets; [`VisibleStr::as_str`] for the text).
    pub gocb_ref: VisibleStr<'a>,
    /// timeAllowedtoLive in milliseconds.
    pub time_allowed_to_live: u32,
    /// Data set reference.
    pub dat_set: VisibleStr<'a>,
    /// Optional GOOSE identifier.
    pub go_id: Option<VisibleStr<'a>>,
    /// Time of the last state change (UtcTime).
    pub t: [u8; 8],
    /// State number.
    pub st_num: u32,
    /// Sequence number.
    pub sq_num: u32,
    /// Simulation (Ed.2) / test (Ed.1) flag; FALSE when absent.
    pub simulation: bool,
    /// Configuration revision.
    pub conf_rev: u32,
    /// Needs commissioning; FALSE when absent.
    pub nds_com: bool,
    /// numDatSetEntries as sent.
    pub num_dat_set_entries: u32,
    /// Contents octets of allData (the concatenated `Data` elements), checked by
    /// [`data::check_seq`]; decode them with [`Data::parse_seq`].
    pub all_data: &'a [u8],
    /// The number of allData values when the fast path counted them while checking them
    /// (not compared by `==`: it is a cache of `all_data`, which is).
    entries: Option<u32>,
}

impl PartialEq for GooseView<'_> {
    fn eq(&self, o: &Self) -> bool {
        (
            self.gocb_ref,
            self.time_allowed_to_live,
            self.dat_set,
            self.go_id,
            self.t,
            self.st_num,
            self.sq_num,
            self.simulation,
            self.conf_rev,
            self.nds_com,
            self.num_dat_set_entries,
            self.all_data,
        ) == (
            o.gocb_ref,
            o.time_allowed_to_live,
            o.dat_set,
            o.go_id,
            o.t,
            o.st_num,
            o.sq_num,
            o.simulation,
            o.conf_rev,
            o.nds_com,
            o.num_dat_set_entries,
            o.all_data,
        )
    }
}

impl Eq for GooseView<'_> {}

/// What [`GooseView::check_counters`] returns of an APDU it accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GooseCounters {
    /// State number.
    pub st_num: u32,
    /// Sequence number.
    pub sq_num: u32,
    entries_match: bool,
}

impl GooseCounters {
    /// [`GooseView::entries_match`] of the same APDU.
    pub fn entries_match(&self) -> bool {
        self.entries_match
    }
}

/// Whether the `SEQUENCE OF Data` contents `all_data` hold exactly `entries` elements,
/// counted at the top level (a structure is one entry) without looking inside them; `false`
/// also when they are not a run of whole elements.
fn entries_match(all_data: &[u8], entries: u32) -> bool {
    let mut s = Scan::new(all_data);
    let mut n: u32 = 0;
    while !s.is_empty() {
        if s.element().is_none() {
            return false;
        }
        n = n.saturating_add(1);
    }
    n == entries
}

impl<'a> GooseView<'a> {
    /// Check an APDU (`61 L ...`) that fills `bytes` exactly, without allocating: every field,
    /// allData included ([`data::check_seq`]).
    pub fn parse(bytes: &'a [u8]) -> Result<GooseView<'a>> {
        match Self::canonical(bytes, true) {
            Some(v) => Ok(v),
            None => Self::parse_with(bytes, AllData::Check).map(|(v, _)| v),
        }
    }

    /// [`Self::parse`] except for the contents of allData: every field of the SEQUENCE is
    /// checked (tags, order, lengths, VisibleStrings, INT32U ranges, the allData element's own
    /// length), but the `Data` values inside allData are not walked. What a receiver needs to
    /// authenticate a frame and check its freshness (gocbRef, stNum, sqNum), at a cost that
    /// does not grow with the data set; [`Self::check_all_data`] (or [`Self::to_pdu`]) checks
    /// the rest. On input that [`Self::parse`] accepts the two give the same view.
    pub fn parse_fields(bytes: &'a [u8]) -> Result<GooseView<'a>> {
        match Self::canonical(bytes, false) {
            Some(v) => Ok(v),
            None => Self::parse_with(bytes, AllData::Skip).map(|(v, _)| v),
        }
    }

    /// [`Self::parse`]'s verdict (the same checks, the same error for the same input) with
    /// only what a sender needs before it protects an APDU ([`GooseCounters`]: a malformed
    /// APDU is not signed, and the counters feed the Ascon nonce).
    pub fn check_counters(bytes: &'a [u8]) -> Result<GooseCounters> {
        let v = match Self::canonical(bytes, true) {
            Some(v) => v,
            None => Self::parse_with(bytes, AllData::Check)?.0,
        };
        Ok(GooseCounters {
            st_num: v.st_num,
            sq_num: v.sq_num,
            entries_match: v.entries_match(),
        })
    }

    /// Whether allData holds numDatSetEntries values (IEC 61850-8-1 Table 60: allData carries
    /// one `Data` per member of the data set, numDatSetEntries says how many members it
    /// has). The parsers here do not require it (a capture's reader reports what was sent);
    /// the security library does before it signs or forwards a frame.
    pub fn entries_match(&self) -> bool {
        match self.entries {
            Some(n) => n == self.num_dat_set_entries,
            None => entries_match(self.all_data, self.num_dat_set_entries),
        }
    }

    /// The fast path for what publishers send: every field in SEQUENCE order, each read with
    /// a test of the one tag expected there, instead of a dispatch on whatever tag comes (an
    /// indirect branch per field that the CPU mispredicts). `None` for anything else,
    /// including any error: then [`Self::parse_with`] parses the APDU again, so errors, and
    /// what is accepted, are exactly the general parser's. The VisibleStrings are checked
    /// (every octet 0x20..=0x7E) and kept as octets: no UTF-8 pass.
    #[inline(always)]
    fn canonical(bytes: &'a [u8], deep: bool) -> Option<GooseView<'a>> {
        // `Scan` answers `None` where `Reader` would build an error: a canonical APDU never
        // needs one, and anything else goes to the general parser.
        let mut outer = Scan::new(bytes);
        let pdu = outer.field(TAG_GOOSE_PDU)?;
        if !outer.is_empty() {
            return None;
        }
        let mut b = Scan::new(pdu);
        let str_field = VisibleStr::new;
        let bool_field = |b: &mut Scan<'a>, tag| match b.optional(tag)? {
            Some(v) => tlv_scan::bool_of(v),
            None => Some(false),
        };
        let gocb_ref = str_field(b.field(tag::GOCB_REF)?)?;
        let time_allowed_to_live = tlv_scan::u32_of(b.field(tag::TIME_ALLOWED_TO_LIVE)?)?;
        let dat_set = str_field(b.field(tag::DAT_SET)?)?;
        let go_id = match b.optional(tag::GO_ID)? {
            Some(v) => Some(str_field(v)?),
            None => None,
        };
        let t: [u8; 8] = b.field(tag::T)?.try_into().ok()?;
        let st_num = tlv_scan::u32_of(b.field(tag::ST_NUM)?)?;
        let sq_num = tlv_scan::u32_of(b.field(tag::SQ_NUM)?)?;
        let simulation = bool_field(&mut b, tag::SIMULATION)?;
        let conf_rev = tlv_scan::u32_of(b.field(tag::CONF_REV)?)?;
        let nds_com = bool_field(&mut b, tag::NDS_COM)?;
        let num_dat_set_entries = tlv_scan::u32_of(b.field(tag::NUM_DAT_SET_ENTRIES)?)?;
        let all_data = b.field(tag::ALL_DATA)?;
        if !b.is_empty() {
            return None;
        }
        // The values checked and counted in one pass; anything the fast rules do not vouch
        // for goes to the general parser with the rest of the APDU.
        let entries = if deep {
            Some(crate::data_scan::count(all_data)?)
        } else {
            None
        };
        Some(GooseView {
            gocb_ref,
            time_allowed_to_live,
            dat_set,
            go_id,
            t,
            st_num,
            sq_num,
            simulation,
            conf_rev,
            nds_com,
            num_dat_set_entries,
            all_data,
            entries,
        })
    }

    /// Check the `Data` values of allData (what [`Self::parse_fields`] leaves out).
    pub fn check_all_data(&self) -> Result<()> {
        data::check_seq(self.all_data)
    }

    /// The general parser: fields dispatched on their tags, order and duplicates checked by
    /// [`FieldOrder`], so that every deviation gets its precise error.
    fn parse_with(
        bytes: &'a [u8],
        mut all: AllData<'_>,
    ) -> Result<(GooseView<'a>, GooseFieldRanges)> {
        let mut r = Reader::new(bytes);
        let pdu = r.read_expected(TAG_GOOSE_PDU, "IECGoosePdu")?;
        r.expect_end("IECGoosePdu")?;
        let mut body = pdu.reader();
        let mut order = FieldOrder::new();

        let mut gocb_ref = None;
        let mut tal = None;
        let mut dat_set = None;
        let mut go_id = None;
        let mut t = None;
        let mut st_num = None;
        let mut sq_num = None;
        let mut simulation = None;
        let mut conf_rev = None;
        let mut nds_com = None;
        let mut num_entries = None;
        let mut all_data = None;

        while !body.is_empty() {
            let f = body.read_tlv("IECGoosePdu field")?;
            let (index, name) = field_index(f.tag).ok_or(Error::UnknownTag {
                what: "IECGoosePdu",
                tag: f.tag,
            })?;
            order.see(index, name)?;
            let v = f.value;
            match f.tag {
                tag::GOCB_REF => gocb_ref = Some(visible(v, "gocbRef")?),
                tag::TIME_ALLOWED_TO_LIVE => tal = Some(ber::decode_u32(v, "timeAllowedtoLive")?),
                tag::DAT_SET => dat_set = Some(visible(v, "datSet")?),
                tag::GO_ID => go_id = Some(visible(v, "goID")?),
                tag::T => {
                    let b: [u8; 8] = v.try_into().map_err(|_| Error::BadLength {
                        what: "t",
                        value: v.len(),
                    })?;
                    t = Some((b, f.value_range()));
                }
                tag::ST_NUM => st_num = Some((ber::decode_u32(v, "stNum")?, f.value_range())),
                tag::SQ_NUM => sq_num = Some((ber::decode_u32(v, "sqNum")?, f.value_range())),
                tag::SIMULATION => {
                    simulation = Some((ber::decode_bool(v, "simulation")?, f.value_range()))
                }
                tag::CONF_REV => conf_rev = Some(ber::decode_u32(v, "confRev")?),
                tag::NDS_COM => nds_com = Some(ber::decode_bool(v, "ndsCom")?),
                tag::NUM_DAT_SET_ENTRIES => {
                    num_entries = Some(ber::decode_u32(v, "numDatSetEntries")?)
                }
                _ => {
                    // tag::ALL_DATA, the only tag left that field_index accepts.
                    match &mut all {
                        AllData::Skip => {}
                        AllData::Check => data::check_seq(v)?,
                        AllData::Decode(out) => **out = Data::decode_seq(&mut f.reader(), 0)?,
                    }
                    all_data = Some((v, f.value_range()));
                }
            }
        }

        let (t, t_range) = t.ok_or(Error::MissingField("t"))?;
        let (st_num, st_range) = st_num.ok_or(Error::MissingField("stNum"))?;
        let (sq_num, sq_range) = sq_num.ok_or(Error::MissingField("sqNum"))?;
        let (all_data, all_range) = all_data.ok_or(Error::MissingField("allData"))?;
        let ranges = GooseFieldRanges {
            t: t_range,
            st_num: st_range,
            sq_num: sq_range,
            simulation: simulation.as_ref().map(|(_, r)| r.clone()),
            all_data: all_range,
        };
        let view = GooseView {
            gocb_ref: gocb_ref.ok_or(Error::MissingField("gocbRef"))?,
            time_allowed_to_live: tal.ok_or(Error::MissingField("timeAllowedtoLive"))?,
            dat_set: dat_set.ok_or(Error::MissingField("datSet"))?,
            go_id,
            t,
            st_num,
            sq_num,
            simulation: simulation.map(|(b, _)| b).unwrap_or(false),
            conf_rev: conf_rev.ok_or(Error::MissingField("confRev"))?,
            nds_com: nds_com.unwrap_or(false),
            num_dat_set_entries: num_entries.ok_or(Error::MissingField("numDatSetEntries"))?,
            all_data,
            entries: None,
        };
        Ok((view, ranges))
    }

    /// The owned APDU, allData decoded.
    pub fn to_pdu(&self) -> Result<GoosePdu> {
        Ok(self.with_values(Data::parse_seq(self.all_data)?))
    }

    fn with_values(&self, all_data: Vec<Data>) -> GoosePdu {
        GoosePdu {
            gocb_ref: self.gocb_ref.as_str().to_owned(),
            time_allowed_to_live: self.time_allowed_to_live,
            dat_set: self.dat_set.as_str().to_owned(),
            go_id: self.go_id.map(|g| g.as_str().to_owned()),
            t: self.t,
            st_num: self.st_num,
            sq_num: self.sq_num,
            simulation: self.simulation,
            conf_rev: self.conf_rev,
            nds_com: self.nds_com,
            num_dat_set_entries: self.num_dat_set_entries,
            all_data,
        }
    }
}

/// A VisibleString field as the general parser checks it (`ber::visible_str`, its error).
fn visible<'a>(v: &'a [u8], what: &'static str) -> Result<VisibleStr<'a>> {
    ber::visible_str(v, what).map(VisibleStr::from_checked)
}

/// What the general parser does with the `Data` values inside allData: skip them
/// ([`GooseView::parse_fields`]), check them ([`GooseView::parse`]) or decode them in the same
/// walk ([`GoosePdu::parse`], so an owned parse reads them once).
enum AllData<'d> {
    Skip,
    Check,
    Decode(&'d mut Vec<Data>),
}

impl GoosePdu {
    /// Parse an APDU (`61 L ...`) that fills `bytes` exactly.
    pub fn parse(bytes: &[u8]) -> Result<GoosePdu> {
        Self::parse_with_ranges(bytes).map(|(p, _)| p)
    }

    /// Parse an APDU and report where its patchable fields are (offsets from `bytes[0]`).
    pub fn parse_with_ranges(bytes: &[u8]) -> Result<(GoosePdu, GooseFieldRanges)> {
        let mut values = Vec::new();
        let (v, ranges) = GooseView::parse_with(bytes, AllData::Decode(&mut values))?;
        Ok((v.with_values(values), ranges))
    }

    /// Check that the strings are VisibleString and the data valid, so that the encoding
    /// parses back to `self`.
    pub fn validate(&self) -> Result<()> {
        for (s, what) in [(&self.gocb_ref, "gocbRef"), (&self.dat_set, "datSet")]
            .into_iter()
            .chain(self.go_id.as_ref().map(|g| (g, "goID")))
        {
            if !ber::is_visible(s) {
                return Err(Error::BadValue {
                    what,
                    detail: "character outside VisibleString",
                });
            }
        }
        self.all_data.iter().try_for_each(Data::validate)
    }

    fn content_len(&self) -> usize {
        let u = |v: u32| ber::tlv_len(ber::encode_u64(v as u64).len());
        ber::tlv_len(self.gocb_ref.len())
            + u(self.time_allowed_to_live)
            + ber::tlv_len(self.dat_set.len())
            + self.go_id.as_ref().map_or(0, |g| ber::tlv_len(g.len()))
            + ber::tlv_len(8)
            + u(self.st_num)
            + u(self.sq_num)
            + ber::tlv_len(1)
            + u(self.conf_rev)
            + ber::tlv_len(1)
            + u(self.num_dat_set_entries)
            + ber::tlv_len(data::seq_len(&self.all_data))
    }
}

impl GoosePdu {
    /// The one encoder of the `goosePdu` (IEC 61850-8-1 Annex A, `IECGoosePdu`), for every
    /// [`Sink`]: [`Codec::emit`] runs it on a [`SliceSink`], [`Codec::emit_vec`] on the
    /// vector. The headers carry the closed-form lengths [`Codec::buffer_len`] adds up.
    pub fn encode<S: Sink + ?Sized>(&self, out: &mut S) {
        out.header(TAG_GOOSE_PDU, self.content_len());
        tlv(out, tag::GOCB_REF, self.gocb_ref.as_bytes());
        uint(
            out,
            tag::TIME_ALLOWED_TO_LIVE,
            self.time_allowed_to_live.into(),
        );
        tlv(out, tag::DAT_SET, self.dat_set.as_bytes());
        if let Some(g) = &self.go_id {
            tlv(out, tag::GO_ID, g.as_bytes());
        }
        tlv(out, tag::T, &self.t);
        uint(out, tag::ST_NUM, self.st_num.into());
        uint(out, tag::SQ_NUM, self.sq_num.into());
        tlv(out, tag::SIMULATION, &[ber::encode_bool(self.simulation)]);
        uint(out, tag::CONF_REV, self.conf_rev.into());
        tlv(out, tag::NDS_COM, &[ber::encode_bool(self.nds_com)]);
        uint(
            out,
            tag::NUM_DAT_SET_ENTRIES,
            self.num_dat_set_entries.into(),
        );
        out.header(tag::ALL_DATA, data::seq_len(&self.all_data));
        data::encode_seq(&self.all_data, out);
    }
}

impl Codec for GoosePdu {
    /// Size of the encoded APDU, tag and length included.
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
    use crate::data::tests::arb_data;
    use proptest::prelude::*;

    /// The GOOSE APDU inside libiec61850's R-GOOSE mode-0 sample (gander-sec `golden_frames.txt`).
    pub(crate) const LIB_APDU: &str = "6181a4802973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c65494f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c75657384086b022a6fcb020c0a8501018601008701008801018901008a0102ab07850204d2830101";

    pub(crate) fn arb_goose() -> impl Strategy<Value = GoosePdu> {
        (
            (
                "[ -~]{0,70}",
                any::<u32>(),
                "[ -~]{0,70}",
                proptest::option::of("[ -~]{0,70}"),
            ),
            (any::<[u8; 8]>(), any::<u32>(), any::<u32>(), any::<bool>()),
            (any::<u32>(), any::<bool>(), any::<u32>()),
            proptest::collection::vec(arb_data(), 0..5),
        )
            .prop_map(
                |((g, tal, ds, id), (t, st, sq, sim), (cr, nds, n), all)| GoosePdu {
                    gocb_ref: g,
                    time_allowed_to_live: tal,
                    dat_set: ds,
                    go_id: id,
                    t,
                    st_num: st,
                    sq_num: sq,
                    simulation: sim,
                    conf_rev: cr,
                    nds_com: nds,
                    num_dat_set_entries: n,
                    all_data: all,
                },
            )
    }

    #[test]
    fn libiec61850_apdu() {
        let b = hex::decode(LIB_APDU).unwrap();
        let (p, r) = GoosePdu::parse_with_ranges(&b).unwrap();
        assert_eq!(p.gocb_ref, "simpleIOGenericIO/LLN0$GO$gcbAnalogValues");
        assert_eq!(p.time_allowed_to_live, 500);
        assert_eq!(p.dat_set, "simpleIOGenericIO/LLN0$AnalogValues");
        assert_eq!(
            p.go_id.as_deref(),
            Some("simpleIOGenericIO/LLN0$GO$gcbAnalogValues")
        );
        assert_eq!(
            (p.st_num, p.sq_num, p.conf_rev, p.num_dat_set_entries),
            (1, 0, 1, 2)
        );
        assert!(!p.simulation && !p.nds_com);
        assert_eq!(p.all_data, vec![Data::Integer(1234), Data::Boolean(true)]);
        assert_eq!(&b[r.st_num.clone()], &[1]);
        assert_eq!(&b[r.sq_num.clone()], &[0]);
        assert_eq!(b[r.st_num.start - 2], tag::ST_NUM);
        assert_eq!(&b[r.t.clone()], &p.t);
        assert_eq!(p.to_vec(), b);
        assert_eq!(p.buffer_len(), b.len());
        let mut buf = vec![0xa5; b.len() + 1];
        assert_eq!(p.emit(&mut buf), b.len());
        assert_eq!(&buf[..b.len()], &b[..]);
        assert_eq!(buf[b.len()], 0xa5);
    }

    fn sample() -> GoosePdu {
        GoosePdu::parse(&hex::decode(LIB_APDU).unwrap()).unwrap()
    }

    /// Re-encode the sample with its field list edited.
    fn with_fields(edit: impl FnOnce(&mut Vec<(u8, Vec<u8>)>)) -> Vec<u8> {
        let b = hex::decode(LIB_APDU).unwrap();
        let mut r = Reader::new(&b);
        let mut body = r.read_tlv("x").unwrap().reader();
        let mut fields = Vec::new();
        while let Ok(t) = body.read_tlv("f") {
            fields.push((t.tag, t.value.to_vec()));
        }
        edit(&mut fields);
        let mut inner = Vec::new();
        for (t, v) in fields {
            tlv(&mut inner, t, &v);
        }
        let mut out = Vec::new();
        tlv(&mut out, TAG_GOOSE_PDU, &inner);
        out
    }

    #[test]
    fn rejects_bad_structure() {
        let missing = with_fields(|f| {
            f.retain(|(t, _)| *t != tag::ST_NUM);
        });
        assert_eq!(GoosePdu::parse(&missing), Err(Error::MissingField("stNum")));
        let dup = with_fields(|f| {
            let x = f[5].clone();
            f.insert(5, x);
        });
        assert_eq!(GoosePdu::parse(&dup), Err(Error::DuplicateField("stNum")));
        let swapped = with_fields(|f| f.swap(5, 6));
        assert_eq!(GoosePdu::parse(&swapped), Err(Error::OutOfOrder("stNum")));
        let unknown = with_fields(|f| f.push((0x8c, vec![])));
        assert_eq!(
            GoosePdu::parse(&unknown),
            Err(Error::UnknownTag {
                what: "IECGoosePdu",
                tag: 0x8c
            })
        );
        let wide = with_fields(|f| f[5].1 = vec![1, 0, 0, 0, 0]);
        assert!(matches!(
            GoosePdu::parse(&wide),
            Err(Error::BadValue { what: "stNum", .. })
        ));
        let short_t = with_fields(|f| {
            f[4].1.pop();
        });
        assert_eq!(
            GoosePdu::parse(&short_t),
            Err(Error::BadLength {
                what: "t",
                value: 7
            })
        );
        let mut trailing = hex::decode(LIB_APDU).unwrap();
        trailing.push(0);
        assert_eq!(
            GoosePdu::parse(&trailing),
            Err(Error::TrailingBytes {
                what: "IECGoosePdu",
                count: 1
            })
        );
        assert!(matches!(
            GoosePdu::parse(&hex::decode("6000").unwrap()),
            Err(Error::UnexpectedTag {
                expected: 0x61,
                found: 0x60,
                ..
            })
        ));
        // Optional goID absent; default booleans absent.
        let no_opt = with_fields(|f| {
            f.retain(|(t, _)| ![tag::GO_ID, tag::SIMULATION, tag::NDS_COM].contains(t))
        });
        let p = GoosePdu::parse(&no_opt).unwrap();
        assert_eq!(
            p,
            GoosePdu {
                go_id: None,
                ..sample()
            }
        );
    }

    /// numDatSetEntries against allData: a structure is one entry, however many members.
    #[test]
    fn entries_match_counts_top_level_values() {
        let mut p = GoosePdu {
            gocb_ref: "IED/LLN0$GO$gcb".into(),
            time_allowed_to_live: 2000,
            dat_set: "IED/LLN0$DS".into(),
            go_id: None,
            t: [0; 8],
            st_num: 1,
            sq_num: 0,
            simulation: false,
            conf_rev: 1,
            nds_com: false,
            num_dat_set_entries: 2,
            all_data: vec![
                Data::Boolean(true),
                Data::Structure(vec![Data::Integer(1), Data::Integer(2)]),
            ],
        };
        let b = p.to_vec();
        assert!(GooseView::parse(&b).unwrap().entries_match());
        assert!(GooseView::check_counters(&b).unwrap().entries_match());
        for n in [0, 1, 3, u32::MAX] {
            p.num_dat_set_entries = n;
            let b = p.to_vec();
            assert!(!GooseView::parse(&b).unwrap().entries_match(), "{n}");
            assert!(
                !GooseView::check_counters(&b).unwrap().entries_match(),
                "{n}"
            );
        }
    }

    proptest! {
        /// The one encoder gives the same octets on the Vec, Counter and Slice sinks, and
        /// `buffer_len`'s closed form is what it counts.
        #[test]
        fn sinks_agree(p in arb_goose()) {
            let v = crate::ber_sink::check_codec_agrees(&p, |o| p.encode(o));
            prop_assert_eq!(v.map(|v| GoosePdu::parse(&v).ok()), Ok(Some(p)));
        }

        /// The canonical fast path of [`GooseView`] agrees with the general parser (value and
        /// error) on encoded APDUs, on the same with one octet changed and on arbitrary
        /// bytes; `parse_fields` gives the same view wherever `parse` succeeds; the owned
        /// parse is the view's `to_pdu`.
        #[test]
        fn view_fast_path_agrees_with_general_parser(
            p in arb_goose(), flip in any::<prop::sample::Index>(), x: u8,
            noise in proptest::collection::vec(any::<u8>(), 0..96),
        ) {
            let good = p.to_vec();
            let mut bad = good.clone();
            let i = flip.index(bad.len());
            bad[i] ^= x;
            for b in [&good[..], &bad[..], &noise[..]] {
                let general = GooseView::parse_with(b, AllData::Check).map(|(v, _)| v);
                prop_assert_eq!(GooseView::parse(b), general.clone());
                prop_assert_eq!(
                    GooseView::check_counters(b).map(|c| (c.st_num, c.sq_num, c.entries_match())),
                    general.clone().map(|v| (v.st_num, v.sq_num, v.entries_match()))
                );
                if let Ok(v) = &general {
                    let values = Data::parse_seq(v.all_data).map(|d| d.len());
                    prop_assert_eq!(
                        v.entries_match(),
                        values == Ok(v.num_dat_set_entries as usize)
                    );
                }
                let general_fields = GooseView::parse_with(b, AllData::Skip).map(|(v, _)| v);
                prop_assert_eq!(GooseView::parse_fields(b), general_fields);
                if let Ok(v) = &general {
                    let fields = GooseView::parse_fields(b);
                    prop_assert_eq!(fields.as_ref(), Ok(v));
                    prop_assert_eq!(v.check_all_data(), Ok(()));
                }
                prop_assert_eq!(GoosePdu::parse(b), general.and_then(|v| v.to_pdu()));
            }
            if p.validate().is_ok() {
                let v = GooseView::parse(&good).unwrap();
                prop_assert_eq!(v.to_pdu().unwrap(), p);
            }
        }

        #[test]
        fn parse_emit_round_trip(p in arb_goose()) {
            prop_assert!(p.validate().is_ok());
            let b = p.to_vec();
            prop_assert_eq!(b.len(), p.buffer_len());
            let (q, r) = GoosePdu::parse_with_ranges(&b).unwrap();
            prop_assert_eq!(&q, &p);
            prop_assert_eq!(ber::decode_u32(&b[r.sq_num], "x").unwrap(), p.sq_num);
        }

        #[test]
        fn no_panic_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = GoosePdu::parse(&data);
            let mut framed = vec![0x61];
            crate::ber_sink::length(&mut framed, data.len());
            framed.extend_from_slice(&data);
            let _ = GoosePdu::parse(&framed);
        }
    }
}
