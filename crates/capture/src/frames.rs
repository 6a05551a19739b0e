//! [`Capture`]: the capture reader and the reassembler together, the one path by which
//! `gander frame show|verify` and `gander audit` read a capture.

use crate::error::{CaptureError, Warning};
use crate::link::LinkType;
use crate::reader::CaptureReader;
use crate::reassembly::{Finding, Limits, Outcome, Reassembler};
use crate::tunnel::{decapsulate, Tunnel};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// What reassembly did with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reassembly {
    /// Not a fragment: `data` is the frame as captured.
    None,
    /// A fragment held for reassembly: `data` is the fragment as captured; the datagram will be
    /// presented at the frame of its last fragment.
    Held,
    /// A fragment dropped (an exact duplicate, or of a datagram already discarded; see
    /// [`Frame::findings`]).
    Dropped,
    /// This fragment completed a datagram: `data` is the reassembled frame.
    Complete {
        /// Frame number of the datagram's first fragment seen.
        first_frame: u64,
        /// Number of fragments.
        fragments: usize,
    },
}

/// One frame of a capture, after reassembly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Frame number, 1-based (tshark's `frame.number`).
    pub number: u64,
    /// Capture time, nanoseconds since the Unix epoch.
    pub timestamp_ns: u64,
    /// Length on the wire.
    pub orig_len: u32,
    /// Octets captured (link header and any FCS included): less than `orig_len` when the
    /// capture's snap length cut the frame ([`Frame::cut_by_capture`]).
    pub captured_len: u32,
    /// Interface (pcapng) or 0.
    pub interface: u32,
    /// Link type.
    pub link: LinkType,
    /// The Ethernet II frame (reassembled, if [`Reassembly::Complete`]; the inner frame, if
    /// `tunnel`), or the captured bytes when `ethernet` is false.
    pub data: &'a [u8],
    /// Whether `data` is an Ethernet II frame.
    pub ethernet: bool,
    /// Whether the destination MAC address was captured.
    pub dst_known: bool,
    /// The Linux cooked packet type (`crate::link::packet_type`), `None` for other links.
    pub packet_type: Option<u16>,
    /// The GRE/ERSPAN tunnel the frame was captured in (`data` is the frame inside it).
    pub tunnel: Option<Tunnel>,
    /// What reassembly did.
    pub reassembly: Reassembly,
    /// Reassembly findings this frame showed (or whose timeout it passed).
    pub findings: &'a [Finding],
}

impl Frame<'_> {
    /// Whether the capture cut this frame (captured length below the length on the wire, the
    /// pcap record header's `incl_len` < `orig_len`, a pcapng EPB's Captured < Original
    /// Packet Length). Its missing octets were never recorded: the frame cannot be judged, and
    /// it is not malformed on the wire. Such a frame is not given to the reassembler either (a
    /// cut fragment cannot complete a datagram).
    pub fn cut_by_capture(&self) -> bool {
        self.captured_len < self.orig_len
    }
}

/// A capture being read frame by frame.
#[derive(Debug)]
pub struct Capture<R> {
    reader: CaptureReader<R>,
    reassembler: Reassembler,
    out: Vec<u8>,
    findings: Vec<Finding>,
}

impl Capture<File> {
    /// Opens a capture file.
    ///
    /// # Errors
    /// The file cannot be opened.
    pub fn open(path: &Path) -> Result<Self, CaptureError> {
        Ok(Capture::new(File::open(path)?))
    }
}

impl<R: Read> Capture<R> {
    /// Reads `src` with the default reassembly [`Limits`].
    pub fn new(src: R) -> Self {
        Self::with_limits(src, Limits::default())
    }

    /// Reads `src` with these reassembly limits.
    pub fn with_limits(src: R, limits: Limits) -> Self {
        Capture {
            reader: CaptureReader::new(src),
            reassembler: Reassembler::new(limits),
            out: Vec::new(),
            findings: Vec::new(),
        }
    }

    /// The next frame, `Ok(None)` at the end (then see [`Self::warnings`] and
    /// [`Self::finish`]).
    ///
    /// # Errors
    /// As [`CaptureReader::next_packet`].
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        self.findings.clear();
        let Some(p) = self.reader.next_packet()? else {
            return Ok(None);
        };
        // Mirrored traffic (remote SPAN): the frame inside the tunnel is the one to judge.
        let tunnelled = if p.ethernet && !p.cut_by_capture() {
            decapsulate(p.data)
        } else {
            None
        };
        let (inner, tunnel) = match tunnelled {
            Some((t, r)) => (&p.data[r], Some(t)),
            None => (p.data, None),
        };
        let outcome = if p.ethernet && !p.cut_by_capture() {
            self.reassembler.push(
                p.number,
                p.timestamp_ns,
                inner,
                &mut self.out,
                &mut self.findings,
            )
        } else {
            Outcome::NotFragment
        };
        let (data, reassembly) = match outcome {
            Outcome::NotFragment => (inner, Reassembly::None),
            Outcome::Held => (inner, Reassembly::Held),
            Outcome::Dropped => (inner, Reassembly::Dropped),
            Outcome::Complete {
                first_frame,
                fragments,
            } => (
                &self.out[..],
                Reassembly::Complete {
                    first_frame,
                    fragments,
                },
            ),
        };
        Ok(Some(Frame {
            number: p.number,
            timestamp_ns: p.timestamp_ns,
            orig_len: p.orig_len,
            captured_len: p.captured_len,
            interface: p.interface,
            link: p.link,
            data,
            ethernet: p.ethernet,
            dst_known: p.dst_known,
            packet_type: p.packet_type,
            tunnel,
            reassembly,
            findings: &self.findings,
        }))
    }

    /// Warnings about the capture as a whole (a capture cut short).
    pub fn warnings(&self) -> &[Warning] {
        self.reader.warnings()
    }

    /// Frames read so far.
    pub fn frames(&self) -> u64 {
        self.reader.packets()
    }

    /// Ends reassembly: the datagrams still incomplete, as findings at the last frame.
    pub fn finish(&mut self) -> Vec<Finding> {
        let mut f = Vec::new();
        self.reassembler.finish(&mut f);
        f
    }
}
