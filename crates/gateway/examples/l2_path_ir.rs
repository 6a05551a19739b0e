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
//! cargo build --profile profiling -p gander-gateway --example l2_path_ir
//! valgrind --tool=callgrind --toggle-collect='*measured_loop*' \
//!     target/profiling/examples/l2_path_ir strip 5000
//! ```
//!
//! Modes: `protect` (outbound protect), `strip` (inbound verify, security removed), `keep`
//! (inbound verify, forwarded as received).

#[path = "common/alloc_count.rs"]
mod alloc_count;
#[path = "common/path_ir.rs"]
mod path_ir;
#[path = "common/policy.rs"]
mod policy;

use gander_gateway::config::Direction;
use gander_testkit::frames as craft;

#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;

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

/// `n` secured GOOSE frames with sqNum 1..=n (stNum 1), protected by a gateway with key 1.
fn secured_inputs(n: u32) -> Result<Vec<Vec<u8>>, Box<dyn std::error::Error>> {
    path_ir::secured_inputs(PROTECT, n, |i| {
        craft::goose_frame(IED_MAC, GOOSE_DST, None, 0x10, 1, i)
    })
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
    path_ir::run(&mode, rules, dir, &inputs)
}
