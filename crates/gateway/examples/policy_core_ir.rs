//! A fixed amount of policy-core work, for instruction counts (`valgrind --tool=callgrind`),
//! which stay repeatable on a loaded machine where `gander bench gateway`'s frames/s do not.
//!
//! Runs `N` (first argument, default 20000) of each: R-GOOSE protect and verify (the frames of
//! `bench gateway` (d): HMAC-SHA256-128, one data-set entry; verify of one frame repeated,
//! each fully verified and then dropped as a replay), and layer-2 GOOSE protect and verify
//! (four data-set entries), through `Policy::handle_at` as the drivers call it.
//!
//! ```text
//! cargo build --profile profiling -p gander-gateway --example policy_core_ir
//! valgrind --tool=callgrind target/profiling/examples/policy_core_ir 20000
//! ```

use gander_gateway::config::Direction;
use gander_gateway::policy::OUTPUT_CAPACITY;
use gander_gateway::Decision;
use gander_sec::Profile;
use gander_testkit::frames::{self as craft, UdpAddrs};
use std::hint::black_box;

#[path = "common/policy.rs"]
mod policy;

const RULES: &str = r#"
[[rule]]
direction = "outbound"
action = "protect"
key_id = 1
[[rule]]
direction = "inbound"
action = "verify"
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = match std::env::args().nth(1) {
        Some(a) => a.parse()?,
        None => 20_000,
    };
    let mut p = policy::policy(RULES)?;
    let rgoose = craft::udp_frame(
        &UdpAddrs::IED_TO_SUB,
        &craft::rgoose_spdu(Profile::Standard, 0x10, 1, 1, 1),
    );
    let goose = craft::goose_frame(
        [2, 0, 0, 0, 0, 1],
        [1, 0x0c, 0xcd, 1, 0, 1],
        None,
        0x10,
        1,
        1,
    );
    let mut forwarded = 0u64;
    // The drivers' output buffer: sized once for the largest output, kept across frames.
    let mut out = Vec::with_capacity(OUTPUT_CAPACITY);
    for plain in [&rgoose, &goose] {
        let secured = match p.handle_at(Direction::Outbound, plain, 0, 0, &mut out) {
            Decision::Forward(b) => b.to_vec(),
            Decision::Drop(r) => return Err(format!("protect refused: {r}").into()),
        };
        for i in 0..n {
            let d = p.handle_at(Direction::Outbound, black_box(plain), 0, i, &mut out);
            forwarded += matches!(black_box(d), Decision::Forward(_)) as u64;
        }
        for i in 0..n {
            let d = p.handle_at(Direction::Inbound, black_box(&secured), 0, i, &mut out);
            forwarded += matches!(black_box(d), Decision::Forward(_)) as u64;
        }
    }
    println!("{n} frames per case, {forwarded} forwarded");
    Ok(())
}
