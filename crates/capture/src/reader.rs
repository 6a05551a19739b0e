//! [`CaptureReader`]: a pcap/pcapng file read as a stream.
//!
//! The reader keeps one buffer that holds at most the record being decoded (it grows to the
//! largest record, which [`crate::format::MAX_RECORD_LEN`] bounds), so memory does not depend
//! on the file's size. Packets are numbered from 1 in file order, as tshark numbers frames.
//! A file that ends inside a record ends the stream with [`Warning::CutShort`]; every complete
//! packet before it has been returned.

use crate::error::{CaptureError, Warning};
use crate::format::{Decoder, Step};
use crate::link::{packet_type, present, LinkType, Presented};
use std::io::Read;

/// Octets read from the source at a time (the buffer's starting size).
const CHUNK: usize = 256 << 10;

/// One captured packet, presented as Ethernet where its link type allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<'a> {
    /// Frame number, 1-based, in file order (tshark's `frame.number`).
    pub number: u64,
    /// Capture time, nanoseconds since the Unix epoch.
    pub timestamp_ns: u64,
    /// Length on the wire.
    pub orig_len: u32,
    /// Octets captured (the record's captured length, link header and any frame check
    /// sequence included): less than `orig_len` when the capture's snap length cut the packet.
    pub captured_len: u32,
    /// Interface (pcapng) or 0.
    pub interface: u32,
    /// Link type of the packet's interface.
    pub link: LinkType,
    /// The Ethernet II frame when `ethernet`, otherwise the bytes as captured.
    pub data: &'a [u8],
    /// Whether `data` is an Ethernet II frame (false for link types gander cannot present).
    pub ethernet: bool,
    /// Whether the destination MAC address was captured (false for most Linux cooked packets).
    pub dst_known: bool,
    /// The Linux cooked (SLL/SLL2) packet type ([`crate::link::packet_type`]), `None` for
    /// other link types.
    pub packet_type: Option<u16>,
}

/// A streaming reader of a pcap or pcapng file.
#[derive(Debug)]
pub struct CaptureReader<R> {
    src: R,
    decoder: Decoder,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    offset: u64,
    number: u64,
    scratch: Vec<u8>,
    eof: bool,
    done: bool,
    warnings: Vec<Warning>,
}

impl Packet<'_> {
    /// Whether the capture cut this packet (its captured length is less than its length on
    /// the wire: a snap length, `editcap -s`, `tcpdump -s`). What is missing was never
    /// recorded, so the packet's contents cannot be judged; that is a property of the
    /// capture, not a defect of the frame on the wire.
    pub fn cut_by_capture(&self) -> bool {
        self.captured_len < self.orig_len
    }
}

impl<R: Read> CaptureReader<R> {
    /// A reader over `src`; nothing is read until the first packet is asked for.
    pub fn new(src: R) -> Self {
        CaptureReader {
            src,
            decoder: Decoder::new(),
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            offset: 0,
            number: 0,
            scratch: Vec::new(),
            eof: false,
            done: false,
            warnings: Vec::new(),
        }
    }

    /// Warnings about the capture as a whole (so far; complete once [`Self::next_packet`]
    /// returned `Ok(None)`).
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Octets the reader's buffer holds: bounded by the largest record, not the file.
    pub fn buffer_capacity(&self) -> usize {
        self.buf.len() + self.scratch.capacity()
    }

    /// Packets returned so far (the number of the last one).
    pub fn packets(&self) -> u64 {
        self.number
    }

    /// Reads more of the source so that `need` octets from `start` are buffered, or the source
    /// ends. Returns whether they are.
    fn fill(&mut self, need: usize) -> Result<bool, CaptureError> {
        if self.start > 0 && (self.buf.len() - self.start < need || self.start == self.end) {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < need {
            self.buf.resize(need.max(CHUNK), 0);
        }
        while self.end - self.start < need && !self.eof {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(self.end - self.start >= need)
    }

    /// The next packet, `Ok(None)` at the end of the capture (see [`Self::warnings`]).
    ///
    /// # Errors
    /// [`CaptureError::TooShort`] for a file shorter than its header, [`CaptureError::Corrupt`]
    /// when a record's framing is broken (packets before it have been returned), or the
    /// source's I/O error.
    pub fn next_packet(&mut self) -> Result<Option<Packet<'_>>, CaptureError> {
        if self.done {
            return Ok(None);
        }
        loop {
            let step = self
                .decoder
                .step(&self.buf[self.start..self.end])
                .map_err(|error| {
                    self.done = true;
                    CaptureError::Corrupt {
                        after_frame: self.number,
                        offset: self.offset,
                        error,
                    }
                })?;
            match step {
                Step::Need(n) => {
                    if !self.fill(n)? {
                        self.done = true;
                        let have = self.end - self.start;
                        if !self.decoder.started() {
                            return Err(CaptureError::TooShort(have));
                        }
                        if have > 0 {
                            self.warnings.push(Warning::CutShort {
                                after_frame: self.number,
                                have,
                                need: n,
                            });
                        }
                        return Ok(None);
                    }
                }
                Step::Record { used, packet } => {
                    let at = self.start;
                    self.start += used;
                    self.offset += used as u64;
                    let Some(p) = packet else { continue };
                    self.number += 1;
                    let data = &mut self.buf[at + p.data.start..at + p.data.end];
                    let captured_len = p.captured_len;
                    let packet_type = packet_type(p.link, data);
                    let presented = present(p.link, data, &mut self.scratch);
                    let (data, ethernet, dst_known) = match presented {
                        Presented::InPlace { start, dst_known } => (
                            &self.buf[at + p.data.start + start..at + p.data.end],
                            true,
                            dst_known,
                        ),
                        Presented::Scratch => (&self.scratch[..], true, false),
                        Presented::No => {
                            (&self.buf[at + p.data.start..at + p.data.end], false, false)
                        }
                    };
                    return Ok(Some(Packet {
                        number: self.number,
                        timestamp_ns: p.timestamp_ns,
                        orig_len: p.orig_len,
                        captured_len,
                        interface: p.interface,
                        link: p.link,
                        data,
                        ethernet,
                        dst_known,
                        packet_type,
                    }));
                }
            }
        }
    }
}
