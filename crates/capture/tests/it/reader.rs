//! The streaming reader on fixture captures written by the tests.

use crate::common;
use common::*;
use gander_capture::{CaptureError, CaptureReader, FormatError, LinkType, Warning};
use gander_wire::ethernet::Frame;
use std::io::Read;

/// Number, timestamp, link, Ethernet bytes, destination known.
type Read1 = (u64, u64, LinkType, Vec<u8>, bool);

fn read_all(bytes: &[u8]) -> (Vec<Read1>, Vec<Warning>) {
    let mut r = CaptureReader::new(bytes);
    let mut out = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        out.push((
            p.number,
            p.timestamp_ns,
            p.link,
            p.data.to_vec(),
            p.dst_known,
        ));
    }
    (out, r.warnings().to_vec())
}

#[test]
fn pcap_microseconds_and_nanoseconds_number_from_one() {
    let g = ethernet(GOOSE_DST, 0x88b8, &goose_body());
    for nanos in [false, true] {
        let ts = [1_700_000_000_123_456_000, 1_700_000_001_000_001_000];
        let f = pcap(1, nanos, &[(ts[0], g.clone()), (ts[1], g.clone())]);
        let (p, w) = read_all(&f);
        assert!(w.is_empty());
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].0, p[1].0), (1, 2));
        assert_eq!((p[0].1, p[1].1), (ts[0], ts[1]));
        assert_eq!(p[0].3, g);
        assert!(p[0].4);
    }
}

#[test]
fn big_endian_pcap_is_read() {
    let g = ethernet(GOOSE_DST, 0x88b8, &goose_body());
    let mut f = 0xa1b2_c3d4u32.to_be_bytes().to_vec();
    f.extend(2u16.to_be_bytes());
    f.extend(4u16.to_be_bytes());
    f.extend([0; 8]);
    f.extend(65535u32.to_be_bytes());
    f.extend(1u32.to_be_bytes());
    f.extend(5u32.to_be_bytes());
    f.extend(7u32.to_be_bytes());
    f.extend((g.len() as u32).to_be_bytes());
    f.extend((g.len() as u32).to_be_bytes());
    f.extend(&g);
    let (p, _) = read_all(&f);
    assert_eq!(p[0].1, 5_000_007_000);
    assert_eq!(p[0].3, g);
}

/// The pcap-file crate's writer (an independent implementation of the format) and this reader
/// agree on packets and timestamps.
#[test]
fn agrees_with_pcap_file_writer() {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let g = ethernet(GOOSE_DST, 0x88b8, &goose_body());
    let mut w = PcapWriter::with_header(
        Vec::new(),
        PcapHeader {
            datalink: pcap_file::DataLink::ETHERNET,
            ..Default::default()
        },
    )
    .unwrap();
    for i in 0..5u64 {
        let t = std::time::Duration::from_micros(1_600_000_000_000_000 + i * 250);
        w.write_packet(&PcapPacket::new(t, g.len() as u32, &g))
            .unwrap();
    }
    let bytes = w.into_writer();
    let (p, _) = read_all(&bytes);
    assert_eq!(p.len(), 5);
    assert_eq!(p[4].1, (1_600_000_000_000_000 + 1000) * 1000);
}

/// Linux cooked captures hold GOOSE and SV frames in the corpus (robidev/iec61850-dissector
/// test/capture.pcapng and test/ccc.pcapng, LINUX_SLL), which gander refused before.
#[test]
fn linux_sll_goose_is_presented_as_ethernet() {
    let body = goose_body();
    let f = pcap(
        113,
        false,
        &[(0, sll(4, 0x88b8, &body)), (1000, sll(1, 0x0800, &[0x45]))],
    );
    let (p, _) = read_all(&f);
    assert_eq!(p[0].2, LinkType::LinuxSll);
    let e = Frame::new_checked(&p[0].3[..]).unwrap();
    assert_eq!(e.ethertype(), 0x88b8);
    assert_eq!(e.src_addr(), SRC_MAC);
    assert_eq!(e.dst_addr(), [0; 6]);
    assert_eq!(e.payload(), &body[..]);
    assert!(!p[0].4, "SLL does not capture the destination");
    // A broadcast packet's destination is known.
    assert_eq!(&p[1].3[..6], &[0xff; 6]);
    assert!(p[1].4);
}

