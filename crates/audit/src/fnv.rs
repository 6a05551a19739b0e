//! FNV-1a as the hasher of the audit's per-frame maps (streams, findings). Their keys are
//! small and not chosen by an attacker in a way that matters here beyond the stream count,
//! which the frame rate of one capture bounds; SipHash's cost per lookup is a visible part of
//! a sub-microsecond frame budget.

use std::hash::{BuildHasherDefault, Hasher};

/// 64-bit FNV-1a.
#[derive(Clone, Copy, Debug)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// A `HashMap` hasher builder for FNV-1a.
pub type FnvBuild = BuildHasherDefault<Fnv>;

/// 64-bit FNV-1a of `bytes` (the audit's "same octets" test for capture copies).
pub fn hash64(bytes: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.write(bytes);
    h.finish()
}
