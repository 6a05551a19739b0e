//! Verifying a frame allocates nothing (issue 23, item 3): layer-2 GOOSE and SV, and MAC-only
//! R-GOOSE, through `view::classify` + `view::verify` as the gateway and `bench crypto` call
//! them, and reading the verified APDUs back through their borrowed views. The APDUs are
//! checked whole on the way (strings, allData's values, numDatSetEntries), into views over the
//! frame's bytes; an owned APDU is a caller's explicit conversion.
//!
//! The counter is per thread: the other tests of this binary run beside it on other threads.

use gander_sec::spdu::{self, RandomIv, SendParams};
use gander_sec::view::{self, ApduView, Judged};
use gander_sec::{default_provider, l2, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile};
use gander_wire::data::Data;
use gander_wire::ethernet::{EthernetRepr, ETHERTYPE_GOOSE, ETHERTYPE_SV};
use gander_wire::goose::GoosePdu;
use gander_wire::l2_frame::{GooseFrameRepr, L2Frame};
use gander_wire::spdu::{PayloadElement, SpduId};
use gander_wire::sv::{Asdu, SavPdu};
use gander_wire::Codec;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: every method forwards to the system allocator with the caller's arguments unchanged,
// so `Counting` upholds `GlobalAlloc`'s contract exactly as `System` does; it only counts, in a
// const-initialised thread-local `Cell` that itself never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's layout, passed on unchanged (GlobalAlloc::alloc's contract).
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc`/`realloc` above, i.e. from `System`, with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: as `dealloc`; `n` is the caller's new size, passed on unchanged.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    let before = ALLOCS.with(Cell::get);
    f();
    ALLOCS.with(Cell::get) - before
}

const NOW: u64 = 1_767_225_600;

fn goose_apdu() -> Vec<u8> {
    GoosePdu {
        gocb_ref: "IED1LD0/LLN0$GO$gcb01".into(),
        time_allowed_to_live: 2000,
        dat_set: "IED1LD0/LLN0$DS1".into(),
        go_id: Some("IED1_gcb01".into()),
        t: [0x66, 0, 0, 0, 0, 0, 0, 0x0a],
        st_num: 4,
        sq_num: 9,
        simulation: false,
        conf_rev: 1,
        nds_com: false,
        num_dat_set_entries: 4,
        all_data: vec![
            Data::Integer(5),
            Data::Boolean(true),
            Data::VisibleString("on".into()),
            Data::Structure(vec![
                Data::Integer(-3),
                Data::BitString {
                    unused_bits: 3,
                    bytes: vec![0x80],
                },
            ]),
        ],
    }
    .to_vec()
}

fn sv_apdu() -> Vec<u8> {
    SavPdu {
        security: None,
        asdus: vec![Asdu {
            sv_id: "MU01".into(),
            dat_set: None,
            smp_cnt: 17,
            conf_rev: 1,
            refr_tm: None,
            smp_synch: 1,
            smp_rate: None,
            sample: vec![0; 64],
            smp_mod: None,
            gm_identity: None,
        }],
    }
    .to_vec()
}

fn l2_frame(ethertype: u16, apdu: Vec<u8>) -> Vec<u8> {
    L2Frame {
        eth: EthernetRepr {
            dst: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
            src: [0x02, 0, 0, 0, 0, 0x01],
            vlan: None,
            ethertype,
        },
        body: GooseFrameRepr {
            appid: 0x10,
            reserved1: 0,
            reserved2: 0,
            apdu,
            extension: None,
        },
    }
    .to_vec()
    .expect("frame")
}

fn store() -> KeyStore {
    let mut s = KeyStore::new();
    let k16 = b"0123456789ABCDEF";
    for (id, mac) in [
        (1, MacAlgorithm::AesGmac128),
        (2, MacAlgorithm::HmacSha256_128),
    ] {
        s.insert(KeyEntry::new(id, mac, EncAlgorithm::None, k16, default_provider()).expect("key"))
            .expect("insert");
    }
    s
}

/// Classifies and verifies `frame` (an Ethernet frame, or with `datagram` a UDP payload to
/// port 102), reads every APDU view and returns how many there were; panics unless verified.
fn verify_and_read(store: &KeyStore, frame: &[u8], datagram: bool) -> usize {
    let view = if datagram {
        let a = "10.0.0.1:102".parse().expect("addr");
        let b = "10.0.0.2:102".parse().expect("addr");
        view::classify_datagram(Profile::Standard, a, b, frame)
    } else {
        view::classify(Profile::Standard, frame)
    }
    .expect("classify");
    let Ok(Judged::Verified(v)) = view::verify(Profile::Standard, store, &view, NOW) else {
        panic!("not verified");
    };
    let mut n = 0;
    for a in v.apdus() {
        match a.expect("verified APDU") {
            ApduView::Goose(g) => assert_eq!((g.st_num, g.gocb_ref.len()), (4, 21)),
            ApduView::Sv(s) => assert_eq!(s.first.map(|a| a.smp_cnt), Some(17)),
        }
        n += 1;
    }
    assert!(v.st_sq().is_some() || v.smp_cnt().is_some());
    n
}

#[test]
fn verify_allocates_nothing() {
    let store = store();
    let mut frames = Vec::new();
    for (key, ethertype, apdu) in [
        (1, ETHERTYPE_GOOSE, goose_apdu()),
        (2, ETHERTYPE_GOOSE, goose_apdu()),
        (1, ETHERTYPE_SV, sv_apdu()),
    ] {
        let key = store.require(key).expect("key");
        let plain = l2_frame(ethertype, apdu);
        let secured =
            l2::protect(Profile::Standard, key, &plain, &mut RandomIv, NOW).expect("protect");
        frames.push((secured, false, 1));
    }
    let goose = goose_apdu();
    for (key, n) in [(1, 1), (2, 3)] {
        let el = PayloadElement {
            payload_type: SpduId::Goose.payload_type(),
            simulation: 0,
            appid: 0x10,
            apdu: &goose,
        };
        let params = SendParams {
            spdu_id: SpduId::Goose,
            spdu_number: 1,
            now: NOW,
        };
        let mut spdu = Vec::new();
        let key = store.require(key).expect("key");
        spdu::protect(
            Profile::Standard,
            key,
            params,
            &vec![el; n],
            &mut RandomIv,
            &mut spdu,
        )
        .expect("protect");
        frames.push((spdu, true, n));
    }
    for (frame, datagram, elements) in &frames {
        // Once outside the count: a first call may set up thread-local state.
        assert_eq!(verify_and_read(&store, frame, *datagram), *elements);
        let n = allocations(|| {
            for _ in 0..10 {
                std::hint::black_box(verify_and_read(&store, frame, *datagram));
            }
        });
        assert_eq!(
            n,
            0,
            "allocations in 10 verifications of {} octets",
            frame.len()
        );
    }
}