#[test]
fn linux_sll2_with_a_vlan_tag_is_presented_as_ethernet() {
    let mut tagged = vec![0xa0, 0x05, 0x88, 0xba];
    tagged.extend(goose_body());
    let f = pcap(276, true, &[(0, sll2(0, 0x8100, &tagged))]);
    let (p, _) = read_all(&f);
    let e = Frame::new_checked(&p[0].3[..]).unwrap();
    assert_eq!(e.tag_count(), 1);
    assert_eq!(e.ethertype(), 0x88ba);
    assert_eq!(e.src_addr(), SRC_MAC);
}

#[test]
fn raw_ip_links_get_an_ethernet_header() {
    let ip = ipv4(1, false, 0, 17, &udp(5000, 102, b"x"));
    for link in [101, 228, 12] {
        let (p, _) = read_all(&pcap(link, false, &[(0, ip.clone())]));
        assert_eq!(Frame::new_checked(&p[0].3[..]).unwrap().ethertype(), 0x0800);
        assert_eq!(&p[0].3[14..], &ip[..]);
    }
}

/// A loopback capture from macOS or a BSD (LINKTYPE_NULL, family in the writer's byte order;
/// OpenBSD's LINKTYPE_LOOP, network order): MMS between a client and a server on one machine
/// is captured this way. Before, these packets were counted and never looked at.
#[test]
fn bsd_loopback_links_get_an_ethernet_header() {
    let ip = ipv4(1, false, 0, 6, &[0u8; 20]);
    for (link, family) in [
        (0, 2u32.to_le_bytes()),
        (0, 2u32.to_be_bytes()),
        (108, 2u32.to_be_bytes()),
    ] {
        let mut pkt = family.to_vec();
        pkt.extend_from_slice(&ip);
        let (p, _) = read_all(&pcap(link, false, &[(0, pkt)]));
        assert_eq!(p[0].2.code(), link);
        assert_eq!(Frame::new_checked(&p[0].3[..]).unwrap().ethertype(), 0x0800);
        assert_eq!(&p[0].3[14..], &ip[..]);
    }
}

#[test]
fn pcapng_interfaces_link_types_and_resolutions() {
    let g = ethernet(GOOSE_DST, 0x88b8, &goose_body());
    for big in [false, true] {
        let f = pcapng(
            big,
            &[(1, None), (113, Some(9)), (1, Some(0x80 | 10))],
            &[
                (0, 1_700_000_000_000_001, g.clone()),
                (1, 1_700_000_000_000_000_002, sll(0, 0x88b8, &goose_body())),
                (2, 2048, g.clone()),
            ],
        );
        let (p, w) = read_all(&f);
        assert!(w.is_empty());
        assert_eq!(p.len(), 3);
        // Default resolution is microseconds (pcap-file 2.0 reads these as nanoseconds).
        assert_eq!(p[0].1, 1_700_000_000_000_001_000);
        assert_eq!(p[1].1, 1_700_000_000_000_000_002);
        assert_eq!(p[1].2, LinkType::LinuxSll);
        assert_eq!(p[2].1, 2_000_000_000);
        assert_eq!(p[1].3[12..], g[12..]);
    }
}

/// issue #21: a capture cut short mid-packet was refused whole, where tshark shows its 383
/// complete frames. Every complete packet is read and a warning ends the stream.
#[test]
fn a_capture_cut_short_yields_every_complete_packet_and_a_warning() {
    let g = ethernet(GOOSE_DST, 0x88b8, &goose_body());
    let packets: Vec<_> = (0..10).map(|i| (i * 1000, g.clone())).collect();
    let whole = pcap(1, false, &packets);
    for cut in [
        whole.len() - 1,
        whole.len() - g.len() - 10,
        whole.len() - g.len() - 15,
    ] {
        let (p, w) = read_all(&whole[..cut]);
        assert_eq!(p.len(), 9, "cut at {cut}");
        assert!(
            matches!(w[..], [Warning::CutShort { after_frame: 9, .. }]),
            "{w:?}"
        );
    }
    let ng = pcapng(
        false,
        &[(1, None)],
        &packets
            .iter()
            .map(|(t, d)| (0, *t, d.clone()))
            .collect::<Vec<_>>(),
    );
    let (p, w) = read_all(&ng[..ng.len() - 3]);
    assert_eq!(p.len(), 9);
    assert_eq!(w.len(), 1);
    // Cut exactly at a record boundary is a whole capture.
    let (p, w) = read_all(&whole[..whole.len() - g.len() - 16]);
    assert_eq!((p.len(), w.len()), (9, 0));
}

