//! `ReportControl` (IEC 61850-6 §9.3.8): the configured report control blocks, with the
//! schema's defaults (buffered false, bufTime 0, indexed true, RptEnabled max 1, TrgOps gi
//! true) and its rules (`confRev` required; a buffered block with `indexed = false` only with
//! max 1; an unbuffered one with max > 1 has one instance per client association, IEC
//! TISSUE 1771).
//!
//! A block that breaks a rule is a local defect (docs/scl.md, "Repairs"): a buffered,
//! unindexed block with max > 1 (the IOP 2019 SED's `<RptEnabled max="7">`) is served as one
//! instance; one that cannot be read or names a data set its LN lacks is left out. Two blocks
//! of one name in an LN refuse the IED: they would be one MMS name.

use crate::error::{SclError, SclErrorKind};
use crate::model::{DataSet, OptFields, ReportControl, TrgOps};
use crate::parse::{kids, Ctx};
use crate::warning::Repair;
use crate::xml::SclAttr;
use roxmltree::Node;

/// The report control blocks of `ln`, whose data sets are `data_sets`.
pub(crate) fn read_all(
    cx: &Ctx,
    ln: Node,
    data_sets: &[DataSet],
) -> Result<Vec<ReportControl>, SclError> {
    let mut out: Vec<ReportControl> = Vec::new();
    for rc in kids(ln, "ReportControl") {
        let left_out = |e| {
            cx.repaired(
                e,
                Repair::ControlBlockLeftOut {
                    name: rc.scl_attr("name").unwrap_or("(unnamed)").into(),
                },
            )
        };
        let r = match read(cx, rc) {
            Ok(r) => r,
            Err(e) => {
                left_out(e);
                continue;
            }
        };
        if out.iter().any(|x| x.name == r.name) {
            return Err(cx.err(
                rc,
                SclErrorKind::Duplicate {
                    what: "ReportControl",
                    name: r.name,
                },
            ));
        }
        if let Some(ds) = &r.data_set {
            if !data_sets.iter().any(|d| &d.name == ds) {
                left_out(cx.err(
                    rc,
                    SclErrorKind::UnknownDataSet {
                        control: r.name.clone(),
                        data_set: ds.clone(),
                    },
                ));
                continue;
            }
        }
        out.push(r);
    }
    Ok(out)
}

/// The first SCL-namespace child element named `tag`.
fn child<'a, 'i>(n: Node<'a, 'i>, tag: &str) -> Option<Node<'a, 'i>> {
    n.children()
        .find(|c| c.is_element() && c.tag_name().name() == tag)
}

pub(crate) fn read(cx: &Ctx, rc: Node) -> Result<ReportControl, SclError> {
    const E: &str = "ReportControl";
    let name = cx.name(rc, E, "name")?.to_string();
    let rpt_id = rc
        .scl_attr("rptID")
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let data_set = rc
        .scl_attr("datSet")
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    cx.req(rc, E, "confRev")?;
    let conf_rev = cx.num(rc, E, "confRev", 0u32)?;
    let buffered = cx.flag(rc, E, "buffered", false)?;
    let buf_time = cx.num(rc, E, "bufTime", 0u32)?;
    let intg_pd = cx.num(rc, E, "intgPd", 0u32)?;
    let indexed = cx.flag(rc, E, "indexed", true)?;
    let (mut max, at) = match child(rc, "RptEnabled") {
        Some(r) => (cx.num(r, "RptEnabled", "max", 1u16)?, r),
        None => (1, rc),
    };
    if max == 0 || max > 99 {
        return Err(cx.err(
            at,
            SclErrorKind::BadValue {
                element: "RptEnabled",
                attribute: "max",
                value: max.to_string(),
                why: "instances are numbered 01..99",
            },
        ));
    }
    // IEC TISSUE 1771: an unindexed URCB with max > 1 is one name whose instances are given
    // one per client association (each client sees its own `LLN0$RP$name`). A BRCB keeps its
    // buffer across associations, so it cannot be per association: unindexed, only one.
    if !indexed && max != 1 && buffered {
        cx.repaired(
            cx.err(
                at,
                SclErrorKind::BadValue {
                    element: "RptEnabled",
                    attribute: "max",
                    value: max.to_string(),
                    why: "a buffered control block with indexed=\"false\" has a single instance (only an unbuffered one may have one per association, IEC TISSUE 1771)",
                },
            ),
            Repair::SingleInstance,
        );
        max = 1;
    }
    let trg_ops = match child(rc, "TrgOps") {
        None => TrgOps {
            gi: true,
            ..Default::default()
        },
        Some(t) => TrgOps {
            dchg: cx.flag(t, "TrgOps", "dchg", false)?,
            qchg: cx.flag(t, "TrgOps", "qchg", false)?,
            dupd: cx.flag(t, "TrgOps", "dupd", false)?,
            period: cx.flag(t, "TrgOps", "period", false)?,
            gi: cx.flag(t, "TrgOps", "gi", true)?,
        },
    };
    let opt_fields = match child(rc, "OptFields") {
        None => OptFields::default(),
        Some(o) => {
            let f = |a| cx.flag(o, "OptFields", a, false);
            OptFields {
                seq_num: f("seqNum")?,
                time_stamp: f("timeStamp")?,
                data_set: f("dataSet")?,
                reason_code: f("reasonCode")?,
                data_ref: f("dataRef")?,
                entry_id: f("entryID")?,
                config_ref: f("configRef")?,
                buf_ovfl: f("bufOvfl")?,
                segmentation: f("segmentation")?,
            }
        }
    };
    Ok(ReportControl {
        name,
        rpt_id,
        data_set,
        conf_rev,
        buffered,
        buf_time,
        intg_pd,
        indexed,
        max,
        trg_ops,
        opt_fields,
    })
}
