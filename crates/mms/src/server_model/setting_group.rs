//! Setting groups of one logical device: the setting group control block (SGCB) in its LLN0
//! and the values of every group (IEC 61850-7-2 Ed.2 clause 16), mapped as IEC 61850-8-1
//! §8.1.3.4 and §20 map them: the SGCB is the structure `LLN0$SP$SGCB`, the active group's
//! values are the attributes under FC `SG`, the edit buffer the same attributes under FC `SE`,
//! and the services are MMS Writes of SGCB components.
//!
//! The SGCB's components, in the order and with the types libiec61850 1.6 serves (its
//! `mms_mapping.c`, `createSGCB` with ResvTms, its default): NumOfSG unsigned(8), ActSG
//! unsigned(8), EditSG unsigned(8), CnfEdit boolean, LActTm utc-time, ResvTms unsigned(16).
//!
//! Services (7-2 Ed.2 §16.3) and their refusals:
//! - **SelectActiveSG** = write ActSG: 1..=NumOfSG, else object-value-invalid; the group's
//!   stored values become the SG values (a data change for the RCBs whose data sets hold
//!   them) and LActTm is the time of the switch.
//! - **SelectEditSG** = write EditSG: 1..=NumOfSG copies that group's values into the SE
//!   buffer and reserves the SGCB for the writing association for ResvTms seconds; 0 ends the
//!   edit; a value above NumOfSG is object-value-invalid; while another association has a group
//!   selected, temporarily-unavailable.
//! - **GetEditSGValue** = read of an SE attribute: only while a group is selected for
//!   editing, else temporarily-unavailable (as libiec61850); never in an LD without an SGCB.
//! - **SetEditSGValue** = write of an SE attribute: only by the association that selected the
//!   edit group, else temporarily-unavailable (as libiec61850; see
//!   [`ServerModel::check_se_write`]).
//! - **ConfirmEditSGValues** = write CnfEdit TRUE: the SE values become the edited group's
//!   values, and the SG values too when it is the active group; the edit ends (as
//!   libiec61850). Without a selected group, or by another association: object-access-denied;
//!   FALSE is object-value-invalid.
//! - NumOfSG, LActTm and ResvTms are read-only: object-access-denied. A value of another MMS
//!   kind than the component's is type-inconsistent.
//!
//! The edit reservation ends when its association closes or ResvTms seconds after the
//! selection ([`ServerModel::tick`]). Per-group values are kept here (gander serves the
//! groups itself; libiec61850 leaves them to the application's callbacks).

use gander_wire::data::Data;

use super::gocb::check_kind;
use super::{ModelError, ModelNode, ServerModel, SetError};
use crate::association::ConnId;
use crate::model::utc_time;
use crate::service::{DataAccessError, ObjectName, TypeSpec};

/// SGCB component names in IEC 61850-8-1 order.
pub const SGCB_ELEMENTS: [&str; 6] = ["NumOfSG", "ActSG", "EditSG", "CnfEdit", "LActTm", "ResvTms"];

/// The edit reservation libiec61850 1.6 grants, in seconds (`CONFIG_IEC61850_SG_RESVTMS`),
/// used when the SCL gives no `resvTms`.
pub const DEFAULT_RESV_TMS: u16 = 300;

/// How an LD's setting groups are configured (what an SCL `SettingControl` says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SgcbConfig {
    /// MMS domain of the LD.
    pub domain: String,
    /// The logical node holding the SGCB (`LLN0`).
    pub ln: String,
    /// NumOfSG (1..=255).
    pub num_of_sg: u8,
    /// The active group at start (1..=NumOfSG).
    pub act_sg: u8,
    /// How long an edit reservation lasts, seconds.
    pub resv_tms: u16,
}

/// The SGCB state and the values of every group.
#[derive(Debug, Clone)]
pub struct SettingGroups {
    /// Its configuration.
    pub config: SgcbConfig,
    act_sg: u8,
    edit_sg: u8,
    editor: Option<ConnId>,
    l_act_tm: [u8; 8],
    resv_until_ms: u64,
    /// `groups[g - 1]`: for every LN of the domain with an SG component, that component.
    groups: Vec<Vec<(String, ModelNode)>>,
}

impl SettingGroups {
    /// Its MMS item, `LLN0$SP$SGCB`.
    pub fn item(&self) -> String {
        format!("{}$SP$SGCB", self.config.ln)
    }

    /// The active group (ActSG).
    pub fn active(&self) -> u8 {
        self.act_sg
    }

    /// The group being edited (EditSG, 0: none) and by whom.
    pub fn editing(&self) -> (u8, Option<ConnId>) {
        (self.edit_sg, self.editor)
    }

