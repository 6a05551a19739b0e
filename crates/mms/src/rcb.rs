//! Unbuffered report control blocks as IEC 61850-8-1 clause 17.2.1 maps them onto MMS: a
//! structured variable `LN$RP$name` in the LD's domain whose components are, in order,
//! RptID, RptEna, Resv, DatSet, ConfRev, OptFlds, BufTm, SqNum, TrgOps, IntgPd, GI
//! (and optionally Owner).
//!
//! This module holds what both sides need: the values as a struct with libiec61850's type
//! checks ([`UrcbValues::from_data`], what `IedConnection_getRCBValues` accepts), and the
//! client helpers that build the same Write that `IedConnection_setRCBValues(.., true)` sends
//! ([`set_rcb_values`], [`enable_reporting`]).

use gander_wire::data::Data;

use crate::bit_string::BitString;
use crate::error::{Error, Layer, Result};
use crate::report::{opt_flds, trg_ops};
use crate::service::{ObjectName, ReadRequest, VariableAccessSpecification, WriteRequest};

const L: Layer = Layer::Iec61850;

/// URCB component names in IEC 61850-8-1 order.
pub const URCB_ELEMENTS: [&str; 11] = [
    "RptID", "RptEna", "Resv", "DatSet", "ConfRev", "OptFlds", "BufTm", "SqNum", "TrgOps",
    "IntgPd", "GI",
];

/// The values of an unbuffered RCB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrcbValues {
    /// RptID (VisibleString129).
    pub rpt_id: String,
    /// RptEna.
    pub rpt_ena: bool,
    /// Resv.
    pub resv: bool,
    /// DatSet: the data set reference with `$` (e.g. `IMPLD0/LLN0$DS1`).
    pub dat_set: String,
    /// ConfRev.
    pub conf_rev: u32,
    /// OptFlds (10 bits).
    pub opt_flds: BitString,
    /// BufTm in ms.
    pub buf_tm: u32,
    /// SqNum.
    pub sq_num: u16,
    /// TrgOps (6 bits).
    pub trg_ops: BitString,
    /// IntgPd in ms.
    pub intg_pd: u32,
    /// GI.
    pub gi: bool,
    /// Owner (optional 12th component).
    pub owner: Option<Vec<u8>>,
}

impl UrcbValues {
    /// As the MMS structure a read of the whole RCB returns.
    pub fn to_data(&self) -> Data {
        let mut v = vec![
            Data::VisibleString(self.rpt_id.clone()),
            Data::Boolean(self.rpt_ena),
            Data::Boolean(self.resv),
            Data::VisibleString(self.dat_set.clone()),
            Data::Unsigned(self.conf_rev as u64),
            self.opt_flds.to_data(),
            Data::Unsigned(self.buf_tm as u64),
            Data::Unsigned(self.sq_num as u64),
            self.trg_ops.to_data(),
            Data::Unsigned(self.intg_pd as u64),
            Data::Boolean(self.gi),
        ];
        if let Some(o) = &self.owner {
            v.push(Data::OctetString(o.clone()));
        }
        Data::Structure(v)
    }

    /// One component by name, as a read of `...$RP$rcb$Name` returns it.
    pub fn element(&self, name: &str) -> Option<Data> {
        let i = URCB_ELEMENTS.iter().position(|e| *e == name);
        match (i, self.to_data()) {
            (Some(i), Data::Structure(mut v)) => Some(v.swap_remove(i)),
            (None, Data::Structure(v)) if name == "Owner" && v.len() == 12 => v.last().cloned(),
            _ => None,
        }
    }

