//! ISAKMP/GDOI messages (RFC 2408, RFC 6407, RFC 8052): any input parses or is refused without
//! a panic; what parses re-emits to bytes that parse to the same message, and those bytes are
//! stable under a second round. The payload chain is also tried as decrypted content (with
//! trailing padding allowed) under each exchange type.
#![no_main]
use gander_wire::isakmp::payload::{emit_payloads, parse_payloads, payloads_len};
use gander_wire::isakmp::{Header, IdOid, Iec61850Tek, Message};
use gander_wire::Codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = Header::parse(data);
    // The RFC 8052 IEC 61850 SA TEK body on its own: parse, emit, parse again.
    if let Ok(t) = Iec61850Tek::parse(data) {
        if t.fits() {
            let mut buf = vec![0u8; t.body_len()];
            assert_eq!(t.emit_body(&mut buf), buf.len());
            assert_eq!(Iec61850Tek::parse(&buf).expect("re-parse SA TEK"), t);
        }
    }
    // RFC 8052's ID_OID Identification Data: parse, emit (whole DER OID), parse again.
    if let Ok(id) = IdOid::parse(data) {
        assert_eq!(IdOid::parse(&id.to_vec()).expect("re-parse ID_OID"), id);
    }
    if let Ok(m) = Message::parse(data) {
        let out = m.to_bytes().expect("a parsed message fits its fields");
        let again = Message::parse(&out).expect("re-parse");
        assert_eq!(again, m);
        assert_eq!(again.to_vec(), out);
    }
    if let Some((&first, rest)) = data.split_first() {
        for ex in [2u8, 5, 32, 33] {
            if let Ok(p) = parse_payloads(first, rest, ex, true) {
                let mut buf = vec![0u8; payloads_len(&p)];
                emit_payloads(&p, &mut buf);
                let again = parse_payloads(first, &buf, ex, false).expect("re-parse chain");
                assert_eq!(again, p);
            }
        }
    }
});