#[test]
fn broken_files_are_typed_errors() {
    let mut r = CaptureReader::new(&b"\xd4\xc3"[..]);
    assert!(matches!(r.next_packet(), Err(CaptureError::TooShort(2))));
    let mut r = CaptureReader::new(&b"not a capture at all"[..]);
    assert!(matches!(
        r.next_packet(),
        Err(CaptureError::Corrupt {
            error: FormatError::UnknownMagic(_),
            ..
        })
    ));
    // A pcapng packet on an undeclared interface, after one good packet.
    let g = ethernet(GOOSE_DST, 0x88b8, &goose_body());
    let f = pcapng(false, &[(1, None)], &[(0, 0, g.clone()), (3, 0, g)]);
    let mut r = CaptureReader::new(&f[..]);
    assert!(r.next_packet().unwrap().is_some());
    assert!(matches!(
        r.next_packet(),
        Err(CaptureError::Corrupt {
            after_frame: 1,
            error: FormatError::UnknownInterface(3),
            ..
        })
    ));
    assert!(r.next_packet().unwrap().is_none());
}

/// A source of `n` identical pcap records generated on the fly: a capture far larger than the
/// reader may hold.
struct Endless {
    header: Vec<u8>,
    record: Vec<u8>,
    left: u64,
    at: usize,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.header.is_empty() {
            let n = self.header.len().min(buf.len());
            buf[..n].copy_from_slice(&self.header[..n]);
            self.header.drain(..n);
            return Ok(n);
        }
        let mut w = 0;
        while w < buf.len() && self.left > 0 {
            let n = (self.record.len() - self.at).min(buf.len() - w);
            buf[w..w + n].copy_from_slice(&self.record[self.at..self.at + n]);
            w += n;
            self.at += n;
            if self.at == self.record.len() {
                self.at = 0;
                self.left -= 1;
            }
        }
        Ok(w)
    }
}

#[test]
fn a_large_capture_is_read_in_bounded_memory() {
    let g = ethernet(GOOSE_DST, 0x88b8, &goose_body());
    let one = pcap(1, false, &[(0, g.clone())]);
    let n = 400_000u64; // ~ 30 MB of records
    let mut r = CaptureReader::new(Endless {
        header: one[..24].to_vec(),
        record: one[24..].to_vec(),
        left: n,
        at: 0,
    });
    let mut count = 0;
    while let Some(p) = r.next_packet().unwrap() {
        assert_eq!(p.data.len(), g.len());
        count += 1;
    }
    assert_eq!(count, n);
    assert!(r.buffer_capacity() <= 512 << 10, "{}", r.buffer_capacity());
}

/// A pcap whose records state their own lengths on the wire: (bytes captured, orig_len).
fn pcap_with_orig(link: u32, records: &[(Vec<u8>, u32)]) -> Vec<u8> {
    let mut f = 0xa1b2_c3d4u32.to_le_bytes().to_vec();
    f.extend(2u16.to_le_bytes());
    f.extend(4u16.to_le_bytes());
    f.extend([0; 8]);
    f.extend(64u32.to_le_bytes());
    f.extend(link.to_le_bytes());
    for (d, orig) in records {
        f.extend([0; 8]);
        f.extend((d.len() as u32).to_le_bytes());
        f.extend(orig.to_le_bytes());
        f.extend(d);
    }
    f
}

