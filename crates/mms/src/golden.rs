//! Test-only access to the PDUs captured from libiec61850 1.6.1 by
//! `tests/golden/capture_services.py` (provenance in `docs/mms-services.md`).

/// The capture, one `C>S`/`S>C` line per MMS PDU, `# association n` between associations.
const CAPTURE: &str = include_str!("../tests/golden/libiec61850_services.txt");

/// The PDUs of association `assoc` (1-based), each with `true` when the client sent it.
pub(crate) fn association(assoc: usize) -> Vec<(bool, Vec<u8>)> {
    let mut n = 0;
    let mut out = Vec::new();
    for line in CAPTURE.lines() {
        if line.starts_with("# association ") {
            n += 1;
        } else if n == assoc {
            if let Some(h) = line.strip_prefix("C>S ") {
                out.push((true, hex::decode(h).unwrap()));
            } else if let Some(h) = line.strip_prefix("S>C ") {
                out.push((false, hex::decode(h).unwrap()));
            }
        }
    }
    out
}

/// The first PDU of association `assoc` sent by the server (`from_client` false) or the
/// client whose hex starts with `prefix`.
pub(crate) fn find(assoc: usize, from_client: bool, prefix: &str) -> Vec<u8> {
    association(assoc)
        .into_iter()
        .find(|(c, b)| *c == from_client && hex::encode(b).starts_with(prefix))
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no captured PDU starting with {prefix}"))
}
