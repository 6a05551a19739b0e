//! The GOOSE, sampled value and setting group control blocks of an `LN0` (IEC 61850-6 §9.3.9
//! `GSEControl`, §9.3.10 `SampledValueControl`, §9.3.11 `SettingControl`) and the multicast
//! addresses the Communication section gives the first two (§9.2.3 `GSE`, `SMV` of a
//! `ConnectedAP`, with `Address/P` of types `MAC-Address`, `APPID`, `VLAN-ID`,
//! `VLAN-PRIORITY`, and a GSE's `MinTime`/`MaxTime`).
//!
//! The server serves them as IEC 61850-8-1 GoCB (`LLN0$GO$name`), MSVCB/USVCB
//! (`LLN0$MS$name` / `LLN0$US$name`) and SGCB (`LLN0$SP$SGCB`). Attribute names, defaults and
//! value syntax follow the SCL schema (IEC 61850-6 Ed.2 `SCL_IED.xsd` tGSEControl,
//! tSampledValueControl, tSettingControl; `SCL_Communication.xsd` tGSE, tSMV, tP_MAC-Address,
//! tP_APPID, tP_VLAN-ID, tP_VLAN-PRIORITY), as libiec61850's model generator and OpenSCD read
//! them.

use crate::error::{SclError, SclErrorKind};
use crate::model::DataSet;
use crate::parse::{kids, Ctx};
use crate::warning::Repair;
use crate::xml::SclAttr;
use roxmltree::Node;
use serde::Serialize;
use std::collections::HashMap;

/// `type` of a `GSEControl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum GseType {
    /// IEC 61850-8-1 GOOSE (the schema's default).
    Goose,
    /// The Ed.1 GSSE (UCA GOOSE), withdrawn in Ed.2 but still in files.
    Gsse,
}

/// `securityEnable` of a GSE or SV control (tPredefinedTypeOfSecurityEnum; IEC 62351-6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum SecurityEnable {
    /// No security (the schema's default).
    #[default]
    None,
    /// Signed (IEC 62351-6 authentication value).
    Signature,
    /// Signed and encrypted.
    SignatureAndEncryption,
}

/// `smpMod` of a `SampledValueControl` (IEC 61850-7-2 §16.2.1: how `smpRate` counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum SmpMod {
    /// Samples per nominal period (the schema's default).
    #[default]
    SmpPerPeriod,
    /// Samples per second.
    SmpPerSec,
    /// Seconds per sample.
    SecPerSmp,
}

impl SmpMod {
    /// The value of the MSVCB attribute `SmpMod` (IEC 61850-7-2 §16.2.1: 0, 1, 2 in this order).
    pub fn ord(self) -> u8 {
        match self {
            SmpMod::SmpPerPeriod => 0,
            SmpMod::SmpPerSec => 1,
            SmpMod::SecPerSmp => 2,
        }
    }
}

/// `SmvOpts`: which optional fields the sampled value messages carry (IEC 61850-7-2 §16.2.1,
/// IEC 61850-9-2 §8.5). Absent attributes are false except `sampleSynchronized`, which Ed.2
/// makes always true.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SmvOpts {
    /// `refreshTime`.
    pub refresh_time: bool,
    /// `sampleSynchronized`.
    pub sample_synchronized: bool,
    /// `sampleRate`.
    pub sample_rate: bool,
    /// `dataSet`.
    pub data_set: bool,
    /// `security`.
    pub security: bool,
    /// `timestamp` (Ed.2.1).
    pub timestamp: bool,
    /// `synchSourceId` (Ed.2.1).
    pub synch_source_id: bool,
}

impl Default for SmvOpts {
    fn default() -> Self {
        SmvOpts {
            refresh_time: false,
            sample_synchronized: true,
            sample_rate: false,
            data_set: false,
            security: false,
            timestamp: false,
            synch_source_id: false,
        }
    }
}

