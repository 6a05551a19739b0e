//! The server's model as the probe reports it, and the pure steps that assemble it from what
//! the directory services return (no I/O here, so every rule has a unit test).
//!
//! IEC 61850-8-1 clause 8 maps the model onto MMS: a logical device is a domain; every logical
//! node is a named variable of its domain, and so is every functional constraint, data object
//! and attribute below it, joined by `$` (`MMXU1$MX$TotW$mag$f`); a data set is a named
//! variable list (`LLN0$Events`); a report control block is the variable `LN$RP$name`
//! (unbuffered) or `LN$BR$name` (buffered). The IEC 61850 reference writes the same object as
//! `LD/LN.DO.DA` with the functional constraint beside it.
use gander_mms::bit_string::BitString;
use gander_mms::rcb_plan::{RcbKind, RcbRef, RcbSnapshot};
use gander_mms::report::{opt_flds, trg_ops};
use gander_mms::service::ObjectName;
use gander_wire::data::Data;
use serde::Serialize;

/// What Identify (ISO 9506-2 10.2) answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// vendorName.
    pub vendor: String,
    /// modelName.
    pub model: String,
    /// revision.
    pub revision: String,
}

/// One logical device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogicalDevice {
    /// Its name (the MMS domain), e.g. `IED1PROT`.
    pub name: String,
    /// Its logical nodes in the server's order, e.g. `LLN0`, `PTOC1`.
    pub logical_nodes: Vec<String>,
    /// How many named variables (nodes, data objects, attributes) the server listed.
    pub variables: usize,
}

/// One member of a data set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    /// IEC 61850 reference, `LD/LN.DO[.DA]`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Functional constraint (`ST`, `MX`, ...), when the name has one.
    pub fc: Option<String>,
}

/// One data set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataSet {
    /// IEC 61850 reference, `LD/LN.name`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The members in data-set order (empty when `error` is set).
    pub members: Vec<Member>,
    /// mmsDeletable: false for data sets configured in SCL.
    pub deletable: Option<bool>,
    /// Why the members could not be read, if they could not.
    pub error: Option<String>,
}

/// One report control block with the attributes read from the device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rcb {
    /// IEC 61850 reference, `LD/LN.BR.name` or `LD/LN.RP.name`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Buffered (BR) or unbuffered (RP).
    pub buffered: bool,
    /// DatSet as an IEC 61850 reference (`LD/LN.name`); `None` when empty or unread.
    pub data_set: Option<String>,
    /// RptID.
    pub rpt_id: Option<String>,
    /// RptEna.
    pub rpt_ena: Option<bool>,
    /// ConfRev.
    pub conf_rev: Option<u64>,
    /// OptFlds, by name.
    pub opt_flds: Option<Vec<&'static str>>,
    /// TrgOps, by name.
    pub trg_ops: Option<Vec<&'static str>>,
    /// BufTm, ms.
    pub buf_tm: Option<u64>,
    /// IntgPd, ms.
    pub intg_pd: Option<u64>,
    /// Resv (unbuffered).
    pub resv: Option<bool>,
    /// ResvTms (buffered, when the server has it).
    pub resv_tms: Option<i64>,
    /// Owner (hex), when the server has it and it is not all zero.
    pub owner: Option<String>,
    /// Whether no client holds it (not enabled, not reserved).
    pub free: Option<bool>,
    /// Why the attributes could not be read, if they could not.
    pub error: Option<String>,
}

/// The model the probe discovered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Model {
    /// Logical devices in the server's order.
    pub logical_devices: Vec<LogicalDevice>,
    /// Data sets of every logical device.
    pub data_sets: Vec<DataSet>,
    /// Report control blocks of every logical device.
    pub rcbs: Vec<Rcb>,
}

/// The logical nodes among a domain's named variables: the first `$`-component of each name,
/// once each, in the server's order.
pub fn logical_nodes(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let ln = n.split('$').next().unwrap_or(n);
        if !ln.is_empty() && !out.iter().any(|x| x == ln) {
            out.push(ln.to_string());
        }
    }
    out
}

