//! IEC 61850-8-1 clause 17.2: a report (IEC 61850-7-2 17.2.3.2) mapped onto an MMS
//! InformationReport on the variable list "RPT".
//!
//! The values follow each other in `listOfAccessResult` in this order; the optional ones are
//! present only when their OptFlds bit is set (IEC 61850-8-1 Table 77; libiec61850
//! `reporting.c` writes and `client_report.c` reads exactly this):
//!
//! RptID, OptFlds, SqNum, TimeOfEntry, DatSet, BufOvfl, EntryID, ConfRev, SubSeqNum,
//! MoreSegmentsFollow, inclusion bit string, data references, values, reason codes.

use gander_wire::data::Data;

use crate::bit_string::BitString;
use crate::error::{Error, Layer, Result};
use crate::service::{AccessResult, InformationReport};

const L: Layer = Layer::Iec61850;

mod segments;
pub use segments::SegmentAssembler;

/// OptFlds bit positions (IEC 61850-8-1 17.2.2.x, bit 0 reserved), 10 bits on the wire.
pub mod opt_flds {
    /// Number of bits libiec61850 sends.
    pub const LEN: usize = 10;
    /// sequence-number.
    pub const SEQ_NUM: usize = 1;
    /// report-time-stamp.
    pub const TIME_STAMP: usize = 2;
    /// reason-for-inclusion.
    pub const REASON: usize = 3;
    /// data-set-name.
    pub const DATA_SET: usize = 4;
    /// data-reference.
    pub const DATA_REF: usize = 5;
    /// buffer-overflow.
    pub const BUF_OVFL: usize = 6;
    /// entryID.
    pub const ENTRY_ID: usize = 7;
    /// conf-revision.
    pub const CONF_REV: usize = 8;
    /// segmentation.
    pub const SEGMENTATION: usize = 9;
}

/// TrgOps bit positions (IEC 61850-8-1 17.2.x, bit 0 reserved), 6 bits on the wire.
/// The reason-for-inclusion bit string uses the same positions.
pub mod trg_ops {
    /// Number of bits libiec61850 sends.
    pub const LEN: usize = 6;
    /// data-change.
    pub const DCHG: usize = 1;
    /// quality-change.
    pub const QCHG: usize = 2;
    /// data-update.
    pub const DUPD: usize = 3;
    /// integrity.
    pub const INTEGRITY: usize = 4;
    /// general-interrogation.
    pub const GI: usize = 5;
}

/// A TimeOfEntry / EntryTime as MMS binary-time with date (ISO 9506-2 TimeOfDay, 6 octets):
/// milliseconds since midnight, then days since 1984-01-01.
pub fn binary_time_from_unix_ms(unix_ms: u64) -> [u8; 6] {
    const MS_PER_DAY: u64 = 86_400_000;
    // 1984-01-01 is 5113 days after 1970-01-01.
    const EPOCH_1984_DAYS: u64 = 5113;
    let days = (unix_ms / MS_PER_DAY).saturating_sub(EPOCH_1984_DAYS);
    let ms = (unix_ms % MS_PER_DAY) as u32;
    let mut out = [0u8; 6];
    out[..4].copy_from_slice(&ms.to_be_bytes());
    out[4..].copy_from_slice(&(days.min(0xffff) as u16).to_be_bytes());
    out
}

/// An IEC 61850-8-1 UtcTime (8.1.3.7: seconds since 1970 (4 octets), a 24-bit binary fraction
/// of a second, a quality octet) as Unix ns; `None` for the all-zero "never set" value.
pub fn utc_time_unix_ns(t: &[u8; 8]) -> Option<i128> {
    let secs = u32::from_be_bytes([t[0], t[1], t[2], t[3]]) as i128;
    let frac = u32::from_be_bytes([0, t[4], t[5], t[6]]) as i128;
    (secs > 0).then(|| secs * 1_000_000_000 + frac * 1_000_000_000 / (1 << 24))
}

/// The inverse of [`binary_time_from_unix_ms`].
pub fn binary_time_to_unix_ms(t: &[u8; 6]) -> u64 {
    let ms = u32::from_be_bytes([t[0], t[1], t[2], t[3]]) as u64;
    let days = u16::from_be_bytes([t[4], t[5]]) as u64;
    (days + 5113) * 86_400_000 + ms
}

