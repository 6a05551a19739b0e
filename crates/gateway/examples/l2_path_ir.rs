//! The layer-2 GOOSE frame paths of the policy core one at a time, for instruction counts
//! (`valgrind --tool=callgrind`) and heap allocations per frame: protect, verify and strip,
//! verify keeping the security, each through `Policy::handle_at` as the drivers call it, on an
//! untagged GOOSE frame with four data-set entries (IEC 61850-8-1 Annex C), HMAC-SHA256-128
//! (key 1), profile `standard`. The R-GOOSE paths and translation are `rgoose_path_ir`.
//!
//! Only the measured loop is counted (`--toggle-collect`), so the secured inputs prepared for it
//! (distinct sqNum, so that every one is verified and forwarded rather than dropped as a
//! replay) cost nothing in the figure; Ir per frame is the total divided by `N`. Heap
//! allocations in the loop are counted by the example's own allocator ([`alloc_count`]).
//!
//! ```text
//! cargo build --release -p gander-gateway --example l2_path_ir
//! valgrind --tool=callgrind --toggle-collect='*measured_loop*' \
//!     target/release/examples/l2_path_ir strip 5000
//! ```
//!
//! Modes: `protect` (outbound protect), `strip` (inbound verify, security removed), `keep`
//! (inbound verify, forwarded as received).

#[path = "common/alloc_count.rs"]
mod alloc_count;

use gander_gateway::config::{Config, Direction};
use gander_gateway::policy::Policy;
use gander_gateway::policy::OUTPUT_CAPACITY;
use gander_gateway::Decision;
use gander_sec::{default_provider, KeyStore};
use gander_testkit::frames as craft;
use std::hint::black_box;
use std::path::Path;

#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;

const HEAD: &str = r#"
driver = "l2"
keys = "unused"
profile = "standard"
reflected = "allow"
[l2]
ied = "gi0"
net = "gn0"
"#;

const PROTECT: &str = r#"
[[rule]]
direction = "outbound"
kind = "goose"
action = "protect"
key_id = 1
"#;

const STRIP: &str = r#"
[[rule]]
direction = "inbound"
kind = "goose"
action = "verify"
"#;

const KEEP: &str = r#"
[[rule]]
direction = "inbound"
kind = "goose"
action = "verify"
keep_security = true
"#;

const IED_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const GOOSE_DST: [u8; 6] = [1, 0x0c, 0xcd, 1, 0, 1];

fn policy(rules: &str) -> Result<Policy, Box<dyn std::error::Error>> {
    let cfg = Config::from_toml(&format!("{HEAD}{rules}"), Path::new("."))?;
    let keys = KeyStore::from_toml(
        gander_testkit::keys::ALGORITHMS,
        Path::new("."),
        default_provider(),
    )?;
    Ok(Policy::new(&cfg, keys)?)
}

/// `n` secured GOOSE frames with sqNum 1..=n (stNum 1), protected by a gateway with key 1.
fn secured_inputs(n: u32) -> Result<Vec<Vec<u8>>, Box<dyn std::error::Error>> {
    let mut p = policy(PROTECT)?;
    (1..=n)
        .map(|i| -> Result<Vec<u8>, Box<dyn std::error::Error>> {
            let plain = craft::goose_frame(IED_MAC, GOOSE_DST, None, 0x10, 1, i);
            match p.handle_at(Direction::Outbound, &plain, 0, 0, &mut Vec::new()) {
                Decision::Forward(b) => Ok(b.to_vec()),
                Decision::Drop(r) => Err(format!("protect refused: {r}").into()),
            }
        })
        .collect()
}

/// The counted part: every frame of `inputs` through the policy once, each output written into
/// `out` as a driver's packet thread does.
#[inline(never)]
fn measured_loop(p: &mut Policy, dir: Direction, inputs: &[Vec<u8>], out: &mut Vec<u8>) -> u64 {
    let mut forwarded = 0u64;
    for (i, f) in inputs.iter().enumerate() {
        let d = p.handle_at(dir, black_box(f), 0, i as u64, out);
        forwarded += matches!(black_box(d), Decision::Forward(_)) as u64;
    }
    forwarded
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "protect".into());
    let n: u32 = args.next().map_or(Ok(5000), |s| s.parse())?;
    let (rules, dir, inputs) = match mode.as_str() {
        "protect" => {
            let plain = craft::goose_frame(IED_MAC, GOOSE_DST, None, 0x10, 1, 1);
            (PROTECT, Direction::Outbound, vec![plain; n as usize])
        }
        "strip" => (STRIP, Direction::Inbound, secured_inputs(n)?),
        "keep" => (KEEP, Direction::Inbound, secured_inputs(n)?),
        other => return Err(format!("unknown mode {other}").into()),
    };
    let mut p = policy(rules)?;
    // The drivers' output buffer: sized once for the largest output, kept across frames.
    let mut out = Vec::with_capacity(OUTPUT_CAPACITY);
    let before = alloc_count::allocations();
    let forwarded = measured_loop(&mut p, dir, &inputs, &mut out);
    let allocations = alloc_count::allocations() - before;
    println!(
        "{mode}: {n} frames, {forwarded} forwarded, {allocations} heap allocations ({:.3} per frame)",
        allocations as f64 / f64::from(n.max(1))
    );
    if forwarded != u64::from(n) {
        return Err(format!("{mode}: only {forwarded} of {n} forwarded").into());
    }
    Ok(())
}
