//! The names a server returns to `gander probe` (GetNameList items, DatSet values) and the
//! references a user gives (`--reports RCB`, `--read REF`) are untrusted text: assembling the
//! model from any list of names and parsing any reference must not panic (docs/probe.md). The
//! reference parsers are gander-client's (`reference`), shared with `gander run`'s client; the
//! first octets a server answers are judged by its `detect` (TLS record or COTP confirm).
#![no_main]
use gander_probe::model;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let names: Vec<String> = text.split('\n').map(str::to_string).collect();
    let _ = model::logical_nodes(&names);
    let _ = model::read_candidates(&names);
    for n in &names {
        let _ = model::reference("LD", n);
        let _ = model::parse_rcb(n);
        let _ = model::dat_set_reference(n);
        let _ = gander_probe::parse_read_ref(n);
        let _ = gander_client::reference::data_set_name(n);
    }
    let _ = gander_client::detect::looks_like_tls(data);
    let _ = gander_client::detect::is_cotp_confirm(data);
});
