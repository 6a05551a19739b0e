//! IEC 61850-9-2 SV: the savPdu (parse, emit, re-parse must give the same representation), the
//! whole layer-2 SV frame with its IEC 62351-6 extension (parse, emit must give the bytes back
//! up to padding), and the smpCnt replay counter on arbitrary (smpCnt, time) sequences (no
//! panic, and no smpCnt accepted twice within half a second).
#![no_main]
use gander_sec::replay::SvCounter;
use gander_wire::l2_extension::SecurityExtension;
use gander_wire::l2_frame::L2Frame;
use gander_wire::sv::SavPdu;
use gander_wire::Codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = SavPdu::parse(data) {
        let out = p.to_vec();
        assert_eq!(out.len(), p.buffer_len());
        assert_eq!(SavPdu::parse(&out).expect("re-parse savPdu"), p);
    }
    if let Ok((f, layout)) = L2Frame::parse(data) {
        // The body from APPID on re-emits byte for byte (the Ethernet header is normalised to
        // at most one 802.1Q tag, so it is compared from the EtherType's payload on).
        let out = f.to_vec().expect("a parsed frame re-emits");
        let body_at = out.len() - f.body.buffer_len();
        assert_eq!(&out[body_at..], &data[layout.header_offset..layout.end]);
        if let Some(ext) = &f.body.extension {
            let _ = SecurityExtension::parse(ext);
        }
    }
    // Pairs of (smpCnt, nanoseconds since the previous frame) from the input.
    let mut c = SvCounter::default();
    let mut t = 0u64;
    let mut accepted: Vec<(u16, u64)> = Vec::new();
    for chunk in data.chunks_exact(4) {
        let smp = u16::from_be_bytes([chunk[0], chunk[1]]) % 4800;
        t += u64::from(u16::from_be_bytes([chunk[2], chunk[3]])) * 1000;
        if c.check(smp, 4800, t).is_ok() {
            assert!(!accepted
                .iter()
                .any(|(s, at)| *s == smp && t - at < 500_000_000));
            c.accept(smp, 4800, t);
            accepted.push((smp, t));
        }
    }
});