/// One report, decoded or to be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// RptID (or the RCB reference when the RCB's RptID is empty).
    pub rpt_id: String,
    /// OptFlds: which optional fields follow.
    pub opt_flds: BitString,
    /// SqNum (OptFlds.seq-num).
    pub seq_num: Option<u16>,
    /// TimeOfEntry (OptFlds.report-time-stamp).
    pub time_of_entry: Option<[u8; 6]>,
    /// DatSet (OptFlds.data-set-name), e.g. `IMPLD0/LLN0$DS1`.
    pub data_set: Option<String>,
    /// BufOvfl (OptFlds.buffer-overflow).
    pub buf_ovfl: Option<bool>,
    /// EntryID (OptFlds.entryID), 8 octets.
    pub entry_id: Option<Vec<u8>>,
    /// ConfRev (OptFlds.conf-revision).
    pub conf_rev: Option<u32>,
    /// SubSeqNum and MoreSegmentsFollow (OptFlds.segmentation).
    pub segment: Option<(u16, bool)>,
    /// Inclusion bit string: one bit per data-set member.
    pub inclusion: BitString,
    /// Data references of the included members (OptFlds.data-reference).
    pub data_refs: Vec<String>,
    /// Values of the included members, in data-set order.
    pub values: Vec<Data>,
    /// Reason codes of the included members (OptFlds.reason-for-inclusion).
    pub reasons: Vec<BitString>,
}

fn field<'a>(
    it: &mut impl Iterator<Item = &'a AccessResult>,
    what: &'static str,
) -> Result<&'a Data> {
    match it.next() {
        Some(AccessResult::Success(d)) => Ok(d),
        Some(AccessResult::Failure(_)) => {
            Err(Error::malformed(L, what, "access failure in a report"))
        }
        None => Err(Error::Truncated { layer: L, what }),
    }
}

fn type_err(what: &'static str) -> Error {
    Error::malformed(L, what, "wrong MMS type")
}

fn visible(d: &Data, what: &'static str) -> Result<String> {
    match d {
        Data::VisibleString(s) => Ok(s.clone()),
        _ => Err(type_err(what)),
    }
}

fn unsigned(d: &Data, what: &'static str) -> Result<u64> {
    match d {
        Data::Unsigned(v) => Ok(*v),
        _ => Err(type_err(what)),
    }
}

/// One included data-set member of a report, with what the report says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportEntry<'a> {
    /// Position of the member in the data set (the inclusion bit).
    pub member: usize,
    /// Its data reference (OptFlds.data-reference).
    pub data_ref: Option<&'a str>,
    /// Its value.
    pub value: &'a Data,
    /// Why it was included (OptFlds.reason-for-inclusion; TrgOps bit positions).
    pub reason: Option<&'a BitString>,
}

