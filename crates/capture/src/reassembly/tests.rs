//! Unit tests of fragment recognition (the reassembler's behaviour is tested in
//! tests/reassembly.rs).

use super::fragment::{find, Key, Patch};

fn ipv6_with_dest_opts_then_fragment(offset_m: u16) -> Vec<u8> {
    let mut f = vec![0x33, 0x33, 0, 0, 0, 1, 0, 1, 2, 3, 4, 5, 0x86, 0xdd];
    let data = [0xabu8; 16];
    let payload_len = 8 + 8 + data.len();
    f.extend([0x60, 0, 0, 0]);
    f.extend((payload_len as u16).to_be_bytes());
    f.extend([60, 64]);
    f.extend([0; 32]);
    // Destination options (8 octets: next header 44, length 0, PadN).
    f.extend([44, 0, 1, 4, 0, 0, 0, 0]);
    // Fragment header: next header UDP, offset/M, identification.
    f.extend([17, 0]);
    f.extend(offset_m.to_be_bytes());
    f.extend(0x01020304u32.to_be_bytes());
    f.extend(data);
    f
}

#[test]
fn ipv6_fragment_after_extension_headers() {
    let frame = ipv6_with_dest_opts_then_fragment(8 | 1);
    let f = find(&frame).expect("a fragment");
    assert_eq!((f.offset, f.more, f.data.len()), (8, true, 16));
    assert!(matches!(f.key, Key::V6 { id: 0x01020304, .. }));
    assert_eq!(f.header.len(), 14 + 40 + 8);
    assert_eq!(
        f.patch,
        Patch::V6 {
            ip_offset: 14,
            nh_at: 14 + 40,
            next: 17
        }
    );
}

#[test]
fn not_fragments() {
    let mut frame = ipv6_with_dest_opts_then_fragment(0);
    // A payload length beyond the frame.
    frame[18] = 0xff;
    assert!(find(&frame).is_none());
    assert!(find(&[0u8; 10]).is_none());
    // An IPv4 fragment with a bad header checksum is left to the frame's classification.
    let mut v4 = vec![0u8; 12];
    v4.extend([
        0x08, 0x00, 0x45, 0, 0, 28, 0, 1, 0x20, 0, 64, 17, 0xde, 0xad,
    ]);
    v4.extend([10, 0, 0, 1, 10, 0, 0, 2]);
    v4.extend([0; 8]);
    assert!(find(&v4).is_none());
}
