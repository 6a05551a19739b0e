//! Segmented reports (IEC 61850-8-1 17.2.3.x, OptFlds.segmentation): a server whose report
//! does not fit one PDU sends it in segments that share SqNum, numbered by SubSeqNum from 0,
//! with MoreSegmentsFollow true on all but the last. [`SegmentAssembler`] joins them into one
//! [`Report`] whose inclusion is the union of the segments'. The member layout inside the
//! segments is as libiec61850 1.6.1 writes it (`reporting.c`): each segment is a complete
//! report over the same data set with only its members included.

use super::{Report, L};
use crate::error::{Error, Result};

/// Joins the segments of one report at a time (one per RCB; reports of an RCB are not
/// interleaved).
#[derive(Debug, Clone, Default)]
pub struct SegmentAssembler {
    partial: Option<Report>,
    next_sub: u16,
}

fn out_of_order() -> Error {
    Error::malformed(L, "segmented report", "segment out of order")
}

impl SegmentAssembler {
    /// An assembler with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed one report. An unsegmented report passes through; a segment returns `None`
    /// until the last one, which returns the joined report (SubSeqNum 0, no more segments).
    /// A segment that does not continue the pending one (other SqNum or RptID, a gap in
    /// SubSeqNum, or a different data-set size) is an error and drops the pending report.
    pub fn push(&mut self, r: Report) -> Result<Option<Report>> {
        let Some((sub, more)) = r.segment else {
            if self.partial.take().is_some() {
                return Err(out_of_order());
            }
            return Ok(Some(r));
        };
        let joined = match self.partial.take() {
            None if sub == 0 => r,
            None => return Err(out_of_order()),
            Some(mut p) => {
                if sub != self.next_sub
                    || p.seq_num != r.seq_num
                    || p.rpt_id != r.rpt_id
                    || p.inclusion.len() != r.inclusion.len()
                {
                    return Err(out_of_order());
                }
                merge(&mut p, r)?;
                p
            }
        };
        if more {
            self.next_sub = sub.checked_add(1).ok_or_else(out_of_order)?;
            self.partial = Some(joined);
            Ok(None)
        } else {
            let mut joined = joined;
            joined.segment = Some((0, false));
            Ok(Some(joined))
        }
    }
}

/// Add `r`'s members to `p`, keeping data-set order.
fn merge(p: &mut Report, r: Report) -> Result<()> {
    let n = p.inclusion.len();
    let mut refs = Vec::new();
    let mut values = Vec::new();
    let mut reasons = Vec::new();
    let (mut pi, mut ri) = (0, 0);
    let mut inclusion = p.inclusion.clone();
    for i in 0..n {
        let (src, k) = match (p.inclusion.get(i), r.inclusion.get(i)) {
            (true, true) => {
                return Err(Error::malformed(
                    L,
                    "segmented report",
                    "member in two segments",
                ))
            }
            (true, false) => {
                pi += 1;
                (&*p, pi - 1)
            }
            (false, true) => {
                ri += 1;
                inclusion.set(i, true);
                (&r, ri - 1)
            }
            (false, false) => continue,
        };
        if let Some(x) = src.data_refs.get(k) {
            refs.push(x.clone());
        }
        values.push(src.values.get(k).cloned().ok_or_else(out_of_order)?);
        if let Some(x) = src.reasons.get(k) {
            reasons.push(x.clone());
        }
    }
    p.inclusion = inclusion;
    p.data_refs = refs;
    p.values = values;
    p.reasons = reasons;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bit_string::BitString;
    use crate::report::{opt_flds, trg_ops};
    use gander_wire::data::Data;

    fn seg(sq: u16, sub: u16, more: bool, members: &[usize]) -> Report {
        Report {
            rpt_id: "r".into(),
            opt_flds: BitString::with_bits(
                opt_flds::LEN,
                &[opt_flds::SEQ_NUM, opt_flds::REASON, opt_flds::SEGMENTATION],
            ),
            seq_num: Some(sq),
            time_of_entry: None,
            data_set: None,
            buf_ovfl: None,
            entry_id: None,
            conf_rev: None,
            segment: Some((sub, more)),
            inclusion: BitString::with_bits(6, members),
            data_refs: vec![],
            values: members.iter().map(|&m| Data::Integer(m as i64)).collect(),
            reasons: vec![BitString::with_bits(trg_ops::LEN, &[trg_ops::GI]); members.len()],
        }
    }

    #[test]
    fn joins_segments_in_data_set_order() {
        let mut a = SegmentAssembler::new();
        assert_eq!(a.push(seg(4, 0, true, &[0, 3])).unwrap(), None);
        assert_eq!(a.push(seg(4, 1, true, &[1])).unwrap(), None);
        let r = a.push(seg(4, 2, false, &[5])).unwrap().unwrap();
        assert_eq!(r.inclusion.ones().collect::<Vec<_>>(), [0, 1, 3, 5]);
        let v: Vec<&Data> = r.entries().iter().map(|e| e.value).collect();
        assert_eq!(
            v,
            [
                &Data::Integer(0),
                &Data::Integer(1),
                &Data::Integer(3),
                &Data::Integer(5)
            ]
        );
        assert_eq!(r.reasons.len(), 4);
        // Unsegmented reports pass through.
        let mut plain = seg(5, 0, false, &[1]);
        plain.segment = None;
        assert_eq!(a.push(plain.clone()).unwrap(), Some(plain));
    }

    #[test]
    fn refuses_gaps_and_mixing() {
        let mut a = SegmentAssembler::new();
        assert!(a.push(seg(1, 1, true, &[0])).is_err(), "starts at 1");
        a.push(seg(1, 0, true, &[0])).unwrap();
        assert!(a.push(seg(1, 2, false, &[1])).is_err(), "gap");
        a.push(seg(1, 0, true, &[0])).unwrap();
        assert!(a.push(seg(2, 1, false, &[1])).is_err(), "other SqNum");
        a.push(seg(1, 0, true, &[0])).unwrap();
        assert!(a.push(seg(1, 1, false, &[0])).is_err(), "member twice");
        a.push(seg(1, 0, true, &[0])).unwrap();
        let mut plain = seg(5, 0, false, &[1]);
        plain.segment = None;
        assert!(a.push(plain).is_err(), "unsegmented while pending");
    }
}
