//! No heap allocation per forwarded frame (issue #23, item 3): with the output buffer kept
//! across frames, as each driver's packet thread keeps its own, the policy allocates nothing for
//! protect (R-GOOSE and layer-2 GOOSE), layer-2 verify with the security stripped or kept, and
//! translation of GOOSE to R-GOOSE; and writing an output adds nothing to what verification
//! allocates by itself (R-GOOSE strip and translation to layer 2 allocate exactly what
//! `keep_security` does, which writes nothing).
//!
//! Counted by this test binary's allocator for the calling thread only, so the tests running
//! beside it in other threads do not count.

use gander_gateway::config::{Config, Direction};
use gander_gateway::policy::{Policy, OUTPUT_CAPACITY};
use gander_gateway::Decision;
use gander_sec::{default_provider, KeyStore, Profile};
use gander_testkit::frames::{self as craft, UdpAddrs};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

/// The system allocator, counting the allocations of each thread.
struct PerThread;

thread_local! {
    // Const-initialised and without a destructor: reading it never allocates.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // A thread being torn down has no counter left; its allocations are not this test's.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call goes to the system allocator with the caller's arguments unchanged, so
// `System`'s guarantees are this allocator's; counting touches a thread-local `Cell` only,
// which neither allocates nor unwinds.
unsafe impl GlobalAlloc for PerThread {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds the rest of
        // `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: PerThread = PerThread;

fn allocations() -> u64 {
    ALLOCATIONS.with(|c| c.get())
}

const HEAD: &str = "driver = \"l2\"\nkeys = \"unused\"\nprofile = \"standard\"\nreflected = \"allow\"\n[l2]\nied = \"a\"\nnet = \"b\"\n";
const PROTECT: &str = "[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = 1\n";
const STRIP: &str = "[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\n";
const KEEP: &str = "[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\nkeep_security = true\n";
const TO_L2: &str = "[[rule]]\ndirection = \"inbound\"\nkind = \"r-goose\"\naction = \"translate\"\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"01:0c:cd:01:00:01\"\n";
const TO_L2_SECURED: &str = "[[rule]]\ndirection = \"inbound\"\nkind = \"r-goose\"\naction = \"translate\"\nkey_ids = [1, 2]\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"01:0c:cd:01:00:01\"\n";
const TO_RGOOSE: &str = "[[rule]]\ndirection = \"outbound\"\nkind = \"goose\"\naction = \"translate\"\nkey_id = 1\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"02:00:00:00:00:02\"\nsrc_ip = \"10.85.0.254\"\ndst_ip = \"10.85.0.2\"\n";

/// Frames per run after the first (which may allocate its stream's replay and SPDU-number
/// entries once).
const FRAMES: u32 = 200;

fn policy(rules: &str) -> Policy {
    let cfg = Config::from_toml(&format!("{HEAD}{rules}"), Path::new(".")).unwrap();
    let keys = KeyStore::from_toml(
        gander_testkit::keys::ALGORITHMS,
        Path::new("."),
        default_provider(),
    )
    .unwrap();
    Policy::new(&cfg, keys).unwrap()
}

fn rgoose(n: u32) -> Vec<u8> {
    craft::udp_frame(
        &UdpAddrs::IED_TO_SUB,
        &craft::rgoose_spdu(Profile::Standard, 0x10, n, 1, n),
    )
}

fn goose(sq: u32) -> Vec<u8> {
    craft::goose_frame(
        [2, 0, 0, 0, 0, 1],
        [1, 0x0c, 0xcd, 1, 0, 1],
        None,
        0x10,
        1,
        sq,
    )
}

/// `frames` protected with key 1 (each its own SPDU number or sqNum: none replays another).
fn secured(frames: impl Iterator<Item = Vec<u8>>) -> Vec<Vec<u8>> {
    let mut p = policy(PROTECT);
    let mut out = Vec::new();
    frames
        .map(|f| match p.handle(Direction::Outbound, &f, 0, &mut out) {
            Decision::Forward(b) => b.to_vec(),
            Decision::Drop(r) => panic!("protect refused: {r}"),
        })
        .collect()
}

/// Allocations of the policy over `inputs` after the first, every frame forwarded, the output
/// written into one buffer sized as the drivers size theirs.
fn allocations_after_first(rules: &str, dir: Direction, inputs: &[Vec<u8>]) -> u64 {
    let mut p = policy(rules);
    let mut out = Vec::with_capacity(OUTPUT_CAPACITY);
    let mut before = 0;
    for (i, f) in inputs.iter().enumerate() {
        if i == 1 {
            before = allocations();
        }
        let d = p.handle_at(dir, f, 0, i as u64, &mut out);
        assert!(d.is_forward(), "{rules}: frame {i}: {d:?}");
    }
    allocations() - before
}

#[test]
fn no_allocation_per_forwarded_frame() {
    let n = FRAMES + 1;
    let rgoose_plain: Vec<_> = (1..=n).map(|_| rgoose(1)).collect();
    let goose_plain: Vec<_> = (1..=n).map(|_| goose(1)).collect();
    let rgoose_secured = secured((1..=n).map(rgoose));
    let goose_secured = secured((1..=n).map(goose));
    let none: [(&str, &str, Direction, &[Vec<u8>]); 5] = [
        (
            "R-GOOSE protect",
            PROTECT,
            Direction::Outbound,
            &rgoose_plain,
        ),
        ("GOOSE protect", PROTECT, Direction::Outbound, &goose_plain),
        (
            "GOOSE verify and strip",
            STRIP,
            Direction::Inbound,
            &goose_secured,
        ),
        (
            "GOOSE verify, kept",
            KEEP,
            Direction::Inbound,
            &goose_secured,
        ),
        (
            "GOOSE to R-GOOSE",
            TO_RGOOSE,
            Direction::Outbound,
            &goose_plain,
        ),
    ];
    for (what, rules, dir, inputs) in none {
        assert_eq!(
            allocations_after_first(rules, dir, inputs),
            0,
            "{what}: allocations in {FRAMES} frames"
        );
    }
    // R-GOOSE verification checks every APDU through borrowed views (gander_sec::view::verify)
    // and allocates nothing; the output written after it adds nothing.
    let verify = allocations_after_first(KEEP, Direction::Inbound, &rgoose_secured);
    assert_eq!(
        verify, 0,
        "R-GOOSE verify, kept: allocations in {FRAMES} frames"
    );
    for (what, rules) in [
        ("R-GOOSE verify and strip", STRIP),
        ("R-GOOSE to GOOSE", TO_L2),
        ("R-GOOSE to secured GOOSE", TO_L2_SECURED),
    ] {
        assert_eq!(
            allocations_after_first(rules, Direction::Inbound, &rgoose_secured),
            verify,
            "{what}: allocations in {FRAMES} frames beyond verification's"
        );
    }
}