    /// The stored value of SG attribute `ln$SG$path` in group `group` (1-based).
    pub fn group_value(&self, group: u8, ln: &str, path: &str) -> Option<Data> {
        let g = self.groups.get(usize::from(group).checked_sub(1)?)?;
        let (_, node) = g.iter().find(|(n, _)| n == ln)?;
        node.find(path).map(ModelNode::to_data)
    }

    /// The SGCB as clients see it.
    pub fn node(&self) -> ModelNode {
        let u8t = TypeSpec::Unsigned(8);
        let resv = if self.edit_sg == 0 {
            0
        } else {
            self.config.resv_tms
        };
        let leaf = ModelNode::leaf;
        ModelNode::Struct(vec![
            (
                "NumOfSG".into(),
                leaf(u8t.clone(), Data::Unsigned(self.config.num_of_sg.into())),
            ),
            (
                "ActSG".into(),
                leaf(u8t.clone(), Data::Unsigned(self.act_sg.into())),
            ),
            (
                "EditSG".into(),
                leaf(u8t, Data::Unsigned(self.edit_sg.into())),
            ),
            (
                "CnfEdit".into(),
                leaf(TypeSpec::Boolean, Data::Boolean(false)),
            ),
            (
                "LActTm".into(),
                leaf(TypeSpec::UtcTime, Data::UtcTime(self.l_act_tm)),
            ),
            (
                "ResvTms".into(),
                leaf(TypeSpec::Unsigned(16), Data::Unsigned(resv.into())),
            ),
        ])
    }

    fn unselect(&mut self) {
        self.edit_sg = 0;
        self.editor = None;
    }
}

/// Every leaf path of a node (relative, `$`-joined; arrays count as one leaf).
fn leaf_paths(node: &ModelNode) -> Vec<String> {
    node.leaves().into_iter().map(|(p, _)| p).collect()
}

fn group_number(value: &Data, num_of_sg: u8) -> Result<u8, DataAccessError> {
    match value {
        Data::Unsigned(v) => u8::try_from(*v)
            .ok()
            .filter(|g| *g <= num_of_sg)
            .ok_or(DataAccessError::OBJECT_VALUE_INVALID),
        _ => Err(DataAccessError::TYPE_INCONSISTENT),
    }
}

impl ServerModel {
    /// Add the setting groups of a logical device: an SGCB in `config.ln` governing the SG
    /// attributes of every LN of the domain, each group starting with the values the model
    /// holds now (call after the last logical node).
    pub fn add_setting_groups(&mut self, config: SgcbConfig) -> Result<(), ModelError> {
        let bad = |what: String| ModelError::BadControlBlock {
            block: format!("{}/{}$SP$SGCB", config.domain, config.ln),
            what,
        };
        if config.num_of_sg == 0 {
            return Err(bad("NumOfSG must be at least 1".into()));
        }
        if config.act_sg == 0 || config.act_sg > config.num_of_sg {
            return Err(bad(format!(
                "ActSG {} is not a group of 1..={}",
                config.act_sg, config.num_of_sg
            )));
        }
        let d = self
            .domain(&config.domain)
            .ok_or_else(|| ModelError::UnknownDomain(config.domain.clone()))?;
        if !d.lns.iter().any(|(n, _)| *n == config.ln) {
            return Err(bad(format!("no logical node {:?}", config.ln)));
        }
        if self
            .blocks
            .sgcbs
            .iter()
            .any(|s| s.config.domain == config.domain)
        {
            return Err(ModelError::Duplicate {
                domain: config.domain,
                what: "setting group control block",
                name: "SGCB".into(),
            });
        }
        let one: Vec<(String, ModelNode)> = d
            .lns
            .iter()
            .filter_map(|(ln, node)| Some((ln.clone(), node.find("SG")?.clone())))
            .collect();
        self.blocks.sgcbs.push(SettingGroups {
            act_sg: config.act_sg,
            edit_sg: 0,
            editor: None,
            l_act_tm: [0; 8],
            resv_until_ms: 0,
            groups: vec![one; usize::from(config.num_of_sg)],
            config,
        });
        Ok(())
    }

    /// The setting groups of every LD that has them.
    pub fn setting_groups(&self) -> &[SettingGroups] {
        &self.blocks.sgcbs
    }

