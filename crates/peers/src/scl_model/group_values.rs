//! The values of each setting group (`<Val sGroup="n">`) onto the served model's setting
//! groups: after the SGCB is built (every group starting with the SG values the model holds),
//! each group's own value of every setting served under FC SG is stored in that group, so
//! SelectActiveSG (IEC 61850-7-2 §16.3.2) switches what FC SG reads return and SelectEditSG
//! (§16.3.3) starts the SE buffer with the edited group's values. gander-scl has checked
//! every value against its bType and every group against `numOfSGs` at the `Val`'s line.
//!
//! A setting without a value for some group keeps the plain `Val` (or the type's zero) in
//! that group. An array element's values are not grouped (SCL gives one `Val` per DAI, and a
//! DAI names the whole array). An LD without a `SettingControl` has one set of values: its
//! `sGroup` values are not served (libiec61850's model generator ignores `sGroup` altogether).

use gander_mms::server_model::ServerModel;
use gander_scl::{BasicType, DataNode, Fc, LogicalDevice, NodeKind};

use super::{leaf, served_under, SclModelError};

/// Store every group value of the settings of `lds` in their LD's setting groups.
pub(super) fn add(
    m: &mut ServerModel,
    lds: &[&LogicalDevice],
    path: &str,
) -> Result<(), SclModelError> {
    for ld in lds {
        if !m
            .setting_groups()
            .iter()
            .any(|s| s.config.domain == ld.domain)
        {
            continue;
        }
        for ln in &ld.logical_nodes {
            let mut out = Vec::new();
            for d in &ln.data_objects {
                let r = format!("{}/{}.{}", ld.domain, ln.name, d.name);
                walk(d, &ln.data_objects, &d.name, &r, path, &mut out)?;
            }
            for (item, group, value, line, reference) in out {
                m.set_group_value(&ld.domain, group, &ln.name, &item, value)
                    .map_err(|_| SclModelError::BadGroupValue {
                        path: path.into(),
                        line,
                        reference,
                        group,
                    })?;
            }
        }
    }
    Ok(())
}

/// One group's value to store: the path under `LN$SG`, the group, the value, the `Val`'s line
/// and the attribute's reference (for errors).
type Stored = (String, u8, gander_wire::data::Data, u32, String);