/// A multicast (or unicast) address of a GSE or SMV control block, from the Communication
/// section's `Address/P` elements. Each field is None when its `P` is absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CommAddress {
    /// `MAC-Address` (`01-0C-CD-01-00-01`).
    pub mac: Option<[u8; 6]>,
    /// `APPID` (four hexadecimal digits).
    pub app_id: Option<u16>,
    /// `VLAN-ID` (three hexadecimal digits, 0..=0xFFF).
    pub vlan_id: Option<u16>,
    /// `VLAN-PRIORITY` (0..=7).
    pub vlan_priority: Option<u8>,
}

/// A GOOSE (or GSSE) control block as configured (IEC 61850-6 §9.3.9, IEC 61850-7-2 §15.2.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GseControl {
    /// `name`.
    pub name: String,
    /// `datSet`: a data set of LLN0, if any.
    pub data_set: Option<String>,
    /// `confRev` (optional in the schema; 0 when absent).
    pub conf_rev: u32,
    /// `appID`: the GoID of the messages.
    pub app_id: String,
    /// `type` (default GOOSE).
    pub gse_type: GseType,
    /// `fixedOffs` (default false): fixed-length encoding of the data set (IEC 61850-8-1 Annex A).
    pub fixed_offs: bool,
    /// `securityEnable` (default None).
    pub security_enable: SecurityEnable,
    /// The `GSE` address of the Communication section, if any.
    pub address: Option<CommAddress>,
    /// `MinTime` of the `GSE` in ms (first retransmission), if given.
    pub min_time_ms: Option<u32>,
    /// `MaxTime` of the `GSE` in ms (heartbeat), if given.
    pub max_time_ms: Option<u32>,
}

/// A sampled value control block as configured (IEC 61850-6 §9.3.10, IEC 61850-7-2 §16.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SvControl {
    /// `name`.
    pub name: String,
    /// `datSet`: a data set of LLN0, if any.
    pub data_set: Option<String>,
    /// `confRev` (optional in the schema; 0 when absent).
    pub conf_rev: u32,
    /// `smvID` (required).
    pub smv_id: String,
    /// `smpRate` (required).
    pub smp_rate: u32,
    /// `nofASDU` (required).
    pub nof_asdu: u32,
    /// `multicast` (default true): an MSVCB; false makes it a USVCB (IEC 61850-8-1 names it
    /// `LLN0$US$name` instead of `LLN0$MS$name`).
    pub multicast: bool,
    /// `smpMod` (default SmpPerPeriod).
    pub smp_mod: SmpMod,
    /// `SmvOpts`.
    pub opts: SmvOpts,
    /// `securityEnable` (default None).
    pub security_enable: SecurityEnable,
    /// The `SMV` address of the Communication section, if any.
    pub address: Option<CommAddress>,
}

/// The setting group control block (IEC 61850-6 §9.3.11, IEC 61850-7-2 §13.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SettingControl {
    /// `numOfSGs` (required, at least 1).
    pub num_of_sgs: u8,
    /// `actSG`: the active group at start (default 1, 1..=numOfSGs).
    pub act_sg: u8,
    /// `resvTms`: seconds an edit reservation lasts (Ed.2), if given.
    pub resv_tms: Option<u16>,
}

/// The `GSE` and `SMV` elements of the Communication section, found by the IED name, LD inst
/// and control block name they address (indexed once per file, so looking one up does not
/// scan the document again).
#[derive(Default)]
pub(crate) struct CommIndex<'a, 'i> {
    gse: ByBlock<'a, 'i>,
    smv: ByBlock<'a, 'i>,
}

/// (IED name, LD inst, control block name) to the (apName, element) pairs naming it.
type ByBlock<'a, 'i> = HashMap<(&'a str, &'a str, &'a str), Vec<(&'a str, Node<'a, 'i>)>>;

impl<'a, 'i> CommIndex<'a, 'i> {
    /// Indexes `SCL/Communication/SubNetwork/ConnectedAP/{GSE,SMV}`. Elements without the
    /// naming attributes cannot belong to a control block and are skipped.
    pub(crate) fn read(root: Node<'a, 'i>) -> Self {
        let mut ix = CommIndex::default();
        for comm in kids(root, "Communication") {
            for sn in kids(comm, "SubNetwork") {
                for cap in kids(sn, "ConnectedAP") {
                    let (Some(ied), Some(ap)) = (cap.scl_attr("iedName"), cap.scl_attr("apName"))
                    else {
                        continue;
                    };
                    for (tag, map) in [("GSE", &mut ix.gse), ("SMV", &mut ix.smv)] {
                        for g in kids(cap, tag) {
                            if let (Some(ld), Some(cb)) =
                                (g.scl_attr("ldInst"), g.scl_attr("cbName"))
                            {
                                map.entry((ied, ld, cb)).or_default().push((ap, g));
                            }
                        }
                    }
                }
            }
        }
        ix
    }