    /// Set the stored value of SG attribute `ln$SG$path` in `group` of `domain` (an SCL
    /// `Val sGroup="n"`); the active group's value is also the served SG value.
    pub fn set_group_value(
        &mut self,
        domain: &str,
        group: u8,
        ln: &str,
        path: &str,
        value: Data,
    ) -> Result<(), DataAccessError> {
        let sg = self
            .blocks
            .sgcbs
            .iter_mut()
            .find(|s| s.config.domain == domain)
            .ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        let active = sg.act_sg == group;
        let g = usize::from(group)
            .checked_sub(1)
            .and_then(|i| sg.groups.get_mut(i))
            .ok_or(DataAccessError::OBJECT_VALUE_INVALID)?;
        let (_, node) = g
            .iter_mut()
            .find(|(n, _)| n == ln)
            .ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        node.find_mut(path)
            .ok_or(DataAccessError::OBJECT_NON_EXISTENT)?
            .set_value(value.clone())
            .map_err(SetError::data_access_error)?;
        if active {
            self.set_value(
                &ObjectName::domain(domain, format!("{ln}$SG${path}")),
                value,
            )?;
        }
        Ok(())
    }

    /// Whether `conn` may write an SE attribute of `domain` now (SetEditSGValue): only while
    /// it has an edit group selected. Without an SGCB in the LD there is no edit buffer to
    /// confirm: object-access-denied (libiec61850 answers object-non-existent for an object
    /// it lists; gander keeps that code for names it does not serve).
    pub(super) fn check_se_write(&self, conn: ConnId, domain: &str) -> Result<(), DataAccessError> {
        let sg = self
            .blocks
            .sgcbs
            .iter()
            .find(|s| s.config.domain == domain)
            .ok_or(DataAccessError::OBJECT_ACCESS_DENIED)?;
        if sg.edit_sg == 0 || sg.editor != Some(conn) {
            return Err(DataAccessError::TEMPORARILY_UNAVAILABLE);
        }
        Ok(())
    }

    /// Whether `name` may be read now: an SE attribute (GetEditSGValue) only while a group of
    /// its LD is selected for editing (by any association), temporarily-unavailable otherwise,
    /// as libiec61850 answers; outside an edit the buffer holds nothing a client could confirm.
    /// In an LD without an SGCB there is never an edit: object-access-denied, as for a write
    /// (libiec61850 answers object-non-existent for a name it lists). A read of a whole LN is
    /// not refused.
    pub(super) fn check_se_read(&self, name: &ObjectName) -> Result<(), DataAccessError> {
        let Some((dom, item)) = super::split(name) else {
            return Ok(());
        };
        if item.split('$').nth(1) != Some("SE") {
            return Ok(());
        }
        match self.blocks.sgcbs.iter().find(|s| s.config.domain == dom) {
            None => Err(DataAccessError::OBJECT_ACCESS_DENIED),
            Some(sg) if sg.edit_sg == 0 => Err(DataAccessError::TEMPORARILY_UNAVAILABLE),
            Some(_) => Ok(()),
        }
    }