/// The field test's `editcap -s 64` and `-s 200` copies of a public capture (D_snap64p,
/// D_snap200): every record cut by the snap length has incl_len < orig_len. The reader says
/// so (`cut_by_capture`) with both lengths; a whole record, and a record whose frame check
/// sequence the file states (its captured length equals the length on the wire), is not cut.
#[test]
fn a_record_cut_by_the_snap_length_is_flagged_with_both_lengths() {
    let g = ethernet(GOOSE_DST, 0x88b8, &goose_body());
    let cut = g[..20].to_vec();
    let f = pcap_with_orig(
        1,
        &[(cut.clone(), g.len() as u32), (g.clone(), g.len() as u32)],
    );
    let mut r = CaptureReader::new(&f[..]);
    let p = r.next_packet().unwrap().unwrap();
    assert!(p.cut_by_capture());
    assert_eq!((p.captured_len, p.orig_len), (20, g.len() as u32));
    assert_eq!(p.data, &cut[..]);
    let p = r.next_packet().unwrap().unwrap();
    assert!(!p.cut_by_capture());
    assert_eq!(p.captured_len, g.len() as u32);

    // Ethernet with a 4-octet FCS stated in the LinkType (bits 26-31): a whole record holds
    // the FCS (removed), a cut one holds none of it (nothing of its payload is removed).
    let mut whole = g.clone();
    whole.extend([0xde, 0xad, 0xbe, 0xef]);
    let on_wire = whole.len() as u32;
    let f = pcap_with_orig(
        1 | 0x0400_0000 | (2 << 28),
        &[(whole.clone(), on_wire), (cut.clone(), on_wire)],
    );
    let mut r = CaptureReader::new(&f[..]);
    let p = r.next_packet().unwrap().unwrap();
    assert!(!p.cut_by_capture());
    assert_eq!(p.data, &g[..]);
    let p = r.next_packet().unwrap().unwrap();
    assert!(p.cut_by_capture());
    assert_eq!(p.data, &cut[..]);
}

/// The same in pcapng: an Enhanced Packet Block's Captured Packet Length below its Original
/// Packet Length; the frame is not handed to the reassembler (a cut fragment cannot complete
/// a datagram).
#[test]
fn an_enhanced_packet_block_cut_by_the_snap_length_is_flagged() {
    let g = ethernet(GOOSE_DST, 0x88b8, &goose_body());
    let mut f = pcapng(false, &[(1, None)], &[]);
    let mut b = 0u32.to_le_bytes().to_vec();
    b.extend([0; 8]);
    b.extend(18u32.to_le_bytes());
    b.extend((g.len() as u32).to_le_bytes());
    b.extend(&g[..18]);
    b.extend([0, 0]);
    let len = 12 + b.len() as u32;
    f.extend(6u32.to_le_bytes());
    f.extend(len.to_le_bytes());
    f.extend(&b);
    f.extend(len.to_le_bytes());
    let mut c = gander_capture::Capture::new(&f[..]);
    let fr = c.next_frame().unwrap().unwrap();
    assert!(fr.cut_by_capture());
    assert_eq!((fr.captured_len, fr.orig_len), (18, g.len() as u32));
    assert_eq!(fr.data, &g[..18]);
    assert_eq!(fr.reassembly, gander_capture::Reassembly::None);
}

/// pg-ot/virtual-substation-beta `goose.pcapng` (Linux "any"): one GOOSE frame recorded four
/// times with packet types 2, 4, 4, 2. The reader hands each frame's packet type on, so the
/// audit can tell a copy made by the capture from a frame sent twice.
#[test]
fn linux_cooked_packet_types_are_passed_on() {
    let f = pcap(
        113,
        false,
        &[2u16, 4, 4, 2]
            .iter()
            .map(|&t| (1_000, sll(t, 0x88b8, &goose_body())))
            .collect::<Vec<_>>(),
    );
    let mut c = gander_capture::Capture::new(&f[..]);
    let mut types = Vec::new();
    while let Some(fr) = c.next_frame().unwrap() {
        types.push(fr.packet_type);
    }
    assert_eq!(types, vec![Some(2), Some(4), Some(4), Some(2)]);
    let g = pcap(1, false, &[(0, ethernet(GOOSE_DST, 0x88b8, &goose_body()))]);
    let mut r = CaptureReader::new(&g[..]);
    assert_eq!(r.next_packet().unwrap().unwrap().packet_type, None);
}