    /// The element for a control block, preferring the access point that holds it.
    fn find(map: &ByBlock<'a, 'i>, at: &Where, cb: &str) -> Option<Node<'a, 'i>> {
        let v = map.get(&(at.ied, at.ld_inst, cb))?;
        v.iter()
            .find(|(ap, _)| *ap == at.access_point)
            .or_else(|| v.first())
            .map(|(_, n)| *n)
    }
}

/// Which LN0 is being read: the keys of its Communication entries.
pub(crate) struct Where<'w> {
    /// IED name.
    pub ied: &'w str,
    /// The access point whose server holds the LD.
    pub access_point: &'w str,
    /// LD `inst`.
    pub ld_inst: &'w str,
}

/// What an LN0 configures besides data sets and report control blocks.
#[derive(Default)]
pub(crate) struct Ln0Controls {
    pub gse: Vec<GseControl>,
    pub sv: Vec<SvControl>,
    pub setting: Option<SettingControl>,
}

/// Reads the GSE, SV and setting group control blocks of an LN0; `data_sets` are its data
/// sets (a control block's `datSet` must be one of them).
pub(crate) fn read_ln0(
    cx: &Ctx,
    comm: &CommIndex,
    at: &Where,
    ln0: Node,
    data_sets: &[DataSet],
) -> Result<Ln0Controls, SclError> {
    let mut out = Ln0Controls::default();
    // Control block names share one namespace in LLN0 (IEC 61850-7-2 §15.2.1, §16.2.1): two
    // GoCBs of one name would be one MMS variable.
    let mut names: Vec<String> = Vec::new();
    // A block that cannot be read (a missing attribute, a bad address, a data set LLN0 lacks)
    // is a local defect: it is left out with a warning (docs/scl.md, "Repairs").
    // A SettingControl has no name (its MMS name is always SGCB); a GSE or SV block without
    // its required name is "(unnamed)", as report and log control blocks say.
    let left_out = |n: Node, e| {
        let unnamed = if n.tag_name().name() == "SettingControl" {
            "SGCB"
        } else {
            "(unnamed)"
        };
        cx.repaired(
            e,
            Repair::ControlBlockLeftOut {
                name: n.scl_attr("name").unwrap_or(unnamed).into(),
            },
        )
    };
    for g in kids(ln0, "GSEControl") {
        match gse_control(cx, comm, at, g, data_sets) {
            Ok(c) => {
                dup(cx, g, "GSEControl", &mut names, &c.name)?;
                out.gse.push(c);
            }
            Err(e) => left_out(g, e),
        }
    }
    for s in kids(ln0, "SampledValueControl") {
        match sv_control(cx, comm, at, s, data_sets) {
            Ok(c) => {
                dup(cx, s, "SampledValueControl", &mut names, &c.name)?;
                out.sv.push(c);
            }
            Err(e) => left_out(s, e),
        }
    }
    if let Some(s) = kids(ln0, "SettingControl").next() {
        if let Some(second) = kids(ln0, "SettingControl").nth(1) {
            return Err(cx.err(
                second,
                SclErrorKind::Duplicate {
                    what: "SettingControl",
                    name: "SGCB".into(),
                },
            ));
        }
        match setting_control(cx, s) {
            Ok(c) => out.setting = Some(c),
            Err(e) => left_out(s, e),
        }
    }
    Ok(out)
}

fn dup(
    cx: &Ctx,
    n: Node,
    what: &'static str,
    names: &mut Vec<String>,
    name: &str,
) -> Result<(), SclError> {
    if names.iter().any(|x| x == name) {
        return Err(cx.err(
            n,
            SclErrorKind::Duplicate {
                what,
                name: name.into(),
            },
        ));
    }
    names.push(name.into());
    Ok(())
}