/// Collect the group values of `n` (served under SG) and of its components.
fn walk(
    n: &DataNode,
    siblings: &[DataNode],
    item: &str,
    reference: &str,
    path: &str,
    out: &mut Vec<Stored>,
) -> Result<(), SclModelError> {
    if n.count != 0 || !served_under(n, siblings, Fc::SG) {
        return Ok(());
    }
    match &n.kind {
        NodeKind::Attribute {
            btype: BasicType::Struct,
            ..
        }
        | NodeKind::Object { .. } => {
            for k in &n.children {
                walk(
                    k,
                    &n.children,
                    &format!("{item}${}", k.name),
                    &format!("{reference}.{}", k.name),
                    path,
                    out,
                )?;
            }
        }
        NodeKind::Attribute { btype, .. } => {
            for g in &n.group_values {
                // The same conversion as the node's own value, with the Val's line in errors.
                let one = DataNode {
                    value: Some(g.value.clone()),
                    line: g.at.line,
                    ..n.clone()
                };
                let value = leaf(&one, *btype, reference, path)?.to_data();
                out.push((item.into(), g.group, value, g.at.line, reference.into()));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::build;
    use gander_mms::association::ServerHandler;
    use gander_mms::server_model::ServerModel;
    use gander_mms::service::ObjectName;
    use gander_wire::data::Data;

    const D: &str = "GPROT";

    /// Two groups, actSG 2; the settings as in interop/fixtures/setting_groups.cid, plus a
    /// plain `Val` with only some groups given (multiple_access_points.icd's CBTmms).
    fn model(act_sg: u8) -> ServerModel {
        let text = format!(
            r#"<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL">
  <IED name="G">
    <AccessPoint name="AP1"><Server><Authentication/>
      <LDevice inst="PROT">
        <LN0 lnClass="LLN0" inst="" lnType="LLN0_T"><SettingControl numOfSGs="3" actSG="{act_sg}"/></LN0>
        <LN lnClass="PTOC" inst="1" lnType="PTOC_T">
          <DOI name="StrVal"><SDI name="setMag"><DAI name="f"><Val sGroup="1">1.5</Val><Val sGroup="2">3.0</Val></DAI></SDI></DOI>
          <DOI name="OpDlTmms"><DAI name="setVal"><Val>7</Val><Val sGroup="2">250</Val></DAI></DOI>
        </LN>
      </LDevice>
    </Server></AccessPoint>
  </IED>
  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0"><DO name="Beh" type="INS_T"/></LNodeType>
    <LNodeType id="PTOC_T" lnClass="PTOC"><DO name="StrVal" type="ASG_T"/><DO name="OpDlTmms" type="ING_T"/></LNodeType>
    <DOType id="INS_T" cdc="INS"><DA name="stVal" fc="ST" bType="INT32"/></DOType>
    <DOType id="ASG_T" cdc="ASG"><DA name="setMag" fc="SE" bType="Struct" type="AV_T"/></DOType>
    <DOType id="ING_T" cdc="ING"><DA name="setVal" fc="SG" bType="INT32"/></DOType>
    <DAType id="AV_T"><BDA name="f" bType="FLOAT32"/></DAType>
  </DataTypeTemplates>
</SCL>"#
        );
        let scl = gander_scl::parse(&text).unwrap();
        build(scl.ied(None).unwrap(), None, "test.cid").unwrap()
    }

    fn get(m: &ServerModel, item: &str) -> Data {
        m.value(&ObjectName::domain(D, item)).unwrap()
    }

    fn act(m: &mut ServerModel, g: u64) {
        let sgcb = ObjectName::domain(D, "LLN0$SP$SGCB$ActSG");
        assert_eq!(m.write(1, &sgcb, &Data::Unsigned(g)), Ok(()));
    }

    #[test]
    fn select_active_sg_serves_each_groups_scl_values() {
        let mut m = model(1);
        let f = "PTOC1$SG$StrVal$setMag$f";
        let v = "PTOC1$SG$OpDlTmms$setVal";
        assert_eq!(get(&m, f), Data::FloatingPoint32(1.5));
        assert_eq!(get(&m, v), Data::Integer(7));
        act(&mut m, 2);
        assert_eq!(get(&m, f), Data::FloatingPoint32(3.0));
        assert_eq!(get(&m, v), Data::Integer(250));
        // Group 3 has no sGroup value: the plain Val (7), and the first group's for f (the
        // node's value when the file gives no plain one).
        act(&mut m, 3);
        assert_eq!(get(&m, v), Data::Integer(7));
        assert_eq!(get(&m, f), Data::FloatingPoint32(1.5));
        act(&mut m, 1);
        assert_eq!(get(&m, v), Data::Integer(7));
    }

    #[test]
    fn the_active_group_at_start_is_served_and_edits_start_from_the_group() {
        let mut m = model(2);
        assert_eq!(
            get(&m, "PTOC1$SG$StrVal$setMag$f"),
            Data::FloatingPoint32(3.0)
        );
        assert_eq!(get(&m, "PTOC1$SG$OpDlTmms$setVal"), Data::Integer(250));
        // SelectEditSG 1: the SE buffer holds group 1's value.
        let edit = ObjectName::domain(D, "LLN0$SP$SGCB$EditSG");
        assert_eq!(m.write(1, &edit, &Data::Unsigned(1)), Ok(()));
        assert_eq!(
            get(&m, "PTOC1$SE$StrVal$setMag$f"),
            Data::FloatingPoint32(1.5)
        );
    }
}
