//! MMS Data (every ISO 9506-2 alternative, mMSString included): parse, emit, re-parse must give
//! the same values; the allocation-free checker agrees with the decoder.
#![no_main]
use gander_wire::ber_sink::SliceSink;
use gander_wire::data::{self, Data};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    assert_eq!(data::check_seq(bytes), Data::parse_seq(bytes).map(|_| ()));
    if let Ok(items) = Data::parse_seq(bytes) {
        let mut out = vec![0; data::seq_len(&items)];
        let mut w = SliceSink::new(&mut out);
        data::encode_seq(&items, &mut w);
        assert_eq!(w.pos, data::seq_len(&items));
        assert_eq!(Data::parse_seq(&out).expect("re-parse"), items);
        for d in &items {
            assert!(d.validate().is_ok());
        }
    }
});
