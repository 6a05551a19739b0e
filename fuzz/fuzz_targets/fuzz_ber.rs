//! BER reader: every element that parses re-encodes (minimal length) to an element that
//! parses to the same tag and contents; integers survive decode/encode/decode.
#![no_main]
use gander_wire::ber::{self, Reader};
use gander_wire::ber_sink;
use libfuzzer_sys::fuzz_target;

fn walk(r: &mut Reader<'_>, depth: usize) {
    while let Ok(t) = r.read_tlv("fuzz") {
        let mut out = Vec::new();
        ber_sink::tlv(&mut out, t.tag, t.value);
        assert_eq!(out.len(), ber::tlv_len(t.value.len()));
        let mut again = Reader::new(&out);
        let u = again.read_tlv("again").expect("re-encoded element parses");
        assert!(again.expect_end("again").is_ok());
        assert_eq!((u.tag, u.value), (t.tag, t.value));
        assert_eq!(t.range().len(), t.header_len + t.value.len());
        if let Ok(v) = ber::decode_i64(t.value, "i") {
            assert_eq!(ber::decode_i64(ber::encode_i64(v).as_ref(), "i"), Ok(v));
        }
        if let Ok(v) = ber::decode_u64(t.value, "u") {
            assert_eq!(ber::decode_u64(ber::encode_u64(v).as_ref(), "u"), Ok(v));
        }
        if t.is_constructed() && depth < 32 {
            walk(&mut t.reader(), depth + 1);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    walk(&mut Reader::new(data), 0);
});
