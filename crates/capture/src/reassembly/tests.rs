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

mod fragmenter {
    //! `gander_wire::ip_fragment::fragment` and this reassembler are inverses: whatever
    //! datagram is split at whatever size reassembles to itself, fragment by fragment seen by
    //! `fragment_of` as the split made it.
    use super::super::{fragment_of, Limits, Outcome, Reassembler};
    use gander_wire::ip::checksum;
    use gander_wire::ip_fragment::fragment;
    use proptest::prelude::*;

    fn datagram(v6: bool, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![1, 0, 0x5e, 0, 1, 4, 2, 2, 2, 2, 2, 2];
        if v6 {
            f.extend([0x86, 0xdd, 0x60, 0, 0, 0]);
            f.extend((payload.len() as u16).to_be_bytes());
            f.extend([17, 64]);
            f.extend([0x20; 32]);
        } else {
            f.extend([0x08, 0x00]);
            let mut h = vec![
                0x45, 0, 0, 0, 0x43, 0x21, 0, 0, 16, 17, 0, 0, 10, 0, 0, 1, 224, 0, 1, 4,
            ];
            h[2..4].copy_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
            let c = checksum(&h);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            f.extend(h);
        }
        f.extend(payload);
        f
    }

    proptest! {
        #[test]
        fn split_then_reassembled_is_the_datagram(
            v6 in any::<bool>(),
            len in 1usize..6000,
            mtu in 576usize..1500,
        ) {
            let payload: Vec<u8> = (0..len).map(|i| (i * 13) as u8).collect();
            let d = datagram(v6, &payload);
            let parts = fragment(&d, mtu, 0x5eed).unwrap();
            let mut r = Reassembler::new(Limits::default());
            let (mut out, mut findings) = (Vec::new(), Vec::new());
            let mut last = None;
            let mut offset = 0;
            for (i, p) in parts.iter().enumerate() {
                prop_assert!(p.len() - 14 <= mtu);
                if parts.len() == 1 {
                    prop_assert!(fragment_of(p).is_none());
                    prop_assert_eq!(p, &d);
                    return Ok(());
                }
                let f = fragment_of(p).expect("a fragment");
                prop_assert_eq!(f.offset as usize, offset);
                prop_assert_eq!(f.more, i + 1 < parts.len());
                prop_assert_eq!(f.ip_len, p.len() - 14);
                offset += f.ip_len - if v6 { 48 } else { 20 };
                last = Some(r.push(i as u64 + 1, 0, p, &mut out, &mut findings));
            }
            prop_assert!(findings.is_empty(), "{:?}", findings);
            let complete = matches!(last, Some(Outcome::Complete { fragments, .. }) if fragments == parts.len());
            prop_assert!(complete, "{:?}", last);
            // IPv4: the reassembled header has DF as the datagram had it (clear) and the
            // checksum recomputed, so the octets are the datagram's.
            prop_assert_eq!(out, d);
        }
    }
}