/// The IEC 61850 reference and functional constraint of an MMS item of `domain`:
/// `MMXU1$MX$TotW$mag$f` -> (`LD/MMXU1.TotW.mag.f`, `MX`); an item without FC (a logical node,
/// or a data set `LLN0$Events`) keeps every part.
pub fn reference(domain: &str, item: &str) -> (String, Option<String>) {
    let parts: Vec<&str> = item.split('$').collect();
    if parts.len() >= 3 && is_fc(parts[1]) {
        let mut r = format!("{domain}/{}", parts[0]);
        for p in &parts[2..] {
            r.push('.');
            r.push_str(p);
        }
        (r, Some(parts[1].to_string()))
    } else {
        (format!("{domain}/{}", parts.join(".")), None)
    }
}

/// The functional constraints of IEC 61850-7-2 Table 18 that appear as MMS name components,
/// plus the control-block ones of IEC 61850-8-1 (BR, RP, LG, GO, GS, MS, US).
fn is_fc(s: &str) -> bool {
    matches!(
        s,
        "ST" | "MX"
            | "SP"
            | "SV"
            | "CF"
            | "DC"
            | "SG"
            | "SE"
            | "SR"
            | "OR"
            | "BL"
            | "EX"
            | "CO"
            | "BR"
            | "RP"
            | "LG"
            | "GO"
            | "GS"
            | "MS"
            | "US"
    )
}

/// An object name as a reference with its FC: `LD/LN.DO.DA [FC]`.
pub fn member(name: &ObjectName) -> Member {
    let (reference, fc) = match name {
        ObjectName::DomainSpecific { domain, item } => reference(domain, item),
        other => (other.to_string(), None),
    };
    Member { reference, fc }
}

/// A DatSet value as the device writes it (`LD/LLN0$Events`) as an IEC 61850 reference
/// (`LD/LLN0.Events`); `None` when empty.
pub fn dat_set_reference(v: &str) -> Option<String> {
    if v.is_empty() {
        return None;
    }
    Some(v.replace('$', "."))
}

/// An RCB named on the command line, as an IEC 61850 reference (`LD/LLN0.BR.brcbA01`) or an
/// MMS name (`LD/LLN0$BR$brcbA01`).
pub use gander_client::reference::parse_rcb;

/// OptFlds bit names (IEC 61850-8-1 17.2.2; the names IEC 61850-7-2 gives them).
pub fn opt_flds_names(b: &BitString) -> Vec<&'static str> {
    const NAMES: [(usize, &str); 9] = [
        (opt_flds::SEQ_NUM, "seq-num"),
        (opt_flds::TIME_STAMP, "time-stamp"),
        (opt_flds::REASON, "reason-code"),
        (opt_flds::DATA_SET, "data-set"),
        (opt_flds::DATA_REF, "data-ref"),
        (opt_flds::BUF_OVFL, "buffer-overflow"),
        (opt_flds::ENTRY_ID, "entry-id"),
        (opt_flds::CONF_REV, "conf-rev"),
        (opt_flds::SEGMENTATION, "segmentation"),
    ];
    NAMES
        .iter()
        .filter(|(i, _)| *i < b.len() && b.get(*i))
        .map(|(_, n)| *n)
        .collect()
}

/// TrgOps bit names (IEC 61850-8-1 17.2.x; IEC 61850-7-2 names).
pub fn trg_ops_names(b: &BitString) -> Vec<&'static str> {
    const NAMES: [(usize, &str); 5] = [
        (trg_ops::DCHG, "dchg"),
        (trg_ops::QCHG, "qchg"),
        (trg_ops::DUPD, "dupd"),
        (trg_ops::INTEGRITY, "period"),
        (trg_ops::GI, "gi"),
    ];
    NAMES
        .iter()
        .filter(|(i, _)| *i < b.len() && b.get(*i))
        .map(|(_, n)| *n)
        .collect()
}

fn text(d: Option<&Data>) -> Option<String> {
    match d? {
        Data::VisibleString(s) => Some(s.clone()),
        _ => None,
    }
}

fn unsigned(d: Option<&Data>) -> Option<u64> {
    match d? {
        Data::Unsigned(v) => Some(*v),
        Data::Integer(v) => u64::try_from(*v).ok(),
        _ => None,
    }
}

fn bits(d: Option<&Data>) -> Option<BitString> {
    BitString::from_data(d?)
}

