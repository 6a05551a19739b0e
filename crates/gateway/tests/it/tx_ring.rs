//! The transmit ring on a real kernel, in network namespaces: frames of every size up to the
//! MTU, tagged or not, leave through the ring with a `virtio_net_hdr` (linear socket-buffer
//! heads) and arrive byte for byte; a frame larger than a slot is refused and counted.

use crate::common;

use common::*;
use gander_gateway::af_packet::ifindex;
use gander_gateway::ring::{Pushed, TxRing};
use gander_lab::{Mode, Role};
use std::time::Duration;

fn frame(len: usize, tag: bool, seed: u8) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect();
    f[..6].copy_from_slice(&[0x01, 0x0c, 0xcd, 0x01, 0x00, 0x99]);
    f[6..12].copy_from_slice(&[0x02, 0x47, 0x44, 0x00, 0x01, 0x01]);
    if tag {
        f[12..16].copy_from_slice(&[0x81, 0x00, 0x80, 0x05]);
        f[16..18].copy_from_slice(&[0x88, 0xb8]);
    } else {
        f[12..14].copy_from_slice(&[0x88, 0xb8]);
    }
    f
}

#[test]
fn frames_leave_the_ring_intact_with_linear_heads() {
    let Some(lab) = lab("txring", Mode::L2) else {
        return;
    };
    let (ied, gw) = (lab.ns(Role::Ied), lab.ns(Role::Gw));
    let mut sent = Vec::new();
    for (i, len) in [60usize, 61, 200, 1000, 1513, 1514].into_iter().enumerate() {
        sent.push(frame(len, false, i as u8));
    }
    sent.push(frame(1518, true, 99));
    let receiver = receive_frames(&gw, "gi0", sent.len(), Duration::from_secs(2), |f| {
        f.len() > 12 && f[6..12] == [0x02, 0x47, 0x44, 0x00, 0x01, 0x01]
    });
    let frames = sent.clone();
    let (linear, refused, errors) = std::thread::spawn(move || {
        gander_lab::enter(&ied).expect("enter");
        let mut ring = TxRing::open(ifindex("ied0").expect("ied0"), 1500, 64, true).expect("ring");
        for f in &frames {
            assert_eq!(ring.push(f), Pushed::Queued, "{} bytes", f.len());
        }
        ring.flush();
        // Larger than any slot: refused before the kernel sees it.
        let refused = ring.push(&vec![0u8; 70000]);
        std::thread::sleep(Duration::from_millis(100));
        (ring.linear_heads(), refused, ring.errors)
    })
    .join()
    .expect("sender");
    let got = receiver.join().expect("receiver");
    assert!(linear, "PACKET_VNET_HDR is accepted by this kernel");
    assert_eq!(refused, Pushed::Refused);
    assert_eq!(errors, 1, "the refused frame is counted, nothing else");
    assert_eq!(got, sent, "every frame arrives byte for byte, in order");
}
