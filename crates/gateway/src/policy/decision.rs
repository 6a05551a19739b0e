//! What the policy decides for one frame, and where a forwarded frame's bytes are.

use super::DropReason;

/// The capacity a driver gives its output buffer up front, so that no output makes it grow:
/// the largest IP packet (an IPv6 header and a 65,535-octet payload) behind an Ethernet header
/// and a few 802.1Q tags. The layer-2 outputs are bounded by one Ethernet frame
/// (`gander_sec::fit`), far below.
pub const OUTPUT_CAPACITY: usize = 40 + 65_535 + 64;

/// What to do with one frame.
///
/// A forwarded frame is either the input as it came (`pass`, `keep_security`, traffic that is
/// not IEC 61850) or a new frame the policy wrote (`protect`, `strip`, `translate`). The new
/// frame is written into an output buffer the caller owns and hands to every call
/// ([`crate::Policy::handle`]'s `out`): the policy resizes it to the frame, and a caller that
/// keeps it across frames allocates nothing per frame once it has grown to the largest output.
///
/// Why the caller's buffer and not one the policy owns and lends out: the `l2` driver shares
/// one policy between its packet threads behind a lock (`shared.lock(dir).handle(..)`),
/// released as soon as the decision is made. A decision borrowing a policy-owned buffer would
/// hold that lock (and with it the other direction, and the IED side's priority) through the
/// copy into the transmit ring or a `send`; with the buffer in the thread that transmits, the
/// lock covers the decision alone, and several workers per direction need no buffer each
/// inside the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision<'a> {
    /// Send these bytes out of the other side.
    Forward(Forward<'a>),
    /// Do not forward.
    Drop(DropReason),
}

impl Decision<'_> {
    /// Whether the frame goes on.
    pub fn is_forward(&self) -> bool {
        matches!(self, Decision::Forward(_))
    }
}

/// The bytes a forwarded frame goes on as: in the input's own form (an Ethernet frame, an IP
/// packet, a UDP payload), borrowed from the input or from the caller's output buffer.
/// Dereferences to the bytes, so a driver that only sends them need not tell the two apart;
/// one that can forward the input in place (an NFQUEUE verdict without a payload) can.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forward<'a> {
    /// The input, unchanged.
    Unchanged(&'a [u8]),
    /// A new frame written into the caller's output buffer (all of it: the buffer's length is
    /// the frame's).
    Rewritten(&'a [u8]),
}

impl<'a> Forward<'a> {
    /// The bytes to send.
    pub fn bytes(&self) -> &'a [u8] {
        match *self {
            Forward::Unchanged(b) | Forward::Rewritten(b) => b,
        }
    }

    /// Whether the policy wrote a new frame (the input is not what goes on).
    pub fn is_rewritten(&self) -> bool {
        matches!(self, Forward::Rewritten(_))
    }
}

impl std::ops::Deref for Forward<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.bytes()
    }
}

impl AsRef<[u8]> for Forward<'_> {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}
