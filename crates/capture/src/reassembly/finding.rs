//! What the reassembler reports about fragments.

use std::fmt;
use std::net::IpAddr;

/// Which datagram a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DatagramId {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// IPv4 Identification (16 bits) or IPv6 fragment header Identification.
    pub id: u32,
}

/// Why a datagram was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvictionCause {
    /// More datagrams in flight than [`crate::Limits::max_datagrams`].
    Datagrams,
    /// More octets held than [`crate::Limits::max_bytes`].
    Bytes,
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindingKind {
    /// Two fragments of an IPv4 datagram cover the same octets with different values (the
    /// ambiguity overlapping-fragment attacks rely on: which copy a receiver keeps differs
    /// between stacks). The datagram is discarded.
    OverlapConflict {
        /// First octet (of the datagram's payload) that differs.
        offset: u32,
    },
    /// Overlapping IPv6 fragments: RFC 5722 (RFC 8200 §4.5) requires the datagram to be
    /// discarded whatever the octets are (exact duplicates excepted).
    Ipv6Overlap {
        /// Start of the overlap.
        offset: u32,
    },
    /// The fragments disagree about the datagram's length: two last fragments ending at
    /// different places, or data beyond the end the last fragment states (RFC 791 §3.2,
    /// RFC 8200 §4.5). The datagram is discarded.
    LengthMismatch {
        /// Length the last fragment states.
        declared: u32,
        /// The conflicting end.
        seen: u32,
    },
    /// A fragment with More Fragments set whose length is not a multiple of 8 (RFC 8200 §4.5
    /// requires it; RFC 791 offsets cannot describe anything else). The fragment is ignored.
    UnalignedFragment {
        /// Its payload length.
        len: u32,
    },
    /// The fragments describe a datagram longer than IP can carry (65535 octets); the datagram
    /// is discarded ("ping of death").
    TooLarge {
        /// Where the offending fragment ends.
        end: u32,
    },
    /// More fragments than [`crate::Limits::max_fragments`]; the datagram is discarded.
    TooManyFragments {
        /// The limit.
        limit: usize,
    },
    /// The datagram was not complete within [`crate::Limits::timeout_ns`] of capture time, or
    /// at the end of the capture.
    Incomplete {
        /// Fragments received.
        fragments: usize,
        /// Payload octets received.
        bytes: usize,
    },
    /// The datagram was given up to stay within the limits.
    Evicted {
        /// Which limit.
        cause: EvictionCause,
    },
}

impl FindingKind {
    /// Name in reports and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            FindingKind::OverlapConflict { .. } => "fragment-overlap-conflict",
            FindingKind::Ipv6Overlap { .. } => "ipv6-fragment-overlap",
            FindingKind::LengthMismatch { .. } => "fragment-length-mismatch",
            FindingKind::UnalignedFragment { .. } => "fragment-unaligned",
            FindingKind::TooLarge { .. } => "fragments-too-large",
            FindingKind::TooManyFragments { .. } => "too-many-fragments",
            FindingKind::Incomplete { .. } => "fragments-incomplete",
            FindingKind::Evicted { .. } => "fragments-evicted",
        }
    }
}

/// One finding: which datagram, which frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The frame that showed it (for a timeout: the frame whose time passed the limit; at the
    /// end of the capture: the last frame).
    pub frame: u64,
    /// The datagram's first fragment seen (frame number).
    pub first_frame: u64,
    /// Which datagram.
    pub datagram: DatagramId,
    /// What.
    pub kind: FindingKind,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.datagram;
        write!(
            f,
            "{} at frame {} (datagram {} -> {} id {:#x}, first fragment frame {})",
            self.kind.name(),
            self.frame,
            d.src,
            d.dst,
            d.id,
            self.first_frame
        )?;
        match &self.kind {
            FindingKind::OverlapConflict { offset } | FindingKind::Ipv6Overlap { offset } => {
                write!(f, ": overlap at offset {offset}")
            }
            FindingKind::LengthMismatch { declared, seen } => {
                write!(
                    f,
                    ": last fragment says {declared} octets, another ends at {seen}"
                )
            }
            FindingKind::UnalignedFragment { len } => {
                write!(f, ": {len} octets with more fragments to come")
            }
            FindingKind::TooLarge { end } => write!(f, ": a fragment ends at {end}"),
            FindingKind::TooManyFragments { limit } => write!(f, ": more than {limit}"),
            FindingKind::Incomplete { fragments, bytes } => {
                write!(
                    f,
                    ": {fragments} fragments, {bytes} octets, never completed"
                )
            }
            FindingKind::Evicted { cause } => write!(f, ": limit on {cause:?}"),
        }
    }
}