    /// A write of SGCB component `element` of SGCB `i` (rules in the module documentation).
    pub(super) fn write_sgcb(
        &mut self,
        i: usize,
        conn: ConnId,
        element: &str,
        value: &Data,
    ) -> Result<(), DataAccessError> {
        let now = self.blocks.now_ms;
        let sg = &self.blocks.sgcbs[i];
        check_kind(&sg.node(), element, value)?;
        let dom = sg.config.domain.clone();
        let num = sg.config.num_of_sg;
        match element {
            "ActSG" => {
                let g = group_number(value, num)?;
                if g == 0 {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
                if g == sg.act_sg {
                    return Ok(());
                }
                for (ln, node) in sg.groups[usize::from(g) - 1].clone() {
                    self.set_value(
                        &ObjectName::domain(&dom, format!("{ln}$SG")),
                        node.to_data(),
                    )?;
                }
                let sg = &mut self.blocks.sgcbs[i];
                sg.act_sg = g;
                sg.l_act_tm = utc_time(now);
                Ok(())
            }
            "EditSG" => {
                let g = group_number(value, num)?;
                if sg.editor.is_some_and(|c| c != conn) {
                    return Err(DataAccessError::TEMPORARILY_UNAVAILABLE);
                }
                if g == 0 {
                    self.blocks.sgcbs[i].unselect();
                    return Ok(());
                }
                // The edit buffer starts as the group's stored values.
                for (ln, node) in sg.groups[usize::from(g) - 1].clone() {
                    let se = format!("{ln}$SE");
                    let Some(paths) = self
                        .node(&ObjectName::domain(&dom, se.clone()))
                        .map(leaf_paths)
                    else {
                        continue;
                    };
                    for p in paths {
                        if let Some(v) = node.find(&p).map(ModelNode::to_data) {
                            self.set_value(&ObjectName::domain(&dom, format!("{se}${p}")), v)?;
                        }
                    }
                }
                let sg = &mut self.blocks.sgcbs[i];
                sg.edit_sg = g;
                sg.editor = Some(conn);
                sg.resv_until_ms = now.saturating_add(u64::from(sg.config.resv_tms) * 1000);
                Ok(())
            }
            "CnfEdit" => {
                if value != &Data::Boolean(true) {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
                if sg.edit_sg == 0 || sg.editor != Some(conn) {
                    return Err(DataAccessError::OBJECT_ACCESS_DENIED);
                }
                let g = usize::from(sg.edit_sg) - 1;
                let active = sg.edit_sg == sg.act_sg;
                let lns: Vec<String> = sg.groups[g].iter().map(|(n, _)| n.clone()).collect();
                for ln in lns {
                    let Some(se) = self.node(&ObjectName::domain(&dom, format!("{ln}$SE"))) else {
                        continue;
                    };
                    let edited: Vec<(String, Data)> = se
                        .leaves()
                        .into_iter()
                        .map(|(p, n)| (p, n.to_data()))
                        .collect();
                    for (p, v) in edited {
                        if let Some(n) = self.blocks.sgcbs[i].groups[g]
                            .iter_mut()
                            .find(|(n, _)| *n == ln)
                            .and_then(|(_, n)| n.find_mut(&p))
                        {
                            n.set_value(v.clone())
                                .map_err(SetError::data_access_error)?;
                        }
                        if active {
                            self.set_value(&ObjectName::domain(&dom, format!("{ln}$SG${p}")), v)?;
                        }
                    }
                }
                self.blocks.sgcbs[i].unselect();
                Ok(())
            }
            // NumOfSG, LActTm, ResvTms, or the whole SGCB.
            _ => Err(DataAccessError::OBJECT_ACCESS_DENIED),
        }
    }

    /// End edit reservations whose time is up at `now_ms`.
    pub(super) fn expire_setting_group_edits(&mut self, now_ms: u64) {
        for sg in &mut self.blocks.sgcbs {
            if sg.edit_sg != 0 && now_ms >= sg.resv_until_ms {
                sg.unselect();
            }
        }
    }

    /// The association closed: its edit reservations end.
    pub(super) fn setting_groups_closed(&mut self, conn: ConnId) {
        for sg in &mut self.blocks.sgcbs {
            if sg.editor == Some(conn) {
                sg.unselect();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::association::ServerHandler;
    use crate::bit_string::BitString;
    use crate::report::trg_ops;
    use crate::server_model::RcbConfig;

    const D: &str = "DEMOPROT";
    const F32: TypeSpec = TypeSpec::FloatingPoint {
        format_width: 32,
        exponent_width: 8,
    };

    fn s(c: Vec<(&str, ModelNode)>) -> ModelNode {
        ModelNode::Struct(c.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
    }

    fn setting(v: f32) -> ModelNode {
        s(vec![(
            "StrVal",
            s(vec![(
                "setMag",
                s(vec![("f", ModelNode::leaf(F32, Data::FloatingPoint32(v)))]),
            )]),
        )])
    }

    /// LLN0 and PTOC1 whose StrVal is a setting (SG and its SE buffer), a data set holding the
    /// SG value and an RCB on it; two setting groups, group 1 active.
    fn model() -> ServerModel {
        let mut m = ServerModel::new("gander", "test", "1");
        m.add_domain(D).unwrap();
        let st = s(vec![(
            "Mod",
            s(vec![(
                "stVal",
                ModelNode::leaf(TypeSpec::Integer(8), Data::Integer(1)),
            )]),
        )]);
        m.add_logical_node(D, "LLN0", s(vec![("ST", st)])).unwrap();
        m.add_logical_node(
            D,
            "PTOC1",
            s(vec![("SG", setting(1.5)), ("SE", setting(1.5))]),
        )
        .unwrap();
        m.add_data_set(
            D,
            "LLN0$Set",
            vec![ObjectName::domain(D, "PTOC1$SG$StrVal")],
        )
        .unwrap();
        m.add_rcb(RcbConfig {
            domain: D.into(),
            item: "LLN0$RP$urcb01".into(),
            buffered: false,
            rpt_id: "r".into(),
            data_set: "LLN0$Set".into(),
            conf_rev: 1,
            opt_flds: BitString::new(10),
            trg_ops: BitString::with_bits(6, &[trg_ops::DCHG]),
            buf_tm: 0,
            intg_pd: 0,
            resv_tms: false,
        })
        .unwrap();
        m.add_setting_groups(SgcbConfig {
            domain: D.into(),
            ln: "LLN0".into(),
            num_of_sg: 2,
            act_sg: 1,
            resv_tms: 60,
        })
        .unwrap();
        m.tick(1_700_000_000_000);
        m
    }

    fn name(item: &str) -> ObjectName {
        ObjectName::domain(D, item)
    }

    fn w(m: &mut ServerModel, conn: ConnId, item: &str, v: Data) -> Result<(), DataAccessError> {
        m.write(conn, &name(item), &v)
    }

    fn f(m: &ServerModel, item: &str) -> Data {
        m.value(&name(item)).unwrap()
    }

    const SG: &str = "PTOC1$SG$StrVal$setMag$f";
    const SE: &str = "PTOC1$SE$StrVal$setMag$f";

    #[test]
    fn sgcb_is_served_first_in_sp_with_libiec61850_types() {
        let mut m = model();
        let names = ServerModel::name_list(
            &m,
            crate::service::ObjectClass::NAMED_VARIABLE,
            &crate::service::ObjectScope::Domain(D.into()),
        )
        .unwrap();
        for e in SGCB_ELEMENTS {
            assert!(names.contains(&format!("LLN0$SP$SGCB${e}")), "{e}");
        }
        let ty = m
            .variable_access_attributes(1, &name("LLN0$SP$SGCB"))
            .unwrap()
            .unwrap()
            .type_spec;
        let TypeSpec::Structure { components, .. } = ty else {
            panic!()
        };
        let got: Vec<(String, TypeSpec)> = components
            .into_iter()
            .map(|c| (c.name.unwrap_or_default(), c.ty))
            .collect();
        let u8t = TypeSpec::Unsigned(8);
        assert_eq!(
            got,
            [
                ("NumOfSG".to_string(), u8t.clone()),
                ("ActSG".into(), u8t.clone()),
                ("EditSG".into(), u8t),
                ("CnfEdit".into(), TypeSpec::Boolean),
                ("LActTm".into(), TypeSpec::UtcTime),
                ("ResvTms".into(), TypeSpec::Unsigned(16)),
            ]
        );
        assert_eq!(f(&m, "LLN0$SP$SGCB$NumOfSG"), Data::Unsigned(2));
        assert_eq!(f(&m, "LLN0$SP$SGCB$ActSG"), Data::Unsigned(1));
        assert_eq!(f(&m, "LLN0$SP$SGCB$ResvTms"), Data::Unsigned(0));
    }

    #[test]
    fn edit_confirm_and_activate_a_group() {
        let mut m = model();
        // Edit group 2 (not active): the SG value does not change on confirm.
        assert_eq!(
            w(&mut m, 1, "LLN0$SP$SGCB$EditSG", Data::Unsigned(2)),
            Ok(())
        );
        assert_eq!(f(&m, "LLN0$SP$SGCB$EditSG"), Data::Unsigned(2));
        assert_eq!(f(&m, "LLN0$SP$SGCB$ResvTms"), Data::Unsigned(60));
        assert_eq!(w(&mut m, 1, SE, Data::FloatingPoint32(7.0)), Ok(()));
        assert_eq!(
            w(&mut m, 1, "LLN0$SP$SGCB$CnfEdit", Data::Boolean(true)),
            Ok(())
        );
        assert_eq!(f(&m, "LLN0$SP$SGCB$EditSG"), Data::Unsigned(0));
        assert_eq!(f(&m, SG), Data::FloatingPoint32(1.5));
        let sgs = &m.setting_groups()[0];
        assert_eq!(
            sgs.group_value(2, "PTOC1", "StrVal$setMag$f"),
            Some(Data::FloatingPoint32(7.0))
        );
        assert_eq!(
            sgs.group_value(1, "PTOC1", "StrVal$setMag$f"),
            Some(Data::FloatingPoint32(1.5))
        );
        // Activate group 2: its values are served under SG, LActTm is the request's time,
        // and the RCB on the SG value sees a data change.
        enable(&mut m, 9);
        m.tick(1_700_000_005_000);
        assert_eq!(
            w(&mut m, 2, "LLN0$SP$SGCB$ActSG", Data::Unsigned(2)),
            Ok(())
        );
        assert_eq!(f(&m, SG), Data::FloatingPoint32(7.0));
        assert_eq!(f(&m, "LLN0$SP$SGCB$ActSG"), Data::Unsigned(2));
        assert_eq!(
            f(&m, "LLN0$SP$SGCB$LActTm"),
            Data::UtcTime(utc_time(1_700_000_005_000))
        );
        assert_eq!(m.due_reports(9, 1_700_000_005_000).len(), 1);
        // Back to group 1.
        assert_eq!(
            w(&mut m, 2, "LLN0$SP$SGCB$ActSG", Data::Unsigned(1)),
            Ok(())
        );
        assert_eq!(f(&m, SG), Data::FloatingPoint32(1.5));
    }

    fn enable(m: &mut ServerModel, conn: ConnId) {
        assert_eq!(
            w(m, conn, "LLN0$RP$urcb01$RptEna", Data::Boolean(true)),
            Ok(())
        );
    }

    #[test]
    fn confirming_the_active_group_changes_the_served_values() {
        let mut m = model();
        assert_eq!(
            w(&mut m, 1, "LLN0$SP$SGCB$EditSG", Data::Unsigned(1)),
            Ok(())
        );
        assert_eq!(w(&mut m, 1, SE, Data::FloatingPoint32(3.25)), Ok(()));
        // Not yet confirmed: the active value is unchanged.
        assert_eq!(f(&m, SG), Data::FloatingPoint32(1.5));
        assert_eq!(
            w(&mut m, 1, "LLN0$SP$SGCB$CnfEdit", Data::Boolean(true)),
            Ok(())
        );
        assert_eq!(f(&m, SG), Data::FloatingPoint32(3.25));
        // Selecting the group again loads its stored values into SE.
        assert_eq!(
            w(&mut m, 1, "LLN0$SP$SGCB$EditSG", Data::Unsigned(2)),
            Ok(())
        );
        assert_eq!(f(&m, SE), Data::FloatingPoint32(1.5));
        assert_eq!(
            w(&mut m, 1, "LLN0$SP$SGCB$EditSG", Data::Unsigned(1)),
            Ok(())
        );
        assert_eq!(f(&m, SE), Data::FloatingPoint32(3.25));
    }

    #[test]
    fn refusals() {
        let mut m = model();
        let sgcb = |e: &str| format!("LLN0$SP$SGCB${e}");
        let e = |code| Err::<(), _>(code);
        // Group numbers outside 1..=NumOfSG, and wrong kinds.
        assert_eq!(
            w(&mut m, 1, &sgcb("ActSG"), Data::Unsigned(3)),
            e(DataAccessError::OBJECT_VALUE_INVALID)
        );
        assert_eq!(
            w(&mut m, 1, &sgcb("ActSG"), Data::Unsigned(0)),
            e(DataAccessError::OBJECT_VALUE_INVALID)
        );
        assert_eq!(
            w(&mut m, 1, &sgcb("ActSG"), Data::Unsigned(300)),
            e(DataAccessError::OBJECT_VALUE_INVALID)
        );
        assert_eq!(
            w(&mut m, 1, &sgcb("ActSG"), Data::Integer(2)),
            e(DataAccessError::TYPE_INCONSISTENT)
        );
        assert_eq!(
            w(&mut m, 1, &sgcb("EditSG"), Data::Unsigned(3)),
            e(DataAccessError::OBJECT_VALUE_INVALID)
        );
        // Read-only components and the whole block.
        for (c, v) in [
            ("NumOfSG", Data::Unsigned(4)),
            ("LActTm", Data::UtcTime([0; 8])),
            ("ResvTms", Data::Unsigned(4)),
        ] {
            assert_eq!(
                w(&mut m, 1, &sgcb(c), v),
                e(DataAccessError::OBJECT_ACCESS_DENIED),
                "{c}"
            );
        }
        assert_eq!(
            w(&mut m, 1, &sgcb("Nope"), Data::Boolean(true)),
            e(DataAccessError::OBJECT_NON_EXISTENT)
        );
        // GetEditSGValue, SetEditSGValue and ConfirmEditSGValues without a selected group.
        assert_eq!(
            m.read(1, &name(SE)),
            crate::service::AccessResult::Failure(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert!(matches!(
            m.read(1, &name("PTOC1")),
            crate::service::AccessResult::Success(_)
        ));
        assert_eq!(
            w(&mut m, 1, SE, Data::FloatingPoint32(2.0)),
            e(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(
            w(&mut m, 1, &sgcb("CnfEdit"), Data::Boolean(true)),
            e(DataAccessError::OBJECT_ACCESS_DENIED)
        );
        // Another association's edit: its SE, EditSG and CnfEdit are refused.
        assert_eq!(w(&mut m, 1, &sgcb("EditSG"), Data::Unsigned(2)), Ok(()));
        // Any association may read the edit buffer while a group is selected.
        assert_eq!(
            m.read(2, &name(SE)),
            crate::service::AccessResult::Success(Data::FloatingPoint32(1.5))
        );
        assert_eq!(
            w(&mut m, 2, SE, Data::FloatingPoint32(2.0)),
            e(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(
            w(&mut m, 2, &sgcb("EditSG"), Data::Unsigned(1)),
            e(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(
            w(&mut m, 2, &sgcb("CnfEdit"), Data::Boolean(true)),
            e(DataAccessError::OBJECT_ACCESS_DENIED)
        );
        assert_eq!(
            w(&mut m, 1, &sgcb("CnfEdit"), Data::Boolean(false)),
            e(DataAccessError::OBJECT_VALUE_INVALID)
        );
        // SG values are the device's: never written directly.
        assert_eq!(
            w(&mut m, 1, SG, Data::FloatingPoint32(2.0)),
            e(DataAccessError::OBJECT_ACCESS_DENIED)
        );
        // A wrong kind in SE is type-inconsistent, as for any attribute.
        assert_eq!(
            w(&mut m, 1, SE, Data::Integer(2)),
            e(DataAccessError::TYPE_INCONSISTENT)
        );
    }

    #[test]
    fn edit_reservation_ends_with_the_association_or_resv_tms() {
        let mut m = model();
        let edit = "LLN0$SP$SGCB$EditSG";
        assert_eq!(w(&mut m, 1, edit, Data::Unsigned(2)), Ok(()));
        m.connection_closed(2);
        assert_eq!(m.setting_groups()[0].editing(), (2, Some(1)));
        m.connection_closed(1);
        assert_eq!(m.setting_groups()[0].editing(), (0, None));
        assert_eq!(w(&mut m, 2, edit, Data::Unsigned(1)), Ok(()));
        m.tick(1_700_000_059_999);
        assert_eq!(m.setting_groups()[0].editing(), (1, Some(2)));
        m.tick(1_700_000_060_000);
        assert_eq!(m.setting_groups()[0].editing(), (0, None));
        assert_eq!(f(&m, "LLN0$SP$SGCB$ResvTms"), Data::Unsigned(0));
        // Unselecting (EditSG 0) is the editor's or anyone's when free.
        assert_eq!(w(&mut m, 1, edit, Data::Unsigned(1)), Ok(()));
        assert_eq!(w(&mut m, 1, edit, Data::Unsigned(0)), Ok(()));
        assert_eq!(w(&mut m, 2, edit, Data::Unsigned(0)), Ok(()));
    }

    #[test]
    fn bad_configurations_are_refused() {
        let mut m = model();
        let cfg = |n, a| SgcbConfig {
            domain: D.into(),
            ln: "LLN0".into(),
            num_of_sg: n,
            act_sg: a,
            resv_tms: 1,
        };
        assert!(matches!(
            m.add_setting_groups(cfg(2, 1)),
            Err(ModelError::Duplicate { .. })
        ));
        for (n, a) in [(0, 0), (2, 3), (2, 0)] {
            assert!(matches!(
                m.add_setting_groups(cfg(n, a)),
                Err(ModelError::BadControlBlock { .. })
            ));
        }
        assert!(matches!(
            m.add_setting_groups(SgcbConfig {
                ln: "LLN9".into(),
                ..cfg(1, 1)
            }),
            Err(ModelError::BadControlBlock { .. })
        ));
        // SE without an SGCB in the LD: no edit buffer to confirm.
        let mut bare = ServerModel::new("g", "t", "1");
        bare.add_domain(D).unwrap();
        bare.add_logical_node(D, "PTOC1", s(vec![("SE", setting(1.0))]))
            .unwrap();
        assert_eq!(
            w(&mut bare, 1, SE, Data::FloatingPoint32(2.0)),
            Err(DataAccessError::OBJECT_ACCESS_DENIED)
        );
        assert_eq!(
            bare.read(1, &name(SE)),
            crate::service::AccessResult::Failure(DataAccessError::OBJECT_ACCESS_DENIED)
        );
    }

    #[test]
    fn group_values_from_the_configuration() {
        let mut m = model();
        assert_eq!(
            m.set_group_value(D, 2, "PTOC1", "StrVal$setMag$f", Data::FloatingPoint32(9.0)),
            Ok(())
        );
        assert_eq!(f(&m, SG), Data::FloatingPoint32(1.5));
        assert_eq!(
            m.set_group_value(D, 1, "PTOC1", "StrVal$setMag$f", Data::FloatingPoint32(4.0)),
            Ok(())
        );
        assert_eq!(f(&m, SG), Data::FloatingPoint32(4.0));
        assert_eq!(
            m.set_group_value(D, 3, "PTOC1", "StrVal$setMag$f", Data::FloatingPoint32(4.0)),
            Err(DataAccessError::OBJECT_VALUE_INVALID)
        );
        assert_eq!(
            m.set_group_value(D, 1, "PTOC1", "StrVal$setMag$f", Data::Boolean(true)),
            Err(DataAccessError::TYPE_INCONSISTENT)
        );
        assert_eq!(
            w(&mut m, 1, "LLN0$SP$SGCB$ActSG", Data::Unsigned(2)),
            Ok(())
        );
        assert_eq!(f(&m, SG), Data::FloatingPoint32(9.0));
    }

    /// One step of a client (or the clock) against the SGCB.
    #[derive(Debug, Clone)]
    enum Op {
        Act(ConnId, u64),
        Edit(ConnId, u64),
        Se(ConnId, f32),
        Cnf(ConnId, bool),
        Tick(u64),
        Close(ConnId),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let conn = 1u64..4;
        prop_oneof![
            (conn.clone(), 0u64..4).prop_map(|(c, g)| Op::Act(c, g)),
            (conn.clone(), 0u64..4).prop_map(|(c, g)| Op::Edit(c, g)),
            (conn.clone(), -10i16..10).prop_map(|(c, v)| Op::Se(c, f32::from(v))),
            (conn.clone(), any::<bool>()).prop_map(|(c, b)| Op::Cnf(c, b)),
            (0u64..90_000).prop_map(Op::Tick),
            conn.prop_map(Op::Close),
        ]
    }

    proptest::proptest! {
        /// Any sequence of services keeps the SGCB consistent with a plain account of clause
        /// 16: the served SG value is the active group's confirmed value, only the selecting
        /// association edits, a confirm stores the SE value in the edited group.
        #[test]
        fn services_follow_clause_16(ops in proptest::collection::vec(op(), 0..60)) {
            let mut m = model();
            let mut now = 1_700_000_000_000u64;
            let (mut act, mut edit, mut editor) = (1u8, 0u8, None::<ConnId>);
            let mut until = 0u64;
            let mut groups = [1.5f32, 1.5];
            let mut se = 1.5f32;
            for o in ops {
                match o {
                    Op::Act(c, g) => {
                        let r = w(&mut m, c, "LLN0$SP$SGCB$ActSG", Data::Unsigned(g));
                        proptest::prop_assert_eq!(r.is_ok(), (1..=2).contains(&g));
                        if r.is_ok() {
                            act = g as u8;
                        }
                    }
                    Op::Edit(c, g) => {
                        let r = w(&mut m, c, "LLN0$SP$SGCB$EditSG", Data::Unsigned(g));
                        let ok = g <= 2 && editor.is_none_or(|e| e == c);
                        proptest::prop_assert_eq!(r.is_ok(), ok);
                        if ok && g == 0 {
                            (edit, editor) = (0, None);
                        } else if ok {
                            (edit, editor) = (g as u8, Some(c));
                            se = groups[usize::from(edit) - 1];
                            until = now + 60_000;
                        }
                    }
                    Op::Se(c, v) => {
                        let r = w(&mut m, c, SE, Data::FloatingPoint32(v));
                        let ok = edit != 0 && editor == Some(c);
                        proptest::prop_assert_eq!(r.is_ok(), ok);
                        if ok {
                            se = v;
                        }
                    }
                    Op::Cnf(c, b) => {
                        let r = w(&mut m, c, "LLN0$SP$SGCB$CnfEdit", Data::Boolean(b));
                        let ok = b && edit != 0 && editor == Some(c);
                        proptest::prop_assert_eq!(r.is_ok(), ok);
                        if ok {
                            groups[usize::from(edit) - 1] = se;
                            (edit, editor) = (0, None);
                        }
                    }
                    Op::Tick(d) => {
                        now += d;
                        m.tick(now);
                        if edit != 0 && now >= until {
                            (edit, editor) = (0, None);
                        }
                    }
                    Op::Close(c) => {
                        m.connection_closed(c);
                        if editor == Some(c) {
                            (edit, editor) = (0, None);
                        }
                    }
                }
                proptest::prop_assert_eq!(f(&m, "LLN0$SP$SGCB$ActSG"), Data::Unsigned(act.into()));
                proptest::prop_assert_eq!(f(&m, "LLN0$SP$SGCB$EditSG"), Data::Unsigned(edit.into()));
                proptest::prop_assert_eq!(m.setting_groups()[0].editing(), (edit, editor));
                proptest::prop_assert_eq!(
                    f(&m, SG),
                    Data::FloatingPoint32(groups[usize::from(act) - 1])
                );
                if edit != 0 {
                    proptest::prop_assert_eq!(f(&m, SE), Data::FloatingPoint32(se));
                }
            }
        }
    }
}
