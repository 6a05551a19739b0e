//! Where the `gander` rows spend their time beyond the primitive: counts heap allocations per
//! `spdu::protect` / `spdu::verify` call with a counting allocator, and loops one of them
//! for a profiler (`perf record -g target/profiling/examples/gander_path_profile verify gmac`).
//!
//! Usage: `gander_path_profile [protect|verify|count] [hmac|gmac|gcm] [iterations]`.

use gander_bench::crypto::{goose_apdu, ELEMENT_HEADER_LEN, HEADER_LEN_IV, HEADER_LEN_NO_IV, NOW};
use gander_sec::spdu::{self, RandomIv, SendParams};
use gander_sec::{default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile};
use gander_wire::spdu::{PayloadElement, SpduId};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to the system allocator with the caller's arguments unchanged,
// so `Counting` upholds `GlobalAlloc`'s contract exactly as `System` does; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on unchanged (GlobalAlloc::alloc's contract).
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc`/`realloc` above, i.e. from `System`, with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as `dealloc`; `n` is the caller's new size, passed on unchanged.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("count");
    let alg = args.get(2).map(String::as_str).unwrap_or("gmac");
    let iters: usize = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let (mac, enc, key_len, apdu_len) = match alg {
        "hmac" => (
            MacAlgorithm::HmacSha256_128,
            EncAlgorithm::None,
            32,
            256 - HEADER_LEN_NO_IV - ELEMENT_HEADER_LEN,
        ),
        "gcm" => (
            MacAlgorithm::None,
            EncAlgorithm::Aes128Gcm,
            16,
            204 - ELEMENT_HEADER_LEN,
        ),
        _ => (
            MacAlgorithm::AesGmac128,
            EncAlgorithm::None,
            16,
            256 - HEADER_LEN_IV - ELEMENT_HEADER_LEN,
        ),
    };
    let mut store = KeyStore::new();
    store
        .insert(KeyEntry::new(1, mac, enc, &vec![7u8; key_len], default_provider()).expect("key"))
        .expect("insert");
    let entry = store.require(1).expect("key 1");
    let apdu = goose_apdu(apdu_len, 12).expect("apdu");
    let elements = [PayloadElement {
        payload_type: 0x81,
        simulation: 0,
        appid: 1,
        apdu: &apdu,
    }];
    let params = SendParams {
        spdu_id: SpduId::Goose,
        spdu_number: 1,
        now: NOW,
    };
    let mut frame = Vec::with_capacity(512);
    spdu::protect(
        Profile::Standard,
        entry,
        params,
        &elements,
        &mut RandomIv,
        &mut frame,
    )
    .expect("protect");
    let mut out = Vec::with_capacity(512);
    let protect = |out: &mut Vec<u8>| {
        out.clear();
        spdu::protect(
            Profile::Standard,
            entry,
            params,
            black_box(&elements),
            &mut RandomIv,
            out,
        )
        .expect("protect");
    };
    let verify = || {
        black_box(spdu::verify(Profile::Standard, &store, black_box(&frame), NOW).expect("verify"));
    };
    match what {
        "protect" => (0..iters).for_each(|_| protect(&mut out)),
        "verify" => (0..iters).for_each(|_| verify()),
        _ => {
            protect(&mut out);
            verify();
            let n = 1000;
            let a0 = ALLOCS.load(Ordering::Relaxed);
            (0..n).for_each(|_| protect(&mut out));
            let a1 = ALLOCS.load(Ordering::Relaxed);
            (0..n).for_each(|_| verify());
            let a2 = ALLOCS.load(Ordering::Relaxed);
            println!(
                "{alg}: {:.2} allocations per protect, {:.2} per verify",
                (a1 - a0) as f64 / n as f64,
                (a2 - a1) as f64 / n as f64
            );
        }
    }
}
