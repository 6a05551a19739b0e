//! IEC 61850-90-5 session PDUs under every length dialect: parse the header, the elements and the
//! trailer; whatever parses must re-emit to the same header and elements, and the payload
//! copied as received (`SpduPayload::Encoded`) must give the same octets as re-encoding it.
#![no_main]
use gander_wire::spdu::{
    parse_elements, parse_trailer, Dialect, SessionPdu, SpduPayload, SpduRepr,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for d in [Dialect::STANDARD, Dialect::LIBIEC61850, Dialect::SECLIB] {
        let Ok(p) = SessionPdu::parse(data, &d) else { continue };
        let _ = parse_trailer(p.trailer(), &[10, 16], |_, _| true);
        let Ok(els) = parse_elements(p.payload(), &d) else { continue };
        let out = SpduRepr::new(p.header.clone(), SpduPayload::Elements(&els), p.trailer().len(), &d)
            .and_then(|r| r.to_vec_with_trailer(p.trailer()))
            .expect("emit what parsed");
        let copied = SpduRepr::new(p.header.clone(), SpduPayload::Encoded(p.payload()), p.trailer().len(), &d)
            .and_then(|r| r.to_vec_with_trailer(p.trailer()))
            .expect("emit the payload as received");
        assert_eq!(copied, out);
        let q = SessionPdu::parse(&out, &d).expect("re-parse");
        assert_eq!(q.header, p.header);
        assert_eq!(parse_elements(q.payload(), &d).expect("re-parse elements"), els);
    }
});
