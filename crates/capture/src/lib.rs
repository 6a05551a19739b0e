//! Capture input for gander: pcap and pcapng files read as a stream in bounded memory, every
//! packet presented as an Ethernet II frame (so `gander_sec::view::classify` and the wire
//! codecs read it unchanged), and IPv4/IPv6 fragments of UDP datagrams reassembled.
//!
//! * [`format`]: the sans-I/O decoder of the two file formats (record framing, byte order,
//!   timestamp resolution, interfaces); bytes in, packet records out.
//! * [`link`]: link types and how a packet of each is presented as Ethernet (Linux cooked
//!   SLL/SLL2 rewritten in place, raw IP behind a synthesised header).
//! * [`reader`]: [`CaptureReader`], the streaming reader over any `std::io::Read`, numbering
//!   packets as tshark does (1-based) and ending a capture cut short with a [`Warning`].
//! * [`reassembly`]: the sans-I/O fragment reassembler (RFC 791, RFC 8200 §4.5, RFC 5722),
//!   bounded in datagrams, bytes, fragments and capture time, with typed findings.
//! * [`tunnel`]: the Ethernet frame inside GRE (transparent Ethernet bridging, ERSPAN types
//!   I, II and III), where a remote SPAN sends mirrored traffic.
//! * [`frames`]: [`Capture`], reader and reassembler together: the frames `frame show`,
//!   `frame verify` and `audit` read.
//!
//! See docs/capture.md.

pub mod error;
pub mod format;
pub mod frames;
pub mod link;
pub mod reader;
pub mod reassembly;
pub mod tunnel;

pub use error::{CaptureError, FormatError, Warning};
pub use frames::{Capture, Frame, Reassembly};
pub use link::LinkType;
pub use reader::{CaptureReader, Packet};
pub use reassembly::{Finding, FindingKind, Limits, Reassembler};
pub use tunnel::Tunnel;
