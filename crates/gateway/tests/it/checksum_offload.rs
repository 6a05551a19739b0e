//! R-GOOSE from an IED stack that sends with checksum offload, through the `l2` driver, in
//! network namespaces. On a veth pair (as on virtio) such a datagram reaches the gateway's
//! packet socket before any device has computed its UDP checksum (`TP_STATUS_CSUMNOTREADY`):
//! the gateway must complete it as the device would, protect the frame and send it with a
//! right checksum, with the ring and with one `recvmsg` per frame. Before that completion
//! every such frame was dropped as `bad-checksum`.

use crate::common;

use common::*;
use gander_gateway::config::Direction;
use gander_lab::{addr, Mode, Role};
use gander_sec::frame::{CaptureVerifier, Outcome};
use gander_sec::Profile;
use gander_testkit::frames as craft;
use std::net::{Ipv4Addr, UdpSocket};
use std::time::Duration;

fn config(ring: bool) -> String {
    format!(
        r#"
driver = "l2"
keys = "unused.toml"
[l2]
ied = "gi0"
net = "gn0"
ring = {ring}
[[rule]]
direction = "outbound"
action = "protect"
key_id = 2
"#
    )
}

fn ethtool(ns: &str, dev: &str, on: &str) {
    let ok = std::process::Command::new("ip")
        .args(["netns", "exec", ns, "ethtool", "-K", dev, "tx", on])
        .output()
        .expect("ethtool")
        .status
        .success();
    assert!(ok, "ethtool -K {dev} tx {on} in {ns}");
}

#[test]
fn offloaded_udp_checksums_are_completed_then_protected() {
    let Some(lab) = lab("csum", Mode::L2) else {
        return;
    };
    let (ied, gw_ns, sub) = (lab.ns(Role::Ied), lab.ns(Role::Gw), lab.ns(Role::Sub));
    // The IED's stack leaves UDP checksums to the device.
    ethtool(&ied, "ied0", "on");
    let store = keys(GW_KEYS);
    for ring in [true, false] {
        let gw = Gateway::start(&gw_ns, &config(ring), keys(GW_KEYS));
        let receiver = receive_frames(&sub, "sub0", 5, Duration::from_secs(2), |f| {
            f.len() > 42 && f[12..14] == [0x08, 0x00] && f[23] == 17 && f[36..38] == [0, 102]
        });
        let ied2 = ied.clone();
        std::thread::spawn(move || {
            gander_lab::enter(&ied2).expect("enter");
            let s = UdpSocket::bind((Ipv4Addr::from(addr::IED_IP), 102)).expect("bind");
            for i in 0..5u32 {
                let spdu = craft::rgoose_spdu(Profile::Standard, 0x40, i, 1, i);
                s.send_to(&spdu, (Ipv4Addr::from(addr::SUB_IP), 102))
                    .expect("send");
                std::thread::sleep(Duration::from_millis(20));
            }
        })
        .join()
        .expect("sender");
        let got = receiver.join().expect("receiver");
        let policy = gw.stop();
        let c = policy.counters();
        assert_eq!(
            c.dir(Direction::Outbound).dropped_total(),
            0,
            "ring {ring}: nothing dropped (before the fix: bad-checksum), {c:?}"
        );
        assert_eq!(
            c.dir(Direction::Outbound).protected,
            5,
            "ring {ring}: {c:?}"
        );
        assert_eq!(got.len(), 5, "ring {ring}: every datagram arrived");
        let mut v = CaptureVerifier::new(Profile::Standard, &store);
        for f in &got {
            let loc = gander_wire::ip::locate_udp(f).expect("udp");
            assert!(
                loc.udp_checksum_ok && loc.ip_checksum_ok,
                "ring {ring}: checksum"
            );
            let verdict = v.verify(f, 0);
            assert!(
                matches!(verdict.outcome, Outcome::Verified),
                "ring {ring}: {}",
                verdict.word()
            );
        }
    }
}