impl Report {
    /// The included members with their references, values and reasons, for a data set of
    /// any size and layout.
    pub fn entries(&self) -> Vec<ReportEntry<'_>> {
        self.inclusion
            .ones()
            .enumerate()
            .filter_map(|(k, member)| {
                Some(ReportEntry {
                    member,
                    data_ref: self.data_refs.get(k).map(String::as_str),
                    value: self.values.get(k)?,
                    reason: self.reasons.get(k),
                })
            })
            .collect()
    }

    /// Check the report against the data set the client knows (from
    /// GetNamedVariableListAttributes): libiec61850's client likewise requires the
    /// inclusion bit string to have one bit per member.
    pub fn check_data_set_len(&self, members: usize) -> Result<()> {
        if self.inclusion.len() != members {
            return Err(Error::malformed(
                L,
                "inclusion bit string",
                "length differs from the data set's member count",
            ));
        }
        Ok(())
    }

    /// TimeOfEntry as Unix milliseconds.
    pub fn time_of_entry_unix_ms(&self) -> Option<u64> {
        self.time_of_entry.as_ref().map(binary_time_to_unix_ms)
    }

    /// The newest data timestamp (IEC 61850-7-2 `t`: any UtcTime inside the value) among the
    /// entries included for a data change, quality change or data update, as Unix ns: when the
    /// server saw the change that caused this report. `None` for GI and integrity reports.
    pub fn changed_data_time_unix_ns(&self) -> Option<i128> {
        fn walk(d: &Data, best: &mut Option<i128>) {
            match d {
                Data::UtcTime(t) => {
                    if let Some(ns) = utc_time_unix_ns(t) {
                        if best.is_none_or(|b| b < ns) {
                            *best = Some(ns);
                        }
                    }
                }
                Data::Structure(v) | Data::Array(v) => v.iter().for_each(|e| walk(e, best)),
                _ => {}
            }
        }
        let mut best = None;
        for e in self.entries() {
            let changed = e.reason.is_some_and(|b| {
                [trg_ops::DCHG, trg_ops::QCHG, trg_ops::DUPD]
                    .iter()
                    .any(|&i| i < b.len() && b.get(i))
            });
            if changed {
                walk(e.value, &mut best);
            }
        }
        best
    }

    /// Decode a report from an InformationReport on "RPT", type-checking every element as
    /// libiec61850's client does.
    pub fn from_information_report(ir: &InformationReport) -> Result<Report> {
        if !ir.is_rpt() {
            return Err(Error::malformed(
                L,
                "report",
                "variable list name is not RPT",
            ));
        }
        let mut it = ir.results.iter();
        let rpt_id = visible(field(&mut it, "RptID")?, "RptID")?;
        let opt_flds =
            BitString::from_data(field(&mut it, "OptFlds")?).ok_or(type_err("OptFlds"))?;
        let has = |b| opt_flds.get(b);
        let seq_num = if has(opt_flds::SEQ_NUM) {
            let v = unsigned(field(&mut it, "SqNum")?, "SqNum")?;
            Some(u16::try_from(v).map_err(|_| Error::malformed(L, "SqNum", "above 65535"))?)
        } else {
            None
        };
        let time_of_entry = if has(opt_flds::TIME_STAMP) {
            match field(&mut it, "TimeOfEntry")? {
                Data::BinaryTime(b) if b.len() == 6 => {
                    let mut t = [0u8; 6];
                    t.copy_from_slice(b);
                    Some(t)
                }
                _ => return Err(type_err("TimeOfEntry")),
            }
        } else {
            None
        };
        let data_set = if has(opt_flds::DATA_SET) {
            Some(visible(field(&mut it, "DatSet")?, "DatSet")?)
        } else {
            None
        };
        let buf_ovfl = if has(opt_flds::BUF_OVFL) {
            match field(&mut it, "BufOvfl")? {
                Data::Boolean(b) => Some(*b),
                _ => return Err(type_err("BufOvfl")),
            }
        } else {
            None
        };
        let entry_id = if has(opt_flds::ENTRY_ID) {
            match field(&mut it, "EntryID")? {
                Data::OctetString(b) => Some(b.clone()),
                _ => return Err(type_err("EntryID")),
            }
        } else {
            None
        };
        let conf_rev = if has(opt_flds::CONF_REV) {
            let v = unsigned(field(&mut it, "ConfRev")?, "ConfRev")?;
            Some(u32::try_from(v).map_err(|_| Error::malformed(L, "ConfRev", "above 2^32-1"))?)
        } else {
            None
        };
        let segment = if has(opt_flds::SEGMENTATION) {
            let s = unsigned(field(&mut it, "SubSeqNum")?, "SubSeqNum")?;
            let m = match field(&mut it, "MoreSegmentsFollow")? {
                Data::Boolean(b) => *b,
                _ => return Err(type_err("MoreSegmentsFollow")),
            };
            Some((
                u16::try_from(s).map_err(|_| Error::malformed(L, "SubSeqNum", "above 65535"))?,
                m,
            ))
        } else {
            None
        };
        let inclusion =
            BitString::from_data(field(&mut it, "inclusion")?).ok_or(type_err("inclusion"))?;
        let n = inclusion.ones().count();
        let mut data_refs = Vec::new();
        if has(opt_flds::DATA_REF) {
            for _ in 0..n {
                data_refs.push(visible(
                    field(&mut it, "data reference")?,
                    "data reference",
                )?);
            }
        }
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            values.push(field(&mut it, "value")?.clone());
        }
        let mut reasons = Vec::new();
        if has(opt_flds::REASON) {
            for _ in 0..n {
                reasons.push(
                    BitString::from_data(field(&mut it, "reason code")?)
                        .ok_or(type_err("reason code"))?,
                );
            }
        }
        if it.next().is_some() {
            return Err(Error::malformed(
                L,
                "report",
                "values after the last expected field",
            ));
        }
        Ok(Report {
            rpt_id,
            opt_flds,
            seq_num,
            time_of_entry,
            data_set,
            buf_ovfl,
            entry_id,
            conf_rev,
            segment,
            inclusion,
            data_refs,
            values,
            reasons,
        })
    }

    /// Encode as an InformationReport. Optional fields are written when their OptFlds bit is
    /// set (a missing value is written as a zero/empty value of the right type, so the
    /// layout always matches OptFlds).
    pub fn to_information_report(&self) -> InformationReport {
        let o = &self.opt_flds;
        let mut v = vec![
            Data::VisibleString(self.rpt_id.clone()),
            self.opt_flds.to_data(),
        ];
        if o.get(opt_flds::SEQ_NUM) {
            v.push(Data::Unsigned(self.seq_num.unwrap_or(0) as u64));
        }
        if o.get(opt_flds::TIME_STAMP) {
            v.push(Data::BinaryTime(
                self.time_of_entry.unwrap_or([0; 6]).to_vec(),
            ));
        }
        if o.get(opt_flds::DATA_SET) {
            v.push(Data::VisibleString(
                self.data_set.clone().unwrap_or_default(),
            ));
        }
        if o.get(opt_flds::BUF_OVFL) {
            v.push(Data::Boolean(self.buf_ovfl.unwrap_or(false)));
        }
        if o.get(opt_flds::ENTRY_ID) {
            v.push(Data::OctetString(
                self.entry_id.clone().unwrap_or_else(|| vec![0; 8]),
            ));
        }
        if o.get(opt_flds::CONF_REV) {
            v.push(Data::Unsigned(self.conf_rev.unwrap_or(0) as u64));
        }
        if o.get(opt_flds::SEGMENTATION) {
            let (s, m) = self.segment.unwrap_or((0, false));
            v.push(Data::Unsigned(s as u64));
            v.push(Data::Boolean(m));
        }
        v.push(self.inclusion.to_data());
        if o.get(opt_flds::DATA_REF) {
            v.extend(
                self.data_refs
                    .iter()
                    .map(|r| Data::VisibleString(r.clone())),
            );
        }
        v.extend(self.values.iter().cloned());
        if o.get(opt_flds::REASON) {
            v.extend(self.reasons.iter().map(BitString::to_data));
        }
        InformationReport::rpt(v.into_iter().map(AccessResult::Success).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::{MmsPdu, Unconfirmed};
    use gander_wire::Codec;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    #[test]
    fn golden_libiec61850_report_layout() {
        // `docs/mms-bytes.md` §2: A3 3F {A0 3D {A1 05 {80 03 "RPT"}, A0 34 {...}}}, with
        // rpt01, OptFlds 06 7800, SqNum 0, TimeOfEntry, DatSet "TESTLD0/LLN0$ds1",
        // inclusion 07 80, value false, reason GI (02 04).
        let t = [0x01, 0x02, 0x03, 0x04, 0x3a, 0x5b];
        let mut body = h("8A05 7270743031 8403 067800 8601 00 8C06");
        body.extend_from_slice(&t);
        body.extend(h("8A10"));
        body.extend(b"TESTLD0/LLN0$ds1");
        body.extend(h("8402 0780 8301 00 8402 0204"));
        assert_eq!(body.len(), 0x34);
        let mut wire = h("A3 3F A0 3D A1 05 80 03 525054 A0 34");
        wire.extend(&body);
        let MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir)) = MmsPdu::parse(&wire).unwrap()
        else {
            panic!()
        };
        let r = Report::from_information_report(&ir).unwrap();
        assert_eq!(r.rpt_id, "rpt01");
        assert_eq!(r.seq_num, Some(0));
        assert_eq!(r.time_of_entry, Some(t));
        assert_eq!(r.data_set.as_deref(), Some("TESTLD0/LLN0$ds1"));
        assert_eq!(r.values, vec![Data::Boolean(false)]);
        assert_eq!(r.reasons, vec![BitString::with_bits(6, &[trg_ops::GI])]);
        let again = MmsPdu::Unconfirmed(Unconfirmed::InformationReport(r.to_information_report()));
        assert_eq!(again.to_vec(), wire);
    }

    #[test]
    fn type_checks() {
        let good = Report {
            rpt_id: "r".into(),
            opt_flds: BitString::with_bits(10, &[1, 2, 3, 4, 5, 6, 7, 8, 9]),
            seq_num: Some(3),
            time_of_entry: Some([0; 6]),
            data_set: Some("LD/LN$DS".into()),
            buf_ovfl: Some(false),
            entry_id: Some(vec![1; 8]),
            conf_rev: Some(1),
            segment: Some((0, false)),
            inclusion: BitString::with_bits(3, &[0, 2]),
            data_refs: vec!["a".into(), "b".into()],
            values: vec![Data::Integer(1), Data::Integer(2)],
            reasons: vec![BitString::with_bits(6, &[1]); 2],
        };
        let ir = good.to_information_report();
        assert_eq!(Report::from_information_report(&ir).unwrap(), good);
        // Every truncation and every type swap is an error.
        for n in 0..ir.results.len() {
            let mut t = ir.clone();
            t.results.truncate(n);
            assert!(Report::from_information_report(&t).is_err());
        }
        for n in 0..ir.results.len() {
            let mut t = ir.clone();
            // A structure is valid nowhere except as a member value (positions 13..15).
            if (13..15).contains(&n) {
                continue;
            }
            t.results[n] = AccessResult::Success(Data::Structure(vec![]));
            assert!(Report::from_information_report(&t).is_err(), "{n}");
        }
        let mut extra = ir.clone();
        extra
            .results
            .push(AccessResult::Success(Data::Boolean(true)));
        assert!(Report::from_information_report(&extra).is_err());
    }

    fn arb_report() -> impl Strategy<Value = Report> {
        (
            "[a-z0-9]{0,12}",
            proptest::collection::vec(1usize..10, 0..9),
            1usize..12,
            proptest::collection::vec(any::<bool>(), 12),
            any::<u16>(),
            any::<[u8; 6]>(),
            any::<u32>(),
            (any::<u16>(), any::<bool>()),
        )
            .prop_map(|(rpt_id, opts, n, incl, sq, t, cr, seg)| {
                let opt_flds = BitString::with_bits(opt_flds::LEN, &opts);
                let has = |b| opt_flds.get(b);
                let set: Vec<usize> = (0..n).filter(|&i| incl[i]).collect();
                let k = set.len();
                Report {
                    rpt_id,
                    seq_num: has(opt_flds::SEQ_NUM).then_some(sq),
                    time_of_entry: has(opt_flds::TIME_STAMP).then_some(t),
                    data_set: has(opt_flds::DATA_SET).then(|| "LD/LLN0$DS".to_string()),
                    buf_ovfl: has(opt_flds::BUF_OVFL).then_some(seg.1),
                    entry_id: has(opt_flds::ENTRY_ID).then(|| t.repeat(2)[..8].to_vec()),
                    conf_rev: has(opt_flds::CONF_REV).then_some(cr),
                    segment: has(opt_flds::SEGMENTATION).then_some(seg),
                    inclusion: BitString::with_bits(n, &set),
                    data_refs: if has(opt_flds::DATA_REF) {
                        set.iter().map(|i| format!("LD/LN$ST$d{i}")).collect()
                    } else {
                        vec![]
                    },
                    values: set.iter().map(|&i| Data::Integer(i as i64)).collect(),
                    reasons: if has(opt_flds::REASON) {
                        vec![BitString::with_bits(trg_ops::LEN, &[trg_ops::DCHG]); k]
                    } else {
                        vec![]
                    },
                    opt_flds,
                }
            })
    }

    proptest! {
        /// Every OptFlds combination and data-set size: encode, PDU round trip, decode.
        #[test]
        fn any_options_round_trip(r in arb_report()) {
            let pdu = MmsPdu::Unconfirmed(Unconfirmed::InformationReport(r.to_information_report()));
            let MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir)) =
                MmsPdu::parse(&pdu.to_vec()).unwrap() else { panic!() };
            let back = Report::from_information_report(&ir).unwrap();
            prop_assert_eq!(&back, &r);
            back.check_data_set_len(r.inclusion.len()).unwrap();
            prop_assert!(back.check_data_set_len(r.inclusion.len() + 1).is_err());
            let e = back.entries();
            prop_assert_eq!(e.len(), r.inclusion.ones().count());
            for x in &e {
                prop_assert_eq!(x.value, &Data::Integer(x.member as i64));
                prop_assert_eq!(x.data_ref.is_some(), r.opt_flds.get(opt_flds::DATA_REF));
                prop_assert_eq!(x.reason.is_some(), r.opt_flds.get(opt_flds::REASON));
            }
        }
    }

    #[test]
    fn binary_time() {
        // 1984-01-01T00:00:00.001Z.
        let t = binary_time_from_unix_ms(5113 * 86_400_000 + 1);
        assert_eq!(t, [0, 0, 0, 1, 0, 0]);
        let now = 1_700_000_000_123;
        assert_eq!(binary_time_to_unix_ms(&binary_time_from_unix_ms(now)), now);
    }
}
