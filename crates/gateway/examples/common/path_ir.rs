//! What `l2_path_ir` and `rgoose_path_ir` share: the policy built from a rule set, inputs
//! secured by a protecting gateway, the counted loop and its report. Each example declares
//! `alloc_count` (its global allocator) and `policy` at its root, which this module uses.

use crate::policy::policy;
use gander_gateway::config::Direction;
use gander_gateway::policy::{Policy, OUTPUT_CAPACITY};
use gander_gateway::Decision;
use std::hint::black_box;

/// `plain(1) ..= plain(n)`, each protected outbound by a policy with `protect_rules`.
pub(crate) fn secured_inputs(
    protect_rules: &str,
    n: u32,
    plain: impl Fn(u32) -> Vec<u8>,
) -> Result<Vec<Vec<u8>>, Box<dyn std::error::Error>> {
    let mut p = policy(protect_rules)?;
    (1..=n)
        .map(|i| -> Result<Vec<u8>, Box<dyn std::error::Error>> {
            match p.handle_at(Direction::Outbound, &plain(i), 0, 0, &mut Vec::new()) {
                Decision::Forward(b) => Ok(b.to_vec()),
                Decision::Drop(r) => Err(format!("protect refused: {r}").into()),
            }
        })
        .collect()
}

/// The counted part: every frame of `inputs` through the policy once, each output written into
/// `out` as a driver's packet thread does.
#[inline(never)]
pub(crate) fn measured_loop(
    p: &mut Policy,
    dir: Direction,
    inputs: &[Vec<u8>],
    out: &mut Vec<u8>,
) -> u64 {
    let mut forwarded = 0u64;
    for (i, f) in inputs.iter().enumerate() {
        let d = p.handle_at(dir, black_box(f), 0, i as u64, out);
        forwarded += matches!(black_box(d), Decision::Forward(_)) as u64;
    }
    forwarded
}

/// Runs `inputs` through a policy with `rules` in the measured loop, prints the frames
/// forwarded and the heap allocations per frame, and fails unless every frame was forwarded.
pub(crate) fn run(
    mode: &str,
    rules: &str,
    dir: Direction,
    inputs: &[Vec<u8>],
) -> Result<(), Box<dyn std::error::Error>> {
    let n = inputs.len() as u64;
    let mut p = policy(rules)?;
    // The drivers' output buffer: sized once for the largest output, kept across frames.
    let mut out = Vec::with_capacity(OUTPUT_CAPACITY);
    let before = crate::alloc_count::allocations();
    let forwarded = measured_loop(&mut p, dir, inputs, &mut out);
    let allocations = crate::alloc_count::allocations() - before;
    println!(
        "{mode}: {n} frames, {forwarded} forwarded, {allocations} heap allocations ({:.3} per frame)",
        allocations as f64 / n.max(1) as f64
    );
    if forwarded != n {
        return Err(format!("{mode}: only {forwarded} of {n} forwarded").into());
    }
    Ok(())
}