    /// Parse a read result with the checks libiec61850's client applies
    /// (`clientReportControlBlock_updateValues`): a structure of 11 or 12 components of the
    /// IEC 61850-8-1 types.
    pub fn from_data(d: &Data) -> Result<Self> {
        let Data::Structure(v) = d else {
            return Err(Error::malformed(L, "URCB", "not a structure"));
        };
        if !(11..=12).contains(&v.len()) {
            return Err(Error::malformed(L, "URCB", "not 11 or 12 components"));
        }
        let bad = |what| Error::malformed(L, what, "wrong MMS type");
        let s = |i: usize, what| match &v[i] {
            Data::VisibleString(s) => Ok(s.clone()),
            _ => Err(bad(what)),
        };
        let b = |i: usize, what| match &v[i] {
            Data::Boolean(b) => Ok(*b),
            _ => Err(bad(what)),
        };
        let u = |i: usize, what| match &v[i] {
            Data::Unsigned(n) => u32::try_from(*n).map_err(|_| bad(what)),
            _ => Err(bad(what)),
        };
        let bits = |i: usize, what| BitString::from_data(&v[i]).ok_or_else(|| bad(what));
        Ok(UrcbValues {
            rpt_id: s(0, "RptID")?,
            rpt_ena: b(1, "RptEna")?,
            resv: b(2, "Resv")?,
            dat_set: s(3, "DatSet")?,
            conf_rev: u(4, "ConfRev")?,
            opt_flds: bits(5, "OptFlds")?,
            buf_tm: u(6, "BufTm")?,
            sq_num: u16::try_from(u(7, "SqNum")?).map_err(|_| bad("SqNum"))?,
            trg_ops: bits(8, "TrgOps")?,
            intg_pd: u(9, "IntgPd")?,
            gi: b(10, "GI")?,
            owner: match v.get(11) {
                Some(Data::OctetString(o)) => Some(o.clone()),
                Some(_) => return Err(bad("Owner")),
                None => None,
            },
        })
    }
}

/// Map an IEC 61850 object reference (`LD/LN.FC.x.y`) to its MMS name (domain `LD`, item
/// `LN$FC$x$y`), as IEC 61850-8-1 clause 8.1.3.2 and libiec61850's client do.
pub fn mms_name(reference: &str) -> Result<ObjectName> {
    let (domain, rest) = reference.split_once('/').ok_or(Error::malformed(
        L,
        "object reference",
        "no '/' after the LD name",
    ))?;
    if domain.is_empty() || rest.is_empty() {
        return Err(Error::malformed(
            L,
            "object reference",
            "empty LD or LN part",
        ));
    }
    Ok(ObjectName::domain(domain, rest.replace('.', "$")))
}

/// The read `IedConnection_getRCBValues` sends: the whole RCB structure.
pub fn read_rcb_values(rcb: &ObjectName) -> ReadRequest {
    ReadRequest {
        specification_with_result: false,
        spec: VariableAccessSpecification::names([rcb.clone()]),
    }
}

/// Which RCB components to write, like libiec61850's parameter mask.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RcbSettings {
    /// Resv.
    pub resv: Option<bool>,
    /// RptID.
    pub rpt_id: Option<String>,
    /// DatSet.
    pub dat_set: Option<String>,
    /// OptFlds.
    pub opt_flds: Option<BitString>,
    /// BufTm.
    pub buf_tm: Option<u32>,
    /// TrgOps.
    pub trg_ops: Option<BitString>,
    /// IntgPd.
    pub intg_pd: Option<u32>,
    /// RptEna.
    pub rpt_ena: Option<bool>,
    /// GI.
    pub gi: Option<bool>,
}

/// One Write carrying every selected component, in libiec61850's order
/// (`IedConnection_setRCBValues` with `singleRequest = true`): RptEna=false first when
/// disabling, then Resv, RptID, DatSet, OptFlds, BufTm, TrgOps, IntgPd, GI, RptEna=true, and
/// GI after RptEna when enabling.
pub fn set_rcb_values(rcb: &ObjectName, s: &RcbSettings) -> WriteRequest {
    let (domain, item) = match rcb {
        ObjectName::DomainSpecific { domain, item } => (domain.clone(), item.clone()),
        other => (String::new(), other.to_string()),
    };
    let mut names = Vec::new();
    let mut data = Vec::new();
    let mut add = |n: &str, d: Data| {
        names.push(ObjectName::domain(domain.clone(), format!("{item}${n}")));
        data.push(d);
    };
    let enabling = s.rpt_ena == Some(true);
    if s.rpt_ena == Some(false) {
        add("RptEna", Data::Boolean(false));
    }
    if let Some(v) = s.resv {
        add("Resv", Data::Boolean(v));
    }
    if let Some(v) = &s.rpt_id {
        add("RptID", Data::VisibleString(v.clone()));
    }
    if let Some(v) = &s.dat_set {
        add("DatSet", Data::VisibleString(v.clone()));
    }
    if let Some(v) = &s.opt_flds {
        add("OptFlds", v.to_data());
    }
    if let Some(v) = s.buf_tm {
        add("BufTm", Data::Unsigned(v as u64));
    }
    if let Some(v) = &s.trg_ops {
        add("TrgOps", v.to_data());
    }
    if let Some(v) = s.intg_pd {
        add("IntgPd", Data::Unsigned(v as u64));
    }
    if let (Some(v), false) = (s.gi, enabling) {
        add("GI", Data::Boolean(v));
    }
    if enabling {
        add("RptEna", Data::Boolean(true));
        if let Some(v) = s.gi {
            add("GI", Data::Boolean(v));
        }
    }
    WriteRequest {
        spec: VariableAccessSpecification::names(names),
        data,
    }
}

