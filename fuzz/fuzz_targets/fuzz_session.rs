//! IEC 61850-90-5 session PDUs under every length dialect: parse the header, the elements and the
//! trailer; whatever parses must re-emit to the same header and elements.
#![no_main]
use gander_wire::spdu::{emit, parse_elements, parse_trailer, Dialect, SessionPdu};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for d in [Dialect::STANDARD, Dialect::LIBIEC61850, Dialect::SECLIB] {
        let Ok(p) = SessionPdu::parse(data, &d) else { continue };
        let _ = parse_trailer(p.trailer(), &[10, 16], |_, _| true);
        let Ok(els) = parse_elements(p.payload(), &d) else { continue };
        let mut out = Vec::new();
        emit(&p.header, &els, p.trailer().len(), &d, &mut out).expect("emit what parsed");
        out.extend_from_slice(p.trailer());
        let q = SessionPdu::parse(&out, &d).expect("re-parse");
        assert_eq!(q.header, p.header);
        assert_eq!(parse_elements(q.payload(), &d).expect("re-parse elements"), els);
    }
});