/// `datSet`, which must name a data set of the LN0 when given.
fn data_set(
    cx: &Ctx,
    n: Node,
    name: &str,
    data_sets: &[DataSet],
) -> Result<Option<String>, SclError> {
    match n.scl_attr("datSet").filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(ds) if data_sets.iter().any(|d| d.name == ds) => Ok(Some(ds.into())),
        Some(ds) => Err(cx.err(
            n,
            SclErrorKind::UnknownDataSet {
                control: name.into(),
                data_set: ds.into(),
            },
        )),
    }
}

fn security(cx: &Ctx, n: Node, element: &'static str) -> Result<SecurityEnable, SclError> {
    match n.scl_attr("securityEnable") {
        None | Some("None") => Ok(SecurityEnable::None),
        Some("Signature") => Ok(SecurityEnable::Signature),
        Some("SignatureAndEncryption") => Ok(SecurityEnable::SignatureAndEncryption),
        Some(v) => Err(cx.err(
            n,
            SclErrorKind::BadValue {
                element,
                attribute: "securityEnable",
                value: v.into(),
                why: "expected None, Signature or SignatureAndEncryption",
            },
        )),
    }
}

fn gse_control(
    cx: &Ctx,
    comm: &CommIndex,
    at: &Where,
    g: Node,
    data_sets: &[DataSet],
) -> Result<GseControl, SclError> {
    const E: &str = "GSEControl";
    let name = cx.name(g, E, "name")?.to_string();
    let data_set = data_set(cx, g, &name, data_sets)?;
    let gse_type = match g.scl_attr("type") {
        None | Some("GOOSE") => GseType::Goose,
        Some("GSSE") => GseType::Gsse,
        Some(v) => {
            return Err(cx.err(
                g,
                SclErrorKind::BadValue {
                    element: E,
                    attribute: "type",
                    value: v.into(),
                    why: "expected GOOSE or GSSE",
                },
            ))
        }
    };
    let mut c = GseControl {
        data_set,
        conf_rev: cx.num(g, E, "confRev", 0u32)?,
        app_id: cx.req(g, E, "appID")?.to_string(),
        gse_type,
        fixed_offs: cx.flag(g, E, "fixedOffs", false)?,
        security_enable: security(cx, g, E)?,
        address: None,
        min_time_ms: None,
        max_time_ms: None,
        name,
    };
    if let Some(gse) = CommIndex::find(&comm.gse, at, &c.name) {
        c.address = kids(gse, "Address")
            .next()
            .map(|a| address(cx, a))
            .transpose()?;
        c.min_time_ms = kids(gse, "MinTime")
            .next()
            .map(|t| millis(cx, t, "MinTime"))
            .transpose()?;
        c.max_time_ms = kids(gse, "MaxTime")
            .next()
            .map(|t| millis(cx, t, "MaxTime"))
            .transpose()?;
    }
    Ok(c)
}