/// An RCB whose attributes could not be read.
pub fn rcb_unread(r: &RcbRef, error: String) -> Rcb {
    Rcb {
        reference: r.reference(),
        buffered: r.kind == RcbKind::Buffered,
        data_set: None,
        rpt_id: None,
        rpt_ena: None,
        conf_rev: None,
        opt_flds: None,
        trg_ops: None,
        buf_tm: None,
        intg_pd: None,
        resv: None,
        resv_tms: None,
        owner: None,
        free: None,
        error: Some(error),
    }
}

/// The reported attributes of an RCB from its snapshot (the values as read).
pub fn rcb_info(s: &RcbSnapshot) -> Rcb {
    let owner = match s.get("Owner") {
        Some(Data::OctetString(o)) if o.iter().any(|b| *b != 0) => Some(
            o.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    };
    Rcb {
        reference: s.rcb.reference(),
        buffered: s.rcb.kind == RcbKind::Buffered,
        data_set: text(s.get("DatSet")).and_then(|v| dat_set_reference(&v)),
        rpt_id: text(s.get("RptID")),
        rpt_ena: match s.get("RptEna") {
            Some(Data::Boolean(b)) => Some(*b),
            _ => None,
        },
        conf_rev: unsigned(s.get("ConfRev")),
        opt_flds: bits(s.get("OptFlds")).map(|b| opt_flds_names(&b)),
        trg_ops: bits(s.get("TrgOps")).map(|b| trg_ops_names(&b)),
        buf_tm: unsigned(s.get("BufTm")),
        intg_pd: unsigned(s.get("IntgPd")),
        resv: match s.get("Resv") {
            Some(Data::Boolean(b)) => Some(*b),
            _ => None,
        },
        resv_tms: match s.get("ResvTms") {
            Some(Data::Integer(v)) => Some(*v),
            _ => None,
        },
        owner,
        free: Some(s.check_free().is_ok()),
        error: None,
    }
}

/// The variables whose value a read-RTT measurement can use: leaves (no other name extends
/// them) under FC `ST` or `MX`, best first: `stVal` and `mag$f`/`mag$i` (the values an IED
/// updates), then any other ST/MX leaf, each group in the server's order.
pub fn read_candidates(names: &[String]) -> Vec<&str> {
    let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let is_leaf = |n: &str| {
        let prefix = format!("{n}$");
        // In sorted order, every extension of `n` follows `n` directly.
        match sorted.binary_search(&n) {
            Ok(i) => sorted.get(i + 1).is_none_or(|m| !m.starts_with(&prefix)),
            Err(_) => true,
        }
    };
    let st_mx = |n: &&String| {
        let mut it = n.split('$');
        let _ln = it.next();
        matches!(it.next(), Some("ST" | "MX")) && it.next().is_some()
    };
    let leaves: Vec<&str> = names
        .iter()
        .filter(st_mx)
        .map(String::as_str)
        .filter(|n| is_leaf(n))
        .collect();
    let preferred =
        |n: &&str| n.ends_with("$stVal") || n.ends_with("$mag$f") || n.ends_with("$mag$i");
    let mut out: Vec<&str> = leaves.iter().copied().filter(preferred).collect();
    out.extend(leaves.iter().copied().filter(|n| !preferred(n)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn logical_nodes_in_server_order_once_each() {
        let names = v(&[
            "LLN0",
            "LLN0$ST",
            "LLN0$ST$Mod",
            "PTOC1",
            "PTOC1$ST$Str$general",
            "XCBR1$ST$Pos$stVal",
            "PTOC1$CF$StrVal",
        ]);
        assert_eq!(logical_nodes(&names), ["LLN0", "PTOC1", "XCBR1"]);
        assert!(logical_nodes(&[]).is_empty());
    }

    #[test]
    fn references_split_off_the_fc() {
        assert_eq!(
            reference("MEAS", "MMXU1$MX$TotW$mag$f"),
            ("MEAS/MMXU1.TotW.mag.f".to_string(), Some("MX".to_string()))
        );
        assert_eq!(
            reference("PROT", "LLN0$Events"),
            ("PROT/LLN0.Events".to_string(), None)
        );
        assert_eq!(reference("PROT", "PTOC1"), ("PROT/PTOC1".to_string(), None));
        // A data object named like an FC in the third place stays a name.
        assert_eq!(
            reference("LD", "GGIO1$ST$ST"),
            ("LD/GGIO1.ST".to_string(), Some("ST".to_string()))
        );
        let m = member(&ObjectName::domain("PROT", "PTOC1$ST$Str"));
        assert_eq!(
            (m.reference.as_str(), m.fc.as_deref()),
            ("PROT/PTOC1.Str", Some("ST"))
        );
    }

    #[test]
    fn rcb_names_in_both_spellings() {
        let a = parse_rcb("PROT/LLN0.BR.brcbEv01").unwrap();
        let b = parse_rcb("PROT/LLN0$BR$brcbEv01").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.kind, RcbKind::Buffered);
        assert_eq!(a.reference(), "PROT/LLN0.BR.brcbEv01");
        assert!(parse_rcb("PROT/LLN0.ST.x").is_none());
        assert!(parse_rcb("no-slash").is_none());
        assert_eq!(
            dat_set_reference("PROT/LLN0$Events").as_deref(),
            Some("PROT/LLN0.Events")
        );
        assert_eq!(dat_set_reference(""), None);
    }

    #[test]
    fn bit_names_follow_iec_61850_8_1() {
        let o = BitString::with_bits(10, &[1, 2, 4, 8]);
        assert_eq!(
            opt_flds_names(&o),
            ["seq-num", "time-stamp", "data-set", "conf-rev"]
        );
        let t = BitString::with_bits(6, &[1, 4, 5]);
        assert_eq!(trg_ops_names(&t), ["dchg", "period", "gi"]);
        // A shorter bit string than the names: no out-of-range read.
        assert!(trg_ops_names(&BitString::with_bits(2, &[1])) == ["dchg"]);
    }

    #[test]
    fn read_candidates_are_st_mx_leaves_preferred_first() {
        let names = v(&[
            "GGIO1",
            "GGIO1$MX",
            "GGIO1$MX$AnIn1",
            "GGIO1$MX$AnIn1$mag",
            "GGIO1$MX$AnIn1$mag$f",
            "GGIO1$MX$AnIn1$q",
            "GGIO1$ST",
            "GGIO1$ST$Ind1",
            "GGIO1$ST$Ind1$stVal",
            "GGIO1$CF$Ind1$x",
        ]);
        assert_eq!(
            read_candidates(&names),
            [
                "GGIO1$MX$AnIn1$mag$f",
                "GGIO1$ST$Ind1$stVal",
                "GGIO1$MX$AnIn1$q"
            ]
        );
        // A server that lists only logical nodes offers no candidate.
        assert!(read_candidates(&v(&["LLN0", "MMXU1"])).is_empty());
    }

    #[test]
    fn rcb_info_names_what_was_read() {
        let r = RcbRef::parse("PROT", "LLN0$RP$urcbA01").unwrap();
        let snap = RcbSnapshot::from_value(
            r,
            &Data::Structure(vec![
                Data::VisibleString("events".into()),
                Data::Boolean(false),
                Data::Boolean(false),
                Data::VisibleString("PROT/LLN0$Events".into()),
                Data::Unsigned(3),
                BitString::with_bits(10, &[1, 4]).to_data(),
                Data::Unsigned(50),
                Data::Unsigned(0),
                BitString::with_bits(6, &[1, 5]).to_data(),
                Data::Unsigned(1000),
                Data::Boolean(false),
            ]),
        )
        .unwrap();
        let i = rcb_info(&snap);
        assert_eq!(i.reference, "PROT/LLN0.RP.urcbA01");
        assert!(!i.buffered);
        assert_eq!(i.data_set.as_deref(), Some("PROT/LLN0.Events"));
        assert_eq!(i.rpt_id.as_deref(), Some("events"));
        assert_eq!(i.conf_rev, Some(3));
        assert_eq!(i.opt_flds, Some(vec!["seq-num", "data-set"]));
        assert_eq!(i.trg_ops, Some(vec!["dchg", "gi"]));
        assert_eq!((i.buf_tm, i.intg_pd), (Some(50), Some(1000)));
        assert_eq!((i.resv, i.free), (Some(false), Some(true)));
    }
}
