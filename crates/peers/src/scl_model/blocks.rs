//! The control blocks of an LN0 besides report control blocks, onto the server model: a
//! `SettingControl` becomes the LD's setting groups (`LLN0$SP$SGCB`), a `GSEControl` a GoCB
//! (`LLN0$GO$name`), a `SampledValueControl` an MSVCB or USVCB (`LLN0$MS$name`,
//! `LLN0$US$name`), a `LogControl` of any LN an LCB (`LN$LG$name`) and a named `Log` an MMS
//! journal, with the values libiec61850 1.6 serves for the same file where the SCL
//! leaves one out (its model generator and `stack_config.h`): DstAddress 01-0C-CD-01-00-01,
//! priority 4, VLAN 0, APPID 0x1000; GoCB MinTime 500 ms and MaxTime 5000 ms; a reservation
//! time of 300 s for a setting group edit.

use gander_mms::bit_string::BitString;
use gander_mms::report::trg_ops;
use gander_mms::server_model::{
    sv_opt_flds, DstAddress, GocbConfig, LcbConfig, ServerModel, SgcbConfig, SvcbConfig,
    DEFAULT_RESV_TMS,
};
use gander_scl::{CommAddress, LogicalDevice};

use super::SclModelError;

/// GoCB MinTime when the GSE gives none (libiec61850's CONFIG_GOOSE_EVENT_RETRANSMISSION_INTERVAL).
const DEFAULT_MIN_TIME_MS: u32 = 500;
/// GoCB MaxTime when the GSE gives none (libiec61850's
/// CONFIG_GOOSE_STABLE_STATE_TRANSMISSION_INTERVAL).
const DEFAULT_MAX_TIME_MS: u32 = 5000;

fn dst(a: Option<&CommAddress>) -> DstAddress {
    let d = DstAddress::LIBIEC61850_DEFAULT;
    let Some(a) = a else { return d };
    DstAddress {
        addr: a.mac.unwrap_or(d.addr),
        priority: a.vlan_priority.unwrap_or(d.priority),
        vid: a.vlan_id.unwrap_or(d.vid),
        appid: a.app_id.unwrap_or(d.appid),
    }
}

