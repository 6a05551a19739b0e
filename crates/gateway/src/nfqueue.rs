//! The `nfqueue` driver (placeholder until implemented).
use crate::config::NfqueueToml;
use crate::driver::Control;
use crate::policy::Policy;

/// Not yet implemented.
pub fn run(_cfg: &NfqueueToml, _policy: Policy, _ctl: &Control) -> std::io::Result<Policy> {
    Err(std::io::Error::other(
        "the nfqueue driver is not implemented yet",
    ))
}