/// The settings the libiec61850 example client uses to enable a URCB: OptFlds seq-num,
/// time-stamp, reason, data-set; TrgOps dchg and GI; RptEna; and GI if `gi`.
pub fn enable_settings(gi: bool) -> RcbSettings {
    RcbSettings {
        opt_flds: Some(BitString::with_bits(
            opt_flds::LEN,
            &[
                opt_flds::SEQ_NUM,
                opt_flds::TIME_STAMP,
                opt_flds::REASON,
                opt_flds::DATA_SET,
            ],
        )),
        trg_ops: Some(BitString::with_bits(
            trg_ops::LEN,
            &[trg_ops::DCHG, trg_ops::GI],
        )),
        rpt_ena: Some(true),
        gi: gi.then_some(true),
        ..RcbSettings::default()
    }
}

/// The Write that enables reporting on `rcb` exactly as captured from libiec61850
/// (OptFlds, TrgOps, RptEna=true, GI=true).
pub fn enable_reporting(rcb: &ObjectName, gi: bool) -> WriteRequest {
    set_rcb_values(rcb, &enable_settings(gi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::{ConfirmedRequest, MmsPdu};
    use gander_wire::Codec;

    #[test]
    fn golden_enable_write() {
        // `docs/mms-bytes.md` §2 [V]: one Write, items OptFlds/TrgOps/RptEna/GI, data
        // 84 03 06 7800, 84 02 02 44, 83 01 01, 83 01 01.
        let rcb = mms_name("TESTLD0/LLN0.RP.urcb01").unwrap();
        let w = enable_reporting(&rcb, true);
        let VariableAccessSpecification::ListOfVariable(names) = &w.spec else {
            panic!()
        };
        let items: Vec<String> = names.iter().map(|n| n.name.to_string()).collect();
        assert_eq!(
            items,
            [
                "TESTLD0/LLN0$RP$urcb01$OptFlds",
                "TESTLD0/LLN0$RP$urcb01$TrgOps",
                "TESTLD0/LLN0$RP$urcb01$RptEna",
                "TESTLD0/LLN0$RP$urcb01$GI"
            ]
        );
        let mut data = Vec::new();
        w.data.iter().for_each(|d| d.emit_vec(&mut data));
        assert_eq!(
            hex::encode(data),
            "84030678008402024483010183010 1".replace(' ', "")
        );
        let pdu = MmsPdu::ConfirmedRequest {
            invoke_id: 2,
            request: ConfirmedRequest::Write(w),
        };
        assert_eq!(MmsPdu::parse(&pdu.to_vec()).unwrap(), pdu);
    }

    #[test]
    fn urcb_values_checks() {
        let v = UrcbValues {
            rpt_id: "rpt01".into(),
            rpt_ena: false,
            resv: false,
            dat_set: "IMPLD0/LLN0$DS1".into(),
            conf_rev: 1,
            opt_flds: BitString::new(10),
            buf_tm: 0,
            sq_num: 0,
            trg_ops: BitString::new(6),
            intg_pd: 0,
            gi: false,
            owner: None,
        };
        assert_eq!(UrcbValues::from_data(&v.to_data()).unwrap(), v);
        assert_eq!(
            v.element("DatSet"),
            Some(Data::VisibleString("IMPLD0/LLN0$DS1".into()))
        );
        let Data::Structure(mut items) = v.to_data() else {
            panic!()
        };
        items[4] = Data::Integer(1);
        assert!(UrcbValues::from_data(&Data::Structure(items.clone())).is_err());
        items.truncate(10);
        assert!(UrcbValues::from_data(&Data::Structure(items)).is_err());
        assert!(mms_name("noslash").is_err());
    }

    #[test]
    fn disable_order() {
        let rcb = ObjectName::domain("D", "LLN0$RP$r");
        let w = set_rcb_values(
            &rcb,
            &RcbSettings {
                rpt_ena: Some(false),
                resv: Some(false),
                gi: Some(false),
                ..Default::default()
            },
        );
        let VariableAccessSpecification::ListOfVariable(names) = &w.spec else {
            panic!()
        };
        let last: Vec<_> = names
            .iter()
            .map(|n| n.name.to_string().rsplit('$').next().unwrap().to_string())
            .collect();
        assert_eq!(last, ["RptEna", "Resv", "GI"]);
    }
}
