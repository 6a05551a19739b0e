//! Writing pcap (what `frame protect` produces). Reading is `gander-capture`'s (every link type
//! real captures use, streamed, cut-short captures read to their last whole packet).

use anyhow::{Context, Result};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::DataLink;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A pcap file being written (microsecond timestamps, Ethernet: every frame gander-capture
/// reads is presented as Ethernet).
pub(crate) struct PcapOut {
    path: PathBuf,
    w: PcapWriter<BufWriter<File>>,
}

impl PcapOut {
    pub(crate) fn create(path: &Path) -> Result<Self> {
        let f = BufWriter::new(
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
        );
        let w = PcapWriter::with_header(
            f,
            PcapHeader {
                datalink: DataLink::ETHERNET,
                ..Default::default()
            },
        )?;
        Ok(PcapOut {
            path: path.to_owned(),
            w,
        })
    }

    /// Appends one frame; `orig_len` is the length on the wire (at least the captured bytes).
    pub(crate) fn write(&mut self, timestamp_ns: u64, orig_len: u32, data: &[u8]) -> Result<()> {
        let orig_len = orig_len.max(data.len() as u32);
        self.w
            .write_packet(&PcapPacket::new(
                Duration::from_nanos(timestamp_ns),
                orig_len,
                data,
            ))
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        Ok(())
    }

    /// Flushes the file (an error here is a write error, not a silent loss at drop).
    pub(crate) fn finish(self) -> Result<()> {
        self.w
            .into_writer()
            .flush()
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}
