//! Setting-group numbers of an LD's values (`Val sGroup`) against its setting group control
//! block (IEC 61850-7-2 §16.2.2: groups are numbered 1..NumOfSG).

use crate::error::{SclError, SclErrorKind};
use crate::model::{DataNode, LogicalNode};
use crate::parse::Ctx;
use crate::warning::Repair;

/// Every `Val sGroup` of an LD names one of its setting groups: 1..=`numOfSGs` of its LLN0's
/// `SettingControl`. A value of a group beyond it is left out with a warning (the server has
/// no such group to put it in). An LD without a `SettingControl` has no groups to switch; its
/// `sGroup` values are kept but never served.
pub(crate) fn check_group_numbers(cx: &Ctx, lns: &mut [LogicalNode]) {
    fn walk(cx: &Ctx, nodes: &mut [DataNode], max: u8) {
        for n in nodes {
            n.group_values.retain(|g| {
                if g.group <= max {
                    return true;
                }
                cx.repaired(
                    SclError::new(
                        SclErrorKind::BadValue {
                            element: "Val",
                            attribute: "sGroup",
                            value: g.group.to_string(),
                            why: "beyond numOfSGs of the LD's SettingControl",
                        },
                        Some(g.at),
                    ),
                    Repair::GroupValueDropped { group: g.group },
                );
                false
            });
            walk(cx, &mut n.children, max);
        }
    }
    let Some(max) = lns
        .iter()
        .find_map(|l| l.setting_control.as_ref())
        .map(|s| s.num_of_sgs)
    else {
        return;
    };
    for l in lns.iter_mut() {
        walk(cx, &mut l.data_objects, max);
    }
}
