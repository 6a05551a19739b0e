//! SCL files (ICD/CID) are user input: any text through `gander_scl::parse` must give a model
//! or an `SclError`, never a panic, and every data set member of a model must name a domain
//! of that IED.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(scl) = gander_scl::parse(text) {
        for ied in &scl.ieds {
            for ld in &ied.logical_devices {
                for ln in &ld.logical_nodes {
                    let _ = ln.variables();
                    for ds in &ln.data_sets {
                        for m in &ds.members {
                            assert!(ied.logical_devices.iter().any(|l| l.domain == m.domain));
                        }
                    }
                }
            }
        }
    }
});