/// Add the setting groups, GoCBs, SVCBs, LCBs and logs of every LN of `lds` (after the logical nodes and
/// data sets; the setting groups start with the SG values the model holds then).
pub(super) fn add(
    m: &mut ServerModel,
    lds: &[&LogicalDevice],
    path: &str,
) -> Result<(), SclModelError> {
    let model_err = |error| SclModelError::Model {
        path: path.into(),
        error,
    };
    for ld in lds {
        for ln in &ld.logical_nodes {
            let data_set = |d: &Option<String>| {
                d.as_ref()
                    .map(|d| format!("{}${d}", ln.name))
                    .unwrap_or_default()
            };
            for g in &ln.gse_controls {
                m.add_gocb(GocbConfig {
                    domain: ld.domain.clone(),
                    ln: ln.name.clone(),
                    name: g.name.clone(),
                    go_id: g.app_id.clone(),
                    data_set: data_set(&g.data_set),
                    conf_rev: g.conf_rev,
                    dst: dst(g.address.as_ref()),
                    min_time: g.min_time_ms.unwrap_or(DEFAULT_MIN_TIME_MS),
                    max_time: g.max_time_ms.unwrap_or(DEFAULT_MAX_TIME_MS),
                    fixed_offs: g.fixed_offs,
                })
                .map_err(model_err)?;
            }
            for s in &ln.sv_controls {
                let o = s.opts;
                let on: Vec<usize> = [
                    (o.refresh_time, sv_opt_flds::REFRESH_TIME),
                    (o.sample_synchronized, sv_opt_flds::SAMPLE_SYNCHRONIZED),
                    (o.sample_rate, sv_opt_flds::SAMPLE_RATE),
                    (o.data_set, sv_opt_flds::DATA_SET),
                    (o.security, sv_opt_flds::SECURITY),
                ]
                .into_iter()
                .filter_map(|(b, i)| b.then_some(i))
                .collect();
                m.add_svcb(SvcbConfig {
                    domain: ld.domain.clone(),
                    ln: ln.name.clone(),
                    name: s.name.clone(),
                    unicast: !s.multicast,
                    sv_id: s.smv_id.clone(),
                    data_set: data_set(&s.data_set),
                    conf_rev: s.conf_rev,
                    smp_rate: s.smp_rate,
                    opt_flds: BitString::with_bits(sv_opt_flds::LEN, &on),
                    smp_mod: s.smp_mod.ord(),
                    dst: dst(s.address.as_ref()),
                    no_asdu: s.nof_asdu,
                })
                .map_err(model_err)?;
            }
            for l in &ln.logs {
                m.add_log(&ld.domain, &ln.name, l).map_err(model_err)?;
            }
            for lc in &ln.log_controls {
                let t = lc.trg_ops;
                let on: Vec<usize> = [
                    (t.dchg, trg_ops::DCHG),
                    (t.qchg, trg_ops::QCHG),
                    (t.dupd, trg_ops::DUPD),
                    (t.period, trg_ops::INTEGRITY),
                ]
                .into_iter()
                .filter_map(|(b, i)| b.then_some(i))
                .collect();
                m.add_lcb(LcbConfig {
                    domain: ld.domain.clone(),
                    ln: ln.name.clone(),
                    name: lc.name.clone(),
                    log_ena: lc.log_ena,
                    log_ref: lc.log_ref.clone(),
                    data_set: data_set(&lc.data_set),
                    trg_ops: BitString::with_bits(trg_ops::LEN, &on),
                    intg_pd: lc.intg_pd,
                })
                .map_err(model_err)?;
            }
            if let Some(sc) = &ln.setting_control {
                m.add_setting_groups(SgcbConfig {
                    domain: ld.domain.clone(),
                    ln: ln.name.clone(),
                    num_of_sg: sc.num_of_sgs,
                    act_sg: sc.act_sg,
                    resv_tms: sc.resv_tms.unwrap_or(DEFAULT_RESV_TMS),
                })
                .map_err(model_err)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::load;
    use gander_mms::association::ServerHandler;
    use gander_mms::server_model::ServerModel;
    use gander_mms::service::{ObjectClass, ObjectName, ObjectScope};
    use gander_wire::data::Data;
    use std::path::Path;

    const D: &str = "SGB1PROT";

    fn fixture() -> ServerModel {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/settings_goose_sv.cid");
        load(&p, None, None).unwrap()
    }

    fn names(m: &mut ServerModel) -> Vec<String> {
        m.name_list(
            1,
            ObjectClass::NAMED_VARIABLE,
            &ObjectScope::Domain(D.into()),
        )
        .unwrap()
        .unwrap()
    }

    fn get(m: &ServerModel, item: &str) -> Data {
        m.value(&ObjectName::domain(D, item))
            .unwrap_or_else(|| panic!("{item}"))
    }

    /// The settings: SE attributes also under SG (libiec61850's rule), the SG-only one only
    /// under SG, and the SGCB from the SettingControl.
    #[test]
    fn se_settings_are_served_as_sg_and_the_sgcb_from_setting_control() {
        let mut m = fixture();
        let n = names(&mut m);
        for v in [
            "PTOC1$SG$StrVal$setMag$f",
            "PTOC1$SE$StrVal$setMag$f",
            "PTOC1$SG$OpDlTmms$setVal",
            "PTOC1$SE$OpDlTmms$setVal",
            "PTOC1$SG$TmMult$setMag$f",
            "LLN0$SP$SGCB$ResvTms",
        ] {
            assert!(n.contains(&v.to_string()), "{v} missing");
        }
        assert!(!n.contains(&"PTOC1$SE$TmMult".to_string()));
        assert_eq!(
            get(&m, "PTOC1$SG$StrVal$setMag$f"),
            Data::FloatingPoint32(600.0)
        );
        assert_eq!(get(&m, "LLN0$SP$SGCB$NumOfSG"), Data::Unsigned(2));
        assert_eq!(get(&m, "LLN0$SP$SGCB$ActSG"), Data::Unsigned(1));
        // Edit group 2, confirm, activate: the value follows.
        let w =
            |m: &mut ServerModel, item: &str, v: Data| m.write(7, &ObjectName::domain(D, item), &v);
        assert_eq!(w(&mut m, "LLN0$SP$SGCB$EditSG", Data::Unsigned(2)), Ok(()));
        assert_eq!(
            w(
                &mut m,
                "PTOC1$SE$StrVal$setMag$f",
                Data::FloatingPoint32(750.0)
            ),
            Ok(())
        );
        assert_eq!(
            w(&mut m, "LLN0$SP$SGCB$CnfEdit", Data::Boolean(true)),
            Ok(())
        );
        assert_eq!(w(&mut m, "LLN0$SP$SGCB$ActSG", Data::Unsigned(2)), Ok(()));
        assert_eq!(
            get(&m, "PTOC1$SG$StrVal$setMag$f"),
            Data::FloatingPoint32(750.0)
        );
    }

    #[test]
    fn gocbs_and_svcbs_from_gse_and_sv_controls_with_their_addresses() {
        let mut m = fixture();
        let n = names(&mut m);
        for v in [
            "LLN0$GO$gcbTrip$DstAddress$APPID",
            "LLN0$GO$gcbSpare$NdsCom",
            "LLN0$MS$MSVCB01$noASDU",
            "LLN0$US$USVCB01$Resv",
        ] {
            assert!(n.contains(&v.to_string()), "{v} missing");
        }
        assert_eq!(
            get(&m, "LLN0$GO$gcbTrip$GoID"),
            Data::VisibleString("SGB1Trip".into())
        );
        assert_eq!(
            get(&m, "LLN0$GO$gcbTrip$DatSet"),
            Data::VisibleString("SGB1PROT/LLN0$dsTrip".into())
        );
        assert_eq!(get(&m, "LLN0$GO$gcbTrip$ConfRev"), Data::Unsigned(2));
        assert_eq!(
            get(&m, "LLN0$GO$gcbTrip$DstAddress"),
            Data::Structure(vec![
                Data::OctetString(vec![0x01, 0x0c, 0xcd, 0x01, 0x00, 0x05]),
                Data::Unsigned(5),
                Data::Unsigned(5),
                Data::Unsigned(0x3005),
            ])
        );
        assert_eq!(get(&m, "LLN0$GO$gcbTrip$MinTime"), Data::Unsigned(8));
        assert_eq!(get(&m, "LLN0$GO$gcbTrip$MaxTime"), Data::Unsigned(2000));
        // No GSE address, no data set: libiec61850's defaults, NdsCom.
        assert_eq!(get(&m, "LLN0$GO$gcbSpare$NdsCom"), Data::Boolean(true));
        assert_eq!(get(&m, "LLN0$GO$gcbSpare$MaxTime"), Data::Unsigned(5000));
        assert_eq!(
            get(&m, "LLN0$GO$gcbSpare$DstAddress$APPID"),
            Data::Unsigned(0x1000)
        );
        assert_eq!(
            get(&m, "LLN0$MS$MSVCB01$MsvID"),
            Data::VisibleString("SGB1MU01".into())
        );
        assert_eq!(get(&m, "LLN0$MS$MSVCB01$SmpRate"), Data::Integer(80));
        assert_eq!(
            get(&m, "LLN0$MS$MSVCB01$DstAddress$APPID"),
            Data::Unsigned(0x4001)
        );
        assert_eq!(get(&m, "LLN0$US$USVCB01$SmpMod"), Data::Integer(1));
        assert_eq!(get(&m, "LLN0$US$USVCB01$noASDU"), Data::Integer(2));
        assert_eq!(get(&m, "LLN0$US$USVCB01$ConfRev"), Data::Integer(3));
        assert_eq!(
            m.write(
                1,
                &ObjectName::domain(D, "LLN0$GO$gcbTrip$GoEna"),
                &Data::Boolean(true)
            ),
            Ok(())
        );
    }

    /// LCBs from LogControl (interop/fixtures/log_control.cid, whose libiec61850 serving is
    /// compared in interop/tests/test_mms_log_control.py) and the logs as journals.
    #[test]
    fn lcbs_from_log_controls_and_logs_as_journals() {
        let p =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/fixtures/log_control.cid");
        let mut m = load(&p, None, None).unwrap();
        const L: &str = "LGIEDCTRL";
        let get = |m: &ServerModel, item: &str| m.value(&ObjectName::domain(L, item)).unwrap();
        assert_eq!(get(&m, "LLN0$LG$EventLog$LogEna"), Data::Boolean(true));
        assert_eq!(
            get(&m, "LLN0$LG$EventLog$LogRef"),
            Data::VisibleString("LGIEDCTRL/LLN0$EventLog".into())
        );
        assert_eq!(
            get(&m, "GGIO1$LG$IndLog$DatSet"),
            Data::VisibleString("LGIEDCTRL/GGIO1$Ind".into())
        );
        // dchg qchg dupd integrity, no GI (libiec61850: 78 hex).
        assert_eq!(
            get(&m, "LLN0$LG$Periodic$TrgOps"),
            Data::BitString {
                unused_bits: 2,
                bytes: vec![0x78]
            }
        );
        assert_eq!(get(&m, "LLN0$LG$Periodic$IntgPd"), Data::Unsigned(5000));
        // No data set: disabled whatever logEna says; no logName: the LN's GeneralLog.
        assert_eq!(get(&m, "LLN0$LG$GeneralLog$LogEna"), Data::Boolean(false));
        assert_eq!(
            get(&m, "LLN0$LG$GeneralLog$LogRef"),
            Data::VisibleString("LGIEDCTRL/LLN0$GeneralLog".into())
        );
        let journals = m
            .name_list(1, ObjectClass::JOURNAL, &ObjectScope::Domain(L.into()))
            .unwrap()
            .unwrap();
        assert_eq!(
            journals,
            ["GGIO1$IndLog", "LLN0$EventLog", "LLN0$GeneralLog"]
        );
        let w =
            |m: &mut ServerModel, item: &str, v: Data| m.write(1, &ObjectName::domain(L, item), &v);
        assert_eq!(
            w(
                &mut m,
                "LLN0$LG$Periodic$LogRef",
                Data::VisibleString("LGIEDCTRL/GGIO1$IndLog".into())
            ),
            Ok(())
        );
        assert_eq!(
            w(&mut m, "LLN0$LG$Periodic$LogEna", Data::Boolean(true)),
            Ok(())
        );
    }
}
