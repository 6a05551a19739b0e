//! A pcap tap (libpcap format, link type Ethernet): the frames a driver forwards, after policy.
//! Like smoltcp's `PcapWriter`, it wraps any driver without touching the protocol code.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// An open capture file.
#[derive(Debug)]
pub struct PcapTap {
    out: BufWriter<File>,
}

impl PcapTap {
    /// Creates (truncates) `path` and writes the pcap global header.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        out.write_all(&0xa1b2c3d4u32.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&65535u32.to_le_bytes())?;
        out.write_all(&1u32.to_le_bytes())?;
        Ok(PcapTap { out })
    }

    /// Appends one frame with the current time.
    pub fn write(&mut self, frame: &[u8]) -> std::io::Result<()> {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let len = frame.len().min(65535) as u32;
        self.out.write_all(&(t.as_secs() as u32).to_le_bytes())?;
        self.out.write_all(&t.subsec_micros().to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&(frame.len() as u32).to_le_bytes())?;
        self.out.write_all(&frame[..len as usize])
    }

    /// Flushes buffered records.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