fn sv_control(
    cx: &Ctx,
    comm: &CommIndex,
    at: &Where,
    s: Node,
    data_sets: &[DataSet],
) -> Result<SvControl, SclError> {
    const E: &str = "SampledValueControl";
    let name = cx.name(s, E, "name")?.to_string();
    let data_set = data_set(cx, s, &name, data_sets)?;
    // Required attributes: read with req first so that absence is named as such.
    cx.req(s, E, "smpRate")?;
    cx.req(s, E, "nofASDU")?;
    let smp_mod = match s.scl_attr("smpMod") {
        None | Some("SmpPerPeriod") => SmpMod::SmpPerPeriod,
        Some("SmpPerSec") => SmpMod::SmpPerSec,
        Some("SecPerSmp") => SmpMod::SecPerSmp,
        Some(v) => {
            return Err(cx.err(
                s,
                SclErrorKind::BadValue {
                    element: E,
                    attribute: "smpMod",
                    value: v.into(),
                    why: "expected SmpPerPeriod, SmpPerSec or SecPerSmp",
                },
            ))
        }
    };
    let opts = match kids(s, "SmvOpts").next() {
        None => SmvOpts::default(),
        Some(o) => {
            let f = |a, d| cx.flag(o, "SmvOpts", a, d);
            SmvOpts {
                refresh_time: f("refreshTime", false)?,
                sample_synchronized: f("sampleSynchronized", true)?,
                sample_rate: f("sampleRate", false)?,
                data_set: f("dataSet", false)?,
                security: f("security", false)?,
                timestamp: f("timestamp", false)?,
                synch_source_id: f("synchSourceId", false)?,
            }
        }
    };
    let address = match CommIndex::find(&comm.smv, at, &name) {
        Some(smv) => kids(smv, "Address")
            .next()
            .map(|a| address(cx, a))
            .transpose()?,
        None => None,
    };
    Ok(SvControl {
        data_set,
        conf_rev: cx.num(s, E, "confRev", 0u32)?,
        smv_id: cx.req(s, E, "smvID")?.to_string(),
        smp_rate: cx.num(s, E, "smpRate", 0u32)?,
        nof_asdu: cx.num(s, E, "nofASDU", 0u32)?,
        multicast: cx.flag(s, E, "multicast", true)?,
        smp_mod,
        opts,
        security_enable: security(cx, s, E)?,
        address,
        name,
    })
}

fn setting_control(cx: &Ctx, s: Node) -> Result<SettingControl, SclError> {
    const E: &str = "SettingControl";
    cx.req(s, E, "numOfSGs")?;
    let num_of_sgs = cx.num(s, E, "numOfSGs", 1u8)?;
    let act_sg = cx.num(s, E, "actSG", 1u8)?;
    let resv_tms = match s.scl_attr("resvTms") {
        None => None,
        Some(_) => Some(cx.num(s, E, "resvTms", 0u16)?),
    };
    // IEC 61850-7-2 §13.3.2: groups are numbered 1..NumOfSG, and ActSG is one of them.
    if num_of_sgs == 0 {
        return Err(cx.err(
            s,
            SclErrorKind::BadValue {
                element: E,
                attribute: "numOfSGs",
                value: "0".into(),
                why: "at least one setting group",
            },
        ));
    }
    if act_sg == 0 || act_sg > num_of_sgs {
        return Err(cx.err(
            s,
            SclErrorKind::BadValue {
                element: E,
                attribute: "actSG",
                value: act_sg.to_string(),
                why: "not a setting group number 1..numOfSGs",
            },
        ));
    }
    Ok(SettingControl {
        num_of_sgs,
        act_sg,
        resv_tms,
    })
}

/// The text of a `P` element, trimmed.
fn p_text<'a>(p: Node<'a, '_>) -> &'a str {
    p.text().unwrap_or("").trim()
}

/// An `Address`: its `P` elements of the types a GSE/SMV uses; other types (IP, OSI selectors)
/// belong to other kinds of address and are ignored here.
fn address(cx: &Ctx, a: Node) -> Result<CommAddress, SclError> {
    let mut out = CommAddress::default();
    for p in kids(a, "P") {
        let v = p_text(p);
        let bad = |why| {
            cx.err(
                p,
                SclErrorKind::BadValue {
                    element: "P",
                    attribute: "(text)",
                    value: v.into(),
                    why,
                },
            )
        };
        match p.scl_attr("type") {
            Some("MAC-Address") => {
                out.mac = Some(parse_mac(v).ok_or_else(|| {
                    bad("a MAC-Address is six hexadecimal octets joined by '-' (tP_MAC-Address)")
                })?)
            }
            Some("APPID") => {
                out.app_id =
                    Some(hex_digits(v, 4).ok_or_else(|| {
                        bad("an APPID is up to four hexadecimal digits (tP_APPID)")
                    })?)
            }
            Some("VLAN-ID") => {
                out.vlan_id = Some(hex_digits(v, 3).ok_or_else(|| {
                    bad("a VLAN-ID is up to three hexadecimal digits (tP_VLAN-ID)")
                })?)
            }
            Some("VLAN-PRIORITY") => {
                out.vlan_priority = Some(
                    v.parse::<u8>()
                        .ok()
                        .filter(|p| *p <= 7 && v.len() == 1)
                        .ok_or_else(|| bad("a VLAN-PRIORITY is one digit 0..7"))?,
                )
            }
            _ => {}
        }
    }
    Ok(out)
}

