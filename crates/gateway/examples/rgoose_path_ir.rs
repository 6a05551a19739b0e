//! The R-GOOSE frame paths of the policy core one at a time, for instruction counts
//! (`valgrind --tool=callgrind`): protect, verify and strip, and translation both ways, each
//! through `Policy::handle_at` as the drivers call it, on the frame of `bench gateway` (d)
//! (one R-GOOSE element, four data-set entries, HMAC-SHA256-128, profile `standard`).
//!
//! Only the measured loop is counted (`--toggle-collect`), so the frames prepared for it
//! (secured inputs with distinct SPDU numbers, so that every one is verified and forwarded
//! rather than dropped as a replay) cost nothing in the figure; Ir per frame is the total
//! divided by `N`.
//!
//! ```text
//! cargo build --profile profiling -p gander-gateway --example rgoose_path_ir
//! valgrind --tool=callgrind --toggle-collect='*measured_loop*' \
//!     target/profiling/examples/rgoose_path_ir strip 5000
//! ```
//!
//! Modes: `protect` (outbound protect), `strip` (inbound verify, security removed),
//! `keep` (inbound verify, forwarded as received), `to-l2` (inbound translate of secured
//! R-GOOSE to layer-2 GOOSE, cleartext output), `to-l2-secured` (the same, the output secured
//! with the IEC 62351-6 extension under key 2, the latest of the rule's keys), `to-rgoose` (outbound translate of layer-2 GOOSE to
//! secured R-GOOSE).
//!
//! Heap allocations in the measured loop are counted ([`alloc_count`]) and printed per frame;
//! the layer-2 paths are `l2_path_ir`.

#[path = "common/alloc_count.rs"]
mod alloc_count;
#[path = "common/path_ir.rs"]
mod path_ir;
#[path = "common/policy.rs"]
mod policy;

use gander_gateway::config::Direction;
use gander_sec::Profile;
use gander_testkit::frames::{self as craft, UdpAddrs};

#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;

const PROTECT: &str = r#"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 1
"#;

const STRIP: &str = r#"
[[rule]]
direction = "inbound"
action = "verify"
"#;

const KEEP: &str = r#"
[[rule]]
direction = "inbound"
action = "verify"
keep_security = true
"#;

const TO_L2: &str = r#"
[[rule]]
direction = "inbound"
kind = "r-goose"
action = "translate"
[rule.translate]
src_mac = "02:00:00:00:00:fe"
dst_mac = "01:0c:cd:01:00:01"
"#;

const TO_L2_SECURED: &str = r#"
[[rule]]
direction = "inbound"
kind = "r-goose"
action = "translate"
key_ids = [1, 2]
[rule.translate]
src_mac = "02:00:00:00:00:fe"
dst_mac = "01:0c:cd:01:00:01"
"#;

const TO_RGOOSE: &str = r#"
[[rule]]
direction = "outbound"
kind = "goose"
action = "translate"
key_id = 1
[rule.translate]
src_mac = "02:00:00:00:00:fe"
dst_mac = "02:00:00:00:00:02"
src_ip = "10.85.0.254"
dst_ip = "10.85.0.2"
"#;

/// `n` secured R-GOOSE frames with SPDU numbers 1..=n, protected by a gateway with key 1.
fn secured_inputs(n: u32) -> Result<Vec<Vec<u8>>, Box<dyn std::error::Error>> {
    path_ir::secured_inputs(PROTECT, n, |i| {
        craft::udp_frame(
            &UdpAddrs::IED_TO_SUB,
            &craft::rgoose_spdu(Profile::Standard, 0x10, i, 1, i),
        )
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "protect".into());
    let n: u32 = args.next().map_or(Ok(5000), |s| s.parse())?;
    let (rules, dir, inputs) = match mode.as_str() {
        "protect" => {
            let plain = craft::udp_frame(
                &UdpAddrs::IED_TO_SUB,
                &craft::rgoose_spdu(Profile::Standard, 0x10, 1, 1, 1),
            );
            (PROTECT, Direction::Outbound, vec![plain; n as usize])
        }
        "strip" => (STRIP, Direction::Inbound, secured_inputs(n)?),
        "keep" => (KEEP, Direction::Inbound, secured_inputs(n)?),
        "to-l2" => (TO_L2, Direction::Inbound, secured_inputs(n)?),
        "to-l2-secured" => (TO_L2_SECURED, Direction::Inbound, secured_inputs(n)?),
        "to-rgoose" => {
            let goose = craft::goose_frame(
                [2, 0, 0, 0, 0, 1],
                [1, 0x0c, 0xcd, 1, 0, 1],
                None,
                0x10,
                1,
                1,
            );
            (TO_RGOOSE, Direction::Outbound, vec![goose; n as usize])
        }
        other => return Err(format!("unknown mode {other}").into()),
    };
    path_ir::run(&mode, rules, dir, &inputs)
}
