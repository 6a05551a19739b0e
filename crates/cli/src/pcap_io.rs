//! Reading pcap/pcapng captures and writing pcap, Ethernet link type only (what GOOSE and
//! R-GOOSE captures use). A truncated or corrupt capture is an error naming the file, never a
//! silent stop.

use anyhow::{bail, Context, Result};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::DataLink;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::path::Path;
use std::time::Duration;

/// One captured frame.
pub(crate) struct Packet {
    /// Capture time since the Unix epoch.
    pub timestamp: Duration,
    /// Length on the wire (more than `data.len()` if the capture was truncated by a snap length).
    pub orig_len: u32,
    /// The captured bytes (an Ethernet frame).
    pub data: Vec<u8>,
}

/// Reads every frame of a pcap or pcapng file.
pub(crate) fn read(path: &Path) -> Result<Vec<Packet>> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut magic = [0u8; 4];
    f.read_exact(&mut magic)
        .with_context(|| format!("{}: too short to be a capture", path.display()))?;
    let f = BufReader::new(File::open(path)?);
    let ctx = || format!("{}: corrupt capture", path.display());
    let mut out = Vec::new();
    if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
        let mut r = PcapNgReader::new(f).with_context(ctx)?;
        // Link types of the interfaces declared so far in this section.
        let mut links: Vec<DataLink> = Vec::new();
        while let Some(block) = r.next_block() {
            match block.with_context(ctx)? {
                Block::SectionHeader(_) => links.clear(),
                Block::InterfaceDescription(i) => links.push(i.linktype),
                Block::EnhancedPacket(p) => {
                    let link = links.get(p.interface_id as usize).copied();
                    if link != Some(DataLink::ETHERNET) {
                        bail!("{}: link type {:?} is not Ethernet", path.display(), link);
                    }
                    out.push(Packet {
                        timestamp: p.timestamp,
                        orig_len: p.original_len,
                        data: p.data.into_owned(),
                    });
                }
                Block::SimplePacket(p) => {
                    let link = links.first().copied();
                    if link != Some(DataLink::ETHERNET) {
                        bail!("{}: link type {:?} is not Ethernet", path.display(), link);
                    }
                    out.push(Packet {
                        timestamp: Duration::ZERO,
                        orig_len: p.original_len,
                        data: p.data.into_owned(),
                    });
                }
                Block::Packet(_) => bail!(
                    "{}: obsolete pcapng Packet Blocks are not supported",
                    path.display()
                ),
                _ => {}
            }
        }
    } else {
        let mut r = PcapReader::new(f).with_context(ctx)?;
        if r.header().datalink != DataLink::ETHERNET {
            bail!(
                "{}: link type {:?} is not Ethernet",
                path.display(),
                r.header().datalink
            );
        }
        while let Some(p) = r.next_packet() {
            let p = p.with_context(ctx)?;
            out.push(Packet {
                timestamp: p.timestamp,
                orig_len: p.orig_len,
                data: p.data.into_owned(),
            });
        }
    }
    Ok(out)
}

/// Writes frames as a pcap file (microsecond timestamps, Ethernet).
pub(crate) fn write(path: &Path, packets: &[Packet]) -> Result<()> {
    let f = BufWriter::new(
        File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
    );
    let mut w = PcapWriter::with_header(
        f,
        PcapHeader {
            datalink: DataLink::ETHERNET,
            ..Default::default()
        },
    )?;
    for p in packets {
        // Frames gander rewrote changed size; the capture holds them whole.
        w.write_packet(&PcapPacket::new(p.timestamp, p.data.len() as u32, &p.data))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