/// `01-0C-CD-01-00-01`: six two-digit hexadecimal octets joined by `-`. The schema's pattern
/// asks for capitals; files from tools (libiec61850's examples among them) write lower case,
/// which names the same address, so both are accepted.
pub(crate) fn parse_mac(v: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = v.split('-');
    for o in &mut out {
        let p = parts.next()?;
        if p.len() != 2 {
            return None;
        }
        *o = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// One to `n` hexadecimal digits. The schema's patterns ask for exactly four (APPID) and three
/// (VLAN-ID), but vendors' files write `0`, `1`, `00`, `001` (Ametek TR3000, SISCO/Ed.2 test
/// IEDs, libiec61850's own sv.icd) and libiec61850 reads them as the hexadecimal numbers they
/// are; a value longer than the field or not hexadecimal is refused.
fn hex_digits(v: &str, n: usize) -> Option<u16> {
    if v.is_empty() || v.len() > n || !v.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(v, 16).ok()
}

/// `MinTime`/`MaxTime` (tDurationInMilliSec: a decimal number of milliseconds, `unit="s"`,
/// `multiplier="m"`).
fn millis(cx: &Ctx, t: Node, element: &'static str) -> Result<u32, SclError> {
    let v = t.text().unwrap_or("").trim();
    let ms = v
        .parse::<u32>()
        .ok()
        .or_else(|| {
            v.parse::<f64>()
                .ok()
                .filter(|f| f.is_finite() && *f >= 0.0 && *f <= f64::from(u32::MAX))
                .map(|f| f.round() as u32)
        })
        .ok_or_else(|| {
            cx.err(
                t,
                SclErrorKind::BadValue {
                    element,
                    attribute: "(text)",
                    value: v.into(),
                    why: "not a number of milliseconds",
                },
            )
        })?;
    if let Some(m) = t.scl_attr("multiplier").filter(|m| *m != "m") {
        return Err(cx.err(
            t,
            SclErrorKind::BadValue {
                element,
                attribute: "multiplier",
                value: m.into(),
                why: "the schema fixes it to m (milliseconds)",
            },
        ));
    }
    Ok(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mac_addresses() {
        assert_eq!(
            parse_mac("01-0C-CD-01-00-01"),
            Some([1, 0x0c, 0xcd, 1, 0, 1])
        );
        assert_eq!(
            parse_mac("01-0c-cd-04-00-01"),
            Some([1, 0x0c, 0xcd, 4, 0, 1])
        );
        for bad in [
            "",
            "01-0C-CD-01-00",
            "01-0C-CD-01-00-01-02",
            "010CCD010001",
            "01-0C-CD-01-00-1",
            "01-0C-CD-01-00-0G",
            "01:0C:CD:01:00:01",
        ] {
            assert_eq!(parse_mac(bad), None, "{bad}");
        }
    }

    #[test]
    fn hex_fields() {
        assert_eq!(hex_digits("1000", 4), Some(0x1000));
        assert_eq!(hex_digits("111", 3), Some(0x111));
        assert_eq!(hex_digits("1", 3), Some(1));
        assert_eq!(hex_digits("00", 4), Some(0));
        assert_eq!(hex_digits("", 4), None);
        assert_eq!(hex_digits("1000", 3), None);
        assert_eq!(hex_digits("10000", 4), None);
        assert_eq!(hex_digits("+100", 4), None);
    }

    proptest! {
        /// Any address written in the schema's form reads back as itself.
        #[test]
        fn mac_round_trip(m in any::<[u8; 6]>(), upper in any::<bool>()) {
            let s = m.iter().map(|o| if upper { format!("{o:02X}") } else { format!("{o:02x}") })
                .collect::<Vec<_>>().join("-");
            prop_assert_eq!(parse_mac(&s), Some(m));
        }

        /// Any text: an address or None, never a panic.
        #[test]
        fn mac_any_text(s in ".{0,24}") {
            let _ = parse_mac(&s);
        }
    }
}
