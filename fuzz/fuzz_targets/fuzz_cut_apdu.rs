//! The readers of a cut frame's captured start (`gander_wire::cut_apdu`,
//! `gander_wire::cut_spdu`, `gander_sec::view::cut_l2` and `cut_session`) on arbitrary bytes: no panic, and cutting never invents a
//! field: whatever a shorter prefix reads, the longer input reads the same (a field is only
//! taken when it is whole, and later octets cannot change it).
#![no_main]
use gander_wire::cut_apdu::{goose_prefix, sv_prefix};
use gander_wire::cut_spdu::spdu_prefix;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (cut, bytes) = match data.split_first() {
        Some((&c, rest)) => (usize::from(c), rest),
        None => return,
    };
    let short = &bytes[..cut.min(bytes.len())];
    let (g, gs) = (goose_prefix(bytes), goose_prefix(short));
    for (a, b) in [
        (gs.gocb_ref, g.gocb_ref),
        (gs.dat_set, g.dat_set),
        (gs.go_id, g.go_id),
    ] {
        if a.is_some() {
            assert_eq!(a, b);
        }
    }
    for (a, b) in [(gs.tal_ms, g.tal_ms), (gs.st_num, g.st_num), (gs.sq_num, g.sq_num)] {
        if a.is_some() {
            assert_eq!(a, b);
        }
    }
    if gs.t.is_some() {
        assert_eq!(gs.t, g.t);
    }
    let (s, ss) = (sv_prefix(bytes), sv_prefix(short));
    if ss.sv_id.is_some() {
        assert_eq!(ss.sv_id, s.sv_id);
    }
    if ss.smp_cnt.is_some() {
        assert_eq!(ss.smp_cnt, s.smp_cnt);
    }
    if let Some(c) = gander_sec::view::cut_l2(short) {
        let whole = gander_sec::view::cut_l2(bytes).expect("a longer prefix reads as far");
        assert_eq!((c.src, c.dst, c.outer_vid, c.appid), (whole.src, whole.dst, whole.outer_vid, whole.appid));
    }
    if let Some(p) = spdu_prefix(short) {
        let whole = spdu_prefix(bytes).expect("a longer prefix reads as far");
        assert_eq!(p.spdu_id, whole.spdu_id);
        for (a, b) in [(p.spdu_number, whole.spdu_number), (p.key_id, whole.key_id)] {
            if a.is_some() {
                assert_eq!(a, b);
            }
        }
        if p.secured.is_some() {
            assert_eq!(p.secured, whole.secured);
        }
        if let Some(e) = p.element {
            let w = whole.element.expect("a longer prefix reads the element");
            assert_eq!((e.payload_type, e.simulation, e.appid), (w.payload_type, w.simulation, w.appid));
        }
    }
    if let Some(c) = gander_sec::view::cut_session(short) {
        let whole = gander_sec::view::cut_session(bytes).expect("a longer prefix reads as far");
        assert_eq!((c.src, c.dst, c.src_port, c.dst_port, c.kind), (whole.src, whole.dst, whole.src_port, whole.dst_port, whole.kind));
    }
});
