//! Typed errors and warnings of capture input.

use std::fmt;

/// A capture file whose structure is broken (not merely cut short): the decoder cannot find
/// the next record, so reading stops.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The first four octets are neither a pcap magic number nor a pcapng Section Header Block.
    #[error("not a pcap or pcapng file (magic {0:02x?})")]
    UnknownMagic([u8; 4]),
    /// A pcap file header of a major version other than 2.
    #[error("pcap version {major}.{minor} is not 2.x")]
    PcapVersion {
        /// Major version.
        major: u16,
        /// Minor version.
        minor: u16,
    },
    /// A pcapng Section Header Block whose byte-order magic is neither 0x1A2B3C4D nor its swap.
    #[error("pcapng section header with byte-order magic {0:08x}")]
    SectionMagic(u32),
    /// A pcapng block length that is below 12, not a multiple of 4, or not repeated at its end
    /// (pcapng §3.1).
    #[error("pcapng block of type {block_type:#x}: bad block length {len}")]
    BlockLength {
        /// Block type.
        block_type: u32,
        /// The Block Total Length field.
        len: u32,
    },
    /// A record longer than [`crate::format::MAX_RECORD_LEN`]: no capture of Ethernet frames
    /// needs it, and accepting it would let one corrupt length field claim unbounded memory.
    #[error("record of {len} octets is longer than the {max}-octet limit")]
    RecordTooLarge {
        /// Declared length.
        len: u64,
        /// The limit.
        max: usize,
    },
    /// A packet record whose captured length exceeds the space its block holds.
    #[error("packet record: captured length {caplen} exceeds its block ({room} octets)")]
    CapturedLength {
        /// Captured length field.
        caplen: u32,
        /// Octets the block has for packet data.
        room: usize,
    },
    /// A pcapng packet naming an interface no Interface Description Block declared.
    #[error("packet on interface {0}, which the section does not declare")]
    UnknownInterface(u32),
    /// More interfaces than [`crate::format::MAX_INTERFACES`] in one section.
    #[error("more than {0} interfaces in one pcapng section")]
    TooManyInterfaces(usize),
    /// A pcapng block other than a Section Header Block before the first section.
    #[error("pcapng block before the first section header")]
    NoSection,
}

/// An error that ends reading a capture.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The underlying reader failed.
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
    /// The file is empty or shorter than its file header.
    #[error("too short to be a capture ({0} octets)")]
    TooShort(usize),
    /// The structure is broken after `after_frame` complete packets, at file offset `offset`
    /// (at offset 0: not a capture at all, said as such).
    #[error("{}", corrupt_text(*after_frame, *offset, error))]
    Corrupt {
        /// Packets read before the broken record.
        after_frame: u64,
        /// File offset of the broken record.
        offset: u64,
        /// What is broken.
        error: FormatError,
    },
}

impl CaptureError {
    /// The file's first octets are already wrong: it is no capture at all, as opposed to one
    /// whose structure breaks after its header (a reader can keep what came before).
    pub fn not_a_capture(&self) -> bool {
        matches!(self, CaptureError::Corrupt { offset: 0, .. })
    }
}

fn corrupt_text(after_frame: u64, offset: u64, error: &FormatError) -> String {
    if offset == 0 {
        error.to_string()
    } else {
        format!("corrupt capture after frame {after_frame} (offset {offset}): {error}")
    }
}

/// Something about the capture as a whole that the reader reports without refusing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// The file ends inside a record: every complete packet before it was read (tshark shows
    /// the same packets and warns that the capture "appears to have been cut short").
    CutShort {
        /// Number of the last complete packet.
        after_frame: u64,
        /// Octets of the incomplete record present.
        have: usize,
        /// Octets the record needs.
        need: usize,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::CutShort {
                after_frame,
                have,
                need,
            } => write!(
                f,
                "the capture was cut short in the middle of a packet after frame {after_frame} \
                 ({have} of {need} octets of the next record present); every complete packet was read"
            ),
        }
    }
}
