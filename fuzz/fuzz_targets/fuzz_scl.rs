//! SCL files (ICD/CID) are user input: any bytes through `gander_scl::decode` and any text
//! through `gander_scl::parse` must give a model
//! or an `SclError`, never a panic; every data set member of a model must name a domain
//! of that IED, every control block (log control blocks too) a data set of its LN, every
//! setting group value a group of its LD, every refused IED's error its IED, and every
//! warning of a loaded IED (a repair, docs/scl.md "Repairs") a position in the file. A parsed IED then goes through `gander mms server --scl`'s conversion
//! (`gander_peers::scl_model::build`): a served model or an `SclModelError`, never a panic, and
//! a built model answers its own directory, reads and reports.
#![no_main]
use gander_mms::association::ServerHandler;
use gander_mms::service::{ObjectClass, ObjectName, ObjectScope};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Bytes to text as an XML processor decides (BOM, UTF-16 by its "<?", the declared
    // encoding): text or an error with a position, never a panic.
    let text = match gander_scl::decode("fuzz", data) {
        Ok(t) => t,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let text = text.as_str();
    // The routable GSE/SMV addresses (`gander audit --scd`): addresses or an error.
    let _ = gander_scl::routable_addresses(text);
    if let Ok(scl) = gander_scl::parse(text) {
        // Each refused IED's error names it (an SCD's other IEDs stay usable).
        for r in &scl.refused {
            assert_eq!(r.error.ied.as_deref(), Some(r.name.as_str()));
            let _ = r.error.to_string();
        }
        for ied in &scl.ieds {
            // Every repair says where it was made, and prints.
            for w in &ied.warnings {
                assert!(w.at.is_some(), "{w}");
                let _ = w.to_string();
            }
            // Data sets, control blocks and LNs are unique per scope after repairs too.
            for ld in &ied.logical_devices {
                let mut names: Vec<&str> = ld.logical_nodes.iter().map(|l| l.name.as_str()).collect();
                names.sort_unstable();
                assert!(names.windows(2).all(|w| w[0] != w[1]), "duplicate LN in {}", ld.domain);
            }
            for ld in &ied.logical_devices {
                for ln in &ld.logical_nodes {
                    let _ = ln.variables();
                    for ds in &ln.data_sets {
                        for m in &ds.members {
                            assert!(ied.logical_devices.iter().any(|l| l.domain == m.domain));
                            assert!(m.component.is_none() || m.array_index.is_some());
                        }
                    }
                    // Control blocks name data sets of their own LN.
                    let has = |d: &Option<String>| {
                        d.as_ref()
                            .is_none_or(|d| ln.data_sets.iter().any(|s| &s.name == d))
                    };
                    assert!(ln.gse_controls.iter().all(|g| has(&g.data_set)));
                    assert!(ln.sv_controls.iter().all(|s| has(&s.data_set)));
                    assert!(ln.log_controls.iter().all(|l| has(&l.data_set)));
                    assert!(ln.log_controls.iter().all(|l| l.log_ref.contains('/')));
                    if let Some(sg) = ln.setting_control {
                        assert!(sg.act_sg >= 1 && sg.act_sg <= sg.num_of_sgs);
                    }
                }
                // Every `Val sGroup` names a group of its LD's SettingControl (1..=numOfSGs).
                if let Some(sg) = ld.logical_nodes.iter().find_map(|l| l.setting_control) {
                    fn groups(n: &[gander_scl::DataNode], max: u8) -> bool {
                        n.iter().all(|d| {
                            d.group_values
                                .iter()
                                .all(|g| g.group >= 1 && g.group <= max)
                                && groups(&d.children, max)
                        })
                    }
                    assert!(ld
                        .logical_nodes
                        .iter()
                        .all(|l| groups(&l.data_objects, sg.num_of_sgs)));
                }
            }
            let Ok(mut m) = gander_peers::scl_model::build(ied, None, "fuzz") else {
                continue;
            };
            let domains: Vec<String> = m.domains().iter().map(|d| d.to_string()).collect();
            for d in domains.iter().take(4) {
                let scope = ObjectScope::Domain(d.clone());
                let Some(Ok(names)) = m.name_list(1, ObjectClass::NAMED_VARIABLE, &scope) else {
                    panic!("a built model lists its own domain {d}");
                };
                for n in names.iter().take(64) {
                    let name = ObjectName::domain(d.clone(), n.clone());
                    assert!(m.value(&name).is_some(), "{name} listed but not readable");
                    let _ = m.variable_access_attributes(1, &name);
                }
            }
            // Each domain's journals (the logs) are listed.
            for d in domains.iter().take(4) {
                let scope = ObjectScope::Domain(d.clone());
                assert!(matches!(
                    m.name_list(1, ObjectClass::JOURNAL, &scope),
                    Some(Ok(_))
                ));
            }
            m.step_stimuli(0);
            let _ = m.due_reports(1, 0);
        }
    }
});
